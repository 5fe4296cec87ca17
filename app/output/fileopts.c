/* fileopts.c: a figure file's title and text size (fileopts.h). */
#include "fileopts.h"

#include "raster.h"
#include "views.h"

const char *app_export_title(const app_state *st)
{
    if (st->title_set && st->title[0]) return st->title;
    return app_view_at((size_t)st->view)->description;
}

double app_export_font_px(const app_state *st, const app_export_opts *o)
{
    if (st->font_pt > 0) return st->font_pt * (o->dpi > 0 ? o->dpi : 96) / 72;
    return raster_font_px(o->width, o->height, st->zoom > 0 ? st->zoom : 1);
}
