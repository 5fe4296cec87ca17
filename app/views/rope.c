/* rope.c: RoPE as rotating vector pairs. One circle per frequency pair k: the query's pair at
 * position m and the key's at position n, both starting from (1, 0), are arrows at angles
 * m*theta_k and n*theta_k. Their dot product is cos((m - n) theta_k): only the difference of
 * positions survives, which is the whole point of RoPE. The explorer animates m. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input.h"
#include "views.h"

/* m while --pos is auto: 3, so the first pairs already show a turn (the status line and the
 * slider read this number too) */
static int rope_m_auto(const app_state *st)
{
    (void)st;
    return 3;
}

static void rope_positions(const app_state *st, int *m, int *n)
{
    *m = st->pos < 0 ? rope_m_auto(st) : st->pos;
    *n = st->pos_k;
}

static int rope_validate(const app_state *st, char *err, size_t errlen)
{
    return app_validate_untabled("rope", st, err, errlen);
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
    double sum = 0;
    for (int k = 0; k < np; k++) sum += cos((m - n) * inv[k]);
    double score = sum * attn * attn;

    /* with an attention factor a (YaRN, LongRoPE) the score is a^2 times the sum: both shown,
     * written as every figure writes numbers (fig_num: the minus sign, 3 significant digits;
     * the readout keeps 6 decimals for who needs them) */
    char title[400], sub[256], a_s[48], sum_s[48], score_s[48];
    fig_num(attn, 3, a_s, sizeof a_s);
    fig_num(sum, 3, sum_s, sizeof sum_s);
    fig_num(score, 3, score_s, sizeof score_s);
    if (attn != 1)
        snprintf(title, sizeof title,
                 "RoPE: q at m=%d, k at n=%d  |  q\xc2\xb7k = a\xc2\xb2\xc2\xb7\xce\xa3 "
                 "cos((m\xe2\x88\x92n)" APP_THETA_K ") = %s\xc2\xb2 \xc3\x97 %s = %s",
                 m, n, a_s, sum_s, score_s);
    else
        snprintf(
            title, sizeof title,
            "RoPE: q at m=%d, k at n=%d  |  q\xc2\xb7k = \xce\xa3 cos((m\xe2\x88\x92n)" APP_THETA_K
            ") = %s",
            m, n, score_s);
    app_subtitle(st, sub, sizeof sub);
    fig_rect r = app_frame(s, t, th, title, sub);

    /* legend line */
    double lh = t->text_h;
    double legend_r = r.x + r.w, legend_y = r.y;
    double kx = r.x + scene_text_width_bold(t, "q (position m)", 0.9) + 3 * t->char_w;
    /* where the legend line ends: the note on pairs left out goes after it (below) */
    double legend_end = kx + scene_text_width_bold(t, "k (position n)", 0.9) + 3 * t->char_w;
    scene_text(s, r.x, r.y, "q (position m)", 0.9, SCENE_LEFT | SCENE_TOP, th->series[0],
               SCENE_BOLD);
    scene_text(s, kx, r.y, "k (position n)", 0.9, SCENE_LEFT | SCENE_TOP, th->series[1],
               SCENE_BOLD);
    /* a figure too narrow for the note on pairs left out beside the legend (a paper column
     * 2.2in wide) gives it the line below */
    int note_below =
        !t->cells && legend_end + scene_text_width(t, "16 of 64 pairs", 0.7) > legend_r;
    double note_y = legend_y + lh * 1.1;
    r.y += lh * (note_below ? 2.2 : 1.2);
    r.h -= lh * (note_below ? 2.2 : 1.2);
    fig_mark_main(s, r, "circles"); /* the grid of frequency pairs */

    /* How many circles fit: each needs a square plus its label lines, and a column must be as
     * wide as its labels. Labels take two lines ("k=0  theta=1" / "angle +1.00  cos +0.540")
     * or, in a narrow column, three (angle and cos apart), so that d = 8 keeps all four pairs
     * side by side in an 80-column terminal instead of dropping one. */
    const char *theta = "\xce\xb8"; /* terminals without UTF-8 read "theta" (scene_ascii) */
    char widest[160];
    char ang_s[48], cos_s[48];
    fig_fixed(-3.14, 2, 1, ang_s, sizeof ang_s);
    fig_fixed(-0.999, 3, 1, cos_s, sizeof cos_s);
    snprintf(widest, sizeof widest, "angle %s  cos %s", ang_s, cos_s);
    double pad = t->cells ? 2 : t->char_w * 2;
    /* a terminal draws every size one character a cell, so measure it at full size there */
    double lsz = t->cells ? 1 : 0.8;
    double wide_w = scene_text_width(t, widest, lsz) + pad;
    snprintf(widest, sizeof widest, "angle %s", ang_s);
    /* the widest pair label of all np (2048 at d 4096: formatting and measuring them was most
     * of an unchanged frame, issue 27), kept for the frequencies and the text it was measured
     * for; the positions m and n do not change it */
    struct {
        pe_params p;
        double text_h, char_w, lsz;
        const char *font;
        int cells, ascii;
    } key;
    memset(&key, 0, sizeof key);
    memcpy(&key.p, p, sizeof key.p);
    key.text_h = t->text_h;
    key.char_w = t->char_w;
    key.lsz = lsz;
    key.font = t->font;
    key.cells = t->cells;
    key.ascii = t->ascii;
    double *narrow = app_cache_get(c, 0, &key, sizeof key);
    if (!narrow && (narrow = app_cache_put(c, 0, &key, sizeof key, sizeof *narrow)) != NULL) {
        *narrow = scene_text_width(t, widest, lsz);
        for (int k = 0; k < np; k++) {
            char th_s[48];
            fig_num(inv[k], 3, th_s, sizeof th_s);
            snprintf(widest, sizeof widest, "k=%d %s=%s", k, theta, th_s);
            *narrow = fmax(*narrow, scene_text_width(t, widest, lsz));
        }
    }
    if (!narrow) {
        free(inv);
        snprintf(err, errlen, "%s", app_cache_error());
        return -1;
    }
    double narrow_w = *narrow + pad;
    double min_side = t->cells ? 10 : 80; /* a circle whose arrows read apart */
    int show = np, cols = 1, rows = 1, lines = 2;
    double gap = t->cells ? 1 : lh * 0.5;
    for (;;) {
        /* the arrangement by the rule of every multi-panel view (fig_grid_pick): square
         * circles under their label lines, once with two lines (a column as wide as "angle
         * +3.14  cos +0.540", or a single column) and once with three (as wide as "k=63
         * theta=1.15e-4"); the form that draws the circles larger wins */
        double best = -1;
        for (int nl = 2; nl <= 3; nl++) {
            int rr = 1;
            double side = 0, min_w = nl == 2 ? wide_w : narrow_w;
            int cc = fig_grid_pick(r, show, 1.0, lh * (t->cells ? nl + 1 : nl + 0.1), 0, gap, min_w,
                                   &rr, &side);
            double cw = (r.w - (cc - 1) * gap) / cc;
            if (cw < min_w && !(nl == 2 && cc == 1)) continue; /* no column that wide */
            if (side > best + 1e-9) {
                best = side;
                cols = cc;
                rows = rr;
                lines = nl;
            }
        }
        if (best >= min_side || show <= 1) break;
        show = show > 16 ? 16 : show - 1;
    }
    /* a terminal's label lines start on a whole row (below), which can take most of a row more */
    double label_h = lh * (t->cells ? lines + 1 : lines + 0.1);
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
        /* In a terminal the label lines start on the first whole row under the circle and step
         * one row each: fractional positions could round two lines onto the same row. */
        double ly = t->cells ? ceil((cell.y + side) / lh) * lh : cell.y + side + lh * 0.05;
        double step = t->cells ? lh : lh * 0.95;
        char th_s[48];
        fig_num(inv[k], 3, th_s, sizeof th_s);
        scene_textf(s, cx, ly, 0.8, SCENE_CENTER | SCENE_TOP, th->fg, 0,
                    lines == 2 ? "k=%d  %s=%s" : "k=%d %s=%s", k, theta, th_s);
        fig_fixed(dphi, 2, 1, ang_s, sizeof ang_s);
        fig_fixed(cos(dphi), 3, 1, cos_s, sizeof cos_s);
        if (lines == 2) {
            scene_textf(s, cx, ly + step, 0.8, SCENE_CENTER | SCENE_TOP, th->muted, 0,
                        "angle %s  cos %s", ang_s, cos_s);
        } else {
            scene_textf(s, cx, ly + step, 0.8, SCENE_CENTER | SCENE_TOP, th->muted, 0, "angle %s",
                        ang_s);
            scene_textf(s, cx, ly + 2 * step, 0.8, SCENE_CENTER | SCENE_TOP, th->muted, 0, "cos %s",
                        cos_s);
        }
    }
    /* Pairs left out are said on the figure itself (a caption may promise all of them): the
     * legend line's right end, in every front end and export. */
    if (show < np) {
        snprintf(c->notice, sizeof c->notice, "%d of %d shown (evenly spaced k)", show, np);
        /* a narrow figure (a paper column) says it shorter rather than over the legend */
        char shorter[64];
        snprintf(shorter, sizeof shorter, "%d of %d pairs", show, np);
        const char *say = c->notice;
        double from = note_below ? r.x : legend_end;
        if (from + scene_text_width(t, say, 0.9) > legend_r) say = shorter;
        double size = 0.9;
        while (!t->cells && size > 0.7 && from + scene_text_width(t, say, size) > legend_r)
            size -= 0.05;
        scene_text(s, legend_r, note_below ? note_y : legend_y, say, size, SCENE_RIGHT | SCENE_TOP,
                   th->muted, 0);
    } else {
        c->notice[0] = '\0';
    }
    if (attn != 1)
        snprintf(c->readout, sizeof c->readout,
                 "m %d  n %d  m-n %d  q.k %.6f = a^2 %.6g x sum cos %.6f", m, n, m - n, score,
                 attn * attn, sum);
    else
        snprintf(c->readout, sizeof c->readout, "m %d  n %d  m-n %d  q.k %.6f", m, n, m - n, score);
    c->has_main = 0;
    free(inv);
    return 0;
}

/* The data: one row per dimension i = 0..d-1 (NaN where a column has no entry).
 * Columns 0-5, rows k < rotary_dim/2: the pair table k, theta_k, m theta_k mod 2pi,
 * n theta_k mod 2pi, (m-n) theta_k wrapped, cos((m-n) theta_k).
 * Columns 6-10, every row: i, then q at m and k at n rotated as a model rotates them (with the
 * attention factor), under interleaved pairs and under half-split pairs: the vectors drawn, q =
 * k = (1, 0) in every rotated pair and 0 in the unrotated dimensions, so sum_i q_i k_i is the
 * title's score attn^2 sum_k cos((m-n) theta_k) under either pairing. */
#define ROPE_DATA_COLS 11
static int rope_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    (void)c;
    const pe_params *p = &st->p;
    int np = pe_rope_rotary_dim(p) / 2, d = p->dim;
    double *inv = malloc(sizeof *inv * ((size_t)np + 2 * (size_t)d));
    if (!inv) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double attn = 1, *q = inv + np, *k = q + d;
    if (pe_rope_inv_freq(p, inv, &attn, err, errlen) < 0 ||
        app_data_alloc(out, 2, (size_t)d, ROPE_DATA_COLS, 0, err, errlen) < 0) {
        free(inv);
        return -1;
    }
    int m, n;
    rope_positions(st, &m, &n);
    for (int i = 0; i < d; i++) {
        double *row = out->data + (size_t)i * ROPE_DATA_COLS;
        for (int j = 0; j < 6; j++) row[j] = NAN;
        row[6] = i;
    }
    for (int kk = 0; kk < np; kk++) {
        double *row = out->data + (size_t)kk * ROPE_DATA_COLS;
        row[0] = kk;
        row[1] = inv[kk];
        row[2] = fmod(m * inv[kk], 2 * APP_PI);
        row[3] = fmod(n * inv[kk], 2 * APP_PI);
        row[4] = wrap_pi((m - n) * inv[kk]);
        row[5] = cos((m - n) * inv[kk]);
    }
    for (int pairing = 0; pairing < 2; pairing++) {
        pe_params pp = *p;
        pp.pairing = pairing ? PE_PAIRING_HALF : PE_PAIRING_INTERLEAVED;
        memset(q, 0, sizeof *q * (size_t)d * 2);
        for (int kk = 0; kk < np; kk++) {
            int i0, i1;
            pe_rope_pair(&pp, kk, &i0, &i1);
            q[i0] = k[i0] = 1;
        }
        pe_rope_rotate(&pp, inv, attn, q, m);
        pe_rope_rotate(&pp, inv, attn, k, n);
        for (int i = 0; i < d; i++) {
            double *row = out->data + (size_t)i * ROPE_DATA_COLS;
            row[7 + 2 * pairing] = q[i];
            row[8 + 2 * pairing] = k[i];
        }
    }
    out->f64 = 1;
    snprintf(out->what, sizeof out->what,
             "(d, 11): rows k < %d: k, theta_k, m theta mod 2pi, n theta mod 2pi, (m-n)theta "
             "wrapped, cos; every row i: i, q_m[i], k_n[i] interleaved, q_m[i], k_n[i] half "
             "(q=k=(1,0) per pair, x attn %.6g); m=%d n=%d",
             np, attn, m, n);
    free(inv);
    return 0;
}

/* ---- the explorer's side: the arrows move the positions, space animates m ---------------- */

/* arg as the explorer's cursor keys: 0 up, 1 down, 2 left, 3 right, +4 big; left/right move m,
 * up/down n */
static int rope_key_move(app_view_ctx *c, app_state *st, int arg, char *msg, size_t n)
{
    (void)c;
    int dir = arg & 3, step = arg >= 4 ? 10 : 1, last = st->p.len - 1;
    st->pos_frac = 0;
    int m = st->pos < 0 ? rope_m_auto(st) : st->pos;
    if (dir >= 2) {
        m += dir == 3 ? step : -step;
        st->pos = m < 0 ? 0 : m > last ? last : m;
    } else {
        int k = st->pos_k + (dir == 0 ? step : -step);
        st->pos_k = k < 0 ? 0 : k > last ? last : k;
    }
    snprintf(msg, n, "m = %d, n = %d, m - n = %d", st->pos, st->pos_k, st->pos - st->pos_k);
    return 0;
}

static int rope_key_play(app_view_ctx *c, app_state *st, int arg, char *msg, size_t n)
{
    (void)c;
    (void)arg;
    st->playing = !st->playing;
    snprintf(msg, n, "%s",
             st->playing ? "playing: m advances (space pauses, arrows step)" : "paused");
    return 0;
}

/* 4 positions a second: slow enough to follow the fast pairs; smooth turns in the window */
static int rope_tick(app_view_ctx *c, app_state *st, double dt, int smooth)
{
    (void)c;
    double m = (st->pos < 0 ? rope_m_auto(st) : st->pos) + st->pos_frac + dt * 4;
    if (m >= st->p.len) m = 0;
    st->pos = (int)floor(m);
    st->pos_frac = smooth ? m - floor(m) : 0;
    return 1;
}

/* ---- what a lesson asks of the view -------------------------------------------------------- */

/* {distance}: m - n, the only thing a true rotation's score depends on */
static int value_distance(const app_state *st, const char *args, char *out, size_t n, char *err,
                          size_t errlen)
{
    (void)args, (void)err, (void)errlen;
    snprintf(out, n, "%d", (st->pos < 0 ? rope_m_auto(st) : st->pos) - st->pos_k);
    return 0;
}

/* {sin-bug}: the bug of seed 000: both tables read the sin column, so pair (a, b) becomes
 * sin(m theta) (a - b, b + a) instead of a rotation; for q = k = (1, 0) in every pair (this
 * view's vectors) the score is sum_k 2 sin(m theta_k) sin(n theta_k)
 * = sum_k cos((m - n) theta_k) - cos((m + n) theta_k) */
static int value_sin_bug(const app_state *st, const char *args, char *out, size_t n, char *err,
                         size_t errlen)
{
    (void)args, (void)err, (void)errlen;
    int m = st->pos < 0 ? rope_m_auto(st) : st->pos, k = st->pos_k, np;
    double attn, *inv = app_rope_inv_freqs(st, &np, &attn);
    if (!inv) {
        snprintf(out, n, "?");
        return 0;
    }
    double sum = 0;
    for (int i = 0; i < np; i++) sum += 2 * sin(m * inv[i]) * sin(k * inv[i]);
    free(inv);
    fig_fixed(sum * attn * attn, 4, 0, out, n); /* as the title writes its score */
    return 0;
}

static const app_view_value rope_values[] = {
    {"distance", NULL, value_distance},
    {"sin-bug", NULL, value_sin_bug},
    {NULL, NULL, NULL},
};

static void spin_start(app_state *st)
{
    st->playing = 1;
}

/* `do: spin`: m advances (rope_tick) from the slide's position */
static const app_view_action rope_spin = {"spin", "turns the RoPE view's pairs", spin_start};

static const app_view_key rope_keys[] = {
    APP_ARROW_KEYS(
        rope_key_move, "arrows, hjkl",
        "left / right: query position m; up / down: key position n (HJKL, PgUp/PgDn: 10)"),
    {' ', rope_key_play, 0, "space", "play / pause: m advances, 4 positions a second"},
    {0, NULL, 0, NULL, NULL},
};

const app_view app_view_rope = {
    .name = "rope",
    .description = "RoPE as rotating vector pairs: q at position m, k at n, one circle per pair",
    .validate = rope_validate,
    .build = rope_build,
    .data = rope_data,
    .options =
        "layer-type dim len base pairing rotary-frac scaling factor orig-ctx seq-len attn-factor "
        "pos pos-k",
    /* L bounds m and n (the title gives them); the figure is the same at any L past them */
    .not_in_subtitle = "len",
    /* the spin: q turns through 48 positions, two frames a position */
    .record = "pos=0:48:97",
    .pos_auto = rope_m_auto,
    .keys = rope_keys,
    .tick = rope_tick,
    .values = rope_values,
    .action = &rope_spin,
};
