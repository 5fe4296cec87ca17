/* test_grad: the backward pass against double-precision central differences, for every tensor
 * of every layer and every position scheme; the float kernels against the double reference;
 * attention rows; invariance of the attention to a shift of every position. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/tiny/nn.h"
#include "tap.h"

enum { B = 2, T = 6, POS0 = 3 };

static void tiny_vocab(tok_vocab *v, int n)
{
    const char *w[32] = {"<unk>", "<eos>"};
    static char names[32][8];
    for (int i = 2; i < n; i++) {
        snprintf(names[i], sizeof names[i], "w%d", i);
        w[i] = names[i];
    }
    tok_vocab_init(v, w, n, NULL, 0);
}

static void tiny_config(model_config *c, int pe, int tied, int vocab)
{
    model_config_default(c, pe);
    c->layers = 2;
    c->dim = 8;
    c->heads = 2;
    c->hidden = 12;
    c->ctx = T;
    c->vocab = vocab;
    c->tied = tied;
    c->seed = 11 + (uint64_t)pe;
    c->pe.t5_buckets = 8;
    c->pe.t5_max_distance = 5;
}

typedef struct named {
    const char *name;
    size_t off, size;
    int per_layer;
} named;

/* Relative error ||a - b|| / (||a|| + ||b||). */
static double rel_err(const double *a, const double *b, size_t n, double *norm)
{
    double d = 0, na = 0, nb = 0;
    for (size_t i = 0; i < n; i++) {
        d += (a[i] - b[i]) * (a[i] - b[i]);
        na += a[i] * a[i];
        nb += b[i] * b[i];
    }
    *norm = sqrt(nb);
    return sqrt(d) / (sqrt(na) + sqrt(nb) + 1e-30);
}

static void check_scheme(int pe, int tied)
{
    const int V = 13;
    const char *pname = model_pe_name(pe);
    tok_vocab voc = {0};
    tiny_vocab(&voc, V);
    model_config cfg;
    tiny_config(&cfg, pe, tied, V);
    model m = {0};
    char err[256] = "";
    if (!TAP_OK(model_init(&m, &cfg, &voc, err, sizeof err) == 0, "%s: init (%s)", pname, err))
        return;
    nn_dims d;
    nn_layout l;
    nn_dims_layout(&m.cfg, &d, &l);
    /* Larger, less symmetric weights than at initialisation, so every path carries signal. */
    pe_rng r;
    pe_rng_seed(&r, 99 + (uint64_t)pe);
    for (size_t i = 0; i < m.n_params; i++) m.params[i] += (float)(0.3 * pe_rng_normal(&r));
    size_t n = m.n_params;
    double *p = malloc(n * sizeof *p), *g = calloc(n, sizeof *g), *fd = calloc(n, sizeof *fd);
    float *gf = calloc(n, sizeof *gf);
    for (size_t i = 0; i < n; i++) p[i] = m.params[i];
    int in[B * T], tg[B * T];
    for (int i = 0; i < B * T; i++) {
        in[i] = (int)(pe_rng_u64(&r) % V);
        tg[i] = (int)(pe_rng_u64(&r) % V);
    }
    nn_pos pos;
    nn_posbuf pb;
    TAP_OK(nn_pos_build(&m.cfg, POS0 + T, 0, NULL, &pos, &pb, err, sizeof err) == 0,
           "%s: position data (%s)", pname, err);
    nn_acts a64, a32;
    nn64_acts_init(&a64, &d, B, T);
    nn_acts_init(&a32, &d, B, T);
    double loss = nn64_forward(&d, &l, p, &pos, POS0, &a64, in, tg, B, T, 1);
    nn64_backward(&d, &l, p, g, &pos, POS0, &a64, in, tg, B, T, 1);
    const double h = 1e-5;
    for (size_t i = 0; i < n; i++) {
        double keep = p[i];
        p[i] = keep + h;
        double lp = nn64_forward(&d, &l, p, &pos, POS0, &a64, in, tg, B, T, 1);
        p[i] = keep - h;
        double lm = nn64_forward(&d, &l, p, &pos, POS0, &a64, in, tg, B, T, 1);
        p[i] = keep;
        fd[i] = (lp - lm) / (2 * h);
    }
    size_t L = (size_t)d.L, C = (size_t)d.C, F = (size_t)d.F;
    named tensors[] = {
        {"wte", l.wte, (size_t)V * C, 0},
        {"wpe", l.wpe, (size_t)d.P * C, 0},
        {"t5", l.t5, (size_t)d.H * d.NB, 0},
        {"ln1w", l.ln1w, C, 1},
        {"ln1b", l.ln1b, C, 1},
        {"qkvw", l.qkvw, C * 3 * C, 1},
        {"qkvb", l.qkvb, 3 * C, 1},
        {"projw", l.projw, C * C, 1},
        {"projb", l.projb, C, 1},
        {"ln2w", l.ln2w, C, 1},
        {"ln2b", l.ln2b, C, 1},
        {"fcw", l.fcw, C * F, 1},
        {"fcb", l.fcb, F, 1},
        {"fcprojw", l.fcprojw, F * C, 1},
        {"fcprojb", l.fcprojb, C, 1},
        {"lnfw", l.lnfw, C, 0},
        {"lnfb", l.lnfb, C, 0},
        {"wout", l.wout, tied ? 0 : C * (size_t)V, 0},
    };
    double worst = 0;
    for (size_t t = 0; t < sizeof tensors / sizeof tensors[0]; t++) {
        if (!tensors[t].size) continue;
        for (size_t li = 0; li < (tensors[t].per_layer ? L : 1); li++) {
            size_t off = tensors[t].off + li * tensors[t].size;
            double norm, e = rel_err(g + off, fd + off, tensors[t].size, &norm);
            if (e > worst) worst = e;
            TAP_OK(e < 1e-6 && norm > 1e-8, "%s%s: %s layer %zu: rel err %.2e (|fd| %.2e)", pname,
                   tied ? " tied" : "", tensors[t].name, li, e, norm);
        }
    }
    if (pe == MODEL_PE_LEARNED) {
        double rest = 0;
        for (size_t i = (size_t)(POS0 + T) * C; i < (size_t)d.P * C; i++)
            rest += fabs(g[l.wpe + i]);
        double before = 0;
        for (size_t i = 0; i < (size_t)POS0 * C; i++) before += fabs(g[l.wpe + i]);
        TAP_OK(rest == 0 && before == 0,
               "learned: rows outside the positions used get no gradient");
    }
    /* float kernels against the double reference */
    double lf = nn_forward(&d, &l, m.params, &pos, POS0, &a32, in, tg, B, T, 2);
    TAP_CLOSE(lf, loss, 1e-5, 0, "float forward loss = double forward loss");
    nn_backward(&d, &l, m.params, gf, &pos, POS0, &a32, in, tg, B, T, 2);
    double md = 0, mg = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)gf[i] - g[i]);
        if (e > md) md = e;
        if (fabs(g[i]) > mg) mg = fabs(g[i]);
    }
    TAP_OK(md <= 1e-4 * mg, "%s: float backward = double backward (max diff %.2e of %.2e)", pname,
           md, mg);
    free(p);
    free(g);
    free(fd);
    free(gf);
    nn64_acts_free(&a64);
    nn_acts_free(&a32);
    nn_posbuf_free(&pb);
    model_free(&m);
    tok_vocab_free(&voc);
}

/* Attention rows sum to 1 and are causal; shifting every position by k changes the attention
 * of learned and sinusoidal only. */
static void check_shift(int pe)
{
    const int V = 13, K = 5;
    const char *pname = model_pe_name(pe);
    tok_vocab voc = {0};
    tiny_vocab(&voc, V);
    model_config cfg;
    tiny_config(&cfg, pe, 0, V);
    model m = {0};
    char err[256] = "";
    model_init(&m, &cfg, &voc, err, sizeof err);
    pe_rng r;
    pe_rng_seed(&r, 5);
    for (size_t i = 0; i < m.n_params; i++) m.params[i] += (float)(0.3 * pe_rng_normal(&r));
    nn_dims d;
    nn_layout l;
    nn_dims_layout(&m.cfg, &d, &l);
    int in[B * T];
    for (int i = 0; i < B * T; i++) in[i] = (int)(pe_rng_u64(&r) % V);
    nn_pos pos;
    nn_posbuf pb;
    nn_pos_build(&m.cfg, K + T, 0, NULL, &pos, &pb, err, sizeof err);
    nn_acts a0, ak;
    nn_acts_init(&a0, &d, B, T);
    nn_acts_init(&ak, &d, B, T);
    nn_forward(&d, &l, m.params, &pos, 0, &a0, in, NULL, B, T, 1);
    nn_forward(&d, &l, m.params, &pos, K, &ak, in, NULL, B, T, 1);
    double worst_sum = 0, upper = 0, diff = 0;
    for (int li = 0; li < d.L; li++) {
        const float *x = nn_att(&a0, &d, li), *y = nn_att(&ak, &d, li);
        for (int row = 0; row < B * d.H * T; row++) {
            double s = 0;
            for (int j = 0; j < T; j++) {
                s += x[row * T + j];
                if (j > row % T) upper += fabs(x[row * T + j]);
                double e = fabs(x[row * T + j] - y[row * T + j]);
                if (e > diff) diff = e;
            }
            if (fabs(s - 1) > worst_sum) worst_sum = fabs(s - 1);
        }
    }
    TAP_OK(worst_sum < 1e-5 && upper == 0, "%s: attention rows sum to 1 (%.1e), causal", pname,
           worst_sum);
    if (pe == MODEL_PE_LEARNED || pe == MODEL_PE_SINUSOIDAL)
        TAP_OK(diff > 1e-3, "%s: shifting positions by %d changes the attention (max %.3g)", pname,
               K, diff);
    else
        TAP_OK(diff < 1e-4, "%s: shifting positions by %d leaves the attention (max %.2e)", pname,
               K, diff);
    nn_acts_free(&a0);
    nn_acts_free(&ak);
    nn_posbuf_free(&pb);
    model_free(&m);
    tok_vocab_free(&voc);
}

int main(void)
{
    for (int pe = 0; pe < MODEL_PE_COUNT; pe++) check_scheme(pe, pe == MODEL_PE_ROPE || pe == 0);
    check_scheme(MODEL_PE_T5, 1);
    for (int pe = 0; pe < MODEL_PE_COUNT; pe++) check_shift(pe);
    return tap_done();
}
