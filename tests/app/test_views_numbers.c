/* test_views_numbers.c: the numbers behind the figures equal the library's. The decay view
 * computes its RoPE curves with rotation recurrences (fast enough for a frame); here they are
 * checked against pe_rope_score_curve, pe_rope_decay_bound and pe_xpos_decay, under several
 * settings (pairings, partial rotary, YaRN's attention factor), and the sinusoidal curve against
 * sum_k cos(D w_k). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "tap.h"
#include "views.h"

static void check(const char *label, const char *const *opts, int nopts)
{
    app_state st;
    app_state_default(&st);
    char err[512];
    for (int i = 0; i < nopts; i += 2)
        app_option_set(&st, app_option_find(opts[i]), opts[i + 1], err, sizeof err);
    app_option_set(&st, app_option_find("view"), "decay", err, sizeof err);
    app_option_set(&st, app_option_find("curves"), "sinusoidal,rope,rope-random,rope-bound,xpos",
                   err, sizeof err);
    TAP_OK(app_state_validate(&st, err, sizeof err) == 0, "%s: valid (%s)", label, err);
    app_view_ctx c = {0};
    app_data d = {0};
    int rc = app_view_at((size_t)st.view)->data(&c, &st, &d, err, sizeof err);
    TAP_OK(rc == 0 && d.shape[0] == 6, "%s: decay data has p and 5 curves (%s)", label, err);
    if (rc != 0) return;
    const pe_params *p = &st.p;
    int L = p->len, D = p->dim, p0 = app_state_p0(&st);
    int np = pe_rope_rotary_dim(p) / 2;
    double *inv = malloc(sizeof *inv * (size_t)np), attn = 1;
    pe_rope_inv_freq(p, inv, &attn, err, sizeof err);
    double *q = malloc(sizeof *q * (size_t)D * 2), *k = q + D;
    double *ref = malloc(sizeof *ref * (size_t)L);
    double worst[5] = {0};
    /* sinusoidal: sum_k cos(D w_k) / (d/2) */
    for (int i = 0; i < L; i++) {
        double v = 0;
        for (int kk = 0; kk < D / 2; kk++) v += cos((p0 - i) * pe_sin_freq(p, kk));
        worst[0] = fmax(worst[0], fabs(d.data[1 * L + i] - v / (D / 2)));
    }
    /* RoPE ones and random against the library's rotation */
    for (int which = 0; which < 2; which++) {
        pe_rope_qk(D, which == 0 ? UINT64_MAX : p->seed, q, k);
        double nq = 0, nk = 0;
        for (int i = 0; i < D; i++) {
            nq += q[i] * q[i];
            nk += k[i] * k[i];
        }
        pe_rope_score_curve(p, q, k, 0, p0 - L + 1, L, ref, err, sizeof err);
        /* ones: divided by the score at p0 (ref[L-1-p0]); random: by |q||k| */
        double norm = which == 0 ? ref[L - 1 - p0] : sqrt(nq * nk);
        for (int i = 0; i < L; i++)
            worst[1 + which] =
                fmax(worst[1 + which], fabs(d.data[(2 + which) * L + i] - ref[L - 1 - i] / norm));
    }
    double b0 = pe_rope_decay_bound(inv, np, 0);
    for (int i = 0; i < L; i++)
        worst[3] = fmax(worst[3], fabs(d.data[4 * L + i] -
                                       pe_rope_decay_bound(inv, np, fabs((double)(p0 - i))) / b0));
    /* xPos with q = k = 1: each rotated pair adds 2 attn^2 cos(r theta_k) zeta_k^(r/s), each
     * unrotated dimension 1 (as in the RoPE curve and the xpos view); divided by the value at p0 */
    double rest = D - 2.0 * np, a2 = 2 * attn * attn;
    for (int i = 0; i < L; i++) {
        double r = p0 - i, v = 0;
        for (int kk = 0; kk < np; kk++) v += cos(r * inv[kk]) * pe_xpos_decay(p, kk, r);
        worst[4] = fmax(worst[4], fabs(d.data[5 * L + i] - (a2 * v + rest) / (a2 * np + rest)));
    }
    TAP_OK(d.data[2 * L + p0] == 1 || fabs(d.data[2 * L + p0] - 1) < 1e-12,
           "%s: RoPE q=k=1 is 1 at p0 (%.15g)", label, d.data[2 * L + p0]);
    TAP_OK(fabs(d.data[5 * L + p0] - 1) < 1e-12, "%s: xPos is 1 at p0 (%.15g)", label,
           d.data[5 * L + p0]);
    const char *names[5] = {"sinusoidal", "RoPE q=k=1", "RoPE random q,k", "RoPE bound", "xPos"};
    /* the sinusoidal curve comes from the float32 table: float tolerance; the rest is double */
    for (int w = 0; w < 5; w++)
        TAP_OK(worst[w] < (w == 0 ? 1e-6 : 1e-9),
               "%s: %s curve equals the library's (max error %.2g)", label, names[w], worst[w]);
    free(inv);
    free(q);
    free(ref);
    app_data_free(&d);
    app_view_ctx_free(&c);
}

/* The Gaussian curve (Barbero et al. 2024, Fig. 2): mean and sd over 32 seeded draws of
 * <R_p0 q, R_p k> / (|q||k|), each draw's score from pe_rope_score_curve (the view sweeps
 * rotations), the statistics in two passes (the view uses Welford's running form); and what the
 * figure is there to show: the mean stays near 0 at every distance and the spread does not shrink
 * with distance, while the bound decays. */
static void check_gauss(const char *label, const char *const *opts, int nopts)
{
    app_state st;
    app_state_default(&st);
    char err[512];
    for (int i = 0; i < nopts; i += 2)
        app_option_set(&st, app_option_find(opts[i]), opts[i + 1], err, sizeof err);
    app_option_set(&st, app_option_find("view"), "decay", err, sizeof err);
    app_option_set(&st, app_option_find("curves"), "rope-gauss", err, sizeof err);
    app_view_ctx c = {0};
    app_data d = {0};
    int rc = app_view_at((size_t)st.view)->data(&c, &st, &d, err, sizeof err);
    TAP_OK(rc == 0 && d.shape[0] == 3, "%s: Gaussian data has p, mean and sd (%s)", label, err);
    if (rc != 0) return;
    const pe_params *p = &st.p;
    int L = p->len, D = p->dim, p0 = app_state_p0(&st), draws = 32;
    double *q = malloc(sizeof *q * (size_t)D * 2), *k = q + D;
    double *all = malloc(sizeof *all * (size_t)L * (size_t)draws);
    for (int i = 0; i < draws; i++) {
        uint64_t z = p->seed + 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        pe_rope_qk(D, (z ^ (z >> 31)) & ~(uint64_t)1, q, k);
        double nq = 0, nk = 0;
        for (int j = 0; j < D; j++) {
            nq += q[j] * q[j];
            nk += k[j] * k[j];
        }
        double *ref = all + (size_t)i * L;
        pe_rope_score_curve(p, q, k, 0, p0 - L + 1, L, ref, err, sizeof err);
        for (int j = 0; j < L / 2; j++) { /* ref runs from rel p0 - L + 1: reverse it */
            double t = ref[j];
            ref[j] = ref[L - 1 - j];
            ref[L - 1 - j] = t;
        }
        for (int j = 0; j < L; j++) ref[j] /= sqrt(nq * nk);
    }
    double wm = 0, ws = 0, maxmean = 0, sd_near = 0, sd_far = 0, n_near = 0, n_far = 0;
    for (int j = 0; j < L; j++) {
        double m = 0, v = 0;
        for (int i = 0; i < draws; i++) m += all[(size_t)i * L + j] / draws;
        for (int i = 0; i < draws; i++) v += pow(all[(size_t)i * L + j] - m, 2) / (draws - 1);
        wm = fmax(wm, fabs(d.data[L + j] - m));
        ws = fmax(ws, fabs(d.data[2 * L + j] - sqrt(v)));
        maxmean = fmax(maxmean, fabs(m));
        if (abs(j - p0) < 8) sd_near += sqrt(v), n_near++;
        if (abs(j - p0) >= L / 2 - 8 && abs(j - p0) < L / 2) sd_far += sqrt(v), n_far++;
    }
    sd_near /= n_near;
    sd_far /= n_far;
    TAP_OK(wm < 1e-9 && ws < 1e-9, "%s: mean and sd equal the library's (max error %.2g, %.2g)",
           label, wm, ws);
    /* one draw's score / (|q||k|) has sd ~ 1/sqrt(d); a mean of 32 a sixth of that: six of those
     * is far beyond any chance value */
    TAP_OK(maxmean < 6.0 / sqrt((double)D * draws), "%s: the mean stays at 0 (max |mean| %.3f)",
           label, maxmean);
    TAP_OK(sd_far > 0.6 * sd_near, "%s: the spread does not decay (sd near p0 %.3f, far %.3f)",
           label, sd_near, sd_far);
    free(q);
    free(all);
    app_data_free(&d);
    app_view_ctx_free(&c);
}

int main(void)
{
    const char *g1[] = {"dim", "64", "len", "512", "pos", "256"};
    check_gauss("d 64, L 512", g1, 6);
    const char *g2[] = {"dim", "128", "len", "300", "pos", "20", "pairing", "half", "seed", "7"};
    check_gauss("d 128, half pairs, seed 7", g2, 10);
    const char *a[] = {"dim", "64", "len", "700", "pos", "300"};
    check("d 64, L 700, p0 300", a, 6);
    const char *b[] = {"dim", "32", "len", "600", "pos", "10", "pairing", "half", "base", "500"};
    check("half pairs, base 500, p0 near the start", b, 10);
    const char *c[] = {"dim",  "16",     "len", "300",      "pos", "299",         "scaling",
                       "yarn", "factor", "4",   "orig-ctx", "64",  "rotary-frac", "0.5"};
    check("YaRN f 4 with rotary 0.5, p0 at the end", c, 14);
    /* the cases: YaRN f 8 (attention 1.2079), an explicit attention factor 1.5 */
    const char *e[] = {"dim",  "128",     "len",  "3000",   "base", "500000",   "pos",
                       "2999", "scaling", "yarn", "factor", "8",    "orig-ctx", "1024"};
    check("YaRN f 8, d 128, L 3000, p0 2999", e, 14);
    const char *f[] = {"dim", "64",          "len", "400",         "pos",
                       "200", "attn-factor", "1.5", "rotary-frac", "0.75"};
    check("--attn-factor 1.5 with rotary 0.75", f, 10);
    return tap_done();
}
