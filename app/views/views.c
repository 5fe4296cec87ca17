/* views.c: the view table, from the list in view_list.h (one X(name) line per view). */
#include <stdio.h>
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
    size_t n = strlen(name);
    for (const char *p = v->options; p && *p;) {
        p += strspn(p, " ");
        size_t w = strcspn(p, " ");
        if (w == n && strncmp(p, name, n) == 0) return 1;
        p += w;
    }
    return 0;
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
    return app_view_at((size_t)st->view)->build(c, st, s, t, err, errlen);
}
