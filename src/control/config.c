#include "control/control.h"

#include "control/web.h"

#include "common/http.h"
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
}

void hn_control_config_fini(struct hn_control_config *cfg)
{
    free(cfg->sku_rules);
    cfg->sku_rules = NULL;
    cfg->nsku_rules = 0;
    free(cfg->nodes);
    cfg->nodes = NULL;
    cfg->nnodes = 0;
}

static int set_str(char *dst, size_t size, const char *v, const char *key, char *err,
                   size_t errsize)
{
    if (hn_strlcpy(dst, v, size) >= size) {
        snprintf(err, errsize, "%s: longer than %zu bytes", key, size - 1);
        return -1;
    }
    return 0;
}

static int set_num(double *dst, const char *v, double lo, double hi, const char *key, char *err,
                   size_t errsize)
{
    double d;
    if (hn_parse_double(v, &d) != 0 || d < lo || d > hi) {
        snprintf(err, errsize, "%s: '%s' is not a number in [%g, %g]", key, v, lo, hi);
        return -1;
    }
    *dst = d;
    return 0;
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
static int add_node(struct hn_control_config *cfg, const char *v, char *err, size_t errsize)
{
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

/* "rule = SKU KEY VALUE": a threshold for one SKU, e.g. "rule = GB200 retired-pages-limit 48". */
static int add_rule(struct hn_control_config *cfg, const char *v, char *err, size_t errsize)
{
    char sku[32], key[48], val[32];
    const char *p = v;
    double d;
    if (next_word(&p, sku, sizeof(sku)) || next_word(&p, key, sizeof(key)) ||
        next_word(&p, val, sizeof(val)) || p[strspn(p, " \t")] != '\0' ||
        hn_parse_double(val, &d) != 0 || d < 0) {
        snprintf(err, errsize, "rule: want 'SKU KEY VALUE', got '%s'", v);
        return -1;
    }
    struct hn_sku_rules *r = NULL;
    for (size_t i = 0; i < cfg->nsku_rules; i++) {
        if (strcasecmp(cfg->sku_rules[i].sku, sku) == 0)
            r = &cfg->sku_rules[i];
    }
    if (!r) {
        if (cfg->nsku_rules >= 256) {
            snprintf(err, errsize, "rule: more than 256 SKUs");
            return -1;
        }
        cfg->sku_rules = xrealloc(cfg->sku_rules, (cfg->nsku_rules + 1) * sizeof(*cfg->sku_rules));
        r = &cfg->sku_rules[cfg->nsku_rules++];
        hn_strlcpy(r->sku, sku, sizeof(r->sku));
        r->retired_pages_limit = r->nvlink_crc_per_s_limit = r->pcie_replay_per_lane_min = NAN;
    }
    if (strcmp(key, "retired-pages-limit") == 0)
        r->retired_pages_limit = d;
    else if (strcmp(key, "nvlink-crc-per-s") == 0)
        r->nvlink_crc_per_s_limit = d;
    else if (strcmp(key, "pcie-replay-per-lane-per-min") == 0)
        r->pcie_replay_per_lane_min = d;
    else {
        snprintf(err, errsize,
                 "rule: '%s' is not retired-pages-limit, nvlink-crc-per-s or "
                 "pcie-replay-per-lane-per-min",
                 key);
        return -1;
    }
    return 0;
}

/* Keys a rules file may set fleet-wide: thresholds, never where to listen or what to run
 * (and the straggler detector's, straggler-NAME). */
static const char *const rule_keys[] = {
    "retired-pages-limit", "nvlink-crc-per-s",  "pcie-replay-per-lane-per-min",
    "laggard-min-util",    "laggard-k",         "laggard-min-drop",
    "laggard-cycles",      "laggard-min-peers", "laggard-max-age",
    "hot-min-delta",       "hang-min",          "hang-k",
    "hang-pause-k",        "hang-pause-max",    "restart-overhead",
    "straggler-horizon",   "straggler-hold",    "sbe-rate-per-h",
};

/* straggler-NAME for a threshold of the straggler detector (hn_strag_config_set). */
static int is_strag_setting(const char *key)
{
    const char *name;
    if (strncmp(key, "straggler-", 10) != 0)
        return 0;
    for (size_t i = 0; (name = hn_strag_setting_name(i)) != NULL; i++) {
        if (strcmp(key + 10, name) == 0)
            return 1;
    }
    return 0;
}

const char *hn_control_rules_default_path(void)
{
    return HN_DATADIR "/rules.csv";
}

/* A rules file (data/rules.csv): rows `sku,key,value,source`; sku "*" applies fleet-wide as
 * `KEY = VALUE` would, another sku as `rule = SKU KEY VALUE`. Rows apply in order, where the
 * rules-file line stands, so later config lines win. */
static int load_rules(struct hn_control_config *cfg, const char *path, char *err, size_t errsize)
{
    char *data = NULL;
    size_t len = 0;
    char why[256];
    if (hn_csv_read_file(path, &data, &len, why, sizeof(why)) != 0) {
        snprintf(err, errsize, "rules-file: %s", why);
        return -1;
    }
    struct hn_csv_reader r;
    hn_csv_reader_init(&r, data, len);
    int rc = 0, rec, line = 0;
    while (rc == 0 && (rec = hn_csv_reader_next(&r, why, sizeof(why))) != 0) {
        line++;
        if (rec < 0) {
            snprintf(err, errsize, "rules-file %s: %s", path, why);
            rc = -1;
            break;
        }
        if (r.nfields < 3) {
            snprintf(err, errsize, "rules-file %s: record %d: want sku,key,value,source", path,
                     line);
            rc = -1;
            break;
        }
        const char *sku = r.field[0], *key = r.field[1], *val = r.field[2];
        if (line == 1) {
            if (strcmp(sku, "sku") != 0 || strcmp(key, "key") != 0 || strcmp(val, "value") != 0) {
                snprintf(err, errsize, "rules-file %s: the header must be sku,key,value,source",
                         path);
                rc = -1;
            }
            continue;
        }
        char sub[256];
        if (strcmp(sku, "*") == 0) {
            size_t k = 0;
            while (k < HN_ARRAY_LEN(rule_keys) && strcmp(rule_keys[k], key) != 0)
                k++;
            if (k == HN_ARRAY_LEN(rule_keys) && !is_strag_setting(key)) {
                snprintf(err, errsize, "rules-file %s: record %d: '%s' is not a rule threshold",
                         path, line, key);
                rc = -1;
                break;
            }
            rc = hn_control_config_set(cfg, key, val, sub, sizeof(sub));
        } else {
            char v[160];
            snprintf(v, sizeof(v), "%s %s %s", sku, key, val);
            rc = add_rule(cfg, v, sub, sizeof(sub));
        }
        if (rc != 0)
            snprintf(err, errsize, "rules-file %s: record %d: %s", path, line, sub);
    }
    hn_csv_reader_fini(&r);
    free(data);
    return rc;
}

/* step-trusted-uids: up to HN_STEP_TRUSTED_MAX user ids, comma-separated; "" for none. */
static int set_uids(struct hn_brain_config *b, const char *v, const char *key, char *err,
                    size_t errsize)
{
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

int hn_control_config_set(struct hn_control_config *cfg, const char *key, const char *v, char *err,
                          size_t errsize)
{
    struct hn_brain_config *b = &cfg->brain;
    double d;
    if (strcmp(key, "listen") == 0)
        return set_str(cfg->listen, sizeof(cfg->listen), v, key, err, errsize);
    if (strcmp(key, "token-file") == 0)
        return set_str(cfg->token_file, sizeof(cfg->token_file), v, key, err, errsize);
    if (strcmp(key, "operator-token-file") == 0)
        return set_str(cfg->operator_token_file, sizeof(cfg->operator_token_file), v, key, err,
                       errsize);
    if (strcmp(key, "store") == 0)
        return set_str(cfg->store, sizeof(cfg->store), v, key, err, errsize);
    if (strcmp(key, "store-sync") == 0) {
        if (strcmp(v, "full") != 0 && strcmp(v, "normal") != 0) {
            snprintf(err, errsize, "store-sync: '%s' is not normal or full", v);
            return -1;
        }
        cfg->store_full_sync = strcmp(v, "full") == 0;
        return 0;
    }
    if (strcmp(key, "scheduler") == 0) {
        if (!hn_sched_lookup(v)) {
            snprintf(err, errsize, "scheduler: '%s' is not one of %s", v, hn_sched_names());
            return -1;
        }
        return set_str(cfg->scheduler, sizeof(cfg->scheduler), v, key, err, errsize);
    }
    if (strcmp(key, "scontrol") == 0)
        return set_str(cfg->scontrol, sizeof(cfg->scontrol), v, key, err, errsize);
    if (strcmp(key, "squeue") == 0)
        return set_str(cfg->squeue, sizeof(cfg->squeue), v, key, err, errsize);
    if (strcmp(key, "topology-conf") == 0)
        return set_str(cfg->topology_conf, sizeof(cfg->topology_conf), v, key, err, errsize);
    if (strcmp(key, "web-root") == 0)
        return set_str(cfg->web_root, sizeof(cfg->web_root), v, key, err, errsize);
    if (strcmp(key, "sku-file") == 0)
        return set_str(cfg->sku_file, sizeof(cfg->sku_file), v, key, err, errsize);
    if (strcmp(key, "xid-catalog") == 0)
        return set_str(cfg->xid_catalog, sizeof(cfg->xid_catalog), v, key, err, errsize);
    if (strcmp(key, "default-sku") == 0)
        return set_str(cfg->default_sku, sizeof(cfg->default_sku), v, key, err, errsize);
    if (strcmp(key, "node") == 0)
        return add_node(cfg, v, err, errsize);
    if (strcmp(key, "rule") == 0)
        return add_rule(cfg, v, err, errsize);
    if (strcmp(key, "rules-file") == 0)
        return load_rules(cfg, v, err, errsize);
    if (strcmp(key, "accept-unknown-nodes") == 0) {
        if (strcmp(v, "yes") != 0 && strcmp(v, "no") != 0) {
            snprintf(err, errsize, "accept-unknown-nodes: '%s' is not yes or no", v);
            return -1;
        }
        cfg->accept_unknown = strcmp(v, "yes") == 0;
        return 0;
    }
    if (strcmp(key, "default-gpus") == 0) {
        if (set_num(&d, v, 1, 1024, key, err, errsize))
            return -1;
        cfg->default_gpus = (unsigned)d;
        return 0;
    }
    if (strcmp(key, "scheduler-timeout") == 0) {
        if (set_num(&d, v, 0.1, 600, key, err, errsize))
            return -1;
        cfg->sched_timeout_ms = (int)(d * 1000);
        return 0;
    }
    if (strcmp(key, "store-retention") == 0)
        return set_num(&cfg->retention_days, v, 0, 100 * 365, key, err, errsize);
    if (strcmp(key, "agent-silence") == 0)
        return set_num(&cfg->agent_silence_s, v, 1, 86400, key, err, errsize);
    if (strcmp(key, "tick") == 0)
        return set_num(&cfg->tick_s, v, 0.01, 3600, key, err, errsize);
    if (strcmp(key, "scheduler-poll") == 0)
        return set_num(&cfg->poll_s, v, 0.1, 3600, key, err, errsize);
    if (strcmp(key, "max-frame-bytes") == 0) {
        if (set_num(&d, v, 1024, 256.0 * 1024 * 1024, key, err, errsize))
            return -1;
        cfg->max_frame = (size_t)d;
        return 0;
    }
    if (strcmp(key, "guard-fraction") == 0)
        return set_num(&b->guard_fraction, v, 0, 1, key, err, errsize);
    if (strcmp(key, "guard-window") == 0)
        return set_num(&b->guard_window_s, v, 1, 30 * 86400, key, err, errsize);
    if (strcmp(key, "guard-per-rack") == 0) {
        if (set_num(&d, v, 0, 1000, key, err, errsize))
            return -1;
        b->guard_per_rack = (int)d;
        return 0;
    }
    if (strcmp(key, "retired-pages-limit") == 0)
        return set_num(&b->retired_pages_limit, v, 1, 1e6, key, err, errsize);
    if (strcmp(key, "nvlink-crc-per-s") == 0)
        return set_num(&b->nvlink_crc_per_s_limit, v, 0, 1e9, key, err, errsize);
    if (strcmp(key, "pcie-replay-per-lane-per-min") == 0)
        return set_num(&b->pcie_replay_per_lane_min, v, 0, 1e6, key, err, errsize);
    if (strcmp(key, "laggard-min-util") == 0)
        return set_num(&b->laggard_min_util, v, 0, 100, key, err, errsize);
    if (strcmp(key, "laggard-k") == 0)
        return set_num(&b->laggard_k, v, 0, 100, key, err, errsize);
    if (strcmp(key, "laggard-min-drop") == 0)
        return set_num(&b->laggard_min_drop, v, 0, 1, key, err, errsize);
    if (strcmp(key, "laggard-cycles") == 0) {
        if (set_num(&d, v, 1, 1000, key, err, errsize))
            return -1;
        b->laggard_cycles = (int)d;
        return 0;
    }
    if (strcmp(key, "hot-min-delta") == 0)
        return set_num(&b->hot_min_delta_c, v, 0, 100, key, err, errsize);
    if (strcmp(key, "burnin") == 0)
        return set_num(&b->burnin_s, v, 0, 30 * 86400, key, err, errsize);
    if (strcmp(key, "sbe-rate-per-h") == 0)
        return set_num(&b->sbe_rate_per_h, v, 0, 1e9, key, err, errsize);
    if (strcmp(key, "predictive") == 0) {
        if (strcmp(v, "yes") != 0 && strcmp(v, "no") != 0) {
            snprintf(err, errsize, "predictive: '%s' is not yes or no", v);
            return -1;
        }
        b->predictive = strcmp(v, "yes") == 0;
        return 0;
    }
    if (strcmp(key, "restart-overhead") == 0)
        return set_num(&b->restart_s, v, 0, 86400, key, err, errsize);
    if (strcmp(key, "straggler-horizon") == 0)
        return set_num(&b->straggler_horizon_s, v, 0, 30 * 86400, key, err, errsize);
    if (strcmp(key, "straggler-hold") == 0)
        return set_num(&b->straggler_hold_s, v, 0, 86400, key, err, errsize);
    if (strncmp(key, "straggler-", 10) == 0) {
        char why[128];
        int rc = hn_strag_config_set(&b->straggler, key + 10, v, why, sizeof(why));
        if (rc == 0)
            return 0;
        if (rc == -ENOENT)
            snprintf(err, errsize, "unknown setting '%s'", key);
        else
            snprintf(err, errsize, "%s: %s", key, why);
        return -1;
    }
    if (strcmp(key, "hang-min") == 0)
        return set_num(&b->hang_min_s, v, 1, 86400, key, err, errsize);
    if (strcmp(key, "hang-k") == 0)
        return set_num(&b->hang_k, v, 1, 1000, key, err, errsize);
    if (strcmp(key, "hang-pause-k") == 0)
        return set_num(&b->hang_pause_k, v, 0, 100, key, err, errsize);
    if (strcmp(key, "hang-pause-max") == 0)
        return set_num(&b->hang_pause_max_s, v, 0, 7 * 86400, key, err, errsize);
    if (strcmp(key, "ranks-per-node-max") == 0) {
        if (set_num(&d, v, 1, 1 << 20, key, err, errsize) || d != floor(d)) {
            snprintf(err, errsize, "%s: '%s' is not a whole number in [1, %d]", key, v, 1 << 20);
            return -1;
        }
        b->ranks_per_node_max = (unsigned)d;
        return 0;
    }
    if (strcmp(key, "jobs-max") == 0) {
        /* Forgetting a job scans the table: at most 65,536 jobs keeps that to milliseconds. */
        if (set_num(&d, v, 16, 1 << 16, key, err, errsize) || d != floor(d)) {
            snprintf(err, errsize, "%s: '%s' is not a whole number in [16, %d]", key, v, 1 << 16);
            return -1;
        }
        b->jobs_max = (size_t)d;
        return 0;
    }
    if (strcmp(key, "step-trusted-uids") == 0)
        return set_uids(b, v, key, err, errsize);
    if (strcmp(key, "mfu-dtype") == 0) {
        if (strcmp(v, "bf16") != 0 && strcmp(v, "fp16") != 0 && strcmp(v, "fp8") != 0 &&
            strcmp(v, "fp4") != 0 && strcmp(v, "tf32") != 0) {
            snprintf(err, errsize, "%s: '%s' is not one of bf16, fp16, fp8, fp4, tf32", key, v);
            return -1;
        }
        return set_str(b->mfu_dtype, sizeof(b->mfu_dtype), v, key, err, errsize);
    }
    if (strcmp(key, "laggard-max-age") == 0)
        return set_num(&b->laggard_max_age_s, v, 1, 86400, key, err, errsize);
    if (strcmp(key, "laggard-min-peers") == 0) {
        if (set_num(&d, v, 2, 1e6, key, err, errsize))
            return -1;
        b->laggard_min_peers = (int)d;
        return 0;
    }
    snprintf(err, errsize, "unknown setting '%s'", key);
    return -1;
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
