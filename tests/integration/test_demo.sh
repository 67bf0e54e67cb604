#!/usr/bin/env bash
# `make demo` (scripts/demo.sh -> houston demo) end to end: the fleet is served by the
# controller's API (144 nodes in 8 racks, one 512-GPU job) and dashboard, the injected laggard
# is found, drained at the next checkpoint and replaced, MFU recovers, the terminal says so,
# the CLI shows the events, and SIGTERM ends the demo cleanly. The agent-only demo
# (scripts/agent-demo.sh) still runs to its end.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
need curl jq
HOUSTON=${HOUSTON:-$HN_BUILD_DIR/houston}
. "$here/lib/ports.sh"
hn_ports demo || exit 1
PORT=$HN_TEST_DEMO_PORT
CTL=http://127.0.0.1:$PORT
work=$(mktemp -d /tmp/houston-demo-test.XXXXXX)
trap 'hn_cleanup; rm -rf "$work"' EXIT

HOUSTON=$HOUSTON DEMO_LISTEN=127.0.0.1:$PORT DEMO_DURATION=120 \
    bash "$HN_SOURCE_DIR/scripts/demo.sh" >"$work/out" 2>"$work/err" &
demo=$!
HN_PIDS+=("$demo")
check "the API answers" wait_for 10 curl -fsS "$CTL/healthz"
check_eq "144 nodes" 144 "$(curl -fsS "$CTL/v1/nodes" | jq '.nodes | length')"
check_eq "8 racks of 18" "8 18" "$(curl -fsS "$CTL/v1/racks" | jq -r '"\(.racks | length) \(.racks[0].nodes)"')"
check "the dashboard is served" bash -c "curl -fsS $CTL/ | grep -qi '<!doctype html'"
# The demo's job reports one rank per GPU: 512 ranks on 128 nodes of 4 GPUs.
check "one job reporting 512 ranks (one per GPU) from 128 nodes, MFU above 35%" wait_for 10 bash -c \
    "curl -fsS $CTL/v1/jobs | jqe '.jobs[0].ranks == 512 and .jobs[0].nodes == 128 and .jobs[0].mfu > 0.35'"
check "the laggard's node becomes suspect" wait_for 60 bash -c \
    "curl -fsS $CTL/v1/nodes/n00037 | jqe '.state == \"suspect\" or .state == \"draining\" or .state == \"quarantined\"'"
check "then it is drained" wait_for 30 bash -c \
    "curl -fsS $CTL/v1/nodes/n00037 | jqe '.state == \"draining\" or .state == \"quarantined\"'"
HOUSTON_SERVER=$CTL "$HOUSTON" events --node n00037 >"$work/events"
check "houston events shows the straggler and the laggard" \
    bash -c "grep -q straggler $work/events && grep -qE 'laggard|throttled' $work/events"
# The laggard comes at 30 s, its drain at the next 10 s checkpoint, the MFU after 14 s more: about
# 55 s from the start, later when the machine is loaded (the demo runs to 120 s; SIGTERM ends it).
check "the terminal says MFU recovered" wait_for 60 grep -q 'MFU before 40' "$work/out"
mfu=$(sed -n 's/.*with the laggard \([0-9.]*\)%, after \([0-9.]*\)%.*/\1 \2/p' "$work/out")
check "MFU dropped with the laggard and came back: $mfu" \
    awk -v a="${mfu% *}" -v b="${mfu#* }" 'BEGIN { exit !(a < 37 && b > 39) }'
kill -TERM "$demo"
wait "$demo"
check_eq "SIGTERM: clean exit" 0 $?
check "it said what happened" grep -q 'the laggard was found and replaced' "$work/out"
check "the timeline names the drain" grep -q 'drain n00037' "$work/out"
check "and its decision, the rule said once" \
    grep -qE 'finding n00037 straggler: job 1001 rank 148 [0-9]+% slower; replaced at checkpoint' "$work/out"
[ "$HN_FAIL" -eq 0 ] || cat "$work/out" "$work/err"

out=$(HOUSTON=$HOUSTON FAKENVML=$HN_FAKENVML DEMO_LISTEN=127.0.0.1:$HN_TEST_AGENT_DEMO_PORT \
    DEMO_DURATION=0.1 timeout 60 bash "$HN_SOURCE_DIR/scripts/agent-demo.sh" 2>&1)
check_eq "the agent demo exits 0" 0 $?
check "and shows the injected Xid" grep -q 'DCGM_FI_DEV_XID_ERRORS{gpu="3",...} 79' <<<"$out"
finish
