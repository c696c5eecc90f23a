/* What a child remembers of the stored files it checked: a cache entry's
 * trailer and CRC, a sibling's mark.  Checking again costs a read of the
 * file (an entry) or a system call (a mark) on every request. */
#ifndef ADF_MEMO_H
#define ADF_MEMO_H

#include "adf_private.h"
#include "adf_ident.h"

/* What a check found. */
typedef struct {
    apr_off_t length;                       /* of the coded bytes */
    unsigned char digest[ADF_DIGEST_LEN];   /* of the coded bytes */
    unsigned char source[ADF_DIGEST_LEN];   /* of F's (cache entries) */
} adf_memo_t;

/* What was checked, besides the coding of a cache entry. */
#define ADF_MEMO_MARK (-1)

void adf_memo_child_init(apr_pool_t *pchild);

/* Was the file as it is now (file: its device, inode, size, mtime and
 * ctime: any change to it means checking again; mnt: the mount it was
 * read through, where a remount may bring another filesystem with the
 * same device number and identities: a number the kernel never reuses,
 * or 0 where that cannot happen) found to hold src's version, checked as
 * kind?  Then *m is what was found. */
int adf_memo_get(const adf_ident_t *file, apr_uint64_t mnt,
                 const adf_ident_t *src, int kind, adf_memo_t *m);
void adf_memo_put(const adf_ident_t *file, apr_uint64_t mnt,
                  const adf_ident_t *src, int kind, const adf_memo_t *m);

#endif /* ADF_MEMO_H */
