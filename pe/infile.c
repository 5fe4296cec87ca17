/* infile.c: see infile.h. */
#define _POSIX_C_SOURCE 200809L
#include "infile.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pe_internal.h"

enum { MAX_NOTED = 64, PIECE = 1 << 20, POLL_MS = 100 };

static struct {
    unsigned long long dev, ino;
} noted[MAX_NOTED];
static int n_noted;
static pthread_mutex_t noted_mu = PTHREAD_MUTEX_INITIALIZER;

static void note_stat(const struct stat *st)
{
    pthread_mutex_lock(&noted_mu);
    int seen = 0;
    for (int i = 0; i < n_noted; i++)
        if (noted[i].dev == (unsigned long long)st->st_dev &&
            noted[i].ino == (unsigned long long)st->st_ino)
            seen = 1;
    if (!seen && n_noted < MAX_NOTED) {
        noted[n_noted].dev = (unsigned long long)st->st_dev;
        noted[n_noted].ino = (unsigned long long)st->st_ino;
        n_noted++;
    }
    pthread_mutex_unlock(&noted_mu);
}

void pe_infile_note(const char *path)
{
    struct stat st;
    if (path && *path && stat(path, &st) == 0 && S_ISREG(st.st_mode)) note_stat(&st);
}

int pe_infile_was_read(unsigned long long dev, unsigned long long ino)
{
    pthread_mutex_lock(&noted_mu);
    int hit = 0;
    for (int i = 0; i < n_noted; i++)
        if (noted[i].dev == dev && noted[i].ino == ino) hit = 1;
    pthread_mutex_unlock(&noted_mu);
    return hit;
}

void pe_infile_forget(void)
{
    pthread_mutex_lock(&noted_mu);
    n_noted = 0;
    pthread_mutex_unlock(&noted_mu);
}

/* "WHAT PATH: ..." or, without a what, "PATH: ..." */
#define W(what) (what && *what ? what : ""), (what && *what ? " " : "")

static const char *kind(mode_t m)
{
    return S_ISDIR(m)    ? "is a directory"
           : S_ISCHR(m)  ? "is a character device"
           : S_ISBLK(m)  ? "is a block device"
           : S_ISSOCK(m) ? "is a socket"
                         : "is not a regular file";
}

/* Open without blocking (a FIFO with no writer would wait in open(2) otherwise) and check the
 * type. Returns the descriptor, or -1 with the message written. */
static int open_checked(const char *path, const char *what, struct stat *st, char *err,
                        size_t errlen)
{
    if (!path || !*path) {
        pe_fail(err, errlen, PE_EINVAL, "%s: no file named", what && *what ? what : "input");
        return -1;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        pe_fail(err, errlen, PE_EINVAL, "%s%s%s: cannot open (%s)", W(what), path, strerror(errno));
        return -1;
    }
    if (fstat(fd, st) != 0) {
        pe_fail(err, errlen, PE_EINVAL, "%s%s%s: cannot read (%s)", W(what), path, strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st->st_mode) && !S_ISFIFO(st->st_mode)) {
        pe_fail(err, errlen, PE_EINVAL, "%s%s%s: %s; a regular file is expected", W(what), path,
                kind(st->st_mode));
        close(fd);
        return -1;
    }
    return fd;
}

int pe_infile_check(const char *path, const char *what, char *err, size_t errlen)
{
    struct stat st;
    int fd = open_checked(path, what, &st, err, errlen);
    if (fd < 0) return PE_EINVAL;
    close(fd);
    return PE_OK;
}

static void size_text(char *buf, size_t n, size_t bytes)
{
    if (bytes >= (1u << 20) && bytes % (1u << 20) == 0)
        snprintf(buf, n, "%zu MiB", bytes >> 20);
    else if (bytes >= 1024 && bytes % 1024 == 0)
        snprintf(buf, n, "%zu KiB", bytes >> 10);
    else
        snprintf(buf, n, "%zu bytes", bytes);
}

int pe_infile_read(const char *path, const char *what, size_t max, char **out, size_t *outlen,
                   char *err, size_t errlen)
{
    *out = NULL;
    *outlen = 0;
    struct stat st;
    int fd = open_checked(path, what, &st, err, errlen);
    if (fd < 0) return PE_EINVAL;
    char lim[32];
    size_text(lim, sizeof lim, max);
    int fifo = S_ISFIFO(st.st_mode);
    if (!fifo && (unsigned long long)st.st_size > max) {
        close(fd);
        return pe_fail(err, errlen, PE_EINVAL, "%s%s%s: %lld bytes; files over %s are refused",
                       W(what), path, (long long)st.st_size, lim);
    }
    if (!fifo) { /* a regular file reads without waiting: blocking reads are simpler */
        int fl = fcntl(fd, F_GETFL);
        if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    }
    size_t cap = fifo ? 65536 : (size_t)st.st_size + 2, len = 0;
    char *buf = malloc(cap);
    int rc = PE_OK;
    if (!buf) {
        rc = pe_fail(err, errlen, PE_ENOMEM, "%s%s%s: out of memory", W(what), path);
        goto out;
    }
    for (;;) {
        if (len > max) {
            rc = pe_fail(err, errlen, PE_EINVAL,
                         "%s%s%s: more than %s; inputs that large are refused", W(what), path, lim);
            goto out;
        }
        if (len + 1 >= cap) {
            size_t ncap = cap > max / 2 ? max + 2 : cap * 2;
            char *nb = ncap > cap ? realloc(buf, ncap) : NULL;
            if (!nb) {
                rc = pe_fail(err, errlen, PE_ENOMEM, "%s%s%s: out of memory", W(what), path);
                goto out;
            }
            buf = nb;
            cap = ncap;
        }
        /* a piece at a time, asking between pieces whether to stop (Ctrl-C, q, a newer
         * request); a negative fraction only asks */
        if (pe_work(-1)) {
            rc = pe_work_cancelled(err, errlen);
            goto out;
        }
        size_t want = cap - 1 - len;
        if (want > PIECE) want = PIECE;
        ssize_t got = read(fd, buf + len, want);
        if (got > 0) {
            len += (size_t)got;
            continue;
        }
        if (got == 0) break;
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            struct pollfd p = {.fd = fd, .events = POLLIN};
            poll(&p, 1, POLL_MS);
            continue;
        }
        rc = pe_fail(err, errlen, PE_EINVAL, "%s%s%s: cannot read (%s)", W(what), path,
                     strerror(errno));
        goto out;
    }
    buf[len] = '\0';
    note_stat(&st);
out:
    close(fd);
    if (rc != PE_OK) {
        free(buf);
        return rc;
    }
    *out = buf;
    *outlen = len;
    return PE_OK;
}
