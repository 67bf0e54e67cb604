/*
 * settings.h - settings as tables: one row per `key = value` key (and --key flag), applied by
 * one function.
 *
 * A consumer (the controller, the agent, the simulator, the straggler detector) describes its
 * settings once, as a static table of rows over its config struct: the key, how the value is
 * read (a number in a range, a yes/no, a word from a list, a string that must fit, or a parse
 * callback for the odd ones such as `node = NAME RACK SKU GPUS`), and where it lands
 * (offsetof). hn_settings_set() finds the row and applies the value; a config file line
 * (common/conf.h) and a flag (hn_settings_options() makes the getopt_long entries) go through
 * the same row, so they are checked the same way and refused with the same words.
 *
 *   static const struct hn_setting rows[] = {
 *       {"tick", HN_SET_DOUBLE, offsetof(struct cfg, tick_s), .lo = 0.01, .hi = 3600},
 *       {"store-sync", HN_SET_ENUM, offsetof(struct cfg, full_sync), .names = syncs},
 *   };
 *   const struct hn_settings t = {rows, HN_ARRAY_LEN(rows), HN_SETTINGS_PLAIN};
 *   hn_settings_set(&t, &cfg, "tick", "5", err, sizeof(err));
 *
 * Messages (err) name the key as given: "tick: 'abc' is not a number in [0.01, 3600]",
 * "unknown setting 'colour'". A table's style (enum hn_settings_style) keeps each verb's
 * wording. A refused value leaves the struct as it was. Tables are read-only: any thread may
 * use them; the struct a value lands in is the caller's to guard.
 */
#ifndef HN_SETTINGS_H
#define HN_SETTINGS_H

#include <getopt.h>
#include <stddef.h>

enum hn_setting_type {
    HN_SET_DOUBLE,   /* double: a number in [lo, hi], times scale when scale is set */
    HN_SET_INT,      /* int: the same, truncated */
    HN_SET_UNSIGNED, /* unsigned: the same, truncated */
    HN_SET_SIZE,     /* size_t: the same, truncated */
    HN_SET_COUNT,    /* unsigned: decimal digits only, in [lo, hi] */
    HN_SET_U64,      /* uint64_t: decimal digits only, in [lo, hi] */
    HN_SET_BOOL,     /* int: yes 1, no 0 */
    HN_SET_ENUM,     /* int (or an enum): the index of the value in names */
    HN_SET_STRING,   /* char[size]; one of names when names is set */
    HN_SET_TABLE,    /* keys that begin with name: the rest is a key of sub, over the struct at
                      * offset (the controller's straggler-NAME) */
    HN_SET_CUSTOM,   /* parse() does it all */
};

#define HN_SET_WHOLE 1u /* numbers: only whole ones ("is not a whole number in [lo, hi]") */

struct hn_setting;
struct hn_settings;

/* A custom row's parser: applies value to obj (the whole config struct; row->offset and
 * row->size are the row's to use as it likes). key is the key as the message should name it.
 * Returns 0, or non-zero with the whole message in err; an err left empty gets the table's
 * plain refusal ("KEY: bad value 'VALUE'" in a terse table). */
typedef int (*hn_setting_fn)(const struct hn_setting *row, void *obj, const char *key,
                             const char *value, char *err, size_t errsize);

struct hn_setting {
    const char *name; /* the key; a flag is --name */
    enum hn_setting_type type;
    size_t offset;                 /* of the field in the config struct */
    double lo, hi;                 /* numbers: the range, both ends included */
    unsigned flags;                /* HN_SET_WHOLE */
    double scale;                  /* numbers: stored times this (0: as read) */
    const char *what;              /* numbers: the noun of a refusal, "number" by default */
    size_t size;                   /* HN_SET_STRING: the char array's size */
    const char *const *names;      /* HN_SET_ENUM, HN_SET_STRING: allowed values, NULL-ended */
    const struct hn_settings *sub; /* HN_SET_TABLE */
    hn_setting_fn parse;           /* HN_SET_CUSTOM */
};

/* How a table words a refused value, after "KEY: " (each verb's words, kept as they were). */
enum hn_settings_style {
    HN_SETTINGS_PLAIN, /* "'V' is not a number in [LO, HI]", "longer than N bytes",
                        * "'V' is not yes or no", "'V' is not A or B", "... one of A, B, C" */
    HN_SETTINGS_VALUE, /* the same, but "value longer than N bytes" (the agent's) */
    HN_SETTINGS_TERSE, /* "bad value 'V'" for every refusal (the simulator's) */
};

struct hn_settings {
    const struct hn_setting *rows;
    size_t nrows;
    enum hn_settings_style style;
};

/* Applies `key = value` to obj. Returns 0; -ENOENT for a key no row has ("unknown setting
 * 'KEY'"); -EINVAL for a value the row refuses, with the reason in err. Exact names are looked
 * up before HN_SET_TABLE prefixes. */
int hn_settings_set(const struct hn_settings *t, void *obj, const char *key, const char *value,
                    char *err, size_t errsize);

/* The row named key exactly (HN_SET_TABLE rows included), or NULL. */
const struct hn_setting *hn_settings_find(const struct hn_settings *t, const char *key);

/* Applies value through one row of t. shown names the key in messages ("KEY: why"); NULL
 * leaves the reason alone ("'2' is not a whole number in [3, 16]"). 0 or -EINVAL. */
int hn_settings_put(const struct hn_settings *t, const struct hn_setting *row, void *obj,
                    const char *shown, const char *value, char *err, size_t errsize);

/* A number row's field in obj as a double (for range checks of a filled struct); NaN for a
 * row that is not a number. */
double hn_settings_number(const struct hn_setting *row, const void *obj);

/* Stores v in a number row's field of obj with the row's conversion (scale, truncation);
 * no range check. Nothing for a row that is not a number. */
void hn_settings_store(const struct hn_setting *row, void *obj, double v);

/* Appends to opts[n..max) one getopt_long option per row that can be a flag (every type but
 * HN_SET_TABLE), in table order: {name, required_argument, NULL, val + step x i} for the i-th.
 * With step 1 every row has its own value, so getopt_long refuses a prefix that two rows share
 * as ambiguous; with step 0 it takes the first of them (glibc treats options alike in has_arg,
 * flag and val as one). Returns the new count; the caller adds its own options and the
 * terminating zero entry. Never writes past max (and asserts that it did not have to stop). */
size_t hn_settings_options(const struct hn_settings *t, struct option *opts, size_t n, size_t max,
                           int val, int step);

#endif
