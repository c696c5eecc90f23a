/* Configuration records, merges and directive handlers.
 *
 * Every field starts "unset" and every merge takes the nearer value when
 * it is set, so a vhost or directory that sets one directive keeps all
 * the others it inherits (mod_deflate and mod_brotli lose them).
 */
#include "adf_config.h"
#include "adf_parse.h"
#include "adf_coding.h"
#include "adf_digest.h"
#include "adf_dictmatch.h"
#include "adf_sf.h"

#include <apr_strings.h>
#include <string.h>
#include <strings.h>

/* Compressible by default: text, scripts, data and markup; never media
 * that is already compressed. */
static const char *const default_types[] = {
    "text/*",
    "application/javascript", "application/x-javascript",
    "application/ecmascript", "application/json", "application/*+json",
    "application/xml", "application/*+xml", "image/svg+xml",
    "application/wasm", "application/x-font-ttf", "font/ttf", "font/otf",
    "application/vnd.ms-fontobject", "image/x-icon",
    "image/vnd.microsoft.icon", "image/bmp",
    NULL
};

static adf_types_t *default_types_set;
/* The policy settings where no directive says otherwise: from the
 * registry, once (adf_config_init), not per response. */
static adf_policy_conf_t default_policy;
/* Set while the configuration is read; reset with the module's reload. */
static int precompressed_used;
static int dicts_used;
static int top_level[ADF_NCODINGS];
static const char *top_level_at[ADF_NCODINGS];  /* where it was set */
/* AdaptiveDeflateNotes: Auto (ADF_UNSET), On or Off; and whether the
 * request notes are written (adf_config_notes), found at start-up. */
static int notes_mode = ADF_UNSET;
static int notes_wanted = 1, trace_wanted = 1;

/* ---- records and merges ------------------------------------------------- */

void *adf_create_srv_conf(apr_pool_t *p, server_rec *s)
{
    adf_srv_conf_t *sc = apr_pcalloc(p, sizeof(*sc));

    sc->load_source = ADF_UNSET;
    sc->load_interval = ADF_UNSET;
    sc->cpu_target = ADF_UNSET;
    sc->bw_target = ADF_UNSET;
    sc->cpu_off = ADF_UNSET;
    sc->cpu_on = ADF_UNSET;
    return sc;
}

#define MERGE(field) (add->field != ADF_UNSET ? add->field : base->field)
#define MERGE_PTR(field) (add->field ? add->field : base->field)

void *adf_merge_srv_conf(apr_pool_t *p, void *basev, void *addv)
{
    const adf_srv_conf_t *base = basev, *add = addv;
    adf_srv_conf_t *sc = apr_pcalloc(p, sizeof(*sc));

    sc->load_source = MERGE(load_source);
    sc->load_path = add->load_source != ADF_UNSET ? add->load_path
                                                  : base->load_path;
    sc->load_interval = MERGE(load_interval);
    sc->cpu_target = MERGE(cpu_target);
    sc->bw_target = MERGE(bw_target);
    sc->target_at = MERGE_PTR(target_at);
    sc->cpu_off = MERGE(cpu_off);
    sc->cpu_on = MERGE(cpu_on);
    sc->limit_at = MERGE_PTR(limit_at);
    sc->cache = MERGE_PTR(cache);
    sc->dicts = MERGE_PTR(dicts);       /* a virtual host's list replaces */
    return sc;
}

void *adf_create_dir_conf(apr_pool_t *p, char *dir)
{
    adf_dir_conf_t *dc = apr_pcalloc(p, sizeof(*dc));
    int i;

    dc->enabled = ADF_UNSET;
    dc->precompressed = ADF_UNSET;
    dc->proxied = ADF_UNSET;
    dc->min_length = ADF_UNSET;
    dc->length_hiding = ADF_UNSET;
    dc->cache = ADF_UNSET;
    dc->dict_versions = ADF_UNSET;
    for (i = 0; i < ADF_NCODINGS; i++) {
        dc->level_min[i] = ADF_UNSET;
        dc->level_max[i] = ADF_UNSET;
    }
    return dc;
}

void *adf_merge_dir_conf(apr_pool_t *p, void *basev, void *addv)
{
    const adf_dir_conf_t *base = basev, *add = addv;
    adf_dir_conf_t *dc = apr_pcalloc(p, sizeof(*dc));
    int i;

    dc->enabled = MERGE(enabled);
    dc->precompressed = MERGE(precompressed);
    dc->proxied = MERGE(proxied);
    dc->types = MERGE_PTR(types);
    for (i = 0; i < ADF_NCODINGS; i++) {
        /* MIN and MAX are set together, so they merge together. */
        int set = add->level_min[i] != ADF_UNSET;
        dc->level_min[i] = set ? add->level_min[i] : base->level_min[i];
        dc->level_max[i] = set ? add->level_max[i] : base->level_max[i];
    }
    dc->min_length = MERGE(min_length);
    dc->caps = MERGE_PTR(caps);
    if (add->nprefs) {
        dc->nprefs = add->nprefs;
        memcpy(dc->prefs, add->prefs, sizeof(dc->prefs));
    }
    else {
        dc->nprefs = base->nprefs;
        memcpy(dc->prefs, base->prefs, sizeof(dc->prefs));
    }
    dc->statuses = MERGE_PTR(statuses);
    dc->length_hiding = MERGE(length_hiding);
    dc->cache = MERGE(cache);
    dc->dict_versions = MERGE(dict_versions);
    return dc;
}

/* ---- effective values --------------------------------------------------- */

int adf_conf_enabled(const adf_dir_conf_t *dc)
{
    return dc->enabled == 1;
}

int adf_conf_precompressed(const adf_dir_conf_t *dc)
{
    return dc->precompressed == 1;
}

int adf_conf_proxied(const adf_dir_conf_t *dc)
{
    return dc->proxied != 0;
}

const adf_types_t *adf_conf_types(const adf_dir_conf_t *dc)
{
    return dc->types ? dc->types : default_types_set;
}

int adf_conf_length_hiding(const adf_dir_conf_t *dc)
{
    return dc->length_hiding > 0 ? dc->length_hiding : 0;
}

int adf_conf_cache(const adf_dir_conf_t *dc)
{
    return dc->cache != 0;
}

int adf_conf_dict_versions(const adf_dir_conf_t *dc)
{
    return dc->dict_versions > 0;
}

int adf_conf_status_ok(const adf_dir_conf_t *dc, int status)
{
    int i;

    if (!dc->statuses) {
        return status == HTTP_OK;
    }
    for (i = 0; i < dc->statuses->nelts; i++) {
        if (APR_ARRAY_IDX(dc->statuses, i, int) == status) {
            return 1;
        }
    }
    return 0;
}

apr_off_t adf_conf_min_length(const adf_dir_conf_t *dc)
{
    return dc->min_length != ADF_UNSET ? dc->min_length
                                       : default_policy.min_length;
}

int adf_conf_dcz(const adf_dir_conf_t *dc)
{
    int i;

    if (!adf_coding(ADF_DCZ)) {
        return 0;
    }
    for (i = 0; i < dc->nprefs; i++) {
        if (dc->prefs[i] == ADF_DCZ) {
            return 1;
        }
    }
    return !dc->nprefs;
}

void adf_conf_policy(const adf_dir_conf_t *dc, adf_policy_conf_t *pc)
{
    int i;

    *pc = default_policy;
    for (i = 0; i < ADF_NCODINGS; i++) {
        if (dc->level_min[i] != ADF_UNSET) {
            pc->level_min[i] = dc->level_min[i];
        }
        if (dc->level_max[i] != ADF_UNSET) {
            pc->level_max[i] = dc->level_max[i];
        }
    }
    pc->min_length = adf_conf_min_length(dc);
    if (dc->caps) {
        pc->caps = (const adf_size_cap_t *)dc->caps->elts;
        pc->ncaps = dc->caps->nelts;
    }
    if (dc->nprefs) {
        /* the list's codings negotiated on their own: one made against a
         * dictionary goes first where the client holds one (adf_conf_dcz) */
        pc->nprefs = 0;
        for (i = 0; i < dc->nprefs; i++) {
            if (!adf_coding(dc->prefs[i])->needs_dict) {
                pc->prefs[pc->nprefs++] = dc->prefs[i];
            }
        }
        pc->by_value = 0;
    }
    if (adf_conf_length_hiding(dc) > 0) {
        /* Only a coding with a header field to pad hides lengths. */
        int i, n = 0;

        for (i = 0; i < ADF_NCODINGS; i++) {
            const adf_coding_t *d = adf_coding((adf_coding_e)i);

            if (d && d->pads && !n) {
                pc->prefs[n++] = d->id;
            }
        }
        pc->nprefs = n;
    }
}

void adf_conf_control(const adf_srv_conf_t *sc, adf_control_conf_t *cc)
{
    int c;

    memset(cc, 0, sizeof(*cc));
    cc->target = sc->cpu_target != ADF_UNSET ? sc->cpu_target
                                             : ADF_DEFAULT_CPU_TARGET;
    cc->limit_off = sc->cpu_off != ADF_UNSET ? sc->cpu_off
                                             : ADF_DEFAULT_CPU_OFF;
    cc->limit_on = sc->cpu_on != ADF_UNSET ? sc->cpu_on : ADF_DEFAULT_CPU_ON;
    cc->bw_target = sc->bw_target > 0 ? sc->bw_target : 0;
    cc->fixed = sc->load_source == ADF_SRC_NONE;
    for (c = ADF_IDENTITY + 1; c < ADF_NCODINGS; c++) {
        cc->top_level[c] = adf_config_top_level((adf_coding_e)c);
    }
}

apr_interval_time_t adf_conf_interval(const adf_srv_conf_t *sc)
{
    return sc->load_interval != ADF_UNSET ? sc->load_interval
                                          : ADF_DEFAULT_INTERVAL;
}

adf_source_e adf_conf_source(const adf_srv_conf_t *sc, const char **path)
{
    *path = sc->load_path;
    return sc->load_source != ADF_UNSET ? (adf_source_e)sc->load_source
                                        : ADF_SRC_AUTO;
}

/* A dictionary is prepared (indexed) for each level it is used at, in
 * every server process: the levels a configured one may be used at are
 * those whose preparation takes at most ADF_DICT_PREP_MAX_NS of CPU
 * (adf_dict_level_max; 16 MB: up to 9, 1 MB: up to 13).  A level set
 * above that for dcz anywhere fails start-up; the default range is cut
 * to it where it is used (adf_dict.c). */
static int check_dict_levels(server_rec *s)
{
    const apr_array_header_t *a;
    const adf_dict_conf_t *dc;
    int i, max;

    if (!top_level_at[ADF_DCZ]) {
        return OK;
    }
    for (; s; s = s->next) {
        a = ((const adf_srv_conf_t *)ap_get_module_config(
                 s->module_config, &adaptive_deflate_module))->dicts;
        for (i = 0; a && i < a->nelts; i++) {
            dc = DICT_AT(a, i);
            if (top_level[ADF_DCZ] > (max = adf_dict_level_max(dc->dict.len))) {
                ap_log_error(APLOG_MARK, APLOG_STARTUP | APLOG_EMERG, 0,
                             NULL, ADFLOGNO(00034) "AdaptiveDeflateDczLevels "
                             "(%s) allows level %d, but the dictionary %s "
                             "(%" APR_SIZE_T_FMT " bytes; "
                             "AdaptiveDeflateDictionary at %s) may be used "
                             "up to level %d: above it, preparing it takes "
                             "more than %.0f ms of CPU in every server "
                             "process", top_level_at[ADF_DCZ],
                             top_level[ADF_DCZ], dc->file, dc->dict.len,
                             dc->at, max, ADF_DICT_PREP_MAX_NS / 1e6);
                return HTTP_INTERNAL_SERVER_ERROR;
            }
        }
    }
    return OK;
}

int adf_check_config(apr_pool_t *pconf, apr_pool_t *plog, apr_pool_t *ptemp,
                     server_rec *s)
{
    const adf_srv_conf_t *sc = ap_get_module_config(s->module_config,
                                                    &adaptive_deflate_module);
    adf_control_conf_t cc;

    adf_conf_control(sc, &cc);
    if (cc.target >= cc.limit_off) {
        /* The controller would steer into the limit and flap in and out. */
        ap_log_error(APLOG_MARK, APLOG_STARTUP | APLOG_EMERG, 0, NULL,
                     ADFLOGNO(00010) "AdaptiveDeflateCPUTarget %.0f (%s) must "
                     "be below the OFF mark of AdaptiveDeflateCPULimit %.0f "
                     "%.0f (%s)", cc.target,
                     sc->target_at ? sc->target_at : "the default",
                     cc.limit_off, cc.limit_on,
                     sc->limit_at ? sc->limit_at : "the default");
        return HTTP_INTERNAL_SERVER_ERROR;
    }
    return check_dict_levels(s);
}

/* ---- directive handlers ------------------------------------------------- */

static const char *fail(cmd_parms *cmd, const char *err)
{
    return apr_psprintf(cmd->pool, "%s: %s", cmd->cmd->name, err);
}

static const char *set_precompressed(cmd_parms *cmd, void *cfg, int on)
{
    precompressed_used |= on;
    return ap_set_flag_slot(cmd, cfg, on);
}

int adf_config_precompressed_used(void)
{
    return precompressed_used;
}

static const char *set_dict_versions(cmd_parms *cmd, void *cfg, int on)
{
    dicts_used |= on;
    return ap_set_flag_slot(cmd, cfg, on);
}

int adf_config_dicts_used(void)
{
    return dicts_used;
}

/* "file:line" of the directive being read, for later checks. */
static const char *where(cmd_parms *cmd)
{
    return apr_psprintf(cmd->pool, "%s:%d", cmd->directive->filename,
                        cmd->directive->line_num);
}

/* The controller is one per server: its settings live in the main server. */
static const char *global_only(cmd_parms *cmd)
{
    return ap_check_cmd_context(cmd, GLOBAL_ONLY);
}

static const char *set_notes(cmd_parms *cmd, void *cfg, const char *arg)
{
    const char *err = global_only(cmd);

    if (err) {
        return err;
    }
    if (!strcasecmp(arg, "auto")) {
        notes_mode = ADF_UNSET;
    }
    else if (!strcasecmp(arg, "on") || !strcasecmp(arg, "off")) {
        notes_mode = !strcasecmp(arg, "on");
    }
    else {
        return fail(cmd, apr_psprintf(cmd->pool, "'%s': Auto, On or Off",
                                      arg));
    }
    return NULL;
}

/* Does any directive of the configuration (Includes are in the tree)
 * name one of the notes whose names start with prefix: a LogFormat's
 * %{...}n, an ErrorLogFormat, an expression's note()? */
static int names_a_note(const ap_directive_t *d, const char *prefix)
{
    for (; d; d = d->next) {
        if ((d->args && ap_strcasestr(d->args, prefix))
            || names_a_note(d->first_child, prefix)) {
            return 1;
        }
    }
    return 0;
}

/* The decision trace's notes (budget, cpu, path: a float formatted per
 * response) only where one of them is named, or notes are On. */
static int trace_read(void)
{
    static const char *const trace[] = {
        ADF_NOTE_PREFIX "budget", ADF_NOTE_PREFIX "cpu",
        ADF_NOTE_PREFIX "path", NULL
    };
    int i;

    if (notes_mode != ADF_UNSET) {
        return notes_mode;
    }
    for (i = 0; trace[i]; i++) {
        if (names_a_note(ap_conftree, trace[i])) {
            return 1;
        }
    }
    return 0;
}

static int notes_read(void)
{
    /* Scripts read notes without naming them in the configuration. */
    static const char *const scripting[] = {
        "mod_lua.c", "mod_perl.c", "mod_python.c", "mod_wsgi.c", NULL
    };
    int i;

    if (notes_mode != ADF_UNSET) {
        return notes_mode;
    }
    for (i = 0; scripting[i]; i++) {
        if (ap_find_linked_module(scripting[i])) {
            return 1;
        }
    }
    return names_a_note(ap_conftree, ADF_NOTE_PREFIX);
}

int adf_config_notes(void)
{
    return notes_wanted;
}

int adf_config_trace_notes(void)
{
    return trace_wanted;
}

/* A numeric directive is a table row: its field (in the directory's
 * record, or the main server's), what it holds, its bounds and whether
 * "file:line" is kept for a later check's message (cmd->info). */
typedef enum { NUM_SIZE, NUM_PERCENT, NUM_INTERVAL } num_kind_e;

typedef struct {
    apr_size_t at;              /* the field's offset */
    int server;                 /* in adf_srv_conf_t, main server only */
    num_kind_e kind;
    apr_int64_t min, max;       /* bytes, percent, microseconds */
    apr_ssize_t where;          /* offset of a const char * for "file:line",
                                 * or -1 */
} num_slot_t;

static const char *set_number(cmd_parms *cmd, void *cfg, const char *arg)
{
    const num_slot_t *n = cmd->info;
    char *rec = cfg;
    const char *err = NULL;
    apr_off_t size;
    int pct;

    if (n->server) {
        if ((err = global_only(cmd))) {
            return err;
        }
        rec = ap_get_module_config(cmd->server->module_config,
                                   &adaptive_deflate_module);
    }
    switch (n->kind) {
    case NUM_SIZE:
        if (!(err = adf_parse_size(cmd->pool, arg, &size))) {
            if (size < n->min || size > n->max) {
                err = apr_psprintf(cmd->pool, "%s is out of range", arg);
            }
            *(apr_off_t *)(rec + n->at) = size;
        }
        break;
    case NUM_PERCENT:
        if (!(err = adf_parse_percent(cmd->pool, arg, &pct))) {
            if (pct < n->min || pct > n->max) {
                err = apr_psprintf(cmd->pool, "must be between %d and %d",
                                   (int)n->min, (int)n->max);
            }
            *(int *)(rec + n->at) = pct;
        }
        break;
    case NUM_INTERVAL:
        err = adf_parse_interval(cmd->pool, arg, n->min, n->max,
                                 (apr_interval_time_t *)(rec + n->at));
        break;
    }
    if (err) {
        return fail(cmd, err);
    }
    if (n->where >= 0) {
        *(const char **)(rec + n->where) = where(cmd);
    }
    return NULL;
}

#define DIR_FIELD(f) APR_OFFSETOF(adf_dir_conf_t, f)
#define SRV_FIELD(f) APR_OFFSETOF(adf_srv_conf_t, f)
static const num_slot_t min_length_slot = {
    DIR_FIELD(min_length), 0, NUM_SIZE, 0, APR_INT64_MAX, -1
};
static const num_slot_t interval_slot = {
    SRV_FIELD(load_interval), 1, NUM_INTERVAL, APR_USEC_PER_SEC / 10,
    60 * APR_USEC_PER_SEC, -1
};
static const num_slot_t target_slot = {
    SRV_FIELD(cpu_target), 1, NUM_PERCENT, 1, 99, SRV_FIELD(target_at)
};

static const char *set_types(cmd_parms *cmd, void *cfg, int argc,
                             char *const argv[])
{
    adf_dir_conf_t *dc = cfg;
    int i;

    if (argc < 1) {
        return fail(cmd, "needs at least one media type (e.g. text/html)");
    }
    dc->types = adf_types_make(cmd->pool);
    for (i = 0; i < argc; i++) {
        if (!strchr(argv[i], '/')) {
            return fail(cmd, apr_psprintf(cmd->pool, "'%s' is not a media "
                                          "type (type/subtype, * allowed)",
                                          argv[i]));
        }
        adf_types_add(dc->types, cmd->pool, argv[i]);
    }
    return NULL;
}

/* "br gzip": the codings this build has, for messages. */
static const char *built_codings(apr_pool_t *p)
{
    adf_coding_e prefs[ADF_MAX_PREFS];
    const char *list = "";
    int i, n = adf_policy_default_prefs(prefs);

    for (i = 0; i < n; i++) {
        list = apr_pstrcat(p, list, i ? " " : "", adf_coding_name(prefs[i]),
                           NULL);
    }
    /* and the one made against a dictionary the client holds */
    return adf_coding(ADF_DCZ) ? apr_pstrcat(p, list, " dcz", NULL) : list;
}

static const char *set_levels(cmd_parms *cmd, void *cfg, const char *lo,
                              const char *hi)
{
    adf_dir_conf_t *dc = cfg;
    adf_coding_e c = (adf_coding_e)(apr_size_t)cmd->info;
    const adf_coding_t *d = adf_coding(c);
    long min, max;
    const char *err;

    if (!d) {
        return fail(cmd, apr_pstrcat(cmd->pool, "this build has no support "
                                     "for this coding (it has: ",
                                     built_codings(cmd->pool), ")", NULL));
    }
    if ((err = adf_parse_long(cmd->pool, lo, d->min_level, d->max_level,
                              &min))
        || (err = adf_parse_long(cmd->pool, hi, d->min_level, d->max_level,
                                 &max))) {
        return fail(cmd, err);
    }
    if (min > max) {
        return fail(cmd, apr_psprintf(cmd->pool, "MIN %ld is above MAX %ld",
                                      min, max));
    }
    dc->level_min[c] = (int)min;
    dc->level_max[c] = (int)max;
    if (max > top_level[c]) {
        top_level[c] = (int)max;
        top_level_at[c] = where(cmd);
    }
    return NULL;
}

int adf_config_top_level(adf_coding_e c)
{
    const adf_coding_t *d = adf_coding(c);

    if (!d) {
        return 0;
    }
    return top_level[c] > d->default_max ? top_level[c] : d->default_max;
}

static const char *set_caps(cmd_parms *cmd, void *cfg, int argc,
                            char *const argv[])
{
    adf_dir_conf_t *dc = cfg;
    int i, j;

    if (argc < 1) {
        return fail(cmd, "needs SIZE:LEVEL pairs, or 'none'");
    }
    dc->caps = apr_array_make(cmd->pool, argc, sizeof(adf_size_cap_t));
    if (argc == 1 && !strcasecmp(argv[0], "none")) {
        return NULL;
    }
    for (i = 0; i < argc; i++) {
        adf_size_cap_t *cap = apr_array_push(dc->caps);
        const char *err = adf_parse_size_level(cmd->pool, argv[i], &cap->size,
                                               &cap->level);
        if (err) {
            return fail(cmd, err);
        }
        for (j = 0; j < i; j++) {
            if (APR_ARRAY_IDX(dc->caps, j, adf_size_cap_t).size == cap->size) {
                return fail(cmd, apr_psprintf(cmd->pool, "'%s' repeats a "
                                              "size", argv[i]));
            }
        }
    }
    adf_caps_sort((adf_size_cap_t *)dc->caps->elts, dc->caps->nelts);
    return NULL;
}

static const char *set_encodings(cmd_parms *cmd, void *cfg, int argc,
                                 char *const argv[])
{
    adf_dir_conf_t *dc = cfg;
    int i, j;

    /* A longer list than the build's repeats or names an unknown coding:
     * the loop says which before it could write past the last coding. */
    if (argc < 1) {
        return fail(cmd, apr_pstrcat(cmd->pool, "takes one or more of: ",
                                     built_codings(cmd->pool), NULL));
    }
    for (i = 0; i < argc; i++) {
        const adf_coding_t *d = adf_coding_by_token(argv[i], strlen(argv[i]));

        if (!d) {
            return fail(cmd, apr_psprintf(cmd->pool, "unknown coding '%s' "
                                          "(this build has: %s)", argv[i],
                                          built_codings(cmd->pool)));
        }
        for (j = 0; j < i; j++) {
            if (dc->prefs[j] == d->id) {
                return fail(cmd, apr_psprintf(cmd->pool, "'%s' is listed "
                                              "twice", argv[i]));
            }
        }
        dc->prefs[i] = d->id;
    }
    dc->nprefs = argc;
    return NULL;
}

static const char *set_statuses(cmd_parms *cmd, void *cfg, int argc,
                                char *const argv[])
{
    adf_dir_conf_t *dc = cfg;
    int i;

    if (argc < 1) {
        return fail(cmd, "needs at least one status code");
    }
    dc->statuses = apr_array_make(cmd->pool, argc, sizeof(int));
    for (i = 0; i < argc; i++) {
        long st;
        const char *err = adf_parse_long(cmd->pool, argv[i], 200, 599, &st);
        if (err) {
            return fail(cmd, err);
        }
        if (st == HTTP_NO_CONTENT || st == HTTP_PARTIAL_CONTENT
            || st == HTTP_NOT_MODIFIED || st == HTTP_RESET_CONTENT) {
            return fail(cmd, apr_psprintf(cmd->pool, "status %ld has no "
                                          "body to compress", st));
        }
        APR_ARRAY_PUSH(dc->statuses, int) = (int)st;
    }
    return NULL;
}

static const char *set_length_hiding(cmd_parms *cmd, void *cfg,
                                     const char *arg)
{
    adf_dir_conf_t *dc = cfg;
    const char *err;
    long n;

    if (!strcasecmp(arg, "off")) {
        dc->length_hiding = 0;
        return NULL;
    }
    if ((err = adf_parse_long(cmd->pool, arg, 1, 4096, &n))) {
        return fail(cmd, apr_pstrcat(cmd->pool, err, " (Off, or the most "
                                     "padding in bytes)", NULL));
    }
    dc->length_hiding = (int)n;
    return NULL;
}

static const char *set_source(cmd_parms *cmd, void *cfg, const char *arg)
{
    adf_srv_conf_t *sc = ap_get_module_config(cmd->server->module_config,
                                              &adaptive_deflate_module);
    adf_source_e src;
    const char *err = global_only(cmd);

    if (err) {
        return err;
    }
    if ((err = adf_parse_source(cmd->pool, arg, &src, &sc->load_path))) {
        return fail(cmd, err);
    }
    if (sc->load_path) {
        sc->load_path = ap_server_root_relative(cmd->pool, sc->load_path);
    }
    sc->load_source = src;
    return NULL;
}

static const char *set_bandwidth(cmd_parms *cmd, void *cfg, const char *arg)
{
    adf_srv_conf_t *sc = ap_get_module_config(cmd->server->module_config,
                                              &adaptive_deflate_module);
    const char *err = global_only(cmd);

    if (err) {
        return err;
    }
    if (!strcasecmp(arg, "off")) {
        sc->bw_target = 0;
        return NULL;
    }
    err = adf_parse_rate(cmd->pool, arg, &sc->bw_target);
    return err ? fail(cmd, apr_pstrcat(cmd->pool, err, ", or Off", NULL))
               : NULL;
}

static const char *set_limit(cmd_parms *cmd, void *cfg, const char *off,
                             const char *on)
{
    adf_srv_conf_t *sc = ap_get_module_config(cmd->server->module_config,
                                              &adaptive_deflate_module);
    const char *err = global_only(cmd);

    if (err) {
        return err;
    }
    if ((err = adf_parse_percent(cmd->pool, off, &sc->cpu_off))
        || (err = adf_parse_percent(cmd->pool, on, &sc->cpu_on))) {
        return fail(cmd, err);
    }
    if (sc->cpu_on > sc->cpu_off) {
        return fail(cmd, apr_psprintf(cmd->pool, "ON (%d) must not be above "
                                      "OFF (%d)", sc->cpu_on, sc->cpu_off));
    }
    sc->limit_at = where(cmd);
    return NULL;
}

/* "DIR MAXSIZE" in the server config or a virtual host: that server's
 * cache; "On" or "Off" anywhere: whether the server's cache is used there.
 * The directory's checks (it exists, the children may write it, nobody
 * else may) are adf_cache_check_config's, where -t runs them too. */
static const char *set_cache(cmd_parms *cmd, void *cfg, const char *arg,
                             const char *size)
{
    adf_dir_conf_t *dc = cfg;
    adf_srv_conf_t *sc;
    adf_cache_conf_t *cc;
    const char *err;
    apr_size_t len;

    if (!size) {
        if (!strcasecmp(arg, "on") || !strcasecmp(arg, "off")) {
            dc->cache = !strcasecmp(arg, "on");
            return NULL;
        }
        return fail(cmd, "takes DIR MAXSIZE (server config, virtual host) "
                    "or On|Off");
    }
    if (cmd->path) {
        return fail(cmd, "DIR MAXSIZE belongs in the server config or a "
                    "virtual host; here only On or Off");
    }
    cc = apr_pcalloc(cmd->pool, sizeof(*cc));
    if ((err = adf_parse_size(cmd->pool, size, &cc->max))) {
        return fail(cmd, err);
    }
    if (cc->max < 64 * 1024) {
        return fail(cmd, apr_psprintf(cmd->pool, "MAXSIZE %s is below the "
                                      "least useful size, 64k", size));
    }
    cc->dir = ap_server_root_relative(cmd->pool, arg);
    if (!cc->dir) {
        return fail(cmd, apr_psprintf(cmd->pool, "bad path '%s'", arg));
    }
    len = strlen(cc->dir);
    while (len > 1 && cc->dir[len - 1] == '/') {
        len--;
    }
    cc->dir = apr_pstrmemdup(cmd->pool, cc->dir, len);
    cc->at = where(cmd);
    cc->index = -1;
    sc = ap_get_module_config(cmd->server->module_config,
                              &adaptive_deflate_module);
    sc->cache = cc;
    return NULL;
}

/* ---- dictionaries (adf_dict.c serves and uses them) --------------------- */

/* FILE's bytes, whole, into d (pconf: they are served and compressed
 * against for the configuration's life). */
static const char *read_dict(cmd_parms *cmd, adf_dict_conf_t *dc)
{
    apr_file_t *f;
    apr_finfo_t fi;
    apr_size_t got;
    unsigned char *buf;
    adf_digest_t dg;
    char hex[2 * 8 + 1];
    apr_status_t rv;

    if ((rv = apr_file_open(&f, dc->file, APR_READ | APR_BINARY,
                            APR_OS_DEFAULT, cmd->temp_pool)) != APR_SUCCESS
        || (rv = apr_file_info_get(&fi, APR_FINFO_SIZE | APR_FINFO_TYPE, f))
           != APR_SUCCESS) {
        char err[120];

        return apr_psprintf(cmd->pool, "cannot read %s: %s", dc->file,
                            apr_strerror(rv, err, sizeof(err)));
    }
    if (fi.filetype != APR_REG || fi.size <= 0 || fi.size > ADF_DICT_MAX) {
        return apr_psprintf(cmd->pool, "%s is %s: a dictionary is a file of "
                            "1 byte to %d MB", dc->file,
                            fi.filetype != APR_REG ? "not a regular file"
                            : fi.size <= 0 ? "empty" : "too large",
                            ADF_DICT_MAX >> 20);
    }
    buf = apr_palloc(cmd->pool, (apr_size_t)fi.size);
    rv = apr_file_read_full(f, buf, (apr_size_t)fi.size, &got);
    apr_file_close(f);
    if (rv != APR_SUCCESS || got != (apr_size_t)fi.size) {
        return apr_psprintf(cmd->pool, "cannot read %s whole", dc->file);
    }
    if (adf_digest_init(&dg) != 0) {
        return "out of memory";
    }
    adf_digest_update(&dg, buf, got);
    if (adf_digest_final(&dg, dc->dict.hash) != 0) {
        return "SHA-256 failed";
    }
    dc->dict.data = buf;
    dc->dict.len = got;
    dc->dict.stable = 1;    /* pconf's, for the configuration's life */
    adf_digest_hex(hex, dc->dict.hash, 8);
    dc->etag = apr_psprintf(cmd->pool, "\"adf-dict-%s\"", hex);
    return NULL;
}

static const char *set_dictionary(cmd_parms *cmd, void *cfg, int argc,
                                  char *const argv[])
{
    adf_srv_conf_t *sc = ap_get_module_config(cmd->server->module_config,
                                              &adaptive_deflate_module);
    adf_dict_conf_t *dc;
    const char *err, *quoted;
    long max_age = ADF_DICT_DEFAULT_MAX_AGE;
    int i;

    if ((err = ap_check_cmd_context(cmd, NOT_IN_DIR_CONTEXT))) {
        return err;
    }
    if (argc < 3) {
        return fail(cmd, "takes URL-PATH FILE match=PATTERN "
                    "[max-age=SECONDS]");
    }
    dc = apr_pcalloc(cmd->pool, sizeof(*dc));
    dc->url = argv[0];
    if (*dc->url != '/' || strpbrk(dc->url, "?#")) {
        return fail(cmd, apr_psprintf(cmd->pool, "URL-PATH '%s' is not a "
                                      "path (it starts with '/', without "
                                      "a query)", dc->url));
    }
    if (!(dc->file = ap_server_root_relative(cmd->pool, argv[1]))) {
        return fail(cmd, apr_psprintf(cmd->pool, "bad path '%s'", argv[1]));
    }
    for (i = 2; i < argc; i++) {
        if (!strncasecmp(argv[i], "match=", 6)) {
            dc->match = argv[i] + 6;
        }
        else if (!strncasecmp(argv[i], "max-age=", 8)) {
            if ((err = adf_parse_long(cmd->pool, argv[i] + 8, 1,
                                      10L * 365 * 86400, &max_age))) {
                return fail(cmd, apr_pstrcat(cmd->pool, "max-age: ", err,
                                             NULL));
            }
        }
        else {
            return fail(cmd, apr_psprintf(cmd->pool, "unknown option '%s' "
                                          "(match=, max-age=)", argv[i]));
        }
    }
    if (!dc->match) {
        return fail(cmd, "needs match=PATTERN: the paths whose responses "
                    "may be compressed against it");
    }
    if (!adf_dict_pattern_ok(dc->match)
        || !(quoted = adf_sf_quote(cmd->pool, dc->match))) {
        return fail(cmd, apr_psprintf(cmd->pool, "match pattern '%s' is not "
                                      "a path of literal characters and "
                                      "'*' (URL Pattern's other syntax is "
                                      "not supported)", dc->match));
    }
    if (!adf_coding(ADF_DCZ)) {
        return fail(cmd, "this build has no zstd, which dcz needs");
    }
    if ((err = read_dict(cmd, dc))) {
        return fail(cmd, err);
    }
    dc->at = where(cmd);
    dc->use_as = apr_pstrcat(cmd->pool, "match=", quoted, NULL);
    dc->cache_control = apr_psprintf(cmd->pool, "max-age=%ld", max_age);
    if (!sc->dicts) {
        sc->dicts = apr_array_make(cmd->pool, 2, sizeof(adf_dict_conf_t *));
    }
    for (i = 0; i < sc->dicts->nelts; i++) {
        if (!strcmp(DICT_AT(sc->dicts, i)->url, dc->url)) {
            return fail(cmd, apr_psprintf(cmd->pool, "%s is served already",
                                          dc->url));
        }
    }
    APR_ARRAY_PUSH(sc->dicts, const adf_dict_conf_t *) = dc;
    dicts_used = 1;
    return NULL;
}

/* Called once the records exist: the default type list is built here so
 * adf_conf_types never allocates per request. */
void adf_config_init(apr_pool_t *p)
{
    int i;

    default_types_set = adf_types_make(p);
    for (i = 0; default_types[i]; i++) {
        adf_types_add(default_types_set, p, default_types[i]);
    }
    adf_policy_defaults(&default_policy);
    default_policy.min_length = ADF_DEFAULT_MIN_LENGTH;
    notes_wanted = notes_read();
    trace_wanted = notes_wanted && trace_read();
    notes_mode = ADF_UNSET;     /* the next reading starts from Auto */
}

/* Per-response switches may be set in .htaccess (FileInfo); what sets how
 * much CPU a response may cost (levels, size caps) may not: on shared
 * hosting that is the server operator's call. */
#define DIR_CTX (RSRC_CONF | ACCESS_CONF | OR_FILEINFO)
#define COST_CTX (RSRC_CONF | ACCESS_CONF)
#define FLAG_AT(field) ((void *)APR_OFFSETOF(adf_dir_conf_t, field))

const command_rec adf_cmds[] = {
    AP_INIT_FLAG("AdaptiveDeflate", ap_set_flag_slot, FLAG_AT(enabled), DIR_CTX,
                 "On to compress responses of compressible types"),
    AP_INIT_TAKE_ARGV("AdaptiveDeflateTypes", set_types, NULL, DIR_CTX,
                      "media types to compress (replaces the default list)"),
    /* one per coding (adf_coding.h) */
#define LEVELS_ROW(id, name, directive) \
    AP_INIT_TAKE2(directive, set_levels, (void *)(apr_size_t)ADF_##id, \
                  COST_CTX, "MIN MAX: the levels of " #name " the " \
                  "controller moves in"),
    ADF_CODINGS(LEVELS_ROW)
#undef LEVELS_ROW
    AP_INIT_TAKE1("AdaptiveDeflateMinLength", set_number,
                  (void *)&min_length_slot, DIR_CTX,
                  "bytes: shorter responses are sent as they are"),
    AP_INIT_TAKE_ARGV("AdaptiveDeflateSizeLevels", set_caps, NULL, COST_CTX,
                      "SIZE:LEVEL ... caps the level by response size "
                      "('*' any size, 'unknown' no length), or 'none'"),
    AP_INIT_TAKE_ARGV("AdaptiveDeflateEncodings", set_encodings, NULL,
                      DIR_CTX, "codings in server preference order "
                      "(ties between equal q-values)"),
    AP_INIT_TAKE_ARGV("AdaptiveDeflateStatuses", set_statuses, NULL, DIR_CTX,
                      "status codes whose bodies may be compressed"),
    AP_INIT_FLAG("AdaptiveDeflateProxied", ap_set_flag_slot, FLAG_AT(proxied),
                 DIR_CTX, "Off to leave requests that came through a proxy "
                 "(Via) uncompressed"),
    AP_INIT_FLAG("AdaptiveDeflatePrecompressed", set_precompressed,
                 FLAG_AT(precompressed), DIR_CTX,
                 "On to serve fresh .br/.gz siblings of static files"),
    AP_INIT_TAKE1("AdaptiveDeflateLengthHiding", set_length_hiding, NULL,
                  DIR_CTX, "Off, or up to this many random bytes of "
                  "padding in each gzip header (BREACH mitigation)"),
    AP_INIT_TAKE12("AdaptiveDeflateCache", set_cache, NULL, DIR_CTX,
                   "DIR MAXSIZE: a cache of strongly compressed static files "
                   "(server config, virtual host); On|Off: use it here"),
    AP_INIT_FLAG("AdaptiveDeflateDictionaryVersions", set_dict_versions,
                 FLAG_AT(dict_versions), COST_CTX,
                 "On to keep the versions of static files served here as "
                 "dictionaries for their later versions (dcz; needs "
                 "AdaptiveDeflateCache)"),
    AP_INIT_TAKE_ARGV("AdaptiveDeflateDictionary", set_dictionary, NULL,
                      RSRC_CONF, "URL-PATH FILE match=PATTERN "
                      "[max-age=SECONDS]: a dictionary served at URL-PATH, "
                      "for responses whose path matches PATTERN (dcz)"),
    AP_INIT_TAKE1("AdaptiveDeflateLoadSource", set_source, NULL, RSRC_CONF,
                  "auto, cpus, cgroup, psi or file:PATH"),
    AP_INIT_TAKE1("AdaptiveDeflateLoadInterval", set_number,
                  (void *)&interval_slot, RSRC_CONF,
                  "how often the load is sampled (100ms to 60s)"),
    AP_INIT_TAKE1("AdaptiveDeflateCPUTarget", set_number,
                  (void *)&target_slot, RSRC_CONF,
                  "CPU percent the controller steers to"),
    AP_INIT_TAKE1("AdaptiveDeflateBandwidthTarget", set_bandwidth, NULL,
                  RSRC_CONF, "Off, or the egress rate (e.g. 800mbit) near "
                  "which compression matters; below it, less CPU is spent"),
    AP_INIT_TAKE2("AdaptiveDeflateCPULimit", set_limit, NULL, RSRC_CONF,
                  "OFF ON: stop compressing at OFF percent, resume below ON"),
    AP_INIT_TAKE1("AdaptiveDeflateNotes", set_notes, NULL, RSRC_CONF,
                  "Auto (where the configuration names them or a scripting "
                  "module is loaded), On or Off: the request notes"),
    { NULL }
};
