/* bench_model.c: the built-in model's figures for `pelab bench`: training tokens/s and GFLOP/s
 * on the shipped configuration, and the latency of one token through the KV cache. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "assets.h"
#include "model.h"

int app_bench_model(int quick);

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

int app_bench_model(int quick)
{
    model m = {0};
    char err[512], what[256];
    if (bench_model_get(&m, what, sizeof what, err, sizeof err) < 0) {
        printf("model: %s\n", err);
        return 1;
    }
    model_bench_result r;
    int rc = model_bench(&m, quick ? 3 : 10, quick ? 64 : 256, 0, &r, err, sizeof err);
    if (rc < 0) {
        printf("model: %s\n", err);
        model_free(&m);
        return 1;
    }
    printf("model (%s: %d layers, dim %d, %d heads, ctx %d, vocab %d, %d threads):\n", what,
           m.cfg.layers, m.cfg.dim, m.cfg.heads, m.cfg.ctx, m.cfg.vocab, r.threads);
    printf("  training %.0f tokens/s, %.2f GFLOP/s\n", r.train_tokens_per_s, r.train_gflops);
    printf("  one token through the KV cache with attention readout: %.3f ms (target < 1 ms)\n",
           r.step_latency_ms);
    model_free(&m);
    return 0;
}
