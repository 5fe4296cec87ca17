/* termcolor.h: a colour on a terminal with 256, 16 or 8 colours, before any terminal is involved.
 *
 * Colours are matched in OKLab (Ottosson 2020), where distance follows what the eye sees, so a
 * colormap keeps its order of lightness instead of jumping between hues the way an RGB distance
 * lets it ("magenta/brown/teal stripes"). Pixels (the half-block cells of heatmaps) are dithered
 * with a 4x4 ordered (Bayer) pattern between the two palette colours whose mix is closest, so a
 * smooth gradient shows no false bands; text and rules take the nearest colour undithered.
 *
 * Palettes: 256 = the xterm cube and grey ramp (16..255; 0..15 are left out, terminals redefine
 * them); 16 and 8 = the ANSI colours with xterm's default values. */
#ifndef PELAB_TERMCOLOR_H
#define PELAB_TERMCOLOR_H

#include <stddef.h>
#include <stdint.h>

/* The nearest palette index of rgb (0xRRGGBB) among ncolors (8, 16 or 256). */
int termcolor_nearest(uint32_t rgb, int ncolors);
/* The palette index of the pixel at (x, y) showing rgb: the nearest colour or its mixing
 * partner, by the ordered pattern, so a 4x4 tile averages to rgb as closely as two colours can. */
int termcolor_dither(uint32_t rgb, int ncolors, int x, int y);
/* The colour of palette index i (xterm's defaults). */
uint32_t termcolor_rgb(int i);
/* OKLab lightness of rgb, 0 (black) .. 1 (white). */
double termcolor_lightness(uint32_t rgb);
/* What the COLORFGBG variable ("fg;bg" or "fg;default;bg", set by rxvt, Konsole and others)
 * says of the terminal's background: 1 dark, 0 light, -1 not set or not understood. */
int termcolor_colorfgbg_dark(const char *value);
/* What an OSC 11 reply ("ESC ] 11 ; rgb:RRRR/GGGG/BBBB" ended by BEL or ESC \, each field 1 to
 * 4 hex digits, as xterm, tmux, VTE, kitty and others answer "ESC ] 11 ; ?") says of the
 * background, n bytes from reply: 1 dark, 0 light, -1 not such a reply. */
int termcolor_osc11_dark(const char *reply, size_t n);

#endif
