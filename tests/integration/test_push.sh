#!/usr/bin/env bash
# The agent's push to the controller: the agent starts with --controller pointing at a port
# where nothing listens, keeps its frames for a few cycles, then a receiver (hn_frame_sink, a
# stand-in for the controller's /v1/ingest that answers 503 to its first frame) starts:
# every frame built arrives, in seq order, none twice, with GPU samples and the kernel-log Xid;
# SIGTERM sends what is left, step reports received since the last cycle included, and exits
# cleanly (ASan checks for leaks at exit). Also: a wrong token is refused (401) and counted,
# and --controller without --token-file is refused.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
need curl awk ss

HOUSTON=${HOUSTON:-$HN_BUILD_DIR/houston}
SINK=${HN_BUILD_DIR:-$here/../../build}/tests/hn_frame_sink
# free_port: a port on 127.0.0.1 that no socket uses now, in any state (random, so that test
# runs in other build folders at the same time do not collide). Taken between the other
# tests' fixed ports (lib/ports.sh: all below HN_PORTS_RANDOM_FROM, 28000) and the kernel's
# ephemeral range: an ephemeral port can be the local end of a client connection in
# TIME_WAIT, which nothing listens on but which makes bind() fail (that failed CI once).
. "$here/lib/ports.sh"
free_port() {
    local p low used from=$HN_PORTS_RANDOM_FROM
    read -r low _ </proc/sys/net/ipv4/ip_local_port_range
    [ "$low" -gt $((from + 1000)) ] || low=61000
    for _ in $(seq 100); do
        p=$((from + RANDOM % (low - from)))
        used=$(ss -Htan "sport = :$p") || return 1
        if [ -z "$used" ]; then
            echo "$p"
            return 0
        fi
    done
    return 1
}
APORT=${HN_TEST_PUSH_AGENT_PORT:-$(free_port)}
SPORT=${HN_TEST_PUSH_SINK_PORT:-$(free_port)}
[ -n "$APORT" ] && [ -n "$SPORT" ] || {
    echo "FAIL: no free port found"
    exit 1
}
[ "$APORT" != "$SPORT" ] || SPORT=$((APORT + 1))
work=$(mktemp -d /tmp/houston-push.XXXXXX)
trap 'hn_cleanup; rm -rf "$work"' EXIT
url=http://127.0.0.1:$APORT

metric() { curl -fsS "$url/metrics" | grep -E "^$1" | head -n1 | awk '{print $NF}'; }
metric_ge() { local v; v=$(metric "$1") && [ -n "$v" ] && awk -v a="$v" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
lines() { [ -f "$work/frames" ] && wc -l <"$work/frames" || echo 0; }
# delivered: every frame the agent built is in the sink's file and none waits.
delivered() {
    local built queued
    built=$(metric 'houston_agent_push_frames_total ') && queued=$(metric 'houston_agent_push_queue_frames ') &&
        [ "$queued" = 0 ] && [ "$(lines)" = "$built" ]
}

printf 's3cret-token\n' >"$work/token"
chmod 600 "$work/token"
printf 'wrong-token\n' >"$work/badtoken"
chmod 600 "$work/badtoken"
: >"$work/kmsg"
: >"$work/state"
agent_args=(agent --listen "127.0.0.1:$APORT" --nvml-lib "$HN_FAKENVML"
    --sysfs-root "$HN_FIXTURES/sysfs-h100" --proc-root "$HN_FIXTURES/host/proc"
    --kmsg "$work/kmsg" --interval 0.2 --hostname push-node
    --controller "http://127.0.0.1:$SPORT" --push-queue 1000 --step-socket "$work/step.sock")

say "1. controller unreachable: frames are kept"
HN_FAKENVML_STATE=$work/state spawn_bg "$work/agent.log" "$HOUSTON" "${agent_args[@]}" \
    --token-file "$work/token"
agent=$HN_LAST_PID
check "agent serves /metrics" wait_for 20 curl -fsS "$url/metrics"
check "frames are built every cycle" wait_for 10 metric_ge 'houston_agent_push_frames_total ' 5
check "failed sends are counted" wait_for 10 metric_ge 'houston_agent_push_errors_total ' 1
check_eq "nothing sent yet" 0 "$(metric 'houston_agent_push_sent_total ')"
check "frames wait in the queue" metric_ge 'houston_agent_push_queue_frames ' 5
check "the failure is logged" grep -q "push: http://127.0.0.1:$SPORT/v1/ingest: " "$work/agent.log"
printf '<3>[ 1234.5] NVRM: Xid (PCI:0000:53:00): 79, pid=0, GPU has fallen off the bus.\n' >>"$work/kmsg"
sleep 1
built_before=$(metric 'houston_agent_push_frames_total ')

say "2. the receiver starts (503 to its first frame): everything arrives once, in order"
spawn_bg "$work/sink.log" "$SINK" --listen "127.0.0.1:$SPORT" --token-file "$work/token" \
    --out "$work/frames" --fail-first 1
sink=$HN_LAST_PID
check "the receiver listens" wait_for 20 bash -c "[ -n \"\$(ss -Hltn 'sport = :$SPORT')\" ]"
# The agent's retries back off (1, 2, 4 ... 60 s): after the sink's 503 the next may be 60 s on.
check "all frames delivered and the queue empty" wait_for 150 delivered
check "the agent says the controller takes frames again" \
    grep -q "push: http://127.0.0.1:$SPORT/v1/ingest takes frames again" "$work/agent.log"
check "last success time is set" metric_ge 'houston_agent_push_last_success_timestamp_seconds ' 1
kill -TERM "$agent"
wait "$agent"
check_eq "SIGTERM: clean exit, no leak reported" 0 $?
n=$(lines)
check "frames built while the receiver was down arrived ($n >= $built_before)" [ "$n" -ge "$built_before" ]
check_eq "seqs are 1..N in order, none twice" "$n" \
    "$(awk -F'[= ]' -v bad=0 '{ if ($2 != NR) bad = 1 } END { print bad ? "gap or repeat" : NR }' "$work/frames")"
check "every frame carries GPU samples" awk -F'[= ]' '$4 < 8 * 20 { exit 1 }' "$work/frames"
check_eq "the kernel-log Xid arrived once" 1 "$(awk -F'[= ]' '{ s += $6 } END { print s }' "$work/frames")"

say "2b. SIGTERM between two cycles: a step report received since the last one still goes out"
: >"$work/frames"
slow_args=()
for a in "${agent_args[@]}"; do [ "$a" = 0.2 ] && slow_args+=(600) || slow_args+=("$a"); done
HN_FAKENVML_STATE=$work/state spawn_bg "$work/agent3.log" "$HOUSTON" "${slow_args[@]}" \
    --token-file "$work/token"
agent3=$HN_LAST_PID
check "its first frame arrives (the cycle at start)" wait_for 20 bash -c "[ -s '$work/frames' ]"
printf ' iteration 7/ 10 | elapsed time per iteration (ms): 500.0 |\n' |
    "$HOUSTON" tail --job pushjob --socket "$work/step.sock" 2>"$work/tail.err"
check "houston tail sent the report" grep -q ' 1 iterations reported, 0 malformed skipped, 0 reports dropped' "$work/tail.err"
kill -TERM "$agent3"
wait "$agent3"
check_eq "SIGTERM: clean exit" 0 $?
check_eq "frames: the one at start, then the last one with the report" \
    "seq=1 steps=0|seq=2 steps=1" "$(awk '{ print $1, $4 }' "$work/frames" | paste -sd'|')"

say "3. a wrong token is refused and counted; the frames are not retried forever"
: >"$work/frames"
HN_FAKENVML_STATE=$work/state spawn_bg "$work/agent2.log" "$HOUSTON" "${agent_args[@]}" \
    --token-file "$work/badtoken"
agent2=$HN_LAST_PID
check "refusals counted by status" wait_for 20 metric_ge 'houston_agent_push_refused_total\{code="401"\} ' 3
check "the queue does not grow" [ "$(metric 'houston_agent_push_queue_frames ')" -le 2 ]
check_eq "nothing accepted" 0 "$(lines)"
check "the refusal is logged" grep -q "refused frame seq 1 with HTTP 401" "$work/agent2.log"
kill -TERM "$agent2"
wait "$agent2"
check_eq "SIGTERM: clean exit" 0 $?
kill -TERM "$sink"
wait "$sink"
check_eq "sink exits cleanly" 0 $?

say "4. settings"
"$HOUSTON" agent --controller http://127.0.0.1:$SPORT --listen 127.0.0.1:$APORT 2>"$work/err"
check_eq "--controller without --token-file: exit 2" 2 $?
check "says why" grep -q "needs --token-file" "$work/err"
"$HOUSTON" agent --controller 10.0.0.5:8080 --token-file "$work/token" 2>"$work/err"
check_eq "a controller that is not a URL: exit 2" 2 $?
"$HOUSTON" agent --controller http://127.0.0.1:$SPORT --token-file "$work/nope" \
    --listen 127.0.0.1:$APORT --nvml-lib /nonexistent --kmsg /dev/null \
    --sysfs-root "$work" --proc-root "$work" --step-socket off 2>"$work/err"
check "an unreadable token file: non-zero exit" [ $? -ne 0 ]
check "names the file" grep -q "token-file $work/nope" "$work/err"
finish
