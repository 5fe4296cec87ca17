/* rng.c: xoshiro256** seeded through splitmix64; all state lives in the caller's pe_rng. */
#include <math.h>

#include "pe_internal.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void pe_rng_seed(pe_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

static inline uint64_t step(uint64_t *s)
{
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t pe_rng_u64(pe_rng *r)
{
    return step(r->s);
}

void pe_rng_skip(pe_rng *r, uint64_t n)
{
    uint64_t s[4] = {r->s[0], r->s[1], r->s[2], r->s[3]};
    for (uint64_t i = 0; i < n; i++) step(s);
    for (int i = 0; i < 4; i++) r->s[i] = s[i];
}

double pe_rng_uniform(pe_rng *r)
{
    return (double)(pe_rng_u64(r) >> 11) * 0x1.0p-53;
}

double pe_rng_normal(pe_rng *r)
{
    /* 1 - u lies in (0, 1], so the logarithm is finite. */
    double u1 = 1.0 - pe_rng_uniform(r);
    double u2 = pe_rng_uniform(r);
    return sqrt(-2.0 * log(u1)) * cos(2.0 * PE_PI * u2);
}
