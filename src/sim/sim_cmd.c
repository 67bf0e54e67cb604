/* sim_cmd.c - `houston sim`: run the fleet simulator and print what happened. */
#include "cli/cli.h"
#include "common/conf.h"
#include "common/opts.h"
#include "common/settings.h"
#include "common/util.h"
#include "sim/sim.h"
#include "verbs.h"

#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void hn_usage_sim(FILE *out)
{
    fprintf(
        out,
        "usage: houston sim [--scenario FILE] [options]\n\n"
        "Simulates a GPU fleet running one synchronous training job, with failures drawn\n"
        "from the Llama 3 paper's table of interruptions (data/failures.csv), throttled\n"
        "GPUs and hangs, and drives houston's real brain with it in virtual time\n"
        "(docs/sim.md). Prints ETTR, MFU, effective MFU, GPU-hours lost by cause,\n"
        "interruptions, detection latency and false drains.\n\n"
        "options (also `key = value` lines of a scenario file, without the dashes):\n"
        "  --scenario FILE          read settings from FILE first; flags override it\n"
        "  --gpus N                 GPUs in the fleet, spares included (default 16384)\n"
        "  --gpus-per-node G        8 (HGX) or 4 (GB200 NVL72; racks of 18) (default 8)\n"
        "  --nodes-per-rack N       nodes in a rack (default 18 for 4-GPU nodes, else 1)\n"
        "  --sku NAME               the GPUs' row of data/skus.csv (default H100, GB200 for\n"
        "                           4-GPU nodes)\n"
        "  --spares N               nodes kept out of the job (default 2%% of the nodes)\n"
        "  --days D                 simulated days (default 54)\n"
        "  --node-failure-rate R    interruptions per node-day (default 419/(54*2048),\n"
        "                           the Llama 3 run's)\n"
        "  --failures-file FILE     causes of interruptions (default data/failures.csv)\n"
        "  --ckpt-interval DUR      compute between checkpoints (default 1h)\n"
        "  --ckpt-write DUR         a checkpoint write (default 60s)\n"
        "  --restart-overhead DUR   requeue to first step (default 10m)\n"
        "  --straggler-rate R       slowdown onsets per node-day (default 0.002)\n"
        "  --straggler-slowdown F   a throttled node's slowdown (default 0.3)\n"
        "  --base-mfu F             the job's MFU without faults (default 0.40)\n"
        "  --repair-time DUR        a broken node's repair (default 48h)\n"
        "  --inspect-time DUR       a healthy node drained by mistake comes back (default 4h)\n"
        "  --fallback-detect DUR    operators restart a job houston left down (default 30m)\n"
        "  --policy P               reactive, straggler, predictive or all (default straggler;\n"
        "                           all runs each with the same seed and compares them)\n"
        "  --precursors yes|no      faults may announce themselves by a rising correctable-ECC\n"
        "                           count (default yes)\n"
        "  --seed S                 random seed (default 1); the same seed, the same run\n"
        "  --report DUR             compute between step reports (default 60s)\n"
        "  --tick DUR               brain ticks and scheduler polls (default 5m)\n"
        "  --json                   one JSON object (with --policy all: {\"policies\": {...}})\n"
        "  --timeline               print the timeline of what happened\n"
        "  -h, --help               show this help\n"
        "Durations take s, m, h, d suffixes (30s, 10m, 2h, 1d).\n");
}

static json_t *result_json(const struct hn_sim *s, const struct hn_sim_result *r,
                           const char *policy, const char *const *tl, size_t ntl, double cpu_s)
{
    json_t *lost = json_object();
    for (int c = 0; c < HN_SIM_NCAUSES; c++)
        json_object_set_new(lost, hn_sim_cause_name(c), json_real(r->lost_gpu_h[c]));
    json_t *o = json_pack(
        "{s:s, s:f, s:f, s:f, s:o, s:f, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:f, s:I, s:I}",
        "policy", policy, "ettr", r->ettr, "mfu", r->mfu, "effective_mfu", r->effective_mfu,
        "lost_gpu_hours", lost, "job_gpu_hours", r->job_gpu_h, "interruptions",
        (int)r->interruptions, "failures", (int)r->failures, "job_failures", (int)r->job_failures,
        "stragglers", (int)r->stragglers, "detected", (int)r->detected, "drains", (int)r->drains,
        "false_drains", (int)r->false_drains, "predicted", (int)r->predicted, "simulated_days",
        r->wall_s / 86400, "events", (json_int_t)r->events, "step_reports",
        (json_int_t)r->step_reports);
    json_object_set_new(
        o, "detection_latency_s",
        json_pack("{s:o, s:o}", "median",
                  isfinite(r->detect_median_s) ? json_real(r->detect_median_s) : json_null(), "p95",
                  isfinite(r->detect_p95_s) ? json_real(r->detect_p95_s) : json_null()));
    json_object_set_new(o, "brain_ettr",
                        isfinite(r->brain_ettr) ? json_real(r->brain_ettr) : json_null());
    json_object_set_new(o, "cpu_seconds", json_real(cpu_s));
    json_t *arr = json_array();
    for (size_t i = 0; i < ntl; i++)
        json_array_append_new(arr, json_string(tl[i]));
    json_object_set_new(o, "timeline", arr);
    /* Per fault: what the brain found and how long it took (at most 1,000). */
    const struct hn_sim_detection *d;
    size_t nd = hn_sim_detections(s, &d);
    json_t *det = json_array();
    for (size_t i = 0; i < nd && i < 1000; i++)
        json_array_append_new(det,
                              json_pack("{s:f, s:i, s:s, s:f}", "time_s", d[i].time_s, "node",
                                        d[i].node, "kind", d[i].kind, "latency_s", d[i].latency_s));
    json_object_set_new(o, "detections", det);
    return o;
}

static void print_human(const struct hn_sim_result *r, const char *policy, double cpu_s)
{
    printf("policy %s: %.1f simulated days, %llu events, %.1f s of CPU\n", policy,
           r->wall_s / 86400, (unsigned long long)r->events, cpu_s);
    printf("  ETTR %.1f%%  MFU %.1f%%  effective MFU %.1f%%  (the brain's ledger: ETTR %.1f%%)\n",
           r->ettr * 100, r->mfu * 100, r->effective_mfu * 100, r->brain_ettr * 100);
    printf("  %u faults (%u on the job's nodes), %u slowdowns; %u interruptions; %u drains, "
           "%u false; %u failures avoided\n",
           r->failures, r->job_failures, r->stragglers, r->interruptions, r->drains,
           r->false_drains, r->predicted);
    printf("  detection: %u found, latency median %.0f s, p95 %.0f s\n", r->detected,
           r->detect_median_s, r->detect_p95_s);
    printf("  GPU-hours lost (of %.0f):", r->job_gpu_h);
    for (int c = 0; c < HN_SIM_NCAUSES; c++)
        printf(" %s %.0f%s", hn_sim_cause_name(c), r->lost_gpu_h[c],
               c + 1 < HN_SIM_NCAUSES ? "," : "\n");
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A duration with an s, m, h or d suffix (cli/cli.h), in seconds. */
static int set_duration(const struct hn_setting *row, void *obj, const char *key, const char *value,
                        char *err, size_t errsize)
{
    (void)key, (void)err, (void)errsize;
    double s;
    if (hn_cli_parse_duration(value, &s) != 0)
        return -1; /* the table's "KEY: bad value 'VALUE'" */
    memcpy((char *)obj + row->offset, &s, sizeof(s));
    return 0;
}

#define CFG(field)  offsetof(struct hn_sim_config, field)
#define SIZE(field) sizeof(((struct hn_sim_config *)NULL)->field)
#define COUNT(key, field, low, high)                                                               \
    {                                                                                              \
        key, HN_SET_COUNT, CFG(field), .lo = (low), .hi = (high)                                   \
    }
#define REAL(key, field, low, high)                                                                \
    {                                                                                              \
        key, HN_SET_DOUBLE, CFG(field), .lo = (low), .hi = (high)                                  \
    }
#define DURATION(key, field)                                                                       \
    {                                                                                              \
        key, HN_SET_CUSTOM, CFG(field), .parse = set_duration                                      \
    }

_Static_assert(sizeof(enum hn_sim_policy) == sizeof(int), "policy is set as an int");

/* The scenario keys, in the order of --help; each is also a flag. */
static const struct hn_setting sim_rows[] = {
    COUNT("gpus", gpus, 1, 10000000),
    COUNT("gpus-per-node", gpus_per_node, 1, 64),
    COUNT("nodes-per-rack", nodes_per_rack, 1, 4096),
    COUNT("spares", spares, 0, 1000000),
    REAL("days", days, 1e-3, 3650),
    REAL("node-failure-rate", node_failure_rate, 0, 10),
    DURATION("ckpt-interval", ckpt_interval_s),
    DURATION("ckpt-write", ckpt_write_s),
    DURATION("restart-overhead", restart_overhead_s),
    REAL("straggler-rate", straggler_rate, 0, 10),
    REAL("straggler-slowdown", straggler_slowdown, 0.01, 10),
    DURATION("repair-time", repair_s),
    DURATION("inspect-time", inspect_s),
    DURATION("fallback-detect", fallback_detect_s),
    DURATION("report", report_s),
    DURATION("tick", tick_s),
    REAL("base-mfu", base_mfu, 0.001, 1),
    {"seed", HN_SET_U64, CFG(seed), .lo = 0, .hi = (double)UINT64_MAX},
    {"policy", HN_SET_ENUM, CFG(policy), .names = hn_sim_policy_names},
    {"precursors", HN_SET_BOOL, .offset = CFG(precursors)},
    {"sku", HN_SET_STRING, CFG(sku), .size = SIZE(sku)},
    {"failures-file", HN_SET_STRING, CFG(failures_file), .size = SIZE(failures_file)},
};

static const struct hn_settings sim_settings = {sim_rows, HN_ARRAY_LEN(sim_rows),
                                                HN_SETTINGS_TERSE};

int hn_sim_config_set(struct hn_sim_config *cfg, const char *key, const char *value, char *err,
                      size_t errsize)
{
    return hn_settings_set(&sim_settings, cfg, key, value, err, errsize) == 0 ? 0 : -1;
}

struct load_ctx {
    struct hn_sim_config *cfg;
    char err[256];
};

static int conf_set(const char *key, const char *value, void *ctx)
{
    struct load_ctx *l = ctx;
    return hn_sim_config_set(l->cfg, key, value, l->err, sizeof(l->err));
}

int hn_cmd_sim(int argc, char **argv)
{
    /* --scenario, a flag for each scenario key, then the output flags. */
    struct option opts[HN_ARRAY_LEN(sim_rows) + 5];
    size_t n = 0;
    opts[n++] = (struct option){"scenario", required_argument, NULL, 'S'};
    size_t keys = n;
    n = hn_settings_options(&sim_settings, opts, n, HN_ARRAY_LEN(opts) - 4, 0, 0);
    /* --policy also takes "all", so it is told apart ('p'). The other keys' flags share 0:
     * getopt_long takes a prefix only they share ("--gp") as the first of them. */
    for (size_t i = keys; i < n; i++) {
        if (strcmp(opts[i].name, "policy") == 0)
            opts[i].val = 'p';
    }
    opts[n++] = (struct option){"json", no_argument, NULL, 'j'};
    opts[n++] = (struct option){"timeline", no_argument, NULL, 't'};
    opts[n++] = (struct option){"help", no_argument, NULL, 'h'};
    opts[n] = (struct option){NULL, 0, NULL, 0};
    struct hn_sim_config cfg;
    hn_sim_config_default(&cfg);
    struct load_ctx l = {&cfg, ""};
    /* The scenario first, so that flags override it. */
    for (int i = 1; i < argc && argv[i]; i++) {
        const char *path = strcmp(argv[i], "--scenario") == 0 && i + 1 < argc ? argv[i + 1]
                           : strncmp(argv[i], "--scenario=", 11) == 0         ? argv[i] + 11
                                                                              : NULL;
        char err[512];
        if (path && hn_conf_load(path, conf_set, &l, err, sizeof(err)) != 0) {
            fprintf(stderr, "houston sim: %s%s%s\n", err, l.err[0] ? ": " : "", l.err);
            return 2;
        }
    }
    int json = 0, tl = 0, all = 0, ch;
    struct hn_opts g;
    hn_opts_begin(&g, "sim", opts, stderr);
    while ((ch = hn_opts_next(&g, argc, argv)) != -1) {
        switch (ch) {
        case 0:
            if (hn_sim_config_set(&cfg, opts[g.idx].name, optarg, l.err, sizeof(l.err)) != 0) {
                fprintf(stderr, "houston sim: --%s\n", l.err);
                return 2;
            }
            break;
        case 'p':
            all = strcmp(optarg, "all") == 0;
            if (!all && hn_sim_config_set(&cfg, "policy", optarg, l.err, sizeof(l.err)) != 0) {
                fprintf(stderr,
                        "houston sim: --policy: '%s' is not reactive, straggler, "
                        "predictive or all\n",
                        optarg);
                return 2;
            }
            break;
        case 'S':
            break;
        case 'j':
            json = 1;
            break;
        case 't':
            tl = 1;
            break;
        case 'h':
            hn_usage_sim(stdout);
            return 0;
        default: /* '?': hn_opts_next said why */
            return 2;
        }
    }
    hn_opts_end(&g);
    if (optind < argc) {
        fprintf(stderr, "houston sim: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    json_t *policies = json_object();
    int first = all ? 0 : (int)cfg.policy, last = all ? HN_SIM_NPOLICIES - 1 : (int)cfg.policy;
    json_t *one = NULL;
    for (int p = first; p <= last; p++) {
        cfg.policy = (enum hn_sim_policy)p;
        const char *name = hn_sim_policy_name(cfg.policy);
        char err[512];
        struct hn_sim *s = hn_sim_new(&cfg, err, sizeof(err));
        if (!s) {
            fprintf(stderr, "houston sim: %s\n", err);
            json_decref(policies);
            return 2;
        }
        double c0 = cpu_now();
        hn_sim_run(s);
        double cpu = cpu_now() - c0;
        struct hn_sim_result r;
        hn_sim_result(s, &r);
        const char *const *lines;
        size_t nl = hn_sim_timeline(s, &lines);
        if (json) {
            json_t *o = result_json(s, &r, name, lines, tl || !all ? nl : 0, cpu);
            if (all)
                json_object_set_new(policies, name, o);
            else
                one = o;
        } else {
            print_human(&r, name, cpu);
            for (size_t i = 0; tl && i < nl; i++)
                printf("    %s\n", lines[i]);
        }
        hn_sim_free(s);
    }
    if (json) {
        /* With --policy all the top level is the default policy's result (so that ettr, mfu,
         * ... are always at the top), and "policies" holds each one's. */
        json_t *out = one;
        if (all) {
            out = json_deep_copy(json_object_get(policies, hn_sim_policy_name(HN_SIM_STRAGGLER)));
            json_object_del(out, "timeline");
            json_object_set_new(out, "policies", policies);
        } else {
            json_decref(policies);
        }
        char *text = json_dumps(out, JSON_COMPACT);
        if (text)
            printf("%s\n", text);
        free(text);
        json_decref(out);
    } else {
        json_decref(policies);
    }
    return 0;
}
