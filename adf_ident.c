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

int adf_mark_format(char *buf, const adf_ident_t *f)
{
    return snprintf(buf, ADF_MARK_MAX, "2 ino=%" APR_UINT64_T_FMT " size=%"
                    APR_INT64_T_FMT " mtime=%" APR_INT64_T_FMT ".%09ld ctime=%"
                    APR_INT64_T_FMT ".%09ld", f->ino, f->size, f->mtime.sec,
                    f->mtime.nsec, f->ctime.sec, f->ctime.nsec);
}

/* "SEC.NSEC" with exactly nine digits after the point. */
static const char *scan_ts(const char *s, adf_ts_t *t)
{
    apr_uint64_t sec, nsec;
    const char *e;

    if (!(e = adf_scan_u64(s, &sec)) || *e != '.'
        || sec > (apr_uint64_t)APR_INT64_MAX) {
        return NULL;
    }
    s = e + 1;
    if (!(e = adf_scan_u64(s, &nsec)) || e - s != 9) {
        return NULL;
    }
    t->sec = (apr_int64_t)sec;
    t->nsec = (long)nsec;
    return e;
}

int adf_mark_parse(const char *v, apr_size_t len, adf_ident_t *m)
{
    char buf[ADF_MARK_MAX];
    apr_uint64_t ino, size;
    const char *e;

    if (len >= sizeof(buf)) {
        return -1;
    }
    memcpy(buf, v, len);
    buf[len] = '\0';
    if (strncmp(buf, "2 ino=", 6)
        || !(e = adf_scan_u64(buf + 6, &ino)) || strncmp(e, " size=", 6)
        || !(e = adf_scan_u64(e + 6, &size)) || strncmp(e, " mtime=", 7)
        || !(e = scan_ts(e + 7, &m->mtime)) || strncmp(e, " ctime=", 7)
        || !(e = scan_ts(e + 7, &m->ctime)) || *e
        || size > (apr_uint64_t)APR_INT64_MAX) {
        return -1;
    }
    m->dev = 0;
    m->ino = ino;
    m->size = (apr_int64_t)size;
    return 0;
}

static adf_ts_t to_usec(adf_ts_t t)
{
    t.nsec -= t.nsec % 1000;
    return t;
}

int adf_mark_matches(const adf_ident_t *f, const adf_ident_t *m,
                     int usec_precision)
{
    adf_ts_t mt = usec_precision ? to_usec(m->mtime) : m->mtime;
    adf_ts_t ct = usec_precision ? to_usec(m->ctime) : m->ctime;

    return m->ino == f->ino && m->size == f->size
           && adf_ts_cmp(&mt, &f->mtime) == 0
           && adf_ts_cmp(&ct, &f->ctime) == 0;
}
