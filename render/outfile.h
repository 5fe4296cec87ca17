/* outfile.h: the one way pelab writes an output file (-o, the explorer's `s`, checkpoints).
 *
 * What the target is decides how it is written:
 *   a regular file or a new name  a unique temporary file in the same folder (mkstemp, a short
 *                                 name whatever the target's length), renamed over the target
 *                                 on commit: an existing file is never left half-written
 *   a symbolic link               followed; the file it points to is replaced as above, the link
 *                                 is kept
 *   a character device, a FIFO,   written directly (-o /dev/null stays a device); a FIFO with
 *                                 no reader is refused at once, never waited for
 *   a socket
 *   "-"                           standard output, for the commands that allow it
 * A read-only file (unless --force), an input of the same command (same device and inode), a
 * folder, a missing folder, one we cannot create files in, or a block device is refused with
 * a message before any work. Temporary files are removed on every exit path: commit, abort,
 * exit(), and the terminating signals (the handler removes them and dies of the signal). */
#ifndef PELAB_OUTFILE_H
#define PELAB_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct outfile_sink outfile_sink;

typedef struct outfile {
    FILE *fp;           /* write here */
    char *path;         /* the name as given */
    char *tmp;          /* the temporary being written, NULL when written in place */
    outfile_sink *sink; /* where fp's bytes go; remembers the first write error */
} outfile;

/* Check the target, create the temporary (or open the device). Returns 0, or -1 with
 * "-o PATH: <what is wrong>" in err. "-" is standard output. */
int outfile_open(outfile *o, const char *path, char *err, size_t errlen);
/* Flush, fsync, close and rename into place. Returns 0 or -1 (with the OS's reason; the
 * temporary is removed). */
int outfile_commit(outfile *o, char *err, size_t errlen);
/* Close and remove the temporary. Accepts a zeroed or committed struct. */
void outfile_abort(outfile *o);
/* A writer gave up (libpng, cairo, a short write): abort, and say why in err. When a write
 * failed the OS's reason is given ("No space left on device"), else "-o PATH: <what>". */
void outfile_fail(outfile *o, const char *what, char *err, size_t errlen);
/* Check only, before any work: everything outfile_open checks, including that a file can be
 * created in the folder (a temporary is created and removed at once). "-" passes. */
int outfile_check(const char *path, char *err, size_t errlen);
/* Whether a file of bytes fits: the folder path goes to has the room (statvfs; a device, "-"
 * or a file system that does not say always has) and the file-size limit (ulimit -f) allows
 * it. Returns 0 or -1 with a message. */
int outfile_room(const char *path, unsigned long long bytes, char *err, size_t errlen);
/* fn(dev, ino) says whether a file is an input of this command (infile.h's pe_infile_was_read):
 * such a target is refused, at the check and again at the open (issue 28: -o x.csv --data
 * x.csv destroyed the table). */
void outfile_set_input_check(int (*fn)(unsigned long long dev, unsigned long long ino));
/* --force: a read-only target (no write bit, or access(2) says no) is replaced; without it, it
 * is refused. */
void outfile_set_force(int on);
int outfile_forced(void);
/* A frames folder being filled under a temporary name (dir), with up to frames files
 * frame-NNNN.png: the terminating signals and exit() remove them and the folder. NULL when it
 * was renamed into place or removed. Returns -1 when the name is too long to register. */
int outfile_live_dir(const char *dir, int frames);
/* At start: SIGXFSZ from the file-size limit (ulimit -f) leaves the failing write to report
 * EFBIG; sent by another process it removes the temporaries and ends the process (128+25). */
void outfile_signals_init(void);
/* 1 when path names standard output ("-"). */
int outfile_is_stdout(const char *path);
/* 1 when path is (or links to) a character device, FIFO or socket, written in place: the
 * extension of such a name says nothing about the format. */
int outfile_is_special(const char *path);

#endif
