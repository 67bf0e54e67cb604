/*
 * sched.h - scheduler backends: drain, resume and inspect nodes, requeue jobs, list jobs.
 *
 * houston acts on the batch scheduler through one small interface so that the health check
 * (`houston check --drain`) and the controller do not know which scheduler runs the site. A
 * backend is a row in a static table (struct hn_sched_ops): "slurm" drives scontrol and squeue
 * through hn_spawn_run() (slurm.c, its output parsers in slurm_parse.c), "dry-run" only logs
 * what it would do and records the calls, which tests read back (dryrun.c). The table and
 * hn_sched_init() are in registry.c; the helpers every backend shares (name checks, reason
 * format) in sched.c. Adding a scheduler is adding a row in registry.c.
 *
 * The scheduler's own facts stay in its backend: command names and output formats, job id
 * forms, state codes and words, host lists. What crosses the interface is backend-neutral: a
 * node's drain flag, reason and whether jobs still hold it (struct hn_sched_node); a job's id
 * as its ranks report it, owner, state (enum hn_sched_job_state), time left and node names
 * (struct hn_sched_job, through a struct hn_sched_job_sink).
 *
 * What a backend must provide: every function of struct hn_sched_ops. A backend that cannot
 * list jobs answers list_jobs and job_on_node with -ENOTSUP; the controller then runs no
 * scheduler poll and requeues without asking whether the job is still there.
 *
 * Every drain reason houston writes starts with HN_SCHED_REASON_PREFIX ("houston:"), so that
 * houston can tell its own drains from an administrator's and never resumes a node someone
 * else drained. The backends add the prefix when the caller's reason lacks it.
 *
 * Ownership and threads: struct hn_sched is the caller's storage; hn_sched_init() allocates
 * the backend's context and hn_sched_fini() frees it. One context belongs to one thread at a
 * time (it holds the last error message); use one per thread. Every call that runs a program
 * is bounded by the settings' timeout: a hung scontrol costs at most timeout_ms plus the
 * SIGTERM grace, never a blocked thread.
 *
 *     struct hn_sched s;
 *     if (hn_sched_init(&s, "slurm", &settings) == 0) {
 *         if (s.ops->drain(s.ctx, "gpu017", "xid 79 on GPU 3") < 0)
 *             hn_err("drain: %s", s.ops->last_error(s.ctx));
 *         hn_sched_fini(&s);
 *     }
 */
#ifndef HN_SCHED_H
#define HN_SCHED_H

#include <stddef.h>
#include <stdint.h>

#define HN_SCHED_REASON_PREFIX "houston:"

/* What a backend needs to run. SLURM_CONF and the like come through the inherited
 * environment. */
struct hn_sched_settings {
    char scontrol[256]; /* program name (looked up in PATH) or path; default "scontrol" */
    char squeue[256];   /* the same for job listings (list_jobs, job_on_node); default "squeue" */
    int timeout_ms;     /* per command; default 10000 */
    size_t output_max;  /* cap on one scontrol command's captured output; default 64 KiB */
};

/* One node as the scheduler reports it. Strings are always NUL-terminated; long values are
 * cut at the field size. */
struct hn_sched_node {
    char name[64];
    char state[128];      /* scheduler's words, e.g. "IDLE+DRAIN", "ALLOCATED+DRAIN" */
    int drain;            /* 1 when the DRAIN flag is set: draining (jobs still run) or drained */
    int responding;       /* 0 when the scheduler flags the node NOT_RESPONDING */
    int allocated;        /* 1 while jobs hold the node (Slurm: ALLOCATED, MIXED, COMPLETING): a
                           * draining node without is empty */
    char reason[256];     /* free text set with the drain/down, "" when none */
    char reason_user[64]; /* who set it, "" when unknown */
    char reason_time[32]; /* when, scheduler's format (Slurm: 2024-05-01T10:00:00), or "" */
};

/* What a job the scheduler lists is doing; jobs that are over (completed, cancelled, failed,
 * timed out, or in a state the backend does not know) are not listed. */
enum hn_sched_job_state {
    HN_SCHED_JOB_RUNNING,   /* running on its nodes */
    HN_SCHED_JOB_SUSPENDED, /* suspended or stopped: it goes on where it was */
    HN_SCHED_JOB_QUEUED,    /* pending, requeued, being set up: its next run starts over */
    HN_SCHED_JOB_ENDING,    /* completing, staging out */
};

/* One job of a listing. Borrowed: valid during the sink's call only. */
struct hn_sched_job {
    const char *id; /* the id its ranks report (Slurm: SLURM_JOB_ID; a het job's leader's) */
    int64_t uid;    /* its owner's user id, -1 when the scheduler did not say */
    enum hn_sched_job_state state;
    double time_left; /* seconds before its time limit, -1 when no limit is known */
};

/* What list_jobs hands its jobs to (ctx: the caller's). begin comes once when the listing
 * worked, before its first job (not at all when it failed); then, for each job in the
 * scheduler's order, job, node once for each node a running job runs on (in the scheduler's
 * order; none for a job that is not running), and job_end. */
struct hn_sched_job_sink {
    void (*begin)(void *ctx);
    void (*job)(void *ctx, const struct hn_sched_job *job);
    void (*node)(void *ctx, const struct hn_sched_job *job, const char *node);
    void (*job_end)(void *ctx, const struct hn_sched_job *job);
};

/*
 * A backend. Every function returns 0 or a negative errno and, on failure, leaves a one-line
 * message for last_error(): -ETIMEDOUT (the command hung), -ENOENT (no such node or job, or
 * no scontrol), -EINVAL (a node or job name houston refuses to pass on), -EIO (the command
 * failed; the message quotes its output), -ENOTSUP (the backend cannot do that).
 */
struct hn_sched_ops {
    const char *name;
    int (*init)(const struct hn_sched_settings *set, void **ctx);
    void (*fini)(void *ctx);
    /* Drains one node with reason (prefixed with "houston: " when it lacks the prefix). */
    int (*drain)(void *ctx, const char *node, const char *reason);
    int (*resume)(void *ctx, const char *node);
    int (*node_info)(void *ctx, const char *node, struct hn_sched_node *out);
    /* Requeues one job (it ends on its nodes and goes back to the queue). */
    int (*requeue)(void *ctx, const char *jobid);
    /* Lists every job that is not over through sink (struct hn_sched_job_sink). Returns 0, or
     * a negative errno before calling sink at all, with last_error() the reason alone ("timed
     * out", "exit status 1: ..."; the caller names the program): -ENOTSUP (this backend cannot
     * list jobs), -EFBIG (more output than the listing may hold), -EIO (non-zero exit). */
    int (*list_jobs)(void *ctx, const struct hn_sched_job_sink *sink, void *sink_ctx);
    /* Whether job (an id as list_jobs gives it) runs, or is being set up, on node: 1 yes, 0
     * no (the scheduler no longer lists it there), or a negative errno when the scheduler
     * cannot tell (-ENOTSUP: this backend cannot). Asked before a requeue: requeueing a job
     * that ended would run it again. */
    int (*job_on_node)(void *ctx, const char *job, const char *node);
    /* The message of the last failure in this context ("" before any). Borrowed. */
    const char *(*last_error)(void *ctx);
};

/* A backend opened by hn_sched_init(): call through s.ops with s.ctx. */
struct hn_sched {
    const struct hn_sched_ops *ops;
    void *ctx;
};

extern const struct hn_sched_ops hn_sched_slurm_ops;
extern const struct hn_sched_ops hn_sched_dryrun_ops;

/* The backend table (registry.c). The backend called name ("slurm", "dry-run"), or NULL. */
const struct hn_sched_ops *hn_sched_lookup(const char *name);
/* Names of all backends, for help texts: "slurm, dry-run". */
const char *hn_sched_names(void);

void hn_sched_settings_default(struct hn_sched_settings *set);

/* Opens backend name with set (NULL: defaults). -ENOENT for an unknown backend. */
int hn_sched_init(struct hn_sched *s, const char *name, const struct hn_sched_settings *set);
void hn_sched_fini(struct hn_sched *s);

/* 1 when n is drained or draining and its reason starts with "houston:", else 0. */
int hn_sched_drained_by_houston(const struct hn_sched_node *n);

/*
 * Helpers shared by the backends (and their tests), in sched.c.
 *
 * hn_sched_valid_node/jobid: 1 when the name is safe to hand to the scheduler as one node or
 * one job: node names are 1-63 characters of [A-Za-z0-9._-] (no hostlist ranges, commas,
 * '=' or spaces, not "ALL", so one call never touches more than one node); job ids are digits with
 * an optional array index or het component (1234, 1234_7, 1234+1).
 *
 * hn_sched_reason_format writes the reason houston hands to the scheduler: the prefix, then
 * reason with control characters replaced by spaces and blanks trimmed, cut to fit size.
 * Returns 0, or -EINVAL for an empty reason.
 */
int hn_sched_valid_node(const char *node);
int hn_sched_valid_jobid(const char *jobid);
int hn_sched_reason_format(char *out, size_t size, const char *reason);

/* ---- the Slurm backend's parsers (slurm_parse.c), exported for tests and fuzzing ---- */

/*
 * Parses `scontrol show node` output (one or more multi-line records separated by blank
 * lines, or `-o` one-line records) and fills *out from the record whose NodeName is node.
 * State= is one word; Reason= runs to the end of its line and may contain spaces and
 * brackets; a trailing " [user@time]" is split into reason_user and reason_time.
 * Returns 0, -ENOENT when no record names node, -EINVAL when that record has no State=.
 */
int hn_slurm_parse_node(const char *text, const char *node, struct hn_sched_node *out);

/*
 * Parses the job listing list_jobs asks squeue for: one "JOBID JOBID_OR_HET UID STATE
 * TIME_LEFT NODELIST" per line (squeue -o "%A %i %U %t %L %N"; STATE squeue's compact code,
 * NODELIST a host list, empty while pending). Calls sink's job, node and job_end (not begin)
 * for each job that is not over, in the lines' order; a heterogeneous job's component
 * ("LEADER+OFFSET" in %i) is given as its leader, and lines that are not squeue's are
 * skipped. text is cut into fields in place.
 */
void hn_slurm_parse_jobs(char *text, const struct hn_sched_job_sink *sink, void *ctx);

/* Whether `squeue -h -j JOB -o "%T %N"` output (text, cut into lines in place) shows the job
 * RUNNING or CONFIGURING on node: 1 or 0. */
int hn_slurm_parse_job_on_node(char *text, const char *node);

/* A job's time left as squeue's %L prints it ("59:58", "1:59:58", "2-00:00:00", "3-4" and the
 * like: [days-]hours:minutes:seconds with the leading parts left out), in seconds. Returns 0,
 * or -1 for "UNLIMITED", "NOT_SET", "INVALID" and anything else (no limit known). */
int hn_slurm_parse_time_left(const char *text, double *seconds);

/* The dry-run backend's record of calls, for tests. op is "drain", "resume", "node_info" or
 * "requeue"; target the node or job; arg the formatted reason or "". Borrowed pointers. */
struct hn_sched_call {
    char op[16];
    char target[64];
    char arg[256];
};
size_t hn_sched_dryrun_ncalls(void *ctx);
const struct hn_sched_call *hn_sched_dryrun_call(void *ctx, size_t i);

/* A job the dry-run backend lists, for tests: nodes is a comma-separated list of names. */
struct hn_sched_dryrun_job {
    char id[64];
    int64_t uid;
    enum hn_sched_job_state state;
    double time_left;
    char nodes[256];
};
/* What the dry-run backend's list_jobs answers from now on: the n jobs (copied; at most 64),
 * none when n is 0. Its job_on_node then answers from them, and node_info says a node a
 * running job lists is allocated. With jobs NULL it cannot list jobs again (-ENOTSUP), as
 * before the first call. Returns 0, or -E2BIG for more than 64 jobs. */
int hn_sched_dryrun_set_jobs(void *ctx, const struct hn_sched_dryrun_job *jobs, size_t n);

#endif
