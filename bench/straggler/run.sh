#!/usr/bin/env bash
# bench/straggler: the straggler detector (src/jobs/straggler.c) against NVIDIA Resiliency
# Extension's relative performance score and GREYHOUND's sliding-window rule, on the same
# generated step times with known truth (bench/straggler/bench_straggler.c says how they are
# made and scored). Builds the release tree if needed (BUILD, default build-release, the tree
# `make release` makes), runs the full bench (about 30 s of one core), prints its tables and
# appends them to bench/results/straggler.md with date, commit and machine.
# BENCH_STRAGGLER_ARGS passes flags through (--quick for a short run, --seed N).
# bench/straggler/oracle_bound.py computes what an oracle that knows each onset could find in
# time (the results file's header has its table); straggler_bound (straggler_bound.c, built
# with the benches) what a detector that knows everything but the onset could find at a given
# false-alarm rate per rank-step; baseline_error (baseline_error.c) how far a rank's baseline
# can be from its true normal under the generator's drift, for several smoothings.
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

Produced by `bash bench/straggler/run.sh` (release build). bench/straggler/bench_straggler.c
says what is generated and how the three detectors are scored; docs/straggler.md reads the
figures. One entry per run, newest last.
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
