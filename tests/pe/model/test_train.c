/* test_train: a few AdamW steps of a tiny config per scheme make the loss fall; training is
 * deterministic across thread counts; a callback stops it; per-position evaluation. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/tiny/model.h"
#include "story_fixture.h"
#include "tap.h"

static float first_loss[6], last_loss[6];
static int calls;

typedef struct rec {
    float first, last;
    int stop_at;
} rec;

static int progress(void *user, const model_progress *p)
{
    rec *r = user;
    if (p->step == 1) r->first = p->loss;
    r->last = p->loss;
    calls++;
    return r->stop_at && p->step >= r->stop_at;
}

static void tiny(model_config *c, int pe, int vocab)
{
    model_config_default(c, pe);
    c->layers = 1;
    c->dim = 32;
    c->heads = 2;
    c->hidden = 64;
    c->ctx = 16;
    c->vocab = vocab;
    c->batch = 8;
    c->steps = 60;
    c->warmup = 5;
    c->lr = 1e-2f;
    c->min_lr = 1e-3f;
    c->seed = 5;
}

/* --lr's lower bound is 1e-9 as the message says: lr is a float, and (float)1e-9 is just below
 * the double 1e-9, so the check has to compare in float. */
static void test_lr_bound(void)
{
    model_config c;
    char err[256] = "";
    tiny(&c, MODEL_PE_NOPE, 50);
    c.lr = (float)1e-9;
    c.min_lr = 0;
    TAP_OK(model_config_fix(&c, err, sizeof err) == 0, "lr 1e-9 accepted (%s)", err);
    tiny(&c, MODEL_PE_NOPE, 50);
    c.lr = (float)9e-10;
    c.min_lr = 0;
    TAP_OK(model_config_fix(&c, err, sizeof err) == PE_EINVAL && strstr(err, "--lr"),
           "lr 9e-10 refused: %s", err);
}

int main(void)
{
    test_lr_bound();
    story_fixture sf;
    if (story_fixture_make(&sf, 20000, 4000)) return tap_done();
    char err[256] = "";
    tok_vocab v = sf.v; /* read only: sf owns it */
    size_t n = sf.n, nh = sf.nh;
    int *ids = sf.ids, *held = sf.held;
    for (int pe = 0; pe < MODEL_PE_COUNT; pe++) {
        err[0] = 0;
        model_config c;
        tiny(&c, pe, v.n);
        model m;
        if (!TAP_OK(model_init(&m, &c, &v, err, sizeof err) == 0, "%s: init (%s)", c.pe_name, err))
            continue;
        double before[16] = {0}, cnt[16] = {0};
        model_eval_positions(&m, held, nh, 16, 0, 1, before, cnt, err, sizeof err);
        rec r = {0};
        int rc = model_train(&m, ids, n, 1, progress, &r, err, sizeof err);
        first_loss[pe] = r.first;
        last_loss[pe] = m.cfg.train_loss;
        TAP_OK(rc == 0 && m.cfg.steps_done == 60, "%s: 60 steps (%s)", c.pe_name, err);
        TAP_OK(r.first > 4.5 && m.cfg.train_loss < r.first - 1.5,
               "%s: training loss falls %.3f -> %.3f (mean of the last 10)", c.pe_name, r.first,
               m.cfg.train_loss);
        double after[16] = {0}, cnt2[16] = {0}, mb = 0, ma = 0;
        rc = model_eval_positions(&m, held, nh, 16, 0, 2, after, cnt2, err, sizeof err);
        for (int t = 0; t < 16; t++) {
            mb += before[t] / cnt[t];
            ma += after[t] / cnt2[t];
        }
        TAP_OK(rc == 0 && cnt2[0] == (nh - 1) / 16 && cnt2[15] == cnt2[0] && ma < mb - 1.0,
               "%s: held-out loss %.3f -> %.3f over %g windows", c.pe_name, mb / 16, ma / 16,
               cnt2[0]);
        if (pe == MODEL_PE_LEARNED) {
            double s[80] = {0}, k[80] = {0};
            rc = model_eval_positions(&m, held, nh, 65, 0, 1, s, k, err, sizeof err);
            TAP_OK(rc == PE_ERANGE && strstr(err, "learned table"), "learned: 65 > 4 x 16: %s",
                   err);
            rc = model_eval_positions(&m, held, nh, 64, 0, 1, s, k, err, sizeof err);
            TAP_OK(rc == 0, "learned: 64 = 4 x 16 positions evaluate");
        }
        model_free(&m);
    }
    /* determinism across thread counts, and a stop */
    model_config c;
    tiny(&c, MODEL_PE_ROPE, v.n);
    c.steps = 8;
    model a, b;
    model_init(&a, &c, &v, err, sizeof err);
    model_init(&b, &c, &v, err, sizeof err);
    model_train(&a, ids, n, 1, NULL, NULL, err, sizeof err);
    model_train(&b, ids, n, 2, NULL, NULL, err, sizeof err);
    TAP_OK(!memcmp(a.params, b.params, a.n_params * sizeof(float)),
           "1 and 2 threads give bit-identical weights");
    model_free(&b);
    model_init(&b, &c, &v, err, sizeof err);
    model_train(&b, ids, n, 3, NULL, NULL, err, sizeof err);
    TAP_OK(!memcmp(a.params, b.params, a.n_params * sizeof(float)),
           "1 and 3 threads give bit-identical weights");
    model_free(&b);
    c.seed = 6;
    model_init(&b, &c, &v, err, sizeof err);
    model_train(&b, ids, n, 2, NULL, NULL, err, sizeof err);
    TAP_OK(memcmp(a.params, b.params, a.n_params * sizeof(float)), "another seed differs");
    model_free(&b);
    c.steps = 50;
    model_init(&b, &c, &v, err, sizeof err);
    rec r = {.stop_at = 5};
    int rc = model_train(&b, ids, n, 1, progress, &r, err, sizeof err);
    TAP_OK(rc == MODEL_ESTOPPED && b.cfg.steps_done == 5, "the callback stops after step %d",
           b.cfg.steps_done);
    int bad[20] = {0};
    bad[3] = v.n;
    TAP_OK(model_train(&b, bad, 20, 1, NULL, NULL, err, sizeof err) == PE_EINVAL,
           "out-of-vocabulary training data refused: %s", err);
    model_bench_result br;
    rc = model_bench(&a, 2, 40, 1, &br, err, sizeof err);
    TAP_OK(rc == 0 && br.train_tokens_per_s > 0 && br.train_gflops > 0 && br.step_latency_ms > 0,
           "bench runs (%.0f tok/s, %.2f GFLOP/s, %.3f ms)", br.train_tokens_per_s, br.train_gflops,
           br.step_latency_ms);
    TAP_OK(model_bench(&a, 0, 40, 1, &br, err, sizeof err) == PE_EINVAL, "bench: bad steps: %s",
           err);
    TAP_CLOSE(model_flops_per_token(&a.cfg, 16),
              1 * (2.0 * 32 * 96 + 2.0 * 32 * 32 + 4.0 * 32 * 64 + 2.0 * 32 * 17) + 2.0 * 32 * v.n,
              1e-12, 0, "FLOPs per token");
    model_free(&a);
    model_free(&b);
    story_fixture_free(&sf);
    (void)first_loss;
    (void)last_loss;
    return tap_done();
}
