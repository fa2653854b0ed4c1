#!/usr/bin/env bash
# Installs what the project needs when it is missing: Verilator, Yosys,
# OpenSTA, CaDiCaL, the OSU 0.18 um standard-cell library and qflow's place and route
# (Debian/Ubuntu packages),
# then checks for cargo. Sourced by run.sh and test.sh; safe to run again.
# `bash scripts/setup.sh --openram` also makes .venv-openram (OpenRAM, for
# `sbrp area --sram` only; never needed by the default flow or CI).
# `bash scripts/setup.sh --slurm` also installs Slurm and munge (root; for
# `sbrp sweep --slurm` on this machine: scripts/slurm-local.sh starts it).
set -euo pipefail

need=()
command -v verilator >/dev/null 2>&1 || need+=(verilator)
command -v yosys >/dev/null 2>&1 || need+=(yosys)
command -v sta >/dev/null 2>&1 || need+=(opensta)
# SMT solvers for yosys-smtbmc (the proofs of `sbrp prove` run yosys-abc, shipped with yosys).
command -v boolector >/dev/null 2>&1 || need+=(boolector)
command -v z3 >/dev/null 2>&1 || need+=(z3)
# CaDiCaL decides the inductive step of `sbrp prove --unbounded` (the base
# case and the other proofs run yosys-abc, shipped with yosys).
command -v cadical >/dev/null 2>&1 || need+=(cadical)
[ -f /usr/share/qflow/tech/osu018/osu018_stdcells.lib ] || need+=(qflow-tech-osu018)
# A font for the PNG plots (`sbrp suite --out`, `sbrp sweep --figure 10`,
# `sbrp area --sweep --out`).
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
# GTKWave's vcd2fst and fst2vcd: FST waveforms (`sbrp cosim --vcd DIR --fst`).
command -v vcd2fst >/dev/null 2>&1 || need+=(gtkwave)
# Headless Chromium opens `sbrp reproduce`'s index.html in its test.
command -v chromium >/dev/null 2>&1 || need+=(chromium)
# Place and route of `sbrp area --route`: qflow's scripts drive graywolf and
# qrouter (the qflow package depends on both, and on tcsh).
command -v qflow >/dev/null 2>&1 || need+=(qflow)
command -v qrouter >/dev/null 2>&1 || need+=(qrouter)
# Verilator's generated C++ needs a C++ compiler and make.
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v make >/dev/null 2>&1 || need+=(make)
# Verilated builds share the runtime's objects through ccache (much faster).
command -v ccache >/dev/null 2>&1 || need+=(ccache)

if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: missing ${need[*]} and no apt-get here: install them by hand" >&2
    exit 1
  fi
  echo "setup: installing ${need[*]} with apt-get"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# `sbrp area --sram` only: OpenRAM (PyPI, with numpy<2: numpy 2 breaks its
# router) in a virtual environment of the project, .venv-openram.
if [ "${1:-}" = "--openram" ]; then
  root="$(cd "$(dirname "$0")/.." && pwd)"
  if ! "$root/.venv-openram/bin/python" -c "import openram" >/dev/null 2>&1; then
    echo "setup: installing OpenRAM into $root/.venv-openram"
    python3 -m venv "$root/.venv-openram"
    "$root/.venv-openram/bin/pip" install -q openram 'numpy<2'
  fi
fi

if [ "${1:-}" = "--slurm" ]; then
  bash "$(dirname "$0")/slurm-local.sh" install
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found: install Rust (rustup) first" >&2
  exit 1
fi
echo "setup: $(verilator --version | head -1); $(yosys -V); $(cargo --version)"
