/* The decision function on tables of (request, response, load, config),
 * and the efficient frontier it moves on. */
#include "config.h"
#include "adf_test.h"
#include <apr_fnmatch.h>
#include <apr_general.h>
#include <apr_tables.h>
#include <math.h>
#include <string.h>
#include "adf_policy.h"
#include "adf_parse.h"

static adf_policy_conf_t conf;
static adf_accept_t acc;
static adf_policy_in_t in;
static adf_size_cap_t caps[4];
static adf_model_t model;

#define IDLE 1e9            /* a budget above any rung's cost */

static void policy_setup(void)
{
    memset(&conf, 0, sizeof(conf));
    conf.level_min[ADF_GZIP] = 1;
    conf.level_max[ADF_GZIP] = 9;
    conf.level_min[ADF_BR] = 0;
    conf.level_max[ADF_BR] = 11;
    conf.level_min[ADF_ZSTD] = 1;
    conf.level_max[ADF_ZSTD] = 12;
    conf.level_min[ADF_DCZ] = 1;
    conf.level_max[ADF_DCZ] = 12;
    conf.min_length = 100;
    /* br zstd gzip, of those this build has (as the config allows) */
    conf.nprefs = 0;
#ifdef ADF_HAVE_BROTLI
    conf.prefs[conf.nprefs++] = ADF_BR;
#endif
#ifdef ADF_HAVE_ZSTD
    conf.prefs[conf.nprefs++] = ADF_ZSTD;
#endif
    conf.prefs[conf.nprefs++] = ADF_GZIP;
    adf_model_init(&model);
    adf_accept_parse("gzip, br", &acc);
    memset(&in, 0, sizeof(in));
    in.status_ok = 1;
    in.type_ok = 1;
    in.length = 5000;
    in.accept = &acc;
    in.model = &model;
    in.budget = IDLE;
    in.idle_budget = IDLE;
}

static adf_decision_t decide(void)
{
    adf_decision_t d;

    adf_policy_decide(&conf, &in, &d);
    return d;
}

START_TEST(compresses_at_max_when_idle)
{
    adf_decision_t d = decide();

#ifdef ADF_HAVE_BROTLI
    ck_assert_int_eq(d.coding, ADF_BR);
    ck_assert_int_eq(d.level, 11);
#else
    ck_assert_int_eq(d.coding, ADF_GZIP);   /* "br" unknown to this build */
    ck_assert_int_eq(d.level, 9);
#endif
    ck_assert_int_eq(d.reason, ADF_R_MAX);
    ck_assert_int_eq(d.vary, 1);
    adf_accept_parse("gzip", &acc);
    d = decide();
    ck_assert_int_eq(d.coding, ADF_GZIP);
    ck_assert_int_eq(d.level, 9);
}
END_TEST

/* The checks in the order an operator reads them: each condition alone
 * gives its reason, and with any later one too (so moving a check in the
 * code changes a result here). */
enum { SUB, STATUS, ENCODED, RESP_NT, TYPE, SHORT, REQ_NT, ENV, PROXIED,
       NOT_ACCEPTED, LIMITED, NCOND };

static const struct {
    const char *reason;
    int vary;
} expect[NCOND] = {
    { "subrequest", 0 }, { "status", 0 }, { "encoded", 0 },
    { "no-transform", 0 }, { "type", 0 }, { "min-length", 0 },
    { "no-transform", 1 }, { "env", 1 }, { "proxied", 1 },
    { "not-accepted", 1 }, { "cpu-limit", 1 }
};

static void set_condition(int k)
{
    switch (k) {
    case SUB: in.is_subrequest = 1; break;
    case STATUS: in.status_ok = 0; break;
    case ENCODED: in.has_encoding = 1; break;
    case RESP_NT: in.resp_no_transform = 1; break;
    case TYPE: in.type_ok = 0; break;
    case SHORT: in.length = 99; break;
    case REQ_NT: in.req_no_transform = 1; break;
    case ENV: in.env_off = 1; break;
    case PROXIED: in.proxied_off = 1; break;
    case NOT_ACCEPTED: adf_accept_parse("deflate", &acc); break;
    case LIMITED: in.limited = 1; break;
    }
}

START_TEST(skips_in_order)
{
    int i, j;

    for (i = 0; i < NCOND; i++) {
        for (j = i; j < NCOND; j++) {
            adf_decision_t d;

            policy_setup();
            set_condition(i);
            set_condition(j);
            d = decide();
            ck_assert_int_eq(d.coding, ADF_IDENTITY);
            ck_assert_msg(!strcmp(adf_reason_name(d.reason),
                                  expect[i].reason)
                          && d.vary == expect[i].vary,
                          "conditions %d and %d: %s (vary %d), want %s",
                          i, j, adf_reason_name(d.reason), d.vary,
                          expect[i].reason);
        }
    }
    /* unknown length is not "short"; the limit comes after negotiation */
    policy_setup();
    in.length = -1;
    ck_assert_int_ne(decide().coding, ADF_IDENTITY);
    in.length = 100;
    ck_assert_int_ne(decide().coding, ADF_IDENTITY);
    in.budget = 0;
    ck_assert_str_eq(adf_reason_name(decide().reason), "load");
    /* an empty body is "short" whatever MinLength says; one byte is not */
    policy_setup();
    conf.min_length = 0;
    in.length = 0;
    ck_assert_str_eq(adf_reason_name(decide().reason), "min-length");
    in.length = 1;
    ck_assert_int_ne(decide().coding, ADF_IDENTITY);
}
END_TEST

/* The frontier: from "none" up, dearer and smaller at every step, with
 * diminishing returns; a level that a mix of two others beats is absent. */
START_TEST(frontier_is_efficient)
{
    adf_point_t pts[ADF_NLEVELS + 1];
    int n, i, k, c;

    for (c = ADF_GZIP; c < ADF_NCODINGS; c++) {
        for (k = 0; k < ADF_NCLASSES; k++) {
            if (!adf_coding((adf_coding_e)c)) {
                continue;
            }
            n = adf_frontier(&model, (adf_coding_e)c, k,
                             conf.level_min[c], conf.level_max[c], pts);
            ck_assert_int_ge(n, 2);
            ck_assert_int_eq(pts[0].level, ADF_LEVEL_NONE);
            for (i = 1; i < n; i++) {
                ck_assert(pts[i].cost > pts[i - 1].cost);
                ck_assert(pts[i].ratio < pts[i - 1].ratio);
                if (i >= 2) {
                    double s1 = (pts[i - 1].ratio - pts[i - 2].ratio)
                                / (pts[i - 1].cost - pts[i - 2].cost);
                    double s2 = (pts[i].ratio - pts[i - 1].ratio)
                                / (pts[i].cost - pts[i - 1].cost);
                    ck_assert_msg(s2 > s1, "coding %d: not convex at %d",
                                  c, pts[i].level);
                }
            }
        }
    }
    /* Teach the model a gzip level 5 that costs more than 6 and gives
     * less: it must leave the frontier. */
    model.rung[ADF_GZIP][5][0].cost_dev = 3;
    model.rung[ADF_GZIP][5][0].ratio_dev = 1.05;
    n = adf_frontier(&model, ADF_GZIP, 0, 1, 9, pts);
    for (i = 0; i < n; i++) {
        ck_assert_int_ne(pts[i].level, 5);
    }
}
END_TEST

/* The budget falls between two frontier points; the dice picks one with
 * the probability that makes the mean cost exactly the budget. */
START_TEST(mixing_spends_the_budget)
{
    adf_point_t pts[ADF_NLEVELS + 1];
    int n, i, lo, hi, k, seen_lo = 0, seen_hi = 0;
    double p, spent = 0;

    adf_accept_parse("gzip", &acc);
    n = adf_frontier(&model, ADF_GZIP, 0, 1, 9, pts);
    ck_assert_int_ge(n, 3);
    in.budget = (pts[1].cost + pts[2].cost) / 2;
    adf_frontier_at(pts, n, in.budget, &i, &p);
    ck_assert_int_eq(i, 1);
    ck_assert(p > 0.49 && p < 0.51);
    lo = pts[1].level;
    hi = pts[2].level;
    for (k = 0; k < 1000; k++) {
        adf_decision_t d;

        in.dice = k / 1000.0;
        d = decide();
        ck_assert_int_eq(d.coding, ADF_GZIP);
        ck_assert_int_eq(d.reason, ADF_R_TARGET);
        ck_assert(d.level == lo || d.level == hi);
        seen_lo += d.level == lo;
        seen_hi += d.level == hi;
        spent += d.level == lo ? pts[1].cost : pts[2].cost;
    }
    ck_assert_int_eq(seen_lo, 500);
    ck_assert_int_eq(seen_hi, 500);
    ck_assert(spent / 1000 > in.budget * 0.999
              && spent / 1000 < in.budget * 1.001);

    /* Below the cheapest rung: a mix of "none" and it. */
    in.budget = pts[1].cost * 0.3;
    in.dice = 0.2;
    ck_assert_int_eq(decide().level, pts[1].level);
    in.dice = 0.5;
    ck_assert_str_eq(adf_reason_name(decide().reason), "load");
    /* Above the dearest: the top, every time. */
    in.budget = pts[n - 1].cost * 2;
    in.dice = 0.99;
    ck_assert_int_eq(decide().reason, ADF_R_MAX);
}
END_TEST

/* Decision k of a sweep of budgets, without the memo and with it: the
 * same. */
static void same_memoized(int k)
{
    adf_decision_t a, b;

    in.budget = 0.01 * pow(1.05, k);        /* 0.01 to 170 ns/B */
    in.dice = (k * 37 % 100) / 100.0;
    in.model_gen = 0;
    a = decide();
    in.model_gen = 7;
    b = decide();
    ck_assert_int_eq(a.coding, b.coding);
    ck_assert_int_eq(a.level, b.level);
    ck_assert_int_eq(a.reason, b.reason);
}

/* Frontiers are memoized per thread by the model's generation: the
 * same decisions as without, a new generation sees a changed model, and
 * another level range is not taken for the memoized one. */
START_TEST(frontier_memo)
{
    int k;

    adf_accept_parse("gzip", &acc);
    for (k = 0; k < 200; k++) {
        same_memoized(k);
    }
    /* whole and streamed bodies, capped and not, in turn: each its own */
    caps[0].size = ADF_SIZE_UNKNOWN;
    caps[0].level = 6;
    caps[1].size = ADF_SIZE_ANY;
    caps[1].level = 9;
    conf.caps = caps;
    conf.ncaps = 2;
    adf_accept_parse("gzip, br", &acc);
    for (k = 0; k < 200; k++) {
        in.whole = k % 2;
        in.length = k % 3 ? 5000 : -1;
        same_memoized(k);
    }
    conf.ncaps = 0;
    in.whole = 0;
    in.length = 5000;
    adf_accept_parse("gzip", &acc);
    in.budget = IDLE;
    ck_assert_int_eq(decide().level, 9);
    /* gzip 9 learned to cost more than any budget: the generation that
     * says so leaves it out, the one before (memoized) did not know */
    model.rung[ADF_GZIP][9][0].cost_dev = 1e12;
    ck_assert_int_eq(decide().level, 9);
    in.model_gen = 8;
    ck_assert_int_eq(decide().level, 8);
    conf.level_max[ADF_GZIP] = 4;
    ck_assert_int_eq(decide().level, 4);
}
END_TEST

START_TEST(size_caps)
{
    caps[0].size = ADF_SIZE_UNKNOWN; caps[0].level = 6;
    caps[1].size = 64 * 1024;        caps[1].level = 9;
    caps[2].size = 512 * 1024;       caps[2].level = 4;
    caps[3].size = ADF_SIZE_ANY;     caps[3].level = 1;
    conf.caps = caps;
    conf.ncaps = 4;
    adf_accept_parse("gzip", &acc);

    in.length = 1000;
    ck_assert_int_eq(decide().level, 9);
    ck_assert_int_eq(decide().reason, ADF_R_MAX);
    in.length = 64 * 1024;
    ck_assert_int_eq(decide().level, 9);
    in.length = 64 * 1024 + 1;
    ck_assert_int_le(decide().level, 4);
    ck_assert_int_eq(decide().reason, ADF_R_SIZE_CAP);
    in.length = 100 << 20;
    ck_assert_int_eq(decide().level, 1);
    in.length = -1;
    ck_assert_int_le(decide().level, 6);
    /* A cap never raises a level the load lowered. */
    in.length = 1000;
    in.budget = 0.5;            /* below gzip 1's cost */
    in.dice = 0.99;
    ck_assert_str_eq(adf_reason_name(decide().reason), "load");

    /* Brotli gets the same fraction of its own range; a build without
     * it does not know the token. */
    adf_accept_parse("br", &acc);
    in.budget = IDLE;
#ifdef ADF_HAVE_BROTLI
    in.length = 100 << 20;      /* cap 1 of 1..9: the lowest, q0 */
    ck_assert_int_eq(decide().level, 0);
    in.length = 300 * 1024;     /* cap 4 of 1..9: at most q4 */
    ck_assert_int_le(decide().level, 4);
    in.length = 1000;
    ck_assert_int_eq(decide().level, 11);
#else
    ck_assert_int_eq(decide().coding, ADF_IDENTITY);
    ck_assert_str_eq(adf_reason_name(decide().reason), "not-accepted");
#endif
}
END_TEST

/* No preference configured: among codings accepted equally, the one the
 * budget buys the fewest bytes from. */
START_TEST(coding_by_value)
{
    adf_decision_t d;

#if defined(ADF_HAVE_BROTLI) && defined(ADF_HAVE_ZSTD)
    adf_accept_parse("gzip, br, zstd", &acc);
    conf.by_value = 1;
    d = decide();
    ck_assert_int_eq(d.coding, ADF_BR);     /* idle: brotli's top */
    in.budget = 1.0;                        /* ns/B: zstd 1-3's region */
    d = decide();
    ck_assert_int_eq(d.coding, ADF_ZSTD);
    /* stored bytes: the negotiated coding, no frontier read */
    in.coding_only = 1;
    ck_assert_int_eq(decide().coding, ADF_BR);
    in.coding_only = 0;
    /* a configured preference holds whatever the budget */
    conf.by_value = 0;
    ck_assert_int_eq(decide().coding, ADF_BR);
    /* and q-values come first */
    conf.by_value = 1;
    adf_accept_parse("gzip, br;q=0.5, zstd;q=0.5", &acc);
    ck_assert_int_eq(decide().coding, ADF_GZIP);
#else
    adf_accept_parse("gzip", &acc);
    conf.by_value = 1;
    d = decide();
    ck_assert_int_eq(d.coding, ADF_GZIP);
#endif
}
END_TEST

START_TEST(caps_sorted)
{
    adf_size_cap_t c[4] = {
        { ADF_SIZE_ANY, 1 }, { 4096, 4 }, { ADF_SIZE_UNKNOWN, 6 }, { 10, 9 }
    };

    adf_caps_sort(c, 4);
    ck_assert_int_eq(c[0].size, ADF_SIZE_UNKNOWN);
    ck_assert_int_eq(c[1].size, 10);
    ck_assert_int_eq(c[2].size, 4096);
    ck_assert_int_eq(c[3].size, ADF_SIZE_ANY);
}
END_TEST

START_TEST(types)
{
    adf_types_t *pats = adf_types_make(pool);

    adf_types_add(pats, pool, "text/*");
    adf_types_add(pats, pool, "application/*+json");
    adf_types_add(pats, pool, "Image/SVG+xml");
    ck_assert(adf_types_match(pats, "text/html"));
    ck_assert(adf_types_match(pats, "TEXT/HTML; charset=utf-8"));
    ck_assert(adf_types_match(pats, "text/plain;charset=utf-8"));
    ck_assert(adf_types_match(pats, "application/ld+json"));
    ck_assert(adf_types_match(pats, "image/svg+xml"));
    ck_assert(!adf_types_match(pats, "image/jpeg"));
    ck_assert(!adf_types_match(pats, "application/json"));
    ck_assert(!adf_types_match(pats, ""));
    ck_assert(!adf_types_match(pats, NULL));
    ck_assert(!adf_types_match(pats, "; text/html"));
}
END_TEST

/* The "*" and "?" matcher agrees with apr_fnmatch (case-blind) on every
 * pattern and type of a small alphabet; "[...]" classes still work. */
START_TEST(types_match_like_fnmatch)
{
    static const char alpha[] = "ab*?/";
    adf_types_t *one;
    apr_pool_t *sub;
    char pat[8], str[8];
    unsigned seed = 7;
    int i, k, n;

    apr_pool_create(&sub, pool);
    for (i = 0; i < 200000; i++) {
        seed = seed * 1103515245 + 12345;
        n = (seed >> 8) % 7;
        for (k = 0; k < n; k++) {
            seed = seed * 1103515245 + 12345;
            pat[k] = alpha[(seed >> 8) % 5];
        }
        pat[n] = '\0';
        seed = seed * 1103515245 + 12345;
        n = 1 + (seed >> 8) % 6;
        for (k = 0; k < n; k++) {
            seed = seed * 1103515245 + 12345;
            str[k] = "aAbB/"[(seed >> 8) % 5];
        }
        str[n] = '\0';
        apr_pool_clear(sub);
        one = adf_types_make(sub);
        adf_types_add(one, sub, pat);
        /* asserted only when it fails: a passing ck_assert is a write
         * to check's pipe */
        if (adf_types_match(one, str)
            != (apr_fnmatch(pat, str, APR_FNM_CASE_BLIND) == APR_SUCCESS)) {
            ck_abort_msg("'%s' against '%s'", pat, str);
        }
    }
    one = adf_types_make(pool);
    adf_types_add(one, pool, "text/[hx]*");
    ck_assert(adf_types_match(one, "text/HTML"));
    ck_assert(!adf_types_match(one, "text/plain"));
}
END_TEST

/* A 304 names the representation its 200 would have: the load does not
 * choose it (over the limit, no budget, no signal: the top level). */
START_TEST(not_modified_ignores_the_load)
{
    adf_decision_t d;

    in.limited = 1;
    in.budget = 0;
    d = decide();
    ck_assert_int_eq(d.coding, ADF_IDENTITY);
    ck_assert_int_eq(d.reason, ADF_R_CPU_LIMIT);
    in.failsafe = 1;
    in.not_modified = 1;
    d = decide();
    ck_assert_int_ne(d.coding, ADF_IDENTITY);
    ck_assert_int_eq(d.reason, ADF_R_MAX);
    ck_assert_int_eq(d.level, conf.level_max[d.coding]);
}
END_TEST

/* Stored bytes ask only whether a coding is negotiated, and Vary: as any
 * budget would answer, whatever the load says, and without a frontier
 * (the negotiated coding, not one chosen by value). */
START_TEST(coding_only_is_the_coding_of_any_budget)
{
    adf_decision_t free_, only;

    in.budget = 1e9;
    free_ = decide();
    in.budget = 0;
    in.limited = 1;
    in.coding_only = 1;
    only = decide();
    ck_assert_int_ne(only.coding, ADF_IDENTITY);
    ck_assert_int_eq(only.coding, free_.coding);
    ck_assert_int_eq(only.vary, free_.vary);
    adf_accept_parse("identity", &acc);
    only = decide();
    ck_assert_int_eq(only.coding, ADF_IDENTITY);
    ck_assert_int_eq(only.reason, ADF_R_NOT_ACCEPTED);
}
END_TEST

/* One frontier over the codings the client accepts equally: convex, each
 * point a rung of one of them, cheapest first.  Where the budget cannot
 * give every response the operator's coding, another's cheaper rungs
 * spend it (with the priors: gzip 1 at 0.64 ns/B under brotli 1 at 1.23
 * for the same ratio); where it can, the operator's order holds. */
START_TEST(joint_frontier_across_codings)
{
#ifdef ADF_HAVE_BROTLI
    adf_span_t spans[2] = { { ADF_BR, 1, 6 }, { ADF_GZIP, 1, 9 } };
    adf_point_t pts[ADF_NPOINTS], br[ADF_NPOINTS];
    int n, nb, i, codings = 0;
    double p;

    n = adf_frontier_of(&model, spans, 2, 0, pts);
    nb = adf_frontier(&model, ADF_BR, 0, 1, 6, br);
    ck_assert_int_eq(pts[0].level, ADF_LEVEL_NONE);
    for (i = 1; i < n; i++) {
        ck_assert(pts[i].coding == ADF_BR || pts[i].coding == ADF_GZIP);
        ck_assert(pts[i].cost > pts[i - 1].cost);
        ck_assert(pts[i].ratio < pts[i - 1].ratio);
        codings |= 1 << pts[i].coding;
    }
    ck_assert_int_eq(codings, (1 << ADF_BR) | (1 << ADF_GZIP));
    ck_assert_int_eq(pts[1].coding, ADF_GZIP);
    ck_assert_int_eq(pts[1].level, 1);
    /* at every budget the joint frontier buys at least brotli's ratio */
    for (p = 0.1; p < 20; p *= 1.3) {
        int j, k;
        double pj, pk, rj, rk;

        adf_frontier_at(pts, n, p, &j, &pj);
        adf_frontier_at(br, nb, p, &k, &pk);
        rj = pj > 0 ? (1 - pj) * pts[j].ratio + pj * pts[j + 1].ratio
                    : pts[j].ratio;
        rk = pk > 0 ? (1 - pk) * br[k].ratio + pk * br[k + 1].ratio
                    : br[k].ratio;
        ck_assert_msg(rj <= rk + 1e-9, "budget %.2f: %.4f > %.4f", p, rj, rk);
    }
    /* the operator's order (br first, no choice by value) */
    conf.by_value = 0;
    conf.level_min[ADF_BR] = 1;
    conf.level_max[ADF_BR] = 6;
    adf_accept_parse("gzip, deflate, br", &acc);
    in.budget = br[1].cost * 0.9;       /* not brotli 1 for every response */
    in.dice = 0.99;                     /* the cheaper of two points */
    ck_assert_int_eq(decide().coding, ADF_GZIP);
    in.budget = br[1].cost * 1.1;       /* brotli for every response */
    ck_assert_int_eq(decide().coding, ADF_BR);
    in.dice = 0.99;
    ck_assert_int_eq(decide().coding, ADF_BR);
#endif
}
END_TEST

/* The client's path: a rung whose CPU per byte it saves costs more than
 * the client's time per byte buys that client nothing, and its response
 * stops below it; the cheapest rung always stays.  "waits": the budget,
 * not the path, stopped it. */
START_TEST(client_path_caps_the_rung)
{
    adf_point_t pts[ADF_NPOINTS];
    adf_decision_t d;
    int n, i, ci;

    adf_accept_parse("gzip", &acc);
    n = adf_frontier(&model, ADF_GZIP, 0, 1, 9, pts);
    ck_assert_int_ge(n, 3);
    /* loopback: cheaper per byte than any rung saves; on a busy server
     * (no idle budget past the cheapest rung) the cheapest rung */
    ck_assert_int_eq(adf_frontier_client(pts, n, 0.001), 1);
    in.client_ns = 0.001;
    in.idle_budget = pts[1].cost;
    d = decide();
    ck_assert_int_eq(d.level, pts[1].level);
    ck_assert_int_eq(d.waits, 0);
    /* ... and on an idle one, the top */
    in.idle_budget = IDLE;
    ck_assert_int_eq(decide().level, pts[n - 1].level);
    in.idle_budget = pts[1].cost;
    /* a slow path: every rung pays; the top */
    ck_assert_int_eq(adf_frontier_client(pts, n, 1e6), n - 1);
    in.client_ns = 1e6;
    d = decide();
    ck_assert_int_eq(d.level, pts[n - 1].level);
    ck_assert_int_eq(d.reason, ADF_R_MAX);
    ck_assert_int_eq(d.waits, 1);
    /* in between: the last rung whose step still pays */
    i = 2;
    in.client_ns = (pts[i].cost - pts[i - 1].cost)
                   / (pts[i - 1].ratio - pts[i].ratio) * 1.01;
    ci = adf_frontier_client(pts, n, in.client_ns);
    ck_assert_int_ge(ci, i);
    ck_assert((pts[ci + 1 < n ? ci + 1 : ci].cost - pts[ci].cost)
              >= in.client_ns * (pts[ci].ratio
                                 - pts[ci + 1 < n ? ci + 1 : ci].ratio));
    ck_assert_int_eq(decide().level, pts[ci].level);
    /* a budget under that rung binds: the client waits on it */
    in.budget = pts[1].cost * 0.5;
    in.dice = 0.99;
    d = decide();
    ck_assert_int_eq(d.reason, ADF_R_LOAD);
    ck_assert_int_eq(d.waits, 1);
    /* a path not known yet: judged as one no rung past the cheapest
     * gains, not counted; an idle CPU still affords it the top */
    in.client_ns = 0;
    in.budget = IDLE;
    in.idle_budget = pts[1].cost;
    d = decide();
    ck_assert_int_eq(d.level, pts[1].level);
    ck_assert_int_eq(d.waits, -1);
    in.idle_budget = IDLE;
    ck_assert_int_eq(decide().level, pts[n - 1].level);
    /* an intermediary's request: the budget alone, not counted */
    in.client_ns = -1;
    in.idle_budget = pts[1].cost;
    d = decide();
    ck_assert_int_eq(d.level, pts[n - 1].level);
    ck_assert_int_eq(d.waits, -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("policy");

    /* each with the policy's fixture too */
#define policy_test(t) \
    tcase_add_checked_fixture(adf_test(s, t), policy_setup, NULL)
    policy_test(compresses_at_max_when_idle);
    policy_test(skips_in_order);
    policy_test(not_modified_ignores_the_load);
    policy_test(coding_only_is_the_coding_of_any_budget);
    policy_test(frontier_is_efficient);
    policy_test(mixing_spends_the_budget);
    policy_test(frontier_memo);
    policy_test(size_caps);
    policy_test(coding_by_value);
    policy_test(joint_frontier_across_codings);
    policy_test(client_path_caps_the_rung);
    policy_test(caps_sorted);
    policy_test(types);
    policy_test(types_match_like_fnmatch);
    return adf_test_run(s);
}
