/*
 * slurm_parse.c - the Slurm backend's readers of what scontrol and squeue print (see sched.h):
 * `scontrol show node` records, squeue's job listing and its time-left text. Pure functions
 * of their text, so that tests and the fuzz targets drive them without a Slurm; slurm.c runs
 * the commands.
 */
#include "sched/hostlist.h"
#include "sched/sched.h"

#include "common/util.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* Sets drain, responding and allocated from a state such as "IDLE+DRAIN", "DOWN*+DRAIN" or
 * "MIXED+DRAIN". */
static void parse_state(struct hn_sched_node *out)
{
    const char *p = out->state;
    /* Jobs still hold a node that is ALLOCATED or MIXED, or COMPLETING the last ones. */
    out->allocated = strstr(p, "ALLOC") || strstr(p, "MIX") || strstr(p, "COMPLETING");
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

/* ---- squeue's job listing ---- */

/* The line at *cur, NUL-terminated in place, with *cur moved past it; NULL at the end. */
static char *take_line(char **cur)
{
    char *line = *cur;
    if (!*line)
        return NULL;
    char *nl = strchr(line, '\n');
    if (nl) {
        *nl = '\0';
        *cur = nl + 1;
    } else {
        *cur = line + strlen(line);
    }
    return line;
}

/* A job's state from squeue's compact %t code (squeue(1), "JOB STATE CODES"): running (R);
 * suspended (S, ST; RS, resizing, goes on as it was), queued to start over (PD, CF, RQ, RH,
 * RF, SE) or ending (CG, SI, SO). Anything else (completed, cancelled, failed, timed out, a
 * code this list does not know) is over: -1. */
static int job_state(const char *t, enum hn_sched_job_state *state)
{
    static const struct {
        const char *code;
        enum hn_sched_job_state state;
    } codes[] = {
        {"R", HN_SCHED_JOB_RUNNING},    {"S", HN_SCHED_JOB_SUSPENDED},
        {"ST", HN_SCHED_JOB_SUSPENDED}, {"RS", HN_SCHED_JOB_SUSPENDED},
        {"PD", HN_SCHED_JOB_QUEUED},    {"CF", HN_SCHED_JOB_QUEUED},
        {"RQ", HN_SCHED_JOB_QUEUED},    {"RH", HN_SCHED_JOB_QUEUED},
        {"RF", HN_SCHED_JOB_QUEUED},    {"SE", HN_SCHED_JOB_QUEUED},
        {"CG", HN_SCHED_JOB_ENDING},    {"SI", HN_SCHED_JOB_ENDING},
        {"SO", HN_SCHED_JOB_ENDING},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(codes); i++) {
        if (strcmp(t, codes[i].code) == 0) {
            *state = codes[i].state;
            return 0;
        }
    }
    return -1;
}

/* One node of a running job's host list, handed to the sink. */
struct job_nodes {
    const struct hn_sched_job_sink *sink;
    void *ctx;
    const struct hn_sched_job *job;
};

static int job_node(void *ctx, const char *name)
{
    struct job_nodes *n = ctx;
    n->sink->node(n->ctx, n->job, name);
    return 0;
}

void hn_slurm_parse_jobs(char *text, const struct hn_sched_job_sink *sink, void *ctx)
{
    /* One "JOBID JOBID_OR_HET UID STATE TIME_LEFT NODELIST" per line; NODELIST, the rest of
     * the line, is empty while a job is pending. A node may run several jobs. */
    char *cur = text, *line;
    while ((line = take_line(&cur))) {
        char *f[6] = {line, NULL, NULL, NULL, NULL, NULL};
        for (int k = 1; k < 6 && f[k - 1]; k++) {
            f[k] = strchr(f[k - 1], ' ');
            if (f[k])
                *f[k]++ = '\0';
        }
        struct hn_sched_job job;
        if (!f[3] || job_state(f[3], &job.state) != 0 || !f[4] ||
            (job.state == HN_SCHED_JOB_RUNNING && !f[5]))
            continue; /* over, or not squeue's line */
        /* The id a job's ranks see as SLURM_JOB_ID, which is the id they report and the one
         * `scontrol requeue` takes: %A for an array task (its own id; %i prints BASE_INDEX),
         * but for a component of a heterogeneous job the leader's, the part of %i before '+'
         * (%i prints LEADER+OFFSET, %A the component's own id; Slurm refuses to requeue a
         * component that is not the leader). */
        char *plus = strchr(f[1], '+');
        job.id = f[0];
        if (plus) {
            *plus = '\0';
            job.id = f[1];
        }
        uint64_t uid;
        job.uid = hn_parse_u64(f[2], 10, &uid) == 0 && uid <= UINT32_MAX ? (int64_t)uid : -1;
        if (hn_slurm_parse_time_left(f[4], &job.time_left) != 0)
            job.time_left = -1; /* UNLIMITED, NOT_SET */
        sink->job(ctx, &job);
        if (job.state == HN_SCHED_JOB_RUNNING) {
            struct job_nodes n = {sink, ctx, &job};
            hn_hostlist_expand(f[5], job_node, &n); /* a malformed list: the names before it */
        }
        sink->job_end(ctx, &job);
    }
}

int hn_slurm_parse_job_on_node(char *text, const char *node)
{
    /* One line per job; a heterogeneous job's leader id gives one per component, each on its
     * own nodes. */
    char *cur = text, *line;
    int found = 0;
    while (!found && (line = take_line(&cur))) {
        char *sp = strchr(line, ' ');
        if (sp && (strncmp(line, "RUNNING", 7) == 0 || strncmp(line, "CONFIGURING", 11) == 0))
            found = hn_hostlist_contains(sp + 1, node);
    }
    return found;
}
