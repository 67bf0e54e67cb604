#!/usr/bin/env bash
# bench/step: what one step report costs a training process (hn_step_report) against a StatsD
# metric over UDP, in the same run. Appends the result to bench/results/step.md with date,
# commit and machine. Uses the release build.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=bench/record.sh
source bench/record.sh
B=${BUILD:-build-release}
[ -x "$B/bench/step/bench_step" ] || cmake --build "$B" --target bench_step >/dev/null
out=$("$B/bench/step/bench_step" "${BENCH_STEP_REPORTS:-200000}")
echo "$out"
record_fenced bench/results/step.md "$out"
echo "bench/step: appended to bench/results/step.md"
