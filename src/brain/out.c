/*
 * out.c - the brain's output queue (out.h).
 */
#include "brain/out.h"

#include "brain/fleet.h"

#include "common/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

size_t hb_out_mark(const struct hn_brain *b)
{
    return b->qlen;
}

int hb_requeued_since(const struct hn_brain *b, size_t mark, const char *job)
{
    for (size_t k = mark; k < b->qlen; k++) {
        const struct hn_out *o = &b->outq[b->qhead + k];
        if (o->kind == HN_OUT_ACTION && o->action.kind == HN_ACT_REQUEUE &&
            strcmp(o->action.job, job) == 0)
            return 1;
    }
    return 0;
}

struct hn_out *hb_push_out(struct hn_brain *b, enum hn_out_kind kind, double now,
                           const struct node *n)
{
    if (b->qhead + b->qlen == b->qcap) {
        if (b->qhead > 0) {
            memmove(b->outq, b->outq + b->qhead, b->qlen * sizeof(*b->outq));
            b->qhead = 0;
        } else {
            b->qcap = b->qcap ? b->qcap * 2 : 64;
            b->outq = xrealloc(b->outq, b->qcap * sizeof(*b->outq));
        }
    }
    struct hn_out *o = &b->outq[b->qhead + b->qlen++];
    memset(o, 0, sizeof(*o));
    o->kind = kind;
    o->time = now;
    hn_strlcpy(o->node, n ? n->name : "", sizeof(o->node));
    if (b->about)
        hn_strlcpy(o->job, b->about, sizeof(o->job));
    return o;
}

void hb_push_finding(struct hn_brain *b, double now, const struct node *n, const char *job,
                     const struct hn_finding *f)
{
    struct hn_out *o = hb_push_out(b, HN_OUT_FINDING, now, n);
    o->finding = *f;
    if (job)
        hn_strlcpy(o->job, job, sizeof(o->job));
}

const char *hb_about(struct hn_brain *b, const char *job)
{
    const char *was = b->about;
    b->about = job;
    return was;
}

int hn_brain_poll(struct hn_brain *b, struct hn_out *out)
{
    if (b->qlen == 0)
        return 0;
    *out = b->outq[b->qhead++];
    b->qlen--;
    if (b->qlen == 0)
        b->qhead = 0;
    return 1;
}

void hb_finding_set(struct hn_finding *f, const char *rule, enum hn_severity sev, int gpu,
                    const char *evidence, const char *fmt, ...)
{
    memset(f, 0, sizeof(*f));
    hn_strlcpy(f->rule, rule, sizeof(f->rule));
    f->severity = sev;
    f->gpu = gpu;
    hn_strlcpy(f->evidence, evidence ? evidence : "", sizeof(f->evidence));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->detail, sizeof(f->detail), fmt, ap);
    va_end(ap);
}

uint64_t hb_action(struct hn_brain *b, double now, struct node *n, enum hn_action_kind kind,
                   const char *reason)
{
    struct hn_out *o = hb_push_out(b, HN_OUT_ACTION, now, n);
    o->action.id = b->next_action++;
    o->action.kind = kind;
    hn_strlcpy(o->action.node, n->name, sizeof(o->action.node));
    if (reason)
        snprintf(o->action.reason, sizeof(o->action.reason), "houston: %s", reason);
    return o->action.id;
}

uint64_t hb_requeue(struct hn_brain *b, double now, struct node *n, const char *job)
{
    struct hn_out *o = hb_push_out(b, HN_OUT_ACTION, now, n);
    o->action.id = b->next_action++;
    o->action.kind = HN_ACT_REQUEUE;
    hn_strlcpy(o->action.node, n->name, sizeof(o->action.node));
    hn_strlcpy(o->action.job, job, sizeof(o->action.job));
    hn_strlcpy(o->job, job, sizeof(o->job));
    return o->action.id;
}
