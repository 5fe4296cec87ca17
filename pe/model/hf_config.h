/* hf_config.h: read a Hugging Face style config.json into pelab's parameters.
 *
 * A model's config.json names the numbers that decide its rotary embedding: the head dimension,
 * the frequency base, how much of each head is rotated and how the context was extended. This
 * module reads them with libcjson (a small, widely packaged parser, so pelab carries no JSON code
 * of its own) and maps them onto pe_params with transformers' own defaults and field names:
 *
 *   hidden_size, num_attention_heads, num_key_value_heads, head_dim, max_position_embeddings,
 *   rope_theta (alias rotary_emb_base), partial_rotary_factor (alias rotary_pct),
 *   rope_scaling {rope_type | type, factor, original_max_position_embeddings, beta_fast,
 *   beta_slow, mscale, mscale_all_dim, truncate, low_freq_factor, high_freq_factor,
 *   short_factor, long_factor, attention_factor (YaRN and longrope: transformers' llama3 always
 *   uses 1.0)}, original_max_position_embeddings at the top level (longrope, as Phi-3 has it),
 *   rope_parameters (the newer name of rope_scaling, which may also hold rope_theta),
 *   text_config (multimodal wrappers).
 *
 * Other fields are ignored. Nothing here prints or exits; every failure is one line in err that
 * names the file and the field, e.g. "qwen.json: rope_theta: expected a number, got a string".
 */
#ifndef PELAB_MODEL_HF_CONFIG_H
#define PELAB_MODEL_HF_CONFIG_H

#include <stddef.h>

#include "pe.h"

/* Largest config.json pe_hf_config_load reads; real ones are a few KiB. */
#define PE_HF_CONFIG_MAX_BYTES ((size_t)4 << 20)

/* What a config says about a model, as written, plus the pe_params derived from it. */
typedef struct pe_hf_config {
    char name[128];      /* _name_or_path, else model_type, else the file name without .json */
    char model_type[64]; /* "llama", "gpt_neox", ...; "" when absent */
    int hidden_size;     /* d_model; 0 when absent (head_dim given instead) */
    int num_heads;       /* num_attention_heads, >= 1 */
    int num_kv_heads;    /* num_key_value_heads; num_heads when absent (no grouping) */
    int head_dim;        /* head_dim if present, else hidden_size / num_heads; even */
    int max_position;    /* max_position_embeddings; 0 when absent */
    double rope_theta;   /* 10000 when absent, as in transformers */
    double partial_rotary_factor; /* fraction of head_dim rotated, (0, 1]; 1 when absent */
    char scaling_type[32]; /* rope type as written ("linear", "yarn", ...), "none" without one */
    int from_text_config;  /* 1 when the fields came from the nested text_config object */
    /* pe_params_default() then: dim = head_dim, base = rope_theta, rotary_frac, heads = num_heads,
     * len = max_position (left at the default when absent), pairing = half-split (transformers'
     * rotate_half), scaling from rope_scaling. */
    pe_params params;
} pe_hf_config;

/* Read the file at path (at most PE_HF_CONFIG_MAX_BYTES) and parse it as pe_hf_config_parse does,
 * with messages naming path as given. Fails on a missing, unreadable or oversized file,
 * a directory, or anything pe_hf_config_parse rejects. On failure *out is left untouched.
 * Returns PE_OK, PE_EINVAL (bad file or content) or PE_ENOMEM; err gets one line. */
int pe_hf_config_load(const char *path, pe_hf_config *out, char *err, size_t errlen);

/* Parse json_text (NUL-terminated) as a config.json. source_name labels messages and is the name
 * of last resort ("config.json" when NULL; a trailing ".json" and any directory are dropped).
 * Required: num_attention_heads, and head_dim or hidden_size (divisible by the heads). Checked:
 * types, head_dim even, heads 1..PE_MAX_HEADS, rope_theta > 1, factor >= 1, 0 < rotary <= 1, a
 * known rope type (default, linear, dynamic, ntk, yarn, llama3, longrope or its old name su;
 * null means none), then the pe
 * validators on the result. For linear, dynamic and ntk, L0 = max_position_embeddings (as
 * transformers does); yarn takes original_max_position_embeddings when given, else
 * max_position_embeddings; llama3 requires it. Dynamic NTK is evaluated at
 * seq_len = factor * L0, the context the factor was chosen for (capped at PE_MAX_LEN); longrope
 * at seq_len = max_position_embeddings (its long factors).
 * On failure *out is left untouched. Returns PE_OK, PE_EINVAL or PE_ENOMEM. */
int pe_hf_config_parse(const char *json_text, const char *source_name, pe_hf_config *out, char *err,
                       size_t errlen);

/* A key given twice in any object of root (JSON readers disagree on which counts): PE_EINVAL
 * with one line naming source_name and the key. Used by the model loaders for the fields this
 * module does not read. */
struct cJSON;
int pe_hf_json_unique_keys(const struct cJSON *root, const char *source_name, char *err,
                           size_t errlen);

#endif
