/* test_layout.c: every view in every front end at the reference sizes of issue 11 (terminal
 * 80x24, 120x40, 200x60; window 1024x640, 1280x800, 1920x1080 at zoom 100, 150 and 200%; export
 * at the default 1000x600 and at 480x320) lays out without shortening any title, legend, axis
 * label, number or help text (the scene counts what it had to cut: scene_fit_text), keeps every
 * text item inside the canvas, shows no NaN or inf, keeps the view's main panel at a useful size
 * (check_main), draws no data bar thinner than fig_min_bar and no text over another text. The
 * attention views also run in their other layouts (split, base experiment, colour scales). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cellgrid.h"
#include "explorer.h"
#include "figure.h"
#include "frontend.h"
#include "lesson.h"
#include "options.h"
#include "raster.h"
#include "tap.h"

#include "layout_cases.h"

/* Why the scene's text is not all there, or "" when it is: an item outside the canvas, a NaN
 * or inf in the text, or a notice that a panel was left out. */
static void check_text(const scene *s, const scene_target *t, size_t from, char *why, size_t n)
{
    why[0] = '\0';
    for (size_t i = from; i < s->n; i++) {
        const scene_item *it = &s->items[i];
        if (it->kind != SCENE_TEXT) continue;
        const char *str = it->u.text.str;
        if (strstr(str, "nan") || strstr(str, "inf") || strstr(str, "NaN")) {
            /* whole words only: "information", "infinite" are fine */
            const char *bad[] = {"nan", "inf", "NaN", "-inf", "+nan"};
            for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
                const char *p = strstr(str, bad[b]);
                while (p) {
                    size_t l = strlen(bad[b]);
                    int before = p == str || !((p[-1] | 32) >= 'a' && (p[-1] | 32) <= 'z');
                    int after = !((p[l] | 32) >= 'a' && (p[l] | 32) <= 'z');
                    if (before && after) {
                        snprintf(why, n, "\"%s\" shows %s", str, bad[b]);
                        return;
                    }
                    p = strstr(p + 1, bad[b]);
                }
            }
        }
        if (strstr(str, "left out at this")) {
            snprintf(why, n, "\"%s\"", str);
            return;
        }
        double w = it->flags & SCENE_BOLD ? scene_text_width_bold(t, str, it->u.text.size)
                                          : scene_text_width(t, str, it->u.text.size);
        double h = t->text_h * it->u.text.size;
        unsigned a = it->u.text.anchor;
        if (a & SCENE_VERTICAL) {
            double tmp = w;
            w = h;
            h = tmp;
        }
        unsigned ha = a & 3, va = (a >> 2) & 3;
        double x0 = it->u.text.x - (ha == SCENE_CENTER ? w / 2 : ha == SCENE_RIGHT ? w : 0);
        double y0 = it->u.text.y - (va == 1 ? h / 2 : va == 2 ? h : 0);
        double tol = t->cells ? 1e-6 : 1.0;
        if (x0 < -tol || y0 < -tol || x0 + w > t->width + tol || y0 + h > t->height + tol) {
            snprintf(why, n, "\"%s\" runs out of the %gx%g canvas (%.0f..%.0f, %.0f..%.0f)", str,
                     t->width, t->height, x0, x0 + w, y0, y0 + h);
            return;
        }
    }
}

/* Why the view's main panel is not there at a useful size, or "" when it is: every view marks
 * the plot it is about (scene_mark_main), and whatever else gives up space (the slider panel,
 * the status band, secondary panels), that one keeps at least 12% of the canvas each way and
 * three lines of text. */
static void check_main(const scene *s, const scene_target *t, int figure, char *why, size_t n)
{
    why[0] = '\0';
    double min_w = fmax(0.12 * t->width, 3 * t->text_h);
    double min_h = fmax(0.12 * t->height, 3 * t->text_h);
    /* an exported figure is about its plot: at least a quarter of the height (resolution's
     * plot was 45 px of a paper column's 211, under a legend strip); small multiples in a row
     * (xl's four square terms, alibi's heads) are bound by the width instead */
    int multiples = !strcmp(s->main_name, "four terms") || !strcmp(s->main_name, "heads");
    if (figure && !multiples) min_h = fmax(min_h, 0.3 * t->height);
    if (!(s->main_w > 0) || !(s->main_h > 0))
        snprintf(why, n, "no main panel marked");
    else if (s->main_w < min_w - 1e-9 || s->main_h < min_h - 1e-9)
        snprintf(why, n, "the main panel (%s) is %.0fx%.0f, under %.0fx%.0f", s->main_name,
                 s->main_w, s->main_h, min_w, min_h);
    else if (s->main_x < -1e-6 || s->main_y < -1e-6 || s->main_x + s->main_w > t->width + 1e-6 ||
             s->main_y + s->main_h > t->height + 1e-6)
        snprintf(why, n, "the main panel (%s) runs out of the canvas", s->main_name);
}

/* Data bars (SCENE_BAR, SCENE_HBAR) are never slivers: each is at least fig_min_bar thick
 * across its value axis (a bar for a tiny value may be short, never thin). Writes the first
 * offender to why when why is still empty. */
static void check_bars(const scene *s, const scene_target *t, char *why, size_t n)
{
    double min = fig_min_bar(t);
    for (size_t i = 0; i < s->n && !why[0]; i++) {
        const scene_item *it = &s->items[i];
        if (it->kind != SCENE_RECT || !(it->flags & (SCENE_BAR | SCENE_HBAR))) continue;
        double thick = it->flags & SCENE_BAR ? it->u.rect.w : it->u.rect.h;
        if (thick < min - 1e-6)
            snprintf(why, n, "a bar %.1fx%.1f at (%.0f, %.0f) is thinner than %.1f", it->u.rect.w,
                     it->u.rect.h, it->u.rect.x, it->u.rect.y, min);
    }
}

/* A square (n, n) heatmap (an attention matrix, xl's terms, a bias matrix) drawn with square
 * cells: issue 27's projector zoom drew the compare view's as 70x170 px, a paper column xl's
 * four terms as 4:1 strips. */
static void check_square(const scene *s, char *why, size_t n)
{
    for (size_t i = 0; i < s->n && !why[0]; i++) {
        const scene_item *it = &s->items[i];
        if (it->kind != SCENE_HEATMAP || it->u.heat.rows != it->u.heat.cols) continue;
        if (fabs(it->u.heat.w - it->u.heat.h) > 2)
            snprintf(why, n, "a %zux%zu matrix drawn %.0fx%.0f: its cells are not square",
                     it->u.heat.rows, it->u.heat.cols, it->u.heat.w, it->u.heat.h);
    }
}

/* The attention view's heads (issue 26): every thumbnail (a square heatmap under a label "h3"
 * or "h3 kv1") at least 1.5 lines of text wide (at a paper column they were 10 units, and a head
 * under 2 was dropped unsaid), the heads shown consecutive, and when fewer than the layer's
 * heads (the title's "mean of N heads") a line names them: "heads 0-2 of 4", "h0-2 of 4",
 * "h0/4". */
static void check_heads(const scene *s, const scene_target *t, char *why, size_t n)
{
    if (why[0]) return;
    char all[4096] = "";
    size_t u = 0;
    int labels[64], nl = 0, note_a = -1, note_b = -1, note_n = -1;
    for (size_t i = 0; i < s->n; i++) {
        const scene_item *it = &s->items[i];
        if (it->kind != SCENE_TEXT) continue;
        const char *str = it->u.text.str;
        if (u < sizeof all) u += (size_t)snprintf(all + u, sizeof all - u, "%s ", str);
        int h, g, k = 0;
        if ((sscanf(str, "h%d kv%d%n", &h, &g, &k) == 2 || sscanf(str, "h%d%n", &h, &k) == 1) &&
            str[k] == '\0' && nl < 64)
            labels[nl++] = h;
        /* the note: the range's dash is U+2013 */
        const char *p = str;
        if (!strncmp(p, "heads ", 6))
            p += 6;
        else if (!strncmp(p, "head ", 5))
            p += 5;
        else if (*p == 'h')
            p++;
        int a, b, m;
        if (sscanf(p, "%d\xe2\x80\x93%d of %d%n", &a, &b, &m, &k) == 3 && !p[k]) {
            note_a = a, note_b = b, note_n = m;
        } else if (sscanf(p, "%d\xe2\x80\x93%d/%d%n", &a, &b, &m, &k) == 3 && !p[k]) {
            note_a = a, note_b = b, note_n = m;
        } else if ((sscanf(p, "%d of %d%n", &a, &m, &k) == 2 ||
                    sscanf(p, "%d/%d%n", &a, &m, &k) == 2) &&
                   !p[k] && p != str) {
            note_a = note_b = a, note_n = m;
        }
    }
    const char *mean = strstr(all, "mean of ");
    int heads = 0;
    if (!mean || sscanf(mean, "mean of %d heads", &heads) != 1 || heads < 1) return;
    /* the thumbnails: square heatmaps no larger than the chosen head's matrix (the largest) */
    double big = 0, small = 1e9;
    int nsq = 0;
    for (size_t i = 0; i < s->n; i++) {
        const scene_item *it = &s->items[i];
        if (it->kind != SCENE_HEATMAP || it->u.heat.rows != it->u.heat.cols) continue;
        nsq++;
        big = fmax(big, it->u.heat.w);
        small = fmin(small, it->u.heat.w);
    }
    for (int i = 1; i < nl; i++)
        if (labels[i] != labels[i - 1] + 1) {
            snprintf(why, n, "the heads shown are not consecutive (h%d after h%d)", labels[i],
                     labels[i - 1]);
            return;
        }
    if (nl > 0 && nsq > nl && small < 1.5 * t->text_h - 1e-6) {
        snprintf(why, n, "a head's thumbnail is %.0f units wide, under 1.5 lines (%.0f)", small,
                 1.5 * t->text_h);
        return;
    }
    if (nl > 0 && nl < heads &&
        (note_n != heads || note_a != labels[0] || note_b != labels[nl - 1]))
        snprintf(why, n, "%d of %d heads shown (h%d..) and no line says which (note %d-%d of %d)",
                 nl, heads, labels[0], note_a, note_b, note_n);
    else if (nl == heads && note_n >= 0)
        snprintf(why, n, "every head shown, yet a note says %d-%d of %d", note_a, note_b, note_n);
}

/* The box a text item covers on t. */
static void text_box(const scene_target *t, const scene_item *it, double *x0, double *y0, double *w,
                     double *h)
{
    const char *str = it->u.text.str;
    *w = it->flags & SCENE_BOLD ? scene_text_width_bold(t, str, it->u.text.size)
                                : scene_text_width(t, str, it->u.text.size);
    *h = t->text_h * it->u.text.size;
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

/* Two texts written over each other in a pixel front end (their boxes overlapping by more than
 * a character's width and a fifth of the smaller one's height): writes why when why is empty. */
static void check_overlap(const scene *s, const scene_target *t, char *why, size_t n)
{
    if (why[0] || t->cells) return;
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

/* Text written over data in a pixel front end: a text box that crosses the edge of a heatmap
 * (a matrix, a colourbar) or of a data bar by more than a pixel each way (attention's next-token
 * list ran under the colourbar at a paper column). A label wholly inside a heatmap (the sinks
 * view's cell values) is the figure's own. Writes why when why is empty. */
static void check_on_data(const scene *s, const scene_target *t, char *why, size_t n)
{
    if (why[0] || t->cells) return;
    for (size_t i = 0; i < s->n && !why[0]; i++) {
        const scene_item *a = &s->items[i];
        /* vertical text is the axes' own (token labels, axis names), which fig_axes_draw puts
         * outside the plot; text_box's anchors are not the rotated text's */
        if (a->kind != SCENE_TEXT || !a->u.text.str[0] || (a->u.text.anchor & SCENE_VERTICAL))
            continue;
        double ax, ay, aw, ah;
        text_box(t, a, &ax, &ay, &aw, &ah);
        /* the glyphs' ink, not the line's leading */
        ay += 0.15 * ah;
        ah *= 0.7;
        for (size_t j = 0; j < s->n && !why[0]; j++) {
            const scene_item *b = &s->items[j];
            double bx, by, bw, bh;
            if (b->kind == SCENE_HEATMAP) {
                bx = b->u.heat.x, by = b->u.heat.y, bw = b->u.heat.w, bh = b->u.heat.h;
            } else if (b->kind == SCENE_RECT && (b->flags & (SCENE_BAR | SCENE_HBAR))) {
                bx = b->u.rect.x, by = b->u.rect.y, bw = b->u.rect.w, bh = b->u.rect.h;
            } else {
                continue;
            }
            double ox = fmin(ax + aw, bx + bw) - fmax(ax, bx);
            double oy = fmin(ay + ah, by + bh) - fmax(ay, by);
            int inside = b->kind == SCENE_HEATMAP && ax >= bx - 1 && ay >= by - 1 &&
                         ax + aw <= bx + bw + 1 && ay + ah <= by + bh + 1;
            if (ox > 1 && oy > 1 && !inside)
                snprintf(why, n,
                         "\"%s\" (%.0f..%.0f, %.0f..%.0f) runs over a %s at (%.0f, %.0f) %.0fx%.0f",
                         a->u.text.str, ax, ax + aw, ay, ay + ah,
                         b->kind == SCENE_HEATMAP ? "heatmap" : "bar", bx, by, bw, bh);
        }
    }
}

/* PELAB_LAYOUT_DUMP=DIR writes each case for a person to look at: PNG for pixels, the cells as
 * text for the terminal. */
static void dump_case(const scene *s, const char *dir, const char *what)
{
    char path[1024], name[128];
    snprintf(name, sizeof name, "%s", what);
    for (char *p = name; *p; p++)
        if (*p == ' ' || *p == '%') *p = '_';
    if (s->width < 400) { /* a terminal */
        cellgrid g;
        if (cellgrid_init(&g, (int)s->width, (int)(s->height / 2), 0) < 0) return;
        cellgrid_render(&g, s);
        char *txt = cellgrid_dump(&g, 0);
        snprintf(path, sizeof path, "%s/%s.txt", dir, name);
        FILE *f = fopen(path, "w");
        if (f && txt) fputs(txt, f);
        if (f) fclose(f);
        free(txt);
        cellgrid_free(&g);
        return;
    }
    snprintf(path, sizeof path, "%s/%s.png", dir, name);
    raster_export_opts o = {96, NULL, 0, 1, 1, 0};
    char err[256];
    raster_export(s, path, &o, err, sizeof err);
}

/* The explorer's frame as the terminal or the window draws it (the window with its panel). */
static void frame(app_explorer *x, scene *s, const scene_target *t, front_end fe)
{
    if (fe == FE_WINDOW)
        app_gui_frame(x, s, t);
    else
        app_explorer_frame(x, s, t);
}

/* The `?` help in both front ends, from 60x20 up: nothing cut, nothing outside, and paging
 * reaches the last entry. */
static void check_help(scene *s, const char *dump)
{
    static const size_case help_cases[] = {
        {FE_TERMINAL, 60, 20, 1},  {FE_TERMINAL, 80, 24, 1},  {FE_TERMINAL, 120, 40, 1},
        {FE_TERMINAL, 200, 60, 1}, {FE_WINDOW, 1024, 640, 1}, {FE_WINDOW, 1024, 640, 2},
        {FE_WINDOW, 1280, 800, 1}, {FE_WINDOW, 1280, 800, 2}, {FE_WINDOW, 1920, 1080, 2},
    };
    for (size_t v = 0; v < app_view_count(); v++)
        for (size_t k = 0; k < sizeof help_cases / sizeof help_cases[0]; k++) {
            const size_case *c = &help_cases[k];
            app_state st;
            app_state_default(&st);
            st.view = (int)v;
            st.zoom = c->zoom;
            app_explorer *x = calloc(1, sizeof *x);
            app_explorer_init(x, &st, c->fe == FE_WINDOW);
            scene_target t = c->fe == FE_TERMINAL
                                 ? cellgrid_target(c->w, c->h)
                                 : raster_target(c->w, c->h, raster_font_px(c->w, c->h, c->zoom));
            /* the frame without the help first: what the overlay adds starts where the two
             * scenes part (the view under it is checked by the cases above) */
            frame(x, s, &t, c->fe);
            unsigned cut0 = s->n_cut;
            size_t n0 = s->n;
            scene_item *items0 = malloc(n0 * sizeof *items0 + 1);
            if (items0) memcpy(items0, s->items, n0 * sizeof *items0);
            ui_event e = {0};
            e.type = UI_EV_KEY;
            e.key = '?';
            app_explorer_event(x, &e);
            frame(x, s, &t, c->fe);
            size_t from = 0;
            while (items0 && from < n0 && from < s->n && items0[from].kind == s->items[from].kind &&
                   items0[from].color == s->items[from].color)
                from++;
            free(items0);
            char why[600], what[96];
            check_text(s, &t, from, why, sizeof why);
            snprintf(what, sizeof what, "help %s %s %dx%d%s", app_view_at(v)->name, fe_name[c->fe],
                     c->w, c->h, c->zoom != 1 ? " zoom 200%" : "");
            int first_cut = (int)(s->n_cut - cut0);
            /* page to the end: the last entry's text shows */
            for (int i = 0; i < 40; i++) {
                e.key = UI_KEY_PGDN;
                app_explorer_event(x, &e);
            }
            frame(x, s, &t, c->fe);
            int last_shown = 0;
            for (size_t i = 0; i < s->n; i++)
                if (s->items[i].kind == SCENE_TEXT && strcmp(s->items[i].u.text.str, "mouse") == 0)
                    last_shown = 1;
            TAP_OK(x->mode == APP_MODE_HELP && first_cut == 0 && !why[0] && last_shown,
                   "%s: fits, nothing cut%s%s, paging reaches the last entry (%s)", what,
                   why[0] ? "; " : "", why, last_shown ? "shown" : "not shown");
            if (dump && v == 2) dump_case(s, dump, what);
            app_explorer_free(x);
            free(x);
        }
}

/* One case: the view in state (view, variant) at size c, checked and reported. */
typedef struct variant {
    const char *view, *name;
    int split, scale;
    double rope_base;
    const char *model; /* NULL: the default model */
    int part;          /* the table view's --part */
    const char *set;   /* "option=value" besides, or NULL */
} variant;

static void run_case_st(scene *s, size_t v, const variant *var, const app_state *given,
                        const char *label, const size_case *c, const char *dump)
{
    const char *name = app_view_at(v)->name;
    app_state st;
    if (given)
        st = *given;
    else
        app_state_default(&st);
    st.view = (int)v;
    st.zoom = c->zoom;
    if (var) {
        st.attn.split = var->split;
        st.attn.attn_scale = (app_attn_scale)var->scale;
        st.attn.rope_base = var->rope_base;
        if (var->model) snprintf(st.attn.model_name, sizeof st.attn.model_name, "%s", var->model);
        st.attn.table_part = var->part;
        char serr[256] = "";
        if (var->set) {
            char opt[64];
            const char *eq = strchr(var->set, '=');
            snprintf(opt, sizeof opt, "%.*s", (int)(eq - var->set), var->set);
            const app_option *o = app_option_find(opt);
            if (!o || app_option_set(&st, o, eq + 1, serr, sizeof serr) < 0)
                TAP_OK(0, "%s: --%s (%s)", name, var->set, serr);
        }
    }
    app_explorer *x = calloc(1, sizeof *x);
    app_explorer_init(x, &st, c->fe == FE_WINDOW);
    scene_target t;
    if (c->fe == FE_TERMINAL)
        t = cellgrid_target(c->w, c->h);
    else
        t = raster_target(c->w, c->h, raster_font_px(c->w, c->h, c->zoom));
    char err[512] = "";
    int ok;
    if (c->fe == FE_EXPORT) {
        /* as pelab export builds it: no cursor, no hints naming options to try */
        x->st.figure = 1;
        x->st.cursor_on = 0;
        scene_reset(s, t.width, t.height, 0xffffff);
        ok = app_view_build(&x->ctx[v], &x->st, s, &t, err, sizeof err) == 0;
    } else {
        frame(x, s, &t, c->fe);
        ok = x->view_error[0] == '\0';
        snprintf(err, sizeof err, "%s", x->view_error);
    }
    char what[200];
    snprintf(what, sizeof what, "%s%s%s %s %dx%d", label ? label : name, var ? " " : "",
             var ? var->name : "", fe_name[c->fe], c->w, c->h);
    if (c->zoom != 1) {
        size_t u = strlen(what);
        snprintf(what + u, sizeof what - u, " zoom %.0f%%", c->zoom * 100);
    }
    char why[600];
    check_text(s, &t, 0, why, sizeof why);
    char main_why[200];
    check_main(s, &t, c->fe == FE_EXPORT, main_why, sizeof main_why);
    if (!why[0]) snprintf(why, sizeof why, "%s", main_why);
    /* bars at least the thinnest the view allows at the text size it drew at (under the
     * projector zoom it may step its text down to give the data room, views.c) */
    scene_target bt = t;
    double k = x->ctx[v].text_k;
    if (!t.cells && k > 0 && k < 1) {
        bt.text_h *= k;
        bt.char_w *= k;
    }
    check_bars(s, &bt, why, sizeof why);
    check_overlap(s, &t, why, sizeof why);
    check_on_data(s, &t, why, sizeof why);
    /* query x key matrices with square cells (xl's four drew as 4:1 strips at a paper column,
     * t5's 65x115 at 2.2x3.5in); not yet similarity and the table view, whose matrices fill
     * their panel */
    int qk_view = !strcmp(name, "attention") || !strcmp(name, "compare") || !strcmp(name, "xl") ||
                  !strcmp(name, "alibi") || !strcmp(name, "t5");
    if (qk_view && c->fe != FE_TERMINAL) check_square(s, why, sizeof why);
    if (!strcmp(name, "attention") && c->fe != FE_TERMINAL) check_heads(s, &bt, why, sizeof why);
    /* decay and resolution at a paper column (issue 26): their legends outside the plot in
     * short names, so the plot keeps over a third of the figure (it was 31% under a legend
     * strip of three rows) */
    if ((!strcmp(name, "decay") || !strcmp(name, "resolution")) && c->fe == FE_EXPORT &&
        c->w == 336 && c->h == 211 && !var && !given && !why[0] && s->main_h < 0.35 * t.height)
        snprintf(why, sizeof why, "the plot is %.0f of the %.0f units' height, under 35%%",
                 s->main_h, t.height);
    TAP_OK(ok && s->n_cut == 0 && !why[0], "%s: nothing shortened, main panel there%s%s%s%s%s",
           what, s->n_cut ? " (cut: " : "", s->n_cut ? s->cut_example : "", s->n_cut ? ")" : "",
           why[0] ? "; " : "", ok ? why : err);
    if (dump) dump_case(s, dump, what);
    app_explorer_free(x);
    free(x);
}

static void run_case(scene *s, size_t v, const variant *var, const size_case *c, const char *dump)
{
    run_case_st(s, v, var, NULL, NULL, c, dump);
}

/* Every slide of every shipped lesson as its figure exports (the handout's figure, `pelab
 * export` of the slide's view line) at the sizes of issue 26 (slide_case). */
typedef struct slide_run {
    scene *s;
    const char *dump;
} slide_run;

static void check_slide(const app_state *st, const char *label, void *user)
{
    slide_run *r = user;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        if (slide_case(&cases[k]))
            run_case_st(r->s, (size_t)st->view, NULL, st, label, &cases[k], r->dump);
}

/* The attention views' other layouts: the content/position split, a base experiment (the gauge
 * panel), the log and no-first colour scales. */
static const variant variants[] = {
    {"attention", "split", 1, APP_SCALE_LINEAR, 0, NULL, 0, NULL},
    {"attention", "base-experiment", 0, APP_SCALE_LINEAR, 500, NULL, 0, NULL},
    {"attention", "nofirst", 0, APP_SCALE_NOFIRST, 0, NULL, 0, NULL},
    {"compare", "log", 0, APP_SCALE_LOG, 0, NULL, 0, NULL},
    /* the table view of every kind of position parameters (issue 23), and its single panels */
    {"table", "learned", 0, 0, 0, "learned", 0, NULL},
    {"table", "learned-pca", 0, 0, 0, "learned", 3, NULL},
    {"table", "learned-curve", 0, 0, 0, "learned", 4, NULL},
    {"table", "sinusoidal", 0, 0, 0, "sinusoidal", 0, NULL},
    {"table", "t5", 0, 0, 0, "t5", 0, NULL},
    {"table", "alibi", 0, 0, 0, "alibi", 0, NULL},
    /* the measure views' other layouts, and similarity of the trained learned table */
    {"usage", "massive", 0, 0, 0, NULL, 0, "show=massive"},
    {"distance", "per-head", 0, 0, 0, NULL, 0, "per-head=on"},
    {"distance", "by-position", 0, 0, 0, NULL, 0, "by=position"},
    {"sinks", "models", 0, 0, 0, NULL, 0, "models=shipped"},
    {"similarity", "learned", 0, 0, 0, NULL, 0, "pe=learned"},
    {"heatmap", "learned", 0, 0, 0, NULL, 0, "pe=learned"},
};

int main(void)
{
    const char *dump = getenv("PELAB_LAYOUT_DUMP");
    scene s;
    scene_init(&s, 1, 1, 0);
    const char *only = getenv("PELAB_LAYOUT_ONLY"); /* one view, when looking at dumps */
    for (size_t v = 0; v < app_view_count(); v++)
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
            if (!only || !strcmp(only, app_view_at(v)->name))
                run_case(&s, v, NULL, &cases[k], dump);
    /* issue 27's projector zoom, 175%, for the model views (the window sizes the lessons are
     * held to): square matrices, every bar, the next-token list, nothing cut */
    static const size_case projector[] = {
        {FE_WINDOW, 1024, 768, 1.75},
        {FE_WINDOW, 1280, 800, 1.75},
        {FE_WINDOW, 1024, 640, 1.75},
    };
    for (size_t v = 0; v < app_view_count(); v++)
        if ((!strcmp(app_view_at(v)->name, "attention") ||
             !strcmp(app_view_at(v)->name, "compare")) &&
            (!only || !strcmp(only, app_view_at(v)->name)))
            for (size_t k = 0; k < sizeof projector / sizeof projector[0]; k++)
                run_case(&s, v, NULL, &projector[k], dump);
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
        for (size_t v = 0; v < app_view_count(); v++)
            if (!strcmp(app_view_at(v)->name, variants[i].view) &&
                (!only || !strcmp(only, variants[i].view)))
                for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
                    run_case(&s, v, &variants[i], &cases[k], dump);
    for_each_slide(check_slide, &(slide_run){&s, dump});
    check_help(&s, dump);
    scene_free(&s);
    return tap_done();
}
