/* race_sync.h: the race engine's lanes (pe/model/tiny/race.h) copied into the race figure's data
 * (app/views/race_fig.h), for the two front ends of a race: `pelab race` (cmd_race.c, which
 * defines it) and a lesson's race slide (lesson/lesson_race.c). */
#ifndef PELAB_RACE_SYNC_H
#define PELAB_RACE_SYNC_H

struct model_race;
struct app_race_data;

/* What the lanes did since the last call (their new losses, measurements and failures) into d,
 * under the engine's lock; *seen and *goal receive the tokens trained so far and in all. */
void app_race_sync(struct app_race_data *d, struct model_race *r, long *seen, long *goal);

#endif
