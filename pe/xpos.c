/* xpos.c: xPos (Sun et al. 2022), RoPE whose pairs also scale by zeta_k^(+-n/scale_base) so the
 * score of pair k decays as zeta_k^((m-n)/scale_base). */
#include <math.h>

#include "pe_internal.h"

/* With partial rotary the two reference implementations differ: torchscale's XPOS takes zeta
 * over the head dimension it is given (the full d), lucidrains' rotary-embedding-torch over the
 * dimension it rotates. */
int pe_xpos_zeta_dim(const pe_params *p)
{
    return p->xpos_zeta_rotary ? pe_rope_rotary_dim(p) : p->dim;
}

double pe_xpos_zeta(const pe_params *p, int k)
{
    double d = (double)pe_xpos_zeta_dim(p);
    return (2.0 * (double)k + 0.4 * d) / (1.4 * d);
}

double pe_xpos_decay(const pe_params *p, int k, double dist)
{
    return pow(pe_xpos_zeta(p, k), dist / p->xpos_scale_base);
}

static int xpos_validate(const pe_params *p, char *err, size_t errlen)
{
    int rc = pe_rope_validate(p, err, errlen);
    if (rc == PE_OK && (!isfinite(p->xpos_scale_base) || !(p->xpos_scale_base > 0.0)))
        rc = pe_fail(err, errlen, PE_EINVAL,
                     "--xpos-scale %g: the scale base must be a finite number > 0",
                     p->xpos_scale_base);
    if (rc == PE_OK && p->xpos_zeta_rotary != 0 && p->xpos_zeta_rotary != 1)
        rc = pe_fail(err, errlen, PE_EINVAL, "--xpos-zeta %d: allowed full or rotary",
                     p->xpos_zeta_rotary);
    return rc;
}

/* Queries grow by zeta^(n/scale_base), keys shrink by zeta^(-n/scale_base). */
static double xpos_pair_scale(const pe_params *p, int k, double pos, int is_key)
{
    return pe_xpos_decay(p, k, is_key ? -pos : pos);
}

static void xpos_apply_qk(const pe_params *p, double *x, double pos, int is_key)
{
    pe_rope_ctx c;
    pe_rope_ctx_init(p, &c);
    pe_rope_apply(p, &c, x, pos, xpos_pair_scale, is_key);
}

const pe_encoding pe_enc_xpos = {
    .name = "xpos",
    .description =
        "RoPE with a per-pair exponential decay zeta^((m-n)/512) of the score (Sun 2022)",
    .acts = PE_ACTS_QK,
    .validate = xpos_validate,
    .apply_qk = xpos_apply_qk,
};
