#!/usr/bin/env bash
# `houston tail`: the real Megatron logs in tests/fixtures/training-logs become exactly the
# step reports iterations_expected.csv says (step = iteration, dur = elapsed ms / 1000), from a
# file and from a pipe; garbage and broken iteration lines are counted and skipped; NeMo logs
# with --format nemo; reports really sent to a socket; --follow across growth, truncation and
# replacement; usage errors exit 2.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
need python3
HOUSTON=${HOUSTON:-$HN_BUILD_DIR/houston}
logs=$HN_FIXTURES/training-logs
work=$(mktemp -d "${TMPDIR:-/tmp}/hn-tail-XXXXXX")
trap 'hn_cleanup; rm -rf "$work"' EXIT
unset SLURM_JOB_ID HOUSTON_JOB_ID RANK SLURM_PROCID LOCAL_RANK SLURM_LOCALID WORLD_SIZE \
    SLURM_NTASKS HOUSTON_STEP_SOCKET

# expected FILE|all: the datagrams iterations_expected.csv implies (job 7, rank 0), from the
# same text through the same arithmetic ('%.9g' of ms / 1000, as the client prints it).
expected() {
    python3 - "$logs/iterations_expected.csv" "$1" <<'EOF'
import csv, sys
for row in csv.DictReader(open(sys.argv[1])):
    if sys.argv[2] in ("all", row["file"]):
        dur = "%.9g" % (float(row["elapsed_ms_per_iteration"]) / 1000.0)
        print("hs1 job=7 rank=0 step=%s dur=%s" % (row["iteration"], dur))
EOF
}
# The step and dur of each step report (the fields the CSV knows about).
step_dur() { grep ' dur=' | sed -E 's/^(hs1 job=7 rank=0 step=[0-9]+ dur=[^ ]+).*/\1/'; }
# The one checkpoint save in the logs: Megatron-DeepSpeed's rank 0 after its last iteration.
save_line=$(grep -n 'saving checkpoint at iteration' "$logs/superbenchmark/megatron_deepspeed.log")
check_eq "one checkpoint save in the logs" \
    "1443:vm-07-05: saving checkpoint at iteration       5 to .//checkpoint/gpt_6.7B_tok300B_lr1.2e-4_min1.0e-6_wM_dB__gbs2048_mbs2_g16_z1_seed1234_rebase" \
    "$save_line"
# saves_of FILE: the summary's tail for FILE's checkpoint saves and evaluations (the two logs
# with periodic evaluations, at iterations 100 and 200, by their eval_interval argument).
saves_of() {
    case "$1" in
    superbenchmark/megatron_deepspeed.log) echo ', 1 checkpoint saves announced' ;;
    bigscience/meg_gpt2_base_*) echo ', 2 evaluations announced' ;;
    esac
}
summary_of() { grep '^houston tail: ' "$1" | tail -1; }

files=$(cut -d, -f1 "$logs/iterations_expected.csv" | tail -n +2 | sort -u)
check_eq "the CSV names five logs" 5 "$(wc -l <<<"$files")"
for f in $files; do
    "$HOUSTON" tail --format megatron --print --job 7 "$logs/$f" >"$work/out" 2>"$work/err"
    check_eq "$f: exit 0" 0 $?
    want=$(expected "$f")
    check_eq "$f: one report per CSV row" "$(wc -l <<<"$want")" "$(grep -c ' dur=' "$work/out")"
    if [ "$(step_dur <"$work/out")" = "$want" ]; then
        pass "$f: steps and durations as the CSV says"
    else
        fail "$f: $(diff <(step_dur <"$work/out") <(echo "$want") | head -4)"
    fi
    check "$f: summary: nothing malformed or dropped ($(summary_of "$work/err"))" \
        grep -qE "^houston tail: $(wc -l <"$logs/$f") lines read, $(wc -l <<<"$want") iterations reported, 0 malformed skipped, 0 reports dropped$(saves_of "$f")$" "$work/err"
done
"$HOUSTON" tail --print --job 7 "$logs/superbenchmark/megatron_deepspeed.log" >"$work/out" 2>/dev/null
check_eq "the checkpoint save: a pause notice after step 5's report" \
    "hs1 job=7 rank=0 step=5 dur=74.4949 tokens=4194304 tflops=150.62|hs1 job=7 rank=0 step=5 pause=checkpoint" \
    "$(tail -2 "$work/out" | paste -sd'|')"
check_eq "the real log ends during the save: no report says it completed" 0 \
    "$(grep -c 'ckpt=' "$work/out")"
# The log continued: the save is complete once the job steps again (step 6, made from step 5's
# line), and every report from then on carries ckpt=5.
{
    sed -n 1,1443p "$logs/superbenchmark/megatron_deepspeed.log"
    for i in 6 7; do
        sed -n 1441p "$logs/superbenchmark/megatron_deepspeed.log" |
            sed "s|iteration        5/       5|iteration        $i/      10|"
    done
} >"$work/continued.log"
"$HOUSTON" tail --print --job 7 "$work/continued.log" >"$work/out" 2>/dev/null
check_eq "a completed save: ckpt=5 on the reports after it" \
    "hs1 job=7 rank=0 step=6 dur=74.4949 tokens=4194304 ckpt=5 tflops=150.62|hs1 job=7 rank=0 step=7 dur=74.4949 tokens=4194304 ckpt=5 tflops=150.62" \
    "$(tail -2 "$work/out" | paste -sd'|')"

# Tokens (global batch x actual seqlen) and TFLOPs where the log prints them.
"$HOUSTON" tail --print --job 7 "$logs/superbenchmark/megatron_deepspeed.log" >"$work/out" 2>/dev/null
check_eq "Megatron-DeepSpeed: tokens and TFLOPs" \
    "hs1 job=7 rank=0 step=1 dur=76.0153 tokens=4194304 tflops=147.61" "$(head -1 "$work/out")"
"$HOUSTON" tail --print --job 7 --seq-len 1024 "$logs/bigscience/meg_gpt2_base_n4_dp1_tp4_pp4-1809579.out" >"$work/out" 2>/dev/null
check_eq "--seq-len: tokens = global batch x N" "hs1 job=7 rank=0 step=10 dur=2.1522 tokens=4096" \
    "$(head -1 "$work/out")"
"$HOUSTON" tail --print --job 7 "$logs/bigscience/meg_gpt2_base_n4_dp1_tp4_pp4-1809579.out" >"$work/out" 2>/dev/null
check_eq "no sequence length: no tokens" "hs1 job=7 rank=0 step=10 dur=2.1522" "$(head -1 "$work/out")"
# Megatron's periodic evaluations print nothing until they end ("validation loss at iteration
# 100"): the iteration line of each multiple of its eval_interval argument (100) is followed by
# a notice.
check_eq "periodic evaluations: a notice after the reports of steps 100 and 200" \
    "step=100 pause=eval|step=200 pause=eval" "$(grep -o 'step=[0-9]* pause=.*' "$work/out" | paste -sd'|')"

# ---- from a pipe, all logs at once ----

all=()
for f in $files; do all+=("$logs/$f"); done
cat "${all[@]}" | "$HOUSTON" tail --format megatron --print --job 7 - >"$work/out" 2>"$work/err"
check_eq "pipe: exit 0" 0 $?
if [ "$(step_dur <"$work/out")" = "$(expected all)" ]; then
    pass "pipe: all 156 reports in order ($(wc -l <"$work/out"))"
else
    fail "pipe: $(diff <(step_dur <"$work/out") <(expected all) | head -4)"
fi
check "pipe: summary ($(summary_of "$work/err"))" \
    grep -qE "^houston tail: $(cat "${all[@]}" | wc -l) lines read, 156 iterations reported, 0 malformed skipped, 0 reports dropped, 1 checkpoint saves announced, 4 evaluations announced$" "$work/err"
cat "${all[@]}" | "$HOUSTON" tail --print --job 7 >"$work/out2" 2>/dev/null
check "stdin without '-' is the same" cmp -s "$work/out" "$work/out2"

# ---- garbage ----

{
    sed -n 853p "$logs/bigscience/meg_ds_3d_gpt2_perf_n16-ds-off.out"
    printf 'random words | and: bars |\n'
    printf '\x00\x01\x02 binary \xff\xfe junk\n'
    printf ' iteration        2/    1000 | consumed samples:  2048 | elapsed time per itera\n'
    printf ' iteration        3/    1000 | elapsed time per iteration (ms): lots |\n'
    printf 'consumed samples: 3 | elapsed time per iteration (ms): 5.0 |\n'
    head -c 40000 /dev/zero | tr '\0' 'x'
    printf '\n'
    sed -n 865p "$logs/bigscience/meg_ds_3d_gpt2_perf_n16-ds-off.out" | tr -d '\n' # no final newline
} >"$work/garbage.log"
"$HOUSTON" tail --print --job 7 "$work/garbage.log" >"$work/out" 2>"$work/err"
check_eq "garbage: exit 0" 0 $?
check_eq "garbage: the two good lines reported (the last one unterminated)" \
    "hs1 job=7 rank=0 step=1 dur=144.9156|hs1 job=7 rank=0 step=3 dur=123.9976" \
    "$(paste -sd'|' "$work/out")"
check "garbage: 3 malformed counted ($(summary_of "$work/err"))" \
    grep -qE '^houston tail: 8 lines read, 2 iterations reported, 3 malformed skipped, 0 reports dropped$' "$work/err"

# ---- NeMo ----

{
    printf 'Training epoch 0, iteration 0/9 | lr: 0 | global_batch_size: 16 | global_step: 0 | reduced_train_loss: 9.5 | train_step_timing in s: 4.25\n'
    printf 'Training epoch 0, iteration 1/9 | lr: 1e-05 | global_batch_size: 16 | global_step: 1 | reduced_train_loss: 9.25 | train_step_timing in s: 0.5 | TFLOPS_per_GPU: 512.5 | consumed_samples: 32\n'
    # A Lightning progress bar redrawn after each '\r': the same step twice, then the next.
    printf 'Epoch 0: 20%%| | 2/10 [00:05<00:20, global_step=2.000, consumed_samples=48.0, train_step_timing in s=0.75]\r'
    printf 'Epoch 0: 20%%| | 2/10 [00:05<00:20, global_step=2.000, consumed_samples=48.0, train_step_timing in s=0.75]\r'
    printf 'Epoch 0: 30%%| | 3/10 [00:06<00:19, global_step=3.000, consumed_samples=64.0, train_step_timing in s=0.5]\r\n'
} >"$work/nemo.log"
"$HOUSTON" tail --format nemo --print --job 7 --seq-len 4 "$work/nemo.log" >"$work/out" 2>"$work/err"
check_eq "nemo: steps counted from 1, redraws once" \
    "hs1 job=7 rank=0 step=1 dur=4.25 tokens=64|hs1 job=7 rank=0 step=2 dur=0.5 tokens=64 tflops=512.5|hs1 job=7 rank=0 step=3 dur=0.75|hs1 job=7 rank=0 step=4 dur=0.5" \
    "$(paste -sd'|' "$work/out")"
check "nemo: summary ($(summary_of "$work/err"))" \
    grep -qE '^houston tail: 5 lines read, 4 iterations reported, 0 malformed skipped, 0 reports dropped \(1 repeated steps skipped\)$' "$work/err"
"$HOUSTON" tail --format megatron --print --job 7 "$work/nemo.log" >"$work/out" 2>"$work/err"
check_eq "nemo lines are not Megatron's: exit 0" 0 $?
check_eq "nemo lines are not Megatron's" 0 "$(wc -l <"$work/out")"
check "every nemo line read, none reported" grep -q '^houston tail: 5 lines read, 0 iterations reported' "$work/err"
"$HOUSTON" tail --format nemo --print --job 7 "$logs/superbenchmark/megatron_deepspeed.log" >"$work/out" 2>"$work/err"
check_eq "Megatron lines are not NeMo's: exit 0" 0 $?
check_eq "Megatron lines are not NeMo's" 0 "$(wc -l <"$work/out")"
check "every Megatron line read, none reported" grep -q '^houston tail: 1461 lines read, 0 iterations reported' "$work/err"

# ---- DeepSpeed's engine lines (the same real log: its step lines between Megatron's) ----

"$HOUSTON" tail --format deepspeed --print --job 7 "$logs/superbenchmark/megatron_deepspeed.log" \
    >"$work/out" 2>"$work/err"
check_eq "deepspeed: steps 2-5, timed by the stamps of the step lines (0 and 1 start the clock)" \
    "2 75.124|3 75.279|4 75.440|5 74.605" \
    "$(sed -E 's/.* step=([0-9]+) dur=([0-9.]+).*/\1 \2/' "$work/out" |
        awk '{printf "%s%s %.3f", (NR > 1 ? "|" : ""), $1, $2}')"
check "deepspeed: summary ($(summary_of "$work/err"))" \
    grep -qE '^houston tail: 1461 lines read, 4 iterations reported, 0 malformed skipped, 0 reports dropped \(2 step lines only started the clock\)$' "$work/err"

# ---- identity ----

out=$(SLURM_JOB_ID=55 SLURM_PROCID=4 "$HOUSTON" tail --print "$logs/superbenchmark/megatron_deepspeed.log" 2>/dev/null | head -1)
check_eq "identity from the environment" "hs1 job=55 rank=4 step=1 dur=76.0153 tokens=4194304 tflops=147.61" "$out"
out=$(SLURM_JOB_ID=55 SLURM_PROCID=4 "$HOUSTON" tail --print --job 'x y' --rank 2 --local-rank 1 --world 8 \
    "$logs/superbenchmark/megatron_deepspeed.log" 2>/dev/null | head -1)
# world=8: tokens are one rank's share of the job's 4194304 (the controller multiplies by 8).
check_eq "identity from flags" "hs1 job=x_y rank=2 lrank=1 world=8 step=1 dur=76.0153 tokens=524288 tflops=147.61" "$out"

# ---- sent for real ----

cat >"$work/recv.py" <<'EOF'
import os, socket, sys
path, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path + ".tmp")
os.rename(path + ".tmp", path)
with open(out, "wb") as f:
    while True:
        d = s.recv(4096)
        if d == b"end":
            break
        f.write(d + b"\n")
EOF
spawn_bg "$work/recv.log" python3 "$work/recv.py" "$work/step.sock" "$work/recv.out"
pid=$HN_LAST_PID
wait_for 20 test -S "$work/step.sock" || fail "receiver did not start"
cat "${all[@]}" | "$HOUSTON" tail --job 7 --socket "$work/step.sock" 2>"$work/err"
check_eq "sent: exit 0" 0 $?
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"end", sys.argv[1])' "$work/step.sock"
wait "$pid"
cat "${all[@]}" | "$HOUSTON" tail --print --job 7 >"$work/printed" 2>/dev/null
check "sent: the agent socket got what --print shows ($(wc -l <"$work/recv.out") datagrams)" \
    cmp -s "$work/printed" "$work/recv.out"
check "sent: summary ($(summary_of "$work/err"))" grep -q ' 156 iterations reported, 0 malformed skipped, 0 reports dropped, 1 checkpoint saves announced, 4 evaluations announced$' "$work/err"
"$HOUSTON" tail --job 7 --socket "$work/nobody.sock" "$logs/superbenchmark/megatron_deepspeed.log" 2>"$work/err"
check_eq "no agent: still exit 0" 0 $?
check "no agent: drops counted ($(summary_of "$work/err"))" \
    grep -q ' 5 iterations reported, 0 malformed skipped, 6 reports dropped (last: No such file or directory), 1 checkpoint saves announced$' "$work/err"

# ---- --follow ----

mega=$logs/bigscience/meg_ds_3d_gpt2_perf_n16-ds-off.out
lines_of() { grep 'elapsed time per iteration' "$mega" | sed -n "$1"; }
# has_reports FILE N: the follower's output (stdout and stderr share FILE) holds N reports.
has_reports() { [ "$(grep -c '^hs1 ' "$1")" -eq "$2" ]; }
# read_to PID FILE OFFSET: process PID has FILE open at OFFSET (it has read that far).
read_to() {
    local fd
    for fd in /proc/"$1"/fd/*; do
        if [ "$(readlink "$fd")" = "$2" ]; then
            [ "$(awk '/^pos:/ {print $2}' /proc/"$1"/fdinfo/"${fd##*/}")" -eq "$3" ] && return 0
        fi
    done
    return 1
}
grow=$work/grow.log
lines_of 1,2p >"$grow"
spawn_bg "$work/follow.out" "$HOUSTON" tail -f --from-start --print --job 7 "$grow"
fpid=$HN_LAST_PID
wait_for 20 has_reports "$work/follow.out" 2 || fail "follow: the first two lines were not reported"
l3=$(lines_of 3p)
printf '%s' "${l3:0:120}" >>"$grow" # half a line: the writer has not finished it
wait_for 20 read_to "$fpid" "$grow" "$(stat -c %s "$grow")" || fail "follow: half line not read"
printf '%s\n' "${l3:120}" >>"$grow"
lines_of 4p >>"$grow"
wait_for 20 has_reports "$work/follow.out" 4 || fail "follow: appended lines were not reported"
mv "$grow" "$grow.1" && lines_of 5p >"$grow" # logrotate: a new file at the same path
wait_for 20 has_reports "$work/follow.out" 5 || fail "follow: the replaced file was not followed"
: >"$grow" # truncated: the follower goes back to the start, then the file grows again
wait_for 20 read_to "$fpid" "$grow" 0 || fail "follow: truncation not noticed"
lines_of 6p >>"$grow"
wait_for 20 has_reports "$work/follow.out" 6 || fail "follow: the truncated file was not read again"
kill -TERM "$fpid"
wait "$fpid"
check_eq "follow: SIGTERM ends it with exit 0" 0 $?
check_eq "follow: steps 1..6 once each" "1 2 3 4 5 6" \
    "$(grep '^hs1 ' "$work/follow.out" | sed -E 's/.* step=([0-9]+) .*/\1/' | paste -sd' ')"
check_eq "follow: said what happened to the file" "replaced truncated" \
    "$(sed -nE 's/^houston tail: .*: file (replaced|truncated).*/\1/p' "$work/follow.out" | paste -sd' ')"
check "follow: summary on stop ($(summary_of "$work/follow.out"))" \
    grep -qE '^houston tail: 6 lines read, 6 iterations reported, 0 malformed skipped, 0 reports dropped$' "$work/follow.out"

# Without --from-start a follower sends only what is written after it starts, and the line being
# written then, once whole (its start was read with what the file held, which is not sent).
lines_of 1,2p >"$grow"
printf '%s' "${l3:0:120}" >>"$grow"
spawn_bg "$work/fromend.out" "$HOUSTON" tail -f --print --job 7 "$grow"
fpid=$HN_LAST_PID
wait_for 20 read_to "$fpid" "$grow" "$(stat -c %s "$grow")" || fail "from-end: did not start"
printf '%s\n' "${l3:120}" >>"$grow"
lines_of 7p >>"$grow"
wait_for 20 has_reports "$work/fromend.out" 2 || fail "from-end: the new lines were not reported"
kill -TERM "$fpid"
wait "$fpid"
check_eq "from-end: the line being written at the start, and the new one" "3 7" \
    "$(grep '^hs1 ' "$work/fromend.out" | sed -E 's/.* step=([0-9]+) .*/\1/' | paste -sd' ')"
check "from-end: says the steps the file held were not sent" grep -q \
    "^houston tail: $grow: following from its end: the 2 steps it holds were read, not sent (--from-start sends them)$" \
    "$work/fromend.out"

# ---- usage ----

"$HOUSTON" tail --help | grep '^usage: houston tail' >/dev/null # all of it: -q would close the pipe early
check_eq "--help exits 0 with the usage" 0 $?
for args in "--format horovod x" "--flops-per-token 0 x" "--flops-per-token nan x" "--global-batch 0 x" "--rank -1 x" "--seq-len 0 x" "--bogus" "a b" "--from-end" "--from-start" "--from-end --from-start x"; do
    # shellcheck disable=SC2086
    "$HOUSTON" tail --job 7 $args </dev/null >/dev/null 2>&1
    check_eq "usage error exits 2: $args" 2 $?
done
"$HOUSTON" tail "$logs/superbenchmark/megatron_deepspeed.log" >/dev/null 2>"$work/err"
check_eq "no job id exits 2" 2 $?
check "no job id says so" grep -q 'no job id' "$work/err"
"$HOUSTON" tail --job 7 "$work/absent.log" 2>"$work/err"
check_eq "a missing file exits 2" 2 $?
check "a missing file says so" grep -q 'cannot open .*absent.log' "$work/err"
"$HOUSTON" tail --job 7 "$work" 2>"$work/err"
check_eq "a directory exits 2" 2 $?

finish
