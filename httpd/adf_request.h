/* What one request's hooks tell each other: kept in r->request_config,
 * never in notes (those are for logs). */
#ifndef ADF_REQUEST_H
#define ADF_REQUEST_H

#include "adf_private.h"
#include "adf_config.h"
#include "adf_negotiate.h"
#include "adf_policy.h"
#include "adf_headers.h"
#include "adf_codec.h"

typedef struct {
    adf_coding_e sibling;   /* a precompressed sibling is being served */
    int cache_hit;          /* ... and it is a compressed cache entry */
    struct adf_cache_req_t *cache;  /* of this one (adf_cache.h) */
    struct adf_cache_req_t *miss;   /* F could be cached there: queued once
                                     * the filter sees the response's own
                                     * headers (a late Content-Encoding) */
    apr_uint32_t miss_codings;      /* ... in these (a bit per coding) */
    const int *stored_fd;   /* ... open and checked (NULL: not open) */
    const struct adf_held_t *held;  /* ... or held by the child */
    const char *stored_name;        /* ... its r->filename meanwhile */
    const char *plain;      /* ... in place of this file (plain_finfo) */
    const char *etag_suffix;        /* ... its ETag's (adf_headers.h) */
    int claimed;            /* a filter instance owns this response */
    int looked;             /* the sibling swap was considered */
    int vary;               /* ... and a sibling exists: the answer varies */
    const struct adf_dict_conf_t *served_dict;  /* this is its URL */
    const adf_dict_t *dict; /* the client holds it: dcz (adf_dict_for) */
    int dict_named;         /* the client named a dictionary */
    int dict_looked;        /* dict and dict_named are known */
    int dict_over_stored;   /* the swap passed over stored bytes for it:
                             * the filter must code against it */
    int dict_private;       /* dict is no earlier version of this file
                             * (a configured one, another file's): an
                             * answer against it is this client's, as
                             * the access check on its URL said */
    adf_coding_e dict_alt;  /* what would have gone out without dict */
    int dict_alt_level;
    struct adf_cache_kept_t *kept;  /* the version the client named, as
                                     * the cache keeps it (adf_cache.h) */
    struct adf_cache_req_t *delta;  /* the file's delta against kept, in
                                     * the cache (delta_*: as found) */
    const char *delta_path;
    const int *delta_fd;
    const struct adf_held_t *delta_held;
    int version_kept;       /* this version of the file is kept as a
                             * dictionary: say so (Use-As-Dictionary) */
    int fetch_read;         /* the dictionary's rule read Sec-Fetch-Site
                             * and Sec-Fetch-Mode: the answer varies */
    const char *held_tags;  /* the client's If-None-Match as it sent it */
    int held_kept;          /* ... kept before the header was rewritten */
    /* Not cleared when the state is made (a third of its size, on every
     * response): each is written before it is read. */
    apr_finfo_t plain_finfo;        /* plain's (set with it) */
    apr_finfo_t delta_finfo;        /* delta's (set with it) */
    adf_dict_t dict_kept;   /* dict, as taken for this request */
} adf_req_t;

/* The request's state, created on first use. */
adf_req_t *adf_req(request_rec *r);

/* Read the state without creating it: NULL when no hook set any. */
adf_req_t *adf_req_peek(const request_rec *r);

/* Set no-gzip, so that stock mod_deflate steps aside, unless the
 * operator's is there; this module still tells its own apart. */
void adf_silence_deflate(request_rec *r);

/* fd, held by the request: closed with r->pool, or at once by
 * adf_req_let_go (a file looked at and not sent). */
const int *adf_req_hold_fd(request_rec *r, int fd);
void adf_req_let_go(request_rec *r, const int *held);

/* The facts about this request and response the policy decides on, as
 * far as they are known now (status, type, headers); the caller fills
 * the length and the controller's output.  *h: the response's header
 * fields, and *acc the client's Accept-Encoding, read only where the
 * status and the type do not decide alone (the only responses whose
 * decision can carry Vary, or a coding). */
void adf_request_facts(request_rec *r, const adf_dir_conf_t *dc,
                       adf_accept_t *acc, adf_policy_in_t *in,
                       adf_resp_fields_t *h);

/* The rate TCP can deliver this connection's bytes at now (bytes/s: its
 * window over its round trip); 0 when not known (not TCP).  An HTTP/1
 * connection keeps it for a few asks (its conn_config slot). */
apr_uint64_t adf_client_rate(const request_rec *r);

#endif /* ADF_REQUEST_H */
