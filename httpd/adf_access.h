/* Whether a request's client may read another resource of the server:
 * what a dictionary needs before it is used or advertised for a response
 * (adf_dict.c: a configured one; adf_cache.c: a version the cache kept),
 * since a dictionary's bytes, named by a client, answer "do you hold
 * exactly these?" about the file they stand for. */
#ifndef ADF_ACCESS_H
#define ADF_ACCESS_H

#include "adf_private.h"

/* Could r's client fetch the URL path uri (as httpd mapped it: decoded,
 * no query), and would the server answer it from the file filename?
 * Asked as httpd asks for a subrequest (mod_include, mod_negotiation):
 * the URL is mapped again (translate_name, map_to_storage: Alias,
 * mod_rewrite, mod_userdir) and checked with r's headers (its address,
 * its credentials) by every access, authentication and authorisation
 * hook there, <Location>, <Directory>, <Files> and <If> rules included;
 * only an answer of 200 that maps to filename itself says yes.  The file
 * need not exist any more (a deploy removes the last version's hashed
 * name: its rules are those of its name).  Every check runs, also where
 * the URL's merged configuration is the one r was let in under (httpd
 * skips them there for a subrequest of its own; a Require expr on the
 * URL would not be asked): a client's credentials are checked again.
 * To httpd's rules it is the request the client would send for uri:
 * its own request line, no subrequest ([NS], IS_SUBREQ), the variables
 * this request came in with and SetEnvIf's for uri. */
int adf_access_may_read(request_rec *r, const char *uri,
                        const char *filename);

/* Is r the request adf_access_may_read asks about (while it is made, it
 * is no subrequest to httpd's rules: this module's hooks leave it be)? */
int adf_access_asked(const request_rec *r);

/* The hooks that make the subrequest the request a client would send
 * for that URL, and, after each configuration read, finding
 * mod_setenvif's pass. */
void adf_access_register_hooks(void);
void adf_access_post_config(void);

#endif /* ADF_ACCESS_H */
