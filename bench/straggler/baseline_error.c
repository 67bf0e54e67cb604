/*
 * baseline_error.c - how well a rank's normal can be known while it drifts: the error of the
 * straggler detector's baseline (Brown's double exponential smoothing of winsorised reports,
 * src/jobs/straggler.c adapt) under bench_straggler's model of one rank, in noise units.
 *
 * usage: baseline_error [--seed N]
 *
 * Each rank's step time is 1 + A sin(2 pi t / P + phase) (A uniform in 0-2%, P in 500-3000
 * steps: bench_straggler's drift) times 1 + sigma * t4 (its jitter, unit-variance Student t with
 * 4 degrees of freedom). No spikes, pauses or slowdowns: this is the error the CUSUM's
 * threshold has to cover on an ordinary day. Per jitter band, the root mean square over reports
 * 500-6000 of (baseline - true normal) / (true normal * sigma) for:
 *   - weight 1/64 for every rank (baseline_alpha, alpha_noise 1: houston before da5b086);
 *   - 1/64 * 0.02 / sigma above 2% (alpha_noise 0.02: houston now);
 *   - the best fixed weight for each rank, chosen knowing its drift (what smoothing set by each
 *     rank's own drift could reach at most, with Brown's smoothing);
 *   - 1/64 and 1/256 without drift (what the drift costs).
 * The baseline starts at the true normal (warm-up done well), and the weight is the one
 * adapt uses once a rank has 1 / alpha reports.
 */
#include "rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS 6000
#define SKIP  500
#define RANKS 400 /* per band */
#define NGRID 25  /* weights 1/16 .. 1/1024, four per octave */

struct brown {
    double s1, s2, base;
};

/* One report x of a rank with noise sigma and weight a, as adapt does it: the excess over the
 * baseline winsorised at two noise units, then Brown's two smoothings. */
static void brown_step(struct brown *b, double x, double sigma, double a)
{
    double w = fmax(-2 * sigma, fmin(2 * sigma, x / b->base - 1));
    double y = b->base * (1 + w);
    b->s1 += a * (y - b->s1);
    b->s2 += a * (b->s1 - b->s2);
    b->base = 2 * b->s1 - b->s2 + a / (1 - a) * (b->s1 - b->s2);
}

/* Sum over reports SKIP.. of the squared error in noise units, for weight a. */
static double run(const double *x, const double *truth, double sigma, double a)
{
    struct brown b = {truth[0], truth[0], truth[0]};
    double e = 0;
    for (int t = 0; t < STEPS; t++) {
        if (t >= SKIP) {
            double d = (b.base - truth[t]) / truth[t] / sigma;
            e += d * d;
        }
        brown_step(&b, x[t], sigma, a);
    }
    return e;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 10);
        } else {
            fprintf(stderr, "usage: baseline_error [--seed N]\n");
            return 2;
        }
    }
    struct rng g;
    rng_seed(&g, seed);
    static double x[STEPS], truth[STEPS], flat[STEPS], xflat[STEPS];
    double grid[NGRID];
    for (int k = 0; k < NGRID; k++)
        grid[k] = 1 / (16 * pow(2, k / 4.0));
    printf("Baseline error in noise units (RMS of (baseline - normal) / (normal * sigma)), %d "
           "ranks per band, reports %d-%d, seed %llu.\n\n",
           RANKS, SKIP, STEPS, (unsigned long long)seed);
    printf("| jitter | 1/64 (houston before) | alpha_noise 0.02 (houston now) | best weight per "
           "rank, knowing its drift | its median weight | no drift, 1/64 | no drift, 1/256 |\n");
    printf("|---|---|---|---|---|---|---|\n");
    for (int band = 0; band < 4; band++) {
        double lo = 0.01 + 0.005 * band, hi = lo + 0.005;
        double e64 = 0, enoise = 0, ebest = 0, eflat64 = 0, eflat256 = 0;
        double best_a[RANKS];
        for (int r = 0; r < RANKS; r++) {
            double amp = unif_in(&g, 0, 0.02), period = unif_in(&g, 500, 3000);
            double phase = unif_in(&g, 0, 6.283185307179586), sigma = unif_in(&g, lo, hi);
            for (int t = 0; t < STEPS; t++) {
                double n = 1 + sigma * t4(&g);
                truth[t] = 1 + amp * sin(6.283185307179586 * t / period + phase);
                x[t] = truth[t] * n;
                flat[t] = 1;
                xflat[t] = n;
            }
            e64 += run(x, truth, sigma, 1.0 / 64);
            enoise += run(x, truth, sigma, 1.0 / 64 * fmin(1, 0.02 / sigma));
            double best = INFINITY;
            for (int k = 0; k < NGRID; k++) {
                double e = run(x, truth, sigma, grid[k]);
                if (e < best) {
                    best = e;
                    best_a[r] = grid[k];
                }
            }
            ebest += best;
            eflat64 += run(xflat, flat, sigma, 1.0 / 64);
            eflat256 += run(xflat, flat, sigma, 1.0 / 256);
        }
        qsort(best_a, RANKS, sizeof(best_a[0]), cmp_double); /* for their median */
        double n = (double)RANKS * (STEPS - SKIP);
        printf("| %.1f-%.1f%% | %.3f | %.3f | %.3f | 1/%.0f | %.3f | %.3f |\n", 100 * lo, 100 * hi,
               sqrt(e64 / n), sqrt(enoise / n), sqrt(ebest / n), 1 / best_a[RANKS / 2],
               sqrt(eflat64 / n), sqrt(eflat256 / n));
    }
    return 0;
}
