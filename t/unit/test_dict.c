/* Compression Dictionary Transport's pure parts: the Structured Field
 * items of its headers (RFC 8941), and the match pattern a file
 * advertises for its later versions, on real names. */
#include "adf_test.h"
#include "adf_sf.h"
#include "adf_dictmatch.h"

#include <string.h>

/* Available-Dictionary: one sf-binary of exactly 32 bytes. */
START_TEST(sf_binary)
{
    unsigned char h[32], want[32];
    int i;

    for (i = 0; i < 32; i++) {
        want[i] = (unsigned char)(0xa5 ^ i);
    }
    /* the RFC's example, as Chromium sends it */
    ck_assert_int_eq(adf_sf_binary(
        ":pZGm1Av0IEBKARczz7exkNYsZb8LzaMrV7J32a2fFG4=:", h, 32), 0);
    ck_assert_int_eq(h[0], 0xa5);
    ck_assert_int_eq(h[31], 0x6e);
    /* what we serialize reads back */
    ck_assert_int_eq(adf_sf_binary(adf_sf_bytes(pool, want, 32), h, 32), 0);
    ck_assert(!memcmp(h, want, 32));
    ck_assert_str_eq(adf_sf_bytes(pool, (const unsigned char *)"ab", 2),
                     ":YWI=:");
    /* surrounding spaces, parameters (ignored), no padding: still one */
    ck_assert_int_eq(adf_sf_binary(
        "  :pZGm1Av0IEBKARczz7exkNYsZb8LzaMrV7J32a2fFG4=:;a=1;b  ", h, 32),
        0);
    ck_assert_int_eq(adf_sf_binary(
        ":pZGm1Av0IEBKARczz7exkNYsZb8LzaMrV7J32a2fFG4:", h, 32), 0);
    /* not one 32-byte sf-binary: no dictionary */
    ck_assert_int_eq(adf_sf_binary(NULL, h, 32), -1);
    ck_assert_int_eq(adf_sf_binary("", h, 32), -1);
    ck_assert_int_eq(adf_sf_binary(":YWI=:", h, 32), -1);            /* 2 */
    ck_assert_int_eq(adf_sf_binary(
        "pZGm1Av0IEBKARczz7exkNYsZb8LzaMrV7J32a2fFG4=", h, 32), -1);  /* bare */
    ck_assert_int_eq(adf_sf_binary(
        ":pZGm1Av0IEBKARczz7exkNYsZb8LzaMrV7J32a2fFG4=", h, 32), -1); /* open */
    ck_assert_int_eq(adf_sf_binary(
        ":pZGm1Av0IEBKARczz7exkNYsZb8LzaMrV7J32a2fFG4=:, :YWI=:", h, 32),
        -1);                                     /* a list: two headers */
    ck_assert_int_eq(adf_sf_binary(
        ":pZGm1Av0IEBKARczz7exkNYsZb8LzaMrV7J32a2fFG4==:", h, 32), -1);
    ck_assert_int_eq(adf_sf_binary(
        ":pZGm1Av0IEBKARczz7exkNYsZb8Lz*MrV7J32a2fFG4=:", h, 32), -1);
    ck_assert_int_eq(adf_sf_binary(
        ":pZGm1Av0IEBKARczz7exkNYsZb8LzaMrV7J32a2fFG4=:;A=1", h, 32), -1);
    ck_assert_int_eq(adf_sf_binary(
        ":pZGm1Av0IEBKARczz7exkNYsZb8LzaMrV7J32a2fFG4=:;a=\"x", h, 32), -1);
    ck_assert_int_eq(adf_sf_binary(
        ":pZGm1Av0IEBKARczz7exkNYsZb8LzaMrV7J32a2fFG4=: x", h, 32), -1);
    ck_assert_int_eq(adf_sf_binary(
        "\":pZGm1Av0IEBKARczz7exkNYsZb8LzaMrV7J32a2fFG4=:\"", h, 32), -1);
}
END_TEST

/* Dictionary-ID: an sf-string of at most 1024 characters. */
START_TEST(sf_string)
{
    char out[1025], big[1100];

    ck_assert_int_eq(adf_sf_string(
        "\"/v1/main.js 33a64df551425fcc55e4d42a148795d9f25f89d4\"", out,
        1024), 0);
    ck_assert_str_eq(out, "/v1/main.js 33a64df551425fcc55e4d42a148795d9f25f89d4");
    ck_assert_int_eq(adf_sf_string("\"a\\\"b\\\\c\";p=?1", out, 1024), 0);
    ck_assert_str_eq(out, "a\"b\\c");
    ck_assert_int_eq(adf_sf_string("\"\"", out, 1024), 0);
    ck_assert_str_eq(out, "");
    ck_assert_int_eq(adf_sf_string("\"a\\x\"", out, 1024), -1);  /* escape */
    ck_assert_int_eq(adf_sf_string("\"a\tb\"", out, 1024), -1);  /* control */
    ck_assert_int_eq(adf_sf_string("\"abc", out, 1024), -1);
    ck_assert_int_eq(adf_sf_string("abc", out, 1024), -1);       /* token */
    ck_assert_int_eq(adf_sf_string("\"a\" \"b\"", out, 1024), -1);
    ck_assert_int_eq(adf_sf_string("\"\xc3\xa9\"", out, 1024), -1);
    big[0] = '"';
    memset(big + 1, 'x', 1025);
    strcpy(big + 1026, "\"");
    ck_assert_int_eq(adf_sf_string(big, out, 1024), -1);         /* 1025 */
    big[1025] = '"';
    big[1026] = '\0';
    ck_assert_int_eq(adf_sf_string(big, out, 1024), 0);          /* 1024 */
    /* parameters of every kind parse; a malformed one fails */
    ck_assert_int_eq(adf_sf_string("\"x\";a;b=1;c=-2.5;d=tok/en:x;e=:YWI=:;"
                                   " f=\"s\";*g=?0", out, 9), 0);
    ck_assert_int_eq(adf_sf_string("\"x\";a=1.2345", out, 9), -1);
    ck_assert_int_eq(adf_sf_string("\"x\";a=1234567890123456", out, 9), -1);
    ck_assert_int_eq(adf_sf_string("\"x\";=1", out, 9), -1);
    ck_assert_int_eq(adf_sf_string("\"x\";a=?2", out, 9), -1);
    /* serialized: quotes and backslashes escaped; nothing outside ASCII */
    ck_assert_str_eq(adf_sf_quote(pool, "/a\\*.js \"x\""),
                     "\"/a\\\\*.js \\\"x\\\"\"");
    ck_assert_ptr_null(adf_sf_quote(pool, "caf\xc3\xa9"));
    ck_assert_ptr_null(adf_sf_quote(pool, "a\nb"));
}
END_TEST

/* The patterns of real names' later versions. */
START_TEST(match_patterns)
{
    static const char *const cases[][2] = {
        /* replaced in place: its own path */
        { "/static/lodash.min.js", "/static/lodash.min.js" },
        { "/js/react-dom.production.min.js", "/js/react-dom.production.min.js" },
        { "/css/bootstrap.bundle.min.css", "/css/bootstrap.bundle.min.css" },
        { "/fonts/inter.woff2", "/fonts/inter.woff2" },
        { "/", "/" },
        /* content hashes: webpack, CRA, Vite/Rollup, esbuild */
        { "/static/app.3f2a9c1b.js", "/static/app.*.js" },
        { "/static/js/main.7c2a1e5b.chunk.js", "/static/js/main.*.chunk.js" },
        { "/assets/index-DiwrgTda.js", "/assets/index-*.js" },
        { "/assets/vendor-BZ7kq3xA.css", "/assets/vendor-*.css" },
        { "/out/chunk-Q5ZHU7XG.js", "/out/chunk-*.js" },
        { "/build/deadbeefcafe.js", "/build/*.js" },
        { "/static/runtime~main.a1b2c3d4.js", "/static/runtime~main.*.js" },
        /* versions: semver, a v, builds and dates */
        { "/lib/react-dom-18.3.1.min.js", "/lib/react-dom-*.min.js" },
        { "/lib/jquery-3.7.1.min.js", "/lib/jquery-*.min.js" },
        { "/app.1699999999.js", "/app.*.js" },
        { "/lib/vue-3.4.0-beta.2.js", "/lib/vue-*-beta.*.js" },
        /* words are no hashes: Capitalised, short, plain hex-free */
        { "/js/Homepage.js", "/js/Homepage.js" },
        { "/js/decade.js", "/js/decade.js" },
        { "/js/settings-panel.js", "/js/settings-panel.js" },
        /* directories are never wildcards, versions or not: they tell
         * sites, users and owners apart */
        { "/npm/react-dom@18.3.1/umd/react-dom.production.min.js",
          "/npm/react-dom@18.3.1/umd/react-dom.production.min.js" },
        { "/app/1.2.3/main.js", "/app/1.2.3/main.js" },
        { "/api/v2/schema.json", "/api/v2/schema.json" },
        { "/users/1001/settings.json", "/users/1001/settings.json" },
        { "/srv/sites/1001/htdocs/app.js", "/srv/sites/1001/htdocs/app.js" },
        { "/home/u1001/public_html/app.3f2a9c1b.js",
          "/home/u1001/public_html/app.*.js" },
        { "/v2/lib-1.2.3/x-4.5.js", "/v2/lib-1.2.3/x-*.js" },
        { "app.3f2a9c1b.js", "app.*.js" },
        /* URL Pattern syntax in a name is escaped */
        { "/a+b/c(1).js", "/a\\+b/c\\(1\\).js" },
        { "/x:y/%7Bz%7D.js", "/x\\:y/%7Bz%7D.js" },
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got = adf_dict_match(pool, cases[i][0]);

        ck_assert_msg(!strcmp(got, cases[i][1]), "%s: %s, want %s",
                      cases[i][0], got, cases[i][1]);
    }
}
END_TEST

/* Every pattern made for a name matches that name, and the later
 * versions' names where the version is a "*". */
START_TEST(patterns_match_their_versions)
{
    static const char *const cases[][3] = {
        /* name, a later version's, another file's */
        { "/static/lodash.min.js", "/static/lodash.min.js",
          "/static/lodash.min.js.map" },
        { "/static/app.3f2a9c1b.js", "/static/app.9c1b3f2a.js",
          "/static/app.3f2a9c1b.css" },
        { "/lib/react-dom-18.3.1.min.js", "/lib/react-dom-19.0.0.min.js",
          "/lib/react-18.3.1.min.js" },
        /* a version in a directory: that directory's file only */
        { "/app/1.2.3/main.js", "/app/1.2.3/main.js", "/app/1.3.0/main.js" },
        { "/users/1001/app-3f2a9c1b.js", "/users/1001/app-9c1b3f2a.js",
          "/users/1002/app-3f2a9c1b.js" },
        { "/a+b/c(1).js", "/a+b/c(1).js", "/aab/c1.js" },
    };
    size_t i;

    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *m = adf_dict_match(pool, cases[i][0]);

        ck_assert_msg(adf_dict_pattern_ok(m), "%s", m);
        ck_assert_msg(adf_dict_pattern_matches(m, cases[i][0]), "%s", m);
        ck_assert_msg(adf_dict_pattern_matches(m, cases[i][1]), "%s: %s", m,
                      cases[i][1]);
        ck_assert_msg(!adf_dict_pattern_matches(m, cases[i][2]), "%s: %s", m,
                      cases[i][2]);
    }
}
END_TEST

START_TEST(pattern_syntax)
{
    /* what an operator may write */
    ck_assert(adf_dict_pattern_ok("/"));
    ck_assert(adf_dict_pattern_ok("/*"));
    ck_assert(adf_dict_pattern_ok("/app/*.html"));
    ck_assert(adf_dict_pattern_ok("/a\\(b\\)"));
    /* not a path; URL Pattern syntax this module does not evaluate; a
     * dangling escape */
    ck_assert(!adf_dict_pattern_ok(""));
    ck_assert(!adf_dict_pattern_ok("*.js"));
    ck_assert(!adf_dict_pattern_ok("https://example.com/*"));
    ck_assert(!adf_dict_pattern_ok("/:name.js"));
    ck_assert(!adf_dict_pattern_ok("/(\\d+).js"));
    ck_assert(!adf_dict_pattern_ok("/app{s}?/x"));
    ck_assert(!adf_dict_pattern_ok("/a+"));
    ck_assert(!adf_dict_pattern_ok("/a\\"));
    ck_assert(!adf_dict_pattern_matches("/a+", "/a+"));

    ck_assert(adf_dict_pattern_matches("/*", "/"));
    ck_assert(adf_dict_pattern_matches("/*", "/x/y/z.html"));
    ck_assert(adf_dict_pattern_matches("/app/*.html", "/app/a/b.html"));
    ck_assert(!adf_dict_pattern_matches("/app/*.html", "/app/a.htm"));
    ck_assert(!adf_dict_pattern_matches("/app/*.html", "/ap/a.html"));
    ck_assert(adf_dict_pattern_matches("/a*b*c", "/aXbYbZc"));
    ck_assert(!adf_dict_pattern_matches("/a*b*c", "/aXbYbZ"));
    ck_assert(adf_dict_pattern_matches("/x**y", "/xy"));
    ck_assert(adf_dict_pattern_matches("/a\\*b", "/a*b"));
    ck_assert(!adf_dict_pattern_matches("/a\\*b", "/aXb"));
    ck_assert(!adf_dict_pattern_matches("/exact", "/exactly"));
    ck_assert(!adf_dict_pattern_matches("/exactly", "/exact"));
}
END_TEST

START_TEST(fetch_rules)
{
    /* a browser's same-origin fetches, a navigation, a tool without the
     * headers */
    ck_assert(adf_dict_fetch_allows("cors", "same-origin"));
    ck_assert(adf_dict_fetch_allows("no-cors", "same-origin"));
    ck_assert(adf_dict_fetch_allows("navigate", "none"));
    ck_assert(adf_dict_fetch_allows("navigate", "cross-site"));
    ck_assert(adf_dict_fetch_allows(NULL, NULL));
    ck_assert(adf_dict_fetch_allows("cors", "cross-site"));
    /* a cross-origin script or image: its reader cannot see the bytes */
    ck_assert(!adf_dict_fetch_allows("no-cors", "cross-site"));
    ck_assert(!adf_dict_fetch_allows("no-cors", "same-site"));
    ck_assert(!adf_dict_fetch_allows("No-Cors", "Cross-Site"));
    /* a field sent twice reaches the server as one list, and a list is
     * no answer: fail closed, whatever it holds */
    ck_assert(!adf_dict_fetch_allows("no-cors, no-cors", "cross-site"));
    ck_assert(!adf_dict_fetch_allows("no-cors, cors", "cross-site"));
    ck_assert(!adf_dict_fetch_allows("cors, no-cors", "same-origin"));
    ck_assert(!adf_dict_fetch_allows("cors", "same-origin, cross-site"));
    ck_assert(!adf_dict_fetch_allows("no-cors,cors", NULL));
    ck_assert(!adf_dict_fetch_allows(NULL, "same-origin, same-origin"));
    /* not one bare token: parameters, quotes, nothing at all */
    ck_assert(!adf_dict_fetch_allows("no-cors;x=1", "cross-site"));
    ck_assert(!adf_dict_fetch_allows("\"cors\"", "same-origin"));
    ck_assert(!adf_dict_fetch_allows("", "same-origin"));
    ck_assert(!adf_dict_fetch_allows("cors", ""));
    ck_assert(!adf_dict_fetch_allows("cors x", "same-origin"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("dict");

    adf_test(s, sf_binary);
    adf_test(s, sf_string);
    adf_test(s, match_patterns);
    adf_test(s, patterns_match_their_versions);
    adf_test(s, pattern_syntax);
    adf_test(s, fetch_rules);
    return adf_test_run(s);
}
