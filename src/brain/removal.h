/*
 * removal.h - findings about a node acted on, up to the jobs a removal interrupts. Every part
 * that finds something about a node calls hb_found; the operators' drain and approve are here
 * too (brain.h), since they take a node out of service the same way.
 */
#ifndef HN_BRAIN_REMOVAL_H
#define HN_BRAIN_REMOVAL_H

#include "brain/state.h"

struct node;

/* A finding about node n: queued and acted on by the lifecycle (hb_node_found); when that
 * takes n out of service, the jobs on it are interrupted and requeued (hb_jobs_node_removed). */
void hb_found(struct hn_brain *b, double now, struct node *n, const struct hn_finding *f);
/* hb_found, its outputs (and those of the removal it causes) about job. */
void hb_job_found(struct hn_brain *b, double now, struct node *n, const char *job,
                  const struct hn_finding *f);

#endif
