/* test_golden: text-free scenes drawn by cairo with antialiasing off, compared with committed
 * PNGs in tests/render/golden/ (per-channel fuzz). On a mismatch <name>.actual.png and
 * <name>.diff.png are written into the build directory and the test fails; a missing golden
 * fails too. PELAB_REGEN_GOLDEN=1 rewrites the goldens. Pixels with a known answer (heatmap
 * cells, masked cells, the box average of a checkerboard) are also checked directly. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "pngio.h"
#include "raster.h"
#include "tap.h"

enum { FUZZ = 2 }; /* per channel, out of 255 */

static uint32_t px_at(const uint32_t *px, int w, int x, int y)
{
    return px[(size_t)y * (size_t)w + (size_t)x] & 0xffffffu;
}

static int chan_diff(uint32_t a, uint32_t b)
{
    int d = 0;
    for (int s = 0; s < 24; s += 8) {
        int k = abs((int)((a >> s) & 0xff) - (int)((b >> s) & 0xff));
        if (k > d) d = k;
    }
    return d;
}

static void out_path(char *buf, size_t n, const char *name, const char *suffix)
{
    const char *build = getenv("PELAB_BUILD");
    if (build && *build)
        snprintf(buf, n, "%s/tests/render/%s%s", build, name, suffix);
    else
        snprintf(buf, n, "%s%s", name, suffix);
}

/* Compare px (w x h, opaque ARGB) with golden/<name>.png. */
static void check_golden(const char *name, const uint32_t *px, int w, int h)
{
    const char *src = getenv("PELAB_SRC");
    char golden[1024], actual[1024], diffp[1024], err[512];
    snprintf(golden, sizeof golden, "%s/tests/render/golden/%s.png", src && *src ? src : ".", name);
    const char *regen = getenv("PELAB_REGEN_GOLDEN");
    if (regen && strcmp(regen, "1") == 0) {
        int rc = png_write_argb(golden, px, w, h, w * 4, 96, NULL, 0, err, sizeof err);
        TAP_OK(rc == 0, "%s: golden regenerated at %s%s%s", name, golden, rc ? ": " : "",
               rc ? err : "");
        return;
    }
    out_path(actual, sizeof actual, name, ".actual.png");
    out_path(diffp, sizeof diffp, name, ".diff.png");
    png_image_rd g;
    if (png_read_file(golden, &g) != 0) {
        png_write_argb(actual, px, w, h, w * 4, 96, NULL, 0, err, sizeof err);
        TAP_OK(0,
               "%s: golden %s is missing (actual written to %s; PELAB_REGEN_GOLDEN=1 "
               "creates it)",
               name, golden, actual);
        return;
    }
    if (g.w != w || g.h != h) {
        png_write_argb(actual, px, w, h, w * 4, 96, NULL, 0, err, sizeof err);
        TAP_OK(0, "%s: golden is %d x %d, drawn %d x %d (actual: %s)", name, g.w, g.h, w, h,
               actual);
        png_image_rd_free(&g);
        return;
    }
    size_t bad = 0;
    int worst = 0;
    uint32_t *diff = malloc((size_t)w * (size_t)h * 4);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            const uint8_t *q = g.rgba + ((size_t)y * w + x) * 4;
            uint32_t want = (uint32_t)q[0] << 16 | (uint32_t)q[1] << 8 | q[2];
            uint32_t got = px_at(px, w, x, y);
            int d = chan_diff(want, got);
            if (d > worst) worst = d;
            /* The diff image: differing pixels red, the rest a faint copy of the golden. */
            uint32_t faint = 0;
            for (int s = 0; s < 24; s += 8)
                faint |= (uint32_t)(191 + ((want >> s) & 0xff) / 4) << s;
            if (d > FUZZ) bad++;
            if (diff) diff[(size_t)y * w + x] = 0xff000000u | (d > FUZZ ? 0xff0000u : faint);
        }
    if (bad) {
        png_write_argb(actual, px, w, h, w * 4, 96, NULL, 0, err, sizeof err);
        if (diff) png_write_argb(diffp, diff, w, h, w * 4, 96, NULL, 0, err, sizeof err);
        tap_diag("%s: %zu pixels differ by more than %d (worst %d); see %s and %s", name, bad, FUZZ,
                 worst, actual, diffp);
    }
    TAP_OK(bad == 0, "%s matches its golden (worst channel difference %d)", name, worst);
    free(diff);
    png_image_rd_free(&g);
}

static const double pi = 3.14159265358979323846;

/* Heatmap with masked cells, lines, dashes, a broken clipped curve, circles, an arrow. */
static void test_shapes(void)
{
    enum { W = 160, H = 120 };
    scene s;
    scene_init(&s, W, H, 0xffffff);
    const cmap *rdbu = cmap_find("rdbu");
    float v[4 * 6];
    for (int i = 0; i < 24; i++) v[i] = (float)(-1.0 + 2.0 * i / 23.0);
    v[1 * 6 + 2] = NAN;
    v[3 * 6 + 5] = -INFINITY;
    v[0] = 5.0f; /* above vmax: clamps to the top colour */
    scene_heatmap(&s, 10, 10, 90, 60, v, 4, 6, 6, -1, 1, rdbu, 0x808080);
    scene_rect(&s, 110, 10, 40, 30, 0x009e73, SCENE_FILL);
    scene_rect(&s, 110.5, 45.5, 39, 24, 0x000000, 0);
    scene_line(&s, 10, 80.5, 150, 80.5, 0x333333, 1, SCENE_RULE);
    scene_line(&s, 10, 85.5, 150, 85.5, 0xd55e00, 1, SCENE_DASHED);
    double xy[2 * 60];
    for (int i = 0; i < 60; i++) {
        xy[2 * i] = 5 + i * 2.6;
        xy[2 * i + 1] = i == 30 ? NAN : 102 + 14 * sin(i * 2 * pi / 30);
    }
    scene_polyline(&s, xy, 60, 10, 90, 140, 25, 0x0072b2, 2, 0);
    scene_circle(&s, 130, 57, 8, 0xcc79a7, 2, 0);
    scene_circle(&s, 30, 100, 5, 0xe69f00, 0, SCENE_FILL);
    scene_arrow(&s, 60, 112, 100, 95, 0x000000, 2);

    uint32_t *px = malloc((size_t)W * H * 4);
    TAP_OK(raster_draw_argb(&s, px, W, H, W * 4, 0) == 0, "shapes: drawn");
    /* Each heatmap cell is 15 x 15 px: its centre has exactly the map's colour. */
    int cells_ok = 1;
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 6; c++) {
            float x = v[r * 6 + c];
            uint32_t want =
                isnan(x) || (isinf(x) && x < 0) ? 0x808080 : cmap_color(rdbu, (x + 1) / 2.0);
            uint32_t got = px_at(px, W, 10 + c * 15 + 7, 10 + r * 15 + 7);
            if (got != want) {
                tap_diag("cell %d,%d: got #%06x want #%06x", r, c, (unsigned)got, (unsigned)want);
                cells_ok = 0;
            }
            /* and the whole cell is flat (nearest, no smoothing) */
            if (px_at(px, W, 10 + c * 15, 10 + r * 15) != got ||
                px_at(px, W, 10 + c * 15 + 14, 10 + r * 15 + 14) != got)
                cells_ok = 0;
        }
    TAP_OK(cells_ok, "heatmap cells: exact colours, flat, NaN and -inf masked, clamped");
    TAP_OK(px_at(px, W, 9, 40) == 0xffffff && px_at(px, W, 100, 40) == 0xffffff,
           "heatmap stays inside its rectangle");
    TAP_OK(px_at(px, W, 130, 25) == 0x009e73, "filled rect");
    TAP_OK(px_at(px, W, 30, 100) == 0xe69f00, "filled circle");
    TAP_OK(px_at(px, W, 130, 57) == 0xffffff && px_at(px, W, 122, 57) == 0xcc79a7,
           "stroked circle is a ring");
    int dash_gaps = 0;
    for (int x = 12; x < 148; x++)
        if (px_at(px, W, x, 85) == 0xffffff) dash_gaps++;
    TAP_OK(dash_gaps > 30 && dash_gaps < 100, "dashed line has gaps (%d px)", dash_gaps);
    int clipped = 1;
    for (int x = 0; x < W; x++)
        for (int y = 0; y < H; y++)
            if (px_at(px, W, x, y) == 0x0072b2 && (x < 10 || y < 90 || x >= 150)) clipped = 0;
    TAP_OK(clipped, "polyline clipped to its rectangle");
    check_golden("shapes", px, W, H);
    free(px);
    scene_free(&s);
}

/* Shrinking: a fine checkerboard box-averages to one flat colour instead of aliasing. */
static void test_downsample(void)
{
    enum { W = 120, H = 80, R = 300, C = 400 };
    scene s;
    scene_init(&s, W, H, 0xffffff);
    float *v = malloc((size_t)R * C * sizeof *v);
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) v[r * C + c] = ((r + c) & 1) ? 1.0f : -1.0f;
    const cmap *rdbu = cmap_find("rdbu");
    scene_heatmap(&s, 10, 10, 100, 60, v, R, C, C, -1, 1, rdbu, 0);
    uint32_t *px = malloc((size_t)W * H * 4);
    TAP_OK(raster_draw_argb(&s, px, W, H, W * 4, 0) == 0, "downsample: drawn");
    uint32_t lo = cmap_color(rdbu, 0), hi = cmap_color(rdbu, 1), mean = 0;
    for (int sh = 0; sh < 24; sh += 8)
        mean |= (((lo >> sh & 0xff) + (hi >> sh & 0xff) + 1) / 2) << sh;
    int worst = 0;
    for (int y = 10; y < 70; y++)
        for (int x = 10; x < 110; x++) {
            int d = chan_diff(px_at(px, W, x, y), mean);
            if (d > worst) worst = d;
        }
    TAP_OK(worst <= 1, "400 x 300 checkerboard in 100 x 60 px is flat #%06x (worst %d)",
           (unsigned)mean, worst);

    /* The same with SCENE_NEAREST samples single cells: only the two end colours appear. */
    scene_reset(&s, W, H, 0xffffff);
    scene_item *it = scene_heatmap(&s, 10, 10, 100, 60, v, R, C, C, -1, 1, rdbu, 0);
    it->flags |= SCENE_NEAREST;
    raster_draw_argb(&s, px, W, H, W * 4, 0);
    int ends_only = 1;
    for (int y = 10; y < 70; y++)
        for (int x = 10; x < 110; x++) {
            uint32_t p = px_at(px, W, x, y);
            if (p != lo && p != hi) ends_only = 0;
        }
    TAP_OK(ends_only, "SCENE_NEAREST picks cells, no averaging");

    /* A smooth gradient shrunk 4x keeps its order: monotone along x. */
    scene_reset(&s, W, H, 0xffffff);
    for (int r = 0; r < 64; r++)
        for (int c = 0; c < 256; c++) v[r * 256 + c] = (float)c / 255.0f;
    scene_heatmap(&s, 20, 30, 64, 16, v, 64, 256, 256, 0, 1, cmap_find("gray"), 0);
    scene_heatmap(&s, 10, 10, 100, 60, v, 0, 0, 0, 0, 1, NULL, 0); /* empty: draws nothing */
    raster_draw_argb(&s, px, W, H, W * 4, 0);
    int mono = 1;
    for (int x = 21; x < 84; x++)
        if ((px_at(px, W, x, 38) & 0xff) < (px_at(px, W, x - 1, 38) & 0xff)) mono = 0;
    TAP_OK(mono && (px_at(px, W, 20, 38) & 0xff) <= 3 && (px_at(px, W, 83, 38) & 0xff) >= 252,
           "shrunk gradient is monotone from black to white");

    /* The golden holds all three side by side. */
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) v[r * C + c] = ((r + c) & 1) ? 1.0f : -1.0f;
    scene_reset(&s, W, H, 0xffffff);
    scene_heatmap(&s, 10, 10, 45, 30, v, R, C, C, -1, 1, rdbu, 0);
    it = scene_heatmap(&s, 65, 10, 45, 30, v, R, C, C, -1, 1, rdbu, 0);
    it->flags |= SCENE_NEAREST;
    for (int r = 0; r < 64; r++)
        for (int c = 0; c < 256; c++) v[r * 256 + c] = (float)c / 255.0f;
    scene_heatmap(&s, 10, 50, 100, 20, v, 64, 256, 256, 0, 1, cmap_find("viridis"), 0);
    raster_draw_argb(&s, px, W, H, W * 4, 0);
    check_golden("downsample", px, W, H);
    free(px);
    free(v);
    scene_free(&s);
}

/* Distance from (px, py) to the segment (ax, ay)-(bx, by). */
static double seg_dist(double px, double py, double ax, double ay, double bx, double by)
{
    double dx = bx - ax, dy = by - ay, l2 = dx * dx + dy * dy;
    double t = l2 > 0 ? ((px - ax) * dx + (py - ay) * dy) / l2 : 0;
    t = fmax(0, fmin(1, t));
    return hypot(px - (ax + t * dx), py - (ay + t * dy));
}

/* A curve with a point in every pixel column is drawn into memory as columns of pixels, not by
 * cairo's stroker (backend_cairo.c): what it covers must still be the stroke. Every pixel whose
 * centre is well inside the pen (within hw - 0.6 of the polyline) is the curve's colour, every
 * pixel whose centre is well outside (beyond hw + 1.2) is untouched, the NaN break stays open and
 * nothing is drawn outside the clip. A noisy curve (steep segments both ways, 3 points per
 * column), a smooth one (shallow, steep and turning) and a steep one with a point every 1.5
 * columns are checked. */
static void test_dense_curves(void)
{
    enum { W = 200, H = 120, N = 600 };
    static double xy[2 * N];
    static uint32_t px[W * H];
    const double lw = 1.8, hw = lw / 2, clip[4] = {10.5, 5, 180, 110};
    for (int shape = 0; shape < 3; shape++) {
        /* 3.3 points per column; the third a point every 1.5 columns, steep in places */
        int np = shape < 2 ? N : 120;
        for (int i = 0; i < np; i++) {
            double x = 10 + i * (shape < 2 ? 0.3 : 1.5);
            double y = shape == 0   ? 60 + 40 * sin(i * 1.7) * cos(i * 0.31) /* noisy */
                       : shape == 1 ? 60 + 45 * sin(x / 14.0) + (x > 120 ? 0.2 * (x - 120) : 0)
                                    : 60 + 50 * sin(x / 6.0);
            xy[2 * i] = x;
            xy[2 * i + 1] = i == np / 2 ? NAN : y; /* a break in the middle */
        }
        scene s;
        scene_init(&s, W, H, 0xffffff);
        scene_polyline(&s, xy, (size_t)np, clip[0], clip[1], clip[2], clip[3], 0x0000ff, lw, 0);
        TAP_OK(raster_draw_argb(&s, px, W, H, W * 4, 1) == 0, "dense curve %d drawn", shape);
        int inside_bad = 0, outside_bad = 0, clip_bad = 0, inside = 0;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                double cx = x + 0.5, cy = y + 0.5, d = INFINITY;
                for (int i = 0; i + 1 < np; i++)
                    if (isfinite(xy[2 * i + 1]) && isfinite(xy[2 * i + 3]))
                        d = fmin(d, seg_dist(cx, cy, xy[2 * i], xy[2 * i + 1], xy[2 * i + 2],
                                             xy[2 * i + 3]));
                uint32_t p = px_at(px, W, x, y);
                int in_clip = cx > clip[0] && cx < clip[0] + clip[2] && cy > clip[1] &&
                              cy < clip[1] + clip[3];
                if (!in_clip) {
                    clip_bad += x < 10 && p != 0xffffff;
                    continue;
                }
                if (d < hw - 0.6 && x > 11 && x < 189) {
                    inside++;
                    inside_bad += chan_diff(p, 0x0000ff) > FUZZ;
                } else if (d > hw + 1.2) {
                    outside_bad += p != 0xffffff;
                }
            }
        TAP_OK(inside > 200 && inside_bad == 0,
               "dense curve %d: the %d pixels well inside the pen are its colour (%d are not)",
               shape, inside, inside_bad);
        TAP_OK(outside_bad == 0,
               "dense curve %d: pixels well outside the pen are untouched (%d "
               "are not), the break included",
               shape, outside_bad);
        TAP_OK(clip_bad == 0, "dense curve %d: nothing left of the clip (%d pixels)", shape,
               clip_bad);
        scene_free(&s);
    }
}

int main(void)
{
    test_shapes();
    test_downsample();
    test_dense_curves();
    return tap_done();
}
