/* similarity_opts.h: the similarity view's option group (options/option_groups.h): dot product or
 * cosine, which app_state holds as st->similarity; its row (--similarity) is in similarity.c. */
#ifndef PELAB_APP_SIMILARITY_OPTS_H
#define PELAB_APP_SIMILARITY_OPTS_H

typedef struct app_similarity_opts {
    int cosine; /* cosine instead of the raw dot product */
} app_similarity_opts;

void app_similarity_opts_default(app_similarity_opts *o);

#endif
