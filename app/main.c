/* main.c: pelab's entry point. The commands are a table (commands.c); each is a function taking
 * (argc, argv) with argv[0] the command, returning the exit status: 0 fine, 1 runtime error, 2
 * usage error. */
#define _GNU_SOURCE /* fopencookie */
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "infile.h"
#include "outfile.h"
#include "textclean.h"

/* ---- stderr shows no raw control characters ----------------------------------------------
 * Messages quote what the user typed (-o names, option values, model paths), and a value such as
 * $'x\e[2J.pelab' must not clear the screen. Rather than trusting every one of the hundreds of
 * fprintf(stderr, ...) calls to escape its arguments, stderr itself is a stream that does:
 * control characters other than newline, return and tab come out as \xNN and bytes that are not
 * UTF-8 as U+FFFD. A UTF-8 sequence split between two writes is held back until it completes. */
typedef struct clean_err {
    unsigned char carry[4];
    size_t ncarry;
} clean_err;

static void err_out(const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, s, n);
        if (w <= 0) return; /* nowhere else to report it */
        s += w;
        n -= (size_t)w;
    }
}

static void err_clean(const unsigned char *p, size_t n)
{
    char buf[1024];
    /* pieces of at most 128 input bytes fit buf cleaned (5 output bytes per input byte) */
    for (size_t at = 0; at < n;) {
        size_t k = n - at < 128 ? n - at : 128;
        while (k < n - at && k > 0 && (p[at + k] & 0xc0) == 0x80) k--; /* whole characters */
        if (k == 0) k = n - at < 128 ? n - at : 128;
        size_t m = text_clean(buf, sizeof buf, (const char *)p + at, k, TEXT_KEEP_LINES);
        err_out(buf, m < sizeof buf ? m : sizeof buf - 1);
        at += k;
    }
}

static ssize_t clean_write(void *cookie, const char *buf, size_t n)
{
    clean_err *c = cookie;
    const unsigned char *p = (const unsigned char *)buf;
    size_t at = 0;
    /* complete a sequence held back from the last write */
    while (c->ncarry > 0 && at < n) {
        c->carry[c->ncarry++] = p[at++];
        int len = text_utf8_len(c->carry, c->ncarry);
        if (len != -1 || c->ncarry == 4) {
            err_clean(c->carry, c->ncarry);
            c->ncarry = 0;
        }
    }
    /* hold back a sequence this write cuts short */
    size_t end = n;
    for (size_t back = 1; back <= 3 && back <= n - at; back++) {
        unsigned b = p[n - back];
        if ((b & 0xc0) == 0x80) continue;
        if (b >= 0xc0 && text_utf8_len(p + n - back, back) == -1) end = n - back;
        break;
    }
    err_clean(p + at, end - at);
    memcpy(c->carry, p + end, n - end);
    c->ncarry = n - end;
    return (ssize_t)n;
}

static int clean_close(void *cookie)
{
    clean_err *c = cookie;
    err_clean(c->carry, c->ncarry);
    c->ncarry = 0;
    return 0;
}

static void stderr_make_clean(void)
{
    static clean_err state;
    cookie_io_functions_t io = {
        .read = NULL, .write = clean_write, .seek = NULL, .close = clean_close};
    FILE *f = fopencookie(&state, "w", io);
    if (!f) return;              /* keep the plain stderr */
    setvbuf(f, NULL, _IONBF, 0); /* as unbuffered as stderr was: nothing waits in a buffer */
    fflush(stderr);
    stderr = f; /* glibc's stderr is a variable */
}

int main(int argc, char **argv)
{
    stderr_make_clean();
    /* -o may never name a file this command reads (issue 28) */
    outfile_set_input_check(pe_infile_was_read);
    /* A file-size limit (ulimit -f) is reported as "File too large" by the writer that hits it,
     * not by a signal that kills the process half-way; kill -XFSZ still ends it (outfile.h). */
    outfile_signals_init();
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C"); /* numbers are read and written with '.' whatever the locale */
    return app_main(argc, argv);
}
