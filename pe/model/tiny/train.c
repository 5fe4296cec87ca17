/* train.c: AdamW with linear warmup, cosine decay and global-norm gradient clipping on random
 * windows of the corpus. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn.h"
#include "pool.h"

#define BETA1    0.9
#define BETA2    0.95
#define ADAM_EPS 1e-8

/* Learning rate of step (1-based): linear warmup, then cosine from lr down to min_lr. */
static double schedule(const model_config *c, int step)
{
    if (step <= c->warmup) return c->lr * (double)step / (c->warmup ? c->warmup : 1);
    int rest = c->steps - c->warmup;
    double prog = rest > 0 ? (double)(step - c->warmup) / rest : 1.0;
    if (prog > 1) prog = 1;
    return c->min_lr + 0.5 * (c->lr - c->min_lr) * (1 + cos(3.14159265358979323846 * prog));
}

/* 1 for tensors that get weight decay: the matrices and embeddings, not biases, norms or the
 * T5 bucket scalars. */
static void decay_mask(const nn_layout *l, unsigned char *mask)
{
    memset(mask, 0, l->total);
    size_t spans[][2] = {{l->wte, l->wpe},     {l->wpe, l->t5},  {l->qkvw, l->qkvb},
                         {l->projw, l->projb}, {l->fcw, l->fcb}, {l->fcprojw, l->fcprojb},
                         {l->wout, l->total}};
    for (size_t i = 0; i < sizeof spans / sizeof spans[0]; i++)
        memset(mask + spans[i][0], 1, spans[i][1] - spans[i][0]);
}

/* One AdamW update of every parameter; each element is independent. In float, in one loop
 * that gcc vectorises (the update in double cost as much as a tenth of a training step). */
typedef struct adam_args {
    float *p, *am, *av;
    const float *g;
    const unsigned char *mask;
    float scale, lr, ibc1, ibc2, wd;
} adam_args;

MODEL_CLONES static void adam_range(void *ctx, size_t i0, size_t i1)
{
    const adam_args *a = ctx;
    float *restrict p = a->p, *restrict am = a->am, *restrict av = a->av;
    const float *restrict g = a->g;
    const unsigned char *restrict mask = a->mask;
    float scale = a->scale, lr = a->lr, ibc1 = a->ibc1, ibc2 = a->ibc2, wd = a->wd;
    for (size_t i = i0; i < i1; i++) {
        float gi = g[i] * scale;
        float mi = (float)BETA1 * am[i] + (float)(1 - BETA1) * gi;
        float vi = (float)BETA2 * av[i] + (float)(1 - BETA2) * gi * gi;
        am[i] = mi;
        av[i] = vi;
        float upd = mi * ibc1 / (sqrtf(vi * ibc2) + (float)ADAM_EPS);
        upd += (mask[i] ? wd : 0.0f) * p[i];
        p[i] -= lr * upd;
    }
}

/* Sum of squares of g, in double: 16 running sums (one per vector lane) added at the end, a
 * fixed order whatever the thread count. */
MODEL_CLONES static double sum_squares(const float *restrict g, size_t n)
{
    double s[16] = {0};
    size_t i = 0;
    for (; i + 16 <= n; i += 16)
        for (int j = 0; j < 16; j++) s[j] += (double)g[i + j] * g[i + j];
    double t = 0;
    for (; i < n; i++) t += (double)g[i] * g[i];
    for (int j = 0; j < 16; j++) t += s[j];
    return t;
}

/* The state of one training run between steps (model_trainer_*): what model_train's loop used
 * to keep in locals, so the race (race.c) can step several models in turn with exactly the
 * arithmetic of model_train, which is these functions in a loop. */
struct model_trainer {
    model *m;
    const int *ids;
    size_t n;
    nn_dims d;
    nn_layout l;
    nn_pos pos;
    nn_posbuf pb;
    nn_acts a;
    float *g, *am, *av;
    unsigned char *mask;
    int *in, *tg;
    pe_rng r;
    double recent[10];
    int step; /* steps done */
};

void model_trainer_free(model_trainer *t)
{
    if (!t) return;
    nn_acts_free(&t->a);
    nn_posbuf_free(&t->pb);
    free(t->g);
    free(t->am);
    free(t->av);
    free(t->mask);
    free(t->in);
    free(t->tg);
    free(t);
}

int model_trainer_new(model *m, const int *ids, size_t n, model_trainer **out, char *err,
                      size_t errlen)
{
    *out = NULL;
    model_config *c = &m->cfg;
    int T = c->ctx, B = c->batch, rc = 0;
    if (n < (size_t)T + 2)
        return model_fail(err, errlen, PE_EINVAL, "training data: %zu tokens, need at least %d", n,
                          T + 2);
    for (size_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= c->vocab)
            return model_fail(err, errlen, PE_EINVAL,
                              "training data: token %d at %zu is outside the vocabulary (%d)",
                              ids[i], i, c->vocab);
    model_trainer *t = calloc(1, sizeof *t);
    if (!t) return model_fail(err, errlen, PE_ENOMEM, "training: out of memory");
    t->m = m;
    t->ids = ids;
    t->n = n;
    nn_dims_layout(c, &t->d, &t->l);
    if ((rc = nn_pos_build(c, T, 0, NULL, &t->pos, &t->pb, err, errlen))) {
        free(t);
        return rc;
    }
    size_t np = m->n_params;
    t->g = calloc(np, sizeof *t->g);
    t->am = calloc(np, sizeof *t->am);
    t->av = calloc(np, sizeof *t->av);
    t->mask = malloc(np);
    t->in = malloc((size_t)B * T * sizeof *t->in);
    t->tg = malloc((size_t)B * T * sizeof *t->tg);
    if (!t->g || !t->am || !t->av || !t->mask || !t->in || !t->tg ||
        nn_acts_init(&t->a, &t->d, B, T)) {
        model_trainer_free(t);
        return model_fail(err, errlen, PE_ENOMEM, "training: out of memory (batch %d x ctx %d)", B,
                          T);
    }
    decay_mask(&t->l, t->mask);
    pe_rng_seed(&t->r, c->seed ^ 0xB5AD4ECEDA1CE2A9ull);
    c->steps_done = 0;
    *out = t;
    return 0;
}

int model_trainer_step(model_trainer *t, int nt, model_progress *pr, char *err, size_t errlen)
{
    model *m = t->m;
    model_config *c = &m->cfg;
    int T = c->ctx, B = c->batch, step = t->step + 1;
    size_t np = m->n_params;
    if (nt < 1) nt = 1;
    for (int b = 0; b < B; b++) {
        size_t off = (size_t)(pe_rng_u64(&t->r) % (uint64_t)(t->n - (size_t)T));
        memcpy(t->in + (size_t)b * T, t->ids + off, (size_t)T * sizeof *t->in);
        memcpy(t->tg + (size_t)b * T, t->ids + off + 1, (size_t)T * sizeof *t->tg);
    }
    double loss = nn_forward(&t->d, &t->l, m->params, &t->pos, 0, &t->a, t->in, t->tg, B, T, nt);
    if (!isfinite(loss))
        return model_fail(err, errlen, PE_ERANGE,
                          "training diverged at step %d (loss %g): try a smaller --lr", step, loss);
    memset(t->g, 0, np * sizeof *t->g);
    nn_backward(&t->d, &t->l, m->params, t->g, &t->pos, 0, &t->a, t->in, t->tg, B, T, nt);
    double norm = sqrt(sum_squares(t->g, np));
    double scale = c->clip > 0 && norm > c->clip ? c->clip / norm : 1.0;
    double lr = schedule(c, step);
    double bc1 = 1 - pow(BETA1, step), bc2 = 1 - pow(BETA2, step);
    adam_args aa = {m->params,
                    t->am,
                    t->av,
                    t->g,
                    t->mask,
                    (float)scale,
                    (float)lr,
                    (float)(1 / bc1),
                    (float)(1 / bc2),
                    (float)c->weight_decay};
    pool_run(np > 65536 ? nt : 1, np, 8192, adam_range, &aa);
    t->recent[(step - 1) % 10] = loss;
    int k = step < 10 ? step : 10;
    double mean = 0;
    for (int i = 0; i < k; i++) mean += t->recent[i];
    c->train_loss = (float)(mean / k);
    c->steps_done = step;
    t->step = step;
    if (pr) {
        model_progress p = {step,      c->steps,    (float)loss,
                            (float)lr, (float)norm, (long)step * B * T};
        *pr = p;
    }
    return 0;
}

int model_train(model *m, const int *ids, size_t n, int threads, model_progress_fn cb, void *user,
                char *err, size_t errlen)
{
    model_trainer *t;
    int rc = model_trainer_new(m, ids, n, &t, err, errlen);
    if (rc) return rc;
    pool_tuner tu = {.max = model_threads(threads)};
    for (int step = 1; step <= m->cfg.steps; step++) {
        int nt = pool_tuner_begin(&tu);
        model_progress pr;
        if ((rc = model_trainer_step(t, nt, &pr, err, errlen))) break;
        pool_tuner_end(&tu);
        if (cb && cb(user, &pr)) {
            rc = MODEL_ESTOPPED;
            break;
        }
    }
    model_trainer_free(t);
    return rc;
}
