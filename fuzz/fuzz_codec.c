/* libFuzzer: codec streams of every coding and backend with random data,
 * random piece sizes, random output buffer sizes and random FLUSH points,
 * or the whole body in one write.  Oracle: round-trip
 * identity through the independent decoders, after every flush and at
 * the end. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <apr_general.h>
#include "adf_codec.h"
#include "adf_decode.h"

typedef struct {
    unsigned char *data;
    size_t len, cap;
} buf_t;

static apr_pool_t *pool;
static adf_coding_e codings[ADF_NCODINGS];

/* The codings this build has, or the one ADF_FUZZ_CODING names (to give
 * each its own share of executions). */
static int ncodings(void)
{
    static int n;
    const char *only = getenv("ADF_FUZZ_CODING");
    int c;

    if (!n) {
        for (c = ADF_IDENTITY + 1; c < ADF_NCODINGS; c++) {
            const adf_coding_t *d = adf_coding((adf_coding_e)c);

            /* not a coding that needs a dictionary: no stream without one */
            if (d && !d->needs_dict && (!only || !strcmp(only, d->token))) {
                codings[n++] = (adf_coding_e)c;
            }
        }
        if (!n) {
            abort();        /* a coding this build lacks */
        }
    }
    return n;
}

static apr_status_t collect(void *baton, const char *data, apr_size_t len)
{
    buf_t *b = baton;

    if (b->len + len > b->cap) {
        b->cap = (b->len + len) * 2 + 64;
        b->data = realloc(b->data, b->cap);
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return APR_SUCCESS;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p;
    adf_stream_t *s;
    adf_stream_opts_t o = { NULL };
    adf_coding_e c;
    buf_t b = { NULL, 0, 0 };
    unsigned char *out;
    size_t off, bufsize;
    int level, whole;
    uint32_t rnd;

    if (size < 4) {
        return 0;
    }
    if (!pool) {
        apr_initialize();
        apr_pool_create(&pool, NULL);
    }
    /* header: coding and mode, level, output buffer size, seed.  Every
     * coding this build has; streamed in random pieces and flushes, or
     * whole in one FINISH write (libdeflate's one-shot path for gzip). */
    c = codings[data[0] % ncodings()];
    whole = (data[0] >> 4) & 1;
    level = c == ADF_GZIP ? 1 + data[1] % 9
          : c == ADF_BR ? data[1] % 7       /* br <= 6, zstd <= 12: speed */
          : 1 + data[1] % 12;
    bufsize = 1 + data[2] % 64 * 37;
    rnd = data[3] * 2654435761u + 1;
    data += 4;
    size -= 4;
    apr_pool_create(&p, pool);
    o.coding = adf_coding(c);
    o.level = level;
    o.size_hint = whole || (data[-1] & 1) ? (apr_off_t)size : -1;
    o.flags = whole ? ADF_STREAM_WHOLE : 0;
    o.bufsize = bufsize;
    if (adf_stream_open(&s, p, &o, collect, &b) != APR_SUCCESS) {
        abort();
    }
    out = malloc(size + 1);
    off = whole ? size : 0;
    while (off < size) {
        size_t k;
        int flush;

        rnd = rnd * 1103515245 + 12345;
        k = 1 + (rnd >> 8) % 4096;
        if (k > size - off) {
            k = size - off;
        }
        flush = (rnd >> 20) % 4 == 0;
        if (adf_stream_write(s, (const char *)data + off, k,
                             flush ? ADF_OP_FLUSH : ADF_OP_WRITE)) {
            abort();
        }
        off += k;
        if (flush) {
            long got = adf_decode_all(c, b.data, b.len, out, size + 1, 0);
            if (got != (long)off || memcmp(out, data, off)) {
                abort();
            }
        }
    }
    if (whole ? adf_stream_write(s, (const char *)data, size, ADF_OP_FINISH)
              : adf_stream_write(s, NULL, 0, ADF_OP_FINISH)) {
        abort();
    }
    if (adf_decode_all(c, b.data, b.len, out, size + 1, 1) != (long)size
        || memcmp(out, data, size)) {
        abort();
    }
    free(out);
    free(b.data);
    apr_pool_destroy(p);
    return 0;
}
