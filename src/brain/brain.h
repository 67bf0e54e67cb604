/*
 * brain.h - the controller's deterministic brain: (clock, inputs) -> (state, actions).
 *
 * Everything houston decides about nodes happens here and nowhere else: rules over samples
 * and events, silent-laggard detection against same-SKU peers, the node lifecycle, and the
 * blast-radius guard. The brain never reads a clock, forks, or touches a socket: every entry
 * point takes `now` (seconds, from the caller's clock: wall time in `houston control`, virtual
 * time in the simulator, a script in tests), and every decision comes out as an output record
 * (hn_brain_poll) that the caller persists and executes. The same inputs in the same order give
 * the same outputs, bit for bit.
 *
 * Outputs, in the order they were decided:
 *   HN_OUT_FINDING     a rule fired (an event with its evidence), whatever happens next
 *   HN_OUT_TRANSITION  a node changed lifecycle state, with the finding that caused it and the
 *                      actor (rule name or "operator:NAME")
 *   HN_OUT_ACTION      something the scheduler must do: drain (reason starts "houston:"),
 *                      resume, requeue a job. Each has an id; the caller reports the outcome
 *                      with hn_brain_action_done().
 *   HN_OUT_HELD        a removal the guard refused: it waits for hn_brain_approve()
 *
 * Lifecycle: new -> burnin -> ready <-> suspect -> draining -> quarantined -> repair -> burnin,
 * and retired. A fatal finding on a node in service (new, burnin, ready, suspect) drains it
 * (if the guard allows) and requeues its jobs; a suspect finding (laggard, warnings) makes it
 * suspect without draining. draining -> quarantined when the scheduler reports the node empty.
 * Operator actions (drain, resume, repair, retire, approve) always win and are recorded.
 *
 * Guard: automatic removals (draining) within guard_window_s may not exceed guard_fraction of
 * the fleet, nor guard_per_rack in one rack; beyond that the node becomes suspect with a HELD
 * output until an operator approves.
 *
 * Its rooms (src/brain/), each calling only those listed before it:
 *   out.c, fleet.c       the output queue; the node table
 *   lifecycle.c          transitions, guard, burn-in (knows no jobs)
 *   jobtab.c, ledger.c   the job table; a job's books (ETTR, lost time by cause, MFU, history)
 *   strag_hold.c         how a straggler episode ends (recoveries held, told)
 *   runs.c               a job's new run, resize, interruption; a node removed under jobs
 *   removal.c            a finding acted on: lifecycle first, then the jobs a removal stops
 *   strag_plan.c         the straggler policy: waste against restart, drain at checkpoint
 *   strag_found.c        detector verdicts as findings: straggler, drift, shared GPU
 *   rows.c               step reports into rows for the detector
 *   hangs.c              hangs, hangs at start, unlisted jobs' ends; the job tick
 *   steps.c, jobviews.c  step reports in; job views and persistence
 *   rules.c, peers.c     rules over a node's samples; comparison with same-SKU peers
 *   brain.c              the coordinator: new/free, the tick's order, scheduler inputs
 * docs/architecture.md, "The brain", follows a step report and a fault through them.
 *
 * Not thread-safe: one thread owns a brain.
 */
#ifndef HN_BRAIN_H
#define HN_BRAIN_H

#include "common/fields.h"
#include "common/jobid.h"
#include "jobs/straggler.h"

#include <stddef.h>
#include <stdint.h>

struct hn_xid_catalog;
struct hn_sku_table;

enum hn_node_state {
    HN_NODE_NEW,
    HN_NODE_BURNIN,
    HN_NODE_READY,
    HN_NODE_SUSPECT,
    HN_NODE_DRAINING,
    HN_NODE_QUARANTINED,
    HN_NODE_REPAIR,
    HN_NODE_RETIRED,
    HN_NODE_NSTATES
};

enum hn_severity { HN_SEV_INFO, HN_SEV_WARN, HN_SEV_SUSPECT, HN_SEV_FATAL };

#define HN_NAME_MAX 64
/* A finding's text for people, and a node's reason taken from it: room for a job id and a node
 * name of the longest sizes in the longest texts (a hang; the straggler policy's plan, which
 * also names the other jobs a drain would interrupt: about 300 bytes with 63-character node
 * names). */
#define HN_DETAIL_MAX 384
/* Jobs kept in memory unless configured (jobs-max): about 19 KB each, and their ranks. */
#define HN_JOBS_MAX_DEFAULT 4096

/* A rule's verdict and its evidence. */
struct hn_finding {
    char rule[32]; /* e.g. "xid", "dbe_new", "row_remap_failure", "laggard" */
    enum hn_severity severity;
    int gpu; /* -1: the node as a whole */
    /* for people: "xid 79 (ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS)" */
    char detail[HN_DETAIL_MAX];
    char evidence[320]; /* the samples and thresholds: "value=2 previous=0 limit=new" */
};

enum hn_action_kind { HN_ACT_DRAIN, HN_ACT_RESUME, HN_ACT_REQUEUE };

struct hn_action {
    uint64_t id;
    enum hn_action_kind kind;
    char node[HN_NAME_MAX];
    char job[HN_JOB_ID_SIZE];        /* HN_ACT_REQUEUE */
    char reason[HN_DETAIL_MAX + 16]; /* HN_ACT_DRAIN: "houston: " and a finding's detail */
};

enum hn_out_kind { HN_OUT_FINDING, HN_OUT_TRANSITION, HN_OUT_ACTION, HN_OUT_HELD };

struct hn_out {
    enum hn_out_kind kind;
    double time;
    char node[HN_NAME_MAX];
    struct hn_finding finding;   /* FINDING, TRANSITION (its cause), HELD */
    enum hn_node_state from, to; /* TRANSITION */
    char actor[48];              /* TRANSITION: rule name or "operator:NAME" */
    struct hn_action action;     /* ACTION */
    char job[HN_JOB_ID_SIZE];    /* the job it concerns ("": none): straggler, hang, requeue */
};

/* Rule thresholds for one SKU, overriding the fleet-wide ones (NaN: not overridden). */
struct hn_sku_rules {
    char sku[32];
    double retired_pages_limit;
    double nvlink_crc_per_s_limit;
    double pcie_replay_per_lane_min;
};

#define HN_STEP_TRUSTED_MAX 16 /* step_trusted_uids */

struct hn_brain_config {
    double guard_fraction; /* 0.25: at most this share of the fleet drained automatically */
    double guard_window_s; /* 3600 */
    int guard_per_rack;    /* 2 */
    /* Rules (DCGM-like limits; data/rules.csv). */
    double retired_pages_limit;      /* 63 */
    double nvlink_crc_per_s_limit;   /* 100 */
    double pcie_replay_per_lane_min; /* 0.5 replays per lane per minute (x16 = DCGM's 8/min) */
    /* Silent laggards: a GPU under load whose SM clock is below the same-SKU median by more
     * than laggard_k robust deviations and laggard_min_drop, for laggard_cycles evaluations
     * in a row. */
    double laggard_min_util;  /* 50 (%) */
    double laggard_k;         /* 4 */
    double laggard_min_drop;  /* 0.05 (5% below the median) */
    int laggard_cycles;       /* 3 */
    int laggard_min_peers;    /* 4 */
    double laggard_max_age_s; /* 60: older SM clock samples (a silent agent) are no peers */
    /* A node in burnin that reports for burnin_s with no suspect or fatal finding passes and
     * goes back to ready (resumed in the scheduler if houston drained it). 0: operators only. */
    double burnin_s; /* 600 */
    /* Hot parts: a loaded GPU hotter than its same-SKU peers drawing the same power (within
     * 10%) by hot_min_delta_c and laggard_k robust deviations, laggard_cycles in a row. */
    double hot_min_delta_c; /* 8 */
    /* Jobs (docs/jobs.md). A job restart costs restart_s until one of the job's own restarts
     * was measured (hn_job_ledger.restart_s);
     * a persistent straggler is drained at the job's next checkpoint when the GPU time it
     * wastes over straggler_horizon_s exceeds a restart's. A job the scheduler still runs with
     * no step progress for max(hang_min_s, hang_k x its typical step time, hang_pause_k x the
     * longest pause it came back from, at most hang_pause_max_s) is hung, once an agent of one of
     * its nodes collected a frame that long after its last progress (hn_brain_node_heard). */
    double restart_s;           /* 300 */
    double straggler_horizon_s; /* 3600 */
    /* A told straggler's recovery is told once it has kept up this long; slow again before,
     * it is the same episode (docs/jobs.md, "Recovery"). 0: at once. */
    double straggler_hold_s; /* 600 */
    double hang_min_s;       /* 120 */
    double hang_k;           /* 10 */
    double hang_pause_k;     /* 3 */
    double hang_pause_max_s; /* 2700 */
    char mfu_dtype[16];      /* "bf16": the dense peak MFU is quoted against */
    /* The straggler detector's thresholds for every job (hn_strag_config_default; the
     * controller's straggler-NAME settings). hn_brain_new warns and uses the defaults when they
     * fail hn_strag_config_check. */
    struct hn_strag_config straggler;
    /* A job's ranks: at most ranks_per_node_max for each node the scheduler lists it on or
     * that reported for it (hn_brain_step), never more than 2^20. */
    unsigned ranks_per_node_max; /* 64 (0 counts as 1) */
    /* Jobs kept in memory (ended ones are forgotten first; docs/jobs.md); the controller
     * reloads a forgotten job's ledger from its store when the job reports again. */
    size_t jobs_max; /* HN_JOBS_MAX_DEFAULT */
    /* Users besides root whose step reports count for any job (a service account that runs
     * houston tail for other users' jobs); docs/steps.md, "Who may report". */
    uint32_t step_trusted_uids[HN_STEP_TRUSTED_MAX];
    unsigned n_step_trusted_uids; /* 0 */
    /* Predictive: a GPU whose correctable (SBE) ECC count rises at sbe_rate_per_h or more is
     * suspect (0: off); with predictive set, its node is replaced at its jobs' next
     * checkpoint. */
    double sbe_rate_per_h;                    /* 100 */
    int predictive;                           /* 0 */
    const struct hn_sku_table *skus;          /* borrowed; NULL: MFU unknown */
    const struct hn_xid_catalog *xid_catalog; /* borrowed; NULL: every Xid is a warning */
    const struct hn_sku_rules *sku_rules;     /* borrowed; per-SKU overrides */
    size_t nsku_rules;
};

void hn_brain_config_default(struct hn_brain_config *cfg);

struct hn_brain;

struct hn_brain *hn_brain_new(const struct hn_brain_config *cfg);
void hn_brain_free(struct hn_brain *b);

/* Fleet model. Adds a node (state new unless given) and returns its index, or -EEXIST/-EINVAL.
 * sku names the GPU model ("H100", "GB200"); peers for laggard detection share it. */
int hn_brain_add_node(struct hn_brain *b, const char *name, const char *rack, const char *sku,
                      unsigned gpus, enum hn_node_state state);
int hn_brain_find_node(const struct hn_brain *b, const char *name);
/* Restores what the store saved about a node after a controller restart (control/store.h). */
int hn_brain_restore_node(struct hn_brain *b, int node, enum hn_node_state state,
                          int drained_by_houston, int held, double since, const char *reason);
/* Restores the node's last removal (hn_node_view's removed_*). The scheduler's list of its jobs
 * then is not known: a job first heard from it in that window is requeued (the executor does so
 * only if the scheduler still runs it there). -EINVAL for no such node or a bad cause. */
int hn_brain_restore_removal(struct hn_brain *b, int node, double removed_at, double removed_from,
                             int cause);
/* Action ids continue after the last one stored, so they stay unique across restarts. */
void hn_brain_set_next_action_id(struct hn_brain *b, uint64_t next);
size_t hn_brain_node_count(const struct hn_brain *b);

struct hn_node_view {
    const char *name, *rack, *sku;
    enum hn_node_state state;
    unsigned gpus_expected, gpus_seen;
    int drained_by_houston;     /* houston set the scheduler's drain */
    int held;                   /* a removal waits for an operator */
    double since;               /* time of the last transition */
    char reason[HN_DETAIL_MAX]; /* detail of the finding that caused the last transition */
    /* When houston last took it out of service (0: never), the collection time of its agent's
     * frame before the last then, and why (enum hn_loss_cause): a job first heard from the
     * node after that, in a report received between the two, ran there and is requeued
     * (docs/jobs.md, "Interruptions"). Saved, so that this holds across a controller restart. */
    double removed_at, removed_from;
    int removed_cause;
};
int hn_brain_node_view(const struct hn_brain *b, int node, struct hn_node_view *out);

/* The last value of each of fields[0..n) of GPU gpu (NaN: never reported); 1 in *lost when
 * the GPU is lost. Returns 0 or -EINVAL (no such node or GPU). */
int hn_brain_gpu_values(const struct hn_brain *b, int node, unsigned gpu, const unsigned *fields,
                        double *values, unsigned n, int *lost);

/* Inputs from agents. gpu < gpus_expected. Values NaN = unavailable. */
int hn_brain_samples(struct hn_brain *b, double now, int node, unsigned gpu, const unsigned *fields,
                     const double *values, unsigned n);
int hn_brain_gpu_count(struct hn_brain *b, double now, int node, unsigned count);
int hn_brain_gpu_lost(struct hn_brain *b, double now, int node, unsigned gpu, int lost);
int hn_brain_xid(struct hn_brain *b, double now, int node, unsigned gpu, unsigned code);
int hn_brain_ib_port(struct hn_brain *b, double now, int node, const char *port, int active,
                     uint64_t link_downed);

/* A frame from the node's agent arrived at now; the agent collected it at `collected`, in the
 * controller's clock (the controller corrects for the agent's clock: a queued frame keeps the
 * time it was collected). `follows`: it is the agent's next frame after the previous one; 0
 * after frames were lost, a restart of the agent or of the controller, which starts the node's
 * unbroken record again. A job is hung once an agent of a node its ranks report from collected
 * a frame a whole limit after both its last progress and the start of that record, with no
 * progress (docs/jobs.md, "Hangs"); when no frame arrives at all it is hang_unseen. */
int hn_brain_node_heard(struct hn_brain *b, double now, int node, double collected, int follows);

/* The node's agent has sent nothing for silent_s seconds (the controller's clock): a
 * suspect finding, once per silence; the next samples re-arm it. */
int hn_brain_node_silent(struct hn_brain *b, double now, int node, double silent_s);

/* Inputs from the scheduler: job runs on the node (one call per job, at most 16 per node are
 * kept); "" means the node runs none, and starts a new list. A fatal finding requeues every
 * job listed. */
int hn_brain_node_job(struct hn_brain *b, double now, int node, const char *job);
/* The scheduler lists job as owned by user id uid (one call per job, 6,144 kept); "" or NULL
 * forgets every owner, which starts a poll. A step report of a listed job sent by another user
 * than its owner, root or one of step_trusted_uids is refused (hn_brain_step). -EINVAL for a bad id
 * or uid, -ENOSPC when this poll's owners are full (that job's reports are not checked). */
int hn_brain_job_owner(struct hn_brain *b, const char *job, int64_t uid);
/* Why a job the scheduler lists is not running. */
enum hn_wait {
    HN_WAIT_SUSPENDED, /* suspended or stopped: it goes on where it was */
    HN_WAIT_QUEUED,    /* pending, requeued, being set up: its next run starts over */
    HN_WAIT_ENDING,    /* completing, staging out */
};
/* The scheduler's poll lists job, but not running (why). It has not ended, and is not checked
 * for hangs while it waits. A job queued again that houston did not interrupt was requeued
 * by the scheduler (a preemption, a node failure it saw first): an interruption of cause
 * "other", and its next run has as long as any restart to step. -EINVAL for a bad id. */
int hn_brain_job_waiting(struct hn_brain *b, double now, const char *job, enum hn_wait why);
/* The scheduler says job has `seconds` left before its time limit (negative: no limit known).
 * The straggler policy weighs a straggler's waste over that time (docs/jobs.md, "Policy").
 * -EINVAL for a bad id. */
int hn_brain_job_time_left(struct hn_brain *b, double now, const char *job, double seconds);
/* The scheduler reports the node has no job left (a draining node becomes quarantined). */
int hn_brain_node_idle(struct hn_brain *b, double now, int node);

/* A training step of one rank (docs/steps.md), forwarded by the agent of node `node`.
 * Unknown integers are -1, unknown reals NaN. hn_brain_step returns 0, -EINVAL for a report
 * the brain cannot use, -ERANGE for a rank beyond the job's cap (ranks_per_node_max x its
 * nodes, docs/jobs.md), or -EPERM for a report whose sender (uid) is neither the job's owner
 * (hn_brain_job_owner), root nor one of step_trusted_uids; a refused report is not applied.
 * With pause set (enum hn_pause_kind) it is a pause notice instead: the job stops stepping on
 * purpose after `step` (seconds and the other reals are ignored) and is allowed up to
 * hang_pause_max_s without progress (docs/jobs.md, "Hangs"); a notice for a job the brain does
 * not know, one that is not running, or for a step it has passed, changes nothing. */
struct hn_step_in {
    const char *job;
    int64_t rank, local_rank, world;
    int gpu; /* -1: not mapped to a GPU of the node */
    uint64_t step;
    double seconds, tokens, forward_s, backward_s, optimizer_s, comm_s, tflops, flops_per_token;
    int64_t checkpoint;
    int64_t uid; /* the sending process's user id; -1: unknown */
    int pause;   /* enum hn_pause_kind; HN_PAUSE_NONE for a step */
};
int hn_brain_step(struct hn_brain *b, double now, int node, const struct hn_step_in *s);
/* A step report of `job`'s `rank` at `step` that took `seconds`, everything else unknown (-1,
 * NaN; not a pause). */
void hn_step_in_init(struct hn_step_in *s, const char *job, int64_t rank, uint64_t step,
                     double seconds);

/* Why GPU time was lost (the job ledger's columns). */
enum hn_loss_cause {
    HN_LOSS_FAILURE,   /* a fatal fault took a node of the job out */
    HN_LOSS_STRAGGLER, /* a slow rank held the job back, and its replacement */
    HN_LOSS_HANG,      /* no progress until houston noticed, and the restart */
    HN_LOSS_OPERATOR,  /* an operator drained a node of the job */
    HN_LOSS_OTHER,     /* the job restarted and houston saw no cause */
    HN_LOSS_NCAUSES
};
const char *hn_loss_cause_name(enum hn_loss_cause c);

/* A job's ledger: what survives a controller restart (control/store.h). */
struct hn_job_ledger {
    char id[HN_JOB_ID_SIZE];
    unsigned ranks;
    double first_seen, last_report; /* brain time */
    uint64_t step;                  /* highest step reported */
    int64_t checkpoint;             /* last checkpoint step, -1: none reported */
    double productive_s;            /* wall time that turned into kept training progress */
    double lost_s[HN_LOSS_NCAUSES]; /* wall time lost, by cause */
    /* GPU time lost, by cause: each charge times the job's ranks when it was made (a job that
     * changed size between runs keeps what each size lost). */
    double lost_gpu_s[HN_LOSS_NCAUSES];
    unsigned ranks_high; /* the most ranks it ever had (its rank cap's floor) */
    unsigned interruptions;
    int ended;
    double pause_s; /* longest wait between two advances of the step that ended in progress
                       (checkpoint saves, evaluation): the hang limit allows for it */
    /* Interrupted and waiting for its next run (its state "restarting"), since its last
     * progress at interrupted_at; the time until then goes to pending_cause (enum
     * hn_loss_cause). Saved, so that a controller restart does not count the interruption
     * again when the scheduler lists the job queued; the last two mean nothing when pending
     * is 0. */
    int pending, pending_cause;
    double interrupted_at;
    /* When houston requeued it for that interruption (or again, after a hang at its restart):
     * a report received before is of the run it ended, also after a controller restart. 0:
     * not known (a ledger of schema 10 or older: its last report stands in). */
    double requeued_at;
    /* The ranks of the run it interrupted, which its wait is charged at (a bigger next run's
     * early reports may have grown `ranks` meanwhile). 0: not known (schema 10 or older). */
    unsigned charged_ranks;
    /* What its restarts took, from the requeue (or the scheduler's own) to the new run's
     * first step at its typical pace: the median of the last RESTARTS_KEPT measured, 0 when
     * none was (the straggler policy then takes restart_s). */
    double restart_s;
    /* When the restart it waits for began, which restart_s measures from: the interruption's
     * requeue, kept through a requeue again after a hang at start (requeued_at moves on).
     * Saved, so that a controller restart measures the same. 0: not known (a ledger of schema
     * 11 or older: requeued_at stands in). */
    double restart_from;
    /* Houston called it hung (state "hung") and it has not stepped since; of that, the hangs
     * at start in a row that named no node, which stop at the third (docs/jobs.md). Saved,
     * so that a controller restart does not requeue a job left alone again. */
    int hung;
    unsigned restart_hangs;
    /* houston's requeue of it failed (requeue_failed): its run goes on where it was. */
    int requeue_failed;
    /* Productive time since the last checkpoint, lost if the job is interrupted now, and the
     * straggler's share of it already charged to straggler (an interruption takes that back:
     * the whole of that time is then lost to the interruption's cause). Saved, so that an
     * interruption after a controller restart charges the work it throws away. */
    double since_ckpt_s, strag_ckpt_s;
    /* A job that ended while waiting for its next run: when the scheduler last listed it; its
     * outage, charged to pending_cause, and its wall time run to then. 0: none. */
    double ended_at;
};

/* A point of a job's history, one per minute of brain time at most (older points thinned). */
struct hn_job_point {
    double time, mfu, ettr, step_seconds;
};

struct hn_job_view {
    struct hn_job_ledger l;
    const char *state;    /* "running", "waiting", "restarting", "hung", "ended" */
    unsigned nodes;       /* nodes its ranks reported from */
    double step_seconds;  /* median of its recent step times */
    double hang_limit_s;  /* no progress for longer is a hang (docs/jobs.md, "Hangs") */
    double no_progress_s; /* since the step last advanced; NaN: no step yet, or not running */
    const char *pause;    /* a declared pause in progress ("checkpoint", "eval", "other"), else
                             NULL; it began after step pause_step, pause_s seconds ago */
    uint64_t pause_step;
    double pause_s;
    double tokens_per_s;                             /* whole job, NaN unknown */
    double tflops_per_gpu, mfu, ettr, effective_mfu; /* NaN unknown */
    double wall_s;
    double lost_gpu_h[HN_LOSS_NCAUSES];
    int straggler_rank; /* -1: none now */
    char straggler_node[HN_NAME_MAX];
    double straggler_slowdown; /* 0.3 = 30% slower than its peers */
    uint64_t straggler_onset;
    const char *straggler_phase;   /* "forward", "backward", "optimizer": where it is slowest
                                    * against its peers (NULL: no phase times, or none slow) */
    double straggler_phase_excess; /* by how much: 0.4 = 40% longer than the peers' median */
    char plan[HN_DETAIL_MAX];      /* the straggler policy's decision, for people */
    unsigned straggler_every;      /* the detector sees every this many steps (docs/jobs.md) */
    uint64_t late_reports;         /* reports that came after their step's row had left */
    uint64_t untimed_reports; /* reports whose comm was their whole step or more: no compute time */
    const struct hn_job_point *series; /* borrowed until the next call into the brain */
    size_t nseries;
};
/* The heap job i holds in the brain, its detector left out (hn_strag_new says what that
 * takes): its state, history, ranks, rows and node table. 0 for no such index. */
size_t hn_brain_job_bytes(const struct hn_brain *b, size_t i);
/* Rank r of job i: the node it reports from (NULL: none yet), its GPU (-1: unknown) and its
 * last compute time (NaN: none). Returns 0 or -EINVAL. */
int hn_brain_job_rank(const struct hn_brain *b, size_t i, unsigned r, const char **node, int *gpu,
                      double *seconds);
size_t hn_brain_job_count(const struct hn_brain *b);
int hn_brain_find_job(const struct hn_brain *b, const char *id);
/* Job i as the API shows it: 0, -EINVAL for no such index, -ENOENT for a job no report of which
 * was accepted yet (all refused by the rank cap). */
int hn_brain_job_view(const struct hn_brain *b, size_t i, struct hn_job_view *out);
/* Job i's ledger, borrowed until the next call into the brain; NULL for no such index or for
 * a job no report of which was accepted yet (as hn_brain_job_view's -ENOENT). Cheaper than
 * the view when only the ledger is wanted (the store's saves). */
const struct hn_job_ledger *hn_brain_job_ledger(const struct hn_brain *b, size_t i);
/* 1 when job i's ledger or history changed since the last call with clear=1 (then cleared:
 * the caller saved it). */
int hn_brain_job_dirty(struct hn_brain *b, size_t i, int clear);
/* The jobs whose ledger or history changed and were not saved since (hn_brain_job_dirty with
 * clear=1), in the order they changed: writes the first max of their indexes to idx and
 * returns how many there are. A list, not a scan: a frame that changes one job of thousands
 * costs one. */
size_t hn_brain_jobs_changed(struct hn_brain *b, size_t *idx, size_t max);
/* Restores a saved ledger (before any step report of that job). -EEXIST when known. */
int hn_brain_restore_job(struct hn_brain *b, const struct hn_job_ledger *l);
/* Job i's history points not saved yet, borrowed until the next call into the brain: *p[0..*n),
 * and *replace when the saved ones are to be replaced by them (the brain thinned the history,
 * keeping every other point, so that memory stays flat). hn_brain_job_points_saved says they
 * were. Returns 0, or -EINVAL for no such index. */
int hn_brain_job_points_unsaved(const struct hn_brain *b, size_t i, const struct hn_job_point **p,
                                size_t *n, int *replace);
void hn_brain_job_points_saved(struct hn_brain *b, size_t i);
/* Restores the saved history of a restored job (hn_brain_restore_job), oldest first; more points
 * than the brain keeps are thinned as it would have (and then saved again in full). Returns 0,
 * -ENOENT for a job not known. */
int hn_brain_restore_points(struct hn_brain *b, const char *id, const struct hn_job_point *p,
                            size_t n);

/* Periodic evaluation: laggards across peers, guard window. Call about once per collection
 * interval. */
void hn_brain_tick(struct hn_brain *b, double now);

/* Operator actions; user names the operator. Return 0 or -EINVAL (unknown node, bad state). */
int hn_brain_drain(struct hn_brain *b, double now, int node, const char *reason, const char *user);
int hn_brain_resume(struct hn_brain *b, double now, int node, const char *user);
int hn_brain_approve(struct hn_brain *b, double now, int node, const char *user);
int hn_brain_set_state(struct hn_brain *b, double now, int node, enum hn_node_state to,
                       const char *user);

/* The outcome of action a, which the caller executed: ok 1 done (or nothing to do), 0 failed
 * for good (the scheduler refused or did not answer, after the caller's retries), -1 not
 * attempted (a target that does not exist, or one the caller refused); result is what the
 * scheduler said (may be NULL). A failed drain leaves the node draining. A requeue that failed
 * is a `requeue_failed` finding about its job (docs/jobs.md). */
void hn_brain_action_done(struct hn_brain *b, double now, const struct hn_action *a, int ok,
                          const char *result);

/* Pops the oldest output into *out; returns 1, or 0 when there is none. */
int hn_brain_poll(struct hn_brain *b, struct hn_out *out);

const char *hn_node_state_name(enum hn_node_state s);
int hn_node_state_parse(const char *s, enum hn_node_state *out);

#endif
