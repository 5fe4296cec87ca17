/* figure.c: figure anatomy (themes, ticks, axes, colorbar, legend, curves) on any scene target.
 *
 * Cell targets (t->cells) are laid out differently from pixel targets: every text is placed
 * LEFT|TOP at a whole cell (x integer, y even), rules run through cell centres, the y label sits
 * on the row above the plot instead of running vertically, and there are no tick marks (the
 * labels sit next to the axis). Pixel targets get tick marks, a rotated y label and areas
 * snapped to whole pixels so heatmaps stay crisp.
 */
#include "figure.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"

/* --- themes ---------------------------------------------------------------------------- */

/* Okabe & Ito (2008), "Color Universal Design": distinguishable with any common colour-vision
 * deficiency. Ordered so the first colours have the most contrast against the background. Their
 * black (white on dark) is replaced by a brown: the ink colour belongs to reference lines
 * (fig_vmark), so no series may share it. */
static const fig_theme theme_light = {
    .name = "light",
    .bg = 0xffffff,
    .fg = 0x1a1a1a,
    .muted = 0x5f5f5f,
    .grid = 0xe3e3e3,
    .accent = 0xd55e00,
    .mask = 0xbdbdbd,
    .series = {0x0072b2, 0xd55e00, 0x009e73, 0xcc79a7, 0xe69f00, 0x56b4e9, 0x8c564b, 0xb59a00},
};

static const fig_theme theme_dark = {
    .name = "dark",
    .bg = 0x121212,
    .fg = 0xe8e8e8,
    .muted = 0xa0a0a0,
    .grid = 0x303030,
    .accent = 0xf0e442,
    .mask = 0x4a4a4a,
    .series = {0x56b4e9, 0xe69f00, 0x009e73, 0xcc79a7, 0xf0e442, 0xd55e00, 0xc49c94, 0x0072b2},
};

const fig_theme *fig_theme_get(int dark)
{
    return dark ? &theme_dark : &theme_light;
}

/* --- mapping --------------------------------------------------------------------------- */

/* Fraction of v along [lo, hi] (log10 when lg); NaN when v cannot be placed. */
static double frac(double v, double lo, double hi, int lg)
{
    if (lg) {
        if (!(v > 0) || !(lo > 0) || !(hi > 0)) return NAN;
        v = log10(v);
        lo = log10(lo);
        hi = log10(hi);
    }
    if (hi == lo) return 0.5;
    return (v - lo) / (hi - lo);
}

static double unfrac(double f, double lo, double hi, int lg)
{
    if (lg && lo > 0 && hi > 0) return pow(10.0, log10(lo) + f * (log10(hi) - log10(lo)));
    return lo + f * (hi - lo);
}

double fig_x(const fig_axes *a, double v)
{
    return a->area.x + frac(v, a->x0, a->x1, a->xlog) * a->area.w;
}

double fig_y(const fig_axes *a, double v)
{
    return a->area.y + (1.0 - frac(v, a->y0, a->y1, a->ylog)) * a->area.h;
}

double fig_x_inv(const fig_axes *a, double fx)
{
    if (a->area.w == 0) return a->x0;
    return unfrac((fx - a->area.x) / a->area.w, a->x0, a->x1, a->xlog);
}

double fig_y_inv(const fig_axes *a, double fy)
{
    if (a->area.h == 0) return a->y0;
    return unfrac(1.0 - (fy - a->area.y) / a->area.h, a->y0, a->y1, a->ylog);
}

/* --- ticks ----------------------------------------------------------------------------- */

/* The nice step (1, 2, 5 x 10^k) giving at most max_ticks ticks in [lo, hi]; 0 if none. */
static double nice_step(double lo, double hi, int max_ticks)
{
    double range = hi - lo;
    if (!(range > 0) || !isfinite(range) || max_ticks < 2) return 0.0;
    static const double mult[] = {1.0, 2.0, 5.0};
    int k = (int)floor(log10(range / max_ticks)) - 1;
    for (int iter = 0; iter < 12; iter++, k++) {
        for (int m = 0; m < 3; m++) {
            double step = mult[m] * pow(10.0, k);
            double eps = step * 1e-9;
            double count = floor((hi + eps) / step) - ceil((lo - eps) / step) + 1.0;
            if (count <= max_ticks) return step;
        }
    }
    return 0.0;
}

static int ticks_with_step(double lo, double hi, int max_ticks, double *out, double *step_out)
{
    if (max_ticks < 1 || !isfinite(lo) || !isfinite(hi)) return 0;
    if (lo > hi) {
        double t = lo;
        lo = hi;
        hi = t;
    }
    double step = nice_step(lo, hi, max_ticks);
    if (step == 0.0) {
        /* One tick: a degenerate range, or room for a single label only. */
        double v = lo == hi ? lo : 0.5 * (lo + hi);
        if (lo != hi) {
            /* Prefer the roundest number inside the range. */
            double p = pow(10.0, ceil(log10(hi - lo)));
            for (int i = 0; i < 4 && p > 0; i++, p /= 10.0) {
                double c = ceil(lo / p) * p;
                if (c <= hi) {
                    v = c;
                    break;
                }
            }
        }
        out[0] = v == 0.0 ? 0.0 : v;
        if (step_out) *step_out = fabs(v) > 0 ? fabs(v) : 1.0;
        return 1;
    }
    double eps = step * 1e-9;
    double first = ceil((lo - eps) / step), last = floor((hi + eps) / step);
    if (last - first < 1.0 && max_ticks >= 3) {
        /* 1-2-5 left a single tick (e.g. [-48.1, -41.1] with 3 ticks: step 2 gives 4, step 5
         * gives 1); a 2.5 step then gives the two or three ticks that fit. */
        double alt = step / 2.0;
        double f2 = ceil((lo - eps) / alt), l2 = floor((hi + eps) / alt);
        if (l2 - f2 >= 1.0 && l2 - f2 + 1.0 <= max_ticks) {
            step = alt;
            first = f2;
            last = l2;
        }
    }
    int n = 0;
    for (double i = first; i <= last && n < max_ticks; i += 1.0) {
        double v = i * step; /* a multiple, not a running sum, so no drift */
        if (fabs(v) < eps) v = 0.0;
        out[n++] = v;
    }
    if (step_out) *step_out = step;
    return n;
}

int fig_ticks(double lo, double hi, int max_ticks, double *out)
{
    return ticks_with_step(lo, hi, max_ticks, out, NULL);
}

/* e in superscript digits with a superscript minus (U+207B): 10 then this reads 10⁻⁴. */
static void superscript(int e, char *buf, size_t n)
{
    static const char *const digit[] = {"\u2070", "\u00b9", "\u00b2", "\u00b3", "\u2074",
                                        "\u2075", "\u2076", "\u2077", "\u2078", "\u2079"};
    char dec[16];
    snprintf(dec, sizeof dec, "%d", e < 0 ? -e : e);
    size_t k = 0;
    if (n) buf[0] = '\0';
    if (e < 0) k += (size_t)snprintf(buf + k, n - k, "\u207b");
    for (const char *d = dec; *d && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, "%s", digit[*d - '0']);
}

/* "-" at the start of buf becomes U+2212, the minus sign (a hyphen is shorter and sits lower). */
static void minus_sign(char *buf, size_t n)
{
    size_t len = strlen(buf);
    if (buf[0] != '-' || len + 3 > n) return;
    memmove(buf + 3, buf + 1, len); /* with the terminator */
    memcpy(buf, "\xe2\x88\x92", 3);
}

/* Turn "1.50e+06" into "1.5×10⁶" and "1e-05" into "10⁻⁵", as a person writes them. */
static void compact_sci(char *buf, size_t n)
{
    char *e = strchr(buf, 'e');
    if (!e) return;
    int ex = atoi(e + 1);
    *e = 0;
    if (strchr(buf, '.')) {
        char *end = buf + strlen(buf) - 1;
        while (end > buf && *end == '0') *end-- = 0;
        if (*end == '.') *end = 0;
    }
    char sup[48];
    superscript(ex, sup, sizeof sup);
    int neg = buf[0] == '-';
    const char *mant = buf + neg;
    char out[96];
    if (strcmp(mant, "1") == 0)
        snprintf(out, sizeof out, "%s10%s", neg ? "-" : "", sup);
    else
        snprintf(out, sizeof out, "%s\u00d710%s", buf, sup);
    snprintf(buf, n, "%s", out);
}

/* digits of an integer-valued magnitude (< 1e15) with a comma every three: 1,000,000 */
static void with_commas(double a, char *buf, size_t n)
{
    char d[32];
    snprintf(d, sizeof d, "%.0f", a);
    size_t len = strlen(d), k = 0;
    for (size_t i = 0; i < len && k + 2 < n; i++) {
        if (i > 0 && (len - i) % 3 == 0) buf[k++] = ',';
        buf[k++] = d[i];
    }
    if (n) buf[k < n ? k : n - 1] = '\0';
}

void fig_num(double v, int sig, char *buf, size_t n)
{
    if (n == 0) return;
    if (sig < 1) sig = 3;
    if (sig > 15) sig = 15;
    if (!isfinite(v)) {
        snprintf(buf, n, "%s", isnan(v) ? "nan" : v > 0 ? "\u221e" : "\u2212\u221e");
        return;
    }
    double a = fabs(v);
    char body[96];
    if (a == 0.0) {
        snprintf(buf, n, "0");
        return;
    }
    int e = (int)floor(log10(a));
    /* round to sig digits first: 9.9996 at 3 digits is 10.0, one more decade */
    double r = round(a / pow(10.0, e - sig + 1)) * pow(10.0, e - sig + 1);
    if (r > 0) e = (int)floor(log10(r) + 1e-12);
    if (r >= 1e6 && fabs(log10(r) - round(log10(r))) < 1e-12) {
        char sup[48];
        superscript((int)round(log10(r)), sup, sizeof sup);
        snprintf(body, sizeof body, "10%s", sup);
    } else if (r >= 1e4 && r < 1e9) {
        with_commas(round(a), body, sizeof body); /* all its digits: 11,030 or 500,000 */
    } else if (r >= 1e9 || r < 1e-3) {
        snprintf(body, sizeof body, "%.*e", sig - 1, a);
        compact_sci(body, sizeof body);
    } else {
        int dec = sig - 1 - e;
        if (dec < 0) dec = 0;
        snprintf(body, sizeof body, "%.*f", dec, a);
        if (strchr(body, '.')) {
            char *end = body + strlen(body) - 1;
            while (end > body && *end == '0') *end-- = '\0';
            if (*end == '.') *end = '\0';
        }
    }
    snprintf(buf, n, "%s%s", v < 0 && strcmp(body, "0") != 0 ? "\u2212" : "", body);
}

void fig_fixed(double v, int decimals, int plus, char *buf, size_t n)
{
    if (n == 0) return;
    if (!isfinite(v)) {
        fig_num(v, 3, buf, n);
        return;
    }
    if (decimals < 0) decimals = 0;
    if (decimals > 15) decimals = 15;
    char body[400];
    snprintf(body, sizeof body, "%.*f", decimals, fabs(v));
    /* a value that rounds to zero is written without a sign: "0.00", not "-0.00" */
    int zero = strspn(body, "0.") == strlen(body);
    const char *sign = zero ? "" : v < 0 ? "\u2212" : plus ? "+" : "";
    snprintf(buf, n, "%s%s", sign, body);
}

void fig_tick_label(double v, double step, char *buf, size_t n)
{
    if (n == 0) return;
    if (!isfinite(v)) {
        snprintf(buf, n, "%s", isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
        return;
    }
    step = fabs(step);
    if (!(step > 0) || !isfinite(step)) step = fabs(v) > 0 ? fabs(v) : 1.0;
    if (fabs(v) < step * 1e-9) v = 0.0;
    if (v == 0.0) {
        snprintf(buf, n, "0");
        return;
    }
    if (step >= 1e5 || step < 1e-4) {
        /* Scientific with just enough mantissa digits to tell neighbouring ticks apart. */
        int ev = (int)floor(log10(fabs(v))), es = (int)floor(log10(step) + 1e-9);
        int p = ev - es;
        /* 2.5e5 steps need one more digit than their exponent says. */
        double ms = step / pow(10.0, es);
        if (fabs(ms - round(ms)) > 1e-6) p++;
        if (p < 0) p = 0;
        if (p > 15) p = 15;
        snprintf(buf, n, "%.*e", p, v);
        compact_sci(buf, n);
        minus_sign(buf, n);
        return;
    }
    int d = 0;
    for (; d < 12; d++) {
        double sc = step * pow(10.0, d);
        if (fabs(sc - round(sc)) <= 1e-6 * sc) break;
    }
    snprintf(buf, n, "%.*f", d, v);
    /* Rounding can still print "-0.0" for a tiny negative; drop the sign then. */
    if (buf[0] == '-') {
        int nonzero = 0;
        for (const char *p = buf + 1; *p; p++)
            if (*p >= '1' && *p <= '9') nonzero = 1;
        if (!nonzero) memmove(buf, buf + 1, strlen(buf));
    }
    minus_sign(buf, n);
}

/* Log axis ticks: decades, thinned to fit; with less than two decades, 1-2-5 within them. */
static int log_ticks(double lo, double hi, int max_ticks, double *out)
{
    if (!(lo > 0) || !(hi > 0) || max_ticks < 1) return 0;
    if (lo > hi) {
        double t = lo;
        lo = hi;
        hi = t;
    }
    int e0 = (int)ceil(log10(lo) - 1e-9), e1 = (int)floor(log10(hi) + 1e-9);
    int decades = e1 - e0 + 1;
    int n = 0;
    if (decades >= 2) {
        int every = (decades + max_ticks - 1) / max_ticks;
        for (int e = e0; e <= e1 && n < max_ticks; e++)
            if ((e - e0) % every == 0) out[n++] = pow(10.0, e);
        return n;
    }
    static const double mult[] = {1.0, 2.0, 5.0};
    for (int e = e0 - 1; e <= e1 && n < max_ticks; e++)
        for (int m = 0; m < 3 && n < max_ticks; m++) {
            double v = mult[m] * pow(10.0, e);
            if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out[n++] = v;
        }
    if (n >= 2) return n;
    return ticks_with_step(lo, hi, max_ticks, out, NULL);
}

/* Log axes, as matplotlib writes them: an axis of decades has every tick a power of ten, 10⁻⁴
 * .. 10⁶ (sci_from 0); an axis within a decade or two has plain numbers (0.2, 0.5, 1, 2), up to
 * powers of ten from 10⁴ (10⁻⁴) on, which are 2×10⁵. One axis has one format. */
static void log_label(double v, int sci_from, char *buf, size_t n)
{
    int e = (int)floor(log10(v) + 1e-9);
    if (e >= sci_from || e <= -sci_from) {
        snprintf(buf, n, "%.0e", v);
        compact_sci(buf, n);
    } else {
        fig_tick_label(v, pow(10.0, e), buf, n);
    }
}

enum { MAX_TICKS = 24 };

typedef struct tickset {
    int n;
    double v[MAX_TICKS];
    char label[MAX_TICKS][32];
    double w[MAX_TICKS]; /* label widths */
    double widest;
} tickset;

static void make_ticks(tickset *ts, const scene_target *t, double lo, double hi, int lg,
                       int max_ticks, double size)
{
    if (max_ticks > MAX_TICKS) max_ticks = MAX_TICKS;
    if (max_ticks < 1) max_ticks = 1;
    double step = 0.0;
    if (lg)
        ts->n = log_ticks(lo, hi, max_ticks, ts->v);
    else
        ts->n = ticks_with_step(lo, hi, max_ticks, ts->v, &step);
    /* A range from -0.5 to n - 0.5 is a row of cells centred on whole numbers (layers, heads,
     * rotary pairs): ticks between two cells (0.5, 1.5) would name no cell, so only the whole
     * numbers stay. */
    if (!lg && step < 1 && fabs(lo - floor(lo) - 0.5) < 1e-9 && fabs(hi - floor(hi) - 0.5) < 1e-9) {
        int k = 0;
        for (int i = 0; i < ts->n; i++)
            if (fabs(ts->v[i] - round(ts->v[i])) < 1e-9) ts->v[k++] = ts->v[i];
        ts->n = k;
        step = 1;
    }
    ts->widest = 0.0;
    int sci_from = 4, decades = lg && ts->n >= 2;
    for (int i = 0; lg && i < ts->n; i++) {
        double e = log10(ts->v[i]);
        if (fabs(floor(e + 1e-9)) >= 4) sci_from = 0;
        if (fabs(e - round(e)) > 1e-9) decades = 0;
    }
    if (decades) sci_from = 0;
    for (int i = 0; i < ts->n; i++) {
        if (lg)
            log_label(ts->v[i], sci_from, ts->label[i], sizeof ts->label[i]);
        else
            fig_tick_label(ts->v[i], step, ts->label[i], sizeof ts->label[i]);
        ts->w[i] = scene_text_width(t, ts->label[i], size);
        if (ts->w[i] > ts->widest) ts->widest = ts->w[i];
    }
}

/* --- text helpers ---------------------------------------------------------------------- */

/* Width of str at size, in the weight it is drawn in. */
static double text_w(const scene_target *t, const char *str, double size, unsigned flags)
{
    return (flags & SCENE_BOLD) ? scene_text_width_bold(t, str, size)
                                : scene_text_width(t, str, size);
}

/* The smallest size a label may step down to on a pixel target: 60% of normal, and never a
 * font under 11 px (a line of text_h is 1.3 font sizes), whatever the zoom. */
static double min_label_size(const scene_target *t)
{
    if (t->cells || !(t->text_h > 0)) return 1.0;
    return fmin(1.0, fmax(0.6, 7.5 * 1.3 / t->text_h));
}

/* The size at which a label fits maxw: *size itself, else the largest of 95%, 90%, ... of it
 * down to min_label_size (pixel targets only; a terminal has one size). When even that does not
 * fit, the label is shortened at the smallest size with an ellipsis, which the scene records: a
 * layout that has to do that has a bug a test will report. Returns str or buf. */
static const char *fit_label(scene *s, const scene_target *t, const char *str, double *size,
                             double maxw, char *buf, size_t n)
{
    if (!str) return "";
    if (scene_text_width(t, str, *size) <= maxw + 1e-9) return str;
    if (!t->cells) {
        double full = *size, lo = min_label_size(t);
        for (double f = 0.95; f * full >= lo - 1e-9; f -= 0.05) {
            *size = full * f;
            if (scene_text_width(t, str, *size) <= maxw + 1e-9) return str;
        }
    }
    return scene_fit_text(s, t, str, *size, maxw, 0, buf, n);
}

/* WRAP_TALL: a tall figure (a column figure 2.2x3.5in, a phone) has height to spare and width
 * to none, so its subtitle may take that many lines rather than be cut */
enum { WRAP_MAX = 3, WRAP_TALL = 5, WRAP_LEN = 256 };

/* Break str at spaces into at most max_lines lines no wider than w at size (in the weight of
 * flags), copied into out. Returns the count, or 0 when it takes more lines or a word alone is
 * wider than w. Runs of spaces at a break are dropped. */
static int wrap_text(const scene_target *t, const char *str, double size, unsigned flags, double w,
                     char out[][WRAP_LEN], int max_lines)
{
    int n = 0;
    const char *p = str;
    while (*p == ' ') p++;
    while (*p) {
        if (n == max_lines) return 0;
        /* the longest prefix of whole words that fits */
        size_t best = 0, len = 0;
        for (;;) {
            size_t end = len;
            while (p[end] && p[end] != ' ') end++;
            if (end >= WRAP_LEN) break;
            char tmp[WRAP_LEN];
            memcpy(tmp, p, end);
            tmp[end] = '\0';
            if (text_w(t, tmp, size, flags) > w + 1e-9) break;
            best = end;
            if (!p[end]) break;
            len = end;
            while (p[len] == ' ') len++;
        }
        if (best == 0) return 0;
        memcpy(out[n], p, best);
        out[n][best] = '\0';
        n++;
        p += best;
        while (*p == ' ') p++;
    }
    return n;
}

/* An axis label on a pixel target in avail: one line, stepping down to 80%, else two lines
 * at 90% down to 75%, else one and then two lines down to min_label_size, else one line
 * shortened (recorded). Returns the line count; *size gets the size. */
static int axis_label_lines(scene *s, const scene_target *t, const char *str, double avail,
                            char out[][WRAP_LEN], double *size)
{
    double lo = min_label_size(t);
    for (double f = 1.0; f >= 0.8 - 1e-9; f -= 0.05)
        if (wrap_text(t, str, f, 0, avail, out, 1) == 1) {
            *size = f;
            return 1;
        }
    for (double f = 0.9; f >= 0.75 - 1e-9; f -= 0.05) {
        int n = wrap_text(t, str, f, 0, avail, out, 2);
        if (n > 0) {
            *size = f;
            return n;
        }
    }
    for (int lines = 1; lines <= 2; lines++)
        for (double f = 0.75; f >= lo - 1e-9; f -= 0.05) {
            int n = wrap_text(t, str, f, 0, avail, out, lines);
            if (n > 0) {
                *size = f;
                return n;
            }
        }
    *size = lo;
    char buf[WRAP_LEN];
    snprintf(out[0], WRAP_LEN, "%s", scene_fit_text(s, t, str, lo, avail, 0, buf, sizeof buf));
    return 1;
}

/* Text at (x, y) with an anchor; on a cell target the anchor is resolved here to a whole cell
 * (LEFT|TOP at integer x and even y), so the terminal never has to guess a rounding. */
static void put_text(scene *s, const scene_target *t, double x, double y, const char *str,
                     double size, unsigned anchor, uint32_t color, unsigned flags)
{
    if (!str || !*str) return;
    s->text_h = t->text_h; /* so the backend draws text at the size this layout measured */
    if (!t->cells) {
        scene_text(s, x, y, str, size, anchor, color, flags);
        return;
    }
    double w = scene_text_width(t, str, 1.0), h = t->text_h;
    unsigned ha = anchor & 3, va = (anchor >> 2) & 3;
    double left = ha == SCENE_CENTER ? x - floor(w / 2) : ha == SCENE_RIGHT ? x - w : x;
    double top = va == 1 ? y - h / 2 : va == 2 ? y - h : y;
    left = floor(left + 1e-9);
    top = 2.0 * floor(top / 2.0 + 1e-9);
    scene_text(s, left, top, str, 1.0, SCENE_LEFT | SCENE_TOP, color, flags);
}

/* --- layout constants ------------------------------------------------------------------ */

typedef struct metrics {
    double T;     /* line height */
    double tsize; /* tick label size */
    double tickl; /* tick mark length */
    double pad;   /* small gap */
    double lw;    /* frame line width */
} metrics;

static metrics get_metrics(const scene_target *t)
{
    metrics m;
    m.T = t->text_h > 0 ? t->text_h : 1.0;
    if (t->cells) {
        m.tsize = 1.0;
        m.tickl = 0.0;
        m.pad = 1.0;
        m.lw = 0.0;
    } else {
        m.tsize = 0.85;
        m.tickl = round(0.3 * m.T);
        m.pad = round(0.3 * m.T);
        m.lw = t->hairline > 0 ? t->hairline : 1.0;
    }
    return m;
}

/* --- title ----------------------------------------------------------------------------- */

/* How one heading (title or subtitle) fits width w: on one line at its size if it fits, else
 * stepping the size down (pixel targets, to 80%), then on two and three lines. Returns the line
 * count (0: none of these fit) with the lines and *sz. max_lines bounds the count, min_frac the
 * size steps (a frame that must keep another layout's height goes further down). */
static int heading_fit(const scene_target *t, const char *str, double size, unsigned flags,
                       double w, int max_lines, double min_frac, char lines[][WRAP_LEN], double *sz)
{
    for (int nl = 1; nl <= max_lines; nl++)
        for (double f = 1.0; f >= min_frac - 1e-9; f -= t->cells ? 1.0 : 0.05) {
            *sz = size * f;
            int got = wrap_text(t, str, *sz, flags, w, lines, nl);
            if (got > 0) return got;
            if (t->cells) break;
        }
    return 0;
}

/* Draw a heading centred in r from y, its lines pitch apart; returns the y below it. Only a
 * heading that fits no layout of heading_fit is shortened (and recorded). */
static double heading(scene *s, const scene_target *t, fig_rect r, double y, const char *str,
                      double size, uint32_t color, unsigned flags, int max_lines, double min_frac,
                      double pitch_size)
{
    metrics m = get_metrics(t);
    char lines[WRAP_TALL][WRAP_LEN];
    double sz;
    int got = heading_fit(t, str, size, flags, r.w, max_lines, min_frac, lines, &sz);
    if (got == 0) {
        char buf[512];
        sz = size * min_frac;
        const char *cut =
            scene_fit_text(s, t, str, sz, flags & SCENE_BOLD ? r.w / 1.2 : r.w, 0, buf, sizeof buf);
        snprintf(lines[0], WRAP_LEN, "%s", cut);
        got = 1;
    }
    double pitch = m.T * (pitch_size > 0 ? pitch_size : sz);
    for (int i = 0; i < got; i++) {
        /* a smaller font in a taller pitch sits in the middle of its line */
        double dy = t->cells ? 0.0 : 0.5 * (pitch - m.T * sz);
        put_text(s, t, r.x + r.w / 2, y + dy, lines[i], sz, SCENE_CENTER | SCENE_TOP, color, flags);
        y += pitch;
    }
    return y;
}

fig_rect fig_title(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                   const char *title, const char *subtitle)
{
    metrics m = get_metrics(t);
    double tsize = t->cells ? 1.0 : 1.25, ssize = t->cells ? 1.0 : 0.9;
    double y = r.y + (t->cells ? 0.0 : m.pad);
    const scene_author *au = s->author;
    if (au && au->title) title = au->title;
    if (au && au->subtitle) subtitle = au->subtitle;
    /* A short canvas (the window under a projector zoom: fewer than 18 lines of text) lets
     * the title block step further down before it takes more lines, so the plot keeps the
     * height: the headings are read once, the plot is what the room looks at. */
    int short_canvas = !t->cells && t->text_h > 0 && r.h < 18 * t->text_h;
    double min_frac = short_canvas ? 0.6 : 0.8;
    /* there a title that needs two lines takes them at the stepped-down size, not the full */
    if (title && *title)
        y = heading(s, t, r, y, title, short_canvas ? tsize * 0.8 : tsize, th->fg, SCENE_BOLD,
                    WRAP_MAX, short_canvas ? 0.75 : 0.8, 0.0);
    if (au && au->note && *au->note) {
        /* An animation frame: the swept value leads the subtitle, which keeps the lines and
         * the height it has without it (stepping the font down further if it must), so every
         * frame's plot sits where the still figure's does. */
        char sub[768], lines[WRAP_MAX][WRAP_LEN], rest[512];
        snprintf(rest, sizeof rest, "%s", subtitle ? subtitle : "");
        size_t kl = au->note_key ? strlen(au->note_key) : 0;
        for (char *w = rest; kl && *w;) { /* the subtitle's word for the swept value */
            if ((w == rest || w[-1] == ' ') && strncmp(w, au->note_key, kl) == 0) {
                char *e = w + strcspn(w, " ");
                e += strspn(e, " ");
                memmove(w, e, strlen(e) + 1);
                break;
            }
            w++;
        }
        subtitle = rest;
        snprintf(sub, sizeof sub, "%s%s%s", au->note, *subtitle ? "   " : "", subtitle);
        double plain_sz = ssize;
        int plain = subtitle && *subtitle
                        ? heading_fit(t, subtitle, ssize, 0, r.w, WRAP_MAX, 0.8, lines, &plain_sz)
                        : 0;
        if (plain > 0 && heading_fit(t, sub, ssize, 0, r.w, plain, 0.6, lines, &(double){0}) > 0)
            y = heading(s, t, r, y, sub, ssize, th->muted, 0, plain, 0.6, plain_sz);
        else
            y = heading(s, t, r, y, sub, ssize, th->muted, 0, WRAP_MAX, 0.8, 0.0);
    } else if (subtitle && *subtitle) {
        /* the parameters stay readable: a subtitle takes another line rather than step below
         * 0.8 of the smallest text a figure has (11 px at 1.3 lines: 8 pt at a paper column,
         * where it stepped to 0.54, under the tick labels); a zoomed window's large text still
         * steps down as far as before */
        char lines[WRAP_TALL][WRAP_LEN];
        int sub_max = WRAP_MAX;
        double sz, floor_frac = fmin(1.0, fmax(min_frac, 0.8 * 11 * 1.3 / (t->text_h * ssize)));
        if (t->cells ||
            heading_fit(t, subtitle, ssize, 0, r.w, sub_max, floor_frac, lines, &sz) == 0)
            floor_frac = min_frac; /* three lines at 0.8 do not hold it: smaller, not cut */
        if (!t->cells && r.h > 1.3 * r.w &&
            heading_fit(t, subtitle, ssize, 0, r.w, sub_max, floor_frac, lines, &sz) == 0)
            sub_max = WRAP_TALL; /* nor smaller: a tall figure's spare lines, not a cut */
        y = heading(s, t, r, y, subtitle, ssize, th->muted, 0, sub_max, floor_frac, 0.0);
    }
    if (!t->cells && y > r.y) y += m.pad;
    if (t->cells) y = 2.0 * ceil(y / 2.0);
    double used = y - r.y;
    if (used > r.h) used = r.h;
    r.y += used;
    r.h -= used;
    return r;
}

/* --- axes ------------------------------------------------------------------------------ */

static void fix_range(double *lo, double *hi, int lg)
{
    if (!isfinite(*lo) || !isfinite(*hi)) {
        *lo = 0.0;
        *hi = 1.0;
    }
    if (*lo == *hi) {
        double d = lg ? 0.0 : (*lo == 0.0 ? 0.5 : fabs(*lo) * 0.1);
        if (lg) {
            *lo /= 2.0;
            *hi *= 2.0;
        } else {
            *lo -= d;
            *hi += d;
        }
    }
}

static int max_ticks_for(double len, double per)
{
    if (!(per > 0)) return 2;
    int n = (int)floor(len / per) + 1;
    if (n < 2) n = 2;
    if (n > 10) n = 10;
    return n;
}

fig_axes fig_axes_draw(scene *s, const scene_target *t, const fig_theme *th, fig_rect outer,
                       double x0, double x1, double y0, double y1, const char *xlabel,
                       const char *ylabel, unsigned flags)
{
    if (!(flags & FIG_Y_DOWN)) {
        scene_lock_range(s, SCENE_RANGE_X, &x0, &x1);
        scene_lock_range(s, SCENE_RANGE_Y, &y0, &y1);
    }
    metrics m = get_metrics(t);
    int cells = t->cells;
    int xlog = (flags & FIG_XLOG) && x0 > 0 && x1 > 0;
    int ylog = (flags & FIG_YLOG) && y0 > 0 && y1 > 0;
    int ydown = (flags & FIG_Y_DOWN) != 0;
    fix_range(&x0, &x1, xlog);
    fix_range(&y0, &y1, ylog);
    if (xlabel && !*xlabel) xlabel = NULL;
    if (ylabel && !*ylabel) ylabel = NULL;
    int xt = !(flags & FIG_NO_XTICKS), yt = !(flags & FIG_NO_YTICKS);
    double T = m.T, ts = m.tsize;

    /* Pixel targets: the labels on one or two lines, at the size that fits. */
    char xl_lines[2][WRAP_LEN], yl_lines[2][WRAP_LEN];
    int nxl = 0, nyl = 0;
    double xl_size = 1.0, yl_size = 1.0;
    /* Vertical room first: it does not depend on the y tick labels. */
    double top, bottom;
    if (cells) {
        top = ylabel ? T : 0.0;
        bottom = T + (xt ? T : 0.0) + (xlabel ? T : 0.0); /* axis row, tick labels, label */
    } else {
        top = xt || yt ? ceil(0.5 * T * ts) : m.pad;
        if (xlabel) nxl = axis_label_lines(s, t, xlabel, outer.w, xl_lines, &xl_size);
        bottom = m.lw + (xt ? m.tickl + 0.25 * m.pad + T * ts : 0.0) +
                 (xlabel ? 0.25 * m.pad + T * xl_size * nxl : 0.0) + 0.5 * m.pad;
        if (ylabel) nyl = axis_label_lines(s, t, ylabel, outer.h, yl_lines, &yl_size);
    }
    double area_h = outer.h - top - bottom;
    if (area_h < 1.0) area_h = 1.0;
    if (cells) area_h = 2.0 * floor(area_h / 2.0);

    tickset yts = {0};
    double ylo = fmin(y0, y1), yhi = fmax(y0, y1);
    if (yt) {
        /* A label per 2.5 lines on pixels; on cells at least one empty row between labels. */
        double per = cells ? 2.0 * T : 2.5 * T;
        make_ticks(&yts, t, ylo, yhi, ylog, max_ticks_for(area_h, per), ts);
    }
    double left;
    if (cells) {
        left = (yt && yts.n ? ceil(yts.widest) + 1.0 : 0.0) + 1.0; /* labels, gap, axis column */
    } else {
        left = 0.5 * m.pad + (ylabel ? T * yl_size * nyl + 0.25 * m.pad : 0.0) +
               (yt ? ceil(yts.widest) + 0.5 * m.pad + m.tickl : 0.0) + m.lw;
    }

    /* x ticks: as many as fit with a gap of two average characters between labels. */
    tickset xts = {0};
    double right = cells ? 1.0 : m.pad;
    double area_w = outer.w - left - right;
    if (xt) {
        double gap = cells ? 2.0 : 2.0 * t->char_w * ts;
        int maxn = max_ticks_for(area_w, 4.0 * (cells ? 1.0 : t->char_w * ts) + gap);
        for (; maxn >= 2; maxn--) {
            make_ticks(&xts, t, x0 < x1 ? x0 : x1, x0 < x1 ? x1 : x0, xlog, maxn, ts);
            if (xts.n < 2 || (xts.n - 1) * (xts.widest + gap) <= area_w) break;
        }
        /* The last label is centred on its tick: keep half of it inside outer. */
        if (xts.n) {
            double half = ceil(0.5 * xts.w[xts.n - 1]);
            if (half > right) right = half;
        }
    }
    area_w = outer.w - left - right;
    if (area_w < 1.0) area_w = 1.0;

    fig_axes a;
    a.area.x = outer.x + left;
    a.area.y = outer.y + top;
    a.area.w = area_w;
    a.area.h = area_h;
    /* Whole units: crisp heatmaps on pixels, whole cells on the terminal. */
    a.area.x = ceil(a.area.x);
    a.area.y = cells ? 2.0 * ceil(a.area.y / 2.0) : ceil(a.area.y);
    a.area.w = floor(outer.x + left + area_w - a.area.x);
    a.area.h = cells ? 2.0 * floor((outer.y + top + area_h - a.area.y) / 2.0)
                     : floor(outer.y + top + area_h - a.area.y);
    if (a.area.w < 1.0) a.area.w = 1.0;
    if (a.area.h < 1.0) a.area.h = cells ? 2.0 : 1.0;
    a.x0 = x0;
    a.x1 = x1;
    /* y0 is "at the bottom" in fig_axes; for matrices the caller's y0 goes to the top. */
    a.y0 = ydown ? y1 : y0;
    a.y1 = ydown ? y0 : y1;
    a.xlog = xlog;
    a.ylog = ylog;
    a.col_w = cells ? 0.5 : 1.0; /* a braille dot; a pixel */

    double ax = a.area.x, ay = a.area.y, aw = a.area.w, ah = a.area.h;

    /* Grid under everything else (not on cells: it would fight the braille curves). */
    if ((flags & FIG_GRID) && !cells) {
        for (int i = 0; i < xts.n; i++) {
            double fx = round(fig_x(&a, xts.v[i])) + 0.5;
            if (fx > ax + 1 && fx < ax + aw - 1)
                scene_line(s, fx, ay, fx, ay + ah, th->grid, m.lw, SCENE_RULE);
        }
        for (int i = 0; i < yts.n; i++) {
            double fy = round(fig_y(&a, yts.v[i])) + 0.5;
            if (fy > ay + 1 && fy < ay + ah - 1)
                scene_line(s, ax, fy, ax + aw, fy, th->grid, m.lw, SCENE_RULE);
        }
    }

    if (cells) {
        /* An L of rules through the cell centres just outside the area. */
        double lx = ax - 0.5, by = ay + ah + 1.0;
        scene_line(s, lx, ay, lx, by, th->muted, 0.0, SCENE_RULE);
        scene_line(s, lx, by, ax + aw - 0.5, by, th->muted, 0.0, SCENE_RULE);
        double prev_row = -1e9;
        for (int i = 0; i < yts.n; i++) {
            double fy = fig_y(&a, yts.v[i]);
            double row = floor(fy / 2.0);
            double last_row = (ay + ah) / 2.0 - 1.0;
            if (row > last_row) row = last_row;
            if (row < ay / 2.0) row = ay / 2.0;
            if (row == prev_row) continue;
            prev_row = row;
            put_text(s, t, lx - 1.0, 2.0 * row, yts.label[i], 1.0, SCENE_RIGHT | SCENE_TOP, th->fg,
                     0);
        }
        double prev_end = -1e9, label_row = by + 1.0;
        for (int i = 0; i < xts.n; i++) {
            double col = floor(fig_x(&a, xts.v[i]));
            if (col >= ax + aw) col = ax + aw - 1.0;
            double w = xts.w[i];
            double start = col - floor(w / 2.0);
            if (start + w > outer.x + outer.w) start = outer.x + outer.w - w;
            if (start < outer.x) start = outer.x;
            if (start < prev_end + 1.0) continue;
            prev_end = start + w;
            put_text(s, t, start, label_row, xts.label[i], 1.0, SCENE_LEFT | SCENE_TOP, th->fg, 0);
        }
        if (xlabel) {
            double row = label_row + (xt ? T : 0.0);
            char buf[256];
            double sz = 1.0;
            const char *str = fit_label(s, t, xlabel, &sz, outer.w, buf, sizeof buf);
            /* centred under the area, moved left or right to stay inside outer */
            double w = scene_text_width(t, str, 1.0);
            double lx0 = floor(ax + aw / 2.0 - floor(w / 2.0));
            if (lx0 + w > outer.x + outer.w) lx0 = outer.x + outer.w - w;
            if (lx0 < outer.x) lx0 = outer.x;
            put_text(s, t, lx0, row, str, 1.0, SCENE_LEFT | SCENE_TOP, th->fg, 0);
        }
        if (ylabel) {
            char buf[256];
            double sz = 1.0;
            const char *str = fit_label(s, t, ylabel, &sz, outer.w, buf, sizeof buf);
            put_text(s, t, outer.x, ay - T, str, 1.0, SCENE_LEFT | SCENE_TOP, th->fg, 0);
        }
        return a;
    }

    /* Pixels: a frame just outside the area, so a heatmap drawn into it never covers it. */
    double hw = 0.5 * m.lw;
    double fl = ax - hw, fr = ax + aw + hw, ft = ay - hw, fb = ay + ah + hw;
    scene_line(s, fl, ft - hw, fl, fb + hw, th->fg, m.lw, SCENE_RULE);
    scene_line(s, fr, ft - hw, fr, fb + hw, th->fg, m.lw, SCENE_RULE);
    scene_line(s, fl, ft, fr, ft, th->fg, m.lw, SCENE_RULE);
    scene_line(s, fl, fb, fr, fb, th->fg, m.lw, SCENE_RULE);

    for (int i = 0; i < yts.n; i++) {
        double fy = round(fig_y(&a, yts.v[i])) + 0.5;
        scene_line(s, fl - hw - m.tickl, fy, fl - hw, fy, th->fg, m.lw, SCENE_RULE);
        put_text(s, t, fl - hw - m.tickl - 0.5 * m.pad, fy, yts.label[i], ts,
                 SCENE_RIGHT | SCENE_MIDDLE, th->fg, 0);
    }
    double prev_end = -1e9;
    /* The lowest y label reaches below the frame by half its line: an x label at the corner
     * must not run into it (a wide first label such as 10⁰ under a "0") */
    double x_top = fb + hw + m.tickl + 0.25 * m.pad;
    for (int i = 0; i < yts.n; i++) {
        double fy = round(fig_y(&a, yts.v[i])) + 0.5;
        if (fy + 0.5 * T * ts > x_top)
            prev_end =
                fmax(prev_end, fl - hw - m.tickl - 0.5 * m.pad - t->char_w * ts); /* its edge */
    }
    for (int i = 0; i < xts.n; i++) {
        double fx = round(fig_x(&a, xts.v[i])) + 0.5;
        double w = xts.w[i];
        double start = fx - 0.5 * w;
        scene_line(s, fx, fb + hw, fx, fb + hw + m.tickl, th->fg, m.lw, SCENE_RULE);
        if (start < prev_end + t->char_w * ts) continue; /* never let labels touch */
        prev_end = start + w;
        put_text(s, t, fx, fb + hw + m.tickl + 0.25 * m.pad, xts.label[i], ts,
                 SCENE_CENTER | SCENE_TOP, th->fg, 0);
    }
    if (xlabel) {
        double y = fb + hw + (xt ? m.tickl + 0.25 * m.pad + T * ts : 0.0) + 0.25 * m.pad;
        for (int i = 0; i < nxl; i++, y += T * xl_size) {
            double w = scene_text_width(t, xl_lines[i], xl_size), cx = ax + aw / 2.0;
            if (cx + w / 2.0 > outer.x + outer.w) cx = outer.x + outer.w - w / 2.0;
            if (cx - w / 2.0 < outer.x) cx = outer.x + w / 2.0;
            put_text(s, t, cx, y, xl_lines[i], xl_size, SCENE_CENTER | SCENE_TOP, th->fg, 0);
        }
    }
    if (ylabel) {
        /* centred on the area, moved to stay inside outer */
        for (int i = 0; i < nyl; i++) {
            double w = scene_text_width(t, yl_lines[i], yl_size), cy = ay + ah / 2.0;
            if (cy + w / 2.0 > outer.y + outer.h) cy = outer.y + outer.h - w / 2.0;
            if (cy - w / 2.0 < outer.y) cy = outer.y + w / 2.0;
            /* a quarter pad from the edge and half a pad from the tick labels: below its
             * baseline (toward the ticks) a subscript such as theta_k's k or a parenthesis
             * reaches the edge of the line box, while above the glyphs stop short of it */
            double x = outer.x + 0.25 * m.pad + (i + 0.5) * T * yl_size;
            put_text(s, t, x, cy, yl_lines[i], yl_size,
                     SCENE_CENTER | SCENE_MIDDLE | SCENE_VERTICAL, th->fg, 0);
        }
    }
    return a;
}

/* --- colorbar -------------------------------------------------------------------------- */

/* Widest label a colorbar usually shows ("-0.25", "1e-5"). */
static const char cbar_sample[] = "-0.000";

static double cbar_bar_w(const scene_target *t)
{
    return t->cells ? 2.0 : fmax(10.0, round(0.8 * t->text_h));
}

double fig_colorbar_width(const scene_target *t)
{
    metrics m = get_metrics(t);
    double labels = ceil(scene_text_width(t, cbar_sample, m.tsize));
    if (t->cells) return cbar_bar_w(t) + 1.0 + labels;
    return cbar_bar_w(t) + m.tickl + 0.5 * m.pad + labels + 0.5 * m.pad + m.T;
}

static int box_free(const scene *s, const scene_target *t, double bx, double by, double bw,
                    double bh);

/* A colorbar's gradient in the box (bx, by, bw, bh) as a one-column (vertical: top row = vmax)
 * or one-row (left = vmin) heatmap, one cell per unit of length so neither backend resamples
 * it, and its frame on pixel targets. 0 when no memory was left for it. */
static int cbar_gradient(scene *s, const scene_target *t, const fig_theme *th, double bx, double by,
                         double bw, double bh, double vmin, double vmax, const struct cmap *map,
                         int vertical)
{
    metrics m = get_metrics(t);
    size_t n = (size_t)fmax(2.0, fmin(1024.0, vertical ? bh : bw));
    float *g = scene_alloc(s, n * sizeof(float));
    if (!g) return 0;
    for (size_t i = 0; i < n; i++) {
        double f = ((double)i + 0.5) / (double)n;
        g[i] = vmin == vmax
                   ? (float)vmin
                   : (float)(vertical ? vmax + (vmin - vmax) * f : vmin + (vmax - vmin) * f);
    }
    scene_ranges *held = s->ranges; /* the gradient is not a data heatmap: already locked */
    s->ranges = NULL;
    scene_item *hm = vertical
                         ? scene_heatmap(s, bx, by, bw, bh, g, n, 1, 1, vmin, vmax, map, th->mask)
                         : scene_heatmap(s, bx, by, bw, bh, g, 1, n, n, vmin, vmax, map, th->mask);
    s->ranges = held;
    if (hm) hm->flags |= SCENE_NEAREST;
    if (!t->cells) {
        double hw = 0.5 * m.lw;
        scene_rect(s, bx - hw, by - hw, bw + m.lw, bh + m.lw, th->fg, 0);
    }
    return 1;
}

void fig_colorbar(scene *s, const scene_target *t, const fig_theme *th, fig_rect r, double vmin,
                  double vmax, const struct cmap *map, const char *label)
{
    scene_lock_range(s, SCENE_RANGE_CBAR, &vmin, &vmax);
    metrics m = get_metrics(t);
    if (!map) map = cmap_default_sequential();
    if (!isfinite(vmin) || !isfinite(vmax)) {
        vmin = 0.0;
        vmax = 1.0;
    }
    double bw = cbar_bar_w(t);
    double bx = floor(r.x);
    double by = t->cells ? 2.0 * ceil(r.y / 2.0) : round(r.y);
    double bh = t->cells ? 2.0 * floor((r.y + r.h - by) / 2.0) : round(r.y + r.h) - by;
    if (bh < 1.0) return;

    /* top row = vmax */
    if (!cbar_gradient(s, t, th, bx, by, bw, bh, vmin, vmax, map, 1)) return;

    tickset ts = {0};
    double per = t->cells ? 2.0 * m.T : 2.5 * m.T;
    if (vmin == vmax) {
        ts.n = 1;
        ts.v[0] = vmin;
        fig_tick_label(vmin, fabs(vmin) > 0 ? fabs(vmin) / 100.0 : 1.0, ts.label[0], 32);
    } else {
        make_ticks(&ts, t, fmin(vmin, vmax), fmax(vmin, vmax), 0, max_ticks_for(bh, per), m.tsize);
    }
    double lx = bx + bw + (t->cells ? 1.0 : m.tickl + 0.5 * m.pad);
    double prev_row = -1e9;
    double widest = 0.0;
    for (int i = 0; i < ts.n; i++) {
        double f = vmax == vmin ? 0.5 : (vmax - ts.v[i]) / (vmax - vmin);
        double fy = by + f * bh;
        if (t->cells) {
            double row = floor(fy / 2.0);
            if (row > (by + bh) / 2.0 - 1.0) row = (by + bh) / 2.0 - 1.0;
            if (row == prev_row) continue;
            prev_row = row;
            put_text(s, t, lx, 2.0 * row, ts.label[i], 1.0, SCENE_LEFT | SCENE_TOP, th->fg, 0);
        } else {
            fy = round(fy) + 0.5;
            scene_line(s, bx + bw, fy, bx + bw + m.tickl, fy, th->fg, m.lw, SCENE_RULE);
            put_text(s, t, lx, fy, ts.label[i], m.tsize, SCENE_LEFT | SCENE_MIDDLE, th->fg, 0);
        }
        double w = scene_text_width(t, ts.label[i], m.tsize);
        if (w > widest) widest = w;
    }
    if (!label || !*label) return;
    char buf[256];
    if (t->cells) {
        /* The terminal cannot rotate: the label goes on the row above the bar, right-aligned
         * to the bar's column so it may extend left over the plot's empty top row. */
        if (by < m.T) return;
        double sz = 1.0;
        const char *str = fit_label(s, t, label, &sz, r.x + r.w, buf, sizeof buf);
        /* above the bar, else under it when another text (a panel's title) has that row: a
         * blank cell either side of the label */
        double w = scene_text_width(t, str, 1.0), y = by - m.T;
        double x0 = floor(r.x + r.w - w + 0.5);
        if (!box_free(s, t, x0 - 1.0, y, w + 2.0, 2.0) && by + bh + 2.0 <= t->height &&
            box_free(s, t, x0 - 1.0, by + bh, w + 2.0, 2.0))
            y = by + bh;
        put_text(s, t, r.x + r.w, y, str, 1.0, SCENE_RIGHT | SCENE_TOP, th->fg, 0);
        return;
    }
    /* Right after the widest tick label, so short labels ("0", "1") do not leave a gap. */
    double x = lx + widest + 0.5 * m.pad + 0.5 * m.T;
    double sz = 1.0;
    const char *str = fit_label(s, t, label, &sz, bh, buf, sizeof buf);
    put_text(s, t, x, by + bh / 2.0, str, sz, SCENE_CENTER | SCENE_MIDDLE | SCENE_VERTICAL, th->fg,
             0);
}

double fig_colorbar_h_height(const scene_target *t)
{
    metrics m = get_metrics(t);
    if (t->cells) return 6.0; /* the bar, a row of ticks, a row for the name (2 units a row) */
    return cbar_bar_w(t) + m.tickl + 0.5 * m.pad + m.T * m.tsize + 0.5 * m.pad + m.T;
}

/* The horizontal colorbar of both kinds: its label under the bar (side 0; the terminal too), or
 * left of it (side 1: pixels only; the end tick labels centred on the bar's ends, for which the
 * caller leaves room). */
static void colorbar_h(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                       double vmin, double vmax, const struct cmap *map, const char *label,
                       int side)
{
    if (side && t->cells) return; /* a terminal keeps its colorbar beside the plot */
    scene_lock_range(s, SCENE_RANGE_CBAR, &vmin, &vmax);
    metrics m = get_metrics(t);
    if (!map) map = cmap_default_sequential();
    if (!isfinite(vmin) || !isfinite(vmax)) {
        vmin = 0.0;
        vmax = 1.0;
    }
    double bh = t->cells ? 2.0 : cbar_bar_w(t);
    double bx = t->cells ? floor(r.x) : round(r.x),
           by = t->cells ? 2.0 * ceil(r.y / 2.0) : round(r.y);
    double bw = t->cells ? floor(r.x + r.w) - bx : round(r.x + r.w) - bx;
    if (bw < 1.0) return;
    if (!cbar_gradient(s, t, th, bx, by, bw, bh, vmin, vmax, map, 0)) return; /* left = vmin */
    /* ticks under the bar, as many as their labels fit side by side */
    tickset ts = {0};
    double per = side ? scene_text_width(t, "-0.0", m.tsize) + 2.0 * m.pad
                      : 1.6 * scene_text_width(t, cbar_sample, m.tsize) + (t->cells ? 1.0 : m.pad);
    if (vmin == vmax) {
        ts.n = 1;
        ts.v[0] = vmin;
        fig_tick_label(vmin, fabs(vmin) > 0 ? fabs(vmin) / 100.0 : 1.0, ts.label[0], 32);
    } else {
        make_ticks(&ts, t, fmin(vmin, vmax), fmax(vmin, vmax), 0, max_ticks_for(bw, per), m.tsize);
    }
    double ly = by + bh + (t->cells ? 0.0 : m.tickl + 0.5 * m.pad);
    for (int i = 0; i < ts.n; i++) {
        double f = vmax == vmin ? 0.5 : (ts.v[i] - vmin) / (vmax - vmin);
        double fx = bx + f * bw, w = scene_text_width(t, ts.label[i], m.tsize);
        /* the end labels stay over the bar's extent (nothing past the figure's edge), unless
         * the caller left them room */
        double cx = side ? round(fx) + 0.5 : fmin(fmax(fx, bx + w / 2), bx + bw - w / 2);
        if (!t->cells) {
            fx = round(fx) + 0.5;
            scene_line(s, fx, by + bh, fx, by + bh + m.tickl, th->fg, m.lw, SCENE_RULE);
        }
        put_text(s, t, cx, ly, ts.label[i], m.tsize, SCENE_CENTER | SCENE_TOP, th->fg, 0);
    }
    if (!label || !*label) return;
    if (side) {
        /* left of the bar, level with it (under a matrix, where its y axis's labels leave that
         * room), so the colorbar takes one line of text less height */
        put_text(s, t, bx - m.tickl - m.pad, by + bh / 2.0, label, 1.0, SCENE_RIGHT | SCENE_MIDDLE,
                 th->fg, 0);
        return;
    }
    char buf[256];
    double sz = 1.0;
    const char *str = fit_label(s, t, label, &sz, bw, buf, sizeof buf);
    put_text(s, t, bx + bw / 2.0, ly + (t->cells ? 2.0 : m.T * m.tsize + 0.5 * m.pad), str, sz,
             SCENE_CENTER | SCENE_TOP, th->fg, 0);
}

void fig_colorbar_h(scene *s, const scene_target *t, const fig_theme *th, fig_rect r, double vmin,
                    double vmax, const struct cmap *map, const char *label)
{
    colorbar_h(s, t, th, r, vmin, vmax, map, label, 0);
}

double fig_colorbar_side_height(const scene_target *t)
{
    metrics m = get_metrics(t);
    return cbar_bar_w(t) + m.tickl + 0.5 * m.pad + m.T * m.tsize + 0.5 * m.pad;
}

void fig_colorbar_h_side(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                         double vmin, double vmax, const struct cmap *map, const char *label)
{
    colorbar_h(s, t, th, r, vmin, vmax, map, label, 1);
}

/* --- legend ---------------------------------------------------------------------------- */

/* Largest per-channel difference of two 0xRRGGBB colours. */
static int colour_distance(uint32_t a, uint32_t b)
{
    int d = 0;
    for (int sh = 0; sh < 24; sh += 8) {
        int k = abs((int)((a >> sh) & 0xff) - (int)((b >> sh) & 0xff));
        if (k > d) d = k;
    }
    return d;
}

/* 1 when the segment (x0, y0)-(x1, y1) passes through the box (Liang-Barsky clipping). */
static int seg_hits_box(double x0, double y0, double x1, double y1, double bx, double by, double bw,
                        double bh)
{
    double dx = x1 - x0, dy = y1 - y0, t0 = 0.0, t1 = 1.0;
    double p[4] = {-dx, dx, -dy, dy};
    double q[4] = {x0 - bx, bx + bw - x0, y0 - by, by + bh - y0};
    for (int i = 0; i < 4; i++) {
        if (p[i] == 0.0) {
            if (q[i] < 0.0) return 0;
            continue;
        }
        double r = q[i] / p[i];
        if (p[i] < 0.0) {
            if (r > t1) return 0;
            if (r > t0) t0 = r;
        } else {
            if (r < t0) return 0;
            if (r < t1) t1 = r;
        }
    }
    return 1;
}

/* How much of the data already in the scene a box would cover: the curve segments through it
 * plus (for reference lines and markers, which carry meaning too) the lines across it; counted
 * up to stop (box_free's searches ask only whether there is any: a legend search tries hundreds
 * of places, and counting every segment under each was most of xpos's frame at 175%). */
static size_t box_covers_upto(const scene *s, const scene_target *t, double bx, double by,
                              double bw, double bh, size_t stop)
{
    size_t first = 0;
    size_t hits = 0;
    for (size_t i = first; i < s->n && hits < stop; i++) {
        const scene_item *it = &s->items[i];
        if (it->kind == SCENE_POLYLINE) {
            const double *xy = it->u.poly.xy;
            size_t k = 1, n = it->u.poly.n;
            /* a curve along x (most are): only the segments over [bx, bx + bw] can meet the
             * box; the first is found by bisection (a label search tries hundreds of boxes
             * against curves of a point per pixel column: xpos at 175% spent its frame here) */
            if (it->u.poly.xmono && n > 16) {
                size_t lo = 1, hi = n;
                while (lo < hi) {
                    size_t mid = lo + (hi - lo) / 2;
                    if (xy[2 * mid] < bx)
                        lo = mid + 1;
                    else
                        hi = mid;
                }
                k = lo;
            }
            for (; k < n; k++) {
                if (it->u.poly.xmono && xy[2 * k - 2] > bx + bw) break; /* the rest is right */
                double y0 = xy[2 * k - 1], y1 = xy[2 * k + 1];
                /* wholly above or below the box (most segments beside a legend's place): no
                 * clipping to do (a break, NaN, is skipped after) */
                if ((y0 < by && y1 < by) || (y0 > by + bh && y1 > by + bh)) continue;
                if (isnan(y0) || isnan(y1)) continue;
                hits += (size_t)seg_hits_box(xy[2 * k - 2], y0, xy[2 * k], y1, bx, by, bw, bh);
                if (hits >= stop) break;
            }
        } else if (it->kind == SCENE_TEXT && !(it->u.text.anchor & SCENE_VERTICAL)) {
            /* another label: never write over it while any other place is free of labels
             * (a label covered is lost; curve segments covered are a part of a curve) */
            double w = scene_text_width(t, it->u.text.str, it->u.text.size);
            double h = t->text_h * it->u.text.size;
            unsigned ha = it->u.text.anchor & 3, va = (it->u.text.anchor >> 2) & 3;
            double x0 = it->u.text.x - (ha == SCENE_CENTER ? w / 2 : ha == SCENE_RIGHT ? w : 0);
            double y0 = it->u.text.y - (va == 1 ? h / 2 : va == 2 ? h : 0);
            if (x0 < bx + bw && x0 + w > bx && y0 < by + bh && y0 + h > by) hits += 1000;
        } else if (it->kind == SCENE_CIRCLE) {
            double cx = it->u.circle.cx, cy = it->u.circle.cy, r = it->u.circle.r;
            hits +=
                (size_t)(cx + r >= bx && cx - r <= bx + bw && cy + r >= by && cy - r <= by + bh);
        } else if (it->kind == SCENE_LINE && !(it->flags & SCENE_RULE)) {
            hits += 4 * (size_t)seg_hits_box(it->u.line.x0, it->u.line.y0, it->u.line.x1,
                                             it->u.line.y1, bx, by, bw, bh);
        }
    }
    return hits;
}

static size_t box_covers(const scene *s, const scene_target *t, double bx, double by, double bw,
                         double bh)
{
    return box_covers_upto(s, t, bx, by, bw, bh, (size_t)-1);
}

/* The box covers nothing. */
static int box_free(const scene *s, const scene_target *t, double bx, double by, double bw,
                    double bh)
{
    return box_covers_upto(s, t, bx, by, bw, bh, 1) == 0;
}

/* Where a bw x bh legend covers the least data in a's area: the preferred corner first, then
 * the other corners and the middles of the top and bottom edges. Returns what it covers. */
static size_t legend_place(const scene *s, const scene_target *t, const fig_axes *a, double bw,
                           double bh, double inset, int corner, double *bx, double *by)
{
    double left = a->area.x + inset, right = a->area.x + a->area.w - inset - bw;
    double mid = a->area.x + 0.5 * (a->area.w - bw);
    double top = a->area.y + (t->cells ? 0.0 : inset);
    double bottom = a->area.y + a->area.h - (t->cells ? 0.0 : inset) - bh;
    double cand[6][2] = {{right, top},   {right, bottom}, {left, top},
                         {left, bottom}, {mid, top},      {mid, bottom}};
    if (corner == 1) {
        cand[0][1] = bottom;
        cand[1][1] = top;
    }
    *bx = cand[0][0];
    *by = cand[0][1];
    size_t best = (size_t)-1;
    for (int k = 0; k < 6; k++) {
        double cx = cand[k][0], cy = cand[k][1];
        if (t->cells) {
            cx = floor(cx);
            cy = 2.0 * floor(cy / 2.0);
        } else {
            cx = round(cx);
            cy = round(cy);
        }
        size_t c = box_covers(s, t, cx, cy, bw, bh);
        if (c < best) {
            best = c;
            *bx = cx;
            *by = cy;
        }
        if (c == 0) break;
    }
    return best;
}

/* A legend's shape for cols columns of n names: rows, entries shown, text size and width,
 * column width and box size. */
typedef struct legend_shape {
    int cols, rows, shown;
    double size, line_h, textw, colw, bw, bh;
} legend_shape;

static legend_shape legend_shape_for(const scene_target *t, const fig_axes *a,
                                     const char *const *names, int n, int cols, double size,
                                     double avail, double sample, double gap, double padx,
                                     double pady, double inset, double colgap)
{
    metrics m = get_metrics(t);
    legend_shape l = {cols, 0, 0, size, t->cells ? m.T : m.T * size, 0, 0, 0, 0};
    l.rows = (n + cols - 1) / cols;
    if (l.rows * l.line_h > avail + 1e-9) l.rows = (int)floor(avail / l.line_h + 1e-9);
    if (l.rows < 0) l.rows = 0;
    l.shown = l.rows * cols < n ? l.rows * cols : n;
    double maxw =
        (a->area.w - 2.0 * inset - 2.0 * padx - (cols - 1) * colgap) / cols - sample - gap;
    for (int i = 0; i < l.shown; i++)
        l.textw = fmax(l.textw, scene_text_width(t, names[i] ? names[i] : "", l.size));
    /* Names are never cut while a smaller size fits them. */
    if (l.textw > maxw && maxw >= 1.0 && !t->cells) {
        double f = fmax(min_label_size(t) / l.size, maxw / l.textw);
        l.size *= f;
        l.textw *= f;
        l.line_h = m.T * l.size;
    }
    if (l.textw > maxw) l.textw = maxw;
    if (maxw < 1.0) l.shown = -l.shown - 1; /* no room: every name would be cut */
    l.colw = sample + gap + l.textw;
    l.bw = ceil(2.0 * padx + cols * l.colw + (cols - 1) * colgap);
    l.bh = ceil(2.0 * pady + l.rows * l.line_h);
    return l;
}

/* A spot all over a's area where a bw x bh box covers nothing (box_covers 0): the six
 * candidates of legend_place first, then a grid of 9 x 7 positions, nearest the edges first.
 * Returns 1 with the spot, 0 when there is none. */
static int legend_free_spot(const scene *s, const scene_target *t, const fig_axes *a, double bw,
                            double bh, double inset, int corner, double *bx, double *by)
{
    if (bw > a->area.w - 2.0 * inset + 1e-9 || bh > a->area.h + 1e-9) return 0;
    if (legend_place(s, t, a, bw, bh, inset, corner, bx, by) == 0) return 1;
    double x0 = a->area.x + inset, x1 = a->area.x + a->area.w - inset - bw;
    double y0 = a->area.y + (t->cells ? 0.0 : inset);
    double y1 = a->area.y + a->area.h - (t->cells ? 0.0 : inset) - bh;
    if (y1 < y0) y1 = y0;
    enum { NX = 9, NY = 7 };
    /* rings from the edges inwards: a legend in the middle of a plot is the last resort */
    for (int ring = 0; ring <= NY / 2; ring++)
        for (int j = 0; j < NY; j++)
            for (int i = 0; i < NX; i++) {
                int d = i < j ? i : j;
                if (NX - 1 - i < d) d = NX - 1 - i;
                if (NY - 1 - j < d) d = NY - 1 - j;
                if (d != ring) continue;
                double cx = x0 + (x1 - x0) * i / (NX - 1), cy = y0 + (y1 - y0) * j / (NY - 1);
                if (t->cells) {
                    cx = floor(cx);
                    cy = 2.0 * floor(cy / 2.0);
                } else {
                    cx = round(cx);
                    cy = round(cy);
                }
                if (box_free(s, t, cx, cy, bw, bh)) {
                    *bx = cx;
                    *by = cy;
                    return 1;
                }
            }
    return 0;
}

/* The legend's shapes from the given size down, each in one, two or three columns or one row
 * (only shapes that show every name whole at that size), until one has a free spot. */
static int legend_search(const scene *s, const scene_target *t, const fig_axes *a,
                         const char *const *names, int n, double size, double avail, double sample,
                         double gap, double padx, double pady, double inset, double colgap,
                         int corner, legend_shape *out, double *bx, double *by)
{
    double floor_size = min_label_size(t);
    for (double sz = size;; sz = fmax(floor_size, sz * 0.9)) {
        int col_options[4] = {1, 2, 3, n};
        for (int c = 0; c < 4; c++) {
            int cols = col_options[c];
            if (cols > n || (c == 3 && n <= 3)) continue;
            legend_shape l = legend_shape_for(t, a, names, n, cols, sz, avail, sample, gap, padx,
                                              pady, inset, colgap);
            if (l.shown != n || fabs(l.size - sz) > 1e-9) continue;
            double natural = 0;
            for (int i = 0; i < n; i++)
                natural = fmax(natural, scene_text_width(t, names[i] ? names[i] : "", sz));
            if (l.textw < natural - 1e-6) continue; /* a name would be cut */
            if (legend_free_spot(s, t, a, l.bw, l.bh, inset, corner, bx, by)) {
                *out = l;
                return 1;
            }
        }
        if (t->cells || sz <= floor_size + 1e-9) break;
    }
    return 0;
}

static void legend_draw(scene *s, const scene_target *t, const fig_theme *th,
                        const legend_shape *lp, double bx, double by, const char *const *names,
                        const uint32_t *colors, const unsigned *flags, int n);

/* The shape of a legend in a strip w wide at size 0.9: as many columns as fit (the fewest rows),
 * names whole. shown is 0 when not even one column fits. */
static legend_shape strip_shape(const scene_target *t, double w, const char *const *names, int n)
{
    metrics m = get_metrics(t);
    double sample = round(1.6 * m.T), gap = 0.5 * m.pad, padx = m.pad, pady = 0.5 * m.pad;
    fig_axes fake;
    memset(&fake, 0, sizeof fake);
    fake.area.w = w;
    double natural = 0;
    for (int i = 0; i < n; i++)
        natural = fmax(natural, scene_text_width(t, names[i] ? names[i] : "", 0.9));
    for (int cols = n; cols >= 1; cols--) {
        int rows = (n + cols - 1) / cols;
        if (cols > 1 && (rows - 1) * cols >= n) continue; /* same rows with fewer columns */
        legend_shape l = legend_shape_for(t, &fake, names, n, cols, 0.9, 1e9, sample, gap, padx,
                                          pady, 0.0, m.pad);
        if (l.shown == n && fabs(l.size - 0.9) < 1e-9 && l.textw >= natural - 1e-6 && l.bw <= w)
            return l;
    }
    legend_shape none = {0};
    return none;
}

/* The shape of a legend in one column at size 0.9 (stepping down to the smallest label size
 * until it is at most maxw wide), names whole; shown is 0 when none fits. */
static legend_shape column_shape(const scene_target *t, double maxw, const char *const *names,
                                 int n)
{
    metrics m = get_metrics(t);
    double sample = round(1.6 * m.T), gap = 0.5 * m.pad, padx = m.pad, pady = 0.5 * m.pad;
    fig_axes fake;
    memset(&fake, 0, sizeof fake);
    fake.area.w = 1e9;
    double floor_size = min_label_size(t);
    for (double sz = 0.9;; sz = fmax(floor_size, sz - 0.05)) {
        legend_shape l =
            legend_shape_for(t, &fake, names, n, 1, sz, 1e9, sample, gap, padx, pady, 0.0, m.pad);
        if (l.shown == n && l.bw <= maxw) return l;
        if (sz <= floor_size + 1e-9) break;
    }
    legend_shape none = {0};
    return none;
}

fig_legend_slot fig_legend_take(const scene_target *t, fig_rect *outer, const char *const *names,
                                int n)
{
    fig_legend_slot slot = {{outer->x, outer->y, outer->w, 0.0}, 0, 0};
    if (t->cells || n <= 0 || !names) return slot;
    metrics m = get_metrics(t);
    /* the plot's height once the axes took their tick labels and x label (about 3.3 lines),
     * and its width once the y axis took its ticks and label (about 4 lines) */
    double area_h = outer->h - 3.3 * m.T, area_w = outer->w - 4.0 * m.T;
    /* inside, unless it would take a third of the plot's height or, in a narrow plot (a paper
     * column), more than half its width */
    double widest = 0;
    for (int i = 0; i < n; i++)
        widest = fmax(widest, scene_text_width(t, names[i] ? names[i] : "", 0.9));
    double box_w = widest + round(1.6 * m.T) + 3.0 * m.pad;
    if (n * m.T * 0.9 <= 0.35 * area_h && box_w <= 0.5 * area_w) return slot;
    /* Above the plot in as many columns as fit, or beside it on the right in one column (as
     * matplotlib's legend outside the axes): whichever leaves the plot the larger area, each
     * side at least four lines (a paper column: a strip of six names in one column would leave
     * the plot a sliver, while beside it they take a third of the width). */
    legend_shape top = strip_shape(t, outer->w, names, n);
    legend_shape side = column_shape(t, 0.45 * outer->w, names, n);
    double top_h = top.shown == n ? area_h - (top.bh + m.pad) : -1;
    double side_w = side.shown == n && side.bh <= area_h ? area_w - (side.bw + m.pad) : -1;
    double min_side = 4.0 * m.T;
    double top_area = top_h >= min_side && area_w >= min_side ? top_h * area_w : -1;
    double side_area = side_w >= min_side && area_h >= min_side ? side_w * area_h : -1;
    /* a plot that small either way (300x200 px with a two-line subtitle): down to the three
     * lines a main panel keeps, rather than a legend over the curves */
    if (top_area < 0 && side_area < 0) {
        min_side = 3.0 * m.T;
        /* and beside the plot it may run down past the plot's bottom to the tick labels' line
         * (it sits right of them) */
        side_w =
            side.shown == n && side.bh <= outer->h - 1.5 * m.T ? area_w - (side.bw + m.pad) : -1;
        top_area = top_h >= min_side && area_w >= min_side ? top_h * area_w : -1;
        side_area = side_w >= min_side && area_h >= min_side ? side_w * area_h : -1;
    }
    if (top_area < 0 && side_area < 0) return slot;
    if (top_area >= side_area) {
        slot.cols = top.cols;
        slot.r.h = top.bh + m.pad;
        outer->y += slot.r.h;
        outer->h -= slot.r.h;
    } else {
        slot.cols = 1;
        slot.right = 1;
        slot.r.w = side.bw + m.pad;
        slot.r.x = outer->x + outer->w - side.bw;
        slot.r.h = outer->h;
        outer->w -= slot.r.w;
    }
    return slot;
}

fig_legend_slot fig_legend_take_top(const scene_target *t, fig_rect *outer,
                                    const char *const *names, int n)
{
    fig_legend_slot slot = {{outer->x, outer->y, outer->w, 0.0}, 0, 0};
    if (t->cells || n <= 0 || !names) return slot;
    legend_shape top = strip_shape(t, outer->w, names, n);
    if (top.shown != n) return slot; /* not in one strip: the caller's legend inside */
    slot.cols = top.cols;
    slot.r.h = top.bh + get_metrics(t).pad;
    outer->y += slot.r.h;
    outer->h -= slot.r.h;
    return slot;
}

int fig_legend_in_slot(scene *s, const scene_target *t, const fig_theme *th,
                       const fig_legend_slot *slot, const char *const *names,
                       const uint32_t *colors, const unsigned *flags, int n)
{
    if (!slot || slot->cols <= 0 || slot->r.h <= 0) return 0;
    if (slot->right) {
        /* beside the plot, level with the top of its area */
        metrics m = get_metrics(t);
        legend_shape l = column_shape(t, slot->r.w, names, n);
        if (l.shown != n) return 0;
        legend_draw(s, t, th, &l, round(slot->r.x + slot->r.w - l.bw),
                    round(slot->r.y + ceil(0.5 * m.T * m.tsize)), names, colors, flags, n);
        return 1;
    }
    legend_shape l = strip_shape(t, slot->r.w, names, n);
    if (l.shown != n) return 0;
    /* centred over the plot, at the top of the strip */
    legend_draw(s, t, th, &l, round(slot->r.x + 0.5 * (slot->r.w - l.bw)), round(slot->r.y), names,
                colors, flags, n);
    return 1;
}

int fig_legend_fits(const scene_target *t, const fig_axes *a, const char *const *names, int n)
{
    if (n <= 0 || !names) return 1;
    metrics m = get_metrics(t);
    double sample = t->cells ? 2.0 : round(1.6 * m.T);
    double gap = t->cells ? 1.0 : 0.5 * m.pad;
    double padx = t->cells ? 1.0 : m.pad, pady = t->cells ? 0.0 : 0.5 * m.pad;
    double inset = t->cells ? 1.0 : m.pad, colgap = t->cells ? 2.0 : m.pad;
    double avail = a->area.h - 2.0 * (t->cells ? 0.0 : inset) - 2.0 * pady;
    double size = min_label_size(t), natural = 0;
    for (int i = 0; i < n; i++)
        natural = fmax(natural, scene_text_width(t, names[i] ? names[i] : "", size));
    for (int cols = 1; cols <= 2 && cols <= n; cols++) {
        legend_shape l = legend_shape_for(t, a, names, n, cols, size, avail, sample, gap, padx,
                                          pady, inset, colgap);
        if (l.shown == n && l.textw >= natural - 1e-6) return 1;
    }
    return 0;
}

void fig_legend(scene *s, const scene_target *t, const fig_theme *th, const fig_axes *a,
                const char *const *names, const uint32_t *colors, int n, int corner)
{
    fig_legend_styled(s, t, th, a, names, colors, NULL, n, corner);
}

void fig_legend_styled(scene *s, const scene_target *t, const fig_theme *th, const fig_axes *a,
                       const char *const *names, const uint32_t *colors, const unsigned *flags,
                       int n, int corner)
{
    if (n <= 0 || !names) return;
    metrics m = get_metrics(t);
    double size = t->cells ? 1.0 : 0.9;
    double line_h = t->cells ? m.T : m.T * size;
    double sample = t->cells ? 2.0 : round(1.6 * m.T);
    double gap = t->cells ? 1.0 : 0.5 * m.pad;
    double padx = t->cells ? 1.0 : m.pad, pady = t->cells ? 0.0 : 0.5 * m.pad;
    double inset = t->cells ? 1.0 : m.pad;
    double colgap = t->cells ? 2.0 : m.pad;
    /* Every entry is shown: a legend taller than the area steps its size down (to the
     * smallest label size), then takes two columns; only an area too small even for that
     * leaves entries out, and the scene records it as cut text. */
    double avail = a->area.h - 2.0 * (t->cells ? 0.0 : inset) - 2.0 * pady;
    if (n * line_h > avail && !t->cells) {
        size = fmax(min_label_size(t), size * avail / (n * line_h));
        line_h = m.T * size;
    }
    int cols = n * line_h > avail + 1e-9 && n > 1 ? 2 : 1;
    legend_shape l =
        legend_shape_for(t, a, names, n, cols, size, avail, sample, gap, padx, pady, inset, colgap);
    double bx = 0.0, by = 0.0;
    size_t hits = l.shown > 0 ? legend_place(s, t, a, l.bw, l.bh, inset, corner, &bx, &by) : 0;
    /* one column covering more than half the area's height (a short plot under the projector
     * zoom): two columns instead when they fit and cover no more */
    if (cols == 1 && l.shown == n && hits > 0 && !t->cells && n >= 4 && n * line_h > 0.5 * avail) {
        legend_shape l2 = legend_shape_for(t, a, names, n, 2, size, avail, sample, gap, padx, pady,
                                           inset, colgap);
        double bx2, by2;
        if (l2.shown == n && l2.size >= l.size - 1e-9 && l2.bw <= a->area.w * 0.8) {
            size_t hits2 = legend_place(s, t, a, l2.bw, l2.bh, inset, corner, &bx2, &by2);
            if (hits2 <= hits) {
                l = l2;
                bx = bx2;
                by = by2;
            }
        }
    }
    /* Still over data (a short plot under the projector zoom, curves in every corner): look
     * for a spot that covers nothing at all, all over the area, in one, two, three columns or
     * one row, stepping the size down to the smallest label size. The largest size that has
     * such a spot wins; only when none has one does the legend stay where it covers least. */
    if (hits > 0 && l.shown == n) {
        legend_shape best_l;
        double best_x, best_y;
        if (legend_search(s, t, a, names, n, size, avail, sample, gap, padx, pady, inset, colgap,
                          corner, &best_l, &best_x, &best_y)) {
            l = best_l;
            bx = best_x;
            by = best_y;
            hits = 0;
        }
    }
    s->legend_covers += hits;
    legend_draw(s, t, th, &l, bx, by, names, colors, flags, n);
}

/* The legend of shape l at (bx, by): its box, then each entry's sample line and name. */
static void legend_draw(scene *s, const scene_target *t, const fig_theme *th,
                        const legend_shape *lp, double bx, double by, const char *const *names,
                        const uint32_t *colors, const unsigned *flags, int n)
{
    metrics m = get_metrics(t);
    double sample = t->cells ? 2.0 : round(1.6 * m.T);
    double gap = t->cells ? 1.0 : 0.5 * m.pad;
    double padx = t->cells ? 1.0 : m.pad, pady = t->cells ? 0.0 : 0.5 * m.pad;
    double colgap = t->cells ? 2.0 : m.pad;
    legend_shape l = *lp;
    if (l.shown < 0) { /* no width for any name */
        for (int i = 0; i < n; i++) scene_note_cut(s, names[i] ? names[i] : "");
        return;
    }
    for (int i = l.shown; i < n; i++) scene_note_cut(s, names[i] ? names[i] : "");
    if (l.shown <= 0) return;
    double size, line_h;
    int shown = l.shown, rows = l.rows;
    double bw = l.bw, bh = l.bh, colw = l.colw, textw = l.textw;
    size = l.size;
    line_h = l.line_h;
    scene_rect(s, bx, by, bw, bh, th->bg, SCENE_FILL);
    if (!t->cells) scene_rect(s, bx + 0.5, by + 0.5, bw - 1.0, bh - 1.0, th->muted, 0);
    for (int i = 0; i < shown; i++) {
        /* down the first column, then the second */
        double ty = by + pady + (i % rows) * line_h;
        uint32_t c = colors ? colors[i] : th->series[i % 8];
        double sx = bx + padx + (i / rows) * (colw + colgap);
        unsigned dash = flags ? flags[i] & (SCENE_DASHED | SCENE_DOTTED) : 0;
        if (t->cells) {
            /* Through the centres of `sample` cells (a rule covers both end cells). */
            scene_line(s, sx + 0.5, ty + 1.0, sx + sample - 0.5, ty + 1.0, c, 0.0,
                       SCENE_RULE | dash);
        } else {
            double cy = round(ty + 0.5 * line_h);
            /* A series drawn in (nearly) the background colour still needs a visible sample. */
            if (colour_distance(c, th->bg) < 48)
                scene_line(s, sx - 1.0, cy, sx + sample + 1.0, cy, th->muted, 2.0 * m.lw + 2.0, 0);
            /* dots as wide as a line are specks: a dotted sample is drawn thicker */
            scene_line(s, sx, cy, sx + sample, cy, c, (dash & SCENE_DOTTED ? 3.5 : 2.0) * m.lw,
                       dash);
        }
        char buf[256];
        const char *str =
            scene_fit_text(s, t, names[i] ? names[i] : "", size, textw + 1e-6, 0, buf, sizeof buf);
        put_text(s, t, sx + sample + gap, ty + 0.5 * line_h, str, size, SCENE_LEFT | SCENE_MIDDLE,
                 th->fg, 0);
    }
}

/* --- curves and marks ------------------------------------------------------------------ */

/* Runs of consecutive points that fall in the same column, col_w figure units wide (a pixel; a
 * braille dot across a cell), keep their first, lowest, highest and last point, in their
 * order: the line drawn through them covers the same pixels as the line through all of them, so
 * a curve of a million points costs a vector file a few per column and looks the same. A break
 * (NaN y) is kept as it is. Compacts xy in place; returns the new count. */
static size_t curve_decimate(double *xy, size_t n, double col_w)
{
    double per = 1.0 / (col_w > 0 ? col_w : 0.5);
    size_t o = 0, i = 0;
    while (i < n) {
        double fx = xy[2 * i], fy = xy[2 * i + 1];
        if (isnan(fy)) {
            xy[2 * o] = fx;
            xy[2 * o + 1] = fy;
            o++;
            i++;
            continue;
        }
        double col = floor(fx * per);
        size_t b0 = i, lo = i, hi = i, end = i + 1;
        while (end < n && !isnan(xy[2 * end + 1]) && floor(xy[2 * end] * per) == col) {
            if (xy[2 * end + 1] < xy[2 * lo + 1]) lo = end;
            if (xy[2 * end + 1] > xy[2 * hi + 1]) hi = end;
            end++;
        }
        size_t keep[4] = {b0, lo < hi ? lo : hi, lo < hi ? hi : lo, end - 1}, nk = 0;
        double pts[8];
        for (int k = 0; k < 4; k++) {
            if (k > 0 && keep[k] == keep[k - 1]) continue;
            pts[2 * nk] = xy[2 * keep[k]];
            pts[2 * nk + 1] = xy[2 * keep[k] + 1];
            nk++;
        }
        memcpy(xy + 2 * o, pts, nk * 2 * sizeof *pts);
        o += nk;
        i = end;
    }
    return o;
}

void fig_curve(scene *s, const fig_axes *a, const double *x, const double *y, size_t n,
               uint32_t color, double width, unsigned flags)
{
    if (n == 0 || n > SIZE_MAX / (2 * sizeof(double))) return;
    /* Make the item first and fill its points in place, so the arena holds them once. */
    scene_item *it =
        scene_polyline(s, NULL, 0, a->area.x, a->area.y, a->area.w, a->area.h, color, width, flags);
    if (!it) return;
    double *xy = scene_alloc(s, n * 2 * sizeof(double));
    if (!xy) {
        s->n--; /* drop the empty item again */
        return;
    }
    /* Points far outside the area are pulled in (keeping their side) so backends never see
     * coordinates that overflow; the clip hides them either way. */
    double lim = 1e6 + fabs(a->area.x) + fabs(a->area.y) + a->area.w + a->area.h;
    for (size_t i = 0; i < n; i++) {
        double fx = fig_x(a, x[i]), fy = fig_y(a, y[i]);
        if (!isfinite(fx) || !isfinite(fy)) {
            fx = isfinite(fx) ? fx : 0.0;
            fy = NAN; /* a break in the curve */
        } else {
            fx = fmax(-lim, fmin(lim, fx));
            fy = fmax(-lim, fmin(lim, fy));
        }
        xy[2 * i] = fx;
        xy[2 * i + 1] = fy;
    }
    it->u.poly.xy = xy;
    it->u.poly.n = curve_decimate(xy, n, a->col_w);
    it->u.poly.xmono = scene_xy_monotone(xy, it->u.poly.n);
}

/* Put a reference line's label at the first of n candidate boxes (left, top, width w, height h)
 * that covers no curve, else at the one covering the fewest segments. */
static void place_mark_label(scene *s, const scene_target *t, const fig_theme *th,
                             const double (*cand)[2], int n, double w, double h, const char *str,
                             double size)
{
    int best = 0;
    size_t fewest = (size_t)-1;
    for (int k = 0; k < n; k++) {
        size_t c = box_covers(s, t, cand[k][0], cand[k][1], w, h);
        if (c < fewest) {
            fewest = c;
            best = k;
        }
        if (c == 0) break;
    }
    s->legend_covers += fewest;
    put_text(s, t, cand[best][0], cand[best][1], str, size, SCENE_LEFT | SCENE_TOP, th->fg, 0);
}

/* The spots for a label w x h beside the vertical line at fx (its left edge right of the
 * line, or its right edge left of it): at the top and the bottom of the line first, then down
 * its length line by line. Returns the count. */
enum { VMARK_ROWS = 48 };
static int vmark_spots(const scene_target *t, const fig_axes *a, double fx, double w, double h,
                       double (*cand)[2])
{
    metrics m = get_metrics(t);
    double gap = t->cells ? 1.0 : 0.4 * m.pad;
    double rx = t->cells ? fx + 0.5 : fx + gap; /* left edge right of the line */
    double right_room = a->area.x + a->area.w - rx;
    double left_edge = t->cells ? fx - 0.5 : fx - gap; /* right edge left of the line */
    double left_room = left_edge - a->area.x;
    double top = a->area.y + (t->cells ? 0.0 : 0.4 * m.pad);
    double bottom = a->area.y + a->area.h - h - (t->cells ? 0.0 : 0.4 * m.pad);
    if (t->cells) bottom = 2.0 * floor(bottom / 2.0);
    double lx = t->cells ? floor(left_edge - w + 1e-9) : left_edge - w;
    double ys[VMARK_ROWS + 2];
    int ny = 0, n = 0;
    ys[ny++] = top;
    if (bottom > top) ys[ny++] = bottom;
    double step = t->cells ? 2.0 : h;
    for (double y = top + step; y < bottom - 1e-9 && ny < VMARK_ROWS + 2; y += step) ys[ny++] = y;
    for (int k = 0; k < ny; k++) {
        if (w <= right_room + 1e-9) {
            cand[n][0] = rx, cand[n++][1] = ys[k];
        }
        if (w <= left_room + 1e-9) {
            cand[n][0] = lx, cand[n++][1] = ys[k];
        }
    }
    return n;
}

void fig_vmark(scene *s, const scene_target *t, const fig_theme *th, const fig_axes *a, double x,
               const char *label)
{
    fig_vmark_short(s, t, th, a, x, label, NULL);
}

void fig_vmark_short(scene *s, const scene_target *t, const fig_theme *th, const fig_axes *a,
                     double x, const char *label, const char *short_label)
{
    double fx = fig_x(a, x);
    if (!isfinite(fx) || fx < a->area.x || fx > a->area.x + a->area.w) return;
    metrics m = get_metrics(t);
    if (t->cells) {
        double col = fmin(floor(fx), a->area.x + a->area.w - 1.0);
        fx = col + 0.5;
    } else {
        fx = round(fx) + 0.5;
    }
    /* Reference lines are ink, dashed and labelled directly, so no series colour means two
     * things. */
    if (t->cells) /* a dashed box-drawing rule through the rows of the area */
        scene_line(s, fx, a->area.y + 1.0, fx, a->area.y + a->area.h - 1.0, th->fg, 0.0,
                   SCENE_RULE | SCENE_DASHED);
    else
        scene_line(s, fx, a->area.y, fx, a->area.y + a->area.h, th->fg, 1.5 * m.lw, SCENE_DASHED);
    if (!label || !*label) return;
    double gap = t->cells ? 1.0 : 0.4 * m.pad;
    double room = fmax(a->area.x + a->area.w - (t->cells ? fx + 0.5 : fx + gap),
                       (t->cells ? fx - 0.5 : fx - gap) - a->area.x);
    /* The label over no curve, line or other label: at its size, then in its short form,
     * then each smaller (pixel targets); only when none has a free spot does it go where it
     * covers least. */
    double cand[2 * (VMARK_ROWS + 2)][2];
    const char *forms[2] = {label, short_label};
    double floor_size = min_label_size(t);
    for (double size = t->cells ? 1.0 : 0.85;; size = fmax(floor_size, size * 0.9)) {
        for (int f = 0; f < 2; f++) {
            if (!forms[f] || !*forms[f]) continue;
            double w = scene_text_width(t, forms[f], size), h = t->cells ? 2.0 : m.T * size;
            int n = w <= room + 1e-9 ? vmark_spots(t, a, fx, w, h, cand) : 0;
            for (int k = 0; k < n; k++)
                if (box_free(s, t, cand[k][0], cand[k][1], w, h)) {
                    put_text(s, t, cand[k][0], cand[k][1], forms[f], size, SCENE_LEFT | SCENE_TOP,
                             th->fg, 0);
                    return;
                }
        }
        if (t->cells || size <= floor_size + 1e-9) break;
    }
    double size = t->cells ? 1.0 : 0.85;
    char buf[128];
    /* the short form when the label would have to be cut (a narrow plot) */
    const char *form = label;
    if (short_label && *short_label && scene_text_width(t, label, floor_size) > room + 1e-9)
        form = short_label;
    const char *str = fit_label(s, t, form, &size, room, buf, sizeof buf);
    double w = scene_text_width(t, str, size), h = t->cells ? 2.0 : m.T * size;
    int n = vmark_spots(t, a, fx, w, h, cand);
    if (n == 0) return; /* fit_label made it fit the wider side */
    place_mark_label(s, t, th, (const double(*)[2])cand, n, w, h, str, size);
}

/* The figure y of a horizontal reference line at data y; NaN outside the area. */
static double hmark_y(const scene_target *t, const fig_axes *a, double y)
{
    double fy = fig_y(a, y);
    if (!isfinite(fy) || fy < a->area.y || fy > a->area.y + a->area.h) return NAN;
    return t->cells ? 2.0 * floor(fy / 2.0) + 1.0 : round(fy) + 0.5;
}

void fig_hmark(scene *s, const scene_target *t, const fig_theme *th, const fig_axes *a, double y,
               const char *label)
{
    double fy = hmark_y(t, a, y);
    if (isnan(fy)) return;
    metrics m = get_metrics(t);
    scene_line(s, a->area.x, fy, a->area.x + a->area.w, fy, th->fg, t->cells ? 0.0 : 1.5 * m.lw,
               SCENE_DASHED);
    fig_hmark_label(s, t, th, a, y, label);
}

/* The spots for a label w x h by the horizontal line at fy: above the line, else below it; at
 * the right or the left end first, then along the line in steps of half the label. */
enum { HMARK_XS = 24 };
static int hmark_spots(const scene_target *t, const fig_axes *a, double fy, double w, double h,
                       double (*cand)[2])
{
    metrics m = get_metrics(t);
    double pad = t->cells ? 1.0 : t->char_w;
    double above = t->cells ? fy - 1.0 - 2.0 : fy - h - 0.1 * m.T;
    double below = t->cells ? fy + 1.0 : fy + 0.1 * m.T;
    double lx = a->area.x + pad, rx = a->area.x + a->area.w - pad - w;
    if (t->cells) rx = floor(rx);
    int n = 0;
    int up = above >= a->area.y, down = below + h <= a->area.y + a->area.h;
    if (up) {
        cand[n][0] = rx, cand[n++][1] = above;
        cand[n][0] = lx, cand[n++][1] = above;
    }
    if (down) {
        cand[n][0] = rx, cand[n++][1] = below;
        cand[n][0] = lx, cand[n++][1] = below;
    }
    double step = fmax(1.0, 0.5 * w);
    for (int k = 1; k <= HMARK_XS && lx + k * step < rx - 1e-9; k++) {
        double x = t->cells ? floor(lx + k * step) : lx + k * step;
        if (up) cand[n][0] = x, cand[n++][1] = above;
        if (down) cand[n][0] = x, cand[n++][1] = below;
    }
    return n;
}

void fig_hmark_label(scene *s, const scene_target *t, const fig_theme *th, const fig_axes *a,
                     double y, const char *label)
{
    double fy = hmark_y(t, a, y);
    if (isnan(fy) || !label || !*label) return;
    metrics m = get_metrics(t);
    double pad = t->cells ? 1.0 : t->char_w, floor_size = min_label_size(t);
    double cand[4 + 2 * HMARK_XS][2];
    /* a spot that covers nothing, stepping the size down (pixel targets) before settling for
     * the spot that covers least at the label's size */
    for (double size = t->cells ? 1.0 : 0.85;; size = fmax(floor_size, size * 0.9)) {
        double w = scene_text_width(t, label, size), h = t->cells ? 2.0 : m.T * size;
        int n = w <= a->area.w - 2.0 * pad + 1e-9 ? hmark_spots(t, a, fy, w, h, cand) : 0;
        for (int k = 0; k < n; k++)
            if (box_free(s, t, cand[k][0], cand[k][1], w, h)) {
                put_text(s, t, cand[k][0], cand[k][1], label, size, SCENE_LEFT | SCENE_TOP, th->fg,
                         0);
                return;
            }
        if (t->cells || size <= floor_size + 1e-9) break;
    }
    double size = t->cells ? 1.0 : 0.85;
    char buf[128];
    const char *str = fit_label(s, t, label, &size, a->area.w - 2.0 * pad, buf, sizeof buf);
    double w = scene_text_width(t, str, size), h = t->cells ? 2.0 : m.T * size;
    int n = hmark_spots(t, a, fy, w, h, cand);
    if (n == 0) return;
    place_mark_label(s, t, th, (const double(*)[2])cand, n, w, h, str, size);
}

/* --- rectangles ------------------------------------------------------------------------ */

fig_rect fig_take_right(fig_rect *r, double w, double gap)
{
    if (w > r->w) w = r->w;
    if (w < 0) w = 0;
    fig_rect out = {r->x + r->w - w, r->y, w, r->h};
    double rest = r->w - w - gap;
    r->w = rest > 0 ? rest : 0;
    return out;
}

fig_rect fig_take_bottom(fig_rect *r, double h, double gap)
{
    if (h > r->h) h = r->h;
    if (h < 0) h = 0;
    fig_rect out = {r->x, r->y + r->h - h, r->w, h};
    double rest = r->h - h - gap;
    r->h = rest > 0 ? rest : 0;
    return out;
}

fig_rect fig_grid_cell(fig_rect r, int rows, int cols, int i, int j, double gap)
{
    if (rows < 1) rows = 1;
    if (cols < 1) cols = 1;
    double cw = (r.w - (cols - 1) * gap) / cols, ch = (r.h - (rows - 1) * gap) / rows;
    if (cw < 0) cw = 0;
    if (ch < 0) ch = 0;
    fig_rect c = {r.x + j * (cw + gap), r.y + i * (ch + gap), cw, ch};
    return c;
}

int fig_grid_pick(fig_rect r, int n, double aspect, double head, double side, double gap,
                  double min_w, int *rows, double *content)
{
    if (n < 1) n = 1;
    if (!(aspect > 0)) aspect = 1;
    int best_c = 1, pass;
    double best = -1;
    for (pass = 0; pass < 2 && best < 0; pass++) /* pass 1: no arrangement is min_w wide */
        for (int cc = 1; cc <= n; cc++) {
            int rr = (n + cc - 1) / cc;
            if (cc > 1 && (n + cc - 2) / (cc - 1) == rr) continue; /* same rows, wider cells */
            double cw = (r.w - (cc - 1) * gap) / cc, ch = (r.h - (rr - 1) * gap) / rr;
            if (!pass && cw < min_w) continue;
            double w = fmin(cw - side, (ch - head) * aspect);
            if (w > best + 1e-9) {
                best = w;
                best_c = cc;
            }
        }
    if (rows) *rows = (n + best_c - 1) / best_c;
    if (content) *content = best > 0 ? best : 0;
    return best_c;
}

int fig_split_two(const scene_target *t, fig_rect r, double aspect, double wide_share,
                  double tall_share, double gap, fig_rect *first, fig_rect *second)
{
    /* a plot's frame: the x ticks and label under it, the y ticks and label beside it */
    double head = t->cells ? 4 : t->text_h * 2.6, side = t->cells ? 8 : t->text_h * 3.2;
    int rows = 1;
    /* a terminal keeps them side by side: its cells are twice as high as wide, and its two
     * plots stacked would each keep a few rows */
    int cols = t->cells ? 2 : fig_grid_pick(r, 2, aspect, head, side, gap, 0, &rows, NULL);
    fig_rect a = r, b;
    if (cols == 2)
        b = fig_take_right(&a, r.w * (1 - wide_share), gap);
    else
        b = fig_take_bottom(&a, r.h * (1 - tall_share) - gap / 2, gap);
    *first = a;
    *second = b;
    return cols == 2;
}

fig_rect fig_axes_outer_for(const scene_target *t, const fig_theme *th, fig_rect outer, double x0,
                            double x1, double y0, double y1, const char *xlabel, const char *ylabel,
                            unsigned flags, double aspect, double max_w, fig_rect *area)
{
    if (!(aspect > 0)) aspect = 1;
    fig_rect o = outer;
    fig_rect aw = {0, 0, 0, 0};
    scene tmp;
    scene_init(&tmp, t->width, t->height, 0);
    /* twice: a narrower plot may take fewer (narrower) tick labels */
    for (int it = 0; it < 2; it++) {
        scene_reset(&tmp, t->width, t->height, 0);
        fig_axes a = fig_axes_draw(&tmp, t, th, o, x0, x1, y0, y1, xlabel, ylabel, flags);
        double mx = o.w - a.area.w, my = o.h - a.area.h;
        double w = fmin(outer.w - mx, (outer.h - my) * aspect);
        if (max_w > 0 && w > max_w) w = max_w;
        if (!(w > 0)) break;
        double h = w / aspect, dx = a.area.x - o.x, dy = a.area.y - o.y;
        o.w = w + mx;
        o.h = h + my;
        o.x = outer.x + (outer.w - o.w) / 2; /* centred across, at the top (under its head) */
        o.y = outer.y;
        aw = (fig_rect){o.x + dx, o.y + dy, w, h};
        if (t->cells) {
            o.x = floor(o.x);
            o.y = 2 * floor(o.y / 2);
        }
    }
    scene_free(&tmp);
    if (area) *area = aw;
    return o;
}

void fig_mark_main(scene *s, fig_rect r, const char *name)
{
    scene_mark_main(s, r.x, r.y, r.w, r.h, name);
}

double fig_min_bar(const scene_target *t)
{
    /* text_h is about 21 pixels at 1024x640 and 100%, and grows with the zoom */
    return t->cells ? 1.0 : fmax(2.0, 0.19 * t->text_h);
}
