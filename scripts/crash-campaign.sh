#!/usr/bin/env bash
# The documented crash campaign (docs/checker.md, "Crash campaigns"): every
# app at the artifact's size under each correct persistency model, at every
# durable point (`sbrp crash --every`, incremental invariants), the checker
# on the record and the recovery kernels on the GPU model at 3 points; prints
# a markdown table (points, distinct images, broken, violations, recovery
# cycles, wall seconds per phase: the checker runs beside the points and
# the recovery runs, so the total is about run + the longer of the two).
# A run whose JSON report is in OUT_DIR is not run again (FRESH=1: all are).
# Usage: scripts/crash-campaign.sh [OUT_DIR] [PRESET ...]
#   (default target/crash-campaign; sbrp-near epoch-near sbrp-far epoch-far gpm-far)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/crash-campaign}
shift || true
presets=("$@")
[ ${#presets[@]} -gt 0 ] || presets=(sbrp-near epoch-near sbrp-far epoch-far gpm-far)
mkdir -p "$out"
cargo build --release -q -p sbrp-testbench
for p in "${presets[@]}"; do
  for a in gpkvs hm srad reduction mq scan; do
    if [ -z "${FRESH:-}" ] && [ -s "$out/$p-$a.json" ]; then continue; fi
    target/release/sbrp crash --app "$a" --preset "$p" --every --jobs 2 \
      --json "$out/$p-$a.json" > "$out/$p-$a.txt" 2>&1 || true
  done
done
python3 - "$out" "${presets[@]}" <<'PY'
import json, os, sys
out, presets = sys.argv[1], sys.argv[2:]
print("| preset | app | durable points | distinct images | broken | checker violations "
      "| recovery cycles median / worst (3 pts) | s: run; points; checker; recovery; total |")
print("|---" * 8 + "|")
for p in presets:
    for a in ["gpkvs", "hm", "srad", "reduction", "mq", "scan"]:
        f = os.path.join(out, f"{p}-{a}.json")
        if not os.path.exists(f):
            print(f"| {p} | {a} | error: see {p}-{a}.txt | | | | | |")
            continue
        r = json.load(open(f))
        q = r["points"]
        print(f"| {p} | {a} {r['size']:,} | {q['durable_points']:,} | {q['distinct']:,} "
              f"| {q['failed']} | {r['checker']['violations_total']} "
              f"| {r['recovery_median']:,} / {r['recovery_worst']:,} "
              f"| {r['run_secs']:.1f}; {r['points_secs']:.1f}; {r['checker_secs']:.1f}; "
              f"{r['recovery_secs']:.1f}; {r['secs']:.1f} |")
PY
