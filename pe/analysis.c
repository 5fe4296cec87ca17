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
