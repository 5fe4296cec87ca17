/* rope.c: RoPE as rotating vector pairs. One circle per frequency pair k: the query's pair at
 * position m and the key's at position n, both starting from (1, 0), are arrows at angles
 * m*theta_k and n*theta_k. Their dot product is cos((m - n) theta_k): only the difference of
 * positions survives, which is the whole point of RoPE. The explorer animates m. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "view_list.h"

static void rope_positions(const app_state *st, int *m, int *n)
{
    *m = st->pos < 0 ? 3 : st->pos;
    *n = st->pos_k;
}

static int rope_validate(const app_state *st, char *err, size_t errlen)
{
    const pe_encoding *e = pe_encoding_find("rope");
    return e->validate(&st->p, err, errlen);
}

static double wrap_pi(double a)
{
    a = fmod(a, 2 * APP_PI);
    if (a > APP_PI) a -= 2 * APP_PI;
    if (a <= -APP_PI) a += 2 * APP_PI;
    return a;
}

static int rope_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                      char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    const pe_params *p = &st->p;
    int np = pe_rope_rotary_dim(p) / 2;
    double *inv = malloc(sizeof *inv * (size_t)np);
    if (!inv) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double attn = 1;
    if (pe_rope_inv_freq(p, inv, &attn, err, errlen) < 0) {
        free(inv);
        return -1;
    }
    int m, n;
    rope_positions(st, &m, &n);
    double score = 0;
    for (int k = 0; k < np; k++) score += cos((m - n) * inv[k]);
    score *= attn * attn;

    char title[160], sub[256];
    snprintf(title, sizeof title,
             "RoPE: q at m=%d, k at n=%d  |  q\xc2\xb7k = sum cos((m\xe2\x88\x92n)" APP_THETA_K
             ") = %.4f",
             m, n, score);
    app_subtitle(st, NULL, APP_SUB_DIM | APP_SUB_BASE | APP_SUB_PAIRING | APP_SUB_SCALING, sub,
                 sizeof sub);
    fig_rect r = app_frame(s, t, th, title, sub);

    /* legend line */
    double lh = t->text_h;
    scene_text(s, r.x, r.y, "q (position m)", 0.9, SCENE_LEFT | SCENE_TOP, th->series[0],
               SCENE_BOLD);
    scene_text(s, r.x + scene_text_width(t, "q (position m)", 0.9) + 3 * t->char_w, r.y,
               "k (position n)", 0.9, SCENE_LEFT | SCENE_TOP, th->series[1], SCENE_BOLD);
    r.y += lh * 1.2;
    r.h -= lh * 1.2;

    /* how many circles fit: each needs a square plus two label lines, and a column must be
     * as wide as its labels */
    const char *theta = "\xce\xb8"; /* terminals without UTF-8 read "theta" (scene_ascii) */
    char widest[96];
    snprintf(widest, sizeof widest, "angle %+.2f  cos %+.3f", -3.14, -0.999);
    double label_w = scene_text_width(t, widest, 0.8) + (t->cells ? 2 : t->char_w * 2);
    double label_h = lh * 2.1;
    double min_side = t->cells ? 10 : 90;
    int show = np, cols = 1, rows = 1;
    for (;;) {
        double best = -1;
        int bc = 1;
        for (int cc = 1; cc <= show; cc++) {
            int rr = (show + cc - 1) / cc;
            if (cc > 1 && r.w / cc < label_w) break;
            double side = fmin(r.w / cc, r.h / rr - label_h);
            if (side > best) {
                best = side;
                bc = cc;
            }
        }
        cols = bc;
        rows = (show + cols - 1) / cols;
        if (best >= min_side || show <= 1) break;
        show = show > 16 ? 16 : show - 1;
    }
    double gap = t->cells ? 1 : lh * 0.5;
    for (int i = 0; i < show; i++) {
        /* evenly spaced k: theta_k is geometric in k, so these span the frequencies on a log
         * scale from the fastest pair to the slowest */
        int k = show == 1 ? 0 : (int)((double)i * (np - 1) / (show - 1) + 0.5);
        fig_rect cell = fig_grid_cell(r, rows, cols, i / cols, i % cols, gap);
        double side = fmin(cell.w, cell.h - label_h);
        if (side < 2) continue;
        double R = side / 2 * 0.9;
        double cx = cell.x + cell.w / 2, cy = cell.y + side / 2;
        scene_circle(s, cx, cy, R, th->grid, 0, 0);
        scene_line(s, cx - R, cy, cx + R, cy, th->grid, 0, 0);
        double aq = (m + st->pos_frac) * inv[k], ak = n * inv[k];
        /* k is drawn first and wider, so it still shows when q lies on top of it */
        double lw = t->hairline > 0 ? t->hairline : 1;
        scene_arrow(s, cx, cy, cx + R * cos(ak), cy - R * sin(ak), th->series[1],
                    t->cells ? 0 : lw * 4.5);
        scene_arrow(s, cx, cy, cx + R * cos(aq), cy - R * sin(aq), th->series[0],
                    t->cells ? 0 : lw * 2.2);
        double dphi = wrap_pi((m - n) * inv[k]);
        scene_textf(s, cx, cell.y + side + lh * 0.05, 0.8, SCENE_CENTER | SCENE_TOP, th->fg, 0,
                    "k=%d  %s=%.3g", k, theta, inv[k]);
        scene_textf(s, cx, cell.y + side + lh * 1.0, 0.8, SCENE_CENTER | SCENE_TOP, th->muted, 0,
                    "angle %+.2f  cos %+.3f", dphi, cos(dphi));
    }
    if (show < np)
        snprintf(c->notice, sizeof c->notice, "showing %d of %d pairs (evenly spaced k)", show, np);
    else
        c->notice[0] = '\0';
    snprintf(c->readout, sizeof c->readout, "m %d  n %d  m-n %d  q.k %.6f%s", m, n, m - n, score,
             attn != 1 ? "  (x attention factor^2)" : "");
    c->has_main = 0;
    free(inv);
    return 0;
}

static int rope_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    (void)c;
    int np = pe_rope_rotary_dim(&st->p) / 2;
    double *inv = malloc(sizeof *inv * (size_t)np);
    if (!inv) return -1;
    if (pe_rope_inv_freq(&st->p, inv, NULL, err, errlen) < 0 ||
        app_data_alloc(out, 2, (size_t)np, 6, 0, err, errlen) < 0) {
        free(inv);
        return -1;
    }
    int m, n;
    rope_positions(st, &m, &n);
    for (int k = 0; k < np; k++) {
        double *row = out->data + (size_t)k * 6;
        row[0] = k;
        row[1] = inv[k];
        row[2] = fmod(m * inv[k], 2 * APP_PI);
        row[3] = fmod(n * inv[k], 2 * APP_PI);
        row[4] = wrap_pi((m - n) * inv[k]);
        row[5] = cos((m - n) * inv[k]);
    }
    out->f64 = 1;
    snprintf(out->what, sizeof out->what,
             "(pairs, 6): k, theta_k, m*theta_k mod 2pi, n*theta_k mod 2pi, (m-n)theta_k wrapped, "
             "cos((m-n)theta_k); m=%d n=%d",
             m, n);
    free(inv);
    return 0;
}

const app_view app_view_rope = {
    "rope",        "RoPE as rotating vector pairs: q at position m, k at n, one circle per pair",
    rope_validate, rope_build,
    rope_data,
};
