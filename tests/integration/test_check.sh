#!/usr/bin/env bash
# `houston check` verdicts, one fault at a time, on the fake NVML, a copy of a real H100
# node's InfiniBand tree and kernel logs: each must give exit 1 and a reason line naming it;
# the healthy node exit 0 and no output; bad flags exit 2.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"

HOUSTON=${HOUSTON:-$HN_BUILD_DIR/houston}
work=$(mktemp -d /tmp/houston-check.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp -r "$HN_FIXTURES/sysfs-h100" "$work/sys"
: >"$work/empty.log"

# verdict STATE_LINES KMSG [extra flags]: runs the check, sets $out and $rc.
verdict() {
    printf '%b' "$1" >"$work/state"
    out=$(HN_FAKENVML_STATE=$work/state "$HOUSTON" check --nvml-lib "${nvml_lib:-$HN_FAKENVML}" \
        --sysfs-root "$work/sys" --kmsg "$2" --expect-gpus "${expect_gpus:-8}" "${@:3}" 2>"$work/err")
    rc=$?
}
# expect_fault DESCRIPTION REGEX STATE_LINES [KMSG [extra flags]]
expect_fault() {
    verdict "$3" "${4:-$work/empty.log}" "${@:5}"
    if [ "$rc" = 1 ] && grep -qE "^houston: $2" <<<"$out"; then
        pass "$1: exit 1, '$out'"
    else
        fail "$1: expected exit 1 and /^houston: $2/, got exit $rc, '$out' $(cat "$work/err")"
    fi
}

verdict "" "$work/empty.log"
check_eq "healthy node: exit 0" 0 "$rc"
check_eq "healthy node: no output" "" "$out"
verdict "" "$work/empty.log" --verbose
check "healthy --verbose says what it looked at" grep -q '^houston: healthy (8 GPUs, .*9 IB ports)' <<<"$out"

expect_fault "fewer GPUs than expected" "6 GPUs found, 8 expected" "count 6\n"
expect_fault "lost GPU" "GPU 4 .* is lost" "gpu 4 lost\n"
expect_fault "new uncorrectable ECC" "GPU 1 .* has 3 uncorrectable ECC errors" "gpu 1 ecc dbe_volatile 3\n"
expect_fault "row-remap failure" "GPU 6 .* row remapping failed" "gpu 6 remap failure 1\n"
expect_fault "retired pages at the limit" "GPU 2 .* has 63 retired pages" "gpu 2 retired dbe 63\n"
expect_fault "inactive NVLink" "GPU 0 .* NVLink 5 is inactive" "gpu 0 nvlink 5 down\n"
expect_fault "recovery action" "GPU 3 .* recovery action 2" "gpu 3 recovery_action 2\n"

printf '[%s] NVRM: Xid (PCI:0000:53:00): 48, pid=0, An uncorrectable double bit error (DBE) has been detected on GPU.\n' "$(date '+%a %b %e %H:%M:%S %Y')" >"$work/xid48.log"
expect_fault "fatal Xid in the kernel log" "xid 48 \(ROBUST_CHANNEL_GPU_ECC_DBE\) on PCI:0000:53:00" "" "$work/xid48.log"
printf '[%s] NVRM: Xid (PCI:0000:53:00): 13, pid=4242, Graphics Exception\n' "$(date '+%a %b %e %H:%M:%S %Y')" >"$work/xid13.log"
verdict "" "$work/xid13.log"
check_eq "Xid 13 (RESTART_APP) is not fatal: exit 0" 0 "$rc"
printf '<4>[  100.0] NVRM: Xid (PCI:0000:53:00): 79, pid=0, GPU has fallen off the bus.\n' >"$work/old.log"
verdict "" "$work/old.log" --window 10
# The line claims 100 s after boot; this machine has been up longer than 110 s.
check_eq "a fatal Xid older than --window is ignored" 0 "$rc"
verdict "" "$work/old.log" --window 1e9
check_eq "the same line within a wide window is fatal: exit 1" 1 "$rc"

ib_state=$work/sys/class/infiniband/mlx5_4/ports/1/state
cp "$ib_state" "$work/ib_state.orig"
echo "1: DOWN" >"$ib_state"
expect_fault "IB port not ACTIVE" "InfiniBand mlx5_4 port 1 is DOWN, not ACTIVE" ""
verdict "" "$work/empty.log" --no-ib
check_eq "--no-ib skips the IB check" 0 "$rc"
cp "$work/ib_state.orig" "$ib_state"

expect_fault "two faults: first named, count of the rest" "GPU 1 .*lost.*\(\+1 more\)$" "gpu 1 lost\ngpu 2 lost\n"
nvml_lib=/nonexistent/libnvidia-ml.so.1 verdict "" "$work/empty.log"
check_eq "missing NVML library: exit 1" 1 "$rc"
check "missing NVML library: says so" grep -q '^houston: NVML unavailable: cannot load NVML' <<<"$out"

expect_fault "fewer IB ports than expected" "9 InfiniBand/RoCE ports found, 10 expected" "" \
    "$work/empty.log" --expect-ib-ports 10
verdict "" "$work/no-such.log"
check_eq "unreadable kernel log: the check cannot run, exit 2" 2 "$rc"
check "unreadable kernel log: says so" grep -q '^houston: check failed to run: cannot read the kernel log' <<<"$out"
verdict "" "$work/empty.log" --xid-catalog "$work/no-such.csv"
check_eq "missing Xid catalog: exit 2" 2 "$rc"

expect_gpus=banana verdict "" "$work/empty.log"
check_eq "bad flag value: exit 2" 2 "$rc"
check "bad flag value: says why" grep -q "^houston check: --expect-gpus: 'banana' is not" "$work/err"
verdict "" "$work/empty.log" --bogus
check_eq "unknown flag: exit 2" 2 "$rc"
"$HOUSTON" help check | grep -q 'HealthCheckProgram'
check_eq "houston help check" 0 $?
finish
