/* test_figure_clash.c: issue 11's "no text over text or over data" for the views whose figures
 * this test covers, at the reference sizes of test_layout (terminal 80x24, 120x40, 200x60;
 * window 1024x640 and 1280x800 at zoom 100, 150 and 200%; export 1000x600 and 480x320, a
 * paper's two columns and one, 300x200 and the tall sizes), and every lesson slide's figure:
 *  - no two text items share a cell (terminal) or overlap by more than a pixel (window, export),
 *    and in the terminal two texts on one row keep a blank cell between them;
 *  - no legend or reference-line label covers a curve, a reference line or a label (the scene's
 *    legend_covers, which figure.c sets when no spot in the plot was free);
 *  - curves that coincide point for point are drawn in different line styles (solid, dashed,
 *    dotted), so each one shows;
 *  - alibi's head labels say the same for every head: each slope and range, or none of them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cellgrid.h"
#include "explorer.h"
#include "figure.h"
#include "frontend.h"
#include "options.h"
#include "raster.h"
#include "tap.h"

#include "layout_cases.h"

/* the views whose figures are held to this (issue 11's rvb part), each under a setting
 * ("option=value"; NULL: the defaults): the table view once per kind of position parameters and
 * the measure views in each of their layouts (issue 23) */
static const struct {
    const char *view, *set;
} runs[] = {
    {"rope", NULL},
    {"decay", NULL},
    {"extension", NULL},
    {"resolution", NULL},
    {"t5", NULL},
    {"alibi", NULL},
    {"xl", NULL},
    {"frequencies", NULL},
    {"table", "model=learned"},
    {"table", "model=sinusoidal"},
    {"table", "model=t5"},
    {"table", "model=alibi"},
    {"table", "model=rope"},
    {"usage", NULL},
    {"usage", "show=massive"},
    {"distance", NULL},
    {"distance", "per-head=on"},
    {"distance", "by=position"},
    {"model-distance", NULL},
    {"sinks", NULL},
    {"sinks", "models=shipped"},
    {"similarity", NULL},
    {"similarity", "pe=learned"},
};

typedef struct box {
    double x0, y0, x1, y1;
    const char *str;
} box;

/* A text item's extent as the target draws it: the terminal one cell per code point on the row
 * cellgrid.c's draw_text picks (whatever the size); pixels from the measured width. */
static box text_box(const scene_item *it, const scene_target *t)
{
    const char *str = it->u.text.str;
    double w, h;
    if (t->cells) {
        size_t n = 0;
        for (const unsigned char *p = (const unsigned char *)str; *p; p++)
            if ((*p & 0xc0) != 0x80) n++;
        w = (double)n;
        h = 2.0;
    } else {
        w = it->flags & SCENE_BOLD ? scene_text_width_bold(t, str, it->u.text.size)
                                   : scene_text_width(t, str, it->u.text.size);
        h = t->text_h * it->u.text.size;
    }
    unsigned a = it->u.text.anchor, ha = a & 3, va = (a >> 2) & 3;
    if (a & SCENE_VERTICAL) {
        if (t->cells) { /* written across, as cellgrid.c does */
            unsigned nh = va == 0 ? 0u : va == 1 ? 1u : 2u, nv = ha == 0 ? 2u : ha == 1 ? 1u : 0u;
            ha = nh;
            va = nv;
        } else {
            /* as backend_cairo.c draws it, rotated 90 degrees counter-clockwise about the
             * anchor: the text's own across-anchor (left, centre, right) runs up the page from
             * the anchor (right: the text hangs below it), its top-to-bottom runs left to right
             * (top: the glyphs lie right of it); the box before was the unrotated anchors on the
             * swapped sizes, which put a bar's word (right, middle) half above the axis */
            double len = w, thick = h;
            double x0 = it->u.text.x - (va == 1 ? thick / 2 : va == 2 ? thick : 0);
            double y0 = it->u.text.y - (ha == SCENE_CENTER ? len / 2 : ha == SCENE_RIGHT ? 0 : len);
            box b = {x0, y0, x0 + thick, y0 + len, str};
            return b;
        }
    }
    double x0 = it->u.text.x - (ha == SCENE_CENTER ? w / 2 : ha == SCENE_RIGHT ? w : 0);
    double y0 = it->u.text.y - (va == 1 ? h / 2 : va == 2 ? h : 0);
    box b = {x0, y0, x0 + w, y0 + h, str};
    if (t->cells) { /* the cells draw_text writes */
        double col = floor(x0 + 0.5), row = floor(y0 / 2.0 + 0.5);
        b.x0 = col;
        b.x1 = col + w;
        b.y0 = row;
        b.y1 = row + 1;
    }
    return b;
}

/* The first pair of text items that overlap (or, in a terminal, touch on a row), or "". */
static void check_clash(const scene *s, const scene_target *t, char *why, size_t n)
{
    why[0] = '\0';
    size_t m = 0;
    box *b = malloc(sizeof *b * (s->n + 1));
    if (!b) return;
    for (size_t i = 0; i < s->n; i++)
        if (s->items[i].kind == SCENE_TEXT && s->items[i].u.text.str[0])
            b[m++] = text_box(&s->items[i], t);
    double gap = t->cells ? 1.0 : -1.0; /* a blank cell between; a pixel of slack */
    for (size_t i = 0; i < m && !why[0]; i++)
        for (size_t j = i + 1; j < m && !why[0]; j++) {
            int rows =
                t->cells ? b[i].y0 == b[j].y0 : b[i].y0 < b[j].y1 - 1.0 && b[j].y0 < b[i].y1 - 1.0;
            if (rows && b[i].x0 < b[j].x1 + gap && b[j].x0 < b[i].x1 + gap)
                snprintf(why, n, "\"%s\" and \"%s\" %s", b[i].str, b[j].str,
                         t->cells ? "share or touch a row's cells" : "overlap");
        }
    free(b);
}

/* The first two curves drawn through the same points in the same line style, or "". */
static void check_coincide(const scene *s, char *why, size_t n)
{
    why[0] = '\0';
    const unsigned style = SCENE_DASHED | SCENE_DOTTED;
    for (size_t i = 0; i < s->n && !why[0]; i++) {
        const scene_item *a = &s->items[i];
        if (a->kind != SCENE_POLYLINE || a->u.poly.n < 2) continue;
        for (size_t j = i + 1; j < s->n && !why[0]; j++) {
            const scene_item *b = &s->items[j];
            if (b->kind != SCENE_POLYLINE || b->u.poly.n != a->u.poly.n ||
                (a->flags & style) != (b->flags & style))
                continue;
            if (!memcmp(a->u.poly.xy, b->u.poly.xy, sizeof(double) * 2 * a->u.poly.n))
                snprintf(why, n, "curves %zu and %zu coincide in one line style", i, j);
        }
    }
}

/* alibi: the heads whose label lacks the slope or the range another head's label gives, or "". */
static void check_heads(const scene *s, char *why, size_t n)
{
    why[0] = '\0';
    int heads = 0, slopes = 0, ranges = 0;
    for (size_t i = 0; i < s->n; i++) {
        const scene_item *it = &s->items[i];
        if (it->kind != SCENE_TEXT) continue;
        const char *str = it->u.text.str;
        if (str[0] == 'h' && str[1] >= '0' && str[1] <= '9') heads++;
        if (strstr(str, "m=2")) slopes++;
        if (strstr(str, "..0")) ranges++;
    }
    if ((slopes && slopes != heads) || (ranges && ranges != heads))
        snprintf(why, n, "%d heads, %d labels with a slope, %d with a range", heads, slopes,
                 ranges);
}

/* given: the state to start from (a lesson slide's), NULL for the defaults; label names the
 * case (NULL: the view's name) */
static void run_case_st(scene *s, size_t v, const size_case *c, const char *set,
                        const app_state *given, const char *label)
{
    const char *name = app_view_at(v)->name;
    app_state st;
    if (given)
        st = *given;
    else
        app_state_default(&st);
    st.view = (int)v;
    char err[512] = "";
    if (set) { /* "option=value" */
        char opt[64];
        const char *eq = strchr(set, '=');
        snprintf(opt, sizeof opt, "%.*s", (int)(eq - set), set);
        const app_option *o = app_option_find(opt);
        if (!o || app_option_set(&st, o, eq + 1, err, sizeof err) < 0)
            TAP_OK(0, "%s: --%s (%s)", name, set, err);
    }
    st.zoom = c->zoom;
    app_explorer *x = calloc(1, sizeof *x);
    app_explorer_init(x, &st, c->fe == FE_WINDOW);
    scene_target t = c->fe == FE_TERMINAL
                         ? cellgrid_target(c->w, c->h)
                         : raster_target(c->w, c->h, raster_font_px(c->w, c->h, c->zoom));
    int ok;
    if (c->fe == FE_EXPORT) {
        /* as pelab export builds it: no cursor, no hints naming options to try */
        x->st.figure = 1;
        x->st.cursor_on = 0;
        scene_reset(s, t.width, t.height, 0xffffff);
        ok = app_view_build(&x->ctx[v], &x->st, s, &t, err, sizeof err) == 0;
    } else {
        if (c->fe == FE_WINDOW)
            app_gui_frame(x, s, &t);
        else
            app_explorer_frame(x, s, &t);
        ok = x->view_error[0] == '\0';
        snprintf(err, sizeof err, "%s", x->view_error);
    }
    char what[240];
    snprintf(what, sizeof what, "%s%s%s %s %dx%d%s", label ? label : name, set ? " " : "",
             set ? set : "", fe_name[c->fe], c->w, c->h,
             c->zoom != 1 ? (c->zoom == 1.5 ? " zoom 150%" : " zoom 200%") : "");
    char why[600];
    check_clash(s, &t, why, sizeof why);
    TAP_OK(ok && !why[0], "%s: no text over text%s%s", what, why[0] ? ": " : "", ok ? why : err);
    if (!strcmp(name, "alibi")) {
        check_heads(s, why, sizeof why);
        TAP_OK(ok && !why[0], "%s: every head's label gives the same%s%s", what, why[0] ? ": " : "",
               why);
    }
    check_coincide(s, why, sizeof why);
    TAP_OK(ok && !why[0], "%s: coinciding curves drawn in different styles%s%s", what,
           why[0] ? ": " : "", why);
    TAP_OK(ok && s->legend_covers == 0, "%s: the legend covers no data (covers %zu)", what,
           s->legend_covers);
    app_explorer_free(x);
    free(x);
}

static void run_case(scene *s, size_t v, const size_case *c, const char *set)
{
    run_case_st(s, v, c, set, NULL, NULL);
}

/* every lesson slide's figure at the sizes of issue 26 (slide_case) */
static void check_slide(const app_state *st, const char *label, void *user)
{
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        if (slide_case(&cases[k])) run_case_st(user, (size_t)st->view, &cases[k], NULL, st, label);
}

int main(void)
{
    scene s;
    scene_init(&s, 1, 1, 0);
    const char *only = getenv("PELAB_LAYOUT_ONLY"); /* one view, as test_layout takes it */
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++)
        for (size_t v = 0; v < app_view_count(); v++)
            if (!strcmp(app_view_at(v)->name, runs[k].view) &&
                (!only || !strcmp(only, runs[k].view)))
                for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
                    run_case(&s, v, &cases[c], runs[k].set);
    if (!only) for_each_slide(check_slide, &s);
    scene_free(&s);
    return tap_done();
}
