#!/usr/bin/env bash
# Blast-radius guard on real Slurm: fatal faults on 3 of 4 nodes with a 25% guard drain one
# node and hold the other two, visibly, until an operator approves; kill -9 of the controller
# in the middle keeps states and events and repeats no drain.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
. "$here/lib/slurm-cluster.sh"
need slurmctld slurmd scontrol sinfo curl jq

HOUSTON=${HOUSTON:-$HN_BUILD_DIR/houston}
. "$here/lib/ports.sh"
hn_ports control_guard || exit 1
. "$here/lib/control.sh"
control_cluster guard

control_config "$work/control.conf" 0.25
check "controller starts" control_start "$work/control.conf"
fleet_up

say "Xid 79 on n1, n2 and n3 at once"
for n in n1 n2 n3; do echo "gpu 0 xid 79 id=1" >>"$work/$n/state"; done
held() { curl -fsS "$CTL/v1/nodes" | jq '[.nodes[] | select(.held)] | length'; }
check "two removals held" wait_for 20 bash -c "[ \$(curl -fsS $CTL/v1/nodes | jq '[.nodes[] | select(.held)] | length') = 2 ]"
check "exactly one node drained in Slurm" wait_for 10 slurm_drained_count_is 1
sleep 1
check_eq "still one" 1 "$(slurm_drained_count)"
status=$(houston_cli status)
check "houston status shows the held nodes" grep -qi 'held' <<<"$status"
events_before=$(curl -fsS "$CTL/v1/events?limit=10000" | jq '.events | length')

say "kill -9 of the controller while two removals wait"
kill -9 "$CTL_PID"
wait "$CTL_PID" 2>/dev/null
check "controller restarts" control_start "$work/control.conf"
check_eq "two still held after the restart" 2 "$(held)"
sleep 2
check_eq "still exactly one drained" 1 "$(slurm_drained_count)"
events_after=$(curl -fsS "$CTL/v1/events?limit=10000" | jq '.events | length')
check "no event lost" [ "$events_after" -ge "$events_before" ]

first_held=$(curl -fsS "$CTL/v1/nodes" | jq -r '[.nodes[] | select(.held)][0].name')
say "operator approves $first_held"
check "houston approve" houston_cli approve "$first_held"
check "$first_held drained" wait_for 20 slurm_drained "$first_held"
check_eq "one still held" 1 "$(held)"
for n in n1 n2 n3 n4; do
    c=$(curl -fsS "$CTL/v1/events?node=$n&kind=action" | jq '[.events[] | select(.action=="drain")] | length')
    [ "$c" -le 1 ] || fail "$n drained $c times"
done
pass "no node drained twice"
finish
