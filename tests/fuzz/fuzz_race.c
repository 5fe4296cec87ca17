/* fuzz_race: the race log (DIR/race.csv, issue 24) on arbitrary bytes. A log is refused with a
 * message that names its line, or read into 1..8 lanes whose numbers are what the reader allows
 * (losses finite and >= 0, sink shares in [0, 1], steps in order within the lane's goal); a log
 * read is written again by the race's own writer and reads back to the same numbers; its figure
 * is built for a terminal (no crash, no hang on hostile numbers). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cellgrid.h"
#include "race_fig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const app_race_data *d)
{
    if (d->n < 1 || d->n > APP_RACE_MAX_LANES) __builtin_trap();
    for (int i = 0; i < d->n; i++) {
        const app_race_lane *l = &d->lanes[i];
        if (l->done < 0 || l->done > l->steps || !l->label[0] || strchr(l->label, ','))
            __builtin_trap();
        for (int k = 0; k < l->done; k++)
            if (!(l->loss[k] >= 0) || !isfinite(l->loss[k])) __builtin_trap();
        for (int k = 0; k < l->nevals; k++) {
            const app_race_eval *e = &l->evals[k];
            if (e->step < 0 || e->step > l->done || (k && e->step <= l->evals[k - 1].step) ||
                !(e->sink >= 0 && e->sink <= 1) || e->tokens != (long)e->step * l->tokens_per_step)
                __builtin_trap();
            for (int j = 0; j < 3; j++)
                if (!(e->held[j] >= 0) || !isfinite(e->held[j])) __builtin_trap();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 65536) return 0;
    app_race_data d;
    char err[512];
    err[0] = 0;
    if (app_race_log_parse((const char *)data, size, &d, err, sizeof err) != 0) {
        /* refused: one line that names where (or what is missing), and nothing held */
        if (!err[0] || strchr(err, '\n') ||
            (strncmp(err, "line ", 5) && strncmp(err, "not a", 5) && strcmp(err, "out of memory")))
            __builtin_trap();
        return 0;
    }
    check(&d);
    long total = 0;
    for (int i = 0; i < d.n; i++) total += d.lanes[i].steps;
    /* written again by the writer (a log of millions of steps is skipped: the round trip of a
     * big one tells nothing more) */
    if (total <= 100000) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        if (!f) abort();
        app_race_log_header(f, &d, "pelab race --fuzz");
        for (int i = 0; i < d.n; i++) {
            int s = 0, e = 0;
            app_race_log_rows(f, &d, i, &s, &e);
        }
        fclose(f);
        app_race_data b;
        if (app_race_log_parse(buf, len, &b, err, sizeof err) != 0) __builtin_trap();
        if (b.n != d.n) __builtin_trap();
        for (int i = 0; i < d.n; i++) {
            const app_race_lane *x = &d.lanes[i], *y = &b.lanes[i];
            if (strcmp(x->label, y->label) || x->done != y->done || x->nevals != y->nevals ||
                x->steps != y->steps)
                __builtin_trap();
            for (int k = 0; k < x->done; k++) /* %.6f: within half a millionth */
                if (fabs((double)x->loss[k] - y->loss[k]) > 1e-6 + 1e-6 * fabs(x->loss[k]))
                    __builtin_trap();
        }
        app_race_data_free(&b);
        free(buf);
    }
    /* the figure on hostile numbers, as the terminal draws it */
    scene s;
    scene_init(&s, 1, 1, 0);
    scene_target t = cellgrid_target(80, 24);
    app_race_ui u;
    app_race_ui_default(&u);
    app_race_build(&s, &t, &d, &u);
    scene_free(&s);
    app_race_data_free(&d);
    return 0;
}
