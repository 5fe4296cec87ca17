/* outfile.c: every output file goes through here (see outfile.h for what each kind of target
 * gets). The stream handed to writers is a stdio cookie over the file descriptor, so the OS's
 * reason for the first failed write is kept whatever library did the writing (libpng and cairo
 * report only "write error"). */
#define _GNU_SOURCE /* fopencookie */
#include "outfile.h"
#include "termsig.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

enum { FIFO_WAIT_MS = 3000 }; /* how long a FIFO's reader may take to appear */

struct outfile_sink {
    int fd;
    int err;     /* errno of the first failed write, 0 while none failed */
    int keep_fd; /* standard output: flushed, never closed */
    int sync;    /* a regular file: fsync before the rename */
};

/* ---- what may not be replaced ------------------------------------------------------------- */

static int (*is_input)(unsigned long long dev, unsigned long long ino);
static int force;

void outfile_set_input_check(int (*fn)(unsigned long long dev, unsigned long long ino))
{
    is_input = fn;
}

void outfile_set_force(int on)
{
    force = on;
}

int outfile_forced(void)
{
    return force;
}

/* ---- temporaries that the signal handlers and exit() remove ------------------------------ */

enum { MAX_LIVE = 16 };
/* The paths of the temporaries that exist right now. Written with the signals below blocked,
 * read by the handler, which only unlinks (async-signal-safe). */
static char *volatile live[MAX_LIVE];

/* Signals whose default action ends the process: with a temporary on disk, each removes it first
 * and then dies of the same signal, so the exit status is still 128+N. */
static int cleanup_signals[TERMSIG_MAX], n_cleanup; /* termsig.h's list, on first use */

static void cleanup_signals_load(void)
{
    if (!n_cleanup) n_cleanup = termsig_list(cleanup_signals);
}

/* The frames folder being filled (outfile_live_dir): its name, and how many frame-NNNN.png it
 * may hold. The handler builds each name by hand (snprintf is not async-signal-safe). */
static char live_dir[4200];
static volatile sig_atomic_t live_dir_on, live_dir_frames;

static void remove_live_dir(void)
{
    if (!live_dir_on) return;
    size_t n = strlen(live_dir);
    if (n + 32 > sizeof live_dir) return;
    char name[sizeof live_dir];
    memcpy(name, live_dir, n);
    for (int i = 1; i <= live_dir_frames; i++) {
        char *p = name + n;
        memcpy(p, "/frame-", 7);
        p += 7;
        char digits[12];
        int k = 0;
        for (int v = i; v > 0 || k < 4; v /= 10) digits[k++] = (char)('0' + v % 10);
        while (k > 0) *p++ = digits[--k];
        memcpy(p, ".png", 5);
        unlink(name);
    }
    rmdir(live_dir);
}

static void remove_live(void)
{
    for (int i = 0; i < MAX_LIVE; i++) {
        char *p = live[i];
        if (p) unlink(p);
    }
    remove_live_dir();
}

static void on_signal(int sig)
{
    int e = errno;
    int writing = live_dir_on;
    for (int i = 0; i < MAX_LIVE; i++) writing |= live[i] != NULL;
    remove_live();
    /* Ctrl-C is a person's: say what became of the output (issue 28: an animation stopped while
     * its frames were written ended without a word). Other signals stay silent, as a kill
     * should. write(2) is async-signal-safe. */
    if (sig == SIGINT && writing) {
        static const char msg[] = "pelab: interrupted (Ctrl-C) while writing; no file written\n";
        ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)w;
    }
    errno = e;
    /* SA_RESETHAND put the default action back: raising again ends the process with sig. */
    raise(sig);
}

/* SIGXFSZ: the kernel sends it to a process whose write passes the file-size limit (ulimit -f),
 * and that write then fails with EFBIG, which the writer reports ("File too large"). Sent by
 * anyone else (kill -XFSZ) it ends the process like the other signals (issue 28: pelab ignored
 * it). The kernel's own is told by its sender: the process itself, with SI_USER. */
static void on_xfsz(int sig, siginfo_t *info, void *uc)
{
    (void)uc;
    if (info && info->si_code == SI_USER && info->si_pid == getpid()) return;
    int e = errno;
    remove_live();
    errno = e;
    signal(sig, SIG_DFL);
    raise(sig);
}

void outfile_signals_init(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_xfsz;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGXFSZ, &sa, NULL);
}

static void block_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    cleanup_signals_load();
    for (int i = 0; i < n_cleanup; i++) sigaddset(&set, cleanup_signals[i]);
    sigprocmask(SIG_BLOCK, &set, old);
}

/* Install the handler for every signal still at its default action. One that somebody handles
 * (the terminal explorer, train's Ctrl-C) or ignores is left alone: that code returns normally
 * and the commit or abort removes the temporary. */
static void handlers_install(void)
{
    static int at_exit_done;
    if (!at_exit_done) {
        atexit(remove_live);
        at_exit_done = 1;
    }
    cleanup_signals_load();
    for (int i = 0; i < n_cleanup; i++) {
        struct sigaction cur;
        if (sigaction(cleanup_signals[i], NULL, &cur) != 0) continue;
        if ((cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_DFL) continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND | SA_NODEFER;
        sigaction(cleanup_signals[i], &sa, NULL);
    }
}

int outfile_live_dir(const char *dir, int frames)
{
    if (dir && strlen(dir) + 32 > sizeof live_dir) return -1;
    handlers_install();
    sigset_t old;
    block_signals(&old);
    if (dir) {
        memcpy(live_dir, dir, strlen(dir) + 1);
        live_dir_frames = frames;
        live_dir_on = 1;
    } else {
        live_dir_on = 0;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return 0;
}

static int live_add(char *tmp)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (!live[i]) {
            live[i] = tmp;
            return 0;
        }
    return -1;
}

static void live_remove(const char *tmp)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i] == tmp) live[i] = NULL;
}

/* ---- names ------------------------------------------------------------------------------- */

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

int outfile_is_stdout(const char *path)
{
    return path && strcmp(path, "-") == 0;
}

/* Follow symbolic links (a dangling one too: its target is created) to the name that is
 * replaced. Returns a malloc'd path, or NULL with errno (ELOOP, ENOMEM, a readlink error). */
static char *resolve(const char *path)
{
    char *cur = strdup(path);
    for (int depth = 0; cur && depth < 40; depth++) {
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) return cur;
        char link[PATH_MAX];
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0) {
            int e = errno;
            free(cur);
            errno = e;
            return NULL;
        }
        link[n] = 0;
        char *next;
        if (link[0] == '/') {
            next = strdup(link);
        } else {
            char *dir = dir_of(cur);
            size_t len = dir ? strlen(dir) + 1 + (size_t)n + 1 : 0;
            next = dir ? malloc(len) : NULL;
            if (next) snprintf(next, len, "%s/%s", dir, link);
            free(dir);
        }
        free(cur);
        cur = next;
    }
    if (cur) {
        free(cur);
        errno = ELOOP;
    } else {
        errno = ENOMEM;
    }
    return NULL;
}

typedef enum { T_NEW, T_REGULAR, T_SPECIAL, T_SOCKET } target_kind;

/* The temporary's name: short whatever the target's, so a legal long name still works. */
static char *tmp_name(const char *dir)
{
    static const char pattern[] = "/.pelab-XXXXXX";
    size_t n = strlen(dir) + sizeof pattern;
    char *t = malloc(n);
    if (t) snprintf(t, n, "%s%s", dir, pattern);
    return t;
}

/* Work out what path is and whether it can be written. On success *target is the name to
 * replace or open (malloc'd) and *kind what it is; *mode the existing file's permissions. */
static int examine(const char *path, char **target, target_kind *kind, mode_t *mode, char *err,
                   size_t errlen)
{
    *target = NULL;
    if (!path || !*path) {
        snprintf(err, errlen, "-o '': the output file name is empty");
        return -1;
    }
    char *t = resolve(path);
    if (!t) {
        snprintf(err, errlen, "-o %s: %s", path,
                 errno == ELOOP ? "too many levels of symbolic links" : strerror(errno));
        return -1;
    }
    const char *link_note = strcmp(t, path) ? " (where the link points)" : "";
    struct stat st;
    int exists = lstat(t, &st) == 0;
    if (!exists && errno != ENOENT && errno != ENOTDIR) {
        snprintf(err, errlen, "-o %s: %s", path, strerror(errno));
        free(t);
        return -1;
    }
    if (exists && S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "-o %s: is a directory%s; give a file name", path, link_note);
        free(t);
        return -1;
    }
    if (!*base_of(t)) {
        snprintf(err, errlen, "-o %s: is a directory (no file name after the last '/')", path);
        free(t);
        return -1;
    }
    if (exists && S_ISBLK(st.st_mode)) {
        snprintf(err, errlen,
                 "-o %s: is a block device%s; pelab writes files, character devices, FIFOs and "
                 "sockets",
                 path, link_note);
        free(t);
        return -1;
    }
    if (exists && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
        if (access(t, W_OK) != 0) {
            snprintf(err, errlen, "-o %s: cannot write to it (%s)", path, strerror(errno));
            free(t);
            return -1;
        }
        *kind = S_ISSOCK(st.st_mode) ? T_SOCKET : T_SPECIAL;
        *target = t;
        return 0;
    }
    if (exists && is_input &&
        is_input((unsigned long long)st.st_dev, (unsigned long long)st.st_ino)) {
        snprintf(err, errlen,
                 "-o %s: is an input of this command%s; write the output to another file", path,
                 link_note);
        free(t);
        return -1;
    }
    /* a read-only file says "keep me": replaced only when asked (root could, by the rename) */
    if (exists && !force && (!(st.st_mode & 0222) || access(t, W_OK) != 0)) {
        snprintf(err, errlen, "-o %s: the file is read-only%s (mode %04o); --force replaces it",
                 path, link_note, (unsigned)(st.st_mode & 07777));
        free(t);
        return -1;
    }
    *kind = exists ? T_REGULAR : T_NEW;
    *mode = exists ? st.st_mode & 07777 : 0;
    char *dir = dir_of(t);
    if (!dir) {
        snprintf(err, errlen, "-o %s: out of memory", path);
        free(t);
        return -1;
    }
    int rc = 0;
    long name_max = pathconf(dir, _PC_NAME_MAX);
    if (name_max <= 0) name_max = NAME_MAX;
    if (stat(dir, &st) == 0 && strlen(base_of(t)) > (size_t)name_max) {
        /* the rename at the end would fail: say it now */
        snprintf(err, errlen, "-o %s: the name is %zu bytes, the folder allows %ld (%s)", path,
                 strlen(base_of(t)), name_max, strerror(ENAMETOOLONG));
        rc = -1;
    } else if (stat(dir, &st) != 0) {
        if (errno == ENOENT)
            snprintf(err, errlen, "-o %s: folder '%s' does not exist", path, dir);
        else if (errno == ENOTDIR)
            snprintf(err, errlen, "-o %s: '%s' is not a directory (a part of it is a file)", path,
                     dir);
        else
            snprintf(err, errlen, "-o %s: folder '%s': %s", path, dir, strerror(errno));
        rc = -1;
    } else if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "-o %s: '%s' is not a directory", path, dir);
        rc = -1;
    }
    free(dir);
    if (rc) {
        free(t);
        return -1;
    }
    *target = t;
    return 0;
}

/* Create the temporary next to target and register it for removal; fd or -1 with errno. */
static int tmp_create(const char *target, char **tmp)
{
    char *dir = dir_of(target);
    *tmp = dir ? tmp_name(dir) : NULL;
    free(dir);
    if (!*tmp) {
        errno = ENOMEM;
        return -1;
    }
    handlers_install();
    sigset_t old;
    block_signals(&old);
    int fd = mkstemp(*tmp);
    int e = errno;
    if (fd >= 0 && live_add(*tmp) != 0) {
        unlink(*tmp);
        close(fd);
        fd = -1;
        e = EMFILE;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (fd < 0) {
        free(*tmp);
        *tmp = NULL;
        errno = e;
    }
    return fd;
}

static void tmp_remove(char *tmp)
{
    sigset_t old;
    block_signals(&old);
    unlink(tmp);
    live_remove(tmp);
    sigprocmask(SIG_SETMASK, &old, NULL);
}

static void tmp_error(const char *path, const char *target, int e, char *err, size_t errlen)
{
    char *dir = dir_of(target);
    if (e == EACCES || e == EPERM || e == EROFS)
        snprintf(err, errlen, "-o %s: folder '%s' is not writable (%s)", path, dir ? dir : "?",
                 strerror(e));
    else
        snprintf(err, errlen, "-o %s: cannot create a file in '%s': %s", path, dir ? dir : "?",
                 strerror(e));
    free(dir);
}

int outfile_check(const char *path, char *err, size_t errlen)
{
    if (outfile_is_stdout(path)) return 0;
    char *target;
    target_kind kind;
    mode_t mode;
    if (examine(path, &target, &kind, &mode, err, errlen) != 0) return -1;
    int rc = 0;
    if (kind == T_NEW || kind == T_REGULAR) {
        /* access() says yes to root on a read-only mount and no to nothing else it should:
         * creating the temporary is the only test that tells. */
        char *tmp;
        int fd = tmp_create(target, &tmp);
        if (fd < 0) {
            tmp_error(path, target, errno, err, errlen);
            rc = -1;
        } else {
            close(fd);
            tmp_remove(tmp);
            free(tmp);
        }
    }
    free(target);
    return rc;
}

int outfile_is_special(const char *path)
{
    if (!path || !*path || outfile_is_stdout(path)) return 0;
    char *t = resolve(path);
    struct stat st;
    int special = t && stat(t, &st) == 0 &&
                  (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
    free(t);
    return special;
}

int outfile_room(const char *path, unsigned long long bytes, char *err, size_t errlen)
{
    if (!path || !*path || outfile_is_stdout(path) || outfile_is_special(path)) return 0;
    char *t = resolve(path);
    char *dir = t ? dir_of(t) : NULL;
    struct statvfs vf;
    int rc = 0;
    struct rlimit lim;
    if (getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
        (unsigned long long)lim.rlim_cur < bytes) {
        snprintf(err, errlen,
                 "-o %s: the file needs %.1f MB, the file-size limit (ulimit -f) is %.1f MB (%s)",
                 path, (double)bytes / 1e6, (double)lim.rlim_cur / 1e6, strerror(EFBIG));
        rc = -1;
    } else if (dir && statvfs(dir, &vf) == 0 && vf.f_frsize > 0) {
        unsigned long long avail = (unsigned long long)vf.f_bavail * vf.f_frsize;
        if (avail < bytes) {
            snprintf(err, errlen,
                     "-o %s: folder '%s' has %.1f MB free, the file needs %.1f MB (%s)", path, dir,
                     (double)avail / 1e6, (double)bytes / 1e6, strerror(ENOSPC));
            rc = -1;
        }
    }
    free(dir);
    free(t);
    return rc;
}

/* ---- the stream -------------------------------------------------------------------------- */

static ssize_t sink_write(void *cookie, const char *buf, size_t n)
{
    outfile_sink *s = cookie;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(s->fd, buf + done, n - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (!s->err) s->err = w < 0 ? errno : EIO;
            return done ? (ssize_t)done : -1;
        }
        done += (size_t)w;
    }
    return (ssize_t)n;
}

static int sink_close(void *cookie)
{
    (void)cookie; /* the descriptor is synced and closed by outfile_commit / outfile_abort */
    return 0;
}

static int connect_socket(const char *target)
{
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    if (strlen(target) >= sizeof a.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(a.sun_path, target, strlen(target) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int outfile_open(outfile *o, const char *path, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    char *target = NULL;
    target_kind kind = T_SPECIAL;
    mode_t mode = 0;
    int to_stdout = outfile_is_stdout(path);
    if (!to_stdout && examine(path, &target, &kind, &mode, err, errlen) != 0) return -1;
    o->path = strdup(path);
    o->sink = calloc(1, sizeof *o->sink);
    if (!o->path || !o->sink) {
        snprintf(err, errlen, "-o %s: out of memory", path);
        free(target);
        outfile_abort(o);
        return -1;
    }
    o->sink->fd = -1;
    int fd;
    if (to_stdout) {
        fflush(stdout); /* whatever was printed before comes first */
        fd = STDOUT_FILENO;
        o->sink->keep_fd = 1;
    } else if (kind == T_SOCKET) {
        fd = connect_socket(target);
        if (fd < 0) snprintf(err, errlen, "-o %s: cannot connect (%s)", path, strerror(errno));
    } else if (kind == T_SPECIAL) {
        /* O_NONBLOCK: a FIFO nobody reads would block open(2) until a signal. A reader that
         * is still starting (`pelab ... -o f & cat f`) gets FIFO_WAIT_MS, then it is refused. */
        fd = open(target, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
        for (int waited = 0; fd < 0 && errno == ENXIO && waited < FIFO_WAIT_MS; waited += 50) {
            struct timespec ts = {0, 50 * 1000000L};
            nanosleep(&ts, NULL);
            fd = open(target, O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
        }
        if (fd < 0 && errno == ENXIO)
            snprintf(err, errlen,
                     "-o %s: a FIFO with nothing reading it (waited 3 s); start the reader first",
                     path);
        else if (fd < 0)
            snprintf(err, errlen, "-o %s: cannot open (%s)", path, strerror(errno));
        int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
        if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK); /* then written as usual */
    } else {
        fd = tmp_create(target, &o->tmp);
        if (fd < 0) {
            tmp_error(path, target, errno, err, errlen);
        } else {
            /* mkstemp makes the file 0600; give the result the permissions of the file it
             * replaces, or those a plain fopen would give a new one. The umask can only be read
             * by setting it, so it is set back at once. */
            if (kind == T_NEW) {
                mode_t mask = umask(022);
                umask(mask);
                mode = 0666 & ~mask;
            }
            if (fchmod(fd, mode) != 0) {
                /* not fatal: the file is still written, only with tighter permissions */
            }
            o->sink->sync = 1;
            o->sink->keep_fd = 0;
        }
    }
    free(target);
    if (fd < 0) {
        outfile_abort(o);
        return -1;
    }
    o->sink->fd = fd;
    cookie_io_functions_t io = {
        .read = NULL, .write = sink_write, .seek = NULL, .close = sink_close};
    o->fp = fopencookie(o->sink, "wb", io);
    if (!o->fp) {
        snprintf(err, errlen, "-o %s: %s", path, strerror(errno));
        outfile_abort(o);
        return -1;
    }
    /* a large buffer: figures and checkpoints are megabytes written in small pieces */
    setvbuf(o->fp, NULL, _IOFBF, 1 << 16);
    return 0;
}

static void sink_release(outfile *o)
{
    if (o->sink && !o->sink->keep_fd && o->sink->fd >= 0) close(o->sink->fd);
    free(o->sink);
    o->sink = NULL;
}

void outfile_abort(outfile *o)
{
    if (o->fp) fclose(o->fp);
    o->fp = NULL;
    if (o->tmp) tmp_remove(o->tmp);
    sink_release(o);
    free(o->path);
    free(o->tmp);
    memset(o, 0, sizeof *o);
}

void outfile_fail(outfile *o, const char *what, char *err, size_t errlen)
{
    const char *path = o->path ? o->path : "?";
    if (o->fp) fflush(o->fp); /* a write error still buffered shows now */
    if (o->sink && o->sink->err)
        snprintf(err, errlen, "-o %s: cannot write: %s", path, strerror(o->sink->err));
    else
        snprintf(err, errlen, "-o %s: %s", path, what ? what : "write failed");
    outfile_abort(o);
}

int outfile_commit(outfile *o, char *err, size_t errlen)
{
    if (!o->fp || !o->path || !o->sink) {
        snprintf(err, errlen, "-o %s: the file was not opened", o->path ? o->path : "?");
        outfile_abort(o);
        return -1;
    }
    int saved = 0;
    if (fflush(o->fp) != 0 || ferror(o->fp)) saved = o->sink->err ? o->sink->err : EIO;
    fclose(o->fp);
    o->fp = NULL;
    if (!saved && o->sink->sync && fsync(o->sink->fd) != 0 && errno != EINVAL)
        saved = errno; /* EINVAL: a file system that cannot sync; the data is written */
    if (!saved && !o->sink->keep_fd) {
        int fd = o->sink->fd;
        o->sink->fd = -1;
        if (close(fd) != 0 && errno != EINTR) saved = errno;
    }
    if (!saved && o->tmp) {
        char *target = resolve(o->path);
        sigset_t old;
        block_signals(&old);
        if (!target || rename(o->tmp, target) != 0)
            saved = target ? errno : ENOMEM;
        else
            live_remove(o->tmp);
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (!saved) {
            /* Make the rename itself durable; best effort (some file systems refuse to sync a
             * directory, and the data is already safe under its final name). */
            char *dir = dir_of(target);
            int dfd = dir ? open(dir, O_RDONLY | O_CLOEXEC) : -1;
            if (dfd >= 0) {
                if (fsync(dfd) != 0) {
                    /* ignored, see above */
                }
                close(dfd);
            }
            free(dir);
            free(o->tmp);
            o->tmp = NULL;
        }
        free(target);
    }
    if (saved) {
        snprintf(err, errlen, "-o %s: cannot write: %s", o->path, strerror(saved));
        outfile_abort(o);
        return -1;
    }
    sink_release(o);
    free(o->path);
    memset(o, 0, sizeof *o);
    return 0;
}
