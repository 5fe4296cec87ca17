/* cellgrid.h: a scene rasterised into terminal cells, before any terminal is involved.
 *
 * Half blocks give two square "pixels" per cell for heatmaps and fills, braille gives 2 x 4 dots
 * per cell for curves, arrows and circles, box drawing for rules, and text is written as is.
 * Tests read cells back from here instead of parsing escape codes (chafa's habit). With ascii = 1
 * only 7-bit characters are used (a non-UTF-8 locale): shaded characters for heatmaps, '*' and
 * '.' for curves, '-' '|' '+' for rules. */
#ifndef PELAB_CELLGRID_H
#define PELAB_CELLGRID_H

#include <stddef.h>
#include <stdint.h>

#include "scene.h"

/* CELL_IMAGE_TOP/BOTTOM: the cell's upper/lower half-block pixel belongs to a continuous image
 * (a heatmap), which a palette terminal dithers; every other pixel (fills, bars, shading) takes
 * one nearest colour, so a flat colour stays flat cell to cell. */
enum { CELL_BOLD = 1u << 0, CELL_IMAGE_TOP = 1u << 1, CELL_IMAGE_BOTTOM = 1u << 2 };

typedef struct cellgrid_cell {
    uint32_t ch;     /* Unicode code point; ' ' when empty */
    uint32_t fg, bg; /* 0xRRGGBB */
    uint8_t attr;    /* CELL_BOLD, CELL_IMAGE_* */
} cellgrid_cell;

typedef struct cellgrid {
    int cols, rows;
    cellgrid_cell *cells; /* (rows, cols) */
    int ascii;            /* only 7-bit characters */
    /* scratch for the rasteriser (dot masks), owned */
    void *scratch;
    size_t scratch_size;
    uint32_t background; /* the last rendered scene's background (the mono backend shades
                            against it) */
} cellgrid;

/* init/free; free accepts a zeroed struct. resize keeps nothing. Return 0 or -1 (no memory). */
int cellgrid_init(cellgrid *g, int cols, int rows, int ascii);
void cellgrid_free(cellgrid *g);
int cellgrid_resize(cellgrid *g, int cols, int rows);

/* The scene_target of a cols x rows terminal: width cols, height 2*rows units, text_h 2,
 * char_w 1, cells 1. */
scene_target cellgrid_target(int cols, int rows);

/* Rasterise s (built for cellgrid_target(g->cols, g->rows)) into g, items in order, later over
 * earlier, everything clipped to the grid. Conventions:
 *   fills and heatmaps cover the pixels whose centres they contain; a heatmap larger than its
 *   pixels is box-averaged (source rows/cols [floor(p * n / len), floor((p + 1) * n / len)) of
 *   pixel p), smaller is sampled nearest; non-finite values are masked, and a pixel whose box
 *   is mostly masked takes mask_color;
 *   lines, curves, circles and stroked rects set the braille dots they pass (a dot is
 *   0.5 x 0.5 units; width in units, at least one dot); an arrow ends in an arrow glyph;
 *   SCENE_RULE lines that are axis-aligned become box drawing: each end snaps to the cell
 *   containing it (col floor(x), row floor(y / 2), the far canvas edge to the last cell) and
 *   rules meeting in a cell join (corners, tees, crosses); a rule within one cell is a stub
 *   toward its end point (a tick);
 *   text takes one cell per code point, one row whatever its size: the box's top-left is the
 *   anchor moved by the text's width (1 unit per code point) and height (2 units), rounded to
 *   the nearest cell; SCENE_VERTICAL text is written horizontally, its across-the-line anchor
 *   (top/middle/bottom) becoming the horizontal one and its along-the-line anchor the
 *   vertical one, so it stays on the same side of its point. */
void cellgrid_render(cellgrid *g, const scene *s);

static inline cellgrid_cell *cellgrid_at(cellgrid *g, int col, int row)
{
    return &g->cells[(size_t)row * (size_t)g->cols + (size_t)col];
}

/* The ASCII shade character (" .:-=+*#%@") for a colour drawn on background: its luminance
 * contrast to the background in ten steps, ' ' for under a tenth (a panel a shade off the page
 * stays blank), '@' for the most. Used for ASCII heatmaps and by the monochrome terminal. */
uint32_t cellgrid_shade(uint32_t rgb, uint32_t background);

/* The grid's characters as UTF-8, one line per row, trailing spaces kept (malloc'd). With
 * colors = 1 each row is followed by two lines of fg/bg as 2-hex-digit palette indices into a
 * legend printed at the end (stable for goldens). NULL on failure. */
char *cellgrid_dump(const cellgrid *g, int colors);

#endif
