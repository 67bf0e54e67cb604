#include "common/rules.h"

#include "common/settings.h"
#include "common/util.h"
#include "common/xid.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The known keys, their ranges (as `KEY = VALUE` lines of the controller's config take them)
 * and the values that hold when no file sets them. data/rules.csv names each one's source. */
static const struct rule {
    const char *name;
    double lo, hi;
    double dflt;
} rules[HN_RULE_COUNT] = {
    [HN_RULE_RETIRED_PAGES] = {"retired-pages-limit", 1, 1e6, 63},
    [HN_RULE_NVLINK_CRC] = {"nvlink-crc-per-s", 0, 1e9, 100},
    [HN_RULE_PCIE_REPLAY] = {"pcie-replay-per-lane-per-min", 0, 1e6, 0.5},
    [HN_RULE_LAGGARD_MIN_UTIL] = {"laggard-min-util", 0, 100, 50},
    [HN_RULE_LAGGARD_K] = {"laggard-k", 0, 100, 4},
    [HN_RULE_LAGGARD_MIN_DROP] = {"laggard-min-drop", 0, 1, 0.05},
    [HN_RULE_LAGGARD_CYCLES] = {"laggard-cycles", 1, 1000, 3},
    [HN_RULE_LAGGARD_MIN_PEERS] = {"laggard-min-peers", 2, 1e6, 4},
    [HN_RULE_LAGGARD_MAX_AGE] = {"laggard-max-age", 1, 86400, 60},
    [HN_RULE_HOT_MIN_DELTA] = {"hot-min-delta", 0, 100, 8},
    [HN_RULE_HANG_MIN] = {"hang-min", 1, 86400, 120},
    [HN_RULE_HANG_K] = {"hang-k", 1, 1000, 10},
    [HN_RULE_HANG_PAUSE_K] = {"hang-pause-k", 0, 100, 3},
    [HN_RULE_HANG_PAUSE_MAX] = {"hang-pause-max", 0, 7 * 86400, 2700},
    [HN_RULE_RESTART_OVERHEAD] = {"restart-overhead", 0, 86400, 300},
    [HN_RULE_STRAGGLER_HORIZON] = {"straggler-horizon", 0, 30 * 86400, 3600},
    [HN_RULE_STRAGGLER_HOLD] = {"straggler-hold", 0, 86400, 600},
    [HN_RULE_SBE_RATE] = {"sbe-rate-per-h", 0, 1e9, 100},
};

void hn_rules_init(struct hn_rules *r)
{
    for (size_t i = 0; i < HN_RULE_COUNT; i++)
        r->fleet[i] = NAN;
    r->skus = NULL;
    r->nskus = 0;
}

void hn_rules_fini(struct hn_rules *r)
{
    free(r->skus);
    hn_rules_init(r);
}

const char *hn_rules_default_path(void)
{
    return HN_DATADIR "/rules.csv";
}

int hn_rule_find(const char *key)
{
    for (int i = 0; i < HN_RULE_COUNT; i++) {
        if (strcmp(rules[i].name, key) == 0)
            return i;
    }
    return -1;
}

const char *hn_rule_name(enum hn_rule id)
{
    return (unsigned)id < HN_RULE_COUNT ? rules[id].name : "unknown";
}

double hn_rule_default(enum hn_rule id)
{
    return (unsigned)id < HN_RULE_COUNT ? rules[id].dflt : NAN;
}

int hn_rules_set(struct hn_rules *r, const char *key, const char *value, char *err, size_t errsize)
{
    int id = hn_rule_find(key);
    if (id < 0) {
        hn_set_err(err, errsize, "unknown setting '%s'", key);
        return -ENOENT;
    }
    /* A number row over fleet[], in the controller's words. */
    static const struct hn_settings words = {NULL, 0, HN_SETTINGS_PLAIN};
    const struct hn_setting row = {rules[id].name, HN_SET_DOUBLE, (size_t)id * sizeof(double),
                                   .lo = rules[id].lo, .hi = rules[id].hi};
    return hn_settings_put(&words, &row, r->fleet, key, value, err, errsize);
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

static struct hn_rules_sku *find_sku(const struct hn_rules *r, const char *sku)
{
    for (size_t i = 0; i < r->nskus; i++) {
        if (strcasecmp(r->skus[i].sku, sku) == 0)
            return &r->skus[i];
    }
    return NULL;
}

int hn_rules_set_sku(struct hn_rules *r, const char *line, char *err, size_t errsize)
{
    char sku[32], key[48], val[32];
    const char *p = line;
    double d;
    if (next_word(&p, sku, sizeof(sku)) || next_word(&p, key, sizeof(key)) ||
        next_word(&p, val, sizeof(val)) || p[strspn(p, " \t")] != '\0' ||
        hn_parse_double(val, &d) != 0 || d < 0) {
        hn_set_err(err, errsize, "rule: want 'SKU KEY VALUE', got '%s'", line);
        return -EINVAL;
    }
    struct hn_rules_sku *s = find_sku(r, sku);
    if (!s && r->nskus >= HN_RULE_SKUS_MAX) {
        hn_set_err(err, errsize, "rule: more than %d SKUs", HN_RULE_SKUS_MAX);
        return -EINVAL;
    }
    int id = hn_rule_find(key);
    if (id < 0 || id >= HN_RULE_NSKU) {
        hn_set_err(err, errsize,
                   "rule: '%s' is not retired-pages-limit, nvlink-crc-per-s or "
                   "pcie-replay-per-lane-per-min",
                   key);
        return -EINVAL;
    }
    if (!s) {
        r->skus = xrealloc(r->skus, (r->nskus + 1) * sizeof(*r->skus));
        s = &r->skus[r->nskus++];
        hn_strlcpy(s->sku, sku, sizeof(s->sku));
        for (size_t i = 0; i < HN_RULE_NSKU; i++)
            s->v[i] = NAN;
    }
    s->v[id] = d;
    return 0;
}

/* The caller's table of other keys, and the struct they land in. */
struct more {
    const struct hn_settings *t;
    void *obj;
};

/* One record after the header: a "*" row through hn_rules_set (or more), a SKU's through
 * hn_rules_set_sku. 0, or -1 with the reason after "record N: " in why. */
static int load_row(struct hn_rules *r, const char *sku, const char *key, const char *val,
                    const struct more *more, char *why, size_t whysize)
{
    if (strcmp(sku, "*") != 0) {
        char line[160];
        snprintf(line, sizeof(line), "%s %s %s", sku, key, val);
        return hn_rules_set_sku(r, line, why, whysize) == 0 ? 0 : -1;
    }
    int rc = hn_rule_find(key) >= 0 ? hn_rules_set(r, key, val, why, whysize)
             : more->t              ? hn_settings_set(more->t, more->obj, key, val, why, whysize)
                                    : -ENOENT;
    if (rc == -ENOENT)
        hn_set_err(why, whysize, "'%s' is not a rule threshold", key);
    return rc == 0 ? 0 : -1;
}

/* Reads path's records into r; see hn_rules_load. */
static int load(struct hn_rules *r, const char *path, const char *data, size_t len,
                const struct more *more, char *err, size_t errsize)
{
    struct hn_csv_reader rd;
    hn_csv_reader_init(&rd, data, len);
    char why[256];
    int rc = 0, rec, record = 0;
    while (rc == 0 && (rec = hn_csv_reader_next(&rd, why, sizeof(why))) != 0) {
        record++;
        if (rec < 0) {
            hn_set_err(err, errsize, "rules-file %s: %s", path, why);
            rc = -1;
        } else if (rd.nfields < 3) {
            hn_set_err(err, errsize, "rules-file %s: record %d: want sku,key,value,source", path,
                       record);
            rc = -1;
        } else if (record == 1) {
            if (strcmp(rd.field[0], "sku") != 0 || strcmp(rd.field[1], "key") != 0 ||
                strcmp(rd.field[2], "value") != 0) {
                hn_set_err(err, errsize, "rules-file %s: the header must be sku,key,value,source",
                           path);
                rc = -1;
            }
        } else if (load_row(r, rd.field[0], rd.field[1], rd.field[2], more, why, sizeof(why)) !=
                   0) {
            hn_set_err(err, errsize, "rules-file %s: record %d: %s", path, record, why);
            rc = -1;
        }
    }
    hn_csv_reader_fini(&rd);
    return rc;
}

int hn_rules_load(struct hn_rules *r, const char *path, const struct hn_settings *more,
                  void *more_obj, char *err, size_t errsize)
{
    char *data = NULL;
    size_t len = 0;
    char why[256];
    if (hn_csv_read_file(path, &data, &len, why, sizeof(why)) != 0) {
        hn_set_err(err, errsize, "rules-file: %s", why);
        return -1;
    }
    /* Into a copy, so that a file refused halfway leaves r as it was. */
    struct hn_rules t = *r;
    t.skus = r->nskus ? xmalloc(r->nskus * sizeof(*r->skus)) : NULL;
    if (r->nskus)
        memcpy(t.skus, r->skus, r->nskus * sizeof(*r->skus));
    const struct more m = {more, more_obj};
    int rc = load(&t, path, data, len, &m, err, errsize);
    free(data);
    if (rc != 0) {
        free(t.skus);
        return -1;
    }
    free(r->skus);
    *r = t;
    return 0;
}

double hn_rules_get(const struct hn_rules *r, const char *sku, enum hn_rule id)
{
    if ((unsigned)id >= HN_RULE_COUNT)
        return NAN;
    const struct hn_rules_sku *s = sku && id < HN_RULE_NSKU ? find_sku(r, sku) : NULL;
    if (s && !isnan(s->v[id]))
        return s->v[id];
    return isnan(r->fleet[id]) ? rules[id].dflt : r->fleet[id];
}
