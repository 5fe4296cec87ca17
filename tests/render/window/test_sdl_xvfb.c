/* test_sdl_xvfb: a real X11 window on a private Xvfb server: open, present, read back what the
 * renderer shows, close. Skips when Xvfb is not installed. The server is started with
 * -displayfd so we know when it is ready, dies with us (PR_SET_PDEATHSIG), and is always
 * killed and reaped before we exit. */
#define _GNU_SOURCE /* dl_iterate_phdr */
#define SDL_MAIN_HANDLED
#include <SDL.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "sdl_common.h"
#include "window.h"

/* LeakSanitizer checks this test too. SDL unloads the libraries it loaded (libdbus, Mesa's GLX
 * and swrast driver) when it quits, and their global pointers to what they keep until exit go
 * with them, which would look like leaks. Taking a reference to every loaded library keeps them
 * mapped, so only real leaks remain. (libdbus's own buffer that SDL 2.26 never frees is
 * suppressed in lsan.supp, through meson.build.) */
static int pin_library(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    if (info->dlpi_name && info->dlpi_name[0])
        (void)dlopen(info->dlpi_name, RTLD_NOW | RTLD_NOLOAD);
    return 0;
}

static int have_xvfb(void)
{
    const char *path = getenv("PATH");
    char buf[4096];
    if (!path) return 0;
    while (*path) {
        size_t n = strcspn(path, ":");
        if (n > 0 && n < sizeof buf - 8) {
            memcpy(buf, path, n);
            memcpy(buf + n, "/Xvfb", 6);
            if (access(buf, X_OK) == 0) return 1;
        }
        path += n + (path[n] == ':');
    }
    return 0;
}

static int display_free(int d)
{
    char p[64];
    struct stat st;
    snprintf(p, sizeof p, "/tmp/.X%d-lock", d);
    if (stat(p, &st) == 0) return 0;
    snprintf(p, sizeof p, "/tmp/.X11-unix/X%d", d);
    return stat(p, &st) != 0;
}

/* Starts Xvfb on display d; returns its pid once it accepts connections, -1 when it failed. */
static pid_t start_xvfb(int d)
{
    int fds[2];
    char disp[16], fdarg[16], buf[32];
    pid_t pid;
    size_t got = 0;
    int ready = 0;
    if (pipe(fds) != 0) return -1;
    snprintf(disp, sizeof disp, ":%d", d);
    snprintf(fdarg, sizeof fdarg, "%d", fds[1]);
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
        close(fds[0]);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
            dup2(null, 2);
        }
        /* -noreset: the server otherwise resets when its last client leaves, and a window opened
         * during the reset (the second one below, on a loaded machine) finds no display */
        execlp("Xvfb", "Xvfb", disp, "-screen", "0", "640x480x24", "-nolisten", "tcp", "-noreset",
               "-displayfd", fdarg, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    /* Xvfb writes its display number to the fd when it is ready; EOF means it gave up. */
    for (;;) {
        struct pollfd pfd = {fds[0], POLLIN, 0};
        ssize_t r;
        int pr = poll(&pfd, 1, 20000);
        if (pr < 0 && errno == EINTR) continue;
        if (pr <= 0) break;
        r = read(fds[0], buf + got, sizeof buf - 1 - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
        if (memchr(buf, '\n', got)) {
            ready = 1;
            break;
        }
        if (got == sizeof buf - 1) break;
    }
    close(fds[0]);
    if (!ready) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return -1;
    }
    return pid;
}

static void stop_xvfb(pid_t pid)
{
    int st;
    kill(pid, SIGTERM);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
}

int main(void)
{
    pid_t xpid = -1;
    int d = -1, w = 0, h = 0, fw, fh;
    char disp[16], err[256] = "";
    window *win = NULL;
    scene s;
    const uint32_t *px;
    uint32_t *screen;

    if (!have_xvfb()) return tap_skip_all("Xvfb is not installed");
    for (int i = 0; i < 100 && xpid < 0; i++) {
        d = 250 + (int)((getpid() + i) % 100);
        if (display_free(d)) xpid = start_xvfb(d);
    }
    if (xpid < 0) return tap_skip_all("could not start Xvfb on a free display :250..:349");
    snprintf(disp, sizeof disp, ":%d", d);
    setenv("DISPLAY", disp, 1);
    unsetenv("WAYLAND_DISPLAY");
    setenv("SDL_VIDEODRIVER", "x11", 1);

    TAP_OK(window_open(&win, "pelab xvfb test", 400, 300, err, sizeof err) == 0,
           "window opens on Xvfb %s: %s", disp, err);
    if (win) {
        ui_event ev;
        scene_init(&s, 0, 0, 0);
        window_size(win, &w, &h);
        TAP_OK(w == 400 && h == 300, "drawable is 400x300 (got %dx%d)", w, h);
        /* The first frame usually comes after the window is exposed. */
        while (window_poll(win, &ev, 0)) {
        }
        TAP_OK(test_scene(&s, w, h) == 0 && window_present(win, &s) == 0, "present");
        px = window_pixels(win, &fw, &fh);
        TAP_OK(px != NULL && fw == w && fh == h, "frame is %dx%d", fw, fh);
        if (px) check_frame(px, fw, fh, "frame");
        screen = calloc((size_t)w * (size_t)h, sizeof *screen);
        TAP_OK(screen && window_read_screen(win, screen, w, h) == 0, "read the screen back");
        if (screen) check_frame(screen, w, h, "screen");
        free(screen);
        scene_free(&s);
        dl_iterate_phdr(pin_library, NULL);
        window_close(win);
        TAP_OK(SDL_WasInit(SDL_INIT_EVERYTHING) == 0, "closed, SDL quit");
    }
    /* a window larger than the 640x480 screen opens at 90% of it, with its aspect */
    win = NULL;
    TAP_OK(window_open(&win, "pelab xvfb test", 1280, 800, err, sizeof err) == 0,
           "a 1280x800 window opens on a 640x480 screen: %s", err);
    if (win) {
        window_size(win, &w, &h);
        TAP_OK(w <= 576 && h <= 432 && w >= 570 && abs(w * 800 - h * 1280) <= 1280,
               "it fits 90%% of the screen with the aspect 1.6 (%dx%d)", w, h);
        window_close(win);
    }
    stop_xvfb(xpid);
    TAP_OK(kill(xpid, 0) != 0, "Xvfb is gone");
    return tap_done();
}
