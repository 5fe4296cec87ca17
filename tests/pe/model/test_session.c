/* test_session: the KV-cache session against the full forward, attention readout, score parts
 * against pe/'s ALiBi bias, the position experiments, top-k and sampling. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/tiny/nn.h"
#include "tap.h"

enum { V = 13, N = 20, CTX = 8 };

static tok_vocab voc;

static int make(model *m, int pe, int tied)
{
    model_config c;
    model_config_default(&c, pe);
    c.layers = 2;
    c.dim = 16;
    c.heads = 4;
    c.hidden = 24;
    c.ctx = CTX;
    c.vocab = V;
    c.tied = tied;
    c.seed = 3;
    c.pe.t5_buckets = 8;
    char err[256];
    if (model_init(m, &c, &voc, err, sizeof err)) return -1;
    pe_rng r;
    pe_rng_seed(&r, 77 + (uint64_t)pe);
    for (size_t i = 0; i < m->n_params; i++) m->params[i] += (float)(0.3 * pe_rng_normal(&r));
    return 0;
}

static void seq(int *ids, int n, uint64_t seed)
{
    pe_rng r;
    pe_rng_seed(&r, seed);
    for (int i = 0; i < n; i++) ids[i] = (int)(pe_rng_u64(&r) % V);
}

/* Largest |att(session at offset k) - att(session at offset 0)| over the whole sequence. */
static double offset_change(model_session *s, const int *ids, int k)
{
    float keep[4][N];
    char err[256];
    double worst = 0;
    model_session_set_offset(s, 0, err, sizeof err);
    model_session_reset(s);
    for (int t = 0; t < N; t++) model_session_step(s, ids[t], NULL, err, sizeof err);
    for (int h = 0; h < 4; h++) memcpy(keep[h], model_session_attn(s, 1, h), N * sizeof(float));
    if (model_session_set_offset(s, k, err, sizeof err)) return -1;
    for (int h = 0; h < 4; h++) {
        const float *a = model_session_attn(s, 1, h);
        for (int j = 0; j < N; j++)
            if (fabs(a[j] - keep[h][j]) > worst) worst = fabs(a[j] - keep[h][j]);
    }
    return worst;
}

static void check(int pe, int tied)
{
    const char *name = model_pe_name(pe);
    model m = {0};
    if (!TAP_OK(make(&m, pe, tied) == 0, "%s: model", name)) return;
    int ids[N];
    seq(ids, N, 1 + (uint64_t)pe);
    nn_dims d;
    nn_layout l;
    nn_dims_layout(&m.cfg, &d, &l);
    nn_pos pos;
    nn_posbuf pb;
    char err[256] = "";
    nn_pos_build(&m.cfg, N, 0, NULL, &pos, &pb, err, sizeof err);
    nn_acts a;
    nn_acts_init(&a, &d, 1, N);
    nn_forward(&d, &l, m.params, &pos, 0, &a, ids, NULL, 1, N, 1);
    const float *full = nn_logits(&a, &d);
    model_session s = {0};
    TAP_OK(model_session_init(&s, &m, N, err, sizeof err) == 0, "%s: session init (%s)", name, err);
    double dl = 0, da = 0, sum_err = 0, split_err = 0;
    int split_rc = 0;
    for (int t = 0; t < N; t++) {
        const float *lg;
        if (model_session_step(&s, ids[t], &lg, err, sizeof err)) {
            TAP_OK(0, "%s: step %d (%s)", name, t, err);
            break;
        }
        for (int v = 0; v < V; v++) {
            double e = fabs(lg[v] - full[t * V + v]);
            if (e > dl) dl = e;
        }
        for (int li = 0; li < d.L; li++)
            for (int h = 0; h < d.H; h++) {
                const float *w = model_session_attn(&s, li, h);
                const float *ref = nn_att(&a, &d, li) + ((size_t)h * N + t) * N;
                double sum = 0;
                for (int j = 0; j <= t; j++) {
                    sum += w[j];
                    if (fabs(w[j] - ref[j]) > da) da = fabs(w[j] - ref[j]);
                }
                if (fabs(sum - 1) > sum_err) sum_err = fabs(sum - 1);
                const float *cp, *pp;
                split_rc = model_session_score_parts(&s, li, h, &cp, &pp, err, sizeof err);
                if (split_rc) continue;
                /* softmax(content + position) must give the weights */
                double mx = -INFINITY, z = 0;
                for (int j = 0; j <= t; j++) mx = fmax(mx, cp[j] + pp[j]);
                for (int j = 0; j <= t; j++) z += exp(cp[j] + pp[j] - mx);
                for (int j = 0; j <= t; j++)
                    split_err = fmax(split_err, fabs(exp(cp[j] + pp[j] - mx) / z - w[j]));
            }
    }
    TAP_OK(dl < 1e-4, "%s%s: KV-cache logits = full forward (max diff %.2e)", name,
           tied ? " tied" : "", dl);
    TAP_OK(da < 1e-5, "%s: KV-cache attention = full forward (max diff %.2e)", name, da);
    TAP_OK(sum_err < 1e-5, "%s: attention rows sum to 1 (%.1e)", name, sum_err);
    if (pe == MODEL_PE_ROPE || pe == MODEL_PE_LEARNED || pe == MODEL_PE_SINUSOIDAL)
        TAP_OK(split_rc == MODEL_ENOSPLIT && strstr(err, "no separate"),
               "%s: no content/position split: %s", name, err);
    else
        TAP_OK(split_rc == 0 && split_err < 1e-5,
               "%s: softmax(content + position) = weights (%.1e)", name, split_err);
    if (pe == MODEL_PE_ALIBI) { /* the position part is pe/'s ALiBi bias */
        pe_params p = m.cfg.pe;
        p.len = N;
        double worst = 0;
        for (int h = 0; h < d.H; h++) {
            pe_matrix b = {0};
            pe_alibi_bias(&p, h, &b, err, sizeof err);
            const float *pp;
            model_session_score_parts(&s, 0, h, NULL, &pp, err, sizeof err);
            for (int j = 0; j < N; j++)
                worst = fmax(worst, fabs(pp[j] - pe_matrix_row(&b, N - 1)[j]));
            pe_matrix_free(&b);
        }
        TAP_OK(worst < 1e-5, "alibi: position part = pe_alibi_bias row (%.1e)", worst);
        TAP_OK(model_session_set_alibi_scale(&s, 0, err, sizeof err) == 0, "alibi: scale 0");
        const float *pp;
        model_session_score_parts(&s, 1, 2, NULL, &pp, err, sizeof err);
        double mx = 0;
        for (int j = 0; j < N; j++) mx = fmax(mx, fabs(pp[j]));
        TAP_OK(mx == 0 && s.len == N, "alibi: scale 0 removes the position part, replays %d",
               s.len);
        double sl[4] = {1, 0.5, 0.25, 0.125};
        model_session_set_alibi_slopes(&s, sl, err, sizeof err);
        model_session_score_parts(&s, 1, 0, NULL, &pp, err, sizeof err);
        TAP_CLOSE(pp[0], -(N - 1) * 1.0, 1e-6, 0, "alibi: explicit slope 1 gives -(i-j)");
        model_session_set_alibi_scale(&s, 1, err, sizeof err);
        TAP_OK(model_session_set_rope_base(&s, 500, err, sizeof err) == PE_EINVAL,
               "alibi: rope base refused: %s", err);
    }
    if (pe == MODEL_PE_T5) {
        const float *pp;
        model_session_score_parts(&s, 0, 1, NULL, &pp, err, sizeof err);
        double worst = 0;
        for (int j = 0; j < N; j++) {
            int bucket =
                pe_t5_bucket(j - (N - 1), 0, m.cfg.pe.t5_buckets, m.cfg.pe.t5_max_distance);
            worst = fmax(worst, fabs(pp[j] - m.t5[1 * m.cfg.pe.t5_buckets + bucket]));
        }
        TAP_OK(worst == 0, "t5: position part = bias of pe_t5_bucket(j - i)");
    }
    if (pe == MODEL_PE_ROPE) {
        float keep[N];
        memcpy(keep, model_session_attn(&s, 1, 0), sizeof keep);
        TAP_OK(model_session_set_rope_base(&s, 100, err, sizeof err) == 0, "rope: base 100");
        double ch = 0;
        for (int j = 0; j < N; j++) ch = fmax(ch, fabs(model_session_attn(&s, 1, 0)[j] - keep[j]));
        TAP_OK(ch > 1e-3, "rope: another base changes the attention (%.3g)", ch);
        model_session_set_rope_base(&s, m.cfg.pe.base, err, sizeof err);
        ch = 0;
        for (int j = 0; j < N; j++) ch = fmax(ch, fabs(model_session_attn(&s, 1, 0)[j] - keep[j]));
        TAP_OK(ch == 0, "rope: the trained base restores it exactly");
        TAP_OK(model_session_set_rope_base(&s, 0.5, err, sizeof err) == PE_EINVAL,
               "rope: base 0.5 refused: %s", err);
        TAP_OK(model_session_set_alibi_scale(&s, 2, err, sizeof err) == PE_EINVAL,
               "rope: alibi scale refused");
    }
    /* shifting every position by k */
    double ch = offset_change(&s, ids, 7);
    if (pe == MODEL_PE_LEARNED || pe == MODEL_PE_SINUSOIDAL)
        TAP_OK(ch > 1e-3, "%s: offset 7 changes the attention (%.3g)", name, ch);
    else
        TAP_OK(ch >= 0 && ch < 1e-4, "%s: offset 7 leaves the attention (%.2e)", name, ch);
    TAP_OK(s.offset == 7 && s.len == N, "%s: offset set, %d tokens replayed", name, s.len);
    if (pe == MODEL_PE_LEARNED) {
        /* 4 * ctx = 32 rows: offset 20 puts token 12 at position 32 */
        int rc = model_session_set_offset(&s, 20, err, sizeof err);
        TAP_OK(rc == PE_ERANGE && strstr(err, "past the learned table"),
               "learned: positions past the table are refused: %s", err);
        TAP_OK(s.offset == 7 && s.len == N, "learned: the old offset stays (%d, %d tokens)",
               s.offset, s.len);
    }
    /* errors */
    const float *lg;
    TAP_OK(model_session_step(&s, ids[0], &lg, err, sizeof err) == PE_ERANGE, "%s: full: %s", name,
           err);
    model_session_reset(&s);
    TAP_OK(model_session_step(&s, V, &lg, err, sizeof err) == PE_EINVAL, "%s: bad token: %s", name,
           err);
    TAP_OK(model_session_attn(&s, 0, 0) == NULL && model_session_attn(&s, 5, 0) == NULL,
           "%s: no attention before a token or out of range", name);
    model_session_free(&s);
    model_session_free(&s);
    nn_acts_free(&a);
    nn_posbuf_free(&pb);
    model_free(&m);
}

static void check_choice(void)
{
    float lg[6] = {1.0f, 3.0f, 2.0f, 3.0f, -1.0f, 0.5f};
    int ids[6];
    float pr[6];
    int n = model_topk(lg, 6, 3, ids, pr);
    TAP_OK(n == 3 && ids[0] == 1 && ids[1] == 3 && ids[2] == 2, "top-3 ids %d %d %d (ties by id)",
           ids[0], ids[1], ids[2]);
    double z = 0;
    for (int v = 0; v < 6; v++) z += exp(lg[v]);
    TAP_CLOSE(pr[0], exp(3.0) / z, 1e-6, 0, "top-1 probability");
    TAP_CLOSE(pr[2], exp(2.0) / z, 1e-6, 0, "top-3 probability");
    n = model_topk(lg, 6, 10, ids, pr);
    double s = 0;
    for (int i = 0; i < n; i++) s += pr[i];
    TAP_OK(n == 6 && fabs(s - 1) < 1e-6 && ids[5] == 4, "top-10 of 6: all, sum %.7f", s);
    TAP_OK(model_sample(lg, 6, 0, NULL) == 1, "greedy picks the lowest id of the maxima");
    pe_rng r1, r2;
    pe_rng_seed(&r1, 9);
    pe_rng_seed(&r2, 9);
    int same = 1, hist[6] = {0};
    for (int i = 0; i < 20000; i++) {
        int a = model_sample(lg, 6, 1.0, &r1), b = model_sample(lg, 6, 1.0, &r2);
        same &= a == b;
        hist[a]++;
    }
    TAP_OK(same, "seeded sampling is reproducible");
    double worst = 0;
    for (int v = 0; v < 6; v++) worst = fmax(worst, fabs(hist[v] / 20000.0 - exp(lg[v]) / z));
    TAP_OK(worst < 0.015, "sampling at temperature 1 follows softmax (max dev %.4f)", worst);
    int cold = 0;
    for (int i = 0; i < 1000; i++) {
        int v = model_sample(lg, 6, 0.05, &r1);
        cold += v == 1 || v == 3;
    }
    TAP_OK(cold == 1000, "temperature 0.05 stays on the maxima");
}

int main(void)
{
    const char *w[V] = {"<unk>", "<eos>", "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"};
    tok_vocab_init(&voc, w, V, NULL, 0);
    for (int pe = 0; pe < MODEL_PE_COUNT; pe++) check(pe, pe == MODEL_PE_T5);
    check_choice();
    tok_vocab_free(&voc);
    return tap_done();
}
