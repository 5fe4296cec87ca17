/* extrapolation.c: seed 000's experiment done right. The built-in models were trained at one
 * context length; this figure shows their mean held-out loss at every position out to 4x that
 * length, one curve per position scheme, with the training length marked. The numbers come
 * from `pelab eval --extrapolate -o FILE.csv` (the shipped models' measurement by default), so
 * the figure is exactly the table the command printed. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "assets.h"
#include "attn.h"
#include "infile.h"
#include "views.h"

#define EX_MAX_MODELS 16
#define EX_MAX_ROWS   65536
/* 65536 rows of 16 models at 12 bytes a number, with room for comments */
#define EX_MAX_BYTES ((size_t)16 << 20)

typedef struct ex_table {
    int models, rows;
    char names[EX_MAX_MODELS][32];
    int ctx;      /* training context (from the '# ctx' line, else rows / 4) */
    double *loss; /* (models, rows), NaN where a model has no value */
} ex_table;

static void ex_free(ex_table *t)
{
    free(t->loss);
    memset(t, 0, sizeof *t);
}

static int ex_path(const app_state *st, char *buf, size_t n, char *err, size_t errlen)
{
    if (st->attn.data_path[0]) {
        snprintf(buf, n, "%s", st->attn.data_path);
        return 0;
    }
    return app_asset_path("models/extrapolation.csv", buf, n, err, errlen);
}

/* The curve's name from pelab eval's description line of a real model
 * ("# DIR/stories260K.bin (llama2c), 4 windows of 2048 tokens, RoPE scaling yarn"):
 * "stories260K.bin" or "stories260K.bin yarn"; label untouched for any other line. */
static void eval_label(const char *line, char *label, size_t n)
{
    const char *w = strstr(line, " windows of "), *open = strstr(line, " (");
    if (!w || !open || open > w || strncmp(line, "# ", 2) != 0) return;
    const char *b = open;
    while (b > line + 2 && b[-1] != '/') b--;
    const char *sc = strstr(w, "RoPE scaling ");
    sc = sc ? sc + strlen("RoPE scaling ") : "";
    int keep = *sc && strncmp(sc, "as trained", 10) != 0;
    size_t sl = strcspn(sc, " ,");
    snprintf(label, n, "%.*s%s%.*s", (int)(open - b), b, keep ? " " : "", keep ? (int)sl : 0, sc);
}

/* Read the CSV: '#' comments (one may be "# ctx name=64 ...", or pelab eval's "..., trained
 * context 512"), a header "position,a,b,...",
 * then rows "p,v,v,...". Empty cells are NaN. */
static int ex_load_file(const char *path, ex_table *t, char *err, size_t errlen)
{
    int first = t->models, rows = 0; /* this file's columns start at first */
    /* infile.h: /dev/zero, a FIFO nobody writes or a folder are refused before reading, and a
     * long read stops at q, Ctrl-C or a newer request */
    char *text = NULL;
    size_t len = 0;
    int irc = pe_infile_read(path, "--data", EX_MAX_BYTES, &text, &len, err, errlen);
    if (irc != PE_OK) {
        if (irc == PE_EINVAL && strstr(err, "cannot open")) {
            size_t u = strlen(err);
            snprintf(err + u, errlen - u, " (make one with pelab eval --extrapolate -o FILE.csv)");
        }
        return irc == PE_ECANCELED ? irc : -1;
    }
    FILE *fp = fmemopen(text, len + 1, "r");
    if (!fp) {
        free(text);
        snprintf(err, errlen, "--data %s: %s", path, strerror(errno));
        return -1;
    }
    char line[4096], label[32] = "";
    int header = 0, rc = -1, ctx = 0, skip = -1; /* skip: the column of window counts */
    while (fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '#') {
            char *c = strstr(line, "# ctx ");
            char *eq = c ? strchr(c, '=') : NULL;
            if (c && eq && ctx == 0) ctx = atoi(eq + 1);
            /* pelab eval's description line of a real model ends with its trained context */
            const char *tc =
                strstr(line, " windows of ") ? strstr(line, ", trained context ") : NULL;
            if (tc && ctx == 0) ctx = atoi(tc + strlen(", trained context "));
            if (!header && !label[0]) eval_label(line, label, sizeof label);
            continue;
        }
        if (!line[0]) continue;
        if (!header) {
            char *save = NULL, *tok = strtok_r(line, ",", &save);
            if (!tok || strcmp(tok, "position") != 0) {
                snprintf(err, errlen, "--data %s: the header must start with 'position'", path);
                goto out;
            }
            for (int col = 0; (tok = strtok_r(NULL, ",", &save)); col++) {
                /* a real model's table (pelab eval --model M): "position,loss,windows", the
                 * loss named after the model and its scaling, the counts not a curve */
                if (label[0] && strcmp(tok, "windows") == 0) {
                    skip = col;
                    continue;
                }
                if (t->models >= EX_MAX_MODELS) {
                    snprintf(err, errlen, "--data %s: more than %d curves in all", path,
                             EX_MAX_MODELS);
                    goto out;
                }
                snprintf(t->names[t->models++], sizeof t->names[0], "%s",
                         label[0] && strcmp(tok, "loss") == 0 ? label : tok);
            }
            if (t->models == first) {
                snprintf(err, errlen, "--data %s: no model columns after 'position'", path);
                goto out;
            }
            double *grown = realloc(t->loss, sizeof *t->loss * (size_t)t->models * EX_MAX_ROWS);
            if (!grown) {
                snprintf(err, errlen, "out of memory");
                goto out;
            }
            t->loss = grown;
            for (size_t i = (size_t)first * EX_MAX_ROWS; i < (size_t)t->models * EX_MAX_ROWS; i++)
                t->loss[i] = NAN; /* a shorter file's curve ends where its rows do */
            header = 1;
            continue;
        }
        if (rows >= EX_MAX_ROWS) break;
        char *p = line, *end;
        long pos = strtol(p, &end, 10);
        if (end == p || pos != rows) {
            snprintf(err, errlen, "--data %s: row %d: expected position %d", path, rows + 2, rows);
            goto out;
        }
        p = end;
        for (int m = first, col = 0; m < t->models; m++, col++) {
            double v = NAN;
            if (*p == ',') p++;
            if (col == skip) { /* step over the counts */
                p += strcspn(p, ",");
                if (*p == ',') p++;
                col++;
            }
            if (*p && *p != ',') {
                v = strtod(p, &end);
                if (end == p || !isfinite(v)) {
                    snprintf(err, errlen, "--data %s: row %d, column %s: not a number", path,
                             rows + 2, t->names[m]);
                    goto out;
                }
                p = end;
            }
            t->loss[(size_t)m * EX_MAX_ROWS + (size_t)rows] = v;
        }
        rows++;
    }
    if (!header || rows == 0) {
        snprintf(err, errlen, "--data %s: no rows", path);
        goto out;
    }
    if (rows > t->rows) t->rows = rows;
    if (t->ctx == 0) t->ctx = ctx > 0 ? ctx : rows / 4; /* the first file's */
    rc = 0;
out:
    fclose(fp);
    free(text);
    return rc;
}

/* --data FILE or FILE,FILE,...: each file's curves in one figure (pelab eval --model M
 * --extrapolate with none, linear, ntk, dynamic and yarn: the YaRN paper's figure). A name
 * that exists as it is, commas and all, is one file. */
static int ex_load(const app_state *st, ex_table *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    char path[1024];
    if (ex_path(st, path, sizeof path, err, errlen) < 0) return -1;
    struct stat sb;
    int whole = stat(path, &sb) == 0 || !strchr(path, ',');
    for (char *at = path, *next; at; at = next) {
        next = whole ? NULL : strchr(at, ',');
        if (next) *next++ = '\0';
        int rc = ex_load_file(at, t, err, errlen);
        if (rc < 0) {
            ex_free(t);
            return rc;
        }
    }
    return 0;
}

static double ex_at(const ex_table *t, int m, int p)
{
    return t->loss[(size_t)m * EX_MAX_ROWS + (size_t)p];
}

/* The mean over a window of w positions around p (noise in single positions hides the trend).
 * The window never crosses the training length, so no loss from past it leaks in before it. */
static double ex_smooth(const ex_table *t, int m, int p, int w)
{
    double s = 0;
    int n = 0;
    int inside = p < t->ctx;
    for (int q = p - w / 2; q <= p + w / 2; q++) {
        if (q < 0 || q >= t->rows || (q < t->ctx) != inside) continue;
        double v = ex_at(t, m, q);
        if (isfinite(v)) {
            s += v;
            n++;
        }
    }
    return n ? s / n : NAN;
}

static int ex_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                    char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    ex_table tab;
    if (ex_load(st, &tab, err, errlen) < 0) return -1;
    char sub[256];
    snprintf(sub, sizeof sub,
             "mean held-out loss by position; trained at context %d (shaded: beyond it); lines: "
             "mean of 9 positions",
             tab.ctx);
    fig_rect r = app_frame(s, t, th, "Loss past the training length", sub);
    double lo = INFINITY, hi = -INFINITY;
    for (int m = 0; m < tab.models; m++)
        for (int p = 0; p < tab.rows; p++) {
            double v = ex_at(&tab, m, p);
            if (isfinite(v)) {
                lo = fmin(lo, v);
                hi = fmax(hi, v);
            }
        }
    if (!(hi > lo)) hi = lo + 1;
    /* a short plot (the window under a projector zoom) keeps its legend beside it, not over
     * the curves and the training length's label */
    fig_rect side = {0, 0, 0, 0};
    int beside = !t->cells && r.h < t->text_h * 12;
    if (beside) {
        double widest = 0;
        for (int m = 0; m < tab.models; m++)
            widest = fmax(widest, scene_text_width(t, tab.names[m], 0.9));
        side = fig_take_right(&r, widest + t->text_h * 3.5, t->char_w);
    }
    /* a paper column: the legend in a strip above the plot, where it covers no curve */
    const char *snames[EX_MAX_MODELS];
    for (int m = 0; m < tab.models; m++) snames[m] = tab.names[m];
    fig_legend_slot slot = {{0, 0, 0, 0}, 0, 0};
    if (!beside) slot = fig_legend_take(t, &r, snames, tab.models);
    fig_axes a = fig_axes_draw(s, t, th, r, 0, tab.rows - 1, fmin(0, lo), hi * 1.05,
                               "position in the sequence", "loss (nats / token)", FIG_GRID);
    /* shade what lies past the training length */
    double x0 = fig_x(&a, tab.ctx), x1 = a.area.x + a.area.w;
    uint32_t tint = 0;
    for (int sh = 0; sh < 24; sh += 8) /* halfway between the background and the grid */
        tint |= ((((th->bg >> sh) & 0xff) + ((th->grid >> sh) & 0xff)) / 2) << sh;
    if (x1 > x0) scene_rect(s, x0, a.area.y, x1 - x0, a.area.h, tint, SCENE_FILL);
    double *x = malloc(sizeof *x * (size_t)tab.rows * 2);
    if (!x) {
        ex_free(&tab);
        return -1;
    }
    double *y = x + tab.rows;
    const char *names[EX_MAX_MODELS];
    uint32_t colors[EX_MAX_MODELS];
    double lw = t->hairline > 0 ? t->hairline : 1;
    for (int m = 0; m < tab.models; m++) {
        for (int p = 0; p < tab.rows; p++) {
            x[p] = p;
            y[p] = ex_smooth(&tab, m, p, 9);
        }
        colors[m] = th->series[m % 8];
        names[m] = tab.names[m];
        fig_curve(s, &a, x, y, (size_t)tab.rows, colors[m], t->cells ? 0 : lw * 2, 0);
    }
    fig_vmark(s, t, th, &a, tab.ctx, "training length");
    fig_axes la = a;
    if (beside) la.area = (fig_rect){side.x, a.area.y, side.w, a.area.h};
    if (!fig_legend_in_slot(s, t, th, &slot, names, colors, NULL, tab.models))
        fig_legend(s, t, th, &la, names, colors, tab.models, 0);
    c->main = a;
    fig_mark_main(s, a.area, "plot");
    c->has_main = 1;
    c->main_rows = 1;
    c->main_cols = tab.rows;
    if (st->cursor_on) {
        int p = st->cur_c < tab.rows ? st->cur_c : tab.rows - 1;
        app_cursor_vline(s, t, th, &a, p);
        size_t u = (size_t)snprintf(c->readout, sizeof c->readout, "position %d:", p);
        for (int m = 0; m < tab.models && u < sizeof c->readout; m++)
            u += (size_t)snprintf(c->readout + u, sizeof c->readout - u, "  %s %.3f", tab.names[m],
                                  ex_at(&tab, m, p));
    }
    free(x);
    ex_free(&tab);
    return 0;
}

static int ex_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    (void)c;
    ex_table tab;
    if (ex_load(st, &tab, err, errlen) < 0) return -1;
    if (app_data_alloc(out, 2, (size_t)tab.models + 1, (size_t)tab.rows, 0, err, errlen) < 0) {
        ex_free(&tab);
        return -1;
    }
    for (int p = 0; p < tab.rows; p++) out->data[p] = p;
    size_t u = (size_t)snprintf(out->what, sizeof out->what,
                                "(1+models, positions): row 0 = position; rows: loss of");
    for (int m = 0; m < tab.models; m++) {
        for (int p = 0; p < tab.rows; p++)
            out->data[(size_t)(m + 1) * tab.rows + p] = ex_at(&tab, m, p);
        if (u < sizeof out->what)
            u += (size_t)snprintf(out->what + u, sizeof out->what - u, " %s", tab.names[m]);
    }
    out->f64 = 1;
    ex_free(&tab);
    return 0;
}

/* {loss MODEL A-B}: MODEL's mean held-out loss over positions A..B of the table this view draws
 * (read here only: the lesson's number and the figure's curve come from the same reader) */
static int value_loss(const app_state *st, const char *args, char *out, size_t n, char *err,
                      size_t errlen)
{
    char mname[64];
    int a, b, used = 0;
    if (sscanf(args, "%63s %d-%d%n", mname, &a, &b, &used) != 3 || args[used] || a < 0 || b < a) {
        snprintf(err, errlen, "{loss %s}: write {loss MODEL A-B}, e.g. {loss rope 64-127}", args);
        return -1;
    }
    ex_table tab;
    char why[900];
    if (ex_load(st, &tab, why, sizeof why) < 0) {
        snprintf(err, errlen, "{loss}: %.400s", why);
        return -1;
    }
    char path[1024] = "";
    ex_path(st, path, sizeof path, why, sizeof why);
    int col = -1;
    char names[512] = "";
    for (int m = 0; m < tab.models; m++) {
        if (col < 0 && strcmp(tab.names[m], mname) == 0) col = m;
        size_t u = strlen(names);
        snprintf(names + u, sizeof names - u, "%s%s", u ? "|" : "", tab.names[m]);
    }
    int rc = -1;
    if (col < 0) {
        snprintf(err, errlen, "{loss %.40s %d-%d}: no column '%.40s' in %.200s (columns %.100s)",
                 mname, a, b, mname, path, names);
        goto out;
    }
    double sum = 0;
    int count = 0;
    for (int p = a; p <= b && p < tab.rows; p++) {
        double v = ex_at(&tab, col, p);
        if (isfinite(v)) {
            sum += v;
            count++;
        }
    }
    if (count == 0 || b >= tab.rows) {
        snprintf(err, errlen, "{loss %.40s %d-%d}: %.300s has positions 0..%d", mname, a, b, path,
                 tab.rows - 1);
        goto out;
    }
    snprintf(out, n, "%.3f", sum / count);
    rc = 0;
out:
    ex_free(&tab);
    return rc;
}

static const app_view_value ex_values[] = {
    {"loss", "MODEL A-B", value_loss},
    {NULL, NULL, NULL},
};

const app_view app_view_extrapolation = {
    .name = "extrapolation",
    .description = "loss by position out to 4x the training length: the built-in models, or "
                   "pelab eval --extrapolate tables of any model (--data)",
    .validate = NULL,
    .build = ex_build,
    .data = ex_data,
    .options = "data",
    .values = ex_values,
};
