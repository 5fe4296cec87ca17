/* nn.c: full-sequence forward and backward of the transformer (llm.c's shape: plain loops over
 * flat arrays carved from one allocation). Compiled as float (nn_*) and, for the gradient
 * check, as double (nn64_*, -DNN_REAL_DOUBLE).
 *
 * Determinism: every output element is computed by one thread in a fixed order, and sums over
 * the batch (bias, LayerNorm and embedding gradients) run serially, so results do not depend
 * on the number of threads.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"
#include "pool.h"

#ifdef NN_REAL_DOUBLE
typedef double real;
#define NN(name)      nn64_##name
#define REXP          exp
#define RMAX(a, b)    ((a) > (b) ? (a) : (b))
#define RSEL(c, a, b) ((c) ? (a) : (b))
#else
typedef float real;
#define NN(name)      nn_##name
#define REXP          fexp
#define RMAX(a, b)    fmax_sel(a, b)
#define RSEL(c, a, b) fsel(c, a, b)
#endif

/* The loops below are written so that gcc vectorises them (MODEL_CLONES, nn.h); the double
 * build for the gradient check needs no speed. */
#ifndef NN_REAL_DOUBLE
#define NN_CLONES MODEL_CLONES
#else
#define NN_CLONES
#endif

/* a > b ? a : b and a < b ? a : b (b when either is NaN), through the bits. gcc keeps
 * a conditional between floats as a branch under -ftrapping-math (its default: a compare may
 * raise a flag), and a branch stops the vectoriser except with AVX-512's masked compares: every
 * loop over fexp (GELU, softmax, the loss) and over the running maxima stayed scalar in the
 * AVX2 and baseline clones (GELU's forward alone took 17% of a training step on an AVX2
 * machine). A compare whose result is used as a number is no branch. Same results, bit for
 * bit, NaN included. */
static inline float fmax_sel(float a, float b)
{
    union {
        float f;
        int32_t i;
    } ua = {a}, ub = {b};
    int32_t m = -(int32_t)(a > b);
    ua.i = (ua.i & m) | (ub.i & ~m);
    return ua.f;
}

/* c ? a : b with a and b both computed (the masked lanes of the causal loops): a conditional
 * computation is not speculated under -ftrapping-math, so it would be a branch too. */
static inline float fsel(int c, float a, float b)
{
    union {
        float f;
        int32_t i;
    } ua = {a}, ub = {b};
    int32_t m = -(int32_t)(c != 0);
    ua.i = (ua.i & m) | (ub.i & ~m);
    return ua.f;
}

static inline float fmin_sel(float a, float b)
{
    union {
        float f;
        int32_t i;
    } ua = {a}, ub = {b};
    int32_t m = -(int32_t)(a < b);
    ua.i = (ua.i & m) | (ub.i & ~m);
    return ua.f;
}

/* e^x in float, Cephes' expf: x = n ln 2 + r with |r| <= ln 2 / 2, a degree-6 polynomial for
 * e^r, then 2^n put into the exponent bits. Within 2 ulp of expf (tests/pe/model/test_kernels),
 * and written without calls or branches so that loops over it vectorise. Arguments are
 * clamped to [-87, 88]: e^-87 = 1.6e-38 stands in for smaller results, which the softmax and
 * tanh below never need more exactly. */
static inline float fexp(float x)
{
    /* x < -87 ? -87 : x, then x > 88 ? 88 : x (a NaN stays NaN) */
    x = fmax_sel(-87.0f, x);
    x = fmin_sel(88.0f, x);
    /* round x log2(e) to the nearest integer by adding and subtracting 1.5 * 2^23 */
    float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = x - n * 0.693359375f + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    float y = p * r * r + r + 1.0f;
    union {
        float f;
        int32_t i;
    } e;
    e.i = ((int32_t)n + 127) * (1 << 23);
    return y * e.f;
}

/* tanh through one exponential: exact to a few ulps and saturating correctly at both ends. */
static real rtanh(real u)
{
    return 1 - 2 / (REXP(2 * u) + 1);
}

/* Inlined into its caller's clone whatever its size: a helper gcc leaves out of line is compiled
 * for the baseline CPU only (SSE2), not in the clone's instruction set. */
#ifdef __GNUC__
#define NN_INLINE static inline __attribute__((always_inline))
#else
#define NN_INLINE static inline
#endif

/* Enough work to be worth a parallel loop. */
#define PAR(work) ((work) > 1e6)

/* Threads for a loop of this much work, and items per chunk for about 2^17 operations. */
static int par_nt(int nt, double work)
{
    return PAR(work) ? nt : 1;
}

static size_t grain_for(double work_per_item)
{
    double g = 131072.0 / (work_per_item > 1 ? work_per_item : 1);
    return g < 1 ? 1 : (size_t)g;
}

/* ---- activations ------------------------------------------------------------------------- */

typedef struct acts {
    real *x0;                        /* (BT, C) input embeddings */
    real *ln1, *ln1_mean, *ln1_rstd; /* (L, BT, C) (L, BT) (L, BT) */
    real *qkv;                       /* (L, BT, 3C) q and k rotated for rope */
    real *att;                       /* (L, B, H, T, T) softmax weights, 0 above the diagonal */
    real *atty;                      /* (L, BT, C) */
    real *res2;                      /* (L, BT, C) residual after attention */
    real *ln2, *ln2_mean, *ln2_rstd;
    real *fch, *fchg;                /* (L, BT, F) before and after GELU */
    real *fcht;                      /* (L, BT, F) GELU's tanh, kept for backward */
    real *res3;                      /* (L, BT, C) residual after the MLP */
    real *lnf, *lnf_mean, *lnf_rstd; /* (BT, C) (BT) (BT) */
    real *logits;                    /* (BT, V), becomes dlogits in backward */
    real *losses;                    /* (BT) */
    real *probs, *inv_sum;           /* (BT, V) e^(logit - max), (BT) 1 / their sum */
    /* backward scratch */
    real *dres;         /* (BT, C) gradient of the residual stream */
    real *dln;          /* (BT, C) */
    real *dqkv;         /* (BT, 3C) */
    real *datty;        /* (BT, C) */
    real *dfch, *dfchg; /* (BT, F) */
    real *dpre;         /* (B, H, T, T) gradient of the scores (T5 reads it; else scratch) */
    real *tmp;          /* (BT, max(C, F)) forward outputs before the residual add */
    real *tr;           /* transpose scratch */
    real *kvt;          /* (B, H, hd, T) scratch: keys or values of a head, transposed */
} acts;

/* The transpose scratch holds one weight matrix: C x (3C, C, F or V). */
static size_t tr_size(const nn_dims *d)
{
    size_t w = (size_t)d->V;
    if ((size_t)d->F > w) w = (size_t)d->F;
    if ((size_t)3 * d->C > w) w = (size_t)3 * d->C;
    return w * (size_t)d->C;
}

/* Carve mem into a (mem NULL: just count). Returns the number of reals. */
static size_t carve(acts *a, real *mem, const nn_dims *d, int B, int T)
{
    size_t BT = (size_t)B * T, L = (size_t)d->L, C = (size_t)d->C, F = (size_t)d->F;
    size_t att = (size_t)B * d->H * T * T, off = 0, FC = F > C ? F : C;
#define TAKE(field, n)                                                                             \
    do {                                                                                           \
        if (a) a->field = mem ? mem + off : NULL;                                                  \
        off += (n);                                                                                \
    } while (0)
    TAKE(x0, BT * C);
    TAKE(ln1, L * BT * C);
    TAKE(ln1_mean, L * BT);
    TAKE(ln1_rstd, L * BT);
    TAKE(qkv, L * BT * 3 * C);
    TAKE(att, L * att);
    TAKE(atty, L * BT * C);
    TAKE(res2, L * BT * C);
    TAKE(ln2, L * BT * C);
    TAKE(ln2_mean, L * BT);
    TAKE(ln2_rstd, L * BT);
    TAKE(fch, L * BT * F);
    TAKE(fchg, L * BT * F);
    TAKE(fcht, L * BT * F);
    TAKE(res3, L * BT * C);
    TAKE(lnf, BT * C);
    TAKE(lnf_mean, BT);
    TAKE(lnf_rstd, BT);
    TAKE(logits, BT * (size_t)d->V);
    TAKE(losses, BT);
    TAKE(probs, BT * (size_t)d->V);
    TAKE(inv_sum, BT);
    TAKE(dres, BT * C);
    TAKE(dln, BT * C);
    TAKE(dqkv, BT * 3 * C);
    TAKE(datty, BT * C);
    TAKE(dfch, BT * F);
    TAKE(dfchg, BT * F);
    TAKE(dpre, att);
    TAKE(tmp, BT * FC);
    TAKE(tr, tr_size(d));
    TAKE(kvt, BT * C);
#undef TAKE
    return off;
}

int NN(acts_init)(nn_acts *a, const nn_dims *d, int B, int T)
{
    memset(a, 0, sizeof *a);
    if (B < 1 || T < 1) return PE_EINVAL;
    /* Every term is small (checked by model_config_fix); the product is checked here. */
    double n = (double)B * T *
               ((double)d->L * (12.0 * d->C + 3.0 * d->F + d->H * (double)T) + d->V * 3.0 +
                d->F * 4.0 + 3.0 * d->C * 8.0);
    if (n * sizeof(real) > 8e9) return PE_ERANGE;
    size_t count = carve(NULL, NULL, d, B, T);
    a->mem = calloc(count, sizeof(real));
    if (!a->mem) return PE_ENOMEM;
    a->bytes = count * sizeof(real);
    a->B = B;
    a->T = T;
    return PE_OK;
}

void NN(acts_free)(nn_acts *a)
{
    free(a->mem);
    memset(a, 0, sizeof *a);
}

static acts view(const nn_acts *na, const nn_dims *d)
{
    acts a;
    carve(&a, na->mem, d, na->B, na->T);
    return a;
}

const real *NN(losses)(const nn_acts *na, const nn_dims *d)
{
    return view(na, d).losses;
}

const real *NN(att)(const nn_acts *na, const nn_dims *d, int layer)
{
    return view(na, d).att + (size_t)layer * na->B * d->H * na->T * na->T;
}

const real *NN(logits)(const nn_acts *na, const nn_dims *d)
{
    return view(na, d).logits;
}

/* ---- kernels ------------------------------------------------------------------------------ */

/* ---- matrix products ----------------------------------------------------------------------
 *
 * One kernel shape for every product of the network: out (n, m) = A (n, k) . b (k, m) (+ bias,
 * or added to out), where A is read through strides, A[r][p] = a[r * ars + p * acs]. With
 * (ars, acs) = (k, 1) A is a row-major activation; with (1, n_rows_of_b) it is the transpose
 * of one, which is how the weight gradients inp^T . dout read inp without copying it.
 *
 * Every output element starts from its initial value and adds p = 0..k-1 in order, one thread
 * per block of rows, so the result does not depend on the thread count. The kernels differ by
 * CPU: a plain C one (any compiler, any CPU: the reference the tests compare with), and on
 * x86-64 AVX2+FMA (6 x 16 tiles) and AVX-512 (8 x 32 tiles), chosen once at run time. The
 * fused multiply-adds round once where the plain kernel rounds twice, so the kernels agree to
 * a few ulps per term, not bit for bit; each machine always uses the same one. */

typedef struct mm_args {
    real *out;
    const real *a, *b, *bias;
    size_t ars, acs; /* A[r][p] = a[r * ars + p * acs] */
    size_t bs, os;   /* row strides of b and out (m for packed rows) */
    int n, k, m, acc, mr;
    int jb, je, kb, ke; /* a kernel call: columns jb..je-1, terms p = kb..ke-1 */
} mm_args;

/* Tile width, measured on baseline x86-64 (SSE2): 4 x 16 beats 4 x 8 by 2.5x even though some
 * sums spill, because each broadcast of a feeds four vector multiplies. */
#define TJ 16

/* Rows r0..r0+rn-1 (rn <= 4) of the product, plain C. */
static void mm_rows_plain(const mm_args *g, int r0, int rn)
{
    real *restrict out = g->out;
    const real *restrict a = g->a, *restrict b = g->b;
    size_t ars = g->ars, acs = g->acs, bs = g->bs, os = g->os;
    int kb = g->kb, ke = g->ke, jb = g->jb, je = g->je;
    real *o = out + (size_t)r0 * os;
    if (!g->acc)
        for (int r = 0; r < rn; r++)
            for (int j = jb; j < je; j++) o[(size_t)r * os + j] = g->bias ? g->bias[j] : 0;
    int j0 = jb;
    if (rn == 4)
        for (; j0 + TJ <= je; j0 += TJ) {
            /* the sums stay in registers while p runs over k */
            real s[4][TJ];
            for (int r = 0; r < 4; r++)
                for (int j = 0; j < TJ; j++) s[r][j] = o[(size_t)r * os + j0 + j];
            const real *a0 = a + (size_t)r0 * ars;
            for (int p = kb; p < ke; p++) {
                const real *br = b + (size_t)p * bs + j0, *ap = a0 + (size_t)p * acs;
                real x0 = ap[0], x1 = ap[ars], x2 = ap[2 * ars], x3 = ap[3 * ars];
                for (int j = 0; j < TJ; j++) {
                    real w = br[j];
                    s[0][j] += x0 * w;
                    s[1][j] += x1 * w;
                    s[2][j] += x2 * w;
                    s[3][j] += x3 * w;
                }
            }
            for (int r = 0; r < 4; r++)
                for (int j = 0; j < TJ; j++) o[(size_t)r * os + j0 + j] = s[r][j];
        }
    for (int r = 0; r < rn; r++) {
        real *restrict orow = o + (size_t)r * os;
        const real *ar = a + (size_t)(r0 + r) * ars;
        for (int p = kb; p < ke; p++) {
            const real *restrict br = b + (size_t)p * bs;
            real x = ar[(size_t)p * acs];
            for (int j = j0; j < je; j++) orow[j] += x * br[j];
        }
    }
}

#if !defined(NN_REAL_DOUBLE) && defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define NN_X86 1

/* The x86 kernels keep every sum of a tile in its own named register variable: with an array,
 * gcc 12 stores the whole tile to the stack on every step of p. */
#define X8(f) f(0) f(1) f(2) f(3) f(4) f(5) f(6) f(7)
#define X6(f) f(0) f(1) f(2) f(3) f(4) f(5)

/* Rows r0..r0+rn-1 (rn <= 8), AVX-512: 8 x 32 tiles in 16 registers; a tile's missing rows
 * repeat row r0 and are not stored, its missing columns are masked. */
__attribute__((target("avx512f"))) static void mm_rows_avx512(const mm_args *g, int r0, int rn)
{
    const float *a = g->a, *b = g->b;
    size_t ars = g->ars, acs = g->acs, bs = g->bs, os = g->os;
    int je = g->je;
    size_t kb = (size_t)g->kb, ke = (size_t)g->ke;
#define ROW(r) const float *a##r = a + (size_t)(r0 + (r < rn ? r : 0)) * ars;
    X8(ROW)
#undef ROW
    for (int j0 = g->jb; j0 < je; j0 += 32) {
        int w = je - j0 < 32 ? je - j0 : 32;
        __mmask16 m0 = (__mmask16)(w >= 16 ? 0xffff : (1u << w) - 1);
        __mmask16 m1 = (__mmask16)(w >= 32 ? 0xffff : w > 16 ? (1u << (w - 16)) - 1 : 0);
        __m512 i0 = _mm512_setzero_ps(), i1 = i0;
        if (g->bias) {
            i0 = _mm512_maskz_loadu_ps(m0, g->bias + j0);
            i1 = _mm512_maskz_loadu_ps(m1, g->bias + j0 + 16);
        }
#define INIT(r)                                                                                    \
    __m512 c##r##0 = i0, c##r##1 = i1;                                                             \
    if (g->acc) {                                                                                  \
        const float *o = g->out + (size_t)(r0 + (r < rn ? r : 0)) * os + j0;                       \
        c##r##0 = _mm512_maskz_loadu_ps(m0, o);                                                    \
        c##r##1 = _mm512_maskz_loadu_ps(m1, o + 16);                                               \
    }
        X8(INIT)
#undef INIT
        const float *bp = b + kb * bs + j0;
        /* whole vectors of columns through plain loads and stores, as in the AVX2 kernel: the
         * masked ones cost more on AMD's cores (a masked store most, even with an empty mask) */
#define FMA(r)                                                                                     \
    {                                                                                              \
        __m512 x = _mm512_set1_ps(a##r[ap]);                                                       \
        c##r##0 = _mm512_fmadd_ps(x, b0, c##r##0);                                                 \
        c##r##1 = _mm512_fmadd_ps(x, b1, c##r##1);                                                 \
    }
        if (w == 32) {
            for (size_t p = kb, ap = kb * acs; p < ke; p++, bp += bs, ap += acs) {
                __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_loadu_ps(bp + 16);
                X8(FMA)
            }
        } else if (w > 16) {
            for (size_t p = kb, ap = kb * acs; p < ke; p++, bp += bs, ap += acs) {
                __m512 b0 = _mm512_loadu_ps(bp), b1 = _mm512_maskz_loadu_ps(m1, bp + 16);
                X8(FMA)
            }
#undef FMA
        } else if (w == 16) { /* one vector of columns (a head of 16): half the work */
            for (size_t p = kb, ap = kb * acs; p < ke; p++, bp += bs, ap += acs) {
                __m512 b0 = _mm512_loadu_ps(bp);
#define FMA(r) c##r##0 = _mm512_fmadd_ps(_mm512_set1_ps(a##r[ap]), b0, c##r##0);
                X8(FMA)
            }
        } else {
            for (size_t p = kb, ap = kb * acs; p < ke; p++, bp += bs, ap += acs) {
                __m512 b0 = _mm512_maskz_loadu_ps(m0, bp);
                X8(FMA)
#undef FMA
            }
        }
#define STORE(r)                                                                                   \
    if (r < rn) {                                                                                  \
        float *o = g->out + (size_t)(r0 + r) * os + j0;                                            \
        if (w >= 16)                                                                               \
            _mm512_storeu_ps(o, c##r##0);                                                          \
        else                                                                                       \
            _mm512_mask_storeu_ps(o, m0, c##r##0);                                                 \
        if (w == 32)                                                                               \
            _mm512_storeu_ps(o + 16, c##r##1);                                                     \
        else if (w > 16)                                                                           \
            _mm512_mask_storeu_ps(o + 16, m1, c##r##1);                                            \
    }
        X8(STORE)
#undef STORE
    }
}

/* Rows r0..r0+rn-1 (rn <= 6), AVX2 with FMA: 6 x 16 tiles in 12 registers. */
__attribute__((target("avx2,fma"))) static void mm_rows_avx2(const mm_args *g, int r0, int rn)
{
    const float *a = g->a, *b = g->b;
    size_t ars = g->ars, acs = g->acs, bs = g->bs, os = g->os;
    int je = g->je;
    size_t kb = (size_t)g->kb, ke = (size_t)g->ke;
#define ROW(r) const float *a##r = a + (size_t)(r0 + (r < rn ? r : 0)) * ars;
    X6(ROW)
#undef ROW
    __m256i idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    for (int j0 = g->jb; j0 < je; j0 += 16) {
        int w = je - j0 < 16 ? je - j0 : 16;
        __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(w), idx);
        __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(w - 8), idx);
        __m256 i0 = _mm256_setzero_ps(), i1 = i0;
        if (g->bias) {
            i0 = _mm256_maskload_ps(g->bias + j0, m0);
            i1 = _mm256_maskload_ps(g->bias + j0 + 8, m1);
        }
#define INIT(r)                                                                                    \
    __m256 c##r##0 = i0, c##r##1 = i1;                                                             \
    if (g->acc) {                                                                                  \
        const float *o = g->out + (size_t)(r0 + (r < rn ? r : 0)) * os + j0;                       \
        c##r##0 = _mm256_maskload_ps(o, m0);                                                       \
        c##r##1 = _mm256_maskload_ps(o + 8, m1);                                                   \
    }
        X6(INIT)
#undef INIT
        const float *bp = b + kb * bs + j0;
#define FMA(r)                                                                                     \
    {                                                                                              \
        __m256 x = _mm256_broadcast_ss(a##r + ap);                                                 \
        c##r##0 = _mm256_fmadd_ps(x, b0, c##r##0);                                                 \
        c##r##1 = _mm256_fmadd_ps(x, b1, c##r##1);                                                 \
    }
        if (w == 16) { /* a whole tile: plain loads (a masked load costs more on AMD's cores) */
            for (size_t p = kb, ap = kb * acs; p < ke; p++, bp += bs, ap += acs) {
                __m256 b0 = _mm256_loadu_ps(bp), b1 = _mm256_loadu_ps(bp + 8);
                X6(FMA)
            }
        } else if (w > 8) {
            for (size_t p = kb, ap = kb * acs; p < ke; p++, bp += bs, ap += acs) {
                __m256 b0 = _mm256_maskload_ps(bp, m0), b1 = _mm256_maskload_ps(bp + 8, m1);
                X6(FMA)
            }
#undef FMA
        } else {
            for (size_t p = kb, ap = kb * acs; p < ke; p++, bp += bs, ap += acs) {
                __m256 b0 = _mm256_maskload_ps(bp, m0);
#define FMA(r) c##r##0 = _mm256_fmadd_ps(_mm256_broadcast_ss(a##r + ap), b0, c##r##0);
                X6(FMA)
#undef FMA
            }
        }
#define STORE(r)                                                                                   \
    if (r < rn) {                                                                                  \
        float *o = g->out + (size_t)(r0 + r) * os + j0;                                            \
        if (w == 16) {                                                                             \
            _mm256_storeu_ps(o, c##r##0);                                                          \
            _mm256_storeu_ps(o + 8, c##r##1);                                                      \
        } else {                                                                                   \
            _mm256_maskstore_ps(o, m0, c##r##0);                                                   \
            _mm256_maskstore_ps(o + 8, m1, c##r##1);                                               \
        }                                                                                          \
    }
        X6(STORE)
#undef STORE
    }
}
#endif

typedef void (*mm_rows_fn)(const mm_args *g, int r0, int rn);

/* The matrix kernels, fastest last; rows: the rows of one tile. */
static const struct mm_kernel {
    const char *name;
    mm_rows_fn fn;
    int rows;
} mm_kernels[] = {
    {"plain", mm_rows_plain, 4},
#ifdef NN_X86
    {"avx2", mm_rows_avx2, 6},
    {"avx512", mm_rows_avx512, 8},
#endif
};
#define MM_KERNELS ((int)(sizeof mm_kernels / sizeof mm_kernels[0]))

static int mm_kernel_ok(int v)
{
#ifdef NN_X86
    const char *name = mm_kernels[v].name;
    if (!strcmp(name, "avx2"))
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (!strcmp(name, "avx512")) return __builtin_cpu_supports("avx512f");
#endif
    return v == 0;
}

/* The fastest kernel this CPU runs, found once (PELAB_KERNEL=plain|avx2|avx512 picks one). */
static int mm_best(void)
{
    /* atomic: the race's workers may ask first at the same moment (each finds the same answer) */
    static int best = -1;
    int b = __atomic_load_n(&best, __ATOMIC_RELAXED);
    if (b < 0) {
        b = 0;
        const char *want = getenv("PELAB_KERNEL");
        for (int v = 0; v < MM_KERNELS; v++)
            if (mm_kernel_ok(v) && (!want || !strcmp(want, mm_kernels[v].name))) b = v;
        __atomic_store_n(&best, b, __ATOMIC_RELAXED);
    }
    return b;
}

/* Which part of a product is computed. In causal attention half of each T x T matrix is zero
 * or unused, and a row block r0..r0+rows-1 needs only: */
enum {
    MM_FULL,
    MM_COLS_TO_ROW,   /* output columns j <= its last row (scores above the diagonal: unused) */
    MM_TERMS_TO_ROW,  /* terms p <= its last row (A is zero above the diagonal: P.V) */
    MM_TERMS_FROM_ROW /* terms p >= its first row (A is zero below the diagonal: P^T.G) */
};

/* Rows r0..r0+rn-1 through kernel kn, the columns and terms the part needs. Skipped terms are
 * exact zeros, so the sums are the same as those of the full product. */
static void mm_block(const struct mm_kernel *kn, mm_args *g, int part, int r0, int rn)
{
    g->jb = 0, g->je = g->m, g->kb = 0, g->ke = g->k;
    if (part == MM_COLS_TO_ROW) g->je = r0 + rn < g->m ? r0 + rn : g->m;
    if (part == MM_TERMS_TO_ROW) g->ke = r0 + rn < g->k ? r0 + rn : g->k;
    if (part == MM_TERMS_FROM_ROW) g->kb = r0 < g->k ? r0 : g->k;
    kn->fn(g, r0, rn);
}

/* Terms per pass over the row blocks: a pass reads MM_TERMS rows of b (32 KiB when they are 64
 * wide) for every block of rows, so they stay in L1 instead of streaming all of b from L2 or
 * further once per block; the weight gradients (1024 terms) gained the most. The partial sums
 * go through out in order, so the result is the same as one pass (measured 4% faster training
 * per CPU second than a single pass, 128 slightly ahead of 64). */
#define MM_TERMS 128

static void mm_blocks(void *ctx, size_t i0, size_t i1)
{
    mm_args g = *(const mm_args *)ctx;
    const struct mm_kernel *kn = &mm_kernels[g.mr];
    int k = g.k, acc = g.acc;
    for (int p0 = 0; p0 < k; p0 += MM_TERMS) {
        int p1 = k - p0 < MM_TERMS ? k : p0 + MM_TERMS;
        for (size_t i = i0; i < i1; i++) {
            int r0 = (int)i * kn->rows, rn = g.n - r0 < kn->rows ? g.n - r0 : kn->rows;
            g.jb = 0, g.je = g.m, g.kb = p0, g.ke = p1;
            g.acc = acc || p0 > 0;
            kn->fn(&g, r0, rn);
        }
    }
}

static void mm_run(int v, real *out, const real *a, size_t ars, size_t acs, const real *b,
                   const real *bias, int n, int k, int m, int acc, int nt)
{
    mm_args x = {out, a, b, bias, ars, acs, (size_t)m, (size_t)m, n, k, m, acc, v, 0, m, 0, k};
    int rows = mm_kernels[v].rows;
    pool_run(par_nt(nt, (double)n * k * m), (size_t)(n + rows - 1) / rows,
             grain_for(2.0 * rows * k * m), mm_blocks, &x);
}

/* The product (or its part) through kernel v on the calling thread, inside a loop the pool
 * already runs; b and out rows are bs and os apart (the heads of the attention are strided
 * slices of qkv). */
static void mm_part(int v, int part, real *out, size_t os, const real *a, size_t ars, size_t acs,
                    const real *b, size_t bs, int n, int k, int m, int acc)
{
    mm_args x = {out, a, b, NULL, ars, acs, bs, os, n, k, m, acc, v, 0, m, 0, k};
    const struct mm_kernel *kn = &mm_kernels[v];
    for (int r0 = 0; r0 < n; r0 += kn->rows)
        mm_block(kn, &x, part, r0, n - r0 < kn->rows ? n - r0 : kn->rows);
}

static void mm_here(int part, real *out, size_t os, const real *a, size_t ars, size_t acs,
                    const real *b, size_t bs, int n, int k, int m, int acc)
{
    mm_part(mm_best(), part, out, os, a, ars, acs, b, bs, n, k, m, acc);
}

/* out (n, m) = a (n, k) . b (k, m) + bias (m) (bias may be NULL); with acc, added to out. */
static void mm(real *out, const real *a, const real *b, const real *bias, int n, int k, int m,
               int acc, int nt)
{
    mm_run(mm_best(), out, a, (size_t)k, 1, b, bias, n, k, m, acc, nt);
}

/* out (k, m) += a^T . b for a (n, k), b (n, m): the weight gradient of a product. */
static void mm_tn(real *out, const real *a, const real *b, int n, int k, int m, int nt)
{
    mm_run(mm_best(), out, a, 1, (size_t)k, b, NULL, k, n, m, 1, nt);
}

#ifndef NN_REAL_DOUBLE
int nn_kernel_count(void)
{
    return MM_KERNELS;
}

const char *nn_kernel_name(int v)
{
    return v >= 0 && v < MM_KERNELS ? mm_kernels[v].name : NULL;
}

float nn_kernel_exp(float x)
{
    return fexp(x);
}

int nn_kernel_mm(int v, float *out, const float *a, size_t ars, size_t acs, const float *b,
                 const float *bias, int n, int k, int m, int acc, int nt)
{
    if (v < 0 || v >= MM_KERNELS || !mm_kernel_ok(v)) return -1;
    mm_run(v, out, a, ars, acs, b, bias, n, k, m, acc, nt);
    return 0;
}

int nn_kernel_mm_part(int v, int part, float *out, const float *a, size_t ars, size_t acs,
                      const float *b, int n, int k, int m, int acc)
{
    if (v < 0 || v >= MM_KERNELS || !mm_kernel_ok(v) || part < 0 || part >= NN_MM_PARTS) return -1;
    mm_part(v, part, out, (size_t)m, a, ars, acs, b, (size_t)m, n, k, m, acc);
    return 0;
}
#endif

typedef struct tr_args {
    real *dst;
    const real *src;
    int r, c;
} tr_args;

static void transpose_cols(void *ctx, size_t i0, size_t i1)
{
    const tr_args *x = ctx;
    real *restrict dst = x->dst;
    const real *restrict src = x->src;
    int r = x->r, c = x->c;
    /* a row of dst at a time: contiguous stores, loads down a column of src whose lines the
     * next 15 columns use again (stores scattered down a column of dst took twice as long) */
    for (int j = (int)i0 * 16; j < c && j < (int)i1 * 16; j++)
        for (int i = 0; i < r; i++) dst[(size_t)j * r + i] = src[(size_t)i * c + j];
}

/* dst (c, r) = src (r, c) transposed (used for weights only: small). */
static void transpose(real *dst, const real *src, int r, int c, int nt)
{
    tr_args x = {dst, src, r, c};
    pool_run(par_nt(nt, (double)r * c), (size_t)(c + 15) / 16, grain_for(16.0 * r), transpose_cols,
             &x);
}

/* db (m) += the column sums of d (n, m), rows in order. */
NN_CLONES static void col_sums(real *restrict db, const real *restrict d, int n, int m)
{
    for (int r = 0; r < n; r++)
        for (int j = 0; j < m; j++) db[j] += d[(size_t)r * m + j];
}

/* Backward of out = inp (n, k) . w (k, m) + b: dinp (may be NULL) = dout . w^T,
 * dw += inp^T . dout, db (may be NULL) += column sums of dout (rows in order, serially). */
static void mm_backward(real *dinp, real *dw, real *db, const real *dout, const real *inp,
                        const real *w, int n, int k, int m, real *tr, int nt)
{
    if (dinp) {
        transpose(tr, w, k, m, nt); /* (m, k) */
        mm(dinp, dout, tr, NULL, n, m, k, 0, nt);
    }
    mm_tn(dw, inp, dout, n, k, m, nt);
    if (db) col_sums(db, dout, n, m);
}

/* Sums and maxima over a row run in LANES running values, one per vector lane, combined at the
 * end: the loops vectorise (a single running value would be a serial chain), and the order
 * depends only on the row length, never on the thread count. */
#define LANES 16

/* The largest of x[0..n-1] (n >= 1). */
static inline real max_lanes(const real *restrict x, int n)
{
    real lm[LANES], mx = x[0];
    for (int l = 0; l < LANES; l++) lm[l] = x[0];
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) lm[l] = RMAX(x[i + l], lm[l]);
    for (; i < n; i++) mx = x[i] > mx ? x[i] : mx;
    for (int l = 0; l < LANES; l++) mx = lm[l] > mx ? lm[l] : mx;
    return mx;
}

/* The row sums of LayerNorm: of x_i, and of (x_i - m)^2. */
static inline real sum_lanes(const real *restrict x, int n)
{
    real ls[LANES] = {0}, s = 0;
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) ls[l] += x[i + l];
    for (; i < n; i++) s += x[i];
    for (int l = 0; l < LANES; l++) s += ls[l];
    return s;
}

static inline real dev2_lanes(const real *restrict x, real m, int n)
{
    real ls[LANES] = {0}, s = 0;
    int i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) ls[l] += (x[i + l] - m) * (x[i + l] - m);
    for (; i < n; i++) s += (x[i] - m) * (x[i] - m);
    for (int l = 0; l < LANES; l++) s += ls[l];
    return s;
}

/* Arguments of the row-wise LayerNorm loops. */
typedef struct ln_args {
    real *out, *mean, *rstd;
    const real *inp, *w, *b, *dout;
    const real *cmean, *crstd;
    int C;
} ln_args;

NN_CLONES static void layernorm_rows(void *ctx, size_t r0, size_t r1)
{
    const ln_args *a = ctx;
    real *out = a->out, *mean = a->mean, *rstd = a->rstd;
    const real *inp = a->inp, *w = a->w, *b = a->b;
    int C = a->C;
    for (size_t r = r0; r < r1; r++) {
        const real *x = inp + (size_t)r * C;
        real m = sum_lanes(x, C) / C, v = dev2_lanes(x, m, C) / C;
        real s = (real)(1.0 / sqrt((double)v + 1e-5));
        real *o = out + (size_t)r * C;
        for (int i = 0; i < C; i++) o[i] = (x[i] - m) * s * w[i] + b[i];
        mean[r] = m;
        rstd[r] = s;
    }
}

static void layernorm(real *out, real *mean, real *rstd, const real *inp, const real *w,
                      const real *b, int n, int C, int nt)
{
    ln_args a = {out, mean, rstd, inp, w, b, NULL, NULL, NULL, C};
    pool_run(par_nt(nt, (double)n * C * 4), (size_t)n, grain_for(4.0 * C), layernorm_rows, &a);
}

NN_CLONES static void layernorm_backward_rows(void *ctx, size_t r0, size_t r1)
{
    const ln_args *a = ctx;
    real *dinp = a->out;
    const real *inp = a->inp, *w = a->w, *dout = a->dout, *mean = a->cmean, *rstd = a->crstd;
    int C = a->C;
    for (size_t r = r0; r < r1; r++) {
        const real *x = inp + (size_t)r * C, *g = dout + (size_t)r * C;
        real m = mean[r], s = rstd[r], lm[LANES] = {0}, ln[LANES] = {0}, dmean = 0, dnorm_norm = 0;
        int i = 0;
        for (; i + LANES <= C; i += LANES)
            for (int l = 0; l < LANES; l++) {
                real dn = w[i + l] * g[i + l];
                lm[l] += dn;
                ln[l] += dn * (x[i + l] - m) * s;
            }
        for (; i < C; i++) {
            real dn = w[i] * g[i];
            dmean += dn;
            dnorm_norm += dn * (x[i] - m) * s;
        }
        for (int l = 0; l < LANES; l++) dmean += lm[l], dnorm_norm += ln[l];
        dmean /= C;
        dnorm_norm /= C;
        real *di = dinp + (size_t)r * C;
        for (i = 0; i < C; i++) {
            real norm = (x[i] - m) * s;
            di[i] += (w[i] * g[i] - dmean - norm * dnorm_norm) * s;
        }
    }
}

/* dw, db += LayerNorm's weight and bias gradients, rows in order. */
NN_CLONES static void layernorm_param_grads(real *restrict dw, real *restrict db,
                                            const real *restrict dout, const real *restrict inp,
                                            const real *mean, const real *rstd, int n, int C)
{
    for (int r = 0; r < n; r++) {
        const real *x = inp + (size_t)r * C, *g = dout + (size_t)r * C;
        real m = mean[r], s = rstd[r];
        for (int i = 0; i < C; i++) {
            db[i] += g[i];
            dw[i] += (x[i] - m) * s * g[i];
        }
    }
}

/* dinp += LayerNorm backward; dw, db += their gradients (summed over rows in order, serially). */
static void layernorm_backward(real *dinp, real *dw, real *db, const real *dout, const real *inp,
                               const real *w, const real *mean, const real *rstd, int n, int C,
                               int nt)
{
    ln_args a = {dinp, NULL, NULL, inp, w, NULL, dout, mean, rstd, C};
    pool_run(par_nt(nt, (double)n * C * 6), (size_t)n, grain_for(6.0 * C), layernorm_backward_rows,
             &a);
    layernorm_param_grads(dw, db, dout, inp, mean, rstd, n, C);
}

#define GELU_K 0.7978845608028654 /* sqrt(2 / pi) */

typedef struct gelu_args {
    real *out, *t;
    const real *x, *dout, *ct;
} gelu_args;

/* out = GELU(x), and t = the tanh inside it: backward reads t instead of computing the
 * exponential and the division again (they were half the cost of GELU's backward). */
NN_CLONES static void gelu_range(void *ctx, size_t i0, size_t i1)
{
    const gelu_args *a = ctx;
    real *restrict out = a->out, *restrict tt = a->t;
    const real *restrict x = a->x;
    for (size_t i = i0; i < i1; i++) {
        real v = x[i];
        real u = (real)GELU_K * (v + (real)0.044715 * v * v * v);
        real t = rtanh(u);
        tt[i] = t;
        out[i] = (real)0.5 * v * (1 + t);
    }
}

static void gelu(real *out, real *t, const real *x, size_t n, int nt)
{
    gelu_args a = {out, t, x, NULL, NULL};
    pool_run(par_nt(nt, (double)n * 8), n, grain_for(8), gelu_range, &a);
}

NN_CLONES static void gelu_backward_range(void *ctx, size_t i0, size_t i1)
{
    const gelu_args *a = ctx;
    real *restrict dx = a->out;
    const real *restrict x = a->x, *restrict dout = a->dout, *restrict tt = a->ct;
    for (size_t i = i0; i < i1; i++) {
        real v = x[i], t = tt[i];
        real du = (real)GELU_K * (1 + (real)(3 * 0.044715) * v * v);
        dx[i] = dout[i] * ((real)0.5 * (1 + t) + (real)0.5 * v * (1 - t * t) * du);
    }
}

/* dx = dout . GELU'(x), t: the tanh gelu kept */
static void gelu_backward(real *dx, const real *x, const real *t, const real *dout, size_t n,
                          int nt)
{
    gelu_args a = {dx, NULL, x, dout, t};
    pool_run(par_nt(nt, (double)n * 8), n, grain_for(8), gelu_backward_range, &a);
}

/* Arguments of the attention-side loops. */
typedef struct att_args {
    const nn_dims *d;
    const nn_layout *l;
    const real *params;
    const nn_pos *pos;
    int pos0, B, T, inverse;
    real *atty, *att, *qkv, *dqkv, *dpre, *kvt;
    const real *cqkv, *catt, *datty;
} att_args;

#ifndef NN_REAL_DOUBLE
/* pe_rope_rotate_f (pe/rope.c) inlined, the same arithmetic in the same order: one call per head
 * of 16 values cost more than the rotation. */
static inline void rope_rotate(float *restrict x, int dim, int rot_dim, pe_pairing pairing,
                               const float *restrict cos_row, const float *restrict sin_row)
{
    int npairs = (rot_dim < dim ? rot_dim : dim) / 2;
    if (pairing == PE_PAIRING_HALF) {
        for (int k = 0; k < npairs; k++) {
            float xa = x[k], xb = x[k + npairs], c = cos_row[k], s = sin_row[k];
            x[k] = xa * c - xb * s;
            x[k + npairs] = xa * s + xb * c;
        }
    } else {
        for (int k = 0; k < npairs; k++) {
            float xa = x[2 * k], xb = x[2 * k + 1], c = cos_row[k], s = sin_row[k];
            x[2 * k] = xa * c - xb * s;
            x[2 * k + 1] = xa * s + xb * c;
        }
    }
}
#endif

NN_CLONES static void rope_range(void *ctx, size_t r0, size_t r1)
{
    const att_args *a = ctx;
    const nn_dims *d = a->d;
    const nn_pos *pos = a->pos;
    real *qkv = a->qkv;
    int C = d->C, half = pos->rot_dim / 2, T = a->T, pos0 = a->pos0, inverse = a->inverse;
    for (int r = (int)r0; r < (int)r1; r++) {
        int p = pos0 + r % T;
        real *row = qkv + (size_t)r * 3 * C;
        for (int h = 0; h < d->H; h++)
            for (int part = 0; part < 2; part++) {
                real *x = row + (size_t)part * C + (size_t)h * d->hd;
#ifdef NN_REAL_DOUBLE
                (void)half;
                pe_rope_rotate(&pos->rope_p, pos->inv_freq, pos->rope_attn, x,
                               inverse ? -(double)p : (double)p);
#else
                rope_rotate(x, d->hd, pos->rot_dim, pos->rope_p.pairing,
                            pos->rope_cos + (size_t)p * half,
                            (inverse ? pos->rope_nsin : pos->rope_sin) + (size_t)p * half);
#endif
            }
    }
}

/* Rotate q and k of every head of every row by its position (inverse: the transposed rotation,
 * for gradients). */
static void rope_rows(const nn_dims *d, const nn_pos *pos, real *qkv, int B, int T, int pos0,
                      int inverse, int nt)
{
    att_args a = {.d = d, .pos = pos, .pos0 = pos0, .B = B, .T = T, .inverse = inverse, .qkv = qkv};
    pool_run(par_nt(nt, (double)B * T * d->C * 8), (size_t)B * T, grain_for(8.0 * d->C), rope_range,
             &a);
}

/* dst (hd, T) = the head's slice src (T rows ss apart, hd columns) transposed. Rows of dst are
 * written whole (contiguous stores); the reads walk down a column, from lines the first column
 * brought in. */
static inline void head_transpose(real *restrict dst, const real *restrict src, size_t ss, int T,
                                  int hd)
{
    for (int i = 0; i < hd; i++)
        for (int j = 0; j < T; j++) dst[(size_t)i * T + j] = src[(size_t)j * ss + i];
}

/* Softmax of rows t0..t0+tn-1 (tn <= LANES) of a causal score matrix in place: for row t,
 * x_j = row[j] * scale for j < n = t + 1, then e^(x_j - max) / sum; row[n..T-1] = 0. Whole
 * blocks of LANES columns are computed with the columns past n masked, so every loop has a fixed
 * length. A row's maximum and sum combine its LANES running values in lane order, a serial
 * chain that took as long as the row's exponentials; the rows of a group are combined side by
 * side (lane l of every row, then l + 1), each still in its own lane order, so the results are
 * those of one row at a time. */
NN_INLINE void softmax_causal_rows(real *restrict sc, int t0, int tn, int T, real scale)
{
    real lmt[LANES][LANES], lst[LANES][LANES]; /* [lane][row of the group] */
    real mx[LANES], sum[LANES], inv[LANES];
    int wt = T / LANES * LANES;
    for (int r = 0; r < tn; r++) {
        real *restrict row = sc + (size_t)(t0 + r) * T;
        int n = t0 + r + 1, w = (n + LANES - 1) / LANES * LANES;
        if (w > T) w = wt; /* the last partial block of a row goes to the tail loop */
        real lm[LANES];
        for (int l = 0; l < LANES; l++) lm[l] = -INFINITY;
        for (int j0 = 0; j0 < w; j0 += LANES)
            for (int l = 0; l < LANES; l++) {
                real x = RSEL(j0 + l < n, row[j0 + l] * scale, -INFINITY);
                row[j0 + l] = x;
                lm[l] = RMAX(x, lm[l]);
            }
        for (int l = 0; l < LANES; l++) lmt[l][r] = lm[l];
    }
    for (int r = 0; r < tn; r++) mx[r] = lmt[0][r];
    for (int l = 1; l < LANES; l++)
        for (int r = 0; r < tn; r++) mx[r] = RMAX(lmt[l][r], mx[r]);
    for (int r = 0; r < tn; r++) {
        real *restrict row = sc + (size_t)(t0 + r) * T;
        int n = t0 + r + 1, w = (n + LANES - 1) / LANES * LANES;
        if (w > T) w = wt;
        real m = mx[r];
        for (int j = w; j < n; j++) {
            row[j] *= scale;
            m = row[j] > m ? row[j] : m;
        }
        real ls[LANES], tail = 0;
        for (int l = 0; l < LANES; l++) ls[l] = 0;
        for (int j0 = 0; j0 < w; j0 += LANES)
            for (int l = 0; l < LANES; l++) {
                real e = RSEL(j0 + l < n, REXP(row[j0 + l] - m), 0);
                row[j0 + l] = e;
                ls[l] += e;
            }
        for (int j = w; j < n; j++) tail += row[j] = REXP(row[j] - m);
        for (int l = 0; l < LANES; l++) lst[l][r] = ls[l];
        sum[r] = tail;
    }
    for (int l = 0; l < LANES; l++)
        for (int r = 0; r < tn; r++) sum[r] += lst[l][r];
    for (int r = 0; r < tn; r++) inv[r] = 1 / sum[r];
    for (int r = 0; r < tn; r++) {
        real *restrict row = sc + (size_t)(t0 + r) * T;
        int n = t0 + r + 1;
        real v = inv[r];
        for (int j0 = 0; j0 < wt; j0 += LANES)
            for (int l = 0; l < LANES; l++) row[j0 + l] = RSEL(j0 + l < n, row[j0 + l] * v, 0);
        for (int j = wt; j < T; j++) row[j] = j < n ? row[j] * v : 0;
    }
}

/* Softmax attention of every (sequence, head) as products through the matrix kernel: scores
 * Q.K^T (only the columns up to each row: the rest is masked), then P.V (only the terms up to
 * each row: P is zero above the diagonal), with the row-wise scale, position bias and softmax
 * between them. */
NN_CLONES static void attention_heads(void *ctx, size_t bh0, size_t bh1)
{
    const att_args *a = ctx;
    const nn_dims *d = a->d;
    const nn_pos *pos = a->pos;
    const real *qkv = a->cqkv;
    real *atty = a->atty, *att = a->att;
    int C = d->C, H = d->H, hd = d->hd, T = a->T;
    size_t C3 = 3 * (size_t)C;
    real scale = (real)(1.0 / sqrt((double)hd));
    for (int bh = (int)bh0; bh < (int)bh1; bh++) {
        int b = bh / H, h = bh % H;
        const real *base = qkv + (size_t)b * T * C3 + (size_t)h * hd;
        /* scratch of this chunk of heads: the slot of its first head, reused while it runs, so
         * it stays in L1 (chunks never overlap, so neither do their slots) */
        real *kt = a->kvt + bh0 * hd * T; /* (hd, T) */
        head_transpose(kt, base + C, C3, T, hd);
        real *sc = att + ((size_t)b * H + h) * T * T; /* (T, T) */
        mm_here(MM_COLS_TO_ROW, sc, (size_t)T, base, C3, 1, kt, (size_t)T, T, hd, T, 0);
        const real *t5 = d->pe == MODEL_PE_T5 ? a->params + a->l->t5 + (size_t)h * d->NB : NULL;
        real slope = d->pe == MODEL_PE_ALIBI ? (real)pos->slopes[h] : 0;
        real s = scale;
        if (slope != 0 || t5) { /* the bias goes on the scaled scores */
            for (int t = 0; t < T; t++) {
                real *restrict row = sc + (size_t)t * T;
                int n = t + 1;
                for (int j = 0; j < n; j++) row[j] *= scale;
                if (slope != 0)
                    for (int j = 0; j < n; j++) row[j] -= slope * (real)(t - j);
                if (t5)
                    for (int j = 0; j < n; j++) row[j] += t5[pos->t5_bucket[t - j]];
            }
            s = 1;
        }
        for (int t0 = 0; t0 < T; t0 += LANES)
            softmax_causal_rows(sc, t0, T - t0 < LANES ? T - t0 : LANES, T, s);
        mm_here(MM_TERMS_TO_ROW, atty + (size_t)b * T * C + (size_t)h * hd, (size_t)C, sc,
                (size_t)T, 1, base + 2 * (size_t)C, C3, T, T, hd, 0);
    }
}

static void attention(const nn_dims *d, const nn_layout *l, const real *params, const nn_pos *pos,
                      int pos0, real *atty, real *att, const real *qkv, real *kvt, int B, int T,
                      int nt)
{
    att_args a = {.d = d,
                  .l = l,
                  .params = params,
                  .pos = pos,
                  .pos0 = pos0,
                  .B = B,
                  .T = T,
                  .atty = atty,
                  .att = att,
                  .cqkv = qkv,
                  .kvt = kvt};
    pool_run(par_nt(nt, (double)B * d->H * T * T * d->hd), (size_t)B * d->H, 1, attention_heads,
             &a);
}

NN_CLONES static void attention_backward_heads(void *ctx, size_t bh0, size_t bh1)
{
    const att_args *a = ctx;
    const nn_dims *d = a->d;
    const real *qkv = a->cqkv, *att = a->catt, *datty = a->datty;
    real *dqkv = a->dqkv, *dpre = a->dpre;
    int C = d->C, H = d->H, hd = d->hd, T = a->T;
    size_t C3 = 3 * (size_t)C;
    real scale = (real)(1.0 / sqrt((double)hd));
    for (int bh = (int)bh0; bh < (int)bh1; bh++) {
        int b = bh / H, h = bh % H;
        const real *base = qkv + (size_t)b * T * C3 + (size_t)h * hd;
        real *dbase = dqkv + (size_t)b * T * C3 + (size_t)h * hd;
        const real *g = datty + (size_t)b * T * C + (size_t)h * hd; /* (T, hd), stride C */
        const real *p = att + ((size_t)b * H + h) * T * T;          /* (T, T) */
        /* the chunk's scratch (see attention_heads); dp in its own slot only for T5, whose
         * bucket gradients read it afterwards */
        real *dp = dpre + (d->pe == MODEL_PE_T5 ? (size_t)bh : bh0) * T * T; /* (T, T) */
        real *vt = a->kvt + bh0 * hd * T;                                    /* (hd, T) */
        head_transpose(vt, base + 2 * (size_t)C, C3, T, hd);
        /* the weights' gradient da = g . v^T (columns up to the row: the rest is masked), and
         * v's: dv = p^T . g (terms from the row on: p^T is zero below the diagonal) */
        mm_here(MM_COLS_TO_ROW, dp, (size_t)T, g, (size_t)C, 1, vt, (size_t)T, T, hd, T, 0);
        mm_here(MM_TERMS_FROM_ROW, dbase + 2 * (size_t)C, C3, p, 1, (size_t)T, g, (size_t)C, T, T,
                hd, 0);
        /* through the softmax: dp_j = a_j (da_j - sum_k a_k da_k) for j <= t, 0 above; da past
         * the columns computed is stale, so the mask is explicit */
        int wt = T / LANES * LANES;
        for (int t0 = 0; t0 < T; t0 += LANES) {
            /* a group of rows at a time, their sums combined side by side in lane order (see
             * softmax_causal_rows) */
            int tn = T - t0 < LANES ? T - t0 : LANES;
            real lst[LANES][LANES], sum[LANES];
            for (int r = 0; r < tn; r++) {
                int t = t0 + r;
                const real *restrict row = p + (size_t)t * T, *restrict drow = dp + (size_t)t * T;
                int n = t + 1, w = (n + LANES - 1) / LANES * LANES;
                if (w > T) w = wt;
                real ls[LANES], s = 0;
                for (int l = 0; l < LANES; l++) ls[l] = 0;
                for (int j0 = 0; j0 < w; j0 += LANES)
                    for (int l = 0; l < LANES; l++)
                        ls[l] += RSEL(j0 + l < n, row[j0 + l] * drow[j0 + l], 0);
                for (int j = w; j < n; j++) s += row[j] * drow[j];
                for (int l = 0; l < LANES; l++) lst[l][r] = ls[l];
                sum[r] = s;
            }
            for (int l = 0; l < LANES; l++)
                for (int r = 0; r < tn; r++) sum[r] += lst[l][r];
            for (int r = 0; r < tn; r++) {
                int t = t0 + r, n = t + 1;
                const real *restrict row = p + (size_t)t * T;
                real *restrict drow = dp + (size_t)t * T, s = sum[r];
                for (int j0 = 0; j0 < wt; j0 += LANES)
                    for (int l = 0; l < LANES; l++)
                        drow[j0 + l] = RSEL(j0 + l < n, row[j0 + l] * (drow[j0 + l] - s), 0);
                for (int j = wt; j < T; j++) drow[j] = j < n ? row[j] * (drow[j] - s) : 0;
            }
        }
        /* into q and k: dq = scale dp . k (terms up to the row), dk = scale dp^T . q (terms from
         * the row on); every element of dq, dk and dv is written here */
        mm_here(MM_TERMS_TO_ROW, dbase, C3, dp, (size_t)T, 1, base + C, C3, T, T, hd, 0);
        mm_here(MM_TERMS_FROM_ROW, dbase + C, C3, dp, 1, (size_t)T, base, C3, T, T, hd, 0);
        for (int t = 0; t < T; t++) {
            real *restrict dq = dbase + (size_t)t * C3, *restrict dk = dq + C;
            for (int i = 0; i < hd; i++) dq[i] *= scale;
            for (int i = 0; i < hd; i++) dk[i] *= scale;
        }
    }
}

/* dqkv = gradient wrt (rotated) q, k and v; dpre = gradient of the pre-softmax scores. */
static void attention_backward(const nn_dims *d, real *dqkv, real *dpre, const real *datty,
                               const real *qkv, const real *att, real *kvt, int B, int T, int nt)
{
    att_args a = {.d = d,
                  .B = B,
                  .T = T,
                  .dqkv = dqkv,
                  .dpre = dpre,
                  .cqkv = qkv,
                  .catt = att,
                  .datty = datty,
                  .kvt = kvt};
    pool_run(par_nt(nt, (double)B * d->H * T * T * d->hd), (size_t)B * d->H, 1,
             attention_backward_heads, &a);
}

/* ---- forward ------------------------------------------------------------------------------ */

/* Rows per chunk of the MLP: fc's output for them (128 x F = 128 KiB at F = 256) stays in L2. */
#define MLP_ROWS 128

typedef struct loss_args {
    real *logits, *probs, *losses, *inv_sum;
    const int *targets;
    int V, BT;
} loss_args;

/* Cross-entropy of every row: the exponentials go to probs in one vectorised loop, their sum
 * is taken in double. probs and inv_sum are what the backward pass starts from. */
NN_CLONES static void loss_rows(void *ctx, size_t r0, size_t r1)
{
    const loss_args *a = ctx;
    int V = a->V;
    for (size_t r = r0; r < r1; r++) {
        const real *restrict z = a->logits + r * V;
        real *restrict e = a->probs + r * V;
        real mx = max_lanes(z, V);
        for (int v = 0; v < V; v++) e[v] = REXP(z[v] - mx);
        /* 16 running sums, one per lane, then added in order: vectorised and still the same
         * order on every thread count */
        double l[16] = {0}, s = 0;
        int v = 0;
        for (; v + 16 <= V; v += 16)
            for (int j = 0; j < 16; j++) l[j] += (double)e[v + j];
        for (; v < V; v++) s += (double)e[v];
        for (int j = 0; j < 16; j++) s += l[j];
        a->losses[r] = (real)(log(s) + (double)mx - (double)z[a->targets[r]]);
        a->inv_sum[r] = (real)(1.0 / s);
    }
}

double NN(forward)(const nn_dims *d, const nn_layout *l, const real *params, const nn_pos *pos,
                   int pos0, nn_acts *na, const int *inputs, const int *targets, int B, int T,
                   int nt)
{
    acts a = view(na, d);
    int C = d->C, F = d->F, V = d->V, BT = B * T, H = d->H;
    const real *wte = params + l->wte;
    real es = (real)d->emb_scale;
    for (int r = 0; r < BT; r++) {
        int p = pos0 + r % T;
        const real *e = wte + (size_t)inputs[r] * C;
        real *x = a.x0 + (size_t)r * C;
        for (int i = 0; i < C; i++) x[i] = e[i] * es;
        if (d->pe == MODEL_PE_LEARNED) {
            const real *pr = params + l->wpe + (size_t)p * C;
            for (int i = 0; i < C; i++) x[i] += pr[i];
        } else if (d->pe == MODEL_PE_SINUSOIDAL) {
            const float *pr = pos->table + (size_t)p * C;
            for (int i = 0; i < C; i++) x[i] += (real)pr[i];
        }
    }
    size_t BTC = (size_t)BT * C, BTF = (size_t)BT * F, att_n = (size_t)B * H * T * T;
    for (int li = 0; li < d->L; li++) {
        const real *res = li ? a.res3 + (li - 1) * BTC : a.x0;
        real *ln1 = a.ln1 + li * BTC, *qkv = a.qkv + li * BTC * 3, *att = a.att + li * att_n;
        real *atty = a.atty + li * BTC, *res2 = a.res2 + li * BTC, *ln2 = a.ln2 + li * BTC;
        real *fch = a.fch + li * BTF, *fchg = a.fchg + li * BTF, *res3 = a.res3 + li * BTC;
        real *fcht = a.fcht + li * BTF;
        layernorm(ln1, a.ln1_mean + (size_t)li * BT, a.ln1_rstd + (size_t)li * BT, res,
                  params + l->ln1w + (size_t)li * C, params + l->ln1b + (size_t)li * C, BT, C, nt);
        mm(qkv, ln1, params + l->qkvw + (size_t)li * C * 3 * C,
           params + l->qkvb + (size_t)li * 3 * C, BT, C, 3 * C, 0, nt);
        if (d->pe == MODEL_PE_ROPE) rope_rows(d, pos, qkv, B, T, pos0, 0, nt);
        attention(d, l, params, pos, pos0, atty, att, qkv, a.kvt, B, T, nt);
        mm(a.tmp, atty, params + l->projw + (size_t)li * C * C, params + l->projb + (size_t)li * C,
           BT, C, C, 0, nt);
        for (size_t i = 0; i < BTC; i++) res2[i] = res[i] + a.tmp[i];
        layernorm(ln2, a.ln2_mean + (size_t)li * BT, a.ln2_rstd + (size_t)li * BT, res2,
                  params + l->ln2w + (size_t)li * C, params + l->ln2b + (size_t)li * C, BT, C, nt);
        /* the MLP in chunks of rows, so that GELU and fcproj read fc's output from L2: every op
         * here works row by row, so the results are those of whole passes */
        for (int r0 = 0; r0 < BT; r0 += MLP_ROWS) {
            int rn = BT - r0 < MLP_ROWS ? BT - r0 : MLP_ROWS;
            size_t oc = (size_t)r0 * C, of = (size_t)r0 * F;
            mm(fch + of, ln2 + oc, params + l->fcw + (size_t)li * C * F,
               params + l->fcb + (size_t)li * F, rn, C, F, 0, nt);
            gelu(fchg + of, fcht + of, fch + of, (size_t)rn * F, nt);
            mm(a.tmp + oc, fchg + of, params + l->fcprojw + (size_t)li * F * C,
               params + l->fcprojb + (size_t)li * C, rn, F, C, 0, nt);
        }
        for (size_t i = 0; i < BTC; i++) res3[i] = res2[i] + a.tmp[i];
    }
    layernorm(a.lnf, a.lnf_mean, a.lnf_rstd, a.res3 + (d->L - 1) * BTC, params + l->lnfw,
              params + l->lnfb, BT, C, nt);
    if (d->tied) {
        transpose(a.tr, wte, V, C, nt); /* (C, V) */
        mm(a.logits, a.lnf, a.tr, NULL, BT, C, V, 0, nt);
    } else {
        mm(a.logits, a.lnf, params + l->wout, NULL, BT, C, V, 0, nt);
    }
    if (!targets) return 0;
    loss_args la = {a.logits, a.probs, a.losses, a.inv_sum, targets, V, BT};
    pool_run(par_nt(nt, (double)BT * V * 8), (size_t)BT, grain_for(8.0 * V), loss_rows, &la);
    double total = 0;
    for (int r = 0; r < BT; r++) total += (double)a.losses[r];
    return total / BT;
}

/* ---- backward ----------------------------------------------------------------------------- */

/* dlogits = (softmax - onehot) / BT, in place of the logits, from the exponentials the
 * forward pass kept. */
NN_CLONES static void dlogits_rows(void *ctx, size_t r0, size_t r1)
{
    const loss_args *a = ctx;
    int V = a->V, BT = a->BT;
    for (size_t r = r0; r < r1; r++) {
        real *restrict z = a->logits + r * V;
        const real *restrict e = a->probs + r * V;
        real f = (real)((double)a->inv_sum[r] / BT);
        for (int v = 0; v < V; v++) z[v] = e[v] * f;
        z[a->targets[r]] -= (real)(1.0 / BT);
    }
}

void NN(backward)(const nn_dims *d, const nn_layout *l, const real *params, real *grads,
                  const nn_pos *pos, int pos0, nn_acts *na, const int *inputs, const int *targets,
                  int B, int T, int nt)
{
    acts a = view(na, d);
    int C = d->C, F = d->F, V = d->V, BT = B * T, H = d->H;
    size_t BTC = (size_t)BT * C, BTF = (size_t)BT * F, att_n = (size_t)B * H * T * T;
    loss_args da = {a.logits, a.probs, a.losses, a.inv_sum, targets, V, BT};
    pool_run(par_nt(nt, (double)BT * V * 8), (size_t)BT, grain_for(8.0 * V), dlogits_rows, &da);
    if (d->tied) {
        /* logits = lnf . wte^T: dlnf = dlogits . wte, dwte += dlogits^T . lnf */
        mm(a.dln, a.logits, params + l->wte, NULL, BT, V, C, 0, nt);
        mm_tn(grads + l->wte, a.logits, a.lnf, BT, V, C, nt);
    } else {
        mm_backward(a.dln, grads + l->wout, NULL, a.logits, a.lnf, params + l->wout, BT, C, V, a.tr,
                    nt);
    }
    memset(a.dres, 0, BTC * sizeof(real));
    layernorm_backward(a.dres, grads + l->lnfw, grads + l->lnfb, a.dln, a.res3 + (d->L - 1) * BTC,
                       params + l->lnfw, a.lnf_mean, a.lnf_rstd, BT, C, nt);
    for (int li = d->L - 1; li >= 0; li--) {
        const real *res = li ? a.res3 + (li - 1) * BTC : a.x0;
        const real *ln1 = a.ln1 + li * BTC, *qkv = a.qkv + li * BTC * 3, *att = a.att + li * att_n;
        const real *atty = a.atty + li * BTC, *res2 = a.res2 + li * BTC, *ln2 = a.ln2 + li * BTC;
        const real *fch = a.fch + li * BTF, *fchg = a.fchg + li * BTF, *fcht = a.fcht + li * BTF;
        size_t lc = (size_t)li * C;
        /* MLP: res3 = res2 + fcproj(gelu(fc(ln2(res2)))); fchg's gradient and GELU's backward in
         * chunks of rows, as in forward */
        transpose(a.tr, params + l->fcprojw + lc * F, F, C, nt); /* (C, F) */
        for (int r0 = 0; r0 < BT; r0 += MLP_ROWS) {
            int rn = BT - r0 < MLP_ROWS ? BT - r0 : MLP_ROWS;
            size_t oc = (size_t)r0 * C, of = (size_t)r0 * F;
            mm(a.dfchg + of, a.dres + oc, a.tr, NULL, rn, C, F, 0, nt);
            gelu_backward(a.dfch + of, fch + of, fcht + of, a.dfchg + of, (size_t)rn * F, nt);
        }
        mm_backward(NULL, grads + l->fcprojw + lc * F, grads + l->fcprojb + lc, a.dres, fchg,
                    params + l->fcprojw + lc * F, BT, F, C, a.tr, nt);
        mm_backward(a.dln, grads + l->fcw + lc * F, grads + l->fcb + (size_t)li * F, a.dfch, ln2,
                    params + l->fcw + lc * F, BT, C, F, a.tr, nt);
        layernorm_backward(a.dres, grads + l->ln2w + lc, grads + l->ln2b + lc, a.dln, res2,
                           params + l->ln2w + lc, a.ln2_mean + (size_t)li * BT,
                           a.ln2_rstd + (size_t)li * BT, BT, C, nt);
        /* attention: res2 = res + proj(attn(qkv(ln1(res)))) */
        mm_backward(a.datty, grads + l->projw + lc * C, grads + l->projb + lc, a.dres, atty,
                    params + l->projw + lc * C, BT, C, C, a.tr, nt);
        attention_backward(d, a.dqkv, a.dpre, a.datty, qkv, att, a.kvt, B, T, nt);
        if (d->pe == MODEL_PE_T5) {
            real *dt5 = grads + l->t5;
            for (int h = 0; h < H; h++)
                for (int b = 0; b < B; b++)
                    for (int t = 0; t < T; t++) {
                        const real *drow = a.dpre + (((size_t)b * H + h) * T + t) * T;
                        for (int j = 0; j <= t; j++)
                            dt5[(size_t)h * d->NB + pos->t5_bucket[t - j]] += drow[j];
                    }
        }
        if (d->pe == MODEL_PE_ROPE) rope_rows(d, pos, a.dqkv, B, T, pos0, 1, nt);
        mm_backward(a.dln, grads + l->qkvw + lc * 3 * C, grads + l->qkvb + lc * 3, a.dqkv, ln1,
                    params + l->qkvw + lc * 3 * C, BT, C, 3 * C, a.tr, nt);
        layernorm_backward(a.dres, grads + l->ln1w + lc, grads + l->ln1b + lc, a.dln, res,
                           params + l->ln1w + lc, a.ln1_mean + (size_t)li * BT,
                           a.ln1_rstd + (size_t)li * BT, BT, C, nt);
        (void)res2;
    }
    /* input embeddings */
    real es = (real)d->emb_scale;
    for (int r = 0; r < BT; r++) {
        const real *g = a.dres + (size_t)r * C;
        real *dw = grads + l->wte + (size_t)inputs[r] * C;
        for (int i = 0; i < C; i++) dw[i] += g[i] * es;
        if (d->pe == MODEL_PE_LEARNED) {
            real *dp = grads + l->wpe + (size_t)(pos0 + r % T) * C;
            for (int i = 0; i < C; i++) dp[i] += g[i];
        }
    }
}
