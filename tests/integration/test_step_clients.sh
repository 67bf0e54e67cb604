#!/usr/bin/env bash
# The two step-report clients against a real Unix datagram socket: the C library as built
# (libhouston-step.so, through a small sender compiled here) and python/houston_step.py send
# the same bytes for the same steps and environment; with nobody listening, or a listener that
# never reads, both drop and count instead of failing or blocking; examples/step_report.c
# builds against the installed-style header and library and reports its steps.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
need python3
work=$(mktemp -d "${TMPDIR:-/tmp}/hn-step-clients-XXXXXX")
trap 'hn_cleanup; rm -rf "$work"' EXIT
lib_dir=$HN_BUILD_DIR
src=$HN_SOURCE_DIR
export PYTHONPATH=$src/python
unset SLURM_JOB_ID HOUSTON_JOB_ID RANK SLURM_PROCID LOCAL_RANK SLURM_LOCALID WORLD_SIZE \
    SLURM_NTASKS HOUSTON_STEP_SOCKET

# ---- build the C side against the shared library ----

cc=$(sed -n 's/^CMAKE_C_COMPILER:FILEPATH=//p' "$HN_BUILD_DIR/CMakeCache.txt")
cflags=(-std=c11 -Wall -Wextra -Werror -I "$src/include")
# A sanitizer build's library needs the sanitizer runtime loaded first: build the same way.
syms=$(nm -D "$lib_dir/libhouston-step.so")
if grep -q '__asan_init' <<<"$syms"; then
    # shellcheck disable=SC2054 # one flag whose value has a comma, not two elements
    cflags+=(-fsanitize=address,undefined)
elif grep -q '__tsan_init' <<<"$syms"; then
    cflags+=(-fsanitize=thread)
fi
ldflags=(-L "$lib_dir" -lhouston-step "-Wl,-rpath,$lib_dir")

cat >"$work/send.c" <<'EOF'
/* Reads "STEP SECONDS TOKENS FWD BWD OPT COMM CKPT TFLOPS" lines ('-' = not set) and reports
 * each, and "pause STEP KIND" lines, sent as pause notices; argv[1] (optional) is the GPU
 * index. Prints "sent N dropped M". */
#include <houston/step.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double real(const char *s) { return strcmp(s, "-") == 0 ? NAN : strtod(s, NULL); }
static long long integer(const char *s) { return strcmp(s, "-") == 0 ? -1 : strtoll(s, NULL, 10); }

int main(int argc, char **argv)
{
    struct hn_step_client *c = hn_step_open();
    if (argc > 1)
        hn_step_set_gpu(c, atoi(argv[1]));
    char line[1024], f[9][64];
    int sent = 0;
    while (fgets(line, sizeof(line), stdin)) {
        if (sscanf(line, "pause %63s %63s", f[0], f[1]) == 2) {
            static const char *const kinds[] = {"", "checkpoint", "eval", "other"};
            int kind = 0;
            for (int k = 1; k < 4; k++)
                kind = strcmp(f[1], kinds[k]) == 0 ? k : kind;
            sent += hn_step_pause(c, strtoull(f[0], NULL, 10), (enum hn_step_pause)kind) == 0;
            continue;
        }
        if (sscanf(line, "%63s %63s %63s %63s %63s %63s %63s %63s %63s", f[0], f[1], f[2], f[3],
                   f[4], f[5], f[6], f[7], f[8]) != 9)
            continue;
        struct hn_step s;
        hn_step_init(&s);
        s.step = strtoull(f[0], NULL, 10);
        s.seconds = real(f[1]);
        s.tokens = integer(f[2]);
        s.forward_s = real(f[3]);
        s.backward_s = real(f[4]);
        s.optimizer_s = real(f[5]);
        s.comm_s = real(f[6]);
        s.checkpoint = integer(f[7]);
        s.tflops = real(f[8]);
        sent += hn_step_report(c, &s) == 0;
    }
    printf("sent %d dropped %llu\n", sent, (unsigned long long)hn_step_dropped(c));
    hn_step_close(c);
    return 0;
}
EOF
cat >"$work/send.py" <<'EOF'
"""The Python twin of send.c: same input, same calls."""
import sys
import houston_step

def real(s):
    return None if s == "-" else float(s)

def integer(s):
    return None if s == "-" else int(s)

r = houston_step.open()
if len(sys.argv) > 1:
    r.set_gpu(int(sys.argv[1]))
sent = 0
for line in sys.stdin:
    f = line.split()
    if len(f) == 3 and f[0] == "pause":
        sent += r.pause(int(f[1]), f[2])
        continue
    if len(f) != 9:
        continue
    sent += r.report(int(f[0]), real(f[1]), tokens=integer(f[2]), forward_s=real(f[3]),
                     backward_s=real(f[4]), optimizer_s=real(f[5]), comm_s=real(f[6]),
                     checkpoint=integer(f[7]), tflops=real(f[8]))
print("sent %d dropped %d" % (sent, r.dropped))
EOF
# Collects datagrams on a socket into a file, one per line, until one says "end".
cat >"$work/recv.py" <<'EOF'
import os, socket, sys
path, out = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path + ".tmp")
os.rename(path + ".tmp", path)  # the socket appears only once it is bound
with open(out, "wb") as f:
    while True:
        d = s.recv(4096)
        if d == b"end":
            break
        f.write(d + b"\n")
os.unlink(path)
EOF
send_end() {
    python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"end", sys.argv[1])' "$1"
}

check "the C sender builds against libhouston-step.so" \
    "$cc" "${cflags[@]}" "$work/send.c" -o "$work/send" "${ldflags[@]}" -lm
check "examples/step_report.c builds against libhouston-step.so" \
    "$cc" "${cflags[@]}" "$src/examples/step_report.c" -o "$work/step_report" "${ldflags[@]}"
check "houston_step.py is Python 3.9 syntax" python3 -c '
import ast, sys
ast.parse(open(sys.argv[1]).read(), feature_version=(3, 9))' "$src/python/houston_step.py"

# ---- the same bytes ----

# Every field; optional ones left out, negative, NaN, infinite; -0; tiny and huge numbers;
# steps the clients must refuse (no duration, negative duration).
cat >"$work/steps.txt" <<'EOF'
1 1.5 4096 0.5 0.75 0.125 0.0625 0 400.5
2 0.25 - - - - - - -
3 125.2496 -5 -1 nan inf - -1 -
4 -0 0 -0 1e-07 123456789.123 3.14159265358979 18446744 1e300
5 nan 1 - - - - - -
6 -1.5 1 - - - - - -
18446744073709551615 0.000123456789012 9223372036854775807 - - - - 9223372036854775807 0.1
pause 500 checkpoint
pause 18446744073709551615 eval
pause 3 resharding
EOF
valid=7 total=10
# compare_clients DESCRIPTION GPU [VAR=VALUE...]: both clients send steps.txt, GPU ('' for
# none) and the environment given; each one's datagrams go to its own receiver.
compare_clients() {
    local what=$1 gpu=$2
    shift 2
    local envs=("$@") gpu_arg=()
    [ -n "$gpu" ] && gpu_arg=("$gpu")
    spawn_bg "$work/recv-c.log" python3 "$work/recv.py" "$work/c.sock" "$work/c.out"
    local rc_pid=$HN_LAST_PID
    spawn_bg "$work/recv-py.log" python3 "$work/recv.py" "$work/py.sock" "$work/py.out"
    local rp_pid=$HN_LAST_PID
    wait_for 20 test -S "$work/c.sock" && wait_for 20 test -S "$work/py.sock" ||
        fail "$what: receivers did not start"
    local c_says py_says
    c_says=$(env "${envs[@]}" HOUSTON_STEP_SOCKET="$work/c.sock" "$work/send" "${gpu_arg[@]}" \
        <"$work/steps.txt")
    py_says=$(env "${envs[@]}" HOUSTON_STEP_SOCKET="$work/py.sock" python3 "$work/send.py" \
        "${gpu_arg[@]}" <"$work/steps.txt")
    send_end "$work/c.sock"
    send_end "$work/py.sock"
    wait "$rc_pid" "$rp_pid"
    check_eq "$what: the C client's count" "sent $valid dropped $((total - valid))" "$c_says"
    check_eq "$what: the Python client's count" "$c_says" "$py_says"
    check_eq "$what: datagrams received" "$valid" "$(wc -l <"$work/c.out")"
    if cmp -s "$work/c.out" "$work/py.out"; then
        pass "$what: C and Python sent identical bytes"
    else
        fail "$what: C and Python differ: $(diff "$work/c.out" "$work/py.out" | head -5)"
    fi
}

compare_clients "Slurm identity" 3 SLURM_JOB_ID=1234 SLURM_PROCID=7 SLURM_LOCALID=3 SLURM_NTASKS=16
check_eq "every field, in order (Slurm identity)" \
    "hs1 job=1234 rank=7 lrank=3 world=16 step=1 dur=1.5 tokens=4096 fwd=0.5 bwd=0.75 opt=0.125 comm=0.0625 ckpt=0 tflops=400.5 gpu=3" \
    "$(sed -n 1p "$work/c.out")"
check_eq "optional fields left out" "hs1 job=1234 rank=7 lrank=3 world=16 step=2 dur=0.25 gpu=3" \
    "$(sed -n 2p "$work/c.out")"
check_eq "negative, NaN and infinite values left out" \
    "hs1 job=1234 rank=7 lrank=3 world=16 step=3 dur=125.2496 gpu=3" "$(sed -n 3p "$work/c.out")"
check_eq "zeros, exponents and precision" \
    "hs1 job=1234 rank=7 lrank=3 world=16 step=4 dur=0 tokens=0 fwd=0 bwd=1e-07 opt=123456789 comm=3.14159265 ckpt=18446744 tflops=1e+300 gpu=3" \
    "$(sed -n 4p "$work/c.out")"
check_eq "the largest step and counts" \
    "hs1 job=1234 rank=7 lrank=3 world=16 step=18446744073709551615 dur=0.000123456789 tokens=9223372036854775807 ckpt=9223372036854775807 tflops=0.1 gpu=3" \
    "$(sed -n 5p "$work/c.out")"
check_eq "a pause notice" "hs1 job=1234 rank=7 lrank=3 world=16 step=500 pause=checkpoint gpu=3" \
    "$(sed -n 6p "$work/c.out")"
check_eq "a pause notice at the largest step" \
    "hs1 job=1234 rank=7 lrank=3 world=16 step=18446744073709551615 pause=eval gpu=3" \
    "$(sed -n 7p "$work/c.out")"

# torchrun's variables over Slurm's; a job id with a space, '=', a control byte and UTF-8.
compare_clients "torchrun identity, job id sanitised" "" HOUSTON_JOB_ID=$'my run=2\x01\xc3\xa9' \
    RANK=0 LOCAL_RANK=0 WORLD_SIZE=8 SLURM_PROCID=5
check_eq "job id sanitised the same way" "hs1 job=my_run_2___ rank=0 lrank=0 world=8 step=2 dur=0.25" \
    "$(sed -n 2p "$work/c.out")"

compare_clients "no ranks in the environment" "" HOUSTON_JOB_ID=solo
check_eq "unknown ranks left out" "hs1 job=solo step=2 dur=0.25" "$(sed -n 2p "$work/c.out")"

# ---- nobody listening ----

for who in C Python; do
    if [ $who = C ]; then
        cmd=("$work/send")
    else
        cmd=(python3 "$work/send.py")
    fi
    out=$(HOUSTON_JOB_ID=9 HOUSTON_STEP_SOCKET=$work/nobody.sock timeout 60 "${cmd[@]}" <"$work/steps.txt")
    check_eq "$who client, no socket file: exits 0" 0 $?
    check_eq "$who client, no socket file: every report dropped" "sent 0 dropped $total" "$out"
    python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).bind(sys.argv[1])' \
        "$work/stale.sock"
    out=$(HOUSTON_JOB_ID=9 HOUSTON_STEP_SOCKET=$work/stale.sock timeout 60 "${cmd[@]}" <"$work/steps.txt")
    check_eq "$who client, socket file nobody reads from: dropped" "sent 0 dropped $total" "$out"
    rm -f "$work/stale.sock"
    # No job id, to a socket someone reads: nothing sent.
    spawn_bg "$work/recv-nojob.log" python3 "$work/recv.py" "$work/nojob.sock" "$work/nojob.out"
    nojob_pid=$HN_LAST_PID
    wait_for 20 test -S "$work/nojob.sock" || fail "$who client, no job id: receiver did not start"
    out=$(HOUSTON_STEP_SOCKET=$work/nojob.sock timeout 60 "${cmd[@]}" <"$work/steps.txt")
    send_end "$work/nojob.sock"
    wait "$nojob_pid"
    check_eq "$who client, no job id: dropped" "sent 0 dropped $total" "$out"
    check_eq "$who client, no job id: nothing reached the socket" 0 "$(wc -l <"$work/nojob.out")"
done

# A Python receiver that never reads: report() fills the queue, then drops without blocking.
cat >"$work/full.py" <<'EOF'
import socket, sys
import houston_step
rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
rx.bind(sys.argv[1])
r = houston_step.open()
r.set_identity(job="full")
r.set_socket(sys.argv[1])
sent = 0
while sent < 1000000 and r.report(sent + 1, 0.5):
    sent += 1
assert 0 < sent < 1000000, sent
assert r.dropped == 1 and isinstance(r.last_error, BlockingIOError), (r.dropped, r.last_error)
# Bad input is a drop, never an exception; a drop for the input itself, not for the full
# queue every send meets here.
def bad(reporter, call, kind):
    before = reporter.dropped
    assert call() is False
    assert reporter.dropped == before + 1 and isinstance(reporter.last_error, kind), \
        (reporter.dropped - before, reporter.last_error)
bad(r, lambda: r.report("x", "y"), TypeError)
bad(r, lambda: r.report(1, float("nan")), ValueError)
bad(r, lambda: r.report(-1, 1.0), ValueError)
bad(r, lambda: r.report(1, 1.0, bogus=1), TypeError)
for p in (lambda: r.pause(1, "lunch"), lambda: r.pause(-1), lambda: r.pause(1, None)):
    bad(r, p, ValueError)
# The module reporter: no job id here.
bad(houston_step._module_reporter(), lambda: houston_step.report(1, 1.0), ValueError)
bad(houston_step._module_reporter(), lambda: houston_step.pause(1), ValueError)
print("ok", sent)
EOF
out=$(timeout 60 python3 "$work/full.py" "$work/full.sock" 2>&1)
check "Python client, full socket: drops without blocking or raising ($out)" grep -q '^ok ' <<<"$out"

# ---- the example ----

spawn_bg "$work/recv-ex.log" python3 "$work/recv.py" "$work/ex.sock" "$work/ex.out"
pid=$HN_LAST_PID
wait_for 20 test -S "$work/ex.sock" || fail "example receiver did not start"
HOUSTON_JOB_ID=demo HOUSTON_STEP_SOCKET=$work/ex.sock timeout 60 "$work/step_report" 10
check_eq "the example exits 0" 0 $?
send_end "$work/ex.sock"
wait "$pid"
check_eq "the example reported 10 steps" 10 "$(grep -cE '^hs1 job=demo step=([1-9]|10) dur=[0-9.e-]+ tokens=16384 fwd=[0-9.e-]+ bwd=[0-9.e-]+ opt=[0-9.e-]+$' "$work/ex.out")"
check_eq "and announced its checkpoint save after step 10, last" "hs1 job=demo step=10 pause=checkpoint" \
    "$(tail -1 "$work/ex.out")"
err=$(HOUSTON_JOB_ID=demo HOUSTON_STEP_SOCKET=$work/none.sock timeout 60 "$work/step_report" 2 2>&1)
check "the example says what it dropped ($err)" grep -q '2 of 2 reports dropped (last: No such file or directory)' <<<"$err"

finish
