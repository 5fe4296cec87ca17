/* fileopts.c: a figure file's title and text size (fileopts.h). */
#include "fileopts.h"

#include "raster.h"
#include "views.h"

const char *app_export_title(const app_state *st)
{
    if (st->title_set && st->title[0]) return st->title;
    return app_view_at((size_t)st->view)->description;
}

double app_export_layout(const app_export_opts *o, double *w, double *h)
{
    double k = (o->dpi > 0 ? o->dpi : 96) / 96.0;
    *w = o->width / k;
    *h = o->height / k;
    return k;
}

double app_export_font_px(const app_state *st, const app_export_opts *o)
{
    if (st->font_pt > 0) return st->font_pt * 96.0 / 72.0;
    double w, h;
    app_export_layout(o, &w, &h);
    return raster_font_px(w, h, st->zoom > 0 ? st->zoom : 1);
}
