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

/* The measurement for st, cached under (model, prompts). NULL with err on failure. */
static const sink_result *sink_measure(app_view_ctx *c, const app_state *st, char *err,
                                       size_t errlen)
{
    app_measure_key key;
    if (app_measure_key_of(st, &key, err, errlen) < 0) return NULL;
    sink_result *r = app_cache_get(c, 0, &key, sizeof key);
    if (r) return r;
    app_measure ms;
    if (app_measure_begin(&ms, st, err, errlen) < 0) return NULL;
    size_t cells = (size_t)ms.m.info.layers * (size_t)ms.m.info.heads;
    r = app_cache_put(c, 0, &key, sizeof key, sizeof *r + cells * sizeof(double));
    if (!r) {
        snprintf(err, errlen, "%s", app_cache_error());
        app_measure_end(&ms);
        return NULL;
    }
    r->layers = ms.m.info.layers;
    r->heads = ms.m.info.heads;
    size_t T = (size_t)ms.ps.longest;
    sink_run u = {r, malloc(sizeof(float) * T), malloc(sizeof(float) * T)};
    int rc = u.row && u.col ? app_measure_each(&ms, sink_prompt, &u, err, errlen) : -1;
    if (!u.row || !u.col) snprintf(err, errlen, "out of memory");
    free(u.row);
    free(u.col);
    app_measure_about_of(&ms, st, &r->about);
    app_measure_end(&ms);
    if (rc < 0) {
        app_cache_put(c, 0, "", 0, 0); /* forget the half-made result */
        return NULL;
    }
    for (size_t i = 0; i < cells; i++) r->alpha[i] /= r->about.prompts;
    return r;
}

static double sink_share(const sink_result *r, double threshold)
{
    return pe_sink_share(r->alpha, (size_t)r->layers * (size_t)r->heads, threshold);
}

static int sinks_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                       char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    const sink_result *r = sink_measure(c, st, err, errlen);
    if (!r) return -1;
    int L = r->layers, H = r->heads;
    double thr = st->attn.sink_threshold, share = sink_share(r, thr);
    int above = (int)lround(share * L * H);
    char title[256], sub[512], thr_s[48];
    fig_num(thr, 2, thr_s, sizeof thr_s);
    snprintf(title, sizeof title,
             "Attention sinks in %s: %d of %d heads (%.0f%%) pay > %s to token 0", r->about.name,
             above, L * H, 100 * share, thr_s);
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
    /* cell centres on whole numbers: head h spans h - 0.5 .. h + 0.5 */
    fig_axes a =
        app_draw_matrix(s, t, th, area, cells, (size_t)L, (size_t)H, (size_t)H, -0.5, H - 0.5, -0.5,
                        L - 0.5, "head", "layer", map, 0, 1, "attention to token 0", th->mask);
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
                scene_textf(s, a.area.x + (h + 0.5) * cw, a.area.y + (l + 0.5) * chh, 0.8,
                            SCENE_CENTER | SCENE_MIDDLE, lum < 128 ? 0xffffff : 0x000000, 0, "%.2f",
                            v);
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
        snprintf(c->readout, sizeof c->readout, "layer %d  head %d  alpha %.3f%s", l, h, v,
                 v > thr ? "  (a sink head)" : "");
    }
    return 0;
}

static int sinks_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
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
    return 0;
}

static const app_option sink_options[] = {
    {APP_DBL("threshold", NULL,
             "sinks: a head whose mean attention to token 0 is above this is a "
             "sink head, 0..1 (0.3)",
             attn.sink_threshold, 0, 1, 0),
     APP_LIN(0, 1)},
    {.name = NULL},
};

const app_view app_view_sinks = {
    .name = "sinks",
    .description = "attention sinks: each head's mean attention to the first token (Gu et al.)",
    .build = sinks_build,
    .data = sinks_data,
    .options = "model ids text prompt tokenizer threshold cmap",
    .own_options = sink_options,
};
