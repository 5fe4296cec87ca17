/* alibi.c: ALiBi's bias matrices -m_h (i - j), all heads as small multiples, or one head
 * enlarged with its slope. By default (--scale window) every head is drawn as the factor its
 * bias multiplies attention by, exp(-m_h (i - j)), on one 0..1 range, with the distances where
 * that factor falls to 1/2 (ln 2 / m) and to 1/10 (ln 10 / m) marked: each head attends within a
 * window of about 1/m. --scale per-head colours each head's bias from its own corner
 * -m_h (L-1) to 0 (the gentle heads show their ramp instead of a flat field) and --scale shared
 * all on one range (the steep heads look steep); the colourbar says which. The masked future is
 * drawn in the theme's mask colour. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "views.h"

static int alibi_validate(const app_state *st, char *err, size_t errlen)
{
    if (pe_check_len(st->p.len, err, errlen) < 0) return -1;
    if (pe_check_heads(st->p.heads, err, errlen) < 0) return -1;
    /* the figure samples every head at its resolution (issue 25: a 10M context loads); the
     * data's (L, L) matrices meet the memory budget in pe_alibi_bias and app_data_alloc */
    return 0;
}

/* Heads h0 .. h0+nh-1's biases sampled on an n x n grid of positions (app_grid_pos; n <= L:
 * the figure's resolution), one after the other, in one cache slot keyed by what they depend
 * on, so 64 heads cost one lookup; every value is pe_alibi_value's, the entry pe_alibi_bias
 * stores, so this view has no formula of its own. With window, exp(bias) (the masked -inf kept,
 * drawn in the mask colour), cached too: a frame that changes nothing took 64 x n^2 exps
 * (2.2 ms for an unchanged window frame at 64 heads, issue 27). NULL with err on failure. */
static const float *alibi_heads(app_view_ctx *c, const pe_params *p, const double *slopes, int h0,
                                int nh, size_t n, int window, char *err, size_t errlen)
{
    struct {
        int len, heads, h0, nh, symmetric, window;
        double ratio;
        size_t n;
    } key;
    memset(&key, 0, sizeof key);
    key.len = p->len;
    key.heads = p->heads;
    key.h0 = h0;
    key.nh = nh;
    key.symmetric = p->alibi_symmetric;
    key.window = window;
    key.ratio = p->slope_ratio;
    key.n = n;
    float *out = app_cache_get(c, 0, &key, sizeof key);
    if (out) return out;
    out = app_cache_put(c, 0, &key, sizeof key, (size_t)nh * n * n * sizeof *out);
    if (!out) {
        snprintf(err, errlen, "--heads %d x %zu x %zu samples: %s", nh, n, n, app_cache_error());
        return NULL;
    }
    size_t L = (size_t)p->len;
    for (int h = 0; h < nh; h++) {
        float *o = out + (size_t)h * n * n;
        for (size_t i = 0; i < n; i++) {
            size_t pi = app_grid_pos(i, n, L);
            for (size_t j = 0; j < n; j++)
                o[i * n + j] =
                    pe_alibi_value(slopes[h0 + h], p->alibi_symmetric, pi, app_grid_pos(j, n, L));
        }
    }
    if (window)
        for (size_t i = 0; i < (size_t)nh * n * n; i++)
            if (isfinite(out[i])) out[i] = (float)exp((double)out[i]);
    return out;
}

/* The smallest bias of a head with slope m (its corner -m (L-1), causal or symmetric); -1 when
 * L = 1 so the colour range is never empty. */
static double alibi_lo(const pe_params *p, double m)
{
    return p->len > 1 ? -m * (p->len - 1) : -1;
}

/* The window marks: the distances where exp(-m r) is 1/2 and 1/10. */
static double alibi_half(double m)
{
    return log(2.0) / m;
}
static double alibi_tenth(double m)
{
    return log(10.0) / m;
}

/* The 1/2 and 1/10 lines of a head with slope m over a matrix drawn at (x, y, side) for L
 * positions: keys at distance r below the diagonal, j = i - r (and above it when symmetric),
 * the 1/2 line dashed, the 1/10 dotted, in the theme's background colour (they lie on the dark
 * low end and the middle of a sequential map). */
static void alibi_window_lines(scene *s, const scene_target *t, const fig_theme *th, double x,
                               double y, double w, double h, int L, double m, int symmetric)
{
    if (t->cells || L < 2) return; /* a terminal's cells are too coarse for them */
    double ux = w / L, uy = h / L;
    const double r2[2] = {alibi_half(m), alibi_tenth(m)};
    for (int k = 0; k < 2; k++) {
        double r = r2[k];
        if (!(r < L - 1)) continue; /* the window is wider than the matrix */
        double lw = t->hairline > 0 ? t->hairline * 1.2 : 1;
        unsigned style = k == 0 ? SCENE_DASHED : SCENE_DOTTED;
        /* cell centres: query i at y + (i + 0.5) unit, key j at x + (j + 0.5) unit */
        scene_line(s, x + 0.5 * ux, y + (r + 0.5) * uy, x + (L - r - 0.5) * ux, y + (L - 0.5) * uy,
                   th->bg, lw, style);
        if (symmetric)
            scene_line(s, x + (r + 0.5) * ux, y + 0.5 * uy, x + (L - 0.5) * ux,
                       y + (L - r - 0.5) * uy, th->bg, lw, style);
    }
}

/* What a head's label says after its slope: its bias range (per head) or its window ("½ 1.39
 * ⅒ 4.61": the distances where exp(bias) is 1/2 and 1/10; "> L" past the matrix). */
static void alibi_range_text(const pe_params *p, double m, int window, char *out, size_t n)
{
    if (!window) {
        char lo[48]; /* −128, not -128 */
        fig_num(alibi_lo(p, m), 3, lo, sizeof lo);
        snprintf(out, n, "%s..0", lo);
        return;
    }
    char a[24], b[24];
    double h = alibi_half(m), te = alibi_tenth(m);
    if (h < p->len)
        fig_num(h, 3, a, sizeof a);
    else
        snprintf(a, sizeof a, ">%d", p->len);
    if (te < p->len)
        fig_num(te, 3, b, sizeof b);
    else
        snprintf(b, sizeof b, ">%d", p->len);
    snprintf(out, n, "\xc2\xbd %s \xe2\x85\x92 %s", a, b);
}

static int alibi_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                       char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    const pe_params *p = &st->p;
    double *slopes = malloc(sizeof *slopes * (size_t)p->heads);
    if (!slopes) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (pe_alibi_slopes(p->heads, p->slope_ratio, slopes, err, errlen) < 0) {
        free(slopes);
        return -1;
    }
    char title[256], sub[256];
    int window = st->scale_shared == APP_SCALE_WINDOW;
    if (st->head >= 0) {
        char pw[48];
        app_pow2_label(log2(slopes[st->head]), pw, sizeof pw);
        if (window) {
            char hs[24], ts[24];
            fig_num(alibi_half(slopes[st->head]), 3, hs, sizeof hs);
            fig_num(alibi_tenth(slopes[st->head]), 3, ts, sizeof ts);
            snprintf(title, sizeof title,
                     "ALiBi head %d of %d: exp(bias), m = %s: \xc2\xbd at %s, \xe2\x85\x92 at %s",
                     st->head, p->heads, pw, hs, ts);
        } else {
            char ms[48];
            fig_num(slopes[st->head], 4, ms, sizeof ms);
            snprintf(title, sizeof title, "ALiBi bias, head %d of %d: slope m = %s = %s", st->head,
                     p->heads, ms, pw);
        }
    } else if (window)
        snprintf(title, sizeof title,
                 "ALiBi's %d heads as windows: exp(\xe2\x88\x92m(i\xe2\x88\x92j))", p->heads);
    else
        snprintf(title, sizeof title,
                 "ALiBi bias \xe2\x88\x92"
                 "m(i\xe2\x88\x92"
                 "j) for %d heads",
                 p->heads);
    app_subtitle(st, sub, sizeof sub);
    size_t u = strlen(sub);
    snprintf(sub + u, sizeof sub - u, "%s",
             window && !t->cells ? "  dashed: \xc2\xbd, dotted: \xe2\x85\x92 of the weight" : "");
    fig_rect r = app_frame(s, t, th, title, sub);

    int h0 = st->head >= 0 ? st->head : 0;
    int nh = st->head >= 0 ? 1 : p->heads;
    /* the shared colour scale: from the steepest head's corner to 0 */
    double lo = 0;
    for (int h = h0; h < h0 + nh; h++) lo = fmin(lo, alibi_lo(p, slopes[h]));
    const cmap *map = st->map ? st->map : cmap_default_sequential();
    double vmin = lo, vmax = 0;
    if (map->diverging) vmax = -lo;
    if (window) { /* exp(bias): 0 (far) to 1 (the diagonal) for every head */
        vmin = 0;
        vmax = 1;
    }
    int per_head = nh > 1 && st->scale_shared == APP_SCALE_PER_HEAD;

    if (nh == 1) {
        size_t n = (size_t)fmin(p->len, ceil(fmin(r.w, r.h)));
        const float *bs = alibi_heads(c, p, slopes, h0, 1, n, window, err, errlen);
        if (!bs) {
            free(slopes);
            return -1;
        }
        /* square cells: the matrix as large as the figure allows with its labels and
         * colourbar (beside it, or under it in a narrow figure), not stretched to the panel (a
         * lesson's 16 positions were 343x229) */
        fig_axes a =
            app_draw_square_matrix(s, t, th, r, bs, n, n, 0, p->len, "key j", "query i", map, vmin,
                                   vmax, window ? "exp(bias)" : "bias", NULL, th->mask);
        if (window)
            alibi_window_lines(s, t, th, a.area.x, a.area.y, a.area.w, a.area.h, p->len, slopes[h0],
                               p->alibi_symmetric);
        c->main = a;
        fig_mark_main(s, a.area, "plot");
        c->has_main = 1;
        c->main_rows = c->main_cols = p->len;
        if (st->cursor_on) {
            int i = st->cur_r < p->len ? st->cur_r : p->len - 1;
            int j = st->cur_c < p->len ? st->cur_c : p->len - 1;
            app_draw_cell_cursor(s, t, th, &a, i, j);
            /* the exact value under the cursor (the figure may be sampled) */
            double v =
                j > i && !p->alibi_symmetric ? -INFINITY : -slopes[h0] * fabs((double)(i - j));
            if (isfinite(v))
                snprintf(c->readout, sizeof c->readout, "i %d  j %d  i-j %d  bias %+.6g  exp %.4g",
                         i, j, i - j, v, exp(v));
            else
                snprintf(c->readout, sizeof c->readout, "i %d  j %d  masked (j > i: the future)", i,
                         j);
        }
        free(slopes);
        return 0;
    }

    /* small multiples: a grid close to the canvas' aspect */
    fig_rect bar = fig_take_right(&r, fig_colorbar_width(t), t->char_w * 2);
    /* room under the grid: half a line for the colourbar's end label, centred on its end; in a
     * terminal a row for the colourbar's name (over the bar it would cover the first heads'
     * labels, and the terminal cannot turn it to run along the bar) */
    double name_y = 0;
    if (t->cells) {
        r.h = 2.0 * floor((r.y + r.h) / 2.0) - 2.0 - r.y;
        name_y = r.y + r.h;
    } else {
        r.h -= t->text_h * 0.5;
    }
    /* the grid whose squares come out largest */
    /* the head's label line over each matrix (a whole row in a terminal, else the matrix's
     * border would be drawn over it) */
    double lh0 = t->cells ? 2.0 : t->text_h * 0.85 * 1.1;
    double gap = t->cells ? 2 : t->text_h * 0.4;
    int rows = 1; /* the one rule of every multi-panel view: a wide, a column, a tall figure */
    int cols = fig_grid_pick(r, nh, 1.0, lh0, 0, gap, 0, &rows, NULL);
    fig_mark_main(s, r, "heads"); /* the small multiples together */
    /* every cell of the grid has the same size, so one sampling serves all heads */
    fig_rect c0 = fig_grid_cell(r, rows, cols, 0, 0, gap);
    double side0 = fmin(c0.w, c0.h - lh0);
    size_t n = (size_t)fmin(p->len, ceil(fmax(1, side0)));
    const float *all = side0 > 1 ? alibi_heads(c, p, slopes, 0, nh, n, window, err, errlen) : NULL;
    if (side0 > 1 && !all) {
        free(slopes);
        return -1;
    }
    /* One label form and size for every head: "h7  m=2⁻⁸  -0.996..0" on one line at the
     * largest size from 0.85 down to 0.6 where every head's fits its matrix, else on two lines
     * (head and slope, then the range), else without the slope, else the head number alone. */
    int form = 3, lines = 1;
    double lsz = 0.85;
    /* what a label adds after the slope: the head's range (per head) or its window */
    int ranged = per_head || window;
    /* each head's slope and range texts, made once for the fitting and the drawing */
    typedef char pw_text[48], rt_text[64];
    pw_text *pw = malloc(sizeof *pw * (size_t)nh);
    rt_text *rt = malloc(sizeof *rt * (size_t)nh);
    if (!pw || !rt) {
        free(pw);
        free(rt);
        free(slopes);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int h = 0; h < nh; h++) {
        app_pow2_label(log2(slopes[h]), pw[h], sizeof pw[h]);
        alibi_range_text(p, slopes[h], window, rt[h], sizeof rt[h]);
    }
    {
        double sizes[8];
        int ns = 0;
        for (double z = 0.85; z >= 0.6 - 1e-9 && ns < 8; z -= 0.05) sizes[ns++] = z;
        if (t->cells) ns = 1; /* a terminal writes any size a cell a character */
        /* a text's width is its width at size 1 times the size: each form's labels are
         * made and measured once, then tried at every size (it was 64 heads x 8 sizes x 4
         * forms of formatting and measuring: 40 million instructions an unchanged frame) */
        for (int f = 0; f < 4 && form == 3; f++) {
            if (!ranged && (f == 1 || f == 2)) continue; /* no range to show */
            double w1 = 0;
            for (int h = 0; h < nh; h++) {
                char a[128];
                if (f == 0 && ranged)
                    snprintf(a, sizeof a, "h%d  m=%s  %s", h, pw[h], rt[h]);
                else if (f == 0 || f == 1)
                    snprintf(a, sizeof a, "h%d  m=%s", h, pw[h]);
                else if (f == 2)
                    snprintf(a, sizeof a, "h%d  %s", h, rt[h]);
                else
                    snprintf(a, sizeof a, "h%d", h);
                w1 = fmax(w1, fmax(scene_text_width(t, a, 1),
                                   f == 1 ? scene_text_width(t, rt[h], 1) : 0));
            }
            for (int k = 0; k < ns && form == 3; k++) {
                double z = t->cells ? 1 : sizes[k], w = w1 * z;
                if (w <= c0.w + 1e-9) {
                    form = f;
                    lsz = t->cells ? 0.85 : z;
                    lines = f == 1 && ranged ? 2 : 1;
                }
            }
        }
    }
    double lstep = t->cells ? 2.0 : t->text_h * lsz * 1.05;
    double label_h = t->cells ? 2.0 * lines : fmax(lh0, lstep * lines + t->text_h * 0.1);
    double grid_top = INFINITY, grid_bottom = -INFINITY; /* the matrices' extent */
    for (int h = 0; h < nh; h++) {
        fig_rect cell = fig_grid_cell(r, rows, cols, h / cols, h % cols, gap);
        /* head label above each small matrix */
        char lab[128], lab2[64] = "";
        double hlo = alibi_lo(p, slopes[h]);
        /* per head: the label names the head's own range, the colourbar only its fractions;
         * window: where the head's weight falls to 1/2 and 1/10 */
        if (form == 0 && ranged)
            snprintf(lab, sizeof lab, "h%d  m=%s  %s", h, pw[h], rt[h]);
        else if (form <= 1)
            snprintf(lab, sizeof lab, "h%d  m=%s", h, pw[h]);
        else if (form == 2)
            snprintf(lab, sizeof lab, "h%d  %s", h, rt[h]);
        else
            snprintf(lab, sizeof lab, "h%d", h);
        if (lines == 2) snprintf(lab2, sizeof lab2, "%s", rt[h]);
        /* a terminal puts the label on a whole row, the matrix on the rows under it */
        double ly = t->cells ? 2.0 * ceil(cell.y / 2.0) : cell.y;
        scene_text(s, cell.x + cell.w / 2, ly, lab, lsz, SCENE_CENTER | SCENE_TOP, th->fg, 0);
        if (lab2[0])
            scene_text(s, cell.x + cell.w / 2, ly + lstep, lab2, lsz, SCENE_CENTER | SCENE_TOP,
                       th->fg, 0);
        double y = ly + label_h;
        double side = fmin(cell.w, cell.y + cell.h - y);
        if (side <= 1) continue;
        if (!all) continue;
        const float *bs = all + (size_t)h * n * n;
        double x = cell.x + (cell.w - side) / 2;
        grid_top = fmin(grid_top, y);
        grid_bottom = fmax(grid_bottom, y + side);
        double hmin = per_head ? hlo : vmin, hmax = per_head ? (map->diverging ? -hlo : 0) : vmax;
        scene_heatmap(s, x, y, side, side, bs, n, n, n, hmin, hmax, map, th->mask);
        scene_rect(s, x, y, side, side, th->muted, 0);
        if (window)
            alibi_window_lines(s, t, th, x, y, side, side, p->len, slopes[h], p->alibi_symmetric);
    }
    /* the bar spans the matrices, top of the first row to the bottom of the last (the room
     * left under them takes its end label) */
    if (grid_bottom > grid_top) {
        bar.y = grid_top;
        bar.h = grid_bottom - grid_top;
    } else {
        bar.y = r.y + t->text_h;
        bar.h = r.h - t->text_h;
    }
    /* per head the bar runs over a fraction of each head's own range (its label gives it) */
    const char *bar_label = window     ? "exp(bias), every head"
                            : per_head ? "bias / |min|, per head"
                                       : "bias, shared scale";
    /* a terminal writes the name on the row kept under the grid, right-aligned to the bar */
    const char *name = t->cells ? NULL : bar_label;
    if (per_head)
        fig_colorbar(s, t, th, bar, -1, map->diverging ? 1 : 0, map, name);
    else if (window)
        fig_colorbar(s, t, th, bar, 0, 1, map, name);
    else
        fig_colorbar(s, t, th, bar, vmin, vmax, map, name);
    if (t->cells)
        scene_text(s, bar.x + bar.w, name_y, bar_label, 1, SCENE_RIGHT | SCENE_TOP, th->fg, 0);
    free(pw);
    free(rt);
    c->has_main = 0;
    snprintf(c->readout, sizeof c->readout, "slopes: m_h = %s; pick one head with :head N",
             p->slope_ratio > 0 ? "r^(h+1)" : "2^(-8(h+1)/n)");
    free(slopes);
    return 0;
}

static int alibi_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    (void)c;
    const pe_params *p = &st->p;
    int h0 = st->head >= 0 ? st->head : 0;
    int nh = st->head >= 0 ? 1 : p->heads;
    size_t L = (size_t)p->len;
    if (app_data_alloc(out, 3, (size_t)nh, L, L, err, errlen) < 0) return -1;
    for (int h = 0; h < nh; h++) {
        pe_matrix b = {0};
        if (pe_alibi_bias(p, h0 + h, &b, err, errlen) < 0) {
            app_data_free(out);
            return -1;
        }
        for (size_t i = 0; i < L * L; i++) out->data[(size_t)h * L * L + i] = b.data[i];
        pe_matrix_free(&b);
    }
    /* the biases whatever the colour scale (--scale window draws their exp) */
    snprintf(out->what, sizeof out->what,
             "(heads, len, len): bias added to the logit of query i, key j; -inf where "
             "masked%s%s",
             st->head >= 0 ? " (one head)" : "",
             st->scale_shared == APP_SCALE_WINDOW ? " (the figure draws exp(bias))" : "");
    return 0;
}

/* {slopes}: the heads' slopes m_h, powers of two as fractions (1/256 reads better than
 * 0.00390625); past twelve heads the rest are counted */
static int value_slopes(const app_state *st, const char *args, char *out, size_t n, char *err,
                        size_t errlen)
{
    (void)args;
    double sl[PE_MAX_HEADS];
    if (pe_alibi_slopes(st->p.heads, st->p.slope_ratio, sl, err, errlen) < 0) return -1;
    size_t u = 0;
    out[0] = '\0';
    for (int h = 0; h < st->p.heads && u + 16 < n; h++) {
        if (h == 12 && st->p.heads > 13) {
            u += (size_t)snprintf(out + u, n - u, ", ... (%d more)", st->p.heads - h);
            break;
        }
        double inv = 1 / sl[h];
        if (fabs(inv - round(inv)) < 1e-9)
            u += (size_t)snprintf(out + u, n - u, "%s1/%.0f", h ? ", " : "", inv);
        else
            u += (size_t)snprintf(out + u, n - u, "%s%.4g", h ? ", " : "", sl[h]);
    }
    return 0;
}

static const app_view_value alibi_values[] = {
    {"slopes", NULL, value_slopes},
    {NULL, NULL, NULL},
};

const app_view app_view_alibi = {
    .name = "alibi",
    .description = "ALiBi bias matrices: all heads as small multiples, or one with --head",
    .validate = alibi_validate,
    .build = alibi_build,
    .data = alibi_data,
    .options = "len heads head slope-ratio alibi scale cmap",
    .not_in_subtitle = "scale", /* the colourbar and the window marks say it */
    .values = alibi_values,
};
