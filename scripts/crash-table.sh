#!/usr/bin/env bash
# The README's crash-consistency table (docs/checker.md, "Crash campaigns"):
# every fault on every app at every durable point (`sbrp crash --every`,
# incremental invariants) at reduced sizes, near and on the reordering far
# path, plus the correct models; prints a markdown table.
# Usage: scripts/crash-table.sh [OUT_DIR]   (default target/crash-table)
# A run whose JSON report is in OUT_DIR is not run again (FRESH=1: all are).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/crash-table}
mkdir -p "$out"
cargo build --release -q -p sbrp-testbench
sbrp=target/release/sbrp
apps=(gpkvs:4096 hm:2500 srad:128 reduction:262144 mq:200 scan:15360)
reorder="--set pm.reorder=true"
# name | preset and options
rows=(
  "epoch-near (correct)|--preset epoch-near"
  "sbrp-near (correct)|--preset sbrp-near"
  "sbrp-far + reorder (correct)|--preset sbrp-far $reorder"
  "epoch-near skip-epoch-flush|--preset epoch-near --gpu-fault skip-epoch-flush"
  "epoch-far + reorder, skip-epoch-flush|--preset epoch-far $reorder --gpu-fault skip-epoch-flush"
)
for f in ignore-fsm ignore-coalesce-ordering dfence-no-wait evict-ignore-ordering; do
  rows+=("sbrp-near $f|--preset sbrp-near --unit-fault $f")
  rows+=("sbrp-far + reorder, $f|--preset sbrp-far $reorder --unit-fault $f")
done
rows+=("sbrp-near drop-scope|--preset sbrp-near --gpu-fault drop-scope")
rows+=("sbrp-far + reorder, drop-scope|--preset sbrp-far $reorder --gpu-fault drop-scope")
rows+=("sbrp-far (in-order path), ignore-fsm|--preset sbrp-far --unit-fault ignore-fsm")
# An L1 of 32 lines and a persist buffer of 32 entries: evictions behind
# ordering entries.
small="--set pb.entries=32 --set l1.size=4096 --set l1.assoc=4"
rows+=("sbrp-near, small L1 (correct)|--preset sbrp-near $small")
rows+=("sbrp-near, small L1, evict-ignore-ordering|--preset sbrp-near $small --unit-fault evict-ignore-ordering")
rows+=("sbrp-far + reorder, small L1, evict-ignore-ordering|--preset sbrp-far $reorder $small --unit-fault evict-ignore-ordering")
i=0
: > "$out/rows.txt"
for r in "${rows[@]}"; do
  opts=${r#*|}
  echo "$i|${r%%|*}" >> "$out/rows.txt"
  for a in "${apps[@]}"; do
    if [ -z "${FRESH:-}" ] && [ -s "$out/$i-${a%%:*}.json" ]; then continue; fi
    # shellcheck disable=SC2086
    "$sbrp" crash --app "${a%%:*}" --size "${a##*:}" $opts --every --recover-sim 0 \
      --json "$out/$i-${a%%:*}.json" > "$out/$i-${a%%:*}.txt" 2>&1 || true
  done
  i=$((i + 1))
done
python3 - "$out" "${apps[@]}" <<'PY'
import json, os, re, sys
out, apps = sys.argv[1], [a.split(":")[0] for a in sys.argv[2:]]
names = dict(l.rstrip("\n").split("|", 1) for l in open(os.path.join(out, "rows.txt")))
rows = {}
for f in sorted(os.listdir(out)):
    m = re.match(r"(\d+)-(\w+)\.json$", f)
    if m:
        rows.setdefault(int(m[1]), {})[m[2]] = json.load(open(os.path.join(out, f)))
def cell(r):
    p, c = r["points"], r["checker"]
    parts = []
    if p["failed"]:
        parts.append(f"inv {p['failed']:,}/{p['tried']:,}")
    if c["violations_total"]:
        parts.append(f"chk {c['violations_total']:,}")
    return " + ".join(parts) or f"ok ({p['tried']:,} pts)"
print("| preset, fault | " + " | ".join(apps) + " |")
print("|---" * (len(apps) + 1) + "|")
for k in sorted(rows):
    r = rows[k]
    name = names[str(k)]
    print(f"| {name} | " + " | ".join(cell(r[a]) if a in r else "error" for a in apps) + " |")
PY
