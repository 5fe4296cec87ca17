/* alibi.c: Attention with Linear Biases (Press et al. 2022). */
#include <math.h>
#include <stdlib.h>

#include "pe_internal.h"

static int check_ratio(double ratio, char *err, size_t errlen)
{
    if (!isfinite(ratio) || ratio < 0.0 || ratio >= 1.0)
        return pe_fail(err, errlen, PE_EINVAL,
                       "--slope-ratio %g: must be 0 (the paper's slopes) or in (0, 1)", ratio);
    return PE_OK;
}

static int alibi_validate(const pe_params *p, char *err, size_t errlen)
{
    int rc = pe_check_heads(p->heads, err, errlen);
    if (rc == PE_OK) rc = check_ratio(p->slope_ratio, err, errlen);
    if (rc == PE_OK) rc = pe_check_len(p->len, err, errlen);
    if (rc == PE_OK)
        rc = pe_check_cells((size_t)p->len, (size_t)p->len, "--len x --len", err, errlen);
    return rc;
}

/* The paper's slopes for a power of two n: 2^(-8(h+1)/n). exp2 of these exponents is exact for
 * integer exponents and correctly rounded otherwise. */
static double pow2_slope(int n, int h)
{
    return exp2(-8.0 * (double)(h + 1) / (double)n);
}

int pe_alibi_slopes(int heads, double ratio, double *out, char *err, size_t errlen)
{
    int rc = pe_check_heads(heads, err, errlen);
    if (rc == PE_OK) rc = check_ratio(ratio, err, errlen);
    if (rc != PE_OK) return rc;
    if (ratio > 0.0) {
        for (int h = 0; h < heads; h++) out[h] = pow(ratio, (double)(h + 1));
        return PE_OK;
    }
    int pw = 1;
    while (pw * 2 <= heads) pw *= 2;
    for (int h = 0; h < pw; h++) out[h] = pow2_slope(pw, h);
    /* Not a power of two: every second slope of the 2P-head set fills the rest. */
    for (int h = pw; h < heads; h++) out[h] = pow2_slope(2 * pw, 2 * (h - pw));
    return PE_OK;
}

float pe_alibi_value(double slope, int symmetric, size_t i, size_t j)
{
    /* slope x (j - i), not -slope x (i - j): the same values, but the diagonal is +0, not -0 */
    if (j <= i) return (float)(slope * ((double)j - (double)i));
    return symmetric ? (float)(slope * ((double)i - (double)j)) : -INFINITY;
}

int pe_alibi_bias(const pe_params *p, int head, pe_matrix *out, char *err, size_t errlen)
{
    int rc = alibi_validate(p, err, errlen);
    if (rc != PE_OK) return rc;
    if (head < 0 || head >= p->heads)
        return pe_fail(err, errlen, PE_EINVAL, "--head %d: must be 0..%d (--heads %d)", head,
                       p->heads - 1, p->heads);
    double *slopes = malloc((size_t)p->heads * sizeof *slopes);
    if (!slopes) return pe_fail(err, errlen, PE_ENOMEM, "--heads %d: out of memory", p->heads);
    rc = pe_alibi_slopes(p->heads, p->slope_ratio, slopes, err, errlen);
    double m = slopes[head];
    free(slopes);
    if (rc == PE_OK) rc = pe_matrix_alloc(out, (size_t)p->len, (size_t)p->len, 0, err, errlen);
    if (rc != PE_OK) return rc;
    for (size_t i = 0; i < out->rows; i++) {
        float *row = pe_matrix_row(out, i);
        for (size_t j = 0; j < out->cols; j++) row[j] = pe_alibi_value(m, p->alibi_symmetric, i, j);
    }
    return PE_OK;
}

const pe_encoding pe_enc_alibi = {
    .name = "alibi",
    .description = "a per-head linear penalty -m(i-j) on the attention logits (Press 2022)",
    .acts = PE_ACTS_LOGITS,
    .validate = alibi_validate,
    .bias = pe_alibi_bias,
};
