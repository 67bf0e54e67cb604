/*
 * test_straggler.c - the straggler detector (src/jobs/straggler.c): its contract on synthetic
 * jobs with known truth (one detection per episode, onset, size, recovery, spikes, whole-job
 * slowdowns, heterogeneity, missing reports, determinism, scale) and its answers on the two
 * real Alibaba PAI jobs in tests/fixtures/step-times.
 */
#include "testutil.h"

#include "common/xid.h"
#include "jobs/straggler.h"
#include "jobs/straggler_int.h"
#include "verbs.h"

#include <errno.h>
#include <math.h>

#define MAX_DET 64

/* ---- a small deterministic job generator ---- */

struct gen {
    uint64_t x;
};

static double gen_unif(struct gen *g)
{
    /* xorshift64* (Vigna 2016) */
    g->x ^= g->x >> 12;
    g->x ^= g->x << 25;
    g->x ^= g->x >> 27;
    return ((double)((g->x * 2685821657736338717ULL) >> 11) + 0.5) / 9007199254740992.0;
}

static double gen_gauss(struct gen *g)
{
    return sqrt(-2 * log(gen_unif(g))) * cos(6.283185307179586 * gen_unif(g));
}

/* What a synthetic job does; every factor multiplies a nominal step time of `scale`. */
struct job {
    unsigned ranks;
    uint64_t steps;
    double jitter;   /* relative standard deviation of every report */
    double het;      /* rank r's constant offset: het * (r % 5 - 2) / 2 */
    double scale;    /* nominal time; only ratios matter */
    int slow_rank;   /* -1: none */
    double slowdown; /* of slow_rank from slow_from to slow_to */
    uint64_t slow_from, slow_to;
    double job_factor; /* of every rank from job_from to job_to */
    uint64_t job_from, job_to;
    int spike_rank; /* -1: none; spike of spike_size at spike_at (and spike_at2 when > 0) */
    double spike_size;
    uint64_t spike_at, spike_at2;
    int missing_rank; /* -1: none; reports NaN on every third step */
    uint64_t seed;
};

static void job_default(struct job *j)
{
    memset(j, 0, sizeof(*j));
    j->ranks = 16;
    j->steps = 1500;
    j->jitter = 0.02;
    j->het = 0.08;
    j->scale = 1.0;
    j->slow_rank = -1;
    j->job_factor = 1;
    j->spike_rank = -1;
    j->missing_rank = -1;
    j->seed = 42;
}

static void job_row(const struct job *j, struct gen *g, uint64_t t, double *x)
{
    for (unsigned r = 0; r < j->ranks; r++) {
        double v = j->scale * (1 + j->het * ((double)(r % 5) - 2) / 2);
        v *= 1 + j->jitter * gen_gauss(g);
        if ((int)r == j->slow_rank && t >= j->slow_from && t < j->slow_to)
            v *= 1 + j->slowdown;
        if (t >= j->job_from && t < j->job_to)
            v *= j->job_factor;
        if ((int)r == j->spike_rank && (t == j->spike_at || (j->spike_at2 && t == j->spike_at2)))
            v *= 1 + j->spike_size;
        if ((int)r == j->missing_rank && t % 3 == 0)
            v = NAN;
        x[r] = v;
    }
}

/* Feeds steps 0..steps-1 to s, each row made by row(ctx, t, x) into x[0..ranks), and collects
 * the detections in out[0..max). */
static size_t feed(struct hn_strag *s, unsigned ranks, uint64_t steps,
                   void (*row)(void *ctx, uint64_t t, double *x), void *ctx,
                   struct hn_strag_detection *out, size_t max)
{
    double *x = xcalloc(ranks, sizeof(double));
    size_t n = 0;
    for (uint64_t t = 0; t < steps; t++) {
        row(ctx, t, x);
        int found = hn_strag_step(s, t, x);
        assert_true(found >= 0);
        struct hn_strag_detection d;
        int polled = 0;
        while (hn_strag_poll(s, &d)) {
            polled++;
            assert_true(n < max);
            out[n++] = d;
        }
        assert_int_equal(polled, found);
    }
    free(x);
    return n;
}

struct job_feed {
    const struct job *j;
    struct gen g;
};

static void job_feed_row(void *ctx, uint64_t t, double *x)
{
    struct job_feed *f = ctx;
    job_row(f->j, &f->g, t, x);
}

/* Runs job j through a detector with cfg (NULL: defaults) and collects its detections. */
static size_t run_job(const struct job *j, const struct hn_strag_config *cfg,
                      struct hn_strag_detection *out, size_t max, struct hn_strag_stats *stats)
{
    struct hn_strag *s = hn_strag_new(cfg, j->ranks);
    assert_non_null(s);
    struct job_feed f = {j, {.x = j->seed}};
    size_t n = feed(s, j->ranks, j->steps, job_feed_row, &f, out, max);
    if (stats)
        hn_strag_stats_get(s, stats);
    hn_strag_free(s);
    return n;
}

static size_t count_kind(const struct hn_strag_detection *d, size_t n, enum hn_strag_kind k)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        c += d[i].kind == k;
    return c;
}

static const struct hn_strag_detection *find_kind(const struct hn_strag_detection *d, size_t n,
                                                  enum hn_strag_kind k)
{
    for (size_t i = 0; i < n; i++) {
        if (d[i].kind == k)
            return &d[i];
    }
    return NULL;
}

/* ---- configuration and lifecycle ---- */

/* Every threshold settable by name is a flag of `houston straggler`, listed in its help and
 * taken at the end of its range. */
static void test_every_setting_is_a_flag(void **state)
{
    (void)state;
    char *help = NULL;
    size_t hlen = 0;
    FILE *f = open_memstream(&help, &hlen);
    assert_non_null(f);
    hn_usage_straggler(f);
    fclose(f);
    char csv[] = "/tmp/hn-test-straggler-XXXXXX";
    int fd = mkstemp(csv);
    assert_true(fd >= 0);
    static const char rows[] = "step,rank,seconds\n1,0,1\n1,1,1\n";
    assert_int_equal(write(fd, rows, sizeof(rows) - 1), (ssize_t)(sizeof(rows) - 1));
    close(fd);
    const char *name;
    for (size_t i = 0; (name = hn_strag_setting_name(i)) != NULL; i++) {
        char flag[64], value[32], err[128];
        snprintf(flag, sizeof(flag), "--%s ", name);
        if (!strstr(help, flag))
            fail_msg("houston straggler --help does not list %s", flag);
        /* Its range's low end, from the error for a value below any range. */
        struct hn_strag_config c;
        hn_strag_config_default(&c);
        assert_int_equal(hn_strag_config_set(&c, name, "-1", err, sizeof(err)), -EINVAL);
        double lo;
        assert_int_equal(sscanf(strstr(err, "in ["), "in [%lf", &lo), 1);
        snprintf(flag, sizeof(flag), "--%s", name);
        snprintf(value, sizeof(value), "%.17g", lo);
        char *argv[] = {"straggler", "--csv", csv, flag, value, NULL};
        if (hn_cmd_straggler(5, argv) != 0)
            fail_msg("houston straggler %s %s was refused", flag, value);
    }
    unlink(csv);
    free(help);
}

static void test_config(void **state)
{
    (void)state;
    struct hn_strag_config c;
    char err[128];
    hn_strag_config_default(&c);
    assert_int_equal(hn_strag_config_check(&c, err, sizeof(err)), 0);

    struct hn_strag_config bad = c;
    bad.warmup = 2;
    assert_int_equal(hn_strag_config_check(&bad, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "warmup"));
    bad = c;
    bad.quorum = 1.5;
    assert_int_equal(hn_strag_config_check(&bad, err, sizeof(err)), -EINVAL);
    bad = c;
    bad.cusum_h = NAN;
    assert_int_equal(hn_strag_config_check(&bad, err, sizeof(err)), -EINVAL);
    bad = c;
    bad.big_shift = c.shift; /* must be above shift */
    assert_int_equal(hn_strag_config_check(&bad, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "big_shift"));
    bad = c;
    bad.big_h = 0;
    assert_int_equal(hn_strag_config_check(&bad, err, sizeof(err)), -EINVAL);
    bad = c;
    bad.big_shift = 0; /* off */
    assert_int_equal(hn_strag_config_check(&bad, err, sizeof(err)), 0);
    bad = c;
    bad.alpha_noise = 0;
    assert_int_equal(hn_strag_config_check(&bad, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "alpha-noise"));
    bad = c;
    bad.recover_window = 17;
    assert_int_equal(hn_strag_config_check(&bad, NULL, 0), -EINVAL);

    assert_null(hn_strag_new(&bad, 8));
    assert_null(hn_strag_new(&c, 0));

    /* By name, as operators set them: each threshold takes the ends of its range and refuses
     * what lies beyond (hn_strag_config_check agrees), and a refused value changes nothing. */
    size_t n = 0;
    for (const char *name; (name = hn_strag_setting_name(n)) != NULL; n++) {
        struct hn_strag_config t = c;
        static const char *const bad_values[] = {"-1", "2000000", "x", "", "nan", "1e400"};
        for (size_t k = 0; k < sizeof(bad_values) / sizeof(bad_values[0]); k++) {
            err[0] = '\0';
            assert_int_equal(hn_strag_config_set(&t, name, bad_values[k], err, sizeof(err)),
                             -EINVAL);
            assert_non_null(strstr(err, "is not a"));
            assert_memory_equal(&t, &c, sizeof(t));
        }
        const char *edge = strstr(err, "in [");
        assert_non_null(edge);
        double lo, hi;
        assert_int_equal(sscanf(edge, "in [%lf, %lf]", &lo, &hi), 2);
        char v[32];
        snprintf(v, sizeof(v), "%.17g", lo);
        assert_int_equal(hn_strag_config_set(&t, name, v, err, sizeof(err)), 0);
        assert_int_equal(hn_strag_config_check(&t, err, sizeof(err)), 0);
        struct hn_strag_config at_lo = t;
        snprintf(v, sizeof(v), "%.17g", hi);
        assert_int_equal(hn_strag_config_set(&t, name, v, err, sizeof(err)), 0);
        assert_int_equal(hn_strag_config_check(&t, err, sizeof(err)), 0);
        assert_memory_not_equal(&t, &at_lo, sizeof(t)); /* the value reached the config */
    }
    assert_int_equal(n, 10);
    struct hn_strag_config t = c;
    assert_int_equal(hn_strag_config_set(&t, "threshold", "13.5", err, sizeof(err)), 0);
    assert_true(t.cusum_h == 13.5);
    assert_int_equal(hn_strag_config_set(&t, "warmup", "8", err, sizeof(err)), 0);
    assert_int_equal(t.warmup, 8);
    assert_int_equal(hn_strag_config_set(&t, "warmup", "8.5", err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "whole number in [3, 16]"));
    assert_int_equal(hn_strag_config_set(&t, "alpha-noise", "0.03", err, sizeof(err)), 0);
    assert_true(t.alpha_noise == 0.03);
    assert_int_equal(hn_strag_config_set(&t, "shift", "3", err, sizeof(err)), -ENOENT);
    assert_non_null(strstr(err, "'shift' is not a straggler threshold"));
    assert_null(hn_strag_new(&c, HN_STRAG_MAX_RANKS + 1));
    struct hn_strag *s = hn_strag_new(NULL, 8);
    assert_non_null(s);
    assert_int_equal(hn_strag_ranks(s), 8);
    struct hn_strag_detection d;
    assert_int_equal(hn_strag_poll(s, &d), 0);
    hn_strag_free(s);
    hn_strag_free(NULL);

    assert_string_equal(hn_strag_kind_name(HN_STRAG_PERSISTENT), "persistent");
    assert_string_equal(hn_strag_kind_name(HN_STRAG_TRANSIENT), "transient");
    assert_string_equal(hn_strag_kind_name(HN_STRAG_JOB_SLOWDOWN), "job_slowdown");
    assert_string_equal(hn_strag_kind_name(HN_STRAG_RECOVERED), "recovered");
    assert_string_equal(hn_strag_kind_name(HN_STRAG_FROM_START), "from_start");
    assert_string_equal(hn_strag_kind_name((enum hn_strag_kind)99), "unknown");
}

/* Steps must increase; a step without a quorum of reports is skipped and changes nothing. */
static void test_steps_and_quorum(void **state)
{
    (void)state;
    struct hn_strag *s = hn_strag_new(NULL, 4);
    double x[4] = {1, 1, 1, 1};
    assert_int_equal(hn_strag_step(s, 10, x), 0);
    assert_int_equal(hn_strag_step(s, 10, x), -EINVAL);
    assert_int_equal(hn_strag_step(s, 9, x), -EINVAL);
    double few[4] = {1, NAN, -1, 0};
    assert_int_equal(hn_strag_step(s, 11, few), 0);
    double inf[4] = {INFINITY, NAN, 1, 1};
    assert_int_equal(hn_strag_step(s, 12, inf), 0);
    struct hn_strag_stats st;
    hn_strag_stats_get(s, &st);
    assert_int_equal(st.rejected, 2);
    assert_int_equal(st.skipped, 1); /* one report of four */
    assert_int_equal(st.steps, 2);   /* 10, and 12 with two of four */
    struct hn_strag_rank_info ri;
    assert_int_equal(hn_strag_rank_get(s, 0, &ri), 0);
    assert_int_equal(ri.reports, 1);
    assert_int_equal(ri.warm, 0);
    assert_int_equal(hn_strag_rank_get(s, 2, &ri), 0);
    assert_int_equal(ri.reports, 2);
    assert_int_equal(hn_strag_rank_get(s, 4, &ri), -EINVAL);
    assert_int_equal(hn_strag_rank_get(s, HN_STRAG_ALL_RANKS, &ri), 0);
    assert_int_equal(ri.reports, 2);
    hn_strag_free(s);
}

/* ---- synthetic jobs ---- */

/* Jitter, constant heterogeneity of +-8% and a missing rank: nothing to report. */
static void test_healthy_job_is_silent(void **state)
{
    (void)state;
    struct job j;
    job_default(&j);
    j.ranks = 64;
    j.steps = 3000;
    j.missing_rank = 9;
    struct hn_strag_detection d[MAX_DET];
    struct hn_strag_stats st;
    size_t n = run_job(&j, NULL, d, MAX_DET, &st);
    assert_int_equal(n, 0);
    assert_int_equal(st.steps, 3000);
    assert_int_equal(st.slow_ranks, 0);
}

/* A rank 20% slower from step 500 to 900: one persistent detection at the right onset within
 * a few steps, then one recovery; and learned baselines that match the heterogeneity. */
static void test_persistent_slowdown_and_recovery(void **state)
{
    (void)state;
    struct job j;
    job_default(&j);
    j.slow_rank = 5;
    j.slowdown = 0.2;
    j.slow_from = 500;
    j.slow_to = 900;
    struct hn_strag_detection d[MAX_DET];
    size_t n = run_job(&j, NULL, d, MAX_DET, NULL);
    assert_int_equal(n, 2);
    assert_int_equal(d[0].kind, HN_STRAG_PERSISTENT);
    assert_int_equal(d[0].rank, 5);
    assert_true(d[0].onset_step >= 498 && d[0].onset_step <= 502);
    assert_true(d[0].detect_step >= 500 && d[0].detect_step <= 505);
    assert_near(d[0].slowdown, 0.2, 0.05); /* a median of the first few reports */
    /* rank 5 runs at 1 + 0.08 * (0 - 2) / 2 = 0.92 of the median */
    assert_near((1 + d[0].vs_peers) / (1 + d[0].slowdown), 0.92, 0.02);
    assert_true(d[0].score >= 11);
    assert_true(d[0].noise > 0.01 && d[0].noise < 0.04);

    assert_int_equal(d[1].kind, HN_STRAG_RECOVERED);
    assert_int_equal(d[1].rank, 5);
    assert_int_equal(d[1].onset_step, d[0].onset_step);
    assert_true(d[1].end_step >= 895 && d[1].end_step < 900);
    assert_true(d[1].detect_step >= 900 && d[1].detect_step <= 915);
    assert_near(d[1].slowdown, 0.2, 0.03); /* the mean over the whole episode */
}

/* Once per episode: a slowdown that stays slow is reported once however long it lasts, and a
 * second episode after recovery is reported again. */
static void test_once_per_episode(void **state)
{
    (void)state;
    struct job j;
    job_default(&j);
    j.steps = 2500;
    j.slow_rank = 3;
    j.slowdown = 0.5;
    j.slow_from = 300;
    j.slow_to = 2500;
    struct hn_strag_detection d[MAX_DET];
    size_t n = run_job(&j, NULL, d, MAX_DET, NULL);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].kind, HN_STRAG_PERSISTENT);
    assert_true(d[0].detect_step - 300 <= 5);

    /* Two episodes: the generator has one window, so run the second by hand. */
    struct hn_strag *s = hn_strag_new(NULL, 8);
    double x[8];
    struct gen g = {.x = 7};
    size_t persistent = 0, recovered = 0;
    for (uint64_t t = 0; t < 1200; t++) {
        for (unsigned r = 0; r < 8; r++)
            x[r] = 1 + 0.02 * gen_gauss(&g);
        if ((t >= 200 && t < 400) || (t >= 700 && t < 900))
            x[2] *= 1.3;
        hn_strag_step(s, t, x);
        struct hn_strag_detection e;
        while (hn_strag_poll(s, &e)) {
            assert_int_equal(e.rank, 2);
            persistent += e.kind == HN_STRAG_PERSISTENT;
            recovered += e.kind == HN_STRAG_RECOVERED;
        }
    }
    assert_int_equal(persistent, 2);
    assert_int_equal(recovered, 2);
    hn_strag_free(s);
}

/* The whole job 30% slower for 300 steps: a job_slowdown and its recovery, no rank blamed. */
static void test_job_slowdown_is_not_a_straggler(void **state)
{
    (void)state;
    struct job j;
    job_default(&j);
    j.ranks = 32;
    j.job_factor = 1.3;
    j.job_from = 400;
    j.job_to = 700;
    struct hn_strag_detection d[MAX_DET];
    size_t n = run_job(&j, NULL, d, MAX_DET, NULL);
    assert_int_equal(n, 2);
    assert_int_equal(d[0].kind, HN_STRAG_JOB_SLOWDOWN);
    assert_int_equal(d[0].rank, HN_STRAG_ALL_RANKS);
    assert_true(d[0].onset_step >= 398 && d[0].onset_step <= 402);
    assert_true(d[0].detect_step <= 405);
    assert_near(d[0].slowdown, 0.3, 0.03);
    assert_int_equal(d[1].kind, HN_STRAG_RECOVERED);
    assert_int_equal(d[1].rank, HN_STRAG_ALL_RANKS);
    assert_true(d[1].detect_step >= 700 && d[1].detect_step <= 715);
}

/* A garbage-collection pause (one step 3x) and a pause that spills into the next step are
 * transient, reported once each after the rank is back; never persistent. */
static void test_spikes_are_transient(void **state)
{
    (void)state;
    struct job j;
    job_default(&j);
    j.steps = 800;
    j.spike_rank = 4;
    j.spike_size = 2.0;
    j.spike_at = 300;
    j.spike_at2 = 301;
    struct hn_strag_detection d[MAX_DET];
    size_t n = run_job(&j, NULL, d, MAX_DET, NULL);
    assert_int_equal(n, 1);
    assert_int_equal(d[0].kind, HN_STRAG_TRANSIENT);
    assert_int_equal(d[0].rank, 4);
    assert_int_equal(d[0].onset_step, 300);
    assert_int_equal(d[0].end_step, 301);
    assert_true(d[0].detect_step > 301 && d[0].detect_step < 310);
    assert_near(d[0].peak, 2.0, 0.15);

    j.spike_at2 = 0;
    j.spike_size = 0.3; /* below transient_min: not even a transient */
    n = run_job(&j, NULL, d, MAX_DET, NULL);
    assert_int_equal(n, 0);
}

/* A rank slower from the very start is its own normal: 10% (heterogeneity) is silent, 40% is
 * reported once as from_start; later slowdowns of that rank still count against its own
 * baseline. */
static void test_slow_from_the_start(void **state)
{
    (void)state;
    struct hn_strag *s = hn_strag_new(NULL, 8);
    double x[8];
    struct gen g = {.x = 11};
    struct hn_strag_detection all[MAX_DET];
    size_t n = 0;
    for (uint64_t t = 0; t < 1000; t++) {
        for (unsigned r = 0; r < 8; r++)
            x[r] = 1 + 0.02 * gen_gauss(&g);
        x[1] *= 1.1;
        x[6] *= 1.4;
        if (t >= 600)
            x[6] *= 1.25;
        hn_strag_step(s, t, x);
        while (n < MAX_DET && hn_strag_poll(s, &all[n]))
            n++;
    }
    assert_int_equal(n, 2);
    assert_int_equal(all[0].kind, HN_STRAG_FROM_START);
    assert_int_equal(all[0].rank, 6);
    assert_int_equal(all[0].onset_step, 0);
    assert_int_equal(all[0].detect_step, 15);
    assert_near(all[0].slowdown, 0.4, 0.04);
    assert_int_equal(all[1].kind, HN_STRAG_PERSISTENT);
    assert_int_equal(all[1].rank, 6);
    assert_true(all[1].onset_step >= 598 && all[1].onset_step <= 602);
    assert_near(all[1].slowdown, 0.25, 0.04);
    assert_near(all[1].vs_peers, 1.4 * 1.25 - 1, 0.06);
    struct hn_strag_rank_info ri;
    assert_int_equal(hn_strag_rank_get(s, 1, &ri), 0);
    assert_true(ri.warm && !ri.slow);
    assert_near(ri.baseline, 1.1, 0.03);
    assert_int_equal(ri.onset_step, 0);
    assert_true(ri.slowdown_now == 0);
    assert_int_equal(hn_strag_rank_get(s, 6, &ri), 0);
    assert_true(ri.slow);
    /* its episode: the onset reported, and its slowdown now (the median of its last reports) */
    assert_int_equal(ri.onset_step, all[1].onset_step);
    assert_near(ri.slowdown_now, 0.25, 0.04);
    hn_strag_free(s);
}

/* The same rows give the same detections, and multiplying every time by 1000 (another unit)
 * changes nothing: the detector is scale-free. */
static void test_deterministic_and_scale_free(void **state)
{
    (void)state;
    struct job j;
    job_default(&j);
    j.slow_rank = 7;
    j.slowdown = 0.08;
    j.slow_from = 400;
    j.slow_to = 1500;
    j.spike_rank = 2;
    j.spike_size = 1.5;
    j.spike_at = 1000;
    struct hn_strag_detection a[MAX_DET], b[MAX_DET], c[MAX_DET];
    size_t na = run_job(&j, NULL, a, MAX_DET, NULL);
    size_t nb = run_job(&j, NULL, b, MAX_DET, NULL);
    j.scale = 1000;
    size_t nc = run_job(&j, NULL, c, MAX_DET, NULL);
    assert_int_equal(na, 2);
    assert_int_equal(na, nb);
    assert_int_equal(na, nc);
    assert_memory_equal(a, b, na * sizeof(a[0]));
    for (size_t i = 0; i < na; i++) {
        assert_int_equal(a[i].kind, c[i].kind);
        assert_int_equal(a[i].rank, c[i].rank);
        assert_int_equal(a[i].onset_step, c[i].onset_step);
        assert_int_equal(a[i].detect_step, c[i].detect_step);
        assert_near(a[i].slowdown, c[i].slowdown, 1e-6);
    }
    const struct hn_strag_detection *p = find_kind(a, na, HN_STRAG_PERSISTENT);
    assert_non_null(p);
    assert_int_equal(p->rank, 7);
    assert_true(p->detect_step - 400 <= 10);
    assert_int_equal(count_kind(a, na, HN_STRAG_TRANSIENT), 1);
}

/* A job large enough for a sampled reference (>= 4096 ranks: every fifth rank), with every
 * eighth rank (local rank 0 of each node) 5% slower throughout: the median stays right, nothing
 * is reported but the one real straggler. With hole, the sampled ranks never report. */
static void large_job(int hole)
{
    unsigned ranks = 5000;
    struct hn_strag *s = hn_strag_new(NULL, ranks);
    double *x = xcalloc(ranks, sizeof(double));
    struct gen g = {.x = 3};
    size_t n = 0;
    struct hn_strag_detection d;
    for (uint64_t t = 0; t < 300; t++) {
        for (unsigned r = 0; r < ranks; r++)
            x[r] = (r % 8 == 0 ? 1.05 : 1.0) * (1 + 0.015 * gen_gauss(&g));
        if (t >= 100)
            x[4321] *= 1.15;
        for (unsigned r = 0; r < ranks && hole; r += 5)
            x[r] = NAN;
        hn_strag_step(s, t, x);
        while (hn_strag_poll(s, &d)) {
            n++;
            assert_int_equal(d.kind, HN_STRAG_PERSISTENT);
            assert_int_equal(d.rank, 4321);
            assert_true(d.detect_step - 100 <= 5);
        }
        /* the peer median of this step sets every rank's ratio: rank 1 sits at 1.0 */
    }
    assert_int_equal(n, 1);
    struct hn_strag_rank_info ri;
    assert_int_equal(hn_strag_rank_get(s, 1, &ri), 0);
    assert_near(ri.baseline, 1.0, 0.01);
    assert_int_equal(hn_strag_rank_get(s, 8, &ri), 0);
    assert_near(ri.baseline, 1.05, 0.01);
    free(x);
    hn_strag_free(s);
}

static void test_large_job(void **state)
{
    (void)state;
    large_job(0);
    /* Every rank of the reference's sample (every fifth of 5000) silent: all ranks instead. */
    large_job(1);
}

/* An 8-rank job in which three ranks became 30% slower for good, and later a fourth 12% slower
 * while a fifth has two GC pauses: five of eight ranks are slow on those steps, and the median of
 * the reports would be a slow rank's report. The step's reference is the median of the other
 * ranks over their own normals (step_reference), so the fourth is found within 5 steps too,
 * with its onset; no other rank is reported as persistent, and the baselines stay where the
 * ranks' offsets put them (the gauge), 1200 steps of right-skewed reports later. */
static const double small_het[8] = {1.00, 0.97, 1.03, 0.99, 1.02, 0.96, 1.04, 1.01};

static void small_job_row(void *ctx, uint64_t t, double *x)
{
    struct gen *g = ctx;
    for (unsigned r = 0; r < 8; r++) {
        x[r] = small_het[r] * (1 + 0.015 * gen_gauss(g));
        if (gen_unif(g) < 0.02) /* a right tail */
            x[r] *= 1 - 0.06 * log(gen_unif(g));
        if (r < 3 && t >= 200)
            x[r] *= 1.30;
        if (r == 3 && t >= 400)
            x[r] *= 1.12;
        if (r == 4 && (t == 401 || t == 403))
            x[r] *= 2.0;
    }
}

static void test_small_job_reference(void **state)
{
    (void)state;
    enum { RANKS = 8, STEPS = 1600, MAX = 256 };
    const double *het = small_het;
    struct hn_strag *s = hn_strag_new(NULL, RANKS);
    assert_non_null(s);
    struct gen g = {.x = 11};
    struct hn_strag_detection det[MAX];
    size_t nd = feed(s, RANKS, STEPS, small_job_row, &g, det, MAX);
    unsigned persistent[RANKS] = {0};
    uint64_t onset[RANKS] = {0}, detect[RANKS] = {0};
    for (size_t i = 0; i < nd; i++) {
        const struct hn_strag_detection *d = &det[i];
        /* nothing recovers, and the job as a whole did not slow down */
        assert_true(d->kind == HN_STRAG_PERSISTENT || d->kind == HN_STRAG_TRANSIENT);
        if (d->kind != HN_STRAG_PERSISTENT)
            continue;
        assert_true(d->rank < RANKS);
        persistent[d->rank]++;
        onset[d->rank] = d->onset_step;
        detect[d->rank] = d->detect_step;
    }
    for (unsigned r = 0; r < 3; r++) {
        assert_int_equal(persistent[r], 1);
        assert_int_equal(onset[r], 200);
        assert_true(detect[r] - 200 <= 5);
    }
    assert_int_equal(persistent[3], 1);
    assert_int_equal(onset[3], 400);
    assert_true(detect[3] - 400 <= 5);
    /* Each rank's baseline is its offset over the typical offset, 1.005, the median of all
     * eight (ranks 0-3 count with the baselines they had before their episodes), to within
     * the small drift that half the job counted at an estimated speed allows. */
    for (unsigned r = 4; r < RANKS; r++) {
        assert_int_equal(persistent[r], 0);
        struct hn_strag_rank_info ri;
        assert_int_equal(hn_strag_rank_get(s, r, &ri), 0);
        assert_near(ri.baseline, het[r] / 1.005, 0.01);
    }
    hn_strag_free(s);
}

/* Five ranks of eight become 30% slower, three and then two more: each is found once, and
 * none flips back and forth, though the slow ranks are now the majority (the step's reference
 * counts them at their normal speed rather than leaving them out). */
static void most_slow_row(void *ctx, uint64_t t, double *x)
{
    struct gen *g = ctx;
    for (unsigned r = 0; r < 8; r++) {
        x[r] = (1 + 0.02 * (double)(r % 4)) * (1 + 0.015 * gen_gauss(g));
        if ((r < 3 && t >= 200) || (r >= 3 && r < 5 && t >= 400))
            x[r] *= 1.30;
    }
}

static void test_most_of_the_job_slow(void **state)
{
    (void)state;
    enum { RANKS = 8, MAX = 256 };
    for (uint64_t seed = 1; seed <= 6; seed++) {
        struct hn_strag *s = hn_strag_new(NULL, RANKS);
        assert_non_null(s);
        struct gen g = {.x = seed * 104729};
        struct hn_strag_detection det[MAX];
        size_t nd = feed(s, RANKS, 1000, most_slow_row, &g, det, MAX);
        unsigned persistent[RANKS] = {0}, other = 0;
        for (size_t i = 0; i < nd; i++) {
            const struct hn_strag_detection *d = &det[i];
            if (d->kind == HN_STRAG_PERSISTENT && d->rank < RANKS) {
                persistent[d->rank]++;
                assert_int_equal(d->onset_step, d->rank < 3 ? 200 : 400);
            } else if (d->kind != HN_STRAG_TRANSIENT) {
                other++;
            }
        }
        for (unsigned r = 0; r < RANKS; r++)
            assert_int_equal(persistent[r], r < 5 ? 1 : 0);
        assert_int_equal(other, 0);
        hn_strag_free(s);
    }
}

/* Forty steps in which every rank scatters five times as much as usual, independently (a
 * contended filesystem while the data loaders read, say): no rank is slow, and none is
 * reported, because the step's own spread across ranks widens everyone's noise for those
 * steps (dispersion). */
static void scatter_row(void *ctx, uint64_t t, double *x)
{
    struct gen *g = ctx;
    double jitter = t >= 400 && t < 440 ? 0.075 : 0.015;
    for (unsigned r = 0; r < 16; r++)
        x[r] = (1 + 0.02 * (double)(r % 3)) * (1 + jitter * gen_gauss(g));
}

static void test_everyone_scatters(void **state)
{
    (void)state;
    enum { RANKS = 16, MAX = 256 };
    for (uint64_t seed = 1; seed <= 4; seed++) {
        struct hn_strag *s = hn_strag_new(NULL, RANKS);
        assert_non_null(s);
        struct gen g = {.x = seed * 7919};
        struct hn_strag_detection det[MAX];
        size_t nd = feed(s, RANKS, 800, scatter_row, &g, det, MAX);
        assert_int_equal(count_kind(det, nd, HN_STRAG_PERSISTENT), 0);
        hn_strag_free(s);
    }
}

/* A rank that becomes twice as slow is found within a few reports: by the large-shift CUSUM
 * with the defaults (the small-shift evidence falls back for reports that far out), and by the
 * small-shift one, held at its peak, when the large-shift one is off. Two spikes in a row (a
 * GC pause and its spill) are a transient, not a slowdown, either way. */
static void test_large_slowdown_and_spike_runs(void **state)
{
    (void)state;
    struct hn_strag_config off;
    hn_strag_config_default(&off);
    off.big_shift = 0;
    const struct hn_strag_config *cfgs[] = {NULL, &off};
    for (size_t c = 0; c < 2; c++) {
        struct job j;
        job_default(&j);
        j.jitter = 0.01;
        j.slow_rank = 5;
        j.slowdown = 1.0;
        j.slow_from = 600;
        j.slow_to = 1500;
        j.spike_rank = 9;
        j.spike_size = 1.0;
        j.spike_at = 300;
        j.spike_at2 = 301;
        struct hn_strag_detection d[MAX_DET];
        size_t n = run_job(&j, cfgs[c], d, MAX_DET, NULL);
        assert_int_equal(count_kind(d, n, HN_STRAG_PERSISTENT), 1);
        const struct hn_strag_detection *p = find_kind(d, n, HN_STRAG_PERSISTENT);
        assert_int_equal(p->rank, 5);
        /* Page's onset is where the statistic last left zero: with the defaults the first slow
         * report; the small-shift chart alone may have started a report earlier, on noise. */
        assert_true(p->onset_step <= 600 && 600 - p->onset_step <= (c == 0 ? 0 : 1));
        assert_true(p->detect_step - 600 <= 5);
        assert_near(p->slowdown, 1.0, 0.05);
        const struct hn_strag_detection *t = find_kind(d, n, HN_STRAG_TRANSIENT);
        assert_non_null(t);
        assert_int_equal(t->rank, 9);
        assert_int_equal(t->onset_step, 300);
        assert_int_equal(t->end_step, 301);
    }
}

/* The quick path (a vector loop over ranks) and the full path (series_update) are the same
 * arithmetic: a job with every kind of report (warm-up, late starters, missing reports, spikes,
 * slowdowns of several sizes, a whole-job slowdown, a checkpoint stall) through a detector with
 * and one without the quick path gives the same detections and the same state, to the bit. Large
 * enough (4100 ranks) for the sampled reference; run with two configurations. */
static void run_paths(const struct hn_strag_config *cfg)
{
    unsigned ranks = 4100;
    struct hn_strag *q = hn_strag_new(cfg, ranks), *f = hn_strag_new(cfg, ranks);
    assert_non_null(q);
    assert_non_null(f);
    hn_strag_set_quick(f, 0);
    double *x = xcalloc(ranks, sizeof(double));
    struct gen g = {.x = 11};
    size_t kinds[HN_STRAG_FROM_START + 1] = {0};
    for (uint64_t t = 0; t < 400; t++) {
        double common = (t >= 250 && t < 300 ? 1.3 : 1.0) * (t % 97 == 0 ? 3.0 : 1.0);
        for (unsigned r = 0; r < ranks; r++) {
            double v = common * (1 + 0.05 * ((double)(r % 7) - 3) / 3);
            v *= 1 + 0.02 * gen_gauss(&g);
            if (gen_unif(&g) < 0.005)
                v *= 1.2 + gen_unif(&g); /* spikes, a third of them at least 50% */
            if (r % 50 == 1 && t >= 120)
                v *= 1 + 0.02 * (double)(r % 13); /* slowdowns of 0-24% */
            if (r % 50 == 2 && t >= 150 && t < 220)
                v *= 1.4; /* an episode that ends */
            if ((r % 31 == 3 && t % 3 == 0) || (r % 37 == 4 && t < 60) || r == 4099)
                v = r % 2 ? NAN : 0; /* missing reports, late starters, a rank never seen */
            x[r] = v;
        }
        int a = hn_strag_step(q, t, x), b = hn_strag_step(f, t, x);
        assert_int_equal(a, b);
        struct hn_strag_detection dq, df;
        while (hn_strag_poll(q, &dq)) {
            assert_int_equal(hn_strag_poll(f, &df), 1);
            assert_memory_equal(&dq, &df, sizeof(dq));
            kinds[dq.kind]++;
        }
        assert_int_equal(hn_strag_poll(f, &df), 0);
    }
    /* The job above does go through every path: persistent slowdowns, their recovery,
     * spike excursions and the whole job's slowdown. */
    assert_true(kinds[HN_STRAG_PERSISTENT] >= 10);
    assert_true(kinds[HN_STRAG_RECOVERED] >= 1);
    assert_true(kinds[HN_STRAG_TRANSIENT] >= 10);
    assert_true(kinds[HN_STRAG_JOB_SLOWDOWN] >= 1);
    for (unsigned r = 0; r < ranks; r++) {
        struct hn_strag_rank_info a, b;
        assert_int_equal(hn_strag_rank_get(q, r, &a), 0);
        assert_int_equal(hn_strag_rank_get(f, r, &b), 0);
        assert_memory_equal(&a, &b, sizeof(a));
    }
    struct hn_strag_stats sq, sf;
    hn_strag_stats_get(q, &sq);
    hn_strag_stats_get(f, &sf);
    assert_memory_equal(&sq, &sf, sizeof(sq));
    free(x);
    hn_strag_free(q);
    hn_strag_free(f);
}

static void test_quick_path_is_the_full_path(void **state)
{
    (void)state;
    run_paths(NULL);
    struct hn_strag_config cfg;
    hn_strag_config_default(&cfg);
    cfg.warmup = 5;
    cfg.baseline_alpha = 1.0 / 16;
    cfg.alpha_noise = 0.01; /* every rank of the job above smooths with its own alpha */
    cfg.min_steps = 1;
    run_paths(&cfg);
}

/* After 2,000 steps of 512 equal ranks with Gaussian jitter: the spread across ranks of their
 * baselines (every rank's true normal is the same, so the spread is the baselines' error) and
 * their noise estimate, averaged over ranks. */
struct spread {
    double sd, noise;
};

static void baseline_spread(double jitter, const struct hn_strag_config *cfg, struct spread *out)
{
    unsigned ranks = 512;
    struct hn_strag *s = hn_strag_new(cfg, ranks);
    assert_non_null(s);
    double *x = xcalloc(ranks, sizeof(double));
    struct gen g = {.x = 29};
    for (uint64_t t = 0; t < 2000; t++) {
        for (unsigned r = 0; r < ranks; r++)
            x[r] = 1 + jitter * gen_gauss(&g);
        assert_int_equal(hn_strag_step(s, t, x), 0);
    }
    double sum = 0, sum2 = 0, noise = 0;
    for (unsigned r = 0; r < ranks; r++) {
        struct hn_strag_rank_info i;
        assert_int_equal(hn_strag_rank_get(s, r, &i), 0);
        sum += i.baseline;
        sum2 += i.baseline * i.baseline;
        noise += i.noise;
    }
    out->sd = sqrt(sum2 / ranks - (sum / ranks) * (sum / ranks));
    out->noise = noise / ranks;
    free(x);
    hn_strag_free(s);
}

/* A rank noisier than alpha_noise averages over more reports: at 4% jitter (alpha_noise 2%:
 * half the weight, twice the reports) its baseline's error is about 1 / sqrt(2) of what
 * baseline_alpha alone gives, at 1% exactly the same. */
static void test_noisy_ranks_average_longer(void **state)
{
    (void)state;
    struct hn_strag_config on, off;
    hn_strag_config_default(&on);
    off = on;
    off.alpha_noise = 1;
    struct spread a, b;
    baseline_spread(0.04, &on, &a);
    baseline_spread(0.04, &off, &b);
    assert_true(a.noise > 0.035 && a.noise < 0.045);
    assert_true(a.sd < 0.85 * b.sd);
    assert_true(a.sd > 0.55 * b.sd);
    baseline_spread(0.01, &on, &a);
    baseline_spread(0.01, &off, &b);
    assert_true(a.noise > 0.008 && a.noise < 0.012);
    assert_true(a.sd == b.sd);
}

/* The ring's sorting network sorts: every 0-1 input of 16 values (which suffices for a
 * comparator network, Knuth, TAOCP vol. 3, 5.3.4 exercise 1) and random shorter ones. */
static void test_sort_ring(void **state)
{
    (void)state;
    double v[16];
    for (unsigned bits = 0; bits < (1u << 16); bits++) {
        unsigned ones = 0;
        for (unsigned i = 0; i < 16; i++) {
            v[i] = (bits >> i) & 1;
            ones += (bits >> i) & 1;
        }
        hn_strag_sort_ring(v, 16);
        for (unsigned i = 0; i < 16; i++)
            assert_true(v[i] == (i >= 16 - ones ? 1.0 : 0.0));
    }
    struct gen g = {.x = 5};
    for (unsigned n = 1; n <= 16; n++) {
        for (int rep = 0; rep < 50; rep++) {
            for (unsigned i = 0; i < n; i++)
                v[i] = floor(gen_unif(&g) * 8); /* ties too */
            hn_strag_sort_ring(v, n);
            for (unsigned i = 1; i < n; i++)
                assert_true(v[i - 1] <= v[i]);
        }
    }
}

/* ---- the Alibaba PAI jobs ---- */

/* Reads a fixture CSV (worker, time, batch_time_norm columns) and runs it step by step. */
static size_t run_alibaba(const char *file, struct hn_strag_detection *out, size_t max)
{
    char path[PATH_MAX], err[256];
    char *data = NULL;
    size_t len = 0;
    assert_int_equal(hn_csv_read_file(tu_fixture(path, sizeof(path), "step-times/%s", file), &data,
                                      &len, err, sizeof(err)),
                     0);
    struct hn_csv_reader rd;
    hn_csv_reader_init(&rd, data, len);
    assert_int_equal(hn_csv_reader_next(&rd, err, sizeof(err)), 1);
    int cw = -1, ct = -1, cv = -1;
    for (size_t i = 0; i < rd.nfields; i++) {
        if (strcmp(rd.field[i], "worker") == 0)
            cw = (int)i;
        else if (strcmp(rd.field[i], "time") == 0)
            ct = (int)i;
        else if (strcmp(rd.field[i], "batch_time_norm") == 0)
            cv = (int)i;
    }
    assert_true(cw >= 0 && ct >= 0 && cv >= 0);

    /* The rows come sorted by worker, then time: collect them per iteration. */
    enum { WORKERS = 10, MAX_T = 3000 };
    static double v[MAX_T][WORKERS];
    for (size_t t = 0; t < MAX_T; t++)
        for (size_t w = 0; w < WORKERS; w++)
            v[t][w] = NAN;
    while (hn_csv_reader_next(&rd, err, sizeof(err)) == 1) {
        uint64_t w, t;
        double x;
        assert_int_equal(hn_parse_u64(rd.field[cw], 10, &w), 0);
        assert_int_equal(hn_parse_u64(rd.field[ct], 10, &t), 0);
        assert_int_equal(hn_parse_double(rd.field[cv], &x), 0);
        assert_true(w < WORKERS && t < MAX_T);
        if (isnan(v[t][w]))
            v[t][w] = x;
    }
    hn_csv_reader_fini(&rd);
    free(data);

    struct hn_strag *s = hn_strag_new(NULL, WORKERS);
    size_t n = 0;
    for (uint64_t t = 0; t < MAX_T; t++) {
        int any = 0;
        for (size_t w = 0; w < WORKERS; w++)
            any |= !isnan(v[t][w]);
        if (!any)
            continue;
        assert_true(hn_strag_step(s, t, v[t]) >= 0);
        while (n < max && hn_strag_poll(s, &out[n]))
            n++;
    }
    hn_strag_free(s);
    return n;
}

/* Job 1: worker 6 straggles from iteration 1811 to 1941 (1.17-2.35x the median). One
 * persistent detection of rank 6 with its onset in that range, its recovery, nothing else:
 * not the ~10% wander of workers 0-2, not their isolated 1.2x samples. */
static void test_alibaba_job1(void **state)
{
    (void)state;
    struct hn_strag_detection d[MAX_DET];
    size_t n = run_alibaba("job_1_norm.csv", d, MAX_DET);
    assert_int_equal(count_kind(d, n, HN_STRAG_PERSISTENT), 1);
    const struct hn_strag_detection *p = find_kind(d, n, HN_STRAG_PERSISTENT);
    assert_int_equal(p->rank, 6);
    assert_true(p->onset_step >= 1811 && p->onset_step <= 1941);
    assert_true(p->detect_step >= p->onset_step && p->detect_step <= 1941);
    assert_true(p->slowdown > 0.5);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(d[i].rank, 6);
        assert_true(d[i].kind == HN_STRAG_PERSISTENT || d[i].kind == HN_STRAG_RECOVERED);
    }
    const struct hn_strag_detection *r = find_kind(d, n, HN_STRAG_RECOVERED);
    assert_non_null(r);
    assert_true(r->end_step >= 1901 && r->end_step <= 1951);
}

/* Job 2: stable, with constant offsets between workers (worker 1 about 685, worker 5 about
 * 905): nothing at all. */
static void test_alibaba_job2(void **state)
{
    (void)state;
    struct hn_strag_detection d[MAX_DET];
    size_t n = run_alibaba("job_2_norm.csv", d, MAX_DET);
    assert_int_equal(n, 0);
}

/* ---- the command's CSV reader (src/jobs/straggler_cmd.c) ---- */

struct cmd_run {
    int rc;
    char *out, *err;
};

/* Runs `houston straggler --csv FILE` on the len bytes of csv (NUL bytes allowed), capturing
 * its stdout and stderr. */
static struct cmd_run run_cmd(const char *csv, size_t len)
{
    char path[PATH_MAX];
    (void)snprintf(path, sizeof(path), "%s/steps.csv", tu_tmpdir());
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, csv, len), (ssize_t)len);
    close(fd);
    char *argv[] = {"straggler", "--csv", path, NULL};
    struct cmd_run r;
    struct tu_capture c;
    tu_capture_begin(&c);
    r.rc = hn_cmd_straggler(3, argv);
    tu_capture_end(&c);
    r.out = tu_slurp(c.out, NULL);
    r.err = tu_slurp(c.err, NULL);
    return r;
}

static void cmd_run_free(struct cmd_run *r)
{
    free(r->out);
    free(r->err);
}

/* A job of 8 ranks over 400 steps in which rank 3 is 40% slower from step 200, as CSV text with
 * the header `header` and step and rank written with the printf format `num` ("%u" or "%u.0";
 * every fifth row "%u.000" when num is "%u.0"). The caller frees the text; *len gets its size. */
static char *cmd_job_csv(const char *header, const char *num, size_t *len)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    assert_non_null(f);
    fputs(header, f);
    struct gen g = {.x = 0x9e3779b97f4a7c15ULL};
    unsigned n = 0;
    for (unsigned t = 0; t < 400; t++) {
        for (unsigned r = 0; r < 8; r++, n++) {
            double v = (1 + 0.02 * gen_gauss(&g)) * (r == 3 && t >= 200 ? 1.4 : 1.0);
            const char *fmt = strcmp(num, "%u") != 0 && n % 5 == 0 ? "%u.000" : num;
            fprintf(f, fmt, t);
            fputc(',', f);
            fprintf(f, fmt, r);
            fprintf(f, ",%.5f\n", v);
        }
    }
    assert_int_equal(fclose(f), 0);
    return text;
}

/* The plain job's answer: rank 3, persistent, and nothing on stderr. */
static char *cmd_plain_answer(void)
{
    size_t len;
    char *csv = cmd_job_csv("step,rank,seconds\n", "%u", &len);
    struct cmd_run r = run_cmd(csv, len);
    free(csv);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.err, "");
    assert_non_null(strstr(r.out, "{\"rank\":3,"));
    assert_non_null(strstr(r.out, "\"kind\":\"persistent\""));
    free(r.err);
    return r.out;
}

/* The job of cmd_job_csv with this header and number format gives the plain file's answer,
 * with nothing on stderr. */
static void same_answer(const char *header, const char *num)
{
    char *want = cmd_plain_answer();
    size_t len;
    char *csv = cmd_job_csv(header, num, &len);
    struct cmd_run r = run_cmd(csv, len);
    assert_string_equal(r.err, "");
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out, want);
    cmd_run_free(&r);
    free(csv);
    free(want);
}

/* A UTF-8 byte order mark before the header (Excel, some Windows tools) is not part of the first
 * column's name. */
static void test_cmd_bom(void **state)
{
    (void)state;
    same_answer("\xEF\xBB\xBFstep,rank,seconds\n", "%u");

    /* Only at the start of the input: a BOM before a later line stays, and fails that row. */
    static const char later[] = "step,rank,seconds\n\xEF\xBB\xBF"
                                "1,0,1.0\n1,1,1.0\n";
    struct cmd_run r = run_cmd(later, sizeof(later) - 1);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.err, "skipped 1 malformed rows (first: line 2: the step is not a "
                                  "whole number)"));
    cmd_run_free(&r);
}

/* Steps and ranks written as floats with a zero fraction (pandas, for an integer column with
 * gaps) read as the whole numbers they are; a real fraction is still a malformed row. */
static void test_cmd_float_steps(void **state)
{
    (void)state;
    same_answer("step,rank,seconds\n", "%u.0");

    static const char bad[] = "step,rank,seconds\n"
                              "1.0,0,1.0\n"
                              "1,1.00,1.0\n"
                              "2.5,0,1.0\n"
                              "2,1.5,1.0\n"
                              "3.,0,1.0\n"
                              ".0,1,1.0\n"
                              "4.0e0,0,1.0\n"
                              "-1.0,0,1.0\n"
                              "5.01,0,1.0\n";
    struct cmd_run r = run_cmd(bad, sizeof(bad) - 1);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "skipped 7 malformed rows (first: line 4: the step is not a "
                                  "whole number)"));
    cmd_run_free(&r);
}

/* A line with a NUL byte, first or anywhere, is a malformed row with that reason, never a blank
 * line or a row cut short; in the header it makes the input unreadable. */
static void test_cmd_nul_bytes(void **state)
{
    (void)state;
    static const char rows[] = "step,rank,seconds\n"
                               "1,0,1.0\n"
                               "\0\n"
                               "\0garbage\n"
                               "2,0,\0"
                               "1.0\n"
                               "2,1,1.0\0\n"
                               "3,0,1.0";
    struct cmd_run r = run_cmd(rows, sizeof(rows) - 1);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.err, "skipped 4 malformed rows (first: line 3: a NUL byte (binary "
                                  "data, not CSV text))"));
    cmd_run_free(&r);

    static const char header[] = "st\0ep,rank,seconds\n1,0,1.0\n";
    r = run_cmd(header, sizeof(header) - 1);
    assert_int_equal(r.rc, 2);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "line 1: the header line is not CSV text (it holds a NUL byte)"));
    cmd_run_free(&r);
}

/* Rows that are all malformed (a time column in "1.2s", the wrong --seconds-col) exit 2: with
 * nothing on stdout and 0, a script took the job for a healthy one. A header and no rows at all
 * is still 0 (nothing to judge, and nothing wrong with the file). */
static void test_cmd_no_row_readable(void **state)
{
    (void)state;
    static const char bad[] = "step,rank,seconds\n1,0,1.2s\n1,1,1.3s\n2,0,1.2s\n";
    struct cmd_run r = run_cmd(bad, sizeof(bad) - 1);
    assert_int_equal(r.rc, 2);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "none of its 3 rows could be read"));
    cmd_run_free(&r);
    static const char none[] = "step,rank,seconds\n";
    r = run_cmd(none, sizeof(none) - 1);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.err, "no data rows"));
    cmd_run_free(&r);
}

/* A header line over 64 KiB is refused for what it is, not as "not CSV". */
static void test_cmd_long_header(void **state)
{
    (void)state;
    size_t len;
    char *text = NULL;
    FILE *f = open_memstream(&text, &len);
    fputs("step,rank,seconds,", f);
    for (int k = 0; k < 70000; k++)
        fputc('x', f);
    fputs("\n1,0,1.0\n", f);
    fclose(f);
    struct cmd_run r = run_cmd(text, len);
    free(text);
    assert_int_equal(r.rc, 2);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "line 1: the header line is not CSV text (it is longer than "
                                  "64 KiB)"));
    cmd_run_free(&r);
}

/* A header that goes wrong is refused at its first NUL byte, without waiting for a line end
 * that may never come: a pipe that delivers NUL bytes and stays open (/dev/zero, a producer
 * writing binary data) ends the command with exit 2 rather than hanging it. */
static void test_cmd_header_gives_up_early(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    static const char bytes[] = "step,rank\0\0\0";
    assert_int_equal(write(fds[1], bytes, sizeof(bytes) - 1), (ssize_t)(sizeof(bytes) - 1));
    char path[64];
    (void)snprintf(path, sizeof(path), "/dev/fd/%d", fds[0]);
    char *argv[] = {"straggler", "--csv", path, NULL};
    struct tu_capture c;
    alarm(20); /* before the fix this waited for the pipe forever */
    tu_capture_begin(&c);
    int rc = hn_cmd_straggler(3, argv);
    tu_capture_end(&c);
    alarm(0);
    close(fds[0]);
    close(fds[1]); /* the write end stayed open throughout */
    char *err = tu_slurp(c.err, NULL);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(err, "the header line is not CSV text (it holds a NUL byte)"));
    free(err);
}

/* Extra columns are ignored, however many: 303 columns with the three used first. */
static void test_cmd_wide_csv(void **state)
{
    (void)state;
    size_t len;
    char *text = NULL;
    FILE *f = open_memstream(&text, &len);
    fputs("step,rank,seconds", f);
    for (int k = 0; k < 300; k++)
        fprintf(f, ",x%d", k);
    fputc('\n', f);
    for (unsigned t = 0; t < 40; t++)
        for (unsigned r = 0; r < 4; r++) {
            fprintf(f, "%u,%u,1.0", t, r);
            for (int k = 0; k < 300; k++)
                fputs(",0", f);
            fputc('\n', f);
        }
    fclose(f);
    struct cmd_run r = run_cmd(text, len);
    free(text);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.err, "");
    cmd_run_free(&r);
}

/* 10,000 ranks, 45% of them 40% slower from the start: one from_start line each, although
 * they all come from one step (the detector's queue holds a step's worth). */
static void test_cmd_many_detections_in_one_step(void **state)
{
    (void)state;
    size_t len;
    char *text = NULL;
    FILE *f = open_memstream(&text, &len);
    fputs("step,rank,seconds\n", f);
    struct gen g = {.x = 5};
    unsigned slow = 0;
    for (unsigned t = 0; t < 20; t++)
        for (unsigned r = 0; r < 10000; r++) {
            int is_slow = (r * 7919u) % 100 < 45;
            slow += t == 0 && is_slow;
            fprintf(f, "%u,%u,%.5f\n", t, r, (1 + 0.005 * gen_gauss(&g)) * (is_slow ? 1.4 : 1));
        }
    fclose(f);
    struct cmd_run r = run_cmd(text, len);
    free(text);
    size_t lines = 0;
    for (const char *p = r.out; (p = strstr(p, "\"from_start\"")); p++)
        lines++;
    print_message("slow ranks %u, from_start lines %zu\n", slow, lines);
    assert_true(slow > 4096);
    assert_int_equal(lines, slow);
    assert_string_equal(r.err, "");
    cmd_run_free(&r);
}

/* A header and no rows is no healthy job: stderr says so. Steps without a quorum of the file's
 * ranks (a job that shrank from 16 ranks to 4) are counted on stderr, not left out silently. */
static void test_cmd_says_what_it_left_out(void **state)
{
    (void)state;
    static const char csv[] = "step,rank,seconds\n";
    struct cmd_run r = run_cmd(csv, sizeof(csv) - 1);
    assert_int_equal(r.rc, 0);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "no data rows"));
    cmd_run_free(&r);
    size_t len;
    char *text = NULL;
    FILE *f = open_memstream(&text, &len);
    fputs("step,rank,seconds\n", f);
    for (unsigned t = 0; t < 100; t++)
        for (unsigned k = 0; k < (t < 40 ? 16u : 4u); k++)
            fprintf(f, "%u,%u,1.0\n", t, k);
    fclose(f);
    r = run_cmd(text, len);
    free(text);
    print_message("stderr: %s", r.err);
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.err, "60 of 100 steps had fewer than 8 of the 16 ranks"));
    cmd_run_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_every_setting_is_a_flag),
        cmocka_unit_test(test_steps_and_quorum),
        cmocka_unit_test(test_healthy_job_is_silent),
        cmocka_unit_test(test_persistent_slowdown_and_recovery),
        cmocka_unit_test(test_once_per_episode),
        cmocka_unit_test(test_job_slowdown_is_not_a_straggler),
        cmocka_unit_test(test_spikes_are_transient),
        cmocka_unit_test(test_slow_from_the_start),
        cmocka_unit_test(test_deterministic_and_scale_free),
        cmocka_unit_test(test_large_job),
        cmocka_unit_test(test_small_job_reference),
        cmocka_unit_test(test_most_of_the_job_slow),
        cmocka_unit_test(test_everyone_scatters),
        cmocka_unit_test(test_large_slowdown_and_spike_runs),
        cmocka_unit_test(test_quick_path_is_the_full_path),
        cmocka_unit_test(test_noisy_ranks_average_longer),
        cmocka_unit_test(test_sort_ring),
        cmocka_unit_test(test_alibaba_job1),
        cmocka_unit_test(test_alibaba_job2),
        cmocka_unit_test(test_cmd_bom),
        cmocka_unit_test(test_cmd_float_steps),
        cmocka_unit_test(test_cmd_nul_bytes),
        cmocka_unit_test(test_cmd_long_header),
        cmocka_unit_test(test_cmd_no_row_readable),
        cmocka_unit_test(test_cmd_header_gives_up_early),
        cmocka_unit_test(test_cmd_wide_csv),
        cmocka_unit_test(test_cmd_many_detections_in_one_step),
        cmocka_unit_test(test_cmd_says_what_it_left_out),
    };
    return cmocka_run_group_tests(tests, tu_tmpdir_setup, tu_tmpdir_teardown);
}
