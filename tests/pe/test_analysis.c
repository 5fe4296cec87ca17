/* test_analysis: similarity, dot decay, wavelengths, resolution probe. */
#include <stdio.h>
#include <stdlib.h>

#include "pe_test.h"

static void test_similarity(void)
{
    char err[256];
    pe_params p;
    pe_params_default(&p);
    p.len = 1024;
    p.dim = 512;
    pe_matrix t = {0}, s = {0}, c = {0};
    pe_sinusoidal_table(&p, &t, err, sizeof err);
    TAP_OK(pe_similarity(&t, 0, &s, err, sizeof err) == PE_OK && s.rows == 1024 && s.cols == 1024,
           "dot similarity (1024, 1024) of a (1024, 512) table");
    TAP_OK(pe_similarity(&t, 1, &c, err, sizeof err) == PE_OK, "cosine similarity");
    int sym = 1;
    double diag = 0, worst = 0;
    for (size_t i = 0; i < 1024; i++) {
        diag = fmax(diag, fabs(pe_matrix_row(&c, i)[i] - 1.0));
        for (size_t j = 0; j < i; j++)
            sym &= pe_matrix_row(&s, i)[j] == pe_matrix_row(&s, j)[i] &&
                   pe_matrix_row(&c, i)[j] == pe_matrix_row(&c, j)[i];
    }
    TAP_OK(sym, "symmetric");
    TAP_OK(diag < 1e-6, "cosine diagonal 1 (%.2g)", diag);
    /* Against a plain double loop on a sample of cells. */
    for (size_t i = 0; i < 1024; i += 37)
        for (size_t j = 0; j < 1024; j += 53) {
            double d = 0, ni = 0, nj = 0;
            for (size_t k = 0; k < 512; k++) {
                double a = pe_matrix_row(&t, i)[k], b = pe_matrix_row(&t, j)[k];
                d += a * b;
                ni += a * a;
                nj += b * b;
            }
            worst = fmax(worst, fabs(pe_matrix_row(&s, i)[j] - d) / 256.0);
            worst = fmax(worst, fabs(pe_matrix_row(&c, i)[j] - d / sqrt(ni * nj)));
        }
    TAP_OK(worst < 1e-6, "blocked kernel = plain loop (%.2g)", worst);
    TAP_CLOSE(pe_matrix_row(&s, 300)[300], 256.0, 1e-6, 0, "dot diagonal = d/2");
    pe_matrix_free(&s);
    pe_matrix_free(&c);
    pe_matrix_free(&t);

    /* Odd sizes exercise the tile and lane tails; a zero row has cosine 0. */
    pe_matrix_init(&t, 7, 13, err, sizeof err);
    for (size_t i = 1; i < 7; i++)
        for (size_t k = 0; k < 13; k++) pe_matrix_row(&t, i)[k] = (float)((i * 7 + k * 3) % 11) - 5;
    pe_similarity(&t, 1, &c, err, sizeof err);
    pe_similarity(&t, 0, &s, err, sizeof err);
    int ok = pe_matrix_row(&c, 0)[0] == 0.0f && pe_matrix_row(&c, 0)[3] == 0.0f;
    for (size_t i = 1; i < 7; i++)
        for (size_t j = 1; j < 7; j++) {
            double d = 0;
            for (size_t k = 0; k < 13; k++)
                d += (double)pe_matrix_row(&t, i)[k] * pe_matrix_row(&t, j)[k];
            ok &= fabs(pe_matrix_row(&s, i)[j] - d) < 1e-4;
        }
    TAP_OK(ok, "7 x 13 table: exact small dots, zero row has cosine 0");
    pe_matrix_free(&s);
    pe_matrix_free(&c);
    pe_matrix_free(&t);
}

static void test_dot_decay(void)
{
    pe_matrix t = {0};
    char err[256];
    pe_matrix_init(&t, 3, 2, err, sizeof err);
    float v[] = {1, 2, 3, 4, -1, 0.5f};
    memcpy(t.data, v, sizeof v);
    double out[3];
    pe_dot_decay(&t, 1, out);
    TAP_OK(out[0] == 11 && out[1] == 25 && out[2] == -1, "dot decay from row 1: 11 25 -1");
    pe_matrix_free(&t);
}

static void test_wavelengths(void)
{
    char err[256];
    pe_params p;
    pe_params_default(&p);
    p.dim = 8;
    double w[4];
    TAP_OK(pe_wavelengths(&p, 0, w, err, sizeof err) == PE_OK, "sinusoidal wavelengths");
    static const double want[] = {2 * 3.14159265358979323846, 62.8318530717958648,
                                  628.318530717958648, 6283.18530717958648};
    close_vec_d(w, want, 4, REL_D, 0, "2 pi / w_k = 2pi, 20pi, 200pi, 2000pi");
    p.scaling.type = PE_SCALING_LINEAR;
    p.scaling.factor = 4;
    TAP_OK(pe_wavelengths(&p, 1, w, err, sizeof err) == PE_OK, "RoPE wavelengths");
    TAP_CLOSE(w[2], 4 * want[2], REL_D, 0, "linear f=4 stretches wavelengths by 4");
    p.rotary_frac = 0.5;
    pe_wavelengths(&p, 1, w, err, sizeof err);
    TAP_CLOSE(w[1], 4 * 628.318530717958648, REL_D, 0, "partial rotary: d=4 frequencies");
    p.dim = 9;
    TAP_OK(pe_wavelengths(&p, 0, w, err, sizeof err) == PE_EINVAL && strstr(err, "--dim"),
           "odd d rejected");
}

static void test_resolution(void)
{
    pe_params p;
    pe_params_default(&p);
    /* At position 0 every pair with D*theta_k above the threshold (wrapped) moves; 1.5e-3 lies
     * well away from every theta_k, so float rounding cannot flip a pair. */
    int n = pe_rope_resolution(&p, 0, 1, 1.5e-3);
    int want = 0;
    for (int k = 0; k < 64; k++) want += pow(1e4, -2.0 * k / 128) > 1.5e-3;
    TAP_OK(n == want && n > 0, "pos 0, D 1: %d pairs turn more than 1.5e-3 (want %d)", n, want);
    /* Far out, float32 positions are 2^k spaced: 2^24 + 1 rounds to 2^24 and nothing moves. */
    TAP_OK(pe_rope_resolution(&p, 1 << 24, 1, 0.0) == 0, "pos 2^24, D 1: float32 sees no change");
    TAP_OK(pe_rope_resolution(&p, 1 << 24, 2, 0.0) == 64, "pos 2^24, D 2: every pair moves");
    TAP_OK(pe_rope_resolution(&p, 1 << 22, 1, 1.5e-3) < n, "far positions resolve fewer pairs");
    TAP_OK(pe_rope_resolution(&p, 0, 1, -1.0) < 0 && pe_rope_resolution(&p, -5, 1, 0.1) < 0,
           "bad inputs -> negative status");
    /* Dynamic NTK uses seq_len = pos + D + 1: below L0 nothing changes. */
    pe_params q = p;
    q.scaling.type = PE_SCALING_DYNAMIC;
    q.scaling.factor = 8;
    TAP_OK(pe_rope_resolution(&q, 100, 1, 1e-3) == pe_rope_resolution(&p, 100, 1, 1e-3),
           "dynamic below L0 = plain RoPE");
    TAP_OK(pe_rope_resolution(&q, 200000, 1, 1e-2) <= pe_rope_resolution(&p, 200000, 1, 1e-2),
           "dynamic far past L0 resolves no more pairs");

    /* with the frequencies given, the same counts (D up to 5000 turns pairs past 2 pi) */
    static const int pos[] = {0, 1, 7, 100, 4095, 70000, 1 << 22, 1 << 24};
    static const int ds[] = {1, 3, 50, 5000};
    char err[256];
    int differ = 0, cases = 0;
    for (int m = 0; m < 3; m++) {
        pe_params r = p;
        r.scaling.type = m == 0 ? PE_SCALING_NONE : m == 1 ? PE_SCALING_YARN : PE_SCALING_DYNAMIC;
        r.scaling.factor = 4;
        for (size_t i = 0; i < sizeof pos / sizeof *pos; i++)
            for (size_t j = 0; j < sizeof ds / sizeof *ds; j++) {
                double th[64];
                r.scaling.seq_len = pos[i] + ds[j] + 1;
                pe_rope_inv_freq(&r, th, NULL, err, sizeof err);
                differ += pe_rope_resolution_theta(th, 64, pos[i], ds[j], 0.05) !=
                          pe_rope_resolution(&r, pos[i], ds[j], 0.05);
                cases++;
            }
    }
    TAP_OK(differ == 0, "pe_rope_resolution_theta = pe_rope_resolution (%d of %d differ)", differ,
           cases);
    double th1 = 0.5;
    TAP_OK(pe_rope_resolution_theta(&th1, 1, -1, 1, 0.1) < 0 &&
               pe_rope_resolution_theta(&th1, 1, 0, 1, -1.0) < 0,
           "pe_rope_resolution_theta: bad inputs -> negative status");
}

int main(void)
{
    test_similarity();
    test_dot_decay();
    test_wavelengths();
    test_resolution();
    return tap_done();
}
