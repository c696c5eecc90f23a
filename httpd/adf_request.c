/* Per-request state and the request's facts for the policy. */
#include "adf_request.h"
#include "adf_headers.h"

#include <apr_portable.h>
#include <http_core.h>

#include <stddef.h>
#include <string.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

adf_req_t *adf_req(request_rec *r)
{
    adf_req_t *st = ap_get_module_config(r->request_config,
                                         &adaptive_deflate_module);

    if (!st) {
        st = apr_palloc(r->pool, sizeof(*st));
        memset(st, 0, offsetof(adf_req_t, plain_finfo));
        ap_set_module_config(r->request_config, &adaptive_deflate_module, st);
    }
    return st;
}

adf_req_t *adf_req_peek(const request_rec *r)
{
    return ap_get_module_config(r->request_config, &adaptive_deflate_module);
}

static apr_status_t close_held(void *data)
{
    close(*(int *)data);
    return APR_SUCCESS;
}

const int *adf_req_hold_fd(request_rec *r, int fd)
{
    int *held = apr_palloc(r->pool, sizeof(*held));

    *held = fd;
    apr_pool_cleanup_register(r->pool, held, close_held,
                              apr_pool_cleanup_null);
    return held;
}

void adf_req_let_go(request_rec *r, const int *held)
{
    apr_pool_cleanup_run(r->pool, (void *)held, close_held);
}

/* The no-gzip this module sets for stock mod_deflate, told from the
 * operator's and a handler's by its address. */
static const char no_gzip_ours[] = "1";

void adf_silence_deflate(request_rec *r)
{
    if (!apr_table_get(r->subprocess_env, "no-gzip")) {
        apr_table_setn(r->subprocess_env, "no-gzip", no_gzip_ours);
    }
}

/* Read where the response is decided, as mod_deflate reads no-gzip: what
 * a handler set counts too (PHP's apache_setenv, a Lua handler). */
static int env_off(const request_rec *r)
{
    const char *no_gzip = apr_table_get(r->subprocess_env, "no-gzip");

    return (no_gzip && no_gzip != no_gzip_ours)
           || apr_table_get(r->subprocess_env, "no-adaptive-deflate") != NULL;
}

void adf_request_facts(request_rec *r, const adf_dir_conf_t *dc,
                       adf_accept_t *acc, adf_policy_in_t *in,
                       adf_resp_fields_t *h)
{
    const char *type = r->content_type;
    int not_modified = r->status == HTTP_NOT_MODIFIED;

    memset(in, 0, sizeof(*in));
    in->accept = acc;
    in->length = -1;
    in->is_subrequest = r->main != NULL;
    /* A 304 answers for the 200 it stands for. */
    in->status_ok = adf_conf_status_ok(dc, not_modified ? HTTP_OK
                                                        : r->status);
    in->type_ok = adf_types_match(adf_conf_types(dc), type ? type : "");
    /* The status and the type decide alone for most responses: then
     * nothing more needs reading (the reason says "encoded" where httpd's
     * own field does, without a scan of the header tables). */
    if (!in->status_ok || !in->type_ok) {
        in->has_encoding = adf_is_coding(r->content_encoding);
        return;
    }
    adf_resp_fields(r, h);
    in->has_encoding = adf_declared_encoding(r, h) != NULL;
    in->resp_no_transform = h->no_transform;
    adf_accept_parse(apr_table_get(r->headers_in, "Accept-Encoding"), acc);
    in->req_no_transform = adf_req_no_transform(r);
    in->env_off = env_off(r);
    in->proxied_off = !adf_conf_proxied(dc)
                      && apr_table_get(r->headers_in, "Via") != NULL;
}

/* A rate found is used for this many more asks on the connection, for
 * at most RATE_REUSE_TIME, before TCP is asked again: a getsockopt costs
 * some 0.6 us (measured here), as much as the rest of a decision. */
#define RATE_REUSE 7
#define RATE_MIN_BYTES (16 * 1024)
#define RATE_REUSE_TIME apr_time_from_sec(1)

typedef struct {
    apr_uint64_t rate;
    apr_time_t at;              /* the request that asked TCP */
    unsigned left;              /* asks that may reuse it */
} conn_rate_t;

/* The rate TCP can deliver the connection's bytes at now, bytes/s: its
 * congestion window over its round trip (one window a round trip), 0
 * where TCP cannot tell.  A response takes bytes / rate to reach the
 * client, whatever the path's own speed: a window cut by the path's
 * queue, a window back at its start after an idle connection's timeout,
 * a long round trip all slow it.  The round trip is the smoothed one less
 * twice its variation, never under the least seen: a client with think
 * time acknowledges each response's last segment late (its delayed
 * acknowledgement), which put loopback clients' smoothed round trips at
 * 0.3-140 ms around a least of 20 us, their variation as large; a queue
 * on a shared link holds the round trip up steadily (10-15 ms, varying
 * by a tenth: such clients stay slow).  Not the bytes acknowledged over
 * the time TCP was busy: that time is counted in ticks (4 ms here) and
 * includes those late acknowledgements too.  Not before RATE_MIN_BYTES
 * were acknowledged: until then the round trip may be the handshake's,
 * which with a deferred accept (httpd's default AcceptFilter) ends with
 * the first request, after a client's think time (100 ms on loopback). */
static apr_uint64_t tcp_rate(conn_rec *c)
{
    apr_socket_t *sock = ap_get_conn_socket(c);
    struct tcp_info ti;
    socklen_t len = sizeof(ti);
    apr_os_sock_t fd;
    apr_uint32_t rtt;

    if (!sock || apr_os_sock_get(&fd, sock) != APR_SUCCESS
        || getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0
        || len < offsetof(struct tcp_info, tcpi_min_rtt)
                 + sizeof(ti.tcpi_min_rtt)
        || !ti.tcpi_rtt || !ti.tcpi_snd_cwnd || !ti.tcpi_snd_mss
        || ti.tcpi_bytes_acked < RATE_MIN_BYTES) {
        return 0;
    }
    rtt = ti.tcpi_rtt > 2 * ti.tcpi_rttvar
          ? ti.tcpi_rtt - 2 * ti.tcpi_rttvar : 0;
    rtt = rtt > ti.tcpi_min_rtt ? rtt : ti.tcpi_min_rtt;
    return rtt ? (apr_uint64_t)ti.tcpi_snd_cwnd * ti.tcpi_snd_mss * 1000000
                 / rtt : 0;
}

apr_uint64_t adf_client_rate(const request_rec *r)
{
    conn_rec *c = r->connection;
    conn_rate_t *cr;
    apr_uint64_t rate;

    if (c->master) {
        /* HTTP/2: streams of one connection run in parallel; no memo */
        return tcp_rate(c->master);
    }
    /* An HTTP/1 connection serves one request at a time: its memo is
     * this request's to read and write. */
    cr = ap_get_module_config(c->conn_config, &adaptive_deflate_module);
    if (cr && cr->left && r->request_time - cr->at < RATE_REUSE_TIME) {
        cr->left--;
        return cr->rate;
    }
    if ((rate = tcp_rate(c)) != 0) {
        if (!cr) {
            cr = apr_palloc(c->pool, sizeof(*cr));
            ap_set_module_config(c->conn_config, &adaptive_deflate_module,
                                 cr);
        }
        cr->rate = rate;
        cr->at = r->request_time;
        cr->left = RATE_REUSE;
    }
    return rate;
}
