/* termsig.c: see termsig.h. The list follows signal(7)'s "Term" and "Core" actions on Linux. */
#define _GNU_SOURCE /* SIGSTKFLT, SIGPWR, SIGIO */
#include "termsig.h"

#include <signal.h>

int termsig_list(int *out)
{
    static const int fixed[] = {
        SIGHUP,    SIGINT,  SIGQUIT,   SIGILL,  SIGTRAP, SIGABRT, SIGBUS,
        SIGFPE,    SIGUSR1, SIGSEGV,   SIGUSR2, SIGPIPE, SIGALRM, SIGTERM,
        SIGXCPU,   SIGXFSZ, SIGVTALRM, SIGPROF, SIGSYS,
#ifdef SIGSTKFLT
        SIGSTKFLT,
#endif
#ifdef SIGIO
        SIGIO,
#endif
#ifdef SIGPWR
        SIGPWR,
#endif
    };
    int n = 0;
    for (unsigned i = 0; i < sizeof fixed / sizeof fixed[0]; i++) out[n++] = fixed[i];
#ifdef SIGRTMIN
    /* the real-time signals glibc leaves to programs (it keeps the first two for threads) */
    for (int s = SIGRTMIN; s <= SIGRTMAX && n < TERMSIG_MAX; s++) out[n++] = s;
#endif
    return n;
}

int termsig_is_fault(int sig)
{
    return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGABRT ||
           sig == SIGSYS;
}
