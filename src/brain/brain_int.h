/*
 * brain_int.h - the brain's private state, shared by its parts: brain.c (rules, peers,
 * lifecycle, guard) and jobs.c (step reports, stragglers, hangs, the job ledger). Nothing
 * outside src/brain/ includes this.
 */
#ifndef HN_BRAIN_INT_H
#define HN_BRAIN_INT_H

#include "brain/brain.h"

struct hn_jobs;

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
    double removed_at;    /* when houston last took it out of service (remove_node); 0: never */
    double removed_from;  /* then, the collection time of its agent's frame before the last */
    uint64_t removed_gen; /* then, the jobs' scheduler input count (jobs.c) */
    enum hn_loss_cause removed_cause; /* why then */
    double last_data;                 /* time of the last samples */
    double heard;           /* latest collection time of a frame from its agent (its clock) */
    double heard_before;    /* the one before that (0: none) */
    double heard_at;        /* when the latest frame from its agent arrived; 0: none yet */
    double heard_from;      /* collection time where its unbroken record of frames starts */
    double live_from;       /* arrival since which no gap between two was over hang-min/2 */
    double step_cap_next;   /* no step_rank_cap finding about it before this time (jobs.c) */
    double step_owner_next; /* no step_owner finding about it before this time (jobs.c) */
    struct gpu_st *gpus;
    struct ib_st ib[MAX_IB_PORTS];
    unsigned nib;
};

struct removal {
    double time;
    int node;
};

struct hn_brain {
    struct hn_brain_config cfg;
    struct node *nodes;
    size_t nnodes, capnodes;
    struct hn_out *outq;
    size_t qhead, qlen, qcap;
    uint64_t next_action;
    struct removal *removals;
    size_t nremovals, capremovals;
    double *scratch;
    int *index; /* open-addressing hash of node names -> node index + 1; 0 = empty */
    size_t index_cap;
    size_t capscratch;
    struct hn_jobs *jobs; /* jobs.c */
};

/* Queues an output about node n (NULL: about no node, e.g. a job). */
struct hn_out *hb_push_out(struct hn_brain *b, enum hn_out_kind kind, double now,
                           const struct node *n);
void hb_finding_set(struct hn_finding *f, const char *rule, enum hn_severity sev, int gpu,
                    const char *evidence, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
/* 1 when the scheduler lists job on node n. */
int hb_node_runs(const struct node *n, const char *job);
/* Requeues job, which runs (among others) on node n. */
uint64_t hb_requeue(struct hn_brain *b, double now, struct node *n, const char *job);
int hb_in_service(enum hn_node_state s);
/* A finding about node n: recorded, and acted on by severity (suspect, or removal within the
 * guard). */
void hb_found(struct hn_brain *b, double now, struct node *n, const struct hn_finding *f);
struct node *hb_node_at(struct hn_brain *b, int node);

/* jobs.c */
/* A job table of at most cap jobs (0: HN_JOBS_MAX_DEFAULT). */
struct hn_jobs *hb_jobs_new(size_t cap);
void hb_jobs_free(struct hn_jobs *j);
/* Node n leaves service (drain) for finding f: its jobs are interrupted, by f's cause, and n
 * keeps when and why, for the reports of jobs the brain did not know ran there (jobs.c,
 * ran_on_removed). */
void hb_jobs_node_removed(struct hn_brain *b, double now, struct node *n,
                          const struct hn_finding *f);
void hb_jobs_tick(struct hn_brain *b, double now);
/* The scheduler's poll at `now` lists job as running (on some node), or as waiting. */
void hb_jobs_sched_seen(struct hn_brain *b, double now, const char *job);
void hb_jobs_sched_waiting(struct hn_brain *b, double now, const char *job, enum hn_wait why);
void hb_jobs_time_left(struct hn_brain *b, double now, const char *job, double seconds);
/* A requeue of job failed for good; result is the scheduler's words. */
void hb_jobs_requeue_failed(struct hn_brain *b, double now, const char *job, const char *result);

#endif
