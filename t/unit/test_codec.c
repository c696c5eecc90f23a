/* Codec round trips through every backend: compress with tiny output
 * buffers (so output spans many chunks), in odd input pieces or whole,
 * with flushes; decode with the independent decoders (zlib inflate,
 * libbrotlidec, libzstd with HTTP's 8 MB window limit) and with the
 * reference tools (gzip -t, brotli -t, zstd -t), and compare. */
#include "config.h"
#include "adf_test.h"
#include "adf_decode.h"
#include <apr_general.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "adf_codec.h"
#include "adf_codec_impl.h"
#include "adf_digest.h"
#ifdef ADF_HAVE_ZSTD
#include <zstd.h>
#endif

typedef struct {
    unsigned char *data;
    size_t len, cap;
    size_t max_chunk;
    int chunks;
} sink_buf_t;

/* adf_stream_open with the options spelled out, as most tests vary them;
 * a coding this build lacks goes in as NULL (APR_ENOTIMPL). */
static apr_status_t open_stream(adf_stream_t **s, apr_pool_t *p,
                                adf_coding_e c, int level, apr_off_t hint,
                                int flags, apr_size_t bufsize,
                                adf_sink_fn *sink, void *baton)
{
    adf_stream_opts_t o = { adf_coding(c), level, hint, flags, bufsize };

    return adf_stream_open(s, p, &o, sink, baton);
}

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

    ck_assert_int_eq(open_stream(&s, pool, c->coding, c->level, hint,
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
            ck_assert_int_eq(open_stream(&s, pool, c->coding, c->level,
                                             (apr_off_t)n, c->flags, 0,
                                             collect, &b), APR_SUCCESS);
            ck_assert_int_eq(adf_stream_write(s, (const char *)in, 1,
                                              ADF_OP_FLUSH), APR_EINVAL);
            free(in);
            free(out);
            continue;
        }
        /* 1: below the minimum, which must keep flushes finite */
        ck_assert_int_eq(open_stream(&s, pool, c->coding, c->level, -1,
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

    ck_assert_int_eq(open_stream(&s, pool, ADF_ZSTD, 19, -1, 0, 65536,
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

        ck_assert_int_eq(open_stream(&s, pool, ADF_ZSTD, cs[i].level,
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

    ck_assert_int_eq(open_stream(&s, pool, ADF_GZIP, 9, 10, 0, 0, collect,
                                     &b), APR_SUCCESS);
    adf_stream_write(s, "hello hello", 11, ADF_OP_FINISH);
    ck_assert_int_eq(b.data[8], 2);
    b.len = 0;
    ck_assert_int_eq(open_stream(&s, pool, ADF_GZIP, 1, 10,
                                     ADF_STREAM_PAD, 0, collect, &b),
                     APR_SUCCESS);
    adf_stream_write(s, "hello hello", 11, ADF_OP_FINISH);
    ck_assert_int_eq(b.data[8], 4);
    ck_assert_int_eq(open_stream(&s, pool, ADF_GZIP, 0, 10, 0, 0, collect,
                                     &b), APR_EINVAL);
    ck_assert_int_eq(open_stream(&s, pool, ADF_GZIP, 10, 10, 0, 0,
                                     collect, &b), APR_EINVAL);
    ck_assert_int_eq(open_stream(&s, pool, ADF_IDENTITY, 1, 10, 0, 0,
                                     collect, &b), APR_ENOTIMPL);
#ifdef ADF_HAVE_BROTLI
    ck_assert_int_eq(open_stream(&s, pool, ADF_BR, 12, 10, 0, 0, collect,
                                     &b), APR_EINVAL);
#endif
#ifdef ADF_HAVE_ZSTD
    ck_assert_int_eq(open_stream(&s, pool, ADF_ZSTD, 20, 10, 0, 0,
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
        ck_assert_int_eq(open_stream(&s, pool, ADF_GZIP, 6, -1,
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
    ck_assert_int_eq(open_stream(&s, pool, ADF_BR, 5, -1, 0, 0, collect,
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

    ck_assert_int_eq(open_stream(&s, pool, ADF_GZIP, 9, (apr_off_t)n,
                                     top.flags, 0, collect, &a), APR_SUCCESS);
    ck_assert_int_eq(adf_stream_write(s, (const char *)in, n, ADF_OP_FINISH),
                     APR_SUCCESS);
    ck_assert_int_eq(open_stream(&s, pool, ADF_GZIP, 9, (apr_off_t)n,
                                     top.flags | ADF_STREAM_BEST, 0, collect,
                                     &b), APR_SUCCESS);
    ck_assert_int_eq(adf_stream_write(s, (const char *)in, n, ADF_OP_FINISH),
                     APR_SUCCESS);
    ck_assert_msg(b.len <= a.len, "best %zu > level 9 %zu", b.len, a.len);
    ck_assert_int_eq(open_stream(&s, pool, ADF_GZIP, 9, -1,
                                     ADF_STREAM_BEST, 0, collect, &b),
                     APR_SUCCESS);
    ck_assert_str_eq(adf_stream_backend(s), "zlib");
    free(in);
    free(a.data);
    free(b.data);
}
END_TEST

/* ---- reused coder state (adf_codec_pool.c) ------------------------------
 * Streams take their backend's idle state and give it back at the end:
 * whatever the previous stream left in it (a frame abandoned half-way, a
 * flush, another level, a window for another length, a padded header),
 * the next stream must decode to its input exactly. */

/* Encode in (pieces of growing size, flushing after each when flush),
 * decode, compare; the stream is closed (its state goes back idle). */
static void round_trip_one(adf_coding_e coding, int level, int flags,
                           const unsigned char *in, size_t n, apr_off_t hint,
                           int flush, const char *what)
{
    sink_buf_t b = { NULL, 0, 0, 0, 0 };
    unsigned char *out = malloc(n + 16);
    adf_stream_t *s;
    size_t off = 0, piece = 1;
    long got;

    ck_assert_int_eq(open_stream(&s, pool, coding, level, hint, flags, 0,
                                     collect, &b), APR_SUCCESS);
    if (flags & ADF_STREAM_WHOLE) {
        ck_assert_int_eq(adf_stream_write(s, (const char *)in, n,
                                          ADF_OP_FINISH), APR_SUCCESS);
    }
    else {
        while (off < n) {
            size_t k = piece < n - off ? piece : n - off;
            ck_assert_int_eq(adf_stream_write(s, (const char *)in + off, k,
                                              flush ? ADF_OP_FLUSH
                                                    : ADF_OP_WRITE),
                             APR_SUCCESS);
            off += k;
            piece = piece * 3 + 1;
        }
        ck_assert_int_eq(adf_stream_write(s, NULL, 0, ADF_OP_FINISH),
                         APR_SUCCESS);
    }
    got = adf_decode_all(coding, b.data, b.len, out, n + 16, 1);
    ck_assert_msg(got == (long)n && !memcmp(in, out, n),
                  "%s: %s %d (%s) flags %d size %zu hint %ld: got %ld", what,
                  adf_coding_name(coding), level, adf_stream_backend(s),
                  flags, n, (long)hint, got);
    adf_stream_close(s);
    free(out);
    free(b.data);
}

/* Every case of the table whose backend keeps state (all but ISA-L's,
 * whose state lives in the stream's pool). */
static int reusable(const case_t *c)
{
    return strcmp(c->backend, "isal") != 0;
}

/* A stream left half-way (no FINISH: a client gone, an error) gives its
 * state back mid-frame; the next stream starts a clean one. */
START_TEST(reuse_after_abandon)
{
    size_t n = 100000;
    unsigned char *in = make_input(n, 1);
    adf_codec_pool_stats_t before, after;
    int ci;

    adf_codec_pool_stats(&before);
    for (ci = 0; ci < NCASES; ci++) {
        const case_t *c = &cases[ci];
        size_t m = n < c->max_size ? n : c->max_size;
        sink_buf_t b = { NULL, 0, 0, 0, 0 };
        adf_stream_t *s;
        int i;

        for (i = 0; i < 3; i++) {
            ck_assert_int_eq(open_stream(&s, pool, c->coding, c->level,
                                             (c->flags & ADF_STREAM_WHOLE)
                                             ? (apr_off_t)m : -1,
                                             c->flags, 0, collect, &b),
                             APR_SUCCESS);
            if (!(c->flags & ADF_STREAM_WHOLE)) {
                /* past the held-back part: the coder is mid-frame */
                ck_assert_int_eq(adf_stream_write(s, (const char *)in,
                                                  m * (i + 1) / 4,
                                                  ADF_OP_WRITE), APR_SUCCESS);
            }
            if (i == 1) {
                adf_stream_close(s);    /* else the pool's cleanup does */
            }
        }
        apr_pool_clear(pool);
        free(b.data);
        round_trip_one(c->coding, c->level, c->flags, in, m,
                       (c->flags & ADF_STREAM_WHOLE) ? (apr_off_t)m : -1, 0,
                       "after an abandoned stream");
        round_trip_one(c->coding, c->level, c->flags, in, m / 3,
                       (c->flags & ADF_STREAM_WHOLE) ? (apr_off_t)(m / 3)
                                                     : (apr_off_t)m,
                       0, "after an abandoned stream, another length");
    }
    adf_codec_pool_stats(&after);
    ck_assert_msg(after.reused > before.reused, "no state was reused");
    free(in);
}
END_TEST

/* After a stream that flushed (sync flush points in the frame) and one
 * that flushed and was abandoned, plain streams and flushing ones. */
START_TEST(reuse_after_flush)
{
    size_t n = 30000;
    unsigned char *in = make_input(n, 1);
    int ci, i;

    for (ci = 0; ci < NCASES; ci++) {
        const case_t *c = &cases[ci];
        size_t m = n < c->max_size ? n : c->max_size;
        sink_buf_t b = { NULL, 0, 0, 0, 0 };
        adf_stream_t *s;

        if ((c->flags & ADF_STREAM_WHOLE) || !reusable(c)) {
            continue;
        }
        ck_assert_int_eq(open_stream(&s, pool, c->coding, c->level, -1,
                                         c->flags, 0, collect, &b),
                         APR_SUCCESS);
        ck_assert_int_eq(adf_stream_write(s, (const char *)in, 1000,
                                          ADF_OP_FLUSH), APR_SUCCESS);
        ck_assert_int_eq(adf_stream_write(s, (const char *)in + 1000, 999,
                                          ADF_OP_WRITE), APR_SUCCESS);
        adf_stream_close(s);    /* abandoned after a flush */
        free(b.data);
        for (i = 0; i < 4; i++) {
            round_trip_one(c->coding, c->level, c->flags, in, m - i * 97, -1,
                           i % 2 == 0, "after a flush");
        }
    }
    free(in);
}
END_TEST

/* One state after another through every level of each coding, up and
 * down, streamed and whole: each stream has its level's output. */
START_TEST(reuse_across_levels)
{
    static const adf_coding_e codings[] = {
        ADF_GZIP,
#ifdef ADF_HAVE_BROTLI
        ADF_BR,
#endif
#ifdef ADF_HAVE_ZSTD
        ADF_ZSTD,
#endif
    };
    size_t n = 20000;
    unsigned char *in = make_input(n, 1);
    adf_codec_pool_stats_t before, after;
    int ci, pass, level;

    adf_codec_pool_stats(&before);
    for (ci = 0; ci < (int)(sizeof(codings) / sizeof(codings[0])); ci++) {
        const adf_coding_t *d = adf_coding(codings[ci]);

        for (pass = 0; pass < 4; pass++) {
            int flags = pass >= 2 ? ADF_STREAM_WHOLE : 0;

            for (level = d->min_level; level <= d->max_level; level++) {
                int l = pass % 2 ? d->max_level - level + d->min_level
                                 : level;
                /* the slowest levels on a smaller input */
                size_t m = (codings[ci] == ADF_BR && l >= 10)
                           || (codings[ci] == ADF_ZSTD && l >= 17)
                           ? 3000 : n;

                round_trip_one(codings[ci], l, flags, in, m,
                               flags ? (apr_off_t)m : -1, 0,
                               "across levels");
                /* and the same level once more, on the state just used */
                round_trip_one(codings[ci], l, flags, in, m / 2,
                               flags ? (apr_off_t)(m / 2) : -1, 0,
                               "across levels, again");
            }
        }
    }
    adf_codec_pool_stats(&after);
    ck_assert(after.reused > before.reused);
    free(in);
}
END_TEST

/* Lengths and hints in every order: unknown (held back, then fitted, or
 * more than is held back), right, wrong both ways, empty; the states and
 * blocks set up for one length serve the next. */
START_TEST(reuse_across_size_hints)
{
    static const size_t sizes[] = { 0, 1, 3600, 70000, 200000, 5000, 100,
                                    65536, 65537, 1 << 20 };
    unsigned char *in = make_input(1 << 20, 1);
    int ci, si, hi;

    for (ci = 0; ci < NCASES; ci++) {
        const case_t *c = &cases[ci];

        if (!reusable(c)) {
            continue;
        }
        for (si = 0; si < (int)(sizeof(sizes) / sizeof(sizes[0])); si++) {
            size_t n = sizes[si];

            if (n > c->max_size) {
                continue;
            }
            for (hi = 0; hi < 4; hi++) {
                apr_off_t hint = hi == 0 ? -1 : hi == 1 ? (apr_off_t)n
                               : hi == 2 ? (apr_off_t)(n / 3)
                                         : (apr_off_t)(n * 4 + 1000);

                if ((c->flags & ADF_STREAM_WHOLE) && hi != 1) {
                    continue;   /* a whole body's length is exact */
                }
                round_trip_one(c->coding, c->level, c->flags, in, n, hint,
                               hi == 3 && n < 70000, "across size hints");
            }
        }
    }
    free(in);
}
END_TEST

/* A padded gzip header is the stream's own: the next stream on the same
 * zlib state has a plain header (the padding lived in a cleared pool). */
START_TEST(reuse_after_padding)
{
    sink_buf_t b = { NULL, 0, 0, 0, 0 };
    unsigned char out[64];
    adf_stream_t *s;
    apr_pool_t *p;
    int i;

    for (i = 0; i < 4; i++) {
        apr_pool_create(&p, pool);
        b.len = 0;
        ck_assert_int_eq(open_stream(&s, p, ADF_GZIP, 6, -1,
                                         i % 2 ? 0 : ADF_STREAM_PAD, 0,
                                         collect, &b), APR_SUCCESS);
        ck_assert_str_eq(adf_stream_backend(s), "zlib");
        if (i % 2 == 0) {
            ck_assert_int_eq(adf_stream_pad(s, 300), APR_SUCCESS);
        }
        adf_stream_write(s, "hello hello hello", 17, ADF_OP_FINISH);
        ck_assert_int_eq(b.data[3] & 4, i % 2 ? 0 : 4);     /* FEXTRA */
        ck_assert_int_eq(adf_decode_all(ADF_GZIP, b.data, b.len, out,
                                         sizeof(out), 1), 17);
        /* the header's memory goes with the pool; the state stays */
        apr_pool_destroy(p);
    }
    free(b.data);
}
END_TEST

#ifdef ADF_HAVE_BROTLI
/* The window a brotli stream declares: WBITS, its first bits (RFC 7932,
 * 9.1). */
static int brotli_window(const unsigned char *p)
{
    unsigned bits = p[0] | (unsigned)p[1] << 8;

    if (!(bits & 1)) {
        return 16;
    }
    if ((bits >> 1) & 7) {
        return 17 + (int)((bits >> 1) & 7);
    }
    if ((bits >> 4) & 7) {
        return 8 + (int)((bits >> 4) & 7);
    }
    return 17;
}
#endif

/* The length of a streamed body that ends within what is held back is
 * known before the coder starts: its state is fitted to it (zstd: the
 * frame says its size; brotli: the window fits it), and a longer one gets
 * the capped window for an unknown length. */
START_TEST(staged_length_fits)
{
    size_t n = 3600;
    unsigned char *in = make_input(300000, 1);
    sink_buf_t b = { NULL, 0, 0, 0, 0 };
    adf_stream_t *s;

#ifdef ADF_HAVE_ZSTD
    ck_assert_int_eq(open_stream(&s, pool, ADF_ZSTD, 12, -1, 0, 0,
                                     collect, &b), APR_SUCCESS);
    adf_stream_write(s, (const char *)in, 1800, ADF_OP_WRITE);
    adf_stream_write(s, (const char *)in + 1800, 1800, ADF_OP_WRITE);
    ck_assert_uint_eq(b.len, 0);        /* held back */
    adf_stream_write(s, NULL, 0, ADF_OP_FINISH);
    ck_assert_uint_eq(ZSTD_getFrameContentSize(b.data, b.len), n);
    adf_stream_close(s);
    b.len = 0;
    ck_assert_int_eq(open_stream(&s, pool, ADF_ZSTD, 12, -1, 0, 0,
                                     collect, &b), APR_SUCCESS);
    adf_stream_write(s, (const char *)in, 300000, ADF_OP_WRITE);
    adf_stream_write(s, NULL, 0, ADF_OP_FINISH);
    ck_assert_uint_eq(ZSTD_getFrameContentSize(b.data, b.len),
                      ZSTD_CONTENTSIZE_UNKNOWN);
    ck_assert_uint_le(zstd_frame_window(b.data, b.len), 1 << 19);
    adf_stream_close(s);
    b.len = 0;
#endif
#ifdef ADF_HAVE_BROTLI
    ck_assert_int_eq(open_stream(&s, pool, ADF_BR, 5, -1, 0, 0,
                                     collect, &b), APR_SUCCESS);
    adf_stream_write(s, (const char *)in, 1800, ADF_OP_WRITE);
    adf_stream_write(s, (const char *)in + 1800, 1800, ADF_OP_FINISH);
    ck_assert_int_eq(brotli_window(b.data), 12);
    adf_stream_close(s);
    b.len = 0;
    ck_assert_int_eq(open_stream(&s, pool, ADF_BR, 5, -1, 0, 0,
                                     collect, &b), APR_SUCCESS);
    adf_stream_write(s, (const char *)in, 300000, ADF_OP_WRITE);
    adf_stream_write(s, NULL, 0, ADF_OP_FINISH);
    ck_assert_int_eq(brotli_window(b.data), 19);
    adf_stream_close(s);
#endif
    free(in);
    free(b.data);
}
END_TEST

/* More streams at once than the idle lists keep: when they end, at most
 * the caps stay idle, and draining unmaps every block. */
START_TEST(pool_is_bounded)
{
    enum { N = 3 * ADF_IDLE_MAX };
    static const adf_coding_e codings[] = {
        ADF_GZIP,
#ifdef ADF_HAVE_BROTLI
        ADF_BR,
#endif
#ifdef ADF_HAVE_ZSTD
        ADF_ZSTD,
#endif
    };
    unsigned char *in = make_input(200000, 1);
    adf_stream_t *s[N];
    sink_buf_t b = { NULL, 0, 0, 0, 0 };
    adf_codec_pool_stats_t st;
    int i, ci;

    for (ci = 0; ci < (int)(sizeof(codings) / sizeof(codings[0])); ci++) {
        for (i = 0; i < N; i++) {
            ck_assert_int_eq(open_stream(&s[i], pool, codings[ci], 6, -1,
                                             0, 0, collect, &b),
                             APR_SUCCESS);
            ck_assert_int_eq(adf_stream_write(s[i], (const char *)in, 200000,
                                              ADF_OP_WRITE), APR_SUCCESS);
        }
        for (i = 0; i < N; i++) {
            adf_stream_close(s[i]);
        }
        adf_codec_pool_stats(&st);
        ck_assert_int_le(st.idle_states, 3 * ADF_IDLE_MAX);
        ck_assert_uint_le(st.idle_state_bytes, 3 * ADF_IDLE_BYTES);
        ck_assert_int_le(st.idle_blocks, ADF_MEM_IDLE_MAX);
        ck_assert_uint_le(st.idle_block_bytes, ADF_MEM_IDLE_BYTES);
    }
    ck_assert_uint_gt(st.dropped, 0);
    adf_codec_pool_drain();
    adf_codec_pool_stats(&st);
    ck_assert_int_eq(st.idle_states, 0);
    ck_assert_int_eq(st.idle_blocks, 0);
    ck_assert_uint_eq(st.mapped_bytes, 0);
    ck_assert_uint_eq(st.blocks_mapped, st.blocks_unmapped);
    free(in);
    free(b.data);
}
END_TEST

/* What stays idle past the trim's age is freed (the watchdog's tick);
 * what was used since stays. */
/* The idle lists and blocks directly: what does not fit the caps is not
 * kept, and keeps nothing else out; a block is reused only for a request
 * of its size or up to a quarter less. */
static int destroyed;

static void count_destroy(adf_idle_t *e)
{
    destroyed++;
    free(e);
}

START_TEST(pool_caps_what_is_too_large)
{
    static adf_idle_list_t l = { count_destroy };
    adf_codec_pool_stats_t st, st0;
    void *big, *small, *p;
    int i;

    adf_codec_pool_drain();
    destroyed = 0;
    for (i = 0; i < 3; i++) {
        adf_idle_put(&l, calloc(1, sizeof(adf_idle_t)), 1, 1000);
    }
    /* a state over the list's byte cap: destroyed, the others stay */
    adf_idle_put(&l, calloc(1, sizeof(adf_idle_t)), 2, ADF_IDLE_BYTES + 1);
    ck_assert_int_eq(destroyed, 1);
    ck_assert_int_eq(l.n, 3);
    /* a block over the idle blocks' cap is unmapped, not kept */
    small = adf_mem_alloc(NULL, ADF_MEM_MAP_MIN);
    adf_mem_free(NULL, small);
    adf_codec_pool_stats(&st0);
    ck_assert_int_eq(st0.idle_blocks, 1);
    big = adf_mem_alloc(NULL, ADF_MEM_IDLE_BYTES + ADF_MEM_MAP_MIN);
    adf_mem_free(NULL, big);
    adf_codec_pool_stats(&st);
    ck_assert_int_eq(st.idle_blocks, 1);
    ck_assert_uint_eq(st.mapped_bytes, st0.mapped_bytes);
    /* a block far larger than what is asked is not taken for it */
    big = adf_mem_alloc(NULL, 8 * ADF_MEM_MAP_MIN);
    adf_mem_free(NULL, big);
    adf_codec_pool_stats(&st0);
    p = adf_mem_alloc(NULL, 4 * ADF_MEM_MAP_MIN);
    adf_codec_pool_stats(&st);
    ck_assert_uint_eq(st.blocks_reused, st0.blocks_reused);
    adf_mem_free(NULL, p);
    /* ... and one of its size is */
    p = adf_mem_alloc(NULL, 8 * ADF_MEM_MAP_MIN - 100);
    adf_codec_pool_stats(&st);
    ck_assert_uint_eq(st.blocks_reused, st0.blocks_reused + 1);
    adf_mem_free(NULL, p);
    adf_codec_pool_drain();
    adf_codec_pool_stats(&st);
    ck_assert_int_eq(st.idle_blocks, 0);
    ck_assert_uint_eq(st.mapped_bytes, 0);
    while (l.head) {
        adf_idle_t *e = adf_idle_take(&l, 0, 1);

        free(e);
    }
}
END_TEST

START_TEST(pool_trims_idle)
{
    unsigned char *in = make_input(100000, 1);
    adf_codec_pool_stats_t st;
    int c;

    for (c = ADF_GZIP; c < ADF_NCODINGS; c++) {
        if (adf_coding(c) && !adf_coding(c)->needs_dict) {
            round_trip_one(c, 6, 0, in, 100000, -1, 0, "before the trim");
        }
    }
    adf_codec_pool_trim(apr_time_from_sec(60));
    adf_codec_pool_stats(&st);
    ck_assert_int_gt(st.idle_states + st.idle_blocks, 0);
    usleep(50000);
    round_trip_one(ADF_GZIP, 6, 0, in, 100000, -1, 0, "kept by the trim");
    adf_codec_pool_trim(apr_time_from_msec(40));
    adf_codec_pool_stats(&st);
    ck_assert_int_eq(st.idle_states, 1);        /* the zlib state just used */
    ck_assert_int_eq(st.idle_blocks, 0);
    ck_assert_uint_eq(st.mapped_bytes, 0);
    for (c = ADF_GZIP; c < ADF_NCODINGS; c++) {
        if (adf_coding(c) && !adf_coding(c)->needs_dict) {
            round_trip_one(c, 6, 0, in, 100000, -1, 0, "after the trim");
        }
    }
    free(in);
}
END_TEST

/* Threads share the idle lists: every stream still decodes exactly. */
typedef struct {
    int seed;
    int failures;
} worker_arg_t;

static void *stream_worker(void *data)
{
    worker_arg_t *a = data;
    static const struct { adf_coding_e c; int level; } mix[] = {
        { ADF_GZIP, 6 }, { ADF_GZIP, 9 },
#ifdef ADF_HAVE_BROTLI
        { ADF_BR, 4 }, { ADF_BR, 6 },
#endif
#ifdef ADF_HAVE_ZSTD
        { ADF_ZSTD, 3 }, { ADF_ZSTD, 12 },
#endif
    };
    enum { NMIX = sizeof(mix) / sizeof(mix[0]) };
    unsigned char *in = make_input(70000, 1), *out = malloc(70016);
    apr_pool_t *p;
    unsigned r = (unsigned)a->seed * 2654435761u + 1;
    int i;

    apr_pool_create_unmanaged(&p);
    for (i = 0; i < 150; i++) {
        sink_buf_t b = { NULL, 0, 0, 0, 0 };
        adf_stream_t *s;
        size_t n, off = 0;
        int k;

        r = r * 1103515245 + 12345;
        k = (int)((r >> 8) % NMIX);
        n = (r >> 4) % 70000;
        if (open_stream(&s, p, mix[k].c, mix[k].level,
                            (r & 1) ? -1 : (apr_off_t)n, 0, 0, collect, &b)
            != APR_SUCCESS) {
            a->failures++;
            continue;
        }
        while (off < n) {
            size_t piece = n - off < 5000 ? n - off : 5000;
            adf_stream_write(s, (const char *)in + off, piece, ADF_OP_WRITE);
            off += piece;
        }
        if (i % 7 == 3) {
            adf_stream_close(s);        /* abandoned */
        }
        else {
            adf_stream_write(s, NULL, 0, ADF_OP_FINISH);
            adf_stream_close(s);
            if (adf_decode_all(mix[k].c, b.data, b.len, out, 70016, 1)
                    != (long)n || memcmp(in, out, n)) {
                a->failures++;
            }
        }
        free(b.data);
        apr_pool_clear(p);
    }
    apr_pool_destroy(p);
    free(in);
    free(out);
    return NULL;
}

START_TEST(pool_shared_by_threads)
{
    enum { T = 8 };
    pthread_t t[T];
    worker_arg_t a[T];
    adf_codec_pool_stats_t st;
    int i;

    for (i = 0; i < T; i++) {
        a[i].seed = i + 1;
        a[i].failures = 0;
        ck_assert_int_eq(pthread_create(&t[i], NULL, stream_worker, &a[i]),
                         0);
    }
    for (i = 0; i < T; i++) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(a[i].failures, 0);
    }
    adf_codec_pool_stats(&st);
    ck_assert_uint_gt(st.reused, 0);
    ck_assert_int_le(st.idle_states, 3 * ADF_IDLE_MAX);
}
END_TEST

/* fork() while other threads take and give states (prefork, a CGI's
 * fork): the child's pool works, with what it inherited. */
static volatile int forking_done;

static void *churn(void *data)
{
    worker_arg_t *a = data;

    while (!forking_done) {
        stream_worker(a);
    }
    return NULL;
}

/* Blocks taken and given back in a loop: the pool's lock is held much of
 * the time, so some forks find it held by a thread the child has not. */
static void *churn_blocks(void *data)
{
    while (!forking_done) {
        adf_mem_free(NULL, adf_mem_alloc(NULL, 1 << 20));
    }
    return NULL;
}

/* The exit's drain never waits for the lock: here it is held across a
 * fork for the parent's thread, as in a process just forked whose atfork
 * handler has not run yet (where prefork's SIGTERM handler runs the child
 * pool's cleanups).  The probe's handler is registered before the pool's,
 * so it runs first in the child (in a runner that does not fork per test
 * the pool's may be there already: then it runs after it, and proves
 * less). */
static volatile int probe_early, early_result = -1;

static void early_child(void)
{
    adf_codec_pool_stats_t st;

    if (probe_early) {
        alarm(10);      /* a wait that never ends: killed, reported */
        early_result = adf_codec_pool_exit(&st);
        alarm(0);
    }
}

START_TEST(pool_exit_never_waits)
{
    adf_codec_pool_stats_t st;
    int status;
    pid_t pid;

    ck_assert_int_eq(pthread_atfork(NULL, NULL, early_child), 0);
    adf_codec_pool_stats(&st);      /* the pool's handlers: after ours */
    probe_early = 1;
    pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        _exit(early_result == 0 ? 0 : 1);
    }
    probe_early = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "child: status %d", status);
    /* here the lock is free: the exit drains */
    ck_assert_int_eq(adf_codec_pool_exit(&st), 1);
}
END_TEST

/* Under ASan the streams' threads stay out: its allocator (GCC 12's) is
 * not fork-safe, and a child forked while another thread was in malloc
 * hung in it (seen: 3 runs of 5).  The blocks' thread takes the pool's
 * lock without malloc. */
#if defined(__SANITIZE_ADDRESS__)
#define FORK_STREAM_THREADS 0
#else
#define FORK_STREAM_THREADS 2
#endif

START_TEST(pool_survives_fork)
{
    enum { T = FORK_STREAM_THREADS, FORKS = 20 };
    pthread_t t[2], tb;
    worker_arg_t a[2];
    unsigned char *in = make_input(50000, 1);
    int i, status;

    forking_done = 0;
    for (i = 0; i < T; i++) {
        a[i].seed = 100 + i;
        a[i].failures = 0;
        ck_assert_int_eq(pthread_create(&t[i], NULL, churn, &a[i]), 0);
    }
    ck_assert_int_eq(pthread_create(&tb, NULL, churn_blocks, NULL), 0);
    for (i = 0; i < FORKS; i++) {
        pid_t pid;

        usleep(20000);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            apr_pool_t *p;
            static const adf_coding_e cs[] = {
                ADF_GZIP,
#ifdef ADF_HAVE_BROTLI
                ADF_BR,
#endif
#ifdef ADF_HAVE_ZSTD
                ADF_ZSTD,
#endif
            };
            unsigned char *out = malloc(50016);
            int k, j, bad = 0;

            alarm(20);      /* a lock held forever: killed, reported */
            apr_pool_create_unmanaged(&p);
            for (j = 0; j < 3; j++) {
                for (k = 0; k < (int)(sizeof(cs) / sizeof(cs[0])); k++) {
                    sink_buf_t b = { NULL, 0, 0, 0, 0 };
                    adf_stream_t *s;

                    if (open_stream(&s, p, cs[k], 6, -1, 0, 0, collect,
                                        &b) != APR_SUCCESS
                        || adf_stream_write(s, (const char *)in, 50000,
                                            ADF_OP_FINISH) != APR_SUCCESS
                        || adf_decode_all(cs[k], b.data, b.len, out, 50016,
                                          1) != 50000
                        || memcmp(in, out, 50000)) {
                        bad = 1;
                    }
                    adf_stream_close(s);
                    free(b.data);
                }
            }
            adf_codec_pool_drain();
            _exit(bad);
        }
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                      "fork %d: child status %d", i, status);
    }
    forking_done = 1;
    pthread_join(tb, NULL);
    for (i = 0; i < T; i++) {
        pthread_join(t[i], NULL);
        ck_assert_int_eq(a[i].failures, 0);
    }
    free(in);
}
END_TEST

#ifdef ADF_HAVE_ZSTD
/* ---- dcz: zstd against a dictionary (RFC 9842) ---- */

/* Two versions of a file: v2 is v1 with a few edits, as a release. */
static unsigned char *version(size_t n, int v)
{
    unsigned char *p = make_input(n, 1);
    size_t i;

    for (i = 1000; v > 1 && i + 8 < n; i += 7919) {
        memcpy(p + i, "v2 edit!", 8);
    }
    return p;
}

static void dict_of(adf_dict_t *dict, const unsigned char *data, size_t len)
{
    adf_digest_t dg;

    memset(dict, 0, sizeof(*dict));
    dict->data = data;
    dict->len = len;
    ck_assert_int_eq(adf_digest_init(&dg), 0);
    adf_digest_update(&dg, data, len);
    ck_assert_int_eq(adf_digest_final(&dg, dict->hash), 0);
}

/* Encode in with coding c against dict (NULL: none), in pieces of piece
 * bytes with a flush after each when flush is set. */
static apr_status_t encode_dict(adf_coding_e c, int level, const adf_dict_t *dict,
                                const unsigned char *in, size_t n,
                                apr_off_t hint, int flags, size_t piece,
                                int flush, sink_buf_t *b)
{
    adf_stream_opts_t o = { adf_coding(c), level, hint, flags, 0, dict };
    adf_stream_t *st;
    apr_status_t rv;
    size_t off = 0;

    if ((rv = adf_stream_open(&st, pool, &o, collect, b)) != APR_SUCCESS) {
        return rv;
    }
    while (!(flags & ADF_STREAM_WHOLE) && n - off > piece) {
        ck_assert_int_eq(adf_stream_write(st, (const char *)in + off, piece,
                                          flush ? ADF_OP_FLUSH : ADF_OP_WRITE),
                         APR_SUCCESS);
        off += piece;
    }
    rv = adf_stream_write(st, (const char *)in + off, n - off, ADF_OP_FINISH);
    adf_stream_close(st);
    return rv;
}

START_TEST(dcz_round_trips)
{
    static const int levels[] = { 1, 3, 8, 12, 19 };
    size_t n = 200000;
    unsigned char *v1 = version(n, 1), *v2 = version(n, 2);
    unsigned char *out = malloc(n + 1);
    adf_dict_t dict;
    int li, mode;

    dict_of(&dict, v1, n);
    /* loaded for the stream, and prepared once and kept (stable) */
    for (li = 0; li < 2 * (int)(sizeof(levels) / sizeof(levels[0])); li++) {
        dict.stable = li & 1;
        /* whole, known length streamed, unknown length, with flushes */
        for (mode = 0; mode < 4; mode++) {
            sink_buf_t b = { NULL, 0, 0, 0, 0 }, z = { NULL, 0, 0, 0, 0 };
            int flags = mode == 0 ? ADF_STREAM_WHOLE : 0;
            apr_off_t hint = mode <= 1 ? (apr_off_t)n : -1;
            long got;

            ck_assert_int_eq(encode_dict(ADF_DCZ, levels[li / 2], &dict, v2,
                                         n, hint, flags, 8000, mode == 3, &b),
                             APR_SUCCESS);
            ck_assert_uint_gt(b.len, 40);
            ck_assert(!memcmp(b.data, "\x5e\x2a\x4d\x18\x20\x00\x00\x00", 8));
            ck_assert(!memcmp(b.data + 8, dict.hash, 32));
            got = adf_decode_all_dict(ADF_DCZ, v1, n, dict.hash, b.data, b.len,
                                      out, n + 1, 1);
            ck_assert_msg(got == (long)n && !memcmp(out, v2, n),
                          "level %d mode %d stable %d: decoded %ld",
                          levels[li / 2], mode, dict.stable, got);
            /* the dictionary is what makes it small */
            ck_assert_int_eq(encode_dict(ADF_ZSTD, levels[li / 2], NULL, v2,
                                         n, hint, flags, 8000, mode == 3, &z),
                             APR_SUCCESS);
            ck_assert_msg(b.len * 4 < z.len, "level %d mode %d stable %d: "
                          "dcz %zu, zstd %zu", levels[li / 2], mode,
                          dict.stable, b.len, z.len);
            free(b.data);
            free(z.data);
        }
    }
    free(v1);
    free(v2);
    free(out);
}
END_TEST

/* The dictionaries prepared for the process's life are freed at its end
 * (adf_codec_pool_exit): no leak for valgrind to find there, and a
 * dictionary used again afterwards (a test, a process that goes on) is
 * prepared anew, never taken from what was freed (ASan). */
START_TEST(dcz_prepared_freed_at_exit)
{
    size_t n = 20000;
    unsigned char *v1 = version(n, 1), *v2 = version(n, 2);
    unsigned char *out = malloc(n + 1);
    adf_codec_pool_stats_t st;
    adf_dict_t dict;
    int round;

    dict_of(&dict, v1, n);
    dict.stable = 1;
    for (round = 0; round < 2; round++) {
        sink_buf_t b = { NULL, 0, 0, 0, 0 };

        ck_assert_int_eq(encode_dict(ADF_DCZ, 3, &dict, v2, n, (apr_off_t)n,
                                     ADF_STREAM_WHOLE, 8000, 0, &b),
                         APR_SUCCESS);
        ck_assert_int_eq(adf_decode_all_dict(ADF_DCZ, v1, n, dict.hash,
                                             b.data, b.len, out, n + 1, 1),
                         (long)n);
        ck_assert(!memcmp(out, v2, n));
        free(b.data);
        ck_assert_int_eq(adf_codec_pool_exit(&st), 1);
    }
    free(v1);
    free(v2);
    free(out);
}
END_TEST

/* The zstd tool's --patch-from, which uses the dictionary as raw content
 * as dcz does, reads what follows the header. */
START_TEST(dcz_reference_tool)
{
    size_t n = 100000;
    unsigned char *v1 = version(n, 1), *v2 = version(n, 2);
    sink_buf_t b = { NULL, 0, 0, 0, 0 };
    char dpath[64], zpath[64], opath[64], cmd[320];
    adf_dict_t dict;
    FILE *f;
    unsigned char *back = malloc(n + 1);

    dict_of(&dict, v1, n);
    ck_assert_int_eq(encode_dict(ADF_DCZ, 6, &dict, v2, n, -1, 0, 4096, 0,
                                 &b), APR_SUCCESS);
    snprintf(dpath, sizeof(dpath), "/tmp/adf-dcz-%d.dict", (int)getpid());
    snprintf(zpath, sizeof(zpath), "/tmp/adf-dcz-%d.zst", (int)getpid());
    snprintf(opath, sizeof(opath), "/tmp/adf-dcz-%d.out", (int)getpid());
    ck_assert_ptr_nonnull(f = fopen(dpath, "wb"));
    ck_assert_uint_eq(fwrite(v1, 1, n, f), n);
    fclose(f);
    ck_assert_ptr_nonnull(f = fopen(zpath, "wb"));
    ck_assert_uint_eq(fwrite(b.data + 40, 1, b.len - 40, f), b.len - 40);
    fclose(f);
    snprintf(cmd, sizeof(cmd), "zstd -q -f -d --patch-from=%s %s -o %s",
             dpath, zpath, opath);
    ck_assert_msg(system(cmd) == 0, "%s", cmd);
    ck_assert_ptr_nonnull(f = fopen(opath, "rb"));
    ck_assert_uint_eq(fread(back, 1, n + 1, f), n);
    fclose(f);
    ck_assert(!memcmp(back, v2, n));
    unlink(dpath);
    unlink(zpath);
    unlink(opath);
    free(b.data);
    free(back);
    free(v1);
    free(v2);
}
END_TEST

/* A dictionary that starts with zstd's dictionary magic is still raw
 * content: a decoder that took it for a zstd dictionary would fail. */
START_TEST(dcz_raw_content)
{
    size_t n = 50000;
    unsigned char *v1 = version(n, 1), *v2 = version(n, 2);
    unsigned char *out = malloc(n + 1);
    sink_buf_t b = { NULL, 0, 0, 0, 0 };
    adf_dict_t dict;

    memcpy(v1, "\x37\xa4\x30\xec", 4);
    memcpy(v2, "\x37\xa4\x30\xec", 4);
    dict_of(&dict, v1, n);
    ck_assert_int_eq(encode_dict(ADF_DCZ, 3, &dict, v2, n, (apr_off_t)n, 0,
                                 n, 0, &b), APR_SUCCESS);
    ck_assert_int_eq(adf_decode_all_dict(ADF_DCZ, v1, n, dict.hash, b.data,
                                         b.len, out, n + 1, 1), (long)n);
    ck_assert(!memcmp(out, v2, n));
    ck_assert_uint_lt(b.len, n / 20);
    free(b.data);
    free(out);
    free(v1);
    free(v2);
}
END_TEST

START_TEST(dcz_errors)
{
    size_t n = 20000;
    unsigned char *v1 = version(n, 1), *v2 = version(n, 2);
    unsigned char *out = malloc(n + 1), other[32];
    sink_buf_t b = { NULL, 0, 0, 0, 0 };
    adf_dict_t dict;

    dict_of(&dict, v1, n);
    /* dcz needs a dictionary; the others take none */
    ck_assert_int_eq(encode_dict(ADF_DCZ, 3, NULL, v2, n, -1, 0, n, 0, &b),
                     APR_EINVAL);
    ck_assert_int_eq(encode_dict(ADF_ZSTD, 3, &dict, v2, n, -1, 0, n, 0, &b),
                     APR_EINVAL);
    ck_assert_int_eq(encode_dict(ADF_DCZ, 20, &dict, v2, n, -1, 0, n, 0, &b),
                     APR_EINVAL);
    ck_assert_uint_eq(b.len, 0);
    ck_assert_int_eq(encode_dict(ADF_DCZ, 3, &dict, v2, n, -1, 0, n, 0, &b),
                     APR_SUCCESS);
    /* decoding needs the dictionary the header names */
    memcpy(other, dict.hash, 32);
    other[31] ^= 1;
    ck_assert_int_eq(adf_decode_all_dict(ADF_DCZ, v1, n, other, b.data, b.len,
                                         out, n + 1, 1), -1);
    ck_assert_ptr_null(adf_decoder_create(ADF_DCZ));
    ck_assert_ptr_null(adf_decoder_create_dict(ADF_ZSTD, v1, n, dict.hash));
    /* cut in the header, in the frame */
    ck_assert_int_eq(adf_decode_all_dict(ADF_DCZ, v1, n, dict.hash, b.data, 20,
                                         out, n + 1, 1), -1);
    ck_assert_int_eq(adf_decode_all_dict(ADF_DCZ, v1, n, dict.hash, b.data,
                                         b.len - 1, out, n + 1, 1), -1);
    /* another dictionary of the same length: the header says no */
    v1[5] ^= 1;
    ck_assert_int_eq(adf_decode_all_dict(ADF_DCZ, v1, n, other, b.data, b.len,
                                         out, n + 1, 1), -1);
    free(b.data);
    free(out);
    free(v1);
    free(v2);
}
END_TEST

/* Prepared dictionaries (adf_dict_prep_*): found again by their SHA-256
 * whatever copy of the bytes a stream names, coded against at their own
 * level, freed only once no stream holds them, and bounded. */
START_TEST(dict_prepared_once)
{
    size_t n = 300000;
    unsigned char *v1 = version(n, 1), *v2 = version(n, 2);
    unsigned char *copy = malloc(n), *out = malloc(n + 1);
    sink_buf_t b = { NULL, 0, 0, 0, 0 };
    adf_dict_t dict, use;
    adf_dict_prep_t *p, *q;

    adf_dict_prep_flush();
    dict_of(&dict, v1, n);
    ck_assert_ptr_null(adf_dict_prep_get(dict.hash, n, 0));
    /* owned: the prepared form takes the (malloc'ed) bytes */
    memcpy(copy, v1, n);
    dict.data = copy;
    ck_assert_ptr_nonnull(p = adf_dict_prep_make(&dict, 6, 1));
    ck_assert_int_eq(adf_dict_prep_level(p), 6);
    ck_assert_uint_gt(adf_dict_prep_tables(p), 0);
    /* found by hash and length, at its level or any */
    ck_assert_ptr_eq(q = adf_dict_prep_get(dict.hash, n, 6), p);
    adf_dict_prep_put(q);
    ck_assert_ptr_eq(q = adf_dict_prep_get(dict.hash, n, 0), p);
    adf_dict_prep_put(q);
    ck_assert_ptr_null(adf_dict_prep_get(dict.hash, n, 3));
    ck_assert_ptr_null(adf_dict_prep_get(dict.hash, n - 1, 0));
    /* a stream given only the prepared form codes at its level and
     * decodes against the bytes */
    memset(&use, 0, sizeof(use));
    use.len = n;
    memcpy(use.hash, dict.hash, sizeof(use.hash));
    use.prep = p;
    ck_assert_int_eq(encode_dict(ADF_DCZ, 1, &use, v2, n, (apr_off_t)n,
                                 ADF_STREAM_WHOLE, n, 0, &b), APR_SUCCESS);
    ck_assert_int_eq(adf_decode_all_dict(ADF_DCZ, v1, n, dict.hash, b.data,
                                         b.len, out, n + 1, 1), (long)n);
    ck_assert(!memcmp(out, v2, n));
    ck_assert_uint_lt(b.len, n / 20);
    /* flushed from the table while held: still usable, freed at the put */
    adf_dict_prep_flush();
    ck_assert_ptr_null(adf_dict_prep_get(dict.hash, n, 0));
    b.len = 0;
    ck_assert_int_eq(encode_dict(ADF_DCZ, 1, &use, v2, n, -1, 0, 4096, 0, &b),
                     APR_SUCCESS);
    ck_assert_int_eq(adf_decode_all_dict(ADF_DCZ, v1, n, dict.hash, b.data,
                                         b.len, out, n + 1, 1), (long)n);
    adf_dict_prep_put(p);
    free(b.data);
    free(out);
    free(v1);
    free(v2);
}
END_TEST

START_TEST(dict_prepared_bounded)
{
    size_t n = 1 << 20;
    unsigned char *v = version(n, 3);
    adf_dict_t d[12];
    adf_dict_prep_t *held, *p;
    int i, kept = 0;

    adf_dict_prep_flush();
    /* one held all along: never evicted */
    dict_of(&d[0], v, n);
    ck_assert_ptr_nonnull(held = adf_dict_prep_make(&d[0], 10, 0));
    for (i = 1; i < 12; i++) {
        dict_of(&d[i], v, n);
        d[i].hash[0] ^= (unsigned char)i;      /* as if other bytes */
        d[i].hash[1] ^= (unsigned char)(i >> 8);
        ck_assert_ptr_nonnull(p = adf_dict_prep_make(&d[i], 10, 0));
        adf_dict_prep_put(p);
    }
    ck_assert_ptr_eq(p = adf_dict_prep_get(d[0].hash, n, 10), held);
    adf_dict_prep_put(p);
    /* level 10's tables are 12 MB for 1 MB: the table holds a few, the
     * most recent */
    for (i = 1; i < 12; i++) {
        if ((p = adf_dict_prep_get(d[i].hash, n, 10))) {
            kept++;
            adf_dict_prep_put(p);
        }
    }
    ck_assert_int_gt(kept, 0);
    ck_assert_int_le((kept + 1) * (int)(adf_dict_prep_tables(held) >> 20),
                     ADF_DICT_PREP_BYTES >> 20);
    ck_assert_ptr_nonnull(p = adf_dict_prep_get(d[11].hash, n, 10));
    adf_dict_prep_put(p);
    adf_dict_prep_put(held);
    adf_dict_prep_flush();
    free(v);
}
END_TEST

/* What preparing costs bounds the levels a dictionary is used at: 16 MB
 * up to 9, 4 MB up to 12, 1 MB up to 13, a small one at every level. */
START_TEST(dict_levels_by_size)
{
    ck_assert_int_eq(adf_dict_level_max(ADF_DICT_MAX), 9);
    ck_assert_int_eq(adf_dict_level_max(4 << 20), 12);
    ck_assert_int_eq(adf_dict_level_max(1 << 20), 13);
    ck_assert_int_eq(adf_dict_level_max(100000), 19);
    ck_assert(adf_dict_prep_cost(19, ADF_DICT_MAX) > ADF_DICT_PREP_MAX_NS);
    ck_assert(adf_dict_prep_cost(1, 1 << 20) < adf_dict_prep_cost(10,
                                                                 1 << 20));
}
END_TEST
#endif /* ADF_HAVE_ZSTD */

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
    slow_test(dcz_round_trips);
    slow_test(dcz_reference_tool);
    slow_test(dcz_raw_content);
    slow_test(dcz_errors);
    adf_test(s, dcz_prepared_freed_at_exit);
    slow_test(dict_prepared_once);
    slow_test(dict_prepared_bounded);
    adf_test(s, dict_levels_by_size);
#endif
    slow_test(levels_and_errors);
    slow_test(gzip_padding);
    /* reused coder state (adf_codec_pool.c) */
    slow_test(reuse_after_abandon);
    slow_test(reuse_after_flush);
    slow_test(reuse_across_levels);
    slow_test(reuse_across_size_hints);
    slow_test(reuse_after_padding);
    slow_test(staged_length_fits);
    slow_test(pool_is_bounded);
    slow_test(pool_trims_idle);
    slow_test(pool_caps_what_is_too_large);
    slow_test(pool_shared_by_threads);
    slow_test(pool_survives_fork);
    adf_test(s, pool_exit_never_waits);
    return adf_test_run(s);
}
