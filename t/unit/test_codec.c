/* Codec round trips through every backend: compress with tiny output
 * buffers (so output spans many chunks), in odd input pieces or whole,
 * with flushes; decode with the independent decoders (zlib inflate,
 * libbrotlidec, libzstd with HTTP's 8 MB window limit) and with the
 * reference tools (gzip -t, brotli -t, zstd -t), and compare. */
#include "config.h"
#include "adf_test.h"
#include "adf_decode.h"
#include <apr_general.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "adf_codec.h"

typedef struct {
    unsigned char *data;
    size_t len, cap;
    size_t max_chunk;
    int chunks;
} sink_buf_t;

static apr_status_t collect(void *baton, const char *data, apr_size_t len)
{
    sink_buf_t *b = baton;

    if (len > b->max_chunk) {
        b->max_chunk = len;
    }
    if (b->len + len > b->cap) {
        b->cap = (b->len + len) * 2;
        b->data = realloc(b->data, b->cap);
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->chunks++;
    return APR_SUCCESS;
}

static unsigned char *make_input(size_t n, int compressible)
{
    unsigned char *p = malloc(n ? n : 1);
    size_t i;
    unsigned s = 12345;

    for (i = 0; i < n; i++) {
        s = s * 1103515245 + 12345;
        p[i] = compressible ? "the quick brown fox "[(s >> 16) % 20]
                            : (unsigned char)(s >> 16);
    }
    return p;
}

/* Every backend of every coding this build has, by the levels and flags
 * that pick it (adf_codec_gzip.c), with the largest input worth its time. */
typedef struct {
    adf_coding_e coding;
    int level, flags;
    const char *backend;
    size_t max_size;
} case_t;

static const case_t cases[] = {
#ifdef ADF_HAVE_ISAL
    { ADF_GZIP, 1, 0, "isal", 200000 },
    { ADF_GZIP, 2, 0, "isal", 200000 },
#endif
    { ADF_GZIP, 4, 0, "zlib", 200000 },
    { ADF_GZIP, 9, 0, "zlib", 200000 },
    { ADF_GZIP, 1, ADF_STREAM_PAD, "zlib", 200000 },
#ifdef ADF_HAVE_LIBDEFLATE
    { ADF_GZIP, 2, ADF_STREAM_WHOLE, "libdeflate", 200000 },
    { ADF_GZIP, 9, ADF_STREAM_WHOLE, "libdeflate", 200000 },
    { ADF_GZIP, 9, ADF_STREAM_WHOLE | ADF_STREAM_BEST, "libdeflate", 65537 },
#else
    { ADF_GZIP, 6, ADF_STREAM_WHOLE, "zlib", 200000 },
#endif
#ifdef ADF_HAVE_BROTLI
    { ADF_BR, 0, 0, "brotli", 200000 },
    { ADF_BR, 5, ADF_STREAM_WHOLE, "brotli", 200000 },
    { ADF_BR, 11, 0, "brotli", 4096 },
#endif
#ifdef ADF_HAVE_ZSTD
    { ADF_ZSTD, 1, 0, "zstd", 200000 },
    { ADF_ZSTD, 19, ADF_STREAM_WHOLE, "zstd", 65537 },
#endif
};
#define NCASES (int)(sizeof(cases) / sizeof(cases[0]))

/* Compress in into b: whole, or in pieces of growing size. */
static adf_stream_t *encode(const case_t *c, const unsigned char *in,
                              size_t n, apr_off_t hint, apr_size_t bufsize,
                              sink_buf_t *b)
{
    adf_stream_t *s;
    size_t off = 0, piece = 1;

    ck_assert_int_eq(adf_stream_open(&s, pool, c->coding, c->level, hint,
                                     c->flags, bufsize, collect, b),
                     APR_SUCCESS);
    ck_assert_str_eq(adf_stream_backend(s), c->backend);
    if (c->flags & ADF_STREAM_WHOLE) {
        ck_assert_int_eq(adf_stream_write(s, (const char *)in, n,
                                          ADF_OP_FINISH), APR_SUCCESS);
        return s;
    }
    while (off < n) {
        size_t k = piece < n - off ? piece : n - off;
        ck_assert_int_eq(adf_stream_write(s, (const char *)in + off, k,
                                          ADF_OP_WRITE), APR_SUCCESS);
        off += k;
        piece = piece * 3 + 1;
    }
    ck_assert_int_eq(adf_stream_write(s, NULL, 0, ADF_OP_FINISH),
                     APR_SUCCESS);
    return s;
}

/* Round trip: sizes 0..200k, output buffers 1..8000, every case. */
START_TEST(round_trips)
{
    static const size_t sizes[] = { 0, 1, 2, 100, 4096, 65537, 200000 };
    static const apr_size_t bufs[] = { 1, 7, 64, 8000 };
    int ci, si, bi;

    for (ci = 0; ci < NCASES; ci++) {
        const case_t *c = &cases[ci];
        for (si = 0; si < 7 && sizes[si] <= c->max_size; si++) {
            for (bi = 0; bi < 4; bi++) {
                size_t n = sizes[si];
                unsigned char *in = make_input(n, si % 2);
                unsigned char *out = malloc(n + 16);
                sink_buf_t b = { NULL, 0, 0, 0, 0 };
                /* a wrong hint must still work when streaming: n/2 */
                apr_off_t hint = (c->flags & ADF_STREAM_WHOLE)
                                 ? (apr_off_t)n : (apr_off_t)(n / 2);
                adf_stream_t *s = encode(c, in, n, hint, bufs[bi], &b);
                long got;

                ck_assert_uint_eq(adf_stream_bytes_in(s), n);
                ck_assert_uint_eq(adf_stream_bytes_out(s), b.len);
                ck_assert_uint_le(b.max_chunk,
                                  bufs[bi] < 64 ? 64 : bufs[bi]);
                got = adf_decode_all(c->coding, b.data, b.len, out,
                                      n + 16, 1);
                ck_assert_msg(got == (long)n && !memcmp(in, out, n),
                              "%s %d (%s) size %zu buf %zu: got %ld",
                              adf_coding_name(c->coding), c->level,
                              c->backend, n, bufs[bi], got);
                adf_stream_close(s);
                free(in);
                free(out);
                free(b.data);
            }
        }
    }
}
END_TEST

/* After every flush, what was emitted so far decodes to exactly what was
 * written so far: a flushed part never waits for more input. */
START_TEST(flush_points)
{
    int ci;

    for (ci = 0; ci < NCASES; ci++) {
        const case_t *c = &cases[ci];
        size_t n = c->max_size < 30000 ? c->max_size : 30000, off = 0;
        unsigned char *in = make_input(n, 1);
        unsigned char *out = malloc(n + 16);
        sink_buf_t b = { NULL, 0, 0, 0, 0 };
        adf_stream_t *s;
        size_t step = 1;

        if (c->flags & ADF_STREAM_WHOLE) {
            /* whole streams refuse anything but the one finishing write */
            ck_assert_int_eq(adf_stream_open(&s, pool, c->coding, c->level,
                                             (apr_off_t)n, c->flags, 0,
                                             collect, &b), APR_SUCCESS);
            ck_assert_int_eq(adf_stream_write(s, (const char *)in, 1,
                                              ADF_OP_FLUSH), APR_EINVAL);
            free(in);
            free(out);
            continue;
        }
        /* 1: below the minimum, which must keep flushes finite */
        ck_assert_int_eq(adf_stream_open(&s, pool, c->coding, c->level, -1,
                                         c->flags, 1, collect, &b),
                         APR_SUCCESS);
        while (off < n) {
            size_t k = step < n - off ? step : n - off;
            long got;
            ck_assert_int_eq(adf_stream_write(s, (const char *)in + off, k,
                                              ADF_OP_FLUSH), APR_SUCCESS);
            off += k;
            step = step * 2 + 3;
            got = adf_decode_all(c->coding, b.data, b.len, out, n + 16, 0);
            ck_assert_msg(got == (long)off && !memcmp(in, out, off),
                          "%s %d (%s): after flush at %zu decoded %ld",
                          adf_coding_name(c->coding), c->level, c->backend,
                          off, got);
        }
        /* an empty flush, twice, then the end */
        ck_assert_int_eq(adf_stream_write(s, NULL, 0, ADF_OP_FLUSH), 0);
        ck_assert_int_eq(adf_stream_write(s, NULL, 0, ADF_OP_FLUSH), 0);
        ck_assert_int_eq(adf_stream_write(s, NULL, 0, ADF_OP_FINISH), 0);
        ck_assert_int_eq(adf_decode_all(c->coding, b.data, b.len, out,
                                         n + 16, 1), (long)n);
        /* writing after the end is refused, finishing again is harmless */
        ck_assert_int_eq(adf_stream_write(s, "x", 1, ADF_OP_WRITE), APR_EOF);
        ck_assert_int_eq(adf_stream_write(s, NULL, 0, ADF_OP_FINISH), 0);
        adf_stream_close(s);
        adf_stream_close(s);    /* idempotent */
        free(in);
        free(out);
        free(b.data);
    }
}
END_TEST

/* What the reference tools say of each backend's output. */
START_TEST(reference_tools)
{
    static const char *const test_cmd[ADF_NCODINGS] = {
        NULL, "gzip -t", "brotli -t", "zstd -q -t"
    };
    size_t n = 100000;
    unsigned char *in = make_input(n, 1);
    char path[64], cmd[160];
    int ci;

    for (ci = 0; ci < NCASES; ci++) {
        const case_t *c = &cases[ci];
        sink_buf_t b = { NULL, 0, 0, 0, 0 };
        size_t m = n < c->max_size ? n : c->max_size;
        FILE *f;

        encode(c, in, m, (apr_off_t)m, 0, &b);
        snprintf(path, sizeof(path), "/tmp/adf-codec-%d.%d", (int)getpid(),
                 ci);
        f = fopen(path, "wb");
        ck_assert_ptr_nonnull(f);
        ck_assert_uint_eq(fwrite(b.data, 1, b.len, f), b.len);
        fclose(f);
        snprintf(cmd, sizeof(cmd), "%s %s", test_cmd[c->coding], path);
        ck_assert_msg(system(cmd) == 0, "%s: %s %d (%s)", cmd,
                      adf_coding_name(c->coding), c->level, c->backend);
        unlink(path);
        free(b.data);
    }
    free(in);
}
END_TEST

#ifdef ADF_HAVE_ZSTD
/* The highest level on an input larger than 8 MB still fits an HTTP
 * client's window limit (the decoder refuses larger windows). */
START_TEST(zstd_window)
{
    size_t n = 9 << 20;
    unsigned char *in = make_input(n, 1), *out = malloc(n);
    sink_buf_t b = { NULL, 0, 0, 0, 0 };
    adf_stream_t *s;

    ck_assert_int_eq(adf_stream_open(&s, pool, ADF_ZSTD, 19, -1, 0, 65536,
                                     collect, &b), APR_SUCCESS);
    ck_assert_int_eq(adf_stream_write(s, (const char *)in, n,
                                      ADF_OP_FINISH), APR_SUCCESS);
    ck_assert_int_eq(adf_decode_all(ADF_ZSTD, b.data, b.len, out, n, 1),
                     (long)n);
    ck_assert(!memcmp(in, out, n));
    free(in);
    free(out);
    free(b.data);
}
END_TEST

/* The window a zstd frame asks its decoder for (RFC 8878, 3.1.1.1.2). */
static apr_uint64_t zstd_frame_window(const unsigned char *f, size_t len)
{
    unsigned wd;

    ck_assert(len >= 6);
    ck_assert(f[0] == 0x28 && f[1] == 0xb5 && f[2] == 0x2f && f[3] == 0xfd);
    ck_assert_msg(!(f[4] & 0x20), "single-segment frame");
    wd = f[5];
    return ((apr_uint64_t)1 << (10 + (wd >> 3)))
           + (((apr_uint64_t)1 << (10 + (wd >> 3))) / 8) * (wd & 7);
}

/* A stream of unknown length is fitted to a 1 MB window (libzstd would
 * size its window and tables for unbounded input: 55 MB at level 12,
 * faulted in per response); a known length to a window of its size. */
START_TEST(zstd_streams_are_fitted)
{
    size_t n = 3 << 20;
    unsigned char *in = make_input(n, 1), *out = malloc(n);
    static const struct {
        int level;
        apr_off_t hint;
        apr_uint64_t max_window;
    } cs[] = { { 12, -1, 1 << 20 }, { 19, -1, 1 << 20 }, { 1, -1, 1 << 20 },
               { 12, 50000, 65536 }, { 6, 3 << 20, 4 << 20 } };
    int i;

    for (i = 0; i < (int)(sizeof(cs) / sizeof(cs[0])); i++) {
        sink_buf_t b = { NULL, 0, 0, 0, 0 };
        size_t len = cs[i].hint > 0 ? (size_t)cs[i].hint : n, off;
        adf_stream_t *s;

        ck_assert_int_eq(adf_stream_open(&s, pool, ADF_ZSTD, cs[i].level,
                                         cs[i].hint, 0, 0, collect, &b),
                         APR_SUCCESS);
        for (off = 0; off < len; off += 100000) {
            ck_assert_int_eq(adf_stream_write(s, (const char *)in + off,
                                              len - off < 100000 ? len - off
                                                                 : 100000,
                                              ADF_OP_WRITE), APR_SUCCESS);
        }
        ck_assert_int_eq(adf_stream_write(s, NULL, 0, ADF_OP_FINISH),
                         APR_SUCCESS);
        ck_assert_msg(zstd_frame_window(b.data, b.len) <= cs[i].max_window,
                      "level %d, hint %ld: window %lu", cs[i].level,
                      (long)cs[i].hint,
                      (unsigned long)zstd_frame_window(b.data, b.len));
        ck_assert_int_eq(adf_decode_all(ADF_ZSTD, b.data, b.len, out, len,
                                        1), (long)len);
        ck_assert(!memcmp(in, out, len));
        adf_stream_close(s);
        free(b.data);
    }
    free(in);
    free(out);
}
END_TEST
#endif

/* A small known length gets a small window: same output validity, and
 * the gzip header's XFL byte tells zlib's level (2: 9, 4: 1). */
START_TEST(levels_and_errors)
{
    sink_buf_t b = { NULL, 0, 0, 0, 0 };
    adf_stream_t *s;

    ck_assert_int_eq(adf_stream_open(&s, pool, ADF_GZIP, 9, 10, 0, 0, collect,
                                     &b), APR_SUCCESS);
    adf_stream_write(s, "hello hello", 11, ADF_OP_FINISH);
    ck_assert_int_eq(b.data[8], 2);
    b.len = 0;
    ck_assert_int_eq(adf_stream_open(&s, pool, ADF_GZIP, 1, 10,
                                     ADF_STREAM_PAD, 0, collect, &b),
                     APR_SUCCESS);
    adf_stream_write(s, "hello hello", 11, ADF_OP_FINISH);
    ck_assert_int_eq(b.data[8], 4);
    ck_assert_int_eq(adf_stream_open(&s, pool, ADF_GZIP, 0, 10, 0, 0, collect,
                                     &b), APR_EINVAL);
    ck_assert_int_eq(adf_stream_open(&s, pool, ADF_GZIP, 10, 10, 0, 0,
                                     collect, &b), APR_EINVAL);
    ck_assert_int_eq(adf_stream_open(&s, pool, ADF_IDENTITY, 1, 10, 0, 0,
                                     collect, &b), APR_ENOTIMPL);
#ifdef ADF_HAVE_BROTLI
    ck_assert_int_eq(adf_stream_open(&s, pool, ADF_BR, 12, 10, 0, 0, collect,
                                     &b), APR_EINVAL);
#endif
#ifdef ADF_HAVE_ZSTD
    ck_assert_int_eq(adf_stream_open(&s, pool, ADF_ZSTD, 20, 10, 0, 0,
                                     collect, &b), APR_EINVAL);
#endif
    free(b.data);
    /* the fixture's pool cleanup frees the streams not closed: no leak */
}
END_TEST

/* Length hiding: an FEXTRA field of the asked size; still decodes.  Only
 * a stream opened for padding can pad. */
START_TEST(gzip_padding)
{
    sink_buf_t b = { NULL, 0, 0, 0, 0 };
    adf_stream_t *s;
    unsigned char out[64];
    apr_size_t n;

    for (n = 4; n < 600; n += 97) {
        b.len = 0;
        ck_assert_int_eq(adf_stream_open(&s, pool, ADF_GZIP, 6, -1,
                                         ADF_STREAM_PAD, 0, collect, &b),
                         APR_SUCCESS);
        ck_assert_int_eq(adf_stream_pad(s, n), APR_SUCCESS);
        adf_stream_write(s, "hello hello hello", 17, ADF_OP_FINISH);
        ck_assert_int_eq(b.data[3] & 4, 4);                 /* FEXTRA */
        ck_assert_uint_eq(b.data[10] | b.data[11] << 8, n); /* XLEN */
        ck_assert_int_eq(adf_decode_all(ADF_GZIP, b.data, b.len, out,
                                         sizeof(out), 1), 17);
        ck_assert(!memcmp(out, "hello hello hello", 17));
        /* too late once written */
        ck_assert_int_eq(adf_stream_pad(s, 8), APR_EINVAL);
    }
#ifdef ADF_HAVE_BROTLI
    ck_assert_int_eq(adf_stream_open(&s, pool, ADF_BR, 5, -1, 0, 0, collect,
                                     &b), APR_SUCCESS);
    ck_assert_int_eq(adf_stream_pad(s, 8), APR_ENOTIMPL);
#endif
    free(b.data);
}
END_TEST

/* ADF_STREAM_BEST (the cache): the strongest the backend has, never
 * weaker than the coding's top level; a streamed gzip stays zlib 9. */
START_TEST(best_is_strongest)
{
    static const case_t top = { ADF_GZIP, 9, ADF_STREAM_WHOLE, NULL, 0 };
    size_t n = 100000;
    unsigned char *in = make_input(n, 1);
    sink_buf_t a = { 0 }, b = { 0 };
    adf_stream_t *s;

    ck_assert_int_eq(adf_stream_open(&s, pool, ADF_GZIP, 9, (apr_off_t)n,
                                     top.flags, 0, collect, &a), APR_SUCCESS);
    ck_assert_int_eq(adf_stream_write(s, (const char *)in, n, ADF_OP_FINISH),
                     APR_SUCCESS);
    ck_assert_int_eq(adf_stream_open(&s, pool, ADF_GZIP, 9, (apr_off_t)n,
                                     top.flags | ADF_STREAM_BEST, 0, collect,
                                     &b), APR_SUCCESS);
    ck_assert_int_eq(adf_stream_write(s, (const char *)in, n, ADF_OP_FINISH),
                     APR_SUCCESS);
    ck_assert_msg(b.len <= a.len, "best %zu > level 9 %zu", b.len, a.len);
    ck_assert_int_eq(adf_stream_open(&s, pool, ADF_GZIP, 9, -1,
                                     ADF_STREAM_BEST, 0, collect, &b),
                     APR_SUCCESS);
    ck_assert_str_eq(adf_stream_backend(s), "zlib");
    free(in);
    free(a.data);
    free(b.data);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("codec");

    /* round trips of every coding and level: up to 300 s each (ASan, a
     * busy machine) */
#define slow_test(t) tcase_set_timeout(adf_test(s, t), 300)
    slow_test(round_trips);
    slow_test(best_is_strongest);
    slow_test(flush_points);
    slow_test(reference_tools);
#ifdef ADF_HAVE_ZSTD
    slow_test(zstd_window);
    slow_test(zstd_streams_are_fitted);
#endif
    slow_test(levels_and_errors);
    slow_test(gzip_padding);
    return adf_test_run(s);
}
