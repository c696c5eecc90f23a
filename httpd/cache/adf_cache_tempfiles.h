/* The cache worker's temporary files, on a directory that other hosts may
 * share (NFS, CephFS, EFS): names no other writer on any host makes, the
 * writer's sign of life, and when another writer's file is removed. */
#ifndef ADF_CACHE_TEMPFILES_H
#define ADF_CACHE_TEMPFILES_H

#include "adf_cache_shared.h"

/* Create, exclusively, the temporary file that entry final of dfd is
 * written into, named for this process of this node (tmp, of
 * ADF_CACHE_NAME_MAX bytes): its descriptor, or -1 (errno). */
int adf_cache_temp_create(int dfd, const char *final, char *tmp);

/* The temporary file open on fd is written (or waits to be): its mtime
 * is refreshed once ADF_TEMP_REFRESH has passed, so that other hosts see
 * that its writer lives.  Called at every tick of the worker. */
void adf_cache_temp_refresh(int fd);

/* The scan found the temporary file dfd/name of writer wr in cache
 * directory i: removed at once when wr is a process of this node that is
 * gone (1), else watched (0). */
int adf_cache_temp_found(const adf_cache_gen_t *g, int i, int dfd,
                         const char *name, const adf_cache_writer_t *wr);

/* Once every ADF_TEMP_REFRESH: the watched files looked at again, and
 * those unchanged for ADF_TEMP_STALE removed (ADF00033). */
void adf_cache_temp_sweep(const adf_cache_gen_t *g);

/* The worker stops: nothing is watched any more. */
void adf_cache_temp_forget(void);

#endif /* ADF_CACHE_TEMPFILES_H */
