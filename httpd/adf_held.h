/* What a child holds mapped of the stored files it checked: siblings and
 * compressed cache entries.  One still the file it was when checked (a
 * statx of its name: device, inode, size, mtime, ctime and, for a
 * sibling, the mount, on every request) goes out from the child's
 * mapping of it: one system call where a plain file takes four (open,
 * mmap, munmap, close) and a stored file checked anew five or six.
 * nginx's open_file_cache, with the file's identity checked on every
 * request.  Only where httpd would map a file itself (adf_held_may), and
 * for at most ADF_HELD_SIZE_MAX coded bytes. */
#ifndef ADF_HELD_H
#define ADF_HELD_H

#include "adf_private.h"
#include "adf_ident.h"
#include "adf_digest.h"
#include "adf_memo.h"

#include <apr_buckets.h>
#include <sys/stat.h>     /* statx, before STATX_MNT_ID_UNIQUE below */

/* httpd's core output filter writes out more bytes held in memory than
 * this (FlushMaxThreshold's default) before it lets the handler's thread
 * go, where a file's bytes may wait for a slow client asynchronously: a
 * larger sibling goes out from its file, as a plain file would. */
#define ADF_HELD_SIZE_MAX 65536

/* A held file is let go within about this of its last request (idle 2 s,
 * then the next sweep, at the default load interval): until then a
 * deleted one's blocks stay in use.  A longer interval, or a response
 * still being sent, holds one longer: the cache worker, which waits up to
 * this long for an evicted entry's room, then evicts more than needed. */
#define ADF_HELD_LET_GO apr_time_from_sec(4)

typedef struct adf_held_t adf_held_t;

void adf_held_child_init(apr_pool_t *pchild);

/* Does httpd send a file here from a mapping of its own, and tag it from
 * its metadata alone (EnableMMAP on, EnableSendfile off, no FileETag
 * Digest)?  Then a held file goes out as it would. */
int adf_held_may(request_rec *r);

/* One statx of name (relative to dirfd, or AT_FDCWD), not following a
 * link: *fi as apr_stat fills it, *id to the nanosecond and *mnt, the
 * mount's number, never reused (0: this kernel has none, or statx is
 * refused and apr_stat answered, at AT_FDCWD only). */
apr_status_t adf_held_stat(int dirfd, const char *name, apr_finfo_t *fi,
                           adf_ident_t *id, apr_uint64_t *mnt,
                           apr_pool_t *p);

/* The file named key (a path), held as the file it is (id, mnt) and
 * checked as kind (adf_memo.h) for F's version src; a reference the
 * request keeps until r->pool goes.  NULL: none. */
const adf_held_t *adf_held_get(request_rec *r, const char *key,
                               const adf_ident_t *id, apr_uint64_t mnt,
                               const adf_ident_t *src, int kind);

/* Hold the file open on fd (named key, id, mnt), checked as kind for
 * src's version: what the check found, found->length of its bytes from
 * the start the coded ones. */
void adf_held_put(const char *key, int fd, const adf_ident_t *id,
                  apr_uint64_t mnt, const adf_ident_t *src, int kind,
                  const adf_memo_t *found);

const adf_memo_t *adf_held_found(const adf_held_t *h);

#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U     /* Linux 6.8 */
#endif

/* The identity and mount number a statx found, as adf_held_stat gives
 * them. */
struct statx;
void adf_held_ident(const struct statx *sx, adf_ident_t *id,
                    apr_uint64_t *mnt);

/* A bucket of its bytes, holding them while it lives (it may outlive
 * the request's pool in a filter's setaside). */
apr_bucket *adf_held_bucket(const adf_held_t *h, apr_bucket_alloc_t *list);

/* Let go of siblings no request asked for in a while (a deleted one's
 * space comes back then): from the child's watchdog tick, and from
 * requests. */
void adf_held_sweep(apr_time_t now);

#endif /* ADF_HELD_H */
