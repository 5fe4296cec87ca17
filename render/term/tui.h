/* tui.h: the ncurses backend. Draws a cellgrid on the terminal and turns keys, mouse, resizes
 * and signals into ui_events. Only render/backend_tui.c includes <curses.h>.
 *
 * Robustness contract: after tui_open succeeds the terminal is restored by tui_close, by exit()
 * (atexit), on every signal whose default action ends the process (SIGINT, SIGTERM, SIGHUP,
 * SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGPIPE, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF: delivered as
 * UI_EV_QUIT, the app then closes normally and exits with 128 + tui_quit_signal()) and on fatal
 * signals (SIGSEGV, SIGBUS, SIGFPE, SIGABRT, SIGILL, SIGSYS: restore, then re-raise). While the
 * TUI is open stderr is buffered and printed after the terminal is restored. */
#ifndef PELAB_TUI_H
#define PELAB_TUI_H

#include <stddef.h>
#include <stdio.h>

#include "cellgrid.h"
#include "input.h"

typedef enum {
    TUI_COLOR_MONO = 0, /* no colour: shaded ASCII / attributes only */
    TUI_COLOR_8 = 8,
    TUI_COLOR_16 = 16,
    TUI_COLOR_256 = 256,
    TUI_COLOR_DIRECT = 1 << 24,
} tui_color_mode;

typedef struct tui_options {
    FILE *in, *out;   /* NULL = stdin/stdout; tests pass files (newterm) */
    const char *term; /* NULL = $TERM */
    int force_colors; /* 0 = detect (COLORTERM, NO_COLOR, terminfo); else a tui_color_mode + 1 */
    int force_ascii;  /* 1 = ASCII glyphs; 0 = detect from the locale (nl_langinfo CODESET) */
    int no_signals;   /* tests: do not install signal handlers */
} tui_options;

typedef struct tui tui;

/* Start curses. Fails (returns -1 with a message) when in/out is not a terminal and no files
 * were given, or when the terminal type is unknown. */
int tui_open(tui **out, const tui_options *opt, char *err, size_t errlen);
/* Restore the terminal and free; NULL is fine. Prints the buffered stderr afterwards. */
void tui_close(tui *t);
/* The signal that made the last tui_poll return UI_EV_QUIT, 0 when none did (q, end of input):
 * the app's exit status is then 128 + it, as if the signal had ended the process. */
int tui_quit_signal(void);

void tui_size(const tui *t, int *cols, int *rows);
/* TUI_COLOR_DIRECT also when COLORTERM is truecolor/24bit and the terminfo entry has no direct
 * colour: the backend then writes SGR 38;2/48;2 itself (as tmux, vim and btop do). */
tui_color_mode tui_colors(const tui *t);
/* A one-time note for the user when COLORTERM asks for 24-bit colour and this terminal cannot
 * take it (GNU screen, the Linux console, no cursor addressing), or NULL. */
const char *tui_note(const tui *t);
/* What the terminal says of its background: 1 dark, 0 light, -1 unknown (tui_terminal_dark's
 * answer for stdin/stdout, COLORFGBG for the files of tests). The explorer starts in the dark
 * theme on a dark terminal; a page of the terminal's kind is drawn in the terminal's default
 * background. */
int tui_dark(const tui *t);
/* The background of the terminal on stdin/stdout, before tui_open: with ask = 1 and both a
 * terminal (and TERM not one that prints unknown sequences, such as the Linux console) it asks
 * once per process with OSC 11 (tui_query_background, 100 ms at most); a terminal that did not
 * answer falls back on COLORFGBG. Keys typed meanwhile reach the next tui_open. 1 dark, 0 light,
 * -1 unknown. */
int tui_terminal_dark(int ask);
/* Ask the terminal on in_fd/out_fd (in_fd a tty) for its background: "ESC ] 11 ; ?" then a
 * device attributes request ("ESC [ c"), whose reply ends the wait (a terminal that ignores OSC
 * 11 still answers it), reading for up to timeout_ms with echo and line buffering off, then the
 * terminal's modes restored. Bytes that were no reply go to rest (at most rest_size, *n_rest
 * of them). 1 dark, 0 light, -1 no answer. */
int tui_query_background(int in_fd, int out_fd, int timeout_ms, char *rest, size_t rest_size,
                         size_t *n_rest);
int tui_ascii(const tui *t);
/* The grid to draw into, sized to the terminal (resized on UI_EV_RESIZE). */
cellgrid *tui_grid(tui *t);
/* Put the grid on the screen in one write: only changed cells are sent. */
void tui_present(tui *t);
/* Show a terminal cursor at (col, row), or hide it with col < 0. */
void tui_cursor(tui *t, int col, int row);
/* Wait up to timeout_ms (-1 forever, 0 poll) for one event. Key repeat and resize bursts are
 * coalesced: pending resizes collapse into one, and the app is expected to drain events before
 * drawing (see tui_pending). Returns 1 with *ev filled, 0 on timeout (UI_EV_TICK). */
int tui_poll(tui *t, ui_event *ev, int timeout_ms);
/* 1 when more input is already waiting (so the app can skip a redraw). */
int tui_pending(tui *t);

#endif
