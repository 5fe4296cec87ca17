/* lesson_handout.c: a lesson as a PDF handout, one A4 landscape page per slide: the slide's
 * title, its figure across the page's width (the scene `pelab export` draws at that size, at
 * scale 1, so the command under it reproduces it exactly), the caption with its live values
 * filled in, the hints, and the command. The text is laid out first and the figure takes every
 * line left: the handouts drew the export's 1000x600 at 0.82, 73% of the width, with its tick
 * labels at 82% of their size (issue 27). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "export.h"
#include "figure.h"
#include "lesson.h"
#include "outfile.h"
#include "raster.h"
#include "views.h"

/* A4 landscape in pixels at 96 per inch */
static const double page_w = 1123, page_h = 794, margin = 48;
static const double text_px = 13.5;
/* the figure's height: what the text leaves, within these bounds (a wide, flat strip reads
 * poorly; a slide with a long caption still gets a useful figure) */
static const double fig_min_h = 380, fig_max_aspect = 0.62;

typedef struct handout {
    const lesson *l;
    scene fig, text;
    app_view_ctx ctx;
} handout;

static int handout_page(void *ctx, size_t i, raster_place *pl, size_t *n, char *err, size_t errlen)
{
    handout *h = ctx;
    const lesson_slide *sl = &h->l->slides[i];
    const fig_theme *th = fig_theme_get(0);

    /* the text first: the page's head, then (below the figure) the caption, the hints and the
     * command at the foot */
    scene *s = &h->text;
    scene_reset(s, page_w, page_h, 0xffffff);
    scene_target t = raster_target(page_w, page_h, text_px);
    s->text_h = t.text_h;
    double lh = t.text_h, w = page_w - 2 * margin, y = margin * 0.6;
    scene_textf(s, margin, y, 0.85, SCENE_LEFT | SCENE_TOP, th->muted, 0, "%s  -  slide %zu of %d",
                h->l->title, i + 1, h->l->n);
    y += lh * 1.1;
    scene_text(s, margin, y, sl->title, 1.5, SCENE_LEFT | SCENE_TOP, th->fg, SCENE_BOLD);
    y += lh * 1.7;
    double fy = y;

    app_state fst = sl->st;
    fst.cursor_on = 0;
    static char lines[16][LESSON_LINE];
    /* the caption's values come from the figure's build; its line count does not depend on
     * them by more than a line, so the layout reserves one spare */
    char cap[4096];
    lesson_expand(sl, &fst, "", cap, sizeof cap);
    int nl = lesson_wrap(&t, cap, 1, w, lines, 16) + 1;
    char cmd[1400], file[32];
    snprintf(file, sizeof file, "slide-%02zu.pdf", i + 1);
    lesson_export_command(sl, file, cmd, sizeof cmd);
    int nc = lesson_wrap(&t, cmd, 0.85, w, lines, 3);
    double foot = margin * 0.5 + nc * lh * 0.95;
    double text_below = lh * 0.6 + nl * lh + lh * 0.3 + sl->n_try * lh + lh * 0.8;
    int fig_w = (int)w;
    int fig_h = (int)floor(fmin(w * fig_max_aspect, page_h - foot - text_below - fy));
    if (fig_h < fig_min_h) fig_h = (int)fig_min_h;

    /* the figure, exactly as app_export_file builds it at that size */
    scene_reset(&h->fig, fig_w, fig_h, 0xffffff);
    scene_target ft = raster_target(fig_w, fig_h, raster_font_px(fig_w, fig_h, 1));
    app_view_ctx_free(&h->ctx);
    memset(&h->ctx, 0, sizeof h->ctx);
    char verr[512];
    if (app_view_build(&h->ctx, &fst, &h->fig, &ft, verr, sizeof verr) < 0) {
        snprintf(err, errlen, "%s:%d: slide %zu '%s': %s", h->l->path, sl->line, i + 1, sl->title,
                 verr);
        return -1;
    }
    double fx = margin;
    y = fy + fig_h + lh * 0.6;

    lesson_expand(sl, &fst, h->ctx.readout, cap, sizeof cap);
    nl = lesson_wrap(&t, cap, 1, w, lines, 16);
    for (int k = 0; k < nl; k++, y += lh)
        scene_text(s, margin, y, lines[k], 1, SCENE_LEFT | SCENE_TOP, th->fg, 0);
    y += lh * 0.3;
    for (int k = 0; k < sl->n_try; k++, y += lh) {
        char hint[400];
        snprintf(hint, sizeof hint, "Try %s : %s", sl->tries[k].keys, sl->tries[k].what);
        scene_text(s, margin, y, hint, 0.9, SCENE_LEFT | SCENE_TOP, th->accent, 0);
    }
    /* the command makes this very figure: the export at the figure's size */
    size_t cu = strlen(cmd);
    if (cu > 3 && strstr(cmd, " -o ")) {
        char tail[96];
        snprintf(tail, sizeof tail, " --width %d --height %d -o %s", fig_w, fig_h, file);
        char *o = strstr(cmd, " -o ");
        snprintf(o, sizeof cmd - (size_t)(o - cmd), "%s", tail);
    }
    nc = lesson_wrap(&t, cmd, 0.85, w, lines, 3);
    double cy = page_h - margin * 0.5 - nc * lh * 0.95;
    for (int k = 0; k < nc; k++, cy += lh * 0.95)
        scene_text(s, margin, cy, lines[k], 0.85, SCENE_LEFT | SCENE_TOP, th->muted, 0);

    pl[0] = (raster_place){&h->text, 0, 0, 1};
    pl[1] = (raster_place){&h->fig, fx, fy, 1};
    *n = 2;
    return 0;
}

int lesson_handout(const lesson *l, const char *path, char *err, size_t errlen)
{
    if (app_format_of(path) != APP_FMT_PDF) {
        snprintf(err, errlen, "--handout %s: a handout is a .pdf file", path);
        return 2;
    }
    if (outfile_check(path, err, errlen) < 0) return 2;
    handout h;
    memset(&h, 0, sizeof h);
    h.l = l;
    scene_init(&h.fig, page_w, page_h, 0xffffff);
    scene_init(&h.text, page_w, page_h, 0xffffff);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "pelab lesson %s --handout %s", l->name[0] ? l->name : l->path, path);
    raster_meta meta[] = {
        {"Software", "pelab " PELAB_VERSION_STRING},
        {"Title", l->title},
        {"Command", cmd},
    };
    raster_export_opts ro = {96, meta, sizeof meta / sizeof meta[0], 1, 1, 0};
    int rc = raster_export_pdf_pages(path, page_w, page_h, (size_t)l->n, handout_page, &h, &ro, err,
                                     errlen);
    app_view_ctx_free(&h.ctx);
    scene_free(&h.fig);
    scene_free(&h.text);
    return rc == 0 ? 0 : rc == 1 ? 2 : 1;
}
