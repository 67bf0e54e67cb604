/*
 * straggler.c - the straggler detector (straggler.h has the contract and the algorithm in
 * short; docs/straggler.md the reasons).
 *
 * One `struct series` follows one ratio through warm-up, baseline, noise, the median-of-3
 * filter and the CUSUM: each rank's ratio to the peer median, and the peer median itself
 * against its own history for whole-job slowdowns. series_update() is the whole per-report
 * state machine; hn_strag_step() finds the medians and runs it over every rank.
 */
#include "jobs/straggler.h"

#include "common/util.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 1.4826 x MAD estimates a standard deviation for normal data; sqrt(pi/2) x mean absolute
 * deviation does the same (both: Huber & Ronchetti, "Robust Statistics", 2nd ed., 5.1). */
#define MAD_TO_SIGMA 1.4826
#define MEAN_ABS_TO_SIGMA 1.2533
/* Fewest warm ranks whose spread is worth a cross-rank MAD. */
#define MIN_DISPERSION_RANKS 5
/* An excursion that neither fires nor ends in this many reports is taken as the new normal:
 * the CUSUM restarts and the baseline, frozen meanwhile, catches up with it. */
#define ABSORB_REPORTS 64

enum phase { PH_WARMUP, PH_NORMAL, PH_SLOW };

/* What series_update() found in one report. */
enum event { EV_NONE, EV_WARM, EV_PERSISTENT, EV_TRANSIENT, EV_RECOVERED };

struct series {
    double base;  /* the normal value: ratio to the peer median, or the job's median time */
    double noise; /* relative standard deviation of the value around base */
    double cusum; /* noise units, 0 when nothing is suspected */
    double peak;  /* largest excess since the CUSUM onset */
    double alarm; /* slowdown reported when the episode was detected */
    uint64_t first_step;
    uint64_t prev_step; /* step of the previous report */
    uint64_t onset;     /* estimated first slow step of the current excursion */
    uint64_t last_high; /* last step of the episode at least half as slow as reported */
    uint64_t spike_onset, spike_last;
    uint32_t reports;     /* saturates at UINT32_MAX */
    uint32_t since_onset; /* reports since onset, onset included */
    float z1, z2;         /* standardised excess of the two previous reports */
    float spike_peak;
    uint16_t spike_len; /* reports in the current run of spikes */
    uint8_t phase;
    uint8_t pos;  /* next ring slot */
    uint8_t fill; /* ring entries in use */
    uint8_t spike_absorbed; /* a persistent detection fired during the spike run */
    float ring[HN_STRAG_RING]; /* warm-up: values; afterwards: excess d per report */
};

struct hn_strag {
    struct hn_strag_config cfg;
    unsigned ranks;
    unsigned need; /* reporting ranks for a quorum */
    uint64_t last_step;
    int any_step;
    struct series job;
    struct series *rank; /* [ranks] */
    double *q;           /* [ranks] this step's ratio to the peer median, NaN if none */
    double *scratch;     /* [ranks] selection buffer */
    struct hn_strag_detection *queue;
    size_t qcap, qhead, qlen;
    struct hn_strag_stats stats;
};

/* ---- configuration ---- */

void hn_strag_config_default(struct hn_strag_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->warmup = 16;
    cfg->quorum = 0.5;
    cfg->baseline_alpha = 1.0 / 64;
    cfg->noise_floor = 0.005;
    cfg->clip = 5;
    cfg->cusum_k = 1;
    cfg->cusum_h = 8;
    cfg->min_steps = 3;
    cfg->min_slowdown = 0.02;
    cfg->transient_min = 0.5;
    cfg->recover_window = 8;
    cfg->from_start_min = 0.2;
    cfg->job_min_slowdown = 0.1;
}

/* True when lo <= v <= hi (false for NaN). */
static int within(double v, double lo, double hi)
{
    return v >= lo && v <= hi;
}

int hn_strag_config_check(const struct hn_strag_config *c, char *err, size_t errsize)
{
    const char *bad = NULL;
    if (c->warmup < 3 || c->warmup > HN_STRAG_RING)
        bad = "warmup must be 3..16 reports";
    else if (!within(c->quorum, 0, 1))
        bad = "quorum must be a fraction 0..1";
    else if (!within(c->baseline_alpha, 0, 0.5))
        bad = "baseline_alpha must be 0..0.5";
    else if (!within(c->noise_floor, 1e-6, 1))
        bad = "noise_floor must be 1e-6..1";
    else if (!within(c->cusum_k, 0, 100) || !within(c->cusum_h, 0.1, 1000))
        bad = "cusum_k must be 0..100 and cusum_h 0.1..1000";
    else if (!within(c->clip, c->cusum_k, 1000) || c->clip <= c->cusum_k)
        bad = "clip must be above cusum_k";
    else if (c->min_steps < 1 || c->min_steps > HN_STRAG_RING)
        bad = "min_steps must be 1..16";
    else if (!within(c->min_slowdown, 0, 100) || !within(c->job_min_slowdown, 0, 100))
        bad = "min_slowdown and job_min_slowdown must be 0..100";
    else if (!within(c->transient_min, 1e-6, 1e6) || !within(c->from_start_min, 1e-6, 1e6))
        bad = "transient_min and from_start_min must be positive";
    else if (c->recover_window < 3 || c->recover_window > HN_STRAG_RING)
        bad = "recover_window must be 3..16 reports";
    if (bad) {
        hn_set_err(err, errsize, "%s", bad);
        return -EINVAL;
    }
    return 0;
}

const char *hn_strag_kind_name(enum hn_strag_kind k)
{
    switch (k) {
    case HN_STRAG_PERSISTENT:
        return "persistent";
    case HN_STRAG_TRANSIENT:
        return "transient";
    case HN_STRAG_JOB_SLOWDOWN:
        return "job_slowdown";
    case HN_STRAG_RECOVERED:
        return "recovered";
    case HN_STRAG_FROM_START:
        return "from_start";
    }
    return "unknown";
}

/* ---- order statistics ---- */

/* Puts the k-th smallest of a[0..n) at a[k], smaller-or-equal values before it and
 * greater-or-equal after (Hoare's FIND, CACM 4(7), 1961, with a median-of-3 pivot). O(n)
 * expected; deterministic. */
static void select_kth(double *a, size_t n, size_t k)
{
    size_t lo = 0, hi = n - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        /* Order a[lo], a[mid], a[hi]; the middle one is the pivot. */
        if (a[mid] < a[lo]) {
            double t = a[mid];
            a[mid] = a[lo];
            a[lo] = t;
        }
        if (a[hi] < a[lo]) {
            double t = a[hi];
            a[hi] = a[lo];
            a[lo] = t;
        }
        if (a[hi] < a[mid]) {
            double t = a[hi];
            a[hi] = a[mid];
            a[mid] = t;
        }
        double pivot = a[mid];
        size_t i = lo, j = hi;
        for (;;) {
            while (a[i] < pivot)
                i++;
            while (pivot < a[j])
                j--;
            if (i >= j)
                break;
            double t = a[i];
            a[i] = a[j];
            a[j] = t;
            i++;
            j--;
        }
        /* a[lo..j] <= pivot <= a[j+1..hi] */
        if (k <= j)
            hi = j;
        else
            lo = j + 1;
    }
}

/* The median of a[0..n), n >= 1 (the mean of the two middle values when n is even). Reorders
 * a. */
static double median_of(double *a, size_t n)
{
    size_t k = n / 2;
    select_kth(a, n, k);
    double upper = a[k];
    if (n % 2)
        return upper;
    double lower = a[0];
    for (size_t i = 1; i < k; i++) {
        if (a[i] > lower)
            lower = a[i];
    }
    return (lower + upper) / 2;
}

/* Median of the newest n (1..HN_STRAG_RING) ring entries of s. */
static double ring_median(const struct series *s, unsigned n)
{
    double v[HN_STRAG_RING];
    assert(n >= 1 && n <= s->fill);
    for (unsigned i = 0; i < n; i++)
        v[i] = s->ring[(s->pos + HN_STRAG_RING - 1 - i) % HN_STRAG_RING];
    /* Insertion sort: n is at most 16 and this runs only at decisions. */
    for (unsigned i = 1; i < n; i++) {
        double t = v[i];
        unsigned j = i;
        for (; j > 0 && v[j - 1] > t; j--)
            v[j] = v[j - 1];
        v[j] = t;
    }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double median3(double a, double b, double c)
{
    double lo = fmin(a, b), hi = fmax(a, b);
    return fmax(lo, fmin(hi, c));
}

static void ring_push(struct series *s, double v)
{
    s->ring[s->pos] = (float)v;
    s->pos = (uint8_t)((s->pos + 1) % HN_STRAG_RING);
    if (s->fill < HN_STRAG_RING)
        s->fill++;
}

/* ---- one series ---- */

/* Ends warm-up: the baseline is the median of the warm-up values, the noise their scaled MAD
 * relative to it (at least the floor). */
static void finish_warmup(const struct hn_strag_config *cfg, struct series *s)
{
    double v[HN_STRAG_RING];
    unsigned n = s->fill;
    for (unsigned i = 0; i < n; i++)
        v[i] = s->ring[i];
    double base = median_of(v, n);
    for (unsigned i = 0; i < n; i++)
        v[i] = fabs(v[i] - base);
    double noise = base > 0 ? MAD_TO_SIGMA * median_of(v, n) / base : 0;
    s->base = base;
    s->noise = fmax(noise, cfg->noise_floor);
    s->phase = PH_NORMAL;
    s->fill = 0;
    s->pos = 0;
    s->cusum = 0;
}

/* Follows slow drifts: baseline and noise move by alpha towards this report, the excess
 * winsorised at 2 noise units so that no single report pulls them far. */
static void adapt(const struct hn_strag_config *cfg, struct series *s, double d, double sigma)
{
    double step = fmax(-2 * sigma, fmin(2 * sigma, d));
    s->base *= 1 + cfg->baseline_alpha * step;
    double dev = fmin(fabs(d) * MEAN_ABS_TO_SIGMA, cfg->clip * sigma);
    s->noise += cfg->baseline_alpha * (dev - s->noise);
    if (s->noise < cfg->noise_floor)
        s->noise = cfg->noise_floor;
}

/*
 * Tracks runs of spikes (reports at least transient_min slower than normal) for transient
 * detections. Returns EV_TRANSIENT when a run ends that no persistent detection took over.
 */
static enum event track_spikes(const struct hn_strag_config *cfg, struct series *s,
                               uint64_t step, double d)
{
    if (d >= cfg->transient_min) {
        if (s->spike_len == 0) {
            s->spike_onset = step;
            s->spike_peak = (float)d;
            s->spike_absorbed = 0;
        }
        if (s->spike_len < UINT16_MAX)
            s->spike_len++;
        s->spike_last = step;
        if (d > s->spike_peak)
            s->spike_peak = (float)d;
        return EV_NONE;
    }
    if (s->spike_len == 0)
        return EV_NONE;
    s->spike_len = 0;
    return s->spike_absorbed ? EV_NONE : EV_TRANSIENT;
}

/*
 * One report v of series s at step. disp is this step's cross-rank spread of the excess (0 for
 * the job series); min_slowdown the smallest excess worth a persistent detection. Returns what
 * happened; the caller turns it into a detection from the fields of s.
 */
static enum event series_update(const struct hn_strag_config *cfg, struct series *s,
                                uint64_t step, double v, double disp, double min_slowdown,
                                int spikes)
{
    if (s->reports < UINT32_MAX)
        s->reports++;
    if (s->phase == PH_WARMUP) {
        if (s->reports == 1)
            s->first_step = step;
        ring_push(s, v);
        s->prev_step = step;
        if (s->fill < cfg->warmup)
            return EV_NONE;
        finish_warmup(cfg, s);
        return EV_WARM;
    }

    double d = v / s->base - 1;
    double sigma = fmax(fmax(s->noise, disp), cfg->noise_floor);
    double z = d / sigma;
    enum event ev = EV_NONE;
    ring_push(s, d);
    if (s->since_onset < UINT32_MAX)
        s->since_onset++;

    if (s->phase == PH_SLOW) {
        if (d >= s->alarm / 2)
            s->last_high = step;
        if (d > s->peak)
            s->peak = d;
        unsigned n = s->since_onset < cfg->recover_window ? s->since_onset : cfg->recover_window;
        if (ring_median(s, n) < s->alarm / 2) {
            s->phase = PH_NORMAL;
            s->cusum = 0;
            ev = EV_RECOVERED;
        }
    } else {
        /* The median of three ignores any single report, however far out. */
        double u = fmin(median3(s->z2, s->z1, z), cfg->clip) - cfg->cusum_k;
        if (s->cusum == 0 && u > 0) {
            /* The filter lags one report: the excursion began with the previous one. */
            s->onset = s->prev_step;
            s->since_onset = 2;
            s->peak = d;
        }
        if (s->cusum > 0 || u > 0) {
            s->cusum = fmin(fmax(0, s->cusum + u), 2 * cfg->cusum_h);
            if (d > s->peak)
                s->peak = d;
        }
        if (s->cusum > 0 && s->since_onset > ABSORB_REPORTS)
            s->cusum = 0;
        if (s->cusum >= cfg->cusum_h && s->since_onset >= cfg->min_steps) {
            unsigned n = s->since_onset < s->fill ? s->since_onset : s->fill;
            double est = ring_median(s, n);
            /* Still slow now: a run of two spikes keeps the filter up for one more report, and
             * the report after the run is what tells it from a slowdown. */
            if (est >= min_slowdown && d >= est / 2) {
                s->phase = PH_SLOW;
                s->alarm = est;
                s->last_high = step;
                s->spike_absorbed = 1;
                ev = EV_PERSISTENT;
            }
        }
        if (s->phase == PH_NORMAL && s->cusum < cfg->cusum_h / 2)
            adapt(cfg, s, d, sigma);
    }
    s->z2 = s->z1;
    s->z1 = (float)z;
    s->prev_step = step;
    if (spikes && ev == EV_NONE && s->phase == PH_NORMAL)
        ev = track_spikes(cfg, s, step, d);
    else if (spikes && s->phase == PH_SLOW)
        s->spike_len = 0;
    return ev;
}

/* ---- the detector ---- */

struct hn_strag *hn_strag_new(const struct hn_strag_config *cfg, unsigned ranks)
{
    struct hn_strag_config def;
    if (!cfg) {
        hn_strag_config_default(&def);
        cfg = &def;
    }
    if (ranks == 0 || ranks > HN_STRAG_MAX_RANKS || hn_strag_config_check(cfg, NULL, 0) != 0)
        return NULL;
    struct hn_strag *s = xcalloc(1, sizeof(*s));
    s->cfg = *cfg;
    s->ranks = ranks;
    s->need = (unsigned)ceil(cfg->quorum * ranks);
    if (s->need < 1)
        s->need = 1;
    s->rank = xcalloc(ranks, sizeof(*s->rank));
    s->q = xcalloc(ranks, sizeof(*s->q));
    s->scratch = xcalloc(ranks, sizeof(*s->scratch));
    s->qcap = 2 * (size_t)ranks + 64;
    if (s->qcap > HN_STRAG_MAX_QUEUE)
        s->qcap = HN_STRAG_MAX_QUEUE;
    s->queue = xcalloc(s->qcap, sizeof(*s->queue));
    return s;
}

void hn_strag_free(struct hn_strag *s)
{
    if (!s)
        return;
    free(s->queue);
    free(s->scratch);
    free(s->q);
    free(s->rank);
    free(s);
}

unsigned hn_strag_ranks(const struct hn_strag *s)
{
    return s->ranks;
}

/* Appends a detection of kind k for rank from series ser; counts it as dropped when full. */
static int emit(struct hn_strag *s, enum hn_strag_kind k, unsigned rank, const struct series *ser,
                uint64_t step)
{
    if (s->qlen == s->qcap) {
        s->stats.dropped++;
        return 0;
    }
    struct hn_strag_detection *d = &s->queue[(s->qhead + s->qlen) % s->qcap];
    memset(d, 0, sizeof(*d));
    d->kind = k;
    d->rank = rank;
    d->detect_step = step;
    d->noise = ser->noise;
    d->score = ser->cusum;
    /* For a rank, vs_peers is the ratio to the peer median; for the job, the excess over the
     * job's own normal, which is what slowdown already says. */
    double base = rank == HN_STRAG_ALL_RANKS ? 1 : ser->base;
    switch (k) {
    case HN_STRAG_PERSISTENT:
    case HN_STRAG_JOB_SLOWDOWN:
        d->onset_step = ser->onset;
        d->slowdown = ser->alarm;
        d->peak = ser->peak;
        break;
    case HN_STRAG_RECOVERED:
        d->onset_step = ser->onset;
        d->end_step = ser->last_high;
        d->slowdown = ser->alarm;
        d->peak = ser->peak;
        break;
    case HN_STRAG_TRANSIENT:
        d->onset_step = ser->spike_onset;
        d->end_step = ser->spike_last;
        d->slowdown = ser->spike_peak;
        d->peak = ser->spike_peak;
        break;
    case HN_STRAG_FROM_START:
        d->onset_step = ser->first_step;
        d->slowdown = ser->base - 1;
        d->peak = ser->base - 1;
        base = 1;
        break;
    }
    d->vs_peers = (1 + d->slowdown) * base - 1;
    s->qlen++;
    return 1;
}

/* The whole job: the peer median against its own history. */
static int job_update(struct hn_strag *s, uint64_t step, double m)
{
    enum event ev = series_update(&s->cfg, &s->job, step, m, 0, s->cfg.job_min_slowdown, 0);
    if (ev == EV_PERSISTENT)
        return emit(s, HN_STRAG_JOB_SLOWDOWN, HN_STRAG_ALL_RANKS, &s->job, step);
    if (ev == EV_RECOVERED)
        return emit(s, HN_STRAG_RECOVERED, HN_STRAG_ALL_RANKS, &s->job, step);
    return 0;
}

static int rank_update(struct hn_strag *s, unsigned r, uint64_t step, double q, double disp)
{
    struct series *ser = &s->rank[r];
    int was_slow = ser->phase == PH_SLOW;
    enum event ev = series_update(&s->cfg, ser, step, q, disp, s->cfg.min_slowdown, 1);
    switch (ev) {
    case EV_WARM:
        if (ser->base - 1 >= s->cfg.from_start_min)
            return emit(s, HN_STRAG_FROM_START, r, ser, step);
        return 0;
    case EV_PERSISTENT:
        s->stats.slow_ranks++;
        return emit(s, HN_STRAG_PERSISTENT, r, ser, step);
    case EV_RECOVERED:
        assert(was_slow);
        s->stats.slow_ranks--;
        return emit(s, HN_STRAG_RECOVERED, r, ser, step);
    case EV_TRANSIENT:
        return emit(s, HN_STRAG_TRANSIENT, r, ser, step);
    case EV_NONE:
        break;
    }
    (void)was_slow;
    return 0;
}

int hn_strag_step(struct hn_strag *s, uint64_t step, const double *seconds)
{
    if (s->any_step && step <= s->last_step) {
        s->stats.rejected++;
        return -EINVAL;
    }
    s->any_step = 1;
    s->last_step = step;

    size_t n = 0;
    for (unsigned r = 0; r < s->ranks; r++) {
        double x = seconds[r];
        /* x > 0 is false for NaN, so NaN, zero and negative all mean "no report". */
        if (x > 0 && x < INFINITY)
            s->scratch[n++] = x;
    }
    if (n < s->need || n == 0) {
        s->stats.skipped++;
        return 0;
    }
    s->stats.steps++;
    double m = median_of(s->scratch, n);
    int found = job_update(s, step, m);

    /* This step's spread of the excess across warm ranks: a robust scale that rises when
     * everyone scatters at once (a checkpoint written at different speeds). */
    size_t nd = 0;
    for (unsigned r = 0; r < s->ranks; r++) {
        double x = seconds[r];
        double q = x > 0 && x < INFINITY ? x / m : NAN;
        s->q[r] = q;
        const struct series *ser = &s->rank[r];
        if (!isnan(q) && ser->phase != PH_WARMUP)
            s->scratch[nd++] = fabs(q / ser->base - 1);
    }
    double disp = nd >= MIN_DISPERSION_RANKS ? MAD_TO_SIGMA * median_of(s->scratch, nd) : 0;

    for (unsigned r = 0; r < s->ranks; r++) {
        if (!isnan(s->q[r]))
            found += rank_update(s, r, step, s->q[r], disp);
    }
    return found;
}

int hn_strag_poll(struct hn_strag *s, struct hn_strag_detection *out)
{
    if (s->qlen == 0)
        return 0;
    *out = s->queue[s->qhead];
    s->qhead = (s->qhead + 1) % s->qcap;
    s->qlen--;
    return 1;
}

int hn_strag_rank_get(const struct hn_strag *s, unsigned rank, struct hn_strag_rank_info *out)
{
    const struct series *ser;
    if (rank == HN_STRAG_ALL_RANKS)
        ser = &s->job;
    else if (rank < s->ranks)
        ser = &s->rank[rank];
    else
        return -EINVAL;
    out->warm = ser->phase != PH_WARMUP;
    out->slow = ser->phase == PH_SLOW;
    out->baseline = ser->base;
    out->noise = ser->noise;
    out->cusum = ser->cusum;
    out->reports = ser->reports;
    return 0;
}

void hn_strag_stats_get(const struct hn_strag *s, struct hn_strag_stats *out)
{
    *out = s->stats;
}
