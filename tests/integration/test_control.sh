#!/usr/bin/env bash
# Issue 3 acceptance on real processes: a Slurm cluster (slurmctld + 4 slurmd -N), an agent per
# node on the fake NVML, one controller. A 2-node job runs; Xid 79 on one GPU drains that node
# in Slurm with a houston: reason and requeues the job; DBE, row remap failure and an IB port
# going down drain their nodes too; a throttled GPU makes its node suspect, not drained; the
# events carry their evidence; kill -9 of the controller loses nothing and repeats no drain.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
. "$here/lib/slurm-cluster.sh"
need slurmctld slurmd scontrol sinfo sbatch curl jq

HOUSTON=${HOUSTON:-$HN_BUILD_DIR/houston}
. "$here/lib/ports.sh"
hn_ports control || exit 1
. "$here/lib/control.sh"
control_cluster control

control_config "$work/control.conf" 0.5
check "houston control --check-config accepts the config" \
    "$HOUSTON" control --config "$work/control.conf" --check-config
check "controller starts" control_start "$work/control.conf"
fleet_up
check "operators put the nodes in service" wait_for 5 node_state_is n4 ready

say "a 2-node job on n1,n2"
job=$(sbatch_sleep -N2 -w n1,n2)
check "job running" wait_for 20 slurm_job_running "$job"
# No step reports: only the poll tells houston that the job runs on n1 (and must be requeued).
check "the controller's squeue poll has seen it" sched_polled

say "a throttled GPU on n4: a silent laggard"
printf "gpu 5 throttle 0x20\ngpu 5 sm_clock 1386\n" >>"$work/n4/state"
check "n4 suspect" wait_for 20 node_state_is n4 suspect
check "not drained for it" no_drain_action n4
check "nor in Slurm" slurm_undrained n4
check "laggard evidence names the peers" jqe \
    '.events[] | select(.rule=="laggard" and (.evidence | test("peer_median=")))' \
    <<<"$(houston_cli events --node n4 --json)"
: >"$work/n4/state"
houston_cli resume n4 >/dev/null

say "Xid 79 on GPU 3 of n1"
t0=$(date +%s.%N)
echo "gpu 3 xid 79 id=1" >>"$work/n1/state"
check "n1 drained in Slurm" wait_for 20 slurm_drained n1
t1=$(date +%s.%N)
say "time from injection to drain: $(echo "$t1 - $t0" | bc -l | cut -c1-5) s (goal < 2 s)"
check "Slurm reason names the Xid" grep -q '^houston: xid 79' <<<"$(slurm_reason n1)"
check "job requeued" wait_for 20 slurm_job_requeued "$job"
check_eq "n1 draining or quarantined in houston" 1 \
    "$(node_state n1 | grep -cE '^(draining|quarantined)$')"
events=$(houston_cli events --node n1 --json)
check "transition recorded with its evidence" jqe \
    '.events[] | select(.kind=="transition" and .to=="draining" and (.evidence | test("xid=79")))' \
    <<<"$events"
check "drain action recorded" jqe '.events[] | select(.kind=="action" and .action=="drain")' \
    <<<"$events"

say "new uncorrectable ECC on n2"
echo "gpu 1 ecc dbe_volatile 2" >>"$work/n2/state"
check "n2 drained" wait_for 20 slurm_drained n2
check "reason names the DBE" grep -q 'houston: GPU 1: new uncorrectable ECC' <<<"$(slurm_reason n2)"

say "guard: at 50% of 4 nodes, a third removal waits for an operator"
echo "gpu 6 remap failure 1" >>"$work/n3/state"
check "n3 held, not drained" wait_for 20 bash -c \
    "curl -fsS $CTL/v1/nodes/n3 | jqe '.held == true and .state == \"suspect\"'"
check "no drain queued for n3" no_drain_action n3
check "n3 not drained in Slurm" slurm_undrained n3
check "houston approve n3" houston_cli approve n3
check "n3 drained after approval" wait_for 20 slurm_drained n3
check "reason names the row remap" grep -q 'row remapping failed' <<<"$(slurm_reason n3)"

say "kill -9 of the controller, restart"
kill -9 "$CTL_PID"
wait "$CTL_PID" 2>/dev/null
check "controller restarts" control_start "$work/control.conf"
check_eq "n1 state kept" 1 "$(node_state n1 | grep -cE '^(draining|quarantined)$')"
check_eq "n3 state kept" 1 "$(node_state n3 | grep -cE '^(draining|quarantined)$')"
sleep 2
n1_drains=$(houston_cli events --node n1 --kind action --json | jq '[.events[] | select(.action=="drain")] | length')
check_eq "no duplicate drain of n1" 1 "$n1_drains"

say "IB port down on n4 (the guard holds it: two automatic drains in the window)"
echo "1: DOWN" >"$work/n4/sys/class/infiniband/mlx5_0/ports/1/state"
check "n4 held" wait_for 20 bash -c "curl -fsS $CTL/v1/nodes/n4 | jqe '.held == true'"
houston_cli approve n4 >/dev/null
check "n4 drained" wait_for 20 slurm_drained n4
check "reason names the port" grep -q 'IB port mlx5_0/1' <<<"$(slurm_reason n4)"

say "operator resumes n1: Slurm resumes it because houston drained it"
: >"$work/n1/state"
houston_cli resume n1 >/dev/null
check "n1 back in Slurm" wait_for 20 slurm_undrained n1
finish
