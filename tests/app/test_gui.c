/* test_gui.c: the window path with SDL's dummy driver: every view drawn through the explorer and
 * the window, pixels read back and checked at known places, keys and quit injected as events;
 * and the window's drawing of a text-free scene equals the PNG export pixel for pixel. */
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "colormap.h"
#include "commands.h"
#include "export.h"
#include "frontend.h"
#include "options.h"
#include "views.h"
#include "raster.h"
#include "tap.h"
#include "window.h"

static uint32_t px_at(const uint32_t *p, int w, double x, double y)
{
    return p[(int)y * w + (int)x] & 0xffffff;
}

static int near_rgb(uint32_t a, uint32_t b, int tol)
{
    for (int s = 0; s < 24; s += 8) {
        int d = (int)((a >> s) & 0xff) - (int)((b >> s) & 0xff);
        if (d < -tol || d > tol) return 0;
    }
    return 1;
}

/* Read a PNG into ARGB (opaque). */
static uint32_t *read_png(const char *path, int *w, int *h)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    uint32_t *out = NULL;
    png_bytep row = NULL;
    if (setjmp(png_jmpbuf(png))) {
        free(out);
        free(row);
        png_destroy_read_struct(&png, &info, NULL);
        fclose(fp);
        return NULL;
    }
    png_init_io(png, fp);
    png_read_info(png, info);
    png_set_expand(png);
    png_set_strip_16(png);
    png_set_gray_to_rgb(png);
    png_set_filler(png, 0xff, PNG_FILLER_AFTER);
    png_read_update_info(png, info);
    *w = (int)png_get_image_width(png, info);
    *h = (int)png_get_image_height(png, info);
    out = malloc((size_t)*w * (size_t)*h * 4);
    row = malloc(png_get_rowbytes(png, info));
    for (int y = 0; y < *h; y++) {
        png_read_row(png, row, NULL);
        for (int x = 0; x < *w; x++) {
            png_bytep p = row + x * 4;
            out[y * *w + x] = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
        }
    }
    free(row);
    png_destroy_read_struct(&png, &info, NULL);
    fclose(fp);
    return out;
}

/* Every view in the window: the slider panel holds one slider per option the view declares that
 * has a slider range, in the view's order, and nothing else. */
static void check_slider_panels(void)
{
    scene s;
    scene_init(&s, 1, 1, 0);
    scene_target t = raster_target(1280, 800, raster_font_px(1280, 800, 1));
    int ok = 0;
    for (size_t v = 0; v < app_view_count(); v++) {
        const app_view *vw = app_view_at(v);
        app_state st;
        app_state_default(&st);
        st.view = (int)v;
        app_explorer *x = calloc(1, sizeof *x);
        app_explorer_init(x, &st, 1);
        app_gui_frame(x, &s, &t);
        /* the labels the panel should show, from the view's own list */
        char want[32][48];
        size_t nw = 0;
        char name[64];
        for (const char *p = vw->options; p && *p && nw < 32;) {
            p += strspn(p, " ");
            size_t w = strcspn(p, " ");
            /* copied by hand: gcc -O2 with ASan misreads a %.*s of a pointer that moves */
            size_t cut = w < sizeof name ? w : sizeof name - 1;
            memcpy(name, p, cut);
            name[cut] = '\0';
            p += w;
            const app_option *o = w ? app_option_find(name) : NULL;
            if (o && o->slider.scale != APP_SLIDER_NONE && (!o->applies || o->applies(&st)))
                snprintf(want[nw++], sizeof want[0], "%s = ", o->label ? o->label : o->name);
        }
        size_t got = 0;
        int same = 1;
        for (size_t i = 0; i < s.n; i++) {
            const scene_item *it = &s.items[i];
            if (it->kind != SCENE_TEXT || it->u.text.x < x->panel_x || it->u.text.y > x->view_h)
                continue;
            same &= got < nw && strncmp(it->u.text.str, want[got], strlen(want[got])) == 0;
            got++;
        }
        same &= got == nw && x->panel_x > 0;
        ok += same;
        if (!same)
            TAP_OK(0, "view %s: the panel shows %zu sliders, the view declares %zu", vw->name, got,
                   nw);
        app_explorer_free(x);
        free(x);
    }
    TAP_OK(ok == (int)app_view_count(),
           "every view's slider panel shows exactly its options (%d of %zu)", ok, app_view_count());
    scene_free(&s);
}

/* 1 when the scene has a text item equal to str (the status line is drawn as one). */
static int scene_has_text(const scene *s, const char *str)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->items[i].kind == SCENE_TEXT && strcmp(s->items[i].u.text.str, str) == 0) return 1;
    return 0;
}

/* Events through the window's queue into the explorer, then a frame. */
static void feed(window *win, app_explorer *x, scene *s, const scene_target *t, const char *keys)
{
    for (const char *k = keys; *k; k++) {
        ui_event e = {0};
        e.type = UI_EV_KEY;
        e.key = *k == '\n' ? UI_KEY_ENTER : (uint32_t)(unsigned char)*k;
        window_push(win, &e);
    }
    ui_event got;
    for (int n = 0; window_poll(win, &got, 0) > 0 && n < 100; n++) app_explorer_event(x, &got);
    app_explorer_frame(x, s, t);
}

static void hover(window *win, app_explorer *x, scene *s, const scene_target *t, double cx,
                  double cy)
{
    const fig_axes *a = &x->ctx[x->st.view].main;
    ui_event e = {0};
    e.type = UI_EV_MOUSE;
    e.mouse = UI_MOUSE_MOVE;
    e.x = fig_x(a, cx);
    e.y = fig_y(a, cy);
    window_push(win, &e);
    ui_event got;
    for (int n = 0; window_poll(win, &got, 0) > 0 && n < 100; n++) app_explorer_event(x, &got);
    app_explorer_frame(x, s, t);
}

/* A ':' value in the window: the error (or "applied") is on the status line even with the
 * pointer resting on the figure, until the pointer moves to another cell. */
static void check_command_feedback(window *win, app_explorer *x, scene *s, const scene_target *t)
{
    x->st.view = app_view_find("heatmap");
    app_explorer_frame(x, s, t);
    hover(win, x, s, t, 2.5, 3.5);
    const char *readout = x->ctx[x->st.view].readout;
    TAP_OK(readout[0] && scene_has_text(s, readout), "the hover readout is on the status line (%s)",
           readout);
    feed(win, x, s, t, ":base -5\n");
    TAP_OK(x->message_error && strstr(x->message, "--base -5") &&
               strstr(x->message, "out of range") && scene_has_text(s, x->message),
           "a rejected ':' value shows its error over the hover readout (%s)", x->message);
    hover(win, x, s, t, 2.5, 3.5);
    TAP_OK(scene_has_text(s, x->message), "a hover on the same cell leaves the error shown");
    hover(win, x, s, t, 4.5, 5.5);
    readout = x->ctx[x->st.view].readout;
    TAP_OK(scene_has_text(s, readout) && !scene_has_text(s, x->message),
           "a hover onto another cell shows its readout again (%s)", readout);
    feed(win, x, s, t, ":base 500\n");
    TAP_OK(!x->message_error && scene_has_text(s, ":base 500 applied") && x->st.p.base == 500,
           "an accepted ':' value shows ':base 500 applied' (%s)", x->message);
}

/* In the window `s` saves the figure as it is on screen (the view's size, the zoomed text) and
 * `e` shows, in an overlay since the status line is the hover readout's, the command that makes
 * that very file: the command's export equals the saved PNG pixel for pixel. */
static void check_save_and_command(void)
{
    char dir[4096], here[4096];
    const char *base = getenv("PELAB_BUILD");
    if (base && *base)
        snprintf(dir, sizeof dir, "%s/gui-save.XXXXXX", base);
    else
        tap_tmp_path(dir, sizeof dir, "gui-save.XXXXXX");
    if (!mkdtemp(dir) || !getcwd(here, sizeof here) || chdir(dir) != 0) {
        TAP_OK(0, "a scratch folder for s and e");
        return;
    }
    static const struct {
        int w, h;
        double zoom;
    } sizes[] = {{1280, 800, 1}, {1024, 640, 1.5}, {640, 400, 2}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int w = sizes[k].w, h = sizes[k].h;
        app_state st;
        app_state_default(&st);
        st.view = app_view_find("decay");
        st.zoom = sizes[k].zoom;
        app_explorer *x = calloc(1, sizeof *x);
        app_explorer_init(x, &st, 1);
        scene s;
        scene_init(&s, 1, 1, 0);
        scene_target t = raster_target(w, h, raster_font_px(w, h, st.zoom));
        app_gui_frame(x, &s, &t);
        ui_event e = {0};
        e.type = UI_EV_KEY;
        e.key = 'e';
        app_explorer_event(x, &e);
        app_gui_frame(x, &s, &t);
        /* the overlay's text, word for word, holds the command (wrapped at spaces, not cut) */
        char joined[16384] = "";
        size_t u = 0;
        for (size_t i = 0; i < s.n && u + 2 < sizeof joined; i++)
            if (s.items[i].kind == SCENE_TEXT)
                u += (size_t)snprintf(joined + u, sizeof joined - u, "%s ", s.items[i].u.text.str);
        const char *cmd = x->shown_cmd[0];
        TAP_OK(x->cmd_shown && strstr(joined, cmd) && s.n_cut == 0,
               "%dx%d zoom %.0f%%: e shows the command in an overlay: %s", w, h,
               sizes[k].zoom * 100, cmd);
        char want[64];
        snprintf(want, sizeof want, "--width %ld --height %ld", lround(x->fig_w), lround(x->fig_h));
        TAP_OK(strstr(cmd, want) && strstr(cmd, "--font-size ") && x->fig_w <= w && x->fig_h < h,
               "the command names the figure's size on screen (%s, the window %dx%d)", want, w, h);
        /* any key closes it and does nothing else */
        e.key = '4';
        int view = x->st.view;
        app_explorer_event(x, &e);
        app_gui_frame(x, &s, &t);
        TAP_OK(!x->cmd_shown && x->st.view == view && !strstr(x->message, "export command"),
               "a key closes the overlay and does nothing else");
        e.key = 'e';
        app_explorer_event(x, &e);
        ui_event c = {0};
        c.type = UI_EV_MOUSE;
        c.mouse = UI_MOUSE_PRESS;
        c.button = 1;
        c.x = w / 3.0;
        c.y = h / 3.0;
        int cur = x->st.cursor_on;
        app_explorer_event(x, &c);
        TAP_OK(!x->cmd_shown && x->st.cursor_on == cur, "so does a click");
        /* s saves the file e names; e's command, run, makes the same pixels */
        char saved[256] = "", line[1024];
        snprintf(line, sizeof line, "%s", cmd);
        const char *o = strstr(line, " -o ");
        if (o) snprintf(saved, sizeof saved, "%s", o + 4);
        e.key = 's';
        app_explorer_event(x, &e);
        char *argv[64];
        int argc = 0;
        for (char *p = strtok(line, " "); p && argc < 63; p = strtok(NULL, " ")) argv[argc++] = p;
        if (argc > 1 && strcmp(argv[argc - 2], "-o") == 0) argv[argc - 1] = "from-e.png";
        int rc = argc > 2 ? app_cmd_export(argc - 1, argv + 1) : -1;
        int sw = 0, sh = 0, ew = 0, eh = 0;
        uint32_t *a = read_png(saved, &sw, &sh), *b = read_png("from-e.png", &ew, &eh);
        long diff = -1;
        if (a && b && sw == ew && sh == eh) {
            diff = 0;
            for (long i = 0; i < (long)sw * sh; i++) diff += (a[i] & 0xffffff) != (b[i] & 0xffffff);
        }
        TAP_OK(a && rc == 0 && sw == lround(x->fig_w) && sh == lround(x->fig_h),
               "s saved %s at the figure's size on screen (%dx%d): %s", saved, sw, sh, x->message);
        TAP_OK(b && diff == 0, "e's command makes that file: %dx%d, %ld pixels differ", ew, eh,
               diff);
        free(a);
        free(b);
        unlink(saved);
        unlink("from-e.png");
        scene_free(&s);
        app_explorer_free(x);
        free(x);
    }
    if (chdir(here) != 0) TAP_OK(0, "back to %s", here);
    rmdir(dir);
}

/* The status band's text stays left of the slider panel: with the cursor on, every view's
 * readout at 1024x640 under a 115% zoom (the panel still shown) wraps or steps down instead of
 * running under the sliders. */
static void check_status_fits(void)
{
    int bad = 0, n = 0;
    char where[300] = "";
    for (size_t v = 0; v < app_view_count(); v++) {
        app_state st;
        app_state_default(&st);
        st.view = (int)v;
        st.zoom = 1.15;
        app_explorer *x = calloc(1, sizeof *x);
        app_explorer_init(x, &st, 1);
        scene s;
        scene_init(&s, 1, 1, 0);
        scene_target t = raster_target(1024, 640, raster_font_px(1024, 640, st.zoom));
        app_gui_frame(x, &s, &t);
        ui_event e = {0};
        e.type = UI_EV_KEY;
        e.key = UI_KEY_RIGHT;
        app_explorer_event(x, &e);
        app_gui_frame(x, &s, &t);
        if (x->dirty) app_gui_frame(x, &s, &t); /* the readout asked for a second line */
        double right = x->panel_x > 0 ? x->panel_x : t.width;
        for (size_t i = 0; i < s.n; i++) {
            const scene_item *it = &s.items[i];
            if (it->kind != SCENE_TEXT || it->u.text.y < x->status_y) continue;
            if (it->u.text.x > right) continue; /* the slider panel's own text */
            n++;
            double w = scene_text_width(&t, it->u.text.str, it->u.text.size);
            if (it->u.text.x + w > right + 0.5) {
                bad++;
                snprintf(where, sizeof where, "%s: '%.60s' ends at %.0f, the panel at %.0f",
                         app_view_at(v)->name, it->u.text.str, it->u.text.x + w, right);
            }
        }
        scene_free(&s);
        app_explorer_free(x);
        free(x);
    }
    TAP_OK(bad == 0 && n > 0,
           "1024x640 at 115%%, cursor on: the status text of every view stays left of the "
           "slider panel (%d lines)%s%s",
           n, bad ? "; " : "", where);
}

int main(void)
{
    setenv("SDL_VIDEODRIVER", "dummy", 1);
    char err[512];
    window *win = NULL;
    window_set_budget(pe_mem_hold, pe_mem_release); /* as app_run_gui does */
    size_t used0 = pe_mem_used();
    if (window_open(&win, "pelab test", 800, 500, err, sizeof err) < 0) return tap_skip_all(err);
    int w, h;
    window_size(win, &w, &h);
    TAP_OK(w > 0 && h > 0, "the dummy window has a drawable (%dx%d)", w, h);

    app_state st;
    app_state_default(&st);
    st.p.dim = 16;
    st.p.len = 32;
    app_explorer *x = calloc(1, sizeof *x);
    app_explorer_init(x, &st, 1);
    scene s;
    scene_init(&s, 1, 1, 0);
    scene_target t = raster_target(w, h, raster_font_px(w, h, 1));
    for (size_t v = 0; v < app_view_count(); v++) {
        x->st.view = (int)v;
        app_explorer_frame(x, &s, &t);
        int ok = window_present(win, &s) == 0;
        int pw, ph;
        const uint32_t *p = window_pixels(win, &pw, &ph);
        TAP_OK(ok && p && pw == w && ph == h && x->view_error[0] == '\0',
               "view %s presents at %dx%d %s", app_view_at(v)->name, w, h, x->view_error);
        if (p) {
            const fig_theme *th = fig_theme_get(0);
            TAP_OK(near_rgb(px_at(p, w, 2, 2), th->bg, 2), "view %s: the corner is the background",
                   app_view_at(v)->name);
        }
    }
    /* the frame buffer and its texture count in the memory budget */
    TAP_OK(pe_mem_used() >= used0 + (size_t)w * (size_t)h * 8,
           "the window's frame (%dx%d, 8 bytes a pixel) is held in the budget: %zu -> %zu bytes", w,
           h, used0, pe_mem_used());

    /* the heatmap: PE[0][1] = cos(0) = 1 is the top of the diverging map, PE[0][0] = 0 its
     * middle; both read back from the window where the axes put them */
    x->st.view = app_view_find("heatmap");
    app_explorer_frame(x, &s, &t);
    window_present(win, &s);
    const uint32_t *p = window_pixels(win, &w, &h);
    const fig_axes *a = &x->ctx[x->st.view].main;
    const cmap *rd = cmap_default_diverging();
    uint32_t top = px_at(p, w, fig_x(a, 1.5), fig_y(a, 0.5));
    uint32_t mid = px_at(p, w, fig_x(a, 0.5), fig_y(a, 0.5));
    TAP_OK(near_rgb(top, cmap_color(rd, 1.0), 6),
           "cell (0, 1) = 1 has the map's top colour "
           "(%06x vs %06x)",
           top, cmap_color(rd, 1.0));
    TAP_OK(near_rgb(mid, cmap_color(rd, 0.5), 6),
           "cell (0, 0) = 0 has the map's middle colour "
           "(%06x vs %06x)",
           mid, cmap_color(rd, 0.5));

    /* events pushed into the window come back out of window_poll and drive the explorer */
    ui_event e = {0};
    e.type = UI_EV_KEY;
    e.key = '4';
    window_push(win, &e);
    ui_event got;
    int n = 0;
    while (window_poll(win, &got, 0) > 0 && n++ < 100) app_explorer_event(x, &got);
    TAP_OK(x->st.view == app_view_find("alibi"), "an injected '4' switches to the ALiBi view");
    e.key = 't';
    window_push(win, &e);
    while (window_poll(win, &got, 0) > 0 && n++ < 200) app_explorer_event(x, &got);
    app_explorer_frame(x, &s, &t);
    window_present(win, &s);
    p = window_pixels(win, &w, &h);
    TAP_OK(x->st.dark && near_rgb(px_at(p, w, 2, 2), fig_theme_get(1)->bg, 2),
           "'t' switches to the dark theme and the window shows it");
    check_command_feedback(win, x, &s, &t);
    ui_event q = {0};
    q.type = UI_EV_QUIT;
    window_push(win, &q);
    while (window_poll(win, &got, 0) > 0 && n++ < 300) app_explorer_event(x, &got);
    TAP_OK(x->quit, "an injected quit ends the explorer");

    /* a text-free scene: the window's pixels equal the PNG export's */
    scene_reset(&s, w, h, 0xffffff);
    float data[6] = {-1, -0.5, 0, 0.25, 0.5, 1};
    scene_heatmap(&s, 20, 20, w / 2.0, h / 2.0, data, 2, 3, 3, -1, 1, rd, 0x808080);
    scene_rect(&s, w * 0.6, h * 0.1, w * 0.3, h * 0.3, 0x0072b2, SCENE_FILL);
    scene_line(&s, 10, h - 10, w - 10, h * 0.7, 0xd55e00, 3, 0);
    scene_circle(&s, w * 0.75, h * 0.7, 40, 0x009e73, 2, 0);
    window_present(win, &s);
    p = window_pixels(win, &w, &h);
    char path[512], name[64];
    snprintf(name, sizeof name, "pelab-gui-%d.png", (int)getpid());
    tap_tmp_path(path, sizeof path, name);
    raster_export_opts o = {96, NULL, 0, 1, 1, 0};
    int rc = raster_export(&s, path, &o, err, sizeof err);
    int pw = 0, ph = 0;
    uint32_t *png = rc == 0 ? read_png(path, &pw, &ph) : NULL;
    long diff = 0;
    if (png && pw == w && ph == h)
        for (long i = 0; i < (long)w * h; i++) diff += (png[i] & 0xffffff) != (p[i] & 0xffffff);
    TAP_OK(png && pw == w && ph == h && diff == 0,
           "window pixels equal the PNG export pixel for pixel (%ld differ)", diff);
    free(png);
    unlink(path);

    scene_free(&s);
    app_explorer_free(x);
    free(x);
    size_t before_close = pe_mem_used();
    window_close(win);
    TAP_OK(pe_mem_used() < before_close,
           "closing the window gives its frame back: %zu -> %zu bytes", before_close,
           pe_mem_used());
    check_slider_panels();
    check_save_and_command();
    check_status_fits();
    return tap_done();
}
