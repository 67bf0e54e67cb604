#!/usr/bin/env bash
# `houston check --drain` against a real Slurm cluster on localhost (slurmctld + 4 slurmd -N):
# a fatal Xid or a lost GPU drains the node with a "houston:" reason; a healthy node is left
# alone; a node houston drained is resumed once healthy; an operator's drain is never undone.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
. "$here/lib/slurm-cluster.sh"
need slurmctld slurmd scontrol sinfo

HOUSTON=${HOUSTON:-$HN_BUILD_DIR/houston}
. "$here/lib/ports.sh"
hn_ports check_drain || exit 1
work=$(mktemp -d /tmp/houston-drain.XXXXXX)
trap 'slurm_cluster_stop "$work/slurm"; rm -rf "$work"' EXIT
mkdir -p "$work/slurm"
slurm_cluster_start "$work/slurm" n1 n2 n3 n4 || {
    echo "FAIL: the Slurm cluster did not start"
    exit 1
}

# run_check NODE KMSG [STATE]: houston check --drain for NODE with its own kernel log and fake
# NVML state; prints the reason line, returns the exit status.
run_check() {
    HN_FAKENVML_STATE=${3:-/dev/null} "$HOUSTON" check --drain --node "$1" \
        --nvml-lib "$HN_FAKENVML" --sysfs-root "$HN_FIXTURES/sysfs-h100" --kmsg "$2" \
        --expect-gpus 8
}

: >"$work/healthy.log"
printf '[%s] NVRM: Xid (PCI:0000:53:00): 79, pid=0, GPU has fallen off the bus.\n' \
    "$(date '+%a %b %e %H:%M:%S %Y')" >"$work/xid79.log"

say "healthy node n1"
out=$(run_check n1 "$work/healthy.log")
check_eq "healthy check exits 0" 0 $?
check_eq "healthy check prints nothing" "" "$out"
check_eq "n1 stays idle" idle "$(slurm_state n1)"

say "fatal Xid 79 on n2"
out=$(run_check n2 "$work/xid79.log")
check_eq "unhealthy check exits 1" 1 $?
check "reason names Xid 79" grep -q '^houston: xid 79 (ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS)' <<<"$out"
check "n2 is drained in Slurm" wait_for 10 slurm_drained n2
reason=$(slurm_reason n2)
check "Slurm's reason starts with houston: and names the Xid" grep -q '^houston: xid 79' <<<"$reason"
check_eq "n1 untouched" idle "$(slurm_state n1)"

say "n2 healthy again: houston resumes the drain it set"
out=$(run_check n2 "$work/healthy.log")
check_eq "check exits 0" 0 $?
check "n2 is resumed" wait_for 10 slurm_state_is n2 idle

say "operator drain on n3 is left alone"
scontrol update NodeName=n3 State=DRAIN Reason="maintenance by ops"
out=$(run_check n3 "$work/healthy.log")
check_eq "check exits 0" 0 $?
sleep 1
check "n3 still drained" slurm_drained n3
check_eq "operator's reason kept" "maintenance by ops" "$(slurm_reason n3)"

say "n3, drained by an operator, then develops a fault: the operator's reason stays"
out=$(run_check n3 "$work/xid79.log")
check_eq "check exits 1" 1 $?
check_eq "operator's reason not replaced" "maintenance by ops" "$(slurm_reason n3)"
out=$(run_check n3 "$work/healthy.log")
check_eq "the healthy run exits 0" 0 $?
check "and a healthy run still does not resume it" slurm_drained n3

say "GPU 3 of n4 falls off the bus (fake NVML)"
echo "gpu 3 lost" >"$work/n4.state"
out=$(run_check n4 "$work/healthy.log" "$work/n4.state")
check_eq "check exits 1" 1 $?
check "reason names the lost GPU" grep -q '^houston: GPU 3 .* is lost' <<<"$out"
check "n4 is drained" wait_for 10 slurm_drained n4

say "a hung scontrol does not hang the check"
printf '#!/bin/sh\nsleep 60\n' >"$work/scontrol-hang"
chmod +x "$work/scontrol-hang"
start=$SECONDS
HN_FAKENVML_STATE=/dev/null timeout 40 "$HOUSTON" check --drain --node n1 \
    --scontrol "$work/scontrol-hang" --nvml-lib "$HN_FAKENVML" \
    --sysfs-root "$HN_FIXTURES/sysfs-h100" --kmsg "$work/xid79.log" >/dev/null 2>"$work/hang.err"
rc=$?
check_eq "check reports failure" 1 $rc
check "within the scheduler timeout" [ $((SECONDS - start)) -lt 30 ]
check "says why" grep -q "cannot read node n1: .*" "$work/hang.err"

finish
