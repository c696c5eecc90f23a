/* adaptive-precompress: write precompressed siblings (.gz at gzip's
 * strongest level, .br at quality 11, .zst at level 19: each coding's
 * strongest) of the compressible files of a document tree, for
 * AdaptiveDeflatePrecompressed.
 *
 * The module serves a sibling S for its file F only when S carries this
 * tool's mark naming F as it is now: its inode, size, mtime and ctime
 * (adf_ident.h).  So the tool decides "up to date" by the mark, and
 *   - stats F before reading it (once the filesystem's clock has moved
 *     past F's last change, so that any later change shows in F's ctime)
 *     and again once its siblings are in place; if F changed meanwhile
 *     they are discarded and F is done again;
 *   - compresses a sibling into a temporary file in the same directory
 *     (.NAME.adaptive-precompress-XXXXXX), gives it F's mode, group (and,
 *     as root, owner), F's atime and mtime, and the mark, syncs it and
 *     renames it over S: a server never sees a half-written one;
 *   - decodes a sibling that is unmarked (another tool wrote it) or marked
 *     for another version of F (F was copied, chmod'ed), and when it holds
 *     exactly F's bytes marks it instead of recompressing ("refreshed");
 *   - does not keep a sibling that would not be smaller.
 * -d removes a sibling whose file is gone only when its mark shows the
 * tool wrote it.
 *
 * Run as root on a tree a user controls, the tool must not let that user
 * steer it: every operation is made relative to a directory descriptor
 * opened without following a symbolic link, so a component renamed or
 * swapped for a link meanwhile moves nothing elsewhere, and a directory
 * owned by another user is done by a child that has become that user
 * (as_owner()).
 *
 * --train-dictionary OUT (zstd builds) walks the same way and selects the
 * same files, but only reads them: the heads of a sample of them train a
 * zstd dictionary (ZDICT_trainFromBuffer), written to OUT.
 */
#include "config.h"
#include "adf_codec.h"
#include "adf_decode.h"
#include "adf_digest.h"
#include "adf_ident.h"
#include "adf_parse.h"

#include <apr_general.h>
#include <apr_strings.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#ifdef ADF_HAVE_ZSTD
#include <zdict.h>
#endif

#ifndef ENOTSUP
#define ENOTSUP EOPNOTSUPP
#endif

/* No type httpd processes before sending (shtml: mod_include; php, cgi,
 * var, asis...): its sibling would publish the source.  See the man
 * page. */
static const char *const default_exts =
    "html,htm,xhtml,css,js,mjs,json,map,xml,rss,atom,svg,txt,csv,md,"
    "wasm,ttf,otf,eot,ico,webmanifest";

/* Temporary files: ".NAME" TMP_TAG "XXXXXX" (or, when that would be too
 * long a name, TMP_TAG "XXXXXX" alone, its dot leading). */
#define TMP_TAG ".adaptive-precompress-"
#define TMP_TAG_LEN (sizeof(TMP_TAG) - 1)
#define TMP_LEN (TMP_TAG_LEN + 6)
#define NAME_MAX_BYTES 255

/* Waiting for the filesystem's clock: 10 ms a step, 5 s at least before
 * giving up.  A whole-second ctime is settled only 2 s after it (it may
 * be FAT's 2 s grain, adf_ident_settled()), up to 3 s after the change. */
#define TICK_NSEC 10000000L
#define MAX_TICKS 500

/* Temporary names tried before giving up (as mkstemp does). */
#define TEMP_TRIES 100

#define ATTEMPTS 3

/* Long options without a short one. */
enum { OPT_TRAIN = 256, OPT_DICT_SIZE };

static struct {
    int dry_run, quiet, delete_orphans, tty;
    long min_length;
    char **exts;
    int nexts;
    adf_coding_e codings[ADF_MAX_PREFS];
    int ncodings;
    const char *train_out;      /* --train-dictionary: OUT, else NULL */
    apr_off_t dict_size;
} opt;

typedef struct {
    long files, written, refreshed, uptodate, notsmaller, removed, errors;
    long kept, nogroup, unmarked;
    long long in[ADF_NCODINGS], out[ADF_NCODINGS];
    int progress_shown, warned_group, warned_xattr;
} sum_t;

static sum_t sum;

static apr_pool_t *pool;

/* ---- output ----------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at p for a printable character
 * (U+00A0 and above), or 0: C1 controls and broken bytes get escaped. */
static int utf8_printable(const unsigned char *p)
{
    unsigned cp;
    int n, i;

    if (p[0] >= 0xc2 && p[0] <= 0xdf) {
        n = 2;
        cp = p[0] & 0x1f;
    }
    else if (p[0] >= 0xe0 && p[0] <= 0xef) {
        n = 3;
        cp = p[0] & 0x0f;
    }
    else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        n = 4;
        cp = p[0] & 0x07;
    }
    else {
        return 0;
    }
    for (i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) {
            return 0;
        }
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    if (cp < 0xa0 || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000)
        || (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) {
        return 0;
    }
    return n;
}

/* A name as printed: backslash as \\, control characters (C0, DEL, C1)
 * and bytes that are not UTF-8 as \xNN, so that no file name can drive
 * the terminal or forge a line of output.  Two buffers in turn: at most
 * two names per message. */
static const char *esc(const char *name)
{
    static char bufs[2][16384];
    static int which;
    char *b = bufs[which ^= 1], *o = b;
    char *end = b + sizeof(bufs[0]) - 8;
    const unsigned char *p = (const unsigned char *)name;
    int n;

    while (*p && o < end) {
        if (*p == '\\') {
            *o++ = '\\';
            *o++ = '\\';
            p++;
        }
        else if (*p >= 0x20 && *p < 0x7f) {
            *o++ = (char)*p++;
        }
        else if ((n = utf8_printable(p)) > 0) {
            memcpy(o, p, (size_t)n);
            o += n;
            p += n;
        }
        else {
            o += sprintf(o, "\\x%02x", *p++);
        }
    }
    strcpy(o, *p ? "..." : "");
    return b;
}

static void clear_progress(void)
{
    if (sum.progress_shown) {
        fputs("\r\033[K", stderr);
        sum.progress_shown = 0;
    }
}

static void progress(const char *path)
{
    if (opt.tty && !opt.quiet) {
        fprintf(stderr, "\r\033[K[%ld] %.70s", sum.files, esc(path));
        sum.progress_shown = 1;
    }
}

/* "adaptive-precompress: NAME: message", counted as an error. */
static void error(const char *name, const char *fmt, ...)
{
    va_list ap;

    clear_progress();
    fflush(stdout);
    fprintf(stderr, "adaptive-precompress: %s: ", esc(name));
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    sum.errors++;
}

static void say(const char *fmt, ...)
{
    va_list ap;

    clear_progress();
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

/* ---- names ------------------------------------------------------------ */

static int has_ext(const char *name, const char *ext)
{
    size_t n = strlen(name), e = strlen(ext);
    return n > e && !strcmp(name + n - e, ext);
}

static int compressible(const char *name)
{
    const char *dot = strrchr(name, '.');
    int i;

    if (!dot || dot == name) {
        return 0;
    }
    for (i = 0; i < opt.nexts; i++) {
        if (!strcasecmp(dot + 1, opt.exts[i])) {
            return 1;
        }
    }
    return 0;
}

/* One of our temporary files (leading dot, TMP_TAG, six mkstemp
 * characters at the end)?  User files are never taken for one unless
 * named that way on purpose. */
static int our_temp(const char *base)
{
    size_t n = strlen(base), i;

    if (n < TMP_LEN || base[0] != '.'
        || memcmp(base + n - TMP_LEN, TMP_TAG, TMP_TAG_LEN)) {
        return 0;
    }
    for (i = n - 6; i < n; i++) {
        char ch = base[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z')
              || (ch >= '0' && ch <= '9'))) {
            return 0;
        }
    }
    return 1;
}

/* Create a temporary file for name in the directory open on dir, as
 * mkstemp does but there: O_EXCL and O_NOFOLLOW, so that nothing already
 * under the random name, a symbolic link least of all, is opened instead.
 * Its descriptor, and its name in *tmp; -1 and errno. */
static int create_temp(apr_pool_t *p, int dir, const char *name, char **tmp)
{
    static const char chars[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    char *t = strlen(name) + 1 + TMP_LEN > NAME_MAX_BYTES
              ? apr_pstrcat(p, TMP_TAG, "XXXXXX", NULL)
              : apr_pstrcat(p, ".", name, TMP_TAG, "XXXXXX", NULL);
    char *x = t + strlen(t) - 6;
    unsigned char r[6];
    int fd, i, n;

    for (n = 0; n < TEMP_TRIES; n++) {
        if (apr_generate_random_bytes(r, sizeof(r)) != APR_SUCCESS) {
            errno = EIO;
            return -1;
        }
        for (i = 0; i < 6; i++) {
            x[i] = chars[r[i] % (sizeof(chars) - 1)];
        }
        fd = openat(dir, t, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW
                    | O_CLOEXEC, 0600);
        if (fd >= 0) {
            *tmp = t;
            return fd;
        }
        if (errno != EEXIST) {
            return -1;
        }
    }
    return -1;
}

/* ---- identity and time ------------------------------------------------ */

static adf_ts_t ts_of(const struct timespec *t)
{
    adf_ts_t r;

    r.sec = t->tv_sec;
    r.nsec = t->tv_nsec;
    return r;
}

/* Is name in dir still the file version f? */
static int unchanged(int dir, const char *name, const adf_ident_t *f)
{
    struct stat st;
    adf_ident_t now;

    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return 0;
    }
    adf_ident_of_stat(&now, &st);
    return adf_ident_same(f, &now);
}

static void tick(void)
{
    struct timespec ts = { 0, TICK_NSEC };

    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Wait until F (name in dir, open on in) is settled by the shared rule
 * (adf_ident_settled()), the filesystem's clock being a probe file's
 * change time, and stat F: any change to F after that stat will show in
 * its ctime, even within the same clock tick as an earlier one.  Reports
 * its own errors. */
static int settle(apr_pool_t *p, int dir, const char *name, const char *path,
                  int in, struct stat *st)
{
    char *probe;
    struct stat pst;
    adf_ident_t f;
    adf_ts_t now;
    int fd, n, rc = -1;

    if ((fd = create_temp(p, dir, name, &probe)) < 0) {
        error(path, "cannot write in its directory: %s", strerror(errno));
        return -1;
    }
    for (n = 0; ; n++) {
        if ((n && futimens(fd, NULL) != 0) || fstat(fd, &pst) != 0) {
            error(path, "cannot read its filesystem's clock (a file's "
                  "change time in its directory): %s", strerror(errno));
            break;
        }
        if (fstat(in, st) != 0) {
            error(path, "cannot stat: %s", strerror(errno));
            break;
        }
        adf_ident_of_stat(&f, st);
        now = ts_of(&pst.st_ctim);
        if (adf_ident_settled(&f, &now)) {
            rc = 0;
            break;
        }
        if (n == MAX_TICKS) {
            error(path, "its inode change time is ahead of its filesystem's "
                  "clock; try again later");
            break;
        }
        tick();
    }
    close(fd);
    unlinkat(dir, probe, 0);
    return rc;
}

/* ---- siblings --------------------------------------------------------- */

typedef enum {
    SIB_FRESH,          /* its mark names F as it is: nothing to do */
    SIB_CHECK,          /* unmarked, or marked for another F: decode */
    SIB_REFRESH,        /* decoded to exactly F: mark it */
    SIB_WRITE,          /* missing, stale or not F's bytes: compress */
    SIB_FAILED          /* an error was reported */
} sib_e;

typedef enum {
    OUT_NONE, OUT_WROTE, OUT_REFRESHED, OUT_NOTSMALLER
} outcome_e;

typedef struct {
    adf_coding_e c;
    int dir;            /* F's directory: every name below is in it */
    const char *name;   /* the sibling's */
    const char *sib;    /* its path, for messages */
    char *tmp;
    sib_e state;
    outcome_e outcome;
    int fd;             /* the temporary file, or the sibling refreshed */
    adf_stream_t *s;
    apr_status_t rv;
    int nogroup;        /* written without F's group */
    int unmarked;       /* written without the marker */
    adf_digest_t dg;    /* of the sibling's bytes, as written or read */
    unsigned char digest[ADF_DIGEST_LEN];
} job_t;

/* Open name in dir to read it, following no link (nor blocking on a
 * FIFO), and stat it: its descriptor when it is a regular file, else -1.
 */
static int open_regular(int dir, const char *name, struct stat *st)
{
    int fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK
                    | O_CLOEXEC);

    if (fd >= 0 && (fstat(fd, st) != 0 || !S_ISREG(st->st_mode))) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The mark on the file open on fd, parsed into m: 0, or -1. */
static int read_mark(int fd, adf_mark_t *m)
{
    char v[ADF_MARK_MAX];
    ssize_t n = fgetxattr(fd, ADF_MARK_XATTR, v, sizeof(v));

    return n >= 0 ? adf_mark_parse(v, (apr_size_t)n, m) : -1;
}

/* Are the bytes on fd those whose SHA-256 is want? */
static int digest_is(int fd, const unsigned char *want)
{
    unsigned char buf[65536], got[ADF_DIGEST_LEN];
    adf_digest_t dg;
    ssize_t n;

    if (adf_digest_init(&dg) != 0) {
        return 0;
    }
    while ((n = read(fd, buf, sizeof(buf))) != 0) {
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            adf_digest_abandon(&dg);
            return 0;
        }
        adf_digest_update(&dg, buf, (size_t)n);
    }
    return adf_digest_final(&dg, got) == 0
           && !memcmp(got, want, ADF_DIGEST_LEN);
}

/* As the module reads a mark (adf_ident.h), it must name F as it is, on
 * a sibling with F's mtime (bytes written over in place since have
 * another) and, which the module cannot check per request, with the
 * bytes whose digest it records (a rewrite that copies F's mtime back,
 * as brotli's command does); a mark without the sibling's digest (an
 * earlier release's) is renewed.  Else the sibling's bytes decide
 * (SIB_CHECK): it is unmarked (another tool wrote it) or marked for
 * another version of F (copied, chmod'ed, rewritten).  Only our own
 * siblings are decoded and marked: never, as root, bytes another user
 * could have written. */
static sib_e sibling_state(const job_t *j, const adf_ident_t *f)
{
    struct stat sst;
    adf_mark_t m;
    sib_e state;
    int fd = open_regular(j->dir, j->name, &sst);

    if (fd < 0) {
        return SIB_WRITE;   /* (a symlink or a directory: as before) */
    }
    if (!read_mark(fd, &m) && m.has_digest && adf_mark_matches(f, &m, 0)
        && sst.st_mtim.tv_sec == f->mtime.sec
        && sst.st_mtim.tv_nsec == f->mtime.nsec
        && digest_is(fd, m.digest)) {
        state = SIB_FRESH;
    }
    else {
        state = sst.st_uid == geteuid() ? SIB_CHECK : SIB_WRITE;
    }
    close(fd);
    return state;
}

/* Compare n decoded bytes with F's bytes at *off.  1 same, 0 not, -1
 * when F could not be read (errno). */
static int same_bytes(int in, apr_off_t *off, apr_off_t size,
                      const unsigned char *data, size_t n)
{
    unsigned char buf[65536];

    while (n) {
        size_t want = n < sizeof(buf) ? n : sizeof(buf);
        ssize_t got;

        if (*off + (apr_off_t)want > size) {
            return 0;
        }
        got = pread(in, buf, want, *off);
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        if (got == 0 || memcmp(buf, data, (size_t)got)) {
            return 0;
        }
        *off += got;
        data += got;
        n -= (size_t)got;
    }
    return 1;
}

typedef struct {
    int in;             /* F */
    apr_off_t off, size;
    int r;              /* what same_bytes said when it stopped */
} compare_t;

static int compare(void *baton, const unsigned char *data, size_t len)
{
    compare_t *c = baton;

    c->r = same_bytes(c->in, &c->off, c->size, data, len);
    return c->r != 1;
}

/* Does the sibling open on sfd decode to exactly F's size bytes (in)?
 * 1 yes, 0 no (broken, truncated, trailing data, other bytes), -1 when
 * F could not be read (errno).  The sibling's bytes go through dg. */
static int holds_file(adf_coding_e c, int sfd, int in, apr_off_t size,
                      adf_digest_t *dg)
{
    adf_decoder_t *d = adf_decoder_create(c);
    compare_t cmp = { in, 0, size, 1 };
    unsigned char ib[65536];
    ssize_t n;
    size_t used;
    int r = 0;

    if (!d) {
        return 0;
    }
    while (r == 0 && (n = read(sfd, ib, sizeof(ib))) > 0) {
        adf_digest_update(dg, ib, (size_t)n);
        r = adf_decoder_feed(d, ib, (size_t)n, &used, compare, &cmp);
        if (r == 1 && used != (size_t)n) {
            r = -1;         /* data after the end of the stream */
        }
    }
    adf_decoder_destroy(d);
    if (cmp.r < 0) {
        return -1;
    }
    /* The whole of F, and nothing after the end of the stream. */
    return r == 1 && cmp.off == size && read(sfd, ib, 1) == 0;
}

/* SIB_CHECK: open the sibling and decode it.  Keeps it open in j->fd
 * when it holds F (SIB_REFRESH), else SIB_WRITE.  -1 when F could not be
 * read (reported). */
static int check_sibling(job_t *j, const char *path, int in,
                         const struct stat *st)
{
    struct stat sst;
    int r;

    j->state = SIB_WRITE;
    if ((j->fd = open_regular(j->dir, j->name, &sst)) < 0) {
        return 0;
    }
    r = !adf_digest_init(&j->dg)
        ? holds_file(j->c, j->fd, in, st->st_size, &j->dg) : 0;
    if (r < 0) {
        error(path, "cannot read: %s", strerror(errno));
    }
    else if (r > 0 && !adf_digest_final(&j->dg, j->digest)) {
        j->state = SIB_REFRESH;
        return 0;
    }
    adf_digest_abandon(&j->dg);
    close(j->fd);
    j->fd = -1;
    return r < 0 ? -1 : 0;
}

static apr_status_t to_fd(void *baton, const char *data, apr_size_t len)
{
    job_t *j = baton;

    adf_digest_update(&j->dg, data, len);
    while (len) {
        ssize_t n = write(j->fd, data, len);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return APR_FROM_OS_ERROR(errno);
        }
        data += n;
        len -= (size_t)n;
    }
    return APR_SUCCESS;
}

static void drop_temp(job_t *j)
{
    adf_digest_abandon(&j->dg);
    if (j->fd >= 0) {
        close(j->fd);
        j->fd = -1;
    }
    if (j->tmp) {
        unlinkat(j->dir, j->tmp, 0);
        j->tmp = NULL;
    }
}

/* Compress F once into a temporary file per SIB_WRITE job.  -1 when F
 * could not be read (reported once; every temporary dropped). */
static int compress_file(apr_pool_t *p, const char *path, int in,
                    const struct stat *st, job_t *jobs, int njobs)
{
    char buf[65536], err[256];
    adf_stream_opts_t o = { NULL };
    apr_off_t off = 0;
    ssize_t n;
    int i, active = 0;

    for (i = 0; i < njobs; i++) {
        job_t *j = &jobs[i];

        if (j->state != SIB_WRITE) {
            continue;
        }
        if ((j->fd = create_temp(p, j->dir, j->name, &j->tmp)) < 0) {
            error(j->sib, "cannot create a temporary file beside it: %s",
                  strerror(errno));
            j->state = SIB_FAILED;
            continue;
        }
        o.coding = adf_coding(j->c);
        o.level = o.coding->strongest;
        o.size_hint = st->st_size;
        o.bufsize = 65536;
        j->rv = adf_digest_init(&j->dg) ? APR_ENOMEM
                : adf_stream_open(&j->s, p, &o, to_fd, j);
        active++;
    }
    while (active) {
        n = pread(in, buf, sizeof(buf), off);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            error(path, "cannot read: %s", strerror(errno));
            for (i = 0; i < njobs; i++) {
                if (jobs[i].state == SIB_WRITE) {
                    drop_temp(&jobs[i]);
                    jobs[i].state = SIB_FAILED;
                }
            }
            return -1;
        }
        for (i = 0; i < njobs; i++) {
            job_t *j = &jobs[i];
            if (j->state == SIB_WRITE && j->rv == APR_SUCCESS) {
                j->rv = adf_stream_write(j->s, n ? buf : NULL,
                                         (apr_size_t)n,
                                         n ? ADF_OP_WRITE : ADF_OP_FINISH);
            }
        }
        if (n == 0) {
            break;
        }
        off += n;
    }
    for (i = 0; i < njobs; i++) {
        job_t *j = &jobs[i];
        if (j->state == SIB_WRITE && j->rv != APR_SUCCESS) {
            error(j->sib, "%s", apr_strerror(j->rv, err, sizeof(err)));
            drop_temp(j);
            j->state = SIB_FAILED;
        }
    }
    return 0;
}

/* Give the temporary file F's group (and, as root, F's owner): a 0640
 * root:www-data file must not get siblings httpd cannot read.  When the
 * group cannot be kept, the sibling gets no group permissions at all (it
 * must not grant F's bytes to another group), and the run says so once.
 * Returns the mode to give it. */
static mode_t keep_owner(job_t *j, const struct stat *st)
{
    mode_t mode = st->st_mode & 0777;
    struct stat tst;
    struct group *g;
    int e;

    if (geteuid() == 0 && fchown(j->fd, st->st_uid, st->st_gid) == 0) {
        return mode;
    }
    if (fchown(j->fd, (uid_t)-1, st->st_gid) == 0) {
        return mode;
    }
    e = errno;
    if (fstat(j->fd, &tst) == 0 && tst.st_gid == st->st_gid) {
        return mode;
    }
    j->nogroup = 1;
    if (!sum.warned_group++) {
        g = getgrgid(st->st_gid);
        clear_progress();
        fflush(stdout);
        fprintf(stderr, "adaptive-precompress: warning: %s: cannot give it "
                "the group of its file, %s (%s); siblings that cannot keep "
                "their file's group are written without group permissions, "
                "and a server that reads through that group cannot use them "
                "(run as root or as a member of the group)\n", esc(j->sib),
                g ? g->gr_name : apr_ltoa(pool, (long)st->st_gid),
                strerror(e));
    }
    return mode & 0707;
}

/* Mark the temporary file as written by this tool, with F's identity.
 * Where the filesystem has no user extended attributes, say once that
 * these siblings will be neither served nor removed.  -1 and errno. */
static int mark(job_t *j, const struct stat *st)
{
    char v[ADF_MARK_MAX];
    adf_ident_t f;
    int n;

    adf_ident_of_stat(&f, st);
    n = adf_mark_format(v, &f, j->digest);
    if (fsetxattr(j->fd, ADF_MARK_XATTR, v, (size_t)n, 0) == 0) {
        return 0;
    }
    if (errno != ENOTSUP) {
        return -1;
    }
    j->unmarked = 1;
    if (!sum.warned_xattr++) {
        clear_progress();
        fflush(stdout);
        fprintf(stderr, "adaptive-precompress: warning: %s: its filesystem "
                "has no user extended attributes, so siblings written there "
                "carry no " ADF_MARK_XATTR " marker: the module will not "
                "serve them and -d will not remove them\n", esc(j->sib));
    }
    return 0;
}

/* Put a compressed temporary file in place as the sibling: marked, F's
 * mode, group and times, its inode changed after F's, synced, renamed. */
static void install(job_t *j, const struct stat *st)
{
    struct timespec times[2];
    const char *what;

    if (adf_stream_bytes_out(j->s) >= adf_stream_bytes_in(j->s)) {
        struct stat sst;

        /* Not smaller: no sibling, and not the stale one from before. */
        drop_temp(j);
        if (fstatat(j->dir, j->name, &sst, AT_SYMLINK_NOFOLLOW) == 0
            && S_ISREG(sst.st_mode)) {
            unlinkat(j->dir, j->name, 0);
        }
        j->outcome = OUT_NOTSMALLER;
        return;
    }
    times[0] = st->st_atim;
    times[1] = st->st_mtim;
    if (adf_digest_final(&j->dg, j->digest) != 0) {
        errno = ENOMEM;
        what = "cannot compute its SHA-256";
    }
    else if (mark(j, st) != 0) {
        what = "cannot set the " ADF_MARK_XATTR " marker";
    }
    else if (fchmod(j->fd, keep_owner(j, st)) != 0) {
        what = "cannot set its mode";
    }
    else if (futimens(j->fd, times) != 0) {
        what = "cannot set its times";
    }
    else if (fsync(j->fd) != 0) {
        what = "cannot write";
    }
    else if (renameat(j->dir, j->tmp, j->dir, j->name) != 0) {
        what = "cannot rename the temporary file to it";
    }
    else {
        j->tmp = NULL;      /* the sibling now; j->fd stays open */
        j->outcome = OUT_WROTE;
        return;
    }
    error(j->sib, "%s: %s", what, strerror(errno));
    drop_temp(j);
    j->state = SIB_FAILED;
}

/* A sibling that holds F's bytes: mark it as F's, with F's mtime. */
static void refresh(job_t *j, const struct stat *st)
{
    struct timespec times[2];

    times[0].tv_sec = 0;
    times[0].tv_nsec = UTIME_OMIT;
    times[1] = st->st_mtim;
    if (mark(j, st) != 0 || futimens(j->fd, times) != 0) {
        error(j->sib, "cannot refresh: %s", strerror(errno));
        close(j->fd);
        j->fd = -1;
        j->state = SIB_FAILED;
        return;
    }
    j->outcome = OUT_REFRESHED;
}

/* F changed while its siblings were being put in place: none of them
 * may stand for it.  Ours go; one only marked loses its mark. */
static void undo(job_t *j)
{
    struct stat a, b;

    if (j->outcome == OUT_WROTE && fstat(j->fd, &a) == 0
        && fstatat(j->dir, j->name, &b, AT_SYMLINK_NOFOLLOW) == 0
        && a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
        unlinkat(j->dir, j->name, 0);
    }
    else if (j->outcome == OUT_REFRESHED) {
        fremovexattr(j->fd, ADF_MARK_XATTR);
    }
}

enum { DONE, FAILED, CHANGED };

/* One go at F's siblings: F is name in dir, path in messages. */
static int attempt(apr_pool_t *p, int dir, const char *name, const char *path,
                   job_t *jobs, int njobs)
{
    struct statfs fs;
    struct stat st;
    adf_ident_t f;
    int in, i, writes = 0, rc = DONE;

    for (i = 0; i < njobs; i++) {
        jobs[i].tmp = NULL;
        jobs[i].fd = -1;
        jobs[i].s = NULL;
        jobs[i].rv = APR_SUCCESS;
        jobs[i].outcome = OUT_NONE;
        jobs[i].nogroup = jobs[i].unmarked = 0;
        jobs[i].dg.md = NULL;
    }
    if ((in = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK
                     | O_CLOEXEC)) < 0) {
        if (errno == ENOENT || errno == ELOOP) {
            return DONE;        /* gone, or now a symlink, since the walk */
        }
        error(path, "cannot read: %s", strerror(errno));
        return FAILED;
    }
    if (fstat(in, &st) != 0 || fstatfs(in, &fs) != 0) {
        error(path, "cannot stat: %s", strerror(errno));
        close(in);
        return FAILED;
    }
    if (S_ISREG(st.st_mode) && !adf_fs_tracks_changes((long)fs.f_type)) {
        /* (the module would take a later version for this one) */
        error(path, "its filesystem does not move a file's change time at "
              "every change (an image or FAT): a sibling cannot be shown "
              "to hold its current version");
        close(in);
        return FAILED;
    }
    if (!S_ISREG(st.st_mode)
        || (!opt.dry_run && settle(p, dir, name, path, in, &st) != 0)) {
        close(in);
        return S_ISREG(st.st_mode) ? FAILED : DONE;
    }
    adf_ident_of_stat(&f, &st);
    for (i = 0; i < njobs; i++) {
        jobs[i].state = sibling_state(&jobs[i], &f);
        if (jobs[i].state == SIB_CHECK
            && check_sibling(&jobs[i], path, in, &st) != 0) {
            rc = FAILED;
            goto out;
        }
        writes += jobs[i].state == SIB_WRITE;
    }
    if (opt.dry_run) {
        for (i = 0; i < njobs; i++) {
            if (jobs[i].state == SIB_WRITE) {
                say("would write %s\n", esc(jobs[i].sib));
                sum.written++;
            }
            else if (jobs[i].state == SIB_REFRESH) {
                say("would refresh %s\n", esc(jobs[i].sib));
                sum.refreshed++;
            }
            else {
                sum.uptodate++;
            }
        }
        goto out;
    }
    if (writes && compress_file(p, path, in, &st, jobs, njobs) != 0) {
        rc = FAILED;
        goto out;
    }
    /* What was read must be F as stat'ed: else start again. */
    if (!unchanged(dir, name, &f)) {
        rc = CHANGED;
        goto out;
    }
    for (i = 0; i < njobs; i++) {
        if (jobs[i].state == SIB_WRITE) {
            install(&jobs[i], &st);
        }
        else if (jobs[i].state == SIB_REFRESH) {
            refresh(&jobs[i], &st);
        }
    }
    /* And still F now that the siblings are marked: any later change of F
     * gives it another ctime (settle() saw to that), which the marks do
     * not name. */
    if (!unchanged(dir, name, &f)) {
        for (i = 0; i < njobs; i++) {
            undo(&jobs[i]);
        }
        rc = CHANGED;
        goto out;
    }
    for (i = 0; i < njobs; i++) {
        job_t *j = &jobs[i];

        switch (j->outcome) {
        case OUT_WROTE:
            sum.written++;
            sum.nogroup += j->nogroup;
            sum.unmarked += j->unmarked;
            sum.in[j->c] += adf_stream_bytes_in(j->s);
            sum.out[j->c] += adf_stream_bytes_out(j->s);
            break;
        case OUT_REFRESHED:
            sum.refreshed++;
            break;
        case OUT_NOTSMALLER:
            sum.notsmaller++;
            break;
        default:
            sum.uptodate += j->state == SIB_FRESH;
            break;
        }
    }
out:
    for (i = 0; i < njobs; i++) {
        drop_temp(&jobs[i]);
        if (jobs[i].s) {
            adf_stream_close(jobs[i].s);
        }
    }
    close(in);
    return rc;
}

static void process_file(int dir, const char *name, const char *path,
                         const struct stat *st)
{
    job_t jobs[ADF_MAX_PREFS];
    adf_ident_t f;
    apr_pool_t *p;
    int i, todo = 0, n;

    apr_pool_create(&p, pool);
    adf_ident_of_stat(&f, st);
    for (i = 0; i < opt.ncodings; i++) {
        const char *ext = adf_coding(opt.codings[i])->ext;

        jobs[i].c = opt.codings[i];
        jobs[i].dir = dir;
        jobs[i].name = apr_pstrcat(p, name, ext, NULL);
        jobs[i].sib = apr_pstrcat(p, path, ext, NULL);
        todo += sibling_state(&jobs[i], &f) != SIB_FRESH;
    }
    if (!todo) {
        sum.uptodate += opt.ncodings;   /* F need not even be readable */
    }
    for (n = 1; todo; n++) {
        apr_pool_t *ap;
        int rc;

        apr_pool_create(&ap, p);
        rc = attempt(ap, dir, name, path, jobs, opt.ncodings);
        apr_pool_destroy(ap);
        if (rc != CHANGED) {
            break;
        }
        if (n == ATTEMPTS) {
            error(path, "changed while being compressed, %d times; its "
                  "siblings are left for the next run", ATTEMPTS);
            break;
        }
    }
    apr_pool_destroy(p);
}

/* A sibling (name in dir) whose file is gone: removed from dir when its
 * mark, read through a descriptor that follows no link, shows we wrote
 * it. */
static void check_orphan(int dir, const char *name, const char *path)
{
    char base[NAME_MAX_BYTES + 1];
    struct stat st;
    adf_mark_t m;
    int c, fd, ours;

    for (c = ADF_IDENTITY + 1; c < ADF_NCODINGS; c++) {
        const adf_coding_t *d = adf_coding((adf_coding_e)c);
        size_t len = strlen(name), e = d && d->ext ? strlen(d->ext) : 0;

        if (!e || !has_ext(name, d->ext)) {
            continue;
        }
        memcpy(base, name, len - e);
        base[len - e] = '\0';
        if (!compressible(base)
            || fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) == 0
            || errno != ENOENT) {
            continue;
        }
        fd = open_regular(dir, name, &st);
        ours = fd >= 0 && !read_mark(fd, &m);
        if (fd >= 0) {
            close(fd);
        }
        if (!ours) {
            sum.kept++;         /* not shown to be ours: never removed */
            continue;
        }
        if (opt.dry_run) {
            say("would remove %s\n", esc(path));
        }
        else if (unlinkat(dir, name, 0) != 0) {
            error(path, "cannot remove: %s", strerror(errno));
            continue;
        }
        sum.removed++;
    }
}

/* ---- the sample a dictionary is trained on ----------------------------- */

/* zstd's own default dictionary size (110 KB); below 256 bytes one holds
 * next to nothing, and every client would have to fetch one above 4 MB. */
#define DICT_DEFAULT 112640
#define DICT_MIN 256
#define DICT_MAX (4 << 20)
/* The sample: 100 times the dictionary's size in all (what zdict.h
 * advises), each file's first 128 KB at most, as zstd --train takes them:
 * a dictionary serves the start of a response, where it has no earlier
 * bytes of its own to refer to. */
#define SAMPLE_MULT 100
#define SAMPLE_HEAD (128 << 10)
/* A path under DIR sent by a child (as_owner()): a sanity bound. */
#define REL_MAX (1 << 20)

typedef struct {
    apr_uint64_t h;     /* its path's hash: whether it is in the sample */
    int arg;            /* which DIR it is under */
    char *rel;          /* its path under that DIR */
    size_t len;
    unsigned char *data;    /* its first len bytes */
    int inherited;      /* in a child: the parent's, not to be sent back */
} sample_t;

/* The sample holds the files whose path hash is below limit; whenever it
 * outgrows max, limit drops by an eighth and the files above it go.  So
 * which files end in it depends on the tree alone, not on the order of
 * the walk nor on the processes it is split into (as_owner()): those
 * under the first limit of that sequence at which all the tree's fit.
 * A hash, rather than the first files by name, spreads the sample over
 * the whole tree. */
static struct {
    sample_t *v;
    size_t n, alloc;
    size_t bytes, max, head;
    apr_uint64_t limit;
    unsigned char *buf;     /* head bytes, to read a file into */
    int arg;                /* the DIR being walked */
    size_t rootlen;         /* its path's length, stripped from paths */
} train;

static void sample_free(sample_t *s)
{
    free(s->rel);
    free(s->data);
    s->rel = NULL;
    s->data = NULL;
}

/* Drop the samples at or above the limit. */
static void train_evict(void)
{
    size_t i, k = 0;

    train.bytes = 0;
    for (i = 0; i < train.n; i++) {
        if (train.v[i].h >= train.limit) {
            sample_free(&train.v[i]);
            continue;
        }
        train.bytes += train.v[i].len;
        train.v[k++] = train.v[i];
    }
    train.n = k;
}

/* Take s (and its memory) into the sample, unless it is above the limit;
 * lower the limit while the sample is too large.  0, or -1 out of memory.
 */
static int train_add(sample_t *s)
{
    if (s->h >= train.limit) {
        sample_free(s);
        return 0;
    }
    if (train.n == train.alloc) {
        size_t na = train.alloc ? 2 * train.alloc : 256;
        sample_t *v = realloc(train.v, na * sizeof(*v));

        if (!v) {
            sample_free(s);
            return -1;
        }
        train.v = v;
        train.alloc = na;
    }
    train.v[train.n++] = *s;
    train.bytes += s->len;
    while (train.bytes > train.max) {
        train.limit -= train.limit / 8 + 1;
        train_evict();
    }
    return 0;
}

/* The first 8 bytes of the SHA-256 of a path under DIR: the same sample
 * wherever the tree is.  0, or -1. */
static int path_hash(const char *rel, apr_uint64_t *h)
{
    unsigned char d[ADF_DIGEST_LEN];
    adf_digest_t dg;
    int i;

    if (adf_digest_init(&dg) != 0) {
        return -1;
    }
    adf_digest_update(&dg, rel, strlen(rel));
    if (adf_digest_final(&dg, d) != 0) {
        return -1;
    }
    for (*h = 0, i = 0; i < 8; i++) {
        *h = *h << 8 | d[i];
    }
    return 0;
}

/* F (name in dir, path in messages), a file the walk selected: its head
 * into the sample when its path's hash is under the limit.  Opened as
 * attempt() opens F: a link or FIFO swapped in since is not followed. */
static void sample_file(int dir, const char *name, const char *path)
{
    const char *rel = path + train.rootlen;
    struct stat st;
    sample_t s;
    ssize_t n;
    int fd;

    while (*rel == '/') {
        rel++;
    }
    memset(&s, 0, sizeof(s));
    if (path_hash(rel, &s.h) != 0) {
        error(path, "cannot compute the SHA-256 of its name");
        return;
    }
    if (s.h >= train.limit) {
        return;
    }
    if ((fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK
                     | O_CLOEXEC)) < 0) {
        if (errno != ENOENT && errno != ELOOP) {
            error(path, "cannot read: %s", strerror(errno));
        }   /* (else gone, or now a symlink, since the walk) */
        return;
    }
    if (fstat(fd, &st) != 0) {
        error(path, "cannot stat: %s", strerror(errno));
        close(fd);
        return;
    }
    while (S_ISREG(st.st_mode) && s.len < train.head) {
        n = read(fd, train.buf + s.len, train.head - s.len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            error(path, "cannot read: %s", strerror(errno));
            close(fd);
            return;
        }
        if (n == 0) {
            break;
        }
        s.len += (size_t)n;
    }
    close(fd);
    if (s.len == 0) {
        return;     /* not a regular file, or emptied, since the walk */
    }
    s.arg = train.arg;
    s.rel = strdup(rel);
    s.data = malloc(s.len);
    if (!s.rel || !s.data) {
        sample_free(&s);
        error(path, "out of memory");
        return;
    }
    memcpy(s.data, train.buf, s.len);
    if (train_add(&s) != 0) {
        error(path, "out of memory");
    }
}

/* ---- between a process working as a directory's owner and its parent -- */

static int write_full(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    ssize_t n;

    while (len) {
        if ((n = write(fd, p, len)) < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* 1 when len bytes were read, 0 at the end before any, -1 otherwise. */
static int read_full(int fd, void *buf, size_t len)
{
    char *p = buf;
    size_t got = 0;
    ssize_t n;

    while (got < len) {
        if ((n = read(fd, p + got, len - got)) < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        if (n == 0) {
            return got ? -1 : 0;
        }
        got += (size_t)n;
    }
    return 1;
}

/* In the child: what it adds to the sample it inherited is what it sends
 * back, with the limit it ends with. */
static void train_inherit(void)
{
    size_t i;

    for (i = 0; i < train.n; i++) {
        train.v[i].inherited = 1;
    }
}

static int train_send(int fd)
{
    size_t i, rl;

    if (write_full(fd, &train.limit, sizeof(train.limit)) != 0) {
        return -1;
    }
    for (i = 0; i < train.n; i++) {
        const sample_t *s = &train.v[i];

        if (s->inherited) {
            continue;
        }
        rl = strlen(s->rel);
        if (write_full(fd, &s->h, sizeof(s->h)) != 0
            || write_full(fd, &rl, sizeof(rl)) != 0
            || write_full(fd, &s->len, sizeof(s->len)) != 0
            || write_full(fd, s->rel, rl) != 0
            || write_full(fd, s->data, s->len) != 0) {
            return -1;
        }
    }
    return 0;
}

/* In the parent: the child's limit (never a higher one) and its samples.
 * 0, or -1. */
static int train_receive(int fd)
{
    apr_uint64_t limit;
    sample_t s;
    size_t rl;
    int r;

    if (read_full(fd, &limit, sizeof(limit)) != 1) {
        return -1;
    }
    if (limit < train.limit) {
        train.limit = limit;
        train_evict();
    }
    for (;;) {
        memset(&s, 0, sizeof(s));
        if ((r = read_full(fd, &s.h, sizeof(s.h))) == 0) {
            return 0;
        }
        if (r < 0 || read_full(fd, &rl, sizeof(rl)) != 1
            || read_full(fd, &s.len, sizeof(s.len)) != 1
            || rl > REL_MAX || s.len == 0 || s.len > train.head
            || !(s.rel = malloc(rl + 1)) || !(s.data = malloc(s.len))
            || read_full(fd, s.rel, rl) != 1
            || read_full(fd, s.data, s.len) != 1) {
            sample_free(&s);
            return -1;
        }
        s.rel[rl] = '\0';
        s.arg = train.arg;
        if (train_add(&s) != 0) {
            return -1;
        }
    }
}

static void visit(int dir, const char *name, const char *path,
                  const struct stat *st)
{
    if (our_temp(name)) {
        return;
    }
    if (adf_coding_by_ext(name, strlen(name))) {
        if (opt.delete_orphans) {
            check_orphan(dir, name, path);
        }
        return;
    }
    if (!compressible(name) || st->st_size < opt.min_length) {
        return;
    }
    sum.files++;
    progress(path);
    if (opt.train_out) {
        sample_file(dir, name, path);
    }
    else {
        process_file(dir, name, path, st);
    }
}

static void enter(int dir, const char *path);

/* The entries of the directory open on dir (path in messages), which it
 * closes: regular files by their name in dir; directories opened from
 * dir without following a link, so that a component renamed or swapped
 * for a link since it was opened moves no operation elsewhere.  Symbolic
 * links, FIFOs and the rest are skipped. */
static void walk(int dir, const char *path)
{
    DIR *d = fdopendir(dir);
    const char *sep = path[strlen(path) - 1] == '/' ? "" : "/";
    struct dirent *de;
    struct stat st;
    apr_pool_t *p;
    int sub;

    if (!d) {
        error(path, "cannot read the directory: %s", strerror(errno));
        close(dir);
        return;
    }
    apr_pool_create(&p, pool);
    for (errno = 0; (de = readdir(d)); errno = 0) {
        const char *name = de->d_name, *sp;

        if (!strcmp(name, ".") || !strcmp(name, "..")) {
            continue;
        }
        apr_pool_clear(p);
        sp = apr_pstrcat(p, path, sep, name, NULL);
        if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno != ENOENT) {
                error(sp, "cannot stat: %s", strerror(errno));
            }
        }
        else if (S_ISREG(st.st_mode)) {
            visit(dir, name, sp, &st);
        }
        else if (S_ISDIR(st.st_mode)) {
            sub = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW
                         | O_CLOEXEC);
            if (sub >= 0) {
                enter(sub, sp);
            }
            else if (errno != ENOENT && errno != ELOOP && errno != ENOTDIR) {
                error(sp, "cannot open the directory: %s", strerror(errno));
            }   /* (else gone, or no longer a directory, since listed) */
        }
    }
    if (errno) {
        error(path, "cannot read the directory: %s", strerror(errno));
    }
    apr_pool_destroy(p);
    closedir(d);
}

/* As root, the tree of a directory another user owns is done by a child
 * that has become that user for good (its uid, groups and primary group;
 * the directory's group for a uid without an account): there the tool
 * can do nothing the user could not, however they rename or swap what
 * they own, and never decodes their bytes as root.  The child's counts
 * (and, training a dictionary, the samples it read) come back through a
 * pipe: nothing the user cannot read reaches a dictionary; dir is closed.
 */
static void as_owner(int dir, const char *path, const struct stat *st)
{
    struct passwd *pw = getpwuid(st->st_uid);
    gid_t gid = pw ? pw->pw_gid : st->st_gid;
    sum_t child;
    pid_t pid;
    int p[2], e, got, ok;

    fflush(stdout);
    if (pipe2(p, O_CLOEXEC) != 0) {
        error(path, "cannot start a process as its owner: %s",
              strerror(errno));
        close(dir);
        return;
    }
    if ((pid = fork()) == 0) {
        close(p[0]);
        train_inherit();
        if ((pw ? initgroups(pw->pw_name, gid) : setgroups(0, NULL)) != 0
            || setgid(gid) != 0 || setuid(st->st_uid) != 0) {
            error(path, "cannot become its owner (uid %ld): %s",
                  (long)st->st_uid, strerror(errno));
            close(dir);
        }
        else {
            walk(dir, path);
        }
        fflush(stdout);
        _exit(write_full(p[1], &sum, sizeof(sum)) != 0
              || (opt.train_out && train_send(p[1]) != 0));
    }
    e = errno;
    close(dir);
    close(p[1]);
    if (pid < 0) {
        close(p[0]);
        error(path, "cannot start a process as its owner: %s", strerror(e));
        return;
    }
    got = read_full(p[0], &child, sizeof(child)) == 1;
    ok = got && (!opt.train_out || train_receive(p[0]) == 0);
    close(p[0]);
    waitpid(pid, NULL, 0);
    if (got) {
        sum = child;    /* ours, and what it added */
    }
    if (!ok) {
        error(path, "the process working as its owner failed");
    }
}

/* A directory opened from its parent (or from the command line). */
static void enter(int dir, const char *path)
{
    struct stat st;

    if (fstat(dir, &st) != 0) {
        error(path, "cannot stat the directory: %s", strerror(errno));
        close(dir);
    }
    else if (geteuid() == 0 && st.st_uid != 0) {
        as_owner(dir, path, &st);
    }
    else {
        walk(dir, path);
    }
}

/* ---- --train-dictionary ------------------------------------------------ */

#ifdef ADF_HAVE_ZSTD

/* OUT's directory, opened by the path given (the directories on the way
 * are the caller's choice; OUT's own name is never followed), and OUT's
 * name in it.  Opened before the walk, so that a wrong OUT costs none.
 * Its descriptor, or -1 reported. */
static int open_out_dir(const char *out, const char **base)
{
    const char *slash = strrchr(out, '/');
    const char *dir = !slash ? "."
                      : slash == out ? "/"
                      : apr_pstrndup(pool, out, (apr_size_t)(slash - out));
    int fd;

    *base = slash ? slash + 1 : out;
    if (!**base || !strcmp(*base, ".") || !strcmp(*base, "..")) {
        error(out, "not a file name");
        return -1;
    }
    if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        error(out, "cannot open its directory: %s", strerror(errno));
    }
    return fd;
}

/* The dictionary into a temporary file beside OUT (base in dir), mode
 * 0644, synced and renamed over OUT: a reader never sees half of it, and
 * a symbolic link at OUT is replaced, never followed.  0, or -1 reported.
 */
static int write_out(int dir, const char *base, const void *data, size_t len)
{
    const char *what = NULL;
    char *tmp;
    int fd, e = 0;

    if ((fd = create_temp(pool, dir, base, &tmp)) < 0) {
        error(opt.train_out, "cannot create a temporary file beside it: %s",
              strerror(errno));
        return -1;
    }
    if (write_full(fd, data, len) != 0 || fsync(fd) != 0) {
        what = "cannot write";
    }
    else if (fchmod(fd, 0644) != 0) {
        what = "cannot set its mode";
    }
    e = errno;
    if (close(fd) != 0 && !what) {
        what = "cannot write";
        e = errno;
    }
    if (!what && renameat(dir, tmp, dir, base) != 0) {
        what = "cannot rename the temporary file to it";
        e = errno;
    }
    if (what) {
        error(opt.train_out, "%s: %s", what, strerror(e));
        unlinkat(dir, tmp, 0);
        return -1;
    }
    fsync(dir);     /* the rename itself */
    return 0;
}

/* ZDICT's result depends on the order of the samples: by DIR, then by
 * path under it. */
static int by_path(const void *a, const void *b)
{
    const sample_t *x = a, *y = b;

    if (x->arg != y->arg) {
        return x->arg < y->arg ? -1 : 1;
    }
    return strcmp(x->rel, y->rel);
}

/* Train on the sample the walk gathered and write OUT (base in dir).
 * The exit status. */
static int train_dictionary(int dir, const char *base)
{
    unsigned char digest[ADF_DIGEST_LEN];
    char hex[ADF_DIGEST_HEX];
    size_t i, off = 0, len, files = train.n, bytes = train.bytes;
    unsigned char *all, *dict;
    size_t *sizes;
    adf_digest_t dg;
    int hashed = 0;

    if (sum.errors) {
        fprintf(stderr, "adaptive-precompress: %s: not written: %ld "
                "error%s while reading the files to sample\n",
                esc(opt.train_out), sum.errors, sum.errors == 1 ? "" : "s");
        return 1;
    }
    if (!files) {
        fprintf(stderr, "adaptive-precompress: %s: not written: no file to "
                "train on (none of at least %ld bytes whose extension -e "
                "lists under the DIRs)\n", esc(opt.train_out),
                opt.min_length);
        return 1;
    }
    qsort(train.v, files, sizeof(*train.v), by_path);
    all = malloc(bytes);
    sizes = malloc(files * sizeof(*sizes));
    dict = malloc((size_t)opt.dict_size);
    if (!all || !sizes || !dict) {
        fprintf(stderr, "adaptive-precompress: %s: not written: out of "
                "memory\n", esc(opt.train_out));
        free(all);
        free(sizes);
        free(dict);
        return 1;
    }
    /* Each sample freed once copied: the sample is held once. */
    for (i = 0; i < files; i++) {
        memcpy(all + off, train.v[i].data, train.v[i].len);
        sizes[i] = train.v[i].len;
        off += train.v[i].len;
        sample_free(&train.v[i]);
    }
    train.n = 0;
    /* (files fits: the sample is 400 MB at most) */
    len = ZDICT_trainFromBuffer(dict, (size_t)opt.dict_size, all, sizes,
                                (unsigned)files);
    free(all);
    free(sizes);
    if (ZDICT_isError(len)) {
        fprintf(stderr, "adaptive-precompress: %s: not written: zstd could "
                "not train a dictionary on %zu file%s (%zu bytes): %s\n",
                esc(opt.train_out), files, files == 1 ? "" : "s", bytes,
                ZDICT_getErrorName(len));
        free(dict);
        return 1;
    }
    if (adf_digest_init(&dg) == 0) {
        adf_digest_update(&dg, dict, len);
        hashed = adf_digest_final(&dg, digest) == 0;
    }
    if (!hashed) {
        fprintf(stderr, "adaptive-precompress: %s: not written: cannot "
                "compute its SHA-256\n", esc(opt.train_out));
        free(dict);
        return 1;
    }
    adf_digest_hex(hex, digest, ADF_DIGEST_LEN);
    if (!opt.dry_run && write_out(dir, base, dict, len) != 0) {
        free(dict);
        return 1;
    }
    free(dict);
    if (!opt.quiet) {
        printf("%s %s: %zu-byte zstd dictionary from %zu files (%zu bytes "
               "sampled), sha256 %s\n", opt.dry_run ? "would write" : "wrote",
               esc(opt.train_out), len, files, bytes, hex);
    }
    return 0;
}

#endif /* ADF_HAVE_ZSTD */

static void usage(FILE *f)
{
    fprintf(f,
        "usage: adaptive-precompress [options] DIR...\n"
#ifdef ADF_HAVE_ZSTD
        "       adaptive-precompress --train-dictionary OUT [options] DIR...\n"
#endif
        "Write .gz (gzip -9), .br (brotli -q 11) and .zst (zstd -19)\n"
        "siblings (each coding this build has) of the\n"
        "compressible files under each DIR, for\n"
        "AdaptiveDeflatePrecompressed.\n"
        "  -d, --delete-orphans  remove siblings this tool wrote whose file\n"
        "                        is gone\n"
        "                        (only those this tool wrote, by marker)\n"
        "  -e, --extensions LIST comma-separated extensions (default:\n"
        "                        %s)\n"
        "  -m, --min-length N    skip files shorter than N bytes (256)\n"
        "  -c, --codings LIST    e.g. gzip,br (default: every coding built in)\n"
        "  -n, --dry-run         say what would be done, write nothing\n"
        "  -q, --quiet           no progress, no summary\n"
#ifdef ADF_HAVE_ZSTD
        "  --train-dictionary OUT\n"
        "                        write no siblings: train a zstd dictionary\n"
        "                        on a sample of the same files, into OUT\n"
        "  --dictionary-size N   its size at most (110k; 256 to 4m)\n"
#endif
        "  -h, --help\n", default_exts);
}

static char **split(const char *list, int *n)
{
    char *copy = apr_pstrdup(pool, list), *tok, *save = NULL;
    char **v = apr_pcalloc(pool, (strlen(list) + 1) * sizeof(char *));

    *n = 0;
    for (tok = apr_strtok(copy, ",", &save); tok;
         tok = apr_strtok(NULL, ",", &save)) {
        v[(*n)++] = tok;
    }
    return v;
}

static int finish(int rc)
{
    apr_pool_destroy(pool);
    apr_terminate();
    return rc;
}

static void summary(void)
{
    int i;

    if (opt.dry_run) {
        printf("%ld files: would write %ld siblings, would refresh %ld, "
               "%ld up to date, would remove %ld orphans, %ld errors\n",
               sum.files, sum.written, sum.refreshed, sum.uptodate,
               sum.removed, sum.errors);
    }
    else {
        printf("%ld files: %ld siblings written, %ld refreshed, %ld up to "
               "date, %ld not smaller (none kept), %ld orphans removed, "
               "%ld errors\n", sum.files, sum.written, sum.refreshed,
               sum.uptodate, sum.notsmaller, sum.removed, sum.errors);
    }
    if (sum.kept) {
        printf("  %ld orphaned siblings kept: no marker shows this tool "
               "wrote them\n", sum.kept);
    }
    if (sum.nogroup) {
        printf("  %ld siblings without their file's group (no group "
               "permissions)\n", sum.nogroup);
    }
    if (sum.unmarked) {
        printf("  %ld siblings without the marker (-d cannot remove them)\n",
               sum.unmarked);
    }
    for (i = ADF_GZIP; i < ADF_NCODINGS; i++) {
        if (sum.in[i]) {
            printf("  %-4s %lld -> %lld bytes (%.1f%%)\n",
                   adf_coding_name((adf_coding_e)i), sum.in[i],
                   sum.out[i], 100.0 * sum.out[i] / sum.in[i]);
        }
    }
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "delete-orphans", no_argument, NULL, 'd' },
        { "extensions", required_argument, NULL, 'e' },
        { "min-length", required_argument, NULL, 'm' },
        { "codings", required_argument, NULL, 'c' },
        { "dry-run", no_argument, NULL, 'n' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { "train-dictionary", required_argument, NULL, OPT_TRAIN },
        { "dictionary-size", required_argument, NULL, OPT_DICT_SIZE },
        { NULL, 0, NULL, 0 }
    };
    const char *codings = NULL, *err;
    int ch, i, j, sized = 0;
    char *end;
#ifdef ADF_HAVE_ZSTD
    const char *base = NULL;
    int outdir = -1;
#endif

    apr_initialize();
    apr_pool_create(&pool, NULL);
    opt.min_length = 256;
    opt.dict_size = DICT_DEFAULT;
    opt.exts = split(default_exts, &opt.nexts);
    while ((ch = getopt_long(argc, argv, "de:m:c:nqh", longopts, NULL))
           != -1) {
        switch (ch) {
        case 'd': opt.delete_orphans = 1; break;
        case 'e': opt.exts = split(optarg, &opt.nexts); break;
        case 'm':
            opt.min_length = strtol(optarg, &end, 10);
            if (*end || end == optarg || opt.min_length < 0) {
                fprintf(stderr, "adaptive-precompress: --min-length: '%s' "
                        "is not a number of bytes\n", esc(optarg));
                return finish(2);
            }
            break;
        case 'c': codings = optarg; break;
        case 'n': opt.dry_run = 1; break;
        case 'q': opt.quiet = 1; break;
        case 'h': usage(stdout); return finish(0);
        case OPT_TRAIN: opt.train_out = optarg; break;
        case OPT_DICT_SIZE:
            if ((err = adf_parse_size(pool, optarg, &opt.dict_size))) {
                fprintf(stderr, "adaptive-precompress: --dictionary-size: "
                        "%s\n", esc(err));
                return finish(2);
            }
            if (opt.dict_size < DICT_MIN || opt.dict_size > DICT_MAX) {
                fprintf(stderr, "adaptive-precompress: --dictionary-size: "
                        "'%s' is out of range (256 bytes to 4m)\n",
                        esc(optarg));
                return finish(2);
            }
            sized = 1;
            break;
        default: usage(stderr); return finish(2);
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return finish(2);
    }
    if (sized && !opt.train_out) {
        fprintf(stderr, "adaptive-precompress: --dictionary-size goes with "
                "--train-dictionary\n");
        return finish(2);
    }
    if (opt.train_out) {
#ifndef ADF_HAVE_ZSTD
        fprintf(stderr, "adaptive-precompress: --train-dictionary: this "
                "build has no zstd\n");
        return finish(2);
#else
        if (codings || opt.delete_orphans) {
            fprintf(stderr, "adaptive-precompress: --train-dictionary "
                    "writes no siblings: -c and -d do not go with it\n");
            return finish(2);
        }
        if ((outdir = open_out_dir(opt.train_out, &base)) < 0) {
            return finish(1);
        }
        train.max = (size_t)opt.dict_size * SAMPLE_MULT;
        train.head = train.max < SAMPLE_HEAD ? train.max : SAMPLE_HEAD;
        train.limit = APR_UINT64_MAX;
        if (!(train.buf = malloc(train.head))) {
            fprintf(stderr, "adaptive-precompress: out of memory\n");
            return finish(1);
        }
#endif
    }
    {
        int n = 0;
        char **v = codings ? split(codings, &n) : NULL;

        for (i = 0; i < n; i++) {
            const adf_coding_t *d = adf_coding_by_token(v[i], strlen(v[i]));
            int c = d ? (int)d->id : -1;
            if (!d) {
                fprintf(stderr, "adaptive-precompress: unknown or "
                        "unavailable coding '%s'\n", esc(v[i]));
                return finish(2);
            }
            if (!d->ext) {
                fprintf(stderr, "adaptive-precompress: %s has no siblings: "
                        "it is made against a dictionary the client "
                        "holds\n", d->token);
                return finish(2);
            }
            for (j = 0; j < opt.ncodings; j++) {
                if ((int)opt.codings[j] == c) {
                    break;
                }
            }
            if (j == opt.ncodings && opt.ncodings < ADF_MAX_PREFS) {
                opt.codings[opt.ncodings++] = (adf_coding_e)c;
            }
        }
        for (i = ADF_IDENTITY + 1; !codings && i < ADF_NCODINGS; i++) {
            if (adf_coding((adf_coding_e)i) && adf_coding((adf_coding_e)i)->ext) {
                opt.codings[opt.ncodings++] = (adf_coding_e)i;
            }
        }
    }
    opt.tty = isatty(2);
    for (i = optind; i < argc; i++) {
        int dir = open(argv[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW
                       | O_CLOEXEC);
        struct stat st;

        train.arg = i;
        train.rootlen = strlen(argv[i]);
        if (dir >= 0) {
            enter(dir, argv[i]);
        }
        else if ((errno == ENOTDIR || errno == ELOOP)
                 && lstat(argv[i], &st) == 0 && S_ISLNK(st.st_mode)) {
            error(argv[i], "a symbolic link, not followed: give the "
                  "directory it points to");
        }
        else {
            error(argv[i], "cannot open the directory: %s", strerror(errno));
        }
    }
    clear_progress();
#ifdef ADF_HAVE_ZSTD
    if (opt.train_out) {
        int rc = train_dictionary(outdir, base);

        close(outdir);
        free(train.buf);
        free(train.v);
        return finish(rc);
    }
#endif
    if (!opt.quiet) {
        summary();
    }
    return finish(sum.errors ? 1 : 0);
}
