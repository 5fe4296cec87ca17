/* weights.c: the parameter layout, carving one allocation into the tensors, and the seeded
 * initialisation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"

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
