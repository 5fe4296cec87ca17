/* lm_internal.h: shared by the lm_*.c files of pe/model (real checkpoints). Not public. */
#ifndef PELAB_MODEL_LM_INTERNAL_H
#define PELAB_MODEL_LM_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "lm.h"
#include "pe_internal.h"

/* The file name of path for messages (after the last '/'). */
const char *lm_base_name(const char *path);
/* Read up to n bytes from the start of path into buf; *got and *file_size receive what was read
 * and the file's size. Refuses directories and unreadable files (one line naming path). */
int lm_read_head(const char *path, unsigned char *buf, size_t n, size_t *got, uint64_t *file_size,
                 char *err, size_t errlen);
/* Map path read-only into a new entry of m->maps (size must equal the size seen before, else the
 * file changed under us). */
int lm_map_add(lm_model *m, const char *path, uint64_t size, const void **base, char *err,
               size_t errlen);
/* An allocated float copy of count floats kept by m (freed by lm_close). */
float *lm_buf_add(lm_model *m, size_t count, char *err, size_t errlen);
/* Reserve bytes in the memory budget for m (before anything is mapped), naming the model. */
int lm_reserve(lm_model *m, size_t bytes, char *err, size_t errlen);

/* Loops gcc vectorises, built for AVX-512, AVX2 and the baseline (as the tiny model's kernels;
 * not under ThreadSanitizer, which breaks ifunc resolvers). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define LM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define LM_CLONES
#endif
/* The kernels of lm_kernels.c written with 8-wide vectors and fused multiply-adds: built for
 * x86-64-v3 (AVX2 + FMA; AVX-512 CPUs take it too, and for the prompt's linear maps 16-wide
 * tiles of the same sequence, lm_kernels.c) and the baseline. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define LM_GEMM __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define LM_GEMM
#endif

/* A freed session's block, kept by its model for the next session (lm_forward.c): a fresh
 * block's pages are faulted and cleared by the kernel on first touch, which cost a 128-token
 * prompt of the GPT-2 shape 17% of its time right after another process had run (perf record,
 * the real-model bench). Its bytes stay in the memory budget while kept. */
typedef struct lm_spare {
    pthread_mutex_t mu;
    float *block;
    size_t n, held;
} lm_spare;
int lm_spare_init(lm_model *m, char *err, size_t errlen);
void lm_spare_free(lm_model *m);

/* Loaders behind lm_open. */
int lm_load_llama2c(lm_model *m, const char *path, char *err, size_t errlen);
int lm_load_hf(lm_model *m, const char *dir, char *err, size_t errlen);

/* Bytes per element of a safetensors dtype. */
int lm_st_dtype_size(lm_dtype dt);
/* Conversion of one value. */
float lm_f16_to_f32(uint16_t h);
float lm_bf16_to_f32(uint16_t h);

/* Threaded kernels (lm_kernels.c): out (T, L->out) = x (T, L->in) W^T + b, from L->p when
 * packed, else from W (out, in) in place (t = 0). */
void lm_linear_apply(const lm_linear *L, const float *x, int T, float *out, int threads);
/* The floats of an (in, out) linear packed into panels of 32 outputs, and the packing of L->w
 * into dst (64-byte aligned, that many floats), which L->p then points to (w is left as is). */
size_t lm_linear_packed_floats(int in, int out);
void lm_linear_pack(lm_linear *L, float *dst);
/* Attention inner loops (lm_kernels.c), the same operations for the forward and for an attention
 * row recomputed later: p[j] = scale * (q . k_j) for keys k_j = k0 + j * kstride, j < n; and
 * o = sum_j p[j] v_j over hd components. */
void lm_attn_scores(const float *q, const float *k0, size_t kstride, int n, int hd, float scale,
                    float *p);
void lm_attn_mix(const float *p, const float *v0, size_t vstride, int n, int hd, float *o);
/* Activations over n floats (lm_kernels.c): y = GELU (tanh form) of x; g = silu(g) * up. */
void lm_gelu(float *y, const float *x, size_t n);
void lm_silu_mul(float *g, const float *up, size_t n);

#endif
