/* infile.h: the one way pelab reads a file it was given (--config, --data, --model, eval's
 * models, lessons, corpora). Issue 28: an endless input (/dev/zero), a FIFO nobody writes, a
 * terminal or a folder must never hang or be read without end.
 *
 *   a regular file          read whole, refused past max bytes (told from its size, before
 *                           reading), in 1 MiB pieces that ask pe_work whether to stop
 *   a FIFO or a pipe        (--config <(...), /dev/stdin from a pipe) opened without blocking,
 *                           read as it comes with poll() in 100 ms steps that ask pe_work, and
 *                           cut at max bytes with a message; nobody at the other end reads as
 *                           empty, never waits
 *   a device, a socket,     refused before reading: "WHAT PATH: is a character device; a
 *   a folder                regular file is expected"
 *
 * The device and inode of every file read are remembered, so an output can refuse to replace
 * one of the command's inputs (pe_infile_was_read). */
#ifndef PELAB_INFILE_H
#define PELAB_INFILE_H

#include <stddef.h>

/* Read path whole into *buf (malloc'd, NUL-terminated; *len bytes without the NUL). what names
 * the option in messages ("--data"). Returns PE_OK, PE_EINVAL (the type, the size, a read
 * error: "WHAT PATH: ..."), PE_ENOMEM or PE_ECANCELED. */
int pe_infile_read(const char *path, const char *what, size_t max, char **buf, size_t *len,
                   char *err, size_t errlen);
/* Only the checks: the path can be opened without blocking and is a regular file or a FIFO.
 * For a caller that opens the file itself later (a library's own reader). */
int pe_infile_check(const char *path, const char *what, char *err, size_t errlen);
/* Remember path (device and inode, when it exists) as an input of this command. */
void pe_infile_note(const char *path);
/* 1 when dev/ino is a file this process read (or noted) as an input. */
int pe_infile_was_read(unsigned long long dev, unsigned long long ino);
/* Forget every input (tests, the explorer between builds). */
void pe_infile_forget(void);

#endif
