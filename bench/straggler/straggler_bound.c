/*
 * straggler_bound.c - how many slowdowns a detector that knows everything but the onset could
 * find in time.
 *
 * usage: straggler_bound [--quick] [--seed N]
 *
 * bench/straggler/oracle_bound.py bounds the in-time detection of an oracle that also knows
 * the onset and tests once per episode. A real detector does not know the onset: it tests
 * every rank at every step and must hold its false alarms per rank-step (the goal: 1 per 10^6;
 * houston on the bench: 1-3 per 10^8; NVRx on seed 1: 4 per 10^8). This program estimates what
 * is possible in that online problem. Its detector knows the rank's normal exactly, the noise
 * exactly (the bench's unit-variance Student t4 jitter, without the generator's right tail,
 * garbage-collection pauses, drift or heterogeneity; bench_straggler.c) and the slowdown's size,
 * and runs Page's CUSUM of the exact log-likelihood ratio of the t4 density for a slowdown of
 * delta' standard deviations. Such a CUSUM has the least worst-case expected delay of all detectors
 * with the same false-alarm rate when delta' is the true delta (Lorden, Ann. Math. Statist. 42,
 * 1971; Moustakides, Ann. Statist. 14, 1986). Detection within a deadline is a different criterion,
 * so every true delta gets the best of the CUSUMs tuned to 0.75-1.6 times it.
 *
 * Threshold: set so that the average run length to a false alarm is 1 / rate, by bisection on
 * run lengths estimated by importance sampling (set_thresholds says how). Counting run lengths
 * directly at h = 8, where they are short enough, checks the estimate; both are printed.
 *
 * Detection: the CUSUM runs over 20 normal reports (so it starts from its usual state, not
 * from zero; runs that alarm there are drawn again), then over reports slower by delta; a
 * detection in time is an alarm at the goal's deadline or before (11 reports for 5-10%: onset
 * to onset + 10; 6 for 10% or more). Slowdowns and jitters are spread evenly over each band, as
 * the bench draws them. Prints a markdown table; deterministic for a seed.
 */
#include "rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NU            4.0
#define PRE_STEPS     20 /* normal reports before the onset */
#define MAX_REPORTS   11 /* the longer deadline */
#define GRID_RATIO    1.05
#define GRID_LO       1.0
#define GRID_N        48 /* designs 1.0 .. 1.05^47 = 9.9 deviations */
#define IS_EXCURSIONS 20000
#define CHECK_H       8.0
#define N_RATES       2

static const double rates[N_RATES] = {1e-6, 4e-8};

struct design {
    double delta;      /* the slowdown it is tuned to, in standard deviations of the jitter */
    double h[N_RATES]; /* thresholds for the rates */
    double arl_check;  /* the estimated ARL at CHECK_H */
};

/* Log-likelihood ratio of one report x (in standard deviations) for a shift of delta against
 * none, the noise being unit-variance t4: density proportional to (1 + x^2 / 2)^(-5/2). */
static double llr(double x, double delta)
{
    double a = x - delta;
    return (NU + 1) / 2 * log((NU - 2 + x * x) / (NU - 2 + a * a));
}

/* The CUSUM's run to a false alarm is a chain of excursions from zero, each ending back at zero
 * or at the threshold h: ARL = E0[excursion length] / P0(an excursion reaches h) (Wald's
 * identity over the excursions). The probability is tiny at the thresholds that matter, so it
 * is estimated under the slowed distribution f1 and reweighted: over an excursion that reaches
 * h, dP0/dP1 = e^-S at its first report at or above h, S being the sum of the exact
 * log-likelihood ratios (importance sampling by the change of measure; Siegmund, "Importance
 * sampling in the Monte Carlo study of sequential tests", Ann. Statist. 4, 1976). Each slowed
 * excursion is run to H_MAX once and its ladder heights (the values of S at each new maximum)
 * kept, so P0 at any h below H_MAX is read off them; ARL is increasing in h, so the threshold
 * for a rate is found by bisection. */
#define H_MAX       24.0
#define MAX_LADDER  128
#define LADDER_FROM 6.0 /* no threshold of interest is lower */

struct ladders {
    int n;
    int len[IS_EXCURSIONS];
    float v[IS_EXCURSIONS][MAX_LADDER];
};

static double excursion_p0(const struct ladders *l, double h)
{
    double sum = 0;
    for (int e = 0; e < l->n; e++)
        for (int k = 0; k < l->len[e]; k++)
            if (l->v[e][k] >= h) {
                sum += exp(-(double)l->v[e][k]);
                break;
            }
    return sum / l->n;
}

static void set_thresholds(struct design *d, struct rng *g, struct ladders *l, int excursions)
{
    /* mean excursion length under no slowdown (at H_MAX; it hardly depends on h) */
    long steps = 0;
    for (int e = 0; e < 4 * excursions; e++) {
        double s = 0;
        do {
            s += llr(t4(g), d->delta);
            steps++;
        } while (s > 0 && s < H_MAX);
    }
    double mean_len = (double)steps / (4 * excursions);
    l->n = excursions;
    for (int e = 0; e < excursions; e++) {
        double s = 0, top = 0;
        l->len[e] = 0;
        do {
            s += llr(d->delta + t4(g), d->delta);
            if (s > top) {
                top = s;
                if (s < LADDER_FROM)
                    continue;
                if (l->len[e] == MAX_LADDER) {
                    fprintf(stderr, "straggler_bound: more than %d ladder heights\n", MAX_LADDER);
                    exit(1);
                }
                l->v[e][l->len[e]++] = (float)s;
            }
        } while (s > 0 && s < H_MAX);
    }
    for (int i = 0; i < N_RATES; i++) {
        double lo = LADDER_FROM, hi = H_MAX - 1e-3, want = 1 / rates[i];
        for (int it = 0; it < 50; it++) {
            double mid = (lo + hi) / 2;
            if (mean_len / excursion_p0(l, mid) < want)
                lo = mid;
            else
                hi = mid;
        }
        d->h[i] = hi;
    }
    d->arl_check = mean_len / excursion_p0(l, CHECK_H);
}

/* The same ARL counted directly, for the check line: runs of the CUSUM to CHECK_H. */
static double direct_arl(double delta, struct rng *g, int runs)
{
    double total = 0;
    for (int r = 0; r < runs; r++) {
        double s = 0;
        long n = 0;
        do {
            s = fmax(0.0, s + llr(t4(g), delta));
            n++;
        } while (s < CHECK_H);
        total += (double)n;
    }
    return total / runs;
}

/* Share of episodes of a slowdown of delta found within 6 and within 11 reports by the CUSUM
 * tuned to design d with the threshold for rate i. */
static void in_time(const struct design *d, int i, double delta, struct rng *g, int episodes,
                    double *within6, double *within11)
{
    long hit6 = 0, hit11 = 0;
    for (int e = 0; e < episodes; e++) {
        double s = 0;
        int restart = 1;
        while (restart) {
            restart = 0;
            s = 0;
            for (int k = 0; k < PRE_STEPS && !restart; k++) {
                s = fmax(0.0, s + llr(t4(g), d->delta));
                restart = s >= d->h[i];
            }
        }
        for (int k = 0; k < MAX_REPORTS; k++) {
            s = fmax(0.0, s + llr(delta + t4(g), d->delta));
            if (s >= d->h[i]) {
                hit6 += k < 6;
                hit11++;
                break;
            }
        }
    }
    *within6 = (double)hit6 / episodes;
    *within11 = (double)hit11 / episodes;
}

static double grid_at(int k)
{
    return GRID_LO * pow(GRID_RATIO, k);
}

/* Interpolated (in log delta) from the table p over the grid; 1 beyond its top, where every
 * design finds everything, and the lowest value below its bottom. */
static double power_at(const double *p, double delta)
{
    double x = log(delta / GRID_LO) / log(GRID_RATIO);
    if (x >= GRID_N - 1)
        return 1;
    if (x <= 0)
        return p[0];
    int k = (int)x;
    return p[k] + (x - k) * (p[k + 1] - p[k]);
}

static double band_share(const double *p, double slow_lo, double slow_hi, double jit_lo,
                         double jit_hi)
{
    const int gs = 200, gj = 50;
    double total = 0;
    for (int a = 0; a < gs; a++)
        for (int b = 0; b < gj; b++) {
            double slow = slow_lo + (slow_hi - slow_lo) * (a + 0.5) / gs;
            double jit = jit_lo + (jit_hi - jit_lo) * (b + 0.5) / gj;
            total += power_at(p, slow / jit);
        }
    return total / (gs * gj);
}

int main(int argc, char **argv)
{
    uint64_t seed = 1;
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            seed = strtoull(argv[++i], NULL, 10);
        else {
            fprintf(stderr, "usage: straggler_bound [--quick] [--seed N]\n");
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    int excursions = quick ? 2000 : IS_EXCURSIONS, episodes = quick ? 2000 : 10000;
    struct rng g;
    rng_seed(&g, seed);

    static struct design des[GRID_N];
    static struct ladders lad;
    for (int k = 0; k < GRID_N; k++) {
        des[k].delta = grid_at(k);
        set_thresholds(&des[k], &g, &lad, excursions);
    }

    /* p6[i][k], p11[i][k]: the best design's share in time for a true delta of grid_at(k) */
    static double p6[N_RATES][GRID_N], p11[N_RATES][GRID_N];
    for (int i = 0; i < N_RATES; i++)
        for (int k = 0; k < GRID_N; k++) {
            double delta = grid_at(k);
            p6[i][k] = p11[i][k] = 0;
            for (int j = 0; j < GRID_N; j++) {
                if (des[j].delta < 0.75 * delta || des[j].delta > 1.6 * delta)
                    continue;
                double w6, w11;
                in_time(&des[j], i, delta, &g, episodes, &w6, &w11);
                p6[i][k] = fmax(p6[i][k], w6);
                p11[i][k] = fmax(p11[i][k], w11);
            }
        }

    static const double bands[][2] = {
        {0.010, 0.015}, {0.015, 0.020}, {0.020, 0.025}, {0.025, 0.030}};
    const int nb = (int)(sizeof bands / sizeof bands[0]);
    printf("| false alarms per rank-step | goal |");
    for (int b = 0; b < nb; b++)
        printf(" jitter %.1f-%.1f%% |", bands[b][0] * 100, bands[b][1] * 100);
    printf("\n|---|---|");
    for (int b = 0; b < nb; b++)
        printf("---|");
    printf("\n");
    for (int i = 0; i < N_RATES; i++) {
        printf("| %g | 5-10%% within 10 steps |", rates[i]);
        for (int b = 0; b < nb; b++)
            printf(" %.1f%% |", 100 * band_share(p11[i], 0.05, 0.10, bands[b][0], bands[b][1]));
        printf("\n| %g | >=10%% within 5 steps |", rates[i]);
        for (int b = 0; b < nb; b++)
            printf(" %.1f%% |", 100 * band_share(p6[i], 0.10, 0.50, bands[b][0], bands[b][1]));
        printf("\n");
    }
    printf("\n");
    for (int i = 0; i < N_RATES; i++)
        printf("5%% slowdown at 3%% jitter, within 10 steps, %g false alarms per rank-step: "
               "%.1f%%; 10%% at 3%%, within 5: %.1f%%\n",
               rates[i], 100 * power_at(p11[i], 0.05 / 0.03), 100 * power_at(p6[i], 0.10 / 0.03));
    printf(
        "\nin time by slowdown over jitter (standard deviations), within 10 / within 5 steps:\n");
    for (int k = 10; k < GRID_N; k += 4) {
        printf("  %.2f:", grid_at(k));
        for (int i = 0; i < N_RATES; i++)
            printf(" %.1f%% / %.1f%% at %g;", 100 * p11[i][k], 100 * p6[i][k], rates[i]);
        printf("\n");
    }
    printf("\nthresholds:");
    for (int i = 0; i < N_RATES; i++)
        printf(" %.2f-%.2f for %g;", des[0].h[i], des[GRID_N - 1].h[i], rates[i]);
    printf(" check, the average run length to a false alarm at h = %.0f, estimated against "
           "counted:",
           CHECK_H);
    for (int k = 14; k < GRID_N; k += 14)
        printf(" %.0f against %.0f for a design of %.2f;", des[k].arl_check,
               direct_arl(des[k].delta, &g, quick ? 200 : 2000), des[k].delta);
    printf("\n");
    return 0;
}
