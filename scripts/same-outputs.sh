#!/usr/bin/env bash
# same-outputs.sh: shows that a change left houston's decisions as they were, by recording what
# a build decides on fixed inputs and comparing two recordings byte for byte.
#
#   scripts/same-outputs.sh record DIR [HOUSTON]   record with HOUSTON (default
#                                                  build-release/houston) into DIR
#   scripts/same-outputs.sh compare DIR1 DIR2      diff two recordings; exit 1 if they differ
#   scripts/same-outputs.sh REV                    build REV (release preset) in a worktree,
#                                                  record it and this tree's release build,
#                                                  compare (the usual use: REV = main's tip
#                                                  before a refactor)
#
# What is recorded:
#   sim/       `houston sim --json` and `--timeline` for each scenarios/*.conf, and
#              `--policy all --json` at seeds 1 and 2 (CPU time dropped: it is not a decision);
#   straggler/ `houston straggler --csv` on every step-time fixture (tests/fixtures/step-times);
#   slurm/     with --slurm (or HN_SAME_SLURM=1): the events and actions of the controller in
#              each Slurm-backed integration test (tests/integration/lib/control.sh dumps them
#              when HN_GOLDEN_DIR is set), normalised (golden_events below). These tests run
#              real processes against wall time, so their timing-dependent findings are left
#              out: see golden_events.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

usage() {
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
}

# The Slurm-backed controller tests whose events are compared.
slurm_tests=(test_control test_control_guard test_control_hetjob test_control_jobs
    test_tail_requeue)

# golden_events IN OUT: the events of one test, oldest first, one line each, without the
# fields that are wall-clock time (time, action results that quote it) or ids that follow
# from how many events came before (id, action_id). Findings whose count or figures follow
# the wall clock of a loaded machine (a silent agent, the periodic peer rules' streaks, a hang
# decided against wall time) keep their rule and node but not their text.
golden_events() {
    jq -c '.events | sort_by(.id) | .[] |
        del(.id, .time, .action_id, .result) |
        if (.rule // "" | test("^(node_silent|hang|hang_unseen|step_time_mismatch)$"))
        then del(.detail, .evidence) else . end' "$1" >"$2"
}

record() {
    local dir=$1 hn=${2:-$root/build-release/houston}
    [ -x "$hn" ] || {
        echo "same-outputs: no $hn (make release builds it)" >&2
        exit 2
    }
    mkdir -p "$dir/sim" "$dir/straggler"
    local conf name seed
    for conf in scenarios/*.conf; do
        name=$(basename "$conf" .conf)
        "$hn" sim --scenario "$conf" --json | jq -S 'del(.cpu_seconds)' >"$dir/sim/$name.json"
        "$hn" sim --scenario "$conf" --timeline | sed 's/, [0-9.]* s of CPU$/, CPU time dropped/' \
            >"$dir/sim/$name.timeline"
    done
    for seed in 1 2; do
        "$hn" sim --policy all --seed "$seed" --json |
            jq -S 'del(.cpu_seconds) | .policies |= map_values(del(.cpu_seconds))' \
                >"$dir/sim/all-seed$seed.json"
    done
    local fx=tests/fixtures/step-times f
    local ali=(--step-col time --rank-col worker --seconds-col batch_time_norm)
    for f in "$fx"/job_*.csv; do
        "$hn" straggler --csv "$f" "${ali[@]}" >"$dir/straggler/$(basename "$f" .csv).jsonl"
    done
    for f in "$fx"/h200/*.csv; do
        name=$(basename "$f" .csv)
        "$hn" straggler --csv "$f" >"$dir/straggler/h200-$name.jsonl"
        "$hn" straggler --csv "$f" --seconds-col dur --comm-col comm \
            >"$dir/straggler/h200-$name-comm.jsonl"
    done
    if [ "${HN_SAME_SLURM:-0}" = 1 ]; then
        mkdir -p "$dir/slurm"
        local t raw
        for t in "${slurm_tests[@]}"; do
            raw=$(mktemp -d)
            # Other checkouts' integration tests use the same ports: one at a time.
            flock /tmp/houston-it.lock env HN_GOLDEN_DIR="$raw" HOUSTON="$hn" HN_SOURCE_DIR="$root" \
                HN_BUILD_DIR="$root/build-release" \
                HN_FIXTURES="$root/tests/fixtures" \
                HN_FAKENVML="$root/build-release/fakenvml/libnvidia-ml.so.1" \
                bash "tests/integration/$t.sh" >"$dir/slurm/$t.log" 2>&1 ||
                echo "same-outputs: $t failed with $hn (its log: $dir/slurm/$t.log)" >&2
            for f in "$raw"/*.json; do
                [ -s "$f" ] && golden_events "$f" "$dir/slurm/$t.events"
            done
            rm -rf "$raw"
        done
    fi
}

compare() {
    if diff -r -x '*.log' "$1" "$2" >/dev/null; then
        echo "same-outputs: identical ($(find "$1" -type f ! -name '*.log' | wc -l) files)"
        return 0
    fi
    echo "same-outputs: outputs differ:" >&2
    diff -r -x '*.log' "$1" "$2" | head -n 60 >&2
    return 1
}

[ $# -ge 1 ] || usage
case "$1" in
record)
    [ $# -ge 2 ] || usage
    record "$2" "${3:-}"
    ;;
compare)
    [ $# -eq 3 ] || usage
    compare "$2" "$3"
    ;;
-h | --help) usage ;;
--slurm)
    [ $# -eq 2 ] || usage
    HN_SAME_SLURM=1 exec "$0" "$2"
    ;;
*)
    rev=$(git rev-parse --verify "$1^{commit}") || usage
    out=$(mktemp -d /tmp/same-outputs.XXXXXX)
    git worktree add --detach "$out/base" "$rev" >/dev/null
    trap 'git worktree remove --force "$out/base" >/dev/null 2>&1 || true' EXIT
    (cd "$out/base" && cmake --preset release >/dev/null && cmake --build build-release -j "$(nproc)" >/dev/null)
    make -s release >/dev/null
    record "$out/before" "$out/base/build-release/houston"
    record "$out/after" "$root/build-release/houston"
    echo "same-outputs: $rev against the working tree ($out)"
    compare "$out/before" "$out/after"
    ;;
esac
