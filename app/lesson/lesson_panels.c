/* lesson_panels.c: `pelab lesson --check`'s scene check. A caption that names a panel ("the small
 * panels are the four heads, the large one their mean") must be able to point at it: the slide's
 * panels: line lists the names, and every one must be in the scene the presenter draws, in the
 * terminal and in the window at the sizes the layout tests use (a terminal attention view has
 * no mean matrix at 80x24, so a caption naming it fails). */
#include <stdio.h>
#include <stdlib.h>

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

int lesson_check_panels(const lesson *l, FILE *diag)
{
    int misses = 0;
    scene s;
    scene_init(&s, 1, 1, 0);
    for (int i = 0; i < l->n; i++) {
        const lesson_slide *sl = &l->slides[i];
        if (!sl->n_panels) continue;
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            const panel_size *z = &sizes[k];
            app_explorer *x = calloc(1, sizeof *x);
            if (!x) break;
            app_explorer_init(x, &sl->st, !z->cells);
            struct lesson_presenter *p = lesson_attach_still(x, l, i); /* no race runs */
            if (!p) {
                app_explorer_free(x);
                free(x);
                break;
            }
            x->st.zoom = z->zoom;
            if (z->cells) {
                scene_target t = cellgrid_target(z->w, z->h);
                app_explorer_frame(x, &s, &t);
            } else {
                scene_target t = raster_target(z->w, z->h, raster_font_px(z->w, z->h, z->zoom));
                app_gui_frame(x, &s, &t);
            }
            for (int q = 0; q < sl->n_panels; q++) {
                if (scene_has_panel(&s, sl->panels[q])) continue;
                char shown[SCENE_MAX_PANELS * 26] = "";
                size_t u = 0;
                for (int j = 0; j < s.n_panels && u < sizeof shown; j++)
                    u += (size_t)snprintf(shown + u, sizeof shown - u, "%s%s", j ? " " : "",
                                          s.panels[j]);
                char zoom[32] = "";
                if (z->zoom != 1) snprintf(zoom, sizeof zoom, ", zoom %.0f%%", z->zoom * 100);
                fprintf(diag,
                        "%s:%d: panels: the caption names '%s', which slide %d does not show "
                        "in the %s at %dx%d%s (it shows: %s)\n",
                        l->path, sl->panels_line, sl->panels[q], i + 1,
                        z->cells ? "terminal" : "window", z->w, z->h, zoom,
                        s.n_panels ? shown : "no named panels");
                misses++;
            }
            lesson_detach(x, p);
            app_explorer_free(x);
            free(x);
        }
    }
    scene_free(&s);
    return misses;
}
