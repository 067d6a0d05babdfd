/* ch_series.c - the windows of the spans, gathered by the cluster (see ch_series.h).
 *
 * lib/sf_spans.c reads every span in start order (ORDER BY req_start_ns, id) and keeps,
 * per group and window, the latencies, the counts and each trace's first span.  Here
 * the same is asked of ClickHouse, where the spans are, over one definition of a span's
 * row (`base`: the complete sources' spans with a start and a group, as sf_spans_window
 * selects them on the file ch_pull writes, their ids numbered as ch_pull numbers them):
 *
 *   1 extent     min, max and count of the starts; the (n/100)th start from the ends
 *                by histograms narrowing the range (sf_window_auto's nth_start without
 *                sending a percent of the spans)
 *   2 groups     per name (endpoint, service, ...) its first span (start, id) and
 *                count: every name longer than a group name keeps (it may share its
 *                cut with others), then the first 64 + those by first span; cut and
 *                folded into "(other)" here as sf_spans names them, then sent back as
 *                transform(g, [names], [ranks])
 *   3 windows    per group rank and window number: spans, errors, spans whose outcome
 *                is known, and the nearest-rank P50/P95/P99/max of the latencies
 *                (arraySort(groupArray)[ceil(p * n)], sf_quantile_exact's rule)
 *   4 traces     per group, window and trace its first span's sampling decision and
 *                tracestate, counted per (group, window, tracestate): traces, trials,
 *                kept; the configured rate of each tracestate is read here
 *
 * Only the answers of 2 to 4 travel: groups x windows (x distinct tracestates).  The
 * latencies of a window meet on the server asked, which sorts them (exact percentiles,
 * the file's to the bit; docs/scale.md says what a newer server could do instead).
 * Everything here runs on ClickHouse 18.16: no CTE, one JOIN per SELECT (nested), GLOBAL
 * ANY LEFT JOIN with a `hit` column for "no match" (18.16 fills defaults, not NULLs).
 */
#include "ch_series.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../inflect/run.h"
#include "ch_pull.h"
#include "ch_spanq.h"
#include "sf_select.h"
#include "sf_text.h"
#include "sf_tracectx.h"
#include "sf_window.h"

#define NAME_MAX_BYTES (sizeof(((struct sf_win_group *)0)->name) - 1)
#define BISECT_BUCKETS 1024 /* buckets of one pass of nth_start */
#define LONG_NAMES_MAX 1000 /* names longer than a group's, each sent back in transform() */

/* Run p->sql (FORMAT RowBinary appended) into p->r. */
int ch_spanq_run(struct ch_spanq *p)
{
    struct timespec a, b;
    int rc;

    if (sf_buf_printf(&p->sql, " FORMAT RowBinary"))
        return sf_err_set(p->err, SF_E_LIMIT, UINT64_MAX, "query too long");
    clock_gettime(CLOCK_MONOTONIC, &a);
    rc = ch_query(p->ch, (const char *)p->sql.data, NULL, 0, &p->r, p->err);
    clock_gettime(CLOCK_MONOTONIC, &b);
    if (rc == 0 && p->cost) {
        p->cost->queries++;
        p->cost->bytes += p->r.len;
        p->cost->seconds += (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    }
    return rc;
}

int ch_spanq_sql(struct ch_spanq *p, const char *fmt, ...)
{
    va_list ap;
    int rc;

    sf_buf_reset(&p->sql);
    va_start(ap, fmt);
    rc = sf_buf_vprintf(&p->sql, fmt, ap);
    va_end(ap);
    return rc ? sf_err_set(p->err, SF_E_LIMIT, UINT64_MAX, "query too long") : 0;
}

int ch_spanq_truncated(struct ch_spanq *p)
{
    return sf_err_set(p->err, SF_E_MALFORMED, UINT64_MAX,
                      "ClickHouse's RowBinary answer ends inside a row");
}

/* ---- 1: the extent ------------------------------------------------------------------ */

/* The k-th smallest request start (0-based) of those in [lo, hi], lo the first:
 * histograms of BISECT_BUCKETS buckets over the range left, each narrowing it to one
 * bucket, until a bucket is one nanosecond (a few passes over the column, each sending
 * BISECT_BUCKETS rows at most). */
static int nth_start(struct ch_spanq *p, int64_t lo, int64_t hi, uint64_t k, int64_t *out)
{
    uint64_t below = 0; /* starts before lo */

    while (lo < hi) {
        uint64_t span = (uint64_t)hi - (uint64_t)lo + 1, width, seen = below;
        const unsigned char *q, *end;
        int found = 0, rc;

        width = span / BISECT_BUCKETS + (span % BISECT_BUCKETS != 0);
        if ((rc = ch_spanq_sql(
                 p,
                 "SELECT toUInt64(intDiv(assumeNotNull(req_start_ns) - %lld, %llu)) AS b, "
                 "count() FROM %s WHERE skey IN (%s) AND req_start_ns >= %lld AND "
                 "req_start_ns <= %lld GROUP BY b ORDER BY b",
                 (long long)lo, (unsigned long long)width, p->spans, (const char *)p->keys.data,
                 (long long)lo, (long long)hi)) != 0)
            return rc;
        if ((rc = ch_spanq_run(p)) != 0)
            return rc;
        for (q = p->r.data, end = q + p->r.len; q < end && !found;) {
            uint64_t bucket, count;
            if (ch_get_u64(&q, end, &bucket) < 0 || ch_get_u64(&q, end, &count) < 0)
                return ch_spanq_truncated(p);
            if (seen + count > k) { /* the k-th is in this bucket */
                int64_t from = (int64_t)((uint64_t)lo + bucket * width);
                below = seen;
                hi = (uint64_t)hi - (uint64_t)from + 1 > width
                         ? (int64_t)((uint64_t)from + width - 1)
                         : hi;
                lo = from;
                found = 1;
            }
            seen += count;
        }
        if (!found)
            return sf_err_set(p->err, SF_E_MALFORMED, UINT64_MAX,
                              "the cluster's counts of request starts do not add up");
    }
    *out = lo;
    return 0;
}

/* Three numbers of one row: the first, last and count of `what`'s starts. */
static int extent(struct ch_spanq *p, const char *from, int64_t *lo, int64_t *hi, uint64_t *n)
{
    const unsigned char *q, *end;
    uint64_t a, b;
    int rc;

    if ((rc = ch_spanq_sql(p, "SELECT min(t), max(t), count() FROM (%s)", from)) != 0)
        return rc;
    if ((rc = ch_spanq_run(p)) != 0)
        return rc;
    q = p->r.data;
    end = q + p->r.len;
    if (ch_get_u64(&q, end, &a) < 0 || ch_get_u64(&q, end, &b) < 0 || ch_get_u64(&q, end, n) < 0)
        return ch_spanq_truncated(p);
    *lo = (int64_t)a;
    *hi = (int64_t)b;
    return 0;
}

/* ---- 2: the groups ------------------------------------------------------------------- */

struct name {
    const unsigned char *s; /* in the answer it came in */
    size_t n;
    int64_t t, o; /* its first span */
    uint64_t count;
    int group; /* its rank among the groups */
};

struct groups {
    struct name *v;
    size_t n, cap;
    struct sf_buf r1, r2; /* the answers the names point into */
    char names[SF_SPANS_MAX_GROUPS][sizeof(((struct sf_win_group *)0)->name)];
    uint64_t counts[SF_SPANS_MAX_GROUPS];
    int ng, other; /* other: the rank of "(other)", -1 none */
};

static int cmp_first(const void *a, const void *b)
{
    const struct name *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->o > y->o) - (x->o < y->o);
}

/* The names of answer r into gs; with short_only, only those a group name holds whole
 * (the long ones came in the first answer). */
static int read_names(struct ch_spanq *p, struct groups *gs, const struct sf_buf *r, int short_only)
{
    const unsigned char *q = r->data, *end = r->data + r->len;

    while (q < end) {
        struct name nm = {0};
        uint64_t t, o;
        if (ch_get_str(&q, end, &nm.s, &nm.n) < 0 || ch_get_u64(&q, end, &t) < 0 ||
            ch_get_u64(&q, end, &o) < 0 || ch_get_u64(&q, end, &nm.count) < 0)
            return ch_spanq_truncated(p);
        nm.t = (int64_t)t;
        nm.o = (int64_t)o;
        if (short_only && nm.n > NAME_MAX_BYTES)
            continue;
        if (gs->n == gs->cap) {
            size_t nc = gs->cap ? gs->cap * 2 : 128;
            struct name *nv = realloc(gs->v, nc * sizeof(*nv));
            if (nv == NULL)
                return sf_err_set(p->err, SF_E_NOMEM, UINT64_MAX, "out of memory");
            gs->v = nv;
            gs->cap = nc;
        }
        gs->v[gs->n++] = nm;
    }
    return 0;
}

/* sf_spans' group_get over the names in order of their first span: a name is cut to
 * what a group name holds; the first 63 cut names are groups, the rest "(other)". */
static int group_of(struct groups *gs, const char *cut)
{
    for (int i = 0; i < gs->ng; i++)
        if (strcmp(gs->names[i], cut) == 0)
            return i;
    if (gs->ng >= SF_SPANS_MAX_GROUPS - 1 && strcmp(cut, "(other)") != 0)
        return group_of(gs, "(other)");
    assert(gs->ng < SF_SPANS_MAX_GROUPS);
    snprintf(gs->names[gs->ng], sizeof(gs->names[0]), "%s", cut);
    if (strcmp(cut, "(other)") == 0)
        gs->other = gs->ng;
    return gs->ng++;
}

static int read_groups(struct ch_spanq *p, struct groups *gs, uint64_t total)
{
    uint64_t named = 0;
    int rc;

    /* every long name, then the first 64 + those: no name among the first 64 cut names
     * and the first name that falls into "(other)" is left out */
    if ((rc = ch_spanq_sql(p,
                           "SELECT g, min((t, o)) AS k, count() FROM (%s) WHERE length(g) > %zu "
                           "GROUP BY g LIMIT %d",
                           (const char *)p->base.data, NAME_MAX_BYTES, LONG_NAMES_MAX + 1)) != 0)
        return rc;
    if ((rc = ch_spanq_run(p)) != 0 || (rc = sf_buf_append(&gs->r1, p->r.data, p->r.len)) != 0 ||
        (rc = read_names(p, gs, &gs->r1, 0)) != 0)
        return rc;
    if (gs->n > LONG_NAMES_MAX)
        return sf_err_set(p->err, SF_E_LIMIT, UINT64_MAX,
                          "more than %d group names longer than %zu bytes: the cluster's "
                          "windows cannot tell them apart (use --db, or another --by)",
                          LONG_NAMES_MAX, NAME_MAX_BYTES);
    if ((rc = ch_spanq_sql(p,
                           "SELECT g, min((t, o)) AS k, count() FROM (%s) GROUP BY g ORDER BY k "
                           "LIMIT %zu",
                           (const char *)p->base.data, gs->n + SF_SPANS_MAX_GROUPS)) != 0)
        return rc;
    if ((rc = ch_spanq_run(p)) != 0 || (rc = sf_buf_append(&gs->r2, p->r.data, p->r.len)) != 0 ||
        (rc = read_names(p, gs, &gs->r2, 1)) != 0)
        return rc;
    qsort(gs->v, gs->n, sizeof(*gs->v), cmp_first);
    gs->other = -1;
    for (size_t i = 0; i < gs->n; i++) {
        struct name *nm = &gs->v[i];
        char cut[sizeof(gs->names[0])];
        size_t len = strnlen((const char *)nm->s, nm->n); /* C strings, as on the file */
        len = sf_text_utf8_cut((const char *)nm->s, len, NAME_MAX_BYTES);
        memcpy(cut, nm->s, len);
        cut[len] = 0;
        nm->group = group_of(gs, cut);
        if (nm->group != gs->other)
            named += nm->count;
        gs->counts[nm->group] += nm->count;
    }
    /* the names not read are "(other)"'s: present only when the names overflowed */
    if (total > named && gs->other >= 0)
        gs->counts[gs->other] = total - named;
    else if (total > named)
        return sf_err_set(p->err, SF_E_MALFORMED, UINT64_MAX,
                          "the cluster's groups do not add up to its spans");
    /* the map back: transform(g, [names], [ranks], rank of "(other)") */
    sf_buf_reset(&p->map);
    rc = sf_buf_printf(&p->map, "transform(g, [");
    for (size_t i = 0; i < gs->n; i++) {
        rc |= sf_buf_printf(&p->map, "%s", i ? ", " : "");
        rc |= sf_select_ch_literal(&p->map, (const char *)gs->v[i].s, gs->v[i].n);
    }
    rc |= sf_buf_printf(&p->map, "], [");
    for (size_t i = 0; i < gs->n; i++)
        rc |= sf_buf_printf(&p->map, "%stoUInt8(%d)", i ? ", " : "", gs->v[i].group);
    rc |= sf_buf_printf(&p->map, "], toUInt8(%d))", gs->other >= 0 ? gs->other : 255);
    return rc ? sf_err_set(p->err, SF_E_LIMIT, UINT64_MAX, "too many long group names") : 0;
}

/* ---- 3 and 4: the windows -------------------------------------------------------------- */

struct cell {
    uint8_t group;
    int64_t w;
    struct sf_spans_cell c;
};

static int cmp_cell(const void *a, const void *b)
{
    const struct cell *x = a, *y = b;
    if (x->w != y->w)
        return x->w < y->w ? -1 : 1;
    return (x->group > y->group) - (x->group < y->group);
}

static struct cell *cell_add(struct cell **v, size_t *n, size_t *cap)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 256;
        struct cell *nv = realloc(*v, nc * sizeof(*nv));
        if (nv == NULL)
            return NULL;
        *v = nv;
        *cap = nc;
    }
    memset(&(*v)[*n], 0, sizeof(**v));
    return &(*v)[(*n)++];
}

/* 3: the windows' counts and percentiles, in order of window and group. */
static int read_cells(struct ch_spanq *p, int64_t t0, int64_t window_ns, struct cell **out,
                      size_t *nout)
{
    const unsigned char *q, *end;
    size_t cap = 0;
    int rc;

    rc = ch_spanq_sql(p,
                      "SELECT gi, w, n, ne, nk, nl, q50, q95, q99, qmax FROM (SELECT gi, w, "
                      "count() AS n, sum(e) AS ne, sum(e OR lat >= 0) AS nk, "
                      "arraySort(groupArrayIf(lat, lat >= 0)) AS l, length(l) AS nl, "
                      "l[toUInt64(ceil(0.5 * nl))] AS q50, l[toUInt64(ceil(0.95 * nl))] AS q95, "
                      "l[toUInt64(ceil(0.99 * nl))] AS q99, l[nl] AS qmax FROM (SELECT %s AS gi, "
                      "toInt64(intDiv(t - %lld, %lld)) AS w, e, lat FROM (%s)) GROUP BY gi, w) "
                      "ORDER BY w, gi%s",
                      (const char *)p->map.data, (long long)t0, (long long)window_ns,
                      (const char *)p->base.data, p->settings);
    if (rc != 0 || (rc = ch_spanq_run(p)) != 0)
        return rc;
    for (q = p->r.data, end = q + p->r.len; q < end;) {
        uint64_t w, nl, x[4];
        struct cell *cl = cell_add(out, nout, &cap);
        if (cl == NULL)
            return sf_err_set(p->err, SF_E_NOMEM, UINT64_MAX, "out of memory");
        cl->group = *q++;
        if (ch_get_u64(&q, end, &w) < 0 || ch_get_u64(&q, end, &cl->c.spans) < 0 ||
            ch_get_u64(&q, end, &cl->c.err) < 0 || ch_get_u64(&q, end, &cl->c.known) < 0 ||
            ch_get_u64(&q, end, &nl) < 0)
            return ch_spanq_truncated(p);
        for (int k = 0; k < 4; k++) {
            if (ch_get_u64(&q, end, &x[k]) < 0)
                return ch_spanq_truncated(p);
            memcpy(&cl->c.q[k], &x[k], sizeof(double));
            if (nl == 0)
                cl->c.q[k] = NAN;
        }
        cl->w = (int64_t)w;
    }
    return 0;
}

/* 4: each trace's first span in its group and window: traces, trials, kept and the
 * configured rate, added to the cells. */
static int read_traces(struct ch_spanq *p, int64_t t0, int64_t window_ns, struct cell *v, size_t n)
{
    const unsigned char *q, *end;
    int rc;

    rc = ch_spanq_sql(
        p,
        "SELECT gi, w, ts, count(), countIf(d >= 0), countIf(d > 0) FROM (SELECT gi, w, "
        /* the trace's 64-bit hash, as sf_spans_add keeps it */
        "cityHash64(tr) AS trh, "
        "argMin(d, (t, o)) AS d, argMin(ts, (t, o)) AS ts FROM (SELECT %s AS gi, "
        "toInt64(intDiv(t - %lld, %lld)) AS w, tr, t, o, "
        "if(isNull(sampled), if(ihit = 1, idec, toInt64(-1)), assumeNotNull(sampled)) AS d, "
        "if(chit = 1, cts, '') AS ts FROM "
        /* the marker's decision where the request carried none (sf_spans_decision_sql) */
        "(SELECT * FROM (SELECT skey, id, t, o, g, tr, sampled, sn, sid FROM (%s) "
        "WHERE tr != '') GLOBAL ANY LEFT JOIN (SELECT toUInt8(0) AS sn, span_id AS sid, "
        "argMin(assumeNotNull(decision), id) AS idec, toUInt8(1) AS ihit FROM %s WHERE "
        "decision IS NOT NULL AND skey IN (%s) GROUP BY span_id) USING (sn, sid)) "
        /* the first tracestate with an OpenTelemetry threshold (LIKE '%%ot=%%') */
        "GLOBAL ANY LEFT JOIN (SELECT skey, span_row AS id, argMin(assumeNotNull(tracestate), "
        "id) AS cts, toUInt8(1) AS chit FROM %s WHERE positionCaseInsensitive(tracestate, "
        "'ot=') > 0 AND skey IN (%s) GROUP BY skey, span_row) USING (skey, id)) "
        "GROUP BY gi, w, trh) GROUP BY gi, w, ts ORDER BY w, gi%s",
        (const char *)p->map.data, (long long)t0, (long long)window_ns, (const char *)p->base.data,
        p->intervals, (const char *)p->keys.data, p->contexts, (const char *)p->keys.data,
        p->settings);
    if (rc != 0 || (rc = ch_spanq_run(p)) != 0)
        return rc;
    for (q = p->r.data, end = q + p->r.len; q < end;) {
        struct cell key = {0}, *cl;
        const unsigned char *s;
        size_t sn;
        uint64_t w, traces, trials, kept;
        char *ts;
        double rate;
        key.group = *q++;
        if (ch_get_u64(&q, end, &w) < 0 || ch_get_str(&q, end, &s, &sn) < 0 ||
            ch_get_u64(&q, end, &traces) < 0 || ch_get_u64(&q, end, &trials) < 0 ||
            ch_get_u64(&q, end, &kept) < 0)
            return ch_spanq_truncated(p);
        key.w = (int64_t)w;
        if ((cl = bsearch(&key, v, n, sizeof(*v), cmp_cell)) == NULL)
            return sf_err_set(p->err, SF_E_MALFORMED, UINT64_MAX,
                              "the cluster's traces name a window without spans");
        cl->c.traces += traces;
        cl->c.trials += trials;
        cl->c.kept += kept;
        /* read as the file's text is: a C string, whatever its length */
        if ((ts = malloc(sn + 1)) == NULL)
            return sf_err_set(p->err, SF_E_NOMEM, UINT64_MAX, "out of memory");
        memcpy(ts, s, sn);
        ts[sn] = 0;
        rate = ts[0] ? sf_tracectx_ot_rate(ts) : NAN;
        free(ts);
        /* one addition per trace, as sf_spans_add sums them */
        for (uint64_t k = 0; isfinite(rate) && k < traces; k++) {
            cl->c.cfg_sum += rate;
            cl->c.cfg_n++;
        }
    }
    return 0;
}

/* The settings of the queries whose groups grow with the spans (a state per trace and
 * window; a window's latencies): the shards' parts merged bucket by bucket on the server
 * asked, and aggregation and sorts (the cuts' partial sorts) spilled to its disk past
 * half of its memory limit for a query, so that a large fleet costs disk, not a failed
 * query. */
static int read_settings(struct ch_spanq *p)
{
    uint64_t limit = 0;
    int rc;

    if ((rc = ch_mem_limit(p->ch, &limit, p->err)) != 0)
        return rc;
    p->mem_limit = limit;
    /* limit 0: no limit, nothing to spill before (0 turns spilling off) */
    snprintf(p->settings, sizeof(p->settings),
             " SETTINGS distributed_aggregation_memory_efficient = 1, "
             "max_bytes_before_external_group_by = %llu, max_bytes_before_external_sort = %llu",
             (unsigned long long)(limit / 2), (unsigned long long)(limit / 2));
    return 0;
}

/* The span rows every query reads: sf_spans_window's, on the cluster. */
static int make_base(struct ch_spanq *p)
{
    return sf_buf_printf(
        &p->base,
        "SELECT skey, id, assumeNotNull(req_start_ns) AS t, %s AS o, "
        "assumeNotNull(%s) AS g, "
        "ifNull(trace_id, '') AS tr, sampled, isNull(span_id) AS sn, ifNull(span_id, '') AS sid, "
        /* lib/sf_spans.c's error: 5xx, a gRPC status, a reset, a JSON-RPC error */
        "ifNull(status, 0) >= 500 OR ifNull(grpc_status, 0) != 0 OR ifNull(reset_code, 0) != 0 "
        "OR rpc_error_code IS NOT NULL OR ifNull(rpc_tool_error, 0) = 1 AS e, "
        "if(isNull(coalesce(resp_end_ns, resp_start_ns)), -1., "
        "toFloat64(assumeNotNull(coalesce(resp_end_ns, resp_start_ns)) - t) / 1e6) AS lat "
        "FROM %s WHERE skey IN (%s) AND req_start_ns IS NOT NULL AND %s IS NOT NULL",
        (const char *)p->ord.data, p->group, p->spans, (const char *)p->keys.data, p->group);
}

/* sf_window_auto's choice: from every span with a start, grouped or not, and the
 * groups' counts. */
static int auto_window(struct ch_spanq *p, const struct groups *gs, int64_t *window_ns)
{
    struct sf_buf from;
    int64_t lo = 0, hi = 0, blo, bhi;
    uint64_t all = 0, cut;
    int rc = 0;

    sf_buf_init(&from, 1u << 20);
    if (sf_buf_printf(&from,
                      "SELECT assumeNotNull(req_start_ns) AS t FROM %s WHERE skey IN (%s) AND "
                      "req_start_ns IS NOT NULL",
                      p->spans, (const char *)p->keys.data))
        rc = sf_err_set(p->err, SF_E_LIMIT, UINT64_MAX, "query too long");
    if (rc == 0)
        rc = extent(p, (const char *)from.data, &lo, &hi, &all);
    sf_buf_free(&from);
    if (rc != 0)
        return rc;
    cut = all / 100;
    blo = lo;
    bhi = hi;
    if (cut && (rc = nth_start(p, lo, hi, cut, &blo)) == 0)
        rc = nth_start(p, lo, hi, all - 1 - cut, &bhi);
    if (rc == 0)
        *window_ns = all ? sf_window_of(lo, hi, (int64_t)all, blo, bhi, gs->counts, (size_t)gs->ng)
                         : SF_WINDOW_DEFAULT_NS;
    return rc;
}

static int series(struct ch_spanq *p, int64_t *window_ns, struct sf_span_windows *sw)
{
    struct groups gs;
    struct cell *v = NULL;
    size_t nv = 0;
    int64_t t0 = 0, tlast = 0;
    uint64_t n = 0;
    int rc;

    memset(&gs, 0, sizeof(gs));
    sf_buf_init(&gs.r1, CH_BODY_MAX);
    sf_buf_init(&gs.r2, CH_BODY_MAX);
    if ((rc = make_base(p)) != 0)
        rc = sf_err_set(p->err, SF_E_LIMIT, UINT64_MAX, "query too long");
    if (rc == 0)
        rc = read_settings(p);
    if (rc == 0)
        rc = extent(p, (const char *)p->base.data, &t0, &tlast, &n);
    if (rc == 0 && n > 0)
        rc = read_groups(p, &gs, n);
    if (rc == 0 && *window_ns == 0)
        rc = auto_window(p, &gs, window_ns);
    sf_spans_init(sw, *window_ns);
    if (rc == 0 && n > 0)
        rc = read_cells(p, t0, *window_ns, &v, &nv);
    if (rc == 0 && n > 0)
        rc = read_traces(p, t0, *window_ns, v, nv);
    sw->t0_ns = t0;
    for (size_t i = 0; rc == 0 && i < nv; i++) {
        if (v[i].group >= gs.ng)
            rc = sf_err_set(p->err, SF_E_MALFORMED, UINT64_MAX,
                            "the cluster put spans in a group it was not given");
        else if ((rc = sf_spans_put(sw, gs.names[v[i].group], v[i].w, &v[i].c)) < 0)
            rc = sf_err_set(p->err, rc, UINT64_MAX, "%s",
                            rc == SF_E_LIMIT ? "over the limits (4,000,000 windows x groups): "
                                               "choose another --window"
                                             : "out of memory");
    }
    sw->last_ns = tlast;
    p->ng = gs.ng; /* the ranks map gives, for later questions (ch_sets.c) */
    memcpy(p->names, gs.names, sizeof(p->names));
    if (rc == 0 && (rc = sf_spans_finish(sw)) < 0)
        sf_err_set(p->err, rc, UINT64_MAX, "out of memory");
    free(v);
    free(gs.v);
    sf_buf_free(&gs.r1);
    sf_buf_free(&gs.r2);
    return rc;
}

void ch_spanq_free(struct ch_spanq *p)
{
    if (p == NULL)
        return;
    sf_buf_free(&p->keys);
    sf_buf_free(&p->ord);
    sf_buf_free(&p->base);
    sf_buf_free(&p->map);
    sf_buf_free(&p->sql);
    sf_buf_free(&p->r);
    sf_buf_free(&p->only);
    sf_buf_free(&p->only_sid);
    free(p);
}

int ch_spanq_groups(const struct ch_spanq *p)
{
    return p->ng;
}

const char *ch_spanq_group(const struct ch_spanq *p, int r)
{
    assert(r >= 0 && r < p->ng);
    return p->names[r];
}

int ch_series(struct ch *c, const char *cluster, const char *by, int64_t *window_ns,
              struct sf_span_windows *sw, struct ch_series_cost *cost, struct ch_spanq **keep,
              struct sf_err *err)
{
    struct ch_spanq *p = calloc(1, sizeof(*p));
    int rc;

    sf_spans_init(sw, *window_ns ? *window_ns : SF_WINDOW_DEFAULT_NS); /* empty on error */
    if (keep)
        *keep = NULL;
    if (p == NULL)
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    *p = (struct ch_spanq){.ch = c, .cost = cost, .err = err, .group = sf_spans_group_expr_ch(by)};
    sf_buf_init(&p->keys, 1u << 20);
    sf_buf_init(&p->ord, 1u << 20);
    sf_buf_init(&p->base, 4u << 20);
    sf_buf_init(&p->map, 4u << 20);
    sf_buf_init(&p->sql, 16u << 20);
    sf_buf_init(&p->r, CH_BODY_MAX);
    sf_buf_init(&p->only, 2u << 20);
    sf_buf_init(&p->only_sid, 2u << 20);
    if (ch_table(c, cluster != NULL, "spans", p->spans, sizeof(p->spans)) ||
        ch_table(c, cluster != NULL, "span_intervals", p->intervals, sizeof(p->intervals)) ||
        ch_table(c, cluster != NULL, "contexts", p->contexts, sizeof(p->contexts)) ||
        ch_table(c, cluster != NULL, "samples", p->samples, sizeof(p->samples)) ||
        ch_table(c, cluster != NULL, "stacks", p->stacks, sizeof(p->stacks)) ||
        ch_table(c, cluster != NULL, "offcpu", p->offcpu, sizeof(p->offcpu)) ||
        ch_table(c, cluster != NULL, "shared_intervals", p->shared, sizeof(p->shared)))
        rc = sf_err_set(err, SF_E_LIMIT, UINT64_MAX, "too many shards to name");
    else
        rc = ch_pull_span_order(c, cluster, &p->keys, &p->ord, err);
    if (rc == 0)
        rc = series(p, window_ns, sw);
    if (rc != 0)
        sf_spans_free(sw);
    if (rc == 0 && keep) {
        p->cost = NULL;
        p->err = NULL;
        *keep = p;
    } else {
        ch_spanq_free(p);
    }
    return rc;
}

int ch_series_inflect(const struct inflect_ctx *ctx, int64_t *window_ns, struct sf_span_windows *sw,
                      char *name, size_t n)
{
    const struct ch_opts o = {ctx->ch.url, ctx->ch.cluster, ctx->ch.database};
    struct ch_series_cost cost = {0};
    struct ch_shards shards;
    struct ch *c = NULL;
    struct sf_err err;
    char shown[256], msg[700];
    int rc;

    sf_err_clear(&err);
    ch_url_shown(o.url, shown, sizeof(shown));
    ch_data_name(&o, name, n);
    rc = ch_connect(&c, &o, &shards, &err);
    if (rc == 0)
        rc = ch_series(c, o.cluster, ctx->by, window_ns, sw, &cost, NULL, &err);
    ch_close(c);
    if (rc != 0) {
        sf_err_format(&err, "inflect", shown, msg, sizeof(msg));
        fprintf(stderr, "%s\n", msg);
        return SF_EXIT_USAGE;
    }
    /* a partial answer is said where a file's incomplete sources are: a warning, and in
     * the JSON and the report */
    snprintf(sw->note, sizeof(sw->note), "%s", shards.missing);
    if (!ctx->quiet)
        fprintf(stderr,
                "inflect: %s: the windows gathered by the cluster: %u queries, %llu bytes, "
                "%.2f s\n",
                name, cost.queries, (unsigned long long)cost.bytes, cost.seconds);
    return 0;
}
