#!/usr/bin/env bash
# bench/step: what one step report costs a training process (hn_step_report) against a StatsD
# metric over UDP, in the same run. Appends the result to bench/results/step.md with date,
# commit and machine. Uses the release build.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build-release}
[ -x "$B/bench/step/bench_step" ] || cmake --build "$B" --target bench_step >/dev/null
out=$("$B/bench/step/bench_step" "${BENCH_STEP_REPORTS:-200000}")
echo "$out"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n1)
{
    echo
    echo "## $(date -u +%Y-%m-%d) commit $commit"
    echo
    echo "Machine: $(nproc) cores, ${cpu:-unknown CPU}."
    echo
    echo '```'
    echo "$out"
    echo '```'
} >>bench/results/step.md
echo "bench/step: appended to bench/results/step.md"
