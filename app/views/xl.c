/* xl.c: Transformer-XL's relative attention score (Dai et al. 2019, reference section 7) split
 * into its four terms, each an (L, L) matrix over query i (rows) and key j (columns):
 *   (a) content           q_i . k_j
 *   (b) content-position  q_i . W_R R_{i-j}
 *   (c) global content    u . k_j         (the same for every query: vertical stripes)
 *   (d) global position   v . W_R R_{i-j} (depends on i - j only: constant along diagonals)
 * with seeded random q, k, u, v and W_R (pe_xl_terms), all divided by sqrt(d), causal. One
 * diverging colour range for the four, so their sizes compare. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "view_list.h"

static const char *const term_title[4] = {
    "(a) content q.k",
    "(b) content-position q.W_R R(i-j)",
    "(c) global content u.k",
    "(d) global position v.W_R R(i-j)",
};

static int xlv_validate(const app_state *st, char *err, size_t errlen)
{
    if (pe_encoding_find("xl")->validate(&st->p, err, errlen) < 0) return -1;
    return pe_check_cells(4 * (size_t)st->p.len, (size_t)st->p.len, "4 x --len x --len", err,
                          errlen) < 0
               ? -1
               : 0;
}

static void free_terms(pe_matrix terms[4])
{
    for (int i = 0; i < 4; i++) pe_matrix_free(&terms[i]);
}

typedef struct xl_key {
    int dim, len;
    double base;
    uint64_t seed;
    size_t n; /* the sampled size; 0 for the whole terms */
} xl_key;

static xl_key make_key(const pe_params *p, size_t n)
{
    xl_key k;
    memset(&k, 0, sizeof k);
    k.dim = p->dim;
    k.len = p->len;
    k.base = p->base;
    k.seed = p->seed;
    k.n = n;
    return k;
}

/* The four (L, L) terms one after the other, then the largest |value| and the four terms' rms
 * (over the unmasked cells), cached. NULL with err on failure. */
static const float *xl_terms(app_view_ctx *c, const pe_params *p, char *err, size_t errlen)
{
    xl_key key = make_key(p, 0);
    float *out = app_cache_get(c, 0, &key, sizeof key);
    if (out) return out;
    pe_matrix terms[4] = {{0}};
    if (pe_xl_terms(p, terms, err, errlen) < 0) return NULL;
    size_t LL = (size_t)p->len * (size_t)p->len;
    out = app_cache_put(c, 0, &key, sizeof key, (4 * LL + 5) * sizeof *out);
    if (!out) {
        free_terms(terms);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    double amax = 0;
    for (int k = 0; k < 4; k++) {
        memcpy(out + k * LL, terms[k].data, LL * sizeof *out);
        double ss = 0;
        size_t cnt = 0;
        for (size_t i = 0; i < LL; i++) {
            float v = terms[k].data[i];
            if (!isfinite(v)) continue;
            amax = fmax(amax, fabs(v));
            ss += (double)v * v;
            cnt++;
        }
        out[4 * LL + 1 + k] = (float)(cnt ? sqrt(ss / cnt) : 0);
    }
    out[4 * LL] = (float)amax;
    free_terms(terms);
    return out;
}

/* The four terms sampled on an n x n grid of positions (n <= L: the figure's resolution). */
static const float *xl_sampled(app_view_ctx *c, const pe_params *p, size_t n, char *err,
                               size_t errlen)
{
    xl_key key = make_key(p, n);
    float *out = app_cache_get(c, 1, &key, sizeof key);
    if (out) return out;
    const float *all = xl_terms(c, p, err, errlen);
    if (!all) return NULL;
    out = app_cache_put(c, 1, &key, sizeof key, 4 * n * n * sizeof *out);
    if (!out) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    size_t L = (size_t)p->len;
    for (int k = 0; k < 4; k++)
        for (size_t i = 0; i < n; i++) {
            /* the position at the centre of display row i */
            size_t pi = n == L ? i : (size_t)(((double)i + 0.5) * (double)L / (double)n);
            for (size_t j = 0; j < n; j++) {
                size_t pj = n == L ? j : (size_t)(((double)j + 0.5) * (double)L / (double)n);
                out[k * n * n + i * n + j] = all[k * L * L + pi * L + pj];
            }
        }
    return out;
}

static int xlv_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                     char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    const pe_params *p = &st->p;
    const float *all = xl_terms(c, p, err, errlen);
    if (!all) return -1;
    int L = p->len;
    size_t LL = (size_t)L * (size_t)L;
    double amax = all[4 * LL];
    const float *rms = all + 4 * LL + 1;
    double vmin, vmax;
    /* one range for the four; a few large content products would wash the others out, so the
     * colours stop at 3x the largest rms (values beyond take the end colours) */
    double big = fmax(fmax(rms[0], rms[1]), fmax(rms[2], rms[3]));
    double lim = big > 0 ? fmin(amax, 3 * big) : amax;
    const cmap *map = app_pick_map(st, -lim, lim, &vmin, &vmax);

    char title[160], sub[256];
    snprintf(title, sizeof title, "Transformer-XL score = (a) + (b) + (c) + (d), each / sqrt(d)");
    app_subtitle(st, NULL, APP_SUB_DIM | APP_SUB_LEN | APP_SUB_BASE | APP_SUB_SEED, sub,
                 sizeof sub);
    size_t u = strlen(sub);
    u += (size_t)snprintf(sub + u, sizeof sub - u,
                          " (random q,k,u,v,W_R)  rows query i, columns key j  rms a/b/c/d "
                          "%.2g/%.2g/%.2g/%.2g",
                          rms[0], rms[1], rms[2], rms[3]);
    if (lim < amax && u < sizeof sub)
        snprintf(sub + u, sizeof sub - u, "  colours clipped at +-%.2g (max %.2g)", lim, amax);
    fig_rect r = app_frame(s, t, th, title, sub);
    fig_rect bar = fig_take_right(&r, fig_colorbar_width(t), t->char_w * 2);
    /* one sampling for the four panels, at the size of the first */
    fig_rect c0 = fig_grid_cell(r, 2, 2, 0, 0, t->cells ? 3 : t->text_h * 0.8);
    size_t n = (size_t)fmin(L, ceil(fmax(1, fmin(c0.w, c0.h))));
    const float *smp = xl_sampled(c, p, n, err, errlen);
    if (!smp) return -1;
    double gap = t->cells ? 3 : t->text_h * 0.8;
    double lh = t->cells ? 2 : t->text_h * 1.1;
    fig_axes ax[4];
    for (int i = 0; i < 4; i++) {
        fig_rect cell = fig_grid_cell(r, 2, 2, i / 2, i % 2, gap);
        /* a cell target wants text at a whole cell (integer x, even y) */
        double tx = cell.x + cell.w / 2, ty = cell.y;
        if (t->cells) {
            tx = fmax(cell.x, floor(tx - scene_text_width(t, term_title[i], 1) / 2));
            ty = 2 * ceil(ty / 2);
        }
        scene_text(s, tx, ty, term_title[i], t->cells ? 1 : 0.9,
                   (t->cells ? SCENE_LEFT : SCENE_CENTER) | SCENE_TOP, th->fg, 0);
        s->text_h = t->text_h;
        if (t->cells) {
            cell.h -= ty - cell.y;
            cell.y = ty;
        }
        cell.y += lh;
        cell.h -= lh;
        ax[i] = fig_axes_draw(s, t, th, cell, 0, L, 0, L, NULL, NULL, FIG_Y_DOWN);
        scene_heatmap(s, ax[i].area.x, ax[i].area.y, ax[i].area.w, ax[i].area.h, smp + i * n * n, n,
                      n, n, vmin, vmax, map, th->mask);
    }
    bar.y = ax[0].area.y;
    bar.h = ax[2].area.y + ax[2].area.h - bar.y;
    fig_colorbar(s, t, th, bar, vmin, vmax, map, "term value");

    c->main = ax[0];
    c->has_main = 1;
    c->main_rows = c->main_cols = L;
    if (st->cursor_on) {
        int i = st->cur_r < L ? (st->cur_r < 0 ? 0 : st->cur_r) : L - 1;
        int j = st->cur_c < L ? (st->cur_c < 0 ? 0 : st->cur_c) : L - 1;
        for (int k = 0; k < 4; k++) app_draw_cell_cursor(s, th, &ax[k], i, j);
        if (j > i) {
            snprintf(c->readout, sizeof c->readout, "i %d  j %d  masked (j > i: the future)", i, j);
        } else {
            float v[4];
            for (int k = 0; k < 4; k++) v[k] = all[k * LL + (size_t)i * L + j];
            snprintf(c->readout, sizeof c->readout,
                     "i %d  j %d  i-j %d  (a) %+.4f  (b) %+.4f  (c) %+.4f  (d) %+.4f  sum %+.4f", i,
                     j, i - j, v[0], v[1], v[2], v[3], (double)v[0] + v[1] + v[2] + v[3]);
        }
    }
    return 0;
}

static int xlv_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    const float *all = xl_terms(c, &st->p, err, errlen);
    if (!all) return -1;
    size_t L = (size_t)st->p.len;
    if (app_data_alloc(out, 3, 4, L, L, err, errlen) < 0) return -1;
    for (size_t i = 0; i < 4 * L * L; i++) out->data[i] = all[i];
    snprintf(out->what, sizeof out->what,
             "(4, len, len): Transformer-XL terms [content q.k, content-position q.W_R R(i-j), "
             "global content u.k, global position v.W_R R(i-j)] / sqrt(d), query i, key j; -inf "
             "where masked");
    return 0;
}

const app_view app_view_xl = {
    "xl",
    "Transformer-XL's four score terms (content, content-position, global) as heatmaps",
    xlv_validate,
    xlv_build,
    xlv_data,
};
