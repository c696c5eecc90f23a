/* RFC 8941 Items, strictly: see adf_sf.h.  The grammar's names are the
 * RFC's (bare-item, parameters, key). */
#include "adf_sf.h"

#include <apr_strings.h>
#include <string.h>

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int b64_value(char c)
{
    const char *p = c ? strchr(b64, c) : NULL;

    return p ? (int)(p - b64) : -1;
}

static int lcalpha(char c)
{
    return c >= 'a' && c <= 'z';
}

static int digit(char c)
{
    return c >= '0' && c <= '9';
}

static int alpha(char c)
{
    return lcalpha(c) || (c >= 'A' && c <= 'Z');
}

/* tchar (RFC 9110), which with ':' and '/' makes a token's later chars */
static int tchar(char c)
{
    return c && (alpha(c) || digit(c) || strchr("!#$%&'*+-.^_`|~", c));
}

/* An sf-string at s; its end, and its value in out (max + 1 bytes) when
 * out is not NULL; NULL when malformed or longer than max. */
static const char *string(const char *s, char *out, apr_size_t max)
{
    apr_size_t n = 0;

    if (*s++ != '"') {
        return NULL;
    }
    for (;; s++) {
        char c = *s;

        if (c == '\\') {
            c = *++s;
            if (c != '"' && c != '\\') {
                return NULL;
            }
        }
        else if (c == '"') {
            break;
        }
        else if (c < 0x20 || c > 0x7e) {
            return NULL;        /* the end too, unclosed */
        }
        if (n == max) {
            return NULL;
        }
        if (out) {
            out[n] = c;
        }
        n++;
    }
    if (out) {
        out[n] = '\0';
    }
    return s + 1;
}

/* An sf-binary at s; its end, and up to max decoded bytes in out (NULL:
 * only checked) with their number in *len; NULL when malformed or longer
 * than max.  As RFC 8941 asks of parsers, padding may be absent and the
 * bits left over need not be zero. */
static const char *binary(const char *s, unsigned char *out, apr_size_t max,
                          apr_size_t *len)
{
    apr_uint32_t acc = 0;
    int bits = 0, pad = 0, v;
    apr_size_t n = 0;

    if (*s++ != ':') {
        return NULL;
    }
    for (; *s != ':'; s++) {
        if (*s == '=') {
            if (++pad > 2) {
                return NULL;
            }
            continue;
        }
        if (pad || (v = b64_value(*s)) < 0) {
            return NULL;        /* data after padding, or not base64 */
        }
        acc = acc << 6 | (apr_uint32_t)v;
        if ((bits += 6) >= 8) {
            bits -= 8;
            if (n == max) {
                return NULL;
            }
            if (out) {
                out[n] = (unsigned char)(acc >> bits);
            }
            n++;
        }
    }
    /* 6 bits left cannot end a quantum; padding, if any, completes it */
    if (bits == 6 || (pad && pad != bits / 2)) {
        return NULL;
    }
    *len = n;
    return s + 1;
}

/* A bare-item of any type (integer, decimal, string, token, byte
 * sequence, boolean): its end, or NULL. */
static const char *bare_item(const char *s)
{
    apr_size_t n;

    if (*s == '"') {
        return string(s, NULL, (apr_size_t)-1);
    }
    if (*s == ':') {
        return binary(s, NULL, (apr_size_t)-1, &n);
    }
    if (*s == '?') {
        return s[1] == '0' || s[1] == '1' ? s + 2 : NULL;
    }
    if (alpha(*s) || *s == '*') {
        for (s++; tchar(*s) || *s == ':' || *s == '/'; s++) {
        }
        return s;
    }
    if (*s == '-') {
        s++;
    }
    if (digit(*s)) {
        const char *start = s, *dot = NULL;

        for (; digit(*s) || (*s == '.' && !dot); s++) {
            if (*s == '.') {
                dot = s;
            }
        }
        /* an integer of up to 15 digits; a decimal of 12.3 at most */
        if (dot ? (dot - start > 12 || s - dot - 1 < 1 || s - dot - 1 > 3)
                : s - start > 15) {
            return NULL;
        }
        return s;
    }
    return NULL;
}

/* Parameters after an item: (";" *SP key [ "=" bare-item ])*; their end,
 * or NULL. */
static const char *parameters(const char *s)
{
    while (*s == ';') {
        for (s++; *s == ' '; s++) {
        }
        if (!lcalpha(*s) && *s != '*') {
            return NULL;
        }
        for (s++; lcalpha(*s) || digit(*s) || (*s && strchr("_-.*", *s));
             s++) {
        }
        if (*s == '=' && !(s = bare_item(s + 1))) {
            return NULL;
        }
    }
    return s;
}

/* After an item at end: its parameters, then nothing but SP. */
static int item_ends(const char *end)
{
    if (!end || !(end = parameters(end))) {
        return 0;
    }
    while (*end == ' ') {
        end++;
    }
    return !*end;
}

static const char *skip_sp(const char *s)
{
    while (s && *s == ' ') {
        s++;
    }
    return s;
}

int adf_sf_binary(const char *field, unsigned char *out, apr_size_t len)
{
    apr_size_t n;
    const char *end;

    if (!field) {
        return -1;
    }
    end = binary(skip_sp(field), out, len, &n);
    return item_ends(end) && n == len ? 0 : -1;
}

int adf_sf_string(const char *field, char *out, apr_size_t max)
{
    return field && item_ends(string(skip_sp(field), out, max)) ? 0 : -1;
}

const char *adf_sf_quote(apr_pool_t *p, const char *s)
{
    char *out = apr_palloc(p, 2 * strlen(s) + 3), *o = out;

    *o++ = '"';
    for (; *s; s++) {
        if (*s < 0x20 || *s > 0x7e) {
            return NULL;
        }
        if (*s == '"' || *s == '\\') {
            *o++ = '\\';
        }
        *o++ = *s;
    }
    *o++ = '"';
    *o = '\0';
    return out;
}

const char *adf_sf_bytes(apr_pool_t *p, const unsigned char *bytes,
                         apr_size_t len)
{
    char *out = apr_palloc(p, 4 * ((len + 2) / 3) + 3), *o = out;
    apr_size_t i;

    *o++ = ':';
    for (i = 0; i < len; i += 3) {
        apr_uint32_t v = (apr_uint32_t)bytes[i] << 16
                         | (i + 1 < len ? (apr_uint32_t)bytes[i + 1] << 8 : 0)
                         | (i + 2 < len ? bytes[i + 2] : 0);

        *o++ = b64[v >> 18 & 63];
        *o++ = b64[v >> 12 & 63];
        *o++ = i + 1 < len ? b64[v >> 6 & 63] : '=';
        *o++ = i + 2 < len ? b64[v & 63] : '=';
    }
    *o++ = ':';
    *o = '\0';
    return out;
}
