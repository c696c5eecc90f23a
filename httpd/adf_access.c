/* A subrequest's verdict on another resource; see adf_access.h. */
#include "adf_access.h"

#include <http_config.h>
#include <http_request.h>
#include <httpd.h>

#include <string.h>

int adf_access_may_read(request_rec *r, const char *uri,
                        const char *filename)
{
    ap_conf_vector_t *conf = r->per_dir_config;
    request_rec *sub;
    int ok;

    if (!uri || *uri != '/' || !filename) {
        return 0;
    }
    /* httpd takes a subrequest whose merged configuration is its main
     * request's very one as let in already, and runs none of its checks:
     * a rule that tells two URLs of one section apart (Require expr,
     * Require file-owner) would not be asked.  r's own, as a copy of the
     * same settings, is not that one while the subrequest is made. */
    r->per_dir_config = ap_merge_per_dir_configs(r->pool, conf,
                                                 ap_create_per_dir_config(
                                                     r->pool));
    /* escaped again: the subrequest decodes it as the request's was */
    sub = ap_sub_req_lookup_uri(ap_escape_uri(r->pool, uri), r, NULL);
    r->per_dir_config = conf;
    ok = sub->status == HTTP_OK && sub->filename
         && !strcmp(sub->filename, filename)
         && !(sub->path_info && *sub->path_info);
    ap_log_rerror(APLOG_MARK, APLOG_TRACE2, 0, r, "may this client read %s "
                  "(%s)? %s: %d, %s", uri, filename, ok ? "yes" : "no",
                  sub->status, sub->filename ? sub->filename : "no file");
    ap_destroy_sub_req(sub);
    return ok;
}
