#!/usr/bin/env bash
# Runs every GPU path of houston against the real NVML in one go, for a session that is lent a
# GPU machine (device tool). Writes what it saw under $OUT (default ./gpu-check-out):
#   metrics.txt        one `houston agent --once` render with the real libnvidia-ml
#   metrics-daemon.txt /metrics from the daemon after a few cycles (event thread running)
#   check.txt          `houston check -v` verdict and exit status
#   nvidia-smi.xml     `nvidia-smi -q -x`, to compare values with
#   agent.log          the daemon's log (unsupported fields are listed there once)
#   summary.txt        families and series served, DCGM families missing versus the fake
# Keep metrics.txt as tests/fixtures/real-gpu/ and fix what differs from the fake.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-check-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/run.log") 2>&1

echo "== machine"; nvidia-smi -L || true; uname -r
echo "== build (release)"
if ! command -v cmake >/dev/null || ! pkg-config --exists libmicrohttpd cmocka; then
    bash scripts/install-deps.sh || echo "deps: could not install everything"
fi
cmake --preset release >/dev/null && cmake --build build-release -j "$(nproc)" >/dev/null || {
    echo "build failed"; exit 1; }
H=build-release/houston

echo "== agent --once (real NVML)"
timeout 60 "$H" agent --once --kmsg /dev/kmsg --log-level info >"$OUT/metrics.txt" 2>"$OUT/once.log"
echo "exit $?"; cat "$OUT/once.log"

echo "== agent daemon, 12 s"
timeout 20 "$H" agent --listen 127.0.0.1:19499 --interval 2 --log-level debug 2>"$OUT/agent.log" &
pid=$!
sleep 12
curl -fsS http://127.0.0.1:19499/metrics >"$OUT/metrics-daemon.txt" || echo "curl failed"
kill -TERM $pid; wait $pid; echo "daemon exit $?"

echo "== check"
timeout 60 "$H" check -v >"$OUT/check.txt" 2>&1
echo "exit status $?" >>"$OUT/check.txt"; cat "$OUT/check.txt"

nvidia-smi -q -x >"$OUT/nvidia-smi.xml" 2>/dev/null || true

echo "== summary"
{
    echo "families: $(grep -c '^# TYPE' "$OUT/metrics.txt")"
    echo "series: $(grep -vc '^#' "$OUT/metrics.txt")"
    echo "DCGM families served by the fake but not by this GPU:"
    HN_FAKENVML_STATE=/dev/null build-release/houston agent --once --kmsg /dev/null \
        --nvml-lib build-release/fakenvml/libnvidia-ml.so.1 2>/dev/null |
        awk '/^# TYPE DCGM/ {print $3}' | sort >"$OUT/fake-families"
    awk '/^# TYPE DCGM/ {print $3}' "$OUT/metrics.txt" | sort >"$OUT/real-families"
    comm -23 "$OUT/fake-families" "$OUT/real-families"
    echo "not supported (from the log):"
    grep -o '[A-Za-z_]* is not supported[^;]*' "$OUT/once.log" | sort | uniq -c
    echo "promtool:"
    command -v promtool >/dev/null && promtool check metrics <"$OUT/metrics.txt" 2>&1 |
        sed -E 's/^[A-Za-z0-9_]+ //' | sort | uniq -c
} | tee "$OUT/summary.txt"
