/* export.h: figures and their numbers to files. `pelab export`, the explorer's `s` key and the
 * window's `s` key all end here, so every saved figure carries the same metadata. */
#ifndef PELAB_APP_EXPORT_H
#define PELAB_APP_EXPORT_H

#include <stddef.h>

#include "datafile.h"
#include "fileopts.h"
#include "format.h"
#include "state.h"

/* Write the current view of st to path in the format of its extension. The figure is built for
 * width x height; .csv/.npy write the numbers behind it. Everything is checked before any work
 * and the file is written to a temporary name and renamed. Returns 0, 2 for a usage problem (bad
 * extension, missing directory: message in err), 1 for a runtime failure. */
int app_export_file(const app_state *st, const char *path, const app_export_opts *o, char *err,
                    size_t errlen);
/* The same in a named format ("png" .. "npy"; NULL: the extension), for "-" (standard output)
 * and devices, whose names say nothing. */
int app_export_file_as(const app_state *st, const char *path, const char *format,
                       const app_export_opts *o, char *err, size_t errlen);

/* A file name in the current directory that does not exist yet: pelab-<view>-<n>.png. */
void app_next_save_name(const app_state *st, const char *ext, char *buf, size_t n);

#endif
