/* test_lesson_race.c: a lesson slide's race (`do: race`, issue 24) through the presenter, no
 * terminal or window: arriving starts the race on worker threads while frames keep coming (the
 * figure's step count rises between frames), the caption's {race-best} {race-worst}
 * {race-speed} read "…" until it ends and then the numbers the race's own figure ends on;
 * leaving a running race's slide, `r`, and quitting on it stop and join its threads (under
 * ThreadSanitizer in the threads suite: no race between the workers, the coordinator and the
 * frames). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cellgrid.h"
#include "explorer.h"
#include "lesson.h"
#include "tap.h"

static void key(app_explorer *x, uint32_t k)
{
    ui_event ev = {.type = UI_EV_KEY, .key = k};
    app_explorer_event(x, &ev);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *find_prefix(const scene *s, const char *prefix)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->items[i].kind == SCENE_TEXT &&
            strncmp(s->items[i].u.text.str, prefix, strlen(prefix)) == 0)
            return s->items[i].u.text.str;
    return NULL;
}

/* The caption panel's text, joined (its lines are separate items below the figure). */
static void caption_text(const scene *s, double y0, char *out, size_t n)
{
    out[0] = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->items[i].kind == SCENE_TEXT && s->items[i].u.text.y >= y0)
            snprintf(out + strlen(out), n - strlen(out), "%s ", s->items[i].u.text.str);
}

/* "The position race: 3 schemes, D of N steps": D */
static int steps_done(const scene *s)
{
    const char *t = find_prefix(s, "The position race:");
    int d = -1, n = 0;
    if (t && sscanf(t, "The position race: %*d schemes, %d of %d steps", &d, &n) == 2) return d;
    return -1;
}

int main(void)
{
    char path[1024];
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/pelab-lesson-race-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    int fd = mkstemp(path);
    TAP_OK(fd >= 0, "a temporary lesson");
    FILE *f = fdopen(fd, "w");
    fprintf(f, "lesson: A race\n\n"
               "slide: Before\nview: rope\ncaption: the slide before\n\n"
               "slide: The race\nview: extrapolation --race-steps 6\ndo: race\n"
               "caption: best {race-best}; worst {race-worst}; {race-speed} tokens/s.\n\n"
               "slide: A long race\nview: extrapolation --race-steps 2000\ndo: race\n"
               "caption: it is left at once {race-best}\n");
    fclose(f);
    lesson l;
    TAP_OK(lesson_load(&l, path, NULL, stderr) == 0 && l.n == 3 &&
               l.slides[1].action == LESSON_DO_RACE && l.slides[1].st.lesson.race_steps == 6,
           "a lesson with 'do: race' and --race-steps 6 loads");
    char out[2048];
    lesson_expand(&l.slides[1], &l.slides[1].st, "", out, sizeof out);
    TAP_OK(strcmp(out, "best \u2026; worst \u2026; \u2026 tokens/s.") == 0,
           "without a finished race the numbers read as pending: '%s'", out);

    app_explorer *x = calloc(1, sizeof *x);
    app_explorer_init(x, &l.slides[0].st, 0);
    struct lesson_presenter *p = lesson_attach(x, &l, 0);
    scene s;
    scene_init(&s, 1, 1, 0);
    scene_target t = cellgrid_target(120, 40);
    TAP_OK(!app_explorer_animating(x), "the slide before runs nothing");
    key(x, ' ');
    TAP_OK(app_explorer_animating(x), "arriving at the race slide starts the race (animating)");
    /* frames while it trains: each is built at once (the workers never hold the frame up) */
    double t0 = now_s(), worst_frame = 0;
    int first = -1, last = -1, pending_seen = 0, frames = 0;
    while (app_explorer_animating(x) && now_s() - t0 < 600) {
        app_explorer_tick(x, 0.2);
        double f0 = now_s();
        app_explorer_frame(x, &s, &t);
        worst_frame = fmax(worst_frame, now_s() - f0);
        frames++;
        int d = steps_done(&s);
        if (d >= 0 && first < 0) first = d;
        if (d >= 0) last = d;
        char cap[4096];
        caption_text(&s, x->view_h, cap, sizeof cap);
        if (strstr(cap, "best \u2026")) pending_seen = 1;
        usleep(50000);
    }
    TAP_OK(!app_explorer_animating(x), "the race ended (%.1f s, %d frames)", now_s() - t0, frames);
    TAP_OK(first >= 0 && first < 18 && last == 18,
           "the figure counted the steps up while frames came (first %d, last %d of 18)", first,
           last);
    TAP_OK(pending_seen, "while it ran the caption's numbers read '\u2026'");
    TAP_OK(worst_frame < 0.5, "no frame waited for the training (slowest %.3f s)", worst_frame);
    app_explorer_frame(x, &s, &t);
    char cap[4096];
    caption_text(&s, x->view_h, cap, sizeof cap);
    char best[64] = "", worst[64] = "";
    double bv = NAN, wv = NAN, speed = NAN;
    const char *b = strstr(cap, "best ");
    int got =
        b ? sscanf(b, "best %63s (%lf); worst %63s (%lf); %lf", best, &bv, worst, &wv, &speed) : 0;
    TAP_OK(got == 5 && bv <= wv && speed > 0 && bv > 0.5 && wv < 7,
           "after it: best %s (%.2f) <= worst %s (%.2f), %.0f tokens/s ('%.200s')", best, bv, worst,
           wv, speed, cap);
    TAP_OK(strstr(cap, "\u2026") == NULL, "no number pending once it ended");
    TAP_OK(strcmp(best, worst) != 0 && (strstr("learned rope alibi", best) != NULL) &&
               (strstr("learned rope alibi", worst) != NULL),
           "best and worst are two of the race's schemes (%s, %s)", best, worst);

    /* r races again; leaving a running race joins it at once (a step, not the whole race) */
    key(x, 'r');
    TAP_OK(app_explorer_animating(x), "r starts the race again");
    key(x, ' ');
    TAP_OK(app_explorer_animating(x), "the next slide's long race runs");
    usleep(300000);
    double q0 = now_s();
    key(x, UI_KEY_PGUP);
    double left = now_s() - q0;
    TAP_OK(left < 20, "leaving the long race stopped and joined it in %.2f s", left);
    key(x, ' ');
    key(x, 'q');
    TAP_OK(x->quit, "q quits on a race slide");
    q0 = now_s();
    lesson_detach(x, p);
    TAP_OK(now_s() - q0 < 20, "quitting joined the race's threads (%.2f s)", now_s() - q0);
    app_explorer_free(x);
    free(x);
    scene_free(&s);
    lesson_free(&l);
    unlink(path);
    return tap_done();
}
