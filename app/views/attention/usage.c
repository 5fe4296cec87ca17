/* usage.c: how a RoPE model uses its frequencies (issue 23, item 2).
 *
 * Barbero et al. 2024, "Round and Round We Go! What makes Rotary Positional Encodings useful?",
 * Fig. 3-4: the mean norm of each rotary pair of the queries (or keys),
 *
 *   N(l, h, k) = mean over prompts and tokens t of || (x_t[i0(k)], x_t[i1(k)]) ||
 *
 * with x = q or k of (layer l, head h) as the projections make them (lmi_qk: before the
 * rotation, which keeps a pair's norm anyway, the attention factor aside) and (i0, i1) pair k
 * as the model pairs its dimensions (pe_pair_norms). Pair 0 turns fastest; a model that leans on
 * the slow pairs for content shows large norms at the right. Drawn as pairs x layers (the mean
 * over heads) and, for --layer, pairs x heads.
 *
 * Jin et al. 2025, "Massive Values in Self-Attention Modules are the Key to Contextual Knowledge
 * Understanding": per prompt, layer and head, M[d] = ||x[:, d]||_2 over the prompt's tokens, and
 * d is massive when M[d] > lambda * mean_d M[d] (lambda 5, --massive). Their share per frequency
 * band: the pairs in four quarters by index (fastest to slowest) and, with partial rotary, the
 * dimensions that never turn; the share is the fraction of all massive (prompt, layer, head, d)
 * that fall in the band. A model without RoPE has no pairs and is refused. */
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

#define USAGE_BANDS 5 /* four quarters of the pairs, then the unrotated dimensions */

typedef struct usage_key {
    char model[1024];
    app_mset_key prompts;
    double lambda;
} usage_key;

typedef struct usage_result {
    int layers, heads, pairs, head_dim, rot_dim, prompts, tokens;
    char name[128];
    char desc[160], brief[64];
    double share[2][USAGE_BANDS]; /* q, k: share of the massive dimensions in each band */
    long massive[2];              /* q, k: massive (prompt, layer, head, d) found */
    double norm[];                /* (2, layers, heads, pairs): q then k */
} usage_result;

static const char *refusal(const char *pe)
{
    return strcmp(pe, "rope") == 0 ? NULL : pe;
}

/* The band of dimension d (0..head_dim-1) of a head with rot_dim rotated dimensions. */
static int usage_band(int d, int rot_dim, pe_pairing pairing)
{
    int np = rot_dim / 2;
    if (d >= rot_dim || np == 0) return USAGE_BANDS - 1;
    int k = pairing == PE_PAIRING_HALF ? (d < np ? d : d - np) : d / 2;
    return k * 4 / np;
}

static int usage_validate(const app_state *st, char *err, size_t errlen)
{
    /* a shipped scheme is known without opening it; a checkpoint says when it is opened */
    for (int i = 0; app_attn_model_names[i]; i++)
        if (!strcmp(st->attn.model_name, app_attn_model_names[i]) && refusal(st->attn.model_name)) {
            snprintf(err, errlen,
                     "--model %s: usage measures rotary pairs, and %s has no RoPE (allowed: rope, "
                     "or a Llama-family checkpoint)",
                     st->attn.model_name, st->attn.model_name);
            return -1;
        }
    return 0;
}

static const usage_result *usage_measure(app_view_ctx *c, const app_state *st, char *err,
                                         size_t errlen)
{
    if (usage_validate(st, err, errlen) < 0) return NULL;
    usage_key key;
    memset(&key, 0, sizeof key);
    if (app_attn_model_path(st->attn.model_name, key.model, sizeof key.model, err, errlen) < 0)
        return NULL;
    app_mset_key_of(st, &key.prompts);
    key.lambda = st->attn.massive_lambda;
    usage_result *r = app_cache_get(c, 0, &key, sizeof key);
    if (r) return r;
    lmi_model m = {0};
    if (app_measure_open(st, "model", st->attn.model_name, &m, err, errlen) < 0) return NULL;
    if (m.info.rot_dim <= 0) {
        snprintf(err, errlen,
                 "--model %s: usage measures rotary pairs, and this %s model has no RoPE (allowed: "
                 "rope, or a Llama-family checkpoint)",
                 m.info.name, m.info.pe_name);
        lmi_close(&m);
        return NULL;
    }
    app_mset ps;
    if (app_mset_load(&ps, &m, st, 0, err, errlen) < 0) {
        lmi_close(&m);
        return NULL;
    }
    int L = m.info.layers, H = m.info.heads, hd = m.info.head_dim, rot = m.info.rot_dim;
    int np = rot / 2, T = ps.longest;
    size_t lhp = (size_t)L * (size_t)H * (size_t)np;
    r = app_cache_put(c, 0, &key, sizeof key, sizeof *r + sizeof(double) * 2 * lhp);
    float *x[2] = {NULL, NULL};
    double *pn = NULL, *mm = NULL;
    unsigned char *mass = NULL;
    int rc = 0;
    if (!r) {
        snprintf(err, errlen, "%s", app_cache_error());
        rc = -1;
    } else {
        x[0] = malloc(sizeof(float) * (size_t)T * (size_t)hd);
        x[1] = malloc(sizeof(float) * (size_t)T * (size_t)hd);
        pn = malloc(sizeof *pn * (size_t)np);
        mm = malloc(sizeof *mm * (size_t)hd);
        mass = malloc((size_t)hd);
        if (!x[0] || !x[1] || !pn || !mm || !mass) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
    }
    long band_count[2][USAGE_BANDS] = {{0}};
    for (int p = 0; p < ps.n && rc == 0; p++) {
        lmi_session s = {0};
        int n = ps.len[p];
        rc = app_mset_run(&ps, p, &m, &s, err, errlen);
        for (int l = 0; l < L && rc == 0; l++)
            for (int h = 0; h < H && rc == 0; h++) {
                for (int t = 0; t < n && rc == 0; t++)
                    if (lmi_qk(&s, l, h, t, x[0] + (size_t)t * hd, x[1] + (size_t)t * hd, err,
                               errlen) < 0)
                        rc = -1;
                for (int side = 0; side < 2 && rc == 0; side++) {
                    double *acc = r->norm + (size_t)side * lhp + ((size_t)l * H + h) * np;
                    for (int t = 0; t < n; t++) {
                        pe_pair_norms(x[side] + (size_t)t * hd, rot, m.info.pairing, pn);
                        for (int k = 0; k < np; k++) acc[k] += pn[k];
                    }
                    pe_massive_dims(x[side], (size_t)hd, (size_t)n, hd, key.lambda, mm, mass);
                    for (int d = 0; d < hd; d++)
                        if (mass[d]) {
                            band_count[side][usage_band(d, rot, m.info.pairing)]++;
                            r->massive[side]++;
                        }
                }
            }
        lmi_session_free(&s);
    }
    free(x[0]);
    free(x[1]);
    free(pn);
    free(mm);
    free(mass);
    if (rc == 0) {
        r->layers = L;
        r->heads = H;
        r->pairs = np;
        r->head_dim = hd;
        r->rot_dim = rot;
        r->prompts = ps.n;
        r->tokens = ps.tokens;
        app_measure_name(st->attn.model_name, &m.info, r->name, sizeof r->name);
        app_fmt(r->desc, sizeof r->desc, "%s", ps.desc);
        app_fmt(r->brief, sizeof r->brief, "%s", ps.brief);
        for (size_t i = 0; i < 2 * lhp; i++) r->norm[i] /= ps.tokens;
        for (int side = 0; side < 2; side++)
            for (int b = 0; b < USAGE_BANDS; b++)
                r->share[side][b] =
                    r->massive[side] ? (double)band_count[side][b] / r->massive[side] : 0;
    }
    app_mset_free(&ps);
    lmi_close(&m);
    if (rc < 0) {
        if (r) app_cache_put(c, 0, "", 0, 0); /* forget the half-made result */
        return NULL;
    }
    return r;
}

/* "0% 3% 12% 85%" (and the unrotated band when there is one) */
static void share_text(const usage_result *r, int side, char *buf, size_t n)
{
    size_t u = 0;
    int bands = r->rot_dim < r->head_dim ? USAGE_BANDS : USAGE_BANDS - 1;
    for (int b = 0; b < bands && u < n; b++)
        u += (size_t)snprintf(buf + u, n - u, "%s%s%.0f%%", b ? " " : "",
                              b == USAGE_BANDS - 1 ? "unrotated " : "", 100 * r->share[side][b]);
}

static int usage_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                       char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    const usage_result *r = usage_measure(c, st, err, errlen);
    if (!r) return -1;
    int L = r->layers, H = r->heads, P = r->pairs, side = st->attn.qk_side;
    int layer = st->attn.layer < L ? st->attn.layer : L - 1;
    const double *norm = r->norm + (size_t)side * L * H * P;
    char title[256], sub[400], shares[128];
    share_text(r, side, shares, sizeof shares);
    app_fmt(title, sizeof title, "Rotary %s pair norms in %s (Barbero et al.)", side ? "k" : "q",
            r->name);
    app_fmt(sub, sizeof sub, "pair 0 fastest; massive (> %gx mean) by quarter: %s; %s",
            st->attn.massive_lambda, shares, r->brief);
    fig_rect area = app_frame(s, t, th, title, sub);
    float *a1 = scene_alloc(s, sizeof *a1 * (size_t)(L * P));
    float *a2 = scene_alloc(s, sizeof *a2 * (size_t)(H * P));
    if (!a1 || !a2) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double vmax = 0;
    for (int l = 0; l < L; l++)
        for (int k = 0; k < P; k++) {
            double v = 0;
            for (int h = 0; h < H; h++) v += norm[((size_t)l * H + h) * P + k] / H;
            a1[l * P + k] = (float)v;
            vmax = fmax(vmax, v);
        }
    for (int h = 0; h < H; h++)
        for (int k = 0; k < P; k++) {
            a2[h * P + k] = (float)norm[((size_t)layer * H + h) * P + k];
            vmax = fmax(vmax, a2[h * P + k]);
        }
    if (!(vmax > 0)) vmax = 1;
    const cmap *map = st->map ? st->map : cmap_default_sequential();
    /* side by side when the figure is wide enough, else one above the other; the main panel
     * (pairs x layers) takes the larger part */
    fig_rect left = area, right = area;
    int wide = area.w > area.h * 1.3;
    /* a small figure (a paper column, 300x200) keeps the main panel alone: two panels there
     * leave each a sliver; the per-head panel is one --layer away in a larger one */
    int both = t->cells ? area.w >= 60 && area.h >= 12
                        : (wide ? area.w >= 50 * t->char_w : area.h >= 20 * t->text_h);
    if (!both)
        ;
    else if (wide)
        right = fig_take_right(&left, area.w * 0.42, t->cells ? 1 : t->char_w * 2);
    else
        right = fig_take_bottom(&left, area.h / 2, t->cells ? 1 : t->text_h);
    char lab2[64];
    app_fmt(lab2, sizeof lab2, "head (layer %d)", layer);
    fig_axes ax1 =
        app_draw_matrix(s, t, th, left, a1, (size_t)L, (size_t)P, (size_t)P, -0.5, P - 0.5, -0.5,
                        L - 0.5, "rotary pair", "layer", map, 0, vmax, "mean norm", th->mask);
    if (both)
        app_draw_matrix(s, t, th, right, a2, (size_t)H, (size_t)P, (size_t)P, -0.5, P - 0.5, -0.5,
                        H - 0.5, "rotary pair", lab2, map, 0, vmax, "mean norm", th->mask);
    c->main = ax1;
    fig_mark_main(s, ax1.area, "plot");
    c->has_main = 1;
    c->main_rows = L;
    c->main_cols = P;
    if (st->cursor_on) {
        int l = st->cur_r < L ? (st->cur_r < 0 ? 0 : st->cur_r) : L - 1;
        int k = st->cur_c < P ? (st->cur_c < 0 ? 0 : st->cur_c) : P - 1;
        app_draw_cell_cursor(s, t, th, &ax1, l - 0.5, k - 0.5); /* cells centred on l, k */
        app_fmt(c->readout, sizeof c->readout, "layer %d  pair %d  mean |%s pair| %.4f", l, k,
                side ? "k" : "q", a1[l * P + k]);
    }
    return 0;
}

static int usage_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    const usage_result *r = usage_measure(c, st, err, errlen);
    if (!r) return -1;
    int side = st->attn.qk_side;
    size_t lhp = (size_t)r->layers * (size_t)r->heads * (size_t)r->pairs;
    if (app_data_alloc(out, 3, (size_t)r->layers, (size_t)r->heads, (size_t)r->pairs, err, errlen) <
        0)
        return -1;
    memcpy(out->data, r->norm + (size_t)side * lhp, sizeof(double) * lhp);
    out->f64 = 1;
    char shares[128];
    share_text(r, side, shares, sizeof shares);
    app_fmt(out->what, sizeof out->what,
            "(layers, heads, pairs): mean norm of each rotary pair of %s over %s, %d tokens; "
            "massive (> %g x mean) by pair quarter: %s",
            side ? "k" : "q", r->desc, r->tokens, st->attn.massive_lambda, shares);
    return 0;
}

const app_view app_view_usage = {
    .name = "usage",
    .description = "how a RoPE model uses its frequencies: q/k norm per rotary pair (Barbero)",
    .validate = usage_validate,
    .build = usage_build,
    .data = usage_data,
    .options = "model side layer massive ids text prompt tokenizer",
    .own_options = app_measure_options,
};
