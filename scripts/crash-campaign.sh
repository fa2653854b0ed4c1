#!/usr/bin/env bash
# The documented crash campaign (docs/checker.md, "Crash campaigns"): every
# app at the artifact's size under each correct persistency model, at every
# durable point (`sbrp crash --every`, incremental invariants), the checker
# on the record and the recovery kernels on the GPU model at 3 points; prints
# a markdown table (points, distinct images, broken, violations, recovery
# cycles, wall seconds per phase: the checker runs beside the points and
# the recovery runs, so the total is about run + the longer of the two).
# A run whose JSON report is in OUT_DIR is not run again (FRESH=1: all are).
# Usage: scripts/crash-campaign.sh [--slurm [--partition P]] [OUT_DIR] [PRESET ...]
#   (default target/crash-campaign; sbrp-near epoch-near sbrp-far epoch-far gpm-far)
#   --slurm: the runs as one Slurm array job (a task of 2 CPUs per run),
#   squeue polled until it is gone; a failed task is listed with its exit
#   code and log, and the script then exits 1 (after the table).
#   APPS="scan mq" limits the apps; SBRP=PATH runs that binary unbuilt.
set -euo pipefail
cd "$(dirname "$0")/.."
slurm=""
partition=()
while [ $# -gt 0 ]; do
  case "$1" in
    --slurm) slurm=1; shift ;;
    --partition)
      [ $# -ge 2 ] || { echo "crash-campaign: --partition needs a name" >&2; exit 2; }
      partition=("--partition=$2"); shift 2 ;;
    *) break ;;
  esac
done
if [ ${#partition[@]} -gt 0 ] && [ -z "$slurm" ]; then
  echo "crash-campaign: --partition only with --slurm" >&2; exit 2
fi
if [ -n "$slurm" ]; then
  for t in sbatch squeue; do
    command -v "$t" >/dev/null 2>&1 || {
      echo "crash-campaign: --slurm: \`$t\` not found on PATH (scripts/slurm-local.sh start makes a local cluster)" >&2
      exit 2
    }
  done
fi
out=${1:-target/crash-campaign}
shift || true
presets=("$@")
[ ${#presets[@]} -gt 0 ] || presets=(sbrp-near epoch-near sbrp-far epoch-far gpm-far)
read -r -a apps <<< "${APPS:-gpkvs hm srad reduction mq scan}"
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -n "${SBRP:-}" ]; then
  sbrp=$SBRP
else
  cargo build --release -q -p sbrp-testbench
  sbrp=$PWD/target/release/sbrp
fi
runs=()
for p in "${presets[@]}"; do
  for a in "${apps[@]}"; do
    if [ -z "${FRESH:-}" ] && [ -s "$out/$p-$a.json" ]; then continue; fi
    runs+=("$p $a")
  done
done
failed=0
if [ -z "$slurm" ]; then
  for r in "${runs[@]}"; do
    read -r p a <<< "$r"
    "$sbrp" crash --app "$a" --preset "$p" --every --jobs 2 \
      --json "$out/$p-$a.json" > "$out/$p-$a.txt" 2>&1 || true
  done
elif [ ${#runs[@]} -gt 0 ]; then
  # Task K runs line K+1 of runs.txt and leaves its exit code in P-A.rc.
  mkdir -p "$out/slurm"
  printf '%s\n' "${runs[@]}" > "$out/slurm/runs.txt"
  for r in "${runs[@]}"; do read -r p a <<< "$r"; rm -f "$out/slurm/$p-$a.rc"; done
  cat > "$out/slurm/job.sh" <<JOB
#!/bin/sh
# Written by scripts/crash-campaign.sh --slurm: array task K runs line K+1.
set -- \$(sed -n "\$((SLURM_ARRAY_TASK_ID + 1))p" '$out/slurm/runs.txt')
'$sbrp' crash --app "\$2" --preset "\$1" --every --jobs "\${SLURM_CPUS_PER_TASK:-1}" \\
  --json "$out/\$1-\$2.json" > "$out/\$1-\$2.txt" 2>&1
rc=\$?
echo "\$rc" > "$out/slurm/\$1-\$2.rc"
exit "\$rc"
JOB
  job=$(sbatch --parsable --job-name=sbrp-crash --cpus-per-task=2 "${partition[@]}" \
    --array="0-$(( ${#runs[@]} - 1 ))" --output="$out/slurm/task-%a.log" --chdir="$out" \
    "$out/slurm/job.sh") || { echo "crash-campaign: sbatch refused the job" >&2; exit 2; }
  job=${job%%;*}
  echo "crash-campaign: Slurm job $job, ${#runs[@]} array tasks; cancel with \`scancel $job\`" >&2
  # squeue, not sbatch --wait (slow) nor sacct (needs a database).
  while :; do
    if ! q=$(squeue -h -r -j "$job" -o %T 2>&1); then
      case "$q" in *"Invalid job id"*) break ;; esac
      echo "crash-campaign: squeue failed: $q" >&2; exit 2
    fi
    [ -n "$q" ] || break
    sleep 2
  done
  for i in "${!runs[@]}"; do
    read -r p a <<< "${runs[$i]}"
    rc=$(cat "$out/slurm/$p-$a.rc" 2>/dev/null || echo "none recorded")
    if [ "$rc" != 0 ]; then
      failed=1
      echo "crash-campaign: FAILED task ${job}_$i ($p $a): exit code $rc; log $out/$p-$a.txt (Slurm's $out/slurm/task-$i.log)" >&2
    fi
  done
fi
APPS="${apps[*]}" python3 - "$out" "${presets[@]}" <<'PY'
import json, os, sys
out, presets = sys.argv[1], sys.argv[2:]
print("| preset | app | durable points | distinct images | broken | checker violations "
      "| recovery cycles median / worst (3 pts) | s: run; points; checker; recovery; total |")
print("|---" * 8 + "|")
for p in presets:
    for a in os.environ["APPS"].split():
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
exit $failed
