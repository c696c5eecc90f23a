/* What a child holds mapped of the siblings it checked.  A sibling still
 * the file it was when checked (its path's statx: device, inode, size,
 * mtime, ctime and mount, every request) goes out from the child's
 * mapping of it: one system call where a plain file takes four (open,
 * mmap, munmap, close) and a sibling checked anew six.  nginx's
 * open_file_cache, with the file's identity checked on every request.
 * Only where httpd would map a file itself (EnableMMAP, not sendfile),
 * and for siblings of at most ADF_HELD_SIZE_MAX bytes. */
#ifndef ADF_HELD_H
#define ADF_HELD_H

#include "adf_private.h"
#include "adf_ident.h"
#include "adf_digest.h"

#include <apr_buckets.h>

/* httpd's core output filter writes out more bytes held in memory than
 * this (FlushMaxThreshold's default) before it lets the handler's thread
 * go, where a file's bytes may wait for a slow client asynchronously: a
 * larger sibling goes out from its file, as a plain file would. */
#define ADF_HELD_SIZE_MAX 65536

typedef struct adf_held_t adf_held_t;

void adf_held_child_init(apr_pool_t *pchild);

/* The sibling at path, held as the file it is (id, mnt: the mount's
 * number, never reused) and checked as holding F's version src; a
 * reference the request keeps until r->pool goes.  NULL: none. */
const adf_held_t *adf_held_get(request_rec *r, const char *path,
                               const adf_ident_t *id, apr_uint64_t mnt,
                               const adf_ident_t *src);

/* Hold the sibling open on fd (at path, id, mnt), checked as holding
 * src's version, its bytes named by digest. */
void adf_held_put(const char *path, int fd, const adf_ident_t *id,
                  apr_uint64_t mnt, const adf_ident_t *src,
                  const unsigned char *digest);

const unsigned char *adf_held_digest(const adf_held_t *h);

/* A bucket of its bytes, holding them while it lives (it may outlive
 * the request's pool in a filter's setaside). */
apr_bucket *adf_held_bucket(const adf_held_t *h, apr_bucket_alloc_t *list);

/* Let go of siblings no request asked for in a while (a deleted one's
 * space comes back then): from the child's watchdog tick, and from
 * requests. */
void adf_held_sweep(apr_time_t now);

#endif /* ADF_HELD_H */
