/* The cache directory's checks, on real directories under /tmp: owners,
 * modes, sticky parents, ACLs and a link put on the way after the path
 * was resolved.  As root (CI), other owners are made with chown; a test
 * that needs root fails when not root. */
#include "adf_test.h"
#include "adf_safedir.h"

#include <apr_strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define NOBODY 65534

static adf_dirowner_t owner = { NOBODY, NOBODY, "nobody" };
static char top[64];

/* A fresh root-owned 0755 directory under /tmp, as top. */
static void make_top(void)
{
    strcpy(top, "/tmp/adf-safedir-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(top));
    ck_assert_int_eq(chmod(top, 0755), 0);
}

static const char *at(const char *rel)
{
    return apr_pstrcat(pool, top, "/", rel, NULL);
}

static void dir(const char *rel, mode_t mode, uid_t uid)
{
    ck_assert_int_eq(mkdir(at(rel), 0700), 0);
    ck_assert_int_eq(chown(at(rel), uid, (gid_t)-1), 0);
    ck_assert_int_eq(chmod(at(rel), mode), 0);
}

/* adf_safedir_walk on top/rel: the error, or NULL when it opened. */
static const char *walk(const char *rel)
{
    const char *err = NULL;
    int fd = adf_safedir_walk(at(rel), &owner, pool, &err);

    if (fd >= 0) {
        close(fd);
        return NULL;
    }
    ck_assert_ptr_nonnull(err);
    return err;
}

/* Does err (maybe NULL: the walk opened) say needle? */
static int says(const char *err, const char *needle)
{
    return err && strstr(err, needle);
}

static void done(void)
{
    char cmd[128];

    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(owners_and_modes)
{
    ck_assert_msg(geteuid() == 0, "needs root (CI runs as root)");
    make_top();
    dir("c", 0700, NOBODY);
    ck_assert_ptr_null(walk("c"));
    dir("world", 0777, NOBODY);
    ck_assert_str_eq(walk("world"), apr_pstrcat(pool, at("world"),
                     ": any user may write it (chmod o-w)", NULL));
    dir("sticky", 01777, NOBODY);
    ck_assert(says(walk("sticky"), "any user may write it"));
    dir("other", 0700, 1);
    ck_assert(says(walk("other"), ": owned by another user "
                                 "(uid 1); chown it to nobody"));
    /* above it: root's or nobody's, writable by no one else, or sticky */
    dir("userparent", 0755, 1);
    dir("userparent/c", 0700, NOBODY);
    ck_assert_str_eq(walk("userparent/c"), apr_pstrcat(pool,
                     at("userparent"), " (a directory above the cache): "
                     "owned by another user (uid 1); chown it to root",
                     NULL));
    dir("open", 0777, 0);
    dir("open/c", 0700, NOBODY);
    ck_assert(says(walk("open/c"), "(a directory above the "
                                 "cache): any user may write it"));
    dir("tmpish", 01777, 0);
    dir("tmpish/c", 0700, NOBODY);
    ck_assert_ptr_null(walk("tmpish/c"));
    done();
}
END_TEST

/* A link on the way: resolved paths hold none, so one there was put in
 * since; it is never followed. */
START_TEST(links_are_not_followed)
{
    const char *err;

    ck_assert_msg(geteuid() == 0, "needs root (CI runs as root)");
    make_top();
    dir("real", 0755, 0);
    dir("real/c", 0700, NOBODY);
    ck_assert_int_eq(symlink(at("real"), at("link")), 0);
    ck_assert_ptr_null(walk("real/c"));
    err = walk("link/c");
    ck_assert_str_eq(err, apr_pstrcat(pool, at("link"), ": a symbolic link "
                     "(put there since the path was resolved)", NULL));
    /* the whole path resolved first: fine */
    {
        int fd = adf_safedir_open(at("link/c"), &owner, pool, &err);

        ck_assert_int_ge(fd, 0);
        close(fd);
    }
    ck_assert(says(walk("nonexistent"), "No such file"));
    ck_assert_int_eq(adf_safedir_walk("relative", &owner, pool, &err), -1);
    done();
}
END_TEST

/* An access ACL that lets another user or group write counts like the
 * mode bits; one for the children's user or root does not. */
START_TEST(acls)
{
    /* version 2; USER_OBJ rwx, USER uid rwx, GROUP_OBJ ---, MASK rwx,
     * OTHER --- */
    unsigned char acl[4 + 5 * 8] = { 2, 0, 0, 0 };
    unsigned char *e = acl + 4;
    const char *err;
    int i;
    struct { unsigned tag, perm; unsigned long id; } ent[] = {
        { 0x01, 7, 0xffffffff }, { 0x02, 7, 1 }, { 0x04, 0, 0xffffffff },
        { 0x10, 7, 0xffffffff }, { 0x20, 0, 0xffffffff }
    };

    ck_assert_msg(geteuid() == 0, "needs root (CI runs as root)");
    make_top();
    dir("c", 0700, NOBODY);
    for (i = 0; i < 5; i++, e += 8) {
        e[0] = (unsigned char)ent[i].tag;
        e[2] = (unsigned char)ent[i].perm;
        e[4] = (unsigned char)ent[i].id;
        e[5] = (unsigned char)(ent[i].id >> 8);
        e[6] = (unsigned char)(ent[i].id >> 16);
        e[7] = (unsigned char)(ent[i].id >> 24);
    }
    if (setxattr(at("c"), "system.posix_acl_access", acl, sizeof(acl), 0)) {
        ck_abort_msg("this filesystem takes no ACL: %s", top);
    }
    err = walk("c");
    ck_assert(says(err, "user 1, through its ACL may write it "
                   "(setfacl -b)"));
    /* the named user the children's: fine */
    acl[4 + 8 + 4] = (unsigned char)(NOBODY & 0xff);
    acl[4 + 8 + 5] = (unsigned char)(NOBODY >> 8);
    ck_assert_int_eq(setxattr(at("c"), "system.posix_acl_access", acl,
                              sizeof(acl), 0), 0);
    ck_assert_ptr_null(walk("c"));
    done();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("safedir");

    adf_test(s, owners_and_modes);
    adf_test(s, links_are_not_followed);
    adf_test(s, acls);
    return adf_test_run(s);
}
