/* test_cursor.c: the data cursor (cross-hair, hover line, marker) is drawn in the theme's ink
 * over a background halo, never in a series colour: the accent equals a series colour in both
 * themes (the 'learned' curve's orange in the light one), so a cursor in it would mean two
 * things. Each view is built with and without the cursor, in both themes, in a window and a
 * terminal; every line, outline or circle colour the cursor adds must be the ink or the
 * background. */
#include <stdio.h>
#include <string.h>

#include "cellgrid.h"
#include "raster.h"
#include "tap.h"
#include "views.h"

enum { MAXC = 256 };
typedef struct census {
    uint32_t color[MAXC];
    int count[MAXC];
    int n;
} census;

/* lines, outlines and circles by colour (text, fills and heatmaps are the data, not marks) */
static void take(census *c, const scene *s)
{
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < s->n; i++) {
        const scene_item *it = &s->items[i];
        int mark = it->kind == SCENE_LINE || it->kind == SCENE_CIRCLE ||
                   (it->kind == SCENE_RECT && !(it->flags & SCENE_FILL));
        if (!mark) continue;
        int k = 0;
        while (k < c->n && c->color[k] != it->color) k++;
        if (k == c->n) {
            if (c->n == MAXC) continue;
            c->color[c->n++] = it->color;
        }
        c->count[k]++;
    }
}

static int count_of(const census *c, uint32_t color)
{
    for (int k = 0; k < c->n; k++)
        if (c->color[k] == color) return c->count[k];
    return 0;
}

static int build(const app_state *st, const scene_target *t, census *out)
{
    scene s;
    scene_init(&s, 1, 1, 0);
    app_view_ctx c = {0};
    char err[512];
    int rc = app_view_build(&c, st, &s, t, err, sizeof err);
    if (rc == 0)
        take(out, &s);
    else
        tap_diag("%s: %s", app_view_at((size_t)st->view)->name, err);
    app_view_ctx_free(&c);
    scene_free(&s);
    return rc;
}

int main(void)
{
    scene_target tg[2] = {raster_target(1000, 600, raster_font_px(1000, 600, 1)),
                          cellgrid_target(120, 40)};
    for (size_t v = 0; v < app_view_count(); v++) {
        const app_view *vw = app_view_at(v);
        for (int dark = 0; dark < 2; dark++)
            for (int ti = 0; ti < 2; ti++) {
                app_state st;
                app_state_default(&st);
                st.view = (int)v;
                st.dark = dark;
                const fig_theme *th = fig_theme_get(dark);
                census off, on;
                if (build(&st, &tg[ti], &off) != 0) {
                    TAP_OK(0, "%s builds", vw->name);
                    continue;
                }
                st.cursor_on = 1;
                st.cur_r = 5;
                st.cur_c = 9;
                if (build(&st, &tg[ti], &on) != 0) {
                    TAP_OK(0, "%s builds with the cursor", vw->name);
                    continue;
                }
                int added = 0, bad = 0;
                for (int k = 0; k < on.n; k++) {
                    int more = on.count[k] - count_of(&off, on.color[k]);
                    if (more <= 0) continue;
                    added += more;
                    if (on.color[k] != th->fg && on.color[k] != th->bg) {
                        bad++;
                        tap_diag("%s: the cursor adds %d marks in #%06x", vw->name, more,
                                 (unsigned)on.color[k]);
                    }
                }
                TAP_OK(bad == 0,
                       "%s, %s theme, %s: the cursor's %d marks are ink or halo, no "
                       "series colour",
                       vw->name, dark ? "dark" : "light", ti ? "terminal" : "window", added);
            }
    }
    return tap_done();
}
