/*
 * bench_straggler.c - the straggler detector (src/jobs/straggler.c) against two published
 * baselines on synthetic per-rank step times with known truth, in the same run.
 *
 * usage: bench_straggler [--quick | --cpu-only] [--misses] [--no-drift] [--seed N] [--shift S]
 *                        [--h H] [--big-shift S] [--big-h H] [--min-slowdown F] [--dof NU]
 *                        [--min-steps N] [--alpha A] [--alpha-noise N] [--floor F] [--warmup N]
 *
 * (--quick: a tenth of the jobs; --cpu-only: only the CPU measurement; --misses: houston's
 * in-goal misses and false alarms on stderr, one line each with their circumstances;
 * --no-drift: the generator without the ranks' slow drift, to see what following it costs; the
 * other flags override the detector's defaults, for tuning.)
 *
 * The generator (job_init, job_row) makes jobs of 8 to 16,384 ranks. Each rank's compute time per
 * step is a nominal time times: a constant heterogeneity offset (normal, sd 3%, clipped at +-10%,
 * as in the Alibaba PAI job 2), a slow sinusoidal drift (up to 2%, periods of 500-3000 steps),
 * jitter of 1-3% (the job's sigma) from a Student t with 4 degrees of freedom (heavy tails on both
 * sides), a right tail (1% of rank-steps slower by an exponential with mean 4 sigma), periodic
 * garbage-collection pauses per rank (every 50-300 steps, 10-100% of a step, one in ten spills
 * into the next step), checkpoint stalls of the whole job (every 200-1000 steps, +100-400%,
 * each rank +-20% of that), whole-job slowdowns (half the jobs: +10-50% for 50-300 steps), and
 * the injected truth: 1-3 slowdown episodes per job of 2-50% (a third each in 2-5%, 5-10% and
 * 10-50%) on one rank, or on a group of up to 8 ranks (a node) in one episode of five, at a
 * random onset, either to the end of the job or for 40-400 steps. Seeded and deterministic.
 *
 * Detectors see the same rows. An alarm is a persistent detection (houston) or a rank's flag
 * going up (baselines). It counts as a detection of the episode of that rank when it comes
 * between the episode's onset and GRACE steps after its end (the first such alarm gives the
 * steps to detect, detect step - onset step, 0 when the first slow step itself fires; later
 * ones are repeats); any other alarm is a false alarm, and so is a houston from_start report
 * (the generator's offsets stay within 10%). CPU per step is measured separately at 16,384
 * ranks, each detector alone over the same pre-generated rows, best of five rounds taken in
 * turn (measure_cpu).
 *
 *   houston     hn_strag with the given thresholds (defaults: hn_strag_config_default).
 *   nvrx        NVIDIA Resiliency Extension's relative performance score (nvidia-resiliency-ext
 *               straggler detection, usage guide, "relative performance score"): at the end of
 *               each report window, the fastest rank's median step time over this rank's median
 *               in the window; flagged below 0.75. NVRx reports on a wall-clock interval
 *               (minutes); a window of NVRX_WINDOW steps here is generous to it.
 *   greyhound   GREYHOUND's sliding-window rule (Wu et al., "GREYHOUND: Hunting Fail-Slows in
 *               Hybrid-Parallel Training at Scale", USENIX ATC 2025, section 4.1: a slowdown
 *               counts when it is at least 10% of the iteration time): every step, a rank's
 *               median over its last GH_WINDOW steps more than 10% above the median of those
 *               medians across ranks. The change-point (BOCD) stage in front of it is left out.
 *
 * Prints key=value lines (bench/straggler/run.sh records them) and a markdown table.
 */
#include "common/stats.h"
#include "common/util.h"
#include "jobs/straggler.h"
#include "rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GRACE        20 /* steps after an episode's end in which an alarm still counts for it */
#define NVRX_WINDOW  10
#define NVRX_THRESH  0.75
#define GH_WINDOW    10
#define GH_THRESH    1.10
#define MAX_EPIS     32
#define HIT_SLOTS    ((size_t)MAX_EPIS * 8) /* one per rank of each episode */
#define JITTER_BANDS 4
#define BIG_RANKS    16384
#define CPU_STEPS    300 /* steps timed at BIG_RANKS */
#define CPU_ROUNDS   5   /* rounds of all detectors in turn; each one's fastest counts */

static int list_misses; /* --misses */
static int no_drift;    /* --no-drift: every rank's drift amplitude 0 (diagnosis) */

/* ---- counting heap calls (the detector must not allocate after hn_strag_new) ---- */

static unsigned long heap_calls, heap_in_steps;
static int counting, sizing;
static size_t heap_bytes; /* allocated while sizing: houston's state (state_bytes) */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t s);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t s);
void *__wrap_realloc(void *p, size_t n);

void *__wrap_malloc(size_t n)
{
    heap_calls += (unsigned long)counting;
    heap_bytes += sizing ? n : 0;
    return __real_malloc(n);
}
void *__wrap_calloc(size_t n, size_t s)
{
    heap_calls += (unsigned long)counting;
    heap_bytes += sizing ? n * s : 0;
    return __real_calloc(n, s);
}
void *__wrap_realloc(void *p, size_t n)
{
    heap_calls += (unsigned long)counting;
    return __real_realloc(p, n);
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- jobs and their truth ---- */

struct episode {
    unsigned rank0, nranks; /* ranks rank0..rank0+nranks-1 */
    uint64_t onset, end;    /* first and last slow step */
    double slowdown;
    int bucket; /* 0: 2-5%, 1: 5-10%, 2: >= 10% */
};

struct job {
    uint64_t seed; /* job_init's */
    unsigned ranks;
    uint64_t steps;
    double sigma;
    struct rng g;
    double *het, *amp, *period, *phase; /* per rank */
    unsigned *gc_period, *gc_phase;
    float *gc_spill; /* carried into the next step */
    unsigned ckpt_period;
    double ckpt_size;
    int has_jobslow;
    uint64_t js_onset, js_end;
    double js_factor;
    struct episode epi[MAX_EPIS];
    unsigned nepi;
    double *slow; /* per rank, current injected slowdown */
};

static const double bucket_lo[3] = {0.02, 0.05, 0.10};
static const double bucket_hi[3] = {0.05, 0.10, 0.50};

static int rank_taken(const struct job *j, unsigned r0, unsigned n)
{
    for (unsigned e = 0; e < j->nepi; e++) {
        const struct episode *p = &j->epi[e];
        if (r0 < p->rank0 + p->nranks && p->rank0 < r0 + n)
            return 1;
    }
    return 0;
}

static void job_init(struct job *j, unsigned ranks, uint64_t steps, uint64_t seed)
{
    memset(j, 0, sizeof(*j));
    j->seed = seed;
    j->ranks = ranks;
    j->steps = steps;
    rng_seed(&j->g, seed);
    struct rng *g = &j->g;
    j->sigma = unif_in(g, 0.01, 0.03);
    j->het = xcalloc(ranks, sizeof(double));
    j->amp = xcalloc(ranks, sizeof(double));
    j->period = xcalloc(ranks, sizeof(double));
    j->phase = xcalloc(ranks, sizeof(double));
    j->gc_period = xcalloc(ranks, sizeof(unsigned));
    j->gc_phase = xcalloc(ranks, sizeof(unsigned));
    j->gc_spill = xcalloc(ranks, sizeof(float));
    j->slow = xcalloc(ranks, sizeof(double));
    for (unsigned r = 0; r < ranks; r++) {
        j->het[r] = 1 + fmax(-0.1, fmin(0.1, 0.03 * gauss(g)));
        j->amp[r] = unif_in(g, 0, 0.02) * (no_drift ? 0 : 1);
        j->period[r] = unif_in(g, 500, 3000);
        j->phase[r] = unif_in(g, 0, 6.283185307179586);
        j->gc_period[r] = unif_int(g, 50, 300);
        j->gc_phase[r] = unif_int(g, 0, j->gc_period[r] - 1);
    }
    j->ckpt_period = unif_int(g, 200, 1000);
    j->ckpt_size = unif_in(g, 1, 4);
    if (unif(g) < 0.5) {
        j->has_jobslow = 1;
        j->js_onset = unif_int(g, 100, (unsigned)steps - 100);
        j->js_end = j->js_onset + unif_int(g, 50, 300) - 1;
        if (j->js_end >= steps)
            j->js_end = steps - 1;
        j->js_factor = unif_in(g, 1.1, 1.5);
    }
    unsigned want = unif_int(g, 1, 3);
    for (unsigned tries = 0; j->nepi < want && tries < 100; tries++) {
        struct episode e = {0};
        e.nranks = 1;
        if (ranks >= 16 && unif(g) < 0.2)
            e.nranks = ranks / 8 < 8 ? ranks / 8 : 8;
        e.rank0 = unif_int(g, 0, ranks - e.nranks);
        if (rank_taken(j, e.rank0, e.nranks))
            continue;
        e.bucket = (int)unif_int(g, 0, 2);
        e.slowdown = unif_in(g, bucket_lo[e.bucket], bucket_hi[e.bucket]);
        e.onset = unif_int(g, 100, (unsigned)steps - 150);
        e.end = steps - 1;
        if (unif(g) < 0.5) {
            e.end = e.onset + unif_int(g, 40, 400) - 1;
            if (e.end >= steps)
                e.end = steps - 1;
        }
        j->epi[j->nepi++] = e;
    }
}

static void job_fini(struct job *j)
{
    free(j->het);
    free(j->amp);
    free(j->period);
    free(j->phase);
    free(j->gc_period);
    free(j->gc_phase);
    free(j->gc_spill);
    free(j->slow);
}

/* Fills x[0..ranks) with the compute time of every rank at step t. */
static void job_row(struct job *j, uint64_t t, double *x)
{
    struct rng *g = &j->g;
    double common = 1.0;
    if (j->has_jobslow && t >= j->js_onset && t <= j->js_end)
        common *= j->js_factor;
    int ckpt = t > 0 && t % j->ckpt_period == 0;
    for (unsigned r = 0; r < j->ranks; r++)
        j->slow[r] = 0;
    for (unsigned e = 0; e < j->nepi; e++) {
        const struct episode *p = &j->epi[e];
        if (t >= p->onset && t <= p->end) {
            for (unsigned r = p->rank0; r < p->rank0 + p->nranks; r++)
                j->slow[r] = p->slowdown;
        }
    }
    for (unsigned r = 0; r < j->ranks; r++) {
        double v =
            common * j->het[r] *
            (1 + j->amp[r] * sin(6.283185307179586 * (double)t / j->period[r] + j->phase[r]));
        v *= 1 + j->sigma * t4(g);
        if (unif(g) < 0.01)
            v *= 1 - 4 * j->sigma * log(unif(g));
        double gc = j->gc_spill[r];
        j->gc_spill[r] = 0;
        if ((t + j->gc_phase[r]) % j->gc_period[r] == 0) {
            double pause = unif_in(g, 0.1, 1.0);
            gc += pause;
            if (unif(g) < 0.1)
                j->gc_spill[r] = (float)(pause / 2);
        }
        v *= 1 + gc;
        if (ckpt)
            v += j->ckpt_size * unif_in(g, 0.8, 1.2);
        v *= 1 + j->slow[r];
        x[r] = v;
    }
}

/* ---- scoring ---- */

struct darray {
    double *v;
    size_t n, cap;
};

static void da_push(struct darray *a, double v)
{
    if (a->n == a->cap) {
        a->cap = a->cap ? a->cap * 2 : 256;
        a->v = xrealloc(a->v, a->cap * sizeof(double));
    }
    a->v[a->n++] = v;
}

/* The q-quantile (nearest rank) of a, sorted in place; NaN when empty. */
static double quantile(struct darray *a, double q)
{
    if (a->n == 0)
        return NAN;
    qsort(a->v, a->n, sizeof(double), hn_cmp_double);
    size_t i = (size_t)ceil(q * (double)a->n);
    if (i > 0)
        i--;
    if (i >= a->n)
        i = a->n - 1;
    return a->v[i];
}

struct score {
    const char *name;
    unsigned long episodes[3], detected[3], in_goal[3];
    /* by the job's jitter, JITTER_BANDS bands over 1-3%: episodes and in-goal detections */
    unsigned long band_episodes[3][JITTER_BANDS], band_in_goal[3][JITTER_BANDS];
    struct darray delay[3];
    unsigned long false_alarms, repeats;
    struct darray onset_err; /* houston only: |estimated onset - true onset| */
    double cpu_us_big;       /* CPU per step() at 16,384 ranks (measure_cpu) */
    /* job-level (houston only) */
    unsigned long job_episodes, job_detected, job_false;
    struct darray job_delay;
    unsigned long transients;
};

/* Per job: which rank-episodes were already detected. */
struct job_score {
    const struct job *j;
    unsigned *hit; /* [MAX_EPIS * 8]: steps to detect + 1, 0 while not detected */
};

static const unsigned goal_steps[3] = {0, 10, 5}; /* 2-5%: no goal */

static int jitter_band(const struct job *j)
{
    int b = (int)((j->sigma - 0.01) / 0.02 * JITTER_BANDS);
    return b < 0 ? 0 : b >= JITTER_BANDS ? JITTER_BANDS - 1 : b;
}

static void alarm_at(struct score *sc, struct job_score *js, unsigned rank, uint64_t step,
                     uint64_t onset_est, int has_onset)
{
    const struct job *j = js->j;
    for (unsigned e = 0; e < j->nepi; e++) {
        const struct episode *p = &j->epi[e];
        if (rank < p->rank0 || rank >= p->rank0 + p->nranks)
            continue;
        if (step < p->onset || step > p->end + GRACE)
            continue;
        unsigned *hit = &js->hit[e * 8 + (rank - p->rank0)];
        if (*hit) {
            sc->repeats++;
            return;
        }
        *hit = (unsigned)(step - p->onset) + 1;
        double delay = (double)(step - p->onset);
        sc->detected[p->bucket]++;
        da_push(&sc->delay[p->bucket], delay);
        if (goal_steps[p->bucket] && delay <= goal_steps[p->bucket]) {
            sc->in_goal[p->bucket]++;
            sc->band_in_goal[p->bucket][jitter_band(j)]++;
        }
        if (has_onset)
            da_push(&sc->onset_err, fabs((double)onset_est - (double)p->onset));
        return;
    }
    sc->false_alarms++;
    if (list_misses && strcmp(sc->name, "houston") == 0)
        fprintf(stderr, "false_alarm job_seed=%llu ranks=%u sigma=%.4f rank=%u step=%llu\n",
                (unsigned long long)j->seed, j->ranks, j->sigma, rank, (unsigned long long)step);
}

/* ---- the detectors behind one interface ---- */

struct detector {
    const char *name;
    void *(*open)(unsigned ranks, const struct hn_strag_config *cfg);
    void (*step)(void *st, uint64_t t, const double *x, struct score *sc, struct job_score *js);
    void (*close)(void *st);
};

/* houston */

static void *hn_open(unsigned ranks, const struct hn_strag_config *cfg)
{
    return hn_strag_new(cfg, ranks);
}

static void hn_step(void *st, uint64_t t, const double *x, struct score *sc, struct job_score *js)
{
    struct hn_strag *s = st;
    heap_calls = 0;
    counting = 1;
    int found = hn_strag_step(s, t, x);
    counting = 0;
    heap_in_steps += heap_calls;
    if (found <= 0)
        return;
    struct hn_strag_detection d;
    while (hn_strag_poll(s, &d)) {
        const struct job *j = js->j;
        switch (d.kind) {
        case HN_STRAG_PERSISTENT:
            alarm_at(sc, js, d.rank, d.detect_step, d.onset_step, 1);
            break;
        case HN_STRAG_JOB_SLOWDOWN:
            if (j->has_jobslow && d.detect_step >= j->js_onset &&
                d.detect_step <= j->js_end + GRACE && j->js_factor >= 1.1) {
                sc->job_detected++;
                da_push(&sc->job_delay, (double)(d.detect_step - j->js_onset));
            } else {
                sc->job_false++;
            }
            break;
        case HN_STRAG_TRANSIENT:
            sc->transients++;
            break;
        case HN_STRAG_FROM_START:
            sc->false_alarms++; /* the generator's offsets stay within 10% */
            break;
        case HN_STRAG_RECOVERED:
            break;
        }
    }
}

static void hn_close(void *st)
{
    hn_strag_free(st);
}

/* Shared by the baselines: a window of the last W values per rank, and flags. */
struct winstate {
    unsigned ranks, w, fill, pos;
    double *win; /* [ranks][w] */
    double *med; /* [ranks] */
    double *tmp; /* [max(ranks, w)] */
    unsigned char *flag;
};

static struct winstate *win_open(unsigned ranks, unsigned w)
{
    struct winstate *s = xcalloc(1, sizeof(*s));
    s->ranks = ranks;
    s->w = w;
    s->win = xcalloc((size_t)ranks * w, sizeof(double));
    s->med = xcalloc(ranks, sizeof(double));
    s->tmp = xcalloc(ranks > w ? ranks : w, sizeof(double));
    s->flag = xcalloc(ranks, 1);
    return s;
}

static void win_close(void *st)
{
    struct winstate *s = st;
    free(s->win);
    free(s->med);
    free(s->tmp);
    free(s->flag);
    free(s);
}

/* The median of a short window (insertion sort into tmp). */
static double median_copy(const double *v, unsigned n, double *tmp)
{
    for (unsigned i = 0; i < n; i++) {
        double t = v[i];
        unsigned j = i;
        for (; j > 0 && tmp[j - 1] > t; j--)
            tmp[j] = tmp[j - 1];
        tmp[j] = t;
    }
    return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

static void win_push(struct winstate *s, const double *x)
{
    for (unsigned r = 0; r < s->ranks; r++)
        s->win[(size_t)r * s->w + s->pos] = x[r];
    s->pos = (s->pos + 1) % s->w;
    if (s->fill < s->w)
        s->fill++;
}

static void set_flag(struct winstate *s, unsigned r, int on, uint64_t t, struct score *sc,
                     struct job_score *js)
{
    if (on && !s->flag[r])
        alarm_at(sc, js, r, t, 0, 0);
    s->flag[r] = (unsigned char)on;
}

static void *nvrx_open(unsigned ranks, const struct hn_strag_config *cfg)
{
    (void)cfg;
    return win_open(ranks, NVRX_WINDOW);
}

/* NVRx keeps the window step by step (one row copied per step, no per-rank work) and works
 * only at the end of each window, so its rows are kept step-major here. */
static void nvrx_step(void *st, uint64_t t, const double *x, struct score *sc, struct job_score *js)
{
    struct winstate *s = st;
    memcpy(&s->win[(size_t)s->pos * s->ranks], x, s->ranks * sizeof(double));
    s->pos = (s->pos + 1) % s->w;
    if (s->pos != 0) /* a report at the end of each window */
        return;
    double best = INFINITY;
    for (unsigned r = 0; r < s->ranks; r++) {
        double v[NVRX_WINDOW];
        for (unsigned i = 0; i < s->w; i++)
            v[i] = s->win[(size_t)i * s->ranks + r];
        s->med[r] = median_copy(v, s->w, s->tmp);
        best = fmin(best, s->med[r]);
    }
    for (unsigned r = 0; r < s->ranks; r++)
        set_flag(s, r, best / s->med[r] < NVRX_THRESH, t, sc, js);
}

static void *gh_open(unsigned ranks, const struct hn_strag_config *cfg)
{
    (void)cfg;
    return win_open(ranks, GH_WINDOW);
}

static void gh_step(void *st, uint64_t t, const double *x, struct score *sc, struct job_score *js)
{
    struct winstate *s = st;
    win_push(s, x);
    if (s->fill < s->w)
        return;
    for (unsigned r = 0; r < s->ranks; r++)
        s->med[r] = median_copy(&s->win[(size_t)r * s->w], s->w, s->tmp);
    memcpy(s->tmp, s->med, s->ranks * sizeof(double));
    double all = hn_median(s->tmp, s->ranks);
    for (unsigned r = 0; r < s->ranks; r++)
        set_flag(s, r, s->med[r] > GH_THRESH * all, t, sc, js);
}

static const struct detector detectors[] = {
    {.name = "houston", .open = hn_open, .step = hn_step, .close = hn_close},
    {.name = "nvrx", .open = nvrx_open, .step = nvrx_step, .close = win_close},
    {.name = "greyhound", .open = gh_open, .step = gh_step, .close = win_close},
};
#define NDET (sizeof(detectors) / sizeof(detectors[0]))

/* ---- the run ---- */

struct mix {
    unsigned ranks, jobs;
    uint64_t steps;
};

static const struct mix full_mix[] = {
    {8, 600, 2000},  {16, 300, 2000}, {64, 100, 2000},      {256, 30, 2000},
    {1024, 8, 2000}, {4096, 2, 2000}, {BIG_RANKS, 1, 1500},
};
static const struct mix quick_mix[] = {
    {8, 60, 1000}, {16, 30, 1000}, {64, 10, 1000}, {1024, 1, 1000}, {BIG_RANKS, 1, 400},
};

static int parse_opts(int argc, char **argv, int *quick, uint64_t *seed,
                      struct hn_strag_config *cfg)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        double d = 0;
        uint64_t u = 0;
        if (strcmp(a, "--quick") == 0) {
            *quick = 1;
            continue;
        }
        if (strcmp(a, "--cpu-only") == 0) {
            *quick = 2;
            continue;
        }
        if (strcmp(a, "--misses") == 0) {
            list_misses = 1;
            continue;
        }
        if (strcmp(a, "--no-drift") == 0) {
            no_drift = 1;
            continue;
        }
        if (!v)
            goto bad;
        i++;
        if (strcmp(a, "--seed") == 0 && hn_parse_u64(v, 10, &u) == 0)
            *seed = u;
        else if (strcmp(a, "--warmup") == 0 && hn_parse_u64(v, 10, &u) == 0 && u <= 16)
            cfg->warmup = (unsigned)u;
        else if (strcmp(a, "--min-steps") == 0 && hn_parse_u64(v, 10, &u) == 0 && u <= 16)
            cfg->min_steps = (unsigned)u;
        else if (hn_parse_double(v, &d) != 0)
            goto bad;
        else if (strcmp(a, "--shift") == 0)
            cfg->shift = d;
        else if (strcmp(a, "--h") == 0)
            cfg->cusum_h = d;
        else if (strcmp(a, "--big-h") == 0)
            cfg->big_h = d;
        else if (strcmp(a, "--big-shift") == 0)
            cfg->big_shift = d;
        else if (strcmp(a, "--min-slowdown") == 0)
            cfg->min_slowdown = d;
        else if (strcmp(a, "--dof") == 0)
            cfg->tail_dof = d;
        else if (strcmp(a, "--alpha") == 0)
            cfg->baseline_alpha = d;
        else if (strcmp(a, "--alpha-noise") == 0)
            cfg->alpha_noise = d;
        else if (strcmp(a, "--floor") == 0)
            cfg->noise_floor = d;
        else
            goto bad;
    }
    char err[128];
    if (hn_strag_config_check(cfg, err, sizeof(err)) != 0) {
        fprintf(stderr, "bench_straggler: %s\n", err);
        return -1;
    }
    return 0;
bad:
    fprintf(stderr,
            "usage: bench_straggler [--quick | --cpu-only] [--misses] [--no-drift] [--seed N] "
            "[--shift S] "
            "[--h H] [--big-shift S] [--big-h H] [--min-slowdown F] [--dof NU] [--min-steps N] "
            "[--alpha A] [--alpha-noise N] [--floor F] [--warmup N]\n");
    return -1;
}

/* Whether step t lies in [a, b]. */
static int step_within(uint64_t t, uint64_t a, uint64_t b)
{
    return t >= a && t <= b;
}

/* --misses: one line on stderr per rank of a 5-10% or >=10% episode that houston did not find
 * within its goal, with what else happened to the job and the rank around the onset (a
 * checkpoint stall, a GC pause of the rank, a whole-job slowdown starting or ending, another
 * episode starting), so that the misses can be told apart. */
static void print_misses(const struct job *j, const struct job_score *js)
{
    for (unsigned e = 0; e < j->nepi; e++) {
        const struct episode *p = &j->epi[e];
        unsigned goal = goal_steps[p->bucket];
        if (!goal)
            continue;
        uint64_t a = p->onset, b = p->onset + goal;
        int ckpt = 0, js_edge = 0, other = 0;
        for (uint64_t t = a; t <= b; t++)
            ckpt |= t % j->ckpt_period == 0;
        if (j->has_jobslow)
            js_edge = step_within(j->js_onset, a - 10, b) || step_within(j->js_end + 1, a - 10, b);
        for (unsigned f = 0; f < j->nepi; f++)
            other |= f != e && step_within(j->epi[f].onset, a - 10, b);
        for (unsigned i = 0; i < p->nranks; i++) {
            unsigned hit = js->hit[e * 8 + i], r = p->rank0 + i;
            if (hit && hit - 1 <= goal)
                continue;
            int gc = 0;
            for (uint64_t t = a; t <= b; t++)
                gc |= (t + j->gc_phase[r]) % j->gc_period[r] == 0;
            char delay[24];
            if (hit)
                snprintf(delay, sizeof(delay), "%u", hit - 1);
            else
                snprintf(delay, sizeof(delay), "never");
            fprintf(stderr,
                    "miss job_seed=%llu ranks=%u sigma=%.4f rank=%u of %u onset=%llu len=%llu "
                    "slowdown=%.4f delay=%s gc=%d ckpt=%d jobslow_edge=%d other_onset=%d "
                    "het=%.3f\n",
                    (unsigned long long)j->seed, j->ranks, j->sigma, r, p->nranks,
                    (unsigned long long)p->onset, (unsigned long long)(p->end - p->onset + 1),
                    p->slowdown, delay, gc, ckpt, js_edge, other, j->het[r]);
        }
    }
}

static void run_job(const struct mix *m, uint64_t seed, const struct hn_strag_config *cfg,
                    struct score *sc, double *rank_steps)
{
    struct job j;
    job_init(&j, m->ranks, m->steps, seed);
    double *x = xcalloc(m->ranks, sizeof(double));
    void *st[NDET];
    struct job_score js[NDET];
    for (size_t d = 0; d < NDET; d++) {
        st[d] = detectors[d].open(m->ranks, cfg);
        js[d].j = &j;
        js[d].hit = xcalloc(HIT_SLOTS, sizeof(unsigned));
    }
    for (unsigned e = 0; e < j.nepi; e++) {
        for (size_t d = 0; d < NDET; d++) {
            sc[d].episodes[j.epi[e].bucket] += j.epi[e].nranks;
            sc[d].band_episodes[j.epi[e].bucket][jitter_band(&j)] += j.epi[e].nranks;
        }
    }
    if (j.has_jobslow)
        sc[0].job_episodes++;
    for (uint64_t t = 0; t < m->steps; t++) {
        job_row(&j, t, x);
        for (size_t d = 0; d < NDET; d++)
            detectors[d].step(st[d], t, x, &sc[d], &js[d]);
    }
    *rank_steps += (double)m->ranks * (double)m->steps;
    if (list_misses)
        print_misses(&j, &js[0]);
    for (size_t d = 0; d < NDET; d++) {
        detectors[d].close(st[d]);
        free(js[d].hit);
    }
    free(x);
    job_fini(&j);
}

/*
 * CPU per step at BIG_RANKS ranks, each detector on its own: the rows of a job are generated
 * first, then each detector runs over all of them from a fresh start, so that neither the
 * generator nor another detector shares its caches. The detectors take turns for CPU_ROUNDS
 * rounds and each one's fastest round counts: on a shared machine a round can be slowed by
 * others, never sped up, and taking turns exposes every detector to the same spells of load.
 * Fills sc[d].cpu_us_big.
 */
static void measure_cpu(const struct hn_strag_config *cfg, uint64_t seed, struct score *sc)
{
    struct job j;
    job_init(&j, BIG_RANKS, CPU_STEPS, seed);
    double *rows = xcalloc((size_t)CPU_STEPS * BIG_RANKS, sizeof(double));
    for (uint64_t t = 0; t < CPU_STEPS; t++)
        job_row(&j, t, rows + t * BIG_RANKS);
    for (size_t d = 0; d < NDET; d++)
        sc[d].cpu_us_big = INFINITY;
    for (int round = 0; round < CPU_ROUNDS; round++) {
        for (size_t d = 0; d < NDET; d++) {
            struct score scratch;
            memset(&scratch, 0, sizeof(scratch));
            scratch.name = "cpu";
            struct job_score js = {.j = &j, .hit = xcalloc(HIT_SLOTS, sizeof(unsigned))};
            void *st = detectors[d].open(BIG_RANKS, cfg);
            double c0 = cpu_s();
            for (uint64_t t = 0; t < CPU_STEPS; t++)
                detectors[d].step(st, t, rows + t * BIG_RANKS, &scratch, &js);
            double us = (cpu_s() - c0) / CPU_STEPS * 1e6;
            sc[d].cpu_us_big = us < sc[d].cpu_us_big ? us : sc[d].cpu_us_big;
            detectors[d].close(st);
            free(js.hit);
            for (int b = 0; b < 3; b++)
                free(scratch.delay[b].v);
            free(scratch.onset_err.v);
            free(scratch.job_delay.v);
        }
    }
    free(rows);
    job_fini(&j);
}

static void fmt_rate(char *buf, size_t n, unsigned long hit, unsigned long all)
{
    snprintf(buf, n, "%.1f%%", all ? 100.0 * (double)hit / (double)all : 0.0);
}

static void fmt_delay(char *buf, size_t n, struct darray *a)
{
    if (a->n == 0) {
        snprintf(buf, n, "-");
        return;
    }
    double med = quantile(a, 0.5), p95 = quantile(a, 0.95), max = quantile(a, 1.0);
    snprintf(buf, n, "%.0f / %.0f / %.0f", med, p95, max);
}

/* "better" ratio of houston to a baseline for a column where higher is better. */
static void fmt_ratio(char *buf, size_t n, double ours, double theirs, int higher_better)
{
    if (higher_better) {
        if (theirs <= 0)
            snprintf(buf, n, ours > 0 ? "∞" : "=");
        else
            snprintf(buf, n, "%.2f×", ours / theirs);
    } else {
        if (ours <= 0 || isinf(theirs))
            snprintf(buf, n, theirs > 0 ? "∞" : "=");
        else
            snprintf(buf, n, "%.2f×", theirs / ours);
    }
}

/* ---- the report ---- */

static void print_summary(struct score *sc, unsigned long jobs, double rank_steps)
{
    printf("jobs=%lu\nrank_steps=%.0f\nheap_calls_in_steps=%lu\n", jobs, rank_steps, heap_in_steps);
    for (size_t d = 0; d < NDET; d++) {
        const struct score *s = &sc[d];
        printf("%s_episodes=%lu,%lu,%lu\n", s->name, s->episodes[0], s->episodes[1],
               s->episodes[2]);
        printf("%s_detected=%lu,%lu,%lu\n", s->name, s->detected[0], s->detected[1],
               s->detected[2]);
        printf("%s_in_goal_5_10=%lu\n%s_in_goal_10=%lu\n", s->name, s->in_goal[1], s->name,
               s->in_goal[2]);
        printf("%s_false_alarms=%lu\n%s_repeats=%lu\n", s->name, s->false_alarms, s->name,
               s->repeats);
        printf("%s_fa_per_million=%.3f\n", s->name, (double)s->false_alarms / rank_steps * 1e6);
        printf("%s_cpu_us_per_step_16k=%.1f\n", s->name, s->cpu_us_big);
    }
    printf("houston_job_slowdowns=%lu\nhouston_job_detected=%lu\nhouston_job_false=%lu\n",
           sc[0].job_episodes, sc[0].job_detected, sc[0].job_false);
    printf("houston_transients=%lu\n", sc[0].transients);
}

/* One column of the table: what each detector shows, the number compared across detectors
 * and which way is better. */
struct column {
    const char *title;
    char text[NDET][48];
    double key[NDET];
    int higher_better;
};

static double rate(unsigned long hit, unsigned long all)
{
    return all ? (double)hit / (double)all : 0;
}

static void rate_column(struct column *c, const char *title, struct score *sc, int kind, int b)
{
    c->title = title;
    c->higher_better = 1;
    for (size_t d = 0; d < NDET; d++) {
        unsigned long hit = kind ? sc[d].in_goal[b] : sc[d].detected[b];
        c->key[d] = rate(hit, sc[d].episodes[b]);
        fmt_rate(c->text[d], sizeof(c->text[d]), hit, sc[d].episodes[b]);
    }
}

static void delay_column(struct column *c, const char *title, struct score *sc, int b)
{
    c->title = title;
    c->higher_better = 0;
    for (size_t d = 0; d < NDET; d++) {
        c->key[d] = sc[d].delay[b].n ? quantile(&sc[d].delay[b], 0.95) : INFINITY;
        fmt_delay(c->text[d], sizeof(c->text[d]), &sc[d].delay[b]);
    }
}

/* True when houston's figure in c is worse than detector d's. */
static int worse(const struct column *c, size_t d)
{
    return c->higher_better ? c->key[0] < c->key[d] : c->key[0] > c->key[d];
}

static void print_tables(struct score *sc, double rank_steps)
{
    enum { NCOL = 11 };
    struct column col[NCOL];
    memset(col, 0, sizeof(col));
    rate_column(&col[0], "found 2–5%", sc, 0, 0);
    rate_column(&col[1], "found 5–10%", sc, 0, 1);
    rate_column(&col[2], "found ≥10%", sc, 0, 2);
    rate_column(&col[3], "5–10% within 10 steps", sc, 1, 1);
    rate_column(&col[4], "≥10% within 5 steps", sc, 1, 2);
    delay_column(&col[5], "steps to detect 2–5% (median / p95 / max)", sc, 0);
    delay_column(&col[6], "steps to detect 5–10%", sc, 1);
    delay_column(&col[7], "steps to detect ≥10%", sc, 2);
    col[8].title = "false alarms per 10⁶ rank-steps";
    col[9].title = "repeat alarms";
    col[10].title = "CPU per step at 16,384 ranks";
    for (size_t d = 0; d < NDET; d++) {
        col[8].key[d] = (double)sc[d].false_alarms / rank_steps * 1e6;
        snprintf(col[8].text[d], sizeof(col[8].text[d]), "%.3f (%lu)", col[8].key[d],
                 sc[d].false_alarms);
        col[9].key[d] = (double)sc[d].repeats;
        snprintf(col[9].text[d], sizeof(col[9].text[d]), "%lu", sc[d].repeats);
        col[10].key[d] = sc[d].cpu_us_big;
        snprintf(col[10].text[d], sizeof(col[10].text[d]), "%.0f µs", sc[d].cpu_us_big);
    }

    printf("\n| detector |");
    for (int c = 0; c < NCOL; c++)
        printf(" %s |", col[c].title);
    printf("\n|---|");
    for (int c = 0; c < NCOL; c++)
        printf("---|");
    printf("\n");
    for (size_t d = 0; d < NDET; d++) {
        printf("| %s |", sc[d].name);
        for (int c = 0; c < NCOL; c++)
            printf(" %s |", col[c].text[d]);
        printf("\n");
    }
    for (size_t d = 1; d < NDET; d++) {
        printf("| **houston vs %s** |", sc[d].name);
        for (int c = 0; c < NCOL; c++) {
            char r[32];
            fmt_ratio(r, sizeof(r), col[c].key[0], col[c].key[d], col[c].higher_better);
            printf(" %s%s |", r, c >= 5 && c <= 7 ? " (p95)" : "");
        }
        printf("\n");
    }

    printf("\nIn-goal detections by the job's jitter (5–10%%: within 10 steps; ≥10%%: within 5 "
           "steps):\n\n| detector | slowdown |");
    for (int b = 0; b < JITTER_BANDS; b++)
        printf(" jitter %.1f–%.1f%% |", 1 + 2.0 * b / JITTER_BANDS,
               1 + 2.0 * (b + 1) / JITTER_BANDS);
    printf("\n|---|---|");
    for (int b = 0; b < JITTER_BANDS; b++)
        printf("---|");
    printf("\n");
    for (size_t d = 0; d < NDET; d++) {
        for (int k = 1; k < 3; k++) {
            printf("| %s | %s |", sc[d].name, k == 1 ? "5–10%" : "≥10%");
            for (int b = 0; b < JITTER_BANDS; b++) {
                char r[32];
                fmt_rate(r, sizeof(r), sc[d].band_in_goal[k][b], sc[d].band_episodes[k][b]);
                printf(" %s of %lu |", r, sc[d].band_episodes[k][b]);
            }
            printf("\n");
        }
    }

    printf("\n| goal | houston | met |\n|---|---|---|\n");
    printf("| every slowdown ≥10%% found within 5 steps | %s | %s |\n", col[4].text[0],
           col[4].key[0] >= 1 ? "yes" : "no");
    printf("| every slowdown of 5–10%% found within 10 steps | %s | %s |\n", col[3].text[0],
           col[3].key[0] >= 1 ? "yes" : "no");
    printf("| at most 1 false alarm per 10⁶ rank-steps | %.3f | %s |\n", col[8].key[0],
           col[8].key[0] <= 1 ? "yes" : "no");
    printf("| under 2 ms per step at 16,384 ranks | %s | %s |\n", col[10].text[0],
           col[10].key[0] < 2000 ? "yes" : "no");
    for (size_t d = 1; d < NDET; d++) {
        char list[512] = "";
        size_t used = 0;
        for (int c = 0; c < NCOL; c++) {
            if (worse(&col[c], d) && used < sizeof(list))
                used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", used ? ", " : "",
                                         col[c].title);
        }
        printf("| better than %s on every column | %s | %s |\n", sc[d].name,
               used ? list : "better or equal on all", used ? "no" : "yes");
    }

    char jd[48];
    fmt_delay(jd, sizeof(jd), &sc[0].job_delay);
    printf("\nWhole-job slowdowns (houston only; the baselines compare ranks with each other and "
           "cannot see them): %lu of %lu found, steps to detect median / p95 / max %s, %lu "
           "false job-level alarms. Onset estimate error (houston, persistent detections): "
           "median %.0f, p95 %.0f steps. Transient reports (spikes of 50%% or more, GC pauses "
           "included): %lu. Heap calls inside hn_strag_step: %lu.\n",
           sc[0].job_detected, sc[0].job_episodes, jd, sc[0].job_false,
           quantile(&sc[0].onset_err, 0.5), quantile(&sc[0].onset_err, 0.95), sc[0].transients,
           heap_in_steps);
}

int main(int argc, char **argv)
{
    int quick = 0;
    uint64_t seed = 1;
    struct hn_strag_config cfg;
    hn_strag_config_default(&cfg);
    if (parse_opts(argc, argv, &quick, &seed, &cfg) != 0)
        return 2;
    const struct mix *mixes = quick ? quick_mix : full_mix;
    size_t nmix =
        quick ? sizeof(quick_mix) / sizeof(quick_mix[0]) : sizeof(full_mix) / sizeof(full_mix[0]);

    struct score sc[NDET];
    memset(sc, 0, sizeof(sc));
    for (size_t d = 0; d < NDET; d++)
        sc[d].name = detectors[d].name;
    double rank_steps = 0;
    unsigned long jobs = 0;
    uint64_t job_seed = seed * 1000003;
    if (quick == 2)
        nmix = 0;
    for (size_t i = 0; i < nmix; i++) {
        for (unsigned k = 0; k < mixes[i].jobs; k++) {
            run_job(&mixes[i], hn_splitmix64(&job_seed), &cfg, sc, &rank_steps);
            jobs++;
        }
    }

    measure_cpu(&cfg, seed, sc);
    /* houston's memory per rank at BIG_RANKS: what hn_strag_new allocates (it allocates
     * nothing later). */
    sizing = 1;
    void *big = hn_strag_new(&cfg, BIG_RANKS);
    sizing = 0;
    hn_strag_free(big);
    printf("houston_state_bytes_per_rank=%.0f\n", (double)heap_bytes / BIG_RANKS);
    print_summary(sc, jobs, rank_steps);
    print_tables(sc, rank_steps);
    for (size_t d = 0; d < NDET; d++) {
        for (int b = 0; b < 3; b++)
            free(sc[d].delay[b].v);
        free(sc[d].onset_err.v);
        free(sc[d].job_delay.v);
    }
    return 0;
}
