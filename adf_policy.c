/* Per-response decision.  The order of the checks is the order an operator
 * reads the reasons in: first what makes a response never compressible
 * (no Vary), then what depends on this request (Vary), then cost. */
#include "adf_policy.h"
#include "adf_parse.h"

#include <apr_fnmatch.h>
#include <apr_strings.h>
#include <stdlib.h>
#include <string.h>

int adf_type_matches(const char *type, const apr_array_header_t *patterns)
{
    char buf[256];
    apr_size_t len;
    int i;

    if (!type || !patterns) {
        return 0;
    }
    len = strcspn(type, "; \t");
    if (len == 0 || len >= sizeof(buf)) {
        return 0;
    }
    memcpy(buf, type, len);
    buf[len] = '\0';
    for (i = 0; i < patterns->nelts; i++) {
        const char *pat = APR_ARRAY_IDX(patterns, i, const char *);
        if (apr_fnmatch(pat, buf, APR_FNM_CASE_BLIND) == APR_SUCCESS) {
            return 1;
        }
    }
    return 0;
}

static int cap_rank(apr_off_t size)
{
    return size == ADF_SIZE_UNKNOWN ? 0 : size == ADF_SIZE_ANY ? 2 : 1;
}

static int cap_cmp(const void *a, const void *b)
{
    const adf_size_cap_t *x = a, *y = b;
    int rx = cap_rank(x->size), ry = cap_rank(y->size);

    if (rx != ry) {
        return rx - ry;
    }
    return x->size < y->size ? -1 : x->size > y->size;
}

void adf_caps_sort(adf_size_cap_t *caps, int n)
{
    qsort(caps, n, sizeof(*caps), cap_cmp);
}

/* The gzip-scale cap for a length, or 0 for none. */
static int cap_for(const adf_policy_conf_t *conf, apr_off_t length)
{
    int i;

    for (i = 0; i < conf->ncaps; i++) {
        const adf_size_cap_t *c = &conf->caps[i];
        if (length < 0 ? c->size == ADF_SIZE_UNKNOWN
                       : (c->size == ADF_SIZE_ANY
                          || (c->size >= 0 && length <= c->size))) {
            return c->level;
        }
    }
    return 0;
}

/* The rung of a ladder [none, lo .. hi] for an effort in [0, 1]: the
 * effort falls between two rungs and the dice picks one of them with the
 * matching probability, so the mean effort is exactly what was asked. */
static int rung_for(double effort, int nlevels, double dice)
{
    double p = effort * nlevels;
    int r;

    if (p <= 0) {
        return 0;
    }
    if (p >= nlevels) {
        return nlevels;
    }
    r = (int)p;
    if (dice < p - r) {
        r++;
    }
    return r;
}

static const char *const reason_names[ADF_NREASONS] = {
    "max", "target", "size-cap", "precompressed", "cpu-limit", "load",
    "not-accepted", "min-length", "type", "status", "encoded",
    "no-transform", "env", "proxied", "subrequest", "codec-error"
};

const char *adf_reason_name(adf_reason_e r)
{
    return r < ADF_NREASONS ? reason_names[r] : "?";
}

static void skip(adf_decision_t *out, adf_reason_e reason, int vary)
{
    out->coding = ADF_IDENTITY;
    out->level = 0;
    out->reason = reason;
    out->vary = vary;
}

void adf_policy_decide(const adf_policy_conf_t *conf,
                       const adf_policy_in_t *in, adf_decision_t *out)
{
    adf_coding_e c;
    int lo, hi, n, rung, cap;

    if (in->is_subrequest) {
        skip(out, ADF_R_SUBREQUEST, 0);
        return;
    }
    if (!in->status_ok) {
        skip(out, ADF_R_STATUS, 0);
        return;
    }
    if (in->has_encoding) {
        skip(out, ADF_R_ENCODED, 0);
        return;
    }
    if (in->resp_no_transform) {
        skip(out, ADF_R_NO_TRANSFORM, 0);
        return;
    }
    if (!in->type_ok) {
        skip(out, ADF_R_TYPE, 0);
        return;
    }
    if (in->length >= 0 && in->length < conf->min_length) {
        skip(out, ADF_R_MIN_LENGTH, 0);
        return;
    }
    /* From here on another request for the same URL could be answered
     * with another coding. */
    if (in->req_no_transform) {
        skip(out, ADF_R_NO_TRANSFORM, 1);
        return;
    }
    if (in->env_off) {
        skip(out, ADF_R_ENV, 1);
        return;
    }
    if (in->proxied_off) {
        skip(out, ADF_R_PROXIED, 1);
        return;
    }
    c = adf_negotiate(in->accept, conf->prefs, conf->nprefs);
    if (c == ADF_IDENTITY) {
        skip(out, ADF_R_NOT_ACCEPTED, 1);
        return;
    }
    if (in->limited) {
        skip(out, ADF_R_CPU_LIMIT, 1);
        return;
    }
    lo = conf->level_min[c];
    hi = conf->level_max[c];
    n = hi - lo + 1;
    rung = rung_for(in->effort, n, in->dice);
    if (rung == 0) {
        skip(out, ADF_R_LOAD, 1);
        return;
    }
    out->vary = 1;
    out->coding = c;
    out->reason = rung == n ? ADF_R_MAX : ADF_R_TARGET;
    cap = cap_for(conf, in->length);
    if (cap > 0) {
        /* Caps are written on gzip's scale; other codings get the rung
         * at the same fraction of their own ladder. */
        int glo = conf->level_min[ADF_GZIP], ghi = conf->level_max[ADF_GZIP];
        double frac = (double)(cap - glo + 1) / (ghi - glo + 1);
        int cap_rung = (int)(frac * n + 0.5);

        if (cap_rung < 1) {
            cap_rung = 1;
        }
        if (rung > cap_rung) {
            rung = cap_rung;
            out->reason = ADF_R_SIZE_CAP;
        }
    }
    out->level = lo + rung - 1;
}
