/* The cache worker's temporary files on a directory other hosts may
 * share; see adf_cache_tempfiles.h and, for the rule, adf_cache_temp.h.
 *
 * Names: "<entry>.tmp.<node>.<pid>", the node a hash of the kernel's boot
 * id and the PID namespace's identity: a pid means one process only
 * within one namespace of one boot, and two hosts (or two containers on
 * one host) have pids of their own.  (A namespace's identity is given
 * again only once it is gone, and every process in it: a file of the
 * earlier one is a dead process's.)  Without /proc to read them from, a
 * random node (then this node's own files are judged as any other
 * host's).  Only this process of this node ever makes its name, so a
 * file already under it is its own (a process of the same pid, gone) and
 * is replaced; the file is opened with O_EXCL all the same.
 *
 * Liveness: a temporary file of a process of this node is removed at the
 * scan when that process is gone; any other one (another host's, an
 * earlier release's, whose name says no node; a process of this node
 * that lives but may not be a writer: pids are reused) is watched and
 * removed once it has not changed for ADF_TEMP_STALE.  Only the watcher's
 * own clock measures that, so clock skew between hosts does not matter;
 * the file is opened to be looked at, which revalidates NFS's attributes
 * (close-to-open), where a stat could give the client's cached ones.
 * No lock: fcntl locks on NFS need lockd (NFSv3) or hold for a lease
 * after their holder died (NFSv4), and a mount with -o nolock takes them
 * locally: a lock nobody else sees would look like a dead writer.
 *
 * Only the watchdog thread calls these.
 */
#include "adf_cache_tempfiles.h"
#include "adf_cache_temp.h"

#include <apr_atomic.h>
#include <apr_general.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct {
    apr_uint64_t node;
    apr_time_t refreshed;       /* the open temporary file's mtime */
    apr_time_t swept;
    adf_temp_watches_t watched;
} t;

/* FNV-1a, 64 bits, of s continuing h. */
static apr_uint64_t fnv(apr_uint64_t h, const char *s)
{
    while (*s) {
        h = (h ^ (unsigned char)*s++) * APR_UINT64_C(0x100000001b3);
    }
    return h;
}

/* This node: a hash of the boot id and the PID namespace's identity
 * ("pid:[4026531836]"), computed once; never 0. */
static apr_uint64_t node(void)
{
    char boot[64], ns[64];
    ssize_t n = -1;
    int fd;

    if (t.node) {
        return t.node;
    }
    if ((fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC))
        >= 0) {
        n = read(fd, boot, sizeof(boot) - 1);
        close(fd);
    }
    if (n > 0) {
        boot[n] = '\0';
        n = readlink("/proc/self/ns/pid", ns, sizeof(ns) - 1);
    }
    if (n > 0) {
        ns[n] = '\0';
        t.node = fnv(fnv(APR_UINT64_C(0xcbf29ce484222325), boot), ns);
    }
    else if (apr_generate_random_bytes((unsigned char *)&t.node,
                                       sizeof(t.node)) != APR_SUCCESS) {
        t.node = (apr_uint64_t)getpid() << 32 ^ (apr_uint64_t)apr_time_now();
    }
    t.node = t.node ? t.node : 1;
    return t.node;
}

int adf_cache_temp_create(int dfd, const char *final, char *tmp)
{
    adf_cache_writer_t self;

    self.node = node();
    self.pid = (long)getpid();
    adf_cache_temp_name(tmp, final, &self);
    unlinkat(dfd, tmp, 0);      /* of a process of this pid, gone */
    t.refreshed = apr_time_now();
    return openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW
                            | O_CLOEXEC, 0600);
}

void adf_cache_temp_refresh(int fd)
{
    apr_time_t now = apr_time_now();

    if (now - t.refreshed >= ADF_TEMP_REFRESH || now < t.refreshed) {
        futimens(fd, NULL);     /* NFS: the server's time */
        t.refreshed = now;
    }
}

/* Is process pid (of this node) gone: no such process, or a zombie its
 * parent has not reaped yet (a child killed with -9 is one for a moment,
 * when the next worker may already be scanning)? */
static int writer_gone(pid_t pid)
{
    char path[64], buf[256], *p;
    ssize_t n;
    int fd;

    if (kill(pid, 0) != 0) {
        return errno == ESRCH;
    }
    snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        return 0;
    }
    n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0) {
        return 0;
    }
    buf[n] = '\0';
    /* "pid (comm) S ...": the state follows the last ')' */
    return (p = strrchr(buf, ')')) && p[1] == ' ' && p[2] == 'Z';
}

/* What dfd/name is now: 0 with *seen, or -1 (errno ENOENT: not there). */
static int look(int dfd, const char *name, adf_temp_seen_t *seen)
{
    struct stat st;
    int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK
                               | O_CLOEXEC), rc;

    if (fd < 0) {
        return -1;
    }
    rc = fstat(fd, &st);
    close(fd);
    if (rc != 0) {
        return -1;
    }
    seen->ino = (apr_uint64_t)st.st_ino;
    seen->size = (apr_off_t)st.st_size;
    seen->mtime.sec = (apr_int64_t)st.st_mtim.tv_sec;
    seen->mtime.nsec = (long)st.st_mtim.tv_nsec;
    seen->ctime.sec = (apr_int64_t)st.st_ctim.tv_sec;
    seen->ctime.nsec = (long)st.st_ctim.tv_nsec;
    return 0;
}

int adf_cache_temp_found(const adf_cache_gen_t *g, int i, int dfd,
                         const char *name, const adf_cache_writer_t *wr)
{
    adf_temp_seen_t seen;

    if (wr->node == node() && wr->pid != (long)getpid()
        && writer_gone((pid_t)wr->pid)) {
        return unlinkat(dfd, name, 0) == 0;
    }
    if (look(dfd, name, &seen) == 0) {
        int full = adf_temp_watch(&t.watched, i, name, &seen,
                                  apr_time_now()) != 0;

        ap_log_error(APLOG_MARK, APLOG_TRACE2, 0, g->s, "cache worker: "
                     "%s/%s, another writer's temporary file, left%s",
                     g->dir[i].conf->dir, name, full ? " (not watched: "
                     "enough are)" : " and watched");
    }
    return 0;
}

void adf_cache_temp_sweep(const adf_cache_gen_t *g)
{
    apr_time_t now = apr_time_now();
    int k;

    if (now - t.swept < ADF_TEMP_REFRESH && now >= t.swept) {
        return;
    }
    t.swept = now;
    for (k = t.watched.n - 1; k >= 0; k--) {
        adf_temp_watch_t *w = &t.watched.w[k];
        int dfd = g->dir[w->dir].fd;
        adf_temp_seen_t seen;
        int there = look(dfd, w->name, &seen) == 0;

        if (!there && errno != ENOENT) {
            continue;           /* cannot tell now */
        }
        switch (adf_temp_judge(w, there ? &seen : NULL, now)) {
        case ADF_TEMP_LIVE:
            break;
        case ADF_TEMP_ABANDONED:
            if (unlinkat(dfd, w->name, 0) == 0) {
                ap_log_error(APLOG_MARK, APLOG_INFO, 0, g->s,
                             ADFLOGNO(00033) "AdaptiveDeflateCache %s: "
                             "removed %s, a temporary file unchanged for "
                             "%d s (its writer stopped)",
                             g->dir[w->dir].conf->dir, w->name,
                             (int)apr_time_sec(ADF_TEMP_STALE));
            }
            /* fall through */
        case ADF_TEMP_GONE:
            adf_temp_unwatch(&t.watched, k);
            break;
        }
    }
}

void adf_cache_temp_forget(void)
{
    t.watched.n = 0;
    t.swept = 0;
}
