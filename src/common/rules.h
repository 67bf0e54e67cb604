/*
 * rules.h - houston's rule thresholds as data: the keys a rules file may set, and the values a
 * set of rules files gives, fleet-wide and per SKU.
 *
 * A rules file (data/rules.csv ships with houston; an operator adds one with `rules-file`) is
 * CSV with the header sku,key,value,source. A row with sku "*" sets a threshold fleet-wide; a
 * row naming a SKU ("GB200") overrides one of the first HN_RULE_NSKU thresholds for GPUs of
 * that SKU (matched ignoring case). source says where the number comes from and is not read.
 * The known keys are one table (rules.c): name, range, and the value that holds when no file
 * sets it (the brain's compiled-in default, hn_brain_config_default; the unit tests check that
 * they agree and that data/rules.csv holds the same numbers).
 *
 * The controller (control/config.c) puts the values where its brain reads them;
 * `houston check` (agent/check.c) reads its retired-pages limit here, for its GPUs' SKU.
 * A struct hn_rules belongs to its caller; nothing here keeps state, any thread may call.
 */
#ifndef HN_RULES_H
#define HN_RULES_H

#include <stddef.h>

struct hn_settings;

enum hn_rule {
    /* Fleet-wide, and per SKU: */
    HN_RULE_RETIRED_PAGES, /* retired-pages-limit */
    HN_RULE_NVLINK_CRC,    /* nvlink-crc-per-s */
    HN_RULE_PCIE_REPLAY,   /* pcie-replay-per-lane-per-min */
    /* Fleet-wide only: */
    HN_RULE_LAGGARD_MIN_UTIL,
    HN_RULE_LAGGARD_K,
    HN_RULE_LAGGARD_MIN_DROP,
    HN_RULE_LAGGARD_CYCLES,
    HN_RULE_LAGGARD_MIN_PEERS,
    HN_RULE_LAGGARD_MAX_AGE,
    HN_RULE_HOT_MIN_DELTA,
    HN_RULE_HANG_MIN,
    HN_RULE_HANG_K,
    HN_RULE_HANG_PAUSE_K,
    HN_RULE_HANG_PAUSE_MAX,
    HN_RULE_RESTART_OVERHEAD,
    HN_RULE_STRAGGLER_HORIZON,
    HN_RULE_STRAGGLER_HOLD,
    HN_RULE_SBE_RATE,
    HN_RULE_COUNT
};

#define HN_RULE_NSKU     3   /* the thresholds a SKU may override: the first three */
#define HN_RULE_SKUS_MAX 256 /* SKUs with overrides */

/* One SKU's overrides; NaN: not overridden. */
struct hn_rules_sku {
    char sku[32];
    double v[HN_RULE_NSKU];
};

struct hn_rules {
    double fleet[HN_RULE_COUNT]; /* NaN: not set (the default holds) */
    struct hn_rules_sku *skus;   /* heap, nskus of them */
    size_t nskus;
};

/* Nothing set. */
void hn_rules_init(struct hn_rules *r);
void hn_rules_fini(struct hn_rules *r);

/* HN_DATADIR "/rules.csv": the shipped thresholds. */
const char *hn_rules_default_path(void);

/* The rule called key, or -1. */
int hn_rule_find(const char *key);
const char *hn_rule_name(enum hn_rule id);
/* The value when no file sets it (the brain's built-in one). */
double hn_rule_default(enum hn_rule id);

/* `KEY = VALUE` fleet-wide. 0; -ENOENT when key is no rule; -EINVAL with "KEY: 'VALUE' is not
 * a number in [LO, HI]" in err. A refused value changes nothing. */
int hn_rules_set(struct hn_rules *r, const char *key, const char *value, char *err, size_t errsize);

/* "SKU KEY VALUE" (the controller's `rule = ...`): an override for one SKU, VALUE a number of
 * 0 or more. 0, or -EINVAL with "rule: ..." in err; a refused line changes nothing. */
int hn_rules_set_sku(struct hn_rules *r, const char *line, char *err, size_t errsize);

/* Reads the rules file at path into r, row after row (a later row wins). more (may be NULL)
 * is the table of the other keys the caller lets a "*" row set, over more_obj (the
 * controller's: the straggler detector's straggler-NAME). Returns 0, or -1 with
 * "rules-file PATH: record N: why" (or "rules-file: why" when the file cannot be read) in err
 * and r as it was; rows of more applied before the refused one stay applied. */
int hn_rules_load(struct hn_rules *r, const char *path, const struct hn_settings *more,
                  void *more_obj, char *err, size_t errsize);

/* The threshold id for GPUs of SKU sku (NULL: none known): the SKU's override, else the
 * fleet-wide value, else the default. */
double hn_rules_get(const struct hn_rules *r, const char *sku, enum hn_rule id);

#endif
