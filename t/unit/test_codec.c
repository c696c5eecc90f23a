/* Codec round trips: compress with tiny output buffers (so output spans
 * many chunks), in odd input pieces, with flushes; decode with the
 * independent decoders (zlib inflate, libbrotlidec) and compare. */
#include "config.h"
#include "adf_test.h"
#include "adf_decode.h"
#include <apr_general.h>
#include <stdlib.h>
#include <string.h>
#include "../../adf_codec.h"

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

static const adf_coding_e codings[] = {
    ADF_GZIP,
#ifdef ADF_HAVE_BROTLI
    ADF_BR,
#endif
};
#define NCODINGS (int)(sizeof(codings) / sizeof(codings[0]))

/* Round trip: sizes 0..200k, output buffers 1..8000, input pieces of
 * varying size, every level of each codec's range ends. */
START_TEST(round_trips)
{
    static const size_t sizes[] = { 0, 1, 2, 100, 4096, 65537, 200000 };
    static const apr_size_t bufs[] = { 1, 7, 64, 8000 };
    int ci, si, bi, li;

    for (ci = 0; ci < NCODINGS; ci++) {
        const adf_coding_t *d = adf_coding(codings[ci]);
        int levels[2] = { d->min_level, d->max_level };
        for (si = 0; si < 7; si++) {
            for (bi = 0; bi < 4; bi++) {
                for (li = 0; li < 2; li++) {
                    size_t n = sizes[si], off = 0, piece = 1;
                    unsigned char *in = make_input(n, si % 2);
                    unsigned char *out = malloc(n + 16);
                    sink_buf_t b = { NULL, 0, 0, 0, 0 };
                    adf_stream_t *s;
                    long got;

                    /* a hint that is wrong must still work: use n/2 */
                    ck_assert_int_eq(adf_stream_open(&s, pool, codings[ci],
                        levels[li], (apr_off_t)(n / 2), bufs[bi], collect,
                        &b), APR_SUCCESS);
                    while (off < n) {
                        size_t k = piece < n - off ? piece : n - off;
                        ck_assert_int_eq(adf_stream_write(s,
                            (const char *)in + off, k, ADF_OP_WRITE),
                            APR_SUCCESS);
                        off += k;
                        piece = piece * 3 + 1;
                    }
                    ck_assert_int_eq(adf_stream_write(s, NULL, 0,
                                                      ADF_OP_FINISH),
                                     APR_SUCCESS);
                    ck_assert_uint_eq(adf_stream_bytes_in(s), n);
                    ck_assert_uint_eq(adf_stream_bytes_out(s), b.len);
                    ck_assert_uint_le(b.max_chunk,
                                      bufs[bi] < 64 ? 64 : bufs[bi]);
                    got = adf_test_decode(codings[ci], b.data, b.len, out, n + 16, 1);
                    ck_assert_msg(got == (long)n && !memcmp(in, out, n),
                                  "coding %d size %zu buf %zu level %d: "
                                  "got %ld", codings[ci], n, bufs[bi],
                                  levels[li], got);
                    adf_stream_close(s);
                    free(in);
                    free(out);
                    free(b.data);
                }
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

    for (ci = 0; ci < NCODINGS; ci++) {
        size_t n = 30000, off = 0;
        unsigned char *in = make_input(n, 1);
        unsigned char *out = malloc(n + 16);
        sink_buf_t b = { NULL, 0, 0, 0, 0 };
        adf_stream_t *s;
        size_t step = 1;

        /* 1: below the minimum, which must keep flushes finite */
        ck_assert_int_eq(adf_stream_open(&s, pool, codings[ci], 5, -1, 1,
                                         collect, &b), APR_SUCCESS);
        while (off < n) {
            size_t k = step < n - off ? step : n - off;
            long got;
            ck_assert_int_eq(adf_stream_write(s, (const char *)in + off, k,
                                              ADF_OP_FLUSH), APR_SUCCESS);
            off += k;
            step = step * 2 + 3;
            got = adf_test_decode(codings[ci], b.data, b.len, out, n + 16, 0);
            ck_assert_msg(got == (long)off && !memcmp(in, out, off),
                          "coding %d: after flush at %zu decoded %ld",
                          codings[ci], off, got);
        }
        /* an empty flush, twice, then the end */
        ck_assert_int_eq(adf_stream_write(s, NULL, 0, ADF_OP_FLUSH), 0);
        ck_assert_int_eq(adf_stream_write(s, NULL, 0, ADF_OP_FLUSH), 0);
        ck_assert_int_eq(adf_stream_write(s, NULL, 0, ADF_OP_FINISH), 0);
        ck_assert_int_eq(adf_test_decode(codings[ci], b.data, b.len, out, n + 16, 1),
                         (long)n);
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

/* A small known length gets a small window: same output validity, and
 * the gzip header's XFL byte tells the level (2: 9, 4: 1). */
START_TEST(levels_and_errors)
{
    sink_buf_t b = { NULL, 0, 0, 0, 0 };
    adf_stream_t *s;

    ck_assert_int_eq(adf_stream_open(&s, pool, ADF_GZIP, 9, 10, 0, collect, &b),
                     APR_SUCCESS);
    adf_stream_write(s, "hello hello", 11, ADF_OP_FINISH);
    ck_assert_int_eq(b.data[8], 2);
    b.len = 0;
    ck_assert_int_eq(adf_stream_open(&s, pool, ADF_GZIP, 1, 10, 0, collect, &b),
                     APR_SUCCESS);
    adf_stream_write(s, "hello hello", 11, ADF_OP_FINISH);
    ck_assert_int_eq(b.data[8], 4);
    ck_assert_int_eq(adf_stream_open(&s, pool, ADF_GZIP, 0, 10, 0, collect, &b),
                     APR_EINVAL);
    ck_assert_int_eq(adf_stream_open(&s, pool, ADF_GZIP, 10, 10, 0, collect, &b),
                     APR_EINVAL);
    ck_assert_int_eq(adf_stream_open(&s, pool, ADF_IDENTITY, 1, 10, 0, collect,
                                     &b), APR_ENOTIMPL);
#ifdef ADF_HAVE_BROTLI
    ck_assert_int_eq(adf_stream_open(&s, pool, ADF_BR, 12, 10, 0, collect, &b),
                     APR_EINVAL);
#endif
    free(b.data);
    /* the fixture's pool cleanup frees the streams not closed: no leak */
}
END_TEST

/* Length hiding: an FEXTRA field of the asked size; still decodes. */
START_TEST(gzip_padding)
{
    sink_buf_t b = { NULL, 0, 0, 0, 0 };
    adf_stream_t *s;
    unsigned char out[64];
    apr_size_t n;

    for (n = 4; n < 600; n += 97) {
        b.len = 0;
        ck_assert_int_eq(adf_stream_open(&s, pool, ADF_GZIP, 6, -1, 0, collect,
                                         &b), APR_SUCCESS);
        ck_assert_int_eq(adf_stream_pad(s, n), APR_SUCCESS);
        adf_stream_write(s, "hello hello hello", 17, ADF_OP_FINISH);
        ck_assert_int_eq(b.data[3] & 4, 4);                 /* FEXTRA */
        ck_assert_uint_eq(b.data[10] | b.data[11] << 8, n); /* XLEN */
        ck_assert_int_eq(adf_test_decode(ADF_GZIP, b.data, b.len, out, sizeof(out), 1),
                         17);
        ck_assert(!memcmp(out, "hello hello hello", 17));
        /* too late once written */
        ck_assert_int_eq(adf_stream_pad(s, 8), APR_EINVAL);
    }
#ifdef ADF_HAVE_BROTLI
    ck_assert_int_eq(adf_stream_open(&s, pool, ADF_BR, 5, -1, 0, collect, &b),
                     APR_SUCCESS);
    ck_assert_int_eq(adf_stream_pad(s, 8), APR_ENOTIMPL);
#endif
    free(b.data);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("codec");
    TCase *tc = adf_test_case(s, "round-trip");

    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, round_trips);
    tcase_add_test(tc, flush_points);
    tcase_add_test(tc, levels_and_errors);
    tcase_add_test(tc, gzip_padding);
    return adf_test_run(s);
}
