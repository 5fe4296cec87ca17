/* writer.h: the tests write small checkpoints of their own (random GPT-2 folders, shards of a
 * real file, forged headers). Header-only. */
#ifndef PELAB_TEST_WRITER_H
#define PELAB_TEST_WRITER_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct wr_tensor {
    const char *name;
    int ndim;
    int64_t shape[2];
    const float *data;
} wr_tensor;

/* float -> IEEE half for values exactly representable as normal halves (the tests' values). */
static inline uint16_t wr_half(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
    if ((u & 0x7fffffff) == 0) return sign;
    int e = (int)((u >> 23) & 0xff) - 127 + 15;
    if (e <= 0 || e >= 31) abort();
    return (uint16_t)(sign | (unsigned)e << 10 | (u & 0x7fffff) >> 13);
}

/* dtype "F32", "F16" or "BF16"; pad = 0 leaves the header length as it falls (the data may
 * then start at an offset that is not a multiple of 4). */
static inline int wr_safetensors(const char *path, const wr_tensor *t, int n, const char *dtype,
                                 int pad)
{
    int es = strcmp(dtype, "F32") == 0 ? 4 : 2;
    size_t cap = 256 + (size_t)n * 256, len = 0;
    char *hdr = malloc(cap);
    len += (size_t)snprintf(hdr + len, cap - len, "{\"__metadata__\":{\"format\":\"pt\"}");
    uint64_t off = 0;
    for (int i = 0; i < n; i++) {
        uint64_t numel = (uint64_t)t[i].shape[0] * (uint64_t)(t[i].ndim == 2 ? t[i].shape[1] : 1);
        if (t[i].ndim == 2)
            len += (size_t)snprintf(hdr + len, cap - len,
                                    ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%lld,%lld],"
                                    "\"data_offsets\":[%llu,%llu]}",
                                    t[i].name, dtype, (long long)t[i].shape[0],
                                    (long long)t[i].shape[1], (unsigned long long)off,
                                    (unsigned long long)(off + numel * (uint64_t)es));
        else
            len += (size_t)snprintf(hdr + len, cap - len,
                                    ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%lld],"
                                    "\"data_offsets\":[%llu,%llu]}",
                                    t[i].name, dtype, (long long)t[i].shape[0],
                                    (unsigned long long)off,
                                    (unsigned long long)(off + numel * (uint64_t)es));
        off += numel * (uint64_t)es;
    }
    len += (size_t)snprintf(hdr + len, cap - len, "}");
    while (pad && len % 8) hdr[len++] = ' ';
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(hdr);
        return -1;
    }
    uint64_t hl = len;
    unsigned char b[8];
    for (int i = 0; i < 8; i++) b[i] = (unsigned char)(hl >> (8 * i));
    fwrite(b, 1, 8, f);
    fwrite(hdr, 1, len, f);
    for (int i = 0; i < n; i++) {
        size_t numel = (size_t)t[i].shape[0] * (size_t)(t[i].ndim == 2 ? t[i].shape[1] : 1);
        for (size_t k = 0; k < numel; k++) {
            float v = t[i].data[k];
            if (es == 4) {
                fwrite(&v, 4, 1, f);
            } else {
                uint32_t u;
                memcpy(&u, &v, 4);
                uint16_t h = strcmp(dtype, "BF16") == 0 ? (uint16_t)(u >> 16) : wr_half(v);
                fwrite(&h, 2, 1, f);
            }
        }
    }
    free(hdr);
    return fclose(f);
}

static inline int wr_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    fputs(text, f);
    return fclose(f);
}

/* Deterministic values k / 1024 with |k| <= amp (exact in F32, F16 and BF16 for amp <= 256). */
static inline float wr_rand(uint64_t *s, int amp)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    int k = (int)((*s >> 33) % (uint64_t)(2 * amp + 1)) - amp;
    return (float)k / 1024.0f;
}

/* A random GPT-2 folder (config.json, model.safetensors in dtype) of width D (a multiple of H),
 * H heads, L layers, vocabulary V, P learned positions, MLP 4 D; values from wr_rand, seed 42,
 * so every call writes the same bytes. 0 or -1. (test_lm's GPT-2 checks, test_table's table
 * view of a GPT-2's wpe.) */
static inline int wr_gpt2(const char *dir, const char *dtype, int D, int H, int L, int V, int P)
{
    int F = 4 * D;
    mkdir(dir, 0700);
    char p[4400];
    snprintf(p, sizeof p, "%s/config.json", dir);
    char cfg[512];
    snprintf(cfg, sizeof cfg,
             "{\"architectures\": [\"GPT2LMHeadModel\"], \"model_type\": \"gpt2\", \"n_embd\": "
             "%d, \"n_head\": %d, \"n_layer\": %d, \"vocab_size\": %d, \"n_positions\": %d, "
             "\"n_ctx\": %d, \"n_inner\": null, \"activation_function\": \"gelu_new\", "
             "\"layer_norm_epsilon\": 1e-05}",
             D, H, L, V, P, P);
    if (wr_text(p, cfg) != 0) return -1;
    uint64_t seed = 42;
    wr_tensor t[64];
    float *bufs[64];
    char names[64][64];
    int n = 0;
#define ADD(nm, d0, d1, amp, one)                                                                  \
    do {                                                                                           \
        size_t cnt = (size_t)(d0) * (size_t)((d1) != 0 ? (d1) : 1);                                \
        bufs[n] = malloc(cnt * sizeof(float));                                                     \
        for (size_t i = 0; i < cnt; i++) bufs[n][i] = (one) + wr_rand(&seed, amp);                 \
        snprintf(names[n], sizeof names[n], "%s", nm);                                             \
        t[n] = (wr_tensor){names[n], (d1) != 0 ? 2 : 1, {(d0), (d1) != 0 ? (d1) : 1}, bufs[n]};    \
        n++;                                                                                       \
    } while (0)
    ADD("wte.weight", V, D, 200, 0.0f);
    ADD("wpe.weight", P, D, 100, 0.0f);
    for (int l = 0; l < L; l++) {
        char b[64];
#define NM(s) (snprintf(b, sizeof b, "h.%d.%s", l, s), b)
        ADD(NM("ln_1.weight"), D, 0, 64, 1.0f);
        ADD(NM("ln_1.bias"), D, 0, 64, 0.0f);
        ADD(NM("attn.c_attn.weight"), D, 3 * D, 150, 0.0f);
        ADD(NM("attn.c_attn.bias"), 3 * D, 0, 64, 0.0f);
        ADD(NM("attn.c_proj.weight"), D, D, 150, 0.0f);
        ADD(NM("attn.c_proj.bias"), D, 0, 64, 0.0f);
        ADD(NM("ln_2.weight"), D, 0, 64, 1.0f);
        ADD(NM("ln_2.bias"), D, 0, 64, 0.0f);
        ADD(NM("mlp.c_fc.weight"), D, F, 150, 0.0f);
        ADD(NM("mlp.c_fc.bias"), F, 0, 64, 0.0f);
        ADD(NM("mlp.c_proj.weight"), F, D, 100, 0.0f);
        ADD(NM("mlp.c_proj.bias"), D, 0, 64, 0.0f);
#undef NM
    }
    ADD("ln_f.weight", D, 0, 64, 1.0f);
    ADD("ln_f.bias", D, 0, 64, 0.0f);
#undef ADD
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    int rc = wr_safetensors(p, t, n, dtype, 1);
    for (int i = 0; i < n; i++) free(bufs[i]);
    return rc;
}

#endif
