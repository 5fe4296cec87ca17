/* analysis.c: what the views plot about an encoding: similarity matrices, dot-product decay,
 * RoPE score curves and decay bound, wavelengths, the translation identity, angle resolution. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pe_internal.h"

/* Rows per tile of the similarity matrix: a 64-row tile of a 512-wide table is 128 KiB, so the
 * two tiles being multiplied stay in L2. */
#define SIM_TILE 64
#define LANES    8

/* Dot products of row a with four rows b[0..3]. Eight independent float lanes per row let the
 * compiler vectorise without reassociating; the lanes are summed in double. */
static void dot4(const float *a, const float *const b[4], size_t n, double out[4])
{
    float acc[4][LANES] = {{0}};
    size_t t = 0;
    for (; t + LANES <= n; t += LANES)
        for (int r = 0; r < 4; r++)
            for (int l = 0; l < LANES; l++) acc[r][l] += a[t + l] * b[r][t + l];
    for (int r = 0; r < 4; r++) {
        double s = 0.0;
        for (int l = 0; l < LANES; l++) s += (double)acc[r][l];
        for (size_t u = t; u < n; u++) s += (double)a[u] * (double)b[r][u];
        out[r] = s;
    }
}

static double dot1(const float *a, const float *b, size_t n)
{
    const float *const bs[4] = {b, b, b, b};
    double out[4];
    dot4(a, bs, n, out);
    return out[0];
}

int pe_similarity(const pe_matrix *table, int cosine, pe_matrix *out, char *err, size_t errlen)
{
    size_t n = table->rows, d = table->cols;
    int rc = pe_check_cells(n, n, "--len x --len", err, errlen);
    if (rc == PE_OK) rc = pe_matrix_init(out, n, n, err, errlen);
    if (rc != PE_OK) return rc;
    if (n == 0) return PE_OK;
    double *inv = NULL;
    if (cosine) {
        inv = malloc(n * sizeof *inv);
        if (!inv) {
            pe_matrix_free(out);
            return pe_fail(err, errlen, PE_ENOMEM, "--len %zu: out of memory", n);
        }
        /* Norms from the same kernel as the products, so the diagonal comes out as 1. */
        for (size_t i = 0; i < n; i++) {
            const float *r = pe_matrix_row(table, i);
            double nn = dot1(r, r, d);
            inv[i] = nn > 0.0 ? 1.0 / sqrt(nn) : 0.0;
        }
    }
    /* Upper triangle tile by tile, mirrored into the lower one. */
    for (size_t i0 = 0; i0 < n; i0 += SIM_TILE) {
        size_t i1 = i0 + SIM_TILE < n ? i0 + SIM_TILE : n;
        for (size_t j0 = i0; j0 < n; j0 += SIM_TILE) {
            size_t j1 = j0 + SIM_TILE < n ? j0 + SIM_TILE : n;
            for (size_t i = i0; i < i1; i++) {
                const float *a = pe_matrix_row(table, i);
                float *orow = pe_matrix_row(out, i);
                size_t j = j0 > i ? j0 : i;
                while (j < j1) {
                    size_t cnt = j1 - j < 4 ? j1 - j : 4;
                    const float *b[4];
                    for (size_t r = 0; r < 4; r++)
                        b[r] = pe_matrix_row(table, j + (r < cnt ? r : cnt - 1));
                    double s[4];
                    dot4(a, b, d, s);
                    for (size_t r = 0; r < cnt; r++) {
                        double v = cosine ? s[r] * inv[i] * inv[j + r] : s[r];
                        orow[j + r] = (float)v;
                        pe_matrix_row(out, j + r)[i] = (float)v;
                    }
                    j += cnt;
                }
            }
        }
    }
    free(inv);
    return PE_OK;
}

void pe_dot_decay(const pe_matrix *table, size_t p0, double *out)
{
    const float *a = pe_matrix_row(table, p0);
    for (size_t pos = 0; pos < table->rows; pos++) {
        const float *b = pe_matrix_row(table, pos);
        double s = 0.0;
        for (size_t t = 0; t < table->cols; t++) s += (double)a[t] * (double)b[t];
        out[pos] = s;
    }
}

void pe_rope_qk(int dim, uint64_t seed, double *q, double *k)
{
    if (seed == UINT64_MAX) {
        for (int i = 0; i < dim; i++) q[i] = k[i] = 1.0;
        return;
    }
    pe_rng r;
    pe_rng_seed(&r, seed);
    for (int i = 0; i < dim; i++) q[i] = pe_rng_normal(&r);
    for (int i = 0; i < dim; i++) k[i] = pe_rng_normal(&r);
}

/* Rotates q at m and k at n literally (no closed form), so the curve shows what a model gets. */
int pe_rope_score_curve(const pe_params *p, const double *q, const double *k, int n_pos, int rel0,
                        int count, double *out, char *err, size_t errlen)
{
    int rc = pe_rope_validate_freq(p, err, errlen);
    if (rc != PE_OK) return rc;
    if (count < 0 || count > PE_MAX_LEN)
        return pe_fail(err, errlen, PE_EINVAL, "--len %d: the curve length must be 0..%d", count,
                       PE_MAX_LEN);
    size_t d = (size_t)p->dim;
    int npairs = pe_rope_rotary_dim(p) / 2;
    double *buf = malloc((2 * d + (size_t)npairs) * sizeof *buf);
    if (!buf) return pe_fail(err, errlen, PE_ENOMEM, "--dim %d: out of memory", p->dim);
    double *qr = buf, *kr = buf + d, *theta = buf + 2 * d, attn;
    rc = pe_rope_inv_freq(p, theta, &attn, err, errlen);
    if (rc == PE_OK) {
        memcpy(kr, k, d * sizeof *kr);
        pe_rope_rotate(p, theta, attn, kr, (double)n_pos);
        for (int c = 0; c < count; c++) {
            double m = (double)n_pos + (double)rel0 + (double)c;
            memcpy(qr, q, d * sizeof *qr);
            pe_rope_rotate(p, theta, attn, qr, m);
            double s = 0.0;
            for (size_t i = 0; i < d; i++) s += qr[i] * kr[i];
            out[c] = s;
        }
    }
    free(buf);
    return rc;
}

double pe_rope_decay_bound(const double *inv_freq, int npairs, double r)
{
    if (npairs <= 0) return 0.0;
    double re = 0.0, im = 0.0, total = 0.0;
    for (int j = 0; j < npairs; j++) {
        re += cos(r * inv_freq[j]);
        im += sin(r * inv_freq[j]);
        total += hypot(re, im);
    }
    return total / (double)npairs;
}

int pe_wavelengths(const pe_params *p, int rope, double *out, char *err, size_t errlen)
{
    if (rope) {
        double attn;
        int rc = pe_rope_inv_freq(p, out, &attn, err, errlen);
        if (rc != PE_OK) return rc;
        for (int k = 0; k < pe_rope_rotary_dim(p) / 2; k++) out[k] = 2.0 * PE_PI / out[k];
        return PE_OK;
    }
    int rc = pe_sinusoidal_validate_freq(p, err, errlen);
    if (rc != PE_OK) return rc;
    for (int k = 0; k < p->dim / 2; k++) out[k] = 2.0 * PE_PI / pe_sin_freq(p, k);
    return PE_OK;
}

/* T(D) is block diagonal: the (sin, cos) dimensions of pair k form the block
 * [[cos Dw, -sin Dw], [sin Dw, cos Dw]] acting on the row vector. Returns NAN for invalid
 * parameters, D < 0 or a failed allocation; 0 when D >= L leaves no pair of rows. */
double pe_translation_error(const pe_params *p, int D)
{
    if (D < 0) return NAN;
    pe_matrix t = {0};
    if (pe_sinusoidal_table(p, &t, NULL, 0) != PE_OK) return NAN;
    size_t half = t.cols / 2;
    double *blocks = malloc(4 * half * sizeof *blocks);
    if (!blocks) {
        pe_matrix_free(&t);
        return NAN;
    }
    for (size_t k = 0; k < half; k++) {
        double a = (double)D * pe_sin_freq(p, (int)k);
        double *b = blocks + 4 * k;
        b[0] = cos(a);  /* T[s][s] */
        b[1] = -sin(a); /* T[s][c] */
        b[2] = sin(a);  /* T[c][s] */
        b[3] = cos(a);  /* T[c][c] */
    }
    int concat = p->layout == PE_LAYOUT_CONCAT;
    double worst = 0.0;
    for (size_t pos = 0; pos + (size_t)D < t.rows; pos++) {
        const float *x = pe_matrix_row(&t, pos), *y = pe_matrix_row(&t, pos + (size_t)D);
        for (size_t k = 0; k < half; k++) {
            size_t is = concat ? k : 2 * k, ic = concat ? k + half : 2 * k + 1;
            const double *b = blocks + 4 * k;
            double s = x[is], c = x[ic];
            double es = fabs(s * b[0] + c * b[2] - (double)y[is]);
            double ec = fabs(s * b[1] + c * b[3] - (double)y[ic]);
            if (es > worst) worst = es;
            if (ec > worst) worst = ec;
        }
    }
    free(blocks);
    pe_matrix_free(&t);
    return worst;
}

/* Whether a pair of inverse frequency theta turns by more than min_angle between f0 and f1, with
 * the angles in float32 as a model computes them. */
static int resolution_turns(double theta, float f0, float f1, double min_angle)
{
    float th = (float)theta;
    float a0 = f0 * th, a1 = f1 * th;
    double diff = fabs((double)a1 - (double)a0);
    /* fmod is exact and returns diff itself below 2 pi: skip the call there */
    if (diff >= 2.0 * PE_PI) diff = fmod(diff, 2.0 * PE_PI);
    if (diff > PE_PI) diff = 2.0 * PE_PI - diff;
    return diff > min_angle;
}

static int resolution_args_ok(int pos, int D, double min_angle)
{
    return !(pos < 0 || D < 0 || pos >= INT_MAX - D || !isfinite(min_angle) || min_angle < 0.0);
}

int pe_rope_resolution(const pe_params *p, int pos, int D, double min_angle)
{
    if (!resolution_args_ok(pos, D, min_angle)) return PE_EINVAL;
    pe_params q = *p;
    /* the sequence must hold both positions; a longer one given by the caller counts */
    if ((q.scaling.type == PE_SCALING_DYNAMIC || q.scaling.type == PE_SCALING_LONGROPE) &&
        q.scaling.seq_len < pos + D + 1)
        q.scaling.seq_len = pos + D + 1;
    if (pe_rope_validate_freq(&q, NULL, 0) != PE_OK) return PE_EINVAL;
    pe_rope_ctx c;
    pe_rope_ctx_init(&q, &c);
    int count = 0;
    float f0 = (float)pos, f1 = (float)(pos + D);
    for (int k = 0; k < c.rot_dim / 2; k++)
        count += resolution_turns(pe_rope_ctx_theta(&q, &c, k), f0, f1, min_angle);
    return count;
}

int pe_rope_resolution_theta(const double *theta, int npairs, int pos, int D, double min_angle)
{
    if (!resolution_args_ok(pos, D, min_angle)) return PE_EINVAL;
    int count = 0;
    float f0 = (float)pos, f1 = (float)(pos + D);
    for (int k = 0; k < npairs; k++) count += resolution_turns(theta[k], f0, f1, min_angle);
    return count;
}

/* ---- the decay bound at many distances ------------------------------------------------------
 *
 * B(j step) for j = 0 .. n-1 in one pass. BOUND_LANES distances run side by side, each with its
 * own prefix sums over the pairs, so the sums' chains of additions and square roots (which a
 * single distance must take one after the other) overlap in the lanes of the vector unit. Each
 * pair's e^{i r theta_k} moves on to the next block of distances by a rotation of BOUND_LANES
 * steps instead of a cos and a sin, and is set from exact values every BOUND_ANCHOR distances,
 * which keeps the result within ~1e-13 of pe_rope_decay_bound. The three kernels (plain C, SSE2,
 * AVX) do the same operations in the same order, so they give the same bits. */
enum { BOUND_LANES = 8, BOUND_ANCHOR = 256 };

typedef void (*bound_kernel)(int np, double *c, double *s, const double *cw, const double *sw,
                             double *v);

/* v[l] = sum_j |sum_{k<=j} (c, s)[k][l]| over the pairs j; (c, s)[k] advances by (cw, sw)[k]. */
static void bound_lanes_plain(int np, double *c, double *s, const double *cw, const double *sw,
                              double *v)
{
    double re[BOUND_LANES] = {0}, im[BOUND_LANES] = {0};
    for (int l = 0; l < BOUND_LANES; l++) v[l] = 0;
    for (int k = 0; k < np; k++) {
        double *ck = c + (size_t)k * BOUND_LANES, *sk = s + (size_t)k * BOUND_LANES;
        for (int l = 0; l < BOUND_LANES; l++) {
            re[l] += ck[l];
            im[l] += sk[l];
            v[l] += sqrt(re[l] * re[l] + im[l] * im[l]);
            double cn = ck[l] * cw[k] - sk[l] * sw[k];
            sk[l] = sk[l] * cw[k] + ck[l] * sw[k];
            ck[l] = cn;
        }
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define BOUND_X86 1

static void bound_lanes_sse2(int np, double *c, double *s, const double *cw, const double *sw,
                             double *v)
{
    __m128d re[4], im[4], acc[4];
    for (int q = 0; q < 4; q++) re[q] = im[q] = acc[q] = _mm_setzero_pd();
    for (int k = 0; k < np; k++) {
        double *ck = c + (size_t)k * BOUND_LANES, *sk = s + (size_t)k * BOUND_LANES;
        __m128d a = _mm_set1_pd(cw[k]), b = _mm_set1_pd(sw[k]);
        for (int q = 0; q < 4; q++) {
            __m128d x = _mm_loadu_pd(ck + 2 * q), y = _mm_loadu_pd(sk + 2 * q);
            re[q] = _mm_add_pd(re[q], x);
            im[q] = _mm_add_pd(im[q], y);
            acc[q] = _mm_add_pd(acc[q], _mm_sqrt_pd(_mm_add_pd(_mm_mul_pd(re[q], re[q]),
                                                               _mm_mul_pd(im[q], im[q]))));
            _mm_storeu_pd(ck + 2 * q, _mm_sub_pd(_mm_mul_pd(x, a), _mm_mul_pd(y, b)));
            _mm_storeu_pd(sk + 2 * q, _mm_add_pd(_mm_mul_pd(y, a), _mm_mul_pd(x, b)));
        }
    }
    for (int q = 0; q < 4; q++) _mm_storeu_pd(v + 2 * q, acc[q]);
}

__attribute__((target("avx"))) static void
bound_lanes_avx(int np, double *c, double *s, const double *cw, const double *sw, double *v)
{
    __m256d re[2], im[2], acc[2];
    for (int q = 0; q < 2; q++) re[q] = im[q] = acc[q] = _mm256_setzero_pd();
    for (int k = 0; k < np; k++) {
        double *ck = c + (size_t)k * BOUND_LANES, *sk = s + (size_t)k * BOUND_LANES;
        __m256d a = _mm256_set1_pd(cw[k]), b = _mm256_set1_pd(sw[k]);
        for (int q = 0; q < 2; q++) {
            __m256d x = _mm256_loadu_pd(ck + 4 * q), y = _mm256_loadu_pd(sk + 4 * q);
            re[q] = _mm256_add_pd(re[q], x);
            im[q] = _mm256_add_pd(im[q], y);
            acc[q] =
                _mm256_add_pd(acc[q], _mm256_sqrt_pd(_mm256_add_pd(_mm256_mul_pd(re[q], re[q]),
                                                                   _mm256_mul_pd(im[q], im[q]))));
            _mm256_storeu_pd(ck + 4 * q, _mm256_sub_pd(_mm256_mul_pd(x, a), _mm256_mul_pd(y, b)));
            _mm256_storeu_pd(sk + 4 * q, _mm256_add_pd(_mm256_mul_pd(y, a), _mm256_mul_pd(x, b)));
        }
    }
    for (int q = 0; q < 2; q++) _mm256_storeu_pd(v + 4 * q, acc[q]);
}
#endif

/* The kernel this CPU runs best (PELAB_BOUND_KERNEL=plain|sse2|avx picks one, for tests). */
static bound_kernel bound_kernel_pick(void)
{
    const char *want = getenv("PELAB_BOUND_KERNEL");
    if (want && strcmp(want, "plain") == 0) return bound_lanes_plain;
#ifdef BOUND_X86
    if (want && strcmp(want, "sse2") == 0) return bound_lanes_sse2;
    if (__builtin_cpu_supports("avx")) return bound_lanes_avx;
    return bound_lanes_sse2;
#else
    return bound_lanes_plain;
#endif
}

int pe_rope_decay_bound_curve(const double *inv_freq, int npairs, double step, int n, double *out,
                              char *err, size_t errlen)
{
    if (n <= 0) return PE_OK;
    if (npairs <= 0) {
        for (int j = 0; j < n; j++) out[j] = 0.0;
        return PE_OK;
    }
    size_t np = (size_t)npairs;
    double *buf = malloc(sizeof *buf * np * (2 * BOUND_LANES + 4));
    if (!buf)
        return pe_fail(err, errlen, PE_ENOMEM, "decay bound: out of memory (%d pairs)", npairs);
    double *c = buf, *s = c + np * BOUND_LANES, *c1 = s + np * BOUND_LANES, *s1 = c1 + np,
           *cw = s1 + np, *sw = cw + np;
    for (size_t k = 0; k < np; k++) {
        c1[k] = cos(step * inv_freq[k]); /* one distance on */
        s1[k] = sin(step * inv_freq[k]);
        cw[k] = cos(BOUND_LANES * step * inv_freq[k]); /* a block of distances on */
        sw[k] = sin(BOUND_LANES * step * inv_freq[k]);
    }
    bound_kernel kernel = bound_kernel_pick();
    for (int j0 = 0; j0 < n; j0 += BOUND_LANES) {
        if (j0 % BOUND_ANCHOR == 0) /* exact at the block's first distance, a step per lane */
            for (size_t k = 0; k < np; k++) {
                double *ck = c + k * BOUND_LANES, *sk = s + k * BOUND_LANES;
                ck[0] = cos(j0 * step * inv_freq[k]);
                sk[0] = sin(j0 * step * inv_freq[k]);
                for (int l = 1; l < BOUND_LANES; l++) {
                    ck[l] = ck[l - 1] * c1[k] - sk[l - 1] * s1[k];
                    sk[l] = sk[l - 1] * c1[k] + ck[l - 1] * s1[k];
                }
            }
        double v[BOUND_LANES];
        kernel(npairs, c, s, cw, sw, v);
        for (int l = 0; l < BOUND_LANES && j0 + l < n; l++) out[j0 + l] = v[l] / (double)npairs;
    }
    free(buf);
    return PE_OK;
}

/* ---- prefix sums of rotations, eight distances side by side ---------------------------------
 *
 * For callers that set up e^{i r theta_k} themselves (distances that are not evenly spaced): the
 * sums of pe_rope_decay_bound without the rotation. Each distance's values lie apart (c[l][k]),
 * the kernels transpose small blocks into lanes. Same operations in the same order in every
 * kernel, and the same as one distance at a time: re += c, im += s, tot += sqrt(re^2 + im^2). */
typedef void (*prefix_kernel)(int np, const double *const *c, const double *const *s, double *re,
                              double *im, double *tot);

static void prefix_lanes_plain(int np, const double *const *c, const double *const *s, double *re,
                               double *im, double *tot)
{
    double x[PE_PREFIX_LANES] = {0}, y[PE_PREFIX_LANES] = {0}, t[PE_PREFIX_LANES] = {0};
    for (int k = 0; k < np; k++)
        for (int l = 0; l < PE_PREFIX_LANES; l++) {
            x[l] += c[l][k];
            y[l] += s[l][k];
            t[l] += sqrt(x[l] * x[l] + y[l] * y[l]);
        }
    memcpy(re, x, sizeof x);
    memcpy(im, y, sizeof y);
    memcpy(tot, t, sizeof t);
}

#ifdef BOUND_X86
static void prefix_lanes_sse2(int np, const double *const *c, const double *const *s, double *re,
                              double *im, double *tot)
{
    __m128d x[4], y[4], t[4];
    for (int q = 0; q < 4; q++) x[q] = y[q] = t[q] = _mm_setzero_pd();
#define PREFIX_STEP(q, cv, sv)                                                                     \
    do {                                                                                           \
        x[q] = _mm_add_pd(x[q], cv);                                                               \
        y[q] = _mm_add_pd(y[q], sv);                                                               \
        t[q] = _mm_add_pd(                                                                         \
            t[q], _mm_sqrt_pd(_mm_add_pd(_mm_mul_pd(x[q], x[q]), _mm_mul_pd(y[q], y[q]))));        \
    } while (0)
    int k = 0;
    for (; k + 2 <= np; k += 2)
        for (int q = 0; q < 4; q++) {
            __m128d c0 = _mm_loadu_pd(c[2 * q] + k), c1 = _mm_loadu_pd(c[2 * q + 1] + k);
            __m128d s0 = _mm_loadu_pd(s[2 * q] + k), s1 = _mm_loadu_pd(s[2 * q + 1] + k);
            PREFIX_STEP(q, _mm_unpacklo_pd(c0, c1), _mm_unpacklo_pd(s0, s1));
            PREFIX_STEP(q, _mm_unpackhi_pd(c0, c1), _mm_unpackhi_pd(s0, s1));
        }
    for (; k < np; k++)
        for (int q = 0; q < 4; q++)
            PREFIX_STEP(q, _mm_set_pd(c[2 * q + 1][k], c[2 * q][k]),
                        _mm_set_pd(s[2 * q + 1][k], s[2 * q][k]));
#undef PREFIX_STEP
    for (int q = 0; q < 4; q++) {
        _mm_storeu_pd(re + 2 * q, x[q]);
        _mm_storeu_pd(im + 2 * q, y[q]);
        _mm_storeu_pd(tot + 2 * q, t[q]);
    }
}

/* Lanes 4q .. 4q+3 of pairs k .. k+3: four loads, four rows out (row j = pair k + j). */
__attribute__((target("avx"))) static inline void transpose4(const double *const *v, int k,
                                                             __m256d out[4])
{
    __m256d a0 = _mm256_loadu_pd(v[0] + k), a1 = _mm256_loadu_pd(v[1] + k);
    __m256d a2 = _mm256_loadu_pd(v[2] + k), a3 = _mm256_loadu_pd(v[3] + k);
    __m256d t0 = _mm256_unpacklo_pd(a0, a1), t1 = _mm256_unpackhi_pd(a0, a1);
    __m256d t2 = _mm256_unpacklo_pd(a2, a3), t3 = _mm256_unpackhi_pd(a2, a3);
    out[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
    out[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
    out[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
    out[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

__attribute__((target("avx"))) static void prefix_lanes_avx(int np, const double *const *c,
                                                            const double *const *s, double *re,
                                                            double *im, double *tot)
{
    __m256d x[2], y[2], t[2];
    for (int q = 0; q < 2; q++) x[q] = y[q] = t[q] = _mm256_setzero_pd();
#define PREFIX_STEP(q, cv, sv)                                                                     \
    do {                                                                                           \
        x[q] = _mm256_add_pd(x[q], cv);                                                            \
        y[q] = _mm256_add_pd(y[q], sv);                                                            \
        t[q] = _mm256_add_pd(t[q], _mm256_sqrt_pd(_mm256_add_pd(_mm256_mul_pd(x[q], x[q]),         \
                                                                _mm256_mul_pd(y[q], y[q]))));      \
    } while (0)
    int k = 0;
    for (; k + 4 <= np; k += 4) {
        __m256d cv[2][4], sv[2][4];
        for (int q = 0; q < 2; q++) {
            transpose4(c + 4 * q, k, cv[q]);
            transpose4(s + 4 * q, k, sv[q]);
        }
        for (int j = 0; j < 4; j++)
            for (int q = 0; q < 2; q++) PREFIX_STEP(q, cv[q][j], sv[q][j]);
    }
    for (; k < np; k++)
        for (int q = 0; q < 2; q++)
            PREFIX_STEP(
                q, _mm256_set_pd(c[4 * q + 3][k], c[4 * q + 2][k], c[4 * q + 1][k], c[4 * q][k]),
                _mm256_set_pd(s[4 * q + 3][k], s[4 * q + 2][k], s[4 * q + 1][k], s[4 * q][k]));
#undef PREFIX_STEP
    for (int q = 0; q < 2; q++) {
        _mm256_storeu_pd(re + 4 * q, x[q]);
        _mm256_storeu_pd(im + 4 * q, y[q]);
        _mm256_storeu_pd(tot + 4 * q, t[q]);
    }
}
#endif

void pe_rope_prefix_lanes(const double *const *c, const double *const *s, int npairs, double *re,
                          double *im, double *tot)
{
    /* the same choice as the bound's kernels (PELAB_BOUND_KERNEL picks one, for tests) */
    const char *want = getenv("PELAB_BOUND_KERNEL");
    prefix_kernel kernel = prefix_lanes_plain;
#ifdef BOUND_X86
    if (!(want && strcmp(want, "plain") == 0))
        kernel = (want && strcmp(want, "sse2") == 0) || !__builtin_cpu_supports("avx")
                     ? prefix_lanes_sse2
                     : prefix_lanes_avx;
#else
    (void)want;
#endif
    kernel(npairs, c, s, re, im, tot);
}

/* ---- sinusoidal dot products by distance ---------------------------------------------------- */

enum { DOTS_GAPS = 8, DOTS_ANCHOR = 64 };

/* One rotation step of the first np4 (a multiple of 4) pairs, summing the new cosines into
 * acc[k & 3]: the plain loop, and the same operations (no fused multiply-add, the same four
 * accumulators) four pairs to a vector, so both give the very same values. The similarity view
 * at d 4096 took 44 M instructions a frame here, one pair at a time. */
static void dots_rotate_plain(size_t np4, double *c, double *s, const double *cg, const double *sg,
                              double *acc)
{
    for (size_t k = 0; k < np4; k += 4)
        for (int u = 0; u < 4; u++) {
            double cc = c[k + u], ss = s[k + u];
            c[k + u] = cc * cg[k + u] - ss * sg[k + u];
            s[k + u] = ss * cg[k + u] + cc * sg[k + u];
            acc[u] += c[k + u];
        }
}
#ifdef BOUND_X86
__attribute__((target("avx"))) static void
dots_rotate_avx(size_t np4, double *c, double *s, const double *cg, const double *sg, double *acc)
{
    __m256d a = _mm256_loadu_pd(acc);
    for (size_t k = 0; k < np4; k += 4) {
        __m256d cc = _mm256_loadu_pd(c + k), ss = _mm256_loadu_pd(s + k);
        __m256d gc = _mm256_loadu_pd(cg + k), gs = _mm256_loadu_pd(sg + k);
        __m256d cn = _mm256_sub_pd(_mm256_mul_pd(cc, gc), _mm256_mul_pd(ss, gs));
        __m256d sn = _mm256_add_pd(_mm256_mul_pd(ss, gc), _mm256_mul_pd(cc, gs));
        _mm256_storeu_pd(c + k, cn);
        _mm256_storeu_pd(s + k, sn);
        a = _mm256_add_pd(a, cn);
    }
    _mm256_storeu_pd(acc, a);
}
#endif

int pe_sinusoidal_dots(const pe_params *p, const size_t *dist, size_t n, double *out, char *err,
                       size_t errlen)
{
    int rc = pe_sinusoidal_validate_freq(p, err, errlen);
    if (rc != PE_OK || n == 0) return rc;
    size_t np = (size_t)p->dim / 2;
    /* w, the state (cos, sin) and up to DOTS_GAPS rotations (cos, sin) */
    double *buf = malloc(sizeof *buf * np * (3 + 2 * DOTS_GAPS));
    if (!buf) return pe_fail(err, errlen, PE_ENOMEM, "--dim %d: out of memory", p->dim);
    double *w = buf, *c = w + np, *s = c + np, *rot = s + np;
    size_t gaps[DOTS_GAPS], ngaps = 0;
    for (size_t k = 0; k < np; k++) w[k] = pe_sin_freq(p, (int)k);
    void (*rotate)(size_t, double *, double *, const double *, const double *, double *) =
        dots_rotate_plain;
#ifdef BOUND_X86
    const char *want = getenv("PELAB_BOUND_KERNEL"); /* "plain": the loop, as the bound's */
    if (!(want && strcmp(want, "plain") == 0) && __builtin_cpu_supports("avx"))
        rotate = dots_rotate_avx;
#endif
    for (size_t i = 0; i < n; i++) {
        const double *cg = NULL, *sg = NULL;
        if (i % DOTS_ANCHOR != 0 && dist[i] >= dist[i - 1]) {
            size_t g = dist[i] - dist[i - 1], at = 0;
            while (at < ngaps && gaps[at] != g) at++;
            if (at == ngaps && ngaps < DOTS_GAPS) { /* a new gap: its rotation, once */
                gaps[ngaps++] = g;
                for (size_t k = 0; k < np; k++) {
                    rot[2 * at * np + k] = cos((double)g * w[k]);
                    rot[(2 * at + 1) * np + k] = sin((double)g * w[k]);
                }
            }
            if (at < ngaps) {
                cg = rot + 2 * at * np;
                sg = cg + np;
            }
        }
        double acc[4] = {0, 0, 0, 0};
        if (!cg) { /* exact values: every DOTS_ANCHOR distances, or a gap not kept */
            for (size_t k = 0; k < np; k++) {
                c[k] = cos((double)dist[i] * w[k]);
                s[k] = sin((double)dist[i] * w[k]);
                acc[k & 3] += c[k];
            }
        } else {
            size_t k = np & ~(size_t)3;
            rotate(k, c, s, cg, sg, acc);
            for (; k < np; k++) {
                double cc = c[k], ss = s[k];
                c[k] = cc * cg[k] - ss * sg[k];
                s[k] = ss * cg[k] + cc * sg[k];
                acc[0] += c[k];
            }
        }
        out[i] = (acc[0] + acc[2]) + (acc[1] + acc[3]);
    }
    free(buf);
    return PE_OK;
}
