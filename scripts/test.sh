#!/usr/bin/env bash
# Set-up (as run.sh), then the whole test suite: formatting, lints, every test.
set -euo pipefail
cd "$(dirname "$0")/.."
# As root also Slurm and munge, for the sweep's test on a local cluster
# (testbench/tests/slurm.rs, which skips when not root).
if [ "$(id -u)" -eq 0 ]; then bash scripts/setup.sh --slurm; else bash scripts/setup.sh; fi
export CARGO_TERM_COLOR=never
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace
