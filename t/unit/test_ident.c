/* Source identity and the mark that proves a sibling holds it. */
#include "adf_test.h"
#include "adf_ident.h"

#include <ctype.h>
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
    adf_ident_t f = ident(1700000000, 123456789, 1700000001, 5);
    unsigned char digest[ADF_DIGEST_LEN];
    char buf[ADF_MARK_MAX];
    adf_mark_t m;
    int i, n;

    for (i = 0; i < ADF_DIGEST_LEN; i++) {
        digest[i] = (unsigned char)(i * 17 + 1);
    }
    f.size = 4096;
    f.ino = 77;
    n = adf_mark_format(buf, &f, digest);
    ck_assert_str_eq(buf, "3 ino=77 size=4096 mtime=1700000000.123456789 "
                     "ctime=1700000001.000000005 sha256="
                     "0112233445566778899aabbccddeef001"
                     "12233445566778899aabbccddeeff10");
    ck_assert_int_eq(adf_mark_parse(buf, (apr_size_t)n, &m), 0);
    ck_assert(m.has_digest);
    ck_assert(!memcmp(m.digest, digest, sizeof(digest)));
    ck_assert(adf_mark_matches(&f, &m, 0));
    {
        /* read again (the thread's memo): the same mark; the same bytes
         * one shorter, or with one digit changed, are read afresh */
        adf_mark_t again;

        memset(&again, 0xa5, sizeof(again));
        ck_assert_int_eq(adf_mark_parse(buf, (apr_size_t)n, &again), 0);
        ck_assert(again.has_digest && adf_mark_matches(&f, &again, 0)
                  && !memcmp(again.digest, m.digest, sizeof(m.digest)));
        ck_assert_int_eq(adf_mark_parse(buf, (apr_size_t)n - 1, &again), -1);
        buf[6] = '8';
        ck_assert_int_eq(adf_mark_parse(buf, (apr_size_t)n, &again), 0);
        ck_assert(again.src.ino == 87 && !adf_mark_matches(&f, &again, 0));
        buf[6] = '7';
    }
    {
        /* a file dated before 1970: timespec's negative seconds, the
         * nanoseconds counted up from them, as stat and APR give them */
        adf_ident_t old = f;
        adf_mark_t back;
        char ob[ADF_MARK_MAX];
        int on;

        old.mtime = adf_ts_from_usec(-500000);      /* -0.5 s */
        ck_assert(old.mtime.sec == -1 && old.mtime.nsec == 500000000);
        on = adf_mark_format(ob, &old, digest);
        ck_assert(strstr(ob, " mtime=-1.500000000 ") != NULL);
        ck_assert_int_eq(adf_mark_parse(ob, (apr_size_t)on, &back), 0);
        ck_assert(adf_mark_matches(&old, &back, 0));
        old.mtime.sec = -86401;
        on = adf_mark_format(ob, &old, digest);
        ck_assert_int_eq(adf_mark_parse(ob, (apr_size_t)on, &back), 0);
        ck_assert(back.src.mtime.sec == -86401 && adf_mark_matches(&old, &back, 0));
        ck_assert_int_eq(adf_mark_parse("2 ino=1 size=1 mtime=--1.000000000 "
                                        "ctime=3.000000000", 51, &back), -1);
    }
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
    /* an earlier release's mark: no digest, still a mark */
    ck_assert_int_eq(adf_mark_parse("2 ino=1 size=1 mtime=2.000000000 "
                                    "ctime=3.000000000", 50, &m), 0);
    ck_assert(!m.has_digest);
    ck_assert(m.src.ino == 1 && m.src.ctime.sec == 3);
    /* malformed or of another version: not a mark */
    ck_assert_int_eq(adf_mark_parse("1 size=1 mtime=2.000000001", 26, &m),
                     -1);
    ck_assert_int_eq(adf_mark_parse("2 ino=1 size=1 mtime=2.5 ctime=3.5",
                                    34, &m), -1);
    ck_assert_int_eq(adf_mark_parse("2 ino=x size=1 mtime=2.000000000 "
                                    "ctime=3.000000000", 50, &m), -1);
    strcpy(buf, "2 ino=1 size=1 mtime=2.000000000 ctime=3.000000000 ");
    ck_assert_int_eq(adf_mark_parse(buf, strlen(buf), &m), -1);
    /* version 3 needs its whole digest, and nothing after it */
    n = adf_mark_format(buf, &f, digest);
    ck_assert_int_eq(adf_mark_parse(buf, (apr_size_t)n - 1, &m), -1);
    buf[n - 1] = 'g';
    ck_assert_int_eq(adf_mark_parse(buf, (apr_size_t)n, &m), -1);
    n = adf_mark_format(buf, &f, digest);
    strcat(buf, "0");
    ck_assert_int_eq(adf_mark_parse(buf, (apr_size_t)n + 1, &m), -1);
    buf[0] = '2';
    ck_assert_int_eq(adf_mark_parse(buf, (apr_size_t)n, &m), -1);
}
END_TEST

/* A version is settled once the filesystem's clock is past its ctime by
 * the filesystem's grain: any ctime with a fraction proves nanoseconds;
 * a whole second may be FAT's 2 s. */
START_TEST(settled)
{
    adf_ident_t fine = ident(1, 0, 100, 500), coarse = ident(1, 0, 100, 0);
    adf_ts_t now;

    now.sec = 100;
    now.nsec = 500;
    ck_assert(!adf_ident_settled(&fine, &now));     /* the same tick */
    now.nsec = 501;
    ck_assert(adf_ident_settled(&fine, &now));
    now.nsec = 0;
    now.sec = 101;
    ck_assert(!adf_ident_settled(&coarse, &now));
    now.nsec = 999999999;
    ck_assert(!adf_ident_settled(&coarse, &now));
    now.sec = 102;
    now.nsec = 0;
    ck_assert(adf_ident_settled(&coarse, &now));
    now.sec = 99;       /* a clock behind the ctime: never */
    ck_assert(!adf_ident_settled(&fine, &now));
}
END_TEST

/* Filesystems whose ctime follows every change: local ones the kernel
 * stamps, by name; not images (squashfs), FAT, overlays (their lower
 * layer may be an image), FUSE, NFS, or anything unknown. */
START_TEST(ctime_proven)
{
    ck_assert(adf_fs_ctime_proven(0xef53));         /* ext4 */
    ck_assert(adf_fs_ctime_proven(0x58465342));     /* xfs */
    ck_assert(adf_fs_ctime_proven(0x01021994));     /* tmpfs */
    ck_assert(!adf_fs_ctime_proven(0x73717368));    /* squashfs */
    ck_assert(!adf_fs_ctime_proven(0x4d44));        /* vfat */
    ck_assert(!adf_fs_ctime_proven(0x794c7630));    /* overlayfs */
    ck_assert(!adf_fs_ctime_proven(0x65735546));    /* fuse */
    ck_assert(!adf_fs_ctime_proven(0x6969));        /* nfs */
    ck_assert(!adf_fs_ctime_proven(0));
}
END_TEST

/* SHA-256 through libcrypto: the standard's test vectors. */
START_TEST(digests)
{
    unsigned char d[ADF_DIGEST_LEN], back[ADF_DIGEST_LEN];
    char hex[ADF_DIGEST_HEX];
    adf_digest_t dg;

    ck_assert_int_eq(adf_digest_init(&dg), 0);
    adf_digest_update(&dg, "ab", 2);
    adf_digest_update(&dg, "c", 1);
    ck_assert_int_eq(adf_digest_final(&dg, d), 0);
    adf_digest_hex(hex, d, ADF_DIGEST_LEN);
    ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223"
                     "b00361a396177a9cb410ff61f20015ad");
    ck_assert_int_eq(adf_digest_parse_hex(hex, back), 0);
    ck_assert(!memcmp(back, d, sizeof(d)));
    ck_assert_int_eq(adf_digest_init(&dg), 0);
    ck_assert_int_eq(adf_digest_final(&dg, d), 0);
    adf_digest_hex(hex, d, 4);
    ck_assert_str_eq(hex, "e3b0c442");     /* of nothing */
    ck_assert_int_eq(adf_digest_parse_hex("zz", back), -1);
    {
        /* upper case reads alike; any other byte, anywhere, is refused */
        char up[ADF_DIGEST_HEX], bad[ADF_DIGEST_HEX];
        unsigned char again[ADF_DIGEST_LEN];
        int i, ch;

        adf_digest_hex(hex, back, ADF_DIGEST_LEN);
        for (i = 0; hex[i]; i++) {
            up[i] = (char)toupper((unsigned char)hex[i]);
        }
        up[i] = '\0';
        ck_assert_int_eq(adf_digest_parse_hex(up, again), 0);
        ck_assert(!memcmp(again, back, sizeof(back)));
        for (ch = 1; ch < 256; ch++) {
            if (strchr("0123456789abcdefABCDEF", ch)) {
                continue;
            }
            memcpy(bad, hex, sizeof(bad));
            bad[ch % (2 * ADF_DIGEST_LEN)] = (char)ch;
            ck_assert_msg(adf_digest_parse_hex(bad, again) == -1,
                          "byte %d read as a hex digit", ch);
        }
    }
    ck_assert_int_eq(adf_digest_init(&dg), 0);
    adf_digest_abandon(&dg);
    ck_assert(dg.md == NULL);
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

    adf_test(s, usec_conversion);
    adf_test(s, identity_equality);
    adf_test(s, marks);
    adf_test(s, settled);
    adf_test(s, ctime_proven);
    adf_test(s, digests);
    adf_test(s, identity_sources);
    return adf_test_run(s);
}
