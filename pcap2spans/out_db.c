/* out_db.c - the database writer: a connection, a span and its contexts as rows of
 * lib/schema.sql through lib/sf_db_net.c. */
#include "out.h"
#include "sf_db.h"
#include "sf_db_net.h"

int p2s_db_conn(struct sf_db *db, int64_t source_id, const struct p2s_conn_info *i, int insert,
                int64_t *id, struct sf_err *err)
{
    struct sf_net_conn c;

    c.source_id = source_id;
    c.client_addr = i->client_addr;
    c.server_addr = i->server_addr;
    c.client_port = i->client_port;
    c.server_port = i->server_port;
    c.app_proto = i->app_proto;
    c.first_ns = i->first_ns;
    c.last_ns = i->last_ns;
    c.bytes_c2s = (int64_t)i->bytes[0];
    c.bytes_s2c = (int64_t)i->bytes[1];
    c.gaps = (int64_t)i->gaps;
    c.gap_bytes = (int64_t)i->gap_bytes;
    c.close = i->close;
    if (insert)
        return sf_db_net_conn_insert(db, &c, id, err);
    return sf_db_net_conn_update(db, i->id, &c, err);
}

int p2s_db_span(struct sf_db *db, int64_t source_id, int64_t conn_id, const struct p2s_span *s,
                const struct sf_tracectx *pref, struct sf_err *err)
{
    struct sf_net_span r;
    int64_t row = 0;
    int rc;

    r.source_id = source_id;
    r.connection_id = conn_id;
    r.stream_id = s->stream_id;
    r.proto = s->proto;
    r.method = s->method;
    r.authority = s->authority;
    r.path = s->path;
    r.status = s->status ? s->status : SF_DB_NULL;
    r.grpc_service = s->grpc_service;
    r.grpc_method = s->grpc_method;
    r.grpc_message = s->grpc_message;
    r.grpc_status = s->grpc_status < 0 ? SF_DB_NULL : s->grpc_status;
    r.grpc_timeout_ns = s->grpc_timeout_ns < 0 ? SF_DB_NULL : s->grpc_timeout_ns;
    r.req_start_ns = s->req_start_ns ? s->req_start_ns : SF_DB_NULL;
    r.req_end_ns = s->req_end_ns ? s->req_end_ns : SF_DB_NULL;
    r.resp_start_ns = s->resp_start_ns ? s->resp_start_ns : SF_DB_NULL;
    r.resp_end_ns = s->resp_end_ns ? s->resp_end_ns : SF_DB_NULL;
    r.req_bytes = s->req_bytes < 0 ? SF_DB_NULL : s->req_bytes;
    r.resp_bytes = s->resp_bytes < 0 ? SF_DB_NULL : s->resp_bytes;
    r.early_data = s->early_data;
    r.delivered = !s->undelivered;
    r.partial = s->partial;
    r.partial_reason = s->partial_reason;
    r.reset_code = s->reset_code < 0 ? SF_DB_NULL : s->reset_code;
    r.req_seq_start = s->req_seq.known ? (int64_t)s->req_seq.start : SF_DB_NULL;
    r.req_seq_end = s->req_seq.known ? (int64_t)s->req_seq.end : SF_DB_NULL;
    r.resp_seq_start = s->resp_seq.known ? (int64_t)s->resp_seq.start : SF_DB_NULL;
    r.resp_seq_end = s->resp_seq.known ? (int64_t)s->resp_seq.end : SF_DB_NULL;
    r.pref = pref;
    r.rpc_messages = s->rpc_messages ? s->rpc_messages : SF_DB_NULL;
    r.rpc = s->rpc;
    rc = sf_db_net_span(db, &r, &row, err);
    if (rc == 0 && s->req_ctx)
        rc = sf_db_net_contexts(db, row, "request", s->req_ctx->ctx, s->req_ctx->n, err);
    if (rc == 0 && s->req_ctx && s->req_ctx->kept_len)
        rc = sf_db_net_headers(db, row, s->req_ctx, err);
    if (rc == 0 && s->resp_ctx)
        rc = sf_db_net_contexts(db, row, "response", s->resp_ctx->ctx, s->resp_ctx->n, err);
    return rc;
}
