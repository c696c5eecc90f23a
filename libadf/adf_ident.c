/* File identity and the siblings' mark; see adf_ident.h for the rule. */
#include "adf_ident.h"
#include "adf_parse.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int adf_ts_cmp(const adf_ts_t *a, const adf_ts_t *b)
{
    if (a->sec != b->sec) {
        return a->sec < b->sec ? -1 : 1;
    }
    if (a->nsec != b->nsec) {
        return a->nsec < b->nsec ? -1 : 1;
    }
    return 0;
}

adf_ts_t adf_ts_from_usec(apr_int64_t usec)
{
    adf_ts_t t;

    t.sec = usec / 1000000;
    t.nsec = (long)(usec % 1000000) * 1000;
    if (t.nsec < 0) {
        t.sec--;
        t.nsec += 1000000000L;
    }
    return t;
}

void adf_ident_of_finfo(adf_ident_t *id, const apr_finfo_t *fi)
{
    id->dev = (apr_uint64_t)fi->device;
    id->ino = (apr_uint64_t)fi->inode;
    id->size = fi->size;
    id->mtime = adf_ts_from_usec(fi->mtime);
    id->ctime = adf_ts_from_usec(fi->ctime);
}

void adf_ident_of_stat(adf_ident_t *id, const struct stat *st)
{
    id->dev = (apr_uint64_t)st->st_dev;
    id->ino = (apr_uint64_t)st->st_ino;
    id->size = st->st_size;
    id->mtime.sec = st->st_mtim.tv_sec;
    id->mtime.nsec = st->st_mtim.tv_nsec;
    id->ctime.sec = st->st_ctim.tv_sec;
    id->ctime.nsec = st->st_ctim.tv_nsec;
}

int adf_ident_same(const adf_ident_t *a, const adf_ident_t *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size
           && adf_ts_cmp(&a->mtime, &b->mtime) == 0
           && adf_ts_cmp(&a->ctime, &b->ctime) == 0;
}

/* A filesystem that keeps whole seconds may round to 2 s (FAT). */
#define COARSE_GRAIN 2

int adf_ident_settled(const adf_ident_t *f, const adf_ts_t *now)
{
    adf_ts_t after = f->ctime;

    if (!after.nsec) {
        after.sec += COARSE_GRAIN;
        return adf_ts_cmp(now, &after) >= 0;
    }
    return adf_ts_cmp(now, &after) > 0;
}

/* Is f_type one of the n filesystem types in list (linux/magic.h's)? */
static int fs_listed(long f_type, const unsigned long *list, apr_size_t n)
{
    apr_size_t i;

    for (i = 0; i < n; i++) {
        if ((unsigned long)f_type == list[i]) {
            return 1;
        }
    }
    return 0;
}

#define FS_LISTED(t, list) fs_listed(t, list, sizeof(list) / sizeof(list[0]))

int adf_fs_tracks_changes(long f_type)
{
    static const unsigned long untracked[] = {
        0x73717368,     /* squashfs */
        0xe0f5e1e2,     /* erofs */
        0x9660,         /* iso9660 */
        0x15013346,     /* udf */
        0x28cd3d45,     /* cramfs */
        0x7275,         /* romfs */
        0x4d44,         /* msdos, vfat */
        0x2011bab0,     /* exfat */
    };

    return !FS_LISTED(f_type, untracked);
}

int adf_fs_ctime_proven(long f_type)
{
    static const unsigned long proven[] = {
        0xef53,         /* ext2, ext3, ext4 */
        0x58465342,     /* xfs */
        0x9123683e,     /* btrfs */
        0x01021994,     /* tmpfs */
        0xf2f52010,     /* f2fs */
    };

    return FS_LISTED(f_type, proven);
}

int adf_mark_format(char *buf, const adf_ident_t *f,
                    const unsigned char *digest)
{
    char hex[ADF_DIGEST_HEX];

    adf_digest_hex(hex, digest, ADF_DIGEST_LEN);
    return snprintf(buf, ADF_MARK_MAX, "3 ino=%" APR_UINT64_T_FMT " size=%"
                    APR_INT64_T_FMT " mtime=%" APR_INT64_T_FMT ".%09ld ctime=%"
                    APR_INT64_T_FMT ".%09ld sha256=%s", f->ino, f->size,
                    f->mtime.sec, f->mtime.nsec, f->ctime.sec, f->ctime.nsec,
                    hex);
}

/* "SEC.NSEC" with exactly nine digits after the point; SEC is negative
 * before 1970, as timespec has it (-0.5 s is "-1.500000000"). */
static const char *scan_ts(const char *s, adf_ts_t *t)
{
    apr_uint64_t sec, nsec;
    const char *e;
    int neg = *s == '-';

    if (!(e = adf_scan_u64(s + neg, &sec)) || *e != '.'
        || sec > (apr_uint64_t)APR_INT64_MAX) {
        return NULL;
    }
    s = e + 1;
    if (!(e = adf_scan_u64(s, &nsec)) || e - s != 9) {
        return NULL;
    }
    t->sec = neg ? -(apr_int64_t)sec : (apr_int64_t)sec;
    t->nsec = (long)nsec;
    return e;
}

#define DIGEST_FIELD " sha256="

static int parse(const char *v, apr_size_t len, adf_mark_t *m)
{
    char buf[ADF_MARK_MAX];
    apr_uint64_t ino, size;
    const char *e;
    int version;

    if (len >= sizeof(buf)) {
        return -1;
    }
    memcpy(buf, v, len);
    buf[len] = '\0';
    version = buf[0] == '3' ? 3 : buf[0] == '2' ? 2 : 0;
    if (!version || strncmp(buf + 1, " ino=", 5)
        || !(e = adf_scan_u64(buf + 6, &ino)) || strncmp(e, " size=", 6)
        || !(e = adf_scan_u64(e + 6, &size)) || strncmp(e, " mtime=", 7)
        || !(e = scan_ts(e + 7, &m->src.mtime)) || strncmp(e, " ctime=", 7)
        || !(e = scan_ts(e + 7, &m->src.ctime))
        || size > (apr_uint64_t)APR_INT64_MAX) {
        return -1;
    }
    m->has_digest = version == 3;
    if (m->has_digest) {
        if (strncmp(e, DIGEST_FIELD, sizeof(DIGEST_FIELD) - 1)
            || strlen(e += sizeof(DIGEST_FIELD) - 1) != 2 * ADF_DIGEST_LEN
            || adf_digest_parse_hex(e, m->digest)) {
            return -1;
        }
        e += 2 * ADF_DIGEST_LEN;
    }
    if (*e) {
        return -1;
    }
    m->src.dev = 0;
    m->src.ino = ino;
    m->src.size = (apr_int64_t)size;
    return 0;
}

/* The last mark each thread read, and what it said: the same hot
 * file's sibling is asked for request after request, and a compare costs
 * some 60 instructions, the parse (50 digits, 64 hex digits) 1,700. */
static __thread struct {
    apr_size_t len;             /* 0: empty */
    char value[ADF_MARK_MAX];
    adf_mark_t mark;
} memo;

int adf_mark_parse(const char *v, apr_size_t len, adf_mark_t *m)
{
    if (len && len == memo.len && !memcmp(v, memo.value, len)) {
        *m = memo.mark;
        return 0;
    }
    if (parse(v, len, m)) {
        return -1;
    }
    memcpy(memo.value, v, len);     /* parse() refused len >= MAX */
    memo.len = len;
    memo.mark = *m;
    return 0;
}

static adf_ts_t to_usec(adf_ts_t t)
{
    t.nsec -= t.nsec % 1000;
    return t;
}

int adf_mark_matches(const adf_ident_t *f, const adf_mark_t *mark,
                     int usec_precision)
{
    const adf_ident_t *m = &mark->src;
    adf_ts_t mt = usec_precision ? to_usec(m->mtime) : m->mtime;
    adf_ts_t ct = usec_precision ? to_usec(m->ctime) : m->ctime;

    return m->ino == f->ino && m->size == f->size
           && adf_ts_cmp(&mt, &f->mtime) == 0
           && adf_ts_cmp(&ct, &f->ctime) == 0;
}
