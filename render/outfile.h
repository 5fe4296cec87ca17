/* outfile.h: write a file under a temporary name in its directory, then rename it into place.
 * An existing file is never left half-written; an aborted write leaves nothing behind. */
#ifndef PELAB_OUTFILE_H
#define PELAB_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct outfile {
    FILE *fp;   /* write here */
    char *path; /* final name */
    char *tmp;  /* temporary name "<dir>/.<base>.tmp.XXXXXX" */
} outfile;

/* Check that path's directory exists and is writable, create the temporary file.
 * Returns 0 or -1 with "-o PATH: <reason>" in err. */
int outfile_open(outfile *o, const char *path, char *err, size_t errlen);
/* Flush, fsync, close and rename. Returns 0 or -1 (the temporary is removed). */
int outfile_commit(outfile *o, char *err, size_t errlen);
/* Close and remove the temporary. Accepts a zeroed or committed struct. */
void outfile_abort(outfile *o);
/* Check only (before any work): directory exists and is writable, path is not a directory. */
int outfile_check(const char *path, char *err, size_t errlen);

#endif
