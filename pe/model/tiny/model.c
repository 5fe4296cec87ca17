/* model.c: the configuration (defaults, checks, scheme names), freeing a model and next-token
 * choice. The parameter layout and initialisation are in weights.c, the position data from pe/
 * in positions.c, the per-position evaluation in eval.c: the parts that need the network's
 * internals (nn.h), which this file, whose header nn.h reads, must not include. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lmi.h"
#include "model.h"
#include "pool.h"
#include "tinyutil.h"

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

void model_free(model *m)
{
    free(m->params);
    tok_vocab_free(&m->vocab);
    memset(m, 0, sizeof *m);
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
