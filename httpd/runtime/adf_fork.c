/* A prefork child's exit signals, across and after its forks.
 *
 * prefork's children exit from their SIGTERM and SIGHUP handler (the
 * child pool's cleanups, then exit()), and a process a child forks (a
 * CGI, an SSI exec) keeps that handler until it execs.  mod_cgi sends
 * SIGTERM to its script's process when the request body fails, mostly
 * before that process has run at all: the handler then runs on its first
 * instruction, still inside fork().  glibc forks a process that ever
 * started a thread (mod_watchdog's: this module's sampler and cache
 * worker) holding malloc's locks and its atfork lock, which the new
 * process releases only further on in fork(): the handler's first free()
 * waited on them for ever (gdb).  And in any process but the child it
 * destroys the child's pool, counting the child out of every APR mutex a
 * second time (docs/reliability.md).  So:
 *
 * - each of the two handlers is wrapped: in the child it runs as before;
 *   in a process the child forked the signal takes its default action,
 *   as in the program that process was about to exec;
 * - while the child forks, the two signals wait (blocked in the prepare
 *   handler, given back in both processes): the handler would run in the
 *   forking thread, which holds glibc's locks and the coder pool's for
 *   the copy.  The pool registers its handlers first (child_init), so
 *   this prepare handler runs before the pool's takes its lock. */
#include "adf_fork.h"

#include <ap_mpm.h>

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* the signals prefork's children exit on, and the child's handlers */
static const int exits[] = { SIGTERM, SIGHUP };
#define NEXITS (sizeof(exits) / sizeof(exits[0]))
static void (*child_handler[NEXITS])(int);
static pid_t child_pid;

/* the forking thread's mask before the fork */
static __thread sigset_t before;

/* Async-signal-safe only (getpid() is a system call in glibc). */
static void on_exit_signal(int sig)
{
    struct sigaction dfl;
    apr_size_t i;

    for (i = 0; exits[i] != sig; i++) {
    }
    if (getpid() == child_pid) {
        child_handler[i](sig);
        return;
    }
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL);
    raise(sig);     /* delivered as the handler returns */
}

static void prepare(void)
{
    sigset_t s;
    apr_size_t i;

    sigemptyset(&s);
    for (i = 0; i < NEXITS; i++) {
        sigaddset(&s, exits[i]);
    }
    pthread_sigmask(SIG_BLOCK, &s, &before);
}

/* In both processes; in the new one a signal that came meanwhile is
 * delivered here, to on_exit_signal. */
static void restore(void)
{
    pthread_sigmask(SIG_SETMASK, &before, NULL);
}

void adf_fork_child_init(apr_pool_t *pchild, server_rec *s)
{
    int threaded = 0;
    apr_size_t i;

    /* Threaded MPMs take signals in one thread, by sigwait: no handler
     * runs in a forked process. */
    if (ap_mpm_query(AP_MPMQ_IS_THREADED, &threaded) != APR_SUCCESS
        || threaded != AP_MPMQ_NOT_SUPPORTED) {
        return;
    }
    child_pid = getpid();
    for (i = 0; i < NEXITS; i++) {
        struct sigaction sa;

        if (sigaction(exits[i], NULL, &sa) != 0
            || (sa.sa_flags & SA_SIGINFO)
            || sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN) {
            continue;
        }
        child_handler[i] = sa.sa_handler;
        sa.sa_handler = on_exit_signal;
        sigaction(exits[i], &sa, NULL);
    }
    pthread_atfork(prepare, restore, restore);    /* fails for ENOMEM only */
}
