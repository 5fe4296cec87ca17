/* gguf_meta.h: the rope parameters in a GGUF file's header (versions 2 and 3), read without
 * reading tensors. GGUF is what llama.cpp and Ollama users have; its metadata carries what a
 * config.json does under {arch}.* keys:
 *
 *   general.architecture, general.name, {arch}.context_length, {arch}.embedding_length,
 *   {arch}.attention.head_count, {arch}.attention.head_count_kv, {arch}.attention.key_length,
 *   {arch}.rope.freq_base, {arch}.rope.dimension_count, {arch}.rope.scaling.type (none, linear,
 *   yarn), {arch}.rope.scaling.factor, {arch}.rope.scaling.original_context_length,
 *   {arch}.rope.scaling.attn_factor, {arch}.rope.scale_linear (older files).
 *
 * The values become the equivalent config.json fields and go through pe_hf_config's rules, so a
 * GGUF file and its model's config.json give the same numbers. attn_factor is llama.cpp's own
 * YaRN magnitude multiplier, not transformers' attention_factor: a value other than 1 is named in
 * `unmodelled` and the attention factor stays the derived one. Tensor names are scanned (not
 * their data) for rope_freqs / rope_factors_*, which llama.cpp stores for llama3 and LongRoPE
 * models; they are named in `unmodelled`. A bad header (truncated, huge counts, unknown value
 * types, nested arrays, version 1) fails with one line naming the byte offset and the field. */
#ifndef PELAB_PE_GGUF_META_H
#define PELAB_PE_GGUF_META_H

#include <stddef.h>

#include "hf_config.h"

/* Most metadata entries and tensors a header may declare; real files have hundreds. */
#define PE_GGUF_MAX_KV      1000000
#define PE_GGUF_MAX_TENSORS 1000000

/* Read the header of the GGUF file at path. */
int pe_gguf_read_config(const char *path, pe_hf_config *out, char *err, size_t errlen);

/* The same from a header in memory (len bytes, e.g. a file's first megabytes or a fuzzer's
 * input). src names it in messages. */
int pe_gguf_parse_config(const unsigned char *buf, size_t len, const char *src, pe_hf_config *out,
                         char *err, size_t errlen);

#endif
