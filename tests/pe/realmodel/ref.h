/* ref.h: the tests' own reading of checkpoints and a straightforward double-precision forward,
 * written from the formulas (transformers' modeling_llama / modeling_gpt2, llama2.c run.c) and
 * sharing no code with pe/model, so that pelab's loaders and kernels are checked against an
 * independent computation. Header-only; slow and simple on purpose. */
#ifndef PELAB_TEST_REF_H
#define PELAB_TEST_REF_H

#include <cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ref_layer {
    double *n1, *n1b, *n2, *n2b;
    double *wq, *wk, *wv, *wo, *bq, *bk, *bv, *bo; /* Llama: (out, in) */
    double *w1, *w2, *w3;                          /* Llama: gate (F, D), down (D, F), up (F, D) */
    double *attn_w, *attn_b, *proj_w, *proj_b;     /* GPT-2: (in, out) as stored */
    double *fc_w, *fc_b, *mproj_w, *mproj_b;
} ref_layer;

typedef struct ref_model {
    int gpt2, half; /* half: rotate_half pairing (HF); else interleaved (run.c) */
    int D, F, L, H, KV, hd, V, P;
    double eps, base;
    double pos_div;    /* linear RoPE scaling: positions divided by this (0 or 1: none) */
    const double *ext; /* LongRoPE: theta_k divided by ext[k] (NULL: none) */
    double amp;        /* LongRoPE/YaRN attention factor: the rotated q and k times it (0: 1) */
    int window; /* sliding-window attention: query t sees keys j with t - j < window (0: all) */
    double *emb, *pos, *nf, *nfb, *cls;
    ref_layer *ly;
    int ctx, n;
    double *kc, *vc, *qc; /* (L, ctx, H hd) each (k, v: only KV hd used) */
} ref_model;

static inline double *ref_alloc(size_t n)
{
    double *p = calloc(n ? n : 1, sizeof *p);
    if (!p) abort();
    return p;
}

/* count float32 values at float offset off of a raw file. */
static inline double *ref_bin_floats(FILE *f, size_t byte_off, size_t count)
{
    double *d = ref_alloc(count);
    float *tmp = malloc(count * sizeof *tmp);
    if (!tmp || fseek(f, (long)byte_off, SEEK_SET) != 0 || fread(tmp, 4, count, f) != count) {
        free(tmp);
        free(d);
        return NULL;
    }
    for (size_t i = 0; i < count; i++) d[i] = tmp[i];
    free(tmp);
    return d;
}

/* llama2.c legacy .bin, read by the layout of export.py's legacy_export. */
static inline int ref_load_llama2c(ref_model *r, const char *path)
{
    memset(r, 0, sizeof *r);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    int32_t h[7];
    if (fread(h, 4, 7, f) != 7) {
        fclose(f);
        return -1;
    }
    r->D = h[0], r->F = h[1], r->L = h[2], r->H = h[3], r->KV = h[4];
    r->V = abs(h[5]), r->P = h[6];
    int shared = h[5] > 0;
    r->hd = r->D / r->H;
    r->eps = 1e-5, r->base = 10000.0;
    size_t D = (size_t)r->D, F = (size_t)r->F, kv = (size_t)r->KV * (size_t)r->hd;
    size_t off = 28;
#define NEXT(n) (off += 4 * (n), ref_bin_floats(f, off - 4 * (n), (n)))
    r->emb = NEXT((size_t)r->V * D);
    r->ly = calloc((size_t)r->L, sizeof *r->ly);
    for (int l = 0; l < r->L; l++) r->ly[l].n1 = NEXT(D);
    for (int l = 0; l < r->L; l++) r->ly[l].wq = NEXT(D * D);
    for (int l = 0; l < r->L; l++) r->ly[l].wk = NEXT(kv * D);
    for (int l = 0; l < r->L; l++) r->ly[l].wv = NEXT(kv * D);
    for (int l = 0; l < r->L; l++) r->ly[l].wo = NEXT(D * D);
    for (int l = 0; l < r->L; l++) r->ly[l].n2 = NEXT(D);
    for (int l = 0; l < r->L; l++) r->ly[l].w1 = NEXT(F * D);
    for (int l = 0; l < r->L; l++) r->ly[l].w2 = NEXT(D * F);
    for (int l = 0; l < r->L; l++) r->ly[l].w3 = NEXT(F * D);
    r->nf = NEXT(D);
    off += 4 * (size_t)r->P * (size_t)r->hd;
    r->cls = shared ? r->emb : NEXT((size_t)r->V * D);
#undef NEXT
    fclose(f);
    return r->cls && r->nf ? 0 : -1;
}

/* A safetensors file read with cJSON and fread, one tensor at a time. */
typedef struct ref_st {
    FILE *f;
    cJSON *hdr;
    size_t data0;
} ref_st;

static inline int ref_st_open(ref_st *s, const char *path)
{
    memset(s, 0, sizeof *s);
    s->f = fopen(path, "rb");
    if (!s->f) return -1;
    uint64_t n = 0;
    unsigned char b[8];
    if (fread(b, 1, 8, s->f) != 8) return -1;
    for (int i = 7; i >= 0; i--) n = n << 8 | b[i];
    char *j = malloc(n + 1);
    if (!j || fread(j, 1, n, s->f) != n) {
        free(j);
        return -1;
    }
    j[n] = 0;
    s->hdr = cJSON_Parse(j);
    free(j);
    s->data0 = 8 + n;
    return s->hdr ? 0 : -1;
}

static inline void ref_st_close(ref_st *s)
{
    if (s->f) fclose(s->f);
    cJSON_Delete(s->hdr);
}

static inline double *ref_st_get(ref_st *s, const char *name)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(s->hdr, name);
    if (!t) return NULL;
    const char *dt = cJSON_GetObjectItemCaseSensitive(t, "dtype")->valuestring;
    const cJSON *of = cJSON_GetObjectItemCaseSensitive(t, "data_offsets");
    size_t b = (size_t)of->child->valuedouble, e = (size_t)of->child->next->valuedouble;
    unsigned char *raw = malloc(e - b + 1);
    if (fseek(s->f, (long)(s->data0 + b), SEEK_SET) != 0 || fread(raw, 1, e - b, s->f) != e - b) {
        free(raw);
        return NULL;
    }
    int es = strcmp(dt, "F32") == 0 ? 4 : 2;
    size_t n = (e - b) / (size_t)es;
    double *d = ref_alloc(n);
    for (size_t i = 0; i < n; i++) {
        if (es == 4) {
            float v;
            memcpy(&v, raw + 4 * i, 4);
            d[i] = v;
        } else {
            unsigned h = raw[2 * i] | (unsigned)raw[2 * i + 1] << 8;
            if (strcmp(dt, "BF16") == 0) {
                uint32_t u = (uint32_t)h << 16;
                float v;
                memcpy(&v, &u, 4);
                d[i] = v;
            } else { /* F16: sign, 5-bit exponent, 10-bit fraction */
                int ex = (h >> 10) & 31, fr = h & 1023;
                double v = ex == 0 ? ldexp(fr, -24) : ldexp(1024 + fr, ex - 25);
                d[i] = h & 0x8000 ? -v : v;
            }
        }
    }
    free(raw);
    return d;
}

/* A Hugging Face Llama folder with one model.safetensors; sizes from config.json. */
static inline int ref_json_int(const cJSON *c, const char *k, int dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, k);
    return cJSON_IsNumber(v) ? (int)v->valuedouble : dflt;
}

static cJSON *ref_read_json(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return cJSON_Parse(buf);
}

static inline int ref_load_hf(ref_model *r, const char *dir)
{
    memset(r, 0, sizeof *r);
    char p[8192];
    snprintf(p, sizeof p, "%s/config.json", dir);
    cJSON *c = ref_read_json(p);
    if (!c) return -1;
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(c, "model_type");
    r->gpt2 = cJSON_IsString(mt) && strcmp(mt->valuestring, "gpt2") == 0;
    ref_st st;
    snprintf(p, sizeof p, "%s/model.safetensors", dir);
    if (ref_st_open(&st, p) != 0) {
        cJSON_Delete(c);
        return -1;
    }
    char n[256];
    if (r->gpt2) {
        r->D = ref_json_int(c, "n_embd", 0), r->L = ref_json_int(c, "n_layer", 0);
        r->H = r->KV = ref_json_int(c, "n_head", 0), r->V = ref_json_int(c, "vocab_size", 0);
        r->P = ref_json_int(c, "n_positions", 0), r->F = 4 * r->D, r->eps = 1e-5;
        r->hd = r->D / r->H;
        r->emb = ref_st_get(&st, "wte.weight"), r->pos = ref_st_get(&st, "wpe.weight");
        r->nf = ref_st_get(&st, "ln_f.weight"), r->nfb = ref_st_get(&st, "ln_f.bias");
        r->cls = r->emb;
        r->ly = calloc((size_t)r->L, sizeof *r->ly);
        for (int l = 0; l < r->L; l++) {
            ref_layer *y = &r->ly[l];
#define G(field, s) (snprintf(n, sizeof n, "h.%d.%s", l, s), y->field = ref_st_get(&st, n))
            G(n1, "ln_1.weight"), G(n1b, "ln_1.bias"), G(n2, "ln_2.weight"), G(n2b, "ln_2.bias");
            G(attn_w, "attn.c_attn.weight"), G(attn_b, "attn.c_attn.bias");
            G(proj_w, "attn.c_proj.weight"), G(proj_b, "attn.c_proj.bias");
            G(fc_w, "mlp.c_fc.weight"), G(fc_b, "mlp.c_fc.bias");
            G(mproj_w, "mlp.c_proj.weight"), G(mproj_b, "mlp.c_proj.bias");
#undef G
        }
    } else {
        r->half = 1;
        r->D = ref_json_int(c, "hidden_size", 0), r->F = ref_json_int(c, "intermediate_size", 0);
        r->L = ref_json_int(c, "num_hidden_layers", 0);
        r->H = ref_json_int(c, "num_attention_heads", 0);
        r->KV = ref_json_int(c, "num_key_value_heads", r->H);
        r->V = ref_json_int(c, "vocab_size", 0);
        r->P = ref_json_int(c, "max_position_embeddings", 0);
        r->hd = r->D / r->H;
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(c, "rms_norm_eps");
        r->eps = cJSON_IsNumber(e) ? e->valuedouble : 1e-6;
        const cJSON *th = cJSON_GetObjectItemCaseSensitive(c, "rope_theta");
        r->base = cJSON_IsNumber(th) ? th->valuedouble : 10000.0;
        const cJSON *tie = cJSON_GetObjectItemCaseSensitive(c, "tie_word_embeddings");
        r->emb = ref_st_get(&st, "model.embed_tokens.weight");
        r->nf = ref_st_get(&st, "model.norm.weight");
        r->cls = cJSON_IsTrue(tie) ? r->emb : ref_st_get(&st, "lm_head.weight");
        r->ly = calloc((size_t)r->L, sizeof *r->ly);
        for (int l = 0; l < r->L; l++) {
            ref_layer *y = &r->ly[l];
#define G(field, s)                                                                                \
    (snprintf(n, sizeof n, "model.layers.%d.%s", l, s), y->field = ref_st_get(&st, n))
            G(n1, "input_layernorm.weight"), G(n2, "post_attention_layernorm.weight");
            G(wq, "self_attn.q_proj.weight"), G(wk, "self_attn.k_proj.weight");
            G(wv, "self_attn.v_proj.weight"), G(wo, "self_attn.o_proj.weight");
            G(bq, "self_attn.q_proj.bias"), G(bk, "self_attn.k_proj.bias");
            G(bv, "self_attn.v_proj.bias");
            G(w1, "mlp.gate_proj.weight"), G(w3, "mlp.up_proj.weight");
            G(w2, "mlp.down_proj.weight");
#undef G
        }
    }
    ref_st_close(&st);
    cJSON_Delete(c);
    return r->emb && r->cls && r->nf ? 0 : -1;
}

static inline void ref_begin(ref_model *r, int ctx)
{
    size_t n = (size_t)r->L * (size_t)ctx * (size_t)r->H * (size_t)r->hd;
    r->ctx = ctx, r->n = 0;
    r->kc = ref_alloc(n), r->vc = ref_alloc(n), r->qc = ref_alloc(n);
}

/* y (out) = W x (+ b), W (out, in) row-major. */
static inline void ref_mv(double *y, const double *w, const double *b, const double *x, int out,
                          int in)
{
    for (int o = 0; o < out; o++) {
        double s = b ? b[o] : 0.0;
        for (int i = 0; i < in; i++) s += w[(size_t)o * (size_t)in + (size_t)i] * x[i];
        y[o] = s;
    }
}

/* y (out) = x W (+ b), W (in, out): GPT-2's Conv1D; W has ld columns, this map's start at c0. */
static inline void ref_conv(double *y, const double *w, const double *b, const double *x, int in,
                            int out, int ld, int c0)
{
    for (int o = 0; o < out; o++) {
        double s = b ? b[c0 + o] : 0.0;
        for (int i = 0; i < in; i++) s += x[i] * w[(size_t)i * (size_t)ld + (size_t)(c0 + o)];
        y[o] = s;
    }
}

static inline void ref_norm(double *y, const double *x, const double *w, const double *b, int n,
                            double eps, int layer)
{
    double mean = 0.0, ss = 0.0;
    if (layer) {
        for (int i = 0; i < n; i++) mean += x[i];
        mean /= n;
    }
    for (int i = 0; i < n; i++) ss += (x[i] - mean) * (x[i] - mean);
    double r = 1.0 / sqrt(ss / n + eps);
    for (int i = 0; i < n; i++) y[i] = (x[i] - mean) * r * w[i] + (b ? b[i] : 0.0);
}

static inline void ref_rope(double *v, int hd, int half, double base, double pos, const double *ext,
                            double amp)
{
    double m = amp > 0 ? amp : 1.0;
    for (int k = 0; k < hd / 2; k++) {
        double th = pow(base, -2.0 * k / hd) / (ext ? ext[k] : 1.0), a = pos * th;
        int i0 = half ? k : 2 * k, i1 = half ? k + hd / 2 : 2 * k + 1;
        double x0 = v[i0], x1 = v[i1];
        v[i0] = m * (x0 * cos(a) - x1 * sin(a));
        v[i1] = m * (x0 * sin(a) + x1 * cos(a));
    }
}

/* softmax over keys 0..t of (layer, head) from the cache. */
static inline void ref_attn_row(const ref_model *r, int l, int h, int t, double *p)
{
    size_t stride = (size_t)r->H * (size_t)r->hd, base = (size_t)l * (size_t)r->ctx * stride;
    int kvh = h / (r->H / r->KV);
    const double *q = r->qc + base + (size_t)t * stride + (size_t)h * (size_t)r->hd;
    double mx = -INFINITY, sum = 0.0;
    for (int j = 0; j <= t; j++) {
        if (r->window > 0 && t - j >= r->window) {
            p[j] = -INFINITY; /* outside the window: weight exp(-inf) = 0 */
            continue;
        }
        const double *k = r->kc + base + (size_t)j * stride + (size_t)kvh * (size_t)r->hd;
        double s = 0.0;
        for (int i = 0; i < r->hd; i++) s += q[i] * k[i];
        p[j] = s / sqrt((double)r->hd);
        if (p[j] > mx) mx = p[j];
    }
    for (int j = 0; j <= t; j++) sum += (p[j] = exp(p[j] - mx));
    for (int j = 0; j <= t; j++) p[j] /= sum;
}

/* One token at position r->n; logits (V). */
static inline void ref_step(ref_model *r, int tok, double *logits)
{
    int D = r->D, F = r->F, hd = r->hd, H = r->H, KV = r->KV, t = r->n;
    size_t stride = (size_t)H * (size_t)hd;
    double *x = ref_alloc((size_t)D), *h = ref_alloc((size_t)D), *a = ref_alloc(stride),
           *o = ref_alloc((size_t)D), *f1 = ref_alloc((size_t)F), *f3 = ref_alloc((size_t)F),
           *p = ref_alloc((size_t)r->ctx);
    for (int i = 0; i < D; i++)
        x[i] = r->emb[(size_t)tok * (size_t)D + (size_t)i] +
               (r->gpt2 ? r->pos[(size_t)t * (size_t)D + (size_t)i] : 0.0);
    for (int l = 0; l < r->L; l++) {
        const ref_layer *y = &r->ly[l];
        size_t base = (size_t)l * (size_t)r->ctx * stride + (size_t)t * stride;
        double *q = r->qc + base, *k = r->kc + base, *v = r->vc + base;
        ref_norm(h, x, y->n1, y->n1b, D, r->eps, r->gpt2);
        if (r->gpt2) {
            ref_conv(q, y->attn_w, y->attn_b, h, D, D, 3 * D, 0);
            ref_conv(k, y->attn_w, y->attn_b, h, D, D, 3 * D, D);
            ref_conv(v, y->attn_w, y->attn_b, h, D, D, 3 * D, 2 * D);
        } else {
            ref_mv(q, y->wq, y->bq, h, H * hd, D);
            ref_mv(k, y->wk, y->bk, h, KV * hd, D);
            ref_mv(v, y->wv, y->bv, h, KV * hd, D);
            double pos = r->pos_div > 0 ? t / r->pos_div : t;
            for (int hh = 0; hh < H; hh++)
                ref_rope(q + hh * hd, hd, r->half, r->base, pos, r->ext, r->amp);
            for (int hh = 0; hh < KV; hh++)
                ref_rope(k + hh * hd, hd, r->half, r->base, pos, r->ext, r->amp);
        }
        for (int hh = 0; hh < H; hh++) {
            ref_attn_row(r, l, hh, t, p);
            int kvh = hh / (H / KV);
            for (int i = 0; i < hd; i++) {
                double s = 0.0;
                for (int j = 0; j <= t; j++)
                    s += p[j] * r->vc[(size_t)l * (size_t)r->ctx * stride + (size_t)j * stride +
                                      (size_t)kvh * (size_t)hd + (size_t)i];
                a[hh * hd + i] = s;
            }
        }
        if (r->gpt2)
            ref_conv(o, y->proj_w, y->proj_b, a, D, D, D, 0);
        else
            ref_mv(o, y->wo, NULL, a, D, H * hd);
        for (int i = 0; i < D; i++) x[i] += o[i];
        ref_norm(h, x, y->n2, y->n2b, D, r->eps, r->gpt2);
        if (r->gpt2) {
            ref_conv(f1, y->fc_w, y->fc_b, h, D, F, F, 0);
            for (int i = 0; i < F; i++) {
                double u = f1[i];
                f1[i] = 0.5 * u * (1.0 + tanh(0.79788456080286535588 * (u + 0.044715 * u * u * u)));
            }
            ref_conv(o, y->mproj_w, y->mproj_b, f1, F, D, D, 0);
        } else {
            ref_mv(f1, y->w1, NULL, h, F, D);
            ref_mv(f3, y->w3, NULL, h, F, D);
            for (int i = 0; i < F; i++) f1[i] = f1[i] / (1.0 + exp(-f1[i])) * f3[i];
            ref_mv(o, y->w2, NULL, f1, D, F);
        }
        for (int i = 0; i < D; i++) x[i] += o[i];
    }
    ref_norm(h, x, r->nf, r->nfb, D, r->eps, r->gpt2);
    ref_mv(logits, r->cls, NULL, h, r->V, D);
    r->n++;
    free(x), free(h), free(a), free(o), free(f1), free(f3), free(p);
}

static inline void ref_free(ref_model *r)
{
    for (int l = 0; r->ly && l < r->L; l++) {
        ref_layer *y = &r->ly[l];
        double *all[] = {y->n1,     y->n1b,  y->n2,   y->n2b,     y->wq,     y->wk,
                         y->wv,     y->wo,   y->bq,   y->bk,      y->bv,     y->bo,
                         y->w1,     y->w2,   y->w3,   y->attn_w,  y->attn_b, y->proj_w,
                         y->proj_b, y->fc_w, y->fc_b, y->mproj_w, y->mproj_b};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) free(all[i]);
    }
    if (r->cls != r->emb) free(r->cls);
    free(r->emb), free(r->pos), free(r->nf), free(r->nfb), free(r->ly);
    free(r->kc), free(r->vc), free(r->qc);
    memset(r, 0, sizeof *r);
}

#endif
