/* test_export: PNG round trip (size, pixels, tEXt/iTXt, pHYs, alpha), raster_export for .png,
 * .svg and .pdf (metadata, byte-for-byte reproducible), unknown extensions and failures that
 * must leave nothing behind; and the raster text metrics figure layout relies on. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "colormap.h"
#include "figure.h"
#include "pngio.h"
#include "raster.h"
#include "tap.h"

/* memmem is a GNU extension; this is all the tests need. */
static int has_bytes(const char *hay, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; k <= n && i <= n - k; i++)
        if (memcmp(hay + i, needle, k) == 0) return 1;
    return 0;
}

static void test_png_roundtrip(const char *dir)
{
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/rt.png", dir);
    enum { W = 37, H = 11 }; /* odd sizes catch stride mistakes */
    int stride = W * 4 + 12; /* padded rows */
    uint32_t *px = calloc((size_t)H, (size_t)stride);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            uint32_t *row = (uint32_t *)((unsigned char *)px + (size_t)y * stride);
            row[x] = 0xff000000u | (uint32_t)(x * 7) << 16 | (uint32_t)(y * 23) << 8 |
                     (uint32_t)((x + y) & 0xff);
        }
    raster_meta meta[] = {{"Software", "pelab 0.1"},
                          {"Command", "pelab export --view rope -o rt.png"},
                          {"Title", "Position \xce\xb8 (UTF-8)"}};
    int rc = png_write_argb(path, px, W, H, stride, 300.0, meta, 3, err, sizeof err);
    TAP_OK(rc == 0, "png_write_argb (%s)", rc ? err : "ok");
    png_image_rd im;
    TAP_OK(png_read_file(path, &im) == 0, "read back with libpng");
    TAP_OK(im.w == W && im.h == H, "size %d x %d", im.w, im.h);
    TAP_OK(im.color_type == PNG_COLOR_TYPE_RGB, "opaque image written as RGB");
    int same = im.rgba != NULL;
    for (int y = 0; same && y < H; y++)
        for (int x = 0; x < W; x++) {
            const uint8_t *p = im.rgba + ((size_t)y * W + x) * 4;
            if (p[0] != x * 7 || p[1] != y * 23 || p[2] != ((x + y) & 0xff) || p[3] != 255)
                same = 0;
        }
    TAP_OK(same, "pixels round-trip exactly");
    const char *sw = png_text_get(&im, "Software"), *cmd = png_text_get(&im, "Command");
    const char *title = png_text_get(&im, "Title");
    TAP_OK(sw && strcmp(sw, "pelab 0.1") == 0, "tEXt Software = %s", sw ? sw : "(none)");
    TAP_OK(cmd && strcmp(cmd, meta[1].value) == 0, "tEXt Command");
    TAP_OK(title && strcmp(title, meta[2].value) == 0, "UTF-8 Title survives (iTXt)");
    TAP_OK(im.has_phys && im.phys_unit == PNG_RESOLUTION_METER && im.ppm_x == 11811 &&
               im.ppm_y == 11811,
           "pHYs 300 dpi = 11811 px/m (got %u)", (unsigned)im.ppm_x);
    png_image_rd_free(&im);

    /* Default dpi is 96 = 3780 px/m. */
    TAP_OK(png_write_argb(path, px, W, H, stride, 0, NULL, 0, err, sizeof err) == 0 &&
               png_read_file(path, &im) == 0 && im.ppm_x == 3780 && im.n_text == 0,
           "dpi <= 0 writes 96 dpi, no text");
    png_image_rd_free(&im);

    /* Translucent pixels: un-premultiplied RGBA. */
    uint32_t *row0 = px;
    row0[0] = 0x80400000u; /* alpha 128, premultiplied red 64 -> 127.5 */
    row0[1] = 0x00000000u; /* fully transparent */
    TAP_OK(png_write_argb(path, px, W, H, stride, 96, NULL, 0, err, sizeof err) == 0 &&
               png_read_file(path, &im) == 0,
           "write with alpha");
    TAP_OK(im.color_type == PNG_COLOR_TYPE_RGB_ALPHA, "alpha present: RGBA");
    TAP_OK(im.rgba && abs(im.rgba[0] - 128) <= 1 && im.rgba[1] == 0 && im.rgba[3] == 128,
           "un-premultiplied (r %d a %d)", im.rgba ? im.rgba[0] : -1, im.rgba ? im.rgba[3] : -1);
    TAP_OK(im.rgba && im.rgba[7] == 0, "transparent pixel keeps alpha 0");
    png_image_rd_free(&im);

    TAP_OK(png_write_argb(path, px, W, H, W * 2, 96, NULL, 0, err, sizeof err) == -1,
           "a stride smaller than the row is refused: %s", err);
    free(px);
}

/* A small text-free-or-not scene exercising every item kind. */
static void build_scene(scene *s, scene_target *t, int with_text)
{
    const fig_theme *th = fig_theme_get(0);
    scene_reset(s, t->width, t->height, th->bg);
    float data[6 * 8];
    for (int i = 0; i < 48; i++) data[i] = (float)sin(i * 0.4);
    data[9] = NAN;
    fig_rect r = {0, 0, t->width, t->height};
    if (with_text) r = fig_title(s, t, th, r, "Export test", "svg / pdf / png");
    fig_rect cb = fig_take_right(&r, fig_colorbar_width(t), 8);
    fig_axes a = fig_axes_draw(s, t, th, r, 0, 8, 0, 6, with_text ? "column" : NULL,
                               with_text ? "row" : NULL,
                               FIG_Y_DOWN | (with_text ? 0 : FIG_NO_XTICKS | FIG_NO_YTICKS));
    scene_heatmap(s, a.area.x, a.area.y, a.area.w, a.area.h, data, 6, 8, 8, -1, 1,
                  cmap_default_diverging(), th->mask);
    if (with_text)
        fig_colorbar(s, t, th, (fig_rect){cb.x, a.area.y, cb.w, a.area.h}, -1, 1,
                     cmap_default_diverging(), "value");
    scene_arrow(s, a.area.x + 10, a.area.y + 10, a.area.x + 60, a.area.y + 40, 0x000000, 2);
    scene_circle(s, a.area.x + 80, a.area.y + 50, 15, th->series[2], 2, 0);
}

static void test_exports(const char *dir)
{
    char p1[1024], p2[1024], err[512];
    scene_target t = raster_target(320, 200, 12);
    scene s;
    scene_init(&s, t.width, t.height, 0xffffff);
    build_scene(&s, &t, 1);
    raster_meta meta[] = {{"Software", "pelab 0.1"},
                          {"Title", "Export <test> & more"},
                          {"Command", "pelab export -o x.pdf"}};
    raster_export_opts o = {144, meta, 3, 1, 1, 0};

    snprintf(p1, sizeof p1, "%s/fig.png", dir);
    TAP_OK(raster_export(&s, p1, &o, err, sizeof err) == 0, "export .png");
    png_image_rd im;
    TAP_OK(png_read_file(p1, &im) == 0 && im.w == 320 && im.h == 200 && im.ppm_x == 5669 &&
               png_text_get(&im, "Title") && strcmp(png_text_get(&im, "Title"), meta[1].value) == 0,
           "png: size, 144 dpi, Title");
    png_image_rd_free(&im);

    const char *exts[] = {"svg", "pdf"};
    for (int k = 0; k < 2; k++) {
        snprintf(p1, sizeof p1, "%s/a.%s", dir, exts[k]);
        snprintf(p2, sizeof p2, "%s/b.%s", dir, exts[k]);
        int r1 = raster_export(&s, p1, &o, err, sizeof err);
        /* A different scene in between advances cairo's internal counters. */
        build_scene(&s, &t, 0);
        char junk[1024];
        snprintf(junk, sizeof junk, "%s/junk.%s", dir, exts[k]);
        raster_export(&s, junk, &o, err, sizeof err);
        build_scene(&s, &t, 1);
        int r2 = raster_export(&s, p2, &o, err, sizeof err);
        TAP_OK(r1 == 0 && r2 == 0, "export .%s twice", exts[k]);
        TAP_OK(file_equal(p1, p2), ".%s exports are byte-identical", exts[k]);
        size_t len = 0;
        char *txt = file_read(p1, &len);
        if (k == 0) {
            TAP_OK(txt && strstr(txt, "<title>Export &lt;test&gt; &amp; more</title>"),
                   "svg: <title>, escaped");
            TAP_OK(txt && strstr(txt, "<metadata>") && strstr(txt, "Command: pelab export"),
                   "svg: <metadata> carries the keys");
            TAP_OK(txt && strstr(txt, "<image ") &&
                       strstr(txt, "style=\"image-rendering:pixelated\""),
                   "svg: heatmap is an embedded image, pixelated");
            /* pelab's SVG writer: the viewBox is the figure's units, the size its CSS pixels */
            TAP_OK(txt && strstr(txt, "width=\"213.33px\"") && strstr(txt, "viewBox=\"0 0 320 "),
                   "svg: 320 px at 144 dpi is 213.3 CSS px");
            TAP_OK(txt && strstr(txt, "<text ") && !strstr(txt, "<symbol"),
                   "svg: text is <text>, not glyph outlines");
        } else {
            TAP_OK(txt && len > 4 && memcmp(txt, "%PDF", 4) == 0, "pdf: header");
            TAP_OK(txt && has_bytes(txt, len, "/Title (Export <test> & more)"), "pdf: /Title");
            TAP_OK(txt && has_bytes(txt, len, "/Creator (pelab 0.1)"), "pdf: /Creator");
            TAP_OK(txt && !has_bytes(txt, len, "CreationDate"), "pdf: no /CreationDate");
            TAP_OK(txt && has_bytes(txt, len, "/Interpolate false"),
                   "pdf: heatmap image without interpolation");
            TAP_OK(txt && has_bytes(txt, len, "DejaVuSans"), "pdf: text as text (font embedded)");
        }
        free(txt);
    }

    /* Unknown extension: 1, nothing touched. */
    int before = dir_entries(dir);
    snprintf(p1, sizeof p1, "%s/fig.bmp", dir);
    TAP_OK(raster_export(&s, p1, &o, err, sizeof err) == 1, "unknown extension returns 1: %s", err);
    snprintf(p1, sizeof p1, "%s/noext", dir);
    TAP_OK(raster_export(&s, p1, &o, err, sizeof err) == 1, "no extension returns 1");
    TAP_OK(dir_entries(dir) == before, "and touches nothing");
    snprintf(p1, sizeof p1, "%s/FIG.PNG", dir);
    TAP_OK(raster_export(&s, p1, &o, err, sizeof err) == 0, "extensions are case-insensitive");

    /* Failures leave nothing behind. */
    snprintf(p1, sizeof p1, "%s/missing/fig.pdf", dir);
    TAP_OK(raster_export(&s, p1, &o, err, sizeof err) == -1 && strstr(err, "does not exist"),
           "missing directory: %s", err);
    before = dir_entries(dir);
    scene bad;
    scene_init(&bad, 0, 0, 0);
    snprintf(p1, sizeof p1, "%s/empty.png", dir);
    TAP_OK(raster_export(&bad, p1, &o, err, sizeof err) == -1 && dir_entries(dir) == before,
           "a 0 x 0 figure fails and writes nothing: %s", err);
    scene_free(&bad);
    scene_free(&s);
}

/* Bounding box of non-background pixels. */
static int ink_box(const uint32_t *px, int w, int h, int *x0, int *y0, int *x1, int *y1)
{
    *x0 = w;
    *y0 = h;
    *x1 = -1;
    *y1 = -1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            if ((px[(size_t)y * w + x] & 0xffffff) != 0xffffff) {
                if (x < *x0) *x0 = x;
                if (x > *x1) *x1 = x;
                if (y < *y0) *y0 = y;
                if (y > *y1) *y1 = y;
            }
    return *x1 >= 0;
}

static void test_text_metrics(void)
{
    scene_target t = raster_target(400, 200, 20);
    TAP_CLOSE(t.text_h, 26.0, 0, 1e-12, "text_h = 1.3 font_px");
    TAP_OK(t.measure != NULL && t.cells == 0 && t.hairline == 1.0, "raster target fields");
    double w1 = scene_text_width(&t, "0", 1.0), w4 = scene_text_width(&t, "0000", 1.0);
    TAP_CLOSE(w4, 4 * w1, 1e-9, 0, "widths add up (no metric hinting)");
    TAP_CLOSE(w1, 0.636 * 20, 0.02, 0, "DejaVu Sans digit advance is 0.636 em");
    TAP_CLOSE(scene_text_width(&t, "0", 2.0), 2 * w1, 1e-9, 0, "width scales with size");
    TAP_OK(t.char_w > 0.4 * 20 && t.char_w < 0.7 * 20, "char_w %.2f is a plausible average",
           t.char_w);
    TAP_OK(raster_font_px(1000, 600, 1) == 15 && raster_font_px(300, 200, 1) == 11 &&
               raster_font_px(1000, 600, 2) == 30,
           "raster_font_px: h/40, at least 11, times scale");

    /* The anchor contract: the glyphs of a TOP-LEFT text lie in [x, x+w] x [y, y+text_h]. */
    int W = 400, H = 200;
    uint32_t *px = malloc((size_t)W * H * 4);
    scene s;
    scene_init(&s, W, H, 0xffffff);
    s.text_h = t.text_h;
    const char *str = "Hg0.5";
    double tw = scene_text_width(&t, str, 1.0);
    scene_text(&s, 50, 40, str, 1.0, SCENE_LEFT | SCENE_TOP, 0x000000, 0);
    raster_draw_argb(&s, px, W, H, W * 4, 1);
    int x0, y0, x1, y1;
    TAP_OK(ink_box(px, W, H, &x0, &y0, &x1, &y1), "text drawn");
    TAP_OK(x0 >= 50 && x1 <= 50 + tw + 1 && y0 >= 40 && y1 <= 40 + t.text_h,
           "TOP|LEFT ink %d..%d x %d..%d inside 50..%.1f x 40..%.1f", x0, x1, y0, y1, 50 + tw,
           40 + t.text_h);
    TAP_OK(x1 - x0 > 0.8 * tw, "ink spans the measured width (%d of %.1f)", x1 - x0, tw);

    scene_reset(&s, W, H, 0xffffff);
    s.text_h = t.text_h;
    scene_text(&s, 200, 100, "00", 1.0, SCENE_CENTER | SCENE_MIDDLE, 0x000000, 0);
    raster_draw_argb(&s, px, W, H, W * 4, 1);
    ink_box(px, W, H, &x0, &y0, &x1, &y1);
    TAP_CLOSE(0.5 * (x0 + x1 + 1), 200, 0, 1.5, "CENTER: digits centred on x");
    TAP_CLOSE(0.5 * (y0 + y1 + 1), 100, 0, 2.0, "MIDDLE: digits centred on y");

    scene_reset(&s, W, H, 0xffffff);
    s.text_h = t.text_h;
    scene_text(&s, 200, 100, "value", 1.0, SCENE_CENTER | SCENE_MIDDLE | SCENE_VERTICAL, 0, 0);
    raster_draw_argb(&s, px, W, H, W * 4, 1);
    ink_box(px, W, H, &x0, &y0, &x1, &y1);
    double vw = scene_text_width(&t, "value", 1.0);
    TAP_OK(y1 - y0 + 1 > 0.85 * vw && y1 - y0 + 1 <= vw + 1 && x1 - x0 + 1 <= t.text_h,
           "VERTICAL: runs up the page (%d x %d for %.1f)", x1 - x0 + 1, y1 - y0 + 1, vw);

    /* Without text_h the backend falls back to the default font of the canvas. */
    scene_reset(&s, W, H, 0xffffff);
    scene_text(&s, 0, 0, "00", 1.0, 0, 0, 0);
    raster_draw_argb(&s, px, W, H, W * 4, 1);
    ink_box(px, W, H, &x0, &y0, &x1, &y1);
    double def_w = 2 * 0.636 * raster_font_px(W, H, 1);
    TAP_CLOSE(x1 - x0 + 1, def_w, 0.25, 0, "text_h 0: drawn at raster_font_px(w, h, 1)");
    scene_free(&s);
    free(px);
}

int main(void)
{
    char dir[512];
    if (test_tmpdir(dir, sizeof dir, "export") != 0) return tap_skip_all("no temporary directory");
    test_png_roundtrip(dir);
    test_exports(dir);
    test_text_metrics();
    rm_tree(dir);
    return tap_done();
}
