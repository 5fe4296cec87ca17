/* fileopts.h: what every file drawn from a figure shares, an exported figure and an animation
 * alike: its size and resolution, the title its metadata carries and its text size. */
#ifndef PELAB_APP_FILEOPTS_H
#define PELAB_APP_FILEOPTS_H

#include "state.h"

typedef struct app_export_opts {
    int width, height; /* pixels (SVG/PDF: points at 96 per inch are the same numbers) */
    double dpi;        /* PNG pHYs */
} app_export_opts;

/* The title a file's metadata carries: the author's --title, else the view's description. */
const char *app_export_title(const app_state *st);
/* The text size in pixels of a figure: --font-size points at the dpi, or scaled to the size. */
double app_export_font_px(const app_state *st, const app_export_opts *o);

#endif
