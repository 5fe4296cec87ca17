/* resolution.c: the resolution probe. For positions p = 0 .. T, how many RoPE pairs turn by more
 * than --min-angle radians between p and p + D (--probe-d), with the angles computed in float32
 * as a model does (pe_rope_resolution); one curve per context-extension method, each with
 * st->p.scaling's factor, L0 and knobs. Dividing theta by f (linear, the interpolated bands of
 * YaRN and llama3) or raising the base (NTK) leaves fewer pairs that can tell neighbours apart;
 * dynamic NTK loses them as the sequence grows past L0; at very large p float32 angles lose the
 * digits that separate p from p + D. The x axis is log-scaled (p = 0 is in the data only). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rope_ext.h"
#include "view_list.h"

#define ALL_METHODS ((1u << APP_EXT_METHODS) - 1)

static int res_validate(const app_state *st, char *err, size_t errlen)
{
    if (app_ext_validate(st, ALL_METHODS, err, errlen) < 0) return -1;
    if (!(st->min_angle > 0) || st->min_angle > APP_PI + 1e-6) {
        snprintf(err, errlen, "--min-angle %g: the threshold must be in (0, 3.14159] radians",
                 st->min_angle);
        return -1;
    }
    if (st->probe_d < 1 || st->probe_d > PE_MAX_LEN) {
        snprintf(err, errlen, "--probe-d %d: the probe distance must be 1..%d", st->probe_d,
                 PE_MAX_LEN);
        return -1;
    }
    return 0;
}

/* p samples and the counts (methods, n). Returns n or -1. */
static int res_compute(const app_state *st, double **p_out, double **ys_out, char *err,
                       size_t errlen)
{
    double target = app_ext_target(st);
    double *p = malloc(sizeof *p * APP_EXT_SAMPLES * (1 + APP_EXT_METHODS));
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int n = app_ext_samples(target, APP_EXT_SAMPLES, p);
    double *ys = p + APP_EXT_SAMPLES;
    for (int m = 0; m < APP_EXT_METHODS; m++) {
        pe_params q = app_ext_params(st, m, target);
        for (int i = 0; i < n; i++) {
            int c = pe_rope_resolution(&q, (int)p[i], st->probe_d, st->min_angle);
            if (c < 0) {
                snprintf(err, errlen,
                         "--probe-d %d at position %.0f (%s): the probe is out of range",
                         st->probe_d, p[i], app_ext_method_label(m));
                free(p);
                return -1;
            }
            ys[(size_t)m * n + i] = c;
        }
    }
    *p_out = p;
    *ys_out = ys;
    return n;
}

static int res_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                     char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    double *p, *ys;
    int n = res_compute(st, &p, &ys, err, errlen);
    if (n < 0) return -1;
    const pe_rope_scaling *sc = &st->p.scaling;
    double T = app_ext_target(st), L0 = sc->original_ctx;
    int np = pe_rope_rotary_dim(&st->p) / 2;
    char l0s[32], ts[32];
    app_ext_len_label(L0, l0s, sizeof l0s);
    app_ext_len_label(T, ts, sizeof ts);
    char title[200], sub[320];
    snprintf(title, sizeof title,
             "Resolution: pairs that turn by more than %g rad between p and p+%d", st->min_angle,
             st->probe_d);
    app_subtitle(st, NULL, APP_SUB_DIM | APP_SUB_BASE, sub, sizeof sub);
    size_t u = strlen(sub);
#define SUB(...)                                                                                   \
    do {                                                                                           \
        if (u < sizeof sub) u += (size_t)snprintf(sub + u, sizeof sub - u, __VA_ARGS__);           \
    } while (0)
    if (st->p.rotary_frac < 1) SUB("  rotary %g", st->p.rotary_frac);
    SUB("  %d pairs  f=%g  L0=%s  T=%s  float32 angles  (:probe-d, :min-angle)", np, sc->factor,
        l0s, ts);
    if (sc->factor == 1) SUB("  f=1: all equal; try :factor 4");
#undef SUB
    fig_rect area = app_frame(s, t, th, title, sub);

    double hi = 1;
    for (size_t i = 0; i < (size_t)APP_EXT_METHODS * n; i++) hi = fmax(hi, ys[i]);
    hi = fmin(np, ceil(hi * 1.15 + 0.5));
    fig_axes a = fig_axes_draw(s, t, th, area, 1, T, 0, hi, "position p (log scale)",
                               "pairs that tell p from p+D", FIG_GRID | FIG_XLOG);
    char names[APP_EXT_METHODS][64];
    const char *nm[APP_EXT_METHODS];
    uint32_t colors[APP_EXT_METHODS];
    double lw = t->cells ? 0 : fmax(1.2, t->hairline * 1.5);
    /* flat curves often coincide: the earlier methods are drawn wider underneath so each one
     * still shows as a stripe, and the legend gives the counts at p = 1 and p = T */
    for (int m = 0; m < APP_EXT_METHODS; m++) {
        const double *y = ys + (size_t)m * n;
        colors[m] = th->series[m];
        snprintf(names[m], sizeof names[m], "%s  %.0f -> %.0f", app_ext_method_label(m),
                 y[n > 1 ? 1 : 0], y[n - 1]);
        nm[m] = names[m];
        fig_curve(s, &a, p, y, (size_t)n, colors[m],
                  t->cells ? 0 : lw * (1 + 1.1 * (APP_EXT_METHODS - 1 - m)), 0);
    }
    char lab[48];
    snprintf(lab, sizeof lab, "L0 = %s", l0s);
    fig_vmark(s, t, th, &a, L0, lab);
    fig_legend(s, t, th, &a, nm, colors, APP_EXT_METHODS, 1);

    c->main = a;
    c->has_main = 1;
    c->main_rows = 1;
    c->main_cols = n;
    if (st->cursor_on) {
        int i = st->cur_c < n ? (st->cur_c < 1 ? 1 : st->cur_c) : n - 1;
        double fx = fig_x(&a, p[i]);
        if (t->cells) fx = floor(fx) + 0.5;
        scene_line(s, fx, a.area.y, fx, a.area.y + a.area.h, th->accent, 0, SCENE_DASHED);
        size_t w = (size_t)snprintf(c->readout, sizeof c->readout, "p %.0f:", p[i]);
        for (int m = 0; m < APP_EXT_METHODS && w < sizeof c->readout; m++)
            w += (size_t)snprintf(c->readout + w, sizeof c->readout - w, "  %s %.0f",
                                  app_ext_method_label(m), ys[(size_t)m * n + i]);
    }
    free(p);
    return 0;
}

static int res_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    (void)c;
    double *p, *ys;
    int n = res_compute(st, &p, &ys, err, errlen);
    if (n < 0) return -1;
    if (app_data_alloc(out, 2, 1 + APP_EXT_METHODS, (size_t)n, 0, err, errlen) < 0) {
        free(p);
        return -1;
    }
    memcpy(out->data, p, sizeof *p * (size_t)n);
    memcpy(out->data + n, ys, sizeof *ys * (size_t)n * APP_EXT_METHODS);
    out->f64 = 1;
    snprintf(out->what, sizeof out->what,
             "(7, samples): row 0 = position p; rows none,linear,ntk,dynamic,yarn,llama3 = pairs "
             "turning more than %g rad between p and p+%d",
             st->min_angle, st->probe_d);
    free(p);
    return 0;
}

const app_view app_view_resolution = {
    "resolution",
    "resolution probe: how many RoPE pairs tell p from p+D, per extension method",
    res_validate,
    res_build,
    res_data,
};
