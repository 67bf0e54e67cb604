/*
 * straggler.c - the straggler detector (straggler.h has the contract and the algorithm in
 * short; docs/straggler.md the reasons).
 *
 * One `struct series` follows one value through warm-up, baseline, noise, evidence, CUSUM and
 * episodes: each rank's ratio to the step's reference (step_reference: the ranks' median), and
 * the reference itself against its own history for whole-job slowdowns. series_update() is the
 * whole per-report state machine; hn_strag_step() finds the reference and the typical rank's
 * noise and runs it over every rank:
 * first through quick_kernel, which does what series_update does for the common reports on
 * vectors of ranks (the ranks' running state is kept in arrays for it, struct hot), then
 * through series_update itself, one rank at a time, for the reports it leaves.
 */
#include "jobs/straggler.h"
#include "jobs/straggler_int.h"

#include "common/settings.h"
#include "common/stats.h"
#include "common/util.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* 1.4826 x MAD estimates a standard deviation for normal data; sqrt(pi/2) x mean absolute
 * deviation does the same (both: Huber & Ronchetti, "Robust Statistics", 2nd ed., 5.1). */
#define MAD_TO_SIGMA      1.4826
#define MEAN_ABS_TO_SIGMA 1.2533
/* Jobs of at least 2 x REF_SAMPLE ranks take the step's reference from an evenly spread sample
 * of about REF_SAMPLE ranks (step_reference), and from all ranks when fewer than
 * REF_SAMPLE_MIN of the sample reported. */
#define REF_SAMPLE     2048
#define REF_SAMPLE_MIN 64
/* Below EV_Z_LO noise units (a report far faster than normal) and above EV_Z_HI (a report that
 * is an outlier whatever the shift) the evidence is held at its value there. */
#define EV_Z_LO (-24.0f)
#define EV_Z_HI 64.0f
/* Steps between recounts of the typical rank's noise, and the most ranks it looks at. */
#define POOL_EVERY  16
#define POOL_SAMPLE 2048
/* Ranks sampled for this step's spread. */
#define DISPERSION_SAMPLE 256
/* This step's spread counts when it is this many times the typical noise... */
#define DISPERSION_MARGIN 1.5
/* ...after this many of its standard errors are taken off it (dispersion). */
#define DISPERSION_SE 1.7
/* Fewest warm ranks whose median is the step's reference (step_reference). */
#define MIN_WARM 3
/* Fewest warm ranks whose spread is worth a cross-rank MAD. */
#define MIN_DISPERSION_RANKS 5
/* A report further out than this many noise units moves the noise estimate no further. */
#define NOISE_CLIP 5
/* Autocorrelation above this is taken as this (wander() would grow without bound). */
#define AUTOCORR_MAX 0.9
/* An excursion that neither fires nor ends in this many reports is taken as the new normal:
 * the CUSUM restarts and the baseline, frozen meanwhile, catches up with it. */
#define ABSORB_REPORTS 64
/* The arithmetic the loop over ranks (quick_kernel) shares with the full path (evidence,
 * adapt) is inlined into it, so that the loop stays one straight line the compiler vectorises;
 * GCC otherwise keeps some of it out of line. Both compilers the build supports (GCC, Clang)
 * take the attribute. */
#define ALWAYS_INLINE __attribute__((always_inline)) inline

/* The loops over all ranks (quick_kernel, count_reports) are compiled for the vector units of
 * x86-64 servers, chosen when the program loads (GCC's and Clang's function multiversioning):
 * AVX-512 and AVX2 run 16 and 8 ranks at a time, the baseline's SSE2 fewer. The arithmetic is
 * the same in every version (the build turns off contraction into fused multiply-adds), so the
 * results do not depend on the machine. Elsewhere (aarch64: NEON is the baseline) the compiler's
 * own vectorisation applies. */
#if defined(__x86_64__) && defined(__GNUC__)
#define QUICK_PASS_TARGETS __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define QUICK_PASS_TARGETS
#endif

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

static inline float fmaxs(float a, float b)
{
    return a > b ? a : b;
}

static inline float fmins(float a, float b)
{
    return a < b ? a : b;
}

enum phase { PH_WARMUP, PH_NORMAL, PH_SLOW };

enum { SPIKE_NONE, SPIKE_OPEN };

/* What series_update() found in one report. */
enum event { EV_NONE, EV_WARM, EV_PERSISTENT, EV_TRANSIENT, EV_RECOVERED };

/* The per-report state is in float, and so is the per-report arithmetic: a ratio near 1 and
 * its noise of a few percent need nowhere near a double's 16 digits, and in float the loop over
 * ranks runs on twice as many ranks per vector (quick_kernel). */
struct series {
    float base;          /* the normal value: ratio to the step's reference, or the job's */
    float s1, s2;        /* the two smoothings behind base (adapt) */
    float noise;         /* relative standard deviation of the value around base */
    float cusum;         /* summed evidence (log-likelihood ratio); 0 when nothing is suspected */
    float peak;          /* largest excess since the CUSUM onset */
    double alarm;        /* slowdown reported when the episode was detected */
    double score;        /* the CUSUM when it was detected */
    double sum;          /* excess summed over the episode's reports (since_onset of them) */
    double sum_high;     /* sum when the episode was last slow (at last_high) */
    uint32_t n_high;     /* since_onset then */
    uint64_t first_step; /* of the first report (finish_warmup) */
    uint64_t onset;      /* estimated first slow step of the current excursion */
    uint64_t last_high;  /* last step of the episode at least half as slow as reported */
    uint64_t spike_onset, spike_last;
    uint32_t reports;     /* saturates at UINT32_MAX */
    uint32_t since_onset; /* reports since onset, onset included */
    float cusum_big;      /* the large-shift CUSUM; 0 at rest */
    uint32_t since_big;   /* the same as since_onset for it (watch_report) */
    uint64_t onset_big;   /* where it last left zero */
    float spike_peak;
    float w_prev, c0, c1; /* winsorised excess of the last adapted report; EWMAs of w * w and
                           * of w * w_prev, which give the lag-1 autocorrelation (autocorr) */
    uint64_t ring_from;   /* the ring holds this series' reports of counted steps after this one */
    uint8_t phase;
    uint8_t spike_state; /* SPIKE_NONE, or SPIKE_OPEN during an excursion with spikes */
};

/*
 * The newest HN_STRAG_RING reports of a series (warm-up: its values; afterwards: its excess d
 * per report), kept by the detector's count of counted steps: the report of counted step c is
 * in slot c % HN_STRAG_RING, and a rank that did not report a step has NaN there. All ranks'
 * rings are one array, slot by slot (ring[slot * ranks + r]), so that a step's reports are
 * written in one sweep (quick_kernel); the job's series has a ring of its own. A view is one
 * series' ring at the current step.
 */
struct ring_view {
    float *p;              /* slot 0 of the series */
    size_t stride;         /* from one slot to the next */
    uint64_t now;          /* the current counted step */
    uint64_t from;         /* the series' ring_from */
    const uint64_t *steps; /* [HN_STRAG_RING]: the step number of each slot's counted step */
};

/*
 * The evidence one report gives for a slowdown: the log-likelihood ratio of its standardised
 * excess z for a shift of `shift` noise units against none, when the noise follows Student's t
 * with nu degrees of freedom, whose heavy tails make an outlier weak evidence (the t model as
 * a robust alternative to the normal: Lange, Little & Taylor, "Robust statistical modeling
 * using the t distribution", JASA 84, 1989). Its maximum is at z_top = (shift + sqrt(shift^2 +
 * 4 nu)) / 2, where d/dz ln((nu + z^2) / (nu + (z - shift)^2)) = 0; beyond it the ratio would
 * fall back towards zero: a report far slower than a shift of `shift` is better explained as an
 * outlier of the noise (a GC pause, its spill into the next step) than as that shift.
 *
 * Two one-sided CUSUMs use it (Lorden's "multi-chart" idea: one chart per shift of interest,
 * an alarm when any fires; Lorden, "Procedures for reacting to a change in distribution", Ann.
 * Math. Statist. 42, 1971; Sparks, "CUSUM charts for signalling varying location shifts", J.
 * Quality Technology 32(2), 2000): the small-shift one (`shift`, threshold cusum_h) with the
 * ratio as it is, so spikes add little to it; and the large-shift one (`big_shift`, threshold
 * big_h), whose ratio is held at its maximum beyond its z_top, so a rank that became twice as
 * slow is found within a few reports, and whose strongly negative evidence for an ordinary
 * report (about -(nu + 1) / 2 ln(1 + big_shift^2 / nu)) ends an excursion of one or two spikes
 * at once.
 */
struct model {
    float shift, nu, half_nu1; /* (nu + 1) / 2 */
    float big_shift, big_top;  /* 0: no large-shift CUSUM; where its ratio is held */
    float small_top;           /* where the small-shift ratio is held: EV_Z_HI, or its peak when
                                * there is no large-shift CUSUM (else a rank twice as slow would
                                * give almost no evidence at all) */
    float big_h;
    /* The thresholds the per-report arithmetic uses, in float once for both paths. */
    float alpha, trend;    /* baseline_alpha; alpha / (1 - alpha), Brown's trend gain (adapt) */
    float ka, ref;         /* baseline_alpha * alpha_noise, alpha_noise (adapt_weight) */
    float floor, h, spike; /* noise_floor, cusum_h, transient_min */
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

static void model_init(struct model *e, const struct hn_strag_config *cfg)
{
    double shift = cfg->shift, nu = cfg->tail_dof;
    double big = cfg->big_shift > 0 ? cfg->big_shift : shift;
    e->shift = (float)shift;
    e->nu = (float)nu;
    e->half_nu1 = (float)((nu + 1) / 2);
    e->big_shift = (float)cfg->big_shift;
    e->big_top = (float)((big + sqrt(big * big + 4 * nu)) / 2);
    e->small_top =
        cfg->big_shift > 0 ? EV_Z_HI : (float)((shift + sqrt(shift * shift + 4 * nu)) / 2);
    e->big_h = (float)cfg->big_h;
    e->alpha = (float)cfg->baseline_alpha;
    e->trend = (float)(cfg->baseline_alpha / (1 - cfg->baseline_alpha));
    e->ka = (float)(cfg->baseline_alpha * cfg->alpha_noise);
    e->ref = (float)cfg->alpha_noise;
    e->floor = (float)cfg->noise_floor;
    e->h = (float)cfg->cusum_h;
    e->spike = (float)cfg->transient_min;
}

/*
 * ln(a / b) for finite, normal a, b > 0, to float precision, in operations a compiler can run
 * on a vector of values (libm's log is a call per value) and with one division. Each of a and b
 * is split into its exponent and a mantissa in [1, 2); the mantissas' ratio is brought into
 * [sqrt(1/2), sqrt(2)] by a factor of two, and ln m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...)
 * with s = (ma - mb) / (ma + mb), |s| <= 0.172, summed to s^9 (the next term is below 1e-9;
 * Abramowitz & Stegun 4.1.28).
 */
static ALWAYS_INLINE float exponent_of(float x, float *mantissa)
{
    uint32_t u;
    memcpy(&u, &x, sizeof(u));
    uint32_t mbits = (u & 0x007fffffu) | 0x3f800000u; /* [1, 2) */
    memcpy(mantissa, &mbits, sizeof(*mantissa));
    return (float)((int32_t)(u >> 23) - 127); /* x > 0: no sign bit */
}

static ALWAYS_INLINE float fast_log_ratio(float a, float b)
{
    float ma, mb;
    float k = exponent_of(a, &ma) - exponent_of(b, &mb);
    int high = ma > 1.41421356f * mb, low = mb > 1.41421356f * ma;
    ma = high ? ma * 0.5f : ma;
    mb = low ? mb * 0.5f : mb;
    k = high ? k + 1 : low ? k - 1 : k;
    float t = (ma - mb) / (ma + mb), t2 = t * t;
    float p = 1.0f / 9;
    p = p * t2 + 1.0f / 7;
    p = p * t2 + 1.0f / 5;
    p = p * t2 + 1.0f / 3;
    p = p * t2 + 1;
    return k * 0.693147181f + 2 * t * p;
}

/* The evidence of one report with standardised excess z for a shift of `shift` (falling back
 * beyond its peak) and of big_shift (held at its peak), for every report: the quick and the
 * full path both use these, so that they agree to the bit. The model comes as a copy, which the
 * quick path keeps in registers. */
static ALWAYS_INLINE float evidence(struct model e, float z)
{
    float zc = fmins(fmaxs(z, EV_Z_LO), e.small_top);
    float a = e.nu + zc * zc, b = e.nu + (zc - e.shift) * (zc - e.shift);
    return e.half_nu1 * fast_log_ratio(a, b);
}

static ALWAYS_INLINE float evidence_big(struct model e, float z)
{
    float zc = fmins(fmaxs(z, EV_Z_LO), e.big_top);
    float a = e.nu + zc * zc, b = e.nu + (zc - e.big_shift) * (zc - e.big_shift);
    return e.half_nu1 * fast_log_ratio(a, b);
}

/*
 * The state of every rank that each of its reports reads and writes, one array per field, so
 * that the loop over ranks (quick_kernel) runs on whole vectors of ranks and reads as few bytes
 * as it can. A rank's other fields stay in its struct series, which only the full path
 * (rank_update) reads; for ranks these arrays are the truth and the struct's copies of them
 * are filled in only around series_update(). HOT_FIELDS lists them once: the type, the field of
 * struct series and the array of struct hot.
 */
#define HOT_FIELDS(X)                                                                              \
    X(float, base, base)                                                                           \
    X(float, s1, s1)                                                                               \
    X(float, s2, s2)                                                                               \
    X(float, noise, noise)                                                                         \
    X(float, cusum, cusum)                                                                         \
    X(float, peak, peak)                                                                           \
    X(float, c0, c0)                                                                               \
    X(float, c1, c1)                                                                               \
    X(float, w_prev, w_prev)                                                                       \
    X(float, cusum_big, cusum_big)                                                                 \
    X(float, spike_peak, spike_peak)                                                               \
    X(uint64_t, onset, onset)                                                                      \
    X(uint64_t, onset_big, onset_big)                                                              \
    X(uint64_t, spike_onset, spike_onset)                                                          \
    X(uint64_t, spike_last, spike_last)                                                            \
    X(uint32_t, since_onset, since)                                                                \
    X(uint32_t, since_big, since_big)                                                              \
    X(uint32_t, reports, reports)

#define HOT_ARRAY(type, field, array) type *array;
struct hot {
    HOT_FIELDS(HOT_ARRAY)
    /* 32 bits, as the floats, not 8: the vector loop's width follows its narrowest type, and
     * 32 lanes of doubles would not fit the registers. */
    uint32_t *mode; /* MODE_*; with spike_*, the spike tracking of struct series */
    uint32_t *took; /* this step: TOOK_NONE, TOOK_QUICK or TOOK_FULL */
};

/* Which of a rank's reports quick_kernel may take (what else the full path does). */
enum {
    MODE_WARMUP, /* warm-up: all but its last report */
    MODE_QUIET,  /* settled or settling, no episode, no spike open: all but decisions and spikes */
    MODE_SPIKE,  /* no episode, a spike open: once settled, those that leave the CUSUM above zero
                  * (the excursion goes on) and are no decision or spike */
    MODE_FULL,   /* in an episode: none */
};

enum { TOOK_NONE, TOOK_QUICK, TOOK_FULL };

struct hn_strag {
    struct hn_strag_config cfg;
    struct model ev;
    unsigned ranks;
    unsigned need; /* reporting ranks for a quorum */
    uint64_t last_step;
    int any_step;
    struct series job;
    struct series *rank; /* [ranks] */
    struct hot hot;      /* [ranks] each */
    float *ring;         /* [HN_STRAG_RING * ranks]: the ranks' rings, slot by slot */
    float job_ring[HN_STRAG_RING];
    uint64_t slot_step[HN_STRAG_RING]; /* the step number of each ring slot's counted step */
    double *scratch;                   /* [ranks] selection buffer */
    struct hn_strag_detection *queue;
    size_t qcap, qhead, qlen;
    struct hn_strag_stats stats;
    double pool;         /* the typical warm rank's noise (pool_typical) */
    double gauge;        /* the typical warm rank's baseline (pool_typical); 0: none yet */
    double *norm;        /* [ranks] selection buffer: reports over their normals (step_reference) */
    float *known;        /* [ranks] 1 + the slowdown of the rank's episode now, 1 outside one */
    double widen;        /* wander() of the typical warm rank's autocorrelation */
    unsigned warm_ranks; /* ranks past warm-up */
    int no_quick;        /* hn_strag_set_quick(s, 0): every report takes the full path */
    unsigned pool_ranks; /* warm ranks when pool was counted */
};

/* ---- configuration ---- */

void hn_strag_config_default(struct hn_strag_config *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->warmup = 16;
    cfg->quorum = 0.5;
    cfg->baseline_alpha = 1.0 / 64;
    cfg->alpha_noise = 0.02;
    cfg->noise_floor = 0.005;
    cfg->shift = 2;
    cfg->tail_dof = 4;
    cfg->cusum_h = 12.5;
    cfg->min_steps = 3;
    cfg->min_slowdown = 0.025;
    cfg->transient_min = 0.5;
    cfg->recover_window = 8;
    cfg->from_start_min = 0.2;
    cfg->job_min_slowdown = 0.1;
    cfg->big_shift = 4;
    cfg->big_h = 19;
}

/* True when lo <= v <= hi (false for NaN). */
static int within(double v, double lo, double hi)
{
    return v >= lo && v <= hi;
}

/* The thresholds an operator may set, by the names that `houston straggler`'s flags
 * (--NAME) and the controller's settings (straggler-NAME) give them, with their ranges. */
#define STRAG(field) offsetof(struct hn_strag_config, field)
static const struct hn_setting strag_rows[] = {
    {"warmup", HN_SET_UNSIGNED, STRAG(warmup), .lo = 3, .hi = HN_STRAG_RING, .flags = HN_SET_WHOLE},
    {"threshold", HN_SET_DOUBLE, STRAG(cusum_h), .lo = 0.1, .hi = 1000},
    {"big-threshold", HN_SET_DOUBLE, STRAG(big_h), .lo = 0.1, .hi = 1000},
    {"min-slowdown", HN_SET_DOUBLE, STRAG(min_slowdown), .lo = 0, .hi = 100},
    {"transient-min", HN_SET_DOUBLE, STRAG(transient_min), .lo = 1e-6, .hi = 1e6},
    {"from-start-min", HN_SET_DOUBLE, STRAG(from_start_min), .lo = 1e-6, .hi = 1e6},
    {"job-min-slowdown", HN_SET_DOUBLE, STRAG(job_min_slowdown), .lo = 0, .hi = 100},
    {"quorum", HN_SET_DOUBLE, STRAG(quorum), .lo = 0, .hi = 1},
    {"baseline-alpha", HN_SET_DOUBLE, STRAG(baseline_alpha), .lo = 0, .hi = 0.5},
    {"alpha-noise", HN_SET_DOUBLE, STRAG(alpha_noise), .lo = 1e-6, .hi = 1},
};

const struct hn_settings hn_strag_settings = {strag_rows, HN_ARRAY_LEN(strag_rows),
                                              HN_SETTINGS_PLAIN};

const char *hn_strag_setting_name(size_t i)
{
    return i < HN_ARRAY_LEN(strag_rows) ? strag_rows[i].name : NULL;
}

int hn_strag_config_set(struct hn_strag_config *c, const char *name, const char *value, char *err,
                        size_t errsize)
{
    const struct hn_setting *t = hn_settings_find(&hn_strag_settings, name);
    if (!t) {
        hn_set_err(err, errsize, "'%s' is not a straggler threshold", name);
        return -ENOENT;
    }
    return hn_settings_put(&hn_strag_settings, t, c, NULL, value, err, errsize);
}

int hn_strag_config_check(const struct hn_strag_config *c, char *err, size_t errsize)
{
    for (size_t i = 0; i < HN_ARRAY_LEN(strag_rows); i++) {
        const struct hn_setting *t = &strag_rows[i];
        if (!within(hn_settings_number(t, c), t->lo, t->hi)) {
            hn_set_err(err, errsize, "%s must be %g..%g", t->name, t->lo, t->hi);
            return -EINVAL;
        }
    }
    const char *bad = NULL;
    if (!within(c->noise_floor, 1e-6, 1))
        bad = "noise_floor must be 1e-6..1";
    else if (!within(c->shift, 0.1, 100) || !within(c->tail_dof, 1, 1000))
        bad = "shift must be 0.1..100 noise units and tail_dof 1..1000";
    else if (c->big_shift != 0 && !(within(c->big_shift, 0.1, 100) && c->big_shift > c->shift))
        bad = "big_shift must be 0 (off) or above shift, at most 100 noise units";
    else if (c->min_steps < 1 || c->min_steps > HN_STRAG_RING)
        bad = "min_steps must be 1..16";
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

static void ring_put(const struct ring_view *rv, double v)
{
    rv->p[(rv->now % HN_STRAG_RING) * rv->stride] = (float)v;
}

/* Copies the series' reports in its ring into v, oldest first (at most HN_STRAG_RING);
 * returns how many, and in *first (when not NULL) the step number of the oldest. */
static unsigned ring_get(const struct ring_view *rv, double *v, uint64_t *first)
{
    uint64_t span = rv->now - rv->from < HN_STRAG_RING ? rv->now - rv->from : HN_STRAG_RING;
    unsigned n = 0;
    for (uint64_t c = rv->now + 1 - span; c <= rv->now; c++) {
        float x = rv->p[(c % HN_STRAG_RING) * rv->stride];
        if (x == x) { /* not NaN: a report */
            if (n == 0 && first)
                *first = rv->steps[c % HN_STRAG_RING];
            v[n++] = x;
        }
    }
    return n;
}

/*
 * Batcher's odd-even merge sort network for 16 values ("Sorting networks and their
 * applications", AFIPS 1968): 63 compare-exchanges (i, j), i < j, written as min and max, that
 * leave any 16 values in order, listed in the order of the network's usual iterative form (for
 * p = 1, 2, 4, 8; for k = p, p/2, ..., 1; for j = k mod p, step 2k; for i < k: (i + j, i + j +
 * k) when both lie in the same block of 2p). A fixed sequence with no branch, where quickselect
 * would mispredict every other comparison, and with constant indices, so that the compiler keeps
 * the 16 values in registers. This runs for every rank when the ranks end their warm-up
 * together. test_straggler.c checks that it sorts.
 */
#define CE(a, i, j)                                                                                \
    do {                                                                                           \
        double x_ = (a)[i], y_ = (a)[j];                                                           \
        (a)[i] = dmin(x_, y_);                                                                     \
        (a)[j] = dmax(x_, y_);                                                                     \
    } while (0)
#define SORT16(a)                                                                                  \
    CE(a, 0, 1);                                                                                   \
    CE(a, 2, 3);                                                                                   \
    CE(a, 4, 5);                                                                                   \
    CE(a, 6, 7);                                                                                   \
    CE(a, 8, 9);                                                                                   \
    CE(a, 10, 11);                                                                                 \
    CE(a, 12, 13);                                                                                 \
    CE(a, 14, 15);                                                                                 \
    CE(a, 0, 2);                                                                                   \
    CE(a, 1, 3);                                                                                   \
    CE(a, 4, 6);                                                                                   \
    CE(a, 5, 7);                                                                                   \
    CE(a, 8, 10);                                                                                  \
    CE(a, 9, 11);                                                                                  \
    CE(a, 12, 14);                                                                                 \
    CE(a, 13, 15);                                                                                 \
    CE(a, 1, 2);                                                                                   \
    CE(a, 5, 6);                                                                                   \
    CE(a, 9, 10);                                                                                  \
    CE(a, 13, 14);                                                                                 \
    CE(a, 0, 4);                                                                                   \
    CE(a, 1, 5);                                                                                   \
    CE(a, 2, 6);                                                                                   \
    CE(a, 3, 7);                                                                                   \
    CE(a, 8, 12);                                                                                  \
    CE(a, 9, 13);                                                                                  \
    CE(a, 10, 14);                                                                                 \
    CE(a, 11, 15);                                                                                 \
    CE(a, 2, 4);                                                                                   \
    CE(a, 3, 5);                                                                                   \
    CE(a, 10, 12);                                                                                 \
    CE(a, 11, 13);                                                                                 \
    CE(a, 1, 2);                                                                                   \
    CE(a, 3, 4);                                                                                   \
    CE(a, 5, 6);                                                                                   \
    CE(a, 9, 10);                                                                                  \
    CE(a, 11, 12);                                                                                 \
    CE(a, 13, 14);                                                                                 \
    CE(a, 0, 8);                                                                                   \
    CE(a, 1, 9);                                                                                   \
    CE(a, 2, 10);                                                                                  \
    CE(a, 3, 11);                                                                                  \
    CE(a, 4, 12);                                                                                  \
    CE(a, 5, 13);                                                                                  \
    CE(a, 6, 14);                                                                                  \
    CE(a, 7, 15);                                                                                  \
    CE(a, 4, 8);                                                                                   \
    CE(a, 5, 9);                                                                                   \
    CE(a, 6, 10);                                                                                  \
    CE(a, 7, 11);                                                                                  \
    CE(a, 2, 4);                                                                                   \
    CE(a, 3, 5);                                                                                   \
    CE(a, 6, 8);                                                                                   \
    CE(a, 7, 9);                                                                                   \
    CE(a, 10, 12);                                                                                 \
    CE(a, 11, 13);                                                                                 \
    CE(a, 1, 2);                                                                                   \
    CE(a, 3, 4);                                                                                   \
    CE(a, 5, 6);                                                                                   \
    CE(a, 7, 8);                                                                                   \
    CE(a, 9, 10);                                                                                  \
    CE(a, 11, 12);                                                                                 \
    CE(a, 13, 14);

_Static_assert(HN_STRAG_RING == 16, "SORT16 sorts a ring of 16");

/* Sorts v[0..n), n <= 16, through SORT16 with the missing values +inf. */
static void sort_ring(double *v, unsigned n)
{
    double a[16];
    for (unsigned i = 0; i < 16; i++)
        a[i] = i < n ? v[i] : INFINITY;
    SORT16(a);
    memcpy(v, a, n * sizeof(*v));
}

/* The baseline, noise and autocorrelation a series starts with from its n (1..16) warm-up
 * values v[0..n) in order: the median, the scaled
 * MAD relative to it (at least floor) and the EWMAs of w * w and w * w_prev of the winsorised
 * excess. (In warm-up order: the autocorrelation needs the order.) */
static void warmup_stats(const double *v, unsigned n, float floor, float *base, float *noise,
                         float *c0, float *c1, float *w_prev)
{
    double a[16];
    for (unsigned j = 0; j < 16; j++)
        a[j] = j < n ? v[j] : INFINITY;
    SORT16(a);
    unsigned lo = (n - 1) / 2, hi = n / 2; /* the same for odd n */
    double med = (a[lo] + a[hi]) / 2;
    for (unsigned j = 0; j < 16; j++)
        a[j] = j < n ? fabs(v[j] - med) : INFINITY;
    SORT16(a);
    double mad = (a[lo] + a[hi]) / 2;
    double scale = med > 0 ? MAD_TO_SIGMA * mad / med : 0;
    float b = (float)med, nz = (float)dmax(scale, floor);
    double s0 = 0, s1 = 0, prev = 0;
    for (unsigned j = 0; j < n; j++) {
        double w = dmax(-2.0 * nz, dmin(2.0 * nz, v[j] / med - 1));
        s0 += w * w;
        s1 += w * prev;
        prev = w;
    }
    *base = b;
    *noise = nz;
    *c0 = (float)(s0 / n);
    *c1 = (float)(s1 / n);
    *w_prev = (float)prev;
}

/* The median of v[0..n), 1 <= n <= HN_STRAG_RING, the same value hn_median gives. Reorders v. */
static double median_ring(double *v, unsigned n)
{
    sort_ring(v, n);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Median of the newest n (at least 1) reports in the series' ring, or of as many as it
 * holds (at least the current one). */
static double ring_median(const struct ring_view *rv, unsigned n)
{
    double v[HN_STRAG_RING];
    unsigned k = ring_get(rv, v, NULL);
    assert(k >= 1 && n >= 1);
    if (n > k)
        n = k;
    return median_ring(v + (k - n), n);
}

/* ---- one series ---- */

/* Ends warm-up: the baseline is the median of the warm-up values, the noise their scaled MAD
 * relative to it (at least the floor). */
static void finish_warmup(const struct hn_strag_config *cfg, struct series *s,
                          const struct ring_view *rv)
{
    double v[HN_STRAG_RING] = {0};
    /* The first report is the oldest one in the ring (when the warm-up took more counted
     * steps than the ring holds, because the series missed some, the oldest one kept). */
    unsigned n = ring_get(rv, v, &s->first_step);
    warmup_stats(v, n, (float)cfg->noise_floor, &s->base, &s->noise, &s->c0, &s->c1, &s->w_prev);
    s->s1 = s->base;
    s->s2 = s->base;
    s->phase = PH_NORMAL;
    s->ring_from = rv->now; /* the warm-up values are not excess */
    s->cusum = 0;
}

/* The weight a of a series' report number n (n >= 2) in adapt and the trend gain a / (1 - a)
 * of Brown's smoothing: the series' alpha and alpha / (1 - alpha), or 1 / n and 1 / (n - 1)
 * while n * alpha < 1. A series' alpha is baseline_alpha while its noise is at most alpha_noise,
 * and baseline_alpha * alpha_noise / noise beyond. The steady-state gain of a Kalman filter
 * that follows a level drifting at a given rate through noise falls as the noise grows (for a
 * random-walk level and a slow drift, in proportion to drift / noise: Harvey, "Forecasting,
 * structural time series models and the Kalman filter", 1989, on the local level model), so a
 * noisy rank averages over more reports; the proportion and alpha_noise were set on
 * bench/straggler (bench/results/straggler.md, summary of da5b086). (n is held below 2^24,
 * where a float holds it exactly and alpha is in force long since, and converted as a signed
 * number, which vector units can.) */
static ALWAYS_INLINE void adapt_weight(const struct model *ev, uint32_t reports, float noise,
                                       float *a, float *gain)
{
    float n = (float)(int32_t)(reports < (1u << 24) ? reports : (1u << 24));
    int noisy = noise > ev->ref;
    float alpha = noisy ? ev->ka / noise : ev->alpha;
    float trend = noisy ? ev->ka / (noise - ev->ka) : ev->trend;
    int ewma = !(n * alpha < 1);
    float inv = 1 / (n * (n - 1));
    *a = ewma ? alpha : (n - 1) * inv;
    *gain = ewma ? trend : n * inv;
}

/* Follows slow drifts: baseline and noise move by alpha towards this report, the excess
 * winsorised at 2 noise units so that no single report pulls them far. Until a rank has
 * 1 / alpha reports the weight is 1 / reports instead: a running mean that refines what the
 * sixteen warm-up reports gave (their median is off by a third of a noise unit as often as
 * not) as fast as the reports allow, then hands over to the EWMA. */
static ALWAYS_INLINE void adapt(const struct model *ev, struct series *s, float d, float sigma)
{
    float a, gain;
    adapt_weight(ev, s->reports, s->noise, &a, &gain);
    float w = fmaxs(-2 * sigma, fmins(2 * sigma, d));
    float x = s->base * (1 + w);
    float s1 = s->s1 + a * (x - s->s1);
    float s2 = s->s2 + a * (s1 - s->s2);
    s->s1 = s1;
    s->s2 = s2;
    s->base = 2 * s1 - s2 + gain * (s1 - s2);
    float dev = fmins(fabsf(d) * (float)MEAN_ABS_TO_SIGMA, NOISE_CLIP * sigma);
    s->noise = fmaxs(s->noise + a * (dev - s->noise), ev->floor);
    s->c0 += a * (w * w - s->c0);
    s->c1 += a * (w * s->w_prev - s->c1);
    s->w_prev = w;
}

/* The lag-1 autocorrelation of a series' excess from its EWMAs c0 (of w * w) and c1 (of
 * w * w_prev), held to 0..0.9. */
static double autocorr(float c0, float c1)
{
    double rho = c0 > 0 ? c1 / c0 : 0;
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
static enum event track_spikes(const struct model *ev, struct series *s, uint64_t step, float d)
{
    if (d >= ev->spike) {
        if (s->spike_state == SPIKE_NONE) {
            s->spike_onset = step;
            s->spike_peak = d;
        }
        s->spike_state = SPIKE_OPEN;
        s->spike_last = step;
        if (d > s->spike_peak)
            s->spike_peak = d;
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
static enum event slow_report(const struct hn_strag_config *cfg, struct series *s,
                              const struct ring_view *rv, uint64_t step, double d, double sigma_sum,
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
        s->peak = (float)d;
    double e = llr_t(cfg->tail_dof, level / sigma_sum, (level - d) / sigma_sum);
    s->cusum = (float)dmin(dmax(0, s->cusum + e), 2 * cfg->cusum_h);
    unsigned n = s->since_onset < cfg->recover_window ? s->since_onset : cfg->recover_window;
    if (s->cusum >= cfg->cusum_h && ring_median(rv, n) < level) {
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
static enum event watch_report(const struct hn_strag_config *cfg, const struct model *ev,
                               struct series *s, const struct ring_view *rv, uint64_t step, float d,
                               float z, float sigma, double min_slowdown)
{
    int rest = s->cusum == 0;
    /* The ratio is at most 0 up to z = shift / 2; at rest such a report starts nothing. */
    float e = rest && z <= ev->shift / 2 ? 0 : evidence(*ev, z);
    /* Page's estimate of the change point: where the statistic last left zero. */
    int start = rest && e > 0;
    s->onset = start ? step : s->onset;
    s->since_onset = start ? 1 : s->since_onset;
    float peak = start ? d : s->peak;
    s->peak = (!rest || e > 0) && d > peak ? d : peak;
    /* At rest with no evidence this leaves the CUSUM at zero. */
    s->cusum = fmins(fmaxs(0, s->cusum + e), 2 * ev->h);
    if (s->since_onset > ABSORB_REPORTS && s->cusum > 0)
        s->cusum = 0;
    /* The large-shift CUSUM, the same way (big_shift 0: its evidence never counts). */
    int rest_big = s->cusum_big == 0;
    float e_big =
        ev->big_shift > 0 && (!rest_big || z > ev->big_shift / 2) ? evidence_big(*ev, z) : 0;
    int start_big = rest_big && e_big > 0;
    s->onset_big = start_big ? step : s->onset_big;
    s->since_big = start_big ? 1 : s->since_big + (s->since_big < UINT32_MAX);
    s->cusum_big = fmins(fmaxs(0, s->cusum_big + e_big), 2 * ev->big_h);
    if (s->since_big > ABSORB_REPORTS && s->cusum_big > 0)
        s->cusum_big = 0;
    enum event out = EV_NONE;
    int small = s->cusum >= ev->h && s->since_onset >= cfg->min_steps;
    int big = s->cusum_big >= ev->big_h && s->since_big >= cfg->min_steps;
    if (small || big) {
        double est = ring_median(rv, small ? s->since_onset : s->since_big);
        /* Still slow now: a run of spikes that just ended is not a slowdown. */
        if (est >= min_slowdown && d >= est / 2) {
            if (!small) { /* the large-shift CUSUM fired: its onset */
                s->onset = s->onset_big;
                s->since_onset = s->since_big;
            }
            s->phase = PH_SLOW;
            s->sum = est * s->since_onset;
            s->sum_high = s->sum;
            s->n_high = s->since_onset;
            s->score = small ? s->cusum : s->cusum_big;
            s->cusum = 0; /* from now on, the evidence of recovery */
            s->cusum_big = 0;
            s->alarm = est;
            s->last_high = step;
            s->spike_state = SPIKE_NONE;
            out = EV_PERSISTENT;
        }
    }
    if (s->phase == PH_NORMAL && s->cusum < ev->h / 2 && s->cusum_big < ev->big_h / 2)
        adapt(ev, s, d, sigma);
    return out;
}

/*
 * One report v of series s at step. peers is the noise of the rank's peers, the least noise
 * assumed for it (0 for the job series); widen is wander() for the series; min_slowdown the
 * smallest excess worth a persistent detection; spikes says whether to track spikes for
 * transient detections. Returns what happened; the caller turns it into a detection from the
 * fields of s.
 */
static enum event series_update(const struct hn_strag_config *cfg, const struct model *ev,
                                struct series *s, const struct ring_view *rv, uint64_t step,
                                double v, float peers, float widen, double min_slowdown, int spikes)
{
    if (s->reports < UINT32_MAX)
        s->reports++;
    if (s->phase == PH_WARMUP) {
        ring_put(rv, v);
        if (s->reports < cfg->warmup)
            return EV_NONE;
        finish_warmup(cfg, s, rv);
        return EV_WARM;
    }

    float sigma = fmaxs(s->noise, fmaxs(peers, ev->floor));
    float sigma_sum = sigma * widen; /* for the evidence that is summed */
    /* The excess d = v / base - 1 and its standardised z = d / sigma_sum, from one division. */
    float inv = 1 / (s->base * sigma_sum);
    float z = ((float)v - s->base) * inv;
    float d = z * sigma_sum;
    enum event out = EV_NONE;
    ring_put(rv, d);
    if (s->since_onset < UINT32_MAX)
        s->since_onset++;

    if (s->phase == PH_SLOW) {
        out = slow_report(cfg, s, rv, step, d, sigma_sum, min_slowdown);
    } else if (s->reports < 2 * cfg->warmup) {
        /* Settling: the baseline from the warm-up is refined by a running mean before any
         * evidence counts; a baseline off by a third of a noise unit would otherwise add up to
         * a detection within a few dozen reports. */
        adapt(ev, s, d, sigma);
    } else {
        out = watch_report(cfg, ev, s, rv, step, d, z, sigma, min_slowdown);
    }
    if (spikes && out == EV_NONE && s->phase == PH_NORMAL)
        out = track_spikes(ev, s, step, d);
    return out;
}

/* ---- the detector ---- */

/* n zeroed elements of size bytes, written now: calloc maps large blocks lazily, and the page
 * faults would otherwise come in the first steps that touch them, inside hn_strag_step, which
 * promises to allocate nothing. */
static void *zalloc(size_t n, size_t size)
{
    void *p = xcalloc(n, size);
    memset(p, 0, n * size);
    return p;
}

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
    s->rank = zalloc(ranks, sizeof(*s->rank));
    struct hot *h = &s->hot;
#define HOT_ALLOC(type, field, array) h->array = zalloc(ranks, sizeof(type));
    HOT_FIELDS(HOT_ALLOC)
    h->mode = zalloc(ranks, sizeof(uint32_t)); /* MODE_WARMUP */
    h->took = zalloc(ranks, sizeof(uint32_t));
    s->ring = zalloc((size_t)HN_STRAG_RING * ranks, sizeof(float));
    s->scratch = zalloc(ranks, sizeof(*s->scratch));
    s->norm = zalloc(ranks, sizeof(*s->norm));
    s->known = zalloc(ranks, sizeof(*s->known));
    for (unsigned r = 0; r < ranks; r++)
        s->known[r] = 1;
    /* A step gives at most one detection a rank and one for the job: polled after every step,
     * the queue never drops one, however many ranks change at once. */
    s->qcap = (size_t)ranks + 2;
    s->queue = zalloc(s->qcap, sizeof(*s->queue));
    return s;
}

void hn_strag_free(struct hn_strag *s)
{
    if (!s)
        return;
    free(s->queue);
    free(s->scratch);
    free(s->norm);
    free(s->known);
    free(s->rank);
    struct hot *h = &s->hot;
#define HOT_FREE(type, field, array) free(h->array);
    HOT_FIELDS(HOT_FREE)
    free(h->mode);
    free(h->took);
    free(s->ring);
    free(s);
}

unsigned hn_strag_ranks(const struct hn_strag *s)
{
    return s->ranks;
}

unsigned hn_strag_quorum(const struct hn_strag *s)
{
    return s->need;
}

/* A rank's excess over the step's reference, the typical rank, from its excess over its own
 * normal and that normal (its ratio to the reference). */
static double vs_reference(double slowdown, double base)
{
    return (1 + slowdown) * base - 1;
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
    /* For a rank, vs_peers is the ratio to the step's reference; for the job, the excess over the
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
    d->vs_peers = vs_reference(d->slowdown, base);
    s->qlen++;
    return 1;
}

/* The whole job: the step's reference against its own history. */
static int job_update(struct hn_strag *s, uint64_t step, double m)
{
    double widen = s->job.phase == PH_WARMUP ? 1 : wander(autocorr(s->job.c0, s->job.c1));
    struct ring_view rv = {s->job_ring, 1, s->stats.steps, s->job.ring_from, s->slot_step};
    enum event ev = series_update(&s->cfg, &s->ev, &s->job, &rv, step, m, 0, (float)widen,
                                  s->cfg.job_min_slowdown, 0);
    if (ev == EV_PERSISTENT)
        return emit(s, HN_STRAG_JOB_SLOWDOWN, HN_STRAG_ALL_RANKS, &s->job, step);
    if (ev == EV_RECOVERED)
        return emit(s, HN_STRAG_RECOVERED, HN_STRAG_ALL_RANKS, &s->job, step);
    return 0;
}

/* The mode (MODE_*) of a rank after a report through the full path. */
static uint32_t mode_of(const struct series *ser)
{
    if (ser->phase == PH_WARMUP)
        return MODE_WARMUP;
    if (ser->phase != PH_NORMAL)
        return MODE_FULL;
    return ser->spike_state == SPIKE_NONE ? MODE_QUIET : MODE_SPIKE;
}

/* One report of rank r through the full path (series_update), its hot fields copied in and
 * out. */
static int rank_update(struct hn_strag *s, unsigned r, uint64_t step, double q, double peers)
{
    struct series *ser = &s->rank[r];
    struct hot *h = &s->hot;
#define HOT_IN(type, field, array) ser->field = h->array[r];
    HOT_FIELDS(HOT_IN)
    ser->spike_state = h->mode[r] == MODE_SPIKE ? SPIKE_OPEN : SPIKE_NONE;
    int was_slow = ser->phase == PH_SLOW;
    struct ring_view rv = {s->ring + r, s->ranks, s->stats.steps, ser->ring_from, s->slot_step};
    enum event ev = series_update(&s->cfg, &s->ev, ser, &rv, step, q, (float)peers, (float)s->widen,
                                  s->cfg.min_slowdown, 1);
#define HOT_OUT(type, field, array) h->array[r] = ser->field;
    HOT_FIELDS(HOT_OUT)
    h->mode[r] = mode_of(ser);
    /* A rank inside an episode counts in the step's reference at its normal speed: its report
     * over 1 + its slowdown now, the median excess of its last (up to 16) reports. */
    if (ser->phase == PH_SLOW) {
        unsigned n = ser->since_onset < HN_STRAG_RING ? ser->since_onset : HN_STRAG_RING;
        s->known[r] = (float)(1 + dmax(0, ring_median(&rv, n)));
    } else if (was_slow) {
        s->known[r] = 1;
    }
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
    return 0;
}

/* The typical rank's noise, wander and baseline: medians of the warm ranks' own estimates.
 * Sixteen reports (the warm-up) or a 1/64 EWMA estimate a scale to within 10-25%; a rank whose
 * estimate came out low would see ordinary noise as a slowdown, so no rank is taken to be
 * quieter than s->pool. An autocorrelation needs even more reports, so every rank uses the
 * typical one (s->widen). The typical baseline is step_reference's gauge; ranks inside an
 * episode count for it with the baseline they had before (it is frozen), so that it does not
 * move when a rank of a small job starts or ends an episode. Recounted every POOL_EVERY steps
 * and whenever ranks warm up. */
static void pool_typical(struct hn_strag *s)
{
    /* A typical value needs no more than POOL_SAMPLE ranks; large jobs use every k-th. */
    unsigned stride = s->ranks > POOL_SAMPLE ? s->ranks / POOL_SAMPLE : 1;
    size_t n = 0;
    for (unsigned r = 0; r < s->ranks; r += stride) {
        if (s->hot.mode[r] != MODE_WARMUP)
            s->scratch[n++] = s->hot.noise[r];
    }
    s->pool_ranks = s->warm_ranks;
    s->pool = n ? hn_median(s->scratch, n) : 0;
    n = 0;
    for (unsigned r = 0; r < s->ranks; r += stride) {
        if (s->hot.mode[r] != MODE_WARMUP)
            s->scratch[n++] = autocorr(s->hot.c0[r], s->hot.c1[r]);
    }
    s->widen = wander(n ? hn_median(s->scratch, n) : 0);
    n = 0;
    for (unsigned r = 0; r < s->ranks; r += stride) {
        if (s->hot.mode[r] != MODE_WARMUP)
            s->scratch[n++] = s->hot.base[r];
    }
    s->gauge = n ? hn_median(s->scratch, n) : 0;
}

/* True for a report: a finite positive number (false for NaN). */
static inline int reported(double x)
{
    return x > 0 && x < INFINITY;
}

/* The reports among x[0..n), counted in one pass that runs on vectors of values. */
static QUICK_PASS_TARGETS size_t count_reports(const double *restrict x, size_t n)
{
    size_t r = 0;
    for (size_t i = 0; i < n; i++)
        r += (x[i] > 0) & (x[i] < INFINITY);
    return r;
}

/* This step's spread of the excess across the warm ranks, 1.4826 x its MAD less its sampling
 * error: a robust scale that rises when everyone scatters at once (a checkpoint written at
 * different speeds). A rank inside an episode counts at its normal speed (s->known), as its
 * excess is known to be large: three of eight would otherwise make every step look scattered.
 * A scale needs no more than DISPERSION_SAMPLE ranks, so large jobs use every k-th rank. */
static double dispersion(struct hn_strag *s, const double *seconds, double m)
{
    unsigned stride = s->ranks > DISPERSION_SAMPLE ? s->ranks / DISPERSION_SAMPLE : 1;
    size_t n = 0;
    for (unsigned r = 0; r < s->ranks; r += stride) {
        if (reported(seconds[r]) && s->hot.mode[r] != MODE_WARMUP)
            s->scratch[n++] = fabs(seconds[r] / m / (s->hot.base[r] * s->known[r]) - 1);
    }
    if (n < MIN_DISPERSION_RANKS)
        return 0;
    /* A MAD of n values is itself uncertain by about 1.16 / sqrt(n) of itself (its efficiency
     * for normal data is 37%: Rousseeuw & Croux, "Alternatives to the median absolute
     * deviation", JASA 88, 1993), so in an 8-rank job one step in several scatters by chance
     * as much as a checkpoint would. Taken off: the spread that is clearly there. */
    double spread = MAD_TO_SIGMA * hn_median(s->scratch, n);
    return spread / (1 + DISPERSION_SE * 1.16 / sqrt((double)n));
}

/*
 * The step's reference time m_t, which every rank's report is divided by; count gets the
 * reports. Until ranks have baselines it is the median of the reports. Then it is the median
 * of the warm ranks' reports each over its own normal (what the step would have taken on the
 * typical rank, by each rank), times the typical baseline s->gauge:
 *
 * - Ranks differ for good by a few percent, as much as the jitter. The median of the raw
 *   reports of a small job is then mostly the report of the same few middle ranks, nearly
 *   as noisy as one report; over the ranks' own normals it is the median of n comparable
 *   values, about 1.25 / sqrt(n) as noisy (the sample median's standard error for normal
 *   data). The noise of the reference is in every rank's ratio, so in 8- to 64-rank jobs it
 *   cost detections (docs/straggler.md has the figures).
 * - A rank inside a persistent episode counts at its normal speed: its report over its
 *   baseline and over 1 + its slowdown now (s->known, rank_update). Three slow ranks of
 *   eight and a GC pause on a fourth would otherwise move the median of eight to a slow
 *   rank's report. (Leaving them out instead makes the reference jump whenever a rank
 *   enters or leaves an episode, and flip between two medians when half the ranks are in
 *   one.)
 * - Dividing by the gauge holds the typical baseline at 1, where the raw median put it: a
 *   typical baseline above 1 makes the typical excess negative, and the baselines follow it
 *   back. Without it nothing would hold their level (x / base / median does not depend on
 *   it), the baselines would follow the right-skewed reports upwards together, and one frozen
 *   during an episode would be stale against the others when the episode ends.
 *
 * While fewer than half the reporting ranks (or than 3) are warm, the median of the reports.
 * That changes only as ranks warm up, once each.
 *
 * A job of 2 x REF_SAMPLE ranks or more takes these medians over every k-th rank, k the first
 * number from ranks / REF_SAMPLE on that neither 2 nor 3 divides (at most REF_SAMPLE ranks, at
 * least 2 / 5 of that), and counts its reports in a vector pass: the median of n values is
 * within 1.25 / sqrt(n) noise units of the median of all (its standard error), 0.03 to 0.05
 * here, far below a rank's own noise, and the step costs a selection among n values instead
 * of all. As k is prime to 2 and 3, the sample visits every local rank of nodes of 4, 6, 8 or
 * 12 ranks (a slow rank 0 on each node cannot tilt it). When fewer than REF_SAMPLE_MIN of the
 * sample reported, all ranks.
 */
static double step_reference(struct hn_strag *s, const double *seconds, size_t *count)
{
    size_t ranks = s->ranks, stride = ranks / REF_SAMPLE;
    if (stride < 2)
        stride = 1;
    else
        while (stride % 2 == 0 || stride % 3 == 0)
            stride++; /* 5, 7, 11, 13, ...: see above */
    for (;;) {
        size_t n = 0, warm = 0;
        for (size_t r = 0; r < ranks; r += stride) {
            double x = seconds[r];
            if (!reported(x))
                continue;
            s->scratch[n++] = x;
            if (s->hot.mode[r] != MODE_WARMUP)
                s->norm[warm++] = x / ((double)s->hot.base[r] * s->known[r]);
        }
        if (stride > 1 && n < REF_SAMPLE_MIN) {
            stride = 1; /* most of the sample did not report: all ranks */
            continue;
        }
        *count = stride > 1 ? count_reports(seconds, ranks) : n;
        if (s->gauge > 0 && warm >= MIN_WARM && 2 * warm >= n)
            return hn_median(s->norm, warm) * s->gauge;
        return n ? hn_median(s->scratch, n) : NAN;
    }
}

/*
 * The quick path, for all ranks at once. Most reports change only a rank's running state: a
 * warm-up report that is not the rank's last, and a report of a settled or
 * settling rank (MODE_QUIET, MODE_SPIKE) that is no spike and leads to no decision (its CUSUM
 * stays below cusum_h or too few reports are in) and, with a spike open, does not end the
 * excursion. quick_kernel does exactly what series_update, watch_report,
 * evidence and adapt do for those, the same operations in the same order, so the results are
 * the same to the bit, and writes every rank's report (or NaN) to the current ring slot. Every
 * other report is marked TOOK_FULL and goes through the full path from the state as it was. The
 * loop has no calls, no branches the compiler cannot turn into selects and no scattered stores,
 * so it runs on vectors of ranks.
 */

/* The constants of one step's quick pass. */
struct quick_k {
    struct model ev;
    uint64_t step;
    double inv_m;
    float peer_sigma, widen;
    uint32_t warmup, settle, min_steps;
};

static QUICK_PASS_TARGETS void
quick_kernel(size_t ranks, const struct quick_k *k, const double *restrict x, float *restrict base,
             float *restrict s1, float *restrict s2, float *restrict noise, float *restrict cusum,
             float *restrict peak, float *restrict c0, float *restrict c1, float *restrict w_prev,
             uint64_t *restrict onset, uint32_t *restrict since, float *restrict cusum_big,
             uint64_t *restrict onset_big, uint32_t *restrict since_big,
             uint64_t *restrict spike_onset, uint64_t *restrict spike_last,
             float *restrict spike_peak, uint32_t *restrict reports, uint32_t *restrict mode,
             uint32_t *restrict took, float *restrict ring)
{
    /* Everything the loop reads besides the arrays, in locals: a field read under a condition
     * would be a masked load, which keeps GCC from vectorising. */
    const struct model ev = k->ev;
    const double inv_m = k->inv_m;
    const float peer_sigma = k->peer_sigma, widen = k->widen, half_shift = ev.shift / 2;
    const float floor = ev.floor, h = ev.h, h_max = 2 * ev.h, spike = ev.spike;
    const float big_h = ev.big_h, big_max = 2 * ev.big_h, half_big = ev.big_shift / 2;
    const int big_on = ev.big_shift > 0;
    const uint64_t step = k->step;
    const uint32_t warmup = k->warmup, settle = k->settle, min_steps = k->min_steps;
    for (size_t r = 0; r < ranks; r++) {
        /* Every load first and every store last, unconditionally: a load or store under a
         * condition would keep the compiler from turning the selects into vector blends. */
        double xr = x[r];
        float b = base[r], nz = noise[r], o1 = s1[r], o2 = s2[r], cu = cusum[r], pk = peak[r];
        float k0 = c0[r], k1 = c1[r], wp = w_prev[r], cb = cusum_big[r];
        uint64_t on0 = onset[r], ob0 = onset_big[r];
        uint32_t n0 = reports[r], so0 = since[r], sb0 = since_big[r], md = mode[r];
        int rep = (xr > 0) & (xr < INFINITY);
        uint32_t n = n0 + (n0 < UINT32_MAX);
        float v = (float)(xr * inv_m);
        /* series_update, warm-up */
        int qw = rep & (md == MODE_WARMUP) & (n < warmup);
        /* series_update, settled or settling */
        float sigma = fmaxs(nz, peer_sigma);
        float ssum = sigma * widen;
        float inv = 1 / (b * ssum);
        float z = (v - b) * inv;
        float d = z * ssum;
        uint32_t so = so0 + (so0 < UINT32_MAX);
        int settling = n < settle;
        /* watch_report. (Its tests "e > 0" are spelled out from none and the evidence, as GCC
         * does not vectorise a select between masks of different widths.) */
        int rest = cu == 0;
        int none = rest & (z <= half_shift); /* no evidence: the ratio is at most 0 there */
        float e = evidence(ev, z);
        int positive = (!none) & (e > 0);
        e = none ? 0 : e;
        int start = (!settling) & rest & positive;
        uint64_t on = start ? step : on0;
        so = start ? 1 : so;
        float p0 = start ? d : pk;
        float np = ((!rest) | positive) & (d > p0) ? d : p0;
        float nc = fmins(fmaxs(0, cu + e), h_max);
        nc = (so > ABSORB_REPORTS) & (nc > 0) ? 0 : nc;
        /* the large-shift CUSUM */
        int rest_big = cb == 0;
        int none_big = (!big_on) | (rest_big & (z <= half_big));
        float eb = evidence_big(ev, z);
        int positive_big = (!none_big) & (eb > 0);
        eb = none_big ? 0 : eb;
        int start_big = rest_big & positive_big;
        uint64_t ob = start_big ? step : ob0;
        uint32_t sb = start_big ? 1 : sb0 + (sb0 < UINT32_MAX);
        float ncb = fmins(fmaxs(0, cb + eb), big_max);
        ncb = (sb > ABSORB_REPORTS) & (ncb > 0) ? 0 : ncb;
        int decide =
            (!settling) & (((nc >= h) & (so >= min_steps)) | ((ncb >= big_h) & (sb >= min_steps)));
        /* track_spikes: a spike opens an excursion or goes on with it; with one open, a report
         * that is no spike changes nothing while the CUSUM stays above zero, and at zero the
         * excursion ends (a transient detection: the full path). */
        int spk = d >= spike;
        uint32_t calm = md == MODE_QUIET                                      ? 1u
                        : md == MODE_SPIKE && n >= settle && (spk | (nc > 0)) ? 1u
                                                                              : 0u;
        int qn = rep & (int)calm & (!decide);
        int opens = qn & spk & (md == MODE_QUIET), open = qn & spk;
        int watch = qn & (!settling);
        int ad = qn & (settling | ((nc < h / 2) & (ncb < big_h / 2)));
        /* adapt() */
        float a, gain;
        adapt_weight(&ev, n, nz, &a, &gain);
        float w = fmaxs(-2 * sigma, fmins(2 * sigma, d));
        float xb = b * (1 + w);
        float n1 = o1 + a * (xb - o1);
        float n2 = o2 + a * (n1 - o2);
        float nb = 2 * n1 - n2 + gain * (n1 - n2);
        float dev = fmins(fabsf(d) * (float)MEAN_ABS_TO_SIGMA, NOISE_CLIP * sigma);
        float nn = fmaxs(nz + a * (dev - nz), floor);
        float m0 = k0 + a * (w * w - k0);
        float m1 = k1 + a * (w * wp - k1);
        cusum[r] = watch ? nc : cu;
        peak[r] = watch ? np : pk;
        onset[r] = watch ? on : on0;
        since[r] = qn ? so : so0;
        cusum_big[r] = watch ? ncb : cb;
        onset_big[r] = watch ? ob : ob0;
        since_big[r] = watch ? sb : sb0;
        s1[r] = ad ? n1 : o1;
        s2[r] = ad ? n2 : o2;
        base[r] = ad ? nb : b;
        noise[r] = ad ? nn : nz;
        c0[r] = ad ? m0 : k0;
        c1[r] = ad ? m1 : k1;
        w_prev[r] = ad ? w : wp;
        reports[r] = qw | qn ? n : n0;
        float sp = spike_peak[r];
        uint64_t so_ = spike_onset[r], sl_ = spike_last[r];
        spike_onset[r] = opens ? step : so_;
        spike_last[r] = open ? step : sl_;
        float sq = fmaxs(opens ? d : sp, d);
        spike_peak[r] = open ? sq : sp;
        mode[r] = md + (uint32_t)opens * (MODE_SPIKE - MODE_QUIET); /* opens: md is QUIET */
        ring[r] = rep ? (md == MODE_WARMUP ? v : d) : NAN;
        took[r] = (uint32_t)(rep * TOOK_FULL - (qw | qn) * (TOOK_FULL - TOOK_QUICK));
    }
}

static void quick_pass(struct hn_strag *s, uint64_t step, const double *x, double inv_m,
                       double peers)
{
    const struct hn_strag_config *cfg = &s->cfg;
    struct quick_k k = {
        .ev = s->ev,
        .step = step,
        .inv_m = inv_m,
        .peer_sigma = fmaxs((float)peers, s->ev.floor),
        .widen = (float)s->widen,
        .warmup = cfg->warmup,
        .settle = 2 * cfg->warmup,
        .min_steps = cfg->min_steps,
    };
    struct hot *h = &s->hot;
    float *slot = s->ring + (s->stats.steps % HN_STRAG_RING) * s->ranks;
    if (s->no_quick) { /* every report to the full path, which writes its own ring slot */
        for (unsigned r = 0; r < s->ranks; r++) {
            h->took[r] = reported(x[r]) ? TOOK_FULL : TOOK_NONE;
            slot[r] = NAN;
        }
        return;
    }
    quick_kernel(s->ranks, &k, x, h->base, h->s1, h->s2, h->noise, h->cusum, h->peak, h->c0, h->c1,
                 h->w_prev, h->onset, h->since, h->cusum_big, h->onset_big, h->since_big,
                 h->spike_onset, h->spike_last, h->spike_peak, h->reports, h->mode, h->took, slot);
}

int hn_strag_step(struct hn_strag *s, uint64_t step, const double *seconds)
{
    if (s->any_step && step <= s->last_step) {
        s->stats.rejected++;
        return -EINVAL;
    }
    s->any_step = 1;
    s->last_step = step;

    size_t n;
    double m = step_reference(s, seconds, &n);
    if (n < s->need) { /* need >= 1 */
        s->stats.skipped++;
        return 0;
    }
    s->stats.steps++;
    s->slot_step[s->stats.steps % HN_STRAG_RING] = step;
    int found = job_update(s, step, m);

    if (s->warm_ranks != s->pool_ranks || s->stats.steps % POOL_EVERY == 0)
        pool_typical(s);
    double peers = dmax(dispersion(s, seconds, m) / DISPERSION_MARGIN, s->pool);
    double inv_m = 1 / m;
    quick_pass(s, step, seconds, inv_m, peers);
    /* The reports quick_pass left to the full path, found two at a time (TOOK_FULL is the only
     * value with bit 1 set). */
    const uint32_t *took = s->hot.took;
    unsigned r = 0;
    for (; r + 2 <= s->ranks; r += 2) {
        uint64_t w;
        memcpy(&w, took + r, sizeof(w));
        if (!(w & 0x0000000200000002ULL))
            continue;
        for (unsigned i = r; i < r + 2; i++) {
            if (took[i] == TOOK_FULL)
                found += rank_update(s, i, step, seconds[i] * inv_m, peers);
        }
    }
    if (r < s->ranks && took[r] == TOOK_FULL)
        found += rank_update(s, r, step, seconds[r] * inv_m, peers);
    return found;
}

void hn_strag_set_quick(struct hn_strag *s, int on)
{
    s->no_quick = !on;
}

void hn_strag_sort_ring(double *v, unsigned n)
{
    assert(n <= HN_STRAG_RING);
    sort_ring(v, n);
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
    out->onset_step = 0;
    out->slowdown_now = out->vs_peers_now = 0;
    if (rank != HN_STRAG_ALL_RANKS) {
        out->baseline = s->hot.base[rank];
        out->noise = s->hot.noise[rank];
        out->cusum = s->hot.cusum[rank];
        out->reports = s->hot.reports[rank];
        if (out->slow) {
            out->onset_step = s->hot.onset[rank];
            out->slowdown_now = s->known[rank] - 1;
            out->vs_peers_now = vs_reference(out->slowdown_now, out->baseline);
        }
    }
    return 0;
}

void hn_strag_stats_get(const struct hn_strag *s, struct hn_strag_stats *out)
{
    *out = s->stats;
}
