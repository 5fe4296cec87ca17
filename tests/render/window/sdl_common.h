/* sdl_common.h: the scene the SDL tests present and the checks of its pixels. Header-only. */
#ifndef PELAB_TEST_SDL_COMMON_H
#define PELAB_TEST_SDL_COMMON_H

#include <stdint.h>
#include <stdlib.h>

#include "colormap.h"
#include "scene.h"
#include "tap.h"

#define BG_COLOR   0x204060u
#define RECT_COLOR 0xe01010u
enum { RECT_X = 20, RECT_Y = 30, RECT_W = 60, RECT_H = 40 };
/* A 2 x 3 heatmap drawn into 120 x 80 pixels: 40 x 40 pixels per cell. */
enum { HEAT_X = 120, HEAT_Y = 40, HEAT_W = 120, HEAT_H = 80 };
static const float heat_data[2][3] = {{0.0f, 1.0f, 0.5f}, {1.0f, 0.0f, 0.25f}};

/* A colormap whose colour says its index: entry i = (i, 0, 255 - i). */
static uint8_t test_rgb[256][3];
static const cmap test_map = {"test", "index ramp", 0, 0, (const uint8_t (*)[3])test_rgb};

static inline void test_map_fill(void)
{
    for (int i = 0; i < 256; i++) {
        test_rgb[i][0] = (uint8_t)i;
        test_rgb[i][1] = 0;
        test_rgb[i][2] = (uint8_t)(255 - i);
    }
}

/* Background, a filled rectangle, a heatmap; all on whole pixels so antialiasing keeps them
 * exact. Returns 0 or -1 (out of memory). */
static inline int test_scene(scene *s, int w, int h)
{
    test_map_fill();
    scene_reset(s, w, h, BG_COLOR);
    if (!scene_rect(s, RECT_X, RECT_Y, RECT_W, RECT_H, RECT_COLOR, SCENE_FILL)) return -1;
    if (!scene_heatmap(s, HEAT_X, HEAT_Y, HEAT_W, HEAT_H, &heat_data[0][0], 2, 3, 3, 0.0, 1.0,
                       &test_map, 0x000000))
        return -1;
    return 0;
}

static inline int channel_close(uint32_t got, uint32_t want, int tol)
{
    for (int sh = 0; sh <= 16; sh += 8) {
        int d = (int)((got >> sh) & 0xff) - (int)((want >> sh) & 0xff);
        if (abs(d) > tol) return 0;
    }
    return 1;
}

/* Checks one pixel of an ARGB32 frame (stride w) against 0xRRGGBB with a per-channel tolerance;
 * opaque is required too. */
static inline void check_px(const uint32_t *px, int w, int x, int y, uint32_t want, int tol,
                            const char *what)
{
    uint32_t got = px[(size_t)y * (size_t)w + (size_t)x];
    if (!TAP_OK((got >> 24) == 0xff && channel_close(got, want, tol), "%s: pixel (%d,%d) is %06x",
                what, x, y, want))
        tap_diag("got %08x", got);
}

/* The colour test_map gives value v in [0, 1]. */
static inline uint32_t heat_color(float v)
{
    uint32_t i = (uint32_t)(v * 255.0f + 0.5f);
    return i << 16 | (255 - i);
}

/* Checks a frame of test_scene: background, rectangle inside and just outside, each heatmap
 * cell at its centre. */
static inline void check_frame(const uint32_t *px, int w, int h, const char *what)
{
    (void)h;
    check_px(px, w, 5, 5, BG_COLOR, 0, what);
    check_px(px, w, w - 3, h - 3, BG_COLOR, 0, what);
    check_px(px, w, RECT_X + RECT_W / 2, RECT_Y + RECT_H / 2, RECT_COLOR, 0, what);
    check_px(px, w, RECT_X, RECT_Y, RECT_COLOR, 0, what);
    check_px(px, w, RECT_X + RECT_W - 1, RECT_Y + RECT_H - 1, RECT_COLOR, 0, what);
    check_px(px, w, RECT_X - 1, RECT_Y + 5, BG_COLOR, 0, what);
    check_px(px, w, RECT_X + RECT_W, RECT_Y + 5, BG_COLOR, 0, what);
    check_px(px, w, RECT_X + 5, RECT_Y + RECT_H, BG_COLOR, 0, what);
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 3; c++)
            check_px(px, w, HEAT_X + 40 * c + 20, HEAT_Y + 40 * r + 20, heat_color(heat_data[r][c]),
                     2, what);
}

#endif
