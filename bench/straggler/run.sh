#!/usr/bin/env bash
# bench/straggler: the straggler detector (src/jobs/straggler.c) against NVIDIA Resiliency
# Extension's relative performance score and GREYHOUND's sliding-window rule, on the same
# generated step times with known truth (bench/straggler/bench_straggler.c says how they are
# made and scored). Builds the release tree if needed (BUILD, default build-release, the tree
# `make release` makes), runs the full bench (about 30 s of one core), prints its tables and
# appends them to bench/results/straggler.md with date, commit and machine.
# BENCH_STRAGGLER_ARGS passes flags through (--quick for a short run, --seed N).
# bench/straggler/oracle_bound.py computes what an oracle that knows each onset could find in
# time (the results file's header has its table).
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build-release}
if [ ! -f "$B/CMakeCache.txt" ]; then
    if [ "$B" != build-release ]; then
        echo "bench: $B is not a configured build tree" >&2
        exit 1
    fi
    cmake --preset release
fi
cmake --build "$B" -j "$(nproc)" --target bench_straggler >/dev/null
out=$(mktemp /tmp/houston-bench-straggler.XXXXXX)
trap 'rm -f "$out"' EXIT

# shellcheck disable=SC2086 # word splitting of the pass-through flags is intended
timeout 600 "$B/bench/straggler/bench_straggler" ${BENCH_STRAGGLER_ARGS:-} >"$out"
sed -n '/^| detector /,$p' "$out"

commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git status --porcelain --untracked-files=no -- . ':!bench/results' 2>/dev/null)" ] || commit="$commit (with uncommitted changes)"
model=$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -n1)
machine="$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), ${model:-unknown CPU}"
get() { sed -n "s/^$1=//p" "$out"; }

mkdir -p bench/results
results=bench/results/straggler.md
[ -s "$results" ] || cat >"$results" <<'HEAD'
# bench/straggler results

Produced by `bash bench/straggler/run.sh` (release build). One run scores three detectors on
the same generated jobs (bench/straggler/bench_straggler.c): houston's (src/jobs/straggler.c,
default thresholds), NVIDIA Resiliency Extension's relative performance score (fastest rank's
median over this rank's median in a 10-step report window, flagged below 0.75) and GREYHOUND's
sliding-window rule (a rank's median over its last 10 steps more than 10% above the median of
all ranks'). Jobs of 8 to 16,384 ranks; per-rank compute times with 1-3% Student-t jitter, a
right tail, constant heterogeneity of a few percent, slow drift, garbage-collection pauses,
checkpoint stalls and whole-job slowdowns; 1-3 injected slowdowns of 2-50% per job on one rank
or a node of ranks. "Steps to detect" is detect step minus onset step (0: the first slow step
fired). A false alarm is an alarm on a rank outside its injected episodes; a repeat is a second
alarm inside one. CPU per step: each detector alone on the same 300 pre-generated steps of a
16,384-rank job from a fresh start, thread CPU time, the fastest of five rounds in which the
detectors take turns. Ratios are houston's advantage (higher is better for houston; "(p95)"
compares the 95th percentile of steps to detect).

Goals: every slowdown of 10% or more found within 5 steps of onset, 5-10% within 10 steps, at
most 1 false alarm per million rank-steps, under 2 ms per step at 16,384 ranks, better than
both baselines on every column. docs/straggler.md explains the detector and the misses.

Where houston misses a goal (see the "goal" table of each run, and docs/straggler.md): the 5-10%
and 10%+ time goals are missed mostly at high jitter (see each run's jitter table). At 3%
Student-t jitter a 5% slowdown is about two robust noise units while the jitter and its tails
put about one report in twenty above that, so ten reports cannot carry the evidence that one
false alarm per million rank-steps allows; a lower threshold buys a point of detection for
several times the false alarms. Against NVRx, houston raises more false alarms (both within the
goal) and spends more CPU per step: NVRx looks once per 10-step window and only at slowdowns of
a third or more, houston weighs every rank at every step. Most of houston's false alarms are
excursions that contain a spike, a garbage-collection pause or its spill into the next step,
followed by a few reports in the jitter's tail: a copy of the bench that prints them, built
outside CMake, counted 46 on seed 1 and 63 on seed 2 (the table: 44 and 60; the difference was
not chased down), of which 27 and 45 peak at 20% or more and 18 and 24 at 50% or more. Not yet
acted on.
HEAD
{
    echo
    echo "## $(date -u +%Y-%m-%d) commit $commit"
    echo
    echo "Machine: $machine. $(get jobs) jobs, $(get rank_steps) rank-steps${BENCH_STRAGGLER_ARGS:+, flags: $BENCH_STRAGGLER_ARGS}."
    echo
    sed -n '/^| detector /,$p' "$out"
} >>"$results"
echo "bench: results appended to $results"
