/* cellgrid.c: a scene rasterised into terminal cells.
 *
 * Two layers are kept while drawing, both in the grid's scratch memory:
 *   pixels:  (2 rows, cols) colours, one per half-block "pixel" (1 x 1 figure unit);
 *   overlay: (rows, cols) records of what sits on top of a cell: braille dots, box-drawing
 *            arms, or one character of text, with its colour.
 * Fills and heatmaps write pixels (and wipe the overlay where they land); lines, curves, circles
 * and arrows set braille dots; rules set box arms; text replaces a cell's overlay. At the end each
 * cell becomes one character: '▀' (fg top, bg bottom) or ' ' for bare pixels, else the overlay
 * character over the average of the cell's two pixels. */
#include "cellgrid.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"

enum { OV_NONE = 0, OV_DOTS, OV_BOX, OV_TEXT };
/* A pixel layer colour's spare bit: the pixel is part of a continuous image (a heatmap), which a
 * palette terminal may dither; flat fills, bars and shading never are (CELL_IMAGE_*). */
#define PIX_IMAGE 0x01000000u
enum { ARM_UP = 1, ARM_DOWN = 2, ARM_LEFT = 4, ARM_RIGHT = 8 };

typedef struct overlay {
    uint32_t ch; /* OV_TEXT */
    uint32_t fg;
    uint8_t kind;
    uint8_t bits; /* braille dot bits (OV_DOTS) or ARM_* (OV_BOX) */
    uint8_t attr;
} overlay;

typedef struct raster {
    int cols, rows;
    uint32_t *pix; /* (2 rows, cols) */
    overlay *ov;   /* (rows, cols) */
    int patterned; /* dashed or dotted curves drawn so far this frame (pen.share) */
} raster;

/* Braille dot bit for dot column dx (0..1) and dot row dy (0..3) of a cell (Unicode order:
 * dots 1-2-3 down the left, 4-5-6 down the right, then 7 and 8 underneath). */
static const uint8_t braille_bit[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};
/* Dots inside the top and bottom half-block pixel of a cell. */
enum { DOTS_TOP = 0x1b, DOTS_BOTTOM = 0xe4 };

static const char shade_ramp[] = " .:-=+*#%@";
static const double pi = 3.14159265358979323846;

static double luminance(uint32_t c)
{
    return (0.2126 * (double)((c >> 16) & 0xff) + 0.7152 * (double)((c >> 8) & 0xff) +
            0.0722 * (double)(c & 0xff)) /
           255.0;
}

uint32_t cellgrid_shade(uint32_t rgb, uint32_t background)
{
    double lb = luminance(background);
    /* Normalise by the largest contrast possible on this background, so a dark and a light
     * theme both use the whole ramp. */
    double span = lb > 0.5 ? lb : 1.0 - lb;
    double c = fabs(luminance(rgb) - lb) / span;
    int i = (int)(c * 10.0);
    if (i < 0) i = 0;
    if (i > 9) i = 9;
    return (uint32_t)(unsigned char)shade_ramp[i];
}

static uint32_t mix(uint32_t a, uint32_t b)
{
    uint32_t r = ((((a >> 16) & 0xff) + ((b >> 16) & 0xff) + 1) / 2) << 16;
    uint32_t g = ((((a >> 8) & 0xff) + ((b >> 8) & 0xff) + 1) / 2) << 8;
    uint32_t bl = ((a & 0xff) + (b & 0xff) + 1) / 2;
    return r | g | bl;
}

/* Bytes of scratch the pixel and overlay layers need for a cols x rows grid; 0 on overflow. */
static size_t layers_size(int cols, int rows)
{
    size_t n = (size_t)cols * (size_t)rows;
    if (rows && n / (size_t)rows != (size_t)cols) return 0;
    size_t per = 2 * sizeof(uint32_t) + sizeof(overlay);
    if (n > SIZE_MAX / per) return 0;
    return n * per;
}

/* Make the scratch at least bytes long (it only grows). */
static int scratch_reserve(cellgrid *g, size_t bytes)
{
    if (bytes <= g->scratch_size) return 0;
    void *p = realloc(g->scratch, bytes);
    if (!p) return -1;
    g->scratch = p;
    g->scratch_size = bytes;
    return 0;
}

static void raster_bind(raster *r, cellgrid *g)
{
    r->cols = g->cols;
    r->rows = g->rows;
    r->pix = g->scratch;
    r->ov = (overlay *)(void *)(r->pix + (size_t)2 * (size_t)g->cols * (size_t)g->rows);
}

int cellgrid_init(cellgrid *g, int cols, int rows, int ascii)
{
    memset(g, 0, sizeof(*g));
    g->ascii = ascii ? 1 : 0;
    return cellgrid_resize(g, cols, rows);
}

void cellgrid_free(cellgrid *g)
{
    free(g->cells);
    free(g->scratch);
    memset(g, 0, sizeof(*g));
}

int cellgrid_resize(cellgrid *g, int cols, int rows)
{
    if (cols < 0 || rows < 0) return -1;
    size_t n = (size_t)cols * (size_t)rows;
    size_t layers = layers_size(cols, rows);
    if (n && (!layers || n > SIZE_MAX / sizeof(cellgrid_cell))) return -1;
    cellgrid_cell *cells = NULL;
    if (n) {
        cells = malloc(n * sizeof(cellgrid_cell));
        if (!cells) return -1;
        if (scratch_reserve(g, layers) != 0) {
            free(cells);
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            cells[i] = (cellgrid_cell){.ch = ' ', .fg = 0xffffff, .bg = 0, .attr = 0};
    }
    free(g->cells);
    g->cells = cells;
    g->cols = cols;
    g->rows = rows;
    return 0;
}

scene_target cellgrid_target(int cols, int rows)
{
    scene_target t;
    memset(&t, 0, sizeof(t));
    t.width = cols;
    t.height = 2.0 * rows;
    t.text_h = 2.0;
    t.char_w = 1.0;
    t.hairline = 0.5; /* one braille dot */
    t.cells = 1;
    return t;
}

/* ---- pixels ---------------------------------------------------------------------------- */

static void put_pixel(raster *r, int px, int py, uint32_t color)
{
    r->pix[(size_t)py * (size_t)r->cols + (size_t)px] = color;
    overlay *o = &r->ov[(size_t)(py / 2) * (size_t)r->cols + (size_t)px];
    if (o->kind == OV_DOTS) {
        /* Keep the dots of the other half of the cell. */
        o->bits &= (uint8_t) ~((py & 1) ? DOTS_BOTTOM : DOTS_TOP);
        if (!o->bits) o->kind = OV_NONE;
    } else {
        o->kind = OV_NONE;
    }
}

/* The half-open range [*lo, *hi) of pixels whose centres lie in [a, a + len), clipped to
 * [0, n). */
static void pixel_span(double a, double len, int n, int *lo, int *hi)
{
    double l = ceil(a - 0.5), h = ceil(a + len - 0.5);
    if (!(l > 0)) l = 0; /* also NaN */
    if (!(h < n)) h = n;
    if (!(h > l)) h = l;
    *lo = (int)l;
    *hi = (int)h;
}

static void fill_rect(raster *r, double x, double y, double w, double h, uint32_t color)
{
    int x0, x1, y0, y1;
    pixel_span(x, w, r->cols, &x0, &x1);
    pixel_span(y, h, 2 * r->rows, &y0, &y1);
    for (int py = y0; py < y1; py++)
        for (int px = x0; px < x1; px++) put_pixel(r, px, py, color);
}

/* Source index range [lo, hi) feeding output pixel p, for a source axis of n elements drawn over
 * [a, a + len) units: a box (every source element whose position falls in the pixel, the ranges of
 * neighbouring pixels partition the source) when the source is denser than the pixels, else the
 * nearest element. */
static void source_range(double a, double len, size_t n, int p, int nearest, size_t *lo, size_t *hi)
{
    double scale = (double)n / len;
    double t0 = ((double)p - a) * scale, t1 = ((double)p + 1.0 - a) * scale;
    if (!nearest && scale > 1.0) {
        double l = floor(t0), h = floor(t1);
        if (l < 0) l = 0;
        if (h > (double)n) h = (double)n;
        if (h > l) {
            *lo = (size_t)l;
            *hi = (size_t)h;
            return;
        }
    }
    double c = floor(((double)p + 0.5 - a) * scale);
    if (c < 0) c = 0;
    if (c > (double)n - 1) c = (double)n - 1;
    *lo = (size_t)c;
    *hi = *lo + 1;
}

static void draw_heatmap(cellgrid *g, raster *r, const scene_item *it)
{
    size_t rows = it->u.heat.rows, cols = it->u.heat.cols;
    double x = it->u.heat.x, y = it->u.heat.y, w = it->u.heat.w, h = it->u.heat.h;
    const float *data = it->u.heat.data;
    if (!rows || !cols || !data || !(w > 0) || !(h > 0)) return;
    int px0, px1, py0, py1;
    pixel_span(x, w, r->cols, &px0, &px1);
    pixel_span(y, h, 2 * r->rows, &py0, &py1);
    if (px0 >= px1 || py0 >= py1) return;
    int nearest = (it->flags & SCENE_NEAREST) != 0;
    const cmap *map = it->u.heat.map ? it->u.heat.map : cmap_default_sequential();
    double vmin = it->u.heat.vmin, vmax = it->u.heat.vmax;
    double inv = vmax > vmin ? 1.0 / (vmax - vmin) : 0.0;

    /* Working memory after the layers: column ranges per output pixel, and one output row's
     * sums and finite counts per source column (the box sums are built a row band at a time,
     * so every source element is read once per output row it feeds). */
    size_t npx = (size_t)(px1 - px0);
    size_t base = (layers_size(r->cols, r->rows) + 15) & ~(size_t)15; /* aligned for size_t */
    if (npx > (SIZE_MAX - base) / (2 * sizeof(size_t))) return;
    size_t ranges = npx * 2 * sizeof(size_t);
    if (cols > (SIZE_MAX - base - ranges) / (2 * sizeof(double))) return;
    size_t need = base + ranges + cols * 2 * sizeof(double);
    if (scratch_reserve(g, need) != 0) return;
    raster_bind(r, g);
    size_t *crange = (size_t *)(void *)((char *)g->scratch + base); /* (npx, 2) */
    double *sum = (double *)(void *)(crange + npx * 2);             /* (cols) */
    double *fin = sum + cols;                                       /* (cols) */

    for (size_t k = 0; k < npx; k++)
        source_range(x, w, cols, px0 + (int)k, nearest, &crange[2 * k], &crange[2 * k + 1]);
    size_t cmin = crange[0], cmax = crange[2 * npx - 1];

    size_t prev_lo = SIZE_MAX, prev_hi = SIZE_MAX;
    for (int py = py0; py < py1; py++) {
        size_t rlo, rhi;
        source_range(y, h, rows, py, nearest, &rlo, &rhi);
        if (rlo != prev_lo || rhi != prev_hi) { /* upsampled rows repeat the previous band */
            for (size_t c = cmin; c < cmax; c++) sum[c] = fin[c] = 0.0;
            for (size_t sr = rlo; sr < rhi; sr++) {
                const float *row = data + sr * cols;
                /* Non-finite floats have all exponent bits set. Testing the bits (not a float
                 * comparison, which may trap on NaN) keeps the loop branch-free: it vectorises. */
                for (size_t c = cmin; c < cmax; c++) {
                    uint32_t b;
                    memcpy(&b, &row[c], sizeof(b));
                    uint32_t keep = (b & 0x7f800000u) != 0x7f800000u ? 0xffffffffu : 0u;
                    b &= keep;
                    float v;
                    memcpy(&v, &b, sizeof(v));
                    sum[c] += (double)v;
                    fin[c] += (double)(keep & 1u);
                }
            }
            prev_lo = rlo;
            prev_hi = rhi;
        }
        for (size_t k = 0; k < npx; k++) {
            double s = 0.0, f = 0.0;
            for (size_t c = crange[2 * k]; c < crange[2 * k + 1]; c++) {
                s += sum[c];
                f += fin[c];
            }
            double total = (double)(rhi - rlo) * (double)(crange[2 * k + 1] - crange[2 * k]);
            uint32_t color;
            if (f == 0.0 || 2.0 * f < total) { /* mostly masked */
                color = it->u.heat.mask_color;
            } else {
                double t = inv > 0.0 ? (s / f - vmin) * inv : 0.5;
                color = cmap_color(map, t);
            }
            put_pixel(r, px0 + (int)k, py, (color & 0xffffff) | PIX_IMAGE);
        }
    }
}

static void fill_disc(raster *r, double cx, double cy, double rad, uint32_t color)
{
    int x0, x1, y0, y1;
    pixel_span(cx - rad, 2 * rad, r->cols, &x0, &x1);
    pixel_span(cy - rad, 2 * rad, 2 * r->rows, &y0, &y1);
    for (int py = y0; py < y1; py++) {
        double dy = py + 0.5 - cy;
        for (int px = x0; px < x1; px++) {
            double dx = px + 0.5 - cx;
            if (dx * dx + dy * dy <= rad * rad) put_pixel(r, px, py, color);
        }
    }
}

/* ---- braille dots ---------------------------------------------------------------------- */

static void set_dot(raster *r, long dx, long dy, uint32_t color)
{
    if (dx < 0 || dy < 0 || dx >= 2L * r->cols || dy >= 4L * r->rows) return;
    overlay *o = &r->ov[(size_t)(dy / 4) * (size_t)r->cols + (size_t)(dx / 2)];
    if (o->kind != OV_DOTS) {
        o->kind = OV_DOTS;
        o->bits = 0;
        o->attr = 0;
    }
    o->bits |= braille_bit[dx & 1][dy & 3];
    o->fg = color;
}

typedef struct pen {
    uint32_t color;
    int thick;  /* dots */
    int dashed; /* SCENE_DASHED: 4 dots on, 3 off, continued along a polyline */
    int dotted; /* SCENE_DOTTED: 1 dot on, 3 off */
    long phase;
    /* A braille cell shows one colour, so a dash's gap of a dot or two left no cell to the
     * curve under it: where a dashed or dotted curve runs over another one's cells it takes
     * only one cell in SHARE_CELLS, the k-th such curve of the frame at its own offset, and the
     * curves under it keep the rest (issue 27: extension's none hid under llama3 and YaRN). */
    int share; /* k + 1 for the k-th patterned curve, 0 for a solid one */
    long cell; /* the cell the last dot fell in, and how many cells the curve has crossed */
    long cells;
    double cx0, cy0, cx1, cy1; /* clip rectangle, units */
    long dx0, dy0, dx1, dy1;   /* the same in dots, inclusive (thick stamps are clipped too) */
} pen;

/* A dot index for unit coordinate v, kept in a range a long holds (the grid is far smaller). */
static long dot_index(double v)
{
    double d = floor(2.0 * v);
    return d < -1.0 ? -1 : d > 1e15 ? (long)1e15 : (long)d;
}

static void pen_dots_bounds(pen *p)
{
    p->dx0 = dot_index(p->cx0);
    p->dy0 = dot_index(p->cy0);
    p->dx1 = dot_index(p->cx1);
    p->dy1 = dot_index(p->cy1);
}

static void pen_init(pen *p, const raster *r, const scene_item *it)
{
    p->color = it->color;
    double w = it->width > 0 ? it->width : 0.5;
    p->thick = (int)lround(w * 2.0);
    if (p->thick < 1) p->thick = 1;
    if (p->thick > 16) p->thick = 16;
    p->dashed = (it->flags & SCENE_DASHED) != 0;
    p->dotted = (it->flags & SCENE_DOTTED) != 0;
    p->phase = 0;
    p->share = 0;
    p->cell = -1;
    p->cells = 0;
    /* Points exactly on the far edge would land one dot outside. */
    p->cx0 = 0.0;
    p->cy0 = 0.0;
    p->cx1 = r->cols - 1e-9;
    p->cy1 = 2.0 * r->rows - 1e-9;
    pen_dots_bounds(p);
}

static void pen_clip(pen *p, double x, double y, double w, double h)
{
    if (x > p->cx0) p->cx0 = x;
    if (y > p->cy0) p->cy0 = y;
    if (x + w - 1e-9 < p->cx1) p->cx1 = x + w - 1e-9;
    if (y + h - 1e-9 < p->cy1) p->cy1 = y + h - 1e-9;
    pen_dots_bounds(p);
}

enum { SHARE_CELLS = 4 };

/* A curve's dash pattern: one pen shares cells with the curves under it (pen.share). */
static void pen_share(raster *r, pen *p)
{
    if (p->dashed || p->dotted) p->share = ++r->patterned;
}

/* Whether a shared pen leaves cell (col, row) to the curve already there. */
static int pen_yields(const raster *r, pen *p, long col, long row)
{
    long cell = row * r->cols + col;
    if (cell != p->cell) {
        p->cell = cell;
        p->cells++;
    }
    const overlay *o = &r->ov[cell];
    if (o->kind != OV_DOTS || o->fg == p->color) return 0;
    return (p->cells + p->share - 1) % SHARE_CELLS != 0;
}

static void pen_dot(raster *r, pen *p, long dx, long dy)
{
    long ph = p->phase++;
    if (p->dotted && ph % 4 >= 1) return;
    if (p->dashed && !p->dotted && ph % 7 >= 4) return;
    if (p->share && dx >= p->dx0 && dx <= p->dx1 && dy >= p->dy0 && dy <= p->dy1 &&
        pen_yields(r, p, dx / 2, dy / 4))
        return;
    long o = (p->thick - 1) / 2;
    for (long j = 0; j < p->thick; j++) {
        long y = dy - o + j;
        if (y < p->dy0 || y > p->dy1) continue;
        for (long i = 0; i < p->thick; i++) {
            long x = dx - o + i;
            if (x >= p->dx0 && x <= p->dx1) set_dot(r, x, y, p->color);
        }
    }
}

/* Liang-Barsky: clip the segment to the pen's rectangle; 0 when nothing is left. */
static int clip_segment(const pen *p, double *x0, double *y0, double *x1, double *y1)
{
    double t0 = 0.0, t1 = 1.0, dx = *x1 - *x0, dy = *y1 - *y0;
    const double q[4] = {*x0 - p->cx0, p->cx1 - *x0, *y0 - p->cy0, p->cy1 - *y0};
    const double pp[4] = {-dx, dx, -dy, dy};
    for (int i = 0; i < 4; i++) {
        if (pp[i] == 0.0) {
            if (q[i] < 0) return 0;
            continue;
        }
        double t = q[i] / pp[i];
        if (pp[i] < 0) {
            if (t > t1) return 0;
            if (t > t0) t0 = t;
        } else {
            if (t < t0) return 0;
            if (t < t1) t1 = t;
        }
    }
    double ox = *x0, oy = *y0;
    *x0 = ox + t0 * dx;
    *y0 = oy + t0 * dy;
    *x1 = ox + t1 * dx;
    *y1 = oy + t1 * dy;
    return 1;
}

static void pen_segment(raster *r, pen *p, double x0, double y0, double x1, double y1)
{
    if (!isfinite(x0) || !isfinite(y0) || !isfinite(x1) || !isfinite(y1)) return;
    if (!clip_segment(p, &x0, &y0, &x1, &y1)) return;
    /* In dot coordinates: a dot is half a unit. One step per dot along the longer axis keeps
     * the line 8-connected. */
    double X0 = 2.0 * x0, Y0 = 2.0 * y0, X1 = 2.0 * x1, Y1 = 2.0 * y1;
    double len = fmax(fabs(X1 - X0), fabs(Y1 - Y0));
    long n = (long)ceil(len);
    double sx = n ? (X1 - X0) / (double)n : 0.0, sy = n ? (Y1 - Y0) / (double)n : 0.0;
    long lx = LONG_MIN, ly = LONG_MIN;
    for (long i = 0; i <= n; i++) {
        double X = X0 + sx * (double)i, Y = Y0 + sy * (double)i;
        /* Clipped to the grid, so X, Y >= 0 but for rounding dust: truncation is floor here
         * and much cheaper than calling it. */
        long dx = X > 0 ? (long)X : 0, dy = Y > 0 ? (long)Y : 0;
        if (dx == lx && dy == ly) continue;
        pen_dot(r, p, dx, dy);
        lx = dx;
        ly = dy;
    }
}

static void draw_circle(raster *r, const scene_item *it)
{
    double cx = it->u.circle.cx, cy = it->u.circle.cy, rad = it->u.circle.r;
    if (!isfinite(cx) || !isfinite(cy) || !(rad > 0) || !isfinite(rad)) return;
    if (it->flags & SCENE_FILL) {
        fill_disc(r, cx, cy, rad, it->color);
        return;
    }
    pen p;
    pen_init(&p, r, it);
    p.dashed = 0;
    p.dotted = 0;
    /* Enough angular steps for neighbouring samples to be at most a dot apart; a circle far
     * larger than the grid is mostly off it, so the count is capped. */
    double steps = ceil(2.0 * pi * rad * 2.0 * 1.5);
    if (steps < 8) steps = 8;
    if (steps > 200000) steps = 200000;
    long n = (long)steps;
    for (long k = 0; k < n; k++) {
        double a = 2.0 * pi * (double)k / (double)n;
        double X = 2.0 * (cx + rad * cos(a)), Y = 2.0 * (cy + rad * sin(a));
        if (X < -1 || Y < -1 || X > 2.0 * r->cols + 1 || Y > 4.0 * r->rows + 1) continue;
        pen_dot(r, &p, (long)floor(X), (long)floor(Y));
    }
}

/* ---- text and glyphs ------------------------------------------------------------------- */

static void put_glyph(raster *r, long col, long row, uint32_t ch, uint32_t fg, uint8_t attr)
{
    if (col < 0 || row < 0 || col >= r->cols || row >= r->rows) return;
    overlay *o = &r->ov[(size_t)row * (size_t)r->cols + (size_t)col];
    o->kind = OV_TEXT;
    o->ch = ch;
    o->fg = fg;
    o->attr = attr;
}

/* Decode one UTF-8 code point from *p (advancing it); U+FFFD for malformed input. */
static uint32_t utf8_next(const unsigned char **p)
{
    const unsigned char *s = *p;
    uint32_t c = s[0];
    int n = c < 0x80             ? 0
            : (c & 0xe0) == 0xc0 ? 1
            : (c & 0xf0) == 0xe0 ? 2
            : (c & 0xf8) == 0xf0 ? 3
                                 : -1;
    if (n < 0) {
        *p = s + 1;
        return 0xfffd;
    }
    if (n == 0) {
        *p = s + 1;
        return c;
    }
    c &= 0x3fu >> n;
    for (int i = 1; i <= n; i++) {
        if ((s[i] & 0xc0) != 0x80) {
            *p = s + i;
            return 0xfffd;
        }
        c = (c << 6) | (s[i] & 0x3f);
    }
    *p = s + n + 1;
    static const uint32_t min[4] = {0, 0x80, 0x800, 0x10000};
    if (c < min[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0xfffd;
    return c;
}

static void draw_text(raster *r, const scene_item *it, int ascii)
{
    const char *str = it->u.text.str;
    if (!str || !isfinite(it->u.text.x) || !isfinite(it->u.text.y)) return;
    char spelt[1024];
    if (ascii) str = scene_ascii(str, spelt, sizeof spelt); /* as the layout measured it */
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)str; *p;) {
        utf8_next(&p);
        n++;
    }
    unsigned a = it->u.text.anchor;
    unsigned ha = a & 3, va = (a >> 2) & 3;
    if (a & SCENE_VERTICAL) {
        /* Rotated text is written horizontally: its across-the-line anchor (top of the glyphs
         * faces left once rotated) becomes the horizontal one, its along-the-line anchor (the
         * start is at the bottom) the vertical one. So the label stays on the side of the point
         * it was meant for. */
        unsigned nh = va == 0 ? SCENE_LEFT : va == 1 ? SCENE_CENTER : SCENE_RIGHT;
        unsigned nv = ha == 0 ? 2 : ha == 1 ? 1 : 0;
        ha = nh;
        va = nv;
    }
    /* One row of text is 2 units high and 1 unit per code point whatever the size. */
    double left = it->u.text.x - (ha == SCENE_CENTER  ? (double)n / 2.0
                                  : ha == SCENE_RIGHT ? (double)n
                                                      : 0.0);
    double top = it->u.text.y - (va == 1 ? 1.0 : va == 2 ? 2.0 : 0.0);
    if (fabs(left) > 1e9 || fabs(top) > 1e9) return;
    long col = (long)floor(left + 0.5), row = (long)floor(top / 2.0 + 0.5);
    uint8_t attr = (it->flags & SCENE_BOLD) ? CELL_BOLD : 0;
    for (const unsigned char *p = (const unsigned char *)str; *p; col++) {
        uint32_t c = utf8_next(&p);
        if (c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0)) c = '?';
        put_glyph(r, col, row, c, it->color, attr);
    }
}

static void draw_arrow_head(raster *r, const scene_item *it)
{
    double dx = it->u.line.x1 - it->u.line.x0, dy = it->u.line.y1 - it->u.line.y0;
    if (!(dx * dx + dy * dy > 0) || !isfinite(it->u.line.x1) || !isfinite(it->u.line.y1)) return;
    /* y grows down: octant 0 is right, 2 down, 4 left, 6 up. */
    static const uint32_t glyph[8] = {0x2192, 0x2198, 0x2193, 0x2199,
                                      0x2190, 0x2196, 0x2191, 0x2197};
    int oct = (int)lround(atan2(dy, dx) / (pi / 4.0));
    oct = ((oct % 8) + 8) % 8;
    double x = it->u.line.x1, y = it->u.line.y1;
    if (x < 0 || y < 0 || x > r->cols || y > 2.0 * r->rows) return;
    long col = (long)floor(x), row = (long)floor(y / 2.0);
    if (col == r->cols) col--;
    if (row == r->rows) row--;
    put_glyph(r, col, row, glyph[oct], it->color, 0);
}

/* ---- rules ----------------------------------------------------------------------------- */

static void set_arms(raster *r, long col, long row, uint8_t arms, uint32_t color)
{
    if (col < 0 || row < 0 || col >= r->cols || row >= r->rows || !arms) return;
    overlay *o = &r->ov[(size_t)row * (size_t)r->cols + (size_t)col];
    if (o->kind != OV_BOX) {
        o->kind = OV_BOX;
        o->bits = 0;
        o->attr = 0;
    }
    o->bits |= arms;
    o->fg = color;
}

/* Cell index of coordinate v on an axis of n cells of `unit` units each; the far edge belongs
 * to the last cell so a frame drawn on the canvas border stays visible. */
static long snap(double v, double unit, int n)
{
    double c = floor(v / unit);
    if (c == n && v <= n * unit) c = n - 1;
    if (c < -1) c = -1;
    if (c > n) c = n;
    return (long)c;
}

/* An axis-aligned rule in box drawing. Both ends snap to the cell containing them; the rule
 * joins the cells between its ends, so rules that end in a common cell meet there (a frame gets
 * corners, a tick on an axis a tee). A rule inside one cell is a stub toward its end point. */
static int draw_rule(raster *r, const scene_item *it)
{
    double x0 = it->u.line.x0, y0 = it->u.line.y0, x1 = it->u.line.x1, y1 = it->u.line.y1;
    if (!isfinite(x0) || !isfinite(y0) || !isfinite(x1) || !isfinite(y1)) return 1;
    int horiz = fabs(y1 - y0) < 1e-9, vert = fabs(x1 - x0) < 1e-9;
    if (horiz == vert) return horiz; /* a point draws nothing; a slanted rule goes to braille */
    int dashed = (it->flags & (SCENE_DASHED | SCENE_DOTTED)) != 0;
    if (horiz) {
        long row = snap(y0, 2.0, r->rows);
        long a = snap(fmin(x0, x1), 1.0, r->cols), b = snap(fmax(x0, x1), 1.0, r->cols);
        if (a == b) {
            set_arms(r, a, row, x1 > x0 ? ARM_RIGHT : ARM_LEFT, it->color);
            return 1;
        }
        for (long c = a < 0 ? 0 : a; c <= b && c < r->cols; c++) {
            if (dashed && (c - a) % 2) continue;
            uint8_t arms = (uint8_t)((c > a ? ARM_LEFT : 0) | (c < b ? ARM_RIGHT : 0));
            set_arms(r, c, row, arms, it->color);
        }
    } else {
        long col = snap(x0, 1.0, r->cols);
        long a = snap(fmin(y0, y1), 2.0, r->rows), b = snap(fmax(y0, y1), 2.0, r->rows);
        if (a == b) {
            set_arms(r, col, a, y1 > y0 ? ARM_DOWN : ARM_UP, it->color);
            return 1;
        }
        for (long w = a < 0 ? 0 : a; w <= b && w < r->rows; w++) {
            if (dashed && (w - a) % 2) continue;
            uint8_t arms = (uint8_t)((w > a ? ARM_UP : 0) | (w < b ? ARM_DOWN : 0));
            set_arms(r, col, w, arms, it->color);
        }
    }
    return 1;
}

static uint32_t box_char(uint8_t arms, int ascii)
{
    int v = arms & (ARM_UP | ARM_DOWN), h = arms & (ARM_LEFT | ARM_RIGHT);
    if (ascii) return !h ? '|' : !v ? '-' : '+';
    if (!h) return 0x2502; /* │ (a lone arm is drawn as a whole line) */
    if (!v) return 0x2500; /* ─ */
    switch (arms) {
    case ARM_UP | ARM_RIGHT:
        return 0x2514; /* └ */
    case ARM_UP | ARM_LEFT:
        return 0x2518; /* ┘ */
    case ARM_DOWN | ARM_RIGHT:
        return 0x250c; /* ┌ */
    case ARM_DOWN | ARM_LEFT:
        return 0x2510; /* ┐ */
    case ARM_UP | ARM_DOWN | ARM_RIGHT:
        return 0x251c; /* ├ */
    case ARM_UP | ARM_DOWN | ARM_LEFT:
        return 0x2524; /* ┤ */
    case ARM_LEFT | ARM_RIGHT | ARM_DOWN:
        return 0x252c; /* ┬ */
    case ARM_LEFT | ARM_RIGHT | ARM_UP:
        return 0x2534; /* ┴ */
    default:
        return 0x253c; /* ┼ */
    }
}

static uint32_t arrow_ascii(uint32_t ch)
{
    switch (ch) {
    case 0x2192:
        return '>';
    case 0x2190:
        return '<';
    case 0x2191:
        return '^';
    case 0x2193:
        return 'v';
    case 0x2197:
    case 0x2199:
        return '/';
    case 0x2196:
    case 0x2198:
        return '\\';
    default:
        return '?';
    }
}

/* ---- the pass -------------------------------------------------------------------------- */

static void draw_item(cellgrid *g, raster *r, const scene_item *it)
{
    switch (it->kind) {
    case SCENE_RECT: {
        double x = it->u.rect.x, y = it->u.rect.y, w = it->u.rect.w, h = it->u.rect.h;
        if (!isfinite(x) || !isfinite(y) || !isfinite(w) || !isfinite(h)) return;
        if (w < 0) x += w, w = -w;
        if (h < 0) y += h, h = -h;
        if (it->flags & SCENE_FILL) {
            fill_rect(r, x, y, w, h, it->color);
            return;
        }
        pen p;
        pen_init(&p, r, it);
        /* The far edges move in by a hair so a box around cells stays inside them. */
        double xr = x + w - 1e-6, yb = y + h - 1e-6;
        pen_segment(r, &p, x, y, xr, y);
        pen_segment(r, &p, xr, y, xr, yb);
        pen_segment(r, &p, xr, yb, x, yb);
        pen_segment(r, &p, x, yb, x, y);
        return;
    }
    case SCENE_LINE:
    case SCENE_ARROW: {
        if (it->kind == SCENE_LINE && (it->flags & SCENE_RULE) && draw_rule(r, it)) return;
        pen p;
        pen_init(&p, r, it);
        pen_segment(r, &p, it->u.line.x0, it->u.line.y0, it->u.line.x1, it->u.line.y1);
        if (it->kind == SCENE_ARROW) draw_arrow_head(r, it);
        return;
    }
    case SCENE_POLYLINE: {
        pen p;
        pen_init(&p, r, it);
        pen_share(r, &p);
        pen_clip(&p, it->u.poly.cx, it->u.poly.cy, it->u.poly.cw, it->u.poly.ch);
        const double *xy = it->u.poly.xy;
        size_t n = xy ? it->u.poly.n : 0;
        for (size_t i = 0; i < n; i++) {
            if (!isfinite(xy[2 * i]) || !isfinite(xy[2 * i + 1])) continue;
            int next = i + 1 < n && isfinite(xy[2 * i + 2]) && isfinite(xy[2 * i + 3]);
            int prev = i > 0 && isfinite(xy[2 * i - 2]) && isfinite(xy[2 * i - 1]);
            if (next)
                pen_segment(r, &p, xy[2 * i], xy[2 * i + 1], xy[2 * i + 2], xy[2 * i + 3]);
            else if (!prev) /* a lone point between two breaks still shows as a dot */
                pen_segment(r, &p, xy[2 * i], xy[2 * i + 1], xy[2 * i], xy[2 * i + 1]);
        }
        return;
    }
    case SCENE_TEXT:
        draw_text(r, it, g->ascii);
        return;
    case SCENE_HEATMAP:
        draw_heatmap(g, r, it);
        return;
    case SCENE_CIRCLE:
        draw_circle(r, it);
        return;
    }
}

void cellgrid_render(cellgrid *g, const scene *s)
{
    if (!g->cells || g->cols <= 0 || g->rows <= 0) return;
    raster r;
    raster_bind(&r, g);
    size_t n = (size_t)g->cols * (size_t)g->rows;
    uint32_t bgc = s->background & 0xffffff;
    g->background = bgc;
    for (size_t i = 0; i < 2 * n; i++) r.pix[i] = bgc;
    memset(r.ov, 0, n * sizeof(overlay));
    r.patterned = 0;
    for (size_t i = 0; i < s->n; i++) {
        draw_item(g, &r, &s->items[i]);
        raster_bind(&r, g); /* a heatmap may have grown (moved) the scratch */
    }

    int ascii = g->ascii;
    for (int row = 0; row < g->rows; row++) {
        const uint32_t *top = r.pix + (size_t)(2 * row) * (size_t)g->cols;
        const uint32_t *bot = top + g->cols;
        const overlay *ov = r.ov + (size_t)row * (size_t)g->cols;
        cellgrid_cell *out = g->cells + (size_t)row * (size_t)g->cols;
        for (int c = 0; c < g->cols; c++) {
            uint8_t image = (uint8_t)(((top[c] & PIX_IMAGE) ? CELL_IMAGE_TOP : 0) |
                                      ((bot[c] & PIX_IMAGE) ? CELL_IMAGE_BOTTOM : 0));
            uint32_t t = top[c] & 0xffffff, b = bot[c] & 0xffffff, avg = mix(t, b);
            cellgrid_cell cell = {.ch = ' ', .fg = t, .bg = ascii ? bgc : avg, .attr = 0};
            switch (ov[c].kind) {
            case OV_NONE:
                if (ascii) {
                    if (t != bgc || b != bgc) {
                        cell.ch = cellgrid_shade(avg, bgc);
                        cell.fg = avg;
                    } else {
                        cell.fg = bgc;
                    }
                } else if (t != b) {
                    cell.ch = 0x2580; /* ▀ */
                    cell.bg = b;
                    cell.attr = image;
                } else {
                    cell.bg = t;
                    cell.attr = image;
                }
                break;
            case OV_DOTS:
                cell.fg = ov[c].fg;
                if (ascii)
                    cell.ch = (ov[c].bits & DOTS_TOP) ? '*' : '.';
                else
                    cell.ch = 0x2800u + ov[c].bits;
                break;
            case OV_BOX:
                cell.fg = ov[c].fg;
                cell.ch = box_char(ov[c].bits, ascii);
                break;
            case OV_TEXT:
                cell.fg = ov[c].fg;
                cell.attr = ov[c].attr;
                cell.ch = ov[c].ch;
                if (ascii && cell.ch >= 0x80)
                    cell.ch = (cell.ch >= 0x2190 && cell.ch <= 0x2199) ? arrow_ascii(cell.ch) : '?';
                break;
            }
            out[c] = cell;
        }
    }
}

/* ---- dump ------------------------------------------------------------------------------ */

typedef struct sbuf {
    char *p;
    size_t n, cap;
    int failed;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->failed) return;
    if (n > SIZE_MAX - b->n - 1) {
        b->failed = 1;
        return;
    }
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n + 1) {
            if (cap > SIZE_MAX / 2) {
                b->failed = 1;
                return;
            }
            cap *= 2;
        }
        char *q = realloc(b->p, cap);
        if (!q) {
            b->failed = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void sb_utf8(sbuf *b, uint32_t c)
{
    char u[4];
    size_t n;
    if (c < 0x80) {
        u[0] = (char)c;
        n = 1;
    } else if (c < 0x800) {
        u[0] = (char)(0xc0 | (c >> 6));
        u[1] = (char)(0x80 | (c & 0x3f));
        n = 2;
    } else if (c < 0x10000) {
        u[0] = (char)(0xe0 | (c >> 12));
        u[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        u[2] = (char)(0x80 | (c & 0x3f));
        n = 3;
    } else {
        u[0] = (char)(0xf0 | (c >> 18));
        u[1] = (char)(0x80 | ((c >> 12) & 0x3f));
        u[2] = (char)(0x80 | ((c >> 6) & 0x3f));
        u[3] = (char)(0x80 | (c & 0x3f));
        n = 4;
    }
    sb_put(b, u, n);
}

/* Palette index of colour c, appending it when new (linear: goldens are small). */
static size_t palette_index(uint32_t **pal, size_t *n, size_t *cap, uint32_t c, int *failed)
{
    for (size_t i = 0; i < *n; i++)
        if ((*pal)[i] == c) return i;
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        uint32_t *q = realloc(*pal, nc * sizeof(uint32_t));
        if (!q) {
            *failed = 1;
            return 0;
        }
        *pal = q;
        *cap = nc;
    }
    (*pal)[*n] = c;
    return (*n)++;
}

char *cellgrid_dump(const cellgrid *g, int colors)
{
    sbuf b = {0};
    uint32_t *pal = NULL;
    size_t npal = 0, cap = 0;
    static const char hex[] = "0123456789abcdef";
    sb_put(&b, "", 0);
    /* The palette in order of first appearance (row by row, fg line then bg line), so the
     * indices are stable for goldens; two digits while it fits, which small goldens do. */
    int digits = 2;
    if (colors) {
        for (int row = 0; row < g->rows; row++)
            for (int pass = 0; pass < 2; pass++)
                for (int c = 0; c < g->cols; c++) {
                    const cellgrid_cell *cell =
                        &g->cells[(size_t)row * (size_t)g->cols + (size_t)c];
                    palette_index(&pal, &npal, &cap, pass ? cell->bg : cell->fg, &b.failed);
                }
        if (npal > 256) digits = 4;
    }
    for (int row = 0; row < g->rows; row++) {
        const cellgrid_cell *cells = g->cells + (size_t)row * (size_t)g->cols;
        for (int c = 0; c < g->cols; c++) sb_utf8(&b, cells[c].ch);
        sb_put(&b, "\n", 1);
        if (!colors) continue;
        for (int pass = 0; pass < 2; pass++) {
            for (int c = 0; c < g->cols; c++) {
                size_t i =
                    palette_index(&pal, &npal, &cap, pass ? cells[c].bg : cells[c].fg, &b.failed);
                char d[4];
                for (int k = 0; k < digits; k++) d[k] = hex[(i >> (4 * (digits - 1 - k))) & 15];
                sb_put(&b, d, (size_t)digits);
            }
            sb_put(&b, "\n", 1);
        }
    }
    if (colors) {
        sb_put(&b, "legend:\n", 8);
        for (size_t i = 0; i < npal; i++) {
            char line[16];
            int k = 0;
            for (int d = 0; d < digits; d++) line[k++] = hex[(i >> (4 * (digits - 1 - d))) & 15];
            line[k++] = ' ';
            line[k++] = '#';
            for (int d = 0; d < 6; d++) line[k++] = hex[(pal[i] >> (20 - 4 * d)) & 15];
            line[k++] = '\n';
            sb_put(&b, line, (size_t)k);
        }
    }
    free(pal);
    if (b.failed) {
        free(b.p);
        return NULL;
    }
    return b.p;
}
