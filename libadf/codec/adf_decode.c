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
/* ZSTD_DCtx_refPrefix_advanced (raw content: dcz): exported by libzstd's
 * shared library since 1.4, declared with the experimental API. */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
#endif

#define OUT_CHUNK 65536

/* dcz (RFC 9842): a skippable frame's 8 bytes, then the dictionary's
 * SHA-256, then a zstd frame made with the dictionary as raw content. */
#define DCZ_HEAD 40
static const unsigned char dcz_magic[8] = {
    0x5e, 0x2a, 0x4d, 0x18, 0x20, 0x00, 0x00, 0x00
};

struct adf_decoder_t {
    adf_coding_e coding;
    unsigned char hash[32];     /* dcz: what the header must name */
    unsigned char head[DCZ_HEAD];
    size_t head_len;            /* of it read so far */
    z_stream z;
#ifdef ADF_HAVE_BROTLI
    BrotliDecoderState *br;
#endif
#ifdef ADF_HAVE_ZSTD
    ZSTD_DCtx *zstd;
#endif
    unsigned char out[OUT_CHUNK];
};

#ifdef ADF_HAVE_ZSTD
/* zstd's decoder: windows up to wlog_max; against dict (raw content)
 * when there is one. */
static ZSTD_DCtx *zstd_decoder(int wlog_max, const unsigned char *dict,
                               size_t dict_len);
#endif
static int feed(adf_decoder_t *d, const unsigned char *in, size_t len,
                size_t *used, adf_decoded_fn *out, void *baton);

adf_decoder_t *adf_decoder_create(adf_coding_e c)
{
    adf_decoder_t *d;

    if (c == ADF_DCZ || !(d = calloc(1, sizeof(*d)))) {
        return NULL;    /* dcz: adf_decoder_create_dict */
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
        if ((d->zstd = zstd_decoder(23, NULL, 0))) {
            return d;
        }
        break;
#endif
    default:
        break;
    }
    free(d);
    return NULL;
}

adf_decoder_t *adf_decoder_create_dict(adf_coding_e c,
                                       const unsigned char *dict,
                                       size_t dict_len,
                                       const unsigned char hash[32])
{
#ifdef ADF_HAVE_ZSTD
    /* a window of at most max(8 MB, 1.25 x the dictionary) */
    unsigned long long limit = dict_len + dict_len / 4;
    int wlog = 23;
    adf_decoder_t *d;

    if (c != ADF_DCZ || !(d = calloc(1, sizeof(*d)))) {
        return NULL;
    }
    while (wlog < 30 && (1ULL << (wlog + 1)) <= limit) {
        wlog++;
    }
    d->coding = c;
    memcpy(d->hash, hash, sizeof(d->hash));
    if ((d->zstd = zstd_decoder(wlog, dict, dict_len))) {
        return d;
    }
    free(d);
#endif
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

#ifdef ADF_HAVE_ZSTD
static ZSTD_DCtx *zstd_decoder(int wlog_max, const unsigned char *dict,
                               size_t dict_len)
{
    ZSTD_DCtx *z = ZSTD_createDCtx();

    if (z && !ZSTD_isError(ZSTD_DCtx_setParameter(z, ZSTD_d_windowLogMax,
                                                  wlog_max))
        && (!dict || !ZSTD_isError(ZSTD_DCtx_refPrefix_advanced(
                         z, dict, dict_len, ZSTD_dct_rawContent)))) {
        return z;
    }
    ZSTD_freeDCtx(z);
    return NULL;
}
#endif

/* dcz's header, which may come in pieces: 1 once it is read and names
 * the dictionary, 0 while more is needed, -1 when it is not a dcz header
 * or names another dictionary. */
static int dcz_head(adf_decoder_t *d, const unsigned char **in, size_t *len,
                    size_t *used)
{
    size_t k = DCZ_HEAD - d->head_len;

    if (k > *len) {
        k = *len;
    }
    memcpy(d->head + d->head_len, *in, k);
    d->head_len += k;
    *in += k;
    *len -= k;
    *used += k;
    if (d->head_len < DCZ_HEAD) {
        return 0;
    }
    return memcmp(d->head, dcz_magic, sizeof(dcz_magic))
           || memcmp(d->head + sizeof(dcz_magic), d->hash, 32) ? -1 : 1;
}

int adf_decoder_feed(adf_decoder_t *d, const unsigned char *in, size_t len,
                     size_t *used, adf_decoded_fn *out, void *baton)
{
    size_t head = 0;
    int r;

    *used = 0;
    if (d->coding == ADF_DCZ && d->head_len < DCZ_HEAD) {
        if ((r = dcz_head(d, &in, &len, &head)) <= 0) {
            *used = head;
            return r;
        }
    }
    r = feed(d, in, len, used, out, baton);
    *used += head;
    return r;
}

static int feed(adf_decoder_t *d, const unsigned char *in, size_t len,
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
    if (d->coding == ADF_ZSTD || d->coding == ADF_DCZ) {
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

static long decode_all(adf_decoder_t *d, const unsigned char *in,
                       size_t len, unsigned char *out, size_t cap,
                       int complete)
{
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

long adf_decode_all(adf_coding_e c, const unsigned char *in, size_t len,
                    unsigned char *out, size_t cap, int complete)
{
    return decode_all(adf_decoder_create(c), in, len, out, cap, complete);
}

long adf_decode_all_dict(adf_coding_e c, const unsigned char *dict,
                         size_t dict_len, const unsigned char hash[32],
                         const unsigned char *in, size_t len,
                         unsigned char *out, size_t cap, int complete)
{
    return decode_all(adf_decoder_create_dict(c, dict, dict_len, hash), in,
                      len, out, cap, complete);
}
