# Sourced by controller tests: a houston controller and one agent per Slurm node, all real
# processes on loopback. Needs lib/common.sh and lib/slurm-cluster.sh sourced first (what
# Slurm says of nodes and jobs: slurm_drained, slurm_reason, ...), and $HOUSTON, $HN_FAKENVML,
# $HN_FIXTURES set; $work is set by control_cluster (or by the test). Ports: lib/ports.sh.

CTL_PORT=${HN_TEST_CONTROL_PORT:-18080}
CTL=http://127.0.0.1:$CTL_PORT
AGENT_PORT_BASE=${HN_TEST_AGENT_PORT_BASE:-19410}

# control_cluster NAME: the start every Slurm-backed controller test shares. A work directory
# /tmp/houston-NAME.XXXXXX ($work); on exit the test's processes and the Slurm cluster are
# stopped, the controller log's tail is printed if a check failed, and the directory goes; a
# Slurm cluster of n1..n4 under $work/slurm (the test exits when it does not start).
control_cluster() {
    work=$(mktemp -d "/tmp/houston-$1.XXXXXX")
    HN_CLUSTER_NAME=$1 # the trap runs after control_cluster returns: $1 is gone then
    trap 'golden_dump "$HN_CLUSTER_NAME"; hn_cleanup; slurm_cluster_stop "$work/slurm"; [ "$HN_FAIL" -eq 0 ] || tail -n 60 "$work/control.log"; rm -rf "$work"' EXIT
    mkdir -p "$work/slurm"
    slurm_cluster_start "$work/slurm" n1 n2 n3 n4 || {
        echo "FAIL: Slurm did not start"
        exit 1
    }
}

# golden_dump NAME: with HN_GOLDEN_DIR set (scripts/same-outputs.sh), the controller's events
# and actions into $HN_GOLDEN_DIR/NAME.json before the test's processes stop (if it started one).
golden_dump() {
    [ -n "${HN_GOLDEN_DIR:-}" ] && [ -n "${CTL_PID:-}" ] || return 0
    curl -fsS "$CTL/v1/events?limit=10000" >"$HN_GOLDEN_DIR/$1.json" 2>/dev/null || true
}

# control_config FILE GUARD_FRACTION: writes a controller config for nodes n1..n4 in two racks.
control_config() {
    umask 077
    echo "agent-secret-$$" >"$work/token"
    echo "operator-secret-$$" >"$work/operator.token"
    cat >"$1" <<CONF
listen = 127.0.0.1:$CTL_PORT
token-file = $work/token
operator-token-file = $work/operator.token
store = $work/houston.db
scheduler = slurm
tick = 0.5
scheduler-poll = 0.5
guard-fraction = $2
guard-per-rack = 4
node = n1 r1 H100 8
node = n2 r1 H100 8
node = n3 r2 H100 8
node = n4 r2 H100 8
CONF
    # HN_TEST_SQUEUE: another squeue for the controller's polls (lib/slow-squeue: answers late,
    # as a loaded slurmctld does), to shake out races between polls, frames and actions.
    [ -z "${HN_TEST_SQUEUE:-}" ] || echo "squeue = $HN_TEST_SQUEUE" >>"$1"
}

# control_start CONFIG: starts the controller, waits for /healthz. Sets CTL_PID.
control_start() {
    "$HOUSTON" control --config "$1" >>"$work/control.log" 2>&1 &
    CTL_PID=$!
    HN_PIDS+=("$CTL_PID")
    wait_for 20 curl -fsS "$CTL/healthz"
}

# agent_start NODE: an agent for NODE with its own fake NVML state and sysfs copy. Its pid in
# AGENT_PID[i] for node ni.
AGENT_PID=()
agent_start() {
    local node=$1 i=${1#n}
    mkdir -p "$work/$node"
    [ -e "$work/$node/state" ] || : >"$work/$node/state"
    [ -d "$work/$node/sys" ] || cp -r "$HN_FIXTURES/sysfs-h100" "$work/$node/sys"
    : >"$work/$node/kmsg"
    [ -e "$work/subuid" ] || : >"$work/subuid" # no subordinate uids unless a test lists some
    HN_FAKENVML_STATE=$work/$node/state "$HOUSTON" agent --hostname "$node" \
        --listen 127.0.0.1:$((AGENT_PORT_BASE + i)) --nvml-lib "$HN_FAKENVML" \
        --sysfs-root "$work/$node/sys" --proc-root "$HN_FIXTURES/host/proc" \
        --kmsg "$work/$node/kmsg" --interval 0.3 --controller "$CTL" \
        --token-file "$work/token" --step-socket "$work/$node/step.sock" \
        --step-subuid-file "$work/subuid" >>"$work/$node/agent.log" 2>&1 &
    HN_PIDS+=($!)
    # shellcheck disable=SC2034 # read by the tests that source this file
    AGENT_PID[$i]=$!
}

# fleet_up: an agent on each of n1..n4; checks that all four report and resumes them in houston
# (quarantined until then).
fleet_up() {
    local n
    for n in n1 n2 n3 n4; do agent_start $n; done
    check "all four agents report" wait_for 20 bash -c \
        "[ \$(curl -fsS $CTL/v1/nodes | jq '[.nodes[] | select(.last_seen != null)] | length') = 4 ]"
    for n in n1 n2 n3 n4; do houston_cli resume $n >/dev/null; done
}

# fleet_start: fleet_up, then checks that the agents' step sockets are up (for tests whose
# trainers report steps).
fleet_start() {
    fleet_up
    check "step sockets are up" wait_for 10 bash -c \
        "[ -S $work/n1/step.sock ] && [ -S $work/n4/step.sock ]"
}

# houston_cli VERB ARGS...: the CLI against this controller.
houston_cli() {
    HOUSTON_SERVER=$CTL HOUSTON_OPERATOR_TOKEN_FILE=$work/operator.token "$HOUSTON" "$@"
}

# sched_polled: waits until the controller has applied a squeue poll begun after the call: two
# more polls that worked (the one under way may have begun before). Polls come every
# scheduler-poll seconds plus squeue's own time.
polls_ok() { curl -fsS "$CTL/metrics" | sed -n 's/^houston_control_scheduler_polls_total{result="ok"} //p'; }
polls_at_least() { local n; n=$(polls_ok) && [ -n "$n" ] && [ "$n" -ge "$1" ]; }
sched_polled() {
    local n
    n=$(polls_ok) && [ -n "$n" ] || return 1
    wait_for 20 polls_at_least $((n + 2))
}

node_state() {
    curl -fsS "$CTL/v1/nodes/$1" | jq -r .state
}
node_state_is() { [ "$(node_state "$1")" = "$2" ]; }
# no_drain_action NODE: houston's events hold no drain action for NODE. The brain queues a
# drain in the same decision that makes a node suspect or held, so this holds at once, where
# Slurm's state may lag the executor.
no_drain_action() {
    curl -fsS "$CTL/v1/events?node=$1&kind=action" |
        jqe '[.events[] | select(.action == "drain")] | length == 0' >/dev/null
}

# sbatch_sleep SBATCH_ARG...: submits `sleep 300` with those sbatch arguments, its output
# discarded and sbatch's errors appended to $work/sbatch.err; prints the job id.
sbatch_sleep() {
    sbatch --parsable "$@" -o /dev/null --wrap 'sleep 300' 2>>"$work/sbatch.err"
}
