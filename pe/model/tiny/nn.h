/* nn.h: internal to pe/model. The full-sequence forward and backward passes of the network.
 *
 * nn.c is compiled twice: as float (nn_*, used for training and evaluation) and, for the
 * gradient check in tests/pe/model, as double (nn64_*, built with -DNN_REAL_DOUBLE). Both read
 * the same parameter layout and the same position data built from pe/.
 */
#ifndef PELAB_MODEL_NN_H
#define PELAB_MODEL_NN_H

#include <stddef.h>

#include "model.h"
#include "tinyutil.h"

typedef struct nn_dims {
    int pe;          /* MODEL_PE_* */
    int L, C, H, hd; /* layers, width, heads, head dim */
    int F, V;        /* MLP width, vocabulary */
    int P;           /* learned table rows (0 unless learned) */
    int NB;          /* t5 buckets (0 unless t5) */
    int tied;
    double emb_scale;
} nn_dims;

/* Offsets (in elements) of every tensor in the parameter array; see struct model. */
typedef struct nn_layout {
    size_t wte, wpe, t5, ln1w, ln1b, qkvw, qkvb, projw, projb, ln2w, ln2b, fcw, fcb, fcprojw,
        fcprojb, lnfw, lnfb, wout, total;
} nn_layout;

/* Position data for positions 0..rows-1, all computed by pe/ (see model.c: model_pos_build). */
typedef struct nn_pos {
    int rows;
    const float *table;     /* sinusoidal: (rows, C); learned reads its table from the params */
    const float *rope_cos;  /* rope: (rows, rot_dim / 2), attention factor folded in */
    const float *rope_sin;  /* rope: (rows, rot_dim / 2) */
    const float *rope_nsin; /* rope: -rope_sin, for the transposed rotation in backward */
    int rot_dim;
    pe_params rope_p;       /* rope: dim = head dim, for the double path */
    const double *inv_freq; /* rope: (rot_dim / 2) */
    double rope_attn;
    const double *slopes; /* alibi: (H) */
    const int *t5_bucket; /* t5: (rows) bucket of the distance i - j >= 0 */
} nn_pos;

/* Activations of one (B, T) pass: one allocation carved by nn.c. */
typedef struct nn_acts {
    void *mem;
    size_t bytes;
    int B, T;
} nn_acts;

void nn_dims_layout(const model_config *c, nn_dims *d, nn_layout *l);

/* Storage behind an nn_pos. */
typedef struct nn_posbuf {
    pe_matrix table, cos, sin, nsin;
    double *inv_freq;
    double slopes[MODEL_MAX_HEADS];
    int *bucket;
} nn_posbuf;

/* Position data of c's scheme for positions 0..rows-1, from pe/. rope_base > 0 overrides the
 * RoPE base, slopes (heads entries) the ALiBi slopes. Learned: rows past the table are refused
 * with PE_ERANGE. */
int nn_pos_build(const model_config *c, int rows, double rope_base, const double *slopes,
                 nn_pos *pos, nn_posbuf *b, char *err, size_t errlen);
void nn_posbuf_free(nn_posbuf *b);

/* Loops written so that gcc vectorises them are built, on x86-64, for AVX-512, for AVX2 and for
 * the baseline; the loader picks the one the CPU runs. Not under gcc's ThreadSanitizer: it
 * instruments the ifunc resolvers, which run before its runtime starts (a crash at load). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define MODEL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define MODEL_CLONES
#endif

/* Helpers shared by the files of pe/model. */
int model_alloc(model *m, const model_config *cfg, char *err, size_t errlen);
void model_carve(model *m);
int model_copy_vocab(tok_vocab *dst, const tok_vocab *src, char *err, size_t errlen);

#define NN_DECLARE(real, P)                                                                        \
    int P##acts_init(nn_acts *a, const nn_dims *d, int B, int T);                                  \
    void P##acts_free(nn_acts *a);                                                                 \
    /* Forward over inputs (B, T) at positions pos0 + t. With targets, returns the mean            \
     * cross-entropy and keeps per-position losses; without, returns 0. */                         \
    double P##forward(const nn_dims *d, const nn_layout *l, const real *params, const nn_pos *pos, \
                      int pos0, nn_acts *a, const int *inputs, const int *targets, int B, int T,   \
                      int threads);                                                                \
    /* Gradients of the mean loss of the last forward, added to grads (same layout). */            \
    void P##backward(const nn_dims *d, const nn_layout *l, const real *params, real *grads,        \
                     const nn_pos *pos, int pos0, nn_acts *a, const int *inputs,                   \
                     const int *targets, int B, int T, int threads);                               \
    const real *P##losses(const nn_acts *a, const nn_dims *d);         /* (B, T) */                \
    const real *P##att(const nn_acts *a, const nn_dims *d, int layer); /* (B, H, T, T) */          \
    const real *P##logits(const nn_acts *a, const nn_dims *d);         /* (B, T, V) */

NN_DECLARE(float, nn_)

/* For the tests: the matrix kernels built in (0 is the plain C reference), and one product
 * out (n, m) = A (n, k) . b (k, m) (+ bias, or added to out with acc) through kernel v, where
 * A[r][p] = a[r * ars + p * acs]. Returns -1 when this CPU cannot run kernel v. */
int nn_kernel_count(void);
float nn_kernel_exp(float x); /* the vectorisable e^x of the float kernels */
const char *nn_kernel_name(int v);
int nn_kernel_mm(int v, float *out, const float *a, size_t ars, size_t acs, const float *b,
                 const float *bias, int n, int k, int m, int acc, int nt);
/* Part of a product through kernel v, as causal attention computes it: part 1, the columns
 * j <= r of each row r; 2, the terms p <= r; 3, the terms p >= r (rows are taken in blocks, so
 * a few more may be computed; the tests compare only these). Returns -1 when this CPU cannot run
 * kernel v. */
#define NN_MM_PARTS 4
int nn_kernel_mm_part(int v, int part, float *out, const float *a, size_t ars, size_t acs,
                      const float *b, int n, int k, int m, int acc);
NN_DECLARE(double, nn64_)

#endif
