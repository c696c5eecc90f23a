/* The output filter.
 *
 * It sits at AP_FTYPE_CONTENT_SET + 1, like mod_deflate: after mod_headers'
 * output fixup, so headers set there (Cache-Control: no-transform, a
 * Content-Encoding) are seen.  The first call decides, once, from
 * everything known before the body: either the filter removes itself
 * (setting Vary when another request could have been answered
 * compressed), or it sets the headers of the compressed representation
 * and streams every later bucket through a codec.  FLUSH becomes a sync
 * flush that is passed on at once; EOS finishes the stream and records
 * the request notes.  A HEAD gets the headers without the compressor.
 */
#include "adf_filter.h"
#include "adf_cache.h"
#include "adf_codec.h"
#include "adf_conditional.h"
#include "adf_dict.h"
#include "adf_headers.h"
#include "adf_rand.h"
#include "adf_request.h"
#include "adf_shm.h"
#include "adf_static.h"

#include <apr_strings.h>
#include <http_core.h>
#include <http_protocol.h>
#include <http_request.h>

#include <string.h>
#include <strings.h>
#include <time.h>

/* Pass compressed output on once this much is waiting. */
#define ADF_PASS_THRESHOLD (64 * 1024)
/* The share of responses whose compression CPU is measured, to learn what
 * each rung costs (a clock_gettime around each coder call). */
#define ADF_TIMED_SHARE 0.25

typedef struct {
    adf_stream_t *stream;       /* NULL: a HEAD, the body is dropped */
    apr_bucket_brigade *out;
    apr_off_t pending;          /* bytes in out */
    int flush_each;             /* streaming type: flush every brigade */
    int whole;                  /* the first brigade holds all the body */
    int rung_whole;             /* the model's class of this response */
    int timed;                  /* measure the coder's CPU */
    apr_uint64_t ns;            /* ... so far */
    int count_eligible;         /* length unknown: counted at the end */
    int slow;                   /* ... for a slow client (-1: not asked) */
    int sent;                   /* something was passed on */
    apr_off_t head_bytes;       /* a HEAD's body, which is dropped */
    const char *load;           /* not NULL: d is still to be noted */
    adf_decision_t d;
    const char *etag, *err_etag;    /* the handler's, before our suffix */
} adf_ctx_t;

/* Give data to the coder, measuring its CPU when this response is timed:
 * the thread's own CPU clock, so waiting and other threads do not count. */
static apr_status_t code(adf_ctx_t *ctx, const char *data, apr_size_t len,
                         adf_op_e op)
{
    struct timespec t0, t1;
    apr_status_t rv;

    if (!ctx->timed) {
        return adf_stream_write(ctx->stream, data, len, op);
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    rv = adf_stream_write(ctx->stream, data, len, op);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
    ctx->ns += (apr_uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL
                              + (t1.tv_nsec - t0.tv_nsec));
    return rv;
}

/* The filter's registration: adding it by handle and recognising it by
 * pointer skips a name lookup per request. */
static ap_filter_rec_t *frec;

void adf_filter_register(void)
{
    frec = ap_register_output_filter(ADF_FILTER_NAME, adf_out_filter,
                                     adf_filter_init,
                                     AP_FTYPE_CONTENT_SET + 1);
}

static int has_filter(request_rec *r)
{
    ap_filter_t *f;

    for (f = r->output_filters; f; f = f->next) {
        if (f->frec == frec) {
            return 1;
        }
    }
    return 0;
}

/* Are the stock modules loaded (this generation's configuration)?  Only
 * they read no-gzip and no-brotli. */
static int stock_deflate, stock_brotli;

void adf_filter_post_config(server_rec *s)
{
    static const struct {
        const char *name;
        int *loaded;
    } stock[] = { { "mod_deflate.c", &stock_deflate },
                  { "mod_brotli.c", &stock_brotli } };
    int i;

    for (i = 0; i < 2; i++) {
        *stock[i].loaded = ap_find_linked_module(stock[i].name) != NULL;
        /* Said once, at start: where AdaptiveDeflate is On this module
         * owns compression. */
        if (*stock[i].loaded
            && ap_state_query(AP_SQ_MAIN_STATE) != AP_SQ_MS_CREATE_PRE_CONFIG
            && ap_state_query(AP_SQ_CONFIG_GEN) == 1) {
            ap_log_error(APLOG_MARK, APLOG_NOTICE, 0, s, ADFLOGNO(00011)
                         "%s is loaded too: where AdaptiveDeflate is On, "
                         "this module compresses and %s steps aside; "
                         "elsewhere %s works as configured", stock[i].name,
                         stock[i].name, stock[i].name);
        }
    }
}

/* The ctx of an instance added only to look for siblings (where
 * AdaptiveDeflate is Off): it never compresses. */
static char siblings_only;

void adf_add_filter(request_rec *r)
{
    if (!has_filter(r)) {
        ap_add_output_filter_handle(frec, NULL, r, r->connection);
    }
}

void adf_insert_filter(request_rec *r)
{
    const adf_dir_conf_t *dc = ap_get_module_config(r->per_dir_config,
                                                    &adaptive_deflate_module);

    if (r->main) {
        return;     /* the main request's filter compresses what they add */
    }
    if (adf_conf_enabled(dc)) {
        /* Here this module owns response compression: stock mod_deflate
         * and mod_brotli step aside whatever their filter order. */
        if (stock_deflate) {
            adf_silence_deflate(r);
        }
        if (stock_brotli) {
            apr_table_setn(r->subprocess_env, "no-brotli", "1");
        }
        adf_add_filter(r);
    }
    else if (has_filter(r)) {
        if (!adf_conf_precompressed(dc)) {
            /* ADAPTIVE_DEFLATE set by hand (SetOutputFilter,
             * AddOutputFilter) where the fixup did not look: its ETags
             * revalidate too. */
            adf_cond_for_handler(r, adf_dict_held);
        }
    }
    else if (adf_conf_precompressed(dc)) {
        /* Its init function looks for a sibling once every filter is in. */
        ap_add_output_filter_handle(frec, &siblings_only, r, r->connection);
    }
}

int adf_filter_init(ap_filter_t *f)
{
    request_rec *r = f->r;
    const adf_dir_conf_t *dc = ap_get_module_config(r->per_dir_config,
                                                    &adaptive_deflate_module);
    adf_req_t *st = adf_req(r);

    if (!r->main && !st->looked
        && (adf_conf_precompressed(dc) || adf_cache_applies(r, dc))) {
        st->looked = 1;
        adf_static_swap(r, dc);
    }
    return OK;
}

/* ---- notes and logging -------------------------------------------------- */

/* v / 10^decimals as "I.FF" at *p; returns the end.  By hand: a
 * formatter per response costs more than the rest of the notes. */
static char *fixed(char *p, double v, int decimals)
{
    int scale = decimals == 2 ? 100 : 10;
    unsigned n = (unsigned)(v * scale + 0.5), ip = n / scale, f = n % scale;
    char digits[12];
    int k = 0;

    do {
        digits[k++] = (char)('0' + ip % 10);
        ip /= 10;
    } while (ip && k < 11);
    while (k) {
        *p++ = digits[--k];
    }
    *p++ = '.';
    if (decimals == 2) {
        *p++ = (char)('0' + f / 10);
    }
    *p++ = (char)('0' + f % 10);
    return p;
}

/* "raw/smoothed/effort", e.g. "62.5/60.1/0.75".  The load changes once
 * an interval: each thread keeps its last text and copies it. */
static const char *load_note(apr_pool_t *p, const adf_load_view_t *load)
{
    static __thread struct {
        double raw, ema, effort;
        apr_size_t len;         /* 0: empty */
        char text[48];
    } last;
    char *e;

    if (!last.len || last.raw != load->raw || last.ema != load->ema
        || last.effort != load->effort) {
        e = fixed(last.text, load->raw, 1);
        *e++ = '/';
        e = fixed(e, load->ema, 1);
        *e++ = '/';
        e = fixed(e, load->effort, 2);
        last.len = e - last.text;
        last.raw = load->raw;
        last.ema = load->ema;
        last.effort = load->effort;
    }
    return apr_pstrmemdup(p, last.text, last.len);
}

/* The load note's text: "-" without a signal, or where neither the notes
 * nor the trace log read it. */
static const char *load_text(request_rec *r, const adf_load_view_t *load)
{
    return load && load->raw >= 0 && (adf_config_notes() || APLOGrtrace1(r))
           ? load_note(r->pool, load) : "-";
}

static void note_decision(request_rec *r, const adf_decision_t *d,
                          const char *ld)
{
    if (r->status == HTTP_NOT_MODIFIED) {
        /* counted as responses with a body only */
    }
    else if (d->reason == ADF_R_PRECOMPRESSED) {
        adf_shm_count_sibling(d->coding);
    }
    else {
        adf_shm_count_decision(d);
    }
    /* Set once per request (the first instance claims it): added, not
     * set, which would search the table for an older value first. */
    if (adf_config_notes()) {
        apr_table_addn(r->notes, ADF_NOTE_PREFIX "coding",
                       d->coding ? adf_coding_name(d->coding) : "identity");
        apr_table_addn(r->notes, ADF_NOTE_PREFIX "level",
                       d->reason == ADF_R_PRECOMPRESSED
                       || d->reason == ADF_R_CACHE_HIT ? "-"
                       : !d->level ? "0" : apr_itoa(r->pool, d->level));
        apr_table_addn(r->notes, ADF_NOTE_PREFIX "reason",
                       adf_reason_name(d->reason));
        apr_table_addn(r->notes, ADF_NOTE_PREFIX "load", ld);
    }
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r,
                  "%s %s: %s (level %d, reason %s, load %s)", r->method,
                  r->uri, d->coding ? adf_coding_name(d->coding)
                                    : "not compressed",
                  d->level, adf_reason_name(d->reason), ld);
}

static void note_sizes(request_rec *r, const adf_stream_t *s, int timed,
                       apr_uint64_t ns)
{
    apr_off_t in = adf_stream_bytes_in(s), out = adf_stream_bytes_out(s);

    if (adf_config_trace_notes()) {
        /* the coder's CPU, where this response was timed */
        apr_table_addn(r->notes, ADF_NOTE_PREFIX "cpu",
                       timed ? apr_psprintf(r->pool, "%" APR_UINT64_T_FMT,
                                            ns) : "-");
    }
    if (adf_config_notes()) {
        apr_table_addn(r->notes, ADF_NOTE_PREFIX "in",
                       apr_off_t_toa(r->pool, in));
        apr_table_addn(r->notes, ADF_NOTE_PREFIX "out",
                       apr_off_t_toa(r->pool, out));
        apr_table_addn(r->notes, ADF_NOTE_PREFIX "ratio",
                       in ? apr_itoa(r->pool, (int)(out * 100 / in)) : "-");
    }
    ap_log_rerror(APLOG_MARK, APLOG_TRACE2, 0, r, "%" APR_OFF_T_FMT " -> %"
                  APR_OFF_T_FMT " bytes", in, out);
}

/* ---- the decision ------------------------------------------------------- */

/* A Content-Length as handlers write it (digits only) by hand, else by
 * apr_strtoff: strtol's locale machinery costs more than the rest of
 * this function. */
static int parse_length(const char *cl, apr_off_t *len)
{
    const char *p = cl;
    apr_off_t n = 0;

    while (*p >= '0' && *p <= '9' && p - cl < 18) {
        n = n * 10 + (*p++ - '0');
    }
    if (!*p && p > cl) {
        *len = n;
        return 1;
    }
    return apr_strtoff(len, cl, NULL, 10) == APR_SUCCESS && *len >= 0;
}

/* The body length if known: Content-Length (cl, as the handler set it),
 * or the whole first brigade when it already holds EOS.  A 304 or a HEAD
 * without a body has nothing to measure: only the handler's
 * Content-Length tells. */
static apr_off_t body_length(request_rec *r, apr_bucket_brigade *bb,
                             const char *cl)
{
    apr_off_t len;

    if (cl && parse_length(cl, &len)) {
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

static int is_streaming_type(const char *type)
{
    return type && !strncasecmp(type, "text/event-stream", 17);
}

/* Is the whole body in this first brigade (its class for the model)? */
static int whole_body(request_rec *r, apr_bucket_brigade *bb, apr_off_t len)
{
    return len >= 0 && len <= ADF_WHOLE_MAX
           && APR_BUCKET_IS_EOS(APR_BRIGADE_LAST(bb))
           && !is_streaming_type(r->content_type);
}

/* The client's path in ns per byte (TCP's window over its round trip),
 * 0 where TCP cannot tell yet (adf_policy.h); -1 for a request an
 * intermediary made (Via, Forwarded, X-Forwarded-For): a cache stores the
 * bytes and sends them on over paths this connection says nothing
 * about, and the budget alone judges it.  Not asked where it cannot
 * matter: under the limit, without a signal, for a 304.
 * adf_client_rate may answer from the connection's last asks. */
static double client_ns(request_rec *r, const adf_load_view_t *load)
{
    apr_uint64_t rate;

    if (load->limited || load->stale || r->status == HTTP_NOT_MODIFIED) {
        return 0;
    }
    if (apr_table_get(r->headers_in, "Via")
        || apr_table_get(r->headers_in, "Forwarded")
        || apr_table_get(r->headers_in, "X-Forwarded-For")) {
        return -1;
    }
    rate = adf_client_rate(r);
    return rate ? 1e9 / (double)rate : 0;
}

/* A client that holds a dictionary for this response: the coding made
 * against it goes first, ahead of the operator's order and of value, at
 * the one level the dictionary is prepared at (adf_dict_for priced it,
 * its preparation included: under load it gets none).  Returns whether
 * it did. */
static int prefer_dict(request_rec *r, const adf_dir_conf_t *dc,
                       const adf_accept_t *acc, adf_policy_conf_t *pc)
{
    int named;

    if (adf_conf_length_hiding(dc) > 0) {
        return 0;       /* only a coding that pads hides lengths (BREACH) */
    }
    if (!adf_dict_for(r, acc, &named)) {
        if (named) {
            adf_note(r, "dictionary", "miss");
            if (r->status != HTTP_NOT_MODIFIED) {
                adf_shm_count_dict(0, 0);
            }
        }
        return 0;
    }
    memmove(pc->prefs + 1, pc->prefs,
            sizeof(pc->prefs[0]) * (pc->nprefs < ADF_MAX_PREFS
                                    ? pc->nprefs : ADF_MAX_PREFS - 1));
    pc->prefs[0] = ADF_DCZ;
    pc->nprefs += pc->nprefs < ADF_MAX_PREFS;
    pc->by_value = 0;
    /* coded at the level its dictionary was prepared at */
    pc->level_min[ADF_DCZ] = pc->level_max[ADF_DCZ]
        = adf_dict_level(adf_req(r)->dict);
    return 1;
}

/* A decision no rung, order or load can change (the status, the type, a
 * client that accepts no coding): of the settings only the smallest
 * length counts (dc NULL: not even that). */
static void decide_alone(const adf_dir_conf_t *dc, const adf_policy_in_t *in,
                         adf_decision_t *d)
{
    static const adf_policy_conf_t none;
    adf_policy_conf_t pc;

    if (!dc) {
        adf_policy_decide(&none, in, d);    /* no settings: none cleared */
        return;
    }
    memset(&pc, 0, sizeof(pc));
    pc.min_length = adf_conf_min_length(dc);
    adf_policy_decide(&pc, in, d);
}

/* The decision; *slow tells whether the client's path was found slow
 * (1), fast (0) or was not asked (-1); *len is the body's length (-1:
 * unknown, or not looked at); *h the response's header fields.
 * The load is read into *load only where it can matter: returns load,
 * or NULL where the status, the type or a client that accepts no coding
 * decided alone. */
static const adf_load_view_t *decide(request_rec *r, apr_bucket_brigade *bb,
                                     const adf_dir_conf_t *dc,
                                     adf_load_view_t *load, int *slow,
                                     apr_off_t *len, adf_resp_fields_t *h,
                                     adf_accept_t *acc, adf_decision_t *d)
{
    adf_policy_conf_t pc;
    adf_policy_in_t in;
    int not_modified = r->status == HTTP_NOT_MODIFIED, none;

    adf_request_facts(r, dc, acc, &in, h);
    *slow = -1;
    *len = -1;
    if (!in.status_ok || !in.type_ok) {
        /* decided on these alone: no settings, length or load needed */
        decide_alone(NULL, &in, d);
        return NULL;
    }
    in.length = *len = body_length(r, bb, h->length);
    none = adf_accept_none(acc);
    if (none && !adf_config_dicts_used()) {
        /* Identity whatever the load and the rungs: only the length and
         * the request's own facts can give another reason. */
        decide_alone(dc, &in, d);
        return NULL;
    }
    adf_conf_policy(dc, &pc);
    if (prefer_dict(r, dc, acc, &pc)) {
        /* a dictionary the client holds: its coding first */
    }
    else if (none) {
        adf_policy_decide(&pc, &in, d);
        return NULL;
    }
    adf_shm_view(load);
    if (adf_config_trace_notes()) {
        /* the budget this response is decided with */
        apr_table_addn(r->notes, ADF_NOTE_PREFIX "budget",
                       apr_psprintf(r->pool, "%.3g", load->budget));
    }
    in.model = load->model;
    in.model_gen = load->model_gen;
    in.budget = load->budget;
    in.limited = load->limited;
    in.failsafe = load->stale;
    in.not_modified = not_modified;
    if (!in.limited) {
        /* the rungs and the dice: not consulted over the limit */
        in.whole = whole_body(r, bb, in.length);
        in.dice = adf_rand01();
        /* the client's path (TCP_INFO, a system call): rungs it gains no
         * time from are not bought for it, and whether the budget held
         * its response back sets the controller's goal */
        in.client_ns = client_ns(r, load);
        in.idle_budget = load->idle_budget;
    }
    adf_policy_decide(&pc, &in, d);
    if (adf_config_trace_notes() && in.client_ns != 0) {
        /* the client's path, ns per byte; "+": it waits on it (a larger
         * budget would buy it time) */
        apr_table_addn(r->notes, ADF_NOTE_PREFIX "path",
                       apr_psprintf(r->pool, "%.3g%s", in.client_ns,
                                    d->waits > 0 ? "+" : ""));
    }
    *slow = d->waits;
    if (d->coding == ADF_IDENTITY && d->reason == ADF_R_LOAD
        && adf_req(r)->dict_over_stored) {
        /* The swap passed over stored bytes for the dictionary while the
         * load allowed it: sending less than those now would be worse. */
        d->coding = ADF_DCZ;
        d->level = pc.level_min[ADF_DCZ];
        d->reason = ADF_R_TARGET;
    }
    if (adf_coding(d->coding) && adf_coding(d->coding)->needs_dict) {
        /* what would have gone out without it: what it saves */
        adf_policy_conf_t plain;
        adf_decision_t alt;

        adf_conf_policy(dc, &plain);
        adf_policy_decide(&plain, &in, &alt);
        adf_req(r)->dict_alt = alt.coding;
        adf_req(r)->dict_alt_level = alt.level;
    }
    return load;
}

/* The dictionary the client holds that the server would code r's
 * response against (adf_dict_for found it), or NULL. */
static const unsigned char *dict_hash(const request_rec *r)
{
    const adf_req_t *st = adf_req_peek(r);

    return st && st->dict ? st->dict->hash : NULL;
}

/* The ETag suffix of coding c on the fly: a coding made against a
 * dictionary names it, so that clients holding different ones never
 * share a tag. */
static const char *etag_suffix(request_rec *r, adf_coding_e c)
{
    return adf_fly_etag_suffix(r->pool, c, dict_hash(r));
}

/* Headers of the compressed representation. */
static void set_headers(request_rec *r, ap_filter_t *f, adf_coding_e c)
{
    ap_filter_t *n;

    apr_table_unset(r->headers_out, "Content-Length");
    apr_table_unset(r->err_headers_out, "Content-Length");
    apr_table_unset(r->headers_out, "Content-MD5");
    apr_table_unset(r->err_headers_out, "Content-Encoding");
    apr_table_setn(r->headers_out, "Content-Encoding", adf_coding_name(c));
    r->content_encoding = NULL;
    /* The compressed bytes differ from run to run (the level follows the
     * load): their tag is weak (RFC 9110, 8.8.1), and ranges over them
     * would not be stable: send the full body and do not offer ranges. */
    adf_etag_append(r, etag_suffix(r, c), 1);
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

/* A body sent against a dictionary, and what it saved against the coding
 * the client would have got without (the model's ratio for that rung). */
static void count_dict_hit(request_rec *r, const adf_stream_t *s, int whole)
{
    const adf_req_t *st = adf_req_peek(r);
    adf_load_view_t load;
    double cost, ratio = 1;
    apr_off_t in = adf_stream_bytes_in(s);

    if (st && st->dict_alt != ADF_IDENTITY) {
        adf_shm_view(&load);
        adf_model_rung(load.model, st->dict_alt, st->dict_alt_level, whole,
                       &cost, &ratio);
    }
    adf_shm_count_dict(1, (apr_off_t)(in * ratio) - adf_stream_bytes_out(s));
}

/* ---- the filter --------------------------------------------------------- */

/* The decision deferred to a body's first byte (start): the headers go
 * now, so it stands. */
static void commit(request_rec *r, adf_ctx_t *ctx)
{
    if (ctx->load) {
        note_decision(r, &ctx->d, ctx->load);
        ctx->load = NULL;
    }
}

static apr_status_t pass_out(ap_filter_t *f, adf_ctx_t *ctx)
{
    apr_status_t rv;

    commit(f->r, ctx);
    ctx->sent = 1;
    rv = ap_pass_brigade(f->next, ctx->out);

    apr_brigade_cleanup(ctx->out);
    ctx->pending = 0;
    return rv;
}

/* Sync-flush the coder and pass everything on, ending with a FLUSH (the
 * one given, or a new one). */
static apr_status_t flush_out(ap_filter_t *f, adf_ctx_t *ctx, apr_bucket *e)
{
    apr_status_t rv = ctx->stream ? code(ctx, NULL, 0, ADF_OP_FLUSH)
                                  : APR_SUCCESS;

    if (!e) {
        e = apr_bucket_flush_create(f->c->bucket_alloc);
    }
    APR_BRIGADE_INSERT_TAIL(ctx->out, e);
    return rv == APR_SUCCESS ? pass_out(f, ctx) : rv;
}

/* The whole body, given to the coder in one call: without a copy when it
 * is one bucket that reads whole (a mapped file), else flattened. */
static apr_status_t compress_whole(request_rec *r, adf_ctx_t *ctx,
                                   apr_bucket_brigade *bb)
{
    apr_bucket *e = APR_BRIGADE_FIRST(bb), *eos;
    apr_bucket_brigade *rest;
    const char *data;
    apr_size_t len;
    char *flat;
    apr_status_t rv;

    if (!APR_BUCKET_IS_METADATA(e) && APR_BUCKET_IS_EOS(APR_BUCKET_NEXT(e))
        && (rv = apr_bucket_read(e, &data, &len, APR_BLOCK_READ))
           == APR_SUCCESS
        && APR_BUCKET_IS_EOS(APR_BUCKET_NEXT(e))) {
        rv = code(ctx, data, len, ADF_OP_FINISH);
        apr_bucket_delete(e);
        return rv;
    }
    for (eos = APR_BRIGADE_FIRST(bb); !APR_BUCKET_IS_EOS(eos);
         eos = APR_BUCKET_NEXT(eos)) {
    }
    rest = apr_brigade_split(bb, eos);
    rv = apr_brigade_pflatten(bb, &flat, &len, r->pool);
    apr_brigade_cleanup(bb);
    APR_BRIGADE_CONCAT(bb, rest);
    if (rv != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r, ADFLOGNO(00008)
                      "reading the response body failed");
        return rv;
    }
    return code(ctx, flat, len, ADF_OP_FINISH);
}

/* The body was empty (a CGI that printed only its headers) and nothing
 * went out yet: it goes as it is, not as an empty compressed stream. */
static void send_empty(request_rec *r, adf_ctx_t *ctx)
{
    if (ctx->stream) {
        adf_stream_close(ctx->stream);
        ctx->stream = NULL;
    }
    apr_table_unset(r->headers_out, "Content-Encoding");
    if (ctx->etag) {
        apr_table_setn(r->headers_out, "ETag", ctx->etag);
    }
    if (ctx->err_etag) {
        apr_table_setn(r->err_headers_out, "ETag", ctx->err_etag);
    }
    ctx->d.coding = ADF_IDENTITY;
    ctx->d.level = 0;
    ctx->d.reason = ADF_R_MIN_LENGTH;
    commit(r, ctx);
}

/* Take the filter out and let the response go as it is. */
static apr_status_t step_aside(ap_filter_t *f, apr_bucket_brigade *bb)
{
    ap_remove_output_filter(f);
    return ap_pass_brigade(f->next, bb);
}

/* A response of several representations, whose tag is now final: a
 * range of it only for an If-Range that names exactly its bytes (a
 * strong tag; every coding of F has F's Last-Modified, so a date cannot
 * say whose bytes the client holds): otherwise all of it, never a part
 * of one body spliced onto another. */
static void if_range(request_rec *r)
{
    const char *ir = apr_table_get(r->headers_in, "If-Range");

    if (ir && !adf_tag_range_ok(ir, adf_etag_of(r), 1)) {
        apr_table_unset(r->headers_in, "Range");
    }
}

/* The tag of a 304 for a response of several representations: the
 * client's own, naming what it keeps (adf_cond_not_modified); for "*"
 * the tag of what is chosen now (suffix, weak or not).  A 304 the
 * handler made for a reason of its own (a date, If-Modified-Since alone)
 * keeps its tag only if the client holds that tag, else goes without
 * one: it cannot say which representation the client holds, and another
 * one's tag would relabel the client's copy. */
static void not_modified_tag(request_rec *r, const adf_tag_now_t *now,
                             const char *suffix, int weak)
{
    const char *etag = adf_etag_of(r), *tag;

    if (adf_cond_not_modified(r, now, etag, &tag)) {
        if (tag) {
            adf_etag_set(r, tag);
        }
        else if (suffix) {
            adf_etag_append(r, suffix, weak);
        }
    }
    else if (etag && !adf_cond_holds(r, etag)) {
        apr_table_unset(r->headers_out, "ETag");
        apr_table_unset(r->err_headers_out, "ETag");
    }
}

/* A 200 the client's held tag answers (adf_cond_not_modified: a handler
 * that does not compare tags, or a negotiated one that compares them
 * with its unclosed own): a 304 with that tag, the body dropped (the
 * header filter drops what follows). */
static void answer_not_modified(request_rec *r, apr_bucket_brigade *bb,
                                const adf_tag_now_t *now)
{
    const char *held = adf_cond_held(r), *tag;
    apr_bucket *e, *next;

    if (r->status != HTTP_OK || r->method_number != M_GET || !held
        || !adf_cond_not_modified(r, now, adf_etag_of(r), &tag) || !tag) {
        return;
    }
    r->status = HTTP_NOT_MODIFIED;
    r->status_line = NULL;
    adf_etag_set(r, tag);
    for (e = APR_BRIGADE_FIRST(bb); e != APR_BRIGADE_SENTINEL(bb); e = next) {
        next = APR_BUCKET_NEXT(e);
        if (!APR_BUCKET_IS_METADATA(e)) {
            apr_bucket_delete(e);
        }
    }
}

/* Do the response's own headers, set after the swap looked (mod_headers),
 * say that F goes out as it is: encoded already (a pre-gzipped F.css.gz
 * labelled so), or not to be transformed?  *why says which. */
static int as_is(const adf_resp_fields_t *h, adf_reason_e *why)
{
    if (h->encoding) {
        *why = ADF_R_ENCODED;
        return 1;
    }
    if (h->no_transform) {
        *why = ADF_R_NO_TRANSFORM;
        return 1;
    }
    return 0;
}

/* Vary: Accept-Encoding, and Available-Dictionary where a dictionary
 * could change the answer, and the fields the dictionary's rule read.
 * h: the response's fields as read. */
static void vary(request_rec *r, const adf_resp_fields_t *h)
{
    const adf_req_t *st;

    adf_merge_vary(r, h);
    if (adf_dict_could(r)) {
        adf_vary_add(r, "Available-Dictionary");
        /* a cache that stored the dictionary's answer must not give it
         * to a request the fetch rule refuses (adf_dict_fetch_allows) */
        if ((st = adf_req_peek(r)) && st->fetch_read) {
            adf_vary_add(r, "Sec-Fetch-Site");
            adf_vary_add(r, "Sec-Fetch-Mode");
        }
    }
}

/* An answer coded against a dictionary that is no earlier version of
 * its file is this client's: the access check on the dictionary's URL
 * let it have it, and a shared cache must not give it to one the check
 * refuses (Vary names no client).  A 304 for it, too. */
static void dict_private(request_rec *r, const adf_req_t *st,
                         adf_coding_e c)
{
    if (st->dict_private && adf_coding(c)->needs_dict) {
        adf_private_to_client(r);
    }
}

/* A precompressed sibling or a cache entry goes out as its own bytes with
 * validators of its own, unless the response's own headers, set after the
 * swap (mod_headers), say F goes out as it is. */
static apr_status_t send_stored(ap_filter_t *f, apr_bucket_brigade *bb,
                                const adf_req_t *st,
                                const adf_resp_fields_t *h)
{
    request_rec *r = f->r;
    adf_decision_t d;
    adf_reason_e why;

    memset(&d, 0, sizeof(d));
    if (r->status != HTTP_NOT_MODIFIED && as_is(h, &why)
        && adf_static_unswap(r, bb, why == ADF_R_ENCODED) == APR_SUCCESS) {
        d.reason = why;
        d.vary = 1;
        note_decision(r, &d, "-");
        return step_aside(f, bb);
    }
    d.coding = st->sibling;
    d.reason = st->cache_hit ? ADF_R_CACHE_HIT : ADF_R_PRECOMPRESSED;
    d.level = -1;       /* no level of ours: none is counted */
    if (r->status == HTTP_NOT_MODIFIED) {
        adf_tag_now_t now;
        adf_accept_t acc;

        adf_accept_parse(apr_table_get(r->headers_in, "Accept-Encoding"),
                         &acc);
        memset(&now, 0, sizeof(now));
        now.accept = &acc;
        now.stored = st->etag_suffix;
        now.chosen = st->sibling;
        not_modified_tag(r, &now, st->etag_suffix, 0);
    }
    else {
        /* fixed by their content: a strong tag */
        adf_etag_append(r, st->etag_suffix, 0);
    }
    if (st->cache_hit) {
        adf_cache_hit(r, st->cache);
    }
    if (adf_coding(d.coding)->needs_dict) {
        adf_note(r, "dictionary", "hit");   /* a delta, kept */
    }
    dict_private(r, st, d.coding);
    if_range(r);
    note_decision(r, &d, "-");
    return step_aside(f, bb);
}

/* The coder for the response's body (len bytes, -1: unknown; bb its
 * first brigade), in ctx. */
static apr_status_t open_coder(request_rec *r, adf_ctx_t *ctx,
                               const adf_dir_conf_t *dc,
                               const adf_decision_t *d, apr_off_t len,
                               int slow, apr_bucket_brigade *bb)
{
    adf_stream_opts_t o = { adf_coding(d->coding), d->level, len, 0, 0,
                            NULL };
    int pad = o.coding->pads ? adf_conf_length_hiding(dc) : 0;
    apr_status_t rv;

    ctx->flush_each = is_streaming_type(r->content_type);
    /* All of it here (a static file, a short generated page): one call,
     * and the coding may use a one-shot encoder. */
    ctx->whole = ctx->rung_whole = whole_body(r, bb, len);
    ctx->timed = adf_rand01() < ADF_TIMED_SHARE;
    ctx->count_eligible = len < 0;
    ctx->slow = slow;
    o.flags = (ctx->whole ? ADF_STREAM_WHOLE : 0)
              | (adf_conf_length_hiding(dc) > 0 ? ADF_STREAM_PAD : 0);
    o.dict = o.coding->needs_dict ? adf_req_peek(r)->dict : NULL;
    if ((rv = adf_stream_open(&ctx->stream, r->pool, &o, sink, ctx))
        != APR_SUCCESS) {
        return rv;
    }
    if (pad > 0) {
        /* A random header length per response hides how much the body
         * shrank (BREACH): 0 to N bytes, plus the field's own 4. */
        adf_stream_pad(ctx->stream,
                       4 + (apr_size_t)ap_random_pick(0, (apr_uint32_t)pad));
    }
    return APR_SUCCESS;
}

/* The response's first brigade: claim it, send stored bytes, or decide
 * and set up the coder. */
static apr_status_t start(ap_filter_t *f, apr_bucket_brigade *bb)
{
    request_rec *r = f->r;
    adf_dir_conf_t *dc = ap_get_module_config(r->per_dir_config,
                                              &adaptive_deflate_module);
    adf_req_t *st = adf_req(r);
    int only_siblings = f->ctx == &siblings_only;
    adf_load_view_t load;
    const adf_load_view_t *seen;
    adf_resp_fields_t h;
    adf_accept_t acc;
    adf_tag_now_t now;
    adf_decision_t d;
    adf_ctx_t *ctx;
    apr_status_t rv;
    adf_reason_e why;
    int slow;
    apr_off_t len;

    f->ctx = NULL;
    if (st->claimed) {
        /* A second instance (AdaptiveDeflate On beside an explicit or
         * by-type ADAPTIVE_DEFLATE): the first one decides and counts. */
        return step_aside(f, bb);
    }
    st->claimed = 1;
    if (st->vary || st->sibling || st->miss) {
        /* the fields as mod_headers left them, read once for all three */
        adf_resp_fields(r, &h);
    }
    if (st->vary) {
        /* Here, after mod_headers: its "Header set Vary" replaces. */
        vary(r, &h);
    }
    if (st->version_kept) {
        adf_dict_advertise(r);
    }
    if (st->sibling) {
        return send_stored(f, bb, st, &h);
    }
    if (st->miss && r->status == HTTP_OK && !as_is(&h, &why)) {
        /* F goes out as itself or on the fly: the worker may make it */
        adf_cache_miss(r, st->miss, st->miss_codings);
    }
    if (only_siblings) {
        return step_aside(f, bb);
    }

    memset(&d, 0, sizeof(d));
    seen = decide(r, bb, dc, &load, &slow, &len, &h, &acc, &d);
    if (d.vary) {
        /* h was read: a decision on status or type alone has no Vary */
        vary(r, &h);
        memset(&now, 0, sizeof(now));
        now.accept = &acc;
        now.dict = dict_hash(r);
        now.chosen = d.coding;
        answer_not_modified(r, bb, &now);
    }
    if (r->status == HTTP_OK && adf_config_dicts_used()) {
        adf_dict_link(r);
    }
    if (r->status != HTTP_NOT_MODIFIED && !r->header_only
        && (d.coding != ADF_IDENTITY || d.reason == ADF_R_LOAD
            || d.reason == ADF_R_CPU_LIMIT)) {
        /* What the controller could have spent its budget on; a body of
         * unknown length that is compressed is counted at its end. */
        if (len >= 0 || d.coding == ADF_IDENTITY) {
            adf_shm_count_eligible(len, slow);
        }
    }
    if (d.coding != ADF_IDENTITY) {
        dict_private(r, st, d.coding);
    }
    if (d.coding == ADF_IDENTITY || r->status == HTTP_NOT_MODIFIED) {
        /* Nothing to compress.  A 304 names what the client keeps; the
         * identity of a response that varies is ranged only by its own
         * tag. */
        if (d.vary && r->status == HTTP_NOT_MODIFIED) {
            not_modified_tag(r, &now, d.coding ? etag_suffix(r, d.coding)
                                               : NULL, 1);
        }
        else if (d.vary) {
            if_range(r);
        }
        note_decision(r, &d, load_text(r, seen));
        return step_aside(f, bb);
    }

    if (adf_coding(d.coding)->needs_dict) {
        adf_note(r, "dictionary", "hit");
    }
    ctx = f->ctx = apr_pcalloc(r->pool, sizeof(*ctx));
    ctx->out = apr_brigade_create(r->pool, f->c->bucket_alloc);
    if (!r->header_only
        && (rv = open_coder(r, ctx, dc, &d, len, slow, bb)) != APR_SUCCESS) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, r, ADFLOGNO(00007)
                      "cannot start %s level %d; sending uncompressed",
                      adf_coding_name(d.coding), d.level);
        d.coding = ADF_IDENTITY;
        d.level = 0;
        d.reason = ADF_R_CODEC_ERROR;
        note_decision(r, &d, load_text(r, seen));
        f->ctx = NULL;
        return step_aside(f, bb);
    }
    ctx->etag = apr_table_get(r->headers_out, "ETag");
    ctx->err_etag = apr_table_get(r->err_headers_out, "ETag");
    set_headers(r, f, d.coding);
    if (len < 0) {
        /* A body of unknown length may turn out empty: decided for good
         * at its first byte (adf_out_filter); a HEAD's as its GET's. */
        ctx->d = d;
        ctx->load = load_text(r, seen);
        return APR_SUCCESS;
    }
    note_decision(r, &d, load_text(r, seen));
    return APR_SUCCESS;
}

apr_status_t adf_out_filter(ap_filter_t *f, apr_bucket_brigade *bb)
{
    adf_ctx_t *ctx;
    apr_status_t rv;

    if (APR_BRIGADE_EMPTY(bb)) {
        return APR_SUCCESS;
    }
    if (!f->ctx || f->ctx == &siblings_only) {
        rv = start(f, bb);
        if (!f->ctx) {
            return rv;      /* not compressing: start passed bb on */
        }
    }
    ctx = f->ctx;
    if (ctx->whole) {
        ctx->whole = 0;
        if ((rv = compress_whole(f->r, ctx, bb)) != APR_SUCCESS) {
            return rv;
        }
    }

    while (!APR_BRIGADE_EMPTY(bb)) {
        apr_bucket *e = APR_BRIGADE_FIRST(bb);
        const char *data;
        apr_size_t len;

        if (APR_BUCKET_IS_EOS(e)) {
            if (ctx->load && !ctx->sent
                && !(ctx->stream ? adf_stream_bytes_in(ctx->stream)
                                 : ctx->head_bytes)) {
                send_empty(f->r, ctx);
            }
            if (ctx->stream) {
                adf_stream_t *s = ctx->stream;

                if ((rv = code(ctx, NULL, 0, ADF_OP_FINISH)) != APR_SUCCESS) {
                    return rv;
                }
                note_sizes(f->r, s, ctx->timed, ctx->ns);
                adf_shm_count_bytes(adf_stream_coding(s),
                                    adf_stream_bytes_in(s),
                                    adf_stream_bytes_out(s));
                adf_shm_count_rung(adf_stream_coding(s), adf_stream_level(s),
                                   ctx->rung_whole, adf_stream_bytes_in(s),
                                   adf_stream_bytes_out(s), ctx->ns);
                if (adf_coding(adf_stream_coding(s))->needs_dict) {
                    count_dict_hit(f->r, s, ctx->rung_whole);
                }
                if (ctx->count_eligible) {
                    adf_shm_count_eligible(adf_stream_bytes_in(s),
                                           ctx->slow);
                }
                adf_stream_close(s);
            }
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
        if (!ctx->stream) {
            /* HEAD: the body would be dropped after the headers anyway;
             * dropping it here keeps its length out of Content-Length.
             * Whether it has a byte decides its headers, as for GET. */
            if (ctx->load && !ctx->head_bytes
                && apr_bucket_read(e, &data, &len, APR_BLOCK_READ)
                   == APR_SUCCESS) {
                ctx->head_bytes = (apr_off_t)len;
            }
            apr_bucket_delete(e);
            continue;
        }
        rv = apr_bucket_read(e, &data, &len, APR_NONBLOCK_READ);
        if (APR_STATUS_IS_EAGAIN(rv)) {
            /* The source (a CGI, a proxy) has nothing now: send what we
             * have before waiting for more, as the core does; before its
             * first byte, nothing (it may have none at all). */
            if (adf_stream_bytes_in(ctx->stream)
                && (rv = flush_out(f, ctx, NULL)) != APR_SUCCESS) {
                return rv;
            }
            rv = apr_bucket_read(e, &data, &len, APR_BLOCK_READ);
        }
        if (rv != APR_SUCCESS) {
            ap_log_rerror(APLOG_MARK, APLOG_ERR, rv, f->r, ADFLOGNO(00008)
                          "reading the response body failed");
            return rv;
        }
        /* (an empty write would start the stream: zlib writes its
         * header) */
        rv = len ? code(ctx, data, len, ADF_OP_WRITE) : APR_SUCCESS;
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
