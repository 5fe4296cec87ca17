/* bench_model.c: the built-in model's figures for `pelab bench`: training tokens/s and GFLOP/s
 * on the shipped configuration, on one thread and on every CPU, on a quiet machine and beside a
 * process that keeps one core busy, and the latency of one token through the KV cache. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "assets.h"
#include "model.h"

int app_bench_model(int quick, const char *part, double peak_gflops);

/* The shipped RoPE model when there is one, else a fresh model of the default configuration
 * (same shapes, random weights: the speed does not depend on what the weights learned). */
static int bench_model_get(model *m, char *what, size_t n, char *err, size_t errlen)
{
    char dir[1024];
    if (app_asset_path("models", dir, sizeof dir, err, errlen) < 0) return -1;
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        char path[2048] = "";
        while ((e = readdir(d)))
            if (strncmp(e->d_name, "rope", 4) == 0 && strstr(e->d_name, ".pelab"))
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        closedir(d);
        if (path[0] && model_load(path, m, err, errlen) == 0) {
            snprintf(what, n, "shipped %s", path + strlen(dir) + 1);
            return 0;
        }
    }
    char story[1024];
    if (app_asset_path("story", story, sizeof story, err, errlen) < 0) return -1;
    model_grammar g = {0};
    tok_vocab v = {0};
    model_config c;
    model_config_default(&c, MODEL_PE_ROPE);
    int rc = model_grammar_load(&g, story, err, errlen);
    if (rc == 0) rc = model_vocab_build(&g, c.data_seed, 200000, &v, err, errlen);
    if (rc == 0) {
        c.vocab = v.n;
        rc = model_init(m, &c, &v, err, errlen);
    }
    tok_vocab_free(&v);
    model_grammar_free(&g);
    snprintf(what, n, "default configuration, fresh weights");
    return rc < 0 ? -1 : 0;
}

/* A process that keeps one core busy, as another program on a shared machine does; it ends
 * itself after two minutes should this one die first. */
static pid_t busy_start(void)
{
    pid_t p = fork();
    if (p == 0) {
        alarm(120);
        for (volatile unsigned long i = 0;; i++) continue;
    }
    return p;
}

static void busy_stop(pid_t p)
{
    if (p <= 0) return;
    kill(p, SIGKILL);
    waitpid(p, NULL, 0);
}

/* Training steps of one bench run (the first is a warm-up, not timed: model_bench) and runs. */
static int train_steps(int quick)
{
    return quick ? 4 : 21;
}

static int train_runs(int quick)
{
    return quick ? 1 : 3;
}

/* Training throughput, and per CPU second as a share of one core's arithmetic peak (peak: 0
 * when not measured). */
static void print_train(const char *how, int threads, const model_bench_result *r, double peak)
{
    double cpu_gf = r->train_tokens_per_s > 0
                        ? r->train_gflops * r->train_tokens_per_cpu_s / r->train_tokens_per_s
                        : 0;
    printf("  training, %s--threads %d: %.0f tokens/s, %.2f GFLOP/s; per CPU second %.0f tokens, "
           "%.2f GFLOP",
           how, threads, r->train_tokens_per_s, r->train_gflops, r->train_tokens_per_cpu_s, cpu_gf);
    if (peak > 0) printf(" (%.0f%% of a core's %.0f GFLOP/s)", 100 * cpu_gf / peak, peak);
    printf("\n");
}

/* Training on 1 thread and on every CPU, quiet or (loaded) beside a process that keeps one core
 * busy: more threads must never be slower than one. */
static int bench_train_part(const model *m, int quick, int loaded, double peak, char *err,
                            size_t errlen)
{
    int steps = train_steps(quick), runs = train_runs(quick), cpus = model_cpus();
    pid_t busy = loaded ? busy_start() : -1;
    if (loaded) printf("  with another process keeping one core busy:\n");
    int counts[2] = {1, cpus}, nk = cpus > 1 ? 2 : 1;
    double tps[2] = {0, 0};
    /* the two counts take turns, run by run, so a drift of the machine (clock, the busy
     * process's placement) falls on both alike */
    model_bench_result rs[2][8];
    for (int i = 0; i < runs; i++)
        for (int k = 0; k < nk; k++)
            if (model_bench(m, steps, 1, counts[k], &rs[k][i], err, errlen) < 0) {
                busy_stop(busy);
                return -1;
            }
    for (int k = 0; k < nk; k++) {
        model_bench_result *r = rs[k];
        for (int i = 1; i < runs; i++) /* insertion sort by tokens/s; the median is shown */
            for (int j = i; j > 0 && r[j].train_tokens_per_s < r[j - 1].train_tokens_per_s; j--) {
                model_bench_result t = r[j];
                r[j] = r[j - 1];
                r[j - 1] = t;
            }
        tps[k] = r[runs / 2].train_tokens_per_s;
        print_train(loaded ? "loaded, " : "", counts[k], &r[runs / 2], peak);
    }
    if (cpus > 1)
        printf("    %d threads / 1 thread: %.2fx%s\n", cpus, tps[1] / tps[0],
               loaded ? " (target >= 1)" : "");
    printf("    --threads 0 picks %d of %d CPUs now\n", model_cpus_free(), cpus);
    busy_stop(busy);
    return 0;
}

/* Evaluation (forward passes over windows, as `pelab eval` runs them) and one token through
 * the KV cache. */
static int bench_eval_part(const model *m, int quick, double peak, char *err, size_t errlen)
{
    int win = m->cfg.ctx;
    size_t n = (size_t)win * (quick ? 64 : 256) + 1;
    int *ids = malloc(n * sizeof *ids);
    double *sum = calloc((size_t)win, sizeof *sum), *cnt = calloc((size_t)win, sizeof *cnt);
    if (!ids || !sum || !cnt) {
        free(ids), free(sum), free(cnt);
        snprintf(err, errlen, "bench: out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) ids[i] = (int)(i * 7919 % (size_t)m->cfg.vocab);
    struct timespec t0, t1, c0, c1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = model_eval_positions(m, ids, n, win, 0, 1, sum, cnt, err, errlen);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    free(ids), free(sum), free(cnt);
    if (rc < 0) return -1;
    double dt = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    double cpu = (double)(c1.tv_sec - c0.tv_sec) + 1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
    double tokens = (double)(n - 1), fl = model_flops_per_token(&m->cfg, win) * tokens / 1e9;
    printf("  evaluation, --threads 1: %.0f tokens/s, %.2f GFLOP/s; per CPU second %.2f GFLOP",
           tokens / dt, fl / dt, cpu > 0 ? fl / cpu : 0);
    if (peak > 0 && cpu > 0) printf(" (%.0f%% of a core's peak)", 100 * fl / cpu / peak);
    printf("\n");
    model_bench_result r;
    if (model_bench(m, 2, quick ? 64 : 256, 1, &r, err, errlen) < 0) return -1;
    printf("  one token through the KV cache with attention readout: %.3f ms (target < 1 ms)\n",
           r.step_latency_ms);
    return 0;
}

int app_bench_model(int quick, const char *part, double peak_gflops)
{
    model m = {0};
    char err[512], what[256];
    if (bench_model_get(&m, what, sizeof what, err, sizeof err) < 0) {
        printf("model: %s\n", err);
        return 1;
    }
    if (!strcmp(part, "train"))
        printf("model (%s: %d layers, dim %d, %d heads, ctx %d, vocab %d, batch %d; median of "
               "%d runs of %d steps after a warm-up step):\n",
               what, m.cfg.layers, m.cfg.dim, m.cfg.heads, m.cfg.ctx, m.cfg.vocab, m.cfg.batch,
               train_runs(quick), train_steps(quick) - 1);
    int rc = !strcmp(part, "eval") ? bench_eval_part(&m, quick, peak_gflops, err, sizeof err)
                                   : bench_train_part(&m, quick, !strcmp(part, "loaded"),
                                                      peak_gflops, err, sizeof err);
    if (rc < 0) printf("model: %s\n", err);
    model_free(&m);
    return rc < 0 ? 1 : 0;
}
