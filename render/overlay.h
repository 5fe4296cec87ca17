/* overlay.h: a list of key / description entries laid out as an overlay box that fits the canvas
 * it is given, from a 60x20 terminal up: the keys in a column as wide as the widest (at most a
 * third of the box), descriptions wrapped onto indented continuation lines instead of running
 * past the box, the title wrapped too, and the entries paged by a scroll offset with a footer
 * saying which lines show. Nothing is shortened. Used by the explorer's `?` help in the terminal
 * and the window alike. */
#ifndef PELAB_OVERLAY_H
#define PELAB_OVERLAY_H

#include <stddef.h>

#include "figure.h"
#include "scene.h"

typedef struct overlay_entry {
    const char *keys, *what;
    int strong; /* 1: keys in the accent colour (the current view's own) */
} overlay_entry;

/* Draw the overlay in r (figure units of t). *scroll is the first entry line shown (clamped
 * here to what can show). Returns the number of entry lines there are (wrapped). */
int overlay_list(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                 const char *title, const overlay_entry *e, size_t n, const char *footer,
                 int *scroll);

/* The height overlay_list needs in a canvas w wide to show every entry without paging (the
 * box and its margin), for a box no taller than its content. */
double overlay_list_height(const scene_target *t, double w, const char *title,
                           const overlay_entry *e, size_t n, const char *footer);

#endif
