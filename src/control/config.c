#include "control/control.h"

#include "control/web.h"

#include "common/http.h"
#include "common/rules.h"
#include "common/settings.h"
#include "common/util.h"
#include "common/xid.h"
#include "sched/hostlist.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void hn_control_config_defaults(struct hn_control_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    hn_strlcpy(cfg->listen, "127.0.0.1:8080", sizeof(cfg->listen));
    hn_strlcpy(cfg->store, "/var/lib/houston/houston.db", sizeof(cfg->store));
    hn_strlcpy(cfg->scheduler, "slurm", sizeof(cfg->scheduler));
    hn_strlcpy(cfg->scontrol, "scontrol", sizeof(cfg->scontrol));
    hn_strlcpy(cfg->squeue, "squeue", sizeof(cfg->squeue));
    hn_strlcpy(cfg->xid_catalog, hn_xid_default_catalog(), sizeof(cfg->xid_catalog));
    hn_strlcpy(cfg->default_sku, "H100", sizeof(cfg->default_sku));
    hn_strlcpy(cfg->web_root, hn_web_default_root(), sizeof(cfg->web_root));
    cfg->default_gpus = 8;
    cfg->accept_unknown = -1;
    cfg->sched_timeout_ms = 10000;
    cfg->tick_s = 5;
    cfg->poll_s = 5;
    cfg->agent_silence_s = 120;
    cfg->retention_days = 365;
    cfg->max_frame = 4u << 20;
    hn_brain_config_default(&cfg->brain);
    hn_rules_init(&cfg->rules);
}

void hn_control_config_fini(struct hn_control_config *cfg)
{
    free(cfg->sku_rules);
    cfg->sku_rules = NULL;
    cfg->nsku_rules = 0;
    free(cfg->nodes);
    cfg->nodes = NULL;
    cfg->nnodes = 0;
    hn_rules_fini(&cfg->rules);
}

/* Splits the next blank-separated word of *s into out; 0, or -1 when missing or too long. */
static int next_word(const char **s, char *out, size_t size)
{
    const char *p = *s + strspn(*s, " \t");
    size_t n = strcspn(p, " \t");
    if (n == 0 || n >= size)
        return -1;
    memcpy(out, p, n);
    out[n] = '\0';
    *s = p + n;
    return 0;
}

/* "node = NAME RACK SKU GPUS" */
static int add_node(const struct hn_setting *row, void *obj, const char *key, const char *v,
                    char *err, size_t errsize)
{
    (void)row, (void)key;
    struct hn_control_config *cfg = obj;
    char name[HN_NAME_MAX], rack[HN_NAME_MAX], sku[32], gpus_s[16];
    const char *p = v;
    uint64_t gpus;
    if (next_word(&p, name, sizeof(name)) || next_word(&p, rack, sizeof(rack)) ||
        next_word(&p, sku, sizeof(sku)) || next_word(&p, gpus_s, sizeof(gpus_s)) ||
        p[strspn(p, " \t")] != '\0' || hn_parse_u64(gpus_s, 10, &gpus) || gpus == 0 ||
        gpus > 1024) {
        snprintf(err, errsize, "node: want 'NAME RACK SKU GPUS', got '%s'", v);
        return -1;
    }
    if (!hn_sched_valid_node(name)) {
        snprintf(err, errsize, "node: '%s' is not a valid node name", name);
        return -1;
    }
    if (cfg->nnodes >= HN_CONTROL_MAX_NODES) {
        snprintf(err, errsize, "node: more than %d nodes", HN_CONTROL_MAX_NODES);
        return -1;
    }
    cfg->nodes = xrealloc(cfg->nodes, (cfg->nnodes + 1) * sizeof(*cfg->nodes));
    struct hn_control_node_cfg *n = &cfg->nodes[cfg->nnodes++];
    hn_strlcpy(n->name, name, sizeof(n->name));
    hn_strlcpy(n->rack, rack, sizeof(n->rack));
    hn_strlcpy(n->sku, sku, sizeof(n->sku));
    n->gpus = (unsigned)gpus;
    return 0;
}

#define BRAIN(field) offsetof(struct hn_control_config, brain.field)

/* Where each rule threshold (common/rules.h) lands in the brain's configuration. */
static const struct hn_setting rule_fields[HN_RULE_COUNT] = {
    [HN_RULE_RETIRED_PAGES] = {.type = HN_SET_DOUBLE, .offset = BRAIN(retired_pages_limit)},
    [HN_RULE_NVLINK_CRC] = {.type = HN_SET_DOUBLE, .offset = BRAIN(nvlink_crc_per_s_limit)},
    [HN_RULE_PCIE_REPLAY] = {.type = HN_SET_DOUBLE, .offset = BRAIN(pcie_replay_per_lane_min)},
    [HN_RULE_LAGGARD_MIN_UTIL] = {.type = HN_SET_DOUBLE, .offset = BRAIN(laggard_min_util)},
    [HN_RULE_LAGGARD_K] = {.type = HN_SET_DOUBLE, .offset = BRAIN(laggard_k)},
    [HN_RULE_LAGGARD_MIN_DROP] = {.type = HN_SET_DOUBLE, .offset = BRAIN(laggard_min_drop)},
    [HN_RULE_LAGGARD_CYCLES] = {.type = HN_SET_INT, .offset = BRAIN(laggard_cycles)},
    [HN_RULE_LAGGARD_MIN_PEERS] = {.type = HN_SET_INT, .offset = BRAIN(laggard_min_peers)},
    [HN_RULE_LAGGARD_MAX_AGE] = {.type = HN_SET_DOUBLE, .offset = BRAIN(laggard_max_age_s)},
    [HN_RULE_HOT_MIN_DELTA] = {.type = HN_SET_DOUBLE, .offset = BRAIN(hot_min_delta_c)},
    [HN_RULE_HANG_MIN] = {.type = HN_SET_DOUBLE, .offset = BRAIN(hang_min_s)},
    [HN_RULE_HANG_K] = {.type = HN_SET_DOUBLE, .offset = BRAIN(hang_k)},
    [HN_RULE_HANG_PAUSE_K] = {.type = HN_SET_DOUBLE, .offset = BRAIN(hang_pause_k)},
    [HN_RULE_HANG_PAUSE_MAX] = {.type = HN_SET_DOUBLE, .offset = BRAIN(hang_pause_max_s)},
    [HN_RULE_RESTART_OVERHEAD] = {.type = HN_SET_DOUBLE, .offset = BRAIN(restart_s)},
    [HN_RULE_STRAGGLER_HORIZON] = {.type = HN_SET_DOUBLE, .offset = BRAIN(straggler_horizon_s)},
    [HN_RULE_STRAGGLER_HOLD] = {.type = HN_SET_DOUBLE, .offset = BRAIN(straggler_hold_s)},
    [HN_RULE_SBE_RATE] = {.type = HN_SET_DOUBLE, .offset = BRAIN(sbe_rate_per_h)},
};

/* Puts cfg->rules where the brain reads them: every threshold a file or line set, and the
 * per-SKU overrides as struct hn_sku_rules (NaN: not overridden). */
static void rules_to_brain(struct hn_control_config *cfg)
{
    const struct hn_rules *r = &cfg->rules;
    for (size_t i = 0; i < HN_RULE_COUNT; i++) {
        if (!isnan(r->fleet[i]))
            hn_settings_store(&rule_fields[i], cfg, r->fleet[i]);
    }
    if (r->nskus > cfg->nsku_rules)
        cfg->sku_rules = xrealloc(cfg->sku_rules, r->nskus * sizeof(*cfg->sku_rules));
    for (size_t i = 0; i < r->nskus; i++) {
        struct hn_sku_rules *s = &cfg->sku_rules[i];
        hn_strlcpy(s->sku, r->skus[i].sku, sizeof(s->sku));
        s->retired_pages_limit = r->skus[i].v[HN_RULE_RETIRED_PAGES];
        s->nvlink_crc_per_s_limit = r->skus[i].v[HN_RULE_NVLINK_CRC];
        s->pcie_replay_per_lane_min = r->skus[i].v[HN_RULE_PCIE_REPLAY];
    }
    cfg->nsku_rules = r->nskus;
}

/* "rule = SKU KEY VALUE": a threshold for one SKU, e.g. "rule = GB200 retired-pages-limit 48". */
static int add_rule(const struct hn_setting *row, void *obj, const char *key, const char *v,
                    char *err, size_t errsize)
{
    (void)row, (void)key;
    struct hn_control_config *cfg = obj;
    if (hn_rules_set_sku(&cfg->rules, v, err, errsize) != 0)
        return -1;
    rules_to_brain(cfg);
    return 0;
}

/* What a rules file's "*" rows may set besides the rules: the straggler detector's thresholds
 * (straggler-NAME), as config lines do. */
static const struct hn_setting strag_rule_rows[] = {
    {"straggler-", HN_SET_TABLE, 0, .sub = &hn_strag_settings},
};
static const struct hn_settings strag_rules = {strag_rule_rows, 1, HN_SETTINGS_PLAIN};

const char *hn_control_rules_default_path(void)
{
    return hn_rules_default_path();
}

/* "rules-file = PATH" (common/rules.h): its rows apply where this line stands, so later
 * config lines win; a file refused halfway changes nothing. */
static int load_rules(const struct hn_setting *row, void *obj, const char *key, const char *v,
                      char *err, size_t errsize)
{
    (void)row, (void)key;
    struct hn_control_config *cfg = obj;
    struct hn_strag_config strag = cfg->brain.straggler;
    if (hn_rules_load(&cfg->rules, v, &strag_rules, &strag, err, errsize) != 0)
        return -1;
    cfg->brain.straggler = strag;
    rules_to_brain(cfg);
    return 0;
}

/* step-trusted-uids: up to HN_STEP_TRUSTED_MAX user ids, comma-separated; "" for none. */
static int set_uids(const struct hn_setting *row, void *obj, const char *key, const char *v,
                    char *err, size_t errsize)
{
    (void)row;
    struct hn_brain_config *b = &((struct hn_control_config *)obj)->brain;
    uint32_t uids[HN_STEP_TRUSTED_MAX];
    unsigned n = 0;
    char buf[512];
    if (strlen(v) >= sizeof(buf)) {
        snprintf(err, errsize, "%s: longer than %zu bytes", key, sizeof(buf) - 1);
        return -1;
    }
    hn_strlcpy(buf, v, sizeof(buf));
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *t = hn_trim(tok);
        uint64_t u;
        if (!*t)
            continue;
        if (hn_parse_u64(t, 10, &u) != 0 || u >= UINT32_MAX) {
            snprintf(err, errsize, "%s: '%s' is not a user id (0 to %u)", key, t, UINT32_MAX - 1);
            return -1;
        }
        if (n == HN_STEP_TRUSTED_MAX) {
            snprintf(err, errsize, "%s: more than %d user ids", key, HN_STEP_TRUSTED_MAX);
            return -1;
        }
        uids[n++] = (uint32_t)u;
    }
    memcpy(b->step_trusted_uids, uids, n * sizeof(uids[0]));
    b->n_step_trusted_uids = n;
    return 0;
}

/* scheduler: one of the backends (sched/sched.h); their names are short, so it fits. */
static int set_scheduler(const struct hn_setting *row, void *obj, const char *key, const char *v,
                         char *err, size_t errsize)
{
    if (!hn_sched_lookup(v)) {
        snprintf(err, errsize, "%s: '%s' is not one of %s", key, v, hn_sched_names());
        return -1;
    }
    hn_strlcpy((char *)obj + row->offset, v, row->size);
    return 0;
}

#define CFG(field)  offsetof(struct hn_control_config, field)
#define SIZE(field) sizeof(((struct hn_control_config *)NULL)->field)
#define STR(key, field)                                                                            \
    {                                                                                              \
        key, HN_SET_STRING, CFG(field), .size = SIZE(field)                                        \
    }
#define NUM(key, type, off, low, high)                                                             \
    {                                                                                              \
        key, type, off, .lo = (low), .hi = (high)                                                  \
    }
#define CUSTOM(key, fn)                                                                            \
    {                                                                                              \
        key, HN_SET_CUSTOM, 0, .parse = (fn)                                                       \
    }

static const char *const store_syncs[] = {"normal", "full", NULL};
static const char *const mfu_dtypes[] = {"bf16", "fp16", "fp8", "fp4", "tf32", NULL};

/* The controller's settings (docs/operations.md). The rule thresholds are common/rules.h's:
 * hn_control_config_set sends their keys there. */
static const struct hn_setting control_rows[] = {
    STR("listen", listen),
    STR("token-file", token_file),
    STR("operator-token-file", operator_token_file),
    STR("store", store),
    {"store-sync", HN_SET_ENUM, CFG(store_full_sync), .names = store_syncs},
    {"scheduler", HN_SET_CUSTOM, CFG(scheduler), .size = SIZE(scheduler), .parse = set_scheduler},
    STR("scontrol", scontrol),
    STR("squeue", squeue),
    STR("topology-conf", topology_conf),
    STR("web-root", web_root),
    STR("sku-file", sku_file),
    STR("xid-catalog", xid_catalog),
    STR("default-sku", default_sku),
    CUSTOM("node", add_node),
    CUSTOM("rule", add_rule),
    CUSTOM("rules-file", load_rules),
    {"accept-unknown-nodes", HN_SET_BOOL, .offset = CFG(accept_unknown)},
    NUM("default-gpus", HN_SET_UNSIGNED, CFG(default_gpus), 1, 1024),
    {"scheduler-timeout", HN_SET_INT, CFG(sched_timeout_ms), .lo = 0.1, .hi = 600, .scale = 1000},
    NUM("store-retention", HN_SET_DOUBLE, CFG(retention_days), 0, 100 * 365),
    NUM("agent-silence", HN_SET_DOUBLE, CFG(agent_silence_s), 1, 86400),
    NUM("tick", HN_SET_DOUBLE, CFG(tick_s), 0.01, 3600),
    NUM("scheduler-poll", HN_SET_DOUBLE, CFG(poll_s), 0.1, 3600),
    NUM("max-frame-bytes", HN_SET_SIZE, CFG(max_frame), 1024, 256.0 * 1024 * 1024),
    NUM("guard-fraction", HN_SET_DOUBLE, BRAIN(guard_fraction), 0, 1),
    NUM("guard-window", HN_SET_DOUBLE, BRAIN(guard_window_s), 1, 30 * 86400),
    NUM("guard-per-rack", HN_SET_INT, BRAIN(guard_per_rack), 0, 1000),
    NUM("burnin", HN_SET_DOUBLE, BRAIN(burnin_s), 0, 30 * 86400),
    {"predictive", HN_SET_BOOL, .offset = BRAIN(predictive)},
    {"straggler-", HN_SET_TABLE, BRAIN(straggler), .sub = &hn_strag_settings},
    {"ranks-per-node-max", HN_SET_UNSIGNED, BRAIN(ranks_per_node_max), .lo = 1, .hi = 1 << 20,
     .flags = HN_SET_WHOLE},
    /* Forgetting a job scans the table: at most 65,536 jobs keeps that to milliseconds. */
    {"jobs-max", HN_SET_SIZE, BRAIN(jobs_max), .lo = 16, .hi = 1 << 16, .flags = HN_SET_WHOLE},
    CUSTOM("step-trusted-uids", set_uids),
    {"mfu-dtype", HN_SET_STRING, BRAIN(mfu_dtype), .size = SIZE(brain.mfu_dtype),
     .names = mfu_dtypes},
};

static const struct hn_settings control_settings = {control_rows, HN_ARRAY_LEN(control_rows),
                                                    HN_SETTINGS_PLAIN};

int hn_control_config_set(struct hn_control_config *cfg, const char *key, const char *v, char *err,
                          size_t errsize)
{
    int rc;
    if (hn_rule_find(key) >= 0) {
        rc = hn_rules_set(&cfg->rules, key, v, err, errsize);
        if (rc == 0)
            rules_to_brain(cfg);
    } else {
        rc = hn_settings_set(&control_settings, cfg, key, v, err, errsize);
    }
    return rc == 0 ? 0 : -1;
}

/* A token file must exist, hold one non-empty line, and not be readable by others. */
static void check_token(const char *key, const char *path, struct hn_buf *out, int *problems)
{
    if (!path[0]) {
        hn_buf_printf(out, "%s is required\n", key);
        (*problems)++;
        return;
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        hn_buf_printf(out, "%s: %s: %s\n", key, path, strerror(errno));
        (*problems)++;
        return;
    }
    if (st.st_mode & 0077)
        hn_buf_printf(out, "%s: %s is readable by group or others (chmod 600 it)\n", key, path);
    if (st.st_size == 0 || st.st_size > 511) {
        hn_buf_printf(out, "%s: %s must hold one token of 1 to 511 bytes\n", key, path);
        (*problems)++;
    }
}

int hn_control_config_check(const struct hn_control_config *cfg, struct hn_buf *out)
{
    int problems = 0;
    check_token("token-file", cfg->token_file, out, &problems);
    check_token("operator-token-file", cfg->operator_token_file, out, &problems);
    char dir[PATH_MAX];
    hn_strlcpy(dir, cfg->store, sizeof(dir));
    char *slash = strrchr(dir, '/');
    if (strcmp(cfg->store, ":memory:") != 0) {
        if (slash)
            *slash = '\0';
        else
            hn_strlcpy(dir, ".", sizeof(dir));
        if (access(dir[0] ? dir : "/", W_OK) != 0) {
            hn_buf_printf(out, "store: cannot write in %s: %s\n", dir[0] ? dir : "/",
                          strerror(errno));
            problems++;
        }
    }
    char host[128];
    unsigned port;
    if (hn_http_parse_listen(cfg->listen, host, sizeof(host), &port) != 0) {
        hn_buf_printf(out, "listen: '%s' is not ADDR:PORT\n", cfg->listen);
        problems++;
    }
    if (access(cfg->xid_catalog, R_OK) != 0) {
        hn_buf_printf(out, "xid-catalog: %s: %s\n", cfg->xid_catalog, strerror(errno));
        problems++;
    }
    if (cfg->topology_conf[0] && access(cfg->topology_conf, R_OK) != 0) {
        hn_buf_printf(out, "topology-conf: %s: %s\n", cfg->topology_conf, strerror(errno));
        problems++;
    }
    for (size_t i = 0; i < cfg->nnodes; i++) {
        for (size_t j = 0; j < i; j++) {
            if (strcmp(cfg->nodes[i].name, cfg->nodes[j].name) == 0) {
                hn_buf_printf(out, "node %s is listed twice\n", cfg->nodes[i].name);
                problems++;
            }
        }
    }
    return problems;
}
