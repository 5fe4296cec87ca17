/* colormap.h: 256-entry colour tables. Data lives in render/colormap_data.c, generated from
 * the published tables (see assets/colormaps/README.md). */
#ifndef PELAB_COLORMAP_H
#define PELAB_COLORMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct cmap {
    const char *name;        /* "viridis" */
    const char *description; /* one line */
    int diverging;           /* 1 = meant for signed data centred on 0 */
    int cyclic;              /* 1 = for angles (twilight) */
    const uint8_t (*rgb)[3]; /* 256 entries, 0 = low end */
} cmap;

size_t cmap_count(void);
const cmap *cmap_at(size_t i);
/* Exact (case-insensitive) name; NULL when none. */
const cmap *cmap_find(const char *name);
/* The default for signed data (RdBu-like, blue negative, red positive) and for non-negative. */
const cmap *cmap_default_diverging(void);
const cmap *cmap_default_sequential(void);
/* Colour at t in [0, 1] (clamped; NaN gives the middle) as 0xRRGGBB. */
uint32_t cmap_color(const cmap *m, double t);

#endif
