/*
 * hangs.c - hangs.h says what this part does and owns.
 */
#include "brain/hangs.h"

#include "brain/job.h"
#include "brain/fleet.h"
#include "brain/jobtab.h"
#include "brain/ledger.h"
#include "brain/out.h"
#include "brain/removal.h"
#include "brain/runs.h"
#include "common/stepmsg.h"
#include "common/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A node the scheduler lists j on, or NULL. */
static struct node *sched_node(struct hn_brain *b, const struct job *j)
{
    for (size_t i = 0; i < b->nnodes; i++) {
        if (hb_node_runs(&b->nodes[i], j->l.id))
            return &b->nodes[i];
    }
    return NULL;
}

/* The one node whose ranks did not reach the job's highest step, or -1 (none, or several). */
static int hang_culprit(const struct job *j)
{
    int culprit = -1;
    unsigned behind = 0;
    for (unsigned r = 0; r < j->l.ranks; r++) {
        const struct rank_st *k = &j->ranks[r];
        if (k->node < 0 || k->run != j->run || k->last_step >= j->watch.front)
            continue;
        behind++;
        if (culprit >= 0 && culprit != k->node)
            return -1;
        culprit = k->node;
    }
    return behind < j->l.ranks ? culprit : -1;
}

/* GPU utilisation (%) at or above which a hung rank's GPU is taken as spinning in a collective
 * kernel, and below which as idle (idle_culprit). */
#define SPIN_UTIL 50

#define IDLE_UTIL 10

/*
 * A collective hang: every rank stopped at the same step, so no node's ranks lag
 * (hang_culprit). The ranks that reached the collective wait in it, and NCCL's kernels keep
 * their GPUs busy while they wait; the rank that never arrived (a crashed or stuck process, a
 * host-side deadlock) leaves its GPU idle. The one node all of whose GPUs of the job are idle
 * while every other node's are busy, by GPU samples taken during the hang, is the culprit; -1
 * when there is no such node, or a GPU of the job has no such sample.
 */
static int idle_culprit(const struct hn_brain *b, const struct job *j)
{
    int idle = -1;
    for (unsigned r = 0; r < j->l.ranks; r++) {
        const struct rank_st *k = &j->ranks[r];
        if (k->node < 0 || k->run != j->run)
            continue;
        const struct node *n = &b->nodes[k->node];
        if (k->gpu < 0 || (unsigned)k->gpu >= n->gpus_expected)
            return -1;
        const struct gpu_st *g = &n->gpus[k->gpu];
        double util = g->v[HN_F_GPU_UTIL];
        /* A sample from the hang: of the node's latest frame (g->t and last_data are in the
         * agent's clock), which it collected after the last progress in the controller's
         * (heard). The agent's own clock may be minutes off. */
        if (isnan(util) || g->t[HN_F_GPU_UTIL] < n->last_data || n->heard <= j->watch.last_progress)
            return -1; /* no sample from the hang */
        if (util >= SPIN_UTIL)
            continue;
        if (util >= IDLE_UTIL || (idle >= 0 && idle != k->node))
            return -1; /* neither, or idle ranks on two nodes */
        idle = k->node;
    }
    if (idle < 0 || j->nodes.n < 2)
        return -1;
    /* All of that node's ranks idle, not some (a rank of it spinning means it arrived). */
    for (unsigned r = 0; r < j->l.ranks; r++) {
        const struct rank_st *k = &j->ranks[r];
        if (k->node == idle && k->run == j->run &&
            b->nodes[idle].gpus[k->gpu].v[HN_F_GPU_UTIL] >= IDLE_UTIL)
            return -1;
    }
    return idle;
}

/* Whether node n's agent has been silent at now for half a hang limit: no frame of it arrived
 * since (or none ever). A whole limit of silence from every node is hang_unseen. */
static int agent_silent(const struct node *n, double now, double limit)
{
    return n->heard_at <= 0 || now - n->heard_at > limit / 2;
}

/* The silent and the heard among a job's nodes (silence_add), for silence_culprit. */
struct silence {
    int node;    /* the silent one, -1: none */
    int several; /* more than one is silent */
    double live; /* the earliest a heard one has been heard live from (INFINITY: none heard) */
};

static void silence_add(struct silence *s, const struct hn_brain *b, int node, double now,
                        double limit)
{
    const struct node *n = &b->nodes[node];
    if (!agent_silent(n, now, limit))
        s->live = fmin(s->live, n->live_from);
    else if (s->node >= 0 && s->node != node)
        s->several = 1;
    else
        s->node = node;
}

/*
 * A node that died or locked up (a kernel panic, a GPU fallen off the bus taking the host
 * with it) stops its ranks and its agent at once: the other ranks wait in the next collective
 * at the same step, so no node lags (hang_culprit), and the dead node sends no GPU samples
 * (idle_culprit). The one node of the job whose agent went silent (agent_silent), while
 * another node's frames kept arriving live from before it went silent (never heard: from
 * `since`, the job's last progress or start) until now, is the culprit; -1 when there is none
 * or several. Frames that arrive only after an outage of the controller's own (a backlog, a
 * partition) do not count as live, so the agent that reconnects last is not blamed. A silent
 * agent alone makes a node suspect (agent_silent finding); with a hang of its job it is drained.
 */
static int silence_culprit(const struct hn_brain *b, const struct silence *s, double since)
{
    if (s->node < 0 || s->several)
        return -1;
    const struct node *n = &b->nodes[s->node];
    return s->live <= (n->heard_at > 0 ? n->heard_at : since) ? s->node : -1;
}

/* silence_culprit among the nodes of the job's run. */
static int silent_culprit(const struct hn_brain *b, const struct job *j, double now, double limit)
{
    struct silence s = {-1, 0, INFINITY};
    for (unsigned r = 0; r < j->l.ranks; r++) {
        const struct rank_st *k = &j->ranks[r];
        if (k->node >= 0 && k->run == j->run)
            silence_add(&s, b, k->node, now, limit);
    }
    return j->nodes.n >= 2 ? silence_culprit(b, &s, j->watch.last_progress) : -1;
}

enum blame { BY_RANKS, BY_SILENT, BY_IDLE };

/* "; n2's agent silent for 95 s" and the like: why node n is blamed. */
static void blame_text(char *out, size_t size, const struct node *n, enum blame by, double now)
{
    if (!n)
        out[0] = '\0';
    else if (by == BY_SILENT && n->heard_at <= 0)
        snprintf(out, size, "; %s's agent never heard", n->name);
    else if (by == BY_SILENT)
        snprintf(out, size, "; %s's agent silent for %.0f s", n->name, now - n->heard_at);
    else if (by == BY_IDLE)
        snprintf(out, size, "; its GPUs idle on %s while the others wait in a collective", n->name);
    else
        snprintf(out, size, "; ranks behind on %s", n->name);
}

static const char *const blame_name[] = {"", " by=silent_agent", " by=idle_gpus"};

static void hang(struct hn_brain *b, double now, struct job *j, double limit)
{
    enum blame by = BY_RANKS;
    int culprit = hang_culprit(j);
    if (culprit < 0 && (culprit = silent_culprit(b, j, now, limit)) >= 0)
        by = BY_SILENT;
    else if (culprit < 0 && (culprit = idle_culprit(b, j)) >= 0)
        by = BY_IDLE;
    struct node *n = culprit >= 0 ? &b->nodes[culprit] : NULL;
    struct hn_finding f;
    char ev[320];
    const char *pause = hn_pause_name(j->watch.pause);
    char during[64] = "";
    if (pause)
        snprintf(during, sizeof(during), " (a declared %s pause)", pause);
    char blame[HN_NAME_MAX + 64];
    blame_text(blame, sizeof(blame), n, by, now);
    snprintf(ev, sizeof(ev), "job=%s step=%llu no_progress_s=%.0f limit_s=%.0f culprit=%s%s%s%s",
             j->l.id, (unsigned long long)hb_waited_step(j), now - j->watch.last_progress, limit,
             n ? n->name : "unknown", n ? blame_name[by] : "", pause ? " pause=" : "",
             pause ? pause : "");
    hb_finding_set(&f, "hang", HN_SEV_FATAL, -1, ev,
                   "hang: job %s made no progress past step %llu for %.0f s%s%s", j->l.id,
                   (unsigned long long)hb_waited_step(j), now - j->watch.last_progress, during,
                   blame);
    j->l.hung = 1;
    /* A hang ends its pause (hb_interrupt() does so too, but not for a job whose requeue failed,
     * which is waiting already): the next run is not in it. */
    j->watch.pause = 0;
    /* Its requeue had failed and it ran on where it was (the only job waiting for its next
     * run that is checked for hangs): tried again, as the scheduler may take it this time (it
     * did not answer before, say). Another refusal is told again, now that the job stays hung
     * (hb_jobs_requeue_failed); a requeue taken has its restart watched (restart_watch). Its
     * wait stays its interruption's: it never progressed since. */
    if (j->l.pending) {
        j->l.requeue_failed = 0;
        j->l.requeued_at = now;
        j->l.restart_from = now; /* the one refused restarted nothing */
        hb_job_changed(b->jobs, j);
    }
    size_t mark = hb_out_mark(b);
    const char *was = hb_about(b, j->l.id);
    if (n)
        hb_found(b, now, n, &f); /* drains it (guard permitting) and requeues the job */
    else
        hb_push_out(b, HN_OUT_FINDING, now, NULL)->finding = f;
    if (!j->l.pending)
        hb_interrupt(b, j, now, HN_LOSS_HANG); /* no culprit, or the guard holds it */
    if (!hb_requeued_since(b, mark, j->l.id)) {
        /* The job still has to start again. The requeue goes by a node the job runs on (the
         * executor requeues only a job the scheduler lists there): one the scheduler lists it
         * on, else one a rank of this run reported from (no scheduler), else rank 0's (a
         * ledger restored after a controller restart). Rank 0's own node may be one of the
         * run before, the job gone from it. */
        struct node *any = n ? n : sched_node(b, j);
        for (unsigned r = 0; !any && r < j->l.ranks; r++) {
            if (j->ranks[r].run == j->run)
                any = hb_rank_node(b, j, r);
        }
        if (!any)
            any = hb_rank_node(b, j, 0);
        if (any)
            hb_requeue(b, now, any, j->l.id);
    }
    hb_about(b, was);
}

double hb_hang_limit(const struct hn_brain *b, const struct job *j)
{
    double typ = hb_typical_gap(j);
    double limit = fmax(b->cfg.hang_min_s, isnan(typ) ? 0 : b->cfg.hang_k * typ);
    /* Until this run advanced twice under watch, its rhythm is unknown (one report per log
     * interval?) and its first steps may be slow (compilation, warm-up, as the first run's
     * were): the longest a pause may make the limit. */
    double pause = j->pace.run_gaps ? b->cfg.hang_pause_k * j->l.pause_s : b->cfg.hang_pause_max_s;
    /* A pause the job declared (a checkpoint save) may last the longest a pause may. */
    if (j->watch.pause)
        pause = b->cfg.hang_pause_max_s;
    return fmax(limit, fmin(b->cfg.hang_pause_max_s, pause));
}

/* Of the nodes the job's ranks report from in this run (until one has, after a controller
 * restart, those the scheduler lists it on): the longest unbroken record of frames since the
 * job's last progress (seconds; their collection times are in the controller's clock), and
 * the latest arrival of a frame (0: none). Their frames would carry its progress. */
static void job_heard(const struct hn_brain *b, const struct job *j, double *watched,
                      double *arrived)
{
    double w = -1, a = 0;
    int any = 0;
    for (unsigned r = 0; r < j->l.ranks; r++) {
        const struct rank_st *k = &j->ranks[r];
        if (k->node < 0 || k->run != j->run)
            continue;
        const struct node *n = &b->nodes[k->node];
        any = 1;
        w = fmax(w, n->heard - fmax(j->watch.last_progress, n->heard_from));
        a = fmax(a, n->heard_at);
    }
    for (size_t i = 0; !any && i < b->nnodes; i++) {
        const struct node *n = &b->nodes[i];
        if (hb_node_runs(n, j->l.id)) {
            w = fmax(w, n->heard - fmax(j->watch.last_progress, n->heard_from));
            a = fmax(a, n->heard_at);
        }
    }
    *watched = w;
    *arrived = a;
}

/* No progress for longer than the limit, and no frame from the job's nodes lately: houston
 * cannot see it (the controller cut off from them, or the nodes gone). Said once, until a
 * frame of theirs arrives again. */
static void hang_unseen(struct hn_brain *b, double now, struct job *j, double limit, double arrived)
{
    struct hn_finding f;
    char ev[256];
    snprintf(ev, sizeof(ev), "job=%s step=%llu no_progress_s=%.0f limit_s=%.0f last_frame_s=%.0f",
             j->l.id, (unsigned long long)hb_waited_step(j), now - j->watch.last_progress, limit,
             arrived > 0 ? now - arrived : -1);
    hb_finding_set(&f, "hang_unseen", HN_SEV_INFO, -1, ev,
                   "job %s made no progress past step %llu for %.0f s, but no frame came from "
                   "its nodes' agents for %.0f s; not called a hang",
                   j->l.id, (unsigned long long)hb_waited_step(j), now - j->watch.last_progress,
                   arrived > 0 ? now - arrived : now - j->watch.last_progress);
    j->watch.unseen_told = 1;
    j->watch.unseen_at = now;
    j->watch.watched = 0;
    hb_push_finding(b, now, NULL, j->l.id, &f);
}

void hb_jobs_requeue_failed(struct hn_brain *b, double now, const char *id, const char *result)
{
    int i = hb_find_job(b->jobs, id);
    if (i < 0)
        return;
    struct job *j = b->jobs->v[i];
    if (j->l.ended || !j->l.pending || j->l.requeue_failed)
        return;
    j->l.requeue_failed = 1;
    hb_job_changed(b->jobs, j);
    char words[160];
    hn_strlcpy(words, result, sizeof(words));
    for (char *c = words; *c; c++) /* one line, no quotes: it goes into evidence="..." */
        if (*c == '"' || *c == '\n' || *c == '\r')
            *c = ' ';
    struct hn_finding f;
    char ev[256];
    snprintf(ev, sizeof(ev), "job=%s hung=%d scheduler=\"%s\"", j->l.id, j->l.hung, words);
    hb_finding_set(&f, "requeue_failed", HN_SEV_WARN, -1, ev, "houston could not requeue job %s%s",
                   j->l.id,
                   j->l.hung ? ": it stays hung where it runs; cancel or requeue it by hand"
                             : ": it goes on where it runs");
    hb_push_finding(b, now, NULL, j->l.id, &f);
}

/* Hangs at start in a row after which houston stops requeueing the job (restart_watch). */
#define RESTART_HANGS 2

double hb_restart_limit(const struct hn_brain *b, const struct job *j)
{
    return fmax(b->cfg.hang_pause_max_s, hb_hang_limit(b, j));
}

/*
 * A job interrupted and requeued that the scheduler runs again (a poll lists it running after
 * one listed it waiting, or not at all, since the requeue), but whose new run has sent no step
 * for hang-pause-max (the longest a start may take: loading a checkpoint, setting up NCCL,
 * compiling) or its own hang limit if longer, while an agent of a node it runs on sent frames
 * all along: a hang at start (a bad node of the new allocation, a stuck rendezvous). The lost
 * time up to the start stays with the first cause, from then on it is the hang's; the job is
 * requeued again. None of its new ranks reported, so the only node it can name is one whose
 * agent is silent while another's reports (silence_culprit), drained like any culprit. After
 * RESTART_HANGS requeues in a row the next hang at start is reported and the job left alone
 * (a node it names made suspect): a loop of requeues helps nobody. A job whose requeue failed
 * never left its nodes: it is no new run.
 */
static void restart_watch(struct hn_brain *b, double now, struct job *j)
{
    /* Running again: listed running by a poll after one listed it waiting (or not at all)
     * since the requeue. A job the scheduler never took off its nodes is not a new run. */
    if (j->sched.waiting || j->sched.run_listed <= j->l.requeued_at ||
        j->l.restart_hangs > RESTART_HANGS || j->l.requeue_failed)
        return;
    double since = j->sched.run_listed;
    double limit = hb_restart_limit(b, j);
    if (now - since <= limit)
        return;
    struct node *any = NULL;
    double watched = -1;
    struct silence s = {-1, 0, INFINITY};
    for (size_t i = 0; i < b->nnodes; i++) {
        struct node *n = &b->nodes[i];
        if (hb_node_runs(n, j->l.id)) {
            watched = fmax(watched, n->heard - fmax(since, n->heard_from));
            any = any ? any : n;
            silence_add(&s, b, (int)i, now, limit);
        }
    }
    if (!any || watched < limit)
        return;
    /* None of its new ranks reported, so none lags: only a node whose agent is silent while
     * another's reports (silence_culprit) can be named. */
    int culprit = silence_culprit(b, &s, since);
    struct node *n = culprit >= 0 ? &b->nodes[culprit] : NULL;
    struct hn_finding f;
    char ev[320], blame[HN_NAME_MAX + 64];
    /* Requeued again RESTART_HANGS times in a row, named node or not (a node the guard holds
     * may be named again and again); after that it is left to people, and a node it names
     * made suspect, not drained. */
    int again = ++j->l.restart_hangs <= RESTART_HANGS;
    blame_text(blame, sizeof(blame), n, BY_SILENT, now);
    snprintf(ev, sizeof(ev), "job=%s step=%llu restart=%u no_step_s=%.0f limit_s=%.0f culprit=%s%s",
             j->l.id, (unsigned long long)j->l.step, j->l.restart_hangs, now - since, limit,
             n ? n->name : "unknown", n ? blame_name[BY_SILENT] : "");
    hb_finding_set(&f, "hang", HN_SEV_FATAL, -1, ev,
                   "hang: job %s runs again (for %.0f s per the scheduler) but its new run "
                   "reported no step%s%s",
                   j->l.id, now - since, blame,
                   again ? "" : "; it hung at start before too: not requeued again");
    size_t mark = hb_out_mark(b);
    const char *was = hb_about(b, j->l.id);
    if (n && !again)
        f.severity = HN_SEV_SUSPECT;
    if (n)
        hb_found(b, now, n, &f); /* a fatal one drains it, guard permitting, and requeues */
    else
        hb_push_out(b, HN_OUT_FINDING, now, NULL)->finding = f;
    if (!again) {
        hb_about(b, was);
        return;
    }
    if (since > j->l.interrupted_at) {
        hb_lose_n(j, j->l.pending_cause, since - j->l.interrupted_at, j->l.charged_ranks);
        j->l.interrupted_at = since;
    }
    j->l.pending_cause = HN_LOSS_HANG;
    j->l.requeued_at = now;
    j->l.interruptions++;
    j->l.hung = 1;
    hb_job_changed(b->jobs, j);
    if (!hb_requeued_since(b, mark, j->l.id))
        hb_requeue(b, now, any, j->l.id);
    hb_about(b, was);
}

/*
 * A job no scheduler lists (none polled, or an id it does not know: HOUSTON_JOB_ID outside
 * Slurm) cannot be asked whether it still runs, and is not checked for hangs: silent for
 * longer than its hang limit (a restart's, while it waits for its next run), it has ended, at
 * its last report. Before, its wall time ran on for ever after it finished, its ETTR falling
 * towards 0. A report brings it back (hn_brain_step), and the silence is then wall time
 * neither productive nor lost to a cause, as any gap without reports; so does a poll that
 * lists it (relisted), which is then watched for hangs as any job it lists.
 */
static void unlisted_end(struct hn_brain *b, double now, struct job *j)
{
    double last = fmax(j->l.last_report, j->watch.last_progress);
    double limit = j->l.pending ? hb_restart_limit(b, j) : hb_hang_limit(b, j);
    if (!(last > 0) || now - last <= limit)
        return;
    j->l.ended = 1;
    j->l.ended_at = last;
    if (j->l.pending)
        hb_end_wait(j, last); /* as for a job a poll missed */
    j->watch.pause = 0;
    hb_job_changed(b->jobs, j);
}

void hb_jobs_tick(struct hn_brain *b, double now)
{
    struct hn_jobs *js = b->jobs;
    hb_told(js, now);
    for (size_t i = 0; i < js->n; i++) {
        struct job *j = js->v[i];
        if (j->l.ended)
            continue;
        /* Only the scheduler can say a job still holds its nodes; without it, silence may
         * just be the end of the job. A job it lists waiting (requeued, suspended) has not
         * ended; one it no longer lists has, also while houston waits for its next run. */
        if (j->sched.seen < 0) {
            unlisted_end(b, now, j);
            continue;
        }
        if (j->sched.seen < js->sched_poll) {
            j->l.ended = 1;
            j->l.ended_at = 0;
            /* Waiting for its next run, it never got one: the wait, lost to its cause, ran to
             * the last poll that listed it. (Should a later poll list it again, the wait goes
             * on from there: relisted.) */
            if (j->l.pending)
                hb_end_wait(j, j->sched.seen);
            j->watch.pause = 0;
            hb_job_changed(b->jobs, j);
            continue;
        }
        if (j->l.pending)
            restart_watch(b, now, j);
        /* A job whose requeue failed goes on where it runs (hb_jobs_requeue_failed): it can
         * hang there like any other, unless it is hung already. */
        int stays = j->l.pending && j->l.requeue_failed && !j->l.hung;
        if ((j->l.pending && !stays) || j->sched.waiting) {
            hb_add_point(b->jobs, j, now);
            continue;
        }
        /* Not while it waited: the clock starts again when it runs again (a suspended job). */
        double last = fmax(j->watch.last_progress, j->sched.ran_again);
        double limit = hb_hang_limit(b, j);
        if (!j->l.hung && j->watch.last_progress > 0 && now - last > limit) {
            double watched, arrived;
            job_heard(b, j, &watched, &arrived);
            if (j->watch.unseen_told && arrived > j->watch.unseen_at)
                j->watch.unseen_told = 0; /* its agents are back */
            /* A hang: an agent of the job's nodes collected frames without a break for a whole
             * limit after its last progress, and none carried any. A backlog after an
             * outage is read in order; one with frames lost starts the record again. */
            if (watched >= limit)
                hang(b, now, j, limit);
            else if (now - arrived > limit / 2 && !j->watch.unseen_told)
                hang_unseen(b, now, j, limit, arrived);
        }
        hb_add_point(b->jobs, j, now);
    }
}
