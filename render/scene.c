/* scene.c: the display list and its arena. */
#include "scene.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "textclean.h"

/* A chunk of the arena. Blocks are kept on reset and reused, so a scene rebuilt every frame
 * stops allocating once it has seen its largest frame. */
struct scene_arena_block {
    scene_arena_block *next;
    size_t size; /* bytes in data */
    size_t used; /* bytes handed out, including alignment padding */
    unsigned char data[];
};

enum { ARENA_ALIGN = 16, ARENA_MIN_BLOCK = 16 * 1024 };

static void *arena_take(scene_arena_block *b, size_t bytes)
{
    uintptr_t base = (uintptr_t)b->data;
    uintptr_t p = (base + b->used + (ARENA_ALIGN - 1)) & ~(uintptr_t)(ARENA_ALIGN - 1);
    size_t off = (size_t)(p - base);
    if (off > b->size || b->size - off < bytes) return NULL;
    b->used = off + bytes;
    return b->data + off;
}

void *scene_alloc(scene *s, size_t bytes)
{
    if (bytes == 0) bytes = 1;
    /* The newest block is at the head and is the largest; older ones may still have room. */
    size_t largest = 0;
    for (scene_arena_block *b = s->blocks; b; b = b->next) {
        void *p = arena_take(b, bytes);
        if (p) return p;
        if (b->size > largest) largest = b->size;
    }
    /* Grow geometrically so the number of blocks stays logarithmic in the total. */
    size_t size = largest > SIZE_MAX / 4 ? largest : largest * 2;
    if (size < ARENA_MIN_BLOCK) size = ARENA_MIN_BLOCK;
    if (bytes > SIZE_MAX - ARENA_ALIGN - sizeof(scene_arena_block)) return NULL;
    if (size < bytes + ARENA_ALIGN) size = bytes + ARENA_ALIGN;
    if (size > SIZE_MAX - sizeof(scene_arena_block)) return NULL;
    scene_arena_block *b = malloc(sizeof *b + size);
    if (!b) return NULL;
    b->next = s->blocks;
    b->size = size;
    b->used = 0;
    s->blocks = b;
    return arena_take(b, bytes);
}

char *scene_strdup(scene *s, const char *str)
{
    if (!str) str = "";
    size_t n = strlen(str);
    char *p = scene_alloc(s, n + 1);
    if (p) memcpy(p, str, n + 1);
    return p;
}

void scene_init(scene *s, double width, double height, uint32_t background)
{
    memset(s, 0, sizeof *s);
    s->width = width;
    s->height = height;
    s->background = background;
}

void scene_free(scene *s)
{
    scene_arena_block *b = s->blocks;
    while (b) {
        scene_arena_block *next = b->next;
        free(b);
        b = next;
    }
    free(s->items);
    memset(s, 0, sizeof *s);
}

void scene_reset(scene *s, double width, double height, uint32_t background)
{
    for (scene_arena_block *b = s->blocks; b; b = b->next) b->used = 0;
    s->n = 0;
    s->width = width;
    s->height = height;
    s->background = background;
    s->text_h = 0.0;
    s->n_cut = s->n_cut_data = 0;
    s->n_squeezed = 0;
    s->legend_covers = 0;
    s->cut_example[0] = '\0';
    s->main_x = s->main_y = s->main_w = s->main_h = 0.0;
    s->main_name[0] = '\0';
    s->n_panels = 0;
    if (s->ranges) memset(s->ranges->seen, 0, sizeof s->ranges->seen);
}

void scene_lock_range(scene *s, int kind, double *lo, double *hi)
{
    scene_ranges *r = s->ranges;
    if (!r || kind < 0 || kind >= SCENE_RANGE_KINDS || !isfinite(*lo) || !isfinite(*hi)) return;
    int i = r->seen[kind]++;
    if (i >= SCENE_RANGE_MAX) return;
    int rev = *lo > *hi; /* keep the orientation the caller chose */
    double a = rev ? *hi : *lo, b = rev ? *lo : *hi;
    if (r->apply) {
        if (i >= r->n[kind]) return;
        a = r->lo[kind][i];
        b = r->hi[kind][i];
        *lo = rev ? b : a;
        *hi = rev ? a : b;
        return;
    }
    if (i >= r->n[kind]) {
        r->n[kind] = i + 1;
        r->lo[kind][i] = a;
        r->hi[kind][i] = b;
    } else {
        if (a < r->lo[kind][i]) r->lo[kind][i] = a;
        if (b > r->hi[kind][i]) r->hi[kind][i] = b;
    }
}

static scene_item *push(scene *s, scene_kind kind, uint32_t color, double width, unsigned flags)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        if (cap < s->cap || cap > SIZE_MAX / sizeof(scene_item)) return NULL;
        scene_item *items = realloc(s->items, cap * sizeof(scene_item));
        if (!items) return NULL;
        s->items = items;
        s->cap = cap;
    }
    scene_item *it = &s->items[s->n++];
    memset(it, 0, sizeof *it);
    it->kind = kind;
    it->color = color & 0xffffffu;
    it->width = width;
    it->flags = flags;
    return it;
}

/* Unicode -> ASCII for mathematical labels. kind: 0 plain, 1 subscript, 2 superscript. */
static const struct {
    const char *u, *a;
    int kind;
} spell[] = {
    {"\xce\xb8", "theta", 0},    {"\xce\xb6", "zeta", 0},     {"\xcf\x80", "pi", 0},
    {"\xce\xb1", "alpha", 0},    {"\xce\xb2", "beta", 0},     {"\xce\xbb", "lambda", 0},
    {"\xe2\x88\x9a", "sqrt", 0}, {"\xe2\x89\xa4", "<=", 0},   {"\xe2\x89\xa5", ">=", 0},
    {"\xc2\xb7", ".", 0},        {"\xc3\x97", "x", 0},        {"\xe2\x88\x92", "-", 0},
    {"\xe2\x86\x92", "->", 0},   {"\xe2\x80\xa6", "...", 0},  {"\xe2\x89\x88", "~", 0},
    {"\xe2\x82\x96", "k", 1},    {"\xe1\xb5\xa2", "i", 1},    {"\xe2\xb1\xbc", "j", 1},
    {"\xe2\x82\x98", "m", 1},    {"\xe2\x82\x99", "n", 1},    {"\xe2\x82\x80", "0", 1},
    {"\xe2\x82\x81", "1", 1},    {"\xe2\x82\x82", "2", 1},    {"\xe2\x82\x8b", "-", 1},
    {"\xe2\x81\xbb", "-", 2},    {"\xe2\x81\xba", "+", 2},    {"\xe2\x81\xb0", "0", 2},
    {"\xc2\xb9", "1", 2},        {"\xc2\xb2", "2", 2},        {"\xc2\xb3", "3", 2},
    {"\xe2\x81\xb4", "4", 2},    {"\xe2\x81\xb5", "5", 2},    {"\xe2\x81\xb6", "6", 2},
    {"\xe2\x81\xb7", "7", 2},    {"\xe2\x81\xb8", "8", 2},    {"\xe2\x81\xb9", "9", 2},
    {"\xe1\xb5\x8f", "k", 2},    {"\xe2\x81\xbf", "n", 2},    {"\xca\xb3", "r", 2},
    {"\xc2\xbd", "1/2", 0},      {"\xe2\x85\x92", "1/10", 0}, {"\xc2\xb1", "+-", 0},
    {"\xe2\x88\x9e", "inf", 0},
};

char *scene_ascii(const char *utf8, char *out, size_t n)
{
    size_t k = 0;
    int run = 0; /* the kind of the run being written */
    if (!n) return out;
    for (const char *p = utf8; *p && k + 1 < n;) {
        size_t i = 0, ns = sizeof spell / sizeof spell[0];
        while (i < ns && strncmp(p, spell[i].u, strlen(spell[i].u)) != 0) i++;
        const char *add;
        char one[2] = {*p, 0};
        int kind = 0;
        if (i < ns) {
            add = spell[i].a;
            kind = spell[i].kind;
            p += strlen(spell[i].u);
            /* a middle dot between superscript digits is their decimal point: 2⁻⁰·⁵ is 2^-0.5 */
            if (run == 2 && strcmp(spell[i].u, "\xc2\xb7") == 0) {
                size_t j = 0;
                while (j < ns &&
                       (spell[j].kind != 2 || strncmp(p, spell[j].u, strlen(spell[j].u)) != 0))
                    j++;
                if (j < ns) kind = 2;
            }
        } else {
            add = one;
            p++;
        }
        if (kind && kind != run && k + 1 < n) out[k++] = kind == 1 ? '_' : '^';
        run = kind;
        for (; *add && k + 1 < n; add++) out[k++] = *add;
        if (i < ns && strcmp(spell[i].a, "sqrt") == 0) { /* sqrt(d): the argument's word */
            if (k + 1 < n) out[k++] = '(';
            while ((isalnum((unsigned char)*p) || *p == '_') && k + 1 < n) out[k++] = *p++;
            if (k + 1 < n) out[k++] = ')';
        }
    }
    out[k] = '\0';
    return out;
}

double scene_text_width(const scene_target *t, const char *str, double size)
{
    if (!str || !*str) return 0.0;
    if (t->measure) return t->measure(t->measure_ctx, str, size) * t->text_h;
    char spelt[1024];
    if (t->ascii) str = scene_ascii(str, spelt, sizeof spelt);
    size_t cps = 0;
    for (const unsigned char *p = (const unsigned char *)str; *p; p++)
        if ((*p & 0xc0) != 0x80) cps++; /* continuation bytes do not start a code point */
    return (double)cps * t->char_w * size;
}

double scene_text_width_bold(const scene_target *t, const char *str, double size)
{
    if (!str || !*str) return 0.0;
    if (t->measure_bold) return t->measure_bold(t->measure_ctx, str, size) * t->text_h;
    return scene_text_width(t, str, size);
}

void scene_mark_main(scene *s, double x, double y, double w, double h, const char *name)
{
    s->main_x = x;
    s->main_y = y;
    s->main_w = w > 0 ? w : 0;
    s->main_h = h > 0 ? h : 0;
    snprintf(s->main_name, sizeof s->main_name, "%s", name ? name : "main");
}

void scene_name_panel(scene *s, const char *name)
{
    if (!name || scene_has_panel(s, name) || s->n_panels >= SCENE_MAX_PANELS) return;
    snprintf(s->panels[s->n_panels++], sizeof s->panels[0], "%s", name);
}

int scene_has_panel(const scene *s, const char *name)
{
    for (int i = 0; i < s->n_panels; i++)
        if (strcmp(s->panels[i], name) == 0) return 1;
    return 0;
}

void scene_note_cut(scene *s, const char *str)
{
    if (!s->n_cut) snprintf(s->cut_example, sizeof s->cut_example, "%s", str ? str : "");
    s->n_cut++;
}

void scene_note_squeeze(scene *s)
{
    s->n_squeezed++;
}

const char *scene_fit_text(scene *s, const scene_target *t, const char *str, double size,
                           double maxw, int data, char *buf, size_t n)
{
    if (!str) return "";
    if (scene_text_width(t, str, size) <= maxw + 1e-9) return str;
    if (s) {
        if (data)
            s->n_cut_data++;
        else
            scene_note_cut(s, str);
    }
    static const char ell[] = "\xe2\x80\xa6";
    if (n < sizeof ell) return "";
    size_t len = strlen(str);
    if (len + sizeof ell > n) len = n - sizeof ell;
    while (len > 0) {
        /* Step back over a whole UTF-8 sequence. */
        do len--;
        while (len > 0 && ((unsigned char)str[len] & 0xc0) == 0x80);
        memcpy(buf, str, len);
        memcpy(buf + len, ell, sizeof ell);
        if (scene_text_width(t, buf, size) <= maxw + 1e-9) return buf;
    }
    return maxw >= scene_text_width(t, ell, size) ? ell : "";
}

scene_item *scene_rect(scene *s, double x, double y, double w, double h, uint32_t color,
                       unsigned flags)
{
    scene_item *it = push(s, SCENE_RECT, color, 0.0, flags);
    if (!it) return NULL;
    it->u.rect.x = x;
    it->u.rect.y = y;
    it->u.rect.w = w;
    it->u.rect.h = h;
    return it;
}

scene_item *scene_line(scene *s, double x0, double y0, double x1, double y1, uint32_t color,
                       double width, unsigned flags)
{
    scene_item *it = push(s, SCENE_LINE, color, width, flags);
    if (!it) return NULL;
    it->u.line.x0 = x0;
    it->u.line.y0 = y0;
    it->u.line.x1 = x1;
    it->u.line.y1 = y1;
    return it;
}

scene_item *scene_arrow(scene *s, double x0, double y0, double x1, double y1, uint32_t color,
                        double width)
{
    scene_item *it = push(s, SCENE_ARROW, color, width, 0);
    if (!it) return NULL;
    it->u.line.x0 = x0;
    it->u.line.y0 = y0;
    it->u.line.x1 = x1;
    it->u.line.y1 = y1;
    return it;
}

scene_item *scene_circle(scene *s, double cx, double cy, double r, uint32_t color, double width,
                         unsigned flags)
{
    scene_item *it = push(s, SCENE_CIRCLE, color, width, flags);
    if (!it) return NULL;
    it->u.circle.cx = cx;
    it->u.circle.cy = cy;
    it->u.circle.r = r;
    return it;
}

scene_item *scene_text(scene *s, double x, double y, const char *str, double size, unsigned anchor,
                       uint32_t color, unsigned flags)
{
    /* Copy the string before pushing so a failed copy leaves no half-made item behind. Text
     * can carry what a user typed (a prompt, a file name): control characters are shown as
     * \xNN and bytes that are not UTF-8 as U+FFFD, so no backend gets bytes it cannot draw. */
    size_t n = strlen(str);
    char *copy;
    if (text_is_clean(str, n, 0)) {
        copy = scene_strdup(s, str);
    } else {
        size_t need = text_clean(NULL, 0, str, n, 0) + 1;
        copy = scene_alloc(s, need);
        if (copy) text_clean(copy, need, str, n, 0);
    }
    if (!copy) return NULL;
    scene_item *it = push(s, SCENE_TEXT, color, 0.0, flags);
    if (!it) return NULL;
    it->u.text.x = x;
    it->u.text.y = y;
    it->u.text.size = size;
    it->u.text.anchor = anchor;
    it->u.text.str = copy;
    return it;
}

scene_item *scene_textf(scene *s, double x, double y, double size, unsigned anchor, uint32_t color,
                        unsigned flags, const char *fmt, ...)
{
    char small[256];
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        va_end(ap2);
        return NULL;
    }
    const char *str = small;
    if ((size_t)n >= sizeof small) {
        char *big = scene_alloc(s, (size_t)n + 1);
        if (!big) {
            va_end(ap2);
            return NULL;
        }
        vsnprintf(big, (size_t)n + 1, fmt, ap2);
        str = big;
    }
    va_end(ap2);
    return scene_text(s, x, y, str, size, anchor, color, flags);
}

scene_item *scene_polyline(scene *s, const double *xy, size_t n, double cx, double cy, double cw,
                           double ch, uint32_t color, double width, unsigned flags)
{
    if (n > SIZE_MAX / (2 * sizeof(double))) return NULL;
    double *copy = scene_alloc(s, n * 2 * sizeof(double));
    if (!copy) return NULL;
    if (n) memcpy(copy, xy, n * 2 * sizeof(double));
    scene_item *it = push(s, SCENE_POLYLINE, color, width, flags);
    if (!it) return NULL;
    it->u.poly.n = n;
    it->u.poly.xy = copy;
    it->u.poly.cx = cx;
    it->u.poly.cy = cy;
    it->u.poly.cw = cw;
    it->u.poly.ch = ch;
    it->u.poly.xmono = scene_xy_monotone(copy, n);
    return it;
}

int scene_xy_monotone(const double *xy, size_t n)
{
    for (size_t k = 1; k < n; k++)
        if (!(xy[2 * k] >= xy[2 * k - 2])) return 0;
    return 1;
}

scene_item *scene_heatmap(scene *s, double x, double y, double w, double h, const float *data,
                          size_t rows, size_t cols, size_t stride, double vmin, double vmax,
                          const struct cmap *map, uint32_t mask_color)
{
    scene_lock_range(s, SCENE_RANGE_HEAT, &vmin, &vmax);
    if (cols && rows > SIZE_MAX / cols) return NULL;
    size_t cells = rows * cols;
    if (cells > SIZE_MAX / sizeof(float)) return NULL;
    float *copy = scene_alloc(s, cells * sizeof(float));
    if (!copy) return NULL;
    if (stride == cols) {
        if (cells) memcpy(copy, data, cells * sizeof(float));
    } else {
        for (size_t r = 0; r < rows; r++)
            memcpy(copy + r * cols, data + r * stride, cols * sizeof(float));
    }
    scene_item *it = push(s, SCENE_HEATMAP, 0, 0.0, 0);
    if (!it) return NULL;
    it->u.heat.x = x;
    it->u.heat.y = y;
    it->u.heat.w = w;
    it->u.heat.h = h;
    it->u.heat.rows = rows;
    it->u.heat.cols = cols;
    it->u.heat.data = copy;
    it->u.heat.vmin = vmin;
    it->u.heat.vmax = vmax;
    it->u.heat.map = map;
    it->u.heat.mask_color = mask_color & 0xffffffu;
    return it;
}

/* --- dump ------------------------------------------------------------------------------ */

typedef struct dumpbuf {
    char *p;
    size_t n, cap;
    int failed;
} dumpbuf;

__attribute__((format(printf, 2, 3))) static void dprint(dumpbuf *d, const char *fmt, ...)
{
    if (d->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = d->cap - d->n;
        int k = vsnprintf(d->p ? d->p + d->n : NULL, d->p ? room : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            d->failed = 1;
            return;
        }
        if (d->p && (size_t)k < room) {
            d->n += (size_t)k;
            return;
        }
        size_t need = d->n + (size_t)k + 1;
        size_t cap = d->cap ? d->cap : 1024;
        while (cap < need) {
            if (cap > SIZE_MAX / 2) {
                d->failed = 1;
                return;
            }
            cap *= 2;
        }
        char *p = realloc(d->p, cap);
        if (!p) {
            d->failed = 1;
            return;
        }
        d->p = p;
        d->cap = cap;
    }
}

/* Fixed 2 decimals, and never "-0.00", so dumps do not flicker with rounding noise. */
static const char *num(char *buf, double v)
{
    if (isnan(v)) return "nan";
    if (isinf(v)) return v > 0 ? "inf" : "-inf";
    snprintf(buf, 32, "%.2f", v);
    if (strcmp(buf, "-0.00") == 0) strcpy(buf, "0.00");
    return buf;
}

static void dump_flags(dumpbuf *d, unsigned f)
{
    if (f & SCENE_FILL) dprint(d, " fill");
    if (f & SCENE_RULE) dprint(d, " rule");
    if (f & SCENE_DASHED) dprint(d, " dashed");
    if (f & SCENE_DOTTED) dprint(d, " dotted");
    if (f & SCENE_BOLD) dprint(d, " bold");
    if (f & SCENE_NEAREST) dprint(d, " nearest");
}

/* FNV-1a over the values quantised to 1e-4, so the checksum survives last-bit differences
 * between compilers while still catching any visible change. */
static uint64_t heat_checksum(const float *v, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        int64_t q;
        if (isnan(v[i]))
            q = INT64_MIN;
        else if (isinf(v[i]))
            q = v[i] > 0 ? INT64_MAX : INT64_MIN + 1;
        else
            q = (int64_t)llround((double)v[i] * 1e4);
        uint64_t u = (uint64_t)q;
        for (int b = 0; b < 8; b++) {
            h ^= (u >> (8 * b)) & 0xffu;
            h *= 1099511628211ull;
        }
    }
    return h;
}

/* The points quantised to 0.01 units (the dump's precision). */
static uint64_t poly_checksum(const double *xy, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < 2 * n; i++) {
        int64_t q = isfinite(xy[i]) ? (int64_t)llround(xy[i] * 100.0) : INT64_MIN;
        uint64_t u = (uint64_t)q;
        for (int b = 0; b < 8; b++) {
            h ^= (u >> (8 * b)) & 0xffu;
            h *= 1099511628211ull;
        }
    }
    return h;
}

char *scene_dump(const scene *s)
{
    dumpbuf d = {0};
    char a[32], b[32], c[32], e[32], f[32], g[32];
    dprint(&d, "scene %s x %s bg #%06x items %zu\n", num(a, s->width), num(b, s->height),
           (unsigned)s->background, s->n);
    for (size_t i = 0; i < s->n; i++) {
        const scene_item *it = &s->items[i];
        switch (it->kind) {
        case SCENE_RECT:
            dprint(&d, "rect %s %s %s %s #%06x", num(a, it->u.rect.x), num(b, it->u.rect.y),
                   num(c, it->u.rect.w), num(e, it->u.rect.h), (unsigned)it->color);
            break;
        case SCENE_LINE:
        case SCENE_ARROW:
            dprint(&d, "%s %s %s %s %s #%06x w %s", it->kind == SCENE_LINE ? "line" : "arrow",
                   num(a, it->u.line.x0), num(b, it->u.line.y0), num(c, it->u.line.x1),
                   num(e, it->u.line.y1), (unsigned)it->color, num(f, it->width));
            break;
        case SCENE_CIRCLE:
            dprint(&d, "circle %s %s r %s #%06x w %s", num(a, it->u.circle.cx),
                   num(b, it->u.circle.cy), num(c, it->u.circle.r), (unsigned)it->color,
                   num(e, it->width));
            break;
        case SCENE_TEXT: {
            static const char *const h[] = {"left", "center", "right", "?"};
            static const char *const v[] = {"top", "middle", "bottom", "?"};
            unsigned an = it->u.text.anchor;
            dprint(&d, "text %s %s size %s %s-%s%s #%06x \"%s\"", num(a, it->u.text.x),
                   num(b, it->u.text.y), num(c, it->u.text.size), v[(an >> 2) & 3], h[an & 3],
                   (an & SCENE_VERTICAL) ? " vertical" : "", (unsigned)it->color,
                   it->u.text.str ? it->u.text.str : "");
            break;
        }
        case SCENE_POLYLINE: {
            const double *xy = it->u.poly.xy;
            size_t n = it->u.poly.n;
            dprint(&d, "polyline n %zu #%06x w %s clip %s %s %s %s", n, (unsigned)it->color,
                   num(a, it->width), num(b, it->u.poly.cx), num(c, it->u.poly.cy),
                   num(e, it->u.poly.cw), num(f, it->u.poly.ch));
            if (n) {
                dprint(&d, " first %s %s", num(a, xy[0]), num(b, xy[1]));
                dprint(&d, " last %s %s", num(a, xy[2 * n - 2]), num(b, xy[2 * n - 1]));
                dprint(&d, " sum %016llx", (unsigned long long)poly_checksum(xy, n));
            }
            break;
        }
        case SCENE_HEATMAP: {
            const struct cmap *m = it->u.heat.map;
            dprint(&d,
                   "heatmap %s %s %s %s shape %zu x %zu range %s %s map %s mask #%06x sum %016llx",
                   num(a, it->u.heat.x), num(b, it->u.heat.y), num(c, it->u.heat.w),
                   num(e, it->u.heat.h), it->u.heat.rows, it->u.heat.cols, num(f, it->u.heat.vmin),
                   num(g, it->u.heat.vmax), m ? m->name : "none", (unsigned)it->u.heat.mask_color,
                   (unsigned long long)heat_checksum(it->u.heat.data,
                                                     it->u.heat.rows * it->u.heat.cols));
            break;
        }
        default:
            dprint(&d, "unknown %d", (int)it->kind);
            break;
        }
        dump_flags(&d, it->flags);
        dprint(&d, "\n");
    }
    if (d.failed) {
        free(d.p);
        return NULL;
    }
    return d.p;
}

/* ---- scene_hash --------------------------------------------------------------------------- */

/* A 64-bit hash of every bit a backend draws from. Four independent lanes over the bulk data
 * (heatmap cells, curve points), so a 1280x800 heatmap hashes in a fraction of a millisecond;
 * each word goes through a multiply and a rotation (the mixing of xxHash64's rounds). */
typedef struct scene_hasher {
    uint64_t lane[4];
    uint64_t len;
} scene_hasher;

static const uint64_t hash_k1 = 0x9e3779b185ebca87ull, hash_k2 = 0xc2b2ae3d27d4eb4full;

static uint64_t hash_round(uint64_t acc, uint64_t v)
{
    acc += v * hash_k2;
    acc = (acc << 31) | (acc >> 33);
    return acc * hash_k1;
}

static void hash_word(scene_hasher *h, uint64_t v)
{
    h->lane[h->len & 3] = hash_round(h->lane[h->len & 3], v);
    h->len++;
}

static void hash_double(scene_hasher *h, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    hash_word(h, u);
}

/* n bytes: whole words four at a time through the four lanes, then the tail and the length
 * (so "ab" + "c" and "a" + "bc" differ). */
static void hash_bytes(scene_hasher *h, const void *data, size_t n)
{
    const unsigned char *p = data;
    size_t i = 0;
    uint64_t w[4];
    for (; i + 32 <= n; i += 32) {
        memcpy(w, p + i, sizeof w);
        for (int k = 0; k < 4; k++) h->lane[k] = hash_round(h->lane[k], w[k]);
    }
    for (; i + 8 <= n; i += 8) {
        memcpy(w, p + i, 8);
        hash_word(h, w[0]);
    }
    uint64_t tail = 0;
    if (i < n) memcpy(&tail, p + i, n - i);
    hash_word(h, tail);
    hash_word(h, (uint64_t)n);
}

uint64_t scene_hash(const scene *s)
{
    scene_hasher h = {{1, 2, 3, 4}, 0};
    hash_double(&h, s->width);
    hash_double(&h, s->height);
    hash_double(&h, s->text_h);
    hash_word(&h, s->background);
    hash_word(&h, s->n);
    for (size_t i = 0; i < s->n; i++) {
        const scene_item *it = &s->items[i];
        hash_word(&h, (uint64_t)it->kind << 32 | it->color);
        hash_word(&h, it->flags);
        hash_double(&h, it->width);
        switch (it->kind) {
        case SCENE_RECT:
            hash_bytes(&h, &it->u.rect, sizeof it->u.rect);
            break;
        case SCENE_LINE:
        case SCENE_ARROW:
            hash_bytes(&h, &it->u.line, sizeof it->u.line);
            break;
        case SCENE_CIRCLE:
            hash_bytes(&h, &it->u.circle, sizeof it->u.circle);
            break;
        case SCENE_POLYLINE:
            hash_double(&h, it->u.poly.cx);
            hash_double(&h, it->u.poly.cy);
            hash_double(&h, it->u.poly.cw);
            hash_double(&h, it->u.poly.ch);
            if (it->u.poly.xy) hash_bytes(&h, it->u.poly.xy, it->u.poly.n * 2 * sizeof(double));
            hash_word(&h, it->u.poly.n);
            break;
        case SCENE_TEXT:
            hash_double(&h, it->u.text.x);
            hash_double(&h, it->u.text.y);
            hash_double(&h, it->u.text.size);
            hash_word(&h, it->u.text.anchor);
            if (it->u.text.str) hash_bytes(&h, it->u.text.str, strlen(it->u.text.str));
            break;
        case SCENE_HEATMAP:
            hash_double(&h, it->u.heat.x);
            hash_double(&h, it->u.heat.y);
            hash_double(&h, it->u.heat.w);
            hash_double(&h, it->u.heat.h);
            hash_word(&h, it->u.heat.rows);
            hash_word(&h, it->u.heat.cols);
            hash_double(&h, it->u.heat.vmin);
            hash_double(&h, it->u.heat.vmax);
            /* the colours themselves, not the table's address: 768 bytes */
            if (it->u.heat.map && it->u.heat.map->rgb)
                hash_bytes(&h, it->u.heat.map->rgb, 256 * 3);
            else
                hash_word(&h, 0);
            hash_word(&h, it->u.heat.mask_color);
            if (it->u.heat.data)
                hash_bytes(&h, it->u.heat.data, it->u.heat.rows * it->u.heat.cols * sizeof(float));
            break;
        }
    }
    /* the lanes folded together (xxHash64's avalanche at the end) */
    uint64_t v = h.len;
    for (int k = 0; k < 4; k++) v = hash_round(v ^ h.lane[k], (uint64_t)k + 1);
    v ^= v >> 33;
    v *= hash_k2;
    v ^= v >> 29;
    return v;
}
