/*
 * rng.h - the straggler benches' random numbers: splitmix64 seeding xoshiro256** (Blackman &
 * Vigna 2018), uniforms, Gaussians and the unit-variance Student t4 of the generator's jitter.
 * Header-only (static functions) so that bench_straggler and straggler_bound draw the same way.
 */
#ifndef HOUSTON_BENCH_STRAGGLER_RNG_H
#define HOUSTON_BENCH_STRAGGLER_RNG_H

#include <math.h>
#include <stdint.h>

struct rng {
    uint64_t s[4];
};

static inline uint64_t splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline void rng_seed(struct rng *g, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        g->s[i] = splitmix(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng_next(struct rng *g)
{
    uint64_t *s = g->s;
    uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return r;
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
