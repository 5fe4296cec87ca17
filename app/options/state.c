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
    /* a context extension shows what it is for: methods that differ (at factor 1 they all
     * equal the original); nothing else uses the factor unless --scaling is set */
    st->p.scaling.factor = 4;
    st->zoom = 1.0;
    /* heads as the windows they attend within where the bias has windows (issue 23) */
    st->scale_shared = APP_SCALE_WINDOW;
    /* each option group gives its storage its own defaults (option_groups.h) */
#define APP_GROUP_ROWS(rows)
#define APP_GROUP_DEFAULTS(name, type, defaults, rows) defaults(&st->name);
    APP_OPTION_GROUPS(APP_GROUP_ROWS, APP_GROUP_DEFAULTS)
#undef APP_GROUP_DEFAULTS
#undef APP_GROUP_ROWS
}
