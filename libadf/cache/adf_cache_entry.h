/* The compressed cache's files and its LRU bookkeeping.  Pure: no httpd.
 *
 * An entry holds one source version (a key: adf_ident_t) in one or more
 * codings, one file per coding, named from the key: "<16 hex digits><ext>"
 * ("3f0c9a1b2d4e5f60.br"), the digits a hash of the device, inode, size,
 * mtime and ctime, timestamps in microseconds: the precision a request's
 * stat has.  Any change to the source (an edit, even within the same
 * second; a rollback with cp -p or touch -d; a chmod) moves its ctime and
 * so its key: an old entry is never found for a new version.
 *
 * Only a settled version is cached (adf_ident_settled): one read before
 * the filesystem's clock has moved past its ctime could hold bytes that a
 * second write within the same timestamp tick replaces, identity
 * unchanged.
 *
 * A file is the coded bytes followed by a trailer of ADF_CACHE_TRAILER
 * bytes: the coding's token, the coded length, a CRC-32 and the SHA-256 of
 * the coded bytes (their ETag: no two bodies share one), the SHA-256 of
 * the source's bytes (the name of the source as a dictionary), the
 * source's identity (nanoseconds), a CRC of the trailer itself and a
 * magic number at the very end.
 *
 * A dictionary (RFC 9842: a version of a static file that was advertised
 * with Use-As-Dictionary) is the source's own bytes, then the record of
 * where they were served (adf_cache_origin_t), then a trailer of coding
 * identity whose length, CRC and digest are those of both; it is named
 * "<16 hex digits>.dict" from its SHA-256, its virtual host and the
 * pattern of its file's path (adf_cache_dict_hash): found by the hash a
 * client sends for a later version of that file, and kept when its
 * source changes (eviction treats it as any entry).  A reader checks
 * that the file ends in a trailer whose length fits the file's size and
 * whose key is the source it has (a truncated or appended file fails),
 * and the CRC of the bytes the first time it serves the file; the
 * default handler then sends the coded bytes only (the request's finfo
 * says their length).
 *
 * A delta (a source coded against a dictionary a client holds: dcz, RFC
 * 9842) is an entry of coding dcz like any other, its trailer the
 * source's; its bytes start with the dcz header, which names the
 * dictionary's SHA-256.  It is named "<16 hex digits>.dcz" from the
 * source's entry hash and one of ADF_CACHE_DELTAS slots the dictionary's
 * hash picks (adf_cache_delta_hash): at most that many deltas of one
 * version are kept, and a delta against another dictionary in its slot
 * replaces it.  A reader checks the trailer as for any entry and that
 * the header names the dictionary it was asked for.
 *
 * Files are written as "<entry name>.tmp.<node>.<pid>" and renamed when
 * complete, so no partial entry is ever visible under an entry's name.
 * The node (16 hex digits) names the host and PID namespace the writer's
 * pid belongs to: hosts sharing a directory (NFS) have pids of their own,
 * and the same pid on two of them is two writers.  When a temporary file
 * is taken as abandoned: adf_cache_temp.h.
 */
#ifndef ADF_CACHE_ENTRY_H
#define ADF_CACHE_ENTRY_H

#include "adf_coding.h"
#include "adf_digest.h"
#include "adf_ident.h"

#include <apr_time.h>

/* "<16 hex><ext>.tmp.<16 hex>.<pid>" and a NUL fit in this. */
#define ADF_CACHE_NAME_MAX 64
#define ADF_CACHE_TRAILER 148

/* Truncate a key's timestamps to microseconds (what httpd's stat gives). */
void adf_cache_key_usec(adf_ident_t *key);

/* The hash that names key's entry, of its microsecond form. */
apr_uint64_t adf_cache_key_hash(const adf_ident_t *key);

/* The file name of coding c's file of the entry hash (buf holds
 * ADF_CACHE_NAME_MAX bytes); ADF_IDENTITY: the dictionary whose SHA-256
 * starts with hash. */
void adf_cache_entry_name(char *buf, apr_uint64_t hash, adf_coding_e c);

/* The name hash of the dictionary whose SHA-256 is sha kept for the
 * files of virtual host host ("ServerName:port") whose paths (on disk)
 * have the match pattern pattern (adf_dict_match): a version is found
 * again only for a later version of its own file, never for another
 * file's response (its bytes would otherwise answer "does the server
 * hold a file with exactly these contents?" for any file, and cost
 * reading it).  Found, it is still used only for a client that may read
 * the file it was kept from (its record: adf_cache_origin_t). */
apr_uint64_t adf_cache_dict_hash(const unsigned char *sha, const char *host,
                                 const char *pattern);

/* Where a kept dictionary's bytes were served: a request may use them
 * only where its client could fetch that file there. */
typedef struct {
    const char *host;           /* the virtual host: "ServerName:port" */
    const char *uri;            /* the URL path it was served at, as
                                 * httpd mapped it (decoded) */
    const char *path;           /* the file, on disk */
} adf_cache_origin_t;

/* A record's most bytes: its three strings, NUL-terminated, then their
 * length and their CRC-32 (4 bytes each). */
#define ADF_CACHE_ORIGIN_MAX 4096

/* o as a record into buf (ADF_CACHE_ORIGIN_MAX bytes): its length, or 0
 * when it does not fit. */
apr_size_t adf_cache_origin_format(unsigned char *buf,
                                   const adf_cache_origin_t *o);

/* The record that ends the n bytes at buf: its length, and o's strings
 * pointing into buf; 0 when no whole record ends there. */
apr_size_t adf_cache_origin_parse(const unsigned char *buf, apr_size_t n,
                                  adf_cache_origin_t *o);

/* The record of the dictionary open on fd, whose trailer says its
 * payload has length bytes, read into buf (ADF_CACHE_ORIGIN_MAX bytes):
 * the length of the dictionary's own bytes before it, or -1 when there
 * is no whole record (damaged) or it cannot be read. */
apr_off_t adf_cache_origin_read(int fd, apr_uint64_t length,
                                unsigned char *buf, adf_cache_origin_t *o);

/* The key under which a request finds whether the version of its file
 * whose entry hash is entry (adf_cache_key_hash) is kept as a dictionary
 * for virtual host host in cache directory dir: never 0. */
apr_uint64_t adf_cache_version_key(apr_uint64_t entry, const char *host,
                                   int dir);

/* The deltas kept of one version of a file, at most. */
#define ADF_CACHE_DELTAS 4

/* The name hash of the delta of the entry hash entry
 * (adf_cache_key_hash) against the dictionary whose SHA-256 is sha. */
apr_uint64_t adf_cache_delta_hash(apr_uint64_t entry,
                                  const unsigned char *sha);

/* The SHA-256 the dcz header of the delta open on fd names (its coded
 * bytes are length long), into sha: 0, or -1 when it has no such
 * header or it cannot be read. */
int adf_cache_delta_dict(int fd, apr_uint64_t length, unsigned char *sha);

/* Who writes a temporary file: process pid of node (never 0), or, in
 * the name an earlier release gave it ("<entry name>.tmp.<pid>"), of a
 * node it does not say (0). */
typedef struct {
    apr_uint64_t node;
    long pid;
} adf_cache_writer_t;

/* The name of the temporary file writer w writes entry name into. */
void adf_cache_temp_name(char *buf, const char *name,
                         const adf_cache_writer_t *w);

/* What a directory entry is: ADF_CACHE_FILE_ENTRY (*hash, *c set),
 * ADF_CACHE_FILE_TEMP (*hash, *c and *w set) or ADF_CACHE_FILE_OTHER. */
typedef enum {
    ADF_CACHE_FILE_OTHER,
    ADF_CACHE_FILE_ENTRY,
    ADF_CACHE_FILE_TEMP
} adf_cache_file_e;
adf_cache_file_e adf_cache_file_kind(const char *name, apr_uint64_t *hash,
                                     adf_coding_e *c, adf_cache_writer_t *w);

typedef struct {
    adf_coding_e coding;
    apr_uint64_t length;        /* of the bytes before the trailer: the
                                 * coded bytes (a dictionary's: the
                                 * source's, and their record) */
    apr_uint32_t crc;           /* CRC-32 of those bytes */
    unsigned char digest[ADF_DIGEST_LEN];   /* SHA-256 of those bytes */
    unsigned char source[ADF_DIGEST_LEN];   /* ... of the source's */
    adf_ident_t key;            /* the source, to the nanosecond */
} adf_cache_trailer_t;

/* CRC-32 (zlib's) of len bytes, continuing crc (0 to start). */
apr_uint32_t adf_cache_crc(apr_uint32_t crc, const void *data,
                           apr_size_t len);

/* t as the ADF_CACHE_TRAILER bytes at buf. */
void adf_cache_trailer_format(unsigned char *buf,
                              const adf_cache_trailer_t *t);

/* What a file's end is. */
#define ADF_CACHE_TRAILER_OK 0
#define ADF_CACHE_TRAILER_BAD (-1)  /* damaged, truncated, appended to, or
                                     * no entry at all */
#define ADF_CACHE_TRAILER_OLD (-2)  /* an earlier release's entry (or
                                     * dictionary): whole, but of no use */

/* Parse the last ADF_CACHE_TRAILER bytes (buf) of a file of file_size
 * bytes (a shorter file: its bytes at the end of buf).  Bad as well when
 * the trailer's coded length and the file's size disagree. */
int adf_cache_trailer_parse(const unsigned char *buf, apr_off_t file_size,
                            adf_cache_trailer_t *t);

/* Read and parse the trailer of the file open on fd, of file_size bytes;
 * ADF_CACHE_TRAILER_BAD also when it cannot be read. */
int adf_cache_trailer_read(int fd, apr_off_t file_size,
                           adf_cache_trailer_t *t);

/* Does the trailer say its file holds source f (microsecond timestamps,
 * as a request has them) in coding c? */
int adf_cache_trailer_matches(const adf_cache_trailer_t *t,
                              const adf_ident_t *f, adf_coding_e c);

/* ---- LRU bookkeeping (the background worker's private index) ---------- */

typedef struct {
    apr_uint64_t hash;          /* the entry's key */
    apr_off_t bytes;            /* its files, trailers included */
    apr_off_t file[ADF_NCODINGS];   /* each coding's file; 0: none */
    apr_uint64_t ino[ADF_NCODINGS]; /* ... its inode (0: not known): a
                                     * file another writer put under the
                                     * name since is not this one */
    apr_time_t used;            /* last hit, or when it was written */
} adf_cache_rec_t;

typedef struct {
    adf_cache_rec_t *rec;       /* sorted by hash; malloc'ed */
    int n, cap;
    apr_off_t bytes;            /* the sum of rec[].bytes */
} adf_cache_index_t;

/* Record coding c's file of bytes in the entry of hash (made if new; a
 * file recorded before is replaced); used moves forward only.  -1 when
 * out of memory. */
int adf_cache_index_add(adf_cache_index_t *x, apr_uint64_t hash,
                        adf_coding_e c, apr_off_t bytes, apr_time_t used);

adf_cache_rec_t *adf_cache_index_find(const adf_cache_index_t *x,
                                      apr_uint64_t hash);

/* Forget the entry of hash; the bytes it had (0: there was none). */
apr_off_t adf_cache_index_remove(adf_cache_index_t *x, apr_uint64_t hash);

/* The entry to evict while the entries exceed max: the least recently
 * used one, never keep (the entry just written) unless keep alone
 * exceeds max.  NULL when nothing needs to go. */
const adf_cache_rec_t *adf_cache_index_victim(const adf_cache_index_t *x,
                                              apr_off_t max,
                                              apr_uint64_t keep);

void adf_cache_index_free(adf_cache_index_t *x);

#endif /* ADF_CACHE_ENTRY_H */
