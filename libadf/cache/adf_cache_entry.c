/* The compressed cache's file names, trailers and LRU index; see
 * adf_cache_entry.h for the format. */
#include "adf_cache_entry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define TEMP_SEP ".tmp."
#define TRAILER_VERSION 4
/* A dictionary: a source's own bytes, named from their SHA-256. */
#define DICT_EXT ".dict"
#define DELTA_EXT ".dcz"   /* a coding made against a dictionary */
#define IDENTITY_TOKEN "identity"
static const char magic[8] = { 'A', 'D', 'F', 'c', 'a', 'c', 'h', 'e' };

static adf_ts_t ts_usec(adf_ts_t t)
{
    t.nsec -= t.nsec % 1000;
    return t;
}

void adf_cache_key_usec(adf_ident_t *key)
{
    key->mtime = ts_usec(key->mtime);
    key->ctime = ts_usec(key->ctime);
}

/* splitmix64's finaliser: every input bit moves every output bit. */
static apr_uint64_t mix(apr_uint64_t h, apr_uint64_t v)
{
    h ^= v + APR_UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
    h ^= h >> 30;
    h *= APR_UINT64_C(0xbf58476d1ce4e5b9);
    h ^= h >> 27;
    h *= APR_UINT64_C(0x94d049bb133111eb);
    return h ^ (h >> 31);
}

apr_uint64_t adf_cache_key_hash(const adf_ident_t *key)
{
    adf_ident_t k = *key;
    apr_uint64_t h = 0;

    adf_cache_key_usec(&k);
    h = mix(h, k.dev);
    h = mix(h, k.ino);
    h = mix(h, (apr_uint64_t)k.size);
    h = mix(h, (apr_uint64_t)k.mtime.sec);
    h = mix(h, (apr_uint64_t)k.mtime.nsec);
    h = mix(h, (apr_uint64_t)k.ctime.sec);
    return mix(h, (apr_uint64_t)k.ctime.nsec);
}

void adf_cache_entry_name(char *buf, apr_uint64_t hash, adf_coding_e c)
{
    const adf_coding_t *d = adf_coding(c);

    snprintf(buf, ADF_CACHE_NAME_MAX, "%016" APR_UINT64_T_HEX_FMT "%s",
             hash, c == ADF_IDENTITY ? DICT_EXT : d && d->needs_dict ? DELTA_EXT
             : d && d->ext ? d->ext : ".x");
}

static apr_uint64_t mix_string(apr_uint64_t h, const char *s)
{
    while (*s) {
        h = mix(h, (unsigned char)*s++);
    }
    return mix(h, 0);   /* where it ends: "ab" "c" is not "a" "bc" */
}

apr_uint64_t adf_cache_dict_hash(const unsigned char *sha, const char *host,
                                 const char *pattern)
{
    apr_uint64_t h = 0;
    int i;

    for (i = 0; i < 8; i++) {
        h = h << 8 | sha[i];
    }
    return mix_string(mix_string(h, host), pattern);
}

apr_uint64_t adf_cache_version_key(apr_uint64_t entry, const char *host,
                                   int dir)
{
    apr_uint64_t h = mix_string(mix(entry, (apr_uint64_t)dir), host);

    return h ? h : 1;
}

void adf_cache_temp_name(char *buf, const char *name,
                         const adf_cache_writer_t *w)
{
    snprintf(buf, ADF_CACHE_NAME_MAX, "%s" TEMP_SEP "%016" APR_UINT64_T_HEX_FMT
             ".%ld", name, w->node, w->pid);
}

static int hex_digit(char ch)
{
    return (ch >= '0' && ch <= '9') ? ch - '0'
         : (ch >= 'a' && ch <= 'f') ? ch - 'a' + 10 : -1;
}

/* "<pid>" at p, the whole rest: a process id (1 to 9 digits, no leading
 * zero) or -1. */
static long pid_at(const char *p)
{
    apr_size_t n = strspn(p, "0123456789");

    return *p >= '1' && *p <= '9' && n == strlen(p) && n <= 9
           ? strtol(p, NULL, 10) : -1;
}

adf_cache_file_e adf_cache_file_kind(const char *name, apr_uint64_t *hash,
                                     adf_coding_e *c, adf_cache_writer_t *w)
{
    const adf_coding_t *d = NULL;
    const char *rest = name + 16, *tmp;
    apr_uint64_t h = 0;
    apr_size_t len;
    int i, v;

    for (i = 0; i < 16; i++) {
        if ((v = hex_digit(name[i])) < 0) {
            return ADF_CACHE_FILE_OTHER;
        }
        h = h << 4 | (apr_uint64_t)v;
    }
    tmp = strstr(rest, TEMP_SEP);
    len = tmp ? (apr_size_t)(tmp - rest) : strlen(rest);
    for (i = ADF_IDENTITY + 1; i < ADF_NCODINGS && !d; i++) {
        d = adf_coding((adf_coding_e)i);
        if (d && (!d->ext || strlen(d->ext) != len
                  || memcmp(d->ext, rest, len))) {
            d = NULL;
        }
    }
    if (d) {
        *c = d->id;
    }
    else if (len == strlen(DELTA_EXT) && !memcmp(rest, DELTA_EXT, len)
             && adf_coding(ADF_DCZ)) {
        *c = ADF_DCZ;
    }
    else if (len == strlen(DICT_EXT) && !memcmp(rest, DICT_EXT, len)) {
        *c = ADF_IDENTITY;
    }
    else {
        return ADF_CACHE_FILE_OTHER;
    }
    *hash = h;
    if (!tmp) {
        return ADF_CACHE_FILE_ENTRY;
    }
    tmp += strlen(TEMP_SEP);
    w->node = 0;
    if (strspn(tmp, "0123456789abcdef") == 16 && tmp[16] == '.') {
        for (i = 0; i < 16; i++) {
            w->node = w->node << 4 | (apr_uint64_t)hex_digit(tmp[i]);
        }
        if (!w->node) {
            return ADF_CACHE_FILE_OTHER;
        }
        tmp += 17;
    }
    return (w->pid = pid_at(tmp)) > 0 ? ADF_CACHE_FILE_TEMP
                                      : ADF_CACHE_FILE_OTHER;
}

apr_uint32_t adf_cache_crc(apr_uint32_t crc, const void *data,
                           apr_size_t len)
{
    const Bytef *p = data;

    /* zlib takes an unsigned int length */
    while (len) {
        uInt n = len > 0x40000000u ? 0x40000000u : (uInt)len;

        crc = (apr_uint32_t)crc32(crc, p, n);
        p += n;
        len -= n;
    }
    return crc;
}

/* Little-endian fields, whatever the machine. */
static void put32(unsigned char *p, apr_uint32_t v)
{
    int i;

    for (i = 0; i < 4; i++) {
        p[i] = (unsigned char)(v >> (8 * i));
    }
}

static void put64(unsigned char *p, apr_uint64_t v)
{
    put32(p, (apr_uint32_t)v);
    put32(p + 4, (apr_uint32_t)(v >> 32));
}

static apr_uint32_t get32(const unsigned char *p)
{
    return (apr_uint32_t)p[0] | (apr_uint32_t)p[1] << 8
           | (apr_uint32_t)p[2] << 16 | (apr_uint32_t)p[3] << 24;
}

static apr_uint64_t get64(const unsigned char *p)
{
    return (apr_uint64_t)get32(p) | (apr_uint64_t)get32(p + 4) << 32;
}

/* ---- a dictionary's record of where it was served ----------------------- */

apr_size_t adf_cache_origin_format(unsigned char *buf,
                                   const adf_cache_origin_t *o)
{
    const char *s[3];
    apr_size_t n = 0, k;
    int i;

    s[0] = o->host;
    s[1] = o->uri;
    s[2] = o->path;
    for (i = 0; i < 3; i++) {
        k = strlen(s[i]) + 1;
        if (n + k + 8 > ADF_CACHE_ORIGIN_MAX) {
            return 0;
        }
        memcpy(buf + n, s[i], k);
        n += k;
    }
    put32(buf + n, (apr_uint32_t)n);
    put32(buf + n + 4, adf_cache_crc(0, buf, n));
    return n + 8;
}

apr_size_t adf_cache_origin_parse(const unsigned char *buf, apr_size_t n,
                                  adf_cache_origin_t *o)
{
    const char *s, *at[3];
    apr_size_t len, k;
    int i = 0;

    if (n < 8) {
        return 0;
    }
    len = get32(buf + n - 8);
    if (len < 3 || len > n - 8 || len + 8 > ADF_CACHE_ORIGIN_MAX) {
        return 0;
    }
    s = (const char *)buf + n - 8 - len;
    if (get32(buf + n - 4) != adf_cache_crc(0, s, len) || s[len - 1]) {
        return 0;
    }
    /* exactly three strings, each ended by its NUL */
    for (k = 0; k < len; k += strlen(s + k) + 1) {
        if (i == 3) {
            return 0;
        }
        at[i++] = s + k;
    }
    if (i != 3) {
        return 0;
    }
    o->host = at[0];
    o->uri = at[1];
    o->path = at[2];
    return len + 8;
}

apr_off_t adf_cache_origin_read(int fd, apr_uint64_t length,
                                unsigned char *buf, adf_cache_origin_t *o)
{
    apr_size_t n = length < ADF_CACHE_ORIGIN_MAX ? (apr_size_t)length
                                                 : ADF_CACHE_ORIGIN_MAX;
    apr_size_t got = 0, rec;
    ssize_t k;

    while (got < n) {
        k = pread(fd, buf + got, n - got,
                  (off_t)(length - n + got));
        if (k <= 0 && !(k < 0 && errno == EINTR)) {
            return -1;
        }
        got += k > 0 ? (apr_size_t)k : 0;
    }
    if (!(rec = adf_cache_origin_parse(buf, n, o))) {
        return -1;
    }
    return (apr_off_t)(length - rec);
}

apr_uint64_t adf_cache_delta_hash(apr_uint64_t entry,
                                  const unsigned char *sha)
{
    return mix(mix(entry, 0x64656c7461ULL), sha[0] % ADF_CACHE_DELTAS);
}

int adf_cache_delta_dict(int fd, apr_uint64_t length, unsigned char *sha)
{
    const adf_coding_t *d = adf_coding(ADF_DCZ);
    unsigned char head[64];
    apr_size_t n = d ? d->dict_magic_len + ADF_DIGEST_LEN : 0, got = 0;
    ssize_t k;

    if (!d || length < n) {
        return -1;
    }
    while (got < n) {
        k = pread(fd, head + got, n - got, (off_t)got);
        if (k <= 0 && !(k < 0 && errno == EINTR)) {
            return -1;
        }
        got += k > 0 ? (apr_size_t)k : 0;
    }
    if (memcmp(head, d->dict_magic, d->dict_magic_len)) {
        return -1;
    }
    memcpy(sha, head + d->dict_magic_len, ADF_DIGEST_LEN);
    return 0;
}

/* Layout: version, the coding's token (NUL-padded; "identity" for a
 * dictionary), length, dev, ino, size, mtime s, mtime ns, ctime ns,
 * ctime s, CRC of the bytes, their SHA-256, the source's SHA-256, CRC of
 * bytes 0-135, magic. */
#define TOKEN_AT 4
#define TOKEN_LEN 8
#define DIGEST_AT 72
#define SOURCE_AT 104
#define CRC_AT 136
#define MAGIC_AT 140

/* Earlier releases' trailers, recognised to be replaced: version 1 (80
 * bytes: a coding number where the token is now, no digest; its CRC of
 * bytes 0-67 at 68) and version 2 (116 bytes: no source digest; its CRC
 * of bytes 0-103 at 104).  Version 3 is this layout, and its coded
 * entries are read as they are; its dictionaries lack the record of
 * where they were served (adf_cache_origin_t), and are an earlier
 * release's. */
#define V3 3
#define V1_LEN 80
#define V1_CRC_AT 68
#define V2_LEN 116
#define V2_CRC_AT 104

void adf_cache_trailer_format(unsigned char *buf,
                              const adf_cache_trailer_t *t)
{
    const char *token = t->coding == ADF_IDENTITY
                        ? IDENTITY_TOKEN : adf_coding_name(t->coding);

    memset(buf, 0, ADF_CACHE_TRAILER);
    put32(buf, TRAILER_VERSION);
    if (token) {
        memcpy(buf + TOKEN_AT, token, strnlen(token, TOKEN_LEN));
    }
    put64(buf + 12, t->length);
    put64(buf + 20, t->key.dev);
    put64(buf + 28, t->key.ino);
    put64(buf + 36, (apr_uint64_t)t->key.size);
    put64(buf + 44, (apr_uint64_t)t->key.mtime.sec);
    put32(buf + 52, (apr_uint32_t)t->key.mtime.nsec);
    put32(buf + 56, (apr_uint32_t)t->key.ctime.nsec);
    put64(buf + 60, (apr_uint64_t)t->key.ctime.sec);
    put32(buf + 68, t->crc);
    memcpy(buf + DIGEST_AT, t->digest, ADF_DIGEST_LEN);
    memcpy(buf + SOURCE_AT, t->source, ADF_DIGEST_LEN);
    put32(buf + CRC_AT, adf_cache_crc(0, buf, CRC_AT));
    memcpy(buf + MAGIC_AT, magic, sizeof(magic));
}

/* Is the end of buf a whole version 1 or 2 trailer (an earlier
 * release's)? */
static int old_trailer(const unsigned char *buf, apr_off_t file_size)
{
    const unsigned char *v1 = buf + ADF_CACHE_TRAILER - V1_LEN;
    const unsigned char *v2 = buf + ADF_CACHE_TRAILER - V2_LEN;

    return (file_size >= V1_LEN && get32(v1) == 1
            && get32(v1 + V1_CRC_AT) == adf_cache_crc(0, v1, V1_CRC_AT))
           || (file_size >= V2_LEN && get32(v2) == 2
               && get32(v2 + V2_CRC_AT) == adf_cache_crc(0, v2, V2_CRC_AT));
}

int adf_cache_trailer_parse(const unsigned char *buf, apr_off_t file_size,
                            adf_cache_trailer_t *t)
{
    const adf_coding_t *d;
    apr_size_t len;
    int identity;

    if (memcmp(buf + MAGIC_AT, magic, sizeof(magic))) {
        return ADF_CACHE_TRAILER_BAD;
    }
    if (file_size < ADF_CACHE_TRAILER
        || (get32(buf) != TRAILER_VERSION && get32(buf) != V3)
        || get32(buf + CRC_AT) != adf_cache_crc(0, buf, CRC_AT)) {
        return old_trailer(buf, file_size) ? ADF_CACHE_TRAILER_OLD
                                           : ADF_CACHE_TRAILER_BAD;
    }
    t->length = get64(buf + 12);
    len = strnlen((const char *)buf + TOKEN_AT, TOKEN_LEN);
    d = adf_coding_by_token((const char *)buf + TOKEN_AT, len);
    identity = len == strlen(IDENTITY_TOKEN)
               && !memcmp(buf + TOKEN_AT, IDENTITY_TOKEN, len);
    if ((!d && !identity)
        || t->length != (apr_uint64_t)(file_size - ADF_CACHE_TRAILER)) {
        return ADF_CACHE_TRAILER_BAD;
    }
    if (identity && get32(buf) == V3) {
        return ADF_CACHE_TRAILER_OLD;
    }
    t->coding = d ? d->id : ADF_IDENTITY;
    t->key.dev = get64(buf + 20);
    t->key.ino = get64(buf + 28);
    t->key.size = (apr_int64_t)get64(buf + 36);
    t->key.mtime.sec = (apr_int64_t)get64(buf + 44);
    t->key.mtime.nsec = (long)get32(buf + 52);
    t->key.ctime.nsec = (long)get32(buf + 56);
    t->key.ctime.sec = (apr_int64_t)get64(buf + 60);
    t->crc = get32(buf + 68);
    memcpy(t->digest, buf + DIGEST_AT, ADF_DIGEST_LEN);
    memcpy(t->source, buf + SOURCE_AT, ADF_DIGEST_LEN);
    return ADF_CACHE_TRAILER_OK;
}

int adf_cache_trailer_read(int fd, apr_off_t file_size,
                           adf_cache_trailer_t *t)
{
    unsigned char buf[ADF_CACHE_TRAILER] = { 0 };
    apr_size_t n = file_size < ADF_CACHE_TRAILER ? (apr_size_t)file_size
                                                 : ADF_CACHE_TRAILER;
    apr_size_t got = 0;
    ssize_t k;

    if (file_size < 0) {
        return ADF_CACHE_TRAILER_BAD;
    }
    while (got < n) {
        k = pread(fd, buf + ADF_CACHE_TRAILER - n + got, n - got,
                  (off_t)(file_size - (apr_off_t)n + (apr_off_t)got));
        if (k <= 0 && !(k < 0 && errno == EINTR)) {
            return ADF_CACHE_TRAILER_BAD;
        }
        got += k > 0 ? (apr_size_t)k : 0;
    }
    return adf_cache_trailer_parse(buf, file_size, t);
}

int adf_cache_trailer_matches(const adf_cache_trailer_t *t,
                              const adf_ident_t *f, adf_coding_e c)
{
    adf_ident_t a = t->key, b = *f;

    adf_cache_key_usec(&a);
    adf_cache_key_usec(&b);
    return t->coding == c && adf_ident_same(&a, &b);
}

/* ---- the index ---------------------------------------------------------- */

/* Where hash is, or would be inserted. */
static int slot(const adf_cache_index_t *x, apr_uint64_t hash)
{
    int lo = 0, hi = x->n;

    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;

        if (x->rec[mid].hash < hash) {
            lo = mid + 1;
        }
        else {
            hi = mid;
        }
    }
    return lo;
}

adf_cache_rec_t *adf_cache_index_find(const adf_cache_index_t *x,
                                      apr_uint64_t hash)
{
    int i = slot(x, hash);

    return i < x->n && x->rec[i].hash == hash ? &x->rec[i] : NULL;
}

int adf_cache_index_add(adf_cache_index_t *x, apr_uint64_t hash,
                        adf_coding_e c, apr_off_t bytes, apr_time_t used)
{
    int i = slot(x, hash);
    adf_cache_rec_t *r;

    if (i == x->n || x->rec[i].hash != hash) {
        if (x->n == x->cap) {
            int cap = x->cap ? 2 * x->cap : 64;
            adf_cache_rec_t *n = realloc(x->rec, (size_t)cap * sizeof(*n));

            if (!n) {
                return -1;
            }
            x->rec = n;
            x->cap = cap;
        }
        memmove(&x->rec[i + 1], &x->rec[i],
                (size_t)(x->n - i) * sizeof(x->rec[0]));
        x->n++;
        memset(&x->rec[i], 0, sizeof(x->rec[0]));
        x->rec[i].hash = hash;
    }
    r = &x->rec[i];
    r->bytes += bytes - r->file[c];
    x->bytes += bytes - r->file[c];
    r->file[c] = bytes;
    if (used > r->used) {
        r->used = used;
    }
    return 0;
}

apr_off_t adf_cache_index_remove(adf_cache_index_t *x, apr_uint64_t hash)
{
    int i = slot(x, hash);
    apr_off_t bytes;

    if (i == x->n || x->rec[i].hash != hash) {
        return 0;
    }
    bytes = x->rec[i].bytes;
    x->bytes -= bytes;
    memmove(&x->rec[i], &x->rec[i + 1],
            (size_t)(x->n - i - 1) * sizeof(x->rec[0]));
    x->n--;
    return bytes;
}

const adf_cache_rec_t *adf_cache_index_victim(const adf_cache_index_t *x,
                                              apr_off_t max,
                                              apr_uint64_t keep)
{
    const adf_cache_rec_t *lru = NULL, *kept = NULL;
    int i;

    if (x->bytes <= max) {
        return NULL;
    }
    for (i = 0; i < x->n; i++) {
        const adf_cache_rec_t *r = &x->rec[i];

        if (r->hash == keep) {
            kept = r;
        }
        else if (!lru || r->used < lru->used) {
            lru = r;
        }
    }
    if (lru) {
        return lru;
    }
    return kept && kept->bytes > max ? kept : NULL;
}

void adf_cache_index_free(adf_cache_index_t *x)
{
    free(x->rec);
    memset(x, 0, sizeof(*x));
}
