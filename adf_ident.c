/* File identity and sibling freshness; see adf_ident.h for the rule. */
#include "adf_ident.h"
#include "adf_parse.h"

#include <stdio.h>
#include <string.h>

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

int adf_sibling_fresh(const adf_ident_t *f, const adf_ident_t *s)
{
    return adf_ts_cmp(&s->mtime, &f->mtime) == 0
           && adf_ts_cmp(&s->ctime, &f->ctime) > 0;
}

int adf_ident_same(const adf_ident_t *a, const adf_ident_t *b)
{
    return a->dev == b->dev && a->ino == b->ino && a->size == b->size
           && adf_ts_cmp(&a->mtime, &b->mtime) == 0
           && adf_ts_cmp(&a->ctime, &b->ctime) == 0;
}

int adf_mark_format(char *buf, const adf_ident_t *f)
{
    return snprintf(buf, ADF_MARK_MAX, "1 size=%" APR_INT64_T_FMT " mtime=%"
                    APR_INT64_T_FMT ".%09ld", f->size, f->mtime.sec,
                    f->mtime.nsec);
}

int adf_mark_parse(const char *v, apr_size_t len, apr_int64_t *size,
                   adf_ts_t *mtime)
{
    char buf[ADF_MARK_MAX];
    apr_uint64_t sz, sec, nsec;
    const char *e;

    if (len >= sizeof(buf)) {
        return -1;
    }
    memcpy(buf, v, len);
    buf[len] = '\0';
    if (strncmp(buf, "1 size=", 7)
        || !(e = adf_scan_u64(buf + 7, &sz)) || strncmp(e, " mtime=", 7)
        || !(e = adf_scan_u64(e + 7, &sec)) || *e != '.'
        || !(e = adf_scan_u64(e + 1, &nsec)) || *e
        || nsec > 999999999 || sz > (apr_uint64_t)APR_INT64_MAX
        || sec > (apr_uint64_t)APR_INT64_MAX) {
        return -1;
    }
    *size = (apr_int64_t)sz;
    mtime->sec = (apr_int64_t)sec;
    mtime->nsec = (long)nsec;
    return 0;
}

int adf_mark_matches(const adf_ident_t *f, apr_int64_t size,
                     const adf_ts_t *mtime, int usec_precision)
{
    adf_ts_t m = *mtime;

    if (usec_precision) {
        m.nsec -= m.nsec % 1000;
    }
    return size == f->size && adf_ts_cmp(&m, &f->mtime) == 0;
}
