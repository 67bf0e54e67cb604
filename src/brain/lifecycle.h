/*
 * lifecycle.h - a node's lifecycle: new -> burnin -> ready <-> suspect -> draining ->
 * quarantined -> repair -> burnin, and retired (brain.h). lifecycle.c decides a node's state
 * from the findings about it, within the blast-radius guard, and owns the guard's record of
 * removals. It knows nothing of jobs: taking a node out of service interrupts the jobs on it
 * through removal.c.
 */
#ifndef HN_BRAIN_LIFECYCLE_H
#define HN_BRAIN_LIFECYCLE_H

#include "brain/state.h"

struct node;

/* n goes to state `to` because of finding why, decided by actor (a rule's name,
 * "operator:NAME", "guard", "burnin", "scheduler"); nothing when it is there already. */
void hb_transition(struct hn_brain *b, double now, struct node *n, enum hn_node_state to,
                   const struct hn_finding *why, const char *actor);
/* A finding about node n: queued, and acted on by its severity: a suspect one makes a node in
 * service suspect; a fatal one takes it out of service (hb_remove_node) if the guard allows,
 * else holds it for an operator. Returns 1 when n was taken out of service: the caller then
 * interrupts its jobs (removal.c). */
int hb_node_found(struct hn_brain *b, double now, struct node *n, const struct hn_finding *f);
/* Takes n out of service for finding f: draining, a drain action, and a requeue of each job
 * the scheduler lists on it. */
void hb_remove_node(struct hn_brain *b, double now, struct node *n, const struct hn_finding *f,
                    const char *actor);
/* n is back in service: its held removal, planned replacement and fired rules are forgotten. */
void hb_back_in_service(struct node *n);
/* Nodes in burnin that reported for burnin_s with nothing bad go back to ready. */
void hb_burnin_check(struct hn_brain *b, double now);

#endif
