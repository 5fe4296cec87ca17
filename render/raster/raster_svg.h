/* raster_svg.h: private to render/raster/. pelab's own SVG writer (svg_write.c), which writes a
 * scene with its text as <text> elements (editable and searchable, as matplotlib's
 * svg.fonttype 'none'), and what it borrows from the cairo backend so it draws what cairo draws:
 * the font, its metrics, the dash patterns and the heatmap images. */
#ifndef PELAB_RASTER_SVG_H
#define PELAB_RASTER_SVG_H

#include <stddef.h>
#include <stdio.h>

#include "raster.h"

/* The family s's text is drawn in (its scene's font, or the default). */
const char *raster_font_family(const scene *s);
/* Ascent and descent of family (NULL: the default) at 1 pixel, regular (bold 0) or bold. */
void raster_font_metrics(const char *family, int bold, double *ascent, double *descent);
/* A normal line of text is this many font sizes high. */
double raster_line_per_px(void);
/* The line height of s's normal text in figure units (s->text_h, or the default's). */
double raster_scene_text_h(const scene *s);
/* The dash pattern cairo strokes an item of these flags and width with: 0 (solid) or 2 entries
 * written to d. */
int raster_dash(unsigned flags, double lw, double d[2]);
/* Heatmap item it as a PNG of out_rows x out_cols pixels (box-averaged or nearest, as drawn):
 * malloc'd bytes, their count in *n; NULL when out of memory. */
unsigned char *raster_heat_png(const scene_item *it, size_t out_rows, size_t out_cols, size_t *n);
/* Vector outputs embed heatmaps at most this many image pixels a side. */
enum { RASTER_VECTOR_MAX_CELLS = 2048 };

/* Write s to fp as SVG 1.1 of w x h CSS pixels (its viewBox is the scene's figure units), with
 * the metadata of o (a <title> and a <metadata> block, as the cairo SVG). Reproducible: ids are
 * numbered in order, nothing depends on the time. 0, or -1 when a heatmap image could not be
 * made (out of memory); write errors show in ferror(fp). */
int svg_write_scene(FILE *fp, const scene *s, double w, double h, const raster_export_opts *o);

#endif
