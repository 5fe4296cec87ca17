/* similarity.c: PE(p).PE(q) over all pairs of positions, raw or cosine. For large L the
 * interactive figure is computed at the resolution it is drawn at (one position per cell, the
 * one at its centre), which is what the eye can see anyway; exports of the numbers are always
 * full.
 *
 * --pe learned shows the shipped learned model's trained table (issue 23), as the heatmap does:
 * its own width (d = 64) and rows, the rows past its context never trained and positions past
 * its rows without a vector (NaN); --weights init the seeded N(0, std) start at --len, --dim. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "options.h"
#include "trained.h"
#include "views.h"

static int sim_validate(const app_state *st, char *err, size_t errlen)
{
    if (!st->enc || !st->enc->table) {
        snprintf(err, errlen,
                 "--pe %s: adds nothing to the input, so it has no PE(p).PE(q) (allowed: "
                 "sinusoidal, learned, binary)",
                 st->enc ? st->enc->name : "none");
        return -1;
    }
    /* the figure samples its positions (issue 25: a 10M context loads); the (L, L) data and a
     * table that is built meet the memory budget */
    return pe_validate_values(st->enc, &st->p, err, errlen) < 0 ? -1 : 0;
}

/* Dot product of two float rows with eight independent partial sums, so the compiler can keep
 * them in vector registers (a single running sum serialises every add). */
static double dot_rows(const float *a, const float *b, size_t d)
{
    float acc[8] = {0};
    size_t k = 0;
    for (; k + 8 <= d; k += 8)
        for (int u = 0; u < 8; u++) acc[u] += a[k + u] * b[k + u];
    double sum = 0;
    for (int u = 0; u < 8; u++) sum += acc[u];
    for (; k < d; k++) sum += (double)a[k] * b[k];
    return sum;
}

/* Similarity of n sampled positions pos[0..n) into out (n, n). */
static void sampled_similarity(const pe_matrix *tab, const int *pos, size_t n, int cosine,
                               float *out)
{
    size_t d = tab->cols;
    double *norm = malloc(n * sizeof *norm);
    for (size_t i = 0; norm && i < n; i++) {
        const float *a = pe_matrix_row(tab, (size_t)pos[i]);
        norm[i] = sqrt(dot_rows(a, a, d));
    }
    for (size_t i = 0; i < n; i++) {
        const float *a = pe_matrix_row(tab, (size_t)pos[i]);
        for (size_t j = i; j < n; j++) {
            double dot = dot_rows(a, pe_matrix_row(tab, (size_t)pos[j]), d);
            if (cosine) dot = norm && norm[i] > 0 && norm[j] > 0 ? dot / (norm[i] * norm[j]) : 0;
            out[i * n + j] = out[j * n + i] = (float)dot;
        }
    }
    free(norm);
}

/* The sinusoidal similarity in closed form: PE(p).PE(q) = sum_k cos((p - q) w_k) (each pair's
 * sin.sin + cos.cos) depends on |p - q| only, and every row's norm is sqrt(d/2). So the n x n
 * sample needs the sum at the distinct distances between sampled positions (about 2n of them:
 * the grid's steps differ by at most one), not the L x d table and n^2/2 dot products of d
 * terms each: at L 8192 d 4096 that is 1 ms instead of 0.1 s for the table and 50 ms for the
 * products. The values are the exact ones; the float32 table's dot products (the data export)
 * agree to the table's rounding. */
static int sinusoidal_sample(const app_state *st, const int *pos, size_t n, float *out, char *err,
                             size_t errlen)
{
    size_t L = (size_t)st->p.len;
    unsigned char *need = calloc(L, 1);
    size_t *dist = malloc(sizeof *dist * L);
    double *at = malloc(sizeof *at * L), *f = malloc(sizeof *f * L);
    int rc = -1;
    if (!need || !dist || !at || !f) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j <= i; j++) need[abs(pos[i] - pos[j])] = 1;
    size_t m = 0;
    for (size_t r = 0; r < L; r++)
        if (need[r]) dist[m++] = r;
    if (pe_sinusoidal_dots(&st->p, dist, m, f, err, errlen) != PE_OK) goto done;
    double scale = st->similarity.cosine ? 1.0 / (st->p.dim / 2) : 1.0;
    for (size_t k = 0; k < m; k++) at[dist[k]] = f[k] * scale;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j <= i; j++)
            out[i * n + j] = out[j * n + i] = (float)at[abs(pos[i] - pos[j])];
    rc = 0;
done:
    free(need);
    free(dist);
    free(at);
    free(f);
    return rc;
}

static int is_sinusoidal(const app_state *st)
{
    return strcmp(st->enc->name, "sinusoidal") == 0;
}

static int is_learned(const app_state *st)
{
    return strcmp(st->enc->name, "learned") == 0;
}

/* The trained table instead of the seeded one (cached in slot 2; NULL when not asked for). */
static int learned_trained(const app_state *st)
{
    return is_learned(st) && !st->attn.weights_init;
}
static const app_trained *trained_table(app_view_ctx *c, char *err, size_t errlen)
{
    return app_trained_get(c, 2, "learned", err, errlen);
}

/* The similarity of the trained table's rows at positions pos[0..n) into out (n, n): NaN where
 * a position has no row. */
static void trained_similarity(const app_trained *t, const int *pos, size_t n, int cosine,
                               float *out)
{
    pe_matrix m = {
        .rows = (size_t)t->pos.rows, .cols = (size_t)t->pos.cols, .data = (float *)t->pos.values};
    int *in = calloc(n ? n : 1, sizeof *in);
    if (!in) {
        for (size_t i = 0; i < n * n; i++) out[i] = NAN;
        return;
    }
    for (size_t i = 0; i < n; i++) in[i] = pos[i] < t->pos.rows ? pos[i] : 0;
    sampled_similarity(&m, in, n, cosine, out);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            if (pos[i] >= t->pos.rows || pos[j] >= t->pos.rows) out[i * n + j] = NAN;
    free(in);
}

/* The learned rows pos[0..n) as a (n, d) matrix (its data malloc'd), for sampled_similarity. */
static int learned_rows(const app_state *st, const pe_rng *states, const int *pos, size_t n,
                        pe_matrix *out, char *err, size_t errlen)
{
    size_t d = (size_t)st->p.dim;
    size_t *cols = malloc(sizeof *cols * d);
    out->rows = n;
    out->cols = d;
    out->data = malloc(sizeof *out->data * n * d);
    if (!cols || !out->data) {
        free(cols);
        free(out->data);
        out->data = NULL;
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t k = 0; k < d; k++) cols[k] = k;
    for (size_t i = 0; i < n; i++)
        pe_learned_row(&st->p, &states[pos[i]], cols, d, out->data + i * d);
    free(cols);
    return 0;
}

static int sim_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                     char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    int trained = learned_trained(st);
    int closed = is_sinusoidal(st), rows = is_learned(st) && !trained;
    const app_trained *tm = trained ? trained_table(c, err, errlen) : NULL;
    if (trained && !tm) return -1;
    const pe_matrix *tab =
        closed || rows || trained ? NULL : app_enc_table(c, st->enc, &st->p, err, errlen);
    const pe_rng *states = rows ? app_view_learned_states(c, 1, st, err, errlen) : NULL;
    if (!closed && !tab && !states && !tm) return -1;
    char title[128], sub[256];
    if (trained)
        snprintf(title, sizeof title, "learned, trained: %s PE(p)%sPE(q)",
                 st->similarity.cosine ? "cosine similarity" : "dot product",
                 t->cells ? "." : "\xc2\xb7");
    else
        snprintf(title, sizeof title, "%s: %s PE(p)%sPE(q)", st->enc->name,
                 st->similarity.cosine ? "cosine similarity" : "dot product",
                 t->cells ? "." : "\xc2\xb7");
    app_subtitle(st, sub, sizeof sub);
    if (trained) { /* the model's own width and rows, not --dim, --base and --seed */
        char none[48] = "";
        if (tm->pos.rows < st->p.len) snprintf(none, sizeof none, ", none past %d", tm->pos.rows);
        snprintf(sub, sizeof sub, "%.40s  d=%d (the model's)  L=%d  rows from %d never trained%s",
                 tm->name, tm->pos.cols, st->p.len, tm->pos.reached, none);
    }
    fig_rect r = app_frame(s, t, th, title, sub);

    /* sample at most as many positions as the figure has pixels across: cell i shows the
     * position at its centre (app_grid_pos) */
    size_t L = (size_t)st->p.len;
    size_t n = L;
    size_t cap = (size_t)fmax(16, fmin(r.w, r.h));
    if (n > cap) n = cap;
    int *pos = malloc(n * sizeof *pos);
    if (!pos) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) pos[i] = (int)app_grid_pos(i, n, L);
    /* the matrix depends on the encoding, its parameters, the sampling and dot/cosine only
     * (learned: on L, d, the seed and the scale, not on the base or the other encodings'
     * parameters, so changing those does not draw the rows again) */
    struct {
        const pe_encoding *enc;
        pe_params p;
        size_t n;
        int cosine, trained;
    } key;
    memset(&key, 0, sizeof key);
    key.enc = st->enc;
    key.trained = trained;
    if (trained) {
        key.p.len = st->p.len;
    } else if (rows) {
        key.p.len = st->p.len;
        key.p.dim = st->p.dim;
        key.p.seed = st->p.seed;
        key.p.learned_std = st->p.learned_std;
    } else {
        key.p = st->p;
    }
    key.n = n;
    key.cosine = st->similarity.cosine;
    float *sim = app_cache_get(c, 0, &key, sizeof key);
    if (!sim) {
        sim = app_cache_put(c, 0, &key, sizeof key, n * n * sizeof *sim);
        if (!sim) {
            free(pos);
            snprintf(err, errlen, "%s", app_cache_error());
            return -1;
        }
        if (closed) {
            if (sinusoidal_sample(st, pos, n, sim, err, errlen) < 0) {
                app_cache_put(c, 0, "", 0, 0); /* forget the half-made matrix */
                free(pos);
                return -1;
            }
        } else if (trained) {
            trained_similarity(tm, pos, n, st->similarity.cosine, sim);
        } else if (rows) {
            pe_matrix m = {0};
            int *ids = malloc(n * sizeof *ids);
            if (!ids || learned_rows(st, states, pos, n, &m, err, errlen) < 0) {
                if (!ids) snprintf(err, errlen, "out of memory");
                free(ids);
                app_cache_put(c, 0, "", 0, 0);
                free(pos);
                return -1;
            }
            for (size_t i = 0; i < n; i++) ids[i] = (int)i;
            sampled_similarity(&m, ids, n, st->similarity.cosine, sim);
            free(ids);
            free(m.data);
        } else {
            sampled_similarity(tab, pos, n, st->similarity.cosine, sim);
        }
    }

    double lo, hi, vmin, vmax;
    app_finite_range(sim, n * n, &lo, &hi);
    const cmap *map = app_pick_map(st, lo, hi, &vmin, &vmax);
    fig_axes a = app_draw_matrix(s, t, th, r, sim, n, n, n, 0, (double)L, 0, (double)L,
                                 "position q", "position p", map, vmin, vmax,
                                 st->similarity.cosine ? "cosine" : "dot product", th->mask);
    if (trained && tm->pos.reached < st->p.len) { /* where the rows training reached end */
        char lab[32];
        snprintf(lab, sizeof lab, "ctx %d", tm->pos.reached);
        fig_hmark(s, t, th, &a, tm->pos.reached, lab);
    }
    c->main = a;
    fig_mark_main(s, a.area, "plot");
    c->has_main = 1;
    c->main_rows = (int)L;
    c->main_cols = (int)L;
    if (st->cursor_on) {
        int pr = st->cur_r < (int)L ? st->cur_r : (int)L - 1;
        int qc = st->cur_c < (int)L ? st->cur_c : (int)L - 1;
        app_draw_cell_cursor(s, t, th, &a, pr, qc);
        int pp[2] = {pr, qc};
        float v2[4];
        double v;
        if (closed) { /* in double: the value itself, not its float32 rounding */
            size_t dist = (size_t)abs(pr - qc);
            if (pe_sinusoidal_dots(&st->p, &dist, 1, &v, err, errlen) != PE_OK) {
                free(pos);
                return -1;
            }
            if (st->similarity.cosine) v /= st->p.dim / 2;
        } else if (trained) {
            trained_similarity(tm, pp, 2, st->similarity.cosine, v2);
            v = v2[1];
        } else if (rows) {
            pe_matrix m = {0};
            if (learned_rows(st, states, pp, 2, &m, err, errlen) < 0) {
                free(pos);
                return -1;
            }
            int ids[2] = {0, 1};
            sampled_similarity(&m, ids, 2, st->similarity.cosine, v2);
            free(m.data);
            v = v2[1];
        } else {
            sampled_similarity(tab, pp, 2, st->similarity.cosine, v2);
            v = v2[1];
        }
        snprintf(c->readout, sizeof c->readout, "p %d  q %d  p-q %d  %s %+.6f", pr, qc, pr - qc,
                 st->similarity.cosine ? "cosine" : "dot", v);
    }
    free(pos);
    return 0;
}

static int sim_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    if (learned_trained(st)) { /* (len, len) of the trained rows, NaN past them */
        const app_trained *tm = trained_table(c, err, errlen);
        if (!tm) return -1;
        size_t L = (size_t)st->p.len, R = L < (size_t)tm->pos.rows ? L : (size_t)tm->pos.rows;
        pe_matrix m = {.rows = R, .cols = (size_t)tm->pos.cols, .data = (float *)tm->pos.values},
                  sim = {0};
        if (pe_similarity(&m, st->similarity.cosine, &sim, err, errlen) < 0) return -1;
        if (app_data_alloc(out, 2, L, L, 0, err, errlen) < 0) {
            pe_matrix_free(&sim);
            return -1;
        }
        for (size_t i = 0; i < L; i++)
            for (size_t j = 0; j < L; j++)
                out->data[i * L + j] = i < R && j < R ? sim.data[i * R + j] : NAN;
        pe_matrix_free(&sim);
        snprintf(out->what, sizeof out->what,
                 "(len, len): %s of PE(p) and PE(q), learned, trained (%.60s: d %d, rows from %d "
                 "never trained; nan: no row), float32",
                 st->similarity.cosine ? "cosine similarity" : "dot product", tm->name,
                 tm->pos.cols, tm->pos.reached);
        return 0;
    }
    const pe_matrix *tab = app_enc_table(c, st->enc, &st->p, err, errlen);
    if (!tab) return -1;
    pe_matrix sim = {0};
    if (pe_similarity(tab, st->similarity.cosine, &sim, err, errlen) < 0) return -1;
    if (app_data_alloc(out, 2, sim.rows, sim.cols, 0, err, errlen) < 0) {
        pe_matrix_free(&sim);
        return -1;
    }
    for (size_t i = 0; i < sim.rows * sim.cols; i++) out->data[i] = sim.data[i];
    pe_matrix_free(&sim);
    snprintf(out->what, sizeof out->what, "(len, len): %s of PE(p) and PE(q), %s, float32",
             st->similarity.cosine ? "cosine similarity" : "dot product", st->enc->name);
    return 0;
}

/* ---- the similarity view's option group (similarity_opts.h, options/option_groups.h) ------ */

void app_similarity_opts_default(app_similarity_opts *o)
{
    o->cosine = 0;
}

static const char *const sim_names[] = {"dot", "cosine", NULL};

const app_option app_similarity_rows[] = {
    {APP_CHO("similarity", NULL, "similarity: dot|cosine", similarity.cosine, sim_names),
     .keys = "c", .step = APP_STEP_NEXT},
    {.name = NULL},
};

const app_view app_view_similarity = {
    .name = "similarity",
    .description = "PE(p).PE(q) for every pair of positions (dot or cosine)",
    .validate = sim_validate,
    .build = sim_build,
    .data = sim_data,
    .options = "pe dim len base layout freq std seed weights similarity cmap",
    /* PE(p).PE(q) sums over the dimensions: their order (--layout) does not change it */
    .not_in_subtitle = "layout weights", /* the title says trained or init */
};
