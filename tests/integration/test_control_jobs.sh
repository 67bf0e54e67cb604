#!/usr/bin/env bash
# Jobs end to end on real processes: a Slurm cluster (slurmctld + 4 slurmd -N), an agent per
# node with its step socket, one controller, and a fake training job whose ranks report every
# step through the Python client. Shows: the job ledger and MFU in `houston jobs`; a rank
# that slows down makes its node suspect, and at the job's next checkpoint the node is drained
# in Slurm and the job requeued, with the lost GPU time charged to "straggler"; a job whose
# ranks on one node stop is a hang: that node is drained and the job requeued; a job whose
# node's agent stops with it is not called hung until the agent is back; a checkpoint save
# announced by a pause notice is not a hang; the ledger survives kill -9 of the controller; a
# `houston tail --follow` started again in the middle of a run does not send the log's steps
# again (sent again, they go back, and houston counts a restart).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
. "$here/lib/slurm-cluster.sh"
need slurmctld slurmd scontrol sinfo sbatch squeue scancel curl jq python3 setpriv

HOUSTON=${HOUSTON:-$HN_BUILD_DIR/houston}
. "$here/lib/ports.sh"
hn_ports control_jobs || exit 1
export HN_SOURCE_DIR
. "$here/lib/control.sh"
control_cluster jobs

control_config "$work/control.conf" 1
cat >>"$work/control.conf" <<CONF
hang-min = 4
restart-overhead = 60
CONF
check "controller starts" control_start "$work/control.conf"
# nobody's subordinate uids, as `usermod --add-subuids` would list them (docs/steps.md)
echo "nobody:200000:65536" >"$work/subuid"
fleet_start

job_json() { curl -fsS "$CTL/v1/jobs/$1" | jq -c .job; }
job_field() { curl -fsS "$CTL/v1/jobs/$1" | jq -r ".job.$2"; }

say "job A: 8 ranks on n1,n2 reporting steps"
jobA=$(sbatch_sleep -N2 -w n1,n2 --time=2-00:00:00)
check "job A running in Slurm" wait_for 20 slurm_job_running "$jobA"
python3 "$here/lib/fake_trainer.py" --job "$jobA" --node "n1=$work/n1/step.sock" \
    --node "n2=$work/n2/step.sock" --control "$work/ctlA" --ckpt-every 100 \
    >"$work/trainerA.log" 2>&1 &
HN_PIDS+=($!)
check "houston sees job A with 8 ranks on 2 nodes" wait_for 20 bash -c \
    "curl -fsS $CTL/v1/jobs | jqe '.jobs[] | select(.id==\"$jobA\" and .ranks==8 and .nodes==2)'"
check "before its first checkpoint (every 100 steps) the job's checkpoint is null, not -1" \
    jqe '.job.step >= 100 or .job.checkpoint == null' <<<"$(curl -fsS "$CTL/v1/jobs/$jobA")"
check "job A is running and making progress" wait_for 30 bash -c \
    "[ \$(curl -fsS $CTL/v1/jobs/$jobA | jq '.job.step') -gt 40 ]"
mfu=$(job_field "$jobA" mfu)
check "MFU is 400/989.4 TFLOP/s of an H100 (about 0.404): $mfu" \
    awk -v m="$mfu" 'BEGIN { exit !(m > 0.39 && m < 0.42) }'
check "a checkpoint is known" wait_for 20 bash -c "[ \$(curl -fsS $CTL/v1/jobs/$jobA | jq '.job.checkpoint') -ge 100 ]"
houston_cli jobs >"$work/jobs.txt"
check "houston jobs lists it" grep -qE "^$jobA +running +8 " "$work/jobs.txt"
check "houston jobs --json is the API's list" jqe ".jobs[0].id == \"$jobA\"" \
    <<<"$(houston_cli jobs --json)"
check "houston jobs JOB --json is the API's job: 8 ranks counted and listed" \
    jqe ".job.id == \"$jobA\" and .job.rank_count == 8 and (.job.ranks | length) == 8" \
    <<<"$(houston_cli jobs "$jobA" --json)"

say "another user (nobody) reports a slow rank 5 and a made-up rank 8 for job A, which root owns: refused"
chmod o+x "$work" "$work/n2" # the socket is 0666; let nobody reach it
not_owner() { curl -fsS "$CTL/metrics" | sed -n 's/^houston_control_step_reports_total{result="not_owner"} //p'; }
# send_as UID SOCKET DATAGRAM: sent by a process of that uid (and gid). Debian's python3
# (scripts/install-deps.sh): one under root's home is out of other users' reach.
send_as() {
    setpriv --reuid="$1" --regid="$1" --clear-groups /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.sendto(sys.argv[2].encode(), sys.argv[1])' "$2" "$3"
}
send_as_nobody() { send_as 65534 "$@"; }
export -f not_owner send_as send_as_nobody
export CTL
check_eq "no report refused for its sender yet" 0 "$(not_owner)"
for i in 5 5 8; do
    send_as_nobody "$work/n2/step.sock" "hs1 job=$jobA rank=$i world=$((i + 1)) local_rank=1 step=900000 dur=50"
done
check "the controller refuses all three as not the owner's" wait_for 10 bash -c '[ "$(not_owner)" = 3 ]'

check "a step_owner event on n2 names the job and both uids" jqe \
    ".events[] | select(.rule==\"step_owner\" and .job==\"$jobA\" and (.evidence | test(\"uid=65534 owner=0\")))" \
    <<<"$(houston_cli events --node n2 --json)"
check "nothing of them applied: job A still has its 8 ranks" bash -c \
    "curl -fsS $CTL/v1/jobs/$jobA | jqe '(.job.ranks | length) == 8 and .job.step < 900000'"
check "n2 still ready" node_state_is n2 ready

say "rank 5 (n2, GPU 1) becomes 30% slower, just after a checkpoint"
# The straggler shows (job, /metrics, plan) until n2 is drained at the next checkpoint, 100
# steps (10-13 s) on: start the slowdown when one has just been taken, and read the job once
# when n2 turns suspect, so that a slow machine does not run past the drain.
ck=$(job_field "$jobA" checkpoint)
check "a fresh checkpoint after step $ck" wait_for 30 bash -c \
    "[ \$(curl -fsS $CTL/v1/jobs/$jobA | jq '.job.checkpoint') -gt $ck ]"
t0=$(date +%s.%N)
echo "slow 5 0.3" >"$work/ctlA"
check "n2 suspect" wait_for 20 node_state_is n2 suspect
jobsnap=$(curl -fsS "$CTL/v1/jobs/$jobA")
metrics=$(curl -fsS "$CTL/metrics")
metric() { awk -v n="$1" '$1 == n { print $2 }' <<<"$metrics"; }
slow=$(metric "houston_job_straggler_slowdown{job=\"$jobA\",rank=\"5\",node=\"n2\",gpu=\"1\"}")
check "/metrics: job A's straggler is rank 5 on n2, GPU 1, 20-45% slower: $slow" \
    awk -v s="$slow" 'BEGIN { exit !(s != "" && s > 0.2 && s < 0.45) }'
m=$(metric "houston_job_mfu{job=\"$jobA\"}")
e=$(metric "houston_job_ettr{job=\"$jobA\"}")
x=$(metric "houston_job_effective_mfu{job=\"$jobA\"}")
check "/metrics: job A's effective MFU $x is its MFU $m times its ETTR $e" \
    awk -v m="$m" -v e="$e" -v x="$x" 'BEGIN { exit !(x != "" && m > 0 && e > 0 && (x - m * e) ^ 2 < 1e-9) }'
check "promtool accepts /metrics with a straggler in it" promtool check metrics <<<"$metrics"
t1=$(date +%s.%N)
say "time from slowdown to suspect: $(echo "$t1 - $t0" | bc -l | cut -c1-5) s"
check "straggler event names the job, rank and GPU" jqe \
    ".events[] | select(.rule==\"straggler\" and .job==\"$jobA\" and .gpu==1 and (.evidence | test(\"rank=5\")))" \
    <<<"$(houston_cli events --node n2 --json)"
check "the job shows the straggler" \
    jqe '.job.straggler.rank == 5 and .job.straggler.node == "n2"' <<<"$jobsnap"
# fake_trainer puts a rank's extra time in its backward pass (0.3 x 0.9 on 0.51 of a step: +53%).
check "the straggler is slowest in its backward pass, by 45-75%" \
    jqe '.job.straggler.phase.name == "backward" and .job.straggler.phase.excess > 0.45 and .job.straggler.phase.excess < 0.75' <<<"$jobsnap"
check "the rank heat map shows rank 5 slower than the median" \
    jqe '(.job.ranks | length) == 8 and .job.ranks[5].ratio > 1.15 and .job.ranks[5].node == "n2" and .job.ranks[0].ratio < 1.1' <<<"$jobsnap"
check "a node's GPUs carry their last telemetry" bash -c \
    "curl -fsS $CTL/v1/nodes/n2 | jqe '(.gpus | length) == 8 and (.gpus[0].sm_clock | type) == \"number\" and .gpus[0].lost == false'"
check "the policy says it drains at the next checkpoint" \
    jqe '.job.plan | test("drain n2 at the next checkpoint")' <<<"$jobsnap"
# sbatch --time=2-00:00:00: squeue's %L gives the time left, over which the waste is weighed.
left=$(jq -r .job.plan <<<"$jobsnap" | sed -n 's/.* in the \([0-9]*\) s the job has left.*/\1/p')
check "the plan weighs the job's time left from Slurm (2 days less a minute or two): ${left:-none} s" \
    awk -v l="$left" 'BEGIN { exit !(l != "" && l > 172000 && l <= 172800) }'
check "n2 drained in Slurm at the checkpoint" wait_for 30 slurm_drained n2
check "Slurm reason names the straggler" grep -q '^houston: straggler' <<<"$(slurm_reason n2)"
check "job A requeued" wait_for 20 slurm_job_requeued "$jobA"
echo stop >"$work/ctlA"
check "the ledger charges GPU time to the straggler" bash -c \
    "curl -fsS $CTL/v1/jobs/$jobA | jqe '.job.lost_gpu_hours.straggler > 0 and .job.interruptions == 1'"
houston_cli jobs "$jobA" >"$work/jobA.txt"
check "houston jobs JOB shows what the policy did" grep -q 'straggler policy: drained n2 at checkpoint' "$work/jobA.txt"
check "houston jobs JOB lists the job's straggler event on n2" bash -c \
    "sed -n '/^events:\$/,\$p' $work/jobA.txt | grep -Eq '\<n2\>.*\<straggler\>'"

say "job B on n3,n4: n4's ranks stop (a hang)"
jobB=$(sbatch_sleep -N2 -w n3,n4)
check "job B running in Slurm" wait_for 20 slurm_job_running "$jobB"
python3 "$here/lib/fake_trainer.py" --job "$jobB" --node "n3=$work/n3/step.sock" \
    --node "n4=$work/n4/step.sock" --control "$work/ctlB" \
    >"$work/trainerB.log" 2>&1 &
HN_PIDS+=($!)
check "job B progresses" wait_for 20 bash -c \
    "[ \"\$(curl -fsS $CTL/v1/jobs/$jobB | jq '.job.step')\" -gt 20 ] 2>/dev/null"
echo "hang n4" >"$work/ctlB"
check "hang found: n4 drained in Slurm" wait_for 30 slurm_drained n4
check "Slurm reason says hang" grep -q '^houston: hang' <<<"$(slurm_reason n4)"
check "hang event names the job" jqe \
    ".events[] | select(.rule==\"hang\" and .job==\"$jobB\" and .node==\"n4\")" \
    <<<"$(houston_cli events --json)"
check "job B requeued" wait_for 20 slurm_job_requeued "$jobB"
check "n3 left alone" node_state_is n3 ready
echo stop >"$work/ctlB"
check "lost time charged to the hang" bash -c \
    "curl -fsS $CTL/v1/jobs/$jobB | jqe '.job.lost_gpu_hours.hang > 0'"

say "kill -9 of the controller, restart: the ledger is intact"
before=$(curl -fsS "$CTL/v1/jobs/$jobA" | jq -c '.job | {interruptions, lost_seconds, checkpoint, history: .series[0:2]}')
kill -9 "$CTL_PID"
wait "$CTL_PID" 2>/dev/null
check "controller restarts" control_start "$work/control.conf"
after=$(curl -fsS "$CTL/v1/jobs/$jobA" | jq -c '.job | {interruptions, lost_seconds, checkpoint, history: .series[0:2]}')
check "job A has a history to keep: $before" jqe '.history | length >= 1' <<<"$before"
# Job A waits for its next run: its lost time includes the wait so far (docs/jobs.md), which
# went on while the controller was down. The rest is the same.
check_eq "job A's ledger and history after the restart" "$(jq -c 'del(.lost_seconds)' <<<"$before")" \
    "$(jq -c 'del(.lost_seconds)' <<<"$after")"
check "job A's lost time kept, plus the wait since: $after" jqe \
    "$before as \$b | [.lost_seconds | to_entries[] | .value - \$b.lost_seconds[.key]] |
     all(. >= 0 and . < 120)" <<<"$after"
check "job A's state: restarting" bash -c "curl -fsS $CTL/v1/jobs/$jobA | jqe '.job.state == \"restarting\"'"

say "an array task: its reports carry its own job id (SLURM_JOB_ID), which the poll lists"
chmod o+x "$work/n1"
arr=$(sbatch_sleep --array=3 -w n1)
check "array task running in Slurm" wait_for 20 slurm_job_running "$arr"
task=$(squeue -h -j "$arr" -o %A)
say "array job $arr, task 3 has job id $task ($(squeue -h -j "$arr" -o %i) in squeue's %i)"
before=$(not_owner)
check "a report of the task from nobody is refused as not the owner's" wait_for 10 bash -c \
    "send_as_nobody $work/n1/step.sock 'hs1 job=$task rank=0 step=1 dur=1'; sleep 0.3; [ \"\$(not_owner)\" -gt $before ]"
scancel "$arr"

say "a rootless container: a job of nobody's whose rank runs under one of nobody's subordinate uids"
chmod o+x "$work/n3"
chmod -R o+rX "$(dirname "$SLURM_CONF")" 2>/dev/null
jobC=$(setpriv --reuid=65534 --regid=65534 --clear-groups sbatch --parsable -w n3 -o /dev/null \
    --chdir=/ --wrap 'sleep 300' 2>>"$work/sbatch.err")
check "nobody's job C running in Slurm" wait_for 20 slurm_job_running "$jobC"
# refused UID STEP / accepted UID STEP: job C's report of STEP sent by UID is refused as not the
# owner's (the count grows; resent until then, since agents read the subuid file at their next
# collection), or accepted (job C reaches STEP).
refused() {
    local before
    before=$(not_owner)
    wait_for 15 bash -c "send_as $1 $work/n3/step.sock 'hs1 job=$jobC rank=0 world=1 step=$2 dur=1'; sleep 0.3; [ \"\$(not_owner)\" -gt $before ]"
}
accepted() {
    send_as "$1" "$work/n3/step.sock" "hs1 job=$jobC rank=0 world=1 step=$2 dur=1"
    wait_for 10 bash -c "[ \"\$(curl -fsS $CTL/v1/jobs/$jobC | jq '.job.step')\" = $2 ]"
}
check "a report of job C from uid 300005 (nobody's range ends at 265535) is refused" refused 300005 1
check "one from uid 200005 counts as nobody's: job C is at step 7" accepted 200005 7
# The agent renders /metrics after it has queued the frame the controller may show already.
check "n3's agent counted one report from a subordinate uid" wait_for 5 bash -c \
    "curl -fsS 127.0.0.1:$((AGENT_PORT_BASE + 3))/metrics | grep -qx 'houston_agent_step_reports_subuid_total 1'"
say "nobody's range moves to 400000 (the file replaced, as usermod does): the agents read it again"
echo "nobody:400000:65536" >"$work/subuid.new"
mv "$work/subuid.new" "$work/subuid"
check "uid 200005 is nobody's no more: refused" refused 200005 8
check "uid 400005 counts as nobody's: job C is at step 9" accepted 400005 9
rm "$work/subuid"
check "the file removed: uid 400005 is refused again" refused 400005 10
scancel "$jobC"

# n1_job X [SBATCH_FLAG...]: Slurm job X on n1, its 4 ranks reporting through fake_trainer.py
# (control file $work/ctlX) until past step 20; its id in $n1_job_id.
n1_job() {
    local id name=$1
    shift
    id=$(sbatch_sleep -N1 -w n1 "$@")
    n1_job_id=$id
    check "job $name running in Slurm" wait_for 20 slurm_job_running "$id"
    python3 "$here/lib/fake_trainer.py" --job "$id" --node "n1=$work/n1/step.sock" \
        --control "$work/ctl$name" >"$work/trainer$name.log" 2>&1 &
    HN_PIDS+=($!)
    check "job $name progresses" wait_for 20 bash -c \
        "[ \"\$(curl -fsS $CTL/v1/jobs/$id | jq '.job.step')\" -gt 20 ] 2>/dev/null"
}

say "job D on n1 stops while n1's agent is stopped too: houston cannot see it, so no hang yet"
n1_job D
jobD=$n1_job_id
check "the API gives job D's hang limit (hang-min 4 s at least) and time without progress" \
    bash -c "curl -fsS $CTL/v1/jobs/$jobD | jqe '.job.hang_limit_s >= 4 and .job.no_progress_s < .job.hang_limit_s and .job.longest_pause_s > 0'"
check "/metrics has job D's hang limit" bash -c \
    "curl -fsS $CTL/metrics | grep -q '^houston_job_hang_limit_seconds{job=\"$jobD\"} '"
agent1=${AGENT_PID[1]}
echo "hang n1" >"$work/ctlD"
kill -STOP "$agent1"
check "an event says job D is not seen progressing, and not called a hang" wait_for 20 bash -c \
    "curl -fsS '$CTL/v1/events?job=$jobD' | jqe '.events[] | select(.rule==\"hang_unseen\")'"
# hang_unseen comes once the agent has been silent for half the limit: the limit itself may
# not have passed yet.
check "the API shows it running past its limit" wait_for 20 bash -c \
    "curl -fsS $CTL/v1/jobs/$jobD | jqe '.job.state == \"running\" and .job.no_progress_s > .job.hang_limit_s'"
check "no hang event for job D" bash -c \
    "curl -fsS '$CTL/v1/events?job=$jobD' | jqe '[.events[] | select(.rule==\"hang\")] | length == 0'"
check "job D still runs in Slurm, not requeued" bash -c \
    "scontrol show job $jobD | grep -q 'JobState=RUNNING' && scontrol show job $jobD | grep -q 'Restarts=0'"
kill -CONT "$agent1"
check "n1's agent back, still no progress: a hang" wait_for 20 bash -c \
    "curl -fsS '$CTL/v1/events?job=$jobD' | jqe '.events[] | select(.rule==\"hang\")'"
check "job D requeued" wait_for 20 slurm_job_requeued "$jobD"
check "n1 not drained: all of job D's ranks stopped at the same step, no culprit" \
    no_drain_action n1
check "nor in Slurm" slurm_undrained n1
echo stop >"$work/ctlD"
scancel "$jobD"

say "job F on n1 (sbatch --no-requeue) hangs: Slurm refuses the requeue, and houston says so"
n1_job F --no-requeue
jobF=$n1_job_id
echo "hang n1" >"$work/ctlF"
check "a hang of job F" wait_for 20 bash -c \
    "curl -fsS '$CTL/v1/events?job=$jobF' | jqe '.events[] | select(.rule==\"hang\")'"
# the executor tries 5 times, 2 + 4 + 8 + 16 s apart, each at its next wake-up after a poll
check "a requeue_failed event for job F with Slurm's words" wait_for 90 bash -c \
    "curl -fsS '$CTL/v1/events?job=$jobF' | jqe '.events[] | select(.rule==\"requeue_failed\" and (.evidence | test(\"hung=1 scheduler=.*[Dd]isabled\")))'"
curl -fsS "$CTL/v1/events?job=$jobF" | jq -r '.events[] | select(.rule=="requeue_failed") | .evidence'
check "job F still runs in Slurm, and houston shows it hung, its requeue failed" bash -c \
    "squeue -h -j $jobF -o %T | grep -q RUNNING && curl -fsS $CTL/v1/jobs/$jobF | jqe '.job.state == \"hung\" and .job.requeue_failed == true'"
check "houston jobs JOB says to cancel or requeue it by hand" grep -q \
    '^houston could not requeue it .*cancel or requeue it by hand$' <<<"$(houston_cli jobs "$jobF")"
echo stop >"$work/ctlF"
scancel "$jobF"

say "job E on n1 saves a checkpoint for 15 s, longer than its hang limit, and said so first: no hang"
n1_job E
jobE=$n1_job_id
# Its limit is 4 s (hang-min) unless a stall of the trainer on a loaded machine taught it more
# (3 x the longest gap): under 12 s, a 15 s save without notice would be a hang.
jE=$(curl -fsS "$CTL/v1/jobs/$jobE")
limitE=$(jq '.job.hang_limit_s' <<<"$jE")
check "its hang limit ($limitE s) is under 12 s: an unannounced 15 s save would be a hang" jqe \
    '(.job.hang_limit_s | type) == "number" and .job.hang_limit_s < 12 and .job.pause == null' <<<"$jE"
echo "save 15" >"$work/ctlE"
check "the API shows the declared pause and the longest limit (hang-pause-max)" wait_for 10 bash -c \
    "curl -fsS $CTL/v1/jobs/$jobE | jqe '.job.pause.kind == \"checkpoint\" and .job.hang_limit_s == 2700'"
check "/metrics has job E's pause" bash -c \
    "curl -fsS $CTL/metrics | grep -q '^houston_job_pause_seconds{job=\"$jobE\"} '"
check "houston jobs JOB says it is paused on purpose" grep -q \
    '^paused on purpose (checkpoint) after step ' <<<"$(houston_cli jobs "$jobE")"
check "no progress for longer than its old limit, still running" wait_for 20 bash -c \
    "curl -fsS $CTL/v1/jobs/$jobE | jqe '.job.no_progress_s > $limitE and .job.state == \"running\" and .job.pause.kind == \"checkpoint\"'"
check "the save ends, the job steps again: the pause is over, its limit its steps' own" \
    wait_for 20 bash -c \
    "curl -fsS $CTL/v1/jobs/$jobE | jqe '.job.pause == null and .job.no_progress_s < 5 and .job.hang_limit_s < 12 and .job.longest_pause_s < 15'"
check "/metrics has no pause for job E any more" bash -c \
    "m=\$(curl -fsS $CTL/metrics) && ! grep -q '^houston_job_pause_seconds{job=\"$jobE\"} ' <<<\"\$m\""
check "no hang event for job E" bash -c \
    "curl -fsS '$CTL/v1/events?job=$jobE' | jqe '[.events[] | select(.rule==\"hang\")] | length == 0'"
check "job E never requeued" bash -c "scontrol show job $jobE | grep -q 'Restarts=0'"
echo stop >"$work/ctlE"
scancel "$jobE"

say "job T, read by houston tail, which starts again in the middle of the run: no restart"
jobT=$(sbatch_sleep -N1 -w n1)
check "job T running in Slurm" wait_for 20 slurm_job_running "$jobT"
logT=$work/T.log
: >"$logT"
# iter_T STEP...: Megatron's iteration lines, 10 s a step (a hang limit far above this test's
# few seconds between reports).
iter_T() {
    local s
    for s; do
        printf ' iteration %8d/    1000 | consumed samples: %8d | elapsed time per iteration (ms): 10000.0 | global batch size:     8 |\n' "$s" $((s * 8))
    done >>"$logT"
}
# tail_T N [FLAG...]: `houston tail --follow` of job T's log to n1's agent, output in tailTN.out.
tail_T() {
    HOUSTON_STEP_SOCKET=$work/n1/step.sock spawn_bg "$work/tailT$1.out" "$HOUSTON" tail --follow \
        "${@:2}" --job "$jobT" "$logT"
    tailT=$HN_LAST_PID
}
step_T_is() { [ "$(job_field "$jobT" step)" = "$1" ]; }
tail_T 1 --from-start # whether it has opened the log yet or not
iter_T 10 20
check "the first tail's reports: job T at step 20" wait_for 10 step_T_is 20
kill -TERM "$tailT"
wait "$tailT"
iter_T 30 # written while no tail runs
tail_T 2
check "the second tail has read what the log holds" wait_for 10 grep -q \
    "following from its end: the 3 steps it holds were read, not sent" "$work/tailT2.out"
iter_T 40
check "the second tail's report: job T at step 40" wait_for 10 step_T_is 40
check "no restart counted for job T" jqe '.job.interruptions == 0 and .job.state == "running"' \
    <<<"$(curl -fsS "$CTL/v1/jobs/$jobT")"
kill -TERM "$tailT"
wait "$tailT"
say "the same log sent again from its start (--from-start): its steps go back, a restart to houston"
tail_T 3 --from-start
check "job T restarted without houston (cause other), as the log's steps went back" wait_for 10 \
    bash -c "curl -fsS $CTL/v1/jobs/$jobT | jqe '.job.interruptions == 1 and .job.step == 40'"
kill -TERM "$tailT"
wait "$tailT"
scancel "$jobT"

say "a job id of 63 bytes, the longest a client sends (a UUID-named job outside Slurm fits)"
long=$(printf 'j%.0s' $(seq 63))
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.sendto(sys.argv[2].encode(), sys.argv[1])' "$work/n1/step.sock" \
    "hs1 job=$long rank=0 world=1 step=1 dur=1"
check "it reaches the controller whole" wait_for 10 bash -c \
    "curl -fsS $CTL/v1/jobs | jqe '.jobs[] | select(.id==\"$long\")'"

finish
