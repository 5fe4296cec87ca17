/* test_export.c: `pelab export` end to end, through the real binary: PNG metadata, SVG and PDF
 * reproducible, CSV and NPY equal to the library's numbers, and every bad input refused with
 * its message and exit status, leaving no file behind. argv[1] is the pelab binary. */
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pe.h"
#include "commands.h"
#include "runproc.h"
#include "tap.h"

static const char *pelab;
static char dir[64];
static char errtext[4096];
static int errlines; /* newlines the last run wrote to stderr */

/* Run pelab with args (NULL-terminated), capture stderr into errtext, return the exit status. */
static int run(const char *const *args)
{
    char errpath[128];
    snprintf(errpath, sizeof errpath, "%s/stderr.txt", dir);
    return test_run(pelab, args, NULL, errpath, errtext, sizeof errtext, &errlines);
}

/* Number of entries in dir besides . and .. */
static int dir_entries(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void check_png(const char *path)
{
    FILE *fp = fopen(path, "rb");
    TAP_OK(fp != NULL, "PNG written");
    if (!fp) return;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png))) {
        TAP_OK(0, "PNG readable");
        png_destroy_read_struct(&png, &info, NULL);
        fclose(fp);
        return;
    }
    png_init_io(png, fp);
    png_read_info(png, info);
    TAP_OK(png_get_image_width(png, info) == 800 && png_get_image_height(png, info) == 500,
           "PNG is --width x --height (%ux%u)", png_get_image_width(png, info),
           png_get_image_height(png, info));
    png_textp text;
    int nt = 0;
    png_get_text(png, info, &text, &nt);
    int sw = 0, cmd = 0;
    for (int i = 0; i < nt; i++) {
        if (strcmp(text[i].key, "Software") == 0 && strncmp(text[i].text, "pelab ", 6) == 0) sw = 1;
        if (strcmp(text[i].key, "Command") == 0 && strstr(text[i].text, "export heatmap") &&
            strstr(text[i].text, "--base 500"))
            cmd = 1;
    }
    TAP_OK(sw, "tEXt Software = pelab VERSION");
    TAP_OK(cmd, "tEXt Command holds the command line");
    png_uint_32 rx = 0, ry = 0;
    int unit = 0;
    png_get_pHYs(png, info, &rx, &ry, &unit);
    TAP_OK(unit == PNG_RESOLUTION_METER && rx == 11811 && ry == 11811,
           "pHYs from --dpi 300 = 11811 px/m (%u)", rx);
    png_destroy_read_struct(&png, &info, NULL);
    fclose(fp);
}

int main(int argc, char **argv)
{
    if (argc < 2) return tap_skip_all("usage: test_export PELAB");
    pelab = argv[1];
    tap_tmp_path(dir, sizeof dir, "pelab-export-XXXXXX");
    if (!mkdtemp(dir)) return tap_skip_all("no temporary directory");
    char p1[128], p2[128];

    /* PNG with metadata */
    snprintf(p1, sizeof p1, "%s/h.png", dir);
    int rc = run((const char *[]){"export", "heatmap", "--base", "500", "--width", "800",
                                  "--height", "500", "--dpi", "300", "-o", p1, NULL});
    TAP_OK(rc == 0, "export heatmap PNG exits 0 (%s)", errtext);
    check_png(p1);
    unlink(p1);

    /* every view exports in every figure format */
    const char *views[] = {"heatmap", "similarity", "decay", "alibi", "rope", "wavelength"};
    const char *exts[] = {"png", "svg", "pdf"};
    for (int v = 0; v < 6; v++)
        for (int e = 0; e < 3; e++) {
            snprintf(p1, sizeof p1, "%s/%s.%s", dir, views[v], exts[e]);
            rc = run(
                (const char *[]){"export", views[v], "--len", "64", "--dim", "32", "-o", p1, NULL});
            struct stat sb;
            TAP_OK(rc == 0 && stat(p1, &sb) == 0 && sb.st_size > 200, "export %s .%s (%s)",
                   views[v], exts[e], errtext);
            unlink(p1);
        }

    /* issue 25: a 10M-position context exports at the figure's resolution, with --len alone and
     * with Llama 4 Scout's config (10485760 positions); the views that draw a sample of an (L, L)
     * or (L, d) table, and the ones that summarise */
    const char *src = getenv("PELAB_SRC");
    char scout[1024];
    snprintf(scout, sizeof scout, "%s/tests/config/real/llama-4-scout-17b-16e.json",
             src ? src : ".");
    const char *long_views[] = {"wavelength", "heatmap", "similarity", "alibi", "frequencies"};
    for (int v = 0; v < 5; v++)
        for (int cfg = 0; cfg < 2; cfg++) {
            if (cfg && (v == 2 || v == 3)) continue; /* no RoPE setting to take from a config */
            snprintf(p1, sizeof p1, "%s/long-%s.png", dir, long_views[v]);
            rc = cfg ? run((const char *[]){"export", long_views[v], "--config", scout, "--pe",
                                            "rope", "--len", "10485760", "-o", p1, NULL})
                     : run((const char *[]){"export", long_views[v], "--len", "10000000", "-o", p1,
                                            NULL});
            struct stat sb;
            TAP_OK(rc == 0 && stat(p1, &sb) == 0 && sb.st_size > 200, "export %s at %s (%s)",
                   long_views[v], cfg ? "Scout's 10485760 positions" : "--len 10000000", errtext);
            unlink(p1);
        }

    /* SVG and PDF are reproducible byte for byte */
    for (int e = 1; e < 3; e++) {
        /* the same command twice (the command line, output name included, is in the file) */
        snprintf(p1, sizeof p1, "%s/a.%s", dir, exts[e]);
        snprintf(p2, sizeof p2, "%s/b.%s", dir, exts[e]);
        run((const char *[]){"export", "decay", "-o", p1, NULL});
        rename(p1, p2);
        run((const char *[]){"export", "decay", "-o", p1, NULL});
        size_t n1 = 0, n2 = 0;
        char *a = test_slurp(p1, &n1), *b = test_slurp(p2, &n2);
        TAP_OK(a && b && n1 == n2 && memcmp(a, b, n1) == 0, ".%s identical on two runs (%zu, %zu)",
               exts[e], n1, n2);
        TAP_OK(a && (e == 1 ? strstr(a, "<svg") != NULL : strncmp(a, "%PDF", 4) == 0),
               ".%s has the right signature", exts[e]);
        free(a);
        free(b);
        unlink(p1);
        unlink(p2);
    }

    /* CSV round trip against the library */
    pe_params p;
    pe_params_default(&p);
    p.dim = 8;
    p.len = 16;
    p.base = 100;
    pe_matrix m = {0};
    pe_sinusoidal_table(&p, &m, NULL, 0);
    snprintf(p1, sizeof p1, "%s/h.csv", dir);
    rc = run((const char *[]){"export", "heatmap", "--dim", "8", "--len", "16", "--base", "100",
                              "-o", p1, NULL});
    TAP_OK(rc == 0, "CSV export exits 0");
    FILE *fp = fopen(p1, "r");
    char line[4096];
    int row = 0, bad = 0, cols_ok = 1;
    while (fp && fgets(line, sizeof line, fp)) {
        if (line[0] == '#') continue;
        char *s = line;
        for (int c = 0; c < 8; c++) {
            char *end;
            double v = strtod(s, &end);
            if (end == s) cols_ok = 0;
            if (row < 16 && fabs(v - pe_matrix_row(&m, (size_t)row)[c]) > 1e-7) bad++;
            s = end + (*end == ',');
        }
        row++;
    }
    if (fp) fclose(fp);
    TAP_OK(row == 16 && cols_ok, "CSV has 16 rows of 8 numbers (%d rows)", row);
    TAP_OK(bad == 0, "CSV values equal the library's table (%d differ)", bad);

    /* ALiBi's diagonal is 0 (the first value), never "-0" anywhere */
    rc = run((const char *[]){"export", "alibi", "--heads", "8", "--head", "0", "--len", "16", "-o",
                              p1, NULL});
    fp = fopen(p1, "r");
    int negzero = 0, first0 = -1;
    while (fp && fgets(line, sizeof line, fp)) {
        if (line[0] == '#') continue;
        if (first0 < 0) first0 = strncmp(line, "0,", 2) == 0;
        for (char *q = line; (q = strstr(q, "-0")) != NULL; q += 2)
            negzero += (q[2] == ',' || q[2] == '\n') && (q == line || q[-1] == ',');
    }
    if (fp) fclose(fp);
    TAP_OK(rc == 0 && first0 == 1 && negzero == 0,
           "ALiBi CSV starts with 0 and has no -0 (%d found)", negzero);
    unlink(p1);

    /* NPY round trip: header and raw float32 equal to the library */
    snprintf(p1, sizeof p1, "%s/h.npy", dir);
    rc = run((const char *[]){"export", "heatmap", "--dim", "8", "--len", "16", "--base", "100",
                              "-o", p1, NULL});
    size_t n = 0;
    char *npy = test_slurp(p1, &n);
    TAP_OK(rc == 0 && npy && memcmp(npy, "\x93NUMPY", 6) == 0, "NPY magic");
    if (npy && n > 10) {
        size_t hl = (unsigned char)npy[8] | (size_t)(unsigned char)npy[9] << 8;
        TAP_OK((10 + hl) % 64 == 0, "NPY header padded to 64 bytes");
        TAP_OK(strstr(npy + 10, "'descr': '<f4'") && strstr(npy + 10, "'shape': (16, 8)"),
               "NPY says float32, shape (16, 8)");
        TAP_OK(n == 10 + hl + 16 * 8 * 4 && memcmp(npy + 10 + hl, m.data, 16 * 8 * 4) == 0,
               "NPY data equals the library's floats bit for bit");
    }
    free(npy);
    unlink(p1);
    pe_matrix_free(&m);

    /* ALiBi numbers: (heads, L, L) with -inf above the diagonal */
    snprintf(p1, sizeof p1, "%s/a.npy", dir);
    rc = run((const char *[]){"export", "alibi", "--len", "5", "-o", p1, NULL});
    npy = test_slurp(p1, &n);
    if (rc == 0 && npy) {
        size_t hl = (unsigned char)npy[8] | (size_t)(unsigned char)npy[9] << 8;
        const float *f = (const float *)(npy + 10 + hl);
        TAP_OK(strstr(npy + 10, "(8, 5, 5)") != NULL, "alibi NPY shape (8, 5, 5)");
        TAP_OK(f[4 * 5 + 0] == -2.0f && f[4 * 5 + 3] == -0.5f && f[4 * 5 + 4] == 0.0f &&
                   isinf(f[0 * 5 + 1]) && f[0 * 5 + 1] < 0,
               "head 0 row 4 = -2 .. 0 and -inf above the diagonal (reference)");
    } else {
        TAP_OK(0, "alibi NPY export (%s)", errtext);
    }
    free(npy);
    unlink(p1);

    /* bad input: message, exit status 2, nothing written */
    TAP_OK(dir_entries() == 0, "the directory is empty before the bad-input checks");
    snprintf(p1, sizeof p1, "%s/bad.png", dir);
    snprintf(p2, sizeof p2, "%s/bad.csv", dir);
    char notdir[128], missing[128];
    snprintf(notdir, sizeof notdir, "%s/file.txt", dir);
    snprintf(missing, sizeof missing, "%s/no/such/dir/x.png", dir);
    struct {
        const char *args[16];
        int status;
        const char *msg;
    } bad_cases[] = {
        {{"export", "heatmpa", "-o", p1}, 2, "did you mean 'heatmap'"},
        {{"export", "heatmap", "--pe", "sinusodal", "-o", p1}, 2, "did you mean 'sinusoidal'"},
        {{"export", "heatmap", "--base", "abc", "-o", p1}, 2, "--base 'abc'"},
        {{"export", "heatmap", "--base", "nan", "-o", p1}, 2, "--base nan"},
        {{"export", "heatmap", "--base", "inf", "-o", p1}, 2, "--base inf"},
        {{"export", "heatmap", "--base", "1", "-o", p1}, 2, "--base 1"},
        {{"export", "heatmap", "--dim", "7", "-o", p1}, 2, "--dim 7"},
        {{"export", "heatmap", "--dim", "0", "-o", p1}, 2, "--dim 0"},
        {{"export", "heatmap", "--len", "-5", "-o", p1}, 2, "--len -5"},
        {{"export", "alibi", "--heads", "0", "-o", p1}, 2, "--heads 0"},
        /* issue 25: the figures draw at their resolution at any length; the full-resolution
         * data that does not fit is refused (a runtime error: the budget, status 1) */
        {{"export", "heatmap", "--len", "200000", "--dim", "4096", "-o", p2}, 1, "memory budget"},
        {{"export", "alibi", "--len", "60000", "-o", p2},
         1,
         "needs 219727 MiB, more than the memory budget"},
        {{"export", "xl", "--len", "10000000", "--dim", "128", "-o", p2},
         1,
         "the data (4 x 10000000 x 10000000 values) needs 1525878906 MiB, more than the memory "
         "budget"},
        {{"export", "heatmap", "-o", missing}, 2, "does not exist"},
        {{"export", "heatmap", "-o", "x.bmp"}, 2, "unknown extension"},
        {{"export", "heatmap", "--bsae", "100", "-o", p1}, 2, "did you mean --base"},
        {{"export", "heatmap"}, 2, "-o FILE is required"},
        {{"export", "-o", p1}, 2, "name a view"},
        {{"export", "heatmap", "--pairing", "halves", "-o", p1}, 2, "interleaved|half"},
        {{"export", "heatmap", "--width", "10", "-o", p1}, 2, "--width 10"},
        {{"export", "heatmap", "--pe", "alibi", "-o", p1}, 2, "adds nothing to the input"},
        {{"frobnicate"}, 2, "unknown command"},
    };
    FILE *nf = fopen(notdir, "w");
    fputs("keep me\n", nf);
    fclose(nf);
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        rc = run(bad_cases[i].args);
        int one_line = errlines == 1;
        TAP_OK(rc == bad_cases[i].status && strstr(errtext, bad_cases[i].msg) && one_line,
               "bad input %zu: exit %d, one line with '%s': %s", i, rc, bad_cases[i].msg, errtext);
        TAP_OK(dir_entries() == 1, "bad input %zu leaves no file", i);
    }
    /* a path under a regular file */
    char under[160];
    snprintf(under, sizeof under, "%s/x.png", notdir);
    rc = run((const char *[]){"export", "heatmap", "-o", under, NULL});
    TAP_OK(rc == 2 && strstr(errtext, "-o "), "an output under a regular file is refused: %s",
           errtext);
    size_t kn = 0;
    char *keep = test_slurp(notdir, &kn);
    TAP_OK(keep && strcmp(keep, "keep me\n") == 0, "and the file is untouched");
    free(keep);
    /* an existing output is replaced whole, and a refused export leaves it as it was */
    snprintf(p1, sizeof p1, "%s/keep.csv", dir);
    run((const char *[]){"export", "decay", "-o", p1, NULL});
    size_t before = 0;
    char *b1 = test_slurp(p1, &before);
    rc = run((const char *[]){"export", "decay", "--dim", "7", "-o", p1, NULL});
    size_t after = 0;
    char *b2 = test_slurp(p1, &after);
    TAP_OK(rc == 2 && b1 && b2 && before == after && memcmp(b1, b2, before) == 0,
           "a refused export leaves the existing file as it was");
    free(b1);
    free(b2);
    unlink(p1);
    /* the budget's refusal names the data's real shape and sizes */
    snprintf(p2, sizeof p2, "%s/big.npy", dir);
    rc = run((const char *[]){"export", "alibi", "--max-memory", "64", "--len", "4096", "--heads",
                              "1", "-o", p2, NULL});
    TAP_OK(rc == 1 &&
               strstr(errtext, "the data (1 x 4096 x 4096 values) needs 128 MiB, more than "
                               "the memory budget of 64 MiB") &&
               !strstr(errtext, " 0 MiB") && errlines == 1,
           "past the budget: exit 1, shape and sizes (%s)", errtext);

    /* every command of the table takes --help: its usage, exit 0, nothing on stderr */
    int helps = 0, nc = 0;
    char nohelp[256] = "";
    for (size_t i = 0; i < app_command_count(); i++) {
        const app_command *c = app_command_at(i);
        if (!c->name[0]) continue;
        nc++;
        int hrc = run((const char *[]){c->name, "--help", NULL});
        if (hrc == 0 && errtext[0] == '\0')
            helps++;
        else
            snprintf(nohelp, sizeof nohelp, "%s: %d %.200s", c->name, hrc, errtext);
    }
    TAP_OK(nc > 5 && helps == nc, "every command answers --help with exit 0 (%d of %d) %s", helps,
           nc, nohelp);

    unlink(notdir);
    TAP_OK(dir_entries() == 0, "no temporary files left behind");
    rmdir(dir);

    /* pelab list: one name column for every table (no name runs into its text), and a kind
     * column ("sequential") that the description does not repeat */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "'%s' list", pelab);
    FILE *lp = popen(cmd, "r");
    char ln[512];
    int col = -1, aligned = 1, repeats = 0, rows = 0;
    while (lp && fgets(ln, sizeof ln, lp)) {
        if (strncmp(ln, "  ", 2) != 0) continue;
        rows++;
        const char *name_end = ln + 2 + strcspn(ln + 2, " ");
        int c = (int)(name_end - ln) + (int)strspn(name_end, " ");
        if (strncmp(name_end, "  ", 2) != 0) aligned = 0;
        if (col < 0) col = c;
        if (c != col) aligned = 0;
        char kind[32] = "", first[32] = "";
        if (sscanf(ln + c, "%31s %31s", kind, first) == 2 && strcmp(kind, first) == 0) repeats++;
        if (strstr(ln, "sequential") && strstr(strstr(ln, "sequential") + 1, "sequential"))
            repeats++;
    }
    int lrc = lp ? pclose(lp) : -1;
    TAP_OK(lrc == 0 && rows > 20 && aligned && repeats == 0,
           "pelab list: %d rows, names in one column (%d), no repeated words (%d)", rows, col,
           repeats);
    return tap_done();
}
