/* export.c: the one function every save of a figure or its numbers goes through (`pelab export`,
 * the explorer's and the window's `s`): the format from the table (format.h), the checks, the
 * build, the writer. */
#include "export.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datafile.h"
#include "format.h"
#include "options.h"
#include "infile.h"
#include "pelab_build.h"
#include "outfile.h"
#include "progress.h"
#include "raster.h"
#include "textclean.h"
#include "views.h"

/* The command line as the files' metadata carries it: a typed prompt can hold a newline (which
 * would end a CSV comment), ESC, or bytes that are not UTF-8 (which cairo's PDF metadata and XML
 * refuse), so it is cleaned like any text shown (render/textclean.h). */
static void clean_command(const char *in, char *out, size_t n)
{
    text_clean(out, n, in, strlen(in), 0);
}

static int export_data(const app_state *st, const char *path, app_format f, const char *label,
                       char *err, size_t errlen)
{
    const app_view *v = app_view_at((size_t)st->view);
    if (!v->data) {
        snprintf(err, errlen, "-o %s: the %s view has no numbers to write (use .png/.svg/.pdf)",
                 path, v->name);
        return 2;
    }
    app_view_ctx ctx = {0};
    app_data d = {0};
    d.lend_ok = 1;             /* both writers read a lent float32 table */
    app_progress_begin(label); /* the numbers first, the file after */
    int got = v->data(&ctx, st, &d, err, errlen);
    app_progress_end();
    if (got < 0) {
        app_view_ctx_free(&ctx);
        return 1;
    }
    outfile of = {0};
    int rc = 1;
    if (outfile_open(&of, path, err, errlen) == 0) {
        char command[3 * sizeof st->command];
        clean_command(st->command, command, sizeof command);
        int w = app_format_info_of(f)->data(of.fp, &d, command, st->csv_long);
        if (w < 0)
            outfile_fail(&of, "write failed", err, errlen);
        else if (outfile_commit(&of, err, errlen) == 0) {
            rc = 0;
        }
    }
    app_data_free(&d);
    app_view_ctx_free(&ctx);
    return rc;
}

/* ---- figures ----------------------------------------------------------------------------- */

int app_export_file(const app_state *st, const char *path, const app_export_opts *o, char *err,
                    size_t errlen)
{
    return app_export_file_as(st, path, NULL, o, err, errlen);
}

int app_export_file_as(const app_state *st, const char *path, const char *format,
                       const app_export_opts *o, char *err, size_t errlen)
{
    /* the place first: "-o ." is a folder, not a file with an unknown extension */
    if (outfile_check(path, err, errlen) < 0) return 2;
    int in_place = outfile_is_stdout(path) || outfile_is_special(path);
    app_format named = format ? app_format_named(format) : APP_FMT_UNKNOWN;
    app_format ext = in_place ? APP_FMT_UNKNOWN : app_format_of(path);
    char names[128], exts[128];
    app_format_list(APP_FORMAT_FILES, "", names, sizeof names);
    app_format_list(APP_FORMAT_FILES, ".", exts, sizeof exts);
    if (format && named == APP_FMT_UNKNOWN) {
        snprintf(err, errlen, "--format %s: allowed %s", format, names);
        return 2;
    }
    if (named && ext && named != ext) {
        snprintf(err, errlen, "-o %s: the extension says %s, --format says %s", path,
                 app_format_info_of(ext)->ext, app_format_info_of(named)->ext);
        return 2;
    }
    app_format f = named ? named : ext;
    if (f == APP_FMT_UNKNOWN) {
        if (in_place)
            snprintf(err, errlen, "-o %s: name the format with --format (%s)", path, names);
        else if (app_format_of_as(path, APP_FORMAT_ANIMATION) != APP_FMT_UNKNOWN)
            snprintf(err, errlen,
                     "-o %s: an animation needs --animate NAME=FROM:TO (allowed without it %s)",
                     path, exts);
        else
            snprintf(err, errlen, "-o %s: unknown extension (allowed %s)", path, exts);
        return 2;
    }
    const app_format_info *fi = app_format_info_of(f);
    if (outfile_is_stdout(path) && fi->binary && isatty(STDOUT_FILENO)) {
        snprintf(err, errlen,
                 "-o -: standard output is a terminal; %s is binary (redirect it: -o - > file)",
                 fi->ext);
        return 2;
    }
    char label[96];
    snprintf(label, sizeof label, "pelab export %s", app_view_at((size_t)st->view)->name);
    if (fi->kind == APP_FORMAT_DATA) return export_data(st, path, f, label, err, errlen);

    /* The canvas is reserved before anything is computed: a size past the budget is refused at
     * once (status 1, like every budget refusal: the budget, not the option, is what is short),
     * not after minutes of work. It is the largest part of a big PNG (16384 x 16384 is 1 GiB). */
    static const char size_hint[] = "a smaller --width, --height or --size needs less";
    char what[200];
    size_t canvas = raster_export_canvas_bytes(o->width, o->height, path, fi->ext);
    snprintf(what, sizeof what, "-o %s: the %.0f x %.0f PNG canvas", path, ceil(o->width),
             ceil(o->height));
    if (canvas && pe_mem_reserve_hint(canvas, what, size_hint, err, errlen) != PE_OK) return 1;
    double lw, lh, scale = app_export_layout(o, &lw, &lh);
    scene s;
    scene_init(&s, lw, lh, 0xffffff);
    double font = app_export_font_px(st, o);
    scene_target t = raster_target(lw, lh, font);
    app_view_ctx ctx = {0};
    ctx.full_res = 1;
    app_state fig = *st;
    fig.cursor_on = 0; /* the cursor is an explorer's aid, not part of a figure */
    fig.figure = 1;    /* and so are the hints naming options to try */
    int rc = 1;
    app_progress_begin(label);
    int built = app_view_build(&ctx, &fig, &s, &t, err, errlen);
    app_progress_end();
    if (built == 0) {
        char raw[2048], params[3 * sizeof raw], command[3 * sizeof st->command];
        app_export_command(st, NULL, raw, sizeof raw);
        clean_command(raw, params, sizeof params);
        clean_command(st->command, command, sizeof command);
        raster_meta meta[] = {
            {"Software", "pelab " PELAB_VERSION},
            {"Title", app_export_title(st)},
            {"Command", command[0] ? command : params},
            {"Parameters", params},
        };
        raster_export_opts ro = {o->dpi, meta,  sizeof meta / sizeof meta[0],
                                 1,      scale, st->svg_paths};
        /* each heatmap is drawn through an image of its own, on top of the canvas; and the
         * scene holds a copy of every heatmap's values (counted here, once it is made, so the
         * drawing that would add the image is refused before it starts) */
        size_t image = raster_export_image_bytes(&s, path, fi->ext, scale);
        for (size_t i = 0; i < s.n; i++)
            if (s.items[i].kind == SCENE_HEATMAP)
                image += s.items[i].u.heat.rows * s.items[i].u.heat.cols * sizeof(float);
        snprintf(what, sizeof what, "-o %s: the figure's heatmap values and image", path);
        if (image && pe_mem_reserve_hint(image, what, size_hint, err, errlen) != PE_OK) {
            image = 0;
        } else {
            int r = fi->figure(&s, path, fi->ext, &ro, err, errlen);
            rc = r == 0 ? 0 : r == 1 ? 2 : 1;
        }
        pe_mem_release(image);
    }
    app_view_ctx_free(&ctx);
    scene_free(&s);
    pe_mem_release(canvas);
    return rc;
}

void app_next_save_name(const app_state *st, const char *ext, char *buf, size_t n)
{
    struct stat sb;
    for (int i = 1; i < 100000; i++) {
        snprintf(buf, n, "pelab-%s-%d.%s", app_view_at((size_t)st->view)->name, i, ext);
        if (stat(buf, &sb) != 0) return;
    }
}
