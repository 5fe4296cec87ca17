/* race_live.h: the live display of `pelab race` (issue 24) in the terminal or the window. It only
 * moves frames out and keys in: the figure is views/race.c's scene, the keys its app_race_key. */
#ifndef PELAB_APP_RACE_LIVE_H
#define PELAB_APP_RACE_LIVE_H

#include <stddef.h>

#include "race_fig.h"

typedef struct app_race_live app_race_live;

/* Open the terminal (gui 0; stdin and stdout must be one) or a window (gui 1). -1 with one line
 * in err. */
int app_race_live_open(app_race_live **out, int gui, char *err, size_t errlen);
/* Draw d as u says, then wait up to wait_ms for keys (handled into u). Returns the
 * APP_RACE_ACT_* the race must act on: PAUSE, RECORD (S: the race writes the animation of the
 * race so far, race_out.h), STOP or QUIT (Ctrl-C, the window closed), else NONE. */
int app_race_live_step(app_race_live *lv, const app_race_data *d, app_race_ui *u, int wait_ms);
/* Draw d as u says, no keys read (the note S shows while it records). */
void app_race_live_draw(app_race_live *lv, const app_race_data *d, app_race_ui *u);
/* The terminating signal that ended the display (128 + it is the exit status), 0 when none. */
int app_race_live_signal(app_race_live *lv);
void app_race_live_close(app_race_live *lv);

#endif
