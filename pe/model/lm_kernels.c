/* lm_kernels.c: the linear maps and the attention inner loops of the real models, on the thread
 * pool.
 *
 * One rule makes every result independent of the thread count AND of how many tokens are taken
 * together (a 200-token prompt gives token-by-token's logits bit for bit; tests/pe/realmodel):
 * an output element is always computed by the same sequence of operations, whatever tile it
 * falls in. The tiles only decide how many of those independent sequences run side by side.
 *
 * The layers' linears (Llama's W (out, in) and GPT-2's Conv1D (in, out) alike) are packed when
 * the model opens into panels of 32 outputs (lm_linear_pack: each panel `in` rows of 32 floats,
 * the order the registers take them). An output is x[0] w[0] + x[1] w[1] + ... in input order,
 * one fused multiply-add per input from zero, then the bias. The prompt's tile is 32 outputs x
 * 12 tokens (24 accumulators, two weight loads and twelve broadcasts per input); decoding takes
 * four panels at once (eight FMA chains, four contiguous memory streams). Packing once replaced
 * a copy of W's strips per call, which had cost as much as the products (perf record, GPT-2).
 *
 * The output head (W (out, in) in place: it is the embedding when tied): an output is a dot
 * product over `in` taken as eight lane sums (lane j adds the products i = j mod 8 in order, one
 * fused multiply-add each), summed as ((l0+l4)+(l1+l5))+((l2+l6)+(l3+l7)), then the tail (in
 * mod 8) in order, then the bias. The tile is ROWS outputs x TOKS tokens (4 x 3: 12
 * accumulators, 7 loads per 12 FMAs); T = 1 (decoding) is the 4 x 1 tile: four rows streamed at
 * once keep four FMA chains and four memory streams busy.
 *
 * FMA: built for x86-64-v3 (AVX2 + FMA) and the baseline by target_clones, dispatched once by the
 * ifunc resolver; the file asks for contraction (fp-contract=fast) so a*b+c is one FMA where the
 * CPU has it. The baseline build (no FMA) rounds the product first: results may differ between
 * CPUs in the last bits, never between thread counts or chunkings on one machine. On a CPU with
 * AVX-512 the panels and the head's prompt rows take 16-wide tiles (chosen by a CPU check once)
 * that keep the same sequence per output: the same bits as the AVX2 tiles. */
#pragma GCC optimize("fp-contract=fast")

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lm_internal.h"
#include "pool.h"

/* The AVX-512 prompt tiles (below): gcc on x86-64, not under ThreadSanitizer (as LM_GEMM). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define LM_X512 1
#include <immintrin.h>
#define LM_AVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx2,fma")))
#else
#define LM_X512 0
#endif

/* 8 floats in one AVX register (two SSE registers in the baseline build). */
typedef float v8 __attribute__((vector_size(32)));

/* Unaligned load and store (memcpy compiles to one vmovups), horizontal sum in the fixed tree.
 * Macros, not functions: a function taking or returning v8 outside the AVX clones would change
 * the ABI (gcc -Wpsabi). */
#define LD8(p)                                                                                     \
    __extension__({                                                                                \
        v8 v_;                                                                                     \
        memcpy(&v_, (p), sizeof v_);                                                               \
        v_;                                                                                        \
    })
#define ST8(p, v)                                                                                  \
    do {                                                                                           \
        v8 s_ = (v);                                                                               \
        memcpy((p), &s_, sizeof s_);                                                               \
    } while (0)
#define HSUM8(a) ((((a)[0] + (a)[4]) + ((a)[1] + (a)[5])) + (((a)[2] + (a)[6]) + ((a)[3] + (a)[7])))

typedef float v4 __attribute__((vector_size(16)));
/* HSUM8 of four accumulators at once, into one v4 (element r = HSUM8 of the r-th): the same
 * additions in the same tree, done across the four by shuffles ((a0 + a4) first for all, then
 * the pairs, then the pairs of pairs), so each element is bit for bit HSUM8 of its own. */
#define HSUM8X4(out, a, b, c, d)                                                                   \
    do {                                                                                           \
        v8 ab_ = __builtin_shufflevector((a), (b), 0, 1, 2, 3, 8, 9, 10, 11) +                     \
                 __builtin_shufflevector((a), (b), 4, 5, 6, 7, 12, 13, 14, 15);                    \
        v8 cd_ = __builtin_shufflevector((c), (d), 0, 1, 2, 3, 8, 9, 10, 11) +                     \
                 __builtin_shufflevector((c), (d), 4, 5, 6, 7, 12, 13, 14, 15);                    \
        v8 g_ = __builtin_shufflevector(ab_, cd_, 0, 2, 4, 6, 8, 10, 12, 14) +                     \
                __builtin_shufflevector(ab_, cd_, 1, 3, 5, 7, 9, 11, 13, 15);                      \
        (out) = __builtin_shufflevector(g_, g_, 0, 2, 4, 6) +                                      \
                __builtin_shufflevector(g_, g_, 1, 3, 5, 7);                                       \
    } while (0)

/* The tail of a dot product (in mod 8 inputs), one fused multiply-add per input in order,
 * written out: left as s += w * x, gcc vectorises the loop into rounded products then ordered
 * additions in one tile and not in another, and the tiles must agree bit for bit (the baseline
 * build, without FMA, calls libm's fmaf: the same bits, only for these few inputs). */
#define DOT_FMA(a, b, c) __builtin_fmaf((a), (b), (c))

/* ---- W (out, in) in place, the output head: dot products ----------------------------------  */

/* out[c * ldo + r] = b[r] + w_r . x_c for r < R, c < C; w rows ldw apart, x rows ldx apart. */
#define DOT_TILE(R, C)                                                                             \
    LM_GEMM static void dot_##R##x##C(const float *w, size_t ldw, const float *x, size_t ldx,      \
                                      int n, const float *b, float *out, size_t ldo)               \
    {                                                                                              \
        v8 acc[R][C];                                                                              \
        for (int r = 0; r < R; r++)                                                                \
            for (int c = 0; c < C; c++) acc[r][c] = (v8){0};                                       \
        int i = 0;                                                                                 \
        for (; i + 8 <= n; i += 8) {                                                               \
            v8 xv[C];                                                                              \
            for (int c = 0; c < C; c++) xv[c] = LD8(x + (size_t)c * ldx + (size_t)i);              \
            for (int r = 0; r < R; r++) {                                                          \
                v8 wv = LD8(w + (size_t)r * ldw + (size_t)i);                                      \
                for (int c = 0; c < C; c++) acc[r][c] += wv * xv[c];                               \
            }                                                                                      \
        }                                                                                          \
        if (R == 4 && i == n) { /* no tail: the four rows of a token as one vector */              \
            for (int c = 0; c < C; c++) {                                                          \
                v4 s;                                                                              \
                HSUM8X4(s, acc[0][c], acc[R > 1 ? 1 : 0][c], acc[R > 2 ? 2 : 0][c],                \
                        acc[R > 3 ? 3 : 0][c]);                                                    \
                if (b) {                                                                           \
                    v4 bv;                                                                         \
                    memcpy(&bv, b, sizeof bv);                                                     \
                    s += bv;                                                                       \
                } else                                                                             \
                    s += 0.0f;                                                                     \
                memcpy(out + (size_t)c * ldo, &s, sizeof s);                                       \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        for (int r = 0; r < R; r++)                                                                \
            for (int c = 0; c < C; c++) {                                                          \
                const float *wr = w + (size_t)r * ldw, *xc = x + (size_t)c * ldx;                  \
                float s = HSUM8(acc[r][c]);                                                        \
                for (int k = i; k < n; k++) s = DOT_FMA(wr[k], xc[k], s);                          \
                out[(size_t)c * ldo + (size_t)r] = s + (b ? b[r] : 0.0f);                          \
            }                                                                                      \
    }

DOT_TILE(4, 3)
DOT_TILE(4, 2)
DOT_TILE(4, 1)
DOT_TILE(1, 3)
DOT_TILE(1, 2)
DOT_TILE(1, 1)

#define ROWS 4
#define TOKS 3

/* One lm_linear_apply: its map, the T tokens' inputs and outputs (every kernel below). */
typedef struct lin_job {
    const lm_linear *L;
    const float *x;
    int T;
    float *out;
} lin_job;

/* The tiles by rows (4 or, for the last rows of W, 1) and token count (3, fewer for the last). */
typedef void dot_fn(const float *, size_t, const float *, size_t, int, const float *, float *,
                    size_t);
static dot_fn *const dot_tile[2][TOKS + 1] = {{NULL, dot_1x1, dot_1x2, dot_1x3},
                                              {NULL, dot_4x1, dot_4x2, dot_4x3}};

/* Rows r0..r1-1 of W (ROWS at a time) against every token (TOKS at a time). */
static void dot_block(const lin_job *j, size_t r0, size_t r1)
{
    const lm_linear *L = j->L;
    size_t in = (size_t)L->in, O = (size_t)L->out;
    int groups = (j->T + TOKS - 1) / TOKS;
    for (size_t r = r0; r < r1;) {
        int four = r + ROWS <= r1;
        const float *w = L->w + r * L->ld, *b = L->b ? L->b + r : NULL;
        /* The next ROWS rows of W, asked for a slice per token group while this group's tiles
         * run: their first tile then reads them from cache, not at memory latency (rows of a
         * mapped file are 4 KiB pages the hardware prefetchers do not cross). Prefetching never
         * faults, past the end of W included. */
        size_t nb = ROWS * L->ld * sizeof(float), step = (nb / (size_t)groups + 63) & ~(size_t)63;
        uintptr_t nx = (uintptr_t)(w + ROWS * L->ld);
        for (int t = 0, g = 0; t < j->T; t += TOKS, g++) {
            if (j->T > 1)
                for (size_t o = (size_t)g * step; o < (size_t)(g + 1) * step && o < nb; o += 64)
                    __builtin_prefetch((const void *)(nx + o), 0, 2);
            dot_tile[four][j->T - t < TOKS ? j->T - t : TOKS](
                w, L->ld, j->x + (size_t)t * in, in, L->in, b, j->out + (size_t)t * O + r, O);
        }
        r += four ? ROWS : 1;
    }
}

/* Items are groups of ROWS outputs (the last may be short). */
static void lin_rows(void *ctx, size_t g0, size_t g1)
{
    const lin_job *j = ctx;
    size_t r1 = g1 * ROWS;
    if (r1 > (size_t)j->L->out) r1 = (size_t)j->L->out;
    dot_block(j, g0 * ROWS, r1);
}

/* ---- AVX-512: 16-wide head tiles ------------------------------------------------------------
 *
 * The same sequence of operations per output as the tiles above (so every row of a prompt's
 * logits still gives token-by-token decoding's bits, and these tiles give the AVX2 tiles' bits):
 * only more outputs side by side, in 32 registers of 16 floats; the AVX2 tiles stay for T = 1
 * (decoding reads each weight once: memory bound, not FMA bound) and for the edges.
 *
 * A register holds two weight rows' eight lanes (rows r and r + 1, lanes i mod 8 of each), times
 * one token's eight inputs broadcast to both halves: the lane sums of the 8-wide tile, two rows
 * per register. The tile is 8 rows x 6 tokens (24 accumulators; per 8 inputs, 4 row pairs and 6
 * token broadcasts loaded for 24 FMAs of 16 lanes); the halves then go through the same tree
 * (HSUM8X4) and tail. */
#if LM_X512

/* One zero-cost-when-unsupported check, the first time a kernel needs it. */
static int x512_ok(void)
{
    static int ok = -1;
    int v = __atomic_load_n(&ok, __ATOMIC_RELAXED);
    if (v < 0) {
        __builtin_cpu_init();
        v = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
            __builtin_cpu_supports("avx512vl");
        __atomic_store_n(&ok, v, __ATOMIC_RELAXED);
    }
    return v;
}

#define X_ROWS 8 /* rows of a W (out, in) tile */
#define X_TOKS 6 /* tokens of a W (out, in) tile */

/* out[c * ldo + r] = b[r] + w_r . x_c for r < 8, c < C (dot_4xC's sequence). */
#define X512_DOT(C)                                                                                \
    LM_AVX512 static void dot8_##C(const float *w, size_t ldw, const float *x, size_t ldx, int n,  \
                                   const float *b, float *out, size_t ldo)                         \
    {                                                                                              \
        __m512 acc[X_ROWS / 2][C];                                                                 \
        for (int r = 0; r < X_ROWS / 2; r++)                                                       \
            for (int c = 0; c < C; c++) acc[r][c] = _mm512_setzero_ps();                           \
        int i = 0;                                                                                 \
        for (; i + 8 <= n; i += 8) {                                                               \
            __m512 xv[C];                                                                          \
            for (int c = 0; c < C; c++)                                                            \
                xv[c] = _mm512_broadcast_f32x8(_mm256_loadu_ps(x + (size_t)c * ldx + (size_t)i));  \
            for (int r = 0; r < X_ROWS / 2; r++) {                                                 \
                const float *w0 = w + (size_t)(2 * r) * ldw + (size_t)i;                           \
                __m512 wv = _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(w0)),        \
                                               _mm256_loadu_ps(w0 + ldw), 1);                      \
                for (int c = 0; c < C; c++) acc[r][c] = _mm512_fmadd_ps(wv, xv[c], acc[r][c]);     \
            }                                                                                      \
        }                                                                                          \
        for (int c = 0; c < C; c++) {                                                              \
            v8 h[X_ROWS];                                                                          \
            for (int r = 0; r < X_ROWS / 2; r++) {                                                 \
                h[2 * r] = (v8)_mm512_castps512_ps256(acc[r][c]);                                  \
                h[2 * r + 1] = (v8)_mm512_extractf32x8_ps(acc[r][c], 1);                           \
            }                                                                                      \
            float *o = out + (size_t)c * ldo;                                                      \
            const float *xc = x + (size_t)c * ldx;                                                 \
            if (i == n)                                                                            \
                for (int q = 0; q < X_ROWS; q += 4) {                                              \
                    v4 s;                                                                          \
                    HSUM8X4(s, h[q], h[q + 1], h[q + 2], h[q + 3]);                                \
                    if (b) {                                                                       \
                        v4 bv;                                                                     \
                        memcpy(&bv, b + q, sizeof bv);                                             \
                        s += bv;                                                                   \
                    } else                                                                         \
                        s += 0.0f;                                                                 \
                    memcpy(o + q, &s, sizeof s);                                                   \
                }                                                                                  \
            else                                                                                   \
                for (int r = 0; r < X_ROWS; r++) {                                                 \
                    const float *wr = w + (size_t)r * ldw;                                         \
                    float s = HSUM8(h[r]);                                                         \
                    for (int k = i; k < n; k++) s = DOT_FMA(wr[k], xc[k], s);                      \
                    o[r] = s + (b ? b[r] : 0.0f);                                                  \
                }                                                                                  \
        }                                                                                          \
    }

X512_DOT(6)
X512_DOT(5)
X512_DOT(4)
X512_DOT(3)
X512_DOT(2)
X512_DOT(1)

static dot_fn *const dot8_tile[X_TOKS + 1] = {NULL, dot8_1, dot8_2, dot8_3, dot8_4, dot8_5, dot8_6};

/* Rows r0..r1-1 of W, eight at a time against every token (six at a time); the last rows
 * (fewer than eight) by dot_block's tiles, which take the same sequence. */
static void dot_block512(const lin_job *j, size_t r0, size_t r1)
{
    const lm_linear *L = j->L;
    size_t in = (size_t)L->in, O = (size_t)L->out, r = r0;
    int groups = (j->T + X_TOKS - 1) / X_TOKS;
    for (; r + X_ROWS <= r1; r += X_ROWS) {
        const float *w = L->w + r * L->ld, *b = L->b ? L->b + r : NULL;
        /* the next eight rows, a slice per token group (see dot_block) */
        size_t nb = X_ROWS * L->ld * sizeof(float), step = (nb / (size_t)groups + 63) & ~(size_t)63;
        uintptr_t nx = (uintptr_t)(w + X_ROWS * L->ld);
        for (int t = 0, g = 0; t < j->T; t += X_TOKS, g++) {
            for (size_t o = (size_t)g * step; o < (size_t)(g + 1) * step && o < nb; o += 64)
                __builtin_prefetch((const void *)(nx + o), 0, 2);
            dot8_tile[j->T - t < X_TOKS ? j->T - t : X_TOKS](
                w, L->ld, j->x + (size_t)t * in, in, L->in, b, j->out + (size_t)t * O + r, O);
        }
    }
    if (r < r1) dot_block(j, r, r1);
}

/* Items are groups of X_ROWS outputs (the last may be short). */
static void lin_rows512(void *ctx, size_t g0, size_t g1)
{
    const lin_job *j = ctx;
    size_t r1 = g1 * X_ROWS;
    if (r1 > (size_t)j->L->out) r1 = (size_t)j->L->out;
    dot_block512(j, g0 * X_ROWS, r1);
}

#endif

/* ---- packed panels: the layers' linears -----------------------------------------------------
 *
 * W packed once at load (lm_linear_pack): panel q holds outputs 32q..32q+31 as `in` rows of 32
 * floats, zeros past `out`. An output is x[0] w[0] + x[1] w[1] + ... in input order, one fused
 * multiply-add per input from zero, then + bias: the same sequence in every tile below, so a
 * prompt of T tokens gives one token at a time's bits. A tile holds its accumulators over all
 * the inputs (no k-blocks: a panel is in x 128 bytes, at most 384 KiB for in = 3072, read from
 * L2 by the token groups after the first). */
#define PW 32 /* outputs of a panel */

size_t lm_linear_packed_floats(int in, int out)
{
    return (size_t)((out + PW - 1) / PW) * PW * (size_t)in;
}

void lm_linear_pack(lm_linear *L, float *dst)
{
    size_t in = (size_t)L->in, O = (size_t)L->out, np = (O + PW - 1) / PW;
    for (size_t q = 0; q < np; q++) {
        float *d = dst + q * in * PW;
        size_t n = O - q * PW < PW ? O - q * PW : PW; /* outputs in this panel */
        if (n < PW)
            for (size_t i = 0; i < in; i++) memset(d + i * PW + n, 0, (PW - n) * sizeof *d);
        if (L->t) /* (in, out): a row's n floats at a time */
            for (size_t i = 0; i < in; i++)
                memcpy(d + i * PW, L->w + i * L->ld + q * PW, n * sizeof *d);
        else /* (out, in): row o read in order, written down the panel's column */
            for (size_t c = 0; c < n; c++) {
                const float *r = L->w + (q * PW + c) * L->ld;
                for (size_t i = 0; i < in; i++) d[i * PW + c] = r[i];
            }
    }
    L->p = dst;
}

/* The portable tile: 32 outputs (four 8-wide vectors) x C tokens; the `cols` first outputs
 * stored. Built for x86-64-v3 (AVX2 + FMA) and the baseline (LM_GEMM); acc += x w contracts to
 * one FMA where the CPU has it. */
#define GEN_PAN(C)                                                                                 \
    LM_GEMM static void gpan_##C(const float *w, const float *x, size_t ldx, int n,                \
                                 const float *b, float *out, size_t ldo, int cols)                 \
    {                                                                                              \
        v8 acc[C][4];                                                                              \
        for (int c = 0; c < C; c++)                                                                \
            for (int v = 0; v < 4; v++) acc[c][v] = (v8){0};                                       \
        for (int i = 0; i < n; i++) {                                                              \
            v8 wv[4];                                                                              \
            for (int v = 0; v < 4; v++) wv[v] = LD8(w + (size_t)i * PW + 8 * (size_t)v);           \
            for (int c = 0; c < C; c++) {                                                          \
                float xs = x[(size_t)c * ldx + (size_t)i];                                         \
                for (int v = 0; v < 4; v++) acc[c][v] += xs * wv[v];                               \
            }                                                                                      \
        }                                                                                          \
        for (int c = 0; c < C; c++) {                                                              \
            float t[PW];                                                                           \
            for (int v = 0; v < 4; v++) ST8(t + 8 * v, acc[c][v]);                                 \
            float *o = out + (size_t)c * ldo;                                                      \
            for (int k = 0; k < cols; k++) o[k] = b ? t[k] + b[k] : t[k];                          \
        }                                                                                          \
    }

GEN_PAN(3)
GEN_PAN(2)
GEN_PAN(1)

#define GTOKS 3
typedef void gpan_fn(const float *, const float *, size_t, int, const float *, float *, size_t,
                     int);
static gpan_fn *const gpan_tile[GTOKS + 1] = {NULL, gpan_1, gpan_2, gpan_3};

/* Panels q0..q1-1 of every token, up to max tokens at a time by tile[count] (the portable tiles
 * or the AVX-512 ones). */
static void pan_block(const lin_job *j, size_t q0, size_t q1, gpan_fn *const *tile, int max)
{
    const lm_linear *L = j->L;
    size_t in = (size_t)L->in, O = (size_t)L->out;
    for (size_t q = q0; q < q1; q++) {
        const float *w = L->p + q * in * PW, *b = L->b ? L->b + q * PW : NULL;
        int cols = O - q * PW < PW ? (int)(O - q * PW) : PW;
        for (int t = 0; t < j->T; t += max)
            tile[j->T - t < max ? j->T - t : max](w, j->x + (size_t)t * in, in, L->in, b,
                                                  j->out + (size_t)t * O + q * PW, O, cols);
    }
}

#if LM_X512
/* AVX-512: 32 outputs (two registers) x C tokens (up to 12: 24 accumulators; per input two
 * weight loads and C broadcasts for 2C FMAs), the last panel's outputs masked. 194 to 211
 * GFLOP/s on one core of the project's machine for the 125M models' shapes at 128 tokens (the
 * first line of `pelab bench --only real`, lm_linear_gflops), where packing W per call managed
 * about half. */
#define X512_PAN(C)                                                                                \
    LM_AVX512 static void pan_##C(const float *w, const float *x, size_t ldx, int n,               \
                                  const float *b, float *out, size_t ldo, int cols)                \
    {                                                                                              \
        __mmask16 m0 = cols >= 16 ? 0xFFFF : (__mmask16)((1u << cols) - 1),                        \
                  m1 = cols >= 32   ? 0xFFFF                                                       \
                       : cols <= 16 ? 0                                                            \
                                    : (__mmask16)((1u << (cols - 16)) - 1);                        \
        __m512 a0[C], a1[C];                                                                       \
        for (int c = 0; c < C; c++) a0[c] = a1[c] = _mm512_setzero_ps();                           \
        for (int i = 0; i < n; i++) {                                                              \
            __m512 w0 = _mm512_load_ps(w + (size_t)i * PW),                                        \
                   w1 = _mm512_load_ps(w + (size_t)i * PW + 16);                                   \
            for (int c = 0; c < C; c++) {                                                          \
                __m512 xs = _mm512_set1_ps(x[(size_t)c * ldx + (size_t)i]);                        \
                a0[c] = _mm512_fmadd_ps(xs, w0, a0[c]);                                            \
                a1[c] = _mm512_fmadd_ps(xs, w1, a1[c]);                                            \
            }                                                                                      \
        }                                                                                          \
        for (int c = 0; c < C; c++) {                                                              \
            if (b) {                                                                               \
                a0[c] = _mm512_add_ps(a0[c], _mm512_maskz_loadu_ps(m0, b));                        \
                a1[c] = _mm512_add_ps(a1[c], _mm512_maskz_loadu_ps(m1, b + 16));                   \
            }                                                                                      \
            _mm512_mask_storeu_ps(out + (size_t)c * ldo, m0, a0[c]);                               \
            _mm512_mask_storeu_ps(out + (size_t)c * ldo + 16, m1, a1[c]);                          \
        }                                                                                          \
    }

X512_PAN(12)
X512_PAN(11)
X512_PAN(10)
X512_PAN(9)
X512_PAN(8)
X512_PAN(7)
X512_PAN(6)
X512_PAN(5)
X512_PAN(4)
X512_PAN(3)
X512_PAN(2)
X512_PAN(1)

#define XTOKS 12
static gpan_fn *const pan_tile[XTOKS + 1] = {NULL,  pan_1, pan_2, pan_3,  pan_4,  pan_5, pan_6,
                                             pan_7, pan_8, pan_9, pan_10, pan_11, pan_12};

/* Decoding (one token): four panels at once, eight chains of FMAs and four memory streams, the
 * rows 16 ahead asked for (each panel is contiguous, but a stream's 4 KiB pages are where the
 * hardware prefetchers stop). pan_1's sequence per output. */
LM_AVX512 static void pan_dec4(const float *w, size_t ps, const float *x, int n, const float *b,
                               float *out)
{
    __m512 a[8];
    for (int v = 0; v < 8; v++) a[v] = _mm512_setzero_ps();
    for (int i = 0; i < n; i++) {
        __m512 xs = _mm512_set1_ps(x[i]);
        for (int q = 0; q < 4; q++) {
            const float *r = w + (size_t)q * ps + (size_t)i * PW;
            __builtin_prefetch(r + 16 * PW, 0, 0);
            __builtin_prefetch(r + 16 * PW + 16, 0, 0);
            a[2 * q] = _mm512_fmadd_ps(xs, _mm512_load_ps(r), a[2 * q]);
            a[2 * q + 1] = _mm512_fmadd_ps(xs, _mm512_load_ps(r + 16), a[2 * q + 1]);
        }
    }
    for (int v = 0; v < 8; v++) {
        if (b) a[v] = _mm512_add_ps(a[v], _mm512_loadu_ps(b + 16 * v));
        _mm512_storeu_ps(out + 16 * v, a[v]);
    }
}

/* Decoding four panels at a time where it can, then the tiles. */
static void pan_block512(const lin_job *j, size_t q0, size_t q1)
{
    const lm_linear *L = j->L;
    size_t in = (size_t)L->in, O = (size_t)L->out, q = q0;
    if (j->T == 1)
        for (; q + 4 <= q1 && (q + 4) * PW <= O; q += 4)
            pan_dec4(L->p + q * in * PW, in * PW, j->x, L->in, L->b ? L->b + q * PW : NULL,
                     j->out + q * PW);
    pan_block(j, q, q1, pan_tile, XTOKS);
}
#endif

/* Items are panels; decoding takes four at a time (pan_dec4). */
static void pan_items(void *ctx, size_t q0, size_t q1)
{
    const lin_job *j = ctx;
#if LM_X512
    if (x512_ok()) {
        pan_block512(j, q0, q1);
        return;
    }
#endif
    pan_block(j, q0, q1, gpan_tile, GTOKS);
}

void lm_linear_apply(const lm_linear *L, const float *x, int T, float *out, int threads)
{
    lin_job j = {L, x, T, out};
    if (L->p) {
        pool_run(threads, ((size_t)L->out + PW - 1) / PW, T == 1 ? 4 : 1, pan_items, &j);
        return;
    }
    /* W (out, in) in place: the output head */
    size_t items, grain;
#if LM_X512
    if (T > 1 && x512_ok()) {
        items = ((size_t)L->out + X_ROWS - 1) / X_ROWS;
        grain = 8192 / (X_ROWS * ((size_t)L->in + 1)) + 1;
        pool_run(threads, items, grain, lin_rows512, &j);
        return;
    }
#endif
    /* items of ROWS rows; chunks of ~32 KiB of weights: small enough to balance, large enough to
     * amortise the hand-out */
    items = ((size_t)L->out + ROWS - 1) / ROWS;
    grain = 8192 / (ROWS * ((size_t)L->in + 1)) + 1;
    pool_run(threads, items, grain, lin_rows, &j);
}

double lm_linear_gflops(int in, int out, int tokens, int threads)
{
    size_t pn = lm_linear_packed_floats(in, out);
    float *w = malloc((size_t)in * (size_t)out * sizeof *w), *p = pe_floats_map(pn);
    float *x = malloc((size_t)tokens * (size_t)in * sizeof *x);
    float *y = malloc((size_t)tokens * (size_t)out * sizeof *y);
    double best = 0.0;
    if (w && p && x && y) {
        uint32_t r = 12345;
        for (size_t i = 0; i < (size_t)in * (size_t)out; i++)
            w[i] = (float)((r = r * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
        for (size_t i = 0; i < (size_t)tokens * (size_t)in; i++)
            x[i] = (float)((r = r * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
        lm_linear L = {.w = w, .in = in, .out = out, .ld = (size_t)in};
        lm_linear_pack(&L, p);
        lm_linear_apply(&L, x, tokens, y, threads); /* warm: panels and x in cache as in a pass */
        for (int k = 0; k < 5; k++) {
            struct timespec a, b;
            clock_gettime(CLOCK_MONOTONIC, &a);
            lm_linear_apply(&L, x, tokens, y, threads);
            clock_gettime(CLOCK_MONOTONIC, &b);
            double t = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
            double g = 2.0 * in * (double)out * tokens / t / 1e9;
            if (t > 0 && g > best) best = g;
        }
    }
    free(w);
    pe_floats_unmap(p, pn);
    free(x);
    free(y);
    return best;
}

/* ---- attention ------------------------------------------------------------------------------ */

/* The dot product of the W (out, in) layout, one pair of vectors: the same sequence as a tile's
 * output (lanes, tree, tail). */
#define ATT_DOT(R)                                                                                 \
    LM_GEMM static void att_dot##R(const float *q, const float *k, size_t ks, int hd, float scale, \
                                   float *p)                                                       \
    {                                                                                              \
        v8 acc[R];                                                                                 \
        for (int r = 0; r < R; r++) acc[r] = (v8){0};                                              \
        int i = 0;                                                                                 \
        for (; i + 8 <= hd; i += 8) {                                                              \
            v8 qv = LD8(q + i);                                                                    \
            for (int r = 0; r < R; r++) acc[r] += qv * LD8(k + (size_t)r * ks + (size_t)i);        \
        }                                                                                          \
        if (R == 4 && i == hd) { /* no tail: the four keys as one vector */                        \
            v4 s;                                                                                  \
            HSUM8X4(s, acc[0], acc[R > 1 ? 1 : 0], acc[R > 2 ? 2 : 0], acc[R > 3 ? 3 : 0]);        \
            s *= scale;                                                                            \
            memcpy(p, &s, sizeof s);                                                               \
            return;                                                                                \
        }                                                                                          \
        for (int r = 0; r < R; r++) {                                                              \
            float s = HSUM8(acc[r]);                                                               \
            for (int m = i; m < hd; m++) s += q[m] * k[(size_t)r * ks + (size_t)m];                \
            p[r] = s * scale;                                                                      \
        }                                                                                          \
    }

ATT_DOT(4)
ATT_DOT(1)

void lm_attn_scores(const float *q, const float *k0, size_t kstride, int n, int hd, float scale,
                    float *p)
{
    int j = 0;
    for (; j + 4 <= n; j += 4) att_dot4(q, k0 + (size_t)j * kstride, kstride, hd, scale, p + j);
    for (; j < n; j++) att_dot1(q, k0 + (size_t)j * kstride, kstride, hd, scale, p + j);
}

/* o[i] = sum_j p[j] v_j[i], j in order from zero (one FMA per term), 32 components at a time
 * held in registers over all j (o in memory would be a load and a store per term), then 8 at a
 * time, then one at a time: the same sequence per component whichever block it falls in. */
LM_GEMM void lm_attn_mix(const float *p, const float *v0, size_t vstride, int n, int hd, float *o)
{
    int i = 0;
    for (; i + 32 <= hd; i += 32) {
        v8 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
        for (int j = 0; j < n; j++) {
            const float *vj = v0 + (size_t)j * vstride + (size_t)i;
            float pj = p[j];
            a0 += pj * LD8(vj);
            a1 += pj * LD8(vj + 8);
            a2 += pj * LD8(vj + 16);
            a3 += pj * LD8(vj + 24);
        }
        ST8(o + i, a0);
        ST8(o + i + 8, a1);
        ST8(o + i + 16, a2);
        ST8(o + i + 24, a3);
    }
    for (; i + 8 <= hd; i += 8) {
        v8 a = {0};
        for (int j = 0; j < n; j++) a += p[j] * LD8(v0 + (size_t)j * vstride + (size_t)i);
        ST8(o + i, a);
    }
    for (; i < hd; i++) {
        float a = 0.0f;
        for (int j = 0; j < n; j++) a += p[j] * v0[(size_t)j * vstride + (size_t)i];
        o[i] = a;
    }
}

/* ---- activations ---------------------------------------------------------------------------- */

typedef int v8i __attribute__((vector_size(32)));

/* e^x, lane by lane: x clamped to [-87, 88] (e^-87 = 1.6e-38 stands for zero in the 1 / (1 + e)
 * forms below, and e^88 = 1.7e38 for infinity), x = n ln2 + r with |r| <= ln2 / 2 (ln2 in two
 * parts, Cody and Waite), e^r by Cephes' expf polynomial (relative error about 1e-7), times 2^n
 * put into the exponent bits. Every lane takes the same operations, so an element's value does
 * not depend on where it falls in a vector. */
#define VEXP(out, xin)                                                                             \
    do {                                                                                           \
        v8 x_ = (xin);                                                                             \
        v8i lo_ = x_<-87.0f, hi_ = x_> 88.0f;                                                      \
        x_ = (v8)(((v8i)x_ & ~lo_) | ((v8i)((v8){0} - 87.0f) & lo_));                              \
        x_ = (v8)(((v8i)x_ & ~hi_) | ((v8i)((v8){0} + 88.0f) & hi_));                              \
        v8 n_ = (x_ * 1.44269504088896341f + 12582912.0f) - 12582912.0f; /* round to nearest */    \
        v8 r_ = x_ - n_ * 0.693359375f;                                                            \
        r_ = r_ + n_ * 2.12194440e-4f;                                                             \
        v8 p_ = 1.9875691500e-4f * r_ + 1.3981999507e-3f;                                          \
        p_ = p_ * r_ + 8.3334519073e-3f;                                                           \
        p_ = p_ * r_ + 4.1665795894e-2f;                                                           \
        p_ = p_ * r_ + 1.6666665459e-1f;                                                           \
        p_ = p_ * r_ + 5.0000001201e-1f;                                                           \
        p_ = p_ * (r_ * r_) + r_ + 1.0f;                                                           \
        v8i b_ = (__builtin_convertvector(n_, v8i) + 127) << 23;                                   \
        (out) = p_ * (v8)b_;                                                                       \
    } while (0)

/* GPT-2's GELU (tanh form): 0.5 x (1 + tanh(u)) = x / (1 + e^(-2u)), u = sqrt(2/pi) (x + 0.044715
 * x^3); and Llama's SwiGLU: g / (1 + e^-g) * up. The last n mod 8 elements go through the same
 * vector code, padded. */
#define ACT_GELU(y, x)                                                                             \
    do {                                                                                           \
        v8 u_ = 0.7978845608028654f * ((x) + 0.044715f * (x) * (x) * (x)), e2_;                    \
        VEXP(e2_, -2.0f * u_);                                                                     \
        (y) = (x) / (1.0f + e2_);                                                                  \
    } while (0)

LM_GEMM void lm_gelu(float *y, const float *x, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        v8 a = LD8(x + i), r;
        ACT_GELU(r, a);
        ST8(y + i, r);
    }
    if (i < n) {
        float buf[8] = {0};
        memcpy(buf, x + i, (n - i) * sizeof *buf);
        v8 a = LD8(buf), r;
        ACT_GELU(r, a);
        ST8(buf, r);
        memcpy(y + i, buf, (n - i) * sizeof *buf);
    }
}

#define ACT_SILU_MUL(g, u)                                                                         \
    do {                                                                                           \
        v8 e_;                                                                                     \
        VEXP(e_, -(g));                                                                            \
        (g) = (g) / (1.0f + e_) * (u);                                                             \
    } while (0)

LM_GEMM void lm_silu_mul(float *g, const float *up, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        v8 a = LD8(g + i), b = LD8(up + i);
        ACT_SILU_MUL(a, b);
        ST8(g + i, a);
    }
    if (i < n) {
        float ga[8] = {0}, ub[8] = {0};
        memcpy(ga, g + i, (n - i) * sizeof *ga);
        memcpy(ub, up + i, (n - i) * sizeof *ub);
        v8 a = LD8(ga), b = LD8(ub);
        ACT_SILU_MUL(a, b);
        ST8(ga, a);
        memcpy(g + i, ga, (n - i) * sizeof *ga);
    }
}
