/* main.c: pelab's subcommands. Each is a function taking (argc, argv) with argv[0] the command,
 * returning the exit status: 0 fine, 1 runtime error, 2 usage error. */
#define _GNU_SOURCE /* fopencookie */
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_model.h"
#include "colormap.h"
#include "frontend.h"
#include "export.h"
#include "lesson.h"
#include "textclean.h"
#include "views.h"

int app_cmd_bench(int argc, char **argv);

static int cmd_list(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "pelab list: takes no arguments\n");
        return 2;
    }
    /* one name column for the three tables: the longest name of any, plus two spaces */
    size_t w = 0;
    for (size_t i = 0; i < pe_encoding_count(); i++)
        if (strlen(pe_encoding_at(i)->name) > w) w = strlen(pe_encoding_at(i)->name);
    for (size_t i = 0; i < app_view_count(); i++)
        if (strlen(app_view_at(i)->name) > w) w = strlen(app_view_at(i)->name);
    for (size_t i = 0; i < cmap_count(); i++)
        if (strlen(cmap_at(i)->name) > w) w = strlen(cmap_at(i)->name);
    int nw = (int)w + 2;
    printf("encodings (--pe NAME):\n");
    for (size_t i = 0; i < pe_encoding_count(); i++) {
        const pe_encoding *e = pe_encoding_at(i);
        char acts[64] = "";
        if (e->acts & PE_ACTS_INPUT) strcat(acts, "input ");
        if (e->acts & PE_ACTS_LOGITS) strcat(acts, "logits ");
        if (e->acts & PE_ACTS_QK) strcat(acts, "q,k ");
        if (!e->acts) strcat(acts, "nothing ");
        acts[strlen(acts) - 1] = '\0';
        printf("  %-*s%-12s%s\n", nw, e->name, acts, e->description);
    }
    printf("\nviews (pelab export VIEW):\n");
    for (size_t i = 0; i < app_view_count(); i++)
        printf("  %-*s%s\n", nw, app_view_at(i)->name, app_view_at(i)->description);
    printf("\ncolormaps (--cmap NAME):\n");
    for (size_t i = 0; i < cmap_count(); i++)
        printf("  %-*s%-12s%s\n", nw, cmap_at(i)->name,
               cmap_at(i)->cyclic      ? "cyclic"
               : cmap_at(i)->diverging ? "diverging"
                                       : "sequential",
               cmap_at(i)->description);
    return 0;
}

static void usage(FILE *fp)
{
    fprintf(fp,
            "pelab %s: a position-embedding lab\n"
            "usage:\n"
            "  pelab [options]                 the terminal explorer (keys: ? inside)\n"
            "  pelab gui [options]             the same explorer in a window\n"
            "  pelab export VIEW [options] -o FILE   a figure (.png .svg .pdf) or its numbers "
            "(.csv .npy)\n"
            "  pelab train --pe NAME -o FILE   train the built-in model with one position scheme\n"
            "  pelab eval [--extrapolate] MODEL...   held-out loss, and loss past the training "
            "length\n"
            "  pelab bench                     speed figures for this machine\n"
            "  pelab list                      encodings, views and colormaps\n"
            "  pelab lesson NAME|FILE          a guided lesson (--list, --check FILE, --handout "
            "F.pdf)\n"
            "  pelab help | --help, pelab version | --version\n"
            "`pelab export --help` lists every figure option.\n",
            PELAB_VERSION_STRING);
}

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
    /* A file-size limit (ulimit -f) is reported as "File too large" by the writer that hits it,
     * not by a signal that kills the process half-way. */
    signal(SIGXFSZ, SIG_IGN);
    setlocale(LC_ALL, "");
    setlocale(LC_NUMERIC, "C"); /* numbers are read and written with '.' whatever the locale */
    const char *cmd = argc > 1 ? argv[1] : NULL;
    if (!cmd || cmd[0] == '-') {
        if (cmd && (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)) {
            usage(stdout);
            return 0;
        }
        if (cmd && strcmp(cmd, "--version") == 0) {
            printf("pelab %s\n", PELAB_VERSION_STRING);
            return 0;
        }
        return app_cmd_explore(argc, argv, 0);
    }
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {
        {"export", app_cmd_export}, {"train", app_cmd_train}, {"eval", app_cmd_eval},
        {"bench", app_cmd_bench},   {"list", cmd_list},       {"lesson", app_cmd_lesson},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        if (strcmp(cmd, cmds[i].name) == 0) return cmds[i].fn(argc - 1, argv + 1);
    if (strcmp(cmd, "gui") == 0) {
        for (int i = 2; i < argc; i++)
            if (strcmp(argv[i], "--lesson") == 0) return app_cmd_lesson_gui(argc - 1, argv + 1);
        return app_cmd_explore(argc - 1, argv + 1, 1);
    }
    if (strcmp(cmd, "tui") == 0) return app_cmd_explore(argc - 1, argv + 1, 0);
    if ((strcmp(cmd, "help") == 0 || strcmp(cmd, "version") == 0) && argc > 2) {
        fprintf(stderr, "pelab %s: takes no arguments (got '%s')\n", cmd, argv[2]);
        return 2;
    }
    if (strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "version") == 0) {
        printf("pelab %s\n", PELAB_VERSION_STRING);
        return 0;
    }
    const char *names[] = {"export", "train", "eval", "bench",  "list",
                           "lesson", "gui",   "help", "version"};
    const char *sug = pe_closest(cmd, names, sizeof names / sizeof names[0]);
    fprintf(stderr, "pelab: unknown command '%s'%s%s%s (pelab --help lists them)\n", cmd,
            sug ? "; did you mean '" : "", sug ? sug : "", sug ? "'?" : "");
    return 2;
}
