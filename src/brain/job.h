/*
 * job.h - a training job as the brain keeps it, shared by the job parts: jobtab.c (the table,
 * owners, the nodes a job runs on), ledger.c (accounting), runs.c (runs, resizes,
 * interruptions), rows.c and strag_*.c (stragglers), hangs.c, steps.c (step reports in) and
 * jobviews.c (views and persistence). Each part owns the fields its comments name. Nothing
 * outside src/brain/ includes this.
 */
#ifndef HN_BRAIN_JOB_H
#define HN_BRAIN_JOB_H

#include "brain/state.h"
#include "jobs/straggler.h"

#include <stdint.h>

#define RANKS_MAX   (1u << 20) /* ranks of one job, whatever the scheduler says */
#define ROWS        8          /* steps being assembled at once */
#define STRIDE_MAX  1024       /* most steps between two that a job's detector sees (hb_row_put) */
#define STRIDE_CALM 512        /* complete rows in a row after which the stride is halved */
#define RECENT      32         /* job-level step times kept for the typical step time */
#define SERIES_MAX  512        /* points of a job's history; thinned by half when full */
#define SERIES_DT   60.0       /* seconds between two points at first */
#define OWNERS_CAP  8192       /* job owners from a scheduler poll (hash slots, power of two) */
#define OWNERS_MAX  6144       /* owners kept from one poll (3/4 of OWNERS_CAP); others unknown */

/* Measured restarts a job keeps (hb_restart_taken): the policy weighs their median, so that one
 * restart that waited long in the queue does not decide alone. */
#define RESTARTS_KEPT 5

/* The phases of a step a report may time (fwd=, bwd=, opt=; comm= is the wait, not work). */
enum { PHASE_FORWARD, PHASE_BACKWARD, PHASE_OPTIMIZER, PHASES };
extern const char *const hb_phase_names[PHASES]; /* "forward", "backward", "optimizer" */

/* Each rank's last this many phase times are kept, and their median compared (rank_phase):
 * one step's spike (a garbage-collection pause in the forward pass) does not name the phase. */
#define PHASE_KEEP 3

struct rank_st {
    int node; /* -1: not reported yet */
    int gpu;
    unsigned run; /* the job's run this rank last reported in */
    uint64_t last_step;
    double last_secs;                /* its last compute time */
    int64_t uid;                     /* who sent its last report; -1: unknown */
    float phase[PHASES][PHASE_KEEP]; /* its last forward, backward, optimizer times (a ring at
                                        phase_at); NaN: not reported */
    uint8_t phase_at;
    uint8_t strag_told; /* a straggler finding named it in this run, and no recovery since */
    uint16_t relapses;  /* slow again within straggler-hold of a recovery, since it was told */
    /* The decision a straggler_policy finding told for it as the job's straggler since it was
     * told (drain_planned + 1), 0: none. A plan made again with the same decision is told
     * anyway for a rank none was told for (hb_straggler_plan): one standing in drains another
     * node than the one the plan told. */
    uint8_t plan_told;
    /* When the guard held the drain of its node for it as the job's straggler (checkpoint), 0:
     * not. Kept by the rank, not the job: another rank may take the job's straggler over (one
     * bigger, one standing in, a relapse taking it back) before this one recovers, and its
     * recovery still calls that drain off (held_drain_off). */
    double held_at;
};

struct row {
    uint64_t step;
    unsigned have; /* ranks filled in */
    double *secs;  /* [ranks], NaN: not reported */
};

/* Drifting ranks a job follows, to call one a straggler once it is slower than its peers after
 * all (hb_drift_watch); a ninth is not followed. */
#define DRIFT_MAX 8

/* Ranks a job holds the recovery of (straggler-hold: hb_quiet_start); a ninth is told at once. */
#define QUIET_MAX 8

/* A told straggler the detector saw recover, whose recovery is told once it has kept up for
 * straggler-hold (hb_quiet_tell): what the detector said then, and when the guard held the drain
 * of its node for it as the job's straggler (rank_st's held_at; 0: not): another rank may be the
 * job's straggler by the time it is told. */
struct quiet {
    unsigned rank;
    double at;
    uint64_t onset_step, detect_step;
    double slowdown;
    double held_at;
};

/* The steps being assembled into rows for the job's straggler detector (rows.c). */
struct job_feed {
    struct row rows[ROWS];
    uint64_t next_row; /* lowest step (from row_base) not yet handed to the detector */
    /* The detector sees the steps that are multiples of stride (1, 2, 4, ...; hb_row_put). late
     * counts reports that came after their row had left, since step late_from. */
    uint32_t stride;
    unsigned late;
    uint64_t late_from;
    int rows_started;    /* row_base is set: the run's first step that reached hb_row_put */
    uint64_t row_base;   /* next_row and late_from count steps from it */
    unsigned calm;       /* rows complete in a row at this stride, with room to spare */
    uint64_t top_at;     /* the newest step filed in a row, in strides from row_base */
    uint64_t late_total; /* all reports that came too late, for people */
    uint64_t untimed;    /* reports with no compute time (comm >= dur), for people */
};

/* The job's pace (ledger.c): its recent step times, the waits between advances of its step,
 * and its reported step times against the wall clock. */
struct job_pace {
    double recent[RECENT];
    unsigned nrecent, recent_at;
    double gaps[RECENT]; /* waits between advances of the step (reports may be sparse) */
    unsigned ngaps, gaps_at;
    int run_gaps; /* this run has a wait of gaps[]: its own rhythm is known (hb_hang_limit) */
    /* The reported step times against the wall clock (wall_frame), this run: the advances
     * that came at frame_at (the time their agent received them) with their reported seconds,
     * frame_from the frame before when houston watched the wait since (0: not); and the sums
     * over the frames judged so far (halved past WALL_WINDOW_S), wall_bad_s the wall time of
     * those whose own steps took more than WALL_K times it. wall_told: said so. */
    double frame_at, frame_from, frame_work, wall_work, wall_s, wall_bad_s;
    unsigned frame_adv, wall_adv;
    int wall_told;
};

/* The job's progress as a hang watches it (ledger.c advances it, hangs.c judges it). */
struct job_watch {
    int advanced; /* this run's first report advanced it (progress; step 0 too) */
    /* Its highest step since this controller knew it (restored: from 0), which a hang waits
     * on; a run Slurm restarted from a checkpoint while the controller was away advances it
     * below the ledger's step. */
    uint64_t front;
    double last_progress; /* when the highest step last advanced */
    int watched;          /* houston watched it since its last progress: a pause to learn from */
    /* A pause a rank declared (a checkpoint save; enum hn_pause_kind, 0: none) after step
     * pause_step, at pause_at; progress past that step, or a second advance since, ends it
     * (pause_adv counts them). */
    int pause;
    uint64_t pause_step;
    double pause_at;
    unsigned pause_adv;
    int unseen_told;  /* a hang_unseen finding was issued, and no frame of its nodes since */
    double unseen_at; /* when */
};

/* An interruption and the restart after it (runs.c). While it waits for the next run's first
 * step (l.pending), the time since l.interrupted_at (its last progress) is charged to
 * l.pending_cause. */
struct job_restart {
    /* What the interruption charged as lost work (the time since the last checkpoint); the
     * next run's first step says where it really started again, against l.step, where the
     * last one stopped (hb_resume). NaN: nothing to correct. */
    double charged_s;
    double charged_strag_s;           /* of it, the straggler's share (not the cause's) */
    enum hn_loss_cause charged_cause; /* the cause charged_s went to */
    double pending_at;                /* its last report before it was interrupted */
    /* Its restarts as measured (hb_restart_taken): the last RESTARTS_KEPT, oldest first, whose
     * median is l.restart_s (measured from l.restart_from). */
    double restarts[RESTARTS_KEPT];
    unsigned nrestarts;
    double run_from;    /* when this run's first report came (hb_resume); 0: the first run */
    double restored_at; /* the restored ledger's last report; 0: not restored */
};

/* The job as the scheduler's polls list it (runs.c). */
struct job_sched {
    double seen;       /* time of the last poll that listed it, -1: never */
    int waiting;       /* that poll listed it waiting (pending, suspended...), not running */
    double run_listed; /* the first poll since it last waited or ended that listed it
                        * running; -1: none */
    double ran_again;  /* the first poll that listed it running after one listed it waiting;
                        * -1: none */
    double time_left;  /* seconds to its time limit as of time_left_at; -1: no limit known */
    double time_left_at;
    int64_t owner; /* its uid since a poll first listed it; -1: unknown */
};

/* The job's rates (ledger.c): EWMAs, NaN unknown. */
struct job_rate {
    double tflops, tokens_per_s_rank; /* per rank */
    double mfu;                       /* of each report on its node's GPU */
};

/* The job's straggler and what houston plans for it (strag_*.c). */
struct job_strag {
    struct hn_strag *det; /* the detector of this run and size; NULL until its first row */
    int rank;             /* the job's straggler, -1: none */
    unsigned shared;      /* the ranks it shares its GPU with (straggler_shared_gpu), 0: none */
    int act;              /* houston may drain its node (straggler_found) */
    int from_start;       /* it was slow from the start (no episode: hb_strag_watch) */
    int next;             /* its straggler recovered: look for another (hb_strag_watch) */
    uint32_t drift[DRIFT_MAX]; /* ranks in an episode that were no straggler (drift) */
    unsigned ndrift;
    struct quiet quiet[QUIET_MAX]; /* recoveries held (hb_quiet_start) */
    unsigned nquiet;
    double slow;      /* the straggler against its peers now: 0.3 = 30% slower (hb_strag_follow) */
    double plan_slow; /* slow when the plan was made */
    int plan_avail;   /* its node was in service and not held then (hb_strag_follow) */
    uint64_t onset;
    int phase;           /* the phase the straggler is slowest in (enum), -1: unknown */
    double phase_excess; /* by how much against the peers' median: 0.4 = 40% longer */
    int drain_planned;
    char plan[HN_DETAIL_MAX]; /* as its straggler_policy finding's detail */
    /* others_cost's last sum, for node others_node (-1: none) at others_at. */
    double others_s, others_at;
    unsigned others_n, others_blind;
    int others_node;
};

/* The job's history, a point a minute at most, thinned by half when full (ledger.c). */
struct job_hist {
    struct hn_job_point series[SERIES_MAX];
    size_t nseries;
    size_t saved_points; /* series[0..saved_points) are in the store */
    int points_rewrite;  /* the series was thinned: the store's are replaced at the next save */
    double series_dt, next_point;
};

/* The nodes its ranks last reported from and those that sent a report for it in this run: a
 * table sized by the job's nodes, not the fleet's (jobtab.c). */
struct job_nodes {
    struct job_node *t;
    uint32_t cap, used; /* cap: a power of 2, or 0 */
    unsigned n;         /* nodes with ranks > 0 */
    unsigned reporters; /* nodes that sent a report in this run */
};

/* The job's size: what this run's reports claim (hb_resize), and its rank cap (hn_brain_step),
 * last computed with the scheduler poll and reporting nodes it was based on. */
struct job_size {
    unsigned run_claim;    /* the most ranks this run's accepted reports claimed */
    unsigned run_world;    /* the largest world size they reported; 0: none */
    unsigned run_world_lo; /* the smallest */
    int mixed_worlds;      /* some run's ranks reported different worlds: never shed */
    unsigned sized_run;    /* the run whose rank count was last set by hb_resize() */
    unsigned shed_from;    /* ranks before hb_resize() shed this run's; 0: none shed */
    unsigned cap, cap_sched, cap_nreporters;
    uint64_t cap_gen;
    int cap_warned; /* a step_rank_cap finding was issued */
};

struct job {
    struct hn_job_ledger l;
    unsigned run; /* +1 per restart */
    struct rank_st *ranks;
    unsigned ranks_alloc; /* ranks and each row's secs are allocated this many (a shed job keeps
                             its largest size: it may grow back) */
    struct job_size size;
    struct job_nodes nodes;
    struct job_feed feed;
    struct job_pace pace;
    struct job_watch watch;
    struct job_restart restart;
    struct job_sched sched;
    struct job_rate rate;
    struct job_strag strag;
    struct job_hist hist;
    /* Its ledger or history changed since the store last saved it: 1 (in the table's list of
     * changed jobs), 2 saved since but still in that list, 0 neither (hb_job_changed). */
    int changed;
};

/* A job's owner as the scheduler's latest poll listed it (hn_brain_job_owner). */
struct owner {
    char id[HN_JOB_ID_SIZE]; /* "": a free slot */
    uint32_t uid;
};

struct hn_jobs {
    struct job **v;       /* [cap], in the order they came */
    size_t n, cap;        /* cap: jobs kept (jobs_max); ended ones are forgotten first */
    int *index;           /* [nindex], open addressing by id: a slot of v, -1 empty */
    size_t nindex;        /* a power of two, at least 2 cap: probes stay short */
    struct owner *owners; /* [OWNERS_CAP], open addressing, cleared by each poll */
    size_t nowners;
    double sched_poll;  /* time of the latest scheduler poll */
    int sched_lists;    /* a scheduler lists its jobs (any poll so far) */
    uint64_t sched_gen; /* +1 per scheduler input: cached rank caps are stale */
    double now;         /* latest time the brain was told */
    /* Jobs whose ledger or history changed since the store saved them (hb_job_changed), in
     * the order they changed; entries of jobs saved since are dropped at the next
     * hn_brain_jobs_changed. */
    struct job **changed;
    size_t nchanged, capchanged;
};

/* One of the nodes of a job (struct job's jn): an open-addressing table by brain node index,
 * at most half full, so memory follows the nodes the job runs on (a job on node 99,999 of a
 * 100,000-node fleet costs a few entries, not 100,000). */
struct job_node {
    int32_t node;      /* brain node index; -1: a free slot */
    uint32_t ranks;    /* the job's ranks that last reported from it */
    uint32_t reported; /* it sent a report for the job in this run, accepted or refused */
};

/* A rank is a straggler when it is slower than its peers by this much: the detector's
 * smallest slowdown (min_slowdown), now measured against the peers (the step's reference). */
#define STRAGGLER_MIN_VS_PEERS 0.025

#endif
