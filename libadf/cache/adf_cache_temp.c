/* When another writer's temporary file is taken as abandoned; see
 * adf_cache_temp.h. */
#include "adf_cache_temp.h"

#include <string.h>

int adf_temp_watch(adf_temp_watches_t *l, int dir, const char *name,
                   const adf_temp_seen_t *seen, apr_time_t now)
{
    adf_temp_watch_t *w;
    int k;

    for (k = 0; k < l->n; k++) {
        if (l->w[k].dir == dir && !strcmp(l->w[k].name, name)) {
            return 0;
        }
    }
    if (l->n == ADF_TEMP_WATCHED || strlen(name) >= sizeof(w->name)) {
        return -1;
    }
    w = &l->w[l->n++];
    strcpy(w->name, name);
    w->dir = dir;
    w->seen = *seen;
    w->since = now;
    return 0;
}

static int same(const adf_temp_seen_t *a, const adf_temp_seen_t *b)
{
    return a->ino == b->ino && a->size == b->size
           && !adf_ts_cmp(&a->mtime, &b->mtime)
           && !adf_ts_cmp(&a->ctime, &b->ctime);
}

adf_temp_verdict_e adf_temp_judge(adf_temp_watch_t *w,
                                  const adf_temp_seen_t *seen,
                                  apr_time_t now)
{
    if (!seen) {
        return ADF_TEMP_GONE;
    }
    if (!same(seen, &w->seen) || now < w->since) {
        w->seen = *seen;
        w->since = now;
        return ADF_TEMP_LIVE;
    }
    return now - w->since >= ADF_TEMP_STALE ? ADF_TEMP_ABANDONED
                                            : ADF_TEMP_LIVE;
}

void adf_temp_unwatch(adf_temp_watches_t *l, int k)
{
    l->w[k] = l->w[--l->n];
}
