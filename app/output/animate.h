/* animate.h: `pelab export VIEW --animate NAME=FROM:TO[:FRAMES][:log]`: a view drawn frame by
 * frame while one numeric option sweeps a range, written as GIF, animated WebP or a folder of
 * PNGs. The explorer's record key goes through the same function. */
#ifndef PELAB_APP_ANIMATE_H
#define PELAB_APP_ANIMATE_H

#include <stddef.h>

#include "fileopts.h"
#include "options.h"
#include "state.h"

/* Frames are held in memory until written (the GIF palette needs all of them): a sweep needing
 * more than this is refused before any work. */
#define APP_ANIM_BUDGET         ((size_t)1 << 30)
#define APP_ANIM_MAX_FRAMES     1000
#define APP_ANIM_DEFAULT_FRAMES 48

typedef struct app_anim {
    const app_option *opt; /* the swept option (APP_OPT_INT or APP_OPT_DOUBLE) */
    double from, to;
    int frames;     /* 2..APP_ANIM_MAX_FRAMES */
    int log;        /* geometric steps (from, to > 0) */
    double fps;     /* 1..50 */
    int loop;       /* plays: 0 = forever */
    double quality; /* WebP: < 0 lossless, else 0..100 */
    int free_axes;  /* let every frame choose its own axes and colour ranges */
    int dither;     /* GIF: dither to the palette */
} app_anim;

/* Defaults: 12 fps, forever, lossless, fixed axes, no dithering; no option yet. */
void app_anim_default(app_anim *a);
/* Parse the --animate value into a (its syntax, the option, the numbers). 0 or -1 with a message
 * naming --animate, the value and what is allowed. */
int app_anim_parse(const char *spec, app_anim *a, char *err, size_t errlen);
/* The swept value at frame i. */
double app_anim_value(const app_anim *a, int i);
/* st with the option at frame i's value. 0 or -1 with a message. */
int app_anim_apply(app_state *st, const app_anim *a, int i, char *err, size_t errlen);
/* The --animate value that reproduces a ("pos=0:63:64"). */
void app_anim_spec(const app_anim *a, char *buf, size_t n);

/* Everything checked before any work: the output (its format among the animations of the format
 * table, format.h, and where it goes), both ends of the sweep valid
 * for the view, the view changes with the option, the frames fit the memory budget. Returns 0, or
 * 2 with a message. Then draw every frame and write path. Returns 0, 2 (usage: message), 1
 * (runtime failure: message). */
int app_anim_export(const app_state *st, const app_anim *a, const char *path,
                    const app_export_opts *o, char *err, size_t errlen);

#endif
