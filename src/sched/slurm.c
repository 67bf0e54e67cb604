/*
 * slurm.c - the Slurm backend: scontrol and squeue through hn_spawn_run() (see sched.h for the
 * contract; what they print is read by slurm_parse.c).
 *
 * Each operation is one scontrol command with an argv (no shell, so a reason with spaces or
 * quotes is passed as it is), a deadline and an output cap. scontrol is used rather than
 * libslurm because its text interface is stable across Slurm releases while the library ABI is
 * not, and because a hung controller then costs a killed child process, not a stuck thread.
 *
 * Commands (Slurm 22.05 and later):
 *   scontrol update NodeName=N State=DRAIN Reason=houston: ...
 *   scontrol update NodeName=N State=RESUME
 *   scontrol show node N
 *   scontrol requeue JOBID
 *   squeue -h -t STATES -o "%A %i %U %t %L %N"       (list_jobs: every job not over)
 *   squeue -h -j JOBID -o "%T %N"                     (job_on_node)
 */
#include "sched/sched.h"

#include "common/buf.h"
#include "common/log.h"
#include "common/spawn.h"
#include "common/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Caps on squeue's output: the whole listing (about 400,000 jobs), and one job's lines. */
#define LIST_MAX        ((size_t)16 << 20)
#define JOB_ON_NODE_MAX ((size_t)64 << 10)

/* The states list_jobs asks for (squeue -t): every one that is not over. */
static const char squeue_states[] = "PENDING,RUNNING,SUSPENDED,STOPPED,COMPLETING,CONFIGURING,"
                                    "RESIZING,REQUEUED,REQUEUE_HOLD,REQUEUE_FED,SPECIAL_EXIT,"
                                    "SIGNALING,STAGE_OUT";

struct slurm {
    struct hn_sched_settings set;
    struct hn_buf out; /* last command's output, kept to reuse its allocation */
    char err[512];
};

static void set_error(struct slurm *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void set_error(struct slurm *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof(s->err), fmt, ap);
    va_end(ap);
}

/* Up to size-1 bytes of a command's output on one line: line breaks become " | ", blanks
 * trimmed, for quoting in an error message. */
static void one_line(char *dst, size_t size, const char *text)
{
    size_t o = 0;
    int pending_sep = 0;

    if (size == 0)
        return;
    for (const char *p = text; *p && o + 1 < size; p++) {
        if (*p == '\n' || *p == '\r') {
            pending_sep = o > 0;
            continue;
        }
        if (pending_sep) {
            for (const char *sep = " | "; *sep && o + 1 < size; sep++)
                dst[o++] = *sep;
            pending_sep = 0;
            if (o + 1 >= size)
                break;
        }
        dst[o++] = (*p == '\t') ? ' ' : *p;
    }
    dst[o] = '\0';
    hn_trim(dst);
}

/* True when scontrol's message says the node or job does not exist. */
static int says_not_found(const char *text)
{
    return strstr(text, "not found") || strstr(text, "Invalid node name") ||
           strstr(text, "Invalid job id");
}

/*
 * Runs `scontrol ARGS...` (args NULL-terminated, at most 6). On success the output is in
 * s->out. Errors set s->err, naming the command (args joined for the message only).
 */
static int run_scontrol(struct slurm *s, const char *const args[])
{
    const char *argv[8];
    char cmd[256];
    char said[320];
    size_t n = 0, o;
    int truncated = 0, status = -1;

    argv[n++] = s->set.scontrol;
    o = (size_t)snprintf(cmd, sizeof(cmd), "scontrol");
    for (size_t i = 0; args[i] && n < HN_ARRAY_LEN(argv) - 1; i++) {
        argv[n++] = args[i];
        if (o < sizeof(cmd))
            o += (size_t)snprintf(cmd + o, sizeof(cmd) - o, " %s", args[i]);
    }
    argv[n] = NULL;

    int rc = hn_spawn_run(argv, NULL, s->set.timeout_ms, &s->out, &truncated, &status);
    one_line(said, sizeof(said), s->out.data ? s->out.data : "");
    if (rc == -ETIMEDOUT) {
        set_error(s, "%s: no answer within %d ms, killed%s%s", cmd, s->set.timeout_ms,
                  said[0] ? "; it said: " : "", said);
        return rc;
    }
    if (rc == -ENOENT || rc == -EACCES) {
        set_error(s, "%s: cannot run '%s': %s (install slurm-client or set the scontrol path)", cmd,
                  s->set.scontrol, strerror(-rc));
        return -ENOENT;
    }
    if (rc < 0) {
        set_error(s, "%s: %s", cmd, strerror(-rc));
        return rc;
    }
    if (status != 0) {
        set_error(s, "%s: exit %d%s%s", cmd, status, said[0] ? ": " : "", said);
        return says_not_found(said) ? -ENOENT : -EIO;
    }
    if (truncated)
        hn_debug("%s: output cut at %zu bytes", cmd, s->out.max);
    s->err[0] = '\0';
    return 0;
}

static int slurm_init(const struct hn_sched_settings *set, void **ctx)
{
    if (!set->scontrol[0] || set->timeout_ms <= 0 || set->output_max == 0)
        return -EINVAL;
    struct slurm *s = xcalloc(1, sizeof(*s));
    s->set = *set;
    hn_buf_init(&s->out, set->output_max);
    *ctx = s;
    return 0;
}

static void slurm_fini(void *ctx)
{
    struct slurm *s = ctx;
    if (!s)
        return;
    hn_buf_fini(&s->out);
    free(s);
}

static const char *slurm_last_error(void *ctx)
{
    return ((struct slurm *)ctx)->err;
}

static int check_node(struct slurm *s, const char *node)
{
    if (hn_sched_valid_node(node))
        return 0;
    set_error(s, "refusing node name '%.64s': one node, letters, digits and ._- only",
              node ? node : "(null)");
    return -EINVAL;
}

static int slurm_drain(void *ctx, const char *node, const char *reason)
{
    struct slurm *s = ctx;
    char name_arg[96], reason_text[224], reason_arg[240];

    int rc = check_node(s, node);
    if (rc)
        return rc;
    if (hn_sched_reason_format(reason_text, sizeof(reason_text), reason ? reason : "") < 0) {
        set_error(s, "drain %s: a reason is required", node);
        return -EINVAL;
    }
    snprintf(name_arg, sizeof(name_arg), "NodeName=%s", node);
    snprintf(reason_arg, sizeof(reason_arg), "Reason=%s", reason_text);
    const char *args[] = {"update", name_arg, "State=DRAIN", reason_arg, NULL};
    rc = run_scontrol(s, args);
    if (rc == 0)
        hn_info("slurm: drained %s (%s)", node, reason_text);
    return rc;
}

static int slurm_resume(void *ctx, const char *node)
{
    struct slurm *s = ctx;
    char name_arg[96];

    int rc = check_node(s, node);
    if (rc)
        return rc;
    snprintf(name_arg, sizeof(name_arg), "NodeName=%s", node);
    const char *args[] = {"update", name_arg, "State=RESUME", NULL};
    rc = run_scontrol(s, args);
    if (rc == 0)
        hn_info("slurm: resumed %s", node);
    return rc;
}

static int slurm_node_info(void *ctx, const char *node, struct hn_sched_node *out)
{
    struct slurm *s = ctx;

    int rc = check_node(s, node);
    if (rc)
        return rc;
    const char *args[] = {"show", "node", node, NULL};
    rc = run_scontrol(s, args);
    if (rc)
        return rc;
    rc = hn_slurm_parse_node(s->out.data ? s->out.data : "", node, out);
    if (rc == -ENOENT)
        set_error(s, "scontrol show node %s: no record for %s in its output", node, node);
    else if (rc)
        set_error(s, "scontrol show node %s: no State= in the record", node);
    return rc;
}

static int slurm_requeue(void *ctx, const char *jobid)
{
    struct slurm *s = ctx;

    if (!hn_sched_valid_jobid(jobid)) {
        set_error(s, "refusing job id '%.32s': digits with an optional _N or +N only",
                  jobid ? jobid : "(null)");
        return -EINVAL;
    }
    const char *args[] = {"requeue", jobid, NULL};
    int rc = run_scontrol(s, args);
    if (rc == 0)
        hn_info("slurm: requeued job %s", jobid);
    return rc;
}

/* squeue's listing of every job not over, into sink (hn_slurm_parse_jobs reads it). The
 * failure messages are the reason alone, as the controller's poll logs them after the program's
 * name. */
static int slurm_list_jobs(void *ctx, const struct hn_sched_job_sink *sink, void *sink_ctx)
{
    struct slurm *s = ctx;
    const char *argv[] = {s->set.squeue,       "-h", "-t", squeue_states, "-o",
                          "%A %i %U %t %L %N", NULL};
    struct hn_buf out;
    int truncated = 0, status = 0;

    hn_buf_init(&out, LIST_MAX);
    int rc = hn_spawn_run(argv, NULL, s->set.timeout_ms, &out, &truncated, &status);
    if (rc != 0) {
        set_error(s, "%s", rc == -ETIMEDOUT ? "timed out" : strerror(-rc));
    } else if (truncated) {
        set_error(s, "output over %zu bytes", out.max);
        rc = -EFBIG;
    } else if (status != 0) {
        set_error(s, "exit status %d: %.100s", status, out.data ? out.data : "");
        for (char *q = s->err; *q; q++) {
            if (*q == '\n' || *q == '\r')
                *q = ' ';
        }
        rc = -EIO;
    } else {
        s->err[0] = '\0';
        sink->begin(sink_ctx);
        if (out.data)
            hn_slurm_parse_jobs(out.data, sink, sink_ctx);
    }
    hn_buf_fini(&out);
    return rc;
}

/* squeue -j: a job squeue no longer knows makes it exit non-zero, which is "not there". */
static int slurm_job_on_node(void *ctx, const char *job, const char *node)
{
    struct slurm *s = ctx;
    const char *argv[] = {s->set.squeue, "-h", "-j", job, "-o", "%T %N", NULL};
    struct hn_buf out;
    int truncated = 0, status = 0, found;

    hn_buf_init(&out, JOB_ON_NODE_MAX);
    int rc = hn_spawn_run(argv, NULL, s->set.timeout_ms, &out, &truncated, &status);
    if (rc != 0) {
        set_error(s, "squeue -j %.32s: %s", job, rc == -ETIMEDOUT ? "timed out" : strerror(-rc));
        found = rc;
    } else {
        found = status == 0 && out.data ? hn_slurm_parse_job_on_node(out.data, node) : 0;
    }
    hn_buf_fini(&out);
    return found;
}

const struct hn_sched_ops hn_sched_slurm_ops = {
    .name = "slurm",
    .init = slurm_init,
    .fini = slurm_fini,
    .drain = slurm_drain,
    .resume = slurm_resume,
    .node_info = slurm_node_info,
    .requeue = slurm_requeue,
    .list_jobs = slurm_list_jobs,
    .job_on_node = slurm_job_on_node,
    .last_error = slurm_last_error,
};
