/*
 * sku.c - the SKU table loader (see sku.h).
 *
 * A file is read whole (capped at HN_CSV_MAX_FILE), split by the CSV reader from xid.h, and
 * each header name is mapped once to what its column fills: a text member, a checked number
 * member (num_cols below, with its unit's sane range) or one dtype's peak. Rows are parsed
 * into a list of their own and only merged into the table when every row and every
 * product-name pattern checked out, so a failed load or overlay changes nothing. Tables hold
 * dozens of rows, so lookups are linear scans.
 */
#include "common/sku.h"

#include "common/util.h"
#include "common/xid.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ROWS        1024 /* SKUs per file and per table */
#define TEXT_MAX        256  /* bytes of a vendor or source cell */
#define PATTERN_MAX     96   /* bytes of one product-name pattern */
#define TFLOPS_MIN      1.0  /* 10^12 FLOP/s: the range catches FLOP/s or PFLOP/s typed in */
#define TFLOPS_MAX      1e5  /* 10^17 FLOP/s */
#define TFLOPS_SUFFIX   "_tflops"
#define TFLOPS_SUFFIXLN (sizeof(TFLOPS_SUFFIX) - 1)

struct hn_sku_table {
    struct hn_sku **rows;
    size_t n;
};

/* A number column: the member it fills and the range that is sane for its unit. */
struct num_col {
    const char *name;
    size_t off;
    double min, max;
    const char *unit;
};

static const struct num_col num_cols[] = {
    {"hbm_gib", offsetof(struct hn_sku, hbm_gib), 1, 4096, "GiB"},
    {"hbm_tbps", offsetof(struct hn_sku, hbm_tbps), 0.05, 100, "TB/s"},
    {"nvlink_gbps", offsetof(struct hn_sku, nvlink_gbps), 1, 100000, "GB/s"},
    {"tdp_w", offsetof(struct hn_sku, tdp_w), 10, 5000, "W"},
    {"slowdown_c", offsetof(struct hn_sku, slowdown_c), 30, 130, "C"},
};

enum col_kind { COL_SKU, COL_NAMES, COL_VENDOR, COL_SOURCE, COL_NUM, COL_PEAK };

/* What one header field maps to; arg is the num_cols index or the dtype slot. */
struct col {
    enum col_kind kind;
    size_t arg;
};

struct header {
    struct col col[HN_CSV_MAX_FIELDS];
    size_t ncols;
    char dtype[HN_SKU_MAX_DTYPES][HN_SKU_DTYPE_MAX];
    size_t ndtypes;
};

static int is_word_char(unsigned char c)
{
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z');
}

static void sku_free(struct hn_sku *s)
{
    if (!s)
        return;
    free(s->name);
    free(s->vendor);
    free(s->source);
    for (size_t i = 0; i < s->n_names; i++)
        free(s->names[i]);
    free(s->names);
    free(s);
}

static void rows_free(struct hn_sku **rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        sku_free(rows[i]);
    free(rows);
}

/* ---- reading ---- */

/* ---- header ---- */

/* Maps one header name to its column; adds a dtype slot for <dtype>_tflops. */
static int map_column(struct header *h, const char *name, struct col *c, char *msg, size_t msgsize)
{
    static const struct {
        const char *name;
        enum col_kind kind;
    } text_cols[] = {
        {"sku", COL_SKU},
        {"names", COL_NAMES},
        {"vendor", COL_VENDOR},
        {"source", COL_SOURCE},
    };
    for (size_t i = 0; i < HN_ARRAY_LEN(text_cols); i++) {
        if (strcmp(name, text_cols[i].name) == 0) {
            c->kind = text_cols[i].kind;
            c->arg = 0;
            return 0;
        }
    }
    for (size_t i = 0; i < HN_ARRAY_LEN(num_cols); i++) {
        if (strcmp(name, num_cols[i].name) == 0) {
            c->kind = COL_NUM;
            c->arg = i;
            return 0;
        }
    }
    size_t len = strlen(name);
    if (len > TFLOPS_SUFFIXLN && strcmp(name + len - TFLOPS_SUFFIXLN, TFLOPS_SUFFIX) == 0) {
        size_t dlen = len - TFLOPS_SUFFIXLN;
        if (dlen >= HN_SKU_DTYPE_MAX) {
            snprintf(msg, msgsize, "dtype of column '%.40s' is longer than %d bytes", name,
                     HN_SKU_DTYPE_MAX - 1);
            return -EINVAL;
        }
        for (size_t i = 0; i < dlen; i++) {
            char ch = name[i];
            if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'))) {
                snprintf(msg, msgsize,
                         "dtype of column '%.40s' is not lower-case letters and "
                         "digits",
                         name);
                return -EINVAL;
            }
        }
        if (h->ndtypes == HN_SKU_MAX_DTYPES) {
            snprintf(msg, msgsize, "more than %d *_tflops columns", HN_SKU_MAX_DTYPES);
            return -E2BIG;
        }
        memcpy(h->dtype[h->ndtypes], name, dlen);
        h->dtype[h->ndtypes][dlen] = '\0';
        c->kind = COL_PEAK;
        c->arg = h->ndtypes++;
        return 0;
    }
    snprintf(msg, msgsize,
             "unknown column '%.40s' (known: sku, names, vendor, source, hbm_gib, hbm_tbps, "
             "nvlink_gbps, tdp_w, slowdown_c, <dtype>_tflops)",
             name);
    return -EINVAL;
}

/* The f-th header name; a UTF-8 byte-order mark before the first is not part of it. */
static const char *header_name(const struct hn_csv_reader *r, size_t f)
{
    const char *name = r->field[f];
    if (f == 0 && strncmp(name, "\xEF\xBB\xBF", 3) == 0)
        name += 3;
    return name;
}

static int read_header(const struct hn_csv_reader *r, struct header *h, char *msg, size_t msgsize)
{
    int have_sku = 0, have_names = 0;
    memset(h, 0, sizeof(*h));
    for (size_t f = 0; f < r->nfields; f++) {
        const char *name = header_name(r, f);
        for (size_t g = 0; g < f; g++) {
            if (strcmp(header_name(r, g), name) == 0) {
                snprintf(msg, msgsize, "line %u: column '%.40s' appears twice", r->rec_line, name);
                return -EINVAL;
            }
        }
        char why[200];
        int rc = map_column(h, name, &h->col[f], why, sizeof(why));
        if (rc < 0) {
            snprintf(msg, msgsize, "line %u: %s", r->rec_line, why);
            return rc;
        }
        have_sku |= h->col[f].kind == COL_SKU;
        have_names |= h->col[f].kind == COL_NAMES;
    }
    h->ncols = r->nfields;
    if (!have_sku || !have_names) {
        snprintf(msg, msgsize, "line %u: header lacks column '%s'", r->rec_line,
                 have_sku ? "names" : "sku");
        return -EINVAL;
    }
    return 0;
}

/* ---- cells ---- */

static int parse_sku_name(struct hn_sku *s, const char *v, unsigned line, char *msg, size_t msgsize)
{
    size_t len = strlen(v);
    if (len == 0 || len >= HN_SKU_NAME_MAX) {
        snprintf(msg, msgsize, "line %u: sku must be 1 to %d bytes", line, HN_SKU_NAME_MAX - 1);
        return -EINVAL;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)v[i];
        if (!is_word_char(c) && c != '.' && c != '_' && c != '-') {
            snprintf(msg, msgsize,
                     "line %u: sku '%.40s' may hold only letters, digits, '.', '_' and '-'", line,
                     v);
            return -EINVAL;
        }
    }
    s->name = xstrdup(v);
    return 0;
}

/* Splits a `names` cell at ';' into trimmed patterns; each must start and end with a letter
 * or digit and hold printable ASCII only, so the whole-word rule is well defined. */
static int parse_names(struct hn_sku *s, const char *v, unsigned line, char *msg, size_t msgsize)
{
    const char *p = v;
    while (*p == ' ')
        p++;
    if (*p == '\0')
        return 0; /* no patterns: the SKU is found by name only */
    s->names = xcalloc(HN_SKU_MAX_NAMES, sizeof(*s->names));
    for (;;) {
        const char *end = strchr(p, ';');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        while (len > 0 && p[len - 1] == ' ')
            len--;
        while (len > 0 && *p == ' ') {
            p++;
            len--;
        }
        if (len == 0 || len >= PATTERN_MAX) {
            snprintf(msg, msgsize, "line %u: names: each pattern must be 1 to %d bytes", line,
                     PATTERN_MAX - 1);
            return -EINVAL;
        }
        for (size_t i = 0; i < len; i++) {
            if ((unsigned char)p[i] < 0x20 || (unsigned char)p[i] > 0x7e) {
                snprintf(msg, msgsize, "line %u: names: pattern holds a non-printable byte", line);
                return -EINVAL;
            }
        }
        if (!is_word_char((unsigned char)p[0]) || !is_word_char((unsigned char)p[len - 1])) {
            snprintf(msg, msgsize,
                     "line %u: names: pattern '%.*s' must start and end with a letter or digit",
                     line, (int)(len < 40 ? len : 40), p);
            return -EINVAL;
        }
        if (s->n_names == HN_SKU_MAX_NAMES) {
            snprintf(msg, msgsize, "line %u: names: more than %d patterns", line, HN_SKU_MAX_NAMES);
            return -E2BIG;
        }
        char *copy = xmalloc(len + 1);
        memcpy(copy, p, len);
        copy[len] = '\0';
        s->names[s->n_names++] = copy;
        if (!end)
            return 0;
        p = end + 1;
    }
}

/* Parses a number cell; blank means "not given" and leaves *out NaN. */
static int parse_number(const char *v, const char *col, double min, double max, const char *unit,
                        unsigned line, double *out, char *msg, size_t msgsize)
{
    const char *p = v;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == '\0')
        return 0;
    double d;
    if (hn_parse_double(v, &d) != 0 || !isfinite(d)) {
        snprintf(msg, msgsize, "line %u: %s '%.40s' is not a number", line, col, v);
        return -EINVAL;
    }
    if (d < min || d > max) {
        snprintf(msg, msgsize, "line %u: %s %g is outside %g..%g %s (wrong unit?)", line, col, d,
                 min, max, unit);
        return -ERANGE;
    }
    *out = d;
    return 0;
}

static int parse_text(char **dst, const char *v, const char *col, unsigned line, char *msg,
                      size_t msgsize)
{
    if (strlen(v) >= TEXT_MAX) {
        snprintf(msg, msgsize, "line %u: %s longer than %d bytes", line, col, TEXT_MAX - 1);
        return -E2BIG;
    }
    free(*dst);
    *dst = xstrdup(v);
    return 0;
}

static int parse_cell(struct hn_sku *s, const struct header *h, const struct col *c, const char *v,
                      unsigned line, char *msg, size_t msgsize)
{
    switch (c->kind) {
    case COL_SKU:
        return parse_sku_name(s, v, line, msg, msgsize);
    case COL_NAMES:
        return parse_names(s, v, line, msg, msgsize);
    case COL_VENDOR:
        return parse_text(&s->vendor, v, "vendor", line, msg, msgsize);
    case COL_SOURCE:
        return parse_text(&s->source, v, "source", line, msg, msgsize);
    case COL_NUM: {
        const struct num_col *n = &num_cols[c->arg];
        double d = NAN;
        int rc = parse_number(v, n->name, n->min, n->max, n->unit, line, &d, msg, msgsize);
        if (rc == 0)
            memcpy((char *)s + n->off, &d, sizeof(d));
        return rc;
    }
    case COL_PEAK: {
        char col[HN_SKU_DTYPE_MAX + TFLOPS_SUFFIXLN];
        snprintf(col, sizeof(col), "%s%s", h->dtype[c->arg], TFLOPS_SUFFIX);
        double d = NAN;
        int rc = parse_number(v, col, TFLOPS_MIN, TFLOPS_MAX, "TFLOP/s", line, &d, msg, msgsize);
        if (rc == 0 && !isnan(d)) {
            struct hn_sku_peak *pk = &s->peak[s->n_peaks++];
            hn_strlcpy(pk->dtype, h->dtype[c->arg], sizeof(pk->dtype));
            pk->flops = d * 1e12;
        }
        return rc;
    }
    }
    return -EINVAL;
}

static struct hn_sku *sku_alloc(unsigned line)
{
    struct hn_sku *s = xcalloc(1, sizeof(*s));
    s->vendor = xstrdup("");
    s->source = xstrdup("");
    s->hbm_gib = s->hbm_tbps = s->nvlink_gbps = s->tdp_w = s->slowdown_c = NAN;
    s->line = line;
    return s;
}

/* ---- loading and merging ---- */

static struct hn_sku *find_in(struct hn_sku *const *rows, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        if (strcasecmp(rows[i]->name, name) == 0)
            return rows[i];
    }
    return NULL;
}

/* Parses every row of data into a new list; *rows and *n are set only on success. */
static int parse_rows(const char *data, size_t len, struct hn_sku ***rows_out, size_t *n_out,
                      char *msg, size_t msgsize)
{
    struct hn_csv_reader r;
    struct header h;
    struct hn_sku **rows = NULL;
    size_t n = 0, cap = 0;
    hn_csv_reader_init(&r, data, len);

    int rc = hn_csv_reader_next(&r, msg, msgsize);
    if (rc == 0) {
        snprintf(msg, msgsize, "empty file");
        rc = -EINVAL;
    }
    if (rc < 0)
        goto out_fail;
    rc = read_header(&r, &h, msg, msgsize);
    if (rc < 0)
        goto out_fail;

    while ((rc = hn_csv_reader_next(&r, msg, msgsize)) == 1) {
        if (r.nfields != h.ncols) {
            snprintf(msg, msgsize, "line %u: %zu fields, the header has %zu", r.rec_line, r.nfields,
                     h.ncols);
            rc = -EINVAL;
            goto out_fail;
        }
        if (n == MAX_ROWS) {
            snprintf(msg, msgsize, "line %u: more than %d SKUs", r.rec_line, MAX_ROWS);
            rc = -E2BIG;
            goto out_fail;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            rows = xrealloc(rows, cap * sizeof(struct hn_sku *));
        }
        struct hn_sku *s = sku_alloc(r.rec_line);
        rows[n++] = s; /* counted before filling so a failure frees it */
        for (size_t f = 0; f < r.nfields; f++) {
            rc = parse_cell(s, &h, &h.col[f], r.field[f], r.rec_line, msg, msgsize);
            if (rc < 0)
                goto out_fail;
        }
        const struct hn_sku *dup = find_in(rows, n - 1, s->name);
        if (dup) {
            snprintf(msg, msgsize, "line %u: SKU '%s' is already defined on line %u", s->line,
                     s->name, dup->line);
            rc = -EEXIST;
            goto out_fail;
        }
    }
    if (rc < 0)
        goto out_fail;
    hn_csv_reader_fini(&r);
    *rows_out = rows;
    *n_out = n;
    return 0;

out_fail:
    hn_csv_reader_fini(&r);
    rows_free(rows, n);
    return rc;
}

struct pattern_ref {
    const char *pattern;
    const struct hn_sku *sku;
    int fresh; /* the row comes from the file being loaded */
};

static int cmp_pattern(const void *a, const void *b)
{
    const struct pattern_ref *x = a, *y = b;
    return strcasecmp(x->pattern, y->pattern);
}

/* Refuses a product-name pattern that two SKUs claim, which would make matching ambiguous.
 * fresh[i] says rows[i] comes from the file being loaded; the message blames such a row (the
 * later one when both are), since rows already in the table were consistent. */
static int check_patterns(struct hn_sku *const *rows, const unsigned char *fresh, size_t n,
                          char *msg, size_t msgsize)
{
    size_t total = 0;
    for (size_t i = 0; i < n; i++)
        total += rows[i]->n_names;
    if (total < 2)
        return 0;
    struct pattern_ref *refs = xmalloc(total * sizeof(*refs));
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < rows[i]->n_names; j++) {
            refs[k].pattern = rows[i]->names[j];
            refs[k].sku = rows[i];
            refs[k].fresh = fresh[i];
            k++;
        }
    }
    qsort(refs, total, sizeof(*refs), cmp_pattern);
    int rc = 0;
    for (size_t i = 1; i < total; i++) {
        if (strcasecmp(refs[i - 1].pattern, refs[i].pattern) != 0)
            continue;
        const struct pattern_ref *a = &refs[i - 1], *b = &refs[i];
        if (a->fresh > b->fresh || (a->fresh == b->fresh && a->sku->line > b->sku->line)) {
            const struct pattern_ref *t = a;
            a = b;
            b = t;
        }
        if (a->sku == b->sku)
            snprintf(msg, msgsize, "line %u: names: pattern '%s' is listed twice", b->sku->line,
                     b->pattern);
        else
            snprintf(msg, msgsize,
                     "line %u: names: pattern '%s' of SKU '%s' is already claimed by SKU '%s' "
                     "(line %u%s)",
                     b->sku->line, b->pattern, b->sku->name, a->sku->name, a->sku->line,
                     a->fresh ? "" : " of the table loaded before");
        rc = -EEXIST;
        break;
    }
    free(refs);
    return rc;
}

/* Merges add[0..nadd) into t: a row replaces the table's row of the same SKU, others are
 * appended. Takes ownership of add's rows on success; on failure t is unchanged and the
 * caller still owns them. */
static int merge(struct hn_sku_table *t, struct hn_sku **add, size_t nadd, char *msg,
                 size_t msgsize)
{
    size_t cap = t->n + nadd;
    if (cap == 0)
        return 0;
    struct hn_sku **merged = xmalloc(cap * sizeof(struct hn_sku *));
    unsigned char *fresh = xcalloc(cap, 1);
    unsigned char *used = xcalloc(nadd ? nadd : 1, 1);
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++) {
        struct hn_sku *over = NULL;
        for (size_t j = 0; j < nadd && !over; j++) {
            if (strcasecmp(add[j]->name, t->rows[i]->name) == 0) {
                over = add[j];
                used[j] = 1;
            }
        }
        fresh[n] = over != NULL;
        merged[n++] = over ? over : t->rows[i];
    }
    for (size_t j = 0; j < nadd; j++) {
        if (!used[j]) {
            fresh[n] = 1;
            merged[n++] = add[j];
        }
    }
    int rc = 0;
    if (n > MAX_ROWS) {
        snprintf(msg, msgsize, "more than %d SKUs in all", MAX_ROWS);
        rc = -E2BIG;
    }
    if (rc == 0)
        rc = check_patterns(merged, fresh, n, msg, msgsize);
    free(fresh);
    if (rc < 0) {
        free(used);
        free(merged);
        return rc;
    }
    /* Free the rows that were replaced: those of t that did not make it into merged. */
    for (size_t i = 0; i < t->n; i++) {
        if (merged[i] != t->rows[i])
            sku_free(t->rows[i]);
    }
    free(t->rows);
    free(used);
    t->rows = merged;
    t->n = n;
    return 0;
}

static int load_buffer(struct hn_sku_table *t, const char *data, size_t len, const char *label,
                       char *err, size_t errsize)
{
    char msg[300] = "";
    struct hn_sku **rows = NULL;
    size_t n = 0;
    int rc = parse_rows(data, len, &rows, &n, msg, sizeof(msg));
    if (rc == 0) {
        rc = merge(t, rows, n, msg, sizeof(msg));
        if (rc < 0)
            rows_free(rows, n);
        else
            free(rows); /* the rows now belong to t */
    }
    if (rc < 0)
        hn_set_err(err, errsize, "%s: %s", label, msg);
    return rc;
}

/* ---- public ---- */

int hn_sku_table_overlay(struct hn_sku_table *t, const char *path, char *err, size_t errsize)
{
    char *data = NULL;
    size_t len = 0;
    int rc = hn_csv_read_file(path, &data, &len, err, errsize);
    if (rc < 0)
        return rc;
    rc = load_buffer(t, data, len, path, err, errsize);
    free(data);
    return rc;
}

struct hn_sku_table *hn_sku_table_new(const char *path, char *err, size_t errsize)
{
    struct hn_sku_table *t = xcalloc(1, sizeof(*t));
    if (hn_sku_table_overlay(t, path, err, errsize) < 0) {
        hn_sku_table_free(t);
        return NULL;
    }
    return t;
}

struct hn_sku_table *hn_sku_table_from_buffer(const char *data, size_t len, const char *label,
                                              char *err, size_t errsize)
{
    struct hn_sku_table *t = xcalloc(1, sizeof(*t));
    if (load_buffer(t, data, len, label ? label : "(buffer)", err, errsize) < 0) {
        hn_sku_table_free(t);
        return NULL;
    }
    return t;
}

void hn_sku_table_free(struct hn_sku_table *t)
{
    if (!t)
        return;
    rows_free(t->rows, t->n);
    free(t);
}

size_t hn_sku_table_size(const struct hn_sku_table *t)
{
    return t ? t->n : 0;
}

const struct hn_sku *hn_sku_table_at(const struct hn_sku_table *t, size_t i)
{
    return t && i < t->n ? t->rows[i] : NULL;
}

const struct hn_sku *hn_sku_find(const struct hn_sku_table *t, const char *name)
{
    if (!t || !name)
        return NULL;
    return find_in(t->rows, t->n, name);
}

/* True if pat occurs in hay[0..hlen) as whole words, ignoring case. */
static int has_word(const char *hay, size_t hlen, const char *pat)
{
    size_t plen = strlen(pat);
    if (plen == 0 || plen > hlen)
        return 0;
    for (size_t i = 0; i + plen <= hlen; i++) {
        if (i > 0 && is_word_char((unsigned char)hay[i - 1]))
            continue;
        if (i + plen < hlen && is_word_char((unsigned char)hay[i + plen]))
            continue;
        if (strncasecmp(hay + i, pat, plen) == 0)
            return 1;
    }
    return 0;
}

const struct hn_sku *hn_sku_match_model(const struct hn_sku_table *t, const char *product_name)
{
    if (!t || !product_name)
        return NULL;
    size_t hlen = strnlen(product_name, HN_SKU_MODEL_MAX - 1);
    const struct hn_sku *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < t->n; i++) {
        const struct hn_sku *s = t->rows[i];
        for (size_t j = 0; j < s->n_names; j++) {
            size_t plen = strlen(s->names[j]);
            /* Ties go to the earlier row. */
            if (plen > best_len && has_word(product_name, hlen, s->names[j])) {
                best = s;
                best_len = plen;
            }
        }
    }
    return best;
}

double hn_sku_peak_flops(const struct hn_sku *s, const char *dtype)
{
    if (!s || !dtype)
        return NAN;
    for (size_t i = 0; i < s->n_peaks; i++) {
        if (strcasecmp(s->peak[i].dtype, dtype) == 0)
            return s->peak[i].flops;
    }
    return NAN;
}

const char *hn_sku_default_path(void)
{
    return HN_DATADIR "/skus.csv";
}
