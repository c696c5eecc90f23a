/* Decoders; see adf_decode.h. */
#include "config.h"
#include "adf_decode.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef ADF_HAVE_BROTLI
#include <brotli/decode.h>
#endif
#ifdef ADF_HAVE_ZSTD
#include <zstd.h>
#endif

#define OUT_CHUNK 65536

struct adf_decoder_t {
    adf_coding_e coding;
    z_stream z;
#ifdef ADF_HAVE_BROTLI
    BrotliDecoderState *br;
#endif
#ifdef ADF_HAVE_ZSTD
    ZSTD_DCtx *zstd;
#endif
    unsigned char out[OUT_CHUNK];
};

adf_decoder_t *adf_decoder_create(adf_coding_e c)
{
    adf_decoder_t *d = calloc(1, sizeof(*d));

    if (!d) {
        return NULL;
    }
    d->coding = c;
    switch (c) {
    case ADF_GZIP:
        if (inflateInit2(&d->z, 16 + MAX_WBITS) == Z_OK) {
            return d;
        }
        break;
#ifdef ADF_HAVE_BROTLI
    case ADF_BR:
        if ((d->br = BrotliDecoderCreateInstance(NULL, NULL, NULL))) {
            return d;
        }
        break;
#endif
#ifdef ADF_HAVE_ZSTD
    case ADF_ZSTD:
        if ((d->zstd = ZSTD_createDCtx())
            && !ZSTD_isError(ZSTD_DCtx_setParameter(d->zstd,
                                                    ZSTD_d_windowLogMax,
                                                    23))) {
            return d;
        }
        ZSTD_freeDCtx(d->zstd);
        break;
#endif
    default:
        break;
    }
    free(d);
    return NULL;
}

void adf_decoder_destroy(adf_decoder_t *d)
{
    if (!d) {
        return;
    }
    if (d->coding == ADF_GZIP) {
        inflateEnd(&d->z);
    }
#ifdef ADF_HAVE_BROTLI
    BrotliDecoderDestroyInstance(d->br);
#endif
#ifdef ADF_HAVE_ZSTD
    ZSTD_freeDCtx(d->zstd);
#endif
    free(d);
}

int adf_decoder_feed(adf_decoder_t *d, const unsigned char *in, size_t len,
                     size_t *used, adf_decoded_fn *out, void *baton)
{
    *used = 0;
    if (d->coding == ADF_GZIP) {
        d->z.next_in = (Bytef *)in;
        d->z.avail_in = (uInt)len;
        for (;;) {
            int rc;

            d->z.next_out = d->out;
            d->z.avail_out = OUT_CHUNK;
            rc = inflate(&d->z, Z_NO_FLUSH);
            *used = len - d->z.avail_in;
            if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR) {
                return -1;
            }
            if (out(baton, d->out, OUT_CHUNK - d->z.avail_out)) {
                return -1;
            }
            if (rc == Z_STREAM_END) {
                return 1;
            }
            if (d->z.avail_in == 0 && d->z.avail_out != 0) {
                return 0;
            }
            if (rc == Z_BUF_ERROR && d->z.avail_out != 0) {
                return 0;
            }
        }
    }
#ifdef ADF_HAVE_BROTLI
    if (d->coding == ADF_BR) {
        const uint8_t *next_in = in;
        size_t avail_in = len;

        for (;;) {
            uint8_t *next_out = d->out;
            size_t avail_out = OUT_CHUNK;
            BrotliDecoderResult r = BrotliDecoderDecompressStream(
                d->br, &avail_in, &next_in, &avail_out, &next_out, NULL);

            *used = len - avail_in;
            if (r == BROTLI_DECODER_RESULT_ERROR
                || out(baton, d->out, OUT_CHUNK - avail_out)) {
                return -1;
            }
            if (r == BROTLI_DECODER_RESULT_SUCCESS) {
                return 1;
            }
            if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT) {
                return 0;
            }
        }
    }
#endif
#ifdef ADF_HAVE_ZSTD
    if (d->coding == ADF_ZSTD) {
        ZSTD_inBuffer ib = { in, len, 0 };

        for (;;) {
            ZSTD_outBuffer ob = { d->out, OUT_CHUNK, 0 };
            size_t r = ZSTD_decompressStream(d->zstd, &ob, &ib);

            *used = ib.pos;
            if (ZSTD_isError(r) || out(baton, d->out, ob.pos)) {
                return -1;
            }
            if (r == 0) {
                return 1;       /* a frame ended */
            }
            if (ib.pos == ib.size && ob.pos < ob.size) {
                return 0;
            }
        }
    }
#endif
    return -1;
}

typedef struct {
    unsigned char *out;
    size_t cap, len;
} flat_t;

static int to_flat(void *baton, const unsigned char *data, size_t len)
{
    flat_t *f = baton;

    if (len > f->cap - f->len) {
        return 1;
    }
    memcpy(f->out + f->len, data, len);
    f->len += len;
    return 0;
}

long adf_decode_all(adf_coding_e c, const unsigned char *in, size_t len,
                    unsigned char *out, size_t cap, int complete)
{
    adf_decoder_t *d = adf_decoder_create(c);
    flat_t f = { out, cap, 0 };
    size_t used;
    int r;

    if (!d) {
        return -1;
    }
    r = adf_decoder_feed(d, in, len, &used, to_flat, &f);
    adf_decoder_destroy(d);
    if (r < 0 || (complete && (r != 1 || used != len))) {
        return -1;
    }
    return (long)f.len;
}
