/* gzip through ISA-L's igzip (levels 1 and 3 here): a streaming encoder
 * many times cheaper than zlib for the same or better compression at the
 * low levels; igzip writes the gzip header and trailer itself. */
#include "config.h"
#include "adf_codec_impl.h"

#ifdef ADF_HAVE_ISAL
#include <isa-l/igzip_lib.h>

typedef struct {
    struct isal_zstream z;
    int finish;         /* the write in progress ends the stream */
} isal_t;

static apr_status_t isal_open(adf_stream_t *s, apr_off_t hint)
{
    isal_t *st = apr_pcalloc(s->pool, sizeof(*st));
    /* A small known input needs fewer tokens buffered per block. */
    int small = hint >= 0 && hint <= 64 * 1024;
    apr_size_t lvlbuf = s->blevel == 1
                        ? (small ? ISAL_DEF_LVL1_SMALL : ISAL_DEF_LVL1_LARGE)
                        : (small ? ISAL_DEF_LVL3_SMALL : ISAL_DEF_LVL3_LARGE);

    isal_deflate_init(&st->z);
    st->z.level = (uint32_t)s->blevel;
    st->z.level_buf = apr_palloc(s->pool, lvlbuf);
    st->z.level_buf_size = (uint32_t)lvlbuf;
    st->z.gzip_flag = IGZIP_GZIP;
    s->state = st;
    return st->z.level_buf ? APR_SUCCESS : APR_ENOMEM;
}

static apr_status_t isal_step(adf_stream_t *s, apr_size_t *produced,
                              int *done)
{
    isal_t *st = s->state;
    struct isal_zstream *z = &st->z;

    z->next_out = s->buf;
    z->avail_out = (uint32_t)s->bufsize;
    if (isal_deflate(z) != COMP_OK) {
        return APR_EGENERAL;
    }
    *produced = s->bufsize - z->avail_out;
    *done = st->finish ? z->internal_state.state == ZSTATE_END
                       : z->avail_in == 0 && z->avail_out != 0;
    return APR_SUCCESS;
}

static apr_status_t isal_write(adf_stream_t *s, const char *data,
                               apr_size_t len, adf_op_e op)
{
    isal_t *st = s->state;

    st->finish = op == ADF_OP_FINISH;
    st->z.flush = op == ADF_OP_WRITE ? NO_FLUSH : SYNC_FLUSH;
    st->z.end_of_stream = (uint16_t)st->finish;
    st->z.next_in = (uint8_t *)data;
    st->z.avail_in = (uint32_t)len;
    return adf_stream_pump(s, isal_step);
}

static void isal_free(adf_stream_t *s)
{
    /* all of it lives in the stream's pool */
}

static const adf_prior_t isal_prior[] = {
    { 0.56f, 0.1762f }, /* 0 */
    { 0.64f, 0.1632f }, /* 1 */
    { 0.67f, 0.1618f }, /* 2 */
    { 1.84f, 0.1543f }, /* 3 */
};

const adf_backend_t adf_backend_isal = {
    "isal", isal_prior, 0, 3,
    isal_open, isal_write, isal_free, NULL
};
#endif /* ADF_HAVE_ISAL */
