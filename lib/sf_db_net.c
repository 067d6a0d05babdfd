/* sf_db_net.c - connections, connection_events, spans and contexts rows (see sf_db_net.h). */
#include "sf_db_net.h"

#include <stddef.h>

/* Text bound without a copy: the span and context writers step their statement before
 * they return, while the caller's strings are alive. */
static void bind_static(sqlite3_stmt *st, int idx, const char *s)
{
    if (s)
        sqlite3_bind_text(st, idx, s, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, idx);
}

static void bind_real(sqlite3_stmt *st, int idx, double v)
{
    if (v == v)
        sqlite3_bind_double(st, idx, v);
    else
        sqlite3_bind_null(st, idx);
}

static void bind_id(sqlite3_stmt *st, int idx, const char *hex)
{
    bind_static(st, idx, hex && hex[0] ? hex : NULL);
}

int sf_db_net_conn_insert(struct sf_db *db, const struct sf_net_conn *c, int64_t *id,
                          struct sf_err *err)
{
    static const char sql[] =
        "INSERT INTO connections (source_id, client_addr, client_port, server_addr, server_port, "
        "app_proto, first_ns, last_ns, bytes_c2s, bytes_s2c, gaps, gap_bytes, close) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)";
    sqlite3_stmt *st = sf_db_stmt(db, sql, err);

    if (st == NULL)
        return SF_E_DB;
    sf_db_bind_int(st, 1, c->source_id);
    sf_db_bind_text(st, 2, c->client_addr);
    sf_db_bind_int(st, 3, c->client_port);
    sf_db_bind_text(st, 4, c->server_addr);
    sf_db_bind_int(st, 5, c->server_port);
    sf_db_bind_text(st, 6, c->app_proto);
    sf_db_bind_int(st, 7, c->first_ns);
    sf_db_bind_int(st, 8, c->last_ns);
    sf_db_bind_int(st, 9, c->bytes_c2s);
    sf_db_bind_int(st, 10, c->bytes_s2c);
    sf_db_bind_int(st, 11, c->gaps);
    sf_db_bind_int(st, 12, c->gap_bytes);
    sf_db_bind_text(st, 13, c->close);
    return sf_db_exec_stmt(db, st, id, err);
}

int sf_db_net_conn_update(struct sf_db *db, int64_t id, const struct sf_net_conn *c,
                          struct sf_err *err)
{
    static const char sql[] =
        "UPDATE connections SET app_proto = ?2, last_ns = ?3, bytes_c2s = ?4, "
        "bytes_s2c = ?5, gaps = ?6, gap_bytes = ?7, close = ?8 WHERE id = ?1";
    sqlite3_stmt *st = sf_db_stmt(db, sql, err);

    if (st == NULL)
        return SF_E_DB;
    sf_db_bind_int(st, 1, id);
    sf_db_bind_text(st, 2, c->app_proto);
    sf_db_bind_int(st, 3, c->last_ns);
    sf_db_bind_int(st, 4, c->bytes_c2s);
    sf_db_bind_int(st, 5, c->bytes_s2c);
    sf_db_bind_int(st, 6, c->gaps);
    sf_db_bind_int(st, 7, c->gap_bytes);
    sf_db_bind_text(st, 8, c->close);
    return sf_db_exec_stmt(db, st, NULL, err);
}

int sf_db_net_conn_tls(struct sf_db *db, int64_t id, const struct sf_net_tls *t, struct sf_err *err)
{
    static const char sql[] =
        "UPDATE connections SET tls_version = ?2, tls_cipher = ?3, sni = ?4, alpn = ?5, "
        "early_data = ?6, early_data_bytes = ?7, early_data_records = ?8, decrypted = ?9, "
        "decrypt_error = ?10, ctx_hash = ?11, tls_info = ?12 WHERE id = ?1";
    sqlite3_stmt *st = sf_db_stmt(db, sql, err);

    if (st == NULL)
        return SF_E_DB;
    sf_db_bind_int(st, 1, id);
    sf_db_bind_text(st, 2, t->version);
    sf_db_bind_text(st, 3, t->cipher);
    sf_db_bind_text(st, 4, t->sni);
    sf_db_bind_text(st, 5, t->alpn);
    sf_db_bind_text(st, 6, t->early_data ? t->early_data : "none");
    sf_db_bind_int(st, 7, t->early_data_bytes);
    sf_db_bind_int(st, 8, t->early_data_records);
    sf_db_bind_int(st, 9, t->decrypted);
    sf_db_bind_text(st, 10, t->decrypt_error);
    sf_db_bind_text(st, 11, t->ctx_hash);
    sf_db_bind_text(st, 12, t->info);
    return sf_db_exec_stmt(db, st, NULL, err);
}

int sf_db_net_event(struct sf_db *db, int64_t conn_id, int64_t ts_ns, const char *kind,
                    const char *detail, struct sf_err *err)
{
    static const char sql[] = "INSERT INTO connection_events (connection_id, ts_ns, kind, detail) "
                              "VALUES (?1, ?2, ?3, ?4)";
    sqlite3_stmt *st = sf_db_stmt(db, sql, err);

    if (st == NULL)
        return SF_E_DB;
    sf_db_bind_int(st, 1, conn_id);
    sf_db_bind_int(st, 2, ts_ns);
    sf_db_bind_text(st, 3, kind);
    sf_db_bind_text(st, 4, detail);
    return sf_db_exec_stmt(db, st, NULL, err);
}

int sf_db_net_span(struct sf_db *db, const struct sf_net_span *s, int64_t *rowid,
                   struct sf_err *err)
{
    static const char sql[] =
        "INSERT INTO spans (source_id, connection_id, stream_id, proto, method, authority, path, "
        "status, grpc_service, grpc_method, grpc_status, grpc_message, grpc_timeout_ns, "
        "req_start_ns, req_end_ns, resp_start_ns, resp_end_ns, req_bytes, resp_bytes, early_data, "
        "partial, partial_reason, reset_code, trace_id, span_id, parent_span_id, sampled, "
        "ctx_format, ctx_valid, req_seq_start, req_seq_end, resp_seq_start, resp_seq_end, "
        "delivered, rpc_messages, rpc_id, rpc_direction, rpc_session, rpc_name, rpc_error_code, "
        "rpc_error, rpc_tool_error, temperature, top_p, max_tokens, stop_sequences, model_hint) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, "
        "?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, ?33, ?34, "
        "?35, ?36, ?37, ?38, ?39, ?40, ?41, ?42, ?43, ?44, ?45, ?46, ?47)";
    const struct sf_net_rpc *q = s->rpc;
    sqlite3_stmt *st = sf_db_stmt(db, sql, err);
    const struct sf_tracectx *c = s->pref;

    if (st == NULL)
        return SF_E_DB;
    sf_db_bind_int(st, 1, s->source_id);
    sf_db_bind_int(st, 2, s->connection_id);
    sf_db_bind_int(st, 3, s->stream_id);
    bind_static(st, 4, s->proto);
    bind_static(st, 5, s->method);
    bind_static(st, 6, s->authority);
    bind_static(st, 7, s->path);
    sf_db_bind_int(st, 8, s->status);
    bind_static(st, 9, s->grpc_service);
    bind_static(st, 10, s->grpc_method);
    sf_db_bind_int(st, 11, s->grpc_status);
    bind_static(st, 12, s->grpc_message);
    sf_db_bind_int(st, 13, s->grpc_timeout_ns);
    sf_db_bind_int(st, 14, s->req_start_ns);
    sf_db_bind_int(st, 15, s->req_end_ns);
    sf_db_bind_int(st, 16, s->resp_start_ns);
    sf_db_bind_int(st, 17, s->resp_end_ns);
    sf_db_bind_int(st, 18, s->req_bytes);
    sf_db_bind_int(st, 19, s->resp_bytes);
    sf_db_bind_int(st, 20, s->early_data);
    sf_db_bind_int(st, 21, s->partial);
    bind_static(st, 22, s->partial_reason);
    sf_db_bind_int(st, 23, s->reset_code);
    if (c) {
        bind_id(st, 24, c->trace_id);
        bind_id(st, 25, c->span_id);
        bind_id(st, 26, c->parent_id);
        sf_db_bind_int(st, 27, c->sampled < 0 ? SF_DB_NULL : c->sampled);
        bind_static(st, 28, sf_tracectx_format_name(c->format));
        sf_db_bind_int(st, 29, c->valid);
    } else {
        for (int i = 24; i <= 29; i++)
            sf_db_bind_int(st, i, SF_DB_NULL);
    }
    sf_db_bind_int(st, 30, s->req_seq_start);
    sf_db_bind_int(st, 31, s->req_seq_end);
    sf_db_bind_int(st, 32, s->resp_seq_start);
    sf_db_bind_int(st, 33, s->resp_seq_end);
    sf_db_bind_int(st, 34, s->delivered);
    sf_db_bind_int(st, 35, s->rpc_messages);
    if (q) {
        bind_static(st, 36, q->id);
        bind_static(st, 37, q->direction);
        bind_static(st, 38, q->session);
        bind_static(st, 39, q->name);
        sf_db_bind_int(st, 40, q->has_error ? q->error_code : SF_DB_NULL);
        bind_static(st, 41, q->error_msg);
        sf_db_bind_int(st, 42, q->answered ? q->tool_error : SF_DB_NULL);
        bind_real(st, 43, q->temperature);
        bind_real(st, 44, q->top_p);
        sf_db_bind_int(st, 45, q->max_tokens < 0 ? SF_DB_NULL : q->max_tokens);
        sf_db_bind_int(st, 46, q->stop_sequences < 0 ? SF_DB_NULL : q->stop_sequences);
        bind_static(st, 47, q->model_hint);
    } else {
        for (int i = 36; i <= 47; i++)
            sf_db_bind_int(st, i, SF_DB_NULL);
    }
    return sf_db_exec_stmt(db, st, rowid, err);
}

/* Columns ?(14k+1) .. ?(14k+14) of the k-th row of a contexts INSERT. */
static void bind_context(sqlite3_stmt *st, int k, int64_t span_row, const char *direction,
                         const struct sf_tracectx *c)
{
    int b = 14 * k;

    sf_db_bind_int(st, b + 1, span_row);
    bind_static(st, b + 2, direction);
    bind_static(st, b + 3, sf_tracectx_format_name(c->format));
    bind_static(st, b + 4, c->raw);
    bind_id(st, b + 5, c->trace_id);
    bind_id(st, b + 6, c->span_id);
    bind_id(st, b + 7, c->parent_id);
    sf_db_bind_int(st, b + 8, c->sampled < 0 ? SF_DB_NULL : c->sampled);
    sf_db_bind_int(st, b + 9, c->debug);
    sf_db_bind_int(st, b + 10, c->flags < 0 ? SF_DB_NULL : c->flags);
    sf_db_bind_int(st, b + 11, c->trace_id_64);
    bind_static(st, b + 12, c->tracestate[0] ? c->tracestate : NULL);
    sf_db_bind_int(st, b + 13, c->valid);
    bind_static(st, b + 14, c->error[0] ? c->error : NULL);
}

#define CTX_INSERT                                                                                 \
    "INSERT INTO contexts (span_row, direction, format, raw, trace_id, span_id, "                  \
    "parent_span_id, sampled, debug, flags, trace_id_64, tracestate, valid, error) VALUES "
#define CTX_ROW "(?,?,?,?,?,?,?,?,?,?,?,?,?,?)"

int sf_db_net_contexts(struct sf_db *db, int64_t span_row, const char *direction,
                       const struct sf_tracectx *c, int n, struct sf_err *err)
{
    static const char *const sql[4] = {
        CTX_INSERT CTX_ROW,
        CTX_INSERT CTX_ROW "," CTX_ROW,
        CTX_INSERT CTX_ROW "," CTX_ROW "," CTX_ROW,
        CTX_INSERT CTX_ROW "," CTX_ROW "," CTX_ROW "," CTX_ROW,
    };

    while (n > 0) {
        int k = n < 4 ? n : 4, rc;
        sqlite3_stmt *st = sf_db_stmt(db, sql[k - 1], err);

        if (st == NULL)
            return SF_E_DB;
        for (int i = 0; i < k; i++)
            bind_context(st, i, span_row, direction, &c[i]);
        if ((rc = sf_db_exec_stmt(db, st, NULL, err)) < 0)
            return rc;
        c += k;
        n -= k;
    }
    return 0;
}

int sf_db_net_context(struct sf_db *db, int64_t span_row, const char *direction,
                      const struct sf_tracectx *c, struct sf_err *err)
{
    static const char sql[] =
        "INSERT INTO contexts (span_row, direction, format, raw, trace_id, span_id, "
        "parent_span_id, sampled, debug, flags, trace_id_64, tracestate, valid, error) "
        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";
    sqlite3_stmt *st = sf_db_stmt(db, sql, err);

    if (st == NULL)
        return SF_E_DB;
    sf_db_bind_int(st, 1, span_row);
    bind_static(st, 2, direction);
    bind_static(st, 3, sf_tracectx_format_name(c->format));
    bind_static(st, 4, c->raw);
    bind_id(st, 5, c->trace_id);
    bind_id(st, 6, c->span_id);
    bind_id(st, 7, c->parent_id);
    sf_db_bind_int(st, 8, c->sampled < 0 ? SF_DB_NULL : c->sampled);
    sf_db_bind_int(st, 9, c->debug);
    sf_db_bind_int(st, 10, c->flags < 0 ? SF_DB_NULL : c->flags);
    sf_db_bind_int(st, 11, c->trace_id_64);
    bind_static(st, 12, c->tracestate[0] ? c->tracestate : NULL);
    sf_db_bind_int(st, 13, c->valid);
    bind_static(st, 14, c->error[0] ? c->error : NULL);
    return sf_db_exec_stmt(db, st, NULL, err);
}

int sf_db_net_headers(struct sf_db *db, int64_t span_row, const struct sf_tracectx_set *set,
                      struct sf_err *err)
{
    static const char sql[] =
        "INSERT INTO span_headers (span_row, name, value) VALUES (?1, ?2, ?3)";
    const char *name, *value;
    size_t pos = 0;
    int rc;

    while (sf_tracectx_kept_next(set, &pos, &name, &value)) {
        sqlite3_stmt *st = sf_db_stmt(db, sql, err);
        if (st == NULL)
            return SF_E_DB;
        sf_db_bind_int(st, 1, span_row);
        bind_static(st, 2, name);
        bind_static(st, 3, value);
        if ((rc = sf_db_exec_stmt(db, st, NULL, err)) < 0)
            return rc;
    }
    return 0;
}
