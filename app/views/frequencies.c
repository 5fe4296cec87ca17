/* frequencies.c: what a RoPE context-extension method does to each frequency pair. Left, theta_k
 * of the original RoPE and of the extended one (st->p.scaling) on a log axis; right, the same as
 * wavelengths 2 pi / theta_k against the original context L0 and the target context T. Pairs
 * whose wavelength is longer than the context never complete a turn in it: they are the ones the
 * methods stretch. YaRN and llama3 treat the pairs in three bands (keep the fast ones, divide the
 * slow ones by f, blend in between), shaded behind the curves; linear scaling interpolates every
 * pair; NTK-aware methods change the base instead (named in the subtitle). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rope_ext.h"
#include "views.h"

static const char *const band_name[3] = {"keep", "blend", "interpolate"};
static const char *const band_short[3] = {"keep", "blend", "interp"};

static int freq_validate(const app_state *st, char *err, size_t errlen)
{
    return app_ext_validate(st, 1u | (1u << st->p.scaling.type), err, errlen);
}

/* The two frequency sets and the bands, computed once per build. */
typedef struct freq_set {
    int n;
    double *orig, *ext; /* theta_k (n each) */
    int *band;          /* pe_band of pair k under the extension */
    double attn, target, ext_base;
    int seq_len; /* the sequence length dynamic NTK is evaluated at */
    int shaded;  /* the method works in bands worth shading */
} freq_set;

static void freq_free(freq_set *f)
{
    free(f->orig);
    free(f->ext);
    free(f->band);
    memset(f, 0, sizeof *f);
}

static int freq_compute(const app_state *st, freq_set *f, char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    f->target = app_ext_target(st);
    int type = st->p.scaling.type;
    pe_params po = app_ext_params(st, PE_SCALING_NONE, f->target);
    pe_params pxt = app_ext_params(st, type, f->target);
    int n2 = 0;
    f->orig = app_ext_inv_freq(&po, &f->n, NULL, err, errlen);
    if (f->orig) f->ext = app_ext_inv_freq(&pxt, &n2, &f->attn, err, errlen);
    if (!f->orig || !f->ext) {
        freq_free(f);
        return -1;
    }
    f->band = malloc(sizeof *f->band * (size_t)f->n);
    if (!f->band) {
        snprintf(err, errlen, "out of memory");
        freq_free(f);
        return -1;
    }
    for (int k = 0; k < f->n; k++) f->band[k] = (int)pe_rope_band(&pxt, k);
    f->ext_base = pe_rope_effective_base(&pxt);
    f->seq_len = pxt.scaling.seq_len;
    f->shaded = type == PE_SCALING_YARN || type == PE_SCALING_LLAMA3 ||
                (type == PE_SCALING_LINEAR && pxt.scaling.factor > 1);
    return 0;
}

static uint32_t mix(uint32_t a, uint32_t b, double t)
{
    uint32_t out = 0;
    for (int sh = 0; sh <= 16; sh += 8) {
        double ca = (a >> sh) & 0xff, cb = (b >> sh) & 0xff;
        out |= (uint32_t)lround(ca + (cb - ca) * t) << sh;
    }
    return out;
}

static uint32_t band_color(const fig_theme *th, int b)
{
    static const int series[3] = {2, 4, 3};
    return th->series[series[b]];
}

/* A log range [y0, y1] holding [lo, hi] with the top fraction `top` of the axis left free for
 * the band labels. */
static void log_range(double lo, double hi, double top, double *y0, double *y1)
{
    double a = floor(log10(lo)), h = log10(hi);
    double b = fmax(ceil(h), (h - top * a) / (1 - top));
    if (b <= a) b = a + 1;
    *y0 = pow(10, a);
    *y1 = pow(10, b);
}

/* The shaded bands (runs of pairs with the same band) behind the curves of a, with a label at
 * the top of each run when it fits. */
static void draw_bands(scene *s, const scene_target *t, const fig_theme *th, const fig_axes *a,
                       const freq_set *f, int labels)
{
    int k0 = 0;
    while (k0 < f->n) {
        int b = f->band[k0], k1 = k0;
        while (k1 + 1 < f->n && f->band[k1 + 1] == b) k1++;
        double x0 = fig_x(a, k0 - 0.5), x1 = fig_x(a, k1 + 0.5);
        if (t->cells) {
            x0 = round(x0);
            x1 = round(x1);
        }
        uint32_t c = band_color(th, b);
        if (!labels) {
            scene_rect(s, x0, a->area.y, x1 - x0, a->area.h, mix(th->bg, c, t->cells ? 0.3 : 0.16),
                       SCENE_FILL);
            k0 = k1 + 1;
            continue;
        }
        const char *lab = band_name[b];
        double size = t->cells ? 1 : 0.8;
        if (scene_text_width(t, lab, size) > x1 - x0) lab = band_short[b];
        double w = scene_text_width(t, lab, size);
        if (w <= x1 - x0) {
            /* a cell target wants text at a whole cell */
            double tx = t->cells ? floor((x0 + x1 - w) / 2) : (x0 + x1) / 2;
            double ty = t->cells ? 2 * ceil(a->area.y / 2) : a->area.y + t->text_h * 0.15;
            scene_text(s, tx, ty, lab, size, (t->cells ? SCENE_LEFT : SCENE_CENTER) | SCENE_TOP,
                       mix(c, th->fg, 0.45), 0);
            s->text_h = t->text_h;
        }
        k0 = k1 + 1;
    }
}

/* Log axes in r with the bands underneath their grid: the axes are laid out once on a scratch
 * scene for their geometry, the bands drawn, then the axes drawn for real on top. */
static fig_axes band_axes(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                          double x0, double x1, double y0, double y1, const char *xlabel,
                          const char *ylabel, const freq_set *f, int names)
{
    unsigned flags = FIG_GRID | FIG_YLOG;
    if (f->shaded) {
        scene scratch;
        scene_init(&scratch, s->width, s->height, th->bg);
        fig_axes a = fig_axes_draw(&scratch, t, th, r, x0, x1, y0, y1, xlabel, ylabel, flags);
        scene_free(&scratch);
        draw_bands(s, t, th, &a, f, 0);
    }
    fig_axes a = fig_axes_draw(s, t, th, r, x0, x1, y0, y1, xlabel, ylabel, flags);
    if (f->shaded && names) draw_bands(s, t, th, &a, f, 1); /* the labels over the grid */
    return a;
}

static int freq_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                      char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    freq_set f;
    if (freq_compute(st, &f, err, errlen) < 0) return -1;
    const pe_rope_scaling *sc = &st->p.scaling;
    int type = sc->type, n = f.n;
    double L0 = sc->original_ctx, T = f.target;
    char l0s[32], ts[32], fs[48];
    app_ext_len_label(L0, l0s, sizeof l0s);
    fig_num(sc->factor, 3, fs, sizeof fs);
    app_ext_len_label(T, ts, sizeof ts);

    int never_o = 0, never_e = 0;
    for (int k = 0; k < n; k++) {
        never_o += 2 * APP_PI / f.orig[k] > L0;
        never_e += 2 * APP_PI / f.ext[k] > T;
    }
    char title[200], sub[320];
    if (type == PE_SCALING_NONE)
        snprintf(title, sizeof title,
                 "RoPE frequencies " APP_THETA_K ": %d of %d pairs never turn once in " APP_L0
                 " = %s",
                 never_o, n, l0s);
    else
        snprintf(title, sizeof title,
                 "RoPE frequencies: original vs %s f = %s (" APP_L0 " %s \xe2\x86\x92 T %s)",
                 app_ext_method_label(type), fs, l0s, ts);
    app_subtitle(st, sub, sizeof sub);
    size_t u = strlen(sub);
#define SUB(...)                                                                                   \
    do {                                                                                           \
        if (u < sizeof sub) u += (size_t)snprintf(sub + u, sizeof sub - u, __VA_ARGS__);           \
    } while (0)
    if (type == PE_SCALING_NONE) {
        if (!st->figure)
            SUB("  no scaling: compare a method with %sscaling yarn %sfactor 4", app_opt_prefix(st),
                app_opt_prefix(st));
    } else {
        if (f.shaded) {
            int cnt[3] = {0, 0, 0};
            for (int k = 0; k < n; k++) cnt[f.band[k]]++;
            SUB("  bands %d keep / %d blend / %d interp", cnt[0], cnt[1], cnt[2]);
        }
        if (type == PE_SCALING_YARN) {
            double lo, hi;
            pe_rope_yarn_range(&st->p, &lo, &hi);
            char a[48], b[48];
            fig_num(lo, 3, a, sizeof a);
            fig_num(hi, 3, b, sizeof b);
            SUB(" (ramp k %s\xe2\x80\x93%s)", a, b);
        }
        if (type == PE_SCALING_NTK || type == PE_SCALING_DYNAMIC) {
            char b[48];
            fig_num(f.ext_base, 4, b, sizeof b);
            SUB("  base \xe2\x86\x92 %s", b);
        }
        if (type == PE_SCALING_DYNAMIC) {
            if (f.seq_len <= sc->original_ctx)
                SUB(" (seq_len %d \xe2\x89\xa4 " APP_L0 ": original, as HF resets)", f.seq_len);
            else
                SUB(" (seq_len %d%s)", f.seq_len, sc->seq_len > 0 ? "" : " = T");
        }
        if (type == PE_SCALING_LONGROPE) {
            int lng = f.seq_len > sc->original_ctx;
            SUB("  %s_factor (seq_len %d %s " APP_L0 ")", lng ? "long" : "short", f.seq_len,
                lng ? ">" : "\xe2\x89\xa4");
        }
        if (f.attn != 1) {
            char a[48];
            fig_num(f.attn, 3, a, sizeof a);
            SUB("  attn \xc3\x97%s", a);
        }
        SUB("  never turn: %d in " APP_L0 ", %d in T", never_o, never_e);
    }
#undef SUB
    fig_rect r = app_frame(s, t, th, title, sub);
    /* two curves in a small figure (a paper column, 300x200) or a narrow one (2.2in wide):
     * their diagonals leave no corner of either plot free, so the legend goes in a strip above
     * both */
    const char *names[2] = {"original", NULL};
    char ext_name[64];
    snprintf(ext_name, sizeof ext_name, "%s f = %s", app_ext_method_label(type), fs);
    names[1] = ext_name;
    uint32_t colors[2] = {th->series[0], th->series[1]};
    fig_legend_slot slot = {{0, 0, 0, 0}, 0, 0};
    if (type != PE_SCALING_NONE && !t->cells && (r.h < 14 * t->text_h || r.w < 20 * t->text_h))
        slot = fig_legend_take_top(t, &r, names, 2);
    /* side by side, or (a tall figure) theta_k above the wavelengths */
    fig_rect left, right;
    int side = fig_split_two(t, r, 1.4, 0.5, 0.62, t->cells ? 4 : t->text_h, &left, &right);

    /* the free strip on top of each plot for the band labels, as a fraction of its height;
     * stacked, the wavelengths under theta_k keep their height for the L0 and T labels (the
     * bands are named once, above) */
    double strip = t->cells ? 2 : t->text_h * 1.2;
    double est_h = left.h - (t->cells ? 8 : t->text_h * 4);
    double top = f.shaded && est_h > 0 ? fmin(0.35, (strip + 1) / est_h) : 0.04;
    double top_w = side ? top : 0.04;

    double *x = malloc(sizeof *x * (size_t)n * 5);
    if (!x) {
        snprintf(err, errlen, "out of memory");
        freq_free(&f);
        return -1;
    }
    double *wo = x + n, *we = wo + n;
    int two = type != PE_SCALING_NONE;
    /* the target T belongs to a scaling method: without one only L0 is drawn */
    double tlo = INFINITY, thi = 0, wlo = INFINITY, whi = two ? fmax(L0, T) : L0;
    for (int k = 0; k < n; k++) {
        x[k] = k;
        wo[k] = 2 * APP_PI / f.orig[k];
        we[k] = 2 * APP_PI / f.ext[k];
        tlo = fmin(tlo, fmin(f.orig[k], f.ext[k]));
        thi = fmax(thi, fmax(f.orig[k], f.ext[k]));
        wlo = fmin(wlo, fmin(wo[k], we[k]));
        whi = fmax(whi, fmax(wo[k], we[k]));
    }
    wlo = fmin(wlo, two ? fmin(L0, T) : L0);
    const char *short_names[2] = {"original", app_ext_method_label(type)};
    double lw = t->cells ? 0 : fmax(1.5, t->hairline * 2);

    /* left: theta_k */
    double y0, y1;
    log_range(tlo, thi, top, &y0, &y1);
    /* stacked, the two plots share their x axis: its name once, under the lower one */
    fig_axes a = band_axes(s, t, th, left, -0.5, n - 0.5, y0, y1, side ? "frequency pair k" : NULL,
                           APP_THETA_K " (radians per position)", &f, 1);
    fig_curve(s, &a, x, f.orig, (size_t)n, colors[0], two ? lw * 1.8 : lw, 0);
    if (two) fig_curve(s, &a, x, f.ext, (size_t)n, colors[1], lw, 0);
    if (!t->cells && n <= 128)
        for (int k = 0; k < n; k++) {
            double rad = fmax(2, t->text_h * 0.14);
            scene_circle(s, fig_x(&a, k), fig_y(&a, f.orig[k]), rad, colors[0], 0, SCENE_FILL);
            if (two) scene_circle(s, fig_x(&a, k), fig_y(&a, f.ext[k]), rad, colors[1], 0, 0);
        }
    fig_axes la = a; /* the legend goes below the band labels */
    la.area.y += f.shaded ? strip : 0;
    la.area.h -= f.shaded ? strip : 0;
    /* one curve, in a plot too narrow to keep a legend off it (a paper column): its y label
     * names it, the legend would only cover it */
    double one_w = scene_text_width(t, names[0], 0.9) + 2.5 * t->text_h;
    /* the title names f: a narrow plot drops it */
    if (slot.cols > 0)
        fig_legend_in_slot(s, t, th, &slot, names, colors, NULL, 2);
    else if (two || t->cells || la.area.w >= 2.5 * one_w)
        fig_legend(s, t, th, &la, two && !fig_legend_fits(t, &la, names, 2) ? short_names : names,
                   colors, two ? 2 : 1, 0);

    /* right: wavelengths against L0 and T */
    log_range(wlo, whi, top_w, &y0, &y1);
    fig_axes b = band_axes(s, t, th, right, -0.5, n - 0.5, y0, y1, "frequency pair k",
                           "wavelength 2\xcf\x80/" APP_THETA_K " (positions)", &f, side);
    fig_curve(s, &b, x, wo, (size_t)n, colors[0], two ? lw * 1.8 : lw, 0);
    if (two) fig_curve(s, &b, x, we, (size_t)n, colors[1], lw, 0);
    /* after the curves, so a label the curves cannot avoid (a narrow plot) stays readable */
    char lab[96];
    if (two && T != L0) fig_hmark(s, t, th, &b, T, NULL);
    fig_hmark(s, t, th, &b, L0, NULL);
    if (!two) {
        snprintf(lab, sizeof lab, "context " APP_L0 " = %s", l0s);
    } else if (T != L0) {
        snprintf(lab, sizeof lab, "target T = %s", ts);
        /* a narrow plot (a paper column, 300x200): the line's name alone, so the label finds
         * a stretch between the curves */
        if (!t->cells && scene_text_width(t, lab, 0.85) > 0.45 * b.area.w)
            snprintf(lab, sizeof lab, "T = %s", ts);
        fig_hmark_label(s, t, th, &b, T, lab);
        snprintf(lab, sizeof lab, "original " APP_L0 " = %s", l0s);
    } else {
        snprintf(lab, sizeof lab, "context " APP_L0 " = T = %s", l0s);
    }
    /* a narrow plot (a paper column): the line's name alone, where the curve leaves it room */
    if (!t->cells && scene_text_width(t, lab, 0.85) > 0.45 * b.area.w)
        snprintf(lab, sizeof lab, APP_L0 " = %s", l0s);
    fig_hmark_label(s, t, th, &b, L0, lab);

    c->main = a;
    fig_mark_main(s, a.area, "plot");
    c->has_main = 1;
    c->main_rows = 1;
    c->main_cols = n;
    if (st->cursor_on) {
        int k = st->cur_c < n ? (st->cur_c < 0 ? 0 : st->cur_c) : n - 1;
        const fig_axes *ax[2] = {&a, &b};
        for (int i = 0; i < 2; i++) {
            double fx = fig_x(ax[i], k);
            if (t->cells) fx = floor(fx) + 0.5;
            app_cursor_line(s, t, th, fx, ax[i]->area.y, fx, ax[i]->area.y + ax[i]->area.h);
        }
        if (two) /* turns: the original pair within L0, the extended one within the target */
            snprintf(c->readout, sizeof c->readout,
                     "pair %d  theta %.6g -> %.6g (x%.4g)  wavelength %.6g -> %.6g  turns %.4g in "
                     "L0, %.4g in T  %s",
                     k, f.orig[k], f.ext[k], f.ext[k] / f.orig[k], wo[k], we[k], L0 / wo[k],
                     T / we[k], f.shaded ? band_name[f.band[k]] : "");
        else
            snprintf(c->readout, sizeof c->readout,
                     "pair %d  theta %.6g  wavelength %.6g positions (%.3g turns in L0)", k,
                     f.orig[k], wo[k], L0 / wo[k]);
    }
    free(x);
    freq_free(&f);
    return 0;
}

static int freq_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    (void)c;
    freq_set f;
    if (freq_compute(st, &f, err, errlen) < 0) return -1;
    if (app_data_alloc(out, 2, (size_t)f.n, 6, 0, err, errlen) < 0) {
        freq_free(&f);
        return -1;
    }
    for (int k = 0; k < f.n; k++) {
        double *row = out->data + (size_t)k * 6;
        row[0] = k;
        row[1] = f.orig[k];
        row[2] = f.ext[k];
        row[3] = 2 * APP_PI / f.orig[k];
        row[4] = 2 * APP_PI / f.ext[k];
        row[5] = f.band[k];
    }
    out->f64 = 1;
    snprintf(out->what, sizeof out->what,
             "(pairs, 6): k, theta_k original, theta_k %s, wavelength original, wavelength %s, "
             "band (0 keep, 1 blend, 2 interpolate)",
             app_ext_method_label(st->p.scaling.type), app_ext_method_label(st->p.scaling.type));
    freq_free(&f);
    return 0;
}

/* {bands}: how many pairs the scaling keeps, blends and divides */
static int value_bands(const app_state *st, const char *args, char *out, size_t n, char *err,
                       size_t errlen)
{
    (void)args, (void)err, (void)errlen;
    int np = pe_rope_rotary_dim(&st->p) / 2, c[3] = {0, 0, 0};
    for (int i = 0; i < np; i++) c[pe_rope_band(&st->p, i)]++;
    snprintf(out, n, "%d kept, %d blended, %d divided", c[PE_BAND_KEEP], c[PE_BAND_BLEND],
             c[PE_BAND_INTERP]);
    return 0;
}

/* {attn-factor}: the factor the scaling puts on the attention logits (YaRN's mscale) */
static int value_attn_factor(const app_state *st, const char *args, char *out, size_t n, char *err,
                             size_t errlen)
{
    (void)args, (void)err, (void)errlen;
    int np;
    double attn, *inv = app_rope_inv_freqs(st, &np, &attn);
    if (!inv) {
        snprintf(out, n, "?");
        return 0;
    }
    free(inv);
    fig_num(attn, 4, out, n);
    return 0;
}

/* {eff-base}: the frequency base after NTK scaling */
static int value_eff_base(const app_state *st, const char *args, char *out, size_t n, char *err,
                          size_t errlen)
{
    (void)args, (void)err, (void)errlen;
    /* for people: the whole number with thousands commas (40,883), as the figures write it */
    fig_num(round(pe_rope_effective_base(&st->p)), 15, out, n);
    return 0;
}

static const app_view_value freq_values[] = {
    {"bands", NULL, value_bands},
    {"attn-factor", NULL, value_attn_factor},
    {"eff-base", NULL, value_eff_base},
    {NULL, NULL, NULL},
};

const app_view app_view_frequencies = {
    .name = "frequencies",
    .description = "RoPE theta_k and wavelengths, original vs extended (--scaling), with the bands "
                   "methods treat",
    .validate = freq_validate,
    .build = freq_build,
    .data = freq_data,
    .options =
        "layer-type dim base rotary-frac scaling factor orig-ctx seq-len beta-fast beta-slow "
        "yarn-truncate mscale mscale-all-dim "
        "low-freq-factor high-freq-factor attn-factor target-len",
    /* the title names the method, f, L0 and T */
    .not_in_subtitle = "scaling factor orig-ctx target-len",
    /* S and e: the factor stretching the long wavelengths, what a class wants to see (the first
     * slider, d, only rescales the axis); with scaling none it would not act, so the recording
     * takes YaRN, whose bands show all three treatments */
    .record = "factor",
    .record_setup = "scaling yarn",
    .values = freq_values,
};
