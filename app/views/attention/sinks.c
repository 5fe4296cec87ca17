/* sinks.c: attention sinks (issue 23): how much attention every head of a trained model pays to
 * the first token, as a (layers, heads) matrix, and the share of heads above --threshold.
 *
 * The measure is Gu et al., "When Attention Sink Emerges in Language Models" (ICLR 2025), eq. 1:
 * alpha(l, h) = 1/T sum_{t=0}^{T-1} A_lh[t][0] over the T tokens of a prompt (pe_sink_alpha),
 * averaged over the prompts; a head is a sink head when alpha > threshold (0.3 in the paper's
 * Table 3). The prompts are the measure views' (measures.h): the held-out stories of
 * assets/prompts (every preset, so no shipped model trained on them), --text, --prompt or --ids.
 * Any model the model interface opens works: the six shipped schemes, a .pelab file, a llama2.c
 * or Hugging Face checkpoint. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "colormap.h"
#include "lmi.h"
#include "measure.h"
#include "measures.h"
#include "views.h"

/* The cached result: the model's shape, and alpha per (layer, head) after it. */
typedef struct sink_result {
    int layers, heads;
    int kv_heads; /* grouped-query attention: heads h share kv head h / (heads / kv_heads) */
    app_measure_about about;
    double alpha[]; /* (layers, heads) */
} sink_result;

typedef struct sink_run {
    sink_result *r;
    float *row, *col; /* (T) */
} sink_run;

/* One prompt: each head's alpha over its n tokens added to the sums. */
static int sink_prompt(void *arg, const lmi_session *s, int n, char *err, size_t errlen)
{
    sink_run *u = arg;
    int L = u->r->layers, H = u->r->heads;
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            for (int t = 0; t < n; t++) {
                if (lmi_attn_row(s, l, h, t, u->row, NULL, NULL, err, errlen) < 0) return -1;
                u->col[t] = u->row[0];
            }
            u->r->alpha[l * H + h] += pe_sink_alpha(u->col, 1, (size_t)n);
        }
    return 0;
}

/* The measurement for st, cached in slot under (model, prompts). NULL with err on failure. */
static const sink_result *sink_measure_in(app_view_ctx *c, int slot, const app_state *st, char *err,
                                          size_t errlen)
{
    app_measure_key key;
    if (app_measure_key_of(st, &key, err, errlen) < 0) return NULL;
    sink_result *r = app_cache_get(c, slot, &key, sizeof key);
    if (r) return r;
    app_measure ms;
    if (app_measure_begin(&ms, st, err, errlen) < 0) return NULL;
    size_t cells = (size_t)ms.m.info.layers * (size_t)ms.m.info.heads;
    r = app_cache_put(c, slot, &key, sizeof key, sizeof *r + cells * sizeof(double));
    if (!r) {
        snprintf(err, errlen, "%s", app_cache_error());
        app_measure_end(&ms);
        return NULL;
    }
    r->layers = ms.m.info.layers;
    r->heads = ms.m.info.heads;
    r->kv_heads =
        ms.m.info.kv_heads > 0 && ms.m.info.kv_heads < ms.m.info.heads ? ms.m.info.kv_heads : 0;
    size_t T = (size_t)ms.ps.longest;
    sink_run u = {r, malloc(sizeof(float) * T), malloc(sizeof(float) * T)};
    int rc = u.row && u.col ? app_measure_each(&ms, sink_prompt, &u, err, errlen) : -1;
    if (!u.row || !u.col) snprintf(err, errlen, "out of memory");
    free(u.row);
    free(u.col);
    app_measure_about_of(&ms, st, &r->about);
    app_measure_end(&ms);
    if (rc < 0) {
        app_cache_put(c, slot, "", 0, 0); /* forget the half-made result */
        return NULL;
    }
    for (size_t i = 0; i < cells; i++) r->alpha[i] /= r->about.prompts;
    return r;
}

static const sink_result *sink_measure(app_view_ctx *c, const app_state *st, char *err,
                                       size_t errlen)
{
    return sink_measure_in(c, 0, st, err, errlen);
}

static double sink_share(const sink_result *r, double threshold)
{
    return pe_sink_share(r->alpha, (size_t)r->layers * (size_t)r->heads, threshold);
}

/* ---- across models: Gu et al.'s Table 3 (--models) ----------------------------------------
 * Each model is the single-model measurement above, cached in a slot of its own (slot k for the
 * k-th model of the list), so the table's numbers are the single exports' numbers. */
typedef struct sink_table {
    int models, layers, heads; /* layers, heads: the largest of the models' */
    const sink_result *r[APP_MEASURE_MAX_MODELS];
    double share[APP_MEASURE_MAX_MODELS], mean[APP_MEASURE_MAX_MODELS], max[APP_MEASURE_MAX_MODELS];
    int above[APP_MEASURE_MAX_MODELS];
} sink_table;

/* --models: "shipped" or the comma list (checked when it was set) */
static int sink_list(const app_state *st, char names[APP_MEASURE_MAX_MODELS][512])
{
    int n = 0;
    if (strcmp(st->attn.sink_models, "shipped") == 0) {
        for (; app_attn_model_names[n] && n < APP_MEASURE_MAX_MODELS; n++)
            app_fmt(names[n], 512, "%s", app_attn_model_names[n]);
        return n;
    }
    char buf[sizeof st->attn.sink_models];
    app_fmt(buf, sizeof buf, "%s", st->attn.sink_models);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && n < APP_MEASURE_MAX_MODELS;
         tok = strtok_r(NULL, ",", &save))
        app_fmt(names[n++], 512, "%s", tok);
    return n;
}

static int sink_across(app_view_ctx *c, const app_state *st, sink_table *tb, char *err,
                       size_t errlen)
{
    char list[APP_MEASURE_MAX_MODELS][512]; /* 8 KiB: on the stack, so two threads never share */
    memset(tb, 0, sizeof *tb);
    int n = sink_list(st, list);
    app_state *one = malloc(sizeof *one);
    if (!one) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double thr = st->attn.sink_threshold;
    for (int k = 0; k < n; k++) {
        *one = *st;
        app_fmt(one->attn.model_name, sizeof one->attn.model_name, "%s", list[k]);
        const sink_result *r = sink_measure_in(c, k, one, err, errlen);
        if (!r) {
            /* the single measure's messages name --model; here the model came from --models */
            if (strncmp(err, "--model ", 8) == 0)
                memmove(err + 8, err + 7, strlen(err + 7) + 1), err[7] = 's';
            free(one);
            return -1;
        }
        int cells = r->layers * r->heads;
        tb->r[k] = r;
        tb->share[k] = sink_share(r, thr);
        tb->above[k] = (int)lround(tb->share[k] * cells);
        tb->max[k] = 0;
        for (int i = 0; i < cells; i++)
            tb->mean[k] += r->alpha[i] / cells, tb->max[k] = fmax(tb->max[k], r->alpha[i]);
        if (r->layers > tb->layers) tb->layers = r->layers;
        if (r->heads > tb->heads) tb->heads = r->heads;
    }
    tb->models = n;
    free(one);
    return 0;
}

static int sinks_across_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                              char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    sink_table tb;
    if (sink_across(c, st, &tb, err, errlen) < 0) return -1;
    int M = tb.models, L = tb.layers;
    double thr = st->attn.sink_threshold;
    char title[256], sub[512], thr_s[48];
    fig_num(thr, 2, thr_s, sizeof thr_s);
    snprintf(title, sizeof title, "Attention sinks across %d models: heads paying > %s to token 0",
             M, thr_s);
    app_fmt(sub, sizeof sub,
            "per layer, the heads' mean attention to the first token; legend: sink heads, largest "
            "alpha; %s, %d tokens  Gu et al. 2025",
            tb.r[0]->about.brief, tb.r[0]->about.tokens);
    fig_rect area = app_frame(s, t, th, title, sub);
    /* per layer, the mean over its heads: (models, layers), NaN past a model's depth */
    double *y = malloc(sizeof *y * (size_t)(M + 1) * (size_t)L);
    if (!y) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double *x = y + (size_t)M * L, hi = 0;
    for (int k = 0; k < M; k++)
        for (int l = 0; l < L; l++) {
            const sink_result *r = tb.r[k];
            double v = NAN;
            if (l < r->layers) {
                v = 0;
                for (int h = 0; h < r->heads; h++) v += r->alpha[l * r->heads + h] / r->heads;
                hi = fmax(hi, v);
            }
            y[(size_t)k * L + l] = v;
        }
    for (int l = 0; l < L; l++) x[l] = l;
    char legend[APP_MEASURE_MAX_MODELS][96];
    const char *names[APP_MEASURE_MAX_MODELS];
    uint32_t colors[APP_MEASURE_MAX_MODELS];
    for (int k = 0; k < M; k++) {
        app_fmt(legend[k], sizeof legend[k], "%s %d/%d, max %.2f", tb.r[k]->about.name, tb.above[k],
                tb.r[k]->layers * tb.r[k]->heads, tb.max[k]);
        names[k] = legend[k];
        colors[k] = th->series[k % 8];
    }
    fig_legend_slot slot = {{0, 0, 0, 0}, 0, 0};
    /* a narrow figure (a column 2.2in wide): a strip of the long entries, one a row, would
     * leave the plot a sliver; the models' names alone take two or three a row */
    if (!t->cells && area.w < t->text_h * 20)
        for (int k = 0; k < M; k++) names[k] = tb.r[k]->about.name;
    if (!t->cells) slot = fig_legend_take(t, &area, names, M);
    /* layers centred on whole numbers: the ticks name layers, not halves */
    fig_axes a = fig_axes_draw(s, t, th, area, -0.5, L - 0.5, 0, hi > 0 ? fmin(1, hi * 1.15) : 1,
                               "layer", "mean attention to token 0", FIG_GRID);
    for (int k = 0; k < M; k++) app_layer_curve(s, t, &a, x, y + (size_t)k * L, L, colors[k]);
    if (!fig_legend_in_slot(s, t, th, &slot, names, colors, NULL, M)) {
        /* inside the plot: in a small figure the long entries would cover the curves, so there
         * the legend names the models only (the readout and export keep the counts) */
        double wide = 0;
        for (int k = 0; k < M; k++) wide = fmax(wide, scene_text_width(t, legend[k], 1));
        if (!t->cells && wide > 0.4 * a.area.w)
            for (int k = 0; k < M; k++) names[k] = tb.r[k]->about.name;
        fig_legend(s, t, th, &a, names, colors, M, 0);
    }
    c->main = a;
    fig_mark_main(s, a.area, "plot");
    c->has_main = 1;
    c->main_rows = 1;
    c->main_cols = L;
    if (st->cursor_on) {
        int l = st->cur_c < L ? (st->cur_c < 0 ? 0 : st->cur_c) : L - 1;
        app_cursor_vline(s, t, th, &a, l);
        size_t u = (size_t)snprintf(c->readout, sizeof c->readout, "layer %d mean alpha:", l);
        for (int k = 0; k < M && u < sizeof c->readout; k++)
            u += (size_t)snprintf(c->readout + u, sizeof c->readout - u, "  %s %.3f",
                                  tb.r[k]->about.name, y[(size_t)k * L + l]);
    }
    free(y);
    return 0;
}

/* The paper's table: (models, layers, heads) alpha, NaN past a model's layers or heads; the
 * header names the models and gives each one's sink heads, share, mean and largest alpha. */
static int sinks_across_data(app_view_ctx *c, const app_state *st, app_data *out, char *err,
                             size_t errlen)
{
    sink_table tb;
    if (sink_across(c, st, &tb, err, errlen) < 0) return -1;
    int M = tb.models, L = tb.layers, H = tb.heads;
    if (app_data_alloc(out, 3, (size_t)M, (size_t)L, (size_t)H, err, errlen) < 0) return -1;
    out->f64 = 1;
    for (int k = 0; k < M; k++)
        for (int l = 0; l < L; l++)
            for (int h = 0; h < H; h++) {
                const sink_result *r = tb.r[k];
                out->data[((size_t)k * L + l) * H + h] =
                    l < r->layers && h < r->heads ? r->alpha[l * r->heads + h] : NAN;
            }
    size_t u =
        (size_t)snprintf(out->what, sizeof out->what,
                         "(models, layers, heads): alpha, mean attention to token 0 (Gu et "
                         "al. 2025) over %s, %d tokens; per model: sink heads above %.2g "
                         "= share, mean alpha, largest alpha:",
                         tb.r[0]->about.desc, tb.r[0]->about.tokens, st->attn.sink_threshold);
    for (int k = 0; k < M && u < sizeof out->what; k++)
        u += (size_t)snprintf(out->what + u, sizeof out->what - u,
                              " %s %d of %d = %.4f, %.3f, %.3f;", tb.r[k]->about.name, tb.above[k],
                              tb.r[k]->layers * tb.r[k]->heads, tb.share[k], tb.mean[k], tb.max[k]);
    return 0;
}

static int sinks_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                       char *err, size_t errlen)
{
    if (st->attn.sink_models[0]) return sinks_across_build(c, st, s, t, err, errlen);
    const fig_theme *th = fig_theme_get(st->dark);
    const sink_result *r = sink_measure(c, st, err, errlen);
    if (!r) return -1;
    int L = r->layers, H = r->heads;
    double thr = st->attn.sink_threshold, share = sink_share(r, thr);
    int above = (int)lround(share * L * H);
    char title[320], sub[512], thr_s[32], pct[32];
    fig_num(thr, 2, thr_s, sizeof thr_s);
    fig_fixed(100 * share, 0, 0, pct, sizeof pct);
    snprintf(title, sizeof title,
             "Attention sinks in %s: %d of %d heads (%s%%) pay > %s to token 0", r->about.name,
             above, L * H, pct, thr_s);
    app_fmt(sub, sizeof sub,
            "mean attention to the first token per layer and head; %s, %d tokens  Gu et al. 2025",
            r->about.brief, r->about.tokens);
    fig_rect area = app_frame(s, t, th, title, sub);
    float *cells = scene_alloc(s, sizeof *cells * (size_t)(L * H));
    if (!cells) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < L * H; i++) cells[i] = (float)r->alpha[i];
    const cmap *map = st->map ? st->map : cmap_default_sequential();
    /* cell centres on whole numbers: head h spans h - 0.5 .. h + 0.5; a grouped model's axis
     * says which heads share a kv head */
    char xlab[64] = "head";
    if (r->kv_heads) snprintf(xlab, sizeof xlab, "head (kv group = head / %d)", H / r->kv_heads);
    fig_axes a =
        app_draw_matrix(s, t, th, area, cells, (size_t)L, (size_t)H, (size_t)H, -0.5, H - 0.5, -0.5,
                        L - 0.5, xlab, "layer", map, 0, 1, "attention to token 0", th->mask);
    /* each value in its cell when the cells have room (a small model's 12 heads read as a
     * table); light text on the dark end of the map, dark on the light end */
    double cw = a.area.w / H, chh = a.area.h / L;
    if (!t->cells && cw > scene_text_width(t, "0.00", 0.8) * 1.4 && chh > t->text_h * 1.2)
        for (int l = 0; l < L; l++)
            for (int h = 0; h < H; h++) {
                double v = r->alpha[l * H + h];
                uint32_t col = cmap_color(map, v);
                double lum = 0.2126 * ((col >> 16) & 255) + 0.7152 * ((col >> 8) & 255) +
                             0.0722 * (col & 255);
                char vs[32];
                fig_fixed(v, 2, 0, vs, sizeof vs);
                scene_text(s, a.area.x + (h + 0.5) * cw, a.area.y + (l + 0.5) * chh, vs, 0.8,
                           SCENE_CENTER | SCENE_MIDDLE, lum < 128 ? 0xffffff : 0x000000, 0);
            }
    c->main = a;
    fig_mark_main(s, a.area, "plot");
    c->has_main = 1;
    c->main_rows = L;
    c->main_cols = H;
    if (st->cursor_on) {
        int l = st->cur_r < L ? (st->cur_r < 0 ? 0 : st->cur_r) : L - 1;
        int h = st->cur_c < H ? (st->cur_c < 0 ? 0 : st->cur_c) : H - 1;
        app_draw_cell_cursor(s, t, th, &a, l - 0.5, h - 0.5); /* cells centred on l, h */
        double v = r->alpha[l * H + h];
        char kv[32] = "";
        if (r->kv_heads) snprintf(kv, sizeof kv, " (kv group %d)", h / (H / r->kv_heads));
        snprintf(c->readout, sizeof c->readout, "layer %d  head %d%s  alpha %.3f%s", l, h, kv, v,
                 v > thr ? "  (a sink head)" : "");
    }
    return 0;
}

static int sinks_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    if (st->attn.sink_models[0]) return sinks_across_data(c, st, out, err, errlen);
    const sink_result *r = sink_measure(c, st, err, errlen);
    if (!r) return -1;
    if (app_data_alloc(out, 2, (size_t)r->layers, (size_t)r->heads, 0, err, errlen) < 0) return -1;
    memcpy(out->data, r->alpha, sizeof(double) * (size_t)(r->layers * r->heads));
    out->f64 = 1;
    double share = sink_share(r, st->attn.sink_threshold);
    app_fmt(out->what, sizeof out->what,
            "(layers, heads): mean attention to token 0 (alpha, Gu et al. 2025) over %s, %d "
            "tokens; share of heads above %.2g: %.4f (%d of %d)",
            r->about.desc, r->about.tokens, st->attn.sink_threshold, share,
            (int)lround(share * r->layers * r->heads), r->layers * r->heads);
    if (r->kv_heads) { /* which heads read the same keys and values */
        size_t u = strlen(out->what);
        snprintf(out->what + u, sizeof out->what - u,
                 "; grouped-query attention: head h reads kv head h / %d (%d kv heads)",
                 r->heads / r->kv_heads, r->kv_heads);
    }
    return 0;
}

static int set_sink_models(app_state *st, const char *v, char *err, size_t errlen)
{
    char *dst = st->attn.sink_models;
    size_t cap = sizeof st->attn.sink_models;
    if (strcmp(v, "none") == 0 || !*v) return dst[0] = '\0', 0;
    if (strcmp(v, "shipped") == 0) return app_fmt(dst, cap, "shipped"), 0;
    return app_measure_set_list("models", "shipped", dst, cap, v, err, errlen);
}
static void get_sink_models(const app_state *st, char *buf, size_t n)
{
    app_fmt(buf, n, "%s", st->attn.sink_models[0] ? st->attn.sink_models : "none");
}
static size_t choices_sink_models(const char **out, size_t n)
{
    static const char *const words[] = {"none", "shipped"};
    size_t k = 0;
    for (; k < 2 && k < n; k++) out[k] = words[k];
    return k;
}

const app_option app_sink_rows[] = {
    {APP_DBL("threshold", NULL,
             "sinks: a head whose mean attention to token 0 is above this is a "
             "sink head, 0..1 (0.3)",
             attn.sink_threshold, 0, 1, 0),
     APP_LIN(0, 1)},
    {APP_CUS("models", NULL,
             "sinks: one table across models (Gu et al. Table 3) instead of --model: none, "
             "shipped (the six shipped schemes) or a comma list like rope,alibi",
             set_sink_models, get_sink_models, choices_sink_models)},
    {.name = NULL},
};

const app_view app_view_sinks = {
    .name = "sinks",
    .description = "attention sinks: each head's mean attention to the first token (Gu et al.)",
    .build = sinks_build,
    .data = sinks_data,
    .options = "model models ids text prompt tokenizer threshold cmap",
};
