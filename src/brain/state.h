/*
 * state.h - the brain's state, as its parts share it. Nothing outside src/brain/ includes
 * this. Each part owns its fields: fleet.c the node table, out.c the output queue, lifecycle.c
 * the guard's record of removals, peers.c its scratch space, jobtab.c the job table. The
 * caller's thread owns the brain (brain.h).
 */
#ifndef HN_BRAIN_STATE_H
#define HN_BRAIN_STATE_H

#include "brain/brain.h"

#include <stddef.h>
#include <stdint.h>

struct node;
struct removal;
struct hn_jobs;

struct hn_brain {
    struct hn_brain_config cfg;
    /* fleet.c: the nodes, and an open-addressing index of their names (node index + 1; 0
     * empty) */
    struct node *nodes;
    size_t nnodes, capnodes;
    int *index;
    size_t index_cap;
    /* out.c: outputs not polled yet, the next action's id, and the job the outputs being
     * queued are about (hb_about) */
    struct hn_out *outq;
    size_t qhead, qlen, qcap;
    uint64_t next_action;
    const char *about;
    /* lifecycle.c: automatic removals inside the guard's window */
    struct removal *removals;
    size_t nremovals, capremovals;
    /* peers.c: values of a field across peers */
    double *scratch;
    size_t capscratch;
    /* jobtab.c */
    struct hn_jobs *jobs;
};

#endif
