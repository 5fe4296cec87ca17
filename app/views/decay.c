/* decay.c: how much a query at p0 "sees" a key at p, for several encodings on one axis (seed
 * 004's figure: d 128, L 256, p0 128). Every curve is divided by its value at p = p0, so the
 * shapes compare even though the raw scales differ:
 *   table encodings    PE(p0).PE(p) / PE(p0).PE(p0)
 *   RoPE (ones)        <R_p0 1, R_p 1> / <R_p0 1, R_p0 1>   (depends only on p0 - p)
 *   RoPE (random q,k)  <R_p0 q, R_p k> / (|q||k|)      (not 1 at p0: q.k/(|q||k|) there)
 *   RoPE bound         B(|p0 - p|) / B(0)             (RoFormer 3.4.3)
 *   ALiBi              exp(-m (p0 - p)): the factor the bias multiplies attention by
 *   xPos               RoPE (ones) with every pair damped by zeta_k^((p0-p)/scale)
 * An attention factor a (YaRN, --attn-factor) scales the rotated pairs' part of a score by a^2
 * and leaves the d - rotary_dim unrotated dimensions alone, so the ones curves are 1 at p0 only
 * when divided by their own value there, 2 a^2 (rotary_dim/2) + (d - rotary_dim); the xPos curve
 * counts the unrotated dimensions like the RoPE one and the xpos view. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_list.h"

static const char *const curve_label[APP_CURVE_COUNT] = {
    "sinusoidal",        "learned",         "binary",          "RoPE (q=k=1)",
    "RoPE (random q,k)", "RoPE bound B(r)", "ALiBi exp(bias)", "xPos (q=k=1)"};

static int decay_validate(const app_state *st, char *err, size_t errlen)
{
    if (st->curves & (APP_CURVE_SINUSOIDAL | APP_CURVE_ROPE | APP_CURVE_ROPE_RANDOM |
                      APP_CURVE_ROPE_BOUND | APP_CURVE_XPOS))
        if (pe_check_dim(st->p.dim, 1, err, errlen) < 0) return -1;
    if (pe_check_len(st->p.len, err, errlen) < 0) return -1;
    if (pe_check_base(st->p.base, err, errlen) < 0) return -1;
    if (st->curves & (APP_CURVE_SINUSOIDAL | APP_CURVE_LEARNED | APP_CURVE_BINARY))
        if (pe_check_cells((size_t)st->p.len, (size_t)st->p.dim, "--len x --dim", err, errlen) < 0)
            return -1;
    return 0;
}

/* Table dot products against row p0, normalised. */
static int table_curve(const char *name, const app_state *st, double *y, char *err, size_t errlen)
{
    const pe_encoding *e = pe_encoding_find(name);
    pe_matrix tab = {0};
    if (!e || e->table(&st->p, &tab, err, errlen) < 0) return -1;
    size_t p0 = (size_t)app_state_p0(st);
    pe_dot_decay(&tab, p0, y);
    double y0 = y[p0];
    for (int i = 0; i < st->p.len; i++) y[i] = y0 != 0 ? y[i] / y0 : 0;
    pe_matrix_free(&tab);
    return 0;
}

/* The RoPE-family curves at r = p0 - p for p = 0..L-1, in one pass per direction: every pair's
 * (cos r theta_k, sin r theta_k) advances by a rotation instead of a sin/cos call, re-anchored
 * with exact values every 256 steps (error stays near 1e-13). which: 3 ones, 4 random q,k,
 * 5 the decay bound, 7 xPos. The same quantities as pe_rope_score_curve, pe_rope_decay_bound and
 * pe_xpos_decay; tests/app/test_views_numbers.c checks them against those. */
static int rope_sweep(const app_state *st, int which, double *y, char *err, size_t errlen)
{
    const pe_params *p = &st->p;
    int L = p->len, d = p->dim, p0 = app_state_p0(st);
    int rd = pe_rope_rotary_dim(p), np = rd / 2;
    double *buf = malloc(sizeof *buf * ((size_t)np * 9 + (size_t)d * 2));
    if (!buf) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double *inv = buf, *cs = inv + np, *sn = cs + np, *a = sn + np, *b = a + np, *z = b + np,
           *zs = z + np, *c1 = zs + np, *s1 = c1 + np, *q = s1 + np, *k = q + d;
    double attn = 1;
    if (pe_rope_inv_freq(p, inv, &attn, err, errlen) < 0) {
        free(buf);
        return -1;
    }
    /* the score of a pair at distance r = m - n is A cos(r theta) + B sin(r theta) */
    pe_rope_qk(d, which == 4 ? p->seed : UINT64_MAX, q, k); /* UINT64_MAX: all ones */
    double nq = 0, nk = 0, rest = 0;
    for (int i = 0; i < d; i++) {
        nq += q[i] * q[i];
        nk += k[i] * k[i];
    }
    pe_params pp = *p;
    for (int kk = 0; kk < np; kk++) {
        int i0, i1;
        pe_rope_pair(&pp, kk, &i0, &i1);
        a[kk] = (q[i0] * k[i0] + q[i1] * k[i1]) * attn * attn;
        b[kk] = (q[i0] * k[i1] - q[i1] * k[i0]) * attn * attn;
    }
    for (int i = 0; i < d; i++) {
        int rotated = 0;
        for (int kk = 0; kk < np && !rotated; kk++) {
            int i0, i1;
            pe_rope_pair(&pp, kk, &i0, &i1);
            rotated = i == i0 || i == i1;
        }
        if (!rotated) rest += q[i] * k[i]; /* dimensions past the rotary part pass through */
    }
    /* the ones curves (3, 7) divide by their value at p0; the random one by |q||k| */
    double norm = sqrt(nq * nk);
    if (which != 4) {
        norm = rest;
        for (int kk = 0; kk < np; kk++) norm += a[kk];
    }
    if (!(norm > 0)) norm = 1;
    double b0 = 0;
    if (which == 5) b0 = pe_rope_decay_bound(inv, np, 0);
    for (int dir = 1; dir >= -1; dir -= 2) {
        /* r runs from 0 away from p0: up to p0 (keys before it), then down to p0 - (L-1) */
        int rmax = dir > 0 ? p0 : L - 1 - p0;
        for (int kk = 0; kk < np; kk++) {
            cs[kk] = 1;
            sn[kk] = 0;
            z[kk] = 1;
            zs[kk] = which == 7 ? pow(pe_xpos_zeta(p, kk), dir / p->xpos_scale_base) : 1;
            c1[kk] = cos(dir * inv[kk]); /* one position's rotation */
            s1[kk] = sin(dir * inv[kk]);
        }
        for (int r = 0; r <= rmax; r++) {
            double rr = (double)dir * r;
            if (r % 256 == 0)
                for (int kk = 0; kk < np; kk++) {
                    cs[kk] = cos(rr * inv[kk]);
                    sn[kk] = sin(rr * inv[kk]);
                    if (which == 7) z[kk] = pe_xpos_decay(p, kk, rr);
                }
            double v = 0;
            if (which == 3 || which == 4) {
                for (int kk = 0; kk < np; kk++) v += a[kk] * cs[kk] + b[kk] * sn[kk];
                v = (v + rest) / norm;
            } else if (which == 5) {
                double re = 0, im = 0;
                for (int kk = 0; kk < np; kk++) {
                    re += cs[kk];
                    im += sn[kk];
                    v += sqrt(re * re + im * im);
                }
                v = (2.0 / (2 * np)) * v / b0;
            } else { /* xPos with q = k = 1: a[kk] = 2 attn^2, b[kk] = 0 */
                for (int kk = 0; kk < np; kk++) v += a[kk] * cs[kk] * z[kk];
                v = (v + rest) / norm;
            }
            y[p0 - (int)rr] = v;
            for (int kk = 0; kk < np; kk++) { /* advance every pair by one position */
                double c = cs[kk] * c1[kk] - sn[kk] * s1[kk];
                sn[kk] = sn[kk] * c1[kk] + cs[kk] * s1[kk];
                cs[kk] = c;
                z[kk] *= zs[kk];
            }
        }
    }
    free(buf);
    return 0;
}

/* The legend of curve w; xPos with partial rotary names the dimension zeta is taken over, where
 * torchscale (the full d) and lucidrains (the rotary dimension) differ. */
static const char *decay_label(const app_state *st, int w)
{
    if (w == 7 && 2 * (pe_rope_rotary_dim(&st->p) / 2) < st->p.dim)
        return st->p.xpos_zeta_rotary ? "xPos (q=k=1, zeta over rotary dim: lucidrains)"
                                      : "xPos (q=k=1, zeta over full d: torchscale)";
    return curve_label[w];
}

/* Fill curve `which` (bit index) with L values. */
static int decay_curve(const app_state *st, int which, double *y, char *err, size_t errlen)
{
    const pe_params *p = &st->p;
    int L = p->len, p0 = app_state_p0(st);
    switch (which) {
    case 0:
        return table_curve("sinusoidal", st, y, err, errlen);
    case 1:
        return table_curve("learned", st, y, err, errlen);
    case 2:
        return table_curve("binary", st, y, err, errlen);
    case 3:
    case 4:
    case 5:
    case 7:
        return rope_sweep(st, which, y, err, errlen);
    case 6: {
        double *slopes = malloc(sizeof *slopes * (size_t)p->heads);
        if (!slopes || pe_alibi_slopes(p->heads, p->slope_ratio, slopes, err, errlen) < 0) {
            free(slopes);
            return -1;
        }
        double m = slopes[st->head >= 0 ? st->head : 0];
        for (int i = 0; i < L; i++) {
            int rel = p0 - i;
            if (rel < 0 && !p->alibi_symmetric)
                y[i] = NAN; /* masked: the future is not attended */
            else
                y[i] = exp(-m * fabs((double)rel));
        }
        free(slopes);
        return 0;
    }
    }
    return -1;
}

/* Curve `which`, cached under the inputs it depends on (a learned table does not change with the
 * base, so turning the base does not regenerate it). NULL with err on failure. */
static const double *decay_curve_cached(app_view_ctx *c, const app_state *st, int which, char *err,
                                        size_t errlen)
{
    struct {
        int which, p0, head;
        pe_params p;
    } key;
    memset(&key, 0, sizeof key);
    key.which = which;
    key.p0 = app_state_p0(st);
    key.p.dim = st->p.dim;
    key.p.len = st->p.len;
    if (which == 1) { /* learned: its seed and spread */
        key.p.seed = st->p.seed;
        key.p.learned_std = st->p.learned_std;
    } else if (which == 6) { /* ALiBi: slopes and mask */
        key.head = st->head;
        key.p.heads = st->p.heads;
        key.p.slope_ratio = st->p.slope_ratio;
        key.p.alibi_symmetric = st->p.alibi_symmetric;
    } else if (which != 2) { /* sinusoidal and the RoPE family: every frequency setting */
        key.p = st->p;
    }
    double *y = app_cache_get(c, which, &key, sizeof key);
    if (y) return y;
    y = app_cache_put(c, which, &key, sizeof key, sizeof *y * (size_t)st->p.len);
    if (!y) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (decay_curve(st, which, y, err, errlen) < 0) {
        app_cache_put(c, which, "", 0, 0); /* forget the half-made curve */
        return NULL;
    }
    return y;
}

static int decay_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                       char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    int L = st->p.len, p0 = app_state_p0(st);
    char title[128], sub[256];
    snprintf(title, sizeof title, "How position p0 = %d sees every position p", p0);
    app_subtitle(st, NULL, APP_SUB_DIM | APP_SUB_LEN | APP_SUB_BASE, sub, sizeof sub);
    size_t used = strlen(sub);
    snprintf(sub + used, sizeof sub - used, "  (each curve / its value at p0%s)",
             (st->curves & APP_CURVE_ROPE_RANDOM) ? "; random q,k / |q||k|" : "");
    fig_rect r = app_frame(s, t, th, title, sub);

    double *x = malloc(sizeof *x * (size_t)L * (APP_CURVE_COUNT + 1));
    if (!x) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double *ys = x + L;
    for (int i = 0; i < L; i++) x[i] = i;
    const char *names[APP_CURVE_COUNT];
    char named[APP_CURVE_COUNT][64];
    uint32_t colors[APP_CURVE_COUNT];
    unsigned styles[APP_CURVE_COUNT];
    int which[APP_CURVE_COUNT];
    int n = 0;
    double lo = 0, hi = 1;
    for (int w = 0; w < APP_CURVE_COUNT; w++) {
        if (!(st->curves & (1u << w))) continue;
        double *y = ys + (size_t)n * L;
        const double *cy = decay_curve_cached(c, st, w, err, errlen);
        if (!cy) {
            free(x);
            return -1;
        }
        memcpy(y, cy, sizeof *y * (size_t)L);
        for (int i = 0; i < L; i++)
            if (isfinite(y[i])) {
                lo = fmin(lo, y[i]);
                hi = fmax(hi, y[i]);
            }
        names[n] = decay_label(st, w);
        colors[n] = th->series[w % 8];
        styles[n] = 0;
        which[n] = w;
        n++;
    }
    /* A curve equal to one before it (sinusoidal and RoPE with q = k = 1 are the same function
     * of p0 - p) is drawn dashed over it, and the legend says which it equals, so no entry
     * names a curve that cannot be seen. */
    for (int i = 1; i < n; i++)
        for (int j = 0; j < i; j++) {
            if (styles[j]) continue;
            const double *yi = ys + (size_t)i * L, *yj = ys + (size_t)j * L;
            int same = 1;
            for (int k = 0; k < L && same; k++)
                same = (!isfinite(yi[k]) && !isfinite(yj[k])) || fabs(yi[k] - yj[k]) <= 1e-6;
            if (!same) continue;
            styles[i] = SCENE_DASHED;
            snprintf(named[i], sizeof named[i], "%s = %s", curve_label[which[i]],
                     curve_label[which[j]]);
            names[i] = named[i];
            break;
        }
    double pad = (hi - lo) * 0.05;
    fig_axes a = fig_axes_draw(s, t, th, r, 0, L - 1 > 0 ? L - 1 : 1, lo - pad, hi + pad,
                               "key position p", "score / score at p0", FIG_GRID);
    scene_line(s, a.area.x, fig_y(&a, 0), a.area.x + a.area.w, fig_y(&a, 0), th->grid, 0,
               SCENE_RULE);
    double lw = t->hairline > 0 ? t->hairline : 1;
    for (int i = 0; i < n; i++)
        fig_curve(s, &a, x, ys + (size_t)i * L, (size_t)L, colors[i],
                  t->cells ? 0 : lw * (styles[i] ? 2.2 : 1.8), styles[i]);
    fig_vmark(s, t, th, &a, p0, "p0");
    fig_legend_styled(s, t, th, &a, names, colors, styles, n, 0);
    c->main = a;
    c->has_main = 1;
    c->main_rows = 1;
    c->main_cols = L;
    if (st->cursor_on) {
        int pc = st->cur_c < L ? st->cur_c : L - 1;
        scene_line(s, fig_x(&a, pc), a.area.y, fig_x(&a, pc), a.area.y + a.area.h, th->accent, 0,
                   SCENE_DASHED);
        size_t u = (size_t)snprintf(c->readout, sizeof c->readout, "p %d  p0-p %d:", pc, p0 - pc);
        for (int i = 0; i < n && u < sizeof c->readout; i++) {
            double v = ys[(size_t)i * L + pc];
            if (isfinite(v))
                u += (size_t)snprintf(c->readout + u, sizeof c->readout - u, "  %s %+.4f",
                                      curve_label[which[i]], v);
            else /* ALiBi is causal: a key after p0 is masked, not a number */
                u += (size_t)snprintf(c->readout + u, sizeof c->readout - u, "  %s masked (p > p0)",
                                      curve_label[which[i]]);
        }
    }
    free(x);
    return 0;
}

static int decay_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    (void)c;
    int L = st->p.len, n = 0;
    for (int w = 0; w < APP_CURVE_COUNT; w++) n += !!(st->curves & (1u << w));
    if (app_data_alloc(out, 2, (size_t)n + 1, (size_t)L, 0, err, errlen) < 0) return -1;
    for (int i = 0; i < L; i++) out->data[i] = i;
    size_t used =
        (size_t)snprintf(out->what, sizeof out->what,
                         "(1+curves, len): row 0 = p; NaN = masked (causal ALiBi, p > p0); rows:");
    int row = 1;
    for (int w = 0; w < APP_CURVE_COUNT; w++) {
        if (!(st->curves & (1u << w))) continue;
        const double *cy = decay_curve_cached(c, st, w, err, errlen);
        if (!cy) {
            app_data_free(out);
            return -1;
        }
        memcpy(out->data + (size_t)row * L, cy, sizeof *cy * (size_t)L);
        if (used < sizeof out->what)
            used += (size_t)snprintf(out->what + used, sizeof out->what - used, " %s%s",
                                     decay_label(st, w), row < n ? "," : "");
        row++;
    }
    out->f64 = 1;
    return 0;
}

const app_view app_view_decay = {
    .name = "decay",
    .description = "dot-product decay: how p0 sees every position, several encodings overlaid",
    .validate = decay_validate,
    .build = decay_build,
    .data = decay_data,
    .options = "pe dim len base heads slope-ratio alibi xpos-scale xpos-zeta std seed pos curves",
    .record = "pos", /* p0 walking along the positions */
};
