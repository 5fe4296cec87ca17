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

enum { CELL_BOLD = 1u << 0 };

typedef struct cellgrid_cell {
    uint32_t ch;     /* Unicode code point; ' ' when empty */
    uint32_t fg, bg; /* 0xRRGGBB */
    uint8_t attr;    /* CELL_BOLD */
} cellgrid_cell;

typedef struct cellgrid {
    int cols, rows;
    cellgrid_cell *cells; /* (rows, cols) */
    int ascii;            /* only 7-bit characters */
    /* scratch for the rasteriser (dot masks), owned */
    void *scratch;
    size_t scratch_size;
} cellgrid;

/* init/free; free accepts a zeroed struct. resize keeps nothing. Return 0 or -1 (no memory). */
int cellgrid_init(cellgrid *g, int cols, int rows, int ascii);
void cellgrid_free(cellgrid *g);
int cellgrid_resize(cellgrid *g, int cols, int rows);

/* The scene_target of a cols x rows terminal: width cols, height 2*rows units, text_h 2,
 * char_w 1, cells 1. */
scene_target cellgrid_target(int cols, int rows);

/* Rasterise s (built for cellgrid_target(g->cols, g->rows)) into g. */
void cellgrid_render(cellgrid *g, const scene *s);

static inline cellgrid_cell *cellgrid_at(cellgrid *g, int col, int row)
{
    return &g->cells[(size_t)row * (size_t)g->cols + (size_t)col];
}

/* The grid's characters as UTF-8, one line per row, trailing spaces kept (malloc'd). With
 * colors = 1 each row is followed by two lines of fg/bg as 2-hex-digit palette indices into a
 * legend printed at the end (stable for goldens). NULL on failure. */
char *cellgrid_dump(const cellgrid *g, int colors);

#endif
