#!/usr/bin/env bash
# The example alerting rules (examples/prometheus/houston-jobs.rules.yml) through Debian's
# promtool: they load, their unit test (tests/prometheus/houston-jobs.test.yml: a stalled job
# alerts, one in an announced checkpoint save does not, a long save does, a straggler does
# after 5 minutes) passes, and every metric they use is one the controller exports and
# docs/metrics.md documents.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
need promtool
rules=$HN_SOURCE_DIR/examples/prometheus/houston-jobs.rules.yml
tests=$HN_SOURCE_DIR/tests/prometheus/houston-jobs.test.yml

out=$(promtool check rules "$rules" 2>&1)
check "promtool check rules: 3 rules ($(tail -1 <<<"$out" | sed 's/^ *//'))" \
    grep -q 'SUCCESS: 3 rules found' <<<"$out"
out=$(cd "$(dirname "$tests")" && promtool test rules "$(basename "$tests")" 2>&1)
if grep -q '^  SUCCESS' <<<"$out"; then
    pass "promtool test rules passes"
else
    fail "promtool test rules: $out"
fi

names=$(grep -o 'houston_[a-z_]*' "$rules" | sort -u)
check "the rules use metrics ($(wc -w <<<"$names"))" test -n "$names"
for n in $names; do
    check "$n: exported by the controller (src/control/api.c)" \
        grep -q "\"$n\"" "$HN_SOURCE_DIR/src/control/api.c"
    check "$n: documented in docs/metrics.md" grep -q "^| \`$n\`" "$HN_SOURCE_DIR/docs/metrics.md"
done

finish
