#include "common/settings.h"

#include "common/util.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void say(char *err, size_t errsize, const char *shown, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Writes "SHOWN: " (when shown is not NULL) and the formatted reason into err. */
static void say(char *err, size_t errsize, const char *shown, const char *fmt, ...)
{
    if (!err || errsize == 0)
        return;
    int n = shown ? snprintf(err, errsize, "%s: ", shown) : 0;
    if (n < 0 || (size_t)n >= errsize)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + n, errsize - (size_t)n, fmt, ap);
    va_end(ap);
}

static int is_number(enum hn_setting_type type)
{
    return type <= HN_SET_U64;
}

/* Whole-number rows print their range as integers ("[1, 1048576]"), the others with %g. */
static int is_whole(const struct hn_setting *row)
{
    return (row->flags & HN_SET_WHOLE) || row->type == HN_SET_COUNT || row->type == HN_SET_U64;
}

/* The refusal of a value that does not parse or fit, in the table's words. */
static void refuse(const struct hn_settings *t, const struct hn_setting *row, const char *shown,
                   const char *value, char *err, size_t errsize)
{
    if (t->style == HN_SETTINGS_TERSE) {
        say(err, errsize, shown, "bad value '%s'", value);
        return;
    }
    if (is_number(row->type)) {
        const char *what = row->what ? row->what : is_whole(row) ? "whole number" : "number";
        if (is_whole(row))
            say(err, errsize, shown, "'%s' is not a %s in [%.0f, %.0f]", value, what, row->lo,
                row->hi);
        else
            say(err, errsize, shown, "'%s' is not a %s in [%g, %g]", value, what, row->lo, row->hi);
        return;
    }
    if (row->type == HN_SET_BOOL) {
        say(err, errsize, shown, "'%s' is not yes or no", value);
        return;
    }
    /* A word from a list: "'V' is not A or B", "'V' is not one of A, B, C". */
    size_t n = 0;
    while (row->names && row->names[n])
        n++;
    char list[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < n && used < sizeof(list); i++) {
        const char *sep = i == 0 ? "" : n == 2 ? " or " : ", ";
        int w = snprintf(list + used, sizeof(list) - used, "%s%s", sep, row->names[i]);
        used += w > 0 ? (size_t)w : 0;
    }
    say(err, errsize, shown, "'%s' is not %s%s", value, n > 2 ? "one of " : "", list);
}

/* The index of value in a NULL-ended list, or -1. */
static int name_index(const char *const *names, const char *value)
{
    for (int i = 0; names && names[i]; i++) {
        if (strcmp(names[i], value) == 0)
            return i;
    }
    return -1;
}

double hn_settings_number(const struct hn_setting *row, const void *obj)
{
    const char *p = (const char *)obj + row->offset;
    double scale = row->scale != 0 ? row->scale : 1;
    switch (row->type) {
    case HN_SET_DOUBLE: {
        double d;
        memcpy(&d, p, sizeof(d));
        return d / scale;
    }
    case HN_SET_INT: {
        int i;
        memcpy(&i, p, sizeof(i));
        return i / scale;
    }
    case HN_SET_UNSIGNED:
    case HN_SET_COUNT: {
        unsigned u;
        memcpy(&u, p, sizeof(u));
        return u / scale;
    }
    case HN_SET_SIZE: {
        size_t z;
        memcpy(&z, p, sizeof(z));
        return (double)z / scale;
    }
    case HN_SET_U64: {
        uint64_t u;
        memcpy(&u, p, sizeof(u));
        return (double)u / scale;
    }
    default:
        return NAN;
    }
}

void hn_settings_store(const struct hn_setting *row, void *obj, double v)
{
    char *p = (char *)obj + row->offset;
    if (row->scale != 0)
        v *= row->scale;
    switch (row->type) {
    case HN_SET_DOUBLE:
        memcpy(p, &v, sizeof(v));
        break;
    case HN_SET_INT: {
        int i = (int)v;
        memcpy(p, &i, sizeof(i));
        break;
    }
    case HN_SET_UNSIGNED:
    case HN_SET_COUNT: {
        unsigned u = (unsigned)v;
        memcpy(p, &u, sizeof(u));
        break;
    }
    case HN_SET_SIZE: {
        size_t z = (size_t)v;
        memcpy(p, &z, sizeof(z));
        break;
    }
    case HN_SET_U64: {
        uint64_t u = (uint64_t)v;
        memcpy(p, &u, sizeof(u));
        break;
    }
    default:
        break;
    }
}

/* Reads a number row's value: 0 with it in *d (and, for digit-only rows, *u), or -1. */
static int read_number(const struct hn_setting *row, const char *value, double *d, uint64_t *u)
{
    if (row->type == HN_SET_COUNT || row->type == HN_SET_U64) {
        if (hn_parse_u64(value, 10, u) != 0)
            return -1;
        *d = (double)*u;
    } else if (hn_parse_double(value, d) != 0) {
        return -1;
    }
    if (!(*d >= row->lo && *d <= row->hi))
        return -1;
    return (row->flags & HN_SET_WHOLE) && *d != floor(*d) ? -1 : 0;
}

static int set_in(const struct hn_settings *t, void *obj, const char *key, const char *shown,
                  const char *value, char *err, size_t errsize);

int hn_settings_put(const struct hn_settings *t, const struct hn_setting *row, void *obj,
                    const char *shown, const char *value, char *err, size_t errsize)
{
    char *field = (char *)obj + row->offset;
    double d;
    uint64_t u = 0;
    int i;
    switch (row->type) {
    case HN_SET_DOUBLE:
    case HN_SET_INT:
    case HN_SET_UNSIGNED:
    case HN_SET_SIZE:
    case HN_SET_COUNT:
        if (read_number(row, value, &d, &u) != 0)
            break;
        hn_settings_store(row, obj, d);
        return 0;
    case HN_SET_U64:
        if (read_number(row, value, &d, &u) != 0)
            break;
        memcpy(field, &u, sizeof(u)); /* exactly: a double holds 53 bits */
        return 0;
    case HN_SET_BOOL:
        if (strcmp(value, "yes") != 0 && strcmp(value, "no") != 0)
            break;
        i = strcmp(value, "yes") == 0;
        memcpy(field, &i, sizeof(i));
        return 0;
    case HN_SET_ENUM:
        if ((i = name_index(row->names, value)) < 0)
            break;
        memcpy(field, &i, sizeof(i));
        return 0;
    case HN_SET_STRING:
        if (row->names && name_index(row->names, value) < 0)
            break;
        if (strlen(value) >= row->size) {
            if (t->style == HN_SETTINGS_TERSE)
                break;
            say(err, errsize, shown, "%slonger than %zu bytes",
                t->style == HN_SETTINGS_VALUE ? "value " : "", row->size - 1);
            return -EINVAL;
        }
        hn_strlcpy(field, value, row->size);
        return 0;
    case HN_SET_TABLE:
        return set_in(row->sub, field, "", shown ? shown : row->name, value, err, errsize);
    case HN_SET_CUSTOM:
        if (err && errsize)
            err[0] = '\0';
        if (row->parse(row, obj, shown ? shown : row->name, value, err, errsize) == 0)
            return 0;
        if (err && errsize && err[0])
            return -EINVAL;
        say(err, errsize, shown, "bad value '%s'", value);
        return -EINVAL;
    }
    refuse(t, row, shown, value, err, errsize);
    return -EINVAL;
}

const struct hn_setting *hn_settings_find(const struct hn_settings *t, const char *key)
{
    for (size_t i = 0; i < t->nrows; i++) {
        if (strcmp(t->rows[i].name, key) == 0)
            return &t->rows[i];
    }
    return NULL;
}

/* key: what is looked up in t; shown: the key as the caller gave it, for messages. */
static int set_in(const struct hn_settings *t, void *obj, const char *key, const char *shown,
                  const char *value, char *err, size_t errsize)
{
    const struct hn_setting *row = hn_settings_find(t, key);
    if (row && row->type != HN_SET_TABLE)
        return hn_settings_put(t, row, obj, shown, value, err, errsize);
    for (size_t i = 0; i < t->nrows; i++) {
        row = &t->rows[i];
        size_t len = strlen(row->name);
        if (row->type == HN_SET_TABLE && strncmp(key, row->name, len) == 0 && key[len])
            return set_in(row->sub, (char *)obj + row->offset, key + len, shown, value, err,
                          errsize);
    }
    hn_set_err(err, errsize, "unknown setting '%s'", shown);
    return -ENOENT;
}

int hn_settings_set(const struct hn_settings *t, void *obj, const char *key, const char *value,
                    char *err, size_t errsize)
{
    return set_in(t, obj, key, key, value, err, errsize);
}

size_t hn_settings_options(const struct hn_settings *t, struct option *opts, size_t n, size_t max,
                           int val, int step)
{
    for (size_t i = 0; i < t->nrows; i++) {
        if (t->rows[i].type == HN_SET_TABLE)
            continue;
        assert(n < max); /* the caller's array is too small: a bug */
        if (n >= max)
            break;
        opts[n++] = (struct option){t->rows[i].name, required_argument, NULL, val};
        val += step;
    }
    return n;
}
