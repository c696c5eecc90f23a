/* SIGTERM and SIGHUP held back across a prefork child's forks.
 *
 * prefork's children exit from inside their SIGTERM and SIGHUP handler:
 * the child pool's cleanups, then exit().  A process a child forks keeps
 * that handler until it execs, and mod_cgi signals its script the moment
 * a request body fails, often while fork() has not yet returned there.
 * mod_watchdog's threads (this module's sampler and cache worker) make the
 * child multi-threaded, so glibc takes its atfork lock around the fork;
 * an exit() run inside that (its __cxa_finalize unregisters each
 * library's atfork handlers under the same lock) waited forever, in the
 * new process and, signalled as it forked, in the child itself; and the
 * child pool's cleanups waited on the coder pool's lock, held for the
 * fork.  Measured (stop 36): prefork, chunked POSTs over LimitRequestBody
 * to a CGI from 2 clients, about 70 such processes in 25 s, each holding
 * its child until mod_cgi's SIGKILL 3 s later (or for good when the child
 * went first); none without the module.
 *
 * So the signals are blocked before the fork and given back after it, in
 * the parent once its other handlers have run (the coder pool registers
 * its handlers first: adf_codec_pool_init), and in the new process one
 * that came meanwhile is handed to the default action (the process ends
 * by it, as the exec'd script would), not to the child's handler. */
#include "adf_fork.h"

#include <ap_mpm.h>

#include <pthread.h>
#include <signal.h>
#include <string.h>

/* the signals prefork's children exit on */
static const int held[] = { SIGTERM, SIGHUP };
#define NHELD (sizeof(held) / sizeof(held[0]))

/* the forking thread's mask before the fork */
static __thread sigset_t before;

static void prepare(void)
{
    sigset_t s;
    apr_size_t i;

    sigemptyset(&s);
    for (i = 0; i < NHELD; i++) {
        sigaddset(&s, held[i]);
    }
    pthread_sigmask(SIG_BLOCK, &s, &before);
}

static void parent(void)
{
    pthread_sigmask(SIG_SETMASK, &before, NULL);
}

static void child(void)
{
    sigset_t pending;
    apr_size_t i;

    if (sigpending(&pending) == 0) {
        for (i = 0; i < NHELD; i++) {
            struct sigaction sa;

            if (sigismember(&pending, held[i])
                && !sigismember(&before, held[i])
                && sigaction(held[i], NULL, &sa) == 0
                && sa.sa_handler != SIG_IGN) {
                /* the handler would exit here, under glibc's lock */
                memset(&sa, 0, sizeof(sa));
                sa.sa_handler = SIG_DFL;
                sigaction(held[i], &sa, NULL);
            }
        }
    }
    pthread_sigmask(SIG_SETMASK, &before, NULL);
}

void adf_fork_child_init(apr_pool_t *pchild, server_rec *s)
{
    int threaded = 0;

    /* Threaded MPMs take signals in one thread, by sigwait: no handler
     * runs in a forked process. */
    if (ap_mpm_query(AP_MPMQ_IS_THREADED, &threaded) == APR_SUCCESS
        && threaded == AP_MPMQ_NOT_SUPPORTED) {
        pthread_atfork(prepare, parent, child);    /* fails for ENOMEM only */
    }
}
