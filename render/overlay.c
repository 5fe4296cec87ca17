/* overlay.c: the key / description overlay (overlay.h). */
#include "overlay.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { LINE_MAX = 512, MAX_LINES = 1024 };

/* One laid-out line of the list: the keys (or "") and a piece of description. */
typedef struct oline {
    const char *keys;
    char what[LINE_MAX];
    int strong;
} oline;

/* Copy the longest prefix of *p (whole words; a word wider than w alone is split between code
 * points) that fits w at size 1 into out, and advance *p past it and the spaces after. */
static double width_of(const scene_target *t, const char *str, int bold)
{
    return bold ? scene_text_width_bold(t, str, 1) : scene_text_width(t, str, 1);
}

static void take_line(const scene_target *t, const char **p, double w, char *out, size_t n,
                      int bold)
{
    const char *s = *p;
    size_t best = 0, len = 0;
    for (;;) {
        size_t end = len;
        while (s[end] && s[end] != ' ') end++;
        if (end >= n) break;
        memcpy(out, s, end);
        out[end] = '\0';
        if (width_of(t, out, bold) > w) break;
        best = end;
        if (!s[end]) break;
        len = end;
        while (s[len] == ' ') len++;
    }
    if (best == 0) { /* one word wider than the line: as many code points as fit */
        size_t k = 0;
        for (;;) {
            size_t next = k + 1;
            while (s[next] && ((unsigned char)s[next] & 0xc0) == 0x80) next++;
            if (next >= n) break;
            memcpy(out, s, next);
            out[next] = '\0';
            if (k > 0 && width_of(t, out, bold) > w) break;
            k = next;
            if (!s[k]) break;
        }
        best = k;
    }
    memcpy(out, s, best);
    out[best] = '\0';
    s += best;
    while (*s == ' ') s++;
    *p = s;
}

/* Wrap text into lines of width w; returns how many (at most max). */
static int wrap(const scene_target *t, const char *text, double w, char (*out)[LINE_MAX], int max,
                int bold)
{
    int n = 0;
    const char *p = text ? text : "";
    while (*p == ' ') p++;
    while (*p && n < max) take_line(t, &p, w, out[n++], LINE_MAX, bold);
    return n;
}

/* The box in a canvas rw wide and the columns in it. */
typedef struct geom {
    int cells;
    double cw, lh, bw, pad, iw, kw;
} geom;

static geom box_geom(const scene_target *t, double rw, const overlay_entry *e, size_t n)
{
    geom g;
    g.cells = t->cells;
    g.cw = g.cells ? 1.0 : t->char_w;
    g.lh = g.cells ? 2.0 : round(t->text_h * 1.15);
    /* the box: the whole width less a margin, at most 100 characters wide */
    g.bw = fmin(rw - 2 * g.cw, 100 * g.cw);
    /* a blank cell (a character's width) between the border and the longest line on each side:
     * in a terminal the border takes a cell of its own, so the text starts two cells in */
    g.pad = g.cells ? 2.0 : g.cw;
    g.iw = g.bw - 2 * g.pad;
    /* the keys column: as wide as the widest keys, at most a third of the box */
    double kw = 0;
    for (size_t i = 0; i < n; i++) kw = fmax(kw, scene_text_width_bold(t, e[i].keys, 1));
    g.kw = fmin(kw + 2 * g.cw, floor(g.iw / 3));
    if (g.cells) g.kw = ceil(g.kw);
    return g;
}

static oline lines[MAX_LINES];

/* The entries as lines (keys wider than their column alone on a line, descriptions wrapped);
 * returns how many, in lines[]. */
static int lay_out(const scene_target *t, const geom *g, const overlay_entry *e, size_t n)
{
    /* enough lines for a 1 KiB description (a command) in the narrowest box */
    static char tmp[128][LINE_MAX];
    double dw = g->iw - g->kw;
    int nl = 0;
    for (size_t i = 0; i < n && nl < MAX_LINES; i++) {
        int own_line = scene_text_width_bold(t, e[i].keys, 1) > g->kw - g->cw;
        if (own_line) { /* keys wider than the column: alone on their line */
            lines[nl].keys = e[i].keys;
            lines[nl].what[0] = '\0';
            lines[nl++].strong = e[i].strong;
        }
        int k = wrap(t, e[i].what, dw, tmp, 128, 0);
        for (int j = 0; j < k && nl < MAX_LINES; j++) {
            lines[nl].keys = j == 0 && !own_line ? e[i].keys : "";
            snprintf(lines[nl].what, LINE_MAX, "%s", tmp[j]);
            lines[nl++].strong = e[i].strong;
        }
    }
    return nl;
}

double overlay_list_height(const scene_target *t, double w, const char *title,
                           const overlay_entry *e, size_t n, const char *footer)
{
    geom g = box_geom(t, w, e, n);
    if (g.iw <= g.cw) return 0;
    char tl[4][LINE_MAX], fl[4][LINE_MAX];
    int nt = wrap(t, title, g.iw, tl, 4, 1), nf = wrap(t, footer, g.iw, fl, 4, 0);
    int nl = lay_out(t, &g, e, n);
    /* title, entries, the "all n lines" line and the footer, with overlay_list's spacing:
     * 0.4 + 0.3 + 0.3 line heights of padding in the box and a line of margin around it */
    int rows = nt + nl + 1 + nf;
    if (rows < 4) rows = 4; /* overlay_list's smallest box */
    return g.cells ? 2.0 * rows : (rows + 2) * g.lh;
}

int overlay_list(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                 const char *title, const overlay_entry *e, size_t n, const char *footer,
                 int *scroll)
{
    geom g = box_geom(t, r.w, e, n);
    int cells = g.cells;
    double cw = g.cw, lh = g.lh, bw = g.bw, pad = g.pad, iw = g.iw, kw = g.kw;
    s->text_h = t->text_h;
    double bh = r.h - (cells ? 0.0 : lh);
    double bx = r.x + (r.w - bw) / 2, by = r.y + (r.h - bh) / 2;
    if (cells) {
        bx = floor(bx);
        by = 2.0 * floor(by / 2.0);
        bh = 2.0 * floor(bh / 2.0);
    }
    if (bw < 10 * cw || bh < 4 * lh) return 0;
    scene_rect(s, bx, by, bw, bh, th->bg, SCENE_FILL);
    scene_rect(s, bx, by, bw, bh, th->accent, 0);
    int nl = lay_out(t, &g, e, n);

    char title_l[4][LINE_MAX], foot_l[4][LINE_MAX];
    int nt = wrap(t, title, iw, title_l, 4, 1), nf = wrap(t, footer, iw, foot_l, 4, 0);
    double y = by + (cells ? 0.0 : 0.4 * lh);
    for (int i = 0; i < nt; i++, y += lh)
        scene_text(s, bx + pad, y, title_l[i], 1, SCENE_LEFT | SCENE_TOP, th->accent, SCENE_BOLD);
    double list_top = y + (cells ? 0.0 : 0.3 * lh);
    /* room for the footer and the "lines a-b of n" line */
    double list_bottom = by + bh - (nf + 1) * lh - (cells ? 0.0 : 0.3 * lh);
    int rows = (int)floor((list_bottom - list_top) / lh + 1e-9);
    if (rows < 1) rows = 1;
    int max_scroll = nl > rows ? nl - rows : 0;
    if (*scroll > max_scroll) *scroll = max_scroll;
    if (*scroll < 0) *scroll = 0;
    y = list_top;
    for (int i = *scroll; i < nl && i < *scroll + rows; i++, y += lh) {
        if (lines[i].keys[0])
            scene_text(s, bx + pad, y, lines[i].keys, 1, SCENE_LEFT | SCENE_TOP,
                       lines[i].strong ? th->accent : th->fg, SCENE_BOLD);
        if (lines[i].what[0])
            scene_text(s, bx + pad + kw, y, lines[i].what, 1, SCENE_LEFT | SCENE_TOP, th->fg, 0);
    }
    y = by + bh - (nf + 1) * lh - (cells ? 0.0 : 0.2 * lh);
    /* which lines show, when not all do (else the line stays blank, a gap before the footer) */
    char where[LINE_MAX] = "";
    if (nl > rows)
        snprintf(where, sizeof where, "lines %d-%d of %d: j/k or arrows scroll, PgUp/PgDn page",
                 *scroll + 1, *scroll + rows < nl ? *scroll + rows : nl, nl);
    char wl[2][LINE_MAX];
    int nw = wrap(t, where, iw, wl, 2, 0);
    if (nw) scene_text(s, bx + pad, y, wl[0], 1, SCENE_LEFT | SCENE_TOP, th->muted, 0);
    if (nw > 1) scene_note_cut(s, where); /* the count did not fit one line */
    y += lh;
    for (int i = 0; i < nf; i++, y += lh)
        scene_text(s, bx + pad, y, foot_l[i], 1, SCENE_LEFT | SCENE_TOP, th->muted, 0);
    return nl;
}
