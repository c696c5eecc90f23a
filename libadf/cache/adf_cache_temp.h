/* When another writer's temporary file in a cache directory is taken as
 * abandoned.  Pure: no httpd.
 *
 * Hosts may share a cache directory (NFS, CephFS, EFS): a temporary file
 * can be a writer's on another host, where this host's pids and process
 * table say nothing.  Neither does this host's clock against the file's
 * times: those are the file server's or the writer's, and hosts' clocks
 * differ.  What every writer does instead: while it has a temporary file
 * open it refreshes the file's mtime every ADF_TEMP_REFRESH, whatever it
 * is doing (its writes move the size and times as well).  A reader
 * watches the file: what it saw of it (inode, size, mtime, ctime) and
 * when, by its own clock; nothing of that changed for ADF_TEMP_STALE
 * means its writer stopped (killed, its host gone).  Only elapsed time on
 * the watcher's clock is compared, never two hosts' clocks.  (The
 * watcher must see what the file server has, not attributes its client
 * cached: it opens the file to look, which NFS's close-to-open consistency
 * revalidates.)
 */
#ifndef ADF_CACHE_TEMP_H
#define ADF_CACHE_TEMP_H

#include "adf_cache_entry.h"

#include <apr_time.h>

#define ADF_TEMP_REFRESH apr_time_from_sec(5)
/* Many times what the longest slice of a worker takes (a second or two:
 * a whole body of 4 MB to libdeflate), in which it refreshes nothing. */
#define ADF_TEMP_STALE apr_time_from_sec(60)
#define ADF_TEMP_WATCHED 64     /* files watched at once, per worker */

/* What a look at a temporary file saw. */
typedef struct {
    apr_uint64_t ino;
    apr_off_t size;
    adf_ts_t mtime, ctime;
} adf_temp_seen_t;

typedef struct {
    char name[ADF_CACHE_NAME_MAX];
    int dir;                    /* which cache directory (the caller's) */
    adf_temp_seen_t seen;
    apr_time_t since;           /* seen so since then (the watcher's clock) */
} adf_temp_watch_t;

typedef struct {
    adf_temp_watch_t w[ADF_TEMP_WATCHED];
    int n;
} adf_temp_watches_t;

/* Watch name in directory dir, seen so at now (known already: nothing).
 * -1 when ADF_TEMP_WATCHED files are watched already. */
int adf_temp_watch(adf_temp_watches_t *l, int dir, const char *name,
                   const adf_temp_seen_t *seen, apr_time_t now);

typedef enum {
    ADF_TEMP_LIVE,              /* changed lately: its writer is at work */
    ADF_TEMP_GONE,              /* renamed or removed */
    ADF_TEMP_ABANDONED          /* unchanged for ADF_TEMP_STALE */
} adf_temp_verdict_e;

/* What watched file w is, seen so now (NULL: it is not there).  A clock
 * set back starts the wait again (the safe side). */
adf_temp_verdict_e adf_temp_judge(adf_temp_watch_t *w,
                                  const adf_temp_seen_t *seen,
                                  apr_time_t now);

/* Stop watching the k-th file. */
void adf_temp_unwatch(adf_temp_watches_t *l, int k);

#endif /* ADF_CACHE_TEMP_H */
