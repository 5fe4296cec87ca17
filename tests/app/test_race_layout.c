/* test_race_layout.c: the race's figure (issue 24) at issue 11's sizes (layout_cases.h: the
 * window at 100, 150 and 200% zoom, a paper column of 3.5 x 2.2 in, 300 x 200, and the tall
 * 2.2 x 3.5 in and 300 x 600) with a race of six schemes and one of three (a lesson's), halfway
 * and at the end, live (key help) and exported: no text cut, no text over
 * text, the legends cover no data, the three panels drawn (the sinks as bars, or in the compact
 * layout's key where bars would be thinner than text), every scheme named, the training plot
 * marked as the main panel; each focused panel alone. Synthetic numbers shaped like a real
 * race. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cellgrid.h"
#include "layout_cases.h"
#include "lesson.h"
#include "race_fig.h"
#include "raster.h"
#include "tap.h"

typedef struct box {
    double x0, y0, x1, y1;
    const char *str;
} box;

static box text_box(const scene_item *it, const scene_target *t)
{
    double size = it->u.text.size > 0 ? it->u.text.size : 1;
    double w = (it->flags & SCENE_BOLD) ? scene_text_width_bold(t, it->u.text.str, size)
                                        : scene_text_width(t, it->u.text.str, size);
    double h = t->text_h * size;
    unsigned ha = it->u.text.anchor & 3, va = (it->u.text.anchor >> 2) & 3;
    double x0 = it->u.text.x - (ha == SCENE_CENTER ? w / 2 : ha == SCENE_RIGHT ? w : 0);
    double y0 = it->u.text.y - (va == 1 ? h / 2 : va == 2 ? h : 0);
    box b = {x0, y0, x0 + w, y0 + h, it->u.text.str};
    if (t->cells) {
        double col = floor(x0 + 0.5), row = floor(y0 / 2.0 + 0.5);
        b = (box){col, row, col + w, row + 1, it->u.text.str};
    }
    return b;
}

/* The first two text items that overlap (in a terminal: share a row's cells), or "". */
static void clash(const scene *s, const scene_target *t, char *why, size_t n)
{
    why[0] = 0;
    box *b = malloc(sizeof *b * (s->n + 1));
    size_t m = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->items[i].kind == SCENE_TEXT && s->items[i].u.text.str[0] &&
            !(s->items[i].u.text.anchor & SCENE_VERTICAL))
            b[m++] = text_box(&s->items[i], t);
    double gap = t->cells ? 1.0 : -1.0;
    for (size_t i = 0; i < m && !why[0]; i++)
        for (size_t j = i + 1; j < m && !why[0]; j++) {
            int rows =
                t->cells ? b[i].y0 == b[j].y0 : b[i].y0 < b[j].y1 - 1.0 && b[j].y0 < b[i].y1 - 1.0;
            if (rows && b[i].x0 < b[j].x1 + gap && b[j].x0 < b[i].x1 + gap)
                snprintf(why, n, "\"%s\" and \"%s\" overlap", b[i].str, b[j].str);
        }
    free(b);
}

static void make_race(app_race_data *d, int done, int lanes)
{
    static const char *const names[] = {"nope", "learned", "sinusoidal", "alibi", "rope", "t5"};
    static const double far4[] = {1.79, 3.99, 3.98, 0.66, 1.51, 0.85};
    memset(d, 0, sizeof *d);
    d->n = lanes;
    for (int i = 0; i < lanes; i++) {
        app_race_lane *l = &d->lanes[i];
        app_race_lane_init(l, names[i], 2000, 1024, 64);
        l->done = done;
        for (int k = 0; k < done; k++)
            l->loss[k] = (float)(0.7 + 0.02 * i + 5.0 * exp(-k / 300.0) +
                                 0.05 * sin(k * 0.7 + i)); /* noise of a batch */
        for (int k = 0; k <= done; k += 200) {
            double base = 0.69 + 0.01 * i + 5.0 * exp(-k / 300.0);
            app_race_eval e = {
                k, (long)k * 1024, {base, base + 0.1, base + far4[i] - 0.7}, k > 400 ? 0.1 * i : 0};
            app_race_add_eval(l, &e);
        }
    }
    d->elapsed_s = 30;
    d->tokens_per_s = 200000;
    d->eta_s = 30;
    d->finished = done == 2000;
}

int main(void)
{
    scene s;
    scene_init(&s, 1, 1, 0);
    /* six schemes (pelab race's default) and three (a lesson's race: learned, rope, alibi, whose
     * sink rows fit where six do not, so the tall sizes stack three panels) */
    for (int run = 0; run < 4; run++) {
        int half = run & 1, lanes = run < 2 ? 6 : 3;
        app_race_data d;
        make_race(&d, half ? 2000 : 1000, lanes);
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            const size_case *k = &cases[c];
            scene_target t = k->fe == FE_TERMINAL
                                 ? cellgrid_target(k->w, k->h)
                                 : raster_target(k->w, k->h, raster_font_px(k->w, k->h, k->zoom));
            for (int focus = 0; focus < APP_RACE_FOCUS_COUNT; focus++) {
                app_race_ui u;
                app_race_ui_default(&u);
                u.live = k->fe != FE_EXPORT;
                u.focus = focus;
                app_race_build(&s, &t, &d, &u);
                char what[128], why[400];
                snprintf(what, sizeof what, "%s %dx%d zoom %g, %d schemes %s, focus %d",
                         fe_name[k->fe], k->w, k->h, k->zoom, lanes, half ? "finished" : "halfway",
                         focus);
                clash(&s, &t, why, sizeof why);
                /* at 150% and 200% zoom and in a paper column the sinks' rows would be
                 * thinner than text: the compact layout (the plots side by side over a key)
                 * must then show every scheme, each a line of its own */
                if (focus == APP_RACE_FOCUS_ALL || focus == APP_RACE_FOCUS_SINK) {
                    int named = 0;
                    for (int i = 0; i < d.n; i++) {
                        int seen = 0;
                        for (size_t j = 0; j < s.n; j++)
                            seen |= s.items[j].kind == SCENE_TEXT &&
                                    !strcmp(s.items[j].u.text.str, d.lanes[i].label);
                        named += seen;
                    }
                    TAP_OK(named == d.n, "%s: all %d schemes named with their sink share (%d)",
                           what, d.n, named);
                }
                TAP_OK(s.n_cut == 0 && !why[0] && s.legend_covers == 0,
                       "%s: nothing cut (%u: %s), no text over text (%s), legends cover no data "
                       "(%zu)",
                       what, s.n_cut, s.cut_example, why, s.legend_covers);
                /* the main plot a few lines of text tall at least (the tall sizes stacked a
                 * 19 px plot under the training one) */
                double min_h = 3 * (t.cells ? 2 : t.text_h);
                if (focus == 0)
                    TAP_OK(scene_has_panel(&s, "training") && scene_has_panel(&s, "held-out") &&
                               scene_has_panel(&s, "sink") && s.main_h >= min_h,
                           "%s: the three panels, the training plot the main one (%.0f tall, "
                           "at least %.0f)",
                           what, s.main_h, min_h);
            }
        }
        app_race_data_free(&d);
    }
    /* every shipped lesson's race slide (do: race) as it arrives, before its first step, at
     * every size: what the presenter shows while the stories are made (test_lesson holds the
     * slide with its caption to the presenter's sizes) */
    char **names;
    int nl = lesson_names(&names), race_slides = 0;
    for (int li = 0; li < nl; li++) {
        char path[1024], err[512];
        lesson l;
        if (lesson_resolve(names[li], path, sizeof path, err, sizeof err) < 0 ||
            lesson_load(&l, path, NULL, NULL) != 0)
            continue;
        for (int i = 0; i < l.n; i++) {
            if (l.slides[i].action != LESSON_DO_RACE) continue;
            race_slides++;
            app_race_data d;
            TAP_OK(lesson_race_still(&d, l.slides[i].st.lesson.race_steps) == 0 && d.n == 3,
                   "lesson %s slide %d: the race of three schemes", names[li], i + 1);
            int good = 0, all = 0;
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
                const size_case *k = &cases[c];
                scene_target t =
                    k->fe == FE_TERMINAL
                        ? cellgrid_target(k->w, k->h)
                        : raster_target(k->w, k->h, raster_font_px(k->w, k->h, k->zoom));
                app_race_ui u;
                app_race_ui_default(&u);
                app_race_build(&s, &t, &d, &u);
                char why[400];
                clash(&s, &t, why, sizeof why);
                int ok = s.n_cut == 0 && !why[0] && scene_has_panel(&s, "training") &&
                         scene_has_panel(&s, "held-out");
                if (!ok)
                    tap_diag("%s %dx%d zoom %g: cut %u (%s), %s", fe_name[k->fe], k->w, k->h,
                             k->zoom, s.n_cut, s.cut_example, why);
                good += ok;
                all++;
            }
            TAP_OK(good == all,
                   "lesson %s slide %d's race at step 0: nothing cut or over text, its panels "
                   "shown, at all %d sizes (%d)",
                   names[li], i + 1, all, good);
            app_race_data_free(&d);
        }
        lesson_free(&l);
    }
    lesson_names_free(names, nl);
    TAP_OK(race_slides >= 1, "the shipped lessons race on %d slide(s)", race_slides);
    /* keys: hide, focus, the far range, smoothing; pause and stop are the race's */
    app_race_data d;
    make_race(&d, 10, 6);
    app_race_ui u;
    app_race_ui_default(&u);
    TAP_OK(app_race_key(&u, &d, '2') == APP_RACE_ACT_REDRAW && u.hidden == 2, "2 hides lane 2");
    TAP_OK(app_race_key(&u, &d, '9') == APP_RACE_ACT_NONE, "9: no seventh lane");
    TAP_OK(app_race_key(&u, &d, ' ') == APP_RACE_ACT_PAUSE &&
               app_race_key(&u, &d, 's') == APP_RACE_ACT_STOP,
           "space pauses, s stops");
    app_race_data_free(&d);
    /* the debiased EMA: a constant series is itself from the first step (no pull towards 0) */
    float x[5] = {3, 3, 3, 3, 3};
    double e[5];
    app_race_ema(x, 5, 0.95, e);
    TAP_CLOSE(e[0], 3, 1e-12, 0, "EMA debiased: step 1 equals the value");
    TAP_CLOSE(e[4], 3, 1e-12, 0, "EMA debiased: step 5 equals the value");
    float y[2] = {1, 2};
    app_race_ema(y, 2, 0.5, e);
    TAP_CLOSE(e[1], (0.5 * 0.5 * 1 + 0.5 * 2) / (1 - 0.25), 1e-12, 0,
              "EMA: (a(1-a)x1 + (1-a)x2) / (1 - a^2)");
    scene_free(&s);
    return tap_done();
}
