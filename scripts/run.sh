#!/usr/bin/env bash
# Set-up, build, and the main job: `sbrp reproduce`, the whole report (the
# default RTL emitted, linted and synthesised, lockstep, proofs, the study
# with Figure 10, crash campaigns, area and timing) into out/reproduce, with
# out/reproduce/index.html linking every table, plot, waveform and the
# Verilog. Extra arguments go to `sbrp reproduce` (e.g. --quick).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export CARGO_TERM_COLOR=never
cargo build --release -p sbrp-testbench
exec target/release/sbrp reproduce --out out/reproduce "$@"
