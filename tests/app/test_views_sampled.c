/* test_views_sampled.c: the views draw their matrices and curves at the figure's resolution
 * (issue 14), so what they draw must be the full computation's numbers at the sampled positions.
 * Each case builds a view for a window-sized and a terminal-sized target, walks the scene's
 * heatmaps and curves, and compares every drawn value with the view's own full-resolution data
 * (what `pelab export --data` writes) at the same position. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cellgrid.h"
#include "options.h"
#include "raster.h"
#include "tap.h"
#include "views.h"

static int setup(app_state *st, const char *const *opts)
{
    char err[512];
    app_state_default(st);
    for (int i = 0; opts[i]; i += 2)
        if (app_option_set(st, app_option_find(opts[i]), opts[i + 1], err, sizeof err) != 0) {
            TAP_OK(0, "option %s %s: %s", opts[i], opts[i + 1], err);
            return -1;
        }
    return 0;
}

/* The k-th heatmap item of s, or NULL. */
static const scene_item *nth_heat(const scene *s, int k)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->items[i].kind == SCENE_HEATMAP && k-- == 0) return &s->items[i];
    return NULL;
}

static int same(double drawn, double full, double tol)
{
    if (!isfinite(drawn) || !isfinite(full)) return isfinite(drawn) == isfinite(full);
    return fabs(drawn - full) <= tol * fmax(1, fabs(full));
}

/* value(full data, matrix m, row r, col c) for a matrix view */
typedef double (*full_at)(const app_data *d, const app_state *st, size_t m, size_t r, size_t c);

static double at_3d(const app_data *d, const app_state *st, size_t m, size_t r, size_t c)
{
    (void)st;
    return d->data[(m * d->shape[1] + r) * d->shape[2] + c];
}

/* ALiBi's window scale draws exp(bias) of the data's bias (-inf, masked, stays -inf) */
static double at_3d_exp(const app_data *d, const app_state *st, size_t m, size_t r, size_t c)
{
    double b = at_3d(d, st, m, r, c);
    return isfinite(b) ? exp(b) : b;
}

static double at_2d(const app_data *d, const app_state *st, size_t m, size_t r, size_t c)
{
    (void)st;
    (void)m;
    return d->data[r * d->shape[1] + c];
}

/* t5's data is one row per rel = j - i in -R..R: (rel, bucket, bias) */
static double at_t5(const app_data *d, const app_state *st, size_t m, size_t r, size_t c)
{
    (void)st;
    (void)m;
    long R = (long)(d->shape[0] - 1) / 2, rel = (long)c - (long)r;
    return d->data[(size_t)(rel + R) * 3 + 2];
}

static void check_matrix(const char *label, const char *const *opts, int nmat, size_t rows,
                         size_t cols, full_at at, double tol)
{
    app_state st;
    if (setup(&st, opts) < 0) return;
    char err[512];
    TAP_OK(app_state_validate(&st, err, sizeof err) == 0, "%s: valid (%s)", label, err);
    app_view_ctx c = {0};
    app_data d = {0};
    const app_view *v = app_view_at((size_t)st.view);
    if (v->data(&c, &st, &d, err, sizeof err) != 0) {
        TAP_OK(0, "%s: data (%s)", label, err);
        return;
    }
    scene_target tg[2] = {raster_target(900, 600, raster_font_px(900, 600, 1)),
                          cellgrid_target(200, 60)};
    for (int ti = 0; ti < 2; ti++) {
        scene s;
        scene_init(&s, 1, 1, 0);
        int rc = app_view_build(&c, &st, &s, &tg[ti], err, sizeof err);
        TAP_OK(rc == 0, "%s, %s: builds (%s)", label, ti ? "terminal" : "window", err);
        size_t checked = 0, bad = 0, sampled = 0;
        for (int m = 0; rc == 0 && m < nmat; m++) {
            const scene_item *it = nth_heat(&s, m);
            if (!it) {
                bad++;
                break;
            }
            size_t nr = it->u.heat.rows, nc = it->u.heat.cols;
            sampled += nr < rows || nc < cols;
            for (size_t i = 0; i < nr; i++)
                for (size_t j = 0; j < nc; j++) {
                    size_t r = app_grid_pos(i, nr, rows), cc = app_grid_pos(j, nc, cols);
                    double full = at(&d, &st, (size_t)m, r, cc);
                    if (!same(it->u.heat.data[i * nc + j], full, tol)) {
                        if (bad++ < 3)
                            tap_diag("%s: matrix %d at (%zu, %zu): drawn %g, full %g", label, m, r,
                                     cc, (double)it->u.heat.data[i * nc + j], full);
                    }
                    checked++;
                }
        }
        TAP_OK(rc == 0 && bad == 0 && checked > 0 && sampled > 0,
               "%s, %s: %zu drawn values (sampled below %zux%zu) equal the full computation", label,
               ti ? "terminal" : "window", checked, rows, cols);
        scene_free(&s);
    }
    app_data_free(&d);
    app_view_ctx_free(&c);
}

/* The curves of a line view: the last ncurves polylines of the scene (in the main axes), each
 * compared point by point with row first_row + k of the full data, whose row 0 (decay) or
 * column 0 (xpos) is the position. */
static void check_curves(const char *label, const char *const *opts, int ncurves, int first,
                         int by_column, int all_sampled, double tol)
{
    app_state st;
    if (setup(&st, opts) < 0) return;
    char err[512];
    app_view_ctx c = {0};
    app_data d = {0};
    const app_view *v = app_view_at((size_t)st.view);
    if (v->data(&c, &st, &d, err, sizeof err) != 0) {
        TAP_OK(0, "%s: data (%s)", label, err);
        return;
    }
    size_t L = (size_t)st.p.len;
    scene_target tg[2] = {raster_target(900, 600, raster_font_px(900, 600, 1)),
                          cellgrid_target(200, 60)};
    for (int ti = 0; ti < 2; ti++) {
        scene s;
        scene_init(&s, 1, 1, 0);
        int rc = app_view_build(&c, &st, &s, &tg[ti], err, sizeof err);
        TAP_OK(rc == 0, "%s, %s: builds (%s)", label, ti ? "terminal" : "window", err);
        const scene_item *poly[16];
        int np = 0;
        for (size_t i = 0; i < s.n; i++)
            if (s.items[i].kind == SCENE_POLYLINE && s.items[i].u.poly.n > 16 && np < 16)
                poly[np++] = &s.items[i];
        size_t checked = 0, bad = 0, maxn = 0;
        for (int k = 0; rc == 0 && k < ncurves && np >= ncurves; k++) {
            const scene_item *it = poly[np - ncurves + k];
            if (it->u.poly.n > maxn) maxn = it->u.poly.n;
            for (size_t i = 0; i < it->u.poly.n; i++) {
                double x = fig_x_inv(&c.main, it->u.poly.xy[2 * i]);
                double y = fig_y_inv(&c.main, it->u.poly.xy[2 * i + 1]);
                long p = lround(x);
                if (fabs(x - (double)p) > 1e-6 || p < 0 || (size_t)p >= L) {
                    if (bad++ < 3) tap_diag("%s: curve %d point at x %.9g", label, k, x);
                    continue;
                }
                double full = by_column ? d.data[(size_t)p * d.shape[1] + (size_t)(first + k)]
                                        : d.data[(size_t)(first + k) * L + (size_t)p];
                if (isnan(it->u.poly.xy[2 * i + 1])) y = NAN;
                if (!same(y, full, tol) && !(isnan(y) && isnan(full))) {
                    if (bad++ < 3)
                        tap_diag("%s: curve %d at p %ld: drawn %.9g, full %.9g", label, k, p, y,
                                 full);
                }
                checked++;
            }
        }
        TAP_OK(rc == 0 && np >= ncurves && bad == 0 && checked > 0 && (!all_sampled || maxn < L),
               "%s, %s: %zu drawn points (at most %zu per curve of %zu) equal the full "
               "computation",
               label, ti ? "terminal" : "window", checked, maxn, L);
        scene_free(&s);
    }
    app_data_free(&d);
    app_view_ctx_free(&c);
}

int main(void)
{
    const char *hs[] = {"view", "heatmap", "len", "2048", "dim", "1536", NULL};
    check_matrix("heatmap sinusoidal", hs, 1, 2048, 1536, at_2d, 2e-6);
    const char *hc[] = {"view", "heatmap", "len", "2048", "dim", "1536", "layout", "concat", NULL};
    check_matrix("heatmap sinusoidal concat", hc, 1, 2048, 1536, at_2d, 2e-6);
    const char *hr[] = {"view",    "heatmap", "pe",      "rope", "len",    "2048", "dim", "1536",
                        "pairing", "half",    "scaling", "yarn", "factor", "4",    NULL};
    check_matrix("heatmap rope yarn half", hr, 1, 2048, 1536, at_2d, 2e-6);
    /* the seeded table (--weights init) at any size; the trained one: test_table.c */
    const char *hl[] = {"view", "heatmap", "pe",      "learned", "len", "2048",
                        "dim",  "1024",    "weights", "init",    NULL};
    check_matrix("heatmap learned", hl, 1, 2048, 1024, at_2d, 0);
    /* similarity: the sinusoid's closed form against the float32 table's dot products (the
     * data), which carry the table's rounding (float32 values and sums: a few parts in 1e7 of
     * the value, or of 1 near 0); learned goes through the table itself */
    const char *ss[] = {"view", "similarity", "len", "2048", "dim", "1536", NULL};
    check_matrix("similarity sinusoidal", ss, 1, 2048, 2048, at_2d, 2e-6);
    const char *sc[] = {"view",       "similarity", "len",  "2048", "dim", "1536",
                        "similarity", "cosine",     "base", "500",  NULL};
    check_matrix("similarity sinusoidal cosine", sc, 1, 2048, 2048, at_2d, 1e-6);
    const char *sl[] = {"view", "similarity", "pe",      "learned", "len", "2048",
                        "dim",  "256",        "weights", "init",    NULL};
    check_matrix("similarity learned", sl, 1, 2048, 2048, at_2d, 1e-5);
    /* the trained table (256 rows): its sample, NaN past the rows, as the data has it */
    const char *st5[] = {"view", "similarity", "pe", "learned", "len", "1000", NULL};
    check_matrix("similarity learned, trained", st5, 1, 1000, 1000, at_2d, 1e-5);
    const char *a1[] = {"view", "alibi", "len", "1500", "heads", "6", "scale", "per-head", NULL};
    check_matrix("alibi 6 heads", a1, 6, 1500, 1500, at_3d, 0);
    const char *a2[] = {"view", "alibi", "len",   "1500",     "heads", "12",
                        "head", "5",     "scale", "per-head", NULL};
    check_matrix("alibi head 5 of 12", a2, 1, 1500, 1500, at_3d, 0);
    /* the default window scale: exp of the same biases, to float rounding */
    const char *a3[] = {"view", "alibi", "len", "1500", "heads", "6", NULL};
    check_matrix("alibi 6 heads, window", a3, 6, 1500, 1500, at_3d_exp, 1e-6);
    const char *t5[] = {"view", "t5", "len", "2000", "heads", "4", "head", "2", NULL};
    check_matrix("t5 head 2", t5, 1, 2000, 2000, at_t5, 0);
    const char *xl[] = {"view", "xl", "len", "600", "dim", "64", NULL};
    check_matrix("xl", xl, 4, 600, 600, at_3d, 1e-5);
    /* past FULL_MACS the view projects only the rows it draws (views/xl.c) */
    const char *xb[] = {"view", "xl", "len", "512", "dim", "2048", NULL};
    check_matrix("xl, drawn rows only", xb, 4, 512, 512, at_3d, 1e-5);

    const char *d1[] = {"view",   "decay",
                        "len",    "6000",
                        "dim",    "256",
                        "pos",    "2500",
                        "curves", "sinusoidal,learned,rope,rope-random,rope-bound,alibi,xpos",
                        NULL};
    check_curves("decay, 7 curves", d1, 7, 1, 0, 0, 2e-6);
    const char *d2[] = {"view",    "decay", "len",  "5000", "dim",    "64",
                        "pos",     "4999",  "base", "500",  "curves", "sinusoidal,rope,xpos",
                        "pairing", "half",  NULL};
    check_curves("decay, p0 at the end", d2, 3, 1, 0, 1, 2e-6);
    const char *x1[] = {"view", "xpos", "len", "6000", "dim", "128", NULL};
    /* the right plot: RoPE, xPos, mean factor = columns np+1 .. np+3 of the data (np = 64) */
    check_curves("xpos", x1, 3, 65, 1, 1, 1e-9);
    return tap_done();
}
