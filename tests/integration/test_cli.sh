#!/usr/bin/env bash
# The verb table: every verb listed by `houston help` answers `houston help VERB` and
# `houston VERB --help` with its usage; unknown verbs and no verb are usage errors (exit 2).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
HOUSTON=${HOUSTON:-$HN_BUILD_DIR/houston}

verbs=$("$HOUSTON" help | awk '/^verbs:/ {on=1; next} on && NF {print $1} on && !NF {exit}')
for v in agent check control status nodes events drain resume approve jobs mfu straggler tail \
    version help; do
    check "houston help lists $v" grep -qx "$v" <<<"$verbs"
done
for v in $verbs; do
    out=$("$HOUSTON" help "$v")
    check "houston help $v (exit $?)" grep -q "^usage: houston $v" <<<"$out"
    out=$("$HOUSTON" "$v" --help)
    check "houston $v --help (exit $?)" grep -q "^usage: houston $v" <<<"$out"
done
check_eq "houston version" "houston $(sed -n 's/^project(houston VERSION \([0-9.]*\).*/\1/p' "$HN_SOURCE_DIR/CMakeLists.txt")" "$("$HOUSTON" version)"
"$HOUSTON" frobnicate 2>/dev/null
check_eq "unknown verb exits 2" 2 $?
"$HOUSTON" 2>/dev/null
check_eq "no verb exits 2" 2 $?
"$HOUSTON" help frobnicate 2>/dev/null
check_eq "help for an unknown verb exits 2" 2 $?
finish
