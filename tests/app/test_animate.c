/* test_animate.c: `pelab export --animate` end to end through the real binary. Every animation is
 * decoded back (giflib's DGifSlurp, libwebp's WebPAnimDecoder, the PNGs of a frames folder) and
 * checked for frame count, delays, loop count and size; the first and last frames against the
 * PNG export at the sweep's two ends; the axes held still over a sweep; and every bad input
 * refused with one line, exit status 2 and no file left. argv[1] is the pelab binary. */
#include <fcntl.h>
#include <gif_lib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <webp/demux.h>

#include "render/pngio.h"
#include "runproc.h"
#include "tap.h"

static const char *pelab;
static char dir[4096];
static char errtext[4096];
static int errlines;

enum { W = 320, H = 240 };

static int run(const char *const *args)
{
    char errpath[4200];
    snprintf(errpath, sizeof errpath, "%s.stderr", dir);
    return test_run(pelab, args, NULL, errpath, errtext, sizeof errtext, &errlines);
}

static char *path_in(const char *name)
{
    static char buf[4][4200];
    static int k;
    char *p = buf[k++ & 3];
    snprintf(p, sizeof buf[0], "%s/%s", dir, name);
    return p;
}

/* How far an RGB frame is from a PNG: the share of pixels off by more than 40 in a channel (a
 * palette's rounding stays well under it; a different figure does not). The title block (the
 * top third: at 320x240 the title wraps to two lines) is left out: a frame's subtitle also
 * names the swept value. */
static double share_differing(const uint8_t *rgba, const png_image_rd *ref)
{
    size_t off = 0, n = (size_t)ref->w * (size_t)ref->h, top = (size_t)ref->w * (size_t)ref->h / 3;
    for (size_t i = top; i < n; i++)
        for (int c = 0; c < 3; c++)
            if (abs((int)rgba[i * 4 + (size_t)c] - (int)ref->rgba[i * 4 + (size_t)c]) > 40) {
                off++;
                break;
            }
    return (double)off / (double)(n - top);
}

/* The PNG export of the rope view at m (the end of a sweep), read back. */
static int reference(int m, png_image_rd *im)
{
    char mv[16];
    snprintf(mv, sizeof mv, "%d", m);
    char *p = path_in("ref.png");
    char ws[16], hs[16];
    snprintf(ws, sizeof ws, "%d", W);
    snprintf(hs, sizeof hs, "%d", H);
    int rc = run((const char *[]){"export", "rope", "--pos", mv, "--width", ws, "--height", hs,
                                  "-o", p, NULL});
    int r = rc == 0 ? png_read_file(p, im) : -1;
    unlink(p);
    return r;
}

/* ---- GIF ----------------------------------------------------------------------------------- */

/* Composite the frames of a GIF one by one (disposal "do not dispose", transparency) and keep
 * the first and the last as RGBA. */
static void check_gif(const char *p, const png_image_rd *ref0, const png_image_rd *ref1)
{
    int e = 0;
    GifFileType *g = DGifOpenFileName(p, &e);
    TAP_OK(g != NULL && DGifSlurp(g) == GIF_OK, "GIF decodes with DGifSlurp");
    if (!g) return;
    TAP_OK(g->ImageCount == 16, "GIF has 16 frames (%d)", g->ImageCount);
    TAP_OK(g->SWidth == W && g->SHeight == H, "GIF is %dx%d (%dx%d)", W, H, g->SWidth, g->SHeight);
    /* 10 fps: 10 centiseconds each */
    int delays_ok = 1, loop = -1;
    for (int i = 0; i < g->ImageCount; i++) {
        GraphicsControlBlock gcb;
        if (DGifSavedExtensionToGCB(g, i, &gcb) != GIF_OK || gcb.DelayTime != 10) delays_ok = 0;
    }
    TAP_OK(delays_ok, "every GIF frame is shown 10 cs (--fps 10)");
    for (int i = 0; i < g->SavedImages[0].ExtensionBlockCount; i++) {
        ExtensionBlock *b = &g->SavedImages[0].ExtensionBlocks[i];
        if (b->Function == APPLICATION_EXT_FUNC_CODE && b->ByteCount == 11 &&
            memcmp(b->Bytes, "NETSCAPE2.0", 11) == 0 &&
            i + 1 < g->SavedImages[0].ExtensionBlockCount)
            loop = b[1].Bytes[1] | b[1].Bytes[2] << 8;
    }
    TAP_OK(loop == 2, "NETSCAPE loop: 2 repeats for --loop 3 (%d)", loop);
    uint8_t *canvas = calloc((size_t)W * H * 4, 1), *first = malloc((size_t)W * H * 4);
    const ColorMapObject *gm = g->SColorMap;
    int palette_ok = gm != NULL, fixed_pal = 1;
    for (int i = 0; i < g->ImageCount && palette_ok; i++) {
        SavedImage *si = &g->SavedImages[i];
        if (si->ImageDesc.ColorMap) fixed_pal = 0;
        GraphicsControlBlock gcb;
        DGifSavedExtensionToGCB(g, i, &gcb);
        GifImageDesc *d = &si->ImageDesc;
        for (int y = 0; y < d->Height; y++)
            for (int x = 0; x < d->Width; x++) {
                int k = si->RasterBits[y * d->Width + x];
                if (k == gcb.TransparentColor) continue;
                if (k >= gm->ColorCount) {
                    palette_ok = 0;
                    continue;
                }
                uint8_t *o = canvas + ((size_t)(d->Top + y) * W + (size_t)(d->Left + x)) * 4;
                o[0] = gm->Colors[k].Red;
                o[1] = gm->Colors[k].Green;
                o[2] = gm->Colors[k].Blue;
                o[3] = 255;
            }
        if (i == 0) memcpy(first, canvas, (size_t)W * H * 4);
    }
    TAP_OK(fixed_pal && palette_ok, "one global palette for every frame (no local colour maps)");
    double d0 = share_differing(first, ref0), d1 = share_differing(canvas, ref1);
    TAP_OK(d0 < 0.001, "GIF first frame = PNG export at m=0 (%.4f of pixels differ)", d0);
    TAP_OK(d1 < 0.001, "GIF last frame = PNG export at m=15 (%.4f of pixels differ)", d1);
    free(canvas);
    free(first);
    DGifCloseFile(g, &e);
}

/* Every frame of a GIF composited in turn (frames are drawn over what came before, with their
 * transparent index left through): n frames of w x h RGBA in one malloc'd block, or NULL. */
static uint8_t *gif_frames(const char *p, int *n, int *w, int *h)
{
    int e = 0;
    GifFileType *g = DGifOpenFileName(p, &e);
    if (!g || DGifSlurp(g) != GIF_OK || !g->SColorMap || g->ImageCount < 1) {
        if (g) DGifCloseFile(g, &e);
        return NULL;
    }
    *n = g->ImageCount;
    *w = g->SWidth;
    *h = g->SHeight;
    size_t fb = (size_t)*w * (size_t)*h * 4;
    uint8_t *all = calloc((size_t)*n, fb), *canvas = calloc(1, fb);
    const ColorMapObject *gm = g->SColorMap;
    for (int i = 0; all && canvas && i < *n; i++) {
        SavedImage *si = &g->SavedImages[i];
        const ColorMapObject *cm = si->ImageDesc.ColorMap ? si->ImageDesc.ColorMap : gm;
        GraphicsControlBlock gcb;
        gcb.TransparentColor = NO_TRANSPARENT_COLOR;
        DGifSavedExtensionToGCB(g, i, &gcb);
        GifImageDesc *d = &si->ImageDesc;
        for (int y = 0; y < d->Height; y++)
            for (int x = 0; x < d->Width; x++) {
                int k = si->RasterBits[y * d->Width + x];
                int cx = d->Left + x, cy = d->Top + y;
                if (k == gcb.TransparentColor || k >= cm->ColorCount || cx >= *w || cy >= *h)
                    continue;
                uint8_t *o = canvas + ((size_t)cy * (size_t)*w + (size_t)cx) * 4;
                o[0] = cm->Colors[k].Red;
                o[1] = cm->Colors[k].Green;
                o[2] = cm->Colors[k].Blue;
                o[3] = 255;
            }
        memcpy(all + (size_t)i * fb, canvas, fb);
    }
    free(canvas);
    DGifCloseFile(g, &e);
    return all;
}

/* Pixels that differ between two RGBA frames of np pixels, below row `top` of rows w wide. */
static size_t frames_differ(const uint8_t *a, const uint8_t *b, size_t np, size_t skip)
{
    size_t d = 0;
    for (size_t i = skip; i < np; i++) d += memcmp(a + i * 4, b + i * 4, 3) != 0;
    return d;
}

/* A GIF decoded frame by frame moves with its parameter: n frames of w x h, and below the title
 * block (whose subtitle names the swept value) each frame differs from the one before by at
 * least min_px pixels, so no step of the sweep repeats the last picture. */
static void check_gif_moves(const char *what, const char *p, int want_n, int want_w, int want_h,
                            size_t min_px)
{
    int n = 0, w = 0, h = 0;
    uint8_t *fr = gif_frames(p, &n, &w, &h);
    TAP_OK(fr != NULL, "%s: the GIF decodes frame by frame (giflib)", what);
    if (!fr) return;
    TAP_OK(n == want_n && w == want_w && h == want_h, "%s: %d frames of %dx%d (%d of %dx%d)", what,
           want_n, want_w, want_h, n, w, h);
    size_t np = (size_t)w * (size_t)h, skip = np / 4, fb = np * 4, least = np;
    int still = 0;
    for (int i = 1; i < n; i++) {
        size_t d = frames_differ(fr + (size_t)(i - 1) * fb, fr + (size_t)i * fb, np, skip);
        if (d < least) least = d;
        if (d < min_px) still++;
    }
    TAP_OK(n > 1 && still == 0,
           "%s: every frame differs from the one before below the title (%d of %d steps under %zu "
           "px; the least %zu px)",
           what, still, n - 1, min_px, least);
    free(fr);
}

/* ---- WebP ---------------------------------------------------------------------------------- */

static void check_webp(const char *p, const png_image_rd *ref0, const png_image_rd *ref1)
{
    size_t len = 0;
    char *bytes = file_read(p, &len);
    WebPData data = {(const uint8_t *)bytes, len};
    WebPAnimDecoderOptions o;
    WebPAnimDecoderOptionsInit(&o);
    o.color_mode = MODE_RGBA;
    WebPAnimDecoder *dec = bytes ? WebPAnimDecoderNew(&data, &o) : NULL;
    WebPAnimInfo info;
    TAP_OK(dec && WebPAnimDecoderGetInfo(dec, &info), "WebP decodes with WebPAnimDecoder");
    if (!dec) {
        free(bytes);
        return;
    }
    TAP_OK(info.frame_count == 16, "WebP has 16 frames (%u)", info.frame_count);
    TAP_OK(info.canvas_width == W && info.canvas_height == H, "WebP is %dx%d (%ux%u)", W, H,
           info.canvas_width, info.canvas_height);
    TAP_OK(info.loop_count == 3, "WebP loop count 3 for --loop 3 (%u)", info.loop_count);
    int i = 0, times_ok = 1;
    double d0 = 1, d1 = 1;
    while (WebPAnimDecoderHasMoreFrames(dec)) {
        uint8_t *buf;
        int ts;
        if (!WebPAnimDecoderGetNext(dec, &buf, &ts)) break;
        /* 12 fps: frame i ends at round((i + 1) * 1000 / 12) ms */
        if (ts != (int)lround((i + 1) * 1000.0 / 12)) times_ok = 0;
        if (i == 0) d0 = share_differing(buf, ref0);
        if (i == 15) d1 = share_differing(buf, ref1);
        i++;
    }
    TAP_OK(times_ok && i == 16, "WebP frame times at 12 fps (%d frames)", i);
    TAP_OK(d0 < 0.001, "WebP first frame = PNG export at m=0 (%.4f differ)", d0);
    TAP_OK(d1 < 0.001, "WebP last frame = PNG export at m=15 (%.4f differ)", d1);
    WebPAnimDecoderDelete(dec);
    free(bytes);
}

/* ---- fixed axes ---------------------------------------------------------------------------- */

/* The left strip of a frame (the y axis and its tick labels), as a checksum. */
static unsigned long strip_sum(const png_image_rd *im)
{
    unsigned long s = 0;
    for (int y = 60; y < im->h - 60; y++)
        for (int x = 0; x < 70; x++)
            for (int c = 0; c < 3; c++)
                s = s * 31 + im->rgba[((size_t)y * (size_t)im->w + (size_t)x) * 4 + (size_t)c];
    return s;
}

/* Frames of the decay view while the reference position sweeps: count how many frames have a y
 * axis different from the first's. */
static int axes_changes(int free_axes, int *frames)
{
    char *fr = path_in(free_axes ? "free/" : "fixed/");
    const char *args[] = {"export", "decay", "--curves",    "rope-random,learned",
                          "--len",  "64",    "--animate",   "pos=1:62:6",
                          "-o",     fr,      "--free-axes", NULL};
    if (!free_axes) args[10] = NULL;
    int rc = run(args);
    *frames = 0;
    if (rc != 0) return -1;
    unsigned long first = 0;
    int changes = 0;
    for (int i = 1;; i++) {
        char name[4400];
        snprintf(name, sizeof name, "%sframe-%04d.png", fr, i);
        png_image_rd im;
        if (png_read_file(name, &im) < 0) break;
        unsigned long s = strip_sum(&im);
        if (i == 1) first = s;
        changes += s != first;
        (*frames)++;
        png_image_rd_free(&im);
    }
    return changes;
}

/* ---- bad input ----------------------------------------------------------------------------- */

static void refused(const char *what, const char *const *args, const char *must_name)
{
    int before = dir_entries(dir);
    int rc = run(args);
    int after = dir_entries(dir);
    TAP_OK(rc == 2 && errlines == 1 && strstr(errtext, must_name) && after == before,
           "%s: exit 2, one line naming '%s', no file left (rc %d, %d lines, files %d->%d: %s)",
           what, must_name, rc, errlines, before, after, errtext);
}

int main(int argc, char **argv)
{
    if (argc < 2) return tap_skip_all("usage: test_animate PELAB");
    pelab = argv[1];
    if (test_tmpdir(dir, sizeof dir, "pelab-animate") < 0) return tap_skip_all("no temp dir");

    png_image_rd ref0, ref1;
    TAP_OK(reference(0, &ref0) == 0 && reference(15, &ref1) == 0,
           "PNG exports at the sweep's ends (%s)", errtext);
    char ws[16], hs[16];
    snprintf(ws, sizeof ws, "%d", W);
    snprintf(hs, sizeof hs, "%d", H);

    char *gif = path_in("a.gif");
    int rc = run((const char *[]){"export", "rope", "--animate", "pos=0:15:16", "--fps", "10",
                                  "--loop", "3", "--width", ws, "--height", hs, "-o", gif, NULL});
    TAP_OK(rc == 0, "export rope --animate pos=0:15:16 -o a.gif exits 0 (%s)", errtext);
    check_gif(gif, &ref0, &ref1);
    /* q turns by theta_0 = 1 rad a frame: its arrows move in every frame */
    check_gif_moves("rope pos=0:15:16", gif, 16, W, H, 20);
    unlink(gif);

    /* the README's attention animation at a paper column (3.5x2.2in at 96 dpi: 336x211), one
     * frame per step: a new token's bar and matrix row appear in each */
    gif = path_in("col.gif");
    rc = run((const char *[]){"export", "attention", "--model", "rope", "--preset", "toy",
                              "--animate", "step=0:20:21", "--size", "3.5x2.2in", "-o", gif, NULL});
    if (rc == 0) {
        check_gif_moves("attention step=0:20:21 at 3.5x2.2in", gif, 21, 336, 211, 10);
    } else {
        TAP_OK(strstr(errtext, "rope") != NULL, "attention animation: no shipped rope model (%s)",
               errtext);
    }
    unlink(gif);

    char *webp = path_in("a.webp");
    rc = run((const char *[]){"export", "rope", "--animate", "m=0:15:16", "--loop", "3", "--width",
                              ws, "--height", hs, "-o", webp, NULL});
    TAP_OK(rc == 0, "export rope --animate m=0:15:16 -o a.webp exits 0 (%s)", errtext);
    check_webp(webp, &ref0, &ref1);
    unlink(webp);

    /* frames folder: numbered PNGs with the usual metadata and the frame number */
    char *fr = path_in("frames/");
    rc = run((const char *[]){"export", "rope", "--animate", "pos=0:15:16", "--width", ws,
                              "--height", hs, "-o", fr, NULL});
    TAP_OK(rc == 0, "export --animate -o frames/ exits 0 (%s)", errtext);
    char name[4400];
    snprintf(name, sizeof name, "%s", fr);
    TAP_OK(dir_entries(name) == 16, "the folder holds 16 files (%d)", dir_entries(name));
    png_image_rd f1, f16;
    snprintf(name, sizeof name, "%sframe-0001.png", fr);
    int ok1 = png_read_file(name, &f1) == 0;
    snprintf(name, sizeof name, "%sframe-0016.png", fr);
    int ok16 = png_read_file(name, &f16) == 0;
    TAP_OK(ok1 && ok16 && f1.w == W && f1.h == H, "frame-0001.png and frame-0016.png are %dx%d", W,
           H);
    if (ok1 && ok16) {
        const char *sw = png_text_get(&f1, "Software"), *cmd = png_text_get(&f1, "Command");
        const char *fno = png_text_get(&f16, "Frame");
        TAP_OK(sw && strncmp(sw, "pelab ", 6) == 0 && cmd && strstr(cmd, "--animate"),
               "frames carry Software and Command");
        TAP_OK(fno && strncmp(fno, "16 of 16", 8) == 0, "frame 16 says 'Frame: 16 of 16' (%s)",
               fno ? fno : "none");
        double d0 = share_differing(f1.rgba, &ref0), d1 = share_differing(f16.rgba, &ref1);
        TAP_OK(d0 < 0.001 && d1 < 0.001, "first and last PNG frames = the exports (%.4f, %.4f)", d0,
               d1);
        png_image_rd_free(&f1);
        png_image_rd_free(&f16);
    }
    snprintf(name, sizeof name, "%s", fr);
    rm_tree(name);

    /* axes held still over the sweep, unless --free-axes */
    int nfixed = 0, nfree = 0;
    int cfixed = axes_changes(0, &nfixed), cfree = axes_changes(1, &nfree);
    TAP_OK(nfixed == 6 && cfixed == 0,
           "fixed axes: the y axis is the same in all 6 frames (%d "
           "of %d differ)",
           cfixed, nfixed);
    TAP_OK(nfree == 6 && cfree > 0, "--free-axes: the y axis follows the data (%d of %d differ)",
           cfree, nfree);
    rm_tree(path_in("fixed"));
    rm_tree(path_in("free"));

    /* bad input */
    char *out = path_in("x.gif");
    refused("unknown option",
            (const char *[]){"export", "rope", "--animate", "mm=0:3", "-o", out, NULL}, "mm");
    refused("non-numeric option",
            (const char *[]){"export", "rope", "--animate", "pe=0:3", "-o", out, NULL}, "--pe");
    refused("option the view does not use",
            (const char *[]){"export", "rope", "--animate", "len=64:128", "-o", out, NULL}, "len");
    refused("FROM = TO",
            (const char *[]){"export", "rope", "--animate", "pos=3:3", "-o", out, NULL}, "pos=3:3");
    refused("0 frames",
            (const char *[]){"export", "rope", "--animate", "pos=0:3:0", "-o", out, NULL},
            "2..1000");
    refused("1001 frames",
            (const char *[]){"export", "rope", "--animate", "pos=0:3:1001", "-o", out, NULL},
            "1001");
    refused("log over a range that is not positive",
            (const char *[]){"export", "rope", "--animate", "pos=0:10:10:log", "-o", out, NULL},
            "> 0");
    refused("past the option's range",
            (const char *[]){"export", "rope", "--animate", "pos=0:300", "-o", out, NULL}, "--len");
    refused(
        ".png",
        (const char *[]){"export", "rope", "--animate", "pos=0:3", "-o", path_in("x.png"), NULL},
        "x.png");
    refused(
        ".csv",
        (const char *[]){"export", "rope", "--animate", "pos=0:3", "-o", path_in("x.csv"), NULL},
        "x.csv");
    refused(".gif without --animate", (const char *[]){"export", "rope", "-o", out, NULL},
            "--animate");
    refused("--fps without --animate",
            (const char *[]){"export", "rope", "--fps", "10", "-o", path_in("x.png"), NULL},
            "--fps");
    refused(
        "--fps 0",
        (const char *[]){"export", "rope", "--animate", "pos=0:3", "--fps", "0", "-o", out, NULL},
        "--fps 0");
    refused(
        "--loop -1",
        (const char *[]){"export", "rope", "--animate", "pos=0:3", "--loop", "-1", "-o", out, NULL},
        "--loop -1");
    refused("over the memory budget",
            (const char *[]){"export", "rope", "--animate", "pos=0:3:1000", "--width", "4000",
                             "--height", "3000", "-o", out, NULL},
            "1000 frames of 4000 x 3000");
    char *full = path_in("full");
    mkdir(full, 0755);
    char inside[4400];
    snprintf(inside, sizeof inside, "%s/keep.txt", full);
    FILE *fp = fopen(inside, "w");
    if (fp) fclose(fp);
    snprintf(inside, sizeof inside, "%s/", full);
    refused("a frames folder that is not empty",
            (const char *[]){"export", "rope", "--animate", "pos=0:3:2", "-o", inside, NULL},
            "not empty");
    TAP_OK(dir_entries(full) == 1, "the folder that was not empty is untouched");
    rm_tree(full);

    png_image_rd_free(&ref0);
    png_image_rd_free(&ref1);
    rm_tree(dir);
    return tap_done();
}
