/* test_race: the race engine (issue 24). Several tiny models stepped side by side on two workers
 * end with the very weights model_train gives each alone; the measurements equal an independent
 * evaluation written here (per-position sums over windows, and the sink share recomputed from
 * session rows); pause holds the steps, stop keeps what is trained. Short races (a few steps). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/tiny/race.h"
#include "story_fixture.h"
#include "tap.h"

static void tiny(model_config *c, int pe, int vocab, int steps)
{
    model_config_default(c, pe);
    c->layers = 1;
    c->dim = 32;
    c->heads = 2;
    c->hidden = 64;
    c->ctx = 16;
    c->vocab = vocab;
    c->batch = 4;
    c->steps = steps;
    c->warmup = 3;
    c->lr = 1e-2f;
    c->min_lr = 1e-3f;
    c->seed = 7;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The held-out loss over positions [a, e) of windows of win, the sum written out here. */
static double mean_loss(const model *m, const int *held, size_t nh, int win, int a, int e)
{
    double s[256] = {0}, k[256] = {0}, ss = 0, kk = 0;
    char err[256];
    if (model_eval_positions(m, held, nh, win, 0, 2, s, k, err, sizeof err)) return NAN;
    for (int t = a; t < e; t++) ss += s[t], kk += k[t];
    return ss / kk;
}

/* The sink share written out: alpha(l, h) = mean over prompts of 1/T sum_t A[t][0]. */
static double sink_ref(const model *m, const int *held, int prompts)
{
    int T = m->cfg.ctx, L = m->cfg.layers, H = m->cfg.heads, above = 0;
    char err[256];
    model_session s;
    model_session_init(&s, m, T, err, sizeof err);
    double alpha[64] = {0};
    float row[64];
    for (int p = 0; p < prompts; p++) {
        model_session_reset(&s);
        for (int t = 0; t < T; t++) model_session_step(&s, held[p * T + t], NULL, err, sizeof err);
        for (int l = 0; l < L; l++)
            for (int h = 0; h < H; h++)
                for (int t = 0; t < T; t++) {
                    model_session_row(&s, l, h, t, row, NULL, NULL, err, sizeof err);
                    alpha[l * H + h] += row[0] / T / prompts;
                }
    }
    for (int i = 0; i < L * H; i++) above += alpha[i] > RACE_SINK_EPS;
    model_session_free(&s);
    return (double)above / (L * H);
}

/* Steps done by lane i, read under the race's lock (the workers write it). */
static int done_of(model_race *r, int i)
{
    model_race_lock(r);
    int d = r->lanes[i].done;
    model_race_unlock(r);
    return d;
}

int main(void)
{
    story_fixture sf;
    if (story_fixture_make(&sf, 20000, 2000)) return tap_done();
    char err[256] = "";
    tok_vocab v = sf.v; /* read only: sf owns it */
    size_t n = sf.n, nh = sf.nh;
    int *ids = sf.ids, *held = sf.held;

    /* four lanes of different schemes and one rope variant, 12 steps, measured every 5 */
    int pes[4] = {MODEL_PE_LEARNED, MODEL_PE_ALIBI, MODEL_PE_ROPE, MODEL_PE_ROPE};
    model ms[4];
    model_config cs[4];
    for (int i = 0; i < 4; i++) {
        tiny(&cs[i], pes[i], v.n, 12);
        if (i == 3) cs[i].pe.base = 500;
        model_init(&ms[i], &cs[i], &v, err, sizeof err);
    }
    model_race r;
    int rc = model_race_init(&r, ms, 4, ids, n, held, nh, 5, err, sizeof err);
    TAP_OK(rc == 0 && ms[0].params == NULL, "init takes the models (%s)", err);
    rc = model_race_start(&r, 2, err, sizeof err);
    /* the front end's wait: back at the end, not one timeout after it */
    int waits = 0, fin = 0;
    while (!(fin = model_race_wait(&r, 60.0)) && waits < 1000) waits++;
    TAP_OK(fin && waits == 0 && model_race_finished(&r),
           "model_race_wait returns when the race ends (%d timeouts of 60 s)", waits);
    model_race_join(&r);
    for (int i = 0; i < 4; i++) {
        model_race_lane *l = &r.lanes[i];
        model alone;
        model_init(&alone, &cs[i], &v, err, sizeof err);
        model_train(&alone, ids, n, 1, NULL, NULL, err, sizeof err);
        TAP_OK(l->state == RACE_LANE_DONE && l->done == 12 &&
                   !memcmp(alone.params, l->m.params, alone.n_params * sizeof(float)) &&
                   alone.cfg.train_loss == l->m.cfg.train_loss,
               "lane %d (%s base %g): 12 steps, bit-identical to model_train alone", i,
               l->m.cfg.pe_name, l->m.cfg.pe.base);
        /* measured at steps 0, 5, 10 and the last, 12 */
        TAP_OK(l->nevals == 4 && l->evals[0].step == 0 && l->evals[1].step == 5 &&
                   l->evals[2].step == 10 && l->evals[3].step == 12 &&
                   l->evals[3].tokens == 12L * 4 * 16,
               "lane %d: measured at 0, 5, 10, 12 (%d measurements)", i, l->nevals);
        const model_race_eval *e = &l->evals[l->nevals - 1];
        TAP_OK(e->held[0] == mean_loss(&alone, held, nh, 16, 0, 16) &&
                   e->held[1] == mean_loss(&alone, held, nh, 64, 16, 32) &&
                   e->held[2] == mean_loss(&alone, held, nh, 64, 32, 64),
               "lane %d: held-out %.4f %.4f %.4f equal the evaluation written here", i, e->held[0],
               e->held[1], e->held[2]);
        TAP_CLOSE(e->sink, sink_ref(&alone, held, r.sink_prompts), 0, 1e-12, "lane sink share");
        TAP_OK(l->evals[0].held[0] > e->held[0] + 0.5, "lane %d: held-out falls %.3f -> %.3f", i,
               l->evals[0].held[0], e->held[0]);
        for (int s = 0; s < 12; s++)
            if (!(l->loss[s] > 0 && isfinite(l->loss[s]))) {
                TAP_OK(0, "lane %d: loss of step %d is %g", i, s + 1, l->loss[s]);
                break;
            }
        model_free(&alone);
    }
    model_race_free(&r);

    /* pause holds every lane; stop keeps what is trained; join measures the last step */
    model m2[2];
    model_config c2[2];
    for (int i = 0; i < 2; i++) {
        tiny(&c2[i], i ? MODEL_PE_T5 : MODEL_PE_NOPE, v.n, 100000);
        model_init(&m2[i], &c2[i], &v, err, sizeof err);
    }
    rc = model_race_init(&r, m2, 2, ids, n, held, nh, 1000, err, sizeof err);
    model_race_start(&r, 2, err, sizeof err);
    while (done_of(&r, 0) < 3) sleep_ms(2);
    model_race_pause(&r, 1);
    while (model_race_busy(&r)) sleep_ms(2); /* the steps in flight end (however slow) */
    TAP_OK(model_race_wait(&r, 0.05) == 0, "model_race_wait: a paused race is not finished");
    int d0 = done_of(&r, 0), d1 = done_of(&r, 1);
    sleep_ms(100);
    TAP_OK(done_of(&r, 0) == d0 && done_of(&r, 1) == d1, "paused: no step (%d, %d)", d0, d1);
    model_race_pause(&r, 0);
    while (done_of(&r, 0) < d0 + 3) sleep_ms(2);
    model_race_stop(&r);
    model_race_join(&r);
    TAP_OK(model_race_finished(&r), "stopped race is finished");
    for (int i = 0; i < 2; i++) {
        model_race_lane *l = &r.lanes[i];
        model alone;
        /* the same first steps alone, with the same goal (the schedule depends on it) */
        model_init(&alone, &c2[i], &v, err, sizeof err);
        model_trainer *t;
        model_trainer_new(&alone, ids, n, &t, err, sizeof err);
        for (int s = 0; s < l->done; s++) model_trainer_step(t, 1, NULL, err, sizeof err);
        model_trainer_free(t);
        TAP_OK(l->m.cfg.steps_done == l->done &&
                   !memcmp(alone.params, l->m.params, alone.n_params * sizeof(float)),
               "stopped lane %d holds step %d, the same weights as %d steps alone", i, l->done,
               l->done);
        TAP_OK(l->nevals == 2 && l->evals[1].step == l->done, "stopped lane %d measured at its end",
               i);
        model_free(&alone);
    }
    model_race_free(&r);

    /* a held-out set shorter than 4 ctx + 1 is refused */
    tiny(&c2[0], MODEL_PE_NOPE, v.n, 5);
    model_init(&m2[0], &c2[0], &v, err, sizeof err);
    rc = model_race_init(&r, m2, 1, ids, n, held, 64, 5, err, sizeof err);
    TAP_OK(rc == PE_EINVAL && strstr(err, "held-out"), "short held-out refused: %s", err);
    model_race_free(&r);

    story_fixture_free(&sf);
    return tap_done();
}
