/* attn_state.c: the attention views' defaults (attn_state.h). A file of its own so that the
 * state (options/state.c) reaches them without reaching the model run (attn.c), which uses the
 * option table and through it the state: no circle. */
#include "attn_state.h"

#include <stdio.h>
#include <string.h>

void app_attn_state_default(app_attn_state *a)
{
    memset(a, 0, sizeof *a);
    snprintf(a->model_name, sizeof a->model_name, "rope");
    snprintf(a->preset, sizeof a->preset, "toy");
    snprintf(a->compare, sizeof a->compare, "alibi");
    a->attn_scale = APP_SCALE_LINEAR;
    a->step = -1;
    a->alibi_scale = 1;
    a->play_speed = 2;
    a->sink_threshold = 0.3;                             /* Gu et al. 2025, Table 3 */
    snprintf(a->reference, sizeof a->reference, "nope"); /* Kazemnejad et al. 2023, Fig. 4 */
    a->massive_lambda = 5;                               /* Jin et al. 2025 */
}
