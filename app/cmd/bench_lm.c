/* bench_lm.c: `pelab bench --only real`, the real-checkpoint forward (pe/model/lm_*.c): prompt
 * processing and per-token decoding in tokens/s at 1 and 2 threads, side by side with PyTorch,
 * and the resident memory a model adds against its file size. The models: stories260K
 * (../shared/realmodels, when present) and two random checkpoints of about 125M parameters the
 * bench writes itself into a temporary folder (a GPT-2-small-shaped Hugging Face folder and a
 * Llama-shaped one with grouped-query attention and an untied head).
 *
 * The peer: tests/peers/lm_torch.py runs the same shapes (random weights: the speed does not
 * depend on them) in PyTorch on the CPU with the same thread count, prompt length, decode length
 * and token ids. It runs as a server (--serve): the bench starts one per model and thread count,
 * and pelab's runs and torch's take turns, so that a machine whose speed drifts (other
 * processes) slows both alike; each side's best run is shown, and the ratio pelab / torch.
 * While pelab runs, the peer is stopped (SIGSTOP, SIGCONT before its turn): an idle torch
 * server's OpenMP and OpenBLAS threads spin-wait for a while after each run and take a core from
 * pelab (the same pelab binary's GPT-2 prompt at 2 threads: 225 tokens/s beside a torch on
 * OpenBLAS, 589 beside one on the reference BLAS). The
 * peer runs with OpenBLAS's own kernel choice (OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset for
 * its process only) and names the BLAS it loaded and its kernel. */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lm.h"
#include "pelab_build.h"

int app_bench_lm(int quick);
char *app_bench_tmpdir(char *buf, size_t n); /* bench.c */

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* VmRSS of this process in bytes (0 when /proc cannot tell). */
static size_t rss_bytes(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    size_t kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %zu kB", &kb) == 1) break;
    if (f) fclose(f);
    return kb * 1024;
}

typedef struct bt {
    const char *name;
    int n; /* dims: 1 or 2 */
    long s0, s1;
} bt;

/* A safetensors file of random F32 tensors (uniform in +-0.05, norms at 1). */
static int write_st(const char *path, const bt *t, int n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t cap = (size_t)n * 160 + 64, len = 0;
    char *h = malloc(cap);
    uint64_t off = 0;
    len += (size_t)snprintf(h + len, cap - len, "{");
    for (int i = 0; i < n; i++) {
        uint64_t bytes = 4 * (uint64_t)t[i].s0 * (uint64_t)(t[i].n == 2 ? t[i].s1 : 1);
        if (t[i].n == 2)
            len += (size_t)snprintf(h + len, cap - len,
                                    "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[%ld,%ld],"
                                    "\"data_offsets\":[%llu,%llu]}",
                                    i ? "," : "", t[i].name, t[i].s0, t[i].s1,
                                    (unsigned long long)off, (unsigned long long)(off + bytes));
        else
            len += (size_t)snprintf(h + len, cap - len,
                                    "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[%ld],"
                                    "\"data_offsets\":[%llu,%llu]}",
                                    i ? "," : "", t[i].name, t[i].s0, (unsigned long long)off,
                                    (unsigned long long)(off + bytes));
        off += bytes;
    }
    len += (size_t)snprintf(h + len, cap - len, "}");
    while (len % 8) h[len++] = ' ';
    uint64_t hl = len;
    fwrite(&hl, 8, 1, f);
    fwrite(h, 1, len, f);
    free(h);
    enum { CH = 1 << 16 };
    float *buf = malloc(CH * sizeof *buf);
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < n && buf; i++) {
        size_t cnt = (size_t)t[i].s0 * (size_t)(t[i].n == 2 ? t[i].s1 : 1);
        int norm = t[i].n == 1 && strstr(t[i].name, "bias") == NULL;
        while (cnt) {
            size_t k = cnt < CH ? cnt : CH;
            for (size_t j = 0; j < k; j++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                buf[j] = norm ? 1.0f : ((float)(s >> 40) / 16777216.0f - 0.5f) * 0.1f;
            }
            fwrite(buf, sizeof *buf, k, f);
            cnt -= k;
        }
    }
    free(buf);
    return fclose(f) || !buf ? -1 : 0;
}

static int write_text(const char *path, const char *s)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(s, f);
    return fclose(f);
}

/* GPT-2 small: 768 wide, 12 layers and heads, vocab 50257, 1024 positions (124M). */
static int write_gpt2(const char *dir)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/config.json", dir);
    if (write_text(p, "{\"architectures\":[\"GPT2LMHeadModel\"],\"model_type\":\"gpt2\","
                      "\"n_embd\":768,\"n_layer\":12,\"n_head\":12,\"vocab_size\":50257,"
                      "\"n_positions\":1024}"))
        return -1;
    enum { L = 12, D = 768 };
    bt t[4 + 12 * L];
    static char names[12 * L][48];
    int n = 0;
    t[n++] = (bt){"wte.weight", 2, 50257, D};
    t[n++] = (bt){"wpe.weight", 2, 1024, D};
    const char *sfx[12] = {"ln_1.weight",      "ln_1.bias",          "attn.c_attn.weight",
                           "attn.c_attn.bias", "attn.c_proj.weight", "attn.c_proj.bias",
                           "ln_2.weight",      "ln_2.bias",          "mlp.c_fc.weight",
                           "mlp.c_fc.bias",    "mlp.c_proj.weight",  "mlp.c_proj.bias"};
    const long s0[12] = {D, D, D, 3 * D, D, D, D, D, D, 4 * D, 4 * D, D};
    const long s1[12] = {0, 0, 3 * D, 0, D, 0, 0, 0, 4 * D, 0, D, 0};
    for (int l = 0; l < L; l++)
        for (int k = 0; k < 12; k++) {
            char *nm = names[l * 12 + k];
            snprintf(nm, sizeof names[0], "h.%d.%s", l, sfx[k]);
            t[n++] = (bt){nm, s1[k] ? 2 : 1, s0[k], s1[k]};
        }
    t[n++] = (bt){"ln_f.weight", 1, D, 0};
    t[n++] = (bt){"ln_f.bias", 1, D, 0};
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    return write_st(p, t, n);
}

/* Llama-shaped: 768 wide, 12 layers, 12 heads over 4 kv heads, SwiGLU 2048, vocab 32000,
 * untied head (125M). */
static int write_llama(const char *dir)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/config.json", dir);
    if (write_text(p, "{\"architectures\":[\"LlamaForCausalLM\"],\"model_type\":\"llama\","
                      "\"hidden_size\":768,\"intermediate_size\":2048,\"num_hidden_layers\":12,"
                      "\"num_attention_heads\":12,\"num_key_value_heads\":4,\"vocab_size\":32000,"
                      "\"max_position_embeddings\":2048,\"rms_norm_eps\":1e-5,"
                      "\"tie_word_embeddings\":false}"))
        return -1;
    enum { L = 12, D = 768, KV = 256, F = 2048 };
    bt t[3 + 9 * L];
    static char names[9 * L][64];
    int n = 0;
    t[n++] = (bt){"model.embed_tokens.weight", 2, 32000, D};
    t[n++] = (bt){"model.norm.weight", 1, D, 0};
    t[n++] = (bt){"lm_head.weight", 2, 32000, D};
    const char *sfx[9] = {"input_layernorm.weight",  "post_attention_layernorm.weight",
                          "self_attn.q_proj.weight", "self_attn.k_proj.weight",
                          "self_attn.v_proj.weight", "self_attn.o_proj.weight",
                          "mlp.gate_proj.weight",    "mlp.up_proj.weight",
                          "mlp.down_proj.weight"};
    const long s0[9] = {D, D, D, KV, KV, D, F, F, D}, s1[9] = {0, 0, D, D, D, D, D, D, F};
    for (int l = 0; l < L; l++)
        for (int k = 0; k < 9; k++) {
            char *nm = names[l * 9 + k];
            snprintf(nm, sizeof names[0], "model.layers.%d.%s", l, sfx[k]);
            t[n++] = (bt){nm, s1[k] ? 2 : 1, s0[k], s1[k]};
        }
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    return write_st(p, t, n);
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : 0;
}

/* ---- the PyTorch peer ------------------------------------------------------------------ */

#define PYTHON "/usr/bin/python3"

typedef struct peer {
    pid_t pid;
    FILE *to, *from;
    char version[64];
    char blas[128]; /* the BLAS torch loaded, e.g. "OpenBLAS 0.3.21 Cooperlake" */
} peer;

static char peer_script[2048];

/* Where the peer is (the source tree's tests/peers), or why it will not run: NULL when it can. */
static const char *peer_missing(void)
{
    static char why[2300];
    snprintf(peer_script, sizeof peer_script, "%s/../tests/peers/lm_torch.py", PELAB_ASSETS_SRC);
    if (access(PYTHON, X_OK) != 0) return PYTHON " not found";
    if (access(peer_script, R_OK) != 0) {
        snprintf(why, sizeof why, "%s not found (the source tree's tests/peers)", peer_script);
        return why;
    }
    return NULL;
}

/* Stop the peer (and all its threads) while pelab is timed; continue it for its own turn. */
static void peer_pause(peer *p, int on)
{
    if (p->pid > 0) kill(p->pid, on ? SIGSTOP : SIGCONT);
}

static void peer_stop(peer *p)
{
    peer_pause(p, 0); /* a stopped peer would neither read EOF nor act on SIGTERM */
    if (p->to) fclose(p->to);
    if (p->from) fclose(p->from);
    if (p->pid > 0) {
        int st;
        if (waitpid(p->pid, &st, WNOHANG) == 0) {
            kill(p->pid, SIGTERM);
            waitpid(p->pid, &st, 0);
        }
    }
    memset(p, 0, sizeof *p);
}

/* Start `lm_torch.py --serve MODEL` at th threads and wait until it has built the model; on
 * failure, why (its first line of output, e.g. that torch is missing). */
static int peer_start(peer *p, const char *model, int th, int P, int Dn, char *why, size_t n)
{
    memset(p, 0, sizeof *p);
    int in[2], out[2];
    if (pipe(in) != 0) return snprintf(why, n, "pipe: %s", strerror(errno)), -1;
    if (pipe(out) != 0) {
        close(in[0]);
        close(in[1]);
        return snprintf(why, n, "pipe: %s", strerror(errno)), -1;
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        dup2(out[1], 2); /* its complaints come back as its first line */
        close(in[0]);
        close(in[1]);
        close(out[0]);
        close(out[1]);
        char ths[16], ps[16], ds[16];
        snprintf(ths, sizeof ths, "%d", th);
        snprintf(ps, sizeof ps, "%d", P);
        snprintf(ds, sizeof ds, "%d", Dn);
        /* OpenBLAS's own choice of kernel: these are set on some machines here for older
         * builds, and slow a current one (the peer's process only; pelab's stays as it is) */
        unsetenv("OPENBLAS_CORETYPE");
        unsetenv("OPENBLAS_L2_SIZE");
        execl(PYTHON, PYTHON, peer_script, "--serve", "--threads", ths, "--prompt", ps, "--decode",
              ds, model, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    if (pid < 0) {
        close(in[1]);
        close(out[0]);
        return snprintf(why, n, "fork: %s", strerror(errno)), -1;
    }
    p->pid = pid;
    p->to = fdopen(in[1], "w");
    p->from = fdopen(out[0], "r");
    char line[512] = "";
    if (!p->to || !p->from || !fgets(line, sizeof line, p->from) ||
        sscanf(line, "ready torch %63s blas %127[^\n]", p->version, p->blas) < 1) {
        line[strcspn(line, "\n")] = 0;
        snprintf(why, n, "%s", line[0] ? line : "it ended without a word");
        peer_stop(p);
        return -1;
    }
    if (!p->blas[0]) snprintf(p->blas, sizeof p->blas, "BLAS unknown");
    peer_pause(p, 1);
    return 0;
}

/* One timed run of the peer: prompt and decode seconds. It runs between SIGCONT and SIGSTOP. */
static int peer_run(peer *p, double *tp, double *td)
{
    char line[256];
    peer_pause(p, 0);
    int ok =
        fputs("run\n", p->to) != EOF && fflush(p->to) == 0 && fgets(line, sizeof line, p->from);
    peer_pause(p, 1);
    return ok && sscanf(line, "%lf %lf", tp, td) == 2 ? 0 : -1;
}

/* ---- the bench ----------------------------------------------------------------------------- */

/* One pelab run: a fresh session, the prompt of P tokens, then Dn tokens one at a time. */
static int pelab_run(lm_model *m, const int *ids, int P, int Dn, int th, double *tp, double *td,
                     char *err, size_t errlen)
{
    lm_session s;
    if (lm_session_init(&s, m, P + Dn, th, err, errlen) != PE_OK) return -1;
    double t0 = mono();
    int rc = lm_forward(&s, ids, P, NULL, err, errlen);
    double t1 = mono();
    for (int i = 0; i < Dn && rc == PE_OK; i++)
        rc = lm_forward(&s, &ids[P + i], 1, NULL, err, errlen);
    double t2 = mono();
    lm_session_free(&s);
    *tp = t1 - t0;
    *td = t2 - t1;
    return rc == PE_OK ? 0 : -1;
}

/* Prompt of P tokens, then Dn tokens one at a time, at 1 and 2 threads, pelab's runs and the
 * peer's (model name peer_model) in turn: the best of runs each. */
static void bench_one(const char *label, const char *path, long bytes, const char *peer_model,
                      int P, int Dn, int runs)
{
    char err[512];
    size_t rss0 = rss_bytes();
    lm_model *m = NULL;
    if (lm_open(path, &m, err, sizeof err) != PE_OK) {
        printf("  %s: %s\n", label, err);
        return;
    }
    int *ids = malloc((size_t)(P + Dn) * sizeof *ids);
    for (int i = 0; i < P + Dn; i++) ids[i] = (int)((i * 7919L + 13) % m->c.vocab);
    printf("  %s (%.1fM parameters, %s), prompt of %d tokens, then %d decoded one by one:\n", label,
           (double)lm_param_count(&m->c) / 1e6, m->c.arch_name, P, Dn);
    const char *missing = peer_missing();
    printf("    %-10s %9s %9s %7s   %9s %9s %7s\n", "tokens/s", "prompt", "torch", "ratio",
           "decode", "torch", "ratio");
    for (int th = 1; th <= 2; th++) {
        peer pr = {0};
        char why[600] = "";
        int have_peer = !missing && peer_start(&pr, peer_model, th, P, Dn, why, sizeof why) == 0;
        double bp = 1e30, bd = 1e30, tp = 1e30, td = 1e30;
        int ok = 1;
        /* run 0 is a warm-up on both sides, not counted: the file's pages come into memory,
         * torch allocates its buffers */
        for (int r = 0; r <= runs && ok; r++) {
            double a, b;
            if (pelab_run(m, ids, P, Dn, th, &a, &b, err, sizeof err) != 0) {
                printf("    %s\n", err);
                ok = 0;
                break;
            }
            if (r > 0 && a < bp) bp = a;
            if (r > 0 && b < bd) bd = b;
            if (have_peer) {
                if (peer_run(&pr, &a, &b) != 0) {
                    snprintf(why, sizeof why, "it stopped answering");
                    have_peer = 0;
                    tp = td = 1e30;
                } else {
                    if (r > 0 && a < tp) tp = a;
                    if (r > 0 && b < td) td = b;
                }
            }
        }
        if (!ok) {
            peer_stop(&pr);
            break;
        }
        char lab[32];
        snprintf(lab, sizeof lab, "%d thread%s", th, th > 1 ? "s" : "");
        if (have_peer)
            printf("    %-10s %9.1f %9.1f %6.2fx   %9.1f %9.1f %6.2fx\n", lab, P / bp, P / tp,
                   tp / bp, Dn / bd, Dn / td, td / bd);
        else
            printf("    %-10s %9.1f %9s %7s   %9.1f %9s %7s\n", lab, P / bp, "-", "-", Dn / bd, "-",
                   "-");
        if (!have_peer)
            printf("      PyTorch not run: %s\n", missing ? missing : why);
        else if (th == 1)
            printf("      (torch %s with %s, %s %s; stopped while pelab runs)\n", pr.version,
                   pr.blas, "tests/peers/lm_torch.py", peer_model);
        peer_stop(&pr);
    }
    size_t rss = rss_bytes();
    if (bytes > 0 && rss > rss0)
        printf("    resident memory added: %.1f MB for a %.1f MB file (%.0f%%; target <= 120%%)\n",
               (double)(rss - rss0) / 1e6, (double)bytes / 1e6,
               100.0 * (double)(rss - rss0) / (double)bytes);
    free(ids);
    lm_close(m);
}

int app_bench_lm(int quick)
{
    int runs = quick ? 1 : 3;
    /* a peer that dies must not take the bench with it when the next "run" is written */
    void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);
    printf(
        "real checkpoints (pe/model/lm_*.c) and PyTorch on the CPU (tests/peers/lm_torch.py: the "
        "same shapes, threads, prompt and ids), runs in turn after a warm-up, best of %d; ratio = "
        "pelab / "
        "torch, targets >= 1 for the prompt and >= 1.5 for decoding:\n",
        runs);
    /* the layers' kernel alone, at the shapes of the two 125M models (in -> out) */
    static const int shapes[][2] = {
        {768, 2304}, {768, 3072}, {3072, 768}, {768, 2048}, {2048, 768}};
    printf("  the packed linear kernel alone, 128 tokens, 1 thread, GFLOP/s (in -> out):");
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        printf("%s %d->%d %.1f", i ? "," : "", shapes[i][0], shapes[i][1],
               lm_linear_gflops(shapes[i][0], shapes[i][1], 128, 1));
    printf("\n");
    char p[2048];
    snprintf(p, sizeof p, "%s/../../shared/realmodels/stories260K/stories260K.bin",
             PELAB_ASSETS_SRC);
    if (access(p, R_OK) == 0)
        bench_one("stories260K.bin", p, file_size(p), "stories", 128, 128, runs);
    else
        printf("  stories260K.bin: not found at %s\n", p);
    char dir[512];
    if (!app_bench_tmpdir(dir, sizeof dir)) {
        printf("  cannot make a temporary folder\n");
        signal(SIGPIPE, old_pipe);
        return 1;
    }
    char g[600], l[600], f[1200];
    snprintf(g, sizeof g, "%s/gpt2", dir);
    snprintf(l, sizeof l, "%s/llama", dir);
    int rc = 0;
    if (mkdir(g, 0700) || write_gpt2(g)) {
        printf("  could not write the GPT-2 checkpoint in %s\n", dir);
        rc = 1;
    } else {
        snprintf(f, sizeof f, "%s/model.safetensors", g);
        bench_one("random GPT-2 small shape", g, file_size(f), "gpt2", 128, quick ? 8 : 32, runs);
    }
    if (mkdir(l, 0700) || write_llama(l)) {
        printf("  could not write the Llama checkpoint in %s\n", dir);
        rc = 1;
    } else {
        snprintf(f, sizeof f, "%s/model.safetensors", l);
        bench_one("random Llama shape", l, file_size(f), "llama", 128, quick ? 8 : 32, runs);
    }
    const char *files[] = {"gpt2/model.safetensors",
                           "gpt2/config.json",
                           "llama/model.safetensors",
                           "llama/config.json",
                           "gpt2",
                           "llama"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(f, sizeof f, "%s/%s", dir, files[i]);
        if (remove(f) != 0) rc = 1;
    }
    rmdir(dir);
    signal(SIGPIPE, old_pipe);
    return rc;
}
