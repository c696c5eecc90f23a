/* The URL Pattern a static file advertises itself under as a dictionary
 * (RFC 9842 Use-As-Dictionary's "match"): the patterns of its future
 * versions.  Pure: no httpd, only APR.
 *
 * The file's path, with every version in its name replaced by "*": a
 * file replaced in place keeps its own path ("/static/lodash.min.js"), a
 * versioned name gets its version as a wildcard
 * ("/static/app.3f2a9c1b.js" -> "/static/app.*.js").  The directories
 * stay as they are, versions or not (/app/1.2.3/main.js is its own
 * pattern): the pattern also scopes the versions the cache keeps, and a
 * wildcard directory would put the files of different sites, users or
 * owners (/srv/sites/1001/..., /home/u1001/..., /users/1001/...) in one
 * scope.  The name (the last segment) is read as tokens between the
 * separators . - _ @ ~; a token is a version when it is
 *   - all digits (3, 18, 2024, 1699999999: versions, builds, dates);
 *   - a "v" and digits (v2);
 *   - a hexadecimal hash: 8 or more hex digits with a digit among them,
 *     or 12 or more without (3f2a9c1b, deadbeefcafe);
 *   - an alphanumeric hash: 8 or more letters and digits mixing at least
 *     two of lower case, upper case and digits, other than a capitalised
 *     word (DiwrgTda, BZ7kq3xA, Q5ZHU7XG: Vite, Rollup, esbuild);
 * and versions joined by separators are one "*" (react-dom-18.3.1.min.js
 * -> react-dom-*.min.js).  A name too eager to match costs only
 * efficiency: the server uses a dictionary only when the client holds
 * exactly its bytes and may read the file it was kept from.  The
 * characters URL Pattern gives a meaning to are escaped in the literal
 * parts.
 */
#ifndef ADF_DICTMATCH_H
#define ADF_DICTMATCH_H

#include <apr_pools.h>

/* The match pattern for a file at path (the request's path as sent,
 * percent-encoded, without its query). */
const char *adf_dict_match(apr_pool_t *p, const char *path);

/* Is pattern one this module evaluates: a path ("/...") of literal
 * characters, "\"-escapes and "*" (any run of characters, "/" too)?
 * The rest of URL Pattern's syntax (named groups, regular expressions,
 * modifiers) is refused where an operator writes a pattern. */
int adf_dict_pattern_ok(const char *pattern);

/* Does path (as sent, without its query) match pattern (which
 * adf_dict_pattern_ok accepts; any other matches nothing)? */
int adf_dict_pattern_matches(const char *pattern, const char *path);

/* May a response to this request be compressed with a dictionary, by the
 * request's Sec-Fetch-Mode and Sec-Fetch-Site (NULL: absent)?  Not for a
 * cross-origin request in no-cors mode (RFC 9842, 8.1: its reader could
 * learn about a dictionary it may not read), nor where either is not one
 * token (sent twice, "no-cors, cors"): that could hide a no-cors. */
int adf_dict_fetch_allows(const char *mode, const char *site);

#endif /* ADF_DICTMATCH_H */
