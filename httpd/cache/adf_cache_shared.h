/* What the request side of the compressed cache (adf_cache.c) and its
 * background worker (adf_cache_worker.c) share: the segment every child
 * maps, and this configuration's list of cache directories. */
#ifndef ADF_CACHE_SHARED_H
#define ADF_CACHE_SHARED_H

#include "adf_cache.h"
#include "adf_cache_entry.h"

#include <pthread.h>

#define ADF_CACHE_QUEUE 256     /* files waiting to be compressed */
#define ADF_CACHE_PATH 1024     /* the longest source path queued */
#define ADF_CACHE_TOUCH 16384   /* slots recording when entries were hit */
#define ADF_CACHE_VERSIONS 64   /* versions waiting to be kept */
#define ADF_CACHE_HOST 272      /* the longest "ServerName:port" kept */
#define ADF_CACHE_KEPT 16384    /* slots naming the versions kept */
/* The largest source cached: read whole into the worker's memory. */
#define ADF_CACHE_FILE_MAX (16 * 1024 * 1024)

typedef struct {
    adf_ident_t key;            /* the source as the request saw it */
    apr_uint64_t hash;          /* adf_cache_key_hash(&key) */
    apr_uint32_t generation;    /* of the configuration that queued it */
    apr_uint32_t cache;         /* the directory, in that configuration */
    apr_uint32_t codings;       /* bit 1 << c: the codings to make */
    /* A delta (codings: dcz alone): against the kept version of this
     * name hash (adf_cache_dict_hash) and SHA-256; 0: none. */
    apr_uint64_t dict_name;
    unsigned char dict[ADF_DIGEST_LEN];
    char path[ADF_CACHE_PATH];
} adf_cache_item_t;

/* A version of a file to keep as a dictionary
 * (AdaptiveDeflateDictionaryVersions): the file, and where it was served
 * (adf_cache_origin_t). */
typedef struct {
    adf_ident_t key;            /* the file as the request saw it */
    apr_uint64_t hash;          /* adf_cache_key_hash(&key) */
    apr_uint64_t vkey;          /* adf_cache_version_key */
    apr_uint32_t generation;    /* of the configuration that queued it */
    apr_uint32_t cache;         /* the directory, in that configuration */
    char path[ADF_CACHE_PATH];
    char uri[ADF_CACHE_PATH];
    char host[ADF_CACHE_HOST];
} adf_cache_version_t;

/* Per directory; kept over graceful restarts while the directory is the
 * same. */
typedef struct {
    apr_uint64_t dir_hash;      /* the directory these count for */
    volatile apr_uint64_t hits, misses, evictions, written, corrupt;
    volatile apr_uint64_t dropped;      /* the queue was full */
    volatile apr_uint64_t entries, bytes;   /* as the worker counts them */
    volatile apr_uint64_t dicts, dict_bytes;    /* ... of them, kept
                                                 * versions (dictionaries) */
    volatile apr_uint32_t failing;      /* cannot write (logged once) */
    volatile apr_uint32_t counted;      /* entries and bytes are known */
} adf_cache_counts_t;

typedef struct {
    /* Robust and process-shared: a holder killed with -9 leaves the next
     * one EOWNERDEAD and a queue that is consistent at every step. */
    pthread_mutex_t lock;
    apr_uint32_t head, count;           /* the ring, under the lock */
    adf_cache_item_t queue[ADF_CACHE_QUEUE];
    volatile apr_uint64_t busy;         /* hash being compressed, or 0 */
    /* The job under way, under the lock: a worker whose child exits
     * without a word (prefork's exit() does not wait for mod_watchdog's
     * thread) leaves it here for the next one to queue again. */
    adf_cache_item_t current;
    apr_uint32_t running;               /* current is set */
    volatile apr_uint32_t generation;   /* the configuration in charge */
    volatile apr_uint32_t worker_pid;
    adf_cache_counts_t counts[ADF_CACHE_DIRS];
    struct {
        volatile apr_uint64_t hash, used;
    } touch[ADF_CACHE_TOUCH];
    /* Versions to keep, under the lock: the worker keeps them at once,
     * whatever the load (a copy and a SHA-256, no compression). */
    apr_uint32_t vhead, vcount;
    adf_cache_version_t versions[ADF_CACHE_VERSIONS];
    volatile apr_uint64_t vbusy;        /* the vkey being kept, or 0 */
    /* The versions kept: by vkey, the name hash of each one's dictionary
     * (adf_cache_kept_get). */
    struct {
        volatile apr_uint64_t vkey, dict;
    } kept[ADF_CACHE_KEPT];
} adf_cache_shared_t;

typedef struct {
    const adf_cache_conf_t *conf;
    int fd;                     /* the directory, opened once */
    apr_uint64_t dev, ino;      /* the directory's, for the guard */
} adf_cache_dir_t;

/* This configuration's caches. */
typedef struct {
    server_rec *s;
    apr_uint32_t generation;
    int n;
    adf_cache_dir_t dir[ADF_CACHE_DIRS];
    adf_cache_shared_t *sh;
} adf_cache_gen_t;

/* The largest source a cache of max bytes takes. */
apr_off_t adf_cache_file_max(apr_off_t max);

/* The worker: register its singleton watchdog callback for g. */
void adf_cache_worker_start(adf_cache_gen_t *g, apr_pool_t *pconf);
/* A child's worker ends its slice before the child goes (child_init). */
void adf_cache_worker_child_init(apr_pool_t *pchild);

#endif /* ADF_CACHE_SHARED_H */
