/* measure.h: what trained models do with position, measured from their attention rows and their
 * q/k vectors. The definitions follow the papers whose figures the views reproduce:
 *
 *   sink       Gu et al., "When Attention Sink Emerges in Language Models" (ICLR 2025), eq. 1:
 *              alpha(l,h) = 1/T sum_{t=0}^{T-1} A[t][0], the mean attention the T queries of a
 *              prompt pay to its first token (query 0 included, as in the paper's sum from t=k),
 *              averaged over prompts; the sink share is the fraction of heads with alpha > eps
 *              (eps 0.3 in the paper).
 *   distance   the mean attention weight at each relative distance r = t - j over all (t, j) of
 *              every prompt, and the mean attention each key position j receives from the queries
 *              that see it (t >= j): the "lost in the middle" curve.
 *   jsd        the Jensen-Shannon divergence of two distributions in nats (natural log: 0 for
 *              equal rows, ln 2 for disjoint ones); model distance per layer (Kazemnejad et al.
 *              2023, Fig. 4) is min over head pairs (h1, h2) of the mean over prompts and
 *              queries of JSD(A1[l][h1][t], A2[l][h2][t]).
 *   usage      Barbero et al. 2024, "Round and Round We Go": the mean norm of each rotary pair
 *              of q (and of k) over the tokens of every prompt.
 *   massive    Jin et al. 2025: per head and dimension d, M[d] = ||x[:, d]||_2 over the tokens
 *              of a prompt; a dimension is massive when M[d] > lambda * mean_d M[d] (lambda 5).
 *   pca        the principal components of a table's rows (centred), by subspace iteration on
 *              the covariance, with the Rayleigh-Ritz step; scores per row and explained
 *              variance.
 *
 * Attention rows are causal: row t of a (T, T) block holds the weights of keys 0..t (entries past
 * t are ignored). Everything here is plain double-precision arithmetic with no allocation unless
 * said, so the views call it per prompt and per (layer, head) as rows are computed. */
#ifndef PELAB_PE_MEASURE_H
#define PELAB_PE_MEASURE_H

#include <stddef.h>

#include "pe.h"

/* alpha of one prompt: 1/T sum_t A[t][0] for the (T, T) causal block A (row stride ld). */
double pe_sink_alpha(const float *a, size_t ld, size_t t_len);
/* Fraction of n alphas above eps. */
double pe_sink_share(const double *alpha, size_t n, double eps);

/* Accumulate one prompt's causal block into sums by distance and by key position:
 * dist_sum[r] += A[t][t - r], dist_cnt[r] += 1 for every t >= r; recv_sum[j] += A[t][j],
 * recv_cnt[j] += 1 for every t >= j. Arrays hold at least t_len entries; means are sum / cnt. */
void pe_attn_distance_add(const float *a, size_t ld, size_t t_len, double *dist_sum,
                          double *dist_cnt, double *recv_sum, double *recv_cnt);

/* The same for one row: row t of a block (t + 1 weights over keys 0..t), so a caller that
 * computes rows one at a time needs no (T, T) block. Any of the four arrays may be NULL (a
 * caller measuring many heads of equal length counts once). */
void pe_attn_distance_add_row(const float *row, size_t t, double *dist_sum, double *dist_cnt,
                              double *recv_sum, double *recv_cnt);

/* Jensen-Shannon divergence in nats (0..ln 2) of two distributions of n entries each (each summing
 * to 1; zero entries allowed). */
double pe_jsd(const float *p, const float *q, size_t n);
/* Mean over the T queries of JSD(A1[t][0..t], A2[t][0..t]) for two causal blocks. */
double pe_jsd_rows(const float *a1, size_t ld1, const float *a2, size_t ld2, size_t t_len);

/* Norms of the rotary pairs of one vector x of head_dim entries rotated over its first rot_dim
 * (pairing as pe_rope_pair: interleaved (2k, 2k+1), half (k, k + rot_dim/2)); out has rot_dim/2
 * entries. */
void pe_pair_norms(const float *x, int rot_dim, pe_pairing pairing, double *out);

/* Massive dimensions of one head over one prompt: x is (t_len, head_dim) with row stride ld;
 * m (head_dim entries) receives ||x[:, d]||_2, massive[d] is set to 1 when m[d] > lambda *
 * mean(m), else 0. Returns how many are massive. */
int pe_massive_dims(const float *x, size_t ld, size_t t_len, int head_dim, double lambda, double *m,
                    unsigned char *massive);

/* The first k principal components of the first rows of table (rows x cols, centred on the mean
 * of those rows). scores is (rows, k): row r's coordinate on component c; var (k entries) the
 * variance along each (descending); share (optional, k entries) each one's share of the total
 * variance. Each component's sign makes its largest-magnitude loading positive, so the result
 * does not depend on the iteration's start. Needs cols x cols + cols x k doubles of memory
 * (reserved in the budget). k <= cols, k <= 16. */
int pe_pca(const pe_matrix *table, size_t rows, int k, double *scores, double *var, double *share,
           char *err, size_t errlen);

#endif
