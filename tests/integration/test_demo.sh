#!/usr/bin/env bash
# `make demo` (scripts/demo.sh) runs to the end: the agent serves, the injected Xid 79 shows on
# /metrics and `houston check` reports it with exit status 1.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
need curl
out=$(HOUSTON=${HOUSTON:-$HN_BUILD_DIR/houston} FAKENVML=$HN_FAKENVML \
    DEMO_LISTEN=127.0.0.1:${HN_TEST_DEMO_PORT:-19405} DEMO_DURATION=0.1 \
    timeout 60 bash "$HN_SOURCE_DIR/scripts/demo.sh" 2>&1)
check_eq "demo exits 0" 0 $?
check "serves series" grep -qE 'serving [0-9]+ series' <<<"$out"
check "shows the injected Xid on /metrics" grep -q 'DCGM_FI_DEV_XID_ERRORS{gpu="3",...} 79' <<<"$out"
check "houston check names it" grep -q 'houston: xid 79 (ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS)' <<<"$out"
check "houston check exits 1" grep -q 'exit status 1' <<<"$out"
[ "$HN_FAIL" -eq 0 ] || printf '%s\n' "$out"
finish
