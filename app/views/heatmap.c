/* heatmap.c: the encoding table, positions down and dimensions across (seed 004's heatmap).
 * Encodings that rotate q and k (RoPE, xPos) have no input table; for them the view draws the
 * cos/sin of every pair's angle m*theta_k, which is what the rotation is made of. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "view_list.h"

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
    if (!st->enc || !st->enc->table) {
        snprintf(err, errlen,
                 "--pe %s: adds nothing to the input, so there is no table to draw (try the "
                 "alibi, decay or rope view)",
                 st->enc ? st->enc->name : "none");
        return NULL;
    }
    return app_view_table(c, st->enc, &st->p, err, errlen);
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

static int heatmap_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                         char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    const pe_matrix *m = view_matrix(c, st, err, errlen);
    if (!m) return -1;
    int rot = is_rotary(st->enc);
    char title[128], sub[256];
    if (rot)
        snprintf(title, sizeof title, "%s: cos/sin of the rotation angle m\xc2\xb7" APP_THETA_K,
                 st->enc->name);
    else
        snprintf(title, sizeof title, "%s position encoding", st->enc->name);
    app_subtitle(
        st, NULL,
        APP_SUB_DIM | APP_SUB_LEN |
            (strcmp(st->enc->name, "sinusoidal") == 0 ? APP_SUB_BASE | APP_SUB_LAYOUT : 0) |
            (rot ? APP_SUB_BASE | APP_SUB_PAIRING | APP_SUB_SCALING : 0) |
            (strcmp(st->enc->name, "learned") == 0 ? APP_SUB_SEED : 0),
        sub, sizeof sub);
    fig_rect r = app_frame(s, t, th, title, sub);

    /* the position window (mouse-wheel zoom in the window) */
    size_t row0 = (size_t)(st->row0 > 0 ? st->row0 : 0);
    size_t nrows = st->rows > 0 ? (size_t)st->rows : m->rows;
    if (row0 >= m->rows) row0 = 0;
    if (row0 + nrows > m->rows) nrows = m->rows - row0;

    double lo, hi, vmin, vmax;
    app_finite_range(m->data, m->rows * m->cols, &lo, &hi);
    const cmap *map = app_pick_map(st, lo, hi, &vmin, &vmax);
    fig_axes a = app_draw_matrix(s, t, th, r, pe_matrix_row(m, row0), nrows, m->cols, m->cols, 0,
                                 (double)m->cols, (double)row0, (double)(row0 + nrows), "dimension",
                                 "position", map, vmin, vmax, "value", th->mask);
    c->main = a;
    c->has_main = 1;
    c->main_rows = (int)m->rows;
    c->main_cols = (int)m->cols;
    if (st->cursor_on) {
        int cr = st->cur_r < (int)m->rows ? st->cur_r : (int)m->rows - 1;
        int cc = st->cur_c < (int)m->cols ? st->cur_c : (int)m->cols - 1;
        if (cr >= (int)row0 && cr < (int)(row0 + nrows)) app_draw_cell_cursor(s, th, &a, cr, cc);
        float v = pe_matrix_row(m, (size_t)cr)[cc];
        if (rot) {
            pe_params q = st->p;
            int k = cc / 2, i0, i1;
            q.dim = (int)m->cols;
            q.rotary_frac = 1;
            for (int kk = 0; kk < (int)m->cols / 2; kk++) {
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
    if (app_data_alloc(out, 2, m->rows, m->cols, 0, err, errlen) < 0) return -1;
    for (size_t i = 0; i < m->rows * m->cols; i++) out->data[i] = m->data[i];
    snprintf(out->what, sizeof out->what,
             is_rotary(st->enc) ? "(len, rotary_dim): cos/sin of m*theta_k, %s, float32"
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
    .options = "pe dim len base layout freq std seed cmap",
    .wheel = heatmap_wheel,
};
