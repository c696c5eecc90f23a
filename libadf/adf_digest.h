/* SHA-256, through OpenSSL's libcrypto: the content identity of stored
 * bytes (cache entries' ETags, siblings' marks; dictionaries are named by
 * it in RFC 9842).  Pure: no httpd. */
#ifndef ADF_DIGEST_H
#define ADF_DIGEST_H

#include <apr.h>

#define ADF_DIGEST_LEN 32
/* The digest as lower-case hex, and its NUL. */
#define ADF_DIGEST_HEX (2 * ADF_DIGEST_LEN + 1)

typedef struct {
    void *md;                   /* libcrypto's EVP_MD_CTX */
} adf_digest_t;

/* Start a digest: 0, or -1 when libcrypto could not (out of memory). */
int adf_digest_init(adf_digest_t *d);
void adf_digest_update(adf_digest_t *d, const void *data, apr_size_t len);
/* The digest into out (ADF_DIGEST_LEN bytes); frees d's state.  -1 when
 * libcrypto failed. */
int adf_digest_final(adf_digest_t *d, unsigned char *out);
/* Free d's state without a result (an abandoned write). */
void adf_digest_abandon(adf_digest_t *d);

/* The first n bytes of a digest as lower-case hex into buf (2n + 1). */
void adf_digest_hex(char *buf, const unsigned char *digest, apr_size_t n);

/* Parse 2 * ADF_DIGEST_LEN hex digits (either case) at s: 0, or -1. */
int adf_digest_parse_hex(const char *s, unsigned char *out);

#endif /* ADF_DIGEST_H */
