/* Per-response decision.  The order of the checks is the order an operator
 * reads the reasons in: first what makes a response never compressible
 * (no Vary), then what depends on this request (Vary), then cost. */
#include "adf_policy.h"
#include "adf_parse.h"

#include <apr_atomic.h>
#include <apr_fnmatch.h>
#include <apr_hash.h>
#include <apr_lib.h>
#include <apr_strings.h>
#include <stdlib.h>
#include <string.h>

/* Case-insensitive "*" and "?" matching: every response's type goes
 * through the list, and apr_fnmatch costs several times as much.
 * Patterns with a "[...]" class still go to apr_fnmatch. */
static int glob_ci(const char *p, const char *s)
{
    const char *star = NULL, *resume = NULL;

    while (*s) {
        if (*p == '*') {
            star = ++p;
            resume = s;
        }
        else if (*p && (*p == '?' || apr_tolower(*p) == apr_tolower(*s))) {
            p++;
            s++;
        }
        else if (star) {
            p = star;
            s = ++resume;
        }
        else {
            return 0;
        }
    }
    while (*p == '*') {
        p++;
    }
    return !*p;
}

struct adf_types_t {
    apr_hash_t *exact;          /* literal types, lower case */
    apr_array_header_t *globs;  /* patterns with wildcards */
    apr_uint32_t id;            /* never reused in a process: memo key */
};

/* The last answer of each thread: a site serves a handful of types, and
 * the same list decides nearly every response. */
#define MEMO_TYPE 64
static __thread struct {
    apr_uint32_t id;            /* 0: empty */
    int match;
    apr_size_t len;             /* of type, 1 to MEMO_TYPE - 1 */
    char type[MEMO_TYPE];
} memo;

adf_types_t *adf_types_make(apr_pool_t *p)
{
    static volatile apr_uint32_t next;
    adf_types_t *t = apr_palloc(p, sizeof(*t));

    t->id = apr_atomic_inc32(&next) + 1;
    t->exact = apr_hash_make(p);
    t->globs = apr_array_make(p, 4, sizeof(const char *));
    return t;
}

void adf_types_add(adf_types_t *t, apr_pool_t *p, const char *pattern)
{
    memo.id = 0;
    if (strpbrk(pattern, "*?[")) {
        APR_ARRAY_PUSH(t->globs, const char *) = apr_pstrdup(p, pattern);
    }
    else {
        char *k = apr_pstrdup(p, pattern), *c;

        for (c = k; *c; c++) {
            *c = (char)apr_tolower(*c);
        }
        apr_hash_set(t->exact, k, APR_HASH_KEY_STRING, k);
    }
}

int adf_types_match(const adf_types_t *t, const char *type)
{
    char buf[256];
    apr_size_t len, i;
    int g, match;

    if (!type || !t) {
        return 0;
    }
    /* strncmp stops at the end of type: type[memo.len] is in it */
    if (memo.id == t->id && !strncmp(memo.type, type, memo.len)
        && (!type[memo.len] || type[memo.len] == ';'
            || type[memo.len] == ' ' || type[memo.len] == '\t')) {
        return memo.match;
    }
    len = strcspn(type, "; \t");
    if (len == 0 || len >= sizeof(buf)) {
        return 0;
    }
    for (i = 0; i < len; i++) {
        buf[i] = (char)apr_tolower(type[i]);
    }
    buf[len] = '\0';
    match = apr_hash_get(t->exact, buf, (apr_ssize_t)len) != NULL;
    for (g = 0; !match && g < t->globs->nelts; g++) {
        const char *pat = APR_ARRAY_IDX(t->globs, g, const char *);

        match = strchr(pat, '[') ? apr_fnmatch(pat, buf, APR_FNM_CASE_BLIND)
                                   == APR_SUCCESS
                                 : glob_ci(pat, buf);
    }
    if (len < MEMO_TYPE) {
        memcpy(memo.type, type, len);
        memo.type[len] = '\0';
        memo.len = len;
        memo.match = match;
        memo.id = t->id;
    }
    return match;
}

/* Size caps and server preference where no directive says otherwise. */
static const adf_size_cap_t default_caps[] = {
    { ADF_SIZE_UNKNOWN, 6 },
    { 256 * 1024, 9 },
    { 2 * 1024 * 1024, 6 },
    { ADF_SIZE_ANY, 4 },
};

int adf_policy_default_prefs(adf_coding_e *prefs)
{
    return adf_coding_prefs(prefs);
}

void adf_policy_defaults(adf_policy_conf_t *pc)
{
    int i;

    memset(pc, 0, sizeof(*pc));
    for (i = 0; i < ADF_NCODINGS; i++) {
        const adf_coding_t *d = adf_coding((adf_coding_e)i);

        pc->level_min[i] = d ? d->default_min : 0;
        pc->level_max[i] = d ? d->default_max : 0;
    }
    pc->caps = default_caps;
    pc->ncaps = sizeof(default_caps) / sizeof(default_caps[0]);
    pc->nprefs = adf_policy_default_prefs(pc->prefs);
    pc->by_value = 1;
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

/* Rungs closer in cost than this factor are not both kept: a budget that
 * wanders with the load's noise would cross between them every few
 * seconds (zlib's levels 1-3 lie within 7 %), for a difference in bytes
 * a mix of their neighbours nearly matches.  The top rung always stays. */
#define ADF_RUNG_SPACING 1.2

static int thin(adf_point_t *pts, int n)
{
    int i, k = 1;

    for (i = 1; i < n; i++) {
        if (i == n - 1 && k > 1
            && pts[i].cost < ADF_RUNG_SPACING * pts[k - 1].cost) {
            pts[k - 1] = pts[i];        /* the top replaces its neighbour */
        }
        else if (k == 1 || i == n - 1
                 || pts[i].cost >= ADF_RUNG_SPACING * pts[k - 1].cost) {
            pts[k++] = pts[i];
        }
    }
    return n > 1 ? k : n;
}

/* Another coding's rung must give this much less output to displace the
 * negotiated coding's on a frontier: near a tie the choice would follow
 * the model's noise, and every switch restarts what a coding learns. */
#define ADF_VALUE_MARGIN 0.02

int adf_frontier_of(const adf_model_t *m, const adf_span_t *spans, int n,
                    int whole, adf_point_t *pts)
{
    adf_point_t all[ADF_NPOINTS];
    int i, j, k, na = 0, h = 0;

    for (k = 0; k < n; k++) {
        for (i = spans[k].lo; i <= spans[k].hi && i < ADF_NLEVELS; i++) {
            adf_point_t p = { spans[k].coding, i, 0, 1 };

            adf_model_rung(m, p.coding, i, whole, &p.cost, &p.ratio);
            if (k > 0) {
                p.ratio *= 1 + ADF_VALUE_MARGIN;    /* as compared */
            }
            /* insertion by cost, the better ratio first on equal cost,
             * the earlier span first on both */
            for (j = na; j > 0 && (all[j - 1].cost > p.cost
                                   || (all[j - 1].cost == p.cost
                                       && all[j - 1].ratio > p.ratio)); j--) {
                all[j] = all[j - 1];
            }
            all[j] = p;
            na++;
        }
    }
    pts[h].coding = ADF_IDENTITY;
    pts[h].level = ADF_LEVEL_NONE;
    pts[h].cost = 0;
    pts[h++].ratio = 1;
    for (i = 0; i < na; i++) {
        adf_point_t p = all[i];

        if (p.ratio >= pts[h - 1].ratio) {
            continue;       /* dearer, and no smaller */
        }
        /* pop what lies on or above the line to the new point */
        while (h >= 2
               && (pts[h - 1].cost - pts[h - 2].cost)
                  * (p.ratio - pts[h - 2].ratio)
                  - (pts[h - 1].ratio - pts[h - 2].ratio)
                  * (p.cost - pts[h - 2].cost) <= 0) {
            h--;
        }
        pts[h++] = p;
    }
    for (i = 1; i < h; i++) {
        if (pts[i].coding != spans[0].coding) {
            pts[i].ratio /= 1 + ADF_VALUE_MARGIN;   /* as it is */
        }
    }
    return thin(pts, h);
}

int adf_frontier(const adf_model_t *m, adf_coding_e c, int whole, int lo,
                 int hi, adf_point_t *pts)
{
    adf_span_t one;

    one.coding = c;
    one.lo = lo;
    one.hi = hi;
    return adf_frontier_of(m, &one, 1, whole, pts);
}

int adf_frontier_client(const adf_point_t *pts, int n, double client_ns)
{
    int i = 1;

    while (i + 1 < n && (pts[i + 1].cost - pts[i].cost)
                        < client_ns * (pts[i].ratio - pts[i + 1].ratio)) {
        i++;
    }
    return i < n ? i : n - 1;
}

void adf_frontier_at(const adf_point_t *pts, int n, double budget, int *i,
                     double *p)
{
    int k;

    for (k = 0; k + 1 < n && pts[k + 1].cost <= budget; k++) {
    }
    *i = k;
    *p = k + 1 < n ? (budget - pts[k].cost) / (pts[k + 1].cost - pts[k].cost)
                   : 0;
}

/* Frontiers each thread built last, keyed by the model's generation and
 * the spans: the model changes once an interval, and a response that may
 * be compressed asks for one or two (the codings the client accepts
 * equally, the operator's own), each some 1,500 instructions a coding to
 * build (callgrind). */
#define MEMO_FRONTIERS 6

typedef struct {
    apr_uint64_t gen;               /* 0: empty */
    const adf_model_t *model;
    int whole, nspans, n;
    adf_span_t spans[ADF_MAX_PREFS];
    adf_point_t pts[ADF_NPOINTS];
} frontier_memo_t;

static __thread frontier_memo_t memo_f[MEMO_FRONTIERS];
static __thread unsigned memo_next;

/* The frontier of spans: *pts is the thread's copy, or buf where the
 * model's generation is unknown; valid until MEMO_FRONTIERS more
 * calls. */
static int frontier(const adf_policy_in_t *in, const adf_span_t *spans,
                    int nspans, adf_point_t *buf, const adf_point_t **pts)
{
    frontier_memo_t *m;
    int k, whole = in->whole ? 1 : 0;

    if (!in->model_gen) {
        *pts = buf;
        return adf_frontier_of(in->model, spans, nspans, whole, buf);
    }
    for (k = 0; k < MEMO_FRONTIERS; k++) {
        m = &memo_f[k];
        if (m->gen == in->model_gen && m->model == in->model
            && m->whole == whole && m->nspans == nspans
            && !memcmp(m->spans, spans, nspans * sizeof(*spans))) {
            *pts = m->pts;
            return m->n;
        }
    }
    m = &memo_f[memo_next++ % MEMO_FRONTIERS];
    m->n = adf_frontier_of(in->model, spans, nspans, whole, m->pts);
    m->gen = in->model_gen;
    m->model = in->model;
    m->whole = whole;
    m->nspans = nspans;
    memcpy(m->spans, spans, nspans * sizeof(*spans));
    *pts = m->pts;
    return m->n;
}

/* The codings a response may take, the negotiated one first, then those
 * the client accepts as much in the server's order; each with its level
 * range, narrowed by a size cap (written on gzip's scale: other codings
 * get the level at the same fraction of their own range).  *capped: a
 * cap narrowed one.  Returns how many. */
static int spans_of(const adf_policy_conf_t *conf, const adf_policy_in_t *in,
                    adf_coding_e c, adf_span_t *spans, int *capped)
{
    int cap = cap_for(conf, in->length), q = adf_accept_q(in->accept, c);
    int n = 0, i;

    *capped = 0;
    for (i = -1; i < conf->nprefs; i++) {
        adf_coding_e o = i < 0 ? c : conf->prefs[i];
        adf_span_t *sp = &spans[n];

        if (i >= 0 && (o == c || adf_accept_q(in->accept, o) != q
                       || !adf_coding(o) || adf_coding(o)->needs_dict
                       || n >= ADF_MAX_PREFS)) {
            continue;
        }
        sp->coding = o;
        sp->lo = conf->level_min[o];
        sp->hi = conf->level_max[o];
        if (cap > 0) {
            int glo = conf->level_min[ADF_GZIP];
            int ghi = conf->level_max[ADF_GZIP];
            double frac = (double)(cap - glo + 1) / (ghi - glo + 1);
            int top = sp->lo - 1 + (int)(frac * (sp->hi - sp->lo + 1) + 0.5);

            *capped |= i < 0 && top < sp->hi;
            sp->hi = top < sp->lo ? sp->lo : top < sp->hi ? top : sp->hi;
        }
        n++;
    }
    return n;
}

static const char *const reason_names[ADF_NREASONS] = {
    "max", "target", "size-cap", "precompressed", "cpu-limit", "load",
    "not-accepted", "min-length", "type", "status", "encoded",
    "no-transform", "env", "proxied", "subrequest", "codec-error",
    "no-signal", "cache-hit"
};

const char *adf_reason_name(adf_reason_e r)
{
    return r < ADF_NREASONS ? reason_names[r] : "?";
}

static void skip(adf_decision_t *out, adf_reason_e reason, int vary)
{
    out->waits = -1;
    out->coding = ADF_IDENTITY;
    out->level = 0;
    out->reason = reason;
    out->vary = vary;
}

/* The rest of adf_policy_decide, once nothing about the response itself
 * rules compression out: the request's facts, the coding, the rung.
 * Apart, so that the many responses decided on their status or type do
 * not pay for this one's frame. */
static void __attribute__((noinline))
decide_coding(const adf_policy_conf_t *conf, const adf_policy_in_t *in,
              adf_decision_t *out)
{
    adf_point_t buf[ADF_NPOINTS], own[ADF_NPOINTS];
    adf_span_t spans[ADF_MAX_PREFS];
    const adf_point_t *pts, *mine;
    adf_policy_in_t unloaded;
    adf_coding_e c;
    int n, i, ns, capped;
    double p, budget;

    if (in->not_modified) {
        unloaded = *in;
        unloaded.budget = 1e9;
        unloaded.limited = 0;
        unloaded.failsafe = 0;
        in = &unloaded;
    }
    out->waits = -1;

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
    if (in->failsafe || in->coding_only) {
        /* No load to go by: cheap enough never to be the bottleneck,
         * never "paused" on a signal that stopped.  (Stored bytes have
         * their level already: a frontier would be computed for nothing.) */
        out->vary = 1;
        out->coding = c;
        out->level = conf->level_min[c];
        out->reason = in->coding_only ? ADF_R_MAX : ADF_R_NO_SIGNAL;
        return;
    }
    if (in->limited) {
        skip(out, ADF_R_CPU_LIMIT, 1);
        return;
    }
    /* One frontier over every coding the client accepts as much as the
     * negotiated one: where the budget cannot compress every response
     * with a coding, another's cheaper rungs may buy more bytes for it
     * (igzip 1 beside brotli 0-1, which cost more per byte here for the
     * same ratio). */
    ns = spans_of(conf, in, c, spans, &capped);
    n = frontier(in, spans, ns, buf, &pts);
    if (!conf->by_value && ns > 1) {
        /* The operator's order, where the budget affords its coding for
         * every response: its own frontier. */
        int n1 = frontier(in, spans, 1, own, &mine);

        if (n1 > 1 && in->budget >= mine[1].cost) {
            pts = mine;
            n = n1;
        }
    }
    budget = in->budget;
    if (in->client_ns >= 0 && !in->not_modified) {
        /* Rungs dearer than the client's path gains time from buy it
         * nothing but fewer bytes: its response gets them only from the
         * idle part of the CPU (idle_budget).  It waits on its path where
         * the rung above the budget would still gain it time.  A path not
         * known yet gains from none past the cheapest: a new connection's
         * first response went out on the budget's dearest rungs, and with
         * every known client below them the budget climbed until those
         * alone filled the CPU to the target (128 users with think time:
         * a p99 of 300 ms). */
        int ci = in->client_ns > 0 ? adf_frontier_client(pts, n,
                                                         in->client_ns)
                                   : 1, u;

        if (ci >= n) {
            ci = n - 1;
        }
        adf_frontier_at(pts, n, budget, &i, &p);
        u = p > 0 ? i + 1 : i > 0 ? i : 1;
        out->waits = in->client_ns <= 0 ? -1
                   : u < n && pts[u].cost - pts[u - 1].cost
                              < in->client_ns * (pts[u - 1].ratio
                                                 - pts[u].ratio);
        if (pts[ci].cost < budget && in->idle_budget < budget) {
            budget = in->idle_budget > pts[ci].cost ? in->idle_budget
                                                    : pts[ci].cost;
        }
    }
    adf_frontier_at(pts, n, budget, &i, &p);
    if (p > 0 && in->dice < p) {
        i++;
    }
    if (pts[i].level == ADF_LEVEL_NONE) {
        int waits = out->waits;

        skip(out, ADF_R_LOAD, 1);
        out->waits = waits;
        return;
    }
    out->vary = 1;
    out->coding = pts[i].coding;
    out->level = pts[i].level;
    out->reason = i < n - 1 ? ADF_R_TARGET
                : capped ? ADF_R_SIZE_CAP : ADF_R_MAX;
}

void adf_policy_decide(const adf_policy_conf_t *conf,
                       const adf_policy_in_t *in, adf_decision_t *out)
{
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
    /* an empty body has nothing to compress, whatever MinLength: its
     * coding would only add a header and a trailer */
    if (in->length == 0
        || (in->length > 0 && in->length < conf->min_length)) {
        skip(out, ADF_R_MIN_LENGTH, 0);
        return;
    }
    decide_coding(conf, in, out);
}
