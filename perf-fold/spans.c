/* spans.c - span-aware folding: the database's perf samples, folded under a
 * synthetic root frame that names their group.
 *
 *   [span 00f067aa0ba902b7 GET /api];java;main;work 42
 *   [unattributed];java;GC;... 7          <- samples outside every span, kept
 *
 * Attribution, in one query (ATTRIB_SQL below):
 *   1. samples.span_id when a tool set it (tracefs2spans);
 *   2. else the span_intervals row on the same thread (tid) whose [start_ns,
 *      end_ns] holds the sample's ts_ns and whose source has the same clock
 *      domain as the sample's source (sources.clock); the innermost wins
 *      (deepest, then latest start).  The range scan on (tid, start_ns) is
 *      bounded by the longest interval so that it stays short.
 * The span row (spans.span_id) gives method, path, trace id, gRPC method and
 * the sampling decision; the interval's trace_id/decision stand in when the
 * capture has no such span.
 */
#include <string.h>

#include "perf_fold.h"

#define ATTRIB_SQL                                                                                 \
    "WITH lim AS (SELECT COALESCE(MAX(end_ns - start_ns), 0) AS d FROM span_intervals),"           \
    " a AS (SELECT s.stack_id, s.period, s.span_id AS sid,"                                        \
    "   CASE WHEN s.span_id IS NULL AND s.ts_ns IS NOT NULL THEN"                                  \
    "    (SELECT i.id FROM span_intervals i JOIN sources si ON si.id = i.source_id"                \
    "      WHERE i.tid = s.tid AND i.start_ns <= s.ts_ns AND i.start_ns >= s.ts_ns - lim.d"        \
    "        AND s.ts_ns <= i.end_ns AND si.clock = src.clock"                                     \
    "      ORDER BY i.depth DESC, i.start_ns DESC, i.id DESC LIMIT 1) END AS iid"                  \
    "  FROM samples s JOIN sources src ON src.id = s.source_id, lim),"                             \
    " b AS (SELECT a.stack_id, a.period, COALESCE(a.sid, iv.span_id) AS span_id,"                  \
    "   iv.trace_id AS itrace, iv.decision AS idec FROM a LEFT JOIN span_intervals iv"             \
    "   ON iv.id = a.iid)"                                                                         \
    " SELECT b.span_id, sp.method, sp.path, COALESCE(sp.trace_id, b.itrace),"                      \
    "   sp.grpc_service, sp.grpc_method, COALESCE(sp.sampled, b.idec), st.frames, SUM(b.period)"   \
    " FROM b JOIN stacks st ON st.id = b.stack_id"                                                 \
    " LEFT JOIN spans sp ON sp.id = (SELECT MIN(x.id) FROM spans x WHERE x.span_id = b.span_id)"   \
    " WHERE (?1 IS NULL OR b.span_id = ?1)"                                                        \
    "   AND (?2 IS NULL OR COALESCE(sp.trace_id, b.itrace) = ?2)"                                  \
    "   AND (?3 IS NULL OR sp.grpc_method = ?3 OR sp.grpc_service || '/' || sp.grpc_method = ?3)"  \
    " GROUP BY b.span_id, 4, 7, st.id"

enum {
    COL_SPAN,
    COL_METHOD,
    COL_PATH,
    COL_TRACE,
    COL_GSVC,
    COL_GMETH,
    COL_SAMPLED,
    COL_FRAMES,
    COL_SUM
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

int spans_fold(struct perf_fold_ctx *c)
{
    sqlite3 *h = sf_db_handle(c->db);
    struct pf_table t;
    struct sf_buf key;
    struct sf_err err;
    sqlite3_stmt *st;
    char note[700];
    int rc, ret = SF_EXIT_OK;

    sf_err_clear(&err);
    if (sf_db_commit(c->db, &err) ||
        sf_db_partial_note(c->db, c->o.complete_only, note, sizeof(note), &err)) {
        sf_err_format(&err, PF_TOOL, c->o.db_path, c->errbuf, sizeof(c->errbuf));
        fprintf(stderr, "%s\n", c->errbuf);
        return SF_EXIT_USAGE;
    }
    if (note[0])
        fprintf(stderr, "%s: %s: warning: %s\n", PF_TOOL, c->o.db_path, note);
    if (sqlite3_prepare_v2(h, ATTRIB_SQL, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "%s: %s: query failed: %s\n", PF_TOOL, c->o.db_path, sqlite3_errmsg(h));
        return SF_EXIT_USAGE;
    }
    sf_db_bind_text(st, 1, c->o.span);
    sf_db_bind_text(st, 2, c->o.trace);
    sf_db_bind_text(st, 3, c->o.grpc_method);
    memset(&t, 0, sizeof(t));
    sf_arena_init(&t.keys, 1 << 20, PF_TABLE_MAX);
    sf_buf_init(&key, PF_RECORD_MAX + 4096);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *frames = col(st, COL_FRAMES);
        int64_t sum = sqlite3_column_int64(st, COL_SUM);
        struct pf_entry *e;
        label(&key, c->o.group_by, st);
        if (sf_buf_append(&key, ";", 1) ||
            sf_buf_append(&key, frames, (size_t)sqlite3_column_bytes(st, COL_FRAMES)) ||
            fold_table_add(&t, (const char *)key.data, key.len, sum > 0 ? (uint64_t)sum : 0, &e)) {
            fprintf(stderr, "%s: out of memory\n", PF_TOOL);
            ret = SF_EXIT_USAGE;
            break;
        }
    }
    if (rc != SQLITE_DONE && ret == SF_EXIT_OK) {
        fprintf(stderr, "%s: %s: query failed: %s\n", PF_TOOL, c->o.db_path, sqlite3_errmsg(h));
        ret = SF_EXIT_USAGE;
    }
    sqlite3_finalize(st);
    if (ret == SF_EXIT_OK && fold_table_print(&t, c->out))
        ret = SF_EXIT_USAGE;
    if (ret == SF_EXIT_OK && t.n == 0 && !c->o.quiet)
        fprintf(stderr, "%s: %s: no samples%s\n", PF_TOOL, c->o.db_path,
                c->o.span || c->o.trace || c->o.grpc_method ? " match the filter" : "");
    fold_table_free(&t);
    sf_buf_free(&key);
    return ret;
}
