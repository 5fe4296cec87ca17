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
 * that fall in the band. A model without RoPE has no pairs and is refused.
 *
 * --show picks what the figure draws and the export holds, each a (layers, heads, ...) array:
 *   norm     (layers, heads, pairs): N(l, h, k) above;
 *   massive  (layers, heads, bands): S(l, h, b) = #massive (prompt, d) of head (l, h) in band b
 *            / #massive over the whole model, so the entries sum to 1 and their sum over layers
 *            and heads is the band's share (the header and subtitle quote those). */
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
    app_measure_key on;
    double lambda;
} usage_key;

typedef struct usage_result {
    int layers, heads, pairs, head_dim, rot_dim;
    app_measure_about about;
    double share[2][USAGE_BANDS]; /* q, k: share of the massive dimensions in each band */
    long massive[2];              /* q, k: massive (prompt, layer, head, d) found */
    long checked[2];              /* q, k: (prompt, layer, head, d) looked at */
    double *mass;                 /* (2, layers, heads, USAGE_BANDS) massive counts, after norm */
    double norm[];                /* (2, layers, heads, pairs): q then k */
} usage_result;

static const char *const show_names[] = {"norm", "massive", NULL};

/* The bands a head has: four quarters of its pairs, and the unrotated dimensions if any. */
static int usage_bands(const usage_result *r)
{
    return r->rot_dim < r->head_dim ? USAGE_BANDS : USAGE_BANDS - 1;
}

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

/* The sums of one prompt: every head's pair norms and massive dimensions, q and k. */
typedef struct usage_run {
    usage_result *r;
    const lmi_info *in;
    double lambda;
    float *x[2];         /* (T, head_dim) q, k of one head */
    double *pn, *mm;     /* (pairs), (head_dim) */
    unsigned char *mass; /* (head_dim) */
    long band[2][USAGE_BANDS];
} usage_run;

static int usage_prompt(void *arg, const lmi_session *s, int n, char *err, size_t errlen)
{
    usage_run *u = arg;
    usage_result *r = u->r;
    int L = r->layers, H = r->heads, hd = r->head_dim, rot = r->rot_dim, np = r->pairs;
    size_t lhp = (size_t)L * (size_t)H * (size_t)np;
    for (int l = 0; l < L; l++)
        for (int h = 0; h < H; h++) {
            for (int t = 0; t < n; t++)
                if (lmi_qk(s, l, h, t, u->x[0] + (size_t)t * hd, u->x[1] + (size_t)t * hd, err,
                           errlen) < 0)
                    return -1;
            for (int side = 0; side < 2; side++) {
                double *acc = r->norm + (size_t)side * lhp + ((size_t)l * H + h) * np;
                for (int t = 0; t < n; t++) {
                    pe_pair_norms(u->x[side] + (size_t)t * hd, rot, u->in->pairing, u->pn);
                    for (int k = 0; k < np; k++) acc[k] += u->pn[k];
                }
                pe_massive_dims(u->x[side], (size_t)hd, (size_t)n, hd, u->lambda, u->mm, u->mass);
                double *mc = r->mass + (((size_t)side * L + l) * H + h) * USAGE_BANDS;
                r->checked[side] += hd;
                for (int d = 0; d < hd; d++)
                    if (u->mass[d]) {
                        int b = usage_band(d, rot, u->in->pairing);
                        u->band[side][b]++;
                        mc[b]++;
                        r->massive[side]++;
                    }
            }
        }
    return 0;
}

static const usage_result *usage_measure(app_view_ctx *c, const app_state *st, char *err,
                                         size_t errlen)
{
    if (usage_validate(st, err, errlen) < 0) return NULL;
    usage_key key;
    memset(&key, 0, sizeof key);
    if (app_measure_key_of(st, &key.on, err, errlen) < 0) return NULL;
    key.lambda = st->attn.massive_lambda;
    usage_result *r = app_cache_get(c, 0, &key, sizeof key);
    if (r) return r;
    app_measure ms;
    if (app_measure_begin(&ms, st, err, errlen) < 0) return NULL;
    const lmi_info *in = &ms.m.info;
    if (in->rot_dim <= 0) {
        snprintf(err, errlen,
                 "--model %s: usage measures rotary pairs, and this %s model has no RoPE (allowed: "
                 "rope, or a Llama-family checkpoint)",
                 in->name, in->pe_name);
        app_measure_end(&ms);
        return NULL;
    }
    int L = in->layers, H = in->heads, hd = in->head_dim, np = in->rot_dim / 2, T = ms.ps.longest;
    size_t lhp = (size_t)L * (size_t)H * (size_t)np, lhb = (size_t)L * (size_t)H * USAGE_BANDS;
    r = app_cache_put(c, 0, &key, sizeof key, sizeof *r + sizeof(double) * 2 * (lhp + lhb));
    usage_run u = {.r = r, .in = in, .lambda = key.lambda};
    int rc = 0;
    if (!r) {
        snprintf(err, errlen, "%s", app_cache_error());
        rc = -1;
    } else {
        r->mass = r->norm + 2 * lhp;
        r->layers = L;
        r->heads = H;
        r->pairs = np;
        r->head_dim = hd;
        r->rot_dim = in->rot_dim;
        u.x[0] = malloc(sizeof(float) * (size_t)T * (size_t)hd);
        u.x[1] = malloc(sizeof(float) * (size_t)T * (size_t)hd);
        u.pn = malloc(sizeof *u.pn * (size_t)np);
        u.mm = malloc(sizeof *u.mm * (size_t)hd);
        u.mass = malloc((size_t)hd);
        if (!u.x[0] || !u.x[1] || !u.pn || !u.mm || !u.mass) {
            snprintf(err, errlen, "out of memory");
            rc = -1;
        }
    }
    if (rc == 0) rc = app_measure_each(&ms, usage_prompt, &u, err, errlen);
    free(u.x[0]);
    free(u.x[1]);
    free(u.pn);
    free(u.mm);
    free(u.mass);
    if (rc == 0) {
        app_measure_about_of(&ms, st, &r->about);
        for (size_t i = 0; i < 2 * lhp; i++) r->norm[i] /= r->about.tokens;
        for (int side = 0; side < 2; side++)
            for (int b = 0; b < USAGE_BANDS; b++)
                r->share[side][b] =
                    r->massive[side] ? (double)u.band[side][b] / r->massive[side] : 0;
    }
    app_measure_end(&ms);
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
    int bands = usage_bands(r);
    for (int b = 0; b < bands && u < n; b++)
        u += (size_t)snprintf(buf + u, n - u, "%s%s%.0f%%", b ? " " : "",
                              b == USAGE_BANDS - 1 ? "unrotated " : "", 100 * r->share[side][b]);
}

/* What --show asks for as a (layers, heads, K) array into out (malloc'd; NULL when out of
 * memory), K in *k: the pair norms, or each head's share of the massive values per band. */
static double *usage_values(const usage_result *r, int side, int show, int *k)
{
    int L = r->layers, H = r->heads, K = show ? usage_bands(r) : r->pairs;
    double *v = malloc(sizeof *v * (size_t)L * (size_t)H * (size_t)K);
    if (!v) return NULL;
    for (int lh = 0; lh < L * H; lh++)
        for (int i = 0; i < K; i++)
            v[(size_t)lh * K + i] =
                show ? (r->massive[side] ? r->mass[((size_t)side * L * H + lh) * USAGE_BANDS + i] /
                                               r->massive[side]
                                         : 0)
                     : r->norm[((size_t)side * L * H + lh) * r->pairs + i];
    *k = K;
    return v;
}

static int usage_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                       char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    const usage_result *r = usage_measure(c, st, err, errlen);
    if (!r) return -1;
    int L = r->layers, H = r->heads, side = st->attn.qk_side, show = st->attn.usage_show, P;
    int layer = st->attn.layer < L ? st->attn.layer : L - 1;
    const char *qk = side ? "k" : "q";
    double *vals = usage_values(r, side, show, &P);
    if (!vals) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char title[256], sub[400], shares[128];
    share_text(r, side, shares, sizeof shares);
    if (show) {
        app_fmt(title, sizeof title, "Massive %s values in %s by frequency band (Jin et al.)", qk,
                r->about.name);
        app_fmt(sub, sizeof sub, "> %gx mean; %ld found, by pair quarter (fastest first): %s; %s",
                st->attn.massive_lambda, r->massive[side], shares, r->about.brief);
    } else {
        app_fmt(title, sizeof title, "Rotary %s pair norms in %s (Barbero et al.)", qk,
                r->about.name);
        app_fmt(sub, sizeof sub, "pair 0 fastest; massive (> %gx mean) by quarter: %s; %s",
                st->attn.massive_lambda, shares, r->about.brief);
    }
    fig_rect area = app_frame(s, t, th, title, sub);
    float *a1 = scene_alloc(s, sizeof *a1 * (size_t)(L * P));
    float *a2 = scene_alloc(s, sizeof *a2 * (size_t)(H * P));
    if (!a1 || !a2) {
        free(vals);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* the main panel: the mean over heads (norms) or their sum (shares: a layer's share) */
    double vmax = 0;
    for (int l = 0; l < L; l++)
        for (int k = 0; k < P; k++) {
            double v = 0;
            for (int h = 0; h < H; h++) v += vals[((size_t)l * H + h) * P + k] / (show ? 1 : H);
            a1[l * P + k] = (float)v;
            vmax = fmax(vmax, v);
        }
    for (int h = 0; h < H; h++)
        for (int k = 0; k < P; k++) {
            a2[h * P + k] = (float)vals[((size_t)layer * H + h) * P + k];
            vmax = fmax(vmax, a2[h * P + k]);
        }
    free(vals);
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
    const char *xl = show ? (P > 4 ? "pair quarter, 4 unrotated" : "pair quarter") : "rotary pair",
               *cl = show ? "share of massive" : "mean norm";
    fig_axes ax1 = app_draw_matrix(s, t, th, left, a1, (size_t)L, (size_t)P, (size_t)P, -0.5,
                                   P - 0.5, -0.5, L - 0.5, xl, "layer", map, 0, vmax, cl, th->mask);
    if (both)
        app_draw_matrix(s, t, th, right, a2, (size_t)H, (size_t)P, (size_t)P, -0.5, P - 0.5, -0.5,
                        H - 0.5, xl, lab2, map, 0, vmax, cl, th->mask);
    c->main = ax1;
    fig_mark_main(s, ax1.area, "plot");
    c->has_main = 1;
    c->main_rows = L;
    c->main_cols = P;
    if (st->cursor_on) {
        int l = st->cur_r < L ? (st->cur_r < 0 ? 0 : st->cur_r) : L - 1;
        int k = st->cur_c < P ? (st->cur_c < 0 ? 0 : st->cur_c) : P - 1;
        app_draw_cell_cursor(s, t, th, &ax1, l - 0.5, k - 0.5); /* cells centred on l, k */
        if (show)
            app_fmt(c->readout, sizeof c->readout, "layer %d  band %d  share of massive %s %.4f", l,
                    k, qk, a1[l * P + k]);
        else
            app_fmt(c->readout, sizeof c->readout, "layer %d  pair %d  mean |%s pair| %.4f", l, k,
                    qk, a1[l * P + k]);
    }
    return 0;
}

static int usage_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    const usage_result *r = usage_measure(c, st, err, errlen);
    if (!r) return -1;
    int side = st->attn.qk_side, show = st->attn.usage_show, K;
    double *vals = usage_values(r, side, show, &K);
    if (!vals ||
        app_data_alloc(out, 3, (size_t)r->layers, (size_t)r->heads, (size_t)K, err, errlen) < 0) {
        if (!vals) snprintf(err, errlen, "out of memory");
        free(vals);
        return -1;
    }
    memcpy(out->data, vals, sizeof(double) * (size_t)r->layers * (size_t)r->heads * (size_t)K);
    free(vals);
    out->f64 = 1;
    char shares[128];
    share_text(r, side, shares, sizeof shares);
    if (show)
        app_fmt(out->what, sizeof out->what,
                "(layers, heads, band): share of all massive %s values (||%s[:, d]|| > %g x the "
                "mean, Jin et al. 2025) in each head's band (0-3 quarters of the pairs, fastest "
                "first%s); %ld of %ld (prompt, layer, head, dim) massive over %s, %d tokens; "
                "summed over layers and heads: %s",
                side ? "k" : "q", side ? "k" : "q", st->attn.massive_lambda,
                K == USAGE_BANDS ? "; 4 unrotated" : "", r->massive[side], r->checked[side],
                r->about.desc, r->about.tokens, shares);
    else
        app_fmt(out->what, sizeof out->what,
                "(layers, heads, pairs): mean norm of each rotary pair of %s over %s, %d tokens; "
                "massive (> %g x mean) by pair quarter: %s",
                side ? "k" : "q", r->about.desc, r->about.tokens, st->attn.massive_lambda, shares);
    return 0;
}

/* --show: registered here (a row of the usage view's own) and listed in its options */
const app_option app_usage_rows[] = {
    {APP_CHO("show", NULL,
             "usage: what the figure and the export hold: norm (the mean norm of each rotary "
             "pair) | massive (the share of massive values per frequency band)",
             attn.usage_show, show_names),
     .keys = "v", .step = APP_STEP_NEXT},
    {.name = NULL},
};

const app_view app_view_usage = {
    .name = "usage",
    .description = "how a RoPE model uses its frequencies: q/k norm per rotary pair (Barbero)",
    .validate = usage_validate,
    .build = usage_build,
    .data = usage_data,
    .options = "model show side layer massive ids text prompt tokenizer",
};
