/* Decoding, for what checks encoded bytes: adaptive-precompress verifies
 * a sibling before it vouches for it, the tests and fuzzers compare round
 * trips.  Independent of the encoders: zlib's inflate, libbrotlidec,
 * libzstd (refusing windows above 8 MB, as an HTTP client may).  Not
 * linked into the module. */
#ifndef ADF_DECODE_H
#define ADF_DECODE_H

#include <stddef.h>
#include "adf_coding.h"

typedef struct adf_decoder_t adf_decoder_t;

/* Decoded bytes; return nonzero to stop decoding. */
typedef int adf_decoded_fn(void *baton, const unsigned char *data,
                           size_t len);

/* NULL when the coding is unknown to this build or memory is short. */
adf_decoder_t *adf_decoder_create(adf_coding_e c);

/* For a coding made against a dictionary (dcz): its bytes, which must
 * outlive the decoder, and their SHA-256, which the body must name.
 * NULL as above, or for a coding that takes no dictionary. */
adf_decoder_t *adf_decoder_create_dict(adf_coding_e c,
                                       const unsigned char *dict,
                                       size_t dict_len,
                                       const unsigned char hash[32]);
void adf_decoder_destroy(adf_decoder_t *d);

/* Feed len bytes of input; decoded bytes go to out.  Returns 1 when the
 * stream ended (*used tells how much input it took), 0 when it wants
 * more, -1 on a corrupt stream or when out stopped it. */
int adf_decoder_feed(adf_decoder_t *d, const unsigned char *in, size_t len,
                     size_t *used, adf_decoded_fn *out, void *baton);

/* Decode all of in into out (cap bytes).  The decoded length, or -1 when
 * it does not fit or is corrupt, or (with complete) when the stream did
 * not end exactly at the end of in. */
long adf_decode_all(adf_coding_e c, const unsigned char *in, size_t len,
                    unsigned char *out, size_t cap, int complete);

/* The same with a dictionary (adf_decoder_create_dict). */
long adf_decode_all_dict(adf_coding_e c, const unsigned char *dict,
                         size_t dict_len, const unsigned char hash[32],
                         const unsigned char *in, size_t len,
                         unsigned char *out, size_t cap, int complete);

#endif /* ADF_DECODE_H */
