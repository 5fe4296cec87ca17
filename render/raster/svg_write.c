/* svg_write.c: a scene as SVG with its text as text.
 *
 * cairo's SVG surface writes every glyph as an outline: the figure cannot be edited in Inkscape
 * or Illustrator, searched, or restyled. This writer walks the same display list the cairo
 * backend draws and writes each item as the SVG element that draws it the same way: text as
 * <text> in the figure's font family and size (placed on the baseline cairo would use, measured
 * from the same font's metrics), curves as paths clipped to their plot, heatmaps as embedded PNG
 * images at the resolution they are drawn at (as the cairo vector path does). Stroke widths, dash
 * patterns, caps and joins are cairo's. Coordinates are figure units (the viewBox), written with
 * two decimals: a hundredth of a unit is below any screen's or printer's resolution at 96 units
 * per inch, and keeps a curve of a thousand points near 14 KB.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "textclean.h"
#include "raster_svg.h"

/* v with at most two decimals and no trailing zeros ("12.5", "3", "-0.25") */
static void num(FILE *fp, double v)
{
    if (!isfinite(v)) v = 0;
    char b[48];
    snprintf(b, sizeof b, "%.2f", v);
    char *dot = strchr(b, '.');
    if (dot) {
        char *e = b + strlen(b) - 1;
        while (e > dot && *e == '0') *e-- = '\0';
        if (e == dot) *e = '\0';
    }
    if (strcmp(b, "-0") == 0) snprintf(b, sizeof b, "0");
    fputs(b, fp);
}

static void color(FILE *fp, uint32_t c)
{
    fprintf(fp, "#%06x", (unsigned)(c & 0xffffffu));
}

/* text content or an attribute value, cleaned (invalid UTF-8 and noncharacters as U+FFFD,
 * controls written out: textclean.h, the rule every other output follows) and escaped */
static void escaped(FILE *fp, const char *raw)
{
    size_t n = strlen(raw), need = text_clean(NULL, 0, raw, n, TEXT_KEEP_LINES);
    char *clean = malloc(need + 1);
    if (!clean) return;
    text_clean(clean, need + 1, raw, n, TEXT_KEEP_LINES);
    for (const char *s = clean; *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", fp);
            break;
        case '<':
            fputs("&lt;", fp);
            break;
        case '>':
            fputs("&gt;", fp);
            break;
        case '"':
            fputs("&quot;", fp);
            break;
        default:
            /* XML 1.0 allows no control characters but tab and newlines */
            if ((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n' && *s != '\r')
                fputc(' ', fp);
            else
                fputc(*s, fp);
        }
    }
    free(clean);
}

static double stroke_width(const scene_item *it)
{
    return it->width > 0 ? it->width : 1.0;
}

/* stroke, stroke-width and the dash pattern of an item */
static void stroke_attrs(FILE *fp, const scene_item *it)
{
    double lw = stroke_width(it), d[2];
    fputs(" stroke=\"", fp);
    color(fp, it->color);
    fputc('"', fp);
    if (lw != 1.0) {
        fputs(" stroke-width=\"", fp);
        num(fp, lw);
        fputc('"', fp);
    }
    if (raster_dash(it->flags, lw, d) == 2) {
        fputs(" stroke-dasharray=\"", fp);
        num(fp, d[0]);
        fputc(',', fp);
        num(fp, d[1]);
        fputc('"', fp);
    }
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void base64(FILE *fp, const unsigned char *p, size_t n)
{
    char out[4];
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        if (i + 1 < n) v |= (uint32_t)p[i + 1] << 8;
        if (i + 2 < n) v |= p[i + 2];
        out[0] = b64[(v >> 18) & 63];
        out[1] = b64[(v >> 12) & 63];
        out[2] = i + 1 < n ? b64[(v >> 6) & 63] : '=';
        out[3] = i + 2 < n ? b64[v & 63] : '=';
        fwrite(out, 1, 4, fp);
    }
}

static const char *meta_get(const raster_export_opts *o, const char *key)
{
    for (size_t i = 0; o && i < o->n_meta; i++)
        if (o->meta[i].key && o->meta[i].value && strcasecmp(o->meta[i].key, key) == 0)
            return o->meta[i].value;
    return NULL;
}

/* The clip rectangles of the curves: one <clipPath> per distinct rectangle, defined where it is
 * first used (a figure has a few plots, each with many curves). */
enum { MAX_CLIPS = 64 };
typedef struct clips {
    double r[MAX_CLIPS][4];
    int n;
} clips;

/* the id of clip rectangle (x, y, w, h), defining it first if new; -1 when the table is full
 * (the curve is then clipped by a path of its own) */
static int clip_id(FILE *fp, clips *c, double x, double y, double w, double h)
{
    for (int i = 0; i < c->n; i++)
        if (c->r[i][0] == x && c->r[i][1] == y && c->r[i][2] == w && c->r[i][3] == h) return i + 1;
    if (c->n >= MAX_CLIPS) return -1;
    int id = c->n + 1;
    c->r[c->n][0] = x, c->r[c->n][1] = y, c->r[c->n][2] = w, c->r[c->n][3] = h;
    c->n++;
    fprintf(fp, "<clipPath id=\"c%d\"><rect x=\"", id);
    num(fp, x);
    fputs("\" y=\"", fp);
    num(fp, y);
    fputs("\" width=\"", fp);
    num(fp, w);
    fputs("\" height=\"", fp);
    num(fp, h);
    fputs("\"/></clipPath>\n", fp);
    return id;
}

static void write_polyline(FILE *fp, const scene_item *it, clips *c, int *extra_clip)
{
    size_t n = it->u.poly.n;
    const double *xy = it->u.poly.xy;
    if (n < 2 || !xy) return;
    int id = clip_id(fp, c, it->u.poly.cx, it->u.poly.cy, it->u.poly.cw, it->u.poly.ch);
    if (id < 0) {
        /* past the table: a clip path of its own, numbered after the table's */
        id = MAX_CLIPS + 1 + (*extra_clip)++;
        fprintf(fp, "<clipPath id=\"c%d\"><rect x=\"", id);
        num(fp, it->u.poly.cx);
        fputs("\" y=\"", fp);
        num(fp, it->u.poly.cy);
        fputs("\" width=\"", fp);
        num(fp, it->u.poly.cw);
        fputs("\" height=\"", fp);
        num(fp, it->u.poly.ch);
        fputs("\"/></clipPath>\n", fp);
    }
    fputs("<path fill=\"none\" stroke-linejoin=\"round\" stroke-linecap=\"round\"", fp);
    stroke_attrs(fp, it);
    fprintf(fp, " clip-path=\"url(#c%d)\" d=\"", id);
    int pen = 0;
    for (size_t i = 0; i < n; i++) {
        double x = xy[2 * i], y = xy[2 * i + 1];
        if (!isfinite(x) || !isfinite(y)) {
            pen = 0; /* a break in the curve */
            continue;
        }
        fputc(pen ? 'L' : 'M', fp);
        num(fp, x);
        fputc(' ', fp);
        num(fp, y);
        pen = 1;
    }
    fputs("\"/>\n", fp);
}

/* the text's box is one line (text_h * size) high; the anchor places that box and the glyphs
 * are centred in it vertically, as backend_cairo.c's draw_text does */
static void write_text(FILE *fp, const scene_item *it, double text_h, const double asc[2],
                       const double desc[2])
{
    const char *str = it->u.text.str;
    if (!str || !*str) return;
    int bold = (it->flags & SCENE_BOLD) != 0;
    double size = it->u.text.size > 0 ? it->u.text.size : 1.0;
    double box_h = text_h * size;
    double px = box_h / raster_line_per_px();
    unsigned an = it->u.text.anchor;
    unsigned ha = an & 3, va = (an >> 2) & 3;
    double top = va == 1 ? -0.5 * box_h : va == 2 ? -box_h : 0.0;
    double a = asc[bold] * px, d = desc[bold] * px;
    double baseline = top + 0.5 * (box_h - (a + d)) + a;
    fputs("<text", fp);
    if (an & SCENE_VERTICAL) {
        fputs(" transform=\"translate(", fp);
        num(fp, it->u.text.x);
        fputc(' ', fp);
        num(fp, it->u.text.y);
        fputs(") rotate(-90)\" x=\"0\" y=\"", fp);
        num(fp, baseline);
    } else {
        fputs(" x=\"", fp);
        num(fp, it->u.text.x);
        fputs("\" y=\"", fp);
        num(fp, it->u.text.y + baseline);
    }
    fputs("\" font-size=\"", fp);
    num(fp, px);
    fputc('"', fp);
    if (bold) fputs(" font-weight=\"bold\"", fp);
    if (ha == SCENE_CENTER) fputs(" text-anchor=\"middle\"", fp);
    if (ha == SCENE_RIGHT) fputs(" text-anchor=\"end\"", fp);
    if (it->color != 0) {
        fputs(" fill=\"", fp);
        color(fp, it->color);
        fputc('"', fp);
    }
    fputc('>', fp);
    escaped(fp, str);
    fputs("</text>\n", fp);
}

static void write_arrow(FILE *fp, const scene_item *it)
{
    double x0 = it->u.line.x0, y0 = it->u.line.y0, x1 = it->u.line.x1, y1 = it->u.line.y1;
    double lw = stroke_width(it);
    double dx = x1 - x0, dy = y1 - y0, len = hypot(dx, dy);
    if (!(len > 0)) return;
    double ux = dx / len, uy = dy / len;
    double head = fmin(3.0 * lw + 5.0, len), half = 0.45 * head;
    /* the shaft stops inside the head so its butt end does not poke out of the tip */
    double sx = x1 - ux * head * 0.7, sy = y1 - uy * head * 0.7;
    if (len > head) {
        fputs("<path fill=\"none\" stroke=\"", fp);
        color(fp, it->color);
        fputc('"', fp);
        if (lw != 1.0) {
            fputs(" stroke-width=\"", fp);
            num(fp, lw);
            fputc('"', fp);
        }
        fputs(" d=\"M", fp);
        num(fp, x0);
        fputc(' ', fp);
        num(fp, y0);
        fputc('L', fp);
        num(fp, sx);
        fputc(' ', fp);
        num(fp, sy);
        fputs("\"/>\n", fp);
    }
    double bx = x1 - ux * head, by = y1 - uy * head;
    fputs("<path fill=\"", fp);
    color(fp, it->color);
    fputs("\" d=\"M", fp);
    num(fp, x1);
    fputc(' ', fp);
    num(fp, y1);
    fputc('L', fp);
    num(fp, bx - uy * half);
    fputc(' ', fp);
    num(fp, by + ux * half);
    fputc('L', fp);
    num(fp, bx + uy * half);
    fputc(' ', fp);
    num(fp, by - ux * half);
    fputs("Z\"/>\n", fp);
}

/* The image at the resolution it is drawn at (k CSS pixels per unit), on whole pixels as the PNG
 * draws it: each pixel the mean of the cells inside it, or the nearest cell when the data has
 * fewer cells than pixels. So a viewer shows at 100% what the PNG shows, whatever its image
 * filter (rsvg smooths, ignoring image-rendering), and a 4096 x 1024 table drawn 700 pixels wide
 * is a 700-wide image, as matplotlib writes it. */
static int write_heatmap(FILE *fp, const scene_item *it, double k)
{
    size_t rows = it->u.heat.rows, cols = it->u.heat.cols;
    double w = it->u.heat.w, h = it->u.heat.h;
    if (!rows || !cols || !it->u.heat.data || !(w > 0) || !(h > 0)) return 0;
    double px0 = round(it->u.heat.x * k), px1 = round((it->u.heat.x + w) * k);
    double py0 = round(it->u.heat.y * k), py1 = round((it->u.heat.y + h) * k);
    double tw = fmin((double)RASTER_VECTOR_MAX_CELLS, fmax(1.0, px1 - px0));
    double th = fmin((double)RASTER_VECTOR_MAX_CELLS, fmax(1.0, py1 - py0));
    size_t out_c = (size_t)tw, out_r = (size_t)th;
    double x = px0 / k, y = py0 / k;
    w = fmax(1.0, px1 - px0) / k;
    h = fmax(1.0, py1 - py0) / k;
    size_t n = 0;
    unsigned char *png = raster_heat_png(it, out_r, out_c, &n);
    if (!png) return -1;
    fputs("<image x=\"", fp);
    num(fp, x);
    fputs("\" y=\"", fp);
    num(fp, y);
    fputs("\" width=\"", fp);
    num(fp, w);
    fputs("\" height=\"", fp);
    num(fp, h);
    fputs("\" preserveAspectRatio=\"none\" style=\"image-rendering:pixelated\" "
          "image-rendering=\"optimizeSpeed\" xlink:href=\"data:image/png;base64,",
          fp);
    base64(fp, png, n);
    fputs("\"/>\n", fp);
    free(png);
    return 0;
}

static void write_rect(FILE *fp, const scene_item *it)
{
    fputs("<rect x=\"", fp);
    num(fp, it->u.rect.x);
    fputs("\" y=\"", fp);
    num(fp, it->u.rect.y);
    fputs("\" width=\"", fp);
    num(fp, fmax(0, it->u.rect.w));
    fputs("\" height=\"", fp);
    num(fp, fmax(0, it->u.rect.h));
    fputc('"', fp);
    if (it->flags & SCENE_FILL) {
        fputs(" fill=\"", fp);
        color(fp, it->color);
        fputc('"', fp);
    } else {
        fputs(" fill=\"none\"", fp);
        stroke_attrs(fp, it);
    }
    fputs("/>\n", fp);
}

int svg_write_scene(FILE *fp, const scene *s, double w, double h, const raster_export_opts *o)
{
    const char *family = raster_font_family(s);
    double text_h = raster_scene_text_h(s);
    double asc[2], desc[2];
    raster_font_metrics(family, 0, &asc[0], &desc[0]);
    raster_font_metrics(family, 1, &asc[1], &desc[1]);
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<svg xmlns=\"http://www.w3.org/2000/svg\" "
          "xmlns:xlink=\"http://www.w3.org/1999/xlink\" version=\"1.1\" width=\"",
          fp);
    num(fp, w);
    fputs("px\" height=\"", fp);
    num(fp, h);
    fputs("px\" viewBox=\"0 0 ", fp);
    num(fp, s->width);
    fputc(' ', fp);
    num(fp, s->height);
    fputs("\">\n", fp);
    const char *title = meta_get(o, "Title");
    if (title) {
        fputs("<title>", fp);
        escaped(fp, title);
        fputs("</title>\n", fp);
    }
    if (o && o->n_meta) {
        fputs("<metadata>", fp);
        for (size_t i = 0; i < o->n_meta; i++) {
            if (!o->meta[i].key || !o->meta[i].value) continue;
            fputc('\n', fp);
            escaped(fp, o->meta[i].key);
            fputs(": ", fp);
            escaped(fp, o->meta[i].value);
        }
        fputs("\n</metadata>\n", fp);
    }
    /* the font once for every text; a generic family after it for viewers without it */
    fputs("<g font-family=\"", fp);
    escaped(fp, family);
    fputs(", sans-serif\" xml:space=\"preserve\">\n<rect width=\"100%\" height=\"100%\" fill=\"",
          fp);
    color(fp, s->background);
    fputs("\"/>\n", fp);
    double k = s->width > 0 ? w / s->width : 1.0; /* CSS pixels per unit */
    clips c = {.n = 0};
    int extra_clip = 0, rc = 0;
    for (size_t i = 0; i < s->n; i++) {
        const scene_item *it = &s->items[i];
        switch (it->kind) {
        case SCENE_RECT:
            write_rect(fp, it);
            break;
        case SCENE_LINE:
            fputs("<path", fp);
            stroke_attrs(fp, it);
            fputs(" d=\"M", fp);
            num(fp, it->u.line.x0);
            fputc(' ', fp);
            num(fp, it->u.line.y0);
            fputc('L', fp);
            num(fp, it->u.line.x1);
            fputc(' ', fp);
            num(fp, it->u.line.y1);
            fputs("\"/>\n", fp);
            break;
        case SCENE_POLYLINE:
            write_polyline(fp, it, &c, &extra_clip);
            break;
        case SCENE_TEXT:
            write_text(fp, it, text_h, asc, desc);
            break;
        case SCENE_HEATMAP:
            if (write_heatmap(fp, it, k) != 0) rc = -1;
            break;
        case SCENE_ARROW:
            write_arrow(fp, it);
            break;
        case SCENE_CIRCLE:
            fputs("<circle cx=\"", fp);
            num(fp, it->u.circle.cx);
            fputs("\" cy=\"", fp);
            num(fp, it->u.circle.cy);
            fputs("\" r=\"", fp);
            num(fp, fmax(0, it->u.circle.r));
            fputc('"', fp);
            if (it->flags & SCENE_FILL) {
                fputs(" fill=\"", fp);
                color(fp, it->color);
                fputc('"', fp);
            } else {
                fputs(" fill=\"none\"", fp);
                stroke_attrs(fp, it);
            }
            fputs("/>\n", fp);
            break;
        }
    }
    fputs("</g>\n</svg>\n", fp);
    return rc;
}
