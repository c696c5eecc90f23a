/* Dictionary transport (RFC 9842) on httpd's side: the dictionaries an
 * operator names (AdaptiveDeflateDictionary), served at their URL with
 * Use-As-Dictionary, advertised to HTML pages with Link, and found again
 * by the SHA-256 a client sends in Available-Dictionary. */
#ifndef ADF_DICT_H
#define ADF_DICT_H

#include "adf_private.h"
#include "adf_codec.h"
#include "adf_negotiate.h"
#include "adf_config.h"

#define ADF_DICT_HANDLER ADF_HANDLER_PREFIX "dictionary"
/* translate_name: the URL of a dictionary is served by this module from
 * the bytes it read; map_to_storage: it is no file of the tree, so
 * <Location> rules apply to it, <Directory> ones do not. */
int adf_dict_translate(request_rec *r);
int adf_dict_map_to_storage(request_rec *r);
int adf_dict_handler(request_rec *r);

/* The dictionary this request's response may be compressed against: the
 * client accepts dcz, sent Available-Dictionary with the hash of one this
 * server has whose pattern matches the request's path, may read it (a
 * configured one at its URL; a kept version's file where it was served:
 * adf_access_may_read), and is not a cross-origin no-cors fetch.  NULL
 * otherwise, and for a subrequest; *named (may be NULL) says whether the
 * client named a dictionary at all (a miss, when NULL is returned).
 * Looked up once per request.  What it costs is priced as a rung's, the
 * dictionary's preparation included where it is not prepared in this
 * process yet (a dictionary far larger than the body is not prepared for
 * it); the dictionary returned is prepared (its prep set, its data
 * NULL), at the one level its response is coded at (adf_dict_level). */
const adf_dict_t *adf_dict_for(request_rec *r, const adf_accept_t *acc,
                               int *named);

/* post_config: each configured dictionary prepared at the strongest
 * level its server's defaults allow it (adf_dict_level_max) and at their
 * MIN, once in the parent: every child shares them (copy on write), and
 * a large one is then used for small pages too, under load as well. */
void adf_dict_post_config(apr_pool_t *pconf, server_rec *s);

/* The level a response coded against dict goes out at: its prepared
 * form's. */
int adf_dict_level(const adf_dict_t *dict);

/* adf_dict_for without *named: an adf_dict_of_fn (adf_conditional.h). */
const adf_dict_t *adf_dict_held(request_rec *r, const adf_accept_t *acc);

/* Could a response at r's path go out compressed against a dictionary
 * for some client (the response then varies on Available-Dictionary)? */
int adf_dict_could(const request_rec *r);

/* A static file whose version the cache keeps as a dictionary
 * (AdaptiveDeflateDictionaryVersions; adf_static_swap found it and set
 * adf_req(r)->version_kept, where alone this is called): tell the
 * client to keep it for the file's later versions, under the pattern of
 * its path with versions as "*" (adf_dict_match). */
void adf_dict_advertise(request_rec *r);

/* An HTML response of a server with dictionaries (called only where
 * adf_config_dicts_used): a Link to each the client may fetch, for the
 * browser to fetch and keep. */
void adf_dict_link(request_rec *r);

#endif /* ADF_DICT_H */
