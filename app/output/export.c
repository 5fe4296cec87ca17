/* export.c: `pelab export` and the one function every save goes through. */
#include "export.h"

#include <ctype.h>
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "animate.h"
#include "cli.h"
#include "commands.h"
#include "options.h"
#include "infile.h"
#include "outfile.h"
#include "progress.h"
#include "raster.h"
#include "textclean.h"
#include "views.h"

static const struct {
    const char *ext;
    app_format f;
    int binary; /* not for a terminal */
} formats[] = {{"png", APP_FMT_PNG, 1},
               {"svg", APP_FMT_SVG, 0},
               {"pdf", APP_FMT_PDF, 1},
               {"csv", APP_FMT_CSV, 0},
               {"npy", APP_FMT_NPY, 1}};
enum { N_FORMATS = sizeof formats / sizeof formats[0] };

app_format app_format_named(const char *ext)
{
    if (*ext == '.') ext++;
    for (size_t i = 0; i < N_FORMATS; i++)
        if (strcasecmp(ext, formats[i].ext) == 0) return formats[i].f;
    return APP_FMT_UNKNOWN;
}

app_format app_format_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');
    return dot ? app_format_named(dot) : APP_FMT_UNKNOWN;
}

static const char *format_ext(app_format f)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        if (formats[i].f == f) return formats[i].ext;
    return "";
}

static int format_binary(app_format f)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        if (formats[i].f == f) return formats[i].binary;
    return 1;
}

/* ---- the numbers: CSV and NPY ------------------------------------------------------------ */

/* 10^k for |k| <= 22, exact in double. */
static double pow10_exact(int k)
{
    static const double p[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                               1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                               1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    return p[k];
}

/* |v| x 10^k in at most two roundings. */
static double scale10(double v, int k)
{
    while (k > 22) {
        v *= 1e22;
        k -= 22;
    }
    while (k < -22) {
        v /= 1e22;
        k += 22;
    }
    return k >= 0 ? v * pow10_exact(k) : v / pow10_exact(-k);
}

int app_format_float(char *buf, float f)
{
    double v = f;
    if (!isfinite(v) || v == 0) return snprintf(buf, 32, "%.9g", v);
    char *o = buf;
    if (v < 0) *o++ = '-';
    double a = fabs(v);
    /* the 9 significant digits as an integer: a x 10^(8 - e) rounded, e the decimal exponent */
    int e = (int)floor(log10(a));
    double s = scale10(a, 8 - e);
    if (s >= 999999999.5) s = scale10(a, 8 - ++e);
    if (s < 99999999.5) s = scale10(a, 8 - --e);
    double fl = floor(s), frac = s - fl;
    /* the scaled value carries an error near 1e-16 relative, about 1e-7 of the last digit: when
     * it falls that close to a half, printf's exact rounding decides */
    if (fabs(frac - 0.5) < 1e-6 || s >= 999999999.5 || s < 99999999.5)
        return snprintf(buf, 32, "%.9g", v);
    unsigned long d = (unsigned long)fl + (frac > 0.5);
    if (d >= 1000000000UL) { /* 9.999999996 rounds to 10.0000000 */
        d /= 10;
        e++;
    }
    char dig[10];
    for (int i = 8; i >= 0; i--, d /= 10) dig[i] = (char)('0' + d % 10);
    int nd = 9;
    while (nd > 1 && dig[nd - 1] == '0') nd--; /* %g drops trailing zeros */
    if (e < -4 || e >= 9) {
        *o++ = dig[0];
        if (nd > 1) {
            *o++ = '.';
            for (int i = 1; i < nd; i++) *o++ = dig[i];
        }
        *o++ = 'e';
        *o++ = e < 0 ? '-' : '+';
        int ae = e < 0 ? -e : e;
        if (ae >= 100) *o++ = (char)('0' + ae / 100);
        *o++ = (char)('0' + ae / 10 % 10);
        *o++ = (char)('0' + ae % 10);
    } else if (e >= 0) {
        for (int i = 0; i <= e; i++) *o++ = dig[i];
        if (nd > e + 1) {
            *o++ = '.';
            for (int i = e + 1; i < nd; i++) *o++ = dig[i];
        }
    } else {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -e - 1; i++) *o++ = '0';
        for (int i = 0; i < nd; i++) *o++ = dig[i];
    }
    *o = '\0';
    return (int)(o - buf);
}

/* Value i of d as a double (d's own or its lent float32 table). */
static double data_at(const app_data *d, size_t i)
{
    return d->f32 ? (double)d->f32[i] : d->data[i];
}

/* CSV that numpy.loadtxt(path, delimiter=',') reads: '#' comment lines say what the numbers are;
 * a 3-d array is written as blocks of rows, one block per leading index. Float32 values are
 * written as printf("%.9g") would (the digits that read back to the same float), formatted by
 * app_format_float into a buffer written in large pieces. */
static int write_csv(FILE *fp, const app_data *d, const char *command)
{
    fprintf(fp, "# pelab %s\n# %s\n", PELAB_VERSION_STRING, command);
    fprintf(fp, "# %s\n# shape", d->what);
    for (int i = 0; i < d->ndim; i++) fprintf(fp, "%s%zu", i ? " x " : " ", d->shape[i]);
    fprintf(fp, ", %s\n", d->f64 ? "float64" : "float32");
    size_t blocks = d->ndim == 3 ? d->shape[0] : 1;
    size_t rows = d->ndim == 1 ? d->shape[0] : d->shape[d->ndim - 2];
    size_t cols = d->ndim == 1 ? 1 : d->shape[d->ndim - 1];
    enum { CAP = 1 << 16 };
    char *buf = malloc(CAP);
    if (!buf) return -1;
    size_t len = 0, i = 0;
    for (size_t b = 0; b < blocks; b++) {
        if (blocks > 1) len += (size_t)snprintf(buf + len, 32, "# [%zu]\n", b);
        for (size_t r = 0; r < rows; r++)
            for (size_t c = 0; c < cols; c++, i++) {
                if (len > CAP - 64) {
                    fwrite(buf, 1, len, fp);
                    len = 0;
                }
                double v = data_at(d, i);
                v = v == 0 ? 0 : v; /* -0 is written as 0 */
                if (d->f64)
                    len += (size_t)(isnan(v)   ? snprintf(buf + len, 32, "nan")
                                    : isinf(v) ? snprintf(buf + len, 32, v < 0 ? "-inf" : "inf")
                                               : snprintf(buf + len, 32, "%.17g", v));
                else if (isnan(v))
                    len += (size_t)snprintf(buf + len, 32, "nan");
                else if (isinf(v))
                    len += (size_t)snprintf(buf + len, 32, v < 0 ? "-inf" : "inf");
                else
                    len += (size_t)app_format_float(buf + len, (float)v);
                buf[len++] = c + 1 < cols ? ',' : '\n';
            }
    }
    fwrite(buf, 1, len, fp);
    free(buf);
    return ferror(fp) ? -1 : 0;
}

/* The names of the index columns of the long layout: the words in the parentheses that open
 * d->what ("(len, dim): ..." -> len, dim) when they are names, i0 i1 i2 otherwise; a name that
 * repeats gets _2 ("(len, len)" -> len, len_2). */
static void index_names(const app_data *d, char names[3][40])
{
    char buf[sizeof d->what];
    snprintf(buf, sizeof buf, "%s", d->what);
    char *tok[3] = {0};
    if (buf[0] == '(') {
        char *end = strchr(buf, ')');
        if (end) *end = '\0';
        char *save = NULL;
        int k = 0;
        for (char *t = strtok_r(buf + 1, ", ", &save); t && k < 3; t = strtok_r(NULL, ", ", &save))
            tok[k++] = t;
    }
    for (int i = 0; i < d->ndim; i++) {
        int ok = tok[i] && (isalpha((unsigned char)tok[i][0]) || tok[i][0] == '_') &&
                 strlen(tok[i]) < 24;
        for (const char *c = ok ? tok[i] : ""; *c; c++)
            if (!isalnum((unsigned char)*c) && *c != '_') ok = 0;
        if (ok)
            snprintf(names[i], sizeof names[i], "%s", tok[i]);
        else
            snprintf(names[i], sizeof names[i], "i%d", i);
        int seen = 1;
        for (int j = 0; j < i; j++) seen += strncmp(names[i], names[j], strlen(names[i])) == 0;
        if (seen > 1) {
            char base[25];
            snprintf(base, sizeof base, "%.24s", names[i]);
            snprintf(names[i], sizeof names[i], "%s_%d", base, seen);
        }
    }
}

/* CSV in the long layout: a header row of index names and "value", then one row per value,
 * for pandas.read_csv(f, comment='#') and ggplot; the same '#' lines as the wide layout. */
static int write_csv_long(FILE *fp, const app_data *d, const char *command)
{
    fprintf(fp, "# pelab %s\n# %s\n", PELAB_VERSION_STRING, command);
    fprintf(fp, "# %s\n# shape", d->what);
    for (int i = 0; i < d->ndim; i++) fprintf(fp, "%s%zu", i ? " x " : " ", d->shape[i]);
    fprintf(fp, ", %s, one row per value\n", d->f64 ? "float64" : "float32");
    char names[3][40];
    index_names(d, names);
    for (int i = 0; i < d->ndim; i++) fprintf(fp, "%s,", names[i]);
    fputs("value\n", fp);
    size_t n = 1;
    for (int i = 0; i < d->ndim; i++) n *= d->shape[i];
    for (size_t k = 0; k < n; k++) {
        size_t idx[3], rest = k;
        for (int i = d->ndim - 1; i >= 0; i--) {
            idx[i] = rest % d->shape[i];
            rest /= d->shape[i];
        }
        for (int i = 0; i < d->ndim; i++) fprintf(fp, "%zu,", idx[i]);
        /* the same spelling of each number as the wide layout */
        double v = data_at(d, k);
        char num[40];
        if (isnan(v))
            fputs("nan", fp);
        else if (isinf(v))
            fputs(v < 0 ? "-inf" : "inf", fp);
        else if (d->f64)
            fprintf(fp, "%.17g", v);
        else
            fwrite(num, 1, (size_t)app_format_float(num, (float)v), fp);
        fputc('\n', fp);
    }
    return ferror(fp) ? -1 : 0;
}

/* NPY format 1.0: magic, version, little-endian header length, a dict padded with spaces to a
 * multiple of 64 bytes and ended by a newline, then the raw little-endian data. A lent float32
 * table on a little-endian host is written as it lies in memory, in one call; anything else is
 * converted a block at a time. */
static int write_npy(FILE *fp, const app_data *d)
{
    char shape[96];
    if (d->ndim == 1)
        snprintf(shape, sizeof shape, "(%zu,)", d->shape[0]);
    else if (d->ndim == 2)
        snprintf(shape, sizeof shape, "(%zu, %zu)", d->shape[0], d->shape[1]);
    else
        snprintf(shape, sizeof shape, "(%zu, %zu, %zu)", d->shape[0], d->shape[1], d->shape[2]);
    char dict[256];
    int len = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                       d->f64 ? "<f8" : "<f4", shape);
    size_t total = 10 + (size_t)len + 1;
    size_t pad = (64 - total % 64) % 64;
    size_t hlen = (size_t)len + pad + 1;
    unsigned char head[256 + 64 + 10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    head[8] = (unsigned char)(hlen & 0xff);
    head[9] = (unsigned char)(hlen >> 8);
    memcpy(head + 10, dict, (size_t)len);
    memset(head + 10 + len, ' ', pad);
    head[10 + (size_t)len + pad] = '\n';
    fwrite(head, 1, 10 + hlen, fp);
    size_t n = 1;
    for (int i = 0; i < d->ndim; i++) n *= d->shape[i];
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (d->f32) {
        fwrite(d->f32, sizeof(float), n, fp);
        return ferror(fp) ? -1 : 0;
    }
#endif
    /* bytes put explicitly in little-endian order, so a big-endian host is right too */
    enum { BLOCK = 8192 };
    unsigned char *buf = malloc(BLOCK * 8);
    if (!buf) return -1;
    for (size_t i0 = 0; i0 < n; i0 += BLOCK) {
        size_t i1 = i0 + BLOCK < n ? i0 + BLOCK : n;
        unsigned char *b = buf;
        for (size_t i = i0; i < i1; i++) {
            if (d->f64) {
                uint64_t u;
                memcpy(&u, &d->data[i], 8);
                for (int k = 0; k < 8; k++) *b++ = (unsigned char)(u >> (8 * k));
            } else {
                float f = (float)data_at(d, i);
                uint32_t u;
                memcpy(&u, &f, 4);
                for (int k = 0; k < 4; k++) *b++ = (unsigned char)(u >> (8 * k));
            }
        }
        fwrite(buf, 1, (size_t)(b - buf), fp);
    }
    free(buf);
    return ferror(fp) ? -1 : 0;
}

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
        int w = f == APP_FMT_NPY ? write_npy(of.fp, &d)
                : st->csv_long   ? write_csv_long(of.fp, &d, command)
                                 : write_csv(of.fp, &d, command);
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
    if (format && named == APP_FMT_UNKNOWN) {
        snprintf(err, errlen, "--format %s: allowed png svg pdf csv npy", format);
        return 2;
    }
    if (named && ext && named != ext) {
        snprintf(err, errlen, "-o %s: the extension says %s, --format says %s", path,
                 format_ext(ext), format_ext(named));
        return 2;
    }
    app_format f = named ? named : ext;
    if (f == APP_FMT_UNKNOWN) {
        if (in_place)
            snprintf(err, errlen, "-o %s: name the format with --format (png svg pdf csv npy)",
                     path);
        else if (app_anim_kind_of(path) != APP_ANIM_NONE)
            snprintf(err, errlen,
                     "-o %s: an animation needs --animate NAME=FROM:TO (allowed without it .png "
                     ".svg .pdf .csv .npy)",
                     path);
        else
            snprintf(err, errlen, "-o %s: unknown extension (allowed .png .svg .pdf .csv .npy)",
                     path);
        return 2;
    }
    if (outfile_is_stdout(path) && format_binary(f) && isatty(STDOUT_FILENO)) {
        snprintf(err, errlen,
                 "-o -: standard output is a terminal; %s is binary (redirect it: -o - > file)",
                 format_ext(f));
        return 2;
    }
    char label[96];
    snprintf(label, sizeof label, "pelab export %s", app_view_at((size_t)st->view)->name);
    if (f == APP_FMT_CSV || f == APP_FMT_NPY) return export_data(st, path, f, label, err, errlen);

    /* The canvas is reserved before anything is computed: a size past the budget is refused at
     * once (status 1, like every budget refusal: the budget, not the option, is what is short),
     * not after minutes of work. It is the largest part of a big PNG (16384 x 16384 is 1 GiB). */
    static const char size_hint[] = "a smaller --width, --height or --size needs less";
    char what[200];
    size_t canvas = raster_export_canvas_bytes(o->width, o->height, path, format_ext(f));
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
            {"Software", "pelab " PELAB_VERSION_STRING},
            {"Title", app_export_title(st)},
            {"Command", command[0] ? command : params},
            {"Parameters", params},
        };
        raster_export_opts ro = {o->dpi, meta,  sizeof meta / sizeof meta[0],
                                 1,      scale, st->svg_paths};
        /* each heatmap is drawn through an image of its own, on top of the canvas; and the
         * scene holds a copy of every heatmap's values (counted here, once it is made, so the
         * drawing that would add the image is refused before it starts) */
        size_t image = raster_export_image_bytes(&s, path, format_ext(f), scale);
        for (size_t i = 0; i < s.n; i++)
            if (s.items[i].kind == SCENE_HEATMAP)
                image += s.items[i].u.heat.rows * s.items[i].u.heat.cols * sizeof(float);
        snprintf(what, sizeof what, "-o %s: the figure's heatmap values and image", path);
        if (image && pe_mem_reserve_hint(image, what, size_hint, err, errlen) != PE_OK) {
            image = 0;
        } else {
            int r = raster_export_as(&s, path, format_ext(f), &ro, err, errlen);
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

/* ---- the command ------------------------------------------------------------------------- */

/* --size WxH with a unit: in, cm or px; inches and centimetres become pixels at o->dpi. */
static int parse_size(const char *v, app_export_opts *o, char *err, size_t errlen)
{
    static const struct {
        const char *unit;
        double per_inch; /* units in an inch; 0 for pixels */
    } units[] = {{"in", 1}, {"cm", 2.54}, {"px", 0}};
    /* split at the first 'x' by hand: strtod would read "0x4" as a hexadecimal number */
    char buf[64], unit[16] = "";
    snprintf(buf, sizeof buf, "%s", v);
    char *x = strchr(buf, 'x'), *end = NULL;
    double w = 0, h = 0;
    int ok = x != NULL && x != buf;
    if (ok) {
        *x = '\0';
        w = strtod(buf, &end);
        ok = *end == '\0';
    }
    if (ok) {
        h = strtod(x + 1, &end);
        ok = end != x + 1;
        snprintf(unit, sizeof unit, "%s", end);
    }
    if (!ok) {
        snprintf(err, errlen,
                 "--size '%s': allowed WxH with a unit in, cm or px (6x4in, 16x10cm, 1200x800px)",
                 v);
        return -1;
    }
    size_t k = 0, nu = sizeof units / sizeof units[0];
    while (k < nu && strcmp(unit, units[k].unit) != 0) k++;
    if (k == nu) {
        snprintf(err, errlen, "--size '%s': %s (allowed WxH with a unit in, cm or px, e.g. 6x4in)",
                 v, *unit ? "unknown unit" : "no unit");
        return -1;
    }
    if (!(w > 0) || !(h > 0) || !isfinite(w) || !isfinite(h)) {
        snprintf(err, errlen, "--size '%s': width and height must be > 0", v);
        return -1;
    }
    double dpi = o->dpi > 0 ? o->dpi : 96;
    double pw = units[k].per_inch > 0 ? w / units[k].per_inch * dpi : w;
    double ph = units[k].per_inch > 0 ? h / units[k].per_inch * dpi : h;
    if (!(pw >= 64 && pw <= 16384 && ph >= 64 && ph <= 16384)) {
        snprintf(err, errlen,
                 "--size %s at --dpi %g: %.0f x %.0f pixels (allowed 64..16384 pixels a side)", v,
                 dpi, pw, ph);
        return -1;
    }
    o->width = (int)lround(pw);
    o->height = (int)lround(ph);
    return 0;
}

static void export_usage(FILE *fp)
{
    fprintf(
        fp,
        "usage: pelab export VIEW [options] -o FILE\n"
        "  FILE's extension picks the format: .png .svg .pdf (the figure), .csv .npy (its "
        "numbers)\n"
        "  --width N, --height N   figure size in pixels (default 1000 x 600; 64..16384)\n"
        "  --size WxH{in,cm,px}    figure size with a unit, at --dpi (6x4in, 16x10cm)\n"
        "  --dpi N                 pixels per inch (default 96; 10..2400); text keeps its points\n"
        "  --format EXT            png svg pdf csv npy: for -o - (standard output) and "
        "devices\n"
        "  --config FILE           set the parameters from a Hugging Face config.json\n"
        "animations (-o FILE.gif, FILE.webp, or FOLDER/ for numbered PNGs):\n"
        "  --animate NAME=FROM:TO[:FRAMES][:log]  sweep a numeric option (FRAMES 2..1000, "
        "default 48)\n"
        "  --fps N                 frames per second (default 12; 1..50)\n"
        "  --loop N                times to play, 0 = forever (default 0)\n"
        "  --quality Q             WebP: lossy at quality 0..100 (default lossless)\n"
        "  --free-axes             let each frame pick its axes and colour range (default "
        "fixed over the sweep)\n"
        "  --dither                GIF: dither to the palette (default off: flat "
        "figures)\n");
    app_cli_print_options(fp);
    fprintf(fp, "views, encodings and colormaps: pelab list\n");
}

int app_cmd_export(int argc, char **argv)
{
    app_state st;
    app_state_default(&st);
    app_cli_record_command(&st, argc, argv, "export");
    const char *out = NULL;
    app_export_opts o = {1000, 600, 96};
    const char *format = NULL;
    char err[512];
    int view_set = 0;
    app_anim anim;
    app_anim_default(&anim);
    const char *size_arg = NULL;
    int animate = 0, anim_only = 0, quality_set = 0,
        dither_set = 0; /* anim_only: an animation option, without --animate */

    /* the view may come first as a word */
    int first = 1;
    if (argc > 1 && argv[1][0] != '-') {
        if (app_option_set(&st, app_option_find("view"), argv[1], err, sizeof err) < 0) {
            fprintf(stderr, "pelab export: %s\n", err);
            return 2;
        }
        view_set = 1;
        first = 2;
    }
    /* its own options are the command table's (commands.c), like its man page and completion */
    app_cli_extra extra[16];
    size_t n_extra = app_command_extras(app_command_find("export"), extra, 16);
    app_cli_args args;
    int rc = app_cli_parse(&st, argc - first + 1, argv + first - 1, extra, n_extra, &args, err,
                           sizeof err);
    if (rc < 0) {
        fprintf(stderr, "pelab export: %s\n", err);
        return 2;
    }
    for (int i = 0; i < args.n; i++) {
        const char *v = args.val[i];
        long x;
        switch (args.code[i]) {
        case 'o':
            out = v;
            break;
        case 'W':
        case 'H':
            if (app_parse_int(args.code[i] == 'W' ? "width" : "height", v, 64, 16384, &x, err,
                              sizeof err) < 0) {
                fprintf(stderr, "pelab export: %s\n", err);
                return 2;
            }
            *(args.code[i] == 'W' ? &o.width : &o.height) = (int)x;
            break;
        case 'D':
            if (app_parse_double("dpi", v, 10, 2400, 0, &o.dpi, err, sizeof err) < 0) {
                fprintf(stderr, "pelab export: %s\n", err);
                return 2;
            }
            break;
        case 'C': /* applied by app_cli_parse, before the other options */
            break;
        case 'S': /* resolved after the loop: its pixels depend on --dpi, wherever it stands */
            size_arg = v;
            break;
        case 'A':
            if (animate) { /* the second one replaced the first without a word (issue 28) */
                fprintf(stderr,
                        "pelab export: --animate %s: one animation at a time (--animate given "
                        "twice)\n",
                        v);
                return 2;
            }
            if (app_anim_parse(v, &anim, err, sizeof err) < 0) {
                fprintf(stderr, "pelab export: %s\n", err);
                return 2;
            }
            animate = 1;
            break;
        case 'R':
            if (app_parse_double("fps", v, 1, 50, 0, &anim.fps, err, sizeof err) < 0) {
                fprintf(stderr, "pelab export: %s\n", err);
                return 2;
            }
            anim_only = 'R';
            break;
        case 'L':
            if (app_parse_int("loop", v, 0, 65535, &x, err, sizeof err) < 0) {
                fprintf(stderr, "pelab export: %s\n", err);
                return 2;
            }
            anim.loop = (int)x;
            anim_only = 'L';
            break;
        case 'Q':
            if (app_parse_double("quality", v, 0, 100, 0, &anim.quality, err, sizeof err) < 0) {
                fprintf(stderr, "pelab export: %s\n", err);
                return 2;
            }
            anim_only = 'Q';
            quality_set = 1;
            break;
        case 'X':
            anim.free_axes = 1;
            anim_only = 'X';
            break;
        case 'T':
            anim.dither = 1;
            anim_only = 'T';
            dither_set = 1;
            break;
        case 'F':
            format = v;
            break;
        case 'f':
            outfile_set_force(1);
            break;
        case '?':
            export_usage(stdout);
            return 0;
        }
    }
    if (args.n_positional > 0) {
        if (view_set || args.n_positional > 1) {
            fprintf(stderr, "pelab export: unexpected argument '%s' (one VIEW, then options)\n",
                    args.positional[view_set ? 0 : 1]);
            return 2;
        }
        if (app_option_set(&st, app_option_find("view"), args.positional[0], err, sizeof err) < 0) {
            fprintf(stderr, "pelab export: %s\n", err);
            return 2;
        }
        view_set = 1;
    }
    if (!view_set) {
        fprintf(stderr, "pelab export: name a view (e.g. pelab export heatmap -o pe.png); "
                        "`pelab list` shows them\n");
        return 2;
    }
    if (!out) {
        fprintf(stderr, "pelab export: -o FILE is required (.png .svg .pdf .csv .npy; with "
                        "--animate .gif .webp FOLDER/)\n");
        return 2;
    }
    if (app_state_validate(&st, err, sizeof err) < 0) {
        fprintf(stderr, "pelab export: %s\n", err);
        return 2;
    }
    if (size_arg && parse_size(size_arg, &o, err, sizeof err) < 0) {
        fprintf(stderr, "pelab export: %s\n", err);
        return 2;
    }
    {
        /* the figure is laid out at its physical size (app_export_layout): a few pixels at a
         * high dpi would be a figure a few hundredths of an inch wide */
        double lw, lh;
        app_export_layout(&o, &lw, &lh);
        if (lw < 63.5 || lh < 63.5) {
            fprintf(stderr,
                    "pelab export: --dpi %g: %d x %d pixels is %.2f x %.2f in at that dpi "
                    "(allowed at least 0.67 in a side, 64 pixels at 96 dpi)\n",
                    o.dpi, o.width, o.height, o.width / o.dpi, o.height / o.dpi);
            return 2;
        }
    }
    if (anim_only && !animate) {
        static const struct {
            int code;
            const char *name;
        } names[] = {
            {'R', "fps"}, {'L', "loop"}, {'Q', "quality"}, {'X', "free-axes"}, {'T', "dither"}};
        const char *name = "?";
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (names[i].code == anim_only) name = names[i].name;
        fprintf(stderr, "pelab export: --%s: only for animations (add --animate NAME=FROM:TO)\n",
                name);
        return 2;
    }
    /* each writer's own option on another format was ignored without a word (issue 28) */
    if (animate && quality_set && app_anim_kind_of(out) != APP_ANIM_WEBP) {
        fprintf(stderr,
                "pelab export: --quality: only for WebP animations (-o FILE.webp); -o %s "
                "is not one\n",
                out);
        return 2;
    }
    if (animate && dither_set && app_anim_kind_of(out) != APP_ANIM_GIF) {
        fprintf(stderr,
                "pelab export: --dither: only for GIF animations (-o FILE.gif); -o %s "
                "is not one\n",
                out);
        return 2;
    }
    if (animate && format) {
        fprintf(stderr,
                "pelab export: --format %s: not for animations (the format follows -o: "
                ".gif .webp FOLDER/)\n",
                format);
        return 2;
    }
    /* the files this export reads: -o may not name one of them (outfile.h); --config was read
     * already, the others are read during the work */
    pe_infile_note(st.attn.data_path);
    pe_infile_note(st.attn.model_name);
    pe_infile_note(st.attn.compare);
    if (animate)
        rc = app_anim_export(&st, &anim, out, &o, err, sizeof err);
    else
        rc = app_export_file_as(&st, out, format, &o, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "pelab export: %s\n", err);
        return rc;
    }
    return 0;
}
