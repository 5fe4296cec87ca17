/* export.h: figures and their numbers to files. `pelab export`, the explorer's `s` key and the
 * window's `s` key all end here, so every saved figure carries the same metadata. */
#ifndef PELAB_APP_EXPORT_H
#define PELAB_APP_EXPORT_H

#include <stddef.h>

#include "state.h"

typedef enum {
    APP_FMT_UNKNOWN = 0,
    APP_FMT_PNG,
    APP_FMT_SVG,
    APP_FMT_PDF,
    APP_FMT_CSV,
    APP_FMT_NPY,
} app_format;

/* The format named by path's extension (case-insensitive). */
app_format app_format_of(const char *path);
/* The format named by an extension, with or without its dot ("png", ".PNG"). */
app_format app_format_named(const char *ext);

typedef struct app_export_opts {
    int width, height; /* pixels (SVG/PDF: points at 96 per inch are the same numbers) */
    double dpi;        /* PNG pHYs */
} app_export_opts;

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

/* The title a file's metadata carries: the author's --title, else the view's description. */
const char *app_export_title(const app_state *st);
/* The text size in pixels of a figure: --font-size points at the dpi, or scaled to the size. */
double app_export_font_px(const app_state *st, const app_export_opts *o);
/* Write f as printf("%.9g") does (at most 16 bytes and a NUL into buf); returns the length.
 * The CSV writer's number format: 9 significant digits read back to the same float. */
int app_format_float(char *buf, float f);

/* `pelab export VIEW [options] -o FILE`: argv[0] is "export". Returns the exit status. */
int app_cmd_export(int argc, char **argv);

/* A file name in the current directory that does not exist yet: pelab-<view>-<n>.png. */
void app_next_save_name(const app_state *st, const char *ext, char *buf, size_t n);

#endif
