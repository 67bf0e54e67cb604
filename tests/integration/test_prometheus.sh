#!/usr/bin/env bash
# The agent on the fake NVML and a real H100 sysfs tree, scraped by a real Prometheus server on
# loopback: PromQL returns the values the fake GPU state holds, a fault knob turned in the
# state file shows in the next scrape, and promtool lints /metrics.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
need prometheus promtool curl jq

HOUSTON=${HOUSTON:-$HN_BUILD_DIR/houston}
. "$here/lib/ports.sh"
hn_ports prometheus || exit 1
AGENT_PORT=$HN_TEST_AGENT_PORT
PROM_PORT=$HN_TEST_PROM_PORT
work=$(mktemp -d /tmp/houston-prom.XXXXXX)
trap 'hn_cleanup; rm -rf "$work"' EXIT

export HN_FAKENVML_STATE=$work/state
cat >"$HN_FAKENVML_STATE" <<STATE
gpu 0 power 612
gpu 1 temp 71
gpu 2 util 33
STATE
: >"$work/kmsg"

spawn_bg "$work/agent.log" "$HOUSTON" agent --listen 127.0.0.1:$AGENT_PORT \
    --nvml-lib "$HN_FAKENVML" --sysfs-root "$HN_FIXTURES/sysfs-h100" \
    --proc-root "$HN_FIXTURES/host/proc" --kmsg "$work/kmsg" --interval 0.5 --hostname node-a \
    --step-socket "$work/step.sock"
agent_url=http://127.0.0.1:$AGENT_PORT/metrics
check "agent serves /metrics" wait_for 20 curl -fsS "$agent_url"
curl -fsS "$agent_url" >"$work/metrics"

# promtool: houston_* must be clean. DCGM_* keep dcgm-exporter's names, which the linter
# dislikes (camelCase labels, counters without _total): each kind of finding on them must be
# one that a real dcgm-exporter's output (tests/fixtures/dcgm-exporter/metrics-t4.txt) gets too.
promtool check metrics <"$work/metrics" >"$work/lint" 2>&1
grep -v '^DCGM_FI_' "$work/lint" | grep -v '^$' >"$work/lint.houston" || true
check_eq "promtool: no finding on houston_* series" "" "$(cat "$work/lint.houston")"
# (the dump lacks a final newline, which promtool's parser needs)
{ cat "$HN_FIXTURES/dcgm-exporter/metrics-t4.txt"; echo; } | promtool check metrics 2>&1 |
    sed -E 's/^[A-Za-z0-9_]+ //' | sort -u >"$work/lint.t4"
check "dcgm-exporter's own output gets the camelCase finding" \
    grep -q "label names should be written in 'snake_case' not 'camelCase'" "$work/lint.t4"
grep '^DCGM_FI_' "$work/lint" | sed -E 's/^[A-Z0-9_]+ //' | sort -u |
    grep -vxF -f "$work/lint.t4" >"$work/lint.dcgm" || true
check_eq "promtool: DCGM_* findings are all ones dcgm-exporter gets" "" "$(cat "$work/lint.dcgm")"

# dcgm-exporter compatibility: every default counter NVML can provide, same name and type.
# Not provided: DCP profiling fields (need DCGM's profiling module), vGPU licence, NVLink
# bandwidth (no per-GPU NVML total), as documented in docs/metrics.md.
counters=$(grep -v '^#' "$HN_FIXTURES/dcgm-exporter/default-counters.csv" | grep -v '^\s*$' | tr -d ' ')
check "dcgm-exporter's default counters read (at least 20)" test "$(grep -c '^DCGM_' <<<"$counters")" -ge 20
while IFS=, read -r name type _; do
    case "$name" in
    DCGM_FI_PROF_* | DCGM_FI_DEV_VGPU_LICENSE_STATUS | DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL) continue ;;
    DCGM_FI_DRIVER_VERSION)
        grep -q 'DCGM_FI_DRIVER_VERSION="' "$work/metrics" || echo "missing label $name"
        continue
        ;;
    esac
    grep -qx "# TYPE $name $type" "$work/metrics" || echo "missing $name ($type)"
done <<<"$counters" >"$work/compat"
check_eq "all dcgm-exporter default counters present with their types" "" "$(cat "$work/compat")"
check "labels as dcgm-exporter" grep -qE \
    '^DCGM_FI_DEV_GPU_UTIL\{gpu="0",UUID="GPU-[0-9a-f-]+",pci_bus_id="[0-9A-F:.]+",device="nvidia0",modelName="NVIDIA H100[^"]*",Hostname="node-a",DCGM_FI_DRIVER_VERSION="[0-9.]+"\} ' \
    "$work/metrics"

cat >"$work/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: houston
    static_configs:
      - targets: ['127.0.0.1:$AGENT_PORT']
YML
spawn_bg "$work/prometheus.log" prometheus --config.file="$work/prometheus.yml" \
    --storage.tsdb.path="$work/tsdb" --web.listen-address=127.0.0.1:$PROM_PORT
prom=http://127.0.0.1:$PROM_PORT

# query PROMQL: prints the first result's value, or nothing.
query() {
    curl -fsS --get "$prom/api/v1/query" --data-urlencode "query=$1" |
        jq -r '.data.result[0].value[1] // empty'
}
query_is() { [ "$(query "$1")" = "$2" ]; }

check "prometheus scrapes the agent (up == 1)" wait_for 60 query_is 'up{job="houston"}' 1
check_eq "power of GPU 0 (W)" 612 "$(query 'DCGM_FI_DEV_POWER_USAGE{gpu="0",Hostname="node-a"}')"
check_eq "temperature of GPU 1 (C)" 71 "$(query 'DCGM_FI_DEV_GPU_TEMP{gpu="1"}')"
check_eq "utilization of GPU 2 (%)" 33 "$(query 'DCGM_FI_DEV_GPU_UTIL{gpu="2"}')"
check_eq "8 GPUs" 8 "$(query 'count(DCGM_FI_DEV_GPU_TEMP)')"
check_eq "no uncorrectable ECC yet" 0 "$(query 'sum(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL)')"
check_eq "9 IB/RoCE ports" 9 "$(query 'count(houston_ib_port_state)')"
check_eq "mlx5_1 link_downed" 255 "$(query 'houston_ib_link_downed_total{device="mlx5_1"}')"

say "turning fault knobs: ECC on GPU 3, Xid 79 on GPU 5, NVLink 2 of GPU 6 down"
cat >>"$HN_FAKENVML_STATE" <<STATE
gpu 3 ecc dbe_volatile 2
gpu 5 xid 79 id=1
gpu 6 nvlink 2 down
STATE
check "uncorrectable ECC on GPU 3 reaches Prometheus" \
    wait_for 30 query_is 'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu="3"}' 2
check "Xid 79 on GPU 5 reaches Prometheus" wait_for 30 query_is 'DCGM_FI_DEV_XID_ERRORS{gpu="5"}' 79
check "NVLink 2 of GPU 6 is down" wait_for 30 query_is 'houston_gpu_nvlink_up{gpu="6",link="2"}' 0
check_eq "other GPUs untouched" 0 "$(query 'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{gpu="4"}')"

say "taking GPU 7 off the bus"
echo "gpu 7 lost" >>"$HN_FAKENVML_STATE"
check "lost GPU shows houston_gpu_up 0" wait_for 30 query_is 'houston_gpu_up{gpu="7"}' 0
check "agent keeps serving the other GPUs" wait_for 10 query_is 'count(DCGM_FI_DEV_GPU_TEMP)' 7

finish
