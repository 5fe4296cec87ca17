/* layout_cases.h: issue 11's reference sizes, shared by the tests that hold every view's figure
 * to them (test_layout: nothing cut, main panel present; test_figure_clash: nothing over text or
 * data): the terminal, the window at three sizes and three zooms, and the export (default,
 * small, a paper's two columns, and tall figures). */
#ifndef PELAB_TESTS_LAYOUT_CASES_H
#define PELAB_TESTS_LAYOUT_CASES_H

#include <stdio.h>

#include "explorer.h"
#include "lesson.h"
#include "tap.h"
#include "views.h"

typedef enum { FE_TERMINAL, FE_WINDOW, FE_EXPORT } front_end;
static const char *const fe_name[] = {"terminal", "window", "export"};

typedef struct size_case {
    front_end fe;
    int w, h;
    double zoom;
} size_case;

static const size_case cases[] = {
    {FE_TERMINAL, 80, 24, 1},
    {FE_TERMINAL, 120, 40, 1},
    {FE_TERMINAL, 200, 60, 1},
    {FE_WINDOW, 1024, 640, 1},
    {FE_WINDOW, 1024, 640, 1.5},
    {FE_WINDOW, 1024, 640, 2},
    {FE_WINDOW, 1280, 800, 1},
    {FE_WINDOW, 1280, 800, 1.5},
    {FE_WINDOW, 1280, 800, 2},
    {FE_WINDOW, 1920, 1080, 1},
    {FE_WINDOW, 1920, 1080, 1.5},
    {FE_WINDOW, 1920, 1080, 2},
    {FE_EXPORT, 1000, 600, 1},
    {FE_EXPORT, 480, 320, 1},
    /* issue 26: a paper's two columns, 7x3in, and one column, 3.5x2.2in (the layout is the
     * same at any --dpi: 96 units per inch, fonts in points), and a small 300x200 px figure */
    {FE_EXPORT, 672, 288, 1},
    {FE_EXPORT, 336, 211, 1},
    {FE_EXPORT, 300, 200, 1},
    /* and tall ones: a column figure 2.2x3.5in, and 300x600 px (a phone, a slide's side panel):
     * the multi-panel views arrange their panels down (fig_grid_pick) */
    {FE_EXPORT, 211, 336, 1},
    {FE_EXPORT, 300, 600, 1},
};

/* An export size of issue 26's done-when for the lesson slides: a paper's two columns and one
 * column, 300x200 px and 480x320, and the tall ones (2.2x3.5in, 300x600 px). */
static inline int slide_case(const size_case *c)
{
    return c->fe == FE_EXPORT && c->w < 1000;
}

/* fn for every slide of every shipped lesson, with the state the slide's view line sets (what
 * its handout figure and `pelab export` of that line draw) and a label naming it. */
typedef void (*slide_fn)(const app_state *st, const char *label, void *user);
static inline void for_each_slide(slide_fn fn, void *user)
{
    char **names;
    int nl = lesson_names(&names);
    TAP_OK(nl >= 6, "%d shipped lessons", nl);
    for (int li = 0; li < nl; li++) {
        char path[1024], err[512];
        lesson l;
        if (lesson_resolve(names[li], path, sizeof path, err, sizeof err) < 0 ||
            lesson_load(&l, path, NULL, stderr) != 0) {
            TAP_OK(0, "lesson %s loads", names[li]);
            continue;
        }
        for (int i = 0; i < l.n; i++) {
            char label[160];
            snprintf(label, sizeof label, "lesson %s slide %d (%s)", names[li], i + 1,
                     app_view_at((size_t)l.slides[i].st.view)->name);
            fn(&l.slides[i].st, label, user);
        }
        lesson_free(&l);
    }
    lesson_names_free(names, nl);
}

#endif
