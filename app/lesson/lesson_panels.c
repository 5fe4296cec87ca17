/* lesson_panels.c: `pelab lesson --check`'s scene check. A caption that names a panel ("the small
 * panels are the four heads, the large one their mean") must be able to point at it: the slide's
 * panels: line lists the names, and every one must be in the scene the presenter draws, in the
 * terminal and in the window at the sizes the layout tests use (a terminal attention view has
 * no mean matrix at 80x24, so a caption naming it fails). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cellgrid.h"
#include "explorer.h"
#include "frontend.h"
#include "lesson.h"
#include "raster.h"

typedef struct panel_size {
    int cells;
    int w, h;
    double zoom;
} panel_size;

static const panel_size sizes[] = {
    {1, 80, 24, 1},    {1, 120, 40, 1},   {0, 1024, 768, 1},   {0, 1024, 768, 1.5},
    {0, 1024, 768, 2}, {0, 1280, 800, 1}, {0, 1280, 800, 1.5}, {0, 1280, 800, 2},
};

/* Whether the caption names panel as a word of its own, in any case, outside {placeholders}
 * ("{heads}" is an option's value); a '-' in the name reads as '-' or a space ("next token"). */
static int caption_names(const char *cap, const char *name)
{
    int depth = 0;
    for (const char *c = cap; *c; c++) {
        if (*c == '{') depth++;
        if (*c == '}' && depth > 0) depth--;
        if (depth || (c > cap && isalnum((unsigned char)c[-1]))) continue;
        const char *a = c, *b = name;
        for (; *a && *b; a++, b++)
            if (*b == '-' ? *a != '-' && *a != ' ' : tolower((unsigned char)*a) != *b) break;
        if (!*b && !isalnum((unsigned char)*a)) return 1;
    }
    return 0;
}

static void where(const panel_size *z, char *buf, size_t n)
{
    char zoom[32] = "";
    if (z->zoom != 1) snprintf(zoom, sizeof zoom, ", zoom %.0f%%", z->zoom * 100);
    snprintf(buf, n, "the %s at %dx%d%s", z->cells ? "terminal" : "window", z->w, z->h, zoom);
}

enum { N_SIZES = sizeof sizes / sizeof sizes[0] };

/* The panels each size shows, by name (scene.panels). */
typedef struct shown_set {
    char name[SCENE_MAX_PANELS][24];
    int n;
} shown_set;

static int shows(const shown_set *h, const char *name)
{
    for (int j = 0; j < h->n; j++)
        if (!strcmp(h->name[j], name)) return 1;
    return 0;
}

/* Draw slide i at every size as the presenter does; 0 when it could not be drawn. */
static int draw_sizes(const lesson *l, int i, scene *s, shown_set *shown)
{
    const lesson_slide *sl = &l->slides[i];
    for (size_t k = 0; k < N_SIZES; k++) {
        const panel_size *z = &sizes[k];
        app_explorer *x = calloc(1, sizeof *x);
        if (!x) return 0;
        app_explorer_init(x, &sl->st, !z->cells);
        struct lesson_presenter *p = lesson_attach_still(x, l, i); /* no race runs */
        if (!p) {
            app_explorer_free(x);
            free(x);
            return 0;
        }
        x->st.zoom = z->zoom;
        if (z->cells) {
            scene_target t = cellgrid_target(z->w, z->h);
            app_explorer_frame(x, s, &t);
        } else {
            scene_target t = raster_target(z->w, z->h, raster_font_px(z->w, z->h, z->zoom));
            app_gui_frame(x, s, &t);
        }
        shown[k].n = 0;
        for (int j = 0; j < s->n_panels && j < SCENE_MAX_PANELS; j++)
            snprintf(shown[k].name[shown[k].n++], sizeof shown[k].name[0], "%s", s->panels[j]);
        lesson_detach(x, p);
        app_explorer_free(x);
        free(x);
    }
    return 1;
}

int lesson_check_panels(const lesson *l, FILE *diag)
{
    int misses = 0;
    scene s;
    scene_init(&s, 1, 1, 0);
    shown_set *shown = calloc(N_SIZES, sizeof *shown);
    for (int i = 0; shown && i < l->n; i++) {
        const lesson_slide *sl = &l->slides[i];
        if (!draw_sizes(l, i, &s, shown)) break;
        for (size_t k = 0; k < N_SIZES; k++) {
            char at[64];
            where(&sizes[k], at, sizeof at);
            for (int q = 0; q < sl->n_panels; q++) {
                if (shows(&shown[k], sl->panels[q])) continue;
                char list[SCENE_MAX_PANELS * 26] = "";
                size_t u = 0;
                for (int j = 0; j < shown[k].n && u < sizeof list; j++)
                    u += (size_t)snprintf(list + u, sizeof list - u, "%s%s", j ? " " : "",
                                          shown[k].name[j]);
                fprintf(diag,
                        "%s:%d: panels: the caption names '%s', which slide %d does not show "
                        "in %s (it shows: %s)\n",
                        l->path, sl->panels_line, sl->panels[q], i + 1, at,
                        shown[k].n ? list : "no named panels");
                misses++;
            }
        }
        /* A caption that names a panel in its words without a panels: line: the name of a panel
         * the view draws at one size and not at another is a promise some size breaks (the
         * caption about "the large one their mean" over a terminal with no mean matrix). */
        for (size_t k = 0; k < N_SIZES; k++)
            for (int j = 0; j < shown[k].n; j++) {
                const char *name = shown[k].name[j];
                int listed = 0, earlier = 0;
                for (int q = 0; q < sl->n_panels; q++) listed |= !strcmp(sl->panels[q], name);
                for (size_t e = 0; e < k; e++) earlier |= shows(&shown[e], name);
                if (listed || earlier || !caption_names(sl->caption, name)) continue;
                for (size_t m = 0; m < N_SIZES; m++) {
                    if (shows(&shown[m], name)) continue;
                    char at[64];
                    where(&sizes[m], at, sizeof at);
                    fprintf(diag,
                            "%s:%d: the caption names the %s panel ('%s'), which slide %d does "
                            "not show in %s\n",
                            l->path, sl->line, name, name, i + 1, at);
                    misses++;
                    break;
                }
            }
    }
    free(shown);
    scene_free(&s);
    return misses;
}
