/*
 * brain.c - the brain's coordinator (brain.h): it makes and frees a brain, and orders what
 * one tick does (burn-in, the jobs' hangs and ends, then the peer rules), what the scheduler's
 * poll tells (a node's jobs, a job waiting or its time left) and an action's outcome. The
 * parts it calls are in the files named in brain.h's list of rooms.
 */
#include "brain/fleet.h"
#include "brain/hangs.h"
#include "brain/jobtab.h"
#include "brain/lifecycle.h"
#include "brain/out.h"
#include "brain/peers.h"
#include "brain/runs.h"
#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

void hn_brain_set_next_action_id(struct hn_brain *b, uint64_t next)
{
    if (next > b->next_action)
        b->next_action = next;
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
        hb_transition(b, now, n, HN_NODE_QUARANTINED, &f, "scheduler");
    }
    return 0;
}

void hn_brain_tick(struct hn_brain *b, double now)
{
    hb_burnin_check(b, now);
    hb_jobs_tick(b, now);
    hb_peers_tick(b, now);
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
