/* The compressed cache's background worker: one per server, a
 * mod_watchdog singleton (one child holds it; another takes over when
 * that child goes).  It drains the shared queue while the server is idle
 * and writes each entry atomically; it alone knows the entries' sizes and
 * ages (it scans the directories when it starts) and trims them to
 * MAXSIZE, least recently used first.  Versions of files to keep as
 * dictionaries (a copy and a SHA-256) it keeps at every tick, whatever
 * the load ("versions kept as dictionaries", below).
 *
 * Idle: the load as the controller sees it (a rise at once, a fall
 * smoothed) below its idle mark (adf_control_idle_below); a stale signal
 * is not idle.  Work comes in
 * slices (a file read; 64 KB of input to a streamed coder; a whole body
 * of up to 4 MB to libdeflate), each followed by a pause that keeps the
 * worker's average use of a CPU at the share of the capacity left below
 * the mark: with a load signal that includes the worker itself, the load
 * settles half way between the other load and the mark.
 *
 * Everything goes through the directory's descriptor, opened once at
 * start-up (adf_cache.c): nothing follows its path.
 *
 * Reading: a file is read only once it is settled (adf_ident_settled):
 * until its filesystem's clock has moved past its ctime, a second write
 * within the same tick would keep its identity, and the entry would hold
 * bytes it no longer has.  It is left for a later request to queue.
 *
 * Writing: "<name>.tmp.<node>.<pid>" (adf_cache_tempfiles.c: unique
 * across hosts sharing the directory), the coded bytes (their CRC and
 * SHA-256 computed on the way), the trailer, fsync, then rename to the
 * entry's name: no partial entry is ever visible.  A temporary file left
 * by a killed worker of this host is removed by the next scan, another
 * host's once it has not changed for a minute.  Before each file, the
 * filesystem must have room for it and a reserve for everyone else on it
 * (a twentieth of it, at most 1 GB): the least recently used entries go
 * to make room, and when there are none the file is dropped.  Any
 * failure to write (a full disk, a read-only directory) drops the file,
 * logs one line and stops writing to that directory for 10 s; requests
 * meanwhile are compressed on the fly.
 *
 * Evicted files are deleted at once: a request that opened one a moment
 * before reads it whole through its descriptor.  Only the files this
 * worker wrote or found are (by inode): a file another host put under an
 * entry's name since is that host's.
 */
#include "adf_cache_shared.h"
#include "adf_codec.h"
#include "adf_shm.h"
#include "adf_cache_queue.h"
#include "adf_cache_tempfiles.h"
#include "adf_dictmatch.h"
#include "adf_held.h"

#include <ap_mpm.h>
#include <apr_atomic.h>
#include <apr_strings.h>
#include <mod_watchdog.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define ADF_CACHE_WATCHDOG "_adaptive_deflate_cache_"
#define TICK apr_time_from_msec(100)
#define BURST apr_time_from_msec(200)   /* the most one callback works */
#define CHUNK (64 * 1024)               /* input per slice, streamed */
#define WHOLE_MAX (4 * 1024 * 1024)     /* whole (libdeflate) up to this */
#define RETRY apr_time_from_sec(10)     /* a failed directory rests */
/* What the cache leaves free on its filesystem for everyone else. */
#define RESERVE_SHARE 20                /* a twentieth ... */
#define RESERVE_MAX ((apr_off_t)1 << 30)        /* ... at most 1 GB */

typedef struct {
    int active;
    adf_cache_item_t item;
    adf_ident_t key;            /* the source read, to the nanosecond */
    char *data;                 /* its bytes (malloc'ed) */
    apr_size_t len;
    unsigned char source[ADF_DIGEST_LEN];   /* their SHA-256 */
    apr_uint64_t dict_hash;     /* its name as a dictionary */
    adf_dict_t dict;            /* a delta's dictionary (data malloc'ed) */
    apr_uint64_t delta_hash;    /* ... and the delta's name */
    adf_coding_e todo[ADF_NCODINGS];
    int ntodo, cur;
    apr_pool_t *pool;           /* the job's */
    /* the coding in progress */
    adf_stream_t *s;
    apr_size_t fed;
    int fd;
    char tmp[ADF_CACHE_NAME_MAX], final[ADF_CACHE_NAME_MAX];
    apr_uint32_t crc;
    adf_digest_t digest;
    apr_uint64_t out;
    int err;                    /* errno of the failed write */
    apr_time_t later;           /* waiting for room until then */
    apr_time_t waiting;         /* ... since then; 0: not waiting */
} job_t;

/* The free space a filesystem will have once what the worker evicted
 * lately is let go: an entry a child holds mapped, or sends, returns its
 * blocks only then (adf_held.h).  At most what the filesystem says plus
 * what was evicted in the last 3 to 4 s (credit: SLOTS slots of SLOT,
 * the newest first), so that another writer's bytes, or an entry that
 * was already gone, count for no longer. */
#define SLOTS 4
#define SLOT (ADF_HELD_LET_GO / SLOTS)
typedef struct {
    apr_off_t expect;
    apr_off_t credit[SLOTS];
    apr_time_t slot;            /* when the newest slot began */
} room_t;

/* make_room's answers.  A job waiting for room asks again after WAIT,
 * and waits no longer than ADF_HELD_LET_GO: space that does not come
 * back by then (a hold longer than that, a filesystem that frees late)
 * is not waited for again. */
enum { ROOM_NONE, ROOM_NOW, ROOM_LATER };
#define WAIT apr_time_from_msec(250)

/* This process's worker; only the watchdog thread touches it. */
static struct {
    int scanned;
    adf_cache_index_t index[ADF_CACHE_DIRS];
    apr_time_t retry[ADF_CACHE_DIRS];   /* failing: the next attempt */
    room_t room[ADF_CACHE_DIRS];        /* a filesystem's: room_of */
    job_t job;
    apr_time_t slice_end;               /* when the last slice ended */
    double slice_cpu;                   /* its CPU time, microseconds */
    double version_credit;              /* bytes versions may take now */
    apr_time_t version_at;              /* ... as of then */
    volatile int stopping;
} w;

/* Is the watchdog thread inside a tick (quiesce waits for it)? */
static volatile apr_uint32_t ticking;

static const char *dir_of(const adf_cache_gen_t *g, int i)
{
    return g->dir[i].conf->dir;
}

static int dfd(const adf_cache_gen_t *g, int i)
{
    return g->dir[i].fd;
}

static adf_cache_counts_t *counts(const adf_cache_gen_t *g, int i)
{
    return &g->sh->counts[i];
}

/* Is this worker still the one in charge? */
static int in_charge(const adf_cache_gen_t *g)
{
    int state;

    return !w.stopping
           && apr_atomic_read32(&g->sh->generation) == g->generation
           && ap_mpm_query(AP_MPMQ_MPM_STATE, &state) == APR_SUCCESS
           && state != AP_MPMQ_STOPPING;
}

static apr_uint64_t thread_cpu_ns(void)
{
    struct timespec t;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (apr_uint64_t)t.tv_sec * 1000000000u + (apr_uint64_t)t.tv_nsec;
}

static void publish(const adf_cache_gen_t *g, int i)
{
    apr_uint64_t dicts = 0, dict_bytes = 0;
    int k;

    for (k = 0; k < w.index[i].n; k++) {
        if (w.index[i].rec[k].file[ADF_IDENTITY]) {
            dicts++;
            dict_bytes += (apr_uint64_t)w.index[i].rec[k].file[ADF_IDENTITY];
        }
    }
    apr_atomic_set64(&counts(g, i)->entries, (apr_uint64_t)w.index[i].n);
    apr_atomic_set64(&counts(g, i)->bytes, (apr_uint64_t)w.index[i].bytes);
    apr_atomic_set64(&counts(g, i)->dicts, dicts);
    apr_atomic_set64(&counts(g, i)->dict_bytes, dict_bytes);
}

/* ---- the directory cannot be written ------------------------------------------ */

static void write_failed(const adf_cache_gen_t *g, int i, int err,
                         const char *what)
{
    char buf[120];

    w.retry[i] = apr_time_now() + RETRY;
    if (!apr_atomic_xchg32(&counts(g, i)->failing, 1)) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, g->s, ADFLOGNO(00022)
                     "AdaptiveDeflateCache %s: cannot %s (%s): files are "
                     "compressed on the fly until it can be written (tried "
                     "again every %d s)", dir_of(g, i), what,
                     apr_strerror(APR_FROM_OS_ERROR(err), buf, sizeof(buf)),
                     (int)apr_time_sec(RETRY));
    }
}

static void write_worked(const adf_cache_gen_t *g, int i)
{
    if (apr_atomic_xchg32(&counts(g, i)->failing, 0)) {
        ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, g->s, ADFLOGNO(00023)
                     "AdaptiveDeflateCache %s: writable again",
                     dir_of(g, i));
    }
}

/* ---- eviction -------------------------------------------------------------------- */

/* When each entry was last hit, from what requests recorded. */
static void refresh_used(const adf_cache_gen_t *g, adf_cache_index_t *x)
{
    int k;

    for (k = 0; k < x->n; k++) {
        adf_cache_rec_t *r = &x->rec[k];
        apr_uint32_t t = (apr_uint32_t)(r->hash % ADF_CACHE_TOUCH);
        apr_time_t used;

        if (apr_atomic_read64(&g->sh->touch[t].hash) == r->hash
            && (used = (apr_time_t)apr_atomic_read64(&g->sh->touch[t].used))
               > r->used) {
            r->used = used;
        }
    }
}

/* Remove dfd/name if it is still the file of inode ino (0: whichever):
 * another host sharing the directory may have renamed a file of its own
 * onto the name since.  Opened to be looked at: on NFS an open
 * revalidates the name (close-to-open), where a stat may answer from the
 * client's cache. */
static int unlink_same(int dfd, const char *name, apr_uint64_t ino)
{
    struct stat st;
    int fd, same = !ino;

    if (!same && (fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK
                                         | O_CLOEXEC)) >= 0) {
        same = fstat(fd, &st) == 0 && (apr_uint64_t)st.st_ino == ino;
        close(fd);
    }
    return same && unlinkat(dfd, name, 0) == 0;
}

/* Delete an entry's files (those still the ones indexed) and forget it:
 * the bytes deleted. */
static apr_off_t evict(const adf_cache_gen_t *g, int i,
                       const adf_cache_rec_t *v)
{
    adf_cache_rec_t gone = *v;
    char name[ADF_CACHE_NAME_MAX];
    apr_off_t freed = 0;
    int c;

    for (c = ADF_IDENTITY; c < ADF_NCODINGS; c++) {
        if (gone.file[c]) {
            adf_cache_entry_name(name, gone.hash, (adf_coding_e)c);
            if (unlink_same(dfd(g, i), name, gone.ino[c])) {
                freed += gone.file[c];
            }
        }
    }
    adf_cache_index_remove(&w.index[i], gone.hash);
    apr_atomic_inc64(&counts(g, i)->evictions);
    return freed;
}

/* Index coding c's file of entry hash: bytes, inode ino, used then. */
static void indexed(int i, apr_uint64_t hash, adf_coding_e c,
                    apr_off_t bytes, apr_uint64_t ino, apr_time_t used)
{
    adf_cache_rec_t *r;

    if (adf_cache_index_add(&w.index[i], hash, c, bytes, used) == 0
        && (r = adf_cache_index_find(&w.index[i], hash))) {
        r->ino[c] = ino;
    }
}

static void trim(const adf_cache_gen_t *g, int i, apr_uint64_t keep)
{
    adf_cache_index_t *x = &w.index[i];
    const adf_cache_rec_t *v;

    refresh_used(g, x);
    while ((v = adf_cache_index_victim(x, g->dir[i].conf->max, keep))) {
        evict(g, i, v);
    }
    publish(g, i);
}

/* Directory i's filesystem's room: the first directory's on its device
 * (two caches on one filesystem must not each count the same space). */
static room_t *room_of(const adf_cache_gen_t *g, int i)
{
    int j = 0;

    while (j < i && g->dir[j].dev != g->dir[i].dev) {
        j++;
    }
    return &w.room[j];
}

/* The bytes evicted lately: the slots rolled forward to now (a clock
 * set back drops them all: the safe side). */
static apr_off_t recent(room_t *m, apr_time_t now)
{
    apr_off_t sum = 0;
    int k;

    if (now < m->slot || now - m->slot >= SLOTS * SLOT) {
        memset(m->credit, 0, sizeof(m->credit));
        m->slot = now;
    }
    while (now - m->slot >= SLOT) {
        memmove(m->credit + 1, m->credit, (SLOTS - 1) * sizeof(*m->credit));
        m->credit[0] = 0;
        m->slot += SLOT;
    }
    for (k = 0; k < SLOTS; k++) {
        sum += m->credit[k];
    }
    return sum;
}

/* Is there room for need more bytes in directory i, besides the reserve
 * left to everyone else on its filesystem (ROOM_NOW), or will there be
 * once what was evicted is let go (ROOM_LATER, where may_wait)?  The
 * least recently used entries but keep's go until one of them holds. */
static int make_room(const adf_cache_gen_t *g, int i, apr_off_t need,
                     apr_uint64_t keep, int may_wait)
{
    adf_cache_index_t *x = &w.index[i];
    const adf_cache_rec_t *v;
    room_t *m = room_of(g, i);
    struct statvfs fs;
    apr_off_t reserve, bs, want, avail, cap, freed;
    apr_time_t now = apr_time_now();
    int evicted = 0, room;

    refresh_used(g, x);
    for (;;) {
        if (fstatvfs(dfd(g, i), &fs) != 0) {
            return ROOM_NOW;    /* cannot tell: the write will */
        }
        reserve = (apr_off_t)fs.f_blocks * (apr_off_t)fs.f_frsize
                  / RESERVE_SHARE;
        reserve = reserve < RESERVE_MAX ? reserve : RESERVE_MAX;
        /* need in whole blocks, and one more (a coder's few bytes over
         * its input, the inode's), besides the reserve */
        bs = fs.f_frsize ? (apr_off_t)fs.f_frsize : 1;
        want = ((need + bs - 1) / bs + 1) * bs + reserve;
        avail = (apr_off_t)fs.f_bavail * (apr_off_t)fs.f_frsize;
        /* What was evicted, in this call or the ones before it, may
         * still be held by a child: evicting on until it is let go would
         * empty the cache of its hot entries (those most likely held),
         * and writing into its blocks would take the reserve.  Room
         * coming back that way is waited for. */
        cap = avail + recent(m, now);
        m->expect = m->expect > avail ? m->expect : avail;
        m->expect = m->expect < cap ? m->expect : cap;
        if (avail >= want) {
            room = ROOM_NOW;
            break;
        }
        if (m->expect >= want) {
            room = may_wait ? ROOM_LATER : ROOM_NONE;
            break;
        }
        if (!(v = adf_cache_index_victim(x, 0, keep)) || v->hash == keep) {
            room = ROOM_NONE;
            break;
        }
        freed = evict(g, i, v);
        m->expect += freed;
        m->credit[0] += freed;
        evicted++;
    }
    if (evicted) {
        publish(g, i);
        ap_log_error(APLOG_MARK, APLOG_TRACE2, 0, g->s, "cache worker: %s: "
                     "%d entries evicted to leave room on its filesystem",
                     dir_of(g, i), evicted);
    }
    return room;
}

/* ---- the scan at start ----------------------------------------------------------- */

/* What the file open on fd (st: its fstat) in directory i is:
 * ADF_CACHE_TRAILER_OK when it is whole and the entry its name says.  A
 * dictionary whole to its record of where it was served is a version
 * kept: requests find it so. */
static int entry_ok(const adf_cache_gen_t *g, int i, int fd,
                    const struct stat *st, apr_uint64_t hash,
                    adf_coding_e c)
{
    unsigned char rec[ADF_CACHE_ORIGIN_MAX], sha[ADF_DIGEST_LEN];
    adf_cache_trailer_t tr;
    adf_cache_origin_t o;
    int rc;

    rc = adf_cache_trailer_read(fd, st->st_size, &tr);
    /* (a dictionary's name holds its host and its file's path pattern,
     * which its trailer does not: a request checks its bytes against the
     * hash it was asked for) */
    if (rc == ADF_CACHE_TRAILER_OK
        && (tr.coding != c
            || (c != ADF_IDENTITY && !adf_coding(c)->needs_dict
                && adf_cache_key_hash(&tr.key) != hash))) {
        rc = ADF_CACHE_TRAILER_BAD;
    }
    /* a delta's name: its source's entry and the slot of the dictionary
     * its header names */
    if (rc == ADF_CACHE_TRAILER_OK && c != ADF_IDENTITY
        && adf_coding(c)->needs_dict
        && (adf_cache_delta_dict(fd, tr.length, sha) != 0
            || adf_cache_delta_hash(adf_cache_key_hash(&tr.key), sha)
               != hash)) {
        rc = ADF_CACHE_TRAILER_BAD;
    }
    if (rc == ADF_CACHE_TRAILER_OK && c == ADF_IDENTITY) {
        if (adf_cache_origin_read(fd, tr.length, rec, &o) < 0) {
            rc = ADF_CACHE_TRAILER_BAD;
        }
        else {
            adf_cache_kept_set(g->sh, adf_cache_version_key(
                                   adf_cache_key_hash(&tr.key), o.host, i),
                               hash);
        }
    }
    return rc;
}

static void scan(const adf_cache_gen_t *g, int i)
{
    int fd = dup(dfd(g, i)), bad = 0, old = 0, temps = 0;
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    struct dirent *de;

    if (!d) {
        if (fd >= 0) {
            close(fd);
        }
        write_failed(g, i, errno, "read it");
        return;
    }
    rewinddir(d);       /* the descriptor is shared with every scan */
    while ((de = readdir(d))) {
        apr_uint64_t hash;
        adf_coding_e c;
        adf_cache_writer_t wr;
        struct stat st;
        int efd, rc;

        switch (adf_cache_file_kind(de->d_name, &hash, &c, &wr)) {
        case ADF_CACHE_FILE_TEMP:
            /* never renamed: its writer is gone, or still at work */
            temps += adf_cache_temp_found(g, i, dirfd(d), de->d_name, &wr);
            break;
        case ADF_CACHE_FILE_ENTRY:
            /* the file opened is the one judged (another host may rename
             * a new one onto the name meanwhile); a FIFO must not block */
            if ((efd = openat(dirfd(d), de->d_name, O_RDONLY | O_CLOEXEC
                                                    | O_NOFOLLOW
                                                    | O_NONBLOCK)) < 0) {
                break;
            }
            if (fstat(efd, &st) != 0 || !S_ISREG(st.st_mode)) {
                close(efd);
                break;
            }
            rc = entry_ok(g, i, efd, &st, hash, c);
            close(efd);
            switch (rc) {
            case ADF_CACHE_TRAILER_OK:
                /* last used: when it was written (its rename), until a
                 * hit */
                indexed(i, hash, c, st.st_size, (apr_uint64_t)st.st_ino,
                        apr_time_from_sec(st.st_ctim.tv_sec)
                        + st.st_ctim.tv_nsec / 1000);
                break;
            case ADF_CACHE_TRAILER_OLD:
                old += unlink_same(dirfd(d), de->d_name,
                                   (apr_uint64_t)st.st_ino);
                break;
            default:
                if (unlink_same(dirfd(d), de->d_name,
                                (apr_uint64_t)st.st_ino)) {
                    apr_atomic_inc64(&counts(g, i)->corrupt);
                    bad++;
                }
                break;
            }
            break;
        default:
            break;
        }
    }
    closedir(d);
    if (bad) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, g->s, ADFLOGNO(00024)
                     "AdaptiveDeflateCache %s: removed %d damaged or "
                     "truncated entries", dir_of(g, i), bad);
    }
    if (temps) {
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, g->s, ADFLOGNO(00032)
                     "AdaptiveDeflateCache %s: removed %d temporary files "
                     "of this host's workers that are gone", dir_of(g, i),
                     temps);
    }
    if (old) {
        ap_log_error(APLOG_MARK, APLOG_INFO, 0, g->s, ADFLOGNO(00029)
                     "AdaptiveDeflateCache %s: removed %d entries written "
                     "by an earlier release (they are made again)",
                     dir_of(g, i), old);
    }
    trim(g, i, 0);
    apr_atomic_set32(&counts(g, i)->counted, 1);
}

/* ---- one file, coding by coding ------------------------------------------------- */

/* What a job holds, let go: its coder, an unfinished file, its bytes. */
static void job_free(const adf_cache_gen_t *g, job_t *j)
{
    if (j->s) {
        adf_stream_close(j->s);
        j->s = NULL;
    }
    if (j->fd >= 0) {
        close(j->fd);
        unlinkat(dfd(g, j->item.cache), j->tmp, 0);    /* never renamed */
        j->fd = -1;
    }
    adf_digest_abandon(&j->digest);
    free(j->data);
    j->data = NULL;
    free((void *)j->dict.data);
    j->dict.data = NULL;
    if (j->pool) {
        apr_pool_destroy(j->pool);
        j->pool = NULL;
    }
}

static void end_job(const adf_cache_gen_t *g)
{
    job_t *j = &w.job;

    job_free(g, j);
    j->active = 0;
    if (!adf_cache_lock(g->sh)) {
        g->sh->running = 0;
        adf_cache_unlock(g->sh);
    }
    apr_atomic_set64(&g->sh->busy, 0);
}

/* The next queued file of this configuration for a directory that can be
 * written (or is due to be tried again). */
static int pop(const adf_cache_gen_t *g, adf_cache_item_t *it)
{
    adf_cache_shared_t *sh = g->sh;
    apr_time_t now = apr_time_now();
    int got = 0;

    if (adf_cache_lock(sh)) {
        return 0;
    }
    while (sh->count && !got) {
        *it = sh->queue[sh->head];
        sh->head = (sh->head + 1) % ADF_CACHE_QUEUE;
        sh->count--;
        got = it->generation == g->generation && (int)it->cache < g->n
              && (!apr_atomic_read32(&counts(g, it->cache)->failing)
                  || now >= w.retry[it->cache]);
    }
    if (got) {
        sh->current = *it;
        sh->running = 1;
        apr_atomic_set64(&sh->busy, it->hash);
    }
    adf_cache_unlock(sh);
    return got;
}

/* A job cut short by the child's end goes back to the queue, for the
 * next worker to finish. */
static void requeue(const adf_cache_gen_t *g)
{
    adf_cache_shared_t *sh = g->sh;
    int queued;

    if (!w.job.active || adf_cache_lock(sh)) {
        return;
    }
    queued = adf_cache_queue_push(sh, &w.job.item);
    sh->running = 0;
    adf_cache_unlock(sh);
    ap_log_error(APLOG_MARK, APLOG_TRACE2, 0, g->s,
                 "cache worker: %s %s, this worker stops", w.job.item.path,
                 queued ? "queued again" : "dropped (the queue is full)");
}

/* Taking over: the job a worker before this one left unfinished (its
 * child exited, or was killed, mid-job) is queued again, and its file no
 * longer marked as in progress. */
static void recover(const adf_cache_gen_t *g)
{
    adf_cache_shared_t *sh = g->sh;
    adf_cache_item_t it;
    int left = 0, queued = 0;

    if (adf_cache_lock(sh)) {
        return;
    }
    if ((left = sh->running)) {
        it = sh->current;
        queued = adf_cache_queue_push(sh, &it);
        sh->running = 0;
    }
    apr_atomic_set64(&sh->busy, 0);
    apr_atomic_set64(&sh->vbusy, 0);
    adf_cache_unlock(sh);
    if (left) {
        ap_log_error(APLOG_MARK, APLOG_TRACE2, 0, g->s,
                     "cache worker: %s, left unfinished by the worker "
                     "before, %s", it.path,
                     queued ? "queued again" : "dropped (the queue is full)");
    }
}

/* What read_source found. */
enum { SOURCE_READ, SOURCE_CHANGED, SOURCE_UNSETTLED, SOURCE_UNTRACKED };

/* Read the queued file whole, if it is still the version the request saw,
 * on a filesystem whose ctime moves with every change, settled (no write
 * can keep its identity from now on: the clock is the kernel's coarse
 * one, which stamps inodes) and stays that version while it is read.
 * Opened without blocking: a FIFO put in F's place must not hold the
 * worker (only a regular file is read). */
static int read_source(job_t *j)
{
    adf_ident_t now, queued = j->item.key;
    struct timespec clock;
    struct statfs fs;
    struct stat st;
    adf_ts_t t;
    apr_size_t got = 0;
    ssize_t n;
    int fd = open(j->item.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC),
        rc = SOURCE_CHANGED;

    if (fd < 0) {
        return SOURCE_CHANGED;
    }
    clock_gettime(CLOCK_REALTIME_COARSE, &clock);
    if (fstatfs(fd, &fs) == 0 && !adf_fs_tracks_changes((long)fs.f_type)) {
        rc = SOURCE_UNTRACKED;
    }
    else if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)
             && st.st_size <= ADF_CACHE_FILE_MAX) {
        adf_ident_of_stat(&j->key, &st);
        now = j->key;
        adf_cache_key_usec(&now);
        adf_cache_key_usec(&queued);
        t.sec = clock.tv_sec;
        t.nsec = clock.tv_nsec;
        if (!adf_ident_same(&now, &queued)) {
            rc = SOURCE_CHANGED;
        }
        else if (!adf_ident_settled(&j->key, &t)) {
            rc = SOURCE_UNSETTLED;
        }
        else if ((j->data = malloc((j->len = (apr_size_t)st.st_size)
                                   ? j->len : 1))) {
            rc = SOURCE_READ;
        }
    }
    while (rc == SOURCE_READ && got < j->len) {
        n = pread(fd, j->data + got, j->len - got, (off_t)got);
        if (n > 0) {
            got += (apr_size_t)n;
        }
        else if (n == 0 || errno != EINTR) {
            rc = SOURCE_CHANGED;
        }
    }
    if (rc == SOURCE_READ) {
        if (fstat(fd, &st) != 0) {
            rc = SOURCE_CHANGED;
        }
        else {
            adf_ident_of_stat(&now, &st);
            if (!adf_ident_same(&now, &j->key)) {
                rc = SOURCE_CHANGED;    /* changed while it was read */
            }
        }
    }
    close(fd);
    return rc;
}

/* Does the index's file of coding c in rec still exist, as a file of
 * ours?  One that went behind the index's back (a request dropped it as
 * damaged, an operator, tmpfiles, another server on the directory) or was
 * replaced by another user's file or by a FIFO is forgotten, to be made
 * again: else the file would stay a miss until the next restart. */
static int still_there(const adf_cache_gen_t *g, int i, adf_cache_rec_t *rec,
                       adf_coding_e c)
{
    char name[ADF_CACHE_NAME_MAX];
    struct stat st;

    if (!rec || !rec->file[c]) {
        return 0;
    }
    adf_cache_entry_name(name, rec->hash, c);
    if (fstatat(dfd(g, i), name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (st.st_uid == geteuid() && S_ISREG(st.st_mode)) {
            return 1;
        }
        /* not ours, or not a file (planted: a FIFO; requests refuse
         * it): made again */
        unlinkat(dfd(g, i), name, 0);
    }
    else if (errno != ENOENT) {
        return 1;
    }
    w.index[i].bytes -= rec->file[c];
    rec->bytes -= rec->file[c];
    rec->file[c] = 0;
    publish(g, i);
    return 0;
}

static int digest_of(const char *data, apr_size_t len, unsigned char *out)
{
    adf_digest_t dg;

    if (adf_digest_init(&dg) != 0) {
        return -1;
    }
    adf_digest_update(&dg, data, len);
    return adf_digest_final(&dg, out);
}

/* A delta job's dictionary: the kept version the item names, read whole
 * and checked against its SHA-256 (a request removes a damaged one).
 * 0, or -1 when it is gone, damaged or not that one. */
static int read_dict(const adf_cache_gen_t *g, job_t *j)
{
    unsigned char rec[ADF_CACHE_ORIGIN_MAX], sha[ADF_DIGEST_LEN];
    char name[ADF_CACHE_NAME_MAX];
    adf_cache_trailer_t tr;
    adf_cache_origin_t o;
    struct stat st;
    apr_off_t len;
    unsigned char *buf = NULL;
    apr_size_t got = 0;
    ssize_t n;
    int fd, rc = -1;

    adf_cache_entry_name(name, j->item.dict_name, ADF_IDENTITY);
    fd = openat(dfd(g, j->item.cache), name,
                O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        return -1;
    }
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid()
        && adf_cache_trailer_read(fd, st.st_size, &tr) == ADF_CACHE_TRAILER_OK
        && tr.coding == ADF_IDENTITY
        && !memcmp(tr.source, j->item.dict, ADF_DIGEST_LEN)
        && (len = adf_cache_origin_read(fd, tr.length, rec, &o)) >= 0
        && len <= ADF_DICT_MAX && (buf = malloc(len ? (apr_size_t)len : 1))) {
        while (got < (apr_size_t)len
               && ((n = pread(fd, buf + got, (apr_size_t)len - got,
                              (off_t)got)) > 0 || (n < 0 && errno == EINTR))) {
            got += n > 0 ? (apr_size_t)n : 0;
        }
        if (got == (apr_size_t)len
            && digest_of((const char *)buf, got, sha) == 0
            && !memcmp(sha, j->item.dict, ADF_DIGEST_LEN)) {
            j->dict.data = buf;
            j->dict.len = got;
            memcpy(j->dict.hash, sha, ADF_DIGEST_LEN);
            buf = NULL;
            rc = 0;
        }
    }
    free(buf);
    close(fd);
    return rc;
}

static int start_job(const adf_cache_gen_t *g, apr_pool_t *parent)
{
    job_t *j = &w.job;
    adf_cache_rec_t *rec;
    adf_coding_e order[ADF_NCODINGS];   /* what most clients take first */
    int k, n, read = SOURCE_CHANGED;

    memset(j, 0, sizeof(*j));
    j->fd = -1;
    if (!pop(g, &j->item)) {
        return 0;
    }
    j->active = 1;
    if (apr_pool_create(&j->pool, parent)
        || (read = read_source(j)) != SOURCE_READ) {
        ap_log_error(APLOG_MARK, APLOG_TRACE2, 0, g->s, "cache worker: %s %s, "
                     "left", j->item.path, read == SOURCE_UNSETTLED
                     ? "changed within its timestamp's tick"
                     : read == SOURCE_UNTRACKED
                     ? "on a filesystem whose ctime does not follow changes"
                     : "changed or gone");
        end_job(g);     /* a later request queues it */
        return 1;
    }
    if (digest_of(j->data, j->len, j->source) != 0) {
        end_job(g);
        return 1;
    }
    if (j->item.dict_name) {
        /* a delta: dcz against the kept version the request named */
        j->delta_hash = adf_cache_delta_hash(j->item.hash, j->item.dict);
        rec = adf_cache_index_find(&w.index[j->item.cache], j->delta_hash);
        if (!still_there(g, (int)j->item.cache, rec, ADF_DCZ)
            && read_dict(g, j) == 0) {
            j->todo[j->ntodo++] = ADF_DCZ;
        }
        if (!j->ntodo) {
            end_job(g);
        }
        return 1;
    }
    rec = adf_cache_index_find(&w.index[j->item.cache], j->item.hash);
    n = adf_coding_cache_order(order);
    for (k = 0; k < n; k++) {
        adf_coding_e c = order[k];

        if ((j->item.codings & 1u << c)
            && !still_there(g, (int)j->item.cache, rec, c)) {
            j->todo[j->ntodo++] = c;
        }
    }
    ap_log_error(APLOG_MARK, APLOG_TRACE2, 0, g->s,
                 "cache worker: %s, %d coding(s) to write (queued: 0x%x)",
                 j->item.path, j->ntodo, (unsigned)j->item.codings);
    if (!j->ntodo) {
        end_job(g);
    }
    return 1;
}

static apr_status_t sink(void *baton, const char *data, apr_size_t len)
{
    job_t *j = baton;

    j->crc = adf_cache_crc(j->crc, data, len);
    adf_digest_update(&j->digest, data, len);
    j->out += len;
    while (len) {
        ssize_t n = write(j->fd, data, len);

        if (n < 0 && errno != EINTR) {
            j->err = errno;
            return APR_FROM_OS_ERROR(errno);
        }
        if (n > 0) {
            data += n;
            len -= (apr_size_t)n;
        }
    }
    return APR_SUCCESS;
}

/* The name hash of the job's file in coding c: F's key's, or for F as a
 * dictionary the one its SHA-256, host and path pattern give it. */
static apr_uint64_t entry_hash(const job_t *j, adf_coding_e c)
{
    return c == ADF_IDENTITY ? j->dict_hash
           : adf_coding(c)->needs_dict ? j->delta_hash : j->item.hash;
}

static int whole(const job_t *j, adf_coding_e c)
{
    return c != ADF_IDENTITY && adf_coding(c)->whole && j->len <= WHOLE_MAX;
}

/* Open j's temporary file for coding c and its coder, once its
 * filesystem has room for it: 1; -1: not yet (j->later); 0: failed. */
static int open_coding(const adf_cache_gen_t *g, job_t *j, adf_coding_e c)
{
    int flags = whole(j, c) ? ADF_STREAM_WHOLE | ADF_STREAM_BEST : 0;
    int i = (int)j->item.cache;
    adf_stream_opts_t o = { NULL };
    apr_status_t rv;

    apr_time_t now = apr_time_now();

    if (j->waiting > now) {
        j->waiting = now;       /* the clock was set back */
    }
    switch (make_room(g, i, (apr_off_t)j->len + ADF_CACHE_TRAILER
                            + (c == ADF_IDENTITY ? ADF_CACHE_ORIGIN_MAX : 0),
                      entry_hash(j, c), !j->waiting
                                    || now - j->waiting < ADF_HELD_LET_GO)) {
    case ROOM_LATER:
        ap_log_error(APLOG_MARK, APLOG_TRACE2, 0, g->s, "cache worker: %s: "
                     "waiting for the room of entries a child still holds",
                     dir_of(g, i));
        j->waiting = j->waiting ? j->waiting : now;
        j->later = now + WAIT;
        return -1;
    case ROOM_NONE:
        write_failed(g, i, ENOSPC, "leave room on its filesystem for "
                     "another file");
        return 0;
    }
    j->waiting = 0;
    adf_cache_entry_name(j->final, entry_hash(j, c), c);
    j->crc = 0;
    j->out = 0;
    j->err = 0;
    j->fd = adf_cache_temp_create(dfd(g, i), j->final, j->tmp);
    if (j->fd < 0) {
        write_failed(g, i, errno, "create a file in it");
        return 0;
    }
    if (adf_digest_init(&j->digest) != 0) {
        return 0;
    }
    j->fed = 0;
    if (c == ADF_IDENTITY) {
        return 1;       /* the bytes as they are: no coder */
    }
    o.coding = adf_coding(c);
    o.level = o.coding->strongest;
    if (o.coding->needs_dict) {
        /* against a dictionary, what its preparation allows: the level
         * bounds a dictionary's cost wherever it is used */
        o.dict = &j->dict;
        o.level = adf_dict_level_max(j->dict.len);
        o.level = o.level < o.coding->strongest ? o.level
                                                : o.coding->strongest;
    }
    o.size_hint = (apr_off_t)j->len;
    o.flags = flags;
    o.bufsize = CHUNK;
    rv = adf_stream_open(&j->s, j->pool, &o, sink, j);
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, g->s, ADFLOGNO(00025)
                     "cannot start %s for the compressed cache",
                     adf_coding_name(c));
        j->s = NULL;
        return 0;
    }
    return 1;
}

/* j's bytes in coding c are out: trailer, fsync, F's mtime, rename. */
static int commit(const adf_cache_gen_t *g, job_t *j, adf_coding_e c)
{
    unsigned char t[ADF_CACHE_TRAILER];
    adf_cache_trailer_t tr;
    struct timespec times[2];
    struct stat st;
    int i = (int)j->item.cache;
    apr_uint64_t bytes;

    tr.coding = c;
    tr.length = j->out;
    tr.crc = j->crc;
    tr.key = j->key;
    memcpy(tr.source, j->source, ADF_DIGEST_LEN);
    if (adf_digest_final(&j->digest, tr.digest) != 0) {
        return 0;
    }
    adf_cache_trailer_format(t, &tr);
    bytes = j->out + sizeof(t);
    if (sink(j, (const char *)t, sizeof(t)) != APR_SUCCESS
        || (j->err = fsync(j->fd) ? errno : 0)) {
        write_failed(g, i, j->err, "write a file in it");
        return 0;
    }
    /* Last-Modified, and FileETag MTime, as F's. */
    times[0].tv_nsec = UTIME_OMIT;
    times[1].tv_sec = (time_t)j->key.mtime.sec;
    times[1].tv_nsec = j->key.mtime.nsec;
    futimens(j->fd, times);
    st.st_ino = 0;
    fstat(j->fd, &st);          /* the inode that eviction checks */
    if (close(j->fd) != 0) {
        j->fd = -1;
        unlinkat(dfd(g, i), j->tmp, 0);
        write_failed(g, i, errno, "write a file in it");
        return 0;
    }
    j->fd = -1;
    if (renameat(dfd(g, i), j->tmp, dfd(g, i), j->final) != 0) {
        write_failed(g, i, errno, "rename a file in it");
        unlinkat(dfd(g, i), j->tmp, 0);
        return 0;
    }
    write_worked(g, i);
    room_of(g, i)->expect -= (apr_off_t)bytes;  /* taken from make_room's */
    indexed(i, entry_hash(j, c), c, (apr_off_t)bytes,
            (apr_uint64_t)st.st_ino, apr_time_now());
    apr_atomic_inc64(&counts(g, i)->written);
    ap_log_error(APLOG_MARK, APLOG_TRACE2, 0, g->s,
                 "cache worker: wrote %s/%s (%s, %" APR_UINT64_T_FMT
                 " bytes)", dir_of(g, i), j->final,
                 c ? adf_coding_name(c) : "dictionary", bytes);
    trim(g, i, entry_hash(j, c));
    return 1;
}

/* One slice of the current job. */
static void advance(const adf_cache_gen_t *g)
{
    job_t *j = &w.job;
    adf_coding_e c = j->todo[j->cur];
    apr_size_t n;
    apr_status_t rv;

    if (!j->s && j->fd < 0) {
        int opened = open_coding(g, j, c);

        if (opened < 0) {
            return;
        }
        if (!opened) {
            end_job(g);
            return;
        }
    }
    n = whole(j, c) ? j->len : (j->len - j->fed < CHUNK ? j->len - j->fed
                                                       : CHUNK);
    rv = adf_stream_write(j->s, j->data + j->fed, n,
                          j->fed + n == j->len ? ADF_OP_FINISH
                                               : ADF_OP_WRITE);
    j->fed += n;
    if (rv != APR_SUCCESS) {
        if (j->err) {
            write_failed(g, j->item.cache, j->err, "write a file in it");
        }
        end_job(g);
        return;
    }
    if (j->fed < j->len) {
        return;
    }
    adf_stream_close(j->s);
    j->s = NULL;
    if (!commit(g, j, c) || ++j->cur == j->ntodo) {
        end_job(g);
    }
}

/* ---- versions kept as dictionaries ------------------------------------------------ */

/* Keeping a version (AdaptiveDeflateDictionaryVersions) is a copy and a
 * SHA-256, no compression: done at the first tick after a request asked,
 * whatever the load, since a deploy is worth advertising at once and
 * most of all on a busy server.  Bounded in bytes: up to VERSION_BURST
 * at once, then VERSION_RATE a second (copying and hashing take about
 * 1 ms a megabyte: at most 2 % of a CPU). */
#define VERSION_RATE (16.0 * 1024 * 1024)
#define VERSION_BURST ((double)ADF_DICT_MAX)

/* The next queued version of this configuration for a directory that
 * can be written (or is due to be tried again). */
static int pop_version(const adf_cache_gen_t *g, adf_cache_version_t *v)
{
    adf_cache_shared_t *sh = g->sh;
    apr_time_t now = apr_time_now();
    int got = 0;

    if (adf_cache_lock(sh)) {
        return 0;
    }
    while (sh->vcount && !got) {
        *v = sh->versions[sh->vhead];
        sh->vhead = (sh->vhead + 1) % ADF_CACHE_VERSIONS;
        sh->vcount--;
        got = v->generation == g->generation && (int)v->cache < g->n
              && (!apr_atomic_read32(&counts(g, v->cache)->failing)
                  || now >= w.retry[v->cache]);
    }
    if (got) {
        apr_atomic_set64(&sh->vbusy, v->vkey);
    }
    adf_cache_unlock(sh);
    return got;
}

/* Keep version v: F's bytes, the record of where they were served, the
 * trailer, under the name their SHA-256, v's host and F's path pattern
 * give; or find them there already (kept before, under another name of
 * the same bytes' file, or by another server on the directory).  The
 * bytes it read. */
static apr_size_t keep_version(const adf_cache_gen_t *g,
                               const adf_cache_version_t *v,
                               apr_pool_t *parent)
{
    adf_cache_origin_t o;
    unsigned char rec[ADF_CACHE_ORIGIN_MAX];
    char name[ADF_CACHE_NAME_MAX];
    struct stat st;
    apr_size_t n, len;
    job_t j;
    int i = (int)v->cache, rc = SOURCE_CHANGED, kept = 0;

    memset(&j, 0, sizeof(j));
    j.fd = -1;
    j.item.key = v->key;
    j.item.hash = v->hash;
    j.item.generation = v->generation;
    j.item.cache = v->cache;
    apr_cpystrn(j.item.path, v->path, sizeof(j.item.path));
    o.host = v->host;
    o.uri = v->uri;
    o.path = v->path;
    if (apr_pool_create(&j.pool, parent) != APR_SUCCESS
        || (rc = read_source(&j)) != SOURCE_READ
        || j.len > ADF_DICT_MAX || digest_of(j.data, j.len, j.source) != 0
        || !(n = adf_cache_origin_format(rec, &o))) {
        ap_log_error(APLOG_MARK, APLOG_TRACE2, 0, g->s, "cache worker: %s "
                     "not kept as a dictionary (%s)", v->path,
                     rc == SOURCE_READ ? "too large, or no SHA-256"
                     : "changed, unsettled or gone");
        len = j.len;
        job_free(g, &j);
        return len;
    }
    j.dict_hash = adf_cache_dict_hash(j.source, v->host,
                                      adf_dict_match(j.pool, v->path));
    adf_cache_entry_name(name, j.dict_hash, ADF_IDENTITY);
    if (fstatat(dfd(g, i), name, &st, AT_SYMLINK_NOFOLLOW) == 0
        && S_ISREG(st.st_mode) && st.st_uid == geteuid()) {
        kept = 1;
    }
    else if (open_coding(g, &j, ADF_IDENTITY) > 0) {
        if (sink(&j, j.data, j.len) != APR_SUCCESS
            || sink(&j, (const char *)rec, n) != APR_SUCCESS) {
            write_failed(g, i, j.err, "write a file in it");
        }
        else {
            kept = commit(g, &j, ADF_IDENTITY);
        }
    }
    if (kept) {
        adf_cache_kept_set(g->sh, v->vkey, j.dict_hash);
    }
    len = j.len;
    job_free(g, &j);
    return len;
}

/* Keep the versions queued, as far as the credit goes. */
static void keep_versions(const adf_cache_gen_t *g, apr_pool_t *pool)
{
    apr_time_t now = apr_time_now();
    adf_cache_version_t v;

    if (now > w.version_at) {
        w.version_credit += VERSION_RATE * (double)(now - w.version_at)
                            / APR_USEC_PER_SEC;
    }
    w.version_at = now;
    if (w.version_credit > VERSION_BURST) {
        w.version_credit = VERSION_BURST;
    }
    while (w.version_credit > 0 && in_charge(g) && pop_version(g, &v)) {
        w.version_credit -= (double)keep_version(g, &v, pool);
        apr_atomic_set64(&g->sh->vbusy, 0);
    }
}

/* ---- the watchdog callback ---------------------------------------------------------- */

/* Work while idle, slice by slice, pausing after each to keep the duty
 * cycle at the load of the moment; back to mod_watchdog within about
 * BURST. */
static void work(const adf_cache_gen_t *g, apr_pool_t *pool)
{
    apr_time_t begun = apr_time_now();

    for (;;) {
        adf_idle_view_t v;
        apr_time_t now = apr_time_now(), resume;
        apr_uint64_t t0;
        double duty;

        adf_shm_idle_view(&v);
        if (v.stale || v.load < 0 || v.load >= v.idle_below) {
            return;
        }
        duty = (v.idle_below - v.load) * v.capacity / 100;
        duty = duty > 1 ? 1 : duty;
        /* The pause owed for the last slice, at this duty: a load that
         * falls shortens it. */
        resume = w.slice_end
                 + (apr_time_t)(w.slice_cpu * (1 / duty - 1));
        if (now < resume) {
            if (resume - now > TICK || now - begun >= BURST) {
                return;
            }
            apr_sleep(resume - now);
        }
        if (apr_time_now() - begun >= BURST) {
            return;
        }
        /* waiting for room (make_room), unless the clock was set back */
        if (w.job.active && now < w.job.later
            && w.job.later - now <= WAIT) {
            return;
        }
        t0 = thread_cpu_ns();
        if (w.job.active) {
            advance(g);
        }
        else if (!start_job(g, apr_pool_parent_get(pool))) {
            return;     /* nothing queued */
        }
        w.slice_cpu = (double)(thread_cpu_ns() - t0) / 1000;
        w.slice_end = apr_time_now();
        if (!in_charge(g)) {
            return;
        }
    }
}

/* The worker thread ends (its pool goes): what it holds goes too. */
static apr_status_t forget_state(void *data)
{
    const adf_cache_gen_t *g = data;
    job_t *j = &w.job;
    int i;

    if (j->fd >= 0 && j->active) {
        close(j->fd);
        unlinkat(dfd(g, j->item.cache), j->tmp, 0);
    }
    adf_digest_abandon(&j->digest);
    free(j->data);
    for (i = 0; i < ADF_CACHE_DIRS; i++) {
        adf_cache_index_free(&w.index[i]);
    }
    memset(&w, 0, sizeof(w));
    adf_cache_temp_forget();
    return APR_SUCCESS;
}

/* One tick in charge: take over if new to it, then work while idle. */
static void run(const adf_cache_gen_t *g, apr_pool_t *pool)
{
    int i;

    if (!in_charge(g)) {
        if (w.job.active) {
            requeue(g);
            end_job(g);
        }
        return;
    }
    apr_atomic_set32(&g->sh->worker_pid, (apr_uint32_t)getpid());
    if (!w.scanned) {
        ap_log_error(APLOG_MARK, APLOG_TRACE2, 0, g->s,
                     "cache worker: this child (pid %ld) takes over",
                     (long)getpid());
        recover(g);
        for (i = 0; i < g->n; i++) {
            scan(g, i);
        }
        w.scanned = 1;
        apr_pool_cleanup_register(apr_pool_parent_get(pool), (void *)g,
                                  forget_state, apr_pool_cleanup_null);
    }
    /* at every tick, idle or not: other hosts see this worker live */
    if (w.job.active && w.job.fd >= 0) {
        adf_cache_temp_refresh(w.job.fd);
    }
    adf_cache_temp_sweep(g);
    keep_versions(g, apr_pool_parent_get(pool));
    work(g, pool);
    if (w.job.active && !in_charge(g)) {
        requeue(g);
        end_job(g);
    }
}

static apr_status_t tick(int state, void *data, apr_pool_t *pool)
{
    const adf_cache_gen_t *g = data;

    if (state == AP_WATCHDOG_STATE_STOPPING) {
        /* Maybe from another thread while a slice runs: the slice ends
         * the job when it sees this. */
        w.stopping = 1;
        ap_log_error(APLOG_MARK, APLOG_TRACE2, 0, g->s,
                     "cache worker: stopping%s", w.job.active
                     ? " with a job under way" : "");
        return APR_SUCCESS;
    }
    if (state == AP_WATCHDOG_STATE_RUNNING) {
        apr_atomic_set32(&ticking, 1);
        run(g, pool);
        apr_atomic_set32(&ticking, 0);
    }
    return APR_SUCCESS;
}

/* The child is going (a pre-cleanup of pchild): mod_watchdog stops its
 * thread only with the process pool, after pchild and the module's other
 * child state are gone, so a slice under way (seconds at a strong level)
 * would run on into a torn-down process (a child of the ASan suite died
 * of SIGSEGV while exiting as the worker wrote an entry; the faulting
 * frame was not seen).  The slice ends
 * at its next check, the job goes back to the queue for the next child,
 * and the exit waits for that, at most a few seconds. */
static apr_status_t quiesce(void *data)
{
    int i;

    w.stopping = 1;
    for (i = 0; i < 500 && apr_atomic_read32(&ticking); i++) {
        apr_sleep(apr_time_from_msec(10));
    }
    return APR_SUCCESS;
}

void adf_cache_worker_child_init(apr_pool_t *pchild)
{
    apr_pool_pre_cleanup_register(pchild, NULL, quiesce);
}

void adf_cache_worker_start(adf_cache_gen_t *g, apr_pool_t *pconf)
{
    APR_OPTIONAL_FN_TYPE(ap_watchdog_get_instance) *wd_get_instance;
    APR_OPTIONAL_FN_TYPE(ap_watchdog_register_callback) *wd_register;
    ap_watchdog_t *wd;
    apr_status_t rv;

    wd_get_instance = APR_RETRIEVE_OPTIONAL_FN(ap_watchdog_get_instance);
    wd_register = APR_RETRIEVE_OPTIONAL_FN(ap_watchdog_register_callback);
    if (!wd_get_instance || !wd_register) {
        ap_log_error(APLOG_MARK, APLOG_WARNING, 0, g->s, ADFLOGNO(00026)
                     "mod_watchdog is not loaded: nothing fills the "
                     "compressed cache (entries already there are served)");
        return;
    }
    rv = wd_get_instance(&wd, ADF_CACHE_WATCHDOG, 0, 1, pconf);
    if (rv == APR_SUCCESS) {
        rv = wd_register(wd, TICK, g, tick);
    }
    if (rv != APR_SUCCESS) {
        ap_log_error(APLOG_MARK, APLOG_ERR, rv, g->s, ADFLOGNO(00027)
                     "cannot start the compressed cache's worker: nothing "
                     "fills the cache (entries already there are served)");
    }
}
