/* The children's privileges: checks made as the user the children run as
 * (the parent, which reads the configuration, may well be root and see
 * files the children cannot), and who that user is. */
#ifndef ADF_CHILDREN_H
#define ADF_CHILDREN_H

#include "adf_private.h"

#include <sys/types.h>

/* What a check finds wrong (allocated from p), or NULL. */
typedef const char *adf_probe_fn(void *baton, apr_pool_t *p);

/* Run probe as the children's user and group, inside ChrootDir if one is
 * set (in a forked process that becomes them, when this one is root) and
 * return what it found.  NULL
 * too when the check itself cannot run: the running code checks again. */
const char *adf_as_children(adf_probe_fn *probe, void *baton, apr_pool_t *p);

/* The user and group the children run as: User and Group when httpd
 * starts as root, else whoever started it; the user's name, for
 * messages. */
uid_t adf_children_uid(void);
gid_t adf_children_gid(void);
const char *adf_children_user(void);

#endif /* ADF_CHILDREN_H */
