/*
 * straggler_cmd.c - `houston straggler --csv FILE`: the straggler detector (straggler.h) run
 * offline over a CSV of per-rank step times, one JSON line per detection.
 *
 * The whole input is read first (rows may come in any order), malformed rows are counted and
 * skipped, the rows are sorted by step and each step becomes one call of hn_strag_step() with
 * NaN for the ranks that have no row in it. Rank ids may be any non-negative integers; the
 * detector sees them as dense indexes and the output names the ids. A healthy job prints
 * nothing. Exit 0 when the input was read (whatever was found), 2 for bad usage or input that
 * cannot be read at all, with one `houston straggler: ...` line on stderr.
 */
#include "verbs.h"

#include "common/opts.h"
#include "common/settings.h"
#include "common/util.h"
#include "jobs/straggler.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define LINE_MAX_BYTES ((size_t)64 * 1024)  /* longer lines are malformed rows */
#define MAX_ROWS       ((size_t)1 << 25)    /* 32 Mi rows, 1 GiB of them in memory */
#define MAX_FIELDS     (LINE_MAX_BYTES + 1) /* a line of commas: every field of it fits */

struct strag_opts {
    const char *csv;
    const char *step_col, *rank_col, *seconds_col;
    const char *comm_col; /* NULL: no phase times */
    int no_transients;
    int verbose;
    struct hn_strag_config cfg;
};

struct row {
    uint64_t step;
    uint64_t rank; /* the id from the file; a dense index after map_ranks() */
    uint32_t seq;  /* input order, so that the first of two duplicate rows wins */
    double seconds;
};

struct rows {
    struct row *v;
    size_t n, cap;
    uint64_t malformed;
    unsigned first_bad_line;
    char first_bad[128];
};

void hn_usage_straggler(FILE *out)
{
    fprintf(out,
            "usage: houston straggler --csv FILE|- [--step-col NAME] [--rank-col NAME]\n"
            "                         [--seconds-col NAME] [--comm-col NAME]\n"
            "                         [--no-transients] [--verbose]\n"
            "                         [--warmup N] [--threshold H] [--big-threshold H]\n"
            "                         [--min-slowdown F]\n"
            "                         [--transient-min F] [--from-start-min F]\n"
            "                         [--job-min-slowdown F] [--quorum F]\n"
            "                         [--baseline-alpha A] [--alpha-noise N]\n\n"
            "Finds stragglers in per-rank step times after the fact: the rank that became\n"
            "persistently slower than its peers, from which step and by how much; one-off spikes\n"
            "(transient); the whole job slowing down (job_slowdown); the end of an episode\n"
            "(recovered); a rank already slow when its baseline was learned (from_start).\n"
            "docs/straggler.md explains the method.\n\n"
            "input:\n"
            "  --csv FILE           CSV with a header line naming the columns, one row per rank\n"
            "                       and step (any order; extra columns ignored); - reads stdin\n"
            "  --step-col NAME      column with the step number, an integer (default: step)\n"
            "  --rank-col NAME      column with the rank, an integer (default: rank)\n"
            "  --seconds-col NAME   column with the time (default: seconds). Only ratios\n"
            "                       matter, so any unit or a normalised value works. Give the\n"
            "                       time each rank computed (step minus collective wait): in\n"
            "                       synchronous training the wall step time is nearly equal on\n"
            "                       every rank. Alibaba PAI traces: --step-col time\n"
            "                       --rank-col worker --seconds-col batch_time_norm\n"
            "  --comm-col NAME      column with the time the rank waited in collectives in the\n"
            "                       step, subtracted from --seconds-col (phase times)\n"
            "output:\n"
            "  --no-transients      leave out transient detections (one-off spikes)\n"
            "  --verbose            a summary line on stderr (rows, ranks, steps)\n"
            "detector (defaults in brackets):\n"
            "  --warmup N           reports per rank that learn its baseline [16], 3..16\n"
            "  --threshold H        evidence (log-likelihood ratio) that fires [12.5]\n"
            "  --big-threshold H    the same for the CUSUM tuned to large slowdowns [19]\n"
            "  --min-slowdown F     smallest persistent slowdown reported [0.025]\n"
            "  --transient-min F    smallest one-step slowdown reported as transient [0.5]\n"
            "  --from-start-min F   slowdown vs peers from the start that is reported [0.2]\n"
            "  --job-min-slowdown F smallest whole-job slowdown reported [0.1]\n"
            "  --quorum F           fraction of ranks a step needs to count [0.5]\n"
            "  --baseline-alpha A   weight of a report in a rank's baseline [0.015625], 0..0.5\n"
            "  --alpha-noise N      ranks noisier than N weigh A * N / noise [0.02]; 1: off\n\n"
            "Prints one JSON object per line and detection, nothing for a healthy job:\n"
            "  {\"rank\":6,\"onset_step\":1811,\"detect_step\":1881,\"slowdown\":0.8120,\n"
            "   \"kind\":\"persistent\",\"vs_peers\":0.7644,\"peak\":1.4582,\"noise\":0.0331,\n"
            "   \"score\":27.24}\n"
            "slowdown is relative to the rank's own normal (0.30 = 30%% slower); vs_peers to\n"
            "the typical rank; transient and recovered add end_step; job-level lines have\n"
            "\"rank\":\"all\". Malformed rows are skipped and counted on stderr. Exit 0 when\n"
            "the input was read, 2 for bad usage or unreadable input.\n");
}

/* ---- options ---- */

enum {
    OPT_CSV = 256,
    OPT_STEP_COL,
    OPT_RANK_COL,
    OPT_SECONDS_COL,
    OPT_COMM_COL,
    OPT_NO_TRANSIENTS,
    OPT_VERBOSE,
    OPT_SETTING, /* the detector's thresholds, one value each (hn_strag_settings): this and up */
};

/* The input and output options; the thresholds' flags follow, made from hn_strag_settings. */
static const struct option io_opts[] = {
    {"csv", required_argument, NULL, OPT_CSV},
    {"step-col", required_argument, NULL, OPT_STEP_COL},
    {"rank-col", required_argument, NULL, OPT_RANK_COL},
    {"seconds-col", required_argument, NULL, OPT_SECONDS_COL},
    {"comm-col", required_argument, NULL, OPT_COMM_COL},
    {"no-transients", no_argument, NULL, OPT_NO_TRANSIENTS},
    {"verbose", no_argument, NULL, OPT_VERBOSE},
};

/* name: the long option taken (a threshold's name from OPT_SETTING up). */
static int take_opt(struct strag_opts *o, int ch, const char *name, const char *arg)
{
    switch (ch) {
    case OPT_CSV:
        o->csv = arg;
        return 0;
    case OPT_STEP_COL:
        o->step_col = arg;
        return 0;
    case OPT_RANK_COL:
        o->rank_col = arg;
        return 0;
    case OPT_SECONDS_COL:
        o->seconds_col = arg;
        return 0;
    case OPT_COMM_COL:
        o->comm_col = arg;
        return 0;
    case OPT_NO_TRANSIENTS:
        o->no_transients = 1;
        return 0;
    case OPT_VERBOSE:
        o->verbose = 1;
        return 0;
    default: {
        char err[160];
        if (ch < OPT_SETTING)
            return -1;
        if (hn_settings_set(&hn_strag_settings, &o->cfg, name, arg, err, sizeof(err)) == 0)
            return 0;
        fprintf(stderr, "houston straggler: --%s\n", err);
        return -1;
    }
    }
}

/* Parses argv. Returns 0 to run, 1 after printing help, -1 after a usage error. */
static int parse(int argc, char **argv, struct strag_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->step_col = "step";
    o->rank_col = "rank";
    o->seconds_col = "seconds";
    hn_strag_config_default(&o->cfg);
    struct option opts[32];
    size_t n = 0;
    for (; n < HN_ARRAY_LEN(io_opts); n++)
        opts[n] = io_opts[n];
    n = hn_settings_options(&hn_strag_settings, opts, n, HN_ARRAY_LEN(opts) - 2, OPT_SETTING, 1);
    opts[n++] = (struct option){"help", no_argument, NULL, 'h'};
    opts[n] = (struct option){NULL, 0, NULL, 0};
    int ret = 0, ch;
    struct hn_opts g;
    hn_opts_begin(&g, "straggler", opts, stderr);
    while (ret == 0 && (ch = hn_opts_next(&g, argc, argv)) != -1) {
        if (ch == 'h') {
            hn_usage_straggler(stdout);
            ret = 1;
        } else if (ch == '?' || take_opt(o, ch, g.idx >= 0 ? opts[g.idx].name : "", optarg) != 0) {
            ret = -1;
        }
    }
    hn_opts_end(&g);
    if (ret == 0 && optind < argc) {
        fprintf(stderr, "houston straggler: unexpected argument '%s'\n", argv[optind]);
        ret = -1;
    }
    if (ret == 0 && !o->csv) {
        fprintf(stderr, "houston straggler: give the step times with --csv FILE (- for stdin)\n");
        ret = -1;
    }
    char err[128];
    if (ret == 0 && hn_strag_config_check(&o->cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "houston straggler: %s\n", err);
        ret = -1;
    }
    return ret;
}

/* ---- reading rows ---- */

/*
 * Splits one line (no line end) into at most MAX_FIELDS fields in place, trimming blanks and
 * undoing CSV quoting ("a ""b""" -> a "b"); a quoted field may hold commas but not line ends.
 * Returns the field count, or -1 for a quote left open or text after a closing quote.
 */
static int split_fields(char *line, char **field)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n == MAX_FIELDS)
            return -1;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '"') {
            char *w = ++p;
            field[n++] = w;
            for (;;) {
                if (*p == '\0')
                    return -1;
                if (*p == '"' && p[1] == '"') {
                    *w++ = '"';
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    *w++ = *p++;
                }
            }
            *w = '\0';
            while (*p == ' ' || *p == '\t')
                p++;
            if (*p != ',' && *p != '\0')
                return -1;
        } else {
            field[n++] = p;
            while (*p != ',' && *p != '\0')
                p++;
            char *end = p;
            while (end > field[n - 1] && (end[-1] == ' ' || end[-1] == '\t'))
                end--;
            if (*p == ',') {
                *end = '\0';
                p++;
                continue;
            }
            *end = '\0';
        }
        if (*p == '\0')
            return n;
        p++; /* the comma after a quoted field */
    }
}

/* Reads one line of at most size - 1 bytes into buf, without its line end ("\n" or "\r\n"; the
 * last line may have none), NUL-terminated. Returns 1 for a line, 0 at the end of input, -1 for
 * a longer line (the rest of it is skipped), -2 for a line holding a NUL byte, which no CSV text
 * does (UTF-16 or binary data): C strings would cut it there, so it is refused whole. With
 * give_up set it returns -1 or -2 at the first byte that decides it, leaving the rest of the
 * line unread: for the header, whose failure ends the read, so that a file of zeros or
 * /dev/zero (a line end never comes) is refused at once instead of read to its end or forever. */
static int read_line(FILE *in, char *buf, size_t size, int give_up)
{
    size_t len = 0;
    int c, nul = 0, too_long = 0;
    while ((c = getc_unlocked(in)) != EOF && c != '\n') {
        nul |= c == '\0';
        if (len < size - 1)
            buf[len++] = (char)c;
        else
            too_long = 1;
        if (give_up && (nul || too_long))
            break;
    }
    buf[len] = '\0';
    if (c == EOF && len == 0)
        return 0;
    if (too_long)
        return -1;
    if (nul)
        return -2;
    while (len > 0 && buf[len - 1] == '\r')
        buf[--len] = '\0';
    return 1;
}

/* Drops a UTF-8 byte order mark (EF BB BF) from the start of line, which some Windows tools and
 * Excel write before the header; it would otherwise be part of the first column's name. */
static void strip_bom(char *line)
{
    static const char bom[] = "\xEF\xBB\xBF";
    size_t n = sizeof(bom) - 1;
    if (strncmp(line, bom, n) == 0)
        memmove(line, line + n, strlen(line + n) + 1);
}

/* A step or rank: a whole number >= 0 in decimal, which may carry a fraction of zeros ("12",
 * "12.0", "12.000"): pandas writes an integer column with missing values as floats. Returns 0,
 * or -1 for anything else ("12.5", "12.", "1e3", "-1", ""). */
static int parse_whole(const char *s, uint64_t *out)
{
    const char *dot = strchr(s, '.');
    if (!dot)
        return hn_parse_u64(s, 10, out) == 0 ? 0 : -1;
    const char *frac = dot + 1;
    size_t zeros = strspn(frac, "0");
    char whole[32]; /* UINT64_MAX has 20 digits; longer is too large or zero-padded */
    size_t n = (size_t)(dot - s);
    if (zeros == 0 || frac[zeros] != '\0' || n == 0 || n >= sizeof(whole))
        return -1;
    memcpy(whole, s, n);
    whole[n] = '\0';
    return hn_parse_u64(whole, 10, out) == 0 ? 0 : -1;
}

static void bad_row(struct rows *rs, unsigned line, const char *why)
{
    if (rs->malformed++ == 0) {
        rs->first_bad_line = line;
        hn_strlcpy(rs->first_bad, why, sizeof(rs->first_bad));
    }
}

/* Index of column name in the header fields, ignoring case; -1 if absent. */
static int find_col(char **field, int n, const char *name)
{
    for (int i = 0; i < n; i++) {
        if (strcasecmp(field[i], name) == 0)
            return i;
    }
    return -1;
}

/* Reads the header and every row of in into rs. Returns 0, or -1 after saying on stderr why the
 * input cannot be used at all (no header, a missing column, a read error, too many rows). */
static int read_rows(FILE *in, const char *name, const struct strag_opts *o, struct rows *rs)
{
    char *buf = xmalloc(LINE_MAX_BYTES);
    char **field = xmalloc(MAX_FIELDS * sizeof(*field));
    unsigned line = 0;
    int rc, col_step = -1, col_rank = -1, col_sec = -1, col_comm = -1, ret = -1;

    /* The header: the first line that is not blank. */
    int n = 0;
    while ((rc = read_line(in, buf, LINE_MAX_BYTES, 1)) != 0) {
        if (++line == 1 && rc > 0)
            strip_bom(buf);
        if (rc > 0 && buf[strspn(buf, " \t")] == '\0')
            continue;
        if (rc < 0 || (n = split_fields(buf, field)) < 0) {
            fprintf(stderr, "houston straggler: %s: line %u: the header line is not CSV%s\n", name,
                    line,
                    rc == -2   ? " text (it holds a NUL byte)"
                    : rc == -1 ? " text (it is longer than 64 KiB)"
                               : "");
            goto out_free;
        }
        break;
    }
    if (rc == 0) {
        fprintf(stderr, "houston straggler: %s: %s\n", name,
                ferror(in) ? strerror(errno) : "no header line (the input is empty)");
        goto out_free;
    }
    col_step = find_col(field, n, o->step_col);
    col_rank = find_col(field, n, o->rank_col);
    col_sec = find_col(field, n, o->seconds_col);
    if (o->comm_col)
        col_comm = find_col(field, n, o->comm_col);
    const char *missing = col_step < 0                  ? o->step_col
                          : col_rank < 0                ? o->rank_col
                          : col_sec < 0                 ? o->seconds_col
                          : o->comm_col && col_comm < 0 ? o->comm_col
                                                        : NULL;
    if (missing) {
        fprintf(stderr,
                "houston straggler: %s: the header has no column '%s' (name the columns with "
                "--step-col, --rank-col and --seconds-col)\n",
                name, missing);
        goto out_free;
    }
    int need = col_step > col_rank ? col_step : col_rank;
    need = col_sec > need ? col_sec : need;
    need = (col_comm > need ? col_comm : need) + 1;

    while ((rc = read_line(in, buf, LINE_MAX_BYTES, 0)) != 0) {
        line++;
        if (rc < 0) {
            bad_row(rs, line,
                    rc == -2 ? "a NUL byte (binary data, not CSV text)" : "longer than 64 KiB");
            continue;
        }
        if (buf[strspn(buf, " \t")] == '\0')
            continue;
        n = split_fields(buf, field);
        struct row r;
        double comm = 0;
        if (n < 0) {
            bad_row(rs, line, "not CSV (a quote left open)");
        } else if (n < need) {
            bad_row(rs, line, "too few fields");
        } else if (parse_whole(field[col_step], &r.step) != 0) {
            bad_row(rs, line, "the step is not a whole number");
        } else if (parse_whole(field[col_rank], &r.rank) != 0) {
            bad_row(rs, line, "the rank is not a whole number");
        } else if (hn_parse_double(field[col_sec], &r.seconds) != 0 || !isfinite(r.seconds)) {
            bad_row(rs, line, "the time is not a number");
        } else if (col_comm >= 0 && (hn_parse_double(field[col_comm], &comm) != 0 || !(comm >= 0) ||
                                     !isfinite(comm))) {
            bad_row(rs, line, "the collective wait is not a number >= 0");
        } else if ((r.seconds -= comm) <= 0) {
            bad_row(rs, line, "the time is not positive");
        } else if (rs->n == MAX_ROWS) {
            fprintf(stderr, "houston straggler: %s: more than %zu rows; split the input\n", name,
                    MAX_ROWS);
            goto out_free;
        } else {
            if (rs->n == rs->cap) {
                rs->cap = rs->cap ? rs->cap * 2 : 4096;
                rs->v = xrealloc(rs->v, rs->cap * sizeof(*rs->v));
            }
            r.seq = (uint32_t)rs->n;
            rs->v[rs->n++] = r;
        }
    }
    if (ferror(in)) {
        fprintf(stderr, "houston straggler: %s: %s\n", name, strerror(errno));
        goto out_free;
    }
    ret = 0;
out_free:
    free(field);
    free(buf);
    return ret;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_row(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Replaces rank ids by dense indexes 0..*nranks-1 in id order; *ids gets the ids (the caller
 * frees it). */
static void map_ranks(struct rows *rs, uint64_t **ids, size_t *nranks)
{
    uint64_t *id = xmalloc((rs->n ? rs->n : 1) * sizeof(*id));
    for (size_t i = 0; i < rs->n; i++)
        id[i] = rs->v[i].rank;
    qsort(id, rs->n, sizeof(*id), cmp_u64);
    size_t k = 0;
    for (size_t i = 0; i < rs->n; i++) {
        if (k == 0 || id[k - 1] != id[i])
            id[k++] = id[i];
    }
    for (size_t i = 0; i < rs->n; i++) {
        const uint64_t *at = bsearch(&rs->v[i].rank, id, k, sizeof(*id), cmp_u64);
        rs->v[i].rank = (uint64_t)(at - id);
    }
    *ids = id;
    *nranks = k;
}

/* ---- running the detector ---- */

/* ,"key":V with V printed by fmt, or null when V is not finite (JSON has no inf or nan: times
 * hundreds of orders of magnitude apart overflow a ratio). */
static void json_real(const char *key, const char *fmt, double v)
{
    printf(",\"%s\":", key);
    if (isfinite(v))
        printf(fmt, v);
    else
        fputs("null", stdout);
}

static void print_detection(const struct hn_strag_detection *d, const uint64_t *ids)
{
    if (d->rank == HN_STRAG_ALL_RANKS)
        printf("{\"rank\":\"all\"");
    else
        printf("{\"rank\":%llu", (unsigned long long)ids[d->rank]);
    printf(",\"onset_step\":%llu,\"detect_step\":%llu", (unsigned long long)d->onset_step,
           (unsigned long long)d->detect_step);
    if (d->kind == HN_STRAG_TRANSIENT || d->kind == HN_STRAG_RECOVERED)
        printf(",\"end_step\":%llu", (unsigned long long)d->end_step);
    json_real("slowdown", "%.4f", d->slowdown);
    printf(",\"kind\":\"%s\"", hn_strag_kind_name(d->kind));
    json_real("vs_peers", "%.4f", d->vs_peers);
    json_real("peak", "%.4f", d->peak);
    json_real("noise", "%.4f", d->noise);
    json_real("score", "%.2f", d->score);
    fputs("}\n", stdout);
}

/* Feeds the sorted rows to a detector step by step and prints what it finds. A step with
 * fewer ranks than the quorum is counted and left out without a pass over every rank (rank
 * ids spread over many steps, a wrong --rank-col say, would make that quadratic). */
static int run_detector(const struct strag_opts *o, const char *name, const struct rows *rs,
                        const uint64_t *ids, size_t nranks, uint64_t *dup)
{
    struct hn_strag *s = hn_strag_new(&o->cfg, (unsigned)nranks);
    if (!s)
        return -1;
    unsigned need = hn_strag_quorum(s);
    uint64_t steps = 0, short_steps = 0;
    double *row = xmalloc(nranks * sizeof(*row));
    for (size_t r = 0; r < nranks; r++)
        row[r] = NAN;
    for (size_t i = 0; i < rs->n;) {
        uint64_t step = rs->v[i].step, dups = *dup;
        size_t from = i;
        for (; i < rs->n && rs->v[i].step == step; i++) {
            if (!isnan(row[rs->v[i].rank]))
                (*dup)++;
            else
                row[rs->v[i].rank] = rs->v[i].seconds;
        }
        steps++;
        if (i - from - (*dup - dups) < need) {
            short_steps++;
        } else if (hn_strag_step(s, step, row) > 0) {
            struct hn_strag_detection d;
            while (hn_strag_poll(s, &d)) {
                if (!(o->no_transients && d.kind == HN_STRAG_TRANSIENT))
                    print_detection(&d, ids);
            }
        }
        for (size_t k = from; k < i; k++)
            row[rs->v[k].rank] = NAN;
    }
    struct hn_strag_stats st;
    hn_strag_stats_get(s, &st);
    unsigned long long unused = (unsigned long long)st.skipped + short_steps;
    if (o->verbose)
        fprintf(stderr,
                "houston straggler: %zu rows, %zu ranks, %llu steps used, %llu without a "
                "quorum of ranks\n",
                rs->n, nranks, (unsigned long long)st.steps, unused);
    else if (unused)
        fprintf(stderr,
                "houston straggler: %s: %llu of %llu steps had fewer than %u of the %zu ranks "
                "(--quorum %g) and were not used\n",
                name, unused, (unsigned long long)steps, need, nranks, o->cfg.quorum);
    if (st.dropped) /* cannot happen: polled after every step */
        fprintf(stderr, "houston straggler: %llu detections lost\n",
                (unsigned long long)st.dropped);
    free(row);
    hn_strag_free(s);
    return 0;
}

int hn_cmd_straggler(int argc, char **argv)
{
    struct strag_opts o;
    int rc = parse(argc, argv, &o);
    if (rc != 0)
        return rc > 0 ? 0 : 2;

    int from_stdin = strcmp(o.csv, "-") == 0;
    const char *name = from_stdin ? "stdin" : o.csv;
    FILE *in = from_stdin ? stdin : fopen(o.csv, "r");
    if (!in) {
        fprintf(stderr, "houston straggler: %s: %s\n", o.csv, strerror(errno));
        return 2;
    }
    struct rows rs;
    memset(&rs, 0, sizeof(rs));
    int ret = 2;
    if (read_rows(in, name, &o, &rs) != 0)
        goto out_close;

    uint64_t *ids = NULL;
    size_t nranks = 0;
    map_ranks(&rs, &ids, &nranks);
    if (nranks > HN_STRAG_MAX_RANKS) {
        fprintf(stderr, "houston straggler: %s: %zu ranks, more than %u\n", name, nranks,
                HN_STRAG_MAX_RANKS);
        goto out_ids;
    }
    if (rs.n)
        qsort(rs.v, rs.n, sizeof(*rs.v), cmp_row);
    uint64_t dup = 0;
    if (nranks == 0 && rs.malformed) {
        /* Nothing judged, and not for want of rows: exit 0 and silence would read as a
         * healthy job (a time column in "1.2s", the wrong --seconds-col). */
        fprintf(stderr,
                "houston straggler: %s: none of its %llu rows could be read (first: line %u: "
                "%s)\n",
                name, (unsigned long long)rs.malformed, rs.first_bad_line, rs.first_bad);
        goto out_ids;
    }
    if (nranks == 0)
        fprintf(stderr, "houston straggler: %s: no data rows\n", name);
    if (nranks > 0 && run_detector(&o, name, &rs, ids, nranks, &dup) != 0) {
        fprintf(stderr, "houston straggler: cannot start the detector\n");
        goto out_ids;
    }
    fflush(stdout);
    if (rs.malformed)
        fprintf(stderr, "houston straggler: %s: skipped %llu malformed rows (first: line %u: %s)\n",
                name, (unsigned long long)rs.malformed, rs.first_bad_line, rs.first_bad);
    if (dup)
        fprintf(stderr,
                "houston straggler: %s: skipped %llu duplicate rows (a step and rank seen "
                "before; the first one counts)\n",
                name, (unsigned long long)dup);
    ret = 0;
out_ids:
    free(ids);
out_close:
    free(rs.v);
    if (!from_stdin)
        fclose(in);
    return ret;
}
