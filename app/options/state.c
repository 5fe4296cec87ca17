/* state.c: the default figure state. */
#include "state.h"

#include <stdio.h>
#include <string.h>

void app_state_default(app_state *st)
{
    memset(st, 0, sizeof *st);
    pe_params_default(&st->p);
    st->enc = pe_encoding_find("sinusoidal");
    st->view = 0;
    st->head = -1;
    st->pos = -1;
    st->pos_k = 0;
    /* no two default curves coincide (RoPE with q = k = 1 equals the sinusoid) */
    /* the bound beside RoPE's mean over Gaussian q, k (Barbero et al. 2024, Fig. 2): without it
     * the figure suggests that RoPE attention decays by itself */
    st->curves = APP_CURVE_SINUSOIDAL | APP_CURVE_LEARNED | APP_CURVE_ROPE_BOUND | APP_CURVE_ALIBI |
                 APP_CURVE_ROPE_GAUSS;
    /* the extension views show what they are for: methods that differ (at factor 1 they all
     * equal the original); no other view uses the factor unless --scaling is set */
    st->p.scaling.factor = 4;
    st->zoom = 1.0;
    /* ALiBi's heads as the windows they attend within (issue 23): exp(bias) on one 0..1 range */
    st->scale_shared = APP_SCALE_WINDOW;
    /* not a tie: at the default d 128, base 10000 the pairs' inverse frequencies are
     * theta_k = 10^(-k/16), and 0.1 is theta_16 exactly, so with a probe of one position pair 16
     * turns by exactly the threshold and float32 rounding of its angles flipped it in and out
     * (the "none" curve zig-zagged between 16 and 17). 0.09 lies between theta_17 (0.0866) and
     * theta_16, and off the theta grid of d 64 and 256 and of Llama 3's base 500000 too. */
    st->min_angle = 0.09;
    st->probe_d = 1;
    /* each option group gives its storage its own defaults (option_groups.h) */
#define APP_GROUP_DEFAULTS(name, type, defaults) defaults(&st->name);
    APP_OPTION_GROUPS(APP_GROUP_DEFAULTS)
#undef APP_GROUP_DEFAULTS
}

int app_state_p0(const app_state *st)
{
    int p0 = st->pos < 0 ? st->p.len / 2 : st->pos;
    if (p0 >= st->p.len) p0 = st->p.len - 1;
    return p0 < 0 ? 0 : p0;
}
