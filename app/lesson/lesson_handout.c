/* lesson_handout.c: a lesson as a PDF handout, one A4 landscape page per slide: the slide's
 * title, its figure (the same scene `pelab export` draws, at export size, so the command under
 * it reproduces it exactly), the caption with its live values filled in, the hints, and the
 * command. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "export.h"
#include "figure.h"
#include "lesson.h"
#include "outfile.h"
#include "raster.h"
#include "views.h"

/* A4 landscape in pixels at 96 per inch; the figure is the export default, scaled to fit. */
static const double page_w = 1123, page_h = 794, margin = 48;
static const int fig_w = 1000, fig_h = 600;
static const double fig_scale = 0.82;
static const double text_px = 13.5;

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

    /* the figure, exactly as app_export_file builds it */
    scene_reset(&h->fig, fig_w, fig_h, 0xffffff);
    scene_target ft = raster_target(fig_w, fig_h, raster_font_px(fig_w, fig_h, 1));
    app_state fst = sl->st;
    fst.cursor_on = 0;
    app_view_ctx_free(&h->ctx);
    memset(&h->ctx, 0, sizeof h->ctx);
    char verr[512];
    if (app_view_build(&h->ctx, &fst, &h->fig, &ft, verr, sizeof verr) < 0) {
        snprintf(err, errlen, "%s:%d: slide %zu '%s': %s", h->l->path, sl->line, i + 1, sl->title,
                 verr);
        return -1;
    }

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
    double fx = (page_w - fig_w * fig_scale) / 2, fy = y;
    y += fig_h * fig_scale + lh * 0.6;

    char cap[4096];
    lesson_expand(sl, &fst, h->ctx.readout, cap, sizeof cap);
    static char lines[16][LESSON_LINE];
    int nl = lesson_wrap(&t, cap, 1, w, lines, 16);
    for (int k = 0; k < nl; k++, y += lh)
        scene_text(s, margin, y, lines[k], 1, SCENE_LEFT | SCENE_TOP, th->fg, 0);
    y += lh * 0.3;
    for (int k = 0; k < sl->n_try; k++, y += lh) {
        char hint[400];
        snprintf(hint, sizeof hint, "Try %s : %s", sl->tries[k].keys, sl->tries[k].what);
        scene_text(s, margin, y, hint, 0.9, SCENE_LEFT | SCENE_TOP, th->accent, 0);
    }
    char cmd[1400], file[32];
    snprintf(file, sizeof file, "slide-%02zu.pdf", i + 1);
    lesson_export_command(sl, file, cmd, sizeof cmd);
    int nc = lesson_wrap(&t, cmd, 0.85, w, lines, 3);
    double cy = page_h - margin * 0.5 - nc * lh * 0.95;
    for (int k = 0; k < nc; k++, cy += lh * 0.95)
        scene_text(s, margin, cy, lines[k], 0.85, SCENE_LEFT | SCENE_TOP, th->muted, 0);

    pl[0] = (raster_place){&h->text, 0, 0, 1};
    pl[1] = (raster_place){&h->fig, fx, fy, fig_scale};
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
    scene_init(&h.fig, fig_w, fig_h, 0xffffff);
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
