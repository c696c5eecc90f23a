/* A directory for stored bytes (the compressed cache) that nobody but
 * root and the children's user can change or redirect.  Pure: no httpd.
 *
 * Whoever may replace a directory on the way to it (its owner, or whoever
 * may write the one above it) may swap it for a directory of planted
 * entries, served as other files.  So every directory from / down must
 * be root's or the children's user's and writable by no one else, mode
 * bits and access ACLs alike; one above it may be sticky (as /tmp), which
 * keeps others from replacing what they do not own; the directory itself
 * may not, or anyone could add entries to it.  It is opened through
 * descriptors, each directory from its parent's without following a
 * link, and used through the last one only: nothing follows the path
 * again.
 */
#ifndef ADF_SAFEDIR_H
#define ADF_SAFEDIR_H

#include <apr_pools.h>
#include <sys/types.h>

/* The children's user and group (and the user's name, for messages). */
typedef struct {
    uid_t uid;
    gid_t gid;
    const char *user;
} adf_dirowner_t;

/* Resolve dir (links a trusted directory holds are fine) and open it as
 * adf_safedir_walk does. */
int adf_safedir_open(const char *dir, const adf_dirowner_t *o, apr_pool_t *p,
                     const char **err);

/* Open the absolute, resolved path from / down, checking every
 * directory; its descriptor, or -1 and *err (from p), which names the
 * directory at fault.  A link found on the way (swapped in since the path
 * was resolved) is refused. */
int adf_safedir_walk(const char *resolved, const adf_dirowner_t *o,
                     apr_pool_t *p, const char **err);

#endif /* ADF_SAFEDIR_H */
