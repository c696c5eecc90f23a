/* Status: what the controller is doing and what the module did since the
 * server started.  HTML (self-contained: inline style and script, no
 * external assets) or, with "?json", the same figures as JSON. */
#include "adf_status.h"
#include "adf_cache.h"
#include "adf_config.h"
#include "adf_shm.h"

#include <apr_strings.h>
#include <http_protocol.h>
#include <mod_status.h>

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

static void json_counts(request_rec *r, const char *name,
                        const apr_uint64_t *v)
{
    const char *sep = "";
    int c;

    ap_rprintf(r, ",\"%s\":{", name);
    FOR_CODINGS(c) {
        ap_rprintf(r, "%s\"%s\":%" APR_UINT64_T_FMT, sep,
                   adf_coding_name((adf_coding_e)c), v[c]);
        sep = ",";
    }
    ap_rputs("}", r);
}

/* What the model believes of each level (ns per byte, ratio), and
 * which levels are on the frontier, per coding and kind of body. */
static void send_model(request_rec *r, const adf_stats_t *st,
                       const adf_policy_conf_t *pc)
{
    static const char *const kinds[ADF_NCLASSES] = { "streamed", "whole" };
    const char *sep = "";
    int c, k, l, i;

    ap_rputs(",\"model\":{", r);
    FOR_CODINGS(c) {
        ap_rprintf(r, "%s\"%s\":{\"scale\":[%.3f,%.3f]", sep,
                   adf_coding_name((adf_coding_e)c), st->model.scale[c][0],
                   st->model.scale[c][1]);
        for (k = 0; k < ADF_NCLASSES; k++) {
            adf_point_t pts[ADF_NLEVELS + 1];
            int n = adf_frontier(&st->model, (adf_coding_e)c, k,
                                 pc->level_min[c], pc->level_max[c], pts);
            const char *lsep = "";

            ap_rprintf(r, ",\"%s\":[", kinds[k]);
            for (l = adf_coding((adf_coding_e)c)->min_level;
                 l <= adf_coding((adf_coding_e)c)->max_level; l++) {
                double cost, ratio;
                int on = 0;

                adf_model_rung(&st->model, (adf_coding_e)c, l, k, &cost,
                               &ratio);
                for (i = 0; i < n; i++) {
                    on |= pts[i].level == l;
                }
                ap_rprintf(r, "%s{\"level\":%d,\"ns_per_byte\":%.3f,"
                           "\"ratio\":%.4f,\"frontier\":%s}", lsep, l,
                           cost, ratio, on ? "true" : "false");
                lsep = ",";
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
    int i, l, c, first;
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
               "\"compression_cpu\":%.2f,\"server_cpu\":%.2f",
               st->load.budget, st->top, st->spent, st->own);
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
    ap_rprintf(r, "},\"responses\":%" APR_UINT64_T_FMT, st->responses);
    json_counts(r, "compressed", st->coded);
    ap_rputs(",\"reasons\":{", r);
    for (i = 0; i < ADF_NREASONS; i++) {
        ap_rprintf(r, "%s\"%s\":%" APR_UINT64_T_FMT, i ? "," : "",
                   adf_reason_name((adf_reason_e)i), st->reasons[i]);
    }
    ap_rputs("}", r);
    json_counts(r, "bytes_in", st->bytes_in);
    json_counts(r, "bytes_out", st->bytes_out);
    ap_rputs(",\"levels\":{", r);
    sep = "";
    FOR_CODINGS(c) {
        ap_rprintf(r, "%s\"%s\":{", sep, adf_coding_name((adf_coding_e)c));
        for (l = 0, first = 1; l < ADF_NLEVELS; l++) {
            if (st->levels[c][l]) {
                ap_rprintf(r, "%s\"%d\":%" APR_UINT64_T_FMT, first ? "" : ",",
                           l, st->levels[c][l]);
                first = 0;
            }
        }
        ap_rputs("}", r);
        sep = ",";
    }
    ap_rputs("}", r);
    json_counts(r, "siblings", st->siblings);
    ap_rprintf(r, ",\"egress_bytes\":%" APR_UINT64_T_FMT, st->egress);
    send_model(r, st, pc);
    ap_rprintf(r, ",\"stale_siblings\":%" APR_UINT64_T_FMT, st->stale);
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

/* The page draws itself from ?json, so HTML and JSON never disagree. */
static const char page[] =
"<!DOCTYPE html>\n"
"<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
"<title>mod_adaptive_deflate status</title>\n"
"<style>\n"
"body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}\n"
"h1{font-size:1.3em}table{border-collapse:collapse;margin:.5em 0 1.5em}\n"
"td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}\n"
"th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}\n"
".k{display:inline-block;margin-right:2em}.k b{font-size:1.6em}\n"
"svg{border:1px solid #ccc;background:#fff}\n"
".raw{stroke:#bbb}.ema{stroke:#d33}.eff{stroke:#282}.lim{fill:#fdd}\n"
"</style></head>\n"
"<body data-chart=\"pending\">\n"
"<h1>mod_adaptive_deflate</h1>\n"
"<div id=\"keys\">loading&hellip;</div>\n"
"<h2>Load and effort, last minutes</h2>\n"
"<svg id=\"chart\" width=\"720\" height=\"240\" viewBox=\"0 0 720 240\" "
"role=\"img\" aria-label=\"load and effort\"></svg>\n"
"<p><span style=\"color:#bbb\">&#9632;</span> load sample "
"<span style=\"color:#d33\">&#9632;</span> smoothed load "
"<span style=\"color:#282\">&#9632;</span> effort (100 = maximum level)"
"</p>\n"
"<div id=\"tables\"></div>\n"
"<p><a href=\"?json\">JSON</a></p>\n"
"<script>\n"
"'use strict';\n"
"window.onerror=function(m){document.body.dataset.chart='error: '+m;};\n"
"function esc(s){return String(s).replace(/[&<>\"]/g,function(c){"
"return '&#'+c.charCodeAt(0)+';';});}\n"
"function row(cells,th){return '<tr>'+cells.map(function(c){"
"return (th?'<th>':'<td>')+esc(c)+(th?'</th>':'</td>');}).join('')+'</tr>';}\n"
"function table(head,rows){return '<table>'+row(head,1)+"
"rows.map(function(r){return row(r);}).join('')+'</table>';}\n"
"function pct(v){return v===null?'-':v.toFixed(1)+' %';}\n"
"function draw(d){\n"
" var svg=document.getElementById('chart'),W=720,H=240,span=0,h=d.history;\n"
" if(h.length){span=Math.max(60,-h[0][0]);}\n"
" function x(t){return W+t*W/(span||60);}\n"
" function y(v){return H-v*H/100;}\n"
" function line(i,cls,scale){var p=h.filter(function(s){return s[i]!==null;})"
".map(function(s){return x(s[0]).toFixed(1)+','+y(s[i]*scale).toFixed(1);});"
"return '<polyline class=\"'+cls+'\" fill=\"none\" stroke-width=\"2\" "
"points=\"'+p.join(' ')+'\"/>';}\n"
" var g='';[25,50,75].forEach(function(v){g+='<line x1=\"0\" x2=\"'+W+"
"'\" y1=\"'+y(v)+'\" y2=\"'+y(v)+'\" stroke=\"#eee\"/>';});\n"
" g+='<line x1=\"0\" x2=\"'+W+'\" y1=\"'+y(d.load.target)+'\" y2=\"'+"
"y(d.load.target)+'\" stroke=\"#d33\" stroke-dasharray=\"4 4\"/>';\n"
" svg.innerHTML=g+line(1,'raw',1)+line(2,'ema',1)+line(3,'eff',100);\n"
"}\n"
"function render(d){\n"
" var L=d.load,k='';\n"
" k+='<span class=\"k\">load <b>'+pct(L.raw)+'</b></span>';\n"
" k+='<span class=\"k\">smoothed <b>'+pct(L.smoothed)+'</b></span>';\n"
" k+='<span class=\"k\">effort <b>'+(L.effort*100).toFixed(0)+'</b></span>';\n"
" Object.keys(d.level).forEach(function(n){k+='<span class=\"k\">'+esc(n)+"
"' level <b>'+(d.level[n]===null?'-':d.level[n].toFixed(1))+'</b></span>';});\n"
" if(L.limited){k+='<span class=\"k\"><b>CPU limit: not compressing</b>"
"</span>';}\n"
" k+='<p>source: '+esc(L.source)+', every '+L.interval_ms+' ms; target '+"
"L.target+' %, limit '+L.limit_off+'/'+L.limit_on+' %; up '+d.uptime+' s</p>';\n"
" document.getElementById('keys').innerHTML=k;\n"
" var c=Object.keys(d.compressed),t='';\n"
" t+='<h2>Responses: '+d.responses+'</h2>';\n"
" t+=table(['coding','compressed','bytes in','bytes out','ratio','siblings'],"
"c.map(function(n){var i=d.bytes_in[n],o=d.bytes_out[n];return [n,"
"d.compressed[n],i,o,i?(100*o/i).toFixed(1)+' %':'-',d.siblings[n]];}));\n"
" t+=table(['reason','responses'],Object.keys(d.reasons).map(function(r){"
"return [r,d.reasons[r]];}));\n"
" var lv=[];c.forEach(function(n){Object.keys(d.levels[n]).forEach("
"function(l){if(lv.indexOf(+l)<0){lv.push(+l);}});});lv.sort(function(a,b){"
"return a-b;});\n"
" t+=table(['coding'].concat(lv.map(String)),c.map(function(n){return [n]"
".concat(lv.map(function(l){return d.levels[n][l]||0;}));}));\n"
" t+='<p>stale siblings ignored: '+d.stale_siblings+'</p>';\n"
" if(d.cache){t+='<h2>Compressed cache</h2>'+table(['directory','entries',"
"'bytes','max','hit ratio','evictions','writable'],d.cache.dirs.map("
"function(c){return [c.dir,c.entries,c.bytes,c.max_bytes,c.hit_ratio===null"
"?'-':(100*c.hit_ratio).toFixed(1)+' %',c.evictions,c.writable?'yes':'no'];}"
"))+'<p>queued: '+d.cache.queue+'; the server is '+(d.cache.idle?'idle: "
"the worker compresses':'busy: the worker waits')+'</p>';}\n"
" document.getElementById('tables').innerHTML=t;\n"
" draw(d);document.body.dataset.chart='ok';\n"
"}\n"
"function poll(){fetch('?json',{cache:'no-store'}).then(function(r){"
"return r.json();}).then(function(d){render(d);setTimeout(poll,"
"Math.max(1000,d.load.interval_ms));}).catch(function(e){"
"document.body.dataset.chart='error: '+e;setTimeout(poll,5000);});}\n"
"poll();\n"
"</script>\n"
"</body></html>\n";

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
    if (!r->args || strcmp(r->args, "json")) {
        ap_set_content_type(r, "text/html; charset=utf-8");
        if (!r->header_only) {
            ap_rputs(page, r);
        }
        return OK;
    }
    dc = ap_get_module_config(r->per_dir_config, &adaptive_deflate_module);
    adf_conf_policy(dc, &pc);
    st = apr_palloc(r->pool, sizeof(*st));
    adf_shm_stats(st);
    send_json(r, st, &pc);
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
