/* A prefork child's forks (mod_cgi's scripts, an SSI exec): SIGTERM and
 * SIGHUP held back across fork(), so that the new process never runs the
 * child's exit inside fork (adf_fork.c says why). */
#ifndef ADF_FORK_H
#define ADF_FORK_H

#include "adf_private.h"

/* In each child of a non-threaded MPM (child_init): the atfork handlers. */
void adf_fork_child_init(apr_pool_t *pchild, server_rec *s);

#endif /* ADF_FORK_H */
