/* test_lesson.c: the lesson presenter driven through the explorer with events and frames, no
 * terminal or window: every slide of every shipped lesson, in the terminal at 80x24 and 120x40
 * and in the window (slider panel included) at 1024x640 with the projector zoom 1, 1.5 and 2 and
 * at 1280x800: the view draws, the caption panel shows "[i/n] title" and the caption's start, and
 * no panel line runs off the canvas. Then the keys: next, previous, jump, reset, Right at the
 * end of the view, ':slide N', Enter for the view's play, and a sweep that ends on its last
 * value. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cellgrid.h"
#include "explorer.h"
#include "frontend.h"
#include "lesson.h"
#include "options.h"
#include "raster.h"
#include "tap.h"

static const scene_item *find_text(const scene *s, const char *prefix)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->items[i].kind == SCENE_TEXT &&
            strncmp(s->items[i].u.text.str, prefix, strlen(prefix)) == 0)
            return &s->items[i];
    return NULL;
}

static int contains_text(const scene *s, const char *part)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->items[i].kind == SCENE_TEXT && strstr(s->items[i].u.text.str, part)) return 1;
    return 0;
}

/* Every text item at or below y fits inside the canvas width (left-anchored items; bold ones
 * measured 10% wider, as DejaVu Sans Bold runs). */
static int panel_fits(const scene *s, const scene_target *t, double y, double width)
{
    for (size_t i = 0; i < s->n; i++) {
        const scene_item *it = &s->items[i];
        if (it->kind != SCENE_TEXT || it->u.text.y < y - 0.01) continue;
        if ((it->u.text.anchor & 3) != SCENE_LEFT) continue;
        double w = scene_text_width(t, it->u.text.str, it->u.text.size) *
                   (!t->cells && (it->flags & SCENE_BOLD) ? 1.1 : 1);
        if (it->u.text.x + w > width + (t->cells ? 0.01 : 1)) {
            tap_diag("'%s' runs to %.1f of %.1f", it->u.text.str, it->u.text.x + w, width);
            return 0;
        }
        if (it->u.text.y + (t->cells ? 2 : t->text_h * it->u.text.size) > t->height + 0.01) {
            tap_diag("'%s' below the canvas (y %.1f of %.1f)", it->u.text.str, it->u.text.y,
                     t->height);
            return 0;
        }
    }
    return 1;
}

/* The caption's words up to its first live value, at most three. */
static void caption_start(const lesson_slide *sl, char *buf, size_t n)
{
    snprintf(buf, n, "%.150s", sl->caption);
    buf[strcspn(buf, "{")] = '\0';
    int words = 0;
    for (char *p = buf; *p; p++)
        if (*p == ' ' && ++words == 3) {
            *p = '\0';
            break;
        }
    size_t len = strlen(buf);
    while (len && buf[len - 1] == ' ') buf[--len] = '\0';
}

typedef struct size_case {
    int cells;
    double w, h, zoom;
} size_case;

/* A caption line below the panel's title y that was cut (ends in "..."), or NULL. */
static const char *caption_cut(const scene *s, double y)
{
    for (size_t i = 0; i < s->n; i++) {
        const scene_item *it = &s->items[i];
        if (it->kind != SCENE_TEXT || it->u.text.y <= y + 0.01) continue;
        size_t len = strlen(it->u.text.str);
        if (len > 3 && strcmp(it->u.text.str + len - 3, "...") == 0) return it->u.text.str;
    }
    return NULL;
}

/* The box a text item covers on t. */
static void text_box(const scene_target *t, const scene_item *it, double *x0, double *y0, double *w,
                     double *h)
{
    const char *str = it->u.text.str;
    *w = it->flags & SCENE_BOLD ? scene_text_width_bold(t, str, it->u.text.size)
                                : scene_text_width(t, str, it->u.text.size);
    *h = t->cells ? 2 : t->text_h * it->u.text.size;
    unsigned a = it->u.text.anchor;
    if (a & SCENE_VERTICAL && !t->cells) {
        double tmp = *w;
        *w = *h;
        *h = tmp;
    }
    unsigned ha = a & 3, va = (a >> 2) & 3;
    *x0 = it->u.text.x - (ha == SCENE_CENTER ? *w / 2 : ha == SCENE_RIGHT ? *w : 0);
    *y0 = it->u.text.y - (va == 1 ? *h / 2 : va == 2 ? *h : 0);
}

/* Why the presenting frame fails, or "" (what test_layout holds every view to, plus the
 * figure's share): anything shortened, the main panel missing or under 12% of the canvas each
 * way, two texts over each other (pixels), and in the window a figure under 70% of the area. */
static void check_presenting(const app_explorer *x, const scene *s, const scene_target *t,
                             char *why, size_t n)
{
    why[0] = '\0';
    if (s->n_cut) {
        snprintf(why, n, "cut: %s", s->cut_example);
        return;
    }
    double min_w = fmax(0.12 * t->width, 3 * t->text_h),
           min_h = fmax(0.12 * t->height, 3 * t->text_h);
    if (!(s->main_w >= min_w - 1e-9 && s->main_h >= min_h - 1e-9)) {
        snprintf(why, n, "the main panel (%s) is %.0fx%.0f", s->main_name, s->main_w, s->main_h);
        return;
    }
    if (!t->cells) {
        double share = x->fig_w * x->fig_h / (t->width * t->height);
        if (share < 0.7) {
            snprintf(why, n, "the figure takes %.0f%% of the window", share * 100);
            return;
        }
        for (size_t i = 0; i < s->n; i++) {
            const scene_item *a = &s->items[i];
            if (a->kind != SCENE_TEXT || !a->u.text.str[0]) continue;
            double ax, ay, aw, ah;
            text_box(t, a, &ax, &ay, &aw, &ah);
            for (size_t j = i + 1; j < s->n; j++) {
                const scene_item *b = &s->items[j];
                if (b->kind != SCENE_TEXT || !b->u.text.str[0]) continue;
                double bx, by, bw, bh;
                text_box(t, b, &bx, &by, &bw, &bh);
                double ox = fmin(ax + aw, bx + bw) - fmax(ax, bx);
                double oy = fmin(ay + ah, by + bh) - fmax(ay, by);
                if (ox > t->char_w && oy > 0.2 * fmin(ah, bh)) {
                    snprintf(why, n, "\"%s\" and \"%s\" overlap", a->u.text.str, b->u.text.str);
                    return;
                }
            }
        }
    }
}

/* Every slide at the sizes of issue 27: the terminal at 80x24 and 120x40, the window at
 * 1024x768 and 1280x800 with the projector zoom 1, 1.5 and 2 (and 1024x640). */
static void check_slide(app_explorer *x, const lesson *l, int i, scene *s)
{
    static const size_case sizes[] = {
        {1, 80, 24, 1},    {1, 120, 40, 1},     {0, 1024, 640, 1},
        {0, 1024, 768, 1}, {0, 1024, 768, 1.5}, {0, 1024, 768, 2},
        {0, 1280, 800, 1}, {0, 1280, 800, 1.5}, {0, 1280, 800, 2},
    };
    const lesson_slide *sl = &l->slides[i];
    char head[200], start[200];
    snprintf(head, sizeof head, "[%d/%d] %s", i + 1, l->n, sl->title);
    caption_start(sl, start, sizeof start);
    int good = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const size_case *c = &sizes[k];
        scene_target t;
        x->st.zoom = c->zoom;
        double width = c->w;
        if (c->cells) {
            t = cellgrid_target((int)c->w, (int)c->h);
            app_explorer_frame(x, s, &t);
        } else {
            t = raster_target(c->w, c->h, raster_font_px(c->w, c->h, c->zoom));
            app_gui_frame(x, s, &t);
            width = x->panel_x > 0 ? x->panel_x : c->w;
        }
        /* the panel's title line: the whole title, or (narrow, zoomed) its start and "..." */
        char num[32];
        snprintf(num, sizeof num, "[%d/%d] ", i + 1, l->n);
        const scene_item *h = find_text(s, num);
        if (h) {
            size_t len = strlen(h->u.text.str);
            int cut = len > 3 && strcmp(h->u.text.str + len - 3, "...") == 0;
            if (cut ? strncmp(head, h->u.text.str, len - 3) != 0 || len - 3 < strlen(num) + 4
                    : strcmp(head, h->u.text.str) != 0)
                h = NULL;
        }
        const char *cut = h ? caption_cut(s, h->u.text.y) : NULL;
        if (cut) tap_diag("caption cut: '%s'", cut);
        char why[400];
        check_presenting(x, s, &t, why, sizeof why);
        int ok = h && !cut && contains_text(s, start) && x->view_error[0] == '\0' &&
                 panel_fits(s, &t, h->u.text.y, width) && !why[0];
        if (!ok)
            tap_diag("%s slide %d at %gx%g%s zoom %g: title %s, caption start '%s' %s, view %s%s%s",
                     l->name, i + 1, c->w, c->h, c->cells ? " cells" : " px", c->zoom,
                     h ? "shown" : "missing", start, contains_text(s, start) ? "shown" : "missing",
                     x->view_error[0] ? x->view_error : "drawn", why[0] ? "; " : "", why);
        good += ok;
    }
    x->st.zoom = 1;
    TAP_OK(
        good == (int)(sizeof sizes / sizeof sizes[0]),
        "%s slide %d '%s': view, title and the whole caption fit from 80x24 cells and 1024x640 px "
        "(zoom to 2) up; the figure >= 70%% of the window, main panel there, nothing cut or "
        "overlapping",
        l->name, i + 1, sl->title);
}

/* Issue 27's projector case: the rope lesson's attention slide in the window at 175% (the zoom
 * between the tested 150% and 200% where it fell apart: bar labels "t...", a 110x25 px matrix,
 * "next token:" with nothing under it). Its heads, mean matrix, bars and next-token list are all
 * in the scene, the matrix has square cells, every token keeps its bar, nothing is cut and the
 * figure keeps 70% of the window. */
static void check_attention_175(scene *s)
{
    char path[1024], err[512];
    lesson l;
    if (lesson_resolve("rope", path, sizeof path, err, sizeof err) < 0 ||
        lesson_load(&l, path, NULL, stderr) != 0) {
        TAP_OK(0, "the rope lesson loads");
        return;
    }
    int slide = -1;
    for (int i = 0; i < l.n && slide < 0; i++)
        if (!strcmp(app_view_at((size_t)l.slides[i].st.view)->name, "attention")) slide = i;
    TAP_OK(slide >= 0, "the rope lesson has an attention slide (%d)", slide + 1);
    static const double sizes[][2] = {{1024, 768}, {1152, 720}, {1280, 800}};
    for (size_t k = 0; slide >= 0 && k < sizeof sizes / sizeof sizes[0]; k++) {
        app_explorer *x = calloc(1, sizeof *x);
        app_explorer_init(x, &l.slides[slide].st, 1);
        struct lesson_presenter *p = lesson_attach(x, &l, slide);
        x->st.zoom = 1.75;
        scene_target t =
            raster_target(sizes[k][0], sizes[k][1], raster_font_px(sizes[k][0], sizes[k][1], 1.75));
        app_gui_frame(x, s, &t);
        char why[400] = "";
        static const char *const panels[] = {"heads", "matrix", "bars", "next-token"};
        for (size_t q = 0; q < 4 && !why[0]; q++)
            if (!scene_has_panel(s, panels[q])) snprintf(why, sizeof why, "no %s", panels[q]);
        int bars = 0, matrices = 0;
        for (size_t i = 0; i < s->n && !why[0]; i++) {
            const scene_item *it = &s->items[i];
            if (it->kind == SCENE_RECT && (it->flags & SCENE_BAR)) bars++;
            if (it->kind != SCENE_HEATMAP || it->u.heat.rows != it->u.heat.cols) continue;
            matrices++;
            if (fabs(it->u.heat.w - it->u.heat.h) > 2)
                snprintf(why, sizeof why, "a %zux%zu matrix drawn %.0fx%.0f", it->u.heat.rows,
                         it->u.heat.cols, it->u.heat.w, it->u.heat.h);
        }
        /* the prompt's 9 tokens, each a bar; the next-token list's rows, each a bar across */
        int rows = 0;
        for (size_t i = 0; i < s->n; i++)
            rows += s->items[i].kind == SCENE_RECT && (s->items[i].flags & SCENE_HBAR);
        if (!why[0] && bars < 9) snprintf(why, sizeof why, "%d bars", bars);
        if (!why[0] && rows < 3) snprintf(why, sizeof why, "%d next-token rows", rows);
        if (!why[0] && matrices < 5) snprintf(why, sizeof why, "%d square matrices", matrices);
        if (!why[0]) check_presenting(x, s, &t, why, sizeof why);
        TAP_OK(!why[0] && x->view_error[0] == '\0',
               "rope slide %d in a %gx%g window at 175%%: heads, matrix, bars, next-token list, "
               "square cells, nothing cut, figure >= 70%%%s%s",
               slide + 1, sizes[k][0], sizes[k][1], why[0] ? ": " : "", why);
        lesson_detach(x, p);
        app_explorer_free(x);
        free(x);
    }
    lesson_free(&l);
}

static void key(app_explorer *x, uint32_t k)
{
    ui_event ev = {.type = UI_EV_KEY, .key = k};
    app_explorer_event(x, &ev);
}

static int on_slide(app_explorer *x, scene *s, const lesson *l, int i)
{
    scene_target t = cellgrid_target(120, 40);
    app_explorer_frame(x, s, &t);
    char head[200];
    snprintf(head, sizeof head, "[%d/%d] %s", i + 1, l->n, l->slides[i].title);
    return find_text(s, head) != NULL;
}

int main(void)
{
    char **names;
    int n = lesson_names(&names);
    TAP_OK(n >= 6, "%d shipped lessons", n);
    scene s;
    scene_init(&s, 1, 1, 0);
    for (int li = 0; li < n; li++) {
        char path[1024], err[512];
        lesson l;
        if (lesson_resolve(names[li], path, sizeof path, err, sizeof err) < 0 ||
            lesson_load(&l, path, NULL, stderr) != 0) {
            TAP_OK(0, "%s loads", names[li]);
            continue;
        }
        snprintf(l.name, sizeof l.name, "%s", names[li]);
        app_explorer *x = calloc(1, sizeof *x);
        app_explorer_init(x, &l.slides[0].st, 1);
        /* still: a race slide draws its race at step 0 (test_lesson_race runs one) */
        struct lesson_presenter *p = lesson_attach_still(x, &l, 0);
        for (int i = 0; i < l.n; i++) {
            if (i > 0) key(x, ' ');
            check_slide(x, &l, i, &s);
        }
        lesson_detach(x, p);
        app_explorer_free(x);
        free(x);
        lesson_free(&l);
    }

    check_attention_175(&s);

    /* the keys, on the rope lesson */
    char path[1024], err[512];
    lesson l;
    TAP_OK(lesson_resolve("rope", path, sizeof path, err, sizeof err) == 0 &&
               lesson_load(&l, path, NULL, stderr) == 0,
           "the rope lesson loads");
    app_explorer *x = calloc(1, sizeof *x);
    app_explorer_init(x, &l.slides[0].st, 0);
    struct lesson_presenter *p = lesson_attach(x, &l, 0);
    TAP_OK(on_slide(x, &s, &l, 0), "starts on slide 1");
    key(x, UI_KEY_PGDN);
    TAP_OK(on_slide(x, &s, &l, 1), "PgDn: slide 2");
    TAP_OK(x->st.playing, "slide 2's spin plays on arrival");
    key(x, UI_KEY_ENTER);
    TAP_OK(!x->st.playing, "Enter pauses the view's animation (Space's job in the explorer)");
    key(x, UI_KEY_PGUP);
    TAP_OK(on_slide(x, &s, &l, 0), "PgUp: back to slide 1");
    key(x, UI_KEY_BACKSPACE);
    TAP_OK(on_slide(x, &s, &l, 0) && strstr(x->message, "first slide"),
           "Backspace on slide 1 stays and says so");
    key(x, UI_KEY_RIGHT);
    TAP_OK(on_slide(x, &s, &l, 0) && x->st.pos == 2, "Right is the view's first: m 1 -> 2");
    key(x, 'r');
    TAP_OK(x->st.pos == l.slides[0].st.pos, "r resets the slide (m back to %d)", x->st.pos);
    key(x, '9');
    TAP_OK(on_slide(x, &s, &l, 8), "9 jumps to slide 9");
    key(x, ':');
    for (const char *c = "slide 3"; *c; c++) key(x, (uint32_t)*c);
    key(x, UI_KEY_ENTER);
    TAP_OK(on_slide(x, &s, &l, 2), ":slide 3 jumps");
    key(x, 'l');
    scene_target t = cellgrid_target(120, 40);
    app_explorer_frame(x, &s, &t);
    TAP_OK(contains_text(&s, "any key closes") && contains_text(&s, l.slides[8].title),
           "l lists the slides");
    key(x, '5');
    TAP_OK(on_slide(x, &s, &l, 4), "a digit in the list picks that slide");
    key(x, ':');
    for (const char *c = "pos 7"; *c; c++) key(x, (uint32_t)*c);
    key(x, '9'); /* typed into the ':' line, not a jump */
    key(x, UI_KEY_ENTER);
    TAP_OK(on_slide(x, &s, &l, 4), "digits typed on the ':' line do not jump");
    /* Right at the end: the rope view at m = L - 1 cannot move right, so Right moves on */
    key(x, '3');
    key(x, ':');
    for (const char *c = "pos 255"; *c; c++) key(x, (uint32_t)*c);
    key(x, UI_KEY_ENTER);
    key(x, UI_KEY_RIGHT);
    TAP_OK(on_slide(x, &s, &l, 3), "Right where the view has nothing left to move: next slide");
    key(x, 'q');
    TAP_OK(x->quit, "q quits");
    lesson_detach(x, p);
    app_explorer_free(x);
    free(x);
    lesson_free(&l);

    /* a sweep plays one value a second and ends on its last */
    TAP_OK(lesson_resolve("alibi", path, sizeof path, err, sizeof err) == 0 &&
               lesson_load(&l, path, NULL, stderr) == 0,
           "the alibi lesson loads");
    x = calloc(1, sizeof *x);
    app_explorer_init(x, &l.slides[0].st, 0);
    p = lesson_attach(x, &l, 2);
    TAP_OK(app_explorer_animating(x), "the sweep slide animates on arrival");
    int seen4 = 0;
    for (int k = 0; k < 10; k++) {
        app_explorer_tick(x, 0.5);
        seen4 |= x->st.p.heads == 4;
    }
    TAP_OK(seen4 && x->st.p.heads == 12 && !app_explorer_animating(x),
           "the sweep passed heads 4 and ended on 12 (%d)", x->st.p.heads);
    /* a ':' command's message stays while the sweep plays on, until the next key (issue 28:
     * the sweep's next step replaced it within a second) */
    key(x, 'r');
    app_explorer_tick(x, 0.5); /* the first value */
    TAP_OK(strstr(x->message, "heads = 4 (1 of 4)") != NULL, "the sweep says its step: '%s'",
           x->message);
    key(x, ':');
    for (const char *c = "cmap viridis"; *c; c++) key(x, (uint32_t)*c);
    key(x, UI_KEY_ENTER);
    char said[sizeof x->message];
    snprintf(said, sizeof said, "%s", x->message);
    for (int k = 0; k < 5; k++) app_explorer_tick(x, 0.5);
    TAP_OK(strstr(said, "cmap") && strcmp(x->message, said) == 0 && x->st.p.heads == 8,
           "':cmap viridis' says '%s' and it stays over 2.5 s of sweep (heads went on to %d)", said,
           x->st.p.heads);
    key(x, 'r');
    key(x, UI_KEY_ESC);
    app_explorer_tick(x, 0.5);
    app_explorer_tick(x, 1);
    TAP_OK(strstr(x->message, "heads = 6 (2 of 4)") != NULL,
           "after the next key the sweep speaks again: '%s'", x->message);
    lesson_detach(x, p);
    app_explorer_free(x);
    free(x);
    lesson_free(&l);

    scene_free(&s);
    lesson_names_free(names, n);
    return tap_done();
}
