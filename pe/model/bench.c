/* bench.c: training throughput and single-token latency, by the wall clock. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nn.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int model_bench(const model *m, int train_steps, int session_steps, int threads,
                model_bench_result *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (train_steps < 1 || train_steps > 100000 || session_steps < 1 || session_steps > 1000000)
        return model_fail(err, errlen, PE_EINVAL,
                          "bench: %d training steps (1..100000), %d session steps (1..1000000)",
                          train_steps, session_steps);
    out->threads = model_threads(threads);
    /* a copy with the same config, trained on synthetic ids */
    model copy = {0};
    int rc = model_alloc(&copy, &m->cfg, err, errlen);
    if (rc) return rc;
    memcpy(copy.params, m->params, m->n_params * sizeof(float));
    copy.cfg.steps = train_steps;
    copy.cfg.warmup = 1;
    size_t n = (size_t)m->cfg.ctx * m->cfg.batch * 4 + 2;
    int *ids = malloc(n * sizeof *ids);
    if (!ids) {
        model_free(&copy);
        return model_fail(err, errlen, PE_ENOMEM, "bench: out of memory");
    }
    pe_rng r;
    pe_rng_seed(&r, 1);
    for (size_t i = 0; i < n; i++) ids[i] = (int)(pe_rng_u64(&r) % (uint64_t)m->cfg.vocab);
    double t0 = now_s();
    rc = model_train(&copy, ids, n, threads, NULL, NULL, err, errlen);
    double dt = now_s() - t0;
    free(ids);
    model_free(&copy);
    if (rc) return rc;
    double tokens = (double)train_steps * m->cfg.batch * m->cfg.ctx;
    out->train_tokens_per_s = tokens / dt;
    out->train_gflops = 3 * model_flops_per_token(&m->cfg, m->cfg.ctx) * tokens / dt / 1e9;
    /* single-token steps over the training context, restarting when it is full */
    model_session s;
    if ((rc = model_session_init(&s, m, m->cfg.ctx, err, errlen))) return rc;
    double *lat = malloc((size_t)session_steps * sizeof *lat);
    if (!lat) {
        model_session_free(&s);
        return model_fail(err, errlen, PE_ENOMEM, "bench: out of memory");
    }
    for (int i = 0; i < session_steps && !rc; i++) {
        if (s.len == s.max_len) model_session_reset(&s);
        int tok = (int)(pe_rng_u64(&r) % (uint64_t)m->cfg.vocab);
        double a = now_s();
        rc = model_session_step(&s, tok, NULL, err, errlen);
        for (int l = 0; l < m->cfg.layers && !rc; l++) /* the readout a view makes */
            for (int h = 0; h < m->cfg.heads; h++) (void)model_session_attn(&s, l, h);
        lat[i] = now_s() - a;
    }
    if (!rc) {
        qsort(lat, (size_t)session_steps, sizeof *lat, cmp_double);
        out->step_latency_ms = 1e3 * lat[session_steps / 2];
    }
    free(lat);
    model_session_free(&s);
    return rc;
}
