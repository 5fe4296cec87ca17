/* lesson_present.c: presenting a lesson, in the terminal and in the window. The lesson is a
 * layer over the explorer (explorer.h): it takes the keys that move through the slides, passes
 * every other key to the view (so the view stays live), sets the explorer's state on arrival,
 * plays the slide's action, and draws the caption panel under the view. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explorer.h"
#include "frontend.h"
#include "figure.h"
#include "lesson.h"
#include "tui.h"
#include "options.h"
#include "views.h"

struct lesson_presenter;

typedef struct presenter {
    const lesson *l;
    int cur;
    int listing;    /* the slide list is open */
    int sweep_i;    /* next value of the sweep, n_sweep = done */
    double sweep_t; /* seconds since the last sweep step */
    /* a message a key left (a ':' command's "applied" or error): the sweep's own progress
     * line does not replace it until the next key (issue 28: it vanished after a second) */
    int key_message;
    int arrived; /* the key moved to a slide: its "slide N of M" is the presenter's own */
    /* do: race: the race of the slide shown (NULL on other slides; leaving the slide stops and
     * joins it), the time since its figure was last redrawn, whether it was seen finished */
    lesson_race *race;
    int still;                /* lesson_attach_still: no race runs; race_still is drawn instead */
    app_race_data race_still; /* the race at step 0 (still presenters, a race that failed) */
    double race_t;
    int race_fin;
    app_race_ui race_ui;
    app_layer layer;
} presenter;

static const lesson_slide *slide(const presenter *p)
{
    return &p->l->slides[p->cur];
}

/* Arrive at slide i: its state (keeping the projector zoom and the theme the room chose), its
 * action started. */
static void arrive(presenter *p, app_explorer *x, int i)
{
    if (i < 0) i = 0;
    if (i >= p->l->n) i = p->l->n - 1;
    p->cur = i;
    p->listing = 0;
    const lesson_slide *s = slide(p);
    double zoom = x->st.zoom;
    int dark = x->st.dark;
    x->st = s->st;
    x->st.zoom = zoom;
    if (!s->st.dark) x->st.dark = dark;
    x->st.cursor_on = 0;
    x->mode = APP_MODE_NORMAL;
    p->sweep_i = s->n_sweep;
    /* the race of the slide left (or of this one, on r) stops; its workers are joined here */
    lesson_race_free(p->race);
    p->race = NULL;
    p->race_fin = 0;
    p->race_t = 0;
    char rerr[256] = "";
    switch (s->action) {
    case LESSON_DO_VIEW: { /* --check made sure the view names an action */
        const app_view_action *a = app_view_at((size_t)x->st.view)->action;
        if (a && a->start) a->start(&x->st);
        break;
    }
    case LESSON_DO_SWEEP:
        p->sweep_i = 0;
        p->sweep_t = 1; /* the first value at once */
        break;
    case LESSON_DO_RACE:
        app_race_ui_default(&p->race_ui);
        app_race_data_free(&p->race_still);
        if (p->still)
            lesson_race_still(&p->race_still, x->st.lesson.race_steps);
        else if (lesson_race_start(&p->race, x->st.lesson.race_steps, 0, rerr, sizeof rerr) < 0)
            p->race = NULL;
        break;
    case LESSON_DO_NONE:
        break;
    }
    snprintf(x->message, sizeof x->message,
             "slide %d of %d  (Space next, PgUp back, l list, r %s, q quit)", i + 1, p->l->n,
             p->race ? "races again" : "reset");
    x->message_error = 0;
    if (rerr[0]) {
        snprintf(x->message, sizeof x->message, "%.500s", rerr);
        x->message_error = 1;
    }
    p->arrived = 1;
    x->dirty = 1;
}

static int jump_command(presenter *p, app_explorer *x)
{
    const char *c = x->cmd;
    if (strncmp(c, "slide", 5) != 0 || (c[5] != ' ' && c[5] != '\0')) return 0;
    const char *v = c + 5;
    while (*v == ' ') v++;
    char *end;
    long n = strtol(v, &end, 10);
    while (*end == ' ') end++;
    x->mode = APP_MODE_NORMAL;
    if (end == v || *end || n < 1 || n > p->l->n) {
        snprintf(x->message, sizeof x->message, ":slide '%.40s': allowed 1..%d", v, p->l->n);
        x->message_error = 1;
        return 1;
    }
    arrive(p, x, (int)n - 1);
    return 1;
}

static int present_key(presenter *p, app_explorer *x, const ui_event *ev);

static int present_event(void *ctx, app_explorer *x, const ui_event *ev)
{
    presenter *p = ctx;
    if (ev->type != UI_EV_KEY) return present_key(p, x, ev);
    char before[sizeof x->message];
    memcpy(before, x->message, sizeof before);
    p->key_message = p->arrived = 0; /* any key lets the sweep speak again */
    int r = present_key(p, x, ev);
    if (x->message[0] && strcmp(before, x->message) != 0 && !p->arrived) p->key_message = 1;
    return r;
}

static int present_key(presenter *p, app_explorer *x, const ui_event *ev)
{
    if (ev->type == UI_EV_KEY && x->mode == APP_MODE_COMMAND &&
        (ev->key == UI_KEY_ENTER || ev->key == '\n' || ev->key == '\r') && jump_command(p, x))
        return 1;
    if (ev->type != UI_EV_KEY || x->mode != APP_MODE_NORMAL) return app_explorer_event(x, ev);
    uint32_t k = ev->key;
    if (p->listing) { /* the list: a digit picks, anything else closes */
        p->listing = 0;
        if (k >= '1' && k <= '9' && (int)(k - '1') < p->l->n) arrive(p, x, (int)(k - '1'));
        if (k == 'q') x->quit = 1;
        return 1;
    }
    int last = p->cur == p->l->n - 1;
    switch (k) {
    case ' ':
    case UI_KEY_PGDN:
        if (last) {
            snprintf(x->message, sizeof x->message, "the last slide (q quits, PgUp goes back)");
            x->message_error = 0;
            return 1;
        }
        arrive(p, x, p->cur + 1);
        return 1;
    case UI_KEY_PGUP:
    case UI_KEY_BACKSPACE:
        if (p->cur == 0) {
            snprintf(x->message, sizeof x->message, "the first slide");
            x->message_error = 0;
            return 1;
        }
        arrive(p, x, p->cur - 1);
        return 1;
    case 'l':
        p->listing = 1;
        return 1;
    case 'r':
        arrive(p, x, p->cur);
        return 1;
    case 'q':
        x->quit = 1;
        return 0;
    case UI_KEY_ENTER: { /* Space moves on in a lesson; Enter plays and pauses */
        ui_event sp = *ev;
        sp.key = ' ';
        return app_explorer_event(x, &sp);
    }
    case UI_KEY_RIGHT: { /* the view's own Right first; at its end, the next slide */
        app_state before = x->st;
        int r = app_explorer_event(x, ev);
        if (memcmp(&before, &x->st, sizeof before) == 0 && !last) {
            arrive(p, x, p->cur + 1);
            return 1;
        }
        return r;
    }
    default:
        break;
    }
    if (k >= '0' && k <= '9') {
        int n = k == '0' ? 10 : (int)(k - '0');
        if (n > p->l->n) {
            snprintf(x->message, sizeof x->message, "no slide %d (this lesson has %d; :slide N)", n,
                     p->l->n);
            x->message_error = 1;
            return 1;
        }
        arrive(p, x, n - 1);
        return 1;
    }
    return app_explorer_event(x, ev);
}

static int present_tick(void *ctx, app_explorer *x, double dt)
{
    presenter *p = ctx;
    int changed = 0;
    const lesson_slide *s = slide(p);
    if (p->sweep_i < s->n_sweep) {
        p->sweep_t += dt;
        if (p->sweep_t >= 1) { /* one value a second */
            p->sweep_t = 0;
            char line[128], err[512];
            snprintf(line, sizeof line, "%s %s", s->sweep_opt, s->sweep_val[p->sweep_i]);
            if (app_option_command(&x->st, line, err, sizeof err) < 0) { /* lesson --check's job */
                snprintf(x->message, sizeof x->message, "%.500s", err);
                x->message_error = 1;
            } else if (!p->key_message) {
                snprintf(x->message, sizeof x->message, "%s = %s (%d of %d)", s->sweep_opt,
                         s->sweep_val[p->sweep_i], p->sweep_i + 1, s->n_sweep);
                x->message_error = 0;
            }
            p->sweep_i++;
            changed = 1;
        }
    }
    if (p->race && !p->race_fin) {
        /* the race's figure five times a second; once more when it ends (the caption's numbers
         * arrive then) */
        p->race_t += dt;
        char err[256];
        if (lesson_race_finished(p->race, err, sizeof err)) {
            p->race_fin = 1;
            changed = 1;
            if (err[0]) {
                snprintf(x->message, sizeof x->message, "%.500s", err);
                x->message_error = 1;
            }
        } else if (p->race_t >= 0.2) {
            p->race_t = 0;
            changed = 1;
        }
    }
    if (app_explorer_animating(x)) changed |= app_explorer_tick(x, dt);
    return changed;
}

static int present_animating(void *ctx, const app_explorer *x)
{
    (void)x;
    const presenter *p = ctx;
    return p->sweep_i < slide(p)->n_sweep || (p->race && !p->race_fin);
}

/* do: race: the race's figure in the view's place (the same scene `pelab race` shows). */
static int present_figure(void *ctx, app_explorer *x, scene *s, const scene_target *t)
{
    presenter *p = ctx;
    if (slide(p)->action != LESSON_DO_RACE) return 0;
    p->race_ui.dark = x->st.dark;
    /* the race's figure has no author overrides: the scene's pointer is the last view's (and
     * lesson --check frees that view's explorer between sizes) */
    s->author = NULL;
    if (p->race)
        lesson_race_build(p->race, s, t, &p->race_ui);
    else if (p->race_still.n)
        app_race_build(s, t, &p->race_still, &p->race_ui);
    else
        return 0; /* no race could start (the message says why): the view's figure */
    return 1;
}

/* ---- the caption panel ------------------------------------------------------------------- */

typedef struct panel_text {
    char lines[24][LESSON_LINE];
    int n, n_caption;
    double title_size, title_line; /* the title's text size and line height */
    double size, line;             /* the caption's text size and line height */
    double pad;
} panel_text;

/* The panel's lines for width t->width: the caption wrapped, then the hints, in at most 40% of
 * the terminal's height; in the window the panel and the status line take at most 28% (the
 * figure keeps 70% of the window) so the view keeps room at any zoom. In the window a caption
 * that does not fit is set smaller, down to 3/4 of the zoomed size, and under the projector
 * zoom down to the unzoomed size (a small window zoomed to 200% has room for the caption only
 * at the size it had before the zoom); what still does not fit loses its hints, then its end
 * (the last line ends "..."). */
static void layout(presenter *p, app_explorer *x, const scene_target *t, panel_text *pt)
{
    static const double sizes[] = {1, 0.87, 0.75, 0.66, 0.57, 0.5};
    double smallest = fmin(0.75, 1 / fmax(1, x->st.zoom)) - 1e-9;
    const lesson_slide *s = slide(p);
    pt->pad = t->cells ? 1 : t->char_w;
    double w = t->width - 2 * pt->pad;
    char cap[4096];
    lesson_race_numbers rn = {0};
    if (p->race) lesson_race_numbers_get(p->race, &rn);
    lesson_expand_race(s, &x->st, x->ctx[x->st.view].readout, &rn, cap, sizeof cap);
    int max = 1, all = 0;
    pt->size = 2;
    for (size_t k = 0; k < (t->cells ? 1 : sizeof sizes / sizeof sizes[0]); k++) {
        /* the last step is the smallest size itself (1/zoom falls between the steps) */
        double sz = fmax(sizes[k], smallest + 1e-9);
        if (sz >= pt->size) break;
        pt->size = sz;
        /* the title steps down with the caption, staying a little larger */
        pt->title_size = t->cells ? 1 : fmin(1, sz * 1.3);
        pt->title_line = t->cells ? 2 : t->text_h * 1.2 * pt->title_size;
        pt->line = t->cells ? 2 : t->text_h * 1.2 * sz;
        /* the window: the panel with its padding and the status line under the figure (one
         * line at the unzoomed size, explorer.c) in 29.5% of the height, so the figure keeps
         * 70% of the window */
        double room = t->cells ? t->height * 0.4
                               : t->height * 0.295 - pt->title_line * 0.75 -
                                     t->text_h * 1.625 / fmax(1, x->st.zoom);
        max = (int)floor((room - pt->title_line) / pt->line);
        if (max > 23) max = 23;
        if (max < 1) max = 1;
        all = lesson_wrap(t, cap, pt->size, w, pt->lines, 24);
        if (all + s->n_try <= max) break;
    }
    pt->n_caption = all < max ? all : max;
    if (all > max) { /* mark the cut */
        char rest[LESSON_LINE];
        snprintf(rest, sizeof rest, "%s", pt->lines[max - 1]);
        size_t len = strlen(rest);
        while (len > 0 &&
               scene_text_width(t, rest, pt->size) + scene_text_width(t, "...", pt->size) > w)
            rest[--len] = '\0';
        snprintf(pt->lines[max - 1], LESSON_LINE, "%s...", rest);
    }
    pt->n = pt->n_caption;
    for (int i = 0; i < s->n_try && pt->n < max; i++)
        snprintf(pt->lines[pt->n++], LESSON_LINE, "try %s: %s", s->tries[i].keys, s->tries[i].what);
}

static double present_panel_h(void *ctx, app_explorer *x, const scene_target *t)
{
    panel_text *pt = malloc(sizeof *pt);
    if (!pt) return 0;
    layout(ctx, x, t, pt);
    double h = pt->title_line + pt->n * pt->line + (t->cells ? 0 : pt->title_line * 0.5);
    free(pt);
    return h;
}

static void slide_list(presenter *p, scene *s, const scene_target *t, const fig_theme *th)
{
    double line = t->cells ? 2 : t->text_h * 1.2, cw = t->cells ? 1 : t->char_w;
    int n = p->l->n;
    double w = 0;
    char buf[200];
    for (int i = 0; i < n; i++) {
        snprintf(buf, sizeof buf, "%2d  %s", i + 1, p->l->slides[i].title);
        w = fmax(w, scene_text_width(t, buf, 1));
    }
    char hdr[300];
    snprintf(hdr, sizeof hdr, "%s (1..9 or :slide N jumps, any key closes)", p->l->title);
    w = fmax(w, scene_text_width(t, hdr, 1));
    w = fmin(t->width - 2 * cw, w + 4 * cw);
    /* rows: the header and the slides, plus half a line above and below in pixels; in cells
     * the border takes a whole row at each end, so one row more or the last slide lands on
     * the bottom border */
    int frame = t->cells ? 3 : 2, rows = n + frame;
    if (rows * line > t->height - line) rows = (int)((t->height - line) / line);
    double h = rows * line, x0 = floor((t->width - w) / 2), y0 = floor((t->height - h) / 2);
    if (t->cells) y0 = floor(y0 / 2) * 2;
    scene_rect(s, x0, y0, w, h, th->bg, SCENE_FILL);
    scene_rect(s, x0, y0, w, h, th->accent, 0);
    scene_text(s, x0 + 2 * cw, y0 + line * 0.5, hdr, 1, SCENE_LEFT | SCENE_TOP, th->accent,
               SCENE_BOLD);
    /* the list scrolls so the current slide is shown */
    int fit = rows - frame, first = p->cur - fit / 2;
    if (first > n - fit) first = n - fit;
    if (first < 0) first = 0;
    for (int i = first; i < n && i - first < fit; i++) {
        snprintf(buf, sizeof buf, "%2d  %s", i + 1, p->l->slides[i].title);
        scene_text(s, x0 + 2 * cw, y0 + line * (1.5 + i - first), buf, 1, SCENE_LEFT | SCENE_TOP,
                   i == p->cur ? th->accent : th->fg, i == p->cur ? SCENE_BOLD : 0);
    }
}

static void present_panel(void *ctx, app_explorer *x, scene *s, const scene_target *t, double y)
{
    presenter *p = ctx;
    const fig_theme *th = fig_theme_get(x->st.dark);
    panel_text *pt = malloc(sizeof *pt);
    if (!pt) return;
    layout(p, x, t, pt);
    scene_rect(s, 0, y, t->width, t->height - y, th->bg, SCENE_FILL);
    if (!t->cells) scene_line(s, 0, y, t->width, y, th->accent, t->hairline * 2, 0);
    double ty = y + (t->cells ? 0 : pt->title_line * 0.25);
    char head[300];
    snprintf(head, sizeof head, "[%d/%d] %s", p->cur + 1, p->l->n, slide(p)->title);
    /* a title wider than the panel is cut; it is bold, which DejaVu Sans draws about 10% wider
     * than the regular face the measure uses */
    double room = (t->width - 2 * pt->pad) / (t->cells ? 1 : 1.1), tsz = pt->title_size;
    if (scene_text_width(t, head, tsz) > room) {
        size_t len = strlen(head);
        while (len > 1 && scene_text_width(t, head, tsz) + scene_text_width(t, "...", tsz) > room) {
            do len--;
            while (len > 1 && ((unsigned char)head[len] & 0xc0) == 0x80);
            head[len] = '\0';
        }
        snprintf(head + len, sizeof head - len, "...");
    }
    scene_text(s, pt->pad, ty, head, tsz, SCENE_LEFT | SCENE_TOP, th->accent, SCENE_BOLD);
    const char *keys = "Space next  PgUp back  l list  r reset  | options  q quit";
    if (scene_text_width(t, head, tsz) * (t->cells ? 1 : 1.1) + scene_text_width(t, keys, tsz) +
            8 * pt->pad <
        t->width)
        scene_text(s, t->width - pt->pad, ty, keys, tsz, SCENE_RIGHT | SCENE_TOP, th->muted, 0);
    for (int i = 0; i < pt->n; i++)
        scene_text(s, pt->pad, ty + pt->title_line + i * pt->line, pt->lines[i], pt->size,
                   SCENE_LEFT | SCENE_TOP, i < pt->n_caption ? th->fg : th->accent, 0);
    free(pt);
    if (p->listing) slide_list(p, s, t, th);
}

static struct lesson_presenter *attach(app_explorer *x, const lesson *l, int start, int still)
{
    presenter *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->l = l;
    p->still = still;
    p->layer = (app_layer){p,
                           present_event,
                           present_tick,
                           present_animating,
                           present_panel_h,
                           present_panel,
                           present_figure};
    x->layer = &p->layer;
    x->presenting = 1; /* the slide's figure, title and caption; | shows the options */
    arrive(p, x, start);
    return (struct lesson_presenter *)p;
}

struct lesson_presenter *lesson_attach(app_explorer *x, const lesson *l, int start)
{
    return attach(x, l, start, 0);
}

struct lesson_presenter *lesson_attach_still(app_explorer *x, const lesson *l, int start)
{
    return attach(x, l, start, 1);
}

void lesson_detach(app_explorer *x, struct lesson_presenter *lp)
{
    x->layer = NULL;
    x->presenting = 0;
    if (lp) { /* quitting on a race slide: its workers are stopped and joined here */
        lesson_race_free(((presenter *)lp)->race);
        app_race_data_free(&((presenter *)lp)->race_still);
    }
    free(lp);
}

int lesson_present(const lesson *l, int start, int gui, int frames)
{
    app_explorer *x = calloc(1, sizeof *x);
    if (!x) {
        fprintf(stderr, "pelab lesson: out of memory\n");
        return 1;
    }
    app_explorer_init(x, &l->slides[0].st, gui);
    /* a dark terminal (its OSC 11 answer, else COLORFGBG) starts the lesson dark, as the
     * explorer does; a slide that names its theme keeps it */
    if (!gui && tui_terminal_dark(1) == 1) x->st.dark = 1;
    struct lesson_presenter *p = lesson_attach(x, l, start);
    if (!p) {
        app_explorer_free(x);
        free(x);
        fprintf(stderr, "pelab lesson: out of memory\n");
        return 1;
    }
    int rc = gui ? app_run_gui(x, frames) : app_run_tui(x, frames);
    for (int i = 0; i < x->n_saved; i++) printf("%s\n", x->saved_commands[i]);
    lesson_detach(x, p);
    app_explorer_free(x);
    free(x);
    return rc;
}
