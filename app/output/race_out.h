/* race_out.h: the position race to files (issue 24): the figure (.png .svg .pdf), the numbers
 * behind its curves (.csv) and an animation of the race (.gif .webp FOLDER/), from the numbers of
 * a live race or of its log (race_fig.h). */
#ifndef PELAB_APP_RACE_OUT_H
#define PELAB_APP_RACE_OUT_H

#include <stddef.h>

#include "fileopts.h"
#include "race_fig.h"

/* The figure or the CSV of d at o's size; command goes into the metadata. 0, 2 (usage: the
 * extension, where it goes), 1 (runtime), with a message in err. */
int app_race_export(const app_race_data *d, const app_race_ui *u, const char *path,
                    const app_export_opts *o, const char *command, char *err, size_t errlen);
/* frames frames (>= 1) of the race as it stood at 1/frames, 2/frames, ... of every lane's
 * steps, at fps. Same statuses. */
int app_race_animate(const app_race_data *d, const app_race_ui *u, const char *path, int frames,
                     double fps, const app_export_opts *o, const char *command, char *err,
                     size_t errlen);

#endif
