#!/usr/bin/env bash
# A real single-node Slurm on this machine, for `sbrp sweep --slurm` and its
# test (testbench/tests/slurm.rs): installs Debian's slurmctld, slurmd,
# slurm-client and munge when missing, writes /etc/slurm/slurm.conf and
# starts munged, slurmctld and slurmd as plain processes (no systemd).
# Root only. Usage: scripts/slurm-local.sh install|start|stop|status
#   install: the packages only (what `scripts/setup.sh --slurm` runs).
#   start: installs, then starts what is not running (a cluster that
#   answers is left as it is); prints "started" or "already up".
#   stop: ends the daemons of the pid files that start's daemons write.
set -euo pipefail

conf=/etc/slurm/slurm.conf
marker="# Written by sbrp's scripts/slurm-local.sh"
logs=/var/log/slurm

die() { echo "slurm-local: $*" >&2; exit 2; }

up() { scontrol ping 2>/dev/null | grep -q "is UP"; }

# The node answers and takes jobs (not down or drained).
node_ready() {
  local s
  s=$(sinfo -h -N -n localhost -o %t 2>/dev/null || true)
  [ "$s" = idle ] || [ "$s" = mix ] || [ "$s" = alloc ]
}

install_missing() {
  local need=()
  command -v slurmctld >/dev/null 2>&1 || need+=(slurmctld)
  command -v slurmd >/dev/null 2>&1 || need+=(slurmd)
  command -v sbatch >/dev/null 2>&1 || need+=(slurm-client)
  command -v munged >/dev/null 2>&1 || need+=(munge)
  [ ${#need[@]} -eq 0 ] && return
  command -v apt-get >/dev/null 2>&1 || die "missing ${need[*]} and no apt-get here: install them by hand"
  echo "slurm-local: installing ${need[*]} with apt-get"
  apt-get update -qq
  # The packages' start scripts fail without an init system: harmless here.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}

write_conf() {
  # Never overwrite a configuration someone else wrote.
  if [ -f "$conf" ] && ! grep -qF "$marker" "$conf"; then
    die "$conf exists and was not written by this script: not touching it"
  fi
  mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd "$logs"
  # The controller must be named as the host calls itself (its address
  # given, so no name lookup is needed); the node is `localhost`
  # (slurmd -N localhost), whatever the hostname.
  cat > "$conf" <<EOF
$marker: a single-node cluster
# for tests (start/stop with that script). Edit the script, not this file.
ClusterName=sbrp-local
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=$logs/slurmctld.log
SlurmdLogFile=$logs/slurmd.log
# No systemd or cgroups needed.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
# Each finished task's exit code, in one line of this file.
JobCompType=jobcomp/filetxt
JobCompLoc=$logs/jobcomp.log
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
# Schedule array tasks as soon as a CPU frees (20 tasks of 1 s: 20 s, not 26 s).
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
ReturnToService=2
MpiDefault=none
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
EOF
}

start_munge() {
  if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then return; fi
  mkdir -p /run/munge /var/log/munge /var/lib/munge
  chown munge:munge /run/munge /var/log/munge /var/lib/munge
  chmod 0755 /run/munge
  if [ ! -s /etc/munge/munge.key ]; then
    mungekey --create --keyfile=/etc/munge/munge.key
    chown munge:munge /etc/munge/munge.key
    chmod 0400 /etc/munge/munge.key
  fi
  runuser -u munge -- /usr/sbin/munged
  for _ in $(seq 50); do
    munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && return
    sleep 0.1
  done
  die "munged did not start (see /var/log/munge/munged.log)"
}

# The process of a pid file is alive (no pgrep: procps may be absent).
running() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

start() {
  [ "$(id -u)" -eq 0 ] || die "start: must run as root (it installs packages and starts daemons)"
  install_missing
  if up && node_ready; then
    echo "slurm-local: already up"
    return
  fi
  write_conf
  start_munge
  running /run/slurmctld.pid || /usr/sbin/slurmctld
  running /run/slurmd.pid || /usr/sbin/slurmd -N localhost
  for _ in $(seq 100); do
    if up && node_ready; then
      echo "slurm-local: started ($(nproc) CPUs, partition debug)"
      return
    fi
    sleep 0.1
  done
  die "the cluster did not come up in 10 s (see $logs/slurmctld.log and $logs/slurmd.log)"
}

stop_pid() {
  local f=$1 pid
  [ -s "$f" ] || return 0
  pid=$(cat "$f")
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
  fi
  rm -f "$f"
}

stop() {
  [ "$(id -u)" -eq 0 ] || die "stop: must run as root"
  stop_pid /run/slurmd.pid
  stop_pid /run/slurmctld.pid
  stop_pid /run/munge/munged.pid
  echo "slurm-local: stopped"
}

case "${1:-}" in
  install)
    [ "$(id -u)" -eq 0 ] || die "install: must run as root"
    install_missing ;;
  start) start ;;
  stop) stop ;;
  status) if up && node_ready; then echo "slurm-local: up"; else echo "slurm-local: down"; exit 1; fi ;;
  *) echo "usage: scripts/slurm-local.sh install|start|stop|status" >&2; exit 2 ;;
esac
