/* test_sinusoidal: reference section 1, the fast table against direct sin/cos, translation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "pe_test.h"

static void test_vectors(void)
{
    pe_params p;
    pe_params_default(&p);
    p.dim = 8;
    p.len = 101;
    char err[256];
    pe_matrix t = {0};
    TAP_OK(pe_sinusoidal_table(&p, &t, err, sizeof err) == PE_OK && t.rows == 101 && t.cols == 8,
           "d=8 L=101 table");
    static const double w[4] = {1, 0.1, 0.01, 0.001};
    double fw[4];
    for (int k = 0; k < 4; k++) fw[k] = pe_sin_freq(&p, k);
    close_vec_d(fw, w, 4, REL_D, 0, "w = 1, 0.1, 0.01, 0.001");
    static const double p0[8] = {0, 1, 0, 1, 0, 1, 0, 1};
    static const double p1[8] = {+0.8414709848, +0.5403023059, +0.0998334166, +0.9950041653,
                                 +0.0099998333, +0.9999500004, +0.0009999998, +0.9999995000};
    static const double p5[8] = {-0.9589242747, +0.2836621855, +0.4794255386, +0.8775825619,
                                 +0.0499791693, +0.9987502604, +0.0049999792, +0.9999875000};
    static const double p100[8] = {-0.5063656411, +0.8623188723, -0.5440211109, -0.8390715291,
                                   +0.8414709848, +0.5403023059, +0.0998334166, +0.9950041653};
    close_vec_f(pe_matrix_row(&t, 0), p0, 8, ABS_10, "p=0 interleaved");
    close_vec_f(pe_matrix_row(&t, 1), p1, 8, ABS_10, "p=1 interleaved");
    close_vec_f(pe_matrix_row(&t, 5), p5, 8, ABS_10, "p=5 interleaved");
    close_vec_f(pe_matrix_row(&t, 100), p100, 8, ABS_10, "p=100 interleaved");

    /* Concatenated: the same numbers, sines first. */
    pe_matrix c = {0};
    p.layout = PE_LAYOUT_CONCAT;
    pe_sinusoidal_table(&p, &c, err, sizeof err);
    double cat[8];
    for (int k = 0; k < 4; k++) {
        cat[k] = p5[2 * k];
        cat[4 + k] = p5[2 * k + 1];
    }
    close_vec_f(pe_matrix_row(&c, 5), cat, 8, ABS_10, "p=5 concatenated");
    pe_matrix_free(&c);

    p.freq = PE_FREQ_FAIRSEQ;
    static const double fs[8] = {-0.9589242747, +0.2300017117, +0.0107719651, +0.0005000000,
                                 +0.2836621855, +0.9731902243, +0.9999419807, +0.9999998750};
    pe_sinusoidal_table(&p, &c, err, sizeof err);
    close_vec_f(pe_matrix_row(&c, 5), fs, 8, ABS_10, "fairseq variant d=8 p=5 (concatenated)");
    TAP_CLOSE(pe_sin_freq(&p, 3), 1e-4, REL_D, 0, "fairseq w_3 = 1e-4 (exp(-3 ln 1e4 / 3))");
    pe_matrix_free(&c);

    /* sin^2 + cos^2 = 1 for every pair of every row. */
    double worst = 0;
    for (size_t r = 0; r < t.rows; r++)
        for (int k = 0; k < 4; k++) {
            double s = pe_matrix_row(&t, r)[2 * k], co = pe_matrix_row(&t, r)[2 * k + 1];
            double e = fabs(s * s + co * co - 1.0);
            if (e > worst) worst = e;
        }
    TAP_OK(worst < 1e-6, "sin^2 + cos^2 = 1 per pair (worst %.2g)", worst);
    pe_matrix_free(&t);
}

/* PE(p).PE(p+D) = sum_k cos(D w_k), whatever p. */
static void test_dot_products(void)
{
    char err[256];
    pe_params p;
    pe_params_default(&p);
    p.dim = 8;
    p.len = 1200;
    pe_matrix t = {0};
    pe_sinusoidal_table(&p, &t, err, sizeof err);
    static const int d8[] = {0, 1, 2, 5, 10, 100, 500};
    static const double v8[] = {4, 3.535256, 2.563718, 3.159983, 1.696185, 1.558554, 1.242362};
    double *dec = malloc(t.rows * sizeof *dec);
    static const size_t starts[] = {0, 37, 600};
    for (int s = 0; s < 3; s++) {
        pe_dot_decay(&t, starts[s], dec);
        for (int i = 0; i < 7; i++) {
            char name[96];
            snprintf(name, sizeof name, "d=8 PE(%zu).PE(%zu+%d)", starts[s], starts[s], d8[i]);
            TAP_CLOSE(dec[starts[s] + (size_t)d8[i]], v8[i], REL_F, 1e-6, name);
        }
    }
    pe_matrix_free(&t);

    p.dim = 128;
    pe_sinusoidal_table(&p, &t, err, sizeof err);
    static const int d128[] = {0, 1, 5, 10, 50, 100, 200, 500};
    static const double v128[] = {64,        62.093684, 47.185012, 42.820023,
                                  34.955011, 30.543455, 19.564012, 19.102697};
    for (int s = 0; s < 2; s++) {
        pe_dot_decay(&t, starts[s], dec);
        for (int i = 0; i < 8; i++) {
            char name[96];
            snprintf(name, sizeof name, "d=128 PE(%zu).PE(%zu+%d)", starts[s], starts[s], d128[i]);
            TAP_CLOSE(dec[starts[s] + (size_t)d128[i]], v128[i], REL_F, 1e-6, name);
        }
    }
    free(dec);
    pe_matrix_free(&t);
}

/* pe_sinusoidal_dots (the similarity view's closed form) against the reference values above
 * and against sum_k cos(D w_k) term by term, at distances with repeated, irregular and
 * descending steps and far past the anchors (D up to 8190, d 4096). */
static void test_dots_by_distance(void)
{
    char err[256] = "";
    pe_params p;
    pe_params_default(&p);
    p.dim = 128;
    static const size_t d128[] = {0, 1, 5, 10, 50, 100, 200, 500};
    static const double v128[] = {64,        62.093684, 47.185012, 42.820023,
                                  34.955011, 30.543455, 19.564012, 19.102697};
    double out[300];
    TAP_OK(pe_sinusoidal_dots(&p, d128, 8, out, err, sizeof err) == PE_OK, "dots: d=128 (%s)", err);
    for (int i = 0; i < 8; i++) {
        char name[96];
        snprintf(name, sizeof name, "dots: d=128 PE(q).PE(q+%zu)", d128[i]);
        TAP_CLOSE(out[i], v128[i], 0, 1e-6, name);
    }
    p.dim = 4096;
    size_t dist[300];
    for (int i = 0; i < 300; i++) /* steps of 27 and 28 (a grid of 8192 into 300), then others */
        dist[i] = i < 250 ? (size_t)((i + 0.5) * 8192.0 / 300.0) : (size_t)(8190 - 7 * (i - 250));
    TAP_OK(pe_sinusoidal_dots(&p, dist, 300, out, err, sizeof err) == PE_OK, "dots: d=4096 (%s)",
           err);
    double worst = 0;
    for (int i = 0; i < 300; i++) {
        double ref = 0;
        for (int k = 0; k < 2048; k++) ref += cos((double)dist[i] * pe_sin_freq(&p, k));
        worst = fmax(worst, fabs(out[i] - ref));
    }
    TAP_OK(worst < 1e-9,
           "dots: d=4096, 300 distances up to 8190 within 1e-9 of the sum of cosines "
           "(%.2g)",
           worst);
    /* the vector kernel (AVX where the CPU has it) and the plain loop: the very same values */
    double plain[300];
    setenv("PELAB_BOUND_KERNEL", "plain", 1);
    int prc = pe_sinusoidal_dots(&p, dist, 300, plain, err, sizeof err);
    unsetenv("PELAB_BOUND_KERNEL");
    int same = prc == PE_OK;
    for (int i = 0; same && i < 300; i++) same = plain[i] == out[i];
    TAP_OK(same, "dots: d=4096, the plain loop gives the kernel's very values");
    p.dim = 4094; /* 2047 pairs: the kernel's multiple of 4, then the tail */
    TAP_OK(pe_sinusoidal_dots(&p, dist, 300, out, err, sizeof err) == PE_OK, "dots: d=4094 (%s)",
           err);
    worst = 0;
    for (int i = 0; i < 300; i++) {
        double ref = 0;
        for (int k = 0; k < 2047; k++) ref += cos((double)dist[i] * pe_sin_freq(&p, k));
        worst = fmax(worst, fabs(out[i] - ref));
    }
    TAP_OK(worst < 1e-9, "dots: d=4094 (a tail past the vectors) within 1e-9 (%.2g)", worst);
    p.base = -1;
    TAP_OK(pe_sinusoidal_dots(&p, dist, 3, out, err, sizeof err) != PE_OK,
           "dots: a bad base is refused (%s)", err);
}

/* The recurrence with anchors against sin/cos of p*w at every cell, L = 8192. */
static void test_fast_table_accuracy(void)
{
    char err[256];
    pe_params p;
    pe_params_default(&p);
    p.len = 8192;
    for (int layout = 0; layout < 2; layout++) {
        p.layout = (pe_layout)layout;
        p.dim = layout ? 130 : 128;
        pe_matrix t = {0};
        pe_sinusoidal_table(&p, &t, err, sizeof err);
        int half = p.dim / 2;
        double worst = 0;
        for (size_t r = 0; r < t.rows; r++) {
            const float *row = pe_matrix_row(&t, r);
            for (int k = 0; k < half; k++) {
                double a = (double)r * pe_sin_freq(&p, k);
                size_t is = layout ? (size_t)k : 2 * (size_t)k;
                size_t ic = layout ? (size_t)(k + half) : 2 * (size_t)k + 1;
                double es = fabs((double)row[is] - sin(a)), ec = fabs((double)row[ic] - cos(a));
                if (es > worst) worst = es;
                if (ec > worst) worst = ec;
            }
        }
        TAP_OK(worst < 1e-6, "%s L=8192 d=%d: max |table - direct| %.3g < 1e-6",
               layout ? "concat" : "interleaved", p.dim, worst);
        pe_matrix_free(&t);
    }
}

static void test_translation(void)
{
    pe_params p;
    pe_params_default(&p);
    p.dim = 64;
    p.len = 512;
    static const int Ds[] = {0, 1, 7, 100, 511};
    for (int layout = 0; layout < 2; layout++)
        for (int freq = 0; freq < 2; freq++)
            for (int i = 0; i < 5; i++) {
                p.layout = (pe_layout)layout;
                p.freq = (pe_freq)freq;
                double e = pe_translation_error(&p, Ds[i]);
                TAP_OK(e < 1e-5, "PE(p+%d) = PE(p) T(%d), %s, %s: error %.3g", Ds[i], Ds[i],
                       layout ? "concat" : "interleaved", freq ? "fairseq" : "paper", e);
            }
    p.layout = PE_LAYOUT_INTERLEAVED;
    p.freq = PE_FREQ_PAPER;
    TAP_OK(pe_translation_error(&p, 512) == 0.0, "D = L leaves no rows: 0");
    TAP_OK(isnan(pe_translation_error(&p, -1)), "D < 0: NaN");
    p.dim = 7;
    TAP_OK(isnan(pe_translation_error(&p, 1)), "invalid parameters: NaN");
}

/* pe_sincos_at on the figures' sample grids (positions (i + 0.5) * len / n, steps of b and b + 1
 * in either order, first step the longer or the shorter) and on irregular positions: every
 * entry within 1e-6 of libm's sin and cos of position * w, at the largest angles a view draws. */
static void test_sincos_at(void)
{
    static const size_t lens[] = {8192, 8192, 4096, 1000};
    static const size_t ns[] = {600, 527, 942, 7};
    static const double ws[] = {1.0, 0.37, 1e-4, 2.5};
    size_t pos[1024];
    float sv[1024], cv[1024];
    for (int t = 0; t < 4; t++) {
        size_t n = ns[t];
        for (size_t i = 0; i < n; i++)
            pos[i] = (size_t)(((double)i + 0.5) * (double)lens[t] / (double)n);
        for (int k = 0; k < 4; k++) {
            pe_sincos_at(ws[k], pos, n, sv, cv, 1);
            double worst = 0;
            for (size_t i = 0; i < n; i++) {
                double ang = (double)pos[i] * ws[k];
                worst = fmax(worst, fabs(sv[i] - sin(ang)));
                worst = fmax(worst, fabs(cv[i] - cos(ang)));
            }
            TAP_OK(worst<1e-6, "sincos_at L %zu, %zu samples (first step %zu), w %g: error %.3g",
                         lens[t], n, n> 1
                       ? pos[1] - pos[0]
                       : 0,
                   ws[k], worst);
        }
    }
    /* pe_sincos_rows: pe_sincos_at's very values, a row at a time across the columns */
    {
        enum { NR = 600, NC = 37 };
        static float rows_out[NR * NC], col_out[NR * NC];
        double w[NC];
        unsigned char is_sin[NC];
        for (size_t i = 0; i < NR; i++) pos[i] = (size_t)(((double)i + 0.5) * 8192.0 / NR);
        for (int j = 0; j < NC; j++) {
            w[j] = pow(10000.0, -2.0 * j / NC);
            is_sin[j] = (unsigned char)(j % 3 != 0);
            pe_sincos_at(w[j], pos, NR, is_sin[j] ? col_out + j : NULL,
                         is_sin[j] ? NULL : col_out + j, NC);
        }
        pe_sincos_rows(w, is_sin, NC, pos, NR, rows_out);
        int same = 1;
        for (size_t i = 0; i < (size_t)NR * NC; i++) same &= rows_out[i] == col_out[i];
        TAP_OK(same, "sincos_rows: 600 x 37 equal to sincos_at column by column");
    }
    /* irregular steps (1, 2, 3, 5, 8, ...) and a repeated position, through the stride */
    size_t n = 0;
    for (size_t p = 0, d = 1; p < 8192 && n < 300; p += d, d = d % 9 + 1) pos[n++] = p;
    pos[n] = pos[n - 1];
    n++;
    float out[2 * 300 + 2];
    pe_sincos_at(0.9, pos, n, out, out + 1, 2);
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        worst = fmax(worst, fabs(out[2 * i] - sin((double)pos[i] * 0.9)));
        worst = fmax(worst, fabs(out[2 * i + 1] - cos((double)pos[i] * 0.9)));
    }
    TAP_OK(worst < 1e-6, "sincos_at on irregular steps with stride 2: error %.3g", worst);
}

int main(void)
{
    test_vectors();
    test_dot_products();
    test_dots_by_distance();
    test_fast_table_accuracy();
    test_translation();
    test_sincos_at();
    return tap_done();
}
