/* model.c: configuration, parameter layout and initialisation, position data from pe/,
 * per-position evaluation and next-token choice. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lmi.h"
#include "nn.h"
#include "pool.h"

int model_fail(char *err, size_t errlen, int status, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return status;
}

int model_threads(int threads)
{
    return threads > 0 ? threads : pool_cpus_free();
}

int model_cpus(void)
{
    return pool_cpus();
}

int model_cpus_free(void)
{
    return pool_cpus_free();
}

static const char *const pe_names[MODEL_PE_COUNT] = {"nope",  "learned", "sinusoidal",
                                                     "alibi", "rope",    "t5"};

int model_pe_from_name(const char *name)
{
    for (int i = 0; name && i < MODEL_PE_COUNT; i++)
        if (!strcmp(name, pe_names[i])) return i;
    return -1;
}

const char *model_pe_name(int pe)
{
    return pe >= 0 && pe < MODEL_PE_COUNT ? pe_names[pe] : "?";
}

const char *model_pe_extrapolation_note(int pe)
{
    switch (pe) {
    case MODEL_PE_NOPE:
        return "nope: no position signal at all; past ctx only the causal mask changes (each "
               "token averages over more keys than in training)";
    case MODEL_PE_LEARNED:
        return "learned: positions >= ctx read table rows that got no gradient in training, only "
               "AdamW's weight decay (their random initial values shrunk by prod(1 - lr wd): "
               "x0.72 with the default schedule)";
    case MODEL_PE_SINUSOIDAL:
        return "sinusoidal: positions >= ctx add sin/cos vectors (fixed, defined everywhere) "
               "that the network never saw in training";
    case MODEL_PE_ALIBI:
        return "alibi: the same linear distance penalty continues; distances >= ctx are new but "
               "are pushed down by -m(i-j)";
    case MODEL_PE_ROPE:
        return "rope: q.k depends on i-j only, but distances >= ctx give rotation angles the "
               "network never saw";
    case MODEL_PE_T5:
        return "t5: distances >= max_distance share the last bucket, so longer distances reuse "
               "a trained bias";
    default:
        return "?";
    }
}

void model_config_default(model_config *c, int pe)
{
    memset(c, 0, sizeof *c);
    if (pe < 0 || pe >= MODEL_PE_COUNT) pe = MODEL_PE_NOPE;
    snprintf(c->pe_name, sizeof c->pe_name, "%s", pe_names[pe]);
    pe_params_default(&c->pe);
    c->pe.t5_buckets = 32;
    c->pe.t5_max_distance = 0; /* 0: the training context */
    c->pe.t5_bidirectional = 0;
    c->layers = 3;
    c->dim = 64;
    c->heads = 4;
    c->ctx = 64;
    c->hidden = 256;
    c->vocab = 0;
    c->tied = 0;
    c->seed = 1;
    c->data_seed = 1;
    c->steps = 2000;
    c->batch = 16;
    c->warmup = 100;
    c->lr = 3e-3f;
    c->min_lr = 3e-4f;
    c->weight_decay = 0.1f;
    c->clip = 1.0f;
}

static int range(int v, int lo, int hi, const char *name, char *err, size_t errlen)
{
    if (v < lo || v > hi)
        return model_fail(err, errlen, PE_EINVAL, "--%s %d: allowed %d..%d", name, v, lo, hi);
    return 0;
}

static int frange(double v, double lo, double hi, const char *name, char *err, size_t errlen)
{
    if (!(v >= lo && v <= hi))
        return model_fail(err, errlen, PE_EINVAL, "--%s %g: allowed %g..%g", name, v, lo, hi);
    return 0;
}

int model_config_fix(model_config *c, char *err, size_t errlen)
{
    c->pe_name[sizeof c->pe_name - 1] = 0;
    int pe = model_pe_from_name(c->pe_name);
    const pe_encoding *enc = pe_encoding_find(c->pe_name);
    if (pe < 0 || !enc)
        return model_fail(err, errlen, PE_EINVAL,
                          "--pe %s: the model supports nope, learned, sinusoidal, alibi, rope, t5",
                          c->pe_name);
    int rc = range(c->layers, 1, MODEL_MAX_LAYERS, "layers", err, errlen);
    if (!rc) rc = range(c->heads, 1, MODEL_MAX_HEADS, "heads", err, errlen);
    if (!rc) rc = range(c->dim, 2, MODEL_MAX_DIM, "dim", err, errlen);
    if (!rc && (c->dim % c->heads || (c->dim / c->heads) % 2))
        return model_fail(err, errlen, PE_EINVAL,
                          "--dim %d: must be a multiple of --heads %d with an even head dimension",
                          c->dim, c->heads);
    if (!rc) rc = range(c->ctx, 2, MODEL_MAX_CTX, "ctx", err, errlen);
    if (!rc) rc = range(c->hidden, 1, 4 * MODEL_MAX_DIM, "hidden", err, errlen);
    if (!rc) rc = range(c->vocab, 2, TOK_MAX_VOCAB, "vocab", err, errlen);
    if (!rc) rc = range(c->tied, 0, 1, "tied", err, errlen);
    if (!rc) rc = range(c->steps, 0, 100000000, "steps", err, errlen);
    if (!rc) rc = range(c->batch, 1, 4096, "batch", err, errlen);
    if (!rc) rc = range(c->warmup, 0, 100000000, "warmup", err, errlen);
    /* lr is a float: the bound is the float nearest 1e-9, or --lr 1e-9 itself would fail */
    if (!rc) rc = frange(c->lr, (float)1e-9, 10, "lr", err, errlen);
    if (!rc) rc = frange(c->min_lr, 0, c->lr, "min-lr", err, errlen);
    if (!rc) rc = frange(c->weight_decay, 0, 10, "weight-decay", err, errlen);
    if (!rc) rc = frange(c->clip, 0, 1e9, "clip", err, errlen);
    if (rc) return rc;
    c->command[sizeof c->command - 1] = 0;
    int hd = c->dim / c->heads;
    c->pos_len = pe == MODEL_PE_LEARNED ? 4 * c->ctx : 0;
    c->emb_scale = pe == MODEL_PE_SINUSOIDAL ? (float)sqrt((double)c->dim) : 1.0f;
    c->pe.heads = c->heads;
    c->pe.dim = pe == MODEL_PE_ROPE ? hd : c->dim;
    c->pe.len = pe == MODEL_PE_LEARNED ? c->pos_len : c->ctx;
    c->pe.seed = c->seed;
    c->pe.t5_bidirectional = 0;
    c->pe.alibi_symmetric = 0;
    c->pe.scaling.type = PE_SCALING_NONE;
    if (pe == MODEL_PE_T5) {
        rc = range(c->pe.t5_buckets, 2, 1024, "t5-buckets", err, errlen);
        if (rc) return rc;
        /* 0: the training context, so every distance seen in training has a bucket of its own
         * range and longer ones share the last bucket (at least one past the exact ones). */
        if (c->pe.t5_max_distance == 0)
            c->pe.t5_max_distance =
                c->ctx > c->pe.t5_buckets / 2 ? c->ctx : c->pe.t5_buckets / 2 + 1;
    }
    return enc->validate ? enc->validate(&c->pe, err, errlen) : 0;
}

void nn_dims_layout(const model_config *c, nn_dims *d, nn_layout *l)
{
    memset(d, 0, sizeof *d);
    d->pe = model_pe_from_name(c->pe_name);
    d->L = c->layers;
    d->C = c->dim;
    d->H = c->heads;
    d->hd = c->dim / c->heads;
    d->F = c->hidden;
    d->V = c->vocab;
    d->P = d->pe == MODEL_PE_LEARNED ? c->pos_len : 0;
    d->NB = d->pe == MODEL_PE_T5 ? c->pe.t5_buckets : 0;
    d->tied = c->tied;
    d->emb_scale = c->emb_scale;
    size_t L = (size_t)d->L, C = (size_t)d->C, F = (size_t)d->F, off = 0;
#define AT(field, n) (l->field = off, off += (n))
    AT(wte, (size_t)d->V * C);
    AT(wpe, (size_t)d->P * C);
    AT(t5, (size_t)d->H * d->NB);
    AT(ln1w, L * C);
    AT(ln1b, L * C);
    AT(qkvw, L * C * 3 * C);
    AT(qkvb, L * 3 * C);
    AT(projw, L * C * C);
    AT(projb, L * C);
    AT(ln2w, L * C);
    AT(ln2b, L * C);
    AT(fcw, L * C * F);
    AT(fcb, L * F);
    AT(fcprojw, L * F * C);
    AT(fcprojb, L * C);
    AT(lnfw, C);
    AT(lnfb, C);
    AT(wout, d->tied ? 0 : C * (size_t)d->V);
#undef AT
    l->total = off;
}

size_t model_config_params(const model_config *c)
{
    nn_dims d;
    nn_layout l;
    nn_dims_layout(c, &d, &l);
    return l.total;
}

void model_carve(model *m)
{
    nn_dims d;
    nn_layout l;
    nn_dims_layout(&m->cfg, &d, &l);
    float *p = m->params;
    m->wte = p + l.wte;
    m->wpe = d.P ? p + l.wpe : NULL;
    m->t5 = d.NB ? p + l.t5 : NULL;
    m->ln1w = p + l.ln1w;
    m->ln1b = p + l.ln1b;
    m->qkvw = p + l.qkvw;
    m->qkvb = p + l.qkvb;
    m->projw = p + l.projw;
    m->projb = p + l.projb;
    m->ln2w = p + l.ln2w;
    m->ln2b = p + l.ln2b;
    m->fcw = p + l.fcw;
    m->fcb = p + l.fcb;
    m->fcprojw = p + l.fcprojw;
    m->fcprojb = p + l.fcprojb;
    m->lnfw = p + l.lnfw;
    m->lnfb = p + l.lnfb;
    m->wout = d.tied ? NULL : p + l.wout;
}

void model_free(model *m)
{
    free(m->params);
    tok_vocab_free(&m->vocab);
    memset(m, 0, sizeof *m);
}

/* Copy a vocabulary (pe/model keeps its own). */
int model_copy_vocab(tok_vocab *dst, const tok_vocab *src, char *err, size_t errlen)
{
    return tok_vocab_init(dst, (const char *const *)src->words, src->n, err, errlen);
}

int model_alloc(model *m, const model_config *cfg, char *err, size_t errlen)
{
    m->cfg = *cfg;
    m->n_params = model_config_params(cfg);
    m->params = calloc(m->n_params, sizeof(float));
    if (!m->params)
        return model_fail(err, errlen, PE_ENOMEM, "model: out of memory for %zu parameters",
                          m->n_params);
    model_carve(m);
    return 0;
}

static void normal_fill(float *x, size_t n, double std, pe_rng *r)
{
    for (size_t i = 0; i < n; i++) x[i] = (float)(std * pe_rng_normal(r));
}

int model_init(model *m, const model_config *cfg, const tok_vocab *vocab, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    model_config c = *cfg;
    int rc = model_config_fix(&c, err, errlen);
    if (rc) return rc;
    if (!vocab || vocab->n != c.vocab)
        return model_fail(err, errlen, PE_EINVAL, "model: vocabulary has %d tokens, config %d",
                          vocab ? vocab->n : 0, c.vocab);
    if ((rc = model_alloc(m, &c, err, errlen)) ||
        (rc = model_copy_vocab(&m->vocab, vocab, err, errlen))) {
        model_free(m);
        return rc;
    }
    size_t L = (size_t)c.layers, C = (size_t)c.dim, F = (size_t)c.hidden;
    pe_rng r;
    pe_rng_seed(&r, c.seed);
    double std = 0.02, res_std = 0.02 / sqrt(2.0 * c.layers);
    normal_fill(m->wte, (size_t)c.vocab * C, std, &r);
    normal_fill(m->qkvw, L * C * 3 * C, std, &r);
    normal_fill(m->projw, L * C * C, res_std, &r);
    normal_fill(m->fcw, L * C * F, std, &r);
    normal_fill(m->fcprojw, L * F * C, res_std, &r);
    if (m->wout) normal_fill(m->wout, C * (size_t)c.vocab, std, &r);
    for (size_t i = 0; i < L * C; i++) m->ln1w[i] = m->ln2w[i] = 1;
    for (size_t i = 0; i < C; i++) m->lnfw[i] = 1;
    pe_matrix t = {0};
    if (m->wpe) { /* pe/'s seeded N(0, learned_std) table, all 4 * ctx rows */
        pe_params p = c.pe;
        p.len = c.pos_len;
        p.dim = c.dim;
        if ((rc = pe_learned_table(&p, &t, err, errlen))) goto fail;
        memcpy(m->wpe, t.data, (size_t)c.pos_len * C * sizeof(float));
    }
    if (m->t5) { /* pe/'s seeded bucket values, rescaled to std d^-1/2 as T5 initialises */
        if ((rc = pe_t5_values(&c.pe, &t, err, errlen))) goto fail;
        double s = 2.0 / sqrt((double)c.dim);
        for (size_t i = 0; i < (size_t)c.heads * c.pe.t5_buckets; i++)
            m->t5[i] = (float)(t.data[i] * s);
    }
    pe_matrix_free(&t);
    return 0;
fail:
    pe_matrix_free(&t);
    model_free(m);
    return rc;
}

/* ---- position data ------------------------------------------------------------------------ */

void nn_posbuf_free(nn_posbuf *b)
{
    pe_matrix_free(&b->table);
    pe_matrix_free(&b->cos);
    pe_matrix_free(&b->sin);
    pe_matrix_free(&b->nsin);
    free(b->inv_freq);
    free(b->bucket);
    memset(b, 0, sizeof *b);
}

int nn_pos_build(const model_config *c, int rows, double rope_base, const double *slopes,
                 nn_pos *pos, nn_posbuf *b, char *err, size_t errlen)
{
    memset(pos, 0, sizeof *pos);
    memset(b, 0, sizeof *b);
    int pe = model_pe_from_name(c->pe_name), rc = 0;
    if (rows < 1 || rows > PE_MAX_LEN)
        return model_fail(err, errlen, PE_ERANGE, "positions 0..%d: allowed up to %d", rows - 1,
                          PE_MAX_LEN);
    pos->rows = rows;
    pe_params p = c->pe;
    p.len = rows;
    if (pe == MODEL_PE_LEARNED && rows > c->pos_len)
        return model_fail(err, errlen, PE_ERANGE,
                          "position %d is past the learned table (%d rows, trained on the first "
                          "%d): learned has no vector there",
                          rows - 1, c->pos_len, c->ctx);
    if (pe == MODEL_PE_SINUSOIDAL) {
        p.dim = c->dim;
        if ((rc = pe_sinusoidal_table(&p, &b->table, err, errlen))) goto fail;
        pos->table = b->table.data;
    } else if (pe == MODEL_PE_ROPE) {
        p.dim = c->dim / c->heads;
        if (rope_base > 0) p.base = rope_base;
        if ((rc = pe_rope_tables(&p, &b->cos, &b->sin, err, errlen))) goto fail;
        pos->rot_dim = pe_rope_rotary_dim(&p);
        size_t n = (size_t)rows * (size_t)(pos->rot_dim / 2);
        if ((rc = pe_matrix_init(&b->nsin, (size_t)rows, (size_t)pos->rot_dim / 2, err, errlen)))
            goto fail;
        for (size_t i = 0; i < n; i++) b->nsin.data[i] = -b->sin.data[i];
        if (!(b->inv_freq = malloc((size_t)(pos->rot_dim / 2) * sizeof(double)))) goto oom;
        if ((rc = pe_rope_inv_freq(&p, b->inv_freq, &pos->rope_attn, err, errlen))) goto fail;
        pos->rope_cos = b->cos.data;
        pos->rope_sin = b->sin.data;
        pos->rope_nsin = b->nsin.data;
        pos->inv_freq = b->inv_freq;
        pos->rope_p = p;
    } else if (pe == MODEL_PE_ALIBI) {
        if (slopes)
            memcpy(b->slopes, slopes, (size_t)c->heads * sizeof(double));
        else if ((rc = pe_alibi_slopes(c->heads, c->pe.slope_ratio, b->slopes, err, errlen)))
            goto fail;
        pos->slopes = b->slopes;
    } else if (pe == MODEL_PE_T5) {
        if (!(b->bucket = malloc((size_t)rows * sizeof(int)))) goto oom;
        for (int dist = 0; dist < rows; dist++)
            b->bucket[dist] = pe_t5_bucket(-dist, 0, c->pe.t5_buckets, c->pe.t5_max_distance);
        pos->t5_bucket = b->bucket;
    }
    return 0;
oom:
    rc =
        model_fail(err, errlen, PE_ENOMEM, "position tables for %d positions: out of memory", rows);
fail:
    nn_posbuf_free(b);
    return rc;
}

/* ---- evaluation --------------------------------------------------------------------------- */

double model_flops_per_token(const model_config *c, int T)
{
    double C = c->dim, F = c->hidden, V = c->vocab;
    double layer = 2 * C * 3 * C + 2 * C * C + 4 * C * F + 2 * C * (T + 1);
    return c->layers * layer + 2 * C * V;
}

int model_eval_positions(const model *m, const int *ids, size_t n, int win, int offset, int threads,
                         double *loss_sum, double *count, char *err, size_t errlen)
{
    if (win < 1 || win > MODEL_MAX_CTX * 16 || offset < 0 || offset > PE_MAX_LEN - win)
        return model_fail(err, errlen, PE_EINVAL,
                          "evaluation window %d at offset %d: window "
                          "1..%d, offset 0..%d",
                          win, offset, MODEL_MAX_CTX * 16, PE_MAX_LEN - win);
    if (n < (size_t)win + 1)
        return model_fail(err, errlen, PE_EINVAL,
                          "evaluation: %zu tokens are fewer than one "
                          "window of %d + 1",
                          n, win);
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= m->cfg.vocab)
            return model_fail(err, errlen, PE_EINVAL,
                              "evaluation: token %d at %zu is outside "
                              "the vocabulary (%d)",
                              ids[i], i, m->cfg.vocab);
    nn_dims d;
    nn_layout l;
    nn_dims_layout(&m->cfg, &d, &l);
    nn_pos pos;
    nn_posbuf pb;
    int rc = nn_pos_build(&m->cfg, offset + win, 0, NULL, &pos, &pb, err, errlen);
    if (rc) return rc;
    size_t nwin = (n - 1) / (size_t)win;
    int B = nwin < 8 ? (int)nwin : 8;
    nn_acts a;
    int *in = malloc((size_t)B * win * sizeof *in), *tg = malloc((size_t)B * win * sizeof *tg);
    if (!in || !tg || (rc = nn_acts_init(&a, &d, B, win))) {
        free(in);
        free(tg);
        nn_posbuf_free(&pb);
        return model_fail(err, errlen, rc == PE_ERANGE ? rc : PE_ENOMEM,
                          "evaluation: no memory for %d windows of %d", B, win);
    }
    pool_tuner tu = {.max = model_threads(threads)};
    for (size_t w0 = 0; w0 < nwin; w0 += (size_t)B) {
        int nt = pool_tuner_begin(&tu);
        int nb = nwin - w0 < (size_t)B ? (int)(nwin - w0) : B;
        for (int b = 0; b < nb; b++)
            for (int t = 0; t < win; t++) {
                size_t at = (w0 + (size_t)b) * (size_t)win + (size_t)t;
                in[b * win + t] = ids[at];
                tg[b * win + t] = ids[at + 1];
            }
        nn_forward(&d, &l, m->params, &pos, offset, &a, in, tg, nb, win, nt);
        pool_tuner_end(&tu);
        const float *losses = nn_losses(&a, &d);
        for (int b = 0; b < nb; b++)
            for (int t = 0; t < win; t++) {
                loss_sum[t] += losses[b * win + t];
                count[t] += 1;
            }
    }
    nn_acts_free(&a);
    free(in);
    free(tg);
    nn_posbuf_free(&pb);
    return 0;
}

/* ---- next-token choice -------------------------------------------------------------------- */

int model_topk(const float *logits, int vocab, int k, int *ids, float *probs)
{
    return lmi_topk(logits, vocab, k, ids, probs);
}

int model_sample(const float *logits, int vocab, double temperature, pe_rng *rng)
{
    return lmi_sample(logits, vocab, temperature, rng);
}
