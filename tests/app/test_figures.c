/* test_figures.c: author-grade figures through the real binary (issue 26), for every view:
 * - fonts in points: `--size 3.5x2.2in --dpi 300` is the PDF of that size rasterised (pdftoppm
 *   -r 300), and the 96 dpi PNG is the same figure at a third of the pixels;
 * - SVG text is text: every word pdftotext finds in the view's PDF is in a <text> element of its
 *   SVG (title, axis labels, ticks, legend), with the font family and size, and the SVG rendered
 *   by rsvg-convert looks like the PNG of the same size; `--svg-text paths` writes no <text>.
 * argv[1] is the pelab binary. pdftotext and pdftoppm come with poppler-utils, rsvg-convert with
 * librsvg2-bin (pelab.sh test installs them); without them the checks that need them skip. */
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "render/pngio.h"
#include "runproc.h"
#include "tap.h"

static const char *pelab;
static char dir[4096];
static char errtext[4096];
static int errlines;

static int run_prog(const char *prog, const char *const *args, const char *out)
{
    char errpath[4200];
    snprintf(errpath, sizeof errpath, "%s.stderr", dir);
    return test_run(prog, args, out, errpath, errtext, sizeof errtext, &errlines);
}

static int run(const char *const *args)
{
    return run_prog(pelab, args, NULL);
}

#define TAP_SKIP(...) TAP_OK(1, "# SKIP " __VA_ARGS__)

static char *path_in(const char *name)
{
    static char buf[8][4200];
    static int k;
    char *p = buf[k++ & 7];
    snprintf(p, sizeof buf[0], "%s/%s", dir, name);
    return p;
}

static int have(const char *tool)
{
    return run_prog(tool, (const char *[]){"-v", NULL}, NULL) != 127;
}

/* The views `pelab list` names (its "views" section). Returns the count (at most max). */
static int list_views(char names[][32], int max)
{
    char *out = path_in("list.txt");
    if (run_prog(pelab, (const char *[]){"list", NULL}, out) != 0) return 0;
    size_t n = 0;
    char *s = file_read(out, &n);
    if (!s) return 0;
    int k = 0, in = 0;
    for (char *line = strtok(s, "\n"); line && k < max; line = strtok(NULL, "\n")) {
        if (strncmp(line, "views", 5) == 0) {
            in = 1;
            continue;
        }
        if (in && line[0] != ' ') break;
        if (in && sscanf(line, " %31s", names[k]) == 1) k++;
    }
    free(s);
    return k;
}

/* The share of a's ink (pixels that are not the white background in a or b) that no pixel of b
 * within one pixel matches (every channel within tol): text rasterised by two libraries differs
 * in its antialiasing and by a fraction of a pixel in place, which this forgives; a missing
 * label, a moved line or a wrong colour is not. -1 when the sizes differ. */
static double differing(const png_image_rd *a, const png_image_rd *b, int tol)
{
    if (a->w != b->w || a->h != b->h) return -1;
    size_t bad = 0, ink = 0;
    for (int y = 0; y < a->h; y++)
        for (int x = 0; x < a->w; x++) {
            size_t at = ((size_t)y * (size_t)a->w + (size_t)x) * 4;
            const uint8_t *p = a->rgba + at, *pb = b->rgba + at;
            if (p[0] > 250 && p[1] > 250 && p[2] > 250 && pb[0] > 250 && pb[1] > 250 && pb[2] > 250)
                continue;
            ink++;
            int ok = 0;
            for (int dy = -1; dy <= 1 && !ok; dy++)
                for (int dx = -1; dx <= 1 && !ok; dx++) {
                    int yy = y + dy, xx = x + dx;
                    if (yy < 0 || xx < 0 || yy >= b->h || xx >= b->w) continue;
                    const uint8_t *q = b->rgba + ((size_t)yy * (size_t)b->w + (size_t)xx) * 4;
                    ok = abs(p[0] - q[0]) <= tol && abs(p[1] - q[1]) <= tol &&
                         abs(p[2] - q[2]) <= tol;
                }
            bad += !ok;
        }
    return ink ? (double)bad / (double)ink : 0.0;
}

/* both ways: a label only one of them has shows either way */
static double differing2(const png_image_rd *a, const png_image_rd *b, int tol)
{
    double d1 = differing(a, b, tol), d2 = differing(b, a, tol);
    return d1 < 0 || d2 < 0 ? 1.0 : fmax(d1, d2);
}

/* Replace the XML entities the SVG writer uses, in place. */
static void unescape(char *s)
{
    static const struct {
        const char *ent, *ch;
    } map[] = {{"&amp;", "&"}, {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}};
    char *w = s;
    for (const char *r = s; *r;) {
        size_t i = 0;
        for (; i < 5; i++)
            if (strncmp(r, map[i].ent, strlen(map[i].ent)) == 0) break;
        if (i < 5) {
            *w++ = map[i].ch[0];
            r += strlen(map[i].ent);
        } else {
            *w++ = *r++;
        }
    }
    *w = '\0';
}

/* The contents of the SVG's <text> elements, one per line (malloc'd), and their count. */
static char *svg_texts(const char *svg, int *count, int *with_size)
{
    size_t cap = strlen(svg) + 1, n = 0;
    char *out = malloc(cap);
    *count = *with_size = 0;
    if (!out) return NULL;
    for (const char *p = strstr(svg, "<text"); p; p = strstr(p + 1, "<text")) {
        const char *gt = strchr(p, '>'), *end = gt ? strstr(gt, "</text>") : NULL;
        if (!end) break;
        (*count)++;
        const char *fs = strstr(p, "font-size=\"");
        if (fs && fs < gt && atof(fs + 11) > 0) (*with_size)++;
        memcpy(out + n, gt + 1, (size_t)(end - gt - 1));
        n += (size_t)(end - gt - 1);
        out[n++] = '\n';
    }
    out[n] = '\0';
    unescape(out);
    return out;
}

/* Every word pdftotext -bbox finds in pdf is inside one of texts' lines. Returns the count of
 * words checked; *missing gets the first word not found (or ""). */
static int words_in(const char *pdf, const char *texts, char *missing, size_t n)
{
    char *html = path_in("words.html");
    missing[0] = '\0';
    if (run_prog("pdftotext", (const char *[]){"-bbox", pdf, "-", NULL}, html) != 0) return -1;
    size_t len = 0;
    char *s = file_read(html, &len);
    unlink(html);
    if (!s) return -1;
    int k = 0;
    for (char *p = strstr(s, "<word"); p; p = strstr(p + 1, "<word")) {
        char *gt = strchr(p, '>'), *end = gt ? strstr(gt, "</word>") : NULL;
        if (!end) break;
        *end = '\0';
        char word[512];
        snprintf(word, sizeof word, "%s", gt + 1);
        *end = '<';
        unescape(word);
        k++;
        if (!strstr(texts, word) && !missing[0]) snprintf(missing, n, "%s", word);
    }
    free(s);
    return k;
}

static void check_view(const char *view, int have_poppler, int have_rsvg)
{
    char *png300 = path_in("f300.png"), *png96 = path_in("f96.png"), *pdf = path_in("f.pdf");
    char *svg = path_in("f.svg"), *svgp = path_in("fp.svg"), *ras = path_in("ras");
    char *ras_png = path_in("ras.png"), *svg_png = path_in("svg.png");
    const char *size[] = {"--size", "3.5x2.2in"};
    int ok = run((const char *[]){"export", view, size[0], size[1], "--dpi", "300", "-o", png300,
                                  NULL}) == 0;
    ok = ok && run((const char *[]){"export", view, size[0], size[1], "-o", png96, NULL}) == 0;
    ok = ok && run((const char *[]){"export", view, size[0], size[1], "-o", pdf, NULL}) == 0;
    ok = ok && run((const char *[]){"export", view, size[0], size[1], "-o", svg, NULL}) == 0;
    TAP_OK(ok, "%s: exports at 3.5x2.2in (PNG at 96 and 300 dpi, PDF, SVG) (%s)", view, errtext);
    if (!ok) return;

    png_image_rd a, b;
    /* 1. a 300 dpi PNG is the PDF of the same size rasterised */
    if (have_poppler &&
        run_prog("pdftoppm", (const char *[]){"-r", "300", "-png", "-singlefile", pdf, ras, NULL},
                 NULL) == 0 &&
        png_read_file(png300, &a) == 0) {
        if (png_read_file(ras_png, &b) == 0) {
            double d = differing2(&a, &b, 96);
            TAP_OK(a.w == 1050 && a.h == 660 && d < 0.05,
                   "%s: the 300 dpi PNG (%d x %d) is the PDF at 300 dpi: %.2f%% of the ink "
                   "differs (< 5%%)",
                   view, a.w, a.h, 100 * d);
            png_image_rd_free(&b);
        } else {
            TAP_OK(0, "%s: pdftoppm wrote no PNG", view);
        }
        png_image_rd_free(&a);
    } else {
        TAP_SKIP("%s: no pdftoppm (poppler-utils)", view);
    }
    unlink(ras_png);

    /* 2. the SVG's text is text */
    size_t n = 0;
    char *s = file_read(svg, &n);
    int count = 0, sized = 0;
    char *texts = s ? svg_texts(s, &count, &sized) : NULL;
    TAP_OK(texts && count >= 5 && sized == count && strstr(s, "font-family=\"DejaVu Sans"),
           "%s: the SVG has %d <text> elements, %d with a font-size, in the font family", view,
           count, sized);
    if (have_poppler && texts) {
        char missing[512];
        int words = words_in(pdf, texts, missing, sizeof missing);
        TAP_OK(words >= 5 && !missing[0],
               "%s: each of the PDF's %d words is in the SVG's <text> (missing: '%s')", view, words,
               missing);
    }
    free(texts);
    free(s);

    /* 2b. typography: the PDF's text has no printf number ("1e-4", "1e+06", "2.5e5"), no "+-"
     * for ±, and no explorer hint naming an option ("--scaling", "(--probe-d") */
    if (have_poppler) {
        char *txt = path_in("f.txt");
        char *words = run_prog("pdftotext", (const char *[]){pdf, txt, NULL}, NULL) == 0
                          ? file_read(txt, &n)
                          : NULL;
        unlink(txt);
        static const char *const bad[] = {"[0-9]e[-+]?[0-9]", "\\+-", "--[a-z]"};
        static const char *const what[] = {"a printf exponent", "+- for \u00b1",
                                           "an explorer hint"};
        for (int i = 0; i < 3; i++) {
            regex_t re;
            regmatch_t m[1];
            int hit = words && regcomp(&re, bad[i], REG_EXTENDED) == 0 &&
                      regexec(&re, words, 1, m, 0) == 0;
            char ctx[64] = "";
            if (hit) {
                size_t at = m[0].rm_so > 20 ? (size_t)m[0].rm_so - 20 : 0;
                snprintf(ctx, sizeof ctx, "%.40s", words + at);
                for (char *c = ctx; *c; c++)
                    if (*c == '\n') *c = ' ';
            }
            if (words) regfree(&re);
            TAP_OK(words && !hit, "%s: the PDF's text has no %s ('%s')", view, what[i], ctx);
        }
        free(words);
    }

    /* 3. the SVG looks like the PNG of the same size */
    if (have_rsvg &&
        run_prog("rsvg-convert", (const char *[]){"-o", svg_png, svg, NULL}, NULL) == 0 &&
        png_read_file(png96, &a) == 0) {
        if (png_read_file(svg_png, &b) == 0) {
            double d = differing2(&a, &b, 96);
            /* the measure sees a figure moved by 3 pixels (a control) */
            png_image_rd m = b;
            m.rgba = malloc((size_t)b.w * (size_t)b.h * 4);
            double moved = -1;
            if (m.rgba) {
                for (int y = 0; y < b.h; y++)
                    for (int x = 0; x < b.w; x++)
                        memcpy(m.rgba + ((size_t)y * (size_t)b.w + (size_t)x) * 4,
                               b.rgba + ((size_t)y * (size_t)b.w + (size_t)(x < 3 ? 0 : x - 3)) * 4,
                               4);
                moved = differing2(&m, &b, 96);
                free(m.rgba);
            }
            TAP_OK(moved > 0.03, "%s: the measure sees the figure moved by 3 pixels (%.2f%%)", view,
                   100 * moved);
            TAP_OK(d < 0.02,
                   "%s: the SVG rendered by rsvg-convert is the PNG: %.2f%% of the ink "
                   "differs (< 2%%)",
                   view, 100 * d);
            png_image_rd_free(&b);
        } else {
            TAP_OK(0, "%s: rsvg-convert wrote no PNG", view);
        }
        png_image_rd_free(&a);
    } else {
        TAP_SKIP("%s: no rsvg-convert (librsvg2-bin)", view);
    }
    unlink(svg_png);

    /* 4. --svg-text paths keeps cairo's glyph outlines */
    ok = run((const char *[]){"export", view, size[0], size[1], "--svg-text", "paths", "-o", svgp,
                              NULL}) == 0;
    s = ok ? file_read(svgp, &n) : NULL;
    TAP_OK(s && !strstr(s, "<text") && strstr(s, "<symbol") != NULL,
           "%s: --svg-text paths writes glyph outlines, no <text>", view);
    free(s);
    /* 4b. and it renders like the PNG too: its heatmaps are the drawn pixels, so rsvg, which
     * smooths images whatever image-rendering says, shows the PNG's cells (a heatmap embedded
     * at the data's 128 x 256 cells came out blurred: 6% of the ink differed) */
    if (have_rsvg && ok &&
        run_prog("rsvg-convert", (const char *[]){"-o", svg_png, svgp, NULL}, NULL) == 0 &&
        png_read_file(png96, &a) == 0) {
        if (png_read_file(svg_png, &b) == 0) {
            double d = differing2(&a, &b, 96);
            TAP_OK(d < 0.02,
                   "%s: the --svg-text paths SVG rendered by rsvg-convert is the PNG: %.2f%% of "
                   "the ink differs (< 2%%)",
                   view, 100 * d);
            png_image_rd_free(&b);
        } else {
            TAP_OK(0, "%s: rsvg-convert wrote no PNG of the --svg-text paths SVG", view);
        }
        png_image_rd_free(&a);
    }
    unlink(svg_png);
    unlink(png300);
    unlink(png96);
    unlink(pdf);
    unlink(svg);
    unlink(svgp);
}

int main(int argc, char **argv)
{
    if (argc < 2) return tap_skip_all("usage: test_figures PELAB");
    pelab = argv[1];
    if (test_tmpdir(dir, sizeof dir, "figures") != 0) return tap_skip_all("no temporary directory");
    char views[32][32];
    int nv = list_views(views, 32);
    TAP_OK(nv >= 10, "pelab list names %d views", nv);
    int have_poppler = have("pdftoppm") && have("pdftotext");
    int have_rsvg = have("rsvg-convert");
    for (int i = 0; i < nv; i++) check_view(views[i], have_poppler, have_rsvg);
    /* numbers for people at a long context too: the wavelength view's title and its L line
     * said "L=10000000" (printf) while its subtitle said L=10⁷ */
    if (have_poppler) {
        char *pdf = path_in("wl.pdf"), *txt = path_in("wl.txt");
        size_t n = 0;
        int ok = run((const char *[]){"export", "wavelength", "--len", "10000000", "-o", pdf,
                                      NULL}) == 0 &&
                 run_prog("pdftotext", (const char *[]){pdf, txt, NULL}, NULL) == 0;
        char *words = ok ? file_read(txt, &n) : NULL;
        TAP_OK(words && !strstr(words, "10000000") && strstr(words, "L=10\u2077") &&
                   strstr(words, "L = 10\u2077"),
               "wavelength --len 10000000: the title and the context line write L=10\u2077, "
               "no 10000000");
        free(words);
        /* every marker style in the legend: the filled (turns within L) and hollow (never
         * turns) circles had none */
        ok = run((const char *[]){"export", "wavelength", "-o", pdf, NULL}) == 0 &&
             run_prog("pdftotext", (const char *[]){pdf, txt, NULL}, NULL) == 0;
        words = ok ? file_read(txt, &n) : NULL;
        TAP_OK(words && strstr(words, "turns within L") && strstr(words, "never turns in L"),
               "wavelength: the legend names the filled and the hollow markers");
        free(words);
        unlink(pdf);
        unlink(txt);
    }
    rmdir(dir);
    return tap_done();
}
