/* Checks made as the children's user, and who that user is; see
 * adf_children.h. */
#include "adf_children.h"

#include <apr_strings.h>
#include <unixd.h>

#include <grp.h>
#include <pwd.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *adf_as_children(adf_probe_fn *probe, void *baton, apr_pool_t *p)
{
    char buf[512];
    int fds[2], status;
    ssize_t n;
    pid_t pid;

    if (geteuid() != 0) {
        return probe(baton, p);
    }
    if (pipe(fds) != 0) {
        return NULL;
    }
    if ((pid = fork()) < 0) {
        close(fds[0]);
        close(fds[1]);
        return NULL;
    }
    if (pid == 0) {
        const char *err;

        close(fds[0]);
        /* where the children will be: ChrootDir first, as they do */
        if ((ap_unixd_config.chroot_dir
             && (chroot(ap_unixd_config.chroot_dir) != 0 || chdir("/") != 0))
            || setgid(ap_unixd_config.group_id) != 0
            || (ap_unixd_config.user_name
                && initgroups(ap_unixd_config.user_name,
                              ap_unixd_config.group_id) != 0)
            || setuid(ap_unixd_config.user_id) != 0) {
            _exit(2);
        }
        if ((err = probe(baton, p)) != NULL) {
            n = write(fds[1], err, strlen(err));
        }
        _exit(0);
    }
    close(fds[1]);
    n = read(fds[0], buf, sizeof(buf) - 1);
    close(fds[0]);
    waitpid(pid, &status, 0);
    if (n > 0) {
        buf[n] = '\0';
        return apr_pstrdup(p, buf);
    }
    return NULL;
}

uid_t adf_children_uid(void)
{
    return geteuid() == 0 ? ap_unixd_config.user_id : geteuid();
}

gid_t adf_children_gid(void)
{
    return geteuid() == 0 ? ap_unixd_config.group_id : getegid();
}

const char *adf_children_user(void)
{
    struct passwd *pw;

    if (geteuid() == 0) {
        return ap_unixd_config.user_name ? ap_unixd_config.user_name : "?";
    }
    pw = getpwuid(geteuid());
    return pw ? pw->pw_name : "?";
}
