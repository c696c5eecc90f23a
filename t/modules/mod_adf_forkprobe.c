/* A test module for t/signal.t: the handler adf-fork-probe forks a
 * process that does not exec (as a CGI's process before its exec), sends
 * it SIGTERM once it runs, and answers how it ended: "signal 15" where it
 * took the signal's default action, "exit N" where it ran the handler it
 * inherited (a prefork child's exit), "hung" where it did not end within
 * 3 s (then it is killed). */
#include <httpd.h>
#include <http_config.h>
#include <http_protocol.h>

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int probe_handler(request_rec *r)
{
    int p[2], status = 0, i;
    pid_t pid;
    char c;

    if (!r->handler || strcmp(r->handler, "adf-fork-probe")) {
        return DECLINED;
    }
    if (pipe(p) != 0 || (pid = fork()) < 0) {
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    if (pid == 0) {
        close(p[0]);
        if (write(p[1], "", 1) != 1) {  /* fork() has returned here */
            _exit(2);
        }
        sleep(5);
        _exit(3);
    }
    close(p[1]);
    if (read(p[0], &c, 1) != 1) {
        c = 0;
    }
    close(p[0]);
    kill(pid, SIGTERM);
    for (i = 0; i < 300 && waitpid(pid, &status, WNOHANG) == 0; i++) {
        usleep(10000);
    }
    ap_set_content_type(r, "text/plain");
    if (i == 300) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        ap_rputs("hung\n", r);
    }
    else if (WIFSIGNALED(status)) {
        ap_rprintf(r, "signal %d\n", WTERMSIG(status));
    }
    else {
        ap_rprintf(r, "exit %d\n", WEXITSTATUS(status));
    }
    return OK;
}

static void register_hooks(apr_pool_t *p)
{
    ap_hook_handler(probe_handler, NULL, NULL, APR_HOOK_MIDDLE);
}

module AP_MODULE_DECLARE_DATA adf_forkprobe_module = {
    STANDARD20_MODULE_STUFF,
    NULL, NULL, NULL, NULL, NULL,
    register_hooks
};
