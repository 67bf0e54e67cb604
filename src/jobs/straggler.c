/*
 * straggler.c - the straggler detector (straggler.h has the contract and the algorithm in
 * short; docs/straggler.md the reasons).
 *
 * One `struct series` follows one value through warm-up, baseline, noise, evidence, CUSUM and
 * episodes: each rank's ratio to the peer median, and the peer median itself against its own
 * history for whole-job slowdowns. series_update() is the whole per-report state machine;
 * hn_strag_step() finds the medians and the typical rank's noise and runs it over every rank.
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
#define MAD_TO_SIGMA      1.4826
#define MEAN_ABS_TO_SIGMA 1.2533
/* Arrays at least this long are bracketed from a sample of SAMPLE values (median_large). */
#define BRACKET_MIN 4096
#define SAMPLE      512
/* The evidence table: EV_TABLE intervals from EV_Z_LO noise units up to its maximum. */
#define EV_TABLE 1024
#define EV_Z_LO  (-24.0)
/* Steps between recounts of the typical rank's noise. */
#define POOL_EVERY 16
/* Ranks sampled for this step's spread. */
#define DISPERSION_SAMPLE 256
/* This step's spread counts when it is this many times the typical noise. */
#define DISPERSION_MARGIN 1.5
/* Fewest warm ranks whose spread is worth a cross-rank MAD. */
#define MIN_DISPERSION_RANKS 5
/* A report further out than this many noise units moves the noise estimate no further. */
#define NOISE_CLIP 5
/* Autocorrelation above this is taken as this (wander() would grow without bound). */
#define AUTOCORR_MAX 0.9
/* An excursion that neither fires nor ends in this many reports is taken as the new normal:
 * the CUSUM restarts and the baseline, frozen meanwhile, catches up with it. */
#define ABSORB_REPORTS 64
/* The per-report path (series_update and what it calls) is inlined into the loop over ranks:
 * GCC otherwise keeps it out of line, and at 16,384 ranks the calls alone cost several percent
 * of a step. Both compilers the build supports (GCC, Clang) take the attribute. */
#define ALWAYS_INLINE __attribute__((always_inline)) inline

enum phase { PH_WARMUP, PH_NORMAL, PH_SLOW };

enum { SPIKE_NONE, SPIKE_OPEN };

/* What series_update() found in one report. */
enum event { EV_NONE, EV_WARM, EV_PERSISTENT, EV_TRANSIENT, EV_RECOVERED };

struct series {
    double base;     /* the normal value: ratio to the peer median, or the job's median time */
    double s1, s2;   /* the two smoothings behind base (adapt) */
    double noise;    /* relative standard deviation of the value around base */
    double cusum;    /* summed evidence (log-likelihood ratio); 0 when nothing is suspected */
    double peak;     /* largest excess since the CUSUM onset */
    double alarm;    /* slowdown reported when the episode was detected */
    double score;    /* the CUSUM when it was detected */
    double sum;      /* excess summed over the episode's reports (since_onset of them) */
    double sum_high; /* sum when the episode was last slow (at last_high) */
    uint32_t n_high; /* since_onset then */
    uint64_t first_step;
    uint64_t onset;     /* estimated first slow step of the current excursion */
    uint64_t last_high; /* last step of the episode at least half as slow as reported */
    uint64_t spike_onset, spike_last;
    uint32_t reports;     /* saturates at UINT32_MAX */
    uint32_t since_onset; /* reports since onset, onset included */
    float spike_peak;
    float w_prev, c0, c1; /* winsorised excess of the last adapted report; EWMAs of w * w and
                           * of w * w_prev, which give the lag-1 autocorrelation (autocorr) */
    uint8_t phase;
    uint8_t pos;               /* next ring slot */
    uint8_t fill;              /* ring entries in use */
    uint8_t spike_state;       /* SPIKE_NONE, or SPIKE_OPEN during an excursion with spikes */
    float ring[HN_STRAG_RING]; /* warm-up: values; afterwards: excess d per report */
};

/*
 * The evidence one report gives for a slowdown: the log-likelihood ratio of its standardised
 * excess z for a shift of `shift` noise units against none, when the noise follows Student's t
 * with nu degrees of freedom, whose heavy tails make an outlier weak evidence (the t model as
 * a robust alternative to the normal: Lange, Little & Taylor, "Robust statistical modeling
 * using the t distribution", JASA 84, 1989). Its maximum is at z_top = (shift + sqrt(shift^2 +
 * 4 nu)) / 2, where d/dz ln((nu + z^2) / (nu + (z - shift)^2)) = 0; beyond it the ratio would
 * fall back towards zero, which would make a rank that became twice as slow look normal, so it
 * is held at the maximum there: a spike counts no more than a moderately slow report does.
 */
struct model {
    double trend;               /* alpha / (1 - alpha): Brown's trend gain (adapt) */
    double shift, nu, half_nu1; /* (nu + 1) / 2 */
    double z_top, top;
    /* evidence_of sampled at EV_TABLE + 1 points from EV_Z_LO to z_top, for the per-report
     * path (a log per rank per step is a third of a step's time at 16,384 ranks). */
    double inv_dz;
    double table[EV_TABLE + 2];
};

/* The log-likelihood ratio above for any shift (> 0), held at its maximum. */
static double llr_t(double nu, double shift, double z)
{
    double z_top = (shift + sqrt(shift * shift + 4 * nu)) / 2;
    if (z > z_top)
        z = z_top;
    double a = nu + z * z, b = nu + (z - shift) * (z - shift);
    return (nu + 1) / 2 * log(a / b);
}

static double evidence_of(const struct model *e, double z)
{
    return llr_t(e->nu, e->shift, z);
}

static void model_init(struct model *e, const struct hn_strag_config *cfg)
{
    double shift = cfg->shift, nu = cfg->tail_dof;
    e->trend = cfg->baseline_alpha / (1 - cfg->baseline_alpha);
    e->shift = shift;
    e->nu = nu;
    e->half_nu1 = (nu + 1) / 2;
    e->z_top = (shift + sqrt(shift * shift + 4 * nu)) / 2;
    double a = nu + e->z_top * e->z_top, b = nu + (e->z_top - shift) * (e->z_top - shift);
    e->top = e->half_nu1 * log(a / b);
    double dz = (e->z_top - EV_Z_LO) / EV_TABLE;
    e->inv_dz = 1 / dz;
    for (int i = 0; i <= EV_TABLE; i++)
        e->table[i] = evidence_of(e, EV_Z_LO + i * dz);
    e->table[EV_TABLE + 1] = e->top; /* interpolation at the last point reads one past it */
}

/* evidence_of by linear interpolation in the table (within 1e-4 of it); below EV_Z_LO, a far
 * faster report than normal, it is held at its value there. */
static inline double evidence_fast(const struct model *e, double z)
{
    if (z >= e->z_top)
        return e->top;
    double x = (z - EV_Z_LO) * e->inv_dz;
    if (!(x > 0))
        return e->table[0];
    int i = (int)x;
    double f = x - i;
    return e->table[i] + f * (e->table[i + 1] - e->table[i]);
}

struct hn_strag {
    struct hn_strag_config cfg;
    struct model ev;
    unsigned ranks;
    unsigned need; /* reporting ranks for a quorum */
    uint64_t last_step;
    int any_step;
    struct series job;
    struct series *rank; /* [ranks] */
    double *scratch;     /* [ranks] selection buffer */
    double *band;        /* [ranks] for median_large */
    double sample[SAMPLE];
    struct hn_strag_detection *queue;
    size_t qcap, qhead, qlen;
    struct hn_strag_stats stats;
    double pool;         /* the typical warm rank's noise (pool_noise) */
    double widen;        /* wander() of the typical warm rank's autocorrelation */
    unsigned warm_ranks; /* ranks past warm-up */
    unsigned pool_ranks; /* warm ranks when pool was counted */
};

/* fmax/fmin without their NaN rules, which cost a library call on some targets; callers pass
 * numbers. */
static inline double dmax(double a, double b)
{
    return a > b ? a : b;
}

static inline double dmin(double a, double b)
{
    return a < b ? a : b;
}

/* ---- configuration ---- */

void hn_strag_config_default(struct hn_strag_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->warmup = 16;
    cfg->quorum = 0.5;
    cfg->baseline_alpha = 1.0 / 64;
    cfg->noise_floor = 0.005;
    cfg->shift = 2;
    cfg->tail_dof = 4;
    cfg->cusum_h = 11;
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
    else if (!within(c->shift, 0.1, 100) || !within(c->tail_dof, 1, 1000))
        bad = "shift must be 0.1..100 noise units and tail_dof 1..1000";
    else if (!within(c->cusum_h, 0.1, 1000))
        bad = "cusum_h must be 0.1..1000";
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

/*
 * The same for large arrays, several times faster: quickselect over many values spends its time
 * in branches it mispredicts. As in Floyd & Rivest's SELECT ("Expected time bounds for
 * selection", CACM 18(3), 1975), the order statistics of an evenly spread sample bracket the
 * median; one pass without data-dependent branches copies the values inside the bracket to
 * band[] and counts those below it, and quickselect finishes on the ~13% that are left. The
 * bracket is three standard deviations of the sample median's rank wide on each side, so it
 * misses about one time in 400; then the whole of a is selected. sample[] holds SAMPLE values,
 * band[] n. Reorders a.
 */
static double median_large(double *a, size_t n, double *band, double *sample)
{
    if (n < BRACKET_MIN)
        return median_of(a, n);
    /* An odd stride visits every local rank of a node, so a slow rank 0 on each node cannot
     * tilt the sample. */
    size_t stride = (n / SAMPLE) | 1, ns = 0;
    for (size_t i = 0; i < n && ns < SAMPLE; i += stride)
        sample[ns++] = a[i];
    size_t half = (size_t)(1.5 * sqrt((double)ns)) + 1;
    size_t lo_i = ns / 2 - half, hi_i = ns / 2 + half;
    select_kth(sample, ns, lo_i);
    double lo = sample[lo_i];
    select_kth(sample + lo_i + 1, ns - lo_i - 1, hi_i - lo_i - 1);
    double hi = sample[hi_i];

    size_t below = 0, w = 0;
    for (size_t i = 0; i < n; i++) {
        double x = a[i];
        below += x < lo;
        band[w] = x;
        w += (x >= lo) & (x <= hi);
    }
    size_t k = n / 2, need_lo = n % 2 ? k : k - 1;
    if (below > need_lo || below + w <= k)
        return median_of(a, n);
    size_t kk = k - below;
    select_kth(band, w, kk);
    double upper = band[kk];
    if (n % 2)
        return upper;
    double lower = band[0];
    for (size_t i = 1; i < kk; i++) {
        if (band[i] > lower)
            lower = band[i];
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
    s->s1 = base;
    s->s2 = base;
    s->noise = dmax(noise, cfg->noise_floor);
    /* The warm-up reports in order give the first autocorrelation estimate. */
    double c0 = 0, c1 = 0, prev = 0;
    for (unsigned i = 0; i < n; i++) {
        double w = dmax(-2 * s->noise, dmin(2 * s->noise, s->ring[i] / base - 1));
        c0 += w * w;
        c1 += w * prev;
        prev = w;
    }
    s->c0 = (float)(c0 / n);
    s->c1 = (float)(c1 / n);
    s->w_prev = (float)prev;
    s->phase = PH_NORMAL;
    s->fill = 0;
    s->pos = 0;
    s->cusum = 0;
}

/* Follows slow drifts: baseline and noise move by alpha towards this report, the excess
 * winsorised at 2 noise units so that no single report pulls them far. Until a rank has
 * 1 / alpha reports the weight is 1 / reports instead: a running mean that refines what the
 * sixteen warm-up reports gave (their median is off by a third of a noise unit as often as
 * not) as fast as the reports allow, then hands over to the EWMA. */
static ALWAYS_INLINE void adapt(const struct hn_strag_config *cfg, double trend, struct series *s,
                                double d, double sigma)
{
    double a = s->reports * cfg->baseline_alpha < 1 ? 1.0 / s->reports : cfg->baseline_alpha;
    double w = dmax(-2 * sigma, dmin(2 * sigma, d));
    double x = s->base * (1 + w);
    s->s1 += a * (x - s->s1);
    s->s2 += a * (s->s1 - s->s2);
    double gain = a == cfg->baseline_alpha ? trend : a / (1 - a);
    s->base = 2 * s->s1 - s->s2 + gain * (s->s1 - s->s2);
    double dev = dmin(fabs(d) * MEAN_ABS_TO_SIGMA, NOISE_CLIP * sigma);
    s->noise += a * (dev - s->noise);
    s->c0 += (float)(a * (w * w - s->c0));
    s->c1 += (float)(a * (w * s->w_prev - s->c1));
    s->w_prev = (float)w;
    if (s->noise < cfg->noise_floor)
        s->noise = cfg->noise_floor;
}

/* The lag-1 autocorrelation of a series' excess, held to 0..0.9. */
static double autocorr(const struct series *s)
{
    double rho = s->c0 > 0 ? s->c1 / s->c0 : 0;
    return dmax(0, dmin(AUTOCORR_MAX, rho));
}

/*
 * How much wider than one report's noise the noise of a sum of reports is when successive
 * reports are correlated: sqrt((1 + rho) / (1 - rho)), the ratio of the long-run to the
 * one-step standard deviation of an AR(1) process (Box & Jenkins, "Time Series Analysis",
 * 3.2.4). The CUSUM's threshold assumes independent reports; real step times wander (the
 * Alibaba traces: lag-1 autocorrelation about 0.5), and without this every wander of a few
 * reports would add up to a detection (Lu & Reynolds, "CUSUM charts for monitoring an
 * autocorrelated process", J. Quality Technology 33(3), 2001, show the same for the
 * unadjusted chart).
 */
static double wander(double rho)
{
    return sqrt((1 + rho) / (1 - rho));
}

/*
 * Tracks spikes (reports at least transient_min slower than normal) for transient detections.
 * An excursion with spikes is reported once the CUSUM is back at zero, that is once the
 * reports after the spikes have cancelled their evidence; spikes that come back before then
 * belong to the same excursion, and a persistent detection takes the excursion over
 * (series_update clears spike_state). Returns EV_TRANSIENT when an excursion ends.
 */
static enum event track_spikes(const struct hn_strag_config *cfg, struct series *s, uint64_t step,
                               double d)
{
    if (d >= cfg->transient_min) {
        if (s->spike_state == SPIKE_NONE) {
            s->spike_onset = step;
            s->spike_peak = (float)d;
        }
        s->spike_state = SPIKE_OPEN;
        s->spike_last = step;
        if (d > s->spike_peak)
            s->spike_peak = (float)d;
        return EV_NONE;
    }
    if (s->spike_state == SPIKE_NONE || s->cusum > 0)
        return EV_NONE;
    s->spike_state = SPIKE_NONE;
    return EV_TRANSIENT;
}

/*
 * A report d (excess over the baseline, sigma the noise assumed) of a series inside a
 * persistent episode. Recovery is the same test turned round: evidence that the reports are
 * back at the baseline rather than still slow by `level` (a quarter of the detected slowdown, at
 * least min_slowdown), summed until it is as strong as the evidence that fired, and the median
 * of the last recover_window reports below that level. A slowdown that shrinks but stays, or
 * only wanders (the rank's own drift goes on while its baseline is frozen), does not end the
 * episode. Returns EV_RECOVERED or EV_NONE.
 */
static enum event slow_report(const struct hn_strag_config *cfg, const struct model *ev,
                              struct series *s, uint64_t step, double d, double sigma_sum,
                              double min_slowdown)
{
    double level = dmax(dmax(s->alarm / 4, min_slowdown), cfg->noise_floor);
    s->sum += d;
    if (d >= level) {
        s->last_high = step;
        s->sum_high = s->sum;
        s->n_high = s->since_onset;
    }
    if (d > s->peak)
        s->peak = d;
    double e = llr_t(ev->nu, level / sigma_sum, (level - d) / sigma_sum);
    s->cusum = dmin(dmax(0, s->cusum + e), 2 * cfg->cusum_h);
    unsigned n = s->since_onset < cfg->recover_window ? s->since_onset : cfg->recover_window;
    if (s->cusum >= cfg->cusum_h && ring_median(s, n) < level) {
        s->phase = PH_NORMAL;
        s->cusum = 0;
        return EV_RECOVERED;
    }
    return EV_NONE;
}

/*
 * A report d of a settled series outside an episode: evidence, CUSUM, the persistent decision
 * and the baseline. This runs for nearly every rank at every step, so the per-report
 * bookkeeping is written as selects rather than branches: whether the CUSUM is at zero and
 * whether a report gives evidence change from report to report at random, and a mispredicted
 * branch costs more than the arithmetic it saves. Only decisions, which are rare, branch.
 * Returns EV_PERSISTENT or EV_NONE.
 */
static ALWAYS_INLINE enum event watch_report(const struct hn_strag_config *cfg,
                                             const struct model *ev, struct series *s,
                                             uint64_t step, double d, double sigma,
                                             double sigma_sum, double min_slowdown)
{
    double z = d / sigma_sum;
    int rest = s->cusum == 0;
    /* The ratio is negative below z = shift / 2; at rest it cannot start an excursion. */
    double e = rest && z <= ev->shift / 2 ? 0 : evidence_fast(ev, z);
    /* Page's estimate of the change point: where the statistic last left zero. */
    int start = rest && e > 0;
    s->onset = start ? step : s->onset;
    s->since_onset = start ? 1 : s->since_onset;
    double peak = start ? d : s->peak;
    s->peak = (!rest || e > 0) && d > peak ? d : peak;
    /* At rest with no evidence this leaves the CUSUM at zero. */
    s->cusum = dmin(dmax(0, s->cusum + e), 2 * cfg->cusum_h);
    if (s->since_onset > ABSORB_REPORTS && s->cusum > 0)
        s->cusum = 0;
    enum event out = EV_NONE;
    if (s->cusum >= cfg->cusum_h && s->since_onset >= cfg->min_steps) {
        unsigned n = s->since_onset < s->fill ? s->since_onset : s->fill;
        double est = ring_median(s, n);
        /* Still slow now: a run of spikes that just ended is not a slowdown. */
        if (est >= min_slowdown && d >= est / 2) {
            s->phase = PH_SLOW;
            s->sum = est * s->since_onset;
            s->sum_high = s->sum;
            s->n_high = s->since_onset;
            s->score = s->cusum;
            s->cusum = 0; /* from now on, the evidence of recovery */
            s->alarm = est;
            s->last_high = step;
            s->spike_state = SPIKE_NONE;
            out = EV_PERSISTENT;
        }
    }
    if (s->phase == PH_NORMAL && s->cusum < cfg->cusum_h / 2)
        adapt(cfg, ev->trend, s, d, sigma);
    return out;
}

/*
 * One report v of series s at step. peers is the noise of the rank's peers, the least noise
 * assumed for it (0 for the job series); widen is wander() for the series; min_slowdown the
 * smallest excess worth a persistent detection; spikes says whether to track spikes for
 * transient detections. Returns what happened; the caller turns it into a detection from the
 * fields of s.
 */
static ALWAYS_INLINE enum event series_update(const struct hn_strag_config *cfg,
                                              const struct model *ev, struct series *s,
                                              uint64_t step, double v, double peers, double widen,
                                              double min_slowdown, int spikes)
{
    if (s->reports < UINT32_MAX)
        s->reports++;
    if (s->phase == PH_WARMUP) {
        if (s->reports == 1)
            s->first_step = step;
        ring_push(s, v);
        if (s->fill < cfg->warmup)
            return EV_NONE;
        finish_warmup(cfg, s);
        return EV_WARM;
    }

    double d = v / s->base - 1;
    double sigma = dmax(dmax(s->noise, peers), cfg->noise_floor);
    double sigma_sum = sigma * widen; /* for the evidence that is summed */
    enum event out = EV_NONE;
    ring_push(s, d);
    if (s->since_onset < UINT32_MAX)
        s->since_onset++;

    if (s->phase == PH_SLOW) {
        out = slow_report(cfg, ev, s, step, d, sigma_sum, min_slowdown);
    } else if (s->reports < 2 * cfg->warmup) {
        /* Settling: the baseline from the warm-up is refined by a running mean before any
         * evidence counts; a baseline off by a third of a noise unit would otherwise add up to
         * a detection within a few dozen reports. */
        adapt(cfg, ev->trend, s, d, sigma);
    } else {
        out = watch_report(cfg, ev, s, step, d, sigma, sigma_sum, min_slowdown);
    }
    if (spikes && out == EV_NONE && s->phase == PH_NORMAL)
        out = track_spikes(cfg, s, step, d);
    return out;
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
    model_init(&s->ev, cfg);
    s->ranks = ranks;
    s->widen = 1;
    s->need = (unsigned)ceil(cfg->quorum * ranks);
    if (s->need < 1)
        s->need = 1;
    s->rank = xcalloc(ranks, sizeof(*s->rank));
    s->scratch = xcalloc(ranks, sizeof(*s->scratch));
    s->band = xcalloc(ranks, sizeof(*s->band));
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
    free(s->band);
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
    d->score = k == HN_STRAG_TRANSIENT || k == HN_STRAG_FROM_START ? 0 : ser->score;
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
        /* the mean excess from onset to the last slow report, a better figure than the first */
        d->onset_step = ser->onset;
        d->end_step = ser->last_high;
        d->slowdown = ser->sum_high / ser->n_high;
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
    double widen = s->job.phase == PH_WARMUP ? 1 : wander(autocorr(&s->job));
    enum event ev =
        series_update(&s->cfg, &s->ev, &s->job, step, m, 0, widen, s->cfg.job_min_slowdown, 0);
    if (ev == EV_PERSISTENT)
        return emit(s, HN_STRAG_JOB_SLOWDOWN, HN_STRAG_ALL_RANKS, &s->job, step);
    if (ev == EV_RECOVERED)
        return emit(s, HN_STRAG_RECOVERED, HN_STRAG_ALL_RANKS, &s->job, step);
    return 0;
}

static int rank_update(struct hn_strag *s, unsigned r, uint64_t step, double q, double peers)
{
    struct series *ser = &s->rank[r];
    int was_slow = ser->phase == PH_SLOW;
    enum event ev =
        series_update(&s->cfg, &s->ev, ser, step, q, peers, s->widen, s->cfg.min_slowdown, 1);
    switch (ev) {
    case EV_WARM:
        s->warm_ranks++;
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

/* The typical rank's noise and wander: medians of the warm ranks' own estimates. Sixteen
 * reports (the warm-up) or a 1/64 EWMA estimate a scale to within 10-25%; a rank whose
 * estimate came out low would see ordinary noise as a slowdown, so no rank is taken to be
 * quieter than s->pool. An autocorrelation needs even more reports, so every rank uses the
 * typical one (s->widen). Recounted every POOL_EVERY steps and whenever ranks warm up. */
static void pool_noise(struct hn_strag *s)
{
    size_t n = 0;
    for (unsigned r = 0; r < s->ranks; r++) {
        if (s->rank[r].phase != PH_WARMUP)
            s->scratch[n++] = s->rank[r].noise;
    }
    s->pool_ranks = s->warm_ranks;
    s->pool = n ? median_large(s->scratch, n, s->band, s->sample) : 0;
    n = 0;
    for (unsigned r = 0; r < s->ranks; r++) {
        if (s->rank[r].phase != PH_WARMUP)
            s->scratch[n++] = autocorr(&s->rank[r]);
    }
    s->widen = wander(n ? median_large(s->scratch, n, s->band, s->sample) : 0);
}

/* True for a report: a finite positive number (false for NaN). */
static inline int reported(double x)
{
    return x > 0 && x < INFINITY;
}

/* This step's spread of the excess across warm ranks, 1.4826 x its MAD: a robust scale that
 * rises when everyone scatters at once (a checkpoint written at different speeds). A scale
 * needs no more than DISPERSION_SAMPLE ranks, so large jobs use every k-th rank. */
static double dispersion(struct hn_strag *s, const double *seconds, double m)
{
    unsigned stride = s->ranks > DISPERSION_SAMPLE ? s->ranks / DISPERSION_SAMPLE : 1;
    size_t n = 0;
    for (unsigned r = 0; r < s->ranks; r += stride) {
        const struct series *ser = &s->rank[r];
        if (reported(seconds[r]) && ser->phase != PH_WARMUP)
            s->scratch[n++] = fabs(seconds[r] / m / ser->base - 1);
    }
    return n >= MIN_DISPERSION_RANKS ? MAD_TO_SIGMA * median_of(s->scratch, n) : 0;
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
        if (reported(seconds[r]))
            s->scratch[n++] = seconds[r];
    }
    if (n < s->need || n == 0) {
        s->stats.skipped++;
        return 0;
    }
    s->stats.steps++;
    double m = median_large(s->scratch, n, s->band, s->sample);
    int found = job_update(s, step, m);

    if (s->warm_ranks != s->pool_ranks || s->stats.steps % POOL_EVERY == 0)
        pool_noise(s);
    double peers = dmax(dispersion(s, seconds, m) / DISPERSION_MARGIN, s->pool);
    double inv_m = 1 / m;
    for (unsigned r = 0; r < s->ranks; r++) {
        if (reported(seconds[r]))
            found += rank_update(s, r, step, seconds[r] * inv_m, peers);
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
