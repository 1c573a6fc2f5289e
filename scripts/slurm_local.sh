#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for the tests of `svqa submit` (docs/experiments.md,
# "Running on a real cluster"): munged, slurmctld and slurmd from Debian's packages, as root, all
# files in one folder (default /tmp/svqa-slurm-$UID; $SVQA_SLURM_DIR), the node sized from this
# machine's CPUs and memory at start time.
#
#   scripts/slurm_local.sh start   # prints `export SLURM_CONF=...` on its last line; seconds
#   scripts/slurm_local.sh stop    # stops the daemons it started (by their pid files)
#
# `start` exits 3 with one line saying why when the cluster cannot start (packages missing, not
# root, a daemon that does not come up): the tests then skip, saying so.
set -euo pipefail
dir=${SVQA_SLURM_DIR:-/tmp/svqa-slurm-$(id -u)}
port=${SVQA_SLURM_PORT:-16817}  # slurmctld's; slurmd takes the next (off the defaults: a real cluster's)
conf=$dir/slurm.conf

cannot() { echo "slurm_local: cannot start: $*" >&2; exit 3; }

stop_pidfile() {  # kills the daemon named by a pid file this script wrote, then waits for it to go
  local file=$1 pid
  [ -f "$file" ] || return 0
  pid=$(cat "$file")
  if [ -n "$pid" ] && kill "$pid" 2>/dev/null; then
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}

stop() {
  # The jobs first: stopping the daemons would leave their processes running (a stopped test task too).
  if [ -f "$dir/slurmctld.pid" ] && [ -f "$conf" ]; then
    SLURM_CONF=$conf scancel --signal=KILL --full --user="$(id -un)" 2>/dev/null || true
    for _ in $(seq 50); do  # at most 5 s for slurmd to see them end
      [ -z "$(SLURM_CONF=$conf squeue -h -t running,completing -o %i 2>/dev/null)" ] && break
      sleep 0.1
    done
  fi
  stop_pidfile "$dir/slurmd.pid"
  stop_pidfile "$dir/slurmctld.pid"
  stop_pidfile "$dir/munged.pid"
}

write_conf() {
  local host cpus mem
  host=$(hostname -s)
  cpus=$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc)  # its CPUs, not an OpenMP limit
  mem=$(free -m | awk '/^Mem:/ {print int($2 * 0.9)}')  # MiB the node offers its jobs
  cat > "$conf" <<EOF
# Written by scripts/slurm_local.sh at start time: one node, this machine's $cpus CPUs and ${mem} MiB.
ClusterName=svqa-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.txt
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
KillWait=5
MinJobAge=600
# A job that names no --mem gets its CPUs' share, not the whole node (tasks run side by side).
DefMemPerCPU=$((mem / cpus))
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
}

start() {
  for daemon in munged slurmctld slurmd sinfo; do
    command -v "$daemon" >/dev/null || cannot "$daemon not found (apt-get install slurmctld slurmd slurm-client munge)"
  done
  [ "$(id -u)" = 0 ] || cannot "the local cluster runs its daemons as root; this is uid $(id -u)"
  stop  # what a previous start left running
  rm -rf "$dir/state" "$dir/spool"
  mkdir -p "$dir/state" "$dir/spool"
  chmod 700 "$dir"
  [ -s "$dir/munge.key" ] || { dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none; }
  chmod 600 "$dir/munge.key"
  munged --force --key-file="$dir/munge.key" --socket="$dir/munge.socket" --pid-file="$dir/munged.pid" \
    --log-file="$dir/munged.log" --seed-file="$dir/munged.seed" || cannot "munged did not start (see $dir/munged.log)"
  write_conf
  export SLURM_CONF=$conf
  slurmctld -f "$conf" || cannot "slurmctld did not start (see $dir/slurmctld.log)"
  slurmd -f "$conf" || cannot "slurmd did not start (see $dir/slurmd.log)"
  # Up once the node takes jobs (idle): polled, at most 30 s.
  for _ in $(seq 300); do
    state=$(sinfo -h -N -o %T 2>/dev/null || true)
    [ "$state" = idle ] && { echo "export SLURM_CONF=$conf"; return 0; }
    sleep 0.1
  done
  stop
  cannot "the node did not become idle in 30 s (state '${state:-none}'; see $dir/slurmctld.log, $dir/slurmd.log)"
}

case ${1:-} in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
