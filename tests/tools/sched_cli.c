/*
 * sched_cli.c - hn_sched_cli, a test driver for the scheduler backends (src/sched).
 *
 * Lets integration tests exercise a backend end to end against a real scheduler before the
 * houston verbs that use it exist:
 *
 *   hn_sched_cli [-b BACKEND] [-s SCONTROL] [-t TIMEOUT_MS] drain NODE REASON
 *   hn_sched_cli ... resume NODE | show NODE | requeue JOBID
 *
 * `show` prints the parsed node as key=value lines (node, state, drain, responding, reason,
 * reason_user, reason_time, drained_by_houston). Exit status: 0 done, 1 the backend failed
 * (its message on stderr), 2 usage. Not installed; built by tests/CMakeLists.txt.
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
            "usage: hn_sched_cli [-b BACKEND] [-s SCONTROL] [-t TIMEOUT_MS] "
            "drain NODE REASON | resume NODE | show NODE | requeue JOBID\n"
            "backends: %s\n",
            hn_sched_names());
    return 2;
}

static void print_node(const struct hn_sched_node *n)
{
    printf("node=%s\nstate=%s\ndrain=%d\nresponding=%d\nreason=%s\nreason_user=%s\n"
           "reason_time=%s\ndrained_by_houston=%d\n",
           n->name, n->state, n->drain, n->responding, n->reason, n->reason_user, n->reason_time,
           hn_sched_drained_by_houston(n));
}

int main(int argc, char **argv)
{
    struct hn_sched_settings set;
    const char *backend = "slurm";
    int64_t timeout;
    int opt;

    hn_sched_settings_default(&set);
    while ((opt = getopt(argc, argv, "b:s:t:")) != -1) {
        switch (opt) {
        case 'b':
            backend = optarg;
            break;
        case 's':
            hn_strlcpy(set.scontrol, optarg, sizeof(set.scontrol));
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
    if (argc < 2)
        return usage();

    const char *verb = argv[0];
    if ((strcmp(verb, "drain") == 0 && argc != 3) || (strcmp(verb, "drain") != 0 && argc != 2))
        return usage();

    struct hn_sched s;
    int rc = hn_sched_init(&s, backend, &set);
    if (rc < 0) {
        fprintf(stderr, "hn_sched_cli: cannot open backend '%s' (%s)\n", backend,
                rc == -ENOENT ? hn_sched_names() : strerror(-rc));
        return 2;
    }

    struct hn_sched_node node;
    if (strcmp(verb, "drain") == 0) {
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
        fprintf(stderr, "hn_sched_cli: %s %s: %s\n", verb, argv[1], s.ops->last_error(s.ctx));
    hn_sched_fini(&s);
    return rc < 0 ? 1 : 0;
}
