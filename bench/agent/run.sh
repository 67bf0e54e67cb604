#!/usr/bin/env bash
# bench/agent: the agent's collection cost, memory and serving cost per series, against Debian's
# prometheus-node-exporter scraped in the same run. Prints a summary and appends it to
# bench/results/agent.md with date, commit and machine. Uses the release build.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build-release}
AGENT_PORT=${BENCH_AGENT_PORT:-19402}
PEER_PORT=${BENCH_PEER_PORT:-19403}
CYCLES=${BENCH_CYCLES:-2000}
REQUESTS=${BENCH_REQUESTS:-300}
work=$(mktemp -d /tmp/houston-bench.XXXXXX)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work"' EXIT

command -v prometheus-node-exporter >/dev/null || {
    echo "bench: prometheus-node-exporter missing: run scripts/install-deps.sh" >&2
    exit 1
}
fake=$B/fakenvml/libnvidia-ml.so.1
sysfs=tests/fixtures/sysfs-h100
proc=tests/fixtures/host/proc
: >"$work/kmsg"
export HN_FAKENVML_STATE=$work/state
: >"$HN_FAKENVML_STATE"

"$B/houston" agent --listen 127.0.0.1:$AGENT_PORT --nvml-lib "$fake" --sysfs-root "$sysfs" \
    --proc-root "$proc" --kmsg "$work/kmsg" --interval 1 --log-level error &
pids+=($!)
agent_pid=$!
prometheus-node-exporter --web.listen-address=127.0.0.1:$PEER_PORT --log.level=error \
    2>"$work/peer.log" &
pids+=($!)
for _ in $(seq 100); do
    curl -fsS "http://127.0.0.1:$AGENT_PORT/metrics" >/dev/null 2>&1 &&
        curl -fsS "http://127.0.0.1:$PEER_PORT/metrics" >/dev/null 2>&1 && break
    sleep 0.1
done

"$B/bench/agent/bench_agent" "$fake" "$sysfs" "$proc" "$CYCLES" \
    "http://127.0.0.1:$AGENT_PORT/metrics" "http://127.0.0.1:$PEER_PORT/metrics" "$REQUESTS" \
    >"$work/out"
sleep 2 # let the agent run a few more cycles before its memory is read
rss_kib=$(awk '/^VmRSS/ {print $2}' "/proc/$agent_pid/status")
hwm_kib=$(awk '/^VmHWM/ {print $2}' "/proc/$agent_pid/status")
echo "agent_rss_kib=$rss_kib" >>"$work/out"
echo "agent_peak_rss_kib=$hwm_kib" >>"$work/out"
cat "$work/out"

get() { sed -n "s/^$1=//p" "$work/out"; }
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
machine="$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n1)"
mkdir -p bench/results
{
    echo
    echo "## $(date -u +%Y-%m-%d) commit $commit"
    echo
    echo "Machine: $machine. Fake NVML: $(get gpus) GPUs, $(get nvlinks) NVLinks; IB fixture; $CYCLES cycles; $REQUESTS requests per server."
    echo
    echo "| measure | value | goal |"
    echo "|---|---|---|"
    echo "| collection CPU per cycle, all collectors, NVML included | $(get collect_cpu_us_per_cycle) µs | |"
    echo "| of which inside the fake NVML ($(get nvml_calls_per_cycle) calls) | $(get nvml_cpu_us_per_cycle) µs | |"
    echo "| houston's own CPU per GPU per cycle | $(get houston_cpu_us_per_gpu) µs | < 100 µs |"
    echo "| heap calls by houston in $CYCLES steady cycles | $(get steady_heap_calls) | 0 |"
    echo "| render per series (in process) | $(get render_ns_per_series) ns | |"
    echo "| agent resident memory (peak) | $(get agent_rss_kib) KiB ($(get agent_peak_rss_kib) KiB) | < 8192 KiB |"
    echo "| serving per series: houston agent ($(get agent_series) series) | $(get agent_serve_ns_per_series) ns | |"
    echo "| serving per series: prometheus-node-exporter ($(get peer_series) series) | $(get peer_serve_ns_per_series) ns | |"
    echo "| **ratio node-exporter / houston per series** | **$(get serve_ratio)×** | ≥ 5× |"
} >>bench/results/agent.md
echo "bench: appended to bench/results/agent.md"
