/* assets.c: finding assets/ without baking one absolute path into the behaviour. */
#include "assets.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "pelab_build.h"

static int is_dir(const char *p)
{
    struct stat sb;
    return p && *p && stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

const char *app_assets_dir(void)
{
    const char *env = getenv("PELAB_ASSETS");
    if (is_dir(env)) return env;
    if (is_dir(PELAB_ASSETS_SRC)) return PELAB_ASSETS_SRC;
    if (is_dir(PELAB_ASSETS_INSTALLED)) return PELAB_ASSETS_INSTALLED;
    return NULL;
}

int app_asset_path(const char *rel, char *buf, size_t n, char *err, size_t errlen)
{
    const char *dir = app_assets_dir();
    if (!dir) {
        snprintf(err, errlen,
                 "cannot find pelab's assets (looked in $PELAB_ASSETS, %s, %s); set PELAB_ASSETS "
                 "to the assets/ folder",
                 PELAB_ASSETS_SRC, PELAB_ASSETS_INSTALLED);
        return -1;
    }
    snprintf(buf, n, "%s/%s", dir, rel);
    return 0;
}
