/* test_relative: T5 buckets (section 3), xPos (section 6), Transformer-XL (section 7). */
#include <stdio.h>

#include "pe_test.h"

static void test_t5_buckets(void)
{
    static const int rel[] = {-200, -128, -127, -100, -64, -63, -50, -33, -32, -31, -20,
                              -17,  -16,  -15,  -12,  -11, -9,  -8,  -7,  -2,  -1,  0,
                              1,    2,    7,    8,    9,   11,  12,  15,  16,  17,  20,
                              31,   32,   33,   50,   63,  64,  100, 127, 128, 200};
    static const int bi[] = {15, 15, 15, 15, 14, 13, 13, 12, 12, 11, 10, 10, 10, 9,  9,
                             8,  8,  8,  7,  2,  1,  0,  17, 18, 23, 24, 24, 24, 25, 25,
                             26, 26, 26, 27, 28, 28, 29, 29, 30, 31, 31, 31, 31};
    static const int ca[] = {31, 31, 31, 30, 26, 26, 24, 21, 21, 21, 17, 16, 16, 15, 12,
                             11, 9,  8,  7,  2,  1,  0,  0,  0,  0,  0,  0,  0,  0,  0,
                             0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0};
    int n = (int)(sizeof rel / sizeof rel[0]), okb = 1, okc = 1;
    for (int i = 0; i < n; i++) {
        int b = pe_t5_bucket(rel[i], 1, 32, 128), c = pe_t5_bucket(rel[i], 0, 32, 128);
        if (b != bi[i]) tap_diag("bidirectional rel %d: got %d want %d", rel[i], b, bi[i]);
        if (c != ca[i]) tap_diag("causal rel %d: got %d want %d", rel[i], c, ca[i]);
        okb &= b == bi[i];
        okc &= c == ca[i];
    }
    TAP_OK(okb, "T5 bidirectional buckets: the whole reference row");
    TAP_OK(okc, "T5 causal buckets: the whole reference row");
    int mono = 1;
    for (int r = -1000; r < 0; r++)
        mono &= pe_t5_bucket(r, 0, 32, 128) >= pe_t5_bucket(r + 1, 0, 32, 128);
    TAP_OK(mono, "causal buckets grow with distance");
    int inside = 1;
    for (int r = -300; r <= 300; r += 7) {
        int b0 = pe_t5_bucket(r, 1, 2, 1), b1 = pe_t5_bucket(r, 0, 8, 2),
            b2 = pe_t5_bucket(r, 1, 8, 0);
        inside &= b0 >= 0 && b0 < 2 && b1 >= 0 && b1 < 8 && b2 >= 0 && b2 < 8;
    }
    TAP_OK(inside, "degenerate sizes called directly stay within the buckets");
    TAP_OK(pe_t5_bucket(1 << 30, 1, 32, 128) == 31 && pe_t5_bucket(-(1 << 30), 0, 32, 128) == 31,
           "huge distances land in the last bucket");
}

static void test_t5_bias(void)
{
    char err[256];
    pe_params p;
    pe_params_default(&p);
    p.heads = 4;
    p.len = 40;
    p.seed = 9;
    pe_matrix v = {0}, v2 = {0}, b = {0};
    TAP_OK(pe_t5_values(&p, &v, err, sizeof err) == PE_OK && v.rows == 4 && v.cols == 32,
           "T5 values (heads, buckets)");
    pe_t5_values(&p, &v2, err, sizeof err);
    TAP_OK(memcmp(v.data, v2.data, 128 * sizeof(float)) == 0, "values deterministic by seed");
    const pe_encoding *e = pe_encoding_find("t5");
    TAP_OK(e->bias(&p, 2, &b, err, sizeof err) == PE_OK && b.rows == 40, "bidirectional bias");
    int ok = 1;
    for (int i = 0; i < 40; i++)
        for (int j = 0; j < 40; j++)
            ok &= pe_matrix_row(&b, (size_t)i)[j] ==
                  pe_matrix_row(&v, 2)[pe_t5_bucket(j - i, 1, 32, 128)];
    TAP_OK(ok, "bias[i][j] = value[head][bucket(j - i)]");
    TAP_OK(pe_matrix_row(&b, 5)[9] != pe_matrix_row(&b, 9)[5],
           "bidirectional: j>i has own buckets");
    pe_matrix_free(&b);
    p.t5_bidirectional = 0;
    e->bias(&p, 1, &b, err, sizeof err);
    ok = 1;
    for (int i = 0; i < 40; i++)
        for (int j = 0; j < 40; j++) {
            float x = pe_matrix_row(&b, (size_t)i)[j];
            ok &= j > i ? (isinf(x) && x < 0)
                        : x == pe_matrix_row(&v, 1)[pe_t5_bucket(j - i, 0, 32, 128)];
        }
    TAP_OK(ok, "causal: buckets below, -inf above the diagonal");
    pe_matrix_free(&b);
    pe_matrix_free(&v);
    pe_matrix_free(&v2);
}

static void test_xpos(void)
{
    pe_params p;
    pe_params_default(&p);
    p.dim = 8;
    static const double zeta[] = {0.2857142857, 0.4642857143, 0.6428571429, 0.8214285714};
    static const double f100[] = {0.7829548345, 0.8608331996, 0.9173231594, 0.9623087062};
    double z[4], f[4];
    for (int k = 0; k < 4; k++) {
        z[k] = pe_xpos_zeta(&p, k);
        f[k] = pe_xpos_decay(&p, k, 100);
    }
    close_vec_d(z, zeta, 4, REL_D, ABS_10, "xPos d=8 zeta");
    close_vec_d(f, f100, 4, REL_D, ABS_10, "xPos m-n=100 factors");

    /* q at m and k at n through apply_qk: pair k of the score is the RoPE pair score times
     * zeta_k^((m-n)/512), at any offset. */
    const pe_encoding *xp = pe_encoding_find("xpos"), *ro = pe_encoding_find("rope");
    static const double q[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    static const double k[8] = {0.5, -1, 0.25, 2, -0.75, 1.5, 1, -0.5};
    static const int ns[] = {0, 50, 900};
    for (int t = 0; t < 3; t++) {
        double qx[8], kx[8], qr[8], kr[8];
        memcpy(qx, q, sizeof qx);
        memcpy(kx, k, sizeof kx);
        memcpy(qr, q, sizeof qr);
        memcpy(kr, k, sizeof kr);
        xp->apply_qk(&p, qx, ns[t] + 100, 0);
        xp->apply_qk(&p, kx, ns[t], 1);
        ro->apply_qk(&p, qr, ns[t] + 100, 0);
        ro->apply_qk(&p, kr, ns[t], 1);
        int ok = 1;
        for (int j = 0; j < 4; j++) {
            double sx = qx[2 * j] * kx[2 * j] + qx[2 * j + 1] * kx[2 * j + 1];
            double sr = qr[2 * j] * kr[2 * j] + qr[2 * j + 1] * kr[2 * j + 1];
            ok &= fabs(sx - sr * f100[j]) < 1e-9 * (1 + fabs(sr));
        }
        TAP_OK(ok, "xPos pair scores = RoPE pair scores x zeta^(100/512), n=%d", ns[t]);
    }
}

static void test_xl(void)
{
    pe_params p;
    pe_params_default(&p);
    p.dim = 8;
    double r[8];
    pe_xl_r(&p, 1, r);
    static const double r1[] = {+0.8414709848, +0.0998334166, +0.0099998333, +0.0009999998,
                                +0.5403023059, +0.9950041653, +0.9999500004, +0.9999995000};
    close_vec_d(r, r1, 8, REL_D, ABS_10, "XL R_1");

    char err[256];
    p.dim = 16;
    p.len = 24;
    p.seed = 3;
    pe_matrix t[4] = {{0}};
    TAP_OK(pe_xl_terms(&p, t, err, sizeof err) == PE_OK, "XL terms L=24 d=16");
    int mask = 1, finite = 1, toeplitz = 1, nonzero = 1;
    for (int i = 0; i < 24; i++)
        for (int j = 0; j < 24; j++)
            for (int s = 0; s < 4; s++) {
                float x = pe_matrix_row(&t[s], (size_t)i)[j];
                if (j > i)
                    mask &= isinf(x) && x < 0;
                else
                    finite &= isfinite(x);
            }
    for (int i = 1; i < 24; i++)
        for (int j = 1; j <= i; j++)
            toeplitz &=
                pe_matrix_row(&t[3], (size_t)i)[j] == pe_matrix_row(&t[3], (size_t)i - 1)[j - 1];
    for (int s = 0; s < 4; s++) nonzero &= pe_matrix_row(&t[s], 5)[2] != 0.0f;
    TAP_OK(mask, "all four terms -inf above the diagonal");
    TAP_OK(finite && nonzero, "finite, non-zero below");
    TAP_OK(toeplitz, "global position term depends on i - j only");
    int column = 1;
    for (int i = 0; i < 24; i++)
        for (int j = 0; j <= i; j++)
            column &= pe_matrix_row(&t[2], (size_t)i)[j] == pe_matrix_row(&t[2], (size_t)j)[j];
    TAP_OK(column, "global content term u.k_j depends on j only");

    /* the kernels pe_xl_terms uses add in the order of a plain loop: the same doubles */
    {
        enum { N = 13, D = 10 };
        double x[N * D], w[D * D], xt[D * N], out[N * D], rows[N * N];
        pe_rng g;
        pe_rng_seed(&g, 11);
        for (int i = 0; i < N * D; i++) x[i] = pe_rng_normal(&g);
        for (int i = 0; i < D * D; i++) w[i] = pe_rng_normal(&g);
        for (int i = 0; i < N; i++)
            for (int a = 0; a < D; a++) xt[a * N + i] = pe_rng_normal(&g);
        pe_xl_project(w, x, N, D, out);
        int same_p = 1, same_d = 1;
        for (int i = 0; i < N; i++)
            for (int c = 0; c < D; c++) {
                double s = 0;
                for (int a = 0; a < D; a++) s += x[i * D + a] * w[a * D + c];
                same_p &= out[i * D + c] == s;
            }
        for (int i0 = 0; i0 < N; i0 += 5) {
            int ni = N - i0 < 5 ? N - i0 : 5;
            pe_xl_dots_lower(x, xt, N, D, (size_t)i0, (size_t)ni, rows);
            for (int k = 0; k < ni; k++)
                for (int j = 0; j <= i0 + k; j++) {
                    double s = 0;
                    for (int a = 0; a < D; a++) s += x[(i0 + k) * D + a] * xt[a * N + j];
                    same_d &= rows[k * N + j] == s;
                }
        }
        TAP_OK(same_p, "pe_xl_project equals the plain loop exactly");
        TAP_OK(same_d, "pe_xl_dots_lower equals plain dot products exactly (blocks of 5 rows)");
    }

    const pe_encoding *e = pe_encoding_find("xl");
    pe_matrix b = {0}, b1 = {0};
    TAP_OK(e->bias(&p, 0, &b, err, sizeof err) == PE_OK, "XL bias head 0");
    int sum = 1;
    for (int i = 0; i < 24; i++)
        for (int j = 0; j <= i; j++) {
            double want = (double)pe_matrix_row(&t[1], (size_t)i)[j] +
                          (double)pe_matrix_row(&t[3], (size_t)i)[j];
            sum &= fabs(pe_matrix_row(&b, (size_t)i)[j] - want) < 1e-6;
        }
    TAP_OK(sum && isinf(pe_matrix_row(&b, 0)[1]), "bias = terms[1] + terms[3], masked");
    e->bias(&p, 1, &b1, err, sizeof err);
    TAP_OK(pe_matrix_row(&b1, 3)[1] != pe_matrix_row(&b, 3)[1], "heads draw their own weights");
    pe_matrix_free(&b);
    pe_matrix_free(&b1);
    for (int s = 0; s < 4; s++) pe_matrix_free(&t[s]);
}

int main(void)
{
    test_t5_buckets();
    test_t5_bias();
    test_xpos();
    test_xl();
    return tap_done();
}
