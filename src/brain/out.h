/*
 * out.h - the brain's outputs (brain.h, hn_brain_poll): a queue of findings, transitions,
 * actions and holds in the order they were decided, each with the job it concerns. out.c owns
 * the queue and the action ids.
 */
#ifndef HN_BRAIN_OUT_H
#define HN_BRAIN_OUT_H

#include "brain/state.h"

struct node;

/* Queues an output about node n (NULL: about no node, e.g. a job). Its job is the one the
 * queue is about (hb_about), if any. */
struct hn_out *hb_push_out(struct hn_brain *b, enum hn_out_kind kind, double now,
                           const struct node *n);
/* Queues finding f about node n (NULL: none) and job. */
void hb_push_finding(struct hn_brain *b, double now, const struct node *n, const char *job,
                     const struct hn_finding *f);
/* Outputs queued from now on are about job (NULL: none), unless they name their own (a
 * requeue); returns what they were about before, which the caller puts back. job must stay
 * valid until then. */
const char *hb_about(struct hn_brain *b, const char *job);
void hb_finding_set(struct hn_finding *f, const char *rule, enum hn_severity sev, int gpu,
                    const char *evidence, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* Queues an action of kind for node n (a drain's reason gets "houston: " in front); returns its
 * id. */
uint64_t hb_action(struct hn_brain *b, double now, struct node *n, enum hn_action_kind kind,
                   const char *reason);
/* Queues a requeue of job, which runs (among others) on node n. */
uint64_t hb_requeue(struct hn_brain *b, double now, struct node *n, const char *job);
/* The queue's length, to pass to hb_requeued_since. */
size_t hb_out_mark(const struct hn_brain *b);
/* 1 when the outputs queued since `mark` requeue job. */
int hb_requeued_since(const struct hn_brain *b, size_t mark, const char *job);

#endif
