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
# Flag errors: one `houston VERB: ...` line on stderr, nothing on stdout, exit 2, whichever verb.
# usage_error VERB PATTERN ARGS...
usage_error() {
    local v=$1 pattern=$2
    shift 2
    local out err rc
    out=$("$HOUSTON" "$v" "$@" 2>"$tmp/err" </dev/null)
    rc=$?
    err=$(cat "$tmp/err")
    if [ $rc -eq 2 ] && [ -z "$out" ] && grep -Eqx "houston $v: $pattern" <<<"$err"; then
        pass "houston $v $*: usage error"
    else
        fail "houston $v $*: exit $rc, stdout '$out', stderr '$err'"
    fi
}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hn-cli-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
for v in $verbs; do
    case $v in version | help) continue ;; esac
    usage_error "$v" "unknown option '--frobnicate' \(try \`houston $v --help\`\)" --frobnicate
done
while read -r v flag a b; do
    usage_error "$v" "$flag given twice \('$a', then '$b'\)" "$flag" "$a" "$flag=$b"
done <<'EOF'
agent --interval 1 2
check --window 1 2
control --config a.conf b.conf
nodes --state ready new
events --limit 1 2
drain --reason a b
jobs --timeout 1 2
mfu --gpus 8 16
straggler --quorum 0.5 0.6
tail --job 1 2
demo --speed 2 3
sim --days 1 2
EOF
usage_error tail "--job needs a value \(the next argument is the option --follow\)" --job --follow
usage_error check "ambiguous option '--no-' \(--no-gpu, --no-ib\)" --no-
usage_error demo "--speed: bad value '0' \(try \`houston demo --help\`\)" --speed 0

check_eq "houston version" "houston $(sed -n 's/^project(houston VERSION \([0-9.]*\).*/\1/p' "$HN_SOURCE_DIR/CMakeLists.txt")" "$("$HOUSTON" version)"
"$HOUSTON" frobnicate 2>/dev/null
check_eq "unknown verb exits 2" 2 $?
"$HOUSTON" 2>/dev/null
check_eq "no verb exits 2" 2 $?
"$HOUSTON" help frobnicate 2>/dev/null
check_eq "help for an unknown verb exits 2" 2 $?
finish
