/* raster.h: drawing a scene with cairo, and writing it out. Only render/backend_cairo.c and
 * render/png_write.c include <cairo.h> and <png.h>; this header includes neither.
 *
 * The same function draws the SDL window, the PNG, the SVG and the PDF, so they agree. */
#ifndef PELAB_RASTER_H
#define PELAB_RASTER_H

#include <stddef.h>
#include <stdint.h>

#include "scene.h"

/* A target of w x h device pixels with text at font_px pixels (a normal line is 1.3 font_px).
 * Text widths are measured with cairo's toy font "DejaVu Sans" (sans-serif fallback). */
scene_target raster_target(double w, double h, double font_px);
/* Text of target t in family: a fontconfig family name, or NULL / "" for DejaVu Sans (the
 * default). The target measures in it and t->font names it; a scene built for t carries it
 * (scene.font) and is drawn in it. Not a cairo target: nothing changes. */
void raster_target_font(scene_target *t, const char *family);
/* family as a name that lives as long as the process (NULL / "": the default's), for
 * scene_target.font and scene.font; safe on any thread. */
const char *raster_font_name(const char *family);
/* Whether fontconfig knows family: 0, or -1 with "--font 'NAME': ..." naming the family it would
 * fall back to. */
int raster_font_check(const char *family, char *err, size_t errlen);
/* The font size for a w x h figure: readable at any size (about h/40, at least 11 px) times
 * scale (the window's +/- zoom, the dpi/96 of an export). */
double raster_font_px(double w, double h, double scale);

/* Draw s into a premultiplied ARGB32 buffer (cairo's native layout, stride in bytes). antialias
 * 0 turns antialiasing off (golden tests). Text is sized from s->text_h (scene.h; the default
 * font of the canvas when 0). Returns 0, or -1 when cairo fails. */
int raster_draw_argb(const scene *s, uint32_t *pixels, int w, int h, int stride, int antialias);
/* The same at scale device pixels per figure unit (> 0): a figure laid out at its physical size
 * (96 units per inch) drawn at any dpi (scale = dpi / 96) is the PDF of that size rasterised,
 * text in the same points, lines as thick. scale 1 is raster_draw_argb. */
int raster_draw_argb_scaled(const scene *s, uint32_t *pixels, int w, int h, int stride,
                            int antialias, double scale);

/* What raster_draw_argb(s, ., w, h, ., antialias) depends on: scene_hash(s), the size, the
 * antialiasing and the font family (scene.font). Equal keys draw equal pixels, so a
 * window keeps its frame while the key stays the same. */
uint64_t raster_scene_key(const scene *s, int w, int h, int antialias);

/* Key/value text chunks a written file carries (PNG tEXt, SVG/PDF metadata). */
typedef struct raster_meta {
    const char *key, *value;
} raster_meta;

typedef struct raster_export_opts {
    double dpi;              /* PNG pHYs; 96 if <= 0 */
    const raster_meta *meta; /* n_meta entries, e.g. {"Software","pelab 0.1"},{"Command",...} */
    size_t n_meta;
    int antialias; /* 1 normally */
    /* PNG pixels per figure unit (0 = 1): a scene laid out at 96 units per inch is written at
     * dpi with scale dpi / 96, so its PNG is its PDF rasterised. SVG and PDF keep their physical
     * size: units * scale are pixels at dpi. */
    double scale;
    /* SVG: 0 writes text as <text> elements in the font family and size (pelab's own writer,
     * svg_write.c: editable and searchable), 1 as cairo's glyph outlines (exact glyphs in any
     * viewer, whatever fonts it has) */
    int svg_paths;
} raster_export_opts;

/* Write s to path; the format follows the extension: .png (cairo image, written with libpng
 * with tEXt and pHYs), .svg, .pdf (reproducible: no dates, fixed ids). Written to a temporary
 * name in the same directory and renamed, so an existing file is never left half-written and a
 * failure leaves nothing behind. Returns 0, 1 when the extension is not one of these (no file
 * touched), -1 on a write error (message in err).
 * Figure units times o->scale are pixels at o->dpi, so SVG and PDF get the PNG's physical size.
 * Metadata: PNG tEXt per key (iTXt for UTF-8 values); PDF Title, Creator (key "Software"), Author,
 * Subject (key "Command") and the other keys in Keywords; SVG a <title> (key "Title") and a
 * <metadata> block of "key: value" lines. PDF text is text (embedded font subset); SVG text is
 * <text> (o->svg_paths: cairo's glyph outlines). Heatmaps are embedded images shown without
 * smoothing. */
int raster_export(const scene *s, const char *path, const raster_export_opts *o, char *err,
                  size_t errlen);
/* The same in a named format ("png", "svg", "pdf"; NULL: the extension), for "-" (standard
 * output) and devices, whose names say nothing. */
int raster_export_as(const scene *s, const char *path, const char *format,
                     const raster_export_opts *o, char *err, size_t errlen);

/* The memory raster_export_as(s, path, format, ...) takes for the output itself, in bytes, so
 * the caller can reserve it against pelab's budget first: the canvas a PNG of w x h device
 * pixels is drawn into (0 for SVG and PDF, which have none), known before the scene is built;
 * and the largest image one of the scene's heatmaps is drawn through, held on top of that, at
 * scale PNG pixels per figure unit (raster_export_opts.scale). */
size_t raster_export_canvas_bytes(double w, double h, const char *path, const char *format);
size_t raster_export_image_bytes(const scene *s, const char *path, const char *format,
                                 double scale);

/* A scene drawn on a page at (x, y), scaled (its own width x height, clipped to it). */
typedef struct raster_place {
    const scene *s;
    double x, y, scale;
} raster_place;
#define RASTER_MAX_PLACES 8
/* Fills places (at most RASTER_MAX_PLACES, count in *n) for page i; the scenes must stay valid
 * until the next call. 0, or -1 with a message in err. */
typedef int (*raster_page_fn)(void *ctx, size_t i, raster_place *places, size_t *n, char *err,
                              size_t errlen);
/* A PDF of n_pages pages of page_w x page_h (pixels at 96 per inch), each drawn from the scenes
 * page() places on it: text stays text (embedded font subsets), no dates, so the same pages give
 * the same bytes. Temporary file + rename. 0, 1 when path is not .pdf, -1 on failure. */
int raster_export_pdf_pages(const char *path, double page_w, double page_h, size_t n_pages,
                            raster_page_fn page, void *ctx, const raster_export_opts *o, char *err,
                            size_t errlen);

/* Write an ARGB32 buffer as PNG with libpng (used by raster_export and the window's save). */
int png_write_argb(const char *path, const uint32_t *pixels, int w, int h, int stride, double dpi,
                   const raster_meta *meta, size_t n_meta, char *err, size_t errlen);

#endif
