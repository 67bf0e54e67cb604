#include "brain/brain.h"

#include "brain/brain_int.h"

#include "common/log.h"
#include "common/sku.h"
#include "common/stats.h"
#include "common/util.h"
#include "common/xid.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const state_names[HN_NODE_NSTATES] = {
    "new", "burnin", "ready", "suspect", "draining", "quarantined", "repair", "retired",
};

const char *hn_node_state_name(enum hn_node_state s)
{
    return (unsigned)s < HN_NODE_NSTATES ? state_names[s] : "unknown";
}

int hn_node_state_parse(const char *s, enum hn_node_state *out)
{
    for (int i = 0; i < HN_NODE_NSTATES; i++) {
        if (strcmp(s, state_names[i]) == 0) {
            *out = (enum hn_node_state)i;
            return 0;
        }
    }
    return -EINVAL;
}

void hn_brain_config_default(struct hn_brain_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->guard_fraction = 0.25;
    cfg->guard_window_s = 3600;
    cfg->guard_per_rack = 2;
    cfg->retired_pages_limit = 63;
    cfg->nvlink_crc_per_s_limit = 100;
    cfg->pcie_replay_per_lane_min = 0.5;
    cfg->laggard_min_util = 50;
    cfg->laggard_k = 4;
    cfg->laggard_min_drop = 0.05;
    cfg->laggard_cycles = 3;
    cfg->laggard_min_peers = 4;
    cfg->laggard_max_age_s = 60;
    cfg->burnin_s = 600;
    cfg->hot_min_delta_c = 8;
    cfg->restart_s = 300;
    cfg->sbe_rate_per_h = 100;
    cfg->straggler_horizon_s = 3600;
    cfg->straggler_hold_s = 600;
    hn_strag_config_default(&cfg->straggler);
    cfg->hang_min_s = 120;
    cfg->hang_k = 10;
    cfg->hang_pause_k = 3;
    cfg->hang_pause_max_s = 2700;
    cfg->ranks_per_node_max = 64;
    cfg->jobs_max = HN_JOBS_MAX_DEFAULT;
    hn_strlcpy(cfg->mfu_dtype, "bf16", sizeof(cfg->mfu_dtype));
}

struct hn_brain *hn_brain_new(const struct hn_brain_config *cfg)
{
    struct hn_brain *b = xcalloc(1, sizeof(*b));
    if (cfg)
        b->cfg = *cfg;
    else
        hn_brain_config_default(&b->cfg);
    char why[128];
    if (hn_strag_config_check(&b->cfg.straggler, why, sizeof(why)) != 0) {
        hn_warn("straggler thresholds: %s; using the defaults", why);
        hn_strag_config_default(&b->cfg.straggler);
    }
    b->next_action = 1;
    b->jobs = hb_jobs_new(b->cfg.jobs_max);
    return b;
}

void hn_brain_free(struct hn_brain *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->nnodes; i++)
        free(b->nodes[i].gpus);
    free(b->nodes);
    free(b->outq);
    free(b->removals);
    free(b->scratch);
    free(b->index);
    hb_jobs_free(b->jobs);
    free(b);
}

/* ---- outputs ---- */

struct hn_out *hb_push_out(struct hn_brain *b, enum hn_out_kind kind, double now,
                           const struct node *n)
{
    if (b->qhead + b->qlen == b->qcap) {
        if (b->qhead > 0) {
            memmove(b->outq, b->outq + b->qhead, b->qlen * sizeof(*b->outq));
            b->qhead = 0;
        } else {
            b->qcap = b->qcap ? b->qcap * 2 : 64;
            b->outq = xrealloc(b->outq, b->qcap * sizeof(*b->outq));
        }
    }
    struct hn_out *o = &b->outq[b->qhead + b->qlen++];
    memset(o, 0, sizeof(*o));
    o->kind = kind;
    o->time = now;
    hn_strlcpy(o->node, n ? n->name : "", sizeof(o->node));
    return o;
}

int hn_brain_poll(struct hn_brain *b, struct hn_out *out)
{
    if (b->qlen == 0)
        return 0;
    *out = b->outq[b->qhead++];
    b->qlen--;
    if (b->qlen == 0)
        b->qhead = 0;
    return 1;
}

void hb_finding_set(struct hn_finding *f, const char *rule, enum hn_severity sev, int gpu,
                    const char *evidence, const char *fmt, ...)
{
    memset(f, 0, sizeof(*f));
    hn_strlcpy(f->rule, rule, sizeof(f->rule));
    f->severity = sev;
    f->gpu = gpu;
    hn_strlcpy(f->evidence, evidence ? evidence : "", sizeof(f->evidence));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->detail, sizeof(f->detail), fmt, ap);
    va_end(ap);
}

static void transition(struct hn_brain *b, double now, struct node *n, enum hn_node_state to,
                       const struct hn_finding *why, const char *actor)
{
    if (n->state == to)
        return;
    struct hn_out *o = hb_push_out(b, HN_OUT_TRANSITION, now, n);
    o->from = n->state;
    o->to = to;
    o->finding = *why;
    hn_strlcpy(o->actor, actor, sizeof(o->actor));
    n->state = to;
    n->since = now;
    hn_strlcpy(n->reason, why->detail, sizeof(n->reason));
}

static uint64_t queue_action(struct hn_brain *b, double now, struct node *n,
                             enum hn_action_kind kind, const char *reason)
{
    struct hn_out *o = hb_push_out(b, HN_OUT_ACTION, now, n);
    o->action.id = b->next_action++;
    o->action.kind = kind;
    hn_strlcpy(o->action.node, n->name, sizeof(o->action.node));
    if (reason)
        snprintf(o->action.reason, sizeof(o->action.reason), "houston: %s", reason);
    return o->action.id;
}

/* ---- lifecycle ---- */

int hb_in_service(enum hn_node_state s)
{
    return s == HN_NODE_NEW || s == HN_NODE_BURNIN || s == HN_NODE_READY || s == HN_NODE_SUSPECT;
}

/* Counts automatic removals still inside the guard window, fleet-wide and in rack. */
static void guard_counts(struct hn_brain *b, double now, const char *rack, size_t *fleet,
                         size_t *in_rack)
{
    size_t keep = 0;
    *fleet = *in_rack = 0;
    for (size_t i = 0; i < b->nremovals; i++) {
        if (now - b->removals[i].time >= b->cfg.guard_window_s)
            continue;
        b->removals[keep++] = b->removals[i];
        (*fleet)++;
        if (strcmp(b->nodes[b->removals[i].node].rack, rack) == 0)
            (*in_rack)++;
    }
    b->nremovals = keep;
}

static int guard_allows(struct hn_brain *b, double now, const struct node *n, char *why,
                        size_t whysize)
{
    size_t fleet, rack;
    guard_counts(b, now, n->rack, &fleet, &rack);
    size_t limit = (size_t)floor(b->cfg.guard_fraction * (double)b->nnodes);
    if (limit < 1)
        limit = 1;
    if (fleet >= limit) {
        snprintf(why, whysize,
                 "guard: %zu of %zu nodes already drained automatically in %.0f s "
                 "(limit %.0f%% = %zu)",
                 fleet, b->nnodes, b->cfg.guard_window_s, b->cfg.guard_fraction * 100, limit);
        return 0;
    }
    if (b->cfg.guard_per_rack > 0 && rack >= (size_t)b->cfg.guard_per_rack) {
        snprintf(why, whysize,
                 "guard: %zu nodes of rack %s already drained automatically "
                 "(limit %d)",
                 rack, n->rack, b->cfg.guard_per_rack);
        return 0;
    }
    return 1;
}

static void add_removal(struct hn_brain *b, double time, int node)
{
    if (b->nremovals == b->capremovals) {
        b->capremovals = b->capremovals ? b->capremovals * 2 : 16;
        b->removals = xrealloc(b->removals, b->capremovals * sizeof(*b->removals));
    }
    b->removals[b->nremovals++] = (struct removal){time, node};
}

int hb_node_runs(const struct node *n, const char *job)
{
    for (unsigned k = 0; k < n->njobs; k++) {
        if (strcmp(n->jobs[k], job) == 0)
            return 1;
    }
    return 0;
}

uint64_t hb_requeue(struct hn_brain *b, double now, struct node *n, const char *job)
{
    struct hn_out *o = hb_push_out(b, HN_OUT_ACTION, now, n);
    o->action.id = b->next_action++;
    o->action.kind = HN_ACT_REQUEUE;
    hn_strlcpy(o->action.node, n->name, sizeof(o->action.node));
    hn_strlcpy(o->action.job, job, sizeof(o->action.job));
    hn_strlcpy(o->job, job, sizeof(o->job));
    return o->action.id;
}

/* Takes n out of service: drain it and requeue its jobs. */
static void remove_node(struct hn_brain *b, double now, struct node *n, const struct hn_finding *f,
                        const char *actor)
{
    transition(b, now, n, HN_NODE_DRAINING, f, actor);
    n->drained_by_houston = 1;
    n->held = 0;
    queue_action(b, now, n, HN_ACT_DRAIN, f->detail);
    for (unsigned k = 0; k < n->njobs; k++)
        hb_requeue(b, now, n, n->jobs[k]);
    /* Jobs whose ranks report from this node: the ledger charges the interruption to f's
     * cause, and those the scheduler poll did not name are requeued too. */
    hb_jobs_node_removed(b, now, n, f);
}

/* A finding about node n: recorded, and acted on by severity. */
void hb_found(struct hn_brain *b, double now, struct node *n, const struct hn_finding *f)
{
    struct hn_out *o = hb_push_out(b, HN_OUT_FINDING, now, n);
    o->finding = *f;
    if (f->severity >= HN_SEV_SUSPECT)
        n->last_bad = now;
    if (!hb_in_service(n->state))
        return;
    if (f->severity == HN_SEV_SUSPECT) {
        transition(b, now, n, HN_NODE_SUSPECT, f, f->rule);
        return;
    }
    if (f->severity != HN_SEV_FATAL || n->held)
        return;
    char why[256];
    if (guard_allows(b, now, n, why, sizeof(why))) {
        remove_node(b, now, n, f, f->rule);
        add_removal(b, now, (int)(n - b->nodes));
        return;
    }
    struct hn_finding held = *f;
    hn_strlcpy(held.evidence, why, sizeof(held.evidence));
    transition(b, now, n, HN_NODE_SUSPECT, &held, "guard");
    n->held = 1;
    n->held_finding = *f;
    o = hb_push_out(b, HN_OUT_HELD, now, n);
    o->finding = held;
}

/* ---- fleet model ---- */

/* The node table's index (FNV-1a, hn_str_hash): names are short and the table at most half
 * full, so probes are few. Every frame looks its node up, so this must not be a scan of the
 * fleet. */
static void index_insert(struct hn_brain *b, int node)
{
    size_t mask = b->index_cap - 1;
    size_t i = hn_str_hash(b->nodes[node].name) & mask;
    while (b->index[i])
        i = (i + 1) & mask;
    b->index[i] = node + 1;
}

/* Keeps the index at most half full; rebuilt on growth. */
static void index_grow(struct hn_brain *b)
{
    if (b->index_cap >= 2 * (b->nnodes + 1))
        return;
    size_t cap = b->index_cap ? b->index_cap : 64;
    while (cap < 2 * (b->nnodes + 1))
        cap *= 2;
    free(b->index);
    b->index = xcalloc(cap, sizeof(*b->index));
    b->index_cap = cap;
    for (size_t n = 0; n < b->nnodes; n++)
        index_insert(b, (int)n);
}

int hn_brain_add_node(struct hn_brain *b, const char *name, const char *rack, const char *sku,
                      unsigned gpus, enum hn_node_state state)
{
    if (!name || !name[0] || strlen(name) >= HN_NAME_MAX || gpus > 1024 ||
        (unsigned)state >= HN_NODE_NSTATES)
        return -EINVAL;
    if (hn_brain_find_node(b, name) >= 0)
        return -EEXIST;
    if (b->nnodes == b->capnodes) {
        b->capnodes = b->capnodes ? b->capnodes * 2 : 16;
        b->nodes = xrealloc(b->nodes, b->capnodes * sizeof(*b->nodes));
    }
    struct node *n = &b->nodes[b->nnodes];
    memset(n, 0, sizeof(*n));
    hn_strlcpy(n->name, name, sizeof(n->name));
    hn_strlcpy(n->rack, rack && rack[0] ? rack : name, sizeof(n->rack));
    hn_strlcpy(n->sku, sku ? sku : "", sizeof(n->sku));
    const struct hn_sku *row = b->cfg.skus ? hn_sku_find(b->cfg.skus, n->sku) : NULL;
    n->peak = row ? hn_sku_peak_flops(row, b->cfg.mfu_dtype) : NAN;
    n->state = state;
    n->gpus_expected = gpus;
    n->gpus = xcalloc(gpus ? gpus : 1, sizeof(*n->gpus));
    for (unsigned g = 0; g < gpus; g++) {
        for (int f = 0; f < HN_F_COUNT; f++)
            n->gpus[g].v[f] = n->gpus[g].prev[f] = NAN;
    }
    index_grow(b);
    index_insert(b, (int)b->nnodes);
    return (int)b->nnodes++;
}

int hn_brain_find_node(const struct hn_brain *b, const char *name)
{
    if (!b->index_cap)
        return -ENOENT;
    size_t mask = b->index_cap - 1;
    for (size_t i = hn_str_hash(name) & mask; b->index[i]; i = (i + 1) & mask) {
        int n = b->index[i] - 1;
        if (strcmp(b->nodes[n].name, name) == 0)
            return n;
    }
    return -ENOENT;
}

int hn_brain_restore_node(struct hn_brain *b, int node, enum hn_node_state state,
                          int drained_by_houston, int held, double since, const char *reason)
{
    if (node < 0 || (size_t)node >= b->nnodes || (unsigned)state >= HN_NODE_NSTATES)
        return -EINVAL;
    struct node *n = &b->nodes[node];
    n->state = state;
    n->drained_by_houston = drained_by_houston;
    n->held = held;
    n->since = since;
    hn_strlcpy(n->reason, reason ? reason : "", sizeof(n->reason));
    if (held)
        hb_finding_set(&n->held_finding, "restored", HN_SEV_FATAL, -1, "restored after restart",
                       "%s", n->reason);
    /* The guard's window survives a restart: a node houston took out counts from the time it
     * left. (Operator-approved drains count too: the store does not say who drained; erring
     * towards holding is the safe side.) */
    if (drained_by_houston && (state == HN_NODE_DRAINING || state == HN_NODE_QUARANTINED))
        add_removal(b, since, node);
    return 0;
}

int hn_brain_restore_removal(struct hn_brain *b, int node, double removed_at, double removed_from,
                             int cause)
{
    if (node < 0 || (size_t)node >= b->nnodes || cause < 0 || cause >= HN_LOSS_NCAUSES ||
        !isfinite(removed_at) || !isfinite(removed_from))
        return -EINVAL;
    struct node *n = &b->nodes[node];
    n->removed_at = removed_at;
    n->removed_from = removed_from;
    n->removed_cause = (enum hn_loss_cause)cause;
    /* No scheduler input of this controller's is the one the removal went by. */
    n->removed_gen = UINT64_MAX;
    return 0;
}

void hn_brain_set_next_action_id(struct hn_brain *b, uint64_t next)
{
    if (next > b->next_action)
        b->next_action = next;
}

size_t hn_brain_node_count(const struct hn_brain *b)
{
    return b->nnodes;
}

struct node *hb_node_at(struct hn_brain *b, int node)
{
    return node >= 0 && (size_t)node < b->nnodes ? &b->nodes[node] : NULL;
}

int hn_brain_gpu_values(const struct hn_brain *b, int node, unsigned gpu, const unsigned *fields,
                        double *values, unsigned n, int *lost)
{
    if (node < 0 || (size_t)node >= b->nnodes || gpu >= b->nodes[node].gpus_expected)
        return -EINVAL;
    const struct gpu_st *g = &b->nodes[node].gpus[gpu];
    for (unsigned k = 0; k < n; k++)
        values[k] = fields[k] < HN_F_COUNT ? g->v[fields[k]] : NAN;
    *lost = g->lost;
    return 0;
}

int hn_brain_node_view(const struct hn_brain *b, int node, struct hn_node_view *out)
{
    if (node < 0 || (size_t)node >= b->nnodes)
        return -EINVAL;
    const struct node *n = &b->nodes[node];
    out->name = n->name;
    out->rack = n->rack;
    out->sku = n->sku;
    out->state = n->state;
    out->gpus_expected = n->gpus_expected;
    out->gpus_seen = n->gpus_seen;
    out->drained_by_houston = n->drained_by_houston;
    out->held = n->held;
    out->since = n->since;
    hn_strlcpy(out->reason, n->reason, sizeof(out->reason));
    out->removed_at = n->removed_at;
    out->removed_from = n->removed_from;
    out->removed_cause = (int)n->removed_cause;
    return 0;
}

/* ---- rules over samples ---- */

/* Fires rule r of GPU g once; returns 1 when it had not fired yet. */
static int fire_once(struct gpu_st *g, int r)
{
    if (g->fired & (1u << r))
        return 0;
    g->fired |= 1u << r;
    return 1;
}

static int rising(const struct gpu_st *g, int f)
{
    return !isnan(g->prev[f]) && !isnan(g->v[f]) && g->v[f] > g->prev[f];
}

static double rate_per_s(const struct gpu_st *g, int f)
{
    double dt = g->t[f] - g->prev_t[f];
    if (isnan(g->prev[f]) || isnan(g->v[f]) || dt <= 0)
        return NAN;
    return (g->v[f] - g->prev[f]) / dt;
}

/* The thresholds for node n: the fleet's, with its SKU's overrides. */
static void thresholds(const struct hn_brain *b, const struct node *n, struct hn_sku_rules *t)
{
    t->retired_pages_limit = b->cfg.retired_pages_limit;
    t->nvlink_crc_per_s_limit = b->cfg.nvlink_crc_per_s_limit;
    t->pcie_replay_per_lane_min = b->cfg.pcie_replay_per_lane_min;
    for (size_t i = 0; i < b->cfg.nsku_rules; i++) {
        const struct hn_sku_rules *r = &b->cfg.sku_rules[i];
        if (strcasecmp(r->sku, n->sku) != 0)
            continue;
        if (!isnan(r->retired_pages_limit))
            t->retired_pages_limit = r->retired_pages_limit;
        if (!isnan(r->nvlink_crc_per_s_limit))
            t->nvlink_crc_per_s_limit = r->nvlink_crc_per_s_limit;
        if (!isnan(r->pcie_replay_per_lane_min))
            t->pcie_replay_per_lane_min = r->pcie_replay_per_lane_min;
    }
}

static void check_gpu(struct hn_brain *b, double now, struct node *n, unsigned gi)
{
    struct gpu_st *g = &n->gpus[gi];
    struct hn_sku_rules limits;
    thresholds(b, n, &limits);
    const struct hn_sku_rules *c = &limits;
    struct hn_finding f;
    char ev[320];
    int gpu = (int)gi;

    /* Any new volatile DBE fails (DCGM). Volatile counters reset with the driver, so a
     * non-zero value on first sight is new since the last reset too. */
    double dbe = g->v[HN_F_ECC_DBE_VOL];
    if (!isnan(dbe) && dbe > 0 &&
        (isnan(g->prev[HN_F_ECC_DBE_VOL]) || rising(g, HN_F_ECC_DBE_VOL)) && fire_once(g, R_DBE)) {
        snprintf(ev, sizeof(ev), "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL=%.0f previous=%.0f limit=any new",
                 dbe, g->prev[HN_F_ECC_DBE_VOL]);
        hb_finding_set(&f, "dbe_new", HN_SEV_FATAL, gpu, ev,
                       "GPU %u: new uncorrectable ECC error (%.0f volatile)", gi, dbe);
        hb_found(b, now, n, &f);
    }
    /* Predictive: correctable errors at a rate that announces an uncorrectable one (Meta's
     * and NVIDIA's field experience: HBM failures are often preceded by rising correctable
     * counts). The node is suspect; with `predictive` on, its jobs replace it at their next
     * checkpoint (brain/jobs.c). */
    double sbe_rate = rate_per_s(g, HN_F_ECC_SBE_VOL) * 3600;
    if (b->cfg.sbe_rate_per_h > 0 && sbe_rate >= b->cfg.sbe_rate_per_h &&
        fire_once(g, R_SBE_TREND)) {
        snprintf(ev, sizeof(ev), "ecc_sbe_volatile=%.0f rate_per_h=%.0f limit_per_h=%.0f",
                 g->v[HN_F_ECC_SBE_VOL], sbe_rate, b->cfg.sbe_rate_per_h);
        hb_finding_set(&f, "ecc_trend", HN_SEV_SUSPECT, gpu, ev,
                       "GPU %u: correctable ECC errors at %.0f/h, a failure may follow", gi,
                       sbe_rate);
        hb_found(b, now, n, &f);
        if (b->cfg.predictive)
            n->replace_at_ckpt = 1;
    }
    /* Either cause alone can reach the limit: an unknown one counts as 0. */
    double sbe = g->v[HN_F_RETIRED_SBE], dbe2 = g->v[HN_F_RETIRED_DBE];
    double retired =
        isnan(sbe) && isnan(dbe2) ? NAN : (isnan(sbe) ? 0 : sbe) + (isnan(dbe2) ? 0 : dbe2);
    if (!isnan(retired) && retired >= c->retired_pages_limit && fire_once(g, R_RETIRED)) {
        snprintf(ev, sizeof(ev), "retired_sbe=%.0f retired_dbe=%.0f limit=%.0f",
                 g->v[HN_F_RETIRED_SBE], g->v[HN_F_RETIRED_DBE], c->retired_pages_limit);
        hb_finding_set(&f, "retired_pages", HN_SEV_FATAL, gpu, ev, "GPU %u: %.0f retired pages", gi,
                       retired);
        hb_found(b, now, n, &f);
    }
    if (g->v[HN_F_REMAP_FAILURE] > 0 && fire_once(g, R_REMAP_FAIL)) {
        snprintf(ev, sizeof(ev), "DCGM_FI_DEV_ROW_REMAP_FAILURE=1 uncorrectable_rows=%.0f",
                 g->v[HN_F_REMAP_UNCORRECTABLE]);
        hb_finding_set(&f, "row_remap_failure", HN_SEV_FATAL, gpu, ev,
                       "GPU %u: row remapping failed", gi);
        hb_found(b, now, n, &f);
    }
    if (g->v[HN_F_REMAP_PENDING] > 0 && fire_once(g, R_REMAP_PENDING)) {
        hb_finding_set(&f, "row_remap_pending", HN_SEV_WARN, gpu, "DCGM_FI_DEV_ROW_REMAP_PENDING=1",
                       "GPU %u: row remap pending, reset the GPU at the next job boundary", gi);
        hb_found(b, now, n, &f);
    }
    if (rising(g, HN_F_NVLINK_REPLAY) && fire_once(g, R_NVL_REPLAY)) {
        snprintf(ev, sizeof(ev), "nvlink_replay=%.0f previous=%.0f", g->v[HN_F_NVLINK_REPLAY],
                 g->prev[HN_F_NVLINK_REPLAY]);
        hb_finding_set(&f, "nvlink_replay", HN_SEV_FATAL, gpu, ev, "GPU %u: NVLink replay errors",
                       gi);
        hb_found(b, now, n, &f);
    }
    if (rising(g, HN_F_NVLINK_RECOVERY) && fire_once(g, R_NVL_RECOVERY)) {
        snprintf(ev, sizeof(ev), "nvlink_recovery=%.0f previous=%.0f", g->v[HN_F_NVLINK_RECOVERY],
                 g->prev[HN_F_NVLINK_RECOVERY]);
        hb_finding_set(&f, "nvlink_recovery", HN_SEV_FATAL, gpu, ev,
                       "GPU %u: NVLink recovery errors", gi);
        hb_found(b, now, n, &f);
    }
    double crc = rate_per_s(g, HN_F_NVLINK_CRC_FLIT);
    double crc_data = rate_per_s(g, HN_F_NVLINK_CRC_DATA);
    if (!isnan(crc_data))
        crc = isnan(crc) ? crc_data : crc + crc_data;
    if (!isnan(crc) && crc >= c->nvlink_crc_per_s_limit && fire_once(g, R_NVL_CRC)) {
        snprintf(ev, sizeof(ev), "nvlink_crc_rate=%.1f/s limit=%.0f/s", crc,
                 c->nvlink_crc_per_s_limit);
        hb_finding_set(&f, "nvlink_crc", HN_SEV_FATAL, gpu, ev, "GPU %u: NVLink CRC errors %.0f/s",
                       gi, crc);
        hb_found(b, now, n, &f);
    }
    double replay = rate_per_s(g, HN_F_PCIE_REPLAY) * 60;
    double width = isnan(g->v[HN_F_PCIE_WIDTH]) ? 16 : g->v[HN_F_PCIE_WIDTH];
    if (!isnan(replay) && replay > c->pcie_replay_per_lane_min * width && fire_once(g, R_PCIE)) {
        snprintf(ev, sizeof(ev), "pcie_replay_rate=%.1f/min budget=%.2f/lane/min width=%.0f",
                 replay, c->pcie_replay_per_lane_min, width);
        hb_finding_set(&f, "pcie_replay", HN_SEV_WARN, gpu, ev, "GPU %u: PCIe replays %.1f/min", gi,
                       replay);
        hb_found(b, now, n, &f);
    }
    static const struct {
        int field, rule;
        const char *name;
    } viol[] = {{HN_F_POWER_VIOLATION, R_POWER_VIOL, "power_violation"},
                {HN_F_THERMAL_VIOLATION, R_THERMAL_VIOL, "thermal_violation"}};
    for (size_t i = 0; i < HN_ARRAY_LEN(viol); i++) {
        if (!rising(g, viol[i].field)) {
            g->fired &= ~(1u << viol[i].rule); /* re-armed once the counter stops rising */
            continue;
        }
        if (!fire_once(g, viol[i].rule))
            continue;
        snprintf(ev, sizeof(ev), "%s_us=%.0f previous=%.0f", viol[i].name, g->v[viol[i].field],
                 g->prev[viol[i].field]);
        hb_finding_set(&f, viol[i].name, HN_SEV_WARN, gpu, ev, "GPU %u: %s counter rising", gi,
                       viol[i].name);
        hb_found(b, now, n, &f);
    }
}

int hn_brain_samples(struct hn_brain *b, double now, int node, unsigned gpu, const unsigned *fields,
                     const double *values, unsigned n)
{
    struct node *nd = hb_node_at(b, node);
    if (!nd || gpu >= nd->gpus_expected)
        return -EINVAL;
    struct gpu_st *g = &nd->gpus[gpu];
    nd->silent_fired = 0;
    nd->last_data = now;
    for (unsigned i = 0; i < n; i++) {
        unsigned f = fields[i];
        if (f >= HN_F_COUNT)
            continue; /* a newer agent's field */
        g->prev[f] = g->v[f];
        g->prev_t[f] = g->t[f];
        g->v[f] = values[i];
        g->t[f] = now;
    }
    check_gpu(b, now, nd, gpu);
    if (g->v[HN_F_GPU_UP] == 0 && !g->lost)
        hn_brain_gpu_lost(b, now, node, gpu, 1);
    else if (g->v[HN_F_GPU_UP] == 1)
        g->lost = 0;
    return 0;
}

int hn_brain_gpu_count(struct hn_brain *b, double now, int node, unsigned count)
{
    struct node *n = hb_node_at(b, node);
    if (!n)
        return -EINVAL;
    n->gpus_seen = count;
    if (count >= n->gpus_expected) {
        n->count_fired = 0;
        return 0;
    }
    if (n->count_fired)
        return 0;
    n->count_fired = 1;
    struct hn_finding f;
    char ev[96];
    snprintf(ev, sizeof(ev), "gpus=%u expected=%u", count, n->gpus_expected);
    hb_finding_set(&f, "gpu_count", HN_SEV_FATAL, -1, ev, "%u GPUs found, %u expected", count,
                   n->gpus_expected);
    hb_found(b, now, n, &f);
    return 0;
}

int hn_brain_gpu_lost(struct hn_brain *b, double now, int node, unsigned gpu, int lost)
{
    struct node *n = hb_node_at(b, node);
    if (!n || gpu >= n->gpus_expected)
        return -EINVAL;
    struct gpu_st *g = &n->gpus[gpu];
    g->lost = lost;
    if (!lost || !fire_once(g, R_LOST))
        return 0;
    struct hn_finding f;
    hb_finding_set(&f, "gpu_lost", HN_SEV_FATAL, (int)gpu, "nvml=GPU_IS_LOST",
                   "GPU %u is lost (fell off the bus)", gpu);
    hb_found(b, now, n, &f);
    return 0;
}

int hn_brain_xid(struct hn_brain *b, double now, int node, unsigned gpu, unsigned code)
{
    struct node *n = hb_node_at(b, node);
    if (!n)
        return -EINVAL;
    const struct hn_xid_entry *e =
        b->cfg.xid_catalog ? hn_xid_lookup(b->cfg.xid_catalog, code) : NULL;
    int fatal = hn_xid_is_fatal(e);
    struct hn_finding f;
    char ev[320];
    snprintf(ev, sizeof(ev), "xid=%u action=%s catalog=%s", code,
             e && e->immediate_resolution[0] ? e->immediate_resolution : "none",
             e ? "yes" : "unknown code");
    /* Catalog mnemonics may hold newlines; a reason is one line. */
    char mnemonic[96];
    hn_strlcpy(mnemonic, e ? e->mnemonic : "unknown", sizeof(mnemonic));
    for (char *p = mnemonic; *p; p++) {
        if ((unsigned char)*p < 0x20)
            *p = ' ';
    }
    int g = gpu == 0xffffu || gpu >= n->gpus_expected ? -1 : (int)gpu;
    if (g >= 0)
        hb_finding_set(&f, "xid", fatal ? HN_SEV_FATAL : HN_SEV_WARN, g, ev,
                       "xid %u (%s) on GPU %d", code, mnemonic, g);
    else
        hb_finding_set(&f, "xid", fatal ? HN_SEV_FATAL : HN_SEV_WARN, g, ev, "xid %u (%s)", code,
                       mnemonic);
    hb_found(b, now, n, &f);
    return 0;
}

int hn_brain_ib_port(struct hn_brain *b, double now, int node, const char *port, int active,
                     uint64_t link_downed)
{
    struct node *n = hb_node_at(b, node);
    if (!n || !port)
        return -EINVAL;
    struct ib_st *p = NULL;
    for (unsigned i = 0; i < n->nib; i++) {
        if (strcmp(n->ib[i].key, port) == 0)
            p = &n->ib[i];
    }
    if (!p) {
        if (n->nib == MAX_IB_PORTS)
            return -ENOSPC;
        p = &n->ib[n->nib++];
        hn_strlcpy(p->key, port, sizeof(p->key));
        p->active = active;
        p->link_downed = link_downed;
        if (active)
            return 0;
    }
    struct hn_finding f;
    char ev[160];
    int was_active = p->active;
    uint64_t before = p->link_downed;
    p->active = active;
    p->link_downed = link_downed;
    if (link_downed > before) {
        snprintf(ev, sizeof(ev), "link_downed=%llu previous=%llu", (unsigned long long)link_downed,
                 (unsigned long long)before);
        hb_finding_set(&f, "ib_link_downed", HN_SEV_FATAL, -1, ev, "IB port %s went down", port);
        hb_found(b, now, n, &f);
    } else if (!active && (was_active || before == link_downed)) {
        if (!was_active && n->state != HN_NODE_READY && n->state != HN_NODE_NEW)
            return 0;
        snprintf(ev, sizeof(ev), "state=not ACTIVE link_downed=%llu",
                 (unsigned long long)link_downed);
        hb_finding_set(&f, "ib_port_down", HN_SEV_FATAL, -1, ev, "IB port %s is not ACTIVE", port);
        hb_found(b, now, n, &f);
    }
    return 0;
}

int hn_brain_node_heard(struct hn_brain *b, double now, int node, double collected, int follows)
{
    struct node *n = hb_node_at(b, node);
    if (!n || !(collected >= 0) || !(now >= 0))
        return -EINVAL;
    if (!follows || n->heard_at <= 0)
        n->heard_from = collected;
    if (collected > n->heard) {
        n->heard_before = n->heard;
        n->heard = collected;
    }
    if (n->heard_at <= 0 || now - n->heard_at > b->cfg.hang_min_s / 2)
        n->live_from = now;
    if (now > n->heard_at)
        n->heard_at = now;
    return 0;
}

int hn_brain_node_silent(struct hn_brain *b, double now, int node, double silent_s)
{
    struct node *n = hb_node_at(b, node);
    if (!n)
        return -EINVAL;
    if (n->silent_fired)
        return 0;
    n->silent_fired = 1;
    struct hn_finding f;
    char ev[96];
    snprintf(ev, sizeof(ev), "silent_for=%.0fs", silent_s);
    hb_finding_set(&f, "agent_silent", HN_SEV_SUSPECT, -1, ev,
                   "no telemetry from the node's agent for %.0f s", silent_s);
    hb_found(b, now, n, &f);
    return 0;
}

/* ---- scheduler inputs ---- */

int hn_brain_node_job(struct hn_brain *b, double now, int node, const char *job)
{
    struct node *n = hb_node_at(b, node);
    if (!n)
        return -EINVAL;
    if (!job || !job[0]) {
        n->njobs = 0;
    } else if (!hb_node_runs(n, job) && n->njobs < HB_NODE_JOBS &&
               strlen(job) < sizeof(n->jobs[0])) {
        hn_strlcpy(n->jobs[n->njobs++], job, sizeof(n->jobs[0]));
    }
    hb_jobs_sched_seen(b, now, job);
    return 0;
}

int hn_brain_job_waiting(struct hn_brain *b, double now, const char *job, enum hn_wait why)
{
    if (!job || !job[0] || why < HN_WAIT_SUSPENDED || why > HN_WAIT_ENDING)
        return -EINVAL;
    hb_jobs_sched_waiting(b, now, job, why);
    return 0;
}

int hn_brain_job_time_left(struct hn_brain *b, double now, const char *job, double seconds)
{
    if (!job || !job[0] || isnan(seconds))
        return -EINVAL;
    hb_jobs_time_left(b, now, job, seconds);
    return 0;
}

int hn_brain_node_idle(struct hn_brain *b, double now, int node)
{
    struct node *n = hb_node_at(b, node);
    if (!n)
        return -EINVAL;
    n->njobs = 0;
    if (n->state == HN_NODE_DRAINING) {
        struct hn_finding f;
        hb_finding_set(&f, "scheduler", HN_SEV_INFO, -1, "jobs=0", "no job left on the node");
        transition(b, now, n, HN_NODE_QUARANTINED, &f, "scheduler");
    }
    return 0;
}

/* ---- silent laggards ---- */

static int loaded(const struct hn_brain *b, double now, const struct node *n,
                  const struct gpu_st *g)
{
    return (n->state == HN_NODE_READY || n->state == HN_NODE_SUSPECT) && !g->lost &&
           !isnan(g->v[HN_F_SM_CLOCK]) && g->v[HN_F_GPU_UTIL] >= b->cfg.laggard_min_util &&
           now - g->t[HN_F_SM_CLOCK] <= b->cfg.laggard_max_age_s;
}

/* A statistic compared across same-SKU peers: which field, which side of the median is bad,
 * how far it must be (relative to the median, or absolute), the rule it fires. */
struct peer_rule {
    int field;
    int sign;         /* -1: below the median is bad; +1: above */
    double min_rel;   /* minimum |v - median| / median */
    double min_abs;   /* minimum |v - median| */
    int equal_power;  /* peers limited to GPUs within 10% of the median power */
    const char *rule; /* finding name */
    int bit;          /* fire-once bit */
    int slot;         /* streak slot in struct gpu_st */
};

/* Collects field f of the peers (loaded GPUs of sku, and within 10% of median power when
 * asked) into b->scratch; returns how many. */
static size_t peer_values(struct hn_brain *b, double now, const char *sku, int f, double power_med)
{
    size_t k = 0;
    for (size_t i = 0; i < b->nnodes; i++) {
        const struct node *nd = &b->nodes[i];
        if (strcmp(nd->sku, sku) != 0)
            continue;
        for (unsigned g = 0; g < nd->gpus_expected; g++) {
            const struct gpu_st *gs = &nd->gpus[g];
            if (!loaded(b, now, nd, gs) || isnan(gs->v[f]))
                continue;
            if (!isnan(power_med) && !(fabs(gs->v[HN_F_POWER] - power_med) <= 0.1 * power_med))
                continue;
            if (k == b->capscratch) {
                b->capscratch = b->capscratch ? b->capscratch * 2 : 1024;
                b->scratch = xrealloc(b->scratch, b->capscratch * sizeof(double));
            }
            b->scratch[k++] = gs->v[f];
        }
    }
    return k;
}

/* Robust statistics of field f among the peers: median and 1.4826 x MAD (a standard deviation
 * estimate that the outliers we look for do not inflate). Returns the peer count. */
static size_t peer_stats(struct hn_brain *b, double now, const char *sku, int f, double power_med,
                         double *med, double *sigma)
{
    size_t n = peer_values(b, now, sku, f, power_med);
    if (n < (size_t)b->cfg.laggard_min_peers)
        return n;
    *med = hn_median(b->scratch, n);
    for (size_t i = 0; i < n; i++)
        b->scratch[i] = fabs(b->scratch[i] - *med);
    *sigma = 1.4826 * hn_median(b->scratch, n);
    return n;
}

/* 1 when field f of g holds a sample that streak `slot` has not counted yet, which it now
 * has: persistence counts samples, not ticks, so a tick with no new sample changes nothing. */
static int new_sample(struct gpu_st *g, int f, int slot)
{
    if (g->t[f] == g->streak_t[slot])
        return 0;
    g->streak_t[slot] = g->t[f];
    return 1;
}

/* Counts a new sample into streak `slot` of g: one out of line extends the streak, one in line
 * ends it. Returns 1 when the streak reaches laggard_cycles and rule `bit` had not fired yet
 * (it fires now). */
static int streak_fires(const struct hn_brain *b, struct gpu_st *g, int slot, int bit,
                        int out_of_line)
{
    if (!out_of_line) {
        g->streak[slot] = 0;
        return 0;
    }
    return ++g->streak[slot] >= b->cfg.laggard_cycles && fire_once(g, bit);
}

static void peer_check(struct hn_brain *b, double now, const char *sku, const struct peer_rule *r)
{
    double power_med = NAN, med = 0, sigma = 0, unused;
    if (r->equal_power) {
        if (peer_stats(b, now, sku, HN_F_POWER, NAN, &power_med, &unused) <
                (size_t)b->cfg.laggard_min_peers ||
            !(power_med > 0))
            return;
    }
    size_t n = peer_stats(b, now, sku, r->field, power_med, &med, &sigma);
    if (n < (size_t)b->cfg.laggard_min_peers)
        return;
    for (size_t i = 0; i < b->nnodes; i++) {
        struct node *nd = &b->nodes[i];
        if (strcmp(nd->sku, sku) != 0)
            continue;
        for (unsigned gi = 0; gi < nd->gpus_expected; gi++) {
            struct gpu_st *g = &nd->gpus[gi];
            double v = g->v[r->field];
            if (!loaded(b, now, nd, g) || isnan(v) ||
                (r->equal_power && !(fabs(g->v[HN_F_POWER] - power_med) <= 0.1 * power_med))) {
                g->streak[r->slot] = 0;
                continue;
            }
            if (!new_sample(g, r->field, r->slot))
                continue;
            double dev = r->sign * (v - med);
            double rel = med != 0 ? dev / fabs(med) : 0;
            double z = sigma > 0 ? dev / sigma : (dev > 0 ? INFINITY : 0);
            int out = !(dev <= 0 || rel < r->min_rel || dev < r->min_abs || z < b->cfg.laggard_k);
            if (!streak_fires(b, g, r->slot, r->bit, out))
                continue;
            char ev[320];
            snprintf(ev, sizeof(ev),
                     "%s=%.0f peer_median=%.0f robust_sigma=%.1f deviation=%.1f%% z=%.1f "
                     "peers=%zu util=%.0f power=%.0f temp=%.0f clock_reasons=0x%llx cycles=%d",
                     r->field == HN_F_SM_CLOCK ? "sm_clock" : "gpu_temp", v, med, sigma, rel * 100,
                     z, n, g->v[HN_F_GPU_UTIL], g->v[HN_F_POWER], g->v[HN_F_GPU_TEMP],
                     isnan(g->v[HN_F_CLOCK_REASONS]) ? 0ull
                                                     : (unsigned long long)g->v[HN_F_CLOCK_REASONS],
                     g->streak[r->slot]);
            struct hn_finding f;
            if (r->field == HN_F_SM_CLOCK)
                hb_finding_set(&f, r->rule, HN_SEV_SUSPECT, (int)gi, ev,
                               "GPU %u: SM clock %.0f MHz, %.0f%% below its %s peers", gi, v,
                               rel * 100, sku);
            else
                hb_finding_set(&f, r->rule, HN_SEV_SUSPECT, (int)gi, ev,
                               "GPU %u: %.0f C, %.0f C hotter than its %s peers at equal power", gi,
                               v, v - med, sku);
            hb_found(b, now, nd, &f);
        }
    }
}

/* NVML's clock event (throttle) reasons that mean the GPU is held back rather than idle or
 * set that way (nvmlClocksEventReasons: SW power cap, HW slowdown, SW thermal, HW thermal,
 * HW power brake). */
static const struct {
    unsigned bit;
    const char *name;
} throttle_bits[] = {
    {0x4, "sw_power_cap"}, {0x8, "hw_slowdown"},     {0x20, "sw_thermal"},
    {0x40, "hw_thermal"},  {0x80, "hw_power_brake"},
};

/* The reason bits of a clock_reasons sample (0 when it is not a 32-bit value). */
static unsigned reason_bits(double v)
{
    return v >= 0 && v < 4294967296.0 ? (unsigned)v : 0;
}

/* Throttled among unthrottled peers: a loaded GPU holding a throttle reason that fewer than a
 * quarter of its loaded same-SKU peers hold, laggard_cycles samples in a row. A reason most
 * peers share (every GPU at its power cap under a heavy job) is the workload, not the part. */
static void throttle_check(struct hn_brain *b, double now, const char *sku)
{
    /* The peers: loaded GPUs of the SKU whose clock reasons are known. */
    size_t loaded_n = peer_values(b, now, sku, HN_F_CLOCK_REASONS, NAN);
    size_t with[HN_ARRAY_LEN(throttle_bits)] = {0};
    for (size_t i = 0; i < loaded_n; i++) {
        unsigned reasons = reason_bits(b->scratch[i]);
        for (size_t k = 0; k < HN_ARRAY_LEN(throttle_bits); k++)
            with[k] += (reasons & throttle_bits[k].bit) != 0;
    }
    if (loaded_n < (size_t)b->cfg.laggard_min_peers)
        return;
    for (size_t i = 0; i < b->nnodes; i++) {
        struct node *nd = &b->nodes[i];
        if (strcmp(nd->sku, sku) != 0)
            continue;
        for (unsigned gi = 0; gi < nd->gpus_expected; gi++) {
            struct gpu_st *g = &nd->gpus[gi];
            if (!loaded(b, now, nd, g) || isnan(g->v[HN_F_CLOCK_REASONS])) {
                g->streak[2] = 0;
                continue;
            }
            if (!new_sample(g, HN_F_CLOCK_REASONS, 2))
                continue;
            unsigned reasons = reason_bits(g->v[HN_F_CLOCK_REASONS]);
            size_t odd = HN_ARRAY_LEN(throttle_bits);
            for (size_t k = 0;
                 k < HN_ARRAY_LEN(throttle_bits) && odd == HN_ARRAY_LEN(throttle_bits); k++) {
                /* Peers other than this GPU that hold the reason. */
                if ((reasons & throttle_bits[k].bit) && 4 * (with[k] - 1) < loaded_n - 1)
                    odd = k;
            }
            if (!streak_fires(b, g, 2, R_THROTTLED, odd < HN_ARRAY_LEN(throttle_bits)))
                continue;
            char ev[320];
            snprintf(ev, sizeof(ev),
                     "clock_reasons=0x%x reason=%s peers_with_it=%zu/%zu sm_clock=%.0f "
                     "util=%.0f power=%.0f temp=%.0f cycles=%d",
                     reasons, throttle_bits[odd].name, with[odd] - 1, loaded_n - 1,
                     g->v[HN_F_SM_CLOCK], g->v[HN_F_GPU_UTIL], g->v[HN_F_POWER],
                     g->v[HN_F_GPU_TEMP], g->streak[2]);
            struct hn_finding f;
            hb_finding_set(&f, "throttled", HN_SEV_SUSPECT, (int)gi, ev,
                           "GPU %u: throttled (%s) while its %s peers are not", gi,
                           throttle_bits[odd].name, sku);
            hb_found(b, now, nd, &f);
        }
    }
}

/* Silent laggards (a slow SM clock under load), hot parts (temperature above peers drawing
 * the same power: cooling, not load) and throttled parts (a throttle reason peers lack). */
static void laggards(struct hn_brain *b, double now, const char *sku)
{
    throttle_check(b, now, sku);
    const struct peer_rule rules[] = {
        {HN_F_SM_CLOCK, -1, b->cfg.laggard_min_drop, 0, 0, "laggard", R_LAGGARD, 0},
        {HN_F_GPU_TEMP, +1, 0, b->cfg.hot_min_delta_c, 1, "hot", R_HOT, 1},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(rules); i++)
        peer_check(b, now, sku, &rules[i]);
}

static void back_in_service(struct node *n)
{
    n->held = 0;
    n->replace_at_ckpt = 0;
    n->count_fired = 0;
    for (unsigned g = 0; g < n->gpus_expected; g++) {
        n->gpus[g].fired = 0;
        memset(n->gpus[g].streak, 0, sizeof(n->gpus[g].streak));
    }
}

/* Burn-in passed: reporting for burnin_s since entering burnin, nothing bad meanwhile. */
static void burnin_check(struct hn_brain *b, double now)
{
    if (b->cfg.burnin_s <= 0)
        return;
    for (size_t i = 0; i < b->nnodes; i++) {
        struct node *n = &b->nodes[i];
        if (n->state != HN_NODE_BURNIN || now - n->since < b->cfg.burnin_s ||
            n->last_bad >= n->since || now - n->last_data > b->cfg.laggard_max_age_s)
            continue;
        struct hn_finding f;
        char ev[96];
        snprintf(ev, sizeof(ev), "burnin_s=%.0f findings=0", now - n->since);
        hb_finding_set(&f, "burnin", HN_SEV_INFO, -1, ev, "burn-in passed after %.0f s",
                       now - n->since);
        hb_push_out(b, HN_OUT_FINDING, now, n)->finding = f;
        transition(b, now, n, HN_NODE_READY, &f, "burnin");
        if (n->drained_by_houston)
            queue_action(b, now, n, HN_ACT_RESUME, NULL);
        n->drained_by_houston = 0;
        back_in_service(n);
    }
}

void hn_brain_tick(struct hn_brain *b, double now)
{
    burnin_check(b, now);
    hb_jobs_tick(b, now);
    /* Each SKU once, in node order (deterministic). */
    for (size_t i = 0; i < b->nnodes; i++) {
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = strcmp(b->nodes[j].sku, b->nodes[i].sku) == 0;
        if (!seen)
            laggards(b, now, b->nodes[i].sku);
    }
}

/* ---- operators ---- */

int hn_brain_drain(struct hn_brain *b, double now, int node, const char *reason, const char *user)
{
    struct node *n = hb_node_at(b, node);
    if (!n || n->state == HN_NODE_RETIRED)
        return -EINVAL;
    char actor[48];
    snprintf(actor, sizeof(actor), "operator:%s", user ? user : "unknown");
    struct hn_finding f;
    hb_finding_set(&f, "operator", HN_SEV_INFO, -1, actor, "operator %s: %s",
                   user ? user : "unknown", reason && reason[0] ? reason : "drain");
    hb_push_out(b, HN_OUT_FINDING, now, n)->finding = f;
    remove_node(b, now, n, &f, actor);
    return 0;
}

int hn_brain_resume(struct hn_brain *b, double now, int node, const char *user)
{
    struct node *n = hb_node_at(b, node);
    if (!n || n->state == HN_NODE_RETIRED)
        return -EINVAL;
    char actor[48];
    snprintf(actor, sizeof(actor), "operator:%s", user ? user : "unknown");
    struct hn_finding f;
    hb_finding_set(&f, "operator", HN_SEV_INFO, -1, actor, "operator %s: resume",
                   user ? user : "unknown");
    transition(b, now, n, HN_NODE_READY, &f, actor);
    /* The scheduler's drain is undone only when houston set it. */
    if (n->drained_by_houston)
        queue_action(b, now, n, HN_ACT_RESUME, NULL);
    n->drained_by_houston = 0;
    back_in_service(n);
    return 0;
}

int hn_brain_approve(struct hn_brain *b, double now, int node, const char *user)
{
    struct node *n = hb_node_at(b, node);
    if (!n || !n->held)
        return -EINVAL;
    char actor[48];
    snprintf(actor, sizeof(actor), "operator:%s", user ? user : "unknown");
    struct hn_finding f = n->held_finding;
    snprintf(f.evidence, sizeof(f.evidence), "approved by %.47s; %.250s", actor,
             n->held_finding.evidence);
    remove_node(b, now, n, &f, actor);
    return 0;
}

int hn_brain_set_state(struct hn_brain *b, double now, int node, enum hn_node_state to,
                       const char *user)
{
    struct node *n = hb_node_at(b, node);
    if (!n || (unsigned)to >= HN_NODE_NSTATES)
        return -EINVAL;
    if (to == HN_NODE_READY)
        return hn_brain_resume(b, now, node, user);
    if (to == HN_NODE_DRAINING)
        return hn_brain_drain(b, now, node, "drain", user);
    char actor[48];
    snprintf(actor, sizeof(actor), "operator:%s", user ? user : "unknown");
    struct hn_finding f;
    hb_finding_set(&f, "operator", HN_SEV_INFO, -1, actor, "operator %s: %s",
                   user ? user : "unknown", hn_node_state_name(to));
    transition(b, now, n, to, &f, actor);
    if (to == HN_NODE_BURNIN)
        back_in_service(n);
    return 0;
}

void hn_brain_action_done(struct hn_brain *b, double now, const struct hn_action *a, int ok,
                          const char *result)
{
    /* A failed drain is retried by the executor, and a drained node's next state comes from
     * the scheduler (hn_brain_node_idle); a requeue that failed leaves its job where it runs,
     * which people must hear of. */
    if (ok == 0 && a->kind == HN_ACT_REQUEUE && a->job[0])
        hb_jobs_requeue_failed(b, now, a->job, result ? result : "");
}
