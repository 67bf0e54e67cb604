#!/usr/bin/env bash
# `houston control` refuses bad input with the documented status and keeps serving: truncated,
# oversized, wrong-token and wrong-type frames; resends are answered "duplicate" and applied
# once; the operator API checks its token, body, node and state. Scheduler: dry-run.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
need curl jq

HOUSTON=${HOUSTON:-$HN_BUILD_DIR/houston}
GEN=$HN_BUILD_DIR/tests/hn_frame_gen
. "$here/lib/ports.sh"
hn_ports control_api || exit 1
PORT=$HN_TEST_CONTROL_API_PORT
CTL=http://127.0.0.1:$PORT
work=$(mktemp -d /tmp/houston-api.XXXXXX)
trap 'hn_cleanup; rm -rf "$work"' EXIT
umask 077
echo agent-token >"$work/token"
echo operator-token >"$work/op"
cat >"$work/c.conf" <<CONF
listen = 127.0.0.1:$PORT
token-file = $work/token
operator-token-file = $work/op
store = $work/h.db
scheduler = dry-run
max-frame-bytes = 4096
tick = 0.2
agent-silence = 1
node = n1 r1 H100 8
node = n2 r1 H100 8
CONF

printf 'listen = nowhere\ntoken-file = /nonexistent\nbogus-key = 1\n' >"$work/bad.conf"
out=$("$HOUSTON" control --config "$work/bad.conf" --check-config 2>&1)
check_eq "--check-config: unknown key refused, exit 1" 1 $?
check "names the key" grep -q "bogus-key" <<<"$out"
printf 'listen = nowhere\ntoken-file = /nonexistent\n' >"$work/bad2.conf"
out=$("$HOUSTON" control --config "$work/bad2.conf" --check-config 2>&1)
check_eq "--check-config: bad values refused, exit 1" 1 $?
check "lists each problem" bash -c "grep -q 'listen' <<<'$out' && grep -q '^token-file: /nonexistent' <<<'$out' && grep -q 'operator-token-file is required' <<<'$out'"

spawn_bg "$work/control.log" "$HOUSTON" control --config "$work/c.conf"
check "controller up" wait_for 20 curl -fsS "$CTL/healthz"

post() { # post FILE [TOKEN [TYPE]] -> "STATUS BODY"
    curl -s -o "$work/body" -w '%{http_code}' -X POST --data-binary "@$1" \
        -H "Authorization: Bearer ${2-agent-token}" \
        -H "Content-Type: ${3-application/x-houston-frame}" "$CTL/v1/ingest"
    printf ' %s' "$(head -c 200 "$work/body" | tr -d '\n')"
}
"$GEN" n1 7 1 >"$work/f1"
check_eq "valid frame" "200 accepted" "$(post "$work/f1")"
check_eq "the same frame again" "200 duplicate" "$(post "$work/f1")"
size=$(stat -c %s "$work/f1")
head -c $((size - 3)) "$work/f1" >"$work/trunc"
check "truncated frame: 400" grep -q '^400 ' <<<"$(post "$work/trunc")"
head -c 10000 /dev/urandom >"$work/big"
check "oversized body: 413" grep -q '^413 ' <<<"$(post "$work/big")"
"$GEN" n9 7 1 >"$work/f9"
check "a node the configuration does not list: 403" grep -q '^403 ' <<<"$(post "$work/f9")"
check "wrong token: 401" grep -q '^401 ' <<<"$(post "$work/f1" wrong-token)"
check "no token: 401" grep -qx '401' <<<"$(curl -s -o /dev/null -w '%{http_code}' -X POST \
    --data-binary "@$work/f1" -H 'Content-Type: application/x-houston-frame' "$CTL/v1/ingest")"
check "wrong content type: 415" grep -q '^415 ' <<<"$(post "$work/f1" agent-token text/plain)"
head -c 300 /dev/urandom >"$work/garbage"
check "garbage: 400" grep -q '^400 ' <<<"$(post "$work/garbage")"
say "the dashboard's static files"
check "GET / is the dashboard's page" bash -c \
    "curl -fsS -D $work/hdr $CTL/ | grep -qi '<html\\|<!doctype html' && grep -qi '^content-type: text/html' $work/hdr"
check_eq "a path out of web-root: 404" 404 \
    "$(curl -s --path-as-is -o /dev/null -w '%{http_code}' "$CTL/ui/../../etc/passwd")"
check_eq "a hidden file: 404" 404 "$(curl -s -o /dev/null -w '%{http_code}' "$CTL/ui/.git/config")"
check_eq "a missing file: 404" 404 "$(curl -s -o /dev/null -w '%{http_code}' "$CTL/ui/nope.js")"
check_eq "GET /v1/ingest: 405" 405 "$(curl -s -o /dev/null -w '%{http_code}' "$CTL/v1/ingest")"
metrics=$(curl -fsS "$CTL/metrics")
check_eq "accepted counted once" 1 "$(sed -n 's/^houston_control_frames_total{result="accepted"} //p' <<<"$metrics")"
check_eq "duplicate counted" 1 "$(sed -n 's/^houston_control_frames_total{result="duplicate"} //p' <<<"$metrics")"
check_eq "malformed counted" 2 "$(sed -n 's/^houston_control_frames_total{result="malformed"} //p' <<<"$metrics")"
check_eq "unauthorized counted" 2 "$(sed -n 's/^houston_control_frames_total{result="unauthorized"} //p' <<<"$metrics")"
check_eq "unknown node counted" 1 "$(sed -n 's/^houston_control_frames_total{result="unknown_node"} //p' <<<"$metrics")"
# Step reports without a sender uid (an older agent) are accepted and counted as unchecked.
unchecked() { curl -fsS "$CTL/metrics" | sed -n 's/^houston_control_step_reports_without_uid_total //p'; }
check_eq "no step report without a uid yet" 0 "$(unchecked)"
HN_GEN_STEP_UID=none "$GEN" n1 7 2 >"$work/s1"
check_eq "a frame with a step report of unknown uid" "200 accepted" "$(post "$work/s1")"
HN_GEN_STEP_UID=0 "$GEN" n1 7 3 >"$work/s2"
check_eq "a frame with a step report of uid 0" "200 accepted" "$(post "$work/s2")"
check_eq "only the one without a uid is counted unchecked" 1 "$(unchecked)"
check_eq "both accepted" 2 \
    "$(curl -fsS "$CTL/metrics" | sed -n 's/^houston_control_step_reports_total{result="accepted"} //p')"
check "promtool accepts the controller's /metrics" bash -c \
    "m=\$(curl -fsS $CTL/metrics) && [ -n \"\$m\" ] && promtool check metrics <<<\"\$m\""

say "a resent Xid frame drains once"
"$GEN" n2 9 1 79 3 >"$work/x1"
check_eq "Xid frame" "200 accepted" "$(post "$work/x1")"
check_eq "resent" "200 duplicate" "$(post "$work/x1")"
check_eq "one drain action" 1 "$(curl -fsS "$CTL/v1/events?node=n2&kind=action" | jq '[.events[] | select(.action=="drain")] | length')"
check_eq "n2 draining" draining "$(curl -fsS "$CTL/v1/nodes/n2" | jq -r .state)"

say "operator API"
api() { # api METHOD PATH TOKEN BODY -> status
    curl -s -o "$work/body" -w '%{http_code}' -X "$1" -H "Authorization: Bearer $3" \
        -H 'Content-Type: application/json' --data "$4" "$CTL$2"
}
check_eq "drain without the operator token" 401 "$(api POST /v1/nodes/n1/drain agent-token '{}')"
check_eq "bad JSON" 400 "$(api POST /v1/nodes/n1/drain operator-token '{bad')"
check_eq "unknown node" 404 "$(api POST /v1/nodes/n9/drain operator-token '{}')"
check_eq "approve with nothing held" 409 "$(api POST /v1/nodes/n1/approve operator-token '{}')"
check_eq "bad state" 400 "$(api POST /v1/nodes/n1/state operator-token '{"state":"sideways"}')"
check_eq "user must be a string" 400 "$(api POST /v1/nodes/n1/drain operator-token '{"user":5}')"
check_eq "a body over 64 KiB" 413 "$(head -c 70000 /dev/zero | tr '\0' 'a' | curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Authorization: Bearer operator-token' --data-binary @- "$CTL/v1/nodes/n1/drain")"
check_eq "drain" 200 "$(api POST /v1/nodes/n1/drain operator-token '{"reason":"fan","user":"ops"}')"
check_eq "node answered in the new state" draining "$(jq -r .node.state "$work/body")"
check_eq "events limit out of range" 400 "$(curl -s -o /dev/null -w '%{http_code}' "$CTL/v1/events?limit=0")"
check_eq "events bad kind" 400 "$(curl -s -o /dev/null -w '%{http_code}' "$CTL/v1/events?kind=nope")"
check_eq "retire n1" 200 "$(api POST /v1/nodes/n1/state operator-token '{"state":"retired","user":"ops"}')"
check_eq "resume a retired node: 409" 409 "$(api POST /v1/nodes/n1/resume operator-token '{}')"
check_eq "racks" 2 "$(curl -fsS "$CTL/v1/racks" | jq '.racks[0].nodes')"
check "a silent agent is reported" wait_for 10 bash -c \
    "curl -fsS '$CTL/v1/events?node=n1&rule=agent_silent' | jqe '.events | length > 0'"
check "still healthy" curl -fsS -o /dev/null "$CTL/healthz"
finish
