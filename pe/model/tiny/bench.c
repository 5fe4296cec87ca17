/* bench.c: training throughput and single-token latency, by the wall clock. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nn.h"
#include "pool.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Wall and CPU time when the first training step ended: the clocks start there. */
typedef struct bench_mark {
    double wall, cpu;
} bench_mark;

static int bench_first_step(void *user, const model_progress *p)
{
    if (p->step == 1) {
        bench_mark *b = user;
        b->wall = now_s();
        b->cpu = cpu_s();
    }
    return 0;
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
    if (train_steps < 2 || train_steps > 100000 || session_steps < 1 || session_steps > 1000000)
        return model_fail(err, errlen, PE_EINVAL,
                          "bench: %d training steps (2..100000), %d session steps (1..1000000)",
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
    /* The first step (allocation, first touch of every buffer, cold caches) is not timed, as
     * the PyTorch peer (tests/peers/train_torch.py) leaves its warm-up steps out. */
    bench_mark mark = {0, 0};
    rc = model_train(&copy, ids, n, threads, bench_first_step, &mark, err, errlen);
    double dt = now_s() - mark.wall, cpu = cpu_s() - mark.cpu;
    free(ids);
    model_free(&copy);
    if (rc) return rc;
    double tokens = (double)(train_steps - 1) * m->cfg.batch * m->cfg.ctx;
    out->train_tokens_per_s = tokens / dt;
    out->train_tokens_per_cpu_s = cpu > 0 ? tokens / cpu : 0;
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

/* ---- the machine's peak ------------------------------------------------------------------- */

/* Multiply-adds on independent accumulators, enough of them to cover the latency of the FMA
 * units: the most arithmetic a core does. Returns the flops done. */
static double peak_plain(long iters, float seed, float *sink)
{
    float acc[8][8], y = seed * 0.999f;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++) acc[i][j] = seed + (float)(i + j);
    for (long it = 0; it < iters; it++)
        for (int i = 0; i < 8; i++)
            for (int j = 0; j < 8; j++) acc[i][j] = acc[i][j] * y + seed;
    *sink = acc[0][0] + acc[7][7];
    return (double)iters * 8 * 8 * 2;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PEAK_X86 1
#define X12(f)   f(0) f(1) f(2) f(3) f(4) f(5) f(6) f(7) f(8) f(9) f(10) f(11)

__attribute__((target("avx512f"))) static double peak_avx512(long iters, float seed, float *sink)
{
    __m512 x = _mm512_set1_ps(seed), y = _mm512_set1_ps(seed * 0.999f);
#define DECL(i) __m512 a##i = _mm512_add_ps(x, _mm512_set1_ps((float)i));
    X12(DECL)
#undef DECL
    for (long it = 0; it < iters; it++) {
#define STEP(i) a##i = _mm512_fmadd_ps(a##i, y, x);
        X12(STEP)
#undef STEP
    }
    __m512 s = a0;
#define SUM(i) s = _mm512_add_ps(s, a##i);
    X12(SUM)
#undef SUM
    *sink = _mm512_reduce_add_ps(s);
    return (double)iters * 12 * 16 * 2;
}

__attribute__((target("avx2,fma"))) static double peak_avx2(long iters, float seed, float *sink)
{
    __m256 x = _mm256_set1_ps(seed), y = _mm256_set1_ps(seed * 0.999f);
#define DECL(i) __m256 a##i = _mm256_add_ps(x, _mm256_set1_ps((float)i));
    X12(DECL)
#undef DECL
    for (long it = 0; it < iters; it++) {
#define STEP(i) a##i = _mm256_fmadd_ps(a##i, y, x);
        X12(STEP)
#undef STEP
    }
    __m256 s = a0;
#define SUM(i) s = _mm256_add_ps(s, a##i);
    X12(SUM)
#undef SUM
    float f[8];
    _mm256_storeu_ps(f, s);
    *sink = f[0] + f[7];
    return (double)iters * 12 * 8 * 2;
}
#endif

typedef struct peak_args {
    long iters;
    double flops[64], cpu[64]; /* per thread: flops done, CPU seconds taken */
    float sink[64];
} peak_args;

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void peak_chunk(void *ctx, size_t i0, size_t i1)
{
    peak_args *a = ctx;
    for (size_t i = i0; i < i1 && i < 64; i++) {
        float seed = 1.0f + (float)i * 1e-3f;
        double c0 = thread_cpu_s();
#ifdef PEAK_X86
        if (__builtin_cpu_supports("avx512f"))
            a->flops[i] = peak_avx512(a->iters, seed, &a->sink[i]);
        else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
            a->flops[i] = peak_avx2(a->iters, seed, &a->sink[i]);
        else
#endif
            a->flops[i] = peak_plain(a->iters, seed, &a->sink[i]);
        a->cpu[i] = thread_cpu_s() - c0;
    }
}

double model_peak_gflops(int threads)
{
    int nt = threads > 0 ? (threads < 64 ? threads : 64) : 1;
    peak_args a = {.iters = 1 << 16};
    /* grow the run until each thread computes for 50 ms, so timer and start-up costs vanish;
     * the rate counts CPU time, so other programs sharing the cores do not lower it */
    for (;;) {
        pool_run(nt, (size_t)nt, 1, peak_chunk, &a);
        double rate = 0, least = 1e9;
        for (int i = 0; i < nt; i++) {
            rate += a.cpu[i] > 0 ? a.flops[i] / a.cpu[i] : 0;
            least = a.cpu[i] < least ? a.cpu[i] : least;
        }
        if (least > 0.05 || a.iters > (1L << 30)) return rate / 1e9;
        a.iters *= 2;
    }
}
