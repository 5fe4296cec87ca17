/* attention.c: a built-in model's attention, token by token (issue 6). Two views share the
 * panels drawn here:
 *   attention  the token strip (earlier words shaded by how much the current token attends to
 *              them, unknown words in [brackets], generated words after a bar), the current
 *              token's attention over every earlier token as bars labelled with the words, the
 *              layer's heads as small multiples of the causal matrix so far, the chosen head's
 *              matrix, the top-5 next tokens, the position experiment's gauge (trained value
 *              marked), and with --split the scores' content and position parts;
 *   compare    two models side by side on the same prompt and step, the same panels reduced.
 * The numbers come from app_attn (app/attn.h): one model run per (model, text, experiment),
 * stepped through by index. The terminal gets its own layout (bars become a labelled list,
 * panels are dropped with a note when the terminal is small); the window and exported files
 * share the pixel layout. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "colormap.h"
#include "input.h"
#include "options.h"
#include "views.h"

/* v for people (fig_num: 0.98, 7.7×10⁻⁷, 500,000) in a buffer of the statement that uses it, so
 * one line may hold several: messages read as the figures' numbers do, never "9.8e-01" */

/* v as fig_fixed writes it (U+2212 minus, no "-0.00"), right-aligned in width columns of a
 * terminal's token table (one column per code point); into out, which it returns. */
static const char *fixed_col(double v, int decimals, int plus, int width, char *out, size_t n)
{
    char b[24];
    fig_fixed(v, decimals, plus, b, sizeof b);
    int cps = 0;
    for (const unsigned char *q = (const unsigned char *)b; *q; q++) cps += (*q & 0xc0) != 0x80;
    snprintf(out, n, "%*s%s", width > cps ? width - cps : 0, "", b);
    return out;
}

static const char *num_text(double v, int sig, char *buf)
{
    fig_num(v, sig, buf, 48);
    return buf;
}
#define NUM(v, sig) num_text((v), (sig), (char[48]){0})
/* the same without a thousands comma below a million (10000): a terminal column's gauge label,
 * which has no character to spare */
static const char *num_short(double v, int sig, char *buf)
{
    if (fabs(v) >= 1e-3 && fabs(v) < 1e6)
        snprintf(buf, 48, "%.*g", sig, v);
    else
        fig_num(v, sig, buf, 48);
    return buf;
}
#define NUMS(v, sig) num_short((v), (sig), (char[48]){0})

#define LOG_FLOOR 1e-3 /* log colours: weights below 0.001 share the lowest colour */

/* What one figure draws from: the run, the step and head shown, and the colour scale. */
typedef struct actx {
    scene *s;
    const scene_target *t;
    const fig_theme *th;
    const app_state *st;
    const app_attn *a;
    int step, layer, head; /* head -1: the mean of the layer's heads */
    int kind;              /* APP_SCALE_* */
    const cmap *map;
    double vmin, vmax;
    char cbar[96];
} actx;

/* ---- small helpers ---------------------------------------------------------------------- */

/* str cut with an ellipsis to fit maxw at size (into buf), recorded in the scene: data = 1 for
 * a token (a data label, which may be cut), 0 for anything else (which a layout test reports). */
static const char *fit(const actx *c, int data, const char *str, double size, double maxw,
                       char *buf, size_t n)
{
    return scene_fit_text(c->s, c->t, str, size, maxw, data, buf, n);
}

/* Text placed on whole cells on a terminal (left/top at an integer column and even row). */
static void text_at(actx *c, double x, double y, const char *str, double size, unsigned anchor,
                    uint32_t color, unsigned flags)
{
    const scene_target *t = c->t;
    c->s->text_h = t->text_h;
    if (!t->cells) {
        scene_text(c->s, x, y, str, size, anchor, color, flags);
        return;
    }
    double w = scene_text_width(t, str, 1.0);
    unsigned ha = anchor & 3, va = (anchor >> 2) & 3;
    double left = ha == SCENE_CENTER ? x - floor(w / 2) : ha == SCENE_RIGHT ? x - w : x;
    double top = va == 1 ? y - 1 : va == 2 ? y - 2 : y;
    scene_text(c->s, floor(left + 1e-9), 2.0 * floor(top / 2.0 + 1e-9), str, 1.0,
               SCENE_LEFT | SCENE_TOP, color, flags);
}

/* Black or white, whichever reads better on rgb. */
static uint32_t ink_on(uint32_t rgb)
{
    double r = (rgb >> 16 & 255) / 255.0, g = (rgb >> 8 & 255) / 255.0, b = (rgb & 255) / 255.0;
    return 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 ? 0x000000 : 0xffffff;
}

/* a + (b - a) f per channel, f in [0, 1]. */
static uint32_t mix(uint32_t a, uint32_t b, double f)
{
    uint32_t out = 0;
    for (int sh = 0; sh <= 16; sh += 8) {
        double x = (a >> sh & 255) + ((double)(b >> sh & 255) - (a >> sh & 255)) * f;
        out |= (uint32_t)(x + 0.5) << sh;
    }
    return out;
}

static double line_h(const scene_target *t)
{
    return t->cells ? 2 : t->text_h * 1.15;
}

/* The colour scale of the heatmaps and the strip (fixed ranges, so colours keep their meaning
 * while stepping). */
static void scale_init(actx *c)
{
    const app_state *st = c->st;
    c->kind = st->attn.attn_scale;
    c->map = st->map ? st->map : cmap_default_sequential();
    if (c->kind == APP_SCALE_LOG) {
        c->vmin = log10(LOG_FLOOR);
        c->vmax = 0;
        snprintf(c->cbar, sizeof c->cbar, "attention (log10)");
    } else if (c->kind == APP_SCALE_NOFIRST) {
        c->vmin = 0;
        c->vmax = 1;
        /* the bars' axis says it in full: "attention w/o token 0" */
        snprintf(c->cbar, sizeof c->cbar, "attention (nofirst)");
    } else {
        c->vmin = 0;
        c->vmax = 1;
        snprintf(c->cbar, sizeof c->cbar, "attention (linear)");
    }
}

/* The scale's name where a terminal's colorbar has a few columns for it. */
static const char *cells_scale(int kind)
{
    return kind == APP_SCALE_LOG ? "log10" : kind == APP_SCALE_NOFIRST ? "renorm" : "linear";
}

/* Weight w of key j in a row whose key 0 has weight w0, on the scale. */
static float scaled(int kind, float w, float w0, int j)
{
    if (!isfinite(w)) return NAN;
    if (kind == APP_SCALE_LOG) return (float)log10(fmax((double)w, LOG_FLOOR));
    if (kind == APP_SCALE_NOFIRST) {
        if (j == 0) return NAN;
        return w0 < 1 ? w / (1 - w0) : 0;
    }
    return w;
}

/* The row of the current step for (layer, head), or the mean over the layer's heads (head -1),
 * step + 1 weights in the scene's arena. */
static const float *row_of(actx *c, const app_attn *a, int head)
{
    if (head >= 0) return app_attn_row(a, c->step, c->layer, head);
    int n1 = c->step + 1;
    float *m = scene_alloc(c->s, (size_t)n1 * sizeof *m);
    if (!m) return NULL;
    for (int j = 0; j < n1; j++) m[j] = 0;
    for (int h = 0; h < a->heads; h++) {
        const float *r = app_attn_row(a, c->step, c->layer, h);
        for (int j = 0; j < n1; j++) m[j] += r[j] / (float)a->heads;
    }
    return m;
}

/* The (step + 1)^2 matrix so far of (layer, head) or the head mean, on the colour scale, NaN
 * above the diagonal (the future). In the scene's arena. */
static float *matrix_of(actx *c, const app_attn *a, int head)
{
    int n1 = c->step + 1;
    size_t cap = (size_t)a->cap;
    float *m = scene_alloc(c->s, (size_t)n1 * (size_t)n1 * sizeof *m);
    if (!m) return NULL;
    for (int i = 0; i < n1; i++) {
        float *out = m + (size_t)i * n1;
        for (int j = 0; j < n1; j++) out[j] = 0;
        int h0 = head >= 0 ? head : 0, h1 = head >= 0 ? head + 1 : a->heads;
        for (int h = h0; h < h1; h++) {
            const float *src = app_attn_matrix(a, c->layer, h) + (size_t)i * cap;
            for (int j = 0; j < n1; j++) out[j] += src[j] / (float)(h1 - h0);
        }
        float w0 = out[0];
        for (int j = 0; j < n1; j++) out[j] = j > i ? NAN : scaled(c->kind, out[j], w0, j);
    }
    return m;
}

static const char *tok_text(const app_attn_token *tk, char *buf, size_t n)
{
    if (tk->unknown)
        snprintf(buf, n, "[%s]", tk->word);
    else
        snprintf(buf, n, "%s", tk->word);
    return buf;
}

/* ---- the token strip -------------------------------------------------------------------- */

/* Words flowing in lines across r, at most max_lines of them (the ones around the current
 * token). Earlier words are shaded by `row` (raw weights; NULL = no shading), the current one
 * is drawn in the accent colour, later ones muted, generated ones after a bar. Returns the
 * height used. */
static double draw_strip(actx *c, const app_attn *a, fig_rect r, const float *row, int max_lines)
{
    const scene_target *t = c->t;
    const fig_theme *th = c->th;
    double size = t->cells ? 1 : 0.9;
    double lh = t->cells ? 2 : t->text_h * size * 1.25;
    double gap = t->cells ? 1 : t->char_w * 0.6;
    double pad = t->cells ? 0 : t->char_w * 0.25;
    int n = a->n;
    int *line = scene_alloc(c->s, (size_t)(n > 0 ? n : 1) * sizeof *line);
    double *xs = scene_alloc(c->s, (size_t)(n > 0 ? n : 1) * sizeof *xs);
    if (!line || !xs || n <= 0) return 0;
    char buf[64];
    double x = 0;
    int ln = 0;
    for (int k = 0; k < n; k++) {
        double w = scene_text_width(t, tok_text(&a->tok[k], buf, sizeof buf), size) *
                       (k == c->step && !t->cells ? 1.15 : 1) + /* bold runs wider */
                   2 * pad;
        double extra = a->tok[k].generated && (k == 0 || !a->tok[k - 1].generated) ? gap * 2 : 0;
        if (x > 0 && x + extra + w > r.w) {
            ln++;
            x = 0;
        }
        x += extra;
        line[k] = ln;
        xs[k] = x;
        x += w + gap;
    }
    int lines = ln + 1;
    if (max_lines < 1) max_lines = 1;
    int cur = line[c->step];
    int first = 0;
    if (lines > max_lines) {
        first = cur - max_lines + 2; /* one line past the current one stays in view */
        if (first > lines - max_lines) first = lines - max_lines;
        if (first < 0) first = 0;
    }
    /* shading: each earlier word's weight on the scale, relative to the strongest earlier
     * word (a highlighter: the colorbar's absolute colours would make most words alike) */
    float w0 = row ? row[0] : 0;
    double smax = -INFINITY, smin = c->kind == APP_SCALE_LOG ? log10(LOG_FLOOR) : 0;
    for (int k = 0; row && k < c->step; k++) {
        float v = scaled(c->kind, row[k], w0, k);
        if (isfinite(v)) smax = fmax(smax, v);
    }
    for (int k = 0; k < n; k++) {
        if (line[k] < first || line[k] >= first + max_lines) continue;
        const app_attn_token *tk = &a->tok[k];
        tok_text(tk, buf, sizeof buf);
        double bx = r.x + xs[k], by = r.y + (line[k] - first) * lh;
        double w =
            scene_text_width(t, buf, size) * (k == c->step && !t->cells ? 1.15 : 1) + 2 * pad;
        uint32_t ink = tk->unknown ? th->accent : tk->generated ? th->series[2] : th->fg;
        unsigned flags = 0;
        if (tk->generated && (k == 0 || !a->tok[k - 1].generated)) {
            /* the bar between the prompt and what the model wrote */
            double sx = bx - gap * 1.5;
            if (t->cells)
                text_at(c, sx, by, "\xe2\x94\x82", 1, SCENE_LEFT | SCENE_TOP, th->muted, 0);
            else
                scene_line(c->s, sx, by, sx, by + lh * 0.9, th->muted, 0, 0);
        }
        if (k == c->step) {
            scene_rect(c->s, bx, by, w, t->cells ? 2 : lh * 0.95, th->accent, SCENE_FILL);
            ink = ink_on(th->accent);
            flags = SCENE_BOLD;
        } else if (k < c->step && row) {
            float v = scaled(c->kind, row[k], w0, k);
            if (isfinite(v) && smax > smin) {
                uint32_t bg = mix(th->bg, th->series[0], fmax(0, (v - smin) / (smax - smin)));
                scene_rect(c->s, bx, by, w, t->cells ? 2 : lh * 0.95, bg, SCENE_FILL);
                ink = ink_on(bg);
            }
        } else if (k > c->step) {
            ink = th->muted;
        }
        text_at(c, bx + pad, by + (t->cells ? 0 : lh * 0.06), buf, size, SCENE_LEFT | SCENE_TOP,
                ink, flags);
        if (tk->generated && !t->cells)
            scene_line(c->s, bx, by + lh * 0.97, bx + w, by + lh * 0.97, th->series[2], 0, 0);
    }
    int shown = lines < max_lines ? lines : max_lines;
    return shown * lh;
}

/* ---- bars: the current token's attention over every earlier token ---------------------- */

static const char *head_name(const actx *c, int head, char *buf, size_t n)
{
    int g = app_attn_kv_group(c->a, head);
    if (head >= 0 && g >= 0)
        snprintf(buf, n, "head %d (kv group %d of %d)", head, g, c->a->m.info.kv_heads);
    else if (head >= 0)
        snprintf(buf, n, "head %d", head);
    else
        snprintf(buf, n, "mean of %d heads", c->a->heads);
    return buf;
}

/* Pixels: vertical bars labelled with the words underneath (rotated). */
static void bars_pixels(actx *c, const app_attn *a, fig_rect r, const float *row, int head)
{
    const scene_target *t = c->t;
    const fig_theme *th = c->th;
    int n1 = c->step + 1;
    double lsize = 0.75;
    char buf[64];
    /* the label band fits the widest word of every token shown, not only of those stepped
     * through: the plot keeps its height while the steps go on (an animation's frames on one
     * y axis; in the explorer the bars no longer jump when "grandma" arrives) */
    double widest = 0;
    for (int j = 0; j < (a->n > n1 ? a->n : n1); j++)
        widest = fmax(widest, scene_text_width(t, tok_text(&a->tok[j], buf, sizeof buf), lsize));
    double label_h = fmin(widest + t->char_w, r.h * 0.35);
    fig_rect lab = fig_take_bottom(&r, label_h, 0);
    float w0 = row[0];
    double hi = 0;
    double *v = scene_alloc(c->s, (size_t)n1 * sizeof *v);
    if (!v) return;
    for (int j = 0; j < n1; j++) {
        v[j] = c->kind == APP_SCALE_NOFIRST ? (j == 0 ? NAN : (w0 < 1 ? row[j] / (1 - w0) : 0))
                                            : row[j];
        if (isfinite(v[j])) hi = fmax(hi, v[j]);
    }
    const char *ylabel = c->kind == APP_SCALE_NOFIRST ? "attention w/o token 0" : "attention";
    unsigned flags = FIG_GRID | FIG_NO_XTICKS;
    double y0 = 0, y1 = hi > 0 ? hi * 1.08 : 1;
    if (c->kind == APP_SCALE_LOG) {
        flags |= FIG_YLOG;
        y0 = LOG_FLOOR;
        y1 = 1;
    }
    /* Where the plot area will be (the axes laid out on a scratch scene): bars are never
     * thinner than fig_min_bar, so when the tokens do not all fit at that the most recent ones
     * are shown (a note in the corner says from which token). */
    scene probe_s;
    scene_init(&probe_s, c->s->width, c->s->height, 0);
    fig_axes probe = fig_axes_draw(&probe_s, t, th, r, -0.5, n1 - 0.5, y0, y1, NULL, ylabel, flags);
    double minbar = fig_min_bar(t);
    /* a panel too narrow for a few bars beside its axis (a paper column under a log scale,
     * whose tick labels are wide): the axis name goes, then the tick labels (the colourbar
     * beside the matrix carries the scale) */
    for (int drop = 0; drop < 2 && probe.area.w < 4 * minbar; drop++) {
        if (drop == 0)
            ylabel = NULL;
        else
            flags |= FIG_NO_YTICKS;
        scene_reset(&probe_s, c->s->width, c->s->height, 0);
        probe = fig_axes_draw(&probe_s, t, th, r, -0.5, n1 - 0.5, y0, y1, NULL, ylabel, flags);
    }
    scene_free(&probe_s);
    int j0 = 0;
    if (probe.area.w * 0.8 / n1 < minbar) {
        /* down to the current token alone (a paper column's narrow bars panel) */
        int k = (int)floor(probe.area.w * 0.8 / minbar);
        j0 = n1 - (k < 1 ? 1 : k);
        if (j0 < 0) j0 = 0;
        scene_note_squeeze(c->s); /* tokens without a bar: zoomed text gives way first */
    }
    /* the notes in the plot's top-left corner get headroom above the tallest bar */
    int notes = (c->kind == APP_SCALE_NOFIRST) + (j0 > 0);
    double room = notes * t->text_h * 0.8 + t->char_w * 0.6;
    double frac = notes && probe.area.h > 0 ? fmin(0.6, room / probe.area.h) : 0;
    if (c->kind != APP_SCALE_LOG && notes) y1 = hi > 0 ? hi * fmax(1.08, 1 / (1 - frac)) : 1;
    /* on the log axis too (a short panel, a paper column: "from 48" sat on the tallest bar):
     * the top goes above 1 only when the tallest bar leaves the notes no room under it */
    if (c->kind == APP_SCALE_LOG && notes && hi > 0 && frac < 1)
        y1 = fmax(1, pow(10, (log10(fmax(hi, LOG_FLOOR)) - frac * log10(y0)) / (1 - frac)));
    fig_axes ax = fig_axes_draw(c->s, t, th, r, j0 - 0.5, n1 - 0.5, y0, y1, NULL, ylabel, flags);
    /* the pitch from the axes drawn: an animation holds its x range still over the sweep
     * (scene_ranges), so an early frame of few tokens is drawn on the last frame's axes */
    double pitch = fabs(fig_x(&ax, 1) - fig_x(&ax, 0));
    /* 80% of the pitch, never under the floor while the pitch allows it */
    double bw = fmax(pitch * 0.8, fmin(minbar, pitch));
    for (int j = j0; j < n1; j++) {
        if (!isfinite(v[j])) continue;
        double val = c->kind == APP_SCALE_LOG ? fmax(v[j], LOG_FLOOR) : v[j];
        double xm = fig_x(&ax, j);
        double yb = fig_y(&ax, y0), yt = fig_y(&ax, val);
        uint32_t col = j == c->step          ? th->accent
                       : a->tok[j].generated ? th->series[2]
                                             : th->series[0];
        if (yb - yt > 0)
            scene_rect(c->s, xm - bw / 2, yt, bw, yb - yt, col, SCENE_FILL | SCENE_BAR);
    }
    double note_y = ax.area.y + t->char_w * 0.3;
    if (c->kind == APP_SCALE_NOFIRST) {
        char w0s[32];
        fig_fixed(w0, 3, 0, w0s, sizeof w0s);
        snprintf(buf, sizeof buf, "token 0 (%s) left out", w0s);
        /* a narrow plot (a column 2.2x3.5in) says it in fewer words rather than run into the
         * matrix beside it */
        if (scene_text_width(t, buf, 0.75) > ax.area.w - t->char_w)
            snprintf(buf, sizeof buf, "token 0 left out");
        /* narrower still: the axis name ("attention w/o token 0") says it alone */
        if (scene_text_width(t, buf, 0.75) <= ax.area.w - t->char_w) {
            scene_text(c->s, ax.area.x + t->char_w * 0.5, note_y, buf, 0.75, SCENE_LEFT | SCENE_TOP,
                       th->muted, 0);
            note_y += t->text_h * 0.8;
        }
    }
    if (j0 > 0) {
        snprintf(buf, sizeof buf, "from token %d", j0);
        if (scene_text_width(t, buf, 0.75) > ax.area.w - t->char_w)
            snprintf(buf, sizeof buf, "from %d", j0);
        scene_text(c->s, ax.area.x + t->char_w * 0.5, note_y, buf, 0.75, SCENE_LEFT | SCENE_TOP,
                   th->muted, 0);
    }
    /* the words under their bars; every k-th when the bars are narrower than a line */
    int every = (int)ceil(t->text_h * lsize * 1.05 / fmax(pitch, 1e-9));
    if (every < 1) every = 1;
    for (int j = j0; j < n1; j++) {
        if ((n1 - 1 - j) % every) continue; /* keep the current token's label */
        char cut[64];
        const char *w = fit(c, 1, tok_text(&a->tok[j], buf, sizeof buf), lsize, lab.h - t->char_w,
                            cut, sizeof cut);
        uint32_t ink = j == c->step ? th->accent : a->tok[j].unknown ? th->accent : th->fg;
        scene_text(c->s, fig_x(&ax, j), lab.y + t->char_w * 0.4, w, lsize,
                   SCENE_RIGHT | SCENE_MIDDLE | SCENE_VERTICAL, ink, j == c->step ? SCENE_BOLD : 0);
    }
}

/* Cells: one row per key token, "j word ▇▇▇ 0.123". When the tokens do not fit, token 0 (where
 * many heads park their attention), a summary of the middle, and the most recent ones. */
static void bars_cells(actx *c, const app_attn *a, fig_rect r, const float *row, int head)
{
    const fig_theme *th = c->th;
    int n1 = c->step + 1;
    int rows = (int)(r.h / 2);
    if (rows < 2) return;
    char buf[160], hb[48];
    snprintf(buf, sizeof buf, "\"%s\" attends to (%s):", a->tok[c->step].word,
             head_name(c, head, hb, sizeof hb));
    /* the title names the head already: a narrow column drops it rather than cut the line */
    if (scene_text_width(c->t, buf, 1) > r.w)
        snprintf(buf, sizeof buf, "\"%s\" attends to:", a->tok[c->step].word);
    char cut[96];
    text_at(c, r.x, r.y, fit(c, 0, buf, 1, r.w, cut, sizeof cut), 1, SCENE_LEFT | SCENE_TOP, th->fg,
            SCENE_BOLD);
    rows--;
    int lw = 4; /* longest word shown, at most 10 */
    for (int j = 0; j < n1; j++) {
        int l = (int)scene_text_width(c->t, tok_text(&a->tok[j], buf, sizeof buf), 1);
        if (l > lw) lw = l;
    }
    if (lw > 10) lw = 10;
    int iw = n1 > 100 ? 3 : n1 > 10 ? 2 : 1;
    double bx = r.x + iw + 1 + lw + 1, bw = r.w - (iw + 1 + lw + 1) - 6;
    if (bw < 3) bw = 3;
    float w0 = row[0];
    double hi = 0;
    for (int j = 0; j < n1; j++) {
        double v = c->kind == APP_SCALE_NOFIRST ? (j ? row[j] / fmax(1 - w0, 1e-9) : 0) : row[j];
        hi = fmax(hi, v);
    }
    if (hi <= 0) hi = 1;
    /* which tokens get a row */
    int skip_from = -1, skip_to = -1;
    if (n1 > rows) {
        skip_from = 1;
        skip_to = n1 - (rows - 2); /* tokens [skip_from, skip_to) are summarised */
    }
    double y = r.y + 2;
    for (int j = 0; j < n1; j++) {
        if (j == skip_from) {
            double sum = 0;
            for (int k = skip_from; k < skip_to; k++) sum += row[k];
            char ss[32];
            fig_fixed(sum, 3, 0, ss, sizeof ss);
            snprintf(buf, sizeof buf, "\xe2\x8b\xae tokens %d..%d: %s in all", skip_from,
                     skip_to - 1, ss);
            if (scene_text_width(c->t, buf, 1) > r.w)
                snprintf(buf, sizeof buf, "\xe2\x8b\xae %d..%d: %s", skip_from, skip_to - 1, ss);
            text_at(c, r.x, y, fit(c, 0, buf, 1, r.w, cut, sizeof cut), 1, SCENE_LEFT | SCENE_TOP,
                    th->muted, 0);
            y += 2;
            j = skip_to - 1;
            continue;
        }
        int cur = j == c->step;
        snprintf(buf, sizeof buf, "%*d", iw, j);
        text_at(c, r.x, y, buf, 1, SCENE_LEFT | SCENE_TOP, th->muted, 0);
        char wb[64];
        const char *w = fit(c, 1, tok_text(&a->tok[j], wb, sizeof wb), 1, lw, cut, sizeof cut);
        text_at(c, r.x + iw + 1 + lw, y, w, 1, SCENE_RIGHT | SCENE_TOP,
                cur || a->tok[j].unknown ? th->accent : th->fg, cur ? SCENE_BOLD : 0);
        double v = row[j];
        if (c->kind == APP_SCALE_NOFIRST) v = j ? row[j] / fmax(1 - w0, 1e-9) : NAN;
        double frac = c->kind == APP_SCALE_LOG
                          ? (log10(fmax(v, LOG_FLOOR)) - log10(LOG_FLOOR)) / -log10(LOG_FLOOR)
                          : v / hi;
        if (isfinite(frac) && frac > 0) {
            double len = fmax(1, round(frac * bw));
            scene_rect(c->s, bx, y, len, 2, cur ? th->accent : th->series[0], SCENE_FILL);
        }
        char rs[32];
        fig_fixed(row[j], 3, 0, rs, sizeof rs);
        if (isfinite(v))
            snprintf(buf, sizeof buf, "%s", rs);
        else
            snprintf(buf, sizeof buf, "(%s, left out)", rs);
        text_at(c, r.x + r.w, y, buf, 1, SCENE_RIGHT | SCENE_TOP, th->fg, 0);
        y += 2;
    }
}

static void draw_bars(actx *c, const app_attn *a, fig_rect r, int head)
{
    const float *row = row_of(c, a, head);
    if (!row) return;
    scene_name_panel(c->s, "bars"); /* the attends-to bars (a list of them in the terminal) */
    if (c->t->cells)
        bars_cells(c, a, r, row, head);
    else
        bars_pixels(c, a, r, row, head);
}

/* ---- the content / position split ------------------------------------------------------ */

static void draw_split(actx *c, const app_attn *a, fig_rect r, int head)
{
    const scene_target *t = c->t;
    const fig_theme *th = c->th;
    int h = head >= 0 ? head : 0;
    const float *con = app_attn_content(a, c->step, c->layer, h);
    const float *pos = app_attn_position(a, c->step, c->layer, h);
    const float *w = app_attn_row(a, c->step, c->layer, h);
    char buf[400], cut[400];
    if (!con || !pos || !w) return; /* split_or_reason said why */
    int n1 = c->step + 1;
    if (t->cells) {
        int wide = r.w >= 48;
        snprintf(buf, sizeof buf,
                 wide ? "  j word       content position    score  weight (head %d)"
                      : "  j word   content  pos weight (h%d)",
                 h);
        text_at(c, r.x, r.y, fit(c, 0, buf, 1, r.w, cut, sizeof cut), 1, SCENE_LEFT | SCENE_TOP,
                th->fg, SCENE_BOLD);
        int rows = (int)(r.h / 2) - 1;
        int from = n1 > rows ? n1 - rows : 0;
        for (int j = from, y = 1; j < n1; j++, y++) {
            char wb[64], f1[64], f2[64], f3[64], f4[64];
            if (wide)
                snprintf(buf, sizeof buf, "%3d %-10.10s %s  %s  %s  %s", j,
                         tok_text(&a->tok[j], wb, sizeof wb),
                         fixed_col(con[j], 2, 1, 7, f1, sizeof f1),
                         fixed_col(pos[j], 2, 1, 7, f2, sizeof f2),
                         fixed_col(con[j] + pos[j], 2, 1, 7, f3, sizeof f3),
                         fixed_col(w[j], 3, 0, 0, f4, sizeof f4));
            else
                snprintf(buf, sizeof buf, "%3d %-6.6s %s %s %s", j,
                         tok_text(&a->tok[j], wb, sizeof wb),
                         fixed_col(con[j], 2, 1, 6, f1, sizeof f1),
                         fixed_col(pos[j], 2, 1, 5, f2, sizeof f2),
                         fixed_col(w[j], 3, 0, 0, f4, sizeof f4));
            text_at(c, r.x, r.y + 2 * y, fit(c, 0, buf, 1, r.w, cut, sizeof cut), 1,
                    SCENE_LEFT | SCENE_TOP, j == c->step ? th->accent : th->fg, 0);
        }
        return;
    }
    double lo = 0, hi = 0;
    for (int j = 0; j < n1; j++) {
        lo = fmin(lo, fmin(fmin(con[j], pos[j]), con[j] + pos[j]));
        hi = fmax(hi, fmax(fmax(con[j], pos[j]), con[j] + pos[j]));
    }
    double padv = (hi - lo) * 0.06 + 1e-6;
    snprintf(buf, sizeof buf, "score parts, head %d", h);
    fig_axes ax = fig_axes_draw(c->s, t, th, r, -0.5, n1 - 0.5, lo - padv, hi + padv, "key token",
                                buf, FIG_GRID);
    double y0 = fig_y(&ax, 0);
    scene_line(c->s, ax.area.x, y0, ax.area.x + ax.area.w, y0, th->muted, 0, SCENE_RULE);
    for (int j = 0; j < n1; j++) {
        double xa = fig_x(&ax, j - 0.4), xm = fig_x(&ax, j), xb = fig_x(&ax, j + 0.4);
        double yc = fig_y(&ax, con[j]), yp = fig_y(&ax, pos[j]);
        scene_rect(c->s, xa, fmin(y0, yc), fmax(xm - xa, 1), fabs(yc - y0), th->series[0],
                   SCENE_FILL);
        scene_rect(c->s, xm, fmin(y0, yp), fmax(xb - xm, 1), fabs(yp - y0), th->series[1],
                   SCENE_FILL);
        double ys = fig_y(&ax, con[j] + pos[j]);
        scene_line(c->s, xa, ys, xb, ys, j == c->step ? th->accent : th->fg, t->hairline * 2.5, 0);
    }
    /* a universal character name takes exactly four hex digits: the d stays a letter */
    const char *names[] = {"content q\u00b7k/\u221ad", "position part", "score (sum)"};
    uint32_t cols[] = {th->series[0], th->series[1], th->fg};
    fig_legend(c->s, t, th, &ax, names, cols, 3, 1);
}

/* ---- small multiples: the layer's heads -------------------------------------------------- */

/* The grid of k thumbnails in r: cols and rows, and the side each gets (label line above). */
static double multiples_grid(const scene_target *t, fig_rect r, int k, double lh, double gap,
                             int *cols, int *rows)
{
    if (!t->cells) { /* the one rule of the multi-panel views (a wide, a column, a tall figure) */
        double content = 0;
        *cols = fig_grid_pick(r, k, 1.0, lh, 0, gap, 0, rows, &content);
        fig_rect cell = fig_grid_cell(r, *rows, *cols, 0, 0, gap);
        return fmin(cell.w, cell.h - lh);
    }
    double best = -1; /* a terminal: whole pairs of rows */
    *cols = 1;
    for (int cc = 1; cc <= k; cc++) {
        int rr = (k + cc - 1) / cc;
        double side =
            fmin((r.w - (cc - 1) * gap) / cc, 2 * floor(((r.h - (rr - 1) * gap) / rr - lh) / 2));
        if (side > best) {
            best = side;
            *cols = cc;
        }
    }
    *rows = (k + *cols - 1) / *cols;
    return best;
}

/* The smallest a head's thumbnail is drawn: about two lines of text (a causal pattern still
 * reads), two cells in a terminal. */
static double multiples_min_side(const scene_target *t)
{
    return t->cells ? 2 : fmax(2.0, round(1.6 * t->text_h));
}

static void draw_multiples(actx *c, const app_attn *a, fig_rect r, int chosen)
{
    const scene_target *t = c->t;
    const fig_theme *th = c->th;
    int nh = a->heads, n1 = c->step + 1;
    double lh = t->cells ? 2 : t->text_h * 0.9;
    double gap = t->cells ? 2 : t->text_h * 0.5;
    int cols = 1, rows = 1, first = 0, shown = nh;
    double min_side = multiples_min_side(t);
    /* Bar charts and matrices keep a readable size and say what they left out: thumbnails
     * that would be under min_side (eight heads in a paper column were 10 units, a head under
     * 2 was dropped unsaid) become fewer heads, those around the chosen one, and a line under
     * them says which ("heads 2-5 of 8"). */
    if (multiples_grid(t, r, nh, lh, gap, &cols, &rows) < min_side && nh > 1) {
        fig_rect rr = r;
        rr.h -= lh;
        shown = 0;
        for (int k = nh - 1; k >= 1 && !shown; k--)
            if (multiples_grid(t, rr, k, lh, gap, &cols, &rows) >= min_side) shown = k;
        if (!shown) return; /* not even one: the caller's note says the heads are left out */
        r = rr;
        if (chosen >= 0) first = chosen - shown / 2;
        if (first > nh - shown) first = nh - shown;
        if (first < 0) first = 0;
        /* the longest form that fits the grid's width (a paper column: "h0/4") */
        char note[64], range[32];
        if (shown == 1)
            snprintf(range, sizeof range, "%d", first);
        else
            snprintf(range, sizeof range, "%d\xe2\x80\x93%d", first, first + shown - 1);
        for (int f = 0; f < 3; f++) {
            snprintf(note, sizeof note, "%s%s%s%d",
                     f > 0        ? "h"
                     : shown == 1 ? "head "
                                  : "heads ",
                     range, f < 2 ? " of " : "/", nh);
            if (scene_text_width(t, note, t->cells ? 1 : 0.8) <= r.w) break;
        }
        text_at(c, r.x + r.w / 2, r.y + r.h + (t->cells ? 0 : 0.1 * lh), note, t->cells ? 1 : 0.8,
                SCENE_CENTER | SCENE_TOP, th->muted, 0);
    }
    for (int i = 0; i < shown; i++) {
        int h = first + i;
        fig_rect cell = fig_grid_cell(r, rows, cols, i / cols, i % cols, gap);
        double side = fmin(cell.w, cell.h - lh);
        if (t->cells) {
            side = 2 * floor(side / 2);
            cell.x = floor(cell.x);
            cell.y = 2 * floor(cell.y / 2);
        }
        if (side < 2) continue;
        scene_name_panel(c->s, "heads"); /* the small multiples, one matrix a head */
        double x = cell.x + (cell.w - side) / 2, y = cell.y + lh;
        if (t->cells) x = floor(x);
        char lab[32];
        int sel = h == chosen, g = app_attn_kv_group(a, h);
        /* grouped-query attention: the kv group the head reads ("h5 kv1"), when it fits */
        if (g >= 0) snprintf(lab, sizeof lab, sel && t->cells ? "[h%d kv%d]" : "h%d kv%d", h, g);
        if (g < 0 || scene_text_width(t, lab, t->cells ? 1 : 0.8) > cell.w)
            snprintf(lab, sizeof lab, sel && t->cells ? "[h%d]" : "h%d", h);
        text_at(c, x + side / 2, cell.y, lab, t->cells ? 1 : 0.8, SCENE_CENTER | SCENE_TOP,
                sel ? th->accent : th->fg, sel ? SCENE_BOLD : 0);
        float *m = matrix_of(c, a, h);
        if (!m) return;
        scene_heatmap(c->s, x, y, side, side, m, (size_t)n1, (size_t)n1, (size_t)n1, c->vmin,
                      c->vmax, c->map, th->mask);
        if (!t->cells) {
            scene_item *box = scene_rect(c->s, x, y, side, side, sel ? th->accent : th->muted, 0);
            if (box && sel) box->width = t->hairline * 3;
        }
    }
}

/* ---- the matrix of the chosen head ---------------------------------------------------------- */

/* with_bar: 1 draws the matrix with its colourbar; 2 draws it bare (no ticks, no axis names:
 * the compare view on a short canvas, where the labels would take most of a small square) */
/* The matrix's axes, heatmap and (with_bar) colourbar in r; bare: no ticks or axis names. */
static fig_axes matrix_axes(actx *c, fig_rect r, const float *m, int n1, int with_bar, int bare,
                            const char *lab)
{
    const scene_target *t = c->t;
    const fig_theme *th = c->th;
    if (with_bar)
        return app_draw_matrix(c->s, t, th, r, m, (size_t)n1, (size_t)n1, (size_t)n1, 0, n1, 0, n1,
                               "key j", lab, c->map, c->vmin, c->vmax, c->cbar, th->mask);
    fig_axes ax =
        fig_axes_draw(c->s, t, th, r, 0, n1, 0, n1, bare ? NULL : "key j", bare ? NULL : lab,
                      FIG_Y_DOWN | (bare ? FIG_NO_XTICKS | FIG_NO_YTICKS : 0));
    scene_heatmap(c->s, ax.area.x, ax.area.y, ax.area.w, ax.area.h, m, (size_t)n1, (size_t)n1,
                  (size_t)n1, c->vmin, c->vmax, c->map, th->mask);
    return ax;
}

static void draw_head_matrix(actx *c, app_view_ctx *vc, const app_attn *a, fig_rect r, int head,
                             int with_bar)
{
    const scene_target *t = c->t;
    const fig_theme *th = c->th;
    int n1 = c->step + 1;
    float *m = matrix_of(c, a, head);
    if (!m) return;
    scene_name_panel(c->s, "matrix"); /* the chosen head's matrix, or the heads' mean */
    const char *lab = "query i";
    /* square cells read best: no wider than the height allows (plus the labels) */
    int bare = with_bar == 2;
    if (bare) with_bar = 0;
    double extra = bare ? 0 : t->cells ? 8 : t->text_h * 3.5;
    double wmax = r.h + extra + (with_bar ? fig_colorbar_width(t) : 0); /* units are square */
    if (r.w > wmax) {
        r.x += (r.w - wmax) / 2;
        r.w = wmax;
        if (t->cells) r.x = floor(r.x);
    }
    size_t first_item = c->s->n;
    fig_axes ax = matrix_axes(c, r, m, n1, with_bar, bare, lab);
    /* nor taller than wide (issue 27: a narrow column under the projector zoom drew a 70x170 px
     * matrix): the height gives way, laid out again at the square, and the scene hears that the
     * matrix got less than its room's height, so zoomed text steps down first (views.c) */
    if (!t->cells && fabs(ax.area.h - ax.area.w) > 1) {
        if (ax.area.h > ax.area.w * 1.15) scene_note_squeeze(c->s);
        double cut = ax.area.h - ax.area.w; /* > 0: too tall; < 0: too wide (the labels took
                                               less than the estimate above) */
        if (cut > 0) {
            r.y += cut / 2;
            r.h -= cut;
        } else {
            r.x -= cut / 2;
            r.w += cut;
        }
        c->s->n = first_item; /* the first try's items go; the arena keeps their bytes */
        ax = matrix_axes(c, r, m, n1, with_bar, bare, lab);
    }
    if (!t->cells) { /* the current step is the last row */
        double y0 = fig_y(&ax, c->step), y1 = fig_y(&ax, c->step + 1);
        scene_rect(c->s, ax.area.x, fmin(y0, y1), ax.area.w, fabs(y1 - y0), th->accent, 0);
    }
    if (!vc) return;
    vc->main = ax;
    vc->has_main = 1;
    vc->main_rows = n1;
    vc->main_cols = n1;
    if (c->st->cursor_on) {
        int i = c->st->cur_r < n1 ? c->st->cur_r : n1 - 1;
        int j = c->st->cur_c < n1 ? c->st->cur_c : n1 - 1;
        app_draw_cell_cursor(c->s, t, th, &ax, i, j);
        if (j > i) {
            snprintf(vc->readout, sizeof vc->readout,
                     "query %d \"%s\", key %d: masked (the future)", i, a->tok[i].word, j);
        } else {
            int h0 = head >= 0 ? head : 0, h1 = head >= 0 ? head + 1 : a->heads;
            double w = 0;
            for (int h = h0; h < h1; h++)
                w += app_attn_matrix(a, c->layer, h)[(size_t)i * a->cap + j] / (h1 - h0);
            snprintf(vc->readout, sizeof vc->readout,
                     "query %d \"%s\" -> key %d \"%s\": attention %.4f", i, a->tok[i].word, j,
                     a->tok[j].word, w);
        }
    }
}

/* ---- top-5 ------------------------------------------------------------------------------ */

/* The vocabulary's text of token id (into buf). */
static const char *vocab_word(const app_attn *a, int id, char *buf, size_t n)
{
    app_attn_vocab_text(a, id, buf, n); /* escaped: a byte token may be a line break */
    return buf;
}

static void draw_top5(actx *c, const app_attn *a, fig_rect r, int compact)
{
    const scene_target *t = c->t;
    const fig_theme *th = c->th;
    const int *ids = a->top_id + (size_t)c->step * APP_ATTN_TOPK;
    const float *ps = a->top_p + (size_t)c->step * APP_ATTN_TOPK;
    double lh = line_h(t), size = t->cells ? 1 : 0.85;
    char buf[160], cut[160], wb[64];
    int nxt = c->step + 1 < a->n ? a->tok[c->step + 1].id : -1;
    scene_name_panel(c->s, "next-token");
    if (compact) { /* one line: "next: ball .41  toy .12 ..." */
        /* as many whole candidates as fit: a list loses its tail, never half a word */
        size_t u = (size_t)snprintf(buf, sizeof buf, "next:");
        for (int k = 0; k < APP_ATTN_TOPK && u < sizeof buf; k++) {
            size_t before = u;
            char pk[32];
            fig_fixed(ps[k], 2, 0, pk, sizeof pk);
            u += (size_t)snprintf(buf + u, sizeof buf - u, " %s %s",
                                  vocab_word(a, ids[k], wb, sizeof wb), pk);
            if (k > 0 && (u >= sizeof buf || scene_text_width(t, buf, size) > r.w)) {
                buf[before] = '\0';
                break;
            }
        }
        text_at(c, r.x, r.y, fit(c, 0, buf, size, r.w, cut, sizeof cut), size,
                SCENE_LEFT | SCENE_TOP, th->fg, 0);
        return;
    }
    snprintf(buf, sizeof buf, "next token after \"%s\":", a->tok[c->step].word);
    /* a narrow column keeps the short header whole rather than cut the word off */
    /* measured bold, as it is drawn (measured plain it ran under the colourbar at 150%) */
    if (scene_text_width_bold(t, buf, size) > r.w) snprintf(buf, sizeof buf, "next token:");
    if (scene_text_width_bold(t, buf, size) > r.w) snprintf(buf, sizeof buf, "next:");
    text_at(c, r.x, r.y, fit(c, 0, buf, size, r.w, cut, sizeof cut), size, SCENE_LEFT | SCENE_TOP,
            th->fg, SCENE_BOLD);
    double y = r.y + lh;
    double pw = t->cells ? 6 : scene_text_width(t, "0.000 ", size);
    double ww = t->cells ? 11 : scene_text_width(t, "something ", size);
    /* a column narrower than a number and a word (a paper column): two decimals, and the word
     * in what is left of the column, never past it (it ran under the colourbar) */
    int decimals = 3;
    if (pw + ww > r.w) {
        decimals = 2;
        pw = t->cells ? 5 : scene_text_width(t, "0.00 ", size);
        ww = fmax(0, r.w - pw);
    }
    double bw = r.w - pw - ww;
    /* the bars are drawn relative to the likeliest candidate (the numbers give the
     * probabilities), so the first is the column's width and none is a sliver of it; a
     * column too narrow for readable bars has the numbers alone */
    double pmax = ps[0] > 0 ? ps[0] : 1;
    if (!t->cells && bw < fig_min_bar(t) * 4) bw = 0;
    for (int k = 0; k < APP_ATTN_TOPK && y + lh <= r.y + r.h + 1e-9; k++) {
        int hit = ids[k] == nxt;
        fig_fixed(ps[k], decimals, 0, buf, sizeof buf);
        text_at(c, r.x, y, buf, size, SCENE_LEFT | SCENE_TOP, th->fg, 0);
        const char *w = ids[k] == a->m.info.eos ? "\xc2\xb6" : vocab_word(a, ids[k], wb, sizeof wb);
        text_at(c, r.x + pw, y,
                fit(c, 1, w, size, ww - (t->cells ? 1 : t->char_w), cut, sizeof cut), size,
                SCENE_LEFT | SCENE_TOP, hit ? th->accent : th->fg, hit ? SCENE_BOLD : 0);
        if (bw > 2) {
            double len = ps[k] / pmax * bw;
            if (t->cells) len = round(len);
            if (len > 0)
                scene_rect(c->s, r.x + pw + ww, y + (t->cells ? 0 : lh * 0.2), len,
                           t->cells ? 2 : lh * 0.6, hit ? th->accent : th->series[0],
                           SCENE_FILL | SCENE_HBAR);
        }
        y += lh;
    }
    if (nxt >= 0 && y + lh <= r.y + r.h + 1e-9) {
        char p3[32], p2[32];
        fig_fixed(a->next_p[c->step], 3, 0, p3, sizeof p3);
        fig_fixed(a->next_p[c->step], 2, 0, p2, sizeof p2);
        snprintf(buf, sizeof buf, "came next: \"%s\" p=%s (rank %d)%s", a->tok[c->step + 1].word,
                 p3, a->next_rank[c->step] + 1, a->tok[c->step + 1].generated ? ", generated" : "");
        /* a narrow column keeps the word and its p whole: the rank goes first, then the words */
        if (scene_text_width(t, buf, size) > r.w)
            snprintf(buf, sizeof buf, "came next: \"%s\" p=%s", a->tok[c->step + 1].word, p3);
        if (scene_text_width(t, buf, size) > r.w)
            snprintf(buf, sizeof buf, "next: \"%s\" %s", a->tok[c->step + 1].word, p2);
        text_at(c, r.x, y, fit(c, 0, buf, size, r.w, cut, sizeof cut), size, SCENE_LEFT | SCENE_TOP,
                th->muted, 0);
    }
}

static double top5_height(const scene_target *t)
{
    return line_h(t) * (APP_ATTN_TOPK + 2);
}

/* ---- the position experiment's gauge ---------------------------------------------------- */

/* 1 when a's model runs with a base or slopes other than the trained ones. */
static int experiment_on(const actx *c, const app_attn *a)
{
    return ((a->caps & LMI_CAN_ROPE_BASE) && c->st->attn.rope_base > 0 &&
            a->base != a->trained_base) ||
           ((a->caps & LMI_CAN_ALIBI_SCALE) && c->st->attn.alibi_scale != 1);
}

static double gauge_height(const scene_target *t)
{
    /* its text may take two lines in a narrow column */
    return t->cells ? 4 : t->text_h * 3.9;
}

/* "base now / trained" and a ruler with the trained value marked and the value in use. */
static void draw_gauge(actx *c, const app_attn *a, fig_rect r)
{
    const scene_target *t = c->t;
    const fig_theme *th = c->th;
    char buf[200], cut[200];
    double now, trained, lo, hi;
    int lg;
    int rope = (a->caps & LMI_CAN_ROPE_BASE) != 0;
    if (rope) {
        now = a->base;
        trained = a->trained_base;
        lo = fmin(now, trained) / 8;
        hi = fmax(now, trained) * 8;
        lg = 1;
        if (t->cells)
            snprintf(buf, sizeof buf, "base %s \xe2\x97\x8f trained %s \xe2\x94\xbc", NUMS(now, 6),
                     NUMS(trained, 6));
        else
            snprintf(buf, sizeof buf, "RoPE base %s in use; trained with %s", NUM(now, 6),
                     NUM(trained, 6));
    } else {
        now = c->st->attn.alibi_scale;
        trained = 1;
        lo = 0;
        hi = fmax(2, now * 1.25);
        lg = 0;
        int h = c->head >= 0 ? c->head : 0;
        if (t->cells)
            snprintf(buf, sizeof buf, "slopes x%s \xe2\x97\x8f trained x1 \xe2\x94\xbc",
                     NUMS(now, 3));
        else
            snprintf(buf, sizeof buf, "ALiBi slopes x%s (head %d: m=%s, trained %s)", NUM(now, 4),
                     h, NUM(a->slopes[h], 4), NUM(a->trained_slopes[h], 4));
    }
    /* a narrow column: the size steps down, then the short form, on two lines if it must
     * (the gauge is then a line shorter: the ruler sits closer) */
    double size = t->cells ? 1 : 0.85;
    while (!t->cells && size > 0.6 && scene_text_width(t, buf, size) > r.w) size -= 0.05;
    char second[64] = "";
    if (scene_text_width(t, buf, size) > r.w) {
        if (t->cells)
            snprintf(buf, sizeof buf, "%s \xe2\x97\x8f trained %s \xe2\x94\xbc", NUMS(now, 6),
                     NUMS(trained, 6));
        else
            snprintf(buf, sizeof buf, "%s %s, trained %s", rope ? "base" : "x", NUM(now, 6),
                     NUM(trained, 6));
    }
    if (!t->cells && scene_text_width(t, buf, size) > r.w) {
        snprintf(buf, sizeof buf, "%s %s,", rope ? "base" : "x", NUMS(now, 6));
        snprintf(second, sizeof second, "trained %s", NUMS(trained, 6));
        size = 0.85;
        while (size > 0.6 &&
               (scene_text_width(t, buf, size) > r.w || scene_text_width(t, second, size) > r.w))
            size -= 0.05;
    }
    text_at(c, r.x, r.y, fit(c, 0, buf, size, r.w, cut, sizeof cut), size, SCENE_LEFT | SCENE_TOP,
            th->fg, 0);
    if (second[0])
        text_at(c, r.x, r.y + t->text_h * size, fit(c, 0, second, size, r.w, cut, sizeof cut), size,
                SCENE_LEFT | SCENE_TOP, th->fg, 0);
    double y = r.y + (t->cells ? 2 : t->text_h * (second[0] ? 1.6 + size * 0.75 : 1.6));
    double x0 = r.x + (t->cells ? 0 : t->char_w), w = r.w - (t->cells ? 1 : 2 * t->char_w);
#define GX(v) (x0 + w * (lg ? log((v) / lo) / log(hi / lo) : ((v)-lo) / (hi - lo)))
    if (t->cells) {
        int cols = (int)w;
        if (cols < 4) return;
        char *ruler = scene_alloc(c->s, (size_t)cols * 3 + 1);
        if (!ruler) return;
        for (int i = 0; i < cols; i++) memcpy(ruler + 3 * i, "\xe2\x94\x80", 3); /* ─ */
        ruler[3 * cols] = '\0';
        text_at(c, x0, y, ruler, 1, SCENE_LEFT | SCENE_TOP, th->muted, 0);
        int tc = (int)floor(GX(trained) - x0), nc = (int)floor(GX(now) - x0);
        if (tc >= cols) tc = cols - 1;
        if (nc >= cols) nc = cols - 1;
        text_at(c, x0 + tc, y, "\xe2\x94\xbc", 1, SCENE_LEFT | SCENE_TOP, th->fg, SCENE_BOLD);
        text_at(c, x0 + nc, y, "\xe2\x97\x8f", 1, SCENE_LEFT | SCENE_TOP, th->accent, SCENE_BOLD);
        return;
    }
    scene_line(c->s, x0, y, x0 + w, y, th->muted, t->hairline * 2, 0);
    double tx = GX(trained), nx = GX(now);
    scene_line(c->s, tx, y - t->text_h * 0.45, tx, y + t->text_h * 0.45, th->fg, t->hairline * 2,
               0);
    scene_text(c->s, tx, y + t->text_h * 0.5, "trained", 0.7, SCENE_CENTER | SCENE_TOP, th->fg, 0);
    scene_circle(c->s, nx, y, t->text_h * 0.3, th->accent, 0, SCENE_FILL);
#undef GX
}

/* ---- common parts of both views ---------------------------------------------------------- */

static int attn_validate(const app_state *st, char *err, size_t errlen)
{
    char path[1100];
    if (app_attn_model_path(st->attn.model_name, path, sizeof path, err, errlen) < 0) return -1;
    if (!st->attn.prompt[0] && st->attn.preset[0]) {
        char text[64];
        if (app_attn_preset_text(st->attn.preset, text, sizeof text, err, errlen) < 0) return -1;
    }
    if (st->attn.shift > 65536) {
        snprintf(err, errlen,
                 "--shift %d: the attention views build positions up to the shift plus the "
                 "context (allowed 0..65536)",
                 st->attn.shift);
        return -1;
    }
    return 0;
}

/* Bring run `which` up to date and check the layer and head against its model. */
static app_attn *get_run(app_view_ctx *vc, const app_state *st, int which, const char *name,
                         char *err, size_t errlen)
{
    app_attn *a = app_attn_of(vc, which);
    if (!a) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (app_attn_update(a, st, name, err, errlen) < 0) return NULL;
    if (st->attn.layer >= a->layers) {
        snprintf(err, errlen, "--layer %d: the %s model has %d layers (allowed 0..%d)",
                 st->attn.layer, a->label, a->layers, a->layers - 1);
        return NULL;
    }
    if (st->head >= a->heads) {
        snprintf(err, errlen, "--head %d: the %s model has %d heads (allowed all|0..%d)", st->head,
                 a->label, a->heads, a->heads - 1);
        return NULL;
    }
    if (st->attn.step >= a->n) {
        snprintf(err, errlen, "--step %d: the text has %d tokens (allowed 0..%d, -1 = the last)",
                 st->attn.step, a->n, a->n - 1);
        return NULL;
    }
    return a;
}

/* What a shift does to a scheme, for the notice. */
static const char *shift_why(const char *pe)
{
    static const char *const why[][2] = {
        {"rope", "rope: only i - j counts"},
        {"alibi", "alibi: only i - j counts"},
        {"t5", "t5: only the bucket of i - j counts"},
        {"nope", "nope: no positions at all"},
        {"learned", "learned: a vector per absolute position"},
    };
    for (size_t i = 0; i < sizeof why / sizeof why[0]; i++)
        if (pe && strcmp(pe, why[i][0]) == 0) return why[i][1];
    return "sinusoidal: absolute positions";
}

/* LongRoPE (the model's own config or --scaling longrope): which factor set the rows were
 * computed with, as transformers picks it by the tokens held (short_factor up to L0, long_factor
 * past it); "" for every other model. */
static void longrope_set(const app_attn *a, char *buf, size_t n)
{
    pe_rope_scaling sc = lmi_rope_scaling_now(&a->s);
    buf[0] = '\0';
    if (sc.type == PE_SCALING_LONGROPE)
        snprintf(buf, n, "  longrope: %s factors (%d tokens, L0 = %d)",
                 pe_longrope_long(&sc) ? "long" : "short", a->s.offset + a->s.len, sc.original_ctx);
}

/* The subtitle: lead (the text and the step, what the run made of them), then the rows that act
 * (app_subtitle_less): a RoPE base or ALiBi slopes only where the run's model has them, the
 * RoPE scaling only where it applies it. */
static void attn_subtitle(const app_state *st, const app_attn *a, const char *lead, char *buf,
                          size_t n)
{
    char out[96], rows[300];
    snprintf(out, sizeof out, "%s%s%s", a->caps & LMI_CAN_ROPE_BASE ? "" : " rope-base",
             a->caps & LMI_CAN_ALIBI_SCALE ? "" : " alibi-scale",
             a->scaled ? "" : " scaling factor");
    app_subtitle_less(st, out, rows, sizeof rows);
    char lr[80];
    longrope_set(a, lr, sizeof lr);
    int w = snprintf(buf, n, "%s%s%s", lead, rows[0] ? "  " : "", rows);
    if (w >= 0 && (size_t)w < n) snprintf(buf + w, n - (size_t)w, "%s", lr);
}

/* A compare panel's experiments line, after the model's name: "  shift +10  base 2500 (trained)".
 */
static void experiments(const actx *c, const app_attn *a, char *buf, size_t n)
{
    const app_state *st = c->st;
    size_t u = 0;
    buf[0] = '\0';
#define ADD(...)                                                                                   \
    do {                                                                                           \
        if (u < n) {                                                                               \
            int w_ = snprintf(buf + u, n - u, __VA_ARGS__);                                        \
            if (w_ > 0) u += (size_t)w_;                                                           \
        }                                                                                          \
    } while (0)
    if (st->attn.shift) ADD("  shift +%d", st->attn.shift);
    if (a->caps & LMI_CAN_ROPE_BASE)
        ADD("  base %s%s", NUMS(a->base, 6), a->base == a->trained_base ? " (trained)" : "");
    if (a->scaled) {
        static const char *const names[] = {"none", "linear", "ntk",     "dynamic",
                                            "yarn", "llama3", "longrope"};
        int k = a->key.scaling;
        ADD("  %s x%s over %d", k >= 0 && k < 7 ? names[k] : "scaling", NUM(a->key.factor, 6),
            a->s.scaling.original_ctx); /* L0: --orig-ctx, or the model's context */
    }
    char lr[80];
    longrope_set(a, lr, sizeof lr);
    ADD("%s", lr);
    if (a->caps & LMI_CAN_ALIBI_SCALE)
        ADD("  slopes x%s%s", NUM(st->attn.alibi_scale, 6),
            st->attn.alibi_scale == 1 ? " (trained)" : "");
    if (st->attn.generate > 0) ADD("  %s", st->attn.temperature > 0 ? "sampled" : "greedy");
    if (st->attn.generate > 0 && st->attn.temperature > 0)
        ADD(" T=%s seed %d", NUM(st->attn.temperature, 6), st->attn.gen_seed);
#undef ADD
}

static void text_name(const app_state *st, char *buf, size_t n)
{
    if (st->attn.ids[0]) /* --ids wins over the prompt and the preset (app_attn's run) */
        snprintf(buf, n, "token ids");
    else if (st->attn.prompt[0])
        snprintf(buf, n, "typed prompt");
    else if (st->attn.preset[0])
        snprintf(buf, n, "preset %.50s", st->attn.preset);
    else
        snprintf(buf, n, "no prompt");
}

/* The notice line: the run's notice, the shift's effect, panels left out. */
static void notice_line(const actx *c, const app_attn *a, const char *dropped, char *buf, size_t n)
{
    size_t u = 0;
    buf[0] = '\0';
    if (c->st->attn.shift > 0 && a->shift_diff >= 0)
        u += (size_t)snprintf(buf, n,
                              "shift +%d: attention moved by at most %s, the pattern %s (%s). ",
                              c->st->attn.shift, NUM(a->shift_diff, 2),
                              a->shift_diff < 1e-4 ? "stays" : "changes", shift_why(a->pe));
    if (a->notice[0] && u < n) u += (size_t)snprintf(buf + u, n - u, "%s ", a->notice);
    if (dropped && dropped[0] && u < n) snprintf(buf + u, n - u, "%s", dropped);
}

/* Wrapped text in r (at most max_lines lines); returns the height used. */
static double draw_wrapped(actx *c, fig_rect r, const char *text, uint32_t color, int max_lines)
{
    const scene_target *t = c->t;
    double size = t->cells ? 1 : 0.85, lh = t->cells ? 2 : t->text_h * size * 1.2;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", text);
    char *p = buf;
    int lines = 0;
    while (*p && lines < max_lines) {
        while (*p == ' ') p++;
        if (!*p) break;
        /* the longest prefix ending at a space that fits */
        char *cut = NULL;
        for (char *q = p;; q++) {
            if (*q == ' ' || !*q) {
                char save = *q;
                *q = '\0';
                int fits = scene_text_width(t, p, size) <= r.w;
                *q = save;
                if (!fits) break;
                cut = q;
                if (!*q) break;
            }
        }
        if (!cut) cut = p + strcspn(p, " ");
        char save = *cut;
        *cut = '\0';
        char fitted[1024];
        text_at(c, r.x, r.y + lines * lh, fit(c, 0, p, size, r.w, fitted, sizeof fitted), size,
                SCENE_LEFT | SCENE_TOP, color, 0);
        *cut = save;
        p = cut;
        lines++;
    }
    while (*p == ' ') p++;
    if (*p) scene_note_cut(c->s, p); /* lines that did not fit: the notice was shortened */
    return lines * lh;
}

/* 1 when the model splits its scores (draw_split has something to draw); else the reason goes
 * in one short line at the top of *r, which shrinks, and the caller keeps the attends-to list
 * (rope, learned and sinusoidal mix position into q and k). */
static int split_or_reason(actx *c, const app_attn *a, fig_rect *r, int head)
{
    int h = head >= 0 ? head : 0;
    if (app_attn_content(a, c->step, c->layer, h) && app_attn_position(a, c->step, c->layer, h) &&
        app_attn_row(a, c->step, c->layer, h))
        return 1;
    char buf[320];
    snprintf(buf, sizeof buf, "no split: %s", a->split_msg);
    /* one line from about 50 columns; a narrow terminal column wraps it rather than cut it */
    double used = draw_wrapped(c, *r, buf, c->th->muted, 3);
    double gap = c->t->cells ? 0 : c->t->text_h * 0.3;
    r->y += used + gap;
    r->h -= used + gap;
    return 0;
}

static void actx_init(actx *c, scene *s, const scene_target *t, const app_state *st,
                      const app_attn *a)
{
    memset(c, 0, sizeof *c);
    c->s = s;
    c->t = t;
    c->th = fig_theme_get(st->dark);
    c->st = st;
    c->a = a;
    c->step = app_attn_step(a, st);
    c->layer = st->attn.layer;
    c->head = st->head;
    scale_init(c);
}

/* ---- the attention view ------------------------------------------------------------------ */

/* The main panels in r: with --split the score parts first and the bars second, else the bars
 * and then the matrix; the second below the first (stacked), or beside it, square: as wide as
 * the height leaves it (plus its labels), at most max_frac of the width. */
static void draw_main_panels(actx *c, app_view_ctx *vc, const app_attn *a, const app_state *st,
                             fig_rect r, int stacked, double max_frac, double gap)
{
    const scene_target *t = c->t;
    fig_mark_main(c->s, r, "attends-to bars and matrix");
    int split = st->attn.split && split_or_reason(c, a, &r, c->head);
    fig_rect first = r, second;
    if (stacked) {
        first.h = r.h * (split ? 0.5 : 0.45);
        second = (fig_rect){r.x, r.y + first.h + gap, r.w, r.h - first.h - gap};
    } else {
        second = fig_take_right(&first, fmin(r.w * max_frac, r.h + t->text_h * 1.5), gap * 2);
    }
    if (split) {
        draw_split(c, a, first, c->head);
        draw_bars(c, a, second, c->head);
    } else {
        draw_bars(c, a, first, c->head);
        draw_head_matrix(c, vc, a, second, c->head, 0);
    }
}

static int attention_build(app_view_ctx *vc, const app_state *st, scene *s, const scene_target *t,
                           char *err, size_t errlen)
{
    app_attn *a = get_run(vc, st, 0, st->attn.model_name, err, errlen);
    if (!a) return -1;
    actx c;
    actx_init(&c, s, t, st, a);
    const fig_theme *th = c.th;
    char title[256], sub[512], lead[200], tn[64], hb[48];
    const app_attn_token *cur = &a->tok[c.step];
    snprintf(title, sizeof title, "%s model: what \"%s\" (token %d) attends to, layer %d, %s",
             a->label, cur->word, c.step, c.layer, head_name(&c, c.head, hb, sizeof hb));
    /* a title that would take three lines (a column 2.2x3.5in) without the token's number
     * (the subtitle's step) and "model", so the panels keep that line */
    if (!t->cells && scene_text_width_bold(t, title, 1.25 * 0.8) > 2 * (t->width - 1.2 * t->text_h))
        snprintf(title, sizeof title, "%s: what \"%s\" attends to, layer %d, %s", a->label,
                 cur->word, c.layer, head_name(&c, c.head, hb, sizeof hb));
    text_name(st, tn, sizeof tn);
    char gen[48] = "", ntok[48];
    if (a->n > a->n_prompt) snprintf(gen, sizeof gen, " + %d generated", a->n - a->n_prompt);
    if (a->n_text > a->n_prompt)
        snprintf(ntok, sizeof ntok, "the first %d of %d tokens", a->n_prompt, a->n_text);
    else
        snprintf(ntok, sizeof ntok, "%d tokens", a->n_prompt);
    snprintf(lead, sizeof lead, "%s: %s%s  step %d of %d", tn, ntok, gen, c.step, a->n - 1);
    attn_subtitle(st, a, lead, sub, sizeof sub);
    fig_rect r = app_frame(s, t, th, title, sub);
    if (getenv("DBG"))
        fprintf(stderr, "DBG %gx%g text_h %g char_w %g r %g %g %g %g lines %.1f\n", t->width,
                t->height, t->text_h, t->char_w, r.x, r.y, r.w, r.h, r.h / t->text_h);
    const float *row = row_of(&c, a, c.head);
    if (!row) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double gap = t->cells ? 1 : t->text_h * 0.5;
    char dropped[256] = "", note[768];

    if (t->cells) {
        /* the terminal: strip, notice, then columns: bars | heads | next tokens */
        int rows = (int)(r.h / 2);
        int strip_lines = rows >= 22 ? 3 : rows >= 14 ? 2 : 1;
        double used = draw_strip(&c, a, r, row, strip_lines);
        r.y += used;
        r.h -= used;
        notice_line(&c, a, "", note, sizeof note);
        int want_matrix = c.head >= 0 && r.w >= 150 && r.h >= 36;
        int want_mult = r.w >= 72 && r.h >= 12;
        if (!want_mult)
            snprintf(dropped, sizeof dropped, "small multiples left out: %dx%d is small.",
                     (int)t->width, (int)(t->height / 2));
        else if (c.head >= 0 && !want_matrix)
            snprintf(dropped, sizeof dropped,
                     "head %d is outlined in the small multiples (its own matrix shows from "
                     "150x40).",
                     c.head);
        notice_line(&c, a, dropped, note, sizeof note);
        if (note[0]) {
            double h = draw_wrapped(&c, r, note, th->muted, r.h >= 24 ? 3 : 2);
            r.y += h;
            r.h -= h;
        }
        if (r.h < 6) return 0;
        double right_w = fmin(28, floor(r.w * 0.27));
        fig_rect right = fig_take_right(&r, right_w, 2);
        if (experiment_on(&c, a)) {
            fig_rect g = {right.x, right.y, right.w, 4};
            draw_gauge(&c, a, g);
            right.y += 6;
            right.h -= 6;
        }
        draw_top5(&c, a, right, 0);
        fig_rect mid = {0, 0, 0, 0};
        if (want_mult) {
            double mw = floor(r.w * (want_matrix ? 0.3 : 0.55));
            mid = fig_take_right(&r, mw, 2);
            fig_rect bar = fig_take_right(&mid, fig_colorbar_width(t), 1);
            draw_multiples(&c, a, mid, c.head);
            bar.y = mid.y + 4; /* the scale's name goes on the row above the bar */
            bar.h = mid.h - 4;
            fig_colorbar(s, t, th, bar, c.vmin, c.vmax, c.map, cells_scale(c.kind));
            if (want_matrix) {
                fig_rect mr = fig_take_right(&r, floor(r.w * 0.5), 2);
                draw_head_matrix(&c, vc, a, mr, c.head, 0);
            }
        }
        fig_mark_main(s, r, "attends-to list");
        if (st->attn.split && split_or_reason(&c, a, &r, c.head))
            draw_split(&c, a, r, c.head);
        else
            draw_bars(&c, a, r, c.head);
        return 0;
    }

    /* pixels: strip, notice, then a left column (bars, matrix) and a right one (heads, gauge,
     * next tokens). A short canvas (the window under a projector zoom) gives up space in
     * order: the strip keeps fewer lines around the current token, the bars and the matrix go
     * side by side instead of one above the other, the head thumbnails and the next-token list
     * shrink (fewer rows), and the bars show the most recent tokens rather than thinner bars;
     * the bars and the matrix (the main panel) are never left out. */
    int tall = r.h >= t->text_h * 17;
    int strip_lines = tall ? 4 : r.h >= t->text_h * 12 ? 2 : 1;
    /* a narrow figure (a column 2.2x3.5in) keeps two lines of the strip: its row of heads
     * under the panels needs the height more */
    if (r.w < t->text_h * 24 && strip_lines > 2) strip_lines = 2;
    double used = draw_strip(&c, a, r, row, strip_lines);
    r.y += used + gap * 0.5;
    r.h -= used + gap * 0.5;
    notice_line(&c, a, dropped, note, sizeof note);
    if (note[0]) {
        double h = draw_wrapped(&c, r, note, th->accent, 2);
        r.y += h + gap * 0.3;
        r.h -= h + gap * 0.3;
    }
    int exp = experiment_on(&c, a);
    /* A tall, narrow figure (a column 2.2x3.5in, a phone): the right column would leave the
     * bars and the matrix a sliver, so it becomes a row under them: the heads and their
     * colourbar, then the gauge and the next tokens beside them. */
    if (r.w < 1.3 * r.h && r.w < t->text_h * 24) {
        /* The bars and the matrix side by side take the height the square matrix needs at half
         * the width (no band of empty space under it: at 2.2x3.5in it was a third of their
         * room), but at least 30% of the figure (the plot an exported figure is about) and at
         * most two thirds of what is left; the row under them takes the rest. */
        int n1 = c.step + 1;
        fig_rect half = {r.x, r.y, floor(r.w * 0.5) - gap * 2, r.h};
        double need = fig_axes_outer_for(t, th, half, 0, n1, 0, n1, "key j", "query i", FIG_Y_DOWN,
                                         1.0, 0, NULL)
                          .h;
        double main_h = fmin(fmax(need, ceil(0.3 * t->height)), floor(r.h * 0.66));
        fig_rect low = fig_take_bottom(&r, fmax(floor(r.h * 0.34), r.h - main_h - gap), gap);
        /* the next tokens' list is narrow ("0.087 ball"): the heads take the rest */
        /* the colourbar across the bottom of the row, its name left of it: beside the heads it
         * took more than half their width (they were 10 units) */
        fig_rect cbr = fig_take_bottom(&low, fig_colorbar_side_height(t), gap);
        fig_rect side = fig_take_right(&low, floor(low.w * 0.36), gap * 2);
        if (exp) draw_gauge(&c, a, fig_take_bottom(&side, gauge_height(t), gap));
        draw_top5(&c, a, side, 0);
        draw_multiples(&c, a, low, c.head);
        /* the scale's name without its "(linear)" (the subtitle says it) */
        char cb[sizeof c.cbar];
        snprintf(cb, sizeof cb, "%s", c.cbar);
        cb[strcspn(cb, " (")] = '\0';
        double name_w = ceil(scene_text_width(t, cb, 1.0)) + t->text_h * 0.6;
        /* half a tick label right of the bar: its end value is centred on its end */
        fig_colorbar_h_side(s, t, th,
                            (fig_rect){cbr.x + name_w, cbr.y, cbr.w - name_w - t->text_h, 0},
                            c.vmin, c.vmax, c.map, cb);
        /* one above the other when taller than wide, else side by side */
        draw_main_panels(&c, vc, a, st, r, r.h > r.w, 0.5, gap);
        return 0;
    }
    /* the right column: wider on a short canvas when it also holds the experiment's gauge */
    fig_rect right = fig_take_right(&r, floor(r.w * (tall ? 0.38 : exp ? 0.42 : 0.34)), gap * 2);
    /* the next tokens: a list, or one line when the column is short and the gauge needs room */
    int t5_line = !tall && exp;
    double t5_h = t5_line ? line_h(t) : fmin(top5_height(t), right.h * 0.45);
    double g_h = exp ? gauge_height(t) + gap : 0;
    /* the colourbar beside the thumbnails, or along the whole column when their height is
     * too short for its name */
    double name_h = scene_text_width(t, c.cbar, 1.0) + t->text_h * 2;
    int bar_full = right.h - t5_h - gap - g_h < name_h;
    fig_rect bar = {0, 0, 0, 0}, t5;
    /* the one line runs under the colourbar too */
    if (t5_line) t5 = fig_take_bottom(&right, t5_h, gap);
    double col_bottom = right.y + right.h;
    if (bar_full) bar = fig_take_right(&right, fig_colorbar_width(t), t->char_w);
    if (!t5_line) t5 = fig_take_bottom(&right, t5_h, gap);
    draw_top5(&c, a, t5, t5_line);
    if (exp) {
        fig_rect g = fig_take_bottom(&right, gauge_height(t), gap);
        draw_gauge(&c, a, g);
    }
    if (!bar_full) bar = fig_take_right(&right, fig_colorbar_width(t), t->char_w);
    draw_multiples(&c, a, right, c.head);
    bar.y = right.y + t->text_h;
    /* half a line below the bar for its end tick's label */
    bar.h = (bar_full ? col_bottom - right.y : right.h) - t->text_h * 1.5;
    fig_colorbar(s, t, th, bar, c.vmin, c.vmax, c.map, c.cbar);
    /* the second panel below the first on a tall canvas, beside it on a short one */
    draw_main_panels(&c, vc, a, st, r, tall, 0.42, gap);
    return 0;
}

/* The numbers: the matrix so far of the chosen head (heads of the layer with --head all), or
 * with --split the current token's content, position and weight rows. */
/* Tokens 0..n1-1 of a as list b of out's token texts: the strip's words (escaped, cut). */
static void put_tokens(app_data *out, const app_attn *a, size_t b, int n1)
{
    for (int i = 0; i < n1 && (size_t)i < out->tok_n; i++)
        snprintf(out->tok + (b * out->tok_n + (size_t)i) * APP_DATA_TOK, APP_DATA_TOK, "%s",
                 a->tok[i].word);
}

static int attention_data(app_view_ctx *vc, const app_state *st, app_data *out, char *err,
                          size_t errlen)
{
    app_attn *a = get_run(vc, st, 0, st->attn.model_name, err, errlen);
    if (!a) return -1;
    int step = app_attn_step(a, st), n1 = step + 1;
    size_t cap = (size_t)a->cap;
    if (st->attn.split && a->split) {
        int h = st->head >= 0 ? st->head : 0;
        if (app_data_alloc(out, 2, 3, (size_t)n1, 0, err, errlen) < 0) return -1;
        const float *rows[3] = {app_attn_content(a, step, st->attn.layer, h),
                                app_attn_position(a, step, st->attn.layer, h),
                                app_attn_row(a, step, st->attn.layer, h)};
        for (int k = 0; k < 3; k++)
            for (int j = 0; j < n1; j++) out->data[(size_t)k * n1 + j] = rows[k][j];
        if (app_data_tokens(out, 2u, 1, (size_t)n1, err, errlen) < 0) return -1;
        put_tokens(out, a, 0, n1);
        snprintf(out->what, sizeof out->what,
                 "(3, key): content q.k/sqrt(d), position part, attention weight of token %d, "
                 "%s model layer %d head %d",
                 step, a->label, st->attn.layer, h);
        return 0;
    }
    int h0 = st->head >= 0 ? st->head : 0, nh = st->head >= 0 ? 1 : a->heads;
    if (app_data_alloc(out, st->head >= 0 ? 2 : 3, st->head >= 0 ? (size_t)n1 : (size_t)nh,
                       (size_t)n1, (size_t)n1, err, errlen) < 0)
        return -1;
    if (app_data_tokens(out, st->head >= 0 ? 3u : 6u, 1, (size_t)n1, err, errlen) < 0) return -1;
    put_tokens(out, a, 0, n1);
    for (int h = 0; h < nh; h++) {
        const float *m = app_attn_matrix(a, st->attn.layer, h0 + h);
        for (int i = 0; i < n1; i++)
            for (int j = 0; j < n1; j++)
                out->data[((size_t)h * n1 + i) * n1 + j] = m[(size_t)i * cap + j];
    }
    char hb[160];
    int g = app_attn_kv_group(a, st->head);
    if (st->head >= 0 && g >= 0)
        snprintf(hb, sizeof hb, "head %d (kv group %d of %d)", st->head, g, a->m.info.kv_heads);
    else if (st->head >= 0)
        snprintf(hb, sizeof hb, "head %d", st->head);
    else
        app_attn_kv_groups_text(a, hb, sizeof hb);
    snprintf(out->what, sizeof out->what,
             "%s: attention weights (rows: query token 0..%d, cols: key token; NaN = the "
             "future), %s model layer %d, %s%s",
             st->head >= 0 ? "(query, key)" : "(head, query, key)", step, a->label, st->attn.layer,
             st->head >= 0 ? hb : "every head", st->head >= 0 ? "" : hb);
    return 0;
}

/* ---- the explorer's side: keys, autoplay, keeping the state inside the model ------------- */

static int is_compare(const app_state *st)
{
    return app_view_at((size_t)st->view) == &app_view_compare;
}

/* The run of --model (which 0) or --compare (which 1), brought up to date; NULL with why in
 * msg. */
static app_attn *run_of(app_view_ctx *c, const app_state *st, int which, char *msg, size_t n)
{
    app_attn *a = app_attn_of(c, which);
    if (!a) {
        snprintf(msg, n, "out of memory");
        return NULL;
    }
    if (app_attn_update(a, st, which ? st->attn.compare : st->attn.model_name, msg, n) < 0)
        return NULL;
    return a;
}

/* Keep step, layer and head inside the model after anything changed (a shorter prompt, a model
 * with fewer layers), so the view never shows an out-of-range error the user did not type. */
static void attn_settle(app_view_ctx *c, app_state *st)
{
    char err[512];
    app_attn *a = run_of(c, st, 0, err, sizeof err);
    if (!a) return;
    int n = a->n;
    if (is_compare(st) && st->attn.compare[0]) {
        /* the same index on both sides unless the tokenizers differ (the left then leads and
         * the right follows it through the text, app_attn_align) */
        app_attn *b = run_of(c, st, 1, err, sizeof err);
        int by_text = 0;
        if (b) app_attn_align(a, 0, b, &by_text);
        if (b && !by_text && b->n < n) n = b->n;
    }
    if (st->attn.step >= n) st->attn.step = n - 1;
    if (st->attn.layer >= a->layers) st->attn.layer = a->layers - 1;
    if (st->head >= a->heads) st->head = -1;
}

/* Step through the tokens: arg -1/+1, -10/+10, or -100000/+100000 for the first/last. */
static int key_step(app_view_ctx *c, app_state *st, int arg, char *msg, size_t n)
{
    app_attn *a = run_of(c, st, 0, msg, n);
    if (!a) return -1;
    int cur = app_attn_step(a, st), last = a->n - 1;
    if (arg > 0 && cur >= last) {
        st->playing = 0;
        snprintf(msg, n, "the last token: g generates the next one");
        return 0;
    }
    if (arg < 0 && cur == 0) {
        snprintf(msg, n, "the first token");
        return 0;
    }
    int s = cur + arg;
    s = s < 0 ? 0 : s > last ? last : s;
    st->attn.step = s;
    const app_attn_token *tk = &a->tok[s];
    int len = snprintf(msg, n, "step %d of %d: \"%s\"%s%s", s, last, tk->word,
                       tk->unknown ? " (not in the vocabulary: <unk>)" : "",
                       tk->generated ? " (generated)" : "");
    char e2[256];
    app_attn *b = is_compare(st) && st->attn.compare[0] ? run_of(c, st, 1, e2, sizeof e2) : NULL;
    int by_text = 0, k = b ? app_attn_align(a, s, b, &by_text) : 0;
    if (by_text && len >= 0 && (size_t)len < n)
        snprintf(msg + len, n - (size_t)len,
                 "; %s token %d \"%s\" covers the same text (the "
                 "tokenizers differ: both step by text)",
                 b->label, k, b->tok[k].word);
    return 0;
}

static int key_layer(app_view_ctx *c, app_state *st, int arg, char *msg, size_t n)
{
    app_attn *a = run_of(c, st, 0, msg, n);
    if (!a) return -1;
    int l = st->attn.layer + arg;
    st->attn.layer = l < 0 ? 0 : l >= a->layers ? a->layers - 1 : l;
    snprintf(msg, n, "layer %d of %d", st->attn.layer, a->layers);
    return 0;
}

/* arrows: left/right the token (big: 10), up/down the layer; arg as the explorer's cursor keys:
 * 0 up, 1 down, 2 left, 3 right, +4 big */
static int key_arrow(app_view_ctx *c, app_state *st, int arg, char *msg, size_t n)
{
    int dir = arg & 3, big = arg >= 4;
    if (dir >= 2) return key_step(c, st, (dir == 3 ? 1 : -1) * (big ? 10 : 1), msg, n);
    return key_layer(c, st, dir == 1 ? 1 : -1, msg, n);
}

/* g: one more generated token; G: one fewer. The view then follows the end. */
static int key_generate(app_view_ctx *c, app_state *st, int arg, char *msg, size_t n)
{
    app_attn *a = run_of(c, st, 0, msg, n);
    if (!a) return -1;
    if (arg < 0) {
        if (st->attn.generate <= 0 || a->n <= a->n_prompt) {
            snprintf(msg, n, "nothing generated to take back");
            return 0;
        }
        st->attn.generate = a->n - a->n_prompt - 1;
        st->attn.step = -1;
        snprintf(msg, n, "%d generated", st->attn.generate);
        return 0;
    }
    int want = app_attn_more(a, st, msg, n);
    if (want < 0) return -1;
    st->attn.generate = want;
    st->attn.step = -1;
    a = run_of(c, st, 0, msg, n);
    if (!a) return -1;
    const app_attn_token *tk = &a->tok[a->n - 1];
    snprintf(msg, n, "generated \"%s\" (%s; %d so far)", tk->word,
             st->attn.temperature > 0 ? "sampled" : "greedy", a->n - a->n_prompt);
    return 0;
}

/* The run a position experiment applies to: the left model, or the right one in compare when
 * only that one has the scheme. */
static app_attn *experiment_run(app_view_ctx *c, app_state *st, unsigned cap, char *msg, size_t n)
{
    app_attn *a = run_of(c, st, 0, msg, n);
    if (a && !(a->caps & cap) && is_compare(st) && st->attn.compare[0])
        a = run_of(c, st, 1, msg, n);
    return a;
}

/* b/B: the rope model's base x2 / /2, starting from the trained one. */
static int key_base(app_view_ctx *c, app_state *st, int arg, char *msg, size_t n)
{
    app_attn *a = experiment_run(c, st, LMI_CAN_ROPE_BASE, msg, n);
    if (!a) return -1;
    if (!(a->caps & LMI_CAN_ROPE_BASE)) {
        snprintf(msg, n, "b/B change a rope model's base; this is %s (r/R scale ALiBi slopes)",
                 a->pe);
        return -1;
    }
    double b = st->attn.rope_base > 0 ? st->attn.rope_base : a->trained_base;
    b = arg > 0 ? b * 2 : b / 2;
    if (b <= 1.0001) b = 2;
    if (fabs(b / a->trained_base - 1) < 1e-9) b = 0; /* back at the trained value */
    /* as a number, rounded as the status line shows it (what "%.10g" and back gave) */
    return app_option_apply_num(st, "rope-base", app_round_sig(b, 10), msg, n);
}

/* r/R: ALiBi slopes gentler (/1.5) / steeper (x1.5). */
static int key_slope(app_view_ctx *c, app_state *st, int arg, char *msg, size_t n)
{
    app_attn *a = experiment_run(c, st, LMI_CAN_ALIBI_SCALE, msg, n);
    if (!a) return -1;
    if (!(a->caps & LMI_CAN_ALIBI_SCALE)) {
        snprintf(msg, n, "r/R scale an alibi model's slopes; this is %s (b/B change a rope base)",
                 a->pe);
        return -1;
    }
    double m = st->attn.alibi_scale;
    if (m <= 0) m = arg > 0 ? 0 : 1.0 / 1.5;
    m = arg > 0 ? m / 1.5 : m * 1.5;
    return app_option_apply_num(st, "alibi-scale", m > 1000 ? 1000 : m, msg, n);
}

/* a: all heads, or the next of the model's heads enlarged */
static int key_head(app_view_ctx *c, app_state *st, int arg, char *msg, size_t n)
{
    (void)arg;
    app_attn *a = run_of(c, st, 0, msg, n);
    if (!a) return -1;
    int h = st->head + 1;
    if (h >= a->heads) h = -1;
    st->head = h;
    if (h < 0)
        snprintf(msg, n, "head = all");
    else
        snprintf(msg, n, "head = %d", h);
    return 0;
}

static int key_play(app_view_ctx *c, app_state *st, int arg, char *msg, size_t n)
{
    (void)arg;
    app_attn *a = run_of(c, st, 0, msg, n);
    if (!a) return -1;
    st->playing = !st->playing;
    st->attn.step_frac = 0;
    if (st->playing && app_attn_step(a, st) >= a->n - 1) st->attn.step = 0;
    if (st->playing)
        snprintf(msg, n, "playing at %g tokens/s (space pauses, ] / [ faster / slower)",
                 st->attn.play_speed);
    else
        snprintf(msg, n, "paused");
    return 0;
}

/* 0: the experiments go back; the model, text and step stay */
static int key_reset(app_view_ctx *c, app_state *st, int arg, char *msg, size_t n)
{
    (void)c;
    (void)arg;
    st->attn.shift = 0;
    st->attn.rope_base = 0;
    st->attn.alibi_scale = 1;
    st->attn.attn_scale = APP_SCALE_LINEAR;
    st->attn.split = 0;
    snprintf(msg, n,
             "position experiments reset: shift 0, trained base and slopes, linear colours");
    return 0;
}

/* play_speed tokens a second, whole steps */
static int attn_tick(app_view_ctx *c, app_state *st, double dt, int smooth)
{
    (void)smooth;
    char msg[256];
    st->attn.step_frac += dt * st->attn.play_speed;
    int moved = 0;
    while (st->attn.step_frac >= 1 && st->playing) {
        st->attn.step_frac -= 1;
        key_step(c, st, 1, msg, sizeof msg);
        moved = 1;
    }
    return moved;
}

/* `do: play`: from the first token, play_speed tokens a second (attn_tick) */
static void play_start(app_state *st)
{
    st->attn.step = 0;
    st->playing = 1;
    st->attn.step_frac = 0;
}
static const app_view_action attn_play = {"play", "steps through the attention views' tokens",
                                          play_start};

static const app_view_key attn_keys[] = {
    APP_ARROW_KEYS(
        key_arrow, "arrows, hjkl",
        "left / right: the previous / next token (H / L: 10); up / down, PgUp / PgDn: the layer"),
    {UI_KEY_HOME, key_step, -100000, "Home / End", "the first / last token"},
    {UI_KEY_END, key_step, 100000, NULL, NULL},
    {' ', key_play, 0, "space", "play / pause: step through the tokens (] / [ faster / slower)"},
    {'g', key_generate, 1, "g / G",
     "generate one more token / take the last one back (:temperature, :gen-seed)"},
    {'G', key_generate, -1, NULL, NULL},
    {'a', key_head, 0, "a", "all heads, or the next head enlarged"},
    {'b', key_base, 1, "b / B", "the rope model's frequency base x2 / /2 (from the trained one)"},
    {'B', key_base, -1, NULL, NULL},
    {'r', key_slope, 1, "r / R", "the alibi model's slopes gentler / steeper (/1.5, x1.5)"},
    {'R', key_slope, -1, NULL, NULL},
    {'0', key_reset, 0, "0", "reset the position experiments (model, text and step stay)"},
    {0, NULL, 0, NULL, NULL},
};

#define ATTN_OPTIONS                                                                               \
    "model tokenizer preset prompt ids step layer head shift rope-base scaling factor "            \
    "alibi-scale attn-scale split generate temperature gen-seed play-speed"

const app_view app_view_attention = {
    .name = "attention",
    .description = "a built-in model's attention token by token: bars, heads, matrix, next tokens",
    .validate = attn_validate,
    .build = attention_build,
    .data = attention_data,
    .options = ATTN_OPTIONS " cmap",
    .keys = attn_keys,
    .tick = attn_tick,
    .settle = attn_settle,
    .action = &attn_play,
};

/* ---- the compare view -------------------------------------------------------------------- */

static int compare_validate(const app_state *st, char *err, size_t errlen)
{
    if (attn_validate(st, err, errlen) < 0) return -1;
    if (!st->attn.compare[0]) {
        snprintf(err, errlen,
                 "--compare none: the compare view needs a second model (allowed "
                 "nope|learned|sinusoidal|alibi|rope|t5 or a path)");
        return -1;
    }
    char path[1100];
    if (app_attn_model_path(st->attn.compare, path, sizeof path, err, errlen) < 0) {
        /* the message names --model; say which option it was */
        char tmp[512];
        snprintf(tmp, sizeof tmp, "%s", err);
        const char *p = strncmp(tmp, "--model", 7) == 0 ? tmp + 7 : tmp;
        snprintf(err, errlen, "--compare%s", p);
        return -1;
    }
    return 0;
}

static int compare_build(app_view_ctx *vc, const app_state *st, scene *s, const scene_target *t,
                         char *err, size_t errlen)
{
    if (compare_validate(st, err, errlen) < 0) return -1;
    app_attn *a[2];
    a[0] = get_run(vc, st, 0, st->attn.model_name, err, errlen);
    if (!a[0]) return -1;
    char e2[512];
    a[1] = get_run(vc, st, 1, st->attn.compare, e2, sizeof e2);
    if (!a[1]) {
        snprintf(err, errlen, "%s%s", strncmp(e2, "--model", 7) == 0 ? "--compare" : "",
                 strncmp(e2, "--model", 7) == 0 ? e2 + 7 : e2);
        return -1;
    }
    actx c[2];
    actx_init(&c[0], s, t, st, a[0]);
    actx_init(&c[1], s, t, st, a[1]);
    /* one place in the text on both sides: the same token index when the tokenizers cut the
     * text alike, else the right's token covering the text the left's step has reached */
    int by_text = 0;
    c[1].step = app_attn_align(a[0], c[0].step, a[1], &by_text);
    if (!by_text) c[0].step = c[1].step;
    int step = c[0].step;
    const fig_theme *th = c[0].th;
    char title[320], sub[512], lead[200], tn[64], hb[48], also[160] = "";
    if (by_text)
        snprintf(also, sizeof also, "; %s: \"%s\", token %d", a[1]->label,
                 a[1]->tok[c[1].step].word, c[1].step);
    snprintf(title, sizeof title, "%s vs %s: what \"%s\" (token %d%s) attends to, layer %d, %s",
             a[0]->label, a[1]->label, a[0]->tok[step].word, step, also, st->attn.layer,
             head_name(&c[0], st->head, hb, sizeof hb));
    text_name(st, tn, sizeof tn);
    char ntok[64];
    if (by_text)
        snprintf(ntok, sizeof ntok, "%d and %d tokens, stepped by text", a[0]->n_prompt,
                 a[1]->n_prompt);
    else
        snprintf(ntok, sizeof ntok, "%d tokens", a[0]->n_prompt);
    snprintf(lead, sizeof lead, "%s: %s  step %d", tn, ntok, step);
    /* each panel's head says its model's experiments (experiments()): the rows the rest */
    char rows[300];
    app_subtitle_less(st, "shift rope-base scaling factor alibi-scale", rows, sizeof rows);
    snprintf(sub, sizeof sub, "%s%s%s", lead, rows[0] ? "  " : "", rows);
    fig_rect r = app_frame(s, t, th, title, sub);
    double gap = t->cells ? 2 : t->text_h;
    /* pixels: a short canvas (the window under a projector zoom) keeps one or two strip lines
     * and puts each model's bars and matrix side by side with a one-line next-token list, so
     * the matrices stay (the attention view does the same) */
    int tall = t->cells || r.h >= t->text_h * 17;
    int strip = t->cells ? (r.h >= 40 ? 2 : 1) : tall ? 3 : r.h >= t->text_h * 12 ? 2 : 1;
    double used = draw_strip(&c[0], a[0], r, NULL, strip);
    r.y += used + (t->cells ? 0 : gap * 0.3);
    r.h -= used + (t->cells ? 0 : gap * 0.3);
    int matrices = t->cells ? r.h >= 40 : 1;
    fig_rect bar = {0, 0, 0, 0}, rest = r;
    if (matrices) bar = fig_take_right(&rest, fig_colorbar_width(t), t->char_w);
    /* the two models side by side, or one above the other, by the rule of every multi-panel
     * view (fig_split_two: a narrow figure, a column 2.2in wide, a phone, stacks them rather
     * than drawing two slivers); stacked, each model's bars and matrix go side by side and
     * the colourbar lies under both where that leaves them room */
    fig_rect col[2];
    int across = fig_split_two(t, rest, 1.4, 0.5, 0.5, gap, &col[0], &col[1]);
    int bar_under = 0;
    if (!across) {
        tall = 0;
        /* under them only where the models keep their height (not in a short column, where
         * the bar's column beside them costs less) */
        double under_h = fig_colorbar_h_height(t) + gap * 0.5;
        if (matrices && !t->cells && r.w <= 2.2 * (r.h - under_h - gap) / 2) {
            bar_under = 1;
            bar = fig_take_bottom(&r, fig_colorbar_h_height(t), gap * 0.5);
            bar.x += bar.w * 0.2;
            bar.w *= 0.6;
        }
        if (!bar_under) r = rest;
        fig_split_two(t, r, 1.4, 0.5, 0.5, gap, &col[0], &col[1]);
        /* the split keeps the first a share of the height: the two models alike */
        col[0].h = floor((r.h - gap) / 2);
        col[1].y = r.y + col[0].h + gap;
        col[1].h = r.h - col[0].h - gap;
    } else {
        r = rest;
        col[0].w = floor((r.w - gap) / 2);
        col[1].x = r.x + col[0].w + gap;
        col[1].w = r.w - col[0].w - gap;
    }
    fig_mark_main(s, r, "both models' panels");
    /* the models' names step their size down (both alike) in narrow columns before a cut */
    char heads[2][320];
    double hs = 1.0;
    for (int k = 0; k < 2; k++) {
        char ex[256];
        experiments(&c[k], a[k], ex, sizeof ex);
        snprintf(heads[k], sizeof heads[k], "%s%s", a[k]->label, ex);
        while (!t->cells && hs > 0.65 && scene_text_width_bold(t, heads[k], hs) > col[k].w)
            hs -= 0.05;
    }
    for (int k = 0; k < 2; k++) {
        fig_rect q = col[k];
        char note[768];
        const char *head = heads[k];
        text_at(&c[k], q.x, q.y, fit(&c[k], 0, head, hs, q.w, note, sizeof note), hs,
                SCENE_LEFT | SCENE_TOP, th->fg, SCENE_BOLD);
        q.y += line_h(t);
        q.h -= line_h(t);
        notice_line(&c[k], a[k], matrices ? "" : "(the matrices show from 40 rows)", note,
                    sizeof note);
        if (note[0]) {
            double h = draw_wrapped(&c[k], q, note, t->cells ? th->muted : th->accent, 2);
            q.y += h;
            q.h -= h;
        }
        if (matrices && tall) {
            /* bars on top; below them the matrix and, beside it, the next tokens */
            fig_rect bars = q;
            bars.h = floor(q.h * 0.45);
            if (t->cells) bars.h = 2 * floor(bars.h / 2);
            fig_rect mr = {q.x, q.y + bars.h + gap * 0.5, q.w, q.h - bars.h - gap * 0.5};
            fig_rect nx = fig_take_right(&mr, floor(mr.w * 0.42), gap * 0.5);
            nx.h = fmin(nx.h, top5_height(t));
            draw_bars(&c[k], a[k], bars, st->head);
            draw_head_matrix(&c[k], k == 0 ? vc : NULL, a[k], mr, st->head, 0);
            draw_top5(&c[k], a[k], nx, 0);
        } else if (matrices) {
            /* the next tokens in one line at the bottom; the bars and the matrix beside it */
            fig_rect nx = fig_take_bottom(&q, line_h(t), gap * 0.3);
            draw_top5(&c[k], a[k], nx, 1);
            /* a square matrix; where its tick labels and axis names would leave it under
             * four lines it goes bare (query down, key across, as in the attention view) with
             * its name above it */
            int bare = q.h - t->text_h * 2.6 < t->text_h * 4 ||
                       q.w < t->text_h * 12; /* a paper column: no room for its labels */
            double side =
                bare ? fmin(q.w * 0.4, q.h - line_h(t)) : fmin(q.w * 0.45, q.h + t->text_h * 1.5);
            fig_rect mr = fig_take_right(&q, side, gap * 0.5);
            if (bare) {
                text_at(&c[k], mr.x + mr.w / 2, mr.y, "matrix", 0.75, SCENE_CENTER | SCENE_TOP,
                        th->fg, 0);
                mr.y += line_h(t) * 0.8;
                mr.h -= line_h(t) * 0.8;
            }
            draw_bars(&c[k], a[k], q, st->head);
            draw_head_matrix(&c[k], k == 0 ? vc : NULL, a[k], mr, st->head, bare ? 2 : 0);
        } else {
            fig_rect nx = fig_take_bottom(&q, t->cells ? 2 : fmin(top5_height(t), q.h * 0.35),
                                          t->cells ? 0 : gap * 0.5);
            draw_top5(&c[k], a[k], nx, t->cells);
            draw_bars(&c[k], a[k], q, st->head);
        }
    }
    if (bar_under) {
        fig_colorbar_h(s, t, th, bar, c[0].vmin, c[0].vmax, c[0].map, c[0].cbar);
    } else if (matrices) {
        bar.y = r.y + (tall ? r.h * 0.45 : line_h(t) * 1.5);
        bar.h = tall ? r.h * 0.4 : r.h - line_h(t) * 3;
        if (t->cells) {
            bar.y = 2 * ceil(bar.y / 2);
            bar.h = 2 * floor(bar.h / 2);
        }
        fig_colorbar(s, t, th, bar, c[0].vmin, c[0].vmax, c[0].map,
                     t->cells ? cells_scale(c[0].kind) : c[0].cbar);
    }
    return 0;
}

/* The numbers: both models' matrices so far for the chosen head (the head mean with --head
 * all), as (2, query, key). */
static int compare_data(app_view_ctx *vc, const app_state *st, app_data *out, char *err,
                        size_t errlen)
{
    if (compare_validate(st, err, errlen) < 0) return -1;
    app_attn *a[2] = {get_run(vc, st, 0, st->attn.model_name, err, errlen), NULL};
    if (!a[0]) return -1;
    a[1] = get_run(vc, st, 1, st->attn.compare, err, errlen);
    if (!a[1]) return -1;
    /* the steps the figure shows (compare_build); two tokenizers give two lengths, the
     * shorter side's rows and columns past its step are NaN */
    int by_text = 0, st0 = app_attn_step(a[0], st);
    int sk[2] = {st0, app_attn_align(a[0], st0, a[1], &by_text)};
    if (!by_text) sk[0] = sk[1];
    int n1 = (sk[0] > sk[1] ? sk[0] : sk[1]) + 1;
    if (app_data_alloc(out, 3, 2, (size_t)n1, (size_t)n1, err, errlen) < 0 ||
        app_data_tokens(out, 6u, 2, (size_t)n1, err, errlen) < 0)
        return -1;
    put_tokens(out, a[0], 0, sk[0] + 1);
    put_tokens(out, a[1], 1, sk[1] + 1);
    for (int k = 0; k < 2; k++) {
        int h0 = st->head >= 0 ? st->head : 0, h1 = st->head >= 0 ? st->head + 1 : a[k]->heads;
        int nk = sk[k] + 1;
        for (int i = 0; i < n1; i++)
            for (int j = 0; j < n1; j++)
                if (i >= nk || j > i) out->data[((size_t)k * n1 + i) * n1 + j] = NAN;
        for (int h = h0; h < h1; h++) {
            const float *m = app_attn_matrix(a[k], st->attn.layer, h);
            for (int i = 0; i < nk; i++)
                for (int j = 0; j <= i; j++)
                    out->data[((size_t)k * n1 + i) * n1 + j] +=
                        m[(size_t)i * a[k]->cap + j] / (h1 - h0);
        }
    }
    char how[128] = "";
    if (by_text)
        snprintf(how, sizeof how,
                 "; the tokenizers differ: the steps cover the same text, tokens %d and %d (NaN "
                 "past a side's step)",
                 sk[0], sk[1]);
    snprintf(out->what, sizeof out->what,
             "(model, query, key): attention so far of %s (0) and %s (1), layer %d, %s; NaN = "
             "the future%s",
             a[0]->label, a[1]->label, st->attn.layer,
             st->head >= 0 ? "the chosen head" : "mean of the heads", how);
    return 0;
}

const app_view app_view_compare = {
    .name = "compare",
    .description = "two built-in models side by side on the same prompt and step (--compare NAME)",
    .validate = compare_validate,
    .build = compare_build,
    .data = compare_data,
    .options = "model compare tokenizer compare-tokenizer preset prompt ids step layer head shift "
               "rope-base scaling factor alibi-scale "
               "attn-scale split generate temperature gen-seed play-speed cmap",
    .keys = attn_keys,
    .tick = attn_tick,
    .settle = attn_settle,
    .action = &attn_play,
};
