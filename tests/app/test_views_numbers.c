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

int main(void)
{
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
