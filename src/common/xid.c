/*
 * xid.c - RFC 4180 CSV reader and the Xid/SXid catalog loaders (see xid.h).
 *
 * Both catalogs are loaded by one table-driven loader: a column table maps header names to
 * members of the entry struct (code, string or boolean), so the two catalogs differ only in
 * their tables. Entries are kept sorted by code for binary search.
 */
#include "common/xid.h"

#include "common/util.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- CSV reader ---- */

void hn_csv_reader_init(struct hn_csv_reader *r, const char *data, size_t len)
{
    memset(r, 0, sizeof(*r));
    r->p = data;
    r->end = data + len;
    r->line = 1;
    r->max_field = HN_CSV_MAX_FIELD;
    r->max_record = HN_CSV_MAX_RECORD;
    /* Room for the largest record plus one NUL per field; never reallocated. */
    r->store = xmalloc(HN_CSV_MAX_RECORD + HN_CSV_MAX_FIELDS);
}

void hn_csv_reader_fini(struct hn_csv_reader *r)
{
    free(r->store);
    r->store = NULL;
    r->nfields = 0;
}

/* True if p starts a line end: "\n", "\r\n", or a final "\r". */
static int at_eol(const struct hn_csv_reader *r)
{
    if (r->p >= r->end)
        return 0;
    if (*r->p == '\n')
        return 1;
    return *r->p == '\r' && (r->p + 1 == r->end || r->p[1] == '\n');
}

static void skip_eol(struct hn_csv_reader *r)
{
    if (*r->p == '\r')
        r->p++;
    if (r->p < r->end && *r->p == '\n')
        r->p++;
    r->line++;
}

/* Appends one unescaped byte to the current field; checks both caps. */
static int put(struct hn_csv_reader *r, size_t *used, size_t field_start, char c, char *err,
               size_t errsize)
{
    if (c == '\0') {
        hn_set_err(err, errsize, "line %u: NUL byte", r->line);
        return -EINVAL;
    }
    if (*used - field_start >= r->max_field) {
        hn_set_err(err, errsize, "line %u: field longer than %zu bytes", r->rec_line, r->max_field);
        return -E2BIG;
    }
    size_t max_record = r->max_record < HN_CSV_MAX_RECORD ? r->max_record : HN_CSV_MAX_RECORD;
    if (*used >= max_record) {
        hn_set_err(err, errsize, "line %u: record longer than %zu bytes", r->rec_line, max_record);
        return -E2BIG;
    }
    r->store[(*used)++] = c;
    return 0;
}

static int read_quoted(struct hn_csv_reader *r, size_t *used, size_t start, char *err,
                       size_t errsize)
{
    unsigned open_line = r->line;
    r->p++; /* the opening quote */
    for (;;) {
        if (r->p >= r->end) {
            hn_set_err(err, errsize, "line %u: quoted field opened here is never closed",
                       open_line);
            return -EINVAL;
        }
        char c = *r->p++;
        if (c == '"') {
            if (r->p < r->end && *r->p == '"') {
                r->p++;
            } else {
                break;
            }
        } else if (c == '\n') {
            r->line++;
        }
        int rc = put(r, used, start, c, err, errsize);
        if (rc < 0)
            return rc;
    }
    if (r->p < r->end && *r->p != ',' && !at_eol(r)) {
        hn_set_err(err, errsize, "line %u: text after the closing quote of a field", r->line);
        return -EINVAL;
    }
    return 0;
}

static int read_plain(struct hn_csv_reader *r, size_t *used, size_t start, char *err,
                      size_t errsize)
{
    while (r->p < r->end && *r->p != ',' && !at_eol(r)) {
        if (*r->p == '"') {
            hn_set_err(err, errsize, "line %u: quote inside an unquoted field", r->line);
            return -EINVAL;
        }
        int rc = put(r, used, start, *r->p, err, errsize);
        if (rc < 0)
            return rc;
        r->p++;
    }
    return 0;
}

int hn_csv_reader_next(struct hn_csv_reader *r, char *err, size_t errsize)
{
    int rc;
    r->nfields = 0;
    if (!r->store) {
        hn_set_err(err, errsize, "CSV reader used after an error");
        return -EINVAL;
    }
    while (at_eol(r))
        skip_eol(r);
    if (r->p >= r->end)
        return 0;

    r->rec_line = r->line;
    size_t used = 0;
    for (;;) {
        if (r->nfields == HN_CSV_MAX_FIELDS) {
            hn_set_err(err, errsize, "line %u: more than %d fields", r->rec_line,
                       HN_CSV_MAX_FIELDS);
            rc = -E2BIG;
            goto out_fail;
        }
        size_t start = used;
        rc = (r->p < r->end && *r->p == '"') ? read_quoted(r, &used, start, err, errsize)
                                             : read_plain(r, &used, start, err, errsize);
        if (rc < 0)
            goto out_fail;
        r->field[r->nfields] = r->store + start;
        r->field_len[r->nfields] = used - start;
        r->nfields++;
        /* The store holds max_record + one NUL per field, so this always fits. */
        r->store[used++] = '\0';

        if (r->p >= r->end)
            return 1;
        if (*r->p == ',') {
            r->p++;
            continue;
        }
        skip_eol(r); /* read_* stop only at ',', a line end or the end of input */
        return 1;
    }

out_fail:
    /* A failed reader stays failed: a caller that ignores the error cannot misread. */
    hn_csv_reader_fini(r);
    return rc;
}

/* ---- table-driven catalog loader ---- */

enum col_type { COL_CODE, COL_STR, COL_BOOL };

struct col_spec {
    const char *name;
    enum col_type type;
    size_t off; /* of the member in the entry struct */
    int required;
};

struct table {
    char *rows; /* n entries of row_size bytes, sorted by code (each struct's first member) */
    size_t n;
    size_t row_size;
    const struct col_spec *cols;
    size_t ncols;
};

struct hn_xid_catalog {
    struct table t;
};

struct hn_sxid_catalog {
    struct table t;
};

static_assert(offsetof(struct hn_xid_entry, code) == 0, "code must come first");
static_assert(offsetof(struct hn_sxid_entry, code) == 0, "code must come first");

#define XCOL(name, type, member, req)                                                              \
    {                                                                                              \
        name, type, offsetof(struct hn_xid_entry, member), req                                     \
    }
static const struct col_spec xid_cols[] = {
    XCOL("code", COL_CODE, code, 1),
    XCOL("mnemonic", COL_STR, mnemonic, 1),
    XCOL("description", COL_STR, description, 1),
    XCOL("immediate_resolution", COL_STR, immediate_resolution, 1),
    XCOL("investigatory_resolution", COL_STR, investigatory_resolution, 0),
    XCOL("gpud_event_type", COL_STR, event_type, 1),
    XCOL("gpud_repair_actions", COL_STR, repair_actions, 0),
    XCOL("gpud_marks_unhealthy", COL_BOOL, marks_unhealthy, 1),
};

#define SCOL(name, type, member, req)                                                              \
    {                                                                                              \
        name, type, offsetof(struct hn_sxid_entry, member), req                                    \
    }
static const struct col_spec sxid_cols[] = {
    SCOL("sxid", COL_CODE, code, 1),
    SCOL("name", COL_STR, name, 1),
    SCOL("description", COL_STR, description, 1),
    SCOL("potential_fatal", COL_BOOL, potential_fatal, 1),
    SCOL("always_fatal", COL_BOOL, always_fatal, 1),
    SCOL("impact", COL_STR, impact, 0),
    SCOL("recovery", COL_STR, recovery, 0),
    SCOL("gpud_event_type", COL_STR, event_type, 1),
    SCOL("gpud_repair_actions", COL_STR, repair_actions, 0),
};

int hn_csv_read_file(const char *path, char **out, size_t *len, char *err, size_t errsize)
{
    int rc;
    /* O_NONBLOCK keeps a FIFO from blocking the open; fstat then refuses it. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        rc = -errno;
        hn_set_err(err, errsize, "%s: %s", path, strerror(errno));
        return rc;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        rc = -errno;
        hn_set_err(err, errsize, "%s: %s", path, strerror(errno));
        goto out_close;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = -EINVAL;
        hn_set_err(err, errsize, "%s: not a regular file", path);
        goto out_close;
    }
    /* Read one byte past the cap so a file that grew since fstat is still refused. */
    char *buf = xmalloc(HN_CSV_MAX_FILE + 1);
    size_t n = 0;
    while (n <= HN_CSV_MAX_FILE) {
        ssize_t got = read(fd, buf + n, HN_CSV_MAX_FILE + 1 - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            rc = -errno;
            hn_set_err(err, errsize, "%s: %s", path, strerror(errno));
            goto out_free;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    if (n > HN_CSV_MAX_FILE) {
        rc = -E2BIG;
        hn_set_err(err, errsize, "%s: larger than %zu bytes", path, HN_CSV_MAX_FILE);
        goto out_free;
    }
    close(fd);
    *out = buf;
    *len = n;
    return 0;

out_free:
    free(buf);
out_close:
    close(fd);
    return rc;
}

static void table_free_rows(struct table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        char *row = t->rows + i * t->row_size;
        for (size_t c = 0; c < t->ncols; c++) {
            if (t->cols[c].type == COL_STR) {
                char *s;
                memcpy(&s, row + t->cols[c].off, sizeof(s));
                free(s);
            }
        }
    }
    free(t->rows);
    t->rows = NULL;
    t->n = 0;
}

static int parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"yes", "true", "1"};
    static const char *const no[] = {"no", "false", "0", ""};
    for (size_t i = 0; i < HN_ARRAY_LEN(yes); i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = true;
            return 0;
        }
    }
    for (size_t i = 0; i < HN_ARRAY_LEN(no); i++) {
        if (strcasecmp(s, no[i]) == 0) {
            *out = false;
            return 0;
        }
    }
    return -EINVAL;
}

/* Stores field s (or "" for an absent column) into the member described by col. */
static int fill_cell(char *row, const struct col_spec *col, const char *s, unsigned line, char *err,
                     size_t errsize)
{
    switch (col->type) {
    case COL_CODE: {
        uint64_t v;
        if (hn_parse_u64(s, 10, &v) != 0 || v > UINT_MAX) {
            hn_set_err(err, errsize, "line %u: %s '%.40s' is not a code", line, col->name, s);
            return -EINVAL;
        }
        unsigned code = (unsigned)v;
        memcpy(row + col->off, &code, sizeof(code));
        return 0;
    }
    case COL_STR: {
        char *dup = xstrdup(s);
        memcpy(row + col->off, &dup, sizeof(dup));
        return 0;
    }
    case COL_BOOL: {
        bool b;
        if (parse_bool(s, &b) != 0) {
            hn_set_err(err, errsize, "line %u: %s '%.40s' is not yes/no/true/false", line,
                       col->name, s);
            return -EINVAL;
        }
        memcpy(row + col->off, &b, sizeof(b));
        return 0;
    }
    }
    return -EINVAL;
}

static int cmp_code(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return (x > y) - (x < y);
}

/* Maps each column spec to its index in the header record; -1 if absent. */
static int map_header(const struct hn_csv_reader *r, const struct table *t, int *idx, char *err,
                      size_t errsize)
{
    for (size_t c = 0; c < t->ncols; c++) {
        idx[c] = -1;
        for (size_t f = 0; f < r->nfields; f++) {
            const char *name = r->field[f];
            /* A UTF-8 byte-order mark before the first name is not part of it. */
            if (f == 0 && strncmp(name, "\xEF\xBB\xBF", 3) == 0)
                name += 3;
            if (strcmp(name, t->cols[c].name) == 0) {
                idx[c] = (int)f;
                break;
            }
        }
        if (idx[c] < 0 && t->cols[c].required) {
            hn_set_err(err, errsize, "line %u: header lacks column '%s'", r->rec_line,
                       t->cols[c].name);
            return -EINVAL;
        }
    }
    return 0;
}

static int table_load(struct table *t, const char *path, char *err, size_t errsize)
{
    char msg[200] = "";
    char *data = NULL;
    size_t len = 0;
    int rc = hn_csv_read_file(path, &data, &len, err, errsize);
    if (rc < 0)
        return rc;

    struct hn_csv_reader r;
    hn_csv_reader_init(&r, data, len);
    int idx[HN_CSV_MAX_FIELDS];
    assert(t->ncols <= HN_ARRAY_LEN(idx));
    size_t cap = 0, header_fields;

    rc = hn_csv_reader_next(&r, msg, sizeof(msg));
    if (rc == 0) {
        snprintf(msg, sizeof(msg), "empty file");
        rc = -EINVAL;
    }
    if (rc < 0)
        goto out_fail;
    header_fields = r.nfields;
    rc = map_header(&r, t, idx, msg, sizeof(msg));
    if (rc < 0)
        goto out_fail;

    while ((rc = hn_csv_reader_next(&r, msg, sizeof(msg))) == 1) {
        if (r.nfields != header_fields) {
            snprintf(msg, sizeof(msg), "line %u: %zu fields, the header has %zu", r.rec_line,
                     r.nfields, header_fields);
            rc = -EINVAL;
            goto out_fail;
        }
        if (t->n == cap) {
            cap = cap ? cap * 2 : 64;
            t->rows = xrealloc(t->rows, cap * t->row_size);
        }
        char *row = t->rows + t->n * t->row_size;
        memset(row, 0, t->row_size);
        t->n++; /* counted before filling so a failure frees what was filled */
        for (size_t c = 0; c < t->ncols; c++) {
            const char *s = idx[c] >= 0 ? r.field[idx[c]] : "";
            rc = fill_cell(row, &t->cols[c], s, r.rec_line, msg, sizeof(msg));
            if (rc < 0)
                goto out_fail;
        }
    }
    if (rc < 0)
        goto out_fail;

    qsort(t->rows, t->n, t->row_size, cmp_code);
    for (size_t i = 1; i < t->n; i++) {
        unsigned code = *(const unsigned *)(t->rows + i * t->row_size);
        if (code == *(const unsigned *)(t->rows + (i - 1) * t->row_size)) {
            snprintf(msg, sizeof(msg), "code %u appears twice", code);
            rc = -EINVAL;
            goto out_fail;
        }
    }
    hn_csv_reader_fini(&r);
    free(data);
    return 0;

out_fail:
    hn_set_err(err, errsize, "%s: %s", path, msg);
    table_free_rows(t);
    hn_csv_reader_fini(&r);
    free(data);
    return rc;
}

static const void *table_lookup(const struct table *t, unsigned code)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const char *row = t->rows + mid * t->row_size;
        unsigned c = *(const unsigned *)row;
        if (c == code)
            return row;
        if (c < code)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* ---- Xid ---- */

struct hn_xid_catalog *hn_xid_catalog_new(const char *path, char *err, size_t errsize)
{
    struct hn_xid_catalog *cat = xcalloc(1, sizeof(*cat));
    cat->t.row_size = sizeof(struct hn_xid_entry);
    cat->t.cols = xid_cols;
    cat->t.ncols = HN_ARRAY_LEN(xid_cols);
    if (table_load(&cat->t, path, err, errsize) < 0) {
        free(cat);
        return NULL;
    }
    return cat;
}

void hn_xid_catalog_free(struct hn_xid_catalog *cat)
{
    if (!cat)
        return;
    table_free_rows(&cat->t);
    free(cat);
}

const struct hn_xid_entry *hn_xid_lookup(const struct hn_xid_catalog *cat, unsigned code)
{
    return cat ? table_lookup(&cat->t, code) : NULL;
}

size_t hn_xid_catalog_size(const struct hn_xid_catalog *cat)
{
    return cat ? cat->t.n : 0;
}

const struct hn_xid_entry *hn_xid_catalog_at(const struct hn_xid_catalog *cat, size_t i)
{
    if (!cat || i >= cat->t.n)
        return NULL;
    return (const struct hn_xid_entry *)(const void *)(cat->t.rows + i * cat->t.row_size);
}

int hn_xid_is_fatal(const struct hn_xid_entry *e)
{
    if (!e || !e->immediate_resolution || e->immediate_resolution[0] == '\0')
        return 0;
    return strcmp(e->immediate_resolution, "IGNORE") != 0 &&
           strcmp(e->immediate_resolution, "RESTART_APP") != 0;
}

const char *hn_xid_default_catalog(void)
{
    return HN_DATADIR "/xid-catalog.csv";
}

/* ---- SXid ---- */

struct hn_sxid_catalog *hn_sxid_catalog_new(const char *path, char *err, size_t errsize)
{
    struct hn_sxid_catalog *cat = xcalloc(1, sizeof(*cat));
    cat->t.row_size = sizeof(struct hn_sxid_entry);
    cat->t.cols = sxid_cols;
    cat->t.ncols = HN_ARRAY_LEN(sxid_cols);
    if (table_load(&cat->t, path, err, errsize) < 0) {
        free(cat);
        return NULL;
    }
    return cat;
}

void hn_sxid_catalog_free(struct hn_sxid_catalog *cat)
{
    if (!cat)
        return;
    table_free_rows(&cat->t);
    free(cat);
}

const struct hn_sxid_entry *hn_sxid_lookup(const struct hn_sxid_catalog *cat, unsigned code)
{
    return cat ? table_lookup(&cat->t, code) : NULL;
}

size_t hn_sxid_catalog_size(const struct hn_sxid_catalog *cat)
{
    return cat ? cat->t.n : 0;
}

const struct hn_sxid_entry *hn_sxid_catalog_at(const struct hn_sxid_catalog *cat, size_t i)
{
    if (!cat || i >= cat->t.n)
        return NULL;
    return (const struct hn_sxid_entry *)(const void *)(cat->t.rows + i * cat->t.row_size);
}

const char *hn_sxid_default_catalog(void)
{
    return HN_DATADIR "/sxid-catalog.csv";
}
