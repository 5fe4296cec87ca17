/* termcolor.c: nearest colours in OKLab and ordered dithering for 256/16/8-colour terminals. */
#include "termcolor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct lab {
    double l, a, b;
} lab;

static double lin(int c)
{
    double v = c / 255.0;
    return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
}

/* sRGB -> OKLab (Ottosson's matrices). */
static lab to_lab(uint32_t rgb)
{
    double r = lin((int)(rgb >> 16) & 0xff), g = lin((int)(rgb >> 8) & 0xff),
           b = lin((int)rgb & 0xff);
    double l = cbrt(0.4122214708 * r + 0.5363325363 * g + 0.0514459929 * b);
    double m = cbrt(0.2119034982 * r + 0.6806995451 * g + 0.1073969566 * b);
    double s = cbrt(0.0883024619 * r + 0.2817188376 * g + 0.6299787005 * b);
    lab o = {0.2104542553 * l + 0.7936177850 * m - 0.0040720468 * s,
             1.9779984951 * l - 2.4285922050 * m + 0.4505937099 * s,
             0.0259040371 * l + 0.7827717662 * m - 0.8086757660 * s};
    return o;
}

static double d2(lab p, lab q)
{
    return (p.l - q.l) * (p.l - q.l) + (p.a - q.a) * (p.a - q.a) + (p.b - q.b) * (p.b - q.b);
}

static const uint32_t ansi16[16] = {0x000000, 0xcd0000, 0x00cd00, 0xcdcd00, 0x0000ee, 0xcd00cd,
                                    0x00cdcd, 0xe5e5e5, 0x7f7f7f, 0xff0000, 0x00ff00, 0xffff00,
                                    0x5c5cff, 0xff00ff, 0x00ffff, 0xffffff};

uint32_t termcolor_rgb(int i)
{
    if (i < 0 || i > 255) return 0;
    if (i < 16) return ansi16[i];
    if (i >= 232) {
        uint32_t v = (uint32_t)(8 + 10 * (i - 232));
        return v << 16 | v << 8 | v;
    }
    static const int level[6] = {0, 95, 135, 175, 215, 255};
    int k = i - 16;
    return (uint32_t)level[k / 36] << 16 | (uint32_t)level[k / 6 % 6] << 8 | (uint32_t)level[k % 6];
}

/* The palette in OKLab, computed once: [0..255] by index. */
static const lab *palette_lab(void)
{
    static lab pal[256];
    static int ready;
    if (!ready) {
        for (int i = 0; i < 256; i++) pal[i] = to_lab(termcolor_rgb(i));
        ready = 1;
    }
    return pal;
}

/* Candidate indices [*first, *end) for ncolors. */
static void range(int ncolors, int *first, int *end)
{
    *first = ncolors >= 256 ? 16 : 0;
    *end = ncolors >= 256 ? 256 : ncolors >= 16 ? 16 : 8;
}

/* What a colour dithers to: the nearest index c1, the partner c2, and the share of the 16 pattern
 * cells that take c2. Cached by colour (direct-mapped), since a frame repeats its colours. */
typedef struct mix_entry {
    uint32_t key; /* rgb | palette code << 24 | 1u << 31 when set */
    uint8_t c1, c2, n2;
} mix_entry;

enum { CACHE_SIZE = 4096 };

/* For pixels, lightness counts this many times a and b in the small palettes: with 16 colours
 * a hue match is never close, and a map read by its lightness must keep it. */
static const double small_l_weight = 3.0;

static lab weigh(lab p, double wl)
{
    p.l *= wl;
    return p;
}

/* The best mix of palette colours p and q for t: *n2 of 16 cells q (0..max2), the rest p.
 * Returns its cost: the distance of the mix to t plus a penalty for a noisy pattern (two far
 * colours side by side), so close partners win when two mixes are about as close. */
static double mix_cost(lab t, lab p, lab q, int max2, int *n2)
{
    lab dq = {q.l - p.l, q.a - p.a, q.b - p.b};
    double len2 = dq.l * dq.l + dq.a * dq.a + dq.b * dq.b;
    int k = 0;
    if (len2 > 0) {
        double f = ((t.l - p.l) * dq.l + (t.a - p.a) * dq.a + (t.b - p.b) * dq.b) / len2;
        k = (int)lround(fmin(fmax(f, 0.0), max2 / 16.0) * 16);
    }
    double fq = k / 16.0;
    lab m = {p.l + fq * dq.l, p.a + fq * dq.a, p.b + fq * dq.b};
    *n2 = k;
    return d2(t, m) + 0.1 * fq * (1 - fq) * len2;
}

static mix_entry compute_mix(uint32_t rgb, int ncolors)
{
    const lab *pal = palette_lab();
    int first, end;
    range(ncolors, &first, &end);
    double wl = ncolors >= 256 ? 1.0 : small_l_weight;
    lab t = weigh(to_lab(rgb), wl);
    int c1 = first;
    double bd = INFINITY;
    for (int i = first; i < end; i++) {
        double d = d2(t, weigh(pal[i], wl));
        if (d < bd) {
            bd = d;
            c1 = i;
        }
    }
    mix_entry e = {0, (uint8_t)c1, (uint8_t)c1, 0};
    if (bd < 1e-7) return e;
    double best = bd;
    if (ncolors >= 256) {
        /* 240 colours: the nearest keeps at least half the cells, its partner is searched */
        for (int i = first; i < end; i++) {
            if (i == c1) continue;
            int n2;
            double cost = mix_cost(t, weigh(pal[c1], wl), weigh(pal[i], wl), 8, &n2);
            if (n2 > 0 && cost < best) {
                best = cost;
                e.c2 = (uint8_t)i;
                e.n2 = (uint8_t)n2;
            }
        }
        return e;
    }
    /* 16 or 8 colours: every pair, so the mix follows the colour smoothly */
    for (int i = first; i < end; i++)
        for (int j = first; j < end; j++) {
            if (i == j) continue;
            int n2;
            double cost = mix_cost(t, weigh(pal[i], wl), weigh(pal[j], wl), 8, &n2);
            if (cost < best) {
                best = cost;
                e.c1 = (uint8_t)i;
                e.c2 = (uint8_t)(n2 ? j : i);
                e.n2 = (uint8_t)n2;
            }
        }
    return e;
}

static mix_entry mix_for(uint32_t rgb, int ncolors)
{
    static mix_entry cache[CACHE_SIZE];
    rgb &= 0xffffff;
    uint32_t code = ncolors >= 256 ? 3u : ncolors >= 16 ? 2u : 1u;
    uint32_t key = rgb | code << 24 | 1u << 31;
    uint32_t h = (rgb * 2654435761u ^ code * 40503u) >> 20 & (CACHE_SIZE - 1);
    if (cache[h].key == key) return cache[h];
    mix_entry e = compute_mix(rgb, ncolors);
    e.key = key;
    cache[h] = e;
    return e;
}

/* OKLab chroma from which a colour has a hue: a series colour, never to be drawn in one of the
 * greys that ink, axes and muted text use (a pale series turned grey reads as a reference
 * line). */
#define HUED 0.03

static int hued(lab p)
{
    return hypot(p.a, p.b) >= HUED;
}

int termcolor_nearest(uint32_t rgb, int ncolors)
{
    const lab *pal = palette_lab();
    lab t = to_lab(rgb & 0xffffff);
    int keep_hue = hued(t);
    if (ncolors >= 256) {
        int c1 = mix_for(rgb, ncolors).c1; /* c1 is the nearest there */
        if (!keep_hue || hued(pal[c1])) return c1;
    }
    int first, end, best = 0;
    range(ncolors, &first, &end);
    /* text and rules: the plain nearest, which keeps hues (red stays red); a colour with a hue
     * takes the nearest that has one too */
    double bd = INFINITY;
    for (int i = first; i < end; i++) {
        if (keep_hue && !hued(pal[i])) continue;
        double d = d2(t, pal[i]);
        if (d < bd) {
            bd = d;
            best = i;
        }
    }
    return best;
}

int termcolor_dither(uint32_t rgb, int ncolors, int x, int y)
{
    /* Bayer 4x4: thresholds 0..15 spread so any share of cells is evenly scattered. */
    static const uint8_t bayer[4][4] = {
        {0, 8, 2, 10}, {12, 4, 14, 6}, {3, 11, 1, 9}, {15, 7, 13, 5}};
    mix_entry e = mix_for(rgb, ncolors);
    return bayer[y & 3][x & 3] < e.n2 ? e.c2 : e.c1;
}

double termcolor_lightness(uint32_t rgb)
{
    return to_lab(rgb & 0xffffff).l;
}

int termcolor_colorfgbg_dark(const char *v)
{
    if (!v || !*v) return -1;
    /* the background is the last field */
    const char *last = v;
    for (const char *p = v; *p; p++)
        if (*p == ';') last = p + 1;
    char *end = NULL;
    long bg = strtol(last, &end, 10);
    if (end == last || *end || bg < 0 || bg > 255) return -1;
    /* ANSI 7 (light grey) and 15 (white) are light backgrounds; the other 16 are dark */
    if (bg < 16) return !(bg == 7 || bg == 15);
    return termcolor_lightness(termcolor_rgb((int)bg)) < 0.5;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int termcolor_osc11_dark(const char *reply, size_t n)
{
    static const char head[] = "\033]11;rgb:";
    const size_t hn = sizeof head - 1;
    if (!reply || n < hn || memcmp(reply, head, hn) != 0) return -1;
    const char *p = reply + hn, *end = reply + n;
    int c8[3];
    for (int i = 0; i < 3; i++) {
        /* a field of k hex digits is a fraction of 16^k - 1 (X11's rgb: syntax) */
        unsigned v = 0;
        int k = 0;
        for (; p < end && k < 4 && hex_digit(*p) >= 0; p++, k++)
            v = v * 16 + (unsigned)hex_digit(*p);
        if (k == 0 || (p < end && hex_digit(*p) >= 0)) return -1;
        c8[i] = (int)lround(255.0 * v / (double)((1u << (4 * k)) - 1));
        if (i < 2 && (p >= end || *p++ != '/')) return -1;
    }
    if (p >= end || !(*p == '\a' || *p == '\033')) return -1; /* BEL or the ST's ESC */
    uint32_t rgb = (uint32_t)c8[0] << 16 | (uint32_t)c8[1] << 8 | (uint32_t)c8[2];
    /* the same line as COLORFGBG's: below half of OKLab's lightness is a dark page */
    return termcolor_lightness(rgb) < 0.5;
}
