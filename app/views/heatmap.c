/* heatmap.c: the encoding table, positions down and dimensions across (seed 004's heatmap).
 * Encodings that rotate q and k (RoPE, xPos) have no input table; for them the view draws the
 * cos/sin of every pair's angle m*theta_k, which is what the rotation is made of. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "trained.h"
#include "views.h"

/* --pe learned shows the shipped learned model's trained table (issue 23): a table of its own
 * width (d = 64) and 4 x ctx rows, the rows past its context never trained; --weights init
 * shows the seeded N(0, std) table the model started from, at any --len and --dim. */
static int learned_trained(const app_state *st)
{
    return strcmp(st->enc->name, "learned") == 0 && !st->attn.weights_init;
}

/* The trained table (cached in slot 2), NULL with err when the model is missing. */
static const app_trained *trained_table(app_view_ctx *c, char *err, size_t errlen)
{
    return app_trained_get(c, 2, "learned", err, errlen);
}

/* RoPE's angles as a (L, rotary_dim) table: cos and sin of m*theta_k in the pairing's layout. */
static int rope_angle_table(const pe_params *p, pe_matrix *out, char *err, size_t errlen)
{
    int rd = pe_rope_rotary_dim(p);
    double *inv = malloc(sizeof *inv * (size_t)(rd / 2));
    if (!inv) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double attn = 1;
    int rc = pe_rope_inv_freq(p, inv, &attn, err, errlen);
    if (rc == 0) rc = pe_matrix_init(out, (size_t)p->len, (size_t)rd, err, errlen);
    if (rc == 0) {
        pe_params q = *p;
        q.dim = rd;
        q.rotary_frac = 1;
        for (int m = 0; m < p->len; m++) {
            float *row = pe_matrix_row(out, (size_t)m);
            for (int k = 0; k < rd / 2; k++) {
                int i0, i1;
                pe_rope_pair(&q, k, &i0, &i1);
                row[i0] = (float)cos(m * inv[k]);
                row[i1] = (float)sin(m * inv[k]);
            }
        }
    }
    free(inv);
    return rc < 0 ? -1 : 0;
}

static int is_rotary(const pe_encoding *e)
{
    return e && (e->acts & PE_ACTS_QK);
}

/* The matrix this view shows: the input table, or RoPE's angle table. */
static const pe_matrix *view_matrix(app_view_ctx *c, const app_state *st, char *err, size_t errlen)
{
    if (is_rotary(st->enc)) {
        if (c->table_valid && c->table_enc == st->enc &&
            memcmp(&c->table_key, &st->p, sizeof st->p) == 0)
            return &c->table;
        pe_matrix_free(&c->table);
        c->table_valid = 0;
        if (st->enc->validate && st->enc->validate(&st->p, err, errlen) < 0) return NULL;
        if (rope_angle_table(&st->p, &c->table, err, errlen) < 0) return NULL;
        c->table_key = st->p;
        c->table_enc = st->enc;
        c->table_valid = 1;
        return &c->table;
    }
    if (st->enc && learned_trained(st)) { /* (len, d) of the trained table, NaN past its rows */
        const app_trained *t = trained_table(c, err, errlen);
        if (!t) return NULL;
        struct {
            int len;
            char name[128];
        } key;
        memset(&key, 0, sizeof key);
        key.len = st->p.len;
        snprintf(key.name, sizeof key.name, "%s", t->name);
        pe_matrix *m = app_cache_get(c, 3, &key, sizeof key);
        if (m) return m;
        size_t L = (size_t)st->p.len, C = (size_t)t->pos.cols;
        m = app_cache_put(c, 3, &key, sizeof key, sizeof *m + L * C * sizeof(float));
        if (!m) {
            snprintf(err, errlen, "%s", app_cache_error());
            return NULL;
        }
        m->rows = L;
        m->cols = C;
        m->data = (float *)(m + 1);
        for (size_t i = 0; i < L * C; i++)
            m->data[i] = i / C < (size_t)t->pos.rows ? t->pos.values[i] : NAN;
        return m;
    }
    if (!st->enc || !st->enc->table) {
        snprintf(err, errlen,
                 "--pe %s: adds nothing to the input, so there is no table to draw (try the "
                 "alibi, decay or rope view)",
                 st->enc ? st->enc->name : "none");
        return NULL;
    }
    return app_enc_table(c, st->enc, &st->p, err, errlen);
}

static int heatmap_validate(const app_state *st, char *err, size_t errlen)
{
    if (!st->enc || (!st->enc->table && !is_rotary(st->enc))) {
        snprintf(err, errlen,
                 "--pe %s: adds nothing to the input, so the heatmap has nothing to draw "
                 "(allowed: an encoding with a table or a rotation, e.g. sinusoidal, rope)",
                 st->enc ? st->enc->name : "none");
        return -1;
    }
    return 0;
}

/* The figure's sample of the matrix: nr positions from row0 .. row0+nrows-1 and nc of the
 * cols dimensions (app_grid_pos), with the finite range of the sample. Sinusoidal, learned and
 * the rotations compute exactly these entries (a base change at L 8192, d 4096 costs the pixels,
 * not L*d); binary's table is built once and picked from. */
typedef struct heat_sample {
    size_t nr, nc;
    double lo, hi;
    float *v; /* (nr, nc) */
} heat_sample;

/* out (nr, nc) = the matrix at positions rows[] (ascending) and dimensions cols[]. */
static int heat_entries(app_view_ctx *c, const app_state *st, const size_t *rows, size_t nr,
                        const size_t *colv, size_t nc, float *out, char *err, size_t errlen)
{
    int rc = 0;
    if (is_rotary(st->enc)) {
        int rd = pe_rope_rotary_dim(&st->p);
        double *inv = malloc(sizeof *inv * (size_t)rd);
        int *pair_of = malloc(sizeof *pair_of * (size_t)rd);
        double attn = 1;
        rc = inv && pair_of ? pe_rope_inv_freq(&st->p, inv, &attn, err, errlen) : -1;
        if (rc == 0) {
            pe_params q = st->p;
            q.dim = rd;
            q.rotary_frac = 1;
            for (int k = 0; k < rd / 2; k++) { /* dimension -> pair k, + rd/2 for the sin one */
                int i0, i1;
                pe_rope_pair(&q, k, &i0, &i1);
                pair_of[i0] = k;
                pair_of[i1] = k + rd / 2;
            }
            /* the sampled columns' frequencies, then a row at a time across them */
            double *w = malloc(nc * (sizeof *w + 1));
            if (!w) {
                snprintf(err, errlen, "out of memory");
                rc = -1;
            }
            for (size_t j = 0; w && j < nc; j++) {
                int k = pair_of[colv[j]], is_sin = k >= rd / 2;
                w[j] = inv[is_sin ? k - rd / 2 : k];
                ((unsigned char *)(w + nc))[j] = (unsigned char)is_sin;
            }
            if (w) pe_sincos_rows(w, (unsigned char *)(w + nc), nc, rows, nr, out);
            free(w);
        } else if (!inv || !pair_of) {
            snprintf(err, errlen, "out of memory");
        }
        free(inv);
        free(pair_of);
    } else if (strcmp(st->enc->name, "sinusoidal") == 0) {
        rc = pe_validate_values(st->enc, &st->p, err, errlen) < 0 ? -1 : 0;
        if (rc == 0) pe_sinusoidal_sample(&st->p, rows, nr, colv, nc, out);
    } else if (learned_trained(st)) {
        const app_trained *t = trained_table(c, err, errlen);
        if (!t) rc = -1;
        for (size_t i = 0; t && i < nr; i++)
            for (size_t j = 0; j < nc; j++)
                out[i * nc + j] = rows[i] < (size_t)t->pos.rows && colv[j] < (size_t)t->pos.cols
                                      ? t->pos.values[rows[i] * (size_t)t->pos.cols + colv[j]]
                                      : NAN;
    } else if (strcmp(st->enc->name, "learned") == 0) {
        const pe_rng *r = app_view_learned_states(c, 1, st, err, errlen);
        if (!r) rc = -1;
        for (size_t i = 0; r && i < nr; i++)
            pe_learned_row(&st->p, &r[rows[i]], colv, nc, out + i * nc);
    } else {
        const pe_matrix *m = view_matrix(c, st, err, errlen);
        if (!m) rc = -1;
        for (size_t i = 0; m && i < nr; i++)
            for (size_t j = 0; j < nc; j++) out[i * nc + j] = pe_matrix_row(m, rows[i])[colv[j]];
    }
    return rc;
}

static const heat_sample *heat_get_sample(app_view_ctx *c, const app_state *st, size_t row0,
                                          size_t nrows, size_t cols, size_t nr, size_t nc,
                                          char *err, size_t errlen)
{
    struct {
        const pe_encoding *enc;
        pe_params p;
        size_t row0, nrows, nr, nc;
        int trained;
    } key;
    memset(&key, 0, sizeof key);
    key.enc = st->enc;
    memcpy(&key.p, &st->p, sizeof key.p);
    key.row0 = row0;
    key.nrows = nrows;
    key.nr = nr;
    key.nc = nc;
    key.trained = learned_trained(st);
    heat_sample *h = app_cache_get(c, 0, &key, sizeof key);
    if (h) return h;
    size_t *rows = malloc((nr + nc) * sizeof *rows);
    h = app_cache_put(c, 0, &key, sizeof key, sizeof *h + nr * nc * sizeof(float));
    if (!rows || !h) {
        free(rows);
        if (h) app_cache_put(c, 0, "", 0, 0);
        snprintf(err, errlen, "%zu x %zu samples: %s", nr, nc, app_cache_error());
        return NULL;
    }
    size_t *colv = rows + nr;
    for (size_t i = 0; i < nr; i++) rows[i] = row0 + app_grid_pos(i, nr, nrows);
    for (size_t j = 0; j < nc; j++) colv[j] = app_grid_pos(j, nc, cols);
    h->nr = nr;
    h->nc = nc;
    h->v = (float *)(h + 1);
    int rc = heat_entries(c, st, rows, nr, colv, nc, h->v, err, errlen);
    free(rows);
    if (rc < 0) {
        app_cache_put(c, 0, "", 0, 0);
        return NULL;
    }
    app_finite_range(h->v, nr * nc, &h->lo, &h->hi);
    return h;
}

static int heatmap_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                         char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    if (heatmap_validate(st, err, errlen) < 0) return -1;
    /* the values: the figure samples (a table that is built meets the memory budget) */
    if (pe_validate_values(st->enc, &st->p, err, errlen) < 0) return -1;
    int rot = is_rotary(st->enc), trained = learned_trained(st);
    const app_trained *tm = trained ? trained_table(c, err, errlen) : NULL;
    if (trained && !tm) return -1;
    size_t L = (size_t)st->p.len, cols = rot       ? (size_t)pe_rope_rotary_dim(&st->p)
                                         : trained ? (size_t)tm->pos.cols
                                                   : (size_t)st->p.dim;
    char title[128], sub[256];
    if (trained)
        snprintf(title, sizeof title, "learned position table, trained (%.60s)", tm->name);
    else if (rot)
        snprintf(title, sizeof title, "%s: cos/sin of the rotation angle m\xc2\xb7" APP_THETA_K,
                 st->enc->name);
    else
        snprintf(title, sizeof title, "%s position encoding", st->enc->name);
    app_subtitle(st, sub, sizeof sub);
    if (trained) { /* the model's own width and rows, not --dim and --seed */
        char none[48] = "";
        if ((size_t)tm->pos.rows < L) snprintf(none, sizeof none, ", none past %d", tm->pos.rows);
        snprintf(sub, sizeof sub, "d=%zu (the model's)  L=%d  rows from %d never trained%s", cols,
                 st->p.len, tm->pos.reached, none);
    }
    fig_rect r = app_frame(s, t, th, title, sub);

    /* the position window (mouse-wheel zoom in the window) */
    size_t row0 = (size_t)(st->row0 > 0 ? st->row0 : 0);
    size_t nrows = st->rows > 0 ? (size_t)st->rows : L;
    if (row0 >= L) row0 = 0;
    if (row0 + nrows > L) nrows = L - row0;
    /* at most one sample per pixel (per half cell down the terminal's half blocks) */
    size_t nr = (size_t)fmin((double)nrows, ceil(fmax(1, r.h * (t->cells ? 2 : 1))));
    size_t nc = (size_t)fmin((double)cols, ceil(fmax(1, r.w)));
    const heat_sample *hs = heat_get_sample(c, st, row0, nrows, cols, nr, nc, err, errlen);
    if (!hs) return -1;

    double vmin, vmax;
    const cmap *map = app_pick_map(st, hs->lo, hs->hi, &vmin, &vmax);
    fig_axes a = app_draw_matrix(s, t, th, r, hs->v, nr, nc, nc, 0, (double)cols, (double)row0,
                                 (double)(row0 + nrows), "dimension", "position", map, vmin, vmax,
                                 "value", th->mask);
    if (trained && tm->pos.reached >= (int)row0 && tm->pos.reached < (int)(row0 + nrows)) {
        char lab[32];
        snprintf(lab, sizeof lab, "ctx %d", tm->pos.reached);
        fig_hmark(s, t, th, &a, tm->pos.reached, lab);
    }
    c->main = a;
    fig_mark_main(s, a.area, "plot");
    c->has_main = 1;
    c->main_rows = (int)L;
    c->main_cols = (int)cols;
    if (st->cursor_on) {
        int cr = st->cur_r < (int)L ? (st->cur_r < 0 ? 0 : st->cur_r) : (int)L - 1;
        int cc = st->cur_c < (int)cols ? (st->cur_c < 0 ? 0 : st->cur_c) : (int)cols - 1;
        if (cr >= (int)row0 && cr < (int)(row0 + nrows)) app_draw_cell_cursor(s, t, th, &a, cr, cc);
        /* the exact entry under the cursor (the figure is a sample) */
        size_t pr = (size_t)cr, pc = (size_t)cc;
        float v = NAN;
        if (heat_entries(c, st, &pr, 1, &pc, 1, &v, err, errlen) < 0) return -1;
        if (rot) {
            pe_params q = st->p;
            int k = cc / 2, i0, i1;
            q.dim = (int)cols;
            q.rotary_frac = 1;
            for (int kk = 0; kk < (int)cols / 2; kk++) {
                pe_rope_pair(&q, kk, &i0, &i1);
                if (i0 == cc || i1 == cc) k = kk;
            }
            snprintf(c->readout, sizeof c->readout, "position %d  dim %d (pair %d)  value %+.6f",
                     cr, cc, k, v);
        } else {
            snprintf(c->readout, sizeof c->readout, "position %d  dim %d  value %+.6f", cr, cc, v);
        }
    }
    return 0;
}

static int heatmap_data(app_view_ctx *c, const app_state *st, app_data *out, char *err,
                        size_t errlen)
{
    const pe_matrix *m = view_matrix(c, st, err, errlen);
    if (!m) return -1;
    if (out->lend_ok) {
        app_data_lend(out, m->rows, m->cols, m->data);
    } else {
        if (app_data_alloc(out, 2, m->rows, m->cols, 0, err, errlen) < 0) return -1;
        for (size_t i = 0; i < m->rows * m->cols; i++) out->data[i] = m->data[i];
    }
    snprintf(
        out->what, sizeof out->what,
        is_rotary(st->enc) ? "(len, rotary_dim): cos/sin of m*theta_k, %s, float32"
        : learned_trained(st)
            ? "(len, dim): PE[position][dimension] of %s, trained (assets/models/learned.pelab; "
              "nan: no row), float32"
            : "(len, dim): PE[position][dimension] of %s, float32",
        st->enc->name);
    return 0;
}

/* The wheel zooms the position range around the pointer (figure height y). */
static int heatmap_wheel(app_view_ctx *c, app_state *st, double y, int dir, char *msg, size_t n)
{
    if (!c->has_main) return 0;
    int L = c->main_rows;
    int rows = st->rows > 0 ? st->rows : L;
    double at = fig_y_inv(&c->main, y);
    int nr = dir > 0 ? rows * 2 / 3 : rows * 3 / 2;
    if (nr < 8) nr = 8;
    if (nr >= L) {
        st->row0 = 0;
        st->rows = 0;
    } else {
        double frac = (at - st->row0) / rows;
        int r0 = (int)(at - frac * nr);
        if (r0 < 0) r0 = 0;
        if (r0 + nr > L) r0 = L - nr;
        st->row0 = r0;
        st->rows = nr;
    }
    snprintf(msg, n, "positions %d..%d (wheel zooms)", st->row0,
             st->row0 + (st->rows ? st->rows : L) - 1);
    return 1;
}

const app_view app_view_heatmap = {
    .name = "heatmap",
    .description = "the encoding as a (positions x dimensions) heatmap",
    .validate = heatmap_validate,
    .build = heatmap_build,
    .data = heatmap_data,
    .options = "pe dim len base layout freq pairing rotary-frac scaling factor orig-ctx seq-len "
               "attn-factor std seed weights cmap",
    .wheel = heatmap_wheel,
};
