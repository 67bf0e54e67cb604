/*
 * control.c - the controller's service: set-up from the configuration and the store, frames
 * applied (ingest), the tick, the scheduler poll, and what ties them to the store
 * (hn_control_save). See control.h; the executor thread that carries out the actions is
 * executor.c, the `houston control` command control_cmd.c, the HTTP API api.c.
 */
#include "control/control.h"

#include "common/frame.h"
#include "common/fsroot.h"
#include "common/log.h"
#include "common/util.h"
#include "common/xid.h"
#include "sched/hostlist.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- set-up ---- */

static int read_token(const char *path, char *out, size_t size, char *err, size_t errsize)
{
    long n = hn_read_file(path, out, size);
    if (n < 0) {
        snprintf(err, errsize, "%s: %s", path, strerror((int)-n));
        return -1;
    }
    hn_trim(out);
    if (!out[0]) {
        snprintf(err, errsize, "%s: empty token", path);
        return -1;
    }
    return 0;
}

static int ensure_node_slots(struct hn_control *c)
{
    size_t n = hn_brain_node_count(c->brain);
    if (n <= c->cap_nodes)
        return 0;
    size_t cap = c->cap_nodes ? c->cap_nodes : 64;
    while (cap < n)
        cap *= 2;
    c->nodes = xrealloc(c->nodes, cap * sizeof(*c->nodes));
    memset(c->nodes + c->cap_nodes, 0, (cap - c->cap_nodes) * sizeof(*c->nodes));
    c->cap_nodes = cap;
    return 0;
}

struct topo_ctx {
    struct hn_control *c;
    const char *rack;
};

static int topo_node(void *ctx, const char *name)
{
    struct topo_ctx *t = ctx;
    const struct hn_control_config *cfg = &t->c->cfg;
    int rc = hn_brain_add_node(t->c->brain, name, t->rack, cfg->default_sku, cfg->default_gpus,
                               HN_NODE_NEW);
    return rc == -EEXIST ? 0 : (rc < 0 ? rc : 0);
}

/* Slurm topology.conf with the block plugin (one block per NVL72 rack) or the tree plugin:
 * "BlockName=rack1 Nodes=n[1-18]" / "SwitchName=leaf1 Nodes=n[1-8]". Lines without Nodes=
 * (spine switches, BlockSizes=) are skipped. */
static int load_topology(struct hn_control *c, const char *path, char *err, size_t errsize)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errsize, "%s: %s", path, strerror(errno));
        return -1;
    }
    char line[8192];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof(line), f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *block = strstr(line, "BlockName=");
        char *sw = strstr(line, "SwitchName=");
        char *nodes = strstr(line, "Nodes=");
        if (!nodes || (!block && !sw))
            continue;
        char rack[HN_NAME_MAX];
        const char *name = block ? block + 10 : sw + 11;
        size_t n = strcspn(name, " \t\n");
        if (n == 0 || n >= sizeof(rack)) {
            snprintf(err, errsize, "%s:%d: bad block or switch name", path, lineno);
            rc = -1;
            break;
        }
        memcpy(rack, name, n);
        rack[n] = '\0';
        char *list = nodes + 6;
        list[strcspn(list, " \t\n")] = '\0';
        struct topo_ctx t = {c, rack};
        if (hn_hostlist_expand(list, topo_node, &t) != 0) {
            snprintf(err, errsize, "%s:%d: bad node list '%s'", path, lineno, list);
            rc = -1;
        }
    }
    fclose(f);
    return rc;
}

static int restore_node(void *ctx, const struct hn_store_node *sn)
{
    struct hn_control *c = ctx;
    int i = hn_brain_find_node(c->brain, sn->name);
    if (i < 0)
        i = hn_brain_add_node(c->brain, sn->name, sn->rack, sn->sku, sn->gpus_expected, sn->state);
    if (i < 0)
        return 0;
    hn_brain_restore_node(c->brain, i, sn->state, sn->drained_by_houston, sn->held, sn->since,
                          sn->reason);
    if (sn->removed_at > 0 && hn_brain_restore_removal(c->brain, i, sn->removed_at,
                                                       sn->removed_from, sn->removed_cause) != 0)
        hn_warn("store: node %s: its last removal (cause %d) is not valid; left out", sn->name,
                sn->removed_cause);
    return 0;
}

static int restore_job(void *ctx, const struct hn_job_ledger *l)
{
    struct hn_control *c = ctx;
    hn_brain_restore_job(c->brain, l); /* a job listed twice or malformed is skipped */
    return 0;
}

/* One job's saved history, gathered for hn_brain_restore_points. */
struct points {
    struct hn_job_point *v;
    size_t n, cap;
};

static int restore_point(void *ctx, const struct hn_job_point *p)
{
    struct points *ps = ctx;
    if (ps->n == ps->cap) {
        ps->cap = ps->cap ? 2 * ps->cap : 512;
        ps->v = xrealloc(ps->v, ps->cap * sizeof(*ps->v));
    }
    ps->v[ps->n++] = *p;
    return 0;
}

/* ---- the ids of saved jobs ---- */

/* The set holds each id's 64-bit hash, not the id: 16 bytes an id at most (half the slots
 * used), where copies of the ids took about 100, and a year of retention may hold millions of
 * them. Two ids with the same hash only cost a store read that finds nothing (reload_job). */
static uint64_t id_key(const char *id)
{
    uint64_t h = (uint64_t)hn_str_hash(id);
    return h ? h : 1; /* 0 marks a free slot */
}

static int idset_slot(const struct hn_idset *s, uint64_t key, size_t *at)
{
    /* The product's top bits: FNV-1a's low bits alone spread similar ids poorly. */
    size_t mask = s->cap - 1;
    size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> (64 - __builtin_ctzll(s->cap)));
    for (; s->v[h]; h = (h + 1) & mask) {
        if (s->v[h] == key) {
            *at = h;
            return 1;
        }
    }
    *at = h;
    return 0;
}

static int idset_has(const struct hn_idset *s, const char *id)
{
    size_t at;
    return s->cap && idset_slot(s, id_key(id), &at);
}

static void idset_add(struct hn_idset *s, const char *id)
{
    if (2 * (s->n + 1) > s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        struct hn_idset g = {xcalloc(cap, sizeof(uint64_t)), cap, s->n};
        for (size_t i = 0; i < s->cap; i++) {
            size_t at;
            if (s->v[i] && !idset_slot(&g, s->v[i], &at))
                g.v[at] = s->v[i];
        }
        free(s->v);
        *s = g;
    }
    size_t at;
    uint64_t key = id_key(id);
    if (!idset_slot(s, key, &at)) {
        s->v[at] = key;
        s->n++;
    }
}

static void idset_clear(struct hn_idset *s)
{
    free(s->v);
    *s = (struct hn_idset){NULL, 0, 0};
}

static int saved_id(void *ctx, const char *id)
{
    idset_add(ctx, id);
    return 0;
}

/* The saved jobs' ids from the store, afresh; on a failure the set stays as it was (a set
 * that missed a saved job would let a report overwrite its ledger). */
static int load_saved_ids(struct hn_control *c)
{
    struct hn_idset fresh = {NULL, 0, 0};
    if (hn_store_job_ids(c->store, saved_id, &fresh) != 0) {
        idset_clear(&fresh);
        return -EIO;
    }
    idset_clear(&c->saved_jobs);
    c->saved_jobs = fresh;
    return 0;
}

/* Job id's saved history, into the brain (ps: a buffer to reuse). */
static int restore_job_points(struct hn_control *c, const char *id, struct points *ps)
{
    ps->n = 0;
    int rc = hn_store_load_points(c->store, id, restore_point, ps);
    if (rc == 0 && ps->n)
        hn_brain_restore_points(c->brain, id, ps->v, ps->n);
    return rc;
}

/* The restored jobs' histories (after their ledgers). */
static int restore_points(struct hn_control *c)
{
    struct points ps = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < hn_brain_job_count(c->brain); i++) {
        const struct hn_job_ledger *l = hn_brain_job_ledger(c->brain, i);
        if (l)
            rc = restore_job_points(c, l->id, &ps);
    }
    free(ps.v);
    return rc;
}

/* Whether sku (of node, or of the nodes that join when node is NULL) says nothing of the MFU
 * of the jobs on it: not in the SKU table, or no dense peak there for `mfu-dtype`. Says so. */
static void warn_sku(const struct hn_control *c, const char *node, const char *name)
{
    const struct hn_sku *sku = hn_sku_find(c->skus, name);
    const char *dtype = c->cfg.brain.mfu_dtype;
    char who[96];
    if (node)
        snprintf(who, sizeof(who), "node %s", node);
    else
        snprintf(who, sizeof(who), "default-sku (nodes that join)");
    if (!sku)
        hn_warn("control: %s: SKU '%s' is not in the SKU table (docs/skus.md): the MFU of jobs "
                "on its nodes is unknown",
                who, name);
    else if (isnan(hn_sku_peak_flops(sku, dtype)))
        hn_warn("control: %s: SKU '%s' has no dense %s peak in the SKU table: the MFU of jobs "
                "on its nodes is unknown (mfu-dtype, docs/jobs.md)",
                who, name, dtype);
}

/* warn_sku once for each SKU of the nodes, and for default-sku. A fleet has few SKUs: a short
 * list of those seen, searched linearly. */
static void warn_skus(const struct hn_control *c)
{
    enum { SEEN_MAX = 64 };
    char seen[SEEN_MAX][sizeof(c->cfg.default_sku)];
    size_t nseen = 0;
    for (size_t i = 0; i < hn_brain_node_count(c->brain); i++) {
        struct hn_node_view v;
        if (hn_brain_node_view(c->brain, (int)i, &v) != 0)
            continue;
        size_t k = 0;
        while (k < nseen && strcmp(seen[k], v.sku) != 0)
            k++;
        if (k < nseen)
            continue;
        if (nseen < SEEN_MAX)
            hn_strlcpy(seen[nseen++], v.sku, sizeof(seen[0]));
        warn_sku(c, v.name, v.sku);
    }
    size_t k = 0;
    while (k < nseen && strcmp(seen[k], c->cfg.default_sku) != 0)
        k++;
    if (k == nseen && c->cfg.accept_unknown)
        warn_sku(c, NULL, c->cfg.default_sku);
}

/* A job the brain does not have, in a step report or the scheduler's poll: one it forgot
 * (more jobs than jobs-max ran since, or not loaded at start) gets its saved ledger and
 * history back first, so that its report does not start a new ledger over the saved one and
 * a silent job (hung, waiting for its next run) is watched again. A job never saved is new.
 * -EIO when the store failed: nothing of the job may be applied then (the controller stops). */
static int reload_job(struct hn_control *c, const char *id)
{
    if (hn_brain_find_job(c->brain, id) >= 0)
        return 0;
    if (c->fatal)
        return -EIO;
    if (!idset_has(&c->saved_jobs, id))
        return 0; /* never saved: a new job (a job Slurm lists that reports no steps) */
    c->job_reads++;
    struct hn_job_ledger l;
    int rc = hn_store_load_job(c->store, id, &l);
    if (rc == -ENOENT)
        return 0;
    if (rc != 0) {
        hn_control_store_failed(c, "reloading a job");
        return -EIO;
    }
    if (hn_brain_restore_job(c->brain, &l) != 0)
        return 0;
    struct points ps = {0};
    rc = restore_job_points(c, id, &ps);
    free(ps.v);
    if (rc != 0) {
        hn_control_store_failed(c, "reloading a job's history");
        return -EIO;
    }
    c->jobs_reloaded++;
    return 0;
}

int hn_control_init(struct hn_control *c, char *err, size_t errsize)
{
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->wake, NULL);
    if (read_token(c->cfg.token_file, c->token, sizeof(c->token), err, errsize) ||
        read_token(c->cfg.operator_token_file, c->operator_token, sizeof(c->operator_token), err,
                   errsize))
        return -1;
    c->catalog = hn_xid_catalog_new(c->cfg.xid_catalog, err, errsize);
    if (!c->catalog)
        return -1;
    c->skus = hn_sku_table_new(hn_sku_default_path(), err, errsize);
    if (!c->skus ||
        (c->cfg.sku_file[0] && hn_sku_table_overlay(c->skus, c->cfg.sku_file, err, errsize) != 0))
        return -1;
    c->cfg.brain.xid_catalog = c->catalog;
    c->cfg.brain.skus = c->skus;
    c->cfg.brain.sku_rules = c->cfg.sku_rules;
    c->cfg.brain.nsku_rules = c->cfg.nsku_rules;
    c->brain = hn_brain_new(&c->cfg.brain);
    for (size_t i = 0; i < c->cfg.nnodes; i++) {
        const struct hn_control_node_cfg *n = &c->cfg.nodes[i];
        if (hn_brain_add_node(c->brain, n->name, n->rack, n->sku, n->gpus, HN_NODE_NEW) < 0) {
            snprintf(err, errsize, "node %s: listed twice or invalid", n->name);
            return -1;
        }
    }
    if (c->cfg.topology_conf[0] && load_topology(c, c->cfg.topology_conf, err, errsize))
        return -1;
    if (c->cfg.accept_unknown < 0)
        c->cfg.accept_unknown = hn_brain_node_count(c->brain) == 0;
    c->store = hn_store_open(c->cfg.store, err, errsize);
    if (!c->store)
        return -1;
    if (c->cfg.store_full_sync && hn_store_set_sync(c->store, 1) != 0) {
        snprintf(err, errsize, "store-sync full: %s", hn_store_error(c->store));
        return -1;
    }
    if (hn_store_load_nodes(c->store, restore_node, c) != 0) {
        snprintf(err, errsize, "store: cannot load nodes: %s", hn_store_error(c->store));
        return -1;
    }
    if (hn_store_load_jobs(c->store, c->cfg.brain.jobs_max, restore_job, c) != 0 ||
        restore_points(c) != 0 || load_saved_ids(c) != 0) {
        snprintf(err, errsize, "store: cannot load jobs: %s", hn_store_error(c->store));
        return -1;
    }
    hn_brain_set_next_action_id(c->brain, hn_store_max_action_id(c->store) + 1);
    warn_skus(c);
    ensure_node_slots(c);
    struct hn_sched_settings set;
    hn_sched_settings_default(&set);
    hn_strlcpy(set.scontrol, c->cfg.scontrol, sizeof(set.scontrol));
    hn_strlcpy(set.squeue, c->cfg.squeue, sizeof(set.squeue));
    set.timeout_ms = c->cfg.sched_timeout_ms;
    if (hn_sched_init(&c->sched, c->cfg.scheduler, &set) != 0) {
        snprintf(err, errsize, "scheduler '%s' failed to start", c->cfg.scheduler);
        return -1;
    }
    return 0;
}

void hn_control_fini(struct hn_control *c)
{
    idset_clear(&c->saved_jobs);
    if (c->sched.ops)
        hn_sched_fini(&c->sched);
    hn_store_close(c->store);
    hn_brain_free(c->brain);
    hn_xid_catalog_free(c->catalog);
    hn_sku_table_free(c->skus);
    free(c->nodes);
    hn_control_config_fini(&c->cfg);
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->lock);
}

/* ---- persistence ---- */

static void log_output(const struct hn_out *o)
{
    switch (o->kind) {
    case HN_OUT_TRANSITION:
        hn_info("%s: %s -> %s by %s: %s", o->node, hn_node_state_name(o->from),
                hn_node_state_name(o->to), o->actor, o->finding.detail);
        break;
    case HN_OUT_HELD:
        hn_warn("%s: held for an operator (%s): %s", o->node, o->finding.detail,
                o->finding.evidence);
        break;
    case HN_OUT_ACTION:
        hn_info("%s: action %llu %s %s", o->node, (unsigned long long)o->action.id,
                o->action.kind == HN_ACT_DRAIN    ? "drain"
                : o->action.kind == HN_ACT_RESUME ? "resume"
                                                  : "requeue",
                o->action.kind == HN_ACT_REQUEUE ? o->action.job : o->action.reason);
        break;
    case HN_OUT_FINDING:
        if (o->finding.severity >= HN_SEV_WARN)
            hn_info("%s: %s: %s", o->node, o->finding.rule, o->finding.detail);
        break;
    }
}

int hn_control_flush(struct hn_control *c)
{
    struct hn_out o;
    int actions = 0, rc = 0;
    /* Nodes touched, saved once each after their outputs. */
    int touched[64];
    size_t ntouched = 0;
    int overflow = 0;
    while (hn_brain_poll(c->brain, &o)) {
        log_output(&o);
        c->outputs[o.kind]++;
        if (hn_store_append(c->store, &o) < 0)
            rc = -EIO;
        actions += o.kind == HN_OUT_ACTION;
        int i = hn_brain_find_node(c->brain, o.node);
        int seen = 0;
        for (size_t k = 0; k < ntouched; k++)
            seen |= touched[k] == i;
        if (!seen && ntouched < HN_ARRAY_LEN(touched))
            touched[ntouched++] = i;
        else if (!seen)
            overflow = 1;
    }
    size_t total = overflow ? hn_brain_node_count(c->brain) : ntouched;
    for (size_t k = 0; k < total; k++) {
        struct hn_node_view v;
        if (hn_brain_node_view(c->brain, overflow ? (int)k : touched[k], &v) == 0 &&
            hn_store_put_node(c->store, &v) != 0)
            rc = -EIO;
    }
    /* Job ledgers that changed, in the same transaction as the events that changed them: the
     * brain's list of them, not a scan of every job. */
    size_t few[256], *idx = few;
    size_t nchanged = hn_brain_jobs_changed(c->brain, few, HN_ARRAY_LEN(few));
    if (nchanged > HN_ARRAY_LEN(few)) {
        idx = xmalloc(nchanged * sizeof(*idx));
        nchanged = hn_brain_jobs_changed(c->brain, idx, nchanged);
    }
    for (size_t k = 0; k < nchanged; k++) {
        size_t i = idx[k];
        const struct hn_job_ledger *l = hn_brain_job_ledger(c->brain, i);
        if (!l)
            continue;
        /* and its history points added since (hn_brain_job_points_unsaved) */
        const struct hn_job_point *p;
        size_t np;
        int replace;
        idset_add(&c->saved_jobs, l->id);
        if (hn_store_put_job(c->store, l) != 0 ||
            hn_brain_job_points_unsaved(c->brain, i, &p, &np, &replace) != 0 ||
            hn_store_put_points(c->store, l->id, p, np, replace) != 0) {
            rc = -EIO;
        } else {
            hn_brain_job_dirty(c->brain, i, 1);
            hn_brain_job_points_saved(c->brain, i);
        }
    }
    if (idx != few)
        free(idx);
    if (actions)
        pthread_cond_signal(&c->wake);
    return rc;
}

/* The frame a save marks as applied (ingest). */
struct frame_mark {
    const char *node;
    uint64_t boot_id, seq;
    double now;
};

/* hn_control_save, and with m the frame's mark in the same transaction. On a failure err (when
 * not NULL) gets "store: " and what the store said, before the rollback. */
static int save(struct hn_control *c, const char *what, const struct frame_mark *m, char *err,
                size_t errsize)
{
    if (hn_store_begin(c->store) == 0 && hn_control_flush(c) == 0 &&
        (!m || hn_store_mark_frame(c->store, m->node, m->boot_id, m->seq, m->now) == 0) &&
        hn_store_commit(c->store) == 0)
        return 0;
    if (err)
        snprintf(err, errsize, "store: %s", hn_store_error(c->store));
    hn_store_rollback(c->store);
    hn_control_store_failed(c, what);
    return -EIO;
}

int hn_control_save(struct hn_control *c, const char *what)
{
    return save(c, what, NULL, NULL, 0);
}

/* The store failed after the brain changed: memory and disk disagree. The controller stops
 * (fail-stop) and a restart rebuilds the brain from the store, rather than act on decisions
 * that were never saved. Caller holds c->lock. */
void hn_control_store_failed(struct hn_control *c, const char *what)
{
    c->store_errors++;
    hn_err("control: store failure while %s: %s; stopping so that a restart reloads a "
           "consistent state",
           what, hn_store_error(c->store));
    c->fatal = 1;
    kill(getpid(), SIGTERM);
}

/* ---- ingest ---- */

#define INGEST_DUPLICATE 1001
#define INGEST_UNKNOWN   1002
#define INGEST_BAD_NAME  1003

struct ingest {
    struct hn_control *c;
    double now;
    double sample_time; /* the frame's own time: rates must not depend on arrival */
    struct hn_frame_header h;
    int node;
    double shift; /* agent's clock to the controller's, for this frame (agent_clock) */
    char name[HN_NAME_MAX];
};

/* Puts the frame's collection time `t` (the agent's clock) into the controller's: through
 * the node's clock offset, never after now nor more than an hour before (*clamped: it was, so
 * the frame does not continue an unbroken record). Sets in->shift, which the frame's step
 * reports take too, so that a hang is decided in one clock whatever the agents' clocks say
 * (docs/jobs.md, "Hangs"). */
static double agent_clock(struct ingest *in, struct hn_control_node *cn, double t, int *clamped)
{
    double d = in->now - t;
    if (isfinite(d)) {
        if (cn->clock_off_at <= 0 || d < cn->clock_off)
            cn->clock_off = d;
        else
            cn->clock_off = fmin(d, cn->clock_off + (in->now - cn->clock_off_at) / 60);
        cn->clock_off_at = in->now;
    }
    double at = t + cn->clock_off;
    *clamped = 0;
    if (!(at <= in->now))
        at = in->now;
    if (at < in->now - 3600) {
        at = in->now - 3600; /* what it says of the time before is lost */
        *clamped = 1;
    }
    in->shift = at - t;
    return at;
}

/* A step report's time (the agent's clock) in the controller's, as its frame's. */
static double step_clock(const struct ingest *in, double t)
{
    double at = t + in->shift;
    if (!(at <= in->now))
        at = in->now;
    return at < in->now - 3600 ? in->now - 3600 : at;
}

/* Whether node i's frame (h's boot_id and seq) was accepted before: answered from the last
 * frame saved for the node when it is of the same agent boot (the store holds that frame's seq
 * for the boot: nothing else writes it), else by the store (the node's first frame since the
 * controller started or since retention deleted old boots' records, an agent's new boot, a
 * late resend from an earlier one). 1, 0, or negative on a store error. */
static int frame_seen(struct hn_control *c, int i, const char *name,
                      const struct hn_frame_header *h)
{
    const struct hn_control_node *cn = &c->nodes[i];
    if (cn->saved && cn->saved_boot == h->boot_id)
        return h->seq <= cn->saved_seq;
    return hn_store_frame_seen(c->store, name, h->boot_id, h->seq);
}

/* The frame h of the node cn was saved as accepted (its seq is the highest of its boot). */
static void frame_saved(struct hn_control_node *cn, const struct hn_frame_header *h)
{
    cn->saved = 1;
    cn->saved_boot = h->boot_id;
    cn->saved_seq = h->seq;
}

static int on_header(void *ctx, const struct hn_frame_header *h)
{
    struct ingest *in = ctx;
    in->h = *h;
    return 0;
}

static int on_node(void *ctx, struct hn_frame_str name, unsigned gpus, struct hn_frame_str model)
{
    struct ingest *in = ctx;
    struct hn_control *c = in->c;
    (void)model;
    if (name.len == 0 || name.len >= sizeof(in->name))
        return INGEST_BAD_NAME;
    memcpy(in->name, name.p, name.len);
    in->name[name.len] = '\0';
    int i = hn_brain_find_node(c->brain, in->name);
    if (i < 0) {
        /* An agent the configuration does not list joins the fleet as a new node only when
         * that is allowed, its name is one Slurm could have, and the fleet has room. */
        if (!c->cfg.accept_unknown || !hn_sched_valid_node(in->name) ||
            hn_brain_node_count(c->brain) >= HN_CONTROL_MAX_NODES)
            return INGEST_UNKNOWN;
        i = hn_brain_add_node(c->brain, in->name, "", c->cfg.default_sku,
                              gpus ? gpus : c->cfg.default_gpus, HN_NODE_NEW);
        if (i < 0)
            return -EBADMSG;
        hn_info("%s: new node (not in the configuration), %u GPUs", in->name, gpus);
        ensure_node_slots(c);
    }
    in->node = i;
    int seen = frame_seen(c, i, in->name, &in->h);
    if (seen > 0)
        return INGEST_DUPLICATE;
    if (seen < 0)
        return -EIO;
    /* Frames queued during an outage arrive back to back: counters' rates are computed over
     * the agent's collection times, kept monotonic and never in the future. */
    double t = (double)in->h.time_ns / 1e9;
    if (!(t <= in->now))
        t = in->now;
    if (t < c->nodes[i].last_sample)
        t = c->nodes[i].last_sample;
    in->sample_time = t;
    c->nodes[i].last_sample = t;
    c->nodes[i].last_seen = in->now;
    c->nodes[i].frames++;
    struct hn_control_node *cn = &c->nodes[i];
    /* A frame that does not follow the previous one (frames dropped from a full queue, the
     * agent restarted, or the first since the controller started) breaks what the brain
     * knows of the node's frames. */
    int follows = cn->frames > 1 && in->h.boot_id == cn->boot_id && in->h.seq == cn->seq + 1;
    cn->boot_id = in->h.boot_id;
    cn->seq = in->h.seq;
    int clamped;
    double collected = agent_clock(in, cn, (double)in->h.time_ns / 1e9, &clamped);
    hn_brain_node_heard(c->brain, in->now, i, collected, follows && !clamped);
    return hn_brain_gpu_count(c->brain, in->now, i, gpus) == 0 ? 0 : -EBADMSG;
}

static int on_samples(void *ctx, unsigned gpu, const struct hn_frame_field *f, unsigned n)
{
    struct ingest *in = ctx;
    unsigned fields[256];
    double values[256];
    for (unsigned done = 0; done < n;) {
        unsigned k = 0;
        for (; k < HN_ARRAY_LEN(fields) && done < n; k++, done++) {
            fields[k] = f[done].field;
            values[k] = f[done].value;
        }
        /* A GPU index the node does not have is the agent's business; skip it. */
        if (hn_brain_samples(in->c->brain, in->sample_time, in->node, gpu, fields, values, k) == 0)
            in->c->samples += k;
    }
    return 0;
}

static int on_xid(void *ctx, const struct hn_frame_xid *x)
{
    struct ingest *in = ctx;
    if (x->kind != 1)
        return 0; /* SXid: NVSwitch, counted by the agent; no node rule yet */
    hn_brain_xid(in->c->brain, in->now, in->node, x->gpu, x->code);
    return 0;
}

static int on_ibport(void *ctx, const struct hn_frame_ibport *p)
{
    struct ingest *in = ctx;
    char key[48];
    snprintf(key, sizeof(key), "%.*s/%u", (int)(p->device.len > 32 ? 32 : p->device.len),
             p->device.p, p->port);
    hn_brain_ib_port(in->c->brain, in->now, in->node, key, p->state == 4, p->link_downed);
    return 0;
}

static int on_step(void *ctx, const struct hn_frame_step *f)
{
    struct ingest *in = ctx;
    char job[HN_JOB_ID_SIZE];
    if (f->job.len == 0 || f->job.len >= sizeof(job)) {
        in->c->steps_refused++;
        return 0;
    }
    memcpy(job, f->job.p, f->job.len);
    job[f->job.len] = '\0';
    struct hn_step_in s = {
        .job = job,
        .rank = f->rank == HN_FRAME_NO_U32 ? -1 : (int64_t)f->rank,
        .local_rank = f->local_rank == HN_FRAME_NO_U32 ? -1 : (int64_t)f->local_rank,
        .world = f->world == HN_FRAME_NO_U32 ? -1 : (int64_t)f->world,
        .gpu = f->gpu == HN_FRAME_NO_GPU ? -1 : (int)f->gpu,
        .step = f->step,
        .seconds = f->seconds,
        .tokens = f->tokens,
        .forward_s = f->forward_s,
        .backward_s = f->backward_s,
        .optimizer_s = f->optimizer_s,
        .comm_s = f->comm_s,
        .tflops = f->tflops,
        .flops_per_token = f->flops_per_token,
        .checkpoint = f->checkpoint == HN_FRAME_NO_U64 || f->checkpoint > INT64_MAX
                          ? -1
                          : (int64_t)f->checkpoint,
        .uid = f->uid == HN_FRAME_NO_U32 ? -1 : (int64_t)f->uid,
        .pause = (int)f->pause,
    };
    /* When the agent received it (steps of one cycle share a frame). */
    double t = step_clock(in, (double)f->time_ns / 1e9);
    if (reload_job(in->c, job) != 0) {
        in->c->steps_refused++;
        return 0;
    }
    int rc = hn_brain_step(in->c->brain, t, in->node, &s);
    if (rc == 0) {
        in->c->steps_accepted++;
        if (s.uid < 0)
            in->c->steps_no_uid++;
    } else if (rc == -EPERM)
        in->c->steps_not_owner++;
    else
        in->c->steps_refused++;
    return 0;
}

static const struct hn_frame_sink ingest_sink = {
    .header = on_header,
    .node = on_node,
    .samples = on_samples,
    .xid = on_xid,
    .ibport = on_ibport,
    .step = on_step,
};

int hn_control_ingest(struct hn_control *c, const void *frame, size_t len, double now, char *err,
                      size_t errsize)
{
    struct ingest in = {.c = c, .now = now, .node = -1};
    uint64_t t0 = hn_mono_ns();
    pthread_mutex_lock(&c->lock);
    if (c->fatal) {
        pthread_mutex_unlock(&c->lock);
        snprintf(err, errsize, "the controller is stopping after a store failure");
        return 503;
    }
    int rc = hn_frame_decode(frame, len, c->cfg.max_frame, &ingest_sink, &in, err, errsize);
    int status;
    if (rc == INGEST_DUPLICATE) {
        c->frames_duplicate++;
        status = 208;
    } else if (rc == INGEST_BAD_NAME) {
        c->frames_malformed++;
        snprintf(err, errsize, "node name empty or longer than %d bytes", HN_NAME_MAX - 1);
        status = 400;
    } else if (rc == INGEST_UNKNOWN) {
        c->frames_unknown++;
        snprintf(err, errsize, "node '%s' is not in this cluster's configuration", in.name);
        status = 403;
    } else if (rc != 0) {
        c->frames_malformed++;
        hn_complain(&c->malformed_log, "ingest: refused a frame (%s)", err);
        if (rc == -EIO)
            snprintf(err, errsize, "store: %s", hn_store_error(c->store));
        status = rc == -EIO ? 500 : 400;
        /* Whatever a half-applied frame decided is still kept (the brain already changed);
         * a frame is validated whole before anything is applied, so this is the store. */
        (void)hn_control_save(c, "saving what a malformed frame changed");
    } else {
        struct frame_mark m = {in.name, in.h.boot_id, in.h.seq, now};
        status = 200;
        if (save(c, "saving a frame", &m, err, errsize) != 0) {
            status = 500;
        } else {
            c->frames_accepted++;
            if (in.node >= 0)
                frame_saved(&c->nodes[in.node], &in.h);
        }
    }
    c->ingest_seconds += (double)(hn_mono_ns() - t0) / 1e9;
    pthread_mutex_unlock(&c->lock);
    return status;
}

/* Rows of a table retention deletes in one tick: a few tens of milliseconds under the lock,
 * and as much WAL (a first run on years of history goes on over the next ticks). */
#define PRUNE_BATCH 10000

/* Whether retention leaves job id's rows, not ended however silent: a job the brain still has
 * (one the scheduler lists waiting, say) goes on, and is saved as it changes; one it forgot has
 * only its rows, which nothing would end. */
static int job_in_brain(void *ctx, const char *id)
{
    const struct hn_control *c = ctx;
    return hn_brain_find_job(c->brain, id) >= 0;
}

/* Retention (store-retention): once an hour, and at every tick while a batch came back full;
 * after the tick's own transaction, in one of its own. A failure is logged and counted and
 * tried again an hour later: nothing the brain decided depends on it, so it does not stop the
 * controller (a full disk would otherwise make it a crash loop). Caller holds c->lock. */
static void prune(struct hn_control *c, double now)
{
    if (!(c->cfg.retention_days > 0) || now < c->next_prune || c->fatal)
        return;
    c->next_prune = now + 3600;
    struct hn_store_pruned p;
    if (hn_store_begin(c->store) != 0 ||
        hn_store_prune(c->store, now - c->cfg.retention_days * 86400, PRUNE_BATCH, job_in_brain, c,
                       &p) != 0 ||
        hn_store_commit(c->store) != 0) {
        c->prune_errors++;
        hn_warn("control: store-retention: %s; trying again in an hour", hn_store_error(c->store));
        hn_store_rollback(c->store);
        return;
    }
    if (p.frames) { /* frame_seen asks the store again: it may have forgotten a boot */
        for (size_t i = 0; i < c->cap_nodes; i++)
            c->nodes[i].saved = 0;
    }
    const uint64_t n[5] = {p.events, p.actions, p.jobs, p.points, p.frames};
    for (int k = 0; k < 5; k++)
        c->pruned[k] += n[k];
    if (p.jobs && load_saved_ids(c) != 0) { /* the set stays larger: harmless */
        c->prune_errors++;
        hn_warn("control: store-retention: reading the saved jobs' ids: %s",
                hn_store_error(c->store));
    }
    if (p.events == PRUNE_BATCH || p.actions == PRUNE_BATCH || p.jobs >= PRUNE_BATCH ||
        p.frames == PRUNE_BATCH) {
        c->next_prune = now; /* more to delete: at the next tick */
    } else if (c->pruned_told != c->pruned[0] + c->pruned[1] + c->pruned[2] + c->pruned[4]) {
        c->pruned_told = c->pruned[0] + c->pruned[1] + c->pruned[2] + c->pruned[4];
        hn_info("control: store-retention %.0f days: deleted %llu events, %llu actions, %llu "
                "jobs and %llu agent boots' frame records so far",
                c->cfg.retention_days, (unsigned long long)c->pruned[0],
                (unsigned long long)c->pruned[1], (unsigned long long)c->pruned[2],
                (unsigned long long)c->pruned[4]);
    }
}

void hn_control_tick(struct hn_control *c, double now)
{
    pthread_mutex_lock(&c->lock);
    hn_brain_tick(c->brain, now);
    /* Agents that stopped reporting (the node's agent, or the node, is gone). */
    size_t n = hn_brain_node_count(c->brain);
    for (size_t i = 0; i < n && i < c->cap_nodes; i++) {
        double seen = c->nodes[i].last_seen;
        if (seen > 0 && now - seen > c->cfg.agent_silence_s)
            hn_brain_node_silent(c->brain, now, (int)i, now - seen);
    }
    (void)hn_control_save(c, "saving a tick");
    prune(c, now);
    pthread_mutex_unlock(&c->lock);
}

/* ---- scheduler poll ---- */

/* Why a job the scheduler lists is not running, in the brain's words (enum hn_wait), by the
 * backend's state; -1 for a running job. */
static const int wait_of[] = {
    [HN_SCHED_JOB_RUNNING] = -1,
    [HN_SCHED_JOB_SUSPENDED] = HN_WAIT_SUSPENDED,
    [HN_SCHED_JOB_QUEUED] = HN_WAIT_QUEUED,
    [HN_SCHED_JOB_ENDING] = HN_WAIT_ENDING,
};

/* A cap on the waiting jobs' ids of one poll, far above what a listing holds. */
#define POLL_IDS_MAX ((size_t)256 << 20)

/* A job the poll lists waiting. */
struct waiting {
    size_t id; /* offset of its id in the poll's ids */
    enum hn_wait why;
};

/* One poll's state while the backend lists the jobs. The waiting jobs are told to the brain
 * after all the others (a job with a part running is running): their ids are copied into
 * ids, NUL-terminated, as the listing's strings last only for its call. */
struct poll {
    struct hn_control *c;
    double now;
    int locked; /* poll_begin took c->lock: the listing worked */
    struct hn_buf ids;
    struct waiting *wait;
    size_t nwait, capwait;
};

/* The listing worked: it replaces what the brain knew of the jobs on each node and of their
 * owners. The lock is held from here to the end of the poll's listing. */
static void poll_begin(void *ctx)
{
    struct poll *p = ctx;
    struct hn_control *c = p->c;
    pthread_mutex_lock(&c->lock);
    p->locked = 1;
    c->polls_ok++;
    if (c->poll_failing)
        hn_info("scheduler poll: %s works again", c->cfg.squeue);
    c->poll_failing = 0;
    size_t n = hn_brain_node_count(c->brain);
    for (size_t i = 0; i < n; i++)
        hn_brain_node_job(c->brain, p->now, (int)i, "");
    hn_brain_job_owner(c->brain, "", -1);
}

/* A listed job. The owner decides who may report the job's steps (docs/steps.md, "Who may
 * report"); only running jobs report, so only theirs are kept (thousands of pending jobs would
 * fill the table). A job that is not running but not over (pending after a requeue, suspended,
 * completing) is told as waiting, so that houston neither calls it ended nor checks it for
 * hangs (docs/jobs.md). */
static void poll_job(void *ctx, const struct hn_sched_job *job)
{
    struct poll *p = ctx;
    struct hn_control *c = p->c;
    /* A store failure stops the controller; the poll goes on meanwhile (it creates no ledger
     * for a job the brain does not have). */
    (void)reload_job(c, job->id);
    if (job->state == HN_SCHED_JOB_RUNNING) {
        if (job->uid >= 0 && hn_brain_job_owner(c->brain, job->id, job->uid) == -ENOSPC)
            c->owners_dropped++;
        return;
    }
    size_t off = p->ids.len;
    if (hn_buf_append(&p->ids, job->id, strlen(job->id) + 1) != 0)
        return;
    if (p->nwait == p->capwait) {
        p->capwait = p->capwait ? 2 * p->capwait : 64;
        p->wait = xrealloc(p->wait, p->capwait * sizeof(*p->wait));
    }
    p->wait[p->nwait++] = (struct waiting){off, (enum hn_wait)wait_of[job->state]};
}

/* A node a running job runs on (a node may run several: the brain keeps up to 16 per node, and
 * requeues each when it drains the node). */
static void poll_node(void *ctx, const struct hn_sched_job *job, const char *node)
{
    struct poll *p = ctx;
    int i = hn_brain_find_node(p->c->brain, node);
    if (i >= 0)
        hn_brain_node_job(p->c->brain, p->now, i, job->id);
}

static void poll_job_end(void *ctx, const struct hn_sched_job *job)
{
    struct poll *p = ctx;
    if (job->state == HN_SCHED_JOB_RUNNING)
        hn_brain_job_time_left(p->c->brain, p->now, job->id, job->time_left);
}

static const struct hn_sched_job_sink poll_sink = {
    .begin = poll_begin,
    .job = poll_job,
    .node = poll_node,
    .job_end = poll_job_end,
};

/* The listing failed: counted, and logged once until a poll works (a squeue that fails every
 * few seconds would fill the log). Caller holds c->lock. */
static void poll_failed(struct hn_control *c, const char *why)
{
    c->polls_failed++;
    if (!c->poll_failing)
        hn_warn("scheduler poll: %s failed (%s); job and node lists kept as of the last poll "
                "that worked, retrying every %g s",
                c->cfg.squeue, why, c->cfg.poll_s);
    c->poll_failing = 1;
}

void hn_control_poll(struct hn_control *c, double now)
{
    const struct hn_sched_ops *ops = c->sched.ops;
    struct poll p = {.c = c, .now = now};
    hn_buf_init(&p.ids, POLL_IDS_MAX);
    int rc = ops->list_jobs(c->sched.ctx, &poll_sink, &p);
    if (rc == -ENOTSUP) { /* a scheduler that lists no jobs: nothing to poll */
        hn_buf_fini(&p.ids);
        return;
    }
    if (!p.locked) {
        assert(rc != 0);
        pthread_mutex_lock(&c->lock);
        poll_failed(c, ops->last_error(c->sched.ctx));
    }
    for (size_t w = 0; w < p.nwait; w++)
        hn_brain_job_waiting(c->brain, now, p.ids.data + p.wait[w].id, p.wait[w].why);
    free(p.wait);
    hn_buf_fini(&p.ids);
    /* Draining nodes: empty once the scheduler shows no allocation. */
    size_t n = hn_brain_node_count(c->brain);
    char names[64][HN_NAME_MAX];
    size_t k = 0;
    for (size_t i = 0; i < n && k < 64; i++) {
        struct hn_node_view v;
        if (hn_brain_node_view(c->brain, (int)i, &v) == 0 && v.state == HN_NODE_DRAINING)
            hn_strlcpy(names[k++], v.name, HN_NAME_MAX);
    }
    pthread_mutex_unlock(&c->lock);
    for (size_t i = 0; i < k; i++) {
        struct hn_sched_node node;
        if (ops->node_info(c->sched.ctx, names[i], &node) != 0 || node.allocated)
            continue;
        pthread_mutex_lock(&c->lock);
        int idx = hn_brain_find_node(c->brain, names[i]);
        hn_brain_node_idle(c->brain, now, idx);
        (void)hn_control_save(c, "saving a node that became empty");
        pthread_mutex_unlock(&c->lock);
    }
}
