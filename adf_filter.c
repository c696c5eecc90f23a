/* The output filter.
 *
 * The first call decides, once, from everything known before the body:
 * either the filter removes itself (setting Vary when another request
 * could have been answered compressed), or it sets the headers of the
 * compressed representation and streams every later bucket through a
 * codec.  FLUSH becomes a sync flush that is passed on at once; EOS
 * finishes the stream and records the request notes.
 */
#include "adf_filter.h"
#include "adf_config.h"
#include "adf_codec.h"
#include "adf_shm.h"

#include <apr_strings.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>
#include <util_filter.h>

#include <string.h>
#include <strings.h>

/* Pass compressed output on once this much is waiting. */
#define ADF_PASS_THRESHOLD (64 * 1024)

typedef struct {
    adf_stream_t *stream;
    apr_bucket_brigade *out;
    apr_off_t pending;          /* bytes in out */
    int flush_each;             /* streaming type: flush every brigade */
} adf_ctx_t;

static const char *const etag_suffix[ADF_NCODINGS] = { "", "-gzip", "-br" };

/* ---- headers ------------------------------------------------------------ */

static int has_token(const char *list, const char *token)
{
    const char *s = list;
    apr_size_t len = strlen(token);

    while (s && *s) {
        const char *tok;
        apr_size_t tlen;

        while (*s == ' ' || *s == '\t' || *s == ',') {
            s++;
        }
        tok = s;
        while (*s && *s != ',' && *s != ';' && *s != ' ' && *s != '\t') {
            s++;
        }
        tlen = s - tok;
        if (tlen == len && !strncasecmp(tok, token, len)) {
            return 1;
        }
        while (*s && *s != ',') {
            s++;
        }
    }
    return 0;
}

void adf_merge_vary(request_rec *r)
{
    const char *v1 = apr_table_get(r->headers_out, "Vary");
    const char *v2 = apr_table_get(r->err_headers_out, "Vary");

    if (has_token(v1, "Accept-Encoding") || has_token(v1, "*")
        || has_token(v2, "Accept-Encoding") || has_token(v2, "*")) {
        return;
    }
    apr_table_mergen(r->headers_out, "Vary", "Accept-Encoding");
}

int adf_no_transform(const apr_table_t *t)
{
    return has_token(apr_table_get(t, "Cache-Control"), "no-transform");
}

/* "abc" -> "abc-gzip", W/"abc" -> W/"abc-gzip"; a missing or malformed
 * ETag is left alone. */
static void suffix_etag(request_rec *r, adf_coding_e c)
{
    const char *etag = apr_table_get(r->headers_out, "ETag");
    apr_size_t len;

    if (!etag || (len = strlen(etag)) < 2 || etag[len - 1] != '"') {
        return;
    }
    apr_table_setn(r->headers_out, "ETag",
                   apr_psprintf(r->pool, "%.*s%s\"", (int)(len - 1), etag,
                                etag_suffix[c]));
}

/* Strip our suffixes inside the quoted tags of a conditional header, for
 * the codings this client accepts. */
static const char *strip_suffixes(apr_pool_t *p, const char *value,
                                  const adf_accept_t *acc)
{
    char *out = apr_palloc(p, strlen(value) + 1), *o = out;
    const char *s = value;
    int changed = 0;

    while (*s) {
        if (*s == '"') {
            const char *end = strchr(s + 1, '"');
            apr_size_t len;
            int c;

            if (!end) {
                break;
            }
            len = end - s - 1;
            for (c = ADF_GZIP; c < ADF_NCODINGS; c++) {
                apr_size_t sl = strlen(etag_suffix[c]);
                if (adf_accept_q(acc, (adf_coding_e)c) > 0 && len > sl
                    && !memcmp(end - sl, etag_suffix[c], sl)) {
                    len -= sl;
                    changed = 1;
                    break;
                }
            }
            *o++ = '"';
            memcpy(o, s + 1, len);
            o += len;
            *o++ = '"';
            s = end + 1;
        }
        else {
            *o++ = *s++;
        }
    }
    if (!changed) {
        return value;
    }
    strcpy(o, s);
    return out;
}

int adf_fixup_conditionals(request_rec *r)
{
    static const char *const hdrs[] = { "If-None-Match", "If-Match" };
    const char *ae = apr_table_get(r->headers_in, "Accept-Encoding");
    adf_accept_t acc;
    int i, parsed = 0;

    for (i = 0; ae && i < 2; i++) {
        const char *v = apr_table_get(r->headers_in, hdrs[i]);
        if (v && strchr(v, '-')) {
            if (!parsed) {
                adf_accept_parse(ae, &acc);
                parsed = 1;
            }
            apr_table_setn(r->headers_in, hdrs[i],
                           strip_suffixes(r->pool, v, &acc));
        }
    }
    return DECLINED;
}

void adf_insert_filter(request_rec *r)
{
    adf_dir_conf_t *dc = ap_get_module_config(r->per_dir_config,
                                              &adaptive_deflate_module);
    ap_filter_t *f;

    if (!adf_conf_enabled(dc)) {
        return;
    }
    for (f = r->output_filters; f; f = f->next) {
        if (!strcasecmp(f->frec->name, ADF_FILTER_NAME)) {
            return;
        }
    }
    ap_add_output_filter(ADF_FILTER_NAME, NULL, r, r->connection);
}

/* ---- notes and logging -------------------------------------------------- */

static void note_decision(request_rec *r, const adf_decision_t *d,
                          const adf_load_view_t *load)
{
    const char *ld = "-";

    if (r->status != HTTP_NOT_MODIFIED) {
        adf_shm_count_decision(d);
    }
    if (load->raw >= 0) {
        /* Fixed point by hand: cheaper than %f on every response. */
        int raw = (int)(load->raw * 10 + 0.5);
        int ema = (int)(load->ema * 10 + 0.5);
        int eff = (int)(load->effort * 100 + 0.5);

        ld = apr_psprintf(r->pool, "%d.%d/%d.%d/%d.%02d", raw / 10, raw % 10,
                          ema / 10, ema % 10, eff / 100, eff % 100);
    }
    apr_table_setn(r->notes, ADF_NOTE_PREFIX "coding",
                   d->coding ? adf_coding_name(d->coding) : "identity");
    apr_table_setn(r->notes, ADF_NOTE_PREFIX "level",
                   apr_itoa(r->pool, d->level));
    apr_table_setn(r->notes, ADF_NOTE_PREFIX "reason",
                   adf_reason_name(d->reason));
    apr_table_setn(r->notes, ADF_NOTE_PREFIX "load", ld);
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r,
                  "%s %s: %s (level %d, reason %s, load %s)", r->method,
                  r->uri, d->coding ? adf_coding_name(d->coding)
                                    : "not compressed",
                  d->level, adf_reason_name(d->reason), ld);
}

static void note_sizes(request_rec *r, const adf_stream_t *s)
{
    apr_table_setn(r->notes, ADF_NOTE_PREFIX "in",
                   apr_off_t_toa(r->pool, s->bytes_in));
    apr_table_setn(r->notes, ADF_NOTE_PREFIX "out",
                   apr_off_t_toa(r->pool, s->bytes_out));
    apr_table_setn(r->notes, ADF_NOTE_PREFIX "ratio",
                   s->bytes_in ? apr_itoa(r->pool, (int)(s->bytes_out * 100
                                                         / s->bytes_in))
                               : "-");
    ap_log_rerror(APLOG_MARK, APLOG_TRACE2, 0, r, "%" APR_OFF_T_FMT " -> %"
                  APR_OFF_T_FMT " bytes", s->bytes_in, s->bytes_out);
}

/* ---- the decision ------------------------------------------------------- */

/* The body length if known: Content-Length, or the whole first brigade
 * when it already holds EOS.  A 304 or a HEAD without a body has nothing
 * to measure: only the handler's Content-Length tells. */
static apr_off_t body_length(request_rec *r, apr_bucket_brigade *bb)
{
    const char *cl = apr_table_get(r->headers_out, "Content-Length");
    apr_off_t len;

    if (cl && apr_strtoff(&len, cl, NULL, 10) == APR_SUCCESS && len >= 0) {
        return len;
    }
    if (r->status == HTTP_NOT_MODIFIED
        || APR_BUCKET_IS_EOS(APR_BRIGADE_FIRST(bb))
        || !APR_BUCKET_IS_EOS(APR_BRIGADE_LAST(bb))
        || apr_brigade_length(bb, 0, &len) != APR_SUCCESS) {
        return -1;
    }
    return len;
}

static void decide(request_rec *r, apr_bucket_brigade *bb,
                   const adf_dir_conf_t *dc, const adf_load_view_t *load,
                   adf_decision_t *d)
{
    adf_policy_conf_t pc;
    adf_policy_in_t in;
    adf_accept_t acc;
    const char *ce = apr_table_get(r->headers_out, "Content-Encoding");
    const char *type = r->content_type;
    int not_modified = r->status == HTTP_NOT_MODIFIED;

    if (!ce) {
        ce = r->content_encoding;
    }
    adf_conf_policy(dc, &pc);
    adf_accept_parse(apr_table_get(r->headers_in, "Accept-Encoding"), &acc);
    memset(&in, 0, sizeof(in));
    in.is_subrequest = r->main != NULL;
    /* A 304 answers for the 200 it stands for. */
    in.status_ok = adf_conf_status_ok(dc, not_modified ? HTTP_OK : r->status);
    in.has_encoding = ce && *ce && strcasecmp(ce, "identity");
    in.resp_no_transform = adf_no_transform(r->headers_out)
                           || adf_no_transform(r->err_headers_out);
    in.req_no_transform = adf_no_transform(r->headers_in);
    in.type_ok = adf_type_matches(type ? type : "", adf_conf_types(dc));
    in.env_off = apr_table_get(r->subprocess_env, "no-gzip") != NULL
                 || apr_table_get(r->subprocess_env,
                                  "no-adaptive-deflate") != NULL
                 || (!adf_conf_proxied(dc)
                     && apr_table_get(r->headers_in, "Via") != NULL);
    in.length = body_length(r, bb);
    in.accept = &acc;
    /* A 304 only names the representation: the load does not matter. */
    in.effort = not_modified ? 1 : load->effort;
    in.limited = not_modified ? 0 : load->limited;
    /* The dice only matters between two rungs. */
    in.dice = in.effort > 0 && in.effort < 1
              ? ap_random_pick(0, 999999) / 1e6 : 0;
    adf_policy_decide(&pc, &in, d);
}

/* Headers of the compressed representation. */
static void set_headers(request_rec *r, ap_filter_t *f, adf_coding_e c)
{
    ap_filter_t *n;

    apr_table_unset(r->headers_out, "Content-Length");
    apr_table_unset(r->headers_out, "Content-MD5");
    apr_table_setn(r->headers_out, "Content-Encoding", adf_coding_name(c));
    r->content_encoding = NULL;
    suffix_etag(r, c);
    /* The compressed bytes differ from run to run (the level follows the
     * load), so ranges over them would not be stable: send the full body
     * and do not offer ranges. */
    apr_table_unset(r->headers_out, "Accept-Ranges");
    for (n = f->next; n; n = n->next) {
        if (!strcasecmp(n->frec->name, "BYTERANGE")) {
            ap_remove_output_filter(n);
            break;
        }
    }
}

static apr_status_t sink(void *baton, const char *data, apr_size_t len)
{
    adf_ctx_t *ctx = baton;

    ctx->pending += len;
    return apr_brigade_write(ctx->out, NULL, NULL, data, len);
}

static int is_streaming_type(const char *type)
{
    return type && !strncasecmp(type, "text/event-stream", 17);
}

/* ---- the filter --------------------------------------------------------- */

static apr_status_t pass_out(ap_filter_t *f, adf_ctx_t *ctx)
{
    apr_status_t rv = ap_pass_brigade(f->next, ctx->out);

    apr_brigade_cleanup(ctx->out);
    ctx->pending = 0;
    return rv;
}

/* Sync-flush the coder and pass everything on, ending with a FLUSH (the
 * one given, or a new one). */
static apr_status_t flush_out(ap_filter_t *f, adf_ctx_t *ctx, apr_bucket *e)
{
    apr_status_t rv = adf_stream_write(ctx->stream, NULL, 0, ADF_OP_FLUSH);

    if (!e) {
        e = apr_bucket_flush_create(f->c->bucket_alloc);
    }
    APR_BRIGADE_INSERT_TAIL(ctx->out, e);
    return rv == APR_SUCCESS ? pass_out(f, ctx) : rv;
}

static apr_status_t start(ap_filter_t *f, apr_bucket_brigade *bb)
{
    request_rec *r = f->r;
    adf_dir_conf_t *dc = ap_get_module_config(r->per_dir_config,
                                              &adaptive_deflate_module);
    adf_load_view_t load;
    adf_decision_t d;
    adf_ctx_t *ctx;
    apr_status_t rv;

    if (r->content_encoding && apr_table_get(r->notes, ADF_NOTE_PREFIX
                                             "reason")) {
        /* A precompressed sibling: its notes are already set. */
        ap_remove_output_filter(f);
        return ap_pass_brigade(f->next, bb);
    }
    adf_shm_view(&load);
    decide(r, bb, dc, &load, &d);
    if (d.vary) {
        adf_merge_vary(r);
    }
    if (d.coding == ADF_IDENTITY || r->status == HTTP_NOT_MODIFIED
        || (r->header_only && APR_BUCKET_IS_EOS(APR_BRIGADE_FIRST(bb)))) {
        /* Nothing to compress: at most the headers change. */
        if (d.coding != ADF_IDENTITY) {
            if (r->status == HTTP_NOT_MODIFIED) {
                suffix_etag(r, d.coding);
            }
            else {
                set_headers(r, f, d.coding);
            }
        }
        note_decision(r, &d, &load);
        ap_remove_output_filter(f);
        return ap_pass_brigade(f->next, bb);
    }

    ctx = f->ctx = apr_pcalloc(r->pool, sizeof(*ctx));
    ctx->out = apr_brigade_create(r->pool, f->c->bucket_alloc);
    ctx->flush_each = is_streaming_type(r->content_type);
    rv = adf_stream_open(&ctx->stream, r->pool, d.coding, d.level,
                         body_length(r, bb), 0, sink, ctx);
    if (rv != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r, ADFLOGNO(00007)
                      "cannot start %s level %d; sending uncompressed",
                      adf_coding_name(d.coding), d.level);
        d.coding = ADF_IDENTITY;
        d.level = 0;
        d.reason = ADF_R_CODEC_ERROR;
        note_decision(r, &d, &load);
        ap_remove_output_filter(f);
        return ap_pass_brigade(f->next, bb);
    }
    if (d.coding == ADF_GZIP && adf_conf_length_hiding(dc) > 0) {
        /* A random header length per response hides how much the body
         * shrank (BREACH): 0 to N bytes, plus the field's own 4. */
        adf_stream_pad(ctx->stream, 4 + (apr_size_t)ap_random_pick(
                           0, (apr_uint32_t)adf_conf_length_hiding(dc)));
    }
    set_headers(r, f, d.coding);
    note_decision(r, &d, &load);
    return APR_SUCCESS;
}

apr_status_t adf_out_filter(ap_filter_t *f, apr_bucket_brigade *bb)
{
    adf_ctx_t *ctx;
    apr_status_t rv;

    if (APR_BRIGADE_EMPTY(bb)) {
        return APR_SUCCESS;
    }
    if (!f->ctx) {
        rv = start(f, bb);
        if (!f->ctx) {
            return rv;      /* not compressing: start passed bb on */
        }
    }
    ctx = f->ctx;

    while (!APR_BRIGADE_EMPTY(bb)) {
        apr_bucket *e = APR_BRIGADE_FIRST(bb);
        const char *data;
        apr_size_t len;

        if (APR_BUCKET_IS_EOS(e)) {
            rv = adf_stream_write(ctx->stream, NULL, 0, ADF_OP_FINISH);
            if (rv != APR_SUCCESS) {
                return rv;
            }
            note_sizes(f->r, ctx->stream);
            adf_shm_count_bytes(ctx->stream->codec->coding,
                                ctx->stream->bytes_in,
                                ctx->stream->bytes_out);
            adf_stream_close(ctx->stream);
            APR_BUCKET_REMOVE(e);
            APR_BRIGADE_INSERT_TAIL(ctx->out, e);
            apr_brigade_cleanup(bb);
            ap_remove_output_filter(f);
            return pass_out(f, ctx);
        }
        if (APR_BUCKET_IS_FLUSH(e)) {
            APR_BUCKET_REMOVE(e);
            if ((rv = flush_out(f, ctx, e)) != APR_SUCCESS) {
                return rv;
            }
            continue;
        }
        if (APR_BUCKET_IS_METADATA(e)) {
            APR_BUCKET_REMOVE(e);
            APR_BRIGADE_INSERT_TAIL(ctx->out, e);
            continue;
        }
        rv = apr_bucket_read(e, &data, &len, APR_NONBLOCK_READ);
        if (APR_STATUS_IS_EAGAIN(rv)) {
            /* The source (a CGI, a proxy) has nothing now: send what we
             * have before waiting for more, as the core does. */
            if ((rv = flush_out(f, ctx, NULL)) != APR_SUCCESS) {
                return rv;
            }
            rv = apr_bucket_read(e, &data, &len, APR_BLOCK_READ);
        }
        if (rv != APR_SUCCESS) {
            ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, f->r, ADFLOGNO(00008)
                          "reading the response body failed");
            return rv;
        }
        rv = adf_stream_write(ctx->stream, data, len, ADF_OP_WRITE);
        apr_bucket_delete(e);
        if (rv == APR_SUCCESS && ctx->pending >= ADF_PASS_THRESHOLD) {
            rv = pass_out(f, ctx);
        }
        if (rv != APR_SUCCESS) {
            return rv;
        }
    }
    if (ctx->flush_each) {
        /* An event stream is read as it comes: never hold an event. */
        return flush_out(f, ctx, NULL);
    }
    return APR_SUCCESS;
}
