/*
 * lifecycle.c - a node's lifecycle (lifecycle.h): its transitions, the blast-radius guard,
 * burn-in, and an operator's resume.
 */
#include "brain/lifecycle.h"

#include "brain/fleet.h"
#include "brain/out.h"

#include "common/util.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct removal {
    double time;
    int node;
};

void hb_transition(struct hn_brain *b, double now, struct node *n, enum hn_node_state to,
                   const struct hn_finding *why, const char *actor)
{
    if (n->state == to)
        return;
    struct hn_out *o = hb_push_out(b, HN_OUT_TRANSITION, now, n);
    o->from = n->state;
    o->to = to;
    o->finding = *why;
    hn_strlcpy(o->actor, actor, sizeof(o->actor));
    n->state = to;
    n->since = now;
    hn_strlcpy(n->reason, why->detail, sizeof(n->reason));
}

/* Counts automatic removals still inside the guard window, fleet-wide and in rack. */
static void guard_counts(struct hn_brain *b, double now, const char *rack, size_t *fleet,
                         size_t *in_rack)
{
    size_t keep = 0;
    *fleet = *in_rack = 0;
    for (size_t i = 0; i < b->nremovals; i++) {
        if (now - b->removals[i].time >= b->cfg.guard_window_s)
            continue;
        b->removals[keep++] = b->removals[i];
        (*fleet)++;
        if (strcmp(b->nodes[b->removals[i].node].rack, rack) == 0)
            (*in_rack)++;
    }
    b->nremovals = keep;
}

static int guard_allows(struct hn_brain *b, double now, const struct node *n, char *why,
                        size_t whysize)
{
    size_t fleet, rack;
    guard_counts(b, now, n->rack, &fleet, &rack);
    size_t limit = (size_t)floor(b->cfg.guard_fraction * (double)b->nnodes);
    if (limit < 1)
        limit = 1;
    if (fleet >= limit) {
        snprintf(why, whysize,
                 "guard: %zu of %zu nodes already drained automatically in %.0f s "
                 "(limit %.0f%% = %zu)",
                 fleet, b->nnodes, b->cfg.guard_window_s, b->cfg.guard_fraction * 100, limit);
        return 0;
    }
    if (b->cfg.guard_per_rack > 0 && rack >= (size_t)b->cfg.guard_per_rack) {
        snprintf(why, whysize,
                 "guard: %zu nodes of rack %s already drained automatically "
                 "(limit %d)",
                 rack, n->rack, b->cfg.guard_per_rack);
        return 0;
    }
    return 1;
}

static void add_removal(struct hn_brain *b, double time, int node)
{
    if (b->nremovals == b->capremovals) {
        b->capremovals = b->capremovals ? b->capremovals * 2 : 16;
        b->removals = xrealloc(b->removals, b->capremovals * sizeof(*b->removals));
    }
    b->removals[b->nremovals++] = (struct removal){time, node};
}

void hb_remove_node(struct hn_brain *b, double now, struct node *n, const struct hn_finding *f,
                    const char *actor)
{
    hb_transition(b, now, n, HN_NODE_DRAINING, f, actor);
    n->drained_by_houston = 1;
    n->held = 0;
    hb_action(b, now, n, HN_ACT_DRAIN, f->detail);
    for (unsigned k = 0; k < n->njobs; k++)
        hb_requeue(b, now, n, n->jobs[k]);
}

int hb_node_found(struct hn_brain *b, double now, struct node *n, const struct hn_finding *f)
{
    struct hn_out *o = hb_push_out(b, HN_OUT_FINDING, now, n);
    o->finding = *f;
    if (f->severity >= HN_SEV_SUSPECT)
        n->last_bad = now;
    if (!hb_in_service(n->state))
        return 0;
    if (f->severity == HN_SEV_SUSPECT) {
        hb_transition(b, now, n, HN_NODE_SUSPECT, f, f->rule);
        return 0;
    }
    if (f->severity != HN_SEV_FATAL || n->held)
        return 0;
    char why[256];
    if (guard_allows(b, now, n, why, sizeof(why))) {
        hb_remove_node(b, now, n, f, f->rule);
        add_removal(b, now, (int)(n - b->nodes));
        return 1;
    }
    struct hn_finding held = *f;
    hn_strlcpy(held.evidence, why, sizeof(held.evidence));
    hb_transition(b, now, n, HN_NODE_SUSPECT, &held, "guard");
    n->held = 1;
    n->held_finding = *f;
    o = hb_push_out(b, HN_OUT_HELD, now, n);
    o->finding = held;
    return 0;
}

int hn_brain_restore_node(struct hn_brain *b, int node, enum hn_node_state state,
                          int drained_by_houston, int held, double since, const char *reason)
{
    if (node < 0 || (size_t)node >= b->nnodes || (unsigned)state >= HN_NODE_NSTATES)
        return -EINVAL;
    struct node *n = &b->nodes[node];
    n->state = state;
    n->drained_by_houston = drained_by_houston;
    n->held = held;
    n->since = since;
    hn_strlcpy(n->reason, reason ? reason : "", sizeof(n->reason));
    if (held)
        hb_finding_set(&n->held_finding, "restored", HN_SEV_FATAL, -1, "restored after restart",
                       "%s", n->reason);
    /* The guard's window survives a restart: a node houston took out counts from the time it
     * left. (Operator-approved drains count too: the store does not say who drained; erring
     * towards holding is the safe side.) */
    if (drained_by_houston && (state == HN_NODE_DRAINING || state == HN_NODE_QUARANTINED))
        add_removal(b, since, node);
    return 0;
}

void hb_back_in_service(struct node *n)
{
    n->held = 0;
    n->replace_at_ckpt = 0;
    n->count_fired = 0;
    for (unsigned g = 0; g < n->gpus_expected; g++) {
        n->gpus[g].fired = 0;
        memset(n->gpus[g].streak, 0, sizeof(n->gpus[g].streak));
    }
}

/* Burn-in passed: reporting for burnin_s since entering burnin, nothing bad meanwhile. */
void hb_burnin_check(struct hn_brain *b, double now)
{
    if (b->cfg.burnin_s <= 0)
        return;
    for (size_t i = 0; i < b->nnodes; i++) {
        struct node *n = &b->nodes[i];
        if (n->state != HN_NODE_BURNIN || now - n->since < b->cfg.burnin_s ||
            n->last_bad >= n->since || now - n->last_data > b->cfg.laggard_max_age_s)
            continue;
        struct hn_finding f;
        char ev[96];
        snprintf(ev, sizeof(ev), "burnin_s=%.0f findings=0", now - n->since);
        hb_finding_set(&f, "burnin", HN_SEV_INFO, -1, ev, "burn-in passed after %.0f s",
                       now - n->since);
        hb_push_out(b, HN_OUT_FINDING, now, n)->finding = f;
        hb_transition(b, now, n, HN_NODE_READY, &f, "burnin");
        if (n->drained_by_houston)
            hb_action(b, now, n, HN_ACT_RESUME, NULL);
        n->drained_by_houston = 0;
        hb_back_in_service(n);
    }
}

int hn_brain_resume(struct hn_brain *b, double now, int node, const char *user)
{
    struct node *n = hb_node_at(b, node);
    if (!n || n->state == HN_NODE_RETIRED)
        return -EINVAL;
    char actor[48];
    snprintf(actor, sizeof(actor), "operator:%s", user ? user : "unknown");
    struct hn_finding f;
    hb_finding_set(&f, "operator", HN_SEV_INFO, -1, actor, "operator %s: resume",
                   user ? user : "unknown");
    hb_transition(b, now, n, HN_NODE_READY, &f, actor);
    /* The scheduler's drain is undone only when houston set it. */
    if (n->drained_by_houston)
        hb_action(b, now, n, HN_ACT_RESUME, NULL);
    n->drained_by_houston = 0;
    hb_back_in_service(n);
    return 0;
}
