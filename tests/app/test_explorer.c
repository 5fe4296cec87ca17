/* test_explorer.c: the explorer driven by pelab's own events, no terminal: every view builds at
 * several sizes on both media, keys do what the help says, the ':' line applies and refuses,
 * the status line shows the parameters, and a tiny terminal gets a notice instead of garbage. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cellgrid.h"
#include "explorer.h"
#include "frontend.h"
#include "views.h"
#include "options.h"
#include "raster.h"
#include "tap.h"

static ui_event key(uint32_t k)
{
    ui_event e = {0};
    e.type = UI_EV_KEY;
    e.key = k;
    return e;
}

static void type(app_explorer *x, const char *s)
{
    for (; *s; s++) {
        ui_event e = key((unsigned char)*s);
        app_explorer_event(x, &e);
    }
}

/* The text of a grid row as UTF-8-free ASCII (non-ASCII cells become '#'). */
static void row_text(cellgrid *g, int row, char *buf, size_t n)
{
    size_t k = 0;
    for (int c = 0; c < g->cols && k + 1 < n; c++) {
        uint32_t ch = cellgrid_at(g, c, row)->ch;
        buf[k++] = ch < 128 ? (char)ch : '#';
    }
    buf[k] = '\0';
}

static int grid_contains(cellgrid *g, const char *needle)
{
    char line[1024];
    for (int r = 0; r < g->rows; r++) {
        row_text(g, r, line, sizeof line);
        if (strstr(line, needle)) return 1;
    }
    return 0;
}

static app_explorer *new_explorer(int gui)
{
    app_state st;
    app_state_default(&st);
    app_explorer *x = calloc(1, sizeof *x);
    app_explorer_init(x, &st, gui);
    return x;
}

static void frame_cells(app_explorer *x, scene *s, cellgrid *g)
{
    scene_target t = cellgrid_target(g->cols, g->rows);
    app_explorer_frame(x, s, &t);
    cellgrid_render(g, s);
}

/* The labels a view's status line should carry: its options list, in order, through the
 * table (the test reads the list itself, not the explorer's reading of it). */
static size_t declared(const app_view *v, const app_state *st, const app_option **out, size_t max)
{
    size_t n = 0;
    char name[64];
    for (const char *p = v->options; p && *p && n < max;) {
        p += strspn(p, " ");
        size_t w = strcspn(p, " ");
        /* copied by hand: gcc -O2 with ASan misreads a %.*s of a pointer that moves */
        size_t cut = w < sizeof name ? w : sizeof name - 1;
        memcpy(name, p, cut);
        name[cut] = '\0';
        p += w;
        const app_option *o = w ? app_option_find(name) : NULL;
        if (w && (!o || !o->applies || o->applies(st))) out[n++] = o;
    }
    return n;
}

/* The status line's labels: each " label=" after the "[n/N view]" prefix (quoted values and
 * an automatic value's parenthesis skipped whole). */
static size_t status_labels(const char *line, char labels[][32], size_t max)
{
    size_t n = 0;
    const char *p = strchr(line, ']');
    while (p && *p && n < max) {
        while (*p == ' ' || *p == ']') p++;
        const char *eq = strchr(p, '=');
        if (!eq) break;
        snprintf(labels[n++], 32, "%.*s", (int)(eq - p), p);
        p = eq + 1;
        if (*p == '"') {
            p = strchr(p + 1, '"');
            if (p) p++;
        } else {
            p += strcspn(p, " ");
        }
        /* an automatic value's "m=3 (auto)": the parenthesis belongs to the value */
        if (p && p[0] == ' ' && p[1] == '(') {
            p = strchr(p, ')');
            if (p) p++;
        }
    }
    return n;
}

/* Keys the explorer keeps for itself in every view (explorer.c's table). */
static const char global_keys[] = "q123456789hjklHJKL:se+-f0?";

/* Every view: the status line shows exactly the options it declares, in its order; `?` lists its
 * own keys first; the keys of its options collide with nothing else in that view. */
static void check_surfaces(scene *s)
{
    cellgrid g;
    cellgrid_init(&g, 200, 50, 0);
    int status_ok = 0, help_ok = 0, keys_ok = 0, names_ok = 0;
    for (size_t v = 0; v < app_view_count(); v++) {
        const app_view *vw = app_view_at(v);
        app_explorer *x = new_explorer(0);
        x->st.view = (int)v;
        const app_option *want[APP_MAX_OPTIONS];
        size_t nw = declared(vw, &x->st, want, APP_MAX_OPTIONS), unknown = 0;
        for (size_t i = 0; i < nw; i++) unknown += want[i] == NULL;
        names_ok += unknown == 0 && nw > 0;
        if (unknown) {
            TAP_OK(0, "view %s declares an option the table does not have", vw->name);
            continue;
        }
        char line[1024], labels[64][32];
        app_explorer_status(x, line, sizeof line);
        size_t nl = status_labels(line, labels, 64);
        int same = nl == nw;
        for (size_t i = 0; same && i < nw; i++)
            same = strcmp(labels[i], want[i]->label ? want[i]->label : want[i]->name) == 0;
        status_ok += same;
        if (!same) TAP_OK(0, "view %s: the status line has other options: %s", vw->name, line);
        /* the terminal shows it: its first label is on screen */
        frame_cells(x, s, &g);
        char first[48];
        snprintf(first, sizeof first, "%s=", labels[0]);
        if (!grid_contains(&g, first)) TAP_OK(0, "view %s: '%s' not on screen", vw->name, first);

        /* ? : the view's keys first, then option keys of its options only */
        app_key_help help[APP_HELP_MAX];
        size_t nh = app_explorer_help(x, help, APP_HELP_MAX), own = 0, labelled = 0;
        for (const app_view_key *k = vw->keys; k && k->fn; k++) labelled += k->label != NULL;
        while (own < nh && help[own].scope == APP_HELP_VIEW) own++;
        int order = own == labelled;
        for (size_t i = own; i < nh; i++) order &= help[i].scope != APP_HELP_VIEW;
        ui_event e = key('?');
        app_explorer_event(x, &e);
        frame_cells(x, s, &g);
        if (own > 0) order &= grid_contains(&g, help[0].keys);
        help_ok += order;
        if (!order) TAP_OK(0, "view %s: ? does not list its %zu keys first", vw->name, labelled);
        e = key(UI_KEY_ESC);
        app_explorer_event(x, &e);

        /* option keys: one meaning per key in this view */
        char used[256] = {0};
        int clash = 0;
        for (const char *c = global_keys; *c; c++) used[(unsigned char)*c] = 1;
        for (size_t i = 0; i < app_option_count(); i++) {
            const app_option *o = app_option_at(i);
            if (!o->keys || !(o->everywhere || app_explorer_uses(x, o))) continue;
            for (const char *c = o->keys; *c; c++) {
                int shadowed = 0;
                for (const app_view_key *k = vw->keys; k && k->fn; k++)
                    shadowed |= k->key == (unsigned char)*c;
                if (!shadowed && used[(unsigned char)*c]++) {
                    clash = 1;
                    TAP_OK(0, "view %s: key '%c' of %s is taken twice", vw->name, *c, o->name);
                }
            }
        }
        keys_ok += !clash;
        app_explorer_free(x);
        free(x);
    }
    size_t nv = app_view_count();
    TAP_OK(names_ok == (int)nv, "every view declares options the table has (%d of %zu)", names_ok,
           nv);
    TAP_OK(status_ok == (int)nv, "every view's status line shows exactly its options (%d of %zu)",
           status_ok, nv);
    TAP_OK(help_ok == (int)nv, "every view's ? lists its own keys first (%d of %zu)", help_ok, nv);
    TAP_OK(keys_ok == (int)nv, "no key means two things in any view (%d of %zu)", keys_ok, nv);

    /* the same key follows the view: '>' adds a head in alibi and shifts in attention */
    app_explorer *x = new_explorer(0);
    x->st.view = app_view_find("alibi");
    ui_event e = key('>');
    app_explorer_event(x, &e);
    TAP_OK(x->st.p.heads == 9 && x->st.attn.shift == 0, "'>' in alibi: heads 8 -> %d",
           x->st.p.heads);
    x->st.view = app_view_find("heatmap");
    app_explorer_event(x, &e);
    TAP_OK(x->st.p.heads == 9 && x->message_error, "'>' in heatmap (no heads there) says so: %s",
           x->message);
    /* the position experiments follow the model: the rope base with a rope model, the ALiBi
     * slopes with an alibi one, both when compare shows the two */
    char line[1024];
    x->st.view = app_view_find("attention");
    app_explorer_status(x, line, sizeof line);
    int rope_only = strstr(line, "rope-base=") && !strstr(line, "alibi-scale=");
    snprintf(x->st.attn.model_name, sizeof x->st.attn.model_name, "alibi");
    app_explorer_status(x, line, sizeof line);
    int alibi_only = !strstr(line, "rope-base=") && strstr(line, "alibi-scale=");
    x->st.view = app_view_find("compare");
    snprintf(x->st.attn.compare, sizeof x->st.attn.compare, "rope");
    app_explorer_status(x, line, sizeof line);
    int both = strstr(line, "rope-base=") && strstr(line, "alibi-scale=");
    TAP_OK(rope_only && alibi_only && both,
           "the rope base shows with a rope model, the ALiBi slopes with an alibi one");
    snprintf(x->st.attn.model_name, sizeof x->st.attn.model_name, "rope");
    snprintf(x->st.attn.compare, sizeof x->st.attn.compare, "alibi");
    /* ':' completion offers the view's options first */
    x->st.view = app_view_find("rope");
    e = key(':');
    app_explorer_event(x, &e);
    e = key(UI_KEY_TAB);
    app_explorer_event(x, &e);
    TAP_OK(strncmp(x->message, "dim len base pairing", 20) == 0,
           "':' then Tab lists the rope view's options first: %.60s", x->message);
    e = key(UI_KEY_ESC);
    app_explorer_event(x, &e);
    app_explorer_free(x);
    free(x);
    cellgrid_free(&g);
}

/* A figure at a small pixel size, as a hash of its pixels (the view alone, no status line). */
static unsigned long long figure_hash(app_view_ctx *c, const app_state *st, scene *s, int *ok)
{
    enum { W = 480, H = 300 };
    static uint32_t px[W * H];
    scene_target t = raster_target(W, H, raster_font_px(W, H, 1));
    char err[512];
    *ok = app_view_build(c, st, s, &t, err, sizeof err) == 0 &&
          raster_draw_argb(s, px, W, H, W * 4, 0) == 0;
    unsigned long long h = 1469598103934665603ull;
    for (size_t i = 0; i < (size_t)W * H; i++) h = (h ^ px[i]) * 1099511628211ull;
    return h;
}

/* A value of o other than the current one that the state accepts: the next choice, or the
 * number doubled (1 for 0, 5 for -1), or halved. */
static int other_value(const app_state *st, const app_option *o, char *val, size_t n)
{
    char cur[1100], err[512];
    app_option_get(st, o, cur, sizeof cur);
    const char *ch[APP_MAX_OPTIONS];
    size_t nc = app_option_choices(o, ch, APP_MAX_OPTIONS);
    static const char *const texts[][2] = {
        {"head", "1"}, {"prompt", "the fox ran to the river"}, {"rope-base", "50000"}};
    const char *cands[8];
    size_t k = 0;
    char num[3][64];
    for (size_t i = 0; i < nc && k < 8; i++)
        if (strcmp(ch[i], cur) != 0) cands[k++] = ch[i];
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (strcmp(texts[i][0], o->name) == 0) cands[k++] = texts[i][1];
    if (o->kind == APP_OPT_INT || o->kind == APP_OPT_DOUBLE) {
        double v = atof(cur);
        snprintf(num[0], sizeof num[0], "%.10g", v == 0 ? 1 : v < 0 ? 5 : v * 2);
        snprintf(num[1], sizeof num[1], "%.10g", o->kind == APP_OPT_INT ? floor(v / 2) : v / 2);
        cands[k++] = num[0];
        cands[k++] = num[1];
    }
    for (size_t i = 0; i < k; i++) {
        app_state trial = *st;
        if (app_option_set(&trial, o, cands[i], err, sizeof err) == 0 &&
            app_state_validate(&trial, err, sizeof err) == 0) {
            snprintf(val, n, "%s", cands[i]);
            return 0;
        }
    }
    return -1;
}

/* Every view declares what its figure depends on: an option it does not list, changed from the
 * default, leaves the figure's pixels as they were. */
static void check_declared_dependencies(scene *s)
{
    int views_ok = 0;
    for (size_t v = 0; v < app_view_count(); v++) {
        const app_view *vw = app_view_at(v);
        app_state st;
        app_state_default(&st);
        st.view = (int)v;
        if (strcmp(vw->name, "rope") == 0) st.enc = pe_encoding_find("rope");
        app_view_ctx c;
        memset(&c, 0, sizeof c);
        int ok;
        unsigned long long base = figure_hash(&c, &st, s, &ok);
        if (!ok) {
            TAP_OK(0, "view %s builds at its defaults", vw->name);
            app_view_ctx_free(&c);
            continue;
        }
        char undeclared[1024] = "";
        for (size_t i = 0; i < app_option_count(); i++) {
            const app_option *o = app_option_at(i);
            char val[1100], err[512];
            if (o->everywhere || app_view_uses(vw, o->name) || other_value(&st, o, val, sizeof val))
                continue;
            app_state trial = st;
            app_option_set(&trial, o, val, err, sizeof err);
            unsigned long long h = figure_hash(&c, &trial, s, &ok);
            if (ok && h != base && strlen(undeclared) + strlen(o->name) + 2 < sizeof undeclared) {
                strcat(undeclared, " ");
                strcat(undeclared, o->name);
            }
        }
        views_ok += undeclared[0] == '\0';
        if (undeclared[0])
            TAP_OK(0, "view %s depends on options it does not declare:%s", vw->name, undeclared);
        app_view_ctx_free(&c);
    }
    TAP_OK(views_ok == (int)app_view_count(),
           "every view declares every option its figure depends on (%d of %zu)", views_ok,
           app_view_count());
}

/* The `?` box keeps a blank cell between its border and its longest line on both sides, in
 * UTF-8 and ASCII, at every terminal size from 60x20: no line touches the border. */
static void check_help_margin(scene *s)
{
    static const int sizes[][2] = {{60, 20}, {80, 24}, {120, 40}, {200, 60}};
    for (int ascii = 0; ascii < 2; ascii++)
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
            int bad = 0, longest = 0, checked = 0;
            char where[160] = "";
            for (size_t v = 0; v < app_view_count(); v++) {
                app_explorer *x = new_explorer(0);
                x->st.view = (int)v;
                cellgrid g;
                cellgrid_init(&g, sizes[k][0], sizes[k][1], ascii);
                ui_event e = key('?');
                app_explorer_event(x, &e);
                frame_cells(x, s, &g);
                /* the box: the last stroked rectangle (the overlay's border), then its text */
                size_t box = s->n;
                for (size_t i = 0; i < s->n; i++)
                    if (s->items[i].kind == SCENE_RECT && !(s->items[i].flags & SCENE_FILL))
                        box = i;
                if (box == s->n) {
                    bad++;
                    snprintf(where, sizeof where, "%s: no box", app_view_at(v)->name);
                } else {
                    const scene_item *b = &s->items[box];
                    int left = (int)floor(b->u.rect.x),
                        right = (int)ceil(b->u.rect.x + b->u.rect.w) - 1;
                    int top = (int)floor(b->u.rect.y / 2),
                        bottom = (int)ceil((b->u.rect.y + b->u.rect.h) / 2) - 1;
                    /* up to the status band's fill, drawn after the overlay */
                    for (size_t i = box + 1; i < s->n && s->items[i].kind != SCENE_RECT; i++) {
                        const scene_item *it = &s->items[i];
                        if (it->kind != SCENE_TEXT) continue;
                        int c0 = (int)lround(it->u.text.x), len = 0;
                        for (const char *p = it->u.text.str; *p; p++)
                            len += ((unsigned char)*p & 0xc0) != 0x80;
                        int c1 = c0 + len - 1;
                        if (c1 - c0 + 1 > longest) longest = c1 - c0 + 1;
                        checked++;
                        if (c0 < left + 2 || c1 > right - 2) {
                            bad++;
                            snprintf(where, sizeof where,
                                     "%s: '%.40s' in columns %d-%d, border %d and %d",
                                     app_view_at(v)->name, it->u.text.str, c0, c1, left, right);
                        }
                    }
                    /* and on the screen: the cells next to the border are blank inside the box */
                    for (int r = top + 1; r < bottom; r++)
                        if (cellgrid_at(&g, left + 1, r)->ch != ' ' ||
                            cellgrid_at(&g, right - 1, r)->ch != ' ') {
                            bad++;
                            snprintf(where, sizeof where, "%s: row %d touches the border",
                                     app_view_at(v)->name, r);
                        }
                }
                cellgrid_free(&g);
                app_explorer_free(x);
                free(x);
            }
            TAP_OK(bad == 0 && checked > 0,
                   "? help at %dx%d%s: a blank cell between the border and every line (%d lines, "
                   "the longest %d cells)%s%s",
                   sizes[k][0], sizes[k][1], ascii ? " ASCII" : "", checked, longest,
                   bad ? "; " : "", where);
        }
}

/* The status line holds only the options that act as the state stands, and its readouts say what
 * the figure draws (issue 27): the scaling knobs only with a method that reads them (f and L0
 * showed with scaling none), m's automatic value as the number the title gives, the extension
 * view's own measure rather than the decay view's curves. */
static void check_presenter_readouts(scene *s)
{
    cellgrid g;
    cellgrid_init(&g, 200, 30, 0);
    char line[1024];
    static const struct {
        const char *view, *scaling, *want, *absent;
    } rows[] = {
        {"rope", "none", "m=3 (auto) n=0", " f="},
        {"rope", "none", "scaling=none", " L0="},
        {"rope", "none", "rotary=1", "seq-len="},
        {"rope", "none", "rotary=1", "attn-factor="},
        {"rope", "yarn", "scaling=yarn f=4 L0=4096", "seq-len="},
        {"rope", "dynamic", "f=4 L0=4096 seq-len=auto", "attn-factor="},
        {"rope", "linear", "scaling=linear f=4", " L0="},
        {"xpos", "none", "scaling=none", " f="},
        {"decay", "none", "m=128 (auto)", " L0="},
        {"frequencies", "none", "scaling=none L0=4096", "beta-fast="},
        {"frequencies", "none", "L0=4096", "target="},
        {"frequencies", "yarn", "beta-fast=32", "low-freq-factor="},
        {"frequencies", "llama3", "low-freq-factor=1 high-freq-factor=4", "beta-fast="},
        {"frequencies", "yarn", "target=16384 (auto)", "seq-len="},
        {"extension", "none", "f=4 L0=4096", "curves="},
        {"extension", "none", "measure=bound", "scaling="},
        {"resolution", "none", "beta-fast=32", "scaling="},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        app_explorer *x = new_explorer(0);
        x->st.view = app_view_find(rows[i].view);
        char msg[256];
        app_option_apply(&x->st, "scaling", rows[i].scaling, msg, sizeof msg);
        app_explorer_status(x, line, sizeof line);
        TAP_OK(strstr(line, rows[i].want) && !strstr(line, rows[i].absent),
               "%s with scaling %s: the status line has '%s', not '%s': %s", rows[i].view,
               rows[i].scaling, rows[i].want, rows[i].absent, line);
        app_explorer_free(x);
        free(x);
    }
    /* an attention factor given acts with any method, so it shows */
    app_explorer *x = new_explorer(0);
    x->st.view = app_view_find("rope");
    x->st.p.scaling.attention_factor = 1.5;
    app_explorer_status(x, line, sizeof line);
    TAP_OK(strstr(line, "attn-factor=1.5") != NULL, "an attention factor given shows: %s", line);
    x->st.p.scaling.attention_factor = 0;
    /* the window's sliders follow the same rows: rope with scaling none has none for f, L0 */
    app_explorer *w = new_explorer(1);
    w->st.view = x->st.view;
    scene_target pt = raster_target(1280, 800, raster_font_px(1280, 800, 1));
    app_gui_frame(w, s, &pt);
    int f_slider = 0, m_slider = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->items[i].kind == SCENE_TEXT) {
            f_slider += strncmp(s->items[i].u.text.str, "f = ", 4) == 0 ||
                        strncmp(s->items[i].u.text.str, "L0 = ", 5) == 0;
            m_slider += strcmp(s->items[i].u.text.str, "m = 3 (auto)") == 0;
        }
    TAP_OK(f_slider == 0 && m_slider == 1,
           "rope's sliders in the window: none for f or L0 with scaling none, and 'm = 3 (auto)' "
           "(%d, %d)",
           f_slider, m_slider);
    app_explorer_free(w);
    free(w);
    app_explorer_free(x);
    free(x);
    cellgrid_free(&g);
}

int main(void)
{
    scene s;
    scene_init(&s, 1, 1, 0);
    cellgrid g;
    cellgrid_init(&g, 120, 40, 0);

    /* every view builds without an error on a terminal and on pixels, at several sizes */
    static const int sizes[][2] = {{80, 24}, {120, 40}, {200, 60}};
    static const int px[][2] = {{640, 400}, {1000, 600}, {2560, 1600}};
    for (size_t v = 0; v < app_view_count(); v++) {
        for (int k = 0; k < 3; k++) {
            app_explorer *x = new_explorer(0);
            x->st.view = (int)v;
            if (strcmp(app_view_at(v)->name, "rope") == 0) x->st.enc = pe_encoding_find("rope");
            scene_target t = cellgrid_target(sizes[k][0], sizes[k][1]);
            app_explorer_frame(x, &s, &t);
            TAP_OK(x->view_error[0] == '\0', "view %s builds at %dx%d cells%s%s",
                   app_view_at(v)->name, sizes[k][0], sizes[k][1], x->view_error[0] ? ": " : "",
                   x->view_error);
            scene_target pt =
                raster_target(px[k][0], px[k][1], raster_font_px(px[k][0], px[k][1], 1));
            app_explorer_frame(x, &s, &pt);
            TAP_OK(x->view_error[0] == '\0' && s.n > 10, "view %s builds at %dx%d px (%zu items)",
                   app_view_at(v)->name, px[k][0], px[k][1], s.n);
            app_explorer_free(x);
            free(x);
        }
    }

    check_help_margin(&s);

    /* keys */
    app_explorer *x = new_explorer(0);
    frame_cells(x, &s, &g);
    TAP_OK(grid_contains(&g, "pe=sinusoidal") && grid_contains(&g, "d=128") &&
               grid_contains(&g, "base=10000"),
           "the status line shows the parameters in force");
    ui_event e = key('3');
    app_explorer_event(x, &e);
    TAP_OK(x->st.view == 2, "'3' switches to the third view (decay)");
    e = key(UI_KEY_TAB);
    app_explorer_event(x, &e);
    TAP_OK(x->st.view == 3, "Tab goes to the next view");
    e = key(UI_KEY_BTAB);
    app_explorer_event(x, &e);
    TAP_OK(x->st.view == 2, "Shift-Tab goes back");
    e = key('b');
    app_explorer_event(x, &e);
    TAP_CLOSE(x->st.p.base, 20000, 0, 1e-9, "'b' doubles the base");
    e = key('B');
    app_explorer_event(x, &e);
    app_explorer_event(x, &e);
    TAP_CLOSE(x->st.p.base, 5000, 0, 1e-9, "'B' halves it");
    e = key('d');
    app_explorer_event(x, &e);
    TAP_OK(x->st.p.dim == 256, "'d' doubles d");
    e = key('[');
    app_explorer_event(x, &e);
    TAP_OK(x->st.p.len == 128, "'[' halves L");

    /* the ':' line: exact values, aliases, refusal with the option's message */
    type(x, ":base 500000");
    e = key(UI_KEY_ENTER);
    app_explorer_event(x, &e);
    TAP_CLOSE(x->st.p.base, 500000, 0, 1e-9, ":base 500000 applies");
    type(x, ":d 64");
    app_explorer_event(x, &e);
    TAP_OK(x->st.p.dim == 64, ":d 64 applies through the alias");
    type(x, ":pe rope");
    app_explorer_event(x, &e);
    TAP_OK(x->st.enc == pe_encoding_find("rope"), ":pe rope switches the encoding");
    type(x, ":base 0.5");
    app_explorer_event(x, &e);
    TAP_OK(x->message_error && strstr(x->message, "--base 0.5") &&
               fabs(x->st.p.base - 500000) < 1e-9,
           "a bad :base is refused with a message naming it and the state is unchanged (%s)",
           x->message);
    type(x, ":dim 7");
    app_explorer_event(x, &e);
    TAP_OK(x->message_error && x->st.p.dim == 64, ":dim 7 (odd) is refused: %s", x->message);
    type(x, ":bsae 100");
    app_explorer_event(x, &e);
    TAP_OK(x->message_error && strstr(x->message, "base"), "a misspelt option suggests 'base': %s",
           x->message);
    /* completion */
    type(x, ":pair");
    e = key(UI_KEY_TAB);
    app_explorer_event(x, &e);
    TAP_OK(strcmp(x->cmd, "pairing ") == 0, "Tab completes the option name ('%s')", x->cmd);
    type(x, "h");
    app_explorer_event(x, &e);
    TAP_OK(strcmp(x->cmd, "pairing half") == 0, "Tab completes the value ('%s')", x->cmd);
    e = key(UI_KEY_ENTER);
    app_explorer_event(x, &e);
    TAP_OK(x->st.p.pairing == PE_PAIRING_HALF, "completed command applies");
    e = key(':');
    app_explorer_event(x, &e);
    e = key(UI_KEY_ESC);
    app_explorer_event(x, &e);
    TAP_OK(x->mode == APP_MODE_NORMAL, "Esc leaves the ':' line");

    /* help overlay */
    e = key('?');
    app_explorer_event(x, &e);
    frame_cells(x, &s, &g);
    TAP_OK(x->mode == APP_MODE_HELP && grid_contains(&g, "pelab keys") &&
               grid_contains(&g, "frequency base"),
           "? shows the key help");
    e = key(UI_KEY_ESC);
    app_explorer_event(x, &e);
    TAP_OK(x->mode == APP_MODE_NORMAL, "Esc closes the help");

    /* cursor readout on the heatmap */
    x->st.enc = pe_encoding_find("sinusoidal");
    x->st.p.dim = 8;
    x->st.p.base = 10000;
    x->st.p.layout = PE_LAYOUT_INTERLEAVED;
    x->st.view = 0;
    frame_cells(x, &s, &g);
    e = key(UI_KEY_RIGHT);
    app_explorer_event(x, &e); /* the first arrow turns the cursor on in the middle */
    x->st.cur_r = 1;
    x->st.cur_c = 0;
    frame_cells(x, &s, &g);
    TAP_OK(strstr(x->ctx[0].readout, "position 1") && strstr(x->ctx[0].readout, "+0.841471"),
           "the cursor reads PE[1][0] = sin(1) = 0.841471 (%s)", x->ctx[0].readout);
    TAP_OK(grid_contains(&g, "+0.841471"), "the readout is on screen");
    /* a click in the plot moves the cursor there */
    const fig_axes *a = &x->ctx[0].main;
    ui_event m = {0};
    m.type = UI_EV_MOUSE;
    m.mouse = UI_MOUSE_PRESS;
    m.button = 1;
    m.x = fig_x(a, 5.5);
    m.y = fig_y(a, 100.5);
    app_explorer_event(x, &m);
    TAP_OK(x->st.cur_c == 5 && x->st.cur_r == 100, "a click selects the cell under it (%d, %d)",
           x->st.cur_r, x->st.cur_c);

    /* RoPE: arrows move m and n, space animates */
    x->st.view = app_view_find("rope");
    x->st.pos = 3;
    x->st.pos_k = 1;
    e = key(UI_KEY_RIGHT);
    app_explorer_event(x, &e);
    TAP_OK(x->st.pos == 4, "Right moves m in the RoPE view");
    e = key(' ');
    app_explorer_event(x, &e);
    TAP_OK(app_explorer_animating(x), "space starts the animation");
    app_explorer_tick(x, 0.5);
    TAP_OK(x->st.pos == 6, "half a second moves m by 2 positions (m = %d)", x->st.pos);
    app_explorer_event(x, &e);
    TAP_OK(!app_explorer_animating(x), "space pauses");

    /* a tiny terminal: one notice, no crash; growing brings the view back */
    cellgrid small;
    cellgrid_init(&small, 20, 6, 0);
    frame_cells(x, &s, &small);
    TAP_OK(strstr(x->view_error, "too small") != NULL, "a 20x6 terminal gets a notice: %s",
           x->view_error);
    frame_cells(x, &s, &g);
    TAP_OK(x->view_error[0] == '\0', "growing it brings the view back");
    cellgrid_free(&small);

    /* the equivalent export command reproduces the state */
    app_state st2;
    app_state_default(&st2);
    char cmd[1024];
    app_export_command(&x->st, "out.png", cmd, sizeof cmd);
    TAP_OK(strstr(cmd, "pelab export rope") && strstr(cmd, "--pairing half") &&
               strstr(cmd, "--dim 8") && strstr(cmd, "-o out.png"),
           "e's command names the view and every changed option: %s", cmd);

    /* s and e name one figure: e's command carries the size s saves at (issue 11) */
    e = key('e');
    app_explorer_event(x, &e);
    TAP_OK(strstr(x->message, "--width 1200 --height 750 -o pelab-rope-") != NULL,
           "e shows the size s saves at: %s", x->message);

    check_surfaces(&s);
    check_declared_dependencies(&s);
    check_presenter_readouts(&s);

    e = key('q');
    app_explorer_event(x, &e);
    TAP_OK(x->quit, "q quits");
    ui_event qe = {0};
    qe.type = UI_EV_QUIT;
    app_explorer *y = new_explorer(0);
    app_explorer_event(y, &qe);
    TAP_OK(y->quit, "a QUIT event (signal, window closed) quits");
    app_explorer_free(y);
    free(y);

    app_explorer_free(x);
    free(x);
    cellgrid_free(&g);
    scene_free(&s);
    /* e also gives the --animate command; S records the view's animation as a GIF, in a
     * fresh folder */
    char tmp[4096], here[4096];
    const char *base = getenv("PELAB_BUILD");
    if (base && *base)
        snprintf(tmp, sizeof tmp, "%s/explorer-record.XXXXXX", base);
    else
        tap_tmp_path(tmp, sizeof tmp, "explorer-record.XXXXXX");
    if (mkdtemp(tmp) && getcwd(here, sizeof here) && chdir(tmp) == 0) {
        app_explorer *rx = new_explorer(0);
        rx->st.view = app_view_find("rope");
        rx->st.enc = pe_encoding_find("rope");
        type(rx, "e");
        TAP_OK(strstr(rx->message,
                      "animation: pelab export rope --pe rope --width 800 --height 500 "
                      "--animate pos=0:48:97 -o pelab-rope-1.gif") != NULL,
               "e in rope also shows the whole --animate command: %.300s", rx->message);
        type(rx, "S");
        FILE *fp = fopen("pelab-rope-1.gif", "rb");
        char sig[7] = "";
        if (fp) {
            if (fread(sig, 1, 6, fp) != 6) sig[0] = 0;
            fclose(fp);
        }
        TAP_OK(!rx->message_error &&
                   strncmp(rx->message, "recorded pelab-rope-1.gif (97 frames", 36) == 0 &&
                   strcmp(sig, "GIF89a") == 0,
               "S in rope records the spin as pelab-rope-1.gif: %.100s", rx->message);
        rx->st.view = app_view_find("decay");
        type(rx, "S");
        TAP_OK(!rx->message_error && strstr(rx->message, "--animate pos=") != NULL,
               "S in decay records p0 walking along: %.140s", rx->message);
        /* frequencies animates the factor (issue 27: it swept d), under YaRN while the figure
         * has no method, and e prints the very command S runs */
        rx->st.view = app_view_find("frequencies");
        type(rx, "e");
        const char *want =
            "animation: pelab export frequencies --pe rope --scaling yarn --width 800 "
            "--height 500 --animate factor=1:64:48:log -o pelab-frequencies-1.gif";
        TAP_OK(strstr(rx->message, want) &&
                   strstr(rx->message, "figure: pelab export frequencies") &&
                   !strstr(rx->message, "animated: --animate"),
               "e in frequencies: two whole commands, the animation sweeping factor: %.300s",
               rx->message);
        type(rx, "S");
        TAP_OK(!rx->message_error && strstr(rx->message, want + strlen("animation: ")),
               "S in frequencies records that command: %.200s", rx->message);
        TAP_OK(rx->st.p.scaling.type == PE_SCALING_NONE,
               "the explorer's own state keeps scaling none");
        app_explorer_free(rx);
        free(rx);
        remove("pelab-rope-1.gif");
        remove("pelab-decay-1.gif");
        remove("pelab-frequencies-1.gif");
        if (chdir(here) != 0) TAP_OK(0, "back to the starting folder");
        rmdir(tmp);
    } else {
        TAP_OK(0, "a temporary folder for the recording (%s)", tmp);
    }
    return tap_done();
}
