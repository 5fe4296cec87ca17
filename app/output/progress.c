/* progress.c: the progress bar of `pelab export` on stderr. Only when stderr is a terminal, and
 * only once the work has run for a second (most exports finish before anything shows); drawn at
 * most ten times a second and erased at the end, so the terminal is left as it was. The numbers
 * come from the computations' pe_work reports. The bar goes straight to the descriptor, not through
 * the stderr stream: that stream writes control characters out as text (main.c), which is right
 * for messages quoting user input but would print the erase sequence as a literal "\x1b[K". The
 * label is pelab's own text, cleaned once when the bar starts. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pe.h"
#include "progress.h"
#include "textclean.h"

typedef struct progress {
    char label[96];
    double start, last;
    int shown;
} progress;

static progress bar;
/* Ctrl-C while the numbers are computed: the computation stops at its next report, and
 * app_progress_end hands the signal on with the default action, so the exit is as usual (130)
 * and nothing has been opened yet (the writers open their file after the computation). */
static volatile sig_atomic_t interrupted;
static struct sigaction old_int;
static int have_old;

static void on_int(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* the whole piece in as few writes as the kernel takes; a failed write only loses the bar */
static void raw_err(const char *s, size_t n)
{
    while (n > 0) {
        ssize_t w = write(STDERR_FILENO, s, n);
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int on_work(void *ctx, double frac)
{
    progress *p = ctx;
    if (interrupted) return 1;
    if (!p->label[0] || frac < 0) return 0; /* not a terminal, or only asked: nothing to draw */
    double t = now_s();
    if (t - p->start < 1.0 || t - p->last < 0.1) return 0;
    p->last = t;
    if (frac < 0) frac = 0;
    if (frac > 1) frac = 1;
    char cells[31];
    int n = (int)(frac * 30 + 0.5);
    memset(cells, '#', (size_t)n);
    memset(cells + n, '.', (size_t)(30 - n));
    cells[30] = '\0';
    char line[256];
    int m = snprintf(line, sizeof line, "\r%s [%s] %3.0f%%  %.0f s\033[K", p->label, cells,
                     frac * 100, t - p->start);
    if (m > 0) raw_err(line, (size_t)m < sizeof line ? (size_t)m : sizeof line - 1);
    p->shown = 1;
    return 0;
}

void app_progress_begin(const char *label)
{
    memset(&bar, 0, sizeof bar);
    interrupted = 0;
    /* SIGINT is ours while the numbers are computed; whoever had it (the default, or
     * outfile's clean-up handler) gets it back at the end, and the signal with it */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_int;
    sigemptyset(&sa.sa_mask);
    have_old = sigaction(SIGINT, &sa, &old_int) == 0;
    if (isatty(STDERR_FILENO)) text_clean(bar.label, sizeof bar.label, label, strlen(label), 0);
    bar.start = bar.last = now_s();
    pe_work_set(on_work, &bar);
}

void app_progress_end(void)
{
    pe_work_set(NULL, NULL);
    if (bar.shown) {
        fflush(stderr);
        raw_err("\r\033[K", 4); /* erase the bar's line */
    }
    bar.shown = 0;
    if (have_old) sigaction(SIGINT, &old_int, NULL);
    have_old = 0;
    if (interrupted) {
        fprintf(stderr, "pelab: cancelled (Ctrl-C); no file written\n");
        raise(SIGINT);
    }
}
