/* progress.h: a progress bar on stderr for long exports (progress.c). */
#ifndef PELAB_APP_PROGRESS_H
#define PELAB_APP_PROGRESS_H

/* Show label and the computations' progress on stderr once the work has taken a second, when
 * stderr is a terminal (nothing otherwise), and let Ctrl-C stop the computation at its next
 * report. One at a time, on the calling thread; open no output file in between. */
void app_progress_begin(const char *label);
/* Remove the bar (erasing its line if it was drawn); after a Ctrl-C, say so and die of the
 * signal as usual (exit status 130). */
void app_progress_end(void);

#endif
