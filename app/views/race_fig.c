/* race_fig.c: the position race's figure, keys and log (race_fig.h). */
#include "race_fig.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "infile.h"
#include "input.h"
#include "views.h"

void app_race_ui_default(app_race_ui *u)
{
    memset(u, 0, sizeof *u);
    u->far = 2;
    u->smooth = 0.95;
}

int app_race_lane_init(app_race_lane *l, const char *label, int steps, long tokens_per_step,
                       int ctx)
{
    memset(l, 0, sizeof *l);
    snprintf(l->label, sizeof l->label, "%s", label);
    l->steps = steps;
    l->tokens_per_step = tokens_per_step;
    l->ctx = ctx;
    l->loss = calloc(steps > 0 ? (size_t)steps : 1, sizeof *l->loss);
    return l->loss ? 0 : -1;
}

int app_race_add_eval(app_race_lane *l, const app_race_eval *e)
{
    if (l->nevals == l->evals_cap) {
        int cap = l->evals_cap ? 2 * l->evals_cap : 16;
        app_race_eval *ne = realloc(l->evals, (size_t)cap * sizeof *ne);
        if (!ne) return -1;
        l->evals = ne;
        l->evals_cap = cap;
    }
    l->evals[l->nevals++] = *e;
    return 0;
}

void app_race_data_free(app_race_data *d)
{
    for (int i = 0; i < d->n; i++) {
        free(d->lanes[i].loss);
        free(d->lanes[i].evals);
    }
    memset(d, 0, sizeof *d);
}

void app_race_ema(const float *x, int n, double a, double *out)
{
    double ema = 0, ak = 1;
    for (int t = 0; t < n; t++) {
        ema = a * ema + (1 - a) * x[t];
        ak *= a;
        out[t] = ak < 1 ? ema / (1 - ak) : x[t];
    }
}

/* ---- the figure ------------------------------------------------------------------------------ */

/* c faded towards the background: the raw curve behind its average. */
static uint32_t faint(uint32_t c, uint32_t bg, double k)
{
    uint32_t out = 0;
    for (int sh = 0; sh <= 16; sh += 8) {
        double a = (c >> sh) & 255, b = (bg >> sh) & 255;
        out |= (uint32_t)lround(b + (a - b) * k) << sh;
    }
    return out;
}

static void fmt_clock(double s, char *buf, size_t n)
{
    if (!(s >= 0)) {
        snprintf(buf, n, "--:--");
        return;
    }
    if (s > 359999) s = 359999;
    int t = (int)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, n, "%d:%02d:%02d", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, n, "%02d:%02d", t / 60, t % 60);
}

static long goal_tokens(const app_race_data *d)
{
    long hi = 0;
    for (int i = 0; i < d->n; i++) {
        long g = (long)d->lanes[i].steps * d->lanes[i].tokens_per_step;
        if (g > hi) hi = g;
    }
    return hi > 0 ? hi : 1;
}

static int shown_lane(const app_race_ui *u, int i)
{
    return !(u->hidden & (1u << i));
}

/* A small heading over a panel, the first of texts (longest first) that fits its width;
 * returns the rest of r. */
static fig_rect panel_head(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                           const char *const *texts, int n, int focused)
{
    double h = t->cells ? 2 : t->text_h * 1.3;
    char buf[160];
    int k = 0;
    while (k + 1 < n && scene_text_width_bold(t, texts[k], 1.0) > r.w) k++;
    const char *str = scene_fit_text(s, t, texts[k], 1.0, r.w, 0, buf, sizeof buf);
    scene_text(s, r.x, r.y + (t->cells ? 0 : t->text_h * 0.15), str, 1.0, SCENE_LEFT | SCENE_TOP,
               focused ? th->accent : th->fg, SCENE_BOLD);
    r.y += h;
    r.h -= h;
    return r;
}

/* The log axis of a loss: [lo, hi] with a little room, and always 0.5..2 at least, so the
 * axis has its 0.5, 1, 2 (5) ticks from the first step (a loss starts near ln V, about 5.7, and
 * falls towards 0.7) and does not rescale as the curves come down. */
static void log_range(const scene_target *t, fig_rect r, double lo, double hi, double *y0,
                      double *y1)
{
    if (!(lo > 0) || !(hi >= lo)) lo = 1, hi = 2;
    /* a short plot (a zoomed window, a paper column) has room for 1, 2, 5 but not for 0.5 a
     * line of text below 1: it starts at 1 until the curves go below it */
    double floor_at = t->cells || r.h >= 14 * t->text_h ? 0.5 : 1;
    *y0 = fmin(lo / 1.08, floor_at);
    *y1 = fmax(hi * 1.08, 2);
}

/* legend 0: the compact layout's table names the colours (race_table) */
/* The x axis's title, left out of a plot under 8.5 lines of text (a window at 200%, 300 x 200):
 * the line goes to the plot, whose log axis needs it to keep its 1 and 2 apart; the panel's
 * heading and the figure's subtitle say the axis counts tokens. */
static const char *x_title(const scene_target *t, fig_rect r)
{
    return t->cells || r.h >= 8.5 * t->text_h ? "tokens seen" : NULL;
}

static void train_panel(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                        const app_race_data *d, const app_race_ui *u, int focused, int legend)
{
    char head[160];
    snprintf(head, sizeof head, "Training loss (EMA %.3g)", u->smooth);
    const char *heads[] = {head, "Training loss"};
    r = panel_head(s, t, th, r, heads, 2, focused);
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < d->n; i++) {
        const app_race_lane *l = &d->lanes[i];
        if (!shown_lane(u, i)) continue;
        for (int k = 0; k < l->done; k++)
            if (l->loss[k] > 0 && isfinite(l->loss[k])) {
                lo = fmin(lo, l->loss[k]);
                hi = fmax(hi, l->loss[k]);
            }
    }
    double y0, y1;
    log_range(t, r, lo, hi, &y0, &y1);
    /* the legend (names and the smoothed loss now) above the plot when it would take much of it
     * (figure.h's fig_legend_take); it also names the colours of the held-out panel */
    const char *names[APP_RACE_MAX_LANES];
    char named[APP_RACE_MAX_LANES][APP_RACE_LABEL + 16];
    uint32_t colors[APP_RACE_MAX_LANES];
    int nl = 0;
    for (int i = 0; i < d->n; i++) {
        const app_race_lane *l = &d->lanes[i];
        if (!shown_lane(u, i)) continue;
        double *e = l->done > 0 ? malloc(sizeof *e * (size_t)l->done) : NULL;
        if (e) app_race_ema(l->loss, l->done, u->smooth, e);
        char v[32] = "";
        if (e) fig_num(e[l->done - 1], 3, v, sizeof v);
        free(e);
        snprintf(named[nl], sizeof named[nl], "%s%s%s", l->label, v[0] ? " " : "", v);
        names[nl] = named[nl];
        colors[nl++] = th->series[i % 8];
    }
    if (!legend) nl = 0;
    fig_legend_slot slot = fig_legend_take(t, &r, names, nl);
    fig_axes a = fig_axes_draw(s, t, th, r, 0, (double)goal_tokens(d), y0, y1, x_title(t, r),
                               legend ? "loss (nats/token)" : "loss", FIG_GRID | FIG_YLOG);
    fig_mark_main(s, a.area, "training loss");
    scene_name_panel(s, "training");
    for (int i = 0; i < d->n; i++) {
        const app_race_lane *l = &d->lanes[i];
        if (!shown_lane(u, i) || l->done < 1) continue;
        double *x = malloc(sizeof *x * (size_t)l->done * 3);
        if (!x) continue;
        double *y = x + l->done, *e = y + l->done;
        for (int k = 0; k < l->done; k++) {
            x[k] = (double)(k + 1) * l->tokens_per_step;
            y[k] = l->loss[k];
        }
        app_race_ema(l->loss, l->done, u->smooth, e);
        uint32_t c = th->series[i % 8];
        if (!t->cells) fig_curve(s, &a, x, y, (size_t)l->done, faint(c, th->bg, 0.3), 0, 0);
        fig_curve(s, &a, x, e, (size_t)l->done, c, t->cells ? 0 : 2 * t->hairline, 0);
        free(x);
    }
    if (nl && !fig_legend_in_slot(s, t, th, &slot, names, colors, NULL, nl))
        fig_legend(s, t, th, &a, names, colors, nl, 0);
}

static void held_panel(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                       const app_race_data *d, const app_race_ui *u, int focused)
{
    int far = u->far == 1 ? 1 : 2;
    char head[160], shorter[64];
    snprintf(head, sizeof head, "Held-out: ctx solid, %s dashed", far == 1 ? "2x" : "4x");
    snprintf(shorter, sizeof shorter, "Held-out (%s dashed)", far == 1 ? "2x" : "4x");
    const char *heads[] = {head, shorter, "Held-out"};
    r = panel_head(s, t, th, r, heads, 3, focused);
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < d->n; i++) {
        const app_race_lane *l = &d->lanes[i];
        if (!shown_lane(u, i)) continue;
        for (int k = 0; k < l->nevals; k++)
            for (int j = 0; j <= far; j += far) {
                double v = l->evals[k].held[j];
                if (v > 0 && isfinite(v)) lo = fmin(lo, v), hi = fmax(hi, v);
            }
    }
    double y0, y1;
    log_range(t, r, lo, hi, &y0, &y1);
    fig_axes a = fig_axes_draw(s, t, th, r, 0, (double)goal_tokens(d), y0, y1, x_title(t, r),
                               "loss", FIG_GRID | FIG_YLOG);
    scene_name_panel(s, "held-out");
    for (int i = 0; i < d->n; i++) {
        const app_race_lane *l = &d->lanes[i];
        if (!shown_lane(u, i) || l->nevals < 1) continue;
        double *x = malloc(sizeof *x * (size_t)l->nevals * 3);
        if (!x) continue;
        double *y = x + l->nevals, *z = y + l->nevals;
        for (int k = 0; k < l->nevals; k++) {
            x[k] = (double)l->evals[k].tokens;
            y[k] = l->evals[k].held[0];
            z[k] = l->evals[k].held[far];
        }
        uint32_t c = th->series[i % 8];
        fig_curve(s, &a, x, y, (size_t)l->nevals, c, t->cells ? 0 : 1.5 * t->hairline, 0);
        fig_curve(s, &a, x, z, (size_t)l->nevals, c, t->cells ? 0 : 1.5 * t->hairline,
                  SCENE_DASHED);
        free(x);
    }
    /* no legend of its own: the colours are the training panel's, and the latest values are
     * in race.csv and the summary pelab race prints */
}

/* The sink panel's grid: its lanes in rows of ncol columns, each a label, a bar and the share.
 * The fewest columns whose rows are at least a line of text tall within maxh and that fit w;
 * when none does, the most that fit w. Returns ncol (0: not even one column fits) and the
 * height the panel needs in *need. */
typedef struct sink_grid {
    int idx[APP_RACE_MAX_LANES], n; /* the shown lanes */
    double lw, vw, gap, head, row;  /* label and value widths, gaps, heading, least row height */
} sink_grid;

static void sink_grid_init(const scene_target *t, const app_race_data *d, const app_race_ui *u,
                           sink_grid *g)
{
    g->n = 0;
    g->lw = 0;
    for (int i = 0; i < d->n; i++)
        if (shown_lane(u, i)) {
            g->idx[g->n++] = i;
            g->lw = fmax(g->lw, scene_text_width(t, d->lanes[i].label, 1.0));
        }
    g->gap = t->cells ? 1 : t->text_h * 0.5;
    g->vw = scene_text_width(t, "100%", 1.0);
    g->head = t->cells ? 2 : t->text_h * 1.3;
    g->row = t->cells ? 2 : t->text_h * 1.2;
}

static double sink_cell_min(const scene_target *t, const sink_grid *g)
{
    return g->lw + g->gap + (t->cells ? 6 : 3 * t->text_h) + g->gap + g->vw;
}

static int sink_cols(const scene_target *t, const sink_grid *g, double w, double maxh, double *need)
{
    int best = 0;
    double colgap = 2 * g->gap;
    *need = g->head;
    for (int c = 1; c <= (g->n > 0 ? g->n : 1); c++) {
        if (c * sink_cell_min(t, g) + (c - 1) * colgap > w) break;
        int rows = (g->n + c - 1) / c;
        best = c;
        *need = g->head + rows * g->row;
        if (*need <= maxh) break;
    }
    return best;
}

static void sink_panel(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                       const app_race_data *d, const app_race_ui *u, int focused)
{
    static const char *const heads[] = {"First-token sink share", "Sink share"};
    r = panel_head(s, t, th, r, heads, 2, focused);
    scene_name_panel(s, "sink");
    sink_grid g;
    sink_grid_init(t, d, u, &g);
    if (g.n == 0) return;
    double need;
    int ncol = sink_cols(t, &g, r.w, r.h + g.head, &need);
    if (ncol < 1) return;
    int rows = (g.n + ncol - 1) / ncol;
    double colgap = 2 * g.gap, cw = (r.w - (ncol - 1) * colgap) / ncol;
    double row = r.h / rows;
    if (t->cells) row = fmax(2, floor(row / 2) * 2);
    double thick = fmax(fig_min_bar(t), t->cells ? 2 : fmin(row * 0.7, t->text_h * 1.2));
    for (int k = 0; k < g.n; k++) {
        int i = g.idx[k], col = k / rows, rk = k % rows;
        const app_race_lane *l = &d->lanes[i];
        double x = r.x + col * (cw + colgap), cy = r.y + row * (rk + 0.5);
        /* a row that would fall below the panel, or be thinner than its text, is not drawn */
        if (cy + thick / 2 > r.y + r.h + 0.01 || (!t->cells && row < t->text_h * 0.99)) break;
        if (t->cells) cy = floor(cy / 2) * 2 + 1;
        fig_rect bars = {x + g.lw + g.gap, 0, cw - g.lw - g.vw - 2 * g.gap, 0};
        double v = l->nevals ? l->evals[l->nevals - 1].sink : 0;
        uint32_t c = th->series[i % 8];
        scene_text(s, x + g.lw, cy, l->label, 1.0, SCENE_RIGHT | SCENE_MIDDLE, th->fg, 0);
        scene_rect(s, bars.x, cy - thick / 2, bars.w, thick, th->grid, SCENE_FILL);
        if (v > 0)
            scene_rect(s, bars.x, cy - thick / 2, fmax(bars.w * v, 1), thick, c,
                       SCENE_FILL | SCENE_HBAR);
        scene_textf(s, bars.x + bars.w + g.gap, cy, 1.0, SCENE_LEFT | SCENE_MIDDLE, th->fg, 0,
                    "%.0f%%", 100 * v);
    }
}

/* The compact layout's key (a paper column, a zoomed window): under the two plots, in as many
 * columns as fit, each scheme's colour, name, smoothed training loss and sink share now. */
typedef struct race_key_grid {
    double sw, gap, lw, nw, kw, cell, row;
    int cols, rows, n;
} race_key_grid;

/* the key's text, a little smaller than the panels' (a legend's size) */
#define KEY_SIZE (t->cells ? 1.0 : 0.85)

static void race_key_layout(const scene_target *t, const app_race_data *d, const app_race_ui *u,
                            double w, race_key_grid *k)
{
    k->sw = t->cells ? 2 : t->text_h * KEY_SIZE * 0.9;
    k->gap = t->cells ? 1 : t->text_h * KEY_SIZE * 0.4;
    k->lw = 0;
    k->n = 0;
    for (int i = 0; i < d->n; i++)
        if (shown_lane(u, i)) {
            k->n++;
            k->lw = fmax(k->lw, scene_text_width(t, d->lanes[i].label, KEY_SIZE));
        }
    k->nw = scene_text_width(t, "00.00", KEY_SIZE);
    k->kw = scene_text_width(t, "sink 100%", KEY_SIZE);
    double colgap = 2 * k->gap;
    for (;;) {
        k->cell = k->sw + k->gap + k->lw + k->gap + (k->nw > 0 ? k->nw + k->gap : 0) + k->kw;
        k->cols = (int)floor((w + colgap) / (k->cell + colgap));
        if (k->nw == 0 || k->n < 2) break;
        /* a single column of six rows leaves the plots nothing at 300 x 200, and a row more
         * than needed takes a zoomed window's plots a line of text: the loss now (the curves'
         * ends show it) gives way when that saves a row */
        double bare = k->cell - k->nw - k->gap;
        int cols_bare = (int)floor((w + colgap) / (bare + colgap));
        int rows = (k->n + (k->cols > 0 ? k->cols : 1) - 1) / (k->cols > 0 ? k->cols : 1);
        int rows_bare =
            (k->n + (cols_bare > 0 ? cols_bare : 1) - 1) / (cols_bare > 0 ? cols_bare : 1);
        if (k->cols >= 2 && rows_bare >= rows) break;
        k->nw = 0;
    }
    if (k->cols > k->n) k->cols = k->n;
    if (k->cols < 1) k->cols = 1;
    k->rows = k->n ? (k->n + k->cols - 1) / k->cols : 0;
    k->row = t->cells ? 2 : t->text_h * KEY_SIZE * 1.3;
}

static void race_key(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                     const app_race_data *d, const app_race_ui *u, const race_key_grid *k)
{
    scene_name_panel(s, "sink");
    double colgap = 2 * k->gap;
    double cw = k->cols > 1 ? (r.w - (k->cols - 1) * colgap) / k->cols : r.w;
    int j = 0;
    for (int i = 0; i < d->n; i++) {
        const app_race_lane *l = &d->lanes[i];
        if (!shown_lane(u, i)) continue;
        int col = j / k->rows, rk = j % k->rows;
        j++;
        double x = r.x + col * (cw + colgap), y = r.y + k->row * (rk + 0.5);
        if (t->cells) y = r.y + 2 * rk + 1;
        if (y + (t->cells ? 1 : t->text_h * KEY_SIZE / 2) > r.y + r.h + 0.01) {
            scene_note_cut(s, l->label);
            break;
        }
        uint32_t c = th->series[i % 8];
        if (t->cells)
            scene_text(s, x, y, "━━", KEY_SIZE, SCENE_LEFT | SCENE_MIDDLE, c, 0);
        else
            scene_rect(s, x, y - t->hairline * 1.5, k->sw, t->hairline * 3, c, SCENE_FILL);
        scene_text(s, x + k->sw + k->gap, y, l->label, KEY_SIZE, SCENE_LEFT | SCENE_MIDDLE, th->fg,
                   0);
        char v[32] = "-";
        double *e = l->done > 0 && k->nw > 0 ? malloc(sizeof *e * (size_t)l->done) : NULL;
        if (e) {
            app_race_ema(l->loss, l->done, u->smooth, e);
            snprintf(v, sizeof v, "%.2f", e[l->done - 1]);
            free(e);
        }
        double xr = x + fmin(cw, k->cell);
        if (k->nw > 0)
            scene_text(s, xr - k->kw - k->gap, y, v, KEY_SIZE, SCENE_RIGHT | SCENE_MIDDLE, th->fg,
                       0);
        scene_textf(s, xr, y, KEY_SIZE, SCENE_RIGHT | SCENE_MIDDLE, th->fg, 0, "sink %.0f%%",
                    l->nevals ? 100 * l->evals[l->nevals - 1].sink : 0);
    }
}

/* The compact layout: training and held-out side by side over the key. */
static void race_compact(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                         const app_race_data *d, const app_race_ui *u, double gap)
{
    race_key_grid k;
    race_key_layout(t, d, u, r.w, &k);
    fig_rect key = fig_take_bottom(&r, k.rows * k.row, gap * 0.5);
    fig_rect right = fig_take_right(&r, r.w * 0.5, gap);
    train_panel(s, t, th, r, d, u, 0, 0);
    held_panel(s, t, th, right, d, u, 0);
    race_key(s, t, th, key, d, u, &k);
}

const char app_race_keys_help[] =
    "space pause  s stop & save  S record  1-8 show/hide  tab panel  x 2x/4x  +/- smooth  q quit";

void app_race_build(scene *s, const scene_target *t, const app_race_data *d, const app_race_ui *u)
{
    const fig_theme *th = fig_theme_get(u->dark);
    scene_reset(s, t->width, t->height, th->bg);
    s->text_h = t->text_h;
    long seen = 0;
    int done = 0, steps = 0;
    for (int i = 0; i < d->n; i++) {
        seen += (long)d->lanes[i].done * d->lanes[i].tokens_per_step;
        done += d->lanes[i].done;
        steps += d->lanes[i].steps;
    }
    char title[160], sub[320], el[32], eta[32], tps[32], tk[32];
    snprintf(title, sizeof title, "The position race: %d scheme%s, %d of %d steps", d->n,
             d->n == 1 ? "" : "s", done, steps);
    fmt_clock(d->elapsed_s, el, sizeof el);
    fmt_clock(d->eta_s, eta, sizeof eta);
    fig_num(d->tokens_per_s, 3, tps, sizeof tps);
    fig_num((double)seen, 3, tk, sizeof tk);
    snprintf(sub, sizeof sub, "%s tokens  %s tokens/s  %s elapsed  %s%s%s", tk, tps, el,
             d->finished ? "" : "ETA ", d->finished ? (d->stopped ? "stopped" : "finished") : eta,
             d->paused ? "  PAUSED" : "");
    fig_rect r = app_frame(s, t, th, title, sub);
    if (u->live) {
        double h = t->cells ? 2 : t->text_h * 1.4;
        /* the keys in full, in short, or (a tiny canvas) not at all: never cut mid-word */
        static const char short_help[] = "space pause  s stop  S record  1-8 hide  tab  q quit";
        const char *str = scene_text_width(t, app_race_keys_help, 0.9) <= r.w ? app_race_keys_help
                          : scene_text_width(t, short_help, 0.9) <= r.w       ? short_help
                                                                              : NULL;
        char note[240];
        if (u->note[0]) /* what S did, cut to the line (the path is in race.csv's folder) */
            str = scene_fit_text(s, t, u->note, 0.9, r.w, 1, note, sizeof note);
        if (str) {
            scene_text(s, r.x, r.y + r.h - h / 2, str, 0.9, SCENE_LEFT | SCENE_MIDDLE,
                       u->note[0] ? (u->note_bad ? th->accent : th->fg) : th->muted, 0);
            r.h -= h;
        }
    }
    double gap = t->cells ? 2 : t->text_h;
    switch (u->focus) {
    case APP_RACE_FOCUS_TRAIN:
        train_panel(s, t, th, r, d, u, 1, 1);
        return;
    case APP_RACE_FOCUS_HELD:
        held_panel(s, t, th, r, d, u, 1);
        return;
    case APP_RACE_FOCUS_SINK:
        sink_panel(s, t, th, r, d, u, 1);
        return;
    }
    sink_grid g;
    sink_grid_init(t, d, u, &g);
    double line = t->cells ? 2 : t->text_h, need;
    double held_min = 9 * line; /* heading, a few ticks, the axis titles */
    if (r.w > 1.6 * r.h) {
        /* wide: training on the left, held-out and sinks stacked on the right, when the sinks'
         * rows fit there a line of text tall each; else the sinks in a strip of columns along
         * the bottom, training and held-out side by side above it (a paper column, a zoomed
         * window) */
        double rw = r.w * 0.45, avail = r.h - gap - held_min;
        int cols = sink_cols(t, &g, rw, avail, &need);
        if (cols >= 1 && need <= avail) {
            fig_rect right = fig_take_right(&r, rw, gap);
            double sh = fmax(need, fmin(right.h * 0.4, line * 1.6 * (d->n + 1.5)));
            if (sh > avail) sh = need;
            fig_rect sink = fig_take_bottom(&right, sh, gap);
            train_panel(s, t, th, r, d, u, 0, 1);
            held_panel(s, t, th, right, d, u, 0);
            sink_panel(s, t, th, sink, d, u, 0);
            return;
        }
        race_compact(s, t, th, r, d, u, gap);
    } else {
        /* tall: the three panels stacked (the compact layout when the sinks' rows do not fit) */
        int cols = sink_cols(t, &g, r.w, r.h * 0.3, &need);
        if (cols < 1 || need > r.h * 0.3) {
            race_compact(s, t, th, r, d, u, gap);
            return;
        }
        double sh = fmax(need, fmin(r.h * 0.25, line * 1.6 * (d->n + 1.5)));
        if (sh > r.h * 0.3) sh = need;
        /* and the two plots above them each a plot's height (heading, ticks 1 2 5 apart, axis
         * titles): three schemes' sink rows fit a 2.2 x 3.5 in column where six do not, and
         * stacked there the held-out plot was 19 px, its log ticks 1 and 2 on each other */
        if ((r.h - sh - gap) * 0.45 - gap < held_min) {
            race_compact(s, t, th, r, d, u, gap);
            return;
        }
        fig_rect sink = fig_take_bottom(&r, sh, gap);
        fig_rect held = fig_take_bottom(&r, r.h * 0.45, gap);
        train_panel(s, t, th, r, d, u, 0, 1);
        held_panel(s, t, th, held, d, u, 0);
        sink_panel(s, t, th, sink, d, u, 0);
    }
}

int app_race_key(app_race_ui *u, const app_race_data *d, uint32_t key)
{
    u->note[0] = 0; /* a key after S's note: the key help again */
    switch (key) {
    case ' ':
    case 'p':
        return APP_RACE_ACT_PAUSE;
    case 's':
        return APP_RACE_ACT_STOP;
    case 'S':
        return APP_RACE_ACT_RECORD;
    case 'q':
    case UI_KEY_ESC:
        return APP_RACE_ACT_QUIT;
    case UI_KEY_TAB:
        u->focus = (u->focus + 1) % APP_RACE_FOCUS_COUNT;
        return APP_RACE_ACT_REDRAW;
    case UI_KEY_BTAB:
        u->focus = (u->focus + APP_RACE_FOCUS_COUNT - 1) % APP_RACE_FOCUS_COUNT;
        return APP_RACE_ACT_REDRAW;
    case 'x':
        u->far = u->far == 1 ? 2 : 1;
        return APP_RACE_ACT_REDRAW;
    case '+':
    case '=':
        u->smooth = fmin(0.999, 1 - (1 - u->smooth) / 2);
        return APP_RACE_ACT_REDRAW;
    case '-':
        u->smooth = fmax(0, 1 - (1 - u->smooth) * 2);
        if (u->smooth < 0.01) u->smooth = 0;
        return APP_RACE_ACT_REDRAW;
    }
    if (key >= '1' && key <= '8' && (int)(key - '1') < d->n) {
        u->hidden ^= 1u << (key - '1');
        return APP_RACE_ACT_REDRAW;
    }
    return APP_RACE_ACT_NONE;
}

/* ---- the log ----------------------------------------------------------------------------------
 */

int app_race_log_header(FILE *f, const app_race_data *d, const char *command)
{
    fprintf(f, "# pelab race: training and held-out loss of each scheme by step\n");
    /* the command is one line: a newline typed into an argument would end it */
    fprintf(f, "# command ");
    for (const char *c = command; c && *c; c++) fputc(*c == '\n' || *c == '\r' ? ' ' : *c, f);
    fputc('\n', f);
    for (int i = 0; i < d->n; i++)
        fprintf(f, "# lane %s steps=%d tokens_per_step=%ld ctx=%d\n", d->lanes[i].label,
                d->lanes[i].steps, d->lanes[i].tokens_per_step, d->lanes[i].ctx);
    fprintf(f, "scheme,step,tokens,train_loss,heldout_ctx,heldout_2x,heldout_4x,sink_share,"
               "tokens_per_s,elapsed_s\n");
    return ferror(f) ? -1 : 0;
}

int app_race_log_rows(FILE *f, const app_race_data *d, int i, int *step_at, int *eval_at)
{
    const app_race_lane *l = &d->lanes[i];
    /* steps and measurements merged in step order (a measurement of step k after its step) */
    while (*step_at < l->done || *eval_at < l->nevals) {
        int next_eval = *eval_at < l->nevals ? l->evals[*eval_at].step : -1;
        if (*eval_at < l->nevals && (next_eval <= *step_at || *step_at >= l->done)) {
            const app_race_eval *e = &l->evals[(*eval_at)++];
            fprintf(f, "%s,%d,%ld,,%.6f,%.6f,%.6f,%.6f,%.0f,%.3f\n", l->label, e->step, e->tokens,
                    e->held[0], e->held[1], e->held[2], e->sink, d->tokens_per_s, d->elapsed_s);
        } else {
            int k = (*step_at)++;
            fprintf(f, "%s,%d,%ld,%.6f,,,,,%.0f,%.3f\n", l->label, k + 1,
                    (long)(k + 1) * l->tokens_per_step, l->loss[k], d->tokens_per_s, d->elapsed_s);
        }
    }
    return ferror(f) ? -1 : 0;
}

static int lane_of(app_race_data *d, const char *label, size_t n)
{
    for (int i = 0; i < d->n; i++)
        if (strlen(d->lanes[i].label) == n && !memcmp(d->lanes[i].label, label, n)) return i;
    return -1;
}

/* Next field of a CSV row (no quoting: labels hold no comma). */
static const char *field(const char *p, const char *end, const char **f, size_t *n)
{
    *f = p;
    while (p < end && *p != ',') p++;
    *n = (size_t)(p - *f);
    return p < end ? p + 1 : p;
}

/* The log's columns, as app_race_log_header writes them. */
static const char *const log_cols[10] = {"scheme",       "step",       "tokens",     "train_loss",
                                         "heldout_ctx",  "heldout_2x", "heldout_4x", "sink_share",
                                         "tokens_per_s", "elapsed_s"};
static const char log_header[] = "scheme,step,tokens,train_loss,heldout_ctx,heldout_2x,"
                                 "heldout_4x,sink_share,tokens_per_s,elapsed_s";

/* A problem of the log: "line N, column C (NAME): 'VALUE' WHY" (the value cut to 40 bytes and
 * made printable, a hostile log cannot write control bytes to the terminal). Returns -1. */
static int log_problem(char *err, size_t errlen, int line, int col, const char *v, size_t n,
                       const char *why)
{
    char shown[48];
    size_t k = 0;
    for (size_t i = 0; i < n && k < 40; i++) shown[k++] = v[i] >= 32 && v[i] < 127 ? v[i] : '?';
    shown[k] = 0;
    if (col > 0)
        snprintf(err, errlen, "line %d, column %d (%s): '%s%s' %s", line, col, log_cols[col - 1],
                 shown, n > 40 ? "..." : "", why);
    else
        snprintf(err, errlen, "line %d: '%s%s' %s", line, shown, n > 40 ? "..." : "", why);
    return -1;
}

/* Field col (1-based) of a row as a number in [lo, hi] (whole when whole); -1 with a message. */
static int log_num(const char *f, size_t n, int line, int col, double lo, double hi, int whole,
                   const char *allowed, double *v, char *err, size_t errlen)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf) return log_problem(err, errlen, line, col, f, n, allowed);
    memcpy(buf, f, n);
    buf[n] = 0;
    char *e;
    errno = 0;
    *v = strtod(buf, &e);
    if (*e || errno || !isfinite(*v) || *v < lo || *v > hi || (whole && *v != floor(*v)))
        return log_problem(err, errlen, line, col, f, n, allowed);
    return 0;
}

/* "# lane LABEL steps=N tokens_per_step=N ctx=N" into lane d->n. */
static int log_lane(const char *q, size_t ln, int line, app_race_data *d, char *err, size_t errlen)
{
    static const char form[] = "is not '# lane LABEL steps=1..10000000 "
                               "tokens_per_step=1..100000000 ctx=1..65536'";
    char lab[APP_RACE_LABEL], tmp[256];
    int steps, ctx, used = 0;
    long tps;
    if (ln >= sizeof tmp) return log_problem(err, errlen, line, 0, q, ln, form);
    memcpy(tmp, q, ln);
    tmp[ln] = 0;
    if (sscanf(tmp, "# lane %47s steps=%d tokens_per_step=%ld ctx=%d%n", lab, &steps, &tps, &ctx,
               &used) != 4 ||
        tmp[used] || steps < 1 || steps > 10000000 || tps < 1 || tps > 100000000 || ctx < 1 ||
        ctx > 65536)
        return log_problem(err, errlen, line, 0, q, ln, form);
    if (d->n >= APP_RACE_MAX_LANES)
        return log_problem(err, errlen, line, 0, q, ln, "is one lane too many: at most 8 race");
    for (const char *c = lab; *c; c++)
        if (*c == ',' || (unsigned char)*c < 32 || *c == 127)
            return log_problem(err, errlen, line, 0, q, ln,
                               "names a scheme with a comma or a control byte");
    if (lane_of(d, lab, strlen(lab)) >= 0)
        return log_problem(err, errlen, line, 0, q, ln, "names a scheme a second time");
    if (app_race_lane_init(&d->lanes[d->n], lab, steps, tps, ctx)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    d->n++;
    return 0;
}

/* One data row: a training step (train_loss set, the held-out fields empty) or a measurement
 * (train_loss empty, the four held-out fields set). */
static int log_row(const char *q, size_t ln, int line, app_race_data *d, char *err, size_t errlen)
{
    const char *f[10];
    size_t fn[10];
    const char *r = q, *re = q + ln;
    int nf = 1;
    for (const char *c = q; c < re; c++) nf += *c == ',';
    if (nf != 10) {
        char why[160];
        snprintf(why, sizeof why, "has %d fields: a row has 10 (%s)", nf, log_header);
        return log_problem(err, errlen, line, 0, q, ln, why);
    }
    for (int k = 0; k < 10; k++) r = field(r, re, &f[k], &fn[k]);
    int li = lane_of(d, f[0], fn[0]);
    if (li < 0) return log_problem(err, errlen, line, 1, f[0], fn[0], "is no '# lane' above");
    app_race_lane *l = &d->lanes[li];
    char why[160];
    double step, tokens, v[4], tps, el;
    snprintf(why, sizeof why, "is not a step: a whole number 0..%d (its lane's steps)", l->steps);
    if (log_num(f[1], fn[1], line, 2, 0, l->steps, 1, why, &step, err, errlen)) return -1;
    snprintf(why, sizeof why, "is not the tokens of step %.0f: %ld", step,
             (long)step * l->tokens_per_step);
    if (log_num(f[2], fn[2], line, 3, 0, 1e18, 1, why, &tokens, err, errlen) ||
        (long)tokens != (long)step * l->tokens_per_step)
        return log_problem(err, errlen, line, 3, f[2], fn[2], why);
    if (log_num(f[8], fn[8], line, 9, 0, 1e15, 0, "is not a speed: a finite number >= 0", &tps, err,
                errlen) ||
        log_num(f[9], fn[9], line, 10, 0, 1e9, 0, "is not a time: a finite number of seconds >= 0",
                &el, err, errlen))
        return -1;
    static const char loss_ok[] = "is not a loss: a finite number >= 0 (nats per token)";
    if (fn[3]) { /* a training step: the next one of its lane */
        for (int k = 4; k < 8; k++)
            if (fn[k])
                return log_problem(err, errlen, line, k + 1, f[k], fn[k],
                                   "is set on a training step's row: empty there");
        if (log_num(f[3], fn[3], line, 4, 0, 1e6, 0, loss_ok, &v[0], err, errlen)) return -1;
        if ((int)step != l->done + 1) {
            snprintf(why, sizeof why, "is out of order: %s's next training step is %d", l->label,
                     l->done + 1);
            return log_problem(err, errlen, line, 2, f[1], fn[1], why);
        }
        l->loss[l->done++] = (float)v[0];
        return 0;
    }
    for (int k = 0; k < 4; k++)
        if (log_num(f[4 + k], fn[4 + k], line, 5 + k, 0, k == 3 ? 1 : 1e6, 0,
                    k == 3 ? "is not a share: a number in [0, 1] (empty only on a training "
                             "step's row)"
                           : "is not a loss: a finite number >= 0 (empty only on a training "
                             "step's row)",
                    &v[k], err, errlen))
            return -1;
    if ((int)step > l->done) {
        snprintf(why, sizeof why,
                 "is ahead of the training rows: %s's step %d is measured after step %d's row",
                 l->label, (int)step, (int)step);
        return log_problem(err, errlen, line, 2, f[1], fn[1], why);
    }
    app_race_eval ev = {(int)step, (long)tokens, {v[0], v[1], v[2]}, v[3]};
    if (l->nevals && l->evals[l->nevals - 1].step >= ev.step) {
        snprintf(why, sizeof why, "is out of order: %s was measured at step %d before", l->label,
                 l->evals[l->nevals - 1].step);
        return log_problem(err, errlen, line, 2, f[1], fn[1], why);
    }
    if (app_race_add_eval(l, &ev)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    d->tokens_per_s = tps;
    d->elapsed_s = el;
    return 0;
}

int app_race_log_parse(const char *buf, size_t len, app_race_data *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    const char *p = buf, *end = buf + len;
    int line = 0, header = 0;
    while (p < end) {
        const char *e = memchr(p, '\n', (size_t)(end - p));
        if (!e) e = end;
        line++;
        const char *q = p;
        size_t ln = (size_t)(e - p);
        p = e < end ? e + 1 : end;
        if (ln && q[ln - 1] == '\r') ln--;
        if (ln == 0) continue;
        int rc = 0;
        if (q[0] == '#') {
            if (ln >= 7 && !memcmp(q, "# lane ", 7)) {
                if (header)
                    rc = log_problem(err, errlen, line, 0, q, ln,
                                     "comes after the header row: the '# lane' lines come first");
                else
                    rc = log_lane(q, ln, line, d, err, errlen);
            }
        } else if (!header) {
            if (ln != sizeof log_header - 1 || memcmp(q, log_header, ln))
                rc = log_problem(err, errlen, line, 0, q, ln,
                                 "is not the header row: scheme,step,tokens,train_loss,"
                                 "heldout_ctx,... (pelab race writes it)");
            else if (d->n == 0)
                rc = log_problem(err, errlen, line, 0, q, ln,
                                 "comes before any '# lane' line: the lanes come first");
            header = 1;
        } else
            rc = log_row(q, ln, line, d, err, errlen);
        if (rc) {
            app_race_data_free(d);
            return -1;
        }
    }
    if (!header || d->n == 0) {
        snprintf(err, errlen,
                 "not a race log: no \"# lane\" lines and header row (pelab race "
                 "writes race.csv)");
        app_race_data_free(d);
        return -1;
    }
    d->finished = 1;
    d->eta_s = 0;
    for (int i = 0; i < d->n; i++) d->stopped |= d->lanes[i].done < d->lanes[i].steps;
    return 0;
}

int app_race_log_read(const char *path, app_race_data *d, char *err, size_t errlen)
{
    char *buf;
    size_t len;
    char why[256];
    if (pe_infile_read(path, "--from", 256u << 20, &buf, &len, why, sizeof why) != PE_OK) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    char e2[512];
    int rc = app_race_log_parse(buf, len, d, e2, sizeof e2);
    if (rc) snprintf(err, errlen, "--from %s: %s", path, e2); /* as pe_infile_read names it */
    free(buf);
    return rc;
}
