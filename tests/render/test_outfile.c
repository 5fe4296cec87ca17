/* test_outfile: atomic replace, abort leaves nothing, the messages for a missing,
 * non-directory or unwritable directory and for a path that is a directory; symbolic links
 * (the target replaced, the link kept), devices, FIFOs and sockets written in place, standard
 * output, a 250-byte name, the OS's reason for a failed write, and no temporary left after a
 * signal. */
#define _DEFAULT_SOURCE /* mknod, S_IFBLK */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "outfile.h"
#include "pngio.h"
#include "tap.h"

static int contains(const char *s, const char *sub)
{
    return s && strstr(s, sub) != NULL;
}

static int write_all(const char *path, const char *text, char *err, size_t errlen)
{
    outfile o;
    if (outfile_open(&o, path, err, errlen) != 0) return -1;
    fputs(text, o.fp);
    return outfile_commit(&o, err, errlen);
}

static int text_is(const char *path, const char *want)
{
    char *got = file_read(path, NULL);
    int ok = got && strcmp(got, want) == 0;
    free(got);
    return ok;
}

/* Everything past plain files. */
static void more(const char *dir)
{
    char err[512], a[1100], b[700], link[700];

    /* A symbolic link: the file it points to is replaced, the link stays a link. */
    snprintf(a, sizeof a, "%s/real.csv", dir);
    snprintf(link, sizeof link, "%s/link.csv", dir);
    FILE *fp = fopen(a, "w");
    fputs("old", fp);
    fclose(fp);
    symlink("real.csv", link); /* relative, resolved from the link's folder */
    TAP_OK(write_all(link, "through the link", err, sizeof err) == 0, "write through a link (%s)",
           err);
    struct stat st;
    TAP_OK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "the link is still a link");
    TAP_OK(text_is(a, "through the link"), "its target got the content");

    /* A dangling link: its target is created. */
    snprintf(a, sizeof a, "%s/later.csv", dir);
    snprintf(link, sizeof link, "%s/dangling.csv", dir);
    symlink(a, link);
    TAP_OK(write_all(link, "new", err, sizeof err) == 0 && text_is(a, "new") &&
               lstat(link, &st) == 0 && S_ISLNK(st.st_mode),
           "a dangling link's target is created, the link kept");

    /* A loop of links is refused with the reason. */
    snprintf(a, sizeof a, "%s/loop1", dir);
    snprintf(b, sizeof b, "%s/loop2", dir);
    symlink("loop2", a);
    symlink("loop1", b);
    TAP_OK(outfile_check(a, err, sizeof err) == -1 && contains(err, "symbolic links"),
           "a loop of links: %s", err);

    /* The permissions of a replaced file are kept. */
    snprintf(a, sizeof a, "%s/private.csv", dir);
    fp = fopen(a, "w");
    fclose(fp);
    chmod(a, 0640);
    TAP_OK(write_all(a, "x", err, sizeof err) == 0 && stat(a, &st) == 0 &&
               (st.st_mode & 0777) == 0640,
           "a replaced file keeps its mode (%03o)", (unsigned)(st.st_mode & 0777));

    /* A 250-byte name (legal: NAME_MAX is 255) works: the temporary's name is short. */
    char name[260];
    memset(name, 'n', 246);
    memcpy(name + 246, ".csv", 5);
    snprintf(a, sizeof a, "%s/%s", dir, name);
    TAP_OK(strlen(name) == 250 && write_all(a, "long", err, sizeof err) == 0 && text_is(a, "long"),
           "a 250-byte file name (%s)", err);

    /* A character device is written in place and stays a device. */
    TAP_OK(write_all("/dev/null", "nothing", err, sizeof err) == 0 && stat("/dev/null", &st) == 0 &&
               S_ISCHR(st.st_mode),
           "/dev/null is written and stays a character device (%s)", err);
    TAP_OK(outfile_is_special("/dev/null") && !outfile_is_special(a), "outfile_is_special");
    /* /dev/full: the OS's reason, not "write error". */
    if (access("/dev/full", W_OK) == 0) {
        TAP_OK(write_all("/dev/full", "x", err, sizeof err) == -1 &&
                   contains(err, "No space left on device") && contains(err, "-o /dev/full"),
               "/dev/full: %s", err);
        outfile o;
        TAP_OK(outfile_open(&o, "/dev/full", err, sizeof err) == 0, "open /dev/full");
        for (int i = 0; i < 100000; i++) fputs("0123456789", o.fp);
        outfile_fail(&o, "PNG write failed: Write Error", err, sizeof err);
        TAP_OK(contains(err, "cannot write: No space left on device") && o.fp == NULL,
               "outfile_fail gives the OS's reason over the library's: %s", err);
    }
    TAP_OK(outfile_room(a, 1ull << 62, err, sizeof err) == -1 && contains(err, "MB free"),
           "outfile_room: 4 EB do not fit: %s", err);
    TAP_OK(outfile_room(a, 1, err, sizeof err) == 0, "outfile_room: one byte fits");

    /* A FIFO is written in place (a reader on the other end). */
    snprintf(a, sizeof a, "%s/fifo", dir);
    snprintf(b, sizeof b, "%s/fifo.out", dir);
    if (mkfifo(a, 0600) == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            FILE *in = fopen(a, "r"), *out = fopen(b, "w");
            int c;
            while (in && out && (c = fgetc(in)) != EOF) fputc(c, out);
            if (out) fclose(out);
            _exit(0);
        }
        int rc = write_all(a, "through a fifo", err, sizeof err);
        waitpid(pid, NULL, 0);
        TAP_OK(rc == 0 && text_is(b, "through a fifo") && lstat(a, &st) == 0 &&
                   S_ISFIFO(st.st_mode),
               "a FIFO is written in place and stays a FIFO (%s)", err);
    }

    /* A socket: connected to and written. */
    snprintf(a, sizeof a, "%s/sock", dir);
    int srv = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t al = strlen(a);
    if (al < sizeof sa.sun_path) memcpy(sa.sun_path, a, al + 1);
    if (srv >= 0 && al < sizeof sa.sun_path && bind(srv, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        listen(srv, 1) == 0) {
        int rc = write_all(a, "to a socket", err, sizeof err);
        int c = accept(srv, NULL, NULL);
        char got[64] = "";
        ssize_t n = c >= 0 ? read(c, got, sizeof got - 1) : -1;
        if (n > 0) got[n] = 0;
        TAP_OK(rc == 0 && strcmp(got, "to a socket") == 0, "a socket is connected to (%s)", err);
        if (c >= 0) close(c);
    }
    if (srv >= 0) close(srv);

    /* A block device is refused (root can make one to try). */
    snprintf(a, sizeof a, "%s/blk", dir);
    if (mknod(a, S_IFBLK | 0600, makedev(7, 200)) == 0)
        TAP_OK(outfile_check(a, err, sizeof err) == -1 && contains(err, "block device"),
               "a block device: %s", err);

    /* Standard output. */
    snprintf(b, sizeof b, "%s/stdout.txt", dir);
    pid_t pid = fork();
    if (pid == 0) {
        if (!freopen(b, "w", stdout)) _exit(3);
        printf("before ");
        _exit(write_all("-", "on stdout", err, sizeof err) == 0 ? 0 : 4);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    TAP_OK(WIFEXITED(status) && WEXITSTATUS(status) == 0 && text_is(b, "before on stdout"),
           "-o - writes standard output after what was printed");

    /* A signal while the temporary exists: it is removed, the process dies of the signal. */
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGALRM, SIGXFSZ};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        char sub[700];
        snprintf(sub, sizeof sub, "%s/sig%zu", dir, i);
        mkdir(sub, 0700);
        snprintf(a, sizeof a, "%s/big.png", sub);
        pid = fork();
        if (pid == 0) {
            signal(sigs[i], SIG_DFL);
            outfile o;
            if (outfile_open(&o, a, err, sizeof err) != 0) _exit(3);
            fputs("partial", o.fp);
            fflush(o.fp);
            raise(sigs[i]);
            _exit(4);
        }
        waitpid(pid, &status, 0);
        TAP_OK(WIFSIGNALED(status) && WTERMSIG(status) == sigs[i] && dir_entries(sub) == 0,
               "signal %d during a write: dies of it, no temporary left (%d entries)", sigs[i],
               dir_entries(sub));
    }
    /* And exit() in the middle of a write. */
    snprintf(a, sizeof a, "%s/sig0/exit.png", dir);
    pid = fork();
    if (pid == 0) {
        outfile o;
        if (outfile_open(&o, a, err, sizeof err) != 0) _exit(3);
        exit(5);
    }
    snprintf(b, sizeof b, "%s/sig0", dir);
    waitpid(pid, &status, 0);
    TAP_OK(WIFEXITED(status) && WEXITSTATUS(status) == 5 && dir_entries(b) == 0,
           "exit() during a write leaves no temporary");
}

/* Issue 28: -o naming an input, a read-only target, a FIFO nobody reads, and a frames folder
 * being filled when a signal comes. */
static unsigned long long input_dev, input_ino;

static int is_input(unsigned long long dev, unsigned long long ino)
{
    return dev == input_dev && ino == input_ino;
}

static void issue28(const char *dir)
{
    char a[700], b[700], err[512];
    struct stat st;
    /* an input of the command: refused at the check and at the open, the file intact */
    snprintf(a, sizeof a, "%s/table.csv", dir);
    FILE *fp = fopen(a, "w");
    fputs("position,rope\n0,1\n", fp);
    fclose(fp);
    stat(a, &st);
    input_dev = (unsigned long long)st.st_dev;
    input_ino = (unsigned long long)st.st_ino;
    outfile_set_input_check(is_input);
    TAP_OK(outfile_check(a, err, sizeof err) == -1 && contains(err, "is an input of this command"),
           "-o naming an input is refused (%s)", err);
    outfile o;
    TAP_OK(outfile_open(&o, a, err, sizeof err) == -1 && text_is(a, "position,rope\n0,1\n"),
           "and at the open, the input intact");
    snprintf(b, sizeof b, "%s/table-link.csv", dir);
    if (symlink("table.csv", b) == 0)
        TAP_OK(outfile_check(b, err, sizeof err) == -1 &&
                   contains(err, "is an input of this command (where the link points)"),
               "also through a symbolic link (%s)", err);
    outfile_set_input_check(NULL);
    TAP_OK(outfile_check(a, err, sizeof err) == 0, "without the check the file may be replaced");

    /* a read-only file: refused unless --force */
    snprintf(a, sizeof a, "%s/ro.png", dir);
    fp = fopen(a, "w");
    fputs("keep", fp);
    fclose(fp);
    chmod(a, 0444);
    TAP_OK(outfile_check(a, err, sizeof err) == -1 && contains(err, "read-only") &&
               contains(err, "0444") && contains(err, "--force"),
           "a read-only target is refused (%s)", err);
    TAP_OK(write_all(a, "new", err, sizeof err) == -1 && text_is(a, "keep"),
           "and not replaced by an open");
    outfile_set_force(1);
    TAP_OK(write_all(a, "new", err, sizeof err) == 0 && text_is(a, "new"),
           "--force replaces it (%s)", err);
    outfile_set_force(0);

    /* a FIFO nobody reads: refused at once (open(2) blocked until a signal) */
    snprintf(a, sizeof a, "%s/nobody.fifo", dir);
    if (mkfifo(a, 0600) == 0) {
        alarm(20);
        TAP_OK(outfile_open(&o, a, err, sizeof err) == -1 && contains(err, "nothing reading it"),
               "-o FIFO with no reader fails after a bounded wait, never blocks (%s)", err);
        alarm(0);
    }

    /* a frames folder being filled: a terminating signal removes its frames and the folder */
    static const int sigs[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGPIPE, SIGTRAP, SIGIO};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        char sub[700], tmp[760];
        snprintf(sub, sizeof sub, "%s/frames%zu", dir, i);
        mkdir(sub, 0700);
        snprintf(tmp, sizeof tmp, "%s/.pelab-frames-abc", sub);
        pid_t pid = fork();
        if (pid == 0) {
            signal(sigs[i], SIG_DFL);
            mkdir(tmp, 0700);
            outfile_live_dir(tmp, 12);
            for (int k = 1; k <= 10; k++) {
                char f[800];
                snprintf(f, sizeof f, "%s/frame-%04d.png", tmp, k);
                FILE *ff = fopen(f, "w");
                if (ff) fclose(ff);
            }
            raise(sigs[i]);
            _exit(4);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        TAP_OK(WIFSIGNALED(status) && WTERMSIG(status) == sigs[i] && dir_entries(sub) == 0,
               "signal %d while a frames folder is filled: dies of it, the folder and its 10 "
               "frames removed (%d entries left)",
               sigs[i], dir_entries(sub));
    }
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
    snprintf(expect_prefix, sizeof expect_prefix, "%s/.pelab-", dir);
    TAP_OK(strncmp(o.tmp, expect_prefix, strlen(expect_prefix)) == 0 &&
               strlen(o.tmp) == strlen(expect_prefix) + 6,
           "temporary is <dir>/.pelab-XXXXXX whatever the name (%s)", o.tmp);
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
    if (snprintf(want, sizeof want, "-o %s: folder '%s/out' does not exist", missing, dir) >=
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
        tap_diag("running as root: a 0555 directory is writable (the bad-input table checks a "
                 "read-only mount)");
        TAP_OK(outfile_check(want, err, sizeof err) == 0 && dir_entries(ro) == 0,
               "root may write into a 0555 directory; the check leaves nothing");
    } else {
        TAP_OK(outfile_check(want, err, sizeof err) == -1 && contains(err, "is not writable"),
               "read-only directory: %s", err);
        TAP_OK(outfile_open(&o, want, err, sizeof err) == -1 && dir_entries(ro) == 0,
               "open in a read-only directory creates nothing");
    }
    chmod(ro, 0755);
    more(dir);
    issue28(dir);
    rm_tree(dir);
    return tap_done();
}
