#!/usr/bin/env bash
# `make agent-demo`: houston's agent on the fake NVML (8 simulated H100 GPUs), a real H100 node's
# InfiniBand sysfs tree and a kernel log, serving /metrics; then a fault is injected and both
# /metrics and `houston check` show it. Runs until Ctrl-C, or for DEMO_DURATION seconds.
# (`make demo` runs `houston demo`, the fleet demo.)
set -euo pipefail
cd "$(dirname "$0")/.."

HOUSTON=${HOUSTON:-build/houston}
FAKENVML=${FAKENVML:-build/fakenvml/libnvidia-ml.so.1}
LISTEN=${DEMO_LISTEN:-127.0.0.1:9400}
DURATION=${DEMO_DURATION:-}

work=$(mktemp -d /tmp/houston-demo.XXXXXX)
state="$work/fakenvml.state"
kmsg="$work/kmsg.log"
: >"$kmsg"
: >"$state"
export HN_FAKENVML_STATE="$state"

agent_pid=
cleanup() {
    [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null && wait "$agent_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 0' INT TERM

"$HOUSTON" agent --listen "$LISTEN" --nvml-lib "$FAKENVML" \
    --sysfs-root tests/fixtures/sysfs-h100 --kmsg "$kmsg" --interval 1 --hostname demo-node \
    --step-socket "$work/step.sock" 2>"$work/agent.log" &
agent_pid=$!

url="http://$LISTEN/metrics"
# Keeps the first label of a series (gpu="0", device="mlx5_0") so a sample fits on a line.
shorten() { sed -E 's/\{([a-z_]+="[^"]*")[^}]*\}/{\1,...}/; s/^/      /'; }
for _ in $(seq 50); do
    curl -fsS "$url" -o "$work/metrics" 2>/dev/null && break
    sleep 0.1
done
if ! [ -s "$work/metrics" ]; then
    echo "demo: the agent did not start; its log:" >&2
    cat "$work/agent.log" >&2
    exit 1
fi

series=$(grep -vc '^#' "$work/metrics")
families=$(grep -c '^# TYPE' "$work/metrics")
cat <<MSG

  houston agent is serving $series series in $families families at

      $url

  from 8 simulated H100 GPUs (the fake NVML), a real H100 node's InfiniBand tree and a
  kernel log. A sample:

MSG
grep -E '^(DCGM_FI_DEV_(GPU_UTIL|POWER_USAGE|GPU_TEMP|SM_CLOCK)\{gpu="[01]"|houston_ib_port_rate|houston_gpu_nvlinks_active\{gpu="0")' \
    "$work/metrics" | head -n 12 | shorten

echo
echo "  Injecting a fault: GPU 3 falls off the bus (Xid 79) ..."
printf 'gpu 3 xid 79 id=1\n' >>"$state"
printf '[%s] NVRM: Xid (PCI:0000:86:00): 79, pid=0, GPU has fallen off the bus.\n' \
    "$(date '+%a %b %e %H:%M:%S %Y')" >>"$kmsg"
# The agent shows it at its next collection (every second); wait up to 10 s on a busy machine.
for _ in $(seq 40); do
    curl -fsS "$url" >"$work/metrics" && grep -q '^DCGM_FI_DEV_XID_ERRORS{gpu="3".* 79$' "$work/metrics" &&
        break
    sleep 0.25
done
grep -E '^(DCGM_FI_DEV_XID_ERRORS\{gpu="3"|houston_xid_events_total)' "$work/metrics" | shorten
echo
echo "  houston check (what Slurm's HealthCheckProgram would run):"
set +e
"$HOUSTON" check --nvml-lib "$FAKENVML" --sysfs-root tests/fixtures/sysfs-h100 \
    --kmsg "$kmsg" --expect-gpus 8 | sed 's/^/      /'
echo "      exit status ${PIPESTATUS[0]}"
set -e
echo
if [ -n "$DURATION" ]; then
    echo "  (stopping after ${DURATION}s)"
    sleep "$DURATION"
else
    echo "  Press Ctrl-C to stop."
    wait "$agent_pid"
fi
