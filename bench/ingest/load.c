/*
 * load.c - a synthetic agent fleet in one process, for bench/ingest/run.sh.
 *
 *   load push --url URL --token-file FILE --pid PID [--nodes N] [--steps R1,R2,...]
 *             [--step-seconds S] [--conns K] [--faults F] [--links L] [--perf FILE]
 *             [--train K [--job-nodes J] [--straggler F]]
 *   load serve [--listen ADDR] [--nodes N]
 *
 * Every simulated node is an 8-GPU H100 node with all HN_F_COUNT GPU fields (and L NVLinks
 * per GPU, none by default: the controller decodes LINK records but applies none of them).
 * Values move from cycle to cycle like a busy GPU's (clocks, temperatures, power, energy,
 * memory) while every error counter stays flat, so no rule fires on the fleet by itself.
 *
 * push: each node owns an agent frame builder (agent/push.h, struct hn_push_builder) fed from
 * one synthetic GPU set; frames go round-robin over the nodes to URL/v1/ingest on K keep-alive
 * connections driven by one curl multi handle, paced to a target rate (frames per second)
 * that rises step by step. Around each step it reads the controller's CPU time from
 * /proc/PID/stat (and each of its threads' from /proc/PID/task), the machine's from /proc/stat,
 * and the controller's counters from URL/metrics, and prints one line per step:
 *
 *   step=I target_fps achieved_fps samples_per_s   (frames and samples the controller took)
 *   ctl_cores ctl_thread_cores                      (the controller, its busiest thread)
 *   in_ingest                                       (houston_control_ingest_seconds_total/s)
 *   samples_per_core_s ctl_ns_per_sample            (samples per controller CPU second)
 *   load_cores other_cores                          (this process; the rest of the machine)
 *   refused failed saturated=0|1                    (non-200 answers, transport errors)
 *
 * It stops after the first saturated step (accepted frames below 90% of the target, or the
 * controller's busiest thread above 0.95 of a core: libmicrohttpd runs HTTP and the ingest on
 * one thread). Then, at the
 * highest sustained rate, it injects F fatal faults (one frame each with an Xid 79 record, on
 * F extra nodes outside the round-robin) and times, from the POST, the controller's answer,
 * the drain action appearing in GET /v1/events?kind=action&node=NAME (polled every
 * millisecond by a second thread) and the action marked done by the executor. With --perf it
 * finally runs `perf record` on the controller for a few seconds at the same rate. Summary
 * lines are key=value.
 *
 * --train K: every frame also carries the node's next K training steps of each of its GPUs'
 * ranks, as an agent forwards what its ranks reported in a cycle (a 10 s cycle of 1 s steps
 * is K = 10). The nodes are cut into jobs of J nodes (2048 by default: 16,384 ranks), job
 * "bench-I" on nodes I*J.., rank = the node's place in the job * 8 + GPU; each step takes
 * 1 s +- 1% (uniform), reports 8192 tokens and a checkpoint every 100 steps. The step lines
 * then add reports_per_s (houston_control_step_reports_total{result="accepted"} per second).
 * --straggler F: from the start of the last rate step, rank 11 of job bench-0 (node 1, GPU
 * 3) takes 1 + F times as long; a thread polls GET /v1/events?kind=finding every 100 ms and
 * the summary gives when the controller's straggler finding appeared, counted from the post
 * of the first slow step, the onset and detection steps it named, and any straggler finding
 * about another rank (a false alarm).
 *
 * serve: renders the same nodes' series as the agent's /metrics does (agent/gpu.h's
 * hn_gpus_render, dcgm-exporter names and labels) on GET /n/INDEX/metrics, one target per
 * node for a Prometheus server; values move with the wall clock second. Nodes are spread over
 * HTTP servers of SERVE_TARGETS nodes each (ports chosen by the kernel): node i is on the
 * (i / per_server)-th port. Prints per_server=K and ports=P1,P2,... once listening and serves
 * until SIGINT or SIGTERM.
 *
 * Single-threaded but for the fault poller and the perf thread; loopback only.
 */
#include "agent/expo.h"
#include "agent/gpu.h"
#include "agent/push.h"
#include "agent/steps.h"
#include "common/buf.h"
#include "common/fields.h"
#include "common/frame.h"
#include "common/fsroot.h"
#include "common/http.h"
#include "common/spawn.h"
#include "common/util.h"

#include <curl/curl.h>
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define GPUS       8
#define MAX_NODES  100000
#define MAX_STEPS  16
#define MAX_CONNS  128
#define MAX_FAULTS 16
#define FAULT_GPU  3
#define FAULT_XID  79
#define FAULT_WAIT 5.0 /* seconds a fault may take to show up */
#define PROFILE_S  4
#define TRAIN_MAX  100 /* training steps per frame */
#define STRAG_NODE 1   /* the straggler's node and GPU: rank 11 of job bench-0 */
#define STRAG_GPU  3
#define STRAG_POLL 0.1 /* seconds between two polls for the straggler finding */

/* ---- the synthetic fleet -------------------------------------------------------------- */

/* How each field moves: base +- jitter/2 (flat error counters have no jitter). */
static const struct {
    double base, jitter;
} shape[HN_F_COUNT] = {
    [HN_F_SM_CLOCK] = {1980, 2},     [HN_F_MEM_CLOCK] = {2619, 0},
    [HN_F_GPU_TEMP] = {55, 12},      [HN_F_MEMORY_TEMP] = {62, 12},
    [HN_F_SLOWDOWN_TEMP] = {90, 0},  [HN_F_SHUTDOWN_TEMP] = {92, 0},
    [HN_F_POWER] = {520, 200},       [HN_F_PCIE_GEN] = {5, 0},
    [HN_F_PCIE_WIDTH] = {16, 0},     [HN_F_GPU_UTIL] = {95, 10},
    [HN_F_MEM_COPY_UTIL] = {40, 60}, [HN_F_FB_FREE] = {2500, 3000},
    [HN_F_FB_USED] = {78500, 3000},  [HN_F_FB_RESERVED] = {559, 0},
    [HN_F_NVLINKS_ACTIVE] = {18, 0}, [HN_F_GPU_UP] = {1, 0},
};

static uint64_t mix(uint64_t x)
{
    /* splitmix64's finaliser: cheap, well spread. */
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static void node_name(char *out, size_t size, unsigned node)
{
    snprintf(out, size, "sim%05u", node);
}

/* Sets the identity and the values of cycle `tick` of node `node` into the shared set. */
static void fill_node(struct hn_gpu_set *s, unsigned node, uint64_t tick, unsigned links)
{
    node_name(s->hostname, sizeof(s->hostname), node);
    for (unsigned g = 0; g < GPUS; g++) {
        struct hn_gpu *gp = &s->gpus[g];
        snprintf(gp->uuid, sizeof(gp->uuid), "GPU-%08x-4b3c-9d2e-8f1a-%012x", 0x5ca1ab1eu + node,
                 g);
        uint64_t h = mix((uint64_t)node << 32 ^ (uint64_t)g << 24 ^ tick);
        for (unsigned f = 0; f < HN_F_COUNT; f++) {
            double u = (double)((h >> (f % 48)) & 1023) / 1023.0 - 0.5;
            /* NVML gives whole MHz, degrees, percent and MiB, and milliwatts. */
            gp->v[f] = round(shape[f].base + shape[f].jitter * u);
        }
        gp->v[HN_F_POWER] =
            round((shape[HN_F_POWER].base +
                   shape[HN_F_POWER].jitter * ((double)(h & 0xffff) / 65535.0 - 0.5)) *
                  1000) /
            1000;
        gp->v[HN_F_ENERGY] = 1e9 + (double)tick * 520000.0 + g; /* mJ, rising */
        gp->nlinks = links;
        for (unsigned l = 0; l < links; l++) {
            gp->link[l][HN_L_UP] = 1;
            for (unsigned f = 1; f < HN_L_COUNT; f++)
                gp->link[l][f] = 0;
        }
    }
}

static struct hn_gpu_set *gpu_set_new(void)
{
    struct hn_gpu_set *s = xcalloc(1, sizeof(*s));
    s->open = 1;
    s->count = GPUS;
    hn_strlcpy(s->driver, "550.54.15", sizeof(s->driver));
    for (unsigned g = 0; g < GPUS; g++) {
        struct hn_gpu *gp = &s->gpus[g];
        gp->index = g;
        gp->identified = 1;
        hn_strlcpy(gp->name, "NVIDIA H100 80GB HBM3", sizeof(gp->name));
        snprintf(gp->pci_bus_id, sizeof(gp->pci_bus_id), "00000000:%02X:00.0", 0x18 + 0x11 * g);
    }
    return s;
}

/* ---- small helpers ---------------------------------------------------------------------- */

static double mono_s(void)
{
    return (double)hn_mono_ns() / 1e9;
}

static double self_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* utime + stime in seconds from a /proc stat file (a process: all its threads; a task: one
 * thread); -1 when unreadable. */
static double stat_cpu_s(const char *path)
{
    char buf[2048];
    if (hn_read_file(path, buf, sizeof(buf)) <= 0)
        return -1;
    const char *p = strrchr(buf, ')'); /* the command name may hold blanks */
    if (!p)
        return -1;
    unsigned long long ut = 0, st = 0;
    /* After ')': state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
     * utime(14) stime(15). */
    if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return -1;
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static double proc_cpu_s(long pid)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    return stat_cpu_s(path);
}

/* CPU time of each thread of pid (at most MAX_TASKS), to find the busiest one. */
#define MAX_TASKS 64
struct tasks {
    unsigned n;
    long tid[MAX_TASKS];
    double cpu[MAX_TASKS];
};

static void tasks_read(long pid, struct tasks *t)
{
    char path[96];
    snprintf(path, sizeof(path), "/proc/%ld/task", pid);
    t->n = 0;
    DIR *d = opendir(path);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d)) && t->n < MAX_TASKS) {
        uint64_t tid;
        if (hn_parse_u64(de->d_name, 10, &tid) != 0)
            continue;
        snprintf(path, sizeof(path), "/proc/%ld/task/%llu/stat", pid, (unsigned long long)tid);
        double c = stat_cpu_s(path);
        if (c < 0)
            continue;
        t->tid[t->n] = (long)tid;
        t->cpu[t->n++] = c;
    }
    closedir(d);
}

/* The most CPU seconds one thread used between a and b. */
static double tasks_max_delta(const struct tasks *a, const struct tasks *b)
{
    double best = 0;
    for (unsigned i = 0; i < b->n; i++) {
        double before = 0;
        for (unsigned j = 0; j < a->n; j++)
            if (a->tid[j] == b->tid[i])
                before = a->cpu[j];
        if (b->cpu[i] - before > best)
            best = b->cpu[i] - before;
    }
    return best;
}

/* Busy CPU seconds of the whole machine (every process, the kernel, steal), from /proc/stat. */
static double machine_busy_s(void)
{
    char buf[4096];
    if (hn_read_file("/proc/stat", buf, sizeof(buf)) <= 0)
        return -1;
    unsigned long long user, nice, sys, idle, iowait, irq, softirq, steal;
    if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &sys, &idle,
               &iowait, &irq, &softirq, &steal) != 8)
        return -1;
    return (double)(user + nice + sys + irq + softirq + steal) / (double)sysconf(_SC_CLK_TCK);
}

static size_t collect_body(char *data, size_t size, size_t nmemb, void *ctx)
{
    struct hn_buf *b = ctx;
    size_t n = size * nmemb;
    return b && hn_buf_append(b, data, n) != 0 ? 0 : n;
}

/* GET url into body; the HTTP status, or -1. */
static long http_get(CURL *e, const char *url, struct hn_buf *body)
{
    hn_buf_reset(body);
    curl_easy_setopt(e, CURLOPT_URL, url);
    curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, collect_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, body);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, 5000L);
    if (curl_easy_perform(e) != CURLE_OK)
        return -1;
    long status = 0;
    curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &status);
    return status;
}

/* The value of the first line of text starting with `series ` (name and labels exact). */
static double metric(const char *text, const char *series)
{
    size_t n = strlen(series);
    for (const char *p = text; p && *p;) {
        if (strncmp(p, series, n) == 0 && p[n] == ' ') {
            double v;
            char num[64];
            size_t k = strcspn(p + n + 1, "\n");
            if (k >= sizeof(num))
                return NAN;
            memcpy(num, p + n + 1, k);
            num[k] = '\0';
            return hn_parse_double(num, &v) == 0 ? v : NAN;
        }
        p = strchr(p, '\n');
        p = p ? p + 1 : NULL;
    }
    return NAN;
}

/* ---- push ------------------------------------------------------------------------------- */

struct conn {
    CURL *e;
    struct hn_buf body; /* the frame in flight (the builder's buffer is reused at once) */
    int busy;
    int fault; /* fault index + 1 this transfer carries, 0 for none */
};

struct fault {
    unsigned node;
    char name[32];
    _Atomic double t_post; /* monotonic seconds; the poller waits for it */
    double t_reply;
    long status;
    double visible, done; /* seconds after t_post, NAN when not seen */
};

struct pusher {
    /* settings */
    char base[256];
    char token[HN_PUSH_TOKEN_MAX];
    long pid;
    unsigned nodes, nconn, nfaults, links;
    /* fleet */
    struct hn_gpu_set *gs;
    struct hn_push_builder *b; /* nodes + nfaults builders */
    unsigned next;             /* round-robin position */
    uint64_t tick;             /* cycle counter, moves the values */
    /* transport */
    CURLM *m;
    struct conn c[MAX_CONNS];
    struct curl_slist *hdr;
    char ingest_url[300];
    uint64_t completed, refused, failed;
    unsigned busy;
    /* faults */
    struct fault f[MAX_FAULTS];
    int pending_fault; /* index + 1 to send next, 0 none */
    atomic_int phase_stop;
    /* training steps (--train) */
    unsigned train, job_nodes;
    uint64_t *train_at;          /* per node: its next training step */
    struct hn_steps_report *rep; /* GPUS * train: one frame's */
    double strag;                /* the straggler's slowdown, 0: none */
    int strag_on;                /* its steps are slow from now on */
    uint64_t strag_step;         /* its first slow step, UINT64_MAX before */
    _Atomic double strag_t0;     /* monotonic seconds of the post carrying it, 0 before */
};

/* Fills p->rep with node's next p->train steps (the frame's time: time_ns). */
static unsigned train_reports(struct pusher *p, unsigned node, uint64_t time_ns)
{
    unsigned job = node / p->job_nodes, first = job * p->job_nodes;
    unsigned in_job = p->nodes - first < p->job_nodes ? p->nodes - first : p->job_nodes;
    unsigned n = 0;
    for (unsigned k = 0; k < p->train; k++) {
        uint64_t step = p->train_at[node]++;
        for (unsigned g = 0; g < GPUS; g++) {
            struct hn_steps_report *r = &p->rep[n++];
            struct hn_step_msg *m = &r->msg;
            hn_stepmsg_clear(m);
            snprintf(m->job, sizeof(m->job), "bench-%u", job);
            m->rank = (int64_t)(node - first) * GPUS + g;
            m->local_rank = g;
            m->world = (int64_t)in_job * GPUS;
            m->step = step;
            uint64_t h = mix((uint64_t)node << 40 ^ (uint64_t)g << 32 ^ step);
            m->seconds = 1.0 + 0.02 * ((double)(h & 0xffff) / 65535.0 - 0.5);
            if (p->strag_on && node == STRAG_NODE && g == STRAG_GPU) {
                m->seconds *= 1 + p->strag;
                if (p->strag_step == UINT64_MAX)
                    p->strag_step = step;
            }
            m->tokens = 8192;
            m->checkpoint = (int64_t)(step / 100 * 100);
            /* The agent stamps each report as it comes: one a step, the last one now. */
            r->time_ns = time_ns - (uint64_t)(p->train - 1 - k) * 1000000000ull;
            r->uid = 1000;
        }
    }
    return n;
}

/* Builds node's next frame into conn and starts its transfer. xid: add the fault record. */
static int post_frame(struct pusher *p, struct conn *c, unsigned node, int xid)
{
    struct hn_push_builder *b = &p->b[node];
    fill_node(p->gs, node, p->tick++, p->links);
    struct hn_gpu *g = &p->gs->gpus[FAULT_GPU];
    if (xid) {
        /* One more NVML Xid event with the newest code 79: the builder sends one XID record. */
        g->xid_events = b->xid_seen[FAULT_GPU] + 1;
        g->v[HN_F_XID] = FAULT_XID;
    }
    struct hn_push_sources src = {.hostname = p->gs->hostname, .gpus = p->gs};
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t time_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    int first_slow = 0;
    if (p->train && node < p->nodes) {
        first_slow = p->strag_on && node == STRAG_NODE && p->strag_step == UINT64_MAX;
        src.nsteps = train_reports(p, node, time_ns);
        src.steps = p->rep;
    }
    int rc = hn_push_build(b, &src, time_ns);
    g->xid_events = 0;
    g->v[HN_F_XID] = 0;
    if (rc != 0)
        return rc;
    hn_buf_reset(&c->body);
    if (hn_buf_append(&c->body, b->frame.data, b->frame.len) != 0)
        return -ENOSPC;
    curl_easy_setopt(c->e, CURLOPT_POSTFIELDS, c->body.data);
    curl_easy_setopt(c->e, CURLOPT_POSTFIELDSIZE, (long)c->body.len);
    c->busy = 1;
    p->busy++;
    curl_multi_add_handle(p->m, c->e);
    if (first_slow)
        atomic_store(&p->strag_t0, mono_s());
    return 0;
}

static struct conn *free_conn(struct pusher *p)
{
    for (unsigned i = 0; i < p->nconn; i++)
        if (!p->c[i].busy)
            return &p->c[i];
    return NULL;
}

static void reap(struct pusher *p)
{
    CURLMsg *msg;
    int left;
    while ((msg = curl_multi_info_read(p->m, &left))) {
        if (msg->msg != CURLMSG_DONE)
            continue;
        struct conn *c = NULL;
        for (unsigned i = 0; i < p->nconn && !c; i++)
            if (p->c[i].e == msg->easy_handle)
                c = &p->c[i];
        if (!c)
            continue;
        long status = 0;
        CURLcode result = msg->data.result; /* msg does not survive the removal */
        if (result == CURLE_OK)
            curl_easy_getinfo(c->e, CURLINFO_RESPONSE_CODE, &status);
        curl_multi_remove_handle(p->m, c->e);
        if (result != CURLE_OK)
            p->failed++;
        else if (status == 200)
            p->completed++;
        else
            p->refused++;
        if (c->fault) {
            struct fault *f = &p->f[c->fault - 1];
            f->t_reply = mono_s();
            f->status = status;
            c->fault = 0;
        }
        c->busy = 0;
        p->busy--;
    }
}

/*
 * Sends frames at `rate` per second for `seconds` (or until phase_stop is set), the due
 * frames of each millisecond at once, on whichever connections are free. A pending fault goes
 * first.
 */
static void run_phase(struct pusher *p, double rate, double seconds)
{
    double t0 = mono_s(), now = t0;
    uint64_t issued = 0;
    while (now - t0 < seconds && !atomic_load(&p->phase_stop)) {
        uint64_t due = (uint64_t)((now - t0) * rate) + 1;
        struct conn *c;
        if (p->pending_fault && (c = free_conn(p))) {
            struct fault *f = &p->f[p->pending_fault - 1];
            c->fault = p->pending_fault;
            atomic_store(&f->t_post, mono_s());
            if (post_frame(p, c, f->node, 1) != 0) {
                fprintf(stderr, "load: building the fault frame failed\n");
                exit(1);
            }
            p->pending_fault = 0;
        }
        while (issued < due && (c = free_conn(p))) {
            if (post_frame(p, c, p->next, 0) != 0) {
                fprintf(stderr, "load: building a frame failed\n");
                exit(1);
            }
            p->next = (p->next + 1) % p->nodes;
            issued++;
        }
        /* Far behind (the controller is slower than the target): don't build a backlog. */
        if (due > issued + p->nconn)
            issued = due - p->nconn;
        int running;
        curl_multi_perform(p->m, &running);
        reap(p);
        curl_multi_poll(p->m, NULL, 0, 1, NULL);
        curl_multi_perform(p->m, &running);
        reap(p);
        now = mono_s();
    }
}

/* Lets every transfer in flight finish (at most 5 s). */
static void drain(struct pusher *p)
{
    double t0 = mono_s();
    while (p->busy && mono_s() - t0 < 5) {
        int running;
        curl_multi_perform(p->m, &running);
        reap(p);
        curl_multi_poll(p->m, NULL, 0, 5, NULL);
    }
}

struct ctl_counters {
    double samples, frames, ingest_s, reports;
};

static int read_counters(struct pusher *p, CURL *e, struct hn_buf *body, struct ctl_counters *out)
{
    char url[300];
    snprintf(url, sizeof(url), "%s/metrics", p->base);
    if (http_get(e, url, body) != 200 || !body->data)
        return -1;
    out->samples = metric(body->data, "houston_control_samples_total");
    out->frames = metric(body->data, "houston_control_frames_total{result=\"accepted\"}");
    out->ingest_s = metric(body->data, "houston_control_ingest_seconds_total");
    out->reports = metric(body->data, "houston_control_step_reports_total{result=\"accepted\"}");
    return isnan(out->samples) || isnan(out->frames) ? -1 : 0;
}

/* The fault poller: GET /v1/events?kind=action&node=NAME every millisecond from the POST on,
 * until the drain is done or FAULT_WAIT has passed. */
struct poller {
    struct pusher *p;
    struct fault *f;
};

static void *poll_main(void *arg)
{
    struct poller *pl = arg;
    struct fault *f = pl->f;
    CURL *e = curl_easy_init();
    struct hn_buf body;
    hn_buf_init(&body, 1u << 20);
    char url[400];
    snprintf(url, sizeof(url), "%s/v1/events?kind=action&node=%s&limit=1", pl->p->base, f->name);
    double start = mono_s();
    while (mono_s() - start < FAULT_WAIT + 1) {
        double t_post = atomic_load(&f->t_post);
        if (t_post > 0 && mono_s() - t_post > FAULT_WAIT)
            break;
        if (t_post > 0 && http_get(e, url, &body) == 200 && body.data) {
            double t = mono_s() - t_post;
            json_t *j = json_loads(body.data, 0, NULL);
            json_t *ev = json_array_get(json_object_get(j, "events"), 0);
            const char *act = json_string_value(json_object_get(ev, "action"));
            if (act && strcmp(act, "drain") == 0) {
                if (isnan(f->visible))
                    f->visible = t;
                if (json_is_true(json_object_get(ev, "done"))) {
                    f->done = t;
                    json_decref(j);
                    break;
                }
            }
            json_decref(j);
        }
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    hn_buf_fini(&body);
    curl_easy_cleanup(e);
    atomic_store(&pl->p->phase_stop, 1);
    return NULL;
}

/* The straggler poller: GET /v1/events?kind=finding&rule=straggler every STRAG_POLL seconds
 * until stop is set, noting when the injected straggler's finding appeared and counting those
 * about other ranks. */
struct strag_poller {
    struct pusher *p;
    atomic_int stop;
    double found_s; /* after the first slow step's post, NAN before */
    unsigned long long onset, detect;
    unsigned others;
};

static unsigned long long evidence_u64(const char *ev, const char *key)
{
    const char *at = ev ? strstr(ev, key) : NULL;
    return at ? strtoull(at + strlen(key), NULL, 10) : 0;
}

static void *strag_main(void *arg)
{
    struct strag_poller *sp = arg;
    CURL *e = curl_easy_init();
    struct hn_buf body;
    hn_buf_init(&body, 4u << 20);
    char url[400];
    snprintf(url, sizeof(url), "%s/v1/events?kind=finding&rule=straggler&limit=1000", sp->p->base);
    json_int_t seen = 0; /* the newest event id counted */
    while (!atomic_load(&sp->stop)) {
        if (http_get(e, url, &body) == 200 && body.data) {
            json_t *j = json_loads(body.data, 0, NULL);
            json_t *evs = json_object_get(j, "events"), *ev;
            size_t i;
            json_int_t top = seen;
            json_array_foreach(evs, i, ev)
            {
                json_int_t id = json_integer_value(json_object_get(ev, "id"));
                if (id <= seen)
                    break; /* newest first */
                top = id > top ? id : top;
                const char *evd = json_string_value(json_object_get(ev, "evidence"));
                int ours = evd && strstr(evd, "job=bench-0 ") &&
                           evidence_u64(evd, " rank=") == STRAG_NODE * GPUS + STRAG_GPU;
                double t0 = atomic_load(&sp->p->strag_t0);
                if (ours && isnan(sp->found_s) && t0 > 0) {
                    sp->found_s = mono_s() - t0;
                    sp->onset = evidence_u64(evd, "onset_step=");
                    sp->detect = evidence_u64(evd, "detect_step=");
                } else if (!ours) {
                    sp->others++;
                }
            }
            seen = top;
            json_decref(j);
        }
        struct timespec ts = {0, (long)(STRAG_POLL * 1e9)};
        nanosleep(&ts, NULL);
    }
    hn_buf_fini(&body);
    curl_easy_cleanup(e);
    return NULL;
}

/* perf record on the controller for PROFILE_S seconds, on its own thread. */
struct profiler {
    long pid;
    const char *out;
    int rc;
};

static void *perf_main(void *arg)
{
    struct profiler *pr = arg;
    char pid[32], secs[16];
    snprintf(pid, sizeof(pid), "%ld", pr->pid);
    snprintf(secs, sizeof(secs), "%d", PROFILE_S);
    const char *const argv[] = {"perf",         "record", "-q",    "-F", "499",
                                "--call-graph", "dwarf",  "-p",    pid,  "-o",
                                pr->out,        "--",     "sleep", secs, NULL};
    int status = 0;
    pr->rc = hn_spawn_run(argv, NULL, (PROFILE_S + 20) * 1000, NULL, NULL, &status);
    if (pr->rc == 0 && status != 0)
        pr->rc = -status;
    return NULL;
}

static int parse_steps(const char *s, double *steps, unsigned *n)
{
    char buf[512];
    if (hn_strlcpy(buf, s, sizeof(buf)) >= sizeof(buf))
        return -1;
    *n = 0;
    char *save = NULL;
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        double v;
        if (*n >= MAX_STEPS || hn_parse_double(t, &v) != 0 || v <= 0)
            return -1;
        steps[(*n)++] = v;
    }
    return *n ? 0 : -1;
}

static int setup_transport(struct pusher *p)
{
    p->m = curl_multi_init();
    if (!p->m)
        return -1;
    curl_multi_setopt(p->m, CURLMOPT_MAXCONNECTS, (long)p->nconn);
    char auth[HN_PUSH_TOKEN_MAX + 32];
    snprintf(auth, sizeof(auth), "Authorization: Bearer %s", p->token);
    p->hdr = curl_slist_append(p->hdr, "Content-Type: " HN_PUSH_CONTENT_TYPE);
    p->hdr = curl_slist_append(p->hdr, auth);
    p->hdr = curl_slist_append(p->hdr, "Expect:");
    explicit_bzero(auth, sizeof(auth));
    if (!p->hdr)
        return -1;
    snprintf(p->ingest_url, sizeof(p->ingest_url), "%s%s", p->base, HN_PUSH_INGEST_PATH);
    for (unsigned i = 0; i < p->nconn; i++) {
        struct conn *c = &p->c[i];
        c->e = curl_easy_init();
        if (!c->e)
            return -1;
        hn_buf_init(&c->body, HN_FRAME_MAX);
        curl_easy_setopt(c->e, CURLOPT_URL, p->ingest_url);
        curl_easy_setopt(c->e, CURLOPT_HTTPHEADER, p->hdr);
        curl_easy_setopt(c->e, CURLOPT_POST, 1L);
        curl_easy_setopt(c->e, CURLOPT_WRITEFUNCTION, collect_body);
        curl_easy_setopt(c->e, CURLOPT_WRITEDATA, NULL);
        curl_easy_setopt(c->e, CURLOPT_TCP_NODELAY, 1L);
        curl_easy_setopt(c->e, CURLOPT_TIMEOUT_MS, 10000L);
        curl_easy_setopt(c->e, CURLOPT_NOSIGNAL, 1L);
    }
    return 0;
}

static void teardown(struct pusher *p)
{
    for (unsigned i = 0; i < p->nconn; i++) {
        if (p->c[i].busy)
            curl_multi_remove_handle(p->m, p->c[i].e);
        curl_easy_cleanup(p->c[i].e);
        hn_buf_fini(&p->c[i].body);
    }
    curl_multi_cleanup(p->m);
    curl_slist_free_all(p->hdr);
    for (unsigned i = 0; i < p->nodes + p->nfaults; i++)
        hn_push_builder_fini(&p->b[i]);
    free(p->b);
    free(p->gs);
    free(p->train_at);
    free(p->rep);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Injects the faults one after the other at `rate`; prints their latencies. */
static void run_faults(struct pusher *p, double rate)
{
    double visible[MAX_FAULTS], done[MAX_FAULTS], reply[MAX_FAULTS];
    unsigned nv = 0, nd = 0, nr = 0;
    atomic_store(&p->phase_stop, 0);
    run_phase(p, rate, 1.0); /* settle at the rate */
    for (unsigned k = 0; k < p->nfaults; k++) {
        struct fault *f = &p->f[k];
        struct poller pl = {p, f};
        pthread_t th;
        atomic_store(&p->phase_stop, 0);
        if (pthread_create(&th, NULL, poll_main, &pl) != 0) {
            fprintf(stderr, "load: cannot start the poller\n");
            exit(1);
        }
        p->pending_fault = (int)k + 1;
        run_phase(p, rate, FAULT_WAIT + 2);
        pthread_join(th, NULL);
        atomic_store(&p->phase_stop, 0);
        run_phase(p, rate, 0.3); /* a gap between two faults */
        if (f->t_reply > 0 && f->status == 200)
            reply[nr++] = (f->t_reply - f->t_post) * 1e3;
        if (!isnan(f->visible))
            visible[nv++] = f->visible * 1e3;
        if (!isnan(f->done))
            done[nd++] = f->done * 1e3;
        printf("fault=%u node=%s status=%ld reply_ms=%.2f action_visible_ms=%.2f "
               "action_done_ms=%.2f\n",
               k + 1, f->name, f->status, f->t_reply > 0 ? (f->t_reply - f->t_post) * 1e3 : NAN,
               f->visible * 1e3, f->done * 1e3);
    }
    qsort(reply, nr, sizeof(double), cmp_double);
    qsort(visible, nv, sizeof(double), cmp_double);
    qsort(done, nd, sizeof(double), cmp_double);
    printf("faults=%u\nfaults_seen=%u\n", p->nfaults, nv);
    printf("fault_reply_ms_median=%.2f\n", nr ? reply[nr / 2] : NAN);
    printf("decision_ms_median=%.2f\ndecision_ms_max=%.2f\n", nv ? visible[nv / 2] : NAN,
           nv ? visible[nv - 1] : NAN);
    printf("action_done_ms_median=%.2f\n", nd ? done[nd / 2] : NAN);
}

static int cmd_push(int argc, char **argv)
{
    static const struct option opts[] = {
        {"url", required_argument, NULL, 'u'},       {"token-file", required_argument, NULL, 't'},
        {"pid", required_argument, NULL, 'p'},       {"nodes", required_argument, NULL, 'n'},
        {"steps", required_argument, NULL, 's'},     {"step-seconds", required_argument, NULL, 'd'},
        {"conns", required_argument, NULL, 'k'},     {"faults", required_argument, NULL, 'f'},
        {"links", required_argument, NULL, 'l'},     {"perf", required_argument, NULL, 'P'},
        {"train", required_argument, NULL, 'T'},     {"job-nodes", required_argument, NULL, 'J'},
        {"straggler", required_argument, NULL, 'S'}, {NULL, 0, NULL, 0},
    };
    static struct pusher p; /* large: the connections' state */
    const char *url = NULL, *token_file = NULL, *perf_out = NULL;
    const char *steps_arg = "500,1000,2000,4000,8000,16000,32000";
    double step_s = 6, steps[MAX_STEPS];
    unsigned nsteps = 0;
    uint64_t v;
    p.nodes = 1000;
    p.nconn = 16;
    p.nfaults = 5;
    p.job_nodes = 2048;
    int ch;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        int bad = 0;
        switch (ch) {
        case 'u':
            url = optarg;
            break;
        case 't':
            token_file = optarg;
            break;
        case 'P':
            perf_out = optarg;
            break;
        case 's':
            steps_arg = optarg;
            break;
        case 'd':
            bad = hn_parse_double(optarg, &step_s) != 0 || step_s <= 0 || step_s > 300;
            break;
        case 'S':
            bad = hn_parse_double(optarg, &p.strag) != 0 || !(p.strag >= 0 && p.strag <= 10);
            break;
        case 'p':
        case 'n':
        case 'k':
        case 'f':
        case 'l':
        case 'T':
        case 'J':
            if (hn_parse_u64(optarg, 10, &v) != 0 || v > (1u << 22)) {
                bad = 1; /* no option takes more than a pid (pid_max is at most 2^22) */
            } else if (ch == 'p') {
                p.pid = (long)v;
            } else if (ch == 'n') {
                bad = v == 0 || v > MAX_NODES;
                p.nodes = (unsigned)v;
            } else if (ch == 'k') {
                bad = v == 0 || v > MAX_CONNS;
                p.nconn = (unsigned)v;
            } else if (ch == 'f') {
                bad = v > MAX_FAULTS;
                p.nfaults = (unsigned)v;
            } else if (ch == 'T') {
                bad = v > TRAIN_MAX;
                p.train = (unsigned)v;
            } else if (ch == 'J') {
                bad = v == 0 || v > MAX_NODES;
                p.job_nodes = (unsigned)v;
            } else {
                bad = v > NVML_NVLINK_MAX_LINKS;
                p.links = (unsigned)v;
            }
            break;
        default:
            bad = 1;
        }
        if (bad) {
            fprintf(stderr, "load push: bad option (see the header of bench/ingest/load.c)\n");
            return 2;
        }
    }
    char err[256];
    if (!url || !token_file || p.pid <= 0 || parse_steps(steps_arg, steps, &nsteps) != 0 ||
        hn_strlcpy(p.base, url, sizeof(p.base)) >= sizeof(p.base)) {
        fprintf(stderr, "load push: --url, --token-file, --pid are required; --steps R1,R2,...\n");
        return 2;
    }
    if (hn_push_read_token(token_file, p.token, sizeof(p.token), err, sizeof(err)) != 0) {
        fprintf(stderr, "load push: %s\n", err);
        return 1;
    }
    if (p.strag > 0 && (!p.train || p.nodes <= STRAG_NODE || p.job_nodes <= STRAG_NODE)) {
        fprintf(stderr, "load push: --straggler needs --train and a job of 2 nodes or more\n");
        return 2;
    }
    if (proc_cpu_s(p.pid) < 0) {
        fprintf(stderr, "load push: cannot read /proc/%ld/stat\n", p.pid);
        return 1;
    }
    p.gs = gpu_set_new();
    p.train_at = xcalloc(p.nodes, sizeof(*p.train_at));
    p.rep = xcalloc((size_t)GPUS * (p.train ? p.train : 1), sizeof(*p.rep));
    p.strag_step = UINT64_MAX;
    p.b = xcalloc(p.nodes + p.nfaults, sizeof(*p.b));
    for (unsigned i = 0; i < p.nodes + p.nfaults; i++)
        hn_push_builder_init(&p.b[i], 0); /* a random boot_id: a fresh agent */
    for (unsigned k = 0; k < p.nfaults; k++) {
        p.f[k].node = p.nodes + k;
        node_name(p.f[k].name, sizeof(p.f[k].name), p.nodes + k);
        p.f[k].visible = p.f[k].done = NAN;
    }
    if (setup_transport(&p) != 0) {
        fprintf(stderr, "load push: libcurl set-up failed\n");
        return 1;
    }
    CURL *mc = curl_easy_init();
    struct hn_buf body;
    hn_buf_init(&body, 16u << 20);

    /* Warm-up: every node (and fault node) registers and sends a second frame, unmeasured. */
    unsigned all = p.nodes + p.nfaults;
    for (unsigned round = 0; round < 2; round++) {
        for (unsigned i = 0; i < all; i++) {
            struct conn *c;
            while (!(c = free_conn(&p))) {
                int running;
                curl_multi_perform(p.m, &running);
                reap(&p);
                curl_multi_poll(p.m, NULL, 0, 5, NULL);
            }
            if (post_frame(&p, c, i, 0) != 0) {
                fprintf(stderr, "load push: building a frame failed\n");
                return 1;
            }
        }
    }
    drain(&p);
    if (p.completed != 2ull * all) {
        fprintf(stderr,
                "load push: warm-up: %llu of %u frames accepted (%llu refused, %llu "
                "failed)\n",
                (unsigned long long)p.completed, 2 * all, (unsigned long long)p.refused,
                (unsigned long long)p.failed);
        return 1;
    }
    printf("nodes=%u\nconns=%u\nlinks=%u\n", p.nodes, p.nconn, p.links);
    printf("frame_bytes=%zu\n", p.b[0].frame.len);

    double sustained = 0, sustained_per_core = NAN, sustained_ns = NAN, sustained_samples = 0;
    double best_per_core = 0;
    int saturated_step = 0;
    double spf = NAN;
    static struct strag_poller sp;
    sp.p = &p;
    sp.found_s = NAN;
    pthread_t strag_th;
    int strag_run = 0;
    for (unsigned s = 0; s < nsteps; s++) {
        struct ctl_counters a, b;
        if (p.strag > 0 && s == nsteps - 1) {
            p.strag_on = 1;
            if (pthread_create(&strag_th, NULL, strag_main, &sp) != 0) {
                fprintf(stderr, "load push: cannot start the straggler poller\n");
                return 1;
            }
            strag_run = 1;
        }
        uint64_t refused0 = p.refused, failed0 = p.failed;
        if (read_counters(&p, mc, &body, &a) != 0) {
            fprintf(stderr, "load push: cannot read %s/metrics\n", p.base);
            return 1;
        }
        struct tasks ta, tb;
        tasks_read(p.pid, &ta);
        double c0 = proc_cpu_s(p.pid), l0 = self_cpu_s(), m0 = machine_busy_s(), t0 = mono_s();
        atomic_store(&p.phase_stop, 0);
        run_phase(&p, steps[s], step_s);
        double c1 = proc_cpu_s(p.pid), l1 = self_cpu_s(), m1 = machine_busy_s(), t1 = mono_s();
        tasks_read(p.pid, &tb);
        if (read_counters(&p, mc, &body, &b) != 0) {
            fprintf(stderr, "load push: cannot read %s/metrics\n", p.base);
            return 1;
        }
        double wall = t1 - t0, cpu = c1 - c0;
        double frames = b.frames - a.frames, samples = b.samples - a.samples;
        double fps = frames / wall, cores = cpu / wall;
        double per_core = cpu > 0 ? samples / cpu : NAN;
        double in_ingest = (b.ingest_s - a.ingest_s) / wall;
        double thread = tasks_max_delta(&ta, &tb) / wall;
        double load = (l1 - l0) / wall;
        double other = (m1 - m0) / wall - cores - load;
        /* The ingest runs on libmicrohttpd's one thread: it saturates at one core. */
        int sat = fps < 0.9 * steps[s] || thread > 0.95;
        if (frames > 0)
            spf = samples / frames;
        printf("step=%u target_fps=%.0f achieved_fps=%.0f samples_per_s=%.0f ctl_cores=%.3f "
               "ctl_thread_cores=%.3f in_ingest=%.3f samples_per_core_s=%.0f "
               "ctl_ns_per_sample=%.1f load_cores=%.3f other_cores=%.3f refused=%llu "
               "failed=%llu saturated=%d",
               s + 1, steps[s], fps, samples / wall, cores, thread, in_ingest, per_core,
               samples > 0 ? cpu / samples * 1e9 : NAN, load, other < 0 ? 0 : other,
               (unsigned long long)(p.refused - refused0), (unsigned long long)(p.failed - failed0),
               sat);
        if (p.train)
            printf(" reports_per_s=%.0f", (b.reports - a.reports) / wall);
        printf("\n");
        fflush(stdout);
        if (per_core > best_per_core)
            best_per_core = per_core;
        if (sat) {
            saturated_step = (int)s + 1;
            break;
        }
        sustained = steps[s];
        sustained_samples = samples / wall;
        sustained_per_core = per_core;
        sustained_ns = samples > 0 ? cpu / samples * 1e9 : NAN;
    }
    drain(&p);
    if (strag_run) {
        atomic_store(&sp.stop, 1);
        pthread_join(strag_th, NULL);
        printf("straggler_rank=%u\nstraggler_slowdown=%.3f\nstraggler_first_slow_step=%llu\n",
               STRAG_NODE * GPUS + STRAG_GPU, p.strag, (unsigned long long)p.strag_step);
        printf("straggler_found_s=%.1f\nstraggler_onset_step=%llu\nstraggler_detect_step=%llu\n",
               sp.found_s, sp.onset, sp.detect);
        printf("straggler_false_alarms=%u\n", sp.others);
        printf("straggler_job_ranks=%u\n", (p.nodes < p.job_nodes ? p.nodes : p.job_nodes) * GPUS);
    }
    printf("samples_per_frame=%.0f\n", spf);
    printf("saturated_step=%d\n", saturated_step);
    printf("sustained_fps=%.0f\nsustained_samples_per_s=%.0f\n", sustained, sustained_samples);
    printf("samples_per_core_s=%.0f\nctl_ns_per_sample=%.1f\n", sustained_per_core, sustained_ns);
    printf("best_samples_per_core_s=%.0f\n", best_per_core);
    fflush(stdout);

    double rate = sustained > 0 ? sustained : steps[0];
    if (p.nfaults)
        run_faults(&p, rate);
    fflush(stdout);

    if (perf_out) {
        struct profiler pr = {p.pid, perf_out, 0};
        pthread_t th;
        if (pthread_create(&th, NULL, perf_main, &pr) == 0) {
            atomic_store(&p.phase_stop, 0);
            run_phase(&p, rate, PROFILE_S + 1.5);
            pthread_join(th, NULL);
            printf("perf_rc=%d\nperf_fps=%.0f\n", pr.rc, rate);
        }
    }
    drain(&p);
    printf("frames_refused=%llu\nframes_failed=%llu\n", (unsigned long long)p.refused,
           (unsigned long long)p.failed);
    hn_buf_fini(&body);
    curl_easy_cleanup(mc);
    teardown(&p);
    return 0;
}

/* ---- serve ------------------------------------------------------------------------------ */

/* One HTTP server per SERVE_TARGETS nodes: libmicrohttpd takes 256 connections per server
 * (common/http.c) and Prometheus keeps one open per target. */
#define SERVE_TARGETS 200
#define MAX_SERVERS   64

struct server {
    struct hn_gpu_set *gs; /* this server's own: rendering writes labels and values */
    unsigned first, count; /* the nodes it serves */
    struct hn_http *http;
};

static void serve_node(void *ctx, const char *url, struct hn_http_reply *r)
{
    struct server *sv = ctx;
    /* /n/INDEX/metrics */
    char idx[16];
    const char *p = url + 3, *slash = strchr(p, '/');
    uint64_t node;
    if (!slash || strcmp(slash, "/metrics") != 0 || (size_t)(slash - p) >= sizeof(idx)) {
        r->status = 404;
        hn_buf_puts(&r->body, "not found\n");
        return;
    }
    memcpy(idx, p, (size_t)(slash - p));
    idx[slash - p] = '\0';
    if (hn_parse_u64(idx, 10, &node) != 0 || node < sv->first || node >= sv->first + sv->count) {
        r->status = 404;
        hn_buf_puts(&r->body, "no such node on this port\n");
        return;
    }
    fill_node(sv->gs, (unsigned)node, (uint64_t)hn_wall_s(), 0);
    for (unsigned g = 0; g < GPUS; g++)
        hn_gpus_format_labels(sv->gs, &sv->gs->gpus[g]);
    r->content_type = "text/plain; version=0.0.4; charset=utf-8";
    struct hn_expo e;
    hn_expo_init(&e, &r->body);
    hn_gpus_render(sv->gs, &e);
}

static int cmd_serve(int argc, char **argv)
{
    static const struct option opts[] = {
        {"listen", required_argument, NULL, 'L'},
        {"nodes", required_argument, NULL, 'n'},
        {NULL, 0, NULL, 0},
    };
    static const struct hn_http_route routes[] = {
        {.method = "GET", .path = "/n/*", .fn = serve_node},
    };
    static struct server sv[MAX_SERVERS];
    const char *host = "127.0.0.1";
    unsigned nodes = 100;
    uint64_t v;
    int ch;
    while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (ch == 'L') {
            host = optarg;
        } else if (ch == 'n' && hn_parse_u64(optarg, 10, &v) == 0 && v > 0 &&
                   v <= (uint64_t)SERVE_TARGETS * MAX_SERVERS) {
            nodes = (unsigned)v;
        } else {
            fprintf(stderr, "load serve: --listen ADDR --nodes N (at most %d)\n",
                    SERVE_TARGETS * MAX_SERVERS);
            return 2;
        }
    }
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    unsigned nservers = (nodes + SERVE_TARGETS - 1) / SERVE_TARGETS;
    char listen[160], err[256];
    int rc = 0;
    snprintf(listen, sizeof(listen), "%s:0", host);
    printf("per_server=%d\nports=", SERVE_TARGETS);
    for (unsigned i = 0; i < nservers && rc == 0; i++) {
        sv[i].gs = gpu_set_new();
        sv[i].first = i * SERVE_TARGETS;
        sv[i].count = nodes - sv[i].first < SERVE_TARGETS ? nodes - sv[i].first : SERVE_TARGETS;
        sv[i].http = hn_http_start(listen, routes, HN_ARRAY_LEN(routes), &sv[i], err, sizeof(err));
        if (!sv[i].http) {
            fprintf(stderr, "load serve: %s\n", err);
            rc = 1;
            break;
        }
        printf("%s%u", i ? "," : "", hn_http_port(sv[i].http));
    }
    printf("\n");
    fflush(stdout);
    if (rc == 0) {
        int sig;
        sigwait(&set, &sig);
    }
    for (unsigned i = 0; i < nservers; i++) {
        hn_http_stop(sv[i].http);
        free(sv[i].gs);
    }
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "push") != 0 && strcmp(argv[1], "serve") != 0)) {
        fprintf(stderr, "usage: load push|serve OPTIONS (see bench/ingest/load.c)\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc =
        strcmp(argv[1], "push") == 0 ? cmd_push(argc - 1, argv + 1) : cmd_serve(argc - 1, argv + 1);
    curl_global_cleanup();
    return rc;
}
