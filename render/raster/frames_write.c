/* frames_write.c: frames -> a folder of numbered PNGs (frame-0001.png ...) for video tools.
 *
 * The folder is filled under a temporary name next to it and renamed into place at the end (a
 * directory rename is atomic, and replaces an empty directory), so a failed run leaves nothing;
 * the temporary folder is in outfile's signal clean-up (outfile_live_dir), so a signal leaves
 * nothing either. Its name is short (.pelab-frames-XXXXXX) whatever the target's, and a folder
 * given through a symbolic link is filled where the link points: both are told before any frame
 * is drawn (issue 28). */
#define _XOPEN_SOURCE 700 /* realpath */
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "anim.h"
#include "outfile.h"

/* dir without trailing slashes, malloc'd ("/" stays "/"). */
static char *trim_slashes(const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') n--;
    char *s = malloc(n + 1);
    if (!s) return NULL;
    memcpy(s, dir, n);
    s[n] = 0;
    return s;
}

/* 1 when dir is a directory with nothing in it, 0 when it has entries, -1 when unreadable. */
static int dir_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int empty = 1;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            empty = 0;
            break;
        }
    closedir(d);
    return empty;
}

/* The folder the frames end up in: dir without trailing slashes, or where it points when it is
 * a symbolic link (rename(2) would replace the link, not fill the folder). malloc'd, or NULL with
 * the reason in err. */
static char *target_of(const char *dir, char *err, size_t errlen)
{
    char *d = trim_slashes(dir);
    if (!d || !*d) {
        free(d);
        snprintf(err, errlen, "-o '%s': name a folder for the frames", dir);
        return NULL;
    }
    struct stat sb;
    if (lstat(d, &sb) == 0 && S_ISLNK(sb.st_mode)) {
        char *real = realpath(d, NULL);
        if (!real) {
            snprintf(err, errlen, "-o %s: a symbolic link to nothing (%s); name a folder", dir,
                     strerror(errno));
            free(d);
            return NULL;
        }
        free(d);
        d = real;
    }
    return d;
}

int anim_frames_check(const char *dir, char *err, size_t errlen)
{
    char *d = target_of(dir, err, errlen);
    if (!d) return -1;
    struct stat sb;
    int rc = 0;
    const char *base = strrchr(d, '/') ? strrchr(d, '/') + 1 : d;
    if (strlen(base) > NAME_MAX) {
        snprintf(err, errlen, "-o %s: the folder name is %zu bytes, at most %d are allowed (%s)",
                 dir, strlen(base), NAME_MAX, strerror(ENAMETOOLONG));
        free(d);
        return -1;
    }
    if (strlen(d) > 4000) {
        snprintf(err, errlen, "-o %s: the path is too long", dir);
        free(d);
        return -1;
    }
    if (stat(d, &sb) == 0) {
        if (!S_ISDIR(sb.st_mode)) {
            snprintf(err, errlen, "-o %s: exists and is not a folder", dir);
            rc = -1;
        } else if (dir_empty(d) != 1) {
            snprintf(err, errlen,
                     "-o %s: the folder exists and is not empty (allowed: a new or empty folder)",
                     dir);
            rc = -1;
        }
    }
    if (rc == 0) {
        /* the folder's parent must exist and take a new entry */
        char *slash = strrchr(d, '/');
        const char *parent = !slash ? "." : slash == d ? "/" : (*slash = 0, d);
        if (stat(parent, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
            snprintf(err, errlen, "-o %s: folder '%s' does not exist", dir, parent);
            rc = -1;
        } else if (access(parent, W_OK | X_OK) != 0) {
            snprintf(err, errlen, "-o %s: folder '%s' is not writable", dir, parent);
            rc = -1;
        }
    }
    free(d);
    return rc;
}

static void remove_tree(const char *tmp, int n)
{
    char name[4300];
    for (int i = 1; i <= n; i++) {
        snprintf(name, sizeof name, "%s/frame-%04d.png", tmp, i);
        unlink(name);
    }
    rmdir(tmp);
}

/* "-o DIR: frame 3 of 12: No space left on device" from the PNG writer's message about the
 * temporary folder's file, which is no name the user knows. */
static void frame_error(const char *dir, int i, int n, char *err, size_t errlen)
{
    const char *why = strstr(err, ".png: ");
    char rest[512];
    snprintf(rest, sizeof rest, "%s", why ? why + 6 : err);
    if (strncmp(rest, "cannot write: ", 14) == 0) memmove(rest, rest + 14, strlen(rest + 14) + 1);
    snprintf(err, errlen, "-o %s: frame %d of %d: %s", dir, i, n, rest);
}

int anim_write_frames(const char *dir, const anim_frames *a, double dpi, const raster_meta *meta,
                      size_t n_meta, char *err, size_t errlen)
{
    if (anim_frames_check(dir, err, errlen) < 0) return -1;
    char *d = target_of(dir, err, errlen);
    raster_meta *m = calloc(n_meta + 2, sizeof *m);
    if (!d || !m) {
        if (d) snprintf(err, errlen, "-o %s: out of memory", dir);
        free(d);
        free(m);
        return -1;
    }
    const char *slash = strrchr(d, '/');
    char tmp[4200];
    if (!slash)
        snprintf(tmp, sizeof tmp, ".pelab-frames-XXXXXX");
    else
        snprintf(tmp, sizeof tmp, "%.*s/.pelab-frames-XXXXXX", (int)(slash - d), d);
    if (!mkdtemp(tmp)) {
        snprintf(err, errlen, "-o %s: cannot create a temporary folder: %s", dir, strerror(errno));
        free(d);
        free(m);
        return -1;
    }
    /* from here a terminating signal removes the frames and the folder */
    outfile_live_dir(tmp, a->n);
    /* mkdtemp makes it 0700; give it what mkdir would */
    mode_t mask = umask(022);
    umask(mask);
    chmod(tmp, 0777 & ~mask);
    if (n_meta) memcpy(m, meta, n_meta * sizeof *m);
    char frame_no[64], name[4300];
    m[n_meta] = (raster_meta){"Frame", frame_no};
    int rc = 0, i = 0;
    for (; i < a->n && rc == 0; i++) {
        snprintf(frame_no, sizeof frame_no, "%d of %d, at %d ms (%g fps)", i + 1, a->n,
                 anim_time_ms(i, a->fps), a->fps);
        snprintf(name, sizeof name, "%s/frame-%04d.png", tmp, i + 1);
        rc = png_write_argb(name, a->px[i], a->w, a->h, a->stride, dpi, m, n_meta + 1, err, errlen);
        if (rc != 0) frame_error(dir, i + 1, a->n, err, errlen);
    }
    if (rc == 0) {
        /* an existing folder was checked empty above, and rename replaces an empty folder */
        if (rename(tmp, d) != 0) {
            snprintf(err, errlen, "-o %s: rename failed: %s", dir, strerror(errno));
            rc = -1;
        }
    }
    if (rc != 0) remove_tree(tmp, a->n);
    outfile_live_dir(NULL, 0);
    free(d);
    free(m);
    return rc;
}
