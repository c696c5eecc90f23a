/* Versions in a path become "*": the rules are in adf_dictmatch.h. */
#include "adf_dictmatch.h"

#include <apr_lib.h>
#include <apr_strings.h>
#include <string.h>
#include <strings.h>

#define SEPARATORS ".-_@~"

static int is_version(const char *t, apr_size_t n)
{
    apr_size_t i, digits = 0, lower = 0, upper = 0, hex = 0;

    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t[i];

        if (apr_isdigit(c)) {
            digits++;
        }
        else if (apr_islower(c)) {
            lower++;
        }
        else if (apr_isupper(c)) {
            upper++;
        }
        else {
            return 0;
        }
        hex += apr_isxdigit(c) && !apr_isupper(c);
    }
    if (digits == n) {
        return n > 0;
    }
    if (n >= 2 && t[0] == 'v' && digits == n - 1) {
        return 1;
    }
    if (hex == n && n >= 8 && (digits || n >= 12)) {
        return 1;
    }
    /* two kinds of characters at least, but not "Capitalised" */
    return n >= 8 && (!!digits + !!lower + !!upper) >= 2
           && !(digits == 0 && upper == 1 && apr_isupper((unsigned char)t[0]));
}

/* Append the literal s (n bytes) to out, escaping URL Pattern syntax. */
static char *literal(char *out, const char *s, apr_size_t n)
{
    while (n--) {
        if (strchr("\\:*(){}?+", *s)) {
            *out++ = '\\';
        }
        *out++ = *s++;
    }
    return out;
}

const char *adf_dict_match(apr_pool_t *p, const char *path)
{
    char *out = apr_palloc(p, 2 * strlen(path) + 1), *o = out;
    const char *s = strrchr(path, '/');
    int star = 0;       /* the last thing written is a "*" */

    /* the directories as they are: only the file's own name has versions */
    s = s ? s + 1 : path;
    o = literal(o, path, (apr_size_t)(s - path));
    while (*s) {
        apr_size_t n = strcspn(s, SEPARATORS);

        if (n && is_version(s, n)) {
            if (!star) {
                *o++ = '*';
                star = 1;
            }
        }
        else if (n) {
            o = literal(o, s, n);
            star = 0;
        }
        s += n;
        if (!*s) {
            break;
        }
        /* a separator: held back while it may only join two versions */
        if (star) {
            apr_size_t m = strcspn(s + 1, SEPARATORS);

            if (m && is_version(s + 1, m)) {
                s += 1;
                continue;
            }
        }
        o = literal(o, s, 1);
        star = 0;
        s++;
    }
    *o = '\0';
    return out;
}

/* URL Pattern's syntax beyond literals and "*". */
#define PATTERN_SYNTAX ":(){}?+"

int adf_dict_pattern_ok(const char *pattern)
{
    const char *s = pattern;

    if (*s != '/') {
        return 0;
    }
    for (; *s; s++) {
        if (*s == '\\') {
            if (!*++s) {
                return 0;
            }
        }
        else if (strchr(PATTERN_SYNTAX, *s)) {
            return 0;
        }
    }
    return 1;
}

int adf_dict_pattern_matches(const char *pattern, const char *path)
{
    const char *p = pattern, *s = path;
    const char *star = NULL, *resume = NULL;

    if (!adf_dict_pattern_ok(pattern)) {
        return 0;
    }
    /* the classic wildcard walk: on a mismatch after a "*", let the star
     * take one more character and try again from there */
    while (*s) {
        if (*p == '*') {
            star = ++p;
            resume = s;
            continue;
        }
        if (*p == '\\' ? p[1] == *s : *p && *p == *s) {
            p += *p == '\\' ? 2 : 1;
            s++;
            continue;
        }
        if (!star) {
            return 0;
        }
        p = star;
        s = ++resume;
    }
    while (*p == '*') {
        p++;
    }
    return !*p;
}

/* Is v one bare sf-token (RFC 8941, 3.3.4), as Sec-Fetch-* values are?
 * A field sent twice reaches a server as one list ("no-cors, cors"). */
static int one_token(const char *v)
{
    if (!apr_isalpha(*v) && *v != '*') {
        return 0;
    }
    while (*++v) {
        if (!apr_isalnum(*v) && !strchr("!#$%&'*+-.^_`|~:/", *v)) {
            return 0;
        }
    }
    return 1;
}

int adf_dict_fetch_allows(const char *mode, const char *site)
{
    if ((mode && !one_token(mode)) || (site && !one_token(site))) {
        return 0;   /* repeated, a list, malformed: fail closed */
    }
    return !(mode && !strcasecmp(mode, "no-cors") && site
             && strcasecmp(site, "same-origin") && strcasecmp(site, "none"));
}
