#!/usr/bin/env bash
# The agent as a daemon: a config file, a missing NVML library, NOT_SUPPORTED fields, kernel-log
# Xid lines and garbage, other endpoints, and a clean exit on SIGTERM (ASan checks for leaks at
# exit, so a leak fails the exit status).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
need curl

HOUSTON=${HOUSTON:-$HN_BUILD_DIR/houston}
. "$here/lib/ports.sh"
hn_ports agent || exit 1
PORT=$HN_TEST_AGENT_PORT2
work=$(mktemp -d /tmp/houston-agent.XXXXXX)
trap 'hn_cleanup; rm -rf "$work"' EXIT
url=http://127.0.0.1:$PORT

metric() { curl -fsS "$url/metrics" | grep -E "^$1" | head -n1 | awk '{print $NF}'; }
metric_is() { [ "$(metric "$1")" = "$2" ]; }

say "1. config file; NVML library missing"
cat >"$work/agent.conf" <<CONF
# agent settings, same keys as the flags
listen = 127.0.0.1:$PORT
nvml-lib = $work/no-such-libnvidia-ml.so.1
sysfs-root = $HN_FIXTURES/sysfs-h100
proc-root = $HN_FIXTURES/host/proc
kmsg = $work/kmsg
interval = 0.2
hostname = "cfg-node"
step-socket = $work/step.sock
log-level = debug
CONF
: >"$work/kmsg"
spawn_bg "$work/a1.log" "$HOUSTON" agent --config "$work/agent.conf"
a1=$HN_LAST_PID
check "serves on the address from the config file" wait_for 20 curl -fsS "$url/metrics"
check "houston_nvml_up 0 without the library" metric_is 'houston_nvml_up ' 0
check "IB series still served" wait_for 5 metric_is 'houston_ib_port_up\{device="mlx5_0"' 1
check "no DCGM series" bash -c "m=\$(curl -fsS $url/metrics) && ! grep -q '^DCGM_FI_' <<<\"\$m\""
sleep 1
check_eq "the missing library is logged once" 1 "$(grep -c 'cannot load NVML' "$work/a1.log")"
check_eq "/healthz" ok "$(curl -fsS "$url/healthz")"
check_eq "unknown path is 404" 404 "$(curl -s -o /dev/null -w '%{http_code}' "$url/nope")"
check_eq "POST /metrics is 405" 405 "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$url/metrics")"

say "2. kernel log: an Xid line, an SXid line and garbage"
printf '<3>[ 1234.5] NVRM: Xid (PCI:0000:53:00): 79, pid=0, GPU has fallen off the bus.\n' >>"$work/kmsg"
printf 'nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress error\n' >>"$work/kmsg"
head -c 20000 /dev/urandom >>"$work/kmsg"
printf '\n' >>"$work/kmsg"
check "Xid 79 counted as fatal" wait_for 10 \
    metric_is 'houston_xid_events_total\{kind="xid",code="79",fatal="1"\}' 1
check "SXid 12028 counted" wait_for 10 metric_is 'houston_xid_events_total\{kind="sxid",code="12028"' 1
check_eq "last Xid per device" 79 "$(metric 'houston_xid_last_code\{pci_bus_id="PCI:0000:53:00",kind="xid"\}')"
check "agent survives garbage" curl -fsS -o /dev/null "$url/healthz"

say "2b. step reports on the step socket"
check "the step socket is there, writable by any user" \
    bash -c "[ -S '$work/step.sock' ] && [ \$(stat -c %a '$work/step.sock') = 666 ]"
send_dgram() {
    python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
for m in sys.argv[2:]: s.sendto(m.encode(), sys.argv[1])' "$work/step.sock" "$@"
}
send_dgram "hs1 job=77 rank=3 lrank=3 world=8 step=12 dur=1.25 tokens=4096" \
    "hs1 job=77 rank=2 lrank=2 world=8 step=12 dur=1.5 newkey=ignored" \
    "hs1 job=77 rank=3 step=oops dur=1" "not a report" "hs1 rank=1 step=1 dur=1"
# The receiver counts datagrams as they come; the per-rank series follow at the next collection.
steps_shown() {
    metric_is 'houston_agent_step_reports_total\{result="accepted"\}' 2 &&
        metric_is 'houston_agent_step_reports_total\{result="malformed"\}' 3 &&
        [ -n "$(metric 'houston_step\{job="77",rank="2",gpu="2"\}')" ]
}
check "the reports are counted and shown" wait_for 10 steps_shown
check "two reports accepted" \
    metric_is 'houston_agent_step_reports_total\{result="accepted"\}' 2
check "three malformed ones counted" metric_is \
    'houston_agent_step_reports_total\{result="malformed"\}' 3
check_eq "last step time of rank 3" 1.25 "$(metric 'houston_step_seconds\{job="77",rank="3",gpu="3"\}')"
check_eq "last step of rank 2" 12 "$(metric 'houston_step\{job="77",rank="2",gpu="2"\}')"
send_dgram "hs1 job=77 rank=1 step=13 dur=1 pad=$(printf '%02000d' 0)"
check "an oversized report is counted" wait_for 10 \
    metric_is 'houston_agent_step_reports_total\{result="malformed"\}' 4
check "and logged by its own size (debug)" wait_for 10 \
    grep -q 'malformed step report: datagram of 2036 bytes (at most' "$work/a1.log"

kill -TERM "$a1"
wait "$a1"
check_eq "SIGTERM: clean exit, no leak reported" 0 $?
check "the step socket is removed at exit" bash -c "[ ! -e '$work/step.sock' ]"

say "2c. the wall clock steps back (NTP): the step series stay"
# libfaketime moves the agent's wall clock by the offset in a file, read at every call; the
# monotonic clock stays real. The series age by the monotonic clock: they vanished at the
# next collection when they aged by the wall clock.
need faketime
ft_lib=$(dpkg -L libfaketime | grep '/libfaketimeMT\.so\.1$' | head -n1)
echo "+0" >"$work/faketime"
LD_PRELOAD=$ft_lib FAKETIME_TIMESTAMP_FILE=$work/faketime FAKETIME_NO_CACHE=1 \
    FAKETIME_DONT_FAKE_MONOTONIC=1 ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
    spawn_bg "$work/a1c.log" "$HOUSTON" agent --config "$work/agent.conf"
a1c=$HN_LAST_PID
check "serves under faketime" wait_for 20 curl -fsS "$url/metrics"
check "the step socket is there" wait_for 10 test -S "$work/step.sock"
send_dgram "hs1 job=78 rank=0 lrank=0 step=5 dur=1" "hs1 job=79 rank=1 step=2 dur=1"
check "the report is shown" wait_for 10 metric_is 'houston_step\{job="78",rank="0",gpu="0"\}' 5
check_eq "one that names no GPU has no gpu label" 2 "$(metric 'houston_step\{job="79",rank="1"\}')"
echo "-120" >"$work/faketime"
sleep 1 # five collections at 0.2 s
check_eq "still shown after the clock went back 2 minutes" 5 \
    "$(metric 'houston_step\{job="78",rank="0",gpu="0"\}')"
kill -TERM "$a1c"
wait "$a1c"
check_eq "SIGTERM under faketime: clean exit" 0 $?

say "3. NVML present, power NOT_SUPPORTED on every GPU"
printf 'gpu all not_supported power\n' >"$work/state"
HN_FAKENVML_STATE=$work/state spawn_bg "$work/a2.log" "$HOUSTON" agent --config "$work/agent.conf" \
    --nvml-lib "$HN_FAKENVML" --hostname flag-node
a2=$HN_LAST_PID
check "serves" wait_for 20 curl -fsS "$url/metrics"
curl -fsS "$url/metrics" >"$work/m3"
check "flag overrides the config file" grep -q 'Hostname="flag-node"' "$work/m3"
check "other GPU series served" wait_for 5 metric_is 'houston_gpus ' 8
check "power series left out" bash -c "m=\$(curl -fsS $url/metrics) && ! grep -q '^DCGM_FI_DEV_POWER_USAGE' <<<\"\$m\""
sleep 1
check_eq "NOT_SUPPORTED logged once per GPU" 8 "$(grep -c 'DCGM_FI_DEV_POWER_USAGE is not supported' "$work/a2.log")"
"$HOUSTON" agent --listen 127.0.0.1:$PORT --nvml-lib /nonexistent --kmsg /dev/null \
    --sysfs-root "$work" --proc-root "$work" --step-socket off 2>"$work/bind.err"
check "a port already in use: non-zero exit" [ $? -ne 0 ]
check "says it cannot listen" grep -q "cannot listen on 127.0.0.1:$PORT" "$work/bind.err"
kill -TERM "$a2"
wait "$a2"
check_eq "SIGTERM: clean exit" 0 $?

say "4. bad configuration is refused with a reason"
printf 'listen = 127.0.0.1:%s\nintervall = 3\n' "$PORT" >"$work/bad.conf"
"$HOUSTON" agent --config "$work/bad.conf" 2>"$work/bad.err"
check_eq "unknown key: exit 2" 2 $?
check "names the key and line" grep -q "bad.conf:2: .*intervall" "$work/bad.err"
"$HOUSTON" agent --interval 0 2>"$work/bad.err"
check_eq "interval 0: exit 2" 2 $?
finish
