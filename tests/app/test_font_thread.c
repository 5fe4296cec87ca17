/* test_font_thread.c (issue 21): the font lives in the render target, not in the process. The
 * explorer's view builds on its worker thread while this thread (the window's, in pelab gui)
 * changes the font and measures and draws frames; built under ThreadSanitizer (the 'threads'
 * suite, see pelab.sh) a shared font setting shows as a data race. Here: the frames keep
 * drawing during the work, every scene carries the font of the target it was built for, text is
 * measured in the target's font, and the scene's font is part of the key a window caches its
 * frame by. Not timed: the loops wait for the work however long it takes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "explorer.h"
#include "raster.h"
#include "tap.h"

enum { W = 900, H = 600 };

/* A window-like frame: a cairo target in the state's font, the explorer's frame, its pixels. */
static void frame(app_explorer *x, scene *s, uint32_t *px)
{
    scene_target t = raster_target(W, H, raster_font_px(W, H, 1));
    raster_target_font(&t, x->st.font);
    app_explorer_frame(x, s, &t);
    raster_draw_argb(s, px, W, H, W * 4, 1);
}

int main(void)
{
    const char *mono = "DejaVu Sans Mono", *serif = "DejaVu Serif";
    char err[512];
    if (raster_font_check(mono, err, sizeof err) < 0 ||
        raster_font_check(serif, err, sizeof err) < 0)
        return tap_skip_all("DejaVu Sans Mono or DejaVu Serif is not installed");

    /* the target measures in its own font */
    scene_target a = raster_target(W, H, 14), b = a;
    raster_target_font(&b, mono);
    double wa = scene_text_width(&a, "iiiiiiii", 1), wb = scene_text_width(&b, "iiiiiiii", 1);
    TAP_OK(wb > 1.5 * wa && b.font && strcmp(b.font, mono) == 0 && a.font == NULL,
           "a target in %s measures 'iiiiiiii' %.1f wide, the default's %.1f", mono, wb, wa);
    TAP_OK(raster_font_name(mono) == b.font && raster_font_name("") == raster_font_name(NULL),
           "a family's name is one pointer for the process");

    app_state st;
    app_state_default(&st);
    app_explorer *x = calloc(1, sizeof *x);
    uint32_t *px = malloc((size_t)W * H * 4);
    if (!x || !px) return tap_skip_all("out of memory");
    app_explorer_init(x, &st, 1);
    /* xl at L 512, d 1024: the worker computes for a while, on any machine */
    const char *const opts[] = {"view", "xl", "len", "512", "dim", "1024", NULL};
    for (const char *const *o = opts; o[0]; o += 2)
        if (app_explorer_apply(x, o[0], o[1]) != 0) printf("# %s %s: %s\n", o[0], o[1], x->message);
    TAP_OK(app_explorer_threaded(x) == 0, "the worker thread starts");
    scene s;
    scene_init(&s, 1, 1, 0);
    frame(x, &s, px);
    TAP_OK(app_explorer_working(x), "xl at L 512, d 1024 builds on the worker");

    /* the font changes while the worker builds; every frame is measured and drawn here */
    long frames = 0, wrong = 0;
    for (int i = 0; i < 40 || app_explorer_working(x); i++) {
        const char *f = i % 2 ? serif : mono;
        if (i < 40 && app_explorer_apply(x, "font", f) != 0) printf("# font: %s\n", x->message);
        frame(x, &s, px);
        frames++;
        if (s.font != raster_font_name(x->st.font)) wrong++;
        if (i >= 40) usleep(10000);
        if (frames > 1000000) break;
    }
    TAP_OK(wrong == 0,
           "%ld frames while the font changed: each scene in its target's font (%ld "
           "not)",
           frames, wrong);
    TAP_OK(!app_explorer_working(x) && x->view_error[0] == '\0',
           "the work finished and the view is drawn (%s)", x->view_error);
    TAP_OK(s.font == raster_font_name(serif) || s.font == raster_font_name(mono),
           "the last frame is in the last font asked for (%s)", s.font ? s.font : "(default)");

    /* the window caches its frame by this key: a font change draws anew */
    const char *had = s.font;
    uint64_t k1 = raster_scene_key(&s, W, H, 1);
    s.font = raster_font_name(had == raster_font_name(mono) ? serif : mono);
    uint64_t k2 = raster_scene_key(&s, W, H, 1);
    s.font = had;
    TAP_OK(k1 != k2 && raster_scene_key(&s, W, H, 1) == k1,
           "the scene's font is part of its frame key");

    app_explorer_free(x);
    free(x);
    free(px);
    scene_free(&s);
    return tap_done();
}
