/* test_tui_backend: the ncurses backend through newterm() on a tmpfile (output) and a pipe
 * (input), TERM=xterm-256color. Cells are read back with mvin_wch, colours through the pair
 * table, key and mouse bytes are fed into the pipe and must come out as ui_events. Skips (77)
 * when the terminfo entry is missing. */
#define NCURSES_WIDECHAR 1
#ifndef _XOPEN_SOURCE_EXTENDED
#define _XOPEN_SOURCE_EXTENDED 1
#endif

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "tap.h"
#include "termcolor.h"
#include "tui.h"

/* ncurses keeps a small "pre-screen" from a newterm() that fails (the unknown-TERM check);
 * LeakSanitizer reads this hook in sanitizer builds. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:new_prescr\n";
}

typedef struct fixture {
    tui *t;
    FILE *out, *in;
    int in_w; /* write end of the input pipe */
} fixture;

static int fx_open(fixture *f, const char *term, int force_colors, int signals, char *err,
                   size_t errlen)
{
    memset(f, 0, sizeof(*f));
    int p[2];
    f->out = tmpfile();
    if (!f->out || pipe(p) != 0) return -1;
    f->in = fdopen(p[0], "r");
    f->in_w = p[1];
    tui_options o = {.in = f->in,
                     .out = f->out,
                     .term = term,
                     .force_colors = force_colors,
                     .no_signals = !signals};
    return tui_open(&f->t, &o, err, errlen);
}

static void fx_close(fixture *f)
{
    tui_close(f->t);
    if (f->in_w >= 0) close(f->in_w);
    if (f->in) fclose(f->in);
    if (f->out) fclose(f->out);
    memset(f, 0, sizeof(*f));
    f->in_w = -1;
}

static long out_size(FILE *f)
{
    struct stat st;
    fflush(f);
    return fstat(fileno(f), &st) == 0 ? (long)st.st_size : -1;
}

/* The output bytes from offset on, escaped, for a diagnostic line. */
static void diag_bytes(FILE *f, long from)
{
    long n = out_size(f) - from;
    if (n <= 0 || n > 400) return;
    char raw[401], esc[1700];
    fseek(f, from, SEEK_SET);
    size_t got = fread(raw, 1, (size_t)n, f);
    fseek(f, 0, SEEK_END);
    size_t k = 0;
    for (size_t i = 0; i < got && k + 5 < sizeof(esc); i++) {
        unsigned char c = (unsigned char)raw[i];
        k += (size_t)snprintf(esc + k, sizeof(esc) - k, c < 32 || c > 126 ? "\\x%02x" : "%c", c);
    }
    esc[k] = 0;
    tap_diag("output: %s", esc);
}

static void feed(fixture *f, const char *bytes)
{
    size_t n = strlen(bytes);
    if (write(f->in_w, bytes, n) != (ssize_t)n) tap_diag("short write into the input pipe");
}

/* What the screen holds at (row, col): character, attributes, and the pair's colours. */
static void read_cell(int row, int col, wchar_t *ch, attr_t *attrs, int *fg, int *bg)
{
    cchar_t cc;
    wchar_t wch[CCHARW_MAX + 1];
    short ps = 0;
    int pair = 0;
    *ch = 0;
    *fg = *bg = -1;
    if (mvin_wch(row, col, &cc) != OK) return;
    if (getcchar(&cc, wch, attrs, &ps, &pair) == ERR) return;
    *ch = wch[0];
    extended_pair_content(pair, fg, bg);
}

static void put(cellgrid *g, int col, int row, uint32_t ch, uint32_t fg, uint32_t bg, int attr)
{
    cellgrid_cell *c = cellgrid_at(g, col, row);
    c->ch = ch;
    c->fg = fg;
    c->bg = bg;
    c->attr = (uint8_t)attr;
}

static void test_draw(void)
{
    fixture f;
    char err[256] = "";
    unsetenv("COLORTERM");
    unsetenv("NO_COLOR");
    TAP_OK(fx_open(&f, "xterm-256color", 0, 0, err, sizeof(err)) == 0, "open: %s", err);
    int cols, rows;
    tui_size(f.t, &cols, &rows);
    TAP_OK(cols == 40 && rows == 12, "size from COLUMNS/LINES: %dx%d", cols, rows);
    TAP_OK(tui_colors(f.t) == TUI_COLOR_256, "xterm-256color without COLORTERM: 256 colours (%d)",
           (int)tui_colors(f.t));
    TAP_OK(!tui_ascii(f.t), "a UTF-8 locale: not ASCII");
    cellgrid *g = tui_grid(f.t);
    TAP_OK(g->cols == cols && g->rows == rows, "the grid has the terminal's size");

    for (int r = 0; r < g->rows; r++)
        for (int c = 0; c < g->cols; c++) put(g, c, r, ' ', 0xffffff, 0x000000, 0);
    const uint32_t hello[5] = {'h', 0xe9, 'l', 'l', 'o'}; /* héllo */
    for (int i = 0; i < 5; i++) put(g, 2 + i, 0, hello[i], 0xffffff, 0, i == 0);
    put(g, 0, 1, 0x2580, 0xff0000, 0x0000ff, 0);        /* half block: red over blue */
    put(g, 1, 1, 0x28ff, 0x00ff00, 0x808080, 0);        /* braille, all dots */
    put(g, 2, 1, 0x253c, 0xaaaaaa, 0x000000, 0);        /* box cross */
    put(g, 39, 11, 'Z', 0xffff00, 0x000000, CELL_BOLD); /* the bottom-right cell */
    long before = out_size(f.out);
    tui_present(f.t);
    long first = out_size(f.out) - before;

    int bad = 0;
    for (int r = 0; r < g->rows; r++)
        for (int c = 0; c < g->cols; c++) {
            wchar_t ch;
            attr_t a;
            int fg, bg;
            read_cell(r, c, &ch, &a, &fg, &bg);
            if ((uint32_t)ch != cellgrid_at(g, c, r)->ch && bad++ == 0)
                tap_diag("cell (%d, %d): U+%04X on screen, U+%04X in the grid", c, r, (unsigned)ch,
                         (unsigned)cellgrid_at(g, c, r)->ch);
        }
    TAP_OK(bad == 0, "every cell reads back with its character (%d differ)", bad);
    wchar_t ch;
    attr_t a;
    int fg, bg;
    read_cell(1, 0, &ch, &a, &fg, &bg);
    TAP_OK(ch == 0x2580 && fg == 196 && bg == 21, "half block: fg red (196), bg blue (21): %d %d",
           fg, bg);
    read_cell(1, 1, &ch, &a, &fg, &bg);
    TAP_OK(ch == 0x28ff && fg == 46 && bg == 244, "braille: green (46) on grey (244): %d %d", fg,
           bg);
    read_cell(0, 2, &ch, &a, &fg, &bg);
    TAP_OK(ch == 'h' && (a & A_BOLD), "bold text");
    read_cell(0, 3, &ch, &a, &fg, &bg);
    TAP_OK(ch == 0xe9 && !(a & A_BOLD) && fg == 231 && bg == 16, "é, plain, white on black");
    read_cell(11, 39, &ch, &a, &fg, &bg);
    TAP_OK(ch == 'Z' && fg == 226, "the bottom-right cell is drawn too");

    /* Only changed cells go out: one cell costs a cursor move and a few bytes. */
    put(g, 20, 5, 'x', 0xffffff, 0, 0);
    long s0 = out_size(f.out);
    tui_present(f.t);
    long one = out_size(f.out) - s0;
    if (one >= 64) diag_bytes(f.out, s0);
    long s1 = out_size(f.out);
    tui_present(f.t);
    long none = out_size(f.out) - s1;
    TAP_OK(one > 0 && one < 64 && one * 5 < first && none == 0,
           "full frame %ld bytes, one changed cell %ld bytes, an unchanged frame %ld", first, one,
           none);
    read_cell(5, 20, &ch, &a, &fg, &bg);
    TAP_OK(ch == 'x', "the changed cell is on the screen");

    tui_cursor(f.t, 7, 3);
    tui_present(f.t);
    int cy, cx;
    getyx(stdscr, cy, cx);
    TAP_OK(cy == 3 && cx == 7, "cursor shown at (7, 3): (%d, %d)", cx, cy);
    tui_cursor(f.t, -1, 0);
    tui_present(f.t);

    /* Far more fg/bg combinations than there are pairs (65536): alloc_pair runs out, the table
     * is reset and the frame repainted; the last frame must still read back exactly. */
    uint64_t z = 1;
    for (int frame = 0; frame < 160; frame++) {
        for (int i = 0; i < g->cols * g->rows; i++) {
            z = z * 6364136223846793005ull + 1442695040888963407ull;
            g->cells[i].ch = 0x2580;
            g->cells[i].fg = (uint32_t)(z >> 40) & 0xffffff;
            g->cells[i].bg = (uint32_t)(z >> 16) & 0xffffff;
            g->cells[i].attr = CELL_IMAGE_TOP | CELL_IMAGE_BOTTOM; /* a heatmap's pixels */
        }
        tui_present(f.t);
    }
    bad = 0;
    for (int r = 0; r < g->rows; r++)
        for (int c = 0; c < g->cols; c++) {
            read_cell(r, c, &ch, &a, &fg, &bg);
            const cellgrid_cell *cell = cellgrid_at(g, c, r);
            /* half blocks are pixels: each shows its colour's dithered palette index */
            if (ch != 0x2580 || fg != termcolor_dither(cell->fg, 256, c, 2 * r) ||
                bg != termcolor_dither(cell->bg, 256, c, 2 * r + 1))
                bad++;
        }
    TAP_OK(bad == 0, "after pairs ran out every cell still shows its colours (%d bad)", bad);
    fx_close(&f);
}

/* A scene of a flat fill (a colour between palette entries, e.g. a band's shading), a bar and a
 * heatmap, rasterised by cellgrid and drawn on a 256-colour terminal: every cell of the fill and
 * of the bar reads back as one colour (no checkerboard), the heatmap is dithered. */
static void test_flat_fills(void)
{
    fixture f;
    char err[256] = "";
    unsetenv("COLORTERM");
    TAP_OK(fx_open(&f, "xterm-256color", 0, 0, err, sizeof(err)) == 0, "open for fills: %s", err);
    cellgrid *g = tui_grid(f.t);
    scene s;
    scene_init(&s, g->cols, 2.0 * g->rows, 0xffffff);
    const uint32_t band = 0xa8d5b0, bar = 0x4f7fae; /* both between xterm cube colours */
    scene_rect(&s, 0, 0, 20, 12, band, SCENE_FILL);
    scene_rect(&s, 2, 14, 3, 10, bar, SCENE_FILL | SCENE_BAR);
    float ramp[16 * 20];
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 20; c++) ramp[r * 20 + c] = (float)(c + r) / 34.0f;
    scene_heatmap(&s, 20, 0, 20, 16, ramp, 16, 20, 20, 0.0, 1.0, NULL, 0x808080);
    cellgrid_render(g, &s);
    tui_present(f.t);
    int fill_fg = -2, fill_bg = -2, fill_bad = 0, bar_fg = -2, bar_bad = 0;
    wchar_t ch;
    attr_t a;
    int fg, bg;
    for (int r = 0; r < 6; r++)
        for (int c = 0; c < 20; c++) {
            read_cell(r, c, &ch, &a, &fg, &bg);
            if (fill_fg == -2) fill_fg = fg, fill_bg = bg;
            /* a blank cell shows only its background; a half block both halves */
            if (bg != fill_bg || (ch != ' ' && fg != fill_fg)) fill_bad++;
        }
    for (int r = 7; r < 12; r++)
        for (int c = 2; c < 5; c++) {
            read_cell(r, c, &ch, &a, &fg, &bg);
            if (bar_fg == -2) bar_fg = bg;
            if (bg != bar_fg || (ch != ' ' && fg != bar_fg)) bar_bad++;
        }
    TAP_OK(fill_bad == 0 && fill_bg == termcolor_nearest(band, 256),
           "a flat fill is one colour cell to cell (%d cells differ; %d, nearest %d)", fill_bad,
           fill_bg, termcolor_nearest(band, 256));
    TAP_OK(bar_bad == 0 && bar_fg == termcolor_nearest(bar, 256),
           "a bar is one colour cell to cell (%d cells differ; %d)", bar_bad, bar_fg);
    int distinct[256] = {0}, nd = 0, halves = 0;
    for (int r = 0; r < 8; r++)
        for (int c = 20; c < 40; c++) {
            read_cell(r, c, &ch, &a, &fg, &bg);
            if (ch == 0x2580) halves++;
            if (bg >= 0 && bg < 256 && !distinct[bg]++) nd++;
        }
    TAP_OK(halves > 0 && nd > 8, "the heatmap is dithered: %d half blocks, %d colours", halves, nd);
    scene_free(&s);
    fx_close(&f);
}

/* A small terminal for the SGR path's output: cursor moves (CSI row;col H), SGR colours (38;2 /
 * 48;2, 39/49, 0) and UTF-8 text into cells; every other sequence is skipped. */
typedef struct vcell {
    uint32_t ch;
    long fg, bg; /* 0xRRGGBB, -1 default */
} vcell;

static void vt_replay(const unsigned char *b, size_t n, vcell *cells, int cols, int rows)
{
    int r = 0, c = 0;
    long fg = -1, bg = -1;
    for (int i = 0; i < cols * rows; i++) cells[i] = (vcell){' ', -1, -1};
    for (size_t i = 0; i < n;) {
        if (b[i] == 0x1b && i + 1 < n && b[i + 1] == '[') {
            size_t j = i + 2;
            long p[16] = {0};
            int np = 0;
            while (j < n &&
                   ((b[j] >= '0' && b[j] <= '9') || b[j] == ';' || b[j] == '?' || b[j] == ':')) {
                if (b[j] >= '0' && b[j] <= '9' && np < 16) p[np] = p[np] * 10 + (b[j] - '0');
                if ((b[j] == ';' || b[j] == ':') && np < 15) np++;
                j++;
            }
            np++;
            if (j >= n) break;
            char fin = (char)b[j];
            if (fin == 'H' || fin == 'f') {
                r = p[0] > 0 ? (int)p[0] - 1 : 0;
                c = np > 1 && p[1] > 0 ? (int)p[1] - 1 : 0;
            } else if (fin == 'm') {
                for (int k = 0; k < np; k++) {
                    if (p[k] == 0)
                        fg = bg = -1;
                    else if (p[k] == 39)
                        fg = -1;
                    else if (p[k] == 49)
                        bg = -1;
                    else if ((p[k] == 38 || p[k] == 48) && k + 4 < np && p[k + 1] == 2) {
                        long v = p[k + 2] << 16 | p[k + 3] << 8 | p[k + 4];
                        *(p[k] == 38 ? &fg : &bg) = v;
                        k += 4;
                    }
                }
            } else if (fin == 'J' && p[0] == 2) {
                for (int k = 0; k < cols * rows; k++) cells[k] = (vcell){' ', -1, bg};
            }
            i = j + 1;
        } else if (b[i] == 0x1b) {
            i += i + 1 < n && (b[i + 1] == '(' || b[i + 1] == ')') ? 3 : 2;
        } else if (b[i] < 0x20) {
            if (b[i] == '\r') c = 0;
            if (b[i] == '\n' && r + 1 < rows) r++;
            i++;
        } else {
            uint32_t ch = b[i];
            size_t k = ch >= 0xf0 ? 4 : ch >= 0xe0 ? 3 : ch >= 0xc0 ? 2 : 1;
            if (k > 1) ch &= (uint32_t)(0xff >> (k + 1));
            for (size_t q = 1; q < k && i + q < n; q++) ch = ch << 6 | (b[i + q] & 0x3f);
            if (r < rows && c < cols) cells[r * cols + c] = (vcell){ch, fg, bg};
            if (c < cols - 1) c++;
            i += k;
        }
    }
}

/* COLORTERM=truecolor on xterm-256color without an xterm-direct entry: the cells go out as
 * direct colour (SGR 38;2 / 48;2), checked by replaying the bytes; with GNU screen a note says
 * why 256 colours are used. */
static void test_truecolor_sgr(void)
{
    fixture f;
    char err[256] = "";
    char dir[160];
    tap_tmp_path(dir, sizeof dir, "pelab-noterminfo-XXXXXX");
    if (!mkdtemp(dir)) {
        TAP_OK(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    setenv("TERMINFO", dir, 1); /* an empty private directory: no xterm-direct there */
    setenv("TERMINFO_DIRS", "/usr/share/terminfo:/lib/terminfo", 1);
    setenv("COLORTERM", "truecolor", 1);
    unsetenv("STY");
    unsetenv("TMUX");
    TAP_OK(fx_open(&f, "xterm-256color", 0, 0, err, sizeof(err)) == 0, "open: %s", err);
    TAP_OK(tui_colors(f.t) == TUI_COLOR_DIRECT && tui_note(f.t) == NULL,
           "COLORTERM=truecolor without an xterm-direct entry: direct colour (%d), no note",
           (int)tui_colors(f.t));
    cellgrid *g = tui_grid(f.t);
    int cols = g->cols, rows = g->rows;
    for (int i = 0; i < cols * rows; i++) g->cells[i] = (cellgrid_cell){' ', 0x202020, 0xfafafa, 0};
    g->background = 0xfafafa;
    put(g, 0, 0, 0x2580, 0x123456, 0xa8d5b0, CELL_IMAGE_TOP);
    put(g, 5, 2, 'w', 0xcc3311, 0xfafafa, CELL_BOLD);
    put(g, 39, 11, 0x2588, 0x0a0b0c, 0x010203, 0);
    long before = out_size(f.out);
    tui_present(f.t);
    put(g, 6, 2, 0x28ff, 0x336699, 0xfafafa, 0); /* a second frame: only this cell changes */
    long mid = out_size(f.out);
    tui_present(f.t);
    long after = out_size(f.out);
    size_t n = (size_t)after;
    unsigned char *buf = calloc(1, n + 1);
    rewind(f.out);
    size_t got = fread(buf, 1, n, f.out);
    fseek(f.out, 0, SEEK_END);
    vcell *cells = calloc((size_t)(cols * rows), sizeof(vcell));
    vt_replay(buf, got, cells, cols, rows);
    vcell a = cells[0], b = cells[2 * cols + 5], c = cells[2 * cols + 6],
          d = cells[rows * cols - 1], e = cells[5 * cols + 10];
    TAP_OK(a.ch == 0x2580 && a.fg == 0x123456 && a.bg == 0xa8d5b0,
           "a half block carries its two colours exactly (#%06lx on #%06lx)", a.fg, a.bg);
    TAP_OK(b.ch == 'w' && b.fg == 0xcc3311 && b.bg == 0xfafafa, "text: #%06lx on #%06lx", b.fg,
           b.bg);
    TAP_OK(c.ch == 0x28ff && c.fg == 0x336699, "the changed cell of the second frame: #%06lx",
           c.fg);
    TAP_OK(d.ch == 0x2588 && d.fg == 0x0a0b0c && d.bg == 0x010203,
           "the bottom-right cell, near-blacks as they are: #%06lx on #%06lx", d.fg, d.bg);
    TAP_OK(e.ch == ' ' && e.bg == 0xfafafa, "the page: #%06lx", e.bg);
    TAP_OK(strstr((char *)buf, "38;2;18;52;86") != NULL, "SGR 38;2 sequences in the output");
    TAP_OK(after - mid < 64 && after - mid > 0, "the second frame sends one cell: %ld bytes",
           after - mid);
    (void)before;
    free(cells);
    free(buf);
    fx_close(&f);

    setenv("STY", "1234.pts-0.host", 1);
    TAP_OK(fx_open(&f, "screen-256color", 0, 0, err, sizeof(err)) == 0, "open in screen: %s", err);
    const char *note = tui_note(f.t);
    TAP_OK(tui_colors(f.t) == TUI_COLOR_256 && note && strstr(note, "screen"),
           "GNU screen: 256 colours and a note (%s)", note ? note : "none");
    fx_close(&f);
    unsetenv("STY");
    unsetenv("COLORTERM");
    unsetenv("TERMINFO");
    unsetenv("TERMINFO_DIRS");
    rmdir(dir);
}

/* xterm-256 index of the backend's mapping, recomputed independently for a few colours. */
static void test_colour_modes(void)
{
    fixture f;
    char err[256] = "";
    setenv("NO_COLOR", "1", 1);
    TAP_OK(fx_open(&f, "xterm-256color", 0, 0, err, sizeof(err)) == 0, "open with NO_COLOR: %s",
           err);
    TAP_OK(tui_colors(f.t) == TUI_COLOR_MONO, "NO_COLOR=1: monochrome");
    cellgrid *g = tui_grid(f.t);
    g->background = 0x000000;
    for (int i = 0; i < g->cols * g->rows; i++)
        g->cells[i] = (cellgrid_cell){.ch = ' ', .fg = 0, .bg = 0, .attr = 0};
    put(g, 0, 0, 0x2580, 0xffffff, 0x000000, 0);
    put(g, 1, 0, ' ', 0xffffff, 0xffffff, 0);
    put(g, 2, 0, 'a', 0xff0000, 0x00ff00, CELL_BOLD);
    put(g, 3, 0, 0x2847, 0xff0000, 0x00ff00, 0);
    tui_present(f.t);
    wchar_t ch;
    attr_t a;
    int fg, bg;
    read_cell(0, 0, &ch, &a, &fg, &bg);
    TAP_OK((uint32_t)ch == cellgrid_shade(0x7f7f7f, 0),
           "mono: a half block becomes a shade ('%lc')", (wint_t)ch);
    read_cell(0, 1, &ch, &a, &fg, &bg);
    TAP_OK(ch == '@', "mono: a white fill on black is '@'");
    read_cell(0, 2, &ch, &a, &fg, &bg);
    TAP_OK(ch == 'a' && (a & A_BOLD), "mono: text and bold stay");
    read_cell(0, 3, &ch, &a, &fg, &bg);
    TAP_OK(ch == 0x2847, "mono: braille stays");
    read_cell(0, 5, &ch, &a, &fg, &bg);
    TAP_OK(ch == ' ', "mono: the page stays blank");
    fx_close(&f);
    unsetenv("NO_COLOR");

    TAP_OK(fx_open(&f, "xterm", 0, 0, err, sizeof(err)) == 0, "open TERM=xterm: %s", err);
    TAP_OK(tui_colors(f.t) == TUI_COLOR_8, "TERM=xterm: 8 colours (%d)", (int)tui_colors(f.t));
    g = tui_grid(f.t);
    put(g, 0, 0, 0x2580, 0xf01010, 0x1010f0, CELL_IMAGE_TOP | CELL_IMAGE_BOTTOM);
    put(g, 1, 0, 'x', 0xe0e0e0, 0x202020, 0);
    tui_present(f.t);
    read_cell(0, 0, &ch, &a, &fg, &bg);
    /* pixels dither (termcolor.h): the one at (0, 0) is the first to take the mixing partner */
    TAP_OK(termcolor_nearest(0xf01010, 8) == COLOR_RED &&
               termcolor_nearest(0x1010f0, 8) == COLOR_BLUE &&
               fg == termcolor_dither(0xf01010, 8, 0, 0) &&
               bg == termcolor_dither(0x1010f0, 8, 0, 1),
           "8 colours: red over blue, nearest ANSI red and blue, pixels dithered (%d, %d)", fg, bg);
    read_cell(0, 1, &ch, &a, &fg, &bg);
    TAP_OK(fg == COLOR_WHITE && bg == COLOR_BLACK, "8 colours: light grey on near-black");
    fx_close(&f);

    TAP_OK(fx_open(&f, "xterm-256color", TUI_COLOR_16 + 1, 0, err, sizeof(err)) == 0 &&
               tui_colors(f.t) == TUI_COLOR_16,
           "force_colors picks 16 colours");
    g = tui_grid(f.t);
    put(g, 0, 0, 'x', 0xff0000, 0x7f7f7f, 0);
    tui_present(f.t);
    read_cell(0, 0, &ch, &a, &fg, &bg);
    TAP_OK(fg == 9 && bg == 8, "16 colours: bright red on dark grey (%d, %d)", fg, bg);
    fx_close(&f);

    TAP_OK(fx_open(&f, "xterm-256color", 0, 0, err, sizeof(err)) == 0, "open again");
    g = tui_grid(f.t);
    put(g, 0, 0, 'x', 0x808080, 0xd7af87, 0);
    put(g, 1, 0, 'x', 0x5f87af, 0x121212, 0);
    tui_present(f.t);
    read_cell(0, 0, &ch, &a, &fg, &bg);
    TAP_OK(fg == 244 && bg == 180, "256: grey 0x808080 -> 244, cube 0xd7af87 -> 180 (%d, %d)", fg,
           bg);
    read_cell(0, 1, &ch, &a, &fg, &bg);
    TAP_OK(fg == 67 && bg == 233, "256: 0x5f87af -> 67, 0x121212 -> 233 (%d, %d)", fg, bg);
    TAP_OK(tui_dark(f.t) == -1, "without COLORFGBG the terminal's background is unknown");
    fx_close(&f);

    /* a dark terminal (COLORFGBG): a dark page is the terminal's own background (-1), not a
     * colour pelab paints; a light page (the theme toggled with t) is painted */
    setenv("COLORFGBG", "15;0", 1);
    TAP_OK(fx_open(&f, "xterm-256color", 0, 0, err, sizeof(err)) == 0, "open with COLORFGBG=15;0");
    TAP_OK(tui_dark(f.t) == 1, "COLORFGBG=15;0: a dark terminal");
    g = tui_grid(f.t);
    g->background = 0x121212;
    for (int i = 0; i < g->cols * g->rows; i++)
        g->cells[i] = (cellgrid_cell){' ', 0xe8e8e8, 0x121212, 0};
    put(g, 0, 0, 'p', 0xe8e8e8, 0x121212, 0);
    tui_present(f.t);
    read_cell(0, 0, &ch, &a, &fg, &bg);
    int blank_fg, blank_bg;
    read_cell(1, 3, &ch, &a, &blank_fg, &blank_bg);
    TAP_OK(bg == -1 && blank_bg == -1, "dark page on a dark terminal: default background (%d, %d)",
           bg, blank_bg);
    g->background = 0xffffff;
    for (int i = 0; i < g->cols * g->rows; i++)
        g->cells[i] = (cellgrid_cell){' ', 0x1a1a1a, 0xffffff, 0};
    put(g, 0, 0, 'p', 0x1a1a1a, 0xffffff, 0);
    tui_present(f.t);
    read_cell(0, 0, &ch, &a, &fg, &bg);
    TAP_OK(bg == 231, "light page on a dark terminal: painted white (%d)", bg);
    fx_close(&f);
    unsetenv("COLORFGBG");

    /* COLORTERM=truecolor: the family's direct-colour entry when there is one. A private one is
     * compiled with tic so the test does not depend on ncurses-term. */
    char dir[160];
    tap_tmp_path(dir, sizeof dir, "pelab-terminfo-XXXXXX");
    if (!mkdtemp(dir)) {
        TAP_OK(0, "mkdtemp: %s", strerror(errno));
        return;
    }
    char src[600], cmd[1400];
    snprintf(src, sizeof(src), "%s/direct.src", dir);
    FILE *s = fopen(src, "w");
    fprintf(s, "xterm-direct|pelab test direct colour,\n"
               "\tcolors#0x1000000, pairs#0x10000, RGB,\n"
               "\tsetab=\\E[%%?%%p1%%{8}%%<%%t4%%p1%%d%%e48:2::%%p1%%{65536}%%/%%d:%%p1%%{256}%%/"
               "%%{255}%%&%%d:%%p1%%{255}%%&%%d%%;m,\n"
               "\tsetaf=\\E[%%?%%p1%%{8}%%<%%t3%%p1%%d%%e38:2::%%p1%%{65536}%%/%%d:%%p1%%{256}%%/"
               "%%{255}%%&%%d:%%p1%%{255}%%&%%d%%;m,\n"
               "\tccc@, initc@, oc@, use=xterm-256color,\n");
    fclose(s);
    snprintf(cmd, sizeof(cmd), "tic -x -o %s %s >/dev/null 2>&1", dir, src);
    if (system(cmd) != 0) {
        tap_diag("tic could not compile a direct-colour entry; direct colour not checked");
    } else {
        setenv("TERMINFO", dir, 1);
        setenv("COLORTERM", "truecolor", 1);
        TAP_OK(fx_open(&f, "xterm-256color", 0, 0, err, sizeof(err)) == 0, "open truecolor: %s",
               err);
        TAP_OK(tui_colors(f.t) == TUI_COLOR_DIRECT,
               "COLORTERM=truecolor with xterm-direct: direct");
        g = tui_grid(f.t);
        put(g, 0, 0, 0x2580, 0x123456, 0x000000, 0);
        tui_present(f.t);
        read_cell(0, 0, &ch, &a, &fg, &bg);
        TAP_OK(fg == 0x123456 && bg == 0x010100,
               "direct: RGB goes out as is (#%06x), black avoids the palette (#%06x)", fg, bg);
        long n = out_size(f.out);
        char *buf = calloc(1, (size_t)n + 1);
        rewind(f.out);
        size_t got = fread(buf, 1, (size_t)n, f.out);
        buf[got] = 0;
        TAP_OK(strstr(buf, "38:2::18:52:86") != NULL, "the 24-bit SGR is in the output");
        free(buf);
        fx_close(&f);
        unsetenv("TERMINFO");
        unsetenv("COLORTERM");
    }
    snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
    if (system(cmd) != 0) tap_diag("could not remove %s", dir);
}

static int next_event(fixture *f, ui_event *ev)
{
    return tui_poll(f->t, ev, 200);
}

static void test_input(void)
{
    fixture f;
    char err[256] = "";
    TAP_OK(fx_open(&f, "xterm-256color", 0, 0, err, sizeof(err)) == 0, "open for input: %s", err);
    const char *up = tigetstr("kcuu1"), *f1 = tigetstr("kf1"), *km = tigetstr("kmous");
    int sgr = km && km != (char *)-1 && !strcmp(km, "\033[<");
    ui_event ev;

    feed(&f, up);
    TAP_OK(next_event(&f, &ev) == 1 && ev.type == UI_EV_KEY && ev.key == UI_KEY_UP && !ev.mods,
           "kcuu1 -> UI_KEY_UP");
    feed(&f, "q");
    TAP_OK(next_event(&f, &ev) == 1 && ev.type == UI_EV_KEY && ev.key == 'q', "q -> 'q'");
    feed(&f, "\xc3\xa9");
    TAP_OK(next_event(&f, &ev) == 1 && ev.key == 0xe9, "UTF-8 é -> U+00E9");
    feed(&f, "\r\t\177\001");
    int ok = next_event(&f, &ev) && ev.key == UI_KEY_ENTER;
    ok &= next_event(&f, &ev) && ev.key == UI_KEY_TAB;
    ok &= next_event(&f, &ev) && ev.key == UI_KEY_BACKSPACE;
    ok &= next_event(&f, &ev) && ev.key == 'a' && ev.mods == UI_MOD_CTRL;
    TAP_OK(ok, "Enter, Tab, Backspace, Ctrl-A");
    feed(&f, f1);
    TAP_OK(next_event(&f, &ev) == 1 && ev.key == UI_KEY_F1, "kf1 -> UI_KEY_F1");
    feed(&f, "\033[1;5A");
    ok = next_event(&f, &ev) == 1;
    TAP_OK(ok && ev.key == UI_KEY_UP && ev.mods == UI_MOD_CTRL,
           "xterm ctrl-up -> UI_KEY_UP + ctrl (key %u mods %u)", ev.key, ev.mods);
    feed(&f, "\033x");
    TAP_OK(next_event(&f, &ev) == 1 && ev.key == 'x' && ev.mods == UI_MOD_ALT, "ESC x -> Alt-x");
    feed(&f, "\033");
    TAP_OK(next_event(&f, &ev) == 1 && ev.key == UI_KEY_ESC && !ev.mods, "a lone ESC -> Escape");

    /* Mouse, in the terminal's own encoding. */
    if (sgr)
        feed(&f, "\033[<0;11;4M\033[<0;11;4m\033[<35;6;2M\033[<64;1;1M");
    else
        feed(&f, "\033[M +$\033[M#+$\033[MC&\"\033[M`!!");
    ok = next_event(&f, &ev) && ev.type == UI_EV_MOUSE && ev.mouse == UI_MOUSE_PRESS &&
         ev.button == 1;
    TAP_OK(ok, "mouse press, button 1");
    TAP_CLOSE(ev.x, 10.5, 0, 1e-12, "mouse x = col 10 + 0.5");
    TAP_CLOSE(ev.y, 7.0, 0, 1e-12, "mouse y = 2 * row 3 + 1");
    TAP_OK(next_event(&f, &ev) && ev.type == UI_EV_MOUSE && ev.mouse == UI_MOUSE_RELEASE,
           "mouse release");
    ok = next_event(&f, &ev);
    TAP_OK(ok && ev.type == UI_EV_MOUSE && ev.mouse == UI_MOUSE_MOVE && ev.x == 5.5 && ev.y == 3.0,
           "mouse motion at (5, 1): (%g, %g) action %d", ev.x, ev.y, (int)ev.mouse);
    TAP_OK(next_event(&f, &ev) && ev.type == UI_EV_MOUSE && ev.mouse == UI_MOUSE_WHEEL_UP,
           "wheel up");

    TAP_OK(tui_poll(f.t, &ev, 0) == 0 && ev.type == UI_EV_TICK, "nothing waiting: a tick");
    TAP_OK(tui_pending(f.t) == 0, "nothing pending");
    feed(&f, "z");
    TAP_OK(tui_pending(f.t) == 1, "a key pending");
    TAP_OK(tui_poll(f.t, &ev, 0) == 1 && ev.key == 'z', "and still delivered after the peek");

    /* A burst of resizes is one event. */
    resizeterm(20, 50);
    resizeterm(18, 60);
    ok = tui_poll(f.t, &ev, 0) == 1 && ev.type == UI_EV_RESIZE;
    int cols, rows;
    tui_size(f.t, &cols, &rows);
    TAP_OK(ok && cols == 60 && rows == 18 && tui_grid(f.t)->cols == 60,
           "resize: one event, grid now %dx%d", cols, rows);
    TAP_OK(tui_poll(f.t, &ev, 0) == 0, "the burst collapsed");
    tui_present(f.t); /* a full frame at the new size */

    close(f.in_w);
    f.in_w = -1;
    TAP_OK(tui_poll(f.t, &ev, 500) == 1 && ev.type == UI_EV_QUIT, "input closed -> quit");
    fx_close(&f);
}

/* Home and End arrive as the key whatever the terminal and TERM say (issue 11: under tmux with
 * TERM=xterm-256color, Home was read as ESC [ 1 ~ and switched to view 1). */
static void test_home_end(void)
{
    static const char *const terms[] = {"xterm-256color", "tmux-256color", "screen-256color"};
    static const char *const home[] = {"\033[1~", "\033[H", "\033OH", "\033[7~"};
    static const char *const end[] = {"\033[4~", "\033[F", "\033OF", "\033[8~"};
    for (size_t k = 0; k < sizeof terms / sizeof terms[0]; k++) {
        fixture f;
        char err[256] = "";
        if (fx_open(&f, terms[k], 0, 0, err, sizeof(err)) != 0) {
            TAP_OK(0, "open TERM=%s: %s", terms[k], err);
            continue;
        }
        int bad = 0;
        ui_event ev;
        const char *own[2] = {tigetstr("khome"), tigetstr("kend")};
        for (int e = 0; e < 2; e++)
            if (own[e] && own[e] != (char *)-1) {
                feed(&f, own[e]);
                bad += !(next_event(&f, &ev) == 1 && ev.type == UI_EV_KEY &&
                         ev.key == (e ? UI_KEY_END : UI_KEY_HOME));
            }
        for (size_t i = 0; i < 4; i++) {
            feed(&f, home[i]);
            bad += !(next_event(&f, &ev) == 1 && ev.type == UI_EV_KEY && ev.key == UI_KEY_HOME);
            feed(&f, end[i]);
            bad += !(next_event(&f, &ev) == 1 && ev.type == UI_EV_KEY && ev.key == UI_KEY_END);
        }
        TAP_OK(bad == 0 && tui_poll(f.t, &ev, 0) == 0,
               "TERM=%s: Home and End in every common encoding (%d wrong)", terms[k], bad);
        fx_close(&f);
    }
}

static void test_signals(void)
{
    fixture f;
    char err[256] = "";
    TAP_OK(fx_open(&f, "xterm-256color", 0, 1, err, sizeof(err)) == 0, "open with signals: %s",
           err);
    ui_event ev;
    raise(SIGTERM);
    TAP_OK(tui_poll(f.t, &ev, 5000) == 1 && ev.type == UI_EV_QUIT, "SIGTERM -> quit");
    raise(SIGINT);
    TAP_OK(tui_poll(f.t, &ev, -1) == 1 && ev.type == UI_EV_QUIT, "SIGINT wakes a blocking poll");
    raise(SIGCONT);
    TAP_OK(tui_poll(f.t, &ev, 5000) == 1 && ev.type == UI_EV_RESIZE, "SIGCONT -> redraw");
    char other[256] = "";
    fixture g;
    TAP_OK(fx_open(&g, "xterm-256color", 0, 0, other, sizeof(other)) != 0 && *other,
           "a second open fails: %s", other);
    if (g.t) tui_close(g.t);
    g.t = NULL;
    fx_close(&g);
    fx_close(&f);
    struct sigaction sa;
    sigaction(SIGTERM, NULL, &sa);
    int restored = sa.sa_handler == SIG_DFL;
    sigaction(SIGTSTP, NULL, &sa);
    restored &= sa.sa_handler == SIG_DFL;
    sigaction(SIGWINCH, NULL, &sa);
    restored &= sa.sa_handler == SIG_DFL;
    TAP_OK(restored, "close restores SIGTERM, SIGTSTP and SIGWINCH");
}

static void test_failures(void)
{
    fixture f;
    char err[256] = "";
    int rc = fx_open(&f, "pelab-no-such-terminal", 0, 0, err, sizeof(err));
    TAP_OK(rc != 0 && strstr(err, "pelab-no-such-terminal"), "unknown TERM fails: %s", err);
    TAP_OK(out_size(f.out) == 0, "and wrote nothing to the terminal");
    struct sigaction sa;
    sigaction(SIGWINCH, NULL, &sa);
    TAP_OK(sa.sa_handler == SIG_DFL, "and left the signal handlers alone");
    f.t = NULL;
    fx_close(&f);
    if (!isatty(0) || !isatty(1)) {
        tui *t = NULL;
        err[0] = 0;
        rc = tui_open(&t, NULL, err, sizeof(err));
        TAP_OK(rc != 0 && !t && strstr(err, "not a terminal"), "no terminal, no files: %s", err);
    }
    tui_options bad = {.force_colors = 5, .in = stdin, .out = stdout, .term = "xterm"};
    tui *t = NULL;
    TAP_OK(tui_open(&t, &bad, err, sizeof(err)) != 0 && strstr(err, "force_colors"),
           "a bad force_colors is refused: %s", err);
    tui_close(NULL);
    TAP_OK(1, "tui_close(NULL) is fine");
}

/* stderr written while the TUI is open appears only after it closes. fd 2 is pointed at a
 * pseudo-terminal for this, since only a terminal needs the protection. */
static void test_stderr_buffer(void)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0) {
        tap_diag("no pseudo-terminal: stderr buffering not checked");
        if (m >= 0) close(m);
        return;
    }
    int s = open(ptsname(m), O_RDWR | O_NOCTTY);
    int saved = dup(2);
    fflush(stderr);
    dup2(s, 2);
    fixture f;
    char err[256] = "";
    int rc = fx_open(&f, "xterm-256color", 0, 0, err, sizeof(err));
    fprintf(stderr, "pelab-buffered-line\n");
    fflush(stderr);
    struct pollfd p = {.fd = m, .events = POLLIN};
    int early = poll(&p, 1, 50);
    fx_close(&f);
    char buf[256] = "";
    ssize_t n = 0;
    if (poll(&p, 1, 1000) > 0) n = read(m, buf, sizeof(buf) - 1);
    if (n > 0) buf[n] = 0;
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(s);
    close(m);
    TAP_OK(rc == 0 && early == 0, "stderr held back while the TUI is open");
    TAP_OK(strstr(buf, "pelab-buffered-line") != NULL, "and printed after it closes");
}

/* A child opens the TUI and then dies (fatal signal) or exits without closing it: the
 * terminal must be restored on the way out (endwin leaves the alternate screen: rmcup). */
static void test_restore_on_exit(void)
{
    for (int mode = 0; mode < 2; mode++) {
        FILE *out = tmpfile();
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            struct rlimit no_core = {0, 0};
            setrlimit(RLIMIT_CORE, &no_core);
            int p[2];
            if (pipe(p) != 0) _exit(90);
            tui_options o = {.in = fdopen(p[0], "r"), .out = out, .term = "xterm-256color"};
            tui *t;
            char err[256];
            if (tui_open(&t, &o, err, sizeof(err)) != 0) _exit(91);
            tui_present(t);
            if (mode == 0) raise(SIGSEGV);
            exit(3);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        long n = out_size(out);
        char *buf = calloc(1, (size_t)n + 1);
        rewind(out);
        size_t got = fread(buf, 1, (size_t)n, out);
        buf[got] = 0;
        const char *rmcup = strstr(buf, "\033[?1049l");
        if (mode == 0)
            TAP_OK(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV && rmcup,
                   "SIGSEGV: the terminal is restored, then the signal kills as before");
        else
            TAP_OK(WIFEXITED(status) && WEXITSTATUS(status) == 3 && rmcup,
                   "exit() without tui_close: atexit restores the terminal");
        free(buf);
        fclose(out);
    }
}

/* A terminal on the master side of a pseudo-terminal: it waits for the background query, checks
 * it, and answers with reply (NULL: never answers). Exit status 0 when the query was right. */
static pid_t fake_terminal(int m, const char *reply)
{
    pid_t pid = fork();
    if (pid != 0) return pid;
    char buf[256] = "";
    size_t n = 0;
    struct pollfd p = {.fd = m, .events = POLLIN};
    while (n + 1 < sizeof buf && !strstr(buf, "\033[c") && poll(&p, 1, 2000) > 0) {
        ssize_t k = read(m, buf + n, sizeof buf - 1 - n);
        if (k <= 0) break;
        n += (size_t)k;
        buf[n] = '\0';
    }
    if (reply && write(m, reply, strlen(reply)) < 0) _exit(2);
    _exit(strstr(buf, "\033]11;?\a\033[c") ? 0 : 1);
}

/* OSC 11: the background query on a pseudo-terminal answered as xterm, tmux and others do, a
 * terminal that answers only the device attributes, and one that answers nothing. Keys typed
 * meanwhile are kept, the replies never are, and the terminal's modes come back. */
static void test_background_query(void)
{
    static const struct {
        const char *typed, *reply, *what;
        int dark;
        const char *rest;
    } cases[] = {
        {"q", "\033]11;rgb:0000/0000/0000\033\\\033[?1;2c", "black, ST, a key typed before", 1,
         "q"},
        {"", "\033]11;rgb:ffff/ffff/ffff\a\033[?62;22c", "white, BEL", 0, ""},
        {"", "\033]11;rgb:20/20/20\a\033[?1;2cj", "2-digit #202020, a key after", 1, "j"},
        {"", "\033]11;rgb:c0c0/c0c0/c0c0\a\033[?1;2c", "tmux's white (#c0c0c0)", 0, ""},
        {"", "\033[?6c", "no OSC 11 (device attributes only)", -1, ""},
        {"", NULL, "no answer at all", -1, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int m = posix_openpt(O_RDWR | O_NOCTTY);
        if (m < 0 || grantpt(m) != 0 || unlockpt(m) != 0) {
            tap_diag("no pseudo-terminal: the background query is not checked");
            if (m >= 0) close(m);
            return;
        }
        int sl = open(ptsname(m), O_RDWR | O_NOCTTY);
        struct termios before, after;
        tcgetattr(sl, &before);
        if (cases[i].typed[0] && write(m, cases[i].typed, strlen(cases[i].typed)) < 0)
            tap_diag("could not type");
        pid_t pid = fake_terminal(m, cases[i].reply);
        char rest[16];
        size_t nr = 0;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int dark = tui_query_background(sl, sl, 100, rest, sizeof rest, &nr);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
        int status = -1;
        waitpid(pid, &status, 0);
        tcgetattr(sl, &after);
        int modes = (after.c_lflag & (ICANON | ECHO)) == (before.c_lflag & (ICANON | ECHO));
        TAP_OK(dark == cases[i].dark && nr == strlen(cases[i].rest) &&
                   memcmp(rest, cases[i].rest, nr) == 0 && WIFEXITED(status) &&
                   WEXITSTATUS(status) == 0 && modes,
               "OSC 11, %s: %d (want %d), %zu other byte(s) kept, modes restored %d, in %.0f ms",
               cases[i].what, dark, cases[i].dark, nr, modes, ms);
        /* the one timing in this test guards against a hang: the wait is 100 ms */
        if (!cases[i].reply) TAP_OK(ms < 5000, "no answer: given up after %.0f ms", ms);
        close(sl);
        close(m);
    }
}

int main(void)
{
    if (!setlocale(LC_ALL, "C.UTF-8") && !setlocale(LC_ALL, "en_US.UTF-8"))
        return tap_skip_all("no UTF-8 locale");
    setenv("COLUMNS", "40", 1);
    setenv("LINES", "12", 1);
    /* The terminfo entry the tests use; a missing one is a skip, not a failure. */
    fixture f;
    char err[256] = "";
    if (fx_open(&f, "xterm-256color", 0, 0, err, sizeof(err)) != 0) {
        fx_close(&f);
        if (strstr(err, "terminfo")) return tap_skip_all("no xterm-256color terminfo entry");
        printf("# %s\n", err);
        return 1;
    }
    fx_close(&f);
    test_draw();
    test_colour_modes();
    test_flat_fills();
    test_truecolor_sgr();
    test_input();
    test_home_end();
    test_signals();
    test_failures();
    test_stderr_buffer();
    test_background_query();
    test_restore_on_exit();
    return tap_done();
}
