/* File identity and sibling freshness; see adf_ident.h for the rule. */
#include "adf_ident.h"

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
