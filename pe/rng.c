/* rng.c: xoshiro256** seeded through splitmix64; all state lives in the caller's pe_rng. */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

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

/* ---- jumping ahead -------------------------------------------------------------------------
 * xoshiro256's state moves by a linear map T over GF(2)^256 whose characteristic polynomial P
 * (degree 256, primitive: the period is 2^256 - 1) is the minimal polynomial of any one state
 * bit's sequence. So T^n = (x^n mod P)(T): n steps cost one power of x modulo P (about 2 log2 n
 * products of 256-bit polynomials) and 256 steps, XOR-ing in T^k s for each coefficient k set,
 * exactly as the published jump() with its JUMP constants (x^(2^128) mod P) does. Polynomials
 * below 256 bits are four words, bit k of word k / 64 the coefficient of x^k. */
typedef struct poly256 {
    uint64_t w[4];
} poly256;

/* P's low 256 coefficients (x^256 is implicit), found once by Berlekamp-Massey over 512 bits of
 * the low bit of s[0] from a fixed nonzero state: the shortest recurrence of that sequence. */
static poly256 char_poly(void)
{
    enum { N = 512 };
    unsigned char bit[N], c[N + 1] = {0}, b[N + 1] = {0}, t[N + 1];
    pe_rng r;
    pe_rng_seed(&r, 1);
    for (int i = 0; i < N; i++) {
        bit[i] = (unsigned char)(r.s[0] & 1);
        step(r.s);
    }
    c[0] = b[0] = 1;
    int len = 0, m = -1;
    for (int n = 0; n < N; n++) {
        int disc = bit[n];
        for (int i = 1; i <= len; i++) disc ^= c[i] & bit[n - i];
        if (!disc) continue;
        memcpy(t, c, sizeof t);
        for (int i = 0; i + n - m <= N; i++) c[i + n - m] ^= b[i];
        if (2 * len <= n) {
            len = n + 1 - len;
            m = n;
            memcpy(b, t, sizeof b);
        }
    }
    /* the connection polynomial C (s_n = sum c_i s_{n-i}) reversed: P(x) = x^len C(1/x) */
    poly256 p = {{0}};
    for (int k = 0; k < 256 && len == 256; k++)
        if (c[256 - k]) p.w[k / 64] |= (uint64_t)1 << (k % 64);
    return p;
}

/* a * x mod P */
static void poly_mulx(poly256 *a, const poly256 *p)
{
    uint64_t top = a->w[3] >> 63;
    for (int i = 3; i > 0; i--) a->w[i] = (a->w[i] << 1) | (a->w[i - 1] >> 63);
    a->w[0] <<= 1;
    if (top)
        for (int i = 0; i < 4; i++) a->w[i] ^= p->w[i];
}

/* a * b mod P, Horner over b's coefficients from the top */
static poly256 poly_mul(const poly256 *a, const poly256 *b, const poly256 *p)
{
    poly256 r = {{0}};
    for (int k = 255; k >= 0; k--) {
        poly_mulx(&r, p);
        if ((b->w[k / 64] >> (k % 64)) & 1)
            for (int i = 0; i < 4; i++) r.w[i] ^= a->w[i];
    }
    return r;
}

void pe_rng_jump(pe_rng *r, uint64_t n)
{
    if (n < 1024) { /* stepping is cheaper than the polynomials */
        pe_rng_skip(r, n);
        return;
    }
    /* P once per process, in atomics: threads racing here compute and store the same words */
    static _Atomic uint64_t pw[4];
    static atomic_int ready;
    poly256 p;
    if (atomic_load_explicit(&ready, memory_order_acquire)) {
        for (int i = 0; i < 4; i++) p.w[i] = atomic_load_explicit(&pw[i], memory_order_relaxed);
    } else {
        p = char_poly();
        for (int i = 0; i < 4; i++) atomic_store_explicit(&pw[i], p.w[i], memory_order_relaxed);
        atomic_store_explicit(&ready, 1, memory_order_release);
    }
    poly256 q = {{1, 0, 0, 0}}; /* x^0 */
    int top = 63;
    while (!((n >> top) & 1)) top--;
    for (int k = top; k >= 0; k--) {
        q = poly_mul(&q, &q, &p);
        if ((n >> k) & 1) poly_mulx(&q, &p);
    }
    uint64_t acc[4] = {0}, s[4] = {r->s[0], r->s[1], r->s[2], r->s[3]};
    for (int k = 0; k < 256; k++) {
        if ((q.w[k / 64] >> (k % 64)) & 1)
            for (int i = 0; i < 4; i++) acc[i] ^= s[i];
        step(s);
    }
    for (int i = 0; i < 4; i++) r->s[i] = acc[i];
}
