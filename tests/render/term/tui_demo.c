/* tui_demo: a manual look at the terminal backend (not run by meson test). Draws a heatmap of
 * sinusoidal position encodings, a curve, rules, an arrow, a circle and text; q or Esc quits,
 * arrows move a cursor, the mouse position is printed. Try it under ../shared/tools/tui-shot
 * with TERM=xterm, NO_COLOR=1, COLORTERM=truecolor or LC_ALL=C. */
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "colormap.h"
#include "scene.h"
#include "tui.h"

enum { POS = 1024, DIM = 64 };

static void build(scene *s, int cols, int rows, const float *pe, int cx, int cy, const char *msg,
                  tui_color_mode mode, int ascii)
{
    double w = cols, h = 2.0 * rows;
    scene_reset(s, w, h, 0x101418);
    scene_textf(s, 1, 0, 1, SCENE_LEFT | SCENE_TOP, 0xffffff, SCENE_BOLD,
                "sinusoidal PE, %d positions x %d dims  [colours %d%s]", POS, DIM, (int)mode,
                ascii ? ", ascii" : "");
    /* Left: the heatmap, POS x DIM box-averaged into the box. */
    double hx = 6, hy = 4, hw = w * 0.45, hh = h - 10;
    if (hw < 4 || hh < 4) return;
    scene_heatmap(s, hx, hy, hw, hh, pe, POS, DIM, DIM, -1, 1, cmap_default_diverging(), 0x000000);
    scene_line(s, hx - 1, hy, hx - 1, hy + hh, 0xaaaaaa, 0, SCENE_RULE);
    scene_line(s, hx - 1, hy + hh, hx + hw, hy + hh, 0xaaaaaa, 0, SCENE_RULE);
    for (int k = 0; k <= 4; k++) {
        double y = hy + hh * k / 4.0;
        scene_line(s, hx - 1, y, hx - 2, y, 0xaaaaaa, 0, SCENE_RULE);
        scene_textf(s, hx - 2, y, 1, SCENE_RIGHT | SCENE_MIDDLE, 0xcccccc, 0, "%d", POS * k / 4);
    }
    scene_text(s, hx + hw / 2, hy + hh + 1, "dimension", 1, SCENE_CENTER | SCENE_TOP, 0xcccccc, 0);
    /* Right: curves of a few dimensions over position. */
    double px = hx + hw + 6, py = hy, pw = w - px - 2, ph = hh;
    if (pw > 8) {
        scene_rect(s, px, py, pw, ph, 0x1c2430, SCENE_FILL);
        scene_line(s, px, py + ph / 2, px + pw, py + ph / 2, 0x445566, 0, SCENE_RULE);
        static const uint32_t colors[3] = {0x4e79a7, 0xf28e2b, 0x59a14f};
        double xy[2 * POS];
        for (int d = 0; d < 3; d++) {
            for (int p = 0; p < POS; p++) {
                xy[2 * p] = px + pw * p / (POS - 1.0);
                xy[2 * p + 1] = py + ph / 2 - (ph / 2 - 1) * pe[p * DIM + 20 + d * 12];
            }
            scene_polyline(s, xy, POS, px, py, pw, ph, colors[d], 0, d == 2 ? SCENE_DASHED : 0);
        }
        scene_text(s, px + pw / 2, py + ph + 1, "position", 1, SCENE_CENTER | SCENE_TOP, 0xcccccc,
                   0);
        scene_arrow(s, px + pw - 2, py + 2, px + pw * 0.6, py + ph * 0.3, 0xffcc00, 0);
        scene_text(s, px + pw - 2, py + 2, "fast", 1, SCENE_RIGHT | SCENE_BOTTOM, 0xffcc00, 0);
        scene_circle(s, px + pw * 0.25, py + ph * 0.7, 3, 0xff66aa, 0, 0);
    }
    scene_text(s, 1, h - 1, msg, 1, SCENE_LEFT | SCENE_MIDDLE, 0x88ccff, 0);
    if (cx >= 0) scene_rect(s, cx, 2.0 * cy, 1, 2, 0xffffff, 0);
}

int main(void)
{
    setlocale(LC_ALL, "");
    static float pe[POS * DIM];
    for (int p = 0; p < POS; p++)
        for (int i = 0; i < DIM / 2; i++) {
            double f = pow(10000.0, -2.0 * i / DIM);
            pe[p * DIM + 2 * i] = (float)sin(p * f);
            pe[p * DIM + 2 * i + 1] = (float)cos(p * f);
        }
    tui *t;
    char err[256];
    if (tui_open(&t, NULL, err, sizeof(err)) != 0) {
        fprintf(stderr, "tui_demo: %s\n", err);
        return 1;
    }
    scene s;
    scene_init(&s, 1, 1, 0);
    int cx = 10, cy = 5;
    char msg[160] = "q quits; arrows move the box; click anywhere";
    for (;;) {
        cellgrid *g = tui_grid(t);
        build(&s, g->cols, g->rows, pe, cx, cy, msg, tui_colors(t), tui_ascii(t));
        cellgrid_render(g, &s);
        tui_present(t);
        ui_event ev;
        if (!tui_poll(t, &ev, -1)) continue;
        if (ev.type == UI_EV_QUIT) break;
        if (ev.type == UI_EV_KEY) {
            if (ev.key == 'q' || ev.key == UI_KEY_ESC) break;
            cx += ev.key == UI_KEY_RIGHT ? 1 : ev.key == UI_KEY_LEFT ? -1 : 0;
            cy += ev.key == UI_KEY_DOWN ? 1 : ev.key == UI_KEY_UP ? -1 : 0;
            snprintf(msg, sizeof(msg), "key %#x mods %u", ev.key, ev.mods);
        } else if (ev.type == UI_EV_MOUSE) {
            snprintf(msg, sizeof(msg), "mouse %d button %d at (%.1f, %.1f)", (int)ev.mouse,
                     ev.button, ev.x, ev.y);
        }
    }
    scene_free(&s);
    tui_close(t);
    return 0;
}
