/*
 * rng.h - the straggler benches' random numbers: uniforms, Gaussians and the unit-variance
 * Student t4 of the generator's jitter, on the project's xoshiro256** (common/rng.h).
 * Header-only (static functions) so that bench_straggler and straggler_bound draw the same way.
 */
#ifndef HOUSTON_BENCH_STRAGGLER_RNG_H
#define HOUSTON_BENCH_STRAGGLER_RNG_H

#include "common/rng.h"

#include <math.h>
#include <stdint.h>

struct rng {
    uint64_t s[4];
};

static inline void rng_seed(struct rng *g, uint64_t seed)
{
    hn_xoshiro_seed(g->s, seed);
}

static inline uint64_t rng_next(struct rng *g)
{
    return hn_xoshiro_next(g->s);
}

/* Uniform in (0, 1). */
static inline double unif(struct rng *g)
{
    return ((double)(rng_next(g) >> 11) + 0.5) / 9007199254740992.0;
}

static inline double unif_in(struct rng *g, double lo, double hi)
{
    return lo + (hi - lo) * unif(g);
}

static inline unsigned unif_int(struct rng *g, unsigned lo, unsigned hi) /* lo..hi inclusive */
{
    return lo + (unsigned)(rng_next(g) % ((uint64_t)hi - lo + 1));
}

static inline double gauss(struct rng *g)
{
    return sqrt(-2 * log(unif(g))) * cos(6.283185307179586 * unif(g));
}

/* Student t with 4 degrees of freedom scaled to unit variance (t4 has variance 2): the
 * chi-square with 4 degrees of freedom is -2 ln(U1 U2). */
static inline double t4(struct rng *g)
{
    double chi = -2 * log(unif(g) * unif(g));
    return gauss(g) / sqrt(chi / 4) / sqrt(2.0);
}

#endif
