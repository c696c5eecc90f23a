/* The compressed cache's pure parts: key -> name, the entry trailer and
 * its validation, the LRU index. */
#include "config.h"
#include "adf_test.h"
#include "adf_cache_entry.h"
#include "adf_cache_temp.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static adf_ident_t key(void)
{
    adf_ident_t k = { 2049, 1234567, 100000,
                      { 1700000000, 123456789 }, { 1700000001, 5000 } };
    return k;
}

START_TEST(names_follow_the_key)
{
    adf_ident_t a = key(), b;
    apr_uint64_t h = adf_cache_key_hash(&a), ph;
    char name[ADF_CACHE_NAME_MAX], tmp[ADF_CACHE_NAME_MAX];
    adf_cache_writer_t me = { APR_UINT64_C(0xfedcba9876543210), 4194304 },
                       wr;
    adf_coding_e c;
    apr_size_t i;
    static const char *const others[] = {
        "README", "00000000000000ab.txt", "00000000000000AB.gz",
        "00000000000000ab.gzx", "00000000000000ab.gz.tmp.",
        "00000000000000ab.gz.tmp.0", "00000000000000ab.gz.tmp.12x",
        "0000000000000ab.gz", "00000000000000ab.dic", "00000000000000ab.x",
        /* a node of 16 hex digits, never 0, and a pid after it */
        "00000000000000ab.gz.tmp.0123456789abcdef.",
        "00000000000000ab.gz.tmp.0123456789abcdef",
        "00000000000000ab.gz.tmp.0123456789ABCDEF.12",
        "00000000000000ab.gz.tmp.0123456789abcde.12",
        "00000000000000ab.gz.tmp.0000000000000000.12",
        "00000000000000ab.gz.tmp.0123456789abcdef.012",
        "00000000000000ab.gz.tmp.0123456789abcdef.12.3"
    };

    /* microseconds are the key's precision: a request's stat has no more */
    b = a;
    b.mtime.nsec = 123456000;
    ck_assert(adf_cache_key_hash(&b) == h);
    /* any other change is another key: a microsecond of mtime or ctime
     * (an edit in the same second, a rollback), inode, size, device */
    b = a;
    b.mtime.nsec += 1000;
    ck_assert(adf_cache_key_hash(&b) != h);
    b = a;
    b.mtime.sec -= 3600;
    ck_assert(adf_cache_key_hash(&b) != h);
    b = a;
    b.ctime.nsec += 1000;
    ck_assert(adf_cache_key_hash(&b) != h);
    b = a;
    b.ino++;
    ck_assert(adf_cache_key_hash(&b) != h);
    b = a;
    b.size++;
    ck_assert(adf_cache_key_hash(&b) != h);
    b = a;
    b.dev++;
    ck_assert(adf_cache_key_hash(&b) != h);

    adf_cache_entry_name(name, h, ADF_GZIP);
    ck_assert_int_eq(strlen(name), 16 + 3);
    ck_assert_str_eq(name + 16, ".gz");
    ck_assert(adf_cache_file_kind(name, &ph, &c, &wr)
              == ADF_CACHE_FILE_ENTRY);
    ck_assert(ph == h);
    ck_assert_int_eq(c, ADF_GZIP);
    adf_cache_entry_name(name, 0x00ab, ADF_GZIP);
    ck_assert_str_eq(name, "00000000000000ab.gz");
    /* a temporary file names its writer: the node (host and PID
     * namespace) and the pid there */
    adf_cache_temp_name(tmp, name, &me);
    ck_assert_str_eq(tmp, "00000000000000ab.gz.tmp.fedcba9876543210.4194304");
    ck_assert(adf_cache_file_kind(tmp, &ph, &c, &wr) == ADF_CACHE_FILE_TEMP);
    ck_assert(wr.node == me.node && wr.pid == me.pid);
    ck_assert(ph == 0x00ab);
    ck_assert_int_eq(c, ADF_GZIP);
    /* the longest: a dictionary's, the largest pid */
    adf_cache_entry_name(name, APR_UINT64_MAX, ADF_IDENTITY);
    me.pid = 999999999;
    adf_cache_temp_name(tmp, name, &me);
    ck_assert_str_eq(tmp, "ffffffffffffffff.dict.tmp.fedcba9876543210."
                          "999999999");
    ck_assert(adf_cache_file_kind(tmp, &ph, &c, &wr) == ADF_CACHE_FILE_TEMP);
    ck_assert(wr.pid == me.pid && c == ADF_IDENTITY);
    /* an earlier release's name: the pid alone, no node */
    ck_assert(adf_cache_file_kind("00000000000000ab.gz.tmp.4321", &ph, &c,
                                  &wr) == ADF_CACHE_FILE_TEMP);
    ck_assert(wr.node == 0 && wr.pid == 4321);
    adf_cache_entry_name(name, 0x00ab, ADF_GZIP);
    /* a dictionary, named from its SHA-256 */
    adf_cache_entry_name(name, 0x1234abcd, ADF_IDENTITY);
    ck_assert_str_eq(name, "000000001234abcd.dict");
    ck_assert(adf_cache_file_kind(name, &ph, &c, &wr)
              == ADF_CACHE_FILE_ENTRY);
    ck_assert(ph == 0x1234abcd);
    ck_assert_int_eq(c, ADF_IDENTITY);
    /* (gzip: the coding every build has) nothing else is taken for an
     * entry or a temporary file */
    for (i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
        ck_assert_msg(adf_cache_file_kind(others[i], &ph, &c, &wr)
                      == ADF_CACHE_FILE_OTHER, "%s", others[i]);
    }
}
END_TEST

START_TEST(crc_is_crc32)
{
    ck_assert_uint_eq(adf_cache_crc(0, "123456789", 9), 0xCBF43926u);
    /* continued in pieces, the same */
    ck_assert_uint_eq(adf_cache_crc(adf_cache_crc(0, "1234", 4), "56789", 5),
                      0xCBF43926u);
}
END_TEST

/* The trailers' coding: one this build has (an entry in a coding it
 * lacks is not its own, below), and another. */
#ifdef ADF_HAVE_BROTLI
#define T_CODING ADF_BR
#define T_TOKEN "br\0\0\0\0\0\0"
#define T_OTHER ADF_GZIP
#else
#define T_CODING ADF_GZIP
#define T_TOKEN "gzip\0\0\0\0"
#define T_OTHER ADF_BR
#endif

static adf_cache_trailer_t trailer(void)
{
    adf_cache_trailer_t t;

    int i;

    t.coding = T_CODING;
    t.length = 12345;
    t.crc = 0xdeadbeef;
    for (i = 0; i < ADF_DIGEST_LEN; i++) {
        t.digest[i] = (unsigned char)(255 - i);
        t.source[i] = (unsigned char)(7 * i + 1);
    }
    t.key = key();
    return t;
}

START_TEST(trailer_round_trip)
{
    adf_cache_trailer_t t = trailer(), u;
    unsigned char buf[ADF_CACHE_TRAILER];

    adf_cache_trailer_format(buf, &t);
    ck_assert_int_eq(adf_cache_trailer_parse(buf, 12345 + ADF_CACHE_TRAILER,
                                             &u), 0);
    ck_assert_int_eq(u.coding, T_CODING);
    ck_assert(u.length == 12345);
    ck_assert_uint_eq(u.crc, 0xdeadbeef);
    ck_assert(!memcmp(u.digest, t.digest, ADF_DIGEST_LEN));
    ck_assert(!memcmp(u.source, t.source, ADF_DIGEST_LEN));
    ck_assert(adf_ident_same(&u.key, &t.key));
    /* the magic number ends the file; the coding is stored as its token,
     * not as this build's number for it */
    ck_assert(!memcmp(buf + ADF_CACHE_TRAILER - 8, "ADFcache", 8));
    ck_assert(!memcmp(buf + 4, T_TOKEN, 8));
    /* a dictionary: the source's own bytes, token "identity" */
    t.coding = ADF_IDENTITY;
    adf_cache_trailer_format(buf, &t);
    ck_assert(!memcmp(buf + 4, "identity", 8));
    ck_assert_int_eq(adf_cache_trailer_parse(buf, 12345 + ADF_CACHE_TRAILER,
                                             &u), 0);
    ck_assert_int_eq(u.coding, ADF_IDENTITY);
#ifndef ADF_HAVE_BROTLI
    /* a br entry (a build with brotli wrote it) is not this build's */
    t.coding = ADF_BR;
    adf_cache_trailer_format(buf, &t);
    ck_assert_int_eq(adf_cache_trailer_parse(buf, 12345 + ADF_CACHE_TRAILER,
                                             &u), -1);
#endif
}
END_TEST

/* An earlier release's entry (a version 1 trailer: 80 bytes, a coding
 * number, no digest; version 2: 116 bytes, no source digest) is told
 * apart from a damaged one. */
START_TEST(trailer_of_an_earlier_release)
{
    unsigned char buf[ADF_CACHE_TRAILER] = { 0 };
    unsigned char *v1 = buf + ADF_CACHE_TRAILER - 80;
    unsigned char *v2 = buf + ADF_CACHE_TRAILER - 116;
    adf_cache_trailer_t u;
    apr_uint32_t crc;
    int i;

    v2[0] = 2;                      /* version */
    memcpy(v2 + 4, "br", 2);
    crc = adf_cache_crc(0, v2, 104);
    for (i = 0; i < 4; i++) {
        v2[104 + i] = (unsigned char)(crc >> (8 * i));
    }
    memcpy(v2 + 108, "ADFcache", 8);
    ck_assert_int_eq(adf_cache_trailer_parse(buf, 1000, &u),
                     ADF_CACHE_TRAILER_OLD);
    ck_assert_int_eq(adf_cache_trailer_parse(buf, 115, &u),
                     ADF_CACHE_TRAILER_BAD);
    v2[10] ^= 1;
    ck_assert_int_eq(adf_cache_trailer_parse(buf, 1000, &u),
                     ADF_CACHE_TRAILER_BAD);
    memset(buf, 0, sizeof(buf));

    v1[0] = 1;                      /* version */
    v1[4] = 2;                      /* br */
    crc = adf_cache_crc(0, v1, 68);
    for (i = 0; i < 4; i++) {
        v1[68 + i] = (unsigned char)(crc >> (8 * i));
    }
    memcpy(v1 + 72, "ADFcache", 8);
    ck_assert_int_eq(adf_cache_trailer_parse(buf, 1000, &u),
                     ADF_CACHE_TRAILER_OLD);
    ck_assert_int_eq(adf_cache_trailer_parse(buf, 80, &u),
                     ADF_CACHE_TRAILER_OLD);
    ck_assert_int_eq(adf_cache_trailer_parse(buf, 79, &u),
                     ADF_CACHE_TRAILER_BAD);
    v1[10] ^= 1;                    /* damaged: not a trailer of any kind */
    ck_assert_int_eq(adf_cache_trailer_parse(buf, 1000, &u),
                     ADF_CACHE_TRAILER_BAD);
}
END_TEST

/* Version 3 is this layout: its coded entries are read as they are, its
 * dictionaries (no record of where they were served) are an earlier
 * release's. */
START_TEST(trailer_of_version_3)
{
    adf_cache_trailer_t t = trailer(), u;
    unsigned char buf[ADF_CACHE_TRAILER];
    apr_uint32_t crc;
    int i;

    for (t.coding = T_CODING;; t.coding = ADF_IDENTITY) {
        adf_cache_trailer_format(buf, &t);
        buf[0] = 3;
        crc = adf_cache_crc(0, buf, 136);
        for (i = 0; i < 4; i++) {
            buf[136 + i] = (unsigned char)(crc >> (8 * i));
        }
        ck_assert_int_eq(adf_cache_trailer_parse(buf, 12345 + ADF_CACHE_TRAILER,
                                                 &u),
                         t.coding == ADF_IDENTITY ? ADF_CACHE_TRAILER_OLD
                                                  : ADF_CACHE_TRAILER_OK);
        if (t.coding == ADF_IDENTITY) {
            break;
        }
        ck_assert_int_eq(u.coding, T_CODING);
        ck_assert(u.length == 12345);
    }
}
END_TEST

/* A dictionary's record of where it was served: read back from the end
 * of its payload, whatever precedes it; any damage, truncation or
 * string too many or too few is no record. */
START_TEST(origin_round_trip)
{
    adf_cache_origin_t o = { "www.example.com:0", "/static/app.3f2a9c1b.js",
                             "/var/www/static/app.3f2a9c1b.js" }, u;
    unsigned char rec[ADF_CACHE_ORIGIN_MAX], buf[ADF_CACHE_ORIGIN_MAX + 100];
    char big[ADF_CACHE_ORIGIN_MAX];
    apr_size_t n = adf_cache_origin_format(rec, &o), i;
    int bit;

    ck_assert_uint_eq(n, strlen(o.host) + strlen(o.uri) + strlen(o.path)
                         + 3 + 8);
    memset(buf, 'x', 100);
    memcpy(buf + 100, rec, n);
    ck_assert_uint_eq(adf_cache_origin_parse(buf, 100 + n, &u), n);
    ck_assert_str_eq(u.host, o.host);
    ck_assert_str_eq(u.uri, o.uri);
    ck_assert_str_eq(u.path, o.path);
    ck_assert_uint_eq(adf_cache_origin_parse(rec, n, &u), n);
    ck_assert_uint_eq(adf_cache_origin_parse(buf, 100 + n - 1, &u), 0);
    ck_assert_uint_eq(adf_cache_origin_parse(rec + 1, n - 1, &u), 0);
    ck_assert_uint_eq(adf_cache_origin_parse(rec, 7, &u), 0);
    for (i = 0; i < n; i++) {
        for (bit = 0; bit < 8; bit++) {
            memcpy(buf, rec, n);
            buf[i] ^= (unsigned char)(1 << bit);
            ck_assert_msg(!adf_cache_origin_parse(buf, n, &u), "byte %u bit %d",
                          (unsigned)i, bit);
        }
    }
    /* four strings ("abc" cut in two), or two (the URL's end joined to
     * the path), under a CRC that holds: no record */
    o.path = "abc";
    for (bit = 0; bit < 2; bit++) {
        apr_uint32_t crc;

        n = adf_cache_origin_format(rec, &o);
        rec[n - 8 - (bit ? 5 : 3)] = bit ? 'x' : '\0';
        crc = adf_cache_crc(0, rec, n - 8);
        for (i = 0; i < 4; i++) {
            rec[n - 4 + i] = (unsigned char)(crc >> (8 * i));
        }
        ck_assert_uint_eq(adf_cache_origin_parse(rec, n, &u), 0);
    }
    /* too long for a record */
    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    o.path = big;
    ck_assert_uint_eq(adf_cache_origin_format(rec, &o), 0);
}
END_TEST

/* Read from a dictionary's file: its bytes' length before the record;
 * a file whose record was cut or damaged, or shorter than its trailer
 * says, has none. */
START_TEST(origin_read_from_files)
{
    adf_cache_origin_t o = { "a.test:0", "/x/app.js", "/srv/x/app.js" }, u;
    unsigned char rec[ADF_CACHE_ORIGIN_MAX], buf[ADF_CACHE_ORIGIN_MAX];
    char path[] = "/tmp/adf-origin-XXXXXX";
    int fd = mkstemp(path);
    apr_size_t n = adf_cache_origin_format(rec, &o);

    ck_assert_int_ge(fd, 0);
    unlink(path);
    ck_assert_int_eq(write(fd, "abcdef", 6), 6);
    ck_assert_int_eq(write(fd, rec, n), (int)n);
    ck_assert_int_eq(adf_cache_origin_read(fd, 6 + n, buf, &u), 6);
    ck_assert_str_eq(u.uri, "/x/app.js");
    /* the payload the trailer gives is not what the file holds */
    ck_assert_int_eq(adf_cache_origin_read(fd, 6 + n - 1, buf, &u), -1);
    ck_assert_int_eq(adf_cache_origin_read(fd, 6 + n + 1, buf, &u), -1);
    /* a byte of the record changed */
    ck_assert_int_eq(pwrite(fd, "Z", 1, 6 + 2), 1);
    ck_assert_int_eq(adf_cache_origin_read(fd, 6 + n, buf, &u), -1);
    close(fd);
}
END_TEST

/* A dictionary's name: its SHA-256, its host and its path pattern, each
 * of them; a version's key: its entry, host and directory, never 0. */
START_TEST(dictionary_scopes)
{
    unsigned char sha[ADF_DIGEST_LEN] = { 1, 2, 3, 4, 5, 6, 7, 8 };
    apr_uint64_t h = adf_cache_dict_hash(sha, "a.test:0", "/x/app-*.js");

    ck_assert(h == adf_cache_dict_hash(sha, "a.test:0", "/x/app-*.js"));
    ck_assert(h != adf_cache_dict_hash(sha, "b.test:0", "/x/app-*.js"));
    ck_assert(h != adf_cache_dict_hash(sha, "a.test:0", "/y/app-*.js"));
    ck_assert(adf_cache_dict_hash(sha, "ab", "c")
              != adf_cache_dict_hash(sha, "a", "bc"));
    sha[3] ^= 1;
    ck_assert(h != adf_cache_dict_hash(sha, "a.test:0", "/x/app-*.js"));

    h = adf_cache_version_key(42, "a.test:0", 0);
    ck_assert(h != 0);
    ck_assert(h == adf_cache_version_key(42, "a.test:0", 0));
    ck_assert(h != adf_cache_version_key(43, "a.test:0", 0));
    ck_assert(h != adf_cache_version_key(42, "b.test:0", 0));
    ck_assert(h != adf_cache_version_key(42, "a.test:0", 1));
}
END_TEST

/* Read from a file: short files, and files of exactly a trailer. */
START_TEST(trailer_read_from_files)
{
    adf_cache_trailer_t t = trailer(), u;
    unsigned char buf[ADF_CACHE_TRAILER];
    char path[] = "/tmp/adf-trailer-XXXXXX";
    int fd = mkstemp(path);

    ck_assert_int_ge(fd, 0);
    unlink(path);
    t.length = 3;
    adf_cache_trailer_format(buf, &t);
    ck_assert_int_eq(write(fd, "abc", 3), 3);
    ck_assert_int_eq(write(fd, buf, sizeof(buf)), (int)sizeof(buf));
    ck_assert_int_eq(adf_cache_trailer_read(fd, 3 + ADF_CACHE_TRAILER, &u),
                     ADF_CACHE_TRAILER_OK);
    ck_assert(u.length == 3 && u.coding == T_CODING);
    /* a size larger than the file: cannot be read */
    ck_assert_int_eq(adf_cache_trailer_read(fd, 4 + ADF_CACHE_TRAILER, &u),
                     ADF_CACHE_TRAILER_BAD);
    /* shorter than a trailer */
    ck_assert_int_eq(adf_cache_trailer_read(fd, 10, &u),
                     ADF_CACHE_TRAILER_BAD);
    ck_assert_int_eq(adf_cache_trailer_read(fd, 0, &u),
                     ADF_CACHE_TRAILER_BAD);
    close(fd);
}
END_TEST

START_TEST(trailer_rejects_damage)
{
    adf_cache_trailer_t t = trailer(), u;
    unsigned char buf[ADF_CACHE_TRAILER], bad[ADF_CACHE_TRAILER];
    apr_off_t size = 12345 + ADF_CACHE_TRAILER;
    int i, bit;

    adf_cache_trailer_format(buf, &t);
    /* truncated or appended to: the coded length no longer fits */
    ck_assert_int_eq(adf_cache_trailer_parse(buf, size - 1, &u), -1);
    ck_assert_int_eq(adf_cache_trailer_parse(buf, size + 1, &u), -1);
    ck_assert_int_eq(adf_cache_trailer_parse(buf, ADF_CACHE_TRAILER - 1, &u),
                     -1);
    /* any flipped bit of the trailer */
    for (i = 0; i < ADF_CACHE_TRAILER; i++) {
        for (bit = 0; bit < 8; bit++) {
            memcpy(bad, buf, sizeof(bad));
            bad[i] ^= (unsigned char)(1 << bit);
            ck_assert_msg(adf_cache_trailer_parse(bad, size, &u) == -1,
                          "byte %d bit %d", i, bit);
        }
    }
    /* a file that ends in anything else: coded bytes, zeros */
    memset(bad, 0, sizeof(bad));
    ck_assert_int_eq(adf_cache_trailer_parse(bad, size, &u), -1);
    /* a coding this format does not know */
    t.coding = ADF_NCODINGS;
    adf_cache_trailer_format(bad, &t);
    ck_assert_int_eq(adf_cache_trailer_parse(bad, size, &u), -1);
}
END_TEST

START_TEST(trailer_names_its_source)
{
    adf_cache_trailer_t t = trailer();
    adf_ident_t f = key();

    /* the request has microseconds */
    f.mtime.nsec = 123456000;
    f.ctime.nsec = 5000;
    ck_assert(adf_cache_trailer_matches(&t, &f, T_CODING));
    ck_assert(!adf_cache_trailer_matches(&t, &f, T_OTHER));
    f.ctime.nsec += 1000;           /* touched a microsecond later */
    ck_assert(!adf_cache_trailer_matches(&t, &f, T_CODING));
    f = key();
    f.mtime.sec -= 86400;           /* rolled back: cp -p, touch -d */
    ck_assert(!adf_cache_trailer_matches(&t, &f, T_CODING));
    f = key();
    f.size--;
    ck_assert(!adf_cache_trailer_matches(&t, &f, T_CODING));
    f = key();
    f.dev++;
    ck_assert(!adf_cache_trailer_matches(&t, &f, T_CODING));
}
END_TEST

START_TEST(index_arithmetic)
{
    adf_cache_index_t x = { 0 };
    const adf_cache_rec_t *v;
    adf_cache_rec_t *r;

    ck_assert_int_eq(adf_cache_index_add(&x, 30, ADF_BR, 100, 3), 0);
    ck_assert_int_eq(adf_cache_index_add(&x, 10, ADF_BR, 200, 1), 0);
    ck_assert_int_eq(adf_cache_index_add(&x, 20, ADF_BR, 300, 2), 0);
    ck_assert_int_eq(adf_cache_index_add(&x, 20, ADF_GZIP, 50, 2), 0);
    ck_assert_int_eq(x.n, 3);
    ck_assert(x.bytes == 650);
    r = adf_cache_index_find(&x, 20);
    ck_assert(r && r->bytes == 350 && r->file[ADF_BR] == 300
              && r->file[ADF_GZIP] == 50 && r->file[ADF_ZSTD] == 0);
    /* a coding's file written again replaces the old one's size */
    ck_assert_int_eq(adf_cache_index_add(&x, 20, ADF_GZIP, 60, 1), 0);
    ck_assert(x.bytes == 660 && r->bytes == 360 && r->used == 2);
    ck_assert(!adf_cache_index_find(&x, 15));
    /* sorted by hash */
    ck_assert(x.rec[0].hash == 10 && x.rec[1].hash == 20
              && x.rec[2].hash == 30);

    /* within the limit: nothing to evict */
    ck_assert(!adf_cache_index_victim(&x, 660, 0));
    /* over: the least recently used first */
    v = adf_cache_index_victim(&x, 659, 0);
    ck_assert(v && v->hash == 10);
    /* a hit makes it the most recent */
    ck_assert_int_eq(adf_cache_index_add(&x, 10, ADF_BR, 200, 9), 0);
    v = adf_cache_index_victim(&x, 659, 0);
    ck_assert(v && v->hash == 20);
    /* the entry just written is not evicted to make room... */
    v = adf_cache_index_victim(&x, 659, 20);
    ck_assert(v && v->hash == 30);
    ck_assert(adf_cache_index_remove(&x, 30) == 100);
    ck_assert(adf_cache_index_remove(&x, 30) == 0);
    ck_assert(adf_cache_index_remove(&x, 10) == 200);
    ck_assert(x.n == 1 && x.bytes == 360);
    /* ... unless it alone is too big */
    ck_assert(!adf_cache_index_victim(&x, 360, 20));
    v = adf_cache_index_victim(&x, 359, 20);
    ck_assert(v && v->hash == 20);
    adf_cache_index_free(&x);
    ck_assert(x.n == 0 && x.bytes == 0 && !x.rec);
}
END_TEST

START_TEST(index_many)
{
    adf_cache_index_t x = { 0 };
    apr_off_t total = 0, max = 5000;
    const adf_cache_rec_t *v;
    int i, n = 2000;

    srand(7);
    for (i = 0; i < n; i++) {
        apr_uint64_t h = ((apr_uint64_t)rand() << 32) ^ (apr_uint64_t)rand();

        h = h * 2 + 1;      /* never 0 */
        if (adf_cache_index_find(&x, h)) {
            continue;
        }
        ck_assert_int_eq(adf_cache_index_add(&x, h, ADF_BR, 1 + i % 7, i), 0);
        total += 1 + i % 7;
    }
    ck_assert(x.bytes == total);
    /* plain comparisons in the loops: every passing ck_assert is a write
     * to check's pipe, millions here (a timeout under ASan) */
    for (i = 1; i < x.n && x.rec[i - 1].hash < x.rec[i].hash; i++) {
    }
    ck_assert_int_eq(i, x.n);
    /* trimmed to max, oldest first: what is left is the newest */
    while ((v = adf_cache_index_victim(&x, max, 0))) {
        apr_time_t used = v->used;

        adf_cache_index_remove(&x, v->hash);
        for (i = 0; i < x.n && x.rec[i].used >= used; i++) {
        }
        ck_assert_int_eq(i, x.n);
    }
    ck_assert(x.bytes <= max && x.bytes > max - 7);
    adf_cache_index_free(&x);
}
END_TEST

static adf_temp_seen_t seen_at(apr_off_t size, long mtime_nsec)
{
    adf_temp_seen_t v = { 77, 0, { 1700000000, 0 }, { 1700000000, 0 } };

    v.size = size;
    v.mtime.nsec = mtime_nsec;
    v.ctime.nsec = mtime_nsec;
    return v;
}

/* Another writer's temporary file is abandoned only once nothing of it
 * changed for ADF_TEMP_STALE on the watcher's clock: the file's own
 * times are never held against that clock. */
START_TEST(temp_abandoned_when_unchanged)
{
    adf_temp_watches_t l = { .n = 0 };
    adf_temp_seen_t a = seen_at(100, 0), b;
    apr_time_t t = apr_time_from_sec(1000);
    char name[ADF_CACHE_NAME_MAX];
    int k;

    ck_assert_int_eq(adf_temp_watch(&l, 0, "x.br.tmp.1.2", &a, t), 0);
    ck_assert_int_eq(adf_temp_watch(&l, 0, "x.br.tmp.1.2", &a, t + 5), 0);
    ck_assert_int_eq(l.n, 1);       /* known: watched once */
    /* unchanged, short of the bound: live */
    ck_assert(adf_temp_judge(&l.w[0], &a, t + ADF_TEMP_STALE - 1)
              == ADF_TEMP_LIVE);
    /* a refreshed mtime (or a write: its size) starts the wait again */
    b = seen_at(100, 5000);
    ck_assert(adf_temp_judge(&l.w[0], &b, t + ADF_TEMP_STALE - 1)
              == ADF_TEMP_LIVE);
    ck_assert(adf_temp_judge(&l.w[0], &b, t + ADF_TEMP_STALE + 5)
              == ADF_TEMP_LIVE);
    b.size = 200;
    ck_assert(adf_temp_judge(&l.w[0], &b, 2 * ADF_TEMP_STALE + t - 2)
              == ADF_TEMP_LIVE);
    ck_assert(adf_temp_judge(&l.w[0], &b, 3 * ADF_TEMP_STALE + t - 3)
              == ADF_TEMP_LIVE);
    /* ... and so does another file under the name */
    b.ino++;
    ck_assert(adf_temp_judge(&l.w[0], &b, 3 * ADF_TEMP_STALE + t - 2)
              == ADF_TEMP_LIVE);
    /* unchanged for the bound: abandoned */
    ck_assert(adf_temp_judge(&l.w[0], &b, 4 * ADF_TEMP_STALE + t - 2)
              == ADF_TEMP_ABANDONED);
    /* a clock set back waits again, the safe side */
    ck_assert(adf_temp_judge(&l.w[0], &b, t) == ADF_TEMP_LIVE);
    ck_assert(adf_temp_judge(&l.w[0], &b, t + ADF_TEMP_STALE - 1)
              == ADF_TEMP_LIVE);
    /* renamed (published) or removed: gone */
    ck_assert(adf_temp_judge(&l.w[0], NULL, t) == ADF_TEMP_GONE);
    adf_temp_unwatch(&l, 0);
    ck_assert_int_eq(l.n, 0);
    /* bounded: beyond ADF_TEMP_WATCHED, refused (a later scan sees it) */
    for (k = 0; k < ADF_TEMP_WATCHED; k++) {
        snprintf(name, sizeof(name), "x.br.tmp.1.%d", k + 1);
        ck_assert_int_eq(adf_temp_watch(&l, 1, name, &a, t), 0);
    }
    ck_assert_int_eq(adf_temp_watch(&l, 1, "x.gz.tmp.1.2", &a, t), -1);
    /* the same name in another directory is another file */
    ck_assert_int_eq(adf_temp_watch(&l, 1, "x.br.tmp.1.1", &a, t), 0);
    ck_assert_int_eq(adf_temp_watch(&l, 2, "x.br.tmp.1.1", &a, t), -1);
    adf_temp_unwatch(&l, 0);
    ck_assert_str_eq(l.w[0].name, "x.br.tmp.1.64");
}
END_TEST

/* A delta: an entry of coding dcz, "<hash>.dcz", named from its source's
 * entry and the slot its dictionary's hash picks: at most
 * ADF_CACHE_DELTAS per version, whatever the dictionaries; its header
 * names the dictionary. */
START_TEST(deltas_named_by_slot)
{
    adf_ident_t a = key(), b = key();
    apr_uint64_t e = adf_cache_key_hash(&a), f, h[256], ph;
    unsigned char sha[ADF_DIGEST_LEN], got[ADF_DIGEST_LEN];
    char name[ADF_CACHE_NAME_MAX], path[64];
    adf_cache_writer_t wr;
    adf_coding_e c;
    int i, j, distinct = 0, fd;

    if (!adf_coding(ADF_DCZ)) {
        return;     /* (a build without zstd has no dcz: nothing to name) */
    }
    memset(sha, 0, sizeof(sha));
    for (i = 0; i < 256; i++) {
        sha[0] = (unsigned char)i;
        sha[5] = (unsigned char)(i * 7);
        h[i] = adf_cache_delta_hash(e, sha);
        ck_assert(h[i] != e);
        for (j = 0; j < i && h[j] != h[i]; j++) {
        }
        distinct += j == i;
    }
    ck_assert_int_eq(distinct, ADF_CACHE_DELTAS);
    /* another version's slots are its own */
    b.size++;
    f = adf_cache_key_hash(&b);
    sha[0] = 0;
    ck_assert(adf_cache_delta_hash(f, sha) != adf_cache_delta_hash(e, sha));
    adf_cache_entry_name(name, h[1], ADF_DCZ);
    ck_assert_str_eq(name + 16, ".dcz");
    ck_assert(adf_cache_file_kind(name, &ph, &c, &wr)
              == ADF_CACHE_FILE_ENTRY);
    ck_assert(ph == h[1]);
    ck_assert_int_eq(c, ADF_DCZ);
    /* the header names the dictionary; anything else has none */
    snprintf(path, sizeof(path), "/tmp/adf-delta-%d", (int)getpid());
    ck_assert_int_ge(fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600), 0);
    for (i = 0; i < ADF_DIGEST_LEN; i++) {
        sha[i] = (unsigned char)(i * 3 + 1);
    }
    ck_assert_int_eq(write(fd, adf_coding(ADF_DCZ)->dict_magic, 8), 8);
    ck_assert_int_eq(write(fd, sha, sizeof(sha)), (int)sizeof(sha));
    ck_assert_int_eq(write(fd, "frame", 5), 5);
    ck_assert_int_eq(adf_cache_delta_dict(fd, 45, got), 0);
    ck_assert(!memcmp(got, sha, sizeof(sha)));
    ck_assert_int_eq(adf_cache_delta_dict(fd, 39, got), -1);
    ck_assert_int_eq(pwrite(fd, "x", 1, 0), 1);
    ck_assert_int_eq(adf_cache_delta_dict(fd, 45, got), -1);
    close(fd);
    unlink(path);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("cache");

    adf_test(s, names_follow_the_key);
    adf_test(s, deltas_named_by_slot);
    adf_test(s, crc_is_crc32);
    adf_test(s, trailer_round_trip);
    adf_test(s, trailer_rejects_damage);
    adf_test(s, trailer_of_an_earlier_release);
    adf_test(s, trailer_of_version_3);
    adf_test(s, origin_round_trip);
    adf_test(s, origin_read_from_files);
    adf_test(s, dictionary_scopes);
    adf_test(s, trailer_read_from_files);
    adf_test(s, trailer_names_its_source);
    adf_test(s, index_arithmetic);
    adf_test(s, index_many);
    adf_test(s, temp_abandoned_when_unchanged);
    return adf_test_run(s);
}
