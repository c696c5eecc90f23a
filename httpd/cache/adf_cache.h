/* The compressed cache (AdaptiveDeflateCache DIR MAXSIZE): static files
 * compressed once, at every coding's strongest setting, while the server
 * is idle, and then served like precompressed siblings.
 *
 * A request for a static file F that would go out byte for byte (the
 * sibling rules, adf_static.c) looks for F's entry (adf_cache_entry.h:
 * named from F's identity) in the coding the client prefers; found and
 * whole, the default handler serves the entry's file instead of F, as for
 * a sibling.  Not found, F is compressed on the fly as ever, and queued:
 * a bounded queue in shared memory, which one background worker per
 * server (adf_cache_worker.c) drains while the CPU is idle.
 */
#ifndef ADF_CACHE_H
#define ADF_CACHE_H

#include "adf_private.h"
#include "adf_config.h"
#include "adf_codec.h"

/* check_config hook: every cache directory exists, the children's user may
 * write and search it, nobody else may write it or replace any directory
 * above it; two caches in one directory have one size.  Fails startup
 * naming the directive. */
int adf_cache_check_config(apr_pool_t *pconf, apr_pool_t *plog,
                           apr_pool_t *ptemp, server_rec *s);

/* post_config: number the caches, attach the shared queue and counters
 * (kept over a graceful restart), start the worker's watchdog. */
int adf_cache_post_config(apr_pool_t *pconf, apr_pool_t *plog,
                          apr_pool_t *ptemp, server_rec *s);

void adf_cache_child_init(apr_pool_t *pchild, server_rec *s);

/* fixups hook: the cache's files are no resources of their own; a request
 * that maps to one is not found. */
int adf_cache_guard(request_rec *r);

/* Is a cache used here (configured for r's server, AdaptiveDeflateCache
 * not Off, AdaptiveDeflate On)?  Configuration only: cheap. */
int adf_cache_applies(request_rec *r, const adf_dir_conf_t *dc);

/* The cache r's file (r->finfo) may be answered from: where a cache is
 * configured for r's server, AdaptiveDeflateCache is not Off and
 * AdaptiveDeflate is On, for a regular file small enough to cache.  NULL
 * otherwise.  Allocated from r->pool. */
typedef struct adf_cache_req_t adf_cache_req_t;
adf_cache_req_t *adf_cache_for(request_rec *r, const adf_dir_conf_t *dc);

/* Does the cache hold r's file, as it is now, in coding c?  Then either
 * *heldp is the entry as the child holds it (adf_held.h) and *path its
 * name in the directory (only this module's handler, which sends the
 * mapping, takes a GET the swap let through), or *fdp the entry, open
 * (held by the request: adf_req_hold_fd),
 * and *path a name for that open file ("/proc/self/fd/N": no path is
 * followed again, and an entry evicted meanwhile is still read whole);
 * *fi is its file, fi->size the length of its coded bytes (what the
 * handler sends).  (An entry exists only for a version the worker found
 * settled: see adf_cache_entry.h.)  A damaged entry is removed. */
struct adf_held_t;
int adf_cache_lookup(request_rec *r, adf_cache_req_t *cr, adf_coding_e c,
                     const char **path, apr_finfo_t *fi, const int **fdp,
                     const struct adf_held_t **heldp);

/* adf_cache_lookup of r's file's delta against the kept version k
 * (adf_cache_entry.h): its dcz body, made by the worker and kept, whose
 * header names k's hash.  The caller found k for r (adf_cache_dict_find:
 * the access check of the file it was kept from is made for every
 * request, the delta served or not).  Found, cr stands for the delta's
 * entry (adf_cache_hit records its use). */
struct adf_cache_kept_t;
int adf_cache_delta_lookup(request_rec *r, adf_cache_req_t *cr,
                           const struct adf_cache_kept_t *k,
                           const char **path, apr_finfo_t *fi,
                           const int **fdp, const struct adf_held_t **heldp);

/* The SHA-256 of the coded bytes of the entry adf_cache_lookup found:
 * their ETag's. */
const unsigned char *adf_cache_digest(const adf_cache_req_t *cr);

/* The SHA-256 of the bytes of the file the entry found holds (its name
 * as a dictionary). */
const unsigned char *adf_cache_source(const adf_cache_req_t *cr);

/* Is the version of r's file cr stands for (r->filename: before a swap)
 * kept as a dictionary for r's virtual host
 * (AdaptiveDeflateDictionaryVersions: its bytes, named from their
 * SHA-256, the host and its path's pattern, with the record of where it
 * was served)?  Then a client may be told to keep it.  If not, it is
 * queued to be kept (the worker does so at once, whatever the load). */
int adf_cache_version_kept(request_rec *r, const adf_cache_req_t *cr);

/* A version the cache kept as a dictionary, as a request found it. */
typedef struct adf_cache_kept_t {
    int fd;                     /* open (r->pool closes it) */
    int index;                  /* its cache directory */
    apr_uint64_t h;             /* its name's hash */
    apr_uint64_t dev, ino;
    apr_uint64_t id;            /* a hash of its identity (inode, size,
                                 * times): changes with its bytes */
    apr_size_t len;             /* its bytes (before their record) */
    int elsewhere;              /* kept from another file than the one
                                 * asked about */
    unsigned char hash[ADF_DICT_HASH_LEN];
} adf_cache_kept_t;

/* The dictionary whose SHA-256 is hash, from the cache used for r: a
 * version the cache kept, for r's virtual host, of the file at path (on
 * disk) or of a file of the same path pattern (another version of it),
 * that r's client may read where it was served (adf_access_may_read of
 * its record: the URL path it was served at, the file it was kept
 * from), asked for every request.  Its bytes are not read (see
 * adf_cache_dict_read): 1 and *k, or 0 when there is none.  A damaged
 * one is removed (and logged once). */
int adf_cache_dict_find(request_rec *r, const adf_dir_conf_t *dc,
                        const unsigned char *hash, const char *path,
                        adf_cache_kept_t *k);

/* k's bytes, read (malloc'ed: the caller frees them, or gives them to
 * adf_dict_prep_make) and checked against the hash they are named by;
 * NULL if they cannot be read or are not those (then the file is removed
 * as damaged).  Also the LRU's record of its use. */
unsigned char *adf_cache_dict_read(request_rec *r, const adf_cache_kept_t *k);

/* Its use, for the LRU, where its bytes were not read. */
void adf_cache_dict_touch(request_rec *r, const adf_cache_kept_t *k);

/* The outcome, for the note, the counters and the queue: r was answered
 * from the cache (hit), or not although it could have been: r's file is
 * queued, to be made in codings (a bit per adf_coding_e: those r's
 * directory may serve). */
void adf_cache_hit(request_rec *r, adf_cache_req_t *cr);
void adf_cache_miss(request_rec *r, adf_cache_req_t *cr,
                    apr_uint32_t codings);

/* Queue r's file's delta against k for the worker to make: its dcz
 * body at the strongest level k's size allows (adf_dict_level_max), when
 * the CPU is idle.  Once per pair, however many ask. */
void adf_cache_delta_queue(request_rec *r, adf_cache_req_t *cr,
                           const struct adf_cache_kept_t *k);

/* Queue r's file (r->filename: before a swap) for the worker to make in
 * codings, without counting a miss. */
void adf_cache_queue(request_rec *r, adf_cache_req_t *cr,
                     apr_uint32_t codings);

#define ADF_CACHE_DIRS 16       /* distinct cache directories */

/* One cache directory's figures, for the metrics. */
typedef struct {
    const char *dir;
    apr_off_t max_bytes;
    apr_uint64_t entries, bytes, hits, misses, evictions, written, dropped,
                 corrupt;
    int writable;
} adf_cache_dir_stats_t;

/* The figures of up to max cache directories; the number there are (0:
 * no cache).  *queue: files waiting; *idle: whether the worker may work. */
int adf_cache_stats(adf_cache_dir_stats_t *d, int max, apr_uint32_t *queue,
                    int *idle);

/* Status: ",\"cache\":{...}" (null without a cache) for ?json; a line
 * for mod_status. */
void adf_cache_status_json(request_rec *r,
                           void (*str)(request_rec *r, const char *v));
void adf_cache_status_hook(request_rec *r, int flags);

#endif /* ADF_CACHE_H */
