/* test_termsig: the one list of terminating signals (termsig.h) holds every signal whose
 * default action ends the process, among them those issue 28 found missing (SIGTRAP, SIGIO,
 * SIGPWR, SIGSTKFLT, the real-time signals), and none that cannot be caught or that stop or are
 * ignored by default. Each listed one, left at its default, really ends a child process. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "termsig.h"

static int has(const int *l, int n, int sig)
{
    for (int i = 0; i < n; i++)
        if (l[i] == sig) return 1;
    return 0;
}

int main(void)
{
    int l[TERMSIG_MAX];
    int n = termsig_list(l);
    TAP_OK(n > 0 && n <= TERMSIG_MAX, "%d signals", n);
    static const struct {
        int sig;
        const char *name;
    } want[] = {{SIGHUP, "HUP"},   {SIGINT, "INT"},   {SIGQUIT, "QUIT"},     {SIGTERM, "TERM"},
                {SIGPIPE, "PIPE"}, {SIGALRM, "ALRM"}, {SIGUSR1, "USR1"},     {SIGUSR2, "USR2"},
                {SIGXCPU, "XCPU"}, {SIGXFSZ, "XFSZ"}, {SIGVTALRM, "VTALRM"}, {SIGPROF, "PROF"},
                {SIGTRAP, "TRAP"}, {SIGIO, "IO"},     {SIGPWR, "PWR"},       {SIGSTKFLT, "STKFLT"},
                {SIGSEGV, "SEGV"}, {SIGBUS, "BUS"},   {SIGFPE, "FPE"},       {SIGILL, "ILL"},
                {SIGABRT, "ABRT"}, {SIGSYS, "SYS"}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        TAP_OK(has(l, n, want[i].sig), "SIG%s is listed", want[i].name);
    TAP_OK(has(l, n, SIGRTMIN) && has(l, n, SIGRTMIN + 1) && has(l, n, SIGRTMAX),
           "the real-time signals SIGRTMIN..SIGRTMAX are listed");
    static const int never[] = {SIGKILL,  SIGSTOP, SIGTSTP, SIGCONT, SIGCHLD,
                                SIGWINCH, SIGURG,  SIGTTIN, SIGTTOU};
    int none = 1;
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++) none &= !has(l, n, never[i]);
    TAP_OK(none, "no uncatchable, stopping or ignored-by-default signal is listed");
    TAP_OK(termsig_is_fault(SIGSEGV) && termsig_is_fault(SIGABRT) && !termsig_is_fault(SIGTERM) &&
               !termsig_is_fault(SIGTRAP),
           "the faults are told apart");
    /* each one, at its default action, ends a process: the list is not too long either */
    int all = 1;
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            struct rlimit no_core = {0, 0}; /* SIGSEGV and the like would dump a core here */
            setrlimit(RLIMIT_CORE, &no_core);
            signal(l[i], SIG_DFL);
            sigset_t s;
            sigemptyset(&s);
            sigprocmask(SIG_SETMASK, &s, NULL);
            raise(l[i]);
            _exit(0);
        }
        int st = 0;
        waitpid(pid, &st, 0);
        if (!(WIFSIGNALED(st) && WTERMSIG(st) == l[i])) {
            tap_diag("signal %d did not end the process", l[i]);
            all = 0;
        }
    }
    TAP_OK(all, "every listed signal, left at its default, ends the process");
    return tap_done();
}
