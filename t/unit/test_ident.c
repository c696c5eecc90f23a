/* Source identity and the sibling freshness rule. */
#include "adf_test.h"
#include "../../adf_ident.h"

static adf_ident_t ident(apr_int64_t msec, long mnsec, apr_int64_t csec,
                         long cnsec)
{
    adf_ident_t i = { 1, 2, 100, { msec, mnsec }, { csec, cnsec } };
    return i;
}

START_TEST(fresh_when_mtime_equal_and_written_after)
{
    adf_ident_t f = ident(1000, 500, 1000, 500);
    adf_ident_t s = ident(1000, 500, 1005, 0);

    ck_assert(adf_sibling_fresh(&f, &s));
}
END_TEST

START_TEST(same_second_edit_is_stale)
{
    /* precompressed at 1000.2, F edited at 1000.7: same second */
    adf_ident_t f = ident(1000, 700000000, 1000, 700000000);
    adf_ident_t s = ident(1000, 100000000, 1000, 200000000);

    ck_assert(!adf_sibling_fresh(&f, &s));
}
END_TEST

START_TEST(rollback_is_stale)
{
    /* cp -p of an older release: F's mtime goes back, its ctime forward */
    adf_ident_t f = ident(900, 0, 2000, 0);
    adf_ident_t s = ident(1000, 0, 1001, 0);

    ck_assert(!adf_sibling_fresh(&f, &s));
    /* even when the sibling is "newer" by mtime, the old rule's test */
    s.mtime.sec = 950;
    ck_assert(!adf_sibling_fresh(&f, &s));
}
END_TEST

START_TEST(change_keeping_mtime_is_stale)
{
    /* F rewritten and its mtime restored (touch -r): ctime moves on */
    adf_ident_t f = ident(1000, 0, 1010, 0);
    adf_ident_t s = ident(1000, 0, 1005, 0);

    ck_assert(!adf_sibling_fresh(&f, &s));
    /* same tick: not provably later, so not fresh */
    s.ctime = f.ctime;
    ck_assert(!adf_sibling_fresh(&f, &s));
}
END_TEST

START_TEST(whole_second_copies_are_stale)
{
    /* brotli -k copies whole seconds only */
    adf_ident_t f = ident(1000, 123456789, 1000, 123456789);
    adf_ident_t s = ident(1000, 0, 1001, 0);

    ck_assert(!adf_sibling_fresh(&f, &s));
}
END_TEST

START_TEST(usec_conversion)
{
    adf_ts_t t = adf_ts_from_usec(APR_INT64_C(1700000000123456));
    adf_ts_t n = adf_ts_from_usec(-1);

    ck_assert_int_eq(t.sec, 1700000000);
    ck_assert_int_eq(t.nsec, 123456000);
    ck_assert_int_eq(n.sec, -1);
    ck_assert_int_eq(n.nsec, 999999000);
}
END_TEST

START_TEST(identity_equality)
{
    adf_ident_t a = ident(1, 2, 3, 4), b = a;

    ck_assert(adf_ident_same(&a, &b));
    b.ino++;
    ck_assert(!adf_ident_same(&a, &b));
    b = a;
    b.size++;
    ck_assert(!adf_ident_same(&a, &b));
    b = a;
    b.ctime.nsec++;
    ck_assert(!adf_ident_same(&a, &b));
}
END_TEST

START_TEST(marks)
{
    adf_ident_t f = ident(1700000000, 123456789, 1700000001, 0);
    char buf[ADF_MARK_MAX];
    apr_int64_t size;
    adf_ts_t m;
    int n;

    f.size = 4096;
    n = adf_mark_format(buf, &f);
    ck_assert_str_eq(buf, "1 size=4096 mtime=1700000000.123456789");
    ck_assert_int_eq(adf_mark_parse(buf, (apr_size_t)n, &size, &m), 0);
    ck_assert(adf_mark_matches(&f, size, &m, 0));
    f.size++;
    ck_assert(!adf_mark_matches(&f, size, &m, 0));
    f.size--;
    f.mtime.nsec = 123456000;       /* what APR reports */
    ck_assert(!adf_mark_matches(&f, size, &m, 0));
    ck_assert(adf_mark_matches(&f, size, &m, 1));
    ck_assert_int_eq(adf_mark_parse("1 size=1 mtime=2.5", 18, &size, &m), 0);
    ck_assert_int_eq(m.nsec, 5);
    ck_assert_int_eq(adf_mark_parse("2 size=1 mtime=2.000000001", 26, &size,
                                    &m), -1);
    ck_assert_int_eq(adf_mark_parse("1 size=x mtime=2.1", 18, &size, &m), -1);
    ck_assert_int_eq(adf_mark_parse("1 size=1 mtime=2", 16, &size, &m), -1);
    ck_assert_int_eq(adf_mark_parse("1 size=1 mtime=2.1 ", 19, &size, &m), -1);
    ck_assert_int_eq(adf_mark_parse("1 size=1 mtime=2.1000000000", 27, &size,
                                    &m), -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ident");
    TCase *tc = adf_test_case(s, "core");

    tcase_add_test(tc, fresh_when_mtime_equal_and_written_after);
    tcase_add_test(tc, same_second_edit_is_stale);
    tcase_add_test(tc, rollback_is_stale);
    tcase_add_test(tc, change_keeping_mtime_is_stale);
    tcase_add_test(tc, whole_second_copies_are_stale);
    tcase_add_test(tc, usec_conversion);
    tcase_add_test(tc, identity_equality);
    tcase_add_test(tc, marks);
    return adf_test_run(s);
}
