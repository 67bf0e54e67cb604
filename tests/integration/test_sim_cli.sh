#!/usr/bin/env bash
# houston sim from the command line: the JSON contract (ettr, mfu, effective_mfu as fractions,
# lost_gpu_hours by cause, interruptions), determinism for a seed, --policy all, scenario
# files (flags override them) and clear errors.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
need jq
HOUSTON=${HOUSTON:-$HN_BUILD_DIR/houston}
work=$(mktemp -d /tmp/houston-sim.XXXXXX)
trap 'rm -rf "$work"' EXIT

small=(--gpus 512 --spares 8 --days 10 --node-failure-rate 0.05 --straggler-rate 0.01)
"$HOUSTON" sim "${small[@]}" --seed 3 --json >"$work/a.json"
check_eq "exit 0" 0 $?
check "the top level has ettr, mfu, effective_mfu (fractions), lost_gpu_hours, interruptions" \
    jqe '(.ettr > 0 and .ettr <= 1) and (.mfu > 0 and .mfu <= 1) and
           (.effective_mfu > 0 and .effective_mfu <= .mfu) and
           (.lost_gpu_hours | has("failure") and has("straggler") and has("hang")) and
           (.interruptions | type == "number")' "$work/a.json"
check "faults happened and the brain found them" jqe '.failures > 5 and .detected > 5' "$work/a.json"
check "each detection says what, where and how fast" jqe \
    '(.detections | length) == .detected and all(.detections[]; (.kind | test("^(fault|precursor|slowdown)")) and .latency_s >= 0 and .node >= 0)' \
    "$work/a.json"
"$HOUSTON" sim "${small[@]}" --seed 3 --json >"$work/b.json"
check "the same seed gives the same run" \
    bash -c "diff <(jq -S 'del(.cpu_seconds)' $work/a.json) <(jq -S 'del(.cpu_seconds)' $work/b.json)"
"$HOUSTON" sim "${small[@]}" --seed 4 --json >"$work/c.json"
check "another seed, another run" \
    bash -c "jqe .mfu $work/c.json >/dev/null && ! diff -q <(jq -S 'del(.cpu_seconds)' $work/a.json) <(jq -S 'del(.cpu_seconds)' $work/c.json)"

"$HOUSTON" sim "${small[@]}" --policy all --json >"$work/all.json"
check "--policy all: each policy, and the default's result on top" \
    jqe '(.policies | keys) == ["predictive","reactive","straggler"] and .ettr == .policies.straggler.ettr' \
    "$work/all.json"
check "replacing stragglers buys MFU" \
    jqe '.policies.straggler.mfu > .policies.reactive.mfu' "$work/all.json"
"$HOUSTON" sim "${small[@]}" --policy all >"$work/all.txt"
check_eq "human output: three policies" 3 "$(grep -c '^policy ' "$work/all.txt")"

cat >"$work/s.conf" <<CONF
# a scenario
gpus = 256
days = 2
ckpt-interval = 30m
straggler-rate = 0
CONF
"$HOUSTON" sim --scenario "$work/s.conf" --days 1 --json >"$work/s.json"
check "a scenario file, a flag overriding it" jqe '.simulated_days == 1 and .stragglers == 0' "$work/s.json"
check "the shipped scenarios load" "$HOUSTON" sim --scenario "$HN_SOURCE_DIR/scenarios/seed-gb200.conf" --days 1 --json
"$HOUSTON" sim --scenario "$HN_SOURCE_DIR/scenarios/llama3-16k.conf" --days 0.2 --json >"$work/l.json"
check "the Llama 3 scenario: 2,048 nodes less 64 spares" jqe '.job_gpu_hours == (1984 * 8 * 0.2 * 24)' "$work/l.json"
"$HOUSTON" sim --timeline "${small[@]}" >"$work/tl.txt"
check "the timeline says what happened" grep -q 'job 1001 starts on' "$work/tl.txt"

for bad in "--gpus 0" "--ckpt-interval -5m" "--policy magic" "--nope 1" "--days x"; do
    # shellcheck disable=SC2086
    "$HOUSTON" sim $bad 2>"$work/err" >/dev/null
    check_eq "houston sim $bad: exit 2" 2 $?
    check "... with a message" grep -q '^houston sim: ' "$work/err"
done
"$HOUSTON" sim --failures-file /nonexistent.csv 2>"$work/err"
check_eq "a missing failures file: exit 2" 2 $?
check "--help" bash -c "'$HOUSTON' sim --help | grep -q 'usage: houston sim'"
finish
