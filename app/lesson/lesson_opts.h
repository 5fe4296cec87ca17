/* lesson_opts.h: the lessons' option group (options/option_groups.h): what a slide's scripted
 * action takes from its view line, which app_state holds as st->lesson; its row (--race-steps)
 * is in lesson.c. */
#ifndef PELAB_APP_LESSON_OPTS_H
#define PELAB_APP_LESSON_OPTS_H

#define APP_LESSON_RACE_MAX_STEPS 2000

typedef struct app_lesson_opts {
    int race_steps; /* `do: race`: training steps of every scheme (1..2000) */
} app_lesson_opts;

void app_lesson_opts_default(app_lesson_opts *o);

#endif
