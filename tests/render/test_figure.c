/* test_figure: nice ticks, tick labels, mappings, and layout invariants of the figure helpers on
 * a cell target and on a pixel-like target. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "figure.h"
#include "tap.h"

static int ticks_are(double lo, double hi, int max, const double *want, int nwant)
{
    double out[32];
    int n = fig_ticks(lo, hi, max, out);
    int ok = n == nwant;
    for (int i = 0; ok && i < n; i++) ok = fabs(out[i] - want[i]) <= 1e-12 * (1 + fabs(want[i]));
    if (!ok) {
        tap_diag("fig_ticks(%g, %g, %d) gave %d:", lo, hi, max, n);
        for (int i = 0; i < n; i++) tap_diag("  %.17g", out[i]);
    }
    return ok;
}

static int label_is(double v, double step, const char *want)
{
    char buf[64];
    fig_tick_label(v, step, buf, sizeof buf);
    if (strcmp(buf, want) != 0) tap_diag("fig_tick_label(%.17g, %g) = \"%s\"", v, step, buf);
    return strcmp(buf, want) == 0;
}

static void test_ticks(void)
{
    TAP_OK(ticks_are(0, 10, 6, (double[]){0, 2, 4, 6, 8, 10}, 6), "0..10: step 2");
    TAP_OK(ticks_are(0, 10, 11, (double[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 11), "0..10: step 1");
    TAP_OK(ticks_are(0, 1023, 6, (double[]){0, 200, 400, 600, 800, 1000}, 6), "0..1023: step 200");
    TAP_OK(ticks_are(-1, 1, 5, (double[]){-1, -0.5, 0, 0.5, 1}, 5), "-1..1: step 0.5, exact 0");
    TAP_OK(ticks_are(-0.3, 0.7, 6, (double[]){-0.2, 0, 0.2, 0.4, 0.6}, 5), "-0.3..0.7: step 0.2");
    TAP_OK(ticks_are(-7.5, -2.2, 4, (double[]){-6, -4}, 2) ||
               ticks_are(-7.5, -2.2, 4, (double[]){-7, -6, -5, -4, -3}, 5) == 0,
           "all-negative range");
    TAP_OK(ticks_are(-7.5, -2.2, 6, (double[]){-7, -6, -5, -4, -3}, 5), "-7.5..-2.2: step 1");
    TAP_OK(ticks_are(1e-6, 5e-6, 5, (double[]){1e-6, 2e-6, 3e-6, 4e-6, 5e-6}, 5), "tiny range");
    TAP_OK(ticks_are(10, 0, 6, (double[]){0, 2, 4, 6, 8, 10}, 6), "reversed range");
    TAP_OK(ticks_are(3, 3, 5, (double[]){3}, 1), "degenerate range: one tick");
    TAP_OK(ticks_are(0.31, 0.39, 1, (double[]){0.31}, 1), "max 1: the roundest value inside");
    TAP_OK(ticks_are(-48.1, -41.1, 3, (double[]){-47.5, -45, -42.5}, 3),
           "2.5 step when 1-2-5 would leave one tick");
    double out[16];
    TAP_OK(fig_ticks(0, NAN, 5, out) == 0 && fig_ticks(0, 1, 0, out) == 0, "NaN and max 0");
    /* Invariants over many ranges: within range, at most max, 1-2-5 step, at least 2. */
    int ok = 1;
    for (int k = 0; k < 400 && ok; k++) {
        double lo = -50.0 + 0.37 * k * k / 7.0, hi = lo + pow(10.0, (k % 13) - 6) * (1 + k % 7);
        for (int max = 2; max <= 10 && ok; max++) {
            int n = fig_ticks(lo, hi, max, out);
            double tol = 1e-9 * fabs(hi - lo) + 1e-14 * fabs(lo); /* an ulp of the values */
            if (n < 1 || n > max) ok = 0;
            for (int i = 0; ok && i < n; i++)
                if (out[i] < lo - tol || out[i] > hi + tol) ok = 0;
            if (ok && n >= 2) {
                double step = out[1] - out[0];
                double m = step / pow(10.0, floor(log10(step) + 1e-6));
                if (fabs(m - 1) > 1e-5 && fabs(m - 2) > 1e-5 && fabs(m - 5) > 1e-5 &&
                    fabs(m - 2.5) > 1e-5)
                    ok = 0;
            }
            if (max >= 3 && n < 2) ok = 0;
            if (!ok) tap_diag("failed on [%g, %g] max %d: n %d", lo, hi, max, n);
        }
    }
    TAP_OK(ok, "ticks inside the range, at most max, 1-2-5(-2.5) steps, >= 2 when max >= 3");

    TAP_OK(label_is(0.0, 0.2, "0"), "0");
    TAP_OK(label_is(-1e-17, 0.2, "0"), "rounding noise at 0 is \"0\", not \"-0\"");
    TAP_OK(label_is(-0.0, 1, "0"), "-0.0 prints as 0");
    TAP_OK(label_is(0.4, 0.2, "0.4"), "0.4 with step 0.2");
    TAP_OK(label_is(0.6000000000000001, 0.2, "0.6"), "0.6 (float noise) with step 0.2");
    TAP_OK(label_is(1000, 200, "1000"), "integers have no decimals");
    TAP_OK(label_is(-0.25, 0.05,
                    "\xe2\x88\x92"
                    "0.25"),
           "-0.25 with step 0.05: U+2212 minus");
    TAP_OK(label_is(2.5, 0.5, "2.5"), "2.5");
    TAP_OK(label_is(3, 0.5, "3.0"), "3.0 with step 0.5: labels share decimals");
    TAP_OK(label_is(2e-6, 1e-6,
                    "2\xc3\x97"
                    "10\xe2\x81\xbb\xe2\x81\xb6"),
           "tiny: 2e-6 is 2×10⁻⁶");
    TAP_OK(label_is(1.5e-5, 5e-6,
                    "1.5\xc3\x97"
                    "10\xe2\x81\xbb\xe2\x81\xb5"),
           "tiny: 1.5×10⁻⁵");
    TAP_OK(label_is(2e6, 1e6,
                    "2\xc3\x97"
                    "10\xe2\x81\xb6"),
           "large: 2×10⁶");
    TAP_OK(label_is(1e6, 1e6, "10\xe2\x81\xb6"), "large: 1e6 is 10⁶");
    TAP_OK(label_is(1.5e6, 5e5,
                    "1.5\xc3\x97"
                    "10\xe2\x81\xb6"),
           "large: 1.5×10⁶");
    TAP_OK(label_is(150000, 50000, "150000"), "150000 with step 5e4");
    TAP_OK(label_is(0.001, 0.001, "0.001"), "0.001");
}

static int num_is(double v, int sig, const char *want)
{
    char buf[64];
    fig_num(v, sig, buf, sizeof buf);
    if (strcmp(buf, want) != 0) tap_diag("fig_num(%.17g, %d) = \"%s\"", v, sig, buf);
    return strcmp(buf, want) == 0;
}

static int fixed_is(double v, int dec, int plus, const char *want)
{
    char buf[64];
    fig_fixed(v, dec, plus, buf, sizeof buf);
    if (strcmp(buf, want) != 0) tap_diag("fig_fixed(%.17g, %d, %d) = \"%s\"", v, dec, plus, buf);
    return strcmp(buf, want) == 0;
}

/* fig_fixed: printf's fixed decimals with the minus sign, and no sign on a rounded zero */
static void test_fixed(void)
{
    TAP_OK(fixed_is(3.0, 2, 1, "+3.00"), "fig_fixed: +3.00");
    TAP_OK(fixed_is(-0.99, 3, 1,
                    "\xe2\x88\x92"
                    "0.990"),
           "fig_fixed: −0.990 with U+2212");
    TAP_OK(fixed_is(-0.0004, 2, 1, "0.00"), "fig_fixed: a negative that rounds to zero is 0.00");
    TAP_OK(fixed_is(52.18621, 4, 0, "52.1862"), "fig_fixed: 52.1862 as %%.4f");
    char buf[64], ascii[64];
    fig_fixed(-1.5, 1, 1, buf, sizeof buf);
    scene_ascii(buf, ascii, sizeof ascii);
    TAP_OK(strcmp(ascii, "-1.5") == 0, "fig_fixed: a non-UTF-8 terminal reads -1.5 (%s)", ascii);
}

static void test_num(void)
{
    TAP_OK(num_is(6.09952, 2, "6.1"), "fig_num: 6.09952 to 2 digits is 6.1");
    TAP_OK(num_is(4, 3, "4"), "fig_num: 4, no needless decimals");
    TAP_OK(num_is(0.015625, 3, "0.0156"), "fig_num: 0.0156");
    TAP_OK(num_is(1234.4, 3, "1234"), "fig_num: 1234 below 10,000 keeps its digits");
    TAP_OK(num_is(10000, 6, "10,000"), "fig_num: 10,000 with a comma");
    TAP_OK(num_is(11030.3, 4, "11,030"), "fig_num: 11,030 (not 1.103e+04)");
    TAP_OK(num_is(500000, 6, "500,000"), "fig_num: 500,000");
    TAP_OK(num_is(1e6, 6, "10\xe2\x81\xb6"), "fig_num: 1e6 is 10⁶");
    TAP_OK(num_is(2.4e-5, 2,
                  "2.4\xc3\x97"
                  "10\xe2\x81\xbb\xe2\x81\xb5"),
           "fig_num: 2.4×10⁻⁵");
    TAP_OK(num_is(-127.5, 3,
                  "\xe2\x88\x92"
                  "128"),
           "fig_num: U+2212 minus, rounded");
    TAP_OK(num_is(9.9996, 3, "10"), "fig_num: 9.9996 rounds up a decade to 10");
    TAP_OK(num_is(0, 3, "0"), "fig_num: 0");
    char a[64];
    fig_num(-2.4e-5, 2, a, sizeof a);
    char asc[64];
    scene_ascii(a, asc, sizeof asc);
    TAP_OK(strcmp(asc, "-2.4x10^-5") == 0, "fig_num in ASCII: -2.4x10^-5 (%s)", asc);
}

static void test_mapping(void)
{
    fig_axes a = {.area = {10, 20, 100, 50}, .x0 = 0, .x1 = 10, .y0 = -1, .y1 = 1};
    TAP_CLOSE(fig_x(&a, 0), 10, 0, 1e-12, "x0 -> left edge");
    TAP_CLOSE(fig_x(&a, 10), 110, 0, 1e-12, "x1 -> right edge");
    TAP_CLOSE(fig_y(&a, -1), 70, 0, 1e-12, "y0 -> bottom");
    TAP_CLOSE(fig_y(&a, 1), 20, 0, 1e-12, "y1 -> top");
    TAP_CLOSE(fig_x_inv(&a, fig_x(&a, 3.7)), 3.7, 0, 1e-12, "x inverse");
    TAP_CLOSE(fig_y_inv(&a, fig_y(&a, 0.3)), 0.3, 0, 1e-12, "y inverse");
    a.xlog = 1;
    a.x0 = 1;
    a.x1 = 1000;
    TAP_CLOSE(fig_x(&a, 10), 10 + 100.0 / 3, 0, 1e-9, "log x: 10 is a third of 1..1000");
    TAP_CLOSE(fig_x_inv(&a, fig_x(&a, 42)), 42, 1e-12, 0, "log x inverse");
    TAP_OK(isnan(fig_x(&a, 0)) && isnan(fig_x(&a, -1)), "log x of <= 0 is NaN");

    fig_rect r = {0, 0, 100, 50};
    fig_rect right = fig_take_right(&r, 20, 2);
    TAP_OK(right.x == 80 && right.w == 20 && r.w == 78 && r.h == 50, "take_right");
    fig_rect bottom = fig_take_bottom(&r, 10, 1);
    TAP_OK(bottom.y == 40 && bottom.h == 10 && r.h == 39, "take_bottom");
    fig_rect big = {0, 0, 10, 10};
    fig_rect all = fig_take_right(&big, 50, 1);
    TAP_OK(all.w == 10 && big.w == 0, "take_right clamps");
    fig_rect g = fig_grid_cell((fig_rect){0, 0, 100, 50}, 2, 3, 1, 2, 5);
    TAP_CLOSE(g.w, 30, 0, 1e-12, "grid cell width");
    TAP_CLOSE(g.x, 70, 0, 1e-12, "grid cell x");
    TAP_CLOSE(g.y, 27.5, 0, 1e-12, "grid cell y");
}

static int in_rect(double x, double y, fig_rect r)
{
    return x >= r.x - 1e-9 && y >= r.y - 1e-9 && x <= r.x + r.w + 1e-9 && y <= r.y + r.h + 1e-9;
}

/* Every text box of the scene inside outer, none overlapping another. */
static int texts_fit(const scene *s, const scene_target *t, fig_rect outer, int check_overlap)
{
    int ok = 1;
    double box[512][4];
    int nb = 0;
    for (size_t i = 0; i < s->n; i++) {
        const scene_item *it = &s->items[i];
        if (it->kind != SCENE_TEXT) continue;
        double w = scene_text_width(t, it->u.text.str, it->u.text.size);
        double h = t->text_h * it->u.text.size;
        unsigned an = it->u.text.anchor;
        if (an & SCENE_VERTICAL) {
            double tmp = w;
            w = h;
            h = tmp;
        }
        double x = it->u.text.x - ((an & 3) == 1 ? w / 2 : (an & 3) == 2 ? w : 0);
        double y = it->u.text.y - (((an >> 2) & 3) == 1 ? h / 2 : ((an >> 2) & 3) == 2 ? h : 0);
        if (an & SCENE_VERTICAL) { /* centred anchors only, which is what figure.c emits */
            x = it->u.text.x - w / 2;
            y = it->u.text.y - h / 2;
        }
        if (!in_rect(x, y, outer) || !in_rect(x + w, y + h, outer)) {
            tap_diag("text \"%s\" at %.1f,%.1f %.1fx%.1f leaves the figure", it->u.text.str, x, y,
                     w, h);
            ok = 0;
        }
        if (t->cells && (it->u.text.x != floor(it->u.text.x) || fmod(it->u.text.y, 2.0) != 0)) {
            tap_diag("text \"%s\" not on a whole cell (%.2f, %.2f)", it->u.text.str, it->u.text.x,
                     it->u.text.y);
            ok = 0;
        }
        for (int j = 0; check_overlap && j < nb; j++) {
            if (x < box[j][0] + box[j][2] - 1e-9 && box[j][0] < x + w - 1e-9 &&
                y < box[j][1] + box[j][3] - 1e-9 && box[j][1] < y + h - 1e-9) {
                tap_diag("text \"%s\" overlaps another", it->u.text.str);
                ok = 0;
            }
        }
        if (nb < 512) {
            box[nb][0] = x;
            box[nb][1] = y;
            box[nb][2] = w;
            box[nb][3] = h;
            nb++;
        }
    }
    return ok;
}

static void test_layout(void)
{
    const fig_theme *th = fig_theme_get(0);
    TAP_OK(th->bg == 0xffffff && fig_theme_get(1)->bg < 0x202020, "light/dark backgrounds");
    /* Terminal: 80 x 24 cells. */
    scene_target ct = {
        .width = 80, .height = 48, .text_h = 2, .char_w = 1, .hairline = 0.5, .cells = 1};
    scene s;
    scene_init(&s, ct.width, ct.height, th->bg);
    fig_rect outer = {0, 0, 80, 48};
    fig_rect r = fig_title(&s, &ct, th, outer, "Sinusoidal similarity", "d=64 base=10000");
    TAP_OK(r.y == 4 && r.h == 44, "title + subtitle take two rows on cells (y %.1f)", r.y);
    fig_rect cb = fig_take_right(&r, fig_colorbar_width(&ct), 1);
    fig_axes a =
        fig_axes_draw(&s, &ct, th, r, 0, 128, 0, 128, "position j", "position i", FIG_Y_DOWN);
    TAP_OK(a.area.x == floor(a.area.x) && fmod(a.area.y, 2) == 0 && fmod(a.area.h, 2) == 0 &&
               a.area.w == floor(a.area.w),
           "cell area on whole cells (%.1f %.1f %.1f %.1f)", a.area.x, a.area.y, a.area.w,
           a.area.h);
    TAP_OK(a.area.x >= r.x && a.area.x + a.area.w <= r.x + r.w && a.area.y >= r.y &&
               a.area.y + a.area.h <= r.y + r.h,
           "area inside the rect it was given");
    TAP_OK(a.area.w >= r.w - 8 && a.area.h >= r.h - 8,
           "cell layout is compact (%.0f x %.0f of %.0f x %.0f)", a.area.w, a.area.h, r.w, r.h);
    TAP_CLOSE(fig_y(&a, 0), a.area.y, 0, 1e-9, "FIG_Y_DOWN: row 0 at the top");
    fig_colorbar(&s, &ct, th, (fig_rect){cb.x, a.area.y, cb.w, a.area.h}, -1, 1,
                 cmap_default_diverging(), "value");
    TAP_OK(texts_fit(&s, &ct, outer, 1), "cells: all text inside, on whole cells, no overlap");

    /* Pixels: 1000 x 600 with text measured as 0.6 em per character. */
    scene_target pt = {
        .width = 1000, .height = 600, .text_h = 19.5, .char_w = 8.4, .hairline = 1, .cells = 0};
    scene_reset(&s, pt.width, pt.height, th->bg);
    outer = (fig_rect){0, 0, 1000, 600};
    r = fig_title(&s, &pt, th, outer, "RoPE attention decay", "base 10000, d 128");
    cb = fig_take_right(&r, fig_colorbar_width(&pt), 10);
    a = fig_axes_draw(&s, &pt, th, r, 1, 4096, 1e-3, 1, "relative distance", "|score|",
                      FIG_XLOG | FIG_YLOG | FIG_GRID);
    TAP_OK(a.xlog && a.ylog, "log axes");
    fig_colorbar(&s, &pt, th, (fig_rect){cb.x, a.area.y, cb.w, a.area.h}, 0, 0.037, NULL,
                 "attention");
    const char *names[] = {"bound", "measured"};
    fig_legend(&s, &pt, th, &a, names, th->series, 2, 1);
    double x[5] = {1, 10, 100, 1000, 4096}, y[5] = {1, 0.5, NAN, 0.01, 0.001};
    size_t before = s.n;
    fig_curve(&s, &a, x, y, 5, th->series[0], 2, 0);
    TAP_OK(s.n == before + 1 && s.items[before].kind == SCENE_POLYLINE &&
               s.items[before].u.poly.n == 5 && isnan(s.items[before].u.poly.xy[5]),
           "curve keeps NaN as a break");
    TAP_CLOSE(s.items[before].u.poly.xy[0], a.area.x, 0, 1e-9, "curve starts at the left edge");
    TAP_CLOSE(s.items[before].u.poly.xy[1], a.area.y, 0, 1e-9, "y=1 at the top on a log axis");
    TAP_OK(s.items[before].u.poly.cw == a.area.w, "curve clipped to the area");
    fig_vmark(&s, &pt, th, &a, 2048, "train length");
    TAP_OK(s.items[s.n - 2].kind == SCENE_LINE && (s.items[s.n - 2].flags & SCENE_DASHED),
           "vmark is dashed");
    TAP_OK(texts_fit(&s, &pt, outer, 1), "pixels: all text inside the figure, no overlap");
    int frame_outside = 1;
    for (size_t i = 0; i < s.n; i++) {
        const scene_item *it = &s.items[i];
        if (it->kind == SCENE_LINE && (it->flags & SCENE_RULE) && it->color == th->fg &&
            it->u.line.x0 == it->u.line.x1 && it->u.line.y0 <= a.area.y &&
            it->u.line.y1 >= a.area.y + a.area.h && it->u.line.x0 > a.area.x - 0.5 &&
            it->u.line.x0 < a.area.x + a.area.w + 0.5)
            frame_outside = 0;
    }
    TAP_OK(frame_outside, "frame lines lie outside the plot area");
    scene_free(&s);
}

/* The scene of a whole cell-target figure against golden/figure_cells.txt (PELAB_REGEN_GOLDEN=1
 * rewrites it), so a layout change shows up as a readable diff. */
static void test_cells_golden(void)
{
    const fig_theme *th = fig_theme_get(0);
    scene_target ct = {
        .width = 60, .height = 32, .text_h = 2, .char_w = 1, .hairline = 0.5, .cells = 1};
    scene s;
    scene_init(&s, ct.width, ct.height, th->bg);
    fig_rect r = fig_title(&s, &ct, th, (fig_rect){0, 0, 60, 32}, "Similarity", "d=16");
    fig_rect cb = fig_take_right(&r, fig_colorbar_width(&ct), 1);
    float m[16 * 16];
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) m[i * 16 + j] = (float)cos((i - j) * 0.4);
    fig_axes a = fig_axes_draw(&s, &ct, th, r, 0, 16, 0, 16, "j", "i", FIG_Y_DOWN);
    scene_heatmap(&s, a.area.x, a.area.y, a.area.w, a.area.h, m, 16, 16, 16, -1, 1,
                  cmap_default_diverging(), th->mask);
    fig_colorbar(&s, &ct, th, (fig_rect){cb.x, a.area.y, cb.w, a.area.h}, -1, 1,
                 cmap_default_diverging(), "cos");
    double x[3] = {0, 8, 16}, y[3] = {0, 4, 16};
    fig_curve(&s, &a, x, y, 3, th->series[0], 0, 0);
    const char *names[] = {"diag"};
    fig_legend(&s, &ct, th, &a, names, th->series, 1, 1);
    fig_vmark(&s, &ct, th, &a, 12, "L");
    char *dump = scene_dump(&s);
    const char *src = getenv("PELAB_SRC");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/render/golden/figure_cells.txt", src ? src : ".");
    const char *regen = getenv("PELAB_REGEN_GOLDEN");
    if (regen && strcmp(regen, "1") == 0) {
        FILE *fp = fopen(path, "w");
        TAP_OK(fp && dump && fputs(dump, fp) >= 0 && fclose(fp) == 0, "regenerated %s", path);
    } else {
        FILE *fp = fopen(path, "r");
        char *want = NULL;
        if (fp) {
            fseek(fp, 0, SEEK_END);
            long n = ftell(fp);
            fseek(fp, 0, SEEK_SET);
            want = calloc(1, (size_t)n + 1);
            if (want && fread(want, 1, (size_t)n, fp) != (size_t)n) want[0] = 0;
            fclose(fp);
        }
        int same = want && dump && strcmp(want, dump) == 0;
        TAP_OK(same, "cell figure matches %s%s", path,
               want ? "" : " (missing: PELAB_REGEN_GOLDEN=1 creates it)");
        if (!same && dump) tap_diag("got:\n%s", dump);
        free(want);
    }
    free(dump);
    scene_free(&s);
}

/* An animation frame's swept value leads the subtitle once: the subtitle's own word for it
 * ("base=10000") is left out for the note ("base=1000"), other words stay. */
static void test_note(void)
{
    const fig_theme *th = fig_theme_get(0);
    scene_target pt = {
        .width = 1000, .height = 600, .text_h = 19.5, .char_w = 8.4, .hairline = 1, .cells = 0};
    scene s;
    scene_init(&s, pt.width, pt.height, th->bg);
    scene_author au = {NULL, NULL, "base=1000", "base="};
    s.author = &au;
    fig_title(&s, &pt, th, (fig_rect){0, 0, 1000, 600}, "decay", "d=128  base=10000  L=256");
    const char *sub = s.n > 1 && s.items[1].kind == SCENE_TEXT ? s.items[1].u.text.str : "";
    TAP_OK(strcmp(sub, "base=1000   d=128  L=256") == 0,
           "the swept value leads the subtitle once: '%s'", sub);
    /* a key the subtitle does not have leaves it whole */
    scene_reset(&s, pt.width, pt.height, th->bg);
    au.note = "m=33";
    au.note_key = "m=";
    fig_title(&s, &pt, th, (fig_rect){0, 0, 1000, 600}, "rope", "d=128  base=10000");
    sub = s.n > 1 && s.items[1].kind == SCENE_TEXT ? s.items[1].u.text.str : "";
    TAP_OK(strcmp(sub, "m=33   d=128  base=10000") == 0, "a value the subtitle lacks: '%s'", sub);
    s.author = NULL;
    scene_free(&s);
}

int main(void)
{
    test_cells_golden();
    test_ticks();
    test_mapping();
    test_num();
    test_fixed();
    test_layout();
    test_note();
    return tap_done();
}
