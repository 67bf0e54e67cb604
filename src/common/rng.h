/*
 * rng.h - the project's pseudo-random core, for the simulator, the fake NVML and the benches:
 * splitmix64 (a seed mixer, also a hash of one 64-bit value) and xoshiro256** (Blackman &
 * Vigna, "Scrambled linear pseudorandom number generators", ACM TOMS 47(4), 2021). Header-only
 * static functions; callers keep their own state and build their own distributions on it.
 */
#ifndef HN_RNG_H
#define HN_RNG_H

#include <stdint.h>

/* Advances *x by the golden-ratio increment and returns it mixed. */
static inline uint64_t hn_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Fills a xoshiro256** state from one seed through splitmix64, as its authors advise. */
static inline void hn_xoshiro_seed(uint64_t s[4], uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        s[i] = hn_splitmix64(&seed);
}

static inline uint64_t hn_rotl64(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

/* The next 64 bits of xoshiro256** state s. */
static inline uint64_t hn_xoshiro_next(uint64_t s[4])
{
    uint64_t r = hn_rotl64(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = hn_rotl64(s[3], 45);
    return r;
}

#endif
