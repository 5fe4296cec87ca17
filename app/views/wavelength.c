/* wavelength.c: the wavelength 2 pi / theta_k of every frequency pair on a log axis against the
 * context length L. Pairs above the line never complete a turn within the context: they can only
 * tell positions apart by a fraction of a turn (they act like a slowly varying "absolute" signal,
 * and they are what context-extension methods stretch). Sinusoidal frequencies for table
 * encodings, RoPE's (after scaling) for rotary ones. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

static int use_rope(const app_state *st)
{
    return st->enc && (st->enc->acts & PE_ACTS_QK);
}

/* what the figure draws: RoPE's frequencies, else the sinusoid's (app_view.drawn) */
static const pe_encoding *wl_drawn(const app_state *st)
{
    return pe_encoding_find(use_rope(st) ? st->enc->name : "sinusoidal");
}

static int wl_validate(const app_state *st, char *err, size_t errlen)
{
    return app_validate_untabled(use_rope(st) ? "rope" : "sinusoidal", st, err, errlen);
}

static int wl_compute(const app_state *st, double **out, int *np, char *err, size_t errlen)
{
    int rope = use_rope(st);
    int n = rope ? pe_rope_rotary_dim(&st->p) / 2 : st->p.dim / 2;
    double *w = malloc(sizeof *w * (size_t)(n > 0 ? n : 1));
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (pe_wavelengths(&st->p, rope, w, err, errlen) < 0) {
        free(w);
        return -1;
    }
    *out = w;
    *np = n;
    return 0;
}

static int wl_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                    char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    double *w;
    int n;
    if (wl_compute(st, &w, &n, err, errlen) < 0) return -1;
    int rope = use_rope(st);
    int L = st->p.len, over = 0;
    for (int k = 0; k < n; k++) over += w[k] > L;
    char title[160], sub[256], ls[48];
    fig_num(L, 15, ls, sizeof ls); /* L = 10,000,000, not printf's 10000000 (issue 26) */
    snprintf(title, sizeof title,
             "%s wavelengths 2\xcf\x80/" APP_THETA_K ": %d of %d pairs never turn once in L=%s",
             rope ? "RoPE" : "Sinusoid", over, n, ls);
    app_subtitle(st, sub, sizeof sub);
    fig_rect r = app_frame(s, t, th, title, sub);

    double lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < n; k++) {
        lo = fmin(lo, w[k]);
        hi = fmax(hi, w[k]);
    }
    lo = fmin(lo, L);
    hi = fmax(hi, L);
    double y0 = pow(10, floor(log10(lo))), y1 = pow(10, ceil(log10(hi)));
    if (y1 <= y0) y1 = y0 * 10;
    fig_axes a = fig_axes_draw(s, t, th, r, -0.5, n - 0.5, y0, y1, "frequency pair k",
                               "wavelength (positions)", FIG_GRID | FIG_YLOG);
    double *x = malloc(sizeof *x * (size_t)n * 2);
    if (!x) {
        free(w);
        return -1;
    }
    double *y = x + n;
    for (int k = 0; k < n; k++) {
        x[k] = k;
        y[k] = w[k];
    }
    fig_curve(s, &a, x, y, (size_t)n, th->series[0], t->cells ? 0 : 2, 0);
    /* mark each pair: filled below L (completes turns), hollow above */
    double rad = t->cells ? 0.6 : fmax(2.5, t->text_h * 0.18);
    if (n <= 256)
        for (int k = 0; k < n; k++)
            scene_circle(s, fig_x(&a, k), fig_y(&a, w[k]), rad,
                         w[k] > L ? th->series[1] : th->series[0], 0, w[k] > L ? 0 : SCENE_FILL);
    /* the two marker styles named (issue 26: the filled and hollow circles had no legend), in
     * the top-left corner, which the rising curve leaves free */
    if (!t->cells && n <= 256) {
        const char *names[2] = {"turns within L", "never turns in L"};
        int has[2] = {over<n, over> 0};
        double size = 0.8, lh = t->text_h * size * 1.15;
        double lx = a.area.x + t->char_w * 0.8, ly = a.area.y + t->char_w * 0.8 + lh / 2;
        for (int e = 0; e < 2; e++) {
            if (!has[e]) continue;
            scene_circle(s, lx + rad, ly, rad, e ? th->series[1] : th->series[0], 0,
                         e ? 0 : SCENE_FILL);
            scene_text(s, lx + rad * 2 + t->char_w * 0.6, ly, names[e], size,
                       SCENE_LEFT | SCENE_MIDDLE, th->fg, 0);
            ly += lh;
        }
    }
    char lab[64];
    snprintf(lab, sizeof lab, "context L = %s", ls);
    fig_hmark(s, t, th, &a, L, lab);
    c->main = a;
    fig_mark_main(s, a.area, "plot");
    c->has_main = 1;
    c->main_rows = 1;
    c->main_cols = n;
    if (st->cursor_on) {
        int k = st->cur_c < n ? st->cur_c : n - 1;
        /* the cursor's ink over a halo, as every data cursor (the accent is a series colour) */
        double cx = fig_x(&a, k), cy = fig_y(&a, w[k]);
        if (!t->cells) scene_circle(s, cx, cy, rad * 2.2, th->bg, t->hairline * 4, 0);
        scene_circle(s, cx, cy, rad * 2.2, th->fg, t->cells ? 0 : t->hairline * 1.5, 0);
        snprintf(c->readout, sizeof c->readout,
                 "pair %d  theta %.6g  wavelength %.6g positions (%.3g turns in L)", k,
                 2 * APP_PI / w[k], w[k], L / w[k]);
    }
    free(x);
    free(w);
    return 0;
}

static int wl_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    (void)c;
    double *w;
    int n;
    if (wl_compute(st, &w, &n, err, errlen) < 0) return -1;
    if (app_data_alloc(out, 2, (size_t)n, 3, 0, err, errlen) < 0) {
        free(w);
        return -1;
    }
    for (int k = 0; k < n; k++) {
        out->data[k * 3] = k;
        out->data[k * 3 + 1] = 2 * APP_PI / w[k];
        out->data[k * 3 + 2] = w[k];
    }
    out->f64 = 1;
    snprintf(out->what, sizeof out->what, "(pairs, 3): k, theta_k, wavelength 2pi/theta_k (%s)",
             use_rope(st) ? "RoPE" : "sinusoidal");
    free(w);
    return 0;
}

/* {longest} and {shortest}: the wavelengths 2 pi / theta_k of the slowest and the fastest RoPE
 * pair under the state's parameters */
static int value_wavelength(const app_state *st, int longest, char *out, size_t n)
{
    int np;
    double attn, *inv = app_rope_inv_freqs(st, &np, &attn);
    if (!inv) {
        snprintf(out, n, "?");
        return 0;
    }
    double lo = inv[0], hi = inv[0];
    for (int i = 1; i < np; i++) {
        lo = fmin(lo, inv[i]);
        hi = fmax(hi, inv[i]);
    }
    free(inv);
    double wl = 2 * APP_PI / (longest ? lo : hi);
    /* for people, as the figures write numbers: 6.28, 628, 54,410 (whole positions from 100) */
    fig_num(wl < 100 ? wl : round(wl), wl < 100 ? 3 : 15, out, n);
    return 0;
}
static int value_longest(const app_state *st, const char *args, char *out, size_t n, char *err,
                         size_t errlen)
{
    (void)args, (void)err, (void)errlen;
    return value_wavelength(st, 1, out, n);
}
static int value_shortest(const app_state *st, const char *args, char *out, size_t n, char *err,
                          size_t errlen)
{
    (void)args, (void)err, (void)errlen;
    return value_wavelength(st, 0, out, n);
}

static const app_view_value wl_values[] = {
    {"longest", NULL, value_longest},
    {"shortest", NULL, value_shortest},
    {NULL, NULL, NULL},
};

const app_view app_view_wavelength = {
    .name = "wavelength",
    .description = "wavelength of every frequency pair against the context length",
    .validate = wl_validate,
    .build = wl_build,
    .data = wl_data,
    .options = "pe dim len base layout freq rotary-frac scaling factor orig-ctx seq-len beta-fast "
               "beta-slow yarn-truncate low-freq-factor high-freq-factor",
    /* a wavelength is one pair's: the order of the dimensions (--layout) does not change it */
    .not_in_subtitle = "layout",
    .drawn = wl_drawn,
    .values = wl_values,
};
