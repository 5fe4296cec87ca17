/* test_author.c: the author's controls through the real binary: --title and --font-size in a
 * PDF's text (pdftotext), an empty --title removing the title, --size with units at --dpi, --font
 * checked with fontconfig, and their bad inputs refused with one line and exit status 2.
 * argv[1] is the pelab binary; pdftotext comes with poppler-utils (pelab.sh test installs it). */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "render/pngio.h"
#include "runproc.h"
#include "tap.h"

static const char *pelab;
static char dir[4096];
static char errtext[4096];
static int errlines;

/* Run argv (argv[0] = program) with stdout into out (or /dev/null), stderr captured. */
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

static char *path_in(const char *name)
{
    static char buf[4][4200];
    static int k;
    char *p = buf[k++ & 3];
    snprintf(p, sizeof buf[0], "%s/%s", dir, name);
    return p;
}

/* The text of a PDF (pdftotext -bbox: words with their boxes in points), malloc'd. */
static char *pdf_words(const char *pdf)
{
    char *txt = path_in("words.html");
    if (run_prog("pdftotext", (const char *[]){"-bbox", pdf, "-", NULL}, txt) != 0) return NULL;
    size_t n = 0;
    char *s = file_read(txt, &n);
    unlink(txt);
    return s;
}

/* Height in points of the first word w in pdftotext -bbox output (-1 when absent). */
static double word_height(const char *html, const char *w)
{
    char key[128];
    snprintf(key, sizeof key, ">%s</word>", w);
    const char *hit = strstr(html, key);
    if (!hit) return -1;
    const char *start = hit;
    while (start > html && strncmp(start, "<word", 5) != 0) start--;
    double x0, y0, x1, y1;
    if (sscanf(start, "<word xMin=\"%lf\" yMin=\"%lf\" xMax=\"%lf\" yMax=\"%lf\"", &x0, &y0, &x1,
               &y1) != 4)
        return -1;
    return y1 - y0;
}

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
    if (argc < 2) return tap_skip_all("usage: test_author PELAB");
    pelab = argv[1];
    if (test_tmpdir(dir, sizeof dir, "pelab-author") < 0) return tap_skip_all("no temp dir");

    /* --title and --font-size in a PDF: the title is text, and sizes follow the points */
    char pdf[4200], png[4200], fonts[4200];
    snprintf(pdf, sizeof pdf, "%s", path_in("t.pdf"));
    snprintf(png, sizeof png, "%s", path_in("s.png"));
    snprintf(fonts, sizeof fonts, "%s", path_in("fonts.txt"));
    int rc = run((const char *[]){"export", "heatmap", "--title", "Sinusoids at work",
                                  "--font-size", "10", "-o", pdf, NULL});
    TAP_OK(rc == 0, "export --title --font-size 10 -o t.pdf exits 0 (%s)", errtext);
    char *w10 = pdf_words(pdf);
    TAP_OK(w10 && strstr(w10, ">Sinusoids</word>") && strstr(w10, ">work</word>"),
           "pdftotext finds the title's words");
    TAP_OK(w10 && strstr(w10, "<title>Sinusoids at work</title>"),
           "the PDF's Title metadata is the --title");
    TAP_OK(w10 && !strstr(w10, ">encoding</word>"), "the view's own title is gone");
    /* a tick-label word drawn at the base size: DejaVu Sans' box is 1.164 em high */
    double h10 = w10 ? word_height(w10, "dimension") : -1;
    TAP_OK(fabs(h10 - 11.64) < 0.3, "--font-size 10: axis label box 11.64 pt high (%.2f)", h10);
    rc = run((const char *[]){"export", "heatmap", "--font-size", "20", "--dpi", "300", "--size",
                              "8x5in", "-o", pdf, NULL});
    char *w20 = rc == 0 ? pdf_words(pdf) : NULL;
    double h20 = w20 ? word_height(w20, "dimension") : -1;
    TAP_OK(fabs(h20 - 23.28) < 0.5,
           "--font-size 20 at --dpi 300: 23.28 pt, points whatever the "
           "dpi (%.2f)",
           h20);
    free(w10);
    free(w20);

    /* an empty title and subtitle remove them */
    rc = run(
        (const char *[]){"export", "heatmap", "--title", "", "--subtitle", "", "-o", pdf, NULL});
    char *w0 = rc == 0 ? pdf_words(pdf) : NULL;
    TAP_OK(w0 && !strstr(w0, ">sinusoidal</word>") && !strstr(w0, ">L=256</word>"),
           "--title '' --subtitle '': no title block");
    free(w0);
    rc = run((const char *[]){"export", "heatmap", "--subtitle", "my own words", "-o", pdf, NULL});
    char *ws = rc == 0 ? pdf_words(pdf) : NULL;
    TAP_OK(ws && strstr(ws, ">own</word>") && strstr(ws, ">encoding</word>"),
           "--subtitle replaces the parameters line, the title stays");
    free(ws);
    unlink(pdf);

    /* mathematics typeset in Unicode in cairo outputs: θₖ and 2⁻¹ are text in the PDF */
    rc = run((const char *[]){"export", "frequencies", "-o", pdf, NULL});
    char *wm = rc == 0 ? pdf_words(pdf) : NULL;
    TAP_OK(wm && strstr(wm, ">\xce\xb8\xe2\x82\x96</word>"),
           "frequencies PDF: the axis label reads \xce\xb8\xe2\x82\x96 (not theta_k)");
    free(wm);
    rc = run((const char *[]){"export", "alibi", "--heads", "8", "--head", "0", "-o", pdf, NULL});
    wm = rc == 0 ? pdf_words(pdf) : NULL;
    TAP_OK(wm && strstr(wm, "2\xe2\x81\xbb\xc2\xb9"),
           "alibi PDF: head 0's slope reads 2\xe2\x81\xbb\xc2\xb9");
    free(wm);
    unlink(pdf);

    /* --size with units at --dpi */
    png_image_rd im;
    rc = run(
        (const char *[]){"export", "heatmap", "--size", "6x4in", "--dpi", "150", "-o", png, NULL});
    if (rc != 0 || png_read_file(png, &im) != 0) memset(&im, 0, sizeof im);
    TAP_OK(im.w == 900 && im.h == 600, "--size 6x4in --dpi 150 is 900 x 600 px (%d x %d)", im.w,
           im.h);
    png_image_rd_free(&im);
    rc = run(
        (const char *[]){"export", "heatmap", "--dpi", "254", "--size", "10x5cm", "-o", png, NULL});
    if (rc != 0 || png_read_file(png, &im) != 0) memset(&im, 0, sizeof im);
    TAP_OK(im.w == 1000 && im.h == 500,
           "--size 10x5cm at --dpi 254 (given first) is 1000 x 500 px (%d x %d)", im.w, im.h);
    png_image_rd_free(&im);
    rc = run((const char *[]){"export", "heatmap", "--size", "640x480px", "-o", png, NULL});
    if (rc != 0 || png_read_file(png, &im) != 0) memset(&im, 0, sizeof im);
    TAP_OK(im.w == 640 && im.h == 480, "--size 640x480px (%d x %d)", im.w, im.h);
    png_image_rd_free(&im);
    unlink(png);

    /* --font: a family fontconfig knows, and one it does not */
    rc = run((const char *[]){"export", "heatmap", "--font", "DejaVu Serif", "-o", pdf, NULL});
    char *wf = NULL;
    if (rc == 0 && run_prog("pdffonts", (const char *[]){pdf, NULL}, fonts) == 0) {
        size_t n;
        wf = file_read(fonts, &n);
        unlink(fonts);
    }
    TAP_OK(wf && strstr(wf, "DejaVuSerif"), "--font 'DejaVu Serif' embeds DejaVu Serif (pdffonts)");
    free(wf);
    unlink(pdf);

    /* --csv-layout long: a header row, then index, index, value per row, equal to the wide table */
    char csv[4200], wide[4200];
    snprintf(csv, sizeof csv, "%s", path_in("long.csv"));
    snprintf(wide, sizeof wide, "%s", path_in("wide.csv"));
    rc = run((const char *[]){"export", "heatmap", "--len", "5", "--dim", "4", "--csv-layout",
                              "long", "-o", csv, NULL});
    int rc2 =
        run((const char *[]){"export", "heatmap", "--len", "5", "--dim", "4", "-o", wide, NULL});
    FILE *fl = fopen(csv, "r"), *fw = fopen(wide, "r");
    double table[5][4] = {{0}};
    char line[512];
    int r = 0;
    while (fw && fgets(line, sizeof line, fw) && r < 5) {
        if (line[0] == '#') continue;
        char *p = line;
        for (int c = 0; c < 4; c++) {
            table[r][c] = strtod(p, &p);
            if (*p == ',') p++;
        }
        r++;
    }
    int header = 0, rows = 0, bad = 0;
    while (fl && fgets(line, sizeof line, fl)) {
        if (line[0] == '#') continue;
        if (!header) {
            header = strcmp(line, "len,dim,value\n") == 0 ? 1 : -1;
            continue;
        }
        int i, j;
        double v;
        if (sscanf(line, "%d,%d,%lf", &i, &j, &v) != 3 || i != rows / 4 || j != rows % 4 ||
            fabs(v - table[i][j]) > 1e-7)
            bad++;
        rows++;
    }
    if (fl) fclose(fl);
    if (fw) fclose(fw);
    TAP_OK(rc == 0 && rc2 == 0 && header == 1, "--csv-layout long: header 'len,dim,value'");
    TAP_OK(rows == 20 && bad == 0,
           "--csv-layout long: 20 rows (len, dim, value) equal to the wide "
           "table (%d rows, %d differ)",
           rows, bad);
    unlink(csv);
    unlink(wide);
    refused("--csv-layout other",
            (const char *[]){"export", "heatmap", "--csv-layout", "tall", "-o", csv, NULL},
            "--csv-layout 'tall'");

    refused("--font unknown",
            (const char *[]){"export", "heatmap", "--font", "No Such Family", "-o", png, NULL},
            "fall back to 'DejaVu Sans'");
    refused("--size without a unit",
            (const char *[]){"export", "heatmap", "--size", "6x4", "-o", png, NULL},
            "--size '6x4'");
    refused("--size zero",
            (const char *[]){"export", "heatmap", "--size", "0x4in", "-o", png, NULL}, "> 0");
    refused("--size unknown unit",
            (const char *[]){"export", "heatmap", "--size", "6x4ft", "-o", png, NULL}, "unit");
    refused("--size too big",
            (const char *[]){"export", "heatmap", "--size", "100x100in", "--dpi", "300", "-o", png,
                             NULL},
            "30000 x 30000");
    refused("--font-size out of range",
            (const char *[]){"export", "heatmap", "--font-size", "-3", "-o", png, NULL},
            "--font-size -3");
    rm_tree(dir);
    return tap_done();
}
