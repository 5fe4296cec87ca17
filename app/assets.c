/* assets.c: finding assets/ without baking one absolute path into the behaviour. */
#include "assets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pelab_build.h"

static int is_dir(const char *p)
{
    struct stat sb;
    return p && *p && stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

/* <the binary's folder>/PELAB_ASSETS_FROM_BIN: an installed binary's own data, wherever the
 * tree was installed. A binary in the build tree has none there and goes on to the sources. */
static const char *beside_binary(void)
{
    static char dir[4096];
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return NULL;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return NULL;
    *slash = '\0';
    if (PELAB_ASSETS_FROM_BIN[0] == '/')
        snprintf(dir, sizeof dir, "%s", PELAB_ASSETS_FROM_BIN);
    else
        snprintf(dir, sizeof dir, "%.2000s/%s", exe, PELAB_ASSETS_FROM_BIN);
    return dir;
}

const char *app_assets_dir(void)
{
    const char *env = getenv("PELAB_ASSETS");
    if (is_dir(env)) return env;
    const char *own = beside_binary();
    if (is_dir(own)) return own;
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
