/* hf_config.h: a Hugging Face config.json (or a GGUF header, gguf_meta.h) as the numbers that
 * decide a model's rotary embedding, read the way transformers' rope utilities read them.
 *
 * Read: hidden_size, num_attention_heads, num_key_value_heads, head_dim, max_position_embeddings,
 * rope_theta (alias rotary_emb_base), partial_rotary_factor (alias rotary_pct; also inside
 * rope_parameters), qk_rope_head_dim (MLA: DeepSeek-V2/V3, Kimi-K2 rotate only that part of a
 * head, in interleaved pairs), rope_scaling / rope_parameters {rope_type | type, factor,
 * original_max_position_embeddings, beta_fast, beta_slow, mscale, mscale_all_dim, truncate,
 * low_freq_factor, high_freq_factor, short_factor, long_factor, attention_factor}, per-layer-type
 * rope_parameters ({"full_attention": {...}, "sliding_attention": {...}}, Transformers v5,
 * Gemma 4) with global_head_dim, rope_type "proportional" (p-RoPE), rope_local_base_freq (Gemma 3's
 * sliding layers), original_max_position_embeddings at the top level (Phi-3), text_config
 * (multimodal wrappers), and the Gemma 2/3 model classes' defaults for what a file leaves out.
 * rope_theta inside rope_parameters wins over the top-level one (Transformers v5).
 *
 * Warned (listed in `unmodelled`, read but not part of pelab's model): mrope_section (multimodal
 * position ids; text alone rotates as plain RoPE), no_rope_layers / NoPE layers,
 * attn_temperature_tuning, floor_scale, attn_scale, llama_4_scaling_beta, DeepSeek's softmax
 * mscale (mscale_all_dim also scales the softmax by mscale^2), sliding-window layers sharing one
 * RoPE. Refused: ChatGLM / GLM (remote code, its own rotary layout), unknown rope types.
 *
 * Nothing here prints or exits; every failure is one line in err that names the file and the
 * field, e.g. "qwen.json: rope_theta: expected a number, got a string". */
#ifndef PELAB_PE_HF_CONFIG_H
#define PELAB_PE_HF_CONFIG_H

#include <stddef.h>

#include "pe.h"

/* Largest config.json pe_hf_config_load reads; real ones are a few KiB. */
#define PE_HF_CONFIG_MAX_BYTES ((size_t)4 << 20)
/* Longest context a config may declare (Llama 4 Scout: 10485760). The figures' own --len stays
 * PE_MAX_LEN; this bounds L0 and the target context. */
#define PE_HF_MAX_CONTEXT     16777216
#define PE_HF_MAX_LAYER_TYPES 4

/* One kind of attention layer's RoPE (most models have one kind; Gemma 3/4 two). */
typedef struct pe_hf_layer_type {
    char name[32];      /* "full_attention", "sliding_attention"; "all" for a single kind */
    char rope_type[32]; /* as written: "default", "linear", "yarn", "proportional", ... */
    int head_dim;       /* this kind's head dimension (Gemma 4 full: global_head_dim) */
    double rope_theta;  /* its base */
    double partial_rotary_factor; /* (0, 1] */
    int original_ctx;             /* L0: the context the frequencies were trained at */
    double target_ctx;            /* the context the model serves, as HF reads it (see .c) */
    pe_params params;             /* pe's parameters for this kind (len = min(max_position, ...)) */
} pe_hf_layer_type;

typedef struct pe_hf_config {
    char name[128];       /* _name_or_path, else model_type, else the file name without .json */
    char model_type[64];  /* "llama", "gpt_neox", ...; "" when absent */
    int hidden_size;      /* d_model; 0 when absent */
    int num_heads;        /* num_attention_heads, >= 1 */
    int num_kv_heads;     /* num_key_value_heads; num_heads when absent */
    int head_dim;         /* the current layer kind's rotary head: head_dim, hidden/heads, or
                           * MLA's qk_rope_head_dim */
    int mla;              /* 1 when qk_rope_head_dim set the head (DeepSeek-V2/V3, Kimi-K2) */
    int max_position;     /* max_position_embeddings (or a class default); 0 when absent */
    int from_text_config; /* 1 when the fields came from the nested text_config object */
    int class_defaults;   /* 1 when a Gemma class default filled a field the file left out */
    /* The current layer kind (layer_type below), copied from layer_types[layer_type]. */
    double rope_theta;
    double partial_rotary_factor;
    char scaling_type[32]; /* rope type as written, "none" without one */
    int original_ctx;      /* L0 */
    double target_ctx;     /* target context */
    pe_params params;
    int n_layer_types;
    int layer_type; /* index of the current kind; full_attention when there is one */
    pe_hf_layer_type layer_types[PE_HF_MAX_LAYER_TYPES];
    char unmodelled[320]; /* "mrope_section, no_rope_layers" (comma list), "" when none */
} pe_hf_config;

/* Parse json_text (NUL-terminated). source_name labels messages and is the name of last resort.
 * On failure *out is left untouched. Returns PE_OK, PE_EINVAL or PE_ENOMEM; err gets one line. */
int pe_hf_config_parse(const char *json_text, const char *source_name, pe_hf_config *out, char *err,
                       size_t errlen);

/* Read the file at path (at most PE_HF_CONFIG_MAX_BYTES; no NUL bytes) and parse it.
 * (config_load.h's pe_config_load also takes GGUF files.) */
int pe_hf_config_load(const char *path, pe_hf_config *out, char *err, size_t errlen);

/* Make the layer kind called name current (copies its fields to the top-level ones). An unknown
 * name fails with a line listing the kinds. */
int pe_hf_config_select(pe_hf_config *c, const char *name, char *err, size_t errlen);

/* A key given twice in any object of root (JSON readers disagree on which counts): PE_EINVAL
 * with one line naming source_name and the key. Used by the model loaders for the fields this
 * module does not read. */
struct cJSON;
int pe_hf_json_unique_keys(const struct cJSON *root, const char *source_name, char *err,
                           size_t errlen);

/* Used by the GGUF reader: fill the derived fields (L0, target, pe params and their checks) of a
 * config whose raw fields are set, as for a config.json without rope_parameters. Internal. */
int pe_hf_config_finish_simple(pe_hf_config *m, const char *src, const char *rope_type,
                               double factor, int l0, double attn_factor, char *err, size_t errlen);

#endif
