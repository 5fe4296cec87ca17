/* sinusoidal.c: the fixed sin/cos table of Vaswani et al. (2017), section 3.5. */
#include <math.h>
#include <stdlib.h>

#include "pe_internal.h"

/* Rows between exact sin/cos anchors. In double the rotation recurrence drifts by about one
 * ulp per step, so 64 steps stay near 1e-14, far below float resolution. */
#define ANCHOR_ROWS 64

double pe_sin_freq(const pe_params *p, int k)
{
    int half = p->dim / 2;
    if (p->freq == PE_FREQ_FAIRSEQ) {
        if (half <= 1) return 1.0;
        return exp(-(double)k * log(p->base) / (double)(half - 1));
    }
    return pow(p->base, -2.0 * (double)k / (double)p->dim);
}

/* The step from pos[i - 1] to pos[i] as an index into the rotations by a - 1, a, a + 1 (a the
 * first step), or -1 where the sample starts from exact values: the first, every ANCHOR_ROWS-th,
 * and any other step. The positions step by b or b + 1 (app grids: b = floor(len / n)) or
 * anything else; the first step is either, so the three rotations cover the common case (with
 * two, a grid whose first step was the longer one took the exact sin and cos at every shorter
 * step, about half the entries: the heatmap at L 8192 spent 60 M of its 65 M instructions
 * there). */
static size_t first_step(const size_t *pos, size_t n)
{
    return n > 1 && pos[1] > pos[0] ? pos[1] - pos[0] : 1;
}
static int step_kind(const size_t *pos, size_t i, size_t a)
{
    if (i % ANCHOR_ROWS == 0 || pos[i] <= pos[i - 1]) return -1;
    size_t step = pos[i] - pos[i - 1];
    return step + 1 < a || step > a + 1 ? -1 : (int)(step + 1 - a);
}

void pe_sincos_at(double w, const size_t *pos, size_t n, float *sin_out, float *cos_out,
                  size_t stride)
{
    size_t a = first_step(pos, n);
    double cr[3], sr[3]; /* the rotation by a - 1 + j (j = 0 unused when a is 1) */
    for (int j = 0; j < 3; j++) {
        double ang = (double)(a - 1 + (size_t)j) * w;
        cr[j] = cos(ang);
        sr[j] = sin(ang);
    }
    double s = 0, c = 1;
    for (size_t i = 0; i < n; i++) {
        int k = step_kind(pos, i, a);
        if (k < 0) {
            s = sin((double)pos[i] * w);
            c = cos((double)pos[i] * w);
        } else {
            double cs = cr[k], ss = sr[k];
            double s1 = s * cs + c * ss;
            c = c * cs - s * ss;
            s = s1;
        }
        if (sin_out) sin_out[i * stride] = (float)s;
        if (cos_out) cos_out[i * stride] = (float)c;
    }
}

void pe_sincos_rows(const double *w, const unsigned char *is_sin, size_t nc, const size_t *pos,
                    size_t nr, float *out)
{
    /* pe_sincos_at's very operations per column (the same values), a row at a time across the
     * columns: the inner loop runs over contiguous columns (vector lanes, no strided stores)
     * and the step's kind is found once per row, not once per entry */
    double *buf = nc ? malloc(sizeof *buf * nc * 8) : NULL;
    if (!buf) {
        for (size_t j = 0; j < nc; j++)
            pe_sincos_at(w[j], pos, nr, is_sin[j] ? out + j : NULL, is_sin[j] ? NULL : out + j, nc);
        return;
    }
    double *s = buf, *c = buf + nc, *cr = buf + 2 * nc, *sr = buf + 5 * nc;
    size_t a = first_step(pos, nr);
    for (int k = 0; k < 3; k++)
        for (size_t j = 0; j < nc; j++) {
            double ang = (double)(a - 1 + (size_t)k) * w[j];
            cr[(size_t)k * nc + j] = cos(ang);
            sr[(size_t)k * nc + j] = sin(ang);
        }
    for (size_t i = 0; i < nr; i++) {
        int k = step_kind(pos, i, a);
        float *o = out + i * nc;
        if (k < 0) {
            for (size_t j = 0; j < nc; j++) {
                s[j] = sin((double)pos[i] * w[j]);
                c[j] = cos((double)pos[i] * w[j]);
                o[j] = (float)(is_sin[j] ? s[j] : c[j]);
            }
            continue;
        }
        const double *cs = cr + (size_t)k * nc, *ss = sr + (size_t)k * nc;
        for (size_t j = 0; j < nc; j++) {
            double s1 = s[j] * cs[j] + c[j] * ss[j];
            double c1 = c[j] * cs[j] - s[j] * ss[j];
            s[j] = s1;
            c[j] = c1;
            o[j] = (float)(is_sin[j] ? s1 : c1);
        }
    }
    free(buf);
}

int pe_sinusoidal_sample(const pe_params *p, const size_t *rows, size_t nr, const size_t *cols,
                         size_t nc, float *out)
{
    size_t half = (size_t)p->dim / 2;
    int concat = p->layout == PE_LAYOUT_CONCAT;
    double *w = malloc(nc * (sizeof *w + 1));
    if (!w && nc) { /* no room for the frequencies: column by column */
        for (size_t j = 0; j < nc; j++) {
            size_t col = cols[j], k = concat ? (col < half ? col : col - half) : col / 2;
            int is_cos = concat ? col >= half : (int)(col & 1);
            pe_sincos_at(pe_sin_freq(p, (int)k), rows, nr, is_cos ? NULL : out + j,
                         is_cos ? out + j : NULL, nc);
        }
        return PE_OK;
    }
    unsigned char *is_sin = (unsigned char *)(w + nc);
    for (size_t j = 0; j < nc; j++) {
        size_t col = cols[j];
        size_t k = concat ? (col < half ? col : col - half) : col / 2;
        is_sin[j] = !(concat ? col >= half : (col & 1));
        w[j] = pe_sin_freq(p, (int)k);
    }
    pe_sincos_rows(w, is_sin, nc, rows, nr, out);
    free(w);
    return PE_OK;
}

int pe_sinusoidal_validate_freq(const pe_params *p, char *err, size_t errlen)
{
    int rc = pe_check_dim_for(p->dim, 1, "for sinusoidal (pairs of sin/cos)", err, errlen);
    if (rc == PE_OK) rc = pe_check_base(p->base, err, errlen);
    if (rc == PE_OK) rc = pe_check_freq(p->freq, p->dim, err, errlen);
    return rc;
}

static int sinusoidal_validate(const pe_params *p, char *err, size_t errlen)
{
    int rc = pe_sinusoidal_validate_freq(p, err, errlen);
    if (rc == PE_OK) rc = pe_check_len(p->len, err, errlen);
    if (rc == PE_OK) rc = pe_check_layout(p->layout, err, errlen);
    if (rc == PE_OK)
        rc = pe_check_cells((size_t)p->len, (size_t)p->dim, "--len x --dim", err, errlen);
    return rc;
}

/* Each row advances every pair by one rotation, (s, c) <- (s cw + c sw, c cw - s sw), instead of
 * calling sin and cos L*d/2 times; every ANCHOR_ROWS rows the pairs restart from exact values. */
int pe_sinusoidal_table(const pe_params *p, pe_matrix *out, char *err, size_t errlen)
{
    int rc = sinusoidal_validate(p, err, errlen);
    if (rc != PE_OK) return rc;
    rc = pe_matrix_alloc(out, (size_t)p->len, (size_t)p->dim, 0, err, errlen);
    if (rc != PE_OK) return rc;

    size_t half = (size_t)p->dim / 2;
    double *buf = malloc(5 * half * sizeof *buf);
    if (!buf) {
        pe_matrix_free(out);
        return pe_fail(err, errlen, PE_ENOMEM, "--dim %d: out of memory for the frequencies",
                       p->dim);
    }
    double *w = buf, *cw = buf + half, *sw = buf + 2 * half, *s = buf + 3 * half,
           *c = buf + 4 * half;
    for (size_t k = 0; k < half; k++) {
        w[k] = pe_sin_freq(p, (int)k);
        cw[k] = cos(w[k]);
        sw[k] = sin(w[k]);
    }

    int concat = p->layout == PE_LAYOUT_CONCAT;
    size_t len = (size_t)p->len;
    for (size_t p0 = 0; p0 < len; p0 += ANCHOR_ROWS) {
        if (pe_work((double)p0 / (double)len)) {
            free(buf);
            pe_matrix_free(out);
            return pe_work_cancelled(err, errlen);
        }
        for (size_t k = 0; k < half; k++) {
            double a = (double)p0 * w[k];
            s[k] = sin(a);
            c[k] = cos(a);
        }
        size_t p1 = p0 + ANCHOR_ROWS < len ? p0 + ANCHOR_ROWS : len;
        for (size_t pos = p0; pos < p1; pos++) {
            float *row = pe_matrix_row(out, pos);
            if (concat) {
                float *rs = row, *rc_ = row + half;
                for (size_t k = 0; k < half; k++) {
                    double sk = s[k], ck = c[k];
                    rs[k] = (float)sk;
                    rc_[k] = (float)ck;
                    s[k] = sk * cw[k] + ck * sw[k];
                    c[k] = ck * cw[k] - sk * sw[k];
                }
            } else {
                for (size_t k = 0; k < half; k++) {
                    double sk = s[k], ck = c[k];
                    row[2 * k] = (float)sk;
                    row[2 * k + 1] = (float)ck;
                    s[k] = sk * cw[k] + ck * sw[k];
                    c[k] = ck * cw[k] - sk * sw[k];
                }
            }
        }
    }
    free(buf);
    return PE_OK;
}

const pe_encoding pe_enc_sinusoidal = {
    .name = "sinusoidal",
    .description = "fixed sin/cos pairs at geometric frequencies added to the input (Vaswani 2017)",
    .acts = PE_ACTS_INPUT,
    .validate = sinusoidal_validate,
    .table = pe_sinusoidal_table,
};
