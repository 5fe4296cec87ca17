/* eval.c: the forward's cost and the loss at each position of held-out text. */
#include <stdlib.h>

#include "nn.h"
#include "pool.h"

#define EVAL_ROWS 512

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
    /* Windows per forward pass: up to EVAL_ROWS rows (8 windows of 64), fewer for longer
     * windows. The activations grow with B * win^2 (the attention weights of every layer):
     * 8 windows of 256 took 76 MB, which malloc maps fresh on every call, and the page faults
     * for it were a quarter of a race's held-out measurement; 2 windows of 256 (19 MB) run
     * 3.5x faster per token. Every row and window is computed alone and the losses are added
     * in window order, so B changes no result. */
    size_t nwin = (n - 1) / (size_t)win;
    int B = EVAL_ROWS / win < 1 ? 1 : EVAL_ROWS / win > 8 ? 8 : EVAL_ROWS / win;
    if (nwin < (size_t)B) B = (int)nwin;
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
