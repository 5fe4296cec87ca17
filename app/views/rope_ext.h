/* rope_ext.h: what the RoPE context-extension views (frequencies, extension, resolution) share:
 * the target context, the six methods they compare and the parameters of each, and the distance
 * samples their curves are drawn at.
 *
 * The views read the extension from st->p.scaling: factor f, original context L0 and the method's
 * own knobs (YaRN betas, truncation and mscale, llama3 frequency factors, attention factor). The
 * target context is st->target_len, or f * L0 when that is 0. Dynamic NTK depends on the sequence
 * length: the views evaluate it at --seq-len when given (at or below L0 that is the original
 * frequencies, as HF resets them), else at the target context, the length a model reading the
 * whole extended context would use. */
#ifndef PELAB_APP_ROPE_EXT_H
#define PELAB_APP_ROPE_EXT_H

#include <stddef.h>

#include "views.h"

/* The methods compared, in the order of pe_scaling_type: none, linear, ntk, dynamic, yarn,
 * llama3, and longrope when the state holds its factor lists (app_ext_methods). */
#define APP_EXT_METHODS 7
/* Largest target context the views accept (positions are ints in the probes). */
#define APP_EXT_MAX_TARGET 1e9
/* Samples of a distance curve at most (the data's length). */
#define APP_EXT_SAMPLES 512

/* The methods the comparison views draw, into ms (APP_EXT_METHODS entries): the six formula
 * methods, then longrope when st carries factor lists for its rotary dimension (a config file
 * gives them). Returns the count; *mask gets the set bits (1u << m) when mask is not NULL. */
int app_ext_methods(const app_state *st, int *ms, unsigned *mask);
/* Short name of method m ("none", "linear", "NTK", "dynamic NTK", "YaRN", "llama3"). */
const char *app_ext_method_label(int m);
/* The target context: st->target_len, else factor * L0, rounded down to a whole position. */
double app_ext_target(const app_state *st);
/* st->p with the scaling type replaced by method m (the other scaling fields kept); a sequence
 * length not given (0) becomes the target (capped at INT_MAX; the formula only). */
pe_params app_ext_params(const app_state *st, int m, double target);
/* Check that the target context is 2..APP_EXT_MAX_TARGET and that every method whose bit is set
 * in methods (1u << m) has valid parameters. 0 or -1 with one line in err naming the option. */
int app_ext_validate(const app_state *st, unsigned methods, char *err, size_t errlen);
/* theta_k (npairs = rotary_dim/2 of them) of p into a malloc'd array; *attn gets the attention
 * factor (may be NULL). NULL with err on failure. */
double *app_ext_inv_freq(const pe_params *p, int *npairs, double *attn, char *err, size_t errlen);
/* Whole distances 0 = r_0 < r_1 < ... <= target, log-spaced from 1 (so a log axis shows them
 * evenly), at most max_n of them, always including 0, 1 and target. out has max_n entries.
 * Returns the count. */
int app_ext_samples(double target, int max_n, double *out);
/* The scaling fields as plain numbers for a cache key (struct padding never compares):
 * type, factor, L0, seq_len, beta_fast, beta_slow, low and high freq factors, attention, YaRN
 * truncate, mscale, mscale_all_dim, the number of LongRoPE factors and a hash of them. */
#define APP_EXT_KEY_FIELDS 14
void app_ext_scaling_key(const pe_rope_scaling *s, double out[APP_EXT_KEY_FIELDS]);
/* A context length for titles and marks as people write it: "4096", "64K", "1M", "131,073". */
void app_ext_len_label(double v, char *buf, size_t n);

#endif
