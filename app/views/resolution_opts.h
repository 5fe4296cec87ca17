/* resolution_opts.h: the resolution view's option group (options/option_groups.h): its probe,
 * which app_state holds as st->resolution; its rows (--min-angle, --probe-d) are in
 * resolution.c. */
#ifndef PELAB_APP_RESOLUTION_OPTS_H
#define PELAB_APP_RESOLUTION_OPTS_H

typedef struct app_resolution_opts {
    double min_angle; /* probe threshold, radians */
    int probe_d;      /* probe distance D */
} app_resolution_opts;

void app_resolution_opts_default(app_resolution_opts *o);

#endif
