/* gif_write.c: frames -> animated GIF with giflib, through outfile (atomic).
 *
 * One palette for the whole animation: libimagequant builds it from a histogram of every frame,
 * so a colour keeps its index from frame to frame and nothing flickers. Pixels are then mapped to
 * the nearest palette entry here (no dithering unless asked: a figure is flat colours and
 * antialiased edges, where dithering only adds noise and bytes). Index 255 is reserved as the
 * transparent colour: after the first frame each frame is written as the rectangle that changed
 * since the previous one, with unchanged pixels inside it transparent ("do not dispose"), which is
 * what keeps a figure animation small. */
#include <gif_lib.h>
#include <libimagequant.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anim.h"
#include "outfile.h"

enum { TRANSPARENT = 255, MAX_COLORS = 255 };

int anim_time_ms(int i, double fps)
{
    return (int)llround((double)i * 1000.0 / fps);
}

int anim_time_cs(int i, double fps)
{
    return (int)llround((double)i * 100.0 / fps);
}

typedef struct frame_src {
    const anim_frames *a;
    int i;
} frame_src;

static const uint32_t *row_of(const anim_frames *a, int i, int y)
{
    return (const uint32_t *)((const unsigned char *)a->px[i] + (size_t)y * (size_t)a->stride);
}

/* libimagequant reads rows through this: ARGB32 (opaque) -> RGBA. */
static void liq_row(liq_color out[], int y, int w, void *user)
{
    const frame_src *f = user;
    const uint32_t *src = row_of(f->a, f->i, y);
    for (int x = 0; x < w; x++) {
        uint32_t p = src[x];
        out[x] =
            (liq_color){(unsigned char)(p >> 16), (unsigned char)(p >> 8), (unsigned char)p, 255};
    }
}

/* colour -> palette index, memoised: a figure has a few thousand distinct colours (the
 * antialiased edges), so each is searched for once. Open addressing over 2^16 slots, grown when
 * half full. */
typedef struct cmap_cache {
    uint32_t *key; /* colour | 1 << 24 when used */
    unsigned char *val;
    size_t cap, n;
    const liq_palette *pal;
} cmap_cache;

static unsigned char nearest(const liq_palette *pal, uint32_t rgb)
{
    int r = (int)(rgb >> 16 & 0xff), g = (int)(rgb >> 8 & 0xff), b = (int)(rgb & 0xff);
    unsigned best = 0;
    long bd = -1;
    for (unsigned k = 0; k < pal->count; k++) {
        long dr = r - pal->entries[k].r, dg = g - pal->entries[k].g, db = b - pal->entries[k].b;
        /* weights close to the eye's sensitivity (as in a redmean distance) */
        long d = 2 * dr * dr + 4 * dg * dg + 3 * db * db;
        if (bd < 0 || d < bd) {
            bd = d;
            best = k;
        }
    }
    return (unsigned char)best;
}

static int cache_grow(cmap_cache *c)
{
    size_t cap = c->cap ? c->cap * 2 : (size_t)1 << 16;
    uint32_t *key = calloc(cap, sizeof *key);
    unsigned char *val = malloc(cap);
    if (!key || !val) {
        free(key);
        free(val);
        return -1;
    }
    for (size_t i = 0; i < c->cap; i++) {
        if (!c->key[i]) continue;
        size_t h = (c->key[i] * 2654435761u) & (cap - 1);
        while (key[h]) h = (h + 1) & (cap - 1);
        key[h] = c->key[i];
        val[h] = c->val[i];
    }
    free(c->key);
    free(c->val);
    c->key = key;
    c->val = val;
    c->cap = cap;
    return 0;
}

static int cache_index(cmap_cache *c, uint32_t rgb, unsigned char *out)
{
    uint32_t k = (rgb & 0xffffffu) | 1u << 24;
    size_t h = (k * 2654435761u) & (c->cap - 1);
    while (c->key[h]) {
        if (c->key[h] == k) {
            *out = c->val[h];
            return 0;
        }
        h = (h + 1) & (c->cap - 1);
    }
    if (2 * (c->n + 1) > c->cap) {
        if (cache_grow(c) < 0) return -1;
        return cache_index(c, rgb, out);
    }
    c->key[h] = k;
    c->val[h] = nearest(c->pal, rgb);
    c->n++;
    *out = c->val[h];
    return 0;
}

/* Floyd-Steinberg onto the palette, for figures that are not flat (asked with dither). */
static int map_dithered(const anim_frames *a, int i, const liq_palette *pal, unsigned char *out)
{
    int w = a->w;
    float *err = calloc((size_t)(w + 2) * 2 * 3, sizeof *err);
    if (!err) return -1;
    float *cur = err, *next = err + (size_t)(w + 2) * 3;
    for (int y = 0; y < a->h; y++) {
        const uint32_t *src = row_of(a, i, y);
        memset(next, 0, sizeof *next * (size_t)(w + 2) * 3);
        for (int x = 0; x < w; x++) {
            float v[3] = {(float)(src[x] >> 16 & 0xff), (float)(src[x] >> 8 & 0xff),
                          (float)(src[x] & 0xff)};
            int q[3];
            for (int ch = 0; ch < 3; ch++) {
                float t = v[ch] + cur[(size_t)(x + 1) * 3 + (size_t)ch];
                q[ch] = t < 0 ? 0 : t > 255 ? 255 : (int)lroundf(t);
            }
            unsigned char k = nearest(pal, (uint32_t)(q[0] << 16 | q[1] << 8 | q[2]));
            out[(size_t)y * (size_t)w + (size_t)x] = k;
            int pv[3] = {pal->entries[k].r, pal->entries[k].g, pal->entries[k].b};
            for (int ch = 0; ch < 3; ch++) {
                float e = (float)(q[ch] - pv[ch]);
                cur[(size_t)(x + 2) * 3 + (size_t)ch] += e * 7 / 16;
                next[(size_t)x * 3 + (size_t)ch] += e * 3 / 16;
                next[(size_t)(x + 1) * 3 + (size_t)ch] += e * 5 / 16;
                next[(size_t)(x + 2) * 3 + (size_t)ch] += e * 1 / 16;
            }
        }
        float *t = cur;
        cur = next;
        next = t;
    }
    free(err);
    return 0;
}

static int map_frame(const anim_frames *a, int i, cmap_cache *c, unsigned char *out)
{
    if (a->dither) return map_dithered(a, i, c->pal, out);
    for (int y = 0; y < a->h; y++) {
        const uint32_t *src = row_of(a, i, y);
        unsigned char *dst = out + (size_t)y * (size_t)a->w;
        uint32_t last = 0;
        unsigned char lk = 0;
        int have = 0;
        for (int x = 0; x < a->w; x++) {
            if (have && src[x] == last) { /* runs of one colour are most of a figure */
                dst[x] = lk;
                continue;
            }
            if (cache_index(c, src[x], &lk) < 0) return -1;
            last = src[x];
            have = 1;
            dst[x] = lk;
        }
    }
    return 0;
}

static int gif_out(GifFileType *g, const GifByteType *buf, int len)
{
    return (int)fwrite(buf, 1, (size_t)len, (FILE *)g->UserData);
}

/* The palette for every frame: a histogram over all of them, quantised once. */
static liq_result *build_palette(const anim_frames *a, char *why, size_t n)
{
    liq_attr *attr = liq_attr_create();
    if (!attr) {
        snprintf(why, n, "out of memory (libimagequant)");
        return NULL;
    }
    liq_set_max_colors(attr, MAX_COLORS);
    liq_set_speed(attr, 8); /* 1..10; the figures are few colours, more effort gains nothing */
    liq_histogram *hist = liq_histogram_create(attr);
    liq_result *res = NULL;
    liq_error e = hist ? LIQ_OK : LIQ_OUT_OF_MEMORY;
    for (int i = 0; i < a->n && e == LIQ_OK; i++) {
        frame_src src = {a, i};
        liq_image *img = liq_image_create_custom(attr, liq_row, &src, a->w, a->h, 0);
        e = img ? liq_histogram_add_image(hist, attr, img) : LIQ_OUT_OF_MEMORY;
        if (img) liq_image_destroy(img);
    }
    if (e == LIQ_OK) e = liq_histogram_quantize(hist, attr, &res);
    if (e != LIQ_OK) snprintf(why, n, "building the palette failed (libimagequant error %d)", e);
    if (hist) liq_histogram_destroy(hist);
    liq_attr_destroy(attr);
    return e == LIQ_OK ? res : NULL;
}

/* NETSCAPE2.0 application extension: the loop count is the number of repeats after the first
 * play, so "play N times" is N - 1 repeats and forever is 0. Playing once needs no extension. */
static int put_loop(GifFileType *g, int loop)
{
    if (loop == 1) return GIF_OK;
    int repeats = loop == 0 ? 0 : loop - 1;
    unsigned char sub[3] = {1, (unsigned char)(repeats & 0xff), (unsigned char)(repeats >> 8)};
    if (EGifPutExtensionLeader(g, APPLICATION_EXT_FUNC_CODE) != GIF_OK) return GIF_ERROR;
    if (EGifPutExtensionBlock(g, 11, "NETSCAPE2.0") != GIF_OK) return GIF_ERROR;
    if (EGifPutExtensionBlock(g, 3, sub) != GIF_OK) return GIF_ERROR;
    return EGifPutExtensionTrailer(g);
}

/* The rectangle where cur differs from prev; 0 when nothing changed. */
static int changed_rect(const unsigned char *prev, const unsigned char *cur, int w, int h, int *x0,
                        int *y0, int *x1, int *y1)
{
    int l = w, r = -1, t = h, b = -1;
    for (int y = 0; y < h; y++) {
        const unsigned char *p = prev + (size_t)y * (size_t)w, *c = cur + (size_t)y * (size_t)w;
        if (memcmp(p, c, (size_t)w) == 0) continue;
        if (t == h) t = y;
        b = y;
        int x = 0;
        while (x < l && p[x] == c[x]) x++;
        if (x < l) l = x;
        int xr = w - 1;
        while (xr > r && p[xr] == c[xr]) xr--;
        if (xr > r) r = xr;
    }
    if (b < 0) return 0;
    *x0 = l, *y0 = t, *x1 = r + 1, *y1 = b + 1;
    return 1;
}

static int write_frames(GifFileType *g, const anim_frames *a, cmap_cache *cache,
                        unsigned char *prev, unsigned char *cur, unsigned char *line)
{
    int w = a->w, h = a->h;
    for (int i = 0; i < a->n; i++) {
        if (map_frame(a, i, cache, cur) < 0) return -2;
        int x0 = 0, y0 = 0, x1 = w, y1 = h, delta = i > 0;
        if (delta && !changed_rect(prev, cur, w, h, &x0, &y0, &x1, &y1)) {
            x0 = y0 = 0; /* an unchanged frame still takes its time: one transparent pixel */
            x1 = y1 = 1;
        }
        int delay = anim_time_cs(i + 1, a->fps) - anim_time_cs(i, a->fps);
        GraphicsControlBlock gcb = {DISPOSE_DO_NOT, false, delay, delta ? TRANSPARENT : -1};
        GifByteType ext[4];
        size_t len = EGifGCBToExtension(&gcb, ext);
        if (EGifPutExtension(g, GRAPHICS_EXT_FUNC_CODE, (int)len, ext) != GIF_OK) return -1;
        if (EGifPutImageDesc(g, x0, y0, x1 - x0, y1 - y0, false, NULL) != GIF_OK) return -1;
        for (int y = y0; y < y1; y++) {
            const unsigned char *c = cur + (size_t)y * (size_t)w + x0;
            const unsigned char *p = prev + (size_t)y * (size_t)w + x0;
            for (int x = 0; x < x1 - x0; x++) line[x] = delta && c[x] == p[x] ? TRANSPARENT : c[x];
            if (EGifPutLine(g, line, x1 - x0) != GIF_OK) return -1;
        }
        unsigned char *t = prev;
        prev = cur;
        cur = t;
    }
    return 0;
}

int anim_write_gif(const char *path, const anim_frames *a, const raster_meta *meta, size_t n_meta,
                   char *err, size_t errlen)
{
    if (a->n < 1 || a->w < 1 || a->h < 1 || a->w > 65535 || a->h > 65535 || !(a->fps > 0)) {
        snprintf(err, errlen, "-o %s: cannot write %d frames of %d x %d as a GIF", path, a->n, a->w,
                 a->h);
        return -1;
    }
    char why[160] = "";
    liq_result *res = build_palette(a, why, sizeof why);
    if (!res) {
        snprintf(err, errlen, "-o %s: %s", path, why);
        return -1;
    }
    const liq_palette *pal = liq_get_palette(res);
    GifColorType colors[256] = {{0}};
    for (unsigned k = 0; k < pal->count && k < MAX_COLORS; k++)
        colors[k] = (GifColorType){pal->entries[k].r, pal->entries[k].g, pal->entries[k].b};
    ColorMapObject *cmap = GifMakeMapObject(256, colors);
    size_t npx = (size_t)a->w * (size_t)a->h;
    unsigned char *prev = malloc(npx), *cur = malloc(npx), *line = malloc((size_t)a->w);
    cmap_cache cache = {.pal = pal};
    outfile of = {0};
    int rc = -1;
    if (!cmap || !prev || !cur || !line || cache_grow(&cache) < 0) {
        snprintf(err, errlen, "-o %s: out of memory for %d x %d frames", path, a->w, a->h);
        goto done;
    }
    if (outfile_open(&of, path, err, errlen) != 0) goto done;
    int gerr = 0;
    GifFileType *g = EGifOpen(of.fp, gif_out, &gerr);
    if (!g) {
        snprintf(err, errlen, "-o %s: %s", path, GifErrorString(gerr));
        outfile_abort(&of);
        goto done;
    }
    EGifSetGifVersion(g, true);
    int w = EGifPutScreenDesc(g, a->w, a->h, 8, 0, cmap) == GIF_OK ? 0 : -1;
    if (w == 0) w = put_loop(g, a->loop) == GIF_OK ? 0 : -1;
    /* provenance: the comment block holds what a PNG's text chunks would */
    for (size_t i = 0; i < n_meta && w == 0; i++) {
        if (!meta[i].key || !meta[i].value) continue;
        char buf[2400];
        snprintf(buf, sizeof buf, "%s: %s", meta[i].key, meta[i].value);
        /* giflib writes a comment as 255-byte sub-blocks; an empty one is not allowed */
        if (*buf && EGifPutComment(g, buf) != GIF_OK) w = -1;
    }
    if (w == 0) w = write_frames(g, a, &cache, prev, cur, line);
    int cerr = 0;
    if (EGifCloseFile(g, &cerr) != GIF_OK && w == 0) w = -1; /* frees g, leaves of.fp open */
    if (w != 0) {
        if (w == -2) {
            snprintf(err, errlen, "-o %s: out of memory mapping colours", path);
            outfile_abort(&of);
        } else {
            outfile_fail(&of, "GIF write failed", err, errlen); /* with the OS's reason */
        }
        goto done;
    }
    rc = outfile_commit(&of, err, errlen);
done:
    GifFreeMapObject(cmap);
    free(prev);
    free(cur);
    free(line);
    free(cache.key);
    free(cache.val);
    liq_result_destroy(res);
    return rc;
}
