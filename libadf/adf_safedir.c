/* A directory nobody but root and the children's user can change or
 * redirect; see adf_safedir.h. */
#include "adf_safedir.h"

#include <apr_strings.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* POSIX ACLs as Linux stores them (system.posix_acl_access): a 4-byte
 * version, then 8-byte entries (tag, permissions, id; little-endian). */
#define ACL_XATTR "system.posix_acl_access"
#define ACL_TAG_USER 0x02
#define ACL_TAG_GROUP 0x08
#define ACL_PERM_WRITE 0x02

/* The user or group an access ACL of directory fd lets write it besides
 * root and the children's, as text; NULL when none. */
static const char *acl_writer(int fd, const adf_dirowner_t *o, apr_pool_t *p)
{
    unsigned char acl[4 + 8 * 64];
    ssize_t n = fgetxattr(fd, ACL_XATTR, acl, sizeof(acl));
    ssize_t i;

    if (n == (ssize_t)sizeof(acl)) {
        return "a user or group of its ACL";    /* more entries than read */
    }
    for (i = 4; i + 8 <= n; i += 8) {
        unsigned tag = acl[i] | acl[i + 1] << 8;
        unsigned perm = acl[i + 2] | acl[i + 3] << 8;
        unsigned long id = (unsigned long)acl[i + 4] | acl[i + 5] << 8
                           | (unsigned long)acl[i + 6] << 16
                           | (unsigned long)acl[i + 7] << 24;

        if (!(perm & ACL_PERM_WRITE) || id == 0) {
            continue;
        }
        if (tag == ACL_TAG_USER && id != (unsigned long)o->uid) {
            return apr_psprintf(p, "user %lu, through its ACL", id);
        }
        if (tag == ACL_TAG_GROUP && id != (unsigned long)o->gid) {
            return apr_psprintf(p, "group %lu, through its ACL", id);
        }
    }
    return NULL;
}

/* What breaks the rules (adf_safedir.h) in directory st (named path, open
 * on fd), the last one or one above it; NULL when nothing does. */
static const char *unsafe(const char *path, int fd, const struct stat *st,
                          int last, const adf_dirowner_t *o, apr_pool_t *p)
{
    const char *what = last ? "" : " (a directory above the cache)";
    const char *who;

    if (st->st_uid != 0 && st->st_uid != o->uid) {
        return apr_psprintf(p, "%s%s: owned by another user (uid %lu); "
                            "chown it to %s", path, what,
                            (unsigned long)st->st_uid,
                            last ? o->user : "root");
    }
    if ((st->st_mode & S_IWOTH) && (last || !(st->st_mode & S_ISVTX))) {
        return apr_psprintf(p, "%s%s: any user may write it (chmod o-w)",
                            path, what);
    }
    if ((st->st_mode & S_IWGRP) && st->st_gid != o->gid
        && st->st_gid != 0 && (last || !(st->st_mode & S_ISVTX))) {
        return apr_psprintf(p, "%s%s: another group may write it "
                            "(chmod g-w)", path, what);
    }
    if ((last || !(st->st_mode & S_ISVTX)) && (who = acl_writer(fd, o, p))) {
        return apr_psprintf(p, "%s%s: %s may write it (setfacl -b)", path,
                            what, who);
    }
    return NULL;
}

int adf_safedir_walk(const char *real, const adf_dirowner_t *o,
                     apr_pool_t *p, const char **err)
{
    const char *at = "/", *comp = real + 1, *end;
    struct stat st;
    char buf[120];
    int fd, next;

    if (*real != '/') {
        *err = "not an absolute path";
        return -1;
    }
    if ((fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        *err = "cannot open /";
        return -1;
    }
    for (;;) {
        apr_size_t len;
        const char *name;

        if (fstat(fd, &st) != 0) {
            *err = apr_psprintf(p, "%s: %s", at, apr_strerror(
                                    APR_FROM_OS_ERROR(errno), buf,
                                    sizeof(buf)));
        }
        else {
            *err = !S_ISDIR(st.st_mode) ? "not a directory"
                   : unsafe(at, fd, &st, !*comp, o, p);
        }
        if (*err || !*comp) {
            break;
        }
        end = strchr(comp, '/');
        len = end ? (apr_size_t)(end - comp) : strlen(comp);
        at = apr_pstrndup(p, real, (apr_size_t)(comp - real) + len);
        name = apr_pstrndup(p, comp, len);
        next = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW
                                | O_CLOEXEC);
        if (next < 0) {
            /* (a link opened so fails with ENOTDIR) */
            *err = fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0
                   && S_ISLNK(st.st_mode)
                   ? apr_psprintf(p, "%s: a symbolic link (put there since "
                                  "the path was resolved)", at)
                   : errno == ENOTDIR ? apr_psprintf(p, "%s: not a directory",
                                                     at)
                   : apr_psprintf(p, "%s: %s", at, apr_strerror(
                                      APR_FROM_OS_ERROR(errno), buf,
                                      sizeof(buf)));
            break;
        }
        close(fd);
        fd = next;
        comp = end ? end + 1 : comp + len;
    }
    if (*err) {
        close(fd);
        return -1;
    }
    return fd;
}

int adf_safedir_open(const char *dir, const adf_dirowner_t *o, apr_pool_t *p,
                     const char **err)
{
    char buf[120], *real = realpath(dir, NULL);
    const char *resolved;

    if (!real) {
        *err = apr_psprintf(p, "%s (create it, owned by %s, mode 0700)",
                            apr_strerror(APR_FROM_OS_ERROR(errno), buf,
                                         sizeof(buf)), o->user);
        return -1;
    }
    resolved = apr_pstrdup(p, real);
    free(real);
    return adf_safedir_walk(resolved, o, p, err);
}
