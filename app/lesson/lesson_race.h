/* lesson_race.h: the short position race a lesson slide starts (`do: race`, issue 24). A
 * coordinator thread prepares the stories and the models (so the slide never waits for them),
 * then races them on pe/model/tiny/race.c's workers; the presenter draws the race's figure
 * (views/race_fig.c, the same scene `pelab race` shows) and quotes its final numbers. Only this
 * file's .c sees the trained models' header (app/meson.build's app_model_sources). */
#ifndef PELAB_APP_LESSON_RACE_H
#define PELAB_APP_LESSON_RACE_H

#include <stddef.h>

#include "race_fig.h"
#include "scene.h"

/* The schemes a lesson races: one learned table, one rotation, one bias (what extrapolation
 * separates), with the built-in models' recipe but for the step count. */
#define LESSON_RACE_SCHEMES "learned,rope,alibi"

typedef struct lesson_race lesson_race;

/* Start a race of steps (1..2000) steps per scheme on threads workers (0: the machine's cores, at
 * most one per scheme). Returns at once (the stories are made on the race's own thread). 0, or -1
 * with one line in err (out of memory, no thread). */
int lesson_race_start(lesson_race **out, int steps, int threads, char *err, size_t errlen);
/* The race's figure for t (u as the live race's keys left it). */
void lesson_race_build(lesson_race *r, scene *s, const scene_target *t, const app_race_ui *u);
/* 1 once every scheme has trained its steps (or the race failed: err then says why). */
int lesson_race_finished(lesson_race *r, char *err, size_t errlen);

/* The numbers a caption quotes, once the race has finished (done 1); while it runs done is 0
 * and the strings are empty. best and worst: the schemes with the lowest and highest held-out
 * loss at 4x the trained context ("alibi (3.10)"); speed: tokens per second of the whole race
 * ("4,540"). */
typedef struct lesson_race_numbers {
    int done;
    char best[96], worst[96], speed[48];
} lesson_race_numbers;
void lesson_race_numbers_get(lesson_race *r, lesson_race_numbers *out);

/* The race before its first step, without training (d zeroed first; free with
 * app_race_data_free): its lanes named and sized as a race of steps steps. 0 or -1 (memory). */
int lesson_race_still(app_race_data *d, int steps);

/* Stop the workers (after the step each is in), join every thread and free. NULL is fine. */
void lesson_race_free(lesson_race *r);

#endif
