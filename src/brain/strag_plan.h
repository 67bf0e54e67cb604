/*
 * strag_plan.h - the straggler policy (docs/jobs.md, "Policy"): the GPU time a straggler's
 * slowdown wastes over the job's time left against what a drain costs (the job's restarts as
 * measured, plus the restarts and unsaved work of the other jobs the drain interrupts); the
 * plan that says so for people; the drain at the job's next checkpoint when it pays, and the
 * predictive replacement of flagged nodes at a checkpoint.
 */
#ifndef HN_BRAIN_STRAG_PLAN_H
#define HN_BRAIN_STRAG_PLAN_H

#include "brain/job.h"

/* What the policy weighs for j's straggler as it stands now: the waste over the horizon
 * (*over says which), against a restart (*how says whose: restart_cost). */
struct weigh {
    double waste, restart; /* restart: own + others */
    double own, others;    /* j's restart (how says whose), and what the drain costs the other
                              jobs it interrupts (also says how many) */
    char over[64], how[32], also[96];
};

/* Whether a drain of n would do something now: n is known, in service, and not held by the
 * guard for an operator already. */
int hb_node_free(const struct node *n);
/* Whether the policy drains the node of j's straggler at the next checkpoint, as it stands now
 * (the sums in *w). Never for a node out of service already (draining, say: a job whose
 * requeue failed runs on there), whose drain would do nothing, nor for one whose drain the
 * guard holds for an operator already. */
int hb_drain_pays(struct hn_brain *b, double now, struct job *j, const struct node *n,
                  struct weigh *w);
/* The plan for j's straggler (j->strag.rank, .slow and the rest set), made as a
 * straggler_policy finding with evidence ev and the job's plan; when `changed_only`, the
 * finding only if the decision is not the one planned already (a relapse: straggler_found). */
void hb_straggler_plan(struct hn_brain *b, double now, struct job *j, const char *ev,
                       int changed_only);
void hb_checkpoint(struct hn_brain *b, double now, struct job *j, int64_t ckpt);

#endif
