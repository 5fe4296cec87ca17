/* test_views_ext.c: the views of issue 7 (frequencies, extension, resolution, t5, xpos, xl).
 * Each is built on a 120x40 cell grid and a 1000x600 pixel target with the cursor on, and the
 * numbers behind it are checked against the reference vectors (pe-reference.md sections 3, 5, 6,
 * 7) and against the library functions they stand for. One small cell rendering is compared with
 * a text golden in tests/app/golden/ (PELAB_REGEN_GOLDEN=1 rewrites it; a mismatch writes
 * <name>.actual next to it). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cellgrid.h"
#include "cli.h"
#include "figure.h"
#include "options.h"
#include "raster.h"
#include "rope_ext.h"
#include "tap.h"
#include "views.h"

static char err[512];

/* The six methods with formulas; longrope (the seventh) needs a config's lists, which these
 * states do not have. */
#define FORMULA_METHODS 6

/* A state for view with option pairs applied; fails the test when an option is refused. */
static app_state make(const char *view, const char *const *opts, int n)
{
    app_state st;
    app_state_default(&st);
    TAP_OK(app_option_set(&st, app_option_find("view"), view, err, sizeof err) == 0, "view %s",
           view);
    for (int i = 0; i + 1 < n; i += 2)
        if (app_option_set(&st, app_option_find(opts[i]), opts[i + 1], err, sizeof err) < 0)
            TAP_OK(0, "--%s %s refused: %s", opts[i], opts[i + 1], err);
    return st;
}

static int get_data(const app_state *st, app_data *d)
{
    app_view_ctx c;
    memset(&c, 0, sizeof c);
    int rc = app_view_at((size_t)st->view)->data(&c, st, d, err, sizeof err);
    app_view_ctx_free(&c);
    return rc;
}

static char *cells_text(const app_state *st, int cols, int rows, app_view_ctx *c, int *rc)
{
    cellgrid g;
    cellgrid_init(&g, cols, rows, 0);
    scene s;
    scene_init(&s, cols, 2 * rows, 0);
    scene_target t = cellgrid_target(cols, rows);
    *rc = app_view_build(c, st, &s, &t, err, sizeof err);
    char *text = NULL;
    if (*rc == 0) {
        cellgrid_render(&g, &s);
        text = cellgrid_dump(&g, 0);
    }
    scene_free(&s);
    cellgrid_free(&g);
    return text;
}

/* Build st's view with the cursor on, on cells and on pixels; title_part must show in the cells. */
static void check_builds(const char *label, app_state st, const char *title_part)
{
    TAP_OK(app_state_validate(&st, err, sizeof err) == 0, "%s: valid (%s)", label, err);
    st.cursor_on = 1;
    st.cur_r = 5;
    st.cur_c = 3;
    app_view_ctx c;
    memset(&c, 0, sizeof c);
    int rc;
    char *text = cells_text(&st, 120, 40, &c, &rc);
    TAP_OK(rc == 0 && text, "%s: builds on 120x40 cells (%s)", label, rc ? err : "");
    TAP_OK(text && strstr(text, title_part), "%s: the cells show '%s'", label, title_part);
    TAP_OK(c.has_main && c.main_cols > 0 && c.readout[0], "%s: cursor readout '%s'", label,
           c.readout);
    /* a second build answers from the caches and gives the same picture */
    app_view_ctx_free(&c);
    memset(&c, 0, sizeof c);
    char *again = cells_text(&st, 120, 40, &c, &rc);
    char *cached = cells_text(&st, 120, 40, &c, &rc);
    TAP_OK(again && cached && strcmp(again, cached) == 0 && strcmp(text, again) == 0,
           "%s: a rebuild from the caches is identical", label);
    free(text);
    free(again);
    free(cached);
    app_view_ctx_free(&c);

    memset(&c, 0, sizeof c);
    scene s;
    scene_init(&s, 1000, 600, 0);
    scene_target t = raster_target(1000, 600, raster_font_px(1000, 600, 1));
    rc = app_view_build(&c, &st, &s, &t, err, sizeof err);
    TAP_OK(rc == 0 && s.n > 20, "%s: builds on 1000x600 pixels (%zu items; %s)", label, s.n,
           rc ? err : "");
    uint32_t *px = malloc((size_t)1000 * 600 * 4);
    int drawn = px && raster_draw_argb(&s, px, 1000, 600, 1000 * 4, 1) == 0;
    size_t ink = 0;
    for (size_t i = 0; drawn && i < (size_t)1000 * 600; i++) ink += (px[i] & 0xffffff) != 0xffffff;
    TAP_OK(drawn && ink > 20000, "%s: cairo draws it (%zu non-white pixels)", label, ink);
    free(px);
    scene_free(&s);
    app_view_ctx_free(&c);
}

static void test_frequencies(void)
{
    /* reference section 5: d 16, base 1e4, YaRN f 4, L0 64 */
    const char *o[] = {"dim", "16", "scaling", "yarn", "factor", "4", "orig-ctx", "64"};
    app_state st = make("frequencies", o, 8);
    check_builds("frequencies YaRN", st, "RoPE frequencies");
    app_data d = {0};
    TAP_OK(get_data(&st, &d) == 0 && d.shape[0] == 8 && d.shape[1] == 6, "frequencies data 8x6");
    static const double yarn[8] = {1,      0.23717082451,    0.05,    0.0079056941504,
                                   0.0025, 0.00079056941504, 0.00025, 0.000079056941504};
    double worst = 0, worst_o = 0, worst_w = 0;
    int bands_ok = 1;
    for (int k = 0; k < 8 && d.data; k++) {
        const double *row = d.data + k * 6;
        worst = fmax(worst, fabs(row[2] - yarn[k]) / yarn[k]);
        double orig = pow(10, -k / 2.0);
        worst_o = fmax(worst_o, fabs(row[1] - orig) / orig);
        worst_w = fmax(worst_w, fabs(row[4] - 2 * APP_PI / yarn[k]) / row[4]);
        /* ramp k / 3 (low 0, high 3): keep, blend, blend, then interpolate */
        int want = k == 0 ? PE_BAND_KEEP : k < 3 ? PE_BAND_BLEND : PE_BAND_INTERP;
        bands_ok &= (int)row[5] == want && (int)row[0] == k;
    }
    TAP_OK(worst < 1e-9, "YaRN theta' equals the reference (max rel error %.2g)", worst);
    TAP_OK(worst_o < 1e-9, "original theta equals 10^(-k/2) (max rel error %.2g)", worst_o);
    TAP_OK(worst_w < 1e-9, "extended wavelengths are 2pi/theta' (%.2g)", worst_w);
    TAP_OK(bands_ok, "bands: pair 0 keep, 1-2 blend, 3-7 interpolate");
    app_data_free(&d);

    /* llama3 f 4 lo 1 hi 4 L0 64 */
    const char *l3[] = {"dim", "16", "scaling", "llama3", "factor", "4", "orig-ctx", "64"};
    st = make("frequencies", l3, 8);
    static const double llama[5] = {1, 0.25464790895, 0.025464790895, 0.0079056941504, 0.0025};
    worst = 0;
    if (get_data(&st, &d) == 0)
        for (int k = 0; k < 5; k++)
            worst = fmax(worst, fabs(d.data[k * 6 + 2] - llama[k]) / llama[k]);
    TAP_OK(d.data && worst < 1e-9, "llama3 theta' equals the reference (%.2g)", worst);
    app_data_free(&d);

    /* no scaling: the original only, with a hint */
    const char *none[] = {"dim", "32"};
    st = make("frequencies", none, 2);
    check_builds("frequencies without scaling", st, ":scaling yarn");
}

/* Issue 25: a model with two layer kinds (Gemma 4, p-RoPE on its full-attention layers): the
 * RoPE views show the full-attention kind and say so; --layer-type (or ':layer-type') switches
 * to the other kind, re-reading the file. */
static void test_layer_kinds(void)
{
    const char *src = getenv("PELAB_SRC");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/config/real/gemma-4-text.json", src ? src : ".");
    app_state st = make("frequencies", NULL, 0);
    int rc = app_cli_apply_config(&st, path, err, sizeof err);
    TAP_OK(rc == 0 && st.model_kinds == 2 && strcmp(st.model_layer, "full_attention") == 0 &&
               st.p.dim == 512 && st.p.rope_proportional && pe_rope_rotary_dim(&st.p) == 128,
           "gemma 4: the full-attention kind first (d %d, p-RoPE, rotary %d) (%s)", st.p.dim,
           pe_rope_rotary_dim(&st.p), err);
    check_builds("frequencies, gemma 4 full attention", st, "full_attention layers");
    const app_option *o = app_option_find("layer-type");
    rc = o ? app_option_set(&st, o, "sliding_attention", err, sizeof err) : -1;
    TAP_OK(rc == 0 && strcmp(st.model_layer, "sliding_attention") == 0 && st.p.dim == 256 &&
               st.p.base == 10000 && !st.p.rope_proportional,
           "layer-type sliding_attention re-reads the file: d %d base %g (%s)", st.p.dim, st.p.base,
           err);
    check_builds("frequencies, gemma 4 sliding attention", st, "sliding_attention layers");
    rc = o ? app_option_set(&st, o, "global", err, sizeof err) : 0;
    TAP_OK(rc == -1 && strstr(err, "--layer-type global: gemma4_text has the layer types "
                                   "full_attention, sliding_attention"),
           "an unknown kind names the kinds: %s", err);
    TAP_OK(strcmp(st.model_layer, "sliding_attention") == 0, "and leaves the state as it was");
}

/* Issue 25: Llama 4 Scout's 10485760 positions load, and every view draws a 10M-position context
 * at its own resolution; a full-resolution table that would not fit (the heatmap's data,
 * 10485760 x 128 floats, 5 GiB) is refused by the memory budget with its sizes and
 * --max-memory, not by a cap naming --len. */
static void test_long_context(void)
{
    const char *src = getenv("PELAB_SRC");
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/config/real/llama-4-scout-17b-16e.json", src ? src : ".");
    static const char *const views[] = {"frequencies", "extension", "rope"};
    for (size_t i = 0; i < sizeof views / sizeof views[0]; i++) {
        app_state st = make(views[i], NULL, 0);
        int rc = app_cli_apply_config(&st, path, err, sizeof err);
        if (rc == 0) rc = app_option_set(&st, app_option_find("len"), "10485760", err, sizeof err);
        TAP_OK(rc == 0 && st.p.len == 10485760 && st.p.scaling.original_ctx == 8192,
               "%s: Scout's config and --len 10485760 accepted (%s)", views[i], err);
        if (rc != 0) continue;
        if (i < 2) {
            check_builds(views[i], st, "");
            continue;
        }
        /* the rope view: q at the last position of the 10M context, k at 0 */
        st.pos = 10485759;
        app_view_ctx c;
        memset(&c, 0, sizeof c);
        TAP_OK(app_state_validate(&st, err, sizeof err) == 0, "rope at m 10485759: valid (%s)",
               err);
        char *text = cells_text(&st, 120, 40, &c, &rc);
        TAP_OK(rc == 0 && text && strstr(text, "m=10485759"),
               "rope at m 10485759 builds on 120x40 cells and says m (%s)", rc ? err : "");
        free(text);
        app_view_ctx_free(&c);
    }
    /* every view of the encodings at --len 10000000 (Scout's config where the view reads
     * RoPE's settings): valid, and built on cells and on pixels at the drawn resolution */
    static const char *const all[] = {"heatmap",    "similarity", "decay",       "alibi",
                                      "rope",       "wavelength", "frequencies", "extension",
                                      "resolution", "t5",         "xpos",        "xl"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        for (int cfg = 0; cfg < 2; cfg++) {
            const char *opts[] = {"pe", "rope"};
            /* the encodings' own views (no RoPE setting) take the length alone */
            if (cfg && (strcmp(all[i], "similarity") == 0 || strcmp(all[i], "alibi") == 0 ||
                        strcmp(all[i], "t5") == 0))
                continue;
            int rope_pe =
                cfg && (strcmp(all[i], "heatmap") == 0 || strcmp(all[i], "wavelength") == 0 ||
                        strcmp(all[i], "decay") == 0);
            app_state st = make(all[i], opts, rope_pe ? 2 : 0);
            int rc = cfg ? app_cli_apply_config(&st, path, err, sizeof err) : 0;
            if (rc == 0)
                rc = app_option_set(&st, app_option_find("len"), "10000000", err, sizeof err);
            if (!TAP_OK(rc == 0 && app_state_validate(&st, err, sizeof err) == 0,
                        "%s%s at --len 10000000: valid (%s)", all[i], cfg ? " (Scout)" : "", err))
                continue;
            app_view_ctx c;
            memset(&c, 0, sizeof c);
            char *text = cells_text(&st, 120, 40, &c, &rc);
            TAP_OK(rc == 0 && text, "%s%s at --len 10000000: builds on 120x40 cells (%s)", all[i],
                   cfg ? " (Scout)" : "", rc ? err : "");
            free(text);
            scene sc;
            scene_init(&sc, 1000, 600, 0);
            scene_target t = raster_target(1000, 600, raster_font_px(1000, 600, 1));
            rc = app_view_build(&c, &st, &sc, &t, err, sizeof err);
            TAP_OK(rc == 0, "%s%s at --len 10000000: builds on 1000x600 pixels (%s)", all[i],
                   cfg ? " (Scout)" : "", rc ? err : "");
            scene_free(&sc);
            app_view_ctx_free(&c);
        }
    /* a full-resolution table that does not fit is refused by the memory budget, with its
     * sizes and --max-memory, and no cap on --len: the heatmap's data, 10485760 x 128 floats */
    app_state st = make("heatmap", NULL, 0);
    int rc = app_cli_apply_config(&st, path, err, sizeof err);
    if (rc == 0) rc = app_option_set(&st, app_option_find("len"), "10485760", err, sizeof err);
    app_data d;
    memset(&d, 0, sizeof d);
    TAP_OK(rc == 0 && app_state_validate(&st, err, sizeof err) == 0 && get_data(&st, &d) < 0 &&
               strstr(err, "--len x --dim = 10485760 x 128 = 1342177280 cells need 5120 MiB") &&
               strstr(err, "memory budget of 2048 MiB") && strstr(err, "--max-memory"),
           "the heatmap's data at 10485760 x 128 is refused by the memory budget: %s", err);
    app_data_free(&d);
    /* Transformer-XL at Scout's 10M positions: the figure draws (above) and the cursor reads
     * a far cell; the data, its 4 (L, L) terms, is refused by the memory budget with the sizes
     * and --max-memory */
    app_state xl = make("xl", NULL, 0);
    rc = app_cli_apply_config(&xl, path, err, sizeof err);
    if (rc == 0) rc = app_option_set(&xl, app_option_find("len"), "10485760", err, sizeof err);
    TAP_OK(rc == 0 && app_state_validate(&xl, err, sizeof err) == 0 && xl.p.dim == 128,
           "xl with Scout's config at --len 10485760: valid, d %d (%s)", xl.p.dim, err);
    xl.cursor_on = 1;
    xl.cur_r = 10485759;
    xl.cur_c = 1234567;
    app_view_ctx xc;
    memset(&xc, 0, sizeof xc);
    char *xtext = cells_text(&xl, 120, 40, &xc, &rc);
    double xv[5] = {0};
    const char *xa = strstr(xc.readout, "i 10485759  j 1234567  i-j 9251192  (a) ");
    int xn = xa ? sscanf(xa + strlen("i 10485759  j 1234567  i-j 9251192  "),
                         "(a) %lf (b) %lf (c) %lf (d) %lf sum %lf", &xv[0], &xv[1], &xv[2], &xv[3],
                         &xv[4])
                : 0;
    TAP_OK(rc == 0 && xn == 5 && fabs(xv[0] + xv[1] + xv[2] + xv[3] - xv[4]) < 3e-4 &&
               fabs(xv[0]) < 8 && fabs(xv[2]) < 8 && xv[0] != 0,
           "xl at 10485760: the cursor reads the cell (10485759, 1234567): %s (%s)", xc.readout,
           rc ? err : "");
    free(xtext);
    app_view_ctx_free(&xc);
    memset(&d, 0, sizeof d);
    TAP_OK(get_data(&xl, &d) < 0 && strstr(err, "the data (4 x 10485760 x 10485760 values)") &&
               strstr(err, "memory budget of 2048 MiB") && strstr(err, "--max-memory") &&
               !strstr(err, "--len x --len"),
           "xl's data at 10485760 is refused by the memory budget: %s", err);
    app_data_free(&d);
    TAP_OK(app_option_set(&st, app_option_find("len"), "16777217", err, sizeof err) < 0 &&
               strstr(err, "allowed 1..16777216"),
           "past 2^24 positions (a float's exact integers) --len is refused: %s", err);
}

/* Llama 3.1's config: L0 and the target come from it, the figure's L stays. */
static void test_config(void)
{
    const char *src = getenv("PELAB_SRC");
    char path[1024];
    snprintf(path, sizeof path, "%s/assets/configs/llama-3.1-8b.json", src ? src : ".");
    app_state st = make("frequencies", NULL, 0);
    int rc = app_cli_apply_config(&st, path, err, sizeof err);
    TAP_OK(rc == 0, "llama-3.1-8b config applies (%s)", err);
    if (rc != 0) return;
    /* issue 25: the target is the model's max_position_embeddings 131072, not 8 x 8192 */
    TAP_OK(st.p.len == 256 && st.p.scaling.original_ctx == 8192 && app_ext_target(&st) == 131072,
           "config: L stays 256, L0 8192, target max_position_embeddings 131072 (%g)",
           app_ext_target(&st));
    check_builds("frequencies from llama-3.1-8b.json", st, "L\xe2\x82\x80 8K \xe2\x86\x92 T 128K");
    app_data d = {0};
    int cnt[3] = {0, 0, 0};
    if (get_data(&st, &d) == 0)
        for (int k = 0; k < 64; k++) cnt[(int)d.data[k * 6 + 5]]++;
    TAP_OK(cnt[0] == 29 && cnt[1] == 6 && cnt[2] == 29,
           "Llama 3.1: %d kept, %d blended, %d divided", cnt[0], cnt[1], cnt[2]);
    TAP_OK(d.data && fabs(d.data[29 * 6 + 2] - 2.1665707635e-03) < 1e-12,
           "Llama 3.1 theta'[29] = 2.1665707635e-03 (%.10e)", d.data ? d.data[29 * 6 + 2] : 0);
    app_data_free(&d);
}

/* Extension: both measures of every method against the library where a sample is a single
 * distance, for a few settings; the rows follow --measure. */
static void check_extension(const char *label, const char *const *o, int n)
{
    app_state st = make("extension", o, n);
    app_option_set(&st, app_option_find("measure"), "both", err, sizeof err);
    app_data d = {0};
    int rc = get_data(&st, &d);
    TAP_OK(rc == 0 && d.shape[0] == 13, "%s: data has r and 12 curves (%s)", label, err);
    if (rc != 0) return;
    size_t ns = d.shape[1];
    double T = app_ext_target(&st);
    TAP_OK(d.data[0] == 0 && d.data[ns - 1] == T, "%s: r runs 0..T = %g", label, T);
    double worst_s = 0, worst_b = 0, first = 0;
    int single = 0;
    for (int m = 0; m < FORMULA_METHODS; m++) {
        pe_params p = app_ext_params(&st, m, T);
        int d0 = p.dim, np = pe_rope_rotary_dim(&p) / 2;
        double *q = malloc(sizeof *q * (size_t)d0 * 2), *k = q + d0;
        double *inv = malloc(sizeof *inv * (size_t)np), s0;
        pe_rope_qk(d0, UINT64_MAX, q, k);
        pe_rope_inv_freq(&p, inv, NULL, err, sizeof err);
        pe_rope_score_curve(&p, q, k, 0, 0, 1, &s0, err, sizeof err);
        double b0 = pe_rope_decay_bound(inv, np, 0);
        first = fmax(first, fabs(d.data[(1 + m) * ns] - 1) + fabs(d.data[(7 + m) * ns] - 1));
        /* below r = 20 the +-5% window holds one whole distance: the value is exact */
        for (size_t i = 0; i < ns && d.data[i] < 20; i++) {
            double r = d.data[i], v;
            pe_rope_score_curve(&p, q, k, 0, (int)r, 1, &v, err, sizeof err);
            worst_s = fmax(worst_s, fabs(d.data[(1 + m) * ns + i] - v / s0));
            worst_b = fmax(worst_b,
                           fabs(d.data[(7 + m) * ns + i] - pe_rope_decay_bound(inv, np, r) / b0));
            single++;
        }
        free(q);
        free(inv);
    }
    TAP_OK(first < 1e-12, "%s: every curve is 1 at r = 0", label);
    TAP_OK(single > 60 && worst_s < 1e-9,
           "%s: q=k=1 score equals pe_rope_score_curve (%d points, max error %.2g)", label, single,
           worst_s);
    TAP_OK(worst_b < 1e-9, "%s: bound equals pe_rope_decay_bound (max error %.2g)", label, worst_b);
    /* the long-range samples are means: they stay within the measure's range */
    int inside = 1;
    for (size_t i = 0; i < ns; i++)
        for (int row = 7; row < 13; row++)
            inside &= d.data[row * ns + i] >= 0 && d.data[row * ns + i] <= 1 + 1e-12;
    TAP_OK(inside, "%s: bound means stay in [0, 1]", label);
    app_data_free(&d);
}

/* Extension at d 4096 (the bench's size; two distances a bin, the lanes span bins) and d 64 (up
 * to 32 distances a bin, more than the lanes): every third sample of every method, the mean over
 * its bin, against the library at each of the bin's distances. The bin is the view's
 * (extension.c bin_bounds: the geometric midpoints with the neighbours, widened to r +- 5%, at
 * most 1e6 / (samples x pairs) evenly spaced distances, between 2 and 32). */
static void check_extension_wide(const char *dim)
{
    const char *o[] = {"dim", dim, "measure", "both"};
    app_state st = make("extension", o, 4);
    app_data d = {0};
    int rc = get_data(&st, &d);
    TAP_OK(rc == 0 && d.shape[0] == 13, "extension d %s: data has r and 12 curves (%s)", dim, err);
    if (rc != 0) return;
    size_t ns = d.shape[1];
    const double *r = d.data;
    double T = app_ext_target(&st), worst_s = 0, worst_b = 0;
    int checked = 0;
    for (int m = 0; m < FORMULA_METHODS; m++) {
        pe_params p = app_ext_params(&st, m, T);
        int d0 = p.dim, np = pe_rope_rotary_dim(&p) / 2;
        double *q = malloc(sizeof *q * (size_t)d0 * 2), *k = q + d0;
        double *inv = malloc(sizeof *inv * (size_t)np), s0;
        pe_rope_qk(d0, UINT64_MAX, q, k);
        pe_rope_inv_freq(&p, inv, NULL, err, sizeof err);
        pe_rope_score_curve(&p, q, k, 0, 0, 1, &s0, err, sizeof err);
        double b0 = pe_rope_decay_bound(inv, np, 0);
        double per = 1e6 / ((double)ns * np);
        int most = per >= 32 ? 32 : per >= 2 ? (int)per : 2;
        for (size_t i = 0; i < ns; i++) {
            if (i % 3 != 0 && i != ns - 1) continue;
            double a = i == 0 ? r[0] : ceil(sqrt(fmax(r[i - 1], 0.5) * r[i]));
            double b = i == ns - 1 ? r[i] : ceil(sqrt(fmax(r[i], 0.5) * r[i + 1])) - 1;
            a = fmin(fmin(a, ceil(r[i] / 1.05)), r[i]);
            b = fmax(fmax(b, floor(r[i] * 1.05)), r[i]);
            int cnt = b - a + 1 <= most ? (int)(b - a + 1) : most;
            if (cnt == 1) a = r[i];
            double step = cnt > 1 ? floor((b - a) / (cnt - 1)) : 0, ms = 0, mb = 0;
            for (int j = 0; j < cnt; j++) {
                double v;
                pe_rope_score_curve(&p, q, k, 0, (int)(a + j * step), 1, &v, err, sizeof err);
                ms += v / s0 / cnt;
                mb += pe_rope_decay_bound(inv, np, a + j * step) / b0 / cnt;
            }
            worst_s = fmax(worst_s, fabs(d.data[(1 + m) * ns + i] - ms));
            worst_b = fmax(worst_b, fabs(d.data[(7 + m) * ns + i] - mb));
            checked++;
        }
        free(q);
        free(inv);
    }
    TAP_OK(checked > 900 && worst_s < 1e-9 && worst_b < 1e-9,
           "extension d %s: %d bin means (score, bound) equal the library's at every distance "
           "(max error %.2g, %.2g)",
           dim, checked, worst_s, worst_b);
    app_data_free(&d);
}

static void test_extension(void)
{
    const char *a[] = {"dim", "64", "scaling", "yarn", "factor", "4", "orig-ctx", "512"};
    check_extension("extension d 64 f 4", a, 8);
    const char *b[] = {"dim",         "32",     "pairing",    "half",     "rotary-frac",
                       "0.5",         "factor", "8",          "orig-ctx", "256",
                       "attn-factor", "1.5",    "target-len", "5000"};
    check_extension("extension half pairs, rotary 0.5, attn 1.5, T 5000", b, 14);
    /* far distances: the rotations are composed from powers of two, not sin of a huge angle */
    const char *far[] = {"dim",    "32", "scaling",    "linear",
                         "factor", "8",  "target-len", "300000000"};
    check_extension("extension d 32, T 3e8", far, 8);
    check_extension_wide("4096");
    check_extension_wide("64");

    /* by default the bound alone; --measure score: the score alone */
    const char *c[] = {"scaling", "yarn", "factor", "4"};
    app_state st = make("extension", c, 4);
    check_builds("extension", st, "decay bound");
    app_data d = {0};
    TAP_OK(get_data(&st, &d) == 0 && d.shape[0] == 7 && strstr(d.what, "bound"),
           "default measure: r and six bound rows (%s)", d.what);
    TAP_OK(d.data && d.data[d.shape[1]] == 1, "the none curve is 1 at r = 0");
    app_data_free(&d);
    app_option_set(&st, app_option_find("measure"), "score", err, sizeof err);
    TAP_OK(get_data(&st, &d) == 0 && d.shape[0] == 7 && strstr(d.what, "q=k=1"),
           "--measure score: r and six score rows");
    app_data_free(&d);
    check_builds("extension --measure score", st, "all-ones score");
    /* the decay view's curves are not the extension's: they neither change its figure nor show
     * in its status line (issue 27) */
    app_option_set(&st, app_option_find("curves"), "rope-bound", err, sizeof err);
    TAP_OK(get_data(&st, &d) == 0 && d.shape[0] == 7 && strstr(d.what, "q=k=1"),
           "--curves leaves extension's measure alone");
    app_data_free(&d);
    TAP_OK(!app_view_uses(app_view_at((size_t)st.view), "curves") &&
               app_view_uses(app_view_at((size_t)st.view), "measure"),
           "extension uses measure, not the decay view's curves");

    /* a target beyond the cap is refused before any work, naming the options */
    const char *big[] = {"factor", "1000000", "orig-ctx", "1048576"};
    st = make("extension", big, 4);
    TAP_OK(app_state_validate(&st, err, sizeof err) < 0 && strstr(err, "--target-len"),
           "a target of 1e12 positions is refused: %s", err);
}

/* Overlapping curves stay visible in the terminal (issue 27: "none" vanished under llama3, the
 * braille cell taking the colour drawn last): on the extension figure (the bound, and the score)
 * at 80x24, 100x30 and 120x40 every method's colour is the colour of at least five braille
 * cells (before: NTK had 3 at 80x24), and the legend names the dashed ones. */
static void test_extension_overlap(void)
{
    static const int sizes[3][2] = {{80, 24}, {100, 30}, {120, 40}};
    for (int curves = 0; curves < 2; curves++)
        for (int z = 0; z < 3; z++) {
            app_state st;
            app_state_default(&st);
            app_option_set(&st, app_option_find("view"), "extension", err, sizeof err);
            if (curves) app_option_set(&st, app_option_find("measure"), "score", err, sizeof err);
            const fig_theme *th = fig_theme_get(st.dark);
            int cols = sizes[z][0], rows = sizes[z][1];
            cellgrid g;
            cellgrid_init(&g, cols, rows, 0);
            scene s;
            scene_init(&s, cols, 2 * rows, 0);
            scene_target t = cellgrid_target(cols, rows);
            app_view_ctx c;
            memset(&c, 0, sizeof c);
            int rc = app_view_build(&c, &st, &s, &t, err, sizeof err);
            cellgrid_render(&g, &s);
            int ms[APP_EXT_METHODS], count[APP_EXT_METHODS];
            int nm = app_ext_methods(&st, ms, NULL);
            char counts[400] = "";
            size_t u = 0;
            for (int i = 0; i < nm; i++) {
                uint32_t col = th->series[ms[i] % 8];
                count[i] = 0;
                for (int k = 0; k < cols * rows; k++)
                    if (g.cells[k].ch > 0x2800 && g.cells[k].ch <= 0x28ff && g.cells[k].fg == col)
                        count[i]++;
                u += (size_t)snprintf(counts + u, sizeof counts - u, " %s %d",
                                      app_ext_method_label(ms[i]), count[i]);
            }
            int hidden = 0, dashed_named = 0;
            for (int i = 0; i < nm; i++) hidden += count[i] < 5;
            for (size_t i = 0; i < s.n; i++)
                if (s.items[i].kind == SCENE_TEXT && strstr(s.items[i].u.text.str, "(dashed)"))
                    dashed_named++;
            TAP_OK(rc == 0 && nm >= 6 && hidden == 0 && dashed_named > 0,
                   "extension%s at %dx%d: each method shows in its own colour (braille cells:%s), "
                   "the legend names %d dashed",
                   curves ? " --measure score" : "", cols, rows, counts, dashed_named);
            app_view_ctx_free(&c);
            scene_free(&s);
            cellgrid_free(&g);
        }
}

static void test_resolution(void)
{
    /* no scaling, D 1, threshold 0.07 (no theta_k = 10^(-k/16) sits on it) */
    const char *o[] = {"dim", "128",      "min-angle", "0.07",   "probe-d",
                       "1",   "orig-ctx", "4096",      "factor", "1"};
    app_state st = make("resolution", o, 10);
    check_builds("resolution", st, "Resolution");
    app_data d = {0};
    int rc = get_data(&st, &d);
    TAP_OK(rc == 0 && d.shape[0] == 7, "resolution data: p and six methods (%s)", err);
    if (rc != 0) return;
    size_t ns = d.shape[1];
    int want = 0;
    for (int k = 0; k < 64; k++) want += pow(1e4, -k / 64.0) > 0.07;
    TAP_OK(d.data[0] == 0 && d.data[ns] == want,
           "p = 0, D = 1: %g pairs turn by more than 0.07 rad, the %d with theta_k > 0.07",
           d.data[ns], want);
    int same = 1;
    for (int m = 1; m < FORMULA_METHODS; m++) same &= d.data[(1 + m) * ns] == want;
    TAP_OK(same, "at factor 1 every method counts the same");
    app_data_free(&d);

    /* factor 4: each curve is pe_rope_resolution's count at every sample */
    app_option_set(&st, app_option_find("factor"), "4", err, sizeof err);
    app_option_set(&st, app_option_find("probe-d"), "3", err, sizeof err);
    rc = get_data(&st, &d);
    int bad = 0, lin0 = -1;
    double T = app_ext_target(&st);
    for (int m = 0; rc == 0 && m < FORMULA_METHODS; m++) {
        pe_params p = app_ext_params(&st, m, T);
        p.scaling.seq_len = st.p.scaling.seq_len; /* the probe's own: max(--seq-len, p + D + 1) */
        for (size_t i = 0; i < d.shape[1]; i++)
            bad +=
                d.data[(1 + m) * d.shape[1] + i] != pe_rope_resolution(&p, (int)d.data[i], 3, 0.07);
    }
    if (rc == 0) lin0 = (int)d.data[2 * d.shape[1]];
    int lin_want = 0;
    for (int k = 0; k < 64; k++) {
        double a = fmod(3 * pow(1e4, -k / 64.0) / 4, 2 * APP_PI);
        lin_want += fmin(a, 2 * APP_PI - a) > 0.07;
    }
    TAP_OK(rc == 0 && bad == 0, "f 4, D 3: every count equals pe_rope_resolution (%d differ)", bad);
    TAP_OK(lin0 == lin_want, "linear f 4, D 3 at p 0: %d pairs (theta/4 turned by 3)", lin0);
    app_data_free(&d);

    /* the default threshold sits on no theta_k of the default d and base, so the "none" curve
     * is one flat count: a threshold equal to a theta_k (0.1 = theta_16 at d 128) made float32
     * rounding flip that pair in and out from one position to the next */
    app_state_default(&st);
    st.view = app_view_find("resolution");
    rc = get_data(&st, &d);
    int lo = 1 << 30, hi = -1, tie = 0;
    for (size_t i = 0; rc == 0 && i < d.shape[1]; i++) {
        int v = (int)d.data[d.shape[1] + i];
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    for (int k = 0; k < st.p.dim / 2; k++)
        tie |= fabs(pow(st.p.base, -2.0 * k / st.p.dim) / st.resolution.min_angle - 1) < 0.02;
    TAP_OK(rc == 0 && lo == hi && !tie,
           "defaults (min-angle %g): no theta_k within 2%% of it, the none curve is flat (%d..%d)",
           st.resolution.min_angle, lo, hi);
    app_data_free(&d);
}

static const int t5_rel[43] = {-200, -128, -127, -100, -64, -63, -50, -33, -32, -31, -20,
                               -17,  -16,  -15,  -12,  -11, -9,  -8,  -7,  -2,  -1,  0,
                               1,    2,    7,    8,    9,   11,  12,  15,  16,  17,  20,
                               31,   32,   33,   50,   63,  64,  100, 127, 128, 200};
static const int t5_bidir[43] = {15, 15, 15, 15, 14, 13, 13, 12, 12, 11, 10, 10, 10, 9,  9,
                                 8,  8,  8,  7,  2,  1,  0,  17, 18, 23, 24, 24, 24, 25, 25,
                                 26, 26, 26, 27, 28, 28, 29, 29, 30, 31, 31, 31, 31};
static const int t5_causal[43] = {31, 31, 31, 30, 26, 26, 24, 21, 21, 21, 17, 16, 16, 15, 12,
                                  11, 9,  8,  7,  2,  1,  0,  0,  0,  0,  0,  0,  0,  0,  0,
                                  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0};

static void test_t5(void)
{
    for (int causal = 0; causal < 2; causal++) {
        /* the seeded values under these options (the default is the shipped model's trained ones)
         */
        const char *o[] = {"t5",  causal ? "causal" : "bidirectional", "head", "3", "weights",
                           "init"};
        app_state st = make("t5", o, 6);
        check_builds(causal ? "t5 causal" : "t5 bidirectional", st, "T5 relative buckets");
        app_data d = {0};
        int rc = get_data(&st, &d);
        /* L 256 and max_distance 128: rel runs -255..255 */
        TAP_OK(rc == 0 && d.shape[0] == 511 && d.shape[1] == 3 && d.data[0] == -255,
               "t5 data: rel -255..255, bucket, value (%s)", err);
        if (rc != 0) continue;
        int bad = 0;
        for (int i = 0; i < 43; i++) {
            const double *row = d.data + (size_t)(t5_rel[i] + 255) * 3;
            bad += row[0] != t5_rel[i] || row[1] != (causal ? t5_causal : t5_bidir)[i];
        }
        TAP_OK(bad == 0, "%s buckets of the 43 reference distances (%d differ)",
               causal ? "causal" : "bidirectional", bad);
        /* the value column is the bias the registry puts at (i, j) with j - i = rel */
        pe_matrix b = {0};
        pe_encoding_find("t5")->bias(&st.p, 3, &b, err, sizeof err);
        int off = 0;
        for (int i = 0; i < 256; i += 17)
            for (int j = 0; j < 256; j += 13) {
                double v = d.data[(size_t)(j - i + 255) * 3 + 2];
                float m = pe_matrix_row(&b, (size_t)i)[j];
                off += !(v == (double)m || (isinf(v) && isinf(m)));
            }
        TAP_OK(b.data && off == 0, "value column equals head 3's bias matrix (%d differ)", off);
        pe_matrix_free(&b);
        app_data_free(&d);
    }
}

static void test_xpos(void)
{
    const char *o[] = {"dim", "8", "len", "256"};
    app_state st = make("xpos", o, 4);
    check_builds("xpos", st, "xPos");
    app_data d = {0};
    int rc = get_data(&st, &d);
    TAP_OK(rc == 0 && d.shape[0] == 256 && d.shape[1] == 8, "xpos data: (256, r + 4 + 3) (%s)",
           err);
    if (rc != 0) return;
    static const double f100[4] = {0.7829548345, 0.8608331996, 0.9173231594, 0.9623087062};
    const double *row = d.data + 100 * 8;
    double worst = 0;
    for (int k = 0; k < 4; k++) worst = fmax(worst, fabs(row[1 + k] - f100[k]));
    TAP_OK(row[0] == 100 && worst < 1e-9, "r = 100: factors equal the reference (%.2g)", worst);
    TAP_OK(d.data[5] == 1 && d.data[6] == 1, "both scores are 1 at r = 0");
    /* with q = k = 1 each pair adds 2 cos(r theta_k) (times zeta_k^(r/512) under xPos) */
    double inv[4], wr = 0, wx = 0, wm = 0;
    pe_rope_inv_freq(&st.p, inv, NULL, err, sizeof err);
    for (int r = 0; r < 256; r++) {
        double sr = 0, sx = 0, mean = 0;
        for (int k = 0; k < 4; k++) {
            sr += cos(r * inv[k]) / 4;
            sx += cos(r * inv[k]) * pe_xpos_decay(&st.p, k, r) / 4;
            mean += pe_xpos_decay(&st.p, k, r) / 4;
        }
        wr = fmax(wr, fabs(d.data[r * 8 + 5] - sr));
        wx = fmax(wx, fabs(d.data[r * 8 + 6] - sx));
        wm = fmax(wm, fabs(d.data[r * 8 + 7] - mean));
    }
    TAP_OK(wr < 1e-9 && wx < 1e-9 && wm < 1e-12,
           "scores equal sum_k cos(r theta_k) [zeta_k^(r/512)] / 4 (%.2g, %.2g, %.2g)", wr, wx, wm);
    app_data_free(&d);
}

static void test_xl(void)
{
    const char *o[] = {"dim", "8", "len", "16", "seed", "5"};
    app_state st = make("xl", o, 6);
    check_builds("xl", st, "Transformer-XL");
    app_data d = {0};
    int rc = get_data(&st, &d);
    TAP_OK(rc == 0 && d.ndim == 3 && d.shape[0] == 4 && d.shape[1] == 16 && d.shape[2] == 16,
           "xl data (4, 16, 16) (%s)", err);
    if (rc != 0) return;
    pe_matrix t[4] = {{0}};
    pe_xl_terms(&st.p, t, err, sizeof err);
    int off = 0, diag = 0, cols = 0;
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 256; i++) {
            double v = d.data[k * 256 + i];
            off += !(v == (double)t[k].data[i] || (isinf(v) && isinf(t[k].data[i])));
        }
    for (int i = 0; i + 1 < 16; i++)
        for (int j = 0; j <= i; j++) {
            diag += d.data[3 * 256 + i * 16 + j] != d.data[3 * 256 + (i + 1) * 16 + j + 1];
            cols += d.data[2 * 256 + i * 16 + j] != d.data[2 * 256 + (i + 1) * 16 + j];
        }
    TAP_OK(off == 0, "the four terms equal pe_xl_terms (%d differ)", off);
    TAP_OK(diag == 0, "(d) v.W_R R(i-j) is constant along diagonals");
    TAP_OK(cols == 0, "(c) u.k_j is constant down each column");
    TAP_OK(isinf(d.data[1]) && d.data[1] < 0, "the future (j > i) is masked");
    for (int k = 0; k < 4; k++) pe_matrix_free(&t[k]);
    app_data_free(&d);
}

/* At L 300 the view samples: the drawn cells are pe_xl_terms' values at the sampled positions
 * (the centre of each drawn row and column), the readout is pe_xl_terms' cell to its four
 * decimals, and the subtitle's rms are the full terms' (exact for a, c, d; (b) is estimated from
 * a sample of every row, within a few percent). sparse: the same under a memory budget of 2 MiB,
 * where the view keeps no (L, d) table and draws each row it shows from its own place in the
 * stream (the path of a 10M-position context): the same cells and readout; (a) and (b)'s rms
 * estimated from 64 rows (within 15%), (c) and (d)'s exact (every key and distance at L 300). */
static void test_xl_sampled(int sparse)
{
    const char *o[] = {"dim", "64", "len", "300", "seed", "3"};
    app_state st = make("xl", o, 6);
    const char *tag = sparse ? "xl sparse" : "xl";
    st.cursor_on = 1;
    st.cur_r = 250;
    st.cur_c = 37;
    const size_t L = 300;
    app_view_ctx c;
    memset(&c, 0, sizeof c);
    scene s;
    /* wide, so the subtitle is not cut short; short, so the four panels (one row of four at
     * this shape) sample the 300 positions rather than show each */
    scene_init(&s, 2400, 300, 0);
    scene_target tg = raster_target(2400, 300, raster_font_px(2400, 300, 1));
    size_t budget = pe_mem_budget();
    if (sparse) pe_mem_set_budget((size_t)2 << 20);
    int rc = app_view_build(&c, &st, &s, &tg, err, sizeof err);
    pe_mem_set_budget(budget);
    /* the terms whole once the view is built (a sparse view is built under the small budget) */
    char berr[512];
    snprintf(berr, sizeof berr, "%s", err);
    err[0] = '\0';
    pe_matrix t[4] = {{0}};
    TAP_OK(pe_xl_terms(&st.p, t, err, sizeof err) == 0, "xl L 300: pe_xl_terms (%s)", err);
    double rms[4], amax = 0;
    for (int k = 0; k < 4; k++) {
        double ss = 0;
        size_t cnt = 0;
        for (size_t i = 0; i < L * L; i++)
            if (isfinite(t[k].data[i])) {
                ss += (double)t[k].data[i] * t[k].data[i];
                amax = fmax(amax, fabs(t[k].data[i]));
                cnt++;
            }
        rms[k] = sqrt(ss / (double)cnt);
    }

    int heat = 0, bad = 0, got_rms = 0, approx = 0;
    size_t n = 0;
    double shown[4] = {0}, shown_max = 0;
    for (size_t i = 0; rc == 0 && i < s.n; i++) {
        const scene_item *it = &s.items[i];
        if (it->kind == SCENE_TEXT) {
            const char *r = strstr(it->u.text.str, "rms a/b/c/d ");
            /* "≈" (3 bytes) before the estimated ones */
            for (int k = 0; r && k < 4; k++) {
                r += k ? 1 : 12;
                if (strncmp(r, "\xe2\x89\x88", 3) == 0) r += 3, approx++;
                char *end;
                shown[k] = strtod(r, &end);
                got_rms += end > r;
                r = end;
            }
            if (r) got_rms = got_rms == 4;
            const char *m = r ? strstr(r, "(max ") : NULL;
            if (m) sscanf(m + 5, "%lf", &shown_max);
        }
        if (it->kind != SCENE_HEATMAP || heat >= 4 || it->u.heat.rows != it->u.heat.cols ||
            it->u.heat.rows < 2)
            continue;
        n = it->u.heat.rows;
        for (size_t a = 0; a < n; a++)
            for (size_t b = 0; b < n; b++) {
                size_t pa = (size_t)(((double)a + 0.5) * (double)L / (double)n);
                size_t pb = (size_t)(((double)b + 0.5) * (double)L / (double)n);
                float want = pe_matrix_row(&t[heat], pa)[pb], v = it->u.heat.data[a * n + b];
                bad += isinf(want) ? !(isinf(v) && v < 0)
                                   : !(fabs((double)v - want) <= 1e-5 * (1 + fabs(want)));
            }
        heat++;
    }
    TAP_OK(
        rc == 0 && heat == 4 && n > 16 && n < L && bad == 0,
        "%s L 300: four %zux%zu panels hold pe_xl_terms at the sampled positions (%d differ; %s)",
        tag, n, n, bad, rc ? berr : "");
    double v[4];
    const char *a = strstr(c.readout, "(a) ");
    int parsed = a && sscanf(a, "(a) %lf (b) %lf (c) %lf (d) %lf", &v[0], &v[1], &v[2], &v[3]) == 4;
    double worst = 0;
    for (int k = 0; parsed && k < 4; k++)
        worst = fmax(worst, fabs(v[k] - pe_matrix_row(&t[k], 250)[37]));
    TAP_OK(parsed && worst < 5.1e-5, "%s readout at (250, 37) is pe_xl_terms' (%s)", tag,
           c.readout);
    char want[4][32], have[4][32];
    for (int k = 0; k < 4; k++) {
        snprintf(want[k], sizeof want[k], "%.2g", rms[k]);
        snprintf(have[k], sizeof have[k], "%.2g", shown[k]);
    }
    TAP_OK(approx == (sparse ? 4 : 0), "%s: %d of the four rms marked as estimates", tag, approx);
    int a_ok = sparse ? fabs(shown[0] - rms[0]) < 0.15 * rms[0] : strcmp(want[0], have[0]) == 0;
    double b_tol = sparse ? 0.15 * rms[1] : 0.01 + 0.03 * rms[1];
    TAP_OK(got_rms && a_ok && strcmp(want[2], have[2]) == 0 && strcmp(want[3], have[3]) == 0 &&
               fabs(shown[1] - rms[1]) < b_tol,
           "%s rms a/b/c/d shown %g/%g/%g/%g, full terms %.4g/%.4g/%.4g/%.4g", tag, shown[0],
           shown[1], shown[2], shown[3], rms[0], rms[1], rms[2], rms[3]);
    char mw[32], mh[32];
    snprintf(mw, sizeof mw, "%.2g", amax);
    snprintf(mh, sizeof mh, "%.2g", shown_max);
    /* sparse: the largest of the values sampled, so no more than the terms' (shown only when
     * the colours are clipped below it) */
    TAP_OK(sparse ? shown_max == 0 || (shown_max > 0.5 * amax && shown_max <= amax * 1.01)
                  : strcmp(mw, mh) == 0,
           "%s largest |value| shown %s, full terms %s", tag, mh, mw);
    scene_free(&s);
    app_view_ctx_free(&c);
    for (int k = 0; k < 4; k++) pe_matrix_free(&t[k]);
}

static int write_file(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    if (!fp) return -1;
    int ok = fputs(text, fp) >= 0;
    return fclose(fp) == 0 && ok ? 0 : -1;
}

static char *read_file(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    size_t got = b ? fread(b, 1, (size_t)n, fp) : 0;
    if (b) b[got] = '\0';
    fclose(fp);
    return b;
}

static void test_golden(void)
{
    const char *o[] = {"dim", "16", "scaling", "yarn", "factor", "4", "orig-ctx", "64"};
    app_state st = make("frequencies", o, 8);
    app_view_ctx c;
    memset(&c, 0, sizeof c);
    int rc;
    char *text = cells_text(&st, 72, 20, &c, &rc);
    app_view_ctx_free(&c);
    const char *src = getenv("PELAB_SRC");
    char path[1024], actual[1100];
    snprintf(path, sizeof path, "%s/tests/app/golden/frequencies_72x20.txt", src ? src : ".");
    snprintf(actual, sizeof actual, "%s.actual", path);
    if (!text) {
        TAP_OK(0, "golden: the view builds (%s)", err);
        return;
    }
    if (getenv("PELAB_REGEN_GOLDEN")) {
        TAP_OK(write_file(path, text) == 0, "golden regenerated (%s)", path);
        free(text);
        return;
    }
    char *want = read_file(path);
    TAP_OK(want != NULL, "golden %s exists (PELAB_REGEN_GOLDEN=1 creates it)", path);
    int same = want && strcmp(want, text) == 0;
    if (want && !same) write_file(actual, text);
    TAP_OK(same, "frequencies at 72x20 cells matches its golden%s",
           same ? "" : " (.actual written)");
    free(want);
    free(text);
}

int main(void)
{
    test_frequencies();
    test_config();
    test_layer_kinds();
    test_long_context();
    test_extension();
    test_extension_overlap();
    test_resolution();
    test_t5();
    test_xpos();
    test_xl();
    test_xl_sampled(0);
    test_xl_sampled(1);
    test_golden();
    return tap_done();
}
