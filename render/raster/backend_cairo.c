/* backend_cairo.c: scene -> cairo, for the SDL window, PNG, SVG and PDF alike.
 *
 * Text: cairo's toy font API with "DejaVu Sans" (fontconfig falls back to any sans-serif), with
 * metric hinting off so a width measured once scales linearly with the size and the layout's
 * measurements match what is drawn. A text item's box is one line (text_h * size) high; the
 * anchor places that box, and the glyphs are centred in it vertically.
 *
 * Heatmaps: values go through the colormap into an RGB image of (rows, cols); an image larger
 * than its rectangle on the device is box-averaged down first (a 1024-row matrix in 500 px must
 * not alias), and the image is then scaled with the nearest filter so cells stay crisp. Vector
 * outputs embed the image at the data's resolution, or the drawn one when that is smaller, with
 * the nearest filter.
 */
#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#include <ctype.h>
#include <fontconfig/fontconfig.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "colormap.h"
#include "outfile.h"
#include "textclean.h"
#include "raster.h"
#include "raster_svg.h"

/* gcc says __SANITIZE_ADDRESS__, clang (the fuzz build) __has_feature(address_sanitizer) */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PELAB_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(PELAB_ASAN)
#include <sanitizer/lsan_interface.h>
/* fontconfig keeps its configuration and font patterns for the life of the process (cairo's
 * toy font API loads them on first use); freeing them needs FcFini, which would make render/
 * link fontconfig directly (--font's check asks fontconfig too). In sanitizer builds, tell
 * LeakSanitizer these are not leaks. Any
 * program drawing text through this file gets the suppression; nothing else is hidden. */
const char *__lsan_default_suppressions(void)
{
    return "leak:libfontconfig.so\n";
}
#endif

static const char default_family[] = "DejaVu Sans";
enum { FAMILY_MAX = 128 }; /* bytes of a family name, with its terminator */

/* The font is the target's and the scene's (scene_target.font, scene.font), not the process's:
 * the explorer's views build on a worker thread while the window's thread measures and draws,
 * each with the font of what it holds. The names they point to are interned here once and never
 * change or go, so a pointer read on any thread stays valid (a short list: the fonts a user
 * picks in a session). */
typedef struct family_name {
    struct family_name *next;
    char name[FAMILY_MAX];
} family_name;
static family_name *families;
static pthread_mutex_t families_lock = PTHREAD_MUTEX_INITIALIZER;

const char *raster_font_name(const char *family)
{
    if (!family || !*family || strcmp(family, default_family) == 0) return default_family;
    pthread_mutex_lock(&families_lock);
    family_name *f = families;
    while (f && strncmp(f->name, family, FAMILY_MAX - 1) != 0) f = f->next;
    if (!f && (f = calloc(1, sizeof *f)) != NULL) {
        snprintf(f->name, sizeof f->name, "%s", family);
        f->next = families;
        families = f;
    }
    pthread_mutex_unlock(&families_lock);
    return f ? f->name : default_family;
}

static const char *family_of(const char *font)
{
    return font && *font ? font : default_family;
}

int raster_font_check(const char *family, char *err, size_t errlen)
{
    if (!family || !*family) return 0;
    if (strlen(family) >= FAMILY_MAX) {
        snprintf(err, errlen, "--font: %zu bytes, allowed at most %d", strlen(family),
                 FAMILY_MAX - 1);
        return -1;
    }
    /* what cairo's toy API does with a family: fontconfig's best match for it. A family that
     * is not installed still matches something (the fallback), so compare the names. */
    FcPattern *pat = FcNameParse((const FcChar8 *)"");
    int rc = -1;
    char got[128] = "?";
    if (pat) {
        FcPatternAddString(pat, FC_FAMILY, (const FcChar8 *)family);
        FcConfigSubstitute(NULL, pat, FcMatchPattern);
        FcDefaultSubstitute(pat);
        FcResult res;
        FcPattern *m = FcFontMatch(NULL, pat, &res);
        FcChar8 *fam = NULL;
        for (int i = 0; m && FcPatternGetString(m, FC_FAMILY, i, &fam) == FcResultMatch; i++) {
            if (i == 0) snprintf(got, sizeof got, "%s", (const char *)fam);
            if (FcStrCmpIgnoreCase(fam, (const FcChar8 *)family) == 0) rc = 0;
        }
        if (m) FcPatternDestroy(m);
        FcPatternDestroy(pat);
    }
    if (rc < 0)
        snprintf(err, errlen,
                 "--font '%s': fontconfig does not know this family (it would fall back to '%s'); "
                 "allowed: an installed family (fc-list : family)",
                 family, got);
    return rc;
}
static const double pi = 3.14159265358979323846;
/* A normal line of text is this many font sizes high (raster.h). */
static const double line_per_px = 1.3;
/* Measuring at a large size keeps the rounding of glyph advances out of the result. */
static const double measure_px = 100.0;
/* Vector outputs embed heatmaps at most this many image pixels per side (box-averaged beyond). */
enum { VECTOR_MAX_CELLS = RASTER_VECTOR_MAX_CELLS };

typedef struct draw_opts {
    int antialias;
    int vector;       /* 1: a PDF or SVG surface (no device-pixel downsampling); 2: an SVG */
    double text_h;    /* the scene's line height in figure units */
    const char *font; /* the scene's font family (NULL: the default) */
    /* the image surface's pixels when drawing into memory at figure unit = pixel
     * (raster_draw_argb), for the curves drawn as pixel columns; NULL otherwise */
    cairo_surface_t *surf;
    uint32_t *px;
    int w, h, stride; /* stride in pixels */
} draw_opts;

static cairo_font_options_t *font_options(int antialias)
{
    cairo_font_options_t *fo = cairo_font_options_create();
    cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
    cairo_font_options_set_antialias(fo, antialias ? CAIRO_ANTIALIAS_GRAY : CAIRO_ANTIALIAS_NONE);
    return fo;
}

/* cairo refuses a whole string that is not valid UTF-8 or holds a noncharacter, and leaves the
 * (cached, shared) scaled font in an error state that breaks every later string (issue 28: one
 * U+FFFE in a prompt gave a black window). Every string cairo gets goes through this: s itself
 * when clean, else a cleaned copy in *heap (free it). */
static const char *cairo_safe(const char *s, char **heap)
{
    *heap = NULL;
    if (!s) return s;
    size_t n = strlen(s);
    if (text_is_clean(s, n, TEXT_KEEP_LINES)) return s;
    size_t need = text_clean(NULL, 0, s, n, TEXT_KEEP_LINES) + 1;
    *heap = malloc(need);
    if (!*heap) return "";
    text_clean(*heap, need, s, n, TEXT_KEEP_LINES);
    return *heap;
}

/* The widths measured so far: a text's advance at measure_px depends on its family, weight and
 * bytes alone (the size scales it), and views measure the same labels again on every frame
 * (ALiBi's 64 head labels at each of their sizes, tick labels tried for fit): cairo's text
 * extents were most of an unchanged frame. Direct-mapped by a hash, a slot per text of up to
 * MEMO_TEXT - 1 bytes (longer ones are measured each time), shared by the threads under a
 * lock (the explorer builds on a worker while the window measures its status band). The
 * family is the interned name family_of returns, compared by address. */
enum { MEMO_SLOTS = 2048, MEMO_TEXT = 200 };
typedef struct measure_memo {
    const char *family;
    int weight, used;
    double advance; /* x_advance at measure_px */
    char text[MEMO_TEXT];
} measure_memo;
static measure_memo memo[MEMO_SLOTS];
static pthread_mutex_t memo_lock = PTHREAD_MUTEX_INITIALIZER;

static size_t memo_slot(const char *family, int weight, const char *text)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)family ^ (uint64_t)weight << 56;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++)
        h = (h ^ *p) * 1099511628211ull;
    return (size_t)(h ^ h >> 29) % MEMO_SLOTS;
}

/* scene_target.measure: width in units of text_h (see scene.h). cairo caches font faces and
 * scaled fonts itself, so building them per call is cheap and keeps this function stateless
 * but for the memo above. */
static double measure_weight(const char *family, const char *given, double size,
                             cairo_font_weight_t weight)
{
    if (!given || !*given) return 0.0;
    family = family_of(family);
    size_t glen = strlen(given), slot = memo_slot(family, (int)weight, given);
    if (glen < MEMO_TEXT) {
        pthread_mutex_lock(&memo_lock);
        const measure_memo *m = &memo[slot];
        int hit = m->used && m->family == family && m->weight == (int)weight &&
                  memcmp(m->text, given, glen + 1) == 0;
        double w = m->advance;
        pthread_mutex_unlock(&memo_lock);
        if (hit) return w / (measure_px * line_per_px) * size;
    }
    char *heap;
    const char *utf8 = cairo_safe(given, &heap);
    cairo_font_face_t *face = cairo_toy_font_face_create(family, CAIRO_FONT_SLANT_NORMAL, weight);
    cairo_matrix_t fm, ctm;
    cairo_matrix_init_scale(&fm, measure_px, measure_px);
    cairo_matrix_init_identity(&ctm);
    cairo_font_options_t *fo = font_options(1);
    cairo_scaled_font_t *sf = cairo_scaled_font_create(face, &fm, &ctm, fo);
    cairo_text_extents_t ext;
    memset(&ext, 0, sizeof ext);
    if (cairo_scaled_font_status(sf) == CAIRO_STATUS_SUCCESS)
        cairo_scaled_font_text_extents(sf, utf8, &ext);
    cairo_scaled_font_destroy(sf);
    cairo_font_options_destroy(fo);
    cairo_font_face_destroy(face);
    double w = ext.x_advance;
    if (!(w > 0)) w = 0.6 * measure_px * (double)strlen(utf8); /* no font at all */
    free(heap);
    if (glen < MEMO_TEXT) {
        pthread_mutex_lock(&memo_lock);
        measure_memo *m = &memo[slot];
        m->used = 1;
        m->family = family;
        m->weight = (int)weight;
        m->advance = w;
        memcpy(m->text, given, glen + 1);
        pthread_mutex_unlock(&memo_lock);
    }
    return w / (measure_px * line_per_px) * size;
}

/* ctx: the target's font family (raster_target_font), NULL for the default */
static double measure_text(void *ctx, const char *utf8, double size)
{
    return measure_weight(ctx, utf8, size, CAIRO_FONT_WEIGHT_NORMAL);
}

/* Bold runs up to 1.2x wider than regular ("iiii"), so titles are measured in their weight. */
static double measure_bold(void *ctx, const char *utf8, double size)
{
    return measure_weight(ctx, utf8, size, CAIRO_FONT_WEIGHT_BOLD);
}

scene_target raster_target(double w, double h, double font_px)
{
    scene_target t;
    memset(&t, 0, sizeof t);
    if (!(font_px > 0)) font_px = raster_font_px(w, h, 1.0);
    t.width = w;
    t.height = h;
    t.text_h = line_per_px * font_px;
    /* The average advance of digits and lower-case letters, for estimates only. */
    t.char_w = measure_text(NULL, "0123456789abcdefghijklmnopqrstuvwxyz", 1.0) * t.text_h / 36.0;
    t.hairline = 1.0;
    t.cells = 0;
    t.measure = measure_text;
    t.measure_bold = measure_bold;
    t.measure_ctx = NULL;
    t.font = NULL;
    return t;
}

void raster_target_font(scene_target *t, const char *family)
{
    if (t->measure != measure_text) return; /* not a cairo target */
    t->font = raster_font_name(family);
    t->measure_ctx = (void *)(uintptr_t)t->font; /* measure_text reads it, never writes */
    t->char_w = measure_text(t->measure_ctx, "0123456789abcdefghijklmnopqrstuvwxyz", 1.0) *
                t->text_h / 36.0;
}

double raster_font_px(double w, double h, double scale)
{
    if (!(scale > 0)) scale = 1.0;
    /* h/40, unless the figure is so narrow that lines of text would not fit across it. */
    double px = fmin(h / 40.0, w / 60.0);
    if (!(px >= 11.0)) px = 11.0;
    return px * scale;
}

/* --- items ----------------------------------------------------------------------------- */

static void set_rgb(cairo_t *cr, uint32_t c)
{
    cairo_set_source_rgb(cr, ((c >> 16) & 0xff) / 255.0, ((c >> 8) & 0xff) / 255.0,
                         (c & 0xff) / 255.0);
}

static double stroke_width(const scene_item *it)
{
    return it->width > 0 ? it->width : 1.0;
}

int raster_dash(unsigned flags, double lw, double d[2])
{
    if (flags & SCENE_DOTTED) { /* dashes about as long as the line is wide: dots */
        d[0] = fmax(1.0, 0.9 * lw);
        d[1] = fmax(4.0, 2.5 * lw);
        return 2;
    }
    if (flags & SCENE_DASHED) {
        d[0] = fmax(4.0, 3.0 * lw);
        d[1] = fmax(3.0, 2.0 * lw);
        return 2;
    }
    return 0;
}

static void set_dash(cairo_t *cr, unsigned flags, double lw)
{
    double d[2];
    int n = raster_dash(flags, lw, d);
    cairo_set_dash(cr, n ? d : NULL, n, 0.0);
}

const char *raster_font_family(const scene *s)
{
    return family_of(s ? s->font : NULL);
}

double raster_line_per_px(void)
{
    return line_per_px;
}

void raster_font_metrics(const char *family, int bold, double *ascent, double *descent)
{
    cairo_font_face_t *face =
        cairo_toy_font_face_create(family_of(family), CAIRO_FONT_SLANT_NORMAL,
                                   bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_matrix_t fm, ctm;
    cairo_matrix_init_scale(&fm, measure_px, measure_px);
    cairo_matrix_init_identity(&ctm);
    cairo_font_options_t *fo = font_options(1);
    cairo_scaled_font_t *sf = cairo_scaled_font_create(face, &fm, &ctm, fo);
    cairo_font_extents_t fe = {0.76 * measure_px, 0.24 * measure_px, 0, 0, 0};
    if (cairo_scaled_font_status(sf) == CAIRO_STATUS_SUCCESS) cairo_scaled_font_extents(sf, &fe);
    cairo_scaled_font_destroy(sf);
    cairo_font_options_destroy(fo);
    cairo_font_face_destroy(face);
    *ascent = fe.ascent / measure_px;
    *descent = fe.descent / measure_px;
}

static void draw_text(cairo_t *cr, const scene_item *it, const draw_opts *o)
{
    if (!it->u.text.str || !*it->u.text.str) return;
    char *heap;
    const char *str = cairo_safe(it->u.text.str, &heap);
    double size = it->u.text.size > 0 ? it->u.text.size : 1.0;
    double box_h = o->text_h * size;
    double px = box_h / line_per_px;
    cairo_select_font_face(cr, family_of(o->font), CAIRO_FONT_SLANT_NORMAL,
                           (it->flags & SCENE_BOLD) ? CAIRO_FONT_WEIGHT_BOLD
                                                    : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, px);
    cairo_font_extents_t fe;
    cairo_text_extents_t te;
    cairo_font_extents(cr, &fe);
    cairo_text_extents(cr, str, &te);
    unsigned an = it->u.text.anchor;
    unsigned ha = an & 3, va = (an >> 2) & 3;
    double dx = ha == SCENE_CENTER ? -0.5 * te.x_advance : ha == SCENE_RIGHT ? -te.x_advance : 0;
    double top = va == 1 ? -0.5 * box_h : va == 2 ? -box_h : 0.0;
    double baseline = top + 0.5 * (box_h - (fe.ascent + fe.descent)) + fe.ascent;
    cairo_save(cr);
    cairo_translate(cr, it->u.text.x, it->u.text.y);
    if (an & SCENE_VERTICAL) cairo_rotate(cr, -pi / 2.0);
    set_rgb(cr, it->color);
    cairo_move_to(cr, dx, baseline);
    cairo_show_text(cr, str);
    cairo_new_path(cr);
    cairo_restore(cr);
    free(heap);
}

/* ---- dense curves drawn as pixel columns ---------------------------------------------------
 *
 * cairo's stroker tessellates every segment and round join (about 1.5 us a segment here), so a
 * curve with points in every pixel column costs 1-6 ms at 1280x800, most of a line view's frame.
 * At pixel scale such a curve is a column of pixels per x: along a vertical line the stroke
 * covers exactly the points within half the line width of the polyline, an interval per segment
 * (a segment's stroke, round caps included, is a capsule, which is convex). Each pixel column is
 * cut along COL_LINES such lines; a pixel's coverage is the mean over them of the part of the
 * pixel their intervals cover (antialiasing in y exactly, in x in COL_LINES steps), which draws
 * the stroke's pixels in time proportional to the pixels covered.
 * Only for the raster (the window and PNG), with antialiasing, for solid curves of at least one
 * point per pixel column; vector files, sparse and dashed curves are stroked by cairo. */

/* Whether the polyline is a function of x (its points in order of x) with a point every two
 * pixel columns or closer over its x extent (its segments then cross at most two columns, so
 * sampling each column's centre line misses no detail; sparser curves keep cairo's stroke, whose
 * antialiasing across x their long slopes need). */
static int polyline_dense(const scene_item *it)
{
    size_t n = it->u.poly.n, finite = 0;
    const double *xy = it->u.poly.xy;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(xy[2 * i]) || !isfinite(xy[2 * i + 1])) continue;
        if (xy[2 * i] < hi) return 0; /* x goes back */
        lo = fmin(lo, xy[2 * i]);
        hi = xy[2 * i];
        finite++;
    }
    return finite >= 16 && 2.0 * (double)finite >= hi - lo;
}

/* The y interval where the line x = c meets the capsule of half width hw around segment
 * (ax, ay)-(bx, by), widened into [*lo, *hi]. The interval's ends lie on the capsule's boundary:
 * on one of its two long edges or on one of the end circles; every such crossing is inside the
 * capsule, so the lowest and highest of them are the ends. */
static void capsule_cut(double ax, double ay, double bx, double by, double hw, double c, double *lo,
                        double *hi)
{
    double dx = bx - ax, dy = by - ay, len = hypot(dx, dy);
    const double ex[2] = {ax, bx}, ey[2] = {ay, by};
    for (int e = 0; e < 2; e++) { /* the end circles */
        double u = c - ex[e];
        if (fabs(u) > hw) continue;
        double v = sqrt(hw * hw - u * u);
        *lo = fmin(*lo, ey[e] - v);
        *hi = fmax(*hi, ey[e] + v);
    }
    if (!(len > 0) || dx == 0) return; /* a vertical segment: the circles bound it */
    double nx = -dy / len * hw, ny = dx / len * hw;
    for (int side = -1; side <= 1; side += 2) { /* the long edges, offset by +-hw along n */
        double t = (c - ax - side * nx) / dx;
        if (t < 0 || t > 1) continue;
        double y = ay + side * ny + t * dy;
        *lo = fmin(*lo, y);
        *hi = fmax(*hi, y);
    }
}

/* dst = src over dst at coverage a (0..1); premultiplied ARGB32, src opaque */
static uint32_t blend_px(uint32_t dst, uint32_t src, double a)
{
    unsigned ai = (unsigned)(a * 256.0 + 0.5);
    if (ai >= 256) return src;
    unsigned inv = 256 - ai;
    uint32_t out = 0;
    for (int sh = 0; sh < 32; sh += 8) {
        unsigned d = (dst >> sh) & 0xffu, sv = (src >> sh) & 0xffu;
        out |= ((sv * ai + d * inv + 128) >> 8) << sh;
    }
    return out;
}

/* Lines per pixel column the capsules are cut along (antialiasing across x: a steep stretch
 * covers part of a column). */
enum { COL_LINES = 4 };

/* Draws the polyline as pixel columns into o's pixels. 0, or -1 when it cannot (out of memory:
 * the caller strokes it). */
static int draw_polyline_columns(const draw_opts *o, const scene_item *it, double lw)
{
    size_t n = it->u.poly.n;
    const double *xy = it->u.poly.xy;
    double hw = lw / 2;
    /* the clip: the item's rectangle on the canvas */
    double cx0 = fmax(0, it->u.poly.cx), cx1 = fmin(o->w, it->u.poly.cx + it->u.poly.cw);
    double cy0 = fmax(0, it->u.poly.cy), cy1 = fmin(o->h, it->u.poly.cy + it->u.poly.ch);
    if (!(cx1 > cx0 && cy1 > cy0)) return 0;
    int X0 = (int)floor(cx0), X1 = (int)ceil(cx1); /* columns X0 .. X1 - 1 */
    size_t nl = (size_t)(X1 - X0) * COL_LINES;     /* cut lines, COL_LINES per column */
    /* Along a run of the curve (between breaks) the segments meeting a line are consecutive
     * and their intervals overlap (neighbours share the disc around their joint), so a run
     * makes one interval per line. Two runs (either side of a NaN break) may meet on one line
     * and keep two, so the gap between them stays empty; a third merges. */
    typedef struct span {
        double lo, hi;
        size_t run;
    } span;
    span *sp = malloc(2 * nl * sizeof *sp);
    float *cov = malloc((size_t)o->h * sizeof *cov);
    if (!sp || !cov) {
        free(sp);
        free(cov);
        return -1;
    }
    for (size_t l = 0; l < 2 * nl; l++) sp[l] = (span){INFINITY, -INFINITY, 0};
    size_t run = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        double ax = xy[2 * i], ay = xy[2 * i + 1], bx = xy[2 * i + 2], by = xy[2 * i + 3];
        if (!isfinite(ax) || !isfinite(ay) || !isfinite(bx) || !isfinite(by)) {
            run++;
            continue;
        }
        /* the lines x = X0 + (l + 0.5) / COL_LINES within hw of the segment's x extent */
        double xa = (fmin(ax, bx) - hw - X0) * COL_LINES - 0.5;
        double xb = (fmax(ax, bx) + hw - X0) * COL_LINES - 0.5;
        long la = (long)fmax(ceil(xa), 0), lb = (long)fmin(floor(xb), (double)nl - 1);
        for (long l = la; l <= lb; l++) {
            double lo = INFINITY, hi = -INFINITY;
            capsule_cut(ax, ay, bx, by, hw, X0 + (l + 0.5) / COL_LINES, &lo, &hi);
            if (!(lo <= hi)) continue;
            span *s0 = &sp[2 * (size_t)l], *s1 = s0 + 1, *to;
            int used0 = s0->lo <= s0->hi, used1 = s1->lo <= s1->hi;
            if (!used0 || s0->run == run) {
                to = s0;
            } else if (!used1 || s1->run == run) {
                to = s1;
            } else { /* a third run: the two kept merge */
                s0->lo = fmin(s0->lo, s1->lo);
                s0->hi = fmax(s0->hi, s1->hi);
                *s1 = (span){INFINITY, -INFINITY, 0};
                to = s1;
            }
            to->lo = fmin(to->lo, lo);
            to->hi = fmax(to->hi, hi);
            to->run = run;
        }
    }
    uint32_t src = 0xff000000u | (it->color & 0xffffffu);
    for (int X = X0; X < X1; X++) {
        /* each pixel of the column: the mean over the column's lines (those inside the clip)
         * of the part of the pixel the line's intervals cover */
        const span *col = &sp[2 * (size_t)(X - X0) * COL_LINES];
        double tops[2 * COL_LINES], bots[2 * COL_LINES];
        int m = 0, Ymin = o->h, Ymax = -1;
        for (int q = 0; q < COL_LINES; q++) {
            double lx = X + (q + 0.5) / COL_LINES;
            if (lx < cx0 || lx > cx1) continue;
            for (int k = 0; k < 2; k++) {
                double top = fmax(col[2 * q + k].lo, cy0), bot = fmin(col[2 * q + k].hi, cy1);
                if (!(bot > top)) continue;
                tops[m] = top;
                bots[m] = bot;
                m++;
                if ((int)floor(top) < Ymin) Ymin = (int)floor(top);
                if ((int)ceil(bot) - 1 > Ymax) Ymax = (int)ceil(bot) - 1;
            }
        }
        if (m == 0) continue;
        for (int Y = Ymin; Y <= Ymax; Y++) cov[Y] = 0;
        for (int k = 0; k < m; k++)
            for (int Y = (int)floor(tops[k]); Y < (int)ceil(bots[k]); Y++)
                cov[Y] += (float)((fmin(bots[k], Y + 1.0) - fmax(tops[k], (double)Y)) / COL_LINES);
        for (int Y = Ymin; Y <= Ymax; Y++) {
            uint32_t *p = o->px + (size_t)Y * (size_t)o->stride + (size_t)X;
            *p = blend_px(*p, src, fmin(1.0, cov[Y]));
        }
    }
    free(sp);
    free(cov);
    return 0;
}

static void draw_polyline(cairo_t *cr, const scene_item *it)
{
    size_t n = it->u.poly.n;
    const double *xy = it->u.poly.xy;
    if (n < 2 || !xy) return;
    cairo_save(cr);
    cairo_rectangle(cr, it->u.poly.cx, it->u.poly.cy, it->u.poly.cw, it->u.poly.ch);
    cairo_clip(cr);
    double lw = stroke_width(it);
    cairo_set_line_width(cr, lw);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
    set_dash(cr, it->flags, lw);
    set_rgb(cr, it->color);
    /* cairo's stroker tessellates a path as one polygon, and a noisy curve of a thousand
     * self-crossing segments costs it far more than the same segments in short runs (a learned
     * table's decay at 1280x800: 7 ms as one path, 2.5 ms in runs of 4), while a smooth curve
     * is cheapest in long runs. Colours are opaque and caps and joins round, so runs that share
     * their end points draw the same pixels. A dash pattern would restart at every run, so
     * dashed lines stay one path. Noisy: the y travel is many times the y extent. */
    size_t run = 64;
    if (it->flags & (SCENE_DASHED | SCENE_DOTTED)) {
        run = (size_t)-1;
    } else {
        double travel = 0, lo = INFINITY, hi = -INFINITY, prev = NAN;
        for (size_t i = 0; i < n; i++) {
            double y = xy[2 * i + 1];
            if (!isfinite(y)) continue;
            if (isfinite(prev)) travel += fabs(y - prev);
            prev = y;
            lo = fmin(lo, y);
            hi = fmax(hi, y);
        }
        if (travel > 20 * (hi - lo + 1)) run = 4;
    }
    int pen = 0;
    size_t in_run = 0;
    double lx = 0, ly = 0;
    for (size_t i = 0; i < n; i++) {
        double x = xy[2 * i], y = xy[2 * i + 1];
        if (!isfinite(x) || !isfinite(y)) {
            pen = 0; /* a break in the curve */
            continue;
        }
        if (pen && in_run >= run) {
            cairo_stroke(cr);
            cairo_move_to(cr, lx, ly);
            in_run = 0;
        }
        if (pen)
            cairo_line_to(cr, x, y);
        else
            cairo_move_to(cr, x, y);
        pen = 1;
        in_run++;
        lx = x;
        ly = y;
    }
    cairo_stroke(cr);
    cairo_restore(cr);
}

static void draw_arrow(cairo_t *cr, const scene_item *it)
{
    double x0 = it->u.line.x0, y0 = it->u.line.y0, x1 = it->u.line.x1, y1 = it->u.line.y1;
    double lw = stroke_width(it);
    double dx = x1 - x0, dy = y1 - y0, len = hypot(dx, dy);
    if (!(len > 0)) return;
    double ux = dx / len, uy = dy / len;
    double head = fmin(3.0 * lw + 5.0, len), half = 0.45 * head;
    set_rgb(cr, it->color);
    /* The shaft stops inside the head so its butt end does not poke out of the tip. */
    double sx = x1 - ux * head * 0.7, sy = y1 - uy * head * 0.7;
    if (len > head) {
        cairo_move_to(cr, x0, y0);
        cairo_line_to(cr, sx, sy);
        cairo_set_line_width(cr, lw);
        cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
        cairo_set_dash(cr, NULL, 0, 0.0);
        cairo_stroke(cr);
    }
    double bx = x1 - ux * head, by = y1 - uy * head;
    cairo_move_to(cr, x1, y1);
    cairo_line_to(cr, bx - uy * half, by + ux * half);
    cairo_line_to(cr, bx + uy * half, by - ux * half);
    cairo_close_path(cr);
    cairo_fill(cr);
}

/* A heatmap's colour lookup: the map packed as 0xRRGGBB and the range in float. */
typedef struct heat_lut {
    uint32_t rgb[256];
    uint32_t mask;
    float vmin, scale; /* t = (v - vmin) * scale; scale 0 = a flat range (middle colour) */
} heat_lut;

static void heat_lut_init(heat_lut *l, const scene_item *it)
{
    const cmap *m = it->u.heat.map ? it->u.heat.map : cmap_default_sequential();
    for (int i = 0; i < 256; i++)
        l->rgb[i] = ((uint32_t)m->rgb[i][0] << 16) | ((uint32_t)m->rgb[i][1] << 8) | m->rgb[i][2];
    l->mask = it->u.heat.mask_color;
    double range = it->u.heat.vmax - it->u.heat.vmin;
    l->vmin = (float)it->u.heat.vmin;
    l->scale = range != 0.0 && isfinite(range) ? (float)(1.0 / range) : 0.0f;
}

/* Colour of one value: NaN and -inf are masked, everything else is clamped into the range. */
static inline uint32_t heat_rgb(const heat_lut *l, float v)
{
    if (v != v || v < -FLT_MAX) return l->mask;
    float t = l->scale == 0.0f ? 0.5f : (v - l->vmin) * l->scale;
    if (!(t > 0.0f)) t = 0.0f; /* also NaN from inf - inf */
    if (t > 1.0f) t = 1.0f;
    return l->rgb[(int)(t * 255.0f + 0.5f)];
}

/* Source range [lo, hi) of output pixel o when n cells map onto t pixels: the cells that fall
 * into it when shrinking (box average), the nearest cell when enlarging or with nearest. */
static void axis_map(size_t n, size_t t, int nearest, size_t *lo, size_t *hi)
{
    for (size_t o = 0; o < t; o++) {
        size_t a = o * n / t, b = (o + 1) * n / t;
        if (nearest || b <= a) {
            a = (2 * o + 1) * n / (2 * t);
            if (a >= n) a = n - 1;
            b = a + 1;
        }
        lo[o] = a;
        hi[o] = b;
    }
}

/* The heatmap as an opaque image of out_rows x out_cols pixels through its colormap. Each pixel
 * is the mean colour of the cells inside it when the image is smaller than the array (so a
 * 1024-row matrix in 500 px does not alias), or the nearest cell's colour when it is larger. */
static cairo_surface_t *heat_image(const scene_item *it, size_t out_rows, size_t out_cols)
{
    size_t rows = it->u.heat.rows, cols = it->u.heat.cols;
    int nearest = (it->flags & SCENE_NEAREST) != 0;
    heat_lut lut;
    heat_lut_init(&lut, it);
    cairo_surface_t *img =
        cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)out_cols, (int)out_rows);
    if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS) return img;
    cairo_surface_flush(img);
    unsigned char *base = cairo_image_surface_get_data(img);
    size_t stride = (size_t)cairo_image_surface_get_stride(img);
    const float *data = it->u.heat.data;

    size_t *clo = malloc(out_cols * sizeof *clo), *chi = malloc(out_cols * sizeof *chi);
    size_t *rlo = malloc(out_rows * sizeof *rlo), *rhi = malloc(out_rows * sizeof *rhi);
    uint32_t *rowrgb = malloc(cols * sizeof *rowrgb);
    uint64_t *acc = malloc(cols * 3 * sizeof *acc); /* per source column r, g, b */
    double *cinv = malloc(out_cols * sizeof *cinv); /* 1 / columns per output pixel */
    if (!clo || !chi || !rlo || !rhi || !rowrgb || !acc || !cinv) {
        free(clo), free(chi), free(rlo), free(rhi), free(rowrgb), free(acc), free(cinv);
        cairo_surface_destroy(img);
        return cairo_image_surface_create(CAIRO_FORMAT_INVALID, 0, 0);
    }
    axis_map(cols, out_cols, nearest, clo, chi);
    axis_map(rows, out_rows, nearest, rlo, rhi);
    int one_col = 1; /* every output pixel takes exactly one column: no column averaging */
    for (size_t o = 0; o < out_cols; o++) {
        if (chi[o] - clo[o] != 1) one_col = 0;
        cinv[o] = 1.0 / (double)(chi[o] - clo[o]);
    }

    for (size_t oy = 0; oy < out_rows; oy++) {
        uint32_t *dst = (uint32_t *)(base + oy * stride);
        if (oy > 0 && rlo[oy] == rlo[oy - 1] && rhi[oy] == rhi[oy - 1]) {
            memcpy(dst, base + (oy - 1) * stride, out_cols * sizeof *dst); /* enlarged rows */
            continue;
        }
        size_t nr = rhi[oy] - rlo[oy];
        if (nr == 1 && one_col) {
            const float *src = data + rlo[oy] * cols;
            for (size_t c = 0; c < cols; c++) rowrgb[c] = heat_rgb(&lut, src[c]);
            for (size_t ox = 0; ox < out_cols; ox++) dst[ox] = 0xff000000u | rowrgb[clo[ox]];
            continue;
        }
        /* Sum the rows of this bin per source column, then the columns of each output pixel.
         * The bin's first row sets the sums (no clearing pass: that memset was a fifth of the
         * image's cost at L 8192 in a 1280x800 window). */
        for (size_t r = rlo[oy]; r < rhi[oy]; r++) {
            const float *src = data + r * cols;
            for (size_t c = 0; c < cols; c++) rowrgb[c] = heat_rgb(&lut, src[c]);
            uint64_t *a = acc;
            if (r == rlo[oy]) {
                for (size_t c = 0; c < cols; c++, a += 3) {
                    uint32_t rgb = rowrgb[c];
                    a[0] = (rgb >> 16) & 0xff;
                    a[1] = (rgb >> 8) & 0xff;
                    a[2] = rgb & 0xff;
                }
                continue;
            }
            for (size_t c = 0; c < cols; c++, a += 3) {
                uint32_t rgb = rowrgb[c];
                a[0] += (rgb >> 16) & 0xff;
                a[1] += (rgb >> 8) & 0xff;
                a[2] += rgb & 0xff;
            }
        }
        double rinv = 1.0 / (double)nr;
        for (size_t ox = 0; ox < out_cols; ox++) {
            uint64_t s0 = 0, s1 = 0, s2 = 0;
            for (size_t c = clo[ox]; c < chi[ox]; c++) {
                s0 += acc[3 * c];
                s1 += acc[3 * c + 1];
                s2 += acc[3 * c + 2];
            }
            /* A multiply by the reciprocal: integer division here cost more than all else. */
            double k = rinv * cinv[ox];
            dst[ox] = 0xff000000u | ((uint32_t)((double)s0 * k + 0.5) << 16) |
                      ((uint32_t)((double)s1 * k + 0.5) << 8) | (uint32_t)((double)s2 * k + 0.5);
        }
    }
    free(clo), free(chi), free(rlo), free(rhi), free(rowrgb), free(acc), free(cinv);
    cairo_surface_mark_dirty(img);
    return img;
}

typedef struct pngbuf {
    unsigned char *p;
    size_t n, cap;
} pngbuf;

static cairo_status_t write_png_mem(void *closure, const unsigned char *data, unsigned int len)
{
    pngbuf *b = closure;
    if (b->n + len > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + len) cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (!p) return CAIRO_STATUS_NO_MEMORY;
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, len);
    b->n += len;
    return CAIRO_STATUS_SUCCESS;
}

unsigned char *raster_heat_png(const scene_item *it, size_t out_rows, size_t out_cols, size_t *n)
{
    *n = 0;
    if (!out_rows || !out_cols || out_rows > 32767 || out_cols > 32767) return NULL;
    cairo_surface_t *img = heat_image(it, out_rows, out_cols);
    pngbuf b = {0};
    if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS ||
        cairo_surface_write_to_png_stream(img, write_png_mem, &b) != CAIRO_STATUS_SUCCESS) {
        free(b.p);
        b.p = NULL;
    } else {
        *n = b.n;
    }
    cairo_surface_destroy(img);
    return b.p;
}

static int draw_heatmap(cairo_t *cr, const scene_item *it, const draw_opts *o)
{
    size_t rows = it->u.heat.rows, cols = it->u.heat.cols;
    double x = it->u.heat.x, y = it->u.heat.y, w = it->u.heat.w, h = it->u.heat.h;
    if (!rows || !cols || !it->u.heat.data || !(w > 0) || !(h > 0)) return 0;
    cairo_matrix_t mt;
    cairo_get_matrix(cr, &mt);
    if (!o->vector && mt.xy == 0 && mt.yx == 0 && mt.xx > 0 && mt.yy > 0) {
        /* Axis-aligned on pixels: make the image exactly the pixels the rectangle covers and
         * copy it 1:1, so every pixel is decided here (mean or nearest), none by a filter. */
        double px0 = round(mt.xx * x + mt.x0), px1 = round(mt.xx * (x + w) + mt.x0);
        double py0 = round(mt.yy * y + mt.y0), py1 = round(mt.yy * (y + h) + mt.y0);
        double tw = fmax(1.0, px1 - px0), th = fmax(1.0, py1 - py0);
        if (tw <= 32767 && th <= 32767) {
            cairo_surface_t *img = heat_image(it, (size_t)th, (size_t)tw);
            if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS) {
                cairo_surface_destroy(img);
                return -1;
            }
            cairo_save(cr);
            cairo_identity_matrix(cr);
            cairo_set_source_surface(cr, img, px0, py0);
            cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
            cairo_rectangle(cr, px0, py0, tw, th);
            cairo_fill(cr);
            cairo_restore(cr);
            cairo_surface_destroy(img);
            return 0;
        }
    }
    if (o->vector == 2 && mt.xy == 0 && mt.yx == 0 && mt.xx > 0 && mt.yy > 0) {
        /* cairo's SVG (--svg-text paths): the image at the pixels it is drawn at, on whole
         * pixels, as pelab's own SVG writer embeds it (svg_write.c), so a viewer that smooths
         * images whatever image-rendering says (rsvg) still shows the PNG's cells */
        double px0 = round(mt.xx * x + mt.x0), px1 = round(mt.xx * (x + w) + mt.x0);
        double py0 = round(mt.yy * y + mt.y0), py1 = round(mt.yy * (y + h) + mt.y0);
        double tw = fmax(1.0, px1 - px0), th = fmax(1.0, py1 - py0);
        size_t oc = (size_t)fmin((double)VECTOR_MAX_CELLS, tw);
        size_t orows = (size_t)fmin((double)VECTOR_MAX_CELLS, th);
        cairo_surface_t *img = heat_image(it, orows, oc);
        if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS) {
            cairo_surface_destroy(img);
            return -1;
        }
        cairo_save(cr);
        cairo_identity_matrix(cr);
        cairo_rectangle(cr, px0, py0, tw, th);
        cairo_clip(cr);
        cairo_translate(cr, px0, py0);
        cairo_scale(cr, tw / (double)oc, th / (double)orows);
        cairo_set_source_surface(cr, img, 0, 0);
        cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
        cairo_paint(cr);
        cairo_restore(cr);
        cairo_surface_destroy(img);
        return 0;
    }
    /* Vector surfaces and rotated or huge targets: an image of at most the device size (or of
     * VECTOR_MAX_CELLS for vectors, which keep the cells), scaled by cairo with nearest. */
    double dw = w, dh = h;
    cairo_user_to_device_distance(cr, &dw, &dh);
    dw = fabs(dw);
    dh = fabs(dh);
    size_t out_cols, out_rows;
    if (o->vector) {
        /* The data's resolution, or the drawn one (device units: points in a PDF, pixels in
         * an SVG) when that is smaller, box-averaged down like a raster; shown with the nearest
         * filter. A 4096 x 1024 table drawn 700 units wide is a 700-wide image, as matplotlib
         * writes it, not 4096 cells repeated. */
        double lim_w = fmax(1.0, fmin((double)VECTOR_MAX_CELLS, ceil(dw - 1e-6)));
        double lim_h = fmax(1.0, fmin((double)VECTOR_MAX_CELLS, ceil(dh - 1e-6)));
        out_cols = (double)cols > lim_w ? (size_t)lim_w : cols;
        out_rows = (double)rows > lim_h ? (size_t)lim_h : rows;
    } else {
        double lim_w = fmax(1.0, fmin(32767.0, ceil(dw - 1e-6)));
        double lim_h = fmax(1.0, fmin(32767.0, ceil(dh - 1e-6)));
        out_cols = (double)cols > lim_w ? (size_t)lim_w : cols;
        out_rows = (double)rows > lim_h ? (size_t)lim_h : rows;
    }
    cairo_surface_t *img = heat_image(it, out_rows, out_cols);
    if (cairo_surface_status(img) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(img);
        return -1;
    }
    cairo_save(cr);
    cairo_rectangle(cr, x, y, w, h);
    cairo_clip(cr);
    cairo_translate(cr, x, y);
    cairo_scale(cr, w / (double)out_cols, h / (double)out_rows);
    cairo_set_source_surface(cr, img, 0, 0);
    cairo_pattern_t *pat = cairo_get_source(cr);
    cairo_pattern_set_filter(pat, CAIRO_FILTER_NEAREST);
    /* PAD keeps the border cells full strength on fractional raster edges; in vector output the
     * clip matches the image exactly and viewers handle NONE best. */
    cairo_pattern_set_extend(pat, o->vector ? CAIRO_EXTEND_NONE : CAIRO_EXTEND_PAD);
    cairo_paint(cr);
    cairo_restore(cr);
    cairo_surface_destroy(img);
    return 0;
}

static int draw_scene(cairo_t *cr, const scene *s, const draw_opts *o)
{
    cairo_set_antialias(cr, o->antialias ? CAIRO_ANTIALIAS_DEFAULT : CAIRO_ANTIALIAS_NONE);
    cairo_font_options_t *fo = font_options(o->antialias);
    cairo_set_font_options(cr, fo);
    cairo_font_options_destroy(fo);
    set_rgb(cr, s->background);
    cairo_paint(cr);
    int rc = 0;
    for (size_t i = 0; i < s->n; i++) {
        const scene_item *it = &s->items[i];
        double lw = stroke_width(it);
        switch (it->kind) {
        case SCENE_RECT:
            cairo_rectangle(cr, it->u.rect.x, it->u.rect.y, it->u.rect.w, it->u.rect.h);
            set_rgb(cr, it->color);
            if (it->flags & SCENE_FILL) {
                cairo_fill(cr);
            } else {
                cairo_set_line_width(cr, lw);
                cairo_set_line_join(cr, CAIRO_LINE_JOIN_MITER);
                set_dash(cr, it->flags, lw);
                cairo_stroke(cr);
            }
            break;
        case SCENE_LINE:
            cairo_move_to(cr, it->u.line.x0, it->u.line.y0);
            cairo_line_to(cr, it->u.line.x1, it->u.line.y1);
            cairo_set_line_width(cr, lw);
            cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
            set_dash(cr, it->flags, lw);
            set_rgb(cr, it->color);
            cairo_stroke(cr);
            break;
        case SCENE_POLYLINE:
            if (o->px && o->antialias && !(it->flags & (SCENE_DASHED | SCENE_DOTTED)) &&
                polyline_dense(it)) {
                /* cairo's pending drawing first, then ours, then cairo is told */
                cairo_surface_flush(o->surf);
                int rc_cols = draw_polyline_columns(o, it, lw);
                cairo_surface_mark_dirty(o->surf);
                if (rc_cols == 0) break;
            }
            draw_polyline(cr, it);
            break;
        case SCENE_TEXT:
            draw_text(cr, it, o);
            break;
        case SCENE_HEATMAP:
            if (draw_heatmap(cr, it, o) != 0) rc = -1;
            break;
        case SCENE_ARROW:
            draw_arrow(cr, it);
            break;
        case SCENE_CIRCLE:
            cairo_new_path(cr);
            cairo_arc(cr, it->u.circle.cx, it->u.circle.cy, it->u.circle.r, 0, 2 * pi);
            set_rgb(cr, it->color);
            if (it->flags & SCENE_FILL) {
                cairo_fill(cr);
            } else {
                cairo_set_line_width(cr, lw);
                set_dash(cr, it->flags, lw);
                cairo_stroke(cr);
            }
            break;
        }
    }
    if (cairo_status(cr) != CAIRO_STATUS_SUCCESS) rc = -1;
    return rc;
}

static double scene_text_h(const scene *s)
{
    if (s->text_h > 0) return s->text_h;
    return line_per_px * raster_font_px(s->width, s->height, 1.0);
}

double raster_scene_text_h(const scene *s)
{
    return scene_text_h(s);
}

uint64_t raster_scene_key(const scene *s, int w, int h, int antialias)
{
    /* FNV-1a over the font family, folded with the rest */
    uint64_t f = 1469598103934665603ull;
    for (const char *c = family_of(s->font); *c; c++)
        f = (f ^ (unsigned char)*c) * 1099511628211ull;
    uint64_t v = (scene_hash(s) ^ f) * 0x9e3779b97f4a7c15ull;
    v ^= (uint64_t)(uint32_t)w << 32 | (uint32_t)h << 1 | (antialias != 0);
    v *= 0xc2b2ae3d27d4eb4full;
    return v ^ v >> 32;
}

int raster_draw_argb(const scene *s, uint32_t *pixels, int w, int h, int stride, int antialias)
{
    return raster_draw_argb_scaled(s, pixels, w, h, stride, antialias, 1.0);
}

int raster_draw_argb_scaled(const scene *s, uint32_t *pixels, int w, int h, int stride,
                            int antialias, double scale)
{
    if (!pixels || w <= 0 || h <= 0 || stride < 4 * w || stride % 4) return -1;
    if (!(scale > 0) || !isfinite(scale)) return -1;
    cairo_surface_t *surf = cairo_image_surface_create_for_data((unsigned char *)pixels,
                                                                CAIRO_FORMAT_ARGB32, w, h, stride);
    if (cairo_surface_status(surf) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(surf);
        return -1;
    }
    cairo_t *cr = cairo_create(surf);
    draw_opts o = {antialias, 0, scene_text_h(s), s->font, surf, pixels, w, h, stride / 4};
    if (scale != 1.0) {
        /* the curves' pixel columns work at figure unit = pixel: cairo strokes them here */
        o.surf = NULL;
        o.px = NULL;
        cairo_scale(cr, scale, scale);
    }
    int rc = draw_scene(cr, s, &o);
    cairo_destroy(cr);
    cairo_surface_flush(surf);
    cairo_surface_destroy(surf);
    return rc;
}

/* --- export ---------------------------------------------------------------------------- */

typedef struct membuf {
    char *p;
    size_t n, cap;
    int failed;
} membuf;

static int mb_put(membuf *b, const char *data, size_t n)
{
    if (b->failed) return -1;
    if (n > SIZE_MAX - b->n - 1) {
        b->failed = 1;
        return -1;
    }
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 65536;
        while (cap < b->n + n + 1) {
            if (cap > SIZE_MAX / 2) {
                b->failed = 1;
                return -1;
            }
            cap *= 2;
        }
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = 1;
            return -1;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, n);
    b->n += n;
    b->p[b->n] = 0;
    return 0;
}

static cairo_status_t write_mem(void *closure, const unsigned char *data, unsigned int len)
{
    return mb_put(closure, (const char *)data, len) ? CAIRO_STATUS_WRITE_ERROR
                                                    : CAIRO_STATUS_SUCCESS;
}

static cairo_status_t write_file(void *closure, const unsigned char *data, unsigned int len)
{
    FILE *fp = closure;
    return fwrite(data, 1, len, fp) == len ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

static const char *meta_get(const raster_export_opts *o, const char *key)
{
    for (size_t i = 0; o && i < o->n_meta; i++)
        if (o->meta[i].key && o->meta[i].value && strcasecmp(o->meta[i].key, key) == 0)
            return o->meta[i].value;
    return NULL;
}

/* Metadata text as XML allows it: control characters written out (\x1b: "PCDATA invalid Char
 * value 27"), bad UTF-8 and noncharacters as U+FFFD, then &, < and > escaped. */
static void mb_escaped(membuf *b, const char *given)
{
    char *heap;
    const char *s = cairo_safe(given, &heap);
    for (; *s; s++) {
        const char *rep = *s == '&' ? "&amp;" : *s == '<' ? "&lt;" : *s == '>' ? "&gt;" : NULL;
        if (rep)
            mb_put(b, rep, strlen(rep));
        else
            mb_put(b, s, 1);
    }
    free(heap);
}

/* cairo numbers SVG ids (surface17, image21) from process-wide counters, so the same figure
 * exported twice in one run would differ. Renumber every id of these kinds in order of first
 * appearance, and give embedded images a pixelated rendering hint (cairo 1.16 writes none). */
static const char *const svg_id_prefixes[] = {"surface", "image",  "clip",   "pattern", "mask",
                                              "glyph",   "linear", "radial", "source",  "filter"};

typedef struct idmap {
    size_t prefix;
    unsigned long old_id, new_id;
} idmap;

static int svg_fix(const membuf *in, membuf *out, const raster_export_opts *o)
{
    size_t np = sizeof svg_id_prefixes / sizeof svg_id_prefixes[0];
    idmap *map = NULL;
    size_t nmap = 0, capmap = 0;
    unsigned long next[sizeof svg_id_prefixes / sizeof svg_id_prefixes[0]] = {0};
    int meta_done = 0;
    const char *p = in->p, *end = in->p + in->n;
    while (p < end && !out->failed) {
        /* Metadata right after the root element's start tag. */
        if (!meta_done && strncmp(p, "<svg", 4) == 0) {
            const char *gt = memchr(p, '>', (size_t)(end - p));
            if (!gt) break;
            mb_put(out, p, (size_t)(gt - p + 1));
            p = gt + 1;
            meta_done = 1;
            const char *title = meta_get(o, "Title");
            if (title) {
                mb_put(out, "\n<title>", 8);
                mb_escaped(out, title);
                mb_put(out, "</title>", 8);
            }
            if (o && o->n_meta) {
                mb_put(out, "\n<metadata>", 11);
                for (size_t i = 0; i < o->n_meta; i++) {
                    if (!o->meta[i].key || !o->meta[i].value) continue;
                    mb_put(out, "\n", 1);
                    mb_escaped(out, o->meta[i].key);
                    mb_put(out, ": ", 2);
                    mb_escaped(out, o->meta[i].value);
                }
                mb_put(out, "\n</metadata>", 12);
            }
            continue;
        }
        if (strncmp(p, "<image ", 7) == 0) {
            static const char img[] =
                "<image style=\"image-rendering:pixelated\" image-rendering=\"optimizeSpeed\" ";
            mb_put(out, img, sizeof img - 1);
            p += 7;
            continue;
        }
        if (*p == '#' || (strncmp(p, "id=\"", 4) == 0)) {
            size_t lead = *p == '#' ? 1 : 4;
            const char *q = p + lead;
            size_t k = 0;
            for (; k < np; k++) {
                size_t len = strlen(svg_id_prefixes[k]);
                if ((size_t)(end - q) > len && strncmp(q, svg_id_prefixes[k], len) == 0 &&
                    isdigit((unsigned char)q[len]))
                    break;
            }
            if (k < np) {
                size_t len = strlen(svg_id_prefixes[k]);
                char *num_end;
                unsigned long old_id = strtoul(q + len, &num_end, 10);
                unsigned long new_id = 0;
                size_t j = 0;
                for (; j < nmap; j++)
                    if (map[j].prefix == k && map[j].old_id == old_id) break;
                if (j == nmap) {
                    if (nmap == capmap) {
                        size_t cap = capmap ? 2 * capmap : 64;
                        idmap *m2 = realloc(map, cap * sizeof *map);
                        if (!m2) {
                            out->failed = 1;
                            break;
                        }
                        map = m2;
                        capmap = cap;
                    }
                    map[nmap].prefix = k;
                    map[nmap].old_id = old_id;
                    /* glyph ids start at 0 in cairo; keep that, the rest start at 1. */
                    map[nmap].new_id = next[k]++ + (strcmp(svg_id_prefixes[k], "glyph") ? 1 : 0);
                    nmap++;
                }
                new_id = map[j].new_id;
                char buf[64];
                int bn = snprintf(buf, sizeof buf, "%lu", new_id);
                mb_put(out, p, lead + len);
                mb_put(out, buf, (size_t)bn);
                p = num_end;
                continue;
            }
        }
        mb_put(out, p, 1);
        p++;
    }
    free(map);
    return out->failed ? -1 : 0;
}

/* cairo_pdf_surface_set_metadata with the value cleaned: bad UTF-8 there fails the whole PDF
 * ("input string not valid UTF-8"), a control character would reach a viewer's title bar */
static void pdf_set(cairo_surface_t *surf, cairo_pdf_metadata_t key, const char *value)
{
    char *heap;
    const char *v = cairo_safe(value, &heap);
    cairo_pdf_surface_set_metadata(surf, key, v);
    free(heap);
}

static void pdf_metadata(cairo_surface_t *surf, const raster_export_opts *o)
{
    const char *title = meta_get(o, "Title");
    const char *creator = meta_get(o, "Software");
    const char *author = meta_get(o, "Author");
    const char *subject = meta_get(o, "Command");
    if (title) pdf_set(surf, CAIRO_PDF_METADATA_TITLE, title);
    pdf_set(surf, CAIRO_PDF_METADATA_CREATOR, creator ? creator : "pelab");
    if (author) pdf_set(surf, CAIRO_PDF_METADATA_AUTHOR, author);
    if (subject) pdf_set(surf, CAIRO_PDF_METADATA_SUBJECT, subject);
    /* Every other key goes into Keywords as "key: value; ...". */
    membuf kw = {0};
    for (size_t i = 0; o && i < o->n_meta; i++) {
        const char *k = o->meta[i].key;
        if (!k || !o->meta[i].value || !strcasecmp(k, "Title") || !strcasecmp(k, "Software") ||
            !strcasecmp(k, "Author") || !strcasecmp(k, "Command"))
            continue;
        if (kw.n) mb_put(&kw, "; ", 2);
        mb_put(&kw, k, strlen(k));
        mb_put(&kw, ": ", 2);
        mb_put(&kw, o->meta[i].value, strlen(o->meta[i].value));
    }
    if (kw.p && !kw.failed) pdf_set(surf, CAIRO_PDF_METADATA_KEYWORDS, kw.p);
    free(kw.p);
    /* An empty date makes cairo leave /CreationDate out: the same figure gives the same bytes. */
    cairo_pdf_surface_set_metadata(surf, CAIRO_PDF_METADATA_CREATE_DATE, "");
    cairo_pdf_surface_set_metadata(surf, CAIRO_PDF_METADATA_MOD_DATE, "");
}

typedef enum { FMT_NONE, FMT_PNG, FMT_SVG, FMT_PDF } fmt;

/* ".png" or "png" -> the format */
static fmt format_named(const char *ext)
{
    static const struct {
        const char *ext;
        fmt f;
    } map[] = {{"png", FMT_PNG}, {"svg", FMT_SVG}, {"pdf", FMT_PDF}};
    if (*ext == '.') ext++;
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcasecmp(ext, map[i].ext)) return map[i].f;
    return FMT_NONE;
}

static fmt format_of(const char *path, const char *format)
{
    if (format) return format_named(format);
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');
    return dot ? format_named(dot) : FMT_NONE;
}

static double export_scale(const raster_export_opts *o)
{
    return o && o->scale > 0 && isfinite(o->scale) ? o->scale : 1.0;
}

static int export_png(const scene *s, const char *path, const raster_export_opts *o, int w, int h,
                      char *err, size_t errlen)
{
    size_t stride = (size_t)w * 4;
    uint32_t *px = malloc(stride * (size_t)h);
    if (!px) {
        snprintf(err, errlen, "-o %s: out of memory for a %d x %d image", path, w, h);
        return -1;
    }
    if (raster_draw_argb_scaled(s, px, w, h, (int)stride, o ? o->antialias : 1, export_scale(o)) !=
        0) {
        free(px);
        snprintf(err, errlen, "-o %s: drawing the figure failed (cairo)", path);
        return -1;
    }
    int rc = png_write_argb(path, px, w, h, (int)stride, o ? o->dpi : 96.0, o ? o->meta : NULL,
                            o ? o->n_meta : 0, err, errlen);
    free(px);
    return rc;
}

static int export_vector(const scene *s, const char *path, const raster_export_opts *o, fmt f,
                         char *err, size_t errlen)
{
    double dpi = o && o->dpi > 0 ? o->dpi : 96.0;
    /* Figure units are pixels at dpi: the physical size agrees with the PNG's pHYs. */
    double k = (f == FMT_PDF ? 72.0 : 96.0) / dpi * export_scale(o);
    double w = s->width * k, h = s->height * k;
    outfile of;
    if (outfile_open(&of, path, err, errlen) != 0) return -1;
    if (f == FMT_SVG && !(o && o->svg_paths)) {
        /* pelab's own writer: text stays text */
        int rc = svg_write_scene(of.fp, s, w, h, o);
        if (rc != 0 || ferror(of.fp)) {
            outfile_fail(&of, rc != 0 ? "out of memory for a heatmap image" : "write failed", err,
                         errlen);
            return -1;
        }
        return outfile_commit(&of, err, errlen);
    }
    membuf raw = {0};
    cairo_surface_t *surf;
    if (f == FMT_SVG) {
        surf = cairo_svg_surface_create_for_stream(write_mem, &raw, w, h);
        cairo_svg_surface_restrict_to_version(surf, CAIRO_SVG_VERSION_1_1);
        cairo_svg_surface_set_document_unit(surf, CAIRO_SVG_UNIT_PX);
    } else {
        surf = cairo_pdf_surface_create_for_stream(write_file, of.fp, w, h);
        pdf_metadata(surf, o);
    }
    int rc = 0;
    cairo_status_t drawn = CAIRO_STATUS_SUCCESS;
    if (cairo_surface_status(surf) == CAIRO_STATUS_SUCCESS) {
        cairo_t *cr = cairo_create(surf);
        cairo_scale(cr, k, k);
        int vec = f == FMT_SVG ? 2 : 1; /* draw_heatmap embeds an SVG's at the drawn pixels */
        draw_opts d = {o ? o->antialias : 1, vec, scene_text_h(s), s->font, NULL, NULL, 0, 0, 0};
        rc = draw_scene(cr, s, &d);
        drawn = cairo_status(cr); /* the context's error: the surface may say none */
        cairo_destroy(cr);
        cairo_surface_finish(surf);
    }
    char what[160] = "";
    cairo_status_t st = cairo_surface_status(surf);
    if (st == CAIRO_STATUS_SUCCESS) st = drawn;
    if (st != CAIRO_STATUS_SUCCESS || rc != 0) {
        snprintf(what, sizeof what, "drawing the figure failed (cairo: %s)",
                 st != CAIRO_STATUS_SUCCESS ? cairo_status_to_string(st) : "a drawing call failed");
        rc = -1;
    }
    cairo_surface_destroy(surf);
    if (rc == 0 && f == FMT_SVG) {
        membuf fixed = {0};
        if (raw.failed || svg_fix(&raw, &fixed, o) != 0) {
            snprintf(what, sizeof what, "out of memory for the SVG text");
            rc = -1;
        } else if (fwrite(fixed.p, 1, fixed.n, of.fp) != fixed.n) {
            snprintf(what, sizeof what, "write failed");
            rc = -1;
        }
        free(fixed.p);
    }
    free(raw.p);
    if (rc != 0) {
        /* a failed write (a full disk) is what cairo's "write error" means: say the OS's reason */
        outfile_fail(&of, what, err, errlen);
        return -1;
    }
    return outfile_commit(&of, err, errlen);
}

int raster_export(const scene *s, const char *path, const raster_export_opts *o, char *err,
                  size_t errlen)
{
    return raster_export_as(s, path, NULL, o, err, errlen);
}

int raster_export_as(const scene *s, const char *path, const char *format,
                     const raster_export_opts *o, char *err, size_t errlen)
{
    if (!path) path = "";
    fmt f = format_of(path, format);
    if (f == FMT_NONE) {
        snprintf(err, errlen, "-o %s: unknown format (allowed: .png, .svg, .pdf)", path);
        return 1;
    }
    double k = export_scale(o);
    double pw = ceil(s->width * k - 1e-6), ph = ceil(s->height * k - 1e-6);
    if (!(pw >= 1) || !(ph >= 1) || pw > 32767 || ph > 32767) {
        snprintf(err, errlen, "-o %s: figure size %g x %g is outside 1..32767", path, pw, ph);
        return -1;
    }
    if (f == FMT_PNG) return export_png(s, path, o, (int)pw, (int)ph, err, errlen);
    return export_vector(s, path, o, f, err, errlen);
}

/* What export_png and export_vector allocate for the output itself, for the caller to reserve
 * against the process's memory budget before drawing (render/ does not know the budget). */
size_t raster_export_canvas_bytes(double w, double h, const char *path, const char *format)
{
    if (format_of(path ? path : "", format) != FMT_PNG || !(w >= 1) || !(h >= 1)) return 0;
    size_t pw = (size_t)ceil(fmin(w, 32767)), ph = (size_t)ceil(fmin(h, 32767));
    return pw * ph * 4 + pw * 4; /* the ARGB canvas and libpng's row buffer */
}

size_t raster_export_image_bytes(const scene *s, const char *path, const char *format, double scale)
{
    if (!(scale > 0) || !isfinite(scale)) scale = 1.0;
    fmt f = format_of(path ? path : "", format);
    if (f == FMT_NONE) return 0;
    /* heatmaps are drawn one at a time, each through an image of its own that is freed after
     * it: the largest one is what is held at once (with its row and column tables) */
    size_t most = 0;
    for (size_t i = 0; i < s->n; i++) {
        const scene_item *it = &s->items[i];
        if (it->kind != SCENE_HEATMAP || !it->u.heat.rows || !it->u.heat.cols) continue;
        size_t rows = it->u.heat.rows, cols = it->u.heat.cols, out_r, out_c, b;
        if (f == FMT_PNG) {
            /* the rectangle's pixels (one more each way for the rounding of its edges) */
            out_c = (size_t)fmin(32767, ceil(fmax(it->u.heat.w * scale, 0)) + 1);
            out_r = (size_t)fmin(32767, ceil(fmax(it->u.heat.h * scale, 0)) + 1);
            b = out_r * out_c * 4;
        } else {
            /* at most VECTOR_MAX_CELLS a side; cairo keeps a copy and encodes it (PNG, and
             * base64 in an SVG): counted as three images */
            out_c = cols < VECTOR_MAX_CELLS ? cols : VECTOR_MAX_CELLS;
            out_r = rows < VECTOR_MAX_CELLS ? rows : VECTOR_MAX_CELLS;
            /* pelab's SVG writer embeds the drawn pixels, which may be more than the cells */
            out_c = (size_t)fmax((double)out_c, fmin(VECTOR_MAX_CELLS, ceil(it->u.heat.w) + 1));
            out_r = (size_t)fmax((double)out_r, fmin(VECTOR_MAX_CELLS, ceil(it->u.heat.h) + 1));
            b = out_r * out_c * 4 * 3;
        }
        b += (out_c + out_r) * 2 * sizeof(size_t) + out_c * sizeof(double) +
             cols * (sizeof(uint32_t) + 3 * sizeof(uint64_t));
        if (b > most) most = b;
    }
    return most;
}

/* --- multi-page PDF (lesson handouts) --------------------------------------------------- */

int raster_export_pdf_pages(const char *path, double page_w, double page_h, size_t n_pages,
                            raster_page_fn page, void *ctx, const raster_export_opts *o, char *err,
                            size_t errlen)
{
    if (format_of(path, NULL) != FMT_PDF) {
        snprintf(err, errlen, "-o %s: a handout is a .pdf", path);
        return 1;
    }
    /* page units are pixels at 96 per inch, like a figure's */
    const double k = 72.0 / 96.0;
    outfile of;
    if (outfile_open(&of, path, err, errlen) != 0) return -1;
    cairo_surface_t *surf =
        cairo_pdf_surface_create_for_stream(write_file, of.fp, page_w * k, page_h * k);
    pdf_metadata(surf, o);
    int rc = cairo_surface_status(surf) == CAIRO_STATUS_SUCCESS ? 0 : -1;
    char perr[512] = "";
    for (size_t i = 0; rc == 0 && i < n_pages; i++) {
        raster_place pl[RASTER_MAX_PLACES];
        size_t n = 0;
        if (page(ctx, i, pl, &n, perr, sizeof perr) != 0) {
            rc = -1;
            break;
        }
        cairo_t *cr = cairo_create(surf);
        cairo_scale(cr, k, k);
        for (size_t j = 0; j < n && j < RASTER_MAX_PLACES && rc == 0; j++) {
            const scene *s = pl[j].s;
            cairo_save(cr);
            cairo_translate(cr, pl[j].x, pl[j].y);
            cairo_scale(cr, pl[j].scale, pl[j].scale);
            /* each scene paints its background: only inside its own rectangle */
            cairo_rectangle(cr, 0, 0, s->width, s->height);
            cairo_clip(cr);
            draw_opts d = {o ? o->antialias : 1, 1, scene_text_h(s), s->font, NULL, NULL, 0, 0, 0};
            rc = draw_scene(cr, s, &d);
            cairo_restore(cr);
        }
        cairo_show_page(cr);
        cairo_destroy(cr);
        if (cairo_surface_status(surf) != CAIRO_STATUS_SUCCESS) rc = -1;
    }
    cairo_surface_finish(surf);
    if (rc == 0 && cairo_surface_status(surf) != CAIRO_STATUS_SUCCESS) rc = -1;
    char what[160] = "";
    if (rc != 0 && !perr[0])
        snprintf(what, sizeof what, "drawing the handout failed (cairo: %s)",
                 cairo_status_to_string(cairo_surface_status(surf)));
    cairo_surface_destroy(surf);
    if (rc != 0) {
        if (perr[0]) {
            snprintf(err, errlen, "%s", perr);
            outfile_abort(&of);
        } else {
            /* a failed write (a full disk) is what cairo's "error while writing to output
             * stream" means: outfile_fail says the OS's reason */
            outfile_fail(&of, what, err, errlen);
        }
        return -1;
    }
    return outfile_commit(&of, err, errlen);
}
