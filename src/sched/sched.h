/*
 * sched.h - scheduler backends: drain, resume and inspect nodes, requeue jobs.
 *
 * houston acts on the batch scheduler through one small interface so that the health check
 * (`houston check --drain`) and the controller do not know which scheduler runs the site. A
 * backend is a row in a static table (struct hn_sched_ops): "slurm" drives scontrol through
 * hn_spawn_run() (slurm.c; slurm_parse.c reads its output), "dry-run" only logs what it would
 * do and records the calls, which tests read back (dryrun.c). The table and hn_sched_init()
 * are in registry.c, the helpers the backends share in sched.c. Adding a scheduler is adding
 * a row in registry.c.
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

#define HN_SCHED_REASON_PREFIX "houston:"

/* What a backend needs to run. SLURM_CONF and the like come through the inherited
 * environment. */
struct hn_sched_settings {
    char scontrol[256]; /* program name (looked up in PATH) or path; default "scontrol" */
    int timeout_ms;     /* per command; default 10000 */
    size_t output_max;  /* cap on one command's captured output; default 64 KiB */
};

/* One node as the scheduler reports it. Strings are always NUL-terminated; long values are
 * cut at the field size. */
struct hn_sched_node {
    char name[64];
    char state[128];      /* scheduler's words, e.g. "IDLE+DRAIN", "ALLOCATED+DRAIN" */
    int drain;            /* 1 when the DRAIN flag is set: draining (jobs still run) or drained */
    int responding;       /* 0 when the scheduler flags the node NOT_RESPONDING */
    char reason[256];     /* free text set with the drain/down, "" when none */
    char reason_user[64]; /* who set it, "" when unknown */
    char reason_time[32]; /* when, scheduler's format (Slurm: 2024-05-01T10:00:00), or "" */
};

/*
 * A backend. Every function returns 0 or a negative errno and, on failure, leaves a one-line
 * message for last_error(): -ETIMEDOUT (the command hung), -ENOENT (no such node or job, or
 * no scontrol), -EINVAL (a node or job name houston refuses to pass on), -EIO (the command
 * failed; the message quotes its output).
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

#endif
