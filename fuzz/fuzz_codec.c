/* libFuzzer: codec streams with random data, random piece sizes, random
 * output buffer sizes and random FLUSH points.  Oracle: round-trip
 * identity through the independent decoders, after every flush and at
 * the end. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <apr_general.h>
#include <zlib.h>
#include <brotli/decode.h>
#include "../adf_codec.h"

typedef struct {
    unsigned char *data;
    size_t len, cap;
} buf_t;

static apr_pool_t *pool;

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

static long decode(adf_coding_e c, const buf_t *in, unsigned char *out,
                   size_t cap, int complete)
{
    if (c == ADF_GZIP) {
        z_stream z;
        int rc;

        memset(&z, 0, sizeof(z));
        inflateInit2(&z, 16 + MAX_WBITS);
        z.next_in = in->data;
        z.avail_in = (uInt)in->len;
        z.next_out = out;
        z.avail_out = (uInt)cap;
        rc = inflate(&z, Z_SYNC_FLUSH);
        inflateEnd(&z);
        if (complete ? rc != Z_STREAM_END
                     : (rc != Z_OK && rc != Z_BUF_ERROR && rc != Z_STREAM_END)) {
            return -1;
        }
        return (long)(cap - z.avail_out);
    }
    else {
        BrotliDecoderState *st = BrotliDecoderCreateInstance(NULL, NULL, NULL);
        const uint8_t *next_in = in->data;
        size_t avail_in = in->len, avail_out = cap;
        uint8_t *next_out = out;
        BrotliDecoderResult r = BrotliDecoderDecompressStream(
            st, &avail_in, &next_in, &avail_out, &next_out, NULL);
        BrotliDecoderDestroyInstance(st);
        if (complete ? r != BROTLI_DECODER_RESULT_SUCCESS
                     : r == BROTLI_DECODER_RESULT_ERROR) {
            return -1;
        }
        return (long)(cap - avail_out);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    apr_pool_t *p;
    adf_stream_t *s;
    adf_coding_e c;
    buf_t b = { NULL, 0, 0 };
    unsigned char *out;
    size_t off, bufsize;
    int level;
    uint32_t rnd;

    if (size < 4) {
        return 0;
    }
    if (!pool) {
        apr_initialize();
        apr_pool_create(&pool, NULL);
    }
    /* header: coding, level, output buffer size, seed */
    c = (data[0] & 1) ? ADF_BR : ADF_GZIP;
    level = c == ADF_GZIP ? 1 + data[1] % 9 : data[1] % 7;  /* br <= 6: speed */
    bufsize = 1 + data[2] % 64 * 37;
    rnd = data[3] * 2654435761u + 1;
    data += 4;
    size -= 4;
    apr_pool_create(&p, pool);
    if (adf_stream_open(&s, p, c, level, (data[-1] & 1) ? (apr_off_t)size : -1,
                        bufsize, collect, &b) != APR_SUCCESS) {
        abort();
    }
    out = malloc(size + 1);
    off = 0;
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
            long got = decode(c, &b, out, size + 1, 0);
            if (got != (long)off || memcmp(out, data, off)) {
                abort();
            }
        }
    }
    if (adf_stream_write(s, NULL, 0, ADF_OP_FINISH)) {
        abort();
    }
    if (decode(c, &b, out, size + 1, 1) != (long)size
        || memcmp(out, data, size)) {
        abort();
    }
    free(out);
    free(b.data);
    apr_pool_destroy(p);
    return 0;
}
