/*
 * strag_found.c - strag_found.h says what this part does and owns.
 */
#include "brain/strag_found.h"

#include "brain/job.h"
#include "brain/fleet.h"
#include "brain/jobtab.h"
#include "brain/out.h"
#include "brain/removal.h"
#include "brain/strag_hold.h"
#include "brain/strag_plan.h"
#include "common/stats.h"
#include "common/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The phase a straggler loses the most time in is named when it takes this much longer than
 * the peers' (slow_phase). */
#define PHASE_SLOW_MIN 0.02

/* Whether rank's episode is a drift hb_drift_watch follows: it becomes a straggler at
 * DRIFT_PROMOTE_VS_PEERS only, also when hb_strag_watch looks for one to take up. */
static int drifting(const struct job *j, unsigned rank)
{
    for (unsigned k = 0; k < j->strag.ndrift; k++) {
        if (j->strag.drift[k] == rank)
            return 1;
    }
    return 0;
}

/* A persistent slowdown of a rank that leaves it about as fast as its peers: slower than its
 * own normal, yet no straggler. A rank that ran faster than the others and is back among them
 * looks like this; on a GPU shared by time slices the ranks trade places by a few percent
 * (bench/results/gpu-h200.md). Information only: nothing to replace, nothing lost. */
static void drift_found(struct hn_brain *b, double now, struct job *j,
                        const struct hn_strag_detection *d)
{
    struct node *n = hb_rank_node(b, j, d->rank);
    struct hn_finding f;
    char ev[320];
    snprintf(ev, sizeof(ev),
             "job=%s rank=%u onset_step=%llu detect_step=%llu slowdown=%.3f vs_peers=%.3f", j->l.id,
             d->rank, (unsigned long long)d->onset_step, (unsigned long long)d->detect_step,
             d->slowdown, d->vs_peers);
    hb_finding_set(&f, "straggler_drift", HN_SEV_INFO, n ? j->ranks[d->rank].gpu : -1, ev,
                   "job %s rank %u is %.1f%% slower than its own normal since step %llu, but "
                   "%.1f%% against its peers: not a straggler",
                   j->l.id, d->rank, d->slowdown * 100, (unsigned long long)d->onset_step,
                   d->vs_peers * 100);
    hb_push_finding(b, now, n, j->l.id, &f);
    if (!drifting(j, d->rank) && j->strag.ndrift < DRIFT_MAX)
        j->strag.drift[j->strag.ndrift++] = d->rank;
}

/* Ranks of j in its current run that report from the same node and GPU as rank and look
 * normal: warm, reporting, in no episode, no evidence of a slowdown gathering, and not slower
 * than the peers from the start (a baseline within STRAGGLER_MIN_VS_PEERS of the typical
 * rank's, 1). The GPU runs them at their normal speed, so rank's slowdown comes from sharing
 * it (time slices), not from the GPU; a mate slowing down with it, as on a bad GPU, does not
 * count. Only where some GPU must be shared and the GPU numbers are believable: the job runs
 * more ranks on the node than it has GPUs, and its ranks there name as many different GPUs
 * as they could (a client that sends every rank's GPU as 0, CUDA's index under a per-rank
 * CUDA_VISIBLE_DEVICES, must not hide a bad GPU). 0 otherwise, or when rank's GPU is unknown.
 * O(ranks), and only for a node with more of the job's ranks than GPUs. */
static unsigned healthy_gpu_mates(const struct hn_brain *b, const struct job *j, unsigned rank,
                                  uint64_t step)
{
    const struct rank_st *me = &j->ranks[rank];
    if (me->node < 0 || me->gpu < 0 || me->gpu >= 1024 || !j->strag.det)
        return 0;
    const struct node *nd = &b->nodes[me->node];
    unsigned gpus = nd->gpus_seen > nd->gpus_expected ? nd->gpus_seen : nd->gpus_expected;
    if (hb_ranks_on(j, me->node) <= gpus)
        return 0; /* it may count a rank of an earlier run, never one too few */
    uint64_t seen[1024 / 64] = {0};
    unsigned on_node = 0, distinct = 0, n = 0;
    for (unsigned r = 0; r < j->l.ranks; r++) {
        const struct rank_st *k = &j->ranks[r];
        struct hn_strag_rank_info in;
        if (k->node != me->node || k->run != j->run)
            continue;
        on_node++;
        if (k->gpu < 0 || k->gpu >= 1024)
            return 0; /* a GPU number nvidia-smi would not give */
        if (!(seen[k->gpu / 64] & (1ull << (k->gpu % 64)))) {
            seen[k->gpu / 64] |= 1ull << (k->gpu % 64);
            distinct++;
        }
        if (r == rank || k->gpu != me->gpu || k->last_step + ROWS < step)
            continue;
        if (hn_strag_rank_get(j->strag.det, r, &in) == 0 && in.warm && !in.slow && in.cusum == 0 &&
            in.baseline < 1 + STRAGGLER_MIN_VS_PEERS)
            n++;
    }
    if (on_node <= gpus || distinct < gpus)
        return 0;
    return n;
}

/* Rank r's time in phase k: the median of its last PHASE_KEEP reports of it, NaN when none. */
static double rank_phase(const struct rank_st *r, int k)
{
    double v[PHASE_KEEP];
    size_t n = 0;
    for (int m = 0; m < PHASE_KEEP; m++) {
        if (r->phase[k][m] > 0)
            v[n++] = r->phase[k][m];
    }
    return n ? hn_median(v, n) : NAN;
}

/* Where rank r of j spends its extra time: the phase (PHASE_*) whose recent time (rank_phase)
 * is the most seconds above the median of the other ranks' of this run (in seconds, so that the
 * jitter of a 10 ms optimizer step does not outweigh a real slowdown of the backward pass),
 * and by how much (0.4: 40% longer); -1 when that is less than PHASE_SLOW_MIN of its median
 * (noise), or the ranks report no phase times. A
 * straggler slow in the forward and backward passes but not in the optimizer step points to
 * its GPU's compute (clocks, a throttled GPU); one slow in the optimizer step alone to host or
 * memory work (an offloaded optimizer, a slow CPU). */
static int slow_phase(const struct job *j, unsigned r, double *excess)
{
    int best = -1;
    double most = 0; /* seconds */
    *excess = 0;
    double *v = xcalloc(j->l.ranks, sizeof(double));
    for (int k = 0; k < PHASES; k++) {
        double mine = rank_phase(&j->ranks[r], k);
        if (!(mine > 0))
            continue;
        size_t n = 0;
        for (unsigned q = 0; q < j->l.ranks; q++) {
            const struct rank_st *o = &j->ranks[q];
            double theirs = q != r && o->node >= 0 && o->run == j->run ? rank_phase(o, k) : NAN;
            if (theirs > 0)
                v[n++] = theirs;
        }
        if (n == 0)
            continue;
        double med = hn_median(v, n);
        if (med > 0 && mine - med > most) {
            best = k;
            most = mine - med;
            *excess = mine / med - 1;
        }
    }
    free(v);
    return best >= 0 && *excess >= PHASE_SLOW_MIN ? best : -1;
}

/* The job's plan is made again when the figure moves this much (either way) from the one it
 * was made with, and the decision it gives changes: a straggler found small that grows (a GPU
 * throttling more and more) is replaced after all, while one wandering about the line between
 * keep and drain does not flap (hb_strag_follow; so for a relapse, straggler_found). */
#define REPLAN_FACTOR 1.5

/* A persistent straggler: the node becomes suspect, and the policy decides whether replacing
 * it at the next checkpoint pays: the GPU time the slowdown wastes over the horizon against
 * the GPU time of a restart (the job's whole allocation waits either way). The slowdown that
 * counts is the one against the peers: replacing the rank by a typical one gains that much at
 * most. A job the scheduler does not list gets the finding as information and no plan
 * (hb_acts_on); nor does a straggler on a GPU shared with ranks that look normal
 * (healthy_gpu_mates: straggler_shared_gpu). */
static void straggler_found(struct hn_brain *b, double now, struct job *j,
                            const struct hn_strag_detection *d)
{
    if (d->vs_peers < STRAGGLER_MIN_VS_PEERS) {
        drift_found(b, now, j, d);
        return;
    }
    struct node *n = hb_rank_node(b, j, d->rank);
    unsigned mates = n ? healthy_gpu_mates(b, j, d->rank, d->detect_step) : 0;
    int act = hb_acts_on(b, j) && !mates;
    /* Slow again while its recovery is held (straggler-hold): the same episode, not a new one.
     * Nor is a rank a finding named in this episode already, found again by hb_strag_watch to
     * stand in for the job's straggler. Nothing is told again, unless the node has been put
     * back in service meanwhile (an operator resumed it): then it is made suspect again as for
     * a first detection. */
    int relapse = hb_quiet_end(j, d->rank);
    int silent =
        (relapse || j->ranks[d->rank].strag_told) && !(act && n && n->state == HN_NODE_READY);
    struct hn_finding f;
    char ev[320], where[64] = "";
    double phase_excess;
    int phase = slow_phase(j, d->rank, &phase_excess);
    int at =
        snprintf(ev, sizeof(ev),
                 "job=%s rank=%u onset_step=%llu detect_step=%llu slowdown=%.3f "
                 "vs_peers=%.3f ranks=%u gpu_mates=%u",
                 j->l.id, d->rank, (unsigned long long)d->onset_step,
                 (unsigned long long)d->detect_step, d->slowdown, d->vs_peers, j->l.ranks, mates);
    if (phase >= 0) {
        snprintf(ev + at, sizeof(ev) - (size_t)at, " phase=%s phase_excess=%.3f",
                 hb_phase_names[phase], phase_excess);
        snprintf(where, sizeof(where), "; slowest in its %s pass (+%.0f%%)", hb_phase_names[phase],
                 phase_excess * 100);
    }
    if (mates)
        hb_finding_set(&f, "straggler_shared_gpu", HN_SEV_INFO, j->ranks[d->rank].gpu, ev,
                       "job %s rank %u is %.0f%% slower than its peers since step %llu, but it "
                       "shares its GPU with %u rank%s of the job that are not slow: time "
                       "slicing, not the GPU",
                       j->l.id, d->rank, d->vs_peers * 100, (unsigned long long)d->onset_step,
                       mates, mates == 1 ? "" : "s");
    else
        hb_finding_set(&f, "straggler", act ? HN_SEV_SUSPECT : HN_SEV_INFO,
                       n ? j->ranks[d->rank].gpu : -1, ev,
                       "job %s rank %u is %.0f%% slower than its peers since step %llu%s", j->l.id,
                       d->rank, d->vs_peers * 100, (unsigned long long)d->onset_step, where);
    if (!silent && n)
        hb_job_found(b, now, n, j->l.id, &f);
    else if (!silent)
        hb_push_finding(b, now, NULL, j->l.id, &f);
    j->ranks[d->rank].strag_told = 1; /* its recovery is told too (detection) */
    /* One straggler per job, the one that costs most: a second, smaller one makes its node
     * suspect (above) and leaves the job's straggler and plan as they are, unless the job's
     * straggler keeps up while its recovery is held (hb_strag_held): then it stands in. One on a
     * shared GPU, which houston leaves alone, never takes the place of one it would act on,
     * and gives way to it whatever their sizes, so that it cannot cancel a planned drain. */
    int held = hb_strag_held(j);
    if (j->strag.rank >= 0 && j->strag.rank != (int)d->rank &&
        (mates ? !j->strag.shared || (!held && j->strag.slow >= d->vs_peers)
               : !j->strag.shared && !held && j->strag.slow >= d->vs_peers))
        return;
    /* A relapse of the job's straggler keeps its episode's onset. */
    if (!(silent && j->strag.rank == (int)d->rank))
        j->strag.onset = d->onset_step;
    /* A rank told already that takes over from a held straggler (standing in), or by a
     * relapse bigger than the one standing in: its plan is told only when the decision
     * changes, so that a rank that keeps falling back does not make two plans a cycle. */
    int again = silent && j->strag.rank != (int)d->rank && (held || relapse);
    silent = silent && j->strag.rank == (int)d->rank;
    /* It is slow now (hb_quiet_end dropped a hold of its own): not held (hb_strag_held). A held
     * recovery of the straggler it takes over from stays that rank's (hb_quiet_tell tells it). */
    j->strag.rank = (int)d->rank;
    j->strag.shared = mates;
    j->strag.act = act && n;
    j->strag.slow = d->vs_peers;
    j->strag.from_start = d->kind == HN_STRAG_FROM_START;
    j->strag.phase = phase;
    j->strag.phase_excess = phase >= 0 ? phase_excess : NAN;
    if (silent && j->strag.slow < REPLAN_FACTOR * j->strag.plan_slow &&
        j->strag.slow * REPLAN_FACTOR > j->strag.plan_slow) {
        /* A relapse about as slow as before: the plan is made with the figure it was made with
         * (its figure now is charged), so that one falling back a little faster or slower each
         * time near the line between keep and drain does not flip the decision each time. */
        double slow = j->strag.slow;
        j->strag.slow = j->strag.plan_slow;
        hb_straggler_plan(b, now, j, ev, 1);
        j->strag.slow = slow;
        return;
    }
    hb_straggler_plan(b, now, j, ev, silent || again);
}

void hb_detection(struct hn_brain *b, double now, struct job *j, const struct hn_strag_detection *d)
{
    if (d->kind == HN_STRAG_PERSISTENT || d->kind == HN_STRAG_FROM_START) {
        straggler_found(b, now, j, d);
        return;
    }
    /* A rank's recovery is told when a straggler finding named it: the job's straggler, or a
     * second one that made its node suspect (a drift that never was one recovers unsaid). */
    if (d->kind == HN_STRAG_RECOVERED && d->rank != HN_STRAG_ALL_RANKS) {
        if (d->rank < j->l.ranks && j->ranks[d->rank].strag_told)
            hb_quiet_start(b, now, j, d);
        return;
    }
    struct node *n = hb_rank_node(b, j, d->rank); /* NULL for HN_STRAG_ALL_RANKS */
    struct hn_finding f;
    char ev[320];
    snprintf(ev, sizeof(ev), "job=%s rank=%u onset_step=%llu detect_step=%llu slowdown=%.3f",
             j->l.id, d->rank, (unsigned long long)d->onset_step,
             (unsigned long long)d->detect_step, d->slowdown);
    if (d->kind == HN_STRAG_RECOVERED && d->rank == HN_STRAG_ALL_RANKS) {
        hb_finding_set(&f, "job_recovered", HN_SEV_INFO, -1, ev,
                       "job %s is back to its normal step time", j->l.id);
    } else if (d->kind == HN_STRAG_JOB_SLOWDOWN) {
        hb_finding_set(&f, "job_slowdown", HN_SEV_INFO, -1, ev,
                       "job %s slowed down as a whole by %.0f%% (not one rank)", j->l.id,
                       d->slowdown * 100);
    } else {
        hb_finding_set(&f, "straggler_transient", HN_SEV_INFO, n ? j->ranks[d->rank].gpu : -1, ev,
                       "job %s rank %u was briefly %.0f%% slower (a spike, not persistent)",
                       j->l.id, d->rank, d->slowdown * 100);
    }
    hb_push_finding(b, now, n, j->l.id, &f);
}

/* A drift becomes a straggler at twice the margin a fresh detection needs: its figure against
 * the peers rests on where the rank stood among them before the episode, and ranks trade
 * places by up to 3% (bench/results/gpu-h200.md: the healthy H200 job's drifting rank later
 * stood 2.8% behind its peers by that figure). */
#define DRIFT_PROMOTE_VS_PEERS (2 * STRAGGLER_MIN_VS_PEERS)

/* A rank in an episode, as the detector sees it now at `step`, taken as a persistent
 * detection (the detector reports an episode once; hb_drift_watch and hb_strag_watch look again).
 */
static void found_now(struct hn_brain *b, double now, struct job *j, unsigned rank,
                      const struct hn_strag_rank_info *in, uint64_t step)
{
    struct hn_strag_detection d = {.kind = HN_STRAG_PERSISTENT,
                                   .rank = rank,
                                   .onset_step = in->onset_step,
                                   .detect_step = step,
                                   .slowdown = in->slowdown_now,
                                   .vs_peers = in->vs_peers_now,
                                   .peak = in->slowdown_now,
                                   .noise = in->noise};
    straggler_found(b, now, j, &d);
}

void hb_drift_watch(struct hn_brain *b, double now, struct job *j, uint64_t step)
{
    for (unsigned k = 0; k < j->strag.ndrift;) {
        struct hn_strag_rank_info in;
        unsigned rank = j->strag.drift[k];
        if (hn_strag_rank_get(j->strag.det, rank, &in) != 0 || !in.slow) {
            j->strag.drift[k] = j->strag.drift[--j->strag.ndrift];
            continue;
        }
        if (in.vs_peers_now < DRIFT_PROMOTE_VS_PEERS) {
            k++;
            continue;
        }
        j->strag.drift[k] = j->strag.drift[--j->strag.ndrift];
        found_now(b, now, j, rank, &in, step);
    }
}

void hb_strag_watch(struct hn_brain *b, double now, struct job *j, uint64_t step)
{
    struct hn_strag_rank_info in;
    if (j->strag.rank >= 0 && j->strag.from_start &&
        hn_strag_rank_get(j->strag.det, (unsigned)j->strag.rank, &in) == 0 && in.warm && !in.slow &&
        in.baseline < 1 + STRAGGLER_MIN_VS_PEERS) {
        char ev[160];
        snprintf(ev, sizeof(ev), "job=%s rank=%d step=%llu baseline=%.3f from_start=1", j->l.id,
                 j->strag.rank, (unsigned long long)step, in.baseline);
        hb_recovery_told(b, now, j, (unsigned)j->strag.rank, ev, 0);
    }
    if (!j->strag.next || (j->strag.rank >= 0 && !hb_strag_held(j)))
        return;
    j->strag.next = 0;
    int best = -1;
    struct hn_strag_rank_info bi = {0};
    for (unsigned r = 0; r < j->l.ranks; r++) {
        if ((int)r == j->strag.rank || j->ranks[r].node < 0 || j->ranks[r].run != j->run ||
            hn_strag_rank_get(j->strag.det, r, &in) != 0 || !in.slow ||
            in.vs_peers_now < (drifting(j, r) ? DRIFT_PROMOTE_VS_PEERS : STRAGGLER_MIN_VS_PEERS) ||
            (best >= 0 && in.vs_peers_now <= bi.vs_peers_now))
            continue;
        best = (int)r;
        bi = in;
    }
    if (best >= 0)
        found_now(b, now, j, (unsigned)best, &bi, step);
}

void hb_strag_follow(struct hn_brain *b, double now, struct job *j, uint64_t step)
{
    struct hn_strag_rank_info in;
    if (j->strag.rank < 0 || hb_strag_held(j) ||
        hn_strag_rank_get(j->strag.det, (unsigned)j->strag.rank, &in) != 0 || !in.warm)
        return;
    double cur;
    if (in.slow)
        cur = in.vs_peers_now;
    else if (j->strag.from_start)
        cur = in.baseline - 1;
    else
        return; /* out of its episode: its recovery is on its way (detection) */
    j->strag.slow = fmax(0, cur);
    struct weigh w;
    struct node *n = hb_rank_node(b, j, (unsigned)j->strag.rank);
    /* Nor when its node came back into service, or went out of it (an operator resumed a node
     * the plan found draining, or the guard now holds another drain of it). */
    int avail = hb_node_free(n);
    if (j->strag.slow < REPLAN_FACTOR * j->strag.plan_slow &&
        j->strag.slow * REPLAN_FACTOR > j->strag.plan_slow && avail == j->strag.plan_avail)
        return;
    /* A node back in service is said even when the decision stays (no drain): the plan
     * would name a state the node left ("draining already") for good. Not one going out of
     * it: a hold of this job's own drain, or a checkpoint's, says so itself. */
    if (hb_drain_pays(b, now, j, n, &w) == j->strag.drain_planned &&
        !(avail && !j->strag.plan_avail))
        return;
    char ev[320];
    snprintf(ev, sizeof(ev), "job=%s rank=%d step=%llu vs_peers=%.3f planned_vs_peers=%.3f",
             j->l.id, j->strag.rank, (unsigned long long)step, j->strag.slow, j->strag.plan_slow);
    hb_straggler_plan(b, now, j, ev, 0);
}
