/* The gzip coding: its facts, and which library encodes which level.
 *
 * Levels are zlib's scale (1-9), and a level promises at least zlib's
 * compression at that level.  Measured on this project's machine kind
 * (docs/benchmarks.md): ISA-L's igzip level 1 compresses better than
 * zlib 1 at a twentieth of its CPU, and level 3 better than zlib 3;
 * libdeflate level L matches zlib L within a percent at a half to a
 * ninth of its CPU but needs the whole input at once.  So: whole bodies
 * of known length go to libdeflate (igzip for level 1), streams to igzip
 * for levels 1-3 and to zlib above; zlib does whatever the others
 * cannot (length hiding pads the gzip header, which only zlib exposes).
 * ADF_STREAM_BEST at level 9 takes libdeflate to its 12 (the cache).
 */
#include "config.h"
#include "adf_codec_impl.h"

static const adf_backend_t *gzip_pick(int level, apr_off_t hint, int flags,
                                      int *blevel)
{
    *blevel = level;
    if (flags & ADF_STREAM_PAD) {
        return &adf_backend_zlib;
    }
#ifdef ADF_HAVE_ISAL
    if (level == 1) {
        return &adf_backend_isal;
    }
#endif
#ifdef ADF_HAVE_LIBDEFLATE
    if ((flags & ADF_STREAM_WHOLE) && hint <= ADF_WHOLE_MAX) {
        if ((flags & ADF_STREAM_BEST) && level == 9) {
            *blevel = 12;       /* libdeflate's strongest */
        }
        return &adf_backend_libdeflate;
    }
#endif
#ifdef ADF_HAVE_ISAL
    if (level <= 3) {
        *blevel = 3;
        return &adf_backend_isal;
    }
#endif
    return &adf_backend_zlib;
}

static const adf_codec_t gzip_codec = { gzip_pick };

const adf_coding_t adf_coding_gzip = {
    .id = ADF_GZIP, .token = "gzip", .alias = "x-gzip", .ext = ".gz",
    .etag_suffix = "-ad-gzip", .level_word = "level",
    .min_level = 1, .max_level = 9,             /* zlib's levels */
    .default_min = 1, .default_max = 9,
    .strongest = 9,
    .rank = 3,          /* every client has it: the others first */
    .cache_rank = 2,
    .pads = 1,          /* the header's FEXTRA field */
    .whole = 1,         /* libdeflate */
    .codec = &gzip_codec
};
