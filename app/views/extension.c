/* extension.c: the RoPE score against distance r = 0 .. T for every context-extension method at
 * once (none, linear, NTK, dynamic NTK, YaRN, llama3), each with st->p.scaling's factor, L0 and
 * knobs but its own type. Two measures, chosen with the view's own --measure:
 *   bound (the default)  RoFormer's long-term decay bound B(r) / B(0), section 3.4.3;
 *   score                <R_r 1, R_0 1> / <1, 1>: the score of all-ones q and k;
 *   both                 the two, the score solid and the bound dashed.
 * (It read the rope and rope-bound bits of the decay view's --curves before, so the status line
 * listed decay's curves here: issue 27.) Both measures are divided
 * by their value at r = 0, which also removes YaRN's attention factor. The x axis is log-scaled:
 * linear interpolation then shows as the original curve shifted right by log f, and the methods
 * that keep the fast pairs (YaRN, llama3) agree with the original at short range. The original
 * context L0 is marked. Dynamic NTK is evaluated at --seq-len when given, else at seq_len = T. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "rope_ext.h"
#include "views.h"

static int ext_validate(const app_state *st, char *err, size_t errlen)
{
    int ms[APP_EXT_METHODS];
    unsigned mask;
    app_ext_methods(st, ms, &mask);
    return app_ext_validate(st, mask, err, errlen);
}

/* Which measures to draw: bit 0 the all-ones score, bit 1 the bound (--measure). */
static unsigned ext_kinds(const app_state *st)
{
    return st->extension.measure == APP_MEASURE_SCORE  ? 1u
           : st->extension.measure == APP_MEASURE_BOTH ? 3u
                                                       : 2u;
}

static const char *const kind_label[2] = {"q=k=1 score", "bound B(r)/B(0)"};

/* Each sample stands for the distances of its bin on the log axis (from the geometric midpoint
 * with the previous sample to the one with the next, and at least r +- WINDOW r) and is the mean
 * of the measure over at most BIN_POINTS evenly spaced whole distances of it (fewer for wide
 * heads: a method costs at most BIN_BUDGET pair evaluations). Both measures oscillate with the
 * fast pairs faster than the samples are spaced at long range; the mean draws what they average
 * to instead of an aliased scribble. The first samples are single distances, so they are exact. */
#define BIN_POINTS 32
#define BIN_BUDGET 1e6
#define WINDOW     0.05

static void bin_bounds(const double *r, int n, int i, double *a, double *b)
{
    *a = i == 0 ? r[0] : ceil(sqrt(fmax(r[i - 1], 0.5) * r[i]));
    *b = i == n - 1 ? r[i] : ceil(sqrt(fmax(r[i], 0.5) * r[i + 1])) - 1;
    *a = fmin(*a, ceil(r[i] / (1 + WINDOW)));
    *b = fmax(*b, floor(r[i] * (1 + WINDOW)));
    if (*a > r[i]) *a = r[i];
    if (*b < r[i]) *b = r[i];
}

/* Both measures of every method at the sample distances. */
typedef struct ext_result {
    int n;
    int nm, ms[APP_EXT_METHODS]; /* the methods drawn (app_ext_methods), rows in that order */
    double r[APP_EXT_SAMPLES];
    double y[2][APP_EXT_METHODS][APP_EXT_SAMPLES]; /* [0] all-ones score, [1] bound; / at r=0 */
} ext_result;

/* Largest power of two in the table of rotations (distances stay below 2^31). */
#define POW2_BITS 31
/* The table holds e^{i v 16^d theta_k} for every hex digit v of a distance, so a rotation by r
 * is one product per nonzero hex digit of r (at most 4 below 65536) rather than one per set bit. */
#define HEX_DIGITS ((POW2_BITS + 3) / 4)
/* A bin's first distance is reached from the previous bin's by one rotation, and computed from
 * the table afresh every ANCHOR bins, so the rounding of the steps cannot pile up. */
#define ANCHOR 16

/* Rotations by pair, e^{i r theta_k} for k < np: re and im apart, so the loops over k
 * vectorise. */
typedef struct ext_rot {
    double *re, *im;
} ext_rot;

/* The rotation loops are built for AVX2 too where gcc can (the loader picks; not under its
 * ThreadSanitizer, which crashes on the ifunc resolvers): they are half of the view's time. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define EXT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define EXT_CLONES
#endif

/* out = a e, pair by pair (out may be a). */
EXT_CLONES static void mul(ext_rot out, ext_rot a, ext_rot e, int np)
{
    for (int k = 0; k < np; k++) {
        double x = a.re[k], y = a.im[k];
        out.re[k] = x * e.re[k] - y * e.im[k];
        out.im[k] = x * e.im[k] + y * e.re[k];
    }
}

/* z *= e, pair by pair. */
static void rotate(ext_rot z, ext_rot e, int np)
{
    mul(z, z, e, np);
}

/* out = e^{i r theta_k} for 0 <= r < 16^digits, from e16[15 d + v - 1] = e^{i v 16^d theta_k}:
 * one product per nonzero hex digit of r after the first (no sine of a large argument, whose own
 * rounding would be larger). */
static void rotation(const ext_rot *e16, int digits, int np, long r, ext_rot out)
{
    int first = 1;
    ext_rot held = {NULL, NULL}; /* the first nonzero digit's, multiplied by the second's */
    for (int d = 0; d < digits && r >> (4 * d); d++) {
        int v = (int)((r >> (4 * d)) & 15);
        if (!v) continue;
        ext_rot e = e16[15 * d + v - 1];
        if (first) {
            held = e;
        } else if (held.re) { /* out = first x second in one pass (was a copy, then a product:
                                 the copies were a fifth of the view's frame) */
            mul(out, held, e, np);
            held.re = NULL;
        } else {
            rotate(out, e, np);
        }
        first = 0;
    }
    if (held.re) { /* a single nonzero digit */
        memcpy(out.re, held.re, sizeof *out.re * (size_t)np);
        memcpy(out.im, held.im, sizeof *out.im * (size_t)np);
    }
    if (first)
        for (int k = 0; k < np; k++) {
            out.re[k] = 1;
            out.im[k] = 0;
        }
}

/* e^{i r theta_k} as rotation computes it, without its copy when r has a single nonzero hex
 * digit: then the table's own entry (the same values); else computed into out. For the steps
 * (w, dz), which are only read. */
static ext_rot rotation_ref(const ext_rot *e16, int digits, int np, long r, ext_rot out)
{
    int nz = 0, at = 0;
    for (int d = 0; d < digits && r >> (4 * d); d++)
        if ((r >> (4 * d)) & 15) {
            nz++;
            at = 15 * d + (int)((r >> (4 * d)) & 15) - 1;
        }
    if (nz == 1) return e16[at];
    rotation(e16, digits, np, r, out);
    return out;
}

/* Method m's two curves. With q = k = 1 every rotated pair contributes 2 attn^2 cos(r theta_k)
 * to <R_r q, R_0 k> and each of the d - rotary_dim other dimensions 1; the bound is
 * pe_rope_decay_bound's sum. Both come from z_k = e^{i r theta_k}: at a bin's first distance
 * from the previous bin's (or the table), then stepped through the bin by multiplying with
 * e^{i step theta_k}. The distances of consecutive bins fill PE_PREFIX_LANES lanes, whose
 * prefix sums over the pairs pe_rope_prefix_lanes takes side by side (the square roots are most
 * of the view's time); each distance is still summed over the pairs in order, and a bin's
 * distances in order (the tests check the result against pe_rope_score_curve and
 * pe_rope_decay_bound). */
static int ext_method(int m, int dim, const double *th, int np, double attn, ext_result *res,
                      char *err, size_t errlen)
{
    enum { LANES = PE_PREFIX_LANES };
    double per = BIN_BUDGET / ((double)res->n * np);
    int most = per >= BIN_POINTS ? BIN_POINTS : per >= 2 ? (int)per : 2;
    /* the bins' starts and steps stay below 2^bits (the target is the largest start) */
    int bits;
    frexp(res->r[res->n - 1], &bits);
    if (bits > POW2_BITS) bits = POW2_BITS;
    int digits = (bits + 3) / 4;
    /* rotations of np pairs: the table (15 per digit), the bin's start, step, the step from the
     * previous start and one per lane; re and tot of every distance */
    size_t nz = (size_t)np, nrot = 15 * (size_t)digits + 3 + LANES,
           nd = (size_t)res->n * (size_t)most;
    /* only the lanes are read before they are written (a last batch's stale lanes are summed
     * and dropped): they start at zero, the rest is written first (clearing all of it was a
     * tenth of the view's frame) */
    double *buf = malloc(sizeof *buf * (2 * nz * nrot + 2 * nd));
    ext_rot *rot = malloc(sizeof *rot * nrot);
    int *bin_cnt = malloc(sizeof *bin_cnt * (size_t)res->n);
    if (!buf || !rot || !bin_cnt) {
        free(buf);
        free(rot);
        free(bin_cnt);
        snprintf(err, errlen, "--dim %d: out of memory", dim);
        return -1;
    }
    for (size_t i = 0; i < nrot; i++) rot[i] = (ext_rot){buf + 2 * nz * i, buf + 2 * nz * i + nz};
    ext_rot *e16 = rot, z0_keep = rot[15 * digits], z0 = z0_keep, w_buf = rot[15 * digits + 1],
            dz_buf = rot[15 * digits + 2], w = w_buf, dz = dz_buf, *lane = rot + 15 * digits + 3;
    const double *lc[LANES], *ls[LANES];
    for (int l = 0; l < LANES; l++) {
        lc[l] = lane[l].re;
        ls[l] = lane[l].im;
    }
    memset(lane[0].re, 0, sizeof *buf * 2 * nz * LANES);
    double *re_d = buf + 2 * nz * nrot, *tot_d = re_d + nd;
    for (int d = 0; d < digits; d++) {
        ext_rot e1 = e16[15 * d];
        for (int k = 0; k < np; k++) {
            double a = ldexp(th[k], 4 * d); /* exact */
            e1.re[k] = cos(a);
            e1.im[k] = sin(a);
        }
        for (int v = 2; v <= 15; v++) /* e^{i v ...} = e^{i (v-1) ...} e1, in one pass */
            mul(e16[15 * d + v - 1], e16[15 * d + v - 2], e1, np);
    }
    double a2 = 2 * attn * attn, rest = dim - 2.0 * np;
    double ones0 = a2 * np + rest, b0 = pe_rope_decay_bound(th, np, 0);
    double w_step = -1, dz_step = -1, prev_lo = 0; /* the steps w and dz hold */
    size_t f = 0, done = 0;                        /* distances set into lanes, summed */
    for (int i = 0; i < res->n; i++) {
        double lo, hi;
        bin_bounds(res->r, res->n, i, &lo, &hi);
        int cnt = hi - lo + 1 <= most ? (int)(hi - lo + 1) : most;
        double step = cnt > 1 ? floor((hi - lo) / (cnt - 1)) : 0;
        if (cnt == 1) lo = res->r[i];
        bin_cnt[i] = cnt;
        /* z at the bin's distances lo + j step, each in the next lane; the first, e^{i lo
         * theta}, from the previous bin's first (the bins' starts only grow) */
        for (int j = 0; j < cnt; j++) {
            size_t l = f++ % LANES;
            ext_rot z = lane[l];
            if (j > 0) {
                mul(z, lane[(l + LANES - 1) % LANES], w, np);
            } else if (i % ANCHOR == 0 || lo < prev_lo) {
                rotation(e16, digits, np, (long)lo, z);
            } else if (lo > prev_lo) {
                if (lo - prev_lo != dz_step) {
                    dz = rotation_ref(e16, digits, np, (long)(lo - prev_lo), dz_buf);
                    dz_step = lo - prev_lo;
                }
                mul(z, z0, dz, np);
            } else if (z.re != z0.re) { /* (the same lane when the last bin had LANES) */
                memcpy(z.re, z0.re, sizeof *z.re * nz);
                memcpy(z.im, z0.im, sizeof *z.im * nz);
            }
            if (j == 0) {
                z0 = z;
                if (cnt > LANES) { /* its lane is taken again within the bin */
                    z0 = z0_keep;
                    memcpy(z0.re, z.re, sizeof *z.re * nz);
                    memcpy(z0.im, z.im, sizeof *z.im * nz);
                }
                prev_lo = lo;
                if (cnt > 1 && step != w_step) {
                    w = rotation_ref(e16, digits, np, (long)step, w_buf);
                    w_step = step;
                }
            }
            if (l == LANES - 1 || (i == res->n - 1 && j == cnt - 1)) {
                double re[LANES], im[LANES], tot[LANES];
                pe_rope_prefix_lanes(lc, ls, np, re, im, tot);
                for (size_t q = 0; done < f; q++, done++) {
                    re_d[done] = re[q];
                    tot_d[done] = tot[q];
                }
            }
        }
    }
    const double *rd = re_d, *td = tot_d;
    for (int i = 0; i < res->n; i++) {
        int cnt = bin_cnt[i];
        double sum_ones = 0, sum_b = 0;
        for (int j = 0; j < cnt; j++) {
            sum_ones += a2 * rd[j] + rest;
            sum_b += td[j] / np;
        }
        rd += cnt;
        td += cnt;
        res->y[0][m][i] = sum_ones / cnt / ones0;
        res->y[1][m][i] = b0 > 0 ? sum_b / cnt / b0 : 0;
    }
    free(bin_cnt);
    free(rot);
    free(buf);
    return 0;
}

/* One method's curves: what ext_method needs and what it returned. */
typedef struct {
    int m, dim;
    const double *th;
    int np;
    double attn;
    ext_result *res;
    int rc;
    char err[160];
} ext_job;

static void ext_run(ext_job *j)
{
    j->rc = ext_method(j->m, j->dim, j->th, j->np, j->attn, j->res, j->err, sizeof j->err);
}

typedef struct {
    ext_job *jobs;
    int nj;
} ext_half;

static void *ext_run_odd(void *arg)
{
    ext_half *h = arg;
    for (int j = 1; j < h->nj; j += 2) ext_run(&h->jobs[j]);
    return NULL;
}

/* The methods' curves are independent (each job writes only its own rows of res): when they
 * are large a second thread takes every other one, which halves the frame after a base change
 * on a machine with a free core (at d 4096 the six methods took 12.5-13.7 ms on one). Small
 * ones stay on the caller's thread, where a thread's start would cost more than it saves. */
static void ext_run_jobs(ext_job *jobs, int nj)
{
    enum { PARALLEL_PAIRS = 256 };
    int big = nj >= 2;
    for (int j = 0; j < nj; j++) big &= jobs[j].np >= PARALLEL_PAIRS;
    ext_half h = {jobs, nj};
    pthread_t th;
    int two = big && pthread_create(&th, NULL, ext_run_odd, &h) == 0;
    for (int j = 0; j < nj; j += two ? 2 : 1) ext_run(&jobs[j]);
    if (two) pthread_join(th, NULL);
}

/* Every curve, cached under the inputs they depend on (not the pairing: q = k = 1 scores the
 * same under both). NULL with err on failure. */
static const ext_result *ext_compute(app_view_ctx *c, const app_state *st, char *err, size_t errlen)
{
    struct {
        int dim;
        double base, rotary_frac, target;
        double sc[APP_EXT_KEY_FIELDS];
    } key;
    memset(&key, 0, sizeof key);
    key.dim = st->p.dim;
    key.base = st->p.base;
    key.rotary_frac = st->p.rotary_frac;
    key.target = app_ext_target(st);
    app_ext_scaling_key(&st->p.scaling, key.sc);
    key.sc[0] = 0; /* every method is drawn */
    ext_result *res = app_cache_get(c, 0, &key, sizeof key);
    if (res) return res;
    res = app_cache_put(c, 0, &key, sizeof key, sizeof *res);
    if (!res) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    res->n = app_ext_samples(key.target, APP_EXT_SAMPLES, res->r);
    res->nm = app_ext_methods(st, res->ms, NULL);
    /* a method whose frequencies and attention factor equal an earlier one's (at f = 1 most of
     * them do) has its curves: they are copied, not computed again */
    double *th[APP_EXT_METHODS] = {0}, attn[APP_EXT_METHODS];
    int np[APP_EXT_METHODS], same[APP_EXT_METHODS], rc = 0;
    ext_job jobs[APP_EXT_METHODS];
    int nj = 0;
    for (int m = 0; m < APP_EXT_METHODS && rc == 0; m++) {
        int on = 0;
        for (int i = 0; i < res->nm; i++) on |= res->ms[i] == m;
        same[m] = -1;
        if (!on) continue;
        pe_params p = app_ext_params(st, m, key.target);
        th[m] = app_ext_inv_freq(&p, &np[m], &attn[m], err, errlen);
        if (!th[m]) {
            rc = -1;
            break;
        }
        for (int e = 0; e < m && same[m] < 0; e++)
            if (th[e] && np[e] == np[m] && attn[e] == attn[m] &&
                memcmp(th[e], th[m], sizeof *th[m] * (size_t)np[m]) == 0)
                same[m] = e;
        if (same[m] < 0) jobs[nj++] = (ext_job){m, st->p.dim, th[m], np[m], attn[m], res, 0, ""};
    }
    if (rc == 0) ext_run_jobs(jobs, nj);
    for (int j = 0; j < nj && rc == 0; j++)
        if (jobs[j].rc < 0) {
            snprintf(err, errlen, "%s", jobs[j].err);
            rc = -1;
        }
    for (int m = 0; m < APP_EXT_METHODS && rc == 0; m++)
        if (same[m] >= 0)
            for (int kind = 0; kind < 2; kind++)
                memcpy(res->y[kind][m], res->y[kind][same[m]], sizeof res->y[kind][m]);
    for (int m = 0; m < APP_EXT_METHODS; m++) free(th[m]);
    if (rc < 0) {
        app_cache_put(c, 0, "", 0, 0); /* forget the half-made result */
        return NULL;
    }
    return res;
}

/* The drawn rows, (kinds x methods, n) in ys (malloc'd). Returns the row count or -1. */
static int ext_rows(const ext_result *res, unsigned kinds, double **ys, char *err, size_t errlen)
{
    int rows = (kinds == 3 ? 2 : 1) * res->nm, n = res->n, row = 0;
    *ys = malloc(sizeof **ys * (size_t)rows * (size_t)n);
    if (!*ys) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int kind = 0; kind < 2; kind++) {
        if (!(kinds & (1u << kind))) continue;
        for (int i = 0; i < res->nm; i++, row++)
            memcpy(*ys + (size_t)row * n, res->y[kind][res->ms[i]], sizeof **ys * (size_t)n);
    }
    return rows;
}

static int ext_build(app_view_ctx *c, const app_state *st, scene *s, const scene_target *t,
                     char *err, size_t errlen)
{
    const fig_theme *th = fig_theme_get(st->dark);
    unsigned kinds = ext_kinds(st);
    const ext_result *res = ext_compute(c, st, err, errlen);
    double *ys;
    if (!res || ext_rows(res, kinds, &ys, err, errlen) < 0) return -1;
    int n = res->n;
    const double *r = res->r;
    const pe_rope_scaling *sc = &st->p.scaling;
    double T = app_ext_target(st), L0 = sc->original_ctx;
    char l0s[32];
    app_ext_len_label(L0, l0s, sizeof l0s);
    char title[200], sub[320], fs[48];
    fig_num(sc->factor, 3, fs, sizeof fs);
    int nm = res->nm;
    static const char *const count_word[APP_EXT_METHODS + 1] = {"", "", "",    "",
                                                                "", "", "six", "seven"};
    snprintf(title, sizeof title, "RoPE %s vs distance, %s extension methods at f = %s",
             kinds == 2   ? "decay bound"
             : kinds == 1 ? "all-ones score"
                          : "score and bound",
             count_word[nm], fs);
    app_subtitle(st, sub, sizeof sub);
    size_t u = strlen(sub);
#define SUB(...)                                                                                   \
    do {                                                                                           \
        if (u < sizeof sub) u += (size_t)snprintf(sub + u, sizeof sub - u, __VA_ARGS__);           \
    } while (0)
    if (kinds == 3)
        SUB("  solid: %s, dashed: %s", kind_label[0], kind_label[1]);
    else
        SUB("  %s", kind_label[kinds == 1 ? 0 : 1]);
    if (kinds == 2 && !st->figure) SUB(" (%smeasure score: the score)", app_opt_prefix(st));
    if (kinds == 1 && !st->figure) SUB(" (%smeasure bound: the bound)", app_opt_prefix(st));
    SUB("  mean over r " APP_PLUSMINUS "5%%");
    /* LongRoPE's curve is one of its two factor sets, chosen by the sequence length as
     * transformers chooses it (--seq-len, else T): say which */
    for (int i = 0; i < nm; i++)
        if (res->ms[i] == PE_SCALING_LONGROPE) {
            pe_params lp = app_ext_params(st, PE_SCALING_LONGROPE, app_ext_target(st));
            int lng = pe_longrope_long(&lp.scaling);
            SUB("  longrope: %s_factor (seq_len %d %s " APP_L0 ")", lng ? "long" : "short",
                lp.scaling.seq_len, lng ? ">" : "\xe2\x89\xa4");
        }
    if (sc->factor == 1) {
        SUB("  f=1: all methods equal");
        if (!st->figure) SUB("; try %sfactor 4", app_opt_prefix(st));
    }
#undef SUB
    fig_rect area = app_frame(s, t, th, title, sub);

    int rows = (kinds == 3 ? 2 : 1) * nm;
    double lo = 0, hi = 1;
    for (size_t i = 0; i < (size_t)rows * n; i++)
        if (isfinite(ys[i])) {
            lo = fmin(lo, ys[i]);
            hi = fmax(hi, ys[i]);
        }
    double pad = (hi - lo) * 0.04;
    const char *names[APP_EXT_METHODS];
    uint32_t colors[APP_EXT_METHODS];
    for (int i = 0; i < nm; i++) {
        names[i] = app_ext_method_label(res->ms[i]);
        colors[i] = th->series[res->ms[i] % 8];
    }
    /* Methods that run along an earlier one (none and llama3 agree up to about L0; in a braille
     * cell the curve drawn last takes the colour, so the first vanished under the second): one
     * that stays within 2% of the plot's height of an earlier curve over a third of the
     * distances is drawn dashed, a third such one dotted, after the solid ones, and the legend
     * says so. With both kinds shown the dashes already mean the score. */
    unsigned styles[APP_EXT_METHODS] = {0};
    char styled[APP_EXT_METHODS][64];
    for (int i = 0; kinds != 3 && i < nm; i++) {
        const double *yi = ys + (size_t)i * n;
        int near_before = 0;
        for (int j = 0; j < i; j++) {
            const double *yj = ys + (size_t)j * n;
            int close = 0, both = 0;
            for (int k = 0; k < n; k++) {
                if (!isfinite(yi[k]) || !isfinite(yj[k])) continue;
                both++;
                close += fabs(yi[k] - yj[k]) < (hi - lo) * 0.02;
            }
            near_before += both > 0 && close * 3 >= both;
        }
        if (!near_before) continue;
        styles[i] = near_before == 1 ? SCENE_DASHED : SCENE_DOTTED;
        /* a terminal's two-cell legend sample cannot show dashes from dots: the name says it */
        if (t->cells) {
            snprintf(styled[i], sizeof styled[i], "%s (%s)", names[i],
                     styles[i] == SCENE_DASHED ? "dashed" : "dotted");
            names[i] = styled[i];
        }
    }
    /* a plot too short for the legend inside (projector zoom) gets it above */
    fig_legend_slot slot = fig_legend_take(t, &area, names, nm);
    fig_axes a = fig_axes_draw(s, t, th, area, 1, T, lo - (lo < 0 ? pad : 0), hi + pad,
                               "distance r = m \xe2\x88\x92 n (positions, log scale)",
                               "score / score at r = 0" /* the subtitle says: mean over r+-5% */,
                               FIG_GRID | FIG_XLOG);
    if (lo < 0)
        scene_line(s, a.area.x, fig_y(&a, 0), a.area.x + a.area.w, fig_y(&a, 0), th->muted, 0,
                   SCENE_RULE);
    double lw = t->cells ? 0 : fmax(1.2, t->hairline * 1.5);
    /* the original underneath and widest, so a method that coincides with it still shows it */
    for (unsigned pass = 0; pass < 3; pass++)
        for (int row = 0; row < rows; row++) {
            int i = row % nm, kind = kinds == 3 ? row / nm : 0;
            unsigned want = pass == 0 ? 0u : pass == 1 ? (unsigned)SCENE_DASHED : SCENE_DOTTED;
            if (styles[i] != want) continue;
            double w = t->cells                    ? 0
                       : styles[i] == SCENE_DOTTED ? lw * 3
                       : res->ms[i] == 0           ? lw * 2.5
                                                   : lw;
            fig_curve(s, &a, r, ys + (size_t)row * n, (size_t)n, colors[i], w,
                      kind == 1 ? SCENE_DASHED : styles[i]);
        }
    char lab[48];
    snprintf(lab, sizeof lab, APP_L0 " = %s", l0s);
    fig_vmark(s, t, th, &a, L0, lab);
    /* the legend ends left of the L0 mark, whose label it would cover (L0 sits in the right
     * part of a log axis that ends at f L0); the curves are low there */
    fig_axes la = a;
    double lx = fig_x(&a, L0) - (t->cells ? 1 : t->char_w);
    if (lx - a.area.x > a.area.w * 0.3) la.area.w = lx - a.area.x;
    if (!fig_legend_in_slot(s, t, th, &slot, names, colors, styles, nm))
        fig_legend_styled(s, t, th, &la, names, colors, styles, nm, 0);

    c->main = a;
    fig_mark_main(s, a.area, "plot");
    c->has_main = 1;
    c->main_rows = 1;
    c->main_cols = n;
    if (st->cursor_on) {
        int i = st->cur_c < n ? (st->cur_c < 1 ? 1 : st->cur_c) : n - 1;
        double fx = fig_x(&a, r[i]);
        if (t->cells) fx = floor(fx) + 0.5;
        app_cursor_line(s, t, th, fx, a.area.y, fx, a.area.y + a.area.h);
        size_t w = (size_t)snprintf(c->readout, sizeof c->readout, "r %.0f:", r[i]);
        for (int row = 0; row < rows && w < sizeof c->readout; row++)
            w += (size_t)snprintf(c->readout + w, sizeof c->readout - w, "  %s%s %.3f",
                                  names[row % nm], kinds == 3 ? (row < nm ? "(1)" : "(B)") : "",
                                  ys[(size_t)row * n + i]);
    }
    free(ys);
    return 0;
}

static int ext_data(app_view_ctx *c, const app_state *st, app_data *out, char *err, size_t errlen)
{
    unsigned kinds = ext_kinds(st);
    const ext_result *res = ext_compute(c, st, err, errlen);
    double *ys;
    int rows = res ? ext_rows(res, kinds, &ys, err, errlen) : -1;
    if (rows < 0) return -1;
    int n = res->n;
    if (app_data_alloc(out, 2, (size_t)rows + 1, (size_t)n, 0, err, errlen) < 0) {
        free(ys);
        return -1;
    }
    memcpy(out->data, res->r, sizeof *ys * (size_t)n);
    memcpy(out->data + n, ys, sizeof *ys * (size_t)rows * (size_t)n);
    free(ys);
    out->f64 = 1;
    size_t u = (size_t)snprintf(out->what, sizeof out->what,
                                "(1+curves, samples): row 0 = distance r; then per method "
                                "none,linear,ntk,dynamic,yarn,llama3%s: ",
                                res->nm > 6 ? ",longrope" : "");
    if (u < sizeof out->what && kinds == 3)
        snprintf(out->what + u, sizeof out->what - u,
                 "the q=k=1 score (%d rows), then the bound B(r) (%d rows), each / its value at "
                 "r=0 and averaged over r+-5%%",
                 res->nm, res->nm);
    else if (u < sizeof out->what)
        snprintf(out->what + u, sizeof out->what - u,
                 "%s, each / its value at r=0 and averaged over r+-5%%",
                 kind_label[kinds == 1 ? 0 : 1]);
    return 0;
}

static const char *const measure_names[] = {"bound", "score", "both", NULL};

/* ---- the extension view's option group (extension_opts.h, options/option_groups.h) -------- */

void app_extension_opts_default(app_extension_opts *o)
{
    o->measure = APP_MEASURE_BOUND;
}

/* The view's own row: its measure is not one of the decay view's curves. */
const app_option app_extension_rows[] = {
    {APP_CHO("measure", NULL,
             "extension: bound (RoFormer's B(r)/B(0)) | score (all-ones q and k) | both",
             extension.measure, measure_names)},
    {.name = NULL},
};

const app_view app_view_extension = {
    .name = "extension",
    .description =
        "RoPE decay bound (or all-ones score) vs distance for every context-extension method",
    .validate = ext_validate,
    .build = ext_build,
    .data = ext_data,
    /* every method at once: --scaling picks none of them, so it is not listed */
    .options = "layer-type dim base rotary-frac factor orig-ctx seq-len beta-fast beta-slow "
               "yarn-truncate mscale mscale-all-dim "
               "low-freq-factor high-freq-factor attn-factor target-len measure",
    .not_in_subtitle = "factor", /* the title's "at f = 4" */
};
