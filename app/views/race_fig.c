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

/* A small heading over a panel; returns the rest of r. */
static fig_rect panel_head(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                           const char *text, int focused)
{
    double h = t->cells ? 2 : t->text_h * 1.3;
    char buf[160];
    const char *str = scene_fit_text(s, t, text, 1.0, r.w, 0, buf, sizeof buf);
    scene_text(s, r.x, r.y + (t->cells ? 0 : t->text_h * 0.15), str, 1.0, SCENE_LEFT | SCENE_TOP,
               focused ? th->accent : th->fg, SCENE_BOLD);
    r.y += h;
    r.h -= h;
    return r;
}

/* The log axis of a loss: [lo, hi] with a little room, and always 0.5..2 at least, so the
 * axis has its 0.5, 1, 2 (5) ticks from the first step (a loss starts near ln V, about 5.7, and
 * falls towards 0.7) and does not rescale as the curves come down. */
static void log_range(double lo, double hi, double *y0, double *y1)
{
    if (!(lo > 0) || !(hi >= lo)) lo = 1, hi = 2;
    *y0 = fmin(lo / 1.08, 0.5);
    *y1 = fmax(hi * 1.08, 2);
}

static void train_panel(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                        const app_race_data *d, const app_race_ui *u, int focused)
{
    char head[160];
    snprintf(head, sizeof head, "Training loss (EMA %.3g)", u->smooth);
    r = panel_head(s, t, th, r, head, focused);
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
    log_range(lo, hi, &y0, &y1);
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
    fig_legend_slot slot = fig_legend_take(t, &r, names, nl);
    fig_axes a = fig_axes_draw(s, t, th, r, 0, (double)goal_tokens(d), y0, y1, "tokens seen",
                               "loss (nats/token)", FIG_GRID | FIG_YLOG);
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
    char head[160];
    snprintf(head, sizeof head, "Held-out: ctx solid, %s dashed", far == 1 ? "2x" : "4x");
    r = panel_head(s, t, th, r, head, focused);
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
    log_range(lo, hi, &y0, &y1);
    fig_axes a = fig_axes_draw(s, t, th, r, 0, (double)goal_tokens(d), y0, y1, "tokens seen",
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

static void sink_panel(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                       const app_race_data *d, const app_race_ui *u, int focused)
{
    r = panel_head(s, t, th, r, "First-token sink share", focused);
    scene_name_panel(s, "sink");
    int idx[APP_RACE_MAX_LANES], n = 0;
    double lw = 0;
    for (int i = 0; i < d->n; i++)
        if (shown_lane(u, i)) {
            idx[n++] = i;
            lw = fmax(lw, scene_text_width(t, d->lanes[i].label, 1.0));
        }
    if (n == 0) return;
    double gap = t->cells ? 1 : t->text_h * 0.5;
    double vw = scene_text_width(t, "100%", 1.0) + gap;
    fig_rect bars = {r.x + lw + gap, r.y, r.w - lw - vw - 2 * gap, r.h};
    if (bars.w < 4) return;
    double row = r.h / n, th_bar = t->cells ? 2 : fmin(row * 0.7, t->text_h * 1.2);
    if (t->cells) row = fmax(2, floor(row / 2) * 2);
    double thick = fmax(fig_min_bar(t), th_bar);
    for (int k = 0; k < n; k++) {
        const app_race_lane *l = &d->lanes[idx[k]];
        double cy = r.y + row * (k + 0.5);
        if (cy + thick / 2 > r.y + r.h + 0.01) break;
        if (t->cells) cy = floor(cy / 2) * 2 + 1;
        double v = l->nevals ? l->evals[l->nevals - 1].sink : 0;
        uint32_t c = th->series[idx[k] % 8];
        scene_text(s, r.x + lw, cy, l->label, 1.0, SCENE_RIGHT | SCENE_MIDDLE, th->fg, 0);
        scene_rect(s, bars.x, cy - thick / 2, bars.w, thick, th->grid, SCENE_FILL);
        if (v > 0)
            scene_rect(s, bars.x, cy - thick / 2, fmax(bars.w * v, t->cells ? 1 : 1), thick, c,
                       SCENE_FILL | SCENE_HBAR);
        scene_textf(s, bars.x + bars.w + gap, cy, 1.0, SCENE_LEFT | SCENE_MIDDLE, th->fg, 0,
                    "%.0f%%", 100 * v);
    }
}

const char app_race_keys_help[] =
    "space pause  s stop & save  1-8 show/hide  tab panel  x 2x/4x  +/- smooth  q quit";

void app_race_build(scene *s, const scene_target *t, const app_race_data *d, const app_race_ui *u)
{
    const fig_theme *th = fig_theme_get(u->dark);
    scene_reset(s, t->width, t->height, th->bg);
    s->text_h = t->text_h;
    long seen = 0, goal = 0;
    int done = 0, steps = 0;
    for (int i = 0; i < d->n; i++) {
        seen += (long)d->lanes[i].done * d->lanes[i].tokens_per_step;
        goal += (long)d->lanes[i].steps * d->lanes[i].tokens_per_step;
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
        static const char short_help[] = "space pause  s stop  1-8 hide  tab panel  q quit";
        const char *str = scene_text_width(t, app_race_keys_help, 0.9) <= r.w ? app_race_keys_help
                          : scene_text_width(t, short_help, 0.9) <= r.w       ? short_help
                                                                              : NULL;
        if (str) {
            scene_text(s, r.x, r.y + r.h - h / 2, str, 0.9, SCENE_LEFT | SCENE_MIDDLE, th->muted,
                       0);
            r.h -= h;
        }
    }
    double gap = t->cells ? 2 : t->text_h;
    switch (u->focus) {
    case APP_RACE_FOCUS_TRAIN:
        train_panel(s, t, th, r, d, u, 1);
        return;
    case APP_RACE_FOCUS_HELD:
        held_panel(s, t, th, r, d, u, 1);
        return;
    case APP_RACE_FOCUS_SINK:
        sink_panel(s, t, th, r, d, u, 1);
        return;
    }
    if (r.w > 1.6 * r.h) {
        /* wide: training on the left, held-out and sinks stacked on the right */
        fig_rect right = fig_take_right(&r, r.w * 0.45, gap);
        double sh = fmin(right.h * 0.4, (t->cells ? 2 : t->text_h * 1.6) * (d->n + 1.5));
        fig_rect sink = fig_take_bottom(&right, sh, gap);
        train_panel(s, t, th, r, d, u, 0);
        held_panel(s, t, th, right, d, u, 0);
        sink_panel(s, t, th, sink, d, u, 0);
    } else {
        double sh = fmin(r.h * 0.25, (t->cells ? 2 : t->text_h * 1.6) * (d->n + 1.5));
        fig_rect sink = fig_take_bottom(&r, sh, gap);
        fig_rect held = fig_take_bottom(&r, r.h * 0.45, gap);
        train_panel(s, t, th, r, d, u, 0);
        held_panel(s, t, th, held, d, u, 0);
        sink_panel(s, t, th, sink, d, u, 0);
    }
}

int app_race_key(app_race_ui *u, const app_race_data *d, uint32_t key)
{
    switch (key) {
    case ' ':
    case 'p':
        return APP_RACE_ACT_PAUSE;
    case 's':
        return APP_RACE_ACT_STOP;
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

static int num(const char *f, size_t n, double *v)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, f, n);
    buf[n] = 0;
    char *e;
    errno = 0;
    *v = strtod(buf, &e);
    return *e || errno || !isfinite(*v) ? -1 : 0;
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
        if (q[0] == '#') {
            if (ln > 7 && !memcmp(q, "# lane ", 7)) {
                char lab[APP_RACE_LABEL];
                int steps, ctx;
                long tps;
                char tmp[256];
                if (ln >= sizeof tmp) goto bad;
                memcpy(tmp, q, ln);
                tmp[ln] = 0;
                if (sscanf(tmp, "# lane %47s steps=%d tokens_per_step=%ld ctx=%d", lab, &steps,
                           &tps, &ctx) != 4 ||
                    steps < 1 || steps > 10000000 || tps < 1 || tps > 100000000 || ctx < 1 ||
                    d->n >= APP_RACE_MAX_LANES || strchr(lab, ',') ||
                    lane_of(d, lab, strlen(lab)) >= 0)
                    goto bad;
                if (app_race_lane_init(&d->lanes[d->n], lab, steps, tps, ctx)) {
                    snprintf(err, errlen, "out of memory");
                    app_race_data_free(d);
                    return -1;
                }
                d->n++;
            }
            continue;
        }
        if (!header) {
            if (ln < 12 || memcmp(q, "scheme,step,", 12)) goto bad;
            header = 1;
            continue;
        }
        const char *f[10];
        size_t fn[10];
        const char *r = q, *re = q + ln;
        for (int k = 0; k < 10; k++) {
            if (r >= re && k < 9) goto bad;
            r = field(r, re, &f[k], &fn[k]);
        }
        if (r != re) goto bad;
        int li = lane_of(d, f[0], fn[0]);
        double step, tokens, v[6], tps, el;
        if (li < 0 || num(f[1], fn[1], &step) || num(f[2], fn[2], &tokens) ||
            num(f[8], fn[8], &tps) || num(f[9], fn[9], &el))
            goto bad;
        app_race_lane *l = &d->lanes[li];
        if (step != floor(step) || step < 0 || step > l->steps) goto bad;
        if (fn[3]) { /* a training step: the next one of its lane */
            if (num(f[3], fn[3], &v[0]) || (int)step != l->done + 1) goto bad;
            l->loss[l->done++] = (float)v[0];
        } else {
            for (int k = 0; k < 5; k++)
                if (num(f[4 + k], fn[4 + k], &v[k])) goto bad;
            app_race_eval ev = {(int)step, (long)tokens, {v[0], v[1], v[2]}, v[3]};
            if (l->nevals && l->evals[l->nevals - 1].step > ev.step) goto bad;
            if (app_race_add_eval(l, &ev)) {
                snprintf(err, errlen, "out of memory");
                app_race_data_free(d);
                return -1;
            }
        }
        d->tokens_per_s = tps;
        d->elapsed_s = el;
    }
    if (!header || d->n == 0) {
        snprintf(err, errlen, "not a race log: no \"# lane\" lines and header row");
        app_race_data_free(d);
        return -1;
    }
    d->finished = 1;
    d->eta_s = 0;
    for (int i = 0; i < d->n; i++) d->stopped |= d->lanes[i].done < d->lanes[i].steps;
    return 0;
bad:
    snprintf(err, errlen, "line %d is not a race log line", line);
    app_race_data_free(d);
    return -1;
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
    char e2[200];
    int rc = app_race_log_parse(buf, len, d, e2, sizeof e2);
    if (rc) snprintf(err, errlen, "%s: %s", path, e2);
    free(buf);
    return rc;
}
