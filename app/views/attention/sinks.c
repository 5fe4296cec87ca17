/* sinks.c: attention sinks (issue 23): how much attention every head of a trained model pays to
 * the first token, as a (layers, heads) matrix, and the share of heads above --threshold.
 *
 * The measure is Gu et al., "When Attention Sink Emerges in Language Models" (ICLR 2025), eq. 1:
 * alpha(l, h) = 1/T sum_{t=0}^{T-1} A_lh[t][0] over the T tokens of a prompt (pe_sink_alpha),
 * averaged over the prompts; a head is a sink head when alpha > threshold (0.3 in the paper's
 * Table 3). The prompts are the held-out stories of assets/prompts (every preset, so no shipped
 * model trained on them) or, with --prompt, that one text. Any model the model interface opens
 * works: the six shipped schemes, a .pelab file, a llama2.c or Hugging Face checkpoint. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "colormap.h"
#include "lmi.h"
#include "measure.h"
#include "views.h"

/* The held-out stories measured by default: every preset of assets/prompts. */
static const char *const sink_presets[] = {"toy", "cake", "friend", "long", "start", "unknown"};
#define N_PRESETS (sizeof sink_presets / sizeof sink_presets[0])

/* What a measurement depends on: the model and the text (one prompt, or "" for the presets). */
typedef struct sink_key {
    char model[512];
    char prompt[1024];
    char tokenizer[512]; /* --tokenizer of a real model; "" = the one beside it */
} sink_key;

/* The cached result: the model's shape, and alpha per (layer, head) after it. */
typedef struct sink_result {
    int layers, heads, prompts, tokens;
    int kv_heads; /* grouped-query attention: heads h share kv head h / (heads / kv_heads) */
    char name[128];
    double alpha[]; /* (layers, heads) */
} sink_result;

/* Run one text through the model and add each head's alpha for it to sum (layers x heads). */
static int sink_text(const lmi_model *m, const char *text, double *sum, int *tokens, char *err,
                     size_t errlen)
{
    int cap = m->info.ctx > 0 ? m->info.ctx : 1;
    if (m->info.max_pos > 0 && m->info.max_pos < cap) cap = m->info.max_pos;
    lmi_token *tk = malloc(sizeof *tk * (size_t)cap);
    float *row = malloc(sizeof *row * (size_t)cap), *col = malloc(sizeof *col * (size_t)cap);
    lmi_session s = {0};
    int rc = -1;
    if (!tk || !row || !col) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    int n = lmi_tokenize(m, text, strlen(text), tk, cap, err, errlen);
    if (n < 0) goto done;
    if (n > cap) n = cap; /* the model's context: a longer text is measured on its start */
    if (n == 0) {
        rc = 0;
        goto done;
    }
    if (lmi_session_init(&s, m, n, err, errlen) < 0) goto done;
    for (int t = 0; t < n; t++)
        if (lmi_step(&s, tk[t].id, NULL, err, errlen) < 0) goto done;
    for (int l = 0; l < m->info.layers; l++)
        for (int h = 0; h < m->info.heads; h++) {
            for (int t = 0; t < n; t++) {
                if (lmi_attn_row(&s, l, h, t, row, NULL, NULL, err, errlen) < 0) goto done;
                col[t] = row[0];
            }
            sum[l * m->info.heads + h] += pe_sink_alpha(col, 1, (size_t)n);
        }
    *tokens += n;
    rc = 1;
done:
    lmi_session_free(&s);
    free(tk);
    free(row);
    free(col);
    return rc;
}

/* The measurement for st, cached under (model, prompt). NULL with err on failure. */
static const sink_result *sink_measure(app_view_ctx *c, const app_state *st, char *err,
                                       size_t errlen)
{
    sink_key key;
    memset(&key, 0, sizeof key);
    if (app_attn_model_path(st->attn.model_name, key.model, sizeof key.model, err, errlen) < 0)
        return NULL;
    snprintf(key.prompt, sizeof key.prompt, "%s", st->attn.prompt);
    snprintf(key.tokenizer, sizeof key.tokenizer, "%s", st->attn.tokenizer);
    sink_result *r = app_cache_get(c, 0, &key, sizeof key);
    if (r) return r;
    lmi_model m = {0};
    if (lmi_open(&m, key.model, err, errlen) < 0) return NULL;
    if (key.tokenizer[0] && lmi_set_tokenizer(&m, key.tokenizer, err, errlen) < 0) {
        lmi_close(&m);
        return NULL;
    }
    size_t cells = (size_t)m.info.layers * (size_t)m.info.heads;
    r = app_cache_put(c, 0, &key, sizeof key, sizeof *r + cells * sizeof(double));
    if (!r) {
        snprintf(err, errlen, "%s", app_cache_error());
        lmi_close(&m);
        return NULL;
    }
    r->layers = m.info.layers;
    r->heads = m.info.heads;
    r->kv_heads = m.info.kv_heads > 0 && m.info.kv_heads < m.info.heads ? m.info.kv_heads : 0;
    snprintf(r->name, sizeof r->name, "%s", m.info.name);
    char *text = malloc(65536);
    int rc = text ? 0 : -1;
    if (!text) snprintf(err, errlen, "out of memory");
    for (size_t i = 0; rc >= 0 && i < (key.prompt[0] ? 1 : N_PRESETS); i++) {
        if (key.prompt[0])
            snprintf(text, 65536, "%s", key.prompt);
        else if (app_attn_preset_text(sink_presets[i], text, 65536, err, errlen) < 0) {
            rc = -1;
            break;
        }
        rc = sink_text(&m, text, r->alpha, &r->tokens, err, errlen);
        if (rc > 0) r->prompts++;
    }
    free(text);
    lmi_close(&m);
    if (rc >= 0 && r->prompts == 0) {
        snprintf(err, errlen, "--prompt: the text has no tokens to measure");
        rc = -1;
    }
    if (rc < 0) {
        app_cache_put(c, 0, "", 0, 0); /* forget the half-made result */
        return NULL;
    }
    for (size_t i = 0; i < cells; i++) r->alpha[i] /= r->prompts;
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
             "Attention sinks in %s: %d of %d heads (%.0f%%) pay > %s to token 0", r->name, above,
             L * H, 100 * share, thr_s);
    snprintf(sub, sizeof sub,
             "mean attention to the first token per layer and head, over %d prompt%s (%d tokens)  "
             "Gu et al. 2025",
             r->prompts, r->prompts == 1 ? "" : "s", r->tokens);
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
        char kv[32] = "";
        if (r->kv_heads) snprintf(kv, sizeof kv, " (kv group %d)", h / (H / r->kv_heads));
        snprintf(c->readout, sizeof c->readout, "layer %d  head %d%s  alpha %.3f%s", l, h, kv, v,
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
    snprintf(out->what, sizeof out->what,
             "(layers, heads): mean attention to token 0 (alpha, Gu et al. 2025) over %d prompts, "
             "%d tokens; share of heads above %.2g: %.4f (%d of %d)",
             r->prompts, r->tokens, st->attn.sink_threshold, share,
             (int)lround(share * r->layers * r->heads), r->layers * r->heads);
    if (r->kv_heads) { /* which heads read the same keys and values */
        size_t u = strlen(out->what);
        snprintf(out->what + u, sizeof out->what - u,
                 "; grouped-query attention: head h reads kv head h / %d (%d kv heads)",
                 r->heads / r->kv_heads, r->kv_heads);
    }
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
    .options = "model tokenizer prompt threshold cmap",
    .own_options = sink_options,
};
