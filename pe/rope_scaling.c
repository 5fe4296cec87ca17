/* rope_scaling.c: RoPE context extension with the semantics of HF transformers'
 * modeling_rope_utils: linear interpolation, NTK-aware (static and dynamic), YaRN, llama3 and
 * LongRoPE. */
#include <math.h>

#include "pe_internal.h"

/* The rotary dimension and the frequency checks live here, with the frequency rules that use
 * them; rope.c (the rotation) calls in, never the other way round. */
int pe_rope_rotary_dim(const pe_params *p)
{
    double frac = isfinite(p->rotary_frac) && p->rotary_frac > 0.0 && p->rotary_frac <= 1.0
                      ? p->rotary_frac
                      : 1.0;
    int rd = (int)floor((double)p->dim * frac);
    rd -= rd % 2;
    if (rd > p->dim - p->dim % 2) rd = p->dim - p->dim % 2;
    return rd < 2 ? 2 : rd;
}

int pe_rope_validate_freq(const pe_params *p, char *err, size_t errlen)
{
    int rc = pe_check_dim_for(p->dim, 1, "for RoPE (dimensions rotate in pairs)", err, errlen);
    if (rc == PE_OK) rc = pe_check_base(p->base, err, errlen);
    if (rc == PE_OK) rc = pe_check_pairing(p->pairing, err, errlen);
    if (rc == PE_OK &&
        (!isfinite(p->rotary_frac) || !(p->rotary_frac > 0.0) || p->rotary_frac > 1.0))
        rc = pe_fail(err, errlen, PE_EINVAL,
                     "--rotary-frac %g: the rotated fraction of --dim must be in (0, 1]",
                     p->rotary_frac);
    if (rc == PE_OK) rc = pe_rope_scaling_validate(p, err, errlen);
    return rc;
}

int pe_rope_scaling_validate(const pe_params *p, char *err, size_t errlen)
{
    const pe_rope_scaling *s = &p->scaling;
    if ((int)s->type < PE_SCALING_NONE || (int)s->type > PE_SCALING_LONGROPE)
        return pe_fail(err, errlen, PE_EINVAL,
                       "--scaling %d: unknown method; allowed none, linear, ntk, dynamic, yarn, "
                       "llama3, longrope",
                       (int)s->type);
    if (!isfinite(s->attention_factor) || s->attention_factor < 0.0 || s->attention_factor > 1e6)
        return pe_fail(err, errlen, PE_EINVAL,
                       "--attn-factor %g: must be 0 (derive) or a finite number in (0, 1e6]",
                       s->attention_factor);
    if (s->type == PE_SCALING_NONE) return PE_OK;
    if (!isfinite(s->factor) || s->factor < 1.0 || s->factor > 1e6)
        return pe_fail(err, errlen, PE_EINVAL,
                       "--factor %g: the scaling factor must be a finite number 1..1e6", s->factor);
    if (s->original_ctx < 1 || s->original_ctx > PE_MAX_LEN)
        return pe_fail(err, errlen, PE_EINVAL,
                       "--orig-ctx %d: the original context length must be 1..%d", s->original_ctx,
                       PE_MAX_LEN);
    int rd = pe_rope_rotary_dim(p);
    if ((s->type == PE_SCALING_NTK || s->type == PE_SCALING_DYNAMIC) && rd < 4)
        return pe_fail(err, errlen, PE_EINVAL,
                       "--rotary-frac %g: NTK scaling raises to d/(d-2), so it needs a rotary "
                       "dimension >= 4 (have %d with --dim %d)",
                       p->rotary_frac, rd, p->dim);
    /* seq_len only enters a formula, so it may exceed PE_MAX_LEN (the resolution probe). */
    if ((s->type == PE_SCALING_DYNAMIC || s->type == PE_SCALING_LONGROPE) && s->seq_len < 0)
        return pe_fail(err, errlen, PE_EINVAL,
                       "--seq-len %d: the sequence length must be >= 0 (0 = not given)",
                       s->seq_len);
    if (s->type == PE_SCALING_YARN) {
        if (!isfinite(s->beta_fast) || !(s->beta_fast > 0.0))
            return pe_fail(err, errlen, PE_EINVAL,
                           "--beta-fast %g: must be a finite number of rotations > 0",
                           s->beta_fast);
        if (!isfinite(s->beta_slow) || !(s->beta_slow > 0.0))
            return pe_fail(err, errlen, PE_EINVAL,
                           "--beta-slow %g: must be a finite number of rotations > 0",
                           s->beta_slow);
        /* equal betas are HF's too (Kimi-K2 ships 1 and 1): a one-pair ramp */
        if (!(s->beta_fast >= s->beta_slow))
            return pe_fail(err, errlen, PE_EINVAL, "--beta-fast %g: must be >= --beta-slow %g",
                           s->beta_fast, s->beta_slow);
        if (s->yarn_truncate != 0 && s->yarn_truncate != 1)
            return pe_fail(err, errlen, PE_EINVAL, "--yarn-truncate %d: allowed on or off",
                           s->yarn_truncate);
        if (!isfinite(s->mscale) || s->mscale < 0.0 || s->mscale > 1e6)
            return pe_fail(err, errlen, PE_EINVAL,
                           "--mscale %g: must be 0 (unset) or a finite number in (0, 1e6]",
                           s->mscale);
        if (!isfinite(s->mscale_all_dim) || s->mscale_all_dim < 0.0 || s->mscale_all_dim > 1e6)
            return pe_fail(err, errlen, PE_EINVAL,
                           "--mscale-all-dim %g: must be 0 (unset) or a finite number in (0, 1e6]",
                           s->mscale_all_dim);
    }
    if (s->type == PE_SCALING_LONGROPE) {
        if (s->n_factors == 0)
            return pe_fail(
                err, errlen, PE_EINVAL,
                "--scaling longrope: needs short_factor and long_factor lists; load "
                "them with --config (e.g. assets/configs/phi-3-vision-128k-instruct.json)");
        if (s->n_factors != rd / 2 || s->n_factors > PE_LONGROPE_MAX)
            return pe_fail(err, errlen, PE_EINVAL,
                           "--dim %d: longrope has %d factors per list, one per rotated pair, so "
                           "it needs a rotary dimension of %d (have %d)",
                           p->dim, s->n_factors, 2 * s->n_factors, rd);
        for (int k = 0; k < s->n_factors; k++)
            if (!isfinite(s->short_factor[k]) || !(s->short_factor[k] > 0) ||
                !isfinite(s->long_factor[k]) || !(s->long_factor[k] > 0))
                return pe_fail(err, errlen, PE_EINVAL,
                               "longrope factor %d (short %g, long %g): must be finite and > 0", k,
                               s->short_factor[k], s->long_factor[k]);
    }
    if (s->type == PE_SCALING_LLAMA3) {
        if (!isfinite(s->low_freq_factor) || !(s->low_freq_factor > 0.0))
            return pe_fail(err, errlen, PE_EINVAL,
                           "--low-freq-factor %g: must be a finite number > 0", s->low_freq_factor);
        /* equal factors are HF's too (Llama 4 Scout ships 1 and 1): no blended band */
        if (!isfinite(s->high_freq_factor) || !(s->high_freq_factor >= s->low_freq_factor))
            return pe_fail(err, errlen, PE_EINVAL,
                           "--high-freq-factor %g: must be a finite number >= --low-freq-factor "
                           "%g",
                           s->high_freq_factor, s->low_freq_factor);
    }
    return PE_OK;
}

double pe_yarn_mscale(double scale, double mscale)
{
    return scale <= 1.0 ? 1.0 : 0.1 * mscale * log(scale) + 1.0;
}

/* HF find_correction_dim: the pair index whose wavelength makes num_rot turns in L0. */
static double correction_dim(double num_rot, int rd, double base, int l0)
{
    return (double)rd * log((double)l0 / (num_rot * 2.0 * PE_PI)) / (2.0 * log(base));
}

/* HF find_correction_range: the ends are floored and ceiled unless `truncate` is false. */
void pe_rope_yarn_range(const pe_params *p, double *low, double *high)
{
    int rd = pe_rope_rotary_dim(p);
    double lo = correction_dim(p->scaling.beta_fast, rd, p->base, p->scaling.original_ctx);
    double hi = correction_dim(p->scaling.beta_slow, rd, p->base, p->scaling.original_ctx);
    if (p->scaling.yarn_truncate) {
        lo = floor(lo);
        hi = ceil(hi);
    }
    if (lo < 0.0) lo = 0.0;
    if (hi > (double)(rd - 1)) hi = (double)(rd - 1);
    if (low) *low = lo;
    if (high) *high = hi;
}

double pe_rope_effective_base(const pe_params *p)
{
    const pe_rope_scaling *s = &p->scaling;
    double rd = (double)pe_rope_rotary_dim(p);
    if (s->type == PE_SCALING_NTK) return p->base * pow(s->factor, rd / (rd - 2.0));
    if (s->type == PE_SCALING_DYNAMIC) {
        /* HF computes at max(seq_len, L0), and returns to the original frequencies once the
         * sequence is back at or below L0; 0 (not given) is HF's state before any long input. */
        double l0 = (double)s->original_ctx;
        double len = s->seq_len > s->original_ctx ? (double)s->seq_len : l0;
        return p->base * pow(s->factor * len / l0 - (s->factor - 1.0), rd / (rd - 2.0));
    }
    return p->base;
}

void pe_rope_ctx_init(const pe_params *p, pe_rope_ctx *c)
{
    const pe_rope_scaling *s = &p->scaling;
    c->rot_dim = pe_rope_rotary_dim(p);
    /* p-RoPE keeps the full head's frequency ladder for the pairs it rotates */
    c->exp_dim = p->rope_proportional && p->dim >= c->rot_dim ? p->dim - p->dim % 2 : c->rot_dim;
    c->base = pe_rope_effective_base(p);
    c->low = c->high = 0.0;
    if (s->type == PE_SCALING_YARN) {
        pe_rope_yarn_range(p, &c->low, &c->high);
        /* HF linear_ramp_factor: avoid a zero-width ramp. */
        if (c->low == c->high) c->high += 0.001;
    }
    c->attn = 1.0;
    if (s->attention_factor > 0.0)
        c->attn = s->attention_factor;
    else if (s->type == PE_SCALING_YARN && s->mscale > 0.0 && s->mscale_all_dim > 0.0)
        c->attn =
            pe_yarn_mscale(s->factor, s->mscale) / pe_yarn_mscale(s->factor, s->mscale_all_dim);
    else if (s->type == PE_SCALING_YARN)
        c->attn = pe_yarn_mscale(s->factor, 1.0);
    else if (s->type == PE_SCALING_LONGROPE && s->factor > 1.0 && s->original_ctx > 1)
        c->attn = sqrt(1.0 + log(s->factor) / log((double)s->original_ctx));
    c->ext = NULL;
    if (s->type == PE_SCALING_LONGROPE)
        c->ext = pe_longrope_long(s) ? s->long_factor : s->short_factor;
}

int pe_longrope_long(const pe_rope_scaling *s)
{
    return s->seq_len > s->original_ctx;
}

static double yarn_ramp(const pe_rope_ctx *c, int k)
{
    double r = ((double)k - c->low) / (c->high - c->low);
    return r < 0.0 ? 0.0 : r > 1.0 ? 1.0 : r;
}

/* llama3 bands by wavelength: short wavelengths keep theta, long ones divide it by f, the ones
 * between blend with *w the weight of theta/f (HF _compute_llama3_parameters). */
static pe_band llama3_band(const pe_params *p, double theta, double *w)
{
    const pe_rope_scaling *s = &p->scaling;
    double l0 = (double)s->original_ctx;
    double wavelen = 2.0 * PE_PI / theta;
    *w = 0.0;
    if (wavelen < l0 / s->high_freq_factor) return PE_BAND_KEEP;
    *w = 1.0;
    if (wavelen > l0 / s->low_freq_factor) return PE_BAND_INTERP;
    /* equal factors leave only the boundary itself, where HF's smooth factor is 0/0: kept */
    if (!(s->high_freq_factor > s->low_freq_factor)) {
        *w = 0.0;
        return PE_BAND_KEEP;
    }
    double smooth =
        (l0 / wavelen - s->low_freq_factor) / (s->high_freq_factor - s->low_freq_factor);
    *w = 1.0 - smooth;
    return PE_BAND_BLEND;
}

double pe_rope_ctx_theta(const pe_params *p, const pe_rope_ctx *c, int k)
{
    const pe_rope_scaling *s = &p->scaling;
    double theta = pow(c->base, -2.0 * (double)k / (double)c->exp_dim);
    switch (s->type) {
    case PE_SCALING_LINEAR:
        return theta / s->factor;
    case PE_SCALING_YARN: {
        double ramp = yarn_ramp(c, k);
        return theta * (1.0 - ramp) + theta / s->factor * ramp;
    }
    case PE_SCALING_LLAMA3: {
        double w;
        switch (llama3_band(p, theta, &w)) {
        case PE_BAND_KEEP:
            return theta;
        case PE_BAND_INTERP:
            return theta / s->factor;
        case PE_BAND_BLEND:
            break;
        }
        return w * theta / s->factor + (1.0 - w) * theta;
    }
    case PE_SCALING_LONGROPE:
        return theta / c->ext[k];
    case PE_SCALING_NONE:
    case PE_SCALING_NTK:
    case PE_SCALING_DYNAMIC:
        break;
    }
    return theta;
}

int pe_rope_inv_freq(const pe_params *p, double *out, double *attn, char *err, size_t errlen)
{
    int rc = pe_rope_validate_freq(p, err, errlen);
    if (rc != PE_OK) return rc;
    pe_rope_ctx c;
    pe_rope_ctx_init(p, &c);
    for (int k = 0; k < c.rot_dim / 2; k++) out[k] = pe_rope_ctx_theta(p, &c, k);
    if (attn) *attn = c.attn;
    return PE_OK;
}

pe_band pe_rope_band(const pe_params *p, int k)
{
    const pe_rope_scaling *s = &p->scaling;
    switch (s->type) {
    case PE_SCALING_NONE:
        return PE_BAND_KEEP;
    case PE_SCALING_LINEAR:
    case PE_SCALING_NTK:
    case PE_SCALING_DYNAMIC:
        return s->factor > 1.0 ? PE_BAND_INTERP : PE_BAND_KEEP;
    case PE_SCALING_YARN: {
        pe_rope_ctx c;
        pe_rope_ctx_init(p, &c);
        double ramp = yarn_ramp(&c, k);
        return ramp <= 0.0 ? PE_BAND_KEEP : ramp >= 1.0 ? PE_BAND_INTERP : PE_BAND_BLEND;
    }
    case PE_SCALING_LLAMA3: {
        pe_rope_ctx c;
        pe_rope_ctx_init(p, &c);
        double theta = pow(p->base, -2.0 * (double)k / (double)c.exp_dim);
        double w;
        return llama3_band(p, theta, &w);
    }
    case PE_SCALING_LONGROPE: {
        if (k < 0 || k >= s->n_factors) return PE_BAND_KEEP;
        double e = pe_longrope_long(s) ? s->long_factor[k] : s->short_factor[k];
        return e == 1.0 ? PE_BAND_KEEP : PE_BAND_INTERP;
    }
    }
    return PE_BAND_KEEP;
}
