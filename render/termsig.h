/* termsig.h: the signals whose default action ends the process, in one list for everything
 * that must clean up before that happens: the terminal explorer and lesson presenter restore the
 * terminal (term/backend_tui.c), the window exits 128+N (window/backend_sdl.c), outputs remove
 * their temporaries (outfile.c). Issue 28: SIGTRAP, SIGIO, SIGPWR, SIGSTKFLT and the real-time
 * signals were missing from the hand-written lists and left the terminal garbled. */
#ifndef PELAB_TERMSIG_H
#define PELAB_TERMSIG_H

enum { TERMSIG_MAX = 96 };

/* Fill out (room for TERMSIG_MAX) with every signal whose default action is to terminate or
 * to dump core, SIGKILL and SIGSTOP aside (they cannot be caught). Returns how many. */
int termsig_list(int *out);
/* 1 for a fault the process causes itself (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGSYS):
 * returning from its handler would repeat it, so it is handled by cleaning up and dying. */
int termsig_is_fault(int sig);

#endif
