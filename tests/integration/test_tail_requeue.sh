#!/usr/bin/env bash
# `houston tail --follow` in the batch script of a job that Slurm requeues, its output file
# appended to (--open-mode=append): the second run's tail finds the first run's lines in the
# file and does not send them again. Sent again, their steps would go back (100, then 10) and
# then again (100, then the second run's 60): houston would count two restarts of the job
# where there was one. The first run is killed in the middle of a line, which the second run's
# first output would end: in a requeued job (SLURM_RESTART_COUNT, which Slurm sets) that piece
# is dropped, so the two joined do not read as a step 110 sent in the second run. (Its stderr
# goes to a file of its own, -e: otherwise Slurm's "CANCELLED ... DUE TO JOB REQUEUE" line
# ends the killed line, as a whole line of the first run.) Also shows, on the Slurm here, that
# a requeued job runs its script again with SLURM_RESTART_COUNT=1 and that --open-mode=append
# keeps the first run's output (docs/steps.md).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
. "$here/lib/slurm-cluster.sh"
need slurmctld slurmd scontrol sinfo sbatch squeue scancel curl jq

HOUSTON=${HOUSTON:-$HN_BUILD_DIR/houston}
. "$here/lib/ports.sh"
hn_ports tail_requeue || exit 1
export HN_SLURM_FAST_REQUEUE=1
. "$here/lib/control.sh"
control_cluster tailrq

control_config "$work/control.conf" 1
check "controller starts" control_start "$work/control.conf"
fleet_start

# The job: houston tail follows the script's own output; the "training" prints Megatron's
# iteration lines 0.2 s apart (10 iterations a line), a checkpoint at 50, then steps to 100
# and half of step 110's line before it waits. Run 2 (after the requeue) resumes from step 50.
cat >"$work/train.sh" <<'JOB'
#!/bin/bash
run=${SLURM_RESTART_COUNT:-0}
"$HOUSTON" tail --follow --job "$SLURM_JOB_ID" "$OUT" 2>"$WORK/tail-$run.err" &
sleep 1 # a training's start-up: the tail has the file open by now
echo "run $run starting, SLURM_RESTART_COUNT=${SLURM_RESTART_COUNT:-unset}"
line() {
    printf ' iteration %8d/    1000 | consumed samples: %8d | elapsed time per iteration (ms): 20.0 | global batch size:     8 | lm loss: 1.0E+00 |\n' "$1" $(($1 * 8))
}
if [ "$run" = 0 ]; then
    for s in 10 20 30 40 50; do line $s; sleep 0.2; done
    echo "saving checkpoint at iteration       50 to /ckpt"
    echo "successfully saved checkpoint at iteration       50 to /ckpt"
    for s in 60 70 80 90 100; do line $s; sleep 0.2; done
    line 110 | head -c 100 # killed as it writes: the rest of the line never comes
else
    for s in 60 70 80 90; do line $s; sleep 0.2; done
fi
sleep 600
JOB
chmod +x "$work/train.sh"
out=$work/train.out
job=$(HOUSTON=$HOUSTON WORK=$work OUT=$out HOUSTON_STEP_SOCKET=$work/n1/step.sock \
    sbatch --parsable -N1 -w n1 -o "$out" -e "$work/train.err" --open-mode=append --export=ALL \
    "$work/train.sh" \
    2>>"$work/sbatch.err")
HN_LOGS+=("$out" "$work/train.err" "$work/tail-0.err" "$work/tail-1.err")
job_is() { curl -fsS "$CTL/v1/jobs/$job" | jqe "$1"; }
check "run 1 reported up to step 100, checkpoint 50" wait_for 30 job_is \
    '.job.step == 100 and .job.checkpoint == 50 and .job.interruptions == 0'
check "run 1 was killed in the middle of step 110's line" wait_for 10 bash -c \
    "tail -c 100 '$out' | grep -q '^ iteration      110/' && [ \"\$(tail -c 1 '$out' | od -An -c | tr -d ' ')\" != '\\n' ]"

say "scontrol requeue: Slurm runs the script again, its output appended"
scontrol requeue "$job"
check "run 2 started with SLURM_RESTART_COUNT=1" wait_for 60 grep -q \
    'run 1 starting, SLURM_RESTART_COUNT=1$' "$out"
check "the output file still holds run 1's lines" grep -q '^run 0 starting' "$out"
check "run 2's tail read run 1's steps and did not send them" wait_for 10 grep -q \
    "following from its end: the 10 steps it holds were read, not sent" "$work/tail-1.err"
check "houston: one restart of the job (the requeue), no step 110, run 2 at its last step" \
    wait_for 20 job_is '.job.interruptions == 1 and .job.step == 90'
curl -fsS "$CTL/v1/jobs/$job" | jq -c '.job | {state, step, checkpoint, interruptions, lost_gpu_hours}'
scancel "$job"
# In the file, run 2's first line follows the killed line's piece on the same line; joined, the
# two would make run 2's tail read 4 lines and report 5 steps.
check "run 2's tail sent steps 60 to 90 only (no 110 of the killed line)" wait_for 20 grep -q \
    '^houston tail: 5 lines read, 4 iterations reported, 0 malformed skipped' "$work/tail-1.err"
finish
