/* format.c: the format table (format.h). */
#include "format.h"

#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "anim.h"
#include "datafile.h"
#include "outfile.h"
#include "raster.h"

/* The animation writers in one shape (what each file can carry of the metadata differs). */
static int write_gif(const char *path, const anim_frames *a, double dpi, const raster_meta *meta,
                     size_t n_meta, char *err, size_t errlen)
{
    (void)dpi;
    return anim_write_gif(path, a, meta, n_meta, err, errlen);
}

static int write_webp(const char *path, const anim_frames *a, double dpi, const raster_meta *meta,
                      size_t n_meta, char *err, size_t errlen)
{
    (void)dpi, (void)meta, (void)n_meta;
    return anim_write_webp(path, a, err, errlen);
}

static int write_frames(const char *path, const anim_frames *a, double dpi, const raster_meta *meta,
                        size_t n_meta, char *err, size_t errlen)
{
    return anim_write_frames(path, a, dpi, meta, n_meta, err, errlen);
}

static int check_file(const char *path, char *err, size_t errlen)
{
    return outfile_check(path, err, errlen) < 0 ? -1 : 0;
}

static const app_format_info formats[] = {
    {.ext = "png",
     .id = APP_FMT_PNG,
     .kind = APP_FORMAT_FIGURE,
     .binary = 1,
     .figure = raster_export_as,
     .check = check_file},
    {.ext = "svg",
     .id = APP_FMT_SVG,
     .kind = APP_FORMAT_FIGURE,
     .binary = 0,
     .figure = raster_export_as,
     .check = check_file},
    {.ext = "pdf",
     .id = APP_FMT_PDF,
     .kind = APP_FORMAT_FIGURE,
     .binary = 1,
     .figure = raster_export_as,
     .check = check_file},
    {.ext = "csv",
     .id = APP_FMT_CSV,
     .kind = APP_FORMAT_DATA,
     .binary = 0,
     .data = app_write_csv,
     .check = check_file},
    {.ext = "npy",
     .id = APP_FMT_NPY,
     .kind = APP_FORMAT_DATA,
     .binary = 1,
     .data = app_write_npy,
     .check = check_file},
    {.ext = "gif",
     .id = APP_FMT_GIF,
     .kind = APP_FORMAT_ANIMATION,
     .binary = 1,
     .max_side = 65535,
     .animation = write_gif,
     .check = check_file},
    {.ext = "webp",
     .id = APP_FMT_WEBP,
     .kind = APP_FORMAT_ANIMATION,
     .binary = 1,
     .animation = write_webp,
     .check = check_file},
    {.ext = "/",
     .id = APP_FMT_FRAMES,
     .kind = APP_FORMAT_ANIMATION,
     .binary = 1,
     .animation = write_frames,
     .check = anim_frames_check},
};
enum { N_FORMATS = sizeof formats / sizeof formats[0] };

size_t app_format_count(void)
{
    return N_FORMATS;
}

const app_format_info *app_format_at(size_t i)
{
    return i < N_FORMATS ? &formats[i] : NULL;
}

const app_format_info *app_format_info_of(app_format f)
{
    for (size_t i = 0; i < N_FORMATS; i++)
        if (formats[i].id == f) return &formats[i];
    return NULL;
}

app_format app_format_named_as(const char *ext, unsigned kinds)
{
    if (*ext == '.') ext++;
    for (size_t i = 0; i < N_FORMATS; i++)
        if ((formats[i].kind & kinds) && strcmp(formats[i].ext, "/") != 0 &&
            strcasecmp(ext, formats[i].ext) == 0)
            return formats[i].id;
    return APP_FMT_UNKNOWN;
}

app_format app_format_of_as(const char *path, unsigned kinds)
{
    size_t n = strlen(path);
    struct stat sb;
    int folder = (n && path[n - 1] == '/') || (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode));
    for (size_t i = 0; folder && i < N_FORMATS; i++)
        if ((formats[i].kind & kinds) && strcmp(formats[i].ext, "/") == 0) return formats[i].id;
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');
    return dot ? app_format_named_as(dot, kinds) : APP_FMT_UNKNOWN;
}

app_format app_format_named(const char *ext)
{
    return app_format_named_as(ext, APP_FORMAT_FILES);
}

app_format app_format_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');
    return dot ? app_format_named_as(dot, APP_FORMAT_FILES) : APP_FMT_UNKNOWN;
}

size_t app_format_names(unsigned kinds, const char **out, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < N_FORMATS && k < n; i++)
        if (formats[i].kind & kinds) out[k++] = formats[i].ext;
    return k;
}

void app_format_list(unsigned kinds, const char *prefix, char *buf, size_t n)
{
    size_t u = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < N_FORMATS && u < n; i++)
        if (formats[i].kind & kinds)
            u += (size_t)snprintf(buf + u, n - u, "%s%s%s", u ? " " : "", prefix, formats[i].ext);
}
