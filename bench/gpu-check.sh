#!/usr/bin/env bash
# Runs every GPU path of houston against a real GPU in one go, for a session that is lent a GPU
# machine (device tool). Before the call, run bench/gpu/bundle.sh here and carry .gpu (the
# device machine has none of houston's Debian packages); without .gpu this builds in place.
# Writes under $OUT (default ./gpu-check-out):
#   run.log         everything printed, the checks' PASS/FAIL lines included
#   results.json    bench/gpu/jobs_check.py's figures and verdicts (MFU, straggler)
#   gpu-check.tgz   the rest:
#     metrics.txt        one `houston agent --once` render with the real libnvidia-ml
#     metrics-daemon.txt /metrics from the daemon after a few cycles (event thread running)
#     check.txt          `houston check -v` verdict and exit status
#     nvidia-smi.xml     `nvidia-smi -q -x`, to compare values with
#     agent.log          the daemon's log (unsupported fields are listed there once)
#     summary.txt        families and series served, DCGM families missing versus the fake
#     jobs/              megatron.log and dp-steps.csv of the training runs, controller and
#                        agent logs
# Keep metrics.txt as tests/fixtures/real-gpu/ and fix what differs from the fake.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/gpu-check-out}
R=$OUT/raw
mkdir -p "$R/jobs"
exec > >(tee "$OUT/run.log") 2>&1

echo "== machine"
nvidia-smi -L || true
uname -r
ldd --version | head -n1
python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name())' || true
if [ -x .gpu/houston ]; then
    H=$PWD/.gpu/houston
    # houston reads its data files (SKUs, Xid catalog) from the source tree it was built in.
    want=$(cat .gpu/srcdir)
    if [ -n "$want" ] && [ "$want" != "$PWD" ] && [ ! -e "$want" ]; then
        mkdir -p "$(dirname "$want")" && ln -s "$PWD" "$want"
    fi
else
    echo "== build (release)"
    if ! cmake --preset release >/dev/null || ! cmake --build build-release -j "$(nproc)" >/dev/null; then
        echo "build failed"
        exit 1
    fi
    H=$PWD/build-release/houston
fi
"$H" --version || { echo "houston does not run here"; exit 1; }
nvml=$(ldconfig -p | awk '/libnvidia-ml\.so\.1 / {print $NF; exit}')
echo "NVML: ${nvml:-not in the ldconfig cache}"
nvml_args=()
[ -n "$nvml" ] && nvml_args=(--nvml-lib "$nvml")

echo "== agent --once (real NVML)"
timeout 60 "$H" agent --once --kmsg /dev/kmsg --log-level info "${nvml_args[@]}" >"$R/metrics.txt" 2>"$R/once.log"
echo "exit $?"
cat "$R/once.log"

echo "== agent daemon, 12 s"
timeout 20 "$H" agent --listen 127.0.0.1:19499 --interval 2 --log-level debug --step-socket off \
    "${nvml_args[@]}" 2>"$R/agent.log" &
pid=$!
sleep 12
curl -fsS http://127.0.0.1:19499/metrics >"$R/metrics-daemon.txt" || echo "curl failed"
kill -TERM $pid
wait $pid
echo "daemon exit $?"

echo "== check"
timeout 60 "$H" check -v "${nvml_args[@]}" >"$R/check.txt" 2>&1
echo "exit status $?" >>"$R/check.txt"
cat "$R/check.txt"
nvidia-smi -q -x >"$R/nvidia-smi.xml" 2>/dev/null || true

echo "== summary"
{
    echo "families: $(grep -c '^# TYPE' "$R/metrics.txt")"
    echo "series: $(grep -vc '^#' "$R/metrics.txt")"
    echo "DCGM families the fake serves and this GPU does not:"
    fake=.gpu/fakenvml/libnvidia-ml.so.1
    [ -e "$fake" ] || fake=build-release/fakenvml/libnvidia-ml.so.1
    if [ -e "$fake" ]; then
        HN_FAKENVML_STATE=/dev/null "$H" agent --once --kmsg /dev/null --nvml-lib "$fake" 2>/dev/null |
            awk '/^# TYPE DCGM/ {print $3}' | sort >"$R/fake-families"
        awk '/^# TYPE DCGM/ {print $3}' "$R/metrics.txt" | sort >"$R/real-families"
        comm -23 "$R/fake-families" "$R/real-families"
    else
        echo "(no fake NVML here: compare with tests/fixtures offline)"
    fi
    echo "not supported (from the log):"
    grep -o '[A-Za-z_]* is not supported[^;]*' "$R/once.log" | sort | uniq -c
} | tee "$R/summary.txt"

echo "== jobs: MFU and a straggler on real training (bench/gpu/jobs_check.py)"
# GPU_JOBS_ARGS: more jobs_check.py arguments (bench/gpu/README.md shows a CPU run).
# shellcheck disable=SC2086
PYTHONUNBUFFERED=1 timeout 420 "${PYTHON:-python3}" bench/gpu/jobs_check.py --houston "$H" \
    --out "$R/jobs" --work /tmp/houston-gpu-jobs --agent-args "${HN_AGENT_ARGS:-${nvml_args[*]}}" ${GPU_JOBS_ARGS:-}
echo "jobs_check exit $?"
cp /tmp/houston-gpu-jobs/*.log "$R/jobs/" 2>/dev/null
cp "$R/jobs/results.json" "$OUT/" 2>/dev/null
tar -czf "$OUT/gpu-check.tgz" -C "$R" . && rm -rf "$R"
ls -la "$OUT"
