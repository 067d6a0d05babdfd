/* stacks_ch.c - spanfold stacks --clickhouse: the folded stacks of the selected spans,
 * joined and summed by ClickHouse over the tables push wrote (ch_schema.c).
 *
 *   SELECT frames, n FROM
 *     (SELECT stack_key, ifNull(sum(period), 0) AS n FROM samples[_d]
 *       WHERE span_id IS NOT NULL [AND cityHash64(span_id) % K = b]
 *         [AND span_id GLOBAL [NOT] IN (SELECT concat(span_id, '') FROM spans[_d]
 *                                       WHERE (<selection>) [AND ... % K = b])]
 *       GROUP BY stack_key)
 *   ANY INNER JOIN (SELECT stack_key, any(frames) AS frames FROM stacks[_d]
 *                   GROUP BY stack_key) USING stack_key
 *   FORMAT RowBinary
 *
 * The samples carry the span push attributed them to, so this is perf-fold/spans.c's
 * query with its attribution already done: the same samples, summed by the same
 * stacks, and printed by the same code (stacks.c), give the same bytes.  GLOBAL IN
 * sends the selected span ids to every shard once, so a span and its samples need
 * not share a shard; the selection's percentiles read spans[_d], the whole cluster, and
 * are asked first (sf_select_ch_ask), so the query holds their values.  A selection of
 * more ids than one set of them fits a server's memory limit for a query is asked in K
 * questions, b = 0 .. K-1, each of the ids of one share of their hash (ch_buckets); a
 * span's samples are all in its share, so the folds of the K answers add up.
 * --offcpu reads offcpu[_d] the same way, each interval weighing end_ns - ts_ns; --wall
 * adds to the samples' rows (UNION ALL) the intervals' with their stacks' frames (or the
 * thread's name) and a last frame "[off-CPU: REASON]", as perf-fold/spans.c's wall
 * stacks are made; the fold adds rows of the same frames.
 */
#include "stacks_ch.h"

#include <stdio.h>
#include <string.h>

#include "../perf-fold/perf_fold.h"
#include "ch.h"
#include "sf_select.h"

int stacks_ch_tables(struct stacks_ch *s, struct ch *c, int cluster)
{
    s->ch = c;
    return ch_table(c, cluster, "spans", s->spans, sizeof(s->spans)) |
           ch_table(c, cluster, "samples", s->samples, sizeof(s->samples)) |
           ch_table(c, cluster, "stacks", s->stacks, sizeof(s->stacks)) |
           ch_table(c, cluster, "offcpu", s->offcpu, sizeof(s->offcpu));
}

/* The rows of one question into t: frames and a weight, RowBinary. */
static int fold_rows(const struct sf_buf *r, struct pf_table *t, struct sf_err *err)
{
    const unsigned char *p = r->data, *end = r->data ? r->data + r->len : NULL;

    while (p < end) {
        const unsigned char *f;
        size_t n;
        uint64_t v;
        struct pf_entry *e;
        if (ch_get_str(&p, end, &f, &n) < 0 || ch_get_u64(&p, end, &v) < 0)
            return sf_err_set(err, SF_E_MALFORMED, (uint64_t)(p - r->data),
                              "ClickHouse's RowBinary answer ends inside a row");
        if (fold_table_add(t, (const char *)f, n, (int64_t)v > 0 ? v : 0, &e))
            return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    }
    return 0;
}

/* How many questions the selection's span ids are sent in (ch_buckets): from how many
 * spans it selects, counted first when the server has a memory limit. */
static int id_buckets(const struct stacks_ch *s, const struct sf_select *sel, unsigned *k,
                      struct sf_err *err)
{
    struct sf_buf sql;
    uint64_t limit = 0, n = 0;
    int rc;

    *k = 1;
    if (sel == NULL || (rc = ch_mem_limit(s->ch, &limit, err)) != 0 || limit == 0)
        return sel == NULL || limit == 0 ? 0 : rc;
    sf_buf_init(&sql, SF_SELECT_SQL_MAX + 4096);
    rc = sf_buf_printf(&sql, "SELECT count() FROM %s WHERE (%s)", s->spans, sf_select_sql(sel))
             ? sf_err_set(err, SF_E_LIMIT, UINT64_MAX, "selection too long")
             : ch_scalar(s->ch, (const char *)sql.data, &n, err);
    sf_buf_free(&sql);
    if (rc == 0)
        *k = ch_buckets(n, ch_env_bytes("SPANFOLD_CH_ID_BYTES", CH_ID_BYTES), limit);
    return rc;
}

int stacks_ch_fold(const struct stacks_ch *s, const struct sf_select *sel, int rest,
                   struct pf_table *t, struct sf_err *err)
{
    struct sf_buf sql, r, where;
    unsigned k = 1;
    int rc = id_buckets(s, sel, &k, err);

    sf_buf_init(&sql, 2 * SF_SELECT_SQL_MAX + 8192);
    sf_buf_init(&r, CH_BODY_MAX);
    sf_buf_init(&where, SF_SELECT_SQL_MAX + 4096);
    for (unsigned b = 0; rc == 0 && b < k; b++) {
        char share[96] = "";
        if (k > 1) /* this question's share of the span ids, on both sides */
            snprintf(share, sizeof(share), " AND cityHash64(span_id) %% %u = %u", k, b);
        sql.len = where.len = 0;
        rc = sf_buf_printf(&where, " WHERE span_id IS NOT NULL%s", share);
        if (sel)
            rc |= sf_buf_printf(&where,
                                /* a NULL id is no member (CH_SPAN_IDS_WHERE: why) */
                                " AND span_id GLOBAL %sIN (SELECT " CH_SPAN_ID_SET
                                " FROM %s WHERE (%s)%s)",
                                rest ? "NOT " : "", s->spans, sf_select_sql(sel), share);
        if (s->rows != PF_ROWS_OFFCPU) /* the samples, by their stacks */
            rc |= sf_buf_printf(&sql,
                                "SELECT frames, n FROM (SELECT stack_key, %s AS n FROM %s%s GROUP "
                                "BY stack_key) ANY INNER JOIN (SELECT stack_key, any(frames) AS "
                                "frames FROM %s GROUP BY stack_key) USING stack_key",
                                s->count_samples ? "count()" : "ifNull(sum(period), 0)", s->samples,
                                (const char *)where.data, s->stacks);
        if (s->rows == PF_ROWS_OFFCPU) /* the intervals, by the stacks they blocked in */
            rc |= sf_buf_printf(&sql,
                                "SELECT frames, n FROM (SELECT stack_key, sum(end_ns - ts_ns) AS "
                                "n FROM %s%s GROUP BY stack_key) ANY INNER JOIN (SELECT "
                                "stack_key, any(frames) AS frames FROM %s GROUP BY stack_key) "
                                "USING stack_key",
                                s->offcpu, (const char *)where.data, s->stacks);
        if (s->rows == PF_ROWS_WALL) /* and the intervals, each stack ending in why it waited */
            rc |= sf_buf_printf(&sql,
                                " UNION ALL SELECT concat(if(hit = 1, sframes, ifNull(comm, '?')),"
                                " ';[off-CPU: ', replaceAll(ifNull(coalesce(reason, state),"
                                " 'unknown'), ';', ':'), ']') AS frames, end_ns - ts_ns AS n FROM"
                                " (SELECT stack_key, comm, reason, state, ts_ns, end_ns FROM %s%s)"
                                " GLOBAL ANY LEFT JOIN (SELECT stack_key, any(frames) AS sframes,"
                                " toUInt8(1) AS hit FROM %s GROUP BY stack_key) USING stack_key",
                                s->offcpu, (const char *)where.data, s->stacks);
        if (rc || sf_buf_printf(&sql, " FORMAT RowBinary"))
            rc = sf_err_set(err, SF_E_LIMIT, UINT64_MAX, "selection too long");
        if (rc == 0)
            rc = ch_query(s->ch, (const char *)sql.data, NULL, 0, &r, err);
        /* each span's rows in one question: the sums add up */
        if (rc == 0)
            rc = fold_rows(&r, t, err);
    }
    sf_buf_free(&sql);
    sf_buf_free(&r);
    sf_buf_free(&where);
    return rc;
}

int stacks_ch_unit(const struct stacks_ch *s, char *buf, size_t n)
{
    struct sf_buf sql, r;
    struct sf_err err;
    int one = 0;

    sf_buf_init(&sql, 4096);
    sf_buf_init(&r, 4096);
    sf_err_clear(&err);
    sf_buf_printf(&sql,
                  "SELECT any(ifNull(event, '')), uniqExact(event) FROM %s FORMAT TabSeparated",
                  s->samples);
    snprintf(buf, n, "%s", s->rows != PF_ROWS_CPU ? "ns" : "samples");
    if (s->rows == PF_ROWS_CPU && ch_query(s->ch, (const char *)sql.data, NULL, 0, &r, &err) == 0 &&
        r.len > 0) {
        const char *tab = memchr(r.data, '\t', r.len);
        size_t k = tab ? (size_t)(tab - (const char *)r.data) : 0;
        one = tab && r.len > k + 1 && tab[1] == '1' && (r.len == k + 2 || tab[2] == '\n');
        if (one && (strncmp((const char *)r.data, "cpu-clock", 9) == 0 ||
                    strncmp((const char *)r.data, "task-clock", 10) == 0))
            snprintf(buf, n, "ns");
        else if (one && k > 0)
            snprintf(buf, n, "%.*s", (int)k, (const char *)r.data);
    }
    sf_buf_free(&sql);
    sf_buf_free(&r);
    return 0;
}
