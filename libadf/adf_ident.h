/* The identity of a file version, and the proof that a precompressed
 * sibling holds the current version of its source.  Pure: no httpd.
 *
 * A sibling S of F stands for F only when it carries the mark
 * adaptive-precompress leaves on what it wrote or verified, and the mark
 * names F as F is now: the same inode, size, mtime and ctime (see
 * ADF_MARK_XATTR below).  Timestamps alone prove nothing: a rollback
 * (cp -p) moves F's mtime back, two edits can share a second, builds
 * normalise mtimes, and a chmod or a hard link moves a stale sibling's
 * ctime forward.  Any change to F's inode (an edit, a copy, a chmod)
 * makes its siblings stale until the tool verifies them again; that
 * fails safe (compression on the fly) and is cheap to repair.
 * Timestamps are compared in nanoseconds; callers that only have
 * microseconds (APR) compare at that precision.
 */
#ifndef ADF_IDENT_H
#define ADF_IDENT_H

#include "adf_digest.h"

#include <apr.h>
#include <apr_file_info.h>

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

/* The identity APR's stat gives (microsecond timestamps); fi needs
 * APR_FINFO_MIN | APR_FINFO_IDENT. */
void adf_ident_of_finfo(adf_ident_t *id, const apr_finfo_t *fi);

/* The identity stat(2) gives, to the nanosecond. */
struct stat;
void adf_ident_of_stat(adf_ident_t *id, const struct stat *st);

/* Is a the same version of the same file as b (all fields equal)? */
int adf_ident_same(const adf_ident_t *a, const adf_ident_t *b);

/* Is version f settled: has its filesystem's clock (now) moved far enough
 * past f's last change that any later change shows in f's ctime?  Until
 * then a second write within the same timestamp tick leaves f's identity
 * as it was, and bytes read now may not be the bytes f holds later under
 * the same identity.  Filesystems keep timestamps to nanoseconds (ext4
 * with 256-byte inodes, xfs, btrfs, tmpfs) or whole seconds (ext4 with
 * 128-byte inodes, ext2/3): a ctime with a fraction proves the fine kind;
 * a whole-second one is given 2 s, in case a filesystem rounds to even
 * seconds.  now: the
 * kernel's coarse clock (what it stamps inodes with), or a probe file's
 * ctime on f's filesystem. */
int adf_ident_settled(const adf_ident_t *f, const adf_ts_t *now);

/* Does a filesystem of this type (statfs' f_type) move a file's ctime at
 * every change?  Not those of images built once (squashfs, erofs,
 * iso9660, udf, cramfs, romfs: two images with normalised times give one
 * identity to two versions), nor FAT and exFAT, whose ctime is the mtime:
 * an edit with its mtime put back keeps the identity. */
int adf_fs_tracks_changes(long f_type);

/* Is this filesystem one whose ctime is known to move at every change of
 * an inode, its extended attributes included, stamped by this kernel's
 * clock: ext2/3/4, xfs, btrfs, tmpfs, f2fs?  What a child remembers of a
 * file lasts only as long as its ctime (adf_memo): elsewhere (FUSE, a
 * network filesystem, an overlay whose lower layer may be an image) the
 * proof is read every time. */
int adf_fs_ctime_proven(long f_type);

/* The mark adaptive-precompress leaves on every sibling it writes: an
 * extended attribute holding the identity of the source it was made from
 * and the SHA-256 of the sibling's own bytes, "3 ino=N size=N
 * mtime=SEC.NSEC ctime=SEC.NSEC sha256=HEX" (version 2, from earlier
 * releases, has no digest).  The digest names the sibling's bytes in its
 * ETag: two versions of F with one mtime whose siblings have one length
 * get two tags, and so do two servers' copies only when their bytes
 * differ.  It proves authorship
 * (the tool deletes only marked orphans), and where it is present the
 * sibling is fresh only while F is still that inode, size, mtime and
 * ctime: nothing done to the sibling since (a chmod, a hard link) can
 * make an old one look fresh, and a new F with an old mtime (normalised
 * build times) cannot pass for the old one.  The tool gives the sibling
 * F's mtime, and both the module and the tool require it: bytes written
 * over in place (inode and mark kept) have another.  A rewrite that puts
 * F's mtime back only the tool sees, by the digest. */
#define ADF_MARK_XATTR "user.adaptive_deflate"
#define ADF_MARK_MAX 256

typedef struct {
    adf_ident_t src;            /* the source (dev is not recorded: 0) */
    int has_digest;             /* version 3 */
    unsigned char digest[ADF_DIGEST_LEN];   /* of the sibling's bytes */
} adf_mark_t;

/* Write the mark of a sibling whose bytes have digest, made from f, into
 * buf (ADF_MARK_MAX bytes); its length. */
int adf_mark_format(char *buf, const adf_ident_t *f,
                    const unsigned char *digest);

/* Parse a mark of len bytes into m; 0 on success, -1 when it is not
 * one. */
int adf_mark_parse(const char *v, apr_size_t len, adf_mark_t *m);

/* Does mark m name source f?  At the precision of f's times: with
 * microseconds (APR), the mark's are truncated to match. */
int adf_mark_matches(const adf_ident_t *f, const adf_mark_t *m,
                     int usec_precision);

#endif /* ADF_IDENT_H */
