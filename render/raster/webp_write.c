/* webp_write.c: frames -> animated WebP with libwebp's WebPAnimEncoder, through outfile (atomic).
 *
 * Lossless by default (a figure's flat colours and thin lines compress well without loss, and
 * the colours stay exact); a quality >= 0 asks for lossy frames. The encoder itself stores each
 * frame as the rectangle that changed since the last one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <webp/encode.h>
#include <webp/mux.h>

#include "anim.h"
#include "outfile.h"

/* Lossless effort level 0..9 (WebPConfigLosslessPreset): a low one keeps the encoding time near
 * the GIF writer's; the 64-frame 800 x 600 RoPE sweep is then 534 kB (the GIF: 453 kB). */
enum { LOSSLESS_LEVEL = 2 };

int anim_write_webp(const char *path, const anim_frames *a, char *err, size_t errlen)
{
    if (a->n < 1 || a->w < 1 || a->h < 1 || a->w > WEBP_MAX_DIMENSION ||
        a->h > WEBP_MAX_DIMENSION || !(a->fps > 0)) {
        snprintf(err, errlen, "-o %s: cannot write %d frames of %d x %d as a WebP", path, a->n,
                 a->w, a->h);
        return -1;
    }
    WebPAnimEncoderOptions eo;
    WebPConfig cfg;
    if (!WebPAnimEncoderOptionsInit(&eo) || !WebPConfigInit(&cfg)) {
        snprintf(err, errlen, "-o %s: libwebp version mismatch", path);
        return -1;
    }
    /* WebP's loop count is the number of plays, 0 = forever: the same meaning as --loop */
    eo.anim_params.loop_count = a->loop;
    eo.anim_params.bgcolor = 0xffffffffu;
    if (a->quality < 0) {
        WebPConfigLosslessPreset(&cfg, LOSSLESS_LEVEL);
        cfg.exact = 1;
    } else {
        cfg.quality = (float)a->quality;
        cfg.method = 4;
    }
    cfg.thread_level = 1;
    WebPAnimEncoder *enc = WebPAnimEncoderNew(a->w, a->h, &eo);
    if (!enc) {
        snprintf(err, errlen, "-o %s: out of memory (libwebp)", path);
        return -1;
    }
    int ok = 1;
    for (int i = 0; i < a->n && ok; i++) {
        WebPPicture pic;
        if (!WebPPictureInit(&pic)) {
            ok = 0;
            break;
        }
        pic.width = a->w;
        pic.height = a->h;
        pic.use_argb = 1;
        if (!WebPPictureAlloc(&pic)) {
            ok = 0;
            break;
        }
        /* the frames are opaque, so premultiplied ARGB is straight ARGB: copy the rows */
        for (int y = 0; y < a->h; y++)
            memcpy(pic.argb + (size_t)y * (size_t)pic.argb_stride,
                   (const unsigned char *)a->px[i] + (size_t)y * (size_t)a->stride,
                   (size_t)a->w * 4);
        ok = WebPAnimEncoderAdd(enc, &pic, anim_time_ms(i, a->fps), &cfg);
        WebPPictureFree(&pic);
    }
    WebPData data;
    WebPDataInit(&data);
    if (ok) ok = WebPAnimEncoderAdd(enc, NULL, anim_time_ms(a->n, a->fps), NULL);
    if (ok) ok = WebPAnimEncoderAssemble(enc, &data);
    if (!ok) {
        const char *why = WebPAnimEncoderGetError(enc);
        snprintf(err, errlen, "-o %s: WebP encoding failed: %s", path,
                 why && *why ? why : "out of memory");
        WebPAnimEncoderDelete(enc);
        WebPDataClear(&data);
        return -1;
    }
    WebPAnimEncoderDelete(enc);
    outfile of;
    int rc = -1;
    if (outfile_open(&of, path, err, errlen) == 0) {
        if (fwrite(data.bytes, 1, data.size, of.fp) != data.size) {
            outfile_fail(&of, "write failed", err, errlen); /* with the OS's reason */
        } else {
            rc = outfile_commit(&of, err, errlen);
        }
    }
    WebPDataClear(&data);
    return rc;
}
