/* lm.h: real language-model checkpoints and their forward passes.
 *
 * Formats: llama2.c `.bin` (the legacy header of 7 int32, a negative vocabulary meaning an
 * untied head, and the versioned float32 export "ak42" version 1) and Hugging Face folders
 * (config.json with model.safetensors, or shards listed in model.safetensors.index.json; F32,
 * F16 and BF16 tensors). Architectures: the Llama family (LlamaForCausalLM, MistralForCausalLM,
 * Qwen2ForCausalLM with its q/k/v biases) and GPT-2 (GPT2LMHeadModel).
 *
 * Weights: float32 tensors are used in place from a read-only memory map; F16/BF16 tensors (and
 * float32 ones at an unaligned offset) are converted into allocated float32 copies. Everything
 * that stays (maps and copies) is reserved in the memory budget (pe_mem_*) before any of it is
 * mapped, so a model that does not fit is refused with the sizes and --max-memory.
 *
 * Like llama2.c's run.c the structures are flat: a model is its config and a set of pointers into
 * the maps, a session is its KV cache and the scratch of one step. Nothing here prints or exits;
 * functions return PE_OK or a negative PE_E* status with one line in err.
 * Little-endian hosts only (the formats are little-endian and the maps are used in place).
 */
#ifndef PELAB_MODEL_LM_H
#define PELAB_MODEL_LM_H

#include <stddef.h>
#include <stdint.h>

#include "pe.h"

typedef enum { LM_ARCH_LLAMA = 0, LM_ARCH_GPT2 = 1 } lm_arch;
typedef enum { LM_FORMAT_LLAMA2C = 0, LM_FORMAT_HF = 1 } lm_format;

/* Limits a header or config may claim (each alone; products are checked for overflow too). */
#define LM_MAX_DIM    65536
#define LM_MAX_LAYERS 1024
#define LM_MAX_VOCAB  (1 << 22)
#define LM_MAX_CTX    (1 << 20)

typedef struct lm_config {
    lm_arch arch;
    lm_format format;
    char arch_name[64];  /* "LlamaForCausalLM", "GPT2LMHeadModel", "llama2.c legacy", ... */
    char model_type[32]; /* config.json's model_type ("llama", "qwen2", "gpt2"); "" for .bin */
    int dim;             /* hidden size (n_embd) */
    int hidden_dim;      /* MLP width (intermediate_size, n_inner) */
    int n_layers, n_heads, n_kv_heads, head_dim;
    int vocab;            /* rows of the embedding and of the head */
    int seq_len;          /* trained context: max_position_embeddings, n_positions, seq_len */
    double norm_eps;      /* RMSNorm / LayerNorm epsilon */
    int tied;             /* the head is the token embedding */
    int qkv_bias, o_bias; /* Llama family: biases on q/k/v (Qwen2, attention_bias) and on o */
    int mlp_bias;         /* Llama family: biases on gate/up/down (mlp_bias) */
    int bos_id, eos_id;   /* -1 when not known */
    /* Sliding-window attention (Mistral's sliding_window; Qwen2's with use_sliding_window, on
     * layers from max_window_layers on): query t sees keys j with t - j < window, as
     * transformers' masks do. 0 = every earlier key. */
    int window;
    int window_from; /* the first layer with the window */
    /* RoPE of the Llama family: dim = head_dim, len = seq_len, base, pairing (interleaved for
     * llama2.c, half-split for Hugging Face's rotate_half), rotary fraction and the config's
     * rope_scaling; unused for GPT-2. */
    pe_params rope;
} lm_config;

/* One linear map y = W x + b. W[o][i] is at w[o * ld + i], or with t = 1 (GPT-2's Conv1D, which
 * stores (in, out)) at w[i * ld + o]; ld lets GPT-2's fused c_attn be three views. A layer's
 * linears are packed once when the model opens (lm_open): p holds W in panels of 32 outputs,
 * panel q = outputs 32q.. as (in, 32) rows, zeros past out, and w is then NULL (its pages or
 * copy are given back). The output head is not packed (it shares the embedding when tied). */
typedef struct lm_linear {
    const float *w;
    const float *b; /* (out) or NULL */
    int in, out;
    size_t ld;
    int t;
    const float *p; /* packed panels, or NULL (then t must be 0) */
} lm_linear;

typedef struct lm_layer {
    const float *norm1, *norm1_b; /* (dim); _b: LayerNorm bias (GPT-2) */
    lm_linear q, k, v, o;         /* q (H hd, dim), k/v (KV hd, dim), o (dim, H hd) */
    const float *norm2, *norm2_b;
    lm_linear gate, up, down; /* Llama: SwiGLU gate/up (hid, dim), down (dim, hid); GPT-2: up =
                               * c_fc, down = c_proj, no gate */
} lm_layer;

typedef struct lm_map {
    void *base;
    size_t size;
} lm_map;

typedef struct lm_model {
    lm_config c;
    const float *tok_emb;           /* (vocab, dim) */
    const float *pos_emb;           /* GPT-2: (seq_len, dim) */
    lm_layer *layers;               /* (n_layers) */
    const float *norm_f, *norm_f_b; /* (dim) */
    const float *cls;               /* (vocab, dim); tok_emb when tied */
    /* storage: the maps and the float32 copies, and the bytes held in the memory budget */
    lm_map *maps;
    int n_maps;
    float **bufs;
    size_t *buf_n; /* floats of each copy (a freed copy: NULL, 0) */
    int n_bufs, cap_bufs;
    size_t held;
    struct lm_spare *spare; /* the block of the last session freed, for the next (lm_forward.c) */
    char path[1024];
} lm_model;

/* Open a checkpoint: a llama2.c .bin file, a Hugging Face folder, or a file inside one
 * (config.json, model.safetensors, a shard or the index). Everything is validated before the
 * weights are mapped: sizes against the header or config.json, tensor offsets and shapes, the
 * architecture; the maps and copies are reserved in the memory budget first. *out is
 * allocated; lm_close frees it. Returns PE_OK, PE_EINVAL (bad or unsupported file), PE_ERANGE
 * (over the memory budget) or PE_ENOMEM. */
int lm_open(const char *path, lm_model **out, char *err, size_t errlen);
void lm_close(lm_model *m);

/* For `pelab bench`: GFLOP/s (2 in out tokens per second, best of 5) of the layers' linear
 * kernel on a random (out, in) W packed as lm_open packs it, over `tokens` tokens on threads
 * threads; 0 when out of memory. */
double lm_linear_gflops(int in, int out, int tokens, int threads);

/* Parameters counted from the config (each tensor once; a tied head once). */
size_t lm_param_count(const lm_config *c);

/* Is path something lm_open would try (a .bin file, a folder with config.json, or a file inside
 * one)? Only looks at names and existence; lm_open does the checking. */
int lm_probe(const char *path);

/* ---- sessions: a KV cache and one forward ------------------------------------------------- */

typedef struct lm_session {
    const lm_model *m;
    int ctx;          /* positions the cache holds */
    int n;            /* tokens in the cache */
    int offset;       /* position of the first token (the shift experiment); 0 by default */
    int threads;      /* >= 1 */
    pe_params rope;   /* RoPE in force (Llama family) */
    double *inv_freq; /* (rot_dim / 2) */
    double rope_attn; /* attention factor, multiplies cos and sin (HF attention_scaling) */
    int rot_dim;
    int dyn_set;         /* lm_session_dynamic set this sequence's length (until a reset) */
    float *kc, *vc, *qc; /* (layer, ctx, KV hd), (layer, ctx, KV hd), (layer, ctx, H hd) */
    float *logits;       /* (vocab): the last position's */
    /* scratch for a pass of up to LM_PASS tokens */
    float *x, *xb, *xb2, *q, *k, *v, *hb, *hb2, *att, *cs;
    float *block;   /* the one allocation all the arrays above are carved from */
    size_t block_n; /* its floats */
    size_t used;    /* floats of it carved */
    size_t held;
} lm_session;

/* Tokens one pass through the layers takes at once: every weight is read once a pass, and
 * lm_forward splits longer inputs into passes (the results do not depend on it). A caller
 * feeding a long input in blocks loses nothing with blocks of a multiple of it. */
#define LM_PASS 128

/* A session of ctx positions (1..LM_MAX_CTX) with threads worker threads (0: the CPUs free now).
 * The cache and scratch are reserved in the memory budget. rope NULL: the model's own. */
int lm_session_init(lm_session *s, const lm_model *m, int ctx, int threads, char *err,
                    size_t errlen);
void lm_session_free(lm_session *s);
/* Empty the cache (the next token is at position offset). */
void lm_session_reset(lm_session *s);
/* Replace the RoPE parameters (base, pairing, scaling) used for the tokens that follow; the
 * caller resets and replays the cache when earlier keys should change too. Llama family only;
 * validated with pe/'s RoPE checks (dim must stay the head dimension). */
int lm_session_set_rope(lm_session *s, const pe_params *rope, char *err, size_t errlen);

/* Dynamic NTK and LongRoPE (the RoPE in force has scaling DYNAMIC or LONGROPE; else nothing
 * happens, 0): use the frequencies of a forward whose largest position + 1 is len (dynamic:
 * transformers' base recomputed from seq_len = len once len passes L0 = original_ctx, the
 * trained ones at or below L0; LongRoPE: long_factor once len passes L0, short_factor at or
 * below it), for the tokens that follow. 1 when they changed (the caller replays the cache if
 * earlier keys should change too), 0 when not, < 0 on error. A session starts at the trained
 * frequencies (short_factor). Until the next reset, lm_forward then only grows them (a window
 * fed in blocks keeps its length). */
int lm_session_dynamic(lm_session *s, long len, char *err, size_t errlen);

/* Append n tokens (ids in 0..vocab-1) at positions offset + s->n ..., running the forward pass;
 * logits (n, vocab) receives every position's logits when not NULL; s->logits always holds the
 * last one's. Under dynamic NTK a call is one transformers forward with a KV cache: when its
 * last position + 1 passes the length the frequencies were computed for, they grow to it (and
 * return to the trained ones for a sequence below L0) before its tokens are rotated; cached keys
 * keep the frequencies they were rotated with, as HF's cache keeps them. Under LongRoPE the
 * same with the factor sets: long_factor from the call whose last position + 1 passes L0,
 * short_factor for a sequence at or below L0. PE_EINVAL for a bad id,
 * PE_ERANGE when the cache is full, PE_ECANCELED when the work hook asks to stop (the cache then
 * holds the tokens done before). */
int lm_forward(lm_session *s, const int *tokens, int n, float *logits, char *err, size_t errlen);

/* The attention weights of (layer, head) for the token at cache index t (< s->n) over the keys
 * 0..t, recomputed from the cached rotated q and k exactly as the forward computed them; out
 * has t + 1 entries. PE_EINVAL for an index out of range. */
int lm_attention_row(const lm_session *s, int layer, int head, int t, float *out, char *err,
                     size_t errlen);

/* q of (layer, head) and k of the kv head it reads, for the token at cache index t (< s->n), as
 * the projections made them (biases included, before the RoPE rotation: the cache keeps them
 * rotated, and the rotation is undone with the very cos and sin the forward used). q and k have
 * head_dim entries; either may be NULL. PE_EINVAL for an index out of range. */
int lm_qk(const lm_session *s, int layer, int head, int t, float *q, float *k, char *err,
          size_t errlen);

/* Index of the largest of n logits (the first when tied). */
int lm_argmax(const float *logits, int n);

/* ---- behind the model interface (lmi_lm.c) ------------------------------------------------- */

struct lmi_model;
/* The lm_model behind an lmi_model opened by the "llama2c" or "hf" architecture, else NULL. */
const lm_model *lm_of_lmi(const struct lmi_model *m);
/* Use the tokenizer at path (a file, or a folder to search) for an lmi_model of those
 * architectures instead of the one found beside it (--tokenizer). PE_EINVAL with one line when
 * it cannot be read, has more tokens than the model, or the model is not a real checkpoint. */
int lm_lmi_set_tokenizer(struct lmi_model *m, const char *path, char *err, size_t errlen);

/* ---- safetensors and llama2.c headers (exposed for tests and the fuzz targets) ------------- */

typedef enum { LM_DT_F32 = 0, LM_DT_F16 = 1, LM_DT_BF16 = 2 } lm_dtype;

typedef struct lm_st_tensor {
    char name[128];
    lm_dtype dtype;
    int ndim;
    int64_t shape[4];
    uint64_t begin, end; /* byte offsets into the data that follows the header */
} lm_st_tensor;

typedef struct lm_st_header {
    uint64_t header_len; /* JSON bytes after the 8-byte length */
    uint64_t data_len;   /* bytes after the header */
    lm_st_tensor *t;
    int n;
} lm_st_header;

/* Largest safetensors JSON header accepted (the safetensors library's own limit is 100 MB; real
 * headers are a few hundred KiB). */
#define LM_ST_MAX_HEADER ((uint64_t)16 << 20)

/* Parse the header of a safetensors file of file_size bytes from its first bytes (buf, len >=
 * min(file_size, 8 + header_len); a shorter buf is refused as truncated). Checks the JSON, the
 * dtypes, shapes and that every tensor's offsets lie inside the data, match its size and do
 * not overlap another's. name labels messages. */
int lm_st_parse(const unsigned char *buf, size_t len, uint64_t file_size, const char *name,
                lm_st_header *h, char *err, size_t errlen);
void lm_st_free(lm_st_header *h);

/* Check a llama2.c header (buf holds the first len bytes of a file of file_size bytes) and fill
 * c; *data_off receives where the weights start. Refuses impossible sizes, a file whose size
 * does not match the header, and unknown versions. */
int lm_llama2c_parse(const unsigned char *buf, size_t len, uint64_t file_size, const char *name,
                     lm_config *c, size_t *data_off, char *err, size_t errlen);

#endif
