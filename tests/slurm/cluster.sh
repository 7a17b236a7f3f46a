#!/usr/bin/env bash
# A real single-node SLURM on this machine, for the tests (tests/slurm) and CI: Debian's slurm-wlm and munge, a
# munge key, a slurm.conf for this host (one node with its CPUs and memory, one `debug` partition, memory limits
# enforced, no accounting database).
#
#   tests/slurm/cluster.sh [start]   install if missing, configure, start munged, slurmctld and slurmd; a cluster
#                                    already answering is left as it is
#   tests/slurm/cluster.sh stop      stops the daemons this script started (their pids are in $STATE), nothing else
#   tests/slurm/cluster.sh status    says whether the cluster answers (exit 0) or not (exit 1)
#
# Needs root (or sudo) to install and start. Prints one line per thing done.
set -euo pipefail

STATE=${TINYGPT_SLURM_STATE:-/run/tinygpt-slurm}   # pid files of what this script started
CONF=/etc/slurm/slurm.conf
MARK="# written by tinygpt-ablations tests/slurm/cluster.sh"
SUDO=$([ "$(id -u)" = 0 ] || echo sudo)

answers() { command -v sinfo >/dev/null 2>&1 && timeout 10 sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; }

install() {
  if command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 && command -v munged >/dev/null 2>&1; then
    return
  fi
  echo "installing Debian's slurm-wlm and munge"
  $SUDO apt-get update -qq
  # Debian's scripts would start the services through systemd, absent in containers: this script starts them.
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
}

configure() {
  $SUDO mkdir -p /etc/slurm /etc/munge /run/munge /var/lib/slurm/slurmctld /var/lib/slurm/slurmd /var/log/slurm "$STATE"
  if [ ! -s /etc/munge/munge.key ]; then
    echo "writing a munge key"
    $SUDO dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  fi
  $SUDO chown -R munge:munge /etc/munge /run/munge
  $SUDO chmod 0400 /etc/munge/munge.key
  if [ -f "$CONF" ] && ! grep -qF "$MARK" "$CONF"; then
    echo "keeping the existing $CONF (not written by this script)"
    return
  fi
  local host node
  host=$(hostname -s)
  # The node as slurmd sees it (CPUs, sockets, cores, memory): a node that claims more than it has is drained.
  node=$(slurmd -C | head -1)
  # Memory is a resource jobs ask for (CR_Core_Memory) and is enforced (below); a job that names none gets its CPUs'
  # share of the node, so that jobs still run side by side.
  local per_cpu
  per_cpu=$(( $(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$node") / $(sed -n 's/.* CPUs=\([0-9]*\).*/\1/p' <<<"$node") ))
  $SUDO tee "$CONF" >/dev/null <<CONF
$MARK
ClusterName=tinygpt
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=$per_cpu
ReturnToService=2
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
# No accounting database: job states come from squeue (sacct has nothing to read).
AccountingStorageType=accounting_storage/none
# A job's memory is sampled every second and a step past its --mem is killed, as a cluster's memory limit would
# (no cgroups in a container: the sampling is what enforces it). squeue then says FAILED, not OUT_OF_MEMORY (only
# cgroups set that); the job's log has slurmstepd's "exceeded memory limit" line, which the suite reads.
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherParams=OverMemoryKill
JobAcctGatherFrequency=task=1
JobCompType=jobcomp/none
# A job past its time limit gets SIGTERM, then SIGKILL KillWait seconds later; time limits are checked every 30 s.
KillWait=30
OverTimeLimit=0
MinJobAge=300
SchedulerType=sched/backfill
$node State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  echo "wrote $CONF for $host: ${node#NodeName=* }"
}

start_daemon() {  # name, pid file, command...: started unless one runs already; its pid kept in $STATE
  local name=$1 pidfile=$2 pid=""
  shift 2
  if pgrep -x "$name" >/dev/null; then
    return
  fi
  $SUDO rm -f "$pidfile"
  "$@"
  for _ in $(seq 100); do  # the daemon's own pid, once it has forked: the one in its pid file
    pid=$(cat "$pidfile" 2>/dev/null || true)
    [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] && break
    pid=""
    sleep 0.1
  done
  [ -n "$pid" ] || { echo "error: $name did not start (see /var/log/slurm/ or /var/log/munge/)" >&2; exit 1; }
  echo "$pid" | $SUDO tee "$STATE/$name.started" >/dev/null
  echo "started $name (pid $pid)"
}

start() {
  if answers; then
    echo "SLURM already running: $(sinfo -h -o '%P %D node(s) %t' | head -1)"
    return
  fi
  install
  configure
  start_daemon munged /run/munge/munged.pid $SUDO runuser -u munge -- /usr/sbin/munged
  start_daemon slurmctld "$STATE/slurmctld.pid" $SUDO /usr/sbin/slurmctld
  start_daemon slurmd "$STATE/slurmd.pid" $SUDO /usr/sbin/slurmd
  for _ in $(seq 60); do answers && break; sleep 0.5; done
  # A node that was drained (a restart, a change of config) back to service.
  $SUDO scontrol update NodeName="$(hostname -s)" State=RESUME >/dev/null 2>&1 || true
  answers || { echo "error: SLURM does not answer: $(sinfo 2>&1 | tail -1)" >&2; exit 1; }
  echo "SLURM $(sinfo -V | cut -d' ' -f2) running: $(sinfo -h -o '%P %D node(s) %c CPUs %m MB %t' | head -1)"
}

stop() {
  local pid name
  for name in slurmd slurmctld munged; do
    [ -f "$STATE/$name.started" ] || continue
    pid=$(cat "$STATE/$name.started")
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ]; then
      $SUDO kill "$pid"
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      echo "stopped $name (pid $pid)"
    fi
    $SUDO rm -f "$STATE/$name.started"
  done
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  status) if answers; then sinfo; else echo "SLURM does not answer here"; exit 1; fi ;;
  *) echo "usage: $0 [start|stop|status]" >&2; exit 2 ;;
esac
