/* test_anim_frames.c: the README's attention animation, decoded (issue 26, done-when 4). `pelab
 * export attention --model rope --preset toy --animate step=0:20:21 -o DIR/` writes its 21
 * frames as PNGs; each is read back pixel by pixel, its bar chart found (the solid bars of the
 * highlight colours standing on one baseline in the left part of the figure) and compared with
 * the single-frame export of the same step (`--step K`) and with the numbers of that step
 * (`--step K -o K.csv`, the mean over the heads of the last query row, as the bars show):
 * - both draw one bar per token with its height the token's weight times one scale (within
 *   1.5 px): the single frame at its own scale, every animated frame at the same scale (the
 *   sweep's fixed y axis);
 * - the animated bars stand at x0 + j dx, the same x0 and dx in every frame (the fixed x axis),
 *   no wider than a slot, none over another (frames 0-8 drew them many tokens wide, overlapping
 *   and out of the axes).
 * argv[1] is the pelab binary; the shipped rope model must be there (it is in assets/models). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "render/pngio.h"
#include "runproc.h"
#include "tap.h"

enum { STEPS = 21, MAXBARS = 64, MAXCOMP = 4096 };

static const char *pelab;
static char dir[4096];
static char errtext[4096];
static int errlines;

static int run(const char *const *args, const char *out)
{
    char errpath[4200];
    snprintf(errpath, sizeof errpath, "%s/stderr", dir);
    return test_run(pelab, args, out, errpath, errtext, sizeof errtext, &errlines);
}

typedef struct bar {
    int x0, x1, y0, y1; /* inclusive pixel box */
} bar;

/* the bar colours of the attention view: the other tokens (#0072b2) and the current one
 * (#d55e00) */
static const int colours[2][3] = {{0x00, 0x72, 0xb2}, {0xd5, 0x5e, 0x00}};

static int is_colour(const png_image_rd *im, int x, int y, int c)
{
    const uint8_t *p = im->rgba + ((size_t)y * (size_t)im->w + (size_t)x) * 4;
    return abs(p[0] - colours[c][0]) <= 12 && abs(p[1] - colours[c][1]) <= 12 &&
           abs(p[2] - colours[c][2]) <= 12;
}

/* The vertical bars of the bar chart, left to right: connected areas of one bar colour that fill
 * their box (text highlights hold letters, so they do not), whose centre is in the left 60% of
 * the figure (the next-token bars are on the right), standing on the baseline most of them share.
 * Returns the count. */
static int bars_below(const png_image_rd *im, int ymax, bar *out)
{
    size_t np = (size_t)im->w * (size_t)im->h;
    int *stack = malloc(np * sizeof *stack);
    unsigned char *seen = calloc(np, 1);
    static bar comp[MAXCOMP];
    int nc = 0;
    for (int c = 0; c < 2 && stack && seen; c++) {
        memset(seen, 0, np);
        for (int y = 0; y < im->h; y++)
            for (int x = 0; x < im->w; x++) {
                size_t at = (size_t)y * (size_t)im->w + (size_t)x;
                if (y > ymax || seen[at] || !is_colour(im, x, y, c)) continue;
                bar b = {x, x, y, y};
                size_t count = 0;
                int top = 0;
                stack[top++] = (int)at;
                seen[at] = 1;
                while (top) {
                    int i = stack[--top], px = i % im->w, py = i / im->w;
                    count++;
                    if (px < b.x0) b.x0 = px;
                    if (px > b.x1) b.x1 = px;
                    if (py < b.y0) b.y0 = py;
                    if (py > b.y1) b.y1 = py;
                    static const int d[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
                    for (int k = 0; k < 4; k++) {
                        int qx = px + d[k][0], qy = py + d[k][1];
                        if (qx < 0 || qy < 0 || qx >= im->w || qy > ymax) continue;
                        size_t q = (size_t)qy * (size_t)im->w + (size_t)qx;
                        if (seen[q] || !is_colour(im, qx, qy, c)) continue;
                        seen[q] = 1;
                        stack[top++] = (int)q;
                    }
                }
                size_t area = (size_t)(b.x1 - b.x0 + 1) * (size_t)(b.y1 - b.y0 + 1);
                if ((double)count >= 0.8 * (double)area && b.y1 - b.y0 >= 1 && b.x1 > b.x0 &&
                    (b.x0 + b.x1) / 2 < im->w * 6 / 10 && nc < MAXCOMP)
                    comp[nc++] = b;
            }
    }
    free(stack);
    free(seen);
    /* the baseline: the bottom row of the tallest (the largest weight's bar; tick labels and
     * text highlights are shorter) */
    int best = -1, tall = 0;
    for (int i = 0; i < nc; i++)
        if (comp[i].y1 - comp[i].y0 + 1 > tall) {
            tall = comp[i].y1 - comp[i].y0 + 1;
            best = comp[i].y1;
        }
    int n = 0;
    for (int i = 0; i < nc && n < MAXBARS; i++)
        if (abs(comp[i].y1 - best) <= 1) out[n++] = comp[i];
    for (int i = 1; i < n; i++) /* by x */
        for (int j = i; j > 0 && out[j].x0 < out[j - 1].x0; j--) {
            bar t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}

/* The bars: found once for the baseline, then again above it only, so that a tick label
 * under a bar (the current token's, in the bar colour) does not join it. */
static int bars_in(const png_image_rd *im, bar *out)
{
    int n = bars_below(im, im->h - 1, out);
    return n > 0 ? bars_below(im, out[0].y1, out) : 0;
}

/* The weights the bars show at step k: the mean over the heads of the last query row of the
 * step's CSV (blocks "# [h]" of k + 1 rows). Returns the count of keys (k + 1) or -1. */
static int weights(const char *csv, int k, double *v)
{
    size_t len = 0;
    char *s = file_read(csv, &len);
    if (!s) return -1;
    int heads = 0, row = 0;
    for (int j = 0; j <= k; j++) v[j] = 0;
    for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] == '#') {
            if (strncmp(line, "# [", 3) == 0) {
                heads++;
                row = 0;
            }
            continue;
        }
        if (heads > 0 && row++ == k) {
            char *p = line;
            for (int j = 0; j <= k; j++) {
                v[j] += strtod(p, &p);
                if (*p == ',') p++;
            }
        }
    }
    free(s);
    if (heads < 1) return -1;
    for (int j = 0; j <= k; j++) v[j] /= heads;
    return k + 1;
}

/* Each bar's token: the slot j its centre is nearest, x0 + j dx (dx <= 0: the least gap between
 * neighbours, x0 <= 0: the first bar's centre, which is token 0's: the first token's weight is
 * never small in this animation, the check below says so). Then the scale c of heights = c v
 * (least squares), the largest miss of a height and of a centre, in pixels, and whether every
 * token without a bar has a weight under 4 px (a bar of a few pixels, its top row blended, is not
 * drawn solid). Returns 0, or -1 when two bars fall in one slot or out of 0..k. */
typedef struct fit {
    double x0, dx, c, hmiss, xmiss;
    int unseen_ok;
} fit;

static int fit_bars(const bar *b, int n, const double *v, int k, double x0, double dx, fit *f)
{
    memset(f, 0, sizeof *f);
    if (n < 1) return -1;
    int first_is_0 = !(x0 > 0); /* the slots come from the first bar: it must be token 0 */
    if (!(x0 > 0)) x0 = (b[0].x0 + b[0].x1) / 2.0;
    if (!(dx > 0) && n > 1) {
        /* the least gap, then the mean over the slots it spans (bars are whole pixels wide, so
         * one gap may be half a pixel short) */
        dx = 1e9;
        for (int i = 1; i < n; i++)
            dx = fmin(dx, (b[i].x0 + b[i].x1) / 2.0 - (b[i - 1].x0 + b[i - 1].x1) / 2.0);
        double span = (b[n - 1].x0 + b[n - 1].x1) / 2.0 - x0;
        if (dx > 0 && lround(span / dx) > 0) dx = span / (double)lround(span / dx);
    }
    if (!(dx > 0)) dx = 1;
    int slot[MAXBARS], have[MAXBARS] = {0};
    double num = 0, den = 0;
    for (int i = 0; i < n; i++) {
        double xc = (b[i].x0 + b[i].x1) / 2.0;
        slot[i] = (int)lround((xc - x0) / dx);
        if (slot[i] < 0 || slot[i] > k || have[slot[i]]) return -1;
        have[slot[i]] = 1;
        f->xmiss = fmax(f->xmiss, fabs(xc - (x0 + slot[i] * dx)));
        num += (b[i].y1 - b[i].y0 + 1) * v[slot[i]];
        den += v[slot[i]] * v[slot[i]];
    }
    f->x0 = x0;
    f->dx = dx;
    f->c = den > 0 ? num / den : 0;
    for (int i = 0; i < n; i++)
        f->hmiss = fmax(f->hmiss, fabs(b[i].y1 - b[i].y0 + 1 - f->c * v[slot[i]]));
    f->unseen_ok = !first_is_0 || n == k + 1 || f->c * v[0] >= 4;
    for (int j = 0; j <= k; j++)
        if (!have[j] && f->c * v[j] >= 4) f->unseen_ok = 0;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) return tap_skip_all("usage: test_anim_frames PELAB");
    pelab = argv[1];
    if (test_tmpdir(dir, sizeof dir, "animframes") != 0)
        return tap_skip_all("no temporary directory");
    char frames[4200];
    snprintf(frames, sizeof frames, "%s/frames/", dir);
    int rc = run((const char *[]){"export", "attention", "--model", "rope", "--preset", "toy",
                                  "--animate", "step=0:20:21", "-o", frames, NULL},
                 NULL);
    if (!TAP_OK(rc == 0,
                "export attention --model rope --preset toy --animate step=0:20:21 -o "
                "DIR/ (%s)",
                errtext))
        return tap_done();

    static bar anim[STEPS][MAXBARS], single[STEPS][MAXBARS];
    static double v[STEPS][MAXBARS];
    int na[STEPS] = {0}, ns[STEPS] = {0}, have[STEPS] = {0};
    for (int k = 0; k < STEPS; k++) {
        char fr[4400], one[4400], csv[4400], ks[16];
        snprintf(fr, sizeof fr, "%sframe-%04d.png", frames, k + 1);
        snprintf(one, sizeof one, "%s/one.png", dir);
        snprintf(csv, sizeof csv, "%s/one.csv", dir);
        snprintf(ks, sizeof ks, "%d", k);
        png_image_rd a, b;
        int ok = png_read_file(fr, &a) == 0;
        TAP_OK(ok, "frame %d decodes (%s)", k, fr);
        if (!ok) continue;
        ok = run((const char *[]){"export", "attention", "--model", "rope", "--preset", "toy",
                                  "--step", ks, "-o", one, NULL},
                 NULL) == 0 &&
             run((const char *[]){"export", "attention", "--model", "rope", "--preset", "toy",
                                  "--step", ks, "-o", csv, NULL},
                 NULL) == 0 &&
             png_read_file(one, &b) == 0;
        int nv = ok ? weights(csv, k, v[k]) : -1;
        TAP_OK(ok && nv == k + 1, "step %d: the single-frame export and its numbers (%s)", k,
               errtext);
        if (ok) {
            have[k] = nv == k + 1;
            ns[k] = bars_in(&b, single[k]);
            na[k] = bars_in(&a, anim[k]);
            png_image_rd_free(&b);
        }
        png_image_rd_free(&a);
        unlink(one);
        unlink(csv);
    }
    /* the fixed x axis: the slots of the last frame, where every token has come */
    fit last = {0};
    int L = STEPS - 1;
    int okl = have[L] && fit_bars(anim[L], na[L], v[L], L, 0, 0, &last) == 0;
    TAP_OK(okl && last.dx > 2 && last.xmiss <= 1.5 && last.unseen_ok,
           "the last animated frame: %d bars on slots %.1f px apart (%.2f px off at most), a bar "
           "for every weight of 4 px or more",
           na[L], last.dx, last.xmiss);
    /* heights and weights of every animated bar (at most STEPS x MAXBARS) */
    static double hs[STEPS * MAXBARS], ws[STEPS * MAXBARS];
    int nh = 0;
    double num = 0, den = 0;
    for (int k = 0; k < STEPS && okl; k++) {
        if (!have[k]) continue;
        fit fs, fa;
        int oks = fit_bars(single[k], ns[k], v[k], k, 0, 0, &fs) == 0;
        TAP_OK(oks && fs.c > 0 && fs.hmiss <= 1.5 && fs.xmiss <= 1.5 && fs.unseen_ok,
               "step %d: the single frame's %d bars are the weights times %.1f px (%.2f px off "
               "at most), on slots (%.2f px off), every weight of 4 px drawn",
               k, ns[k], fs.c, fs.hmiss, fs.xmiss);
        int oka = fit_bars(anim[k], na[k], v[k], k, last.x0, last.dx, &fa) == 0;
        TAP_OK(oka && fa.c > 0 && fa.hmiss <= 1.5 && fa.xmiss <= 1.5 && fa.unseen_ok,
               "step %d: the animated frame's %d bars are the same weights times %.1f px (%.2f "
               "px off at most), on the last frame's slots (%.2f px off), every weight of 4 px "
               "drawn",
               k, na[k], fa.c, fa.hmiss, fa.xmiss);
        /* every bar of every frame into one fit: height = c x weight with one c */
        for (int j = 0; oka && j < na[k]; j++) {
            int sl = (int)lround(((anim[k][j].x0 + anim[k][j].x1) / 2.0 - fa.x0) / fa.dx);
            if (sl < 0 || sl > k) continue;
            double h = anim[k][j].y1 - anim[k][j].y0 + 1;
            num += h * v[k][sl];
            den += v[k][sl] * v[k][sl];
            hs[nh] = h;
            ws[nh] = v[k][sl];
            nh++;
        }
        int apart = 1;
        double widest = 0;
        for (int j = 0; j < na[k]; j++) {
            if (j > 0) apart &= anim[k][j].x0 > anim[k][j - 1].x1;
            widest = fmax(widest, anim[k][j].x1 - anim[k][j].x0 + 1);
        }
        TAP_OK(apart && widest <= last.dx,
               "step %d: the animated bars do not overlap, none wider than a slot (%.0f px of "
               "%.1f)",
               k, widest, last.dx);
    }
    /* One y axis for every frame: a single pixels-per-weight c fits every bar of every frame
     * to a pixel at each end (a bar's top and bottom edges each round to a whole pixel: 2 px; the
     * label band sized to the tokens so far moved the axis: 10.5 px off). The frames' own slopes
     * are no test of this: a late frame's bars are 4-13 px tall, where a pixel of rounding is 8-25%
     * of c.
     */
    double c = den > 0 ? num / den : 0, worst = 0;
    for (int i = 0; i < nh; i++) worst = fmax(worst, fabs(hs[i] - c * ws[i]));
    TAP_OK(nh > STEPS && c > 0 && worst <= 2.0,
           "every animated frame draws on one y axis: %d bars of %d frames are their weights "
           "times %.1f px, %.2f px off at most",
           nh, STEPS, c, worst);
    for (int k = 1; k <= STEPS; k++) {
        char fr[4400];
        snprintf(fr, sizeof fr, "%sframe-%04d.png", frames, k);
        unlink(fr);
    }
    rmdir(frames);
    char errpath[4200];
    snprintf(errpath, sizeof errpath, "%s/stderr", dir);
    unlink(errpath);
    rmdir(dir);
    return tap_done();
}
