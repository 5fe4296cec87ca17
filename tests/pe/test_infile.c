/* test_infile: pe/infile.h, the one way pelab reads what it is given (issue 28). A FIFO nobody
 * writes reads as empty at once (it blocked until a signal), a FIFO with a writer is read, a
 * device (/dev/zero read without end), a folder and a socket are refused before reading, a file
 * over the limit is refused by its size, a FIFO that never ends is cut at the limit, a read
 * asked to stop stops (PE_ECANCELED), and every file read is remembered for the outputs'
 * same-file check. */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "infile.h"
#include "pe.h"
#include "tap.h"

static int contains(const char *s, const char *sub)
{
    return s && strstr(s, sub) != NULL;
}

static int stop_hook(void *ctx, double frac)
{
    int *calls = ctx;
    (*calls)++;
    return frac < 0; /* stop at the first "only asking" call: the read's */
}

int main(void)
{
    /* a read that blocks would hang the test: the alarm fails it instead */
    alarm(60);
    char dir[160];
    tap_tmp_path(dir, sizeof dir, "pelab-infile-XXXXXX");
    if (!mkdtemp(dir)) {
        tap_skip_all("no temporary folder");
        return 77;
    }
    char path[256], err[512];
    char *buf = NULL;
    size_t len = 0;

    /* a regular file: read whole, NUL-terminated, remembered */
    snprintf(path, sizeof path, "%s/a.txt", dir);
    FILE *f = fopen(path, "w");
    fputs("hello, file", f);
    fclose(f);
    int rc = pe_infile_read(path, "--data", 1024, &buf, &len, err, sizeof err);
    TAP_OK(rc == PE_OK && len == 11 && strcmp(buf, "hello, file") == 0, "a regular file is read");
    free(buf);
    struct stat st;
    stat(path, &st);
    TAP_OK(pe_infile_was_read((unsigned long long)st.st_dev, (unsigned long long)st.st_ino),
           "the file read is remembered (device and inode)");
    pe_infile_forget();
    TAP_OK(!pe_infile_was_read((unsigned long long)st.st_dev, (unsigned long long)st.st_ino),
           "forgotten after pe_infile_forget");
    pe_infile_note(path);
    TAP_OK(pe_infile_was_read((unsigned long long)st.st_dev, (unsigned long long)st.st_ino),
           "pe_infile_note remembers a file before it is read");

    /* over the limit: refused by the size, before reading */
    rc = pe_infile_read(path, "--data", 5, &buf, &len, err, sizeof err);
    TAP_OK(rc == PE_EINVAL && !buf && contains(err, "--data ") && contains(err, "11 bytes") &&
               contains(err, "over 5 bytes are refused"),
           "a file over the limit is refused by its size (%s)", err);

    /* /dev/zero: a device, refused before any read (it was read without end) */
    rc = pe_infile_read("/dev/zero", "--data", 1 << 20, &buf, &len, err, sizeof err);
    TAP_OK(rc == PE_EINVAL && contains(err, "--data /dev/zero: is a character device"),
           "/dev/zero is refused (%s)", err);
    TAP_OK(pe_infile_check("/dev/null", "--config", err, sizeof err) == PE_EINVAL &&
               contains(err, "character device"),
           "/dev/null too (%s)", err);

    /* a folder */
    rc = pe_infile_read(dir, "--config", 1024, &buf, &len, err, sizeof err);
    TAP_OK(rc == PE_EINVAL && contains(err, "is a directory; a regular file is expected"),
           "a folder is refused (%s)", err);

    /* a missing file: the OS's reason; without a what, the message starts with the path */
    snprintf(path, sizeof path, "%s/none", dir);
    rc = pe_infile_read(path, "", 1024, &buf, &len, err, sizeof err);
    TAP_OK(rc == PE_EINVAL && strncmp(err, path, strlen(path)) == 0 &&
               contains(err, "No such file"),
           "a missing file (%s)", err);

    /* a socket */
    snprintf(path, sizeof path, "%s/sock", dir);
    int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
    if (sfd >= 0 && bind(sfd, (struct sockaddr *)&a, sizeof a) == 0) {
        rc = pe_infile_read(path, "--model", 1024, &buf, &len, err, sizeof err);
        TAP_OK(rc == PE_EINVAL && (contains(err, "is a socket") || contains(err, "cannot open")),
               "a socket is refused (%s)", err);
    }
    if (sfd >= 0) close(sfd);

    /* a FIFO nobody writes: empty at once (open(2) blocked without O_NONBLOCK) */
    snprintf(path, sizeof path, "%s/fifo", dir);
    if (mkfifo(path, 0600) != 0) {
        tap_skip_all("mkfifo failed");
        return 77;
    }
    rc = pe_infile_read(path, "--config", 1024, &buf, &len, err, sizeof err);
    TAP_OK(rc == PE_OK && len == 0, "a FIFO nobody writes reads as empty, without waiting (%s)",
           rc ? err : "ok");
    free(buf);

    /* a FIFO with a writer that takes its time: read as it comes */
    pid_t pid = fork();
    if (pid == 0) {
        int w = open(path, O_WRONLY);
        for (int i = 0; i < 3; i++) {
            if (write(w, "abc", 3) != 3) _exit(1);
            usleep(50000);
        }
        _exit(0);
    }
    /* give the writer time to open, so the read sees it (else: empty, also allowed) */
    usleep(100000);
    rc = pe_infile_read(path, "--config", 1024, &buf, &len, err, sizeof err);
    waitpid(pid, NULL, 0);
    TAP_OK(rc == PE_OK && (len == 9 || len == 0) && (len == 0 || strcmp(buf, "abcabcabc") == 0),
           "a FIFO with a slow writer is read to its end (%zu bytes)", len);
    free(buf);

    /* a FIFO that never ends: cut at the limit with a message */
    pid = fork();
    if (pid == 0) {
        int w = open(path, O_WRONLY);
        char chunk[4096];
        memset(chunk, 'z', sizeof chunk);
        for (;;)
            if (write(w, chunk, sizeof chunk) < 0) _exit(0);
    }
    usleep(100000);
    rc = pe_infile_read(path, "--data", 100000, &buf, &len, err, sizeof err);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    TAP_OK(rc == PE_EINVAL && !buf && contains(err, "more than") && contains(err, "refused"),
           "an endless FIFO is cut at the limit (%s)", err);

    /* asked to stop: PE_ECANCELED, nothing returned */
    snprintf(path, sizeof path, "%s/a.txt", dir);
    int calls = 0;
    pe_work_set(stop_hook, &calls);
    rc = pe_infile_read(path, "--data", 1024, &buf, &len, err, sizeof err);
    pe_work_set(NULL, NULL);
    TAP_OK(rc == PE_ECANCELED && !buf && calls > 0, "a read asked to stop stops (%s)", err);

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return tap_done();
}
