/* race_live.c: the race's terminal and window loop (race_live.h). One frame per call: the
 * scene is rebuilt from the race's numbers and drawn; the terminal sends only the cells that
 * changed and the window skips a frame equal to the last (scene_hash), so a display that redraws
 * five times a second costs the training little (pelab bench measures it). */
#include "race_live.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "raster.h"
#include "tui.h"
#include "window.h"

struct app_race_live {
    tui *t;
    window *win;
    scene s;
    int sig;
};

int app_race_live_open(app_race_live **out, int gui, char *err, size_t errlen)
{
    *out = NULL;
    app_race_live *lv = calloc(1, sizeof *lv);
    if (!lv) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (gui) {
        if (window_open(&lv->win, "pelab race", 1280, 800, err, errlen) < 0) {
            free(lv);
            return -1;
        }
    } else {
        if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
            snprintf(err, errlen,
                     "--display terminal: stdin and stdout are not a terminal "
                     "(--display none prints progress lines)");
            free(lv);
            return -1;
        }
        tui_options opt = {0};
        if (tui_open(&lv->t, &opt, err, errlen) < 0) {
            free(lv);
            return -1;
        }
    }
    scene_init(&lv->s, 1, 1, 0);
    *out = lv;
    return 0;
}

static void draw(app_race_live *lv, const app_race_data *d, app_race_ui *u)
{
    if (lv->t) {
        cellgrid *g = tui_grid(lv->t);
        scene_target tg = cellgrid_target(g->cols, g->rows);
        tg.ascii = g->ascii;
        u->dark = tui_dark(lv->t) == 1;
        app_race_build(&lv->s, &tg, d, u);
        cellgrid_render(g, &lv->s);
        tui_cursor(lv->t, -1, -1);
        tui_present(lv->t);
    } else {
        int w, h;
        window_size(lv->win, &w, &h);
        scene_target tg = raster_target(w, h, raster_font_px(w, h, 1));
        app_race_build(&lv->s, &tg, d, u);
        window_present(lv->win, &lv->s);
    }
}

static int poll_one(app_race_live *lv, ui_event *ev, int ms)
{
    return lv->t ? tui_poll(lv->t, ev, ms) : window_poll(lv->win, ev, ms);
}

int app_race_live_step(app_race_live *lv, const app_race_data *d, app_race_ui *u, int wait_ms)
{
    draw(lv, d, u);
    ui_event ev;
    int act = APP_RACE_ACT_NONE, got = poll_one(lv, &ev, wait_ms);
    while (got > 0) {
        int a = APP_RACE_ACT_NONE;
        if (ev.type == UI_EV_QUIT) {
            lv->sig = lv->t ? tui_quit_signal() : window_quit_signal();
            /* Ctrl-C stops the race and saves it, as in pelab train: not a kill */
            if (lv->sig == 2) lv->sig = 0;
            return lv->sig ? APP_RACE_ACT_QUIT : APP_RACE_ACT_STOP;
        }
        if (ev.type == UI_EV_KEY) a = app_race_key(u, d, ev.key);
        if (ev.type == UI_EV_RESIZE || a == APP_RACE_ACT_REDRAW) draw(lv, d, u);
        if (a == APP_RACE_ACT_PAUSE || a == APP_RACE_ACT_RECORD || a == APP_RACE_ACT_STOP ||
            a == APP_RACE_ACT_QUIT) {
            act = a;
            if (a != APP_RACE_ACT_PAUSE) return act; /* S records before more keys are read */
        }
        got = poll_one(lv, &ev, 0);
    }
    return act;
}

void app_race_live_draw(app_race_live *lv, const app_race_data *d, app_race_ui *u)
{
    draw(lv, d, u);
}

int app_race_live_signal(app_race_live *lv)
{
    return lv->sig;
}

void app_race_live_close(app_race_live *lv)
{
    if (!lv) return;
    scene_free(&lv->s);
    if (lv->t) tui_close(lv->t);
    if (lv->win) window_close(lv->win);
    free(lv);
}
