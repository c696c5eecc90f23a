/* The compressed cache's shared queue: its lock, and putting an item back
 * at its end.  Used by the request side (adf_cache.c: it queues the files
 * it missed) and by the worker (adf_cache_worker.c: it takes them); the
 * queue itself is in the shared segment (adf_cache_shared.h). */
#ifndef ADF_CACHE_QUEUE_H
#define ADF_CACHE_QUEUE_H

#include "adf_cache_shared.h"

/* Make the segment's lock (a fresh segment): robust and process-shared. */
void adf_cache_lock_init(adf_cache_shared_t *sh);

/* 0 when taken (also from a holder that died: every step leaves the
 * queue whole), else an errno. */
int adf_cache_lock(adf_cache_shared_t *sh);
void adf_cache_unlock(adf_cache_shared_t *sh);

/* Queue it (the lock held): the last in the queue; 0 when the queue is
 * full and it was dropped. */
int adf_cache_queue_push(adf_cache_shared_t *sh, const adf_cache_item_t *it);

/* The versions kept as dictionaries, in a table of the segment that the
 * worker alone writes (from what it keeps, and from its scan of the
 * directories) and requests read without the lock: the name hash of
 * the dictionary kept for vkey (adf_cache_version_key), or 0 when it is
 * not known to be kept.  A slot holds the last version set there: one
 * pushed out is kept again (found there, or written anew) when a
 * request next asks. */
void adf_cache_kept_set(adf_cache_shared_t *sh, apr_uint64_t vkey,
                        apr_uint64_t dict);
apr_uint64_t adf_cache_kept_get(adf_cache_shared_t *sh, apr_uint64_t vkey);

#endif /* ADF_CACHE_QUEUE_H */
