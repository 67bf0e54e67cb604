/*
 * demo.c - `houston demo`: the seed scenario in accelerated real time, served by the
 * controller's own API and dashboard.
 *
 * 8 racks of GB200 NVL72 (576 GPUs, 144 nodes of 4) run one 512-GPU job (a Llama 3.1 405B FP8
 * recipe at 40% MFU); 16 nodes are spares. The simulator (sim.h) drives the brain; the brain's
 * outputs are written to an in-memory store so that the API, `houston events` and the
 * dashboard show them; the controller's HTTP routes (control/api.c) serve it all. After
 * --inject-after seconds one GPU is throttled by 30% (a silent laggard): houston finds it,
 * drains its node at the job's next checkpoint, the job continues on a spare, MFU recovers.
 * The terminal shows the timeline and MFU before, during and after.
 */
#include "cli/cli.h"
#include "common/http.h"
#include "common/log.h"
#include "common/opts.h"
#include "common/util.h"
#include "control/control.h"
#include "control/store.h"
#include "control/web.h"
#include "sim/sim.h"
#include "verbs.h"

#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define INJECT_NODE 37 /* the laggard: the job's 38th node, in the middle of rack 3 */

void hn_usage_demo(FILE *out)
{
    fprintf(out,
            "usage: houston demo [options]\n\n"
            "Runs the seed scenario in accelerated real time: 8 racks of GB200 NVL72 (576 GPUs)\n"
            "run one 512-GPU training job; after a while one GPU's clocks are throttled by 30%%\n"
            "(a silent laggard). houston finds it, drains its node at the next checkpoint, the\n"
            "job continues on a spare and MFU recovers. The controller's API and dashboard\n"
            "serve it all on --listen; the terminal prints the timeline and MFU before, during\n"
            "and after. Runs until Ctrl-C or --duration.\n\n"
            "options:\n"
            "  --listen ADDR:PORT     API and dashboard (default 127.0.0.1:8080)\n"
            "  --duration SECONDS     stop after this long (default: until Ctrl-C)\n"
            "  --speed X              simulated seconds per second (default 30)\n"
            "  --inject-after SECONDS when the GPU is throttled (default 30)\n"
            "  --seed S               (default 1)\n"
            "  -h, --help             show this help\n");
}

struct demo {
    struct hn_control c;
    struct hn_sim *sim;
    double t0;    /* wall time of the start */
    double speed; /* simulated seconds per second */
    int store_failed;
    /* what the terminal reports */
    int suspect_seen, drain_seen;
    double mfu_before, mfu_during, mfu_after;
    char laggard[64];
};

/* Every brain output goes to the store (for the API's events and histories). */
static void on_output(void *ctx, const struct hn_out *o)
{
    struct demo *d = ctx;
    d->c.outputs[o->kind]++;
    if (hn_store_append(d->c.store, o) < 0)
        d->store_failed = 1;
    /* The simulated scheduler carries actions out at once. */
    if (o->kind == HN_OUT_ACTION &&
        hn_store_action_done(d->c.store, o->action.id, 1, "done by the simulated scheduler") != 0)
        d->store_failed = 1;
    if (d->laggard[0] && strcmp(o->node, d->laggard) == 0) {
        if (o->kind == HN_OUT_TRANSITION && o->to == HN_NODE_SUSPECT)
            d->suspect_seen = 1;
        if (o->kind == HN_OUT_ACTION && o->action.kind == HN_ACT_DRAIN)
            d->drain_seen = 1;
    }
}

static double job_mfu(struct demo *d)
{
    struct hn_brain *b = hn_sim_brain(d->sim);
    int i = hn_brain_find_job(b, hn_sim_job_id(d->sim));
    struct hn_job_view v;
    if (i < 0 || hn_brain_job_view(b, (size_t)i, &v) != 0)
        return NAN;
    return v.mfu;
}

static void print_new_timeline(struct demo *d, size_t *printed)
{
    const char *const *lines;
    size_t n = hn_sim_timeline(d->sim, &lines);
    for (; *printed < n; (*printed)++) {
        /* "VIRTUAL_S text": shown as the wall second of the demo it happened at. */
        double vt = strtod(lines[*printed], NULL);
        const char *text = strchr(lines[*printed], ' ');
        printf("  [%5.1f s] %s\n", vt / d->speed, text ? text + 1 : lines[*printed]);
    }
    fflush(stdout);
}

static int write_token(const char *path, const char *token)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "%s\n", token);
    return fclose(f);
}

/* Writes prefix and 32 random hex digits (getrandom(2)) to dst. Returns 0, or -1 when the
 * kernel gave no random bytes or dst is too small. */
static int random_token(char *dst, size_t size, const char *prefix)
{
    unsigned char b[16];
    if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
        return -1;
    int n = snprintf(dst, size, "%s", prefix);
    for (size_t i = 0; i < sizeof(b); i++) {
        if (n < 0 || (size_t)n >= size)
            return -1;
        n += snprintf(dst + n, size - (size_t)n, "%02x", b[i]);
    }
    return n >= 0 && (size_t)n < size ? 0 : -1;
}

int hn_cmd_demo(int argc, char **argv)
{
    static const struct option opts[] = {
        {"listen", required_argument, NULL, 'l'},
        {"duration", required_argument, NULL, 'd'},
        {"speed", required_argument, NULL, 's'},
        {"inject-after", required_argument, NULL, 'i'},
        {"seed", required_argument, NULL, 'S'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    char listen[128] = "127.0.0.1:8080";
    double duration = 0, speed = 30, inject_after = 30;
    uint64_t seed = 1;
    int ch, bad = 0;
    struct hn_opts g;
    hn_opts_begin(&g, "demo", opts, stderr);
    while (!bad && (ch = hn_opts_next(&g, argc, argv)) != -1) {
        switch (ch) {
        case 'l':
            bad = hn_strlcpy(listen, optarg, sizeof(listen)) >= sizeof(listen);
            break;
        case 'd':
            bad = hn_parse_double(optarg, &duration) != 0 || !(duration > 0);
            break;
        case 's':
            bad = hn_parse_double(optarg, &speed) != 0 || !(speed >= 1 && speed <= 100000);
            break;
        case 'i':
            bad = hn_parse_double(optarg, &inject_after) != 0 || !(inject_after >= 0);
            break;
        case 'S':
            bad = hn_parse_u64(optarg, 10, &seed) != 0;
            break;
        case 'h':
            hn_usage_demo(stdout);
            bad = -1;
            break;
        default: /* '?': hn_opts_next said why */
            bad = 2;
            break;
        }
        if (bad == 1)
            fprintf(stderr, "houston demo: %s: bad value '%s' (try `houston demo --help`)\n",
                    g.name, optarg);
    }
    hn_opts_end(&g);
    if (bad)
        return bad < 0 ? 0 : 2;
    if (optind < argc) {
        fprintf(stderr, "houston demo: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }

    /* The embedded scenario: scenarios/seed-gb200.conf, faster so it plays in a minute. */
    struct hn_sim_config sc;
    hn_sim_config_default(&sc);
    sc.gpus = 576;
    sc.gpus_per_node = 4;
    sc.nodes_per_rack = 18;
    sc.spares = 16;
    hn_strlcpy(sc.sku, "GB200", sizeof(sc.sku));
    sc.days = 3650;
    sc.node_failure_rate = 0;
    sc.straggler_rate = 0;
    sc.ckpt_interval_s = 300;
    sc.ckpt_write_s = 10;
    sc.restart_overhead_s = 120;
    sc.report_s = 10;
    sc.tick_s = 30;
    sc.seed = seed;
    sc.gpu_samples = 1;
    sc.ranks_per_node = sc.gpus_per_node; /* one rank per GPU: the API's GPU-hours are GPUs' */
    sc.timeline_max = 1000;
    sc.epoch_s = hn_wall_s();

    struct demo *d = xcalloc(1, sizeof(*d));
    d->speed = speed;
    char err[512];
    d->sim = hn_sim_new(&sc, err, sizeof(err));
    if (!d->sim) {
        fprintf(stderr, "houston demo: %s\n", err);
        free(d);
        return 2;
    }
    struct hn_control *c = &d->c;
    hn_control_config_defaults(&c->cfg);
    hn_strlcpy(c->cfg.listen, listen, sizeof(c->cfg.listen));
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->wake, NULL);
    c->brain = hn_sim_brain(d->sim);
    c->store = hn_store_open(":memory:", err, sizeof(err));
    c->skus = hn_sim_skus(d->sim); /* borrowed: the simulator frees it */
    char tokdir[] = "/tmp/houston-demo.XXXXXX", tokpath[64] = "";
    int rc = 2;
    struct hn_http *http = NULL;
    if (!c->store || !mkdtemp(tokdir)) {
        fprintf(stderr, "houston demo: %s\n", err);
        goto out;
    }
    /* Random tokens (getrandom(2)); the operator's is written where the CLI can read it. */
    if (random_token(c->token, sizeof(c->token), "demo-") != 0 ||
        random_token(c->operator_token, sizeof(c->operator_token), "demo-op-") != 0) {
        fprintf(stderr, "houston demo: no random bytes for the tokens\n");
        goto out;
    }
    snprintf(tokpath, sizeof(tokpath), "%s/operator.token", tokdir);
    write_token(tokpath, c->operator_token);
    c->cap_nodes = hn_brain_node_count(c->brain);
    c->nodes = xcalloc(c->cap_nodes, sizeof(*c->nodes));
    hn_sim_set_output_hook(d->sim, on_output, d);

    /* Signals are taken by the loop below: blocked before the HTTP thread starts, so that
     * it inherits the mask. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    size_t nroutes;
    const struct hn_http_route *routes = hn_control_routes(c, &nroutes);
    http = hn_http_start(listen, routes, nroutes, c, err, sizeof(err));
    if (!http) {
        fprintf(stderr, "houston demo: %s\n", err);
        goto out;
    }

    printf("houston demo: 8 racks of GB200 NVL72 (576 GPUs), one 512-GPU job, %gx real time\n"
           "  dashboard and API: http://%s/  (houston jobs, nodes, events with "
           "HOUSTON_SERVER=http://%s)\n"
           "  operator token: %s\n"
           "  a GPU will be throttled by 30%% after %.0f s; Ctrl-C stops the demo\n\n",
           speed, listen, listen, tokpath, inject_after);
    fflush(stdout);
    d->t0 = hn_wall_s();
    size_t printed = 0;
    int injected = 0, recovered = 0, during_taken = 0;
    double drained_at = 0;
    /* MFU "after": the restart, then 30 reports on the spare for the average to settle. */
    double settle = (sc.restart_overhead_s + 30 * sc.report_s) / speed;
    for (;;) {
        struct timespec ts = {0, 100000000L};
        int sig = sigtimedwait(&set, NULL, &ts);
        if (sig == SIGINT || sig == SIGTERM)
            break;
        double el = hn_wall_s() - d->t0;
        pthread_mutex_lock(&c->lock);
        if (hn_store_begin(c->store) != 0)
            d->store_failed = 1;
        if (!injected && el >= inject_after) {
            d->mfu_before = job_mfu(d);
            int node = hn_sim_inject_slowdown(d->sim, INJECT_NODE, 0.3);
            struct hn_node_view v;
            if (node >= 0 && hn_brain_node_view(c->brain, node, &v) == 0)
                hn_strlcpy(d->laggard, v.name, sizeof(d->laggard));
            injected = 1;
        }
        hn_sim_run_until(d->sim, el * speed);
        for (size_t i = 0; i < c->cap_nodes; i++)
            c->nodes[i].last_seen = hn_wall_s(); /* every simulated agent reports */
        if (d->drain_seen && !during_taken) {
            d->mfu_during = job_mfu(d); /* the laggard's whole episode is in the average */
            during_taken = 1;
            drained_at = el;
        }
        if (hn_store_commit(c->store) != 0)
            d->store_failed = 1;
        if (during_taken && !recovered) {
            if (el - drained_at > settle) {
                d->mfu_after = job_mfu(d);
                recovered = 1;
                printf("  [%5.1f s] MFU before %.1f%%, with the laggard %.1f%%, after %.1f%%\n", el,
                       d->mfu_before * 100, d->mfu_during * 100, d->mfu_after * 100);
            }
        }
        pthread_mutex_unlock(&c->lock);
        print_new_timeline(d, &printed);
        if (d->store_failed) {
            fprintf(stderr, "houston demo: the in-memory store failed\n");
            goto out;
        }
        if (duration > 0 && el >= duration)
            break;
    }
    printf("\nhouston demo: done (%s)\n",
           recovered         ? "the laggard was found and replaced; MFU recovered"
           : d->drain_seen   ? "the laggard was drained; the job was restarting"
           : d->suspect_seen ? "the laggard was found; its node was to be drained at the next "
                               "checkpoint"
                             : "stopped before the laggard was found");
    rc = 0;
out:
    hn_http_stop(http);
    hn_store_close(c->store);
    free(c->nodes);
    hn_control_config_fini(&c->cfg);
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->lock);
    hn_sim_free(d->sim);
    if (tokpath[0])
        unlink(tokpath);
    rmdir(tokdir);
    free(d);
    return rc;
}
