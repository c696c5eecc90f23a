/* Entity tags (adf_etag.h): reading a client's held tags, and the 304
 * decision over every pair of what the client holds and what goes out
 * now, in this build: a coding it lacks is no coding of ours. */
#include "config.h"
#include "adf_test.h"
#include <string.h>
#include <apr_strings.h>
#include "adf_etag.h"

/* Every representation a tag can name: identity, each coding on the
 * fly, dcz against a dictionary, a sibling and a cache entry. */
typedef enum { R_IDENTITY, R_FLY, R_DICT, R_SIBLING, R_CACHE } rep_e;

static const unsigned char dict1[32] = { 0x01, 0x23, 0x45, 0x67,
                                         0x89, 0xab, 0xcd, 0xef, 0x99 };
static const unsigned char dict2[32] = { 0xfe, 0xdc, 0xba, 0x98 };
static const unsigned char bytes1[32] = { 0x11, 0x11 };
static const unsigned char bytes2[32] = { 0x22, 0x22 };

/* The tag the module gives representation rep in coding c of the content
 * whose handler's tag is base ("abc"), weak or not as the client holds it. */
static const char *tag_for(rep_e rep, adf_coding_e c, const char *base,
                           const unsigned char *hash, int weak)
{
    const char *suffix = rep == R_IDENTITY ? ""
                       : rep == R_FLY || rep == R_DICT
                         ? adf_fly_etag_suffix(pool, c, hash)
                       : adf_stored_etag_suffix(pool, c, rep == R_CACHE, hash);

    return adf_etag_suffixed(pool, base, suffix, weak);
}

static adf_tag_t parse1(const char *s)
{
    adf_tag_t t;
    const char *p = s;

    ck_assert_msg(adf_tag_next(&p, &t), "no tag in %s", s);
    return t;
}

START_TEST(reads_tags)
{
    adf_tag_t t = parse1("\"abc\"");

    ck_assert_int_eq(t.kind, ADF_TAG_PLAIN);
    ck_assert(!t.weak);
    ck_assert_uint_eq(t.base_len, 3);
    ck_assert_uint_eq(t.len, 5);

    t = parse1(" W/\"abc-ad-gzip\" ");
    ck_assert_int_eq(t.kind, ADF_TAG_FLY);
    ck_assert_int_eq(t.coding, ADF_GZIP);
    ck_assert(t.weak);
    ck_assert_uint_eq(t.base_len, 3);
    ck_assert_uint_eq(t.len, 15);

    t = parse1("\"s-1-ad-gzip-pre.0123456789abcdef\"");
    ck_assert_int_eq(t.kind, ADF_TAG_SIBLING);
    ck_assert_uint_eq(t.base_len, 3);
    ck_assert(!memcmp(t.hex, "0123456789abcdef", 16));
    t = parse1("\"s-ad-gzip-cache.0123456789abcdef\"");
    ck_assert_int_eq(t.kind, ADF_TAG_CACHE);
    /* hex digits we never write (upper case), too few: no suffix */
    ck_assert_int_eq(parse1("\"s-ad-gzip-cache.0123456789ABCDEF\"").kind,
                     ADF_TAG_PLAIN);
    ck_assert_int_eq(parse1("\"s-ad-gzip-pre.0123\"").kind, ADF_TAG_PLAIN);
    /* a tag some other server made (mod_deflate's): not ours */
    ck_assert_int_eq(parse1("\"v1-gzip\"").kind, ADF_TAG_PLAIN);
    /* httpd's negotiated tag: no closing quote, to the end */
    t = parse1("\"abc;def");
    ck_assert_int_eq(t.kind, ADF_TAG_PLAIN);
    ck_assert_uint_eq(t.base_len, 7);
    ck_assert_uint_eq(t.len, 8);
    t = parse1("\"abc;def-ad-gzip\"");
    ck_assert_int_eq(t.kind, ADF_TAG_FLY);
    ck_assert_uint_eq(t.base_len, 7);
    /* a comma inside the quotes belongs to the tag */
    t = parse1("\"a,b\"");
    ck_assert_uint_eq(t.base_len, 3);
    ck_assert_int_eq(parse1(" * ").kind, ADF_TAG_ANY);
#ifdef ADF_HAVE_BROTLI
    ck_assert_int_eq(parse1("\"x-ad-br\"").coding, ADF_BR);
#else
    ck_assert_int_eq(parse1("\"x-ad-br\"").kind, ADF_TAG_PLAIN);
#endif
#ifdef ADF_HAVE_ZSTD
    t = parse1("W/\"x-ad-dcz-0123456789abcdef\"");
    ck_assert_int_eq(t.kind, ADF_TAG_DICT);
    ck_assert_int_eq(t.coding, ADF_DCZ);
    ck_assert_uint_eq(t.base_len, 1);
    /* dcz names its dictionary, or it is no tag of ours */
    ck_assert_int_eq(parse1("W/\"x-ad-dcz\"").kind, ADF_TAG_PLAIN);
    /* a kept delta is a cache entry, named by its bytes */
    t = parse1("\"x-ad-dcz-cache.0123456789abcdef\"");
    ck_assert_int_eq(t.kind, ADF_TAG_CACHE);
    ck_assert_int_eq(t.coding, ADF_DCZ);
    ck_assert_uint_eq(t.base_len, 1);
    ck_assert_int_eq(parse1("\"x-ad-dcz-pre.0123456789abcdef\"").kind,
                     ADF_TAG_PLAIN);
#else
    ck_assert_int_eq(parse1("W/\"x-ad-dcz-0123456789abcdef\"").kind,
                     ADF_TAG_PLAIN);
#endif
}
END_TEST

START_TEST(reads_lists)
{
    const char *s = "abc, \"x\" ,W/\"y\"z, *x, , \"q\"";
    const char *seen[4];
    adf_tag_t t;
    int n = 0;

    while (adf_tag_next(&s, &t)) {
        ck_assert_int_lt(n, 4);
        seen[n++] = apr_pstrmemdup(pool, t.text, t.len);
    }
    /* the bare word, the tag followed by junk and "*x" are no tags */
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(seen[0], "\"x\"");
    ck_assert_str_eq(seen[1], "\"q\"");
    s = "";
    ck_assert(!adf_tag_next(&s, &t));
    s = " , ,";
    ck_assert(!adf_tag_next(&s, &t));
    /* an unclosed quote runs to the end, commas and all */
    s = "\"x\", \"a;b, c ";
    ck_assert(adf_tag_next(&s, &t));
    ck_assert(adf_tag_next(&s, &t));
    ck_assert_str_eq(apr_pstrmemdup(pool, t.text, t.len), "\"a;b, c");
    ck_assert(!adf_tag_next(&s, &t));
}
END_TEST

START_TEST(makes_tags)
{
    ck_assert_str_eq(adf_etag_suffixed(pool, "\"abc\"", "-ad-gzip", 1),
                     "W/\"abc-ad-gzip\"");
    ck_assert_str_eq(adf_etag_suffixed(pool, "\"abc\"", "-x", 0),
                     "\"abc-x\"");
    /* a weak tag stays weak */
    ck_assert_str_eq(adf_etag_suffixed(pool, "W/\"abc\"", "-x", 0),
                     "W/\"abc-x\"");
    /* httpd's negotiated tag is closed after the suffix */
    ck_assert_str_eq(adf_etag_suffixed(pool, "\"abc;def", "-x", 0),
                     "\"abc;def-x\"");
    ck_assert_str_eq(adf_etag_suffixed(pool, "\"\"", "-x", 0), "\"-x\"");
    ck_assert_ptr_null(adf_etag_suffixed(pool, "abc", "-x", 0));
    ck_assert_ptr_null(adf_etag_suffixed(pool, "W/abc", "-x", 0));
    ck_assert_str_eq(adf_fly_etag_suffix(pool, ADF_GZIP, NULL), "-ad-gzip");
    ck_assert_str_eq(adf_stored_etag_suffix(pool, ADF_GZIP, 0, bytes1),
                     "-ad-gzip-pre.1111000000000000");
    ck_assert_str_eq(adf_stored_etag_suffix(pool, ADF_GZIP, 1, bytes1),
                     "-ad-gzip-cache.1111000000000000");
#ifdef ADF_HAVE_ZSTD
    ck_assert_str_eq(adf_fly_etag_suffix(pool, ADF_DCZ, dict1),
                     "-ad-dcz-0123456789abcdef");
#endif
}
END_TEST

/* The codings of this build, identity first. */
static int codings(adf_coding_e *out)
{
    int c, n = 0;

    out[n++] = ADF_IDENTITY;
    for (c = ADF_IDENTITY + 1; c < ADF_NCODINGS; c++) {
        if (adf_coding((adf_coding_e)c)) {
            out[n++] = (adf_coding_e)c;
        }
    }
    return n;
}

/* Accept-Encoding values, and which codings each accepts (a bit per
 * coding, identity's bit 0), written out, not computed. */
static const struct {
    const char *ae;
    unsigned accepts;
} clients[] = {
    { NULL, 1u << ADF_IDENTITY },
    { "gzip", 1u << ADF_IDENTITY | 1u << ADF_GZIP },
    { "br", 1u << ADF_IDENTITY | 1u << ADF_BR },
    { "zstd", 1u << ADF_IDENTITY | 1u << ADF_ZSTD },
    { "gzip, deflate, br, zstd, dcz", 1u << ADF_IDENTITY | 1u << ADF_GZIP
      | 1u << ADF_BR | 1u << ADF_ZSTD | 1u << ADF_DCZ },
    { "identity;q=0, gzip", 1u << ADF_GZIP },
    { "gzip;q=0, br", 1u << ADF_IDENTITY | 1u << ADF_BR },
    { "*;q=0", 0 },
    { "*", 1u << ADF_IDENTITY | 1u << ADF_GZIP | 1u << ADF_BR
      | 1u << ADF_ZSTD | 1u << ADF_DCZ },
    { "dcz", 1u << ADF_IDENTITY | 1u << ADF_DCZ },
};

/* What goes out now: the coding, on the fly or stored (which bytes), and
 * the dictionary the client holds now. */
typedef struct {
    rep_e rep;
    adf_coding_e coding;
    const unsigned char *stored;    /* stored bytes' digest */
    const unsigned char *dict;      /* the client's dictionary now */
} chosen_t;

/* Is rep one coding d is sent as?  A coding against a dictionary: on
 * the fly against it, or a kept delta (a cache entry); others: any but
 * that. */
static int dict_rep(const adf_coding_t *d, rep_e rep)
{
    return d && d->needs_dict ? rep == R_DICT || rep == R_CACHE
                              : rep != R_DICT;
}

/* Every pair (held, chosen), each held tag weak and strong, for each
 * client, against the same content and against another version of it:
 * a 304 exactly when the held tag names a representation of the current
 * content the client accepts now (its coding; for dcz the dictionary it
 * holds now; for stored bytes exactly those that go out now), and then
 * the client's own tag; a 200 otherwise. */
START_TEST(every_pair)
{
    adf_coding_e cs[ADF_NCODINGS];
    int n = codings(cs), h, k, i, w, v, d, sd, checked = 0;
    static const unsigned char *const dicts[] = { NULL, dict1, dict2 };
    static const unsigned char *const stores[] = { bytes1, bytes2 };

    for (i = 0; i < (int)(sizeof(clients) / sizeof(clients[0])); i++) {
        adf_accept_t acc;

        adf_accept_parse(clients[i].ae, &acc);
        for (h = 0; h < n; h++) for (rep_e hr = R_IDENTITY; hr <= R_CACHE;
                                     hr++) {
            adf_coding_e hc = cs[h];
            const adf_coding_t *hd = adf_coding(hc);
            /* the representations there are: identity alone has no
             * coding; dcz is made against a dictionary, on the fly or
             * kept as a cache entry (a delta); the others on the fly,
             * stored or cached */
            if ((hr == R_IDENTITY) != (hc == ADF_IDENTITY)
                || !dict_rep(hd, hr)) {
                continue;
            }
            for (w = 0; w < 2; w++) for (d = 0; d < 3; d++)
            for (sd = 0; sd < 2; sd++) for (v = 0; v < 2; v++)
            for (k = 0; k < n; k++) for (rep_e cr = R_IDENTITY; cr <= R_CACHE;
                                         cr++) {
                adf_coding_e cc = cs[k];
                const adf_coding_t *cd = adf_coding(cc);
                const unsigned char *hh = hr == R_DICT ? dict1
                                        : hr >= R_SIBLING ? bytes1 : NULL;
                chosen_t now = { cr, cc, stores[sd], dicts[d] };
                const char *held, *pick, *etag;
                apr_size_t pick_len;
                adf_tag_now_t tn;
                int want, got;

                if ((cr == R_IDENTITY) != (cc == ADF_IDENTITY)
                    || !dict_rep(cd, cr)) {
                    continue;
                }
                /* the client's tag; the content now: the same (abc) or
                 * another version (abd), whose stored bytes differ too */
                held = tag_for(hr, hc, "\"abc\"", hh, w);
                etag = v ? "\"abd\"" : "\"abc\"";
                memset(&tn, 0, sizeof(tn));
                tn.accept = &acc;
                tn.dict = now.dict;
                tn.chosen = cc;
                tn.stored = cr >= R_SIBLING
                            ? adf_stored_etag_suffix(pool, cc, cr == R_CACHE,
                                                     v ? bytes2 : now.stored)
                            : NULL;
                want = (clients[i].accepts >> hc) & 1;
                switch (hr) {
                case R_IDENTITY:
                case R_FLY:
                    want = want && !v;
                    break;
                case R_DICT:
                    want = want && !v && now.dict == dict1;
                    break;
                default:
                    /* exactly the bytes that go out now */
                    want = cr == hr && cc == hc && now.stored == bytes1
                           && !v;
                }
                got = adf_tag_not_modified(held, etag, &tn, &pick, &pick_len);
                ck_assert_msg(got == want, "held %s, AE %s, now %s %s "
                              "(rep %d, dict %d, bytes %d): %d, not %d",
                              held, clients[i].ae ? clients[i].ae : "-",
                              etag, cc ? adf_coding_name(cc) : "identity",
                              cr, d, sd, got, want);
                if (got) {
                    ck_assert_ptr_eq(pick, held);
                    ck_assert_uint_eq(pick_len, strlen(held));
                }
                checked++;
            }
        }
    }
    ck_assert_int_gt(checked, 1000);
}
END_TEST

static adf_tag_now_t now_for(adf_accept_t *acc, const char *ae,
                             adf_coding_e chosen)
{
    adf_tag_now_t tn;

    adf_accept_parse(ae, acc);
    memset(&tn, 0, sizeof(tn));
    tn.accept = acc;
    tn.chosen = chosen;
    return tn;
}

/* Several tags: the one naming what is chosen now, else the first that
 * may be kept; "*"; no tag of the handler's. */
START_TEST(lists)
{
    adf_accept_t acc;
    adf_tag_now_t tn = now_for(&acc, "gzip, zstd", ADF_GZIP);
    const char *list = "\"old\", \"abc\", W/\"abc-ad-gzip\"", *pick;
    apr_size_t len;

    ck_assert(adf_tag_not_modified(list, "\"abc\"", &tn, &pick, &len));
    ck_assert_str_eq(apr_pstrmemdup(pool, pick, len), "W/\"abc-ad-gzip\"");
    tn.chosen = ADF_IDENTITY;
    ck_assert(adf_tag_not_modified(list, "\"abc\"", &tn, &pick, &len));
    ck_assert_str_eq(apr_pstrmemdup(pool, pick, len), "\"abc\"");
    /* chosen now is held by none: the first one held */
    tn.chosen = ADF_ZSTD;
    ck_assert(adf_tag_not_modified(list, "\"abc\"", &tn, &pick, &len));
    ck_assert_str_eq(apr_pstrmemdup(pool, pick, len), "\"abc\"");
    /* a weak handler's tag (a file changed within the second) */
    ck_assert(adf_tag_not_modified(list, "W/\"abc\"", &tn, &pick, &len));
    ck_assert(!adf_tag_not_modified(list, "\"abd\"", &tn, &pick, &len));
    ck_assert(!adf_tag_not_modified(list, NULL, &tn, &pick, &len));
    /* a handler's tag that is no tag */
    ck_assert(!adf_tag_not_modified(list, "abc", &tn, &pick, &len));
    /* "*": there is a current representation; it carries the one that
     * would go out */
    ck_assert(adf_tag_not_modified(" * ", "\"abc\"", &tn, &pick, &len));
    ck_assert_ptr_null(pick);
    ck_assert(!adf_tag_not_modified("*", NULL, &tn, &pick, &len));
    /* negotiated tags, closed or not, against httpd's unclosed one */
    ck_assert(adf_tag_not_modified("W/\"abc;def-ad-gzip\"", "\"abc;def",
                                   &tn, &pick, &len));
    ck_assert(adf_tag_not_modified("\"abc;def", "\"abc;def", &tn, &pick,
                                   &len));
    ck_assert(!adf_tag_not_modified("\"abc;de", "\"abc;def", &tn, &pick,
                                    &len));
    ck_assert(!adf_tag_not_modified("", "\"abc\"", &tn, &pick, &len));
    ck_assert(!adf_tag_not_modified("junk", "\"abc\"", &tn, &pick, &len));
}
END_TEST

/* What the handler is shown: the bases of the tags the client may keep,
 * stored bytes' tags as they are, never an empty list. */
START_TEST(for_the_handler)
{
    adf_accept_t acc;
    adf_tag_now_t tn = now_for(&acc, "gzip", ADF_GZIP);
    const char *stored = "\"s-ad-gzip-pre.0123456789abcdef\"";

    ck_assert_str_eq(adf_tag_for_handler(pool, "W/\"abc-ad-gzip\", "
                                         "\"abc\"", &tn, 0),
                     "W/\"abc\", \"abc\"");
    /* an old strong tag of output made on the fly, by its base */
    ck_assert_str_eq(adf_tag_for_handler(pool, "\"abc-ad-gzip\"", &tn, 0),
                     "\"abc\"");
    /* If-Match: no tag made on the fly passes a strong comparison */
    ck_assert_str_eq(adf_tag_for_handler(pool, "W/\"abc-ad-gzip\", \"abc\"",
                                         &tn, 1), "\"abc\"");
    ck_assert_str_eq(adf_tag_for_handler(pool, "\"abc-ad-gzip\"", &tn, 1),
                     ADF_ETAG_NONE);
    ck_assert_str_eq(adf_tag_for_handler(pool, stored, &tn, 0), stored);
    ck_assert_str_eq(adf_tag_for_handler(pool, "*", &tn, 0), "*");
    /* unchanged: the same string */
    {
        const char *same = "\"abc\", \"def\"";
        ck_assert_ptr_eq(adf_tag_for_handler(pool, same, &tn, 0), same);
    }
    /* nothing the client may keep: a tag no handler makes, not an empty
     * field (If-Modified-Since would decide) */
    ck_assert_str_eq(adf_tag_for_handler(pool, "junk", &tn, 0),
                     ADF_ETAG_NONE);
    tn = now_for(&acc, "gzip;q=0", ADF_IDENTITY);
    ck_assert_str_eq(adf_tag_for_handler(pool, "W/\"abc-ad-gzip\", \"abc\"",
                                         &tn, 0), "\"abc\"");
    ck_assert_str_eq(adf_tag_for_handler(pool, "W/\"abc-ad-gzip\"", &tn, 0),
                     ADF_ETAG_NONE);
    tn = now_for(&acc, "gzip", ADF_GZIP);
    /* identity refused now: its tag goes too */
    tn = now_for(&acc, "identity;q=0, gzip", ADF_GZIP);
    ck_assert_str_eq(adf_tag_for_handler(pool, "\"abc\", W/\"abc-ad-gzip\"",
                                         &tn, 0), "W/\"abc\"");
    /* many tags, each kept: the list is longer, never overrun */
    tn = now_for(&acc, "gzip", ADF_GZIP);
    ck_assert_str_eq(adf_tag_for_handler(pool, "\"a\",\"b\",\"c\",W/\"d\"",
                                         &tn, 0),
                     "\"a\", \"b\", \"c\", W/\"d\"");
#ifdef ADF_HAVE_ZSTD
    /* dcz: only against the dictionary the client holds now */
    tn = now_for(&acc, "gzip, dcz", ADF_DCZ);
    ck_assert_str_eq(adf_tag_for_handler(pool, "W/\"abc-ad-dcz-0123456789abcdef\"",
                                         &tn, 0), ADF_ETAG_NONE);
    tn.dict = dict1;
    ck_assert_str_eq(adf_tag_for_handler(pool, "W/\"abc-ad-dcz-0123456789abcdef\"",
                                         &tn, 0), "W/\"abc\"");
    tn.dict = dict2;
    ck_assert_str_eq(adf_tag_for_handler(pool, "W/\"abc-ad-dcz-0123456789abcdef\"",
                                         &tn, 0), ADF_ETAG_NONE);
#endif
}
END_TEST

/* If-Range: a strong tag equal to the response's; a weak one never
 * (RFC 9110, 13.1.5); a date only where it names one byte sequence. */
START_TEST(if_range)
{
    ck_assert(adf_tag_range_ok(NULL, "\"abc\"", 1));
    ck_assert(adf_tag_range_ok("\"abc\"", "\"abc\"", 1));
    ck_assert(adf_tag_range_ok(" \"abc\"", "\"abc\"", 1));
    ck_assert(!adf_tag_range_ok("\"abc\"", "\"abd\"", 0));
    ck_assert(!adf_tag_range_ok("W/\"abc\"", "W/\"abc\"", 0));
    ck_assert(!adf_tag_range_ok("W/\"abc\"", "\"abc\"", 0));
    ck_assert(!adf_tag_range_ok("\"abc\"", "W/\"abc\"", 0));
    ck_assert(!adf_tag_range_ok("\"abc\"", NULL, 0));
    ck_assert(!adf_tag_range_ok("\"abc-ad-gzip\"", "W/\"abc-ad-gzip\"", 0));
    ck_assert(adf_tag_range_ok("Tue, 01 Dec 2026 10:00:00 GMT", "\"a\"", 0));
    ck_assert(!adf_tag_range_ok("Tue, 01 Dec 2026 10:00:00 GMT", "\"a\"", 1));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("etag");

    adf_test(s, reads_tags);
    adf_test(s, reads_lists);
    adf_test(s, makes_tags);
    adf_test(s, every_pair);
    adf_test(s, lists);
    adf_test(s, for_the_handler);
    adf_test(s, if_range);
    return adf_test_run(s);
}
