/* option_groups.h: the option groups a module brings into the state, as mpv's sub-option groups
 * do: each group's storage (a struct of the module's own, which app_state holds under the
 * group's name) and the function that gives it its defaults. The group's rows come with the
 * views that use them (app_view.own_options), and address the storage as app_state's fields
 * (offsetof(app_state, NAME.field)). state.h and state.c expand this list, so they name no
 * module. Adding a group: a header with the struct and its defaults function, its rows, and one
 * X(NAME, TYPE, DEFAULTS) line here. */
#ifndef PELAB_APP_OPTION_GROUPS_H
#define PELAB_APP_OPTION_GROUPS_H

#include "attn_state.h"

/* the attention views' model, prompt, step and position experiments (views/attention/) */
#define APP_OPTION_GROUPS(X) X(attn, app_attn_state, app_attn_state_default)

#endif
