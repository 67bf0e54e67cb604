#!/usr/bin/env bash
# bench/jobs: the controller's job table and store reads with thousands of jobs, each against a
# peer in the same run (bench_jobs.c says which). Appends the result to bench/results/jobs.md
# with date, commit and machine. Uses the release build.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/record.sh
source bench/record.sh
B=${BUILD:-build-release}
[ -x "$B/bench/jobs/bench_jobs" ] || cmake --build "$B" --target bench_jobs >/dev/null
out=$("$B/bench/jobs/bench_jobs" "${BENCH_JOBS:-4096}")
echo "$out"
record_fenced bench/results/jobs.md "$out"
echo "bench/jobs: appended to bench/results/jobs.md"
