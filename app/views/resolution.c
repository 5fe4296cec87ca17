/* resolution.c: the resolution probe. For positions p = 0 .. T, how many RoPE pairs turn by more
 * than --min-angle radians between p and p + D (--probe-d), with the angles computed in float32
 * as a model does (pe_rope_resolution); one curve per context-extension method, each with
 * st->p.scaling's factor, L0 and knobs. Dividing theta by f (linear, the interpolated bands of
 * YaRN and llama3) or raising the base (NTK) leaves fewer pairs that can tell neighbours apart;
 * dynamic NTK loses them as the sequence grows past L0; at very large p float32 angles lose the
 * digits that separate p from p + D. The x axis is log-scaled (p = 0 is in the data only). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "rope_ext.h"
#include "views.h"

static int res_validate(const app_state *st, char *err, size_t errlen)
{
    int ms[APP_EXT_METHODS];
    unsigned mask;
    app_ext_methods(st, ms, &mask);
    if (app_ext_validate(st, mask, err, errlen) < 0) return -1;
    if (!(st->resolution.min_angle > 0) || st->resolution.min_angle > APP_PI + 1e-6) {
        snprintf(err, errlen, "--min-angle %g: the threshold must be in (0, 3.14159] radians",
                 st->resolution.min_angle);
        return -1;
    }
    if (st->resolution.probe_d < 1 || st->resolution.probe_d > PE_MAX_LEN) {
        snprintf(err, errlen, "--probe-d %d: the probe distance must be 1..%d",
                 st->resolution.probe_d, PE_MAX_LEN);
        return -1;
    }
    return 0;
}

/* The positions and every method's counts. */
typedef struct res_result {
    int n;
    int nm, ms[APP_EXT_METHODS]; /* the methods drawn (app_ext_methods), rows in that order */
    double p[APP_EXT_SAMPLES];
    double y[APP_EXT_METHODS][APP_EXT_SAMPLES]; /* by position in ms */
} res_result;

/* The counts of pe_rope_resolution (through pe_rope_resolution_theta, which takes the
 * frequencies computed once), cached under the inputs they depend on. NULL with err. */
static const res_result *res_compute(app_view_ctx *c, const app_state *st, char *err, size_t errlen)
{
    struct {
        int dim, probe_d;
        double base, rotary_frac, target, min_angle;
        double sc[APP_EXT_KEY_FIELDS];
    } key;
    memset(&key, 0, sizeof key);
    key.dim = st->p.dim;
    key.probe_d = st->resolution.probe_d;
    key.base = st->p.base;
    key.rotary_frac = st->p.rotary_frac;
    key.target = app_ext_target(st);
    key.min_angle = st->resolution.min_angle;
    app_ext_scaling_key(&st->p.scaling, key.sc);
    key.sc[0] = 0; /* every method is drawn */
    /* dynamic NTK: seq_len = max(--seq-len, p + D + 1), so --seq-len stays in the key */
    res_result *res = app_cache_get(c, 0, &key, sizeof key);
    if (res) return res;
    res = app_cache_put(c, 0, &key, sizeof key, sizeof *res);
    if (!res) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    int n = res->n = app_ext_samples(key.target, APP_EXT_SAMPLES, res->p);
    res->nm = app_ext_methods(st, res->ms, NULL);
    for (int mi = 0; mi < res->nm; mi++) {
        int m = res->ms[mi];
        /* dynamic NTK and LongRoPE depend on the sequence length */
        int by_len = m == PE_SCALING_DYNAMIC || m == PE_SCALING_LONGROPE;
        pe_params q = app_ext_params(st, m, key.target);
        /* the frequencies once per method; dynamic NTK's change with seq_len = p + D + 1 (the
         * shortest sequence holding both positions, or --seq-len when longer), but only past L0
         * (below it HF returns to the original frequencies), so they are recomputed only there */
        int np = 0;
        double *th = NULL;
        long have_len = -1; /* the seq_len th was computed for (dynamic) */
        for (int i = 0; i < n; i++) {
            int pos = (int)res->p[i];
            long len = (long)pos + st->resolution.probe_d + 1;
            if (len < st->p.scaling.seq_len) len = st->p.scaling.seq_len;
            if (len < q.scaling.original_ctx) len = q.scaling.original_ctx;
            if (!th || (by_len && len != have_len)) {
                if (by_len) q.scaling.seq_len = len > INT_MAX ? INT_MAX : (int)len;
                free(th);
                th = app_ext_inv_freq(&q, &np, NULL, err, errlen);
                if (!th) {
                    app_cache_put(c, 0, "", 0, 0);
                    return NULL;
                }
                have_len = len;
            }
            int cnt = pe_rope_resolution_theta(th, np, pos, st->resolution.probe_d,
                                               st->resolution.min_angle);
            if (cnt < 0) {
                snprintf(err, errlen,
                         "--probe-d %d at position %.0f (%s): the probe is out of range",
                         st->resolution.probe_d, res->p[i], app_ext_method_label(m));
                free(th);
                app_cache_put(c, 0, "", 0, 0);
                return NULL;
            }
            res->y[mi][i] = cnt;
        }
        free(th);
    }
    return res;
}

static int res_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                     char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    const res_result *res = res_compute(c, st, err, errlen);
    if (!res) return -1;
    int n = res->n;
    const double *p = res->p;
    const pe_rope_scaling *sc = &st->p.scaling;
    double T = app_ext_target(st), L0 = sc->original_ctx;
    int np = pe_rope_rotary_dim(&st->p) / 2;
    char l0s[32];
    app_ext_len_label(L0, l0s, sizeof l0s);
    char title[200], sub[320], ang[48];
    fig_num(st->resolution.min_angle, 3, ang, sizeof ang);
    snprintf(title, sizeof title,
             "Resolution: pairs that turn by more than %s rad between p and p+%d", ang,
             st->resolution.probe_d);
    /* a title that would take two lines (a paper column, 300x200 px) in fewer words, so the
     * plot keeps the line (fig_title steps a title down to 0.8 of its 1.25 before wrapping) */
    if (!t->cells && scene_text_width_bold(t, title, 1.25 * 0.8) > t->width - 1.2 * t->text_h)
        snprintf(title, sizeof title, "Pairs that turn > %s rad from p to p+%d", ang,
                 st->resolution.probe_d);
    app_subtitle(st, sub, sizeof sub);
    size_t u = strlen(sub);
#define SUB(...)                                                                                   \
    do {                                                                                           \
        if (u < sizeof sub) u += (size_t)snprintf(sub + u, sizeof sub - u, __VA_ARGS__);           \
    } while (0)
    SUB("  %d pairs  float32 angles", np);
    if (!st->figure) SUB("  (%sprobe-d, %smin-angle)", app_opt_prefix(st), app_opt_prefix(st));
    if (sc->factor == 1) {
        SUB("  f=1: all methods equal");
        if (!st->figure) SUB("; try %sfactor 4", app_opt_prefix(st));
    }
#undef SUB
    fig_rect area = app_frame(s, t, th, title, sub);

    int nm = res->nm;
    double hi = 1;
    for (int m = 0; m < nm; m++)
        for (int i = 0; i < n; i++) hi = fmax(hi, res->y[m][i]);
    hi = fmin(np, ceil(hi * 1.15 + 0.5));
    char names[APP_EXT_METHODS][160], shorts[APP_EXT_METHODS][128];
    const char *lab_of[APP_EXT_METHODS];
    uint32_t colors[APP_EXT_METHODS];
    unsigned styles[APP_EXT_METHODS];
    double lw = t->cells ? 0 : fmax(1.2, t->hairline * 1.5);
    /* Flat curves often coincide (none, YaRN and llama3 keep every pair at f = 4): a curve
     * equal to an earlier one is drawn over it dashed, a third dotted, so each shows, and its
     * legend entry says which it equals; the legend gives the counts at p = 1 and p = T. */
    for (int m = 0; m < nm; m++) {
        const double *y = res->y[m];
        colors[m] = th->series[res->ms[m] % 8];
        styles[m] = 0;
        int same_as = -1, equal_before = 0;
        for (int j = 0; j < m; j++) {
            int same = 1;
            for (int i = 0; i < n && same; i++) same = res->y[j][i] == y[i];
            if (!same) continue;
            if (same_as < 0) same_as = j;
            equal_before++;
        }
        char y0s[48], y1s[48]; /* numbers for people, as every figure writes them */
        fig_num(y[n > 1 ? 1 : 0], 3, y0s, sizeof y0s);
        fig_num(y[n - 1], 3, y1s, sizeof y1s);
        int len = snprintf(names[m], sizeof names[m], "%s  %s \xe2\x86\x92 %s",
                           app_ext_method_label(res->ms[m]), y0s, y1s);
        if (same_as >= 0 && len > 0 && (size_t)len < sizeof names[m]) {
            styles[m] = equal_before == 1 ? SCENE_DASHED : SCENE_DOTTED;
            snprintf(names[m] + len, sizeof names[m] - (size_t)len, "  = %s",
                     app_ext_method_label(res->ms[same_as]));
        }
        lab_of[m] = names[m];
        /* outside a small plot, in fewer words: a curve equal to an earlier one has its counts
         * ("YaRN = none"), and dynamic NTK is "dyn. NTK" */
        const char *ml =
            res->ms[m] == PE_SCALING_DYNAMIC ? "dyn. NTK" : app_ext_method_label(res->ms[m]);
        if (same_as >= 0)
            snprintf(shorts[m], sizeof shorts[m], "%s = %s", ml,
                     app_ext_method_label(res->ms[same_as]));
        else
            snprintf(shorts[m], sizeof shorts[m], "%s %s\xe2\x86\x92%s", ml, y0s, y1s);
    }
    /* a paper column: the legend in a strip above the plot (or beside it), where it covers no
     * curve, in the short names, which take fewer rows there */
    fig_rect area_long = area;
    fig_legend_slot slot = fig_legend_take(t, &area_long, lab_of, nm);
    if (slot.cols > 0) {
        for (int m = 0; m < nm; m++) lab_of[m] = shorts[m];
        slot = fig_legend_take(t, &area, lab_of, nm);
    } else {
        area = area_long;
    }
    fig_axes a = fig_axes_draw(s, t, th, area, 1, T, 0, hi, "position p (log scale)",
                               "pairs that tell p from p+D", FIG_GRID | FIG_XLOG);
    /* the solid ones first (the original widest, underneath), then the dashed, then the dotted */
    for (unsigned pass = 0; pass < 3; pass++)
        for (int m = 0; m < nm; m++) {
            unsigned want = pass == 0 ? 0u : pass == 1 ? (unsigned)SCENE_DASHED : SCENE_DOTTED;
            if (styles[m] != want) continue;
            double w = t->cells                    ? 0
                       : styles[m] == SCENE_DOTTED ? lw * 3.5
                       : styles[m]                 ? lw * 2.2
                                                   : lw * (res->ms[m] == 0 ? 2.5 : 1.5);
            fig_curve(s, &a, p, res->y[m], (size_t)n, colors[m], w, styles[m]);
        }
    char lab[48];
    snprintf(lab, sizeof lab, APP_L0 " = %s", l0s);
    fig_vmark(s, t, th, &a, L0, lab);
    if (!fig_legend_in_slot(s, t, th, &slot, lab_of, colors, styles, nm))
        fig_legend_styled(s, t, th, &a, lab_of, colors, styles, nm, 1);

    c->main = a;
    fig_mark_main(s, a.area, "plot");
    c->has_main = 1;
    c->main_rows = 1;
    c->main_cols = n;
    if (st->cursor_on) {
        int i = st->cur_c < n ? (st->cur_c < 1 ? 1 : st->cur_c) : n - 1;
        double fx = fig_x(&a, p[i]);
        if (t->cells) fx = floor(fx) + 0.5;
        app_cursor_line(s, t, th, fx, a.area.y, fx, a.area.y + a.area.h);
        size_t w = (size_t)snprintf(c->readout, sizeof c->readout, "p %.0f:", p[i]);
        for (int m = 0; m < nm && w < sizeof c->readout; m++)
            w += (size_t)snprintf(c->readout + w, sizeof c->readout - w, "  %s %.0f",
                                  app_ext_method_label(res->ms[m]), res->y[m][i]);
    }
    return 0;
}

static int res_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    const res_result *res = res_compute(c, st, err, errlen);
    if (!res) return -1;
    size_t n = (size_t)res->n;
    if (app_data_alloc(out, 2, 1 + (size_t)res->nm, n, 0, err, errlen) < 0) return -1;
    memcpy(out->data, res->p, sizeof *out->data * n);
    for (int m = 0; m < res->nm; m++)
        memcpy(out->data + (size_t)(m + 1) * n, res->y[m], sizeof *out->data * n);
    out->f64 = 1;
    snprintf(out->what, sizeof out->what,
             "(%d, samples): row 0 = position p; rows none,linear,ntk,dynamic,yarn,llama3%s = "
             "pairs turning more than %g rad between p and p+%d",
             1 + res->nm, res->nm > 6 ? ",longrope" : "", st->resolution.min_angle,
             st->resolution.probe_d);
    return 0;
}

/* ---- the resolution view's option group (resolution_opts.h, options/option_groups.h) ------ */

void app_resolution_opts_default(app_resolution_opts *o)
{
    /* not a tie: at the default d 128, base 10000 the pairs' inverse frequencies are
     * theta_k = 10^(-k/16), and 0.1 is theta_16 exactly, so with a probe of one position pair 16
     * turns by exactly the threshold and float32 rounding of its angles flipped it in and out
     * (the "none" curve zig-zagged between 16 and 17). 0.09 lies between theta_17 (0.0866) and
     * theta_16, and off the theta grid of d 64 and 256 and of Llama 3's base 500000 too. */
    o->min_angle = 0.09;
    o->probe_d = 1;
}

const app_option app_resolution_rows[] = {
    {APP_DBL("min-angle", NULL, "resolution probe threshold in radians, (0, 3.14159]",
             resolution.min_angle, 0, 3.14159266, 1)},
    {APP_INT("probe-d", NULL, "resolution probe distance D, 1..16777216", resolution.probe_d, 1,
             PE_MAX_LEN),
     .label = "D"},
    {.name = NULL},
};

const app_view app_view_resolution = {
    .name = "resolution",
    .description = "resolution probe: how many RoPE pairs tell p from p+D, per extension method",
    .validate = res_validate,
    .build = res_build,
    .data = res_data,
    /* every method at once: --scaling picks none of them, so it is not listed */
    .options = "layer-type dim base rotary-frac factor orig-ctx seq-len beta-fast beta-slow "
               "yarn-truncate mscale mscale-all-dim "
               "low-freq-factor high-freq-factor attn-factor target-len min-angle probe-d",
};
