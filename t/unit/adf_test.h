/* Shared by the libcheck suites: an APR pool fixture, one test case per
 * test, and the runner. */
#ifndef ADF_TEST_H
#define ADF_TEST_H

#include <check.h>
#include <apr_general.h>
#include <apr_pools.h>

static apr_pool_t *pool;

static void adf_test_setup(void)
{
    apr_initialize();
    apr_pool_create(&pool, NULL);
}

static void adf_test_teardown(void)
{
    apr_pool_destroy(pool);
    apr_terminate();
}

/* A test case with the pool fixture, named NAME. */
static TCase *adf_test_case(Suite *s, const char *name)
{
    TCase *tc = tcase_create(name);

    /* check's 4 s default is for a quiet machine; a timeout here should
     * mean a hang, not ASan on a busy one */
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, adf_test_setup, adf_test_teardown);
    suite_add_tcase(s, tc);
    return tc;
}

/* TEST (a START_TEST) in a test case of its own, named after it, so that
 * CK_RUN_CASE=TEST runs it alone (t/README).  Returns the case, for a
 * longer timeout or another fixture. */
#define adf_test(s, test) adf_test_alone((s), #test, (test))
static TCase *adf_test_alone(Suite *s, const char *name, const TTest *test)
{
    TCase *tc = adf_test_case(s, name);

    tcase_add_test(tc, test);
    return tc;
}

/* Run a suite, reporting in TAP on stdout (automake's TAP driver counts
 * each test; CK_TAP_LOG_FILE_NAME may send it elsewhere); the exit status
 * for main(). */
static int adf_test_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    int failed;

    srunner_set_tap(sr, "-");
    srunner_run_all(sr, CK_SILENT);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

#endif /* ADF_TEST_H */
