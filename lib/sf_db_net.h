/* sf_db_net.h - rows of the network tables: connections, connection_events, spans,
 * contexts (schema v1, lib/schema.sql), written through sf_db's cached statements and
 * batches.  Used by pcap2spans; kept in lib/ so that other writers (a future live
 * capture, the tests) insert exactly the same rows.
 *
 * Integer fields use SF_DB_NULL for "unknown" (SQL NULL); strings use NULL.
 */
#ifndef SF_DB_NET_H
#define SF_DB_NET_H

#include <stdint.h>

#include "sf_db.h"
#include "sf_err.h"
#include "sf_tracectx.h"

struct sf_net_conn {
    int64_t source_id;
    const char *client_addr, *server_addr;
    int64_t client_port, server_port;
    const char *app_proto; /* http/1.1, h2, tls, unknown */
    int64_t first_ns, last_ns;
    int64_t bytes_c2s, bytes_s2c, gaps, gap_bytes;
    const char *close; /* fin, rst, idle, evicted, eof, new-syn; NULL while open */
};

/* The TLS columns of a connection (pcap2spans tls.c). */
struct sf_net_tls {
    const char *version, *cipher, *sni, *alpn; /* NULL unknown */
    const char *early_data;                    /* none, offered, accepted, rejected, unknown */
    int64_t early_data_bytes, early_data_records;
    int decrypted;
    const char *decrypt_error, *ctx_hash, *info; /* info: JSON object text */
};

/* A JSON-RPC span's own facts (pcap2spans/rpc.h; proto "jsonrpc"):
 * the rpc_* columns and the sampling parameters.  Strings NULL when absent. */
struct sf_net_rpc {
    const char *id;        /* as struct sf_jrpc_msg's (lib/sf_jsonrpc.h); NULL: a notification */
    const char *direction; /* "c2s": the client sent the request or notification, else "s2c" */
    const char *session;   /* the MCP session */
    const char *name;      /* params.name: the tool of tools/call, the prompt of prompts/get */
    int answered;          /* the response was seen */
    int has_error;         /* the response was a JSON-RPC error */
    int64_t error_code;
    const char *error_msg;
    int tool_error;                     /* a tool result with isError: true */
    double temperature, top_p;          /* NaN: absent */
    int64_t max_tokens, stop_sequences; /* -1: absent */
    const char *model_hint;
};

struct sf_net_span {
    int64_t source_id, connection_id, stream_id;
    const char *proto, *method, *authority, *path;
    int64_t status;
    const char *grpc_service, *grpc_method, *grpc_message;
    int64_t grpc_status, grpc_timeout_ns;
    int64_t req_start_ns, req_end_ns, resp_start_ns, resp_end_ns;
    int64_t req_bytes, resp_bytes;
    int early_data, delivered, partial;
    const char *partial_reason;
    int64_t reset_code;
    /* TCP sequence numbers (mod 2^32) of the first byte and one past the last of the
     * request and of the response; SF_DB_NULL unknown */
    int64_t req_seq_start, req_seq_end, resp_seq_start, resp_seq_end;
    const struct sf_tracectx *pref; /* preferred context for the join columns, or NULL */
    int64_t rpc_messages;           /* SF_DB_NULL: none */
    const struct sf_net_rpc *rpc;   /* a JSON-RPC call's columns, or NULL */
};

/* Insert a connection row (at first sight); *id gets its row id.  Returns 0 or SF_E_DB. */
int sf_db_net_conn_insert(struct sf_db *db, const struct sf_net_conn *c, int64_t *id,
                          struct sf_err *err);

/* Update the mutable columns of connection `id` (app_proto, last_ns, bytes, gaps,
 * close).  Returns 0 or SF_E_DB. */
int sf_db_net_conn_update(struct sf_db *db, int64_t id, const struct sf_net_conn *c,
                          struct sf_err *err);

/* Set the TLS columns of connection `id`.  Returns 0 or SF_E_DB. */
int sf_db_net_conn_tls(struct sf_db *db, int64_t id, const struct sf_net_tls *t,
                       struct sf_err *err);

/* One connection_events row.  Returns 0 or SF_E_DB. */
int sf_db_net_event(struct sf_db *db, int64_t conn_id, int64_t ts_ns, const char *kind,
                    const char *detail, struct sf_err *err);

/* One spans row; *rowid gets its id (for contexts).  Returns 0 or SF_E_DB. */
int sf_db_net_span(struct sf_db *db, const struct sf_net_span *s, int64_t *rowid,
                   struct sf_err *err);

/* One contexts row for span `span_row`; direction "request" or "response".
 * Returns 0 or SF_E_DB. */
int sf_db_net_context(struct sf_db *db, int64_t span_row, const char *direction,
                      const struct sf_tracectx *c, struct sf_err *err);

/* The contexts rows of c[0..n) for span `span_row`, in order, up to four per INSERT
 * (the same rows as n sf_db_net_context calls, with less work per row).  Returns 0
 * or SF_E_DB. */
int sf_db_net_contexts(struct sf_db *db, int64_t span_row, const char *direction,
                       const struct sf_tracectx *c, int n, struct sf_err *err);

/* The span_headers rows of the headers set keeps (sf_tracectx_set_keep) for span
 * `span_row`, in order.  Returns 0 or SF_E_DB. */
int sf_db_net_headers(struct sf_db *db, int64_t span_row, const struct sf_tracectx_set *set,
                      struct sf_err *err);

#endif
