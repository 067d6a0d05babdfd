/* spans.c - span-aware folding: the database's perf samples, folded under a
 * synthetic root frame that names their group.
 *
 *   [span 00f067aa0ba902b7 GET /api];java;main;work 42
 *   [unattributed];java;GC;... 7          <- samples outside every span, kept
 *
 * Attribution, in one query (ATTRIB_SQL below; its rows summed per span and stack,
 * ATTRIB_GROUPED, before the spans and stacks are joined):
 *   1. samples.span_id when a tool set it (tracefs2spans);
 *   2. else the span_intervals row on the same thread (tid) whose [start_ns,
 *      end_ns] holds the sample's ts_ns and whose source has the same clock
 *      domain as the sample's source (sources.clock); the innermost wins
 *      (deepest, then latest start).  The range scan on (tid, start_ns) is
 *      bounded by the longest interval so that it stays short.
 * The span row (spans.span_id) gives method, path, trace id, gRPC method and
 * the sampling decision; the interval's trace_id/decision stand in when the
 * capture has no such span.  A selection (lib/sf_select, spanfold stacks) keeps
 * the samples whose span id is, or with `rest` is not, one of the selected spans'.
 */
#include <string.h>

#include "perf_fold.h"
#include "sf_count.h"
#include "sf_select.h"

#define ATTRIB_CTE_FROM(rows)                                                                      \
    "WITH lim AS (SELECT COALESCE(MAX(end_ns - start_ns), 0) AS d FROM span_intervals),"           \
    " a AS (SELECT s.id AS row_id, s.stack_id, s.period, s.span_id AS sid,"                        \
    "   CASE WHEN s.span_id IS NULL AND s.ts_ns IS NOT NULL THEN"                                  \
    "    (SELECT i.id FROM span_intervals i JOIN sources si ON si.id = i.source_id"                \
    "      WHERE i.tid = s.tid AND i.start_ns <= s.ts_ns AND i.start_ns >= s.ts_ns - lim.d"        \
    "        AND s.ts_ns <= i.end_ns AND si.clock = src.clock"                                     \
    "      ORDER BY i.depth DESC, i.start_ns DESC, i.id DESC LIMIT 1) END AS iid"                  \
    "  FROM " rows " s JOIN sources src ON src.id = s.source_id, lim),"                            \
    " b AS (SELECT a.row_id, a.stack_id, a.period, COALESCE(a.sid, iv.span_id) AS span_id,"        \
    "   iv.trace_id AS itrace, iv.decision AS idec FROM a LEFT JOIN span_intervals iv"             \
    "   ON iv.id = a.iid)"
#define ATTRIB_CTE ATTRIB_CTE_FROM("samples")
/* off-CPU intervals as rows to fold: each weighs its length in ns */
#define OFFCPU_ROWS                                                                                \
    "(SELECT id, source_id, ts_ns, tid, stack_id, end_ns - ts_ns AS period, span_id FROM offcpu)"

/* What is folded, as rows of (id, source_id, ts_ns, tid, stack_id, period, span_id):
 * CPU samples weighing their period; off-CPU intervals weighing their length in ns,
 * by the stack they blocked in; or both (wall-clock time), the intervals' stacks
 * marked with a leaf frame that says why the thread was off CPU. */
static const char *const fold_rows[] = {
    [PF_ROWS_CPU] = "samples",
    [PF_ROWS_OFFCPU] = OFFCPU_ROWS,
    [PF_ROWS_WALL] = "(SELECT id, source_id, ts_ns, tid, stack_id, period, span_id FROM samples "
                     "UNION ALL SELECT -o.id, o.source_id, o.ts_ns, o.tid, (SELECT x.id FROM "
                     "sf_wall_stacks x WHERE x.offcpu_id = o.id), o.end_ns - o.ts_ns, o.span_id "
                     "FROM offcpu o)",
};
/* b's rows summed per span, interval context and stack before anything is joined to them
 * (many samples share these: the spans' and the stacks' lookups, and the frames the
 * grouping carried, were per sample) */
#define ATTRIB_GROUPED                                                                             \
    ", g AS (SELECT span_id, itrace, idec, stack_id, SUM(period) AS period, COUNT(*) AS n"         \
    "  FROM b GROUP BY span_id, itrace, idec, stack_id)"
#define ATTRIB_SELECT_ST(stacks) ATTRIB_SELECT_STX(stacks, "")
/* ... with columns after COL_N (extra: ", expr, ...") */
#define ATTRIB_SELECT_STX(stacks, extra)                                                           \
    " SELECT g.span_id, sp.method, sp.path, COALESCE(sp.trace_id, g.itrace),"                      \
    "   sp.grpc_service, sp.grpc_method, COALESCE(sp.sampled, g.idec), st.frames, "                \
    "SUM(g.period), SUM(g.n)" extra " FROM g JOIN " stacks " st ON st.id = g.stack_id"             \
    " LEFT JOIN spans sp ON sp.id = (SELECT MIN(x.id) FROM spans x WHERE x.span_id = "             \
    "g.span_id)"                                                                                   \
    " WHERE (?1 IS NULL OR g.span_id = ?1)"                                                        \
    "   AND (?2 IS NULL OR COALESCE(sp.trace_id, g.itrace) = ?2)"                                  \
    "   AND (?3 IS NULL OR sp.grpc_method = ?3 OR sp.grpc_service || '/' || "                      \
    "sp.grpc_method = ?3)"
#define ATTRIB_GROUP " GROUP BY g.span_id, 4, 7, st.id"

const char spans_attrib_cte[] = ATTRIB_CTE;
const char spans_attrib_offcpu_cte[] = ATTRIB_CTE_FROM(OFFCPU_ROWS);
#define ATTRIB_SQL ATTRIB_CTE ATTRIB_GROUPED ATTRIB_SELECT_ST("stacks")

enum {
    COL_SPAN,
    COL_METHOD,
    COL_PATH,
    COL_TRACE,
    COL_GSVC,
    COL_GMETH,
    COL_SAMPLED,
    COL_FRAMES,
    COL_SUM,
    COL_N,
    COL_CHOSEN /* spans_fold_sets: the span is one the selection chose */
};

static const char *col(sqlite3_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(st, i);
}

/* Append text to b with ';' (the frame separator) and control bytes made safe. */
static void put(struct sf_buf *b, const char *s)
{
    for (; s && *s; s++) {
        char ch = *s == ';' ? ':' : ((unsigned char)*s < 0x20 || *s == 0x7f) ? '?' : *s;
        sf_buf_append(b, &ch, 1);
    }
}

static void label(struct sf_buf *b, const char *by, sqlite3_stmt *st)
{
    const char *span = col(st, COL_SPAN), *method = col(st, COL_METHOD), *path = col(st, COL_PATH);

    sf_buf_reset(b);
    if (span == NULL) {
        put(b, "[unattributed]");
        return;
    }
    put(b, "[");
    if (strcmp(by, "span") == 0) {
        put(b, "span ");
        put(b, span);
        if (method || path) {
            put(b, " ");
            put(b, method ? method : "-");
            put(b, " ");
            put(b, path ? path : "-");
        }
    } else if (strcmp(by, "trace") == 0) {
        put(b, "trace ");
        put(b, col(st, COL_TRACE) ? col(st, COL_TRACE) : "unknown");
    } else if (strcmp(by, "grpc_method") == 0) {
        if (col(st, COL_GMETH)) {
            put(b, "grpc ");
            if (col(st, COL_GSVC)) {
                put(b, col(st, COL_GSVC));
                put(b, "/");
            }
            put(b, col(st, COL_GMETH));
        } else {
            put(b, "no grpc method");
        }
    } else if (strcmp(by, "path") == 0) {
        put(b, "path ");
        if (method) {
            put(b, method);
            put(b, " ");
        }
        put(b, path ? path : "unknown");
    } else {
        int t = sqlite3_column_type(st, COL_SAMPLED);
        put(b, t == SQLITE_NULL                      ? "sampled unknown"
               : sqlite3_column_int(st, COL_SAMPLED) ? "sampled"
                                                     : "unsampled");
    }
    put(b, "]");
}

/* --wall: each off-CPU interval's stack with a leaf frame saying why the thread was
 * off CPU ("[off-CPU: futex_wait_queue]"), interned in a TEMP table of the reader's
 * connection (the database is opened read-only; TEMP lives beside it). */
static int wall_stacks(sqlite3 *h, struct sf_err *err)
{
    static const char sql[] =
        "DROP TABLE IF EXISTS temp.sf_wall_stacks;"
        "CREATE TEMP TABLE sf_wall_stacks (id INTEGER PRIMARY KEY, offcpu_id INTEGER UNIQUE, "
        "  frames TEXT);"
        "INSERT INTO temp.sf_wall_stacks (id, offcpu_id, frames) SELECT -o.id, o.id, "
        "  coalesce(st.frames, o.comm, '?') || ';[off-CPU: ' || "
        "  replace(coalesce(o.reason, o.state, 'unknown'), ';', ':') || ']' "
        "  FROM offcpu o LEFT JOIN stacks st ON st.id = o.stack_id;";
    char *msg = NULL;

    if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK) {
        sf_err_set(err, SF_E_DB, UINT64_MAX, "off-CPU stacks: %s", msg ? msg : "error");
        sqlite3_free(msg);
        return SF_E_DB;
    }
    return 0;
}

/* The spans sel selects, into TEMP table sf_chosen of the reader's connection (as the
 * off-CPU stacks are in sf_wall_stacks): the one definition of a selection's samples,
 * for spans_fold_table's filter and spans_fold_sets' split. */
static int choose(sqlite3 *h, const struct sf_select *sel, struct sf_err *err)
{
    struct sf_buf sql;
    sqlite3_stmt *st;
    int rc;

    if (sqlite3_exec(h, "DROP TABLE IF EXISTS temp.sf_chosen", NULL, NULL, NULL) != SQLITE_OK)
        return sf_err_set(err, SF_E_DB, UINT64_MAX, "query failed: %s", sqlite3_errmsg(h));
    sf_buf_init(&sql, SF_SELECT_SQL_MAX + 4096);
    if (sf_buf_printf(&sql,
                      "CREATE TEMP TABLE sf_chosen AS SELECT DISTINCT span_id FROM spans"
                      " WHERE (%s) AND span_id IS NOT NULL",
                      sf_select_sql(sel))) {
        sf_buf_free(&sql);
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    }
    rc = sqlite3_prepare_v2(h, (const char *)sql.data, -1, &st, NULL);
    sf_buf_free(&sql);
    if (rc != SQLITE_OK)
        return sf_err_set(err, SF_E_DB, UINT64_MAX, "query failed: %s", sqlite3_errmsg(h));
    if (sf_select_bind(sel, st, 1) < 0 || sqlite3_step(st) != SQLITE_DONE) {
        sf_err_set(err, SF_E_DB, UINT64_MAX, "query failed: %s", sqlite3_errmsg(h));
        sqlite3_finalize(st);
        return SF_E_DB;
    }
    sqlite3_finalize(st);
    return 0;
}

/* The query for f: the attribution over f's rows, the selection's condition, the
 * grouping. */
static int prepare(sqlite3 *h, const struct spans_filter *f, sqlite3_stmt **st, struct sf_err *err)
{
    struct sf_buf sql;
    int rc = 0;

    if (f->rows == PF_ROWS_WALL && wall_stacks(h, err) != 0)
        return err->code;
    if (f->sel && (rc = choose(h, f->sel, err)) != 0)
        return rc;
    sf_buf_init(&sql, 4096);
    if (f->rows == PF_ROWS_CPU
            ? sf_buf_printf(&sql, "%s", ATTRIB_SQL)
            : sf_buf_printf(&sql, ATTRIB_CTE_FROM("%s") ATTRIB_GROUPED ATTRIB_SELECT_ST("%s"),
                            fold_rows[f->rows],
                            f->rows == PF_ROWS_WALL ? "(SELECT id, frames FROM stacks UNION ALL "
                                                      "SELECT id, frames FROM temp.sf_wall_stacks)"
                                                    : "stacks"))
        rc = sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    if (rc == 0 && f->attributed && sf_buf_printf(&sql, " AND g.span_id IS NOT NULL"))
        rc = sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    if (rc == 0 && f->sel &&
        sf_buf_printf(&sql, " AND g.span_id IS NOT NULL AND g.span_id %sIN temp.sf_chosen",
                      f->rest ? "NOT " : ""))
        rc = sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    if (rc == 0 && sf_buf_printf(&sql, "%s", ATTRIB_GROUP))
        rc = sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    if (rc == 0 && sqlite3_prepare_v2(h, (const char *)sql.data, -1, st, NULL) != SQLITE_OK)
        rc = sf_err_set(err, SF_E_DB, UINT64_MAX, "query failed: %s", sqlite3_errmsg(h));
    sf_buf_free(&sql);
    if (rc)
        return rc;
    sf_db_bind_text(*st, 1, f->span);
    sf_db_bind_text(*st, 2, f->trace);
    sf_db_bind_text(*st, 3, f->grpc_method);
    return 0;
}

/* The row at st (its frames, weighing sum) into t, under its group_by label when one is
 * given; key is scratch.  0, or an SF_E_* with err set. */
static int add_row(struct pf_table *t, const char *group_by, sqlite3_stmt *st, int64_t sum,
                   struct sf_buf *key, struct sf_err *err)
{
    const char *frames = col(st, COL_FRAMES);
    struct pf_entry *e;
    int ret = 0;

    sf_buf_reset(key);
    if (group_by) {
        label(key, group_by, st);
        ret = sf_buf_append(key, ";", 1);
    }
    if (ret ||
        sf_buf_append(key, frames ? frames : "", (size_t)sqlite3_column_bytes(st, COL_FRAMES)) ||
        (ret = fold_table_add(t, key->data ? (const char *)key->data : "", key->len,
                              sum > 0 ? (uint64_t)sum : 0, &e)) != 0)
        return sf_err_set(err, ret == SF_E_RANGE ? SF_E_RANGE : SF_E_NOMEM, UINT64_MAX,
                          ret == SF_E_RANGE ? "the periods of one stack sum past " SF_COUNT_MAX_TEXT
                                            : "out of memory");
    return 0;
}

int spans_fold_table(sqlite3 *h, const struct spans_filter *f, const char *group_by,
                     struct pf_table *t, struct sf_err *err)
{
    struct sf_buf key;
    sqlite3_stmt *st;
    int rc, ret = 0;

    if ((ret = prepare(h, f, &st, err)) != 0)
        return ret;
    sf_buf_init(&key, PF_RECORD_MAX + 4096);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW &&
           (ret = add_row(t, group_by, st, sqlite3_column_int64(st, f->samples ? COL_N : COL_SUM),
                          &key, err)) == 0)
        ;
    if (rc != SQLITE_DONE && rc != SQLITE_ROW && ret == 0)
        ret = sf_err_set(err, SF_E_DB, UINT64_MAX, "query failed: %s", sqlite3_errmsg(h));
    sqlite3_finalize(st);
    sf_buf_free(&key);
    return ret;
}

int spans_fold_sets(sqlite3 *h, const struct sf_select *sel, struct pf_table *all,
                    struct pf_table *in, struct pf_table *out, struct pf_table *per_span,
                    struct sf_err *err)
{
    static const char sql[] = ATTRIB_CTE ATTRIB_GROUPED ATTRIB_SELECT_STX(
        "stacks", ", g.span_id IS NOT NULL AND g.span_id IN temp.sf_chosen") ATTRIB_GROUP;
    struct sf_buf key;
    sqlite3_stmt *st;
    int rc, ret;

    /* the rows of the four folds, each once: their order within each fold is that fold's
     * own query's (the same grouping, so the same order of groups) */
    if ((ret = choose(h, sel, err)) != 0)
        return ret;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        return sf_err_set(err, SF_E_DB, UINT64_MAX, "query failed: %s", sqlite3_errmsg(h));
    sf_buf_init(&key, PF_RECORD_MAX + 4096);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t sum = sqlite3_column_int64(st, COL_SUM);
        int attributed = sqlite3_column_type(st, COL_SPAN) != SQLITE_NULL;
        if ((ret = add_row(all, NULL, st, sum, &key, err)) != 0 ||
            (attributed && ((ret = add_row(sqlite3_column_int(st, COL_CHOSEN) ? in : out, NULL, st,
                                           sum, &key, err)) != 0 ||
                            (ret = add_row(per_span, "span", st, sum, &key, err)) != 0)))
            break;
    }
    if (rc != SQLITE_DONE && ret == 0)
        ret = sf_err_set(err, SF_E_DB, UINT64_MAX, "query failed: %s", sqlite3_errmsg(h));
    sqlite3_finalize(st);
    sf_buf_free(&key);
    return ret;
}

int spans_fold(struct perf_fold_ctx *c)
{
    struct spans_filter f = {.span = c->o.span,
                             .trace = c->o.trace,
                             .grpc_method = c->o.grpc_method,
                             .samples = c->o.samples};
    struct pf_table t;
    struct sf_err err;
    char note[700];
    int ret = SF_EXIT_OK;

    sf_err_clear(&err);
    memset(&t, 0, sizeof(t));
    sf_arena_init(&t.keys, 1 << 20, PF_TABLE_MAX);
    note[0] = 0;
    /* partial or interrupted sources are said (and left out with --complete-only) */
    if (sf_db_commit(c->db, &err) ||
        sf_db_partial_note(c->db, c->o.complete_only, note, sizeof(note), &err) ||
        (note[0] && fprintf(stderr, "%s: %s: warning: %s\n", PF_TOOL, c->o.db_path, note) < 0) ||
        spans_fold_table(sf_db_handle(c->db), &f, c->o.group_by, &t, &err)) {
        sf_err_format(&err, PF_TOOL, c->o.db_path, c->errbuf, sizeof(c->errbuf));
        fprintf(stderr, "%s\n", c->errbuf);
        ret = SF_EXIT_USAGE;
    }
    if (ret == SF_EXIT_OK && fold_table_print(&t, c->out))
        ret = SF_EXIT_USAGE;
    if (ret == SF_EXIT_OK && t.map.n == 0 && !c->o.quiet)
        fprintf(stderr, "%s: %s: no samples%s\n", PF_TOOL, c->o.db_path,
                c->o.span || c->o.trace || c->o.grpc_method ? " match the filter" : "");
    fold_table_free(&t);
    return ret;
}
