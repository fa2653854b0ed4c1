#!/usr/bin/env bash
# The quick tier, for the inner loop: formatting, unit tests, the model and
# front end, the rust-hdl directed tests, the CLI, the litmus suite in
# lockstep and the cosim tests (a few Verilator builds, cached). Leaves out
# what the full tier (scripts/test.sh, CI) adds: Yosys/OpenSTA flows and
# proofs (sbrp-silicon), Yosys synthesis and the lint sweep of the emitted
# Verilog, the random lockstep corners, the Yosys-netlist lockstep run, the
# equivalence miter's controls (Yosys and ABC, about 45 s) and
# the sweep on a local Slurm cluster (which installs and starts daemons).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export CARGO_TERM_COLOR=never
cargo fmt --all -- --check
cargo test --workspace --exclude sbrp-silicon -- \
  --skip verilog_lints_and_synthesizes_clean \
  --skip verilog_lints_clean_across_parameter_sets \
  --skip random_corners_ \
  --skip yosys_netlist_matches_the_model \
  --skip a_sweep_on_slurm_ \
  --skip equivalence_knows_a_killed_mutant
