/*
 * runs.c - runs.h says what this part does and owns.
 */
#include "brain/runs.h"

#include "brain/job.h"
#include "brain/fleet.h"
#include "brain/jobtab.h"
#include "brain/ledger.h"
#include "brain/out.h"
#include "brain/strag_hold.h"
#include "common/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hb_grow_ranks(struct hn_brain *b, double now, struct job *j, unsigned n)
{
    j->ranks = xrealloc(j->ranks, (size_t)n * sizeof(*j->ranks));
    j->ranks_alloc = n;
    for (unsigned r = j->l.ranks; r < n; r++) {
        j->ranks[r] = (struct rank_st){.node = -1, .gpu = -1, .last_secs = NAN, .uid = -1};
        for (int k = 0; k < PHASES; k++) {
            for (int m = 0; m < PHASE_KEEP; m++)
                j->ranks[r].phase[k][m] = NAN;
        }
    }
    for (size_t k = 0; k < ROWS; k++) {
        j->feed.rows[k].secs = xrealloc(j->feed.rows[k].secs, (size_t)n * sizeof(double));
        for (unsigned r = j->l.ranks; r < n; r++)
            j->feed.rows[k].secs[r] = NAN;
    }
    j->l.ranks = n;
    if (n > j->l.ranks_high)
        j->l.ranks_high = n;
    hb_detector_reset(b, now, j);
}

void hb_resize(struct hn_brain *b, double now, struct job *j)
{
    if (j->size.sized_run == j->run + 1u)
        return;
    j->size.sized_run = j->run + 1u;
    unsigned n = hb_run_ranks(j);
    if (n >= j->l.ranks)
        return;
    for (unsigned r = n; r < j->l.ranks; r++)
        hb_set_rank_node(j, &j->ranks[r], -1);
    j->size.shed_from = j->l.ranks;
    j->l.ranks = n;
    hb_detector_reset(b, now, j);
}

void hb_interrupt_n(struct hn_brain *b, struct job *j, double now, enum hn_loss_cause cause,
                    unsigned ranks)
{
    if (j->l.pending || j->l.ended)
        return;
    hb_holds_end(b, now, j);
    j->l.charged_ranks = ranks;
    /* The straggler's share of that time was charged to it as the steps came: the rest goes to
     * the cause, so that no second is lost twice. */
    j->restart.charged_strag_s = fmin(j->l.strag_ckpt_s, j->l.since_ckpt_s);
    hb_lose_n(j, cause, j->l.since_ckpt_s - j->restart.charged_strag_s, ranks);
    j->l.productive_s -= j->l.since_ckpt_s;
    j->restart.charged_s = j->l.since_ckpt_s;
    j->restart.charged_cause = cause;
    j->l.since_ckpt_s = j->l.strag_ckpt_s = 0;
    j->l.interruptions++;
    j->l.pending = 1;
    j->restart.pending_at = j->l.last_report;
    j->l.requeued_at = now;
    j->l.restart_from = now;
    j->l.pending_cause = cause;
    j->l.interrupted_at = j->watch.last_progress > 0 ? j->watch.last_progress : j->l.first_seen;
    j->watch.pause = 0;
    j->strag.drain_planned = 0;
    j->strag.rank = -1;
    for (unsigned r = 0; r < j->l.ranks; r++)
        j->ranks[r].held_at = 0;
    j->strag.plan[0] =
        '\0'; /* a plan for the run that is over (hb_checkpoint() says what it did after) */
    j->l.requeue_failed = 0;
    hb_job_changed(b->jobs, j);
}

void hb_interrupt(struct hn_brain *b, struct job *j, double now, enum hn_loss_cause cause)
{
    if (!j->l.pending && !j->l.ended)
        hb_resize(b, now, j); /* its first row may not have come: the ranks its world has not are
                              shed */
    hb_interrupt_n(b, j, now, cause, j->l.ranks);
}

void hb_resume(struct hn_brain *b, struct job *j, double now, double seconds, uint64_t step)
{
    double typ = hb_typical_step(j);
    if (isnan(typ))
        typ = seconds;
    double gap = now - seconds - j->l.interrupted_at;
    if (gap > 0) {
        /* A new run that starts past the step after the last one houston saw: the steps
         * between were done in the gap (their reports lost with the node, or left out of a
         * log's interval) and kept by the checkpoint it restarts from. */
        double unseen = 0;
        if (step > j->l.step + 1 && !isnan(typ))
            unseen = fmin(gap, (double)(step - 1 - j->l.step) * typ);
        hb_lose_n(j, j->l.pending_cause, gap - unseen, j->l.charged_ranks);
        j->l.productive_s += unseen;
    }
    /* The work lost is what the new run does again: the steps after the one before its first,
     * up to where the last run stopped, at the job's typical step time. The interruption
     * charged the time since the last checkpoint the job reported, which is the same when it
     * restarts from that checkpoint, all of its work when it reported none (a job read by
     * `houston tail`, say), or too little when it restarts from an older one. Without a
     * typical step (a ledger restored, and interrupted before it reported again), the new
     * run's first step stands in for it. */
    if (!isnan(j->restart.charged_s) && !isnan(typ)) {
        uint64_t stopped = j->l.step; /* where the last run stopped: no progress since */
        uint64_t redo = stopped >= step ? stopped - step + 1 : 0;
        double lost = (double)redo * typ;
        /* At most all the productive time there was: the rest of a longer redo was never
         * counted as productive here (a job that restarted from a checkpoint houston did not
         * see, or a ledger restored from before it). */
        lost = fmin(lost, j->l.productive_s + j->restart.charged_s);
        double more = lost - j->restart.charged_s;
        /* Less lost than charged (it restarted from a later checkpoint than it reported, or
         * reported none): the steps it kept are productive again, and the cause gives back
         * their time less the straggler's share, which stays the straggler's as for any kept
         * step; so the cause never goes below 0. */
        if (more < 0 && j->restart.charged_s > 0)
            hb_lose_n(j, j->restart.charged_cause,
                      more * (1 - j->restart.charged_strag_s / j->restart.charged_s),
                      j->l.charged_ranks);
        else
            hb_lose_n(j, j->restart.charged_cause, more, j->l.charged_ranks);
        j->l.productive_s -= more;
    }
    j->restart.charged_s = NAN;
    j->restart.run_from = now;
    j->l.pending = 0;
    j->l.hung = 0;
    j->l.restart_hangs = 0;
    j->l.requeue_failed = 0;
    hb_job_changed(b->jobs, j);
    j->run++;
    j->size.run_claim = j->size.run_world = j->size.run_world_lo = j->size.shed_from = 0;
    /* Its rates are the new run's (on other GPUs, say). */
    j->rate.tflops = j->rate.tokens_per_s_rank = j->rate.mfu = NAN;
    j->l.step = step > 0 ? step - 1 : 0; /* so that this step counts as progress */
    j->watch.front = j->l.step;
    /* Not before the interrupted run's last progress: a first step whose time reaches back
     * further (clocks of other nodes, start-up counted in the step) would count time that was
     * that run's, productive or lost already, twice. Nor after now (an interruption restored
     * from a later clock): its hangs would go unseen until then. */
    j->watch.last_progress = fmax(now - seconds, fmin(j->l.interrupted_at, now));
    j->watch.watched = 0;
    j->watch.advanced = 0; /* this step counts as progress, also at step 0 */
    j->pace.run_gaps = 0;  /* its first steps are a start's (compilation, warm-up): hb_hang_limit */
    /* Its reports are judged against the wall clock anew (a fixed client, say). */
    j->pace.frame_at = j->pace.frame_from = j->pace.frame_work = j->pace.wall_work =
        j->pace.wall_s = j->pace.wall_bad_s = 0;
    j->pace.frame_adv = j->pace.wall_adv = 0;
    j->pace.wall_told = 0;
    hb_clear_rows(j);
    hb_detector_reset(b, now, j); /* the new run's detector finds its own */
}

int hb_drain_takes(const struct job *j, const struct node *n, int node)
{
    return !j->l.ended && !j->l.pending &&
           (hb_node_runs(n, j->l.id) || (hb_ranks_on(j, node) > 0 && hb_job_uses(j, node)));
}

/* ---- nodes taken out of service, and the scheduler's view ---- */

static enum hn_loss_cause cause_of(const struct hn_finding *f)
{
    if (strcmp(f->rule, "straggler") == 0)
        return HN_LOSS_STRAGGLER;
    if (strcmp(f->rule, "hang") == 0)
        return HN_LOSS_HANG;
    if (strcmp(f->rule, "operator") == 0)
        return HN_LOSS_OPERATOR;
    return HN_LOSS_FAILURE;
}

void hb_jobs_node_removed(struct hn_brain *b, double now, struct node *n,
                          const struct hn_finding *f)
{
    struct hn_jobs *js = b->jobs;
    int node = (int)(n - b->nodes);
    n->removed_at = now;
    n->removed_from = n->heard_before;
    n->removed_gen = js->sched_gen;
    n->removed_cause = cause_of(f);
    for (size_t i = 0; i < js->n; i++) {
        struct job *j = js->v[i];
        if (!hb_drain_takes(j, n, node))
            continue;
        hb_interrupt(b, j, now, cause_of(f));
        if (!hb_node_runs(n, j->l.id))
            hb_requeue(b, now, n, j->l.id);
    }
}

/* A job waiting for its next run that a poll missed (ended) and the next one lists again: it
 * had not ended. Nor had one that unlisted_end ended for its silence (the only end of a job
 * not waiting with an ended_at), as no scheduler listed it then: a controller restarted, or
 * squeue failing, before its first poll, say; a hung job would otherwise stay "ended" while
 * the scheduler lists it running, never checked for hangs. */
static void relisted(struct hn_jobs *js, struct job *j)
{
    if (j->l.ended && (j->l.pending || j->l.ended_at > 0)) {
        j->l.ended = 0;
        j->l.ended_at = 0;
        /* Its silence was not watched as a listed job's (progress): a report before the next
         * tick would learn it as a pause, and its hang limit grow to it. */
        j->watch.watched = 0;
        hb_job_changed(js, j);
    }
}

void hb_jobs_sched_seen(struct hn_brain *b, double now, const char *job)
{
    struct hn_jobs *js = b->jobs;
    js->sched_poll = now;
    js->sched_lists = 1;
    js->sched_gen++;
    hb_told(js, now);
    if (!job || !job[0])
        return;
    int i = hb_find_job(js, job);
    if (i < 0)
        return;
    struct job *j = js->v[i];
    if (j->sched.waiting)
        j->sched.ran_again = now;
    if (j->sched.waiting || j->sched.run_listed < 0 || j->l.ended)
        j->sched.run_listed = now;
    relisted(js, j);
    j->sched.seen = now;
    j->sched.waiting = 0;
}

void hb_jobs_sched_waiting(struct hn_brain *b, double now, const char *job, enum hn_wait why)
{
    struct hn_jobs *js = b->jobs;
    js->sched_poll = now;
    js->sched_lists = 1;
    hb_told(js, now);
    int i = hb_find_job(js, job);
    if (i < 0)
        return;
    struct job *j = js->v[i];
    if (j->sched.seen == now && !j->sched.waiting)
        return; /* this poll listed a part of it running (a heterogeneous job) */
    relisted(js, j);
    if (j->l.last_report >= now) { /* it stepped since the poll began: running by now */
        j->sched.seen = now;
        return;
    }
    j->sched.seen = now;
    j->sched.waiting = 1;
    j->sched.run_listed = -1;
    if (j->l.requeue_failed) { /* someone requeued it after all */
        j->l.requeue_failed = 0;
        /* Its restart begins with that requeue, as houston learns of it (as for one of a
         * running job, interrupt): houston's was refused and moved nothing, and the job sat
         * where it ran (hung, say) until now. Saved, for a controller restart. */
        j->l.requeued_at = j->l.restart_from = now;
        j->watch.pause = 0; /* that run, and the pause it announced, are over */
        hb_job_changed(b->jobs, j);
    }
    j->watch.watched = 0; /* the wait is not the job's own: not a pause to learn */
    /* Queued again without houston: the scheduler requeued it. */
    if (why == HN_WAIT_QUEUED && !j->l.pending && !j->l.ended && j->watch.last_progress > 0)
        hb_interrupt(b, j, now, HN_LOSS_OTHER);
}

void hb_jobs_time_left(struct hn_brain *b, double now, const char *job, double seconds)
{
    int i = hb_find_job(b->jobs, job);
    if (i < 0)
        return;
    b->jobs->v[i]->sched.time_left = seconds >= 0 ? seconds : -1;
    b->jobs->v[i]->sched.time_left_at = now;
}
