/* xl.c: Transformer-XL relative encoding (Dai et al. 2019). The score of (i, j) splits into four
 * terms: content q.k, content-position q.W_R R_{i-j}, global content u.k, global position
 * v.W_R R_{i-j}; here with seeded random q, k, u, v and W_R to show their shapes. */
#include <math.h>
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

static double dot(const double *a, const double *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* Fill the terms selected by want[t] (each (L, L), zeroed or freed). Random draws, in order:
 * q (L, d), k (L, d), u (d), v (d), W_R (d, d) with std 1/sqrt(d) so W_R R stays O(1). */
static int xl_compute(const pe_params *p, uint64_t seed, const int want[4], pe_matrix terms[4],
                      char *err, size_t errlen)
{
    size_t len = (size_t)p->len, d = (size_t)p->dim;
    size_t n = 2 * len * d + 2 * d + d * d + len * d + d;
    double *buf = malloc(n * sizeof *buf);
    if (!buf)
        return pe_fail(err, errlen, PE_ENOMEM, "--len %d x --dim %d: out of memory", p->len,
                       p->dim);
    double *q = buf, *k = q + len * d, *u = k + len * d, *v = u + d, *wr = v + d;
    double *pr = wr + d * d; /* (L, d): W_R R_r for r = 0..L-1 */
    double *r_vec = pr + len * d;
    pe_rng rng;
    pe_rng_seed(&rng, seed);
    for (size_t i = 0; i < 2 * len * d + 2 * d; i++) q[i] = pe_rng_normal(&rng);
    double wstd = 1.0 / sqrt((double)d);
    for (size_t i = 0; i < d * d; i++) wr[i] = wstd * pe_rng_normal(&rng);
    for (size_t r = 0; r < len; r++) {
        pe_xl_r(p, (double)r, r_vec);
        for (size_t a = 0; a < d; a++) pr[r * d + a] = dot(wr + a * d, r_vec, d);
    }

    int rc = PE_OK;
    for (int t = 0; t < 4 && rc == PE_OK; t++)
        if (want[t]) rc = pe_matrix_init(&terms[t], len, len, err, errlen);
    if (rc != PE_OK) {
        for (int t = 0; t < 4; t++)
            if (want[t]) pe_matrix_free(&terms[t]);
        free(buf);
        return rc;
    }
    double scale = 1.0 / sqrt((double)d);
    for (size_t i = 0; i < len; i++) {
        const double *qi = q + i * d;
        for (size_t j = 0; j < len; j++) {
            const double *kj = k + j * d, *prij = pr + (i - j) * d;
            int masked = j > i;
            double val[4] = {0};
            if (!masked) {
                if (want[0]) val[0] = dot(qi, kj, d) * scale;
                if (want[1]) val[1] = dot(qi, prij, d) * scale;
                if (want[2]) val[2] = dot(u, kj, d) * scale;
                if (want[3]) val[3] = dot(v, prij, d) * scale;
            }
            for (int t = 0; t < 4; t++)
                if (want[t]) pe_matrix_row(&terms[t], i)[j] = masked ? -INFINITY : (float)val[t];
        }
    }
    free(buf);
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
