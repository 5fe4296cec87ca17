/* table.c: the trained position table (issue 23, point 1): what training made of a model's
 * position parameters, read through the model interface (lmi_pos_params).
 *
 *   learned (the shipped model, a GPT-2)  the (positions, d) table as a heatmap, the cosine
 *       similarity of its rows, the principal components of its rows against position and the
 *       first three as a projected 3-D curve (GPT-2's helix). PCA is fitted on the rows training
 *       reached (the context); the rows past it, which never got a gradient, are projected onto
 *       the same components and drawn dashed, and every panel marks where they start.
 *   sinusoidal  the same four panels of its fixed table (nothing trained: the contrast).
 *   T5          each head's trained bias against the signed distance j - i.
 *   ALiBi       the slopes in use per head against the paper's.
 *   RoPE        the frequencies of the trained base against the default base 10000.
 *   NoPE        nothing to show: said so.
 * --weights init shows the values the model started from (pelab's own models record the seed).
 * --part picks one panel of a table (and what the CSV/NPY export holds). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "colormap.h"
#include "measure.h"
#include "options.h"
#include "trained.h"
#include "views.h"

enum { PART_ALL, PART_TABLE, PART_COSINE, PART_PCA, PART_CURVE };
static const char *const part_names[] = {"all", "table", "cosine", "pca", "curve", NULL};
static const char *const weights_names[] = {"trained", "init", NULL};
/* in a subtitle (t5: the trained model's values, or pe/'s seeded ones under the options) */
static const char *const weights_words[] = {"trained values", "values seeded, as at init", NULL};

#define TAB_K 4 /* principal components computed and drawn */

/* What the table panels derive from the values, cached: cosine (rows, rows) float, PCA scores
 * (rows, TAB_K) double (the unreached rows projected onto the reached rows' components) and each
 * component's share of the reached rows' variance. */
typedef struct tab_calc {
    int rows, cols, k;
    double share[TAB_K];
    double *scores; /* points into mem */
    float *cos;     /* points into mem */
    double mem[];
} tab_calc;

/* The model's parameters and, for a table or T5's biases, the values --weights asks for (*v);
 * NULL with err for a model with nothing to show (NoPE) or values it lacks. */
static const app_trained *tab_model(app_view_ctx *c, const app_state *st, const float **v,
                                    char *err, size_t errlen)
{
    const app_trained *m = app_trained_get(c, 0, st->attn.model_name, err, errlen);
    if (!m) return NULL;
    *v = NULL;
    if (m->pos.kind == LMI_POS_NONE) {
        snprintf(err, errlen,
                 "--model %s: NoPE has no position parameters to show (only the causal mask "
                 "orders its tokens); try --model learned or t5",
                 st->attn.model_name);
        return NULL;
    }
    if (m->pos.kind == LMI_POS_TABLE || m->pos.kind == LMI_POS_BUCKETS) {
        *v = app_trained_values(m, st->attn.weights_init, err, errlen);
        if (!*v) return NULL;
    }
    return m;
}

/* cos(row i, row j); 0 for a zero row */
static void tab_cosine(const float *v, int rows, int cols, float *out)
{
    double *nrm = malloc(sizeof *nrm * (size_t)rows);
    if (!nrm) return;
    for (int i = 0; i < rows; i++) {
        double s = 0;
        for (int d = 0; d < cols; d++)
            s += (double)v[(size_t)i * cols + d] * v[(size_t)i * cols + d];
        nrm[i] = sqrt(s);
    }
    for (int i = 0; i < rows; i++)
        for (int j = i; j < rows; j++) {
            double s = 0;
            const float *a = v + (size_t)i * cols, *b = v + (size_t)j * cols;
            for (int d = 0; d < cols; d++) s += (double)a[d] * b[d];
            double den = nrm[i] * nrm[j];
            float x = den > 0 ? (float)(s / den) : 0.0f;
            out[(size_t)i * rows + j] = out[(size_t)j * rows + i] = x;
        }
    free(nrm);
}

static const tab_calc *tab_calc_get(app_view_ctx *c, const app_state *st, const app_trained *t,
                                    const float *v, char *err, size_t errlen)
{
    struct {
        char name[512];
        int init;
    } key;
    memset(&key, 0, sizeof key);
    snprintf(key.name, sizeof key.name, "%s", st->attn.model_name);
    key.init = st->attn.weights_init;
    tab_calc *r = app_cache_get(c, 1, &key, sizeof key);
    if (r) return r;
    int rows = t->pos.rows, cols = t->pos.cols, reached = t->pos.reached;
    if (reached < 2 || reached > rows) reached = rows;
    int k = cols < TAB_K ? cols : TAB_K;
    if (reached < 2 || k < 1) {
        snprintf(err, errlen, "%s: a table of %d rows has no principal components", t->name, rows);
        return NULL;
    }
    size_t nscores = (size_t)rows * TAB_K, ncos = (size_t)rows * rows;
    r = app_cache_put(c, 1, &key, sizeof key,
                      sizeof *r + nscores * sizeof(double) + ncos * sizeof(float));
    if (!r) {
        snprintf(err, errlen, "%s", app_cache_error());
        return NULL;
    }
    r->rows = rows;
    r->cols = cols;
    r->k = k;
    r->scores = r->mem;
    r->cos = (float *)(r->mem + nscores);
    tab_cosine(v, rows, cols, r->cos);
    /* PCA of the reached rows (pe_pca), then the rest projected onto the same components: the
     * loading of component c is X^T s_c / ((n - 1) var_c), X the centred rows, s_c their scores */
    pe_matrix m = {.rows = (size_t)rows, .cols = (size_t)cols, .data = (float *)v};
    double var[TAB_K];
    double *s = malloc(sizeof *s * (size_t)reached * (size_t)k);
    double *mean = calloc((size_t)cols, sizeof *mean),
           *load = calloc((size_t)cols * k, sizeof *load);
    int rc = s && mean && load ? 0 : -1;
    if (rc < 0) snprintf(err, errlen, "out of memory");
    if (rc == 0 && pe_pca(&m, (size_t)reached, k, s, var, r->share, err, errlen) != PE_OK) rc = -1;
    if (rc == 0) {
        for (int i = 0; i < reached; i++)
            for (int d = 0; d < cols; d++) mean[d] += v[(size_t)i * cols + d] / (double)reached;
        for (int q = 0; q < k; q++) {
            double den = (reached - 1) * var[q];
            for (int i = 0; i < reached && den > 0; i++)
                for (int d = 0; d < cols; d++)
                    load[(size_t)d * k + q] +=
                        (v[(size_t)i * cols + d] - mean[d]) * s[(size_t)i * k + q] / den;
        }
        for (int i = 0; i < rows; i++)
            for (int q = 0; q < TAB_K; q++) {
                double x = 0;
                if (q < k && i < reached)
                    x = s[(size_t)i * k + q];
                else if (q < k)
                    for (int d = 0; d < cols; d++)
                        x += (v[(size_t)i * cols + d] - mean[d]) * load[(size_t)d * k + q];
                r->scores[(size_t)i * TAB_K + q] = x;
            }
    }
    free(s);
    free(mean);
    free(load);
    if (rc < 0) {
        app_cache_put(c, 1, "", 0, 0);
        return NULL;
    }
    return r;
}

/* The 3-D curve of the first three components seen from azimuth 35 degrees, elevation 25. */
static void tab_project(const tab_calc *r, int i, double *x, double *y)
{
    const double az = 35 * APP_PI / 180, el = 25 * APP_PI / 180;
    const double *p = r->scores + (size_t)i * TAB_K;
    double p3 = r->k > 2 ? p[2] : 0, p2 = r->k > 1 ? p[1] : 0;
    *x = cos(az) * p[0] - sin(az) * p2;
    *y = sin(el) * (sin(az) * p[0] + cos(az) * p2) + cos(el) * p3;
}

static int tab_reached(const app_trained *t)
{
    int re = t->pos.reached;
    return re > 0 && re < t->pos.rows ? re : t->pos.rows;
}

/* where the rows training never reached begin: a short label (the subtitle says the rest) */
static void tab_mark_reached(scene *s, const scene_target *t, const fig_theme *th,
                             const fig_axes *a, const app_trained *m, int vertical)
{
    int re = tab_reached(m);
    if (re >= m->pos.rows) return;
    char shrt[32];
    snprintf(shrt, sizeof shrt, "ctx %d", re);
    /* a panel narrower than its label (a tall figure's cosine matrix): the line alone, the
     * table's panel above names it */
    double room = vertical ? a->area.h : a->area.w;
    if (!t->cells && scene_text_width(t, shrt, 0.75) > room * 0.8) {
        if (vertical)
            fig_vmark(s, t, th, a, re, NULL);
        else
            fig_hmark(s, t, th, a, re, NULL);
        return;
    }
    if (vertical)
        fig_vmark(s, t, th, a, re, shrt);
    else
        fig_hmark(s, t, th, a, re, shrt);
}

/* A legend in a strip above a plot (the PCA panel's curves fill their plot, so a legend inside
 * would cover them): a line sample and the name for each entry, side by side. r loses the
 * strip. */
static void tab_legend_strip(scene *s, const scene_target *t, const fig_theme *th, fig_rect *r,
                             const char *const *names, const uint32_t *col, const unsigned *fl,
                             int n)
{
    double h = t->cells ? 2 : t->text_h * 1.3;
    fig_rect top = *r;
    top.h = h;
    r->y += h;
    r->h -= h;
    double sample = t->cells ? 0 : t->text_h * 1.6, gap = t->cells ? 2 : t->text_h;
    double size = t->cells ? 1 : 0.9;
    /* the names in full when they fit, else up to their first blank ("PC1"), else none */
    for (int pass = 0; pass < 2; pass++) {
        char nm[4][48];
        double w = 0;
        for (int i = 0; i < n && i < 4; i++) {
            snprintf(nm[i], sizeof nm[i], "%s", names[i]);
            if (pass) nm[i][strcspn(nm[i], " ")] = '\0';
            w += sample + scene_text_width(t, nm[i], size) + (i ? gap : 0);
        }
        if (w > top.w) continue;
        double x = top.x + (top.w - w) / 2, y = top.y + top.h / 2;
        for (int i = 0; i < n && i < 4; i++) {
            /* the terminal has no room for a line sample: the name in the curve's colour */
            if (!t->cells) scene_line(s, x, y, x + sample * 0.85, y, col[i], 1.6, fl[i]);
            x += sample;
            scene_text(s, x, y, nm[i], size, SCENE_LEFT | SCENE_MIDDLE, t->cells ? col[i] : th->fg,
                       0);
            x += scene_text_width(t, nm[i], size) + gap;
        }
        return;
    }
}

static void tab_panel_table(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                            const app_state *st, const app_trained *m, const float *v,
                            fig_axes *out)
{
    double lo, hi, vmin, vmax;
    size_t n = (size_t)m->pos.rows * m->pos.cols;
    app_finite_range(v, n, &lo, &hi);
    const cmap *map = app_pick_map(st, lo, hi, &vmin, &vmax);
    *out = app_draw_matrix(s, t, th, r, v, (size_t)m->pos.rows, (size_t)m->pos.cols,
                           (size_t)m->pos.cols, 0, m->pos.cols, 0, m->pos.rows, "dimension",
                           "position", map, vmin, vmax, "value", th->mask);
    tab_mark_reached(s, t, th, out, m, 0);
    scene_name_panel(s, "table");
}

static void tab_panel_cosine(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                             const app_state *st, const app_trained *m, const tab_calc *k,
                             fig_axes *out)
{
    const cmap *map = st->map ? st->map : cmap_default_diverging();
    *out = app_draw_square_matrix(s, t, th, r, k->cos, (size_t)k->rows, (size_t)k->rows, 0, k->rows,
                                  "position j", "position i", map, -1, 1, "cos(row i, row j)",
                                  "cosine", th->mask);
    tab_mark_reached(s, t, th, out, m, 0);
    scene_name_panel(s, "cosine");
}

static void tab_panel_pca(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                          const app_trained *m, const tab_calc *k, fig_axes *out)
{
    int rows = k->rows, re = tab_reached(m), nk = k->k < 3 ? k->k : 3;
    double lo = 0, hi = 0;
    for (int i = 0; i < rows; i++)
        for (int q = 0; q < nk; q++) {
            double x = k->scores[(size_t)i * TAB_K + q];
            lo = fmin(lo, x), hi = fmax(hi, x);
        }
    if (hi - lo <= 0) hi = lo + 1;
    double pad = 0.05 * (hi - lo);
    char names[3][48];
    const char *nm[3];
    for (int q = 0; q < nk; q++) {
        snprintf(names[q], sizeof names[q], "PC%d (%.0f%%)", q + 1, 100 * k->share[q]);
        nm[q] = names[q];
    }
    uint32_t col[3];
    unsigned fl[3] = {0, SCENE_DASHED, SCENE_DOTTED};
    for (int q = 0; q < nk; q++) col[q] = th->series[q];
    tab_legend_strip(s, t, th, &r, nm, col, fl, nk);
    *out =
        fig_axes_draw(s, t, th, r, 0, rows - 1, lo - pad, hi + pad, "position", "score", FIG_GRID);
    double *xs = malloc(sizeof *xs * (size_t)rows * 2);
    if (!xs) return;
    double *ys = xs + rows;
    for (int q = 0; q < nk; q++) {
        for (int i = 0; i < rows; i++) {
            xs[i] = i;
            ys[i] = k->scores[(size_t)i * TAB_K + q];
        }
        /* solid over the trained rows, thin past them */
        fig_curve(s, out, xs, ys, (size_t)re, col[q], t->cells ? 0 : 1.6, fl[q]);
        if (re < rows)
            fig_curve(s, out, xs + re - 1, ys + re - 1, (size_t)(rows - re + 1), col[q],
                      t->cells ? 0 : 0.7, fl[q]);
    }
    free(xs);
    tab_mark_reached(s, t, th, out, m, 1);
    scene_name_panel(s, "pca");
}

static void tab_panel_curve(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                            const app_trained *m, const tab_calc *k, fig_axes *out)
{
    int rows = k->rows, re = tab_reached(m);
    double *xs = malloc(sizeof *xs * (size_t)rows * 2);
    if (!xs) return;
    double *ys = xs + rows, x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
    for (int i = 0; i < rows; i++) {
        tab_project(k, i, &xs[i], &ys[i]);
        x0 = fmin(x0, xs[i]), x1 = fmax(x1, xs[i]), y0 = fmin(y0, ys[i]), y1 = fmax(y1, ys[i]);
    }
    if (!(x1 > x0)) x1 = x0 + 1;
    if (!(y1 > y0)) y1 = y0 + 1;
    double px = 0.06 * (x1 - x0), py = 0.06 * (y1 - y0);
    *out = fig_axes_draw(s, t, th, r, x0 - px, x1 + px, y0 - py, y1 + py,
                         "PC1-PC3 projected (az 35\xc2\xb0, el 25\xc2\xb0)", NULL,
                         FIG_NO_XTICKS | FIG_NO_YTICKS);
    if (re < rows)
        fig_curve(s, out, xs + re - 1, ys + re - 1, (size_t)(rows - re + 1), th->muted,
                  t->cells ? 0 : 0.7, SCENE_DASHED);
    fig_curve(s, out, xs, ys, (size_t)re, th->series[0], t->cells ? 0 : 1.8, 0);
    /* where the curve starts and where training stopped */
    if (!t->cells) {
        double rad = t->text_h * 0.22;
        scene_circle(s, fig_x(out, xs[0]), fig_y(out, ys[0]), rad, th->series[0], 0, SCENE_FILL);
        scene_circle(s, fig_x(out, xs[re - 1]), fig_y(out, ys[re - 1]), rad, th->fg, 0, SCENE_FILL);
    }
    scene_textf(s, fig_x(out, xs[0]), fig_y(out, ys[0]), 0.8, SCENE_LEFT | SCENE_BOTTOM,
                th->series[0], 0, " 0");
    scene_textf(s, fig_x(out, xs[re - 1]), fig_y(out, ys[re - 1]), 0.8, SCENE_LEFT | SCENE_TOP,
                th->fg, 0, " %d", re - 1);
    free(xs);
    scene_name_panel(s, "curve");
}

static int tab_build_table(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                           const fig_theme *th, fig_rect r, const app_trained *m, const float *v,
                           char *err, size_t errlen)
{
    const tab_calc *k = tab_calc_get(c, st, m, v, err, errlen);
    if (!k) return -1;
    int part = st->attn.table_part;
    fig_axes a[4];
    int has[4] = {0};
    double gap = t->cells ? 2 : t->text_h * 1.2;
    if (part == PART_ALL) {
        /* A terminal: two rows of two, under 28 rows (a cell is 2 units high) the table and
         * its components side by side. Pixels: the arrangement from the figure's shape, by the
         * rule of every multi-panel view (fig_grid_pick): a row of four in a wide figure (7x3in),
         * two by two at the default size, a column in a tall one (a phone, a slide's side
         * panel); each panel about square under its tick labels, beside them and a colourbar.
         * Where that leaves the panels under five lines of text (a paper column 3.5x2.2in, the
         * projector zoom) the table alone, as large as the canvas allows (--part shows the
         * others one at a time). */
        int two = t->cells && r.h < 56, one = 0, rows = 2, cols = 2, pca_only = 0;
        double head = t->text_h * 2.6,
               side = t->text_h * 3.2 + fig_colorbar_width(t) + t->char_w * 2;
        if (!t->cells) {
            double content = 0;
            cols = fig_grid_pick(r, 4, 1.0, head, side, gap, 0, &rows, &content);
            /* the table is the figure's plot: in two rows (a short figure) it would keep less
             * than a third of the height, so the four go in one row, or the table alone */
            if (rows == 2 && (r.h - gap) / 2 - head < 0.34 * t->height) {
                cols = 4, rows = 1;
                content = fmin((r.w - 3 * gap) / 4 - side, r.h - head);
            }
            one = content < 5 * t->text_h;
        }
        fig_rect cell[4];
        for (int i = 0; i < 4; i++)
            cell[i] = two ? fig_grid_cell(r, 1, 2, 0, i & 1, gap)
                          : fig_grid_cell(r, rows, cols, i / cols, i % cols, gap);
        if (one) cell[0] = r;
        if (!t->cells && !one && cols == 1) {
            /* a column of four would leave the table, the figure's plot, a quarter of the
             * height: it keeps the top half, the other three share the rest by the same rule */
            fig_rect top = r, low = fig_take_bottom(&top, floor(r.h * 0.5), gap);
            double content3 = 0;
            int r3 = 1, c3 = fig_grid_pick(low, 3, 1.0, head, side, gap, 0, &r3, &content3);
            cell[0] = top;
            for (int i = 1; i < 4; i++)
                cell[i] = fig_grid_cell(low, r3, c3, (i - 1) / c3, (i - 1) % c3, gap);
            /* too narrow for three readable panels under it (300x600): the components alone
             * (as the table alone in a short figure; --part shows the others) */
            if (content3 < 5 * t->text_h) {
                pca_only = 1;
                cell[2] = low;
            }
        }
        tab_panel_table(s, t, th, cell[0], st, m, v, &a[0]), has[0] = 1;
        if (two) {
            tab_panel_pca(s, t, th, cell[1], m, k, &a[2]), has[2] = 1;
        } else if (pca_only) {
            tab_panel_pca(s, t, th, cell[2], m, k, &a[2]), has[2] = 1;
        } else if (!one) {
            tab_panel_cosine(s, t, th, cell[1], st, m, k, &a[1]), has[1] = 1;
            tab_panel_pca(s, t, th, cell[2], m, k, &a[2]), has[2] = 1;
            tab_panel_curve(s, t, th, cell[3], m, k, &a[3]), has[3] = 1;
        }
    } else if (part == PART_TABLE) {
        tab_panel_table(s, t, th, r, st, m, v, &a[0]), has[0] = 1;
    } else if (part == PART_COSINE) {
        tab_panel_cosine(s, t, th, r, st, m, k, &a[1]), has[1] = 1;
    } else if (part == PART_PCA) {
        tab_panel_pca(s, t, th, r, m, k, &a[2]), has[2] = 1;
    } else {
        tab_panel_curve(s, t, th, r, m, k, &a[3]), has[3] = 1;
    }
    int main = has[0] ? 0 : has[1] ? 1 : has[2] ? 2 : 3;
    c->main = a[main];
    c->has_main = 1;
    fig_mark_main(s, a[main].area, "plot");
    c->main_rows = k->rows;
    c->main_cols = main == 0 ? k->cols : k->rows;
    if (st->cursor_on && main <= 1) {
        int i = st->cur_r < k->rows ? (st->cur_r < 0 ? 0 : st->cur_r) : k->rows - 1;
        int j = st->cur_c < c->main_cols ? (st->cur_c < 0 ? 0 : st->cur_c) : c->main_cols - 1;
        app_draw_cell_cursor(s, t, th, &a[main], i, j);
        if (main == 0)
            snprintf(c->readout, sizeof c->readout, "position %d  dim %d  value %+.6f%s", i, j,
                     v[(size_t)i * k->cols + j], i >= tab_reached(m) ? "  (never trained)" : "");
        else
            snprintf(c->readout, sizeof c->readout, "i %d  j %d  cos %+.4f", i, j,
                     k->cos[(size_t)i * k->rows + j]);
    } else if (st->cursor_on && main == 2) {
        int i = st->cur_c < k->rows ? (st->cur_c < 0 ? 0 : st->cur_c) : k->rows - 1;
        app_cursor_vline(s, t, th, &a[2], i);
        snprintf(c->readout, sizeof c->readout, "position %d  PC1 %+.4f  PC2 %+.4f  PC3 %+.4f", i,
                 k->scores[(size_t)i * TAB_K], k->scores[(size_t)i * TAB_K + 1],
                 k->scores[(size_t)i * TAB_K + 2]);
        c->main_rows = 1;
        c->main_cols = k->rows;
    }
    return 0;
}

/* T5: R = the distances drawn, 1.5 x max_distance (the saturated last bucket shows) and at least
 * the context. */
static int t5_range(const app_trained *m)
{
    long r = (long)ceil(1.5 * m->pos.max_distance);
    if (r < m->ctx) r = m->ctx;
    return r > 4096 ? 4096 : (int)r;
}

static int tab_build_t5(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                        const fig_theme *th, fig_rect r, const app_trained *m, const float *v)
{
    int R = t5_range(m), H = m->pos.rows, nb = m->pos.buckets, bidir = m->pos.bidirectional;
    int n = bidir ? 2 * R + 1 : R + 1;
    double *xs = malloc(sizeof *xs * (size_t)n * 2);
    if (!xs) return -1;
    double *ys = xs + n, lo = INFINITY, hi = -INFINITY;
    for (int h = 0; h < H; h++)
        for (int b = 0; b < nb; b++) {
            lo = fmin(lo, v[(size_t)h * nb + b]);
            hi = fmax(hi, v[(size_t)h * nb + b]);
        }
    if (!(hi > lo)) hi = lo + 1;
    double pad = 0.06 * (hi - lo);
    char names[16][24];
    const char *nm[16];
    uint32_t col[16];
    unsigned fl[16];
    int shown = H < 8 ? H : 8;
    for (int h = 0; h < shown; h++) {
        snprintf(names[h], sizeof names[h], "head %d", h);
        nm[h] = names[h];
        col[h] = th->series[h % 8];
        fl[h] = h < 4 ? 0 : SCENE_DASHED;
    }
    fig_legend_slot slot = fig_legend_take(t, &r, nm, shown);
    fig_axes a = fig_axes_draw(s, t, th, r, -R, bidir ? R : 0, lo - pad, hi + pad,
                               "signed distance j - i", "bias", FIG_GRID);
    for (int h = 0; h < shown; h++) {
        for (int i = 0; i < n; i++) {
            int rel = -R + i;
            xs[i] = rel;
            ys[i] = v[(size_t)h * nb + pe_t5_bucket(rel, bidir, nb, m->pos.max_distance)];
        }
        fig_curve(s, &a, xs, ys, (size_t)n, col[h], t->cells ? 0 : 1.6, fl[h]);
    }
    free(xs);
    char lab[48];
    snprintf(lab, sizeof lab, "\xe2\x88\x92max_distance %d", m->pos.max_distance);
    fig_vmark(s, t, th, &a, -m->pos.max_distance, lab);
    if (m->ctx != m->pos.max_distance && m->ctx <= R) {
        snprintf(lab, sizeof lab,
                 "\xe2\x88\x92"
                 "ctx %d",
                 m->ctx);
        fig_vmark(s, t, th, &a, -m->ctx, lab);
    }
    if (!fig_legend_in_slot(s, t, th, &slot, nm, col, fl, shown))
        fig_legend_styled(s, t, th, &a, nm, col, fl, shown, 1);
    scene_name_panel(s, "bias");
    c->main = a;
    c->has_main = 1;
    fig_mark_main(s, a.area, "plot");
    c->main_rows = H;
    c->main_cols = n;
    if (st->cursor_on) {
        int h = st->cur_r < H ? (st->cur_r < 0 ? 0 : st->cur_r) : H - 1;
        int i = st->cur_c < n ? (st->cur_c < 0 ? 0 : st->cur_c) : n - 1;
        int rel = -R + i, b = pe_t5_bucket(rel, bidir, nb, m->pos.max_distance);
        app_cursor_vline(s, t, th, &a, rel);
        snprintf(c->readout, sizeof c->readout, "head %d  j - i = %d  bucket %d  bias %+.5f", h,
                 rel, b, v[(size_t)h * nb + b]);
    }
    return 0;
}

/* ALiBi slopes (log y) per head, or RoPE frequencies (log y) per pair: the model's values solid,
 * the defaults dashed. */
static int tab_build_line(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                          const fig_theme *th, fig_rect r, const app_trained *m)
{
    int rope = m->pos.kind == LMI_POS_ROPE;
    int n = rope ? m->pos.rot_dim / 2 : m->heads;
    if (n < 1) n = 1;
    double *buf = malloc(sizeof *buf * (size_t)n * 3);
    if (!buf) return -1;
    double *xs = buf, *ya = buf + n, *yb = buf + 2 * n, lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < n; i++) {
        xs[i] = i;
        if (rope) {
            double e = 2.0 * i / m->pos.rot_dim;
            ya[i] = pow(m->pos.base, -e);
            yb[i] = pow(m->default_base, -e);
        } else {
            ya[i] = m->pos.slopes ? m->pos.slopes[i] : 0;
            yb[i] = m->default_slopes[i];
        }
        if (ya[i] > 0) lo = fmin(lo, ya[i]), hi = fmax(hi, ya[i]);
        if (yb[i] > 0) lo = fmin(lo, yb[i]), hi = fmax(hi, yb[i]);
    }
    if (!(lo > 0) || !(hi > lo)) lo = 1e-3, hi = 1;
    char na[64], nb2[80];
    int same = 1; /* the defaults equal the model's: the legend says so (both drawn, one dashed) */
    for (int i = 0; i < n; i++) same &= fabs(ya[i] - yb[i]) <= 1e-12 * fabs(yb[i]);
    if (rope) {
        snprintf(na, sizeof na, "model's base %.6g", m->pos.base);
        snprintf(nb2, sizeof nb2, "default base %.6g%s", m->default_base,
                 same ? " (= model's)" : "");
    } else {
        snprintf(na, sizeof na, "model's slopes");
        snprintf(nb2, sizeof nb2, "the paper's 2^(-8(h+1)/H)%s", same ? " (= model's)" : "");
        /* a narrow figure (a column 2.2in wide): the formula is the paper's, its name says it */
        if (!t->cells && scene_text_width(t, nb2, 0.85) > 0.55 * r.w)
            snprintf(nb2, sizeof nb2, "paper's%s", same ? " (= model's)" : "");
    }
    const char *nm[2] = {na, nb2};
    uint32_t col[2] = {th->series[0], th->series[1]};
    unsigned fl[2] = {0, SCENE_DASHED};
    fig_legend_slot slot = fig_legend_take(t, &r, nm, 2);
    fig_axes a = fig_axes_draw(s, t, th, r, n > 1 ? -0.5 : -1, n > 1 ? n - 0.5 : 1, lo / 1.5,
                               hi * 1.5, rope ? "rotary pair k" : "head",
                               rope ? "frequency \xce\xb8\xe2\x82\x96 (rad/position)" : "slope m",
                               FIG_GRID | FIG_YLOG);
    fig_curve(s, &a, xs, ya, (size_t)n, col[0], t->cells ? 0 : 1.8, 0);
    if (!t->cells)
        for (int i = 0; i < n; i++)
            scene_circle(s, fig_x(&a, xs[i]), fig_y(&a, ya[i]), t->text_h * 0.18, col[0], 0,
                         SCENE_FILL);
    fig_curve(s, &a, xs, yb, (size_t)n, col[1], t->cells ? 0 : 1.4, SCENE_DASHED);
    if (rope) { /* the first pair whose wavelength 2 pi / theta exceeds the context */
        for (int i = 0; i < n; i++)
            if (2 * APP_PI / ya[i] > m->ctx) {
                char lab[64];
                snprintf(lab, sizeof lab, "wavelength > ctx %d", m->ctx);
                fig_vmark(s, t, th, &a, i, lab);
                break;
            }
    }
    if (!fig_legend_in_slot(s, t, th, &slot, nm, col, fl, 2))
        fig_legend_styled(s, t, th, &a, nm, col, fl, 2, 1);
    scene_name_panel(s, rope ? "frequencies" : "slopes");
    c->main = a;
    c->has_main = 1;
    fig_mark_main(s, a.area, "plot");
    c->main_rows = 1;
    c->main_cols = n;
    if (st->cursor_on) {
        int i = st->cur_c < n ? (st->cur_c < 0 ? 0 : st->cur_c) : n - 1;
        app_cursor_vline(s, t, th, &a, i);
        snprintf(c->readout, sizeof c->readout, "%s %d  model %.6g  default %.6g",
                 rope ? "pair" : "head", i, ya[i], yb[i]);
    }
    free(buf);
    return 0;
}

static int table_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                       char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    const float *v;
    const app_trained *m = tab_model(c, st, &v, err, errlen);
    if (!m) return -1;
    int kind = m->pos.kind, init = st->attn.weights_init;
    char title[256], sub[512];
    const char *what = init && m->pos.trained ? "at init" : m->pos.trained ? "trained" : "fixed";
    switch (kind) {
    case LMI_POS_TABLE:
        snprintf(title, sizeof title, "%s: its %s position table", m->name,
                 m->pos.trained ? (init ? "initial" : "trained") : "fixed (untrained)");
        if (tab_reached(m) < m->pos.rows)
            snprintf(sub, sizeof sub,
                     "%d positions x d=%d; rows from %d never trained; PCA on rows 0-%d",
                     m->pos.rows, m->pos.cols, tab_reached(m), tab_reached(m) - 1);
        else
            snprintf(sub, sizeof sub, "%d positions x d=%d", m->pos.rows, m->pos.cols);
        break;
    case LMI_POS_BUCKETS:
        snprintf(title, sizeof title, "T5 biases of %s (%s), each head against distance", m->name,
                 what);
        snprintf(sub, sizeof sub,
                 "%d heads x %d buckets, max_distance %d, %s, shared by all %d "
                 "layers",
                 m->pos.rows, m->pos.buckets, m->pos.max_distance,
                 m->pos.bidirectional ? "bidirectional" : "causal", m->layers);
        break;
    case LMI_POS_SLOPES:
        snprintf(title, sizeof title, "ALiBi slopes of %s against the paper's", m->name);
        snprintf(sub, sizeof sub, "%d heads; bias -m (i - j); %s", m->heads,
                 m->pos.trained ? "trained slopes"
                                : "ALiBi fixes its slopes: training leaves them");
        break;
    default:
        snprintf(title, sizeof title, "RoPE frequencies of %s: base %.6g against %.6g", m->name,
                 m->pos.base, m->default_base);
        snprintf(sub, sizeof sub, "rotary dim %d, theta_k = base^(-2k/d); context %d",
                 m->pos.rot_dim, m->ctx);
        break;
    }
    fig_rect r = app_frame(s, t, th, title, sub);
    if (kind == LMI_POS_TABLE) return tab_build_table(c, st, s, t, th, r, m, v, err, errlen);
    if (kind == LMI_POS_BUCKETS) return tab_build_t5(c, st, s, t, th, r, m, v);
    return tab_build_line(c, st, s, t, th, r, m);
}

/* The numbers, one layout rule: (layers, heads, ...) where the values have layers and heads
 * (T5's biases: (1, heads, distance), shared by the layers; ALiBi: (1, heads, 2)); a table's
 * own axes otherwise; the header names every axis. */
static int table_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    const float *v;
    const app_trained *m = tab_model(c, st, &v, err, errlen);
    if (!m) return -1;
    int kind = m->pos.kind, init = st->attn.weights_init, part = st->attn.table_part;
    const char *src = init && m->pos.trained ? "init" : m->pos.trained ? "trained" : "fixed";
    if (kind == LMI_POS_TABLE) {
        int rows = m->pos.rows, cols = m->pos.cols;
        if (part == PART_ALL || part == PART_TABLE) {
            if (app_data_alloc(out, 2, (size_t)rows, (size_t)cols, 0, err, errlen) < 0) return -1;
            for (size_t i = 0; i < (size_t)rows * cols; i++) out->data[i] = v[i];
            int re = tab_reached(m);
            if (re < rows)
                snprintf(out->what, sizeof out->what,
                         "(position, dim): the %s position table of %.60s; rows %d..%d never "
                         "trained",
                         src, m->name, re, rows - 1);
            else
                snprintf(out->what, sizeof out->what,
                         "(position, dim): the %s position table of %.60s", src, m->name);
            return 0;
        }
        const tab_calc *k = tab_calc_get(c, st, m, v, err, errlen);
        if (!k) return -1;
        if (part == PART_COSINE) {
            if (app_data_alloc(out, 2, (size_t)rows, (size_t)rows, 0, err, errlen) < 0) return -1;
            for (size_t i = 0; i < (size_t)rows * rows; i++) out->data[i] = k->cos[i];
            snprintf(out->what, sizeof out->what,
                     "(position, position): cosine similarity of the %s table's rows, %.60s", src,
                     m->name);
            return 0;
        }
        int nk = part == PART_CURVE ? (k->k < 3 ? k->k : 3) : k->k;
        if (app_data_alloc(out, 2, (size_t)rows, (size_t)nk, 0, err, errlen) < 0) return -1;
        for (int i = 0; i < rows; i++)
            for (int q = 0; q < nk; q++)
                out->data[(size_t)i * nk + q] = k->scores[(size_t)i * TAB_K + q];
        out->f64 = 1;
        int u =
            snprintf(out->what, sizeof out->what,
                     "(position, component): PCA scores of the %s table of %.60s, fitted on rows "
                     "0..%d; variance shares",
                     src, m->name, tab_reached(m) - 1);
        for (int q = 0; q < nk && u > 0 && (size_t)u < sizeof out->what; q++)
            u += snprintf(out->what + u, sizeof out->what - (size_t)u, " %.4f", k->share[q]);
        return 0;
    }
    if (kind == LMI_POS_BUCKETS) {
        int R = t5_range(m), H = m->pos.rows, nb = m->pos.buckets, bidir = m->pos.bidirectional;
        int n = bidir ? 2 * R + 1 : R + 1;
        if (app_data_alloc(out, 3, 1, (size_t)H, (size_t)n, err, errlen) < 0) return -1;
        for (int h = 0; h < H; h++)
            for (int i = 0; i < n; i++)
                out->data[(size_t)h * n + i] =
                    v[(size_t)h * nb + pe_t5_bucket(-R + i, bidir, nb, m->pos.max_distance)];
        out->f64 = 1;
        snprintf(out->what, sizeof out->what,
                 "(layers, heads, distance): the %s T5 bias at j - i = -%d + distance (layers 1: "
                 "one table shared by all %d layers), %.60s",
                 src, R, m->layers, m->name);
        return 0;
    }
    int rope = kind == LMI_POS_ROPE, n = rope ? m->pos.rot_dim / 2 : m->heads;
    if (app_data_alloc(out, 3, 1, (size_t)n, 2, err, errlen) < 0) return -1;
    for (int i = 0; i < n; i++) {
        double e = 2.0 * i / (rope ? m->pos.rot_dim : 1);
        out->data[(size_t)i * 2] = rope ? pow(m->pos.base, -e) : m->pos.slopes[i];
        out->data[(size_t)i * 2 + 1] = rope ? pow(m->default_base, -e) : m->default_slopes[i];
    }
    out->f64 = 1;
    if (rope)
        snprintf(out->what, sizeof out->what,
                 "(layers, pair, value): theta_k of the model's base %.6g, then of the default "
                 "%.6g (layers 1: every layer rotates alike), %.60s",
                 m->pos.base, m->default_base, m->name);
    else
        snprintf(out->what, sizeof out->what,
                 "(layers, heads, value): the model's ALiBi slope, then the paper's (layers 1: "
                 "shared by all layers), %.60s",
                 m->name);
    return 0;
}

/* --weights applies where a trained model's values are drawn: this view, the t5 view, and a
 * learned table (heatmap and similarity --pe learned, decay's learned curve) */
static int weights_applies(const app_state *st)
{
    const char *v = app_view_at((size_t)st->view)->name;
    return !strcmp(v, "table") || !strcmp(v, "t5") ||
           ((!strcmp(v, "heatmap") || !strcmp(v, "similarity")) && st->enc &&
            !strcmp(st->enc->name, "learned")) ||
           (!strcmp(v, "decay") && (st->decay.curves & APP_CURVE_LEARNED));
}

/* --weights is also read by heatmap, similarity, decay and t5 (they list it; the rows register
 * here) */
const app_option app_table_rows[] = {
    {APP_CHO("part", NULL,
             "table view: all|table|cosine|pca|curve (one panel of a position table, and what "
             "its export holds)",
             attn.table_part, part_names)},
    {APP_CHO("weights", NULL,
             "position values of a trained model: trained|init (init: the seeded start, what "
             "training began from)",
             attn.weights_init, weights_names),
     .applies = weights_applies, .sub = {.words = weights_words}},
    {.name = NULL},
};

const app_view app_view_table = {
    .name = "table",
    .description = "a trained model's position table, T5 biases, ALiBi slopes or RoPE base",
    .build = table_build,
    .data = table_data,
    .options = "model part weights cmap",
};
