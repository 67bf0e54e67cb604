#!/usr/bin/env bash
# bench/ingest: the controller's ingest. A synthetic fleet (bench/ingest/load.c) pushes agent
# frames over loopback to a real `houston control` at rising rates; the controller's CPU per
# sample, its saturation point and its decision latency for an Xid 79 are measured; then, in
# the same run, Debian's prometheus scrapes the same series from the same simulated nodes at
# 1 s and its CPU per sample is measured. Prints a summary and appends it to
# bench/results/ingest.md with date, commit and machine. Uses the release build. Bounded to
# about two minutes; every process it starts is killed on exit.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${BUILD:-build-release}
# The goal's fleet: 100,000 GPUs = 12,500 8-GPU nodes; SMALL_NODES push the sustained rate
# again to show what the fleet's size costs (0: skip).
NODES=${BENCH_INGEST_NODES:-12500}
SMALL_NODES=${BENCH_INGEST_SMALL_NODES:-1000}
STEPS=${BENCH_INGEST_STEPS:-1000,2000,4000,6000,8000,12000,16000,24000,32000}
STEP_S=${BENCH_INGEST_STEP_S:-6}
CONNS=${BENCH_INGEST_CONNS:-64}
FAULTS=${BENCH_INGEST_FAULTS:-5}
# Step reports at the fleet's cadence: TRAIN_NODES nodes each forward TRAIN_K steps of its 8
# ranks every 10 s (1 s steps), first without steps and then with them, two steps of TRAIN_S s
# each (0: skip); then a straggler for another TRAIN_S s. Its onset must come after the
# detector's first 32 reports of each rank (docs/straggler.md, "Limits"): 2 x 35 s of 1 s
# steps, the detector taking every other one, is 35.
TRAIN_NODES=${BENCH_INGEST_TRAIN_NODES:-12500}
TRAIN_K=${BENCH_INGEST_TRAIN_K:-10}
TRAIN_S=${BENCH_INGEST_TRAIN_S:-35}
TRAIN_STRAGGLER=${BENCH_INGEST_TRAIN_STRAGGLER:-0.2}
# Prometheus scrapes as many of the same nodes as two cores can take at 1 s (the controller's
# rate would need several cores of Prometheus; the results say how many).
PROM_NODES=${BENCH_INGEST_PROM_NODES:-500}
PROM_WARM=${BENCH_INGEST_PROM_WARM:-10}
PROM_MEASURE=${BENCH_INGEST_PROM_MEASURE:-20}
work=$(mktemp -d /tmp/houston-bench-ingest.XXXXXX)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for tool in prometheus curl; do
    command -v $tool >/dev/null || {
        echo "bench: $tool missing: run scripts/install-deps.sh" >&2
        exit 1
    }
done
if [ ! -x "$B/houston" ] || [ ! -x "$B/bench/ingest/load" ]; then
    echo "bench: $B/houston or $B/bench/ingest/load missing: make release" >&2
    exit 1
fi

# free_port: a loopback port nothing listens on now.
free_port() {
    local p
    for _ in $(seq 100); do
        p=$((20000 + RANDOM % 40000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return 0
        fi
    done
    echo "bench: no free port found" >&2
    return 1
}

# wait_until SECONDS COMMAND...: polls COMMAND every 0.1 s.
wait_until() {
    local n=$(($1 * 10))
    shift
    for _ in $(seq "$n"); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    return 1
}

cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{sub(/.*\) /, ""); print ($12 + $13) / hz}' "/proc/$1/stat"; }

# ---- the controller and the pushing fleet ----
umask 077
echo "bench-agent-$$-$RANDOM" >"$work/token"
echo "bench-operator-$$-$RANDOM" >"$work/operator.token"
umask 022

# start_controller NAME: a fresh controller with its own store in $work/NAME; sets ctl_pid and
# ctl_url.
start_controller() {
    local dir=$work/$1 port
    port=$(free_port)
    mkdir -p "$dir"
    cat >"$dir/control.conf" <<CONF
listen = 127.0.0.1:$port
token-file = $work/token
operator-token-file = $work/operator.token
store = $dir/houston.db
scheduler = dry-run
log-level = warn
# The faults hit several nodes of one (unnamed) rack within the guard window.
guard-fraction = 0.5
guard-per-rack = 1000
CONF
    "$B/houston" control --config "$dir/control.conf" >"$dir/control.log" 2>&1 &
    ctl_pid=$!
    pids+=("$ctl_pid")
    ctl_url=http://127.0.0.1:$port
    wait_until 20 curl -fsS "$ctl_url/healthz" || {
        echo "bench: the controller did not start:" >&2
        cat "$dir/control.log" >&2
        exit 1
    }
}

stop_controller() {
    kill "$ctl_pid"
    wait "$ctl_pid" 2>/dev/null || true
}

perf_args=()
if command -v perf >/dev/null && perf record -q -o "$work/probe.data" -- true >/dev/null 2>&1; then
    perf_args=(--perf "$work/perf.data")
fi
start_controller fleet
echo "bench: pushing to the controller ($NODES nodes, steps $STEPS frames/s, ${STEP_S}s each)"
timeout 150 "$B/bench/ingest/load" push --url "$ctl_url" --token-file "$work/token" \
    --pid "$ctl_pid" --nodes "$NODES" --steps "$STEPS" --step-seconds "$STEP_S" \
    --conns "$CONNS" --faults "$FAULTS" "${perf_args[@]}" | tee "$work/out"
ctl_rss_kib=$(awk '/^VmHWM/ {print $2}' "/proc/$ctl_pid/status")
store_kib=$(du -sk "$work"/fleet/houston.db* | awk '{s += $1} END {print s}')
stop_controller
get() { sed -n "s/^$1=//p" "$work/out" | tail -n1; }

# The same rate from a small fleet, on a fresh controller: what the number of nodes costs.
small_rate=$(get sustained_fps)
[ "${small_rate:-0}" != 0 ] || small_rate=${STEPS%%,*}
small_line=""
if [ "$SMALL_NODES" -gt 0 ] && [ "$SMALL_NODES" != "$NODES" ]; then
    start_controller small
    echo "bench: the same rate from $SMALL_NODES nodes"
    timeout 60 "$B/bench/ingest/load" push --url "$ctl_url" --token-file "$work/token" \
        --pid "$ctl_pid" --nodes "$SMALL_NODES" --steps "$small_rate" --step-seconds "$STEP_S" \
        --conns "$CONNS" --faults 0 | tee "$work/small.out"
    stop_controller
    small_line=$(grep '^step=' "$work/small.out" | head -n1)
fi

# Step reports at the fleet's cadence, on fresh controllers: the same frames without and with
# the ranks' steps (the difference is what the step reports cost), then a straggler injected.
train_fps=$((TRAIN_NODES / 10))
if [ "$TRAIN_S" -gt 0 ]; then
    echo "bench: $TRAIN_NODES nodes at $train_fps frames/s, telemetry only"
    start_controller train0
    timeout $((2 * TRAIN_S + 90)) "$B/bench/ingest/load" push --url "$ctl_url" \
        --token-file "$work/token" --pid "$ctl_pid" --nodes "$TRAIN_NODES" \
        --steps "$train_fps,$train_fps" --step-seconds "$TRAIN_S" --conns "$CONNS" --faults 0 |
        tee "$work/train0.out"
    stop_controller
    echo "bench: the same with $TRAIN_K steps of each rank per frame, then a straggler"
    start_controller train
    timeout $((3 * TRAIN_S + 120)) "$B/bench/ingest/load" push --url "$ctl_url" \
        --token-file "$work/token" --pid "$ctl_pid" --nodes "$TRAIN_NODES" \
        --steps "$train_fps,$train_fps,$train_fps" --step-seconds "$TRAIN_S" --conns "$CONNS" --faults 0 \
        --train "$TRAIN_K" --straggler "$TRAIN_STRAGGLER" | tee "$work/train.out"
    stop_controller
fi

# Where the controller's CPU went at the sustained rate: inclusive shares from perf.
profile="not measured (perf unavailable)"
if [ ${#perf_args[@]} -gt 0 ] && [ "$(get perf_rc)" = 0 ]; then
    perf report -i "$work/perf.data" --children --sort sym --stdio -g none 2>/dev/null \
        >"$work/perf.txt" || true
    pct() { awk -v s="$1" '$NF == s {sub(/%/, "", $1); print $1; exit}' "$work/perf.txt"; }
    sum() {
        local t=0 v
        for s in "$@"; do
            v=$(pct "$s")
            t=$(awk -v a="$t" -v b="${v:-0}" 'BEGIN {print a + b}')
        done
        echo "$t"
    }
    store=$(sum hn_store_begin hn_store_commit hn_store_rollback hn_store_frame_seen \
        hn_store_mark_frame hn_store_append hn_store_put_node)
    brain=$(sum hn_brain_samples hn_brain_find_node hn_brain_gpu_count hn_brain_xid \
        hn_brain_ib_port hn_brain_tick)
    find=$(pct hn_brain_find_node)
    ingest=$(pct hn_control_ingest)
    commit=$(pct hn_store_commit)
    seen=$(pct hn_store_frame_seen)
    fcntl=$(pct __x64_sys_fcntl)
    store_us=$(awk -v n="$(get ctl_ns_per_sample)" -v k="$(get samples_per_frame)" -v s="$store" \
        'BEGIN {printf "%.1f", n * k * s / 100 / 1000}')
    profile="at $(get perf_fps) frames/s: ${ingest:-?}% of the controller's CPU in hn_control_ingest, of which the SQLite store (one transaction per frame) ${store}% = about ${store_us} µs of CPU per frame (commit ${commit:-0}%, the duplicate check ${seen:-0}%; fcntl locking ${fcntl:-0}%) and the brain ${brain}% (its node lookup by name, hn_brain_find_node: ${find:-0}%); the other $(awk -v a="${ingest:-0}" 'BEGIN {print 100 - a}')% is HTTP (libmicrohttpd's epoll loop, loopback TCP send and receive), the executor and the tick"
fi
echo "bench: controller profile: $profile"

# ---- Prometheus scraping the same series ----
"$B/bench/ingest/load" serve --nodes "$PROM_NODES" >"$work/serve.out" &
pids+=($!)
wait_until 10 grep -q '^ports=.' "$work/serve.out"
IFS=, read -r -a serve_ports < <(sed -n 's/^ports=//p' "$work/serve.out")
per_server=$(sed -n 's/^per_server=//p' "$work/serve.out")
series_per_node=$(curl -fsS "http://127.0.0.1:${serve_ports[0]}/n/0/metrics" | grep -vc '^#')
PROM_PORT=$(free_port)
{
    echo "global:"
    echo "  scrape_interval: 1s"
    echo "  scrape_timeout: 1s"
    echo "  evaluation_interval: 1m"
    echo "scrape_configs:"
    echo "  - job_name: sim"
    echo "    static_configs:"
    for ((i = 0; i < PROM_NODES; i++)); do
        printf "      - targets: ['127.0.0.1:%s']\n" "${serve_ports[i / per_server]}"
        printf "        labels: {__metrics_path__: '/n/%d/metrics', instance: 'sim%05d'}\n" "$i" "$i"
    done
} >"$work/prometheus.yml"
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/tsdb" \
    --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$work/prometheus.log" 2>&1 &
prom_pid=$!
pids+=("$prom_pid")
prom_metric() {
    curl -fsS "http://127.0.0.1:$PROM_PORT/metrics" |
        awk -v n="$1" '$1 == n || index($1, n "{") == 1 {s += $2} END {printf "%.0f\n", s}'
}
want_series=$((PROM_NODES * series_per_node))
head_full() { [ "$(prom_metric prometheus_tsdb_head_series)" -ge "$want_series" ]; }
echo "bench: prometheus scraping $PROM_NODES targets x $series_per_node series at 1 s"
wait_until 60 head_full || echo "bench: prometheus has not seen every series yet" >&2
sleep "$PROM_WARM"
s0=$(prom_metric prometheus_tsdb_head_samples_appended_total)
c0=$(cpu_s "$prom_pid")
t0=$(date +%s.%N)
sleep "$PROM_MEASURE"
s1=$(prom_metric prometheus_tsdb_head_samples_appended_total)
c1=$(cpu_s "$prom_pid")
t1=$(date +%s.%N)
prom_rss_kib=$(awk '/^VmRSS/ {print $2}' "/proc/$prom_pid/status")
read -r prom_samples_per_s prom_cores prom_ns < <(awk -v s="$((s1 - s0))" -v c="$c0" -v d="$c1" \
    -v a="$t0" -v b="$t1" 'BEGIN {w = b - a; printf "%.0f %.3f %.1f\n", s / w, (d - c) / w, (s > 0 ? (d - c) / s * 1e9 : -1)}')

ctl_ns=$(get ctl_ns_per_sample)
ratio=$(awk -v p="$prom_ns" -v c="$ctl_ns" 'BEGIN {if (p > 0 && c > 0) printf "%.1f", p / c; else print "n/a"}')
per_core=$(get samples_per_core_s)
cat <<SUM
prom_series=$want_series
prom_samples_per_s=$prom_samples_per_s
prom_cores=$prom_cores
prom_ns_per_sample=$prom_ns
prom_cpu_s_per_million=$(awk -v n="$prom_ns" 'BEGIN {printf "%.3f", n / 1000}')
ctl_cpu_s_per_million=$(awk -v n="$ctl_ns" 'BEGIN {printf "%.3f", n / 1000}')
ratio_prometheus_over_houston=$ratio
SUM
train_line=""
if [ "$TRAIN_S" -gt 0 ]; then
    # tv FILE KEY: KEY's mean over the first two steps of FILE.
    tv() { grep -E '^step=[12] ' "$work/$1" | tr ' ' '\n' | sed -n "s/^$2=//p" |
        awk '{s += $1; n++} END {if (n) printf "%.3f\n", s / n}'; }
    tg() { sed -n "s/^$2=//p" "$work/$1" | tail -n1; }
    read -r report_ns report_ratio < <(awk -v a="$(tv train0.out ctl_cores)" \
        -v b="$(tv train.out ctl_cores)" -v r="$(tv train.out reports_per_s)" -v p="$prom_ns" \
        'BEGIN {n = r > 0 ? (b - a) / r * 1e9 : -1; printf "%.0f %s\n", n, (n > 0 && p > 0 ? sprintf("%.1f", p / n) : "n/a")}')
    echo "report_ns=$report_ns"
    echo "ratio_prometheus_sample_over_houston_report=$report_ratio"
    train_line=1
fi

# ---- the record ----
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git status --porcelain --untracked-files=no -- . ':!bench/results' 2>/dev/null)" ] || commit="$commit (with uncommitted changes)"
machine="$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n1)"
sat=$(get saturated_step)
if [ "$sat" = 0 ]; then
    sat_text="no step saturated (the last target was sustained)"
else
    line=$(grep "^step=$sat " "$work/out")
    f() { echo "$line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
    limit=$(awk -v t="$(f ctl_thread_cores)" -v c="$(f ctl_cores)" -v l="$(f load_cores)" \
        -v o="$(f other_cores)" -v n="$(nproc)" 'BEGIN {
        if (t > 0.9) print "the limit is the controller thread that runs HTTP and ingest (one core)";
        else if (c + l + o > 0.75 * n) printf "the limit is the machine: its %d cores were %.0f%% busy (controller %.2f, loader %.2f, the rest of the machine %.2f), so the controller thread, at %.2f of a core, waited for a CPU\n", n, (c + l + o) / n * 100, c, l, o, t;
        else printf "neither the controller thread (%.2f of a core) nor the machine (%.2f of %d cores) was at its limit: the wait was elsewhere (compare the time in ingest with the controller cores)\n", t, c + l + o, n }')
    sat_text="step $sat saturated: $(f achieved_fps) of $(f target_fps) frames/s accepted; $limit"
fi
mkdir -p bench/results
results=bench/results/ingest.md
[ -s "$results" ] || cat >"$results" <<'HEAD'
# bench/ingest results

Produced by `make bench` (bench/ingest/run.sh, release build). A synthetic fleet
(bench/ingest/load.c: 8-GPU H100 nodes, every GPU field, values moving like busy GPUs, no error
counters rising) pushes agent frames over loopback to a real `houston control` (SQLite store,
dry-run scheduler) at rising rates. Controller CPU is utime+stime from /proc/PID/stat around
each step (in brackets: its busiest thread, libmicrohttpd's, which runs HTTP and the ingest);
samples are houston_control_samples_total; "time in ingest" is
houston_control_ingest_seconds_total per second (wall time inside the ingest, lock wait
included); "rest of machine" is the machine's busy CPU (/proc/stat) less the controller and the
loader: other processes and interrupt time. A step is saturated when fewer than 90% of the
target frames are accepted or the busiest controller thread is above 0.95 of a core; the run
stops there. The controller's profile is `perf record` at the highest sustained rate. The
decision latency is from the POST of a frame carrying an Xid 79 to the drain action being
visible in GET /v1/events (polled every millisecond), measured at the highest sustained rate:
the POST and each poll wait behind the frames in flight (64 connections) on the controller's
one HTTP thread. In the same run Debian's prometheus scrapes the same nodes' series (the
agent's /metrics format, one target per node) every second; its CPU per sample is /proc CPU
over prometheus_tsdb_head_samples_appended_total in a steady window. It scrapes 500 of the
nodes, not as many series as the controller takes per second: that would take it more cores
than the machine has (the table gives the extrapolation). The goal, 100,000 GPUs x 50 series at 1 Hz on one core, is 5 million samples per second
per core and at least 10x less CPU per sample than Prometheus.
HEAD
{
    echo
    echo "## $(date -u +%Y-%m-%d) commit $commit"
    echo
    echo "Machine: $machine. $(get nodes) pushing nodes, $(get samples_per_frame) samples per frame ($(get frame_bytes) bytes), $(get conns) keep-alive connections, ${STEP_S} s per step; store on $(df -T "$work" | awk 'NR == 2 {print $2}')."
    echo
    echo "| step | target frames/s | accepted frames/s | samples/s | controller cores (busiest thread) | time in ingest | samples/s per core | ns CPU per sample | loader cores | rest of machine, cores | saturated |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    grep '^step=' "$work/out" | while read -r l; do
        v() { echo "$l" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
        echo "| $(v step) | $(v target_fps) | $(v achieved_fps) | $(v samples_per_s) | $(v ctl_cores) ($(v ctl_thread_cores)) | $(v in_ingest) | $(v samples_per_core_s) | $(v ctl_ns_per_sample) | $(v load_cores) | $(v other_cores) | $([ "$(v saturated)" = 1 ] && echo yes || echo no) |"
    done
    echo
    echo "| measure | value | goal |"
    echo "|---|---|---|"
    echo "| highest sustained rate | $(get sustained_fps) frames/s = $(get sustained_samples_per_s) samples/s | |"
    echo "| **controller samples/s per core** (at that rate) | **$per_core** ($(get ctl_ns_per_sample) ns CPU per sample) | ≥ 5,000,000 |"
    echo "| controller CPU per million samples | $(awk -v n="$ctl_ns" 'BEGIN {printf "%.3f", n / 1000}') s | |"
    if [ -n "$small_line" ]; then
        sv() { echo "$small_line" | tr ' ' '\n' | sed -n "s/^$1=//p"; }
        echo "| the same rate from $SMALL_NODES nodes (fresh controller): samples/s per core | $(sv samples_per_core_s) ($(sv ctl_ns_per_sample) ns per sample; $(sv achieved_fps) frames/s accepted; $(awk -v p="$prom_ns" -v c="$(sv ctl_ns_per_sample)" 'BEGIN {if (p > 0 && c > 0) printf "%.1f", p / c; else print "n/a"}')× less CPU per sample than Prometheus) | |"
    fi
    echo "| Prometheus: $PROM_NODES targets x $series_per_node series at 1 s | $prom_samples_per_s samples/s, $prom_cores cores, RSS $((prom_rss_kib / 1024)) MiB | |"
    echo "| Prometheus CPU per million samples | $(awk -v n="$prom_ns" 'BEGIN {printf "%.3f", n / 1000}') s | |"
    echo "| cores for 5 M samples/s (100,000 GPUs x 50 series at 1 Hz): houston / Prometheus | $(awk -v c="$ctl_ns" -v p="$prom_ns" 'BEGIN {printf "%.2f / %.1f", 5e6 * c / 1e9, 5e6 * p / 1e9}') | houston ≤ 1 |"
    echo "| **ratio Prometheus / houston CPU per sample** | **${ratio}×** | ≥ 10× |"
    echo "| decision latency, POST to drain action visible in /v1/events (median / max of $(get faults_seen) of $(get faults)) | $(get decision_ms_median) / $(get decision_ms_max) ms | |"
    echo "| controller's answer to the faulty frame, decision committed (median) | $(get fault_reply_ms_median) ms | |"
    echo "| drain action done by the dry-run executor (median) | $(get action_done_ms_median) ms | |"
    echo "| controller peak RSS; store size at the end | $((ctl_rss_kib / 1024)) MiB; $((store_kib / 1024)) MiB | |"
    if [ -n "$train_line" ]; then
        echo "| $TRAIN_NODES nodes at $train_fps frames/s (each every 10 s), fresh controllers: cores without step reports / with $TRAIN_K steps of every rank a frame ($(tv train.out reports_per_s | awk '{printf "%.0f", $1}') step reports/s: $((TRAIN_NODES * 8)) ranks at 1 step/s) | $(tv train0.out ctl_cores) / $(tv train.out ctl_cores) | |"
        echo "| **controller CPU per step report** (the difference over the reports; detector and ledger included) | **$report_ns ns**: ${report_ratio}× less than Prometheus takes per sample (a report holds a rank's step, its time, tokens and checkpoint) | |"
        echo "| a $(awk -v s="$(tg train.out straggler_slowdown)" 'BEGIN {printf "%.0f", s * 100}')% straggler, rank $(tg train.out straggler_rank) of $(tg train.out straggler_job_ranks) (job bench-0), slow from step $(tg train.out straggler_first_slow_step): its finding in /v1/events after the post of its first slow steps | $(tg train.out straggler_found_s) s; onset step $(tg train.out straggler_onset_step), detected at step $(tg train.out straggler_detect_step); straggler findings about other ranks: $(tg train.out straggler_false_alarms) | |"
    fi
    echo
    echo "Saturation: $sat_text."
    if [ -n "$train_line" ]; then
        echo
        echo "Step reports: each of the $TRAIN_NODES nodes forwards, every 10 s as an agent does, the last $TRAIN_K steps of its 8 ranks (1 s steps ± 1%, uniform; jobs of 2,048 nodes); the two controllers get the same telemetry, so the difference of their CPU is what parsing, filing, the straggler detector and the ledger cost. Cores and reports are the means over two steps of $TRAIN_S s. The straggler is injected in a third step of the second run, after the detector's first 32 reports of each rank (docs/straggler.md, \"Limits\"); its node's reports are forwarded with the others'."
    fi
    echo
    echo "Controller profile (perf, inclusive): $profile."
} >>"$results"
echo "bench: controller $per_core samples/s per core (goal 5000000); Prometheus / houston CPU per sample ${ratio}x (goal 10x); decision latency median $(get decision_ms_median) ms; saturated: $([ "$sat" = 0 ] && echo none || echo "step $sat")"
echo "bench: appended to $results"
