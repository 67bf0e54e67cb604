/*
 * sku.h - the accelerator SKU table: per GPU model, dense peak FLOP/s per data type, memory
 * size and bandwidth, NVLink bandwidth, power and slowdown temperature.
 *
 * The figures are data, not code: data/skus.csv ships with houston (every row cited in
 * data/SOURCE.md, columns in docs/skus.md) and a site may replace it or lay its own file over
 * it. A file has one row per SKU and one `<dtype>_tflops` column per data type (fp64, tf32,
 * bf16, fp16, fp8, fp4 in the shipped file; any lower-case name is accepted), so adding a data
 * type is adding a column. Values are DENSE peak figures; an empty cell means "not published"
 * and reads back as NaN.
 *
 * hn_sku_table_new() reads one file, checks every cell (numbers parse, lie within sane ranges
 * for their units, SKU names unique, a product-name pattern claimed by one SKU only) and
 * returns an immutable table, or NULL with "path: line N: what" in err. hn_sku_table_overlay()
 * lays a second file over a table: its rows replace the rows of the same SKU whole, new SKUs
 * are added, and a failed overlay leaves the table as it was. The caller owns the table; SKUs
 * and their strings are borrowed from it until it is freed or overlaid (an overlay frees the
 * rows it replaces). Reads of a table that no thread is overlaying are safe from any number of
 * threads at once; hn_sku_table_overlay() needs the table to itself.
 *
 * Model matching: the `names` column lists ';'-separated patterns that are matched, ignoring
 * case, against the product name NVML reports (nvmlDeviceGetName, e.g. "NVIDIA H100 80GB
 * HBM3"). A pattern matches only as whole words: the characters on either side of the match
 * must not be letters or digits, so "B200" does not match "NVIDIA GB200" and "H200" does not
 * match "NVIDIA GH200 480GB". Of all matching patterns the longest wins ("H200 NVL" beats
 * "H200" for "NVIDIA H200 NVL").
 */
#ifndef HN_SKU_H
#define HN_SKU_H

#include <stddef.h>

#define HN_SKU_MAX_DTYPES 12  /* <dtype>_tflops columns per file */
#define HN_SKU_MAX_NAMES  16  /* patterns in one `names` cell */
#define HN_SKU_NAME_MAX   32  /* bytes of a SKU name, NUL included (as control.h) */
#define HN_SKU_DTYPE_MAX  16  /* bytes of a dtype name, NUL included */
#define HN_SKU_MODEL_MAX  256 /* bytes of a product name hn_sku_match_model() looks at */

struct hn_sku_peak {
    char dtype[HN_SKU_DTYPE_MAX]; /* lower case, e.g. "bf16" */
    double flops;                 /* dense peak, FLOP/s (the file holds TFLOP/s) */
};

struct hn_sku {
    char *name;   /* `sku`, e.g. "H100"; letters, digits, '.', '_', '-' */
    char *vendor; /* "" when the column is absent */
    char *source; /* key of the data/SOURCE.md section that cites the row; may be "" */
    char **names; /* n_names product-name patterns */
    size_t n_names;
    struct hn_sku_peak peak[HN_SKU_MAX_DTYPES]; /* only the dtypes with a value */
    size_t n_peaks;
    double hbm_gib;     /* device memory, GiB */
    double hbm_tbps;    /* device memory bandwidth, TB/s (10^12 bytes/s) */
    double nvlink_gbps; /* NVLink bandwidth per GPU, GB/s (10^9 bytes/s), both directions */
    double tdp_w;       /* maximum board power, W */
    double slowdown_c;  /* GPU temperature where hardware slowdown starts, degrees C */
    unsigned line;      /* line of the row in the file it came from */
};

struct hn_sku_table;

/* Loads a SKU file. The header row must name `sku` and `names`; every other column must be
 * one of vendor, source, hbm_gib, hbm_tbps, nvlink_gbps, tdp_w, slowdown_c or <dtype>_tflops
 * (an unknown column is refused so that a misspelt one cannot be silently ignored). Returns
 * NULL with a message in err when the file is missing, not a regular file, larger than
 * HN_CSV_MAX_FILE, malformed, or holds a bad value, a duplicate SKU or a product-name pattern
 * claimed by two SKUs. */
struct hn_sku_table *hn_sku_table_new(const char *path, char *err, size_t errsize);

/* Like hn_sku_table_new() over data[0..len) instead of a file; label names it in messages.
 * The fuzz target's entry point. */
struct hn_sku_table *hn_sku_table_from_buffer(const char *data, size_t len, const char *label,
                                              char *err, size_t errsize);

/* Lays the file at path over t (see above). Returns 0, or a negative errno with a message in
 * err and t unchanged. */
int hn_sku_table_overlay(struct hn_sku_table *t, const char *path, char *err, size_t errsize);

void hn_sku_table_free(struct hn_sku_table *t);

/* Number of SKUs, and the i-th in file order (overlaid new SKUs last); NULL past the end. */
size_t hn_sku_table_size(const struct hn_sku_table *t);
const struct hn_sku *hn_sku_table_at(const struct hn_sku_table *t, size_t i);

/* The SKU called name, ignoring case; NULL if none (or t or name is NULL). */
const struct hn_sku *hn_sku_find(const struct hn_sku_table *t, const char *name);

/* The SKU whose `names` pattern matches the NVML product name (whole words, ignoring case,
 * longest pattern wins; only the first HN_SKU_MODEL_MAX - 1 bytes are looked at). NULL when no
 * pattern matches. */
const struct hn_sku *hn_sku_match_model(const struct hn_sku_table *t, const char *product_name);

/* Dense peak FLOP/s of s for dtype (ignoring case, e.g. "bf16"); NaN when the SKU has no
 * figure for it or s or dtype is NULL. */
double hn_sku_peak_flops(const struct hn_sku *s, const char *dtype);

/* HN_DATADIR "/skus.csv": the shipped table when houston runs from its source tree. */
const char *hn_sku_default_path(void);

#endif
