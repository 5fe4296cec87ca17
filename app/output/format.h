/* format.h: every file format pelab writes, in one table: its extension, its kind (a figure, the
 * numbers behind it, or an animation of it), its writer and whether it is binary. `--format`'s
 * values, the format an -o name picks, the messages that list the allowed ones and the writer an
 * export or an animation calls are all read from it. Adding a format is one row in format.c
 * (and its writer: render/raster for figures and animations, datafile.c for numbers). */
#ifndef PELAB_APP_FORMAT_H
#define PELAB_APP_FORMAT_H

#include <stddef.h>
#include <stdio.h>

typedef enum {
    APP_FMT_UNKNOWN = 0,
    APP_FMT_PNG,
    APP_FMT_SVG,
    APP_FMT_PDF,
    APP_FMT_CSV,
    APP_FMT_NPY,
    APP_FMT_GIF,
    APP_FMT_WEBP,
    APP_FMT_FRAMES, /* a folder of numbered PNGs */
} app_format;

/* What a format holds (bits, so a lookup can take several). */
typedef enum {
    APP_FORMAT_FIGURE = 1u << 0,    /* the figure: drawn by render/raster */
    APP_FORMAT_DATA = 1u << 1,      /* the numbers behind it: datafile.h */
    APP_FORMAT_ANIMATION = 1u << 2, /* frames of a sweep (--animate): render/raster/anim.h */
} app_format_kind;
#define APP_FORMAT_FILES (APP_FORMAT_FIGURE | APP_FORMAT_DATA) /* what `pelab export -o` takes */

struct app_data;
struct anim_frames;
struct raster_meta;
struct raster_export_opts;
struct scene;

typedef struct app_format_info {
    const char *ext; /* "png" (-o FILE.png, --format png); "/" for a folder (FOLDER/) */
    app_format id;
    app_format_kind kind;
    int binary;   /* not for a terminal */
    int max_side; /* largest width or height in pixels the format holds; 0: no limit of its own */
    /* the writer, one per kind: a figure (raster_export_as: the format named by ext) ... */
    int (*figure)(const struct scene *s, const char *path, const char *ext,
                  const struct raster_export_opts *o, char *err, size_t errlen);
    /* ... the numbers (command: the provenance; long_form: CSV's one row per value) ... */
    int (*data)(FILE *fp, const struct app_data *d, const char *command, int long_form);
    /* ... or an animation, with where it may be written checked first */
    int (*animation)(const char *path, const struct anim_frames *a, double dpi,
                     const struct raster_meta *meta, size_t n_meta, char *err, size_t errlen);
    int (*check)(const char *path, char *err, size_t errlen);
} app_format_info;

size_t app_format_count(void);
const app_format_info *app_format_at(size_t i);
/* The row of f; NULL for APP_FMT_UNKNOWN. */
const app_format_info *app_format_info_of(app_format f);
/* The format of one of kinds named by an extension, with or without its dot ("png", ".PNG"). */
app_format app_format_named_as(const char *ext, unsigned kinds);
/* The format of one of kinds that path names: a folder (a name ending in '/', or an existing
 * folder) for a kind that is one, else its extension (case-insensitive). */
app_format app_format_of_as(const char *path, unsigned kinds);
/* The figure and data formats (what `pelab export -o` and --format take). */
app_format app_format_named(const char *ext);
app_format app_format_of(const char *path);
/* The extensions of kinds in table order into out (at most n); returns the count. */
size_t app_format_names(unsigned kinds, const char **out, size_t n);
/* The same as one line, each after prefix: ".png .svg .pdf .csv .npy". */
void app_format_list(unsigned kinds, const char *prefix, char *buf, size_t n);

#endif
