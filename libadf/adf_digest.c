/* SHA-256 through libcrypto's EVP interface (the one OpenSSL 3 keeps). */
#include "adf_digest.h"

#include <openssl/evp.h>

int adf_digest_init(adf_digest_t *d)
{
    EVP_MD_CTX *c = EVP_MD_CTX_new();

    if (!c || EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1) {
        EVP_MD_CTX_free(c);
        d->md = NULL;
        return -1;
    }
    d->md = c;
    return 0;
}

void adf_digest_update(adf_digest_t *d, const void *data, apr_size_t len)
{
    if (d->md && EVP_DigestUpdate(d->md, data, len) != 1) {
        adf_digest_abandon(d);
    }
}

int adf_digest_final(adf_digest_t *d, unsigned char *out)
{
    unsigned int n = 0;
    int ok = d->md && EVP_DigestFinal_ex(d->md, out, &n) == 1
             && n == ADF_DIGEST_LEN;

    adf_digest_abandon(d);
    return ok ? 0 : -1;
}

void adf_digest_abandon(adf_digest_t *d)
{
    EVP_MD_CTX_free(d->md);
    d->md = NULL;
}

void adf_digest_hex(char *buf, const unsigned char *digest, apr_size_t n)
{
    static const char hex[] = "0123456789abcdef";
    apr_size_t i;

    for (i = 0; i < n; i++) {
        buf[2 * i] = hex[digest[i] >> 4];
        buf[2 * i + 1] = hex[digest[i] & 15];
    }
    buf[2 * n] = '\0';
}

/* A hex digit's value, or -1: by table (each value stored plus one, the
 * rest zero), as every sibling's mark is read per request */
static int nibble(char c)
{
    static const unsigned char v[256] = {
        ['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
        ['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
        ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15,
        ['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14,
        ['E'] = 15, ['F'] = 16
    };

    return v[(unsigned char)c] - 1;
}

int adf_digest_parse_hex(const char *s, unsigned char *out)
{
    int i, hi, lo;

    for (i = 0; i < ADF_DIGEST_LEN; i++) {
        if ((hi = nibble(s[2 * i])) < 0 || (lo = nibble(s[2 * i + 1])) < 0) {
            return -1;
        }
        out[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}
