/* ch_schema.c - spanfold's tables in ClickHouse: one description per table, from
 * which both the DDL (ch_schema_sql, `spanfold push --print-schema`) and the push
 * (the SQLite query of each table's rows, push.c) come, so that they never disagree.
 *
 * Every row carries skey, its source's global key (ch_source_key: the file's sha256),
 * because SQLite row ids are per file and collide across hosts; a row's references
 * (spans.connection_id, contexts.span_row) are that file's ids, joined within one
 * skey.  Stacks are keyed by their content (stack_key, ch_hash of the frames), so a
 * stack pushed from many hosts is one row after merges (ReplacingMergeTree).
 * Samples and off-CPU intervals carry the span they are attributed to (the span_intervals rule of
 * perf-fold/spans.c, run on the host's SQLite file at push time: a thread id and a
 * monotonic clock mean something only on their host), so the join in ClickHouse is
 * an equality on span_id.
 *
 * The Distributed tables (NAME_d) shard by span id where a row has one, else by
 * source: a span and the samples attributed to it land on one shard when they are
 * written through them.
 */
#include <string.h>

#include "ch.h"

#define C(n, t)                                                                                    \
    {                                                                                              \
        n, t                                                                                       \
    }

static const struct ch_col sources_cols[] = {
    C("skey", CH_KEY),         C("id", CH_I64),         C("sha256", CH_STR),    C("kind", CH_STR),
    C("path", CH_STR),         C("bytes", CH_NI64),     C("clock", CH_STR),     C("tool", CH_STR),
    C("tool_version", CH_STR), C("started_at", CH_STR), C("status", CH_STR),    C("error", CH_NSTR),
    C("units", CH_NI64),       C("bad_units", CH_NI64), C("push_state", CH_STR)};

static const struct ch_col connections_cols[] = {C("skey", CH_KEY),
                                                 C("id", CH_I64),
                                                 C("client_addr", CH_NSTR),
                                                 C("client_port", CH_NI64),
                                                 C("server_addr", CH_NSTR),
                                                 C("server_port", CH_NI64),
                                                 C("app_proto", CH_NSTR),
                                                 C("tls_version", CH_NSTR),
                                                 C("tls_cipher", CH_NSTR),
                                                 C("sni", CH_NSTR),
                                                 C("alpn", CH_NSTR),
                                                 C("early_data", CH_STR),
                                                 C("early_data_bytes", CH_I64),
                                                 C("decrypted", CH_I64),
                                                 C("first_ns", CH_NI64),
                                                 C("last_ns", CH_NI64),
                                                 C("bytes_c2s", CH_I64),
                                                 C("bytes_s2c", CH_I64),
                                                 C("gaps", CH_I64),
                                                 C("close", CH_NSTR)};

static const struct ch_col spans_cols[] = {C("skey", CH_KEY),
                                           C("id", CH_I64),
                                           C("connection_id", CH_NI64),
                                           C("stream_id", CH_NI64),
                                           C("proto", CH_NSTR),
                                           C("method", CH_NSTR),
                                           C("authority", CH_NSTR),
                                           C("path", CH_NSTR),
                                           C("status", CH_NI64),
                                           C("grpc_service", CH_NSTR),
                                           C("grpc_method", CH_NSTR),
                                           C("grpc_status", CH_NI64),
                                           C("reset_code", CH_NI64),
                                           C("req_start_ns", CH_NI64),
                                           C("req_end_ns", CH_NI64),
                                           C("resp_start_ns", CH_NI64),
                                           C("resp_end_ns", CH_NI64),
                                           C("req_bytes", CH_NI64),
                                           C("resp_bytes", CH_NI64),
                                           C("early_data", CH_I64),
                                           C("partial", CH_I64),
                                           C("trace_id", CH_NSTR),
                                           C("span_id", CH_NSTR),
                                           C("parent_span_id", CH_NSTR),
                                           C("sampled", CH_NI64),
                                           C("ctx_format", CH_NSTR),
                                           C("ctx_valid", CH_NI64),
                                           C("rpc_messages", CH_NI64),
                                           C("rpc_id", CH_NSTR),
                                           C("rpc_direction", CH_NSTR),
                                           C("rpc_session", CH_NSTR),
                                           C("rpc_name", CH_NSTR),
                                           C("rpc_error_code", CH_NI64),
                                           C("rpc_tool_error", CH_NI64),
                                           C("temperature", CH_NF64),
                                           C("top_p", CH_NF64),
                                           C("max_tokens", CH_NI64),
                                           C("model_hint", CH_NSTR)};

static const struct ch_col contexts_cols[] = {
    C("skey", CH_KEY),        C("id", CH_I64),          C("span_row", CH_I64),
    C("direction", CH_STR),   C("format", CH_STR),      C("raw", CH_NSTR),
    C("trace_id", CH_NSTR),   C("span_id", CH_NSTR),    C("parent_span_id", CH_NSTR),
    C("sampled", CH_NI64),    C("debug", CH_NI64),      C("flags", CH_NI64),
    C("trace_id_64", CH_I64), C("tracestate", CH_NSTR), C("valid", CH_I64),
    C("error", CH_NSTR)};

static const struct ch_col connection_events_cols[] = {
    C("skey", CH_KEY),   C("id", CH_I64),   C("connection_id", CH_I64),
    C("ts_ns", CH_NI64), C("kind", CH_STR), C("detail", CH_NSTR)};

static const struct ch_col span_headers_cols[] = {C("skey", CH_KEY), C("id", CH_I64),
                                                  C("span_row", CH_I64), C("name", CH_STR),
                                                  C("value", CH_STR)};

static const struct ch_col span_events_cols[] = {
    C("skey", CH_KEY),     C("id", CH_I64),        C("ts_ns", CH_I64),     C("cpu", CH_NI64),
    C("pid", CH_NI64),     C("tid", CH_NI64),      C("comm", CH_NSTR),     C("kind", CH_STR),
    C("span_id", CH_NSTR), C("trace_id", CH_NSTR), C("decision", CH_NI64), C("message", CH_NSTR),
    C("line", CH_NI64)};

static const struct ch_col span_intervals_cols[] = {
    C("skey", CH_KEY),  C("id", CH_I64),        C("span_id", CH_STR),   C("trace_id", CH_NSTR),
    C("pid", CH_NI64),  C("tid", CH_I64),       C("start_ns", CH_I64),  C("end_ns", CH_I64),
    C("depth", CH_I64), C("decision", CH_NI64), C("end_rule", CH_NSTR), C("source", CH_STR)};

static const struct ch_col samples_cols[] = {
    C("skey", CH_KEY),    C("id", CH_I64),         C("ts_ns", CH_NI64),  C("pid", CH_NI64),
    C("tid", CH_NI64),    C("cpu", CH_NI64),       C("comm", CH_NSTR),   C("event", CH_NSTR),
    C("period", CH_NI64), C("stack_key", CH_HASH), C("span_id", CH_NSTR)};

static const struct ch_col shared_intervals_cols[] = {
    C("skey", CH_KEY),     C("id", CH_I64),     C("pid", CH_NI64),  C("tid", CH_I64),
    C("start_ns", CH_I64), C("end_ns", CH_I64), C("spans", CH_I64), C("span_ids", CH_STR)};

static const struct ch_col offcpu_cols[] = {
    C("skey", CH_KEY),       C("id", CH_I64),      C("ts_ns", CH_I64),  C("end_ns", CH_I64),
    C("end_rule", CH_STR),   C("pid", CH_NI64),    C("tid", CH_I64),    C("comm", CH_NSTR),
    C("state", CH_NSTR),     C("reason", CH_NSTR), C("frame", CH_NSTR), C("stack_key", CH_HASH),
    C("waker_tid", CH_NI64), C("span_id", CH_NSTR)};

static const struct ch_col stacks_cols[] = {C("stack_key", CH_HASH), C("frames", CH_STR)};

static const struct ch_col clock_fits_cols[] = {
    C("skey", CH_KEY),         C("id", CH_I64),
    C("from_clock", CH_STR),   C("to_clock", CH_STR),
    C("from_sha256", CH_NSTR), C("to_sha256", CH_NSTR),
    C("offset_ns", CH_I64),    C("skew_ppm", CH_NF64),
    C("ref_ns", CH_I64),       C("valid_from_ns", CH_NI64),
    C("valid_to_ns", CH_NI64), C("points", CH_I64),
    C("residual_ns", CH_NI64), C("residual_max_ns", CH_NI64),
    C("method", CH_STR)};

#define T(name, engine, order, shard, sel, cols)                                                   \
    {                                                                                              \
        name, engine, order, shard, sel, cols, sizeof(cols) / sizeof(cols[0])                      \
    }
#define BY_SPAN "cityHash64(ifNull(span_id, toString(skey)))"

/* ?1 is the source's id in the SQLite file, ?2 the push state of its sources row. */
const struct ch_table ch_tables[] = {
    T("sources", "MergeTree", "(skey, push_state)", "skey",
      "SELECT id, sha256, kind, path, bytes, clock, tool, tool_version, started_at, status, error,"
      " units, bad_units, ?2 FROM sources WHERE id = ?1",
      sources_cols),
    T("connections", "MergeTree", "(skey, id)", "skey",
      "SELECT id, client_addr, client_port, server_addr, server_port, app_proto, tls_version,"
      " tls_cipher, sni, alpn, early_data, early_data_bytes, decrypted, first_ns, last_ns,"
      " bytes_c2s, bytes_s2c, gaps, close FROM connections WHERE source_id = ?1 ORDER BY id",
      connections_cols),
    /* retransmissions, zero windows, handshake times, TLS alerts: the report's network */
    T("connection_events", "MergeTree", "(skey, connection_id, id)", "skey",
      "SELECT e.id, e.connection_id, e.ts_ns, e.kind, e.detail FROM connection_events e JOIN "
      "connections c ON c.id = e.connection_id WHERE c.source_id = ?1 ORDER BY e.id",
      connection_events_cols),
    T("spans", "MergeTree", "(ifNull(trace_id, ''), ifNull(span_id, ''), skey, id)", BY_SPAN,
      "SELECT id, connection_id, stream_id, proto, method, authority, path, status,"
      " grpc_service, grpc_method, grpc_status, reset_code, req_start_ns, req_end_ns, "
      "resp_start_ns,"
      " resp_end_ns, req_bytes, resp_bytes, early_data, partial, trace_id, span_id,"
      " parent_span_id, sampled, ctx_format, ctx_valid, rpc_messages, rpc_id, rpc_direction,"
      " rpc_session, rpc_name, rpc_error_code, rpc_tool_error, temperature, top_p, max_tokens,"
      " model_hint FROM spans WHERE source_id = ?1"
      " ORDER BY id",
      spans_cols),
    T("contexts", "MergeTree", "(skey, span_row, id)", BY_SPAN,
      "SELECT c.id, c.span_row, c.direction, c.format, c.raw, c.trace_id, c.span_id,"
      " c.parent_span_id, c.sampled, c.debug, c.flags, c.trace_id_64, c.tracestate, c.valid,"
      " c.error FROM contexts c JOIN spans sp ON sp.id = c.span_row WHERE sp.source_id = ?1"
      " ORDER BY c.id",
      contexts_cols),
    T("span_headers", "MergeTree", "(skey, span_row, id)", "skey",
      "SELECT h.id, h.span_row, h.name, h.value FROM span_headers h JOIN spans sp ON sp.id = "
      "h.span_row WHERE sp.source_id = ?1 ORDER BY h.id",
      span_headers_cols),
    T("span_events", "MergeTree", "(skey, ts_ns)", BY_SPAN,
      "SELECT id, ts_ns, cpu, pid, tid, comm, kind, span_id, trace_id, decision, message, line"
      " FROM span_events WHERE source_id = ?1 ORDER BY id",
      span_events_cols),
    T("span_intervals", "MergeTree", "(skey, tid, start_ns)", BY_SPAN,
      "SELECT id, span_id, trace_id, pid, tid, start_ns, end_ns, depth, decision, end_rule,"
      " source FROM span_intervals WHERE source_id = ?1 ORDER BY id",
      span_intervals_cols),
    /* the time event loops' threads gave several spans at once: the attribution coverage */
    T("shared_intervals", "MergeTree", "(skey, tid, start_ns)", "skey",
      "SELECT id, pid, tid, start_ns, end_ns, spans, span_ids FROM shared_intervals"
      " WHERE source_id = ?1 ORDER BY id",
      shared_intervals_cols),
    T("samples", "MergeTree", "(skey, ifNull(ts_ns, 0))", BY_SPAN, NULL, samples_cols),
    /* off-CPU intervals, attributed as the samples are (push.c): the blocked time */
    T("offcpu", "MergeTree", "(skey, tid, ts_ns)", BY_SPAN, NULL, offcpu_cols),
    T("stacks", "ReplacingMergeTree", "stack_key", "stack_key",
      "SELECT st.frames, st.frames FROM stacks st WHERE st.id IN"
      " (SELECT stack_id FROM samples WHERE source_id = ?1 UNION"
      " SELECT stack_id FROM offcpu WHERE source_id = ?1) ORDER BY st.id",
      stacks_cols),
    T("clock_fits", "MergeTree", "(skey, id)", "skey",
      "SELECT id, from_clock, to_clock, (SELECT sha256 FROM sources WHERE id = from_source),"
      " (SELECT sha256 FROM sources WHERE id = to_source), offset_ns, skew_ppm, ref_ns,"
      " valid_from_ns, valid_to_ns, points, residual_ns, residual_max_ns, method"
      " FROM clock_fits WHERE COALESCE(from_source, to_source) = ?1 ORDER BY id",
      clock_fits_cols),
};
const size_t ch_ntables = sizeof(ch_tables) / sizeof(ch_tables[0]);

static const char *const type_names[] = {"UInt64",           "UInt64", "String",
                                         "Nullable(String)", "Int64",  "Nullable(Int64)",
                                         "Nullable(Float64)"};

int ch_schema_sql(struct sf_buf *b, const char *db, const char *cluster)
{
    int rc = sf_buf_printf(b, "CREATE DATABASE IF NOT EXISTS %s;\n", db);

    for (size_t i = 0; i < ch_ntables && rc == 0; i++) {
        const struct ch_table *t = &ch_tables[i];
        rc |= sf_buf_printf(b, "CREATE TABLE IF NOT EXISTS %s.%s (", db, t->name);
        for (size_t k = 0; k < t->ncols; k++)
            rc |= sf_buf_printf(b, "%s%s %s", k ? ", " : "", t->cols[k].name,
                                type_names[t->cols[k].type]);
        rc |= sf_buf_printf(b, ") ENGINE = %s() ORDER BY %s;\n", t->engine, t->order_by);
    }
    for (size_t i = 0; cluster && i < ch_ntables && rc == 0; i++)
        rc |= sf_buf_printf(b,
                            "CREATE TABLE IF NOT EXISTS %s.%s_d AS %s.%s"
                            " ENGINE = Distributed(%s, %s, %s, %s);\n",
                            db, ch_tables[i].name, db, ch_tables[i].name, cluster, db,
                            ch_tables[i].name, ch_tables[i].shard_by);
    return rc ? SF_E_LIMIT : 0;
}

/* Is "table\tcolumn\ttype" one of ours with its type?  Returns 1, 0 (a difference
 * written to err) or -1 (not a spanfold table). */
static int check_line(const char *line, size_t n, const char *cluster, unsigned *seen,
                      struct sf_err *err)
{
    const char *t1 = memchr(line, '\t', n), *t2;

    if (t1 == NULL || (t2 = memchr(t1 + 1, '\t', (size_t)(line + n - t1 - 1))) == NULL)
        return -1;
    for (size_t i = 0; i < ch_ntables; i++) {
        const struct ch_table *t = &ch_tables[i];
        size_t tl = strlen(t->name), tn = (size_t)(t1 - line);
        if (!(tn == tl || (cluster && tn == tl + 2 && memcmp(line + tl, "_d", 2) == 0)) ||
            memcmp(line, t->name, tl) != 0)
            continue;
        for (size_t k = 0; k < t->ncols; k++) {
            const char *cn = t->cols[k].name, *ty = type_names[t->cols[k].type];
            if (strlen(cn) != (size_t)(t2 - t1 - 1) || memcmp(t1 + 1, cn, strlen(cn)) != 0)
                continue;
            if (strlen(ty) == (size_t)(line + n - t2 - 1) && memcmp(t2 + 1, ty, strlen(ty)) == 0) {
                seen[i]++;
                return 1;
            }
            sf_err_set(err, SF_E_DB, UINT64_MAX,
                       "schema mismatch: %.*s.%s is %.*s, spanfold wants %s", (int)tn, line, cn,
                       (int)(line + n - t2 - 1 > 40 ? 40 : line + n - t2 - 1), t2 + 1, ty);
            return 0;
        }
        sf_err_set(err, SF_E_DB, UINT64_MAX,
                   "schema mismatch: %.*s has a column %.*s spanfold "
                   "does not know",
                   (int)tn, line, (int)(t2 - t1 - 1 > 64 ? 64 : t2 - t1 - 1), t1 + 1);
        return 0;
    }
    return -1;
}

int ch_schema_check(struct ch *c, const char *cluster, struct sf_err *err)
{
    struct sf_buf sql, r;
    unsigned seen[16] = {0};
    int rc, none = 1;

    sf_buf_init(&sql, 4096);
    sf_buf_init(&r, CH_BODY_MAX);
    sf_buf_printf(&sql,
                  "SELECT table, name, type FROM system.columns WHERE database = '%s'"
                  " FORMAT TabSeparated",
                  ch_db(c));
    rc = ch_query(c, (const char *)sql.data, NULL, 0, &r, err);
    for (size_t i = 0; rc == 0 && i < r.len;) {
        const char *line = (const char *)r.data + i, *nl = memchr(line, '\n', r.len - i);
        size_t n = nl ? (size_t)(nl - line) : r.len - i;
        if (check_line(line, n, cluster, seen, err) == 0)
            rc = SF_E_DB;
        i += n + 1;
    }
    for (size_t i = 0; rc == 0 && i < ch_ntables; i++)
        none &= seen[i] == 0;
    if (rc == 0 && none)
        rc = 1; /* as documented: nothing of spanfold's there yet */
    for (size_t i = 0; rc == 0 && i < ch_ntables; i++)
        if (seen[i] != ch_tables[i].ncols * (cluster ? 2u : 1u))
            rc = sf_err_set(err, SF_E_DB, UINT64_MAX,
                            "schema mismatch: %s.%s lacks columns spanfold writes (%u of %zu)",
                            ch_db(c), ch_tables[i].name, seen[i], ch_tables[i].ncols);
    sf_buf_free(&sql);
    sf_buf_free(&r);
    return rc;
}
