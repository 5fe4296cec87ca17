/* option_groups.h: the option groups, as mpv's option groups are: each carries its rows, and a
 * module's group its own storage and defaults. The list is in the order the rows are listed
 * everywhere (--help, the man page, completion, `pelab export`'s command line):
 *   ROWS(rows)                         rows over fields app_state has of its own (the figure's
 *                                      encoding, frame and author) or that an earlier group holds
 *   GROUP(name, type, defaults, rows)  a module's group: app_state holds a `type name`, which
 *                                      app_state_default starts with defaults(&st->name); its
 *                                      rows address it as offsetof(app_state, name.field)
 * Each rows array is ended by a row with name NULL. state.h and state.c expand this list and the
 * option engine (options.c) iterates it, so none of them names a module. Adding a group: a header
 * with its storage struct and defaults function (included here), its rows in the module's file,
 * and one line in the list. */
#ifndef PELAB_APP_OPTION_GROUPS_H
#define PELAB_APP_OPTION_GROUPS_H

#include "attn_state.h"
#include "decay_opts.h"
#include "extension_opts.h"
#include "lesson_opts.h"
#include "resolution_opts.h"
#include "similarity_opts.h"

#define APP_OPTION_GROUPS(ROWS, GROUP)                                                             \
    ROWS(app_figure_rows) /* options.c: the encoding, the view, heads, positions */                \
    GROUP(similarity, app_similarity_opts, app_similarity_opts_default, app_similarity_rows)       \
    GROUP(decay, app_decay_opts, app_decay_opts_default, app_decay_rows)                           \
    ROWS(app_frame_rows) /* options.c: colours, theme, target context, --config's layers */        \
    GROUP(resolution, app_resolution_opts, app_resolution_opts_default, app_resolution_rows)       \
    ROWS(app_author_rows) /* options.c: the author's title, fonts and file layouts */              \
    GROUP(extension, app_extension_opts, app_extension_opts_default, app_extension_rows)           \
    GROUP(attn, app_attn_state, app_attn_state_default, app_attn_options) /* attention/attn.c */   \
    ROWS(app_sink_rows)       /* attention/sinks.c, in st->attn */                                 \
    ROWS(app_usage_rows)      /* attention/usage.c, in st->attn */                                 \
    ROWS(app_measure_options) /* attention/measures.c, in st->attn */                              \
    ROWS(app_table_rows)      /* attention/table.c, in st->attn */                                 \
    GROUP(lesson, app_lesson_opts, app_lesson_opts_default, app_lesson_rows) /* lesson/lesson.c */

#endif
