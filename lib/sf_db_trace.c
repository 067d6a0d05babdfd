/* sf_db_trace.c - span_events, losses, span_intervals, clock_fits, and the
 * attribution of samples to span intervals (see sf_db_trace.h). */
#include "sf_db_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sf_db_trace_event(struct sf_db *db, int64_t source_id, const struct sf_trace_event *ev,
                      struct sf_err *err)
{
    static const char sql[] = "INSERT INTO span_events (source_id, ts_ns, cpu, pid, tid, comm, "
                              "kind, span_id, trace_id, decision, message, line, source) VALUES "
                              "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)";
    sqlite3_stmt *st = sf_db_stmt(db, sql, err);

    if (st == NULL)
        return SF_E_DB;
    sqlite3_bind_int64(st, 1, source_id);
    sqlite3_bind_int64(st, 2, ev->ts_ns);
    sf_db_bind_int(st, 3, ev->cpu);
    sf_db_bind_int(st, 4, ev->pid);
    sf_db_bind_int(st, 5, ev->tid);
    sf_db_bind_textn(st, 6, ev->comm, ev->comm_len);
    sf_db_bind_text(st, 7, ev->kind);
    sf_db_bind_text(st, 8, ev->span_id);
    sf_db_bind_text(st, 9, ev->trace_id);
    sf_db_bind_int(st, 10, ev->decision);
    sf_db_bind_textn(st, 11, ev->message, ev->message_len);
    sf_db_bind_int(st, 12, ev->line ? (int64_t)ev->line : SF_DB_NULL);
    sf_db_bind_text(st, 13, ev->source ? ev->source : "marker");
    return sf_db_exec_stmt(db, st, NULL, err);
}

int sf_db_trace_loss(struct sf_db *db, int64_t source_id, int64_t cpu, int64_t ts_ns,
                     int64_t events, uint64_t line, struct sf_err *err)
{
    static const char sql[] = "INSERT INTO losses (source_id, cpu, ts_ns, events, line) "
                              "VALUES (?1, ?2, ?3, ?4, ?5)";
    sqlite3_stmt *st = sf_db_stmt(db, sql, err);

    if (st == NULL)
        return SF_E_DB;
    sqlite3_bind_int64(st, 1, source_id);
    sf_db_bind_int(st, 2, cpu);
    sf_db_bind_int(st, 3, ts_ns);
    sf_db_bind_int(st, 4, events);
    sf_db_bind_int(st, 5, line ? (int64_t)line : SF_DB_NULL);
    return sf_db_exec_stmt(db, st, NULL, err);
}

int sf_db_trace_interval(struct sf_db *db, int64_t source_id, const struct sf_trace_interval *iv,
                         struct sf_err *err)
{
    static const char sql[] = "INSERT INTO span_intervals (source_id, span_id, trace_id, pid, "
                              "tid, start_ns, end_ns, depth, decision, end_rule, source) VALUES "
                              "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";
    sqlite3_stmt *st = sf_db_stmt(db, sql, err);

    if (st == NULL)
        return SF_E_DB;
    sqlite3_bind_int64(st, 1, source_id);
    sf_db_bind_text(st, 2, iv->span_id);
    sf_db_bind_text(st, 3, iv->trace_id);
    sf_db_bind_int(st, 4, iv->pid);
    sqlite3_bind_int64(st, 5, iv->tid);
    sqlite3_bind_int64(st, 6, iv->start_ns);
    sqlite3_bind_int64(st, 7, iv->end_ns);
    sqlite3_bind_int64(st, 8, iv->depth);
    sf_db_bind_int(st, 9, iv->decision);
    sf_db_bind_text(st, 10, iv->end_rule);
    sf_db_bind_text(st, 11, iv->source ? iv->source : "marker");
    return sf_db_exec_stmt(db, st, NULL, err);
}

int sf_db_trace_shared(struct sf_db *db, int64_t source_id, int64_t pid, int64_t tid,
                       int64_t start_ns, int64_t end_ns, int64_t n, const char *span_ids,
                       struct sf_err *err)
{
    static const char sql[] = "INSERT INTO shared_intervals (source_id, pid, tid, start_ns, "
                              "end_ns, spans, span_ids) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
    sqlite3_stmt *st = sf_db_stmt(db, sql, err);

    if (st == NULL)
        return SF_E_DB;
    sqlite3_bind_int64(st, 1, source_id);
    sf_db_bind_int(st, 2, pid);
    sqlite3_bind_int64(st, 3, tid);
    sqlite3_bind_int64(st, 4, start_ns);
    sqlite3_bind_int64(st, 5, end_ns);
    sqlite3_bind_int64(st, 6, n);
    sf_db_bind_text(st, 7, span_ids);
    return sf_db_exec_stmt(db, st, NULL, err);
}

int sf_db_trace_clear_socket(struct sf_db *db, int64_t source_id, struct sf_err *err)
{
    static const char *const sql[] = {
        "DELETE FROM span_events WHERE source_id = ?1 AND source = 'socket'",
        "DELETE FROM span_intervals WHERE source_id = ?1 AND source = 'socket'",
        "DELETE FROM shared_intervals WHERE source_id = ?1",
        "UPDATE spans SET parent_span_id = NULL, parent_source = NULL WHERE parent_source = ?1",
    };
    int rc = 0;

    for (size_t i = 0; i < sizeof(sql) / sizeof(sql[0]) && rc == 0; i++) {
        sqlite3_stmt *st = sf_db_stmt(db, sql[i], err);
        if (st == NULL)
            return SF_E_DB;
        sqlite3_bind_int64(st, 1, source_id);
        rc = sf_db_exec_stmt(db, st, NULL, err);
    }
    return rc;
}

int sf_db_trace_clear_fits(struct sf_db *db, int64_t source_id, struct sf_err *err)
{
    static const char sql[] = "DELETE FROM clock_fits WHERE from_source = ?1";
    sqlite3_stmt *st = sf_db_stmt(db, sql, err);

    if (st == NULL)
        return SF_E_DB;
    sqlite3_bind_int64(st, 1, source_id);
    return sf_db_exec_stmt(db, st, NULL, err);
}

int sf_db_trace_clock_fit(struct sf_db *db, const struct sf_clock_fit_row *f, int64_t *id,
                          struct sf_err *err)
{
    static const char sql[] = "INSERT INTO clock_fits (from_clock, to_clock, from_source, "
                              "to_source, offset_ns, skew_ppm, ref_ns, valid_from_ns, "
                              "valid_to_ns, points, residual_ns, residual_max_ns, method) "
                              "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)";
    sqlite3_stmt *st = sf_db_stmt(db, sql, err);

    if (st == NULL)
        return SF_E_DB;
    sf_db_bind_text(st, 1, f->from_clock);
    sf_db_bind_text(st, 2, f->to_clock);
    sf_db_bind_int(st, 3, f->from_source);
    sf_db_bind_int(st, 4, f->to_source);
    sqlite3_bind_int64(st, 5, f->offset_ns);
    sqlite3_bind_double(st, 6, f->skew_ppm);
    sqlite3_bind_int64(st, 7, f->ref_ns);
    sf_db_bind_int(st, 8, f->valid_from_ns);
    sf_db_bind_int(st, 9, f->valid_to_ns);
    sqlite3_bind_int64(st, 10, f->points);
    sf_db_bind_int(st, 11, f->residual_ns);
    sf_db_bind_int(st, 12, f->residual_max_ns);
    sf_db_bind_text(st, 13, f->method);
    return sf_db_exec_stmt(db, st, id, err);
}

/* ---- attribution ------------------------------------------------------------------ */

struct act {
    int64_t s, e;
    int depth;
    char span[17];
};

struct merge {
    struct act *a;
    size_t n, cap;
    int64_t tid;
};

static int fail(struct sf_db *db, struct sf_err *err, const char *what)
{
    return sf_err_set(err, SF_E_DB, UINT64_MAX, "attributing samples: %s: %s", what,
                      sqlite3_errmsg(sf_db_handle(db)));
}

static int same_domain(const char *a, const char *b)
{
    return strcmp(a, b) == 0 || strcmp(a, "unknown") == 0 || strcmp(b, "unknown") == 0;
}

/* Fill temp.sf_attr_map for one perf source's clock: for each interval source a
 * piecewise map of its times into that clock (identity, a fit, or a fit inverted). */
static int build_map(struct sf_db *db, const char *sclock, struct sf_attr_stats *stats,
                     struct sf_err *err)
{
    static const char fwd[] = "INSERT INTO temp.sf_attr_map SELECT ?1, valid_from_ns, valid_to_ns, "
                              "offset_ns, skew_ppm, ref_ns FROM clock_fits WHERE from_clock = ?2 "
                              "AND to_clock = ?3 AND (from_source = ?1 OR NOT EXISTS (SELECT 1 "
                              "FROM clock_fits WHERE from_clock = ?2 AND to_clock = ?3 AND "
                              "from_source = ?1))";
    /* inverse of t_A = t_B + off + k(t_B - ref): t_B = t_A - off - k/(1+k) (t_A - ref - off);
     * ranges move from B to A approximately (by off), which is what a boundary needs */
    static const char inv[] = "INSERT INTO temp.sf_attr_map SELECT ?1, valid_from_ns + offset_ns, "
                              "valid_to_ns + offset_ns, -offset_ns, "
                              "-skew_ppm / (1 + skew_ppm * 1e-6), ref_ns + offset_ns "
                              "FROM clock_fits WHERE from_clock = ?3 AND to_clock = ?2 AND "
                              "(to_source = ?1 OR NOT EXISTS (SELECT 1 FROM clock_fits WHERE "
                              "from_clock = ?3 AND to_clock = ?2 AND to_source = ?1))";
    sqlite3 *h = sf_db_handle(db);
    sqlite3_stmt *q, *ins;
    int rc = 0;

    if (sqlite3_exec(h, "DELETE FROM temp.sf_attr_map", NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(h,
                           "SELECT id, clock FROM sources WHERE id IN (SELECT DISTINCT "
                           "source_id FROM span_intervals)",
                           -1, &q, NULL) != SQLITE_OK)
        return fail(db, err, "reading sources");
    while (rc == 0 && sqlite3_step(q) == SQLITE_ROW) {
        int64_t src = sqlite3_column_int64(q, 0);
        const char *c = (const char *)sqlite3_column_text(q, 1);
        c = c ? c : "unknown";
        if (same_domain(c, sclock)) {
            char sql[128];
            snprintf(sql, sizeof(sql),
                     "INSERT INTO temp.sf_attr_map VALUES (%lld, NULL, NULL, 0, 0, 0)",
                     (long long)src);
            if (sqlite3_exec(h, sql, NULL, NULL, NULL) != SQLITE_OK)
                rc = fail(db, err, "mapping clocks");
            continue;
        }
        int added = 0;
        for (int k = 0; k < 2 && rc == 0 && !added; k++) {
            if (sqlite3_prepare_v2(h, k ? inv : fwd, -1, &ins, NULL) != SQLITE_OK) {
                rc = fail(db, err, "mapping clocks");
                break;
            }
            sqlite3_bind_int64(ins, 1, src);
            sqlite3_bind_text(ins, 2, c, -1, SQLITE_TRANSIENT);
            sqlite3_bind_text(ins, 3, sclock, -1, SQLITE_TRANSIENT);
            if (sqlite3_step(ins) != SQLITE_DONE)
                rc = fail(db, err, "mapping clocks");
            added = sqlite3_changes(h) > 0;
            sqlite3_finalize(ins);
        }
        if (!added && stats)
            stats->unmapped++;
    }
    sqlite3_finalize(q);
    return rc;
}

/* The span of the innermost interval holding t (NULL if none); drops ended ones. */
static const char *innermost(struct merge *m, int64_t t)
{
    const struct act *best = NULL;
    size_t w = 0;

    for (size_t i = 0; i < m->n; i++) {
        if (m->a[i].e < t)
            continue; /* intervals arrive by start: an ended one never comes back */
        m->a[w++] = m->a[i];
    }
    m->n = w;
    for (size_t i = 0; i < m->n; i++) {
        const struct act *x = &m->a[i];
        if (x->s <= t && (best == NULL || x->depth > best->depth ||
                          (x->depth == best->depth && x->s >= best->s)))
            best = x;
    }
    return best ? best->span : NULL;
}

static int add_active(struct merge *m, sqlite3_stmt *iv)
{
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 64;
        struct act *a = cap <= (1u << 20) ? realloc(m->a, cap * sizeof(*a)) : NULL;
        if (a == NULL)
            return SF_E_NOMEM;
        m->a = a;
        m->cap = cap;
    }
    struct act *x = &m->a[m->n++];
    x->s = sqlite3_column_int64(iv, 1);
    x->e = sqlite3_column_int64(iv, 2);
    x->depth = sqlite3_column_int(iv, 3);
    const char *sp = (const char *)sqlite3_column_text(iv, 4);
    snprintf(x->span, sizeof(x->span), "%s", sp ? sp : "");
    return 0;
}

/* What is attributed to spans by thread and time: CPU samples at their time stamp,
 * off-CPU intervals at the moment the thread left its CPU (the span it was serving
 * then is the one that blocked). */
static const struct attr_table {
    const char *name, *select, *update;
} attr_tables[] = {
    {"samples",
     "SELECT id, tid, ts_ns, span_id FROM samples WHERE source_id = ?1 AND tid IS NOT NULL AND "
     "ts_ns IS NOT NULL ORDER BY tid, ts_ns",
     "UPDATE samples SET span_id = ?2 WHERE id = ?1"},
    {"offcpu",
     "SELECT id, tid, ts_ns, span_id FROM offcpu WHERE source_id = ?1 ORDER BY tid, ts_ns",
     "UPDATE offcpu SET span_id = ?2 WHERE id = ?1"},
};

/* The sorted merge of one perf source's rows of table t with every mapped interval;
 * stats count samples only. */
static int merge_source(struct sf_db *db, int64_t src, const struct attr_table *tab,
                        struct sf_attr_stats *stats, struct sf_err *err)
{
    static const char ivq[] =
        "SELECT i.tid, i.start_ns + m.off + CAST(m.skew * 1e-6 * (i.start_ns - m.ref) AS INTEGER) "
        "AS s, i.end_ns + m.off + CAST(m.skew * 1e-6 * (i.end_ns - m.ref) AS INTEGER) AS e, "
        "i.depth, i.span_id FROM span_intervals i JOIN temp.sf_attr_map m ON m.src = i.source_id "
        "AND (m.lo IS NULL OR i.start_ns >= m.lo) AND (m.hi IS NULL OR i.start_ns <= m.hi) "
        "ORDER BY i.tid, s, e DESC";
    struct sf_attr_stats none = {0};
    sqlite3 *h = sf_db_handle(db);
    sqlite3_stmt *iv = NULL, *sm = NULL, *up = NULL;
    struct merge m = {0};
    int rc = 0, ivr;

    if (sqlite3_prepare_v2(h, ivq, -1, &iv, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(h, tab->select, -1, &sm, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(h, tab->update, -1, &up, NULL) != SQLITE_OK) {
        rc = fail(db, err, "preparing the merge");
        goto out;
    }
    if (tab != &attr_tables[0])
        stats = &none;
    sqlite3_bind_int64(sm, 1, src);
    ivr = sqlite3_step(iv);
    while (rc == 0 && sqlite3_step(sm) == SQLITE_ROW) {
        int64_t tid = sqlite3_column_int64(sm, 1), t = sqlite3_column_int64(sm, 2);
        const char *cur = (const char *)sqlite3_column_text(sm, 3), *want;
        if (tid != m.tid)
            m.n = 0, m.tid = tid;
        while (rc == 0 && ivr == SQLITE_ROW) {
            int64_t itid = sqlite3_column_int64(iv, 0);
            if (itid > tid || (itid == tid && sqlite3_column_int64(iv, 1) > t))
                break;
            if (itid == tid)
                rc = add_active(&m, iv);
            ivr = sqlite3_step(iv);
        }
        want = innermost(&m, t);
        stats->samples++;
        stats->attributed += want != NULL;
        if ((want == NULL) != (cur == NULL) || (want && strcmp(want, cur) != 0)) {
            sqlite3_bind_int64(up, 1, sqlite3_column_int64(sm, 0));
            if (want)
                sqlite3_bind_text(up, 2, want, -1, SQLITE_TRANSIENT);
            else
                sqlite3_bind_null(up, 2);
            if (sqlite3_step(up) != SQLITE_DONE)
                rc = fail(db, err, tab == &attr_tables[0] ? "updating samples" : "updating offcpu");
            sqlite3_reset(up);
            stats->changed++;
        }
    }
    if (rc == SF_E_NOMEM)
        sf_err_set(err, rc, UINT64_MAX, "attributing samples: too many overlapping intervals");
out:
    sqlite3_finalize(iv);
    sqlite3_finalize(sm);
    sqlite3_finalize(up);
    free(m.a);
    return rc;
}

int sf_db_attribute_samples_stats(struct sf_db *db, struct sf_attr_stats *stats, struct sf_err *err)
{
    struct sf_attr_stats local = {0};
    sqlite3 *h = sf_db_handle(db);
    sqlite3_stmt *q = NULL;
    int rc;

    if (stats == NULL)
        stats = &local;
    memset(stats, 0, sizeof(*stats));
    if ((rc = sf_db_commit(db, err)))
        return rc;
    /* one transaction touching up to every sample row: a larger page cache keeps
     * SQLite from spilling half-written index pages to the WAL over and over */
    sqlite3_exec(h, "PRAGMA cache_size = -65536", NULL, NULL, NULL);
    if (sqlite3_exec(h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return fail(db, err, "starting");
    if (sqlite3_exec(h,
                     "CREATE TEMP TABLE IF NOT EXISTS sf_attr_map (src INTEGER, lo INTEGER, "
                     "hi INTEGER, off INTEGER, skew REAL, ref INTEGER)",
                     NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(h,
                           "SELECT id, clock FROM sources WHERE id IN (SELECT DISTINCT "
                           "source_id FROM samples UNION SELECT DISTINCT source_id FROM offcpu)",
                           -1, &q, NULL) != SQLITE_OK) {
        rc = fail(db, err, "reading sources");
        goto out;
    }
    while (rc == 0 && sqlite3_step(q) == SQLITE_ROW) {
        char clock[64];
        const char *c = (const char *)sqlite3_column_text(q, 1);
        snprintf(clock, sizeof(clock), "%s", c ? c : "unknown");
        if ((rc = build_map(db, clock, stats, err)) == 0)
            for (size_t t = 0; rc == 0 && t < sizeof(attr_tables) / sizeof(attr_tables[0]); t++)
                rc = merge_source(db, sqlite3_column_int64(q, 0), &attr_tables[t], stats, err);
    }
out:
    sqlite3_finalize(q);
    if (rc) {
        sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
        return rc;
    }
    if (sqlite3_exec(h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        rc = fail(db, err, "committing");
        sqlite3_exec(h, "ROLLBACK", NULL, NULL, NULL);
    }
    return rc;
}

int sf_db_attribute_samples(struct sf_db *db, struct sf_err *err)
{
    return sf_db_attribute_samples_stats(db, NULL, err);
}
