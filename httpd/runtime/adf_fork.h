/* A prefork child's SIGTERM and SIGHUP: held back while it forks, and
 * run as the child's exit in the child only, so that a process it forked
 * (a CGI before its exec) takes their default action (adf_fork.c says
 * why). */
#ifndef ADF_FORK_H
#define ADF_FORK_H

#include "adf_private.h"

/* In each child of a non-threaded MPM (child_init), after the coder
 * pool's fork handlers: the signal handlers and the fork handlers. */
void adf_fork_child_init(apr_pool_t *pchild, server_rec *s);

#endif /* ADF_FORK_H */
