/* t5.c: T5's relative position buckets. Left, the bucket of every relative distance rel = j - i
 * as a step curve (exact buckets for |rel| below max_exact, log-spaced ones up to max_distance,
 * the last bucket beyond); bidirectional T5 gives the keys after the query their own half of
 * the buckets, causal T5 puts them all in bucket 0 (they are masked anyway). Right, the (L, L)
 * bias matrix one head gets from it: each bucket holds one learned scalar per head, so the
 * matrix is constant along diagonals and coarsens away from the main one. The scalars are the
 * shipped t5 model's trained ones (with its bucketing), or with --weights init pe/'s seeded
 * values under the options, as at initialisation (issue 23). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "trained.h"
#include "views.h"

/* Where the bias values come from (issue 23): by default the shipped t5 model's trained values,
 * with its bucketing (heads, buckets, max distance, causal) in place of the options';
 * --weights init: pe/'s seeded values under the options, as at initialisation. */
typedef struct t5_src {
    pe_params p;          /* the bucketing in effect */
    const float *vals;    /* (heads, buckets) */
    pe_matrix own;        /* the seeded values (init), freed by t5_src_free */
    const app_trained *t; /* the model (trained), else NULL */
} t5_src;

static int t5_source(app_view_ctx *c, const app_state *st, t5_src *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->p = st->p;
    if (st->attn.weights_init) {
        if (pe_t5_values(&st->p, &s->own, err, errlen) < 0) return -1;
        s->vals = s->own.data;
        return 0;
    }
    s->t = app_trained_get(c, 2, "t5", err, errlen);
    if (!s->t) return -1;
    if (s->t->pos.kind != LMI_POS_BUCKETS) {
        snprintf(err, errlen, "%s: not a T5 model", s->t->name);
        return -1;
    }
    s->p.heads = s->t->pos.rows;
    s->p.t5_buckets = s->t->pos.buckets;
    s->p.t5_max_distance = s->t->pos.max_distance;
    s->p.t5_bidirectional = s->t->pos.bidirectional;
    s->vals = s->t->pos.values;
    return 0;
}

static void t5_src_free(t5_src *s)
{
    pe_matrix_free(&s->own);
}

static int t5_head(const app_state *st, const pe_params *p)
{
    int h = st->head >= 0 ? st->head : 0;
    return h < p->heads ? h : p->heads - 1; /* the trained model has its own head count */
}

/* The trained model brings its own heads and bucketing (t5_source): the options' then do not
 * act, and the subtitle leaves them out. */
static const char *t5v_idle(const app_state *st)
{
    return st->attn.weights_init ? NULL : "heads buckets max-distance t5 seed";
}

static int t5v_validate(const app_state *st, char *err, size_t errlen)
{
    const pe_encoding *e = pe_encoding_find("t5");
    /* the values: the figure samples (issue 25), the data meets the memory budget */
    if (pe_validate_values(e, &st->p, err, errlen) < 0) return -1;
    if (st->head >= st->p.heads) {
        snprintf(err, errlen, "--head %d: must be below --heads %d (allowed all|0..%d)", st->head,
                 st->p.heads, st->p.heads - 1);
        return -1;
    }
    return 0;
}

/* The rel range drawn: a half past max_distance, so the saturated last bucket shows, and at
 * least what the (L, L) matrix uses. */
static int t5_range(const pe_params *p)
{
    long r = (long)ceil(1.5 * p->t5_max_distance);
    if (r < p->len - 1) r = p->len - 1;
    return r > PE_MAX_LEN ? PE_MAX_LEN : (int)r;
}

static int t5_bucket_of(const pe_params *p, int rel)
{
    return pe_t5_bucket(rel, p->t5_bidirectional, p->t5_buckets, p->t5_max_distance);
}

/* Head h's bias sampled on an n x n grid of positions (app_grid_pos; n <= L: the figure's
 * resolution), then the finite range of the whole (L, L) matrix, found over the 2L - 1 distances
 * it holds (it is constant along diagonals); cached under the inputs it depends on. Every value
 * is pe_t5_value's, the entry the registry's t5 bias stores. NULL with err on failure. */
static const float *t5_matrix(app_view_ctx *c, const t5_src *src, int h, size_t n, char *err,
                              size_t errlen)
{
    const pe_params *p = &src->p;
    struct {
        int len, heads, buckets, max_distance, bidir, h;
        size_t n;
        uint64_t seed;
        int trained;
    } key;
    memset(&key, 0, sizeof key);
    key.len = p->len;
    key.heads = p->heads;
    key.buckets = p->t5_buckets;
    key.max_distance = p->t5_max_distance;
    key.bidir = p->t5_bidirectional;
    key.h = h;
    key.n = n;
    key.seed = p->seed;
    key.trained = src->t != NULL;
    float *out = app_cache_get(c, 0, &key, sizeof key);
    if (out) return out;
    out = app_cache_put(c, 0, &key, sizeof key, (n * n + 2) * sizeof *out);
    if (!out) {
        snprintf(err, errlen, "%s", app_cache_error());
        return NULL;
    }
    const float *v = src->vals + (size_t)h * (size_t)p->t5_buckets;
    size_t L = (size_t)p->len;
    for (size_t i = 0; i < n; i++) {
        size_t pi = app_grid_pos(i, n, L);
        for (size_t j = 0; j < n; j++)
            out[i * n + j] = pe_t5_value(p, v, pi, app_grid_pos(j, n, L));
    }
    /* row L-1 holds every distance j - i <= 0, row 0 every distance >= 0 */
    double lo = INFINITY, hi = -INFINITY;
    for (size_t k = 0; k < L; k++) {
        float a = pe_t5_value(p, v, L - 1, k), b = pe_t5_value(p, v, 0, k);
        if (isfinite(a)) lo = fmin(lo, a), hi = fmax(hi, a);
        if (isfinite(b)) lo = fmin(lo, b), hi = fmax(hi, b);
    }
    if (lo > hi) lo = hi = 0;
    out[n * n] = (float)lo;
    out[n * n + 1] = (float)hi;
    return out;
}

/* The range of the bias over every head and every reachable distance (--scale shared: one
 * colour scale, so stepping through the heads compares them); as t5_matrix's per-head range,
 * row L-1 holds every distance <= 0 and row 0 every distance >= 0. -1 with err on failure. */
static void t5_shared_range(const t5_src *src, double *lo, double *hi)
{
    const pe_params *p = &src->p;
    size_t L = (size_t)p->len;
    double a = INFINITY, b = -INFINITY;
    for (int h = 0; h < p->heads; h++) {
        const float *v = src->vals + (size_t)h * (size_t)p->t5_buckets;
        for (size_t k = 0; k < L; k++) {
            float x = pe_t5_value(p, v, L - 1, k), y = pe_t5_value(p, v, 0, k);
            if (isfinite(x)) a = fmin(a, x), b = fmax(b, x);
            if (isfinite(y)) a = fmin(a, y), b = fmax(b, y);
        }
    }
    if (a > b) a = b = 0;
    *lo = a;
    *hi = b;
}

static int t5v_draw(app_view_ctx *c, const app_state *st, const t5_src *src, scene *s,
                    const scene_target *t, const fig_theme *th, char *err, size_t errlen);

static int t5v_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                     char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    t5_src src;
    if (t5_source(c, st, &src, err, errlen) < 0) return -1;
    int rc = t5v_draw(c, st, &src, s, t, th, err, errlen);
    t5_src_free(&src);
    return rc;
}

static int t5v_draw(app_view_ctx *c, const app_state *st, const t5_src *src, scene *s,
                    const scene_target *t, const fig_theme *th, char *err, size_t errlen)
{
    const pe_params *p = &src->p;
    int h = t5_head(st, p), R = t5_range(p), bidir = p->t5_bidirectional != 0;
    int nb = p->t5_buckets, max_exact = bidir ? nb / 4 : nb / 2;
    char title[200], sub[256];
    /* one head is drawn; --head all (the default, all heads in alibi) draws the first, and the
     * title says so, as the status line's head=all does not */
    snprintf(title, sizeof title, "T5 relative buckets and the bias of head %d of %d%s", h,
             p->heads, st->head < 0 ? " (head=all: the first)" : "");
    /* a narrow figure (a paper column) gets the short title rather than two lines of it */
    if (!t->cells && scene_text_width_bold(t, title, 1.0) > t->width - 2 * t->text_h)
        snprintf(title, sizeof title, "T5 buckets and head %d's bias", h);
    /* the rows that act (app_subtitle: the trained model's bucketing is not the options'),
     * then what they make: the exact buckets */
    app_subtitle(st, sub, sizeof sub);
    size_t u = strlen(sub);
    snprintf(sub + u, sizeof sub - u, "%sexact below |rel| = %d", u ? "  " : "", max_exact);
    fig_rect r = app_frame(s, t, th, title, sub);
    /* The matrix takes half the width, unless that leaves it under half as wide as high (a
     * paper column is short and narrow: its labels and colorbar take most of half of it): then
     * up to two thirds, what it needs to be square. */
    double want = r.w * 0.52;
    if (!t->cells) {
        double side,
            need = app_matrix_width(t, th, r.h, 0, p->len, 0, p->len, "key j", "query i", &side);
        if (want - (need - side) < 0.5 * side) want = fmin(r.w * 0.66, need);
    }
    /* side by side, or (a tall figure: a column 2.2x3.5in) the buckets above the matrix */
    double gap = t->cells ? 3 : t->text_h;
    fig_rect left, right;
    int beside = fig_split_two(t, r, 1.2, (r.w - want) / r.w, 0.4, gap, &left, &right);
    /* Square cells: the matrix as large as its room allows with its labels and colourbar, not
     * stretched to it (at 2.2x3.5in it was 65 x 115 units). The colourbar goes beside it, or
     * under it where that draws the matrix larger (a narrow figure, whose width binds it: at
     * 2.2x3.5in a colourbar beside left it 65 units). The room it leaves goes to the buckets
     * plot: the height when stacked (a tall figure), the width side by side. */
    int cbar_below = 0;
    double marea_w = 0; /* the matrix's plot width (units) */
    if (!t->cells) {
        double bw = fig_colorbar_width(t) + t->char_w * 2;
        double bh = fig_colorbar_side_height(t) + t->char_w;
        if (!beside) { /* stacked: the matrix (the main panel) may take up to 72% of the height
                          (half a line under the buckets plot's x label: the matrix's top tick label
                          is the other half) */
            double top = round(0.28 * r.h), g = round(0.5 * gap);
            left.h = top;
            right.y = r.y + top + g;
            right.h = r.h - top - g;
        }
        fig_rect ov = right, oh = right, av, ah;
        ov.w -= bw;
        ov = fig_axes_outer_for(t, th, ov, 0, p->len, 0, p->len, "key j", "query i", FIG_Y_DOWN,
                                1.0, 0, &av);
        oh.h -= bh;
        oh = fig_axes_outer_for(t, th, oh, 0, p->len, 0, p->len, "key j", "query i", FIG_Y_DOWN,
                                1.0, 0, &ah);
        cbar_below = ah.w > av.w + 0.5;
        fig_rect o = cbar_below ? oh : ov;
        marea_w = cbar_below ? ah.w : av.w;
        double used_w = cbar_below ? o.w : o.w + bw, used_h = cbar_below ? o.h + bh : o.h;
        if (!beside && right.h - used_h > 0) {
            left.h += right.h - used_h;
            o.y += right.h - used_h;
        } else if (beside && right.w - used_w > 0) {
            left.w += right.w - used_w;
            o.x = right.x + right.w - used_w;
        }
        right = (fig_rect){o.x, o.y, cbar_below ? o.w : o.w + bw, o.h};
    }
    /* the step curve: one horizontal run per stretch of equal buckets (at most 2 per bucket) */
    size_t cap = 4 * (size_t)nb + 8, n = 0;
    double *xy = malloc(sizeof *xy * cap * 2);
    if (!xy) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double *xs = xy, *ys = xy + cap;
    int rel = -R;
    while (rel <= R && n + 2 <= cap) {
        int bk = t5_bucket_of(p, rel), end = rel;
        while (end < R && t5_bucket_of(p, end + 1) == bk) end++;
        xs[n] = rel - 0.5;
        ys[n++] = bk;
        xs[n] = end + 0.5;
        ys[n++] = bk;
        rel = end + 1;
    }
    const char *xlabel = "relative distance rel = j \xe2\x88\x92 i";
    if (!t->cells && scene_text_width(t, xlabel, 1.0) > left.w) xlabel = "rel = j \xe2\x88\x92 i";
    fig_axes a = fig_axes_draw(s, t, th, left, -R - 0.5, R + 0.5, -0.5, nb - 0.5, xlabel, "bucket",
                               FIG_GRID);
    fig_curve(s, &a, xs, ys, n, th->series[0], t->cells ? 0 : 2, 0);
    /* both lines labelled: past either, every distance shares the last bucket of its side */
    char plus[32], minus[32];
    snprintf(plus, sizeof plus, "+%d", p->t5_max_distance);
    snprintf(minus, sizeof minus, "\xe2\x88\x92%d", p->t5_max_distance);
    /* A plot too narrow for even the short label outside the lines (a paper column: inside
     * them the curve climbs through every row) draws the lines bare; the subtitle gives
     * max_distance. */
    double outside = (R - p->t5_max_distance) / (2.0 * R + 1) * a.area.w;
    int labelled = t->cells || outside >= scene_text_width(t, plus, 0.75) + t->char_w;
    if (bidir)
        fig_vmark_short(s, t, th, &a, p->t5_max_distance, labelled ? "+max_distance" : NULL, plus);
    fig_vmark_short(s, t, th, &a, -p->t5_max_distance, labelled ? "\xe2\x88\x92max_distance" : NULL,
                    minus);
    free(xy);

    size_t nm = (size_t)fmin(p->len, ceil(fmax(1, fmin(right.w, right.h))));
    /* a matrix drawn on fewer units than positions shows a sample of them (app_grid_pos): its
     * key label says how many, so a reader knows the band of exact buckets is thinned */
    char klabel[128] = "key j";
    if (!t->cells) {
        if (marea_w > 0) nm = (size_t)fmin(p->len, ceil(fmax(1, marea_w)));
        if (nm < (size_t)p->len) {
            char ks[32];
            fig_num(p->len, 3, ks, sizeof ks);
            snprintf(klabel, sizeof klabel, "key j (%zu of %s shown)", nm, ks);
            if (scene_text_width(t, klabel, 1.0) > right.w)
                snprintf(klabel, sizeof klabel, "key j (%zu of %s)", nm, ks);
        }
    }
    const float *bm = t5_matrix(c, src, h, nm, err, errlen);
    if (!bm) return -1;
    double lo = bm[nm * nm], hi = bm[nm * nm + 1];
    /* window is ALiBi's reading (exp(bias) of a fixed slope); a T5 head keeps its own range */
    if (st->scale_shared == APP_SCALE_SHARED) t5_shared_range(src, &lo, &hi);
    double vmin, vmax;
    const cmap *map = app_pick_map(st, lo, hi, &vmin, &vmax);
    fig_axes m;
    if (cbar_below) {
        m = fig_axes_draw(s, t, th, right, 0, p->len, 0, p->len, klabel, "query i", FIG_Y_DOWN);
        scene_heatmap(s, m.area.x, m.area.y, m.area.w, m.area.h, bm, nm, nm, nm, vmin, vmax, map,
                      th->mask);
        fig_colorbar_h_side(s, t, th,
                            (fig_rect){m.area.x, right.y + right.h + t->char_w, m.area.w, 0}, vmin,
                            vmax, map, "bias");
    } else {
        m = app_draw_matrix(s, t, th, right, bm, nm, nm, nm, 0, p->len, 0, p->len, klabel,
                            "query i", map, vmin, vmax, "bias", th->mask);
    }
    c->main = m;
    fig_mark_main(s, m.area, "plot");
    c->has_main = 1;
    c->main_rows = c->main_cols = p->len;
    if (st->cursor_on) {
        int i = st->cur_r < p->len ? (st->cur_r < 0 ? 0 : st->cur_r) : p->len - 1;
        int j = st->cur_c < p->len ? (st->cur_c < 0 ? 0 : st->cur_c) : p->len - 1;
        app_draw_cell_cursor(s, t, th, &m, i, j);
        double fx = fig_x(&a, j - i);
        if (t->cells) fx = floor(fx) + 0.5;
        app_cursor_line(s, t, th, fx, a.area.y, fx, a.area.y + a.area.h);
        /* the exact value under the cursor (the figure may be sampled) */
        int bk = t5_bucket_of(p, j - i);
        double v = (!bidir && j > i) ? -INFINITY : src->vals[(size_t)h * (size_t)nb + (size_t)bk];
        if (isfinite(v))
            snprintf(c->readout, sizeof c->readout, "i %d  j %d  rel %d  bucket %d  bias %+.6g", i,
                     j, j - i, bk, v);
        else
            snprintf(c->readout, sizeof c->readout, "i %d  j %d  rel %d  masked (causal: j > i)", i,
                     j, j - i);
    }
    return 0;
}

static int t5v_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    t5_src src;
    if (t5_source(c, st, &src, err, errlen) < 0) return -1;
    const pe_params *p = &src.p;
    int R = t5_range(p), h = t5_head(st, p);
    size_t n = 2 * (size_t)R + 1;
    if (app_data_alloc(out, 2, n, 3, 0, err, errlen) < 0) {
        t5_src_free(&src);
        return -1;
    }
    const float *v = src.vals + (size_t)h * (size_t)p->t5_buckets;
    for (size_t i = 0; i < n; i++) {
        int rel = (int)i - R, bk = t5_bucket_of(p, rel);
        double *row = out->data + i * 3;
        row[0] = rel;
        row[1] = bk;
        row[2] = (!p->t5_bidirectional && rel > 0) ? -INFINITY : v[bk];
    }
    out->f64 = 1;
    snprintf(out->what, sizeof out->what,
             "(2R+1, 3): rel = j - i from -%d to %d, its bucket, head %d's bias bias[i][j] = "
             "value[bucket(j - i)] (-inf: masked, causal), %s",
             R, R, h, src.t ? "trained (assets/models/t5.pelab)" : "seeded init");
    t5_src_free(&src);
    return 0;
}

const app_view app_view_t5 = {
    .name = "t5",
    .description =
        "T5 relative buckets: distance -> bucket, and the (L, L) bias one head gets from them",
    .validate = t5v_validate,
    .build = t5v_build,
    .data = t5v_data,
    .options = "len heads head buckets max-distance t5 scale seed weights cmap",
    /* the title says "head h of N" */
    .not_in_subtitle = "heads",
    .idle = t5v_idle,
};
