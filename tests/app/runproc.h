/* runproc.h: run a program as a user does, for the tests that drive the pelab binary (export,
 * animate, author): stdout into a file or /dev/null, stderr captured for the test to read. */
#ifndef PELAB_TESTS_RUNPROC_H
#define PELAB_TESTS_RUNPROC_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* Run prog with args (NULL-terminated: argv[1], argv[2], ...; at most 62), stdout into out (NULL:
 * /dev/null), stderr through the file errpath into err (errlen bytes; its last newline removed,
 * so a TAP description stays on one line) and the count of newlines written into *lines.
 * Returns the exit status, 128 when the program did not exit normally. */
static inline int test_run(const char *prog, const char *const *args, const char *out,
                           const char *errpath, char *err, size_t errlen, int *lines)
{
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(fd, 2);
        int o = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        dup2(o, 1);
        const char *argv[64];
        int n = 0;
        argv[n++] = prog;
        for (; args[n - 1] && n < 63; n++) argv[n] = args[n - 1];
        argv[n] = NULL;
        execvp(prog, (char *const *)argv);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    FILE *fp = fopen(errpath, "r");
    size_t k = fp ? fread(err, 1, errlen - 1, fp) : 0;
    err[k] = '\0';
    if (fp) fclose(fp);
    *lines = 0;
    for (size_t i = 0; i < k; i++) *lines += err[i] == '\n';
    if (k > 0 && err[k - 1] == '\n') err[k - 1] = '\0';
    unlink(errpath);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* The bytes of the file at path (malloc'd, a NUL after them) and their count in *len; NULL when
 * it cannot be read. For reading back what a run wrote. */
static inline char *test_slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
    *len = b ? fread(b, 1, (size_t)n, fp) : 0;
    if (b) b[*len] = '\0';
    fclose(fp);
    return b;
}

#endif
