/* common.c: what the views share: the data holder, the table cache, subtitles, colour choice,
 * the matrix figure and the title block. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "options.h"
#include "rope_ext.h"
#include "views.h"

void app_data_free(app_data *d)
{
    if (d->data) pe_mem_release(d->reserved);
    free(d->data);
    free(d->tok);
    memset(d, 0, sizeof *d);
}

int app_data_tokens(app_data *d, unsigned axes, size_t lists, size_t n, char *err, size_t errlen)
{
    free(d->tok);
    d->tok = lists && n && n <= PE_MAX_CELLS / lists ? calloc(lists * n, APP_DATA_TOK) : NULL;
    if (!d->tok) {
        d->tok_axes = 0;
        d->tok_lists = d->tok_n = 0;
        snprintf(err, errlen, "out of memory for %zu token texts", lists * n);
        return -1;
    }
    d->tok_axes = axes;
    d->tok_lists = lists;
    d->tok_n = n;
    return 0;
}

void app_data_lend(app_data *d, size_t rows, size_t cols, const float *table)
{
    memset(d, 0, sizeof *d);
    d->ndim = 2;
    d->shape[0] = rows;
    d->shape[1] = cols;
    d->f32 = table;
}

int app_data_alloc(app_data *d, int ndim, size_t a, size_t b, size_t c, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    size_t dims[3] = {a, ndim > 1 ? b : 1, ndim > 2 ? c : 1};
    size_t n = 1;
    /* the shape as the data has it: a, a x b or a x b x c */
    char shape[96];
    int u = snprintf(shape, sizeof shape, "%zu", a);
    for (int i = 1; i < ndim && i < 3; i++)
        u += snprintf(shape + u, sizeof shape - (size_t)u, " x %zu", dims[i]);
    for (int i = 0; i < 3; i++) {
        if (dims[i] == 0 || n > SIZE_MAX / sizeof *d->data / dims[i]) {
            snprintf(err, errlen, "the data (%s values) is beyond the cap of %zu values", shape,
                     (size_t)PE_MAX_CELLS);
            return -1;
        }
        n *= dims[i];
    }
    /* the memory budget first (issue 25: a full-resolution export of a 10M context that does
     * not fit is refused with its sizes and --max-memory), then the cells a table can index */
    char what[128];
    snprintf(what, sizeof what, "the data (%s values)", shape);
    if (pe_mem_reserve(n * sizeof *d->data, what, err, errlen) != PE_OK) return -1;
    if (n > PE_MAX_CELLS) {
        pe_mem_release(n * sizeof *d->data);
        snprintf(err, errlen, "the data (%s values) is beyond the cap of %zu values", shape,
                 (size_t)PE_MAX_CELLS);
        return -1;
    }
    d->data = calloc(n, sizeof *d->data);
    if (!d->data) {
        pe_mem_release(n * sizeof *d->data);
        snprintf(err, errlen, "out of memory for %zu values", n);
        return -1;
    }
    d->reserved = n * sizeof *d->data;
    d->ndim = ndim;
    d->shape[0] = a;
    d->shape[1] = ndim > 1 ? b : 0;
    d->shape[2] = ndim > 2 ? c : 0;
    return 0;
}

static _Thread_local char cache_err[320];

const char *app_cache_error(void)
{
    return cache_err[0] ? cache_err : "out of memory";
}

static void cache_clear(app_cache_slot *e)
{
    if (e->val) pe_mem_release(e->val_len);
    free(e->key);
    free(e->val);
    memset(e, 0, sizeof *e);
}

void app_view_ctx_free(app_view_ctx *c)
{
    pe_matrix_free(&c->table);
    if (c->priv_free) c->priv_free(c->priv);
    for (int i = 0; i < APP_CACHE_SLOTS; i++) cache_clear(&c->cache[i]);
    free(c->zoom_memo);
    memset(c, 0, sizeof *c);
}

size_t app_view_ctx_held(const app_view_ctx *c)
{
    size_t n = c->table.data ? c->table.rows * c->table.cols * sizeof *c->table.data : 0;
    for (int i = 0; i < APP_CACHE_SLOTS; i++)
        if (c->cache[i].val) n += c->cache[i].val_len;
    return n;
}

void app_view_ctx_drop(app_view_ctx *c)
{
    pe_matrix_free(&c->table);
    c->table_valid = 0;
    for (int i = 0; i < APP_CACHE_SLOTS; i++) cache_clear(&c->cache[i]);
}

void *app_cache_get(app_view_ctx *c, int slot, const void *key, size_t klen)
{
    app_cache_slot *e = &c->cache[slot];
    if (!e->val || e->key_len != klen || memcmp(e->key, key, klen) != 0) return NULL;
    return e->val;
}

void *app_cache_put(app_view_ctx *c, int slot, const void *key, size_t klen, size_t vlen)
{
    app_cache_slot *e = &c->cache[slot];
    cache_clear(e);
    cache_err[0] = '\0';
    /* the message gives the size ("the view's table needs 224 MiB, ...") */
    if (pe_mem_reserve(vlen, "the view's table", cache_err, sizeof cache_err) != PE_OK) return NULL;
    e->key = malloc(klen ? klen : 1);
    e->val = calloc(1, vlen ? vlen : 1);
    if (!e->key || !e->val) {
        free(e->key);
        free(e->val);
        e->key = e->val = NULL;
        pe_mem_release(vlen);
        snprintf(cache_err, sizeof cache_err, "out of memory for %.1f MiB",
                 (double)vlen / 1048576.0);
        return NULL;
    }
    memcpy(e->key, key, klen);
    e->key_len = klen;
    e->val_len = vlen;
    return e->val;
}

void *app_cache_reuse(app_view_ctx *c, int slot, const void *key, size_t klen, size_t vlen)
{
    app_cache_slot *e = &c->cache[slot];
    if (!e->val || e->val_len != vlen) return app_cache_put(c, slot, key, klen, vlen);
    unsigned char *k = e->key_len == klen ? e->key : realloc(e->key, klen ? klen : 1);
    if (!k) {
        cache_clear(e);
        return NULL;
    }
    memcpy(k, key, klen);
    e->key = k;
    e->key_len = klen;
    return e->val;
}

/* The parameters enc's table depends on: learned and binary tables ignore the base, the scaling
 * and every other encoding's knobs, so changing those keeps the table (regenerating the learned
 * one takes seconds at L 8192, d 4096); the others are keyed on every parameter. */
static pe_params table_key(const pe_encoding *enc, const pe_params *p)
{
    pe_params k;
    memset(&k, 0, sizeof k);
    if (strcmp(enc->name, "learned") == 0) {
        k.len = p->len;
        k.dim = p->dim;
        k.seed = p->seed;
        k.learned_std = p->learned_std;
    } else if (strcmp(enc->name, "binary") == 0) {
        k.len = p->len;
        k.dim = p->dim;
    } else {
        k = *p;
    }
    return k;
}

const pe_matrix *app_enc_table(app_view_ctx *c, const pe_encoding *enc, const pe_params *p,
                               char *err, size_t errlen)
{
    if (!enc || !enc->table) {
        snprintf(err, errlen, "--pe %s: adds nothing to the input embeddings, so it has no table",
                 enc ? enc->name : "none");
        return NULL;
    }
    pe_params key = table_key(enc, p);
    if (c->table_valid && c->table_enc == enc && memcmp(&c->table_key, &key, sizeof key) == 0)
        return &c->table;
    pe_matrix_free(&c->table);
    c->table_valid = 0;
    if (enc->table(p, &c->table, err, errlen) < 0) return NULL;
    c->table_key = key;
    c->table_enc = enc;
    c->table_valid = 1;
    return &c->table;
}

/* The words row o gives the subtitle (app_sub): "" when it has none as the state stands. */
static void row_words(const app_state *st, const app_option *o, char *buf, size_t n)
{
    const app_sub *sb = &o->sub;
    buf[0] = '\0';
    if (sb->when && !sb->when(st)) return;
    if (sb->text) {
        sb->text(st, buf, n);
        return;
    }
    double v;
    if (o->kind == APP_OPT_CHOICE) { /* the value's index, in the row's int field */
        int i;
        memcpy(&i, (const char *)st + o->off, sizeof i);
        v = i;
    } else if (app_option_get_num(st, o, &v) < 0) {
        return;
    }
    if (sb->words) {
        size_t i = 0;
        while (sb->words[i] && (double)i != v) i++;
        if (sb->words[i]) snprintf(buf, n, "%s", sb->words[i]);
        return;
    }
    /* an automatic value reads as the number the figure uses (the target context factor x L0) */
    if (o->at_lo && v == o->lo && o->auto_value) v = o->auto_value(st);
    char num[48];
    if (sb->format == APP_SUBF_LEN)
        app_ext_len_label(v, num, sizeof num);
    else if (sb->format == APP_SUBF_ID)
        snprintf(num, sizeof num, "%.0f", v);
    else
        fig_num(v, sb->digits ? sb->digits : 6, num, sizeof num);
    snprintf(buf, n, "%s=%s", sb->label, num);
}

void app_subtitle(const app_state *st, char *buf, size_t n)
{
    app_subtitle_less(st, NULL, buf, n);
}

void app_subtitle_less(const app_state *st, const char *out, char *buf, size_t n)
{
    const app_view *v = app_view_at((size_t)st->view);
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < app_option_count(); i++) {
        const app_option *o = app_option_at(i);
        const app_sub *sb = &o->sub;
        if (!sb->label && !sb->words && !sb->text) continue;
        if (!app_view_uses(v, o->name) || app_word_in(v->not_in_subtitle, o->name)) continue;
        if (v->idle && app_word_in(v->idle(st), o->name)) continue;
        if (app_word_in(out, o->name)) continue;
        if (o->applies && !o->applies(st)) continue;
        char w[256];
        row_words(st, o, w, sizeof w);
        if (!w[0]) continue;
        int k = snprintf(buf + used, n - used, "%s%s", used ? "  " : "", w);
        if (k < 0 || (size_t)k >= n - used) break;
        used += (size_t)k;
    }
}

int app_state_p0(const app_state *st)
{
    int p0 = st->pos < 0 ? st->p.len / 2 : st->pos;
    if (p0 >= st->p.len) p0 = st->p.len - 1;
    return p0 < 0 ? 0 : p0;
}

const char *app_opt_prefix(const app_state *st)
{
    return st->command[0] ? "--" : ":";
}

double *app_rope_inv_freqs(const app_state *st, int *np, double *attn)
{
    *np = pe_rope_rotary_dim(&st->p) / 2;
    *attn = 1;
    double *inv = *np > 0 ? malloc(sizeof *inv * (size_t)*np) : NULL;
    char err[256];
    if (!inv || pe_rope_inv_freq(&st->p, inv, attn, err, sizeof err) < 0) {
        free(inv);
        return NULL;
    }
    return inv;
}

void app_finite_range(const float *v, size_t n, double *lo, double *hi)
{
    double a = INFINITY, b = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(v[i])) continue;
        if (v[i] < a) a = v[i];
        if (v[i] > b) b = v[i];
    }
    if (a > b) a = b = 0;
    *lo = a;
    *hi = b;
}

const cmap *app_pick_map(const app_state *st, double lo, double hi, double *vmin, double *vmax)
{
    int signed_data = lo < 0 && hi > 0;
    const cmap *m = st->map;
    if (!m) m = signed_data ? cmap_default_diverging() : cmap_default_sequential();
    if (m->diverging && (lo < 0 || hi > 0)) {
        double a = fmax(fabs(lo), fabs(hi));
        *vmin = -a;
        *vmax = a;
    } else {
        *vmin = lo;
        *vmax = hi;
    }
    if (*vmax <= *vmin) { /* constant data: give the colorbar a range */
        *vmin -= 0.5;
        *vmax += 0.5;
    }
    return m;
}

size_t app_grid_pos(size_t i, size_t n, size_t len)
{
    return n == len ? i : (size_t)(((double)i + 0.5) * (double)len / (double)n);
}

fig_axes app_draw_matrix(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                         const float *data, size_t rows, size_t cols, size_t stride, double x0,
                         double x1, double y0, double y1, const char *xlabel, const char *ylabel,
                         const cmap *map, double vmin, double vmax, const char *cbar_label,
                         uint32_t mask_color)
{
    fig_rect bar = fig_take_right(&r, fig_colorbar_width(t), t->char_w * 2);
    fig_axes a = fig_axes_draw(s, t, th, r, x0, x1, y0, y1, xlabel, ylabel, FIG_Y_DOWN);
    scene_heatmap(s, a.area.x, a.area.y, a.area.w, a.area.h, data, rows, cols, stride, vmin, vmax,
                  map, mask_color);
    /* the colorbar spans the plot area, not the labels around it */
    bar.y = a.area.y;
    bar.h = a.area.h;
    fig_colorbar(s, t, th, bar, vmin, vmax, map, cbar_label);
    return a;
}

fig_axes app_draw_square_matrix(scene *s, const scene_target *t, const fig_theme *th, fig_rect r,
                                const float *data, size_t n, size_t stride, double x0, double x1,
                                const char *xlabel, const char *ylabel, const cmap *map,
                                double vmin, double vmax, const char *cbar_label,
                                const char *cbar_short, uint32_t mask_color)
{
    if (t->cells)
        return app_draw_matrix(s, t, th, r, data, n, n, stride, x0, x1, x0, x1, xlabel, ylabel, map,
                               vmin, vmax, cbar_label, mask_color);
    /* the two places for the bar, each laid out as fig_axes_draw will: the larger matrix wins,
     * beside unless under is clearly (15%) larger */
    double bw = fig_colorbar_width(t) + t->char_w * 2;
    double hb = fig_colorbar_h_height(t) + t->text_h * 0.6;
    fig_rect o = r, ou = r, av, au;
    o.w -= bw;
    ou.h -= hb;
    o = fig_axes_outer_for(t, th, o, x0, x1, x0, x1, xlabel, ylabel, FIG_Y_DOWN, 1.0, 0, &av);
    ou = fig_axes_outer_for(t, th, ou, x0, x1, x0, x1, xlabel, ylabel, FIG_Y_DOWN, 1.0, 0, &au);
    int under = au.w > 1.15 * av.w;
    double len = under ? au.w : av.h;
    /* a bar shorter than its name: the short name */
    const char *name = cbar_label;
    if (cbar_short && scene_text_width(t, cbar_label, 1) > len) name = cbar_short;
    if (!under)
        return app_draw_matrix(s, t, th, (fig_rect){o.x, o.y, o.w + bw, o.h}, data, n, n, stride,
                               x0, x1, x0, x1, xlabel, ylabel, map, vmin, vmax, name, mask_color);
    fig_axes a = fig_axes_draw(s, t, th, ou, x0, x1, x0, x1, xlabel, ylabel, FIG_Y_DOWN);
    scene_heatmap(s, a.area.x, a.area.y, a.area.w, a.area.h, data, n, n, stride, vmin, vmax, map,
                  mask_color);
    fig_rect bar = {a.area.x, ou.y + ou.h + t->text_h * 0.6, a.area.w, fig_colorbar_h_height(t)};
    fig_colorbar_h(s, t, th, bar, vmin, vmax, map, name);
    return a;
}

double app_matrix_width(const scene_target *t, const fig_theme *th, double h, double x0, double x1,
                        double y0, double y1, const char *xlabel, const char *ylabel, double *side)
{
    /* laid out once on a scratch scene, twice as wide as high: what is not the plot area is
     * what its labels and colorbar take, across and down */
    scene scratch;
    scene_init(&scratch, 4 * h + 1, h + 1, th->bg);
    fig_rect r = {0, 0, 2 * h, h};
    fig_rect bar = fig_take_right(&r, fig_colorbar_width(t), t->char_w * 2);
    (void)bar;
    fig_axes a = fig_axes_draw(&scratch, t, th, r, x0, x1, y0, y1, xlabel, ylabel, FIG_Y_DOWN);
    scene_free(&scratch);
    if (side) *side = a.area.h;
    return ceil(2 * h - a.area.w + a.area.h);
}

void app_cursor_line(scene *s, const scene_target *t, const fig_theme *th, double x0, double y0,
                     double x1, double y1)
{
    /* not the accent: in the light theme it equals a series colour (the 'learned' curve) */
    if (!t->cells) scene_line(s, x0, y0, x1, y1, th->bg, t->hairline * 4, 0);
    scene_line(s, x0, y0, x1, y1, th->fg, t->cells ? 0 : t->hairline * 1.5, 0);
}

void app_cursor_vline(scene *s, const scene_target *t, const fig_theme *th, const fig_axes *a,
                      double x)
{
    double fx = fig_x(a, x);
    if (t->cells) fx = floor(fx) + 0.5;
    app_cursor_line(s, t, th, fx, a->area.y, fx, a->area.y + a->area.h);
}

void app_draw_cell_cursor(scene *s, const scene_target *t, const fig_theme *th, const fig_axes *a,
                          double r, double c)
{
    double x0 = fig_x(a, c), x1 = fig_x(a, c + 1);
    double y0 = fig_y(a, r), y1 = fig_y(a, r + 1);
    double cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
    /* cross-hair lines through the cell, so a one-pixel cell is still easy to find */
    app_cursor_line(s, t, th, a->area.x, cy, a->area.x + a->area.w, cy);
    app_cursor_line(s, t, th, cx, a->area.y, cx, a->area.y + a->area.h);
    double bx = fmin(x0, x1), by = fmin(y0, y1), bw = fabs(x1 - x0), bh = fabs(y1 - y0);
    if (!t->cells) {
        double g = t->hairline * 1.5;
        scene_rect(s, bx - g, by - g, bw + 2 * g, bh + 2 * g, th->bg, 0);
    }
    scene_rect(s, bx, by, bw, bh, th->fg, 0);
}

void app_pow2_label(double e, char *buf, size_t n)
{
    static const char *const sup[10] = {
        "\xe2\x81\xb0", "\xc2\xb9",     "\xc2\xb2",     "\xc2\xb3",     "\xe2\x81\xb4",
        "\xe2\x81\xb5", "\xe2\x81\xb6", "\xe2\x81\xb7", "\xe2\x81\xb8", "\xe2\x81\xb9"};
    /* a fractional exponent (ALiBi's extra heads: 2^-0.5, 2^-1.5, ...) in superscripts too, its
     * decimal point a middle dot (Unicode has no superscript full stop): 2⁻⁰·⁵ */
    int whole = fabs(e - round(e)) < 1e-9;
    char digits[32];
    snprintf(digits, sizeof digits, whole ? "%.0f" : "%.3g", whole ? fabs(round(e)) : fabs(e));
    if (strspn(digits, "0123456789.") != strlen(digits)) { /* 1e+06: no superscript for it */
        snprintf(buf, n, "2^%.3g", e);
        return;
    }
    size_t k = (size_t)snprintf(buf, n, "2%s",
                                e < 0 && digits[strspn(digits, "0.")] ? "\xe2\x81\xbb" : "");
    for (const char *d = digits; *d && k < n; d++) {
        int w = snprintf(buf + k, n - k, "%s", *d == '.' ? "\xc2\xb7" : sup[*d - '0']);
        if (w < 0) return;
        k += (size_t)w;
    }
}

fig_rect app_frame(scene *s, const scene_target *t, const fig_theme *th, const char *title,
                   const char *subtitle)
{
    double m = t->cells ? 1 : t->text_h * 0.6;
    fig_rect r = {m, t->cells ? 0 : m * 0.5, t->width - 2 * m, t->height - (t->cells ? 0 : m)};
    return fig_title(s, t, th, r, title, subtitle);
}

const pe_rng *app_view_learned_states(app_view_ctx *c, int slot, const app_state *st, char *err,
                                      size_t errlen)
{
    struct {
        int len, dim;
        uint64_t seed;
    } key;
    memset(&key, 0, sizeof key);
    key.len = st->p.len;
    key.dim = st->p.dim;
    key.seed = st->p.seed;
    pe_rng *r = app_cache_get(c, slot, &key, sizeof key);
    if (r) return r;
    r = app_cache_put(c, slot, &key, sizeof key, (size_t)st->p.len * sizeof *r);
    if (!r) {
        snprintf(err, errlen, "%s", app_cache_error());
        return NULL;
    }
    if (pe_learned_row_states(&st->p, r, err, errlen) != PE_OK) {
        app_cache_put(c, slot, "", 0, 0); /* forget the half-made states */
        return NULL;
    }
    return r;
}

int app_validate_untabled(const char *enc, const app_state *st, char *err, size_t errlen)
{
    return pe_validate_values(pe_encoding_find(enc), &st->p, err, errlen) < 0 ? -1 : 0;
}
