/* xpos.c: xPos (Sun et al. 2022, reference section 6). RoPE's pairs all keep their length, so
 * the score of all-ones q and k oscillates instead of fading; xPos scales the query's pair k by
 * zeta_k^(m/s) and the key's by zeta_k^(-n/s), zeta_k = (2k + 0.4d) / (1.4d), s = the scale
 * base, so pair k of the score decays as zeta_k^((m-n)/s): the fast pairs (small zeta) fade
 * first. Left, that factor against the distance r = m - n for a few evenly spaced pairs; right,
 * the all-ones score <q_m, k_n> / <q_0, k_0> with plain RoPE and with xPos, with the mean
 * factor over pairs (the envelope xPos puts on the score). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rope_ext.h"
#include "views.h"

#define PICKS 5

static int xpv_validate(const app_state *st, char *err, size_t errlen)
{
    /* the values: the figure takes two rows per pixel (issue 25: a 10M context loads); the
     * data's (L, pairs + 4) rows meet the memory budget when they are made */
    return pe_validate_values(pe_encoding_find("xpos"), &st->p, err, errlen) < 0 ? -1 : 0;
}

/* The factors and both scores are stepped from r - 1 to r (a rotation per pair for cos and sin,
 * a multiplication by zeta_k^(1/s) for the factor) and computed afresh every ANCHOR rows, so the
 * rounding of the steps cannot pile up: they stay within ~1e-13 of cos and pe_xpos_decay (as the
 * decay view's sweeps). Every 32 rows the anchors' cos, sin and pow of every pair were most of a
 * frame after a change at d 4096 (issue 27). */
#define ANCHOR 256

/* The pair shown as pick i of picks on the left (fast to slow). */
static int xpv_pick(int i, int picks, int np)
{
    return picks > 1 ? (int)lround((double)i * (np - 1) / (picks - 1)) : 0;
}

/* Rows r = 0, stride, 2 stride, .. < L of: r, the factor of every pair (all) or of the picked
 * pairs only (the figure), RoPE score, xPos score, mean factor; cached under the inputs it
 * depends on. With q = k = 1 (the key at n = 0, which xPos leaves at its length) each rotated
 * pair adds 2 attn^2 cos(r theta_k) to <q_r, k_0>, times zeta_k^(r/s) under xPos, and each of
 * the d - rotary_dim other dimensions adds 1; both scores are divided by their value at r = 0.
 * The figure asks for two rows per pixel, so a change at L 8192, d 4096 costs the pixels times
 * the pairs, not L times the pairs. NULL with err on failure. */
static const double *xpv_compute(app_view_ctx *c, const app_state *st, int stride, int all,
                                 int slot, int maxrows, int *rows, int *cols, char *err,
                                 size_t errlen)
{
    const pe_params *p = &st->p;
    int L = p->len, np = pe_rope_rotary_dim(p) / 2, picks = np < PICKS ? np : PICKS;
    int nf = all ? np : picks, nc = nf + 4, nr = (L - 1) / stride + 1;
    if (maxrows > 0 && nr > maxrows) nr = maxrows;
    struct {
        int dim, len, pairing, stride, all, nr, zeta_rotary;
        double base, rotary_frac, scale, sc[APP_EXT_KEY_FIELDS];
    } key;
    memset(&key, 0, sizeof key);
    key.dim = p->dim;
    key.len = p->len;
    key.pairing = p->pairing;
    key.stride = stride;
    key.all = all;
    key.nr = nr;
    key.zeta_rotary = p->xpos_zeta_rotary;
    key.base = p->base;
    key.rotary_frac = p->rotary_frac;
    key.scale = p->xpos_scale_base;
    app_ext_scaling_key(&p->scaling, key.sc);
    *cols = nc;
    *rows = nr;
    double *tab = app_cache_get(c, slot, &key, sizeof key);
    if (tab) return tab;
    int nth;
    double attn;
    double *th = app_ext_inv_freq(p, &nth, &attn, err, errlen);
    if (!th) return NULL;
    tab = app_cache_put(c, slot, &key, sizeof key, sizeof *tab * (size_t)nr * (size_t)nc);
    double *w = malloc(sizeof *w * (size_t)np * 6);
    int *fk = malloc(sizeof *fk * (size_t)nf);
    if (!tab || !w || !fk) {
        if (tab) app_cache_put(c, slot, "", 0, 0);
        free(w);
        free(fk);
        free(th);
        snprintf(err, errlen, "--len %d x --dim %d: %s", L, p->dim, app_cache_error());
        return NULL;
    }
    for (int i = 0; i < nf; i++) fk[i] = all ? i : xpv_pick(i, picks, np);
    /* per pair: cos and sin of a step's angle, the factor's step, the running cos, sin, factor */
    double *cw = w, *sw = cw + np, *gw = sw + np, *cr = gw + np, *sr = cr + np, *gr = sr + np;
    for (int k = 0; k < np; k++) {
        cw[k] = cos(stride * th[k]);
        sw[k] = sin(stride * th[k]);
        gw[k] = pow(pe_xpos_zeta(p, k), stride / p->xpos_scale_base);
    }
    double a2 = 2 * attn * attn, rest = p->dim - 2.0 * np, s0 = a2 * np + rest;
    if (s0 == 0) s0 = 1;
    for (int j = 0; j < nr; j++) {
        double r = (double)j * stride;
        if (j % ANCHOR == 0) {
            for (int k = 0; k < np; k++) {
                cr[k] = cos(r * th[k]);
                sr[k] = sin(r * th[k]);
                gr[k] = pe_xpos_decay(p, k, r);
            }
        } else {
            for (int k = 0; k < np; k++) {
                double c0 = cr[k], s1 = sr[k];
                cr[k] = c0 * cw[k] - s1 * sw[k];
                sr[k] = s1 * cw[k] + c0 * sw[k];
                gr[k] *= gw[k];
            }
        }
        double *row = tab + (size_t)j * nc, rope = 0, xpos = 0, mean = 0;
        row[0] = r;
        for (int k = 0; k < np; k++) {
            rope += cr[k];
            xpos += gr[k] * cr[k];
            mean += gr[k];
        }
        for (int i = 0; i < nf; i++) row[1 + i] = gr[fk[i]];
        row[nf + 1] = (a2 * rope + rest) / s0;
        row[nf + 2] = (a2 * xpos + rest) / s0;
        row[nf + 3] = mean / np;
    }
    free(fk);
    free(w);
    free(th);
    return tab;
}

static int xpv_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                     char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    const pe_params *p = &st->p;
    int L = p->len, np = pe_rope_rotary_dim(p) / 2;
    double sb = p->xpos_scale_base;
    char title[200], sub[384], z0[48], z1[48], sbs[48];
    fig_num(sb, 4, sbs, sizeof sbs);
    fig_num(pe_xpos_zeta(p, 0), 4, z0, sizeof z0);
    fig_num(pe_xpos_zeta(p, np - 1), 4, z1, sizeof z1);
    snprintf(title, sizeof title, "xPos: pair k of the score decays as \xce\xb6\xe2\x82\x96^(r/%s)",
             sbs);
    app_subtitle(st, sub, sizeof sub);
    size_t u = strlen(sub);
    if (2 * np < p->dim) /* partial rotary: the reference implementations disagree on d */
    {
        char hint[64] = "";
        if (!st->figure)
            snprintf(hint, sizeof hint, "; %sxpos-zeta %s", app_opt_prefix(st),
                     p->xpos_zeta_rotary ? "full" : "rotary");
        snprintf(sub + u, sizeof sub - u,
                 "  " APP_ZETA "\xe2\x82\x96 over D=%d (%s%s): %s \xe2\x80\x93 %s  scale base %s",
                 pe_xpos_zeta_dim(p),
                 p->xpos_zeta_rotary ? "rotary dim, lucidrains" : "full d, torchscale", hint, z0,
                 z1, sbs);
    } else {
        char hint[48] = "";
        if (!st->figure) snprintf(hint, sizeof hint, " (%sxpos-scale)", app_opt_prefix(st));
        snprintf(sub + u, sizeof sub - u,
                 "  " APP_ZETA
                 "\xe2\x82\x96 = (2k + 0.4d)/(1.4d): %s \xe2\x80\x93 %s  scale base %s%s",
                 z0, z1, sbs, hint);
    }
    fig_rect r = app_frame(s, t, th, title, sub);
    /* side by side, or (a tall figure) the factors above the score, the main plot */
    fig_rect left, right;
    fig_split_two(t, r, 1.4, 0.5, 0.38, t->cells ? 4 : t->text_h, &left, &right);
    /* two rows per pixel (per braille dot across a cell) of the wider plot; in the window
     * counted on the canvas (each of the two plots side by side is under half of it): the
     * projector zoom lays the view out again at smaller text sizes (views.c), and each plot
     * width gave another stride and another table (issue 27); with the canvas's the later
     * layouts hit the cache. A terminal is laid out once. */
    double per = t->cells ? 2 * ceil(fmax(left.w, right.w)) : ceil(t->width);
    int stride = (int)fmax(1, ceil((L - 1) / fmax(1, per)));
    /* an exported figure: every position, up to about 2^28 pair steps */
    if (c->full_res) stride = (int)fmax(1, ceil((double)L * (np > 0 ? np : 1) / 268435456.0));
    int nr, nc;
    const double *tab = xpv_compute(c, st, stride, 0, 0, 0, &nr, &nc, err, errlen);
    if (!tab) return -1;
    int nf = nc - 4;
    double *x = malloc(sizeof *x * (size_t)nr * 2);
    if (!x) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double *y = x + nr;
    for (int i = 0; i < nr; i++) x[i] = tab[(size_t)i * nc];
    double xmax = L > 1 ? L - 1 : 1;
    double lw = t->cells ? 0 : fmax(1.5, t->hairline * 2);

    /* left: a few pairs' factors, fast to slow */
    int picks = np < PICKS ? np : PICKS;
    fig_axes a = fig_axes_draw(s, t, th, left, 0, xmax, 0, 1.04, "distance r = m \xe2\x88\x92 n",
                               "factor \xce\xb6\xe2\x82\x96^(r/scale)", FIG_GRID);
    char names[PICKS][80], shorts[PICKS][16];
    const char *nm[PICKS], *sn[PICKS];
    uint32_t colors[PICKS];
    for (int i = 0; i < picks; i++) {
        int k = xpv_pick(i, picks, np);
        for (int rr = 0; rr < nr; rr++) y[rr] = tab[(size_t)rr * nc + 1 + i];
        colors[i] = th->series[i];
        char z[48];
        fig_num(pe_xpos_zeta(p, k), 3, z, sizeof z);
        snprintf(names[i], sizeof names[i], "k=%d  " APP_ZETA "=%s", k, z);
        snprintf(shorts[i], sizeof shorts[i], "k=%d", k);
        nm[i] = names[i];
        sn[i] = shorts[i];
        fig_curve(s, &a, x, y, (size_t)nr, colors[i], lw, 0);
    }
    /* a narrow plot (a paper column) names the pairs by k alone: the subtitle gives the range
     * of their zeta */
    if (!fig_legend_fits(t, &a, nm, picks))
        for (int i = 0; i < picks; i++) nm[i] = sn[i];
    char lab[64];
    snprintf(lab, sizeof lab, "r = %s", sbs);
    if (sb <= xmax) fig_vmark(s, t, th, &a, sb, lab);
    fig_legend(s, t, th, &a, nm, colors, picks, 1);

    /* right: the all-ones score, RoPE vs xPos, and the envelope */
    double lo = 0, hi = 1;
    for (int rr = 0; rr < nr; rr++)
        for (int j = 1; j <= 3; j++) {
            double v = tab[(size_t)rr * nc + nf + j];
            lo = fmin(lo, v);
            hi = fmax(hi, v);
        }
    double pad = (hi - lo) * 0.04;
    fig_axes b =
        fig_axes_draw(s, t, th, right, 0, xmax, lo - pad, hi + pad, "distance r = m \xe2\x88\x92 n",
                      "score / score at r = 0 (q = k = 1)", FIG_GRID);
    if (lo < 0)
        scene_line(s, b.area.x, fig_y(&b, 0), b.area.x + b.area.w, fig_y(&b, 0), th->muted, 0,
                   SCENE_RULE);
    static const char *const snames[3] = {"RoPE", "xPos", "xPos mean factor"};
    uint32_t scol[3] = {th->series[0], th->series[1], th->muted};
    for (int j = 0; j < 3; j++) {
        for (int rr = 0; rr < nr; rr++) y[rr] = tab[(size_t)rr * nc + nf + 1 + j];
        fig_curve(s, &b, x, y, (size_t)nr, scol[j], lw, j == 2 ? SCENE_DASHED : 0);
    }
    static const char *const sshort[3] = {"RoPE", "xPos", "mean"};
    fig_legend(s, t, th, &b, fig_legend_fits(t, &b, snames, 3) ? snames : sshort, scol, 3, 0);

    c->main = b;
    fig_mark_main(s, b.area, "plot");
    c->has_main = 1;
    c->main_rows = 1;
    c->main_cols = L;
    if (st->cursor_on) {
        int rr = st->cur_c < L ? (st->cur_c < 0 ? 0 : st->cur_c) : L - 1;
        const fig_axes *ax[2] = {&a, &b};
        for (int i = 0; i < 2; i++) {
            double fx = fig_x(ax[i], rr);
            if (t->cells) fx = floor(fx) + 0.5;
            app_cursor_line(s, t, th, fx, ax[i]->area.y, fx, ax[i]->area.y + ax[i]->area.h);
        }
        /* the exact row at rr (the figure is a sample): one step of rr */
        int r1, c1;
        const double *one = xpv_compute(c, st, rr > 0 ? rr : 1, 0, 1, 2, &r1, &c1, err, errlen);
        if (!one) {
            free(x);
            return -1;
        }
        const double *row = one + (rr > 0 ? (size_t)c1 : 0);
        (void)r1;
        snprintf(c->readout, sizeof c->readout,
                 "r %d  RoPE %+.4f  xPos %+.4f  factors: k=0 %.4f .. k=%d %.4f  mean %.4f", rr,
                 row[nf + 1], row[nf + 2], row[1], np - 1, row[nf], row[nf + 3]);
    }
    free(x);
    return 0;
}

static int xpv_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    int nr, nc;
    const double *tab = xpv_compute(c, st, 1, 1, 2, 0, &nr, &nc, err, errlen);
    if (!tab) return -1;
    size_t L = (size_t)nr;
    if (app_data_alloc(out, 2, L, (size_t)nc, 0, err, errlen) < 0) return -1;
    memcpy(out->data, tab, sizeof *tab * L * (size_t)nc);
    out->f64 = 1;
    snprintf(out->what, sizeof out->what,
             "(len, pairs+4): r; zeta_k^(r/scale) for k = 0..%d; all-ones score / score at 0 "
             "with RoPE, with xPos; mean factor over pairs",
             nc - 5);
    return 0;
}

const app_view app_view_xpos = {
    .name = "xpos",
    .description = "xPos per-pair decay factors and the all-ones score with and without them",
    .validate = xpv_validate,
    .build = xpv_build,
    .data = xpv_data,
    .options =
        "dim len base pairing rotary-frac scaling factor orig-ctx seq-len attn-factor xpos-scale "
        "xpos-zeta",
    /* pair k decays by its own zeta_k whichever dimensions form it */
    .not_in_subtitle = "pairing",
};
