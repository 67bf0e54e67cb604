/*
 * brain_fleet.h - a brain and its fleet for the unit tests that drive the brain in virtual time
 * (test_brain, test_ledger, test_hangs, ...): the configuration the job tests share, nodes
 * added by name and rack, step reports of a job's ranks, scheduler polls and agent frames
 * while a job waits, and the outputs and views the tests read back.
 *
 * Header-only: every helper is static inline, as in testutil.h, since each test is its own
 * program. A helper fails the calling test through cmocka. The Xid catalog and SKU table a
 * configuration points at are loaded once per program by fleet_tables_setup (pass it and
 * fleet_tables_teardown to cmocka_run_group_tests). Call from the test's main thread only:
 * catalog, skus and wait_as's counters are one each per program.
 *
 *   fleets            fleet_config, fleet_of, fleet_from, fleet, fleet_cap, fleet_named,
 *                     fleet_removal_spent, fleet_held
 *   inputs            sample, report, pause_in, step_all, run_steps, run_steps_as, rank9_slow
 *   outputs, views    find_output, drain_outputs, node_state, state_of, job_view, ledger_of
 *   waits             wait_as, wait_without_progress, wait_listed_waiting,
 *                     failed_and_requeued, restore_running
 *
 * The controller driven in process has its own fleet: control_fleet.h.
 */
#ifndef HN_TEST_BRAIN_FLEET_H
#define HN_TEST_BRAIN_FLEET_H

#include "brain/brain.h"
#include "common/sku.h"
#include "common/stepmsg.h"
#include "common/xid.h"
#include "testutil.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* ---- fleets ---- */

static struct hn_xid_catalog *catalog;
static struct hn_sku_table *skus;

/* Loads the shipped Xid catalog and SKU table into catalog and skus (a cmocka group setup). */
static inline int fleet_tables_setup(void **unused)
{
    (void)unused;
    char err[256];
    catalog = hn_xid_catalog_new(hn_xid_default_catalog(), err, sizeof(err));
    if (!catalog)
        fail_msg("%s", err);
    skus = hn_sku_table_new(hn_sku_default_path(), err, sizeof(err));
    if (!skus)
        fail_msg("%s", err);
    return 0;
}

static inline int fleet_tables_teardown(void **unused)
{
    (void)unused;
    hn_xid_catalog_free(catalog);
    hn_sku_table_free(skus);
    return 0;
}

/* The tests' brain configuration: every automatic removal allowed, restarts of 60 s. */
static inline void fleet_config(struct hn_brain_config *cfg)
{
    hn_brain_config_default(cfg);
    cfg->xid_catalog = catalog;
    cfg->skus = skus;
    cfg->guard_fraction = 1;
    cfg->guard_per_rack = 0;
    cfg->restart_s = 60;
    cfg->straggler_hold_s = 0; /* recoveries told at once, but where a test holds them */
}

/* A brain with cfg and `nodes` ready nodes of `gpus` H100s, called name[0..nodes) (NULL: n1,
 * n2, ...), per_rack of them in each rack r1, r2, ... (0: all in r1). */
static inline struct hn_brain *fleet_of(const struct hn_brain_config *cfg, int nodes, unsigned gpus,
                                        int per_rack, const char *const *name)
{
    struct hn_brain *b = hn_brain_new(cfg);
    for (int i = 0; i < nodes; i++) {
        char n[16], rack[16];
        snprintf(n, sizeof(n), "n%d", i + 1);
        snprintf(rack, sizeof(rack), "r%d", per_rack ? i / per_rack + 1 : 1);
        assert_int_equal(
            hn_brain_add_node(b, name ? name[i] : n, rack, "H100", gpus, HN_NODE_READY), i);
    }
    return b;
}

/* A brain with cfg and `nodes` ready nodes of 4 H100s in one rack, called name[0..nodes)
 * (NULL: n1, n2, ...). */
static inline struct hn_brain *fleet_from(const struct hn_brain_config *cfg, int nodes,
                                          const char *const *name)
{
    return fleet_of(cfg, nodes, 4, 0, name);
}

/* fleet_from with fleet_config, at most per_node ranks per node of a job (0: the default). */
static inline struct hn_brain *fleet_named(int nodes, unsigned per_node, const char *const *name)
{
    struct hn_brain_config cfg;
    fleet_config(&cfg);
    if (per_node)
        cfg.ranks_per_node_max = per_node;
    return fleet_from(&cfg, nodes, name);
}

/* fleet_named with nodes n1, n2, ... */
static inline struct hn_brain *fleet_cap(int nodes, unsigned per_node)
{
    return fleet_named(nodes, per_node, NULL);
}

/* `nodes` nodes n1, n2, ... of 4 H100s in one rack, with fleet_config. */
static inline struct hn_brain *fleet(int nodes)
{
    return fleet_cap(nodes, 0);
}

/* A fleet of `nodes` whose blast-radius guard allows one removal, spent already on the last
 * node (an Xid 79), with recoveries held hold_s (straggler-hold). */
static inline struct hn_brain *fleet_removal_spent(int nodes, double hold_s)
{
    struct hn_brain_config cfg;
    fleet_config(&cfg);
    cfg.guard_fraction = 0.01; /* one removal */
    cfg.straggler_hold_s = hold_s;
    struct hn_brain *b = fleet_from(&cfg, nodes, NULL);
    hn_brain_xid(b, 0, nodes - 1, 0, 79);
    return b;
}

/* fleet(4) where a straggler's recovery is held 600 s (straggler-hold), restarts of
 * restart_s. */
static inline struct hn_brain *fleet_held(double restart_s)
{
    struct hn_brain_config cfg;
    fleet_config(&cfg);
    cfg.straggler_hold_s = 600;
    cfg.restart_s = restart_s;
    return fleet_from(&cfg, 4, NULL);
}

/* ---- inputs ---- */

/* Node `node` (by name) samples one field of one GPU at now. */
static inline void sample(struct hn_brain *b, double now, const char *node, unsigned gpu,
                          unsigned field, double value)
{
    assert_int_equal(hn_brain_samples(b, now, hn_brain_find_node(b, node), gpu, &field, &value, 1),
                     0);
}

/* Rank `rank` of a `world`-rank job reports `step`, which took `sec` s (4 ranks a node, rank r
 * on GPU r % 4). */
static inline struct hn_step_in report(const char *job, int rank, int world, uint64_t step,
                                       double sec)
{
    struct hn_step_in s;
    hn_step_in_init(&s, job, rank, step, sec);
    s.local_rank = rank % 4;
    s.world = world;
    s.gpu = rank % 4;
    return s;
}

/* Rank `rank` of an 8-rank job sends a pause notice of `kind` (enum hn_pause_kind) at `step`. */
static inline struct hn_step_in pause_in(const char *job, int rank, uint64_t step, int kind)
{
    struct hn_step_in s = report(job, rank, 8, step, NAN);
    s.pause = kind;
    return s;
}

/* Every rank of a `world`-rank job (4 per node) reports `step`, which took `sec` seconds of
 * wall time; slow[r] > 0 makes rank r compute that much longer (the others wait for it in
 * the all-reduce, so it shows as their comm time). */
static inline void step_all(struct hn_brain *b, double now, const char *job, int world,
                            uint64_t step, double sec, const double *slow, int64_t ckpt)
{
    double extra = 0;
    for (int r = 0; r < world && slow; r++)
        extra = fmax(extra, slow[r]);
    for (int r = 0; r < world; r++) {
        struct hn_step_in s = report(job, r, world, step, sec + extra);
        double own = slow ? slow[r] : 0;
        /* A little deterministic jitter so that noise estimates are not zero. */
        double jitter = 0.004 * sec * (double)((step * 7 + (uint64_t)r * 13) % 5) / 4.0;
        s.comm_s = extra - own + 0.1 * sec - jitter;
        s.checkpoint = ckpt;
        assert_int_equal(hn_brain_step(b, now, r / 4, &s), 0);
    }
}

/* The job's ranks report step `from` to `to`, 2 s apart from t (8 ranks on n1 and n2, or
 * `world` ranks from n1), with a checkpoint every 10 steps; the scheduler lists it on n1 and
 * n2 and both agents send a frame each step. Returns the time after the last step. */
static inline double run_steps_as(struct hn_brain *b, const char *job, int world, double t,
                                  uint64_t from, uint64_t to)
{
    for (uint64_t s = from; s <= to; s++, t += 2) {
        hn_brain_node_job(b, t, 0, job);
        hn_brain_node_job(b, t, 1, job);
        assert_int_equal(hn_brain_node_heard(b, t, 0, t, 1), 0);
        assert_int_equal(hn_brain_node_heard(b, t, 1, t, 1), 0);
        step_all(b, t, job, world, s, 2.0, NULL, (int64_t)(s / 10 * 10));
        hn_brain_tick(b, t);
    }
    return t;
}

/* run_steps_as of the 8-rank job. */
static inline double run_steps(struct hn_brain *b, const char *job, double t, uint64_t from,
                               uint64_t to)
{
    return run_steps_as(b, job, 8, t, from, to);
}

/* A 16-rank job (4 per node): steps 1..60 of 1 s, then rank 9 (n3) 27% slower for steps
 * 61..80 (slow[9] set), enough for it to be the job's straggler. *s is the next step; returns
 * the time of the next one. */
static inline double rank9_slow(struct hn_brain *b, const char *job, double slow[16], uint64_t *s)
{
    double t = 0;
    for (*s = 1; *s <= 60; (*s)++, t += 1)
        step_all(b, t, job, 16, *s, 1.0, NULL, 0);
    slow[9] = 0.27;
    for (; *s <= 80; (*s)++, t += 1.3)
        step_all(b, t, job, 16, *s, 1.0, slow, 0);
    return t;
}

/* ---- outputs and views ---- */

/* Pops every output; returns how many were of `kind` (and, but for actions, of `rule` unless
 * NULL), the first of them into *found unless found is NULL. */
static inline int find_output(struct hn_brain *b, enum hn_out_kind kind, const char *rule,
                              struct hn_out *found)
{
    struct hn_out o;
    int n = 0;
    while (hn_brain_poll(b, &o)) {
        if (o.kind != kind)
            continue;
        if (rule && kind != HN_OUT_ACTION && strcmp(o.finding.rule, rule) != 0)
            continue;
        if (!n && found)
            *found = o;
        n++;
    }
    return n;
}

/* Pops every output into a string, one line per output, for exact comparison; the string is
 * one buffer per program, overwritten by the next call. */
static inline const char *drain_outputs(struct hn_brain *b)
{
    static char text[16384];
    size_t len = 0;
    struct hn_out o;
    text[0] = '\0';
    while (hn_brain_poll(b, &o)) {
        int n = 0;
        switch (o.kind) {
        case HN_OUT_FINDING:
            n = snprintf(text + len, sizeof(text) - len, "finding %s %s sev=%d gpu=%d: %s\n",
                         o.node, o.finding.rule, o.finding.severity, o.finding.gpu,
                         o.finding.detail);
            break;
        case HN_OUT_TRANSITION:
            n = snprintf(text + len, sizeof(text) - len, "transition %s %s->%s by %s\n", o.node,
                         hn_node_state_name(o.from), hn_node_state_name(o.to), o.actor);
            break;
        case HN_OUT_ACTION:
            n = snprintf(text + len, sizeof(text) - len, "action %s %s job=%s reason=%s\n", o.node,
                         o.action.kind == HN_ACT_DRAIN    ? "drain"
                         : o.action.kind == HN_ACT_RESUME ? "resume"
                                                          : "requeue",
                         o.action.job, o.action.reason);
            break;
        case HN_OUT_HELD:
            n = snprintf(text + len, sizeof(text) - len, "held %s %s: %s\n", o.node, o.finding.rule,
                         o.finding.evidence);
            break;
        }
        assert_true(n > 0 && (size_t)n < sizeof(text) - len);
        len += (size_t)n;
    }
    return text;
}

/* Node i's lifecycle state. */
static inline enum hn_node_state node_state(struct hn_brain *b, int i)
{
    struct hn_node_view nv;
    hn_brain_node_view(b, i, &nv);
    return nv.state;
}

/* The lifecycle state of the node called name. */
static inline enum hn_node_state state_of(struct hn_brain *b, const char *name)
{
    struct hn_node_view v;
    assert_int_equal(hn_brain_node_view(b, hn_brain_find_node(b, name), &v), 0);
    return v.state;
}

/* Job id's view, as the API shows it; the job must be known. */
static inline void job_view(struct hn_brain *b, const char *id, struct hn_job_view *v)
{
    int i = hn_brain_find_job(b, id);
    assert_true(i >= 0);
    assert_int_equal(hn_brain_job_view(b, (size_t)i, v), 0);
}

/* Job id's ledger: what it has charged for good (its view adds a wait that has not ended). */
static inline const struct hn_job_ledger *ledger_of(struct hn_brain *b, const char *id)
{
    int i = hn_brain_find_job(b, id);
    assert_true(i >= 0);
    const struct hn_job_ledger *l = hn_brain_job_ledger(b, (size_t)i);
    assert_non_null(l);
    return l;
}

/* ---- waits ---- */

static int requeues_seen;   /* requeue actions wait_as saw */
static char last_hang[256]; /* the detail of the last hang finding wait_as saw */

/* From t to t + secs, every 10 s: the scheduler still runs the job; node i's agent sends a
 * frame when heard[i] (NULL: both). Returns the hangs and counts hang_unseen findings into
 * *unseen (may be NULL). */
static inline int wait_as(struct hn_brain *b, const char *job, double t, double secs,
                          const int *heard, int *unseen)
{
    int hangs = 0;
    struct hn_out o;
    for (double k = 10; k <= secs; k += 10) {
        for (int i = 0; i < 2; i++) {
            hn_brain_node_job(b, t + k, i, job);
            if (!heard || heard[i])
                assert_int_equal(hn_brain_node_heard(b, t + k, i, t + k, 1), 0);
        }
        hn_brain_tick(b, t + k);
        while (hn_brain_poll(b, &o)) {
            requeues_seen += o.kind == HN_OUT_ACTION && o.action.kind == HN_ACT_REQUEUE &&
                             strcmp(o.action.job, job) == 0;
            if (o.kind != HN_OUT_FINDING)
                continue;
            if (strcmp(o.finding.rule, "hang") == 0) {
                hangs++;
                snprintf(last_hang, sizeof(last_hang), "%s", o.finding.detail);
            }
            if (strcmp(o.finding.rule, "hang_unseen") == 0) {
                assert_int_equal(o.finding.severity, HN_SEV_INFO);
                assert_string_equal(o.job, job);
                assert_non_null(strstr(o.finding.detail, "no frame came from its nodes' agents"));
                if (unseen)
                    (*unseen)++;
            }
        }
    }
    return hangs;
}

/* wait_as where both agents send frames (heard) or neither does. */
static inline int wait_without_progress(struct hn_brain *b, const char *job, double t, double secs,
                                        int heard)
{
    static const int none[2] = {0, 0};
    return wait_as(b, job, t, secs, heard ? NULL : none, NULL);
}

/* From t to t + secs, every 10 s: the scheduler lists the job waiting (why: pending after a
 * requeue, or suspended), both agents send frames. Returns the hang findings. */
static inline int wait_listed_waiting(struct hn_brain *b, const char *job, double t, double secs,
                                      enum hn_wait why)
{
    int hangs = 0;
    struct hn_out o;
    for (double k = 10; k <= secs; k += 10) {
        for (int i = 0; i < 2; i++) {
            hn_brain_node_job(b, t + k, i, "");
            assert_int_equal(hn_brain_node_heard(b, t + k, i, t + k, 1), 0);
        }
        assert_int_equal(hn_brain_job_waiting(b, t + k, job, why), 0);
        hn_brain_tick(b, t + k);
        while (hn_brain_poll(b, &o))
            hangs += o.kind == HN_OUT_FINDING && strcmp(o.finding.rule, "hang") == 0;
    }
    return hangs;
}

/* Job id runs steps 1-20 of 2 s on n1, n2 (run_steps); an Xid 79 on n2 drains it and requeues
 * the job, and n2, replaced, is back in service. Returns the time of the failure. */
static inline double failed_and_requeued(struct hn_brain *b, const char *id)
{
    double t = run_steps(b, id, 0, 1, 20);
    hn_brain_xid(b, t, 1, 0, 79);
    (void)find_output(b, HN_OUT_ACTION, NULL, NULL);
    hn_brain_set_state(b, t, 1, HN_NODE_READY, "test");
    return t;
}

/* What a controller restart restores of a running 8-rank job first seen at 10 s, productive
 * until its last report. */
static inline void restore_running(struct hn_brain *b, const char *id, double last_report,
                                   uint64_t step, int64_t checkpoint)
{
    struct hn_job_ledger l = {.ranks = 8,
                              .first_seen = 10,
                              .last_report = last_report,
                              .step = step,
                              .checkpoint = checkpoint,
                              .productive_s = last_report - 10};
    snprintf(l.id, sizeof(l.id), "%s", id);
    assert_int_equal(hn_brain_restore_job(b, &l), 0);
}

#endif
