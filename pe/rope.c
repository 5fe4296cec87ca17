/* rope.c: rotary position embedding (Su et al., RoFormer) in both pairings, with partial rotary
 * dimensions as in GPT-NeoX / HF (inverse frequencies use the rotary dimension as d). The
 * frequencies and their checks (the rotary dimension included) are rope_scaling.c's: this file
 * rotates with them, and nothing there calls back here. */
#include <math.h>
#include <stdlib.h>

#include "pe_internal.h"

void pe_rope_pair(const pe_params *p, int k, int *i0, int *i1)
{
    if (p->pairing == PE_PAIRING_HALF) {
        *i0 = k;
        *i1 = k + pe_rope_rotary_dim(p) / 2;
    } else {
        *i0 = 2 * k;
        *i1 = 2 * k + 1;
    }
}

int pe_rope_validate(const pe_params *p, char *err, size_t errlen)
{
    int rc = pe_rope_validate_freq(p, err, errlen);
    if (rc == PE_OK) rc = pe_check_len(p->len, err, errlen);
    if (rc == PE_OK)
        rc = pe_check_cells((size_t)p->len, (size_t)p->dim, "--len x --dim", err, errlen);
    return rc;
}

static void rotate_pair(double *x, int i0, int i1, double c, double s)
{
    double a = x[i0], b = x[i1];
    x[i0] = a * c - b * s;
    x[i1] = a * s + b * c;
}

void pe_rope_rotate(const pe_params *p, const double *inv_freq, double attn, double *x, double pos)
{
    int npairs = pe_rope_rotary_dim(p) / 2;
    for (int k = 0; k < npairs; k++) {
        int i0, i1;
        pe_rope_pair(p, k, &i0, &i1);
        double a = pos * inv_freq[k];
        rotate_pair(x, i0, i1, attn * cos(a), attn * sin(a));
    }
}

void pe_rope_apply(const pe_params *p, const pe_rope_ctx *c, double *x, double pos,
                   double (*pair_scale)(const pe_params *p, int k, double pos, int is_key),
                   int is_key)
{
    for (int k = 0; k < c->rot_dim / 2; k++) {
        int i0, i1;
        pe_rope_pair(p, k, &i0, &i1);
        double a = pos * pe_rope_ctx_theta(p, c, k);
        double g = c->attn;
        if (pair_scale) g *= pair_scale(p, k, pos, is_key);
        rotate_pair(x, i0, i1, g * cos(a), g * sin(a));
    }
}

void pe_rope_rotate_f(float *x, int dim, int rot_dim, pe_pairing pairing, const float *cos_row,
                      const float *sin_row)
{
    int npairs = (rot_dim < dim ? rot_dim : dim) / 2;
    int stride = pairing == PE_PAIRING_HALF ? npairs : 1;
    int step = pairing == PE_PAIRING_HALF ? 1 : 2;
    for (int k = 0; k < npairs; k++) {
        float *a = x + k * step, *b = a + stride;
        float xa = *a, xb = *b, c = cos_row[k], s = sin_row[k];
        *a = xa * c - xb * s;
        *b = xa * s + xb * c;
    }
}

void pe_rope_unrotate_f(float *x, int dim, int rot_dim, pe_pairing pairing, const float *cos_row,
                        const float *sin_row)
{
    int npairs = (rot_dim < dim ? rot_dim : dim) / 2;
    int stride = pairing == PE_PAIRING_HALF ? npairs : 1;
    int step = pairing == PE_PAIRING_HALF ? 1 : 2;
    for (int k = 0; k < npairs; k++) {
        float *a = x + k * step, *b = a + stride;
        double ya = *a, yb = *b, c = cos_row[k], s = sin_row[k], n = c * c + s * s;
        if (!(n > 0)) continue; /* an attention factor of 0 leaves nothing to undo */
        *a = (float)((ya * c + yb * s) / n);
        *b = (float)((yb * c - ya * s) / n);
    }
}

int pe_rope_tables(const pe_params *p, pe_matrix *cos_t, pe_matrix *sin_t, char *err, size_t errlen)
{
    int rc = pe_rope_validate(p, err, errlen);
    if (rc != PE_OK) return rc;
    pe_rope_ctx c;
    pe_rope_ctx_init(p, &c);
    size_t npairs = (size_t)c.rot_dim / 2;
    rc = pe_matrix_init(cos_t, (size_t)p->len, npairs, err, errlen);
    if (rc == PE_OK) rc = pe_matrix_init(sin_t, (size_t)p->len, npairs, err, errlen);
    if (rc != PE_OK) {
        pe_matrix_free(cos_t);
        return rc;
    }
    double *theta = malloc(npairs * sizeof *theta);
    if (!theta) {
        pe_matrix_free(cos_t);
        pe_matrix_free(sin_t);
        return pe_fail(err, errlen, PE_ENOMEM, "--dim %d: out of memory for the frequencies",
                       p->dim);
    }
    for (size_t k = 0; k < npairs; k++) theta[k] = pe_rope_ctx_theta(p, &c, (int)k);
    for (size_t pos = 0; pos < (size_t)p->len; pos++) {
        float *cr = pe_matrix_row(cos_t, pos), *sr = pe_matrix_row(sin_t, pos);
        for (size_t k = 0; k < npairs; k++) {
            double a = (double)pos * theta[k];
            cr[k] = (float)(c.attn * cos(a));
            sr[k] = (float)(c.attn * sin(a));
        }
    }
    free(theta);
    return PE_OK;
}

static void rope_apply_qk(const pe_params *p, double *x, double pos, int is_key)
{
    pe_rope_ctx c;
    pe_rope_ctx_init(p, &c);
    pe_rope_apply(p, &c, x, pos, NULL, is_key);
}

const pe_encoding pe_enc_rope = {
    .name = "rope",
    .description = "rotates each (q, k) pair by position times its frequency (Su 2021)",
    .acts = PE_ACTS_QK,
    .validate = pe_rope_validate,
    .apply_qk = rope_apply_qk,
};
