#!/usr/bin/env bash
# A heterogeneous Slurm job (one component on n1, one on n2) and a fatal fault on the second
# component's node. Every rank of such a job sees the leader's id as SLURM_JOB_ID, and Slurm
# requeues the job only by that id ("Job not heterogeneous job leader" for a component's own
# id, which is what squeue's %A prints). houston must map n2 to the leader, accept the leader's
# step reports from n2, drain n2 and requeue the whole job.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
. "$here/lib/slurm-cluster.sh"
need slurmctld slurmd scontrol sinfo sbatch squeue scancel curl jq python3

HOUSTON=${HOUSTON:-$HN_BUILD_DIR/houston}
. "$here/lib/ports.sh"
hn_ports control_hetjob || exit 1
. "$here/lib/control.sh"
control_cluster hetjob

control_config "$work/control.conf" 1
check "controller starts" control_start "$work/control.conf"
fleet_start

say "a heterogeneous job: component 0 on n1, component 1 on n2"
cat >"$work/het.sh" <<'JOB'
#!/bin/bash
#SBATCH -N1 -w n1 -o /dev/null
#SBATCH hetjob
#SBATCH -N1 -w n2
sleep 300
JOB
leader=$(sbatch --parsable "$work/het.sh" 2>>"$work/sbatch.err")
check "both components running" wait_for 30 bash -c \
    "[ \$(squeue -h -j $leader -o %T | grep -c RUNNING) = 2 ]"
squeue -h -j "$leader" -o '%A %i %N' >"$work/squeue"
say "squeue %A %i %N: $(tr '\n' ';' <"$work/squeue")"
second=$(awk '$2 ~ /\+1$/ {print $1}' "$work/squeue")
check "the second component has its own id in %A" test -n "$second" -a "$second" != "$leader"

say "a rank of the second component (on n2) reports the leader's id, as SLURM_JOB_ID gives it"
python3 - "$work/n2/step.sock" "$leader" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
for step in range(1, 4):
    s.sendto(f"hs1 job={sys.argv[2]} rank=1 lrank=0 world=2 step={step} dur=1".encode(), sys.argv[1])
PY
check "houston has the job with its rank on n2" wait_for 10 bash -c \
    "curl -fsS $CTL/v1/jobs/$leader | jqe '.job.ranks[] | select(.rank == 1 and .node == \"n2\")'"
check_eq "no report refused" 0 \
    "$(curl -fsS "$CTL/metrics" | sed -n 's/^houston_control_step_reports_total{result="not_owner"} //p')"

say "Xid 79 on n2: drained, and the whole job requeued by its leader's id"
echo "gpu 3 xid 79 id=1" >>"$work/n2/state"
check "n2 drained in Slurm" wait_for 20 slurm_drained n2
check "the job is requeued" wait_for 20 slurm_job_requeued "$leader"
# The executor records the result once scontrol has exited, which may be after Slurm shows it.
check "the requeue action names the leader and succeeded" wait_for 10 bash -c \
    "curl -fsS '$CTL/v1/events?node=n2&kind=action' | jqe '.events[] | select(.action == \"requeue\" and .job == \"$leader\" and .done == true and .result == \"requeued\")'"
check_eq "no action on the component's own id" 0 "$(houston_cli events --node n2 --json |
    jq "[.events[] | select(.kind == \"action\" and .job == \"$second\")] | length")"
finish
