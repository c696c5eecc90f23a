/* Accept-Encoding parsing and selection, in this build: without brotli,
 * "br" is a token it does not know and no preference list can name it. */
#include "config.h"
#include "adf_test.h"
#include <string.h>
#include "adf_negotiate.h"

#ifdef ADF_HAVE_BROTLI
#define BR_PREF ADF_BR,
#define BR(otherwise) ADF_BR
#else
#define BR_PREF
#define BR(otherwise) (otherwise)   /* what the build picks instead */
#endif
static const adf_coding_e br_gzip[] = { BR_PREF ADF_GZIP };
static const adf_coding_e gzip_br[] = { ADF_GZIP, BR_PREF };
static const adf_coding_e gzip_only[] = { ADF_GZIP };
#define PREFS(a) (a), (int)(sizeof(a) / sizeof((a)[0]))
/* longer than any value the parser remembers (96) */
#define LONG_AE "x-one, x-two, x-three, x-four, x-five, x-six, x-seven, " \
                "x-eight, x-nine, x-ten, gzip;q=0.2, br;q=0.7"

static adf_coding_e pick(const char *ae, const adf_coding_e *prefs, int n)
{
    adf_accept_t acc;

    adf_accept_parse(ae, &acc);
    return adf_negotiate(&acc, prefs, n);
}

START_TEST(basics)
{
    ck_assert_int_eq(pick(NULL, PREFS(br_gzip)), ADF_IDENTITY);
    ck_assert_int_eq(pick("", PREFS(br_gzip)), ADF_IDENTITY);
    ck_assert_int_eq(pick("gzip", PREFS(br_gzip)), ADF_GZIP);
    ck_assert_int_eq(pick("br", PREFS(br_gzip)), BR(ADF_IDENTITY));
    ck_assert_int_eq(pick("br", PREFS(gzip_only)), ADF_IDENTITY);
    ck_assert_int_eq(pick("gzip, deflate, br", PREFS(br_gzip)), BR(ADF_GZIP));
    ck_assert_int_eq(pick("gzip, deflate, br", PREFS(gzip_br)), ADF_GZIP);
    ck_assert_int_eq(pick("deflate", PREFS(br_gzip)), ADF_IDENTITY);
    ck_assert_int_eq(pick("x-gzip", PREFS(br_gzip)), ADF_GZIP);
    ck_assert_int_eq(pick("GZip", PREFS(br_gzip)), ADF_GZIP);
    ck_assert_int_eq(pick("BR", PREFS(br_gzip)), BR(ADF_IDENTITY));
}
END_TEST

START_TEST(qvalues)
{
    ck_assert_int_eq(pick("gzip;q=0", PREFS(br_gzip)), ADF_IDENTITY);
    ck_assert_int_eq(pick("gzip;q=0.000", PREFS(br_gzip)), ADF_IDENTITY);
    ck_assert_int_eq(pick("gzip;q=0.001", PREFS(br_gzip)), ADF_GZIP);
    ck_assert_int_eq(pick("br;q=0.5, gzip;q=0.6", PREFS(br_gzip)), ADF_GZIP);
    ck_assert_int_eq(pick("br;q=0.6, gzip;q=0.5", PREFS(gzip_br)),
                     BR(ADF_GZIP));
    /* Ties go to the server's order. */
    ck_assert_int_eq(pick("br;q=0.5, gzip;q=0.5", PREFS(gzip_br)), ADF_GZIP);
    ck_assert_int_eq(pick("br;q=0.5, gzip;q=0.5", PREFS(br_gzip)),
                     BR(ADF_GZIP));
    ck_assert_int_eq(pick("gzip;Q=1.0", PREFS(br_gzip)), ADF_GZIP);
    ck_assert_int_eq(pick("gzip;q=1.000", PREFS(br_gzip)), ADF_GZIP);
    ck_assert_int_eq(pick("gzip ; q = 0.5", PREFS(br_gzip)), ADF_GZIP);
    /* Unknown parameters are skipped, q still counts. */
    ck_assert_int_eq(pick("gzip;level=1;q=0", PREFS(br_gzip)), ADF_IDENTITY);
    /* The highest weight given to a coding counts. */
    ck_assert_int_eq(pick("gzip;q=0, gzip", PREFS(br_gzip)), ADF_GZIP);
}
END_TEST

START_TEST(identity_and_star)
{
    ck_assert_int_eq(pick("*", PREFS(br_gzip)), BR(ADF_GZIP));
    ck_assert_int_eq(pick("*;q=0", PREFS(br_gzip)), ADF_IDENTITY);
    ck_assert_int_eq(pick("*;q=0, gzip", PREFS(br_gzip)), ADF_GZIP);
    ck_assert_int_eq(pick("*, br;q=0", PREFS(br_gzip)), ADF_GZIP);
    ck_assert_int_eq(pick("identity", PREFS(br_gzip)), ADF_IDENTITY);
    ck_assert_int_eq(pick("identity;q=1, gzip;q=0.5", PREFS(br_gzip)),
                     ADF_IDENTITY);
    ck_assert_int_eq(pick("identity;q=0.5, gzip", PREFS(br_gzip)), ADF_GZIP);
    ck_assert_int_eq(pick("identity;q=0, gzip", PREFS(br_gzip)), ADF_GZIP);
    /* Equal weights: compressing is what the client asked for. */
    ck_assert_int_eq(pick("identity, gzip", PREFS(br_gzip)), ADF_GZIP);
}
END_TEST

START_TEST(effective_q)
{
    adf_accept_t acc;

    adf_accept_parse(NULL, &acc);
    ck_assert_int_eq(adf_accept_q(&acc, ADF_IDENTITY), 1000);
    ck_assert_int_eq(adf_accept_q(&acc, ADF_GZIP), 0);
    adf_accept_parse("*;q=0", &acc);
    ck_assert_int_eq(adf_accept_q(&acc, ADF_IDENTITY), 0);
    adf_accept_parse("*;q=0.3", &acc);
    ck_assert_int_eq(adf_accept_q(&acc, ADF_BR), 300);
    adf_accept_parse("gzip;q=0.25", &acc);
    ck_assert_int_eq(adf_accept_q(&acc, ADF_GZIP), 250);
}
END_TEST

/* "No coding at all" lets the filter skip the load: only where every
 * coding this build has is refused (a token it lacks is not parsed). */
START_TEST(accepts_none)
{
    static const char *const none[] = { NULL, "", "identity", "*;q=0",
                                        "gzip;q=0, br;q=0, zstd;q=0",
                                        "deflate, compress", "gzip;q=0, *;q=0",
#ifndef ADF_HAVE_BROTLI
                                        "br", "identity, br;q=0.5",
#endif
#ifndef ADF_HAVE_ZSTD
                                        "zstd",
#endif
    };
    static const char *const some[] = { "gzip", "*", "gzip;q=0, *;q=0.5",
                                        "x-gzip", "identity, gzip;q=0.001",
#ifdef ADF_HAVE_BROTLI
                                        "br;q=0.001", "identity, br",
#endif
#ifdef ADF_HAVE_ZSTD
                                        "zstd",
#endif
    };
    adf_accept_t acc;
    int i;

    for (i = 0; i < (int)(sizeof(none) / sizeof(none[0])); i++) {
        adf_accept_parse(none[i], &acc);
        ck_assert_msg(adf_accept_none(&acc), "%s", none[i] ? none[i] : "(none)");
    }
    for (i = 0; i < (int)(sizeof(some) / sizeof(some[0])); i++) {
        adf_accept_parse(some[i], &acc);
        ck_assert_msg(!adf_accept_none(&acc), "%s", some[i]);
    }
}
END_TEST

/* Each thread remembers the last value it parsed: a different value, one
 * the remembered one starts with, or a value too long to remember must
 * never be answered with the remembered result. */
START_TEST(remembered)
{
    static const char *const seq[] = { "gzip, br;q=0.5", "gzip", "gzip, br;q=0.5",
                                       "gzip, br;q=0.5, *;q=0", NULL, "gzip, br;q=0.5",
                                       "", LONG_AE, LONG_AE, "gzip, br;q=0.5" };
    static const int gzip_q[] = { 1000, 1000, 1000, 1000, 0, 1000, 0, 200, 200, 1000 };
    static const int br_q[] = { 500, 0, 500, 500, 0, 500, 0, 700, 700, 500 };
    static const int id_q[] = { 1000, 1000, 1000, 0, 1000, 1000, 1000, 1000, 1000, 1000 };
    adf_accept_t acc;
    int i;

    for (i = 0; i < (int)(sizeof(seq) / sizeof(seq[0])); i++) {
        adf_accept_parse(seq[i], &acc);
        ck_assert_msg(adf_accept_q(&acc, ADF_GZIP) == gzip_q[i], "gzip, value %d", i);
#ifdef ADF_HAVE_BROTLI
        ck_assert_msg(adf_accept_q(&acc, ADF_BR) == br_q[i], "br, value %d", i);
#else
        (void)br_q;
#endif
        ck_assert_msg(adf_accept_q(&acc, ADF_IDENTITY) == id_q[i], "identity, value %d", i);
    }
}
END_TEST

/* Hostile and malformed input: never a coding the client did not offer
 * cleanly, never a crash. */
START_TEST(malformed)
{
    char big[8193];
    char many[12000];
    int i;

    ck_assert_int_eq(pick("gzip;q=1e308", PREFS(br_gzip)), ADF_IDENTITY);
    ck_assert_int_eq(pick("gzip;q=-1", PREFS(br_gzip)), ADF_IDENTITY);
    ck_assert_int_eq(pick("gzip;q=0.0001", PREFS(br_gzip)), ADF_IDENTITY);
    ck_assert_int_eq(pick("gzip;q=1.5", PREFS(br_gzip)), ADF_IDENTITY);
    ck_assert_int_eq(pick("gzip;q=2", PREFS(br_gzip)), ADF_IDENTITY);
    ck_assert_int_eq(pick("gzip;q=", PREFS(br_gzip)), ADF_IDENTITY);
    ck_assert_int_eq(pick("gzip;q", PREFS(br_gzip)), ADF_IDENTITY);
    ck_assert_int_eq(pick("gzip;q=0.5x", PREFS(br_gzip)), ADF_IDENTITY);
    ck_assert_int_eq(pick("gzip junk", PREFS(br_gzip)), ADF_IDENTITY);
    ck_assert_int_eq(pick("gz\x01ip", PREFS(br_gzip)), ADF_IDENTITY);
    ck_assert_int_eq(pick("\x01, gzip", PREFS(br_gzip)), ADF_GZIP);
    ck_assert_int_eq(pick(",,, ,gzip,,", PREFS(br_gzip)), ADF_GZIP);
    ck_assert_int_eq(pick(";;;", PREFS(br_gzip)), ADF_IDENTITY);
    ck_assert_int_eq(pick("gzipp, bro", PREFS(br_gzip)), ADF_IDENTITY);
    ck_assert_int_eq(pick("\"gzip\"", PREFS(br_gzip)), ADF_IDENTITY);

    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    ck_assert_int_eq(pick(big, PREFS(br_gzip)), ADF_IDENTITY);
    memcpy(big + sizeof(big) - 7, ", gzip", 7);
    ck_assert_int_eq(pick(big, PREFS(br_gzip)), ADF_GZIP);

    many[0] = '\0';
    for (i = 0; i < 1000; i++) {
        strcat(many, "tok,");
    }
    strcat(many, "br;q=0.1");
    ck_assert_int_eq(pick(many, PREFS(br_gzip)), BR(ADF_IDENTITY));
}
END_TEST

/* Sibling names: a dot and the extension of a built coding, after
 * something. */
static void check_by_ext(void)
{
    ck_assert_int_eq(adf_coding_by_ext("/a/b.html.gz", 12)->id, ADF_GZIP);
    ck_assert_ptr_null(adf_coding_by_ext(".gz", 3));
    ck_assert_ptr_null(adf_coding_by_ext("/a/b.html", 9));
    ck_assert_int_eq(adf_coding_by_ext("a.gz", 4)->id, ADF_GZIP);
    ck_assert_int_eq(adf_coding_by_ext("/a/.gz", 6)->id, ADF_GZIP);
    ck_assert_ptr_null(adf_coding_by_ext("/a/b.gz.html", 12));
    ck_assert_ptr_null(adf_coding_by_ext("/a/b.xgz", 8));
    ck_assert_ptr_null(adf_coding_by_ext("/a/bgz", 6));
    ck_assert_ptr_null(adf_coding_by_ext("/a/b.gzip", 9));
    ck_assert_ptr_null(adf_coding_by_ext("", 0));
#ifdef ADF_HAVE_ZSTD
    ck_assert_int_eq(adf_coding_by_ext("/a/b.css.zst", 12)->id, ADF_ZSTD);
#endif
#ifdef ADF_HAVE_BROTLI
    ck_assert_int_eq(adf_coding_by_ext("/a/b.js.br", 10)->id, ADF_BR);
#else
    ck_assert_ptr_null(adf_coding_by_ext("/a/b.html.br", 12));
#endif
    ck_assert_ptr_null(adf_coding_by_ext("/a/b.html.r", 11));
}

/* The same answers before adf_coding_init (the tool, these tests)
 * and after it (the module). */
START_TEST(sibling_extensions)
{
    check_by_ext();
    adf_coding_init();
    check_by_ext();
}
END_TEST

START_TEST(names)
{
    ck_assert_str_eq(adf_coding_name(ADF_GZIP), "gzip");
    ck_assert_ptr_null(adf_coding_name(ADF_IDENTITY));
    ck_assert_int_eq(adf_coding_by_token("GZIP", 4)->id, ADF_GZIP);
    ck_assert_int_eq(adf_coding_by_token("x-gzip", 6)->id, ADF_GZIP);
#ifdef ADF_HAVE_BROTLI
    ck_assert_str_eq(adf_coding_name(ADF_BR), "br");
    ck_assert_int_eq(adf_coding_by_token("br", 2)->id, ADF_BR);
#else
    ck_assert_ptr_null(adf_coding(ADF_BR));
    ck_assert_ptr_null(adf_coding_name(ADF_BR));
    ck_assert_ptr_null(adf_coding_by_token("br", 2));
#endif
    ck_assert_ptr_null(adf_coding_by_token("deflate", 7));
    ck_assert_ptr_null(adf_coding_by_token("gzi", 3));
    ck_assert(adf_list_has("public, no-transform", "no-transform"));
    ck_assert(adf_list_has("User-Agent,accept-encoding", "Accept-Encoding"));
    ck_assert(!adf_list_has("no", "no-transform"));
    ck_assert(!adf_list_has("no-transformer", "no-transform"));
    ck_assert(!adf_list_has(NULL, "x"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("negotiate");

    adf_test(s, basics);
    adf_test(s, qvalues);
    adf_test(s, identity_and_star);
    adf_test(s, effective_q);
    adf_test(s, accepts_none);
    adf_test(s, remembered);
    adf_test(s, malformed);
    adf_test(s, names);
    adf_test(s, sibling_extensions);
    return adf_test_run(s);
}
