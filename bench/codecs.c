/* CPU, page faults and memory of coding through libadf alone, the way
 * the module's threads do it: N responses by T threads, C of them at
 * once (mpm_event: 25 threads per child; a few responses in flight).
 * Kernel time and page faults count here, which callgrind's instruction
 * counts (bench/instructions) leave out.
 *
 *   make bench/codecs
 *   bench/codecs CODING LEVEL WHOLE BYTES THREADS AT_ONCE RESPONSES FILE
 *
 * CODING: gzip, br or zstd; WHOLE 1: the body in one call with its length
 * (a static file), 0: unknown length, in 1,800-byte pieces (a streamed
 * page); BYTES: the first BYTES of FILE.  Prints CPU time (user, system)
 * and minor faults per response and the process's RSS at the end.  To
 * compare two builds, build this against each (docs/reliability.md). */
#include "config.h"
#include "adf_codec.h"

#include <apr_general.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static sem_t slots;
static int remaining;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static const char *in;
static size_t n;
static adf_coding_e coding;
static int level, whole;

static apr_status_t count(void *baton, const char *data, apr_size_t len)
{
    *(size_t *)baton += len;
    return APR_SUCCESS;
}

static void *respond(void *unused)
{
    apr_pool_t *p;

    apr_pool_create_unmanaged(&p);
    for (;;) {
        adf_stream_t *s;
        size_t out = 0, off = 0;
        int go;

        pthread_mutex_lock(&mu);
        go = remaining-- > 0;
        pthread_mutex_unlock(&mu);
        if (!go) {
            break;
        }
        sem_wait(&slots);
        adf_stream_opts_t o = { adf_coding(coding), level,
                                whole ? (apr_off_t)n : -1,
                                whole ? ADF_STREAM_WHOLE : 0 };

        if (adf_stream_open(&s, p, &o, count, &out) != APR_SUCCESS) {
            fprintf(stderr, "codecs: cannot open the stream\n");
            exit(1);
        }
        if (whole) {
            adf_stream_write(s, in, n, ADF_OP_FINISH);
        }
        else {
            while (off < n) {
                size_t k = n - off < 1800 ? n - off : 1800;
                adf_stream_write(s, in + off, k, ADF_OP_WRITE);
                off += k;
            }
            adf_stream_write(s, NULL, 0, ADF_OP_FINISH);
        }
        adf_stream_close(s);
        apr_pool_clear(p);
        sem_post(&slots);
    }
    apr_pool_destroy(p);
    return NULL;
}

int main(int argc, char **argv)
{
    pthread_t t[256];
    struct rusage ru;
    char line[256], *buf;
    long rss = 0;
    int threads, i, total;
    FILE *f;
    const adf_coding_t *d;

    if (argc != 9 || !(d = adf_coding_by_token(argv[1], strlen(argv[1])))) {
        fprintf(stderr, "usage: %s gzip|br|zstd LEVEL WHOLE BYTES THREADS "
                "AT_ONCE RESPONSES FILE\n", argv[0]);
        return 2;
    }
    coding = d->id;
    level = atoi(argv[2]);
    whole = atoi(argv[3]);
    n = (size_t)atol(argv[4]);
    threads = atoi(argv[5]);
    total = remaining = atoi(argv[7]);
    if (threads < 1 || threads > 256 || total < 1 || !(f = fopen(argv[8], "rb"))) {
        fprintf(stderr, "codecs: bad arguments\n");
        return 2;
    }
    buf = malloc(n ? n : 1);
    n = fread(buf, 1, n, f);
    fclose(f);
    in = buf;
    apr_initialize();
    sem_init(&slots, 0, (unsigned)atoi(argv[6]));
    for (i = 0; i < threads; i++) {
        pthread_create(&t[i], NULL, respond, NULL);
    }
    for (i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
    }
    getrusage(RUSAGE_SELF, &ru);
    if ((f = fopen("/proc/self/status", "r"))) {
        while (fgets(line, sizeof(line), f)) {
            if (!strncmp(line, "VmRSS:", 6)) {
                rss = atol(line + 6);
            }
        }
        fclose(f);
    }
    printf("%s %d %s %zu bytes: %.1f us user, %.1f us system, %.1f minor "
           "faults per response; RSS %ld kB\n", argv[1], level,
           whole ? "whole" : "streamed", n,
           (ru.ru_utime.tv_sec * 1e6 + ru.ru_utime.tv_usec) / total,
           (ru.ru_stime.tv_sec * 1e6 + ru.ru_stime.tv_usec) / total,
           (double)ru.ru_minflt / total, rss);
    return 0;
}
