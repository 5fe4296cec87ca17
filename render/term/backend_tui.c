/* backend_tui.c: the ncursesw backend. The only file that includes <curses.h>.
 *
 * Colour: cells carry 0xRRGGBB. With a direct-colour terminfo entry (ncurses 6 extended colours)
 * those go out as they are. When COLORTERM says truecolor/24bit but no such entry is installed
 * (the usual case: xterm-256color in a 24-bit terminal), the frame's cells are written here as
 * SGR 38;2 / 48;2 sequences, as tmux, vim and btop do; ncurses then only keeps the terminal's
 * modes, the cursor and the input (see sgr_present). Otherwise colours are matched in OKLab to
 * the xterm 256-colour cube and grey ramp or to the 16 or 8 ANSI colours, the pixels of
 * continuous images (heatmaps, CELL_IMAGE_*) with ordered dithering (termcolor.h) and everything
 * else (fills, bars, shading, text) with the one nearest colour, so a flat colour stays flat; or
 * dropped (mono: half-block pixels become shade characters). When the terminal says whether it
 * is dark (its OSC 11 reply, else COLORFGBG), a page of the same kind is left in the terminal's
 * own background.
 * Pairs come from alloc_pair(), so any fg/bg combination gets one.
 *
 * Signals: the handlers only set sig_atomic_t flags and write a byte into a self-pipe, which
 * tui_poll() waits on next to the input, so a signal wakes the poll at once and all curses work
 * happens outside signal context (except for the fatal signals, where endwin() is a best effort
 * before the process dies anyway). Curses is a process-wide singleton, so the state the handlers
 * need is file-static; one tui is open at a time. */
#define NCURSES_WIDECHAR 1
#ifndef _XOPEN_SOURCE_EXTENDED
#define _XOPEN_SOURCE_EXTENDED 1
#endif

#include "termsig.h"
#include "tui.h"

#include "termcolor.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

enum { ESC_DELAY_MS = 25 };

/* Every signal whose default action ends the process (termsig.h): left at the default, each
 * would leave the alternate screen, a hidden cursor, mouse tracking and keypad mode on. The
 * faults restore the terminal and die of the signal; the others become a quit event, the app
 * closes normally, and tui_quit_signal() gives the signal for the exit status. tui_open also
 * touches SIGTSTP, SIGCONT and SIGWINCH; tui_close puts every disposition back. */
enum { N_TOUCHED = TERMSIG_MAX + 3 };

struct tui {
    SCREEN *scr;
    FILE *in, *out;
    int in_fd, out_fd;
    cellgrid grid;
    cellgrid_cell *prev; /* (rows, cols) what the screen shows; compared cell by cell */
    size_t prev_n;
    int full; /* next present repaints everything */
    tui_color_mode mode;
    int ascii;
    int cur_col, cur_row; /* cursor to show, col < 0 hidden */
    int signals;
    struct sigaction saved[N_TOUCHED]; /* dispositions before tui_open */
    int touched[N_TOUCHED], n_touched; /* of these signals */
    int err_saved_fd, err_tmp_fd;      /* stderr while buffered, else -1 */
    int pipe_rd, pipe_wr;              /* self-pipe, else -1 */
    int motion;                        /* we switched on xterm any-motion tracking (1003) */
    int pairs_reset;                   /* alloc_pair ran out during this present */
    int eof;                           /* consecutive "readable but nothing decoded" polls */
    int restored;                      /* endwin done by atexit or a fatal signal */
    ui_event queue[32];                /* decoded but not yet delivered (mouse bursts) */
    int qhead, qlen;
    int dark;       /* the terminal's background: 1 dark, 0 light, -1 unknown (tui_dark) */
    int sgr;        /* direct colour written as SGR sequences by sgr_present, not through ncurses */
    char note[160]; /* tui_note: why COLORTERM's direct colour is not used, or "" */
    char *obuf;     /* sgr_present's output buffer */
    size_t olen, ocap;
};

/* State the signal handlers and atexit need. */
static tui *g_active;
static volatile sig_atomic_t g_quit, g_tstp, g_cont;
static int g_quit_signal; /* the signal that ended the last session, for the exit status */
static volatile sig_atomic_t g_wake_fd = -1;
static struct sigaction g_curses_winch; /* ncurses' own SIGWINCH handler, chained */
static int g_atexit_done;

static void set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* ---- colours --------------------------------------------------------------------------- */

static int color_index(const tui *t, uint32_t rgb)
{
    rgb &= 0xffffff;
    switch (t->mode) {
    case TUI_COLOR_DIRECT:
        /* Direct-colour terminfo entries send values below 8 (or 16) as palette colours; the
         * near-blacks there become (1, 1, b), which no eye tells apart. */
        return (int)(rgb < 16 ? rgb | 0x010100 : rgb);
    case TUI_COLOR_256:
    case TUI_COLOR_16:
    case TUI_COLOR_8:
        return termcolor_nearest(rgb, (int)t->mode);
    default:
        return 0;
    }
}

/* A half-block pixel at (x, y): dithered on a palette terminal when it belongs to a continuous
 * image (termcolor.h), else the one nearest colour (a flat fill must not checkerboard). */
static int pixel_index(const tui *t, uint32_t rgb, int image, int x, int y)
{
    if (!image || t->mode == TUI_COLOR_DIRECT || t->mode == TUI_COLOR_MONO)
        return color_index(t, rgb);
    return termcolor_dither(rgb & 0xffffff, (int)t->mode, x, y);
}

/* The page: the terminal's own background (-1) when the terminal said whether it is dark and the
 * page is the same kind, so pelab does not paint a background of its own over it. */
static int page_index(const tui *t, uint32_t rgb)
{
    rgb &= 0xffffff;
    if (t->dark >= 0 && rgb == (t->grid.background & 0xffffff) &&
        (termcolor_lightness(rgb) < 0.5) == (t->dark == 1))
        return -1;
    return color_index(t, rgb);
}

static int pair_for(tui *t, int fg, int bg)
{
    int p = alloc_pair(fg, bg);
    if (p < 0) {
        /* The table is full: start over; tui_present repaints the frame with fresh pairs. */
        reset_color_pairs();
        t->pairs_reset = 1;
        p = alloc_pair(fg, bg);
    }
    return p < 0 ? 0 : p;
}

/* ---- output ---------------------------------------------------------------------------- */

static int prev_alloc(tui *t)
{
    size_t n = (size_t)t->grid.cols * (size_t)t->grid.rows;
    cellgrid_cell *p = NULL;
    if (n) {
        p = calloc(n, sizeof(*p));
        if (!p) return -1;
    }
    free(t->prev);
    t->prev = p;
    t->prev_n = n;
    t->full = 1;
    return 0;
}

static void draw_cell(tui *t, int row, int col, cellgrid_cell c)
{
    attr_t attr = (c.attr & CELL_BOLD) ? A_BOLD : A_NORMAL;
    int pair = 0;
    if (t->mode == TUI_COLOR_MONO) {
        /* Without colour, pixels show as shade characters by their contrast to the page. */
        uint32_t page = t->grid.background;
        if (c.ch == 0x2580 || (c.ch == ' ' && c.bg != page)) {
            uint32_t px = c.ch == ' ' ? c.bg : ((c.fg & 0xfefefe) >> 1) + ((c.bg & 0xfefefe) >> 1);
            c.ch = cellgrid_shade(px, page);
        }
    } else if (c.ch == 0x2580 || (c.ch == ' ' && c.bg != t->grid.background)) {
        /* pixels (heatmaps, fills): dithered, so gradients show no false bands; a cell whose
         * two pixels dither apart becomes a half block */
        int top = pixel_index(t, c.ch == ' ' ? c.bg : c.fg, c.attr & CELL_IMAGE_TOP, col, 2 * row);
        int bot = pixel_index(t, c.bg, c.attr & CELL_IMAGE_BOTTOM, col, 2 * row + 1);
        if (c.ch == ' ' && top != bot) c.ch = 0x2580;
        pair = pair_for(t, c.ch == ' ' ? bot : top, bot);
    } else {
        pair = pair_for(t, color_index(t, c.fg), page_index(t, c.bg));
    }
    wchar_t wc[2] = {(wchar_t)c.ch, 0};
    /* One column per cell: anything wide, unprintable or outside the locale would shift it. */
    if ((t->ascii && c.ch >= 0x80) || wcwidth(wc[0]) != 1) wc[0] = '?';
    cchar_t cc;
    setcchar(&cc, wc, attr, 0, &pair);
    /* The bottom-right cell returns ERR (the cursor cannot advance) but is drawn. */
    mvwadd_wch(stdscr, row, col, &cc);
}

/* ---- direct colour without a terminfo entry --------------------------------------------- */

static void out_bytes(tui *t, const char *b, size_t n)
{
    if (t->olen + n > t->ocap) {
        size_t cap = t->ocap ? t->ocap : 65536;
        while (cap < t->olen + n) cap *= 2;
        char *p = realloc(t->obuf, cap);
        if (!p) return; /* the frame comes out short; the next full one repairs it */
        t->obuf = p;
        t->ocap = cap;
    }
    memcpy(t->obuf + t->olen, b, n);
    t->olen += n;
}

static void out_fmt(tui *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void out_fmt(tui *t, const char *fmt, ...)
{
    char b[96];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    if (k > 0) out_bytes(t, b, (size_t)k < sizeof b ? (size_t)k : sizeof b - 1);
}

static void out_utf8(tui *t, uint32_t c)
{
    char b[4];
    size_t n;
    if (c < 0x80) {
        b[0] = (char)c;
        n = 1;
    } else if (c < 0x800) {
        b[0] = (char)(0xc0 | c >> 6);
        b[1] = (char)(0x80 | (c & 0x3f));
        n = 2;
    } else if (c < 0x10000) {
        b[0] = (char)(0xe0 | c >> 12);
        b[1] = (char)(0x80 | (c >> 6 & 0x3f));
        b[2] = (char)(0x80 | (c & 0x3f));
        n = 3;
    } else {
        b[0] = (char)(0xf0 | c >> 18);
        b[1] = (char)(0x80 | (c >> 12 & 0x3f));
        b[2] = (char)(0x80 | (c >> 6 & 0x3f));
        b[3] = (char)(0x80 | (c & 0x3f));
        n = 4;
    }
    out_bytes(t, b, n);
}

static void out_flush(tui *t)
{
    for (size_t off = 0; off < t->olen;) {
        ssize_t w = write(t->out_fd, t->obuf + off, t->olen - off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break; /* a closed terminal: nothing more to show */
        off += (size_t)w;
    }
    t->olen = 0;
}

/* The changed cells as cursor moves, SGR 38;2;r;g;b / 48;2;r;g;b and UTF-8, in one write. ncurses
 * draws nothing itself here (stdscr stays blank and untouched, so its refreshes send nothing);
 * the frame ends with the cursor back where ncurses believes it is and the attributes reset, so
 * what ncurses sends next (cursor, endwin) lands as it expects. */
static void sgr_present(tui *t)
{
    cellgrid *g = &t->grid;
    fflush(t->out);
    int at_row = -1, at_col = -1; /* where the terminal's cursor is, -1 unknown */
    long cur_fg = -2, cur_bg = -2, cur_bold = -1;
    for (int row = 0; row < g->rows; row++)
        for (int col = 0; col < g->cols; col++) {
            size_t i = (size_t)row * (size_t)g->cols + (size_t)col;
            cellgrid_cell c = g->cells[i];
            const cellgrid_cell *p = &t->prev[i];
            if (!t->full && c.ch == p->ch && c.fg == p->fg && c.bg == p->bg && c.attr == p->attr)
                continue;
            if (row != at_row || col != at_col) out_fmt(t, "\033[%d;%dH", row + 1, col + 1);
            long fg = (long)(c.fg & 0xffffff),
                 bg = page_index(t, c.bg) < 0 ? -1 : (long)(c.bg & 0xffffff);
            long bold = (c.attr & CELL_BOLD) != 0;
            if (bold != cur_bold) {
                out_fmt(t, "\033[%sm", bold ? "1" : "22");
                cur_bold = bold;
            }
            if (fg != cur_fg) {
                out_fmt(t, "\033[38;2;%ld;%ld;%ldm", fg >> 16, fg >> 8 & 0xff, fg & 0xff);
                cur_fg = fg;
            }
            if (bg != cur_bg) {
                if (bg < 0)
                    out_fmt(t, "\033[49m");
                else
                    out_fmt(t, "\033[48;2;%ld;%ld;%ldm", bg >> 16, bg >> 8 & 0xff, bg & 0xff);
                cur_bg = bg;
            }
            wchar_t wc = (wchar_t)c.ch;
            if ((t->ascii && c.ch >= 0x80) || wcwidth(wc) != 1) c.ch = '?';
            out_utf8(t, c.ch);
            at_row = row;
            at_col = col + 1;
            if (at_col >= g->cols) at_row = -1; /* pending wrap: position it anew */
        }
    if (t->olen) {
        int y, x;
        getyx(curscr, y, x);
        if (y < 0 || x < 0) y = x = 0;
        out_fmt(t, "\033[0m\033[%d;%dH", y + 1, x + 1);
    }
    out_flush(t);
}

void tui_present(tui *t)
{
    if (!t || !t->scr) return;
    cellgrid *g = &t->grid;
    size_t n = (size_t)g->cols * (size_t)g->rows;
    if (n != t->prev_n && prev_alloc(t) != 0) return;
    if (t->sgr) sgr_present(t);
    for (int attempt = 0; attempt < 2 && !t->sgr; attempt++) {
        t->pairs_reset = 0;
        for (int row = 0; row < g->rows; row++) {
            for (int col = 0; col < g->cols; col++) {
                size_t i = (size_t)row * (size_t)g->cols + (size_t)col;
                const cellgrid_cell *c = &g->cells[i], *p = &t->prev[i];
                if (!t->full && c->ch == p->ch && c->fg == p->fg && c->bg == p->bg &&
                    c->attr == p->attr)
                    continue;
                draw_cell(t, row, col, *c);
            }
        }
        if (!t->pairs_reset) break;
        /* Pairs of cells drawn before the reset now mean other colours. */
        t->full = 1;
        clearok(curscr, TRUE);
    }
    if (n) memcpy(t->prev, g->cells, n * sizeof(cellgrid_cell));
    t->full = 0;
    if (t->cur_col >= 0 && t->cur_col < g->cols && t->cur_row >= 0 && t->cur_row < g->rows) {
        leaveok(stdscr, FALSE);
        curs_set(1);
        wmove(stdscr, t->cur_row, t->cur_col);
    } else {
        leaveok(stdscr, TRUE);
        curs_set(0);
    }
    wnoutrefresh(stdscr);
    doupdate();
}

void tui_cursor(tui *t, int col, int row)
{
    if (!t) return;
    t->cur_col = col;
    t->cur_row = row;
}

/* ---- signals, stderr, restoring -------------------------------------------------------- */

static void wake(void)
{
    int e = errno;
    int fd = g_wake_fd;
    if (fd >= 0) {
        ssize_t r = write(fd, "", 1);
        (void)r; /* a full pipe already wakes the poll */
    }
    errno = e;
}

static void on_quit(int sig)
{
    g_quit = sig;
    wake();
}

static void on_tstp(int sig)
{
    (void)sig;
    g_tstp = 1;
    wake();
}

static void on_cont(int sig)
{
    (void)sig;
    g_cont = 1;
    wake();
}

static void on_winch(int sig)
{
    /* ncurses' handler records the resize that wgetch turns into KEY_RESIZE. */
    if (g_curses_winch.sa_handler != SIG_DFL && g_curses_winch.sa_handler != SIG_IGN &&
        !(g_curses_winch.sa_flags & SA_SIGINFO))
        g_curses_winch.sa_handler(sig);
    wake();
}

static const char motion_off[] = "\033[?1003l";
static const char motion_on[] = "\033[?1003h";

/* Put stderr back and print what was buffered. Only fd calls: also used from a fatal handler. */
static void stderr_restore(tui *t)
{
    if (t->err_saved_fd < 0) return;
    dup2(t->err_saved_fd, 2);
    close(t->err_saved_fd);
    t->err_saved_fd = -1;
    if (lseek(t->err_tmp_fd, 0, SEEK_SET) == 0) {
        char buf[4096];
        ssize_t n;
        while ((n = read(t->err_tmp_fd, buf, sizeof(buf))) > 0) {
            for (ssize_t off = 0; off < n;) {
                ssize_t w = write(2, buf + off, (size_t)(n - off));
                if (w <= 0) break;
                off += w;
            }
        }
    }
    close(t->err_tmp_fd);
    t->err_tmp_fd = -1;
}

static void stderr_buffer(tui *t)
{
    t->err_saved_fd = t->err_tmp_fd = -1;
    if (!isatty(2)) return; /* only a terminal needs protecting from stray writes */
    fflush(stderr);
    FILE *tmp = tmpfile();
    if (!tmp) return;
    int tfd = dup(fileno(tmp));
    fclose(tmp);
    if (tfd < 0) return;
    int saved = dup(2);
    if (saved < 0 || dup2(tfd, 2) < 0) {
        if (saved >= 0) close(saved);
        close(tfd);
        return;
    }
    t->err_saved_fd = saved;
    t->err_tmp_fd = tfd;
}

static void motion_set(tui *t, int on)
{
    if (!t->motion) return;
    const char *s = on ? motion_on : motion_off;
    fflush(t->out);
    ssize_t r = write(t->out_fd, s, strlen(s));
    (void)r;
}

/* Leave curses mode without freeing anything (atexit, fatal signals). */
static void restore_terminal(tui *t)
{
    if (t->restored) return;
    t->restored = 1;
    motion_set(t, 0);
    endwin();
    stderr_restore(t);
}

static void on_fatal(int sig)
{
    tui *t = g_active;
    if (t) restore_terminal(t);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void at_exit(void)
{
    if (g_active) restore_terminal(g_active);
}

static void handler_set(int sig, void (*fn)(int), int flags)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = fn;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = flags;
    sigaction(sig, &sa, NULL);
}

static void signals_save(tui *t)
{
    t->n_touched = termsig_list(t->touched);
    t->touched[t->n_touched++] = SIGTSTP;
    t->touched[t->n_touched++] = SIGCONT;
    t->touched[t->n_touched++] = SIGWINCH;
    for (int i = 0; i < t->n_touched; i++) sigaction(t->touched[i], NULL, &t->saved[i]);
}

static void signals_restore(tui *t)
{
    for (int i = 0; i < t->n_touched; i++) sigaction(t->touched[i], &t->saved[i], NULL);
}

static void signals_install(void)
{
    /* newterm() put in its own SIGWINCH handler; keep it as the first link of ours. */
    sigaction(SIGWINCH, NULL, &g_curses_winch);
    int sigs[TERMSIG_MAX];
    int n = termsig_list(sigs);
    for (int i = 0; i < n; i++) {
        if (termsig_is_fault(sigs[i]))
            handler_set(sigs[i], on_fatal, SA_RESETHAND | SA_NODEFER);
        else
            handler_set(sigs[i], on_quit, 0);
    }
    handler_set(SIGTSTP, on_tstp, SA_RESTART);
    handler_set(SIGCONT, on_cont, SA_RESTART);
    handler_set(SIGWINCH, on_winch, SA_RESTART);
}

/* Ctrl-Z: leave curses, stop for real, and come back repainted. */
static void suspend(tui *t)
{
    motion_set(t, 0);
    endwin();
    struct sigaction dfl, old;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGTSTP, &dfl, &old);
    raise(SIGTSTP); /* stops here until SIGCONT */
    sigaction(SIGTSTP, &old, NULL);
    g_cont = 0;
    wrefresh(curscr);        /* back into curses mode and repaint what it shows */
    if (t->sgr) t->full = 1; /* ncurses repainted a blank screen: the frame goes out whole */
    motion_set(t, 1);
}

/* ---- opening --------------------------------------------------------------------------- */

static int env_set(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

static int locale_is_utf8(void)
{
    const char *cs = nl_langinfo(CODESET);
    return cs && (!strcasecmp(cs, "UTF-8") || !strcasecmp(cs, "UTF8"));
}

/* Whether a terminfo entry named name is installed, looked up where ncurses looks (directory
 * trees only). Used to probe an optional entry before newterm(), whose failure leaks. */
static int terminfo_exists(const char *name)
{
    char dirs[4096] = "";
    const char *ti = getenv("TERMINFO"), *home = getenv("HOME"), *tid = getenv("TERMINFO_DIRS");
    size_t k = 0;
    if (ti && *ti) k += (size_t)snprintf(dirs + k, sizeof(dirs) - k, "%s:", ti);
    if (home && *home && k < sizeof(dirs))
        k += (size_t)snprintf(dirs + k, sizeof(dirs) - k, "%s/.terminfo:", home);
    if (tid && *tid && k < sizeof(dirs))
        k += (size_t)snprintf(dirs + k, sizeof(dirs) - k, "%s:", tid);
    if (k < sizeof(dirs))
        snprintf(dirs + k, sizeof(dirs) - k,
                 "/etc/terminfo:/lib/terminfo:/usr/share/terminfo:"
                 "/usr/lib/terminfo:/usr/local/share/terminfo");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char path[4200];
        snprintf(path, sizeof(path), "%s/%c/%s", d, name[0], name);
        if (access(path, R_OK) == 0) return 1;
        snprintf(path, sizeof(path), "%s/%02x/%s", d, (unsigned char)name[0], name);
        if (access(path, R_OK) == 0) return 1;
    }
    return 0;
}

/* The direct-colour sibling of a terminal type: xterm-256color -> xterm-direct. */
static void direct_name(const char *term, char *buf, size_t n)
{
    size_t len = strcspn(term, "-");
    snprintf(buf, n, "%.*s-direct", (int)len, term);
}

/* COLORTERM says 24-bit but the terminfo entry has no direct colour: write SGR 38;2 ourselves,
 * except where that cannot work, which tui_note says once. */
static void sgr_decide(tui *t, const char *term)
{
    const char *why = NULL;
    const char *cup = tigetstr("cup");
    if (!cup || cup == (char *)-1)
        why = "its terminfo entry has no cursor addressing";
    else if (!strncmp(term, "linux", 5) || !strncmp(term, "cons", 4))
        why = "the console shows 16 colours";
    else if ((getenv("STY") && !getenv("TMUX")) || (!strncmp(term, "screen", 6) && !getenv("TMUX")))
        why = "GNU screen passes no 24-bit colour";
    if (why) {
        snprintf(t->note, sizeof t->note, "COLORTERM=%s but TERM=%s: %s; %d colours",
                 getenv("COLORTERM"), term, why, (int)t->mode);
        return;
    }
    t->sgr = 1;
    t->mode = TUI_COLOR_DIRECT;
}

static void handle_resize(tui *t)
{
    int rows, cols;
    getmaxyx(stdscr, rows, cols);
    if (rows < 0) rows = 0;
    if (cols < 0) cols = 0;
    if (cols != t->grid.cols || rows != t->grid.rows) {
        if (cellgrid_resize(&t->grid, cols, rows) != 0) cellgrid_resize(&t->grid, 0, 0);
    }
    prev_alloc(t);
    if (t->sgr) {
        /* ncurses' resize touched stdscr: keep its (blank) refresh from sending anything, and
         * repaint the whole frame in SGR */
        untouchwin(stdscr);
        fputs("\033[0m\033[2J", t->out);
        fflush(t->out);
    } else {
        clearok(curscr, TRUE);
    }
}

/* ---- the terminal's background (OSC 11) ----------------------------------------------- */

static long long now_ms(void);

/* Where a complete reply to the device attributes request (ESC [ ? digits and ; then c) ends in
 * b[0..n), past its 'c'; 0 when there is none. */
static size_t da1_end(const char *b, size_t n, size_t from)
{
    if (from + 3 > n || memcmp(b + from, "\033[?", 3) != 0) return 0;
    size_t i = from + 3;
    while (i < n && ((b[i] >= '0' && b[i] <= '9') || b[i] == ';')) i++;
    return i < n && b[i] == 'c' ? i + 1 : 0;
}

/* Where an OSC reply starting at from ends (past its BEL or ESC \), 0 when incomplete. */
static size_t osc_end(const char *b, size_t n, size_t from)
{
    if (from + 2 > n || memcmp(b + from, "\033]", 2) != 0) return 0;
    for (size_t i = from + 2; i < n; i++) {
        if (b[i] == '\a') return i + 1;
        if (b[i] == '\033') return i + 1 < n && b[i + 1] == '\\' ? i + 2 : 0;
    }
    return 0;
}

static int has_da1(const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (da1_end(b, n, i)) return 1;
    return 0;
}

int tui_query_background(int in_fd, int out_fd, int timeout_ms, char *rest, size_t rest_size,
                         size_t *n_rest)
{
    *n_rest = 0;
    struct termios saved, raw;
    if (tcgetattr(in_fd, &saved) != 0) return -1;
    /* no echo (the replies never show) and no line buffering, for the query only */
    raw = saved;
    raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    if (tcsetattr(in_fd, TCSANOW, &raw) != 0) return -1;
    /* the background query, then a device attributes request that every terminal answers, in
     * order: its reply says the terminal is done, so one that ignores OSC 11 costs no timeout */
    static const char query[] = "\033]11;?\a\033[c";
    size_t sent = 0;
    while (sent < sizeof query - 1) {
        ssize_t k = write(out_fd, query + sent, sizeof query - 1 - sent);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        sent += (size_t)k;
    }
    char buf[512];
    size_t n = 0;
    long long deadline = now_ms() + timeout_ms;
    while (sent == sizeof query - 1 && n < sizeof buf && !has_da1(buf, n)) {
        long long left = deadline - now_ms();
        if (left <= 0) break;
        struct pollfd pf = {.fd = in_fd, .events = POLLIN};
        int r = poll(&pf, 1, (int)left);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        ssize_t k = read(in_fd, buf + n, sizeof buf - n);
        if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (k <= 0) break;
        n += (size_t)k;
    }
    tcsetattr(in_fd, TCSANOW, &saved);
    /* the replies out; whatever else came (keys typed meanwhile) is the caller's to keep */
    int dark = -1;
    for (size_t i = 0; i < n;) {
        size_t e = osc_end(buf, n, i);
        if (e) {
            int d = termcolor_osc11_dark(buf + i, e - i);
            if (d >= 0) dark = d;
            i = e;
        } else if ((e = da1_end(buf, n, i)) != 0) {
            i = e;
        } else {
            if (*n_rest < rest_size) rest[(*n_rest)++] = buf[i];
            i++;
        }
    }
    return dark;
}

/* Terminals known to print an OSC they do not know as text (the Linux console shows "11;?"). */
static int term_takes_osc(const char *term)
{
    static const char *const plain[] = {"linux", "dumb", "cons25", "vt52", "vt100", "vt220"};
    if (!term || !*term) return 0;
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
        if (strncmp(term, plain[i], strlen(plain[i])) == 0) return 0;
    return 1;
}

/* The answer, asked once per process: a second query could meet the user's typing. */
static struct {
    int asked, dark;
    char rest[64]; /* bytes read during the query that were no reply: typed keys */
    size_t n_rest;
} g_background = {0, -1, "", 0};

enum { BACKGROUND_QUERY_MS = 100 };

int tui_terminal_dark(int ask)
{
    if (ask && !g_background.asked && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO) &&
        term_takes_osc(getenv("TERM"))) {
        g_background.asked = 1;
        g_background.dark =
            tui_query_background(STDIN_FILENO, STDOUT_FILENO, BACKGROUND_QUERY_MS,
                                 g_background.rest, sizeof g_background.rest, &g_background.n_rest);
    }
    if (g_background.dark >= 0) return g_background.dark;
    return termcolor_colorfgbg_dark(getenv("COLORFGBG"));
}

int tui_open(tui **out, const tui_options *opt, char *err, size_t errlen)
{
    *out = NULL;
    tui_options o;
    memset(&o, 0, sizeof(o));
    if (opt) o = *opt;
    if (g_active) {
        set_err(err, errlen, "the terminal interface is already open");
        return -1;
    }
    FILE *in = o.in ? o.in : stdin, *outf = o.out ? o.out : stdout;
    if (!o.in && !isatty(fileno(in))) {
        set_err(err, errlen, "standard input is not a terminal: the interactive view needs one");
        return -1;
    }
    if (!o.out && !isatty(fileno(outf))) {
        set_err(err, errlen, "standard output is not a terminal: the interactive view needs one");
        return -1;
    }
    const char *term = o.term ? o.term : getenv("TERM");
    if (!term || !*term) {
        set_err(err, errlen, "TERM is not set: the terminal type is needed to draw");
        return -1;
    }
    int forced = o.force_colors > 0 ? o.force_colors - 1 : -1;
    if (forced >= 0 && forced != TUI_COLOR_MONO && forced != TUI_COLOR_8 &&
        forced != TUI_COLOR_16 && forced != TUI_COLOR_256 && forced != TUI_COLOR_DIRECT) {
        set_err(err, errlen, "force_colors %d: allowed are 0 (detect) or a tui_color_mode + 1",
                o.force_colors);
        return -1;
    }
    const char *ct = getenv("COLORTERM");
    int truecolor = ct && (!strcasecmp(ct, "truecolor") || !strcasecmp(ct, "24bit"));
    int no_color = env_set("NO_COLOR");
    int want_direct = forced == TUI_COLOR_DIRECT || (forced < 0 && !no_color && truecolor);

    tui *t = calloc(1, sizeof(*t));
    if (!t) {
        set_err(err, errlen, "out of memory opening the terminal");
        return -1;
    }
    t->in = in;
    t->out = outf;
    t->in_fd = fileno(in);
    t->out_fd = fileno(outf);
    t->err_saved_fd = t->err_tmp_fd = t->pipe_rd = t->pipe_wr = -1;
    t->cur_col = -1;
    t->ascii = o.force_ascii || !locale_is_utf8();
    t->signals = !o.no_signals;
    /* the terminal's own answer when the caller asked it (tui_terminal_dark), else COLORFGBG */
    t->dark = o.in || o.out ? termcolor_colorfgbg_dark(getenv("COLORFGBG")) : tui_terminal_dark(0);

    int pfd[2] = {-1, -1};
    if (pipe(pfd) != 0 || cellgrid_init(&t->grid, 0, 0, t->ascii) != 0) {
        set_err(err, errlen, "cannot create the signal pipe: %s", strerror(errno));
        if (pfd[0] >= 0) close(pfd[0]);
        if (pfd[1] >= 0) close(pfd[1]);
        free(t);
        return -1;
    }
    t->pipe_rd = pfd[0];
    t->pipe_wr = pfd[1];
    for (int i = 0; i < 2; i++) {
        fcntl(pfd[i], F_SETFL, fcntl(pfd[i], F_GETFL) | O_NONBLOCK);
        fcntl(pfd[i], F_SETFD, FD_CLOEXEC);
    }

    /* A direct-colour entry of the same family when the terminal says it does 24-bit colour;
     * if there is none, the terminal's own entry (256 colours). Nothing has been sent to the
     * terminal before newterm() succeeds, so a failure leaves it as it was. */
    signals_save(t);
    char dname[128];
    if (want_direct && !strstr(term, "direct")) {
        direct_name(term, dname, sizeof(dname));
        if (terminfo_exists(dname)) t->scr = newterm(dname, outf, in);
    }
    if (!t->scr) t->scr = newterm(term, outf, in);
    if (!t->scr) {
        signals_restore(t);
        close(t->pipe_rd);
        close(t->pipe_wr);
        cellgrid_free(&t->grid);
        free(t);
        set_err(err, errlen, "TERM=%s: no terminfo entry for this terminal type", term);
        return -1;
    }
    set_term(t->scr);

    set_escdelay(ESC_DELAY_MS);
    cbreak();
    noecho();
    nonl();
    intrflush(stdscr, FALSE);
    keypad(stdscr, TRUE);
    meta(stdscr, TRUE);
    leaveok(stdscr, TRUE);
    curs_set(0);

    if (forced >= 0)
        t->mode = (tui_color_mode)forced;
    else if (no_color)
        t->mode = TUI_COLOR_MONO;
    else
        t->mode = TUI_COLOR_DIRECT; /* narrowed below to what the terminal has */
    if (t->mode != TUI_COLOR_MONO) {
        if (!has_colors() || start_color() != OK) {
            t->mode = TUI_COLOR_MONO;
        } else {
            use_default_colors(); /* pair 0 is the terminal's own colours between frames */
            int ncol = COLORS;
            tui_color_mode best = ncol >= 0x1000000 ? TUI_COLOR_DIRECT
                                  : ncol >= 256     ? TUI_COLOR_256
                                  : ncol >= 16      ? TUI_COLOR_16
                                  : ncol >= 8       ? TUI_COLOR_8
                                                    : TUI_COLOR_MONO;
            if ((int)t->mode > (int)best) t->mode = best;
            /* A truecolor terminal on an entry without direct colour: SGR written here. */
            if (want_direct && t->mode != TUI_COLOR_DIRECT) sgr_decide(t, term);
        }
    }

    /* Home and End as every common terminal sends them, whatever TERM claims: tmux and screen
     * send ESC [1~ and ESC [4~ while an xterm-256color entry expects ESC OH (a Home read as ESC,
     * '[', '1', '~' would switch to view 1); xterm sends ESC [H / ESC OH, rxvt ESC [7~ / ESC [8~.
     * define_key leaves a sequence the entry already has as it is. */
    static const struct {
        const char *seq;
        int code;
    } extra_keys[] = {{"\033[1~", KEY_HOME}, {"\033[4~", KEY_END}, {"\033[H", KEY_HOME},
                      {"\033[F", KEY_END},   {"\033OH", KEY_HOME}, {"\033OF", KEY_END},
                      {"\033[7~", KEY_HOME}, {"\033[8~", KEY_END}};
    for (size_t i = 0; i < sizeof extra_keys / sizeof extra_keys[0]; i++)
        if (key_defined(extra_keys[i].seq) == 0) define_key(extra_keys[i].seq, extra_keys[i].code);

    /* keys typed while the background query waited: in again, first out first */
    if (!o.in) {
        for (size_t i = g_background.n_rest; i-- > 0;) ungetch((unsigned char)g_background.rest[i]);
        g_background.n_rest = 0;
    }

    mouseinterval(0); /* presses and releases as they come, no click synthesis delay */
    mmask_t want = ALL_MOUSE_EVENTS | REPORT_MOUSE_POSITION;
    if (mousemask(want, NULL) != 0) {
        /* ncurses' xterm mouse mode reports buttons only; motion needs any-event tracking. */
        const char *km = tigetstr("kmous");
        if (km && km != (char *)-1 && !strncmp(km, "\033[", 2)) t->motion = 1;
    }

    handle_resize(t);
    stderr_buffer(t);
    g_wake_fd = t->pipe_wr;
    g_quit = g_tstp = g_cont = 0;
    g_quit_signal = 0;
    if (t->signals) signals_install();
    if (!g_atexit_done) {
        atexit(at_exit);
        g_atexit_done = 1;
    }
    g_active = t;
    wnoutrefresh(stdscr);
    doupdate();
    motion_set(t, 1);
    *out = t;
    return 0;
}

void tui_close(tui *t)
{
    if (!t) return;
    if (t->scr) {
        set_term(t->scr);
        if (!t->restored) {
            motion_set(t, 0);
            curs_set(1);
            endwin();
        }
        delscreen(t->scr);
        t->scr = NULL;
    }
    signals_restore(t);
    g_wake_fd = -1;
    if (g_active == t) g_active = NULL;
    stderr_restore(t);
    if (t->pipe_rd >= 0) close(t->pipe_rd);
    if (t->pipe_wr >= 0) close(t->pipe_wr);
    cellgrid_free(&t->grid);
    free(t->prev);
    free(t->obuf);
    free(t);
}

const char *tui_note(const tui *t)
{
    return t && t->note[0] ? t->note : NULL;
}

int tui_quit_signal(void)
{
    return g_quit_signal;
}

void tui_size(const tui *t, int *cols, int *rows)
{
    if (cols) *cols = t ? t->grid.cols : 0;
    if (rows) *rows = t ? t->grid.rows : 0;
}

int tui_dark(const tui *t)
{
    return t ? t->dark : -1;
}

tui_color_mode tui_colors(const tui *t)
{
    return t ? t->mode : TUI_COLOR_MONO;
}

int tui_ascii(const tui *t)
{
    return t ? t->ascii : 1;
}

cellgrid *tui_grid(tui *t)
{
    return &t->grid;
}

/* ---- input ----------------------------------------------------------------------------- */

static void key_event(ui_event *ev, uint32_t key, unsigned mods)
{
    ev->type = UI_EV_KEY;
    ev->key = key;
    ev->mods = mods;
}

/* A character (not a curses key code) as a key, with control characters decoded. */
static void char_event(ui_event *ev, wint_t c, unsigned mods)
{
    switch (c) {
    case '\r':
    case '\n':
        key_event(ev, UI_KEY_ENTER, mods);
        return;
    case '\t':
        key_event(ev, UI_KEY_TAB, mods);
        return;
    case 127:
    case 8:
        key_event(ev, UI_KEY_BACKSPACE, mods);
        return;
    case 27:
        key_event(ev, UI_KEY_ESC, mods);
        return;
    case 0:
        key_event(ev, ' ', mods | UI_MOD_CTRL);
        return;
    default:
        break;
    }
    if (c >= 1 && c <= 26) {
        key_event(ev, (uint32_t)('a' + c - 1), mods | UI_MOD_CTRL);
    } else if (c >= 28 && c <= 31) {
        key_event(ev, (uint32_t)("\\]^_"[c - 28]), mods | UI_MOD_CTRL);
    } else {
        key_event(ev, (uint32_t)c, mods);
    }
}

/* xterm's modified cursor keys (kUP5 = ctrl-up, ...), known to ncurses by extended name. */
static int modified_key(int code, ui_event *ev)
{
    static const struct {
        const char *name;
        uint32_t key;
    } base[] = {{"kUP", UI_KEY_UP},     {"kDN", UI_KEY_DOWN},  {"kLFT", UI_KEY_LEFT},
                {"kRIT", UI_KEY_RIGHT}, {"kHOM", UI_KEY_HOME}, {"kEND", UI_KEY_END},
                {"kPRV", UI_KEY_PGUP},  {"kNXT", UI_KEY_PGDN}, {"kDC", UI_KEY_DELETE}};
    const char *name = keyname(code);
    if (!name) return 0;
    for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++) {
        size_t n = strlen(base[i].name);
        if (strncmp(name, base[i].name, n) != 0) continue;
        int m = name[n] >= '2' && name[n] <= '8' && !name[n + 1] ? name[n] - '1' : -1;
        if (m < 0) continue;
        /* xterm's modifier parameter minus one: 1 shift, 2 alt, 4 ctrl. */
        unsigned mods =
            ((m & 1) ? UI_MOD_SHIFT : 0) | ((m & 2) ? UI_MOD_ALT : 0) | ((m & 4) ? UI_MOD_CTRL : 0);
        key_event(ev, base[i].key, mods);
        return 1;
    }
    return 0;
}

static int mouse_decode(const MEVENT *m, ui_event *ev)
{
    mmask_t b = m->bstate;
    ev->type = UI_EV_MOUSE;
    ev->x = m->x + 0.5; /* the cell's centre in figure units */
    ev->y = 2.0 * m->y + 1.0;
    ev->mods = ((b & BUTTON_SHIFT) ? UI_MOD_SHIFT : 0) | ((b & BUTTON_CTRL) ? UI_MOD_CTRL : 0) |
               ((b & BUTTON_ALT) ? UI_MOD_ALT : 0);
    ev->button = 0;
    if (b & BUTTON4_PRESSED) {
        ev->mouse = UI_MOUSE_WHEEL_UP;
        return 1;
    }
#ifdef BUTTON5_PRESSED
    if (b & BUTTON5_PRESSED) {
        ev->mouse = UI_MOUSE_WHEEL_DOWN;
        return 1;
    }
#endif
    static const struct {
        mmask_t press, release, click;
    } btn[3] = {{BUTTON1_PRESSED, BUTTON1_RELEASED, BUTTON1_CLICKED | BUTTON1_DOUBLE_CLICKED},
                {BUTTON2_PRESSED, BUTTON2_RELEASED, BUTTON2_CLICKED | BUTTON2_DOUBLE_CLICKED},
                {BUTTON3_PRESSED, BUTTON3_RELEASED, BUTTON3_CLICKED | BUTTON3_DOUBLE_CLICKED}};
    for (int i = 0; i < 3; i++) {
        if (b & (btn[i].press | btn[i].click)) {
            ev->mouse = UI_MOUSE_PRESS;
            ev->button = i + 1;
            return 1;
        }
        if (b & btn[i].release) {
            ev->mouse = UI_MOUSE_RELEASE;
            ev->button = i + 1;
            return 1;
        }
    }
    if (b & REPORT_MOUSE_POSITION) {
        ev->mouse = UI_MOUSE_MOVE;
        return 1;
    }
    return 0;
}

static void queue_push(tui *t, const ui_event *ev)
{
    int n = (int)(sizeof(t->queue) / sizeof(t->queue[0]));
    if (t->qlen == n) return; /* a flood of motion: the oldest pending ones are enough */
    t->queue[(t->qhead + t->qlen) % n] = *ev;
    t->qlen++;
}

static int queue_pop(tui *t, ui_event *ev)
{
    if (!t->qlen) return 0;
    *ev = t->queue[t->qhead];
    t->qhead = (t->qhead + 1) % (int)(sizeof(t->queue) / sizeof(t->queue[0]));
    t->qlen--;
    return 1;
}

/* Mouse reports that arrive together (a fast click, a drag) are read by ncurses in one go and
 * handed out newest first, so take them all and queue them oldest first. */
static int mouse_event(tui *t, ui_event *ev)
{
    MEVENT me[32];
    int n = 0;
    while (n < 32 && getmouse(&me[n]) == OK) n++;
    for (int i = n - 1; i >= 0; i--) {
        ui_event e;
        memset(&e, 0, sizeof(e));
        if (mouse_decode(&me[i], &e)) queue_push(t, &e);
    }
    return queue_pop(t, ev);
}

/* ncurses key codes that map one to one onto pelab keys. */
static const struct {
    int curses;
    uint32_t key;
    uint32_t mods;
} curses_keys[] = {
    {KEY_UP, UI_KEY_UP, 0},
    {KEY_DOWN, UI_KEY_DOWN, 0},
    {KEY_LEFT, UI_KEY_LEFT, 0},
    {KEY_RIGHT, UI_KEY_RIGHT, 0},
    {KEY_SR, UI_KEY_UP, UI_MOD_SHIFT},
    {KEY_SF, UI_KEY_DOWN, UI_MOD_SHIFT},
    {KEY_SLEFT, UI_KEY_LEFT, UI_MOD_SHIFT},
    {KEY_SRIGHT, UI_KEY_RIGHT, UI_MOD_SHIFT},
    {KEY_PPAGE, UI_KEY_PGUP, 0},
    {KEY_NPAGE, UI_KEY_PGDN, 0},
    {KEY_HOME, UI_KEY_HOME, 0},
    {KEY_END, UI_KEY_END, 0},
    {KEY_SHOME, UI_KEY_HOME, UI_MOD_SHIFT},
    {KEY_SEND, UI_KEY_END, UI_MOD_SHIFT},
    {KEY_ENTER, UI_KEY_ENTER, 0},
    {KEY_BTAB, UI_KEY_BTAB, UI_MOD_SHIFT},
    {KEY_BACKSPACE, UI_KEY_BACKSPACE, 0},
    {KEY_DC, UI_KEY_DELETE, 0},
    {KEY_SDC, UI_KEY_DELETE, UI_MOD_SHIFT},
};

/* Turn what wget_wch returned into an event; 0 when it means nothing to pelab. */
static int translate(tui *t, int r, wint_t c, ui_event *ev)
{
    if (r == OK) {
        if (c == 27) {
            /* ncurses already waited ESCDELAY for a sequence; a character right behind the
             * ESC is Alt+character. */
            wint_t c2;
            wtimeout(stdscr, 0);
            int r2 = wget_wch(stdscr, &c2);
            if (r2 == OK && c2 != 27) {
                char_event(ev, c2, UI_MOD_ALT);
                return 1;
            }
            if (r2 == KEY_CODE_YES)
                ungetch((int)c2);
            else if (r2 == OK)
                unget_wch((wchar_t)c2);
        }
        char_event(ev, c, 0);
        return 1;
    }
    int code = (int)c;
    switch (code) {
    case KEY_RESIZE: {
        /* A burst of resizes collapses into one. */
        for (;;) {
            wint_t c2;
            wtimeout(stdscr, 0);
            int r2 = wget_wch(stdscr, &c2);
            if (r2 == KEY_CODE_YES && c2 == KEY_RESIZE) continue;
            if (r2 == KEY_CODE_YES)
                ungetch((int)c2);
            else if (r2 == OK)
                unget_wch((wchar_t)c2);
            break;
        }
        handle_resize(t);
        ev->type = UI_EV_RESIZE;
        return 1;
    }
    case KEY_MOUSE:
        return mouse_event(t, ev);
    default:
        break;
    }
    for (size_t i = 0; i < sizeof curses_keys / sizeof curses_keys[0]; i++)
        if (curses_keys[i].curses == code) {
            key_event(ev, curses_keys[i].key, curses_keys[i].mods);
            return 1;
        }
    if (code >= KEY_F(1) && code <= KEY_F(11)) {
        key_event(ev, (uint32_t)(UI_KEY_F1 + (code - KEY_F(1))), 0);
        return 1;
    }
    if (code >= KEY_F(13) && code <= KEY_F(23)) { /* xterm: shift-F1 is F13 */
        key_event(ev, (uint32_t)(UI_KEY_F1 + (code - KEY_F(13))), UI_MOD_SHIFT);
        return 1;
    }
    return modified_key(code, ev);
}

static void drain_pipe(tui *t)
{
    char buf[64];
    while (read(t->pipe_rd, buf, sizeof(buf)) > 0) {
    }
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int tui_poll(tui *t, ui_event *ev, int timeout_ms)
{
    memset(ev, 0, sizeof(*ev));
    if (!t || !t->scr) {
        ev->type = UI_EV_QUIT;
        return 1;
    }
    if (queue_pop(t, ev)) return 1;
    long long deadline = timeout_ms > 0 ? now_ms() + timeout_ms : 0;
    int readable = 0;
    for (;;) {
        drain_pipe(t);
        if (g_quit) {
            g_quit_signal = g_quit;
            g_quit = 0;
            ev->type = UI_EV_QUIT;
            return 1;
        }
        if (g_tstp) {
            g_tstp = 0;
            suspend(t);
            handle_resize(t);
            ev->type = UI_EV_RESIZE;
            return 1;
        }
        if (g_cont) { /* stopped and continued by someone else: the screen may be anything */
            g_cont = 0;
            handle_resize(t);
            ev->type = UI_EV_RESIZE;
            return 1;
        }
        wint_t c;
        wtimeout(stdscr, 0);
        int r = wget_wch(stdscr, &c);
        if (r != ERR) {
            t->eof = 0;
            readable = 0;
            if (translate(t, r, c, ev)) return 1;
            continue;
        }
        if (readable && ++t->eof >= 3) {
            /* Readable again and again with nothing to read: the input is closed (hang-up). */
            ev->type = UI_EV_QUIT;
            return 1;
        }
        int wait = -1;
        if (timeout_ms == 0) {
            wait = 0;
        } else if (timeout_ms > 0) {
            long long left = deadline - now_ms();
            wait = left > 0 ? (int)left : 0;
        }
        struct pollfd fds[2] = {{.fd = t->in_fd, .events = POLLIN},
                                {.fd = t->pipe_rd, .events = POLLIN}};
        int n = poll(fds, 2, wait);
        if (n < 0 && errno == EINTR) {
            readable = 0;
            continue; /* a signal: its flag or KEY_RESIZE is picked up above */
        }
        if (n <= 0) break;
        readable = (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
    }
    ev->type = UI_EV_TICK;
    return 0;
}

int tui_pending(tui *t)
{
    if (!t || !t->scr) return 0;
    if (t->qlen || g_quit || g_tstp || g_cont) return 1;
    wint_t c;
    wtimeout(stdscr, 0);
    int r = wget_wch(stdscr, &c);
    if (r == ERR) return 0;
    if (r == KEY_CODE_YES)
        ungetch((int)c);
    else
        unget_wch((wchar_t)c);
    return 1;
}
