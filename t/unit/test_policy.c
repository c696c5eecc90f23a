/* The decision function on tables of (request, response, load, config). */
#include "adf_test.h"
#include <apr_general.h>
#include <apr_tables.h>
#include <string.h>
#include "../../adf_policy.h"
#include "../../adf_parse.h"

static adf_policy_conf_t conf;
static adf_accept_t acc;
static adf_policy_in_t in;
static adf_size_cap_t caps[4];

static void policy_setup(void)
{
    memset(&conf, 0, sizeof(conf));
    conf.level_min[ADF_GZIP] = 1;
    conf.level_max[ADF_GZIP] = 9;
    conf.level_min[ADF_BR] = 0;
    conf.level_max[ADF_BR] = 11;
    conf.min_length = 100;
    conf.prefs[0] = ADF_BR;
    conf.prefs[1] = ADF_GZIP;
    conf.nprefs = 2;
    adf_accept_parse("gzip, br", &acc);
    memset(&in, 0, sizeof(in));
    in.status_ok = 1;
    in.type_ok = 1;
    in.length = 5000;
    in.accept = &acc;
    in.effort = 1;
}

static adf_decision_t decide(void)
{
    adf_decision_t d;

    adf_policy_decide(&conf, &in, &d);
    return d;
}

#define ASSERT_SKIP(reason_, vary_) do {                \
        adf_decision_t d_ = decide();                   \
        ck_assert_int_eq(d_.coding, ADF_IDENTITY);      \
        ck_assert_str_eq(adf_reason_name(d_.reason), reason_);           \
        ck_assert_int_eq(d_.vary, vary_);               \
    } while (0)

START_TEST(compresses_at_max_when_idle)
{
    adf_decision_t d = decide();

    ck_assert_int_eq(d.coding, ADF_BR);
    ck_assert_int_eq(d.level, 11);
    ck_assert_int_eq(d.reason, ADF_R_MAX);
    ck_assert_int_eq(d.vary, 1);
    adf_accept_parse("gzip", &acc);
    d = decide();
    ck_assert_int_eq(d.coding, ADF_GZIP);
    ck_assert_int_eq(d.level, 9);
}
END_TEST

START_TEST(skips_in_order)
{
    in.is_subrequest = 1;
    ASSERT_SKIP("subrequest", 0);
    in.is_subrequest = 0;
    in.status_ok = 0;
    ASSERT_SKIP("status", 0);
    in.status_ok = 1;
    in.has_encoding = 1;
    ASSERT_SKIP("encoded", 0);
    in.has_encoding = 0;
    in.resp_no_transform = 1;
    ASSERT_SKIP("no-transform", 0);
    in.resp_no_transform = 0;
    in.type_ok = 0;
    ASSERT_SKIP("type", 0);
    in.type_ok = 1;
    in.length = 99;
    ASSERT_SKIP("min-length", 0);
    in.length = 100;
    ck_assert_int_ne(decide().coding, ADF_IDENTITY);
    in.length = -1;             /* unknown length is not "short" */
    ck_assert_int_ne(decide().coding, ADF_IDENTITY);
    in.req_no_transform = 1;
    ASSERT_SKIP("no-transform", 1);
    in.req_no_transform = 0;
    in.env_off = 1;
    ASSERT_SKIP("env", 1);
    in.env_off = 0;
    adf_accept_parse("deflate", &acc);
    ASSERT_SKIP("not-accepted", 1);
    adf_accept_parse("gzip", &acc);
    in.limited = 1;
    ASSERT_SKIP("cpu-limit", 1);
    in.limited = 0;
    in.effort = 0;
    ASSERT_SKIP("load", 1);
}
END_TEST

/* The effort falls between two rungs of [none, 1..9]; the dice decides
 * between them so that the mean is what the controller asked for. */
START_TEST(mixing_between_levels)
{
    int hist[10] = { 0 }, i;
    double mean = 0;

    adf_accept_parse("gzip", &acc);
    in.effort = 0.5;            /* rung 4.5 of 9: half level 4, half 5 */
    for (i = 0; i < 1000; i++) {
        adf_decision_t d;
        in.dice = i / 1000.0;
        d = decide();
        ck_assert_int_eq(d.coding, ADF_GZIP);
        ck_assert_int_eq(d.reason, ADF_R_TARGET);
        hist[d.level]++;
        mean += d.level;
    }
    ck_assert_int_eq(hist[4], 500);
    ck_assert_int_eq(hist[5], 500);
    ck_assert(mean / 1000 > 4.49 && mean / 1000 < 4.51);

    /* Bottom rung: a mix of "none" and level 1. */
    in.effort = 0.05;
    in.dice = 0.2;
    ck_assert_int_eq(decide().level, 1);
    in.dice = 0.7;
    ASSERT_SKIP("load", 1);
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
    ck_assert_int_eq(decide().level, 4);
    ck_assert_int_eq(decide().reason, ADF_R_SIZE_CAP);
    in.length = 100 << 20;
    ck_assert_int_eq(decide().level, 1);
    in.length = -1;
    ck_assert_int_eq(decide().level, 6);
    /* A cap never raises a level the load lowered. */
    in.length = 1000;
    in.effort = 0.2;            /* rung 1.8 */
    in.dice = 0.0;
    ck_assert_int_eq(decide().level, 2);
    in.dice = 0.9;
    ck_assert_int_eq(decide().level, 1);

    /* Brotli gets the same fraction of its own ladder. */
    adf_accept_parse("br", &acc);
    in.effort = 1;
    in.length = 100 << 20;      /* cap 1 of 1..9: the lowest rung, q0 */
    ck_assert_int_eq(decide().level, 0);
    in.length = 300 * 1024;     /* cap 4 of 1..9 -> rung 5 of 12 */
    ck_assert_int_eq(decide().level, 4);
    in.length = 1000;
    ck_assert_int_eq(decide().level, 11);
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
    apr_pool_t *p;
    apr_array_header_t *pats;

    p = pool;
    pats = apr_array_make(p, 3, sizeof(const char *));
    APR_ARRAY_PUSH(pats, const char *) = "text/*";
    APR_ARRAY_PUSH(pats, const char *) = "application/*+json";
    APR_ARRAY_PUSH(pats, const char *) = "image/svg+xml";
    ck_assert(adf_type_matches("text/html", pats));
    ck_assert(adf_type_matches("TEXT/HTML; charset=utf-8", pats));
    ck_assert(adf_type_matches("text/plain;charset=utf-8", pats));
    ck_assert(adf_type_matches("application/ld+json", pats));
    ck_assert(adf_type_matches("image/svg+xml", pats));
    ck_assert(!adf_type_matches("image/jpeg", pats));
    ck_assert(!adf_type_matches("application/json", pats));
    ck_assert(!adf_type_matches("", pats));
    ck_assert(!adf_type_matches(NULL, pats));
    ck_assert(!adf_type_matches("; text/html", pats));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("policy");
    TCase *tc = adf_test_case(s, "decide");

    tcase_add_checked_fixture(tc, policy_setup, NULL);
    tcase_add_test(tc, compresses_at_max_when_idle);
    tcase_add_test(tc, skips_in_order);
    tcase_add_test(tc, mixing_between_levels);
    tcase_add_test(tc, size_caps);
    tcase_add_test(tc, caps_sorted);
    tcase_add_test(tc, types);
    return adf_test_run(s);
}
