/*
 * slurm.c - the Slurm backend: scontrol through hn_spawn_run(), and the parser of
 * `scontrol show node` (see sched.h for the contract).
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

const struct hn_sched_ops hn_sched_slurm_ops = {
    .name = "slurm",
    .init = slurm_init,
    .fini = slurm_fini,
    .drain = slurm_drain,
    .resume = slurm_resume,
    .node_info = slurm_node_info,
    .requeue = slurm_requeue,
    .last_error = slurm_last_error,
};

/* ---- `scontrol show node` parser ---- */

/* Copies the n bytes at src into dst (size bytes), cut to fit, NUL-terminated. */
static void copy_span(char *dst, size_t size, const char *src, size_t n)
{
    if (n >= size)
        n = size - 1;
    memcpy(dst, src, n);
    dst[n] = '\0';
}

/* Splits a trailing " [user@time]" off out->reason into reason_user and reason_time. */
static void split_reason(struct hn_sched_node *out)
{
    char *r = out->reason;
    size_t n = strlen(r);
    if (n < 3 || r[n - 1] != ']')
        return;
    char *open = strrchr(r, '[');
    if (!open || (open != r && open[-1] != ' '))
        return;
    char *at = memchr(open, '@', (size_t)(r + n - open));
    if (!at)
        return;
    copy_span(out->reason_user, sizeof(out->reason_user), open + 1, (size_t)(at - open - 1));
    copy_span(out->reason_time, sizeof(out->reason_time), at + 1, (size_t)(r + n - 1 - at - 1));
    *open = '\0';
    hn_trim(r);
}

/* Sets drain and responding from a state such as "IDLE+DRAIN" or "DOWN*+DRAIN". */
static void parse_state(struct hn_sched_node *out)
{
    const char *p = out->state;
    while (*p) {
        size_t n = strcspn(p, "+");
        if ((n == 5 && strncmp(p, "DRAIN", 5) == 0) || (n == 7 && strncmp(p, "DRAINED", 7) == 0) ||
            (n == 8 && strncmp(p, "DRAINING", 8) == 0))
            out->drain = 1;
        if (n == 14 && strncmp(p, "NOT_RESPONDING", 14) == 0)
            out->responding = 0;
        if (n > 0 && p[n - 1] == '*')
            out->responding = 0;
        p += n;
        if (*p == '+')
            p++;
    }
}

int hn_slurm_parse_node(const char *text, const char *node, struct hn_sched_node *out)
{
    int found = 0, have_state = 0, in_record = 0;

    memset(out, 0, sizeof(*out));
    out->responding = 1;
    for (const char *line = text; *line;) {
        const char *eol = line + strcspn(line, "\n");
        const char *p = line;
        int first = 1;

        while (p < eol) {
            while (p < eol && (*p == ' ' || *p == '\t' || *p == '\r'))
                p++;
            if (p >= eol)
                break;
            const char *tok = p;
            while (p < eol && *p != ' ' && *p != '\t' && *p != '\r')
                p++;
            size_t tlen = (size_t)(p - tok);

            /* A line opening with NodeName= starts a record (either output format). */
            if (first && tlen > 9 && strncmp(tok, "NodeName=", 9) == 0) {
                if (found)
                    goto done;
                in_record = (tlen - 9 == strlen(node) && strncmp(tok + 9, node, tlen - 9) == 0);
                if (in_record) {
                    found = 1;
                    copy_span(out->name, sizeof(out->name), tok + 9, tlen - 9);
                }
            }
            first = 0;
            if (!in_record)
                continue;
            /* The first State= wins: free-text fields later in a record must not override
             * it. */
            if (!have_state && tlen > 6 && strncmp(tok, "State=", 6) == 0) {
                copy_span(out->state, sizeof(out->state), tok + 6, tlen - 6);
                have_state = 1;
            } else if (tlen >= 7 && strncmp(tok, "Reason=", 7) == 0) {
                /* The reason is free text: it runs to the end of the line. */
                const char *end = eol;
                while (end > tok + 7 && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
                    end--;
                copy_span(out->reason, sizeof(out->reason), tok + 7, (size_t)(end - tok - 7));
                p = eol;
            }
        }
        line = *eol ? eol + 1 : eol;
    }
done:
    if (!found)
        return -ENOENT;
    if (!have_state)
        return -EINVAL;
    parse_state(out);
    split_reason(out);
    return 0;
}

/* Up to three ':'-separated numbers of at most 9 digits ([[H:]M:]S after a "D-", or the
 * forms Slurm's time strings take: see hn_slurm_parse_time_left). */
static int clock_parts(const char *p, long v[3], int *n)
{
    *n = 0;
    while (*n < 3) {
        size_t d = strspn(p, "0123456789");
        if (d == 0 || d > 9)
            return -1;
        long x = 0;
        for (size_t i = 0; i < d; i++)
            x = 10 * x + (p[i] - '0');
        v[(*n)++] = x;
        p += d;
        if (*p == '\0')
            return 0;
        if (*p++ != ':')
            return -1;
    }
    return -1;
}

int hn_slurm_parse_time_left(const char *text, double *seconds)
{
    /* Slurm's forms (squeue(1), "-t"/"--time" of sbatch(1)): "M", "M:S", "H:M:S", "D-H",
     * "D-H:M", "D-H:M:S"; squeue's %L prints "M:S", "H:M:S" or "D-H:M:S". */
    const char *dash = strchr(text, '-');
    long days = 0, v[3];
    int n;
    if (dash) {
        size_t d = strspn(text, "0123456789");
        if (d == 0 || d > 6 || text + d != dash)
            return -1;
        days = strtol(text, NULL, 10);
        if (clock_parts(dash + 1, v, &n) != 0)
            return -1;
        /* D-H, D-H:M, D-H:M:S */
        double h = (double)v[0], m = n > 1 ? (double)v[1] : 0, s = n > 2 ? (double)v[2] : 0;
        *seconds = (double)days * 86400 + h * 3600 + m * 60 + s;
        return 0;
    }
    if (clock_parts(text, v, &n) != 0)
        return -1;
    /* M, M:S, H:M:S */
    if (n == 1)
        *seconds = (double)v[0] * 60;
    else if (n == 2)
        *seconds = (double)v[0] * 60 + (double)v[1];
    else
        *seconds = (double)v[0] * 3600 + (double)v[1] * 60 + (double)v[2];
    return 0;
}
