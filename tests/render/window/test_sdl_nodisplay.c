/* test_sdl_nodisplay: without a display the window fails with one line naming it, and neither
 * crashes nor exits; an unusable video driver is SDL's error; nothing is left initialised. */
#define SDL_MAIN_HANDLED
#include <SDL.h>

#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "window.h"

int main(void)
{
    window *win = (window *)&win; /* must come back NULL */
    char err[256] = "";

    unsetenv("DISPLAY");
    unsetenv("WAYLAND_DISPLAY");
    unsetenv("SDL_VIDEODRIVER");
    TAP_OK(window_open(&win, "pelab", 640, 480, err, sizeof err) == -1,
           "no display: window_open returns -1");
    TAP_OK(win == NULL, "no display: no window handed out");
    TAP_OK(strstr(err, "display") != NULL && strchr(err, '\n') == NULL,
           "no display: one line naming the display: %s", err);
    TAP_OK(strstr(err, "pelab") != NULL, "no display: points to the terminal explorer");
    TAP_OK(SDL_WasInit(SDL_INIT_EVERYTHING) == 0, "no display: SDL left uninitialised");

    setenv("DISPLAY", "", 1);
    setenv("SDL_VIDEODRIVER", "x11", 1);
    err[0] = 0;
    TAP_OK(window_open(&win, "pelab", 640, 480, err, sizeof err) == -1 &&
               strstr(err, "display") != NULL,
           "empty DISPLAY with the x11 driver: %s", err);
    unsetenv("DISPLAY");

    setenv("SDL_VIDEODRIVER", "no_such_driver", 1);
    err[0] = 0;
    TAP_OK(window_open(&win, "pelab", 640, 480, err, sizeof err) == -1 && win == NULL,
           "an unknown video driver fails");
    TAP_OK(strstr(err, "SDL could not open a window: ") == err && strchr(err, '\n') == NULL,
           "an unknown video driver: SDL's error in one line: %s", err);
    TAP_OK(SDL_WasInit(SDL_INIT_EVERYTHING) == 0, "unknown driver: SDL left uninitialised");

    setenv("SDL_VIDEODRIVER", "dummy", 1);
    err[0] = 0;
    TAP_OK(window_open(&win, "pelab", 0, 480, err, sizeof err) == -1 && strstr(err, "0x480"),
           "a zero width is refused: %s", err);
    TAP_OK(window_open(&win, "pelab", 640, 0, NULL, 0) == -1, "a NULL err buffer is accepted");
    unsetenv("SDL_VIDEODRIVER");
    TAP_OK(window_open(&win, "pelab", 640, 480, NULL, 0) == -1,
           "no display with a NULL err buffer");
    window_close(NULL);
    TAP_OK(1, "window_close(NULL) is harmless");
    return tap_done();
}
