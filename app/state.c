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
    st->curves = APP_CURVE_SINUSOIDAL | APP_CURVE_LEARNED | APP_CURVE_ROPE_BOUND | APP_CURVE_ALIBI;
    /* the extension views show what they are for: methods that differ (at factor 1 they all
     * equal the original); no other view uses the factor unless --scaling is set */
    st->p.scaling.factor = 4;
    st->zoom = 1.0;
    st->min_angle = 0.1;
    st->probe_d = 1;
    app_attn_state_default(&st->attn);
}

int app_state_p0(const app_state *st)
{
    int p0 = st->pos < 0 ? st->p.len / 2 : st->pos;
    if (p0 >= st->p.len) p0 = st->p.len - 1;
    return p0 < 0 ? 0 : p0;
}
