/* report_html.c - DIR/report.html: one self-contained page.
 *
 * Everything is inside the file: the style, the timelines (inline SVG, report_svg.c)
 * and the flame graphs.  A flame graph is the flamegraph tool's own interactive SVG
 * (flamegraph/render.c), embedded as an <iframe> whose src is a data:image/svg+xml
 * URL: the SVG stays a document of its own, so its script (click to zoom, Search,
 * Ctrl-F, Reset Zoom) runs unchanged, its element ids do not clash with the page's
 * or another graph's, and nothing is fetched (it works from file:// and as an
 * attachment).  Text from the capture is hostile: it goes through rp_html_esc, once,
 * here (the timeline's too).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../flamegraph/fg.h"
#include "report.h"
#include "report_explore_js.inc" /* ex_script: spanfold/report_explore.js */
#include "sf_base64.h"
#include "sf_opt.h"
#include "sf_text.h"

/* The one HTML escaper of the report (lib's shared escaper replaces it in one line). */
void rp_html_esc(FILE *f, const char *s)
{
    if (s)
        sf_text_xml(f, s, strlen(s)); /* the one XML/HTML text sanitiser (lib/sf_text) */
}

static const char style[] =
    "body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#222;"
    "background:#fafafa}\n"
    "main{max-width:1160px;margin:0 auto;padding:16px 20px 40px}\n"
    "h1{font-size:22px;margin:8px 0 2px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px "
    "solid #ddd;padding-bottom:4px}h3{font-size:15px;margin:18px 0 4px}\n"
    ".meta{color:#666;font-size:13px}\n"
    ".verdict{background:#fff4e5;border-left:5px solid #e8590c;padding:12px 16px;"
    "font-size:18px;margin:14px 0}\n"
    ".verdict.calm{background:#ebfbee;border-color:#2b8a3e}\n"
    ".notes{color:#a61e4d;font-size:14px}\n"
    ".findings{margin:2px 0 6px;font-size:14px}details.healthy{margin:14px 0}"
    "details.healthy>summary{cursor:pointer;font-size:15px;color:#2b8a3e}\n"
    "nav a{margin-right:14px;font-size:14px}\n"
    "table{border-collapse:collapse;margin:6px 0 10px;background:#fff;font-size:14px}\n"
    "th,td{border:1px solid #ddd;padding:3px 8px;text-align:left}td.n{text-align:right;"
    "font-variant-numeric:tabular-nums}th{background:#f1f3f5}\n"
    "svg.timeline,svg.breakdown{background:#fff;border:1px solid #ddd;max-width:100%;"
    "height:auto}svg.breakdown .tl{font-size:11px;fill:#444}\n"
    "svg.timeline .grid{stroke:#eee}svg.timeline .frame{fill:none;stroke:#bbb}\n"
    "svg.timeline .tick{stroke:#888}svg.timeline .tl{font-size:11px;fill:#444}\n"
    "svg.timeline .al{font-size:12px;fill:#222}svg.timeline .ml{font-size:11px;"
    "font-weight:600}\n"
    "iframe.fg{border:1px solid #ddd;background:#fff;width:1224px;max-width:100%}\n"
    ".small{font-size:13px;color:#555}\n"
    "h3.ep{cursor:pointer}h3.ep.on{color:#4263eb}h3.ep.on::after{content:' (selected)';"
    "font-size:12px}\n"
    "#ex-bar{display:flex;flex-wrap:wrap;gap:6px;align-items:center;margin:6px 0}"
    "#ex-bar button{font:inherit;font-size:13px;padding:2px 10px;border:1px solid #adb5bd;"
    "background:#fff;border-radius:3px;cursor:pointer}#ex-bar button.on{background:#dbe4ff;"
    "border-color:#4263eb}\n"
    "#ex-status{font-size:14px;width:100%}#ex-float{position:fixed;right:12px;bottom:12px;"
    "max-width:420px;background:#fff;border:1px solid #4263eb;padding:6px 10px;font-size:12px;"
    "box-shadow:0 2px 8px #0002;cursor:pointer}\n"
    "svg.fl{background:#fff;border:1px solid #ddd;width:100%;height:auto;font:11px "
    "monospace}svg.fl g.fr{cursor:pointer}svg.fl g.fr:hover rect{stroke:#000;"
    "stroke-width:.5}\n"
    "#ex-slowest tr[data-span]{cursor:pointer}#ex-slowest tr.on{background:#dbe4ff}"
    "#ex-request-svg{background:#fff;border:1px solid #ddd;width:100%;height:auto}"
    "#ex-request-svg .tl{font-size:11px;fill:#444}\n";

/* Render folded text as the flamegraph tool's SVG into *svg (malloc'ed).  The options
 * go through flamegraph's own parser, which fills the defaults that follow from them. */
static int render_svg(const char *folded, size_t len, const char *title, const char *subtitle,
                      const char *unit, char **svg, size_t *svglen)
{
    char *argv[] = {"flamegraph",  "--title",    (char *)title, "--subtitle", (char *)subtitle,
                    "--countname", (char *)unit, "--quiet",     NULL};
    struct fg_ctx fc;
    struct fg_opts o;
    struct sf_buf line;
    struct sf_err err;
    FILE *m;
    size_t i = 0;
    int rc = 0;

    fg_opts_defaults(&o);
    optind = 0;
    if (opts_parse(8, argv, &o) < 0 || (m = open_memstream(svg, svglen)) == NULL)
        return -1;
    sf_buf_init(&line, 64u << 20);
    if (fg_ctx_init(&fc, &o, m) < 0)
        rc = -1;
    while (rc == 0 && i < len) {
        const char *nl = memchr(folded + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (folded + i)) : len - i;
        sf_buf_reset(&line);
        /* folded_add_line may rewrite the line in place: it gets a copy */
        if (n && (sf_buf_append(&line, folded + i, n) < 0 || sf_buf_append(&line, "", 1) < 0 ||
                  folded_add_line(&fc, (char *)line.data, n, &err) < 0))
            rc = -1;
        i += n + 1;
    }
    if (rc == 0 && fg_render(&fc, title) != 0)
        rc = -1;
    fg_ctx_free(&fc);
    sf_buf_free(&line);
    if (fclose(m) != 0)
        rc = -1;
    return rc;
}

/* The SVG's own height attribute, for the frame that holds it. */
static double svg_height(const char *svg)
{
    const char *h = strstr(svg, " height=\"");
    return h ? strtod(h + 9, NULL) : 600;
}

static void flame(FILE *f, const struct rp_ctx *c, const char *id, const struct sf_buf *folded,
                  const char *title, const char *subtitle, const char *caption)
{
    char *svg = NULL, *b64;
    size_t len = 0;

    fprintf(f, "<h3>%s</h3>\n", caption);
    if (folded->len == 0 || render_svg((const char *)folded->data, folded->len, title, subtitle,
                                       c->count_unit, &svg, &len) < 0) {
        fputs("<p class=\"small\">No samples in this set.</p>\n", f);
        free(svg);
        return;
    }
    if ((b64 = malloc(len / 3 * 4 + 8)) != NULL) {
        b64[sf_base64_encode(b64, (const uint8_t *)svg, len, 1)] = 0;
        fprintf(f,
                "<iframe class=\"fg\" id=\"%s\" title=\"%s\" height=\"%.0f\" "
                "src=\"data:image/svg+xml;base64,%s\"></iframe>\n",
                id, title, svg_height(svg) + 24, b64);
        free(b64);
    }
    free(svg);
}

static void num_cell(FILE *f, double v, const char *fmt)
{
    fputs("<td class=\"n\">", f);
    if (isfinite(v))
        fprintf(f, fmt, v);
    else
        fputs("\xe2\x80\x94", f); /* an em dash: not enough data */
    fputs("</td>", f);
}

static void text_cell(FILE *f, const char *s)
{
    fputs("<td>", f);
    rp_html_esc(f, s);
    fputs("</td>", f);
}

static void head(FILE *f, const char *const *cells, int n)
{
    fputs("<table><tr>", f);
    for (int i = 0; i < n; i++)
        fprintf(f, "<th>%s</th>", cells[i]);
    fputs("</tr>\n", f);
}

static void verdict(FILE *f, const struct rp_ctx *c)
{
    char v[2048];
    int calm = rp_headline(c) < 0 && c->ndrifts == 0;

    rp_verdict(c, v, sizeof(v));
    fprintf(f, "<section id=\"verdict\"><div class=\"verdict%s\">", calm ? " calm" : "");
    if (v[0])
        v[0] = (char)(v[0] >= 'a' && v[0] <= 'z' ? v[0] - 32 : v[0]);
    rp_html_esc(f, v);
    fputs(".</div>\n", f);
    if (c->nnotes) {
        fputs("<ul class=\"notes\">", f);
        for (int i = 0; i < c->nnotes; i++) {
            fputs("<li>", f);
            rp_html_esc(f, c->notes[i]);
            fputs("</li>", f);
        }
        fputs("</ul>\n", f);
    }
    fputs("</section>\n", f);
}

/* The findings of group g in words, above its chart ("p50 step 5 -> 20 ms at
 * 10:21:20.123Z"), or nothing. */
static void findings_of(FILE *f, const struct rp_ctx *c, size_t g)
{
    char label[256], t[64];
    int open = 0;

    for (size_t i = 0; i < c->ncps + c->ndrifts + c->ncpuqs; i++) {
        int64_t when;
        if (i < c->ncps) {
            if (c->cps[i].group != g)
                continue;
            rp_cp_label(&c->cps[i], label, sizeof(label));
            when = c->cps[i].time_ns;
        } else if (i < c->ncps + c->ndrifts) {
            const struct rp_drift *d = &c->drifts[i - c->ncps];
            if (d->group != g)
                continue;
            rp_drift_label(d, label, sizeof(label));
            when = d->time_ns;
        } else {
            const struct rp_cpuq *q = &c->cpuqs[i - c->ncps - c->ndrifts];
            if (q->group != g)
                continue;
            rp_cpuq_label(q, label, sizeof(label));
            when = q->time_ns;
        }
        fputs(open ? "<li>" : "<ul class=\"findings\"><li>", f);
        open = 1;
        rp_html_esc(f, label);
        fputs(" at ", f);
        rp_html_esc(f, rp_time_text(t, sizeof(t), when, c->o.tz));
        fputs("</li>", f);
    }
    if (open)
        fputs("</ul>\n", f);
}

/* Where the time went, for group g's largest latency inflection: the words and the two
 * bars, below its chart (the chart, with its heatmap, comes first on the screen). */
static void breakdown_of(FILE *f, const struct rp_ctx *c, size_t g)
{
    {
        const struct rp_why *best = NULL;
        for (size_t i = 0; i < c->nwhys; i++) {
            const struct rp_why *y = &c->whys[i];
            if (c->cps[y->cp].group == g && y->cause != RP_CAUSE_NONE &&
                (best == NULL ||
                 y->slow.dur_ns - y->normal.dur_ns > best->slow.dur_ns - best->normal.dur_ns))
                best = y;
        }
        if (best) {
            fprintf(f,
                    "<p class=\"small\">Where the time went, per request before and after "
                    "it: %.0f %% of the added time is %s",
                    100 * best->share, rp_cause_name(best->cause));
            if (best->reason != SIZE_MAX && best->cause == RP_CAUSE_BLOCKED) {
                fputs(" (in ", f);
                rp_html_esc(f, c->cause_reasons[best->reason]);
                fputs(")", f);
            }
            if (best->cause2 != RP_CAUSE_NONE) /* a mixed slowdown: both named */
                fprintf(f, ", and %.0f %% %s", 100 * best->share2, rp_cause_name(best->cause2));
            if (best->reason != SIZE_MAX && best->cause2 == RP_CAUSE_BLOCKED) {
                fputs(" (in ", f);
                rp_html_esc(f, c->cause_reasons[best->reason]);
                fputs(")", f);
            }
            fputs(".</p>\n", f);
            rp_svg_breakdown(f, c, best);
        }
    }
}

static void timelines(FILE *f, const struct rp_ctx *c)
{
    uint64_t n95 = 0, n99 = 0, nw = 0;
    size_t *order = malloc((c->sw.ng ? c->sw.ng : 1) * sizeof(*order)), with;

    fputs("<section id=\"timeline\"><h2>Timeline per endpoint</h2>\n", f);
    if (order == NULL) {
        fputs("<p>Out of memory.</p></section>\n", f);
        return;
    }
    /* endpoints with findings first, the worst first; the healthy ones folded */
    with = rp_group_order(c, order);
    for (size_t k = 0; k < c->sw.ng; k++) {
        size_t g = order[k];
        if (k == with)
            fprintf(f,
                    "<details class=\"healthy\"><summary>%zu endpoint%s without a finding "
                    "(no inflection, no drift)</summary>\n",
                    c->sw.ng - with, c->sw.ng - with == 1 ? "" : "s");
        fputs("<h3 class=\"ep\" data-ep=\"", f);
        rp_html_esc(f, c->sw.g[g].name);
        fputs("\">", f);
        rp_html_esc(f, c->sw.g[g].name);
        fputs("</h3>\n", f);
        findings_of(f, c, g);
        rp_svg_timeline(f, c, g);
        breakdown_of(f, c, g);
        for (size_t w = 0; w < c->sw.nwin; w++) {
            nw += c->sw.g[g].spans[w] > 0;
            n95 += isfinite(c->sw.g[g].m[SF_M_P95][w]);
            n99 += isfinite(c->sw.g[g].m[SF_M_P99][w]);
        }
    }
    if (with < c->sw.ng)
        fputs("</details>\n", f);
    free(order);
    fprintf(f,
            "<p class=\"small\">Windows of %g s. Latency is request first byte to response last "
            "byte, on the wire. p95 is drawn only for windows of at least 21 spans and p99 of at "
            "least 101 (below that a nearest-rank percentile is just the window's slowest "
            "request): p95 in %llu and p99 in %llu of %llu windows with spans. Below the lines, "
            "every request by its latency on a log scale, darker where a window has more requests "
            "in a row: the tail shows there where no percentile can be drawn. The kept share "
            "is per trace; the faint line is the configured rate, or the first regime's share "
            "when none is configured.</p></section>\n",
            (double)c->sw.window_ns / 1e9, (unsigned long long)n95, (unsigned long long)n99,
            (unsigned long long)nw);
}

/* The explorer: its controls (hidden until its script has read the data, so that the
 * page without JavaScript shows only what works there), the data deflated and
 * base64'ed (inert in the page whatever the captured strings hold), the script. */
static void explore(FILE *f, const struct rp_ctx *c)
{
    const struct sf_buf *j = &c->explore;
    uLongf zlen = compressBound((uLong)j->len);
    unsigned char *z = malloc(zlen);
    char *b64 = NULL;
    int deflated = z && compress2(z, &zlen, j->data, (uLong)j->len, 6) == Z_OK;
    const unsigned char *raw = deflated ? z : j->data;
    size_t rawlen = deflated ? (size_t)zlen : j->len;

    fputs("<section id=\"explore\"><h2>Explore</h2>\n<noscript><p class=\"small\">The "
          "explorer (a flame graph of any time range or endpoint, its differential and sandwich "
          "views, one request's timeline) needs JavaScript; every other section of this page is "
          "the same without it.</p></noscript>\n<div id=\"ex-ui\" hidden>\n<p "
          "class=\"small\">Drag across any timeline above to select the requests that started "
          "in that range, or click an endpoint's name; this section then shows the CPU of "
          "exactly those requests, folded here from the samples this page carries, or with Off "
          "CPU the time their threads waited, by the stack that blocked. Click a "
          "frame to zoom and to pick its function for the sandwich view. Escape clears, the "
          "arrow keys move the range by its width, and the address holds the view: a link to it "
          "opens the same selection.</p>\n<div id=\"ex-bar\"><span id=\"ex-status\">Reading "
          "the data\xe2\x80\xa6</span><button id=\"ex-what-cpu\">On CPU</button><button "
          "id=\"ex-what-offcpu\">Off CPU (waiting)</button><button id=\"ex-view-flame\">Flame "
          "graph</button><button "
          "id=\"ex-view-diff\">Differential against the rest</button><button "
          "id=\"ex-view-sandwich\">Sandwich of the function</button><button "
          "id=\"ex-clear\">Clear (Esc)</button></div>\n<svg id=\"ex-flame\" class=\"fl\" "
          "xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 1200 40\"></svg>\n<div "
          "id=\"ex-sandwich\" hidden><p id=\"ex-sandwich-total\"></p><h3>Its callers (the "
          "function at the bottom)</h3><svg id=\"ex-callers\" class=\"fl\" "
          "xmlns=\"http://www.w3.org/2000/svg\"></svg><h3>Its callees</h3><svg "
          "id=\"ex-callees\" class=\"fl\" xmlns=\"http://www.w3.org/2000/svg\"></svg></div>\n"
          "<h3>The slowest requests of the selection</h3><p class=\"small\">Click one for its "
          "timeline.</p><table id=\"ex-slowest\"></table>\n<div id=\"ex-request\" hidden><h3 "
          "id=\"ex-request-title\"></h3><svg id=\"ex-request-svg\" "
          "xmlns=\"http://www.w3.org/2000/svg\"></svg><p class=\"small\">Its phases on the wire "
          "(the TCP and TLS handshakes of the connection it opened, request, server, response), "
          "the CPU samples attributed to it in time order (colour: "
          "the leaf function; hover for the stack), the intervals its thread was off CPU (hover "
          "for the stack that blocked) and its span markers.</p></div>\n"
          "<div id=\"ex-float\" hidden></div></div>\n",
          f);
    if (raw && (b64 = malloc(SF_BASE64_ENCODED_LEN(rawlen) + 1)) != NULL) {
        size_t n = sf_base64_encode(b64, raw, rawlen, 1);
        fprintf(f,
                "<script type=\"application/octet-stream\" id=\"sf-explore-data\" "
                "data-format=\"%s\" data-bytes=\"%zu\" data-samples=\"%zu\" "
                "data-spans=\"%zu\">\n",
                deflated ? "deflate+base64" : "base64", j->len, c->explore_samples,
                c->explore_spans);
        for (size_t i = 0; i < n; i += 1024) /* lines, so that the file stays readable */
            fprintf(f, "%.*s\n", (int)(n - i < 1024 ? n - i : 1024), b64 + i);
        fprintf(f, "</script>\n<script>\n%s</script>\n", ex_script);
    } else
        fputs("<p>Out of memory for the explorer's data.</p>\n", f);
    fputs("</section>\n", f);
    free(b64);
    free(z);
}

static void inflections(FILE *f, const struct rp_ctx *c)
{
    static const char *const h[] = {"endpoint", "metric", "kind", "time", "before", "after"};
    char t[64];

    fputs("<section id=\"inflections\"><h2>Inflection points</h2>\n", f);
    if (c->ncps == 0) {
        fputs("<p>No inflection point in any endpoint's latency, error rate, throughput or kept "
              "share.</p></section>\n",
              f);
        return;
    }
    head(f, h, 6);
    for (size_t i = 0; i < c->ncps; i++) {
        const struct rp_cp *p = &c->cps[i];
        int share = p->metric == SF_M_ERROR_RATE || p->metric == SF_M_SAMPLED_SHARE;
        const char *fmt = share ? "%.1f %%" : p->metric == SF_M_THROUGHPUT ? "%.1f /s" : "%.1f ms";
        fputs("<tr>", f);
        text_cell(f, c->sw.g[p->group].name);
        text_cell(f, sf_spans_metric_name(p->metric));
        text_cell(f, cp_kind_name(p->kind));
        text_cell(f, rp_time_text(t, sizeof(t), p->time_ns, c->o.tz));
        num_cell(f, share ? 100 * p->before : p->before, fmt);
        num_cell(f, share ? 100 * p->after : p->after, fmt);
        fputs("</tr>\n", f);
    }
    fputs("</table><p class=\"small\">A p50 step's time is the first request of the new "
          "regime; other times are the start of the window.</p></section>\n",
          f);
}

static void sampling(FILE *f, const struct rp_ctx *c)
{
    static const char *const h[] = {"endpoint",   "reference rate", "kept before",
                                    "kept after", "from",           "why"};
    char t[64];

    fputs("<section id=\"sampling\"><h2>Sampling drift</h2>\n", f);
    if (c->ndrifts == 0) {
        fputs("<p>The kept share of traces stayed at its reference rate on every "
              "endpoint.</p></section>\n",
              f);
        return;
    }
    head(f, h, 6);
    for (size_t i = 0; i < c->ndrifts; i++) {
        const struct rp_drift *d = &c->drifts[i];
        char why[600] = "";
        fputs("<tr>", f);
        text_cell(f, c->sw.g[d->group].name);
        if (d->configured && !isfinite(d->expect))
            text_cell(f, "tracestate ot=th");
        else
            fprintf(f, "<td class=\"n\">%.2f%s</td>", d->expect,
                    d->configured ? " (configured)" : " (estimated)");
        num_cell(f, d->from_rate, "%.2f");
        num_cell(f, d->to_rate, "%.2f");
        text_cell(f, rp_time_text(t, sizeof(t), d->time_ns, c->o.tz));
        if (d->explained)
            sf_explain_words(&d->ex, d->direction < 0, why, sizeof(why));
        text_cell(f, why);
        fputs("</tr>\n", f);
    }
    fputs("</table></section>\n", f);
}

/* The slowest requests, each with its phases from the capture and its CPU. */
static void slowest(FILE *f, const struct rp_ctx *c)
{
    static const char *const h[] = {"endpoint",  "started",     "duration ms", "request ms",
                                    "server ms", "response ms", "CPU ms",      "span id"};
    size_t idx[RP_SLOWEST], n = rp_slowest(c, idx);
    char t[64];

    if (n == 0)
        return;
    fputs("<section id=\"slowest\"><h2>The slowest requests</h2>\n<p class=\"small\">Each "
          "request's time on the wire: its request's first to last byte, the server's time "
          "(last request byte to first response byte), the response's first to last byte; "
          "and the CPU its thread spent on it.</p>\n",
          f);
    head(f, h, 8);
    for (size_t i = 0; i < n; i++) {
        const struct rp_span *sp = &c->spans[idx[i]];
        double rq, sv, rs;
        rp_phases(sp, &rq, &sv, &rs);
        fputs("<tr>", f);
        text_cell(f, c->sw.g[sp->group].name);
        text_cell(f, rp_time_text(t, sizeof(t), rp_realtime(c, sp->start_ns), c->o.tz));
        num_cell(f, sp->lat_ms, "%.1f");
        num_cell(f, rq, "%.1f");
        num_cell(f, sv, "%.1f");
        num_cell(f, rs, "%.1f");
        num_cell(f, c->have_cpu ? sp->cpu_ns / 1e6 : NAN, "%.1f");
        text_cell(f, sp->id);
        fputs("</tr>\n", f);
    }
    fputs("</table></section>\n", f);
}

static void regressions(FILE *f, const struct rp_ctx *c)
{
    static const char *const h[] = {"function (self)", "slowest 5 %", "other requests",
                                    "difference"};
    static const char *const hs[] = {"endpoint", "slowest 5 % (spans)", "latency from",
                                     "top function", "share"};

    fputs("<section id=\"regressions\"><h2>Slow requests against the rest</h2>\n", f);
    if (c->nregress == 0) {
        fputs("<p>No CPU samples inside spans to compare.</p></section>\n", f);
        return;
    }
    fprintf(f,
            "<p class=\"small\">CPU samples of the slowest 5 %% of requests (%llu %s, the sum "
            "of the samples' perf periods) against those of every other request (%llu %s): "
            "each function's share of its own (self) samples.</p>\n",
            (unsigned long long)c->slow.samples, c->count_unit, (unsigned long long)c->rest.samples,
            c->count_unit);
    head(f, h, 4);
    for (size_t i = 0; i < c->nregress; i++) {
        fputs("<tr>", f);
        text_cell(f, c->regress[i].name);
        num_cell(f, 100 * c->regress[i].share, "%.1f %%");
        num_cell(f, 100 * c->regress[i].rest, "%.1f %%");
        num_cell(f, 100 * (c->regress[i].share - c->regress[i].rest), "%+.1f pt");
        fputs("</tr>\n", f);
    }
    fputs("</table>\n<h3>Per endpoint: the CPU of its own slowest 5 %</h3>\n", f);
    head(f, hs, 5);
    for (size_t i = 0; i < c->nslows; i++) {
        const struct rp_slow *s = &c->slows[i];
        fputs("<tr>", f);
        text_cell(f, c->sw.g[s->group].name);
        fprintf(f, "<td class=\"n\">%llu</td>", (unsigned long long)s->spans);
        num_cell(f, s->cut_ms, "%.1f ms");
        text_cell(f, s->ntop ? s->top[0].name : "");
        num_cell(f, s->ntop ? 100 * s->top[0].share : NAN, "%.1f %%");
        fputs("</tr>\n", f);
    }
    fputs("</table></section>\n", f);
}

/* Which samples the graphs of requests can use, per process: what attributed them. */
static void coverage(FILE *f, const struct rp_ctx *c)
{
    static const char *const h[] = {"process",
                                    "samples",
                                    "by span markers",
                                    "by socket events",
                                    "by an event loop's waits",
                                    "by goroutines",
                                    "shared by spans",
                                    "outside every span"};

    if (c->ncov == 0)
        return;
    fputs("<h3>What attributed the samples</h3>\n<p class=\"small\">Per process: the samples "
          "a span marker interval on their thread gave to one span, those socket events gave "
          "(no instrumentation: the time between a request's read and its answer on a "
          "thread), those an event loop's order gave (its readiness waits: the work before "
          "a call on a connection is that connection's), those a goroutine's claim gave (Go: "
          "the goroutine that read a request and answered it, or was started for it, on "
          "whichever threads ran it), those in time several spans claim (left out, never "
          "guessed) and those outside every span. Only the first four are in the graphs of "
          "requests.</p>"
          "\n<table>",
          f);
    head(f, h, 8);
    for (size_t i = 0; i < c->ncov; i++) {
        const struct sf_db_coverage *r = &c->cov[i];
        const int64_t part[6] = {r->markers, r->sockets, r->loop, r->go, r->shared, r->none};
        char name[64];
        snprintf(name, sizeof(name), "%lld", (long long)r->pid);
        fputs("<tr><td>", f);
        rp_html_esc(f, r->comm);
        fprintf(f, " (%s)</td><td class=\"n\">%lld</td>", name, (long long)r->samples);
        for (int k = 0; k < 6; k++)
            fprintf(f, "<td class=\"n\">%.1f %%</td>",
                    r->samples ? 100.0 * (double)part[k] / (double)r->samples : 0.0);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

static void flames(FILE *f, const struct rp_ctx *c)
{
    fputs("<section id=\"flamegraphs\"><h2>Flame graphs</h2>\n<p class=\"small\">Click a frame "
          "to zoom, Reset Zoom to go back; Search (or Ctrl-F inside a graph) highlights "
          "matching functions and gives their share.</p>\n",
          f);
    flame(f, c, "fg-all", &c->all.folded, "CPU of every sample", "all samples, in spans or not",
          "All CPU samples");
    flame(f, c, "fg-slow", &c->slow.folded, "CPU of the slowest 5 % of requests",
          "samples inside the spans of the slowest 5 %", "The slowest 5 % of requests");
    flame(f, c, "fg-diff", &c->diff, "Slowest 5 % against the other requests",
          "width: the slow requests; red: a larger share than in the others, blue: smaller",
          "Differential: slowest 5 % against the rest");
    coverage(f, c);
    fputs("</section>\n", f);
}

static void endpoints(FILE *f, const struct rp_ctx *c)
{
    static const char *const h[] = {"endpoint", "requests", "rate",   "p50",       "p95",
                                    "p99",      "max",      "errors", "kept share"};

    fputs("<section id=\"endpoints\"><h2>Endpoints</h2>\n", f);
    head(f, h, 9);
    for (size_t g = 0; g < c->sw.ng; g++) {
        struct rp_gstat st;
        rp_group_stats(c, g, &st);
        fputs("<tr>", f);
        text_cell(f, c->sw.g[g].name);
        fprintf(f, "<td class=\"n\">%llu</td>", (unsigned long long)st.spans);
        num_cell(f, st.rps, "%.2f /s");
        num_cell(f, st.p50, "%.1f ms");
        num_cell(f, st.p95, "%.1f ms");
        num_cell(f, st.p99, "%.1f ms");
        num_cell(f, st.max, "%.1f ms");
        num_cell(f, 100 * st.err, "%.2f %%");
        num_cell(f, st.kept, "%.3f");
        fputs("</tr>\n", f);
    }
    fputs("</table><p class=\"small\">Over the whole capture; \xe2\x80\x94 where there are too few "
          "requests for the percentile.</p></section>\n",
          f);
}

/* A signed duration in ns in the unit a reader takes in at once: ns, µs, ms, or s with
 * every digit kept (a monotonic -> realtime offset is decades of seconds). */
static void ns_text(char *buf, size_t n, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    const char *sign = ns < 0 ? "-" : "";

    if (a < 1000)
        snprintf(buf, n, "%s%llu ns", sign, (unsigned long long)a);
    else if (a < 1000000)
        snprintf(buf, n, "%s%.3f \xc2\xb5s", sign, (double)a / 1e3);
    else if (a < 1000000000)
        snprintf(buf, n, "%s%.3f ms", sign, (double)a / 1e6);
    else
        snprintf(buf, n, "%s%llu.%09llu s", sign, (unsigned long long)(a / 1000000000),
                 (unsigned long long)(a % 1000000000));
}

static void clocks_tls(FILE *f, const struct rp_ctx *c)
{
    static const char *const h[] = {"from", "to", "segments", "offset", "skew", "residual (rms)"};
    const struct rp_tls *t = &c->tls;

    fputs("<section id=\"clocks\"><h2>Clocks</h2>\n", f);
    fprintf(f, "<p class=\"small\">Times on this page are CLOCK_REALTIME; the spans' clock is ");
    rp_html_esc(f, c->span_clock);
    fputs(c->fit.have ? ", mapped through the fit below.</p>\n" : ".</p>\n", f);
    if (c->clk.n) {
        head(f, h, 6);
        for (size_t i = 0; i < c->clk.n; i++) {
            const struct clock_pair *p = &c->clk.p[i];
            fputs("<tr>", f);
            text_cell(f, p->from);
            text_cell(f, p->to);
            char off[48];
            ns_text(off, sizeof(off), p->off0_ns);
            fprintf(f, "<td class=\"n\">%zu</td><td class=\"n\">%s</td>", p->n, off);
            num_cell(f, p->skew0_ppm, "%.3f ppm");
            num_cell(f, p->resid_rms_ns / 1e3, "%.1f \xc2\xb5s");
            fputs("</tr>\n", f);
        }
        fputs("</table>\n", f);
    }
    fputs("</section>\n<section id=\"tls\"><h2>TLS and 0-RTT</h2>\n", f);
    if (t->tls == 0) {
        fprintf(f,
                "<p>%llu TCP connections, none with TLS: every request was read in clear "
                "text.</p></section>\n",
                (unsigned long long)t->conns);
        return;
    }
    fprintf(f,
            "<table><tr><th>connections</th><td class=\"n\">%llu</td></tr><tr><th>with "
            "TLS</th><td class=\"n\">%llu</td></tr><tr><th>decrypted (key log)</th><td "
            "class=\"n\">%llu</td></tr>",
            (unsigned long long)t->conns, (unsigned long long)t->tls,
            (unsigned long long)t->decrypted);
    fputs("<tr><th>versions</th>", f);
    text_cell(f, t->versions);
    fputs("</tr><tr><th>cipher suites</th>", f);
    text_cell(f, t->ciphers);
    fputs("</tr><tr><th>ALPN</th>", f);
    text_cell(f, t->alpn);
    fputs("</tr><tr><th>SNI</th>", f);
    text_cell(f, t->sni);
    fprintf(f,
            "</tr><tr><th>0-RTT offered / accepted / rejected</th><td class=\"n\">%llu / %llu "
            "/ %llu</td></tr><tr><th>0-RTT bytes, requests</th><td class=\"n\">%llu B, "
            "%llu</td></tr></table></section>\n",
            (unsigned long long)t->early_offered, (unsigned long long)t->early_accepted,
            (unsigned long long)t->early_rejected, (unsigned long long)t->early_bytes,
            (unsigned long long)t->early_spans);
}

int rp_write_html(const struct rp_ctx *c, const char *path)
{
    FILE *f = fopen(path, "w");
    char t0[64], t1[64];
    int bad;

    if (f == NULL) {
        fprintf(stderr, "spanfold report: %s: cannot create: %s\n", path, strerror(errno));
        return -1;
    }
    rp_time_text(t0, sizeof(t0), rp_win_time(c, 0), c->o.tz);
    rp_time_text(t1, sizeof(t1), rp_win_time(c, c->sw.nwin), c->o.tz);
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>spanfold report: ",
          f);
    rp_html_esc(f, c->o.name);
    fprintf(f, "</title>\n<style>\n%s</style></head>\n<body><main>\n<h1>spanfold report</h1>\n",
            style);
    fputs("<p class=\"meta\">", f);
    rp_html_esc(f, c->o.name);
    fprintf(f,
            " \xc2\xb7 %llu requests \xc2\xb7 %s \xe2\x80\x93 %s \xc2\xb7 windows of %g s "
            "\xc2\xb7 findings.json beside this page \xc2\xb7 spanfold %s</p>\n",
            (unsigned long long)c->sw.nspans, t0, t1, (double)c->sw.window_ns / 1e9, sf_version());
    verdict(f, c);
    fputs("<nav><a href=\"#timeline\">timeline</a><a href=\"#explore\">explore</a><a "
          "href=\"#inflections\">inflections</a>"
          "<a href=\"#sampling\">sampling</a><a href=\"#regressions\">slow vs normal</a>"
          "<a href=\"#flamegraphs\">flame graphs</a><a href=\"#endpoints\">endpoints</a>"
          "<a href=\"#clocks\">clocks</a><a href=\"#tls\">TLS</a></nav>\n",
          f);
    if (c->sw.nwin)
        timelines(f, c);
    explore(f, c);
    inflections(f, c);
    sampling(f, c);
    regressions(f, c);
    slowest(f, c);
    flames(f, c);
    endpoints(f, c);
    clocks_tls(f, c);
    fputs("</main></body></html>\n", f);
    bad = ferror(f) | (fclose(f) != 0);
    if (bad)
        fprintf(stderr, "spanfold report: %s: write error\n", path);
    return bad ? -1 : 0;
}
