/* Accept-Encoding parsing and coding selection.
 *
 * Written to be lenient in what it skips and strict in what it honours: an
 * element with a malformed weight is dropped rather than guessed at, so a
 * garbled header can only make us compress less, never send a coding the
 * client refused.
 */
#include "adf_negotiate.h"

#include <apr_lib.h>
#include <string.h>
#include <strings.h>

/* RFC 9110 tchar */
static int is_tchar(int c)
{
    return apr_isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static int is_ows(int c)
{
    return c == ' ' || c == '\t';
}

/* qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ); returns
 * thousandths or -1.  s..end is the value without surrounding OWS. */
static int parse_qvalue(const char *s, const char *end)
{
    int q, scale = 100;

    if (s == end || (*s != '0' && *s != '1')) {
        return -1;
    }
    q = (*s++ - '0') * 1000;
    if (s < end && *s == '.') {
        s++;
        while (s < end && apr_isdigit(*s) && scale > 0) {
            q += (*s++ - '0') * scale;
            scale /= 10;
        }
    }
    if (s != end || q > 1000) {
        return -1;
    }
    return q;
}

static int token_is(const char *tok, apr_size_t len, const char *name)
{
    return strlen(name) == len && !strncasecmp(tok, name, len);
}

/* Parse one element [s, end): "coding *( OWS ; OWS param )".  Sets *tok,
 * *toklen and *q; returns 0 if the element is to be ignored. */
static int parse_element(const char *s, const char *end, const char **tok,
                         apr_size_t *toklen, int *q)
{
    while (s < end && is_ows(*s)) {
        s++;
    }
    *tok = s;
    while (s < end && is_tchar(*s)) {
        s++;
    }
    *toklen = s - *tok;
    if (*toklen == 0) {
        return 0;
    }
    *q = 1000;
    while (s < end) {
        const char *name, *val, *vend;

        while (s < end && is_ows(*s)) {
            s++;
        }
        if (s == end) {
            break;
        }
        if (*s != ';') {
            return 0;           /* junk after the token */
        }
        s++;
        while (s < end && is_ows(*s)) {
            s++;
        }
        name = s;
        while (s < end && *s != '=' && *s != ';') {
            s++;
        }
        if (s == end || *s != '=') {
            return 0;           /* a parameter without a value */
        }
        val = ++s;
        while (s < end && *s != ';') {
            s++;
        }
        vend = s;
        while (vend > val && is_ows(vend[-1])) {
            vend--;
        }
        {
            const char *nend = val - 1;
            while (nend > name && is_ows(nend[-1])) {
                nend--;
            }
            if (nend - name == 1 && (*name == 'q' || *name == 'Q')) {
                while (val < vend && is_ows(*val)) {
                    val++;
                }
                if ((*q = parse_qvalue(val, vend)) < 0) {
                    return 0;
                }
            }
        }
    }
    return 1;
}

/* The one comma-list tokenizer: calls fn for each well-formed element of
 * list (token, its length, its q) until fn returns 0. */
typedef int (*element_fn)(void *baton, const char *tok, apr_size_t len,
                          int q);

static void each_element(const char *list, element_fn fn, void *baton)
{
    const char *s = list;

    while (s && *s) {
        const char *end = s, *tok;
        apr_size_t len;
        int q;

        while (*end && *end != ',') {
            end++;
        }
        if (parse_element(s, end, &tok, &len, &q) && !fn(baton, tok, len, q)) {
            return;
        }
        s = *end ? end + 1 : end;
    }
}

static void note_q(int *slot, int q)
{
    if (q > *slot) {
        *slot = q;
    }
}

static int accept_element(void *baton, const char *tok, apr_size_t len,
                          int q)
{
    adf_accept_t *acc = baton;
    const adf_coding_t *d = adf_coding_by_token(tok, len);

    if (d) {
        note_q(&acc->q[d->id], q);
    }
    else if (token_is(tok, len, "identity")) {
        note_q(&acc->q[ADF_IDENTITY], q);
    }
    else if (token_is(tok, len, "*")) {
        note_q(&acc->star, q);
    }
    return 1;
}

/* The last value each thread parsed, and its result: clients send one of
 * a handful of exact strings ("gzip, deflate, br, zstd"), and a compare
 * costs a twentieth of a parse. */
#define MEMO_VALUE 96
static __thread struct {
    apr_size_t len;             /* 0: empty */
    char value[MEMO_VALUE];
    adf_accept_t acc;
} memo;

void adf_accept_parse(const char *value, adf_accept_t *acc)
{
    apr_size_t len = value ? strlen(value) : 0;
    int i;

    if (len && len == memo.len && !memcmp(value, memo.value, len)) {
        *acc = memo.acc;
        return;
    }
    for (i = 0; i < ADF_NCODINGS; i++) {
        acc->q[i] = -1;
    }
    acc->star = -1;
    /* No header (value NULL): only identity is acceptable. */
    each_element(value, accept_element, acc);
    if (len && len < MEMO_VALUE) {
        memcpy(memo.value, value, len);
        memo.len = len;
        memo.acc = *acc;
    }
}

typedef struct {
    const char *token;
    int found;
} find_t;

static int find_element(void *baton, const char *tok, apr_size_t len, int q)
{
    find_t *f = baton;

    f->found = token_is(tok, len, f->token);
    return !f->found;
}

int adf_list_has(const char *list, const char *token)
{
    find_t f = { token, 0 };

    each_element(list, find_element, &f);
    return f.found;
}

/* The rule itself, inlined where every coding is asked in turn. */
static APR_INLINE int effective_q(const adf_accept_t *acc, adf_coding_e c)
{
    if (acc->q[c] >= 0) {
        return acc->q[c];
    }
    if (c == ADF_IDENTITY) {
        return acc->star == 0 ? 0 : 1000;
    }
    return acc->star > 0 ? acc->star : 0;
}

int adf_accept_q(const adf_accept_t *acc, adf_coding_e c)
{
    return effective_q(acc, c);
}

int adf_accept_none(const adf_accept_t *acc)
{
    int c;

    for (c = ADF_IDENTITY + 1; c < ADF_NCODINGS; c++) {
        const adf_coding_t *d;

        /* a coding that needs a dictionary is decided by one (the
         * descriptor asked only of a coding accepted: most clients that
         * come here name none) */
        if (effective_q(acc, (adf_coding_e)c) > 0
            && !((d = adf_coding((adf_coding_e)c)) && d->needs_dict)) {
            return 0;
        }
    }
    return 1;
}

adf_coding_e adf_negotiate(const adf_accept_t *acc, const adf_coding_e *prefs,
                           int nprefs)
{
    adf_coding_e best = ADF_IDENTITY;
    int best_q = 0, i;

    for (i = 0; i < nprefs && i < ADF_MAX_PREFS; i++) {
        int q = adf_accept_q(acc, prefs[i]);
        if (q > best_q) {
            best = prefs[i];
            best_q = q;
        }
    }
    /* An identity weight the client gave explicitly outranks weaker
     * codings; an implicit one does not (it is merely "not refused"). */
    if (best != ADF_IDENTITY && acc->q[ADF_IDENTITY] > best_q) {
        return ADF_IDENTITY;
    }
    return best;
}
