/* test_lesson_values.c (issue 21, item 5): views own what lessons ask of them. A caption's
 * values ({slopes}, {loss rope 64-127}, ...) and a slide's `do:` action come from the view
 * table's entries, so app/lesson/ names no view. Checked here: every view's rows are well formed
 * and found; the values agree with an independent computation from the reference formulas
 * (../shared/reference/pe-reference.md) or, for {loss}, with the shipped evaluation CSV read by
 * this test's own parser; the slide's view is asked first; a value taking words needs them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assets.h"
#include "lesson.h"
#include "options.h"
#include "tap.h"
#include "views.h"

static app_state state_of(const char *cmds)
{
    app_state st;
    app_state_default(&st);
    char buf[512], err[512];
    snprintf(buf, sizeof buf, "%s", cmds);
    char *save = NULL;
    for (char *c = strtok_r(buf, ";", &save); c; c = strtok_r(NULL, ";", &save))
        if (app_option_command(&st, c, err, sizeof err) < 0) tap_diag("%s: %s", c, err);
    return st;
}

/* The caption text with its placeholders filled on st (what the presenter shows). */
static void expand(const app_state *st, const char *caption, char *out, size_t n)
{
    static lesson_slide sl;
    memset(&sl, 0, sizeof sl);
    snprintf(sl.caption, sizeof sl.caption, "%s", caption);
    lesson_expand(&sl, st, "", out, n);
}

/* Mean of column name over positions a..b of the CSV at path, by this test's own reading. */
static double csv_mean(const char *path, const char *name, int a, int b)
{
    FILE *fp = fopen(path, "r");
    if (!fp) return NAN;
    char line[4096];
    int col = -1, header = 0;
    double sum = 0;
    int n = 0;
    while (fgets(line, sizeof line, fp)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        line[strcspn(line, "\r\n")] = '\0';
        int i = 0;
        for (char *f = line, *next; f; f = next, i++) {
            next = strchr(f, ',');
            if (next) *next++ = '\0';
            if (!header && strcmp(f, name) == 0) col = i;
            if (header && i == col) {
                int pos = atoi(line);
                if (pos >= a && pos <= b && *f) {
                    sum += atof(f);
                    n++;
                }
            }
        }
        header = 1;
    }
    fclose(fp);
    return n ? sum / n : NAN;
}

int main(void)
{
    /* ---- the rows: every value and action of every view is well formed and found ---- */
    int values = 0, actions = 0;
    for (size_t i = 0; i < app_view_count(); i++) {
        const app_view *v = app_view_at(i);
        for (const app_view_value *e = v->values; e && e->name; e++) {
            values++;
            const char *args;
            char ph[96];
            snprintf(ph, sizeof ph, "%s%s", e->name, e->args ? " x 0-1" : "");
            TAP_OK(e->get && app_view_value_find(v, ph, &args) == e,
                   "view %s: value {%s%s%s} has a getter and its view answers it", v->name, e->name,
                   e->args ? " " : "", e->args ? e->args : "");
        }
        if (v->action) {
            actions++;
            TAP_OK(v->action->name && v->action->what && v->action->start &&
                       app_view_action_find(v->action->name) != NULL,
                   "view %s: action '%s' has what it does and a start", v->name,
                   v->action->name ? v->action->name : "?");
        }
    }
    TAP_OK(values >= 9 && actions >= 3, "the views answer %d values and name %d actions", values,
           actions);
    TAP_OK(app_view_action_find("spin") == app_view_at((size_t)app_view_find("rope"))->action,
           "do: spin is the rope view's action");
    TAP_OK(app_view_action_find("play") == app_view_at((size_t)app_view_find("attention"))->action,
           "do: play is the attention view's action");
    {
        app_state st = state_of("view rope;pos 5;pos-k 2;dim 8;len 64");
        app_state t = st;
        app_view_at((size_t)st.view)->action->start(&t);
        TAP_OK(t.playing == 1 && t.pos == 5, "the spin starts the rope view playing from its m");
    }
    {
        app_state st = state_of("view attention;step 3");
        app_state t = st;
        app_view_at((size_t)st.view)->action->start(&t);
        TAP_OK(t.playing == 1 && t.attn.step == 0 && t.attn.step_frac == 0,
               "play starts the attention view from its first token");
    }

    /* ---- lookup: the slide's view first, then any view's; words where a value takes them ---- */
    const char *args;
    const app_view *rope = app_view_at((size_t)app_view_find("rope"));
    const app_view *alibi = app_view_at((size_t)app_view_find("alibi"));
    const app_view *ex = app_view_at((size_t)app_view_find("extrapolation"));
    TAP_OK(app_view_value_find(rope, "slopes", &args) == &alibi->values[0],
           "{slopes} on a rope slide is answered by the alibi view");
    const app_view_value *loss = app_view_value_find(NULL, "loss rope 64-127", &args);
    TAP_OK(loss && loss == &ex->values[0] && strcmp(args, "rope 64-127") == 0,
           "{loss rope 64-127}: the extrapolation view's value, with its words");
    TAP_OK(app_view_value_find(rope, "loss", &args) == NULL, "{loss} without words is none");
    TAP_OK(app_view_value_find(rope, "slopes x", &args) == NULL, "{slopes x}: slopes takes none");

    /* ---- the numbers, against independent computations ---- */
    char out[1024], want[1024];
    {
        /* q = k = (1, 0) in every pair; sin read for cos: sum_k cos((m-n)th) - cos((m+n)th) */
        app_state st = state_of("view rope;pos 5;pos-k 2;dim 8;len 64;base 10000");
        expand(&st, "{distance}|{sin-bug}", out, sizeof out);
        int m = 5, n = 2, d = 8;
        double s = 0;
        for (int k = 0; k < d / 2; k++) {
            double th = pow(10000, -2.0 * k / d);
            s += cos((m - n) * th) - cos((m + n) * th);
        }
        /* written as the rope view's title writes the score: U+2212, the minus sign */
        snprintf(want, sizeof want, "3|%s%.4f", s < 0 ? "\xe2\x88\x92" : "", fabs(s));
        TAP_OK(strcmp(out, want) == 0, "rope: {distance}|{sin-bug} = '%s' (want '%s')", out, want);
    }
    {
        app_state st = state_of("view alibi;heads 8");
        expand(&st, "{slopes}", out, sizeof out);
        TAP_OK(strcmp(out, "1/2, 1/4, 1/8, 1/16, 1/32, 1/64, 1/128, 1/256") == 0,
               "alibi, 8 heads: {slopes} = 2^(-8(h+1)/8): '%s'", out);
        /* 6 heads (Press et al.): the 4-head slopes, then every other one of the 8-head set */
        st = state_of("view alibi;heads 6");
        expand(&st, "{slopes}", out, sizeof out);
        TAP_OK(strcmp(out, "1/4, 1/16, 1/64, 1/256, 1/2, 1/8") == 0,
               "alibi, 6 heads: {slopes} = '%s'", out);
    }
    {
        app_state st = state_of("view wavelength;dim 128;base 10000");
        expand(&st, "{longest}|{shortest}", out, sizeof out);
        /* theta_k = base^(-2k/d): the slowest pair k = d/2 - 1, the fastest k = 0 */
        /* written for people: thousands commas, three digits under 100 */
        long lw = lround(2 * M_PI * pow(10000, 126.0 / 128));
        snprintf(want, sizeof want, "%ld,%03ld|%.2f", lw / 1000, lw % 1000, 2 * M_PI);
        TAP_OK(strcmp(out, want) == 0, "wavelength: {longest}|{shortest} = '%s' (want '%s')", out,
               want);
    }
    {
        app_state st = state_of("view frequencies;dim 128;base 10000;scaling none");
        expand(&st, "{bands}|{eff-base}|{attn-factor}", out, sizeof out);
        TAP_OK(strcmp(out, "64 kept, 0 blended, 0 divided|10,000|1") == 0,
               "frequencies, no scaling: every pair kept, the base and factor as given: '%s'", out);
        /* NTK-aware: base' = base * s^(d/(d-2)) */
        st = state_of("view frequencies;dim 128;base 10000;scaling ntk;factor 4");
        expand(&st, "{eff-base}", out, sizeof out);
        long eb = lround(10000 * pow(4, 128.0 / 126));
        snprintf(want, sizeof want, "%ld,%03ld", eb / 1000, eb % 1000);
        TAP_OK(strcmp(out, want) == 0, "frequencies, NTK x4: {eff-base} = '%s' (want '%s')", out,
               want);
    }
    {
        char path[1024], err[512];
        app_state st = state_of("view extrapolation");
        TAP_OK(app_asset_path("models/extrapolation.csv", path, sizeof path, err, sizeof err) == 0,
               "the shipped evaluation table");
        const char *models[] = {"rope", "alibi", "nope"};
        for (int i = 0; i < 3; i++) {
            char cap[64];
            snprintf(cap, sizeof cap, "{loss %s 64-127}", models[i]);
            expand(&st, cap, out, sizeof out);
            double w = csv_mean(path, models[i], 64, 127);
            TAP_CLOSE(atof(out), w, 0, 0.0005 + 1e-12, cap);
        }
    }
    return tap_done();
}
