/* test_sdl_window: the SDL window under the dummy video driver. Presents a known scene and reads
 * it back (our buffer, the renderer's output, the saved PNG), and feeds SDL events through
 * window_poll to check their translation: printable keys once, Ctrl/Alt combos, AltGr text,
 * navigation keys, mouse coordinates, collapsed resizes, quit. */
#define SDL_MAIN_HANDLED
#include <SDL.h>
#include <png.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "raster.h"
#include "sdl_common.h"
#include "window.h"

/* Drops what SDL queued on its own (window shown/exposed) so each check sees only its events. */
static void drain(window *win)
{
    ui_event ev;
    while (window_poll(win, &ev, 0)) {
    }
}

static SDL_Window *sdl_window(void)
{
    for (Uint32 id = 1; id < 64; id++) {
        SDL_Window *w = SDL_GetWindowFromID(id);
        if (w) return w;
    }
    return NULL;
}

static void push_key(SDL_Keycode sym, Uint16 mod)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_KEYDOWN;
    e.key.state = SDL_PRESSED;
    e.key.keysym.sym = sym;
    e.key.keysym.scancode = SDL_GetScancodeFromKey(sym);
    e.key.keysym.mod = mod;
    SDL_PushEvent(&e);
    e.type = SDL_KEYUP;
    e.key.state = SDL_RELEASED;
    SDL_PushEvent(&e);
}

static void push_text(const char *utf8)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_TEXTINPUT;
    snprintf(e.text.text, sizeof e.text.text, "%s", utf8);
    SDL_PushEvent(&e);
}

/* A keystroke as X11 reports it: the key press, then the text it typed (NULL for none). */
static void push_stroke(SDL_Keycode sym, Uint16 mod, const char *text)
{
    SDL_Event e;
    memset(&e, 0, sizeof e);
    e.type = SDL_KEYDOWN;
    e.key.state = SDL_PRESSED;
    e.key.keysym.sym = sym;
    e.key.keysym.scancode = SDL_GetScancodeFromKey(sym);
    e.key.keysym.mod = mod;
    SDL_PushEvent(&e);
    if (text) push_text(text);
    e.type = SDL_KEYUP;
    e.key.state = SDL_RELEASED;
    SDL_PushEvent(&e);
}

/* Polls all queued events into out (at most max); returns how many. */
static int poll_all(window *win, ui_event *out, int max)
{
    int n = 0;
    ui_event ev;
    while (window_poll(win, &ev, 0)) {
        if (n < max) out[n] = ev;
        n++;
    }
    return n;
}

static void expect_keys(window *win, const char *what, const uint32_t *keys, const unsigned *mods,
                        int n)
{
    ui_event got[8];
    int m = poll_all(win, got, 8);
    int ok = m == n;
    for (int i = 0; ok && i < n; i++)
        ok = got[i].type == UI_EV_KEY && got[i].key == keys[i] && got[i].mods == mods[i];
    if (!TAP_OK(ok, "%s", what)) {
        tap_diag("got %d events, want %d", m, n);
        for (int i = 0; i < m && i < 8; i++)
            tap_diag("  type %d key 0x%x mods %u", (int)got[i].type, (unsigned)got[i].key,
                     got[i].mods);
    }
}

static void test_keys(window *win)
{
    drain(win);
    push_stroke(SDLK_a, KMOD_NONE, "a");
    expect_keys(win, "a printable key arrives once, from its text", (uint32_t[]){'a'},
                (unsigned[]){0}, 1);
    /* '+' typed with shift on a US layout: the key is '=', the text '+'. */
    push_stroke(SDLK_EQUALS, KMOD_LSHIFT, "+");
    expect_keys(win, "shift+= types '+' once", (uint32_t[]){'+'}, (unsigned[]){0}, 1);
    push_stroke(SDLK_a, KMOD_LCTRL, NULL);
    expect_keys(win, "ctrl+a is 'a' with CTRL", (uint32_t[]){'a'}, (unsigned[]){UI_MOD_CTRL}, 1);
    push_stroke(SDLK_q, KMOD_LALT, "q");
    expect_keys(win, "alt+q is 'q' with ALT once (its text dropped)", (uint32_t[]){'q'},
                (unsigned[]){UI_MOD_ALT}, 1);
    push_stroke(SDLK_a, KMOD_LCTRL | KMOD_LSHIFT, NULL);
    expect_keys(win, "ctrl+shift+a is 'a' with CTRL|SHIFT", (uint32_t[]){'a'},
                (unsigned[]){UI_MOD_CTRL | UI_MOD_SHIFT}, 1);
    /* AltGr+q types '@' on a German layout: the text wins, no Alt combo. */
    push_stroke(SDLK_q, KMOD_RALT, "@");
    expect_keys(win, "altgr+q typing '@' is '@'", (uint32_t[]){'@'}, (unsigned[]){0}, 1);
    push_stroke(SDLK_x, KMOD_RALT, "x");
    expect_keys(win, "right alt+x typing 'x' is an Alt combo", (uint32_t[]){'x'},
                (unsigned[]){UI_MOD_ALT}, 1);
    push_text("\xc3\xa9\xe2\x86\x92"); /* an input method commits two characters */
    expect_keys(win, "text of two code points gives two keys", (uint32_t[]){0xe9, 0x2192},
                (unsigned[]){0, 0}, 2);
    push_stroke(SDLK_UP, KMOD_NONE, NULL);
    push_stroke(SDLK_PAGEDOWN, KMOD_NONE, NULL);
    push_stroke(SDLK_HOME, KMOD_NONE, NULL);
    push_stroke(SDLK_RETURN, KMOD_NONE, NULL);
    push_stroke(SDLK_ESCAPE, KMOD_NONE, NULL);
    push_stroke(SDLK_BACKSPACE, KMOD_NONE, NULL);
    push_stroke(SDLK_DELETE, KMOD_NONE, NULL);
    push_stroke(SDLK_LEFT, KMOD_LCTRL, NULL);
    expect_keys(win, "navigation and editing keys",
                (uint32_t[]){UI_KEY_UP, UI_KEY_PGDN, UI_KEY_HOME, UI_KEY_ENTER, UI_KEY_ESC,
                             UI_KEY_BACKSPACE, UI_KEY_DELETE, UI_KEY_LEFT},
                (unsigned[]){0, 0, 0, 0, 0, 0, 0, UI_MOD_CTRL}, 8);
    push_stroke(SDLK_TAB, KMOD_NONE, NULL);
    push_stroke(SDLK_TAB, KMOD_LSHIFT, NULL);
    push_stroke(SDLK_F1, KMOD_NONE, NULL);
    push_stroke(SDLK_F11, KMOD_NONE, NULL);
    push_stroke(SDLK_F12, KMOD_NONE, NULL);
    expect_keys(win, "tab, shift-tab, F1, F11, F12",
                (uint32_t[]){UI_KEY_TAB, UI_KEY_BTAB, UI_KEY_F1, UI_KEY_F11, UI_KEY_F1 + 11},
                (unsigned[]){0, 0, 0, 0, 0}, 5);
    push_key(SDLK_KP_8, KMOD_NONE);
    push_key(SDLK_KP_8, KMOD_NUM);
    push_text("8");
    expect_keys(win, "keypad 8 is up without NumLock, '8' with it", (uint32_t[]){UI_KEY_UP, '8'},
                (unsigned[]){0, 0}, 2);
    push_key(SDLK_LSHIFT, KMOD_LSHIFT);
    expect_keys(win, "a modifier alone is no event", NULL, NULL, 0);
}

static void test_mouse(window *win)
{
    SDL_Event e;
    ui_event got[8];
    int n;
    double r = window_pixel_ratio(win);
    drain(win);
    memset(&e, 0, sizeof e);
    e.type = SDL_MOUSEBUTTONDOWN;
    e.button.button = SDL_BUTTON_LEFT;
    e.button.state = SDL_PRESSED;
    e.button.x = 10;
    e.button.y = 20;
    SDL_PushEvent(&e);
    memset(&e, 0, sizeof e);
    e.type = SDL_MOUSEMOTION;
    e.motion.x = 30;
    e.motion.y = 40;
    e.motion.state = SDL_BUTTON_LMASK;
    SDL_PushEvent(&e);
    e.motion.x = 31; /* a burst of motion: only the last one is delivered */
    SDL_PushEvent(&e);
    e.motion.x = 32;
    SDL_PushEvent(&e);
    memset(&e, 0, sizeof e);
    e.type = SDL_MOUSEBUTTONUP;
    e.button.button = SDL_BUTTON_LEFT;
    e.button.state = SDL_RELEASED;
    e.button.x = 32;
    e.button.y = 40;
    SDL_PushEvent(&e);
    memset(&e, 0, sizeof e);
    e.type = SDL_MOUSEWHEEL;
    e.wheel.y = 1;
    e.wheel.mouseX = 50;
    e.wheel.mouseY = 60;
    SDL_PushEvent(&e);
    e.wheel.y = -2;
    SDL_PushEvent(&e);
    e.wheel.y = 1;
    e.wheel.direction = SDL_MOUSEWHEEL_FLIPPED;
    SDL_PushEvent(&e);

    n = poll_all(win, got, 8);
    TAP_OK(n == 6, "mouse: 6 events (press, one motion, release, 3 wheel), got %d", n);
    if (n != 6) return;
    TAP_OK(got[0].type == UI_EV_MOUSE && got[0].mouse == UI_MOUSE_PRESS && got[0].button == 1,
           "mouse: left press");
    TAP_CLOSE(got[0].x, 10.5 * r, 0, 1e-9, "mouse: press x = centre of point 10 in pixels");
    TAP_CLOSE(got[0].y, 20.5 * r, 0, 1e-9, "mouse: press y = centre of point 20 in pixels");
    TAP_OK(got[1].mouse == UI_MOUSE_MOVE && got[1].button == 1, "mouse: drag with left held");
    TAP_CLOSE(got[1].x, 32.5 * r, 0, 1e-9, "mouse: the last motion of the burst");
    TAP_OK(got[2].mouse == UI_MOUSE_RELEASE && got[2].button == 1, "mouse: left release");
    TAP_OK(got[3].mouse == UI_MOUSE_WHEEL_UP && got[4].mouse == UI_MOUSE_WHEEL_DOWN &&
               got[5].mouse == UI_MOUSE_WHEEL_DOWN,
           "mouse: wheel up, down, flipped up = down");
    TAP_CLOSE(got[3].x, 50.5 * r, 0, 1e-9, "mouse: wheel x");
    TAP_CLOSE(got[3].y, 60.5 * r, 0, 1e-9, "mouse: wheel y");
}

static void test_push_quit_resize(window *win)
{
    ui_event a = {.type = UI_EV_KEY, .key = '?'}, b = {.type = UI_EV_TICK}, ev;
    SDL_Event e;
    ui_event got[8];
    int n;
    drain(win);
    TAP_OK(window_poll(win, &ev, 0) == 0, "poll with nothing queued returns 0");
    TAP_OK(window_poll(win, &ev, 5) == 0, "poll with a timeout and nothing queued returns 0");

    /* Pushed events come first and in order, even with SDL events queued. */
    memset(&e, 0, sizeof e);
    e.type = SDL_QUIT;
    SDL_PushEvent(&e);
    window_push(win, &a);
    window_push(win, &b);
    for (int i = 0; i < 40; i++) window_push(win, &b); /* grows the queue past its first size */
    n = 0;
    TAP_OK(window_poll(win, &ev, 0) == 1 && ev.type == UI_EV_KEY && ev.key == '?',
           "the first pushed event comes first");
    while (window_poll(win, &ev, 0) == 1 && ev.type == UI_EV_TICK) n++;
    TAP_OK(n == 41, "then the other 41 pushed, in order (got %d)", n);
    TAP_OK(ev.type == UI_EV_QUIT, "then SDL_QUIT as UI_EV_QUIT");

    /* A burst of size/expose events is one resize. */
    drain(win);
    memset(&e, 0, sizeof e);
    e.type = SDL_WINDOWEVENT;
    e.window.event = SDL_WINDOWEVENT_RESIZED;
    SDL_PushEvent(&e);
    e.window.event = SDL_WINDOWEVENT_SIZE_CHANGED;
    SDL_PushEvent(&e);
    push_text("k");
    e.window.event = SDL_WINDOWEVENT_EXPOSED;
    SDL_PushEvent(&e);
    e.window.event = SDL_WINDOWEVENT_FOCUS_GAINED;
    SDL_PushEvent(&e);
    n = poll_all(win, got, 8);
    TAP_OK(n == 2 && got[0].type == UI_EV_RESIZE && got[1].type == UI_EV_KEY && got[1].key == 'k',
           "resize burst with a key in it: one resize, then the key (got %d events)", n);
}

/* Reads a PNG with libpng's simplified API into RGBA bytes; NULL on failure. */
static unsigned char *read_png(const char *path, int *w, int *h)
{
    png_image img;
    unsigned char *buf;
    memset(&img, 0, sizeof img);
    img.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&img, path)) return NULL;
    img.format = PNG_FORMAT_RGBA;
    buf = malloc(PNG_IMAGE_SIZE(img));
    if (!buf || !png_image_finish_read(&img, NULL, buf, 0, NULL)) {
        free(buf);
        png_image_free(&img);
        return NULL;
    }
    *w = (int)img.width;
    *h = (int)img.height;
    return buf;
}

static void test_png(window *win)
{
    char dir[512], path[600], err[256];
    tap_tmp_path(dir, sizeof dir, "pelab-sdl-XXXXXX");
    const raster_meta meta[] = {{"Software", "pelab test"}};
    int fw, fh, pw = 0, ph = 0;
    const uint32_t *px = window_pixels(win, &fw, &fh);
    unsigned char *png;
    if (!TAP_OK(mkdtemp(dir) != NULL, "temporary directory")) return;
    snprintf(path, sizeof path, "%s/frame.png", dir);
    err[0] = 0;
    TAP_OK(window_save_png(win, path, meta, 1, err, sizeof err) == 0, "window_save_png: %s", err);
    png = read_png(path, &pw, &ph);
    TAP_OK(png != NULL, "the PNG reads back with libpng");
    TAP_OK(pw == fw && ph == fh, "PNG is %dx%d, the frame %dx%d", pw, ph, fw, fh);
    if (png && pw == fw && ph == fh) {
        int diff = 0;
        for (size_t i = 0; i < (size_t)fw * (size_t)fh; i++) {
            uint32_t want = px[i];
            const unsigned char *p = png + 4 * i;
            uint32_t got = (uint32_t)p[3] << 24 | (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
            diff += got != want;
        }
        TAP_OK(diff == 0, "the PNG holds exactly the frame's pixels (%d differ)", diff);
    }
    free(png);
    unlink(path);
    rmdir(dir);
}

/* The window keeps its last frame: a scene equal to it is copied from the texture, not drawn
 * again; any change (one heatmap cell) is drawn and uploaded, and going back is drawn again. */
static void test_frame_cache(window *win, int w, int h)
{
    scene s;
    scene_init(&s, 0, 0, 0);
    uint32_t *screen = calloc((size_t)w * (size_t)h, sizeof *screen);
    if (!TAP_OK(screen && test_scene(&s, w, h) == 0, "frame cache: scene built")) {
        free(screen);
        scene_free(&s);
        return;
    }
    /* the first cell's centre (value 0 until it is set to 1) */
    int cx = HEAT_X + 20, cy = HEAT_Y + 20;
    TAP_OK(window_present(win, &s) == 0, "frame cache: present");
    unsigned long n0 = window_draw_count(win);
    TAP_OK(test_scene(&s, w, h) == 0 && window_present(win, &s) == 0 &&
               window_draw_count(win) == n0,
           "frame cache: the same scene built again is not drawn again (%lu -> %lu)", n0,
           window_draw_count(win));
    TAP_OK(window_read_screen(win, screen, w, h) == 0, "frame cache: read the kept frame");
    check_frame(screen, w, h, "kept frame on screen");
    /* one cell changes: drawn, uploaded, shown */
    s.items[1].u.heat.data[0] = 1.0f;
    TAP_OK(window_present(win, &s) == 0 && window_draw_count(win) == n0 + 1,
           "frame cache: a changed heatmap cell is drawn");
    const uint32_t *px = window_pixels(win, &w, &h);
    TAP_OK(px != NULL, "frame cache: pixels");
    if (px) check_px(px, w, cx, cy, heat_color(1.0f), 2, "changed cell in the frame");
    TAP_OK(window_read_screen(win, screen, w, h) == 0, "frame cache: read the changed frame");
    check_px(screen, w, cx, cy, heat_color(1.0f), 2, "changed cell on screen");
    /* back to the first scene: drawn again, not mistaken for the frame before */
    TAP_OK(test_scene(&s, w, h) == 0 && window_present(win, &s) == 0 &&
               window_draw_count(win) == n0 + 2,
           "frame cache: the scene before the change is drawn again");
    TAP_OK(window_read_screen(win, screen, w, h) == 0, "frame cache: read the restored frame");
    check_frame(screen, w, h, "restored frame on screen");
    free(screen);
    scene_free(&s);
}

int main(void)
{
    window *win = NULL;
    char err[256] = "";
    scene s;
    int w, h, fw, fh;
    const uint32_t *px;
    uint32_t *screen;

    setenv("SDL_VIDEODRIVER", "dummy", 1);
    if (window_open(&win, "pelab test", 400, 300, err, sizeof err) != 0) {
        printf("# %s\n", err);
        return tap_skip_all("the SDL dummy video driver is not available");
    }
    scene_init(&s, 0, 0, 0);
    window_size(win, &w, &h);
    TAP_OK(w == 400 && h == 300, "drawable is 400x300 (got %dx%d)", w, h);
    TAP_CLOSE(window_pixel_ratio(win), 1.0, 0, 1e-12, "pixel ratio 1 on the dummy driver");
    TAP_OK(window_pixels(win, &fw, &fh) == NULL && fw == 0, "no pixels before the first present");
    TAP_OK(window_save_png(win, "/nonexistent/x.png", NULL, 0, err, sizeof err) == -1 &&
               strstr(err, "no frame") != NULL,
           "saving before the first present fails: %s", err);
    TAP_CLOSE(window_last_frame_ms(win), 0.0, 0, 0, "no frame time before the first frame");

    TAP_OK(test_scene(&s, w, h) == 0, "scene built");
    TAP_OK(window_present(win, &s) == 0, "present");
    px = window_pixels(win, &fw, &fh);
    TAP_OK(px != NULL && fw == w && fh == h, "frame is %dx%d", fw, fh);
    if (px) check_frame(px, fw, fh, "frame");
    TAP_OK(window_last_frame_ms(win) > 0.0, "frame time measured (%.3f ms)",
           window_last_frame_ms(win));

    /* What the renderer shows: catches a wrong texture format (red and blue swapped). */
    screen = calloc((size_t)w * (size_t)h, sizeof *screen);
    TAP_OK(screen && window_read_screen(win, screen, w, h) == 0, "read the screen back");
    if (screen) check_frame(screen, w, h, "screen");
    free(screen);
    TAP_OK(window_read_screen(win, NULL, w + 1, h) == -1, "read_screen refuses a wrong size");

    test_png(win);
    test_frame_cache(win, w, h);
    test_keys(win);
    test_mouse(win);
    test_push_quit_resize(win);

    /* A real resize through SDL: one resize event, the new drawable size, a new frame. */
    {
        SDL_Window *sw = sdl_window();
        ui_event ev;
        int n = 0, other = 0;
        drain(win);
        if (TAP_OK(sw != NULL, "found the SDL window")) SDL_SetWindowSize(sw, 320, 200);
        while (window_poll(win, &ev, 0)) {
            n += ev.type == UI_EV_RESIZE;
            other += ev.type != UI_EV_RESIZE;
        }
        TAP_OK(n == 1 && other == 0, "resize: exactly one UI_EV_RESIZE (got %d, %d others)", n,
               other);
        window_size(win, &w, &h);
        TAP_OK(w == 320 && h == 200, "resize: drawable is 320x200 (got %dx%d)", w, h);
        TAP_OK(test_scene(&s, w, h) == 0 && window_present(win, &s) == 0, "resize: present");
        px = window_pixels(win, &fw, &fh);
        TAP_OK(px != NULL && fw == 320 && fh == 200, "resize: frame is %dx%d", fw, fh);
        if (px) check_frame(px, fw, fh, "resized frame");
        screen = calloc((size_t)w * (size_t)h, sizeof *screen);
        TAP_OK(screen && window_read_screen(win, screen, w, h) == 0, "resize: read screen");
        if (screen) check_frame(screen, w, h, "resized screen");
        free(screen);
    }

    window_set_title(win, "pelab: renamed");
    window_toggle_fullscreen(win);
    window_toggle_fullscreen(win);
    TAP_OK(test_scene(&s, w, h) == 0 && window_present(win, &s) == 0,
           "present after a title change and a fullscreen round trip");

    scene_free(&s);
    window_close(win);
    TAP_OK(SDL_WasInit(SDL_INIT_EVERYTHING) == 0, "window_close quit what it initialised");
    return tap_done();
}
