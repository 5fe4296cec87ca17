/* model_distance.c: how alike two models attend (issue 23, item 5), Kazemnejad et al. 2023, "The
 * Impact of Positional Encoding on Length Generalization in Transformers", Fig. 4: for layer l
 * of a reference model R and of a model M run on the same prompts (the same token ids),
 *
 *   D(l) = min over head pairs (h1, h2) of  mean over prompts and queries t of
 *          JSD(A_R[l][h1][t][0..t], A_M[l][h2][t][0..t])
 *
 * with JSD the Jensen-Shannon divergence in nats (pe_jsd: 0 for equal rows, at most ln 2), the
 * rows the models' own (lmi_attn_row). The mean over prompts weighs every query alike. By
 * default R is NoPE and M each other shipped scheme, the paper's question: which scheme's
 * attention does NoPE's resemble? Layers are compared up to the smaller model's depth.
 *
 * The figure: D(l) against the layer, one curve per compared model. The data: (layers, models),
 * NaN past a model's depth; the header names the models and the head pairs that reach the
 * minimum are in the readout. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "lmi.h"
#include "measure.h"
#include "ids.h"
#include "measures.h"
#include "views.h"

#define MD_MAX_MODELS 16
/* The rows of every head of one layer of both models are held at once: at most this many bytes */
#define MD_MAX_BLOCK_BYTES ((size_t)256 << 20)

typedef struct md_key {
    char reference[1024];
    char against[1024];
    app_mset_key prompts;
} md_key;

typedef struct md_result {
    int layers, models, prompts, tokens;
    char ref_name[128];
    char names[MD_MAX_MODELS][64];
    char desc[160], brief[64];
    double d[]; /* (layers, models) min over head pairs; then (layers, models, 2) the pair */
} md_result;

/* The comparison list: --against, or the shipped schemes other than the reference. */
static int md_list(const app_state *st, char names[MD_MAX_MODELS][512])
{
    int n = 0;
    if (st->attn.against[0]) {
        char buf[sizeof st->attn.against];
        app_fmt(buf, sizeof buf, "%s", st->attn.against);
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok && n < MD_MAX_MODELS;
             tok = strtok_r(NULL, ",", &save))
            app_fmt(names[n++], 512, "%s", tok);
        return n;
    }
    for (int i = 0; app_attn_model_names[i] && n < MD_MAX_MODELS; i++)
        if (strcmp(app_attn_model_names[i], st->attn.reference) != 0)
            app_fmt(names[n++], 512, "%s", app_attn_model_names[i]);
    return n;
}

/* Every head's causal block of layer l for prompt p: blocks (heads, n, n), row t in its first
 * t + 1 entries. */
static int md_blocks(const lmi_session *s, int l, int heads, int n, float *blocks, char *err,
                     size_t errlen)
{
    for (int h = 0; h < heads; h++)
        for (int t = 0; t < n; t++)
            if (lmi_attn_row(s, l, h, t, blocks + ((size_t)h * n + t) * n, NULL, NULL, err,
                             errlen) < 0)
                return -1;
    return 0;
}

/* The same ids from both models' tokenizers, or a message saying where they part. */
static int md_same_tokens(const lmi_model *ref, const lmi_model *m, const app_state *st,
                          const app_mset *ps, char *err, size_t errlen)
{
    if (st->attn.ids[0]) { /* the same ids: each model's vocabulary must hold them */
        int n = 0;
        return app_ids_parse("ids", st->attn.ids, m->info.vocab, m->info.name, NULL, &n, err,
                             errlen);
    }
    app_mset other;
    if (app_mset_load(&other, m, st, ps->cap, err, errlen) < 0) return -1;
    int rc = 0;
    for (int p = 0; p < ps->n && rc == 0; p++) {
        int same = p < other.n && other.len[p] == ps->len[p] &&
                   memcmp(other.ids[p], ps->ids[p], sizeof(int) * (size_t)ps->len[p]) == 0;
        if (!same) {
            snprintf(err, errlen,
                     "model-distance: %s and %s cut prompt %d into different tokens; the "
                     "measure compares attention over the same tokens (--ids gives both the same "
                     "ids)",
                     ref->info.name, m->info.name, p + 1);
            rc = -1;
        }
    }
    app_mset_free(&other);
    return rc;
}

static const md_result *md_measure(app_view_ctx *c, const app_state *st, char *err, size_t errlen)
{
    md_key key;
    memset(&key, 0, sizeof key);
    if (app_measure_path("reference", st->attn.reference, key.reference, sizeof key.reference, err,
                         errlen) < 0)
        return NULL;
    app_fmt(key.against, sizeof key.against, "%s", st->attn.against);
    app_mset_key_of(st, &key.prompts);
    md_result *r = app_cache_get(c, 0, &key, sizeof key);
    if (r) return r;
    char list[MD_MAX_MODELS][512]; /* 8 KiB: on the stack, so two threads never share it */
    int nm = md_list(st, list);
    if (nm == 0) {
        snprintf(err, errlen, "--against: no model to compare with --reference %s",
                 st->attn.reference);
        return NULL;
    }
    lmi_model ref = {0};
    lmi_model *ms = calloc((size_t)nm, sizeof *ms);
    app_mset ps = {0};
    float *b1 = NULL, *b2 = NULL;
    int rc = ms ? 0 : -1, L = 0;
    if (!ms) snprintf(err, errlen, "out of memory");
    if (rc == 0) rc = app_measure_open(st, "reference", st->attn.reference, &ref, err, errlen);
    int cap = rc == 0 ? app_mset_model_cap(&ref) : 0;
    for (int k = 0; k < nm && rc == 0; k++) {
        if (app_measure_open(st, "against", list[k], &ms[k], err, errlen) < 0) {
            rc = -1;
            break;
        }
        int mc = app_mset_model_cap(&ms[k]);
        if (mc < cap) cap = mc;
    }
    if (rc == 0) rc = app_mset_load(&ps, &ref, st, cap, err, errlen);
    for (int k = 0; k < nm && rc == 0; k++) rc = md_same_tokens(&ref, &ms[k], st, &ps, err, errlen);
    if (rc == 0) {
        L = ref.info.layers;
        int hmax = ref.info.heads;
        for (int k = 0; k < nm; k++)
            if (ms[k].info.layers > L) L = ms[k].info.layers;
        for (int k = 0; k < nm; k++)
            if (ms[k].info.heads > hmax) hmax = ms[k].info.heads;
        size_t block = (size_t)hmax * (size_t)ps.longest * (size_t)ps.longest;
        if (2 * block * sizeof(float) > MD_MAX_BLOCK_BYTES) {
            snprintf(err, errlen,
                     "model-distance: %d heads x %d tokens need %zu MiB of attention rows per "
                     "layer, more than %zu MiB (shorter prompts: --ids or --prompt)",
                     hmax, ps.longest, (2 * block * sizeof(float)) >> 20, MD_MAX_BLOCK_BYTES >> 20);
            rc = -1;
        } else {
            b1 = calloc(block, sizeof *b1);
            b2 = calloc(block, sizeof *b2);
            if (!b1 || !b2) {
                snprintf(err, errlen, "out of memory");
                rc = -1;
            }
        }
    }
    if (rc == 0) {
        size_t cells = (size_t)L * (size_t)nm;
        r = app_cache_put(c, 0, &key, sizeof key, sizeof *r + sizeof(double) * cells * 3);
        if (!r) {
            snprintf(err, errlen, "%s", app_cache_error());
            rc = -1;
        }
    }
    if (rc == 0) {
        r->layers = L;
        r->models = nm;
        r->prompts = ps.n;
        r->tokens = ps.tokens;
        app_fmt(r->ref_name, sizeof r->ref_name, "%s", ref.info.name);
        app_fmt(r->desc, sizeof r->desc, "%s", ps.desc);
        app_fmt(r->brief, sizeof r->brief, "%s", ps.brief);
        for (int k = 0; k < nm; k++) {
            /* a shipped model by its scheme's name; a checkpoint by its file name */
            const char *nm_k = ms[k].info.name;
            size_t ln = strlen(nm_k);
            if (ln > 6 && !strcmp(nm_k + ln - 6, ".pelab") && !strchr(list[k], '/')) nm_k = list[k];
            app_fmt(r->names[k], sizeof r->names[k], "%s", nm_k);
        }
        const char *rn = r->ref_name;
        size_t ln = strlen(rn);
        if (ln > 6 && !strcmp(rn + ln - 6, ".pelab") && !strchr(st->attn.reference, '/'))
            app_fmt(r->ref_name, sizeof r->ref_name, "%s", st->attn.reference);
    }
    /* sums of mean JSD per (layer, model, h1, h2) over prompts, weighted by tokens */
    double *acc = NULL;
    int H1 = ref.info.heads, H2max = 0;
    for (int k = 0; k < nm && rc == 0; k++)
        if (ms[k].info.heads > H2max) H2max = ms[k].info.heads;
    if (rc == 0) {
        acc = calloc((size_t)L * nm * H1 * H2max, sizeof *acc);
        if (!acc) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
    }
    for (int p = 0; p < ps.n && rc == 0; p++) {
        int n = ps.len[p];
        lmi_session sr = {0};
        rc = app_mset_run(&ps, p, &ref, &sr, err, errlen);
        for (int k = 0; k < nm && rc == 0; k++) {
            lmi_session sm = {0};
            rc = app_mset_run(&ps, p, &ms[k], &sm, err, errlen);
            int Lk = ms[k].info.layers < ref.info.layers ? ms[k].info.layers : ref.info.layers;
            int H2 = ms[k].info.heads;
            for (int l = 0; l < Lk && rc == 0; l++) {
                rc = md_blocks(&sr, l, H1, n, b1, err, errlen);
                if (rc == 0) rc = md_blocks(&sm, l, H2, n, b2, err, errlen);
                for (int h1 = 0; h1 < H1 && rc == 0; h1++)
                    for (int h2 = 0; h2 < H2; h2++)
                        /* pe_jsd_rows is the mean over the n queries: times n sums them */
                        acc[(((size_t)l * nm + k) * H1 + h1) * H2max + h2] +=
                            n * pe_jsd_rows(b1 + (size_t)h1 * n * n, (size_t)n,
                                            b2 + (size_t)h2 * n * n, (size_t)n, (size_t)n);
            }
            lmi_session_free(&sm);
        }
        lmi_session_free(&sr);
    }
    if (rc == 0) {
        double *pair = r->d + (size_t)L * nm;
        for (int l = 0; l < L; l++)
            for (int k = 0; k < nm; k++) {
                int Lk = ms[k].info.layers < ref.info.layers ? ms[k].info.layers : ref.info.layers;
                double best = NAN;
                int b1h = -1, b2h = -1;
                for (int h1 = 0; l < Lk && h1 < H1; h1++)
                    for (int h2 = 0; h2 < ms[k].info.heads; h2++) {
                        double v = acc[(((size_t)l * nm + k) * H1 + h1) * H2max + h2] / ps.tokens;
                        if (!(v >= best)) best = v, b1h = h1, b2h = h2;
                    }
                r->d[(size_t)l * nm + k] = best;
                pair[((size_t)l * nm + k) * 2] = b1h;
                pair[((size_t)l * nm + k) * 2 + 1] = b2h;
            }
    }
    free(acc);
    free(b1);
    free(b2);
    app_mset_free(&ps);
    for (int k = 0; ms && k < nm; k++) lmi_close(&ms[k]);
    free(ms);
    lmi_close(&ref);
    if (rc < 0) {
        if (r) app_cache_put(c, 0, "", 0, 0); /* forget the half-made result */
        return NULL;
    }
    return r;
}

static int md_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                    char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    const md_result *r = md_measure(c, st, err, errlen);
    if (!r) return -1;
    int L = r->layers, M = r->models;
    char title[256], sub[320];
    app_fmt(title, sizeof title, "How alike %s and other models attend", r->ref_name);
    app_fmt(sub, sizeof sub,
            "min over head pairs of the mean JSD, per layer; %s, %d tokens  Kazemnejad et al. "
            "2023",
            r->brief, r->tokens);
    fig_rect area = app_frame(s, t, th, title, sub);
    double hi = 0;
    for (int i = 0; i < L * M; i++)
        if (isfinite(r->d[i])) hi = fmax(hi, r->d[i]);
    if (!(hi > 0)) hi = 0.1;
    const char *names[MD_MAX_MODELS];
    uint32_t colors[MD_MAX_MODELS];
    for (int k = 0; k < M; k++) names[k] = r->names[k], colors[k] = th->series[k % 8];
    fig_legend_slot slot = {{0, 0, 0, 0}, 0, 0};
    if (!t->cells) slot = fig_legend_take(t, &area, names, M);
    /* layers as cells centred on whole numbers: the ticks name layers, not halves */
    fig_axes a =
        fig_axes_draw(s, t, th, area, -0.5, L - 0.5, 0, hi * 1.15, "layer", "JSD (nats)", FIG_GRID);
    double *x = malloc(sizeof *x * (size_t)L * 2);
    if (!x) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double *y = x + L;
    for (int k = 0; k < M; k++) {
        for (int l = 0; l < L; l++) x[l] = l, y[l] = r->d[(size_t)l * M + k];
        app_layer_curve(s, t, &a, x, y, L, colors[k]);
    }
    if (!fig_legend_in_slot(s, t, th, &slot, names, colors, NULL, M))
        fig_legend(s, t, th, &a, names, colors, M, 0);
    c->main = a;
    fig_mark_main(s, a.area, "plot");
    c->has_main = 1;
    c->main_rows = 1;
    c->main_cols = L;
    if (st->cursor_on) {
        int l = st->cur_c < L ? (st->cur_c < 0 ? 0 : st->cur_c) : L - 1;
        app_cursor_vline(s, t, th, &a, l);
        const double *pair = r->d + (size_t)L * M;
        size_t u = (size_t)snprintf(c->readout, sizeof c->readout, "layer %d:", l);
        for (int k = 0; k < M && u < sizeof c->readout; k++)
            u += (size_t)snprintf(c->readout + u, sizeof c->readout - u, "  %s %.4f (h%d~h%d)",
                                  r->names[k], r->d[(size_t)l * M + k],
                                  (int)pair[((size_t)l * M + k) * 2],
                                  (int)pair[((size_t)l * M + k) * 2 + 1]);
    }
    free(x);
    return 0;
}

static int md_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    const md_result *r = md_measure(c, st, err, errlen);
    if (!r) return -1;
    if (app_data_alloc(out, 2, (size_t)r->layers, (size_t)r->models, 0, err, errlen) < 0) return -1;
    memcpy(out->data, r->d, sizeof(double) * (size_t)(r->layers * r->models));
    out->f64 = 1;
    size_t u = (size_t)snprintf(out->what, sizeof out->what,
                                "(layers, models): min over head pairs of mean JSD (nats) with %s "
                                "over %s; models:",
                                r->ref_name, r->desc);
    for (int k = 0; k < r->models && u < sizeof out->what; k++)
        u += (size_t)snprintf(out->what + u, sizeof out->what - u, " %s", r->names[k]);
    return 0;
}

const app_view app_view_model_distance = {
    .name = "model-distance",
    .description = "how alike two models attend: min JSD over head pairs per layer (Kazemnejad)",
    .build = md_build,
    .data = md_data,
    .options = "reference against ids text prompt tokenizer",
};
