#!/usr/bin/env bash
#
# test_slurm_cluster.sh - the Slurm scheduler backend end to end against a real 4-node Slurm
# cluster on localhost (tests/integration/lib/slurm-cluster.sh).
#
# A 2-node batch job runs on n2,n3; the backend (through tests/tools/sched_cli.c, built as
# $HN_BUILD_DIR/tests/hn_sched_cli) lists it running there from squeue (list_jobs, job_on_node,
# the node allocated), drains n2 with a houston reason, reads it back, requeues the job (then
# listed queued), resumes n2; then the error paths: unknown node and job, refused names, and a
# scontrol that hangs (a missing SLURM_CONF makes scontrol retry for 60 s) killed at the
# deadline.
# Needs root and the Debian packages slurmctld slurmd slurm-client; fails (never skips)
# without them. The cluster is stopped and its folder removed whatever happens.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tests/integration/lib/slurm-cluster.sh
source "$here/lib/slurm-cluster.sh"
# shellcheck source=tests/integration/lib/ports.sh
source "$here/lib/ports.sh"
hn_ports slurm_cluster

checks=0
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
ok() {
    checks=$((checks + 1))
    echo "ok $checks - $*"
}

# wait_for SECONDS DESCRIPTION COMMAND...: runs COMMAND every 0.5 s until it succeeds.
wait_for() {
    local limit=$1 what=$2 deadline
    shift 2
    deadline=$((SECONDS + limit))
    until "$@"; do
        [ $SECONDS -lt $deadline ] || fail "$what: not true after $limit s"
        sleep 0.5
    done
}

cli=${HN_BUILD_DIR:-$here/../../build}/tests/hn_sched_cli
[ -x "$cli" ] || fail "$cli is not built: run cmake --build build (or set HN_BUILD_DIR)"
PATH=$PATH:/usr/sbin
for cmd in slurmctld slurmd scontrol sinfo sbatch squeue; do
    command -v "$cmd" >/dev/null 2>&1 ||
        fail "$cmd not found: run scripts/install-deps.sh (Debian slurmctld slurmd slurm-client)"
done
[ "$(id -u)" -eq 0 ] || fail "the Slurm test cluster needs root (SlurmUser=root)"

dir=$(mktemp -d "${TMPDIR:-/tmp}/houston-slurm-test.XXXXXX")
cleanup() {
    local rc=$?
    trap - EXIT
    slurm_cluster_stop "$dir" || true
    if [ $rc -ne 0 ]; then
        echo "---- test failed (exit $rc); daemon logs:" >&2
        _slurm_dump_logs "$dir"
    fi
    rm -rf "$dir"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "# starting a 4-node Slurm cluster in $dir"
slurm_cluster_start "$dir" n1 n2 n3 n4 || fail "the test cluster did not start"
ok "cluster up, 4 nodes idle ($(sinfo -h -N -o '%N:%t' | tr '\n' ' '))"

# node_field NODE KEY: one key=value of `hn_sched_cli show NODE`.
node_field() {
    "$cli" show "$1" | sed -n "s/^$2=//p"
}
sinfo_node() {
    sinfo -h -N -n "$1" -o '%T|%E' | head -n 1
}

# ---- a running 2-node job on n2,n3
jobid=$(sbatch --parsable -N 2 -w n2,n3 --requeue -o /dev/null --wrap 'sleep 300')
[[ $jobid =~ ^[0-9]+$ ]] || fail "sbatch gave no job id: $jobid"
job_state() { squeue -h -j "$jobid" -o %T 2>/dev/null; }
job_running() { [ "$(job_state)" = RUNNING ]; }
wait_for 20 "job $jobid RUNNING" job_running
ok "job $jobid RUNNING on $(squeue -h -j "$jobid" -o %N)"

# ---- the job listing through the backend: squeue's lines read back as houston's jobs
jobs=$("$cli" jobs) || fail "hn_sched_cli jobs failed"
while IFS= read -r l; do echo "#   $l"; done <<<"$jobs"
grep -Eqx "$jobid 0 running [0-9]+ n2,n3" <<<"$jobs" ||
    fail "list_jobs: no line for job $jobid of root's running on n2,n3 with its time left"
[ "$("$cli" on "$jobid" n3)" = 1 ] || fail "job_on_node: job $jobid not seen on n3"
[ "$("$cli" on "$jobid" n1)" = 0 ] || fail "job_on_node: job $jobid seen on n1"
[ "$("$cli" on 999999 n1)" = 0 ] || fail "job_on_node: an unknown job seen on n1"
[ "$(node_field n2 allocated)" = 1 ] || fail "node_info n2: not allocated while the job runs"
[ "$(node_field n1 allocated)" = 0 ] || fail "node_info n1: allocated without a job"
ok "list_jobs: job $jobid running on n2,n3; job_on_node and node_info agree"

# ---- drain n2 through the backend
"$cli" drain n2 "houston: test" || fail "hn_sched_cli drain n2 failed"
line=$(sinfo_node n2)
case $line in
draining\|* | drained\|*) ;;
*) fail "sinfo shows n2 as '$line', want draining or drained" ;;
esac
[ "${line#*|}" = "houston: test" ] || fail "sinfo reason for n2 is '${line#*|}'"
ok "sinfo: n2 ${line%%|*} with reason '${line#*|}'"

show=$("$cli" show n2) || fail "hn_sched_cli show n2 failed"
while IFS= read -r l; do echo "#   $l"; done <<<"$show"
grep -qx 'drain=1' <<<"$show" || fail "node_info n2: drain flag not set"
grep -qx 'drained_by_houston=1' <<<"$show" || fail "node_info n2: not drained by houston"
grep -qx 'reason=houston: test' <<<"$show" || fail "node_info n2: wrong reason"
grep -qx 'reason_user=root' <<<"$show" || fail "node_info n2: wrong reason user"
grep -qE '^state=(ALLOCATED|MIXED)\+DRAIN' <<<"$show" || fail "node_info n2: want a draining state"
ok "node_info n2: $(grep '^state=' <<<"$show"), drained_by_houston=1"

# A drain by someone else is seen as a drain, but not houston's.
scontrol update NodeName=n4 State=DRAIN "Reason=bad dimm, ticket 42"
[ "$(node_field n4 drain)" = 1 ] || fail "node_info n4: drain flag not set"
[ "$(node_field n4 drained_by_houston)" = 0 ] || fail "node_info n4: admin drain taken as houston's"
[ "$(node_field n4 reason)" = "bad dimm, ticket 42" ] || fail "node_info n4: wrong reason"
ok "node_info n4: admin drain, drained_by_houston=0"
scontrol update NodeName=n4 State=RESUME

# ---- requeue the job through the backend
"$cli" requeue "$jobid" || fail "hn_sched_cli requeue $jobid failed"
job_requeued() {
    local s
    s=$(scontrol show job "$jobid")
    grep -q 'JobState=PENDING' <<<"$s" && grep -q 'Restarts=1' <<<"$s"
}
wait_for 15 "job $jobid PENDING with Restarts=1" job_requeued
ok "job $jobid requeued: $(scontrol show job "$jobid" | grep -oE 'JobState=[A-Z]+|Restarts=[0-9]+' |
    tr '\n' ' ')"
jobs=$("$cli" jobs) || fail "hn_sched_cli jobs failed"
grep -Eqx "$jobid 0 queued -?[0-9]+ -" <<<"$jobs" || fail "list_jobs: job $jobid not queued: $jobs"
[ "$("$cli" on "$jobid" n2)" = 0 ] || fail "job_on_node: the requeued job $jobid seen on n2"
ok "list_jobs: job $jobid queued, on no node"

n2_drained() { [ "$(sinfo_node n2)" = "drained|houston: test" ]; }
wait_for 20 "n2 drained once its job left" n2_drained
ok "sinfo: n2 drained now that the job has left"
[ "$(node_field n2 allocated)" = 0 ] || fail "node_info n2: allocated after its job left"

# ---- resume n2 through the backend
"$cli" resume n2 || fail "hn_sched_cli resume n2 failed"
n2_idle() { [ "$(sinfo -h -N -n n2 -o %T | head -n 1)" = idle ]; }
wait_for 20 "n2 idle after resume" n2_idle
[ "$(node_field n2 drain)" = 0 ] || fail "node_info n2: still drained after resume"
[ "$(node_field n2 drained_by_houston)" = 0 ] || fail "node_info n2: still houston's after resume"
ok "sinfo: n2 idle after resume; node_info drain=0"

# ---- error paths against the real scontrol
expect_fail() {
    local want=$1 out
    shift
    if out=$("$cli" "$@" 2>&1); then
        fail "hn_sched_cli $* succeeded, want failure"
    fi
    grep -q -- "$want" <<<"$out" || fail "hn_sched_cli $*: message '$out' lacks '$want'"
    ok "hn_sched_cli $* fails: $out"
}
expect_fail "not found" show n9
expect_fail "Invalid node name" drain n9 "houston: x"
expect_fail "Invalid job id" requeue 999999
expect_fail "refusing node name" drain 'n[1-4]' "houston: x"
expect_fail "refusing node name" resume ALL

# scontrol without a readable config retries for a minute: the deadline must end it.
start=$SECONDS
SLURM_CONF=$dir/missing.conf expect_fail "no answer within 1500 ms" -t 1500 show n1
[ $((SECONDS - start)) -le 5 ] || fail "hung scontrol held the backend for $((SECONDS - start)) s"

# ---- stop, and nothing left behind
slurm_cluster_stop "$dir"
for port in $(_slurm_ports "$dir"); do
    if ! listening=$(ss -Hltn "sport = :$port"); then
        fail "ss could not list port $port"
    elif [ -n "$listening" ]; then
        fail "port $port still in use after slurm_cluster_stop"
    fi
done
[ -z "$(_slurm_daemon_pids "$dir")" ] || fail "daemons still running after slurm_cluster_stop"
ok "cluster stopped, ports free"

echo "PASS: $checks checks"
