/* Accept-Encoding negotiation (RFC 9110, 12.5.3).  Pure: no httpd. */
#ifndef ADF_NEGOTIATE_H
#define ADF_NEGOTIATE_H

#include "adf_coding.h"

/* q-values in thousandths, as the client gave them. */
typedef struct {
    int q[ADF_NCODINGS];        /* -1: not named by the client */
    int star;                   /* q of "*", -1 if absent */
} adf_accept_t;

/* Parse an Accept-Encoding value (NULL: header absent).  Never fails:
 * malformed elements are ignored, as if the client had not sent them. */
void adf_accept_parse(const char *value, adf_accept_t *acc);

/* The effective q (thousandths) of coding c: explicit, else "*", else 0
 * (identity: explicit, else refused by "*;q=0", else 1000). */
int adf_accept_q(const adf_accept_t *acc, adf_coding_e c);

/* Does the client accept no coding at all (q 0 for each)?  Then
 * adf_negotiate picks identity whatever the preference list. */
int adf_accept_none(const adf_accept_t *acc);

/* Pick the coding for this response among the codings in prefs (server
 * preference order, at most ADF_MAX_PREFS of them): highest q wins, the
 * server's order breaks ties, and identity wins over any coding whose q
 * is below the q the client explicitly gave identity.  Returns
 * ADF_IDENTITY when no listed coding is acceptable. */
adf_coding_e adf_negotiate(const adf_accept_t *acc, const adf_coding_e *prefs,
                           int nprefs);

/* Does a comma-separated header value (Vary, Cache-Control, ...) name
 * token (case-insensitive, parameters ignored)?  NULL lists name none. */
int adf_list_has(const char *list, const char *token);

#endif /* ADF_NEGOTIATE_H */
