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

static int tui_input_waiting(void *io)
{
    return tui_pending(io);
}

/* Long work: the status line's parameters and a bar on the last two rows of what is on the
 * screen (the frame under construction is not drawn yet). */
static void put_row(cellgrid *g, int row, const char *text, uint32_t fg, uint32_t bg)
{
    if (row < 0 || row >= g->rows) return;
    for (int c = 0; c < g->cols; c++) {
        cellgrid_cell *cell = cellgrid_at(g, c, row);
        unsigned char ch = (unsigned char)*text;
        cell->ch = ch >= 32 && ch < 127 ? ch : ' ';
        cell->fg = fg;
        cell->bg = bg;
        cell->attr = 0;
        if (*text) text++;
    }
}

static void tui_show_progress(void *io, app_explorer *x)
{
    tui *t = io;
    cellgrid *g = tui_grid(t);
    const fig_theme *th = fig_theme_get(x->st.dark);
    char status[1024], bar[256], cells[33];
    app_explorer_status(x, status, sizeof status);
    int n = (int)(x->work_frac * 32 + 0.5);
    memset(cells, '#', (size_t)n);
    memset(cells + n, '.', (size_t)(32 - n));
    cells[32] = '\0';
    snprintf(bar, sizeof bar, " computing %s [%s] %3.0f%%  (any key stops it; q quits)",
             app_view_at((size_t)x->st.view)->name, cells, x->work_frac * 100);
    put_row(g, g->rows - 2, status, th->fg, th->grid);
    put_row(g, g->rows - 1, bar, th->accent, th->grid);
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
    x->input_waiting = tui_input_waiting;
    x->show_progress = tui_show_progress;
    x->io = t;
    scene s;
    scene_init(&s, 1, 1, 0);
    int drawn = 0;
    double last = now_s();
    while (!x->quit) {
        if (x->dirty) {
            draw(x, t, &s);
            drawn++;
            if (frames > 0 && drawn >= frames) break;
        }
        int timeout = app_explorer_animating(x) ? 40 : -1;
        if (frames > 0) {
            timeout = 0; /* --frames N: draw N frames, then exit */
            x->dirty = 1;
        }
        ui_event ev;
        int got = tui_poll(t, &ev, timeout);
        if (got > 0) x->dirty |= app_explorer_event(x, &ev);
        /* drain whatever else is already waiting before drawing again */
        while (!x->quit && tui_pending(t) && tui_poll(t, &ev, 0) > 0)
            x->dirty |= app_explorer_event(x, &ev);
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
    x->input_waiting = NULL;
    x->show_progress = NULL;
    x->io = NULL;
    scene_free(&s);
    tui_close(t);
    int sig = tui_quit_signal();
    return sig ? 128 + sig : 0; /* what a shell shows for a process ended by the signal */
}
