#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for trying and testing the sharded sweep the way a
# cluster runs it (docs/sweeps.md, "On a Slurm cluster"). As root; needs slurm-wlm and munge
# (tools/setup.sh --slurm installs them).
#
#   tools/slurm/local-cluster.sh start [DIR]    bring it up; prints DIR
#   tools/slurm/local-cluster.sh exec DIR -- COMMAND...
#                                               run COMMAND on the cluster (sbatch, squeue, ...)
#   tools/slurm/local-cluster.sh stop DIR       stop every daemon it started and remove DIR
#   tools/slurm/local-cluster.sh run [DIR] -- COMMAND...
#                                               start, run COMMAND on it, stop (on every exit:
#                                               success, failure, a signal)
#
# Everything lives in DIR (default: a new directory under ${TMPDIR:-/tmp}): its own slurm.conf,
# a munge key and socket, spool and state folders, logs and pid files. The daemons run in a
# network namespace of their own (`ip netns`, named after DIR) whose only interface is loopback:
# slurmctld and slurmd bind every address they have, so this is what keeps them on 127.0.0.1,
# and why COMMAND runs through `exec` (SLURM_CONF set, inside the namespace). The host's own
# /etc/slurm and /etc/munge are never read or touched: client commands find the cluster through
# SLURM_CONF, and Slurm's munge plugins through AuthInfo's socket.
#
# start waits until sinfo shows the node idle (LETITCRASH_SLURM_TIMEOUT seconds, default 60);
# when it does not come up it prints slurmctld's and slurmd's log tails, stops what it started
# and exits 1.
set -euo pipefail

timeout_s="${LETITCRASH_SLURM_TIMEOUT:-60}"
node=letitcrash-node1

usage() { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; }

die() { echo "local-cluster: $*" >&2; exit 1; }

need() {
  for cmd in munged slurmctld slurmd sinfo ip; do
    command -v "$cmd" >/dev/null 2>&1 || [ -x "/usr/sbin/$cmd" ] ||
      die "$cmd not found: tools/setup.sh --slurm installs slurm-wlm, munge and iproute2"
  done
  [ "$(id -u)" -eq 0 ] || die "runs as root (slurmd starts jobs as their user, munged and slurmctld as root here)"
}

# Free TCP ports on 127.0.0.1, from the kernel (bind to port 0), one per line.
free_ports() {
  python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print("\n".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# The network namespace of the cluster in DIR.
netns_of() { echo "letitcrash-slurm-$(basename "$1" | tr -c 'A-Za-z0-9_.\n-' _)"; }

# COMMAND inside the cluster's namespace, with SLURM_CONF set.
in_cluster() {
  local dir="$1"; shift
  SLURM_CONF="$dir/slurm.conf" nsenter --net="/run/netns/$(netns_of "$dir")" "$@"
}

# Every pid recorded in DIR/pids, still alive.
live_pids() {
  [ -f "$1/pids" ] || return 0
  while read -r pid name; do
    kill -0 "$pid" 2>/dev/null && echo "$pid $name"
  done <"$1/pids"
  return 0
}

stop_cluster() {
  local dir="$1"
  [ -d "$dir" ] || return 0
  [ -f "$dir/slurm.conf" ] || [ -f "$dir/pids" ] || die "$dir is not a local cluster's directory"
  # Jobs first (their slurmstepd children go with slurmd), then slurmd, slurmctld, munged.
  if [ -f "$dir/slurm.conf" ] && [ -n "$(live_pids "$dir")" ]; then
    in_cluster "$dir" timeout 10 scancel --quiet --user=root >/dev/null 2>&1 || true
    for _ in $(seq 1 50); do  # their steps end while slurmd is still there to reap them
      [ -z "$(in_cluster "$dir" timeout 5 squeue --noheader --states=all 2>/dev/null | grep -Ev ' (CD|CA|F|TO|NF|PR|OOM|DL) ' || true)" ] && break
      sleep 0.2
    done
  fi
  local pid name
  for wanted in slurmd slurmctld munged; do
    while read -r pid name; do
      [ "$name" = "$wanted" ] && kill -TERM "$pid" 2>/dev/null || true
    done < <(live_pids "$dir")
    for _ in $(seq 1 50); do
      live_pids "$dir" | grep -q " $wanted\$" || break
      sleep 0.1
    done
    while read -r pid name; do
      [ "$name" = "$wanted" ] && kill -KILL "$pid" 2>/dev/null || true
    done < <(live_pids "$dir")
  done
  # slurmstepd of a job still running when slurmd went: they hold DIR's spool open.
  pkill -KILL -f "slurmstepd.*$dir" 2>/dev/null || true
  for pid in $(pgrep -x slurmstepd 2>/dev/null); do
    { tr '\0' ' ' <"/proc/$pid/environ"; } 2>/dev/null | grep -q "SLURM_CONF=$dir/slurm.conf" && kill -KILL "$pid" 2>/dev/null || true
  done
  ip netns del "$(netns_of "$dir")" 2>/dev/null || true
  rm -rf "$dir"
}

log_tails() {
  local dir="$1"
  for log in slurmctld slurmd munged; do
    [ -f "$dir/log/$log.log" ] || continue
    echo "---- $log.log (last 20 lines) ----" >&2
    tail -n 20 "$dir/log/$log.log" >&2
  done
}

start_cluster() {
  local dir="$1"
  need
  if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then die "$dir is not empty: stop that cluster first, or give another DIR"; fi
  mkdir -p "$dir"
  chmod 0755 "$dir"
  mkdir -p "$dir/state" "$dir/spool" "$dir/log" "$dir/munge" "$dir/run"
  chmod 0755 "$dir/munge"
  : >"$dir/pids"
  # A failure from here on stops whatever did start.
  trap 'log_tails "$dir"; stop_cluster "$dir"; exit 1' ERR INT TERM
  local ns
  ns="$(netns_of "$dir")"
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  # slurmd and slurmctld find their listening address with getaddrinfo(AI_ADDRCONFIG), which
  # answers nothing on a host whose only address is loopback. A veth pair with both ends in the
  # namespace, one holding a documentation address (TEST-NET-1), gives them one: it has no peer
  # outside the namespace, so nothing they send leaves it.
  ip -n "$ns" link add lic0 type veth peer name lic1
  ip -n "$ns" addr add 192.0.2.1/32 dev lic0
  ip -n "$ns" link set lic0 up
  ip -n "$ns" link set lic1 up

  dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
  chmod 0400 "$dir/munge/munge.key"
  local sock="$dir/munge/munge.socket"
  nsenter --net="/run/netns/$ns" munged --force --foreground --socket="$sock" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed" \
    --origin=127.0.0.1 >>"$dir/log/munged.log" 2>&1 &
  echo "$! munged" >>"$dir/pids"
  for _ in $(seq 1 50); do [ -S "$sock" ] && break; sleep 0.1; done
  [ -S "$sock" ] || { echo "local-cluster: munged did not open $sock" >&2; false; }

  local ports ctld_port slurmd_port
  ports="$(nsenter --net="/run/netns/$ns" bash -c "$(declare -f free_ports); free_ports 2")"
  ctld_port="$(sed -n 1p <<<"$ports")"
  slurmd_port="$(sed -n 2p <<<"$ports")"
  local cpus mem
  cpus="$(nproc)"
  mem="$(awk '/MemTotal/ { print int($2 / 1024 / 2) }' /proc/meminfo)"  # half of it, in MiB
  cat >"$dir/slurm.conf" <<EOF
# Written by tools/slurm/local-cluster.sh: a one-node cluster on 127.0.0.1, all in $dir.
ClusterName=letitcrash
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=600
KillWait=5
MaxArraySize=100001
NodeName=$node NodeHostname=localhost NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=$node Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
  # Empty side files: slurmd reads cgroup.conf and plugstack.conf from SLURM_CONF's folder.
  : >"$dir/plugstack.conf"
  export SLURM_CONF="$dir/slurm.conf"
  nsenter --net="/run/netns/$ns" slurmctld -D -i -f "$dir/slurm.conf" >>"$dir/log/slurmctld.log" 2>&1 &
  echo "$! slurmctld" >>"$dir/pids"
  nsenter --net="/run/netns/$ns" slurmd -D -N "$node" -f "$dir/slurm.conf" >>"$dir/log/slurmd.log" 2>&1 &
  echo "$! slurmd" >>"$dir/pids"

  local state=""
  for _ in $(seq 1 $((timeout_s * 2))); do
    state="$(in_cluster "$dir" sinfo --noheader --nodes="$node" --format=%T 2>/dev/null || true)"
    [ "$state" = idle ] && break
    # A daemon that died will not come back.
    if [ "$(live_pids "$dir" | wc -l)" -lt 3 ]; then break; fi
    sleep 0.5
  done
  if [ "$state" != idle ]; then
    echo "local-cluster: the node did not come up idle within ${timeout_s} s (sinfo says '${state:-nothing}'; daemons alive: $(live_pids "$dir" | awk '{print $2}' | xargs))" >&2
    false
  fi
  trap - ERR INT TERM
  echo "local-cluster: up in $dir ($cpus CPUs, network namespace $ns: slurmctld on 127.0.0.1:$ctld_port, slurmd on 127.0.0.1:$slurmd_port); run commands with: $0 exec $dir -- sbatch ..." >&2
  echo "$dir"
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
case "$cmd" in
  start)
    dir="${1:-$(mktemp -d "${TMPDIR:-/tmp}/letitcrash-slurm.XXXXXX")}"
    start_cluster "$dir"
    ;;
  stop)
    [ $# -ge 1 ] || die "stop takes the cluster's DIR (start printed it)"
    stop_cluster "$1"
    ;;
  exec)
    [ $# -ge 1 ] || die "exec takes the cluster's DIR, then -- COMMAND"
    dir="$1"; shift
    [ -f "$dir/slurm.conf" ] || die "$dir holds no local cluster (start prints its DIR)"
    [ "${1:-}" = -- ] && shift
    [ $# -gt 0 ] || die "exec takes a command after --"
    in_cluster "$dir" "$@"
    ;;
  run)
    dir=""
    if [ $# -gt 0 ] && [ "$1" != -- ]; then dir="$1"; shift; fi
    [ "${1:-}" = -- ] && shift
    [ $# -gt 0 ] || die "run takes a command after --"
    [ -n "$dir" ] || dir="$(mktemp -d "${TMPDIR:-/tmp}/letitcrash-slurm.XXXXXX")"
    trap 'stop_cluster "$dir"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    start_cluster "$dir" >/dev/null
    set +e
    in_cluster "$dir" "$@"
    rc=$?
    set -e
    exit "$rc"
    ;;
  -h|--help|help) usage ;;
  *) usage >&2; exit 2 ;;
esac
