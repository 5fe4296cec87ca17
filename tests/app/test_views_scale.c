/* test_views_scale.c: --scale per-head|shared|window for the ALiBi small multiples and the T5
 * bias matrix. Window (the default) draws ALiBi's exp(bias) on 0..1 with each head's window in
 * its label; T5 reads it as per head. Per head, each head's heatmap is coloured over its own range
 * (ALiBi: from its corner -m_h (L-1) to 0; T5: the min/max of the head's drawn biases), so the
 * ranges differ between heads; shared gives every head one range, the union. The colourbar says
 * which, and the status line of both views shows scale=. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cellgrid.h"
#include "explorer.h"
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

/* 1 when some text item of s contains str */
static int has_text(const scene *s, const char *str)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->items[i].kind == SCENE_TEXT && strstr(s->items[i].u.text.str, str)) return 1;
    return 0;
}

/* the finite min/max of a heatmap item's data */
static void heat_range(const scene_item *it, double *lo, double *hi)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    size_t n = it->u.heat.rows * it->u.heat.cols;
    for (size_t k = 0; k < n; k++)
        if (isfinite(it->u.heat.data[k]))
            *lo = fmin(*lo, it->u.heat.data[k]), *hi = fmax(*hi, it->u.heat.data[k]);
}

static int close_to(double a, double b)
{
    return fabs(a - b) <= 1e-6 * fmax(1, fabs(b));
}

/* Builds the view with opts on a window-sized target; the heatmaps' ranges in vmin/vmax (at
 * most max) and their data ranges in dlo/dhi. Returns the number of heatmaps, -1 on failure. */
static int build(const char *label, const char *const *opts, const char *need_text, double *vmin,
                 double *vmax, double *dlo, double *dhi, int max)
{
    app_state st;
    if (setup(&st, opts) < 0) return -1;
    char err[512] = "";
    app_view_ctx c = {0};
    scene_target tg = raster_target(1200, 750, raster_font_px(1200, 750, 1));
    scene s;
    scene_init(&s, 1, 1, 0);
    int rc = app_view_build(&c, &st, &s, &tg, err, sizeof err);
    TAP_OK(rc == 0, "%s: builds (%s)", label, err);
    int k = 0;
    for (size_t i = 0; rc == 0 && i < s.n; i++) {
        const scene_item *it = &s.items[i];
        if (it->kind != SCENE_HEATMAP || k >= max) continue;
        vmin[k] = it->u.heat.vmin;
        vmax[k] = it->u.heat.vmax;
        heat_range(it, &dlo[k], &dhi[k]);
        k++;
    }
    TAP_OK(rc == 0 && has_text(&s, need_text), "%s: the colourbar says \"%s\"", label, need_text);
    scene_free(&s);
    app_view_ctx_free(&c);
    return rc == 0 ? k : -1;
}

/* The ALiBi small multiples' layout: the colourbar spans the matrices (top of the first row to
 * the bottom of the last) on pixels; in a terminal every head's label shows over its matrix and
 * the colourbar's name under the grid; a fractional slope is written in superscripts as the
 * whole ones are (2⁻⁰·⁵ beside 2⁻¹), spelt 2^-0.5 on an ASCII terminal. */
static void check_alibi_layout(void)
{
    static const int px[][2] = {{1000, 600}, {1280, 800}, {480, 320}};
    static const char *const heads[] = {"8", "12"};
    for (size_t k = 0; k < sizeof px / sizeof px[0]; k++)
        for (size_t hh = 0; hh < 2; hh++) {
            const char *o[] = {"view", "alibi", "heads", heads[hh], NULL};
            app_state st;
            if (setup(&st, o) < 0) return;
            scene s;
            scene_init(&s, px[k][0], px[k][1], 0xffffff);
            scene_target t =
                raster_target(px[k][0], px[k][1], raster_font_px(px[k][0], px[k][1], 1));
            app_view_ctx c = {0};
            char err[512] = "";
            int rc = app_view_build(&c, &st, &s, &t, err, sizeof err);
            double top = INFINITY, bottom = -INFINITY, by = NAN, bb = NAN;
            for (size_t i = 0; i < s.n; i++) {
                const scene_item *it = &s.items[i];
                if (it->kind != SCENE_HEATMAP) continue;
                if (it->u.heat.cols == 1) { /* the colourbar's gradient */
                    by = it->u.heat.y;
                    bb = it->u.heat.y + it->u.heat.h;
                } else {
                    top = fmin(top, it->u.heat.y);
                    bottom = fmax(bottom, it->u.heat.y + it->u.heat.h);
                }
            }
            TAP_OK(rc == 0 && fabs(by - top) <= 1 && fabs(bb - bottom) <= 1,
                   "alibi %s heads %dx%d: the colourbar spans the matrices (%.0f..%.0f, matrices "
                   "%.0f..%.0f)",
                   heads[hh], px[k][0], px[k][1], by, bb, top, bottom);
            app_view_ctx_free(&c);
            scene_free(&s);
        }

    static const int cells[][2] = {{80, 24}, {120, 40}, {200, 60}};
    for (size_t k = 0; k < sizeof cells / sizeof cells[0]; k++)
        for (int ascii = 0; ascii < 2; ascii++) {
            /* the default (window) on the first pass, per head on the second */
            int window = ascii == 0;
            const char *o[] = {"view", "alibi", "scale", window ? "window" : "per-head", NULL};
            const char *bar = window ? "exp(bias), every head" : "bias / |min|, per head";
            app_state st;
            if (setup(&st, o) < 0) return;
            scene s;
            scene_init(&s, 1, 1, 0);
            scene_target t = cellgrid_target(cells[k][0], cells[k][1]);
            t.ascii = ascii;
            app_view_ctx c = {0};
            char err[512] = "";
            int rc = app_view_build(&c, &st, &s, &t, err, sizeof err);
            cellgrid g;
            cellgrid_init(&g, cells[k][0], cells[k][1], ascii);
            cellgrid_render(&g, &s);
            char *txt = cellgrid_dump(&g, 0);
            int labels = 0;
            for (int h = 0; h < 8 && txt; h++) {
                char lab[8];
                snprintf(lab, sizeof lab, "h%d ", h);
                labels += strstr(txt, lab) != NULL;
            }
            TAP_OK(rc == 0 && labels == 8 && txt && strstr(txt, bar),
                   "alibi at %dx%d%s: all 8 head labels (%d) and the colourbar's name show",
                   cells[k][0], cells[k][1], ascii ? " ASCII" : "", labels);
            free(txt);
            cellgrid_free(&g);
            app_view_ctx_free(&c);
            scene_free(&s);
        }

    static const struct {
        double e;
        const char *utf8, *ascii;
    } pw[] = {
        {-1, "2\xe2\x81\xbb\xc2\xb9", "2^-1"},
        {-8, "2\xe2\x81\xbb\xe2\x81\xb8", "2^-8"},
        {-0.5, "2\xe2\x81\xbb\xe2\x81\xb0\xc2\xb7\xe2\x81\xb5", "2^-0.5"},
        {-3.5, "2\xe2\x81\xbb\xc2\xb3\xc2\xb7\xe2\x81\xb5", "2^-3.5"},
        {-0.415, "2\xe2\x81\xbb\xe2\x81\xb0\xc2\xb7\xe2\x81\xb4\xc2\xb9\xe2\x81\xb5", "2^-0.415"},
        {2, "2\xc2\xb2", "2^2"}};
    for (size_t i = 0; i < sizeof pw / sizeof pw[0]; i++) {
        char u[64], a[64];
        app_pow2_label(pw[i].e, u, sizeof u);
        scene_ascii(u, a, sizeof a);
        TAP_OK(strcmp(u, pw[i].utf8) == 0 && strcmp(a, pw[i].ascii) == 0,
               "slope 2^%g reads %s, in ASCII %s", pw[i].e, u, a);
    }
}

int main(void)
{
    enum { H = 8 };
    double vmin[H], vmax[H], dlo[H], dhi[H];

    /* ALiBi, 8 heads, the default (window): every head exp(bias) on [0, 1], the diagonal 1 */
    const char *aw[] = {"view", "alibi", "len", "64", "heads", "8", NULL};
    int nw = build("alibi window", aw, "exp(bias), every head", vmin, vmax, dlo, dhi, H);
    int unit = 0;
    for (int h = 0; h < nw; h++)
        unit += close_to(vmin[h], 0) && close_to(vmax[h], 1) && dlo[h] >= 0 && close_to(dhi[h], 1);
    TAP_OK(nw == H && unit == H, "alibi window: all %d heads exp(bias) on [0, 1] (%d of %d)", H,
           unit, nw);
    {
        /* the data stays the bias -m (i - j) (the figure draws its exp); the labelled distance
         * ln 2 / m is where exp(bias) crosses 1/2 */
        app_state st;
        const char *o[] = {"view", "alibi", "len", "64", "heads", "8", NULL};
        setup(&st, o);
        app_view_ctx c = {0};
        app_data d = {0};
        char err[256] = "";
        int rc = app_view_at((size_t)st.view)->data(&c, &st, &d, err, sizeof err);
        int good = rc == 0 && d.ndim == 3 && d.shape[0] == H;
        double worst = 0;
        for (int h = 0; good && h < H; h++) {
            double m = pow(2, -8.0 * (h + 1) / H);
            for (int i = 0; i < 64; i++)
                for (int j = 0; j <= i; j++)
                    worst = fmax(worst, fabs(d.data[((size_t)h * 64 + (size_t)i) * 64 + (size_t)j] -
                                             -m * (i - j)));
            /* at the labelled 1/2 distance the factor is 1/2 (between the two nearest keys) */
            double r = log(2.0) / m;
            if (r < 63) {
                int lo = (int)floor(r);
                good &= exp(-m * lo) >= 0.5 && exp(-m * (lo + 1)) <= 0.5;
            }
        }
        TAP_OK(good && worst < 1e-6, "alibi window data: the bias -m (i - j) (max error %.2g)",
               worst);
        app_data_free(&d);
        app_view_ctx_free(&c);
    }

    /* ALiBi, 8 heads, per head: each head over its own [-m_h (L-1), 0] */
    const char *ap[] = {"view", "alibi", "len", "64", "heads", "8", "scale", "per-head", NULL};
    int n = build("alibi per-head", ap, "per head", vmin, vmax, dlo, dhi, H);
    TAP_OK(n == H, "alibi per-head: %d heatmaps, one per head", n);
    int own = 0, distinct = 0;
    for (int h = 0; h < n; h++) {
        double m = pow(2, -8.0 * (h + 1) / H);
        own += close_to(vmin[h], -m * 63) && close_to(vmax[h], 0) && close_to(dlo[h], vmin[h]) &&
               close_to(dhi[h], vmax[h]);
        if (h > 0) distinct += !close_to(vmin[h], vmin[h - 1]);
        tap_diag("head %d: range [%g, %g], data [%g, %g], -m(L-1) = %g", h, vmin[h], vmax[h],
                 dlo[h], dhi[h], -m * 63);
    }
    TAP_OK(n == H && own == H, "alibi per-head: every head's range is its own min/max (%d of %d)",
           own, n);
    TAP_OK(n == H && distinct == H - 1, "alibi per-head: the ranges differ between heads");

    /* shared: one range, the steepest head's corner to 0 */
    const char *as[] = {"view", "alibi", "len", "64", "heads", "8", "scale", "shared", NULL};
    n = build("alibi shared", as, "shared scale", vmin, vmax, dlo, dhi, H);
    int one = 0;
    for (int h = 0; h < n; h++) one += close_to(vmin[h], -0.5 * 63) && close_to(vmax[h], 0);
    TAP_OK(n == H && one == H, "alibi shared: all %d heads share [-m_0 (L-1), 0] = [%g, 0]", n,
           -0.5 * 63);

    /* T5: per head, the matrix's range is its own data's; shared, the union over the heads */
    double plo[4], phi[4];
    int t5ok = 0;
    for (int h = 0; h < 4; h++) {
        char hs[8];
        snprintf(hs, sizeof hs, "%d", h);
        const char *tp[] = {"view", "t5", "len",  "64",      "heads", "4",
                            "head", hs,   "cmap", "viridis", NULL};
        char lab[32];
        snprintf(lab, sizeof lab, "t5 head %d per-head", h);
        n = build(lab, tp, "per head", vmin, vmax, dlo, dhi, 1);
        plo[h] = vmin[0];
        phi[h] = vmax[0];
        t5ok += n == 1 && close_to(vmin[0], dlo[0]) && close_to(vmax[0], dhi[0]);
    }
    TAP_OK(t5ok == 4, "t5 per-head: each head's colour range is its own min/max (%d of 4)", t5ok);
    TAP_OK(!close_to(plo[0], plo[1]) || !close_to(phi[0], phi[1]) || !close_to(plo[2], plo[3]),
           "t5 per-head: the ranges differ between heads");
    double ulo = fmin(fmin(plo[0], plo[1]), fmin(plo[2], plo[3]));
    double uhi = fmax(fmax(phi[0], phi[1]), fmax(phi[2], phi[3]));
    int shared = 0;
    for (int h = 0; h < 4; h++) {
        char hs[8];
        snprintf(hs, sizeof hs, "%d", h);
        const char *ts[] = {"view", "t5",   "len",     "64",    "heads",  "4", "head",
                            hs,     "cmap", "viridis", "scale", "shared", NULL};
        n = build("t5 shared", ts, "shared scale", vmin, vmax, dlo, dhi, 1);
        shared += n == 1 && close_to(vmin[0], ulo) && close_to(vmax[0], uhi);
    }
    TAP_OK(shared == 4, "t5 shared: every head uses the union [%g, %g] (%d of 4)", ulo, uhi,
           shared);

    /* the status line of both views shows scale=, and a bad value names what is allowed */
    app_state st;
    app_state_default(&st);
    const char *views[] = {"alibi", "t5"};
    for (int v = 0; v < 2; v++) {
        st.view = app_view_find(views[v]);
        app_explorer x;
        app_explorer_init(&x, &st, 0);
        char line[1024];
        app_explorer_status(&x, line, sizeof line);
        TAP_OK(strstr(line, " scale=window") != NULL, "%s status line shows scale=window: %s",
               views[v], line);
        app_explorer_free(&x);
    }
    char err[256] = "";
    int rc = app_option_set(&st, app_option_find("scale"), "both", err, sizeof err);
    TAP_OK(rc != 0 && strstr(err, "per-head") && strstr(err, "shared") && strstr(err, "window"),
           "--scale both is refused: %s", err);
    check_alibi_layout();
    return tap_done();
}
