/* Source identity and the mark that proves a sibling holds it. */
#include "adf_test.h"
#include "../../adf_ident.h"

#include <string.h>
#include <sys/stat.h>

static adf_ident_t ident(apr_int64_t msec, long mnsec, apr_int64_t csec,
                         long cnsec)
{
    adf_ident_t i = { 1, 2, 100, { msec, mnsec }, { csec, cnsec } };
    return i;
}

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
    adf_ident_t f = ident(1700000000, 123456789, 1700000001, 5), m;
    char buf[ADF_MARK_MAX];
    int n;

    f.size = 4096;
    f.ino = 77;
    n = adf_mark_format(buf, &f);
    ck_assert_str_eq(buf, "2 ino=77 size=4096 mtime=1700000000.123456789 "
                     "ctime=1700000001.000000005");
    ck_assert_int_eq(adf_mark_parse(buf, (apr_size_t)n, &m), 0);
    ck_assert(adf_mark_matches(&f, &m, 0));
    /* any change to F: a new size, inode, mtime or ctime */
    f.size++;
    ck_assert(!adf_mark_matches(&f, &m, 0));
    f.size--;
    f.ino++;
    ck_assert(!adf_mark_matches(&f, &m, 0));
    f.ino--;
    f.ctime.sec++;
    ck_assert(!adf_mark_matches(&f, &m, 0));
    f.ctime.sec--;
    /* what APR reports: microseconds */
    f.mtime.nsec = 123456000;
    f.ctime.nsec = 0;
    ck_assert(!adf_mark_matches(&f, &m, 0));
    ck_assert(adf_mark_matches(&f, &m, 1));
    /* malformed or of another version: not a mark */
    ck_assert_int_eq(adf_mark_parse("1 size=1 mtime=2.000000001", 26, &m),
                     -1);
    ck_assert_int_eq(adf_mark_parse("2 ino=1 size=1 mtime=2.5 ctime=3.5",
                                    34, &m), -1);
    ck_assert_int_eq(adf_mark_parse("2 ino=x size=1 mtime=2.000000000 "
                                    "ctime=3.000000000", 50, &m), -1);
    strcpy(buf, "2 ino=1 size=1 mtime=2.000000000 ctime=3.000000000 ");
    ck_assert_int_eq(adf_mark_parse(buf, strlen(buf), &m), -1);
}
END_TEST

/* Identities from stat(2) (nanoseconds) and from APR (microseconds). */
START_TEST(identity_sources)
{
    struct stat st;
    apr_finfo_t fi;
    adf_ident_t a, b;

    memset(&st, 0, sizeof(st));
    st.st_dev = 8;
    st.st_ino = 99;
    st.st_size = 1234;
    st.st_mtim.tv_sec = 1700000000;
    st.st_mtim.tv_nsec = 123456789;
    st.st_ctim.tv_sec = 1700000001;
    st.st_ctim.tv_nsec = 1000;
    adf_ident_of_stat(&a, &st);
    ck_assert(a.dev == 8 && a.ino == 99 && a.size == 1234);
    ck_assert(a.mtime.sec == 1700000000 && a.mtime.nsec == 123456789);
    ck_assert(a.ctime.sec == 1700000001 && a.ctime.nsec == 1000);
    memset(&fi, 0, sizeof(fi));
    fi.device = 8;
    fi.inode = 99;
    fi.size = 1234;
    fi.mtime = APR_INT64_C(1700000000123456);
    fi.ctime = APR_INT64_C(1700000001000001);
    adf_ident_of_finfo(&b, &fi);
    ck_assert(b.dev == 8 && b.ino == 99 && b.size == 1234);
    ck_assert(b.mtime.sec == 1700000000 && b.mtime.nsec == 123456000);
    ck_assert(b.ctime.sec == 1700000001 && b.ctime.nsec == 1000);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ident");
    TCase *tc = adf_test_case(s, "core");

    tcase_add_test(tc, usec_conversion);
    tcase_add_test(tc, identity_equality);
    tcase_add_test(tc, marks);
    tcase_add_test(tc, identity_sources);
    return adf_test_run(s);
}
