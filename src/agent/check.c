/*
 * check.c - `houston check`: a one-shot node health check for Slurm's HealthCheckProgram and
 * prologs (as LBNL NHC is used).
 *
 * It reads NVML, the kernel log and sysfs itself, so it works whether or not the agent runs.
 * Its retired-pages limit is the controller's rule (common/rules.h, data/rules.csv or --rules),
 * for the SKU (common/sku.h) whose product name its GPUs report.
 * The checks are a table; each adds problems to a list. Exit 0 when healthy; otherwise exit 1
 * and print one line "houston: <first problem>[ (+N more)]" on stdout, the line that --drain
 * also writes as the Slurm drain reason. Exit 2 when the check itself cannot run (bad flags,
 * a missing catalog, an unreadable kernel log): that is not the node's fault, so nothing is
 * drained.
 *
 * With --drain it drains its own node (--node, default the short host name) when unhealthy,
 * and resumes it when healthy again only if the node's drain reason starts with "houston:",
 * so a drain set by an operator or another tool is never undone.
 */
#include "agent/gpu.h"
#include "agent/ib.h"
#include "agent/kmsg.h"
#include "common/log.h"
#include "common/opts.h"
#include "common/rules.h"
#include "common/settings.h"
#include "common/sku.h"
#include "common/util.h"
#include "common/xid.h"
#include "jobs/straggler.h"
#include "sched/sched.h"
#include "verbs.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_PROBLEMS 64

struct check_opts {
    char nvml_lib[4096];
    char sysfs_root[4096];
    char kmsg[4096];
    char xid_catalog[4096];
    char rules_file[4096]; /* the thresholds (common/rules.h): the retired-pages limit */
    char node[256];
    char scontrol[256];
    char scheduler[32];
    int expect_gpus;     /* -1: any number, but at least one */
    int expect_ib_ports; /* 0: any number, including none */
    double window_s;     /* kernel-log window for /dev/kmsg records */
    int drain;
    int no_gpu; /* skip NVML checks (a node without GPUs) */
    int no_ib;  /* skip IB checks */
    int verbose;
};

struct check_ctx {
    const struct check_opts *o;
    char problems[MAX_PROBLEMS][256]; /* what is wrong with the node */
    int nproblems;
    char error[256]; /* why the check itself could not run (exit 2, never a drain) */
    char notes[512]; /* what was looked at, for --verbose */
};

static void problem(struct check_ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void problem(struct check_ctx *c, const char *fmt, ...)
{
    if (c->nproblems >= MAX_PROBLEMS)
        return;
    char *p = c->problems[c->nproblems++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p, sizeof(c->problems[0]), fmt, ap);
    va_end(ap);
    /* The reason is one line (Slurm shows it in sinfo): catalog texts may hold newlines. */
    for (; *p; p++) {
        if ((unsigned char)*p < 0x20)
            *p = ' ';
    }
}

/* The check could not look at something: a packaging or permission problem, not the node's. */
static void cannot(struct check_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void cannot(struct check_ctx *c, const char *fmt, ...)
{
    if (c->error[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->error, sizeof(c->error), fmt, ap);
    va_end(ap);
}

static void note(struct check_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct check_ctx *c, const char *fmt, ...)
{
    size_t len = strlen(c->notes);
    if (len + 2 >= sizeof(c->notes))
        return;
    if (len)
        c->notes[len++] = ',', c->notes[len++] = ' ', c->notes[len] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->notes + len, sizeof(c->notes) - len, fmt, ap);
    va_end(ap);
}

/* A rules file may also hold the straggler detector's thresholds (straggler-NAME), as the
 * controller's do: they are checked, not used. */
static const struct hn_setting strag_rule_rows[] = {
    {"straggler-", HN_SET_TABLE, 0, .sub = &hn_strag_settings},
};
static const struct hn_settings strag_rules = {strag_rule_rows, 1, HN_SETTINGS_PLAIN};

/* The rules (o->rules_file) into *r, and the SKU table when a SKU has its own thresholds
 * (*skus, else NULL). 0, or -1 after cannot(). */
static int load_rules(struct check_ctx *c, struct hn_rules *r, struct hn_sku_table **skus)
{
    char err[512];
    struct hn_strag_config strag;
    hn_strag_config_default(&strag);
    *skus = NULL;
    if (hn_rules_load(r, c->o->rules_file, &strag_rules, &strag, err, sizeof(err)) != 0) {
        cannot(c, "cannot read the rules: %s", err);
        return -1;
    }
    if (r->nskus > 0 && !(*skus = hn_sku_table_new(hn_sku_default_path(), err, sizeof(err)))) {
        cannot(c, "cannot read the SKU table: %s", err);
        return -1;
    }
    return 0;
}

/* GPUs: count, lost GPUs, uncorrectable ECC, row remap failure, retired pages, NVLinks. */
static void check_gpus(struct check_ctx *c)
{
    const struct check_opts *o = c->o;
    if (o->no_gpu)
        return;
    struct hn_rules rules;
    struct hn_sku_table *skus;
    hn_rules_init(&rules);
    if (load_rules(c, &rules, &skus) != 0) {
        hn_rules_fini(&rules);
        return;
    }
    struct hn_gpu_set *s = xmalloc(sizeof(*s));
    hn_gpus_init(s, o->nvml_lib, "check");
    if (!s->open) {
        problem(c, "NVML unavailable: %s", s->open_error);
        goto out;
    }
    hn_gpus_collect(s);
    note(c, "%u GPUs", s->count);
    if (o->expect_gpus >= 0 && (int)s->count < o->expect_gpus)
        problem(c, "%u GPUs found, %d expected", s->count, o->expect_gpus);
    else if (o->expect_gpus < 0 && s->count == 0)
        problem(c, "no GPU found");
    for (unsigned i = 0; i < s->count; i++) {
        const struct hn_gpu *g = &s->gpus[i];
        const double *v = g->v;
        if (g->lost) {
            problem(c, "GPU %u (%s) is lost (fell off the bus)", i, g->pci_bus_id);
            continue;
        }
        if (v[HN_F_ECC_DBE_VOL] > 0)
            problem(c, "GPU %u (%s) has %.0f uncorrectable ECC errors since the last reset", i,
                    g->pci_bus_id, v[HN_F_ECC_DBE_VOL]);
        if (v[HN_F_REMAP_FAILURE] > 0)
            problem(c, "GPU %u (%s) row remapping failed", i, g->pci_bus_id);
        /* The limit of its SKU (data/rules.csv: 63, NVIDIA's 64 pages a GPU may retire). */
        const struct hn_sku *sku = skus ? hn_sku_match_model(skus, g->name) : NULL;
        double limit = hn_rules_get(&rules, sku ? sku->name : NULL, HN_RULE_RETIRED_PAGES);
        double retired = (isnan(v[HN_F_RETIRED_SBE]) ? 0 : v[HN_F_RETIRED_SBE]) +
                         (isnan(v[HN_F_RETIRED_DBE]) ? 0 : v[HN_F_RETIRED_DBE]);
        if (retired >= limit)
            problem(c, "GPU %u (%s) has %.0f retired pages (limit %g)", i, g->pci_bus_id, retired,
                    limit);
        if (v[HN_F_RECOVERY_ACTION] >= NVML_GPU_RECOVERY_ACTION_GPU_RESET)
            problem(c, "GPU %u (%s) NVML asks for recovery action %.0f", i, g->pci_bus_id,
                    v[HN_F_RECOVERY_ACTION]);
        for (unsigned l = 0; l < g->nlinks; l++) {
            if (g->link[l][HN_L_UP] == 0)
                problem(c, "GPU %u (%s) NVLink %u is inactive", i, g->pci_bus_id, l);
        }
    }
out:
    hn_gpus_fini(s);
    free(s);
    hn_sku_table_free(skus);
    hn_rules_fini(&rules);
}

static double uptime_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Kernel log: any fatal Xid (catalog action other than IGNORE/RESTART_APP) in the window. */
static void check_kmsg(struct check_ctx *c)
{
    const struct check_opts *o = c->o;
    if (!o->kmsg[0])
        return;
    char err[512];
    struct hn_xid_catalog *cat = hn_xid_catalog_new(o->xid_catalog, err, sizeof(err));
    if (!cat) {
        cannot(c, "cannot check Xids: %s", err);
        return;
    }
    struct hn_kmsg *k =
        hn_kmsg_open(o->kmsg, HN_KMSG_FROM_START | HN_KMSG_ONESHOT, err, sizeof(err));
    if (!k) {
        cannot(c, "cannot read the kernel log: %s", err);
        hn_xid_catalog_free(cat);
        return;
    }
    double now_boot = uptime_s(), now_wall = (double)time(NULL);
    struct hn_xid_event ev[32];
    int n, seen = 0;
    while ((n = hn_kmsg_read(k, ev, (int)HN_ARRAY_LEN(ev))) > 0) {
        for (int i = 0; i < n; i++) {
            if (ev[i].kind != HN_XID)
                continue;
            double age = ev[i].ts_kind == HN_TS_BOOT   ? now_boot - ev[i].ts
                         : ev[i].ts_kind == HN_TS_WALL ? now_wall - ev[i].ts
                                                       : 0;
            if (age > o->window_s)
                continue;
            seen++;
            const struct hn_xid_entry *e = hn_xid_lookup(cat, ev[i].code);
            if (e && hn_xid_is_fatal(e))
                problem(c, "xid %u (%s) on %s, action %s", ev[i].code, e->mnemonic, ev[i].pci,
                        e->immediate_resolution);
        }
    }
    if (n < 0)
        cannot(c, "reading %s: %s", o->kmsg, strerror(-n));
    note(c, "%d Xid lines in the window", seen);
    hn_kmsg_close(k);
    hn_xid_catalog_free(cat);
}

/* InfiniBand / RoCE: every port must be ACTIVE. */
static void check_ib(struct check_ctx *c)
{
    const struct check_opts *o = c->o;
    if (o->no_ib)
        return;
    struct hn_ib_port *ports = xcalloc(HN_IB_MAX_PORTS, sizeof(*ports));
    int n = hn_ib_scan(o->sysfs_root, ports, HN_IB_MAX_PORTS);
    if (n < 0)
        n = 0;
    if (o->expect_ib_ports > 0 && n < o->expect_ib_ports)
        problem(c, "%d InfiniBand/RoCE ports found, %d expected", n, o->expect_ib_ports);
    if (n == 0) {
        note(c, "no IB ports");
    } else {
        note(c, "%d IB ports", n);
        for (int i = 0; i < n; i++) {
            if (!hn_ib_port_active(&ports[i]))
                problem(c, "%s %s port %s is %s, not ACTIVE",
                        ports[i].link_layer[0] ? ports[i].link_layer : "IB", ports[i].device,
                        ports[i].port, ports[i].state_name[0] ? ports[i].state_name : "unknown");
        }
    }
    free(ports);
}

/*
 * Mirrors the verdict into the scheduler: drain when unhealthy (reason != NULL), resume when
 * healthy and the node's drain reason is houston's own. Returns 0, or -1 after printing why
 * the scheduler could not be driven.
 */
static int apply_drain(const struct check_opts *o, const char *reason)
{
    struct hn_sched_settings set;
    hn_sched_settings_default(&set);
    if (hn_strlcpy(set.scontrol, o->scontrol, sizeof(set.scontrol)) >= sizeof(set.scontrol)) {
        fprintf(stderr, "houston check: --scontrol path too long\n");
        return -1;
    }
    struct hn_sched s;
    if (hn_sched_init(&s, o->scheduler, &set) != 0) {
        fprintf(stderr, "houston check: unknown scheduler '%s' (known: %s)\n", o->scheduler,
                hn_sched_names());
        return -1;
    }
    int rc = 0;
    struct hn_sched_node node;
    int info_rc = s.ops->node_info(s.ctx, o->node, &node);
    int have_node = info_rc == 0;
    if (info_rc == -ETIMEDOUT) {
        /* A hung scheduler would hang the drain too: one timeout is enough. */
        fprintf(stderr, "houston check: cannot read node %s: %s\n", o->node,
                s.ops->last_error(s.ctx));
        rc = -1;
    } else if (reason && have_node && node.drain && !hn_sched_drained_by_houston(&node)) {
        /* Someone else drained it: their reason stays, or a later healthy run would resume
         * a node an operator took out. */
        fprintf(stderr, "houston check: %s is already drained (%s); not replacing the reason\n",
                o->node, node.reason);
    } else if (reason) {
        if (s.ops->drain(s.ctx, o->node, reason) != 0) {
            fprintf(stderr, "houston check: cannot drain %s: %s\n", o->node,
                    s.ops->last_error(s.ctx));
            rc = -1;
        }
    } else if (!have_node) {
        fprintf(stderr, "houston check: cannot read node %s: %s\n", o->node,
                s.ops->last_error(s.ctx));
        rc = -1;
    } else if (hn_sched_drained_by_houston(&node)) {
        if (s.ops->resume(s.ctx, o->node) != 0) {
            fprintf(stderr, "houston check: cannot resume %s: %s\n", o->node,
                    s.ops->last_error(s.ctx));
            rc = -1;
        } else if (o->verbose) {
            printf("houston: resumed %s (was drained by houston: %s)\n", o->node, node.reason);
        }
    }
    hn_sched_fini(&s);
    return rc;
}

static const struct {
    const char *name;
    void (*run)(struct check_ctx *c);
} checks[] = {
    {"gpu", check_gpus},
    {"xid", check_kmsg},
    {"ib", check_ib},
};

void hn_usage_check(FILE *out)
{
    fprintf(out,
            "usage: houston check [options]\n\n"
            "One-shot node health check for Slurm's HealthCheckProgram or a prolog. Exits 0\n"
            "when healthy; otherwise exits 1 and prints one line, starting with 'houston:',\n"
            "giving the reason. Exit 2: bad options, or the check could not run (missing\n"
            "Xid catalog, unreadable kernel log); nothing is drained then. Exit 3: healthy,\n"
            "but --drain could not reach the scheduler.\n\n"
            "It fails on: fewer GPUs than expected, a lost GPU, a fatal Xid (catalog action\n"
            "other than IGNORE/RESTART_APP) in the kernel log, uncorrectable (volatile) ECC\n"
            "errors, a row-remap failure, 63+ retired pages, an NVML recovery action, an\n"
            "inactive NVLink, an InfiniBand/RoCE port that is not ACTIVE.\n\n"
            "options:\n"
            "  --expect-gpus N       fail when fewer than N GPUs are present (default: 1+)\n"
            "  --nvml-lib PATH       NVML library to dlopen (default libnvidia-ml.so.1)\n"
            "  --no-gpu              skip the NVML checks\n"
            "  --sysfs-root DIR      directory standing for /sys (default /sys)\n"
            "  --no-ib               skip the InfiniBand checks\n"
            "  --expect-ib-ports N   fail when fewer than N IB/RoCE ports are present\n"
            "  --kmsg FILE           kernel log to read (default /dev/kmsg; '' skips)\n"
            "  --window SECONDS      how far back Xid lines count (default 3600; lines\n"
            "                        without a time stamp always count)\n"
            "  --xid-catalog FILE    Xid catalog CSV (default the one shipped with houston)\n"
            "  --rules FILE          rule thresholds CSV (default the shipped data/rules.csv):\n"
            "                        the retired-pages limit, per GPU SKU where it has a row\n"
            "  --drain               drain this node in Slurm when unhealthy (a drain someone\n"
            "                        else set is kept as it is); resume it when healthy if\n"
            "                        (and only if) houston drained it\n"
            "  --node NAME           Slurm node name (default the short host name)\n"
            "  --scontrol PATH       scontrol to run (default scontrol from PATH)\n"
            "  --scheduler NAME      scheduler backend: slurm (default) or dry-run\n"
            "  -v, --verbose         say what was checked when healthy\n"
            "  -h, --help            show this help\n");
}

static const struct option check_long_opts[] = {
    {"expect-gpus", required_argument, NULL, 'g'},
    {"nvml-lib", required_argument, NULL, 'l'},
    {"no-gpu", no_argument, NULL, 'G'},
    {"sysfs-root", required_argument, NULL, 's'},
    {"no-ib", no_argument, NULL, 'I'},
    {"expect-ib-ports", required_argument, NULL, 'P'},
    {"kmsg", required_argument, NULL, 'k'},
    {"window", required_argument, NULL, 'w'},
    {"xid-catalog", required_argument, NULL, 'x'},
    {"rules", required_argument, NULL, 'r'},
    {"drain", no_argument, NULL, 'd'},
    {"node", required_argument, NULL, 'n'},
    {"scontrol", required_argument, NULL, 'S'},
    {"scheduler", required_argument, NULL, 'B'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

/* parse with g begun. */
static int parse_flags(struct hn_opts *g, int argc, char **argv, struct check_opts *o)
{
    memset(o, 0, sizeof(*o));
    hn_strlcpy(o->nvml_lib, "libnvidia-ml.so.1", sizeof(o->nvml_lib));
    hn_strlcpy(o->sysfs_root, "/sys", sizeof(o->sysfs_root));
    hn_strlcpy(o->kmsg, "/dev/kmsg", sizeof(o->kmsg));
    hn_strlcpy(o->xid_catalog, hn_xid_default_catalog(), sizeof(o->xid_catalog));
    hn_strlcpy(o->rules_file, hn_rules_default_path(), sizeof(o->rules_file));
    hn_strlcpy(o->scontrol, "scontrol", sizeof(o->scontrol));
    hn_strlcpy(o->scheduler, "slurm", sizeof(o->scheduler));
    o->expect_gpus = -1;
    o->window_s = 3600;
    if (gethostname(o->node, sizeof(o->node)) != 0)
        hn_strlcpy(o->node, "localhost", sizeof(o->node));
    o->node[sizeof(o->node) - 1] = '\0';
    char *dot = strchr(o->node, '.');
    if (dot)
        *dot = '\0';
    int ch;
    while ((ch = hn_opts_next(g, argc, argv)) != -1) {
        int64_t n;
        switch (ch) {
        case 'g':
            if (hn_parse_i64(optarg, 10, &n) != 0 || n < 0 || n > HN_MAX_GPUS) {
                fprintf(stderr, "houston check: --expect-gpus: '%s' is not 0..%d\n", optarg,
                        HN_MAX_GPUS);
                return -1;
            }
            o->expect_gpus = (int)n;
            break;
        case 'l':
            hn_strlcpy(o->nvml_lib, optarg, sizeof(o->nvml_lib));
            break;
        case 'G':
            o->no_gpu = 1;
            break;
        case 's':
            hn_strlcpy(o->sysfs_root, optarg, sizeof(o->sysfs_root));
            break;
        case 'I':
            o->no_ib = 1;
            break;
        case 'P':
            if (hn_parse_i64(optarg, 10, &n) != 0 || n < 0 || n > HN_IB_MAX_PORTS) {
                fprintf(stderr, "houston check: --expect-ib-ports: '%s' is not 0..%d\n", optarg,
                        HN_IB_MAX_PORTS);
                return -1;
            }
            o->expect_ib_ports = (int)n;
            break;
        case 'k':
            hn_strlcpy(o->kmsg, optarg, sizeof(o->kmsg));
            break;
        case 'w':
            if (hn_parse_double(optarg, &o->window_s) != 0 || o->window_s <= 0) {
                fprintf(stderr, "houston check: --window: '%s' is not a positive number\n", optarg);
                return -1;
            }
            break;
        case 'x':
            hn_strlcpy(o->xid_catalog, optarg, sizeof(o->xid_catalog));
            break;
        case 'r':
            hn_strlcpy(o->rules_file, optarg, sizeof(o->rules_file));
            break;
        case 'd':
            o->drain = 1;
            break;
        case 'n':
            hn_strlcpy(o->node, optarg, sizeof(o->node));
            break;
        case 'S':
            if (hn_strlcpy(o->scontrol, optarg, sizeof(o->scontrol)) >= sizeof(o->scontrol)) {
                fprintf(stderr, "houston check: --scontrol: path too long\n");
                return -1;
            }
            break;
        case 'B':
            if (!hn_sched_lookup(optarg)) {
                fprintf(stderr, "houston check: --scheduler: '%s' is not one of %s\n", optarg,
                        hn_sched_names());
                return -1;
            }
            hn_strlcpy(o->scheduler, optarg, sizeof(o->scheduler));
            break;
        case 'v':
            o->verbose = 1;
            break;
        case 'h':
            hn_usage_check(stdout);
            return 1;
        default: /* '?': hn_opts_next said why */
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "houston check: unexpected argument '%s'\n", argv[optind]);
        return -1;
    }
    return 0;
}

/* Returns 0 to run, 1 after --help, -1 for a usage error. */
static int parse(int argc, char **argv, struct check_opts *o)
{
    struct hn_opts g;
    hn_opts_begin(&g, "check", check_long_opts, stderr);
    g.shorts = ":vh";
    int ret = parse_flags(&g, argc, argv, o);
    hn_opts_end(&g);
    return ret;
}

int hn_cmd_check(int argc, char **argv)
{
    struct check_opts o;
    int pr = parse(argc, argv, &o);
    if (pr != 0)
        return pr > 0 ? 0 : 2;
    hn_log_set_level(o.verbose ? HN_LOG_INFO : HN_LOG_ERR);
    struct check_ctx *c = xcalloc(1, sizeof(*c));
    c->o = &o;
    for (size_t i = 0; i < HN_ARRAY_LEN(checks); i++)
        checks[i].run(c);

    char reason[512];
    if (c->error[0]) {
        /* Not the node's fault: say so, exit 2, and leave Slurm alone. */
        fprintf(stderr, "houston check: %s\n", c->error);
        printf("houston: check failed to run: %s\n", c->error);
        free(c);
        return 2;
    }
    if (c->nproblems > 0) {
        if (c->nproblems > 1)
            snprintf(reason, sizeof(reason), "houston: %s (+%d more)", c->problems[0],
                     c->nproblems - 1);
        else
            snprintf(reason, sizeof(reason), "houston: %s", c->problems[0]);
        printf("%s\n", reason);
        if (o.verbose)
            for (int i = 1; i < c->nproblems; i++)
                fprintf(stderr, "houston check: also: %s\n", c->problems[i]);
    } else if (o.verbose) {
        printf("houston: healthy (%s)\n", c->notes);
    }
    int rc = c->nproblems > 0 ? 1 : 0;
    /* Exit 3: healthy, but the scheduler could not be told (Slurm then sees a failure). */
    if (o.drain && apply_drain(&o, rc ? reason : NULL) != 0)
        rc = rc ? rc : 3;
    free(c);
    return rc;
}
