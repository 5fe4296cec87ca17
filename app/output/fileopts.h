/* fileopts.h: what every file drawn from a figure shares, an exported figure and an animation
 * alike: its size and resolution, the title its metadata carries and its text size. */
#ifndef PELAB_APP_FILEOPTS_H
#define PELAB_APP_FILEOPTS_H

#include "state.h"

typedef struct app_export_opts {
    int width, height; /* pixels at dpi (the PNG's size; SVG and PDF get its physical size) */
    double dpi;        /* pixels per inch: PNG pHYs, and the scale the figure is drawn at */
} app_export_opts;

/* A figure is laid out at its physical size, 96 figure units per inch (width / dpi inches
 * across), and drawn at dpi / 96 pixels per unit: the text is in points and a 300 dpi PNG is the
 * PDF of the same size rasterised, not a figure laid out for more pixels with smaller text.
 * Sets *w, *h to the layout size in units and returns the scale (pixels per unit). */
double app_export_layout(const app_export_opts *o, double *w, double *h);

/* The title a file's metadata carries: the author's --title, else the view's description. */
const char *app_export_title(const app_state *st);
/* The text size of a figure in layout units (app_export_layout; 96 per inch): --font-size
 * points, or scaled to the figure's physical size. */
double app_export_font_px(const app_state *st, const app_export_opts *o);

#endif
