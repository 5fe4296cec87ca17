/* explorer_tui.c: the explorer in the terminal. Events in, one frame out per batch of events:
 * a held key or a burst of resizes is drained before drawing, so redraws never queue up. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "figure.h"
#include "frontend.h"
#include "tui.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void draw(app_explorer *x, tui *t, scene *s)
{
    cellgrid *g = tui_grid(t);
    scene_target tg = cellgrid_target(g->cols, g->rows);
    tg.ascii = g->ascii; /* labels are laid out in the spelling the terminal will show */
    app_explorer_frame(x, s, &tg);
    cellgrid_render(g, s);
    if (x->mode == APP_MODE_COMMAND)
        tui_cursor(t, 1 + (int)x->cmd_len, g->rows - 1);
    else
        tui_cursor(t, -1, -1);
    tui_present(t);
}

int app_run_tui(app_explorer *x, int frames)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        fprintf(stderr, "pelab: the explorer needs a terminal (stdin and stdout); for files use "
                        "`pelab export VIEW -o FILE` (pelab export --help)\n");
        return 2;
    }
    char err[512];
    tui *t = NULL;
    tui_options opt = {0};
    if (tui_open(&t, &opt, err, sizeof err) < 0) {
        fprintf(stderr, "pelab: %s\n", err);
        return 1;
    }
    /* the one-time note of a terminal that cannot take the 24-bit colour COLORTERM asks for:
     * it replaces the start's hint (or a lesson's "slide 1 of N"), which had always filled the
     * message so the note never showed; an error the start left stays */
    if (tui_note(t) && !x->message_error) {
        snprintf(x->message, sizeof x->message, "%s", tui_note(t));
        x->message_fresh = 1;
    }
    app_explorer_threaded(x); /* views build beside the input (explorer_work.c) */
    scene s;
    scene_init(&s, 1, 1, 0);
    int drawn = 0;
    double last = now_s();
    while (!x->quit) {
        if (x->dirty) {
            draw(x, t, &s);
            drawn++;
            /* --frames N ends on a finished figure: past N it only waits for the build */
            if (frames > 0 && drawn >= frames && !app_explorer_working(x)) break;
        }
        /* while a view computes, the input is polled often and the progress redrawn */
        int timeout = app_explorer_working(x) ? 20 : app_explorer_animating(x) ? 40 : -1;
        if (frames > 0 && drawn < frames) {
            timeout = 0; /* --frames N: draw N frames, then exit */
            x->dirty = 1;
        }
        ui_event ev;
        int got = tui_poll(t, &ev, timeout);
        if (got > 0) x->dirty |= app_explorer_event(x, &ev);
        /* drain whatever else is already waiting before drawing again */
        while (!x->quit && tui_pending(t) && tui_poll(t, &ev, 0) > 0)
            x->dirty |= app_explorer_event(x, &ev);
        if (app_explorer_work_poll(x)) x->dirty = 1;
        double tnow = now_s();
        if (app_explorer_animating(x)) {
            double dt = tnow - last;
            /* the terminal moves m in whole positions, a quarter second each */
            if (dt >= 0.25) {
                x->dirty |= app_explorer_tick(x, 0.25);
                last = tnow;
            }
        } else {
            last = tnow;
        }
    }
    app_explorer_unthread(x); /* stops a build in progress at its next report */
    scene_free(&s);
    tui_close(t);
    int sig = tui_quit_signal();
    return sig ? 128 + sig : 0; /* what a shell shows for a process ended by the signal */
}
