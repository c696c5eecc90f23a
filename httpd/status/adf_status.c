/* Status: what the controller is doing and what the module did since the
 * server started, from one snapshot (adf_shm_stats) in three forms: an
 * HTML page that draws itself from the JSON (adf_status.html, compiled
 * in), "?json", and "?metrics", the Prometheus text format 0.0.4.
 * docs/monitoring.md describes every figure. */
#include "adf_status.h"
#include "adf_cache.h"
#include "adf_config.h"
#include "adf_counters.h"
#include "adf_status_html.h"    /* adf_status_page[], made by make */

#include <apr_strings.h>
#include <http_protocol.h>
#include <mod_status.h>

#include <stdio.h>
#include <string.h>

/* A JSON string: quotes, backslashes and control characters escaped
 * (a load file's or a cgroup's path may hold any of them). */
static void json_str(request_rec *r, const char *v)
{
    const unsigned char *p = (const unsigned char *)(v ? v : "");

    ap_rputc('"', r);
    for (; *p; p++) {
        if (*p == '"' || *p == '\\') {
            ap_rputc('\\', r);
            ap_rputc(*p, r);
        }
        else if (*p < 0x20 || *p == 0x7f) {
            ap_rprintf(r, "\\u%04x", *p);
        }
        else {
            ap_rputc(*p, r);
        }
    }
    ap_rputc('"', r);
}

/* "first, then next": the codings this build has, for the loops below. */
#define FOR_CODINGS(c) \
    for (c = ADF_IDENTITY + 1; c < ADF_NCODINGS; c++) \
        if (adf_coding((adf_coding_e)c))

/* The mean level the budget buys on a coding's frontier for streamed
 * bodies ("none" counts as one below the lowest level: a mean under it
 * means some responses go uncompressed). */
static double mean_level(const adf_policy_conf_t *pc, adf_coding_e c,
                         const adf_load_view_t *load)
{
    adf_point_t pts[ADF_NLEVELS + 1];
    int n = adf_frontier(load->model, c, 0, pc->level_min[c],
                         pc->level_max[c], pts), i;
    double p;

    adf_frontier_at(pts, n, load->budget, &i, &p);
    if (pts[0].level == ADF_LEVEL_NONE) {
        pts[0].level = pc->level_min[c] - 1;
    }
    return p > 0 ? (1 - p) * pts[i].level + p * pts[i + 1].level
                 : pts[i].level;
}

static void json_num(request_rec *r, double v)
{
    if (v < 0) {
        ap_rputs("null", r);
    }
    else {
        ap_rprintf(r, "%.2f", v);
    }
}

/* ---- the counters, once ------------------------------------------------- */

/* Every counter of adf_stats_t, for both the JSON and the metrics: a
 * counter added there needs one line here. */
typedef enum {
    BY_NONE,            /* one number */
    BY_CODING,          /* [ADF_NCODINGS] */
    BY_REASON,          /* [ADF_NREASONS] */
    BY_LEVEL            /* [ADF_NCODINGS][ADF_NLEVELS] */
} by_e;

typedef struct {
    const char *json;   /* key in ?json */
    const char *metric; /* adaptive_deflate_<metric>_total; NULL: JSON only */
    by_e by;
    apr_size_t at;      /* offset in adf_stats_t */
    const char *help;
} counter_t;

#define AT(field) APR_OFFSETOF(adf_stats_t, field)

static const counter_t counters[] = {
    /* In the metrics, the sum of responses_total over its reasons. */
    { "responses", NULL, BY_NONE, AT(responses), NULL },
    { "compressed", "compressed_responses", BY_CODING, AT(coded),
      "Responses compressed on the fly." },
    { "reasons", "responses", BY_REASON, AT(reasons),
      "Responses with a body, by why they were or were not compressed "
      "(the adaptive_deflate_reason note)." },
    { "bytes_in", "input_bytes", BY_CODING, AT(bytes_in),
      "Bytes compressed on the fly, before compression." },
    { "bytes_out", "output_bytes", BY_CODING, AT(bytes_out),
      "The same responses' bytes after compression." },
    { "levels", "level_responses", BY_LEVEL, AT(levels),
      "Responses compressed on the fly, by level." },
    { "siblings", "sibling_responses", BY_CODING, AT(siblings),
      "Precompressed siblings served." },
    { "egress_bytes", "egress_bytes", BY_NONE, AT(egress),
      "Response body bytes sent, compressed or not." },
    { "stale_siblings", "stale_siblings", BY_NONE, AT(stale),
      "Precompressed siblings ignored because they were not fresh." },
    { "dictionary_hits", "dictionary_hits", BY_NONE, AT(dict_hits),
      "Responses sent as dcz against a dictionary the client named." },
    { "dictionary_misses", "dictionary_misses", BY_NONE, AT(dict_misses),
      "Requests that named a dictionary this server could not use." },
    { "dictionary_saved_bytes", "dictionary_saved_bytes", BY_NONE,
      AT(dict_saved), "Bytes dcz responses saved against the coding that "
      "would have gone out without the dictionary (estimated by the cost "
      "model's ratio for that coding and level)." },
};

static const apr_uint64_t *counter_of(const adf_stats_t *st,
                                      const counter_t *ct)
{
    return (const apr_uint64_t *)((const char *)st + ct->at);
}

/* ---- the cost model ----------------------------------------------------- */

static const char *const kinds[ADF_NCLASSES] = { "streamed", "whole" };

typedef struct {
    int level;
    double cost;        /* ns per byte */
    double ratio;       /* output / input */
    int frontier;       /* on the efficient frontier */
} rung_t;

/* What the model believes of each level of coding c for a kind of body,
 * and which levels are on the frontier; the number of levels. */
static int model_rungs(const adf_stats_t *st, const adf_policy_conf_t *pc,
                       adf_coding_e c, int kind, rung_t *out)
{
    const adf_coding_t *d = adf_coding(c);
    adf_point_t pts[ADF_NLEVELS + 1];
    int n = adf_frontier(&st->model, c, kind, pc->level_min[c],
                         pc->level_max[c], pts), l, i, k = 0;

    for (l = d->min_level; l <= d->max_level; l++, k++) {
        out[k].level = l;
        out[k].frontier = 0;
        adf_model_rung(&st->model, c, l, kind, &out[k].cost, &out[k].ratio);
        for (i = 0; i < n; i++) {
            out[k].frontier |= pts[i].level == l;
        }
    }
    return k;
}

/* ---- JSON --------------------------------------------------------------- */

static void json_counter(request_rec *r, const adf_stats_t *st,
                         const counter_t *ct)
{
    const apr_uint64_t *v = counter_of(st, ct);
    const char *sep = "", *lsep;
    int c, l;

    ap_rprintf(r, ",\"%s\":", ct->json);
    switch (ct->by) {
    case BY_NONE:
        ap_rprintf(r, "%" APR_UINT64_T_FMT, v[0]);
        return;
    case BY_REASON:
        for (l = 0; l < ADF_NREASONS; l++) {
            ap_rprintf(r, "%s\"%s\":%" APR_UINT64_T_FMT, l ? "," : "{",
                       adf_reason_name((adf_reason_e)l), v[l]);
        }
        ap_rputs("}", r);
        return;
    case BY_CODING:
    case BY_LEVEL:
        ap_rputs("{", r);
        FOR_CODINGS(c) {
            ap_rprintf(r, "%s\"%s\":", sep, adf_coding_name((adf_coding_e)c));
            sep = ",";
            if (ct->by == BY_CODING) {
                ap_rprintf(r, "%" APR_UINT64_T_FMT, v[c]);
                continue;
            }
            /* the levels in use only */
            ap_rputs("{", r);
            for (l = 0, lsep = ""; l < ADF_NLEVELS; l++) {
                if (v[c * ADF_NLEVELS + l]) {
                    ap_rprintf(r, "%s\"%d\":%" APR_UINT64_T_FMT, lsep, l,
                               v[c * ADF_NLEVELS + l]);
                    lsep = ",";
                }
            }
            ap_rputs("}", r);
        }
        ap_rputs("}", r);
        return;
    }
}

/* What the model believes of each level (ns per byte, ratio), and
 * which levels are on the frontier, per coding and kind of body. */
static void json_model(request_rec *r, const adf_stats_t *st,
                       const adf_policy_conf_t *pc)
{
    const char *sep = "";
    int c, k, i, n;

    ap_rputs(",\"model\":{", r);
    FOR_CODINGS(c) {
        ap_rprintf(r, "%s\"%s\":{\"scale\":[%.3f,%.3f]", sep,
                   adf_coding_name((adf_coding_e)c), st->model.scale[c][0],
                   st->model.scale[c][1]);
        for (k = 0; k < ADF_NCLASSES; k++) {
            rung_t rungs[ADF_NLEVELS];

            n = model_rungs(st, pc, (adf_coding_e)c, k, rungs);
            ap_rprintf(r, ",\"%s\":[", kinds[k]);
            for (i = 0; i < n; i++) {
                ap_rprintf(r, "%s{\"level\":%d,\"ns_per_byte\":%.3f,"
                           "\"ratio\":%.4f,\"frontier\":%s}", i ? "," : "",
                           rungs[i].level, rungs[i].cost, rungs[i].ratio,
                           rungs[i].frontier ? "true" : "false");
            }
            ap_rputs("]", r);
        }
        ap_rputs("}", r);
        sep = ",";
    }
    ap_rputs("}", r);
}

static void send_json(request_rec *r, const adf_stats_t *st,
                      const adf_policy_conf_t *pc)
{
    int i, c;
    const char *sep;
    apr_time_t now = apr_time_now();

    ap_set_content_type(r, "application/json");
    ap_rprintf(r, "{\"version\":\"%s\",\"uptime\":%" APR_TIME_T_FMT,
               ADF_VERSION, apr_time_sec(now - st->started));
    ap_rputs(",\"load\":{\"source\":", r);
    json_str(r, st->source);
    ap_rprintf(r, ",\"interval_ms\":%" APR_TIME_T_FMT ",\"raw\":",
               apr_time_as_msec(st->interval));
    json_num(r, st->load.raw);
    ap_rputs(",\"smoothed\":", r);
    json_num(r, st->load.ema);
    ap_rprintf(r, ",\"budget_ns_per_byte\":%.3f,\"top_ns_per_byte\":%.3f,"
               "\"idle_budget_ns_per_byte\":%.3f,"
               "\"compression_cpu\":%.2f,\"server_cpu\":%.2f,"
               "\"slow_share\":%.3f,\"goal\":%.1f,\"predicted\":",
               st->load.budget, st->top, st->load.idle_budget, st->spent,
               st->own, st->slow_share, st->goal);
    json_num(r, st->predicted);
    ap_rprintf(r, ",\"effort\":%.4f,\"limited\":%s,\"target\":%.0f,"
               "\"limit_off\":%.0f,\"limit_on\":%.0f,\"age_ms\":%"
               APR_TIME_T_FMT ",\"stale\":%s,\"sampler_pid\":%u,"
               "\"samples\":%" APR_UINT64_T_FMT ",\"signal_error\":",
               st->load.effort, st->load.limited ? "true" : "false",
               st->conf.target, st->conf.limit_off, st->conf.limit_on,
               apr_time_as_msec(st->load.age), st->load.stale ? "true"
                                                              : "false",
               st->sampler_pid, st->samples);
    if (st->signal_error) {
        json_str(r, st->signal_error);
    }
    else {
        ap_rputs("null", r);
    }
    ap_rputs("}", r);
    ap_rputs(",\"level\":{", r);
    sep = "";
    FOR_CODINGS(c) {
        ap_rprintf(r, "%s\"%s\":", sep, adf_coding_name((adf_coding_e)c));
        json_num(r, st->load.limited ? 0 : mean_level(pc, (adf_coding_e)c,
                                                      &st->load));
        sep = ",";
    }
    ap_rputs("}", r);
    for (i = 0; i < (int)(sizeof(counters) / sizeof(counters[0])); i++) {
        json_counter(r, st, &counters[i]);
    }
    json_model(r, st, pc);
    adf_cache_status_json(r, json_str);
    ap_rputs(",\"history\":[", r);
    for (i = 0; i < st->nhistory; i++) {
        const adf_sample_t *h = &st->history[i];
        ap_rprintf(r, "%s[%.1f,", i ? "," : "",
                   (double)(h->time - now) / APR_USEC_PER_SEC);
        json_num(r, h->raw);
        ap_rputs(",", r);
        json_num(r, h->ema);
        ap_rprintf(r, ",%.4f]", h->effort);
    }
    ap_rputs("]}\n", r);
}

/* ---- Prometheus text format 0.0.4 --------------------------------------- */

#define PROM_TYPE "text/plain; version=0.0.4; charset=utf-8"
#define PROM_PREFIX "adaptive_deflate_"

/* A label value: backslash, double quote and line feed escaped. */
static const char *prom_label(apr_pool_t *p, const char *v)
{
    char *out = apr_palloc(p, 2 * strlen(v ? v : "") + 1), *o = out;

    for (; v && *v; v++) {
        if (*v == '\\' || *v == '"') {
            *o++ = '\\';
            *o++ = *v;
        }
        else if (*v == '\n') {
            *o++ = '\\';
            *o++ = 'n';
        }
        else {
            *o++ = *v;
        }
    }
    *o = '\0';
    return out;
}

static void prom_family(request_rec *r, const char *name, const char *type,
                        const char *help)
{
    ap_rprintf(r, "# HELP " PROM_PREFIX "%s %s\n# TYPE " PROM_PREFIX "%s %s\n",
               name, help, name, type);
}

/* One sample; labels is "" or "{name=\"value\",...}".  C's %g, not
 * APR's, which writes 0.8 as ".8". */
static void prom_value(request_rec *r, const char *name, const char *labels,
                       double v)
{
    char num[32];

    snprintf(num, sizeof(num), "%.10g", v);
    ap_rprintf(r, PROM_PREFIX "%s%s %s\n", name, labels, num);
}

/* A gauge of one sample; none while v is negative (no reading yet). */
static void prom_gauge(request_rec *r, const char *name, const char *help,
                       double v)
{
    prom_family(r, name, "gauge", help);
    if (v >= 0) {
        prom_value(r, name, "", v);
    }
}

static void prom_counter(request_rec *r, const adf_stats_t *st,
                         const counter_t *ct)
{
    const apr_uint64_t *v = counter_of(st, ct);
    const char *name = apr_pstrcat(r->pool, ct->metric, "_total", NULL);
    int c, l;

    prom_family(r, name, "counter", ct->help);
    switch (ct->by) {
    case BY_NONE:
        ap_rprintf(r, PROM_PREFIX "%s %" APR_UINT64_T_FMT "\n", name, v[0]);
        break;
    case BY_REASON:
        for (l = 0; l < ADF_NREASONS; l++) {
            ap_rprintf(r, PROM_PREFIX "%s{reason=\"%s\"} %" APR_UINT64_T_FMT
                       "\n", name, adf_reason_name((adf_reason_e)l), v[l]);
        }
        break;
    case BY_CODING:
        FOR_CODINGS(c) {
            ap_rprintf(r, PROM_PREFIX "%s{coding=\"%s\"} %" APR_UINT64_T_FMT
                       "\n", name, adf_coding_name((adf_coding_e)c), v[c]);
        }
        break;
    case BY_LEVEL:
        /* every level of the coding: series that exist from the start */
        FOR_CODINGS(c) {
            const adf_coding_t *d = adf_coding((adf_coding_e)c);

            for (l = d->min_level; l <= d->max_level; l++) {
                ap_rprintf(r, PROM_PREFIX "%s{coding=\"%s\",level=\"%d\"} %"
                           APR_UINT64_T_FMT "\n", name, d->token, l,
                           v[c * ADF_NLEVELS + l]);
            }
        }
        break;
    }
}

/* One of the model's figures for every rung: 0 cost, 1 ratio, 2 frontier. */
static void prom_model(request_rec *r, const adf_stats_t *st,
                       const adf_policy_conf_t *pc, const char *name,
                       const char *help, int what)
{
    int c, k, i, n;

    prom_family(r, name, "gauge", help);
    FOR_CODINGS(c) {
        for (k = 0; k < ADF_NCLASSES; k++) {
            rung_t rungs[ADF_NLEVELS];

            n = model_rungs(st, pc, (adf_coding_e)c, k, rungs);
            for (i = 0; i < n; i++) {
                prom_value(r, name, apr_psprintf(r->pool, "{coding=\"%s\","
                                                 "body=\"%s\",level=\"%d\"}",
                                                 adf_coding_name((adf_coding_e)c),
                                                 kinds[k], rungs[i].level),
                           what == 0 ? rungs[i].cost / 1e9
                           : what == 1 ? rungs[i].ratio : rungs[i].frontier);
            }
        }
    }
}

/* The compressed cache's figures, per directory (none without a cache). */
static void prom_cache(request_rec *r)
{
    static const struct {
        const char *name, *type, *help;
        apr_size_t at;
    } fams[] = {
#define CACHE_AT(f) APR_OFFSETOF(adf_cache_dir_stats_t, f)
        { "cache_entries", "gauge", "Entries in the cache directory.",
          CACHE_AT(entries) },
        { "cache_bytes", "gauge", "Bytes the entries take.",
          CACHE_AT(bytes) },
        { "cache_hits_total", "counter", "Responses answered from the cache.",
          CACHE_AT(hits) },
        { "cache_misses_total", "counter", "Responses the cache could have "
          "answered but had no entry for (the file was queued).",
          CACHE_AT(misses) },
        { "cache_evictions_total", "counter", "Entries removed to stay "
          "within the directory's size.", CACHE_AT(evictions) },
        { "cache_written_total", "counter", "Entries written.",
          CACHE_AT(written) },
        { "cache_corrupt_total", "counter", "Damaged entries found and "
          "removed.", CACHE_AT(corrupt) },
#undef CACHE_AT
    };
    adf_cache_dir_stats_t d[ADF_CACHE_DIRS];
    apr_uint32_t queue;
    int n, i, f, idle;

    if (!(n = adf_cache_stats(d, ADF_CACHE_DIRS, &queue, &idle))) {
        return;
    }
    for (f = 0; f < (int)(sizeof(fams) / sizeof(fams[0])); f++) {
        prom_family(r, fams[f].name, fams[f].type, fams[f].help);
        for (i = 0; i < n; i++) {
            prom_value(r, fams[f].name,
                       apr_psprintf(r->pool, "{dir=\"%s\"}",
                                    prom_label(r->pool, d[i].dir)),
                       (double)*(const apr_uint64_t *)
                       ((const char *)&d[i] + fams[f].at));
        }
    }
    prom_family(r, "cache_max_bytes", "gauge", "AdaptiveDeflateCache's "
                "size for the directory.");
    for (i = 0; i < n; i++) {
        prom_value(r, "cache_max_bytes", apr_psprintf(
                       r->pool, "{dir=\"%s\"}", prom_label(r->pool, d[i].dir)),
                   (double)d[i].max_bytes);
    }
    prom_family(r, "cache_writable", "gauge", "0 while files cannot be "
                "written in the directory (a full disk): responses are "
                "compressed on the fly.");
    for (i = 0; i < n; i++) {
        prom_value(r, "cache_writable", apr_psprintf(
                       r->pool, "{dir=\"%s\"}", prom_label(r->pool, d[i].dir)),
                   d[i].writable);
    }
    prom_gauge(r, "cache_queue_length", "Files waiting for the worker.",
               queue);
    prom_gauge(r, "cache_idle", "1 while the server is idle enough for the "
               "worker to compress.", idle);
}

static void send_metrics(request_rec *r, const adf_stats_t *st,
                         const adf_policy_conf_t *pc)
{
    int i, c, k;

    ap_set_content_type(r, PROM_TYPE);
    prom_family(r, "info", "gauge", "The module's version and load source.");
    prom_value(r, "info", apr_psprintf(r->pool, "{version=\"%s\",source=\"%s\"}",
                                       ADF_VERSION,
                                       prom_label(r->pool, st->source)), 1);
    prom_gauge(r, "start_time_seconds", "When the counters started (Unix "
               "time): the last full start; a graceful restart keeps them.",
               st->started ? (double)st->started / APR_USEC_PER_SEC : -1);
    prom_gauge(r, "load_interval_seconds", "How often the load is sampled.",
               (double)st->interval / APR_USEC_PER_SEC);
    prom_gauge(r, "cpu_target_ratio", "AdaptiveDeflateCPUTarget.",
               st->conf.target / 100);
    prom_gauge(r, "cpu_limit_off_ratio", "AdaptiveDeflateCPULimit: stop "
               "compressing at or above.", st->conf.limit_off / 100);
    prom_gauge(r, "cpu_limit_on_ratio", "AdaptiveDeflateCPULimit: resume "
               "below.", st->conf.limit_on / 100);
    prom_gauge(r, "load_ratio", "The last load sample (1 = every CPU this "
               "server may use).", st->load.raw < 0 ? -1 : st->load.raw / 100);
    prom_gauge(r, "load_smoothed_ratio", "The smoothed load.",
               st->load.ema < 0 ? -1 : st->load.ema / 100);
    prom_gauge(r, "load_age_seconds", "Since the last good load sample.",
               (double)st->load.age / APR_USEC_PER_SEC);
    prom_gauge(r, "load_stale", "1 when no fresh sample came for two "
               "intervals: responses use the lowest levels.", st->load.stale);
    prom_gauge(r, "load_error", "1 while the load source cannot be read.",
               st->signal_error != NULL);
    prom_family(r, "load_samples_total", "counter", "Load samples taken.");
    ap_rprintf(r, PROM_PREFIX "load_samples_total %" APR_UINT64_T_FMT "\n",
               st->samples);
    prom_gauge(r, "server_cpu_ratio", "The server's own CPU use in the last "
               "interval.", st->own / 100);
    prom_gauge(r, "compression_cpu_ratio", "Of it, what compression cost "
               "(by the model).", st->spent / 100);
    prom_gauge(r, "limited", "1 while above the CPU limit: nothing new is "
               "compressed.", st->load.limited);
    prom_gauge(r, "effort_ratio", "The budget on a log scale from nothing "
               "(0) to the dearest level in use (1).", st->load.effort);
    prom_gauge(r, "slow_share_ratio", "Of the compressible bytes whose "
               "client's path was measured, the share for clients whose "
               "link is the limit (smoothed).", st->slow_share);
    prom_gauge(r, "budget_cpu_seconds_per_byte", "The CPU a response may "
               "spend per byte: the controller's output.",
               st->load.budget / 1e9);
    prom_gauge(r, "budget_max_cpu_seconds_per_byte", "What the dearest level "
               "in use costs per byte.", st->top / 1e9);
    prom_family(r, "level", "gauge", "The mean level the budget buys for "
                "streamed bodies (one below the lowest: not compressing).");
    FOR_CODINGS(c) {
        prom_value(r, "level", apr_psprintf(r->pool, "{coding=\"%s\"}",
                                            adf_coding_name((adf_coding_e)c)),
                   st->load.limited ? 0 : mean_level(pc, (adf_coding_e)c,
                                                     &st->load));
    }
    for (i = 0; i < (int)(sizeof(counters) / sizeof(counters[0])); i++) {
        if (counters[i].metric) {
            prom_counter(r, st, &counters[i]);
        }
    }
    prom_family(r, "model_cost_scale", "gauge", "This machine's measured "
                "compression cost over the built-in priors.");
    FOR_CODINGS(c) {
        for (k = 0; k < ADF_NCLASSES; k++) {
            prom_value(r, "model_cost_scale",
                       apr_psprintf(r->pool, "{coding=\"%s\",body=\"%s\"}",
                                    adf_coding_name((adf_coding_e)c),
                                    kinds[k]), st->model.scale[c][k]);
        }
    }
    prom_model(r, st, pc, "model_cpu_seconds_per_byte", "What a level costs "
               "per input byte, as the model believes.", 0);
    prom_model(r, st, pc, "model_output_ratio", "Output over input bytes "
               "at a level, as the model believes.", 1);
    prom_model(r, st, pc, "model_frontier", "1 when a level is on the "
               "efficient frontier (worth its cost).", 2);
    prom_cache(r);
}

/* ---- the handler -------------------------------------------------------- */

/* "?name", or "?name=" (what Prometheus sends for params: {name: [""]}). */
static int query_is(const char *args, const char *name)
{
    apr_size_t n = strlen(name);

    return args && !strncmp(args, name, n)
           && (!args[n] || (args[n] == '=' && !args[n + 1]));
}

int adf_status_handler(request_rec *r)
{
    adf_dir_conf_t *dc;
    adf_policy_conf_t pc;
    adf_stats_t *st;

    if (!r->handler || strcmp(r->handler, ADF_STATUS_HANDLER)) {
        return DECLINED;
    }
    r->allowed = AP_METHOD_BIT << M_GET;
    if (r->method_number != M_GET) {
        return HTTP_METHOD_NOT_ALLOWED;
    }
    apr_table_setn(r->headers_out, "Cache-Control", "no-store");
    if (!query_is(r->args, "json") && !query_is(r->args, "metrics")) {
        ap_set_content_type(r, "text/html; charset=utf-8");
        if (!r->header_only) {
            ap_rwrite(adf_status_page, sizeof(adf_status_page), r);
        }
        return OK;
    }
    dc = ap_get_module_config(r->per_dir_config, &adaptive_deflate_module);
    adf_conf_policy(dc, &pc);
    st = apr_palloc(r->pool, sizeof(*st));
    adf_shm_stats(st);
    if (query_is(r->args, "json")) {
        send_json(r, st, &pc);
    }
    else {
        send_metrics(r, st, &pc);
    }
    return OK;
}

int adf_status_hook(request_rec *r, int flags)
{
    adf_stats_t *st = apr_palloc(r->pool, sizeof(*st));
    apr_uint64_t in = 0, out = 0, coded = 0, siblings = 0;
    int c;

    if (!adf_shm_stats(st)) {
        return OK;
    }
    FOR_CODINGS(c) {
        in += st->bytes_in[c];
        out += st->bytes_out[c];
        coded += st->coded[c];
        siblings += st->siblings[c];
    }
    if (flags & AP_STATUS_SHORT) {
        ap_rprintf(r, "AdaptiveDeflateLoad: %.1f\n", st->load.raw);
        ap_rprintf(r, "AdaptiveDeflateEffort: %.3f\n", st->load.effort);
        ap_rprintf(r, "AdaptiveDeflateLimited: %d\n", st->load.limited);
        /* No sample for two intervals: the lowest levels, whatever the load. */
        ap_rprintf(r, "AdaptiveDeflateStale: %d\n", st->load.stale);
        ap_rprintf(r, "AdaptiveDeflateResponses: %" APR_UINT64_T_FMT "\n",
                   st->responses);
        ap_rprintf(r, "AdaptiveDeflateCompressed: %" APR_UINT64_T_FMT "\n",
                   coded);
        ap_rprintf(r, "AdaptiveDeflateBytesIn: %" APR_UINT64_T_FMT "\n", in);
        ap_rprintf(r, "AdaptiveDeflateBytesOut: %" APR_UINT64_T_FMT "\n", out);
        adf_cache_status_hook(r, flags);
        return OK;
    }
    ap_rputs("<hr>\n<h2>mod_adaptive_deflate</h2>\n<dl>", r);
    ap_rprintf(r, "<dt>CPU load %.1f %% (smoothed %.1f %%), effort %.2f%s"
               "</dt>\n", st->load.raw, st->load.ema, st->load.effort,
               st->load.limited ? ", above the CPU limit" : "");
    ap_rprintf(r, "<dt>%" APR_UINT64_T_FMT " responses, %" APR_UINT64_T_FMT
               " compressed, %" APR_UINT64_T_FMT " siblings, %"
               APR_UINT64_T_FMT " skipped for CPU</dt>\n", st->responses,
               coded, siblings,
               st->reasons[ADF_R_CPU_LIMIT] + st->reasons[ADF_R_LOAD]);
    ap_rprintf(r, "<dt>%" APR_UINT64_T_FMT " bytes compressed to %"
               APR_UINT64_T_FMT "</dt>\n</dl>\n", in, out);
    adf_cache_status_hook(r, flags);
    return OK;
}
