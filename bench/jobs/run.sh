#!/usr/bin/env bash
# bench/jobs: the controller's job table and store reads with thousands of jobs, each against a
# peer in the same run (bench_jobs.c says which). Appends the result to bench/results/jobs.md
# with date, commit and machine. Uses the release build.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build-release}
[ -x "$B/bench/jobs/bench_jobs" ] || cmake --build "$B" --target bench_jobs >/dev/null
out=$("$B/bench/jobs/bench_jobs" "${BENCH_JOBS:-4096}")
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
} >>bench/results/jobs.md
echo "bench/jobs: appended to bench/results/jobs.md"
