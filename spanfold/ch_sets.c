/* ch_sets.c - the report's CPU sets, folded by the cluster (see ch_sets.h).
 *
 *   folds    per stack, summed on each shard: every sample's period, and those of the
 *            samples attributed to a span the slowest-5 % selection chose or did not (the
 *            selection's span ids sent to every shard once, GLOBAL IN, as stacks
 *            --clickhouse filters); the stacks' frames joined last
 *   leaves   per (span id, stack) the attributed periods, joined to the span the report
 *            would find for that id (argMin over (start, id): the first in start order of
 *            those with a group) and its group's cut, then summed per group, slow or not,
 *            and leaf frame (the last of the stack's frames); asked in buckets of span
 *            ids by their hash where the groups would pass the servers' memory limit
 *
 * The samples carry the span push attributed them to (ch_schema.c), the attribution the
 * file's query makes again on a pulled file and finds the same.  Both answers grow with
 * the distinct stacks (x groups), not with the samples.  Every period is a perf period,
 * never negative: the file clips a negative sum per span and stack, the cluster per
 * stack (the only place the two could part).
 */
#include "ch_sets.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../perf-fold/perf_fold.h"
#include "ch_spanq.h"
#include "sf_db.h"
#include "sf_select.h"

/* The next questions' cost account and error. */
static void use(struct ch_spanq *p, struct ch_series_cost *cost, struct sf_err *err)
{
    p->cost = cost;
    p->err = err;
}

/* cut as an exact ClickHouse Float64: its bytes, little-endian, reinterpreted (a decimal
 * literal would be parsed by the server's own, not always correctly rounded, reader). */
static int put_f64(struct sf_buf *b, double v)
{
    unsigned char x[8];
    int rc;

    memcpy(x, &v, 8);
    rc = sf_buf_printf(b, "reinterpretAsFloat64(unhex('");
    for (int i = 0; i < 8; i++) /* the hosts are little-endian, as ClickHouse's are */
        rc |= sf_buf_printf(b, "%02x", x[i]);
    return rc | sf_buf_printf(b, "'))");
}

/* The groups' cuts as an array literal, rank r at r + 1. */
static int put_cuts(struct sf_buf *b, const double *cut, int ng)
{
    int rc = sf_buf_printf(b, "[");

    for (int r = 0; r < ng; r++)
        rc |= sf_buf_printf(b, "%s", r ? ", " : "") | put_f64(b, cut[r]);
    return rc | sf_buf_printf(b, "]");
}

/* p->sql run, its answer one count into *n. */
static int run_count(struct ch_spanq *p, uint64_t *n)
{
    const unsigned char *q;
    int rc = ch_spanq_run(p);

    q = p->r.data;
    if (rc == 0 && ch_get_u64(&q, p->r.data + p->r.len, n) < 0)
        rc = ch_spanq_truncated(p);
    return rc;
}

int ch_sets_only(struct ch_spanq *p, const char *cond, struct sf_err *err)
{
    static const char set[] = "GLOBAL IN " CH_SPAN_IDS_WHERE;

    sf_buf_reset(&p->only);
    sf_buf_reset(&p->only_sid);
    if (cond && (sf_buf_printf(&p->only, "span_id ") ||
                 sf_buf_printf(&p->only, set, p->spans, (const char *)p->keys.data, cond) ||
                 sf_buf_printf(&p->only_sid, "sid ") ||
                 sf_buf_printf(&p->only_sid, set, p->spans, (const char *)p->keys.data, cond)))
        return sf_err_set(err, SF_E_LIMIT, UINT64_MAX, "query too long");
    return 0;
}

/* The conditions ch_sets_only set, on a row's span_id and on a sid; "1" for every span. */
static const char *only(const struct ch_spanq *p)
{
    return p->only.len ? (const char *)p->only.data : "1";
}

static const char *only_sid(const struct ch_spanq *p)
{
    return p->only_sid.len ? (const char *)p->only_sid.data : "1";
}

/* Stack f of n bytes, v into t when some sample of the set has it (the file has a row for
 * it then, even at 0). */
static int fold_add(struct ch_spanq *p, struct pf_table *t, const unsigned char *f, size_t n,
                    uint64_t v, uint64_t present)
{
    struct pf_entry *e;
    int rc;

    if (present == 0)
        return 0;
    v = (int64_t)v > 0 ? v : 0; /* a negative sum counts 0, as the file's rows */
    if ((rc = fold_table_add(t, (const char *)f, n, v, &e)) != 0)
        return sf_err_set(p->err, rc == SF_E_RANGE ? SF_E_RANGE : SF_E_NOMEM, UINT64_MAX, "%s",
                          rc == SF_E_RANGE ? "the periods of one stack sum past the counter"
                                           : "out of memory");
    return 0;
}

int ch_sets_folds(struct ch_spanq *p, const char *slowest, struct pf_table *all,
                  struct pf_table *in, struct pf_table *out, struct ch_series_cost *cost,
                  struct sf_err *err)
{
    struct sf_select sel;
    struct sf_buf from;
    const unsigned char *q, *end;
    uint64_t limit = 0, nsel = 0;
    unsigned k = 1;
    int rc;

    use(p, cost, err);
    sf_select_init(&sel);
    sf_buf_init(&from, 2u << 20);
    /* the selection's percentile over the complete sources' spans, as on the pulled file */
    rc = sf_buf_printf(&from, "(SELECT * FROM %s WHERE skey IN (%s))", p->spans,
                       (const char *)p->keys.data)
             ? sf_err_set(err, SF_E_LIMIT, UINT64_MAX, "query too long")
             : 0;
    if (rc == 0) {
        sf_select_dialect(&sel, SF_SELECT_CLICKHOUSE, (const char *)from.data);
        sf_select_ch_ask(&sel, ch_select_ask, p->ch);
        rc = sf_select_slowest(&sel, slowest, err);
    }
    /* the chosen ids in as many questions as their sets need (ch_buckets) */
    if (rc == 0 && (rc = ch_mem_limit(p->ch, &limit, err)) == 0 && limit > 0 &&
        (rc = ch_spanq_sql(p, "SELECT count() FROM %s WHERE (%s)", (const char *)from.data,
                           sf_select_sql(&sel))) == 0 &&
        (rc = run_count(p, &nsel)) == 0)
        k = ch_buckets(nsel, ch_env_bytes("SPANFOLD_CH_ID_BYTES", CH_ID_BYTES), limit);
    for (unsigned b = 0; rc == 0 && b < k; b++) {
        char share[96] = "", shares[96] = "";
        if (k > 1) { /* this question's share of the span ids, every sample in one */
            snprintf(share, sizeof(share), " AND cityHash64(span_id) %% %u = %u", k, b);
            snprintf(shares, sizeof(shares), " AND cityHash64(ifNull(span_id, '')) %% %u = %u", k,
                     b);
        }
        rc = ch_spanq_sql(
            p,
            /* summed per stack on each shard, the chosen ids sent to every shard once;
               the selection's cut asked first (sf_select_ch_ask); a NULL id no member of
               the set (CH_SPAN_IDS_WHERE says why no IS NOT NULL, and why computed);
               without p->settings: its groups are the stacks */
            "SELECT frames, na, ni, no, ci, co FROM (SELECT stack_key, ifNull(sum(period), 0) AS "
            "na, ifNull(sumIf(period, isNotNull(span_id) AND ((span_id GLOBAL IN "
            "(SELECT " CH_SPAN_ID_SET " FROM %s WHERE (%s)%s)) AS ch)), 0) AS ni, "
            "ifNull(sumIf(period, isNotNull(span_id) AND NOT ch), 0) AS no, "
            "countIf(isNotNull(span_id) AND ch) AS ci, countIf(isNotNull(span_id) AND NOT ch) AS "
            "co FROM %s WHERE skey IN (%s)%s GROUP BY stack_key) ANY INNER JOIN (SELECT stack_key, "
            "any(frames) AS frames FROM %s GROUP BY stack_key) USING stack_key",
            (const char *)from.data, sf_select_sql(&sel), share, p->samples,
            (const char *)p->keys.data, shares, p->stacks);
        if (rc == 0)
            rc = ch_spanq_run(p);
        for (q = p->r.data, end = q + p->r.len; rc == 0 && q < end;) {
            const unsigned char *f;
            size_t n;
            uint64_t v[5];
            if (ch_get_str(&q, end, &f, &n) < 0)
                rc = ch_spanq_truncated(p);
            for (int i = 0; rc == 0 && i < 5; i++)
                if (ch_get_u64(&q, end, &v[i]) < 0)
                    rc = ch_spanq_truncated(p);
            if (rc == 0 && (rc = fold_add(p, all, f, n, v[0], 1)) == 0 &&
                (rc = fold_add(p, in, f, n, v[1], v[3])) == 0)
                rc = fold_add(p, out, f, n, v[2], v[4]);
        }
    }
    sf_select_free(&sel);
    sf_buf_free(&from);
    return rc;
}

/* p->sql run, its answer (group rank, count) rows into n[rank], 0 for a rank not in it. */
static int rank_counts(struct ch_spanq *p, uint64_t *n)
{
    const unsigned char *q, *end;
    int rc = ch_spanq_run(p);

    for (int r = 0; r < p->ng; r++)
        n[r] = 0;
    for (q = p->r.data, end = q + p->r.len; rc == 0 && q < end;) {
        uint64_t c;
        int r = *q++;
        if (ch_get_u64(&q, end, &c) < 0)
            return ch_spanq_truncated(p);
        if (r < p->ng)
            n[r] = c;
    }
    return rc;
}

/* The groups' latencies, as (SELECT gr, lat): the spans with a group and a latency. */
#define LATS "SELECT gr, lat FROM (SELECT %s AS gr, lat FROM (%s)) WHERE gr < %d AND lat >= 0"

int ch_sets_cuts(struct ch_spanq *p, double share, double *cut, uint64_t *n,
                 struct ch_series_cost *cost, struct sf_err *err)
{
    struct sf_buf cuts;
    int rc;

    use(p, cost, err);
    for (int r = 0; r < p->ng; r++) {
        cut[r] = INFINITY;
        n[r] = 0;
    }
    if (p->ng == 0)
        return 0;
    /* how many latencies each group has */
    if ((rc = ch_spanq_sql(p, "SELECT gr, count() FROM (" LATS ") GROUP BY gr%s",
                           (const char *)p->map.data, (const char *)p->base.data, p->ng,
                           p->settings)) != 0)
        return rc;
    if ((rc = rank_counts(p, n)) != 0)
        return rc;
    /* each group's k-th largest, k = ceil(share * n) as slow_cut takes it */
    for (int r = 0; r < p->ng; r++) {
        uint64_t k = (uint64_t)ceil((double)n[r] * share), v;
        if (n[r] == 0)
            continue;
        if ((rc = ch_spanq_sql(p,
                               "SELECT lat FROM (" LATS ") WHERE gr = %d ORDER BY lat DESC "
                               "LIMIT %llu, 1%s",
                               (const char *)p->map.data, (const char *)p->base.data, p->ng, r,
                               (unsigned long long)(k ? k - 1 : 0), p->settings)) != 0)
            return rc;
        if ((rc = run_count(p, &v)) != 0)
            return rc;
        memcpy(&cut[r], &v, sizeof(v)); /* Float64, its bits */
    }
    /* and how many are at or above it */
    sf_buf_init(&cuts, 1u << 16);
    rc = put_cuts(&cuts, cut, p->ng);
    if (rc == 0)
        rc = ch_spanq_sql(
            p, "SELECT gr, countIf(lat >= arrayElement(%s, gr + 1)) FROM (" LATS ") GROUP BY gr%s",
            (const char *)cuts.data, (const char *)p->map.data, (const char *)p->base.data, p->ng,
            p->settings);
    if (rc == 0)
        rc = rank_counts(p, n);
    sf_buf_free(&cuts);
    return rc;
}

/* The bytes a (span id, stack) group of the leaves' query is budgeted on a server: its
 * hash table cell, key, sum and share of the join, with room.  SPANFOLD_CH_GROUP_BYTES
 * replaces it (docs/scale.md): more where a server still runs out, less to ask in fewer
 * questions. */
#define LEAF_GROUP_BYTES 2048u

/* The buckets the leaves' query is asked in, each a share of the span ids by their hash,
 * so that one question's groups fit the servers' limit for a query: 1 without one. */
static int leaf_buckets(struct ch_spanq *p, unsigned *k)
{
    uint64_t rows = 0;
    int rc;

    *k = 1;
    if (p->mem_limit == 0) /* no limit: one question */
        return 0;
    /* the attributed samples bound the (span id, stack) groups */
    if ((rc = ch_spanq_sql(p,
                           "SELECT count() FROM %s WHERE skey IN (%s) AND span_id IS NOT NULL "
                           "AND (%s)",
                           p->samples, (const char *)p->keys.data, only(p))) != 0 ||
        (rc = run_count(p, &rows)) != 0)
        return rc;
    *k = ch_buckets(rows, ch_env_bytes("SPANFOLD_CH_GROUP_BYTES", LEAF_GROUP_BYTES), p->mem_limit);
    return 0;
}

/* One bucket's rows (of k) to fn. */
static int leaves_bucket(struct ch_spanq *p, const char *cuts, unsigned i, unsigned k,
                         ch_sets_leaf_fn fn, void *arg)
{
    const unsigned char *q, *end;
    char left[96] = "1", right[96] = "1";
    int rc;

    if (k > 1) {
        snprintf(left, sizeof(left), "cityHash64(assumeNotNull(span_id)) %% %u = %u", k, i);
        snprintf(right, sizeof(right), "cityHash64(sid) %% %u = %u", k, i);
    }
    if ((rc = ch_spanq_sql(
             p,
             "SELECT gi, sl, leaf, sum(n) FROM (SELECT gi, sl, stack_key, n FROM (SELECT "
             "assumeNotNull(span_id) AS sid, stack_key, toUInt64(greatest(ifNull(sum(period), "
             "0), 0)) AS n FROM %s WHERE skey IN (%s) AND span_id IS NOT NULL AND (%s) AND %s "
             "GROUP BY sid, stack_key) ANY INNER JOIN (SELECT sid, argMin(gr, (t, o)) AS gi, "
             "toUInt8(argMin(lat, (t, o)) >= arrayElement(%s, gi + 1)) AS sl FROM (SELECT sid, "
             "t, o, lat, %s AS gr FROM (%s) WHERE sn = 0) WHERE gr < %d AND (%s) AND %s GROUP "
             "BY sid) USING sid) ANY INNER JOIN (SELECT stack_key, "
             "arrayElement(splitByChar(';', any(frames)), -1) AS leaf FROM %s GROUP BY "
             "stack_key) USING stack_key GROUP BY gi, sl, leaf%s",
             p->samples, (const char *)p->keys.data, only(p), left, cuts, (const char *)p->map.data,
             (const char *)p->base.data, p->ng, only_sid(p), right, p->stacks, p->settings)) != 0 ||
        (rc = ch_spanq_run(p)) != 0)
        return rc;
    for (q = p->r.data, end = q + p->r.len; q < end;) {
        const unsigned char *leaf;
        size_t n;
        uint64_t v;
        int rank, slow;
        if (end - q < 2)
            return ch_spanq_truncated(p);
        rank = *q++;
        slow = *q++;
        if (ch_get_str(&q, end, &leaf, &n) < 0 || ch_get_u64(&q, end, &v) < 0)
            return ch_spanq_truncated(p);
        if (rank >= p->ng)
            return sf_err_set(p->err, SF_E_MALFORMED, UINT64_MAX,
                              "the cluster put samples in a group it was not given");
        if (fn(arg, rank, slow, (const char *)leaf, n, v) < 0)
            return sf_err_set(p->err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    }
    return 0;
}

int ch_sets_leaves(struct ch_spanq *p, const double *cut, ch_sets_leaf_fn fn, void *arg,
                   struct ch_series_cost *cost, struct sf_err *err)
{
    struct sf_buf cuts;
    unsigned k = 1;
    int rc;

    use(p, cost, err);
    if (p->ng == 0)
        return 0;
    sf_buf_init(&cuts, 1u << 16);
    if ((rc = put_cuts(&cuts, cut, p->ng)) != 0)
        rc = sf_err_set(err, SF_E_LIMIT, UINT64_MAX, "query too long");
    if (rc == 0)
        rc = leaf_buckets(p, &k);
    for (unsigned i = 0; rc == 0 && i < k; i++)
        rc = leaves_bucket(p, (const char *)cuts.data, i, k, fn, arg);
    sf_buf_free(&cuts);
    return rc;
}

int ch_sets_span_cpu(struct ch_spanq *p, ch_sets_cpu_fn fn, void *arg, struct ch_series_cost *cost,
                     struct sf_err *err)
{
    const unsigned char *q, *end;
    int rc;

    use(p, cost, err);
    /* SQLite's LIKE folds ASCII case, as lower() does */
    if ((rc = ch_spanq_sql(
             p,
             "SELECT assumeNotNull(span_id) AS sid, ifNull(sum(period), 0) FROM %s WHERE "
             "skey IN (%s) AND span_id IS NOT NULL AND (lower(event) LIKE 'cpu-clock%%' "
             "OR lower(event) LIKE 'task-clock%%') AND (%s) GROUP BY sid%s",
             p->samples, (const char *)p->keys.data, only(p), p->settings)) != 0 ||
        (rc = ch_spanq_run(p)) != 0)
        return rc;
    for (q = p->r.data, end = q + p->r.len; q < end;) {
        const unsigned char *id;
        size_t n;
        uint64_t v;
        if (ch_get_str(&q, end, &id, &n) < 0 || ch_get_u64(&q, end, &v) < 0)
            return ch_spanq_truncated(p);
        if (fn(arg, (const char *)id, n, (int64_t)v) < 0)
            return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    }
    return 0;
}

int ch_sets_blocked(struct ch_spanq *p, ch_sets_blocked_fn fn, void *arg, int *any,
                    struct ch_series_cost *cost, struct sf_err *err)
{
    const unsigned char *q, *end;
    uint64_t n = 0;
    int rc;

    use(p, cost, err);
    if ((rc = ch_spanq_sql(p, "SELECT count() FROM %s WHERE skey IN (%s)", p->offcpu,
                           (const char *)p->keys.data)) != 0)
        return rc;
    if ((rc = run_count(p, &n)) != 0)
        return rc;
    *any = n > 0;
    if ((rc = ch_spanq_sql(
             p,
             "SELECT assumeNotNull(span_id) AS sid, concat(ifNull(coalesce(reason, state, "
             "'?'), '?'), ifNull(concat(' under ', frame), '')) AS why, sum(end_ns - "
             "ts_ns) FROM %s WHERE skey IN (%s) AND span_id IS NOT NULL AND (%s) GROUP BY sid, "
             "why ORDER BY sid, why%s",
             p->offcpu, (const char *)p->keys.data, only(p), p->settings)) != 0)
        return rc;
    if (n == 0 || (rc = ch_spanq_run(p)) != 0)
        return rc;
    for (q = p->r.data, end = q + p->r.len; q < end;) {
        const unsigned char *id, *why;
        size_t in, wn;
        uint64_t v;
        if (ch_get_str(&q, end, &id, &in) < 0 || ch_get_str(&q, end, &why, &wn) < 0 ||
            ch_get_u64(&q, end, &v) < 0)
            return ch_spanq_truncated(p);
        if (fn(arg, (const char *)id, in, (const char *)why, wn, (int64_t)v) < 0)
            return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    }
    return 0;
}

int ch_sets_events(struct ch_spanq *p, char *ev, size_t n, uint64_t *distinct,
                   struct ch_series_cost *cost, struct sf_err *err)
{
    const unsigned char *q, *end, *s;
    size_t sn;
    int rc;

    use(p, cost, err);
    if ((rc = ch_spanq_sql(p,
                           "SELECT ifNull(min(event), ''), ifNull(uniqExact(event), 0) FROM %s "
                           "WHERE skey IN (%s)",
                           p->samples, (const char *)p->keys.data)) != 0 ||
        (rc = ch_spanq_run(p)) != 0)
        return rc;
    q = p->r.data;
    end = q + p->r.len;
    if (ch_get_str(&q, end, &s, &sn) < 0 || ch_get_u64(&q, end, distinct) < 0)
        return ch_spanq_truncated(p);
    sn = strnlen((const char *)s, sn); /* a C string, as the file's text is read */
    snprintf(ev, n, "%.*s", (int)sn, (const char *)s);
    return 0;
}

int ch_sets_coverage(struct ch_spanq *p, struct sf_db_coverage *rows, size_t max, size_t *n,
                     struct ch_series_cost *cost, struct sf_err *err)
{
    const unsigned char *q, *end;
    int rc;

    use(p, cost, err);
    *n = 0;
    /* a sample's signal: the socket intervals of its span on its thread that hold it
       (their starts and ends side by side per span and thread: a join cannot compare;
       the sample's time goes into the lambdas as an array, 18.16's lambdas do not see a
       joined query's columns); without a span, the shared interval of its thread that
       started last before it (the thread's, sorted by start and id, as the file's index
       finds it) still running */
    if ((rc = ch_spanq_sql(
             p,
             "SELECT pn, pk, ifNull(max(comm), '') AS cm, count() AS c, sum(so), countIf(sn = 0), "
             "sum(sh), sum(lp), sum(gr) FROM (SELECT pn, pk, comm, sn, so, lp, gr, shit = 1 AND sn "
             "= 1 AND tsn = 0 AND (arrayCount((x, t) -> x <= t, hs, replicate(ts, hs)) AS ix) > 0 "
             "AND arrayElement(he, ix) >= ts AS sh FROM (SELECT pn, pk, comm, sn, tn, tk, tsn, ts, "
             "hit = 1 AND tsn = 0 AND arrayExists((a, b, x) -> a <= x AND b >= x, st, en, "
             "replicate(ts, st)) AS so, hit = 1 AND tsn = 0 AND arrayExists((a, b, r, x) -> a <= "
             "x AND b >= x AND r = 'loop', st, en, ru, replicate(ts, st)) AS lp, hit = 1 AND tsn = "
             "0 AND arrayExists((a, b, r, x) -> a <= x AND b >= x AND r = 'goroutine', st, en, ru, "
             "replicate(ts, st)) AS gr FROM (SELECT isNull(pid) AS pn, ifNull(pid, 0) AS pk, comm, "
             "isNull(span_id) AS sn, ifNull(span_id, '') AS sid, isNull(tid) AS tn, ifNull(tid, "
             "0) AS tk, isNull(ts_ns) AS tsn, ifNull(ts_ns, 0) AS ts FROM %s WHERE skey IN (%s)) "
             "GLOBAL ANY LEFT JOIN (SELECT toUInt8(0) AS sn, span_id AS sid, toUInt8(0) AS tn, "
             "tid AS tk, groupArray(start_ns) AS st, groupArray(end_ns) AS en, "
             "groupArray(ifNull(end_rule, '')) AS ru, toUInt8(1) AS hit FROM %s WHERE skey IN "
             "(%s) AND source = 'socket' GROUP BY sid, tk) USING (sn, sid, tn, tk)) GLOBAL ANY "
             "LEFT JOIN (SELECT toUInt8(0) AS tn, tid AS tk, arraySort(groupArray((start_ns, id, "
             "end_ns))) AS v, arrayMap(x -> tupleElement(x, 1), v) AS hs, arrayMap(x -> "
             "tupleElement(x, 3), v) AS he, toUInt8(1) AS shit FROM %s WHERE skey IN (%s) GROUP "
             "BY tk) USING (tn, tk)) GROUP BY pn, pk ORDER BY c DESC, pn DESC, pk LIMIT %zu%s",
             p->samples, (const char *)p->keys.data, p->intervals, (const char *)p->keys.data,
             p->shared, (const char *)p->keys.data, max, p->settings)) != 0)
        return rc;
    if ((rc = ch_spanq_run(p)) != 0)
        return rc;
    for (q = p->r.data, end = q + p->r.len; q < end && *n < max;) {
        struct sf_db_coverage *r = &rows[*n];
        const unsigned char *cm;
        size_t cn;
        uint64_t pk, v[6];
        int pn;
        if (end - q < 1)
            return ch_spanq_truncated(p);
        pn = *q++;
        if (ch_get_u64(&q, end, &pk) < 0 || ch_get_str(&q, end, &cm, &cn) < 0)
            return ch_spanq_truncated(p);
        for (int k = 0; k < 6; k++)
            if (ch_get_u64(&q, end, &v[k]) < 0)
                return ch_spanq_truncated(p);
        /* sf_db_coverage's arithmetic on the same counts */
        memset(r, 0, sizeof(*r));
        r->pid = pn ? 0 : (int64_t)pk;
        cn = strnlen((const char *)cm, cn);
        snprintf(r->comm, sizeof(r->comm), "%.*s", (int)cn, (const char *)cm);
        r->samples = (int64_t)v[0];
        r->loop = (int64_t)v[4];
        r->go = (int64_t)v[5];
        r->sockets = (int64_t)v[1] - r->loop - r->go;
        r->markers = (int64_t)v[2] - r->sockets - r->loop - r->go;
        r->shared = (int64_t)v[3];
        r->none = r->samples - (int64_t)v[2] - r->shared;
        (*n)++;
    }
    return 0;
}

int ch_sets_explore_count(struct ch_spanq *p, uint64_t *n, struct ch_series_cost *cost,
                          struct sf_err *err)
{
    int rc;

    use(p, cost, err);
    *n = 0;
    if (p->ng == 0)
        return 0;
    if ((rc = ch_spanq_sql(
             p,
             /* the ids computed after the last filter (CH_SPAN_ID_SET says why) */
             "SELECT count() FROM %s WHERE skey IN (%s) AND (%s) AND span_id GLOBAL IN (SELECT "
             "concat(sid, '') FROM (SELECT sid, %s AS gr FROM (%s) WHERE sn = 0) WHERE gr < %d "
             "AND (%s))%s",
             p->samples, (const char *)p->keys.data, only(p), (const char *)p->map.data,
             (const char *)p->base.data, p->ng, only_sid(p), p->settings)) != 0)
        return rc;
    return run_count(p, n);
}
