/* bench.c: `pelab bench`, the speed figures for this machine. Every figure is the median of
 * several runs (wall clock, CLOCK_MONOTONIC) next to its target; nothing here is a pass/fail
 * test, so a busy machine gives slower numbers, never a red build. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "attn.h"
#include "cellgrid.h"
#include "cli.h"
#include "explorer.h"
#include "model.h"
#include "commands.h"
#include "export.h"
#include "frontend.h"
#include "options.h"
#include "raster.h"
#include "views.h"
#include "window.h"

int app_bench_model(int quick, const char *part, double peak_gflops);
int app_bench_lm(int quick);
int app_bench_race(int quick, int steps);

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/* CPU time of this process: on a machine shared with other work the wall clock counts their
 * time slices too, so the large benchmark prints both. */
static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void machine_line(void)
{
    struct utsname u;
    char cpu[256] = "unknown CPU";
    FILE *fp = fopen("/proc/cpuinfo", "r");
    if (fp) {
        char line[512];
        while (fgets(line, sizeof line, fp))
            if (strncmp(line, "model name", 10) == 0) {
                char *c = strchr(line, ':');
                if (c) snprintf(cpu, sizeof cpu, "%s", c + 2);
                cpu[strcspn(cpu, "\n")] = '\0';
                break;
            }
        fclose(fp);
    }
    uname(&u);
    printf("machine: %s, %ld cores online, %s %s\n", cpu, sysconf(_SC_NPROCESSORS_ONLN), u.sysname,
           u.machine);
}

/* memset through a pointer the compiler cannot see through, so a store that a later one
 * overwrites is still made (otherwise the "fresh" memset below is optimised away) */
static void *(*volatile bench_memset)(void *, int, size_t) = memset;

/* The peaks bench_peak measured (0 until it ran): the other figures are given as a share. */
static double bench_peak_gflops, bench_write_gbs;

/* The sinusoidal table at two sizes against both floors of writing its bytes: a memset into a
 * fresh malloc (page faults included, 4 KiB pages) and a memset of memory already mapped. */
static void bench_table_size(int runs, int len, int dim)
{
    pe_params p;
    pe_params_default(&p);
    p.len = len;
    p.dim = dim;
    size_t bytes = (size_t)p.len * (size_t)p.dim * sizeof(float);
    double t_gen[32], t_fresh[32], t_warm[32];
    char err[256];
    for (int r = 0; r < runs; r++) {
        pe_matrix m = {0};
        double t0 = now_ms();
        if (pe_sinusoidal_table(&p, &m, err, sizeof err) < 0) {
            printf("sinusoidal table: %s\n", err);
            return;
        }
        t_gen[r] = now_ms() - t0;
        float *fresh = malloc(bytes);
        if (!fresh) {
            pe_matrix_free(&m);
            return;
        }
        t0 = now_ms();
        bench_memset(fresh, r & 1 ? 0x11 : 0x22, bytes);
        t_fresh[r] = now_ms() - t0;
        t0 = now_ms();
        bench_memset(fresh, r & 1 ? 0x22 : 0x11, bytes);
        t_warm[r] = now_ms() - t0;
        volatile float sink = fresh[bytes / sizeof(float) - 1] + m.data[bytes / sizeof(float) - 1];
        (void)sink;
        free(fresh);
        pe_matrix_free(&m);
    }
    double g = median(t_gen, runs), f = median(t_fresh, runs), w = median(t_warm, runs);
    printf("sinusoidal table L=%d d=%d (%.0f MiB): %.2f ms, %.1f GB/s", len, dim, bytes / 1048576.0,
           g, bytes / g / 1e6);
    if (bench_write_gbs > 0)
        printf(" (%.0f%% of the write peak)", 100 * bytes / g / 1e6 / bench_write_gbs);
    printf("; memset of the same bytes into a fresh malloc %.2f ms (pelab %.2fx), of mapped "
           "memory %.2f ms (pelab %.2fx)\n",
           f, g / f, w, g / w);
}

static void bench_table(int runs)
{
    bench_table_size(runs, 8192, 1024);
    bench_table_size(runs < 5 ? runs : 5, 8192, 4096);
}

/* A fresh folder for the bench's files under $TMPDIR (the system's temporary folder when unset);
 * NULL when it cannot be made. bench_lm.c's folder too. */
char *app_bench_tmpdir(char *buf, size_t n);
char *app_bench_tmpdir(char *buf, size_t n)
{
    const char *t = getenv("TMPDIR");
    snprintf(buf, n, "%s/pelab-bench-XXXXXX", t && *t ? t : "/tmp");
    return mkdtemp(buf);
}

static void bench_export(int runs)
{
    app_state st;
    app_state_default(&st);
    st.p.len = 1024;
    st.p.dim = 512;
    st.view = app_view_find("heatmap");
    char dir[512];
    if (!app_bench_tmpdir(dir, sizeof dir)) {
        printf("export: cannot make a temporary directory\n");
        return;
    }
    char path[640];
    snprintf(path, sizeof path, "%s/heatmap.png", dir);
    app_export_opts o = {1000, 600, 96};
    double t[32];
    char err[512];
    for (int r = 0; r < runs; r++) {
        double t0 = now_ms();
        if (app_export_file(&st, path, &o, err, sizeof err) != 0) {
            printf("export: %s\n", err);
            break;
        }
        t[r] = now_ms() - t0;
    }
    printf("export heatmap 1024x512 -> 1000x600 PNG (table, scene, cairo, libpng, rename): "
           "%.1f ms (target < 50 ms)\n",
           median(t, runs));
    remove(path);
    rmdir(dir);
}

/* The RoPE spin as an animation, the whole process (start, 64 frames drawn, one palette, GIF or
 * WebP encoded, renamed) as a user runs it: this binary again through fork and exec. */
static void bench_animation(int runs)
{
    char dir[512];
    if (!app_bench_tmpdir(dir, sizeof dir)) {
        printf("animation: cannot make a temporary directory\n");
        return;
    }
    printf("animation: rope view, 64 frames at 800x600 sweeping m (pos=0:63:64), whole process "
           "(target >= 10x faster than matplotlib + PillowWriter, tests/peers/"
           "matplotlib_rope_anim.py):\n");
    static const char *const exts[] = {"gif", "webp"};
    for (int e = 0; e < 2; e++) {
        char path[640];
        snprintf(path, sizeof path, "%s/rope.%s", dir, exts[e]);
        double t[32];
        int ok = 1;
        for (int r = 0; r < runs && ok; r++) {
            double t0 = now_ms();
            pid_t pid = fork();
            if (pid == 0) {
                int nul = open("/dev/null", O_WRONLY);
                if (nul >= 0) dup2(nul, 1);
                execl("/proc/self/exe", "pelab", "export", "rope", "--animate", "pos=0:63:64",
                      "--width", "800", "--height", "600", "-o", path, (char *)NULL);
                _exit(127);
            }
            int status = 0;
            ok = pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
                 WEXITSTATUS(status) == 0;
            t[r] = now_ms() - t0;
        }
        struct stat sb;
        if (!ok || stat(path, &sb) != 0) {
            printf("  .%s: the export failed\n", exts[e]);
            continue;
        }
        printf("  .%-4s %7.0f ms  %6.0f kB\n", exts[e], median(t, runs), (double)sb.st_size / 1e3);
        remove(path);
    }
    rmdir(dir);
}

/* Turn, on run r, a parameter that the current view depends on (alternating two values):
 * the base for most figures, the slopes for ALiBi, the step for the attention views, the data
 * file's view reads a file and has none. */
static void bench_knob(app_explorer *x, int r)
{
    const char *v = app_view_at((size_t)x->st.view)->name;
    if (strcmp(v, "alibi") == 0)
        x->st.p.slope_ratio = r % 2 ? 0.5 : 0.6;
    else if (strcmp(v, "attention") == 0 || strcmp(v, "compare") == 0)
        x->st.attn.step = r % 2 ? 20 : 21;
    else if (strcmp(v, "t5") == 0)
        x->st.p.t5_buckets = r % 2 ? 32 : 30;
    else if (strcmp(v, "xpos") == 0)
        x->st.p.xpos_scale_base = r % 2 ? 512 : 256;
    else
        x->st.p.base = r % 2 ? 10000 : 20000;
}

/* An explorer on view v at the benchmark's size (L=1024, d=512); the RoPE figures draw RoPE. */
static app_explorer *bench_explorer(size_t v, int gui)
{
    app_explorer *x = calloc(1, sizeof *x);
    if (!x) return NULL;
    app_state st;
    app_state_default(&st);
    st.p.len = 1024;
    st.p.dim = 512;
    st.view = (int)v;
    if (strcmp(app_view_at(v)->name, "rope") == 0 ||
        strcmp(app_view_at(v)->name, "wavelength") == 0)
        st.enc = pe_encoding_find("rope");
    app_explorer_init(x, &st, gui);
    return x;
}

/* Rebuild and rasterise every view after a parameter change, as the explorer does per frame. */
static void bench_views_tui(int runs)
{
    printf("terminal frame after a parameter change, 200x60 cells, L=1024 d=512 (target < 16 "
           "ms):\n");
    cellgrid g;
    if (cellgrid_init(&g, 200, 60, 0) < 0) return;
    scene s;
    scene_init(&s, 1, 1, 0);
    scene_target t = cellgrid_target(200, 60);
    for (size_t v = 0; v < app_view_count(); v++) {
        app_explorer *x = bench_explorer(v, 0);
        if (!x) break;
        double tm[32];
        for (int r = 0; r < runs; r++) {
            /* change a parameter the view depends on, so its caches cannot answer */
            bench_knob(x, r);
            double t0 = now_ms();
            app_explorer_frame(x, &s, &t);
            cellgrid_render(&g, &s);
            tm[r] = now_ms() - t0;
        }
        printf("  %-12s %6.2f ms%s\n", app_view_at(v)->name, median(tm, runs),
               x->view_error[0] ? "  (view error!)" : "");
        app_explorer_free(x);
        free(x);
    }
    scene_free(&s);
    cellgrid_free(&g);
}

/* A window of exactly w x h drawable pixels to time the upload too, or NULL (then the frame is
 * timed up to the cairo drawing). Without a display the SDL dummy driver stands in; its upload
 * is a copy into memory, so the figure is a lower bound of what a GPU upload costs. */
static window *bench_window(int w, int h, const char **how)
{
    int headless = !getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY");
    if (headless && !getenv("SDL_VIDEODRIVER")) setenv("SDL_VIDEODRIVER", "dummy", 1);
    window *win = NULL;
    char err[256];
    if (window_open(&win, "pelab bench", w, h, err, sizeof err) != 0) {
        *how = "build + cairo draw; no window could open";
        return NULL;
    }
    int ww = 0, wh = 0;
    window_size(win, &ww, &wh);
    if (ww != w || wh != h) { /* a screen smaller than the figure, or HiDPI scaling */
        window_close(win);
        *how = "build + cairo draw; the window could not take this size";
        return NULL;
    }
    *how = getenv("SDL_VIDEODRIVER") && strcmp(getenv("SDL_VIDEODRIVER"), "dummy") == 0
               ? "build + cairo draw + upload, SDL dummy driver"
               : "build + cairo draw + upload to the window's texture";
    return win;
}

static void bench_views_gui(int runs, int w, int h)
{
    const char *how = "";
    window *win = bench_window(w, h, &how);
    printf("window frame (%s) per view at %dx%d, L=1024 d=512 (target < 8 ms at 1280x800):\n", how,
           w, h);
    uint32_t *px = malloc((size_t)w * (size_t)h * 4);
    if (!px) {
        window_close(win);
        return;
    }
    scene s;
    scene_init(&s, 1, 1, 0);
    scene_target t = raster_target(w, h, raster_font_px(w, h, 1));
    for (size_t v = 0; v < app_view_count(); v++) {
        app_explorer *x = bench_explorer(v, 1);
        if (!x) break;
        double tm[32];
        for (int r = 0; r < runs; r++) {
            /* the window redraws for the cursor and the animation far more often than the
             * parameters change, so the cached case is what sets the frame rate; the present
             * is left out, as with vsync it waits for the display. A message in the status line
             * makes each frame differ from the last, so it is drawn (window_draw only copies a
             * frame equal to the last one) */
            snprintf(x->message, sizeof x->message, "bench frame %d", r);
            double t0 = now_ms();
            app_explorer_frame(x, &s, &t);
            if (win)
                window_draw(win, &s);
            else
                raster_draw_argb(&s, px, w, h, w * 4, 1);
            tm[r] = now_ms() - t0;
        }
        printf("  %-12s %6.2f ms\n", app_view_at(v)->name, median(tm, runs));
        app_explorer_free(x);
        free(x);
    }
    scene_free(&s);
    free(px);
    window_close(win);
}

/* The attention views: one step (the Right key, the frame, the drawing) for every shipped
 * model, through the explorer exactly as the terminal and the window run it. The first frame
 * (checkpoint load and the run over the prompt) and one generated token are timed too. */
static void bench_attention(int runs)
{
    printf("attention view per shipped model: one step (key + frame + draw, preset toy), one "
           "generated token (preset start), the first frame (load + run) (target < 16 ms):\n");
    cellgrid g;
    if (cellgrid_init(&g, 200, 60, 0) < 0) return;
    int w = 1280, h = 800;
    uint32_t *px = malloc((size_t)w * (size_t)h * 4);
    scene s;
    scene_init(&s, 1, 1, 0);
    scene_target tt = cellgrid_target(200, 60);
    scene_target tw = raster_target(w, h, raster_font_px(w, h, 1));
    int found = 0;
    for (size_t m = 0; app_attn_model_names[m] && px; m++) {
        char path[1100], err[512];
        if (app_attn_model_path(app_attn_model_names[m], path, sizeof path, err, sizeof err) < 0)
            continue;
        found++;
        for (int gui = 0; gui < 2; gui++) {
            app_explorer *x = calloc(1, sizeof *x);
            if (!x) break;
            app_state st;
            app_state_default(&st);
            st.view = app_view_find("attention");
            snprintf(st.attn.model_name, sizeof st.attn.model_name, "%s", app_attn_model_names[m]);
            app_explorer_init(x, &st, gui);
            double t0 = now_ms();
            app_explorer_frame(x, &s, gui ? &tw : &tt);
            double first = now_ms() - t0;
            double tm[32], tg[32];
            ui_event ev = {0};
            ev.type = UI_EV_KEY;
            for (int r = 0; r < runs; r++) {
                ev.key = r % 2 ? UI_KEY_RIGHT : UI_KEY_LEFT; /* back and forth through the text */
                t0 = now_ms();
                app_explorer_event(x, &ev);
                app_explorer_frame(x, &s, gui ? &tw : &tt);
                if (gui)
                    raster_draw_argb(&s, px, w, h, w * 4, 1);
                else
                    cellgrid_render(&g, &s);
                tm[r] = now_ms() - t0;
            }
            /* generation from a short prompt, so every key press makes a token */
            snprintf(x->st.attn.preset, sizeof x->st.attn.preset, "start");
            x->st.attn.step = -1;
            app_explorer_frame(x, &s, gui ? &tw : &tt);
            for (int r = 0; r < runs; r++) {
                ev.key = 'g';
                t0 = now_ms();
                app_explorer_event(x, &ev);
                app_explorer_frame(x, &s, gui ? &tw : &tt);
                if (gui)
                    raster_draw_argb(&s, px, w, h, w * 4, 1);
                else
                    cellgrid_render(&g, &s);
                tg[r] = now_ms() - t0;
            }
            printf("  %-10s %-16s step %6.2f ms   generate one token %6.2f ms   first frame "
                   "%6.1f ms%s\n",
                   app_attn_model_names[m], gui ? "window 1280x800" : "terminal 200x60",
                   median(tm, runs), median(tg, runs), first,
                   x->view_error[0] ? "  (view error!)" : "");
            app_explorer_free(x);
            free(x);
        }
    }
    if (!found)
        printf("  no shipped models in assets/models (assets/models/README.md says how to train "
               "them)\n");
    scene_free(&s);
    free(px);
    cellgrid_free(&g);
}

/* The arithmetic and memory limits of this machine, which the figures below are read against:
 * a multiply-add loop on one core and on every core, and memory bandwidth (a sum over 256 MiB,
 * a memset of 256 MiB already mapped). Sets bench_peak_gflops and bench_write_gbs. */
static void bench_peak(int runs)
{
    int cpus = model_cpus();
    double one = model_peak_gflops(1), all = cpus > 1 ? model_peak_gflops(cpus) : one;
    bench_peak_gflops = one;
    size_t bytes = (size_t)256 << 20, n = bytes / sizeof(uint64_t);
    uint64_t *buf = malloc(bytes);
    if (!buf) return;
    bench_memset(buf, 1, bytes);
    double tr[32], tw[32];
    volatile uint64_t sink = 0;
    for (int r = 0; r < runs; r++) {
        double t0 = now_ms();
        uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (size_t i = 0; i < n; i += 4) {
            s0 += buf[i];
            s1 += buf[i + 1];
            s2 += buf[i + 2];
            s3 += buf[i + 3];
        }
        sink += s0 + s1 + s2 + s3;
        tr[r] = now_ms() - t0;
        t0 = now_ms();
        bench_memset(buf, r & 1, bytes);
        tw[r] = now_ms() - t0;
    }
    (void)sink; /* the sums are kept (volatile), never read */
    free(buf);
    double rd = bytes / median(tr, runs) / 1e6, wr = bytes / median(tw, runs) / 1e6;
    bench_write_gbs = wr;
    printf("peak: multiply-add loop %.1f GFLOP/s on 1 core, %.1f on %d (per CPU second); memory "
           "(one core) read "
           "%.1f GB/s, write %.1f GB/s (memset of mapped memory)\n",
           one, all, cpus, rd, wr);
}

/* The parts of the bench, in the order they run; --only picks one. */
static const struct bench_part {
    const char *name;
    const char *what;
} bench_parts[] = {
    {"peak", "arithmetic and memory limits"},
    {"table", "a sinusoidal table against memset"},
    {"export", "PNG export, and the RoPE animation as a whole process"},
    {"views", "terminal frames"},
    {"window", "window frames"},
    {"attention", "attention view steps"},
    {"train", "model training, 1 thread and every core"},
    {"loaded", "model training beside a busy process"},
    {"eval", "model evaluation and one token through the KV cache"},
    {"real", "real checkpoints (llama2.c, Hugging Face): prompt and decoding, 1 and 2 threads"},
    {"race", "the position race: the default race's wall time, the live display's cost"},
};
enum { N_PARTS = sizeof bench_parts / sizeof bench_parts[0] };

static int bench_part_find(const char *name)
{
    for (int i = 0; i < N_PARTS; i++)
        if (!strcmp(bench_parts[i].name, name)) return i;
    return -1;
}

static int bench_race_steps; /* --steps: the race part's steps per scheme (0: its own) */

static int bench_run_part(int part, int quick, int runs)
{
    switch (part) {
    case 0:
        bench_peak(runs);
        return 0;
    case 1:
        bench_table(runs);
        return 0;
    case 2:
        bench_export(runs);
        bench_animation(quick ? 1 : 5);
        return 0;
    case 3:
        bench_views_tui(runs);
        return 0;
    case 4:
        bench_views_gui(runs, 1280, 800);
        bench_views_gui(quick ? 1 : 5, 2560, 1600);
        return 0;
    case 5:
        bench_attention(runs);
        return 0;
    default:
        if (!strcmp(bench_parts[part].name, "real")) return app_bench_lm(quick);
        if (!strcmp(bench_parts[part].name, "race")) return app_bench_race(quick, bench_race_steps);
        return app_bench_model(quick, bench_parts[part].name, bench_peak_gflops);
    }
}

/* ---- pelab bench --large: the frame targets at long contexts ------------------------------ */

/* One case of the large benchmark: a view at a size (len 0: the view's own, the built-in
 * models' and their prompts). */
typedef struct large_case {
    const char *view;
    int len, dim, heads;
    const char *pe; /* the encoding when not the default */
} large_case;

/* Every view, at the long contexts where it has them (issue 27: "every view within 16 ms and
 * 2 ms, in both front ends"). */
static const large_case large_cases[] = {
    {"heatmap", 8192, 4096, 8, NULL},
    {"similarity", 8192, 4096, 8, NULL},
    {"similarity", 8192, 4096, 8, "learned"},
    {"decay", 8192, 4096, 8, NULL},
    {"alibi", 8192, 4096, 64, NULL},
    {"t5", 8192, 4096, 64, NULL},
    {"xpos", 8192, 4096, 8, NULL},
    {"xl", 4096, 512, 8, NULL},
    {"xl", 1024, 4096, 8, NULL},
    {"rope", 8192, 4096, 8, NULL},
    {"wavelength", 8192, 4096, 8, NULL},
    {"frequencies", 8192, 4096, 8, NULL},
    {"extension", 8192, 4096, 8, NULL},
    {"resolution", 8192, 4096, 8, NULL},
    {"attention", 0, 0, 0, NULL},
    {"compare", 0, 0, 0, NULL},
    {"extrapolation", 0, 0, 0, NULL},
    {"sinks", 0, 0, 0, NULL},
};

/* The front ends a case runs in: the terminal, the window, and the window under the projector
 * zoom (175%, issue 27's presenting size), where the text steps down and the view is laid out
 * again until its data panels have their room (views.c), so a frame may build the view more
 * than once. */
typedef struct large_front {
    const char *name;
    int gui;
    double zoom;
} large_front;
static const large_front large_fronts[] = {
    {"terminal", 0, 1},
    {"window", 1, 1},
    {"window 175%", 1, 1.75},
};
enum { LARGE_FRONTS = sizeof large_fronts / sizeof large_fronts[0] };

/* The targets of issue 27, and what a run measured against them. */
#define LARGE_CHANGE_MS 16.0
#define LARGE_SAME_MS   2.0
typedef struct large_tally {
    int cases, over;
    double worst;         /* the largest ratio to its target */
    char worst_what[192]; /* which figure that was */
} large_tally;

/* Peak resident memory of this process so far, MiB (ru_maxrss is in KiB on Linux). */
static double peak_rss_mib(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return 0;
    return (double)ru.ru_maxrss / 1024.0;
}

/* The knob a view's "after a change" frame turns: one the view uses (bench_knob's, or the
 * sinks' threshold; extrapolation has only its table, so its frame is a rebuild of the same). */
static void large_knob(app_explorer *x, int r)
{
    const char *v = app_view_at((size_t)x->st.view)->name;
    if (strcmp(v, "sinks") == 0)
        x->st.attn.sink_threshold = r % 2 ? 0.3 : 0.35;
    else
        bench_knob(x, r);
}

/* A figure against its target, recorded in the tally. */
static double large_ratio(large_tally *ty, double ms, double target, const char *what)
{
    double q = ms / target;
    ty->cases++;
    ty->over += q > 1;
    if (q > ty->worst) {
        ty->worst = q;
        snprintf(ty->worst_what, sizeof ty->worst_what, "%s", what);
    }
    return q;
}

/* Time one front end of one case: the first frame, the frame after a parameter change, the same
 * frame again. Each frame is what the explorer does for it: the terminal builds the scene and
 * rasterises the cells (explorer_tui.c's draw, without the write to the terminal); the window
 * builds its frame with the slider panel (app_gui_frame) and draws it through window_draw, which
 * keeps the last frame and only copies it when the scene is the same. win NULL: no window could
 * open at this size, and the frame is the cairo drawing into memory. */
static void bench_large_case(const large_case *lc, const large_front *fe, window *win, int runs,
                             large_tally *ty)
{
    int v = app_view_find(lc->view);
    if (v < 0) return;
    int gui = fe->gui;
    app_explorer *x = calloc(1, sizeof *x);
    int w = gui ? 1280 : 200, h = gui ? 800 : 60;
    uint32_t *px = gui && !win ? malloc((size_t)w * (size_t)h * 4) : NULL;
    cellgrid g;
    int have_grid = !gui && cellgrid_init(&g, 200, 60, 0) == 0;
    if (!x || (gui && !win && !px) || (!gui && !have_grid)) {
        free(x);
        free(px);
        if (have_grid) cellgrid_free(&g);
        return;
    }
    app_state st;
    app_state_default(&st);
    if (lc->len > 0) {
        st.p.len = lc->len;
        st.p.dim = lc->dim;
        st.p.heads = lc->heads;
    }
    st.view = v;
    st.zoom = fe->zoom;
    if (lc->pe) st.enc = pe_encoding_find(lc->pe);
    /* learned at L 8192: the seeded table (the trained one, the default since issue 23, has the
     * shipped model's 256 rows) */
    if (lc->pe && !strcmp(lc->pe, "learned")) st.attn.weights_init = 1;
    app_explorer_init(x, &st, gui);
    scene s;
    scene_init(&s, 1, 1, 0);
    scene_target t =
        gui ? raster_target(w, h, raster_font_px(w, h, fe->zoom)) : cellgrid_target(200, 60);
#define LARGE_FRAME()                                                                              \
    do {                                                                                           \
        if (!gui) {                                                                                \
            app_explorer_frame(x, &s, &t);                                                         \
            cellgrid_render(&g, &s);                                                               \
        } else {                                                                                   \
            app_gui_frame(x, &s, &t);                                                              \
            if (win)                                                                               \
                window_draw(win, &s);                                                              \
            else                                                                                   \
                raster_draw_argb(&s, px, w, h, w * 4, 1);                                          \
        }                                                                                          \
    } while (0)
    double t0 = now_ms();
    LARGE_FRAME();
    double first = now_ms() - t0;
    double tc[32], ts[32], cc[32], cs[32];
    for (int r = 0; r < runs; r++) {
        large_knob(x, r + 1); /* run 0 changes from the first frame's value */
        x->dirty = 1;
        t0 = now_ms();
        double c0 = cpu_ms();
        LARGE_FRAME();
        tc[r] = now_ms() - t0;
        cc[r] = cpu_ms() - c0;
        x->dirty = 1; /* the explorer redraws an unchanged state after an expose or a hover */
        t0 = now_ms();
        c0 = cpu_ms();
        LARGE_FRAME();
        ts[r] = now_ms() - t0;
        cs[r] = cpu_ms() - c0;
    }
#undef LARGE_FRAME
    char size[64], what[160];
    if (lc->len > 0)
        snprintf(size, sizeof size, "L %d d %d%s%s%s", lc->len, lc->dim,
                 lc->heads != 8 ? ", 64 heads" : "", lc->pe ? ", " : "", lc->pe ? lc->pe : "");
    else
        snprintf(size, sizeof size, "built-in models");
    double mc = median(tc, runs), ms = median(ts, runs), mcc = median(cc, runs),
           mcs = median(cs, runs);
    /* the ratio of the smaller of wall clock and CPU time to the target: on a busy machine the
     * wall clock counts other processes' time slices, and a frame on two threads (extension)
     * has more CPU time than wall clock; on a quiet machine the smaller is the wall clock */
    snprintf(what, sizeof what, "%s %s %s after a change", lc->view, size, fe->name);
    double qc = large_ratio(ty, fmin(mc, mcc), LARGE_CHANGE_MS, what);
    snprintf(what, sizeof what, "%s %s %s same frame", lc->view, size, fe->name);
    double qs = large_ratio(ty, fmin(ms, mcs), LARGE_SAME_MS, what);
    printf("  %-13s %-23s %-11s %8.2f (cpu %7.2f) %5.2fx %7.2f (cpu %6.2f) %5.2fx %9.1f%s\n",
           lc->view, size, fe->name, mc, mcc, qc, ms, mcs, qs, first,
           x->view_error[0] ? "  (view error!)" : "");
    app_explorer_free(x);
    free(x);
    scene_free(&s);
    free(px);
    if (have_grid) cellgrid_free(&g);
}

static int bench_large(int runs, const char *only)
{
    printf("pelab %s bench --large (median of %d runs; targets: < %.0f ms after a change, < %.0f "
           "ms for the same frame; beside each figure its ratio to the target, of the smaller of "
           "wall clock and CPU time)\n",
           PELAB_VERSION_STRING, runs, LARGE_CHANGE_MS, LARGE_SAME_MS);
    machine_line();
    double load[3] = {0, 0, 0};
    if (getloadavg(load, 3) == 3)
        printf("load average at the start: %.2f %.2f %.2f (the figures need a quiet machine)\n",
               load[0], load[1], load[2]);
    const char *how = "";
    window *win = bench_window(1280, 800, &how);
    printf("terminal 200x60 cells (scene + cells); window 1280x800 (%s, with the slider panel; no "
           "present), at 100%% and at the projector zoom of 175%%; times in ms, wall clock (and "
           "this process's CPU time)\n",
           how);
    printf("  %-13s %-23s %-11s %30s %29s %9s\n", "view", "size", "front", "after a change",
           "same frame", "first");
    large_tally ty = {0};
    for (size_t i = 0; i < sizeof large_cases / sizeof large_cases[0]; i++)
        for (int f = 0; f < LARGE_FRONTS; f++) {
            if (only && strcmp(only, large_cases[i].view) != 0) continue;
            bench_large_case(&large_cases[i], &large_fronts[f], win, runs, &ty);
            fflush(stdout);
        }
    window_close(win);
    printf("over target: %d of %d figures; the largest ratio %.2fx (%s)\n", ty.over, ty.cases,
           ty.worst, ty.worst_what);
    printf("peak resident memory of this process: %.0f MiB\n", peak_rss_mib());
    return 0;
}

static size_t part_names(const char **out, size_t n)
{
    size_t k = 0;
    for (; k < (size_t)N_PARTS && k < n; k++) out[k] = bench_parts[k].name;
    return k;
}

/* The views the large benchmark has cases for, once each. */
static size_t large_views(const char **out, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < sizeof large_cases / sizeof large_cases[0] && k < n; i++)
        if (i == 0 || strcmp(large_cases[i].view, large_cases[i - 1].view) != 0)
            out[k++] = large_cases[i].view;
    return k;
}

static const app_cmd_opt bench_opts[] = {
    {.name = "quick", .code = 'q', .help = "fewer runs"},
    {.name = "only",
     .code = 'O',
     .arg = "PART",
     .help = "one part of the bench (peak table export views window attention "
             "train loaded eval real race: arithmetic, tables, exports, frames, steps)",
     .choices_fn = part_names},
    {.name = "large",
     .code = 'G',
     .help =
         "every view at L 8192, d 4096, 64 heads (the attention views on the built-in models), "
         "in the terminal, the window and the window at 175%, against 16 ms after a change and "
         "2 ms for the same frame, with the peak memory; a VIEW word after it: that view alone"},
    {.name = "steps",
     .code = 'S',
     .arg = "N",
     .help = "the race part's steps per scheme, 1..100000 (the shipped recipe's 2000; 200 with "
             "--quick): shorter races to try it (the display's cost is measured on races of 200 "
             "steps, 100 with --quick, or N if fewer)"},
    {.name = "help", .code = '?', .short_name = 'h', .help = "what it measures"},
    {0},
};

static int cmd_bench(int argc, char **argv)
{
    app_cli_args args;
    int prc = app_command_parse(&app_command_bench, NULL, argc, argv, &args);
    if (prc != 0) return prc > 0 ? 0 : 2;
    int quick = 0, only = -1, large = 0;
    const char *large_view = NULL;
    for (int i = 0; i < args.n; i++) {
        if (args.code[i] == 'q') quick = 1;
        if (args.code[i] == 'S') {
            char err[256];
            long v;
            if (app_parse_int("steps", args.val[i], 1, 100000, &v, err, sizeof err)) {
                fprintf(stderr, "pelab bench: %s\n", err);
                return 2;
            }
            bench_race_steps = (int)v;
        }
        if (args.code[i] == 'G') large = 1;
        if (args.code[i] == 'O' && (only = bench_part_find(args.val[i])) < 0) {
            fprintf(stderr, "pelab bench: --only %s: allowed", args.val[i]);
            for (int k = 0; k < N_PARTS; k++) fprintf(stderr, " %s", bench_parts[k].name);
            fprintf(stderr, "\n");
            return 2;
        }
    }
    if (args.n_positional > 0) {
        if (!large || args.n_positional > 1) {
            fprintf(stderr, "pelab bench: unexpected argument '%s' (a VIEW follows --large)\n",
                    args.positional[large ? 1 : 0]);
            return 2;
        }
        large_view = args.positional[0];
        const char *v[64];
        size_t nv = large_views(v, 64);
        int known = 0;
        for (size_t k = 0; k < nv; k++) known |= strcmp(v[k], large_view) == 0;
        if (!known) {
            fprintf(stderr, "pelab bench: --large %s: allowed", large_view);
            for (size_t k = 0; k < nv; k++) fprintf(stderr, " %s", v[k]);
            fprintf(stderr, " (or no VIEW: all of them)\n");
            return 2;
        }
    }
    int runs = quick ? 3 : 11;
    if (large) return bench_large(quick ? 3 : 7, large_view);
    printf("pelab %s bench (median of %d runs)\n", PELAB_VERSION_STRING, runs);
    machine_line();
    int rc = 0;
    for (int k = 0; k < N_PARTS; k++)
        if (only < 0 || only == k) rc |= bench_run_part(k, quick, runs);
    return rc ? 1 : 0;
}

const app_command app_command_bench = {.name = "bench",
                                       .synopsis = "[--quick] [--only PART] [--large [VIEW]]",
                                       .summary = "speed figures for this machine",
                                       .fn = cmd_bench,
                                       .opts = bench_opts};
