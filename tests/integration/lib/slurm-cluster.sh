# shellcheck shell=bash
#
# slurm-cluster.sh - a real Slurm cluster on localhost for integration tests.
#
# Source this file, then:
#   trap 'slurm_cluster_stop "$dir"' EXIT      # set the trap first: cleanup on any failure
#   slurm_cluster_start "$dir" n1 n2 n3 n4     # writes $dir/slurm.conf, exports SLURM_CONF
#   ...                                         # sinfo, scontrol, sbatch now talk to it
#   slurm_cluster_stop "$dir"                   # kills the daemons by pid file, waits for exit
#
# and what Slurm says of a node or a job, for the tests' checks: slurm_state, slurm_state_is,
# slurm_reason, slurm_drained, slurm_undrained, slurm_drained_count, slurm_drained_count_is,
# slurm_job_running, slurm_job_requeued (at the end of this file).
#
# It follows ../shared/notes/slurm-on-localhost.md (Debian 12, slurm-wlm 22.05): one slurmctld
# and one `slurmd -N NAME` per node on 127.0.0.1, auth/none (no munge), everything (state,
# spool, logs, pid files) under DIR. It must run as root because SlurmUser is root.
#
# Ports (override through the environment so that parallel suites do not collide; each test's
# are in lib/ports.sh):
#   HN_SLURM_PORT_BASE       slurmctld port; slurmd's default port is this + 1 (26817/26818)
#   HN_SLURM_NODE_PORT_BASE  port of the first node; node i listens on base + i - 1 (27001...)
#   HN_SLURM_START_TIMEOUT   seconds to wait until every node is idle (30)
#   HN_SLURM_LOCK_TIMEOUT    seconds to wait for another run on the same ports to end (240)
#   HN_SLURM_FAST_REQUEUE    1: a requeued batch job starts again after about 6 s, not 3 minutes
#
# One cluster per controller port at a time: slurm_cluster_start takes an exclusive flock on
# /tmp/houston-slurm-PORT.lock and holds it (on a shell fd the daemons do not inherit) until
# slurm_cluster_stop, so a second run on the same ports waits instead of fighting the first.
#
# Leftovers: a run killed before its trap ran (ctest timeout, SIGKILL) leaves daemons behind but
# releases the lock as it dies. Once slurm_cluster_start holds the lock it therefore knows that
# any daemon on its ports is a leftover, and stops every slurmctld/slurmd that listens on this
# cluster's ports or was started from a houston test folder (marker file
# .houston-slurm-cluster) with the same controller port, with the jobs they left running. It
# never touches a process that is not both a Slurm daemon and ours by one of those tests, so a
# site's real Slurm on 6817/6818 is safe.

_slurm_log() {
    echo "slurm-cluster: $*" >&2
}

_slurm_ctld_port() {
    echo "${HN_SLURM_PORT_BASE:-26817}"
}

# Prints the config folder of every slurmctld/slurmd started from a houston test folder
# (marker file .houston-slurm-cluster) whose controller port is $1.
_slurm_leftover_dirs() {
    local ctld_port=$1 p comm conf dir
    for p in /proc/[0-9]*; do
        comm=$(cat "$p/comm" 2>/dev/null) || continue
        case $comm in
        slurmctld | slurmd) ;;
        *) continue ;;
        esac
        # The config file follows -f on the command line.
        conf=$(tr '\0' '\n' <"$p/cmdline" 2>/dev/null | sed -n '/^-f$/{n;p;q}')
        [ -n "$conf" ] || continue
        dir=$(dirname "$conf")
        if [ -e "$dir/.houston-slurm-cluster" ] &&
            grep -qx "SlurmctldPort=$ctld_port" "$conf" 2>/dev/null; then
            echo "$dir"
        fi
    done | sort -u
}

# Prints the pids of DIR's daemons: those in its pid files, those started with
# -f DIR/slurm.conf, and any process named slurmctld/slurmd listening on one of the ports given
# after DIR (its folder may be gone). A pid is only printed while it names a Slurm daemon:
# pid files outlive their process and the number may have been reused.
_slurm_daemon_pids() {
    local dir=$1 p comm conf port f
    shift
    for f in "$dir"/slurmctld.pid "$dir"/slurmd-*.pid; do
        [ -f "$f" ] || continue
        p=$(cat "$f" 2>/dev/null)
        case $p in
        '' | *[!0-9]*) continue ;;
        esac
        case $(cat "/proc/$p/comm" 2>/dev/null) in
        slurmctld | slurmd) echo "$p" ;;
        esac
    done
    for p in /proc/[0-9]*; do
        comm=$(cat "$p/comm" 2>/dev/null) || continue
        case $comm in
        slurmctld | slurmd) ;;
        *) continue ;;
        esac
        conf=$(tr '\0' '\n' <"$p/cmdline" 2>/dev/null | sed -n '/^-f$/{n;p;q}')
        [ "$conf" = "$dir/slurm.conf" ] && echo "${p#/proc/}"
    done
    for port in "$@"; do
        ss -Hltnp "sport = :$port" 2>/dev/null |
            grep -oE '"slurm(ctld|d)",pid=[0-9]+' | sed 's/.*pid=//'
    done
}

# Prints the pids of the slurmstepd processes of DIR's cluster (they outlive slurmd and keep
# jobs running) and of all their descendants (the jobs). A slurmstepd runs in DIR/log and
# holds the slurmd log open, which is how it is recognised.
_slurm_step_pids() {
    local dir=$1 p steps=() link
    for p in /proc/[0-9]*; do
        [ "$(cat "$p/comm" 2>/dev/null)" = slurmstepd ] || continue
        for link in "$p/cwd" "$p"/fd/*; do
            case $(readlink "$link" 2>/dev/null) in
            "$dir"/*)
                steps+=("${p#/proc/}")
                break
                ;;
            esac
        done
    done
    [ ${#steps[@]} -gt 0 ] || return 0
    # Walk the process tree down from the steps.
    ps -e -o pid=,ppid= | awk -v roots="${steps[*]}" '
        BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) keep[r[i]] = 1 }
        { parent[$1] = $2 }
        END {
            do {
                grew = 0
                for (p in parent)
                    if (!(p in keep) && (parent[p] in keep)) { keep[p] = 1; grew = 1 }
            } while (grew)
            for (p in keep) print p
        }'
}

# Sends SIGTERM to the given pids, waits up to 10 s for them to exit, then SIGKILLs the rest.
_slurm_kill_wait() {
    local pids=("$@") pid
    [ ${#pids[@]} -gt 0 ] || return 0
    for pid in "${pids[@]}"; do
        kill -TERM "$pid" 2>/dev/null || true
    done
    _slurm_gone 100 "${pids[@]}" && return 0
    for pid in "${pids[@]}"; do
        if [ -d "/proc/$pid" ]; then
            _slurm_log "pid $pid ignored SIGTERM for 10 s; sending SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
        fi
    done
    _slurm_gone 50 "${pids[@]}" || _slurm_log "pids $* still there 5 s after SIGKILL"
}

# _slurm_gone TENTHS PID...: waits up to TENTHS tenths of a second for the pids to exit; 1 if
# one is still running then.
_slurm_gone() {
    local tenths=$1 pid alive i
    shift
    for ((i = 0; i < tenths; i++)); do
        alive=0
        for pid in "$@"; do
            # A zombie has exited; its parent (often init here) reaps it, or not.
            if [ -d "/proc/$pid" ] && ! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; then
                alive=1
            fi
        done
        [ $alive -eq 1 ] || return 0
        sleep 0.1
    done
    return 1
}

# The TCP ports of the cluster in DIR: controller, default slurmd, one per node.
_slurm_ports() {
    local dir=$1 base i n=0
    base=${HN_SLURM_NODE_PORT_BASE:-27001}
    [ -f "$dir/nodes" ] && n=$(wc -l <"$dir/nodes")
    echo "$(_slurm_ctld_port)" "$(($(_slurm_ctld_port) + 1))"
    for ((i = 0; i < n; i++)); do
        echo "$((base + i))"
    done
}

# slurm_cluster_stop DIR: stops the cluster started by slurm_cluster_start DIR and waits for
# its daemons to exit: running jobs and their slurmstepd are killed first (SIGKILL; they are
# test jobs), then slurmctld and the slurmd (SIGTERM, SIGKILL after 10 s). While this shell
# holds the port's lock, leftovers of an earlier run on the same ports are stopped too; without
# it (a start that never got the lock, a stop from another shell) only DIR's own daemons are,
# so a failed run cannot kill a concurrent one's cluster. Safe to call twice or when nothing
# runs. Leaves DIR itself (the logs) for the caller to inspect or remove.
slurm_cluster_stop() {
    [ -n "${1:-}" ] || {
        _slurm_log "usage: slurm_cluster_stop DIR"
        return 2
    }
    if [ -n "${_SLURM_LOCK_FD:-}" ]; then
        _slurm_stop_daemons "$1" all
    else
        _slurm_stop_daemons "$1" own
    fi
    _slurm_unlock
    return 0
}

# _slurm_stop_daemons DIR all|own: see slurm_cluster_stop.
_slurm_stop_daemons() {
    local dir=$1 scope=$2 d pids=() steps=() ports=()
    [ -d "$dir" ] && dir=$(cd "$dir" && pwd)
    local dirs=("$dir")
    if [ "$scope" = all ]; then
        mapfile -t ports < <(_slurm_ports "$dir")
        mapfile -t -O 1 dirs < <(_slurm_leftover_dirs "$(_slurm_ctld_port)" | grep -vxF "$dir")
    fi
    for d in "${dirs[@]}"; do
        mapfile -t -O ${#steps[@]} steps < <(_slurm_step_pids "$d")
        mapfile -t -O ${#pids[@]} pids < <(_slurm_daemon_pids "$d" "${ports[@]}")
    done
    if [ ${#steps[@]} -gt 0 ]; then
        _slurm_log "killing ${#steps[@]} job process(es): ${steps[*]}"
        kill -KILL "${steps[@]}" 2>/dev/null || true
    fi
    if [ ${#pids[@]} -gt 0 ]; then
        mapfile -t pids < <(printf '%s\n' "${pids[@]}" | sort -u)
        _slurm_log "stopping ${#pids[@]} daemon(s): ${pids[*]}"
        _slurm_kill_wait "${pids[@]}"
    fi
    rm -f "$dir"/slurmctld.pid "$dir"/slurmd-*.pid
    return 0
}

# Takes this port's cluster lock, waiting for another run to end. The fd stays open in this
# shell until _slurm_unlock; daemons are started with it closed (see slurm_cluster_start).
_slurm_lock() {
    local lock limit
    lock=/tmp/houston-slurm-$(_slurm_ctld_port).lock
    limit=${HN_SLURM_LOCK_TIMEOUT:-240}
    [ -z "${_SLURM_LOCK_FD:-}" ] || return 0
    exec {_SLURM_LOCK_FD}>>"$lock" || return 1
    if ! flock -n "$_SLURM_LOCK_FD"; then
        _slurm_log "another test cluster uses port $(_slurm_ctld_port); waiting up to $limit s"
        if ! flock -w "$limit" "$_SLURM_LOCK_FD"; then
            _slurm_log "FAIL: $lock still held after $limit s"
            _slurm_unlock
            return 1
        fi
    fi
}

_slurm_unlock() {
    if [ -n "${_SLURM_LOCK_FD:-}" ]; then
        exec {_SLURM_LOCK_FD}>&-
        _SLURM_LOCK_FD=
    fi
}

# Writes DIR/slurm.conf for the nodes given (see the notes for each line's purpose).
_slurm_write_conf() {
    local dir=$1
    shift
    local host ctld_port node_base i=0 node
    host=$(hostname -s)
    ctld_port=$(_slurm_ctld_port)
    node_base=${HN_SLURM_NODE_PORT_BASE:-27001}
    {
        echo "# Written by tests/integration/lib/slurm-cluster.sh; removed with the test."
        echo "ClusterName=houston-test"
        echo "SlurmctldHost=$host(127.0.0.1)"
        echo "SlurmctldPort=$ctld_port"
        echo "SlurmdPort=$((ctld_port + 1))"
        echo "AuthType=auth/none"
        echo "CredType=cred/none"
        echo "SlurmUser=root"
        echo "SlurmdUser=root"
        echo "StateSaveLocation=$dir/state"
        echo "SlurmdSpoolDir=$dir/spool/%n"
        echo "SlurmctldPidFile=$dir/slurmctld.pid"
        echo "SlurmdPidFile=$dir/slurmd-%n.pid"
        echo "SlurmctldLogFile=$dir/log/slurmctld.log"
        echo "SlurmdLogFile=$dir/log/slurmd-%n.log"
        echo "ProctrackType=proctrack/linuxproc"
        echo "TaskPlugin=task/none"
        echo "SelectType=select/cons_tres"
        echo "SelectTypeParameters=CR_Core"
        echo "MpiDefault=none"
        echo "ReturnToService=2"
        echo "JobRequeue=1"
        # Heterogeneous jobs start only from the backfill scheduler, every 30 s by default.
        # HN_SLURM_FAST_REQUEUE=1: a requeued job may start again after 6 s (cred_expire + 1,
        # 121 s by default) and the main scheduler, which starts it, runs every 2 s (60 s):
        # a requeued batch job runs again about 6 s later instead of about 3 minutes.
        if [ -n "${HN_SLURM_FAST_REQUEUE:-}" ]; then
            echo "SchedulerParameters=bf_interval=1,sched_interval=2"
            echo "AuthInfo=cred_expire=5"
        else
            echo "SchedulerParameters=bf_interval=1"
        fi
        for node in "$@"; do
            echo "NodeName=$node NodeAddr=127.0.0.1 NodeHostname=$host CPUs=1" \
                "RealMemory=500 Port=$((node_base + i))"
            i=$((i + 1))
        done
        local IFS=,
        echo "PartitionName=gpu Nodes=$* Default=YES MaxTime=INFINITE State=UP"
    } >"$dir/slurm.conf"
}

# slurm_cluster_start DIR NODE...: starts slurmctld and one slurmd per NODE with everything
# under DIR, exports SLURM_CONF=DIR/slurm.conf and returns 0 once `sinfo -N` shows every node
# idle. Returns non-zero (after stopping what it started and printing the daemon logs) on any
# failure. Stops leftovers of an earlier run first.
slurm_cluster_start() {
    local dir=$1
    shift
    local nodes=("$@") node cmd deadline idle
    if [ -z "$dir" ] || [ ${#nodes[@]} -eq 0 ]; then
        _slurm_log "usage: slurm_cluster_start DIR NODE..."
        return 2
    fi
    for cmd in slurmctld slurmd scontrol sinfo sbatch; do
        if ! command -v "$cmd" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$cmd" ]; then
            _slurm_log "FAIL: $cmd not found; run scripts/install-deps.sh" \
                "(Debian packages slurmctld slurmd slurm-client)"
            return 1
        fi
    done
    if [ "$(id -u)" -ne 0 ]; then
        _slurm_log "FAIL: the test cluster runs with SlurmUser=root; run this test as root"
        return 1
    fi
    PATH=$PATH:/usr/sbin
    export PATH

    mkdir -p "$dir" || return 1
    dir=$(cd "$dir" && pwd) || return 1
    _slurm_lock || return 1
    # We hold the lock: whatever still runs on our ports is a leftover of a dead run.
    _slurm_stop_daemons "$dir" all
    rm -rf "$dir/state" "$dir/spool" "$dir/log"
    mkdir -p "$dir/state" "$dir/log" || return 1
    : >"$dir/.houston-slurm-cluster"
    printf '%s\n' "${nodes[@]}" >"$dir/nodes"
    _slurm_write_conf "$dir" "${nodes[@]}"
    export SLURM_CONF=$dir/slurm.conf

    _slurm_log "starting slurmctld (port $(_slurm_ctld_port)) and ${#nodes[@]} slurmd in $dir"
    # {fd}>&- : the daemons must not inherit the lock, or leftovers would hold it forever.
    if ! slurmctld -f "$SLURM_CONF" {_SLURM_LOCK_FD}>&-; then
        _slurm_log "FAIL: slurmctld did not start"
        _slurm_dump_logs "$dir"
        slurm_cluster_stop "$dir"
        return 1
    fi
    for node in "${nodes[@]}"; do
        mkdir -p "$dir/spool/$node"
        if ! slurmd -f "$SLURM_CONF" -N "$node" {_SLURM_LOCK_FD}>&-; then
            _slurm_log "FAIL: slurmd -N $node did not start"
            _slurm_dump_logs "$dir"
            slurm_cluster_stop "$dir"
            return 1
        fi
    done

    deadline=$((SECONDS + ${HN_SLURM_START_TIMEOUT:-30}))
    while :; do
        idle=$(sinfo -N -h -o '%N %t' 2>/dev/null | awk '$2 == "idle"' | sort -u | wc -l)
        if [ "$idle" -eq ${#nodes[@]} ]; then
            _slurm_log "cluster up: ${#nodes[@]} node(s) idle"
            return 0
        fi
        if [ $SECONDS -ge $deadline ]; then
            _slurm_log "FAIL: nodes not idle after ${HN_SLURM_START_TIMEOUT:-30} s:"
            sinfo -N 2>&1 | sed 's/^/  /' >&2
            _slurm_dump_logs "$dir"
            slurm_cluster_stop "$dir"
            return 1
        fi
        sleep 0.5
    done
}

# Prints the last lines of every daemon log under DIR/log to stderr (for failure reports).
_slurm_dump_logs() {
    local f
    for f in "$1"/log/*.log; do
        [ -f "$f" ] || continue
        echo "---- $f (last 20 lines)" >&2
        tail -n 20 "$f" >&2
    done
}

# ---- What Slurm says of a node or a job (the tests' checks) ----

# slurm_state NODE: the node's state as sinfo prints it (idle, allocated, drained, ...).
slurm_state() { sinfo -h -N -n "$1" -o '%T' | head -n1; }
slurm_state_is() { [ "$(slurm_state "$1")" = "$2" ]; }
# slurm_reason NODE: the reason Slurm keeps for the node (the drain's).
slurm_reason() { sinfo -h -N -n "$1" -o '%E' | head -n1; }
slurm_drained() { sinfo -h -N -n "$1" -o '%T' | grep -q drain; }
# Not drained: sinfo answered with the node's state, and it is no drain (a failed sinfo is no
# answer, unlike `! slurm_drained`).
slurm_undrained() {
    local st
    st=$(sinfo -h -N -n "$1" -o '%T') && [ -n "$st" ] && ! grep -q drain <<<"$st"
}
# slurm_drained_count: how many nodes are drained or draining.
slurm_drained_count() { sinfo -h -N -o '%N %T' | grep -c drain; }
slurm_drained_count_is() { [ "$(slurm_drained_count)" = "$1" ]; }
# slurm_job_running JOB: squeue shows JOB running.
slurm_job_running() { squeue -h -j "$1" -o %T | grep -q RUNNING; }
# slurm_job_requeued JOB: Slurm requeued JOB: it has restarted, or waits to (pending).
slurm_job_requeued() { scontrol show job "$1" | grep -qE 'Restarts=[1-9]|JobState=PENDING'; }
