# Sourced by integration tests: assertions, waiting, process cleanup.
# Every test prints what it checks; a failed check exits non-zero with the reason.

export LC_ALL=C
HN_PASS=0
HN_FAIL=0
HN_PIDS=()

say() { printf '%s\n' "$*"; }
fail() {
    printf 'FAIL: %s\n' "$*"
    HN_FAIL=$((HN_FAIL + 1))
}
pass() {
    printf 'ok: %s\n' "$*"
    HN_PASS=$((HN_PASS + 1))
}
# check DESCRIPTION COMMAND...: runs COMMAND, passes if it exits 0.
check() {
    local what=$1
    shift
    if "$@"; then pass "$what"; else fail "$what"; fi
}
# check_eq DESCRIPTION EXPECTED ACTUAL
check_eq() {
    if [ "$2" = "$3" ]; then pass "$1 ($3)"; else fail "$1: expected '$2', got '$3'"; fi
}
# jqe FILTER [FILE]: `jq -e FILTER` on FILE (or stdin) that also fails when there is no input
# at all. Debian 12's jq 1.6 exits 0 then, so that `curl -fsS URL | jq -e ...` passed whenever
# the request failed (a 404 for a job not there yet, a controller down). Exported: the
# `bash -c "... | jqe ..."` of wait_for has it too. For "there is none", test that a count is
# 0 rather than negating jqe (which a failed request would pass).
jqe() {
    local in
    in=$(cat -- "${2:-/dev/stdin}") || return 1
    if [ -z "${in//[[:space:]]/}" ]; then
        echo "jqe: no input for $1" >&2
        return 1
    fi
    jq -e "$1" <<<"$in"
}
export -f jqe
need() {
    for cmd in "$@"; do
        if ! command -v "$cmd" >/dev/null 2>&1; then
            echo "FAIL: '$cmd' is not installed: run scripts/install-deps.sh (make test does)" >&2
            exit 1
        fi
    done
}
# wait_for SECONDS COMMAND...: retries COMMAND every 0.1 s until it succeeds or time runs out
# (whole SECONDS; counted in microseconds, as bash's SECONDS would give up to one second early).
wait_for() {
    local deadline=$((${EPOCHREALTIME/./} + $1 * 1000000))
    shift
    while ! "$@" >/dev/null 2>&1; do
        [ "${EPOCHREALTIME/./}" -ge "$deadline" ] && return 1
        sleep 0.1
    done
    return 0
}
# spawn_bg LOGFILE COMMAND...: starts COMMAND in the background, killed at exit. finish
# prints the log's tail when a check failed, so that a CI failure shows why a process died.
HN_LOGS=()
spawn_bg() {
    local log=$1
    shift
    "$@" >"$log" 2>&1 &
    HN_PIDS+=($!)
    HN_LAST_PID=$!
    HN_LOGS+=("$log")
}
hn_cleanup() {
    local pid
    for pid in "${HN_PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${HN_PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
}
# finish: prints the closing line and exits with the test's status.
finish() {
    local log
    if [ "$HN_FAIL" -ne 0 ]; then
        for log in "${HN_LOGS[@]}"; do
            [ -f "$log" ] || continue
            echo "--- last lines of $log"
            tail -n 30 "$log"
        done
    fi
    echo "$HN_PASS passed, $HN_FAIL failed"
    [ "$HN_FAIL" -eq 0 ]
}
