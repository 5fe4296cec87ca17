/* test_termcolor: colormaps on 256- and 16-colour terminals (issue 11). Nearest colours are
 * chosen in OKLab and pixels dithered with a 4x4 ordered pattern, so along a sequential map the
 * lightness a viewer sees (the mean over a pattern tile) keeps rising after quantisation, and
 * the diverging map does not jump between hues at its steps; COLORFGBG is read for a dark
 * terminal. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "colormap.h"
#include "figure.h"
#include "tap.h"
#include "termcolor.h"

/* Mean OKLab lightness of a 4x4 tile of rgb dithered to n colours. */
static double tile_lightness(uint32_t rgb, int n)
{
    double sum = 0;
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 4; x++)
            sum += termcolor_lightness(termcolor_rgb(termcolor_dither(rgb, n, x, y)));
    return sum / 16;
}

int main(void)
{
    static const char *const maps[] = {"viridis", "magma", "inferno", "cividis", "gray"};
    static const int ns[] = {256, 16};
    for (size_t m = 0; m < sizeof maps / sizeof maps[0]; m++) {
        const cmap *map = cmap_find(maps[m]);
        for (size_t k = 0; k < 2; k++) {
            int n = ns[k];
            double prev = -1, worst = 0, maxerr = 0;
            for (int i = 0; i <= 128; i++) {
                uint32_t rgb = cmap_color(map, i / 128.0);
                double l = tile_lightness(rgb, n);
                if (prev >= 0 && prev - l > worst) worst = prev - l;
                prev = l;
                double e = fabs(l - termcolor_lightness(rgb));
                if (e > maxerr) maxerr = e;
            }
            /* 0.01 of OKLab L is below what the eye tells apart in neighbouring cells */
            TAP_OK(worst <= 0.01,
                   "%s at %d colours: lightness rises along the map (largest drop %.4f)", maps[m],
                   n, worst);
            if (n == 256)
                TAP_OK(maxerr <= 0.03,
                       "%s at 256 colours: a tile's lightness is the colour's (%.4f off)", maps[m],
                       maxerr);
        }
    }
    /* the nearest colour undithered keeps the order too at 256 colours (text, rules) */
    const cmap *vir = cmap_find("viridis");
    double prev = -1, worst = 0;
    for (int i = 0; i <= 64; i++) {
        double l =
            termcolor_lightness(termcolor_rgb(termcolor_nearest(cmap_color(vir, i / 64.0), 256)));
        if (prev >= 0 && prev - l > worst) worst = prev - l;
        prev = l;
    }
    TAP_OK(worst <= 0.02, "viridis, nearest of 256: lightness never drops by more than 0.02 (%.4f)",
           worst);
    /* the diverging map: every step's colour keeps its side's hue (no magenta in the blues) */
    const cmap *rdbu = cmap_find("rdbu");
    int wrong = 0;
    for (int i = 0; i <= 64; i++) {
        uint32_t rgb = cmap_color(rdbu, i / 64.0), q = termcolor_rgb(termcolor_nearest(rgb, 256));
        int r = (int)(rgb >> 16), b = (int)(rgb & 255), qr = (int)(q >> 16), qb = (int)(q & 255);
        if ((r - b > 40 && qb - qr > 20) || (b - r > 40 && qr - qb > 20)) wrong++;
    }
    TAP_OK(wrong == 0, "rdbu at 256 colours: no step crosses to the other side's hue (%d)", wrong);
    /* exact palette colours come back as themselves, undithered */
    int exact = 1;
    for (int i = 16; i < 256; i++)
        for (int y = 0; y < 4; y++)
            for (int x = 0; x < 4; x++) exact &= termcolor_dither(termcolor_rgb(i), 256, x, y) == i;
    TAP_OK(exact, "every colour of the 256 palette maps to itself at every pattern cell");
    TAP_OK(termcolor_nearest(0xff0000, 8) == 1 && termcolor_nearest(0xffffff, 16) == 15,
           "red on 8 colours is ANSI 1, white on 16 is 15");
    TAP_OK(
        termcolor_colorfgbg_dark("15;0") == 1 && termcolor_colorfgbg_dark("0;15") == 0 &&
            termcolor_colorfgbg_dark("15;default;0") == 1 && termcolor_colorfgbg_dark("0;7") == 0 &&
            termcolor_colorfgbg_dark("") == -1 && termcolor_colorfgbg_dark("x") == -1 &&
            termcolor_colorfgbg_dark(NULL) == -1 && termcolor_colorfgbg_dark("7;234") == 1,
        "COLORFGBG: 15;0 dark, 0;15 light, 15;default;0 dark, 0;7 light, 7;234 dark, junk unknown");
    /* OSC 11 replies: 4, 2 and 1 hex digits a field, BEL or ESC \\ at the end */
    static const struct {
        const char *reply;
        int dark;
    } osc[] = {
        {"\033]11;rgb:0000/0000/0000\a", 1}, {"\033]11;rgb:ffff/ffff/ffff\033\\", 0},
        {"\033]11;rgb:1e1e/1e1e/2e2e\a", 1}, {"\033]11;rgb:fd/f6/e3\a", 0},
        {"\033]11;rgb:c0c0/c0c0/c0c0\a", 0}, {"\033]11;rgb:2/2/2\a", 1},
        {"\033]11;rgb:0000/0000\a", -1},     {"\033]11;rgb:00000/0/0\a", -1},
        {"\033]11;rgb:zz/00/00\a", -1},      {"\033]11;rgb:00/00/00", -1},
        {"\033]10;rgb:00/00/00\a", -1},      {"", -1},
    };
    int osc_ok = 1;
    for (size_t i = 0; i < sizeof osc / sizeof osc[0]; i++) {
        int d = termcolor_osc11_dark(osc[i].reply, strlen(osc[i].reply));
        if (d != osc[i].dark) {
            osc_ok = 0;
            tap_diag("OSC 11 reply %zu: %d, want %d", i, d, osc[i].dark);
        }
    }
    TAP_OK(osc_ok, "OSC 11: black and Solarized-dark-like dark, white, tmux's white and "
                   "Solarized light light, malformed replies unknown");
    /* A series colour never lands on a grey, least of all the ink's or the axes': the dark
     * theme's beige once became grey 248 next to the axes' 247 and read as a reference line. */
    for (int dark = 0; dark < 2; dark++)
        for (size_t k = 0; k < 2; k++) {
            const fig_theme *th = fig_theme_get(dark);
            int n = ns[k], bad = -1,
                ink[3] = {termcolor_nearest(th->fg, n), termcolor_nearest(th->muted, n),
                          termcolor_nearest(th->grid, n)};
            for (int i = 0; i < 8 && bad < 0; i++) {
                uint32_t c = termcolor_rgb(termcolor_nearest(th->series[i], n));
                int r = (int)(c >> 16 & 0xff), g = (int)(c >> 8 & 0xff), b = (int)(c & 0xff);
                int idx = termcolor_nearest(th->series[i], n);
                if ((r == g && g == b) || idx == ink[0] || idx == ink[1] || idx == ink[2]) bad = i;
            }
            TAP_OK(bad < 0, "%s theme at %d colours: every series colour keeps a hue (%d)",
                   th->name, n, bad);
        }
    return tap_done();
}
