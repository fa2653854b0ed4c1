#!/usr/bin/env bash
# Set-up, build, and the main job: emit the default persist buffer RTL into
# out/, lint and synthesize it, and print a short summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export CARGO_TERM_COLOR=never
cargo build --release -p sbrp-testbench
sbrp=target/release/sbrp
mkdir -p out

echo "== sbrp verilog (default parameters)"
$sbrp verilog --out out

echo "== verilator --lint-only -Wall"
verilator --lint-only -Wall constraints/lint/verilator_waivers.vlt out/sbrp_pb.v --top-module sbrp_pb
echo "lint: clean"

echo "== yosys synth (generic gates)"
yosys -q -p "read_verilog out/sbrp_pb.v; synth -top sbrp_pb; check -assert; tee -q -o out/yosys_stat.txt stat"
echo "yosys: no latches, no undriven or multiply driven nets"
grep -E "Number of cells|Number of wires:" out/yosys_stat.txt | tail -2 | sed 's/^ */yosys: /'

echo "== lockstep co-simulation: RTL (Verilator) vs reference model"
$sbrp cosim --suite litmus | tail -1
$sbrp cosim --suite random --seed 1 --cycles 200000 | tail -1
$sbrp cosim --suite fuzz --seed 1 --cycles 1000000 | tail -1

echo "== area and timing (Yosys + OSU 0.18 um, OpenSTA at 1365 MHz)"
$sbrp area --out out/area | grep -E "^cells:|not storage|worst slack|highest clock"
