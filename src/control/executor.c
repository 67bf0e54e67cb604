/*
 * executor.c - the controller's executor thread: carries out the actions the brain journalled
 * (drain, resume, requeue) through the scheduler backend, outside the controller's lock, and
 * records each result under it; failed actions are retried with back-off, and actions on one
 * node run in order. Between batches it runs the scheduler poll (hn_control_poll) every
 * scheduler-poll seconds. Started and stopped by hn_control_executor_start/stop (control.h).
 */
#include "control/control.h"

#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_BATCH    1024
#define MAX_ATTEMPTS 5

struct batch {
    struct hn_action *a;
    size_t n;
};

static int collect_pending(void *ctx, const struct hn_action *a, double time)
{
    struct batch *b = ctx;
    (void)time;
    if (b->n == MAX_BATCH)
        return 1;
    b->a[b->n++] = *a;
    return 0;
}

/* Retry state of actions that failed; small, since failures are rare and bounded. */
struct retry {
    uint64_t id;
    int attempts;
    double next;
};

static struct retry *retry_find(struct retry *r, size_t n, uint64_t id)
{
    for (size_t i = 0; i < n; i++) {
        if (r[i].id == id)
            return &r[i];
    }
    return NULL;
}

/*
 * Runs one action. Returns 0 done, 1 nothing to do (skipped, with the reason in result), -1
 * failed (retry), -2 failed for good. Actions that Slurm already reflects are not repeated:
 * after a crash between running an action and marking it done, the restart finds it pending
 * and sees it has happened. A drain or resume never touches a drain someone else set.
 */
static int execute(struct hn_control *c, const struct hn_action *a, char *result, size_t size)
{
    const struct hn_sched_ops *ops = c->sched.ops;
    void *ctx = c->sched.ctx;
    struct hn_sched_node node;
    int rc;
    switch (a->kind) {
    case HN_ACT_DRAIN:
        if (ops->node_info(ctx, a->node, &node) == 0 && node.drain) {
            snprintf(result, size, "%s: %s",
                     hn_sched_drained_by_houston(&node) ? "already drained"
                                                        : "already drained by someone else",
                     node.reason);
            return 1;
        }
        rc = ops->drain(ctx, a->node, a->reason);
        break;
    case HN_ACT_RESUME:
        if (ops->node_info(ctx, a->node, &node) == 0 && !hn_sched_drained_by_houston(&node)) {
            snprintf(result, size, "%s",
                     node.drain ? "drained by someone else; left alone" : "not drained");
            return 1;
        }
        rc = ops->resume(ctx, a->node);
        break;
    case HN_ACT_REQUEUE:
        /* A job id from the last scheduler poll may be stale: requeueing a finished batch
         * job would run it again, and a repeat after a restart would kill its new run. A
         * scheduler that cannot tell (or cannot list jobs at all) does not stop the requeue. */
        if (ops->job_on_node(ctx, a->job, a->node) == 0) {
            snprintf(result, size, "job %s no longer runs on %s", a->job, a->node);
            return 1;
        }
        rc = ops->requeue(ctx, a->job);
        break;
    default:
        return -2;
    }
    if (rc != 0) {
        snprintf(result, size, "%s", ops->last_error(ctx));
        return rc == -EINVAL || rc == -ENOENT ? -2 : -1;
    }
    snprintf(result, size, "%s",
             a->kind == HN_ACT_DRAIN    ? "drained"
             : a->kind == HN_ACT_RESUME ? "resumed"
                                        : "requeued");
    return 0;
}

static void *executor_main(void *arg)
{
    struct hn_control *c = arg;
    double next_poll = 0;
    struct batch b = {xcalloc(MAX_BATCH, sizeof(struct hn_action)), 0};
    struct retry retries[256];
    size_t nretries = 0;
    for (;;) {
        b.n = 0;
        pthread_mutex_lock(&c->lock);
        if (c->stop) {
            pthread_mutex_unlock(&c->lock);
            break;
        }
        hn_store_pending_actions(c->store, collect_pending, &b);
        pthread_mutex_unlock(&c->lock);

        /* Actions on one node run in order: while an earlier one waits for a retry, the
         * later ones wait too (a requeue must not run before its drain). */
        char blocked[64][HN_NAME_MAX];
        size_t nblocked = 0;
        double now = hn_wall_s();
        for (size_t i = 0; i < b.n; i++) {
            const struct hn_action *a = &b.a[i];
            int skip = 0;
            for (size_t k = 0; k < nblocked && !skip; k++)
                skip = strcmp(blocked[k], a->node) == 0;
            struct retry *r = retry_find(retries, nretries, a->id);
            if (!skip && r && now < r->next)
                skip = 1;
            if (skip) {
                if (nblocked < 64)
                    hn_strlcpy(blocked[nblocked++], a->node, HN_NAME_MAX);
                continue;
            }
            char result[512];
            int rc = execute(c, a, result, sizeof(result));
            if (rc == -1 && (!r || r->attempts + 1 < MAX_ATTEMPTS)) {
                if (!r && nretries < HN_ARRAY_LEN(retries)) {
                    r = &retries[nretries++];
                    *r = (struct retry){a->id, 0, 0};
                }
                if (r) {
                    r->attempts++;
                    r->next = now + (double)(1 << r->attempts);
                    if (r->attempts == 1)
                        hn_warn("%s: action %llu failed, retrying with back-off: %s", a->node,
                                (unsigned long long)a->id, result);
                }
                pthread_mutex_lock(&c->lock);
                c->actions_failed++;
                pthread_mutex_unlock(&c->lock);
                if (nblocked < 64)
                    hn_strlcpy(blocked[nblocked++], a->node, HN_NAME_MAX);
                continue;
            }
            if (rc < 0)
                hn_err("%s: action %llu failed for good: %s", a->node, (unsigned long long)a->id,
                       result);
            if (r)
                *r = retries[--nretries];
            pthread_mutex_lock(&c->lock);
            if (hn_store_action_done(c->store, a->id, rc >= 0, result) != 0)
                hn_control_store_failed(c, "marking an action done");
            hn_brain_action_done(c->brain, hn_wall_s(), a, rc >= 0 ? 1 : rc == -1 ? 0 : -1, result);
            if (rc == 0)
                c->actions_ok++;
            else if (rc == 1)
                c->actions_skipped++;
            else
                c->actions_failed++;
            pthread_mutex_unlock(&c->lock);
        }
        now = hn_wall_s();
        if (now >= next_poll) {
            hn_control_poll(c, now);
            next_poll = now + c->cfg.poll_s;
        }
        pthread_mutex_lock(&c->lock);
        if (!c->stop) {
            /* Retries wait up to a second, the next poll no longer than its time (a
             * scheduler-poll under a second is kept); new actions wake the thread at once. */
            double wait = next_poll - hn_wall_s();
            wait = wait > 1 ? 1 : wait < 0.01 ? 0.01 : wait;
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            long long ns = ts.tv_nsec + (long long)(wait * 1e9);
            ts.tv_sec += (time_t)(ns / 1000000000);
            ts.tv_nsec = (long)(ns % 1000000000);
            pthread_cond_timedwait(&c->wake, &c->lock, &ts);
        }
        pthread_mutex_unlock(&c->lock);
    }
    free(b.a);
    return NULL;
}

int hn_control_executor_start(struct hn_control *c)
{
    if (pthread_create(&c->executor, NULL, executor_main, c) != 0)
        return -EAGAIN;
    c->executor_running = 1;
    return 0;
}

void hn_control_executor_stop(struct hn_control *c)
{
    if (!c->executor_running)
        return;
    pthread_mutex_lock(&c->lock);
    c->stop = 1;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->executor, NULL);
    c->executor_running = 0;
}
