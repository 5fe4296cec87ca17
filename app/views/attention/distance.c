/* distance.c: attention against distance (issue 23, item 4). For every layer and head of a
 * trained model, over the measure prompts (measures.h):
 *
 *   by distance   D(l, h, r) = sum_{prompts, t >= r} A_lh[t][t - r] / #{(prompt, t): t >= r}
 *                 the mean weight a query puts on the key r tokens back (r = 0: itself);
 *   by position   R(l, h, j) = sum_{prompts, t >= j} A_lh[t][j] / #{(prompt, t): t >= j}
 *                 the mean attention key position j receives from the queries that see it, the
 *                 "lost in the middle" curve (Liu et al. 2023 measure it on answers; this is
 *                 its attention counterpart).
 * Both come from the model's own attention rows (lmi_attn_row) through pe_attn_distance_add_row.
 * Uniform attention (1/(t+1) on every key) is drawn dashed for scale: at distance r it gives
 * the mean of 1/(t+1) over the same queries, so a curve above it is a head that looks there
 * more than chance.
 *
 * The figure: one curve per layer (the mean over its heads), or with --per-head on one curve
 * per head of --layer; log y. The data: a (layers, heads, tokens) array of D or R (--by). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "colormap.h"
#include "lmi.h"
#include "measure.h"
#include "measures.h"
#include "views.h"

/* The cached result. Arrays after the struct, each (layers, heads, T) or (T). */
typedef struct dist_result {
    int layers, heads, T;
    app_measure_about about;
    double *dist, *recv;           /* (layers, heads, T) sums, then means (NaN: no query) */
    double *dist_cnt, *recv_cnt;   /* (T) */
    double *dist_unif, *recv_unif; /* (T) uniform attention's mean */
    double data[];
} dist_result;

typedef struct dist_run {
    dist_result *r;
    float *row; /* (T) */
} dist_run;

/* One prompt's rows added to the sums. */
static int dist_prompt(void *arg, const lmi_session *s, int n, char *err, size_t errlen)
{
    dist_result *r = ((dist_run *)arg)->r;
    float *row = ((dist_run *)arg)->row;
    int L = r->layers, H = r->heads, T = r->T;
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            double *ds = r->dist + ((size_t)l * H + h) * T, *rs = r->recv + ((size_t)l * H + h) * T;
            for (int t = 0; t < n; t++) {
                if (lmi_attn_row(s, l, h, t, row, NULL, NULL, err, errlen) < 0) return -1;
                /* the counts are the same for every head: kept once, from head (0, 0) */
                int first = l == 0 && h == 0;
                pe_attn_distance_add_row(row, (size_t)t, ds, first ? r->dist_cnt : NULL, rs,
                                         first ? r->recv_cnt : NULL);
                if (first)
                    for (int j = 0; j <= t; j++) {
                        r->dist_unif[t - j] += 1.0 / (t + 1);
                        r->recv_unif[j] += 1.0 / (t + 1);
                    }
            }
        }
    return 0;
}

static const dist_result *dist_measure(app_view_ctx *c, const app_state *st, char *err,
                                       size_t errlen)
{
    app_measure_key key;
    if (app_measure_key_of(st, &key, err, errlen) < 0) return NULL;
    dist_result *r = app_cache_get(c, 0, &key, sizeof key);
    if (r) return r;
    app_measure ms;
    if (app_measure_begin(&ms, st, err, errlen) < 0) return NULL;
    int L = ms.m.info.layers, H = ms.m.info.heads, T = ms.ps.longest;
    size_t lht = (size_t)L * (size_t)H * (size_t)T;
    r = app_cache_put(c, 0, &key, sizeof key,
                      sizeof *r + sizeof(double) * (2 * lht + 4 * (size_t)T));
    if (!r) {
        snprintf(err, errlen, "%s", app_cache_error());
        app_measure_end(&ms);
        return NULL;
    }
    r->layers = L;
    r->heads = H;
    r->T = T;
    r->dist = r->data;
    r->recv = r->dist + lht;
    r->dist_cnt = r->recv + lht;
    r->recv_cnt = r->dist_cnt + T;
    r->dist_unif = r->recv_cnt + T;
    r->recv_unif = r->dist_unif + T;
    dist_run u = {r, malloc(sizeof(float) * (size_t)T)};
    int rc = u.row ? app_measure_each(&ms, dist_prompt, &u, err, errlen) : -1;
    if (!u.row) snprintf(err, errlen, "out of memory");
    free(u.row);
    app_measure_about_of(&ms, st, &r->about);
    app_measure_end(&ms);
    if (rc < 0) {
        app_cache_put(c, 0, "", 0, 0); /* forget the half-made result */
        return NULL;
    }
    for (size_t i = 0; i < lht; i++) {
        size_t t = i % (size_t)T;
        r->dist[i] = r->dist_cnt[t] > 0 ? r->dist[i] / r->dist_cnt[t] : NAN;
        r->recv[i] = r->recv_cnt[t] > 0 ? r->recv[i] / r->recv_cnt[t] : NAN;
    }
    for (int t = 0; t < T; t++) {
        r->dist_unif[t] = r->dist_cnt[t] > 0 ? r->dist_unif[t] / r->dist_cnt[t] : NAN;
        r->recv_unif[t] = r->recv_cnt[t] > 0 ? r->recv_unif[t] / r->recv_cnt[t] : NAN;
    }
    return r;
}

#define DIST_MAX_CURVES 64

/* Curve k at index i of the (layers, heads, T) means m: head k of layer `layer`, or the mean of
 * layer k over its heads. */
static double curve_at(const double *m, int H, int T, int per_head, int layer, int k, int i)
{
    if (per_head) return m[((size_t)layer * H + k) * T + i];
    double v = 0;
    for (int h = 0; h < H; h++) v += m[((size_t)k * H + h) * T + i] / H;
    return v;
}

static int dist_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                      char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    const dist_result *r = dist_measure(c, st, err, errlen);
    if (!r) return -1;
    int L = r->layers, H = r->heads, T = r->T, byp = st->attn.by_position;
    int layer = st->attn.layer < L ? st->attn.layer : L - 1;
    int per_head = st->attn.per_head;
    const double *m = byp ? r->recv : r->dist, *unif = byp ? r->recv_unif : r->dist_unif;
    char title[256], sub[320];
    if (per_head)
        app_fmt(title, sizeof title, "%s in %s, layer %d: each head",
                byp ? "Attention received by position" : "Attention by distance", r->about.name,
                layer);
    else
        app_fmt(title, sizeof title, "%s in %s, each layer",
                byp ? "Attention received by position" : "Attention by distance", r->about.name);
    app_fmt(sub, sizeof sub, "%s; %s, %d tokens; dashed: uniform attention",
            byp ? "mean weight key j receives from the queries t >= j"
                : "mean weight on the key r = t - j back",
            r->about.brief, r->about.tokens);
    fig_rect area = app_frame(s, t, th, title, sub);
    int n = per_head ? H : L;
    if (n > DIST_MAX_CURVES) n = DIST_MAX_CURVES;
    double *x = malloc(sizeof *x * (size_t)T * 2);
    if (!x) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double *y = x + T;
    /* the y range over what is drawn (log axis: positive values only) */
    double lo = INFINITY, hi = 0;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < T; i++) {
            double v = curve_at(m, H, T, per_head, layer, k, i);
            if (v > 0 && isfinite(v)) lo = fmin(lo, v), hi = fmax(hi, v);
        }
    for (int i = 0; i < T; i++)
        if (unif[i] > 0) lo = fmin(lo, unif[i]), hi = fmax(hi, unif[i]);
    if (!(hi > 0)) lo = 1e-3, hi = 1;
    if (!(lo < hi)) lo = hi / 10;
    lo = fmax(lo, hi * 1e-6); /* a head that never looks somewhere would stretch the axis */
    const char *names[DIST_MAX_CURVES + 1];
    char labels[DIST_MAX_CURVES + 1][24];
    uint32_t colors[DIST_MAX_CURVES + 1];
    unsigned flags[DIST_MAX_CURVES + 1];
    const cmap *seq = cmap_default_sequential();
    /* eight or fewer curves take the theme's series colours; more take a sequential map by
     * index (a 32-layer model reads as a gradient from the first layer to the last), and the
     * legend names the first, the middle and the last */
    int shown = 0;
    for (int k = 0; k < n; k++)
        if (n <= 8 || k == 0 || k == n - 1 || k == n / 2) {
            app_fmt(labels[shown], sizeof labels[shown], "%s %d", per_head ? "head" : "layer", k);
            names[shown] = labels[shown];
            colors[shown] = n <= 8 ? th->series[k % 8] : cmap_color(seq, 0.9 * k / (n - 1));
            flags[shown++] = 0;
        }
    app_fmt(labels[shown], sizeof labels[shown], "uniform");
    names[shown] = labels[shown];
    colors[shown] = th->fg;
    flags[shown++] = SCENE_DASHED;
    fig_legend_slot slot = {{0, 0, 0, 0}, 0, 0};
    if (!t->cells) slot = fig_legend_take(t, &area, names, shown);
    fig_axes a = fig_axes_draw(s, t, th, area, 0, T > 1 ? T - 1 : 1, lo / 1.2, hi * 1.2,
                               byp ? "key position j" : "distance r = t - j",
                               "mean attention weight", FIG_GRID | FIG_YLOG);
    double lw = t->hairline > 0 ? t->hairline : 1;
    for (int i = 0; i < T; i++) x[i] = i, y[i] = unif[i] > 0 ? unif[i] : NAN;
    fig_curve(s, &a, x, y, (size_t)T, th->fg, t->cells ? 0 : lw, SCENE_DASHED);
    for (int k = 0; k < n; k++) {
        for (int i = 0; i < T; i++) {
            double v = curve_at(m, H, T, per_head, layer, k, i);
            y[i] = v > 0 ? v : NAN;
        }
        uint32_t col = n <= 8 ? th->series[k % 8] : cmap_color(seq, 0.9 * k / (n - 1));
        fig_curve(s, &a, x, y, (size_t)T, col, t->cells ? 0 : lw * 1.5, 0);
    }
    if (!fig_legend_in_slot(s, t, th, &slot, names, colors, flags, shown))
        fig_legend_styled(s, t, th, &a, names, colors, flags, shown, 0);
    c->main = a;
    fig_mark_main(s, a.area, "plot");
    c->has_main = 1;
    c->main_rows = 1;
    c->main_cols = T;
    if (st->cursor_on) {
        int i = st->cur_c < T ? (st->cur_c < 0 ? 0 : st->cur_c) : T - 1;
        app_cursor_vline(s, t, th, &a, i);
        size_t u = (size_t)snprintf(c->readout, sizeof c->readout, "%s %d: uniform %.4f",
                                    byp ? "position" : "distance", i, unif[i]);
        for (int k = 0; k < n && k < 8 && u < sizeof c->readout; k++) {
            double v = curve_at(m, H, T, per_head, layer, k, i);
            u += (size_t)snprintf(c->readout + u, sizeof c->readout - u, "  %s%d %.4f",
                                  per_head ? "h" : "l", k, v);
        }
    }
    free(x);
    return 0;
}

static int dist_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    const dist_result *r = dist_measure(c, st, err, errlen);
    if (!r) return -1;
    if (app_data_alloc(out, 3, (size_t)r->layers, (size_t)r->heads, (size_t)r->T, err, errlen) < 0)
        return -1;
    size_t lht = (size_t)r->layers * (size_t)r->heads * (size_t)r->T;
    memcpy(out->data, st->attn.by_position ? r->recv : r->dist, sizeof(double) * lht);
    out->f64 = 1;
    app_fmt(out->what, sizeof out->what,
            "(layers, heads, %s): mean attention %s over %s, %d tokens; NaN: no query",
            st->attn.by_position ? "position j" : "distance r",
            st->attn.by_position ? "key j receives from queries t >= j" : "at distance r = t - j",
            r->about.desc, r->about.tokens);
    return 0;
}

const app_view app_view_distance = {
    .name = "distance",
    .description = "attention against distance and by position (lost in the middle)",
    .build = dist_build,
    .data = dist_data,
    .options = "model by per-head layer ids text prompt tokenizer",
};
