/* layout_cases.h: issue 11's reference sizes, shared by the tests that hold every view's figure
 * to them (test_layout: nothing cut, main panel present; test_figure_clash: nothing over text or
 * data): the terminal, the window at three sizes and three zooms, and the export (default,
 * small, a paper's two columns, and tall figures). */
#ifndef PELAB_TESTS_LAYOUT_CASES_H
#define PELAB_TESTS_LAYOUT_CASES_H

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

#endif
