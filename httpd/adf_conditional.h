/* A client's conditional headers against this module's representations
 * (adf_etag.h decides): what the handler is shown before it compares
 * them with its own tag, and which tag a 304 carries.  A 304 says "the
 * copy your tag names is current" (RFC 9110, 15.4.5): it repeats the
 * client's own tag, so that no client or shared cache has its copy
 * relabelled as another representation. */
#ifndef ADF_CONDITIONAL_H
#define ADF_CONDITIONAL_H

#include "adf_private.h"
#include "adf_codec.h"
#include "adf_etag.h"
#include "adf_negotiate.h"

/* The dictionary a client holds for r's response, or NULL (adf_dict_for;
 * passed in, since the dictionaries' side reads the request's headers
 * through this file). */
typedef const adf_dict_t *adf_dict_of_fn(request_rec *r,
                                         const adf_accept_t *acc);

/* Before the handler: If-None-Match and If-Match as it is to compare
 * them with its own tag (adf_tag_for_handler), from what the client
 * accepts now and the dictionary dict_of finds; what the client sent is
 * kept for the filter (adf_cond_held).  Tags of stored bytes are left for
 * adf_match_stored_conditionals. */
void adf_cond_for_handler(request_rec *r, adf_dict_of_fn *dict_of);

/* The response will be stored bytes whose tag ends in suffix: make
 * If-None-Match / If-Match say, to the handler that evaluates them
 * against its own tag, whether the client named exactly these bytes
 * ("*") or not (a tag nothing has). */
void adf_match_stored_conditionals(request_rec *r, const char *suffix);

/* The client's If-None-Match as it sent it (NULL: none). */
const char *adf_cond_held(const request_rec *r);

/* A response of several representations whose handler's tag is etag:
 * does the client hold a current one that it accepts now?  1 with *tag
 * its own tag, which the 304 carries (NULL for "*": the one that would go
 * out); 0 when a 200 is due (adf_tag_not_modified). */
int adf_cond_not_modified(request_rec *r, const adf_tag_now_t *now,
                          const char *etag, const char **tag);

/* Is tag one of the client's own, as it sent it (a 304 someone else made,
 * a backend's, naming what the client holds)? */
int adf_cond_holds(const request_rec *r, const char *tag);

#endif /* ADF_CONDITIONAL_H */
