/* test_rope: reference section 4 (rotations, relative scores, decay bound) and RoPE's
 * properties in both pairings, partial rotary, the float kernel and the tables. */
#include <stdio.h>
#include <stdlib.h>

#include "pe_test.h"

static const double Q[8] = {1, 2, 3, 4, 5, 6, 7, 8};
static const double K[8] = {0.5, -1, 0.25, 2, -0.75, 1.5, 1, -0.5};

static void params8(pe_params *p, pe_pairing pairing)
{
    pe_params_default(p);
    p->dim = 8;
    p->pairing = pairing;
}

static void rotated(const pe_params *p, const double *x, double pos, double *out)
{
    double th[64], attn;
    char err[256];
    memcpy(out, x, (size_t)p->dim * sizeof *out);
    pe_rope_inv_freq(p, th, &attn, err, sizeof err);
    pe_rope_rotate(p, th, attn, out, pos);
}

static double dotd(const double *a, const double *b, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

static void test_vectors(void)
{
    static const double m1i[8] = {-1.1426396637, +1.9220755965, +2.5856788292, +4.2795169111,
                                  +4.9397510021, +6.0496991692, +6.9919965013, +8.0069959988};
    static const double m1h[8] = {-3.6670526182, +1.3910078307, +2.9298511679, +3.9919980013,
                                  +3.5429825141, +6.1696918250, +7.0296495029, +8.0039959993};
    static const double m3i[8] = {-1.2722325127, -1.8388649851, +1.6839286407, +4.7079065765,
                                  +4.8177771675, +6.1472777035, +6.9759685360, +8.0209639685};
    static const double m3h[8] = {-1.6955925369, +0.1375517383, +2.7886815998, +3.9759820360,
                                  -4.8088424749, +6.3230593481, +7.0868367369, +8.0119639820};
    static const double m100i[8] = {+1.8750501545, +1.2182721035, -0.3411301437, -4.9883494490,
                                    -2.3473143795, +7.4491687592, +6.1663618238, +8.6588672388};
    pe_params pi, ph;
    params8(&pi, PE_PAIRING_INTERLEAVED);
    params8(&ph, PE_PAIRING_HALF);
    double x[8];
    rotated(&pi, Q, 1, x);
    close_vec_d(x, m1i, 8, REL_D, ABS_10, "q at m=1 interleaved");
    rotated(&ph, Q, 1, x);
    close_vec_d(x, m1h, 8, REL_D, ABS_10, "q at m=1 half-split");
    rotated(&pi, Q, 3, x);
    close_vec_d(x, m3i, 8, REL_D, ABS_10, "q at m=3 interleaved");
    rotated(&ph, Q, 3, x);
    close_vec_d(x, m3h, 8, REL_D, ABS_10, "q at m=3 half-split");
    rotated(&pi, Q, 100, x);
    close_vec_d(x, m100i, 8, REL_D, ABS_10, "q at m=100 interleaved");

    /* The registry's apply_qk does the same, for queries and keys alike. */
    const pe_encoding *e = pe_encoding_find("rope");
    memcpy(x, Q, sizeof x);
    e->apply_qk(&pi, x, 3, 0);
    close_vec_d(x, m3i, 8, REL_D, ABS_10, "apply_qk query m=3 interleaved");
    memcpy(x, Q, sizeof x);
    e->apply_qk(&ph, x, 3, 1);
    close_vec_d(x, m3h, 8, REL_D, ABS_10, "apply_qk key m=3 half-split");
}

static void test_scores(void)
{
    char err[256];
    static const int ns[] = {1, 8, 100};
    static const double want2[2] = {16.8404826619, 18.7831910127};
    static const double want5[2] = {20.3539820187, 24.3652484253};
    for (int pr = 0; pr < 2; pr++) {
        pe_params p;
        params8(&p, (pe_pairing)pr);
        for (int i = 0; i < 3; i++) {
            double s[4];
            int rc = pe_rope_score_curve(&p, Q, K, ns[i], 2, 4, s, err, sizeof err);
            char name[96];
            snprintf(name, sizeof name, "%s <R_%d q, R_%d k> (m-n=2)",
                     pr ? "half-split" : "interleaved", ns[i] + 2, ns[i]);
            TAP_OK(rc == PE_OK, "score curve n=%d", ns[i]);
            TAP_CLOSE(s[0], want2[pr], REL_D, ABS_10, name);
            snprintf(name, sizeof name, "%s m-n=5 at n=%d", pr ? "half-split" : "interleaved",
                     ns[i]);
            TAP_CLOSE(s[3], want5[pr], REL_D, ABS_10, name);
        }
    }
}

/* The seed-000 bug read cos from the sin column; a test-only copy shows what it gives. */
static double buggy_score(int m, int n)
{
    pe_params p;
    params8(&p, PE_PAIRING_INTERLEAVED);
    double q[8], k[8];
    memcpy(q, Q, sizeof q);
    memcpy(k, K, sizeof k);
    for (int j = 0; j < 4; j++) {
        double th = pe_sin_freq(&p, j);
        double sq = sin(m * th), sk = sin(n * th);
        double q0 = q[2 * j], q1 = q[2 * j + 1], k0 = k[2 * j], k1 = k[2 * j + 1];
        q[2 * j] = q0 * sq - q1 * sq;
        q[2 * j + 1] = q0 * sq + q1 * sq;
        k[2 * j] = k0 * sk - k1 * sk;
        k[2 * j + 1] = k0 * sk + k1 * sk;
    }
    return dotd(q, k, 8);
}

static void test_seed000_bug(void)
{
    TAP_CLOSE(buggy_score(3, 1), 0.163, 0, 0.0005, "buggy (3,1) = 0.163");
    TAP_CLOSE(buggy_score(10, 8), 12.26, 0, 0.005, "buggy (10,8) = 12.26");
    TAP_CLOSE(buggy_score(102, 100), 15.76, 0, 0.005, "buggy (102,100) = 15.76");
    TAP_OK(fabs(buggy_score(3, 1) - 16.8404826619) > 1, "the bug breaks relativity; RoPE does not");
}

static void test_relativity_and_norm(void)
{
    char err[256];
    double q[64], k[64];
    pe_rope_qk(64, 99, q, k);
    for (int pr = 0; pr < 2; pr++) {
        pe_params p;
        pe_params_default(&p);
        p.dim = 64;
        p.pairing = (pe_pairing)pr;
        double base[21], other[21];
        pe_rope_score_curve(&p, q, k, 0, -10, 21, base, err, sizeof err);
        static const int offs[] = {17, 1000, 12345, 250000};
        for (int o = 0; o < 4; o++) {
            pe_rope_score_curve(&p, q, k, offs[o], -10, 21, other, err, sizeof err);
            close_vec_d(other, base, 21, 1e-9, 1e-8, "score depends on m-n only");
        }
        double worst = 0;
        for (double m = 0; m < 5000; m += 123.25) {
            double x[64];
            rotated(&p, q, m, x);
            double e = fabs(sqrt(dotd(x, x, 64)) - sqrt(dotd(q, q, 64)));
            if (e > worst) worst = e;
        }
        TAP_OK(worst < 1e-12, "%s: rotation preserves the norm (%.2g)",
               pr ? "half-split" : "interleaved", worst);
    }
}

/* Half-split on the permuted vector (evens first, then odds) is interleaved on the original. */
static void test_pairings_agree(void)
{
    double q[64], k[64];
    pe_rope_qk(64, 5, q, k);
    pe_params pi, ph;
    pe_params_default(&pi);
    pi.dim = 64;
    ph = pi;
    ph.pairing = PE_PAIRING_HALF;
    double perm[64], a[64], b[64];
    for (int i = 0; i < 32; i++) {
        perm[i] = q[2 * i];
        perm[32 + i] = q[2 * i + 1];
    }
    rotated(&pi, q, 37.5, a);
    rotated(&ph, perm, 37.5, b);
    double worst = 0;
    for (int i = 0; i < 32; i++) {
        worst = fmax(worst, fabs(a[2 * i] - b[i]));
        worst = fmax(worst, fabs(a[2 * i + 1] - b[32 + i]));
    }
    TAP_OK(worst < 1e-14, "pairings agree up to the even/odd permutation (%.2g)", worst);
    TAP_OK(fabs(a[1] - b[1]) > 1e-3, "but differ without it");
}

static void test_partial_rotary(void)
{
    char err[256];
    pe_params p;
    pe_params_default(&p);
    p.dim = 8;
    p.rotary_frac = 0.5;
    TAP_OK(pe_rope_rotary_dim(&p) == 4, "d=8 frac 0.5: rotary dim 4");
    p.dim = 10;
    p.rotary_frac = 0.3;
    TAP_OK(pe_rope_rotary_dim(&p) == 2, "d=10 frac 0.3: 3 rounds down to 2");
    p.dim = 128;
    p.rotary_frac = 0.25;
    TAP_OK(pe_rope_rotary_dim(&p) == 32, "d=128 frac 0.25: 32");
    p.rotary_frac = 0.01;
    TAP_OK(pe_rope_rotary_dim(&p) == 2, "tiny fraction: at least 2");

    p.dim = 8;
    p.rotary_frac = 0.5;
    double th[4], attn;
    pe_rope_inv_freq(&p, th, &attn, err, sizeof err);
    TAP_OK(th[0] == 1.0 && fabs(th[1] - 0.01) < 1e-15 && attn == 1.0,
           "inverse frequencies use the rotary dim: 1, 1e4^(-2/4)");
    int i0, i1;
    p.pairing = PE_PAIRING_HALF;
    pe_rope_pair(&p, 1, &i0, &i1);
    TAP_OK(i0 == 1 && i1 == 3, "half-split partial: pair 1 = (1, 3)");
    p.pairing = PE_PAIRING_INTERLEAVED;
    pe_rope_pair(&p, 1, &i0, &i1);
    TAP_OK(i0 == 2 && i1 == 3, "interleaved: pair 1 = (2, 3)");
    double x[8];
    rotated(&p, Q, 3, x);
    TAP_OK(x[4] == 5 && x[5] == 6 && x[6] == 7 && x[7] == 8, "dims past the rotary dim pass");
    TAP_CLOSE(x[0], cos(3.0) - 2 * sin(3.0), REL_D, 1e-15, "pair 0 rotated by 3 rad");
}

/* pe_rope_tables + pe_rope_rotate_f against the double rotation. */
static void test_tables_and_float_kernel(void)
{
    char err[256];
    double q[48], k[48];
    pe_rope_qk(48, 11, q, k);
    for (int pr = 0; pr < 2; pr++)
        for (int partial = 0; partial < 2; partial++) {
            pe_params p;
            pe_params_default(&p);
            p.dim = 48;
            p.len = 300;
            p.pairing = (pe_pairing)pr;
            p.rotary_frac = partial ? 0.5 : 1.0;
            pe_matrix ct = {0}, st = {0};
            int rc = pe_rope_tables(&p, &ct, &st, err, sizeof err);
            int rd = pe_rope_rotary_dim(&p);
            TAP_OK(rc == PE_OK && ct.rows == 300 && ct.cols == (size_t)rd / 2 && st.cols == ct.cols,
                   "tables (300, %d)", rd / 2);
            double worst = 0;
            for (int pos = 0; pos < 300; pos += 7) {
                float xf[48];
                double xd[48];
                for (int i = 0; i < 48; i++) xf[i] = (float)q[i];
                pe_rope_rotate_f(xf, 48, rd, p.pairing, pe_matrix_row(&ct, (size_t)pos),
                                 pe_matrix_row(&st, (size_t)pos));
                rotated(&p, q, pos, xd);
                for (int i = 0; i < 48; i++) worst = fmax(worst, fabs(xf[i] - xd[i]));
            }
            TAP_OK(worst < 2e-6, "%s%s: float kernel = double rotation (%.2g)",
                   pr ? "half-split" : "interleaved", partial ? " partial" : "", worst);
            pe_matrix_free(&ct);
            pe_matrix_free(&st);
        }
}

static void test_decay_bound(void)
{
    char err[256];
    pe_params p;
    pe_params_default(&p);
    double th[64], attn;
    pe_rope_inv_freq(&p, th, &attn, err, sizeof err);
    static const double r[] = {0, 1, 2, 5, 10, 20, 50, 100, 150, 200, 250};
    static const double b[] = {32.5,      31.538166, 28.955988, 20.845358, 17.954137, 15.242430,
                               12.629452, 10.227330, 7.588477,  7.244771,  6.548179};
    for (int i = 0; i < 11; i++) {
        char name[64];
        snprintf(name, sizeof name, "decay bound d=128 r=%g", r[i]);
        TAP_CLOSE(pe_rope_decay_bound(th, 64, r[i]), b[i], 0, 1e-6, name);
    }
}

/* pe_rope_decay_bound_curve, in each kernel this machine runs, against pe_rope_decay_bound at
 * every distance (d 4096, steps of 7 out to 7 * 1200, so the anchors and the eight-lane blocks
 * are crossed, and a length that is not a multiple of eight); the kernels agree bit for bit. */
static void test_decay_bound_curve(void)
{
    char err[256] = "";
    pe_params p;
    pe_params_default(&p);
    p.dim = 4096;
    static double th[2048], ref[1203], got[3][1203];
    double attn;
    pe_rope_inv_freq(&p, th, &attn, err, sizeof err);
    for (int j = 0; j < 1203; j++) ref[j] = pe_rope_decay_bound(th, 2048, 7.0 * j);
    static const char *const kernels[3] = {"plain", "sse2", NULL};
    for (int k = 0; k < 3; k++) {
        if (kernels[k])
            setenv("PELAB_BOUND_KERNEL", kernels[k], 1);
        else
            unsetenv("PELAB_BOUND_KERNEL");
        const char *name = kernels[k] ? kernels[k] : "best";
        TAP_OK(pe_rope_decay_bound_curve(th, 2048, 7.0, 1203, got[k], err, sizeof err) == PE_OK,
               "bound curve (%s kernel) (%s)", name, err);
        double worst = 0;
        for (int j = 0; j < 1203; j++) worst = fmax(worst, fabs(got[k][j] - ref[j]) / ref[0]);
        TAP_OK(worst < 1e-12,
               "bound curve (%s kernel): 1203 distances within 1e-12 of B(0) of "
               "pe_rope_decay_bound (%.2g)",
               name, worst);
    }
    unsetenv("PELAB_BOUND_KERNEL");
    TAP_OK(memcmp(got[0], got[1], sizeof got[0]) == 0 && memcmp(got[0], got[2], sizeof got[0]) == 0,
           "bound curve: the kernels give the same bits");
    double one = -1;
    TAP_OK(pe_rope_decay_bound_curve(th, 2048, 7.0, 1, &one, err, sizeof err) == PE_OK &&
               one == ref[0],
           "bound curve: a single distance is B(0)");
}

/* pe_rope_prefix_lanes, in each kernel, against the sums taken one distance at a time in pair
 * order: the same bits (1203 pairs: not a multiple of the kernels' blocks). */
static void test_prefix_lanes(void)
{
    enum { NP = 1203, L = PE_PREFIX_LANES };
    static double c[L][NP], s[L][NP];
    const double *cp[L], *sp[L];
    double want[3][L], got[3][3][L];
    for (int l = 0; l < L; l++) {
        for (int k = 0; k < NP; k++) {
            double a = 0.37 * (l + 1) * (k + 1) + 1.0 / (k + 2);
            c[l][k] = cos(a);
            s[l][k] = sin(a);
        }
        cp[l] = c[l];
        sp[l] = s[l];
        double x = 0, y = 0, t = 0;
        for (int k = 0; k < NP; k++) {
            x += c[l][k];
            y += s[l][k];
            t += sqrt(x * x + y * y);
        }
        want[0][l] = x;
        want[1][l] = y;
        want[2][l] = t;
    }
    static const char *const kernels[3] = {"plain", "sse2", NULL};
    for (int k = 0; k < 3; k++) {
        if (kernels[k])
            setenv("PELAB_BOUND_KERNEL", kernels[k], 1);
        else
            unsetenv("PELAB_BOUND_KERNEL");
        pe_rope_prefix_lanes(cp, sp, NP, got[k][0], got[k][1], got[k][2]);
        TAP_OK(memcmp(got[k], want, sizeof want) == 0,
               "prefix lanes (%s kernel): the sums of one distance at a time, bit for bit",
               kernels[k] ? kernels[k] : "best");
    }
    unsetenv("PELAB_BOUND_KERNEL");
    double b = pe_rope_decay_bound((const double[]){0.5, 0.25, 0.125}, 3, 3.0);
    const double c3[3] = {cos(1.5), cos(0.75), cos(0.375)},
                 s3[3] = {sin(1.5), sin(0.75), sin(0.375)};
    const double *c8[L], *s8[L];
    for (int l = 0; l < L; l++) {
        c8[l] = c3;
        s8[l] = s3;
    }
    double re[L], im[L], tot[L];
    pe_rope_prefix_lanes(c8, s8, 3, re, im, tot);
    TAP_CLOSE(tot[L - 1] / 3, b, 0, 1e-14, "prefix lanes: tot / npairs is the decay bound");
}

static void test_qk(void)
{
    double q1[16], k1[16], q2[16], k2[16];
    pe_rope_qk(16, 3, q1, k1);
    pe_rope_qk(16, 3, q2, k2);
    TAP_OK(memcmp(q1, q2, sizeof q1) == 0 && memcmp(k1, k2, sizeof k1) == 0 &&
               memcmp(q1, k1, sizeof q1) != 0,
           "pe_rope_qk deterministic by seed, q != k");
    pe_rope_qk(16, UINT64_MAX, q1, k1);
    int ones = 1;
    for (int i = 0; i < 16; i++) ones &= q1[i] == 1.0 && k1[i] == 1.0;
    TAP_OK(ones, "seed UINT64_MAX: all ones");
}

int main(void)
{
    test_vectors();
    test_scores();
    test_seed000_bug();
    test_relativity_and_norm();
    test_pairings_agree();
    test_partial_rotary();
    test_tables_and_float_kernel();
    test_prefix_lanes();
    test_decay_bound();
    test_decay_bound_curve();
    test_qk();
    return tap_done();
}
