#!/usr/bin/env bash
# The table of test ports (lib/ports.sh): no two tests share a port and none reaches test_push's
# random ones; every test in the table takes its ports from it, and no test sets a port of its
# own; an override from the environment still wins, and an overlap would be found.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
. "$here/lib/ports.sh"

out=$(hn_ports_check)
check_eq "no two tests share a port" "" "$out"

for t in $(awk 'NF { print $1 }' <<<"$HN_PORTS_TABLE" | sort -u); do
    check "test_$t.sh takes its ports from the table" grep -qE "^hn_ports $t( |$)" "$here/test_$t.sh"
done
check_eq "no test sets a port default of its own" "" \
    "$(grep -nE 'PORT[A-Z0-9_]*:-[0-9]' "$here"/test_*.sh)"

check_eq "the table's default" 18095 "$(
    unset HN_TEST_DEMO_PORT
    hn_ports demo && echo "$HN_TEST_DEMO_PORT"
)"
check_eq "an override wins" 12345 "$(
    export HN_TEST_DEMO_PORT=12345
    hn_ports demo && echo "$HN_TEST_DEMO_PORT"
)"
check "a test not in the table is refused" bash -c ". '$here/lib/ports.sh'; ! hn_ports nosuch 2>/dev/null"
check "an overlap is found" bash -c ". '$here/lib/ports.sh'
    HN_PORTS_TABLE+=\$'\\nother HN_X 27003 1\\n'
    hn_ports_check | grep -q 'other HN_X (27003-27003) overlaps slurm_cluster HN_SLURM_NODE_PORT_BASE'"
finish
