/*
 * sim.c - the fleet simulator (see sim.h and docs/sim.md).
 *
 * One event queue (a binary heap ordered by time, then by insertion), one random stream, one
 * job. The job's state machine:
 *
 *   RUNNING --macro-step--> RUNNING ... --ckpt_interval of compute--> CKPT --write--> RUNNING
 *   RUNNING/CKPT --fault on a job node--> DOWN (crashed) or HUNG (no progress)
 *   any --requeue (the brain, or operators after fallback_detect)--> RESTARTING --u0--> RUNNING
 *   RESTARTING --not enough healthy nodes--> WAITING --a node comes back--> RESTARTING
 *
 * Truth accounting: every second of the job's wall time is either kept (computing steps that
 * no restart threw away) or lost to a cause (recomputation, restarts, hangs, checkpoint
 * writes, waiting for nodes); the two add up to the wall time (tests/unit/test_sim.c checks).
 * ETTR is kept / wall, as Meta defines it. A straggler makes kept steps slower: that shows in
 * MFU (nominal compute over kept time), and is also listed as GPU time lost to "straggler". Stale
 * events (a step of a run that crashed) carry the run's epoch and are ignored.
 */
#include "sim/sim.h"

#include "common/rng.h"
#include "common/util.h"
#include "common/xid.h"
#include "brain/brain.h"
#include "common/sku.h"
#include "common/stats.h"
#include "common/stepmsg.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DAY         86400.0
#define MAX_CAUSES  64
#define TIMELINE_W  160
#define LATENCY_MAX 65536

/* ---- configuration ---- */

void hn_sim_config_default(struct hn_sim_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->gpus = 16384;
    cfg->gpus_per_node = 8;
    cfg->days = 54;
    cfg->node_failure_rate = 419.0 / (54.0 * 2048.0);
    cfg->ckpt_interval_s = 3600;
    cfg->ckpt_write_s = 60;
    cfg->restart_overhead_s = 600;
    cfg->report_s = 60;
    cfg->repair_s = 48 * 3600;
    cfg->inspect_s = 4 * 3600;
    cfg->fallback_detect_s = 1800;
    cfg->straggler_rate = 0.002;
    cfg->straggler_slowdown = 0.3;
    cfg->base_mfu = 0.40;
    cfg->tick_s = 300;
    cfg->seed = 1;
    cfg->policy = HN_SIM_STRAGGLER;
    cfg->precursors = 1;
    cfg->timeline_max = 200;
    cfg->spares = UINT32_MAX; /* derived */
    cfg->nodes_per_rack = 0;  /* derived */
    snprintf(cfg->failures_file, sizeof(cfg->failures_file), "%s/failures.csv", HN_DATADIR);
}

const char *const hn_sim_policy_names[HN_SIM_NPOLICIES + 1] = {"reactive", "straggler",
                                                               "predictive", NULL};

const char *hn_sim_policy_name(enum hn_sim_policy p)
{
    return (unsigned)p < HN_SIM_NPOLICIES ? hn_sim_policy_names[p] : "unknown";
}

const char *hn_sim_cause_name(enum hn_sim_cause c)
{
    static const char *const names[HN_SIM_NCAUSES] = {"failure",    "straggler",  "hang",
                                                      "predictive", "checkpoint", "waiting"};
    return (unsigned)c < HN_SIM_NCAUSES ? names[c] : "unknown";
}

double hn_sim_expected_ettr(double nodes, double rate_per_node_s, double u0_s, double ckpt_s,
                            double write_s)
{
    return (1 - nodes * rate_per_node_s * (u0_s + ckpt_s / 2)) / (1 + write_s / ckpt_s);
}

/* ---- the model ---- */

enum signal { SIG_XID, SIG_DBE, SIG_IB, SIG_LOST, SIG_HANG, SIG_SILENT };

struct cause {
    char name[48];
    double weight;
    enum signal sig;
    unsigned xid;
    double precursor_prob, precursor_lead_s;
};

enum ev_kind {
    EV_STEP,      /* a = epoch */
    EV_CKPT_DONE, /* a = epoch */
    EV_FAIL,      /* the next fault somewhere in the fleet */
    EV_NODE_FAIL, /* a = node, b = cause, c = node epoch */
    EV_SLOW,      /* the next slowdown onset */
    EV_REPAIRED,  /* a = node, c = node epoch */
    EV_RESTART,   /* a = epoch */
    EV_FALLBACK,  /* a = epoch: operators act on a job houston left down */
    EV_TICK,
};

struct event {
    double t;
    uint64_t seq;
    enum ev_kind kind;
    int a, b;
    unsigned c;
};

enum node_state { N_OK, N_BROKEN, N_OUT }; /* OUT: drained healthy, being inspected */

struct snode {
    enum node_state st;
    unsigned epoch;      /* +1 each time it goes out of service; stale events ignored */
    int in_job;          /* rank + 1, 0 when not in the job */
    double slow;         /* extra compute fraction (a throttled GPU) */
    int pending_cause;   /* a failure announced by a precursor, -1 none */
    double fault_t;      /* when its fault or slowdown began, 0 none */
    int detected;        /* the brain found it */
    int drained;         /* houston drained it and has not resumed it */
    int idle_told;       /* the brain was told it is empty */
    int listed;          /* the last scheduler poll listed the job on it */
    double sbe;          /* correctable ECC count (precursor signal) */
    char fault_kind[64]; /* what fault_t began: "fault: CAUSE", "precursor: CAUSE", ... */
    double dbe, downed;  /* counters behind the other signals */
};

enum job_state { J_RUNNING, J_CKPT, J_DOWN, J_HUNG, J_RESTARTING, J_WAITING };

struct hn_sim {
    struct hn_sim_config cfg;
    struct hn_brain *brain;
    struct hn_xid_catalog *catalog;
    struct hn_sku_table *skus;
    uint64_t rng[4];
    struct event *heap;
    size_t nheap, capheap;
    uint64_t seq;
    double now, end;
    struct cause causes[MAX_CAUSES];
    size_t ncauses;
    double cause_total;
    struct snode *nodes;
    unsigned nnodes, job_n;
    int *ranks; /* rank -> node */
    /* the job */
    enum job_state js;
    unsigned epoch;
    double state_since;           /* when js was entered */
    enum hn_sim_cause down_cause; /* why it is DOWN / HUNG / RESTARTING */
    double kept, ckpt_kept;       /* wall time of kept steps, and at the last checkpoint */
    double nominal, ckpt_nominal; /* the same steps' compute at full speed */
    double since_ckpt_wall;
    uint64_t step, ckpt_step;
    double step_started, step_wall;
    char job_id[16];
    /* truth */
    double lost[HN_SIM_NCAUSES];
    double waste; /* slowdown of kept steps (wall - nominal), for lost[straggler] */
    struct hn_sim_result r;
    double *latency;
    size_t nlatency;
    struct hn_sim_detection *detections;
    size_t ndetections;
    char **timeline;
    size_t ntimeline;
    hn_sim_output_fn hook;
    void *hook_ctx;
    int started, closed;
};

/* Uniform in [0, 1) from the run's xoshiro256** (common/rng.h; seed_rng). */
static double uniform(struct hn_sim *s)
{
    return (double)(hn_xoshiro_next(s->rng) >> 11) * 0x1.0p-53;
}

static double expo(struct hn_sim *s, double rate)
{
    return -log(1 - uniform(s)) / rate;
}

static void seed_rng(struct hn_sim *s, uint64_t seed)
{
    hn_xoshiro_seed(s->rng, seed);
}

/* The brain's clock: virtual seconds since the start, plus the configured epoch (0 for
 * `houston sim`; the wall-clock start for `houston demo`, so that times read as dates). */
static double bnow(const struct hn_sim *s)
{
    return s->cfg.epoch_s + s->now;
}

/* ---- events ---- */

static int ev_before(const struct event *a, const struct event *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void push(struct hn_sim *s, double t, enum ev_kind kind, int a, int b, unsigned c)
{
    if (s->nheap == s->capheap) {
        s->capheap = s->capheap ? 2 * s->capheap : 1024;
        s->heap = xrealloc(s->heap, s->capheap * sizeof(*s->heap));
    }
    size_t i = s->nheap++;
    struct event e = {t, s->seq++, kind, a, b, c};
    while (i > 0 && ev_before(&e, &s->heap[(i - 1) / 2])) {
        s->heap[i] = s->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->heap[i] = e;
}

static struct event pop(struct hn_sim *s)
{
    struct event top = s->heap[0], last = s->heap[--s->nheap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->nheap)
            break;
        if (c + 1 < s->nheap && ev_before(&s->heap[c + 1], &s->heap[c]))
            c++;
        if (!ev_before(&s->heap[c], &last))
            break;
        s->heap[i] = s->heap[c];
        i = c;
    }
    if (s->nheap)
        s->heap[i] = last;
    return top;
}

static void timeline(struct hn_sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void timeline(struct hn_sim *s, const char *fmt, ...)
{
    if (s->ntimeline >= s->cfg.timeline_max)
        return;
    char *line = xmalloc(TIMELINE_W);
    int n = snprintf(line, TIMELINE_W, "%.0f ", s->now);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, TIMELINE_W - (size_t)n, fmt, ap);
    va_end(ap);
    s->timeline[s->ntimeline++] = line;
}

/* ---- the failure table ---- */

static int load_causes(struct hn_sim *s, char *err, size_t errsize)
{
    char *data = NULL;
    size_t len = 0;
    char why[256];
    if (hn_csv_read_file(s->cfg.failures_file, &data, &len, why, sizeof(why)) != 0) {
        snprintf(err, errsize, "failures-file: %s", why);
        return -1;
    }
    struct hn_csv_reader r;
    hn_csv_reader_init(&r, data, len);
    int rc = 0, rec, line = 0;
    while ((rec = hn_csv_reader_next(&r, why, sizeof(why))) != 0) {
        line++;
        if (rec < 0 || r.nfields < 5) {
            snprintf(err, errsize, "failures-file %s: record %d: %s", s->cfg.failures_file, line,
                     rec < 0 ? why : "want cause,interruptions,signal,precursor_prob,lead_h");
            rc = -1;
            break;
        }
        if (line == 1)
            continue;
        if (s->ncauses == MAX_CAUSES) {
            snprintf(err, errsize, "failures-file: more than %d causes", MAX_CAUSES);
            rc = -1;
            break;
        }
        struct cause *c = &s->causes[s->ncauses];
        memset(c, 0, sizeof(*c));
        hn_strlcpy(c->name, r.field[0], sizeof(c->name));
        const char *sig = r.field[2];
        double lead_h = 0;
        int ok = hn_parse_double(r.field[1], &c->weight) == 0 && c->weight >= 0 &&
                 hn_parse_double(r.field[3], &c->precursor_prob) == 0 && c->precursor_prob >= 0 &&
                 c->precursor_prob <= 1 && hn_parse_double(r.field[4], &lead_h) == 0 && lead_h >= 0;
        c->precursor_lead_s = lead_h * 3600;
        uint64_t code;
        if (strncmp(sig, "xid:", 4) == 0 && hn_parse_u64(sig + 4, 10, &code) == 0 && code < 10000)
            c->sig = SIG_XID, c->xid = (unsigned)code;
        else if (strcmp(sig, "dbe") == 0)
            c->sig = SIG_DBE;
        else if (strcmp(sig, "ib_down") == 0)
            c->sig = SIG_IB;
        else if (strcmp(sig, "lost") == 0)
            c->sig = SIG_LOST;
        else if (strcmp(sig, "hang") == 0)
            c->sig = SIG_HANG;
        else if (strcmp(sig, "silent") == 0)
            c->sig = SIG_SILENT;
        else
            ok = 0;
        if (!ok) {
            snprintf(err, errsize, "failures-file %s: record %d (%s): bad value",
                     s->cfg.failures_file, line, c->name);
            rc = -1;
            break;
        }
        s->cause_total += c->weight;
        s->ncauses++;
    }
    hn_csv_reader_fini(&r);
    free(data);
    if (rc == 0 && !(s->cause_total > 0)) {
        snprintf(err, errsize, "failures-file %s: no cause with interruptions",
                 s->cfg.failures_file);
        rc = -1;
    }
    return rc;
}

static int draw_cause(struct hn_sim *s)
{
    double x = uniform(s) * s->cause_total;
    for (size_t i = 0; i < s->ncauses; i++) {
        if (x < s->causes[i].weight)
            return (int)i;
        x -= s->causes[i].weight;
    }
    return (int)s->ncauses - 1;
}

/* ---- the brain's side ---- */

static void detection(struct hn_sim *s, int node)
{
    struct snode *n = &s->nodes[node];
    if (n->fault_t <= 0 || n->detected)
        return;
    n->detected = 1;
    s->r.detected++;
    if (s->nlatency < LATENCY_MAX)
        s->latency[s->nlatency++] = s->now - n->fault_t;
    if (s->ndetections < HN_SIM_DETECTIONS_MAX) {
        struct hn_sim_detection *d = &s->detections[s->ndetections++];
        d->time_s = n->fault_t;
        d->latency_s = s->now - n->fault_t;
        d->node = node;
        hn_strlcpy(d->kind, n->fault_kind, sizeof(d->kind));
    }
}

static void job_interrupt(struct hn_sim *s, enum hn_sim_cause cause);

static void brain_outputs(struct hn_sim *s)
{
    struct hn_out o;
    while (hn_brain_poll(s->brain, &o)) {
        if (s->hook)
            s->hook(s->hook_ctx, &o);
        int node = o.node[0] ? hn_brain_find_node(s->brain, o.node) : -1;
        if (o.kind == HN_OUT_FINDING && node >= 0 && o.finding.severity >= HN_SEV_SUSPECT)
            detection(s, node);
        if (o.kind == HN_OUT_FINDING && o.finding.severity >= HN_SEV_SUSPECT) {
            /* A decision's detail names its rule already ("straggler: job 1001 ..."). */
            size_t rl = strlen(o.finding.rule);
            int named =
                strncmp(o.finding.detail, o.finding.rule, rl) == 0 && o.finding.detail[rl] == ':';
            timeline(s, "finding %s %s%s%.100s", o.node, named ? "" : o.finding.rule,
                     named ? "" : ": ", o.finding.detail);
        }
        if (o.kind != HN_OUT_ACTION || node < 0)
            continue;
        struct snode *n = &s->nodes[node];
        switch (o.action.kind) {
        case HN_ACT_DRAIN:
            s->r.drains++;
            n->drained = 1;
            n->idle_told = 0;
            if (n->st == N_OK && n->slow == 0 && n->pending_cause < 0)
                s->r.false_drains++;
            if (n->st == N_OK) {
                /* Healthy or degraded: out for inspection; a slow GPU is fixed there. A
                 * pending failure is thereby avoided. */
                if (n->pending_cause >= 0) {
                    s->r.predicted++; /* the failing part is replaced before it fails */
                    n->pending_cause = -1;
                }
                n->st = N_OUT;
                n->epoch++;
                push(s, s->now + s->cfg.inspect_s, EV_REPAIRED, node, 0, n->epoch);
            }
            timeline(s, "drain %s (%.80s)", o.node, o.action.reason);
            break;
        case HN_ACT_REQUEUE:
            if (s->js == J_RUNNING || s->js == J_CKPT || s->js == J_DOWN || s->js == J_HUNG) {
                enum hn_sim_cause c = s->js == J_DOWN || s->js == J_HUNG ? s->down_cause
                                      : n->slow > 0                      ? HN_SIM_LOST_STRAGGLER
                                      : n->pending_cause >= 0            ? HN_SIM_LOST_PREDICTIVE
                                                                         : HN_SIM_LOST_FAILURE;
                timeline(s, "requeue job %s (%s)", s->job_id, hn_sim_cause_name(c));
                job_interrupt(s, c);
            }
            break;
        case HN_ACT_RESUME:
            n->drained = 0;
            break;
        }
    }
}

/* ---- the job ---- */

static double job_slowdown(const struct hn_sim *s)
{
    double m = 0;
    for (unsigned r = 0; r < s->job_n; r++)
        m = fmax(m, s->nodes[s->ranks[r]].slow);
    return m;
}

static void schedule_step(struct hn_sim *s)
{
    double smax = job_slowdown(s);
    s->step_started = s->now;
    s->step_wall = s->cfg.report_s * (1 + smax);
    push(s, s->now + s->step_wall, EV_STEP, (int)s->epoch, 0, 0);
}

static void set_state(struct hn_sim *s, enum job_state js)
{
    s->js = js;
    s->state_since = s->now;
}

/* The job's ranks on each node: ranks_per_node, one per GPU from GPU 0, at most the node's
 * GPUs; 0 (the default) is 1. Rank r*per+g runs on GPU g of the job's r-th node. */
static unsigned ranks_per_node(const struct hn_sim *s)
{
    unsigned per = s->cfg.ranks_per_node ? s->cfg.ranks_per_node : 1;
    return per < s->cfg.gpus_per_node ? per : s->cfg.gpus_per_node;
}

/* Every rank (but those on node `skip`) reports the step that just ended. */
static void report_step(struct hn_sim *s, int skip)
{
    double smax = job_slowdown(s);
    double wall = s->cfg.report_s * (1 + smax);
    const struct hn_sku *sku = s->skus ? hn_sku_find(s->skus, s->cfg.sku) : NULL;
    double peak = sku ? hn_sku_peak_flops(sku, "bf16") : NAN;
    unsigned per = ranks_per_node(s);
    for (unsigned r = 0; r < s->job_n; r++) {
        int node = s->ranks[r];
        if (node == skip)
            continue;
        for (unsigned g = 0; g < per; g++) { /* a slowed node's GPU 0 is throttled */
            double slow = g == 0 ? s->nodes[node].slow : 0;
            double compute = s->cfg.report_s * 0.9 * (1 + slow);
            struct hn_step_in in;
            hn_step_in_init(&in, s->job_id, r * per + g, s->step, wall);
            in.local_rank = g;
            in.world = (int64_t)s->job_n * per;
            in.gpu = g;
            in.comm_s = wall - compute;
            in.tflops = s->cfg.base_mfu * peak / 1e12 / (1 + smax);
            in.checkpoint = (int64_t)s->ckpt_step;
            hn_brain_step(s->brain, bnow(s), node, &in);
            s->r.step_reports++;
        }
    }
}

/* The steps since the last checkpoint, and the unfinished step or checkpoint write, are lost
 * to cause: the job will compute them again. */
static void rollback(struct hn_sim *s, enum hn_sim_cause cause)
{
    s->lost[cause] += s->kept - s->ckpt_kept;
    s->lost[cause] += s->now - (s->js == J_RUNNING ? s->step_started : s->state_since);
    s->waste -= (s->kept - s->ckpt_kept) - (s->nominal - s->ckpt_nominal);
    s->kept = s->ckpt_kept;
    s->nominal = s->ckpt_nominal;
}

/* The job stops making progress for cause (a crash, a requeue of a running job): the work
 * since the last checkpoint and the unfinished step are lost; it restarts after the restart
 * overhead on healthy nodes. */
static void job_interrupt(struct hn_sim *s, enum hn_sim_cause cause)
{
    if (s->js == J_RUNNING || s->js == J_CKPT) {
        rollback(s, cause);
    } else if (s->js == J_DOWN || s->js == J_HUNG) {
        s->lost[s->down_cause] += s->now - s->state_since;
    } else {
        return; /* already restarting */
    }
    s->r.interruptions++;
    s->down_cause = cause;
    s->epoch++;
    set_state(s, J_RESTARTING);
    push(s, s->now + s->cfg.restart_overhead_s, EV_RESTART, (int)s->epoch, 0, 0);
}

/* The job crashed or hung because of node's fault; it waits for houston, or for operators. */
static void job_down(struct hn_sim *s, enum job_state js, enum hn_sim_cause cause)
{
    if (s->js != J_RUNNING && s->js != J_CKPT)
        return;
    rollback(s, cause);
    s->epoch++;
    s->down_cause = cause;
    set_state(s, js);
    push(s, s->now + s->cfg.fallback_detect_s, EV_FALLBACK, (int)s->epoch, 0, 0);
}

static int usable(const struct snode *n)
{
    return n->st == N_OK && !n->drained;
}

/* Replaces the job's unusable nodes with usable spares; 0 when it cannot. */
static int assemble(struct hn_sim *s)
{
    unsigned next = 0;
    for (unsigned r = 0; r < s->job_n; r++) {
        struct snode *n = &s->nodes[s->ranks[r]];
        if (usable(n))
            continue;
        while (next < s->nnodes && (s->nodes[next].in_job || !usable(&s->nodes[next])))
            next++;
        if (next == s->nnodes)
            return 0;
        n->in_job = 0;
        s->ranks[r] = (int)next;
        s->nodes[next].in_job = (int)r + 1;
    }
    return 1;
}

static void job_start(struct hn_sim *s)
{
    if (!assemble(s)) {
        if (s->js != J_WAITING) {
            s->lost[s->down_cause] += s->now - s->state_since;
            set_state(s, J_WAITING);
            timeline(s, "job %s waits for healthy nodes", s->job_id);
        }
        return;
    }
    if (s->js == J_WAITING)
        s->lost[HN_SIM_LOST_WAITING] += s->now - s->state_since;
    else
        s->lost[s->down_cause] += s->now - s->state_since;
    s->epoch++;
    s->step = s->ckpt_step;
    s->since_ckpt_wall = 0;
    set_state(s, J_RUNNING);
    schedule_step(s);
}

/* Rank 0 announces a checkpoint save (pause: a pause notice, docs/steps.md), or says at once
 * that the checkpoint is written (HN_PAUSE_NONE: a client reports ckpt= with its next step;
 * with reports minutes apart, the brain would learn of it too late). */
static void report_rank0(struct hn_sim *s, int pause)
{
    struct hn_step_in in;
    hn_step_in_init(&in, s->job_id, 0, s->step, s->step_wall);
    in.local_rank = 0;
    in.world = (int64_t)s->job_n * ranks_per_node(s);
    in.gpu = 0;
    in.checkpoint = (int64_t)s->ckpt_step;
    in.pause = pause;
    hn_brain_step(s->brain, bnow(s), s->ranks[0], &in);
    s->r.step_reports++;
    brain_outputs(s);
}

static void on_step(struct hn_sim *s, const struct event *e)
{
    if ((unsigned)e->a != s->epoch || s->js != J_RUNNING)
        return;
    s->step++;
    s->kept += s->step_wall;
    s->nominal += s->cfg.report_s;
    s->waste += s->step_wall - s->cfg.report_s;
    s->since_ckpt_wall += s->step_wall;
    s->step_started = s->now; /* that step is kept: an interruption now loses nothing of it */
    report_step(s, -1);
    brain_outputs(s);
    if (s->js != J_RUNNING || (unsigned)e->a != s->epoch)
        return; /* the report made houston requeue the job */
    if (s->since_ckpt_wall >= s->cfg.ckpt_interval_s) {
        set_state(s, J_CKPT);
        report_rank0(s, HN_PAUSE_CHECKPOINT); /* a write longer than the hang limit is no hang */
        push(s, s->now + s->cfg.ckpt_write_s, EV_CKPT_DONE, (int)s->epoch, 0, 0);
        return;
    }
    schedule_step(s);
}

static void on_ckpt_done(struct hn_sim *s, const struct event *e)
{
    if ((unsigned)e->a != s->epoch || s->js != J_CKPT)
        return;
    s->lost[HN_SIM_LOST_CHECKPOINT] += s->now - s->state_since;
    s->ckpt_kept = s->kept;
    s->ckpt_nominal = s->nominal;
    s->ckpt_step = s->step;
    s->since_ckpt_wall = 0;
    set_state(s, J_RUNNING);
    s->step_started = s->now;
    report_rank0(s, HN_PAUSE_NONE);
    if (s->js != J_RUNNING || (unsigned)e->a != s->epoch)
        return; /* houston replaced a node at this checkpoint and requeued the job */
    schedule_step(s);
}

/* ---- faults ---- */

static void signal_brain(struct hn_sim *s, int node, const struct cause *c)
{
    struct snode *n = &s->nodes[node];
    switch (c->sig) {
    case SIG_XID:
        hn_brain_xid(s->brain, bnow(s), node, 0, c->xid);
        break;
    case SIG_DBE: {
        unsigned f = HN_F_ECC_DBE_VOL;
        n->dbe += 1;
        hn_brain_samples(s->brain, bnow(s), node, 0, &f, &n->dbe, 1);
        break;
    }
    case SIG_IB:
        n->downed += 1;
        hn_brain_ib_port(s->brain, bnow(s), node, "mlx5_0/1", 0, (uint64_t)n->downed);
        break;
    case SIG_LOST:
        hn_brain_gpu_lost(s->brain, bnow(s), node, 0, 1);
        break;
    case SIG_HANG:
    case SIG_SILENT:
        break;
    }
}

static void node_fails(struct hn_sim *s, int node, int ci)
{
    struct snode *n = &s->nodes[node];
    const struct cause *c = &s->causes[ci];
    n->pending_cause = -1;
    if (n->st != N_OK)
        return; /* replaced in time (predictive), or already broken */
    s->r.failures++;
    n->st = N_BROKEN;
    n->epoch++;
    n->fault_t = s->now;
    n->detected = 0;
    snprintf(n->fault_kind, sizeof(n->fault_kind), "fault: %s", c->name);
    push(s, s->now + s->cfg.repair_s, EV_REPAIRED, node, 0, n->epoch);
    timeline(s, "fault on node %d: %s", node, c->name);
    if (n->in_job && (s->js == J_RUNNING || s->js == J_CKPT)) {
        s->r.job_failures++;
        if (c->sig == SIG_HANG) {
            /* The other ranks finish the step and wait in the next all-reduce. */
            s->step++;
            report_step(s, node);
            s->step--;
            job_down(s, J_HUNG, HN_SIM_LOST_HANG);
        } else {
            job_down(s, J_DOWN, HN_SIM_LOST_FAILURE);
        }
    }
    signal_brain(s, node, c);
    brain_outputs(s);
}

static void on_fail(struct hn_sim *s)
{
    double rate = s->cfg.node_failure_rate / DAY * s->nnodes;
    if (rate > 0)
        push(s, s->now + expo(s, rate), EV_FAIL, 0, 0, 0);
    int node = (int)(uniform(s) * s->nnodes);
    struct snode *n = &s->nodes[node];
    int ci = draw_cause(s);
    const struct cause *c = &s->causes[ci];
    if (n->st != N_OK || n->pending_cause >= 0)
        return;
    if (s->cfg.precursors && c->precursor_lead_s > 0 && uniform(s) < c->precursor_prob) {
        /* Announced: correctable errors rise until the failure lead_s later. */
        n->pending_cause = ci;
        n->fault_t = s->now;
        n->detected = 0;
        snprintf(n->fault_kind, sizeof(n->fault_kind), "precursor: %s", c->name);
        push(s, s->now + c->precursor_lead_s, EV_NODE_FAIL, node, ci, n->epoch);
        return;
    }
    node_fails(s, node, ci);
}

static void on_slow(struct hn_sim *s)
{
    double rate = s->cfg.straggler_rate / DAY * s->nnodes;
    if (rate > 0)
        push(s, s->now + expo(s, rate), EV_SLOW, 0, 0, 0);
    int node = (int)(uniform(s) * s->nnodes);
    struct snode *n = &s->nodes[node];
    if (n->st != N_OK || n->slow > 0 || n->pending_cause >= 0)
        return;
    n->slow = s->cfg.straggler_slowdown;
    n->fault_t = s->now;
    n->detected = 0;
    snprintf(n->fault_kind, sizeof(n->fault_kind), "slowdown");
    s->r.stragglers++;
    timeline(s, "node %d slows down by %.0f%%%s", node, n->slow * 100,
             n->in_job ? " (in the job)" : "");
}

static void on_repaired(struct hn_sim *s, const struct event *e)
{
    struct snode *n = &s->nodes[e->a];
    if (e->c != n->epoch || n->st == N_OK)
        return;
    n->st = N_OK;
    n->slow = 0;
    n->fault_t = 0;
    /* Repaired: the GPU's volatile counters start from zero, its port is up again. */
    n->sbe = n->dbe = 0;
    unsigned f[2] = {HN_F_ECC_SBE_VOL, HN_F_ECC_DBE_VOL};
    double zero[2] = {0, 0};
    hn_brain_samples(s->brain, bnow(s), e->a, 0, f, zero, 2);
    hn_brain_ib_port(s->brain, bnow(s), e->a, "mlx5_0/1", 1, (uint64_t)n->downed);
    hn_brain_gpu_lost(s->brain, bnow(s), e->a, 0, 0);
    /* Operators return it; the brain resumes it in the scheduler if it drained it. */
    hn_brain_resume(s->brain, bnow(s), e->a, "sim-ops");
    n->drained = 0;
    brain_outputs(s);
    if (s->js == J_WAITING)
        job_start(s);
}

static void on_fallback(struct hn_sim *s, const struct event *e)
{
    if ((unsigned)e->a != s->epoch || (s->js != J_DOWN && s->js != J_HUNG))
        return;
    /* Operators restart the job without the broken node, which they take out themselves. */
    for (unsigned r = 0; r < s->job_n; r++) {
        struct snode *n = &s->nodes[s->ranks[r]];
        if (n->st == N_BROKEN)
            n->drained = 1;
    }
    timeline(s, "operators restart job %s (houston did not)", s->job_id);
    job_interrupt(s, s->down_cause);
}

/* Each GPU of the running job's nodes, as its agent would report it: busy, at full clock,
 * except a slowed node's GPU 0, throttled (SW thermal slowdown) by its slowdown. */
static void gpu_samples(struct hn_sim *s)
{
    static const unsigned f[] = {HN_F_GPU_UTIL, HN_F_SM_CLOCK, HN_F_POWER, HN_F_GPU_TEMP,
                                 HN_F_CLOCK_REASONS};
    for (unsigned r = 0; r < s->job_n; r++) {
        int node = s->ranks[r];
        const struct snode *n = &s->nodes[node];
        for (unsigned g = 0; g < s->cfg.gpus_per_node; g++) {
            int slow = g == 0 && n->slow > 0;
            double jitter = (double)((node * 7 + (int)g * 3) % 5);
            double v[] = {97, slow ? 1980 / (1 + n->slow) : 1980 - jitter, 1000 - jitter * 3,
                          62 + jitter, slow ? 0x20 : 0x4};
            hn_brain_samples(s->brain, bnow(s), node, g, f, v, 5);
        }
    }
}

static void on_tick(struct hn_sim *s)
{
    push(s, s->now + s->cfg.tick_s, EV_TICK, 0, 0, 0);
    int listed = s->js == J_RUNNING || s->js == J_CKPT || s->js == J_HUNG;
    for (unsigned i = 0; i < s->nnodes; i++) {
        struct snode *n = &s->nodes[i];
        hn_brain_node_heard(s->brain, bnow(s), (int)i, bnow(s), 1); /* every agent reports */
        /* The poll: the job's nodes while it runs; a node that no longer runs it is told so
         * once (nothing changes for the others). */
        int on = listed && n->in_job;
        if (on || n->listed) {
            hn_brain_node_job(s->brain, bnow(s), (int)i, "");
            if (on)
                hn_brain_node_job(s->brain, bnow(s), (int)i, s->job_id);
            n->listed = on;
        }
        if (!on && n->drained && !n->idle_told) {
            hn_brain_node_idle(s->brain, bnow(s), (int)i);
            n->idle_told = 1;
        }
        if (n->pending_cause >= 0 && n->st == N_OK) {
            /* The precursor: correctable errors at 200 an hour. */
            unsigned f = HN_F_ECC_SBE_VOL;
            n->sbe += 200 * s->cfg.tick_s / 3600;
            hn_brain_samples(s->brain, bnow(s), (int)i, 0, &f, &n->sbe, 1);
        }
    }
    if (s->cfg.gpu_samples && listed)
        gpu_samples(s);
    hn_brain_tick(s->brain, bnow(s));
    brain_outputs(s);
}

/* ---- set-up and run ---- */

struct hn_sim *hn_sim_new(const struct hn_sim_config *cfg, char *err, size_t errsize)
{
    struct hn_sim *s = xcalloc(1, sizeof(*s));
    s->cfg = *cfg;
    struct hn_sim_config *c = &s->cfg;
    if (!c->sku[0])
        hn_strlcpy(c->sku, c->gpus_per_node == 4 ? "GB200" : "H100", sizeof(c->sku));
    if (!c->nodes_per_rack)
        c->nodes_per_rack = c->gpus_per_node == 4 ? 18 : 1;
    s->nnodes = (c->gpus + c->gpus_per_node - 1) / c->gpus_per_node;
    if (c->spares == UINT32_MAX)
        c->spares = s->nnodes / 50 > 0 ? s->nnodes / 50 : 1;
    if (c->spares >= s->nnodes || c->report_s >= c->ckpt_interval_s) {
        snprintf(err, errsize, "%s",
                 c->spares >= s->nnodes ? "spares: must leave nodes for the job"
                                        : "report: must be shorter than ckpt-interval");
        free(s);
        return NULL;
    }
    if (load_causes(s, err, errsize) != 0) {
        free(s);
        return NULL;
    }
    s->catalog = hn_xid_catalog_new(hn_xid_default_catalog(), err, errsize);
    s->skus = hn_sku_table_new(hn_sku_default_path(), err, errsize);
    if (!s->catalog || !s->skus) {
        hn_sim_free(s);
        return NULL;
    }
    struct hn_brain_config bc;
    hn_brain_config_default(&bc);
    bc.xid_catalog = s->catalog;
    bc.skus = s->skus;
    bc.guard_fraction = 0.05; /* a large fleet keeps its blast-radius guard */
    bc.guard_per_rack = 0;
    bc.burnin_s = 0;
    bc.restart_s = c->restart_overhead_s;
    bc.hang_min_s = 300;
    bc.predictive = c->policy == HN_SIM_PREDICTIVE;
    if (c->policy == HN_SIM_REACTIVE)
        bc.straggler_horizon_s = 0; /* stragglers are reported, never replaced */
    s->brain = hn_brain_new(&bc);
    s->job_n = s->nnodes - c->spares;
    s->nodes = xcalloc(s->nnodes, sizeof(*s->nodes));
    s->ranks = xcalloc(s->job_n, sizeof(int));
    for (unsigned i = 0; i < s->nnodes; i++) {
        char name[24], rack[24];
        snprintf(name, sizeof(name), "n%05u", i);
        snprintf(rack, sizeof(rack), "r%04u", i / c->nodes_per_rack);
        hn_brain_add_node(s->brain, name, rack, c->sku, c->gpus_per_node, HN_NODE_READY);
        /* Each node's IB port, up: the baseline against which a port going down is seen. */
        hn_brain_ib_port(s->brain, bnow(s), (int)i, "mlx5_0/1", 1, 0);
        s->nodes[i].pending_cause = -1;
        if (i < s->job_n) {
            s->ranks[i] = (int)i;
            s->nodes[i].in_job = (int)i + 1;
        }
    }
    s->latency = xcalloc(LATENCY_MAX, sizeof(double));
    s->detections = xcalloc(HN_SIM_DETECTIONS_MAX, sizeof(*s->detections));
    s->timeline = xcalloc(c->timeline_max ? c->timeline_max : 1, sizeof(char *));
    snprintf(s->job_id, sizeof(s->job_id), "1001");
    seed_rng(s, c->seed);
    s->end = c->days * DAY;
    return s;
}

void hn_sim_free(struct hn_sim *s)
{
    if (!s)
        return;
    hn_brain_free(s->brain);
    hn_xid_catalog_free(s->catalog);
    hn_sku_table_free(s->skus);
    for (size_t i = 0; i < s->ntimeline; i++)
        free(s->timeline[i]);
    free(s->timeline);
    free(s->latency);
    free(s->detections);
    free(s->heap);
    free(s->nodes);
    free(s->ranks);
    free(s);
}

static void sim_start(struct hn_sim *s)
{
    const struct hn_sim_config *c = &s->cfg;
    s->started = 1;
    s->now = 0;
    set_state(s, J_RUNNING);
    schedule_step(s);
    push(s, 0, EV_TICK, 0, 0, 0);
    if (c->node_failure_rate > 0)
        push(s, expo(s, c->node_failure_rate / DAY * s->nnodes), EV_FAIL, 0, 0, 0);
    if (c->straggler_rate > 0)
        push(s, expo(s, c->straggler_rate / DAY * s->nnodes), EV_SLOW, 0, 0, 0);
    timeline(s, "job %s starts on %u nodes (%u GPUs), %u spares, policy %s", s->job_id, s->job_n,
             s->job_n * c->gpus_per_node, c->spares, hn_sim_policy_names[c->policy]);
}

void hn_sim_run_until(struct hn_sim *s, double t)
{
    if (!s->started)
        sim_start(s);
    if (t > s->end)
        t = s->end;
    while (s->nheap && s->heap[0].t <= t) {
        struct event e = pop(s);
        s->now = e.t;
        s->r.events++;
        switch (e.kind) {
        case EV_STEP:
            on_step(s, &e);
            break;
        case EV_CKPT_DONE:
            on_ckpt_done(s, &e);
            break;
        case EV_FAIL:
            on_fail(s);
            break;
        case EV_NODE_FAIL:
            if (e.c == s->nodes[e.a].epoch && s->nodes[e.a].pending_cause == e.b)
                node_fails(s, e.a, e.b);
            break;
        case EV_SLOW:
            on_slow(s);
            break;
        case EV_REPAIRED:
            on_repaired(s, &e);
            break;
        case EV_RESTART:
            if ((unsigned)e.a == s->epoch && s->js == J_RESTARTING)
                job_start(s);
            break;
        case EV_FALLBACK:
            on_fallback(s, &e);
            break;
        case EV_TICK:
            on_tick(s);
            break;
        }
    }
    if (t > s->now)
        s->now = t;
}

double hn_sim_now(const struct hn_sim *s)
{
    return s->now;
}

void hn_sim_run(struct hn_sim *s)
{
    hn_sim_run_until(s, s->end);
    if (s->closed)
        return;
    s->closed = 1;
    /* Close the books at the end: a step in flight is kept (it would finish), anything else
     * is charged to what the job was doing. */
    s->now = s->end;
    if (s->js == J_RUNNING) {
        double d = s->now - s->step_started;
        double nominal = d / (1 + job_slowdown(s));
        s->kept += d;
        s->nominal += nominal;
        s->waste += d - nominal;
    } else if (s->js == J_CKPT)
        s->lost[HN_SIM_LOST_CHECKPOINT] += s->now - s->state_since;
    else if (s->js == J_WAITING)
        s->lost[HN_SIM_LOST_WAITING] += s->now - s->state_since;
    else
        s->lost[s->down_cause] += s->now - s->state_since;
}

void hn_sim_result(const struct hn_sim *s, struct hn_sim_result *out)
{
    *out = s->r;
    double wall = s->end;
    double gpus = (double)s->job_n * s->cfg.gpus_per_node;
    out->wall_s = wall;
    out->ettr = wall > 0 ? s->kept / wall : 0;
    out->mfu = s->kept > 0 ? s->cfg.base_mfu * s->nominal / s->kept : 0;
    out->effective_mfu = out->mfu * out->ettr;
    out->kept_s = s->kept;
    for (int c = 0; c < HN_SIM_NCAUSES; c++)
        out->lost_s[c] = s->lost[c];
    for (int c = 0; c < HN_SIM_NCAUSES; c++)
        out->lost_gpu_h[c] = s->lost[c] * gpus / 3600;
    out->lost_gpu_h[HN_SIM_LOST_STRAGGLER] += s->waste * gpus / 3600;
    out->job_gpu_h = wall * gpus / 3600;
    double *lat = xcalloc(s->nlatency ? s->nlatency : 1, sizeof(double));
    memcpy(lat, s->latency, s->nlatency * sizeof(double));
    qsort(lat, s->nlatency, sizeof(double), hn_cmp_double);
    out->detect_median_s = s->nlatency ? lat[s->nlatency / 2] : NAN;
    out->detect_p95_s = s->nlatency ? lat[(size_t)((double)(s->nlatency - 1) * 0.95)] : NAN;
    free(lat);
    out->brain_ettr = NAN;
    int ji = hn_brain_find_job(s->brain, s->job_id);
    struct hn_job_view v;
    if (ji >= 0 && hn_brain_job_view(s->brain, (size_t)ji, &v) == 0) {
        out->brain_ettr = v.ettr;
    }
}

void hn_sim_set_output_hook(struct hn_sim *s, hn_sim_output_fn fn, void *ctx)
{
    s->hook = fn;
    s->hook_ctx = ctx;
}

struct hn_brain *hn_sim_brain(struct hn_sim *s)
{
    return s->brain;
}

struct hn_sku_table *hn_sim_skus(struct hn_sim *s)
{
    return s->skus;
}

int hn_sim_inject_slowdown(struct hn_sim *s, unsigned slot, double slowdown)
{
    if (slot >= s->job_n || !(slowdown > 0))
        return -1;
    int node = s->ranks[slot];
    struct snode *n = &s->nodes[node];
    n->slow = slowdown;
    n->fault_t = s->now;
    n->detected = 0;
    snprintf(n->fault_kind, sizeof(n->fault_kind), "slowdown (injected)");
    s->r.stragglers++;
    timeline(s, "injected: node %d (rank %u) GPU 0 throttled, %.0f%% slower", node,
             slot * ranks_per_node(s), slowdown * 100);
    return node;
}

const char *hn_sim_job_id(const struct hn_sim *s)
{
    return s->job_id;
}

size_t hn_sim_detections(const struct hn_sim *s, const struct hn_sim_detection **out)
{
    *out = s->detections;
    return s->ndetections;
}

size_t hn_sim_timeline(const struct hn_sim *s, const char *const **lines)
{
    *lines = (const char *const *)s->timeline;
    return s->ntimeline;
}
