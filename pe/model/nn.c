/* nn.c: full-sequence forward and backward of the transformer (llm.c's shape: plain loops over
 * flat arrays carved from one allocation). Compiled as float (nn_*) and, for the gradient
 * check, as double (nn64_*, -DNN_REAL_DOUBLE).
 *
 * Determinism: every output element is computed by one thread in a fixed order, and sums over
 * the batch (bias, LayerNorm and embedding gradients) run serially, so results do not depend
 * on the number of threads.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"
#include "pool.h"

#ifdef NN_REAL_DOUBLE
typedef double real;
#define NN(name) nn64_##name
#define REXP     exp
#else
typedef float real;
#define NN(name) nn_##name
#define REXP     expf
#endif

/* tanh through one exponential: the float build then calls expf, far cheaper than tanh in
 * double; exact to a few ulps and saturating correctly at both ends. */
static real rtanh(real u)
{
    return 1 - 2 / (REXP(2 * u) + 1);
}

/* Enough work to be worth a parallel loop. */
#define PAR(work) ((work) > 1e6)

/* Threads for a loop of this much work, and items per chunk for about 2^17 operations. */
static int par_nt(int nt, double work)
{
    return PAR(work) ? nt : 1;
}

static size_t grain_for(double work_per_item)
{
    double g = 131072.0 / (work_per_item > 1 ? work_per_item : 1);
    return g < 1 ? 1 : (size_t)g;
}

/* ---- activations ------------------------------------------------------------------------- */

typedef struct acts {
    real *x0;                        /* (BT, C) input embeddings */
    real *ln1, *ln1_mean, *ln1_rstd; /* (L, BT, C) (L, BT) (L, BT) */
    real *qkv;                       /* (L, BT, 3C) q and k rotated for rope */
    real *att;                       /* (L, B, H, T, T) softmax weights, 0 above the diagonal */
    real *atty;                      /* (L, BT, C) */
    real *res2;                      /* (L, BT, C) residual after attention */
    real *ln2, *ln2_mean, *ln2_rstd;
    real *fch, *fchg;                /* (L, BT, F) before and after GELU */
    real *res3;                      /* (L, BT, C) residual after the MLP */
    real *lnf, *lnf_mean, *lnf_rstd; /* (BT, C) (BT) (BT) */
    real *logits;                    /* (BT, V), becomes dlogits in backward */
    real *losses;                    /* (BT) */
    /* backward scratch */
    real *dres;         /* (BT, C) gradient of the residual stream */
    real *dln;          /* (BT, C) */
    real *dqkv;         /* (BT, 3C) */
    real *datty;        /* (BT, C) */
    real *dfch, *dfchg; /* (BT, F) */
    real *dpre;         /* (B, H, T, T) gradient of the scores */
    real *tmp;          /* (BT, max(C, F)) forward outputs before the residual add */
    real *tr;           /* transpose scratch */
} acts;

static size_t tr_size(const nn_dims *d, size_t BT)
{
    size_t w = (size_t)d->V;
    if ((size_t)d->F > w) w = (size_t)d->F;
    if ((size_t)3 * d->C > w) w = (size_t)3 * d->C;
    size_t a = BT * w, b = w * (size_t)d->C;
    return a > b ? a : b;
}

/* Carve mem into a (mem NULL: just count). Returns the number of reals. */
static size_t carve(acts *a, real *mem, const nn_dims *d, int B, int T)
{
    size_t BT = (size_t)B * T, L = (size_t)d->L, C = (size_t)d->C, F = (size_t)d->F;
    size_t att = (size_t)B * d->H * T * T, off = 0, FC = F > C ? F : C;
#define TAKE(field, n)                                                                             \
    do {                                                                                           \
        if (a) a->field = mem ? mem + off : NULL;                                                  \
        off += (n);                                                                                \
    } while (0)
    TAKE(x0, BT * C);
    TAKE(ln1, L * BT * C);
    TAKE(ln1_mean, L * BT);
    TAKE(ln1_rstd, L * BT);
    TAKE(qkv, L * BT * 3 * C);
    TAKE(att, L * att);
    TAKE(atty, L * BT * C);
    TAKE(res2, L * BT * C);
    TAKE(ln2, L * BT * C);
    TAKE(ln2_mean, L * BT);
    TAKE(ln2_rstd, L * BT);
    TAKE(fch, L * BT * F);
    TAKE(fchg, L * BT * F);
    TAKE(res3, L * BT * C);
    TAKE(lnf, BT * C);
    TAKE(lnf_mean, BT);
    TAKE(lnf_rstd, BT);
    TAKE(logits, BT * (size_t)d->V);
    TAKE(losses, BT);
    TAKE(dres, BT * C);
    TAKE(dln, BT * C);
    TAKE(dqkv, BT * 3 * C);
    TAKE(datty, BT * C);
    TAKE(dfch, BT * F);
    TAKE(dfchg, BT * F);
    TAKE(dpre, att);
    TAKE(tmp, BT * FC);
    TAKE(tr, tr_size(d, BT));
#undef TAKE
    return off;
}

int NN(acts_init)(nn_acts *a, const nn_dims *d, int B, int T)
{
    memset(a, 0, sizeof *a);
    if (B < 1 || T < 1) return PE_EINVAL;
    /* Every term is small (checked by model_config_fix); the product is checked here. */
    double n = (double)B * T *
               ((double)d->L * (12.0 * d->C + 2.0 * d->F + d->H * (double)T) + d->V * 2.0 +
                d->F * 4.0 + 3.0 * d->C * 8.0);
    if (n * sizeof(real) > 8e9) return PE_ERANGE;
    size_t count = carve(NULL, NULL, d, B, T);
    a->mem = calloc(count, sizeof(real));
    if (!a->mem) return PE_ENOMEM;
    a->bytes = count * sizeof(real);
    a->B = B;
    a->T = T;
    return PE_OK;
}

void NN(acts_free)(nn_acts *a)
{
    free(a->mem);
    memset(a, 0, sizeof *a);
}

static acts view(const nn_acts *na, const nn_dims *d)
{
    acts a;
    carve(&a, na->mem, d, na->B, na->T);
    return a;
}

const real *NN(losses)(const nn_acts *na, const nn_dims *d)
{
    return view(na, d).losses;
}

const real *NN(att)(const nn_acts *na, const nn_dims *d, int layer)
{
    return view(na, d).att + (size_t)layer * na->B * d->H * na->T * na->T;
}

const real *NN(logits)(const nn_acts *na, const nn_dims *d)
{
    return view(na, d).logits;
}

/* ---- kernels ------------------------------------------------------------------------------ */

/* Tile width, measured on baseline x86-64 (SSE2): 4 x 16 beats 4 x 8 by 2.5x even though some
 * sums spill, because each broadcast of a feeds four vector multiplies. */
#define TJ 16

/* One 4 x TJ tile of out = a . b: the sums stay in registers while p runs over k, so each
 * row of b is loaded once for four outputs and nothing is stored until the end. Every sum
 * starts from its initial value and adds p = 0..k-1 in order, as the edge loop below does. */
static void mm_tile(real *restrict out, const real *restrict a, const real *restrict b, int k,
                    int m, int r0, int j0)
{
    real acc[4][TJ];
    for (int r = 0; r < 4; r++)
        for (int j = 0; j < TJ; j++) acc[r][j] = out[(size_t)(r0 + r) * m + j0 + j];
    const real *a0 = a + (size_t)r0 * k;
    for (int p = 0; p < k; p++) {
        const real *br = b + (size_t)p * m + j0;
        real x0 = a0[p], x1 = a0[k + p], x2 = a0[2 * (size_t)k + p], x3 = a0[3 * (size_t)k + p];
        for (int j = 0; j < TJ; j++) {
            real w = br[j];
            acc[0][j] += x0 * w;
            acc[1][j] += x1 * w;
            acc[2][j] += x2 * w;
            acc[3][j] += x3 * w;
        }
    }
    for (int r = 0; r < 4; r++)
        for (int j = 0; j < TJ; j++) out[(size_t)(r0 + r) * m + j0 + j] = acc[r][j];
}

/* out (n, m) = a (n, k) . b (k, m) + bias (m) (bias may be NULL); with acc, added to out.
 * Parallel over blocks of four rows; each output is computed by one thread in a fixed order. */
typedef struct mm_args {
    real *out;
    const real *a, *b, *bias;
    int n, k, m, acc;
} mm_args;

static void mm_blocks(void *ctx, size_t i0, size_t i1)
{
    const mm_args *g = ctx;
    real *restrict out = g->out;
    const real *restrict a = g->a, *restrict b = g->b, *restrict bias = g->bias;
    int n = g->n, k = g->k, m = g->m, acc = g->acc;
    for (int r0 = (int)i0 * 4; r0 < n && r0 < (int)i1 * 4; r0 += 4) {
        int rn = n - r0 < 4 ? n - r0 : 4;
        real *o = out + (size_t)r0 * m;
        if (!acc)
            for (int r = 0; r < rn; r++)
                for (int j = 0; j < m; j++) o[(size_t)r * m + j] = bias ? bias[j] : 0;
        int j0 = 0;
        if (rn == 4)
            for (; j0 + TJ <= m; j0 += TJ) mm_tile(out, a, b, k, m, r0, j0);
        for (int r = 0; r < rn; r++) {
            real *restrict orow = o + (size_t)r * m;
            const real *ar = a + (size_t)(r0 + r) * k;
            for (int p = 0; p < k; p++) {
                const real *restrict br = b + (size_t)p * m;
                real x = ar[p];
                for (int j = j0; j < m; j++) orow[j] += x * br[j];
            }
        }
    }
}

static void mm(real *out, const real *a, const real *b, const real *bias, int n, int k, int m,
               int acc, int nt)
{
    mm_args x = {out, a, b, bias, n, k, m, acc};
    pool_run(par_nt(nt, (double)n * k * m), (size_t)(n + 3) / 4, grain_for(8.0 * k * m), mm_blocks,
             &x);
}

/* dst (c, r) = src (r, c) transposed. */
typedef struct tr_args {
    real *dst;
    const real *src;
    int r, c;
} tr_args;

static void transpose_cols(void *ctx, size_t i0, size_t i1)
{
    const tr_args *x = ctx;
    real *restrict dst = x->dst;
    const real *restrict src = x->src;
    int r = x->r, c = x->c;
    for (int j0 = (int)i0 * 16; j0 < c && j0 < (int)i1 * 16; j0 += 16)
        for (int i = 0; i < r; i++)
            for (int j = j0; j < c && j < j0 + 16; j++)
                dst[(size_t)j * r + i] = src[(size_t)i * c + j];
}

static void transpose(real *dst, const real *src, int r, int c, int nt)
{
    tr_args x = {dst, src, r, c};
    pool_run(par_nt(nt, (double)r * c), (size_t)(c + 15) / 16, grain_for(16.0 * r), transpose_cols,
             &x);
}

/* Backward of out = inp (n, k) . w (k, m) + b: dinp (may be NULL) += dout . w^T,
 * dw += inp^T . dout, db (may be NULL) += column sums of dout. */
static void mm_backward(real *dinp, real *dw, real *db, const real *dout, const real *inp,
                        const real *w, int n, int k, int m, real *tr, int nt)
{
    if (dinp) {
        transpose(tr, w, k, m, nt); /* (m, k) */
        mm(dinp, dout, tr, NULL, n, m, k, 1, nt);
    }
    transpose(tr, inp, n, k, nt); /* (k, n) */
    mm(dw, tr, dout, NULL, k, n, m, 1, nt);
    if (db)
        for (int r = 0; r < n; r++)
            for (int j = 0; j < m; j++) db[j] += dout[(size_t)r * m + j];
}

/* Arguments of the row-wise LayerNorm loops. */
typedef struct ln_args {
    real *out, *mean, *rstd;
    const real *inp, *w, *b, *dout;
    const real *cmean, *crstd;
    int C;
} ln_args;

static void layernorm_rows(void *ctx, size_t r0, size_t r1)
{
    const ln_args *a = ctx;
    real *out = a->out, *mean = a->mean, *rstd = a->rstd;
    const real *inp = a->inp, *w = a->w, *b = a->b;
    int C = a->C;
    for (size_t r = r0; r < r1; r++) {
        const real *x = inp + (size_t)r * C;
        real m = 0, v = 0;
        for (int i = 0; i < C; i++) m += x[i];
        m /= C;
        for (int i = 0; i < C; i++) v += (x[i] - m) * (x[i] - m);
        v /= C;
        real s = (real)(1.0 / sqrt((double)v + 1e-5));
        real *o = out + (size_t)r * C;
        for (int i = 0; i < C; i++) o[i] = (x[i] - m) * s * w[i] + b[i];
        mean[r] = m;
        rstd[r] = s;
    }
}

static void layernorm(real *out, real *mean, real *rstd, const real *inp, const real *w,
                      const real *b, int n, int C, int nt)
{
    ln_args a = {out, mean, rstd, inp, w, b, NULL, NULL, NULL, C};
    pool_run(par_nt(nt, (double)n * C * 4), (size_t)n, grain_for(4.0 * C), layernorm_rows, &a);
}

static void layernorm_backward_rows(void *ctx, size_t r0, size_t r1)
{
    const ln_args *a = ctx;
    real *dinp = a->out;
    const real *inp = a->inp, *w = a->w, *dout = a->dout, *mean = a->cmean, *rstd = a->crstd;
    int C = a->C;
    for (size_t r = r0; r < r1; r++) {
        const real *x = inp + (size_t)r * C, *g = dout + (size_t)r * C;
        real m = mean[r], s = rstd[r], dmean = 0, dnorm_norm = 0;
        for (int i = 0; i < C; i++) {
            real dn = w[i] * g[i];
            dmean += dn;
            dnorm_norm += dn * (x[i] - m) * s;
        }
        dmean /= C;
        dnorm_norm /= C;
        real *di = dinp + (size_t)r * C;
        for (int i = 0; i < C; i++) {
            real norm = (x[i] - m) * s;
            di[i] += (w[i] * g[i] - dmean - norm * dnorm_norm) * s;
        }
    }
}

/* dinp += LayerNorm backward; dw, db += their gradients (summed over rows in order, serially). */
static void layernorm_backward(real *dinp, real *dw, real *db, const real *dout, const real *inp,
                               const real *w, const real *mean, const real *rstd, int n, int C,
                               int nt)
{
    ln_args a = {dinp, NULL, NULL, inp, w, NULL, dout, mean, rstd, C};
    pool_run(par_nt(nt, (double)n * C * 6), (size_t)n, grain_for(6.0 * C), layernorm_backward_rows,
             &a);
    for (int r = 0; r < n; r++) {
        const real *x = inp + (size_t)r * C, *g = dout + (size_t)r * C;
        real m = mean[r], s = rstd[r];
        for (int i = 0; i < C; i++) {
            db[i] += g[i];
            dw[i] += (x[i] - m) * s * g[i];
        }
    }
}

#define GELU_K 0.7978845608028654 /* sqrt(2 / pi) */

typedef struct gelu_args {
    real *out;
    const real *x, *dout;
} gelu_args;

static void gelu_range(void *ctx, size_t i0, size_t i1)
{
    const gelu_args *a = ctx;
    real *out = a->out;
    const real *x = a->x;
    for (size_t i = i0; i < i1; i++) {
        real v = x[i];
        real u = (real)GELU_K * (v + (real)0.044715 * v * v * v);
        out[i] = (real)0.5 * v * (1 + rtanh(u));
    }
}

static void gelu(real *out, const real *x, size_t n, int nt)
{
    gelu_args a = {out, x, NULL};
    pool_run(par_nt(nt, (double)n * 8), n, grain_for(8), gelu_range, &a);
}

static void gelu_backward_range(void *ctx, size_t i0, size_t i1)
{
    const gelu_args *a = ctx;
    real *dx = a->out;
    const real *x = a->x, *dout = a->dout;
    for (size_t i = i0; i < i1; i++) {
        real v = x[i];
        real u = (real)GELU_K * (v + (real)0.044715 * v * v * v);
        real t = rtanh(u);
        real du = (real)GELU_K * (1 + (real)(3 * 0.044715) * v * v);
        dx[i] = dout[i] * ((real)0.5 * (1 + t) + (real)0.5 * v * (1 - t * t) * du);
    }
}

static void gelu_backward(real *dx, const real *x, const real *dout, size_t n, int nt)
{
    gelu_args a = {dx, x, dout};
    pool_run(par_nt(nt, (double)n * 8), n, grain_for(8), gelu_backward_range, &a);
}

static real dot(const real *a, const real *b, int n)
{
    real s = 0;
    for (int i = 0; i < n; i++) s += a[i] * b[i];
    return s;
}

/* Additive position part of the score of query position i and key position j (j <= i). */
static real pos_bias(const nn_dims *d, const nn_pos *pos, const real *params, const nn_layout *l,
                     int h, int i, int j)
{
    if (d->pe == MODEL_PE_ALIBI) return (real)(-pos->slopes[h] * (double)(i - j));
    if (d->pe == MODEL_PE_T5) return params[l->t5 + (size_t)h * d->NB + pos->t5_bucket[i - j]];
    return 0;
}

/* Arguments of the attention-side loops. */
typedef struct att_args {
    const nn_dims *d;
    const nn_layout *l;
    const real *params;
    const nn_pos *pos;
    int pos0, B, T, inverse;
    real *atty, *att, *qkv, *dqkv, *dpre;
    const real *cqkv, *catt, *datty;
} att_args;

static void rope_range(void *ctx, size_t r0, size_t r1)
{
    const att_args *a = ctx;
    const nn_dims *d = a->d;
    const nn_pos *pos = a->pos;
    real *qkv = a->qkv;
    int C = d->C, half = pos->rot_dim / 2, T = a->T, pos0 = a->pos0, inverse = a->inverse;
    for (int r = (int)r0; r < (int)r1; r++) {
        int p = pos0 + r % T;
        real *row = qkv + (size_t)r * 3 * C;
        for (int h = 0; h < d->H; h++)
            for (int part = 0; part < 2; part++) {
                real *x = row + (size_t)part * C + (size_t)h * d->hd;
#ifdef NN_REAL_DOUBLE
                (void)half;
                pe_rope_rotate(&pos->rope_p, pos->inv_freq, pos->rope_attn, x,
                               inverse ? -(double)p : (double)p);
#else
                pe_rope_rotate_f(x, d->hd, pos->rot_dim, pos->rope_p.pairing,
                                 pos->rope_cos + (size_t)p * half,
                                 (inverse ? pos->rope_nsin : pos->rope_sin) + (size_t)p * half);
#endif
            }
    }
}

/* Rotate q and k of every head of every row by its position (inverse: the transposed rotation,
 * for gradients). */
static void rope_rows(const nn_dims *d, const nn_pos *pos, real *qkv, int B, int T, int pos0,
                      int inverse, int nt)
{
    att_args a = {.d = d, .pos = pos, .pos0 = pos0, .B = B, .T = T, .inverse = inverse, .qkv = qkv};
    pool_run(par_nt(nt, (double)B * T * d->C * 8), (size_t)B * T, grain_for(8.0 * d->C), rope_range,
             &a);
}

static void attention_heads(void *ctx, size_t bh0, size_t bh1)
{
    const att_args *a = ctx;
    const nn_dims *d = a->d;
    const nn_layout *l = a->l;
    const nn_pos *pos = a->pos;
    const real *params = a->params, *qkv = a->cqkv;
    real *atty = a->atty, *att = a->att;
    int C = d->C, H = d->H, hd = d->hd, T = a->T, pos0 = a->pos0;
    real scale = (real)(1.0 / sqrt((double)hd));
    for (int bh = (int)bh0; bh < (int)bh1; bh++) {
        int b = bh / H, h = bh % H;
        for (int t = 0; t < T; t++) {
            const real *q = qkv + ((size_t)b * T + t) * 3 * C + (size_t)h * hd;
            real *row = att + (((size_t)b * H + h) * T + t) * T;
            real mx = -INFINITY;
            for (int j = 0; j <= t; j++) {
                const real *k = qkv + ((size_t)b * T + j) * 3 * C + C + (size_t)h * hd;
                real s = dot(q, k, hd) * scale + pos_bias(d, pos, params, l, h, pos0 + t, pos0 + j);
                row[j] = s;
                if (s > mx) mx = s;
            }
            real sum = 0;
            for (int j = 0; j <= t; j++) {
                row[j] = REXP(row[j] - mx);
                sum += row[j];
            }
            real inv = 1 / sum;
            for (int j = 0; j <= t; j++) row[j] *= inv;
            for (int j = t + 1; j < T; j++) row[j] = 0;
            real *o = atty + ((size_t)b * T + t) * C + (size_t)h * hd;
            for (int i = 0; i < hd; i++) o[i] = 0;
            for (int j = 0; j <= t; j++) {
                const real *v = qkv + ((size_t)b * T + j) * 3 * C + 2 * (size_t)C + (size_t)h * hd;
                real w = row[j];
                for (int i = 0; i < hd; i++) o[i] += w * v[i];
            }
        }
    }
}

static void attention(const nn_dims *d, const nn_layout *l, const real *params, const nn_pos *pos,
                      int pos0, real *atty, real *att, const real *qkv, int B, int T, int nt)
{
    att_args a = {.d = d,
                  .l = l,
                  .params = params,
                  .pos = pos,
                  .pos0 = pos0,
                  .B = B,
                  .T = T,
                  .atty = atty,
                  .att = att,
                  .cqkv = qkv};
    pool_run(par_nt(nt, (double)B * d->H * T * T * d->hd), (size_t)B * d->H, 1, attention_heads,
             &a);
}

static void attention_backward_heads(void *ctx, size_t bh0, size_t bh1)
{
    const att_args *a = ctx;
    const nn_dims *d = a->d;
    const real *qkv = a->cqkv, *att = a->catt, *datty = a->datty;
    real *dqkv = a->dqkv, *dpre = a->dpre;
    int C = d->C, H = d->H, hd = d->hd, T = a->T;
    real scale = (real)(1.0 / sqrt((double)hd));
    for (int bh = (int)bh0; bh < (int)bh1; bh++) {
        int b = bh / H, h = bh % H;
        for (int t = 0; t < T; t++) {
            const real *row = att + (((size_t)b * H + h) * T + t) * T;
            real *drow = dpre + (((size_t)b * H + h) * T + t) * T;
            const real *g = datty + ((size_t)b * T + t) * C + (size_t)h * hd;
            real s = 0;
            for (int j = 0; j <= t; j++) {
                const real *v = qkv + ((size_t)b * T + j) * 3 * C + 2 * (size_t)C + (size_t)h * hd;
                real *dv = dqkv + ((size_t)b * T + j) * 3 * C + 2 * (size_t)C + (size_t)h * hd;
                real da = dot(g, v, hd);
                for (int i = 0; i < hd; i++) dv[i] += row[j] * g[i];
                drow[j] = da;
                s += row[j] * da;
            }
            const real *q = qkv + ((size_t)b * T + t) * 3 * C + (size_t)h * hd;
            real *dq = dqkv + ((size_t)b * T + t) * 3 * C + (size_t)h * hd;
            for (int j = 0; j <= t; j++) {
                real dp = row[j] * (drow[j] - s);
                drow[j] = dp;
                const real *k = qkv + ((size_t)b * T + j) * 3 * C + C + (size_t)h * hd;
                real *dk = dqkv + ((size_t)b * T + j) * 3 * C + C + (size_t)h * hd;
                real f = dp * scale;
                for (int i = 0; i < hd; i++) {
                    dq[i] += f * k[i];
                    dk[i] += f * q[i];
                }
            }
            for (int j = t + 1; j < T; j++) drow[j] = 0;
        }
    }
}

/* dqkv = gradient wrt (rotated) q, k and v; dpre = gradient of the pre-softmax scores. */
static void attention_backward(const nn_dims *d, real *dqkv, real *dpre, const real *datty,
                               const real *qkv, const real *att, int B, int T, int nt)
{
    att_args a = {.d = d,
                  .B = B,
                  .T = T,
                  .dqkv = dqkv,
                  .dpre = dpre,
                  .cqkv = qkv,
                  .catt = att,
                  .datty = datty};
    pool_run(par_nt(nt, (double)B * d->H * T * T * d->hd), (size_t)B * d->H, 1,
             attention_backward_heads, &a);
}

/* ---- forward ------------------------------------------------------------------------------ */

double NN(forward)(const nn_dims *d, const nn_layout *l, const real *params, const nn_pos *pos,
                   int pos0, nn_acts *na, const int *inputs, const int *targets, int B, int T,
                   int nt)
{
    acts a = view(na, d);
    int C = d->C, F = d->F, V = d->V, BT = B * T, H = d->H;
    const real *wte = params + l->wte;
    real es = (real)d->emb_scale;
    for (int r = 0; r < BT; r++) {
        int p = pos0 + r % T;
        const real *e = wte + (size_t)inputs[r] * C;
        real *x = a.x0 + (size_t)r * C;
        for (int i = 0; i < C; i++) x[i] = e[i] * es;
        if (d->pe == MODEL_PE_LEARNED) {
            const real *pr = params + l->wpe + (size_t)p * C;
            for (int i = 0; i < C; i++) x[i] += pr[i];
        } else if (d->pe == MODEL_PE_SINUSOIDAL) {
            const float *pr = pos->table + (size_t)p * C;
            for (int i = 0; i < C; i++) x[i] += (real)pr[i];
        }
    }
    size_t BTC = (size_t)BT * C, BTF = (size_t)BT * F, att_n = (size_t)B * H * T * T;
    for (int li = 0; li < d->L; li++) {
        const real *res = li ? a.res3 + (li - 1) * BTC : a.x0;
        real *ln1 = a.ln1 + li * BTC, *qkv = a.qkv + li * BTC * 3, *att = a.att + li * att_n;
        real *atty = a.atty + li * BTC, *res2 = a.res2 + li * BTC, *ln2 = a.ln2 + li * BTC;
        real *fch = a.fch + li * BTF, *fchg = a.fchg + li * BTF, *res3 = a.res3 + li * BTC;
        layernorm(ln1, a.ln1_mean + (size_t)li * BT, a.ln1_rstd + (size_t)li * BT, res,
                  params + l->ln1w + (size_t)li * C, params + l->ln1b + (size_t)li * C, BT, C, nt);
        mm(qkv, ln1, params + l->qkvw + (size_t)li * C * 3 * C,
           params + l->qkvb + (size_t)li * 3 * C, BT, C, 3 * C, 0, nt);
        if (d->pe == MODEL_PE_ROPE) rope_rows(d, pos, qkv, B, T, pos0, 0, nt);
        attention(d, l, params, pos, pos0, atty, att, qkv, B, T, nt);
        mm(a.tmp, atty, params + l->projw + (size_t)li * C * C, params + l->projb + (size_t)li * C,
           BT, C, C, 0, nt);
        for (size_t i = 0; i < BTC; i++) res2[i] = res[i] + a.tmp[i];
        layernorm(ln2, a.ln2_mean + (size_t)li * BT, a.ln2_rstd + (size_t)li * BT, res2,
                  params + l->ln2w + (size_t)li * C, params + l->ln2b + (size_t)li * C, BT, C, nt);
        mm(fch, ln2, params + l->fcw + (size_t)li * C * F, params + l->fcb + (size_t)li * F, BT, C,
           F, 0, nt);
        gelu(fchg, fch, BTF, nt);
        mm(a.tmp, fchg, params + l->fcprojw + (size_t)li * F * C,
           params + l->fcprojb + (size_t)li * C, BT, F, C, 0, nt);
        for (size_t i = 0; i < BTC; i++) res3[i] = res2[i] + a.tmp[i];
    }
    layernorm(a.lnf, a.lnf_mean, a.lnf_rstd, a.res3 + (d->L - 1) * BTC, params + l->lnfw,
              params + l->lnfb, BT, C, nt);
    if (d->tied) {
        transpose(a.tr, wte, V, C, nt); /* (C, V) */
        mm(a.logits, a.lnf, a.tr, NULL, BT, C, V, 0, nt);
    } else {
        mm(a.logits, a.lnf, params + l->wout, NULL, BT, C, V, 0, nt);
    }
    if (!targets) return 0;
    double total = 0;
    for (int r = 0; r < BT; r++) {
        const real *z = a.logits + (size_t)r * V;
        real mx = z[0];
        for (int v = 1; v < V; v++)
            if (z[v] > mx) mx = z[v];
        double s = 0;
        for (int v = 0; v < V; v++) s += (double)REXP(z[v] - mx);
        double loss = log(s) + (double)mx - (double)z[targets[r]];
        a.losses[r] = (real)loss;
        total += loss;
    }
    return total / BT;
}

/* ---- backward ----------------------------------------------------------------------------- */

typedef struct dlogits_args {
    real *logits;
    const int *targets;
    int V, BT;
} dlogits_args;

static void dlogits_rows(void *ctx, size_t r0, size_t r1)
{
    const dlogits_args *a = ctx;
    int V = a->V, BT = a->BT;
    for (size_t r = r0; r < r1; r++) {
        real *z = a->logits + r * V;
        real mx = z[0];
        for (int v = 1; v < V; v++)
            if (z[v] > mx) mx = z[v];
        double s = 0;
        for (int v = 0; v < V; v++) s += (double)REXP(z[v] - mx);
        double inv = 1.0 / s;
        for (int v = 0; v < V; v++) z[v] = (real)((double)REXP(z[v] - mx) * inv / BT);
        z[a->targets[r]] -= (real)(1.0 / BT);
    }
}

void NN(backward)(const nn_dims *d, const nn_layout *l, const real *params, real *grads,
                  const nn_pos *pos, int pos0, nn_acts *na, const int *inputs, const int *targets,
                  int B, int T, int nt)
{
    acts a = view(na, d);
    int C = d->C, F = d->F, V = d->V, BT = B * T, H = d->H;
    size_t BTC = (size_t)BT * C, BTF = (size_t)BT * F, att_n = (size_t)B * H * T * T;
    /* dlogits = (softmax - onehot) / BT, in place */
    dlogits_args da = {a.logits, targets, V, BT};
    pool_run(par_nt(nt, (double)BT * V * 8), (size_t)BT, grain_for(8.0 * V), dlogits_rows, &da);
    memset(a.dln, 0, BTC * sizeof(real));
    if (d->tied) {
        /* logits = lnf . wte^T: dlnf = dlogits . wte, dwte += dlogits^T . lnf */
        mm(a.dln, a.logits, params + l->wte, NULL, BT, V, C, 1, nt);
        transpose(a.tr, a.logits, BT, V, nt); /* (V, BT) */
        mm(grads + l->wte, a.tr, a.lnf, NULL, V, BT, C, 1, nt);
    } else {
        mm_backward(a.dln, grads + l->wout, NULL, a.logits, a.lnf, params + l->wout, BT, C, V, a.tr,
                    nt);
    }
    memset(a.dres, 0, BTC * sizeof(real));
    layernorm_backward(a.dres, grads + l->lnfw, grads + l->lnfb, a.dln, a.res3 + (d->L - 1) * BTC,
                       params + l->lnfw, a.lnf_mean, a.lnf_rstd, BT, C, nt);
    for (int li = d->L - 1; li >= 0; li--) {
        const real *res = li ? a.res3 + (li - 1) * BTC : a.x0;
        const real *ln1 = a.ln1 + li * BTC, *qkv = a.qkv + li * BTC * 3, *att = a.att + li * att_n;
        const real *atty = a.atty + li * BTC, *res2 = a.res2 + li * BTC, *ln2 = a.ln2 + li * BTC;
        const real *fch = a.fch + li * BTF, *fchg = a.fchg + li * BTF;
        size_t lc = (size_t)li * C;
        /* MLP: res3 = res2 + fcproj(gelu(fc(ln2(res2)))) */
        memset(a.dfchg, 0, BTF * sizeof(real));
        mm_backward(a.dfchg, grads + l->fcprojw + lc * F, grads + l->fcprojb + lc, a.dres, fchg,
                    params + l->fcprojw + lc * F, BT, F, C, a.tr, nt);
        gelu_backward(a.dfch, fch, a.dfchg, BTF, nt);
        memset(a.dln, 0, BTC * sizeof(real));
        mm_backward(a.dln, grads + l->fcw + lc * F, grads + l->fcb + (size_t)li * F, a.dfch, ln2,
                    params + l->fcw + lc * F, BT, C, F, a.tr, nt);
        layernorm_backward(a.dres, grads + l->ln2w + lc, grads + l->ln2b + lc, a.dln, res2,
                           params + l->ln2w + lc, a.ln2_mean + (size_t)li * BT,
                           a.ln2_rstd + (size_t)li * BT, BT, C, nt);
        /* attention: res2 = res + proj(attn(qkv(ln1(res)))) */
        memset(a.datty, 0, BTC * sizeof(real));
        mm_backward(a.datty, grads + l->projw + lc * C, grads + l->projb + lc, a.dres, atty,
                    params + l->projw + lc * C, BT, C, C, a.tr, nt);
        memset(a.dqkv, 0, BTC * 3 * sizeof(real));
        attention_backward(d, a.dqkv, a.dpre, a.datty, qkv, att, B, T, nt);
        if (d->pe == MODEL_PE_T5) {
            real *dt5 = grads + l->t5;
            for (int h = 0; h < H; h++)
                for (int b = 0; b < B; b++)
                    for (int t = 0; t < T; t++) {
                        const real *drow = a.dpre + (((size_t)b * H + h) * T + t) * T;
                        for (int j = 0; j <= t; j++)
                            dt5[(size_t)h * d->NB + pos->t5_bucket[t - j]] += drow[j];
                    }
        }
        if (d->pe == MODEL_PE_ROPE) rope_rows(d, pos, a.dqkv, B, T, pos0, 1, nt);
        memset(a.dln, 0, BTC * sizeof(real));
        mm_backward(a.dln, grads + l->qkvw + lc * 3 * C, grads + l->qkvb + lc * 3, a.dqkv, ln1,
                    params + l->qkvw + lc * 3 * C, BT, C, 3 * C, a.tr, nt);
        layernorm_backward(a.dres, grads + l->ln1w + lc, grads + l->ln1b + lc, a.dln, res,
                           params + l->ln1w + lc, a.ln1_mean + (size_t)li * BT,
                           a.ln1_rstd + (size_t)li * BT, BT, C, nt);
        (void)res2;
    }
    /* input embeddings */
    real es = (real)d->emb_scale;
    for (int r = 0; r < BT; r++) {
        const real *g = a.dres + (size_t)r * C;
        real *dw = grads + l->wte + (size_t)inputs[r] * C;
        for (int i = 0; i < C; i++) dw[i] += g[i] * es;
        if (d->pe == MODEL_PE_LEARNED) {
            real *dp = grads + l->wpe + (size_t)(pos0 + r % T) * C;
            for (int i = 0; i < C; i++) dp[i] += g[i];
        }
    }
}
