/* Bytes and CPU of coding through libadf against a dictionary (dcz, RFC
 * 9842), or of the same coding without one, the way the module's threads
 * do it: a stream per response, coder state reused between responses.
 * bench/dictionary runs it; it checks every body it reports.
 *
 *   make bench/dcz
 *   bench/dcz [-d DICT] [-n RESPONSES] [-s] [-o DIR] CODING LEVEL FILE...
 *
 * CODING: dcz (needs -d) or zstd, gzip, br (no -d).  Each FILE is coded
 * RESPONSES times (default 1) after one untimed pass over them all (the
 * idle coder states a server holds); -s streams each in 1,800-byte pieces
 * of unknown length (a dynamic page), else it goes whole with its length
 * (a static file, a cache entry).  Then each is coded once more, decoded
 * by libadfdec (dcz: with the dictionary, whose SHA-256 the header must
 * name) and compared byte for byte; with -o DIR the body is written to
 * DIR/BASENAME.CODING.  Prints a line per file ("FILE BYTES") and one of
 * CPU per response (process CPU time, and user, system and minor faults
 * from getrusage), over all files' responses. */
#include "config.h"
#include "adf_codec.h"
#include "adf_decode.h"
#include "adf_digest.h"

#include <apr_general.h>
#include <apr_strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define PIECE 1800

typedef struct {
    const char *path;
    unsigned char *data;
    size_t len;
} file_t;

typedef struct {
    char *data;
    size_t len, cap;
} buf_t;

static apr_status_t count(void *baton, const char *data, apr_size_t len)
{
    *(size_t *)baton += len;
    return APR_SUCCESS;
}

static apr_status_t keep(void *baton, const char *data, apr_size_t len)
{
    buf_t *b = baton;

    if (b->len + len > b->cap) {
        b->cap = (b->len + len) * 2;
        if (!(b->data = realloc(b->data, b->cap))) {
            return APR_ENOMEM;
        }
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    return APR_SUCCESS;
}

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *d = NULL;
    long n;

    if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0
        || fseek(f, 0, SEEK_SET) || !(d = malloc(n ? n : 1))
        || fread(d, 1, n, f) != (size_t)n) {
        fprintf(stderr, "dcz: cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    *len = (size_t)n;
    return d;
}

static double cpu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* One response: the stream the module would open for it. */
static void code(apr_pool_t *p, const adf_stream_opts_t *base,
                 const file_t *f, int streamed, adf_sink_fn *sink,
                 void *baton)
{
    adf_stream_opts_t o = *base;
    adf_stream_t *s;
    size_t off = 0;
    apr_status_t rv;

    o.size_hint = streamed ? -1 : (apr_off_t)f->len;
    o.flags = streamed ? 0 : ADF_STREAM_WHOLE;
    if ((rv = adf_stream_open(&s, p, &o, sink, baton)) != APR_SUCCESS) {
        fprintf(stderr, "dcz: cannot open the stream (%d)\n", rv);
        exit(1);
    }
    if (!streamed) {
        rv = adf_stream_write(s, (const char *)f->data, f->len,
                              ADF_OP_FINISH);
    }
    else {
        while (off < f->len && rv == APR_SUCCESS) {
            size_t k = f->len - off < PIECE ? f->len - off : PIECE;

            rv = adf_stream_write(s, (const char *)f->data + off, k,
                                  ADF_OP_WRITE);
            off += k;
        }
        if (rv == APR_SUCCESS) {
            rv = adf_stream_write(s, NULL, 0, ADF_OP_FINISH);
        }
    }
    if (rv != APR_SUCCESS) {
        fprintf(stderr, "dcz: coding %s failed (%d)\n", f->path, rv);
        exit(1);
    }
    adf_stream_close(s);
}

int main(int argc, char **argv)
{
    const char *dict_path = NULL, *outdir = NULL;
    adf_dict_t dict;
    adf_digest_t dg;
    adf_stream_opts_t o;
    const adf_coding_t *c;
    struct rusage r0, r1;
    apr_pool_t *p;
    file_t *files;
    double t0, t1;
    long responses = 1, i;
    int streamed = 0, nfiles, opt, k;

    while ((opt = getopt(argc, argv, "d:n:so:")) != -1) {
        switch (opt) {
        case 'd': dict_path = optarg; break;
        case 'n': responses = atol(optarg); break;
        case 's': streamed = 1; break;
        case 'o': outdir = optarg; break;
        default: goto usage;
        }
    }
    if (argc - optind < 3 || responses < 1
        || !(c = adf_coding_by_token(argv[optind], strlen(argv[optind])))
        || !c->needs_dict != !dict_path) {
        goto usage;
    }
    memset(&o, 0, sizeof(o));
    o.coding = adf_coding(c->id);
    o.level = atoi(argv[optind + 1]);
    if (dict_path) {
        memset(&dict, 0, sizeof(dict));
        dict.data = slurp(dict_path, &dict.len);
        if (adf_digest_init(&dg)) {
            return 1;
        }
        adf_digest_update(&dg, dict.data, dict.len);
        if (adf_digest_final(&dg, dict.hash)) {
            return 1;
        }
        o.dict = &dict;
    }
    nfiles = argc - optind - 2;
    files = calloc(nfiles, sizeof(*files));
    for (k = 0; k < nfiles; k++) {
        files[k].path = argv[optind + 2 + k];
        files[k].data = slurp(files[k].path, &files[k].len);
    }
    apr_initialize();
    apr_pool_create_unmanaged(&p);

    /* warm: the coder states an idle server keeps for the next response */
    for (k = 0; k < nfiles; k++) {
        size_t n = 0;

        code(p, &o, &files[k], streamed, count, &n);
        apr_pool_clear(p);
    }
    getrusage(RUSAGE_SELF, &r0);
    t0 = cpu_now();
    for (i = 0; i < responses; i++) {
        for (k = 0; k < nfiles; k++) {
            size_t n = 0;

            code(p, &o, &files[k], streamed, count, &n);
            apr_pool_clear(p);
        }
    }
    t1 = cpu_now();
    getrusage(RUSAGE_SELF, &r1);

    for (k = 0; k < nfiles; k++) {
        const file_t *f = &files[k];
        buf_t b = { NULL, 0, 0 };
        unsigned char *back = malloc(f->len + 1);
        long got;

        code(p, &o, f, streamed, keep, &b);
        apr_pool_clear(p);
        got = dict_path
              ? adf_decode_all_dict(c->id, dict.data, dict.len, dict.hash,
                                    (unsigned char *)b.data, b.len, back,
                                    f->len + 1, 1)
              : adf_decode_all(c->id, (unsigned char *)b.data, b.len, back,
                               f->len + 1, 1);
        if (got != (long)f->len || memcmp(back, f->data, f->len)) {
            fprintf(stderr, "dcz: %s does not decode back (%ld of %zu "
                    "bytes)\n", f->path, got, f->len);
            return 1;
        }
        if (outdir) {
            const char *base = strrchr(f->path, '/');
            char *out = apr_psprintf(p, "%s/%s.%s", outdir,
                                     base ? base + 1 : f->path, c->token);
            FILE *w = fopen(out, "wb");

            if (!w || fwrite(b.data, 1, b.len, w) != b.len || fclose(w)) {
                fprintf(stderr, "dcz: cannot write %s\n", out);
                return 1;
            }
        }
        printf("%s %zu\n", f->path, b.len);
        free(back);
        free(b.data);
    }
    printf("cpu_us %.2f user_us %.2f sys_us %.2f minflt %.1f responses "
           "%ld\n", (t1 - t0) / (responses * nfiles),
           ((r1.ru_utime.tv_sec - r0.ru_utime.tv_sec) * 1e6
            + (r1.ru_utime.tv_usec - r0.ru_utime.tv_usec))
           / (responses * nfiles),
           ((r1.ru_stime.tv_sec - r0.ru_stime.tv_sec) * 1e6
            + (r1.ru_stime.tv_usec - r0.ru_stime.tv_usec))
           / (responses * nfiles),
           (double)(r1.ru_minflt - r0.ru_minflt) / (responses * nfiles),
           responses * nfiles);
    apr_pool_destroy(p);
    return 0;

usage:
    fprintf(stderr, "usage: %s [-d DICT] [-n RESPONSES] [-s] [-o DIR] "
            "dcz|zstd|gzip|br LEVEL FILE...\n", argv[0]);
    return 2;
}
