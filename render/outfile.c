/* outfile.c: atomic file output (temporary file in the same directory, fsync, rename). */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* Directory part of path ("." when there is none, "/" for "/x"); malloc'd. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return strdup(".");
    size_t n = (size_t)(slash - path);
    while (n > 0 && path[n - 1] == '/') n--; /* "a//b" -> "a" */
    if (n == 0) return strdup("/");
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, path, n);
    d[n] = 0;
    return d;
}

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int outfile_check(const char *path, char *err, size_t errlen)
{
    if (!path || !*path) {
        snprintf(err, errlen, "-o '': the output file name is empty");
        return -1;
    }
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "-o %s: is a directory", path);
        return -1;
    }
    if (!*base_of(path)) {
        snprintf(err, errlen, "-o %s: is a directory (no file name after the last '/')", path);
        return -1;
    }
    char *dir = dir_of(path);
    if (!dir) {
        snprintf(err, errlen, "-o %s: out of memory", path);
        return -1;
    }
    int rc = 0;
    if (stat(dir, &st) != 0) {
        if (errno == ENOENT)
            snprintf(err, errlen, "-o %s: directory '%s' does not exist", path, dir);
        else if (errno == ENOTDIR)
            snprintf(err, errlen, "-o %s: '%s' is not a directory (a part of it is a file)", path,
                     dir);
        else
            snprintf(err, errlen, "-o %s: directory '%s': %s", path, dir, strerror(errno));
        rc = -1;
    } else if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "-o %s: '%s' is not a directory", path, dir);
        rc = -1;
    } else if (access(dir, W_OK | X_OK) != 0) {
        snprintf(err, errlen, "-o %s: directory '%s' is not writable", path, dir);
        rc = -1;
    }
    free(dir);
    return rc;
}

int outfile_open(outfile *o, const char *path, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    if (outfile_check(path, err, errlen) != 0) return -1;
    char *dir = dir_of(path);
    const char *base = base_of(path);
    size_t dn = dir ? strlen(dir) : 0, bn = strlen(base);
    static const char suffix[] = ".tmp.XXXXXX";
    o->path = strdup(path);
    o->tmp = dir && bn < SIZE_MAX / 2 ? malloc(dn + 2 + bn + sizeof suffix) : NULL;
    if (!dir || !o->path || !o->tmp) {
        snprintf(err, errlen, "-o %s: out of memory", path);
        free(dir);
        free(o->path);
        free(o->tmp);
        memset(o, 0, sizeof *o);
        return -1;
    }
    snprintf(o->tmp, dn + 2 + bn + sizeof suffix, "%s/.%s%s", dir, base, suffix);
    int fd = mkstemp(o->tmp);
    if (fd < 0) {
        snprintf(err, errlen, "-o %s: cannot create a temporary file in '%s': %s", path, dir,
                 strerror(errno));
        free(dir);
        free(o->path);
        free(o->tmp);
        memset(o, 0, sizeof *o);
        return -1;
    }
    free(dir);
    /* mkstemp makes the file 0600; the result should get the permissions a plain fopen would
     * give it. There is no way to read the umask without setting it, so set it back at once. */
    mode_t mask = umask(022);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        /* Not fatal: the file is still written, only with tighter permissions. */
    }
    o->fp = fdopen(fd, "wb");
    if (!o->fp) {
        snprintf(err, errlen, "-o %s: %s", path, strerror(errno));
        close(fd);
        outfile_abort(o);
        return -1;
    }
    return 0;
}

int outfile_commit(outfile *o, char *err, size_t errlen)
{
    if (!o->fp || !o->tmp || !o->path) {
        snprintf(err, errlen, "-o %s: the file was not opened", o->path ? o->path : "?");
        outfile_abort(o);
        return -1;
    }
    int failed = 0, saved = 0;
    if (fflush(o->fp) != 0 || ferror(o->fp)) {
        failed = 1;
        saved = errno;
    } else if (fsync(fileno(o->fp)) != 0 && errno != EINVAL) {
        /* EINVAL: the file system cannot sync (e.g. a pipe-like special file); not an error. */
        failed = 1;
        saved = errno;
    }
    if (fclose(o->fp) != 0 && !failed) {
        failed = 1;
        saved = errno;
    }
    o->fp = NULL;
    if (!failed && rename(o->tmp, o->path) != 0) {
        failed = 1;
        saved = errno;
    }
    if (failed) {
        snprintf(err, errlen, "-o %s: write failed: %s", o->path, strerror(saved));
        outfile_abort(o);
        return -1;
    }
    /* Make the rename itself durable; best effort (some file systems refuse to sync a
     * directory, and the data is already safe under its final name). */
    char *dir = dir_of(o->path);
    if (dir) {
        int dfd = open(dir, O_RDONLY);
        if (dfd >= 0) {
            if (fsync(dfd) != 0) {
                /* ignored, see above */
            }
            close(dfd);
        }
        free(dir);
    }
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
    return 0;
}

void outfile_abort(outfile *o)
{
    if (o->fp) fclose(o->fp);
    if (o->tmp) unlink(o->tmp);
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
}
