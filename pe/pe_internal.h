/* pe_internal.h: helpers shared by the files of pe/. Not part of the public contract. */
#ifndef PELAB_PE_INTERNAL_H
#define PELAB_PE_INTERNAL_H

#include "pe.h"

/* M_PI is not in strict C17 with only _POSIX_C_SOURCE. */
#define PE_PI     3.14159265358979323846
#define PE_TWO_PI 6.28318530717958647692

/* Write one formatted line into err (when err and errlen allow) and return status. */
__attribute__((format(printf, 4, 5))) int pe_fail(char *err, size_t errlen, int status,
                                                  const char *fmt, ...);

/* count floats, 64-byte aligned, uninitialised; from 2 MiB on mapped on their own, aligned to
 * 2 MiB and marked for transparent huge pages. pe_floats_unmap(p, the same count) frees them.
 * NULL when out of memory. */
float *pe_floats_map(size_t count);
void pe_floats_unmap(float *p, size_t count);

/* pe_matrix_init, but zero = 0 leaves the cells uninitialised for a caller that writes every
 * one of them (saves a pass over memory that calloc may have to clear). */
int pe_matrix_alloc(pe_matrix *m, size_t rows, size_t cols, int zero, char *err, size_t errlen);

/* --opt v must be finite; PE_EINVAL with "--opt nan: must be a finite number (what)" otherwise. */
int pe_check_finite(double v, const char *opt, const char *what, char *err, size_t errlen);
/* pe_check_dim with the reason for evenness spelled out, e.g. "for RoPE (rotated pairs)". */
int pe_check_dim_for(int dim, int need_even, const char *why, char *err, size_t errlen);
/* Enumerations that several encodings read. */
int pe_check_layout(pe_layout layout, char *err, size_t errlen);
int pe_check_pairing(pe_pairing pairing, char *err, size_t errlen);
int pe_check_freq(pe_freq freq, int dim, char *err, size_t errlen);

/* Validators shared between encodings and analyses. */
int pe_sinusoidal_validate_freq(const pe_params *p, char *err, size_t errlen);
int pe_rope_validate_freq(const pe_params *p, char *err, size_t errlen);
int pe_rope_validate(const pe_params *p, char *err, size_t errlen);
int pe_rope_scaling_validate(const pe_params *p, char *err, size_t errlen);

/* Everything needed to compute RoPE's scaled theta_k one pair at a time, without allocating. */
typedef struct pe_rope_ctx {
    int rot_dim;       /* rotated dimensions, the "d" of the frequency formulas */
    int exp_dim;       /* the denominator of theta's exponent: rot_dim, or dim for p-RoPE */
    double base;       /* effective base (NTK / dynamic NTK applied) */
    double low, high;  /* YaRN correction range */
    double attn;       /* attention factor multiplying cos and sin */
    const double *ext; /* LongRoPE: the factor list in force (into the params), else NULL */
} pe_rope_ctx;

void pe_rope_ctx_init(const pe_params *p, pe_rope_ctx *c);
/* Scaled inverse frequency of pair k. */
double pe_rope_ctx_theta(const pe_params *p, const pe_rope_ctx *c, int k);
/* Rotate the pairs of x (p->dim doubles) at pos; pair k is additionally multiplied by
 * pair_scale[k] when pair_scale is not NULL (xPos). */
void pe_rope_apply(const pe_params *p, const pe_rope_ctx *c, double *x, double pos,
                   double (*pair_scale)(const pe_params *p, int k, double pos, int is_key),
                   int is_key);

#endif
