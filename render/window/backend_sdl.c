/* backend_sdl.c: the SDL2 window (window.h). cairo draws the scene into a buffer we own, which
 * is uploaded to a streaming texture the size of the drawable and shown by an SDL_Renderer; SDL
 * input becomes ui_events. The only file that includes <SDL.h>. */
#define SDL_MAIN_HANDLED
#include <SDL.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "termsig.h"
#include "window.h"

struct window {
    SDL_Window *win;
    SDL_Renderer *ren;
    SDL_Texture *tex;
    int tex_w, tex_h;
    int texture_lost; /* SDL_RENDER_DEVICE_RESET seen: recreate before the next upload */

    uint32_t *pix; /* (pix_h, pix_w) ARGB32, the last frame */
    int pix_w, pix_h;
    int has_frame;
    /* raster_scene_key of the frame in pix, and whether the texture holds pix: a frame equal to
     * the last one (a hover that changes no readout, an expose, a key that changes nothing) is
     * then a copy of the texture, not a new cairo drawing and upload */
    uint64_t frame_key;
    int tex_has_frame;
    unsigned long draws; /* frames cairo drew (window_draw_count) */

    ui_event *queue; /* ring of pushed events, delivered before SDL's */
    size_t q_head, q_len, q_cap;

    double frame_ms; /* draw + upload + present of the last frame */
    size_t held;     /* bytes of pix and tex counted in the budget (window_set_budget) */
};

static void (*budget_hold)(size_t bytes);
static void (*budget_release)(size_t bytes);

void window_set_budget(void (*hold)(size_t bytes), void (*release)(size_t bytes))
{
    budget_hold = hold;
    budget_release = release;
}

/* The budget holds bytes for win's frame from now on (what it held before goes back). */
static void frame_held(window *win, size_t bytes)
{
    if (bytes == win->held) return;
    if (budget_release && win->held) budget_release(win->held);
    win->held = 0;
    if (budget_hold && bytes) {
        budget_hold(bytes);
        win->held = bytes;
    }
}

static void set_err(char *err, size_t errlen, const char *fmt, const char *arg)
{
    if (err && errlen > 0) snprintf(err, errlen, fmt, arg);
}

static int env_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

/* The display check only applies to the drivers that need one; an explicit other driver
 * (dummy, offscreen, kmsdrm) is SDL's to accept or refuse. */
static int needs_display(void)
{
#if defined(_WIN32) || defined(__APPLE__) || defined(__ANDROID__)
    return 0;
#else
    const char *drv = getenv("SDL_VIDEODRIVER");
    if (!drv || !*drv) return 1;
    return SDL_strcasecmp(drv, "x11") == 0 || SDL_strcasecmp(drv, "wayland") == 0;
#endif
}

/* The asked size, made smaller (same aspect) when it is more than 90% of the primary display's
 * usable area (the desktop less panels and docks): a 1280x800 window on a 1366x768 laptop would
 * otherwise open with its status lines under the taskbar. The dummy and offscreen drivers have
 * no screen, only a made-up 1024x768 mode: they keep the asked size. */
static void fit_to_display(int *w, int *h)
{
    const char *drv = SDL_GetCurrentVideoDriver();
    if (!drv || SDL_strcasecmp(drv, "dummy") == 0 || SDL_strcasecmp(drv, "offscreen") == 0) return;
    SDL_Rect r;
    if (SDL_GetDisplayUsableBounds(0, &r) != 0 || r.w < 1 || r.h < 1) return;
    double k = SDL_min(0.9 * r.w / *w, 0.9 * r.h / *h);
    if (k >= 1) return;
    *w = SDL_max(160, (int)(*w * k));
    *h = SDL_max(100, (int)(*h * k));
}

/* ---- terminating signals -------------------------------------------------------------- */

/* SDL's own handlers turn SIGINT and SIGTERM into SDL_QUIT, so the window exited 0 where the
 * terminal explorer gives 130 and 143 (issue 28). Ours turn every terminating signal but the
 * faults (termsig.h) into a quit event and remember it for the exit status; the faults keep their
 * default action (no terminal to restore). SIGXFSZ from the file-size limit is left to the
 * failing write (outfile.h). */
static volatile sig_atomic_t g_sig;
static int g_quit_sig;
static int sig_saved[TERMSIG_MAX], n_sig_saved;
static struct sigaction sig_old[TERMSIG_MAX];

static void on_signal(int sig, siginfo_t *info, void *uc)
{
    (void)uc;
    if (sig == SIGXFSZ && info && info->si_code == SI_USER && info->si_pid == getpid()) return;
    g_sig = sig;
}

static void signals_take(void)
{
    int sigs[TERMSIG_MAX];
    int n = termsig_list(sigs);
    n_sig_saved = 0;
    g_sig = 0;
    g_quit_sig = 0;
    for (int i = 0; i < n; i++) {
        if (termsig_is_fault(sigs[i])) continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        if (sigaction(sigs[i], &sa, &sig_old[n_sig_saved]) == 0) sig_saved[n_sig_saved++] = sigs[i];
    }
}

static void signals_give_back(void)
{
    for (int i = 0; i < n_sig_saved; i++) sigaction(sig_saved[i], &sig_old[i], NULL);
    n_sig_saved = 0;
}

int window_quit_signal(void)
{
    return g_quit_sig;
}

static void quit_video(void)
{
    SDL_QuitSubSystem(SDL_INIT_VIDEO);
    /* SDL_Quit also frees hints and the event queue; only when nobody else holds SDL. */
    if (SDL_WasInit(SDL_INIT_EVERYTHING) == 0) SDL_Quit();
}

int window_open(window **out, const char *title, int w, int h, char *err, size_t errlen)
{
    char size[48];
    window *win = NULL;
    *out = NULL;
    if (w < 1 || h < 1 || w > 16384 || h > 16384) {
        snprintf(size, sizeof size, "%dx%d", w, h);
        set_err(err, errlen, "window size %s: width and height must be 1..16384 points", size);
        return -1;
    }
    if (needs_display() && !env_set("DISPLAY") && !env_set("WAYLAND_DISPLAY")) {
        set_err(err, errlen, "%s",
                "no display: DISPLAY and WAYLAND_DISPLAY are unset (try the terminal explorer: "
                "pelab)");
        return -1;
    }
    /* Let a click that focuses the window also act in it. */
    SDL_SetHint(SDL_HINT_MOUSE_FOCUS_CLICKTHROUGH, "1");
    /* the signals are ours (see on_signal), not SDL's */
    SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1");
    if (SDL_InitSubSystem(SDL_INIT_VIDEO) != 0) {
        set_err(err, errlen, "SDL could not open a window: %s", SDL_GetError());
        if (SDL_WasInit(SDL_INIT_EVERYTHING) == 0) SDL_Quit();
        return -1;
    }
    win = calloc(1, sizeof *win);
    if (!win) {
        set_err(err, errlen, "%s", "SDL could not open a window: out of memory");
        goto fail;
    }
    fit_to_display(&w, &h);
    win->win =
        SDL_CreateWindow(title ? title : "pelab", SDL_WINDOWPOS_UNDEFINED, SDL_WINDOWPOS_UNDEFINED,
                         w, h, SDL_WINDOW_RESIZABLE | SDL_WINDOW_ALLOW_HIGHDPI);
    if (!win->win) {
        set_err(err, errlen, "SDL could not open a window: %s", SDL_GetError());
        goto fail;
    }
    SDL_SetWindowMinimumSize(win->win, 160, 100);
    win->ren =
        SDL_CreateRenderer(win->win, -1, SDL_RENDERER_ACCELERATED | SDL_RENDERER_PRESENTVSYNC);
    if (!win->ren) win->ren = SDL_CreateRenderer(win->win, -1, SDL_RENDERER_SOFTWARE);
    if (!win->ren) {
        set_err(err, errlen, "SDL could not open a window: no renderer: %s", SDL_GetError());
        goto fail;
    }
    SDL_StartTextInput();
    signals_take();
    *out = win;
    return 0;
fail:
    if (win) {
        if (win->win) SDL_DestroyWindow(win->win);
        free(win);
    }
    quit_video();
    return -1;
}

void window_close(window *win)
{
    if (!win) return;
    signals_give_back();
    frame_held(win, 0);
    if (win->tex) SDL_DestroyTexture(win->tex);
    if (win->ren) SDL_DestroyRenderer(win->ren);
    if (win->win) SDL_DestroyWindow(win->win);
    free(win->pix);
    free(win->queue);
    free(win);
    quit_video();
}

void window_size(const window *win, int *w, int *h)
{
    int dw = 0, dh = 0;
    if (SDL_GetRendererOutputSize(win->ren, &dw, &dh) != 0) dw = dh = 0;
    *w = dw;
    *h = dh;
}

/* Drawable pixels per window point along each axis (1 unless HiDPI). */
static void pixel_ratios(const window *win, double *rx, double *ry)
{
    int ww = 0, wh = 0, dw = 0, dh = 0;
    SDL_GetWindowSize(win->win, &ww, &wh);
    if (SDL_GetRendererOutputSize(win->ren, &dw, &dh) != 0) dw = dh = 0;
    *rx = ww > 0 && dw > 0 ? (double)dw / ww : 1.0;
    *ry = wh > 0 && dh > 0 ? (double)dh / wh : 1.0;
}

double window_pixel_ratio(const window *win)
{
    double rx, ry;
    pixel_ratios(win, &rx, &ry);
    return rx;
}

void window_set_title(window *win, const char *title)
{
    SDL_SetWindowTitle(win->win, title ? title : "pelab");
}

void window_toggle_fullscreen(window *win)
{
    Uint32 flags = SDL_GetWindowFlags(win->win);
    SDL_SetWindowFullscreen(win->win,
                            (flags & SDL_WINDOW_FULLSCREEN) ? 0 : SDL_WINDOW_FULLSCREEN_DESKTOP);
}

/* The texture's format for cairo's frames. SDL's ARGB8888 is a native-endian 0xAARRGGBB word,
 * cairo's ARGB32 exactly; the window's frames are opaque (alpha 0xff everywhere), so the same
 * words read as RGB888 (0xXXRRGGBB) are the same picture. RGB888 is the usual window surface
 * format: the software renderer (the SDL dummy driver of bench and the tests, and displays
 * without GL) then copies the texture to the window with a memcpy per row instead of converting
 * each pixel from ARGB8888 (16.5 M instructions per 1280x800 frame, callgrind). ARGB8888 when
 * the renderer does not take RGB888. */
static Uint32 texture_format(SDL_Renderer *ren)
{
    SDL_RendererInfo info;
    if (SDL_GetRendererInfo(ren, &info) == 0)
        for (Uint32 i = 0; i < info.num_texture_formats; i++)
            if (info.texture_formats[i] == SDL_PIXELFORMAT_RGB888) return SDL_PIXELFORMAT_RGB888;
    return SDL_PIXELFORMAT_ARGB8888;
}

/* Make the pixel buffer and the texture w x h; keeps them when the size is unchanged. */
static int ensure_size(window *win, int w, int h)
{
    if (!win->pix || w != win->pix_w || h != win->pix_h) {
        uint32_t *p;
        if ((size_t)w > SIZE_MAX / sizeof *p / (size_t)h) return -1;
        p = realloc(win->pix, (size_t)w * (size_t)h * sizeof *p);
        if (!p) return -1;
        win->pix = p;
        win->pix_w = w;
        win->pix_h = h;
        win->has_frame = 0;
    }
    if (win->tex && (win->texture_lost || w != win->tex_w || h != win->tex_h)) {
        SDL_DestroyTexture(win->tex);
        win->tex = NULL;
        win->tex_has_frame = 0;
    }
    win->texture_lost = 0;
    if (!win->tex) {
        win->tex = SDL_CreateTexture(win->ren, texture_format(win->ren),
                                     SDL_TEXTUREACCESS_STREAMING, w, h);
        if (!win->tex) return -1;
        SDL_SetTextureBlendMode(win->tex, SDL_BLENDMODE_NONE);
        win->tex_w = w;
        win->tex_h = h;
    }
    frame_held(win, (size_t)w * (size_t)h * 8); /* pix and the texture's pixels */
    return 0;
}

int window_draw(window *win, const scene *s)
{
    int w = 0, h = 0;
    if (SDL_GetRendererOutputSize(win->ren, &w, &h) != 0) return -1;
    if (w <= 0 || h <= 0) return 1; /* minimised: nothing to show */
    if (ensure_size(win, w, h) != 0) return -1;
    uint64_t key = raster_scene_key(s, w, h, 1);
    if (!win->has_frame || key != win->frame_key) {
        win->tex_has_frame = 0;
        if (raster_draw_argb(s, win->pix, w, h, w * 4, 1) != 0) {
            win->has_frame = 0;
            return -1;
        }
        win->has_frame = 1;
        win->frame_key = key;
        win->draws++;
    }
    if (!win->tex_has_frame) {
        if (SDL_UpdateTexture(win->tex, NULL, win->pix, w * 4) != 0) return -1;
        win->tex_has_frame = 1;
    }
    /* the back buffer is undefined after a present: the texture is copied every frame */
    if (SDL_RenderCopy(win->ren, win->tex, NULL, NULL) != 0) return -1;
    return 0;
}

int window_present(window *win, const scene *s)
{
    Uint64 t0 = SDL_GetPerformanceCounter();
    int rc = window_draw(win, s);
    if (rc != 0) return rc < 0 ? -1 : 0;
    SDL_RenderPresent(win->ren);
    win->frame_ms =
        (double)(SDL_GetPerformanceCounter() - t0) * 1000.0 / (double)SDL_GetPerformanceFrequency();
    return 0;
}

double window_last_frame_ms(const window *win)
{
    return win->frame_ms;
}

int window_read_screen(window *win, uint32_t *pixels, int w, int h)
{
    SDL_Rect r = {0, 0, w, h};
    if (!win->has_frame || !win->tex || w != win->tex_w || h != win->tex_h) return -1;
    /* The back buffer is undefined after a present: draw the frame again, read, don't show. */
    if (SDL_RenderCopy(win->ren, win->tex, NULL, NULL) != 0) return -1;
    return SDL_RenderReadPixels(win->ren, &r, SDL_PIXELFORMAT_ARGB8888, pixels, w * 4) == 0 ? 0
                                                                                            : -1;
}

unsigned long window_draw_count(const window *win)
{
    return win->draws;
}

const uint32_t *window_pixels(const window *win, int *w, int *h)
{
    if (!win->has_frame) {
        *w = *h = 0;
        return NULL;
    }
    *w = win->pix_w;
    *h = win->pix_h;
    return win->pix;
}

int window_save_png(window *win, const char *path, const raster_meta *meta, size_t n_meta,
                    char *err, size_t errlen)
{
    if (!win->has_frame) {
        set_err(err, errlen, "%s: no frame has been shown yet", path);
        return -1;
    }
    /* A HiDPI frame has more pixels per inch than a 96 dpi one. */
    return png_write_argb(path, win->pix, win->pix_w, win->pix_h, win->pix_w * 4,
                          96.0 * window_pixel_ratio(win), meta, n_meta, err, errlen);
}

/* ---- events ---- */

void window_push(window *win, const ui_event *ev)
{
    if (win->q_len == win->q_cap) {
        size_t cap = win->q_cap ? win->q_cap * 2 : 16;
        ui_event *q;
        if (cap > SIZE_MAX / sizeof *q) return;
        q = malloc(cap * sizeof *q);
        if (!q) return; /* out of memory: the event is dropped */
        for (size_t i = 0; i < win->q_len; i++) q[i] = win->queue[(win->q_head + i) % win->q_cap];
        free(win->queue);
        win->queue = q;
        win->q_cap = cap;
        win->q_head = 0;
    }
    win->queue[(win->q_head + win->q_len) % win->q_cap] = *ev;
    win->q_len++;
}

static int queue_pop(window *win, ui_event *ev)
{
    if (win->q_len == 0) return 0;
    *ev = win->queue[win->q_head];
    win->q_head = (win->q_head + 1) % win->q_cap;
    win->q_len--;
    return 1;
}

/* Events after which the frame must be laid out and drawn again. */
static int is_redraw_event(const SDL_Event *e)
{
    if (e->type == SDL_RENDER_TARGETS_RESET || e->type == SDL_RENDER_DEVICE_RESET) return 1;
    if (e->type != SDL_WINDOWEVENT) return 0;
    switch (e->window.event) {
    case SDL_WINDOWEVENT_SHOWN:
    case SDL_WINDOWEVENT_EXPOSED:
    case SDL_WINDOWEVENT_RESIZED:
    case SDL_WINDOWEVENT_SIZE_CHANGED:
    case SDL_WINDOWEVENT_MAXIMIZED:
    case SDL_WINDOWEVENT_RESTORED:
    case SDL_WINDOWEVENT_DISPLAY_CHANGED: /* the pixel ratio may have changed */
        return 1;
    default:
        return 0;
    }
}

/* SDL_FilterEvents callback: drops the queued redraw events (one resize is delivered for the
 * burst), remembering a lost device so its textures are recreated. */
static int SDLCALL drop_redraw_events(void *userdata, SDL_Event *e)
{
    window *win = userdata;
    if (!is_redraw_event(e)) return 1;
    if (e->type == SDL_RENDER_DEVICE_RESET) win->texture_lost = 1;
    return 0;
}

static unsigned ui_mods(Uint16 m)
{
    return ((m & KMOD_SHIFT) ? UI_MOD_SHIFT : 0u) | ((m & KMOD_CTRL) ? UI_MOD_CTRL : 0u) |
           ((m & KMOD_ALT) ? UI_MOD_ALT : 0u);
}

struct key_map {
    SDL_Keycode sym;
    uint32_t key;
};

static const struct key_map special_keys[] = {
    {SDLK_UP, UI_KEY_UP},          {SDLK_DOWN, UI_KEY_DOWN},
    {SDLK_LEFT, UI_KEY_LEFT},      {SDLK_RIGHT, UI_KEY_RIGHT},
    {SDLK_PAGEUP, UI_KEY_PGUP},    {SDLK_PAGEDOWN, UI_KEY_PGDN},
    {SDLK_HOME, UI_KEY_HOME},      {SDLK_END, UI_KEY_END},
    {SDLK_RETURN, UI_KEY_ENTER},   {SDLK_RETURN2, UI_KEY_ENTER},
    {SDLK_KP_ENTER, UI_KEY_ENTER}, {SDLK_ESCAPE, UI_KEY_ESC},
    {SDLK_TAB, UI_KEY_TAB},        {SDLK_BACKSPACE, UI_KEY_BACKSPACE},
    {SDLK_DELETE, UI_KEY_DELETE},
};

/* The keypad without NumLock (with it, the keys type digits through SDL_TEXTINPUT). */
static const struct key_map keypad_keys[] = {
    {SDLK_KP_8, UI_KEY_UP},    {SDLK_KP_2, UI_KEY_DOWN}, {SDLK_KP_4, UI_KEY_LEFT},
    {SDLK_KP_6, UI_KEY_RIGHT}, {SDLK_KP_9, UI_KEY_PGUP}, {SDLK_KP_3, UI_KEY_PGDN},
    {SDLK_KP_7, UI_KEY_HOME},  {SDLK_KP_1, UI_KEY_END},  {SDLK_KP_PERIOD, UI_KEY_DELETE},
};

/* The UI_KEY_* of a non-character key, 0 for others. */
static uint32_t special_key(SDL_Keycode sym, Uint16 mod)
{
    if (sym >= SDLK_F1 && sym <= SDLK_F12) return UI_KEY_F1 + (uint32_t)(sym - SDLK_F1);
    for (size_t i = 0; i < sizeof special_keys / sizeof special_keys[0]; i++)
        if (special_keys[i].sym == sym) return special_keys[i].key;
    if (mod & KMOD_NUM) return 0;
    for (size_t i = 0; i < sizeof keypad_keys / sizeof keypad_keys[0]; i++)
        if (keypad_keys[i].sym == sym) return keypad_keys[i].key;
    return 0;
}

/* Next code point of UTF-8 text at *p (advanced); 0 at the end. Malformed bytes are skipped. */
static uint32_t utf8_next(const unsigned char **p)
{
    for (;;) {
        const unsigned char *s = *p;
        uint32_t c;
        int n;
        if (!*s) return 0;
        if (s[0] < 0x80) {
            *p = s + 1;
            return s[0];
        }
        if ((s[0] & 0xe0) == 0xc0)
            c = s[0] & 0x1fu, n = 1;
        else if ((s[0] & 0xf0) == 0xe0)
            c = s[0] & 0x0fu, n = 2;
        else if ((s[0] & 0xf8) == 0xf0)
            c = s[0] & 0x07u, n = 3;
        else {
            *p = s + 1;
            continue;
        }
        int i;
        for (i = 1; i <= n && (s[i] & 0xc0) == 0x80; i++) c = (c << 6) | (s[i] & 0x3fu);
        *p = s + i;
        if (i == n + 1 && c <= 0x10ffff) return c;
    }
}

/* Typed text: one key event per printable code point (an input method may send several). */
static int text_event(window *win, const char *text, ui_event *ev)
{
    const unsigned char *p = (const unsigned char *)text;
    int n = 0;
    uint32_t c;
    while ((c = utf8_next(&p)) != 0) {
        ui_event k = {.type = UI_EV_KEY, .key = c};
        if (c < 0x20 || c == 0x7f) continue;
        if (n++ == 0)
            *ev = k;
        else
            window_push(win, &k);
    }
    return n > 0;
}

static uint32_t ascii_lower(uint32_t c)
{
    return c >= 'A' && c <= 'Z' ? c + 32 : c;
}

/* A key press. Printable keys come through SDL_TEXTINPUT (so the layout decides what '+' is)
 * unless Ctrl or Alt is held; then the press is the event and its text, if any, is dropped so
 * the key arrives once. Right Alt alone whose text differs from the key is AltGr typing. */
static int key_event(const SDL_KeyboardEvent *k, ui_event *ev)
{
    SDL_Keycode sym = k->keysym.sym;
    Uint16 mod = k->keysym.mod;
    unsigned mods = ui_mods(mod);
    uint32_t key = special_key(sym, mod);
    SDL_Event next;
    int text_next;

    if (key) {
        if (key == UI_KEY_TAB && (mods & UI_MOD_SHIFT)) {
            key = UI_KEY_BTAB;
            mods &= ~(unsigned)UI_MOD_SHIFT;
        }
        *ev = (ui_event){.type = UI_EV_KEY, .key = key, .mods = mods};
        return 1;
    }
    if ((sym & SDLK_SCANCODE_MASK) || sym < 0x20 || sym == 0x7f) return 0;
    if (!(mods & (UI_MOD_CTRL | UI_MOD_ALT))) return 0;

    text_next = SDL_PeepEvents(&next, 1, SDL_PEEKEVENT, SDL_FIRSTEVENT, SDL_LASTEVENT) == 1 &&
                next.type == SDL_TEXTINPUT;
    if (text_next) {
        const unsigned char *p = (const unsigned char *)next.text.text;
        uint32_t c = utf8_next(&p);
        int altgr = !(mod & (KMOD_CTRL | KMOD_LALT)) && (mod & KMOD_RALT) &&
                    (ascii_lower(c) != (uint32_t)sym || *p);
        if (altgr) return 0;
        SDL_PeepEvents(&next, 1, SDL_GETEVENT, SDL_TEXTINPUT, SDL_TEXTINPUT);
    }
    *ev = (ui_event){.type = UI_EV_KEY, .key = (uint32_t)sym, .mods = mods};
    return 1;
}

/* Window points (x, y) to figure units: the centre of the point in drawable pixels. */
static void to_pixels(const window *win, int x, int y, ui_event *ev)
{
    double rx, ry;
    pixel_ratios(win, &rx, &ry);
    ev->x = (x + 0.5) * rx;
    ev->y = (y + 0.5) * ry;
}

static int held_button(Uint32 state)
{
    if (state & SDL_BUTTON_LMASK) return 1;
    if (state & SDL_BUTTON_MMASK) return 2;
    if (state & SDL_BUTTON_RMASK) return 3;
    return 0;
}

/* Translates one SDL event; returns 1 with *ev, 0 when it means nothing to pelab. */
static int translate(window *win, SDL_Event *e, ui_event *ev)
{
    *ev = (ui_event){.type = UI_EV_NONE};
    if (is_redraw_event(e)) {
        if (e->type == SDL_RENDER_DEVICE_RESET) win->texture_lost = 1;
        SDL_PumpEvents();
        SDL_FilterEvents(drop_redraw_events, win);
        ev->type = UI_EV_RESIZE;
        return 1;
    }
    switch (e->type) {
    case SDL_QUIT:
        ev->type = UI_EV_QUIT;
        return 1;
    case SDL_TEXTINPUT:
        return text_event(win, e->text.text, ev);
    case SDL_KEYDOWN:
        return key_event(&e->key, ev);
    case SDL_MOUSEBUTTONDOWN:
    case SDL_MOUSEBUTTONUP:
        if (e->button.button < 1 || e->button.button > 3) return 0;
        ev->type = UI_EV_MOUSE;
        ev->mouse = e->type == SDL_MOUSEBUTTONDOWN ? UI_MOUSE_PRESS : UI_MOUSE_RELEASE;
        ev->button = e->button.button;
        ev->mods = ui_mods((Uint16)SDL_GetModState());
        to_pixels(win, e->button.x, e->button.y, ev);
        return 1;
    case SDL_MOUSEMOTION: {
        /* Only the latest of consecutive motions matters. */
        SDL_Event next;
        while (SDL_PeepEvents(&next, 1, SDL_PEEKEVENT, SDL_FIRSTEVENT, SDL_LASTEVENT) == 1 &&
               next.type == SDL_MOUSEMOTION)
            SDL_PeepEvents(e, 1, SDL_GETEVENT, SDL_MOUSEMOTION, SDL_MOUSEMOTION);
        ev->type = UI_EV_MOUSE;
        ev->mouse = UI_MOUSE_MOVE;
        ev->button = held_button(e->motion.state);
        ev->mods = ui_mods((Uint16)SDL_GetModState());
        to_pixels(win, e->motion.x, e->motion.y, ev);
        return 1;
    }
    case SDL_MOUSEWHEEL: {
        Sint32 dy = e->wheel.y;
        if (e->wheel.direction == SDL_MOUSEWHEEL_FLIPPED) dy = -dy;
        if (dy == 0) return 0; /* horizontal scrolling */
        ev->type = UI_EV_MOUSE;
        ev->mouse = dy > 0 ? UI_MOUSE_WHEEL_UP : UI_MOUSE_WHEEL_DOWN;
        ev->mods = ui_mods((Uint16)SDL_GetModState());
#if SDL_VERSION_ATLEAST(2, 26, 0)
        to_pixels(win, e->wheel.mouseX, e->wheel.mouseY, ev);
#else
        {
            int mx = 0, my = 0;
            SDL_GetMouseState(&mx, &my);
            to_pixels(win, mx, my, ev);
        }
#endif
        return 1;
    }
    default:
        return 0;
    }
}

int window_pending(window *win)
{
    if (win->q_len) return 1;
    SDL_PumpEvents();
    /* a key, a click, a resize or the close button; mouse motion (hover) does not stop work */
    return SDL_PeepEvents(NULL, 0, SDL_PEEKEVENT, SDL_QUIT, SDL_WINDOWEVENT) > 0 ||
           SDL_PeepEvents(NULL, 0, SDL_PEEKEVENT, SDL_KEYDOWN, SDL_KEYDOWN) > 0 ||
           SDL_PeepEvents(NULL, 0, SDL_PEEKEVENT, SDL_MOUSEBUTTONDOWN, SDL_MOUSEBUTTONDOWN) > 0 ||
           SDL_PeepEvents(NULL, 0, SDL_PEEKEVENT, SDL_MOUSEWHEEL, SDL_MOUSEWHEEL) > 0;
}

int window_poll(window *win, ui_event *ev, int timeout_ms)
{
    Uint64 deadline = timeout_ms > 0 ? SDL_GetTicks64() + (Uint64)timeout_ms : 0;
    if (queue_pop(win, ev)) return 1;
    for (;;) {
        if (g_sig) { /* a terminating signal: quit, and say which for the exit status */
            g_quit_sig = g_sig;
            g_sig = 0;
            *ev = (ui_event){.type = UI_EV_QUIT};
            return 1;
        }
        SDL_Event e;
        int got;
        if (timeout_ms < 0) {
            /* in steps, so a signal is seen within a quarter second whatever SDL waits in */
            got = SDL_WaitEventTimeout(&e, 250);
            if (!got) continue;
        } else {
            Uint64 now = SDL_GetTicks64();
            /* Past the deadline, still drain what is queued without waiting. */
            got = timeout_ms == 0 || now >= deadline
                      ? SDL_PollEvent(&e)
                      : SDL_WaitEventTimeout(&e, (int)(deadline - now));
        }
        if (!got) return g_sig ? window_poll(win, ev, 0) : 0;
        if (translate(win, &e, ev)) return 1;
    }
}

int window_set_clipboard(window *win, const char *utf8, char *err, size_t errlen)
{
    (void)win;
    if (SDL_SetClipboardText(utf8 ? utf8 : "") != 0) {
        snprintf(err, errlen, "%s", SDL_GetError());
        return -1;
    }
    return 0;
}
