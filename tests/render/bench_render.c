/* bench_render: time the export path of a typical heavy figure (not a test; prints numbers).
 * A 1024 x 512 sinusoidal encoding as a heatmap with title, axes and colorbar is built for a
 * 1000 x 600 raster target, drawn into an ARGB buffer and written as PNG, N times (argv[1],
 * default 30). Reports the first (cold: font loading) and the median and best of the rest, in
 * wall-clock time and, less sensitive to a busy machine, in CPU time of the whole run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "colormap.h"
#include "figure.h"
#include "raster.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void build(scene *s, const scene_target *t, const float *pe, size_t rows, size_t cols)
{
    const fig_theme *th = fig_theme_get(0);
    scene_reset(s, t->width, t->height, th->bg);
    fig_rect r = {0, 0, t->width, t->height};
    r = fig_title(s, t, th, r, "Sinusoidal positional encoding", "d = 512, base = 10000");
    fig_rect cb = fig_take_right(&r, fig_colorbar_width(t), 0.5 * t->text_h);
    fig_axes a = fig_axes_draw(s, t, th, r, 0, (double)cols, 0, (double)rows, "dimension",
                               "position", FIG_Y_DOWN);
    scene_heatmap(s, a.area.x, a.area.y, a.area.w, a.area.h, pe, rows, cols, cols, -1, 1,
                  cmap_default_diverging(), th->mask);
    fig_colorbar(s, t, th, (fig_rect){cb.x, a.area.y, cb.w, a.area.h}, -1, 1,
                 cmap_default_diverging(), "value");
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 30;
    if (n < 2) n = 2;
    enum { W = 1000, H = 600 };
    const size_t rows = 1024, cols = 512;
    float *pe = malloc(rows * cols * sizeof *pe);
    uint32_t *px = malloc((size_t)W * H * 4);
    double *tb = malloc((size_t)n * sizeof *tb), *td = malloc((size_t)n * sizeof *td);
    double *tp = malloc((size_t)n * sizeof *tp), *tt = malloc((size_t)n * sizeof *tt);
    if (!pe || !px || !tb || !td || !tp || !tt) return 1;
    for (size_t p = 0; p < rows; p++)
        for (size_t i = 0; i < cols; i += 2) {
            double w = pow(10000.0, -(double)i / (double)cols);
            pe[p * cols + i] = (float)sin((double)p * w);
            pe[p * cols + i + 1] = (float)cos((double)p * w);
        }
    char dir[512], path[600], err[256];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/pelab-bench.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) return 1;
    snprintf(path, sizeof path, "%s/fig.png", dir);
    scene s;
    scene_init(&s, W, H, 0xffffff);
    raster_meta meta[] = {{"Software", "pelab bench"}};
    double cpu_total = 0.0;
    for (int k = 0; k < n; k++) {
        double c0 = cpu_ms();
        double t0 = now_ms();
        scene_target t = raster_target(W, H, raster_font_px(W, H, 1));
        build(&s, &t, pe, rows, cols);
        double t1 = now_ms();
        raster_draw_argb(&s, px, W, H, W * 4, 1);
        double t2 = now_ms();
        if (png_write_argb(path, px, W, H, W * 4, 96, meta, 1, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        double t3 = now_ms();
        if (k > 0) cpu_total += cpu_ms() - c0;
        tb[k] = t1 - t0;
        td[k] = t2 - t1;
        tp[k] = t3 - t2;
        tt[k] = t3 - t0;
    }
    FILE *fp = fopen(path, "rb");
    long size = 0;
    if (fp) {
        fseek(fp, 0, SEEK_END);
        size = ftell(fp);
        fclose(fp);
    }
    printf("figure 1000 x 600, heatmap 1024 x 512, %d runs, PNG %ld bytes\n", n, size);
    printf("first run: build %.2f  draw %.2f  png %.2f  total %.2f ms\n", tb[0], td[0], tp[0],
           tt[0]);
    double *all[4] = {tb + 1, td + 1, tp + 1, tt + 1};
    const char *names[4] = {"build", "draw", "png", "total"};
    for (int j = 0; j < 4; j++) {
        qsort(all[j], (size_t)n - 1, sizeof(double), cmp_double);
        printf("%-6s median %6.2f  best %6.2f ms\n", names[j], all[j][(n - 1) / 2], all[j][0]);
    }
    printf("CPU time per figure (runs 2..%d): %.2f ms\n", n, cpu_total / (n - 1));
    unlink(path);
    rmdir(dir);
    scene_free(&s);
    free(pe), free(px), free(tb), free(td), free(tp), free(tt);
    return 0;
}
