/* animate.c: sweeps of one option, drawn frame by frame and written as an animation. */
#include "animate.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "anim.h"
#include "cli.h"
#include "format.h"
#include "outfile.h"
#include "progress.h"
#include "raster.h"
#include "views.h"

void app_anim_default(app_anim *a)
{
    memset(a, 0, sizeof *a);
    a->frames = APP_ANIM_DEFAULT_FRAMES;
    a->fps = 12;
    a->quality = -1;
}

/* Whole-number options whose value can also fall between integers, into a second field: the RoPE
 * view turns q by (m + pos_frac) theta_k, so a sweep of m turns smoothly. */
static const struct {
    const char *name;
    size_t frac_off;
} fractional[] = {{"pos", offsetof(app_state, pos_frac)}};

static int numeric(const app_option *o)
{
    return o->kind == APP_OPT_INT || o->kind == APP_OPT_DOUBLE;
}

static void numeric_names(char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < app_option_count(); i++) {
        const app_option *o = app_option_at(i);
        if (!numeric(o)) continue;
        int w = snprintf(buf + used, n - used, "%s%s", used ? ", " : "", o->name);
        if (w < 0 || (size_t)w >= n - used) break;
        used += (size_t)w;
    }
}

static int parse_number(const char *s, double *out)
{
    char *end;
    errno = 0;
    /* decimal only, as the options themselves read numbers (--dim 0x40 is refused): strtod
     * alone took 0x10 and inf (issue 28) */
    for (const char *c = s; *c; c++)
        if (!(isdigit((unsigned char)*c) || strchr("+-.eE", *c))) return -1;
    double v = strtod(s, &end);
    if (!*s || isspace((unsigned char)*s) || *end || errno == ERANGE || !isfinite(v)) return -1;
    *out = v;
    return 0;
}

int app_anim_parse(const char *spec, app_anim *a, char *err, size_t errlen)
{
    static const char form[] = "allowed NAME=FROM:TO[:FRAMES][:log], e.g. pos=0:63:64";
    char buf[256];
    if (strlen(spec) >= sizeof buf) {
        snprintf(err, errlen, "--animate: the value is longer than %zu bytes (%s)", sizeof buf - 1,
                 form);
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", spec);
    char *eq = strchr(buf, '=');
    if (!eq || eq == buf) {
        snprintf(err, errlen, "--animate '%s': name an option (%s)", spec, form);
        return -1;
    }
    *eq = '\0';
    const app_option *o = app_option_find(buf);
    if (!o) {
        const char *s = app_option_suggest(buf);
        snprintf(err, errlen, "--animate '%s': unknown option '%s'%s%s%s (%s)", spec, buf,
                 s ? "; did you mean '" : "", s ? s : "", s ? "'?" : "", form);
        return -1;
    }
    if (!numeric(o)) {
        char names[1024];
        numeric_names(names, sizeof names);
        snprintf(err, errlen, "--animate '%s': --%s is not a numeric option (allowed: %s)", spec,
                 o->name, names);
        return -1;
    }
    /* strtok would take "0:10:" and "0::10" as "0:10": every part must be there */
    size_t vl = strlen(eq + 1);
    if (vl == 0 || eq[1] == ':' || eq[vl] == ':' || strstr(eq + 1, "::")) {
        snprintf(err, errlen, "--animate '%s': an empty part between ':' (%s)", spec, form);
        return -1;
    }
    char *part[5] = {0};
    int np = 0;
    for (char *save = NULL, *tok = strtok_r(eq + 1, ":", &save); tok && np < 5;
         tok = strtok_r(NULL, ":", &save))
        part[np++] = tok;
    int log = np >= 3 && strcmp(part[np - 1], "log") == 0;
    if (log) np--;
    if (np < 2 || np > 3) {
        snprintf(err, errlen, "--animate '%s': %s", spec, form);
        return -1;
    }
    double from, to, frames = APP_ANIM_DEFAULT_FRAMES;
    if (parse_number(part[0], &from) < 0 || parse_number(part[1], &to) < 0) {
        snprintf(err, errlen, "--animate '%s': FROM and TO must be decimal numbers (%s)", spec,
                 form);
        return -1;
    }
    if (np == 3 && (parse_number(part[2], &frames) < 0 || frames != floor(frames) || frames < 2 ||
                    frames > APP_ANIM_MAX_FRAMES)) {
        snprintf(err, errlen, "--animate '%s': %s frames (allowed a whole number 2..%d)", spec,
                 part[2], APP_ANIM_MAX_FRAMES);
        return -1;
    }
    if (from == to) {
        snprintf(err, errlen,
                 "--animate '%s': FROM and TO are equal (allowed two different values)", spec);
        return -1;
    }
    if (log && !(from > 0 && to > 0)) {
        snprintf(err, errlen, "--animate '%s': a log sweep needs FROM and TO > 0", spec);
        return -1;
    }
    a->opt = o;
    a->from = from;
    a->to = to;
    a->frames = (int)frames;
    a->log = log;
    return 0;
}

double app_anim_value(const app_anim *a, int i)
{
    if (i <= 0) return a->from;
    if (i >= a->frames - 1) return a->to;
    double t = (double)i / (a->frames - 1);
    if (a->log) return exp(log(a->from) + t * (log(a->to) - log(a->from)));
    return a->from + t * (a->to - a->from);
}

static const size_t *frac_field(const app_option *o)
{
    for (size_t i = 0; i < sizeof fractional / sizeof fractional[0]; i++)
        if (strcmp(o->name, fractional[i].name) == 0) return &fractional[i].frac_off;
    return NULL;
}

int app_anim_apply(app_state *st, const app_anim *a, int i, char *err, size_t errlen)
{
    double v = app_anim_value(a, i);
    char num[64];
    const size_t *frac = a->opt->kind == APP_OPT_INT ? frac_field(a->opt) : NULL;
    if (a->opt->kind == APP_OPT_INT) {
        double whole = frac ? floor(v) : round(v);
        snprintf(num, sizeof num, "%.0f", whole);
        if (frac) *(double *)((char *)st + *frac) = v - whole;
    } else {
        snprintf(num, sizeof num, "%.17g", v);
    }
    char why[512];
    if (app_option_set(st, a->opt, num, why, sizeof why) < 0 ||
        app_state_validate(st, why, sizeof why) < 0) {
        snprintf(err, errlen, "--animate %s=%g:%g: at %g: %s", a->opt->name, a->from, a->to, v,
                 why);
        return -1;
    }
    return 0;
}

void app_anim_spec(const app_anim *a, char *buf, size_t n)
{
    snprintf(buf, n, "%s=%.10g:%.10g:%d%s", a->opt->name, a->from, a->to, a->frames,
             a->log ? ":log" : "");
}

/* The value shown in the subtitle of each frame: as many decimals as the step needs, the same
 * for every frame, so the text does not change width from frame to frame more than its digits. */
static void value_note(const app_anim *a, int i, char *buf, size_t n)
{
    double v = app_anim_value(a, i);
    int whole = a->opt->kind == APP_OPT_INT && !frac_field(a->opt);
    /* written as the subtitles write parameters (its label, "L=256"), whose own word for it
     * then leaves the subtitle (note_key) */
    const char *name = a->opt->label ? a->opt->label : a->opt->name;
    if (whole) {
        snprintf(buf, n, "%s=%.0f", name, round(v));
        return;
    }
    double step = fabs(app_anim_value(a, 1) - a->from);
    if (a->log) step = fmin(step, fabs(a->to - app_anim_value(a, a->frames - 2)));
    int dec = step > 0 ? (int)ceil(-log10(step)) : 0;
    if (dec < 0) dec = 0;
    if (dec > 6) dec = 6;
    if (a->log || fmax(fabs(a->from), fabs(a->to)) >= 1e6)
        snprintf(buf, n, "%s=%.4g", name, v);
    else
        snprintf(buf, n, "%s=%.*f", name, dec, v);
}

/* The figure of st, as its text dump (to tell whether the option changes it). */
static char *dump_at(app_view_ctx *ctx, const app_state *st, const scene_target *t, char *err,
                     size_t errlen)
{
    scene s;
    scene_init(&s, t->width, t->height, 0xffffff);
    char *d = NULL;
    if (app_view_build(ctx, st, &s, t, err, errlen) == 0) {
        d = scene_dump(&s);
        if (!d) snprintf(err, errlen, "out of memory");
    }
    scene_free(&s);
    return d;
}

static int check(const app_state *st, const app_anim *a, const char *path,
                 const app_format_info *fi, const app_export_opts *o, char *err, size_t errlen)
{
    if (!fi) {
        snprintf(err, errlen,
                 "-o %s: not an animation format (allowed with --animate: .gif, .webp, or a "
                 "folder for numbered PNGs, written FOLDER/)",
                 path);
        return 2;
    }
    if (fi->check(path, err, errlen) < 0) return 2;
    if (fi->max_side && (o->width > fi->max_side || o->height > fi->max_side)) {
        char up[16];
        snprintf(up, sizeof up, "%s", fi->ext);
        for (char *c = up; *c; c++) *c = (char)toupper((unsigned char)*c);
        snprintf(err, errlen, "--size %dx%d: a %s is at most %d pixels a side", o->width, o->height,
                 up, fi->max_side);
        return 2;
    }
    size_t bytes = (size_t)a->frames * (size_t)o->width * (size_t)o->height * 4;
    /* the smaller of the animation's own cap and the process's memory budget (--max-memory),
     * named as what it is: "over the budget of 1024 MiB" under --max-memory 64 misled */
    size_t cap = APP_ANIM_BUDGET, mem = pe_mem_budget();
    int by_mem = mem < cap;
    if (by_mem) cap = mem;
    if (bytes > cap) {
        size_t frame = (size_t)o->width * (size_t)o->height * 4;
        snprintf(err, errlen,
                 "--animate: %d frames of %d x %d pixels need %.0f MiB, over %s of %.0f MiB "
                 "(allowed at most %zu frames at this size; fewer frames or a smaller size%s)",
                 a->frames, o->width, o->height, (double)bytes / (1 << 20),
                 by_mem ? "the memory budget (--max-memory)" : "the animation budget",
                 (double)cap / (1 << 20), cap / frame, by_mem ? ", or a larger --max-memory" : "");
        return 2;
    }
    /* the option must be one the view declares it uses */
    const app_view *v = app_view_at((size_t)st->view);
    if (!app_view_uses(v, a->opt->name)) {
        char names[512] = "";
        size_t used = 0;
        for (size_t i = 0; i < app_option_count(); i++) {
            const app_option *oi = app_option_at(i);
            if (!numeric(oi) || !app_view_uses(v, oi->name)) continue;
            int w = snprintf(names + used, sizeof names - used, "%s%s", used ? ", " : "", oi->name);
            if (w < 0 || (size_t)w >= sizeof names - used) break;
            used += (size_t)w;
        }
        snprintf(err, errlen, "--animate %s=%g:%g: the %s view does not use --%s (allowed: %s)",
                 a->opt->name, a->from, a->to, v->name, a->opt->name,
                 used ? names : "none; this view has no numeric option");
        return 2;
    }
    /* both ends must be valid for the view (a sweep of pos past --len, a base <= 1 ...) */
    app_state lo = *st, hi = *st;
    if (app_anim_apply(&lo, a, 0, err, errlen) < 0) return 2;
    if (app_anim_apply(&hi, a, a->frames - 1, err, errlen) < 0) return 2;
    /* the option must change the figure: a small layout is enough to tell */
    scene_target t = raster_target(400, 300, 0);
    app_view_ctx ctx = {0};
    char *d0 = dump_at(&ctx, &lo, &t, err, errlen);
    char *d1 = d0 ? dump_at(&ctx, &hi, &t, err, errlen) : NULL;
    app_view_ctx_free(&ctx);
    int rc = 0;
    if (!d0 || !d1) {
        rc = 1;
    } else if (strcmp(d0, d1) == 0) {
        snprintf(err, errlen,
                 "--animate %s=%g:%g: the %s view does not change with --%s (allowed: an option "
                 "the view uses)",
                 a->opt->name, a->from, a->to, app_view_at((size_t)st->view)->name, a->opt->name);
        rc = 2;
    }
    free(d0);
    free(d1);
    return rc;
}

/* Build frame i of the sweep into s (already set up) for target t. */
static int build_frame(app_view_ctx *ctx, const app_state *st, const app_anim *a, int i, scene *s,
                       const scene_target *t, char *note, size_t nn, char *key, size_t nk,
                       char *err, size_t errlen)
{
    app_state fr = *st;
    fr.cursor_on = 0;
    fr.figure = 1;
    if (app_anim_apply(&fr, a, i, err, errlen) < 0) return -1;
    value_note(a, i, note, nn);
    ctx->author.note = note;
    /* the note's "label=" is how the view's subtitle names the value too: left out there */
    size_t kl = strcspn(note, "=");
    snprintf(key, nk, "%.*s=", (int)kl, note);
    ctx->author.note_key = note[kl] == '=' ? key : NULL;
    return app_view_build(ctx, &fr, s, t, err, errlen);
}

int app_anim_export(const app_state *st, const app_anim *a, const char *path,
                    const app_export_opts *o, char *err, size_t errlen)
{
    const app_format_info *fi = app_format_info_of(app_format_of_as(path, APP_FORMAT_ANIMATION));
    int rc = check(st, a, path, fi, o, err, errlen);
    if (rc != 0) return rc;

    int w = o->width, h = o->height, n = a->frames;
    size_t stride = (size_t)w * 4, fbytes = stride * (size_t)h;
    /* the frames are held together until the writer has them all: past APP_ANIM_BUDGET they
     * were refused above; they also count in the process's budget (--max-memory) */
    char what[96];
    snprintf(what, sizeof what, "--animate: the block of %d frames of %d x %d pixels", n, w, h);
    if (pe_mem_reserve_hint(fbytes * (size_t)n, what, "fewer frames or a smaller --size need less",
                            err, errlen) != PE_OK)
        return 1;
    unsigned char *block = malloc(fbytes * (size_t)n);
    const uint32_t **px = calloc((size_t)n, sizeof *px);
    scene_ranges *ranges = a->free_axes ? NULL : calloc(1, sizeof *ranges);
    if (!block || !px || (!a->free_axes && !ranges)) {
        snprintf(err, errlen, "--animate: out of memory for %d frames of %d x %d", n, w, h);
        free(block);
        free(px);
        free(ranges);
        pe_mem_release(fbytes * (size_t)n);
        return 1;
    }
    double lw, lh, scale = app_export_layout(o, &lw, &lh);
    double font = app_export_font_px(st, o);
    scene_target t = raster_target(lw, lh, font);
    scene s;
    scene_init(&s, lw, lh, 0xffffff);
    s.ranges = ranges;
    app_view_ctx ctx = {0};
    char note[96], key[96];
    rc = 0;
    /* Ctrl-C while the frames are drawn stops at the next frame and says so (it ended the
     * process without a word, issue 28); nothing is open yet */
    char label[160];
    snprintf(label, sizeof label, "--animate: %d frames", n);
    app_progress_begin(label);
    int passes = ranges ? 2 : 1;
    /* the first pass records the ranges every frame uses; the second draws with their unions */
    for (int i = 0; ranges && i < n && rc == 0; i++) {
        if (pe_work((double)i / (n * passes))) {
            rc = 1;
            pe_work_cancelled(err, errlen);
        } else if (build_frame(&ctx, st, a, i, &s, &t, note, sizeof note, key, sizeof key, err,
                               errlen) < 0)
            rc = 1;
    }
    if (ranges) ranges->apply = 1;
    for (int i = 0; i < n && rc == 0; i++) {
        if (pe_work((double)(i + (passes - 1) * n) / (n * passes))) {
            rc = 1;
            pe_work_cancelled(err, errlen);
            break;
        }
        px[i] = (const uint32_t *)(block + fbytes * (size_t)i);
        if (build_frame(&ctx, st, a, i, &s, &t, note, sizeof note, key, sizeof key, err, errlen) <
            0)
            rc = 1;
        else if (raster_draw_argb_scaled(&s, (uint32_t *)(block + fbytes * (size_t)i), w, h,
                                         (int)stride, 1, scale) != 0) {
            snprintf(err, errlen, "-o %s: drawing frame %d failed (cairo)", path, i + 1);
            rc = 1;
        }
    }
    app_view_ctx_free(&ctx);
    scene_free(&s);
    if (rc != 0) {
        free(block);
        pe_mem_release(fbytes * (size_t)n);
        free(px);
        free(ranges);
        app_progress_end(); /* after Ctrl-C: says so and ends with the signal (130) */
        return rc;
    }
    app_progress_end();
    if (rc == 0) {
        char params[2048], spec[300], anim[400];
        app_export_command(st, NULL, params, sizeof params);
        app_anim_spec(a, spec, sizeof spec);
        snprintf(anim, sizeof anim, "--animate %s, %g fps, loop %d", spec, a->fps, a->loop);
        raster_meta meta[] = {
            {"Software", "pelab " PELAB_VERSION_STRING},
            {"Title", app_export_title(st)},
            {"Command", st->command[0] ? st->command : params},
            {"Parameters", params},
            {"Animation", anim},
        };
        size_t nm = sizeof meta / sizeof meta[0];
        anim_frames af = {px, n, w, h, (int)stride, a->fps, a->loop, a->dither, a->quality};
        int wr = fi->animation(path, &af, o->dpi, meta, nm, err, errlen);
        rc = wr == 0 ? 0 : 1;
    }
    free(block);
    pe_mem_release(fbytes * (size_t)n);
    free(px);
    free(ranges);
    return rc;
}
