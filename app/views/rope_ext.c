/* rope_ext.c: the target context, methods and distance samples of the RoPE context-extension
 * views (see rope_ext.h). */
#include "rope_ext.h"

#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *app_ext_method_label(int m)
{
    switch (m) {
    case PE_SCALING_NONE:
        return "none";
    case PE_SCALING_LINEAR:
        return "linear";
    case PE_SCALING_NTK:
        return "NTK";
    case PE_SCALING_DYNAMIC:
        return "dynamic NTK";
    case PE_SCALING_YARN:
        return "YaRN";
    case PE_SCALING_LLAMA3:
        return "llama3";
    case PE_SCALING_LONGROPE:
        return "longrope";
    }
    return "?";
}

int app_ext_methods(const app_state *st, int *ms, unsigned *mask)
{
    int n = 0;
    unsigned bits = 0;
    for (int m = 0; m < APP_EXT_METHODS; m++) {
        if (m == PE_SCALING_LONGROPE && (st->p.scaling.n_factors == 0 ||
                                         st->p.scaling.n_factors != pe_rope_rotary_dim(&st->p) / 2))
            continue;
        ms[n++] = m;
        bits |= 1u << m;
    }
    if (mask) *mask = bits;
    return n;
}

double app_ext_target(const app_state *st)
{
    double t = st->target_len > 0 ? st->target_len
                                  : st->p.scaling.factor * (double)st->p.scaling.original_ctx;
    return isfinite(t) ? floor(t) : t;
}

pe_params app_ext_params(const app_state *st, int m, double target)
{
    pe_params p = st->p;
    p.scaling.type = (pe_scaling_type)m;
    if (p.scaling.seq_len == 0) /* not given: a model reading the whole target context */
        p.scaling.seq_len = target >= (double)INT_MAX ? INT_MAX : target < 1 ? 1 : (int)target;
    return p;
}

double *app_ext_inv_freq(const pe_params *p, int *npairs, double *attn, char *err, size_t errlen)
{
    int np = p->dim >= 2 ? pe_rope_rotary_dim(p) / 2 : 1;
    double *inv = malloc(sizeof *inv * (size_t)(np > 0 ? np : 1));
    if (!inv) {
        snprintf(err, errlen, "--dim %d: out of memory for the frequencies", p->dim);
        return NULL;
    }
    if (pe_rope_inv_freq(p, inv, attn, err, errlen) < 0) {
        free(inv);
        return NULL;
    }
    *npairs = np;
    return inv;
}

int app_ext_validate(const app_state *st, unsigned methods, char *err, size_t errlen)
{
    double t = app_ext_target(st);
    if (!(t >= 2) || t > APP_EXT_MAX_TARGET) {
        if (st->target_len > 0)
            snprintf(err, errlen, "--target-len %g: the target context must be 2..%g positions",
                     st->target_len, APP_EXT_MAX_TARGET);
        else
            snprintf(err, errlen,
                     "--factor %g x --orig-ctx %d: the target context %g must be 2..%g positions "
                     "(or set --target-len)",
                     st->p.scaling.factor, st->p.scaling.original_ctx, t, APP_EXT_MAX_TARGET);
        return -1;
    }
    for (int m = 0; m <= PE_SCALING_LONGROPE; m++) { /* longrope: frequencies only */
        if (!(methods & (1u << m))) continue;
        pe_params p = app_ext_params(st, m, t);
        int np;
        double *inv = app_ext_inv_freq(&p, &np, NULL, err, errlen);
        if (!inv) return -1;
        free(inv);
    }
    return 0;
}

int app_ext_samples(double target, int max_n, double *out)
{
    if (max_n < 3 || !(target >= 1)) {
        out[0] = 0;
        return 1;
    }
    if (target + 1 <= max_n) {
        int n = (int)target + 1;
        for (int i = 0; i < n; i++) out[i] = i;
        return n;
    }
    /* geometric from 1 to target, but never less than one position apart: the first samples
     * are every integer, the later ones spread out evenly on a log axis */
    int m = max_n - 1;
    double lt = log(target);
    out[0] = 0;
    for (int i = 1; i <= m; i++) {
        double r = round(exp(lt * (double)i / (double)m));
        /* and never so high that the rest could not stay below the target (target > m) */
        out[i] = fmin(fmax(out[i - 1] + 1, r), target - (double)(m - i));
    }
    out[m] = target;
    return m + 1;
}

void app_ext_scaling_key(const pe_rope_scaling *s, double out[APP_EXT_KEY_FIELDS])
{
    out[0] = s->type;
    out[1] = s->factor;
    out[2] = s->original_ctx;
    out[3] = s->seq_len;
    out[4] = s->beta_fast;
    out[5] = s->beta_slow;
    out[6] = s->low_freq_factor;
    out[7] = s->high_freq_factor;
    out[8] = s->attention_factor;
    out[9] = s->yarn_truncate;
    out[10] = s->mscale;
    out[11] = s->mscale_all_dim;
    /* the LongRoPE lists as a 53-bit FNV-1a hash of their bytes (exact in a double) */
    uint64_t h = 14695981039346656037u;
    int n = s->n_factors > 0 && s->n_factors <= PE_LONGROPE_MAX ? s->n_factors : 0;
    const double *lists[2] = {s->short_factor, s->long_factor};
    for (int l = 0; l < 2; l++) {
        const unsigned char *b = (const unsigned char *)lists[l];
        for (size_t i = 0; i < sizeof(double) * (size_t)n; i++) h = (h ^ b[i]) * 1099511628211u;
    }
    out[12] = (double)n;
    out[13] = (double)(h >> 11);
}

void app_ext_len_label(double v, char *buf, size_t n)
{
    /* a context length as people write it: 4096, 32K (a multiple of 1024 from 8192 on), 1M,
     * else its digits with commas (131,073) */
    double k = v / 1024.0, m = v / 1048576.0;
    if (v >= 1048576 && m == floor(m))
        snprintf(buf, n, "%.0fM", m);
    else if (v >= 8192 && k == floor(k))
        snprintf(buf, n, "%.0fK", k);
    else
        fig_num(round(v), 15, buf, n);
}
