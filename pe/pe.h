/* pe.h: pelab's numeric core. Position encodings, their analyses, the registry.
 *
 * This layer depends on libc and libm only. It never prints, never exits, never includes a
 * UI header. Every function that can fail returns PE_OK (0) or a negative PE_E* status and,
 * when err is not NULL, writes one line into err (errlen bytes) that names the option, the
 * value and what is allowed, e.g. "--base 0.5: the frequency base must be > 1".
 *
 * Conventions (as in ../shared/reference/pe-reference.md):
 *   positions are 0-based; i = query position, j = key position; d = (head) dimension;
 *   k = frequency / pair index 0..d/2-1; angles are computed in double.
 */
#ifndef PELAB_PE_H
#define PELAB_PE_H

#include <stddef.h>
#include <stdint.h>

enum {
    PE_OK = 0,
    PE_EINVAL = -1,    /* a parameter is out of its allowed range */
    PE_ENOMEM = -2,    /* an allocation failed */
    PE_ERANGE = -3,    /* a size is beyond PE_MAX_CELLS */
    PE_ECANCELED = -4, /* the work hook asked to stop (a newer request, Ctrl-C) */
};

/* Long computations call pe_work(fraction done, 0..1) now and then: the hook installed for the
 * calling thread (pe_work_set; NULL removes it) shows progress and returns nonzero to stop, and
 * the computation then frees what it made and returns PE_ECANCELED with "cancelled" in err
 * (pe_work_cancelled). A negative fraction only asks whether to stop (a read that waits for
 * its input, which has no fraction to show). */
typedef int (*pe_work_fn)(void *ctx, double frac);
void pe_work_set(pe_work_fn fn, void *ctx);
int pe_work(double frac);
int pe_work_cancelled(char *err, size_t errlen);

/* The most cells one matrix may have, whatever the budget: cells are indexed with an int. What
 * limits a figure in practice is the memory budget below (pe_check_cells; issue 25: a
 * full-resolution export that does not fit is refused by the budget, with its sizes and
 * --max-memory, not by a cap on --len). */
#define PE_MAX_CELLS ((size_t)2147483647)
/* The process's memory budget: every large allocation (pe_matrix, the views' caches, exported
 * data) reserves its bytes first and is refused with a message naming the sizes past it. The
 * default, 2 GiB, holds the largest figure any view allows (and its --data) at once; pelab's
 * --max-memory sets it. */
#define PE_MEM_DEFAULT ((size_t)2048 << 20)
void pe_mem_set_budget(size_t bytes);
size_t pe_mem_budget(void);
size_t pe_mem_used(void);
size_t pe_mem_peak(void); /* the most reserved at once */
/* How many reservations were refused so far (a caller that can free something, such as the
 * explorer's caches of other views, compares it before and after a computation). */
size_t pe_mem_refusals(void);
/* Reserve bytes for what ("matrix 8192 x 8192"); PE_OK, or PE_ERANGE with "what needs N MiB,
 * more than the memory budget of B MiB (...)" or, when some is held, "what needs N MiB more, but
 * only F MiB of the memory budget of B MiB are free (U MiB are held ...)" in err (sizes below
 * 1 MiB in KiB). */
int pe_mem_reserve(size_t bytes, const char *what, char *err, size_t errlen);
/* The same with the message's last advice given ("a smaller --width or --height needs less")
 * instead of the one about --len, --dim and --heads, for sizes other options decide. */
int pe_mem_reserve_hint(size_t bytes, const char *what, const char *hint, char *err, size_t errlen);
void pe_mem_release(size_t bytes);
/* Count bytes as held without a check, for what must exist regardless (a window's frame
 * buffer): later reservations see less room. pe_mem_release gives them back. */
void pe_mem_hold(size_t bytes);

/* Largest d and L accepted anywhere (each alone; the product is bounded by the memory budget).
 * L: 2^24, the last position a float holds exactly (positions become floats in the angles), so
 * released contexts up to 16M (Llama 4 Scout's 10485760) load; views compute at the resolution
 * they draw. */
#define PE_MAX_DIM   65536
#define PE_MAX_LEN   16777216
#define PE_MAX_HEADS 1024

/* ---- matrix ------------------------------------------------------------------------------ */

/* A dense row-major float matrix in one allocation. A zeroed struct is a valid empty matrix. */
typedef struct pe_matrix {
    size_t rows, cols;
    float *data; /* (rows, cols) */
} pe_matrix;

/* Allocate rows*cols zeroed floats. m must be zeroed or previously freed. Fails with PE_ERANGE
 * when rows*cols overflows or exceeds PE_MAX_CELLS, PE_ENOMEM when calloc fails. */
int pe_matrix_init(pe_matrix *m, size_t rows, size_t cols, char *err, size_t errlen);
/* Free the data and zero the struct. Accepts a zeroed struct. */
void pe_matrix_free(pe_matrix *m);
/* Pointer to row r. No bounds check. */
static inline float *pe_matrix_row(const pe_matrix *m, size_t r)
{
    return m->data + r * m->cols;
}

/* ---- deterministic random numbers (no hidden global state) ------------------------------- */

typedef struct pe_rng {
    uint64_t s[4]; /* xoshiro256** state */
} pe_rng;

/* Seed with splitmix64(seed). The same seed gives the same stream on every machine. */
void pe_rng_seed(pe_rng *r, uint64_t seed);
uint64_t pe_rng_u64(pe_rng *r);
/* n steps of the stream at once (as n pe_rng_u64 calls, without their results). */
void pe_rng_skip(pe_rng *r, uint64_t n);
/* Uniform in [0, 1) with 53 random bits. */
double pe_rng_uniform(pe_rng *r);
/* Standard normal (Box-Muller, no cached second value, so streams are easy to reason about). */
double pe_rng_normal(pe_rng *r);

/* ---- parameters -------------------------------------------------------------------------- */

typedef enum { PE_LAYOUT_INTERLEAVED = 0, PE_LAYOUT_CONCAT = 1 } pe_layout;
typedef enum { PE_PAIRING_INTERLEAVED = 0, PE_PAIRING_HALF = 1 } pe_pairing;
/* Sinusoid frequencies: the paper's w_k = base^(-2k/d), or fairseq/tensor2tensor's
 * w_k = exp(-k ln(base) / (d/2 - 1)). */
typedef enum { PE_FREQ_PAPER = 0, PE_FREQ_FAIRSEQ = 1 } pe_freq;

typedef enum {
    PE_SCALING_NONE = 0,
    PE_SCALING_LINEAR,   /* position interpolation: theta_k / f */
    PE_SCALING_NTK,      /* NTK-aware static: base' = base * f^(d/(d-2)) */
    PE_SCALING_DYNAMIC,  /* dynamic NTK, depends on seq_len */
    PE_SCALING_YARN,     /* YaRN ramp between beta_fast and beta_slow, attention factor */
    PE_SCALING_LLAMA3,   /* llama3 wavelength bands */
    PE_SCALING_LONGROPE, /* LongRoPE (Phi-3): per-pair factors, short or long by seq_len */
} pe_scaling_type;

/* Most LongRoPE factors a pe_params holds: one per rotated pair (Phi-3 has 48). */
#define PE_LONGROPE_MAX 256

/* RoPE context extension (HF transformers modeling_rope_utils semantics). */
typedef struct pe_rope_scaling {
    pe_scaling_type type;
    double factor;     /* f >= 1 */
    int original_ctx;  /* L0, the pre-training context length, >= 1 */
    int seq_len;       /* dynamic NTK: the current sequence length, >= 0; 0 = not given,
                        * read as L0 (HF's state before any longer sequence) */
    double beta_fast;  /* YaRN, default 32 */
    double beta_slow;  /* YaRN, default 1 */
    int yarn_truncate; /* YaRN: 1 = floor/ceil the ramp ends (HF's default), 0 = keep them
                        * fractional (HF `truncate: false`, gpt-oss) */
    double mscale;     /* YaRN (DeepSeek): with mscale_all_dim, both > 0, the attention factor
                        * is get_mscale(f, mscale) / get_mscale(f, mscale_all_dim); 0 = unset */
    double mscale_all_dim;
    double low_freq_factor;  /* llama3, default 1 */
    double high_freq_factor; /* llama3, default 4 */
    double attention_factor; /* > 0 overrides the derived one; 0 = derive (YaRN 0.1 ln f + 1,
                              * LongRoPE sqrt(1 + ln f / ln L0)) */
    /* LongRoPE: theta_k = 1 / (ext_k base^(2k/d)) with ext = long_factor when seq_len > L0, else
     * short_factor; n_factors must be rotary_dim / 2. Only a config file supplies them. */
    int n_factors;
    double short_factor[PE_LONGROPE_MAX];
    double long_factor[PE_LONGROPE_MAX];
} pe_rope_scaling;

/* Every parameter any encoding or analysis takes. Unused fields are ignored by an encoding. */
typedef struct pe_params {
    int dim;               /* d: embedding or head dimension, >= 1 (even where pairs are needed) */
    int len;               /* L: number of positions 0..L-1, >= 1 */
    double base;           /* frequency base, > 1 (sinusoidal, RoPE, Transformer-XL); 10000 */
    pe_layout layout;      /* sinusoidal: interleaved (paper) or concatenated (XL/t2t) */
    pe_freq freq;          /* sinusoidal: paper or fairseq frequencies */
    pe_pairing pairing;    /* RoPE: interleaved (x_2k, x_2k+1) or half-split (x_k, x_k+d/2) */
    double rotary_frac;    /* RoPE: fraction of d that is rotated, (0, 1]; 1 = all */
    int rope_proportional; /* RoPE: 1 = p-RoPE (HF rope_type "proportional", Gemma 4): the
                            * rotated pairs take base^(-2k/d) over the whole head dimension d,
                            * not over the rotary dimension; 0 = the usual rule */
    pe_rope_scaling scaling;
    int heads;            /* ALiBi/T5: number of heads, 1..PE_MAX_HEADS; 8 */
    double slope_ratio;   /* ALiBi: 0 = the paper's slopes; else m_h = ratio^(h+1), 0 < ratio < 1 */
    int alibi_symmetric;  /* ALiBi: 1 = bias -m|i-j| on both sides, no mask */
    int t5_buckets;       /* T5: num_buckets >= 2 (even when bidirectional); 32 */
    int t5_max_distance;  /* T5: max_distance > buckets/2 (or /4 when bidirectional); 128 */
    int t5_bidirectional; /* T5: 1 = encoder style, 0 = causal */
    double xpos_scale_base; /* xPos: 512 */
    int xpos_zeta_rotary;   /* xPos with partial rotary: 0 = zeta_k over the full head dimension d
                             * (torchscale), 1 = over the rotary dimension (lucidrains) */
    double learned_std;     /* learned absolute: init std, 0.02 */
    uint64_t seed;          /* learned tables, T5 bucket values, random q/k; 0 is a valid seed */
} pe_params;

/* Defaults: d 128, L 256, base 1e4, interleaved, paper frequencies, rotary 1, no scaling
 * (factor 1, L0 = 4096, beta 32/1, llama3 1/4), 8 heads, paper slopes, causal, T5 32/128
 * bidirectional, xPos 512, std 0.02, seed 0. */
void pe_params_default(pe_params *p);

/* Checks of shared fields, used by the validators; each returns PE_OK or PE_EINVAL with a
 * message such as "--dim 7: must be even for pairs (2..65536)". */
int pe_check_dim(int dim, int need_even, char *err, size_t errlen);
int pe_check_len(int len, char *err, size_t errlen);
int pe_check_base(double base, char *err, size_t errlen);
int pe_check_heads(int heads, char *err, size_t errlen);
/* rows*cols floats within the free memory budget (and PE_MAX_CELLS); the message names the two
 * options (what, e.g. "--len x --dim"), the sizes, the budget and --max-memory. */
int pe_check_cells(size_t rows, size_t cols, const char *what, char *err, size_t errlen);

/* ---- the registry ------------------------------------------------------------------------ */

/* What an encoding acts on. */
enum {
    PE_ACTS_INPUT = 1u << 0,  /* adds a (L, d) table to the input embeddings */
    PE_ACTS_LOGITS = 1u << 1, /* adds a per-head (L, L) bias to the attention logits */
    PE_ACTS_QK = 1u << 2,     /* rotates (or scales) q and k by position */
};

/* One position encoding. Adding an encoding is one file and one line in registry.c.
 * Functions an encoding does not have are NULL. Every out matrix must be zeroed or freed; the
 * function allocates it. Each function validates p first. */
typedef struct pe_encoding {
    const char *name;        /* lowercase, e.g. "sinusoidal" */
    const char *description; /* one line, no trailing period */
    unsigned acts;           /* PE_ACTS_* */
    int (*validate)(const pe_params *p, char *err, size_t errlen);
    /* (p->len, p->dim) vectors added to the input embeddings. */
    int (*table)(const pe_params *p, pe_matrix *out, char *err, size_t errlen);
    /* (p->len, p->len) additive logit bias of one head, row i = query; -INFINITY where masked. */
    int (*bias)(const pe_params *p, int head, pe_matrix *out, char *err, size_t errlen);
    /* Transform one d-vector x (p->dim doubles) in place as a query (is_key 0) or key at pos. */
    void (*apply_qk)(const pe_params *p, double *x, double pos, int is_key);
} pe_encoding;

/* e's checks of p's values without the size checks its validate makes for a whole (L, d) or
 * (L, L) table, and --len within 1..PE_MAX_LEN: what a figure drawn at its own resolution needs
 * (issue 25: a 10M-position context loads in every view). A table that is built is refused by
 * the memory budget when it does not fit, with its sizes and --max-memory. */
int pe_validate_values(const pe_encoding *e, const pe_params *p, char *err, size_t errlen);

size_t pe_encoding_count(void);
const pe_encoding *pe_encoding_at(size_t i);
/* Exact name match; NULL when none. */
const pe_encoding *pe_encoding_find(const char *name);
/* The registered name closest to name (edit distance), for "did you mean" messages; NULL when
 * none is close (see pe_closest). */
const char *pe_encoding_suggest(const char *name);
/* Closest of n candidate strings to s by edit distance (case-insensitive); NULL if n == 0 or
 * when even the closest is more than max(1, strlen(s) / 2) edits away (no real resemblance). */
const char *pe_closest(const char *s, const char *const *cands, size_t n);

/* ---- sinusoidal (pe/sinusoidal.c) -------------------------------------------------------- */

/* Angular frequency w_k of pair k for p->freq, p->base, p->dim. */
double pe_sin_freq(const pe_params *p, int k);
/* (L, d) table in p->layout. d even. */
int pe_sinusoidal_table(const pe_params *p, pe_matrix *out, char *err, size_t errlen);
/* The entries of that table at the given positions (ascending) and dimensions only: out is
 * (nr, nc) row-major, out[i][j] = PE[rows[i]][cols[j]] (within a float's rounding of the table).
 * For figures drawn at a lower resolution than (L, d); p must be valid for the table. */
int pe_sinusoidal_sample(const pe_params *p, const size_t *rows, size_t nr, const size_t *cols,
                         size_t nc, float *out);
/* sin(pos[i] w) and cos(pos[i] w) as floats into sin_out[i * stride], cos_out[i * stride]
 * (either may be NULL), stepped by rotations between exact anchors. */
void pe_sincos_at(double w, const size_t *pos, size_t n, float *sin_out, float *cos_out,
                  size_t stride);
/* The same for nc frequencies at once: out (nr, nc) row-major, out[i][j] = sin(pos[i] w[j]) when
 * is_sin[j], else cos(pos[i] w[j]); the values pe_sincos_at gives column by column. */
void pe_sincos_rows(const double *w, const unsigned char *is_sin, size_t nc, const size_t *pos,
                    size_t nr, float *out);

/* ---- binary counting (pe/binary.c): PE[p][j] = bit j of p as -1/+1 ----------------------- */
int pe_binary_table(const pe_params *p, pe_matrix *out, char *err, size_t errlen);

/* ---- learned absolute (pe/learned.c): N(0, learned_std) from seed ------------------------ */
int pe_learned_table(const pe_params *p, pe_matrix *out, char *err, size_t errlen);
/* The generator's state at the start of each of the len rows (states: len of them), found by
 * stepping the stream (two steps per value, no normal drawn): 2 L d steps, a tenth of the table's
 * time, and any row then costs its own draws (pe_learned_row). PE_ECANCELED when pe_work asks. */
int pe_learned_row_states(const pe_params *p, pe_rng *states, char *err, size_t errlen);
/* Entries cols[0..n) (ascending) of the row that starts at state, the table's very values. */
void pe_learned_row(const pe_params *p, const pe_rng *state, const size_t *cols, size_t n,
                    float *out);

/* ---- ALiBi (pe/alibi.c) ------------------------------------------------------------------ */

/* Slopes for heads (the paper's get_slopes, non-power-of-two rule included), or ratio^(h+1)
 * when ratio > 0. out has heads entries. */
int pe_alibi_slopes(int heads, double ratio, double *out, char *err, size_t errlen);
/* (L, L) bias of one head: -m(i-j) for j <= i, -INFINITY above; symmetric: -m|i-j|. */
int pe_alibi_bias(const pe_params *p, int head, pe_matrix *out, char *err, size_t errlen);
/* One entry of that matrix for a head of the given slope (what pe_alibi_bias stores at (i, j)),
 * for figures that sample the matrix instead of building it. */
float pe_alibi_value(double slope, int symmetric, size_t i, size_t j);

/* ---- RoPE (pe/rope.c, pe/rope_scaling.c) ------------------------------------------------- */

/* Number of rotated dimensions: d * rotary_frac rounded down to even, >= 2. */
int pe_rope_rotary_dim(const pe_params *p);
/* The dimensions forming pair k (0..rotary_dim/2-1) under p->pairing. */
void pe_rope_pair(const pe_params *p, int k, int *i0, int *i1);
/* Inverse frequencies theta_k, k = 0..rotary_dim/2-1, after p->scaling; *attn receives the
 * attention factor multiplying cos and sin (1 unless YaRN or an override). out needs
 * rotary_dim/2 doubles. attn may be NULL. */
int pe_rope_inv_freq(const pe_params *p, double *out, double *attn, char *err, size_t errlen);
/* Rotate x (d doubles) in place at position pos by the precomputed inv_freq, scaled by attn.
 * Dimensions past the rotary dimension pass through. */
void pe_rope_rotate(const pe_params *p, const double *inv_freq, double attn, double *x, double pos);
/* Float kernel for the model: x (dim) rotated with one row of precomputed cos/sin tables
 * (rot_dim/2 entries each). */
void pe_rope_rotate_f(float *x, int dim, int rot_dim, pe_pairing pairing, const float *cos_row,
                      const float *sin_row);
/* The inverse of pe_rope_rotate_f with the same cos and sin rows: each pair y becomes
 * R^T y / (c^2 + s^2), in double, so an attention factor folded into cos and sin divides out too
 * (issue 23: q and k as the projections made them, from a cache that keeps them rotated). */
void pe_rope_unrotate_f(float *x, int dim, int rot_dim, pe_pairing pairing, const float *cos_row,
                        const float *sin_row);
/* cos and sin tables (len, rotary_dim/2) for pe_rope_rotate_f, attention factor folded in. */
int pe_rope_tables(const pe_params *p, pe_matrix *cos_t, pe_matrix *sin_t, char *err,
                   size_t errlen);

/* How a scaling method treats pair k (for shading frequency bands). */
typedef enum { PE_BAND_KEEP = 0, PE_BAND_BLEND = 1, PE_BAND_INTERP = 2 } pe_band;
/* Band of pair k under p->scaling (linear/NTK/dynamic: every pair INTERP unless f == 1). */
pe_band pe_rope_band(const pe_params *p, int k);
/* YaRN correction range [low, high] as in HF (after clamping); for the view and the tests. */
void pe_rope_yarn_range(const pe_params *p, double *low, double *high);
/* LongRoPE: 1 when the long factors are in force (seq_len > L0), 0 for the short ones. */
int pe_longrope_long(const pe_rope_scaling *s);
/* HF's get_mscale: 1 when scale <= 1, else 0.1 * mscale * ln(scale) + 1. */
double pe_yarn_mscale(double scale, double mscale);
/* The effective base after NTK or dynamic NTK scaling (p->base otherwise). */
double pe_rope_effective_base(const pe_params *p);

/* ---- xPos (pe/xpos.c) -------------------------------------------------------------------- */
/* zeta_k = (2k + 0.4 d) / (1.4 d) for pair k. */
double pe_xpos_zeta(const pe_params *p, int k);
/* The dimension zeta is taken over: d, or the rotary dimension with xpos_zeta_rotary. */
int pe_xpos_zeta_dim(const pe_params *p);
/* Per-pair decay of the score at distance (m - n): zeta_k^((m-n)/scale_base). */
double pe_xpos_decay(const pe_params *p, int k, double dist);

/* ---- T5 relative buckets (pe/t5.c) ------------------------------------------------------- */
/* Bucket of rel = j - i (HF T5Attention._relative_position_bucket). */
int pe_t5_bucket(int rel, int bidirectional, int num_buckets, int max_distance);
/* Seeded per-(head, bucket) scalars, N(0, 1) * 0.5: (heads, buckets). */
int pe_t5_values(const pe_params *p, pe_matrix *out, char *err, size_t errlen);
/* One entry of a head's (L, L) bias given that head's row of pe_t5_values (what the registry's
 * t5 bias stores at (i, j)), for figures that sample the matrix instead of building it. */
float pe_t5_value(const pe_params *p, const float *head_values, size_t i, size_t j);

/* ---- Transformer-XL (pe/xl.c) ------------------------------------------------------------ */
/* R_r = [sin(r w_0..), cos(r w_0..)], w_k = base^(-2k/d); out has d doubles. */
void pe_xl_r(const pe_params *p, double r, double *out);
/* out (rows, d) = x (rows, d) W_R for W_R (d, d) row-major, that is W_R^T x_i for each row:
 * out[i][c] = sum over a = 0 .. d-1 of x[i][a] W_R[a][c], added in that order (pe_xl_terms
 * projects q_i and v this way, so a caller gets the same numbers). */
void pe_xl_project(const double *w_r, const double *x, size_t rows, size_t d, double *out);
/* The same for the columns c_lo .. c_hi-1 of out only (the same numbers there): a caller that
 * reports progress between parts of a large d splits the work this way. */
void pe_xl_project_cols(const double *w_r, const double *x, size_t rows, size_t d, size_t c_lo,
                        size_t c_hi, double *out);
/* The causal dot products of rows i0 .. i0+ni-1 of p (each d long, row-major) with the columns
 * of qt (d, len): row r of rows (ni, len) gets p_{i0+r} . qt[:, j] for j = 0 .. i0+r, each summed
 * over a from 0 up as a plain loop would (the entries after i0+r are unspecified). pe_xl_terms
 * computes q_i . k_j this way (qt = k^T), so a caller gets the same numbers. */
void pe_xl_dots_lower(const double *p, const double *qt, size_t len, size_t d, size_t i0, size_t ni,
                      double *rows);
/* The four score terms over (L, L) for seeded random q, k, u, v and W_R (d x d), each already
 * divided by sqrt(d): terms[0] content (q.k), [1] content-position (q.W_R R_{i-j}),
 * [2] global content (u.k), [3] global position (v.W_R R_{i-j}). Causal: -INFINITY for j > i. */
int pe_xl_terms(const pe_params *p, pe_matrix terms[4], char *err, size_t errlen);

/* ---- analyses (pe/analysis.c) ------------------------------------------------------------ */

/* (rows, rows) matrix of table row dot products; cosine = 1 divides by the norms. */
int pe_similarity(const pe_matrix *table, int cosine, pe_matrix *out, char *err, size_t errlen);
/* out[p] = table[p0] . table[p] for every row p. */
void pe_dot_decay(const pe_matrix *table, size_t p0, double *out);
/* Seeded random q and k (d each), N(0,1); with seed == UINT64_MAX both are all ones. */
void pe_rope_qk(int dim, uint64_t seed, double *q, double *k);
/* RoPE score <R_m q, R_n k> for rel = m - n, rel = rel0..rel0+n-1, with n fixed at n_pos.
 * out has count entries. Uses p's pairing, scaling and rotary fraction. */
int pe_rope_score_curve(const pe_params *p, const double *q, const double *k, int n_pos, int rel0,
                        int count, double *out, char *err, size_t errlen);
/* RoFormer long-term decay bound B(r) = (2/d') sum_{j=1..d'/2} |sum_{k<j} e^{i r theta_k}|,
 * d' = 2 * npairs, for the given inverse frequencies. */
double pe_rope_decay_bound(const double *inv_freq, int npairs, double r);
/* pe_rope_decay_bound at the n distances j * step, j = 0 .. n-1, into out, in one pass (eight
 * distances at a time in vector lanes, each pair's angle advanced by a rotation; within ~1e-13
 * of pe_rope_decay_bound). PE_OK or PE_ENOMEM. */
int pe_rope_decay_bound_curve(const double *inv_freq, int npairs, double step, int n, double *out,
                              char *err, size_t errlen);
/* For PE_PREFIX_LANES distances side by side, given z_k = c[l][k] + i s[l][k] (k < npairs) for
 * lane l: re[l] + i im[l] = sum_k z_k and tot[l] = sum_j |sum_{k<=j} z_k|, the sums of
 * pe_rope_decay_bound (not divided), added in pair order as one distance alone would (the same
 * bits in every kernel; PELAB_BOUND_KERNEL=plain|sse2 forces one). */
#define PE_PREFIX_LANES 8
void pe_rope_prefix_lanes(const double *const *c, const double *const *s, int npairs, double *re,
                          double *im, double *tot);
/* Wavelength 2 pi / w_k of every pair for the encoding's frequencies (sinusoidal or RoPE
 * after scaling); out has dim/2 entries (RoPE: rotary_dim/2). rope = 1 selects RoPE's. */
int pe_wavelengths(const pe_params *p, int rope, double *out, char *err, size_t errlen);
/* PE(q + dist[i]).PE(q) of the sinusoidal table for every q, = sum_k cos(dist[i] w_k) (a pair's
 * sin.sin + cos.cos), in double, at the distances dist[0..n) (ascending is fastest: each pair's
 * angle then moves on by a rotation, re-anchored from exact values every 64 distances; the
 * float32 table's own dot products agree to its rounding). The cosine similarity is this over
 * dim/2. PE_OK or the frequency check's error. */
int pe_sinusoidal_dots(const pe_params *p, const size_t *dist, size_t n, double *out, char *err,
                       size_t errlen);
/* Largest |PE(p+D) - PE(p) T(D)| over p in [0, L - D), sinusoidal table of p (any layout). */
double pe_translation_error(const pe_params *p, int D);
/* Resolution probe: the number of RoPE pairs whose angles at positions pos and pos + D differ
 * by more than min_angle radians (wrapped to [0, pi]), with angles computed as a model does in
 * float32 (fl(pos) * fl(theta_k)); dynamic NTK and LongRoPE use seq_len = max(seq_len, pos + D +
 * 1), the shortest sequence that holds both positions unless a longer one is given. */
int pe_rope_resolution(const pe_params *p, int pos, int D, double min_angle);
/* The same count for given inverse frequencies theta (npairs of them, e.g. pe_rope_inv_freq's;
 * for dynamic NTK those at seq_len = pos + D + 1), without recomputing them: a caller probing many
 * positions computes them once. PE_EINVAL for a pos, D or min_angle pe_rope_resolution refuses. */
int pe_rope_resolution_theta(const double *theta, int npairs, int pos, int D, double min_angle);

#endif
