/* adaptive-precompress: write .gz (zlib level 9) and .br (quality 11)
 * siblings for the compressible files of a document tree, for
 * AdaptiveDeflatePrecompressed.
 *
 * A sibling is rewritten only when it is missing or older than its file;
 * it is written to a temporary file in the same directory and renamed
 * over the old one, so httpd never serves a half-written sibling; it
 * carries its file's mtime; it is not kept when it would not be smaller.
 */
#include "config.h"
#include "adf_codec.h"

#include <apr_general.h>
#include <apr_strings.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const default_exts =
    "html,htm,xhtml,shtml,css,js,mjs,json,map,xml,rss,atom,svg,txt,csv,md,"
    "wasm,ttf,otf,eot,ico,webmanifest";

static struct {
    int dry_run, quiet, delete_orphans, tty;
    long min_length;
    char **exts;
    int nexts;
    adf_coding_e codings[ADF_MAX_PREFS];
    int ncodings;
} opt;

static struct {
    long files, written, uptodate, notsmaller, removed, errors, seen;
    long long in[ADF_NCODINGS], out[ADF_NCODINGS];
} sum;

static apr_pool_t *pool;
static const char *const ext_of[ADF_NCODINGS] = { NULL, ".gz", ".br" };
static const int level_of[ADF_NCODINGS] = { 0, 9, 11 };

static int has_ext(const char *path, const char *ext)
{
    size_t n = strlen(path), e = strlen(ext);
    return n > e && !strcmp(path + n - e, ext);
}

static int compressible(const char *path)
{
    const char *base = strrchr(path, '/'), *dot;
    int i;

    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    if (!dot || dot == base) {
        return 0;
    }
    for (i = 0; i < opt.nexts; i++) {
        if (!strcasecmp(dot + 1, opt.exts[i])) {
            return 1;
        }
    }
    return 0;
}

static apr_status_t to_fd(void *baton, const char *data, apr_size_t len)
{
    int fd = *(int *)baton;

    while (len) {
        ssize_t n = write(fd, data, len);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return APR_FROM_OS_ERROR(errno);
        }
        data += n;
        len -= (size_t)n;
    }
    return APR_SUCCESS;
}

static void progress(const char *path)
{
    if (opt.tty && !opt.quiet) {
        fprintf(stderr, "\r\033[K[%ld] %.70s", sum.seen, path);
    }
}

/* Compress path into its sibling for coding c. */
static void make_sibling(const char *path, const struct stat *st,
                         adf_coding_e c)
{
    char sib[4096], tmp[4096 + 16];
    struct stat sst;
    struct timespec times[2];
    apr_pool_t *p;
    adf_stream_t *s;
    char buf[65536];
    ssize_t n;
    int in, out;
    apr_status_t rv = APR_SUCCESS;

    if ((size_t)snprintf(sib, sizeof(sib), "%s%s", path, ext_of[c])
        >= sizeof(sib)) {
        fprintf(stderr, "adaptive-precompress: %s: name too long\n", path);
        sum.errors++;
        return;
    }
    if (lstat(sib, &sst) == 0 && S_ISREG(sst.st_mode)
        && sst.st_mtime >= st->st_mtime) {
        sum.uptodate++;
        return;
    }
    if (opt.dry_run) {
        printf("would write %s\n", sib);
        sum.written++;
        return;
    }
    snprintf(tmp, sizeof(tmp), "%s.tmp-XXXXXX", sib);
    if ((in = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        fprintf(stderr, "adaptive-precompress: %s: %s\n", path,
                strerror(errno));
        sum.errors++;
        return;
    }
    if ((out = mkstemp(tmp)) < 0) {
        fprintf(stderr, "adaptive-precompress: %s: %s\n", tmp,
                strerror(errno));
        close(in);
        sum.errors++;
        return;
    }
    apr_pool_create(&p, pool);
    rv = adf_stream_open(&s, p, c, level_of[c], st->st_size, 65536, to_fd,
                         &out);
    while (rv == APR_SUCCESS && (n = read(in, buf, sizeof(buf))) != 0) {
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            rv = APR_FROM_OS_ERROR(errno);
            break;
        }
        rv = adf_stream_write(s, buf, (apr_size_t)n, ADF_OP_WRITE);
    }
    if (rv == APR_SUCCESS) {
        rv = adf_stream_write(s, NULL, 0, ADF_OP_FINISH);
    }
    close(in);
    /* The sibling carries its file's mtime: fresh until the file changes. */
    times[0] = st->st_atim;
    times[1] = st->st_mtim;
    if (rv == APR_SUCCESS && (fchmod(out, st->st_mode & 0777) != 0
                              || futimens(out, times) != 0
                              || fsync(out) != 0)) {
        rv = APR_FROM_OS_ERROR(errno);
    }
    if (close(out) != 0 && rv == APR_SUCCESS) {
        rv = APR_FROM_OS_ERROR(errno);
    }
    if (rv != APR_SUCCESS) {
        char err[256];
        fprintf(stderr, "adaptive-precompress: %s: %s\n", sib,
                apr_strerror(rv, err, sizeof(err)));
        unlink(tmp);
        sum.errors++;
    }
    else if (adf_stream_bytes_out(s) >= adf_stream_bytes_in(s)) {
        /* Not smaller: no sibling (and none left from before). */
        unlink(tmp);
        unlink(sib);
        sum.notsmaller++;
    }
    else if (rename(tmp, sib) != 0) {
        fprintf(stderr, "adaptive-precompress: %s: %s\n", sib,
                strerror(errno));
        unlink(tmp);
        sum.errors++;
    }
    else {
        sum.written++;
        sum.in[c] += adf_stream_bytes_in(s);
        sum.out[c] += adf_stream_bytes_out(s);
    }
    apr_pool_destroy(p);
}

/* A .gz/.br whose file is gone (and would have been ours to write). */
static void check_orphan(const char *path)
{
    char base[4096];
    struct stat st;
    int c;

    for (c = ADF_GZIP; c < ADF_NCODINGS; c++) {
        size_t n = strlen(path), e = strlen(ext_of[c]);
        if (!has_ext(path, ext_of[c]) || n - e >= sizeof(base)) {
            continue;
        }
        memcpy(base, path, n - e);
        base[n - e] = '\0';
        if (compressible(base) && lstat(base, &st) != 0 && errno == ENOENT) {
            if (opt.dry_run) {
                printf("would remove %s\n", path);
            }
            else if (unlink(path) != 0) {
                fprintf(stderr, "adaptive-precompress: %s: %s\n", path,
                        strerror(errno));
                sum.errors++;
                return;
            }
            sum.removed++;
        }
    }
}

static int visit(const char *path, const struct stat *st, int type,
                 struct FTW *ftw)
{
    int i;

    if (type != FTW_F || !S_ISREG(st->st_mode)) {
        return 0;       /* directories, symlinks, FIFOs... */
    }
    if (strstr(path, ".tmp-")) {
        return 0;       /* our own temporary files */
    }
    if (has_ext(path, ".gz") || has_ext(path, ".br")) {
        if (opt.delete_orphans) {
            check_orphan(path);
        }
        return 0;
    }
    if (!compressible(path) || st->st_size < opt.min_length) {
        return 0;
    }
    sum.seen++;
    progress(path);
    sum.files++;
    for (i = 0; i < opt.ncodings; i++) {
        make_sibling(path, st, opt.codings[i]);
    }
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: adaptive-precompress [options] DIR...\n"
        "Write .gz (gzip -9) and .br (brotli -q 11) siblings of the\n"
        "compressible files under each DIR, for\n"
        "AdaptiveDeflatePrecompressed.\n"
        "  -d, --delete-orphans  remove .gz/.br siblings whose file is gone\n"
        "  -e, --extensions LIST comma-separated extensions (default:\n"
        "                        %s)\n"
        "  -m, --min-length N    skip files shorter than N bytes (256)\n"
        "  -c, --codings LIST    gzip,br (default: every coding built in)\n"
        "  -n, --dry-run         say what would be done\n"
        "  -q, --quiet           no progress, no summary\n"
        "  -h, --help\n", default_exts);
}

static char **split(const char *list, int *n)
{
    char *copy = apr_pstrdup(pool, list), *tok, *save = NULL;
    char **v = apr_pcalloc(pool, (strlen(list) + 1) * sizeof(char *));

    *n = 0;
    for (tok = apr_strtok(copy, ",", &save); tok;
         tok = apr_strtok(NULL, ",", &save)) {
        v[(*n)++] = tok;
    }
    return v;
}

static int finish(int rc)
{
    apr_pool_destroy(pool);
    apr_terminate();
    return rc;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "delete-orphans", no_argument, NULL, 'd' },
        { "extensions", required_argument, NULL, 'e' },
        { "min-length", required_argument, NULL, 'm' },
        { "codings", required_argument, NULL, 'c' },
        { "dry-run", no_argument, NULL, 'n' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    const char *codings = "gzip,br";
    int ch, i;
    char *end;

    apr_initialize();
    apr_pool_create(&pool, NULL);
    opt.min_length = 256;
    opt.exts = split(default_exts, &opt.nexts);
    while ((ch = getopt_long(argc, argv, "de:m:c:nqh", longopts, NULL))
           != -1) {
        switch (ch) {
        case 'd': opt.delete_orphans = 1; break;
        case 'e': opt.exts = split(optarg, &opt.nexts); break;
        case 'm':
            opt.min_length = strtol(optarg, &end, 10);
            if (*end || end == optarg || opt.min_length < 0) {
                fprintf(stderr, "adaptive-precompress: --min-length: '%s' "
                        "is not a number of bytes\n", optarg);
                return finish(2);
            }
            break;
        case 'c': codings = optarg; break;
        case 'n': opt.dry_run = 1; break;
        case 'q': opt.quiet = 1; break;
        case 'h': usage(stdout); return finish(0);
        default: usage(stderr); return finish(2);
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return finish(2);
    }
    {
        int n;
        char **v = split(codings, &n);
        for (i = 0; i < n; i++) {
            const adf_coding_t *d = adf_coding_by_token(v[i], strlen(v[i]));
            int c = d ? (int)d->id : -1;
            if (!d) {
                fprintf(stderr, "adaptive-precompress: unknown or "
                        "unavailable coding '%s'\n", v[i]);
                return finish(2);
            }
            if (opt.ncodings < ADF_MAX_PREFS) {
                opt.codings[opt.ncodings++] = (adf_coding_e)c;
            }
        }
    }
    opt.tty = isatty(2);
    for (i = optind; i < argc; i++) {
        if (nftw(argv[i], visit, 32, FTW_PHYS) != 0) {
            fprintf(stderr, "adaptive-precompress: %s: %s\n", argv[i],
                    strerror(errno));
            sum.errors++;
        }
    }
    if (opt.tty && !opt.quiet) {
        fprintf(stderr, "\r\033[K");
    }
    if (!opt.quiet) {
        printf("%ld files: %ld siblings written, %ld up to date, %ld not "
               "smaller (none kept), %ld orphans removed, %ld errors\n",
               sum.files, sum.written, sum.uptodate, sum.notsmaller,
               sum.removed, sum.errors);
        for (i = ADF_GZIP; i < ADF_NCODINGS; i++) {
            if (sum.in[i]) {
                printf("  %-4s %lld -> %lld bytes (%.1f%%)\n",
                       adf_coding_name((adf_coding_e)i), sum.in[i],
                       sum.out[i], 100.0 * sum.out[i] / sum.in[i]);
            }
        }
    }
    return finish(sum.errors ? 1 : 0);
}
