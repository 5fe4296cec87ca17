/* window.h: the SDL2 backend. A resizable window showing a scene drawn by cairo (raster.h) at
 * the drawable's pixel size (sharp on HiDPI), with SDL input turned into ui_events in figure
 * units (= drawable pixels). Only render/backend_sdl.c includes <SDL.h>. */
#ifndef PELAB_WINDOW_H
#define PELAB_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "input.h"
#include "raster.h"
#include "scene.h"

typedef struct window window;

/* Open a w x h (window points) resizable window, smaller with the same aspect when that is
 * more than 90% of the display's usable area (never below 160x100). Fails with one line (no
 * display, SDL error) and returns -1; never exits. */
int window_open(window **out, const char *title, int w, int h, char *err, size_t errlen);
void window_close(window *win); /* NULL is fine; quits SDL's video subsystem */
/* The terminating signal that ended the last window's session (a quit event from window_poll),
 * 0 when none: the explorer exits 128+N like the terminal one. */
int window_quit_signal(void);
/* Count the windows' frame buffers (the last frame and its streaming texture, 8 bytes a pixel)
 * in the caller's memory budget: hold when a size is made, release when it goes. Held, never
 * refused: a window cannot show anything without its frame, and it is bounded by the screen; the
 * budget's other users (the views' caches) give way instead. NULL, NULL: not counted. */
void window_set_budget(void (*hold)(size_t bytes), void (*release)(size_t bytes));

/* Drawable size in pixels (what figures are laid out for) and its ratio to window points. */
void window_size(const window *win, int *w, int *h);
double window_pixel_ratio(const window *win);
void window_set_title(window *win, const char *title);
void window_toggle_fullscreen(window *win);

/* Draw s into the back buffer without showing it: cairo, then the upload to the texture and
 * its copy to the renderer. A scene equal to the last one drawn (raster_scene_key) is not drawn
 * or uploaded again: the texture already holds it and is only copied. 0, 1 when minimised
 * (nothing drawn), -1 on error. For benchmarks, which must not wait for vsync; window_present
 * is this and the present. */
int window_draw(window *win, const scene *s);
/* Draw s (built for raster_target at window_size) and show it. Keeps the pixels of the last
 * frame for window_save_png. Returns 0 or -1. */
int window_present(window *win, const scene *s);
/* Save exactly the last presented frame as PNG (png_write_argb, same metadata as exports). */
int window_save_png(window *win, const char *path, const raster_meta *meta, size_t n_meta,
                    char *err, size_t errlen);

/* Put utf8 on the system clipboard (SDL_SetClipboardText). Returns 0, or -1 with the reason
 * (the dummy video driver has no clipboard). */
int window_set_clipboard(window *win, const char *utf8, char *err, size_t errlen);

/* Milliseconds the last window_present took (draw + upload + present; with vsync the present
 * may wait for the display). 0 before the first frame. For benchmarks. */
double window_last_frame_ms(const window *win);
/* Read back what the renderer shows (the last frame's texture copied to the back buffer and read
 * with SDL_RenderReadPixels) into pixels (ARGB32, stride w*4); w x h must be the last frame's
 * size. For tests of the upload path. Returns 0 or -1. */
int window_read_screen(window *win, uint32_t *pixels, int w, int h);

/* Wait up to timeout_ms (-1 forever, 0 poll) for one event; returns 1 with *ev, 0 on timeout.
 * Mouse coordinates are drawable pixels: the centre of the pointed-at window point, so (10, 20)
 * at pixel ratio 1 is (10.5, 20.5). Printable keys arrive once, as the character the keyboard
 * layout typed, with mods 0; with Ctrl or Alt held, as the unshifted key (Ctrl+Shift+a = 'a',
 * CTRL|SHIFT). Non-character keys carry their mods, except shift-Tab = UI_KEY_BTAB; F1..F12 are
 * UI_KEY_F1 + 0..11. Bursts of resize (size, expose, display) events collapse into one. */
int window_poll(window *win, ui_event *ev, int timeout_ms);
/* 1 when a key, click, wheel turn, window event or quit is waiting (motion is not counted), so
 * long work can stop for it; the event stays queued for window_poll. */
int window_pending(window *win);
/* Push a synthetic event (tests inject keys and quit through this). */
void window_push(window *win, const ui_event *ev);
/* How many frames cairo has drawn in this window (a frame equal to the last one is copied, not
 * drawn, and not counted). For tests. */
unsigned long window_draw_count(const window *win);
/* Read back the last presented frame (ARGB32, stride w*4); NULL before the first present. */
const uint32_t *window_pixels(const window *win, int *w, int *h);

#endif
