/* The identity of a file version, and when a precompressed sibling is
 * known to hold the current version of its source.  Pure: no httpd.
 *
 * The rule, shared by the module (serving siblings), adaptive-precompress
 * (writing them and deciding what is up to date) and the compressed
 * cache: a sibling S stands for its source F only when
 *   - S's mtime equals F's exactly (writers copy F's mtime onto S), and
 *   - S's inode changed after F's last change (S.ctime > F.ctime).
 * A rollback (`cp -p` of an older release) gives F an mtime S does not
 * carry; an edit in the same second as the precompress run, or any
 * change that keeps F's mtime, moves F's ctime past S's.  Both fail
 * safe: the response is compressed on the fly instead.  Timestamps are
 * compared in nanoseconds; callers that only have microseconds (APR)
 * give both files at that precision.
 */
#ifndef ADF_IDENT_H
#define ADF_IDENT_H

#include <apr.h>

typedef struct {
    apr_int64_t sec;
    long nsec;
} adf_ts_t;

typedef struct {
    apr_uint64_t dev, ino;
    apr_int64_t size;
    adf_ts_t mtime, ctime;
} adf_ident_t;

/* -1, 0, 1 as a is before, equal to or after b. */
int adf_ts_cmp(const adf_ts_t *a, const adf_ts_t *b);

/* From APR microseconds (apr_finfo_t's mtime and ctime). */
adf_ts_t adf_ts_from_usec(apr_int64_t usec);

/* Does sibling s hold the current version of source f? */
int adf_sibling_fresh(const adf_ident_t *f, const adf_ident_t *s);

/* Is a the same version of the same file as b (all fields equal)? */
int adf_ident_same(const adf_ident_t *a, const adf_ident_t *b);

/* The mark adaptive-precompress leaves on every sibling it writes: an
 * extended attribute holding the identity of the source it was made from,
 * "1 size=N mtime=SEC.NSEC".  It proves authorship (the tool deletes only
 * marked orphans), and where it is present the sibling is fresh only if
 * F still has that size and mtime, whatever touched the sibling since. */
#define ADF_MARK_XATTR "user.adaptive_deflate"
#define ADF_MARK_MAX 64

/* Write f's mark into buf (ADF_MARK_MAX bytes); its length. */
int adf_mark_format(char *buf, const adf_ident_t *f);

/* Parse a mark of len bytes; 0 on success, -1 when it is not one. */
int adf_mark_parse(const char *v, apr_size_t len, apr_int64_t *size,
                   adf_ts_t *mtime);

/* Does a mark (size, mtime) name source f?  At the precision of f's
 * mtime: microseconds (APR) compare the mark's truncated. */
int adf_mark_matches(const adf_ident_t *f, apr_int64_t size,
                     const adf_ts_t *mtime, int usec_precision);

#endif /* ADF_IDENT_H */
