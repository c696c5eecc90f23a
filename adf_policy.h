/* The decision: which coding at which level for one response, or none and
 * why.  One pure function of request facts, response facts, the load
 * controller's output and configuration; no httpd. */
#ifndef ADF_POLICY_H
#define ADF_POLICY_H

#include <apr_pools.h>
#include <apr_tables.h>
#include "adf_negotiate.h"

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
    double effort;              /* controller: 0 (nothing) .. 1 (max) */
    int limited;                /* controller: above the CPU limit */
    double dice;                /* uniform in [0, 1): mixes levels */
} adf_policy_in_t;

/* Why a response was (first three) or was not compressed. */
typedef enum {
    ADF_R_MAX,                  /* compressed at the maximum level */
    ADF_R_TARGET,               /* compressed lower: the controller */
    ADF_R_SIZE_CAP,             /* compressed lower: a size cap */
    ADF_R_PRECOMPRESSED,        /* a precompressed sibling was served */
    ADF_R_CPU_LIMIT,
    ADF_R_LOAD,                 /* the effort fell on the "none" rung */
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
    ADF_NREASONS
} adf_reason_e;

/* "max", "cpu-limit", ...: the value of the adaptive_deflate_reason note. */
const char *adf_reason_name(adf_reason_e r);

typedef struct {
    adf_coding_e coding;        /* ADF_IDENTITY: do not compress */
    int level;
    int vary;                   /* the response varies on Accept-Encoding */
    adf_reason_e reason;
} adf_decision_t;

void adf_policy_decide(const adf_policy_conf_t *conf,
                       const adf_policy_in_t *in, adf_decision_t *out);

/* Does a media type (parameters allowed, case-insensitive) match one of
 * the shell patterns, e.g. text/html, text/(star), application/(star)+json? */
int adf_type_matches(const char *type, const apr_array_header_t *patterns);

/* Sort caps by size (unknown first, then ascending, '*' last). */
void adf_caps_sort(adf_size_cap_t *caps, int n);

#endif /* ADF_POLICY_H */
