/*
 * jobviews.c - jobs as the API and the store see them (brain.h): views, ledgers, history
 * points not saved yet, which jobs changed, and a job's ledger and history restored after a
 * controller restart.
 */
#include "brain/job.h"
#include "brain/fleet.h"
#include "brain/hangs.h"
#include "brain/jobtab.h"
#include "brain/ledger.h"
#include "brain/runs.h"
#include "brain/strag_hold.h"
#include "common/stepmsg.h"
#include "common/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t hn_brain_job_bytes(const struct hn_brain *b, size_t i)
{
    if (i >= b->jobs->n)
        return 0;
    const struct job *j = b->jobs->v[i];
    return sizeof(*j) + (size_t)j->ranks_alloc * (sizeof(*j->ranks) + ROWS * sizeof(double)) +
           (size_t)j->nodes.cap * sizeof(*j->nodes.t);
}

int hn_brain_job_rank(const struct hn_brain *b, size_t i, unsigned r, const char **node, int *gpu,
                      double *seconds)
{
    if (i >= b->jobs->n || r >= b->jobs->v[i]->l.ranks)
        return -EINVAL;
    const struct rank_st *k = &b->jobs->v[i]->ranks[r];
    *node = k->node >= 0 ? b->nodes[k->node].name : NULL;
    *gpu = k->gpu;
    *seconds = k->last_secs;
    return 0;
}

size_t hn_brain_job_count(const struct hn_brain *b)
{
    return b->jobs->n;
}

int hn_brain_find_job(const struct hn_brain *b, const char *id)
{
    return hb_find_job(b->jobs, id);
}

int hn_brain_job_view(const struct hn_brain *b, size_t i, struct hn_job_view *out)
{
    const struct hn_jobs *js = b->jobs;
    if (i >= js->n)
        return -EINVAL;
    const struct job *j = js->v[i];
    /* A job whose reports were all refused (the rank cap) is kept only to count its nodes:
     * not a job to show anyone. */
    if (j->l.ranks == 0)
        return -ENOENT;
    memset(out, 0, sizeof(*out));
    out->l = j->l;
    out->state = j->l.ended         ? "ended"
                 : j->l.hung        ? "hung"
                 : j->l.pending     ? "restarting"
                 : j->sched.waiting ? "waiting"
                                    : "running";
    out->nodes = j->nodes.n;
    double now = js->now;
    double end = hb_job_end(j, now);
    out->wall_s = end > j->l.first_seen ? end - j->l.first_seen : 0;
    out->step_seconds = hb_typical_step(j);
    /* Only a job the scheduler lists is checked for hangs. */
    int checked = !j->l.ended && j->sched.seen >= 0 && !(j->sched.waiting && !j->l.pending);
    /* A restart waits for its first step under restart_watch's limit; a job whose requeue
     * failed runs on under the usual one. */
    out->hang_limit_s = !checked                               ? NAN
                        : j->l.pending && !j->l.requeue_failed ? hb_restart_limit(b, j)
                                                               : hb_hang_limit(b, j);
    out->no_progress_s = checked && !j->l.pending && !j->sched.waiting && j->watch.last_progress > 0
                             ? fmax(0, now - fmax(j->watch.last_progress, j->sched.ran_again))
                             : NAN;
    out->pause = checked ? hn_pause_name(j->watch.pause) : NULL;
    out->pause_step = j->watch.pause_step;
    out->pause_s = out->pause ? fmax(0, now - j->watch.pause_at) : NAN;
    out->straggler_every = j->feed.stride;
    out->late_reports = j->feed.late_total;
    out->untimed_reports = j->feed.untimed;
    out->tokens_per_s = j->rate.tokens_per_s_rank * j->l.ranks;
    out->tflops_per_gpu = j->rate.tflops;
    out->mfu = hb_job_mfu(j);
    out->ettr = hb_ettr(j, now);
    out->effective_mfu = out->mfu * out->ettr;
    /* A wait for the next run is charged when it ends (the next run's first step, a hang at
     * restart, the job's end): until then it is shown as lost so far, so that lost time grows
     * through an outage instead of jumping when it is over. */
    if (j->l.pending && !j->l.ended && now > j->l.interrupted_at) {
        out->l.lost_s[j->l.pending_cause] += now - j->l.interrupted_at;
        out->l.lost_gpu_s[j->l.pending_cause] += (now - j->l.interrupted_at) * j->l.charged_ranks;
    }
    for (int c = 0; c < HN_LOSS_NCAUSES; c++)
        out->lost_gpu_h[c] = out->l.lost_gpu_s[c] / 3600.0;
    /* One keeping up again, its recovery held (hb_quiet_start), is not shown. */
    out->straggler_rank = hb_strag_held(j) ? -1 : j->strag.rank;
    if (out->straggler_rank >= 0 && j->ranks[j->strag.rank].node >= 0)
        hn_strlcpy(out->straggler_node, b->nodes[j->ranks[j->strag.rank].node].name,
                   sizeof(out->straggler_node));
    out->straggler_slowdown = out->straggler_rank >= 0 ? j->strag.slow : 0;
    out->straggler_onset = j->strag.onset;
    out->straggler_phase =
        out->straggler_rank >= 0 && j->strag.phase >= 0 ? hb_phase_names[j->strag.phase] : NULL;
    out->straggler_phase_excess = out->straggler_phase ? j->strag.phase_excess : NAN;
    hn_strlcpy(out->plan, j->strag.plan, sizeof(out->plan));
    out->series = j->hist.series;
    out->nseries = j->hist.nseries;
    return 0;
}

const struct hn_job_ledger *hn_brain_job_ledger(const struct hn_brain *b, size_t i)
{
    const struct hn_jobs *js = b->jobs;
    /* No ledger for a job whose reports were all refused, as in hn_brain_job_view. */
    return i < js->n && js->v[i]->l.ranks != 0 ? &js->v[i]->l : NULL;
}

int hn_brain_job_dirty(struct hn_brain *b, size_t i, int clear)
{
    if (i >= b->jobs->n)
        return 0;
    struct job *j = b->jobs->v[i];
    int d = j->changed == 1;
    if (clear && d)
        j->changed = 2; /* left in the list until hn_brain_jobs_changed drops it */
    return d;
}

size_t hn_brain_jobs_changed(struct hn_brain *b, size_t *idx, size_t max)
{
    struct hn_jobs *js = b->jobs;
    size_t keep = 0;
    for (size_t k = 0; k < js->nchanged; k++) {
        struct job *j = js->changed[k];
        if (j->changed != 1) {
            j->changed = 0;
            continue;
        }
        if (keep < max)
            idx[keep] = (size_t)hb_find_job(js, j->l.id);
        js->changed[keep++] = j;
    }
    js->nchanged = keep;
    return keep;
}

int hn_brain_job_points_unsaved(const struct hn_brain *b, size_t i, const struct hn_job_point **p,
                                size_t *n, int *replace)
{
    if (i >= b->jobs->n)
        return -EINVAL;
    const struct job *j = b->jobs->v[i];
    size_t from =
        j->hist.points_rewrite || j->hist.saved_points > j->hist.nseries ? 0 : j->hist.saved_points;
    *p = j->hist.series + from;
    *n = j->hist.nseries - from;
    *replace = from == 0 && j->hist.points_rewrite;
    return 0;
}

void hn_brain_job_points_saved(struct hn_brain *b, size_t i)
{
    if (i >= b->jobs->n)
        return;
    struct job *j = b->jobs->v[i];
    j->hist.saved_points = j->hist.nseries;
    j->hist.points_rewrite = 0;
}

int hn_brain_restore_points(struct hn_brain *b, const char *id, const struct hn_job_point *p,
                            size_t n)
{
    int i = hb_find_job(b->jobs, id);
    if (i < 0)
        return -ENOENT;
    struct job *j = b->jobs->v[i];
    /* Thinned as hb_add_point would have: every k-th point, back from the newest, at most
     * SERIES_MAX (the oldest go first, as there). From the k-th on, an odd count lost the
     * newest point. */
    size_t k = 1;
    while (n / k > SERIES_MAX)
        k *= 2;
    j->hist.nseries = 0;
    size_t count = n ? (n - 1) / k + 1 : 0;
    if (count > SERIES_MAX)
        count = SERIES_MAX;
    for (size_t q = n - count * k + k - 1; count && q < n; q += k)
        j->hist.series[j->hist.nseries++] = p[q];
    j->hist.series_dt = SERIES_DT * (double)k;
    j->hist.next_point =
        j->hist.nseries ? j->hist.series[j->hist.nseries - 1].time + j->hist.series_dt : 0;
    j->hist.saved_points = j->hist.nseries;
    j->hist.points_rewrite = k > 1;
    return 0;
}

int hn_brain_restore_job(struct hn_brain *b, const struct hn_job_ledger *l)
{
    struct hn_jobs *js = b->jobs;
    if (!l->id[0] || l->ranks > RANKS_MAX)
        return -EINVAL;
    if (hb_find_job(js, l->id) >= 0)
        return -EEXIST;
    struct job *j = hb_new_job(js, l->id, l->first_seen);
    unsigned ranks = l->ranks;
    if (ranks)
        hb_grow_ranks(b, l->first_seen, j, ranks); /* a new job: nothing is held */
    j->l = *l;
    j->l.ranks = ranks;
    /* The interrupted run's size, which its wait is charged at; a ledger of schema 10 or
     * older, or one not waiting, has none: its ranks stand in. */
    if (!(l->pending && l->charged_ranks > 0 && l->charged_ranks <= ranks))
        j->l.charged_ranks = ranks;
    /* A ledger of before GPU time was kept by charge: its time at its rank count. */
    for (int c = 0; c < HN_LOSS_NCAUSES; c++) {
        if (j->l.lost_gpu_s[c] == 0 && j->l.lost_s[c] != 0)
            j->l.lost_gpu_s[c] = j->l.lost_s[c] * ranks;
    }
    j->watch.last_progress = l->last_report;
    j->watch.advanced =
        1; /* it waits past its saved step (hb_waited_step), not on a first report */
    j->restart.restored_at = l->last_report; /* what came before is the run it restores, or older */
    j->l.ranks_high = l->ranks_high > ranks && l->ranks_high <= RANKS_MAX ? l->ranks_high : ranks;
    /* Waiting for its next run when the controller stopped: it still is (the time since its
     * last progress goes to the same cause; nothing to correct, the charge is not known). Also
     * when it ended so waiting: a poll that missed it and a later one that lists it again
     * (relisted), or its next run's first step, go on with that wait as without a restart. */
    j->l.pending = l->pending != 0;
    /* Hung, and left alone after hangs at start, only while it waits for its next run. */
    j->l.hung = j->l.pending && l->hung;
    j->l.restart_hangs = j->l.pending ? l->restart_hangs : 0;
    j->l.requeue_failed = j->l.pending && l->requeue_failed;
    if (j->l.pending) {
        int c = l->pending_cause;
        j->l.pending_cause = c >= 0 && c < HN_LOSS_NCAUSES ? c : HN_LOSS_OTHER;
        if (!(l->interrupted_at > 0))
            j->l.interrupted_at = l->last_report;
        j->restart.pending_at = l->last_report;
        if (!(l->requeued_at > 0)) /* a ledger from before it was saved */
            j->l.requeued_at = l->last_report;
        /* Not after the last requeue: a damaged database, or one of schema 11 or older. */
        if (!(l->restart_from > 0 && l->restart_from <= j->l.requeued_at))
            j->l.restart_from = j->l.requeued_at;
    }
    /* Its restarts' median stands for the ones it was taken from. */
    if (l->restart_s > 0 && isfinite(l->restart_s))
        j->restart.restarts[j->restart.nrestarts++] = l->restart_s;
    else
        j->l.restart_s = 0;
    return 0;
}
