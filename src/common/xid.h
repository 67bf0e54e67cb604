/*
 * xid.h - the NVIDIA Xid and NVSwitch SXid catalogs, and the RFC 4180 CSV reader that loads
 * them.
 *
 * The catalogs are data files shipped with houston (data/xid-catalog.csv and
 * data/sxid-catalog.csv, see data/SOURCE.md), not tables compiled into the binary, so a site
 * can update them when NVIDIA adds codes. hn_xid_catalog_new() reads one whole file, checks
 * every row and returns an immutable catalog; lookups are a binary search by code. The caller
 * owns the catalog and frees it with hn_xid_catalog_free(); the entries and their strings are
 * borrowed from it. A loaded catalog is never modified, so any number of threads may look up
 * codes in it at once.
 *
 * Fatality follows the product spec: an Xid is fatal iff the catalog gives an immediate action
 * and that action is neither IGNORE nor RESTART_APP. A code missing from the catalog is not
 * fatal; hn_xid_lookup() returns NULL for it so callers can report "unknown Xid".
 *
 * The CSV reader (struct hn_csv_reader) is generic: it splits an in-memory buffer into records
 * of fields, handles quoted fields with embedded newlines and "" escapes, accepts LF and CRLF
 * line ends, caps field and record sizes, and names the line of any malformed input. It owns
 * one buffer allocated at init and reused for every record. One reader belongs to one thread.
 */
#ifndef HN_XID_H
#define HN_XID_H

#include <stdbool.h>
#include <stddef.h>

/* ---- CSV reader (RFC 4180) ---- */

#define HN_CSV_MAX_FIELDS 64                        /* fields per record */
#define HN_CSV_MAX_RECORD ((size_t)64 * 1024)       /* unescaped bytes per record, default cap */
#define HN_CSV_MAX_FIELD  ((size_t)16 * 1024)       /* unescaped bytes per field, default cap */
#define HN_CSV_MAX_FILE   ((size_t)4 * 1024 * 1024) /* the catalog loaders refuse bigger files */

struct hn_csv_reader {
    const char *p;     /* next unread input byte */
    const char *end;   /* one past the last input byte */
    unsigned line;     /* physical line of *p, 1-based */
    unsigned rec_line; /* physical line on which the current record starts */
    size_t max_field;  /* caps; set by init, a caller may lower them before reading */
    size_t max_record;
    char *store; /* the current record's unescaped fields, each NUL-terminated */
    size_t nfields;
    const char *field[HN_CSV_MAX_FIELDS]; /* borrowed from store until the next call */
    size_t field_len[HN_CSV_MAX_FIELDS];
};

/* Prepares a reader over data[0..len), which the caller keeps alive while reading. The input
 * may hold anything; NUL bytes are reported as malformed. */
void hn_csv_reader_init(struct hn_csv_reader *r, const char *data, size_t len);
void hn_csv_reader_fini(struct hn_csv_reader *r);

/* Reads the next record into r->field[0..nfields). Blank lines between records are skipped.
 * Returns 1 for a record, 0 at the end of the input, -EINVAL for malformed input (a quote
 * inside an unquoted field, text after a closing quote, an unterminated quote, a NUL byte) or
 * -E2BIG past a cap; then err holds "line N: what" and the reader must not be used again. */
int hn_csv_reader_next(struct hn_csv_reader *r, char *err, size_t errsize);

/* Reads a whole regular file of at most HN_CSV_MAX_FILE bytes into a new heap buffer (NUL
 * terminated; the caller frees it). Returns 0 or a negative errno with a reason in err. */
int hn_csv_read_file(const char *path, char **out, size_t *len, char *err, size_t errsize);

/* ---- Xid catalog ---- */

struct hn_xid_entry {
    unsigned code;
    const char *mnemonic;                 /* e.g. GSP_RPC_TIMEOUT; may hold a newline */
    const char *description;              /* NVIDIA's text */
    const char *immediate_resolution;     /* as in the file: RESTART_APP, RESET_GPU, "" ... */
    const char *investigatory_resolution; /* "" if the column is absent or empty */
    const char *event_type;               /* gpud_event_type: Warning, Fatal, Info or "" */
    const char *repair_actions;           /* gpud_repair_actions, ';'-joined, may be "" */
    bool marks_unhealthy;                 /* gpud_marks_unhealthy = yes */
};

struct hn_xid_catalog;

/* Loads a catalog CSV with a header row naming at least the columns code, mnemonic,
 * description, immediate_resolution, gpud_event_type and gpud_marks_unhealthy (others are
 * ignored). Returns NULL with a message in err when the file is missing, larger than
 * HN_CSV_MAX_FILE, malformed, or holds a bad or duplicate code. */
struct hn_xid_catalog *hn_xid_catalog_new(const char *path, char *err, size_t errsize);
void hn_xid_catalog_free(struct hn_xid_catalog *cat);

/* Returns the entry for code, or NULL if the catalog has none (or cat is NULL). */
const struct hn_xid_entry *hn_xid_lookup(const struct hn_xid_catalog *cat, unsigned code);
size_t hn_xid_catalog_size(const struct hn_xid_catalog *cat);
/* The i-th entry in ascending code order, i < size. */
const struct hn_xid_entry *hn_xid_catalog_at(const struct hn_xid_catalog *cat, size_t i);

/* 1 iff e has an immediate action other than IGNORE and RESTART_APP; 0 for NULL. */
int hn_xid_is_fatal(const struct hn_xid_entry *e);

/* HN_DATADIR "/xid-catalog.csv": the shipped catalog when houston runs from its source tree. */
const char *hn_xid_default_catalog(void);

/* ---- SXid (NVSwitch) catalog ---- */

struct hn_sxid_entry {
    unsigned code;
    const char *name; /* e.g. "LTSSM Fault Up" */
    const char *description;
    bool potential_fatal;
    bool always_fatal;
    const char *impact;
    const char *recovery;
    const char *event_type; /* gpud_event_type: Fatal or Warning */
    const char *repair_actions;
};

struct hn_sxid_catalog;

/* Like hn_xid_catalog_new(); required columns: sxid, name, description, potential_fatal,
 * always_fatal, gpud_event_type. */
struct hn_sxid_catalog *hn_sxid_catalog_new(const char *path, char *err, size_t errsize);
void hn_sxid_catalog_free(struct hn_sxid_catalog *cat);
const struct hn_sxid_entry *hn_sxid_lookup(const struct hn_sxid_catalog *cat, unsigned code);
size_t hn_sxid_catalog_size(const struct hn_sxid_catalog *cat);
const struct hn_sxid_entry *hn_sxid_catalog_at(const struct hn_sxid_catalog *cat, size_t i);

/* HN_DATADIR "/sxid-catalog.csv". */
const char *hn_sxid_default_catalog(void);

#endif
