/* decay.c: how much a query at p0 "sees" a key at p, for several encodings on one axis (seed
 * 004's figure: d 128, L 256, p0 128). Every curve is divided by its value at p = p0, so the
 * shapes compare even though the raw scales differ:
 *   table encodings    PE(p0).PE(p) / PE(p0).PE(p0)
 *   RoPE (ones)        <R_p0 1, R_p 1> / <R_p0 1, R_p0 1>   (depends only on p0 - p)
 *   RoPE (random q,k)  <R_p0 q, R_p k> / (|q||k|)      (not 1 at p0: q.k/(|q||k|) there)
 *   RoPE bound         B(|p0 - p|) / B(0)             (RoFormer 3.4.3)
 *   ALiBi              exp(-m (p0 - p)): the factor the bias multiplies attention by
 *   xPos               RoPE (ones) with every pair damped by zeta_k^((p0-p)/scale)
 *   RoPE (Gaussian)    the mean and standard deviation over DECAY_GAUSS_DRAWS seeded draws of
 *                      q, k ~ N(0, I) of <R_p0 q, R_p k> / (|q||k|): Barbero et al. 2024 ("Round
 *                      and Round We Go", Fig. 2): the mean is 0 at every distance and the spread
 *                      does not shrink, so RoPE attention does not decay by itself; the decay
 *                      of the q = k = 1 curve and of the bound is a property of those vectors
 * An attention factor a (YaRN, --attn-factor) scales the rotated pairs' part of a score by a^2
 * and leaves the d - rotary_dim unrotated dimensions alone, so the ones curves are 1 at p0 only
 * when divided by their own value there, 2 a^2 (rotary_dim/2) + (d - rotary_dim); the xPos curve
 * counts the unrotated dimensions like the RoPE one and the xpos view. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "trained.h"
#include "views.h"

static const char *const curve_label[APP_CURVE_COUNT] = {
    "sinusoidal",      "learned",         "binary",       "RoPE (q=k=1)",   "RoPE (random q,k)",
    "RoPE bound B(r)", "ALiBi exp(bias)", "xPos (q=k=1)", "RoPE (Gaussian)"};
/* The same in a legend outside a small plot (a paper column, 300x200 px), where the long names
 * took three rows of a strip above it, or half the width beside it: the subtitle says what is
 * divided by what, the readout keeps the long names. */
static const char *const curve_short[APP_CURVE_COUNT] = {"sinusoidal", "learned",    "binary",
                                                         "RoPE q=k=1", "RoPE rand.", "RoPE B(r)",
                                                         "ALiBi",      "xPos",       "RoPE Gauss."};

/* Draws of the Gaussian curve: the spread of a mean of 32 is a sixth of one draw's. */
#define DECAY_GAUSS_DRAWS 32
#define CURVE_GAUSS       8

static int decay_validate(const app_state *st, char *err, size_t errlen)
{
    if (st->decay.curves & (APP_CURVE_SINUSOIDAL | APP_CURVE_ROPE | APP_CURVE_ROPE_RANDOM |
                            APP_CURVE_ROPE_BOUND | APP_CURVE_XPOS | APP_CURVE_ROPE_GAUSS))
        if (pe_check_dim(st->p.dim, 1, err, errlen) < 0) return -1;
    if (pe_check_len(st->p.len, err, errlen) < 0) return -1;
    if (pe_check_base(st->p.base, err, errlen) < 0) return -1;
    /* no table size here: the sinusoid and the RoPE family are swept at the figure's
     * resolution and the trained learned curve is one value per position (issue 25: a 10M
     * context loads); the tables a seeded learned or the binary curve builds meet the memory
     * budget when they are made, with its sizes and --max-memory */
    return 0;
}

/* Table dot products against row p0, normalised. */
static int table_curve(const char *name, const app_state *st, double *y, char *err, size_t errlen)
{
    const pe_encoding *e = pe_encoding_find(name);
    pe_matrix tab = {0};
    if (!e || e->table(&st->p, &tab, err, errlen) < 0) return -1;
    size_t p0 = (size_t)app_state_p0(st);
    pe_dot_decay(&tab, p0, y);
    double y0 = y[p0];
    for (int i = 0; i < st->p.len; i++) y[i] = y0 != 0 ? y[i] / y0 : 0;
    pe_matrix_free(&tab);
    return 0;
}

/* sum_k a_k cos_k + b_k sin_k, then every (cos_k, sin_k) advanced by the step's rotation, in
 * four running sums that the compiler can keep in vector registers (the order of the additions
 * differs from a plain loop by rounding only). */
static double score_step(int np, const double *restrict a, const double *restrict b,
                         double *restrict cs, double *restrict sn, const double *restrict c1,
                         const double *restrict s1)
{
    double v[4] = {0, 0, 0, 0};
    int k = 0;
    for (; k + 4 <= np; k += 4)
        for (int u = 0; u < 4; u++) {
            double c = cs[k + u], sv = sn[k + u];
            v[u] += a[k + u] * c + b[k + u] * sv;
            cs[k + u] = c * c1[k + u] - sv * s1[k + u];
            sn[k + u] = sv * c1[k + u] + c * s1[k + u];
        }
    for (; k < np; k++) {
        double c = cs[k], sv = sn[k];
        v[0] += a[k] * c + b[k] * sv;
        cs[k] = c * c1[k] - sv * s1[k];
        sn[k] = sv * c1[k] + c * s1[k];
    }
    return (v[0] + v[2]) + (v[1] + v[3]);
}

/* The RoPE-family curves (and the sinusoidal one, which is sum_k cos((p0 - p) w_k) / (d/2):
 * PE(p0).PE(p) pairs sin*sin + cos*cos) at the positions p = p0 + (j - kb) * stride for
 * j = 0 .. kb + kf, in one pass per direction (one pass for the curves even in p0 - p): every
 * pair's (cos r theta_k, sin r theta_k) advances by a rotation of stride positions instead of a
 * sin/cos call, re-anchored with exact values every 256 steps (error stays near 1e-13); the
 * bound, whose square roots dominate, runs eight distances at a time (pe_rope_decay_bound_curve).
 * which: 0 sinusoidal, 3 ones, 4 random q,k, 5 the decay bound, 7 xPos. The same quantities as
 * pe_rope_score_curve, pe_rope_decay_bound and pe_xpos_decay; tests/app/test_views_numbers.c checks
 * them against those, and the figure's sample (stride > 1) against the full curve. */
static int rope_sweep(const app_state *st, int which, int stride, int kb, int kf, double *y,
                      char *err, size_t errlen)
{
    const pe_params *p = &st->p;
    int d = p->dim;
    int rd = which == 0 ? d - d % 2 : pe_rope_rotary_dim(p), np = rd / 2;
    double *buf = malloc(sizeof *buf * ((size_t)np * 9 + (size_t)d * 2));
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double *inv = buf, *cs = inv + np, *sn = cs + np, *a = sn + np, *b = a + np, *z = b + np,
           *zs = z + np, *c1 = zs + np, *s1 = c1 + np, *q = s1 + np, *k = q + d;
    double attn = 1, nq = 0, nk = 0, rest = 0;
    pe_params pp = *p;
    if (which == 0) { /* PE(p0).PE(p) / PE(p0).PE(p0) = sum_k cos(r w_k) / np */
        for (int kk = 0; kk < np; kk++) {
            inv[kk] = pe_sin_freq(p, kk);
            a[kk] = 1;
            b[kk] = 0;
        }
        nq = nk = np;
    } else {
        if (pe_rope_inv_freq(p, inv, &attn, err, errlen) < 0) {
            free(buf);
            return -1;
        }
        /* the score of a pair at distance r = m - n is A cos(r theta) + B sin(r theta) */
        pe_rope_qk(d, which == 4 ? p->seed : UINT64_MAX, q, k); /* UINT64_MAX: all ones */
        for (int i = 0; i < d; i++) {
            nq += q[i] * q[i];
            nk += k[i] * k[i];
        }
        for (int kk = 0; kk < np; kk++) {
            int i0, i1;
            pe_rope_pair(&pp, kk, &i0, &i1);
            a[kk] = (q[i0] * k[i0] + q[i1] * k[i1]) * attn * attn;
            b[kk] = (q[i0] * k[i1] - q[i1] * k[i0]) * attn * attn;
        }
        /* dimensions past the rotary part pass through (one pass over the pairs marks the
         * rotated ones: a pair search per dimension would cost d^2/2 at d 4096) */
        unsigned char *rot = calloc((size_t)d, 1);
        if (!rot) {
            free(buf);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        for (int kk = 0; kk < np; kk++) {
            int i0, i1;
            pe_rope_pair(&pp, kk, &i0, &i1);
            rot[i0] = rot[i1] = 1;
        }
        for (int i = 0; i < d; i++)
            if (!rot[i]) rest += q[i] * k[i];
        free(rot);
    }
    /* the ones curves (3, 7) divide by their value at p0; the random one by |q||k| */
    double norm = sqrt(nq * nk);
    if (which != 4) {
        norm = rest;
        for (int kk = 0; kk < np; kk++) norm += a[kk];
    }
    if (!(norm > 0)) norm = 1;
    /* The sinusoid, RoPE with q = k = 1 (b = 0) and the bound are even in r = p0 - p: one
     * direction is computed, out to the farther end, and put on both sides (the other side's
     * sweep would give the same bits: cos(-x) = cos x, sin(-x) = -sin x exactly). */
    int even = which == 0 || which == 3 || which == 5;
    if (which == 5) {
        int m = kb > kf ? kb : kf;
        double b0 = pe_rope_decay_bound(inv, np, 0);
        double *bnd = malloc(sizeof *bnd * ((size_t)m + 1));
        if (!bnd || pe_rope_decay_bound_curve(inv, np, stride, m + 1, bnd, err, errlen) != PE_OK) {
            if (!bnd) snprintf(err, errlen, "out of memory");
            free(bnd);
            free(buf);
            return -1;
        }
        for (int j = 0; j <= m; j++) {
            if (j <= kb) y[kb - j] = bnd[j] / b0;
            if (j <= kf) y[kb + j] = bnd[j] / b0;
        }
        free(bnd);
        free(buf);
        return 0;
    }
    for (int dir = 1; dir >= -1; dir -= 2) {
        /* step j from 0 away from p0: back to p0 - kb*stride, then forward to p0 + kf*stride */
        int jmax = dir > 0 ? kb : kf;
        if (even) {
            if (dir < 0) break;
            jmax = kb > kf ? kb : kf;
        }
        double step = (double)dir * stride;
        for (int kk = 0; kk < np; kk++) {
            cs[kk] = 1;
            sn[kk] = 0;
            z[kk] = 1;
            zs[kk] = which == 7 ? pow(pe_xpos_zeta(p, kk), step / p->xpos_scale_base) : 1;
            c1[kk] = cos(step * inv[kk]); /* one step's rotation */
            s1[kk] = sin(step * inv[kk]);
        }
        for (int j = 0; j <= jmax; j++) {
            double rr = step * j;
            if (j % 256 == 0)
                for (int kk = 0; kk < np; kk++) {
                    cs[kk] = cos(rr * inv[kk]);
                    sn[kk] = sin(rr * inv[kk]);
                    if (which == 7) z[kk] = pe_xpos_decay(p, kk, rr);
                }
            double v = 0;
            if (which == 0 || which == 3 || which == 4) {
                /* the score and the step in one pass (this loop is the view's cost) */
                v = (score_step(np, a, b, cs, sn, c1, s1) + rest) / norm;
                if (even) {
                    if (j <= kb) y[kb - j] = v;
                    if (j <= kf) y[kb + j] = v;
                } else {
                    y[kb - dir * j] = v;
                }
                continue;
            }
            /* xPos with q = k = 1: a[kk] = 2 attn^2, b[kk] = 0; four running sums as in
             * score_step, and every pair advanced by one step in the same pass */
            double acc[4] = {0, 0, 0, 0};
            for (int kk = 0; kk < np; kk++) {
                double c = cs[kk], sv = sn[kk];
                acc[kk & 3] += a[kk] * c * z[kk];
                cs[kk] = c * c1[kk] - sv * s1[kk];
                sn[kk] = sv * c1[kk] + c * s1[kk];
                z[kk] *= zs[kk];
            }
            v = ((acc[0] + acc[2]) + (acc[1] + acc[3]) + rest) / norm;
            y[kb - dir * j] = v;
        }
    }
    free(buf);
    return 0;
}

/* The seeded draws of the Gaussian curve: draw i's q and k (d doubles each) at
 * qk + 2 d i. Its seed is splitmix64 of (--seed, i), never UINT64_MAX's all-ones meaning by
 * accident, so the figure is the same on every run. The draws depend on d and the seed alone, so
 * they are cached (slot GAUSS_SLOT): turning the base or a scaling knob does not draw again. */
#define GAUSS_SLOT (APP_CURVE_COUNT + 3)
static const double *gauss_draws(app_view_ctx *c, const app_state *st, char *err, size_t errlen)
{
    struct {
        uint64_t seed;
        int dim;
    } key;
    memset(&key, 0, sizeof key);
    key.seed = st->p.seed;
    key.dim = st->p.dim;
    double *qk = app_cache_get(c, GAUSS_SLOT, &key, sizeof key);
    if (qk) return qk;
    size_t d = (size_t)st->p.dim;
    qk = app_cache_put(c, GAUSS_SLOT, &key, sizeof key, sizeof *qk * 2 * d * DECAY_GAUSS_DRAWS);
    if (!qk) {
        snprintf(err, errlen, "%s", app_cache_error());
        return NULL;
    }
    for (int i = 0; i < DECAY_GAUSS_DRAWS; i++) {
        uint64_t z = st->p.seed + 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        pe_rope_qk(st->p.dim, (z ^ (z >> 31)) & ~(uint64_t)1, qk + 2 * d * (size_t)i,
                   qk + 2 * d * (size_t)i + d);
    }
    return qk;
}

/* Pairs per block of the Gaussian sweep: their coefficients for every draw (GAUSS_BLOCK x 2 x
 * DECAY_GAUSS_DRAWS doubles, 16 KiB) stay in the L1 cache while the block walks the positions. */
#define GAUSS_BLOCK 32

/* The gcc build of the draws' loop for AVX2 too (the loader picks; not under
 * ThreadSanitizer, which crashes on the ifunc resolvers): it is the view's whole cost. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define GAUSS_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GAUSS_CLONES
#endif

/* One position for a block of nb pairs: out[i] += sum_k ab[k][0][i] cs_k + ab[k][1][i] sn_k for
 * every draw i, then every pair's (cos, sin) advanced by one step's rotation in double (as
 * score_step, with the rotation shared by the draws: it was 32 times the work when each draw swept
 * alone). T is the type of the coefficients and of the block's sums: double for the data and the
 * exports, float for the explorer's frames (twice the lanes; the block's sum of 32 pairs is off
 * by ~1e-9 against values of ~0.02, far below a pixel), each block's sum added in double. */
#define GAUSS_STEP(NAME, T)                                                                        \
    GAUSS_CLONES static void NAME(int nb, const T *restrict ab, double *restrict cs,               \
                                  double *restrict sn, const double *restrict c1,                  \
                                  const double *restrict s1, double *restrict out)                 \
    {                                                                                              \
        T acc[DECAY_GAUSS_DRAWS];                                                                  \
        for (int i = 0; i < DECAY_GAUSS_DRAWS; i++) acc[i] = 0;                                    \
        for (int k = 0; k < nb; k++) {                                                             \
            T c = (T)cs[k], s = (T)sn[k];                                                          \
            const T *a = ab + (size_t)k * 2 * DECAY_GAUSS_DRAWS, *b = a + DECAY_GAUSS_DRAWS;       \
            for (int i = 0; i < DECAY_GAUSS_DRAWS; i++) acc[i] += a[i] * c + b[i] * s;             \
            double cd = cs[k], sd = sn[k];                                                         \
            cs[k] = cd * c1[k] - sd * s1[k];                                                       \
            sn[k] = sd * c1[k] + cd * s1[k];                                                       \
        }                                                                                          \
        for (int i = 0; i < DECAY_GAUSS_DRAWS; i++) out[i] += acc[i];                              \
    }
GAUSS_STEP(gauss_step, double)
GAUSS_STEP(gauss_step_f, float)
#undef GAUSS_STEP

/* The Gaussian curve at the positions of rope_sweep: y[0..n) the mean over the draws, y[n..2n)
 * their standard deviation (n = kb + kf + 1). Each draw's curve is rope_sweep's random q,k curve
 * (<R_p0 q, R_p k> / (|q||k|), the same recurrence re-anchored every 256 steps); all draws are
 * swept together, a block of pairs at a time, so each step's rotation is made once. f32: the
 * frame's sums in float (gauss_step_f); the data's and the exports' stay in double. */
static int gauss_sweep(app_view_ctx *c, const app_state *st, int stride, int kb, int kf, int f32,
                       double *y, char *err, size_t errlen)
{
    const pe_params *p = &st->p;
    const double *qk = gauss_draws(c, st, err, errlen);
    if (!qk) return -1;
    int d = p->dim, np = pe_rope_rotary_dim(p) / 2, nd = DECAY_GAUSS_DRAWS;
    size_t n = (size_t)kb + (size_t)kf + 1;
    /* ab: per pair, the draws' A then B; per position the draws' scores; the step's rotation */
    double *ab = malloc(sizeof *ab * ((size_t)np * 2 * nd + n * nd + (size_t)np * 5 + nd));
    unsigned char *rot = calloc((size_t)d, 1);
    if (!ab || !rot) {
        free(ab);
        free(rot);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double *sc = ab + (size_t)np * 2 * nd, *inv = sc + n * nd, *cs = inv + np, *sn = cs + np,
           *c1 = sn + np, *s1 = c1 + np, *rest = s1 + np, attn = 1;
    if (pe_rope_inv_freq(p, inv, &attn, err, errlen) < 0) {
        free(ab);
        free(rot);
        return -1;
    }
    pe_params pp = *p;
    for (int kk = 0; kk < np; kk++) {
        int i0, i1;
        pe_rope_pair(&pp, kk, &i0, &i1);
        rot[i0] = rot[i1] = 1;
    }
    for (int i = 0; i < nd; i++) {
        const double *q = qk + 2 * (size_t)d * (size_t)i, *k = q + d;
        double nq = 0, nk = 0, r = 0;
        for (int j = 0; j < d; j++) {
            nq += q[j] * q[j];
            nk += k[j] * k[j];
            if (!rot[j]) r += q[j] * k[j]; /* past the rotary part: passes through */
        }
        double norm = sqrt(nq * nk);
        if (!(norm > 0)) norm = 1;
        for (int kk = 0; kk < np; kk++) {
            int i0, i1;
            pe_rope_pair(&pp, kk, &i0, &i1);
            ab[(size_t)kk * 2 * nd + i] = (q[i0] * k[i0] + q[i1] * k[i1]) * attn * attn / norm;
            ab[(size_t)kk * 2 * nd + nd + i] = (q[i0] * k[i1] - q[i1] * k[i0]) * attn * attn / norm;
        }
        rest[i] = r / norm;
    }
    free(rot);
    float *abf = NULL;
    if (f32) {
        size_t nab = (size_t)np * 2 * nd;
        if (!(abf = malloc(sizeof *abf * nab))) {
            free(ab);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
        for (size_t i = 0; i < nab; i++) abf[i] = (float)ab[i];
    }
    memset(sc, 0, sizeof *sc * n * nd);
    for (int dir = 1; dir >= -1; dir -= 2) {
        /* step j from 0 away from p0: back to p0 - kb*stride, then forward to p0 + kf*stride
         * (p0 itself once, on the way back) */
        int jmax = dir > 0 ? kb : kf, j0 = dir > 0 ? 0 : 1;
        double step = (double)dir * stride;
        for (int k0 = 0; k0 < np; k0 += GAUSS_BLOCK) {
            int nb = np - k0 < GAUSS_BLOCK ? np - k0 : GAUSS_BLOCK;
            for (int kk = 0; kk < nb; kk++) {
                c1[kk] = cos(step * inv[k0 + kk]); /* one step's rotation */
                s1[kk] = sin(step * inv[k0 + kk]);
            }
            for (int j = j0; j <= jmax; j++) {
                if (j == j0 || j % 256 == 0) /* exact values now and then: error stays ~1e-13 */
                    for (int kk = 0; kk < nb; kk++) {
                        cs[kk] = cos(step * j * inv[k0 + kk]);
                        sn[kk] = sin(step * j * inv[k0 + kk]);
                    }
                double *out = sc + (size_t)(kb - dir * j) * nd;
                if (abf)
                    gauss_step_f(nb, abf + (size_t)k0 * 2 * nd, cs, sn, c1, s1, out);
                else
                    gauss_step(nb, ab + (size_t)k0 * 2 * nd, cs, sn, c1, s1, out);
            }
        }
    }
    for (size_t j = 0; j < n; j++) { /* the mean and the sample standard deviation, two passes */
        const double *v = sc + j * nd;
        double m = 0, s2 = 0;
        for (int i = 0; i < nd; i++) m += v[i] + rest[i];
        m /= nd;
        for (int i = 0; i < nd; i++) s2 += (v[i] + rest[i] - m) * (v[i] + rest[i] - m);
        y[j] = m;
        y[n + j] = sqrt(s2 / (nd - 1));
    }
    free(abf);
    free(ab);
    return 0;
}

/* The learned curve from the shipped learned model's trained table (issue 23; --weights init:
 * the seeded table as before): PE(p0).PE(p) / PE(p0).PE(p0) over the model's rows, NaN past
 * them, and past position 63 the rows training never reached. Cached in slot APP_CURVE_COUNT+1. */
static const double *trained_curve(app_view_ctx *c, const app_state *st, char *err, size_t errlen)
{
    const app_trained *t = app_trained_get(c, APP_CURVE_COUNT + 2, "learned", err, errlen);
    if (!t) return NULL;
    struct {
        int len, p0;
    } key = {st->p.len, app_state_p0(st)};
    double *y = app_cache_get(c, APP_CURVE_COUNT + 1, &key, sizeof key);
    if (y) return y;
    y = app_cache_put(c, APP_CURVE_COUNT + 1, &key, sizeof key, sizeof *y * (size_t)st->p.len);
    if (!y) {
        snprintf(err, errlen, "%s", app_cache_error());
        return NULL;
    }
    int rows = t->pos.rows, C = t->pos.cols, p0 = key.p0;
    const float *v = t->pos.values;
    double y0 = 0;
    for (int k = 0; p0 < rows && k < C; k++)
        y0 += (double)v[(size_t)p0 * C + k] * v[(size_t)p0 * C + k];
    for (int i = 0; i < st->p.len; i++) {
        double d = 0;
        for (int k = 0; i < rows && p0 < rows && k < C; k++)
            d += (double)v[(size_t)p0 * C + k] * v[(size_t)i * C + k];
        y[i] = i < rows && p0 < rows && y0 != 0 ? d / y0 : NAN;
    }
    return y;
}

/* The legend of curve w; xPos with partial rotary names the dimension zeta is taken over, where
 * torchscale (the full d) and lucidrains (the rotary dimension) differ. */
static const char *decay_label(const app_state *st, int w)
{
    if (w == 1) return st->attn.weights_init ? "learned (init)" : "learned (trained)";
    if (w == 7 && 2 * (pe_rope_rotary_dim(&st->p) / 2) < st->p.dim)
        return st->p.xpos_zeta_rotary ? "xPos (q=k=1, zeta over rotary dim: lucidrains)"
                                      : "xPos (q=k=1, zeta over full d: torchscale)";
    return curve_label[w];
}

/* An exported figure's RoPE-family curves take every position up to this many pair steps. */
#define DECAY_EXPORT_STEPS 268435456.0

/* RoPE's inverse frequencies are the sinusoid's (base^(-2k/d)), with no attention factor and
 * every dimension rotated. */
static int rope_is_sinusoid(const pe_params *p)
{
    return p->freq != PE_FREQ_FAIRSEQ && p->scaling.type == PE_SCALING_NONE &&
           p->rotary_frac >= 1 && p->dim % 2 == 0 && p->scaling.attention_factor <= 0;
}

/* Curves computed at any stride; the others (learned, binary: a table that no base changes;
 * ALiBi: L exponentials) are computed whole and picked from. */
static int sweeps(int which)
{
    return which == 0 || which == 3 || which == 4 || which == 5 || which == 7 ||
           which == CURVE_GAUSS;
}

/* Fill curve `which` (bit index) at the positions p0 + (j - kb) * stride, j = 0 .. kb + kf.
 * full: the sinusoidal curve from the table itself (the data export), not the closed form. */
static int decay_curve(app_view_ctx *c, const app_state *st, int which, int stride, int kb, int kf,
                       int full, double *y, char *err, size_t errlen)
{
    const pe_params *p = &st->p;
    int L = p->len, p0 = app_state_p0(st);
    if (which == 0 && full) return table_curve("sinusoidal", st, y, err, errlen);
    if (which == CURVE_GAUSS)
        return gauss_sweep(c, st, stride, kb, kf, !full && !c->full_res, y, err, errlen);
    if (sweeps(which)) return rope_sweep(st, which, stride, kb, kf, y, err, errlen);
    switch (which) {
    case 1:
        return table_curve("learned", st, y, err, errlen);
    case 2:
        return table_curve("binary", st, y, err, errlen);
    case 6: {
        double *slopes = malloc(sizeof *slopes * (size_t)p->heads);
        if (!slopes || pe_alibi_slopes(p->heads, p->slope_ratio, slopes, err, errlen) < 0) {
            free(slopes);
            return -1;
        }
        double m = slopes[st->head >= 0 ? st->head : 0];
        for (int i = 0; i < L; i++) {
            int rel = p0 - i;
            if (rel < 0 && !p->alibi_symmetric)
                y[i] = NAN; /* masked: the future is not attended */
            else
                y[i] = exp(-m * fabs((double)rel));
        }
        free(slopes);
        return 0;
    }
    }
    return -1;
}

/* The positions a figure samples: every stride-th from p0 both ways (stride 1: all of them). */
static void decay_grid(const app_state *st, int stride, int *kb, int *kf)
{
    int p0 = app_state_p0(st);
    *kb = p0 / stride;
    *kf = (st->p.len - 1 - p0) / stride;
}

/* Curve `which` at a stride (1 = every position), cached under the inputs it depends on (a
 * learned table does not change with the base, so turning the base does not regenerate it).
 * NULL with err on failure. */
static const double *decay_curve_cached(app_view_ctx *c, const app_state *st, int which, int stride,
                                        int full, char *err, size_t errlen)
{
    struct {
        int which, p0, head, stride, full;
        pe_params p;
    } key;
    if (which == 1 && !st->attn.weights_init) return trained_curve(c, st, err, errlen);
    if (!sweeps(which)) stride = 1;
    memset(&key, 0, sizeof key);
    key.which = which;
    key.p0 = app_state_p0(st);
    key.stride = stride;
    key.full = (which == 0 || which == CURVE_GAUSS) && full; /* Gaussian: in double */
    key.p.dim = st->p.dim;
    key.p.len = st->p.len;
    if (which == 1) { /* learned: its seed and spread */
        key.p.seed = st->p.seed;
        key.p.learned_std = st->p.learned_std;
    } else if (which == 6) { /* ALiBi: slopes and mask */
        key.head = st->head;
        key.p.heads = st->p.heads;
        key.p.slope_ratio = st->p.slope_ratio;
        key.p.alibi_symmetric = st->p.alibi_symmetric;
    } else if (which != 2) { /* sinusoidal and the RoPE family: every frequency setting */
        memcpy(&key.p, &st->p, sizeof key.p);
    }
    /* slot by curve, the data's full sinusoid apart so a frame and an export do not evict */
    int slot = key.full && which == 0 ? APP_CURVE_COUNT : which;
    double *y = app_cache_get(c, slot, &key, sizeof key);
    if (y) return y;
    int kb, kf;
    decay_grid(st, stride, &kb, &kf);
    /* the Gaussian curve keeps its spread after its mean */
    size_t nval = (size_t)(kb + kf + 1) * (which == CURVE_GAUSS ? 2 : 1);
    y = app_cache_put(c, slot, &key, sizeof key, sizeof *y * nval);
    if (!y) {
        snprintf(err, errlen, "%s", app_cache_error());
        return NULL;
    }
    if (decay_curve(c, st, which, stride, kb, kf, full, y, err, errlen) < 0) {
        app_cache_put(c, slot, "", 0, 0); /* forget the half-made curve */
        return NULL;
    }
    return y;
}

static int decay_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                       char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    int L = st->p.len, p0 = app_state_p0(st);
    char title[128], sub[256];
    snprintf(title, sizeof title, "How position p0 = %d sees every position p", p0);
    app_subtitle(st, sub, sizeof sub);
    size_t used = strlen(sub);
    /* random and Gaussian q,k are divided by |q||k| (their value at p0 is not 1) */
    int rnd = !!(st->decay.curves & APP_CURVE_ROPE_RANDOM),
        gau = !!(st->decay.curves & APP_CURVE_ROPE_GAUSS);
    snprintf(sub + used, sizeof sub - used, "  (each / its value at p0%s%s%s%s)",
             rnd || gau ? "; " : "", rnd ? "random" : "", rnd && gau ? ", " : "",
             rnd && gau ? "Gaussian q,k / |q||k|"
             : gau      ? "Gaussian q,k / |q||k|"
             : rnd      ? " q,k / |q||k|"
                        : "");
    /* a subtitle that would wrap at its smallest step (a paper column, 300x200 px) says the
     * same in fewer words, so the plot keeps the line */
    if (!t->cells &&
        scene_text_width(t, sub, 0.9 * fmin(1.0, fmax(0.8, 0.8 * 11 * 1.3 / (t->text_h * 0.9)))) >
            t->width - 1.2 * t->text_h)
        snprintf(sub + used, sizeof sub - used, "  (\xc3\xb7 value at p0%s%s%s)",
                 rnd || gau ? "; " : "",
                 rnd && gau ? "random, Gaussian"
                 : gau      ? "Gaussian"
                 : rnd      ? "random"
                            : "",
                 rnd || gau ? " \xc3\xb7 |q||k|" : "");
    fig_rect r = app_frame(s, t, th, title, sub);

    /* the RoPE-family curves: one sample per pixel (per braille dot across a cell) of the
     * canvas, so at least one per pixel of the plot; an exported figure takes every position, up
     * to DECAY_EXPORT_STEPS pair steps (beyond, a stride again: L 1048576 at d 65536 would take
     * minutes). In the window the canvas's pixels, not the plot's: the projector zoom lays the
     * view out again at smaller text sizes (views.c), and each plot width gave another stride
     * and another 32-draw sweep (issue 27: 133 ms at 175% after a change); with the canvas's
     * the later layouts hit the cache. A terminal is laid out once. */
    int np = st->p.dim / 2 > 0 ? st->p.dim / 2 : 1;
    double per = t->cells ? 2 * ceil(r.w) : ceil(t->width);
    int stride = (int)fmax(1, ceil((L - 1) / fmax(1, per)));
    if (c->full_res) stride = (int)fmax(1, ceil((double)L * np / DECAY_EXPORT_STEPS));
    int kb, kf;
    decay_grid(st, stride, &kb, &kf);
    int ns = kb + kf + 1;
    /* the curves computed whole (learned, binary, ALiBi) are drawn whole: the figure keeps the
     * lowest and highest point of every column, so they look as they are */
    int any_whole = 0;
    for (int w = 0; w < APP_CURVE_COUNT; w++)
        any_whole |= (st->decay.curves & (1u << w)) && !sweeps(w);
    double *x = malloc(sizeof *x * ((size_t)ns + (any_whole ? (size_t)L : 0)));
    if (!x) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double *xall = x + ns;
    for (int i = 0; i < ns; i++) x[i] = p0 + (double)(i - kb) * stride;
    for (int i = 0; any_whole && i < L; i++) xall[i] = i;
    const char *names[APP_CURVE_COUNT];
    char named[APP_CURVE_COUNT][64];
    uint32_t colors[APP_CURVE_COUNT];
    unsigned styles[APP_CURVE_COUNT];
    int which[APP_CURVE_COUNT];
    const double *cys[APP_CURVE_COUNT];
    const double *gauss = NULL; /* the Gaussian curve's mean and sd (2 ns values) */
    int n = 0;
    double lo = 0, hi = 1;
    for (int w = 0; w < APP_CURVE_COUNT; w++) {
        if (!(st->decay.curves & (1u << w))) continue;
        /* with RoPE's plain frequencies the sinusoid's curve is RoPE's q = k = 1 curve (both
         * sum cos(r theta_k) over the same theta_k): computed once */
        int ww = w == 0 && (st->decay.curves & APP_CURVE_ROPE) && rope_is_sinusoid(&st->p) ? 3 : w;
        const double *cy = decay_curve_cached(c, st, ww, stride, 0, err, errlen);
        if (!cy) {
            free(x);
            return -1;
        }
        int m = sweeps(w) ? ns : L;
        for (int i = 0; i < m; i++)
            if (isfinite(cy[i])) {
                double sd = w == CURVE_GAUSS ? cy[ns + i] : 0;
                lo = fmin(lo, cy[i] - sd);
                hi = fmax(hi, cy[i] + sd);
            }
        if (w == CURVE_GAUSS) gauss = cy;
        cys[n] = cy;
        names[n] = decay_label(st, w);
        /* 9 curves, 8 colours: the Gaussian curve takes the binary curve's green (binary is
         * not a default curve), and when both are shown the binary one is dashed */
        colors[n] = th->series[w == CURVE_GAUSS ? 2 : w % 8];
        styles[n] = w == 2 && (st->decay.curves & APP_CURVE_ROPE_GAUSS) ? SCENE_DASHED : 0;
        which[n] = w;
        n++;
    }
    /* A curve equal to one before it (sinusoidal and RoPE with q = k = 1 are the same function
     * of p0 - p) is drawn dashed over it, and the legend says which it equals, so no entry
     * names a curve that cannot be seen. */
    for (int i = 1; i < n; i++)
        for (int j = 0; j < i; j++) {
            /* curves drawn at the same positions (both sampled, or both whole) */
            if (styles[j] || sweeps(which[i]) != sweeps(which[j])) continue;
            if (which[i] == CURVE_GAUSS || which[j] == CURVE_GAUSS) continue;
            const double *yi = cys[i], *yj = cys[j];
            int same = 1, m = sweeps(which[i]) ? ns : L;
            for (int k = 0; k < m && same; k++)
                same = (!isfinite(yi[k]) && !isfinite(yj[k])) || fabs(yi[k] - yj[k]) <= 1e-6;
            if (!same) continue;
            styles[i] = SCENE_DASHED;
            snprintf(named[i], sizeof named[i], "%s = %s", curve_label[which[i]],
                     curve_label[which[j]]);
            names[i] = named[i];
            break;
        }
    double pad = (hi - lo) * 0.05;
    /* a plot too short for the legend inside (projector zoom) gets it above */
    /* the legend: the curves, and the Gaussian curve's spread as an entry of its own */
    const char *lnames[APP_CURVE_COUNT + 1], *snames[APP_CURVE_COUNT + 1];
    uint32_t lcolors[APP_CURVE_COUNT + 1];
    unsigned lstyles[APP_CURVE_COUNT + 1];
    int ln = 0;
    for (int i = 0; i < n; i++) {
        snames[ln] = names[i] == named[i]                     ? names[i]
                     : which[i] == 1 && st->attn.weights_init ? "learned (init)"
                                                              : curve_short[which[i]];
        lnames[ln] = names[i];
        lcolors[ln] = colors[i];
        lstyles[ln++] = styles[i];
        if (which[i] == CURVE_GAUSS && !t->cells) {
            lnames[ln] = "\xc2\xb1 1 sd over 32 draws";
            snames[ln] = "\xc2\xb1 1 sd";
            lcolors[ln] = colors[i];
            lstyles[ln++] = SCENE_DOTTED;
        }
    }
    /* the curves span the plot (nothing inside is free for six names): in a small figure the
     * legend goes outside it (fig_legend_take), under the short names, which fit in fewer
     * rows above the plot or a narrower column beside it */
    fig_rect r_long = r;
    fig_legend_slot slot = fig_legend_take(t, &r_long, lnames, ln);
    if (slot.cols > 0) {
        for (int i = 0; i < ln; i++) lnames[i] = snames[i];
        slot = fig_legend_take(t, &r, lnames, ln);
    } else {
        r = r_long;
    }
    fig_axes a = fig_axes_draw(s, t, th, r, 0, L - 1 > 0 ? L - 1 : 1, lo - pad, hi + pad,
                               "key position p", "score / score at p0", FIG_GRID);
    scene_line(s, a.area.x, fig_y(&a, 0), a.area.x + a.area.w, fig_y(&a, 0), th->grid, 0,
               SCENE_RULE);
    double lw = t->hairline > 0 ? t->hairline : 1;
    for (int i = 0; i < n; i++) {
        int sw = sweeps(which[i]);
        if (which[i] == CURVE_GAUSS && !t->cells) {
            /* the spread: mean - sd and mean + sd, dotted in the mean's colour (not in the
             * terminal, where two more braille curves around 0 would blur the mean; the
             * readout there gives mean and sd at the cursor) */
            double *band = malloc(sizeof *band * 2 * (size_t)ns);
            if (!band) {
                free(x);
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            for (int j = 0; j < ns; j++) {
                band[j] = gauss[j] - gauss[ns + j];
                band[ns + j] = gauss[j] + gauss[ns + j];
            }
            for (int side = 0; side < 2; side++)
                fig_curve(s, &a, x, band + (size_t)side * ns, (size_t)ns, colors[i],
                          t->cells ? 0 : lw * 1.2, SCENE_DOTTED);
            free(band);
        }
        fig_curve(s, &a, sw ? x : xall, cys[i], (size_t)(sw ? ns : L), colors[i],
                  t->cells ? 0 : lw * (styles[i] ? 2.2 : 1.8), styles[i]);
    }
    fig_vmark(s, t, th, &a, p0, "p0");
    if (!fig_legend_in_slot(s, t, th, &slot, lnames, lcolors, lstyles, ln))
        fig_legend_styled(s, t, th, &a, lnames, lcolors, lstyles, ln, 0);
    c->main = a;
    fig_mark_main(s, a.area, "plot");
    c->has_main = 1;
    c->main_rows = 1;
    c->main_cols = L;
    if (st->cursor_on) {
        int pc = st->cur_c < L ? st->cur_c : L - 1;
        app_cursor_vline(s, t, th, &a, pc);
        size_t u = (size_t)snprintf(c->readout, sizeof c->readout, "p %d  p0-p %d:", pc, p0 - pc);
        /* the exact values at pc (the figure is a sample): one step of |p0 - pc| */
        int dist = abs(p0 - pc);
        for (int i = 0; i < n && u < sizeof c->readout; i++) {
            int w = which[i];
            double v = 1, two[2] = {1, 1};
            if (!sweeps(w)) {
                const double *cy = decay_curve_cached(c, st, w, 1, 0, err, errlen);
                if (!cy) {
                    free(x);
                    return -1;
                }
                v = cy[pc];
            } else if (w == CURVE_GAUSS) {
                /* one step of dist from p0 toward pc: two positions (one at pc = p0); the
                 * means first, then the spreads */
                int gb = pc<p0, gf = pc> p0, np2 = gb + gf + 1, at = pc > p0;
                double g[4];
                if (gauss_sweep(c, st, dist > 0 ? dist : 1, gb, gf, 0, g, err, errlen) < 0) {
                    free(x);
                    return -1;
                }
                if (pc < p0) at = 0;
                u += (size_t)snprintf(c->readout + u, sizeof c->readout - u,
                                      "  %s %+.4f \xc2\xb1 %.4f", curve_label[w], g[at],
                                      g[np2 + at]);
                continue;
            } else if (dist > 0) {
                if (rope_sweep(st, w, dist, pc<p0, pc> p0, two, err, errlen) < 0) {
                    free(x);
                    return -1;
                }
                v = pc < p0 ? two[0] : two[1];
            }
            if (isfinite(v))
                u += (size_t)snprintf(c->readout + u, sizeof c->readout - u, "  %s %+.4f",
                                      curve_label[w], v);
            else /* ALiBi is causal: a key after p0 is masked, not a number */
                u += (size_t)snprintf(c->readout + u, sizeof c->readout - u, "  %s masked (p > p0)",
                                      curve_label[w]);
        }
    }
    free(x);
    return 0;
}

static int decay_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    (void)c;
    int L = st->p.len, n = 0;
    for (int w = 0; w < APP_CURVE_COUNT; w++) n += !!(st->decay.curves & (1u << w));
    if (st->decay.curves & APP_CURVE_ROPE_GAUSS) n++; /* its mean and its sd */
    if (app_data_alloc(out, 2, (size_t)n + 1, (size_t)L, 0, err, errlen) < 0) return -1;
    for (int i = 0; i < L; i++) out->data[i] = i;
    size_t used =
        (size_t)snprintf(out->what, sizeof out->what,
                         "(1+curves, len): row 0 = p; NaN = masked (causal ALiBi, p > p0); rows:");
    int row = 1;
    for (int w = 0; w < APP_CURVE_COUNT; w++) {
        if (!(st->decay.curves & (1u << w))) continue;
        const double *cy = decay_curve_cached(c, st, w, 1, 1, err, errlen);
        if (!cy) {
            app_data_free(out);
            return -1;
        }
        memcpy(out->data + (size_t)row * L, cy, sizeof *cy * (size_t)L);
        if (w == CURVE_GAUSS) {
            memcpy(out->data + (size_t)(row + 1) * L, cy + L, sizeof *cy * (size_t)L);
            if (used < sizeof out->what)
                used += (size_t)snprintf(out->what + used, sizeof out->what - used,
                                         " %s mean, %s sd%s", decay_label(st, w),
                                         decay_label(st, w), row + 1 < n ? "," : "");
            row += 2;
            continue;
        }
        if (used < sizeof out->what)
            used += (size_t)snprintf(out->what + used, sizeof out->what - used, " %s%s",
                                     decay_label(st, w), row < n ? "," : "");
        row++;
    }
    out->f64 = 1;
    return 0;
}

/* ---- the decay view's option group (decay_opts.h, options/option_groups.h) ---------------- */

void app_decay_opts_default(app_decay_opts *o)
{
    /* no two default curves coincide (RoPE with q = k = 1 equals the sinusoid) */
    /* the bound beside RoPE's mean over Gaussian q, k (Barbero et al. 2024, Fig. 2): without it
     * the figure suggests that RoPE attention decays by itself */
    o->curves = APP_CURVE_SINUSOIDAL | APP_CURVE_LEARNED | APP_CURVE_ROPE_BOUND | APP_CURVE_ALIBI |
                APP_CURVE_ROPE_GAUSS;
}

static const char *const curve_names[APP_CURVE_COUNT + 1] = {
    "sinusoidal", "learned", "binary", "rope",       "rope-random",
    "rope-bound", "alibi",   "xpos",   "rope-gauss", NULL};

static int set_curves(app_state *st, const char *v, char *err, size_t errlen)
{
    unsigned bits = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    if (strcmp(buf, "all") == 0) {
        st->decay.curves = (1u << APP_CURVE_COUNT) - 1;
        return 0;
    }
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int i = 0; i < APP_CURVE_COUNT; i++)
            if (strcmp(tok, curve_names[i]) == 0) found = i;
        if (found < 0) {
            const char *s = pe_closest(tok, curve_names, APP_CURVE_COUNT);
            snprintf(err, errlen,
                     "--curves '%s': unknown curve%s%s%s (allowed: all, or a comma list of "
                     "sinusoidal,learned,binary,rope,rope-random,rope-bound,alibi,xpos,rope-gauss)",
                     tok, s ? "; did you mean '" : "", s ? s : "", s ? "'?" : "");
            return -1;
        }
        bits |= 1u << found;
    }
    if (!bits) {
        snprintf(err, errlen, "--curves '%s': name at least one curve", v);
        return -1;
    }
    st->decay.curves = bits;
    return 0;
}
static void get_curves(const app_state *st, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < APP_CURVE_COUNT; i++) {
        if (!(st->decay.curves & (1u << i))) continue;
        int w = snprintf(buf + used, n - used, "%s%s", used ? "," : "", curve_names[i]);
        if (w < 0 || (size_t)w >= n - used) break;
        used += (size_t)w;
    }
}
static size_t choices_curves(const char **out, size_t n)
{
    size_t k = 0;
    if (k < n) out[k++] = "all";
    for (int i = 0; i < APP_CURVE_COUNT && k < n; i++) out[k++] = curve_names[i];
    return k;
}

const app_option app_decay_rows[] = {
    {APP_CUS("curves", NULL,
             "decay curves: all or sinusoidal,learned,binary,rope,rope-random,rope-bound,alibi,"
             "xpos,rope-gauss",
             set_curves, get_curves, choices_curves)},
    {.name = NULL},
};

const app_view app_view_decay = {
    .name = "decay",
    .description = "dot-product decay: how p0 sees every position, several encodings overlaid",
    .validate = decay_validate,
    .build = decay_build,
    .data = decay_data,
    .options = "dim len base freq pairing rotary-frac scaling factor orig-ctx seq-len "
               "attn-factor heads "
               "head slope-ratio alibi xpos-scale xpos-zeta std seed weights pos curves",
    /* each of these acts on one curve of many (the legend names the curve) */
    .not_in_subtitle = "pairing heads slope-ratio alibi seed weights",
    .record = "pos", /* p0 walking along the positions */
};
