#!/usr/bin/env bash
# Set-up (as run.sh), then the whole test suite: formatting, lints, every test.
set -euo pipefail
cd "$(dirname "$0")/.."
# As root also Slurm and munge, for the sweep's test on a local cluster
# (testbench/tests/slurm.rs, which skips when not root).
if [ "$(id -u)" -eq 0 ]; then bash scripts/setup.sh --slurm; else bash scripts/setup.sh; fi
export CARGO_TERM_COLOR=never
# Disk: a CI run once ended on a full disk (stop 33). CI builds once, so no
# incremental state, and keeps only line tables (file:line in panics and
# backtraces): a cold run's target/ is 3.0 GB and the tests' temporary files
# 31 MB (2026-11-29, fresh clone, TMPDIR apart).
export CARGO_INCREMENTAL=0
export CARGO_PROFILE_DEV_DEBUG=line-tables-only
echo "disk before the build: $(df -h --output=avail . | tail -1 | tr -d ' ') free"
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace
echo "disk after the tests: $(df -h --output=avail . | tail -1 | tr -d ' ') free; target/ $(du -sh target | cut -f1)"
