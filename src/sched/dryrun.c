/*
 * dryrun.c - the "dry-run" scheduler backend: logs what it would do and changes nothing.
 *
 * Useful to try houston's drain policy on a live cluster without touching it, and in tests:
 * every call is recorded (hn_sched_dryrun_ncalls/call in sched.h), and node_info answers from
 * the drains and resumes this context has seen, so a check that drains and then asks again
 * sees its own drain. Validation is the same as the Slurm backend's (node and job names,
 * reason prefix), so a bad name fails here exactly as it would for real.
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

struct dryrun {
    struct hn_sched_call calls[MAX_CALLS]; /* the first MAX_CALLS calls */
    size_t ncalls;
    struct {
        char node[64];
        char reason[256];
    } drained[MAX_NODES];
    size_t ndrained;
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
    int i = find_drained(d, node);
    if (i >= 0) {
        hn_strlcpy(out->state, "IDLE+DRAIN", sizeof(out->state));
        out->drain = 1;
        hn_strlcpy(out->reason, d->drained[i].reason, sizeof(out->reason));
        hn_strlcpy(out->reason_user, "dry-run", sizeof(out->reason_user));
    } else {
        hn_strlcpy(out->state, "IDLE", sizeof(out->state));
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

const struct hn_sched_ops hn_sched_dryrun_ops = {
    .name = "dry-run",
    .init = dryrun_init,
    .fini = dryrun_fini,
    .drain = dryrun_drain,
    .resume = dryrun_resume,
    .node_info = dryrun_node_info,
    .requeue = dryrun_requeue,
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
