#include "agent/agent.h"

#include "agent/collector.h"
#include "agent/gpu.h"
#include "agent/host.h"
#include "agent/ib.h"
#include "agent/push.h"
#include "agent/steps.h"
#include "agent/xidlog.h"
#include "common/conf.h"
#include "common/fsroot.h"
#include "common/http.h"
#include "common/log.h"
#include "common/opts.h"
#include "common/util.h"
#include "houston/step.h"
#include "verbs.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The agent's data sources; adding one is adding a row (collector.h). */
static const struct hn_collector *const collectors[] = {
    &hn_collector_gpu, &hn_collector_ib, &hn_collector_host, &hn_collector_xid, &hn_collector_steps,
};
#define NCOLLECTORS HN_ARRAY_LEN(collectors)

#define METRICS_MAX (32u << 20)

struct col_slot {
    const struct hn_collector *c;
    void *state;
    int up;             /* init succeeded and the last collect returned 0 */
    uint64_t errors;    /* failed collects */
    double last_wall_s; /* duration of the last collect */
    double last_cpu_s;  /* CPU time of the last collect */
    double cpu_total_s; /* CPU time of every collect */
};

struct agent {
    struct hn_agent_config cfg;
    struct col_slot slots[NCOLLECTORS];
    struct hn_buf bufs[2];
    int front; /* index of the buffer the HTTP thread serves */
    pthread_mutex_t lock;
    atomic_ulong scrapes;
    uint64_t cycles;
    double last_render_s;
    unsigned last_series;
    struct hn_complain truncated;
    struct hn_push *push; /* NULL unless --controller is set (and not --once) */
};

#define PUSH_FLUSH_S 2.0 /* how long SIGTERM waits for queued frames to go out */

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Resident memory from /proc/self/statm, read without stdio so the loop stays heap-free. */
static double rss_bytes(void)
{
    char buf[128];
    if (hn_read_file("/proc/self/statm", buf, sizeof(buf)) < 0)
        return NAN;
    char *sp = strchr(buf, ' ');
    if (!sp)
        return NAN;
    char *end = strchr(sp + 1, ' ');
    if (end)
        *end = '\0';
    uint64_t resident;
    if (hn_parse_u64(sp + 1, 10, &resident) != 0)
        return NAN;
    return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

static void render_self(struct agent *a, struct hn_expo *e)
{
    char labels[128];
    hn_expo_family(e, "houston_agent_build_info", "houston agent version, always 1.", HN_GAUGE);
    size_t len = 0;
    labels[0] = '\0';
    hn_expo_label(labels, sizeof(labels), &len, "version", HN_VERSION);
    hn_expo_sample(e, "houston_agent_build_info", labels, 1);

    static const struct {
        const char *name, *help;
        enum hn_metric_type type;
    } per[] = {
        {"houston_agent_collector_up", "1 if the collector's last cycle succeeded.", HN_GAUGE},
        {"houston_agent_collect_duration_seconds", "Wall time of the collector's last cycle.",
         HN_GAUGE},
        {"houston_agent_collect_cpu_seconds", "CPU time of the collector's last cycle.", HN_GAUGE},
        {"houston_agent_collect_cpu_seconds_total", "CPU time spent in the collector.", HN_COUNTER},
        {"houston_agent_collector_errors_total", "Collector cycles that failed.", HN_COUNTER},
    };
    for (size_t p = 0; p < HN_ARRAY_LEN(per); p++) {
        hn_expo_family(e, per[p].name, per[p].help, per[p].type);
        for (size_t i = 0; i < NCOLLECTORS; i++) {
            const struct col_slot *s = &a->slots[i];
            double v = p == 0   ? s->up
                       : p == 1 ? s->last_wall_s
                       : p == 2 ? s->last_cpu_s
                       : p == 3 ? s->cpu_total_s
                                : (double)s->errors;
            len = 0;
            labels[0] = '\0';
            hn_expo_label(labels, sizeof(labels), &len, "collector", s->c->name);
            hn_expo_sample(e, per[p].name, labels, v);
        }
    }
    hn_expo_family(e, "houston_agent_cycles_total", "Collection cycles run.", HN_COUNTER);
    hn_expo_sample(e, "houston_agent_cycles_total", NULL, (double)a->cycles);
    hn_expo_family(e, "houston_agent_scrapes_total", "Requests served on /metrics.", HN_COUNTER);
    hn_expo_sample(e, "houston_agent_scrapes_total", NULL, (double)atomic_load(&a->scrapes));
    hn_expo_family(e, "houston_agent_render_duration_seconds",
                   "Time the previous render of /metrics took.", HN_GAUGE);
    hn_expo_sample(e, "houston_agent_render_duration_seconds", NULL, a->last_render_s);
    hn_expo_family(e, "houston_agent_series", "Series in the previous render of /metrics.",
                   HN_GAUGE);
    hn_expo_sample(e, "houston_agent_series", NULL, a->last_series);
    hn_expo_family(e, "houston_agent_resident_memory_bytes", "Resident memory of the agent.",
                   HN_GAUGE);
    hn_expo_sample(e, "houston_agent_resident_memory_bytes", NULL, rss_bytes());
    if (a->push)
        hn_push_render(a->push, e);
}

static void agent_init_collectors(struct agent *a)
{
    for (size_t i = 0; i < NCOLLECTORS; i++) {
        struct col_slot *s = &a->slots[i];
        s->c = collectors[i];
        int rc = s->c->init(&a->cfg, &s->state);
        if (rc) {
            hn_warn("collector %s: not available (%s); continuing without it", s->c->name,
                    strerror(-rc));
            s->state = NULL;
        }
    }
}

/* The state of the collector c, or NULL when it is absent or not available. */
static void *collector_state(struct agent *a, const struct hn_collector *c)
{
    for (size_t i = 0; i < NCOLLECTORS; i++) {
        if (a->slots[i].c == c)
            return a->slots[i].state;
    }
    return NULL;
}

/* Queues this cycle's frame for the controller; the sender thread posts it. */
static void agent_push(struct agent *a)
{
    struct hn_push_sources src = {
        .hostname = a->cfg.hostname,
        .gpus = collector_state(a, &hn_collector_gpu),
        .xid = collector_state(a, &hn_collector_xid),
        .ib = collector_state(a, &hn_collector_ib),
    };
    const void *steps = collector_state(a, &hn_collector_steps);
    if (steps)
        src.nsteps = hn_steps_cycle(steps, &src.steps);
    hn_push_cycle(a->push, &src);
}

/* Sets up the push to --controller: reads the token, starts the sender thread. 0 or -1 after
 * logging why. */
static int agent_start_push(struct agent *a)
{
    char token[HN_PUSH_TOKEN_MAX], err[512];
    if (hn_push_read_token(a->cfg.token_file, token, sizeof(token), err, sizeof(err)) != 0) {
        hn_err("agent: %s", err);
        return -1;
    }
    struct hn_push_config pc = {
        .url = a->cfg.controller,
        .token = token,
        .queue_max = a->cfg.push_queue,
        .backoff_min_s = 1,
        .backoff_max_s = 60,
        .connect_timeout_s = 2,
        .timeout_s = 10,
    };
    a->push = hn_push_new(&pc, err, sizeof(err));
    explicit_bzero(token, sizeof(token));
    if (!a->push) {
        hn_err("agent: %s", err);
        return -1;
    }
    int rc = hn_push_start(a->push);
    if (rc != 0) {
        hn_err("agent: cannot start the push to %s: %s", a->cfg.controller, strerror(-rc));
        hn_push_free(a->push);
        a->push = NULL;
        return -1;
    }
    hn_info("agent: pushing to %s%s (boot id %016llx, up to %u frames queued)", a->cfg.controller,
            HN_PUSH_INGEST_PATH, (unsigned long long)hn_push_get_builder(a->push)->boot_id,
            a->cfg.push_queue);
    return 0;
}

static void agent_fini_collectors(struct agent *a)
{
    for (size_t i = 0; i < NCOLLECTORS; i++) {
        if (a->slots[i].state)
            a->slots[i].c->fini(a->slots[i].state);
    }
}

/* One cycle: collect everything, render into the back buffer, make it the front. */
static void agent_cycle(struct agent *a)
{
    for (size_t i = 0; i < NCOLLECTORS; i++) {
        struct col_slot *s = &a->slots[i];
        if (!s->state) {
            s->up = 0;
            continue;
        }
        uint64_t t0 = hn_mono_ns();
        double c0 = thread_cpu_s();
        int rc = s->c->collect(s->state);
        s->last_cpu_s = thread_cpu_s() - c0;
        s->last_wall_s = (double)(hn_mono_ns() - t0) / 1e9;
        s->cpu_total_s += s->last_cpu_s;
        s->up = rc == 0;
        if (rc)
            s->errors++;
    }
    a->cycles++;
    if (a->push)
        agent_push(a);

    uint64_t r0 = hn_mono_ns();
    struct hn_buf *back = &a->bufs[!a->front];
    hn_buf_reset(back);
    struct hn_expo e;
    hn_expo_init(&e, back);
    for (size_t i = 0; i < NCOLLECTORS; i++) {
        if (a->slots[i].state)
            a->slots[i].c->render(a->slots[i].state, &e);
    }
    render_self(a, &e);
    if (e.truncated)
        hn_complain(&a->truncated, "metrics output exceeds %u bytes; truncated", METRICS_MAX);
    else
        hn_complain_clear(&a->truncated, "metrics output fits again");
    a->last_render_s = (double)(hn_mono_ns() - r0) / 1e9;
    a->last_series = e.series;

    pthread_mutex_lock(&a->lock);
    a->front = !a->front;
    pthread_mutex_unlock(&a->lock);
}

static void serve_metrics(void *ctx, const char *url, struct hn_http_reply *reply)
{
    struct agent *a = ctx;
    (void)url;
    atomic_fetch_add(&a->scrapes, 1);
    reply->content_type = "text/plain; version=0.0.4; charset=utf-8";
    pthread_mutex_lock(&a->lock);
    const struct hn_buf *front = &a->bufs[a->front];
    if (hn_buf_append(&reply->body, front->data ? front->data : "", front->len) != 0)
        reply->status = 500;
    pthread_mutex_unlock(&a->lock);
}

static void serve_index(void *ctx, const char *url, struct hn_http_reply *reply)
{
    (void)ctx;
    (void)url;
    reply->content_type = "text/html; charset=utf-8";
    hn_buf_puts(&reply->body, "<html><head><title>houston agent</title></head><body>"
                              "<h1>houston agent</h1><p><a href=\"/metrics\">/metrics</a></p>"
                              "<p><a href=\"/healthz\">/healthz</a></p></body></html>\n");
}

static void serve_health(void *ctx, const char *url, struct hn_http_reply *reply)
{
    (void)ctx;
    (void)url;
    hn_buf_puts(&reply->body, "ok\n");
}

static const struct hn_http_route routes[] = {
    {"GET", "/metrics", serve_metrics, 0},
    {"GET", "/", serve_index, 0},
    {"GET", "/healthz", serve_health, 0},
};

void hn_usage_agent(FILE *out)
{
    fprintf(out,
            "usage: houston agent [options]\n\n"
            "Collects GPU (NVML), InfiniBand/RoCE (sysfs), host (/proc, hwmon) and kernel Xid\n"
            "telemetry every interval and serves it on /metrics in the Prometheus text format,\n"
            "with GPU series named and labelled as dcgm-exporter does.\n\n"
            "options (all but --config, --once and --help are also `key = value` lines of the\n"
            "config file, without the dashes):\n"
            "  --config FILE         read settings from FILE first; flags override it\n"
            "  --listen ADDR:PORT    where /metrics is served (default 127.0.0.1:9400)\n"
            "  --nvml-lib PATH       NVML library to dlopen (default libnvidia-ml.so.1)\n"
            "  --sysfs-root DIR      directory standing for /sys (default /sys)\n"
            "  --proc-root DIR       directory standing for /proc (default /proc)\n"
            "  --kmsg FILE           kernel log to follow for Xid lines (default /dev/kmsg)\n"
            "  --xid-catalog FILE    Xid catalog CSV (default the one shipped with houston)\n"
            "  --interval SECONDS    time between collections (default 10)\n"
            "  --hostname NAME       Hostname label (default this host's name)\n"
            "  --controller URL      also push every cycle to the controller at URL\n"
            "                        (e.g. http://10.0.0.5:8080; frames go to URL/v1/ingest)\n"
            "  --token-file FILE     file holding the cluster token (needed with --controller)\n"
            "  --push-queue N        frames kept while the controller is unreachable (default\n"
            "                        360; the oldest is dropped past it)\n"
            "  --step-socket PATH    Unix datagram socket where training processes report\n"
            "                        their steps (default " HN_STEP_SOCKET_DEFAULT "; \"off\")\n"
            "  --step-subuid-file FILE  subordinate uid ranges (subuid(5)): a report from a\n"
            "                        uid in user U's range counts as U's, so ranks in rootless\n"
            "                        containers may report (default /etc/subuid; \"off\")\n"
            "  --log-level LEVEL     error, warn, info or debug (default info)\n"
            "  --once                collect once, print the metrics to stdout and exit\n"
            "  -h, --help            show this help\n");
}

static int conf_set(const char *key, const char *value, void *ctx)
{
    char err[256];
    if (strcmp(key, "log-level") == 0) {
        enum hn_log_level l;
        if (hn_log_parse_level(value, &l) != 0)
            return -1;
        hn_log_set_level(l);
        return 0;
    }
    if (hn_agent_config_set(ctx, key, value, err, sizeof(err)) != 0) {
        fprintf(stderr, "houston agent: %s\n", err);
        return -1;
    }
    return 0;
}

int hn_agent_parse_args(int argc, char **argv, struct hn_agent_config *cfg, int *once)
{
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'},
        {"listen", required_argument, NULL, 0},
        {"nvml-lib", required_argument, NULL, 0},
        {"sysfs-root", required_argument, NULL, 0},
        {"proc-root", required_argument, NULL, 0},
        {"kmsg", required_argument, NULL, 0},
        {"xid-catalog", required_argument, NULL, 0},
        {"interval", required_argument, NULL, 0},
        {"hostname", required_argument, NULL, 0},
        {"controller", required_argument, NULL, 0},
        {"token-file", required_argument, NULL, 0},
        {"push-queue", required_argument, NULL, 0},
        {"step-socket", required_argument, NULL, 0},
        {"step-subuid-file", required_argument, NULL, 0},
        {"log-level", required_argument, NULL, 0},
        {"once", no_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    hn_agent_config_defaults(cfg);
    *once = 0;
    /* First pass: the config file, so that flags override it whatever their order. */
    int loaded = 0, seen = 0;
    for (int i = 1; i < argc && argv[i]; i++) {
        const char *path = NULL;
        if (strcmp(argv[i], "--config") == 0 && i + 1 < argc && argv[i + 1])
            path = argv[i + 1];
        else if (strncmp(argv[i], "--config=", 9) == 0)
            path = argv[i] + 9;
        if (!path)
            continue;
        loaded++;
        char err[512];
        if (hn_conf_load(path, conf_set, cfg, err, sizeof(err)) != 0) {
            fprintf(stderr, "houston agent: %s\n", err);
            return -1;
        }
    }
    int c, ret = 0;
    struct hn_opts g;
    hn_opts_begin(&g, "agent", opts, stderr);
    while (ret == 0 && (c = hn_opts_next(&g, argc, argv)) != -1) {
        switch (c) {
        case 0:
            if (conf_set(opts[g.idx].name, optarg, cfg) != 0) {
                if (strcmp(opts[g.idx].name, "log-level") == 0)
                    fprintf(stderr,
                            "houston agent: --log-level: '%s' is not one of error, "
                            "warn, info, debug\n",
                            optarg);
                ret = -1;
            }
            break;
        case 'c':
            seen++;
            break;
        case 'o':
            *once = 1;
            break;
        case 'h':
            hn_usage_agent(stdout);
            ret = 1;
            break;
        default: /* '?': hn_opts_next said why */
            ret = -1;
            break;
        }
    }
    hn_opts_end(&g);
    if (ret != 0)
        return ret;
    if (optind < argc) {
        fprintf(stderr, "houston agent: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    if (seen != loaded) {
        /* getopt took an abbreviation (--conf) that the first pass did not load. */
        fprintf(stderr, "houston agent: write --config in full\n");
        return -1;
    }
    if (cfg->controller[0] && !cfg->token_file[0] && !*once) {
        fprintf(stderr, "houston agent: --controller needs --token-file (the cluster token)\n");
        return -1;
    }
    return 0;
}

static int wait_or_signal(const sigset_t *set, double seconds)
{
    struct timespec ts;
    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    for (;;) {
        int sig = sigtimedwait(set, NULL, &ts);
        if (sig > 0)
            return sig;
        if (errno == EAGAIN)
            return 0;
        if (errno != EINTR)
            return 0;
    }
}

int hn_cmd_agent(int argc, char **argv)
{
    struct agent *a = xcalloc(1, sizeof(*a));
    int once, rc = 1;
    int pr = hn_agent_parse_args(argc, argv, &a->cfg, &once);
    if (pr != 0) {
        free(a);
        return pr > 0 ? 0 : 2;
    }
    /* The daemon takes signals synchronously in its main loop: they are blocked before any
     * thread starts (the NVML event thread, libmicrohttpd's), so every thread inherits the
     * mask. --once keeps the default handlers, so Ctrl-C ends it even inside a stuck NVML
     * call. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    if (!once)
        pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    pthread_mutex_init(&a->lock, NULL);
    hn_buf_init(&a->bufs[0], METRICS_MAX);
    hn_buf_init(&a->bufs[1], METRICS_MAX);
    if (once)
        a->cfg.step_socket[0] = '\0'; /* nothing would read the reports */
    agent_init_collectors(a);

    if (once) {
        agent_cycle(a);
        fwrite(a->bufs[a->front].data, 1, a->bufs[a->front].len, stdout);
        rc = 0;
        goto out;
    }

    if (a->cfg.controller[0] && agent_start_push(a) != 0)
        goto out;
    agent_cycle(a);
    char err[256];
    struct hn_http *http =
        hn_http_start(a->cfg.listen, routes, HN_ARRAY_LEN(routes), a, err, sizeof(err));
    if (!http) {
        hn_err("agent: %s", err);
        goto out;
    }
    hn_info("agent: serving http://%s/metrics every %.3g s", a->cfg.listen, a->cfg.interval);
    for (;;) {
        uint64_t t0 = hn_mono_ns();
        double left = a->cfg.interval;
        int sig = 0;
        while (left > 0 && sig == 0) {
            sig = wait_or_signal(&set, left);
            left = a->cfg.interval - (double)(hn_mono_ns() - t0) / 1e9;
        }
        if (sig == SIGINT || sig == SIGTERM) {
            hn_info("agent: signal %d, exiting", sig);
            /* What came since the last cycle (step reports and pause notices the clients were
             * told went out, kernel-log lines) leaves with one last frame, which
             * hn_push_stop() below flushes. */
            if (a->push)
                agent_cycle(a);
            break;
        }
        agent_cycle(a);
    }
    hn_http_stop(http);
    rc = 0;
out:
    if (a->push) {
        hn_push_stop(a->push, PUSH_FLUSH_S);
        hn_push_free(a->push);
    }
    agent_fini_collectors(a);
    hn_buf_fini(&a->bufs[0]);
    hn_buf_fini(&a->bufs[1]);
    pthread_mutex_destroy(&a->lock);
    free(a);
    return rc;
}
