/* Decode with the independent decoders (zlib inflate, libbrotlidec), for
 * the codec tests and fuzzer.  Returns the decoded length or -1; with
 * complete set the stream must also be properly finished. */
#ifndef ADF_DECODE_H
#define ADF_DECODE_H

#include <string.h>
#include <zlib.h>
#ifdef ADF_HAVE_BROTLI
#include <brotli/decode.h>
#endif
#include "../../adf_negotiate.h"

static long adf_test_decode(adf_coding_e c, const unsigned char *in,
                            size_t len, unsigned char *out, size_t cap,
                            int complete)
{
    if (c == ADF_GZIP) {
        z_stream z;
        int rc;

        memset(&z, 0, sizeof(z));
        if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
            return -1;
        }
        z.next_in = (Bytef *)in;
        z.avail_in = (uInt)len;
        z.next_out = out;
        z.avail_out = (uInt)cap;
        rc = inflate(&z, Z_SYNC_FLUSH);
        inflateEnd(&z);
        if (complete ? rc != Z_STREAM_END : (rc != Z_OK && rc != Z_BUF_ERROR
                                            && rc != Z_STREAM_END)) {
            return -1;
        }
        return (long)(cap - z.avail_out);
    }
#ifdef ADF_HAVE_BROTLI
    if (c == ADF_BR) {
        BrotliDecoderState *st = BrotliDecoderCreateInstance(NULL, NULL, NULL);
        const uint8_t *next_in = in;
        size_t avail_in = len, avail_out = cap;
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
#endif
    return -1;
}

#endif /* ADF_DECODE_H */
