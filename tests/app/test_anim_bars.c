/* test_anim_bars.c: the README's attention animation (`pelab export attention --model rope
 * --preset toy --animate step=0:20:21`) with its axes held still (scene_ranges, as
 * app_anim_export builds it): each frame's bars are the single-frame figure of that step drawn
 * on the sweep's axes. For every frame, every bar of the single-frame build (its token and its
 * value, read back through that build's own axes) is in the animated frame at the same token
 * and value read through the sweep's axes; the animated bars lie inside the plot and never
 * overlap (issue 26: frames 0-8 drew bars many tokens wide, over each other and out of the
 * axes). Uses the shipped rope model; skips without it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "options.h"
#include "raster.h"
#include "tap.h"
#include "views.h"

enum { STEPS = 21, MAXBARS = 128 };

typedef struct bar {
    double xc, w, h; /* centre, width, height in figure units */
} bar;

/* The data bars of s in drawing order (token order). */
static int bars_of(const scene *s, bar *out)
{
    int n = 0;
    for (size_t i = 0; i < s->n && n < MAXBARS; i++) {
        const scene_item *it = &s->items[i];
        if (it->kind != SCENE_RECT || !(it->flags & SCENE_BAR)) continue;
        out[n].xc = it->u.rect.x + it->u.rect.w / 2;
        out[n].w = it->u.rect.w;
        out[n].h = it->u.rect.h;
        n++;
    }
    return n;
}

static double tallest(const bar *b, int n)
{
    double h = 0;
    for (int k = 0; k < n; k++) h = fmax(h, b[k].h);
    return h;
}

static int build(app_view_ctx *vc, const app_state *st0, int step, scene *s, const scene_target *t,
                 char *err, size_t errlen)
{
    app_state st = *st0;
    char v[16];
    snprintf(v, sizeof v, "%d", step);
    if (app_option_set(&st, app_option_find("step"), v, err, errlen) < 0) return -1;
    st.figure = 1;
    return app_view_build(vc, &st, s, t, err, errlen);
}

int main(void)
{
    char err[512], path[1200];
    if (app_attn_model_path("rope", path, sizeof path, err, sizeof err) < 0) {
        printf("1..0 # SKIP no shipped rope model in assets/models\n");
        return 77;
    }
    app_state st;
    app_state_default(&st);
    int ok = app_option_set(&st, app_option_find("view"), "attention", err, sizeof err) == 0 &&
             app_option_set(&st, app_option_find("model"), "rope", err, sizeof err) == 0 &&
             app_option_set(&st, app_option_find("preset"), "toy", err, sizeof err) == 0;
    if (!TAP_OK(ok, "attention --model rope --preset toy (%s)", ok ? "" : err)) return tap_done();
    /* 1000 x 600 at 96 dpi, the export's default */
    scene_target t = raster_target(1000, 600, raster_font_px(1000, 600, 1));
    scene_ranges *ranges = calloc(1, sizeof *ranges);
    scene s, one;
    scene_init(&s, 1000, 600, 0xffffff);
    scene_init(&one, 1000, 600, 0xffffff);
    s.ranges = ranges;
    app_view_ctx vc = {0}, vc1 = {0};
    int rc = 0;
    for (int i = 0; i < STEPS && rc == 0; i++) rc = build(&vc, &st, i, &s, &t, err, sizeof err);
    TAP_OK(rc == 0 && ranges->n[SCENE_RANGE_X] >= 1, "the sweep's ranges recorded (%s)",
           rc ? err : "");
    ranges->apply = 1;
    /* the last frame: every token's bar, where the sweep's axes put it */
    bar last[MAXBARS], a[MAXBARS], b[MAXBARS];
    int nlast = 0, frames_ok = 0;
    if (rc == 0) rc = build(&vc, &st, STEPS - 1, &s, &t, err, sizeof err);
    if (rc == 0) nlast = bars_of(&s, last);
    TAP_OK(rc == 0 && nlast == STEPS, "the last frame has a bar per token (%d)", nlast);
    for (int i = 0; i < STEPS && rc == 0 && nlast == STEPS; i++) {
        if (build(&vc, &st, i, &s, &t, err, sizeof err) != 0 ||
            build(&vc1, &st, i, &one, &t, err, sizeof err) != 0) {
            rc = -1;
            break;
        }
        int na = bars_of(&s, a), nb = bars_of(&one, b);
        /* on the sweep's axes: token j's bar where the last frame has it, as wide */
        double off_x = 0, off_w = 0, off_h = 0;
        int same = na == i + 1 && nb == i + 1;
        for (int k = 0; same && k < na; k++) {
            off_x = fmax(off_x, fabs(a[k].xc - last[k].xc));
            off_w = fmax(off_w, fabs(a[k].w - last[k].w));
        }
        /* the single-frame figure's bars: the same heights relative to the tallest (y from 0),
         * within a pixel of the smaller drawing */
        double ta = tallest(a, na), tb = tallest(b, nb);
        for (int k = 0; same && k < na && ta > 0 && tb > 0; k++)
            off_h = fmax(off_h, fabs(a[k].h / ta - b[k].h / tb));
        double tol_h = 1.5 / fmin(ta, tb);
        int apart = 1;
        for (int k = 1; k < na; k++)
            if (a[k].xc - a[k].w / 2 < a[k - 1].xc + a[k - 1].w / 2) apart = 0;
        same = same && ta > 0 && tb > 0 && off_x <= 0.5 && off_w <= 0.5 && off_h <= tol_h;
        if (!same || !apart)
            tap_diag("frame %d: %d bars (single %d), centre off %.2f, width off %.2f, height off "
                     "%.4f (tol %.4f), apart %d",
                     i, na, nb, off_x, off_w, off_h, tol_h, apart);
        frames_ok += same && apart;
    }
    TAP_OK(rc == 0 && frames_ok == STEPS,
           "every frame's bars are its single-frame figure on the sweep's axes: each token where "
           "and as wide as in the last frame, the heights of the step alone, apart (%d of %d)",
           frames_ok, STEPS);
    app_view_ctx_free(&vc);
    app_view_ctx_free(&vc1);
    scene_free(&s);
    scene_free(&one);
    free(ranges);
    return tap_done();
}
