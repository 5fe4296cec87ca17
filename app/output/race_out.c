/* race_out.c: the race's figure, numbers and animation to files (race_out.h), through the one
 * format table (format.h): what `pelab export race --from DIR` and the live race's S key and
 * --animate write. */
#include "race_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "anim.h"
#include "cli.h"
#include "format.h"
#include "outfile.h"
#include "pe.h"
#include "raster.h"

/* The numbers behind the curves: one row per step of each lane with its raw and smoothed
 * training loss, the held-out fields filled at the steps that were measured (step 0 has only
 * those). */
static int write_csv(FILE *f, const app_race_data *d, const app_race_ui *u, const char *command)
{
    fprintf(f, "# pelab export race: %s\n", command ? command : "");
    fprintf(f, "scheme,step,tokens,train_loss,train_loss_ema,heldout_ctx,heldout_2x,heldout_4x,"
               "sink_share\n");
    for (int i = 0; i < d->n; i++) {
        const app_race_lane *l = &d->lanes[i];
        double *ema = malloc(sizeof *ema * (size_t)(l->done > 0 ? l->done : 1));
        if (!ema) return -1;
        app_race_ema(l->loss, l->done, u->smooth, ema);
        int e = 0;
        for (int k = 0; k <= l->done; k++) {
            while (e < l->nevals && l->evals[e].step < k) e++;
            const app_race_eval *ev = e < l->nevals && l->evals[e].step == k ? &l->evals[e] : NULL;
            if (k == 0 && !ev) continue;
            fprintf(f, "%s,%d,%ld,", l->label, k, (long)k * l->tokens_per_step);
            if (k > 0)
                fprintf(f, "%.6f,%.6f,", l->loss[k - 1], ema[k - 1]);
            else
                fprintf(f, ",,");
            if (ev)
                fprintf(f, "%.6f,%.6f,%.6f,%.6f\n", ev->held[0], ev->held[1], ev->held[2],
                        ev->sink);
            else
                fprintf(f, ",,,\n");
        }
        free(ema);
    }
    return ferror(f) ? -1 : 0;
}

int app_race_export(const app_race_data *d, const app_race_ui *u, const char *path,
                    const app_export_opts *o, const char *command, char *err, size_t errlen)
{
    if (outfile_check(path, err, errlen) < 0) return 2;
    char exts[128];
    app_format_list(APP_FORMAT_FILES, ".", exts, sizeof exts);
    app_format f = app_format_of(path);
    if (f == APP_FMT_UNKNOWN || f == APP_FMT_NPY) {
        snprintf(err, errlen, "-o %s: the race is written as .png .svg .pdf (the figure) or .csv",
                 path);
        return 2;
    }
    const app_format_info *fi = app_format_info_of(f);
    if (f == APP_FMT_CSV) {
        outfile of;
        if (outfile_open(&of, path, err, errlen) < 0) return 2;
        if (write_csv(of.fp, d, u, command)) {
            outfile_fail(&of, "write failed", err, errlen);
            return 1;
        }
        return outfile_commit(&of, err, errlen) < 0 ? 1 : 0;
    }
    double lw, lh, scale = app_export_layout(o, &lw, &lh);
    scene s;
    scene_init(&s, lw, lh, 0xffffff);
    /* the text as a figure of that physical size has it (fileopts.h), without an app_state */
    double font = raster_font_px(lw, lh, 1);
    scene_target t = raster_target(lw, lh, font);
    app_race_ui fu = *u;
    fu.live = 0;
    app_race_build(&s, &t, d, &fu);
    raster_meta meta[] = {
        {"Software", "pelab " PELAB_VERSION_STRING},
        {"Title", "The position race"},
        {"Command", command ? command : ""},
    };
    raster_export_opts ro = {o->dpi, meta, sizeof meta / sizeof meta[0], 1, scale, 0};
    int r = fi->figure(&s, path, fi->ext, &ro, err, errlen);
    scene_free(&s);
    return r == 0 ? 0 : r == 1 ? 2 : 1;
}

/* d cut at fraction k of every lane's goal: the race as it stood then. */
static void cut(const app_race_data *d, double k, app_race_data *out)
{
    *out = *d;
    for (int i = 0; i < d->n; i++) {
        app_race_lane *l = &out->lanes[i];
        int at = (int)lround(k * l->steps);
        if (at < l->done) l->done = at;
        int ne = 0;
        while (ne < l->nevals && l->evals[ne].step <= l->done) ne++;
        l->nevals = ne;
    }
    out->finished = k >= 1;
    out->elapsed_s = d->elapsed_s * k;
    out->eta_s = d->elapsed_s * (1 - k);
}

int app_race_animate(const app_race_data *d, const app_race_ui *u, const char *path, int frames,
                     double fps, const app_export_opts *o, const char *command, char *err,
                     size_t errlen)
{
    app_format f = app_format_of_as(path, APP_FORMAT_ANIMATION);
    if (f == APP_FMT_UNKNOWN) {
        snprintf(err, errlen, "-o %s: an animation is written as .gif .webp or FOLDER/", path);
        return 2;
    }
    const app_format_info *fi = app_format_info_of(f);
    if (fi->check && fi->check(path, err, errlen) < 0) return 2;
    if (!fi->check && outfile_check(path, err, errlen) < 0) return 2;
    int w = o->width, h = o->height;
    size_t stride = (size_t)w * 4, fbytes = stride * (size_t)h;
    char what[160];
    snprintf(what, sizeof what, "-o %s: %d frames of %d x %d", path, frames, w, h);
    if (pe_mem_reserve_hint(fbytes * (size_t)frames, what, "fewer frames or a smaller size", err,
                            errlen) != PE_OK)
        return 1;
    unsigned char *block = malloc(fbytes * (size_t)frames);
    const uint32_t **px = calloc((size_t)frames, sizeof *px);
    int rc = 0;
    if (!block || !px) {
        snprintf(err, errlen, "%s: out of memory", what);
        rc = 1;
    }
    double lw, lh, scale = app_export_layout(o, &lw, &lh);
    scene_target t = raster_target(lw, lh, raster_font_px(lw, lh, 1));
    scene s;
    scene_init(&s, lw, lh, 0xffffff);
    app_race_ui fu = *u;
    fu.live = 0;
    for (int i = 0; i < frames && rc == 0; i++) {
        app_race_data c;
        cut(d, frames > 1 ? (double)(i + 1) / frames : 1, &c);
        app_race_build(&s, &t, &c, &fu);
        px[i] = (const uint32_t *)(block + fbytes * (size_t)i);
        if (raster_draw_argb_scaled(&s, (uint32_t *)(block + fbytes * (size_t)i), w, h, (int)stride,
                                    1, scale) != 0) {
            snprintf(err, errlen, "-o %s: drawing frame %d failed (cairo)", path, i + 1);
            rc = 1;
        }
    }
    scene_free(&s);
    if (rc == 0) {
        raster_meta meta[] = {
            {"Software", "pelab " PELAB_VERSION_STRING},
            {"Title", "The position race"},
            {"Command", command ? command : ""},
        };
        anim_frames af = {px, frames, w, h, (int)stride, fps, 0, 0, -1};
        rc = fi->animation(path, &af, o->dpi, meta, 3, err, errlen) == 0 ? 0 : 1;
    }
    free(block);
    free(px);
    pe_mem_release(fbytes * (size_t)frames);
    return rc;
}
