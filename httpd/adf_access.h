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
 * URL would not be asked): a client's credentials are checked again,
 * and rules on SetEnvIf's variables see those of the URL asked about. */
int adf_access_may_read(request_rec *r, const char *uri,
                        const char *filename);

/* The hooks that give the subrequest the environment a request the
 * client sent for that URL would have (SetEnvIf's variables), and, after
 * each configuration read, finding mod_setenvif's pass. */
void adf_access_register_hooks(void);
void adf_access_post_config(void);

#endif /* ADF_ACCESS_H */
