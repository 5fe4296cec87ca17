/* test_lm_kernels: the blocked kernels of pe/model/lm_kernels.c against plain loops.
 *
 * The linear maps (W (out, in) in place as the output head reads it; packed into panels from
 * W (out, in) as Llama stores it and from GPT-2's Conv1D (in, out); with and without bias; a row
 * stride wider than the matrix) at sizes that miss every tile and vector edge: T = 1, 2, 3, 17,
 * 65 tokens (tiles take 3, 6 or 12 tokens, chunks 32), in and out from 1 to 300 (vectors take 8,
 * head tiles 4 rows, or 8 on AVX-512 CPUs; panels 32 outputs, partial ones masked, decoding four
 * panels at once), on 1 and 2 threads. Each output is compared with a double-precision sum of the
 * same products.
 *
 * Tolerance: a float sum of n products, in any order, with or without fused multiply-adds, is
 * within gamma_n * sum_i |x_i w_i| of the exact sum, gamma_n = n u / (1 - n u), u = 2^-24 (Higham,
 * "Accuracy and Stability of Numerical Algorithms", 3.1); adding the bias rounds once more, u
 * times the result. The test allows (n + 2) u (sum |x_i w_i| + |b|), the bound with a margin for
 * the 1 / (1 - n u) factor (n u < 2e-5 here): a kernel that drops, repeats or misplaces a single
 * product is off by about |x_i w_i| >> this, except where that product is tiny, which the random
 * values (uniform in [-1, 1]) make improbable at every one of the ~10^6 outputs checked.
 *
 * Exact properties on top: 2 threads give 1 thread's bits, and T tokens at once give the bits of
 * one token at a time (the forward relies on both: tests/pe/realmodel/test_lm.c checks a prompt
 * against token-by-token decoding bit for bit).
 *
 * The attention loops: q . k_j scaled, and sum_j p_j v_j, against double sums with the same
 * bound; scores four keys at a time (their four sums reduced as one vector) give the bits of one
 * key alone (an attention row recomputed for a view must equal the forward's). The activations
 * (GELU's tanh form, SwiGLU's silu(g) * up, on a vector exp) against libm in double: relative error
 * <= 1e-6 (the exp polynomial is good to about 1e-7, the other operations add a few float
 * roundings), plus for GELU 4 u |2u'| where u' is its exp argument: that argument is itself
 * computed in float (x^3, two products, a sum: about four roundings), and e^a turns an absolute
 * error d of a into a relative error d (|a| up to 87 here); or 1e-30 absolute where the value
 * underflows towards zero (the exp argument clamped at -87). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lm_internal.h"
#include "tap.h"

static unsigned long long rng = 0x243f6a8885a308d3ull;

static float uni(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(rng >> 40) / 8388608.0 - 1.0); /* [-1, 1) */
}

static void fill(float *a, size_t n)
{
    for (size_t i = 0; i < n; i++) a[i] = uni();
}

/* Largest |got - exact| / bound over T x out outputs (<= 1 passes); W element (o, i). */
static double check_linear(const lm_linear *L, const float *x, int T, const float *got)
{
    const double u = 1.0 / 16777216.0;
    double worst = 0.0;
    for (int t = 0; t < T; t++)
        for (int o = 0; o < L->out; o++) {
            double sum = 0.0, mag = 0.0;
            for (int i = 0; i < L->in; i++) {
                double w = L->t ? L->w[(size_t)i * L->ld + (size_t)o]
                                : L->w[(size_t)o * L->ld + (size_t)i];
                double p = (double)x[(size_t)t * (size_t)L->in + (size_t)i] * w;
                sum += p;
                mag += fabs(p);
            }
            if (L->b) {
                sum += L->b[o];
                mag += fabs(L->b[o]);
            }
            double bound = (L->in + 2) * u * mag + 1e-30;
            double r = fabs((double)got[(size_t)t * (size_t)L->out + (size_t)o] - sum) / bound;
            if (!(r <= worst)) worst = r;
        }
    return worst;
}

static void test_linear(void)
{
    const int Ts[] = {1, 2, 3, 17, 65};
    const int sizes[][2] = {{1, 1},   {5, 3},     {8, 16},   {13, 21},  {37, 70},
                            {64, 67}, {130, 129}, {300, 85}, {257, 200}};
    int cases = 0, bad_bound = 0, bad_threads = 0, bad_tokens = 0, bad_pack = 0;
    double worst = 0.0;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int lay = 0; lay < 3; lay++)
            for (int bias = 0; bias < 2; bias++) {
                /* lay 0: W (out, in) in place (the head); 1: W (out, in) packed (Llama's
                 * layers); 2: W (in, out) packed (GPT-2's Conv1D) */
                int in = sizes[s][0], out = sizes[s][1], layout = lay == 2;
                /* a row stride wider than the matrix (as a slice of a fused matrix would be) */
                size_t ld = layout ? (size_t)out + 5 : (size_t)in + 3;
                size_t rows = layout ? (size_t)in : (size_t)out;
                float *w = malloc(rows * ld * sizeof *w), *b = malloc((size_t)out * sizeof *b);
                fill(w, rows * ld);
                fill(b, (size_t)out);
                lm_linear L = {
                    .w = w, .b = bias ? b : NULL, .in = in, .out = out, .ld = ld, .t = layout};
                size_t pn = lm_linear_packed_floats(in, out);
                float *pk = aligned_alloc(64, (pn * sizeof *pk + 63) & ~(size_t)63);
                if (lay) lm_linear_pack(&L, pk);
                /* the panels: 32 outputs each, `in` rows, zeros past out */
                if (lay && pn != (size_t)((out + 31) / 32) * 32 * (size_t)in) bad_pack++;
                for (size_t q = 0; lay && q < pn / (32 * (size_t)in); q++)
                    for (int i = 0; i < in; i++)
                        for (int c = 0; c < 32; c++) {
                            size_t o = q * 32 + (size_t)c;
                            float want = o >= (size_t)out ? 0.0f
                                         : layout         ? w[(size_t)i * ld + o]
                                                          : w[o * ld + (size_t)i];
                            bad_pack += pk[(q * (size_t)in + (size_t)i) * 32 + (size_t)c] != want;
                        }
                for (size_t k = 0; k < sizeof Ts / sizeof Ts[0]; k++) {
                    int T = Ts[k];
                    float *x = malloc((size_t)T * (size_t)in * sizeof *x);
                    float *y1 = malloc((size_t)T * (size_t)out * sizeof *y1);
                    float *y2 = malloc((size_t)T * (size_t)out * sizeof *y2);
                    float *y3 = malloc((size_t)T * (size_t)out * sizeof *y3);
                    fill(x, (size_t)T * (size_t)in);
                    lm_linear_apply(&L, x, T, y1, 1);
                    lm_linear_apply(&L, x, T, y2, 2);
                    for (int t = 0; t < T; t++)
                        lm_linear_apply(&L, x + (size_t)t * (size_t)in, 1,
                                        y3 + (size_t)t * (size_t)out, 1);
                    double r = check_linear(&L, x, T, y1);
                    if (!(r <= worst)) worst = r;
                    if (!(r <= 1.0)) {
                        if (!bad_bound++)
                            tap_diag("%s in %d out %d T %d bias %d: %.3g of the bound",
                                     lay == 2 ? "(in, out) packed"
                                     : lay    ? "(out, in) packed"
                                              : "(out, in)",
                                     in, out, T, bias, r);
                    }
                    size_t bytes = (size_t)T * (size_t)out * sizeof *y1;
                    bad_threads += memcmp(y1, y2, bytes) != 0;
                    if (memcmp(y1, y3, bytes) != 0 && !bad_tokens++)
                        tap_diag("%s in %d out %d T %d bias %d: T tokens differ from one at a time",
                                 lay == 2 ? "(in, out) packed"
                                 : lay    ? "(out, in) packed"
                                          : "(out, in)",
                                 in, out, T, bias);
                    cases++;
                    free(x);
                    free(y1);
                    free(y2);
                    free(y3);
                }
                free(w);
                free(b);
                free(pk);
            }
    TAP_OK(cases == 270, "270 cases: 9 sizes x 3 layouts x bias or none x 5 token counts");
    TAP_OK(bad_pack == 0, "the packed panels hold W's columns, zeros past out (%d wrong)",
           bad_pack);
    TAP_OK(bad_bound == 0,
           "every output within (in + 2) u sum |x w| of the double sum (%d cases over; worst "
           "%.3g of the bound)",
           bad_bound, worst);
    TAP_OK(bad_threads == 0, "2 threads give 1 thread's bits (%d cases differ)", bad_threads);
    TAP_OK(bad_tokens == 0, "T tokens at once give one-at-a-time's bits (%d cases differ)",
           bad_tokens);
}

static void test_attention(void)
{
    const double u = 1.0 / 16777216.0;
    const int hds[] = {1, 8, 13, 64, 80}, ns[] = {1, 2, 5, 17};
    double worst_s = 0.0, worst_m = 0.0;
    int bad_bits = 0;
    for (size_t a = 0; a < sizeof hds / sizeof hds[0]; a++)
        for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++) {
            int hd = hds[a], n = ns[b];
            size_t stride = (size_t)hd * 3 + 1; /* keys of one head among others */
            float *q = malloc((size_t)hd * sizeof *q), *k = malloc((size_t)n * stride * sizeof *k);
            float *v = malloc((size_t)n * stride * sizeof *v), *p = malloc((size_t)n * sizeof *p);
            float *o = malloc((size_t)hd * sizeof *o);
            fill(q, (size_t)hd);
            fill(k, (size_t)n * stride);
            fill(v, (size_t)n * stride);
            const float scale = 0.125f;
            lm_attn_scores(q, k, stride, n, hd, scale, p);
            /* keys four at a time (one vector tree for the four sums) give one key's bits */
            for (int j = 0; j < n; j++) {
                float one;
                lm_attn_scores(q, k + (size_t)j * stride, stride, 1, hd, scale, &one);
                bad_bits += memcmp(&one, p + j, sizeof one) != 0;
            }
            for (int j = 0; j < n; j++) {
                double sum = 0.0, mag = 0.0;
                for (int i = 0; i < hd; i++) {
                    double pr = (double)q[i] * k[(size_t)j * stride + (size_t)i];
                    sum += pr;
                    mag += fabs(pr);
                }
                /* the scaling by 1/8 is exact; the sum rounds as in the linear maps */
                double r = fabs(p[j] - sum * scale) / ((hd + 2) * u * mag * scale + 1e-30);
                if (!(r <= worst_s)) worst_s = r;
            }
            lm_attn_mix(p, v, stride, n, hd, o);
            for (int i = 0; i < hd; i++) {
                double sum = 0.0, mag = 0.0;
                for (int j = 0; j < n; j++) {
                    double pr = (double)p[j] * v[(size_t)j * stride + (size_t)i];
                    sum += pr;
                    mag += fabs(pr);
                }
                double r = fabs(o[i] - sum) / ((n + 2) * u * mag + 1e-30);
                if (!(r <= worst_m)) worst_m = r;
            }
            free(q);
            free(k);
            free(v);
            free(p);
            free(o);
        }
    TAP_OK(worst_s <= 1.0, "scores q . k_j: every one within the bound (worst %.3g of it)",
           worst_s);
    TAP_OK(bad_bits == 0, "scores of four keys at once give each key's bits alone (%d differ)",
           bad_bits);
    TAP_OK(worst_m <= 1.0, "sum_j p_j v_j: every component within the bound (worst %.3g of it)",
           worst_m);
}

static void test_activations(void)
{
    enum { N = 20003 }; /* not a multiple of 8: the padded tail */
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *up = malloc(N * sizeof *up);
    for (int i = 0; i < N; i++) x[i] = -30.0f + 60.0f * (float)i / (N - 1);
    x[0] = -200.0f;
    x[1] = 200.0f;
    x[2] = 0.0f;
    lm_gelu(y, x, N);
    double worst = 0.0;
    for (int i = 0; i < N; i++) {
        double v = x[i], u = 0.7978845608028654 * (v + 0.044715 * v * v * v);
        /* = 0.5 v (1 + tanh(u)), written without the cancellation of 1 + tanh(u) near -1 */
        double ref = v / (1.0 + exp(-2.0 * u));
        double tol = (1e-6 + 4.0 / 16777216.0 * fmin(fabs(2.0 * u), 87.0)) * fabs(ref) + 1e-30;
        double r = fabs(y[i] - ref) / tol;
        if (!(r <= worst)) worst = r;
    }
    TAP_OK(worst <= 1.0,
           "GELU (tanh form) of %d values in [-30, 30] and +-200 within its bound "
           "(worst %.3g of it)",
           N, worst);
    for (int i = 0; i < N; i++) {
        x[i] = -120.0f + 240.0f * (float)i / (N - 1);
        up[i] = uni();
    }
    memcpy(y, x, N * sizeof *y);
    lm_silu_mul(y, up, N);
    worst = 0.0;
    for (int i = 0; i < N; i++) {
        double g = x[i], ref = g / (1.0 + exp(-g)) * up[i];
        double r = fabs(y[i] - ref) / (1e-6 * fabs(ref) + 1e-30);
        if (!(r <= worst)) worst = r;
    }
    TAP_OK(worst <= 1.0,
           "silu(g) * up of %d values of g in [-120, 120] within 1e-6 (worst %.3g "
           "of it)",
           N, worst);
    /* an element's value does not depend on where it falls: the tail equals the body */
    float a[9], b[9];
    for (int i = 0; i < 9; i++) a[i] = 0.37f;
    lm_gelu(b, a, 9);
    TAP_OK(memcmp(b, b + 8, sizeof *b) == 0 && memcmp(b, b + 1, sizeof *b) == 0,
           "the padded tail gives the body's bits");
    free(x);
    free(y);
    free(up);
}

int main(void)
{
    test_linear();
    test_attention();
    test_activations();
    return tap_done();
}
