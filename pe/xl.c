/* xl.c: Transformer-XL relative encoding (Dai et al. 2019). The score of (i, j) splits into four
 * terms: content q.k, content-position q.W_R R_{i-j}, global content u.k, global position
 * v.W_R R_{i-j}; here with seeded random q, k, u, v and W_R to show their shapes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "pe_internal.h"

void pe_xl_r(const pe_params *p, double r, double *out)
{
    int half = p->dim / 2;
    for (int k = 0; k < half; k++) {
        double a = r * pow(p->base, -2.0 * (double)k / (double)p->dim);
        out[k] = sin(a);
        out[half + k] = cos(a);
    }
}

static int xl_validate(const pe_params *p, char *err, size_t errlen)
{
    int rc = pe_check_dim_for(p->dim, 1, "for Transformer-XL (R holds sin/cos pairs)", err, errlen);
    if (rc == PE_OK) rc = pe_check_len(p->len, err, errlen);
    if (rc == PE_OK) rc = pe_check_base(p->base, err, errlen);
    if (rc == PE_OK) rc = pe_check_heads(p->heads, err, errlen);
    if (rc == PE_OK)
        rc = pe_check_cells((size_t)p->len, (size_t)p->len, "--len x --len", err, errlen);
    if (rc == PE_OK)
        rc = pe_check_cells((size_t)p->len, (size_t)p->dim, "--len x --dim", err, errlen);
    if (rc == PE_OK)
        rc = pe_check_cells((size_t)p->dim, (size_t)p->dim, "--dim x --dim", err, errlen);
    return rc;
}

/* Tile sizes of the products below: TI rows by TJ columns of sums stay in registers while the
 * inner index runs. */
#define TI 4
#define TJ 8

void pe_xl_project_cols(const double *w_r, const double *x, size_t rows, size_t d, size_t c_lo,
                        size_t c_hi, double *out)
{
    for (size_t i0 = 0; i0 < rows; i0 += TI) {
        size_t ni = rows - i0 < TI ? rows - i0 : TI, c0 = c_lo;
        const double *xi = x + i0 * d;
        double *oi = out + i0 * d;
        if (ni == TI)
            for (; c0 + TJ <= c_hi; c0 += TJ) {
                double acc[TI][TJ] = {{0}};
                for (size_t a = 0; a < d; a++) {
                    const double *w = w_r + a * d + c0;
                    for (int r = 0; r < TI; r++) {
                        double xa = xi[(size_t)r * d + a];
                        for (int c = 0; c < TJ; c++) acc[r][c] += xa * w[c];
                    }
                }
                for (int r = 0; r < TI; r++)
                    for (int c = 0; c < TJ; c++) oi[(size_t)r * d + c0 + (size_t)c] = acc[r][c];
            }
        /* the columns left over, a row of W_R at a time (contiguous: it vectorises) */
        for (size_t r = 0; r < ni; r++) {
            double *o = oi + r * d;
            for (size_t c = c0; c < c_hi; c++) o[c] = 0.0;
            for (size_t a = 0; a < d; a++) {
                const double *w = w_r + a * d;
                double xa = xi[r * d + a];
                for (size_t c = c0; c < c_hi; c++) o[c] += xa * w[c];
            }
        }
    }
}

void pe_xl_project(const double *w_r, const double *x, size_t rows, size_t d, double *out)
{
    pe_xl_project_cols(w_r, x, rows, d, 0, d, out);
}

/* One block of at most TI rows of pe_xl_dots_lower: the columns 0 .. i0+ni-1 of each. */
static void lower_block(const double *restrict p, const double *restrict qt, size_t len, size_t d,
                        size_t i0, size_t ni, double *restrict rows)
{
    size_t cols = i0 + ni, j0 = 0;
    if (ni == TI)
        for (; j0 + TJ <= cols; j0 += TJ) {
            double acc[TI][TJ] = {{0}};
            for (size_t a = 0; a < d; a++) {
                const double *w = qt + a * len + j0;
                for (int r = 0; r < TI; r++) {
                    double x = p[(i0 + (size_t)r) * d + a];
                    for (int j = 0; j < TJ; j++) acc[r][j] += x * w[j];
                }
            }
            for (int r = 0; r < TI; r++)
                for (int j = 0; j < TJ; j++) rows[(size_t)r * len + j0 + (size_t)j] = acc[r][j];
        }
    for (size_t r = 0; r < ni; r++) {
        double *out = rows + r * len;
        for (size_t j = j0; j < cols; j++) out[j] = 0.0;
        for (size_t a = 0; a < d; a++) {
            const double *w = qt + a * len;
            double x = p[(i0 + r) * d + a];
            for (size_t j = j0; j < cols; j++) out[j] += x * w[j];
        }
    }
}

void pe_xl_dots_lower(const double *p, const double *qt, size_t len, size_t d, size_t i0, size_t ni,
                      double *rows)
{
    for (size_t b = 0; b < ni; b += TI)
        lower_block(p, qt, len, d, i0 + b, ni - b < TI ? ni - b : TI, rows + b * len);
}

/* Fill the terms selected by want[t] (each (L, L), zeroed or freed). Random draws, in order:
 * q (L, d), k (L, d), u (d), v (d), W_R (d, d) with std 1/sqrt(d) so W_R R stays O(1).
 * q.W_R R_r is computed as (W_R^T q).R_r and v.W_R R_r as (W_R^T v).R_r: one projection per
 * position instead of one per distance, the same numbers up to rounding. */
static int xl_compute(const pe_params *p, uint64_t seed, const int want[4], pe_matrix terms[4],
                      char *err, size_t errlen)
{
    size_t len = (size_t)p->len, d = (size_t)p->dim, half = d / 2;
    /* q (then W_R^T q), k^T, R^T: (L, d) (d, L) (d, L); u, v, W_R^T v: d; TI rows of d; W_R (d, d);
     * rows: TI x L sums; the column terms: 2 L */
    size_t n = 3 * len * d + 3 * d + TI * d + d * d + TI * len + 2 * len;
    char what[96];
    snprintf(what, sizeof what, "Transformer-XL's draws at --len %d x --dim %d", p->len, p->dim);
    int rc = pe_mem_reserve(n * sizeof(double), what, err, errlen);
    if (rc != PE_OK) return rc;
    double *buf = malloc(n * sizeof *buf);
    if (!buf) {
        pe_mem_release(n * sizeof(double));
        return pe_fail(err, errlen, PE_ENOMEM, "--len %d x --dim %d: out of memory", p->len,
                       p->dim);
    }
    /* progress: the three products, (a) L^2 d / 2, W_R^T q L d^2, (b) L^2 d / 2 */
    double work = (double)len * (double)d *
                  (double)(len * (size_t)(want[0] + want[1]) / 2 + (want[1] ? d : 0)),
           done = 0;
    double *q = buf, *kt = q + len * d, *rt = kt + len * d, *u = rt + len * d, *v = u + d;
    double *gv = v + d, *tmp = gv + d, *wr = tmp + TI * d, *rows = wr + d * d;
    double *col_c = rows + TI * len, *col_d = col_c + len; /* u.k_j and v.W_R R_r, scaled */
    pe_rng rng;
    pe_rng_seed(&rng, seed);
    for (size_t i = 0; i < len * d; i++) q[i] = pe_rng_normal(&rng);
    for (size_t j = 0; j < len; j++)
        for (size_t a = 0; a < d; a++) kt[a * len + j] = pe_rng_normal(&rng);
    for (size_t a = 0; a < d; a++) u[a] = pe_rng_normal(&rng);
    for (size_t a = 0; a < d; a++) v[a] = pe_rng_normal(&rng);
    double wstd = 1.0 / sqrt((double)d);
    for (size_t i = 0; i < d * d; i++) wr[i] = wstd * pe_rng_normal(&rng);
    /* R_r^T by columns: the values of pe_xl_r */
    for (size_t k = 0; k < half; k++) {
        double w = pow(p->base, -2.0 * (double)k / (double)p->dim);
        for (size_t r = 0; r < len; r++) {
            double a = (double)r * w;
            rt[k * len + r] = sin(a);
            rt[(half + k) * len + r] = cos(a);
        }
    }

    for (int t = 0; t < 4 && rc == PE_OK; t++)
        if (want[t]) rc = pe_matrix_init(&terms[t], len, len, err, errlen);
    if (rc != PE_OK) {
    fail:
        for (int t = 0; t < 4; t++)
            if (want[t]) pe_matrix_free(&terms[t]);
        free(buf);
        pe_mem_release(n * sizeof(double));
        return rc;
    }
    double scale = 1.0 / sqrt((double)d);
    /* (c) and (d) by columns: u.k_j and (W_R^T v).R_r, each summed over a from 0 up */
    pe_xl_project(wr, v, 1, d, gv);
    for (size_t j = 0; j < len; j++) col_c[j] = col_d[j] = 0.0;
    for (size_t a = 0; a < d; a++)
        for (size_t j = 0; j < len; j++) {
            col_c[j] += u[a] * kt[a * len + j];
            col_d[j] += gv[a] * rt[a * len + j];
        }
    for (size_t j = 0; j < len; j++) {
        col_c[j] *= scale;
        col_d[j] *= scale;
    }
    for (size_t i = 0; i < len; i++) {
        if (want[2])
            for (size_t j = 0; j <= i; j++) pe_matrix_row(&terms[2], i)[j] = (float)col_c[j];
        if (want[3])
            for (size_t j = 0; j <= i; j++) pe_matrix_row(&terms[3], i)[j] = (float)col_d[i - j];
    }
    /* (a) q_i.k_j, then q becomes W_R^T q and (b) is (W_R^T q_i).R_{i-j} */
    if (want[0])
        for (size_t i0 = 0; i0 < len; i0 += TI) {
            size_t ni = len - i0 < TI ? len - i0 : TI;
            done += (double)ni * (double)(i0 + 1) * (double)d;
            if (pe_work(done / work)) {
                rc = pe_work_cancelled(err, errlen);
                goto fail;
            }
            pe_xl_dots_lower(q, kt, len, d, i0, ni, rows);
            for (size_t r = 0; r < ni; r++) {
                float *out = pe_matrix_row(&terms[0], i0 + r);
                for (size_t j = 0; j <= i0 + r; j++) out[j] = (float)(rows[r * len + j] * scale);
            }
        }
    if (want[1]) {
        for (size_t i0 = 0; i0 < len; i0 += TI) {
            size_t ni = len - i0 < TI ? len - i0 : TI;
            done += (double)ni * (double)d * (double)d;
            if (pe_work(done / work)) {
                rc = pe_work_cancelled(err, errlen);
                goto fail;
            }
            pe_xl_project(wr, q + i0 * d, ni, d, tmp);
            for (size_t a = 0; a < ni * d; a++) q[i0 * d + a] = tmp[a];
        }
        for (size_t i0 = 0; i0 < len; i0 += TI) {
            size_t ni = len - i0 < TI ? len - i0 : TI;
            done += (double)ni * (double)(i0 + 1) * (double)d;
            if (pe_work(done / work)) {
                rc = pe_work_cancelled(err, errlen);
                goto fail;
            }
            pe_xl_dots_lower(q, rt, len, d, i0, ni, rows); /* column r: distance r */
            for (size_t r = 0; r < ni; r++) {
                size_t i = i0 + r;
                float *out = pe_matrix_row(&terms[1], i);
                for (size_t j = 0; j <= i; j++) out[j] = (float)(rows[r * len + i - j] * scale);
            }
        }
    }
    for (int t = 0; t < 4; t++)
        if (want[t])
            for (size_t i = 0; i < len; i++)
                for (size_t j = i + 1; j < len; j++) pe_matrix_row(&terms[t], i)[j] = -INFINITY;
    free(buf);
    pe_mem_release(n * sizeof(double));
    return PE_OK;
}
int pe_xl_terms(const pe_params *p, pe_matrix terms[4], char *err, size_t errlen)
{
    int rc = xl_validate(p, err, errlen);
    if (rc != PE_OK) return rc;
    static const int all[4] = {1, 1, 1, 1};
    return xl_compute(p, p->seed, all, terms, err, errlen);
}

/* The position-only part of the logits, terms [1] + [3]; head h draws with seed + h, so head 0
 * matches pe_xl_terms. */
static int xl_bias(const pe_params *p, int head, pe_matrix *out, char *err, size_t errlen)
{
    int rc = xl_validate(p, err, errlen);
    if (rc != PE_OK) return rc;
    if (head < 0 || head >= p->heads)
        return pe_fail(err, errlen, PE_EINVAL, "--head %d: must be 0..%d (--heads %d)", head,
                       p->heads - 1, p->heads);
    static const int pos_terms[4] = {0, 1, 0, 1};
    pe_matrix t[4] = {{0}};
    rc = xl_compute(p, p->seed + (uint64_t)head, pos_terms, t, err, errlen);
    if (rc != PE_OK) return rc;
    /* -INFINITY + -INFINITY stays -INFINITY, so the mask survives the sum. */
    for (size_t i = 0; i < t[1].rows * t[1].cols; i++) t[1].data[i] += t[3].data[i];
    pe_matrix_free(&t[3]);
    *out = t[1];
    return PE_OK;
}

const pe_encoding pe_enc_xl = {
    .name = "xl",
    .description = "Transformer-XL: sinusoids of i-j projected by W_R, with global u and v terms",
    .acts = PE_ACTS_LOGITS,
    .validate = xl_validate,
    .bias = xl_bias,
};
