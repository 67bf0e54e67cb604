/*
 * removal.c - a node taken out of service, and what that does to the jobs on it (removal.h):
 * lifecycle.c decides (a fatal finding the guard allows, an operator's drain or approval), and
 * runs.c interrupts the node's jobs, in that order, so that the drain comes before the
 * requeues and the ledger's charges.
 */
#include "brain/removal.h"

#include "brain/fleet.h"
#include "brain/lifecycle.h"
#include "brain/out.h"
#include "brain/runs.h"

#include <errno.h>
#include <stdio.h>

void hb_found(struct hn_brain *b, double now, struct node *n, const struct hn_finding *f)
{
    if (hb_node_found(b, now, n, f))
        hb_jobs_node_removed(b, now, n, f);
}

void hb_job_found(struct hn_brain *b, double now, struct node *n, const char *job,
                  const struct hn_finding *f)
{
    const char *was = hb_about(b, job);
    hb_found(b, now, n, f);
    hb_about(b, was);
}

int hn_brain_drain(struct hn_brain *b, double now, int node, const char *reason, const char *user)
{
    struct node *n = hb_node_at(b, node);
    if (!n || n->state == HN_NODE_RETIRED)
        return -EINVAL;
    char actor[48];
    snprintf(actor, sizeof(actor), "operator:%s", user ? user : "unknown");
    struct hn_finding f;
    hb_finding_set(&f, "operator", HN_SEV_INFO, -1, actor, "operator %s: %s",
                   user ? user : "unknown", reason && reason[0] ? reason : "drain");
    hb_push_out(b, HN_OUT_FINDING, now, n)->finding = f;
    hb_remove_node(b, now, n, &f, actor);
    hb_jobs_node_removed(b, now, n, &f);
    return 0;
}

int hn_brain_approve(struct hn_brain *b, double now, int node, const char *user)
{
    struct node *n = hb_node_at(b, node);
    if (!n || !n->held)
        return -EINVAL;
    char actor[48];
    snprintf(actor, sizeof(actor), "operator:%s", user ? user : "unknown");
    struct hn_finding f = n->held_finding;
    snprintf(f.evidence, sizeof(f.evidence), "approved by %.47s; %.250s", actor,
             n->held_finding.evidence);
    hb_remove_node(b, now, n, &f, actor);
    hb_jobs_node_removed(b, now, n, &f);
    return 0;
}

int hn_brain_set_state(struct hn_brain *b, double now, int node, enum hn_node_state to,
                       const char *user)
{
    struct node *n = hb_node_at(b, node);
    if (!n || (unsigned)to >= HN_NODE_NSTATES)
        return -EINVAL;
    if (to == HN_NODE_READY)
        return hn_brain_resume(b, now, node, user);
    if (to == HN_NODE_DRAINING)
        return hn_brain_drain(b, now, node, "drain", user);
    char actor[48];
    snprintf(actor, sizeof(actor), "operator:%s", user ? user : "unknown");
    struct hn_finding f;
    hb_finding_set(&f, "operator", HN_SEV_INFO, -1, actor, "operator %s: %s",
                   user ? user : "unknown", hn_node_state_name(to));
    hb_transition(b, now, n, to, &f, actor);
    if (to == HN_NODE_BURNIN)
        hb_back_in_service(n);
    return 0;
}
