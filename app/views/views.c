/* views.c: the view table, from the list in view_list.h (one X(name) line per view). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raster.h"

#include "views.h"

#define APP_VIEW_ENTRY(n) &app_view_##n,
static const app_view *const views[] = {APP_VIEWS(APP_VIEW_ENTRY)};
#undef APP_VIEW_ENTRY

size_t app_view_count(void)
{
    return sizeof views / sizeof views[0];
}

const app_view *app_view_at(size_t i)
{
    return i < app_view_count() ? views[i] : views[0];
}

int app_view_find(const char *name)
{
    for (size_t i = 0; i < app_view_count(); i++)
        if (strcmp(views[i]->name, name) == 0) return (int)i;
    return -1;
}

const char *app_view_suggest(const char *name)
{
    const char *names[sizeof views / sizeof views[0]];
    for (size_t i = 0; i < app_view_count(); i++) names[i] = views[i]->name;
    return pe_closest(name, names, app_view_count());
}

int app_view_uses(const app_view *v, const char *name)
{
    return app_word_in(v->options, name);
}

int app_word_in(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        p += strspn(p, " ");
        size_t w = strcspn(p, " ");
        if (w == n && strncmp(p, name, n) == 0) return 1;
        p += w;
    }
    return 0;
}

static const app_view_value *value_of(const app_view *v, const char *name, size_t len, int has_args)
{
    for (const app_view_value *e = v->values; e && e->name; e++)
        if (strlen(e->name) == len && strncmp(e->name, name, len) == 0 &&
            (e->args != NULL) == has_args)
            return e;
    return NULL;
}

const app_view_value *app_view_value_find(const app_view *v, const char *placeholder,
                                          const char **args)
{
    /* {NAME} or {NAME ARGS}: a value that takes words matches only when some follow */
    size_t len = strcspn(placeholder, " ");
    int has_args = placeholder[len] == ' ';
    *args = placeholder + len + has_args;
    const app_view_value *e = v ? value_of(v, placeholder, len, has_args) : NULL;
    for (size_t i = 0; !e && i < app_view_count(); i++)
        e = value_of(views[i], placeholder, len, has_args);
    return e;
}

const app_view_action *app_view_action_find(const char *name)
{
    for (size_t i = 0; i < app_view_count(); i++)
        if (views[i]->action && strcmp(views[i]->action->name, name) == 0) return views[i]->action;
    return NULL;
}

/* What the projector zoom's text size was found for: the state and the target (views.h's
 * zoom_memo). */
typedef struct zoom_memo {
    app_state st;
    double w, h, text_h, char_w;
} zoom_memo;

/* The view's main panel has at least 12% of the canvas each way and three lines of text (what
 * the layout tests hold every view to). */
static int main_fits(const scene *s, const scene_target *t)
{
    return s->main_w >= fmax(0.12 * t->width, 3 * t->text_h) - 1e-9 &&
           s->main_h >= fmax(0.12 * t->height, 3 * t->text_h) - 1e-9;
}

int app_view_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *target,
                   char *err, size_t errlen)
{
    /* the author's font: the target measures in it and the scene is drawn in it (a copy of the
     * caller's target, so a worker thread and the window each keep their own) */
    scene_target ft = *target;
    raster_target_font(&ft, st->font);
    const scene_target *t = &ft;
    const fig_theme *th = fig_theme_get(st->dark);
    scene_reset(s, t->width, t->height, th->bg);
    s->text_h = t->text_h; /* text sizes are multiples of it; the backend needs the base */
    c->has_main = 0;
    c->readout[0] = '\0';
    /* whatever led here (a key, a lesson, a slider), a view draws only states it accepts */
    const app_view *v = app_view_at((size_t)st->view);
    if (v->validate && v->validate(st, err, errlen) < 0) return -1;
    c->notice[0] = '\0';
    /* the author's controls: the title block (fig_title reads them) */
    c->author.title = st->title_set ? st->title : NULL;
    c->author.subtitle = st->subtitle_set ? st->subtitle : NULL;
    s->author = &c->author;
    s->font = t->font;
    /* The projector zoom puts data before text: when the zoomed text made the view shorten a
     * label, squeeze its main panel below an eighth of the canvas or a data panel below what its
     * data asks for (scene_note_squeeze: a matrix's square cells, bars), the text steps down (by
     * 0.87 at a time, never below its unzoomed size) and the view is laid out again, so the
     * panels get their room back before any of them shrinks. The size it settled at is kept
     * with the inputs it was found for: a frame that changes nothing (a hover, an expose) builds
     * once at it instead of stepping down again (issue 27: xpos's unchanged window frame took
     * 15 ms at 175% against 2 ms at 100%). */
    int zoomed = !t->cells && st->zoom > 1;
    zoom_memo key;
    if (zoomed) {
        memset(&key, 0, sizeof key);
        memcpy(&key.st, st, sizeof *st);
        key.w = t->width;
        key.h = t->height;
        key.text_h = t->text_h;
        key.char_w = t->char_w;
    }
    double floor_k = zoomed ? 1 / st->zoom : 1, k = 1;
    if (zoomed && c->zoom_memo && memcmp(c->zoom_memo, &key, sizeof key) == 0) k = c->zoom_k;
    scene_target z = *t;
    z.text_h = t->text_h * k;
    z.char_w = t->char_w * k;
    s->text_h = z.text_h;
    c->text_k = k;
    int rc = v->build(c, st, s, &z, err, errlen);
    if (rc != 0 || !zoomed) return rc;
    int known = k < 1; /* the memo's size: built at it, nothing to search */
    while (!known && k > floor_k + 1e-9 && (s->n_cut || s->n_squeezed || !main_fits(s, t))) {
        k = fmax(k * 0.87, floor_k);
        z.text_h = t->text_h * k;
        z.char_w = t->char_w * k;
        scene_reset(s, t->width, t->height, th->bg);
        s->text_h = z.text_h;
        s->author = &c->author;
        s->font = t->font;
        c->has_main = 0;
        c->readout[0] = '\0';
        c->notice[0] = '\0';
        c->text_k = k;
        rc = v->build(c, st, s, &z, err, errlen);
        if (rc != 0) return rc;
    }
    if (!c->zoom_memo) c->zoom_memo = malloc(sizeof key);
    if (c->zoom_memo) {
        memcpy(c->zoom_memo, &key, sizeof key);
        c->zoom_k = k;
    }
    /* the scene's text back in the target's units (sizes times k): what the caller adds after
     * the view (the status band, a lesson's caption, overlays), laid out with the target, is
     * then drawn at the size it was laid out at, not at the view's stepped-down one */
    if (c->text_k < 1) {
        for (size_t i = 0; i < s->n; i++)
            if (s->items[i].kind == SCENE_TEXT) s->items[i].u.text.size *= c->text_k;
        s->text_h = t->text_h;
    }
    return rc;
}
