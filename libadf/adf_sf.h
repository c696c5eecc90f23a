/* The Structured Field items of Compression Dictionary Transport (RFC
 * 9842), parsed strictly by RFC 8941: Available-Dictionary is an
 * sf-binary Item, Dictionary-ID an sf-string Item; Use-As-Dictionary's
 * match and id are serialized as sf-strings.  An Item may carry
 * parameters, which are parsed (a malformed one fails the whole field)
 * and ignored.  Anything that is not exactly one well-formed Item fails:
 * to the caller, "no dictionary".  Pure: no httpd, only APR.
 */
#ifndef ADF_SF_H
#define ADF_SF_H

#include <apr_pools.h>

/* field (a request header's whole value) as an sf-binary Item of exactly
 * len bytes, decoded into out: 0, or -1. */
int adf_sf_binary(const char *field, unsigned char *out, apr_size_t len);

/* field as an sf-string Item of at most max characters, decoded into out
 * (max + 1 bytes, NUL-terminated): 0, or -1. */
int adf_sf_string(const char *field, char *out, apr_size_t max);

/* s as an sf-string ("...", with '"' and '\' escaped), or NULL when s
 * holds a character an sf-string cannot (outside %x20-7E). */
const char *adf_sf_quote(apr_pool_t *p, const char *s);

/* bytes as an sf-binary (":base64:"). */
const char *adf_sf_bytes(apr_pool_t *p, const unsigned char *bytes,
                         apr_size_t len);

#endif /* ADF_SF_H */
