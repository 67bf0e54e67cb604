/*
 * strag_hold.c - strag_hold.h says what this part does and owns.
 */
#include "brain/strag_hold.h"

#include "brain/job.h"
#include "brain/fleet.h"
#include "brain/jobtab.h"
#include "brain/out.h"
#include "common/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hb_strag_held(const struct job *j)
{
    for (unsigned k = 0; k < j->strag.nquiet && j->strag.rank >= 0; k++) {
        if (j->strag.quiet[k].rank == (unsigned)j->strag.rank)
            return 1;
    }
    return 0;
}

void hb_set_plan(struct job *j, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->strag.plan, sizeof(j->strag.plan), fmt, ap);
    va_end(ap);
}

void hb_detector_reset(struct hn_brain *b, double now, struct job *j)
{
    hb_holds_end(b, now, j);
    hn_strag_free(j->strag.det);
    j->strag.det = NULL;
    if (j->strag.rank >= 0)
        hb_set_plan(j,
                    "none for now: the job has %u ranks and its straggler detector starts again; "
                    "rank %d is found anew if it is still slow",
                    j->l.ranks, j->strag.rank);
    j->strag.rank = -1;
    j->strag.drain_planned = 0;
    j->strag.next = 0;
    j->strag.ndrift = 0;
    for (unsigned r = 0; r < j->l.ranks; r++) {
        j->ranks[r].strag_told = 0;
        j->ranks[r].relapses = 0;
        j->ranks[r].held_at = 0;
        j->ranks[r].plan_told = 0;
    }
}

int hb_quiet_end(struct job *j, unsigned rank)
{
    for (unsigned k = 0; k < j->strag.nquiet; k++) {
        if (j->strag.quiet[k].rank != rank)
            continue;
        j->strag.quiet[k] = j->strag.quiet[--j->strag.nquiet];
        if (j->ranks[rank].relapses < UINT16_MAX)
            j->ranks[rank].relapses++;
        return 1;
    }
    return 0;
}

/* A drain of n (rank's node) the blast-radius guard held at held_at for rank of j is called
 * off, when nothing bad was found on n since (n stays suspect): an operator who approved it
 * later would take out a node whose rank keeps up again, and requeue the job for nothing.
 * Returns whether it was. */
static int held_drain_off(const struct job *j, unsigned rank, struct node *n, double held_at)
{
    char mine[HN_JOB_ID_SIZE + 32];
    snprintf(mine, sizeof(mine), "job=%s rank=%u ", j->l.id, rank);
    int release = n && n->held && held_at > 0 && n->last_bad <= held_at &&
                  strcmp(n->held_finding.rule, "straggler") == 0 &&
                  strncmp(n->held_finding.evidence, mine, strlen(mine)) == 0;
    if (release)
        n->held = 0;
    return release;
}

/* The job's straggler, rank on node n, recovered: its planned drain is cancelled, and a drain
 * of n the guard held for it is called off (held_drain_off). Sets the plan; returns whether it
 * called a held drain off. */
static int strag_recovered(struct job *j, unsigned rank, struct node *n)
{
    int release = rank < j->l.ranks && held_drain_off(j, rank, n, j->ranks[rank].held_at);
    if (rank < j->l.ranks) {
        j->ranks[rank].strag_told = 0;
        j->ranks[rank].held_at = 0;
        j->ranks[rank].plan_told = 0;
    }
    j->strag.rank = -1;
    j->strag.drain_planned = 0;
    hb_set_plan(j, "straggler rank %u recovered%s%s%s", rank, release ? "; the held drain of " : "",
                release ? n->name : "", release ? " is called off (it stays suspect)" : "");
    j->strag.next = 1; /* another may still be slow: hb_strag_watch */
    return release;
}

void hb_recovery_told(struct hn_brain *b, double now, struct job *j, unsigned rank, const char *ev,
                      double held_at)
{
    struct node *n = hb_rank_node(b, j, rank);
    int released = 0;
    if (j->strag.rank == (int)rank) {
        released = strag_recovered(j, rank, n);
    } else { /* not the job's straggler: its node was made suspect, and the plan is not its */
        j->ranks[rank].strag_told = 0;
        /* It was, when its recovery was held, and another took over since: the drain held
         * for it goes all the same. */
        released = held_drain_off(j, rank, n, held_at);
        j->ranks[rank].held_at = 0;
        j->ranks[rank].plan_told = 0;
    }
    unsigned relapses = j->ranks[rank].relapses;
    j->ranks[rank].relapses = 0;
    char more[64] = "";
    if (relapses)
        snprintf(more, sizeof(more), " (slow again %u time%s before it held)", relapses,
                 relapses == 1 ? "" : "s");
    struct hn_finding f;
    hb_finding_set(&f, "straggler_recovered", HN_SEV_INFO, n ? j->ranks[rank].gpu : -1, ev,
                   "job %s rank %u is back in line with its peers%s%s", j->l.id, rank,
                   released ? "; its node's held drain is called off" : "", more);
    hb_push_finding(b, now, n, j->l.id, &f);
}

void hb_quiet_start(struct hn_brain *b, double now, struct job *j,
                    const struct hn_strag_detection *d)
{
    /* Held already: the episode that ended was a drift (straggler_found left the hold alone),
     * in which it kept up with its peers, so the hold goes on. A second entry would tell its
     * recovery twice. */
    for (unsigned k = 0; k < j->strag.nquiet; k++) {
        if (j->strag.quiet[k].rank == d->rank)
            return;
    }
    if (!(b->cfg.straggler_hold_s > 0) || j->strag.nquiet == QUIET_MAX) {
        char ev[320];
        snprintf(ev, sizeof(ev), "job=%s rank=%u onset_step=%llu detect_step=%llu slowdown=%.3f",
                 j->l.id, d->rank, (unsigned long long)d->onset_step,
                 (unsigned long long)d->detect_step, d->slowdown);
        hb_recovery_told(b, now, j, d->rank, ev, 0);
        return;
    }
    double held_at = j->ranks[d->rank].held_at;
    j->strag.quiet[j->strag.nquiet++] =
        (struct quiet){d->rank, now, d->onset_step, d->detect_step, d->slowdown, held_at};
    if (j->strag.rank == (int)d->rank) {
        hb_set_plan(j,
                    "rank %u keeps up with its peers again since step %llu: its recovery is told "
                    "after %.0f s of it; a drain planned waits until then",
                    d->rank, (unsigned long long)d->detect_step, b->cfg.straggler_hold_s);
        j->strag.next = 1; /* another still slow stands in meanwhile (hb_strag_watch) */
    }
}

void hb_quiet_tell(struct hn_brain *b, double now, struct job *j, int all)
{
    for (unsigned k = 0; k < j->strag.nquiet;) {
        struct quiet q = j->strag.quiet[k];
        if (!all && now - q.at < b->cfg.straggler_hold_s) {
            k++;
            continue;
        }
        j->strag.quiet[k] = j->strag.quiet[--j->strag.nquiet];
        char ev[320];
        snprintf(ev, sizeof(ev),
                 "job=%s rank=%u onset_step=%llu detect_step=%llu slowdown=%.3f held_s=%.0f "
                 "relapses=%u",
                 j->l.id, q.rank, (unsigned long long)q.onset_step,
                 (unsigned long long)q.detect_step, q.slowdown, now - q.at,
                 (unsigned)j->ranks[q.rank].relapses);
        hb_recovery_told(b, now, j, q.rank, ev, q.held_at);
    }
}

void hb_holds_end(struct hn_brain *b, double now, struct job *j)
{
    hb_quiet_tell(b, now, j, 1);
}
