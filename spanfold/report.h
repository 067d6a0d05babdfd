/* report.h - spanfold report: what its files share.
 *
 *   report.c       command line, the run: analyse -> findings.json -> report.html
 *   report_data.c  the analysis: inflect's windows, change points and drift per
 *                  endpoint, change points refined to the span, clock_fits, span sets
 *                  (all, slowest 5 %, the rest) and their CPU, TLS facts
 *   report_json.c  DIR/findings.json
 *   report_html.c  DIR/report.html: one self-contained page
 *   report_svg.c   the timeline charts, drawn as inline SVG
 *   report_explore.c  the explorer's data: every request and its samples, for the page
 *                  to fold any selection (report_explore.js)
 *
 * Times: the database keeps each source's raw nanoseconds; everything here that a
 * person or a machine reads is CLOCK_REALTIME, derived through clock_fits (rp_realtime).
 */
#ifndef SPANFOLD_REPORT_H
#define SPANFOLD_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../inflect/clockdrift.h"
#include "../inflect/drift.h"
#include "../inflect/inflect.h"
#include "ch.h"
#include "sf_buf.h"
#include "sf_db.h"
#include "sf_explain.h"
#include "sf_spans.h"

#define RP_TOP_FUNCS     10      /* functions listed per slow set */
#define RP_SLOW_SHARE    0.05    /* "the slowest 5 %" */
#define RP_MAX_CPS       256     /* inflections kept over all endpoints */
#define RP_DRIFT_REF_MIN 50      /* traces of the estimated reference regime of a kept share */
#define RP_HEAT_BINS     24      /* latency rows of an endpoint's heatmap, log-spaced */
#define RP_HEAT_COLS     240     /* its columns at most: more windows share a column */
#define RP_COV_MAX       16      /* processes in the attribution coverage table */
#define RP_PAGE_SAMPLES  2000000 /* the explorer's samples at most, by default */
#define RP_SPANS_MAX     500000  /* requests analysed one by one at most, by default */

/* An inflection: a classified change point of one endpoint's metric. */
struct rp_cp {
    size_t group;
    enum sf_span_metric metric;
    enum cp_kind kind;
    size_t win;      /* window of the first observation of the new regime */
    int64_t time_ns; /* CLOCK_REALTIME: the first span of the new regime (p50, found on
                        the spans) or the start of the window (the windowed metrics) */
    int refined;     /* found on the spans: time_ns is a span's start, not a window's */
    double before, after;
};

/* Sampling drift of one endpoint. */
struct rp_drift {
    size_t group;
    int configured; /* the rate was configured (--expect-rate, ot=th), not estimated */
    double expect;  /* configured or estimated in-control keep rate */
    double from_rate, to_rate;
    int64_t time_ns;      /* CLOCK_REALTIME of the onset window */
    int direction;        /* +1 up, -1 down */
    int explained;        /* ex was computed (the database could be read for it) */
    struct sf_explain ex; /* the attribute that explains it (lib/sf_explain.h) */
};

/* A function's share of a span set's CPU (self samples / all samples). */
struct rp_func {
    char name[200];
    double share, rest; /* in this set, in the set compared against */
};

#define RP_NAME_MAX        256 /* an endpoint's name as the cause section keeps it */
#define RP_CAUSE_EPS       16  /* downstream endpoints told apart; the rest are "(other)" */
#define RP_CAUSE_MIN_SHARE 0.1 /* a measured part named as the cause explains this much */
#define RP_CAUSE_SECOND_SHARE                                                                      \
    0.2 /* a second measured part named beside it explains this                                    \
           (a fifth, as an unaccounted share is said beside) */

/* Where a span set's wall-clock time went, per span on average, in ns
 * (report_cause.c): the parts add up to dur_ns. */
struct rp_breakdown {
    uint64_t spans;
    double dur_ns, cpu_ns, blocked_ns, downstream_ns, network_ns, unaccounted_ns;
    double downstream_by[RP_CAUSE_EPS]; /* downstream_ns by the child's endpoint */
    double blocked_by[RP_CAUSE_EPS];    /* blocked_ns by reason (cause_reasons) */
    /* evidence, not a part: TCP retransmissions on the span's connection while it ran
     * (pcap2spans' connection_events), and the time the stream stalled on them */
    double retransmits, retransmit_stall_ns;
    double zero_windows, zero_window_stall_ns; /* receive windows that closed on it */
    double handshake_ns; /* TCP + TLS handshake before it, on the connection it opened */
};

enum rp_cause {
    RP_CAUSE_NONE,
    RP_CAUSE_CPU,
    RP_CAUSE_BLOCKED, /* off CPU (offcpu intervals of the span's thread) */
    RP_CAUSE_NETWORK,
    RP_CAUSE_DOWNSTREAM,
    RP_CAUSE_UNACCOUNTED
};

/* Why a latency inflection's requests got slow: its endpoint's spans before (normal)
 * and after (slow) it, the part that grew most, and its share of the growth. */
struct rp_why {
    size_t cp; /* index in cps */
    struct rp_breakdown normal, slow;
    enum rp_cause cause;
    double share;         /* of the growth of the mean duration, 0..1 */
    enum rp_cause cause2; /* a second measured part that explains RP_CAUSE_SECOND_SHARE
                             of the growth too (a mixed slowdown), or RP_CAUSE_NONE */
    double share2;
    double unaccounted_share; /* the part of the growth nobody measured, 0..1 */
    size_t ep;                /* downstream (cause or cause2): the child endpoint that grew most
                                 (cause_eps), or SIZE_MAX */
    size_t reason; /* blocked (cause or cause2): the reason that grew most (cause_reasons),
                      or SIZE_MAX */
    int offcpu;    /* the database has off-CPU intervals: blocked_ns is measured */
};

/* One span, as the sets need it. */
struct rp_span {
    char id[17];
    size_t group;
    int64_t start_ns;                  /* the spans' own clock */
    double lat_ms;                     /* NaN: unknown */
    int64_t req_end_ns, resp_start_ns; /* the same clock; INT64_MIN: unknown */
    int64_t conn;                      /* connections.id, 0: unknown */
    int slow_group;                    /* among the slowest 5 % of its endpoint */
    int kept;                          /* analysed one by one (sf_thin_request at c->thin) */
    double cpu_ns;                     /* its attributed clock samples (report_cause.c) */
};

/* CPU per request rose while the request rate did not (report_cpuq.c): the work per
 * request grew, not the load. */
struct rp_cpuq {
    size_t group;
    enum cp_kind kind;
    int64_t time_ns;              /* CLOCK_REALTIME: the start of the first window after */
    double before_ms, after_ms;   /* mean CPU per request of the segments either side */
    double qps_before, qps_after; /* mean requests per second of the same windows */
};

/* Folded stacks of one span set, as text ("frames count\n"). */
struct rp_set {
    struct sf_buf folded;
    uint64_t samples;
};

struct rp_slow {
    size_t group;
    uint64_t spans; /* spans in the endpoint's slowest 5 % */
    double cut_ms;  /* their latency is at least this */
    uint64_t samples;
    struct rp_func top[RP_TOP_FUNCS];
    size_t ntop;
};

struct rp_tls {
    uint64_t conns, tls, decrypted, early_offered, early_accepted, early_rejected;
    uint64_t early_spans, early_bytes;
    char versions[128], ciphers[256], alpn[128], sni[256];
};

/* One endpoint over the whole run. */
struct rp_gstat {
    uint64_t spans;
    double rps;                /* spans per second over the run */
    double p50, p95, p99, max; /* ms, nearest rank; NaN without latencies */
    double err, kept;          /* error share, kept share of traces (NaN: no trials) */
};

struct rp_opts {
    const char *db, *out, *tz;
    struct ch_opts cho;      /* --clickhouse: pulled into db first */
    const char *name;        /* what the page and messages call the data */
    struct ch_shards shards; /* --cluster: the shards that did not answer (ch_cluster) */
    int64_t window_ns;       /* 0: adapted (inflect/window.h) */
    double expect_rate;
    int complete_only;    /* --complete-only */
    int64_t page_samples; /* --page-samples: the explorer's samples at most */
    int64_t spans_max;    /* --spans-max: requests analysed one by one at most, -1: all */
    int quiet;
};

/* A clock_fits relation to CLOCK_REALTIME: t_real = t + off + skew_ppm * 1e-6 * (t - ref). */
struct rp_fit {
    int have; /* 0: no row relates the clock to realtime */
    int64_t off, ref;
    double skew_ppm;
};

struct ch_spanq;

struct rp_ctx {
    struct rp_opts o;
    struct ch *ch;           /* --clickhouse: the cluster, open for the CPU sets */
    struct ch_spanq *chq;    /* its span rows and groups (ch_series' keep): the CPU sets are
                                folded there (ch_sets.h), not from the file */
    struct inflect_ctx ictx; /* inflect's settings, for its functions */
    struct sf_span_windows sw;
    struct inflect_series *ser; /* ng * SF_M_NMETRICS, group-major */
    struct inflect_result *res;
    struct drift_result *dres; /* ng */
    double **pi;
    struct clock_report clk;
    char span_clock[32]; /* the spans' clock (sources.clock of their capture) */
    struct rp_fit fit;   /* span_clock to realtime (fit.have: a clock_fits row says) */
    /* The spans, and which of them are analysed one by one (kept, nkept of them): all
     * up to o.spans_max, past it a uniform sample of share thin, by span id (sf_thin.h),
     * drawn alike from a file and from a cluster, which sends only those.  What is
     * counted is over all of them: the windows, the slowest 5 %'s cuts and sizes (cut,
     * nslow, per group), the flame graphs.  What needs each request is over the kept:
     * the heat maps, whole-run percentiles, change points on single requests, the
     * causes and slowest list, CPU per request, the explorer, the drift's explanation. */
    struct rp_span *spans;
    size_t nspans, nkept;
    double thin;
    double *cut;      /* per group: the latency of its slowest 5 % and up (+inf: none) */
    uint64_t *nslow;  /* ... and how many spans that is */
    size_t *by_group; /* span indexes grouped by endpoint, each group in start order */
    size_t *group_at; /* ng + 1: group g's are by_group[group_at[g] .. group_at[g + 1]) */
    struct rp_cp cps[RP_MAX_CPS];
    size_t ncps;
    struct rp_drift *drifts;
    size_t ndrifts;
    struct rp_cpuq *cpuqs; /* report_cpuq.c */
    size_t ncpuqs;
    int have_cpu;          /* some span has attributed clock samples */
    struct rp_slow *slows; /* one per group with attributed samples */
    size_t nslows;
    struct rp_set all, slow, rest;        /* CPU of every sample, the slowest 5 %, the others */
    struct sf_buf diff;                   /* folded "rest-scaled slow" lines, differential graph */
    uint64_t unattributed;                /* sample weight outside every span */
    char count_unit[48];                  /* what the weight counts: "ns" (cpu-clock), ... */
    struct rp_func regress[RP_TOP_FUNCS]; /* slowest 5 % against the rest */
    size_t nregress;
    struct rp_tls tls;
    struct sf_db_coverage cov[RP_COV_MAX]; /* how each process's samples were attributed */
    size_t ncov;
    struct rp_why *whys; /* one per latency inflection (report_cause.c) */
    size_t nwhys;
    char (*cause_eps)[RP_NAME_MAX]; /* the downstream endpoints rp_why.ep names */
    size_t ncause_eps;
    char (*cause_reasons)[RP_NAME_MAX]; /* why threads were off CPU (rp_why.reason) */
    size_t ncause_reasons;
    struct sf_buf explore;  /* the explorer's data, JSON (report_explore.c) */
    size_t explore_samples; /* the samples in it */
    size_t explore_spans;   /* the spans in it: all, or a uniform sample past page_samples */
    int explore_fixed;      /* explore_fraction is the cluster's (the file holds only the
                               kept spans' samples); else it comes from the file's samples */
    double explore_fraction;
    char notes[6][720]; /* what is missing or partial, said on the page */
    int nnotes;
};

/* ---- report_data.c ---- */

/* Everything the page and the JSON show.  Returns 0, or an exit status (2) after
 * printing why (no database, not a spanfold database, out of memory). */
int rp_analyse(struct rp_ctx *c);
void rp_free(struct rp_ctx *c);
/* A time in the spans' clock as CLOCK_REALTIME ns (through clock_fits). */
int64_t rp_realtime(const struct rp_ctx *c, int64_t t);
/* The fit of clock (sources.clock) to realtime: the clock_fits row of most points.
 * "realtime" itself maps as it is (have, no offset).  Returns 0 (f->have 0: no row),
 * or -1 when the query failed. */
int rp_fit_read(sqlite3 *h, const char *clock, struct rp_fit *f);
/* t through f; t itself where f has no relation. */
int64_t rp_fit_apply(const struct rp_fit *f, int64_t t);
/* Start of window w, CLOCK_REALTIME ns. */
int64_t rp_win_time(const struct rp_ctx *c, size_t w);
/* The stored window that holds time t (the spans' clock), or the last one before it. */
size_t rp_win_of(const struct rp_ctx *c, int64_t t);

/* The spans sorted by id, for rp_span_find (malloc'ed; NULL: out of memory). */
const struct rp_span **rp_spans_by_id(const struct rp_ctx *c);
/* The first span with id in idx (n of them, rp_spans_by_id), or NULL. */
const struct rp_span *rp_span_find(const struct rp_span *const *idx, size_t n, const char *id);

/* Seconds from the first stored window's start to the end of the last. */
double rp_span_seconds(const struct rp_ctx *c);
/* The endpoint's series of metric m (never NULL for g < ng). */
const struct inflect_result *rp_result(const struct rp_ctx *c, size_t g, enum sf_span_metric m);
/* Index of the most important latency inflection (largest rise), or -1.  An endpoint
 * that is the downstream cause of another's inflection is not the headline: its
 * caller's is, and names it. */
long rp_headline(const struct rp_ctx *c);
/* A finding in words, as its chart labels it: "p50 step 5 -> 20 ms", "errors step
 * 0.1 % -> 5.0 %", "throughput ramp 6.5 -> 6.6 /s" (arrows as U+2192). */
void rp_cp_label(const struct rp_cp *p, char *buf, size_t n);
/* "drift alarm: kept 0.52 -> 0.19" */
void rp_drift_label(const struct rp_drift *d, char *buf, size_t n);
/* "CPU per request step 2.1 -> 9.8 ms while requests/s stayed 3.1 -> 3" */
void rp_cpuq_label(const struct rp_cpuq *q, char *buf, size_t n);
/* The endpoints in the order the page shows them, into order[0..ng): those with a
 * finding first (the headline's endpoint, then by the largest latency rise, then
 * error, drift and other findings), then the rest by their number of requests.
 * Returns how many have a finding. */
size_t rp_group_order(const struct rp_ctx *c, size_t *order);

#define RP_SLOWEST 10 /* the slowest requests listed, with their phases */
/* The RP_SLOWEST slowest spans (known latency), slowest first, as indexes into c->spans;
 * returns how many. */
size_t rp_slowest(const struct rp_ctx *c, size_t *idx);
/* A slow request's phases from the capture, ms (NaN where a time is unknown): request
 * (its first to last byte), server (last request byte to first response byte), response
 * (first to last response byte). */
void rp_phases(const struct rp_span *sp, double *req_ms, double *server_ms, double *resp_ms);

/* Whole-run numbers of group g. */
void rp_group_stats(const struct rp_ctx *c, size_t g, struct rp_gstat *st);
/* The slow set of group g, or NULL. */
const struct rp_slow *rp_slow_of(const struct rp_ctx *c, size_t g);

/* The latency distribution of one endpoint over the windows: n[col * RP_HEAT_BINS + b]
 * spans that started in the stored windows of column col (windows col * per_col ..
 * col * per_col + per_col - 1) with a latency in bin b, the bins equal steps of
 * log(latency) from lo_ms to hi_ms (b = 0 the fastest).  A column is one window
 * unless there are more than RP_HEAT_COLS, so that the page stays small. */
struct rp_heat {
    uint32_t *n; /* ncol * RP_HEAT_BINS */
    size_t ncol, per_col;
    double lo_ms, hi_ms; /* lo_ms < hi_ms */
    uint32_t max;        /* the largest cell */
    uint64_t total;      /* spans counted */
};

/* The heatmap of group g.  Returns 0 (h->total 0: no span with a latency in a
 * window), or -1 out of memory; rp_heat_free after either. */
int rp_heatmap(const struct rp_ctx *c, size_t g, struct rp_heat *h);
void rp_heat_free(struct rp_heat *h);
/* The bin of a latency, clamped to 0 .. RP_HEAT_BINS - 1. */
int rp_heat_bin(const struct rp_heat *h, double ms);

/* ---- report_cause.c ---- */

/* The breakdown of every latency inflection into c->whys.  Returns 0 or -1 (a query
 * failed, or out of memory). */
int rp_causes(struct rp_ctx *c, sqlite3 *h);
/* The CPU-per-request rule (after rp_causes, which gives each span its CPU): per
 * endpoint and window, attributed CPU ms per request; a step or ramp up of at least
 * RP_CPUQ_RISE while the request rate stays within RP_CPUQ_FLAT of its level or falls
 * is a finding.  Returns 0 or -1 (out of memory). */
int rp_cpu_rule(struct rp_ctx *c);
#define RP_CPUQ_RISE 0.2 /* CPU per request up by a fifth */
#define RP_CPUQ_FLAT 0.1 /* requests per second up by at most a tenth */
/* The breakdown of inflection cp, or NULL (not a latency inflection). */
const struct rp_why *rp_why_of(const struct rp_ctx *c, size_t cp);
/* "cpu", "blocked", "network", "downstream", "unaccounted", or "none". */
const char *rp_cause_name(enum rp_cause k);

/* ---- report_explore.c ---- */

/* The explorer's data into c->explore (after the spans are read).  Returns 0 or -1
 * (a query failed, or out of memory). */
int rp_explore(struct rp_ctx *c, sqlite3 *h);

/* ---- report_json.c ---- */

/* ISO 8601 of a CLOCK_REALTIME time in zone tz (NULL or "UTC": "...Z"), ms precision. */
char *rp_time_text(char *buf, size_t n, int64_t ns, const char *tz);
/* The verdict in plain words (one paragraph, UTF-8) into buf. */
void rp_verdict(const struct rp_ctx *c, char *buf, size_t n);
/* Write DIR/findings.json.  Returns 0 or -1 (printed). */
int rp_write_json(const struct rp_ctx *c, const char *path);

/* ---- report_html.c ---- */

/* Write DIR/report.html.  Returns 0 or -1 (printed). */
int rp_write_html(const struct rp_ctx *c, const char *path);
/* Text escaped for HTML element content and attribute values (& < > " '). */
void rp_html_esc(FILE *f, const char *s);

/* ---- report_svg.c ---- */

/* The timeline of group g: latency p50/p95/p99 (ms), error rate (%), kept share, on
 * one wall-clock axis, inflections and drift alarms marked and labelled; inline SVG. */
void rp_svg_timeline(FILE *f, const struct rp_ctx *c, size_t g);
/* Two stacked bars: where a latency inflection's requests spent their time, before
 * and after it (mean per request: CPU, downstream, network, unaccounted). */
void rp_svg_breakdown(FILE *f, const struct rp_ctx *c, const struct rp_why *y);

#endif
