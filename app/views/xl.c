/* xl.c: Transformer-XL's relative attention score (Dai et al. 2019, reference section 7) split
 * into its four terms, each an (L, L) matrix over query i (rows) and key j (columns):
 *   (a) content           q_i . k_j
 *   (b) content-position  q_i . W_R R_{i-j}
 *   (c) global content    u . k_j         (the same for every query: vertical stripes)
 *   (d) global position   v . W_R R_{i-j} (depends on i - j only: constant along diagonals)
 * with seeded random q, k, u, v and W_R (pe_xl_terms), all divided by sqrt(d), causal. One
 * diverging colour range for the four, so their sizes compare.
 *
 * The panels show the terms at the figure's resolution, so they are computed there and nowhere
 * else, from pe_xl_terms' own draws; only the data (pelab export --data) builds the (L, L)
 * terms. What a change of base leaves alone (the draws, W_R^T q_i, (a), (c)) is cached apart
 * from what it changes (R, (b), (d)), and the cursor's cell is computed as pe_xl_terms does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "colormap.h"
#include "views.h"

static const char *const term_title[4] = {
    "(a) content q.k",
    "(b) content-position q.W_R R(i"
    "\xe2\x88\x92"
    "j)",
    "(c) global content u.k",
    "(d) global position v.W_R R(i"
    "\xe2\x88\x92"
    "j)",
};
/* the same on two lines, for narrow panels: the term's name, then its formula */
static const char *const term_name[4] = {"(a) content", "(b) content-position",
                                         "(c) global content", "(d) global position"};
static const char *const term_formula[4] = {"q.k",
                                            "q.W_R R(i"
                                            "\xe2\x88\x92"
                                            "j)",
                                            "u.k",
                                            "v.W_R R(i"
                                            "\xe2\x88\x92"
                                            "j)"};
/* narrower still (one panel of four across a paper column): the term's letter, then its
 * formula; the figure's title names the letters' sum */
static const char *const term_letter[4] = {"(a)", "(b)", "(c)", "(d)"};

/* The figure draws the terms at its resolution, whatever L (issue 25: a 10M-position context
 * loads; past SPARSE_BYTES no (L, d) table is kept), so only the values are checked here; the
 * data's 4 (L, L) terms meet the memory budget in xlv_data. */
static int xlv_validate(const app_state *st, char *err, size_t errlen)
{
    return pe_validate_values(pe_encoding_find("xl"), &st->p, err, errlen) < 0 ? -1 : 0;
}

/* The statistics under the title (each term's rms over the L(L+1)/2 unmasked cells, the
 * largest |value|): (a) does not depend on the base and is summed over every cell once per
 * seed, L and d; (c) and (d) take one value per key and per distance, so theirs are exact and
 * cheap. (b) over every cell would cost an (L, L, d) product at every base, so it is estimated
 * from every query row at m distances spread evenly over 0..i (the whole row while i < m;
 * m = STATS_CELLS / L, and at most STATS_MACS / (L d), at least 1; past that every rs-th row),
 * each standing for its share of the row. Every row counts because (b)'s rows differ in size (W_R^T
 * q_i against the slow pairs of R, nearly constant along a row); the estimate is within a few
 * percent (it only feeds the two digits under the title) and exact for L up to about 180 at d 512.
 */
#define STATS_CELLS 32768
#define STATS_MACS  ((size_t)1 << 21)
/* The panels' dot products per base change (n^2/2 cells of d each): past this the panels are
 * sampled more coarsely than the pixels (d 4096 in a 1280x800 window: 86 samples a side). */
#define GRID_MACS ((size_t)1 << 24)
/* R_r is stepped from R_{r-1} by one rotation per pair and computed afresh every ANCHOR rows,
 * so the rounding of the steps cannot pile up (they stay within ~3e-14 of pe_xl_r). */
#define ANCHOR 128
/* Products of W_R^T q between two progress reports (a few ms: a cancel waits for one). */
#define PROJECT_MACS ((size_t)1 << 21)
/* Past this many products for W_R^T q of every row and (a) over every cell (L d^2 + L^2 d / 2),
 * W_R^T q is computed only for the rows a frame needs (the sampled panel rows, the cursor's, and
 * STATS_ROWS rows spread over 0..L-1 for the statistics of (a) and (b), each standing for its
 * share of the rows): at L 1024, d 4096 about 200 projected rows instead of 1024. Below it every
 * row, and the statistics of (a) over every cell, as pe_xl_terms gives them. */
#define FULL_MACS  ((size_t)1 << 30)
#define STATS_ROWS 64
/* Past this many bytes of whole (L, d) tables (q, k, W_R^T q and R: 4 L d doubles; 256 MiB is
 * L 65536 at d 128) the view keeps none of them ("sparse", issue 25: a 10M-position context
 * loads): the rows a frame draws are drawn alone, each from its own place in pe_xl_terms' stream
 * (pe_rng_jump), R_r only at the distances drawn, and the statistics of all four terms are
 * estimated: (a) and (b) from STATS_ROWS queries and keys at app_grid_pos, (c) from SPARSE_KEYS
 * keys and (d) from SPARSE_DISTS distances (exact while L is no more than these). */
#define SPARSE_BYTES ((size_t)256 << 20) /* or a quarter of the memory budget (--max-memory) */
#define SPARSE_DISTS 4096
#define SPARSE_KEYS  1024
/* A normal draw's time in products, roughly (a log, a cos and a sqrt), for the progress shown. */
#define NORMAL_COST 16.0

/* A dot product in eight running sums (it vectorises; it differs from the plain loop only in
 * rounding). */
static double dot8(const double *x, const double *y, size_t n)
{
    double acc[8] = {0};
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++) acc[k] += x[i + (size_t)k] * y[i + (size_t)k];
    for (; i < n; i++) acc[0] += x[i] * y[i];
    return ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

/* The plain loop, the order pe_xl_terms sums in (the cursor's readout gives its numbers). */
static double dot_seq(const double *x, const double *y, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}

/* Samples of query row i for the statistics: how many, and the key (or distance) of sample t. */
static size_t row_samples(size_t i, size_t m)
{
    return i + 1 < m ? i + 1 : m;
}

static size_t row_sample(size_t i, size_t mi, size_t t)
{
    return (size_t)(((double)t + 0.5) * (double)(i + 1) / (double)mi);
}

/* What does not depend on the base: pe_xl_terms' draws (the same stream, the same numbers),
 * W_R^T q_i for every row, term (c) by key, and the statistics of (a) and (c). */
typedef struct xl_draws {
    size_t m;                         /* samples per row for the statistics */
    int lazy;                         /* g only for the rows asked for (xl_need_g); see FULL_MACS */
    int sparse;                       /* no (L, d) table at all; see SPARSE_BYTES */
    double *sq, *sk, *sg;             /* sparse: (ns, d) q, k, W_R^T q at the statistics' rows */
    size_t ns;                        /* lazy: the statistics' rows, app_grid_pos(s, ns, L) */
    unsigned char *g_done;            /* (L): g_i is computed */
    double ss_a, max_a, ss_c, max_c;  /* sums of squares and largest |value| */
    double *q, *k, *g;                /* (L, d) each; g_i = W_R^T q_i */
    double *u, *v, *gv, *w_r, *col_c; /* (d) (d) (d): W_R^T v, (d, d), (L): u.k_j / sqrt(d) */
} xl_draws;

/* The cache key of every xl table: what the seeded draws depend on, the base for the tables
 * that use R (0 for those that do not) and the sample size n (0 for whole tables). Zeroed
 * first, so padding never makes two equal keys differ. */
typedef struct xl_key {
    int dim, len;
    uint64_t seed;
    double base;
    size_t n;
} xl_key;

static xl_key make_key(const pe_params *p, double base, size_t n)
{
    xl_key k;
    memset(&k, 0, sizeof k);
    k.dim = p->dim;
    k.len = p->len;
    k.seed = p->seed;
    k.base = base;
    k.n = n;
    return k;
}

/* g_i = W_R^T q_i for the rows[0..n) not computed yet, four at a time, a few ms of products
 * between pe_work reports (done0 + the rows' share of work: the progress shown). -1 when pe_work
 * asks to stop; the rows done so far stay done. */
static int xl_need_g(xl_draws *x, size_t d, const size_t *rows, size_t n, double done0, double work)
{
    double *buf = malloc(8 * d * sizeof *buf);
    if (!buf) return -1;
    double *out = buf + 4 * d;
    size_t pend[4], np = 0, cols = PROJECT_MACS / (4 * d);
    cols = cols < 8 ? 8 : cols - cols % 8;
    double done = done0;
    for (size_t k = 0; k <= n; k++) {
        if (k < n && !x->g_done[rows[k]]) {
            int dup = 0;
            for (size_t t = 0; t < np; t++) dup |= pend[t] == rows[k];
            if (!dup) pend[np++] = rows[k];
        }
        if (np == 0 || (np < 4 && k < n)) continue;
        for (size_t t = 0; t < np; t++) memcpy(buf + t * d, x->q + pend[t] * d, d * sizeof *buf);
        for (size_t c0 = 0; c0 < d; c0 += cols) {
            if (pe_work(work > 0 ? done / work : 0)) {
                free(buf);
                return -1;
            }
            size_t c1 = d - c0 < cols ? d : c0 + cols;
            pe_xl_project_cols(x->w_r, buf, np, d, c0, c1, out);
            done += (double)np * d * (double)(c1 - c0);
        }
        for (size_t t = 0; t < np; t++) {
            memcpy(x->g + pend[t] * d, out + t * d, d * sizeof *out);
            x->g_done[pend[t]] = 1;
        }
        np = 0;
    }
    free(buf);
    return 0;
}

/* Sparse: rows pos[0..n) of q (kind 0) or k (kind 1) as pe_xl_terms draws them, q_i from step
 * 2 i d of the seed's stream and k_j from 2 (L + j) d (a normal takes two steps), by jumping
 * there (from the row before when pos rises). -1 when pe_work asks to stop. */
static int draw_rows(const pe_params *p, int kind, const size_t *pos, size_t n, double *out)
{
    uint64_t d = (uint64_t)p->dim, L = (uint64_t)p->len, at = 0;
    pe_rng base, r;
    pe_rng_seed(&base, p->seed);
    r = base;
    for (size_t t = 0; t < n; t++) {
        if ((t & 15) == 15 && pe_work(-1)) return -1;
        uint64_t want = 2 * ((uint64_t)kind * L + pos[t]) * d;
        if (want < at) r = base, at = 0;
        pe_rng_jump(&r, want - at);
        for (size_t a = 0; a < d; a++) out[t * d + a] = pe_rng_normal(&r);
        at = want + 2 * d;
    }
    return 0;
}

/* Sparse: W_R^T x for n rows, four at a time between pe_work checks. */
static int project_rows(const double *w_r, const double *xr, size_t n, size_t d, double *out)
{
    for (size_t i0 = 0; i0 < n; i0 += 4) {
        if (pe_work(-1)) return -1;
        pe_xl_project(w_r, xr + i0 * d, n - i0 < 4 ? n - i0 : 4, d, out + i0 * d);
    }
    return 0;
}

/* Sparse: R_r as pe_xl_r gives it, from the pair frequencies w (d/2). */
static void r_at(const double *w, size_t d, size_t r, double *out)
{
    size_t half = d / 2;
    for (size_t k = 0; k < half; k++) {
        out[k] = sin((double)r * w[k]);
        out[half + k] = cos((double)r * w[k]);
    }
}

static void pair_freqs(const pe_params *p, double *w)
{
    for (int k = 0; k < p->dim / 2; k++) w[k] = pow(p->base, -2.0 * (double)k / (double)p->dim);
}

/* Sparse: the draws that are not rows (u, v, W_R at step 4 L d, as pe_xl_terms draws them after
 * q and k), and q, k, W_R^T q at the statistics' rows with the statistics of (a) and (c): query
 * i_s against the keys i_t <= i_s (t <= s), each standing for its share of row i_s's i_s + 1
 * cells, each row for L / ns rows; key j's (c) for its L - j cells and its share of the keys. */
static xl_draws *xl_sparse_draws(app_view_ctx *c, const pe_params *p, const xl_key *key, char *err,
                                 size_t errlen)
{
    size_t len = (size_t)p->len, d = (size_t)p->dim, ns = STATS_ROWS;
    xl_draws *x = app_cache_put(c, 0, key, sizeof *key,
                                sizeof *x + (3 * d + d * d + 3 * ns * d) * sizeof(double));
    if (!x) {
        snprintf(err, errlen, "--dim %d: %s", p->dim, app_cache_error());
        return NULL;
    }
    memset(x, 0, sizeof *x);
    x->sparse = x->lazy = 1;
    x->ns = ns;
    x->u = (double *)(x + 1);
    x->v = x->u + d;
    x->gv = x->v + d;
    x->w_r = x->gv + d;
    x->sq = x->w_r + d * d;
    x->sk = x->sq + ns * d;
    x->sg = x->sk + ns * d;
    pe_rng rng;
    pe_rng_seed(&rng, p->seed);
    pe_rng_jump(&rng, 4 * (uint64_t)len * d);
    for (size_t a = 0; a < d; a++) x->u[a] = pe_rng_normal(&rng);
    for (size_t a = 0; a < d; a++) x->v[a] = pe_rng_normal(&rng);
    double wstd = 1.0 / sqrt((double)d), scale = 1.0 / sqrt((double)d);
    for (size_t a = 0; a < d * d; a++) x->w_r[a] = wstd * pe_rng_normal(&rng);
    pe_xl_project(x->w_r, x->v, 1, d, x->gv);
    size_t pos[STATS_ROWS];
    for (size_t s = 0; s < ns; s++) pos[s] = app_grid_pos(s, ns, len);
    if (draw_rows(p, 0, pos, ns, x->sq) < 0 || draw_rows(p, 1, pos, ns, x->sk) < 0 ||
        project_rows(x->w_r, x->sq, ns, d, x->sg) < 0) {
        app_cache_put(c, 0, "", 0, 0);
        pe_work_cancelled(err, errlen);
        return NULL;
    }
    double share = (double)len / (double)ns;
    for (size_t s = 0; s < ns; s++) {
        double ss = 0;
        for (size_t t = 0; t <= s; t++) {
            double v = (float)(dot8(x->sq + s * d, x->sk + t * d, d) * scale);
            ss += v * v;
            x->max_a = fmax(x->max_a, fabs(v));
        }
        x->ss_a += ss * (double)(pos[s] + 1) / (double)(s + 1) * share;
    }
    /* (c) from SPARSE_KEYS keys (every key while L is no more), drawn STATS_ROWS at a time */
    size_t nk = len < SPARSE_KEYS ? len : SPARSE_KEYS;
    double *kr = malloc(STATS_ROWS * d * sizeof *kr);
    for (size_t k0 = 0; k0 < nk; k0 += STATS_ROWS) {
        size_t nb = nk - k0 < STATS_ROWS ? nk - k0 : STATS_ROWS;
        for (size_t t = 0; t < nb; t++) pos[t] = app_grid_pos(k0 + t, nk, len);
        if (!kr || draw_rows(p, 1, pos, nb, kr) < 0) {
            free(kr);
            app_cache_put(c, 0, "", 0, 0);
            if (kr)
                pe_work_cancelled(err, errlen);
            else
                snprintf(err, errlen, "--dim %d: out of memory", p->dim);
            return NULL;
        }
        for (size_t t = 0; t < nb; t++) {
            double vc = (float)(dot_seq(x->u, kr + t * d, d) * scale);
            x->ss_c += (double)(len - pos[t]) * vc * vc * (double)len / (double)nk;
            x->max_c = fmax(x->max_c, fabs(vc));
        }
    }
    free(kr);
    return x;
}

static xl_draws *xl_get_draws(app_view_ctx *c, const pe_params *p, char *err, size_t errlen)
{
    xl_key key = make_key(p, 0, 0);
    xl_draws *x = app_cache_get(c, 0, &key, sizeof key);
    if (x) return x;
    size_t len = (size_t)p->len, d = (size_t)p->dim;
    double whole = 4.0 * (double)len * (double)d * sizeof(double);
    if (whole > (double)SPARSE_BYTES || whole > (double)pe_mem_budget() / 4)
        return xl_sparse_draws(c, p, &key, err, errlen);
    x = app_cache_put(c, 0, &key, sizeof key,
                      sizeof *x + (3 * len * d + 3 * d + d * d + len) * sizeof(double) + len);
    if (!x) {
        snprintf(err, errlen, "--len %d x --dim %d: %s", p->len, p->dim, app_cache_error());
        return NULL;
    }
    x->q = (double *)(x + 1);
    x->k = x->q + len * d;
    x->g = x->k + len * d;
    x->u = x->g + len * d;
    x->v = x->u + d;
    x->gv = x->v + d;
    x->w_r = x->gv + d;
    x->col_c = x->w_r + d * d;
    x->g_done = (unsigned char *)(x->col_c + len);
    x->lazy = (double)len * d * d + (double)len * len * d / 2 > (double)FULL_MACS;
    x->ns = len < STATS_ROWS ? len : STATS_ROWS;
    /* progress in products, a normal draw counted as NORMAL_COST of them */
    double draws = (2.0 * len * d + (double)d * d) * NORMAL_COST;
    double work = x->lazy ? draws + (double)x->ns * d * d + (double)x->ns * len * d / 2
                          : draws + (double)len * d * d + (double)len * len * d / 2,
           done = 0;
    /* pe_xl_terms' order: q, k, u, v, W_R */
    pe_rng rng;
    pe_rng_seed(&rng, p->seed);
    for (size_t i = 0; i < 2 * len * d; i++) { /* q then k: the two are adjacent */
        x->q[i] = pe_rng_normal(&rng);
        if ((i & 0x3ffff) == 0x3ffff && pe_work((double)i * NORMAL_COST / work)) {
            app_cache_put(c, 0, "", 0, 0);
            pe_work_cancelled(err, errlen);
            return NULL;
        }
    }
    for (size_t a = 0; a < d; a++) x->u[a] = pe_rng_normal(&rng);
    for (size_t a = 0; a < d; a++) x->v[a] = pe_rng_normal(&rng);
    double wstd = 1.0 / sqrt((double)d), scale = 1.0 / sqrt((double)d);
    for (size_t a = 0; a < d * d; a++) {
        x->w_r[a] = wstd * pe_rng_normal(&rng);
        if ((a & 0x3ffff) == 0x3ffff && pe_work((2.0 * len * d + (double)a) * NORMAL_COST / work)) {
            app_cache_put(c, 0, "", 0, 0);
            pe_work_cancelled(err, errlen);
            return NULL;
        }
    }
    pe_xl_project(x->w_r, x->v, 1, d, x->gv);
    done = draws;
    /* W_R^T q_i, L d^2 products (minutes at L 4096, d 4096): four rows by PROJECT_MACS / (4 d)
     * columns between reports (a few ms), so a cancel is taken at once even at d 4096 */
    size_t cols = PROJECT_MACS / (4 * d);
    cols = cols < 8 ? 8 : cols - cols % 8;
    if (x->lazy) { /* the statistics' rows now, the others when a frame needs them */
        size_t *sr = calloc(x->ns, sizeof *sr);
        int rc = sr ? 0 : -1;
        for (size_t s = 0; sr && s < x->ns; s++) sr[s] = app_grid_pos(s, x->ns, len);
        if (rc == 0) rc = xl_need_g(x, d, sr, x->ns, done, work);
        free(sr);
        if (rc < 0) {
            app_cache_put(c, 0, "", 0, 0);
            pe_work_cancelled(err, errlen);
            return NULL;
        }
        done += (double)x->ns * d * d;
    }
    for (size_t i0 = 0; !x->lazy && i0 < len; i0 += 4) {
        size_t ni = len - i0 < 4 ? len - i0 : 4;
        for (size_t c0 = 0; c0 < d; c0 += cols) {
            if (pe_work(done / work)) {
                app_cache_put(c, 0, "", 0, 0);
                pe_work_cancelled(err, errlen);
                return NULL;
            }
            size_t c1 = d - c0 < cols ? d : c0 + cols;
            pe_xl_project_cols(x->w_r, x->q + i0 * d, ni, d, c0, c1, x->g + i0 * d);
            done += (double)ni * d * (double)(c1 - c0);
        }
        memset(x->g_done + i0, 1, ni);
    }

    /* (c): key j's value fills the L - j cells of column j */
    for (size_t j = 0; j < len; j++) {
        x->col_c[j] = dot_seq(x->u, x->k + j * d, d) * scale;
        double v = (float)x->col_c[j];
        x->ss_c += (double)(len - j) * v * v;
        x->max_c = fmax(x->max_c, fabs(v));
    }
    /* samples per row for (b): STATS_CELLS cells, and no more than STATS_MACS products in all
     * (at d 4096 the cells' dot products, not their count, are the cost of a base change) */
    size_t m = STATS_CELLS / len, mm = STATS_MACS / (len * d);
    if (mm < m) m = mm;
    x->m = m < 1 ? 1 : m > len ? len : m;

    if (x->lazy) { /* (a) over every cell of the statistics' rows, each standing for its share */
        for (size_t s = 0; s < x->ns; s++) {
            size_t i = app_grid_pos(s, x->ns, len);
            if (pe_work(done / work)) {
                app_cache_put(c, 0, "", 0, 0);
                pe_work_cancelled(err, errlen);
                return NULL;
            }
            done += (double)(i + 1) * d;
            double ss = 0;
            for (size_t j = 0; j <= i; j++) {
                double v = (float)(dot8(x->q + i * d, x->k + j * d, d) * scale);
                ss += v * v;
                x->max_a = fmax(x->max_a, fabs(v));
            }
            x->ss_a += ss * (double)len / (double)x->ns;
        }
        return x;
    }
    /* (a) over every cell, as pe_xl_terms computes it, four query rows at a time */
    double *kt = malloc((d * len + 4 * len) * sizeof *kt);
    if (!kt) {
        app_cache_put(c, 0, "", 0, 0);
        snprintf(err, errlen, "--len %d x --dim %d: out of memory", p->len, p->dim);
        return NULL;
    }
    double *rows = kt + d * len;
    for (size_t j = 0; j < len; j++)
        for (size_t a = 0; a < d; a++) kt[a * len + j] = x->k[j * d + a];
    for (size_t i0 = 0; i0 < len; i0 += 4) {
        size_t ni = len - i0 < 4 ? len - i0 : 4;
        if (pe_work(done / work)) {
            free(kt);
            app_cache_put(c, 0, "", 0, 0);
            pe_work_cancelled(err, errlen);
            return NULL;
        }
        done += (double)ni * (double)(i0 + 1) * d;
        pe_xl_dots_lower(x->q, kt, len, d, i0, ni, rows);
        for (size_t r = 0; r < ni; r++)
            for (size_t j = 0; j <= i0 + r; j++) {
                double v = (float)(rows[r * len + j] * scale);
                x->ss_a += v * v;
                x->max_a = fmax(x->max_a, fabs(v));
            }
    }
    free(kt);
    return x;
}

/* What the base changes: R_r for r = 0..L-1, term (d) by distance, the statistics of (b), (d). */
typedef struct xl_rel {
    double ss_b, max_b, ss_d, max_d;
    double *r;  /* (L, d) */
    double *dv; /* (L): (W_R^T v).R_r / sqrt(d) */
} xl_rel;

/* Sparse: the statistics of (b) as those of (a) (xl_sparse_draws), at the distances i_s - i_t,
 * and of (d) at SPARSE_DISTS distances r spread over 0..L-1, each for its L - r cells and its
 * share of the distances; no table of R or (d) (the grid computes them where it draws). */
static const xl_rel *xl_sparse_rel(app_view_ctx *c, const pe_params *p, const xl_draws *x,
                                   const xl_key *key, char *err, size_t errlen)
{
    size_t len = (size_t)p->len, d = (size_t)p->dim, ns = x->ns;
    xl_rel *t = app_cache_put(c, 1, key, sizeof *key, sizeof *t);
    double *w = malloc((d / 2 + d) * sizeof *w);
    if (!t || !w) {
        if (t) app_cache_put(c, 1, "", 0, 0);
        free(w);
        snprintf(err, errlen, "--dim %d: %s", p->dim, app_cache_error());
        return NULL;
    }
    double *r = w + d / 2, scale = 1.0 / sqrt((double)d), share = (double)len / (double)ns;
    pair_freqs(p, w);
    for (size_t s = 0; s < ns; s++) {
        size_t i = app_grid_pos(s, ns, len);
        double ss = 0;
        for (size_t u = 0; u <= s; u++) {
            r_at(w, d, i - app_grid_pos(u, ns, len), r);
            double v = (float)(dot8(x->sg + s * d, r, d) * scale);
            ss += v * v;
            t->max_b = fmax(t->max_b, fabs(v));
        }
        t->ss_b += ss * (double)(i + 1) / (double)(s + 1) * share;
    }
    size_t nd = len < SPARSE_DISTS ? len : SPARSE_DISTS;
    for (size_t k = 0; k < nd; k++) {
        if ((k & 255) == 255 && pe_work(-1)) {
            free(w);
            app_cache_put(c, 1, "", 0, 0);
            pe_work_cancelled(err, errlen);
            return NULL;
        }
        size_t rr = app_grid_pos(k, nd, len);
        r_at(w, d, rr, r);
        double v = (float)(dot8(x->gv, r, d) * scale);
        t->ss_d += (double)(len - rr) * v * v * (double)len / (double)nd;
        t->max_d = fmax(t->max_d, fabs(v));
    }
    free(w);
    return t;
}

static const xl_rel *xl_get_rel(app_view_ctx *c, const pe_params *p, const xl_draws *x, char *err,
                                size_t errlen)
{
    xl_key key = make_key(p, p->base, 0);
    xl_rel *t = app_cache_get(c, 1, &key, sizeof key);
    if (t) return t;
    if (x->sparse) return xl_sparse_rel(c, p, x, &key, err, errlen);
    size_t len = (size_t)p->len, d = (size_t)p->dim, half = d / 2;
    t = app_cache_reuse(c, 1, &key, sizeof key, sizeof *t + (len * d + len) * sizeof(double));
    if (t) memset(t, 0, sizeof *t); /* the sums; R and (d) are overwritten below */
    double *w = malloc(3 * half * sizeof *w);
    if (!t || !w) {
        if (t) app_cache_put(c, 1, "", 0, 0);
        free(w);
        snprintf(err, errlen, "--len %d x --dim %d: %s", p->len, p->dim, app_cache_error());
        return NULL;
    }
    t->r = (double *)(t + 1);
    t->dv = t->r + len * d;
    double *cw = w + half, *sw = cw + half, scale = 1.0 / sqrt((double)d);
    for (size_t k = 0; k < half; k++) {
        w[k] = pow(p->base, -2.0 * (double)k / (double)p->dim); /* as pe_xl_r */
        cw[k] = cos(w[k]);
        sw[k] = sin(w[k]);
    }
    for (size_t r = 0; r < len; r++) {
        double *row = t->r + r * d;
        if (r % ANCHOR == 0) {
            for (size_t k = 0; k < half; k++) {
                row[k] = sin((double)r * w[k]);
                row[half + k] = cos((double)r * w[k]);
            }
        } else {
            const double *prev = row - d;
            for (size_t k = 0; k < half; k++) {
                double s = prev[k], co = prev[half + k];
                row[k] = s * cw[k] + co * sw[k];
                row[half + k] = co * cw[k] - s * sw[k];
            }
        }
        /* (d): distance r's value fills the L - r cells of its diagonal */
        t->dv[r] = dot8(x->gv, row, d) * scale;
        double v = (float)t->dv[r];
        t->ss_d += (double)(len - r) * v * v;
        t->max_d = fmax(t->max_d, fabs(v));
    }
    free(w);
    /* every rs-th row when even one sample per row would pass STATS_MACS (L d > STATS_MACS) */
    size_t rs = (len * d + STATS_MACS - 1) / STATS_MACS;
    if (x->lazy) rs = 1; /* the statistics' rows only (below) */
    for (size_t k = 0, i = 0; x->lazy ? k < x->ns : i < len; k++, i += rs) {
        if (x->lazy) i = app_grid_pos(k, x->ns, len);
        if (k % 64 == 0 && pe_work((double)i / (double)len)) {
            app_cache_put(c, 1, "", 0, 0);
            pe_work_cancelled(err, errlen);
            return NULL;
        }
        size_t mi = row_samples(i, x->m);
        double ss = 0;
        for (size_t s = 0; s < mi; s++) {
            double v = (float)(dot8(x->g + i * d, t->r + row_sample(i, mi, s) * d, d) * scale);
            ss += v * v;
            t->max_b = fmax(t->max_b, fabs(v));
        }
        /* row i stands for itself and the rows up to the next one sampled */
        double nrows =
            x->lazy ? (double)len / (double)x->ns : (double)(i + rs <= len ? rs : len - i);
        t->ss_b += ss * (double)(i + 1) / (double)mi * nrows;
    }
    return t;
}

/* Sparse: the grid's rows drawn alone (q and k, or W_R^T q) and R_r at the drawn distances:
 * pos(i) - pos(j) takes at most two values for each i - j (app_grid_pos rounds down), so R is
 * kept in two slots per i - j and computed once for each distance drawn. out as xl_get_grid's;
 * -1 (out of memory or cancelled). */
static int xl_sparse_grid(const pe_params *p, const xl_draws *x, int position, size_t n, float *out)
{
    size_t len = (size_t)p->len, d = (size_t)p->dim;
    double scale = 1.0 / sqrt((double)d);
    size_t *pos = malloc(n * sizeof *pos + (position ? 2 * n * sizeof(size_t) : 0));
    /* q (then W_R^T q) and k, or W_R^T q and the two R slots per i - j */
    double *a = malloc((position ? 3 * n * d + d / 2 : 2 * n * d) * sizeof *a);
    int rc = pos && a ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < n; i++) pos[i] = app_grid_pos(i, n, len);
    double *b = a ? a + n * d : NULL;
    if (rc == 0) rc = draw_rows(p, 0, pos, n, position ? b : a);
    if (rc == 0) rc = position ? project_rows(x->w_r, b, n, d, a) : draw_rows(p, 1, pos, n, b);
    size_t *dist = position && pos ? pos + n : NULL; /* the distance held by each R slot */
    double *w = position && a ? a + 3 * n * d : NULL;
    if (rc == 0 && position) {
        pair_freqs(p, w);
        for (size_t k = 0; k < 2 * n; k++) dist[k] = SIZE_MAX;
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (pe_work((double)i * i / ((double)n * n))) rc = -1;
        for (size_t j = 0; rc == 0 && j < n; j++) {
            float v0 = -INFINITY, v1 = -INFINITY;
            if (j <= i && !position) {
                v0 = (float)(dot8(a + i * d, b + j * d, d) * scale);
                v1 = (float)(dot_seq(x->u, b + j * d, d) * scale);
            } else if (j <= i) {
                size_t r = pos[i] - pos[j], slot = 2 * (i - j);
                if (dist[slot] != r) slot++;
                if (dist[slot] != r) { /* a new distance: the slot taken first, else the other */
                    slot = dist[slot - 1] == SIZE_MAX ? slot - 1 : slot;
                    dist[slot] = r;
                    r_at(w, d, r, b + slot * d);
                }
                v0 = (float)(dot8(a + i * d, b + slot * d, d) * scale);
                v1 = (float)(dot8(x->gv, b + slot * d, d) * scale);
            }
            out[i * n + j] = v0;
            out[n * n + i * n + j] = v1;
        }
    }
    free(pos);
    free(a);
    return rc;
}

/* The drawn terms at an n x n sample of positions (app_grid_pos), -inf where masked: (a) and (c)
 * in one cache slot, (b) and (d), which the base changes, in another. */
static const float *xl_get_grid(app_view_ctx *c, int position, const pe_params *p, xl_draws *x,
                                const xl_rel *rel, size_t n, char *err, size_t errlen)
{
    xl_key key = make_key(p, position ? p->base : 0, n);
    int slot = 2 + position;
    float *out = app_cache_get(c, slot, &key, sizeof key);
    if (out) return out;
    out = app_cache_put(c, slot, &key, sizeof key, 2 * n * n * sizeof *out);
    if (!out) {
        snprintf(err, errlen, "%s", app_cache_error());
        return NULL;
    }
    size_t len = (size_t)p->len, d = (size_t)p->dim;
    double scale = 1.0 / sqrt((double)d);
    if (x->sparse) {
        if (xl_sparse_grid(p, x, position, n, out) == 0) return out;
        app_cache_put(c, slot, "", 0, 0);
        pe_work_cancelled(err, errlen);
        return NULL;
    }
    if (position && x->lazy) { /* W_R^T q of the drawn rows */
        size_t *pr = calloc(n, sizeof *pr);
        int rc = pr ? 0 : -1;
        for (size_t i = 0; pr && i < n; i++) pr[i] = app_grid_pos(i, n, len);
        if (rc == 0) rc = xl_need_g(x, d, pr, n, 0, (double)n * d * d);
        free(pr);
        if (rc < 0) {
            app_cache_put(c, slot, "", 0, 0);
            pe_work_cancelled(err, errlen);
            return NULL;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (pe_work((double)i * i / ((double)n * n))) {
            app_cache_put(c, slot, "", 0, 0);
            pe_work_cancelled(err, errlen);
            return NULL;
        }
        size_t pi = app_grid_pos(i, n, len);
        for (size_t j = 0; j < n; j++) {
            float v0 = -INFINITY, v1 = -INFINITY;
            if (j <= i) {
                size_t pj = app_grid_pos(j, n, len), r = pi - pj;
                if (position) {
                    v0 = (float)(dot8(x->g + pi * d, rel->r + r * d, d) * scale);
                    v1 = (float)rel->dv[r];
                } else {
                    v0 = (float)(dot8(x->q + pi * d, x->k + pj * d, d) * scale);
                    v1 = (float)x->col_c[pj];
                }
            }
            out[i * n + j] = v0;
            out[n * n + i * n + j] = v1;
        }
    }
    return out;
}

/* The four terms at query i, key j <= i, summed as pe_xl_terms sums them (the same floats). */
static int xl_cell(const pe_params *p, xl_draws *x, int i, int j, double *r, float v[4])
{
    size_t d = (size_t)p->dim, row = (size_t)i;
    if (x->sparse) { /* q_i, k_j and W_R^T q_i drawn for the cell alone */
        double *q = malloc(3 * d * sizeof *q);
        size_t pi = (size_t)i, pj = (size_t)j;
        int rc = q ? 0 : -1;
        if (rc == 0) rc = draw_rows(p, 0, &pi, 1, q);
        if (rc == 0) rc = draw_rows(p, 1, &pj, 1, q + d);
        if (rc == 0) pe_xl_project(x->w_r, q, 1, d, q + 2 * d);
        if (rc == 0) {
            double scale = 1.0 / sqrt((double)d);
            pe_xl_r(p, (double)(i - j), r);
            v[0] = (float)(dot_seq(q, q + d, d) * scale);
            v[1] = (float)(dot_seq(q + 2 * d, r, d) * scale);
            v[2] = (float)(dot_seq(x->u, q + d, d) * scale);
            v[3] = (float)(dot_seq(x->gv, r, d) * scale);
        }
        free(q);
        return rc;
    }
    if (xl_need_g(x, d, &row, 1, 0, (double)d * d) < 0) return -1;
    double scale = 1.0 / sqrt((double)d);
    const double *q = x->q + (size_t)i * d, *k = x->k + (size_t)j * d, *g = x->g + (size_t)i * d;
    pe_xl_r(p, (double)(i - j), r);
    v[0] = (float)(dot_seq(q, k, d) * scale);
    v[1] = (float)(dot_seq(g, r, d) * scale);
    v[2] = (float)(dot_seq(x->u, k, d) * scale);
    v[3] = (float)(dot_seq(x->gv, r, d) * scale);
    return 0;
}

static int xlv_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                     char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    const pe_params *p = &st->p;
    xl_draws *x = xl_get_draws(c, p, err, errlen);
    const xl_rel *rel = x ? xl_get_rel(c, p, x, err, errlen) : NULL;
    if (!rel) return -1;
    int L = p->len;
    double cnt = (double)L * (double)(L + 1) / 2; /* the unmasked cells */
    float amax = (float)fmax(fmax(x->max_a, rel->max_b), fmax(x->max_c, rel->max_d));
    float rms[4] = {(float)sqrt(x->ss_a / cnt), (float)sqrt(rel->ss_b / cnt),
                    (float)sqrt(x->ss_c / cnt), (float)sqrt(rel->ss_d / cnt)};
    double vmin, vmax;
    /* one range for the four; a few large content products would wash the others out, so the
     * colours stop at 3x the largest rms (values beyond take the end colours) */
    double big = fmax(fmax(rms[0], rms[1]), fmax(rms[2], rms[3]));
    double lim = big > 0 ? fmin(amax, 3 * big) : amax;
    const cmap *map = app_pick_map(st, -lim, lim, &vmin, &vmax);

    char title[160], sub[256];
    snprintf(title, sizeof title,
             "Transformer-XL score = (a) + (b) + (c) + (d), each / \xe2\x88\x9a"
             "d");
    app_subtitle(st, sub, sizeof sub);
    size_t u = strlen(sub);
    char r4[4][48], lm[48], am[48];
    for (int i = 0; i < 4; i++) fig_num(rms[i], 2, r4[i], sizeof r4[i]);
    fig_num(lim, 2, lm, sizeof lm);
    fig_num(amax, 2, am, sizeof am);
    u += (size_t)snprintf(sub + u, sizeof sub - u,
                          " (random q,k,u,v,W_R)  rows query i, columns key j  rms a/b/c/d "
                          "%s%s/%s%s/%s%s/%s%s",
                          x->lazy ? "\xe2\x89\x88" : "", r4[0], x->lazy ? "\xe2\x89\x88" : "",
                          r4[1], x->sparse ? "\xe2\x89\x88" : "", r4[2],
                          x->sparse ? "\xe2\x89\x88" : "", r4[3]);
    /* "~": (a) and (b) estimated from the statistics' rows (FULL_MACS), the largest |value| too;
     * sparse, (c) and (d) too (SPARSE_BYTES) */
    if (lim < amax && u < sizeof sub)
        snprintf(sub + u, sizeof sub - u, "  colours clipped at " APP_PLUSMINUS "%s (max %s%s)", lm,
                 x->lazy ? "\xe2\x89\x88" : "", am);
    fig_rect r = app_frame(s, t, th, title, sub);
    fig_rect bar = fig_take_right(&r, fig_colorbar_width(t), t->char_w * 2);
    /* The four panels' arrangement from the figure's shape (fig_grid_pick, as every
     * multi-panel view): 2 x 2 at the default size, one row of four in a short wide figure (a
     * projector zoom, a paper column, where 2 x 2 made 4:1 strips), one column in a tall one;
     * the matrices square, under their titles (at the narrowest the letter over the formula,
     * at 0.6, so no cell narrower than that is asked for). Short panels share their axes: the
     * four matrices have the same extent, so tick labels go only under the bottom row (the
     * subtitle says rows are query i, columns key j) and the matrices keep the room repeated
     * labels would take. */
    double gap = t->cells ? 3 : t->text_h * 0.8;
    double min_w = 0;
    for (int i = 0; i < 4 && !t->cells; i++)
        min_w = fmax(min_w, fmax(scene_text_width(t, term_letter[i], 0.6),
                                 scene_text_width(t, term_formula[i], 0.6)));
    min_w += t->char_w;
    double xband = t->cells ? 2 : t->text_h * 1.6;
    int grows = 2, gcols = 2, shared = 0;
    {
        /* each panel with its ticks, or the axes shared when that draws the matrices at least
         * a quarter larger */
        int rows1, cols1;
        double own, bare;
        gcols = fig_grid_pick(r, 4, 1.0, t->cells ? 6 : t->text_h * 2.2 + xband,
                              t->cells ? 6 : t->text_h * 2.2, gap, min_w, &grows, &own);
        fig_rect rr = r;
        rr.h -= xband; /* the bottom row's ticks */
        cols1 =
            fig_grid_pick(rr, 4, 1.0, t->text_h * 1.4, 0, t->text_h * 0.4, min_w, &rows1, &bare);
        if (!t->cells && bare > 1.25 * own) {
            shared = 1;
            gap = t->text_h * 0.4;
            gcols = cols1;
            grows = rows1;
        }
    }
    /* one sampling for the four panels, at the size of the first */
    fig_rect c0 = fig_grid_cell(r, grows, gcols, 0, 0, gap);
    size_t n = (size_t)fmin(L, ceil(fmax(1, fmin(c0.w, c0.h))));
    size_t nmax = (size_t)sqrt(2.0 * (double)GRID_MACS / p->dim);
    if (n > nmax) n = nmax < 16 ? 16 : nmax;
    const float *content = xl_get_grid(c, 0, p, x, rel, n, err, errlen);
    const float *position = content ? xl_get_grid(c, 1, p, x, rel, n, err, errlen) : NULL;
    if (!position) return -1;
    const float *smp[4] = {content, position, content + n * n, position + n * n};
    fig_axes ax[4];
    /* one title form and size for the four: the largest at which each fits its panel, on one
     * line down to 0.75, else on two (name, formula), else the letter over the formula, down
     * to 0.6 */
    const char *const *line1[3] = {term_title, term_name, term_letter};
    double ts = 1;
    int form = 0;
    for (form = 0; form < 3 && !t->cells; form++) {
        double room = c0.w - t->char_w, floor_ts = form ? 0.6 : 0.75;
        for (ts = 0.9; ts > floor_ts - 1e-9; ts -= 0.05) {
            double w = 0;
            for (int i = 0; i < 4; i++)
                w = fmax(w, fmax(scene_text_width(t, line1[form][i], ts),
                                 form ? scene_text_width(t, term_formula[i], ts) : 0));
            if (w <= room) break;
        }
        if (ts > floor_ts - 1e-9) break;
    }
    if (form == 3) form = 2, ts = 0.6;
    if (t->cells) form = 0;
    double lh = t->cells ? 2 : t->text_h * ts * 1.1 * (form ? 2 : 1) + t->text_h * 0.2;
    /* the cells and their square plot areas first, one side for the four (the smallest any
     * cell allows), then the block centred down the room it leaves */
    fig_rect outer[4];
    unsigned aflags[4];
    double side = 0;
    for (int i = 0; i < 4; i++) {
        int row = i / gcols;
        fig_rect cell = fig_grid_cell(r, grows, gcols, row, i % gcols, gap);
        if (t->cells) {
            cell.h -= 2 * ceil(cell.y / 2) - cell.y;
            cell.y = 2 * ceil(cell.y / 2);
        }
        cell.y += lh;
        cell.h -= lh;
        aflags[i] = FIG_Y_DOWN;
        if (shared) aflags[i] |= (row == grows - 1 ? 0 : FIG_NO_XTICKS) | FIG_NO_YTICKS;
        fig_rect a;
        outer[i] = cell;
        fig_axes_outer_for(t, th, cell, 0, L, 0, L, NULL, NULL, aflags[i], 1.0, 0, &a);
        side = i == 0 || a.w < side ? a.w : side;
    }
    /* the title sits just over the plot area (clear of the top tick label beside it) */
    double above = t->cells ? 0 : t->text_h * (shared ? 0.15 : 0.45);
    fig_rect area[4];
    for (int i = 0; i < 4; i++)
        outer[i] = fig_axes_outer_for(t, th, outer[i], 0, L, 0, L, NULL, NULL, aflags[i], 1.0, side,
                                      &area[i]);
    /* the rows of the block, each as high as its title, plot and ticks, centred down the room */
    double row_top = area[0].y - outer[0].y, row_h = lh + above + outer[0].h - row_top + gap;
    double block = (grows - 1) * row_h + lh + above + outer[3].h - (area[3].y - outer[3].y);
    double down = t->cells ? 0 : fmax(0, (r.h - block) / 2);
    for (int i = 0; i < 4; i++) {
        int row = i / gcols, col = i % gcols;
        fig_rect cell = fig_grid_cell(r, grows, gcols, row, col, gap);
        fig_rect o = outer[i];
        double ty = o.y - lh;
        if (!t->cells) {
            o.y = r.y + down + row * row_h + lh + above - (area[i].y - outer[i].y);
            /* under the panel above (the bottom row's ticks may centre it a little apart) */
            o.x = area[col].x - (area[i].x - outer[i].x);
            ty = o.y + (area[i].y - outer[i].y) - above - lh;
        }
        double tx = cell.x + cell.w / 2;
        /* a cell target wants text at a whole cell (integer x, even y) */
        if (t->cells) {
            tx = fmax(cell.x, floor(tx - scene_text_width(t, term_title[i], 1) / 2));
            ty = 2 * ceil(ty / 2);
        }
        if (form) {
            scene_text(s, tx, ty, line1[form][i], ts, SCENE_CENTER | SCENE_TOP, th->fg, 0);
            scene_text(s, tx, ty + t->text_h * ts * 1.05, term_formula[i], ts,
                       SCENE_CENTER | SCENE_TOP, th->fg, 0);
        } else {
            scene_text(s, tx, ty, term_title[i], ts,
                       (t->cells ? SCENE_LEFT : SCENE_CENTER) | SCENE_TOP, th->fg, 0);
        }
        s->text_h = t->text_h;
        ax[i] = fig_axes_draw(s, t, th, o, 0, L, 0, L, NULL, NULL, aflags[i]);
        scene_heatmap(s, ax[i].area.x, ax[i].area.y, ax[i].area.w, ax[i].area.h, smp[i], n, n, n,
                      vmin, vmax, map, th->mask);
    }
    bar.y = ax[0].area.y;
    /* one row of short matrices: the bar runs up beside their titles too, so it has ticks */
    if (grows == 1 && !t->cells) bar.y -= lh + above;
    bar.h = ax[3].area.y + ax[3].area.h - bar.y;
    fig_colorbar(s, t, th, bar, vmin, vmax, map, "term value");

    c->main = ax[0];
    /* the four terms together are the figure (its title is their sum) */
    fig_rect all = {ax[0].area.x, ax[0].area.y,
                    fmax(ax[1].area.x + ax[1].area.w, ax[3].area.x + ax[3].area.w) - ax[0].area.x,
                    fmax(ax[2].area.y + ax[2].area.h, ax[3].area.y + ax[3].area.h) - ax[0].area.y};
    fig_mark_main(s, all, "four terms");
    c->has_main = 1;
    c->main_rows = c->main_cols = L;
    if (st->cursor_on) {
        int i = st->cur_r < L ? (st->cur_r < 0 ? 0 : st->cur_r) : L - 1;
        int j = st->cur_c < L ? (st->cur_c < 0 ? 0 : st->cur_c) : L - 1;
        for (int k = 0; k < 4; k++) app_draw_cell_cursor(s, t, th, &ax[k], i, j);
        if (j > i) {
            snprintf(c->readout, sizeof c->readout, "i %d  j %d  masked (j > i: the future)", i, j);
        } else {
            double *rbuf = malloc((size_t)p->dim * sizeof *rbuf);
            if (!rbuf) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            float v[4] = {0, 0, 0, 0};
            int rc = xl_cell(p, x, i, j, rbuf, v);
            free(rbuf);
            if (rc < 0) {
                pe_work_cancelled(err, errlen);
                return -1;
            }
            snprintf(c->readout, sizeof c->readout,
                     "i %d  j %d  i-j %d  (a) %+.4f  (b) %+.4f  (c) %+.4f  (d) %+.4f  sum %+.4f", i,
                     j, i - j, v[0], v[1], v[2], v[3], (double)v[0] + v[1] + v[2] + v[3]);
        }
    }
    return 0;
}

static int xlv_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    pe_matrix terms[4] = {{0}};
    size_t L = (size_t)st->p.len, LL = L * L;
    /* the data's size against the memory budget first (issue 25: at a 10M context the refusal
     * names the sizes and --max-memory), before the terms are drawn */
    char what[128];
    snprintf(what, sizeof what, "the data (4 x %zu x %zu values)", L, L);
    if (pe_mem_reserve(4 * LL * sizeof(float), what, err, errlen) != PE_OK) return -1;
    pe_mem_release(4 * LL * sizeof(float));
    if (pe_xl_terms(&st->p, terms, err, errlen) < 0) return -1;
    if (app_data_alloc(out, 3, 4, L, L, err, errlen) < 0) {
        for (int k = 0; k < 4; k++) pe_matrix_free(&terms[k]);
        return -1;
    }
    for (int k = 0; k < 4; k++) {
        for (size_t i = 0; i < LL; i++) out->data[(size_t)k * LL + i] = terms[k].data[i];
        pe_matrix_free(&terms[k]);
    }
    snprintf(out->what, sizeof out->what,
             "(4, len, len): Transformer-XL terms [content q.k, content-position q.W_R R(i-j), "
             "global content u.k, global position v.W_R R(i-j)] / sqrt(d), query i, key j; -inf "
             "where masked");
    return 0;
}

const app_view app_view_xl = {
    .name = "xl",
    .description =
        "Transformer-XL's four score terms (content, content-position, global) as heatmaps",
    .validate = xlv_validate,
    .build = xlv_build,
    .data = xlv_data,
    .options = "dim len base seed cmap",
};
