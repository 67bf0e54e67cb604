/*
 * steps.c - a training step of one rank, in (hn_brain_step): who may report it (the job's
 * owner, root, step-trusted-uids), which run it belongs to (a late report of the run before is
 * dropped, a step going back is a restart), the job's rank cap, and then, in order: the
 * ledger's progress, the wall-time check, rates, the straggler rows, the checkpoint (the
 * policy's drain) and a history point. Pause notices end here too (docs/jobs.md, "Hangs").
 */
#include "brain/job.h"
#include "brain/fleet.h"
#include "brain/jobtab.h"
#include "brain/ledger.h"
#include "brain/out.h"
#include "brain/rows.h"
#include "brain/runs.h"
#include "brain/strag_plan.h"
#include "common/stepmsg.h"
#include "common/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAP_WARN_S 60.0 /* a node's step_rank_cap findings: at most one a minute */

#define OWNER_WARN_S 60.0 /* a node's step_owner findings: at most one a minute */

/* The longest step time taken: a day. More is a client's mistake (1e308 made lost GPU time
 * overflow to infinity), refused like any value the brain cannot use. */
#define STEP_SECONDS_MAX 86400.0

/* j's reports add up to more step time than the wall time they came in (hb_wall_mismatch): said
 * once a run, as information for whoever instruments the job (its MFU and tokens per second,
 * which go by the same times, are off too). */
static void wall_tell(struct hn_brain *b, double now, struct job *j)
{
    j->pace.wall_told = 1;
    double reported = j->pace.wall_work / j->pace.wall_adv,
           wall = j->pace.wall_s / j->pace.wall_adv;
    char ev[320];
    snprintf(ev, sizeof(ev), "job=%s reported_s=%.6g wall_s=%.6g watched_s=%.0f limit=%.0f",
             j->l.id, reported, wall, j->pace.wall_s, WALL_K);
    struct hn_finding f;
    hb_finding_set(&f, "step_time_mismatch", HN_SEV_INFO, -1, ev,
                   "job %s's step reports add up to %.3g s between two reports, but they come "
                   "every %.3g s: their step times (dur=) are not seconds of wall time "
                   "(milliseconds?); its hang limit goes by the wall time",
                   j->l.id, reported, wall);
    hb_push_finding(b, now, NULL, j->l.id, &f);
}

/* A report sent by a user who may not report for the job (may_report): a step_owner finding about
 * the node (warning), at most one a minute per node. */
static void owner_refused(struct hn_brain *b, double now, int node, const struct hn_step_in *s,
                          int64_t owner)
{
    struct node *n = &b->nodes[node];
    if (now < n->step_owner_next)
        return;
    n->step_owner_next = now + OWNER_WARN_S;
    struct hn_finding f;
    char ev[160];
    snprintf(ev, sizeof(ev), "job=%s rank=%lld uid=%lld owner=%lld", s->job, (long long)s->rank,
             (long long)s->uid, (long long)owner);
    hb_finding_set(&f, "step_owner", HN_SEV_WARN, -1, ev,
                   "step reports of job %s refused: sent by uid %lld, the job belongs to uid %lld",
                   s->job, (long long)s->uid, (long long)owner);
    hb_push_finding(b, now, n, s->job, &f);
}

/* A report of j whose rank is beyond the job's cap was refused: a step_rank_cap finding about
 * the node that sent it, the first time for the job, and at most one a minute per node (a
 * process that makes up a job id per report gets one line a minute, not one per report). */
static void cap_refused(struct hn_brain *b, double now, struct job *j, int node,
                        const struct hn_step_in *s)
{
    struct node *n = &b->nodes[node];
    if (j->size.cap_warned || now < n->step_cap_next)
        return;
    j->size.cap_warned = 1;
    n->step_cap_next = now + CAP_WARN_S;
    struct hn_finding f;
    char ev[320];
    snprintf(ev, sizeof(ev),
             "job=%s rank=%lld world=%lld cap=%u ranks_per_node_max=%u sched_nodes=%u "
             "report_nodes=%u",
             j->l.id, (long long)s->rank, (long long)s->world, j->size.cap, hb_ranks_per_node(b),
             j->size.cap_sched, j->nodes.reporters);
    hb_finding_set(&f, "step_rank_cap", HN_SEV_WARN, -1, ev,
                   "step reports of job %s refused: rank %lld is beyond its cap of %u ranks "
                   "(%u per node, %u nodes)",
                   j->l.id, (long long)s->rank, j->size.cap, hb_ranks_per_node(b),
                   j->size.cap_sched > j->nodes.reporters ? j->size.cap_sched : j->nodes.reporters);
    hb_push_finding(b, now, n, j->l.id, &f);
}

/* Whether uid may report steps of a job that owner owns: the owner, root, and the users of
 * step-trusted-uids. */
static int may_report(const struct hn_brain *b, int64_t uid, int64_t owner)
{
    if (uid == 0 || uid == owner)
        return 1;
    for (unsigned k = 0; k < b->cfg.n_step_trusted_uids; k++) {
        if (uid == b->cfg.step_trusted_uids[k])
            return 1;
    }
    return 0;
}

/* Whether a rank of j last reported as a user who may not report for owner: reports accepted
 * while no poll listed the job, such as reports made up for a job id before Slurm gave it out. */
static int foreign_ranks(const struct hn_brain *b, const struct job *j, int64_t owner)
{
    for (unsigned r = 0; r < j->l.ranks; r++) {
        if (j->ranks[r].uid >= 0 && !may_report(b, j->ranks[r].uid, owner))
            return 1;
    }
    return 0;
}

/* A rank declared that its job stops stepping on purpose after s->step (docs/jobs.md, "Hangs"):
 * its hang limit is at least hang-pause-max until it steps past it. Not for a job the brain
 * does not know, that is not running, that has already passed that step (a late notice), or
 * from a rank of the run before (a delayed frame) or beyond its ranks. */
static void pause_notice(struct job *j, double now, unsigned rank, const struct hn_step_in *s)
{
    /* A job waiting for its next run has no pause of its own, unless its requeue failed: it
     * runs on where it is (hb_jobs_tick), and may save a checkpoint. */
    if (!j || j->l.ended || (j->l.pending && !(j->l.requeue_failed && !j->l.hung)) ||
        s->step < hb_waited_step(j) || rank >= j->l.ranks)
        return;
    const struct rank_st *r = &j->ranks[rank];
    /* Of a rank last heard in the run before, or received before this run began (a notice of
     * that run an agent delivered late): not this run's pause. */
    if ((r->node >= 0 && r->run != j->run) || now < j->restart.run_from)
        return;
    if (j->watch.pause) { /* more ranks announce it: the pause began with the first notice */
        if (s->step > j->watch.pause_step)
            j->watch.pause_step = s->step;
        return;
    }
    j->watch.pause = s->pause < HN_PAUSE_OTHER ? s->pause : HN_PAUSE_OTHER; /* newer kinds: other */
    j->watch.pause_step = s->step;
    j->watch.pause_at = now;
    j->watch.pause_adv = 0;
}

/* Sizing (docs/jobs.md, "Rank cap"): a report's rank must fit the job's cap, else the report
 * is refused (-ERANGE) and changes nothing but the job's reporting nodes; a `world` above
 * the cap is believed only up to the cap, so that rank 0 of a large job that reports before
 * the scheduler lists the job's nodes is still accepted. */
void hn_step_in_init(struct hn_step_in *s, const char *job, int64_t rank, uint64_t step,
                     double seconds)
{
    *s = (struct hn_step_in){.job = job,
                             .rank = rank,
                             .local_rank = -1,
                             .world = -1,
                             .gpu = -1,
                             .step = step,
                             .seconds = seconds,
                             .tokens = NAN,
                             .forward_s = NAN,
                             .backward_s = NAN,
                             .optimizer_s = NAN,
                             .comm_s = NAN,
                             .tflops = NAN,
                             .flops_per_token = NAN,
                             .checkpoint = -1,
                             .uid = -1,
                             .pause = HN_PAUSE_NONE};
}

/* A report received on node n before houston took n out of service, of a job that the
 * removal did not know ran there (its first reports came in the same frame as the fault, or a
 * later one): the job ran on the node when it failed, and is interrupted and requeued as the
 * node's other jobs were. Only a report received after the collection of the agent's frame
 * before the last one the removal saw (the fault's own frame, when a fault of the node's took
 * it out): any earlier one came in a frame the brain had read, and named its job then (a
 * backlog of an ended job's reports is no job on the node). The executor requeues the job only
 * if the scheduler says it still runs on n. */
static void ran_on_removed(struct hn_brain *b, double now, struct job *j, struct node *n)
{
    if (n->removed_at <= 0 || now > n->removed_at || now <= n->removed_from || j->l.pending ||
        j->l.requeued_at >= n->removed_at)
        return;
    /* As of the removal: the rest of the interrupted run's reports (stamped up to then) are
     * not its next run. */
    hb_interrupt(b, j, n->removed_at, n->removed_cause);
    /* Unless the scheduler's list the removal went by named it: requeued then. Once another
     * poll has been applied (by the order they are applied in: a poll's time is when it
     * began), a job it lists there may have been named at the removal too; a second requeue
     * of it is skipped by the executor (the job no longer runs on n). */
    if (!hb_node_runs(n, j->l.id) || b->jobs->sched_gen != n->removed_gen)
        hb_requeue(b, n->removed_at, n, j->l.id);
}

/* Whether the scheduler has shown interrupted job j off its nodes since the interruption
 * (listed waiting, or running again after that), or never will: no scheduler lists jobs, or
 * it has never listed this one. */
static int left_its_nodes(const struct hn_brain *b, const struct job *j)
{
    return !b->jobs->sched_lists || j->sched.seen < 0 || j->sched.waiting ||
           j->sched.run_listed > j->l.requeued_at;
}

int hn_brain_step(struct hn_brain *b, double now, int node, const struct hn_step_in *s)
{
    struct hn_jobs *js = b->jobs;
    if (!hb_node_at(b, node) || !s->job || !s->job[0] || strlen(s->job) >= sizeof(js->v[0]->l.id) ||
        (!s->pause && !(s->seconds >= 0 && s->seconds <= STEP_SECONDS_MAX)) || s->pause < 0 ||
        s->rank >= (int64_t)RANKS_MAX || s->world > (int64_t)RANKS_MAX)
        return -EINVAL;
    hb_told(js, now);
    /* Who may report (docs/steps.md, may_report): the job's owner, root and step-trusted-uids.
     * The uid is the kernel's word (the agent's SO_PASSCRED); unknown for an older agent. The
     * owner is the latest poll's, else the one a poll gave before (a job that ended, or waits
     * to be requeued, keeps it). */
    int i = hb_find_job(js, s->job);
    int64_t listed = js->nowners ? hb_owner_of(js, s->job) : -1;
    int64_t owner = listed >= 0 ? listed : i >= 0 ? js->v[i]->sched.owner : -1;
    if (owner >= 0 && s->uid >= 0 && !may_report(b, s->uid, owner)) {
        owner_refused(b, now, node, s, owner);
        return -EPERM;
    }
    if (s->pause) {
        pause_notice(i >= 0 ? js->v[i] : NULL, now, s->rank >= 0 ? (unsigned)s->rank : 0, s);
        return 0;
    }
    unsigned rank = s->rank >= 0 ? (unsigned)s->rank : 0;
    struct job *j = i >= 0 ? js->v[i] : hb_new_job(js, s->job, now - s->seconds);
    if (listed >= 0 && listed != j->sched.owner) {
        /* First listed (or the id was reused): if another user reported for it before, none
         * of what the job's reports built (steps, checkpoint, ranks, rows, detector) can be
         * trusted, and it starts again from this report. */
        if (i >= 0 && foreign_ranks(b, j, listed)) {
            hb_job_forget(js, j);
            j = js->v[i] = hb_job_alloc(s->job, now - s->seconds);
        }
        j->sched.owner = listed;
    }
    hb_add_reporter(j, node);
    unsigned had = hb_run_ranks(j);
    /* A rank beyond a shed run's ranks, received before its first report: a report of the
     * run before that its node delivered late (the run_from check below needs the rank's
     * state, which the shed dropped). */
    if (!j->l.pending && now < fmax(j->restart.run_from, j->restart.restored_at) &&
        rank >= j->l.ranks && rank < j->size.shed_from) /* shed_from: 0 unless this run shed */
        return 0;
    /* A world other than this run's, received before the run began: a report of the run
     * before, its node's agent late to deliver it. */
    if (!j->l.pending && j->size.run_world && s->world > 0 &&
        (unsigned)s->world != j->size.run_world && rank < j->l.ranks && j->ranks[rank].node >= 0 &&
        j->ranks[rank].run == j->run && now < fmax(j->restart.run_from, j->restart.restored_at))
        return 0;
    /* Received before the interruption: of the run it ended (dropped below), and no measure
     * of the waiting job's size either. */
    if (j->l.pending && now <= j->l.requeued_at)
        return 0;
    unsigned want = rank + 1;
    unsigned claim = s->world > 0 && (unsigned)s->world > want ? (unsigned)s->world : want;
    if (claim > j->l.ranks) {
        /* The ranks it had in an earlier run are its own, whatever this run's nodes so far. */
        unsigned cap = hb_rank_cap(b, j);
        if (cap < j->l.ranks_high)
            cap = j->l.ranks_high;
        if (want > cap && want > j->l.ranks) {
            cap_refused(b, now, j, node, s);
            return -ERANGE;
        }
        unsigned to = claim < cap ? claim : cap;
        if (to < want)
            to = want; /* within the ranks it already has (a ledger restored bigger) */
        if (to > j->l.ranks)
            hb_grow_ranks(b, now, j, to);
    }
    struct rank_st *r = &j->ranks[rank];
    /* A rank of the run before this one that steps on from where it was, received before this
     * run's first report: a report of that run a node's agent delivered late (it sends once
     * per cycle), not of this one. */
    if (r->node >= 0 && r->run != j->run && now < j->restart.run_from && s->step > r->last_step)
        return 0;
    if (j->l.ended)
        j->watch.watched = 0; /* back after it ended (requeued by someone else, say) */
    j->l.ended = 0;
    j->l.ended_at = 0;
    hb_job_changed(b->jobs, j);

    int new_run = r->node >= 0 && r->run == j->run && s->step < r->last_step;
    if (j->l.pending) {
        /* Reports of the interrupted run still in flight (an agent sends once per cycle) are
         * not progress. The next run is a rank starting over at or before its last step (a
         * restart from a checkpoint), a rank not seen before once the scheduler has shown the
         * job off its nodes (until then it may be one of the interrupted run's that had not
         * reported yet: a job first heard at its node's fault), or any report once the
         * interrupted run's stragglers have had a minute to arrive. */
        int next = (r->node >= 0 && s->step <= r->last_step) ||
                   (r->node < 0 && left_its_nodes(b, j)) ||
                   now - j->restart.pending_at > fmax(60, 2 * hb_typical_step(j)) ||
                   j->l.requeue_failed; /* it goes on where it runs: its steps are its run's */
        /* Whatever the rank, one received before the interruption is of the run it ended. */
        if (!next || now <= j->l.requeued_at)
            return 0;
        if (!j->l.requeue_failed) /* one that ran on where it was did not restart */
            hb_restart_taken(j, now, s->seconds);
        hb_resume(b, j, now, s->seconds, s->step);
        hb_new_run_nodes(j, node);
    } else if (new_run) { /* restarted without houston: its cause is unknown */
        hb_interrupt_n(b, j, now, HN_LOSS_OTHER, had);
        hb_resume(b, j, now, s->seconds, s->step);
        hb_new_run_nodes(j, node);
    }
    if (claim > j->size.run_claim)
        j->size.run_claim = claim;
    if (s->world > 0 && (unsigned)s->world > j->size.run_world)
        j->size.run_world = (unsigned)s->world;
    if (s->world > 0 && (!j->size.run_world_lo || (unsigned)s->world < j->size.run_world_lo))
        j->size.run_world_lo = (unsigned)s->world;
    if (j->size.run_world_lo != j->size.run_world)
        j->size.mixed_worlds = 1;
    hb_set_rank_node(j, r, node);
    j->sched.waiting = 0; /* it steps: it runs, whatever the last poll said */
    r->uid = s->uid;
    r->gpu = s->gpu;
    r->run = j->run;
    r->last_step = s->step;
    double secs = hb_rank_seconds(s);
    r->last_secs = secs;
    r->phase[PHASE_FORWARD][r->phase_at] = (float)s->forward_s;
    r->phase[PHASE_BACKWARD][r->phase_at] = (float)s->backward_s;
    r->phase[PHASE_OPTIMIZER][r->phase_at] = (float)s->optimizer_s;
    r->phase_at = (uint8_t)((r->phase_at + 1) % PHASE_KEEP);
    j->l.last_report = now;

    hb_progress(j, now, s, b->nodes[node].heard_from <= j->watch.last_progress);
    if (!j->pace.wall_told && hb_wall_mismatch(j))
        wall_tell(b, now, j);
    hb_rates(b, j, node, s);
    if (!isnan(secs))
        hb_row_put(b, now, j, rank, s->step, secs);
    else
        j->feed.untimed++;
    hb_checkpoint(b, now, j, s->checkpoint);
    hb_add_point(b->jobs, j, now);
    ran_on_removed(b, now, j, &b->nodes[node]);
    return 0;
}
