/* The stream life cycle every codec shares (adf_codec.h). */
#include "config.h"
#include "adf_codec_impl.h"

#include <string.h>
#include <strings.h>

#define ADF_DEFAULT_BUFSIZE 8000
/* zlib needs more than 6 bytes of room per call while flushing, or it
 * writes a new flush marker every call and never finishes. */
#define ADF_MIN_BUFSIZE 64

static apr_status_t stream_cleanup(void *data)
{
    adf_stream_t *s = data;

    if (s->state) {
        s->backend->free(s);
        s->state = NULL;
    }
    return APR_SUCCESS;
}

apr_status_t adf_stream_open(adf_stream_t **sp, apr_pool_t *p,
                             const adf_stream_opts_t *o, adf_sink_fn *sink,
                             void *baton)
{
    const adf_coding_t *d = o->coding;
    int level = o->level, flags = o->flags;
    apr_off_t size_hint = o->size_hint;
    apr_size_t bufsize = o->bufsize;
    adf_stream_t *s;
    apr_status_t rv;

    if (!d || !d->codec) {
        return APR_ENOTIMPL;
    }
    if (level < d->min_level || level > d->max_level
        || !d->needs_dict != !o->dict) {
        return APR_EINVAL;
    }
    s = apr_pcalloc(p, sizeof(*s));
    s->coding = d;
    s->pool = p;
    s->sink = sink;
    s->baton = baton;
    s->level = level;
    s->flags = flags;
    s->dict = o->dict;
    s->backend = d->codec->pick(level, size_hint, flags, &s->blevel);
    s->bufsize = !bufsize ? ADF_DEFAULT_BUFSIZE
               : bufsize < ADF_MIN_BUFSIZE ? ADF_MIN_BUFSIZE : bufsize;
    s->buf = apr_palloc(p, s->bufsize);
    /* Not knowing the length, hold back some input: the body may end
     * within it, and the backend can then fit its state to it. */
    s->staging = s->backend->fit && size_hint < 0
                 && !(flags & ADF_STREAM_WHOLE);
    if ((rv = s->backend->open(s, size_hint)) != APR_SUCCESS) {
        return rv;
    }
    apr_pool_cleanup_register(p, s, stream_cleanup, apr_pool_cleanup_null);
    *sp = s;
    return APR_SUCCESS;
}

/* Append to the held-back input: the buffer grows by doubling, in the
 * stream's pool, up to ADF_STAGE_MAX (the caller checked it fits). */
static void stage_append(adf_stream_t *s, const char *data, apr_size_t len)
{
    if (s->staged + len > s->stage_cap) {
        apr_size_t cap = s->stage_cap ? s->stage_cap : 4096;
        char *b;

        while (cap < s->staged + len) {
            cap *= 2;
        }
        if (cap > ADF_STAGE_MAX) {
            cap = ADF_STAGE_MAX;
        }
        b = apr_palloc(s->pool, cap);
        if (s->staged) {
            memcpy(b, s->stage, s->staged);
        }
        s->stage = b;
        s->stage_cap = cap;
    }
    memcpy(s->stage + s->staged, data, len);
    s->staged += len;
}

/* A write while input is held back: more is held back, or the end came
 * (the whole length is known: the backend is fitted to it first), or a
 * flush or more than ADF_STAGE_MAX: the held-back input goes first, for a
 * length that stays unknown. */
static apr_status_t stage_write(adf_stream_t *s, const char *data,
                                apr_size_t len, adf_op_e op)
{
    int fits = len <= ADF_STAGE_MAX - s->staged;
    apr_status_t rv;

    if (op == ADF_OP_WRITE && fits) {
        if (len) {
            stage_append(s, data, len);
        }
        return APR_SUCCESS;
    }
    s->staging = 0;
    if (op == ADF_OP_FINISH) {
        if ((rv = s->backend->fit(s, s->staged + len)) != APR_SUCCESS) {
            return rv;
        }
        if (!s->staged) {
            return s->backend->write(s, data, len, op);
        }
        if (fits) {
            /* one write: libraries size their buffers to a first write
             * that ends the input */
            if (len) {
                stage_append(s, data, len);
            }
            return s->backend->write(s, s->stage, s->staged, op);
        }
    }
    if (s->staged && (rv = s->backend->write(s, s->stage, s->staged,
                                             ADF_OP_WRITE)) != APR_SUCCESS) {
        return rv;
    }
    return s->backend->write(s, data, len, op);
}

apr_status_t adf_stream_write(adf_stream_t *s, const char *data,
                              apr_size_t len, adf_op_e op)
{
    apr_status_t rv;

    if (s->finished) {
        return len ? APR_EOF : APR_SUCCESS;
    }
    /* A body made against a dictionary starts by naming it (RFC 9842,
     * 4); written with the first output, so that opening emits nothing. */
    if (s->dict && !s->bytes_out) {
        const adf_coding_t *d = s->coding;

        if ((rv = adf_stream_emit(s, (const unsigned char *)d->dict_magic,
                                  d->dict_magic_len)) != APR_SUCCESS
            || (rv = adf_stream_emit(s, s->dict->hash,
                                     ADF_DICT_HASH_LEN)) != APR_SUCCESS) {
            return rv;
        }
    }
    s->bytes_in += len;
    if (op == ADF_OP_FINISH) {
        s->finished = 1;
    }
    if ((s->flags & ADF_STREAM_WHOLE) && op != ADF_OP_FINISH) {
        return APR_EINVAL;      /* promised the whole body at once */
    }
    if (s->staging) {
        return stage_write(s, data, len, op);
    }
    return s->backend->write(s, data, len, op);
}

apr_status_t adf_stream_pad(adf_stream_t *s, apr_size_t n)
{
    if (!s->backend->pad) {
        return APR_ENOTIMPL;
    }
    if (s->bytes_in || s->bytes_out || s->finished) {
        return APR_EINVAL;
    }
    return s->backend->pad(s, n);
}

void adf_stream_close(adf_stream_t *s)
{
    apr_pool_cleanup_run(s->pool, s, stream_cleanup);
}

apr_status_t adf_stream_emit(adf_stream_t *s, const unsigned char *data,
                             apr_size_t n)
{
    while (n) {
        apr_size_t k = n < s->bufsize ? n : s->bufsize;
        apr_status_t rv;

        s->bytes_out += k;
        if ((rv = s->sink(s->baton, (const char *)data, k)) != APR_SUCCESS) {
            return rv;
        }
        data += k;
        n -= k;
    }
    return APR_SUCCESS;
}

apr_status_t adf_stream_pump(adf_stream_t *s, adf_step_fn *step)
{
    apr_status_t rv;
    apr_size_t produced;
    int done;

    do {
        if ((rv = step(s, &produced, &done)) != APR_SUCCESS
            || (rv = adf_stream_emit(s, s->buf, produced)) != APR_SUCCESS) {
            return rv;
        }
    } while (!done);
    return APR_SUCCESS;
}

apr_off_t adf_stream_bytes_in(const adf_stream_t *s)
{
    return s->bytes_in;
}

apr_off_t adf_stream_bytes_out(const adf_stream_t *s)
{
    return s->bytes_out;
}

adf_coding_e adf_stream_coding(const adf_stream_t *s)
{
    return s->coding->id;
}

int adf_stream_level(const adf_stream_t *s)
{
    return s->level;
}

const char *adf_stream_backend(const adf_stream_t *s)
{
    return s->backend->name;
}
