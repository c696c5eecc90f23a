/* The dcz coding (RFC 9842, Compression Dictionary Transport): a zstd
 * frame made against a dictionary the client holds, used as raw content
 * (zstd's backend takes it from the stream), after a header that names
 * the dictionary: the 8 bytes of a skippable frame (magic 0x184D2A5E, 32
 * bytes of content) and the dictionary's SHA-256, which the stream
 * writes. */
#include "config.h"
#include "adf_codec_impl.h"

#ifdef ADF_HAVE_ZSTD
static const adf_backend_t *dcz_pick(int level, apr_off_t hint, int flags,
                                     int *blevel)
{
    *blevel = level;
    return &adf_backend_zstd;
}

static const adf_codec_t dcz_codec = { dcz_pick };
#endif /* ADF_HAVE_ZSTD */

const adf_coding_t adf_coding_dcz = {
    .id = ADF_DCZ, .token = "dcz", .etag_suffix = "-ad-dcz",
    .level_word = "level",
    .min_level = 1, .max_level = 19,
    .default_min = 1, .default_max = 10,    /* with body and dictionary
                                             * within 256 KB, 11 and 12
                                             * take libzstd's btlazy2: 3-15
                                             * times 10's CPU for 1-5 %
                                             * (bench/dictionary) */
    .strongest = 19,
    .needs_dict = 1,
    .dict_magic = "\x5e\x2a\x4d\x18\x20\x00\x00\x00", .dict_magic_len = 8,
#ifdef ADF_HAVE_ZSTD
    .codec = &dcz_codec
#endif
};
