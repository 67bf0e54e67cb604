#!/usr/bin/env bash
# The web dashboard in real headless Chromium against real processes: a Slurm cluster
# (slurmctld + 4 slurmd -N), the controller serving web/ and its API, an agent per node, and a
# fake training job on n1,n2 (as in test_control_jobs.sh). tests/web/dashboard.mjs drives
# Debian's chromium through playwright-core (web/node_modules, scripts/web-deps.sh) and checks
# what an operator sees: the fleet's 4 nodes, the job's MFU chart (uPlot), rank 5 made 30%
# slower turning n2 suspect and then draining on screen, n2's history with the straggler's
# evidence, the live events list, text from outside shown as text, no console error, no
# failed request, and "controller unreachable" while the controller is stopped or gone.
# Screenshot: $HN_BUILD_DIR/dashboard.png.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib/common.sh"
. "$here/lib/slurm-cluster.sh"
need slurmctld slurmd scontrol sinfo sbatch curl jq python3
# Never skipped: a machine without a browser or node fails and says what to install.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    fail "node and npm are needed: apt-get install nodejs npm (scripts/install-deps.sh)"
    finish
    exit 1
fi
# Debian's chromium package: /usr/bin/chromium is a shell wrapper around this binary.
chromium_bin=${HN_CHROMIUM:-/usr/lib/chromium/chromium}
if [ ! -x "$chromium_bin" ]; then
    fail "Chromium not found at $chromium_bin: apt-get install chromium (scripts/install-deps.sh), or set HN_CHROMIUM"
    finish
    exit 1
fi
if ! bash "$HN_SOURCE_DIR/scripts/web-deps.sh"; then
    fail "scripts/web-deps.sh could not install web/node_modules (uPlot, playwright-core)"
    finish
    exit 1
fi

HOUSTON=${HOUSTON:-$HN_BUILD_DIR/houston}
. "$here/lib/ports.sh"
hn_ports dashboard || exit 1
export HN_SOURCE_DIR
. "$here/lib/control.sh"
control_cluster dashboard

# houston reaches Slurm through this scontrol, which answers a requeue after 3 s like a busy
# slurmctld: n2 then stays draining (drained in Slurm, its job still on it) for those seconds
# before it empties and turns quarantined, long enough for a 0.5 s poll to show it.
real_scontrol=$(command -v scontrol)
cat >"$work/scontrol" <<SH
#!/bin/sh
case " \$* " in *" requeue "*) sleep 3 ;; esac
exec $real_scontrol "\$@"
SH
chmod +x "$work/scontrol"

control_config "$work/control.conf" 1
cat >>"$work/control.conf" <<CONF
restart-overhead = 60
scontrol = $work/scontrol
web-root = $HN_SOURCE_DIR/web
CONF
check "controller starts" control_start "$work/control.conf"
fleet_start
curl -fsS "$CTL/" -o "$work/index.html"
check "the controller serves the dashboard at /" grep -q /ui/app.js "$work/index.html"
check "and uPlot from web/node_modules" curl -fsS -o /dev/null \
    "$CTL/ui/node_modules/uplot/dist/uPlot.iife.min.js"

# Text from outside: an operator's drain reason and user full of markup. The page must show
# it as text (the driver checks that no element came of it), then n3 is resumed.
evil='<img src=x onerror="window.hnPwned=1"><script>window.hnPwned=1</script>'
check "an operator drains n3 with a reason full of markup" curl -fsS -o /dev/null -X POST \
    -H "Authorization: Bearer $(cat "$work/operator.token")" \
    --data "$(jq -cn --arg r "$evil" '{reason: $r, user: "<b>mallory</b>"}')" "$CTL/v1/nodes/n3/drain"
check "and resumes it" curl -fsS -o /dev/null -X POST \
    -H "Authorization: Bearer $(cat "$work/operator.token")" --data '{"user":"ops"}' \
    "$CTL/v1/nodes/n3/resume"
check "n3 ready again" wait_for 10 node_state_is n3 ready

say "job A: 8 ranks on n1,n2 reporting steps"
jobA=$(sbatch_sleep -N2 -w n1,n2)
check "job A running in Slurm" wait_for 20 slurm_job_running "$jobA"
# Checkpoints every 160 steps (16 s, 20 s once slowed): the driver slows rank 5 right after one,
# so the straggler is found (in about 2 s) well before the next, where the policy drains n2;
# n2 is suspect on screen for over 10 s, long enough for the checks made meanwhile on a busy
# machine (with 80 steps it was about 5 s).
python3 "$here/lib/fake_trainer.py" --job "$jobA" --node "n1=$work/n1/step.sock" \
    --node "n2=$work/n2/step.sock" --control "$work/ctlA" --ckpt-every 160 \
    >"$work/trainerA.log" 2>&1 &
HN_PIDS+=($!)
check "houston sees job A with 8 ranks on 2 nodes" wait_for 20 bash -c \
    "curl -fsS $CTL/v1/jobs | jqe '.jobs[] | select(.id==\"$jobA\" and .ranks==8 and .nodes==2)'"
check "job A makes progress" wait_for 10 bash -c \
    "[ \$(curl -fsS $CTL/v1/jobs/$jobA | jq '.job.step') -gt 20 ]"

say "Chromium: the dashboard at $CTL/"
shot=$HN_BUILD_DIR/dashboard.png
rm -f "$shot"
# The driver's "ok:" and "FAIL:" lines become this test's checks as they come.
rc=unknown
while IFS= read -r line; do
    case $line in
    "ok: "*) pass "${line#ok: }" ;;
    "FAIL: "*) fail "${line#FAIL: }" ;;
    "driver exit: "*) rc=${line#driver exit: } ;;
    *) say "  $line" ;;
    esac
done < <(
    HN_DASH_URL="$CTL/?poll=500" HN_DASH_JOB=$jobA HN_DASH_TRAINER_CONTROL=$work/ctlA \
        HN_DASH_CONTROL_PID=$CTL_PID HN_DASH_SCREENSHOT=$shot HN_WEB_DIR=$HN_SOURCE_DIR/web \
        HN_CHROMIUM=$chromium_bin timeout 180 node "$HN_SOURCE_DIR/tests/web/dashboard.mjs" 2>&1
    echo "driver exit: $?"
)
check_eq "the browser driver exits 0" 0 "$rc"
check "screenshot written: $shot" test -s "$shot"
echo stop >"$work/ctlA"

finish
