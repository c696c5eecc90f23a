/* The decision: which coding at which level for one response, or none and
 * why.  One pure function of request facts, response facts, the load
 * controller's output and configuration; no httpd. */
#ifndef ADF_POLICY_H
#define ADF_POLICY_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "adf_negotiate.h"
#include "adf_model.h"

/* A size cap: responses up to size bytes get at most gzip level level
 * (size ADF_SIZE_ANY: any size; ADF_SIZE_UNKNOWN: length not known). */
typedef struct {
    apr_off_t size;
    int level;
} adf_size_cap_t;

typedef struct {
    int level_min[ADF_NCODINGS];        /* per coding, inclusive */
    int level_max[ADF_NCODINGS];
    apr_off_t min_length;
    const adf_size_cap_t *caps;         /* sorted by size, may be NULL */
    int ncaps;
    adf_coding_e prefs[ADF_MAX_PREFS];  /* server preference */
    int nprefs;
    /* No preference configured: codings the client accepts equally go by
     * value, the one that gives the fewest bytes for the budget. */
    int by_value;
} adf_policy_conf_t;

typedef struct {
    int is_subrequest;
    int status_ok;              /* status is one we compress */
    int has_encoding;           /* response already has a Content-Encoding */
    int resp_no_transform;
    int req_no_transform;
    int type_ok;                /* type is in the compressible list */
    int env_off;                /* no-gzip / no-adaptive-deflate */
    int proxied_off;            /* Via, and AdaptiveDeflateProxied Off */
    apr_off_t length;           /* body length, -1 when unknown */
    const adf_accept_t *accept;
    const adf_model_t *model;   /* what each rung costs and gives */
    apr_uint64_t model_gen;     /* changes whenever *model does; 0: unknown
                                 * (each frontier is computed afresh) */
    double budget;              /* controller: CPU ns per byte */
    int whole;                  /* the whole body is at hand (its class) */
    int limited;                /* controller: above the CPU limit */
    int failsafe;               /* no fresh load signal: lowest level */
    /* The client's path, ns per byte (TCP's window over its round trip).
     * A rung whose CPU per byte it saves costs more than the client's
     * time per byte buys that client nothing: its response stops below
     * such rungs.  0: not known yet (a connection's first response),
     * judged as a client no rung past the cheapest gains time; < 0: an
     * intermediary (a cache serves the bytes on), judged by the budget
     * alone. */
    double client_ns;
    double idle_budget;         /* what such a client's response may spend
                                 * beyond those rungs (ns/B): the idle
                                 * CPU's */
    int coding_only;            /* stored bytes: only whether a coding is
                                 * negotiated, and Vary, are asked: no
                                 * rung, no choice by value (the load, the
                                 * limit and the frontiers are not read) */
    int not_modified;           /* a 304: it names the representation of
                                 * its 200, which the load does not choose:
                                 * budget, limit and signal are ignored */
    double dice;                /* uniform in [0, 1): mixes levels */
} adf_policy_in_t;

/* Why a response was (first three) or was not compressed. */
typedef enum {
    ADF_R_MAX,                  /* compressed at the maximum level */
    ADF_R_TARGET,               /* compressed lower: the controller */
    ADF_R_SIZE_CAP,             /* compressed lower: a size cap */
    ADF_R_PRECOMPRESSED,        /* a precompressed sibling was served */
    ADF_R_CPU_LIMIT,
    ADF_R_LOAD,                 /* the budget fell on the "none" rung */
    ADF_R_NOT_ACCEPTED,
    ADF_R_MIN_LENGTH,
    ADF_R_TYPE,
    ADF_R_STATUS,
    ADF_R_ENCODED,
    ADF_R_NO_TRANSFORM,
    ADF_R_ENV,
    ADF_R_PROXIED,
    ADF_R_SUBREQUEST,
    ADF_R_CODEC_ERROR,
    ADF_R_NO_SIGNAL,            /* compressed at the lowest level: no signal */
    ADF_R_CACHE_HIT,            /* served from the compressed cache */
    ADF_NREASONS
} adf_reason_e;

/* "max", "cpu-limit", ...: the value of the adaptive_deflate_reason note. */
const char *adf_reason_name(adf_reason_e r);

typedef struct {
    adf_coding_e coding;        /* ADF_IDENTITY: do not compress */
    int level;
    int vary;                   /* the response varies on Accept-Encoding */
    adf_reason_e reason;
    /* With client_ns known: 1 where the budget, not the client's path,
     * stopped the rung (a larger budget would buy this client time: its
     * bytes wait on its path), 0 where the path did; -1: not known. */
    int waits;
} adf_decision_t;

void adf_policy_decide(const adf_policy_conf_t *conf,
                       const adf_policy_in_t *in, adf_decision_t *out);

/* The settings where no directive says otherwise, from the codec registry
 * (which is there before any directive is read): levels, size caps,
 * preference, by value; min_length 0 (the configuration's to set). */
void adf_policy_defaults(adf_policy_conf_t *pc);

/* The default preference filtered by what this build has; returns how
 * many (at most ADF_MAX_PREFS). */
int adf_policy_default_prefs(adf_coding_e *prefs);

/* A point of an efficient frontier: a coding at a level (ADF_LEVEL_NONE:
 * no compression; brotli has a quality 0) with its cost (ns per byte)
 * and ratio. */
#define ADF_LEVEL_NONE (-1)
typedef struct {
    adf_coding_e coding;
    int level;
    double cost, ratio;
} adf_point_t;

/* Points a frontier over every coding can have. */
#define ADF_NPOINTS (ADF_NCODINGS * ADF_NLEVELS + 1)

/* A coding and the levels lo..hi a frontier takes from it. */
typedef struct {
    adf_coding_e coding;
    int lo, hi;
} adf_span_t;

/* The efficient frontier of the levels of n codings for a kind of body
 * (whole or streamed): the lower convex hull of (cost, ratio) from
 * "none" (0, 1) up, cheapest first, whichever coding a point is of.  A
 * rung that costs more for no more compression than a mix of two others
 * is never on it; of two equal ones, the earlier span's.  Returns the
 * number of points (at most ADF_NPOINTS). */
int adf_frontier_of(const adf_model_t *m, const adf_span_t *spans, int n,
                    int whole, adf_point_t *pts);

/* The frontier of one coding's levels lo..hi (at most ADF_NLEVELS + 1
 * points). */
int adf_frontier(const adf_model_t *m, adf_coding_e c, int whole, int lo,
                 int hi, adf_point_t *pts);

/* The dearest point a client whose path takes client_ns per byte still
 * gains time from: the last whose step from the one before costs less
 * CPU per byte it saves than client_ns (the first compressing point at
 * least: the cheapest rung costs little time, and its bytes are the
 * floor every fixed setting offers). */
int adf_frontier_client(const adf_point_t *pts, int n, double client_ns);

/* Where a budget falls on a frontier of n points: point *i and the next,
 * the next with probability *p (0 when *i is the last). */
void adf_frontier_at(const adf_point_t *pts, int n, double budget, int *i,
                     double *p);

/* A list of media type patterns (shell patterns: "*", "?", "[...]",
 * case-insensitive), e.g. text/html, text/(star), application/(star)+json:
 * literal types are looked up in a hash, patterns matched in turn. */
typedef struct adf_types_t adf_types_t;

adf_types_t *adf_types_make(apr_pool_t *p);
void adf_types_add(adf_types_t *t, apr_pool_t *p, const char *pattern);

/* Does a media type (parameters allowed) match one of the list? */
int adf_types_match(const adf_types_t *t, const char *type);

/* Sort caps by size (unknown first, then ascending, '*' last). */
void adf_caps_sort(adf_size_cap_t *caps, int n);

#endif /* ADF_POLICY_H */
