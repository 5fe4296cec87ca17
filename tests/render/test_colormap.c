/* test_colormap: table lookup, published endpoints, viridis' monotone lightness, rdbu's sign
 * convention and twilight's cyclic ends. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "tap.h"

static double srgb_to_linear(double c)
{
    c /= 255.0;
    return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4);
}

/* CIE L* of an sRGB colour (D65). */
static double lightness(uint32_t rgb)
{
    double r = srgb_to_linear((rgb >> 16) & 0xff), g = srgb_to_linear((rgb >> 8) & 0xff),
           b = srgb_to_linear(rgb & 0xff);
    double y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    return y > 216.0 / 24389.0 ? 116.0 * cbrt(y) - 16.0 : y * 24389.0 / 27.0;
}

int main(void)
{
    TAP_OK(cmap_count() == 8, "eight maps (got %zu)", cmap_count());
    const char *names[] = {"viridis", "magma", "inferno",  "cividis",
                           "gray",    "rdbu",  "coolwarm", "twilight"};
    for (size_t i = 0; i < 8; i++) {
        const cmap *m = cmap_find(names[i]);
        TAP_OK(m && strcmp(m->name, names[i]) == 0 && m->description && m->description[0],
               "find %s", names[i]);
    }
    TAP_OK(cmap_find("VIRIDIS") == cmap_find("viridis"), "names are case-insensitive");
    TAP_OK(cmap_find("jet") == NULL && cmap_find(NULL) == NULL, "unknown name gives NULL");
    TAP_OK(cmap_at(cmap_count()) == NULL && cmap_at(0) != NULL, "cmap_at bounds");
    TAP_OK(cmap_default_sequential() == cmap_find("viridis"), "sequential default is viridis");
    TAP_OK(cmap_default_diverging() == cmap_find("rdbu"), "diverging default is rdbu");
    TAP_OK(cmap_find("rdbu")->diverging && cmap_find("coolwarm")->diverging &&
               !cmap_find("viridis")->diverging,
           "diverging flags");
    TAP_OK(cmap_find("twilight")->cyclic && !cmap_find("rdbu")->cyclic, "cyclic flag");

    /* Published endpoints (matplotlib's _cm_listed.py, rounded to 8 bits). */
    const cmap *v = cmap_find("viridis");
    TAP_OK(cmap_color(v, 0.0) == 0x440154, "viridis(0) = #440154 (got #%06x)",
           (unsigned)cmap_color(v, 0.0));
    TAP_OK(cmap_color(v, 1.0) == 0xfde725, "viridis(1) = #fde725 (got #%06x)",
           (unsigned)cmap_color(v, 1.0));
    TAP_OK(cmap_color(v, 0.5) == 0x21918c || cmap_color(v, 0.5) == 0x21908d,
           "viridis(0.5) is the teal middle (got #%06x)", (unsigned)cmap_color(v, 0.5));
    TAP_OK(cmap_color(v, -3.0) == 0x440154 && cmap_color(v, 7.0) == 0xfde725,
           "out-of-range t is clamped");
    TAP_OK(cmap_color(v, NAN) == cmap_color(v, 0.5), "NaN gives the middle");
    TAP_OK(cmap_color(cmap_find("gray"), 0) == 0x000000 &&
               cmap_color(cmap_find("gray"), 1) == 0xffffff,
           "gray runs black to white");
    TAP_OK(cmap_color(cmap_find("magma"), 0.0) == 0x000004, "magma(0) = #000004");

    /* viridis: lightness increases (its design property). 8-bit rounding makes two neighbours
     * dip by 0.03 L*, so allow 0.1 between neighbours and demand a strict rise every 4 steps. */
    double prev = -1.0, lo = 1e9, hi = -1e9;
    int mono = 1;
    for (int i = 0; i < 256; i++) {
        double l = lightness(cmap_color(v, i / 255.0));
        if (l < prev - 0.1) mono = 0;
        if (i >= 4 && l <= lightness(cmap_color(v, (i - 4) / 255.0))) mono = 0;
        prev = l;
        if (l < lo) lo = l;
        if (l > hi) hi = l;
    }
    TAP_OK(mono, "viridis lightness is monotone");
    TAP_CLOSE(lo, 14.90, 0, 0.05, "viridis darkest L* (#440154) = 14.90");
    TAP_CLOSE(hi, 90.86, 0, 0.05, "viridis lightest L* (#fde725) = 90.86");
    /* Same for magma and inferno, cividis. */
    const char *seq[] = {"magma", "inferno", "cividis", "gray"};
    for (int k = 0; k < 4; k++) {
        const cmap *m = cmap_find(seq[k]);
        int ok = 1;
        double p = -1;
        for (int i = 0; i < 256; i++) {
            double l = lightness(cmap_color(m, i / 255.0));
            if (l < p - 0.3) ok = 0; /* 8-bit rounding can wobble a hair */
            p = l;
        }
        TAP_OK(ok, "%s lightness is monotone", seq[k]);
    }

    /* rdbu: blue for negative (low end), red for positive (high end), near white in the middle. */
    const cmap *rb = cmap_find("rdbu");
    uint32_t lo_c = cmap_color(rb, 0.0), hi_c = cmap_color(rb, 1.0), mid = cmap_color(rb, 0.5);
    TAP_OK((lo_c & 0xff) > ((lo_c >> 16) & 0xff), "rdbu low end is blue (#%06x)", (unsigned)lo_c);
    TAP_OK(((hi_c >> 16) & 0xff) > (hi_c & 0xff), "rdbu high end is red (#%06x)", (unsigned)hi_c);
    TAP_OK(lightness(mid) > 95.0, "rdbu middle is near white (L* %.1f)", lightness(mid));
    const cmap *cw = cmap_find("coolwarm");
    TAP_OK((cmap_color(cw, 0) & 0xff) > (cmap_color(cw, 0) >> 16), "coolwarm low end is blue");

    /* twilight: the two ends meet. */
    const cmap *tw = cmap_find("twilight");
    uint32_t a = cmap_color(tw, 0.0), b = cmap_color(tw, 1.0);
    int dmax = 0;
    for (int sh = 0; sh < 24; sh += 8) {
        int d = abs((int)((a >> sh) & 0xff) - (int)((b >> sh) & 0xff));
        if (d > dmax) dmax = d;
    }
    TAP_OK(dmax <= 2, "twilight ends match within 2/255 (%d)", dmax);
    return tap_done();
}
