/* explorer.c: keys, the ':' line, the status lines and the help content, for any view; no
 * terminal, no window. What a view adds (the options it uses, its own keys, its animation, the
 * wheel) comes from its table entry (views.h), and what an option does under a key, on the
 * status line and on a slider comes from its row (options.h), so nothing here names a view. */
#include "explorer.h"
#include "overlay.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "animate.h"
#include "export.h"
#include "figure.h"
#include "options.h"
#include "raster.h"

/* ---- helpers ----------------------------------------------------------------------------- */

static void say(app_explorer *x, int error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(app_explorer *x, int error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->message, sizeof x->message, fmt, ap);
    va_end(ap);
    x->message_error = error;
}

static const app_view *view_of(const app_explorer *x)
{
    return app_view_at((size_t)x->st.view);
}

int app_explorer_uses(const app_explorer *x, const app_option *o)
{
    return !o->everywhere && app_view_uses(view_of(x), o->name);
}

size_t app_explorer_options(const app_explorer *x, const app_option **out, size_t max)
{
    size_t n = 0;
    char name[64];
    for (const char *p = view_of(x)->options; p && *p && n < max;) {
        p += strspn(p, " ");
        size_t w = strcspn(p, " ");
        /* copied by hand: gcc -O2 with ASan misreads a %.*s of a pointer that moves */
        size_t cut = w < sizeof name ? w : sizeof name - 1;
        memcpy(name, p, cut);
        name[cut] = '\0';
        p += w;
        const app_option *o = w ? app_option_find(name) : NULL;
        if (o && !o->everywhere && (!o->applies || o->applies(&x->st))) out[n++] = o;
    }
    return n;
}

/* After anything changed: the view brings the state back inside what it can show. */
static void settle(app_explorer *x)
{
    const app_view *v = view_of(x);
    if (v->settle) v->settle(&x->ctx[x->st.view], &x->st);
}

int app_explorer_apply(app_explorer *x, const char *name, const char *value)
{
    int rc = app_option_apply(&x->st, name, value, x->message, sizeof x->message);
    x->message_error = rc < 0;
    if (rc == 0) settle(x);
    x->dirty = 1;
    return rc;
}

int app_explorer_apply_value(app_explorer *x, const struct app_option *o, double v)
{
    int rc = app_option_numeric(o)
                 ? app_option_apply_value(&x->st, o, v, 0, x->message, sizeof x->message)
                 : app_option_apply_num(&x->st, o->name, v, x->message, sizeof x->message);
    x->message_error = rc < 0;
    if (rc == 0) settle(x);
    x->dirty = 1;
    return rc;
}

/* ---- the global actions ------------------------------------------------------------------ */

typedef void (*action_fn)(app_explorer *x, int arg);

static void act_quit(app_explorer *x, int arg)
{
    (void)arg;
    x->quit = 1;
}

/* Digits go to one view, Tab and Shift-Tab to the next one the state allows; either way through
 * the option table, as `:view NAME` and the lessons do, so no key reaches a view the state is
 * too large for (a quadratic view at L 1048576 would compute for hours). */
static void act_view(app_explorer *x, int arg)
{
    int n = (int)app_view_count();
    char why[512] = "";
    for (int k = 1; k <= (arg >= 0 ? 1 : n - 1); k++) {
        int v = arg >= 0 ? arg : (x->st.view + (arg == -1 ? k : n * k - k)) % n;
        if (v >= n) return;
        if (app_explorer_apply(x, "view", app_view_at((size_t)v)->name) == 0) {
            x->st.cursor_on = 0;
            say(x, 0, "%s: %s%s", app_view_at((size_t)v)->name, app_view_at((size_t)v)->description,
                why);
            return;
        }
        if (arg >= 0) { /* a digit's view is refused: say which, then why */
            char msg[sizeof x->message];
            snprintf(msg, sizeof msg, "%s", x->message);
            say(x, 1, "%.40s not shown: %.400s", app_view_at((size_t)v)->name, msg);
            return;
        }
        if (!why[0]) /* Tab passes a view it cannot show, and says why */
            snprintf(why, sizeof why, "  (skipped %.40s: %.300s)", app_view_at((size_t)v)->name,
                     x->message);
    }
}

static void set_cursor(app_explorer *x, int r, int c)
{
    app_view_ctx *vc = &x->ctx[x->st.view];
    if (!vc->has_main) return;
    if (r < 0) r = 0;
    if (c < 0) c = 0;
    if (r >= vc->main_rows) r = vc->main_rows - 1;
    if (c >= vc->main_cols) c = vc->main_cols - 1;
    x->st.cur_r = r;
    x->st.cur_c = c;
    x->st.cursor_on = 1;
}

/* The data cursor. arg: direction 0 up, 1 down, 2 left, 3 right; +4 for a big step (a view
 * with keys of its own for the arrows gets the same args). */
static void act_move(app_explorer *x, int arg)
{
    int big = arg >= 4;
    int dir = arg & 3;
    app_view_ctx *vc = &x->ctx[x->st.view];
    if (!vc->has_main) {
        say(x, 0,
            app_explorer_working(x) ? "the cursor comes with the figure (computing it)"
                                    : "this view has no cursor");
        return;
    }
    int rs = big ? (vc->main_rows + 15) / 16 : 1;
    int cs = big ? (vc->main_cols + 15) / 16 : 1;
    if (!x->st.cursor_on) {
        set_cursor(x, vc->main_rows / 2, vc->main_cols / 2);
        return;
    }
    int r = x->st.cur_r, c = x->st.cur_c;
    if (dir == 0) r -= rs;
    if (dir == 1) r += rs;
    if (dir == 2) c -= cs;
    if (dir == 3) c += cs;
    set_cursor(x, r, c);
}

static void act_command(app_explorer *x, int arg)
{
    (void)arg;
    x->mode = APP_MODE_COMMAND;
    x->cmd_len = 0;
    x->cmd[0] = '\0';
    say(x, 0, "option value, e.g. base 500000 (Tab completes, Enter applies, Esc cancels)");
}

static void act_help(app_explorer *x, int arg)
{
    (void)arg;
    x->mode = x->mode == APP_MODE_HELP ? APP_MODE_NORMAL : APP_MODE_HELP;
    x->help_scroll = 0;
}

/* The figure `s` saves and the command `e` shows names, so both are one figure. In the window
 * it is the figure as it is on screen: the view's size in pixels and its text size (the window's
 * zoom included) as --font-size, so the file looks like the screen and the command makes that
 * very file. The terminal's cells say nothing of pixels: 1200x750 at the size's own text. */
static app_export_opts save_figure(const app_explorer *x, app_state *st)
{
    app_export_opts o = {1200, 750, 96};
    if (x->gui && x->fig_w > 0 && x->fig_h > 0) {
        o.width = (int)fmin(16384, fmax(64, lround(x->fig_w)));
        o.height = (int)fmin(16384, fmax(64, lround(x->fig_h)));
        /* points at 96 dpi to a hundredth: the number the command prints (%.10g) reads back
         * to this very double, so the command's file equals the saved one */
        st->font_pt = fmin(200, round(x->fig_font_px * 72.0 / 96.0 * 100) / 100);
    }
    return o;
}

/* The `pelab export` command of the figure st at o, saved to path. */
static void save_command(const app_state *st, const app_export_opts *o, const char *path, char *buf,
                         size_t n)
{
    app_export_command(st, NULL, buf, n);
    size_t u = strlen(buf);
    snprintf(buf + u, n - u, " --width %d --height %d -o %s", o->width, o->height, path);
}

static void act_save(app_explorer *x, int arg)
{
    (void)arg;
    char path[256], err[512];
    app_next_save_name(&x->st, "png", path, sizeof path);
    app_state st = x->st;
    app_export_opts o = save_figure(x, &st);
    save_command(&st, &o, path, st.command, sizeof st.command);
    if (app_export_file(&st, path, &o, err, sizeof err) != 0)
        say(x, 1, "save failed: %s", err);
    else
        say(x, 0, "saved %s (%dx%d) - the same figure as: %s", path, o.width, o.height, st.command);
}

/* The --animate value of this view's animation (its `record`, or a sweep of the first option
 * it uses that has a slider, over the slider's range brought inside what the view can show),
 * for the state *st: x's, with the view's record_setup applied first when the recorded option
 * does not act as x's state stands (a scaling factor with scaling none). 0, or -1 with a
 * message. */
static int record_spec(app_explorer *x, app_state *st, char *spec, size_t n, char *err,
                       size_t errlen)
{
    const app_view *v = view_of(x);
    const char *rec = v->record;
    *st = x->st;
    st->playing = 0;
    if (rec && strchr(rec, '=')) {
        snprintf(spec, n, "%s", rec);
        return 0;
    }
    const app_option *o = rec ? app_option_find(rec) : NULL;
    if (o && o->applies && !o->applies(st) && v->record_setup &&
        app_option_command(st, v->record_setup, err, errlen) < 0)
        return -1;
    for (const char *p = v->options; !o && p && *p;) {
        p += strspn(p, " ");
        size_t w = strcspn(p, " ");
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(w < 63 ? w : 63), p);
        const app_option *c = app_option_find(name);
        if (c && (c->kind == APP_OPT_INT || c->kind == APP_OPT_DOUBLE) &&
            c->slider.scale != APP_SLIDER_NONE)
            o = c;
        p += w;
    }
    if (!o || o->slider.scale == APP_SLIDER_NONE) {
        snprintf(err, errlen, "the %s view has no animation to record (no option with a range)",
                 v->name);
        return -1;
    }
    double lo = o->slider.lo, hi = o->slider.hi_fn ? o->slider.hi_fn(st) : o->slider.hi;
    /* the view brings a value past what it can show back inside (a step past the last token) */
    if (v->settle) {
        app_state trial = *st;
        char num[64], why[256];
        snprintf(num, sizeof num, "%.17g", hi);
        if (app_option_set(&trial, o, num, why, sizeof why) == 0) {
            v->settle(&x->ctx[x->st.view], &trial);
            app_option_get(&trial, o, num, sizeof num);
            hi = strtod(num, NULL);
        }
    }
    int frames = APP_ANIM_DEFAULT_FRAMES;
    if (o->kind == APP_OPT_INT && hi - lo + 1 < frames) frames = (int)(hi - lo + 1);
    /* stepping token by token: a frame per token (48 frames over 57 tokens would skip some) */
    if (o->kind == APP_OPT_INT && strcmp(o->name, "step") == 0 &&
        hi - lo + 1 <= APP_ANIM_MAX_FRAMES)
        frames = (int)(hi - lo + 1);
    if (frames < 2 || !(hi > lo)) {
        snprintf(err, errlen, "--%s: nothing to sweep (%g..%g)", o->name, lo, hi);
        return -1;
    }
    snprintf(spec, n, "%s=%.6g:%.6g:%d%s", o->name, lo, hi, frames,
             o->slider.scale == APP_SLIDER_LOG ? ":log" : "");
    return 0;
}

/* The size S records at, and the whole `pelab export --animate` command of the animation of st
 * (from record_spec) into path: what S runs and what e prints, one command. */
static const app_export_opts record_size = {800, 500, 96};
static void record_command(const app_state *st, const char *spec, const char *path, char *buf,
                           size_t n)
{
    app_export_command(st, NULL, buf, n > 400 ? n - 400 : n);
    size_t u = strlen(buf);
    snprintf(buf + u, n - u, " --width %d --height %d --animate %s -o %s", record_size.width,
             record_size.height, spec, path);
}

static void remember(app_explorer *x, const char *cmd)
{
    if (x->n_saved < 8)
        snprintf(x->saved_commands[x->n_saved++], sizeof x->saved_commands[0], "%s", cmd);
}

/* e: the whole commands of the figure s saves and of the animation S records (issue 27: the
 * animation was a fragment, "--animate pos=0:255:48", that no shell runs). */
static void act_print_command(app_explorer *x, int arg)
{
    (void)arg;
    char cmd[1024], path[256], spec[128], err[256], anim[1200];
    app_next_save_name(&x->st, "png", path, sizeof path);
    app_state st = x->st;
    app_export_opts o = save_figure(x, &st);
    save_command(&st, &o, path, cmd, sizeof cmd);
    remember(x, cmd);
    anim[0] = '\0';
    app_state rst;
    if (record_spec(x, &rst, spec, sizeof spec, err, sizeof err) == 0) {
        app_next_save_name(&x->st, "gif", path, sizeof path);
        record_command(&rst, spec, path, anim, sizeof anim);
        remember(x, anim);
        say(x, 0, "figure: %s   animation: %s   (both printed again on exit)", cmd, anim);
    } else {
        say(x, 0, "%s   (printed again on exit)", cmd);
    }
    if (x->gui) {
        /* the window's status line belongs to the hover readout: the commands get an overlay,
         * and the window puts the first on the clipboard (explorer_gui.c) */
        snprintf(x->shown_cmd[0], sizeof x->shown_cmd[0], "%s", cmd);
        snprintf(x->shown_cmd[1], sizeof x->shown_cmd[1], "%s", anim);
        x->clip_note[0] = '\0';
        x->cmd_shown = 1;
        say(x, 0, "the export command is shown (any key or click closes it)");
    }
}

/* S: this view's animation as a GIF, through the same writer as pelab export --animate. */
static void act_record(app_explorer *x, int arg)
{
    (void)arg;
    char spec[128], err[512], path[256];
    app_anim a;
    app_anim_default(&a);
    app_state st;
    if (record_spec(x, &st, spec, sizeof spec, err, sizeof err) < 0 ||
        app_anim_parse(spec, &a, err, sizeof err) < 0) {
        say(x, 1, "record: %s", err);
        return;
    }
    app_next_save_name(&x->st, "gif", path, sizeof path);
    app_export_opts o = record_size;
    record_command(&st, spec, path, st.command, sizeof st.command);
    if (app_anim_export(&st, &a, path, &o, err, sizeof err) != 0)
        say(x, 1, "record failed: %s", err);
    else
        say(x, 0, "recorded %s (%d frames at %g fps) - the same as: %s", path, a.frames, a.fps,
            st.command);
    remember(x, st.command);
}

static void act_zoom(app_explorer *x, int arg)
{
    double z = x->st.zoom * (arg > 0 ? 1.15 : 1 / 1.15);
    if (z < 0.5) z = 0.5;
    if (z > 4) z = 4;
    x->st.zoom = z;
    say(x, 0, "zoom %.0f%%", z * 100);
}

int app_explorer_sidebar_shown(const app_explorer *x)
{
    /* presenting: only when asked (|); a projector zoom gives the panel's width to the figure
     * first */
    if (x->presenting || x->fullscreen) return x->details;
    return x->sidebar == 1 || (x->sidebar == 0 && x->st.zoom <= 1.25);
}

static void act_sidebar(app_explorer *x, int arg)
{
    (void)arg;
    if (x->presenting || x->fullscreen) {
        x->details = !x->details;
        say(x, 0, "options%s %s (| toggles)", x->gui ? " and sliders" : "",
            x->details ? "shown" : "hidden");
        return;
    }
    x->sidebar = app_explorer_sidebar_shown(x) ? 2 : 1;
    say(x, 0, "slider panel %s (| toggles)", x->sidebar == 1 ? "shown" : "hidden");
}

static void act_fullscreen(app_explorer *x, int arg)
{
    (void)arg;
    x->want_fullscreen = 1;
    /* the window's full screen presents: the figure without the option lines and sliders */
    if (x->gui) x->fullscreen = !x->fullscreen;
}

static void act_reset(app_explorer *x, int arg)
{
    (void)arg;
    int view = x->st.view, dark = x->st.dark;
    app_state_default(&x->st);
    x->st.view = view;
    x->st.dark = dark;
    say(x, 0, "parameters reset to the defaults");
}

typedef struct key_binding {
    uint32_t key;
    action_fn fn;
    int arg;
    const char *label; /* NULL: an alias listed with the previous entry */
    const char *what;
} key_binding;

/* The keys of every view. A view's own keys (app_view.keys) and the keys of the options it uses
 * come first; these answer what neither takes. */
static const key_binding keys[] = {
    {'q', act_quit, 0, "q", "quit"},
    {'1', act_view, 0, "1..9", "switch to view 1..9 (Tab / Shift-Tab: next / previous)"},
    {'2', act_view, 1, NULL, NULL},
    {'3', act_view, 2, NULL, NULL},
    {'4', act_view, 3, NULL, NULL},
    {'5', act_view, 4, NULL, NULL},
    {'6', act_view, 5, NULL, NULL},
    {'7', act_view, 6, NULL, NULL},
    {'8', act_view, 7, NULL, NULL},
    {'9', act_view, 8, NULL, NULL},
    {UI_KEY_TAB, act_view, -1, NULL, NULL},
    {UI_KEY_BTAB, act_view, -2, NULL, NULL},
    APP_ARROW_KEYS(
        act_move, "arrows, hjkl",
        "move the cursor; the status line reads the value under it (HJKL, PgUp/PgDn: big steps)"),
    {':', act_command, 0, ":", "type an option: :base 500000, :d 128, :pe learned (Tab completes)"},
    {'s', act_save, 0, "s",
     "save this view as a PNG (same as pelab export; the window: as it is on screen)"},
    {'e', act_print_command, 0, "e",
     "show the pelab export command for this figure, and its --animate command"},
    {'S', act_record, 0, "S", "record this view's animation as a GIF (pelab export --animate)"},
    {'+', act_zoom, 1, "+ / -", "window: scale fonts and lines (projector)"},
    {'-', act_zoom, -1, NULL, NULL},
    {'f', act_fullscreen, 0, "f, F11", "window: fullscreen"},
    {'|', act_sidebar, 0, "|",
     "window: show / hide the slider panel (hidden by itself above 125% zoom); presenting (a "
     "lesson, full screen): show / hide the options and sliders"},
    {UI_KEY_F11, act_fullscreen, 0, NULL, NULL},
    {'0', act_reset, 0, "0", "reset every parameter to its default"},
    {'?', act_help, 0, "?", "this help (Esc closes)"},
};

/* ---- the help, from the tables ----------------------------------------------------------- */

/* "b / B" for the keys "bB" */
static void key_name(uint32_t k, char *buf, size_t n)
{
    static const struct {
        uint32_t key;
        const char *name;
    } named[] = {{' ', "space"},        {UI_KEY_TAB, "Tab"},   {UI_KEY_BTAB, "Shift-Tab"},
                 {UI_KEY_HOME, "Home"}, {UI_KEY_END, "End"},   {UI_KEY_PGUP, "PgUp"},
                 {UI_KEY_PGDN, "PgDn"}, {UI_KEY_F11, "F11"},   {UI_KEY_UP, "Up"},
                 {UI_KEY_DOWN, "Down"}, {UI_KEY_LEFT, "Left"}, {UI_KEY_RIGHT, "Right"}};
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (named[i].key == k) {
            snprintf(buf, n, "%s", named[i].name);
            return;
        }
    snprintf(buf, n, "%c", k < 127 && k >= 32 ? (char)k : '?');
}

static int view_has_key(const app_view *v, uint32_t key)
{
    for (const app_view_key *k = v->keys; k && k->fn; k++)
        if (k->key == key) return 1;
    return 0;
}

static void add_help(app_key_help *out, size_t max, size_t *n, int scope, const char *label,
                     const char *what)
{
    if (*n >= max) return;
    app_key_help *h = &out[(*n)++];
    h->scope = scope;
    snprintf(h->keys, sizeof h->keys, "%s", label);
    snprintf(h->what, sizeof h->what, "%s", what);
}

/* An option's keys as help: "b / B", "base x2 / /2 (frequency base, > 1 (10000))". */
static void option_help(const app_option *o, app_key_help *out, size_t max, size_t *n, int scope)
{
    char k[32], k2[16], what[sizeof out->what];
    key_name((unsigned char)o->keys[0], k, sizeof k);
    if (o->keys[1]) {
        key_name((unsigned char)o->keys[1], k2, sizeof k2);
        snprintf(k + strlen(k), sizeof k - strlen(k), " / %s", k2);
    }
    snprintf(what, sizeof what, "%s %s (%s)", o->name, app_option_step_help(o), o->help);
    add_help(out, max, n, scope, k, what);
}

size_t app_explorer_help(const app_explorer *x, app_key_help *out, size_t max)
{
    const app_view *v = view_of(x);
    size_t n = 0;
    for (const app_view_key *k = v->keys; k && k->fn; k++)
        if (k->label) add_help(out, max, &n, APP_HELP_VIEW, k->label, k->what);
    const app_option *opts[APP_MAX_OPTIONS];
    size_t no = app_explorer_options(x, opts, APP_MAX_OPTIONS);
    for (size_t i = 0; i < no; i++)
        if (opts[i]->keys && !view_has_key(v, (unsigned char)opts[i]->keys[0]))
            option_help(opts[i], out, max, &n, APP_HELP_OPTION);
    for (size_t i = 0; i < app_option_count(); i++) {
        const app_option *o = app_option_at(i);
        if (o->keys && o->everywhere) option_help(o, out, max, &n, APP_HELP_GLOBAL);
    }
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (keys[i].label && !view_has_key(v, keys[i].key))
            add_help(out, max, &n, APP_HELP_GLOBAL, keys[i].label, keys[i].what);
    return n;
}

/* ---- the ':' line ------------------------------------------------------------------------ */

/* Option names for completion: this view's first, then the rest of the table. */
static size_t option_names(const app_explorer *x, const char **out, size_t max)
{
    const app_option *opts[APP_MAX_OPTIONS];
    size_t no = app_explorer_options(x, opts, APP_MAX_OPTIONS), n = 0;
    for (size_t i = 0; i < no && n < max; i++) out[n++] = opts[i]->name;
    for (size_t i = 0; i < app_option_count() && n < max; i++)
        if (!app_explorer_uses(x, app_option_at(i))) out[n++] = app_option_at(i)->name;
    return n;
}

static void complete(app_explorer *x)
{
    char *sp = strchr(x->cmd, ' ');
    const char *cands[APP_MAX_OPTIONS];
    size_t n = 0;
    const char *word;
    if (!sp) {
        word = x->cmd;
        n = option_names(x, cands, APP_MAX_OPTIONS);
    } else {
        *sp = '\0';
        const app_option *o = app_option_find(x->cmd);
        *sp = ' ';
        if (!o) return;
        word = sp + 1;
        n = app_option_choices(o, cands, APP_MAX_OPTIONS);
        if (n == 0) {
            char cur[128];
            app_option_get(&x->st, o, cur, sizeof cur);
            say(x, 0, "%s = %s  (%s)", o->name, cur, o->help);
            return;
        }
    }
    size_t wl = strlen(word);
    const char *match[APP_MAX_OPTIONS];
    size_t nm = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(cands[i], word, wl) == 0) match[nm++] = cands[i];
    if (nm == 0) {
        say(x, 1, "no completion for '%s'", word);
        return;
    }
    /* extend to the longest common prefix; list the candidates when ambiguous */
    size_t common = strlen(match[0]);
    for (size_t i = 1; i < nm; i++) {
        size_t k = 0;
        while (k < common && match[i][k] == match[0][k]) k++;
        common = k;
    }
    size_t start = (size_t)(word - x->cmd);
    if (start + common < sizeof x->cmd - 2) {
        memcpy(x->cmd + start, match[0], common);
        x->cmd_len = start + common;
        if (nm == 1 && !sp) x->cmd[x->cmd_len++] = ' ';
        x->cmd[x->cmd_len] = '\0';
    }
    if (nm > 1) {
        size_t u = 0;
        x->message[0] = '\0';
        for (size_t i = 0; i < nm && u < sizeof x->message; i++)
            u += (size_t)snprintf(x->message + u, sizeof x->message - u, "%s ", match[i]);
        x->message_error = 0;
    }
}

/* Whether the current view builds with the state a ':' command just set: some values are only
 * found wrong when used (a checkpoint that does not load, a data file). Built off screen into a
 * scratch scene with the view's own cache, so the next frame reuses the work. */
static int command_builds(app_explorer *x, char *err, size_t errlen)
{
    scene s;
    scene_init(&s, 1000, 600, 0xffffff);
    scene_target t = raster_target(1000, 600, raster_font_px(1000, 600, 1));
    int rc = app_explorer_trial_build(x, &s, &t, err, errlen);
    scene_free(&s);
    return rc;
}

static int command_key(app_explorer *x, uint32_t key)
{
    if (key == UI_KEY_ESC) {
        x->mode = APP_MODE_NORMAL;
        say(x, 0, "cancelled");
    } else if (key == UI_KEY_ENTER || key == '\n' || key == '\r') {
        x->mode = APP_MODE_NORMAL;
        char err[512];
        if (x->cmd_len == 0) {
            x->message[0] = '\0';
        } else {
            app_state before = x->st;
            if (app_option_command(&x->st, x->cmd, err, sizeof err) < 0) {
                say(x, 1, "%s", err);
            } else if (command_builds(x, err, sizeof err) < 0) {
                /* set, but the view cannot show it (a model file that does not load): keep
                 * what worked and say why, rather than "applied" above an error screen */
                x->st = before;
                say(x, 1, ":%s not applied: %s", x->cmd, err);
            } else {
                say(x, 0, ":%s applied", x->cmd);
                x->st.cursor_on = 0;
                settle(x);
            }
        }
    } else if (key == UI_KEY_BACKSPACE || key == 127 || key == 8) {
        if (x->cmd_len > 0)
            x->cmd[--x->cmd_len] = '\0';
        else
            x->mode = APP_MODE_NORMAL;
    } else if (key == UI_KEY_TAB) {
        complete(x);
    } else if (key >= 32 && key < 127 && x->cmd_len + 1 < sizeof x->cmd) {
        x->cmd[x->cmd_len++] = (char)key;
        x->cmd[x->cmd_len] = '\0';
    }
    return 1;
}

/* ---- events ------------------------------------------------------------------------------ */

void app_explorer_init(app_explorer *x, const app_state *st, int gui)
{
    memset(x, 0, sizeof *x);
    x->st = *st;
    x->gui = gui;
    x->dirty = 1;
    say(x, 0, "? shows the keys, : takes an option, q quits");
}

void app_explorer_free(app_explorer *x)
{
    app_explorer_unthread(x);
    for (int i = 0; i < APP_MAX_VIEWS; i++) app_view_ctx_free(&x->ctx[i]);
}

int app_explorer_animating(const app_explorer *x)
{
    /* the layer's own animation (a sweep) counts for the front end; inside the layer, only the
     * view's, which app_explorer_tick then advances */
    if (x->layer && !x->in_layer && x->layer->animating(x->layer->ctx, x)) return 1;
    return x->st.playing && view_of(x)->tick != NULL;
}

int app_explorer_tick(app_explorer *x, double dt)
{
    if (x->layer && !x->in_layer) {
        x->in_layer = 1;
        int r = x->layer->tick(x->layer->ctx, x, dt);
        x->in_layer = 0;
        return r;
    }
    if (!app_explorer_animating(x)) return 0;
    return view_of(x)->tick(&x->ctx[x->st.view], &x->st, dt, x->gui);
}

static int mouse_event(app_explorer *x, const ui_event *ev)
{
    app_view_ctx *vc = &x->ctx[x->st.view];
    if (ev->mouse == UI_MOUSE_WHEEL_UP || ev->mouse == UI_MOUSE_WHEEL_DOWN) {
        const app_view *v = view_of(x);
        if (!v->wheel) return 0;
        return v->wheel(vc, &x->st, ev->y, ev->mouse == UI_MOUSE_WHEEL_UP ? 1 : -1, x->message,
                        sizeof x->message);
    }
    if (!vc->has_main) return 0;
    const fig_axes *a = &vc->main;
    int inside = ev->x >= a->area.x && ev->x <= a->area.x + a->area.w && ev->y >= a->area.y &&
                 ev->y <= a->area.y + a->area.h;
    if (!inside) return 0;
    if (ev->mouse == UI_MOUSE_MOVE && !x->gui) return 0;
    double dx = fig_x_inv(a, ev->x), dy = fig_y_inv(a, ev->y);
    int c = vc->main_rows == 1 ? (int)floor(dx + 0.5) : (int)floor(dx);
    int r = vc->main_rows == 1 ? 0 : (int)floor(dy);
    int was_on = x->st.cursor_on, pr = x->st.cur_r, pc = x->st.cur_c;
    set_cursor(x, r, c);
    if (!was_on || x->st.cur_r != pr || x->st.cur_c != pc) x->message_fresh = 0;
    return 1;
}

/* A key in normal mode: the view's own keys, then the keys of the options in force, then the
 * global ones. 1 when something took it. */
static int normal_key(app_explorer *x, uint32_t key)
{
    const app_view *v = view_of(x);
    for (const app_view_key *k = v->keys; k && k->fn; k++) {
        if (k->key != key) continue;
        x->message_error =
            k->fn(&x->ctx[x->st.view], &x->st, k->arg, x->message, sizeof x->message) < 0;
        return 1;
    }
    for (size_t i = 0; key < 128 && i < app_option_count(); i++) {
        const app_option *o = app_option_at(i);
        if (!o->keys || !(o->everywhere || app_explorer_uses(x, o))) continue;
        const char *at = strchr(o->keys, (int)key);
        if (!at || !key) continue;
        x->message_error =
            app_option_step(&x->st, o, at == o->keys ? 1 : -1, x->message, sizeof x->message) < 0;
        return 1;
    }
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        if (keys[i].key == key) {
            keys[i].fn(x, keys[i].arg);
            return 1;
        }
    }
    return 0;
}

static int handle_event(app_explorer *x, const ui_event *ev);

int app_explorer_event(app_explorer *x, const ui_event *ev)
{
    /* the commands `e` showed close on any key or click, which does nothing else (a lesson's
     * keys included: it would change the slide under the overlay) */
    if (x->cmd_shown &&
        (ev->type == UI_EV_KEY || (ev->type == UI_EV_MOUSE && ev->mouse == UI_MOUSE_PRESS))) {
        x->cmd_shown = 0;
        x->message[0] = '\0'; /* its "shown" message goes with it */
        return 1;
    }
    if (x->layer && !x->in_layer) return handle_event(x, ev);
    int on = x->st.cursor_on, r = x->st.cur_r, c = x->st.cur_c;
    int rc = handle_event(x, ev);
    if (ev->type == UI_EV_KEY) /* a key that moved the cursor asks for the readout */
        x->message_fresh =
            x->message[0] && on == x->st.cursor_on && r == x->st.cur_r && c == x->st.cur_c;
    return rc;
}

static int handle_event(app_explorer *x, const ui_event *ev)
{
    if (x->layer && !x->in_layer) {
        x->in_layer = 1;
        int r = x->layer->event(x->layer->ctx, x, ev);
        x->in_layer = 0;
        return r;
    }
    switch (ev->type) {
    case UI_EV_QUIT:
        x->quit = 1;
        return 0;
    case UI_EV_RESIZE:
        return 1;
    case UI_EV_TICK:
    case UI_EV_NONE:
        return 0;
    case UI_EV_MOUSE:
        if (x->mode == APP_MODE_HELP && ev->mouse == UI_MOUSE_PRESS) {
            x->mode = APP_MODE_NORMAL;
            return 1;
        }
        return mouse_event(x, ev);
    case UI_EV_KEY:
        break;
    }
    uint32_t key = ev->key;
    if ((ev->mods & UI_MOD_CTRL) && (key == 'c' || key == 'C' || key == 3)) {
        x->quit = 1;
        return 0;
    }
    if (key == 3) { /* Ctrl-C as a raw byte */
        x->quit = 1;
        return 0;
    }
    if (x->mode == APP_MODE_COMMAND) return command_key(x, key);
    if (x->mode == APP_MODE_HELP) {
        if (key == UI_KEY_DOWN || key == 'j')
            x->help_scroll++;
        else if (key == UI_KEY_UP || key == 'k')
            x->help_scroll -= x->help_scroll > 0;
        else if (key == UI_KEY_PGDN || key == ' ')
            x->help_scroll += 10; /* the overlay clamps it to the last page */
        else if (key == UI_KEY_PGUP)
            x->help_scroll = x->help_scroll > 10 ? x->help_scroll - 10 : 0;
        else if (key == 'q')
            x->quit = 1;
        else
            x->mode = APP_MODE_NORMAL;
        return 1;
    }
    if (key == UI_KEY_ESC) {
        x->st.cursor_on = 0;
        x->message[0] = '\0';
        return 1;
    }
    if (normal_key(x, key)) {
        settle(x);
        return 1;
    }
    if (key < 0x110000 && key >= 32)
        say(x, 1, "'%c' is not a key here; ? shows the keys", key < 127 ? (char)key : '?');
    else
        say(x, 1, "that key is not bound; ? shows the keys");
    return 1;
}

/* ---- the frame --------------------------------------------------------------------------- */

/* The status line: the view, then exactly the options it uses (those that apply), in the order it
 * lists them. */
void app_explorer_status(const app_explorer *x, char *buf, size_t n)
{
    const app_state *st = &x->st;
    size_t u =
        (size_t)snprintf(buf, n, "[%d/%zu %s]", st->view + 1, app_view_count(), view_of(x)->name);
    const app_option *opts[APP_MAX_OPTIONS];
    size_t no = app_explorer_options(x, opts, APP_MAX_OPTIONS);
    for (size_t i = 0; i < no && u < n; i++) {
        const app_option *o = opts[i];
        char v[128];
        app_option_show(st, o, v, sizeof v);
        u += (size_t)snprintf(buf + u, n - u, " %s=%s", o->label ? o->label : o->name, v);
    }
}

/* The `?` help over the frame (overlay.h lays it out for any size, paged by help_scroll). */
static void help_overlay(app_explorer *x, scene *s, const scene_target *t, const fig_theme *th,
                         double h)
{
    app_key_help help[APP_HELP_MAX];
    size_t n = app_explorer_help(x, help, APP_HELP_MAX);
    overlay_entry e[APP_HELP_MAX + 1];
    for (size_t i = 0; i < n; i++)
        e[i] = (overlay_entry){help[i].keys, help[i].what, help[i].scope != APP_HELP_GLOBAL};
    /* the mouse as an entry, so it pages with the keys instead of taking rows from them */
    e[n++] = (overlay_entry){"mouse",
                             "click a cell to read it; window: hover reads it, the wheel zooms "
                             "where a view allows",
                             0};
    char title[160];
    snprintf(title, sizeof title,
             "pelab keys in %s, this view's first (Esc or any other key closes)", view_of(x)->name);
    fig_rect r = {0, 0, t->width, h};
    overlay_list(s, t, th, r, title, e, n, NULL, &x->help_scroll);
}

/* The commands `e` showed, in a box as high as they need (wrapped at spaces, a word longer
 * than a line split, nothing cut), centred over the whole window. */
static void command_overlay(app_explorer *x, scene *s, const scene_target *t, const fig_theme *th)
{
    overlay_entry e[2] = {{"figure", x->shown_cmd[0], 1}, {"animation", x->shown_cmd[1], 0}};
    size_t n = x->shown_cmd[1][0] ? 2 : 1;
    const char *title = "pelab export: this figure as a file, as it is on screen";
    char footer[256];
    snprintf(footer, sizeof footer, "%s%sany key or click closes this", x->clip_note,
             x->clip_note[0] ? "; " : "");
    double h = overlay_list_height(t, t->width, title, e, n, footer);
    fig_rect r = {0, h < t->height ? (t->height - h) / 2 : 0, t->width, fmin(h, t->height)};
    int scroll = 0;
    overlay_list(s, t, th, r, title, e, n, footer, &scroll);
}

void app_explorer_overlay(app_explorer *x, scene *s, const scene_target *t)
{
    if (x->mode == APP_MODE_HELP)
        help_overlay(x, s, t, fig_theme_get(x->st.dark), t->height); /* the whole window */
    else if (x->cmd_shown)
        command_overlay(x, s, t, fig_theme_get(x->st.dark));
}

/* Break text at spaces into at most max_lines lines no wider than w; returns the count. The
 * pieces point into buf (which is modified). */
static int wrap_lines(const scene_target *t, char *buf, double w, double size, char **lines,
                      int max_lines)
{
    int n = 0;
    char *p = buf;
    while (*p && n < max_lines) {
        lines[n++] = p;
        char *last_space = NULL;
        char *q = p;
        for (;;) {
            /* a parenthesis stays with the word before it: "m=3 (auto)" is one value */
            char *sp = strchr(q, ' ');
            while (sp && sp[1] == '(') sp = strchr(sp + 1, ' ');
            char save = 0;
            if (sp) {
                save = *sp;
                *sp = '\0';
            }
            int fits = scene_text_width(t, p, size) <= w;
            if (sp) *sp = save;
            if (!fits) break;
            if (!sp) return n; /* the rest fits */
            last_space = sp;
            q = sp + 1;
        }
        if (!last_space) return n; /* one word longer than the line: let it clip */
        *last_space = '\0';
        p = last_space + 1;
    }
    return n;
}

/* In the terminal the message / readout wraps over up to this many lines: a message names file
 * names, commands and sizes, and a line cut at the edge cut them mid-word. */
enum { INFO_MAX_LINES = 3 };

/* How many lines wrap_lines makes of text at width w (1..max). */
static int count_lines(const scene_target *t, const char *text, double w, double size, int max)
{
    char buf[1024], *lines[8];
    snprintf(buf, sizeof buf, "%s", text);
    int n = wrap_lines(t, buf, w, size, lines, max < 8 ? max : 8);
    return n < 1 ? 1 : n;
}

/* line (the last of a wrapped text that goes on) ended with an ellipsis, cut back to whole
 * words so that it fits w: a word is shown whole or not at all. */
static void ellipsize(const scene_target *t, char *line, size_t cap, double w, double size)
{
    const char *dots = t->ascii ? "..." : "\u2026";
    size_t n = strlen(line);
    for (;;) {
        char tmp[1024];
        snprintf(tmp, sizeof tmp, "%.*s %s", (int)n, line, dots);
        if (scene_text_width(t, tmp, size) <= w || n == 0) break;
        while (n > 0 && line[n - 1] != ' ') n--; /* back to the word's start */
        while (n > 0 && line[n - 1] == ' ') n--;
    }
    snprintf(line + n, cap - n, "%s%s", n ? " " : "", dots);
}

/* The status band's last line: the message, or the view's readout while the cursor moves. */
static const char *info_text(const app_explorer *x, const app_view_ctx *vc)
{
    if (x->message[0] && vc->readout[0] && x->st.cursor_on && !x->message_fresh) return vc->readout;
    return x->message[0] ? x->message : vc->readout;
}

void app_explorer_frame(app_explorer *x, scene *s, const scene_target *t)
{
    if (x->layer && !x->in_layer) { /* the view and status above, the layer's panel below */
        x->in_layer = 1;
        double ph = x->layer->panel_h(x->layer->ctx, x, t);
        scene_target top = *t;
        top.height = t->height - ph;
        app_explorer_frame(x, s, &top);
        s->height = t->height;
        x->height = t->height;
        x->layer->panel(x->layer->ctx, x, s, t, top.height);
        x->in_layer = 0;
        return;
    }
    const fig_theme *th = fig_theme_get(x->st.dark);
    /* status at the bottom: the parameters (wrapped over up to three lines, so every one stays
     * visible), then the readout / message / ':' line. Under the window's projector zoom the
     * band gives up space before the figure does: while it would take more than a fifth of the
     * height its text steps down, never below its unzoomed size (the figure is what the room
     * reads; the parameters are for the presenter). */
    double ss = 1;
    double floor_ss = !t->cells && x->st.zoom > 1 ? 1 / x->st.zoom : 1;
    /* presenting: no option lines, and one line for the message or readout at the unzoomed
     * size (the caption and the figure are what the room reads) */
    int bare = (x->presenting || x->fullscreen) && !x->details;
    if (bare) ss = floor_ss;
    char params[768], pbuf[768];
    app_explorer_status(x, params, sizeof params);
    char *plines[3];
    int np;
    double line, px = t->cells ? 0 : t->char_w;
    app_view_ctx *vc = &x->ctx[x->st.view];
    /* the readout / message line takes two lines on pixels when it would not fit one (a hover
     * readout under the projector zoom ran under the window's slider panel); the view's last
     * readout decides before the view is built again */
    int ni = 1;
    for (;;) {
        memcpy(pbuf, params, sizeof pbuf);
        line = t->cells ? 2 : t->text_h * 1.25 * ss;
        np = bare ? 0 : wrap_lines(t, pbuf, t->width - 2 * px, ss, plines, 3);
        if (np < 1 && !bare) np = 1;
        if (bare)
            ni = 1;
        else if (t->cells)
            ni = x->mode == APP_MODE_COMMAND
                     ? 1
                     : count_lines(t, info_text(x, vc), t->width - 2 * px, ss, INFO_MAX_LINES);
        else
            ni = scene_text_width(t, info_text(x, vc), ss) > t->width - 2 * px ? 2 : 1;
        double band = (np + ni) * line + (t->cells ? 0 : line * 0.3);
        if (band <= t->height * 0.2 || ss * 0.9 < floor_ss - 1e-9) break;
        ss *= 0.9;
    }
    double status_h = (np + ni) * line + (t->cells ? 0 : line * 0.3);
    scene_target vt = *t;
    vt.height = t->height - status_h;
    x->width = t->width;
    x->height = t->height;
    x->view_h = vt.height;
    x->status_y = vt.height;
    int too_small = vt.height < (t->cells ? 16 : 120) || vt.width < (t->cells ? 40 : 240);
    char err[512] = "";
    int rc = 0;
    scene_reset(s, t->width, t->height, th->bg);
    s->font = t->font; /* the status line and overlays in the target's font */
    if (too_small) {
        vc->has_main = 0;
        /* short first: a tiny terminal clips a centred line from both ends */
        snprintf(x->view_error, sizeof x->view_error, "too small (%.0fx%.0f)", t->width,
                 t->cells ? t->height / 2 : t->height);
    } else if (x->layer && x->layer->figure && x->layer->figure(x->layer->ctx, x, s, &vt)) {
        vc->has_main = 0; /* the layer's figure: no cursor, no readout of the view's */
        vc->readout[0] = '\0';
        x->view_error[0] = '\0';
        s->font = t->font;
    } else if ((rc = app_explorer_build_view(x, s, &vt, err, sizeof err)) != 0) {
        scene_reset(s, t->width, t->height, th->bg);
        /* while the worker computes, the keys see the last frame's plot (its shadow) */
        if (rc < 0) vc->has_main = 0;
        if (rc > 0) { /* the worker goes on; the input is handled meanwhile */
            char cells[33];
            int k = (int)(app_explorer_work_frac(x) * 32 + 0.5);
            memset(cells, '#', (size_t)k);
            memset(cells + k, '.', (size_t)(32 - k));
            cells[32] = '\0';
            snprintf(x->view_error, sizeof x->view_error, "computing %s [%s] %3.0f%%",
                     view_of(x)->name, cells, app_explorer_work_frac(x) * 100);
        } else {
            snprintf(x->view_error, sizeof x->view_error, "%s", err);
        }
    } else {
        x->view_error[0] = '\0';
    }
    s->width = t->width;
    s->height = t->height;
    if (x->view_error[0]) {
        /* centred, wrapped: cut at both edges it lost the sizes at the start and the advice */
        char vbuf[sizeof x->view_error], *vl[6];
        snprintf(vbuf, sizeof vbuf, "%s", x->view_error);
        double vw = t->width - 2 * (t->cells ? 1 : px);
        int nv = wrap_lines(t, vbuf, vw, 1, vl, 6);
        if (nv < 1) vl[nv++] = vbuf;
        double vy = vt.height / 2 - floor((nv - 1) / 2.0) * line;
        for (int i = 0; i < nv; i++)
            scene_text(s, t->width / 2, vy + i * line, vl[i], 1, SCENE_CENTER | SCENE_MIDDLE,
                       th->accent, SCENE_BOLD);
        scene_text(s, t->width / 2, vy + nv * line,
                   too_small ? "make it larger"
                   : rc > 0  ? "keys work meanwhile; a parameter change starts it over; q quits"
                             : "change a parameter, or ? for keys",
                   1, SCENE_CENTER | SCENE_MIDDLE, th->muted, 0);
    }
    /* the window draws the help after its slider panel, over the whole window */
    if (x->mode == APP_MODE_HELP && !x->gui) help_overlay(x, s, t, th, vt.height);

    double y1 = t->height - (np + ni) * line, y2 = t->height - ni * line;
    scene_rect(s, 0, y1 - (t->cells ? 0 : line * 0.15), t->width, (np + ni) * line + line * 0.15,
               th->grid, SCENE_FILL);
    for (int i = 0; i < np; i++)
        scene_text(s, px, y1 + i * line, plines[i], ss, SCENE_LEFT | SCENE_TOP, th->fg, 0);
    if (x->mode == APP_MODE_COMMAND) {
        char buf[300];
        snprintf(buf, sizeof buf, ":%s_", x->cmd);
        scene_text(s, px, y2, buf, ss, SCENE_LEFT | SCENE_TOP, th->fg, SCENE_BOLD);
        if (x->message[0])
            scene_text(s, t->width - px, y2, x->message, ss, SCENE_RIGHT | SCENE_TOP,
                       x->message_error ? th->accent : th->muted, 0);
    } else {
        const char *info = info_text(x, vc);
        int err_line = x->message_error && info == x->message;
        /* on the lines kept for it; what still does not fit steps its size down (the readout
         * of the new build can be longer than the last one's) */
        char ibuf[sizeof x->message > sizeof vc->readout ? sizeof x->message : sizeof vc->readout];
        snprintf(ibuf, sizeof ibuf, "%s", info);
        size_t ilen = strlen(ibuf);
        char *ilines[INFO_MAX_LINES] = {ibuf}, last[sizeof ibuf + 8];
        int nl = wrap_lines(t, ibuf, t->width - 2 * px, ss, ilines, ni);
        if (nl < 1) nl = 1;
        char *end = ilines[nl - 1] + strlen(ilines[nl - 1]);
        if (end < ibuf + ilen) {
            if (t->cells || bare) {
                /* more than the lines kept (or a longer text than the frame counted): the
                 * last line ends in whole words and an ellipsis, and the next frame keeps the
                 * lines the text needs */
                snprintf(last, sizeof last, "%s", ilines[nl - 1]);
                ellipsize(t, last, sizeof last, t->width - 2 * px, ss);
                ilines[nl - 1] = last;
                if (ni < INFO_MAX_LINES && !bare) x->refit = 1;
            } else { /* pixels: the last line takes the rest (its size steps down below) */
                *end = ' ';
                /* and the next frame keeps two lines for it */
                if (ni < 2 && !bare) x->refit = 1;
            }
        }
        for (int i = 0; i < nl; i++) {
            double w = scene_text_width(t, ilines[i], ss), isz = ss;
            if (!t->cells && w > t->width - 2 * px)
                isz = fmax(0.6 * ss, ss * (t->width - 2 * px) / w);
            scene_text(s, px, y2 + i * line, ilines[i], isz, SCENE_LEFT | SCENE_TOP,
                       err_line ? th->accent : th->fg, err_line ? SCENE_BOLD : 0);
        }
    }
    x->dirty = x->redo; /* a frame for an older cursor: the next one follows */
    x->redo = 0;
    if (x->refit) x->dirty = 1; /* the readout wants its second line */
    x->refit = 0;
}
