/* explorer.h: the interactive explorer, independent of the terminal or the window. It takes
 * pelab's own ui_events, keeps the state, and builds the frame (view + status lines + overlays)
 * as a scene. explorer_tui.c and explorer_gui.c only move events in and frames out, so the key
 * table is one table and actions are testable by feeding events. */
#ifndef PELAB_APP_EXPLORER_H
#define PELAB_APP_EXPLORER_H

#include <stddef.h>

#include "input.h"
#include "scene.h"
#include "state.h"
#include "views.h"

#define APP_MAX_VIEWS 32

typedef enum { APP_MODE_NORMAL = 0, APP_MODE_COMMAND, APP_MODE_HELP } app_mode;

struct app_explorer;
/* A layer over the explorer (a lesson, lesson.h): it sees every event and tick first and passes
 * on what it does not take by calling app_explorer_event / app_explorer_tick again (which then
 * reach the explorer itself), and it draws a panel of panel_h figure units under the view. */
typedef struct app_layer {
    void *ctx;
    int (*event)(void *ctx, struct app_explorer *x, const ui_event *ev);
    int (*tick)(void *ctx, struct app_explorer *x, double dt);
    int (*animating)(void *ctx, const struct app_explorer *x);
    double (*panel_h)(void *ctx, struct app_explorer *x, const scene_target *t);
    void (*panel)(void *ctx, struct app_explorer *x, scene *s, const scene_target *t, double y);
    /* The figure in the view's place (a lesson's race), or NULL: 1 when it drew one into s for
     * t, 0 to let the view draw. */
    int (*figure)(void *ctx, struct app_explorer *x, scene *s, const scene_target *t);
} app_layer;

typedef struct app_explorer {
    app_state st;
    app_view_ctx ctx[APP_MAX_VIEWS]; /* per-view caches */
    app_mode mode;
    char cmd[256]; /* the ':' line being typed */
    size_t cmd_len;
    char message[512]; /* shown in the status line until the next key */
    int message_error;
    int message_fresh;    /* set by a key that left a message and did not move the cursor; a hover
                             onto another cell clears it. While set the message wins over the
                             readout, so a ':' error is not hidden by where the pointer rests. */
    char view_error[512]; /* why the current view could not be drawn */
    int quit;
    int gui;             /* 1 in the window: mouse hover readout, sliders, fullscreen */
    int dirty;           /* the frame must be rebuilt */
    int refit;           /* the status line's readout outgrew the lines kept for it: again */
    int want_fullscreen; /* set by the key; the window backend toggles and clears it */
    int sidebar; /* window's slider panel: 0 automatic (hidden above 125% zoom, so the zoomed
                    figure keeps the width), 1 shown, 2 hidden (the | key) */
    /* presenting (a lesson, or the window's full screen `f`): the figure first, the option
     * lines of the status band and the slider panel hidden until `|` shows them (details) */
    int presenting, details, fullscreen;
    char saved_commands[8][1024]; /* `e` output, printed again after the terminal is restored */
    int n_saved;
    /* window: the figure as it is on screen, which `s` saves and `e` names (app_gui_frame sets
     * them; 0 in the terminal, which saves 1200x750): the view's size and text size in pixels */
    double fig_w, fig_h, fig_font_px;
    /* window: `e` shows its commands in an overlay until a key or a click (which do nothing
     * else); [0] the figure's (put on the clipboard), [1] its animation's or "" */
    int cmd_shown;
    char shown_cmd[2][1024];
    char clip_note[160]; /* what became of the clipboard copy, set by the window */
    int help_scroll;
    double hover_x, hover_y; /* last mouse position (window) */
    int dragging;            /* slider index + 1 while dragging in the window */
    /* frame geometry of the last build (figure units) */
    double view_h, status_y, width, height;
    double panel_x;         /* window: x where the slider panel starts (0 = none) */
    const app_layer *layer; /* NULL, or a lesson driving this explorer */
    int in_layer;           /* the layer is running: calls reach the explorer itself */
    /* Long work (issue 14): with a worker (app_explorer_threaded, explorer_work.c) views build
     * on it, and a frame whose build takes longer than a few frames shows the progress instead
     * while the front end goes on handling input; NULL: views build on the caller's thread. */
    struct app_work *work;
    unsigned long builds, built_at[APP_MAX_VIEWS]; /* when each view was last built (eviction) */
    int redo; /* the frame shown is for an older cursor: build the next one at once */
    unsigned long work_cancels; /* builds cancelled as stale (a test counts them) */
} app_explorer;

/* Start from st (already parsed and validated). */
void app_explorer_init(app_explorer *x, const app_state *st, int gui);
void app_explorer_free(app_explorer *x);

/* Views build on a worker thread from now on (the front ends; app_explorer_free stops it).
 * 0, or -1 when no thread could be set up (builds stay on the caller's thread). */
int app_explorer_threaded(app_explorer *x);
void app_explorer_unthread(app_explorer *x);
/* 1 while a view builds in the background; its progress 0..1. */
int app_explorer_working(const app_explorer *x);
double app_explorer_work_frac(const app_explorer *x);
/* While working: 1 when a frame is due (the build finished, or the progress shown is old). The
 * front end polls its input with a short timeout meanwhile. */
int app_explorer_work_poll(app_explorer *x);
/* The current view into s for vt (reset by it): 0 built, -1 with err, 1 still computing on the
 * worker (the frame shows progress). When the memory budget refuses it, older views' caches are
 * freed first (least recently built first), then it is tried again. */
int app_explorer_build_view(app_explorer *x, scene *s, const scene_target *vt, char *err,
                            size_t errlen);

/* A build on the caller's thread to learn whether the state can be shown at all (the ':' line
 * keeps the old state when not): the worker's build stops first, the budget frees older views'
 * caches as above, and work that runs past a few frames stops and counts as showable (the
 * worker takes it up). 0 or -1 with err. */
int app_explorer_trial_build(app_explorer *x, scene *s, const scene_target *t, char *err,
                             size_t errlen);

/* Apply one event. Returns 1 when the frame must be redrawn. */
int app_explorer_event(app_explorer *x, const ui_event *ev);
/* Advance animations by dt seconds (RoPE's m). Returns 1 when the frame changed. */
int app_explorer_tick(app_explorer *x, double dt);
/* 1 while an animation runs (the frontend then polls with a timeout). */
int app_explorer_animating(const app_explorer *x);

/* Build the whole frame for target t: the view in the top part, the status lines at the bottom,
 * the help overlay when open (terminal), the slider panel in the window. Never fails: a view
 * that cannot be drawn shows its message. */
void app_explorer_frame(app_explorer *x, scene *s, const scene_target *t);
/* The `?` help overlay over the part of t above the status lines, when it is open (the window
 * calls it after its slider panel, so the panel never clips it; the terminal's frame draws it),
 * or in the window the commands `e` showed (cmd_shown). */
void app_explorer_overlay(app_explorer *x, scene *s, const scene_target *t);
/* Whether the window shows its slider panel now (sidebar, zoom). */
int app_explorer_sidebar_shown(const app_explorer *x);

struct app_option;

/* The `?` help: one entry per key (or key pair), the current view's own keys first, then the keys
 * of the options it uses, then the keys of every view. Built from the tables; the overlay only
 * draws it. */
enum { APP_HELP_VIEW = 0, APP_HELP_OPTION = 1, APP_HELP_GLOBAL = 2 };
#define APP_HELP_MAX 96
typedef struct app_key_help {
    char keys[32];  /* "b / B", "arrows, hjkl" */
    char what[200]; /* what they do */
    int scope;      /* APP_HELP_* */
} app_key_help;
size_t app_explorer_help(const app_explorer *x, app_key_help *out, size_t max);

/* Set an option as the ':' line does (the window's sliders), with the message and the view's
 * settling. 0 or -1 (the message says why). */
int app_explorer_apply(app_explorer *x, const char *name, const char *value);
/* The same for a number (a slider): set as a number, never printed and parsed back. */
int app_explorer_apply_value(app_explorer *x, const struct app_option *o, double v);

/* The status line: "[n/N view]" and label=value for exactly the options the view uses. */
void app_explorer_status(const app_explorer *x, char *buf, size_t n);
/* 1 when option o is one of the current view's (what the status line, the sliders and the
 * option keys follow). */
int app_explorer_uses(const app_explorer *x, const struct app_option *o);
/* The current view's options in the order it lists them, without those that do not apply to
 * the state (app_option.applies): the status line, the sliders, the option keys' help. */
size_t app_explorer_options(const app_explorer *x, const struct app_option **out, size_t max);

#endif
