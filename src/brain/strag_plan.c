/*
 * strag_plan.c - strag_plan.h says what this part does and owns.
 */
#include "brain/strag_plan.h"

#include "brain/job.h"
#include "brain/fleet.h"
#include "brain/jobtab.h"
#include "brain/ledger.h"
#include "brain/out.h"
#include "brain/removal.h"
#include "brain/runs.h"
#include "brain/strag_hold.h"
#include "common/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The time over which a straggler's waste is weighed: what the job has left before its time
 * limit when the scheduler says (a job that ends in ten minutes is not worth a restart; one
 * with a week left is, for a few percent), else straggler-horizon. *over says which, for the
 * plan ("in the 5400 s the job has left", "of every 3600 s of the job"). */
static double strag_horizon(const struct hn_brain *b, double now, const struct job *j, char *over,
                            size_t size)
{
    if (j->sched.time_left >= 0) {
        double left = fmax(0, j->sched.time_left - (now - j->sched.time_left_at));
        snprintf(over, size, "in the %.0f s the job has left", left);
        return left;
    }
    snprintf(over, size, "of every %.0f s of the job", b->cfg.straggler_horizon_s);
    return b->cfg.straggler_horizon_s;
}

/* What a restart of j costs, in seconds of its allocation: its own restarts' median when it
 * has been measured (hb_restart_taken), else restart-overhead. *how says which for the plan (""
 * for restart-overhead, ", measured", or ", median of its last 3"). */
static double restart_cost(const struct hn_brain *b, const struct job *j, char *how, size_t size)
{
    how[0] = '\0';
    if (!(j->l.restart_s > 0))
        return b->cfg.restart_s;
    if (j->restart.nrestarts > 1)
        snprintf(how, size, ", median of its last %u", j->restart.nrestarts);
    else
        snprintf(how, size, ", measured"); /* or restored: the median of several */
    return j->l.restart_s;
}

int hb_node_free(const struct node *n)
{
    return n && hb_in_service(n->state) && !n->held;
}

/* others_cost's sum is kept this long: it scans every job, and hb_strag_follow may weigh the
 * drain after every step for a while (a figure that moved from the plan's, the decision the
 * same). The other jobs' unsaved work grows by that much meanwhile, which is noise against a
 * restart. */
#define OTHERS_TTL_S 10.0

/* The GPUs of the nodes the scheduler's last poll lists job id on (each node's expected count,
 * or the count seen), each node's shared evenly among the jobs listed on it: jobs that share a
 * node (one GPU each, say) do not count its GPUs once each, and the sum stays a floor. */
static double listed_gpus(const struct hn_brain *b, const char *id)
{
    double gpus = 0;
    for (size_t i = 0; i < b->nnodes; i++) {
        const struct node *m = &b->nodes[i];
        if (!hb_node_runs(m, id))
            continue;
        unsigned g = m->gpus_expected ? m->gpus_expected : m->gpus_seen ? m->gpus_seen : 1;
        gpus += (double)g / m->njobs;
    }
    return gpus;
}

/*
 * What a drain of n costs the jobs other than j that it interrupts too, in seconds of j's
 * allocation (*count: how many): each restarts (restart_cost) and loses its work since its
 * last checkpoint, all of it when it reported none, at its own size. A drain at j's checkpoint
 * costs j nothing of its work, but not them. A job the scheduler lists on n that houston has
 * no step reports of (an unmonitored job, one that has not stepped yet, one waiting for its
 * next run) counts a restart (restart-overhead) on its share of the GPUs of the nodes it is
 * listed on (listed_gpus), and no lost work, which is not known: *blind says how many of
 * *count are such. Kept for OTHERS_TTL_S.
 */
static double others_cost(const struct hn_brain *b, double now, struct job *j, const struct node *n,
                          unsigned *count, unsigned *blind)
{
    const struct hn_jobs *js = b->jobs;
    *count = *blind = 0;
    if (!n || !j->l.ranks)
        return 0;
    int node = (int)(n - b->nodes);
    if (j->strag.others_node == node && now >= j->strag.others_at &&
        now - j->strag.others_at < OTHERS_TTL_S) {
        *count = j->strag.others_n;
        *blind = j->strag.others_blind;
        return j->strag.others_s;
    }
    double gpu_s = 0;
    char how[32];
    for (size_t i = 0; i < js->n; i++) {
        const struct job *o = js->v[i];
        if (o == j || !o->l.ranks || !hb_drain_takes(o, n, node))
            continue;
        gpu_s += (restart_cost(b, o, how, sizeof(how)) + o->l.since_ckpt_s) * o->l.ranks;
        ++*count;
    }
    for (unsigned k = 0; k < n->njobs; k++) {
        int i = hb_find_job(js, n->jobs[k]);
        /* j, or counted above; one waiting for its next run (pending) is not: its restart is
         * not stepping yet, and the drain makes it start again. */
        if (strcmp(n->jobs[k], j->l.id) == 0 ||
            (i >= 0 && js->v[i]->l.ranks && !js->v[i]->l.pending))
            continue;
        gpu_s += b->cfg.restart_s * listed_gpus(b, n->jobs[k]);
        ++*count;
        ++*blind;
    }
    j->strag.others_node = node;
    j->strag.others_at = now;
    j->strag.others_n = *count;
    j->strag.others_blind = *blind;
    j->strag.others_s = gpu_s / j->l.ranks;
    return j->strag.others_s;
}

int hb_drain_pays(struct hn_brain *b, double now, struct job *j, const struct node *n,
                  struct weigh *w)
{
    w->waste =
        strag_horizon(b, now, j, w->over, sizeof(w->over)) * j->strag.slow / (1 + j->strag.slow);
    unsigned others = 0, blind = 0;
    w->own = restart_cost(b, j, w->how, sizeof(w->how));
    /* Other jobs only add to the cost: not looked for when the job's own restart outweighs. */
    int may = j->strag.act && hb_node_free(n) && w->waste > w->own;
    w->others = may ? others_cost(b, now, j, n, &others, &blind) : 0;
    w->restart = w->own + w->others;
    w->also[0] = '\0';
    char unseen[48] = "";
    if (blind)
        snprintf(unseen, sizeof(unseen), " (%u without step reports: a restart)", blind);
    if (others)
        snprintf(w->also, sizeof(w->also), ", and %.0f s more for %u other job%s there%s",
                 w->others, others, others == 1 ? "" : "s", unseen);
    return j->strag.act && hb_node_free(n) && w->waste > w->restart;
}

void hb_straggler_plan(struct hn_brain *b, double now, struct job *j, const char *ev,
                       int changed_only)
{
    unsigned rank = (unsigned)j->strag.rank;
    struct node *n = hb_rank_node(b, j, rank);
    struct weigh w;
    int was = j->strag.drain_planned;
    j->strag.drain_planned = hb_drain_pays(b, now, j, n, &w);
    j->strag.plan_slow = j->strag.slow;
    j->strag.plan_avail = hb_node_free(n);
    if (j->strag.shared)
        hb_set_plan(j,
                    "keep %s: rank %u shares GPU %d with %u rank%s of the job that are not slow; "
                    "give each rank its own GPU",
                    n->name, rank, j->ranks[rank].gpu, j->strag.shared,
                    j->strag.shared == 1 ? "" : "s");
    else if (!hb_acts_on(b, j))
        hb_set_plan(j,
                    "none: the scheduler does not list job %s, so its reports are not known to "
                    "come from its owner",
                    j->l.id);
    else if (n && !hb_in_service(n->state))
        hb_set_plan(j,
                    "none: %s is %s already; the job runs on there (requeue it to move rank %u "
                    "off)",
                    n->name, hn_node_state_name(n->state), rank);
    else if (n && n->held)
        hb_set_plan(j, "none: a drain of %s waits for an operator already (blast-radius guard)",
                    n->name);
    else if (j->strag.drain_planned)
        /* A job that never reported a checkpoint waits for one: a drain now would throw away
         * all its work, and houston would not see that it did. Said, so that nobody waits for
         * a drain that a client without ckpt= never lets come. */
        hb_set_plan(j,
                    "drain %s at the next checkpoint: the slowdown wastes %.0f s %s, a restart "
                    "costs %.0f s%s%s%s",
                    n->name, w.waste, w.over, w.own, w.how, w.also,
                    j->l.checkpoint < 0 ? "; the job has reported no checkpoint yet (ckpt=)" : "");
    else
        hb_set_plan(j, "keep %s: the slowdown wastes %.0f s %s, less than a restart (%.0f s%s%s)%s",
                    n ? n->name : "the rank's node", w.waste, w.over, w.own, w.how, w.also,
                    n ? "" : "; its node is unknown");
    if (changed_only && was == j->strag.drain_planned &&
        j->ranks[rank].plan_told == (uint8_t)(j->strag.drain_planned + 1))
        return;
    j->ranks[rank].plan_told = (uint8_t)(j->strag.drain_planned + 1);
    struct hn_finding p;
    hb_finding_set(&p, "straggler_policy", HN_SEV_INFO, n ? j->ranks[rank].gpu : -1, ev, "%s",
                   j->strag.plan);
    hb_push_finding(b, now, n, j->l.id, &p);
}

/* Predictive: the job's nodes flagged for replacement leave at this checkpoint. */
static void replace_flagged(struct hn_brain *b, double now, struct job *j, int64_t ckpt)
{
    for (unsigned r = 0; r < j->l.ranks; r++) {
        int ni = j->ranks[r].node;
        if (ni < 0 || j->ranks[r].run != j->run || !b->nodes[ni].replace_at_ckpt)
            continue;
        struct node *n = &b->nodes[ni];
        n->replace_at_ckpt = 0;
        if (!hb_in_service(n->state))
            continue;
        struct hn_finding f;
        char ev[320];
        snprintf(ev, sizeof(ev), "job=%s checkpoint=%lld", j->l.id, (long long)ckpt);
        hb_finding_set(&f, "ecc_trend", HN_SEV_FATAL, -1, ev,
                       "ecc trend: %s replaced at checkpoint %lld of job %s before it fails",
                       n->name, (long long)ckpt, j->l.id);
        hb_job_found(b, now, n, j->l.id, &f);
    }
}

void hb_checkpoint(struct hn_brain *b, double now, struct job *j, int64_t ckpt)
{
    if (ckpt < 0 || ckpt <= j->l.checkpoint)
        return;
    j->l.checkpoint = ckpt;
    double typ = hb_typical_step(j), before = j->l.since_ckpt_s;
    if (!isnan(typ) && (uint64_t)ckpt <= j->l.step)
        j->l.since_ckpt_s = fmin(before, (double)(j->l.step - (uint64_t)ckpt) * typ);
    else
        j->l.since_ckpt_s = 0;
    /* The straggler's share, of the time that is left. */
    j->l.strag_ckpt_s = before > 0 ? j->l.strag_ckpt_s * (j->l.since_ckpt_s / before) : 0;
    replace_flagged(b, now, j, ckpt);
    if (j->l.pending || !j->strag.drain_planned || j->strag.rank < 0 || hb_strag_held(j))
        return; /* a straggler keeping up again (hb_quiet_start): the drain waits */
    struct node *n = hb_rank_node(b, j, (unsigned)j->strag.rank);
    j->strag.drain_planned = 0;
    if (!n)
        return;
    struct hn_finding f;
    char ev[320];
    /* The job's time left shrank since the plan, or its straggler got better: a restart now
     * may no longer pay, also when the guard holds the node for something else meanwhile (the
     * drain would then wait for an operator, below). Nor does a drain of a node out of
     * service already (an operator put it in repair): it would do nothing, and the plan must
     * not say it was done. */
    struct weigh w;
    (void)hb_drain_pays(b, now, j, n, &w);
    if (!hb_in_service(n->state) || !(w.waste > w.restart)) {
        if (!hb_in_service(n->state))
            hb_set_plan(j,
                        "none: at checkpoint %lld %s is %s already; the job runs on there "
                        "(requeue it to move rank %d off)",
                        (long long)ckpt, n->name, hn_node_state_name(n->state), j->strag.rank);
        else
            hb_set_plan(j,
                        "keep %s: at checkpoint %lld the slowdown wastes %.0f s %s, less than a "
                        "restart (%.0f s%s%s)",
                        n->name, (long long)ckpt, w.waste, w.over, w.own, w.how, w.also);
        snprintf(ev, sizeof(ev), "job=%s rank=%d checkpoint=%lld slowdown=%.3f", j->l.id,
                 j->strag.rank, (long long)ckpt, j->strag.slow);
        hb_finding_set(&f, "straggler_policy", HN_SEV_INFO, j->ranks[j->strag.rank].gpu, ev, "%s",
                       j->strag.plan);
        hb_push_finding(b, now, n, j->l.id, &f);
        return;
    }
    snprintf(ev, sizeof(ev), "job=%s rank=%d checkpoint=%lld slowdown=%.3f onset_step=%llu",
             j->l.id, j->strag.rank, (long long)ckpt, j->strag.slow,
             (unsigned long long)j->strag.onset);
    hb_finding_set(&f, "straggler", HN_SEV_FATAL, j->ranks[j->strag.rank].gpu, ev,
                   "straggler: job %s rank %d %.0f%% slower; replaced at checkpoint %lld", j->l.id,
                   j->strag.rank, j->strag.slow * 100, (long long)ckpt);
    int rank = j->strag.rank;
    double slow = j->strag.slow;
    hb_job_found(b, now, n, j->l.id, &f); /* the drain interrupts the job: no plan */
    /* The plan now says what was done, until the next decision or restart. */
    if (n->held && strcmp(n->held_finding.rule, "straggler") == 0)
        j->ranks[rank].held_at = now;
    if (n->held)
        hb_set_plan(
            j,
            "drain %s at checkpoint %lld held for an operator (blast-radius guard): rank %d "
            "is %.0f%% slower than its peers",
            n->name, (long long)ckpt, rank, slow * 100);
    else
        hb_set_plan(j, "drained %s at checkpoint %lld: rank %d was %.0f%% slower than its peers",
                    n->name, (long long)ckpt, rank, slow * 100);
}
