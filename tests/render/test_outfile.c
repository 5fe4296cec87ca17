/* test_outfile: atomic replace, abort leaves nothing, and the messages for a missing,
 * non-directory or unwritable directory and for a path that is a directory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "pngio.h"
#include "tap.h"

static int contains(const char *s, const char *sub)
{
    return s && strstr(s, sub) != NULL;
}

int main(void)
{
    char dir[512], path[700], err[512];
    if (test_tmpdir(dir, sizeof dir, "outfile") != 0) return tap_skip_all("no temporary directory");

    /* Replace an existing file: until commit the old content stays, then the new one. */
    snprintf(path, sizeof path, "%s/fig.png", dir);
    FILE *fp = fopen(path, "wb");
    fputs("old", fp);
    fclose(fp);
    outfile o;
    TAP_OK(outfile_open(&o, path, err, sizeof err) == 0, "open over an existing file");
    fputs("new content", o.fp);
    char *before = file_read(path, NULL);
    TAP_OK(before && strcmp(before, "old") == 0, "the old file is intact while writing");
    free(before);
    char expect_prefix[700];
    snprintf(expect_prefix, sizeof expect_prefix, "%s/.fig.png.tmp.", dir);
    TAP_OK(strncmp(o.tmp, expect_prefix, strlen(expect_prefix)) == 0,
           "temporary is <dir>/.<base>.tmp.XXXXXX (%s)", o.tmp);
    TAP_OK(dir_entries(dir) == 2, "the temporary sits next to the target");
    TAP_OK(outfile_commit(&o, err, sizeof err) == 0, "commit");
    char *after = file_read(path, NULL);
    TAP_OK(after && strcmp(after, "new content") == 0, "commit replaced the content");
    free(after);
    TAP_OK(dir_entries(dir) == 1, "no temporary left after commit");
    TAP_OK(o.fp == NULL && o.tmp == NULL && o.path == NULL, "commit clears the struct");
    outfile_abort(&o); /* accepts a committed struct */

    /* Permissions: those of a plain fopen (0666 & ~umask), not mkstemp's 0600. */
    mode_t mask = umask(022);
    umask(mask);
    struct stat st;
    TAP_OK(stat(path, &st) == 0 && (st.st_mode & 0777) == (0666 & ~mask),
           "mode %03o = 0666 & ~umask", (unsigned)(st.st_mode & 0777));

    /* Abort leaves nothing behind and keeps the old file. */
    TAP_OK(outfile_open(&o, path, err, sizeof err) == 0, "open again");
    fputs("half-written", o.fp);
    outfile_abort(&o);
    after = file_read(path, NULL);
    TAP_OK(after && strcmp(after, "new content") == 0, "abort keeps the existing file");
    free(after);
    TAP_OK(dir_entries(dir) == 1, "abort removes the temporary");
    char fresh[700];
    snprintf(fresh, sizeof fresh, "%s/fresh.svg", dir);
    TAP_OK(outfile_open(&o, fresh, err, sizeof err) == 0, "open a new name");
    outfile_abort(&o);
    TAP_OK(access(fresh, F_OK) != 0 && dir_entries(dir) == 1, "aborted new file does not exist");
    outfile zero = {0};
    outfile_abort(&zero);
    TAP_OK(1, "abort accepts a zeroed struct");

    /* Messages. */
    char missing[700];
    snprintf(missing, sizeof missing, "%s/out/x.png", dir);
    err[0] = 0;
    TAP_OK(outfile_check(missing, err, sizeof err) == -1, "missing directory fails");
    char want[2048];
    if (snprintf(want, sizeof want, "-o %s: directory '%s/out' does not exist", missing, dir) >=
        (int)sizeof want)
        return tap_skip_all("temporary path too long");
    TAP_OK(strcmp(err, want) == 0, "message: %s", err);
    TAP_OK(outfile_open(&o, missing, err, sizeof err) == -1 && o.fp == NULL,
           "open fails the same way");

    snprintf(want, sizeof want, "%s/fig.png/x.png", dir); /* under a regular file */
    TAP_OK(outfile_check(want, err, sizeof err) == -1 && contains(err, "is not a directory") &&
               contains(err, "-o "),
           "path under a regular file: %s", err);

    TAP_OK(outfile_check(dir, err, sizeof err) == -1 && contains(err, ": is a directory"),
           "a directory as the output: %s", err);
    snprintf(want, sizeof want, "%s/", dir);
    TAP_OK(outfile_check(want, err, sizeof err) == -1 && contains(err, "is a directory"),
           "trailing slash: %s", err);
    TAP_OK(outfile_check("", err, sizeof err) == -1 && contains(err, "empty"), "empty path");
    TAP_OK(outfile_check("relative-name.png", err, sizeof err) == 0,
           "a bare name checks the current directory");

    char ro[700];
    snprintf(ro, sizeof ro, "%s/ro", dir);
    mkdir(ro, 0555);
    snprintf(want, sizeof want, "%s/x.pdf", ro);
    if (geteuid() == 0) {
        /* root writes anywhere: the "under a regular file" case above stands in for it. */
        tap_diag("running as root: the read-only directory case is checked by access() only");
        TAP_OK(outfile_check(want, err, sizeof err) == 0, "root may write into a 0555 directory");
    } else {
        TAP_OK(outfile_check(want, err, sizeof err) == -1 && contains(err, "is not writable"),
               "read-only directory: %s", err);
        TAP_OK(outfile_open(&o, want, err, sizeof err) == -1 && dir_entries(ro) == 0,
               "open in a read-only directory creates nothing");
    }
    rm_tree(dir);
    return tap_done();
}
