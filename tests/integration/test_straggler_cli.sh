#!/usr/bin/env bash
# `houston straggler --csv`: the two real Alibaba PAI jobs (tests/fixtures/step-times) read
# directly with column options, a generated job in the default columns in shuffled order and
# from stdin, malformed rows counted and skipped, phase times (--comm-col), a whole-job
# slowdown, and the usage errors (exit 2).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"

HOUSTON=${HOUSTON:-$HN_BUILD_DIR/houston}
work=$(mktemp -d /tmp/houston-straggler.XXXXXX)
trap 'rm -rf "$work"' EXIT
fx=$HN_FIXTURES/step-times
ali=(--step-col time --rank-col worker --seconds-col batch_time_norm)

# Job 1: worker 6 straggles from iteration 1811 to 1941.
out=$("$HOUSTON" straggler --csv "$fx/job_1_norm.csv" "${ali[@]}" 2>"$work/err")
check_eq "job 1: exit 0" 0 $?
check_eq "job 1: one persistent detection" 1 "$(grep -c '"kind":"persistent"' <<<"$out")"
line=$(grep '"kind":"persistent"' <<<"$out")
check "job 1: it is rank 6" grep -q '^{"rank":6,' <<<"$line"
onset=$(sed -n 's/.*"onset_step":\([0-9]*\).*/\1/p' <<<"$line")
check "job 1: onset $onset in 1811..1941" test "${onset:-0}" -ge 1811 -a "${onset:-0}" -le 1941
check "job 1: the line has detect_step and slowdown" grep -q '"detect_step":[0-9]*,"slowdown":0\.[0-9]*' <<<"$line"
check_eq "job 1: nothing about other ranks" "" "$(grep -v '^{"rank":6,' <<<"$out")"
check "job 1: every line is JSON" python3 -c 'import json,sys; [json.loads(l) for l in sys.stdin]' <<<"$out"
check_eq "job 1: nothing on stderr" "" "$(cat "$work/err")"

# The same with the baseline smoothing of before alpha_noise, set on the command line: the same
# answer.
out=$("$HOUSTON" straggler --csv "$fx/job_1_norm.csv" "${ali[@]}" --baseline-alpha 0.015625 \
    --alpha-noise 1 2>"$work/err")
check "job 1, --alpha-noise 1: rank 6 only" \
    test "$(grep -c '"kind":"persistent"' <<<"$out")" = 1 -a -z "$(grep -v '^{"rank":6,' <<<"$out")"

# Job 2: stable, constant offsets between workers; one duplicate row.
out=$("$HOUSTON" straggler --csv "$fx/job_2_norm.csv" "${ali[@]}" 2>"$work/err")
check_eq "job 2: exit 0" 0 $?
check_eq "job 2: prints nothing" "" "$out"
check "job 2: the duplicate row is counted on stderr" grep -q 'skipped 1 duplicate rows' "$work/err"

# A generated job in the default columns (step,rank,seconds plus an extra column), rows
# shuffled, read from stdin: rank 3 is 40% slower from step 300; two malformed rows.
awk 'BEGIN {
    srand(7); print "host,step,rank,seconds";
    for (t = 0; t < 600; t++)
        for (r = 0; r < 8; r++) {
            v = 1.7 * (1 + 0.02 * (rand() + rand() + rand() - 1.5) * 2);
            if (r == 3 && t >= 300) v *= 1.4;
            printf "n%d,%d,%d,%.5f\n", r, t, r, v
        }
    print "n9,12,x,1.0"; print "n9,13,4";
}' >"$work/job.csv"
{ head -n1 "$work/job.csv"; tail -n +2 "$work/job.csv" | sort -t, -k4 -r; } >"$work/shuffled.csv"
out=$("$HOUSTON" straggler --csv - <"$work/shuffled.csv" 2>"$work/err")
check_eq "stdin, shuffled: exit 0" 0 $?
check_eq "stdin, shuffled: one detection" 1 "$(wc -l <<<"$out")"
check "stdin, shuffled: rank 3, persistent, onset near 300" \
    grep -qE '^\{"rank":3,"onset_step":(29[89]|30[0-2]),"detect_step":30[0-5],"slowdown":0\.[34].*"kind":"persistent"' <<<"$out"
check "malformed rows counted with the first reason" \
    grep -q 'skipped 2 malformed rows (first: line [0-9]*: the rank is not a whole number)' "$work/err"

# Synchronous training: every rank's wall step time is the slowest rank's, so the straggler
# shows only once the collective wait is subtracted (--comm-col). Rank 2 computes 30% longer
# from step 200; the others wait for it.
awk 'BEGIN {
    srand(5); print "step,rank,dur,comm";
    for (t = 0; t < 400; t++) {
        max = 0;
        for (r = 0; r < 8; r++) {
            c[r] = 1 + 0.02 * (rand() - 0.5) * 2;
            if (r == 2 && t >= 200) c[r] *= 1.3;
            if (c[r] > max) max = c[r];
        }
        for (r = 0; r < 8; r++) printf "%d,%d,%.5f,%.5f\n", t, r, max + 0.2, max + 0.2 - c[r]
    }
}' >"$work/sync.csv"
out=$("$HOUSTON" straggler --csv "$work/sync.csv" --seconds-col dur)
check_eq "synchronous job read: exit 0" 0 $?
check_eq "wall step times of a synchronous job: no rank stands out" "" "$(grep -v '"rank":"all"' <<<"$out")"
out=$("$HOUSTON" straggler --csv "$work/sync.csv" --seconds-col dur --comm-col comm)
check "step minus collective wait: rank 2 from step 200" \
    grep -qE '^\{"rank":2,"onset_step":(19[89]|20[0-2]),.*"kind":"persistent"' <<<"$out"
check_eq "step minus collective wait: only rank 2" "" "$(grep -v '^{"rank":2,' <<<"$out")"

# A whole-job slowdown is the job's, not a rank's.
awk 'BEGIN {
    srand(9); print "step,rank,seconds";
    for (t = 0; t < 400; t++)
        for (r = 0; r < 16; r++)
            printf "%d,%d,%.5f\n", t, r, (t >= 200 ? 1.3 : 1) * (1 + 0.02 * (rand() - 0.5) * 2)
}' >"$work/jobslow.csv"
out=$("$HOUSTON" straggler --csv "$work/jobslow.csv")
check "whole-job slowdown: one job_slowdown line with rank all" \
    grep -qE '^\{"rank":"all","onset_step":(19[89]|20[0-2]),.*"kind":"job_slowdown"' <<<"$out"
check_eq "whole-job slowdown: no rank blamed" "" "$(grep -v '"rank":"all"' <<<"$out")"

# Usage errors and unreadable input: exit 2 with a reason.
expect_2() {
    local what=$1
    shift
    "$HOUSTON" straggler "$@" >"$work/out" 2>"$work/err"
    local rc=$?
    if [ "$rc" = 2 ] && grep -q '^houston straggler: ' "$work/err" && [ ! -s "$work/out" ]; then
        pass "$what: exit 2, $(head -n1 "$work/err")"
    else
        fail "$what: expected exit 2 and a reason, got exit $rc: $(cat "$work/err")"
    fi
}
expect_2 "no --csv"
expect_2 "missing file" --csv "$work/nope.csv"
expect_2 "a directory" --csv "$work"
expect_2 "missing column" --csv "$fx/job_1_norm.csv"
expect_2 "missing --comm-col column" --csv "$work/job.csv" --comm-col wait
expect_2 "bad threshold" --csv "$work/job.csv" --threshold x
expect_2 "big threshold out of range" --csv "$work/job.csv" --big-threshold 0
expect_2 "warm-up out of range" --csv "$work/job.csv" --warmup 2
expect_2 "alpha-noise out of range" --csv "$work/job.csv" --alpha-noise 0
check "it names the flag and the range" grep -qF -- "--alpha-noise: '0' is not a number in [1e-06, 1]" \
    "$work/err"
expect_2 "fractional warm-up" --csv "$work/job.csv" --warmup 8.5
expect_2 "baseline-alpha out of range" --csv "$work/job.csv" --baseline-alpha 0.6
expect_2 "unknown option" --csv "$work/job.csv" --frobnicate
: >"$work/empty.csv"
expect_2 "empty input" --csv "$work/empty.csv"
# Times that are each valid but 600 orders of magnitude apart: the ratios overflow, and the
# line says null where it printed inf (not JSON).
{
    echo step,rank,seconds
    for s in $(seq 80); do
        for r in 0 1 2 3 4 5; do
            v=1e-300
            [ "$r" = 5 ] && [ "$s" -gt 40 ] && v=1e300
            echo "$s,$r,$v"
        done
    done
} >"$work/huge.csv"
out=$("$HOUSTON" straggler --csv "$work/huge.csv" 2>"$work/err")
check_eq "ratios beyond a double: exit 0" 0 $?
check "ratios beyond a double: rank 5 found, every line JSON (null, not inf)" \
    python3 -c 'import json,sys; d=[json.loads(l) for l in sys.stdin]; assert d and d[0]["rank"] == 5 and d[0]["slowdown"] is None' <<<"$out"
"$HOUSTON" straggler --help >"$work/out"
check_eq "--help: exit 0" 0 $?
check "--help: usage line" grep -q '^usage: houston straggler --csv' "$work/out"
finish
