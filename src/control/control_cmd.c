/*
 * control_cmd.c - `houston control`: reads the configuration, starts the controller (control.c)
 * with its HTTP server (api.c) and executor thread, ticks it until SIGINT or SIGTERM, and
 * stops it. Exit status: 0 after a signal, 1 when it could not start or stopped after a store
 * failure, 2 for a bad command line or configuration (--check-config: 0 or 1).
 */
#include "control/control.h"

#include "common/buf.h"
#include "common/conf.h"
#include "common/http.h"
#include "common/log.h"
#include "common/opts.h"
#include "common/util.h"
#include "verbs.h"

#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void hn_usage_control(FILE *out)
{
    fprintf(out, "usage: houston control --config FILE [--check-config] [--log-level LEVEL]\n\n"
                 "Runs the cluster's controller: receives the agents' frames on POST /v1/ingest,\n"
                 "decides (rules, laggards, lifecycle, blast-radius guard), drains and requeues\n"
                 "through the scheduler, keeps its state in SQLite, and serves the JSON API\n"
                 "(docs/api.md) and its own /metrics.\n\n"
                 "options:\n"
                 "  --config FILE       settings (docs/operations.md lists every key)\n"
                 "  --check-config      check FILE, print each problem, exit 0 if none, 1 if any\n"
                 "  --log-level LEVEL   error, warn, info or debug (default info)\n"
                 "  -h, --help          show this help\n");
}

struct load_ctx {
    struct hn_control_config *cfg;
    char err[512];
};

static int conf_set(const char *key, const char *value, void *ctx)
{
    struct load_ctx *l = ctx;
    if (strcmp(key, "log-level") == 0) {
        enum hn_log_level lvl;
        if (hn_log_parse_level(value, &lvl) != 0) {
            snprintf(l->err, sizeof(l->err), "log-level: '%s' is not error/warn/info/debug", value);
            return -1;
        }
        hn_log_set_level(lvl);
        return 0;
    }
    return hn_control_config_set(l->cfg, key, value, l->err, sizeof(l->err));
}

static int wait_signal(const sigset_t *set, double seconds)
{
    struct timespec ts;
    ts.tv_sec = (time_t)seconds;
    ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
    int sig = sigtimedwait(set, NULL, &ts);
    return sig > 0 ? sig : 0;
}

int hn_cmd_control(int argc, char **argv)
{
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'},
        {"check-config", no_argument, NULL, 'k'},
        {"log-level", required_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *config = NULL;
    int check = 0, ch, ret = -1;
    struct hn_opts g;
    hn_opts_begin(&g, "control", opts, stderr);
    while (ret < 0 && (ch = hn_opts_next(&g, argc, argv)) != -1) {
        switch (ch) {
        case 'c':
            config = optarg;
            break;
        case 'k':
            check = 1;
            break;
        case 'l': {
            enum hn_log_level lvl;
            if (hn_log_parse_level(optarg, &lvl) != 0) {
                fprintf(stderr,
                        "houston control: --log-level: '%s' is not error, warn, info, "
                        "debug\n",
                        optarg);
                ret = 2;
                break;
            }
            hn_log_set_level(lvl);
            break;
        }
        case 'h':
            hn_usage_control(stdout);
            ret = 0;
            break;
        default: /* '?': hn_opts_next said why */
            ret = 2;
            break;
        }
    }
    hn_opts_end(&g);
    if (ret >= 0)
        return ret;
    if (optind < argc || !config) {
        fprintf(stderr, "houston control: %s\n",
                optind < argc ? "unexpected argument" : "--config FILE is required");
        return 2;
    }
    struct hn_control *c = xcalloc(1, sizeof(*c));
    hn_control_config_defaults(&c->cfg);
    struct load_ctx l = {&c->cfg, ""};
    char err[1024];
    /* The shipped thresholds first; without them the compiled-in defaults (the same values,
     * checked by tests/unit/test_control_config.c) stand. */
    if (hn_control_config_set(&c->cfg, "rules-file", hn_control_rules_default_path(), err,
                              sizeof(err)) != 0)
        hn_warn("control: %s; using the built-in thresholds", err);
    if (hn_conf_load(config, conf_set, &l, err, sizeof(err)) != 0) {
        fprintf(stderr, "houston control: %s%s%s\n", err, l.err[0] ? ": " : "", l.err);
        hn_control_config_fini(&c->cfg);
        free(c);
        return check ? 1 : 2;
    }
    struct hn_buf problems;
    hn_buf_init(&problems, 64u << 10);
    int nproblems = hn_control_config_check(&c->cfg, &problems);
    if (check || nproblems) {
        if (problems.len)
            fprintf(check ? stdout : stderr, "%s", problems.data);
        if (check && !nproblems)
            printf("%s: ok\n", config);
        hn_buf_fini(&problems);
        hn_control_config_fini(&c->cfg);
        free(c);
        return nproblems ? 1 : 0;
    }
    hn_buf_fini(&problems);

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    int rc = 1;
    struct hn_http *http = NULL;
    if (hn_control_init(c, err, sizeof(err)) != 0) {
        hn_err("control: %s", err);
        goto out;
    }
    size_t nroutes;
    const struct hn_http_route *routes = hn_control_routes(c, &nroutes);
    http = hn_http_start(c->cfg.listen, routes, nroutes, c, err, sizeof(err));
    if (!http) {
        hn_err("control: %s", err);
        goto out;
    }
    if (hn_control_executor_start(c) != 0) {
        hn_err("control: cannot start the executor thread");
        goto out;
    }
    pthread_mutex_lock(&c->lock);
    size_t nnodes = hn_brain_node_count(c->brain);
    pthread_mutex_unlock(&c->lock);
    hn_info("control: %zu nodes, serving http://%s (scheduler %s, store %s)", nnodes, c->cfg.listen,
            c->cfg.scheduler, c->cfg.store);
    for (;;) {
        int sig = wait_signal(&set, c->cfg.tick_s);
        if (sig == SIGINT || sig == SIGTERM) {
            hn_info("control: signal %d, exiting", sig);
            break;
        }
        hn_control_tick(c, hn_wall_s());
    }
    pthread_mutex_lock(&c->lock);
    rc = c->fatal ? 1 : 0;
    pthread_mutex_unlock(&c->lock);
out:
    hn_http_stop(http);
    hn_control_executor_stop(c);
    hn_control_fini(c);
    free(c);
    return rc;
}
