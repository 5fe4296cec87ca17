/* explorer_gui.c: the explorer in an SDL window, drawn by cairo at the drawable's resolution.
 * Same state, same key table as the terminal; the window adds hover readouts, the wheel zoom
 * and a panel of sliders. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "explorer.h"
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

/* ---- the slider panel -------------------------------------------------------------------- */

typedef struct slider {
    const char *option; /* the option it sets */
    const char *label;
    double lo, hi; /* range of the option's value */
    int log;       /* log scale (base) */
    int integer;
} slider;

/* Each family of views gets the sliders that move its figure. */
static const slider pe_sliders[] = {
    {"base", "base", 2, 1e7, 1, 0},
    {"dim", "d", 2, 1024, 1, 1},
    {"len", "L", 8, 4096, 1, 1},
    {"heads", "heads", 1, 32, 0, 1},
    {"slope-ratio", "slope ratio", 0.05, 0.99, 0, 0},
    {"pos", "m", 0, 255, 0, 1},
};
static const slider ext_sliders[] = {
    {"base", "base", 100, 1e7, 1, 0},
    {"dim", "d", 16, 256, 1, 1},
    {"factor", "scaling factor", 1, 64, 1, 0},
    {"orig-ctx", "original context", 256, 131072, 1, 1},
    {"target-len", "target context", 256, 1048576, 1, 1},
};
static const slider attn_sliders[] = {
    {"step", "step", 0, 63, 0, 1},
    {"layer", "layer", 0, 2, 0, 1},
    {"shift", "shift", 0, 192, 0, 1},
    {"rope-base", "RoPE base", 10, 1e7, 1, 0},
    {"alibi-scale", "ALiBi slopes x", 0.05, 20, 1, 0},
    {"temperature", "temperature", 0, 2, 0, 0},
};

typedef struct slider_set {
    const slider *s;
    size_t n;
} slider_set;

static slider_set sliders_for(const app_explorer *x)
{
    const char *v = app_view_at((size_t)x->st.view)->name;
    if (strcmp(v, "attention") == 0 || strcmp(v, "compare") == 0)
        return (slider_set){attn_sliders, sizeof attn_sliders / sizeof attn_sliders[0]};
    if (strcmp(v, "frequencies") == 0 || strcmp(v, "extension") == 0 ||
        strcmp(v, "resolution") == 0)
        return (slider_set){ext_sliders, sizeof ext_sliders / sizeof ext_sliders[0]};
    return (slider_set){pe_sliders, sizeof pe_sliders / sizeof pe_sliders[0]};
}
#define N_SLIDERS 6 /* the most any set has: the panel's row height */

typedef struct panel {
    double x, y, w, row_h, track_x, track_w;
} panel;

static panel panel_geometry(const scene_target *t, double view_h)
{
    panel p;
    p.w = fmin(t->width * 0.24, t->text_h * 14);
    p.x = t->width - p.w;
    p.y = t->text_h * 0.6;
    p.row_h = fmin(t->text_h * 2.6, (view_h - p.y) / N_SLIDERS);
    p.track_x = p.x + t->text_h * 0.6;
    p.track_w = p.w - t->text_h * 1.4;
    return p;
}

static double slider_value(const app_explorer *x, const slider *sl)
{
    char buf[64];
    app_option_get(&x->st, app_option_find(sl->option), buf, sizeof buf);
    double v = atof(buf);
    if (strcmp(sl->option, "pos") == 0 && v < 0) v = 3;
    if (strcmp(sl->option, "target-len") == 0 && v <= 0)
        v = x->st.p.scaling.factor * x->st.p.scaling.original_ctx;
    if (strcmp(sl->option, "slope-ratio") == 0 && v <= 0) v = pow(2, -8.0 / x->st.p.heads);
    return v;
}

static double slider_frac(const slider *sl, double v, double hi)
{
    double f = sl->log ? log(v / sl->lo) / log(hi / sl->lo) : (v - sl->lo) / (hi - sl->lo);
    return fmin(1, fmax(0, f));
}

static double slider_hi(const app_explorer *x, const slider *sl)
{
    if (strcmp(sl->option, "pos") == 0) return x->st.p.len - 1 > 1 ? x->st.p.len - 1 : 1;
    return sl->hi;
}

static void draw_panel(app_explorer *x, scene *s, const scene_target *t)
{
    const fig_theme *th = fig_theme_get(x->st.dark);
    panel p = panel_geometry(t, x->view_h);
    scene_rect(s, p.x, 0, p.w, x->view_h, th->bg, SCENE_FILL);
    scene_line(s, p.x, 0, p.x, x->view_h, th->grid, 0, SCENE_RULE);
    slider_set set = sliders_for(x);
    for (size_t i = 0; i < set.n; i++) {
        const slider *sl = &set.s[i];
        double hi = slider_hi(x, sl);
        double v = slider_value(x, sl);
        double y = p.y + p.row_h * (double)i;
        char val[64];
        snprintf(val, sizeof val, sl->integer ? "%s = %.0f" : "%s = %.6g", sl->label, v);
        if (strcmp(sl->option, "rope-base") == 0 && v <= 0)
            snprintf(val, sizeof val, "%s = trained", sl->label);
        if (strcmp(sl->option, "step") == 0 && v < 0)
            snprintf(val, sizeof val, "%s = the last token", sl->label);
        int active = x->dragging == (int)i + 1;
        scene_text(s, p.track_x, y, val, 0.9, SCENE_LEFT | SCENE_TOP, active ? th->accent : th->fg,
                   active ? SCENE_BOLD : 0);
        double ty = y + t->text_h * 1.55;
        scene_line(s, p.track_x, ty, p.track_x + p.track_w, ty, th->grid, t->text_h * 0.15, 0);
        double f = slider_frac(sl, v, hi);
        scene_line(s, p.track_x, ty, p.track_x + p.track_w * f, ty, th->accent, t->text_h * 0.15,
                   0);
        scene_circle(s, p.track_x + p.track_w * f, ty, t->text_h * 0.3, th->accent, 0, SCENE_FILL);
    }
    x->panel_x = p.x;
}

/* Set slider i from a pointer x position. */
static void slider_drag(app_explorer *x, const scene_target *t, int i, double px)
{
    const slider *sl = &sliders_for(x).s[i];
    panel p = panel_geometry(t, x->view_h);
    double f = fmin(1, fmax(0, (px - p.track_x) / p.track_w));
    double hi = slider_hi(x, sl);
    double v = sl->log ? sl->lo * pow(hi / sl->lo, f) : sl->lo + f * (hi - sl->lo);
    if (sl->integer) v = floor(v + 0.5);
    if (strcmp(sl->option, "dim") == 0) v = 2 * floor(v / 2 + 0.5);
    if (strcmp(sl->option, "base") == 0) {
        /* round to 3 significant digits so the value reads well */
        double e = pow(10, floor(log10(v)) - 2);
        v = floor(v / e + 0.5) * e;
    }
    char buf[64], line[128], err[512];
    snprintf(buf, sizeof buf, sl->integer ? "%.0f" : "%.6g", v);
    snprintf(line, sizeof line, "%s %s", sl->option, buf);
    if (app_option_command(&x->st, line, err, sizeof err) < 0) {
        snprintf(x->message, sizeof x->message, "%s", err);
        x->message_error = 1;
    } else {
        snprintf(x->message, sizeof x->message, "%s = %s", sl->option, buf);
        x->message_error = 0;
    }
    if (strcmp(sl->option, "pos") == 0) x->st.pos_frac = 0;
    x->dirty = 1;
}

/* Which slider row the point is on (-1 none). */
static int slider_hit(const app_explorer *x, const scene_target *t, double px, double py)
{
    panel p = panel_geometry(t, x->view_h);
    if (px < p.x || py < p.y || py > x->view_h) return -1;
    int i = (int)((py - p.y) / p.row_h);
    return i >= 0 && i < (int)sliders_for(x).n ? i : -1;
}

/* ---- the loop ---------------------------------------------------------------------------- */

static scene_target gui_target(window *win, const app_state *st)
{
    int w, h;
    window_size(win, &w, &h);
    /* the font follows the drawable's pixels, so HiDPI gets the same layout, sharper */
    return raster_target(w, h, raster_font_px(w, h, st->zoom));
}

static void build(app_explorer *x, window *win, scene *s, scene_target *t)
{
    *t = gui_target(win, &x->st);
    /* the view gets the canvas left of the slider panel */
    panel p = panel_geometry(t, t->height);
    scene_target full = *t;
    full.width = p.x;
    app_explorer_frame(x, s, &full);
    s->width = t->width;
    /* the status band and the panel span the whole width */
    draw_panel(x, s, t);
}

int app_run_gui(app_explorer *x, int frames)
{
    char err[512];
    window *win = NULL;
    if (window_open(&win, "pelab", 1280, 800, err, sizeof err) < 0) {
        fprintf(stderr, "pelab gui: %s\n", err);
        return 1;
    }
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
            if (frames > 0 && drawn >= frames) break;
        }
        if (x->want_fullscreen) {
            window_toggle_fullscreen(win);
            x->want_fullscreen = 0;
        }
        ui_event ev;
        /* --frames N times the window: it never waits for an event */
        int got = window_poll(win, &ev, frames > 0 ? 0 : app_explorer_animating(x) ? 8 : 250);
        if (frames > 0) x->dirty = 1; /* --frames N: draw N frames whatever happens, then exit */
        while (got > 0 && !x->quit) {
            int handled = 0;
            if (ev.type == UI_EV_MOUSE) {
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
            if (ev.type == UI_EV_KEY && ev.key == 's' && x->mode == APP_MODE_NORMAL) {
                /* the window saves exactly what is on screen */
                char path[256];
                app_next_save_name(&x->st, "png", path, sizeof path);
                char params[2048];
                app_export_command(&x->st, NULL, params, sizeof params);
                raster_meta meta[] = {{"Software", "pelab " PELAB_VERSION_STRING},
                                      {"Parameters", params}};
                if (window_save_png(win, path, meta, 2, err, sizeof err) < 0)
                    snprintf(x->message, sizeof x->message, "save failed: %.400s", err);
                else
                    snprintf(x->message, sizeof x->message, "saved %s (what is on screen)", path);
                x->message_error = 0;
                x->dirty = 1;
                handled = 1;
            }
            if (!handled) x->dirty |= app_explorer_event(x, &ev);
            got = window_poll(win, &ev, 0);
        }
        double tn = now_s();
        if (app_explorer_animating(x)) x->dirty |= app_explorer_tick(x, tn - last);
        last = tn;
    }
    scene_free(&s);
    window_close(win);
    return 0;
}
