/* test_kernels: every fast kernel of the network against the plain one. The matrix products
 * of each SIMD kernel this CPU runs (AVX2, AVX-512) against the plain C product over edge shapes
 * (tails of rows and columns, strided and transposed operands, bias, accumulation), within a
 * tolerance scaled by the sum of |terms|; the parts of products causal attention computes (every
 * kernel, the plain one too); the vectorisable e^x against libm's expf. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/tiny/nn.h"
#include "tap.h"

static float frand(unsigned *s)
{
    *s = *s * 1664525u + 1013904223u;
    return (float)((*s >> 8) / 16777216.0 * 2 - 1);
}

int main(void)
{
    int nk = nn_kernel_count();
    TAP_OK(nk >= 1 && !strcmp(nn_kernel_name(0), "plain"), "%d kernels, the first plain", nk);
    const int shapes[][3] = {{1, 1, 1},   {3, 5, 7},    {8, 64, 192},  {13, 17, 33},
                             {6, 64, 64}, {9, 256, 64}, {64, 299, 65}, {17, 64, 299},
                             {1, 3, 16},  {7, 2, 31},   {16, 16, 48},  {5, 40, 17}};
    unsigned seed = 7;
    for (int v = 1; v < nk; v++) {
        int ran = 0, worst_ok = 1;
        double worst = 0;
        for (size_t si = 0; si < sizeof shapes / sizeof *shapes; si++)
            for (int mode = 0; mode < 4; mode++) {
                /* mode 0: plain, 1: bias, 2: accumulate, 3: A transposed (weight gradient) */
                int n = shapes[si][0], k = shapes[si][1], m = shapes[si][2];
                size_t na = (size_t)n * k, nb = (size_t)k * m, no = (size_t)n * m;
                float *a = malloc(na * 4), *b = malloc(nb * 4), *bias = malloc((size_t)m * 4);
                float *o0 = malloc(no * 4), *o1 = malloc(no * 4);
                for (size_t i = 0; i < na; i++) a[i] = frand(&seed);
                for (size_t i = 0; i < nb; i++) b[i] = frand(&seed);
                for (int i = 0; i < m; i++) bias[i] = frand(&seed);
                for (size_t i = 0; i < no; i++) o0[i] = o1[i] = frand(&seed);
                size_t ars = mode == 3 ? 1 : (size_t)k, acs = mode == 3 ? (size_t)n : 1;
                const float *bs = mode == 1 ? bias : NULL;
                int acc = mode >= 2;
                nn_kernel_mm(0, o0, a, ars, acs, b, bs, n, k, m, acc, 1);
                if (nn_kernel_mm(v, o1, a, ars, acs, b, bs, n, k, m, acc, 2) < 0) {
                    free(a), free(b), free(bias), free(o0), free(o1);
                    continue;
                }
                ran++;
                for (int r = 0; r < n; r++)
                    for (int j = 0; j < m; j++) {
                        /* the products are rounded differently (fused or not): bound by the sum of
                         * |terms| times a few float epsilons */
                        double mag = 1;
                        for (int p = 0; p < k; p++)
                            mag += fabs(a[r * ars + p * acs] * b[(size_t)p * m + j]);
                        double e = fabs(o1[(size_t)r * m + j] - o0[(size_t)r * m + j]) / mag;
                        if (e > worst) worst = e;
                        if (e > 4e-7 * sqrt(k + 1.0)) worst_ok = 0;
                    }
                free(a), free(b), free(bias), free(o0), free(o1);
            }
        if (ran)
            TAP_OK(worst_ok, "%s: %d products match plain C (worst error %.2g of the |terms|)",
                   nn_kernel_name(v), ran, worst);
        else
            tap_diag("%s: this CPU cannot run it", nn_kernel_name(v));
    }
    /* The parts causal attention computes (columns up to the row, terms up to or from the row),
     * every kernel including the plain one, against the plain full product: on the elements the
     * part promises, with A zero where the part skips its terms. */
    const int sq[][2] = {{1, 16}, {5, 3}, {8, 16}, {13, 20}, {16, 16}, {17, 7}, {33, 16}, {64, 16}};
    for (int v = 0; v < nk; v++) {
        int ran = 0, ok = 1;
        double worst_p = 0;
        for (size_t si = 0; si < sizeof sq / sizeof *sq; si++)
            for (int part = 1; part < NN_MM_PARTS; part++)
                for (int mode = 0; mode < 3; mode++) {
                    /* mode 0: plain, 1: accumulate, 2: A transposed and accumulate */
                    int T = sq[si][0], hd = sq[si][1];
                    int n = T, k = part == 1 ? hd : T, m = part == 1 ? T : hd;
                    size_t ars = mode == 2 ? 1 : (size_t)k, acs = mode == 2 ? (size_t)n : 1;
                    float *a = calloc((size_t)n * k, 4), *b = malloc((size_t)k * m * 4);
                    float *o0 = malloc((size_t)n * m * 4), *o1 = malloc((size_t)n * m * 4);
                    for (int r = 0; r < n; r++)
                        for (int p = 0; p < k; p++)
                            if ((part != 2 || p <= r) && (part != 3 || p >= r))
                                a[r * ars + p * acs] = frand(&seed);
                    for (size_t i = 0; i < (size_t)k * m; i++) b[i] = frand(&seed);
                    for (size_t i = 0; i < (size_t)n * m; i++) o0[i] = o1[i] = frand(&seed);
                    nn_kernel_mm(0, o0, a, ars, acs, b, NULL, n, k, m, mode > 0, 1);
                    if (nn_kernel_mm_part(v, part, o1, a, ars, acs, b, n, k, m, mode > 0) < 0) {
                        free(a), free(b), free(o0), free(o1);
                        continue;
                    }
                    ran++;
                    for (int r = 0; r < n; r++)
                        for (int j = 0; j < (part == 1 ? r + 1 : m); j++) {
                            double mag = 1;
                            for (int p = 0; p < k; p++)
                                mag += fabs(a[r * ars + p * acs] * b[(size_t)p * m + j]);
                            double e = fabs(o1[(size_t)r * m + j] - o0[(size_t)r * m + j]) / mag;
                            if (e > worst_p) worst_p = e;
                            if (e > 4e-7 * sqrt(k + 1.0)) ok = 0;
                        }
                    free(a), free(b), free(o0), free(o1);
                }
        if (ran)
            TAP_OK(ok, "%s: %d causal parts of products match plain C (worst %.2g of the |terms|)",
                   nn_kernel_name(v), ran, worst_p);
    }
    double worst = 0;
    int finite = 1;
    for (float x = -87.0f; x <= 88.0f; x += 0.001953125f) {
        float got = nn_kernel_exp(x), want = expf(x);
        double e = fabs((double)got - want) / want;
        finite &= isfinite(got) && got > 0;
        if (e > worst) worst = e;
    }
    TAP_OK(finite && worst < 2.5e-7, "e^x on [-87, 88] within %.2g of expf (2 ulp = 2.4e-7)",
           worst);
    TAP_OK(nn_kernel_exp(-200.0f) < 2e-38f && nn_kernel_exp(-200.0f) >= 0 &&
               isfinite(nn_kernel_exp(100.0f)),
           "e^x clamps: e^-200 -> %.3g, e^100 finite", (double)nn_kernel_exp(-200.0f));
    return tap_done();
}
