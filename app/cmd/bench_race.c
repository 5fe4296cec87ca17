/* bench_race.c: `pelab bench --only race` (issue 24): the default race (all six schemes, the
 * shipped recipe) as a whole process, its wall time against the 90 s on the 2-core
 * machine, and what the live display costs: shorter races without a display and with the
 * terminal's, on a pseudo-terminal this process reads (as a terminal emulator would), in pairs,
 * their training throughputs (the race's own tokens/s, which leaves out the corpus and the
 * saving) as a ratio against the 5%, and their CPU seconds. (A second full-length race
 * for the display doubled the bench's time, to about 16 minutes, and one pair of runs on a
 * shared machine said more about the load than the display.) A benchmark, never a test: run it
 * on a quiet machine. */
/* posix_openpt, grantpt, unlockpt, ptsname: the build's _XOPEN_SOURCE (meson.build) */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

int app_bench_race(int quick, int steps);
char *app_bench_tmpdir(char *buf, size_t n);

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double children_cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_CHILDREN, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

typedef struct race_run {
    double wall, cpu, tokens_per_s, race_s;
    int ok;
} race_run;

/* The summary pelab race prints: "raced N schemes into DIR/ in X s (Y tokens/s on N threads)". */
static void parse_summary(const char *out, race_run *r)
{
    const char *p = strstr(out, "raced ");
    const char *in = p ? strstr(p, "/ in ") : NULL;
    r->ok = in && sscanf(in, "/ in %lf s (%lf tokens/s", &r->race_s, &r->tokens_per_s) == 2;
}

/* One race in dir; display: "none" (stdout a pipe) or "terminal" (a pseudo-terminal). */
static race_run one_race(const char *dir, const char *display, const char *steps)
{
    race_run r = {0};
    int term = !strcmp(display, "terminal");
    int master = -1, fds[2] = {-1, -1};
    char slave[256] = "";
    if (term) {
        master = posix_openpt(O_RDWR | O_NOCTTY);
        const char *name =
            master >= 0 && !grantpt(master) && !unlockpt(master) ? ptsname(master) : NULL;
        if (!name) {
            printf("  (no pseudo-terminal: %s)\n", strerror(errno));
            if (master >= 0) close(master);
            return r;
        }
        snprintf(slave, sizeof slave, "%s", name);
    } else if (pipe(fds) != 0)
        return r;
    double cpu0 = children_cpu_s(), t0 = wall_s();
    pid_t pid = fork();
    if (pid == 0) {
        int fd = fds[1];
        if (term) {
            setsid();
            fd = open(slave, O_RDWR); /* the controlling terminal, 120 x 40 */
            if (fd < 0) _exit(127);
            struct winsize ws = {40, 120, 0, 0};
            ioctl(fd, TIOCSWINSZ, &ws);
            dup2(fd, 0);
            setenv("TERM", "xterm-256color", 1);
        } else {
            int nul = open("/dev/null", O_RDONLY);
            if (nul >= 0) dup2(nul, 0);
        }
        dup2(fd, 1);
        dup2(fd, 2);
        char out[1024];
        snprintf(out, sizeof out, "%s/%s", dir, display);
        if (steps)
            execl("/proc/self/exe", "pelab", "race", "--display", display, "--steps", steps, "-o",
                  out, "--force", (char *)NULL);
        else
            execl("/proc/self/exe", "pelab", "race", "--display", display, "-o", out, "--force",
                  (char *)NULL);
        _exit(127);
    }
    int rd = term ? master : fds[0];
    if (!term) close(fds[1]);
    /* read everything it writes (a terminal that is not read stalls its writer), keeping the
     * tail where the summary is; answer the terminal's device-attributes query as a terminal */
    static char tail[1 << 16];
    size_t n = 0;
    int answered = 0;
    for (;;) {
        char buf[8192];
        ssize_t k = read(rd, buf, sizeof buf);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break; /* EOF, or EIO: the pseudo-terminal's other end closed */
        for (ssize_t i = 0; term && !answered && i + 2 < k; i++)
            if (buf[i] == '\033' && buf[i + 1] == '[' && buf[i + 2] == 'c') {
                static const char da1[] = "\033[?62;22c";
                answered = write(master, da1, sizeof da1 - 1) > 0;
            }
        if (n + (size_t)k >= sizeof tail) { /* keep the last half */
            size_t keep = sizeof tail / 2;
            memmove(tail, tail + n - keep, keep);
            n = keep;
        }
        memcpy(tail + n, buf, (size_t)k);
        n += (size_t)k;
    }
    tail[n] = 0;
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    r.wall = wall_s() - t0;
    r.cpu = children_cpu_s() - cpu0;
    close(rd);
    /* the terminal's bytes hold NULs of no interest: the summary is text */
    for (size_t i = 0; i < n; i++)
        if (!tail[i]) tail[i] = ' ';
    parse_summary(tail, &r);
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) r.ok = 0;
    return r;
}

/* The display's cost, credibly in a few minutes: shorter races (every scheme, pair_steps steps
 * each) without and with the terminal display in ABBA order (none, terminal, terminal, none for
 * two pairs), so a drift of the machine's load over the runs weighs on both sides alike. The
 * cost is the display's share of the machine: it takes CPU from the workers at the same rate
 * whatever the race's length, so a shorter race measures the same ratio as the full one. */
static int display_cost(const char *dir, int pair_steps, int pairs)
{
    char sbuf[32];
    snprintf(sbuf, sizeof sbuf, "%d", pair_steps);
    printf("  display cost: %d pair%s of races of %d steps each, without and with the terminal "
           "display (ABBA order), tokens/s and CPU seconds compared:\n",
           pairs, pairs == 1 ? "" : "s", pair_steps);
    fflush(stdout);
    double tps[2] = {0, 0}, cpu[2] = {0, 0};
    for (int k = 0; k < 2 * pairs; k++) {
        int term = (k % 4 == 1 || k % 4 == 2); /* none, terminal, terminal, none, ... */
        race_run r = one_race(dir, term ? "terminal" : "none", sbuf);
        if (!r.ok) {
            printf("  the %d-step race %s failed\n", pair_steps,
                   term ? "with the terminal display" : "without a display");
            return 1;
        }
        printf("    %-16s %6.1f s wall  %6.1f s racing  %8.0f tokens/s  %6.1f s CPU\n",
               term ? "terminal display" : "no display", r.wall, r.race_s, r.tokens_per_s, r.cpu);
        fflush(stdout);
        tps[term] += r.tokens_per_s;
        cpu[term] += r.cpu;
    }
    double ratio = tps[1] / tps[0], cost = 1 - ratio;
    printf("  display cost: tokens/s with it / without it %.3f (a cost of %.1f%%%s), CPU %+.1f%% "
           "(the same races, summed)\n",
           ratio, 100 * cost, cost <= 0.05 ? ", <= 5%: met" : ", > 5%: NOT met",
           100 * (cpu[1] / cpu[0] - 1));
    return 0;
}

int app_bench_race(int quick, int nsteps)
{
    char dir[512];
    if (!app_bench_tmpdir(dir, sizeof dir)) {
        printf("race: cannot make a temporary directory\n");
        return 1;
    }
    char sbuf[32], what[96];
    const char *steps = NULL;
    if (nsteps > 0 || quick) {
        snprintf(sbuf, sizeof sbuf, "%d", nsteps > 0 ? nsteps : 200);
        steps = sbuf;
        snprintf(what, sizeof what, "%s steps each (not the shipped recipe's 2000)", sbuf);
    } else
        snprintf(what, sizeof what, "the shipped recipe (2000 steps each)");
    printf("race: pelab race, all six schemes, %s, every core, as a whole process "
           "(target: the default race <= 90 s on 2 cores; the live display costs <= 5%% of the "
           "training throughput):\n",
           what);
    fflush(stdout);
    race_run none = one_race(dir, "none", steps);
    if (!none.ok) {
        printf("  the race without a display failed\n");
        return 1;
    }
    printf("  no display       %6.1f s wall  %6.1f s racing  %8.0f tokens/s  %6.1f s CPU%s\n",
           none.wall, none.race_s, none.tokens_per_s, none.cpu,
           steps             ? ""
           : none.wall <= 90 ? "  (<= 90 s: met)"
                             : "  (> 90 s: NOT met)");
    fflush(stdout);
    /* the display's cost on shorter races (200 steps, 100 with --quick, or --steps if fewer) */
    int pair_steps = quick ? 100 : 200;
    if (nsteps > 0 && nsteps < pair_steps) pair_steps = nsteps;
    int rc = display_cost(dir, pair_steps, quick ? 1 : 2);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) printf("  (could not remove %s)\n", dir);
    return rc;
}
