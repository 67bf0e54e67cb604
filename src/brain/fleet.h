/*
 * fleet.h - the brain's node table: each node's identity, lifecycle state, the last samples of
 * its GPUs and IB ports, the jobs the scheduler lists on it, and what its agent's frames said
 * about time. fleet.c owns the table and its name index; the parts read and write a node's
 * fields as their comments say (lifecycle.c its state, rules.c and peers.c its GPUs, the job
 * parts the removal record and the rate limits of their findings).
 */
#ifndef HN_BRAIN_FLEET_H
#define HN_BRAIN_FLEET_H

#include "brain/state.h"

#define HB_NODE_JOBS 16 /* jobs one node runs at once that houston tracks */

#define MAX_IB_PORTS 32

/* Rules that fire once until the node is back in service (bits of gpu->fired). */
enum {
    R_DBE,
    R_RETIRED,
    R_REMAP_FAIL,
    R_REMAP_PENDING,
    R_NVL_REPLAY,
    R_NVL_RECOVERY,
    R_NVL_CRC,
    R_PCIE,
    R_POWER_VIOL,
    R_THERMAL_VIOL,
    R_LOST,
    R_LAGGARD,
    R_HOT,
    R_THROTTLED,
    R_SBE_TREND,
};

struct gpu_st {
    double v[HN_F_COUNT];    /* last value, NaN unknown */
    double prev[HN_F_COUNT]; /* value before it */
    double t[HN_F_COUNT];    /* when v arrived */
    double prev_t[HN_F_COUNT];
    int lost;
    int streak[3];      /* peer rules (laggard, hot, throttled): samples in a row out of line */
    double streak_t[3]; /* time of the sample each streak last counted */
    unsigned fired;
};

struct ib_st {
    char key[48];
    int active;
    uint64_t link_downed;
};

struct node {
    char name[HN_NAME_MAX];
    char rack[HN_NAME_MAX];
    char sku[32];
    double peak; /* dense peak FLOP/s of one of its GPUs for mfu-dtype (SKU table); NaN: none */
    enum hn_node_state state;
    unsigned gpus_expected, gpus_seen;
    int drained_by_houston;
    int held;
    struct hn_finding held_finding;
    double since;
    char reason[HN_DETAIL_MAX];
    char jobs[HB_NODE_JOBS][HN_JOB_ID_SIZE]; /* the scheduler's jobs on the node (squeue poll) */
    unsigned njobs;
    int count_fired;
    int silent_fired;
    int replace_at_ckpt;  /* predictive: replace at its jobs' next checkpoint */
    double last_bad;      /* time of the last suspect or fatal finding */
    double removed_at;    /* when houston last took it out of service (runs.c); 0: never */
    double removed_from;  /* then, the collection time of its agent's frame before the last */
    uint64_t removed_gen; /* then, the jobs' scheduler input count (jobtab.c) */
    enum hn_loss_cause removed_cause; /* why then */
    double last_data;                 /* time of the last samples */
    double heard;           /* latest collection time of a frame from its agent (its clock) */
    double heard_before;    /* the one before that (0: none) */
    double heard_at;        /* when the latest frame from its agent arrived; 0: none yet */
    double heard_from;      /* collection time where its unbroken record of frames starts */
    double live_from;       /* arrival since which no gap between two was over hang-min/2 */
    double step_cap_next;   /* no step_rank_cap finding about it before this time (steps.c) */
    double step_owner_next; /* no step_owner finding about it before this time (steps.c) */
    struct gpu_st *gpus;
    struct ib_st ib[MAX_IB_PORTS];
    unsigned nib;
};

/* Node index `node`, or NULL when there is none. */
struct node *hb_node_at(struct hn_brain *b, int node);
/* 1 when the scheduler's last poll lists job on node n. */
int hb_node_runs(const struct node *n, const char *job);
/* 1 for the states in which a node takes work: new, burnin, ready, suspect. */
int hb_in_service(enum hn_node_state s);
/* Fires rule r of GPU g once; returns 1 when it had not fired yet. */
int hb_fire_once(struct gpu_st *g, int r);

#endif
