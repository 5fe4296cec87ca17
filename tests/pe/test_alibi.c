/* test_alibi: reference section 2, slopes (non-power-of-two rule), bias matrices. */
#include <math.h>
#include <stdio.h>

#include "pe_test.h"

static void check_slopes(int n, const double *want, const char *name)
{
    char err[256];
    double got[64];
    int rc = pe_alibi_slopes(n, 0.0, got, err, sizeof err);
    TAP_OK(rc == PE_OK, "slopes n=%d", n);
    close_vec_d(got, want, n, REL_D, 0, name);
}

static void test_slopes(void)
{
    static const double n4[] = {0.25, 0.0625, 0.015625, 0.00390625};
    static const double n6[] = {0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125};
    double n8[8], n12[12], n16[16];
    for (int h = 0; h < 8; h++) n8[h] = n12[h] = pow(2.0, -(h + 1));
    for (int h = 0; h < 4; h++) n12[8 + h] = pow(2.0, -0.5 - h);
    for (int h = 0; h < 16; h++) n16[h] = pow(2.0, -0.5 * (h + 1));
    check_slopes(4, n4, "n=4: 1/4 .. 1/256");
    check_slopes(6, n6, "n=6: four of n=4, then 0.5 0.125");
    check_slopes(8, n8, "n=8: 2^-1 .. 2^-8");
    check_slopes(12, n12, "n=12: 2^-1 .. 2^-8, 2^-0.5 2^-1.5 2^-2.5 2^-3.5");
    check_slopes(16, n16, "n=16: 2^-0.5 .. 2^-8");

    /* Powers of two give a geometric sequence with ratio = first slope. */
    char err[256];
    double s[64];
    static const int pw[] = {1, 2, 4, 8, 16, 32, 64};
    for (int i = 0; i < 7; i++) {
        pe_alibi_slopes(pw[i], 0.0, s, err, sizeof err);
        int ok = fabs(s[0] - pow(2.0, -8.0 / pw[i])) < 1e-15;
        for (int h = 1; h < pw[i]; h++) ok &= fabs(s[h] / s[h - 1] - s[0]) < 1e-12;
        TAP_OK(ok, "n=%d slopes geometric with ratio 2^(-8/n)", pw[i]);
    }
    pe_alibi_slopes(3, 0.0, s, err, sizeof err);
    TAP_OK(s[0] == 1.0 / 16 && s[1] == 1.0 / 256 && s[2] == 0.25, "n=3: 2^-4 2^-8, then 2^-2");
    pe_alibi_slopes(5, 0.5, s, err, sizeof err);
    TAP_OK(s[0] == 0.5 && s[4] == 1.0 / 32, "slope ratio 0.5: 0.5^(h+1)");
}

static void test_bias(void)
{
    char err[256];
    pe_params p;
    pe_params_default(&p);
    p.len = 5;
    pe_matrix b = {0};
    TAP_OK(pe_alibi_bias(&p, 0, &b, err, sizeof err) == PE_OK && b.rows == 5 && b.cols == 5,
           "8 heads L=5 head 0");
    static const double row4[] = {-2.0, -1.5, -1.0, -0.5, 0};
    close_vec_f(pe_matrix_row(&b, 4), row4, 5, 0, "row 4 = -2 -1.5 -1 -0.5 0");
    int upper = 1, diag = 1;
    for (size_t i = 0; i < 5; i++)
        for (size_t j = 0; j < 5; j++) {
            float v = pe_matrix_row(&b, i)[j];
            if (j > i) upper &= isinf(v) && v < 0;
            if (j == i) diag &= v == 0.0f;
        }
    TAP_OK(upper, "upper triangle -inf");
    TAP_OK(diag, "diagonal 0");
    pe_matrix_free(&b);

    p.len = 64;
    pe_alibi_bias(&p, 7, &b, err, sizeof err);
    TAP_CLOSE(pe_matrix_row(&b, 63)[0], -63.0 / 256.0, REL_F, 0, "head 7 (m=1/256): -63/256");
    pe_matrix_free(&b);

    p.alibi_symmetric = 1;
    p.len = 6;
    pe_alibi_bias(&p, 1, &b, err, sizeof err);
    int sym = 1;
    for (size_t i = 0; i < 6; i++)
        for (size_t j = 0; j < 6; j++) {
            double want = -0.25 * fabs((double)i - (double)j);
            sym &= pe_matrix_row(&b, i)[j] == (float)want;
        }
    TAP_OK(sym, "symmetric: -m|i-j| everywhere, no mask");
    pe_matrix_free(&b);

    const pe_encoding *e = pe_encoding_find("alibi");
    p.alibi_symmetric = 0;
    p.heads = 6;
    TAP_OK(e->bias(&p, 5, &b, err, sizeof err) == PE_OK &&
               pe_matrix_row(&b, 2)[0] == (float)(-2 * 0.125),
           "registry bias, 6 heads, head 5 (m=1/8)");
    pe_matrix_free(&b);
}

/* The diagonal (distance 0) is +0, so CSV and .npy hold 0, not -0. */
static void test_zero_sign(void)
{
    int neg = 0;
    for (int sym = 0; sym < 2; sym++)
        for (size_t i = 0; i < 4; i++) neg += signbit(pe_alibi_value(0.5, sym, i, i)) != 0;
    TAP_OK(neg == 0, "the diagonal is +0, not -0 (%d negative zeros)", neg);
}

int main(void)
{
    test_zero_sign();
    test_slopes();
    test_bias();
    return tap_done();
}
