/*
 * dryrun.c - the "dry-run" scheduler backend: logs what it would do and changes nothing.
 *
 * Useful to try houston's drain policy on a live cluster without touching it, and in tests:
 * every call is recorded (hn_sched_dryrun_ncalls/call in sched.h), and node_info answers from
 * the drains and resumes this context has seen, so a check that drains and then asks again
 * sees its own drain. Validation is the same as the Slurm backend's (node and job names,
 * reason prefix), so a bad name fails here exactly as it would for real.
 *
 * It lists no jobs (list_jobs and job_on_node answer -ENOTSUP, so the controller runs no
 * scheduler poll) until a test gives it a listing with hn_sched_dryrun_set_jobs; it then
 * answers from that listing, as a scheduler would.
 */
#include "sched/sched.h"

#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CALLS 256
#define MAX_NODES 64
#define MAX_JOBS  64

struct dryrun {
    struct hn_sched_call calls[MAX_CALLS]; /* the first MAX_CALLS calls */
    size_t ncalls;
    struct {
        char node[64];
        char reason[256];
    } drained[MAX_NODES];
    size_t ndrained;
    int listing; /* hn_sched_dryrun_set_jobs gave it the jobs below */
    struct hn_sched_dryrun_job jobs[MAX_JOBS];
    size_t njobs;
    char err[256];
};

static void record(struct dryrun *d, const char *op, const char *target, const char *arg)
{
    if (d->ncalls >= MAX_CALLS)
        return;
    struct hn_sched_call *c = &d->calls[d->ncalls++];
    hn_strlcpy(c->op, op, sizeof(c->op));
    hn_strlcpy(c->target, target ? target : "", sizeof(c->target));
    hn_strlcpy(c->arg, arg ? arg : "", sizeof(c->arg));
}

static int find_drained(const struct dryrun *d, const char *node)
{
    for (size_t i = 0; i < d->ndrained; i++) {
        if (strcmp(d->drained[i].node, node) == 0)
            return (int)i;
    }
    return -1;
}

static int check_node(struct dryrun *d, const char *node)
{
    if (hn_sched_valid_node(node))
        return 0;
    snprintf(d->err, sizeof(d->err), "refusing node name '%.64s'", node ? node : "(null)");
    return -EINVAL;
}

/* Whether nodes (a comma-separated list) names node. */
static int lists_node(const char *nodes, const char *node)
{
    size_t n = strlen(node);
    for (const char *p = nodes; *p;) {
        size_t len = strcspn(p, ",");
        if (len == n && strncmp(p, node, n) == 0)
            return 1;
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

/* Whether a running job of the listing runs on node (job NULL: any). */
static int runs_on(const struct dryrun *d, const char *job, const char *node)
{
    for (size_t i = 0; i < d->njobs; i++) {
        const struct hn_sched_dryrun_job *j = &d->jobs[i];
        if (j->state == HN_SCHED_JOB_RUNNING && (!job || strcmp(j->id, job) == 0) &&
            lists_node(j->nodes, node))
            return 1;
    }
    return 0;
}

static int dryrun_init(const struct hn_sched_settings *set, void **ctx)
{
    (void)set;
    *ctx = xcalloc(1, sizeof(struct dryrun));
    return 0;
}

static void dryrun_fini(void *ctx)
{
    free(ctx);
}

static const char *dryrun_last_error(void *ctx)
{
    return ((struct dryrun *)ctx)->err;
}

static int dryrun_drain(void *ctx, const char *node, const char *reason)
{
    struct dryrun *d = ctx;
    char text[224];

    int rc = check_node(d, node);
    if (rc)
        return rc;
    if (hn_sched_reason_format(text, sizeof(text), reason ? reason : "") < 0) {
        snprintf(d->err, sizeof(d->err), "drain %s: a reason is required", node);
        return -EINVAL;
    }
    record(d, "drain", node, text);
    hn_info("dry-run: would drain %s (%s)", node, text);
    int i = find_drained(d, node);
    if (i < 0 && d->ndrained < MAX_NODES)
        i = (int)d->ndrained++;
    if (i >= 0) {
        hn_strlcpy(d->drained[i].node, node, sizeof(d->drained[i].node));
        hn_strlcpy(d->drained[i].reason, text, sizeof(d->drained[i].reason));
    }
    return 0;
}

static int dryrun_resume(void *ctx, const char *node)
{
    struct dryrun *d = ctx;

    int rc = check_node(d, node);
    if (rc)
        return rc;
    record(d, "resume", node, NULL);
    hn_info("dry-run: would resume %s", node);
    int i = find_drained(d, node);
    if (i >= 0)
        d->drained[i] = d->drained[--d->ndrained];
    return 0;
}

static int dryrun_node_info(void *ctx, const char *node, struct hn_sched_node *out)
{
    struct dryrun *d = ctx;

    int rc = check_node(d, node);
    if (rc)
        return rc;
    record(d, "node_info", node, NULL);
    memset(out, 0, sizeof(*out));
    hn_strlcpy(out->name, node, sizeof(out->name));
    out->responding = 1;
    out->allocated = runs_on(d, NULL, node);
    int i = find_drained(d, node);
    snprintf(out->state, sizeof(out->state), "%s%s", out->allocated ? "ALLOCATED" : "IDLE",
             i >= 0 ? "+DRAIN" : "");
    if (i >= 0) {
        out->drain = 1;
        hn_strlcpy(out->reason, d->drained[i].reason, sizeof(out->reason));
        hn_strlcpy(out->reason_user, "dry-run", sizeof(out->reason_user));
    }
    return 0;
}

static int dryrun_requeue(void *ctx, const char *jobid)
{
    struct dryrun *d = ctx;

    if (!hn_sched_valid_jobid(jobid)) {
        snprintf(d->err, sizeof(d->err), "refusing job id '%.32s'", jobid ? jobid : "(null)");
        return -EINVAL;
    }
    record(d, "requeue", jobid, NULL);
    hn_info("dry-run: would requeue job %s", jobid);
    return 0;
}

static int no_listing(struct dryrun *d)
{
    snprintf(d->err, sizeof(d->err), "the dry-run backend lists no jobs");
    return -ENOTSUP;
}

static int dryrun_list_jobs(void *ctx, const struct hn_sched_job_sink *sink, void *sink_ctx)
{
    struct dryrun *d = ctx;

    if (!d->listing)
        return no_listing(d);
    sink->begin(sink_ctx);
    for (size_t i = 0; i < d->njobs; i++) {
        const struct hn_sched_dryrun_job *j = &d->jobs[i];
        struct hn_sched_job job = {j->id, j->uid, j->state, j->time_left};
        sink->job(sink_ctx, &job);
        for (const char *p = j->nodes; job.state == HN_SCHED_JOB_RUNNING && *p;) {
            char name[64];
            size_t len = strcspn(p, ",");
            if (len > 0 && len < sizeof(name)) {
                memcpy(name, p, len);
                name[len] = '\0';
                sink->node(sink_ctx, &job, name);
            }
            p += len;
            if (*p == ',')
                p++;
        }
        sink->job_end(sink_ctx, &job);
    }
    return 0;
}

static int dryrun_job_on_node(void *ctx, const char *job, const char *node)
{
    struct dryrun *d = ctx;
    return d->listing ? runs_on(d, job, node) : no_listing(d);
}

const struct hn_sched_ops hn_sched_dryrun_ops = {
    .name = "dry-run",
    .init = dryrun_init,
    .fini = dryrun_fini,
    .drain = dryrun_drain,
    .resume = dryrun_resume,
    .node_info = dryrun_node_info,
    .requeue = dryrun_requeue,
    .list_jobs = dryrun_list_jobs,
    .job_on_node = dryrun_job_on_node,
    .last_error = dryrun_last_error,
};

size_t hn_sched_dryrun_ncalls(void *ctx)
{
    return ((struct dryrun *)ctx)->ncalls;
}

const struct hn_sched_call *hn_sched_dryrun_call(void *ctx, size_t i)
{
    struct dryrun *d = ctx;
    return i < d->ncalls ? &d->calls[i] : NULL;
}

int hn_sched_dryrun_set_jobs(void *ctx, const struct hn_sched_dryrun_job *jobs, size_t n)
{
    struct dryrun *d = ctx;

    if (n > MAX_JOBS)
        return -E2BIG;
    d->listing = jobs != NULL;
    d->njobs = jobs ? n : 0;
    for (size_t i = 0; i < d->njobs; i++) {
        d->jobs[i] = jobs[i];
        d->jobs[i].id[sizeof(d->jobs[i].id) - 1] = '\0';
        d->jobs[i].nodes[sizeof(d->jobs[i].nodes) - 1] = '\0';
    }
    return 0;
}
