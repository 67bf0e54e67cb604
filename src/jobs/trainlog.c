/*
 * trainlog.c - Megatron, NeMo and DeepSpeed iteration lines (trainlog.h).
 *
 * Every scan is bounded by the line's end; nothing assumes a NUL. A line is read in three
 * steps: find the "iteration N/M |" head (or, failing that, a progress bar's
 * "train_step_timing...="), read the known fields through one table, then decide the format
 * from the step time that was found.
 */
#include "jobs/trainlog.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A cursor over line[0..len). */
struct span {
    const char *p;
    const char *end;
};

/* What the fields of one line said, before the format decides what they mean. */
struct vals {
    double elapsed_ms; /* Megatron */
    double step_s;     /* NeMo */
    double samples_per_s;
    double tokens_per_s_gpu;
    double tflops;
    int64_t global_batch;
    int64_t consumed_samples;
    int64_t consumed_tokens;
    int64_t seq_len;
    int64_t global_step; /* NeMo, counts from 0 */
};

enum kind { REAL, COUNT };

/* The fields read, by their exact names; the same names serve "key: value" (between '|') and
 * "key=value" (progress bars). `required` fields make the line malformed when their value is
 * not a number; the others are then just left unknown (a first iteration may print "inf"). */
static const struct field {
    const char *key;
    enum kind kind;
    size_t off;
    int required;
} fields[] = {
    {"elapsed time per iteration (ms)", REAL, offsetof(struct vals, elapsed_ms), 1},
    {"train_step_timing in s", REAL, offsetof(struct vals, step_s), 1},
    {"train_step_timing", REAL, offsetof(struct vals, step_s), 1},
    {"global_step", COUNT, offsetof(struct vals, global_step), 1},
    {"samples per second", REAL, offsetof(struct vals, samples_per_s), 0},
    {"tokens per GPU (tokens/s/GPU)", REAL, offsetof(struct vals, tokens_per_s_gpu), 0},
    {"tokens_per_sec_per_gpu", REAL, offsetof(struct vals, tokens_per_s_gpu), 0},
    {"TFLOPs", REAL, offsetof(struct vals, tflops), 0},
    {"throughput per GPU (TFLOP/s/GPU)", REAL, offsetof(struct vals, tflops), 0},
    {"TFLOPS_per_GPU", REAL, offsetof(struct vals, tflops), 0},
    {"global batch size", COUNT, offsetof(struct vals, global_batch), 0},
    {"global_batch_size", COUNT, offsetof(struct vals, global_batch), 0},
    {"consumed samples", COUNT, offsetof(struct vals, consumed_samples), 0},
    {"consumed_samples", COUNT, offsetof(struct vals, consumed_samples), 0},
    {"consumed tokens", COUNT, offsetof(struct vals, consumed_tokens), 0},
    {"actual seqlen", COUNT, offsetof(struct vals, seq_len), 0},
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

#define COUNT_EXACT_MAX 9007199254740992.0 /* 2^53: larger reals are not exact counts */

const char *hn_trainlog_format_name(enum hn_trainlog_format f)
{
    return f == HN_TRAINLOG_NEMO ? "nemo" : f == HN_TRAINLOG_DEEPSPEED ? "deepspeed" : "megatron";
}

/* ---- small scanners ---- */

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

static int is_word(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static void skip_blanks(struct span *s)
{
    while (s->p < s->end && is_blank(*s->p))
        s->p++;
}

static void trim(struct span *s)
{
    skip_blanks(s);
    while (s->end > s->p && is_blank(s->end[-1]))
        s->end--;
}

/* Where needle first occurs in [p, end), or NULL. */
static const char *find(const char *p, const char *end, const char *needle)
{
    size_t n = strlen(needle);
    for (; (size_t)(end - p) >= n; p++) {
        if (memcmp(p, needle, n) == 0)
            return p;
    }
    return NULL;
}

static int span_is(struct span s, const char *word)
{
    size_t n = strlen(word);
    return (size_t)(s.end - s.p) == n && memcmp(s.p, word, n) == 0;
}

/* Reads decimal digits into *out; 0 on success, -1 for no digit or an overflow. */
static int scan_u64(struct span *s, uint64_t *out)
{
    uint64_t v = 0;
    const char *start = s->p;
    for (; s->p < s->end && is_digit(*s->p); s->p++) {
        unsigned d = (unsigned)(*s->p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (s->p == start)
        return -1;
    *out = v;
    return 0;
}

/* Reads the longest run of number characters ([0-9.eE+-]) as a finite real, all of it or
 * nothing (so "inf", "nan" and hex are refused); 0 on success. */
static int scan_real(struct span *s, double *out)
{
    char buf[64];
    size_t n = 0;
    while (s->p + n < s->end && n < sizeof(buf) - 1) {
        char c = s->p[n];
        if (!is_digit(c) && c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-')
            break;
        buf[n++] = c;
    }
    if (n == 0 || n == sizeof(buf) - 1)
        return -1;
    buf[n] = '\0';
    char *endp;
    errno = 0;
    double v = strtod(buf, &endp);
    if (endp != buf + n || errno == ERANGE || !isfinite(v))
        return -1;
    s->p += n;
    *out = v;
    return 0;
}

/* A count: digits (exact), or a real with an integral value (NeMo prints "12288.0", "2e+3"). */
static int scan_count(struct span *s, int64_t *out)
{
    struct span t = *s;
    uint64_t u;
    if (scan_u64(&t, &u) == 0 && (t.p == t.end || (*t.p != '.' && *t.p != 'e' && *t.p != 'E'))) {
        if (u > INT64_MAX)
            return -1;
        *s = t;
        *out = (int64_t)u;
        return 0;
    }
    double v;
    t = *s;
    if (scan_real(&t, &v) != 0 || v < 0 || v > COUNT_EXACT_MAX || v != floor(v))
        return -1;
    *s = t;
    *out = (int64_t)v;
    return 0;
}

/* ---- fields ---- */

static void vals_init(struct vals *v)
{
    v->elapsed_ms = v->step_s = v->samples_per_s = v->tokens_per_s_gpu = v->tflops = NAN;
    v->global_batch = v->consumed_samples = v->consumed_tokens = v->seq_len = -1;
    v->global_step = -1;
}

static const struct field *field_find(struct span key)
{
    for (size_t i = 0; i < NFIELDS; i++) {
        if (span_is(key, fields[i].key))
            return &fields[i];
    }
    return NULL;
}

/*
 * Stores the number at the start of value into v's member for f. The number may be followed
 * by nothing, by `stop` (the rest of the field, as in Megatron's "13372.8/13364.7" min/max
 * pairs) or by blanks. Returns -1 when a required field holds no number (or a negative one).
 */
static int field_set(const struct field *f, struct span value, char stop, struct vals *v)
{
    double r = 0;
    int64_t n = 0;
    int ok = f->kind == REAL ? scan_real(&value, &r) == 0 && r >= 0 : scan_count(&value, &n) == 0;
    if (ok && value.p < value.end && *value.p != stop && !is_blank(*value.p))
        ok = 0;
    if (!ok)
        return f->required ? -1 : 0;
    char *dst = (char *)v + f->off;
    if (f->kind == REAL)
        memcpy(dst, &r, sizeof(r));
    else
        memcpy(dst, &n, sizeof(n));
    return 0;
}

/* Reads the "key: value |" fields of [p, end). */
static int read_bar_fields(const char *p, const char *end, struct vals *v)
{
    while (p < end) {
        const char *bar = memchr(p, '|', (size_t)(end - p));
        const char *seg_end = bar ? bar : end;
        const char *colon = memchr(p, ':', (size_t)(seg_end - p));
        if (colon) {
            struct span key = {p, colon}, value = {colon + 1, seg_end};
            trim(&key);
            trim(&value);
            const struct field *f = field_find(key);
            if (f && field_set(f, value, '/', v) != 0)
                return -1;
        }
        p = bar ? bar + 1 : end;
    }
    return 0;
}

/* Reads the "key=value" pairs a progress bar shows ("[..., global_step=5.000, ...]"): each
 * known key must start the line or follow ' ', ',' or '['; the value ends at ',' or ']'. */
static int read_eq_fields(const char *line, const char *end, struct vals *v)
{
    for (size_t i = 0; i < NFIELDS; i++) {
        size_t kn = strlen(fields[i].key);
        for (const char *p = line; (p = find(p, end, fields[i].key)) != NULL; p += kn) {
            if (p > line && p[-1] != ' ' && p[-1] != ',' && p[-1] != '[')
                continue;
            if (p + kn >= end || p[kn] != '=')
                continue;
            struct span value = {p + kn + 1, p + kn + 1};
            while (value.end < end && *value.end != ',' && *value.end != ']')
                value.end++;
            if (field_set(&fields[i], value, ',', v) != 0)
                return -1;
            break;
        }
    }
    return 0;
}

/* ---- the line ---- */

/*
 * Finds "iteration" + blanks + N + "/" + M + "|" (blanks allowed around '/' and before '|'),
 * as a word of its own. Returns a pointer just past the '|' and the two numbers, or NULL.
 * A number too large for 64 bits makes the head malformed (*bad set).
 */
static const char *find_head(const char *line, const char *end, uint64_t *iter, uint64_t *total,
                             int *bad)
{
    static const char word[] = "iteration";
    const size_t wn = sizeof(word) - 1;
    for (const char *p = line; (p = find(p, end, word)) != NULL; p += wn) {
        if (p > line && is_word(p[-1]))
            continue;
        struct span s = {p + wn, end};
        if (s.p >= end || !is_blank(*s.p))
            continue;
        skip_blanks(&s);
        if (s.p >= end || !is_digit(*s.p))
            continue;
        if (scan_u64(&s, iter) != 0) {
            *bad = 1;
            return NULL;
        }
        skip_blanks(&s);
        if (s.p >= end || *s.p != '/')
            continue;
        s.p++;
        skip_blanks(&s);
        if (s.p >= end || !is_digit(*s.p))
            continue;
        if (scan_u64(&s, total) != 0) {
            *bad = 1;
            return NULL;
        }
        skip_blanks(&s);
        if (s.p < end && *s.p == '|')
            return s.p + 1;
    }
    return NULL;
}

/* The launcher prefix: blanks, then 1..63 of [A-Za-z0-9._-], then ": ". */
static void read_prefix(const char *line, const char *end, char *out)
{
    struct span s = {line, end};
    skip_blanks(&s);
    const char *start = s.p;
    while (s.p < end && (is_word(*s.p) || *s.p == '.' || *s.p == '-'))
        s.p++;
    size_t n = (size_t)(s.p - start);
    out[0] = '\0';
    if (n == 0 || n >= HN_TRAINLOG_PREFIX_MAX || end - s.p < 2 || s.p[0] != ':' || s.p[1] != ' ')
        return;
    memcpy(out, start, n);
    out[n] = '\0';
}

/* A NeMo 1 progress bar has "train_step_timing=" or "train_step_timing in s=". */
static int is_progress_bar(const char *line, const char *end)
{
    static const char key[] = "train_step_timing";
    const size_t kn = sizeof(key) - 1;
    for (const char *p = line; (p = find(p, end, key)) != NULL; p += kn) {
        struct span rest = {p + kn, end};
        if (rest.p < end && *rest.p == '=')
            return 1;
        if (end - rest.p > 6 && memcmp(rest.p, " in s=", 6) == 0)
            return 1;
    }
    return 0;
}

static void fill(struct hn_trainlog_rec *out, const struct vals *v)
{
    out->samples_per_s = v->samples_per_s;
    out->tokens_per_s_gpu = v->tokens_per_s_gpu;
    out->tflops = v->tflops;
    out->global_batch = v->global_batch;
    out->consumed_samples = v->consumed_samples;
    out->consumed_tokens = v->consumed_tokens;
    out->seq_len = v->seq_len;
}

/* NeMo counts steps from 0; a record counts steps completed. */
static int nemo_steps(uint64_t from_zero, uint64_t *out)
{
    if (from_zero == UINT64_MAX)
        return -1;
    *out = from_zero + 1;
    return 0;
}

/* ---- DeepSpeed's engine ---- */

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar (m 1..12): the years
 * before are counted from March, so that the leap day ends a year. */
static int64_t days_since_epoch(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;                                  /* 0..399 */
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1; /* 0..365, from March 1 */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;          /* 0..146096 */
    return era * 146097 + doe - 719468;
}

/* Reads exactly n digits as a number in [lo, hi]; -1 when they are not. */
static int64_t fixed_digits(struct span *s, int n, int64_t lo, int64_t hi)
{
    int64_t v = 0;
    for (int i = 0; i < n; i++, s->p++) {
        if (s->p >= s->end || !is_digit(*s->p))
            return -1;
        v = v * 10 + (*s->p - '0');
    }
    return v >= lo && v <= hi ? v : -1;
}

static int expect(struct span *s, char c)
{
    if (s->p >= s->end || *s->p != c)
        return -1;
    s->p++;
    return 0;
}

/*
 * The time Python's logging stamps a DeepSpeed line with, "[2023-11-29 08:52:27,711]" first
 * on the line (after a launcher prefix, and torchrun's "[default0]:" or mpirun's
 * "[1,0]<stdout>:"): seconds
 * since the epoch as if the stamp were UTC
 * (it is the training host's local time; only differences are used, so a change of daylight
 * saving time between two lines is an hour off); NaN without one.
 */
static double line_time(const char *line, const char *end)
{
    char prefix[HN_TRAINLOG_PREFIX_MAX];
    read_prefix(line, end, prefix);
    struct span s = {line, end};
    skip_blanks(&s);
    if (prefix[0])
        s.p += strlen(prefix) + 2; /* read_prefix checked the ": " */
    /* A launcher's own prefix of each worker's lines, in brackets: torchrun's "[default0]:"
     * or "[rank0]:" (--tee, --log-dir), mpirun --tag-output's "[1,0]<stdout>:"; at most 32
     * bytes. A '[' that opens a date is the stamp's. */
    if (s.p < s.end && *s.p == '[' &&
        !(s.end - s.p > 5 && is_digit(s.p[1]) && is_digit(s.p[2]) && is_digit(s.p[3]) &&
          is_digit(s.p[4]) && s.p[5] == '-')) {
        size_t room = (size_t)(s.end - s.p) < 32 ? (size_t)(s.end - s.p) : 32;
        const char *q = memchr(s.p, ']', room);
        if (!q)
            return NAN;
        q++;
        if (q < s.end && *q == '<') { /* <stdout>, <stderr> */
            q = memchr(q, '>', (size_t)(s.end - q) < 10 ? (size_t)(s.end - q) : 10);
            if (!q)
                return NAN;
            q++;
        }
        if (q >= s.end || *q != ':')
            return NAN;
        s.p = q + 1;
        skip_blanks(&s);
    }
    int64_t y, mo, d, h, mi, sec, ms;
    if (expect(&s, '[') || (y = fixed_digits(&s, 4, 1970, 9999)) < 0 || expect(&s, '-') ||
        (mo = fixed_digits(&s, 2, 1, 12)) < 0 || expect(&s, '-') ||
        (d = fixed_digits(&s, 2, 1, 31)) < 0 || expect(&s, ' ') ||
        (h = fixed_digits(&s, 2, 0, 23)) < 0 || expect(&s, ':') ||
        (mi = fixed_digits(&s, 2, 0, 59)) < 0 || expect(&s, ':') ||
        (sec = fixed_digits(&s, 2, 0, 60)) < 0 || s.p >= s.end || (*s.p != ',' && *s.p != '.'))
        return NAN;
    s.p++;
    if ((ms = fixed_digits(&s, 3, 0, 999)) < 0 || expect(&s, ']'))
        return NAN;
    return (double)(days_since_epoch(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec) +
           (double)ms / 1000.0;
}

/* The engine's step line, "... [Rank 0] step=N, skipped=K, lr=[...], mom=[...]" (printed every
 * steps_per_print steps, after the optimizer step): N, or -1 when the line is not one. */
static int deepspeed_step(const char *line, const char *end, uint64_t *n, int *bad)
{
    static const char key[] = "step=";
    const size_t kn = sizeof(key) - 1;
    for (const char *p = line; (p = find(p, end, key)) != NULL; p += kn) {
        if (p > line && p[-1] != ' ')
            continue; /* "global_step=", "micro_step=" */
        struct span s = {p + kn, end};
        if (s.p >= end || !is_digit(*s.p))
            continue;
        if (scan_u64(&s, n) != 0) {
            *bad = 1;
            return -1;
        }
        if (end - s.p >= 10 && memcmp(s.p, ", skipped=", 10) == 0)
            return 0;
    }
    return -1;
}

/* The kind of a checkpoint engine's line whose tag ends at s->p (its tail says which), or
 * HN_TRAINLOG_OTHER. */
static int deepspeed_save_tail(const struct span *s)
{
    static const struct {
        const char *tail;
        int kind;
    } tails[] = {
        {" is about to be saved!", HN_TRAINLOG_SAVE},
        {" is begin to save!", HN_TRAINLOG_SAVE},
        {" is ready now!", HN_TRAINLOG_SAVED},
    };
    for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
        size_t tn = strlen(tails[i].tail);
        if ((size_t)(s->end - s->p) >= tn && memcmp(s->p, tails[i].tail, tn) == 0)
            return tails[i].kind;
    }
    return HN_TRAINLOG_OTHER;
}

/* The checkpoint engine's lines around a save of tag "global_stepN" (DeepSpeed's default tag),
 * "[Torch] Checkpoint global_stepN is about to be saved!" (or "is begin to save!" in other
 * releases) when it begins and "... is ready now!" when a rank's files are written: their kind
 * with *n = N, or HN_TRAINLOG_OTHER. A save under a tag of the job's own (save_checkpoint's
 * tag=, one word), which names no step, only with the torch engine's "[Torch] " before it
 * (other lines may say "Checkpoint best is ..."): its kind with *no_step set. */
static int deepspeed_save(const char *line, const char *end, uint64_t *n, int *no_step)
{
    static const char key[] = "Checkpoint global_step", torch[] = "[Torch] Checkpoint ";
    *no_step = 0;
    const char *p = find(line, end, key);
    if (p) {
        struct span s = {p + sizeof(key) - 1, end};
        int kind = scan_u64(&s, n) == 0 ? deepspeed_save_tail(&s) : HN_TRAINLOG_OTHER;
        if (kind != HN_TRAINLOG_OTHER)
            return kind;
    }
    p = find(line, end, torch);
    if (!p)
        return HN_TRAINLOG_OTHER;
    struct span s = {p + sizeof(torch) - 1, end};
    const char *tag = s.p;
    while (s.p < end && *s.p != ' ' && *s.p != '\t')
        s.p++;
    if (s.p == tag)
        return HN_TRAINLOG_OTHER;
    *n = 0;
    *no_step = 1;
    return deepspeed_save_tail(&s);
}

/* A setting as DeepSpeed prints its configuration and Megatron its arguments: key (with its
 * trailing blank) + blanks + dots + blanks + N + the end of the line: N, else -1 (0 too unless
 * zero_ok). */
static int64_t setting(const char *line, const char *end, const char *key, int zero_ok)
{
    const char *p = find(line, end, key);
    if (!p || (p > line && is_word(p[-1])))
        return -1;
    struct span s = {p + strlen(key), end};
    skip_blanks(&s);
    const char *dots = s.p;
    while (s.p < end && *s.p == '.')
        s.p++;
    if (s.p == dots)
        return -1;
    skip_blanks(&s);
    uint64_t n;
    trim(&s);
    if (scan_u64(&s, &n) != 0 || s.p != s.end || (n == 0 && !zero_ok) || n > INT64_MAX)
        return -1;
    return (int64_t)n;
}

/* A DeepSpeed engine line: its kind, HN_TRAINLOG_OTHER, or -1 for a step number too large. */
static int read_deepspeed(const char *line, const char *end, struct hn_trainlog_rec *out)
{
    uint64_t n = 0;
    int bad = 0, kind = HN_TRAINLOG_ITERATION, no_step = 0;
    int64_t batch = -1;
    if (deepspeed_step(line, end, &n, &bad) != 0) {
        if (bad)
            return -1;
        kind = deepspeed_save(line, end, &n, &no_step);
        if (kind == HN_TRAINLOG_OTHER && (batch = setting(line, end, "train_batch_size ", 0)) < 0)
            return HN_TRAINLOG_OTHER;
        if (batch > 0)
            kind = HN_TRAINLOG_BATCH;
    }
    struct vals v;
    vals_init(&v);
    v.global_batch = batch;
    fill(out, &v);
    out->format = HN_TRAINLOG_DEEPSPEED;
    out->iteration = n;
    out->no_step = no_step;
    out->elapsed_ms = NAN;
    out->time_s = line_time(line, end);
    read_prefix(line, end, out->prefix);
    return kind;
}

/* After `head` (found in the line): blanks, then a step number followed by `stop`, or with
 * stop '\0' by a blank or the end. 0 and *n set, else -1. */
static int number_after(const char *head, const char *end, char stop, uint64_t *n)
{
    struct span s = {head, end};
    skip_blanks(&s);
    if (scan_u64(&s, n) != 0)
        return -1;
    if (stop)
        return s.p < end && *s.p == stop ? 0 : -1;
    return s.p >= end || is_blank(*s.p) ? 0 : -1;
}

/* Megatron's checkpoint lines, each followed by blanks, the step and a blank or the end. The
 * first also matches Megatron-DeepSpeed's "global rank R is saving checkpoint at iteration N". */
static const struct {
    const char *head;
    enum hn_trainlog_kind kind;
} save_lines[] = {
    {"saving checkpoint at iteration", HN_TRAINLOG_SAVE},
    {"scheduled an async checkpoint save at iteration", HN_TRAINLOG_SAVE_ASYNC},
    {"successfully saved checkpoint at iteration", HN_TRAINLOG_SAVED},
    {"successfully saved checkpoint from iteration", HN_TRAINLOG_SAVED},
};

/* One of save_lines: its kind with out->iteration = N, 0 for another line, -1 without a
 * number. */
static int read_save(const char *line, const char *end, struct hn_trainlog_rec *out)
{
    for (size_t i = 0; i < sizeof(save_lines) / sizeof(save_lines[0]); i++) {
        const char *p = find(line, end, save_lines[i].head);
        if (!p)
            continue;
        if (number_after(p + strlen(save_lines[i].head), end, '\0', &out->iteration) != 0)
            return -1;
        out->format = HN_TRAINLOG_MEGATRON;
        read_prefix(line, end, out->prefix);
        return (int)save_lines[i].kind;
    }
    return HN_TRAINLOG_OTHER;
}

/*
 * NeMo 2's checkpoint lines (its MegatronCheckpointIO and async checkpoint IO, and Lightning's
 * ModelCheckpoint when verbose, as in the NeMo logs we read). Lightning's line and the "Global
 * Checkpoint Save" line name the save by the last iteration done, counted from 0 as in the
 * iteration lines; "Successfully saved" does too; the async finalization line counts steps
 * done. All become steps completed (out->lightning marks Lightning's line, whose number NeMo 1
 * prints as steps done: the reader takes the 1 off there):
 *   Epoch 0, global step 49: 'val_loss' was not in top 5          (a save begins: save_last)
 *   Epoch 0, global step 99: 'val_loss' reached 1.61913 (best 1.61913), saving model to '...'
 *   Global Checkpoint Save : Rank: 0 : Iteration: 49 : Start time: ...s : Save duration: ...s
 *   Scheduled async checkpoint save for /ckpt/step=49.ckpt         (no step: the save begun)
 *   Successfully saved checkpoint from iteration      49 to /ckpt/step=49.ckpt
 *   Async checkpoint save for step 50 (/ckpt/step=49.ckpt) finalized successfully.
 * Returns the kind with out->iteration (0 for the async line), 0 for another line, -1 for one
 * of them without its number.
 */
static int read_nemo_save(const char *line, const char *end, struct hn_trainlog_rec *out)
{
    static const char lightning[] = ", global step ",
                      global[] = "Global Checkpoint Save :", global_iter[] = ": Iteration:",
                      scheduled[] = "Scheduled async checkpoint save for ",
                      saved[] = "Successfully saved checkpoint from iteration",
                      finalized[] = "Async checkpoint save for step ";
    const char *p;
    uint64_t n = 0;
    int kind, from_zero = 1;
    if ((p = find(line, end, lightning)) != NULL && find(line, p, "Epoch ") &&
        (find(p, end, "saving model to") || find(p, end, "was not in top"))) {
        kind = HN_TRAINLOG_SAVE;
        out->lightning = 1;
        if (number_after(p + sizeof(lightning) - 1, end, ':', &n) != 0)
            return -1;
    } else if ((p = find(line, end, global)) != NULL) {
        const char *it = find(p, end, global_iter);
        kind = HN_TRAINLOG_SAVE;
        if (!it || number_after(it + sizeof(global_iter) - 1, end, '\0', &n) != 0)
            return -1;
    } else if (find(line, end, scheduled)) {
        kind = HN_TRAINLOG_SAVE_ASYNC;
        from_zero = 0;
    } else if ((p = find(line, end, saved)) != NULL) {
        kind = HN_TRAINLOG_SAVED;
        if (number_after(p + sizeof(saved) - 1, end, '\0', &n) != 0)
            return -1;
    } else if ((p = find(line, end, finalized)) != NULL && find(p, end, "finalized successfully")) {
        kind = HN_TRAINLOG_SAVED;
        from_zero = 0;
        if (number_after(p + sizeof(finalized) - 1, end, '\0', &n) != 0)
            return -1;
    } else {
        return HN_TRAINLOG_OTHER;
    }
    out->format = HN_TRAINLOG_NEMO;
    if (from_zero && nemo_steps(n, &n) != 0)
        return -1;
    out->iteration = n;
    read_prefix(line, end, out->prefix);
    return kind;
}

/*
 * The first line of an evaluation: Megatron-LM's "Evaluating iter 1/10" (rank 0 prints it
 * before each step of a verbose evaluation, after "Evaluating on N samples": those after
 * training, not the periodic ones, which print nothing until "validation loss at iteration")
 * and NeMo 2's "Validation: iteration 1/20" (its progress bar, when its progress interval is
 * 1; not Lightning's sanity check before training, "Sanity checking Validation: ..."). Only
 * step 1 starts one; the rest of the evaluation's lines, and one without numbers, are other
 * lines.
 */
static int read_eval(const char *line, const char *end, struct hn_trainlog_rec *out)
{
    /* Megatron's arguments, printed at its start: how often it evaluates, and on how many
     * batches (0: never). */
    static const struct {
        const char *key;
        enum hn_trainlog_kind kind;
    } args[] = {{"eval_interval ", HN_TRAINLOG_EVAL_INTERVAL},
                {"eval_iters ", HN_TRAINLOG_EVAL_ITERS}};
    for (size_t i = 0; i < sizeof(args) / sizeof(args[0]); i++) {
        int64_t n = setting(line, end, args[i].key, args[i].kind == HN_TRAINLOG_EVAL_ITERS);
        if (n < 0)
            continue;
        out->format = HN_TRAINLOG_MEGATRON;
        out->iteration = (uint64_t)n;
        read_prefix(line, end, out->prefix);
        return args[i].kind;
    }
    /* The end of a periodic one: "validation loss at iteration 100 | lm loss value: ..." (the
     * one at the end of training says "at the end of training", no iteration, or in newer
     * Megatron-LM "at iteration N on validation set" and "on test set": not periodic, N is
     * where training stopped). */
    static const char done[] = "validation loss at iteration";
    const char *v = find(line, end, done);
    uint64_t at;
    struct span vs = {v ? v + strlen(done) : end, end};
    skip_blanks(&vs);
    int periodic = v && scan_u64(&vs, &at) == 0;
    if (periodic) {
        skip_blanks(&vs);
        periodic = vs.p >= end || *vs.p == '|';
    }
    if (periodic) {
        out->format = HN_TRAINLOG_MEGATRON;
        out->iteration = at;
        read_prefix(line, end, out->prefix);
        return HN_TRAINLOG_VALIDATED;
    }
    static const struct {
        const char *head;
        enum hn_trainlog_format format;
    } heads[] = {{"Evaluating iter", HN_TRAINLOG_MEGATRON},
                 {"Validation: iteration", HN_TRAINLOG_NEMO}};
    for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++) {
        const char *p = find(line, end, heads[i].head);
        uint64_t n;
        if (!p || number_after(p + strlen(heads[i].head), end, '/', &n) != 0 || n != 1 ||
            find(line, p, "Sanity"))
            continue;
        out->format = heads[i].format;
        read_prefix(line, end, out->prefix);
        return HN_TRAINLOG_EVAL;
    }
    return HN_TRAINLOG_OTHER;
}

/*
 * Hugging Face Trainer's metrics after an evaluation, the dictionary it prints (rank 0):
 *   {'eval_loss': 0.3477, 'eval_runtime': 9.2465, 'eval_samples_per_second': 10.815, ...}
 * with 'eval_NAME_runtime' for each named evaluation set. The seconds of every runtime on the
 * line, summed, in out->elapsed_ms (as milliseconds; a value may be quoted); format DeepSpeed,
 * whose reader takes them out of the step time. 0 for another line, -1 for a runtime that is
 * not a number.
 */
static int read_eval_time(const char *line, const char *end, struct hn_trainlog_rec *out)
{
    static const char runtime[] = "_runtime";
    const size_t rn = sizeof(runtime) - 1;
    double total = 0;
    int seen = 0;
    for (const char *p = line; (p = find(p, end, "'eval_")) != NULL;) {
        const char *name = p + 1, *q = name; /* eval_... up to its closing quote */
        while (q < end && is_word(*q))
            q++;
        p = q;
        if (end - q < 2 || q[0] != '\'' || q[1] != ':' ||
            (size_t)(q - name) < strlen("eval") + rn || memcmp(q - rn, runtime, rn) != 0)
            continue;
        struct span s = {q + 2, end};
        skip_blanks(&s);
        int quoted = s.p < end && *s.p == '\'';
        s.p += quoted;
        double v;
        if (scan_real(&s, &v) != 0 || v < 0 || (quoted && (s.p >= end || *s.p != '\'')))
            return -1;
        total += v;
        seen = 1;
    }
    if (!seen)
        return HN_TRAINLOG_OTHER;
    out->format = HN_TRAINLOG_DEEPSPEED;
    out->elapsed_ms = total * 1000.0;
    if (!isfinite(out->elapsed_ms))
        return -1;
    read_prefix(line, end, out->prefix);
    return HN_TRAINLOG_EVAL_TIME;
}

int hn_trainlog_parse(const char *line, size_t len, struct hn_trainlog_rec *out)
{
    const char *end = line + len;
    uint64_t iter = 0, total = 0;
    int bad = 0;
    struct vals v;
    vals_init(&v);
    memset(out, 0, sizeof(*out));
    out->time_s = NAN;

    const char *fields_at = find_head(line, end, &iter, &total, &bad);
    if (bad)
        return -1;
    if (!fields_at) {
        if (is_progress_bar(line, end)) {
            if (read_eq_fields(line, end, &v) != 0 || isnan(v.step_s) || v.global_step < 0)
                return -1;
            out->format = HN_TRAINLOG_NEMO;
            out->progress_bar = 1;
            if (nemo_steps((uint64_t)v.global_step, &out->iteration) != 0)
                return -1;
            out->elapsed_ms = v.step_s * 1000.0;
            if (!isfinite(out->elapsed_ms))
                return -1;
            fill(out, &v);
            read_prefix(line, end, out->prefix);
            return HN_TRAINLOG_ITERATION;
        }
        /* A step-time field without a head: a line cut short or garbled on the way. */
        if (find(line, end, "elapsed time per iteration") || find(line, end, "train_step_timing"))
            return -1;
        int ds = read_deepspeed(line, end, out);
        if (ds != HN_TRAINLOG_OTHER)
            return ds;
        int kind = read_save(line, end, out);
        if (kind == HN_TRAINLOG_OTHER)
            kind = read_nemo_save(line, end, out);
        if (kind == HN_TRAINLOG_OTHER)
            kind = read_eval(line, end, out);
        return kind == HN_TRAINLOG_OTHER ? read_eval_time(line, end, out) : kind;
    }

    if (read_bar_fields(fields_at, end, &v) != 0)
        return -1;
    if (!isnan(v.elapsed_ms)) {
        out->format = HN_TRAINLOG_MEGATRON;
        out->iteration = iter;
        out->train_iters = total;
        out->elapsed_ms = v.elapsed_ms;
    } else if (!isnan(v.step_s)) {
        out->format = HN_TRAINLOG_NEMO;
        if (nemo_steps(v.global_step >= 0 ? (uint64_t)v.global_step : iter, &out->iteration) != 0 ||
            nemo_steps(total, &out->train_iters) != 0)
            return -1;
        out->elapsed_ms = v.step_s * 1000.0;
        if (!isfinite(out->elapsed_ms))
            return -1; /* seconds beyond DBL_MAX / 1000 */
    } else {
        return -1; /* an iteration head without a step time */
    }
    fill(out, &v);
    read_prefix(line, end, out->prefix);
    return HN_TRAINLOG_ITERATION;
}
