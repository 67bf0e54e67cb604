/*
 * sched_cli.c - hn_sched_cli, a test driver for the scheduler backends (src/sched).
 *
 * Lets integration tests exercise a backend end to end against a real scheduler before the
 * houston verbs that use it exist:
 *
 *   hn_sched_cli [-b BACKEND] [-s SCONTROL] [-q SQUEUE] [-t TIMEOUT_MS] drain NODE REASON
 *   hn_sched_cli ... resume NODE | show NODE | requeue JOBID | jobs | on JOBID NODE
 *
 * `show` prints the parsed node as key=value lines (node, state, drain, responding, allocated,
 * reason, reason_user, reason_time, drained_by_houston). `jobs` prints the backend's listing
 * (list_jobs), one job a line: "ID UID STATE TIME_LEFT NODES" (STATE running, suspended,
 * queued or ending; TIME_LEFT whole seconds or -1; NODES comma-separated, "-" for none). `on`
 * prints job_on_node's answer, 1 or 0. Exit status: 0 done, 1 the backend failed (its message
 * on stderr), 2 usage. Not installed; built by tests/CMakeLists.txt.
 */
#include "common/util.h"
#include "sched/sched.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int usage(void)
{
    fprintf(stderr,
            "usage: hn_sched_cli [-b BACKEND] [-s SCONTROL] [-q SQUEUE] [-t TIMEOUT_MS] "
            "drain NODE REASON | resume NODE | show NODE | requeue JOBID | jobs | on JOBID NODE\n"
            "backends: %s\n",
            hn_sched_names());
    return 2;
}

static void print_node(const struct hn_sched_node *n)
{
    printf("node=%s\nstate=%s\ndrain=%d\nresponding=%d\nallocated=%d\nreason=%s\n"
           "reason_user=%s\nreason_time=%s\ndrained_by_houston=%d\n",
           n->name, n->state, n->drain, n->responding, n->allocated, n->reason, n->reason_user,
           n->reason_time, hn_sched_drained_by_houston(n));
}

/* `jobs`: each job's line is printed at job_end, its nodes gathered in between. */
static const char *const state_names[] = {
    [HN_SCHED_JOB_RUNNING] = "running",
    [HN_SCHED_JOB_SUSPENDED] = "suspended",
    [HN_SCHED_JOB_QUEUED] = "queued",
    [HN_SCHED_JOB_ENDING] = "ending",
};

struct listing {
    char nodes[4096];
    size_t len;
};

static void list_begin(void *ctx)
{
    (void)ctx;
}

static void list_job(void *ctx, const struct hn_sched_job *job)
{
    struct listing *l = ctx;
    (void)job;
    l->len = 0;
    l->nodes[0] = '\0';
}

static void list_node(void *ctx, const struct hn_sched_job *job, const char *node)
{
    struct listing *l = ctx;
    (void)job;
    if (l->len < sizeof(l->nodes))
        l->len += (size_t)snprintf(l->nodes + l->len, sizeof(l->nodes) - l->len, "%s%s",
                                   l->len ? "," : "", node);
}

static void list_job_end(void *ctx, const struct hn_sched_job *job)
{
    struct listing *l = ctx;
    printf("%s %lld %s %.0f %s\n", job->id, (long long)job->uid, state_names[job->state],
           job->time_left, l->len ? l->nodes : "-");
}

static const struct hn_sched_job_sink list_sink = {
    .begin = list_begin,
    .job = list_job,
    .node = list_node,
    .job_end = list_job_end,
};

int main(int argc, char **argv)
{
    struct hn_sched_settings set;
    const char *backend = "slurm";
    int64_t timeout;
    int opt;

    hn_sched_settings_default(&set);
    while ((opt = getopt(argc, argv, "b:s:q:t:")) != -1) {
        switch (opt) {
        case 'b':
            backend = optarg;
            break;
        case 's':
            hn_strlcpy(set.scontrol, optarg, sizeof(set.scontrol));
            break;
        case 'q':
            hn_strlcpy(set.squeue, optarg, sizeof(set.squeue));
            break;
        case 't':
            if (hn_parse_i64(optarg, 10, &timeout) < 0 || timeout <= 0 || timeout > 3600000)
                return usage();
            set.timeout_ms = (int)timeout;
            break;
        default:
            return usage();
        }
    }
    argc -= optind;
    argv += optind;
    if (argc < 1)
        return usage();

    const char *verb = argv[0];
    int want = strcmp(verb, "jobs") == 0                               ? 1
               : strcmp(verb, "drain") == 0 || strcmp(verb, "on") == 0 ? 3
                                                                       : 2;
    if (argc != want)
        return usage();

    struct hn_sched s;
    int rc = hn_sched_init(&s, backend, &set);
    if (rc < 0) {
        fprintf(stderr, "hn_sched_cli: cannot open backend '%s' (%s)\n", backend,
                rc == -ENOENT ? hn_sched_names() : strerror(-rc));
        return 2;
    }

    struct hn_sched_node node;
    struct listing listing = {.len = 0};
    if (strcmp(verb, "jobs") == 0) {
        rc = s.ops->list_jobs(s.ctx, &list_sink, &listing);
    } else if (strcmp(verb, "on") == 0) {
        rc = s.ops->job_on_node(s.ctx, argv[1], argv[2]);
        if (rc >= 0)
            printf("%d\n", rc);
    } else if (strcmp(verb, "drain") == 0) {
        rc = s.ops->drain(s.ctx, argv[1], argv[2]);
    } else if (strcmp(verb, "resume") == 0) {
        rc = s.ops->resume(s.ctx, argv[1]);
    } else if (strcmp(verb, "requeue") == 0) {
        rc = s.ops->requeue(s.ctx, argv[1]);
    } else if (strcmp(verb, "show") == 0) {
        rc = s.ops->node_info(s.ctx, argv[1], &node);
        if (rc == 0)
            print_node(&node);
    } else {
        hn_sched_fini(&s);
        return usage();
    }
    if (rc < 0)
        fprintf(stderr, "hn_sched_cli: %s %s: %s\n", verb, argc > 1 ? argv[1] : "",
                s.ops->last_error(s.ctx));
    hn_sched_fini(&s);
    return rc < 0 ? 1 : 0;
}
