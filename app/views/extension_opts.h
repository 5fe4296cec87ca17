/* extension_opts.h: the extension view's option group (options/option_groups.h): what it draws
 * against distance, which app_state holds as st->extension; its row (--measure) is in
 * extension.c. */
#ifndef PELAB_APP_EXTENSION_OPTS_H
#define PELAB_APP_EXTENSION_OPTS_H

/* --measure */
enum { APP_MEASURE_BOUND = 0, APP_MEASURE_SCORE = 1, APP_MEASURE_BOTH = 2 };

typedef struct app_extension_opts {
    int measure; /* APP_MEASURE_* */
} app_extension_opts;

void app_extension_opts_default(app_extension_opts *o);

#endif
