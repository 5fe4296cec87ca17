/* assets.h: where pelab's data lives. In order: $PELAB_ASSETS, the installed data beside the
 * binary (<bin>/../share/pelab), the source tree's assets/ (a build that has not been
 * installed), the installed data directory. */
#ifndef PELAB_APP_ASSETS_H
#define PELAB_APP_ASSETS_H

#include <stddef.h>

/* The assets directory, or NULL when none of the candidates exists. */
const char *app_assets_dir(void);
/* "<assets>/<rel>" into buf; returns 0, or -1 with a message naming the places looked in. */
int app_asset_path(const char *rel, char *buf, size_t n, char *err, size_t errlen);

#endif
