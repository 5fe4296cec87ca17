/* test_cellgrid_golden: scenes built by hand, rasterised into cells, compared with text goldens
 * in tests/render/term/golden/. PELAB_REGEN_GOLDEN=1 rewrites them; on a mismatch the actual dump
 * is written next to the test binary as <name>.actual. A missing golden fails. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cellgrid.h"
#include "colormap.h"
#include "scene.h"
#include "tap.h"

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *q = realloc(buf, cap * 2);
            if (!q) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = q;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf) buf[n] = 0;
    return buf;
}

static int write_all(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t n = strlen(text);
    int ok = fwrite(text, 1, n, f) == n;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

/* Render s into a cols x rows grid and compare the dump with golden/<name>.txt. */
static void check_golden(const char *name, const scene *s, int cols, int rows, int ascii,
                         int colors)
{
    cellgrid g;
    if (cellgrid_init(&g, cols, rows, ascii) != 0) {
        TAP_OK(0, "%s: grid allocation", name);
        return;
    }
    cellgrid_render(&g, s);
    char *dump = cellgrid_dump(&g, colors);
    cellgrid_free(&g);
    if (!dump) {
        TAP_OK(0, "%s: dump", name);
        return;
    }
    const char *src = getenv("PELAB_SRC");
    char path[4096];
    snprintf(path, sizeof(path), "%s/tests/render/term/golden/%s.txt", src ? src : ".", name);
    const char *regen = getenv("PELAB_REGEN_GOLDEN");
    if (regen && *regen && strcmp(regen, "0") != 0) {
        TAP_OK(write_all(path, dump) == 0, "%s: golden regenerated (%s)", name, path);
        free(dump);
        return;
    }
    char *want = read_all(path);
    if (!want) {
        TAP_OK(0, "%s: golden %s missing (%s); PELAB_REGEN_GOLDEN=1 creates it", name, path,
               strerror(errno));
        free(dump);
        return;
    }
    int same = strcmp(want, dump) == 0;
    if (!same) {
        char apath[4096];
        const char *build = getenv("PELAB_BUILD");
        snprintf(apath, sizeof(apath), "%s/tests/render/term/%s.actual", build ? build : ".", name);
        write_all(apath, dump);
        tap_diag("%s differs from %s; actual written to %s", name, path, apath);
        printf("%s", dump);
    }
    TAP_OK(same, "%s matches its golden", name);
    free(want);
    free(dump);
}

/* A 4 x 6 ramp, one masked cell, drawn 1:1 in pixels (6 x 4 pixels = 6 cols x 2 rows). */
static void scene_heat_small(scene *s)
{
    float d[24];
    for (int i = 0; i < 24; i++) d[i] = (float)i;
    d[9] = NAN;
    scene_reset(s, 10, 8, 0x101010);
    scene_heatmap(s, 2, 2, 6, 4, d, 4, 6, 6, 0, 23, cmap_find("viridis"), 0xff00ff);
}

/* A sine over two periods, clipped to a plot area, and a dashed horizontal mark. */
static void scene_curve(scene *s)
{
    double xy[2 * 81];
    for (int i = 0; i <= 80; i++) {
        double x = 1.0 + 28.0 * i / 80.0;
        xy[2 * i] = x;
        xy[2 * i + 1] = 8.0 - 6.5 * sin(2.0 * 3.14159265358979 * i / 40.0);
    }
    xy[2 * 40 + 1] = NAN; /* a break in the middle */
    scene_reset(s, 30, 16, 0x000000);
    scene_polyline(s, xy, 81, 0, 0, 30, 16, 0x4e79a7, 0, 0);
    scene_polyline(s, (const double[]){1, 12.2, 29, 12.2}, 2, 0, 0, 30, 16, 0xe15759, 0,
                   SCENE_DASHED);
}

/* Arrows in the eight directions from a centre, and a long diagonal one. */
static void scene_arrows(scene *s)
{
    scene_reset(s, 24, 16, 0x000000);
    for (int k = 0; k < 8; k++) {
        double a = k * 3.14159265358979 / 4.0;
        scene_arrow(s, 12, 8, 12 + 9 * cos(a), 8 + 6.5 * sin(a), 0xffffff, 0);
    }
}

/* A plot frame with ticks, a dashed grid rule and a slanted rule (goes to braille). */
static void scene_rules(scene *s)
{
    scene_reset(s, 24, 14, 0x000000);
    scene_line(s, 4, 2, 4, 10, 0xaaaaaa, 0, SCENE_RULE);   /* y axis */
    scene_line(s, 4, 10, 20, 10, 0xaaaaaa, 0, SCENE_RULE); /* x axis */
    scene_line(s, 20, 2, 20, 10, 0xaaaaaa, 0, SCENE_RULE); /* right edge */
    scene_line(s, 4, 2, 20, 2, 0xaaaaaa, 0, SCENE_RULE);   /* top edge */
    for (int x = 8; x <= 16; x += 4) scene_line(s, x, 10, x, 11, 0xaaaaaa, 0, SCENE_RULE);
    scene_line(s, 4, 6, 3, 6, 0xaaaaaa, 0, SCENE_RULE); /* y tick, to the left */
    scene_line(s, 4, 6, 20, 6, 0x555555, 0, SCENE_RULE | SCENE_DASHED);
    scene_line(s, 1, 13, 8, 11, 0xaaaaaa, 0, SCENE_RULE);
}

/* Anchors, bold, vertical, clipping and UTF-8 text over a filled rectangle. */
static void scene_text_all(scene *s)
{
    scene_reset(s, 20, 12, 0x000000);
    scene_rect(s, 0, 4, 20, 4, 0x303060, SCENE_FILL);
    scene_text(s, 0, 0, "left", 1, SCENE_LEFT | SCENE_TOP, 0xffffff, 0);
    scene_text(s, 20, 0, "right", 1, SCENE_RIGHT | SCENE_TOP, 0xffffff, SCENE_BOLD);
    scene_text(s, 10, 5, "mid", 1, SCENE_CENTER | SCENE_MIDDLE, 0xffff00, 0);
    scene_text(s, 10, 8, "θ·π≤1", 1, SCENE_CENTER | SCENE_BOTTOM, 0x00ffff, 0);
    scene_text(s, 0, 10, "vertical", 1, SCENE_CENTER | SCENE_TOP | SCENE_VERTICAL, 0xff8800, 0);
    scene_text(s, 16, 10, "clipped-off", 1, SCENE_LEFT | SCENE_TOP, 0xffffff, 0);
    scene_text(s, -3, 2, "under", 1, SCENE_LEFT | SCENE_TOP, 0xffffff, 0);
}

/* A circle outline, a disc, and a stroked box around cells. */
static void scene_circles(scene *s)
{
    scene_reset(s, 30, 16, 0x000000);
    scene_circle(s, 8, 8, 6, 0x59a14f, 0, 0);
    scene_circle(s, 22, 8, 4, 0xedc948, 0, SCENE_FILL);
    scene_rect(s, 15, 0, 14, 16, 0xb07aa1, 0);
}

/* Everything together, over a heatmap: what the ASCII and colour dumps are compared on. */
static void scene_mixed(scene *s)
{
    static float d[16 * 32];
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 32; c++) d[r * 32 + c] = (float)(cos(c / 5.0) * sin(r / 4.0));
    scene_reset(s, 24, 16, 0x181818);
    scene_heatmap(s, 2, 2, 16, 12, d, 16, 32, 32, -1, 1, cmap_find("rdbu"), 0x000000);
    scene_line(s, 1, 2, 1, 14, 0xcccccc, 0, SCENE_RULE);
    scene_line(s, 1, 14, 18, 14, 0xcccccc, 0, SCENE_RULE);
    double xy[] = {2, 13, 8, 3, 12, 9, 18, 4};
    scene_polyline(s, xy, 4, 2, 2, 16, 12, 0xffffff, 0, 0);
    scene_arrow(s, 20, 12, 20, 3, 0xffcc00, 0);
    scene_text(s, 10, 14, "x→θ", 1, SCENE_CENTER | SCENE_TOP, 0xeeeeee, SCENE_BOLD);
}

int main(void)
{
    scene s;
    scene_init(&s, 1, 1, 0);
    scene_heat_small(&s);
    check_golden("heat_small", &s, 10, 4, 0, 1);
    scene_curve(&s);
    check_golden("curve", &s, 30, 8, 0, 0);
    scene_arrows(&s);
    check_golden("arrows", &s, 24, 8, 0, 0);
    scene_rules(&s);
    check_golden("rules", &s, 24, 7, 0, 0);
    check_golden("rules_ascii", &s, 24, 7, 1, 0);
    scene_text_all(&s);
    check_golden("text", &s, 20, 6, 0, 1);
    scene_circles(&s);
    check_golden("circles", &s, 30, 8, 0, 1);
    scene_mixed(&s);
    check_golden("mixed", &s, 24, 8, 0, 1);
    check_golden("mixed_ascii", &s, 24, 8, 1, 1);
    scene_free(&s);
    return tap_done();
}
