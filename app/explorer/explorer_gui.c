/* explorer_gui.c: the explorer in an SDL window, drawn by cairo at the drawable's own pixel size.
 * Same state, same key table as the terminal; the window adds hover readouts, the wheel zoom
 * and a panel of sliders. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "frontend.h"
#include "export.h"
#include "options.h"
#include "raster.h"
#include "window.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- the slider panel ----------------------------------------------------------------- */

/* The sliders are the options the view uses that have a slider range (options.h), in the
 * order the view lists them. */
#define MAX_SLIDERS 32

typedef struct slider_set {
    const app_option *o[MAX_SLIDERS];
    size_t n;
} slider_set;

static slider_set sliders_for(const app_explorer *x)
{
    slider_set set = {{NULL}, 0};
    const app_option *opts[APP_MAX_OPTIONS];
    size_t n = app_explorer_options(x, opts, APP_MAX_OPTIONS);
    for (size_t i = 0; i < n && set.n < MAX_SLIDERS; i++)
        if (opts[i]->slider.scale != APP_SLIDER_NONE) set.o[set.n++] = opts[i];
    return set;
}

typedef struct panel {
    double x, y, w, row_h, track_x, track_w;
} panel;

static panel panel_geometry(const scene_target *t, double view_h, size_t rows)
{
    panel p;
    p.w = fmin(t->width * 0.24, t->text_h * 14);
    p.x = t->width - p.w;
    p.y = t->text_h * 0.6;
    /* six rows' height at most, so a short panel does not spread out */
    p.row_h = fmin(t->text_h * 2.6, (view_h - p.y) / (double)(rows > 6 ? rows : 6));
    p.track_x = p.x + t->text_h * 0.6;
    p.track_w = p.w - t->text_h * 1.4;
    return p;
}

static double slider_hi(const app_explorer *x, const app_option *o)
{
    return o->slider.hi_fn ? o->slider.hi_fn(&x->st) : o->slider.hi;
}

/* Where the knob sits: the value, or where an automatic value (at_lo) lands. */
static double slider_value(const app_explorer *x, const app_option *o)
{
    double v = 0;
    app_option_get_num(&x->st, o, &v); /* a slider's option is a number */
    if (o->at_lo && v == o->lo && o->slider.auto_fn) v = o->slider.auto_fn(&x->st);
    return v;
}

static double slider_frac(const app_option *o, double v, double hi)
{
    double lo = o->slider.lo;
    double f =
        o->slider.scale == APP_SLIDER_LOG ? log(v / lo) / log(hi / lo) : (v - lo) / (hi - lo);
    return isfinite(f) ? fmin(1, fmax(0, f)) : 0;
}

static void draw_panel(app_explorer *x, scene *s, const scene_target *t)
{
    const fig_theme *th = fig_theme_get(x->st.dark);
    slider_set set = sliders_for(x);
    panel p = panel_geometry(t, x->view_h, set.n);
    scene_rect(s, p.x, 0, p.w, x->view_h, th->bg, SCENE_FILL);
    scene_line(s, p.x, 0, p.x, x->view_h, th->grid, 0, SCENE_RULE);
    for (size_t i = 0; i < set.n; i++) {
        const app_option *o = set.o[i];
        double y = p.y + p.row_h * (double)i;
        char shown[64], val[128];
        app_option_show(&x->st, o, shown, sizeof shown);
        snprintf(val, sizeof val, "%s = %s", o->label ? o->label : o->name, shown);
        int active = x->dragging == (int)i + 1;
        scene_text(s, p.track_x, y, val, 0.9, SCENE_LEFT | SCENE_TOP, active ? th->accent : th->fg,
                   active ? SCENE_BOLD : 0);
        double ty = y + t->text_h * 1.55;
        scene_line(s, p.track_x, ty, p.track_x + p.track_w, ty, th->grid, t->text_h * 0.15, 0);
        double f = slider_frac(o, slider_value(x, o), slider_hi(x, o));
        scene_line(s, p.track_x, ty, p.track_x + p.track_w * f, ty, th->accent, t->text_h * 0.15,
                   0);
        scene_circle(s, p.track_x + p.track_w * f, ty, t->text_h * 0.3, th->accent, 0, SCENE_FILL);
    }
    x->panel_x = p.x;
}

/* Set slider i from a pointer x position. */
static void slider_drag(app_explorer *x, const scene_target *t, int i, double px)
{
    slider_set set = sliders_for(x);
    if (i < 0 || (size_t)i >= set.n) return;
    const app_option *o = set.o[i];
    panel p = panel_geometry(t, x->view_h, set.n);
    double f = fmin(1, fmax(0, (px - p.track_x) / p.track_w));
    double lo = o->slider.lo, hi = slider_hi(x, o);
    double v = o->slider.scale == APP_SLIDER_LOG ? lo * pow(hi / lo, f) : lo + f * (hi - lo);
    if (o->kind == APP_OPT_INT) v = floor(v + 0.5);
    if (o->slider.round == APP_ROUND_EVEN) v = 2 * floor(v / 2 + 0.5);
    if (o->slider.round == APP_ROUND_SIG3) {
        v = app_round_sig(v, 3); /* three significant digits, so the value reads well */
    } else if (o->kind != APP_OPT_INT) {
        v = app_round_sig(v, 6); /* six significant digits: a knob's position says no more */
    }
    app_explorer_apply_value(x, o, v); /* a number from the knob to the state, never text */
    x->st.pos_frac = 0;                /* a dragged position is a whole one */
}

/* Which slider row the point is on (-1 none). */
static int slider_hit(const app_explorer *x, const scene_target *t, double px, double py)
{
    if (!app_explorer_sidebar_shown(x)) return -1;
    size_t n = sliders_for(x).n;
    panel p = panel_geometry(t, x->view_h, n);
    if (px < p.x || py < p.y || py > x->view_h) return -1;
    int i = (int)((py - p.y) / p.row_h);
    return i >= 0 && i < (int)n ? i : -1;
}

/* ---- the loop ---------------------------------------------------------------------------- */

static scene_target gui_target(window *win, const app_state *st)
{
    int w, h;
    window_size(win, &w, &h);
    /* the font follows the drawable's pixels, so HiDPI gets the same layout, sharper */
    scene_target t = raster_target(w, h, raster_font_px(w, h, st->zoom));
    raster_target_font(&t, st->font); /* the status line and the panel in the author's font */
    return t;
}

void app_gui_frame(app_explorer *x, scene *s, const scene_target *t)
{
    /* the view gets the canvas left of the slider panel, or all of it when the panel is hidden
     * (the | key, or a projector zoom) */
    int shown = app_explorer_sidebar_shown(x);
    panel p = panel_geometry(t, t->height, 0);
    scene_target full = *t;
    if (shown) full.width = p.x;
    app_explorer_frame(x, s, &full);
    /* the figure as it is on screen, for `s` and `e` */
    x->fig_w = full.width;
    x->fig_h = x->view_h;
    x->fig_font_px = raster_font_px(t->width, t->height, x->st.zoom);
    /* the text size the view was drawn at (stepped down under the zoom when the data needed
     * the room, views.c), so `e` and `s` name the figure on screen */
    double k = x->ctx[x->st.view].text_k;
    if (k > 0 && k < 1) x->fig_font_px *= k;
    s->width = t->width;
    /* the status band and the panel span the whole width */
    if (shown)
        draw_panel(x, s, t);
    else
        x->panel_x = 0;
    app_explorer_overlay(x, s, t); /* over the panel too, never clipped by it */
}

static void build(app_explorer *x, window *win, scene *s, scene_target *t)
{
    *t = gui_target(win, &x->st);
    app_gui_frame(x, s, t);
}

int app_run_gui(app_explorer *x, int frames)
{
    char err[512];
    window *win = NULL;
    window_set_budget(pe_mem_hold, pe_mem_release); /* the frame counts in --max-memory */
    if (window_open(&win, "pelab", 1280, 800, err, sizeof err) < 0) {
        fprintf(stderr, "pelab gui: %s\n", err);
        return 1;
    }
    app_explorer_threaded(x); /* views build beside the input (explorer_work.c) */
    scene s;
    scene_init(&s, 1, 1, 0);
    scene_target t;
    int drawn = 0;
    double last = now_s();
    while (!x->quit) {
        if (x->dirty) {
            build(x, win, &s, &t);
            window_present(win, &s);
            drawn++;
            /* --frames N ends on a finished figure: past N it only waits for the build */
            if (frames > 0 && drawn >= frames && !app_explorer_working(x)) break;
        }
        if (x->want_fullscreen) {
            window_toggle_fullscreen(win);
            x->want_fullscreen = 0;
        }
        ui_event ev;
        /* --frames N times the window: it never waits for an event */
        int got = window_poll(win, &ev,
                              frames > drawn              ? 0
                              : app_explorer_animating(x) ? 8
                              : app_explorer_working(x)   ? 20
                                                          : 250);
        if (frames > drawn) x->dirty = 1; /* --frames N: draw N frames whatever happens */
        while (got > 0 && !x->quit) {
            int handled = 0;
            /* while `e`'s overlay shows, a click anywhere only closes it (the explorer) */
            if (ev.type == UI_EV_MOUSE && !x->cmd_shown) {
                t = gui_target(win, &x->st);
                int hit = slider_hit(x, &t, ev.x, ev.y);
                if (ev.mouse == UI_MOUSE_PRESS && ev.button == 1 && hit >= 0) {
                    x->dragging = hit + 1;
                    slider_drag(x, &t, hit, ev.x);
                    handled = 1;
                } else if (ev.mouse == UI_MOUSE_MOVE && x->dragging) {
                    slider_drag(x, &t, x->dragging - 1, ev.x);
                    handled = 1;
                } else if (ev.mouse == UI_MOUSE_RELEASE && x->dragging) {
                    x->dragging = 0;
                    x->dirty = 1;
                    handled = 1;
                } else if (x->panel_x > 0 && ev.x >= x->panel_x) {
                    handled = 1;
                }
            }
            int was_shown = x->cmd_shown;
            if (!handled) x->dirty |= app_explorer_event(x, &ev);
            if (x->cmd_shown && !was_shown) {
                /* e: the figure's command also goes on the clipboard, ready for a shell */
                if (window_set_clipboard(win, x->shown_cmd[0], err, sizeof err) == 0)
                    snprintf(x->clip_note, sizeof x->clip_note,
                             "the figure's command is on the clipboard");
                else
                    snprintf(x->clip_note, sizeof x->clip_note, "not on the clipboard (%.100s)",
                             err);
                x->dirty = 1;
            }
            got = window_poll(win, &ev, 0);
        }
        if (app_explorer_work_poll(x)) x->dirty = 1;
        double tn = now_s();
        if (app_explorer_animating(x)) x->dirty |= app_explorer_tick(x, tn - last);
        last = tn;
    }
    app_explorer_unthread(x); /* stops a build in progress at its next report */
    scene_free(&s);
    window_close(win);
    int sig = window_quit_signal();
    return sig ? 128 + sig : 0; /* like the terminal explorer: what a shell shows for a signal */
}
