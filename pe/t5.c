/* t5.c: T5 relative position buckets (Raffel et al.; HF T5Attention._relative_position_bucket):
 * one learned scalar per (head, bucket), added to the unscaled logit. */
#include <math.h>
#include <stdlib.h>

#include "pe_internal.h"

#define T5_MAX_BUCKETS 4096

/* Float32 arithmetic on purpose: HF computes the log-spaced part on float tensors, and exact
 * cases such as rel = 32 (log 4 / log 16 * 8 = 4) must truncate the same way. */
int pe_t5_bucket(int rel, int bidirectional, int num_buckets, int max_distance)
{
    int ret = 0;
    long n;
    if (bidirectional) {
        num_buckets /= 2;
        if (rel > 0) ret = num_buckets;
        n = labs((long)rel);
    } else {
        n = rel < 0 ? -(long)rel : 0;
    }
    int max_exact = num_buckets / 2;
    if (n < max_exact) return ret + (int)n;
    if (max_exact < 1) return ret; /* degenerate sizes the validators reject: one bucket */
    float lg = logf((float)n / (float)max_exact);
    float den = (float)log((double)max_distance / (double)max_exact);
    float large = lg / den * (float)(num_buckets - max_exact);
    /* HF's min(., num_buckets - 1); also catches inf and NaN before the integer conversion. */
    if (!(large < (float)(num_buckets - max_exact))) return ret + num_buckets - 1;
    if (large < 0.0f) large = 0.0f;
    return ret + max_exact + (int)large;
}

static int t5_check(const pe_params *p, char *err, size_t errlen)
{
    int rc = pe_check_heads(p->heads, err, errlen);
    if (rc != PE_OK) return rc;
    int bidir = p->t5_bidirectional != 0;
    int lo = bidir ? 4 : 2;
    if (p->t5_buckets < lo || p->t5_buckets > T5_MAX_BUCKETS || (bidir && p->t5_buckets % 2))
        return pe_fail(err, errlen, PE_EINVAL, "--buckets %d: must be %s%d..%d%s", p->t5_buckets,
                       bidir ? "even, " : "", lo, T5_MAX_BUCKETS,
                       bidir ? " when bidirectional (half the buckets per direction)" : "");
    int max_exact = bidir ? p->t5_buckets / 4 : p->t5_buckets / 2;
    if (p->t5_max_distance <= max_exact || p->t5_max_distance > PE_MAX_LEN)
        return pe_fail(err, errlen, PE_EINVAL,
                       "--max-distance %d: must be %d..%d (more than the %d exact buckets)",
                       p->t5_max_distance, max_exact + 1, PE_MAX_LEN, max_exact);
    return PE_OK;
}

static int t5_validate(const pe_params *p, char *err, size_t errlen)
{
    int rc = t5_check(p, err, errlen);
    if (rc == PE_OK) rc = pe_check_len(p->len, err, errlen);
    if (rc == PE_OK)
        rc = pe_check_cells((size_t)p->len, (size_t)p->len, "--len x --len", err, errlen);
    return rc;
}

int pe_t5_values(const pe_params *p, pe_matrix *out, char *err, size_t errlen)
{
    int rc = t5_check(p, err, errlen);
    if (rc == PE_OK) rc = pe_matrix_init(out, (size_t)p->heads, (size_t)p->t5_buckets, err, errlen);
    if (rc != PE_OK) return rc;
    pe_rng r;
    pe_rng_seed(&r, p->seed);
    for (size_t i = 0; i < out->rows * out->cols; i++)
        out->data[i] = (float)(0.5 * pe_rng_normal(&r));
    return PE_OK;
}

float pe_t5_value(const pe_params *p, const float *head_values, size_t i, size_t j)
{
    if (!p->t5_bidirectional && j > i) return -INFINITY;
    long rel = (long)j - (long)i;
    return head_values[pe_t5_bucket((int)rel, p->t5_bidirectional != 0, p->t5_buckets,
                                    p->t5_max_distance)];
}

/* bias[i][j] = value[head][bucket(j - i)]; causal T5 also masks j > i with -INFINITY. */
static int t5_bias(const pe_params *p, int head, pe_matrix *out, char *err, size_t errlen)
{
    int rc = t5_validate(p, err, errlen);
    if (rc != PE_OK) return rc;
    if (head < 0 || head >= p->heads)
        return pe_fail(err, errlen, PE_EINVAL, "--head %d: must be 0..%d (--heads %d)", head,
                       p->heads - 1, p->heads);
    pe_matrix vals = {0};
    rc = pe_t5_values(p, &vals, err, errlen);
    if (rc != PE_OK) return rc;
    size_t len = (size_t)p->len;
    /* One value per relative distance rel = j - i in -(L-1)..L-1, at index rel + L - 1. */
    float *by_rel = malloc((2 * len - 1) * sizeof *by_rel);
    if (!by_rel) {
        pe_matrix_free(&vals);
        return pe_fail(err, errlen, PE_ENOMEM, "--len %d: out of memory", p->len);
    }
    const float *v = pe_matrix_row(&vals, (size_t)head);
    int bidir = p->t5_bidirectional != 0;
    for (long rel = -(long)len + 1; rel <= (long)len - 1; rel++)
        by_rel[rel + (long)len - 1] =
            v[pe_t5_bucket((int)rel, bidir, p->t5_buckets, p->t5_max_distance)];
    pe_matrix_free(&vals);
    rc = pe_matrix_init(out, len, len, err, errlen);
    if (rc == PE_OK) {
        for (size_t i = 0; i < len; i++) {
            float *row = pe_matrix_row(out, i);
            for (size_t j = 0; j < len; j++)
                row[j] = (!bidir && j > i) ? -INFINITY : by_rel[j + len - 1 - i];
        }
    }
    free(by_rel);
    return rc;
}

const pe_encoding pe_enc_t5 = {
    .name = "t5",
    .description = "one learned scalar per head and log-spaced distance bucket on the logits (T5)",
    .acts = PE_ACTS_LOGITS,
    .validate = t5_validate,
    .bias = t5_bias,
};
