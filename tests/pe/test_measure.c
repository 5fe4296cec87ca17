/* test_measure: the measurements of pe/measure.c (sinks, attention by distance, Jensen-Shannon
 * divergence, rotary pair norms, massive dimensions, principal components) against closed forms
 * and against computations written here a second way. */
#include <stdio.h>
#include <stdlib.h>

#include "measure.h"
#include "pe_test.h"

/* A causal (T, T) block of softmax rows from seeded logits; entries past t are garbage (7.0) so
 * a measure that reads them shows. */
static void random_block(float *a, size_t t_len, uint64_t seed)
{
    pe_rng r;
    pe_rng_seed(&r, seed);
    for (size_t t = 0; t < t_len; t++) {
        double z[256], s = 0.0;
        for (size_t j = 0; j <= t; j++) {
            z[j] = exp(2.0 * pe_rng_normal(&r));
            s += z[j];
        }
        for (size_t j = 0; j < t_len; j++) a[t * t_len + j] = j <= t ? (float)(z[j] / s) : 7.0f;
    }
}

static void test_sink(void)
{
    enum { T = 40 };
    static float a[T * T];
    /* uniform causal attention: A[t][0] = 1/(t+1), alpha = H_T / T */
    for (size_t t = 0; t < T; t++)
        for (size_t j = 0; j < T; j++) a[t * T + j] = j <= t ? 1.0f / (float)(t + 1) : 7.0f;
    double h = 0.0;
    for (int t = 1; t <= T; t++) h += 1.0 / t;
    TAP_CLOSE(pe_sink_alpha(a, T, T), h / T, 1e-6, 0, "sink: uniform attention gives H_T / T");
    /* a perfect sink head: everything on token 0 */
    for (size_t t = 0; t < T; t++)
        for (size_t j = 0; j <= t; j++) a[t * T + j] = j == 0;
    TAP_CLOSE(pe_sink_alpha(a, T, T), 1.0, 0, 1e-12, "sink: all attention on token 0 gives 1");
    /* random rows against a sum written here column-wise */
    random_block(a, T, 5);
    double s = 0.0;
    for (size_t t = T; t-- > 0;) s += a[t * T];
    TAP_CLOSE(pe_sink_alpha(a, T, T), s / T, 1e-12, 0, "sink: random rows");
    double al[5] = {0.1, 0.31, 0.3, 0.9, 0.29};
    TAP_CLOSE(pe_sink_share(al, 5, 0.3), 0.4, 0, 1e-15, "sink share above 0.3 (strictly)");
}

static void test_distance(void)
{
    enum { T = 33 };
    static float a[T * T];
    random_block(a, T, 11);
    double ds[T] = {0}, dc[T] = {0}, rs[T] = {0}, rc[T] = {0};
    pe_attn_distance_add(a, T, T, ds, dc, rs, rc);
    pe_attn_distance_add(a, T, T, ds, dc, rs, rc); /* twice: means unchanged, counts doubled */
    int ok = 1;
    for (int r = 0; r < T; r++) {
        /* by distance: walk the diagonals */
        double s = 0.0;
        int n = 0;
        for (int t = r; t < T; t++, n++) s += a[t * T + (t - r)];
        ok &= dc[r] == 2.0 * n && fabs(ds[r] / dc[r] - s / n) < 1e-12;
    }
    TAP_OK(ok, "distance: mean weight along each diagonal");
    ok = 1;
    for (int j = 0; j < T; j++) {
        double s = 0.0;
        int n = 0;
        for (int t = j; t < T; t++, n++) s += a[t * T + j];
        ok &= rc[j] == 2.0 * n && fabs(rs[j] / rc[j] - s / n) < 1e-12;
    }
    TAP_OK(ok, "received: mean weight down each column from the diagonal");
    /* every query's weights sum to 1, so sum_r dist_sum[r] = 2 T */
    double tot = 0.0;
    for (int r = 0; r < T; r++) tot += ds[r];
    TAP_CLOSE(tot, 2.0 * T, 1e-6, 0, "distance sums add up to the number of queries");
}

static void test_jsd(void)
{
    float p[4] = {0.25f, 0.25f, 0.25f, 0.25f}, q[4] = {1, 0, 0, 0}, r[4] = {0, 0, 0.5f, 0.5f};
    TAP_CLOSE(pe_jsd(p, p, 4), 0.0, 0, 1e-15, "jsd of equal rows is 0");
    float s1[2] = {1, 0}, s2[2] = {0, 1};
    TAP_CLOSE(pe_jsd(s1, s2, 2), log(2.0), 1e-12, 0, "jsd of disjoint rows is ln 2");
    TAP_CLOSE(pe_jsd(q, r, 4), log(2.0), 1e-12, 0, "disjoint supports: ln 2");
    /* closed form for p uniform on 4, q on one point: m = (5/8, 1/8, 1/8, 1/8) */
    double want = 0.5 * (0.25 * log(0.25 / 0.625) + 3 * 0.25 * log(0.25 / 0.125)) +
                  0.5 * (1.0 * log(1.0 / 0.625));
    TAP_CLOSE(pe_jsd(p, q, 4), want, 1e-9, 0, "jsd closed form (uniform vs point)");
    TAP_CLOSE(pe_jsd(p, q, 4), pe_jsd(q, p, 4), 1e-15, 0, "jsd symmetric");
    enum { T = 20 };
    static float a1[T * T], a2[T * T];
    random_block(a1, T, 1);
    random_block(a2, T, 2);
    double m = 0.0;
    for (int t = 0; t < T; t++) {
        double s = 0.0;
        for (int j = 0; j <= t; j++) {
            double x = a1[t * T + j], y = a2[t * T + j], mid = (x + y) / 2;
            if (x > 0) s += 0.5 * x * log(x / mid);
            if (y > 0) s += 0.5 * y * log(y / mid);
        }
        m += s / T;
    }
    TAP_CLOSE(pe_jsd_rows(a1, T, a2, T, T), m, 1e-9, 0, "mean jsd over causal rows");
    TAP_CLOSE(pe_jsd_rows(a1, T, a1, T, T), 0.0, 0, 1e-12, "a block against itself: 0");
}

static void test_pairs(void)
{
    float x[8] = {3, 4, 0, 1, -5, 12, 6, 8};
    double out[4];
    pe_pair_norms(x, 8, PE_PAIRING_INTERLEAVED, out);
    double want_i[4] = {5, 1, 13, 10};
    close_vec_d(out, want_i, 4, 1e-12, 0, "pair norms, interleaved");
    pe_pair_norms(x, 8, PE_PAIRING_HALF, out);
    double want_h[4] = {hypot(3, -5), hypot(4, 12), hypot(0, 6), hypot(1, 8)};
    close_vec_d(out, want_h, 4, 1e-12, 0, "pair norms, half split");
    pe_pair_norms(x, 4, PE_PAIRING_HALF, out); /* partial rotary: the first 4 of 8 */
    double want_p[2] = {hypot(3, 0), hypot(4, 1)};
    close_vec_d(out, want_p, 2, 1e-12, 0, "pair norms, rotary part only");
}

static void test_massive(void)
{
    enum { T = 10, D = 16 };
    float x[T * D];
    pe_rng r;
    pe_rng_seed(&r, 3);
    for (int i = 0; i < T * D; i++) x[i] = (float)pe_rng_normal(&r);
    for (int t = 0; t < T; t++) x[t * D + 5] = 40.0f; /* one massive dimension */
    double m[D];
    unsigned char mass[D];
    int n = pe_massive_dims(x, D, T, D, 5.0, m, mass);
    TAP_OK(n == 1 && mass[5], "massive: the one large dimension is found (%d)", n);
    TAP_CLOSE(m[5], 40.0 * sqrt(T), 1e-6, 0, "massive: M[d] is the L2 norm over tokens");
    n = pe_massive_dims(x, D, T, D, 1.0, m, mass);
    double mean = 0.0;
    for (int d = 0; d < D; d++) mean += m[d] / D;
    int cnt = 0;
    for (int d = 0; d < D; d++) cnt += m[d] > mean;
    TAP_OK(n == cnt, "massive at lambda 1: exactly the dimensions above the mean");
}

/* Full symmetric eigen-decomposition by cyclic Jacobi, written independently of measure.c's
 * small solver: the check for pe_pca. */
static void eig_full(double *a, int n, double *vals, double *vecs)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) vecs[i * n + j] = i == j;
    for (int sweep = 0; sweep < 100; sweep++)
        for (int p = 0; p < n - 1; p++)
            for (int q = p + 1; q < n; q++) {
                if (fabs(a[p * n + q]) < 1e-300) continue;
                double phi = 0.5 * atan2(2 * a[p * n + q], a[q * n + q] - a[p * n + p]);
                double c = cos(phi), s = sin(phi);
                for (int k = 0; k < n; k++) {
                    double akp = a[k * n + p], akq = a[k * n + q];
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for (int k = 0; k < n; k++) {
                    double apk = a[p * n + k], aqk = a[q * n + k];
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
                for (int k = 0; k < n; k++) {
                    double vkp = vecs[k * n + p], vkq = vecs[k * n + q];
                    vecs[k * n + p] = c * vkp - s * vkq;
                    vecs[k * n + q] = s * vkp + c * vkq;
                }
            }
    for (int i = 0; i < n; i++) vals[i] = a[i * n + i];
}

static void test_pca(void)
{
    char err[256];
    enum { R = 60, C = 12, K = 3 };
    pe_matrix t = {0};
    pe_matrix_init(&t, R + 5, C, err, sizeof err);
    pe_rng r;
    pe_rng_seed(&r, 42);
    for (size_t i = 0; i < t.rows * C; i++) t.data[i] = (float)(pe_rng_normal(&r) * 0.1);
    /* a helix along three directions: cos, sin and a ramp, with distinct variances */
    for (int i = 0; i < R; i++) {
        float *x = pe_matrix_row(&t, (size_t)i);
        x[0] += (float)(3.0 * cos(i * 0.2));
        x[1] += (float)(3.0 * sin(i * 0.2) * 0.7);
        x[2] += (float)(0.04 * (i - 30));
        x[3] += x[2];
    }
    double scores[(R + 5) * K], var[K], share[K];
    int rc = pe_pca(&t, R, K, scores, var, share, err, sizeof err);
    TAP_OK(rc == PE_OK, "pca runs (%s)", rc ? err : "ok");
    /* the independent route: covariance written here, full Jacobi */
    double mean[C] = {0}, cov[C * C] = {0}, vals[C], vecs[C * C];
    for (int i = 0; i < R; i++)
        for (int c = 0; c < C; c++) mean[c] += pe_matrix_row(&t, (size_t)i)[c] / (double)R;
    for (int i = 0; i < R; i++)
        for (int a = 0; a < C; a++)
            for (int b = 0; b < C; b++)
                cov[a * C + b] += (pe_matrix_row(&t, (size_t)i)[a] - mean[a]) *
                                  (pe_matrix_row(&t, (size_t)i)[b] - mean[b]) / (R - 1);
    double total = 0.0;
    for (int c = 0; c < C; c++) total += cov[c * C + c];
    eig_full(cov, C, vals, vecs);
    int idx[C];
    for (int c = 0; c < C; c++) idx[c] = c;
    for (int c = 0; c < C; c++)
        for (int b = c + 1; b < C; b++)
            if (vals[idx[b]] > vals[idx[c]]) {
                int tmp = idx[b];
                idx[b] = idx[c];
                idx[c] = tmp;
            }
    for (int k = 0; k < K; k++) {
        char name[96];
        snprintf(name, sizeof name, "pca: variance of component %d equals the eigenvalue", k + 1);
        TAP_CLOSE(var[k], vals[idx[k]], 1e-8, 1e-12, name);
        snprintf(name, sizeof name, "pca: share of component %d", k + 1);
        TAP_CLOSE(share[k], vals[idx[k]] / total, 1e-8, 1e-12, name);
        /* scores along the reference eigenvector, up to sign (the sign rule checked below) */
        double worst = 0.0, sgn = 0.0;
        for (int i = 0; i < R; i++) {
            double s = 0.0;
            for (int c = 0; c < C; c++)
                s += (pe_matrix_row(&t, (size_t)i)[c] - mean[c]) * vecs[c * C + idx[k]];
            if (sgn == 0.0 && fabs(s) > 1e-3) sgn = scores[i * K + k] / s > 0 ? 1.0 : -1.0;
            worst = fmax(worst, fabs(scores[i * K + k] - sgn * s));
        }
        snprintf(name, sizeof name, "pca: scores of component %d (worst %.2g)", k + 1, worst);
        TAP_OK(worst < 1e-6, "%s", name);
        /* the sign rule: the largest-magnitude loading is positive */
        int best = 0;
        for (int c = 1; c < C; c++)
            if (fabs(vecs[c * C + idx[k]]) > fabs(vecs[best * C + idx[k]])) best = c;
        snprintf(name, sizeof name, "pca: component %d's largest loading is positive", k + 1);
        TAP_OK(sgn * vecs[best * C + idx[k]] > 0, "%s", name);
    }
    TAP_OK(var[0] >= var[1] && var[1] >= var[2], "pca: components in descending variance");
    rc = pe_pca(&t, R, 0, scores, var, NULL, err, sizeof err);
    expect_fail(rc, PE_EINVAL, err, "components", "pca: 0 components refused");
    pe_matrix_free(&t);
}

int main(void)
{
    test_sink();
    test_distance();
    test_jsd();
    test_pairs();
    test_massive();
    test_pca();
    return tap_done();
}
