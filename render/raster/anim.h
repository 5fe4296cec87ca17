/* anim.h: animations from frames already drawn (premultiplied ARGB32, as raster_draw_argb makes
 * them): GIF (giflib, one palette from libimagequant for the whole animation), animated WebP
 * (libwebp's WebPAnimEncoder) and a folder of numbered PNGs. Only render/gif_write.c and
 * render/webp_write.c include those libraries; this header includes neither.
 *
 * Every writer works under a temporary name next to the target and renames it into place, so a
 * failure leaves nothing behind. */
#ifndef PELAB_ANIM_H
#define PELAB_ANIM_H

#include <stddef.h>
#include <stdint.h>

#include "raster.h"

typedef struct anim_frames {
    const uint32_t *const *px; /* n frames, each h rows of stride bytes, opaque */
    int n, w, h, stride;
    double fps;     /* frames per second (1..50: GIF cannot show faster than 2 centiseconds) */
    int loop;       /* times to play: 0 = forever, 1 = once, ... */
    int dither;     /* GIF: dither to the palette (off for flat figures) */
    double quality; /* WebP: < 0 lossless, else lossy quality 0..100 */
} anim_frames;

/* Frame i is shown from anim_time_ms(i) to anim_time_ms(i + 1): rounded cumulative times, so
 * the total stays exact at any fps. anim_time_cs is the same in GIF's centiseconds. */
int anim_time_ms(int i, double fps);
int anim_time_cs(int i, double fps);

/* Write path (.gif / .webp) or a folder of frame-0001.png ... Meta goes in a GIF comment, in
 * each PNG's text chunks (with the frame number added) and is not stored in WebP. Returns 0 or -1
 * with "-o PATH: why" in err. */
int anim_write_gif(const char *path, const anim_frames *a, const raster_meta *meta, size_t n_meta,
                   char *err, size_t errlen);
int anim_write_webp(const char *path, const anim_frames *a, char *err, size_t errlen);
int anim_write_frames(const char *dir, const anim_frames *a, double dpi, const raster_meta *meta,
                      size_t n_meta, char *err, size_t errlen);

/* A frames folder may be written at dir: its parent exists and is writable, and dir does not
 * exist or is an empty directory. 0, or -1 with "-o DIR: why". */
int anim_frames_check(const char *dir, char *err, size_t errlen);

#endif
