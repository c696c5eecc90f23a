/* Configuration: server and directory records, their merges, the
 * directive handlers and the getters that apply the defaults. */
#ifndef ADF_CONFIG_H
#define ADF_CONFIG_H

#include "adf_private.h"
#include "adf_load.h"
#include "adf_policy.h"
#include "adf_control.h"
#include "adf_coding.h"
#include "adf_codec.h"

#define ADF_UNSET (-1)

/* A compressed cache (AdaptiveDeflateCache DIR MAXSIZE): a server's own,
 * or inherited from the main server. */
typedef struct {
    const char *dir;                    /* absolute, no trailing slash */
    apr_off_t max;                      /* bytes */
    const char *at;                     /* "file:line" of the directive */
    int index;                          /* among this configuration's */
} adf_cache_conf_t;

/* AdaptiveDeflateDictionary URL-PATH FILE match=PATTERN [max-age=SECONDS]:
 * FILE read and hashed with the configuration (a change to it takes a
 * restart); served and used by adf_dict.c. */
#define ADF_DICT_DEFAULT_MAX_AGE (30 * 86400)

typedef struct adf_dict_conf_t {
    const char *url;            /* where it is served: a path */
    const char *file;
    const char *match;          /* Use-As-Dictionary's match pattern */
    const char *use_as;         /* ... the field's value */
    const char *cache_control;  /* its lifetime in the client */
    const char *etag;           /* strong, from the hash */
    adf_dict_t dict;            /* the bytes as read at start-up */
    const char *at;             /* "file:line" of its directive */
} adf_dict_conf_t;
#define DICT_AT(a, i) (APR_ARRAY_IDX((a), (i), const adf_dict_conf_t *))


/* Settings of the one load controller: main server only. */
typedef struct {
    int load_source;                    /* adf_source_e or unset */
    const char *load_path;
    apr_interval_time_t load_interval;  /* unset: -1 */
    int cpu_target;
    int cpu_off, cpu_on;
    double bw_target;                   /* bytes/s; unset: -1, off: 0 */
    const char *target_at, *limit_at;   /* "file:line", when set */
    adf_cache_conf_t *cache;            /* NULL: none */
    apr_array_header_t *dicts;          /* adf_dict_conf_t *; NULL: none */
} adf_srv_conf_t;

/* Per-response settings: server, vhost, directory and .htaccess. */
typedef struct {
    int enabled;
    int precompressed;
    int proxied;
    adf_types_t *types;                 /* media type patterns */
    int level_min[ADF_NCODINGS];
    int level_max[ADF_NCODINGS];
    apr_off_t min_length;
    apr_array_header_t *caps;           /* adf_size_cap_t, sorted */
    int nprefs;                         /* 0: unset */
    adf_coding_e prefs[ADF_MAX_PREFS];
    apr_array_header_t *statuses;       /* int */
    int length_hiding;                  /* max pad bytes; 0: off */
    int cache;                          /* the server's cache used here */
    int dict_versions;                  /* static files' versions kept as
                                         * dictionaries */
} adf_dir_conf_t;

/* The defaults, in one place. */
#define ADF_DEFAULT_INTERVAL      apr_time_from_sec(1)
#define ADF_DEFAULT_CPU_TARGET    80
#define ADF_DEFAULT_CPU_OFF       95
#define ADF_DEFAULT_CPU_ON        85
#define ADF_DEFAULT_MIN_LENGTH    256

/* Build what the getters share; once, from post_config's pool. */
void adf_config_init(apr_pool_t *p);

void *adf_create_srv_conf(apr_pool_t *p, server_rec *s);
void *adf_merge_srv_conf(apr_pool_t *p, void *basev, void *addv);
void *adf_create_dir_conf(apr_pool_t *p, char *dir);
void *adf_merge_dir_conf(apr_pool_t *p, void *basev, void *addv);

extern const command_rec adf_cmds[];

/* The highest level of coding c any range allows (its default range's
 * top, or a higher MAX configured anywhere): the dearest rung in use. */
int adf_config_top_level(adf_coding_e c);

/* Is AdaptiveDeflatePrecompressed On anywhere in the configuration?  When
 * not, nothing needs to look for siblings. */
int adf_config_precompressed_used(void);

/* Is a dictionary configured anywhere (AdaptiveDeflateDictionary, or
 * AdaptiveDeflateDictionaryVersions On)?  When not, no response needs
 * to ask about one. */
int adf_config_dicts_used(void);

/* Are the request notes (ADF_NOTE_PREFIX...) written?  Where nothing
 * reads them they cost a response some 1 % for nothing
 * (AdaptiveDeflateNotes). */
int adf_config_notes(void);
/* ... and the decision trace's (budget, cpu, path): named, or On. */
int adf_config_trace_notes(void);

/* Set note ADF_NOTE_PREFIX name (a literal) where notes are written. */
#define adf_note(r, name, value) \
    do { \
        if (adf_config_notes()) { \
            apr_table_setn((r)->notes, ADF_NOTE_PREFIX name, (value)); \
        } \
    } while (0)

/* check_config hook: settings that are only wrong together (the CPU
 * target at or above the limit); fails startup naming both. */
int adf_check_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp,
                     server_rec *s);

/* Effective values: configured, else the default. */
int adf_conf_enabled(const adf_dir_conf_t *dc);
int adf_conf_precompressed(const adf_dir_conf_t *dc);
int adf_conf_proxied(const adf_dir_conf_t *dc);
const adf_types_t *adf_conf_types(const adf_dir_conf_t *dc);
int adf_conf_length_hiding(const adf_dir_conf_t *dc);
int adf_conf_status_ok(const adf_dir_conf_t *dc, int status);
/* Is the server's compressed cache (if any) used here?  On by default. */
int adf_conf_cache(const adf_dir_conf_t *dc);
/* AdaptiveDeflateDictionaryVersions: Off by default. */
int adf_conf_dict_versions(const adf_dir_conf_t *dc);
/* AdaptiveDeflateMinLength, or its default. */
apr_off_t adf_conf_min_length(const adf_dir_conf_t *dc);
/* May dcz go out here (to a client holding a dictionary): built, and
 * listed where AdaptiveDeflateEncodings is set? */
int adf_conf_dcz(const adf_dir_conf_t *dc);
/* Fill a policy configuration from the directory's settings. */
void adf_conf_policy(const adf_dir_conf_t *dc, adf_policy_conf_t *pc);
void adf_conf_control(const adf_srv_conf_t *sc, adf_control_conf_t *cc);
apr_interval_time_t adf_conf_interval(const adf_srv_conf_t *sc);
adf_source_e adf_conf_source(const adf_srv_conf_t *sc, const char **path);

#endif /* ADF_CONFIG_H */
