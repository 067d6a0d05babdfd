/* zipkin.c - Zipkin v2 JSON (openzipkin/zipkin-api zipkin2-api.yaml): the body of
 * POST /api/v2/spans, an array of spans.  timestamp and duration are epoch
 * microseconds (duration at least 1, sub-microsecond rounded up), names lowercase,
 * tags strings only.
 */
#include <ctype.h>
#include <string.h>

#include "export.h"
#include "sf_json.h"

static void endpoint(struct sf_jw *w, const char *key, const char *service, const char *addr,
                     int port)
{
    sf_jw_obj(w, key);
    if (service)
        sf_jw_str(w, "serviceName", service);
    if (addr)
        sf_jw_str(w, strchr(addr, ':') ? "ipv6" : "ipv4", addr);
    if (port)
        sf_jw_int(w, "port", port);
    sf_jw_end(w);
}

static void tag_int(struct sf_jw *w, const char *key, int64_t v)
{
    char b[32];

    snprintf(b, sizeof(b), "%lld", (long long)v);
    sf_jw_str(w, key, b);
}

static void tags(struct sf_jw *w, const struct ex_span *s)
{
    sf_jw_obj(w, "tags");
    if (s->method && !ex_span_is_rpc(s))
        sf_jw_str(w, "http.method", s->method);
    if (s->path)
        sf_jw_str(w, "http.path", s->path);
    if (s->status)
        tag_int(w, "http.status_code", s->status);
    if (s->grpc_service) {
        sf_jw_str(w, "rpc.service", s->grpc_service);
        sf_jw_str(w, "rpc.method", s->grpc_method);
        if (s->grpc_status >= 0)
            tag_int(w, "grpc.status_code", s->grpc_status);
    }
    if (ex_span_is_rpc(s)) {
        sf_jw_str(w, "rpc.system", "jsonrpc");
        sf_jw_str(w, "mcp.method.name", s->method);
        if (s->rpc_id)
            sf_jw_str(w, "jsonrpc.request.id", s->rpc_id);
        if (s->rpc_session)
            sf_jw_str(w, "mcp.session.id", s->rpc_session);
        if (s->rpc_name)
            sf_jw_str(w, "gen_ai.tool.name", s->rpc_name);
        if (s->rpc_error_code != INT64_MIN)
            tag_int(w, "rpc.jsonrpc.error_code", s->rpc_error_code);
    }
    if (s->status >= 500 || s->grpc_status > 0)
        sf_jw_str(w, "error", s->grpc_message ? s->grpc_message : "server error");
    else if (ex_span_handshake_failed(s))
        sf_jw_str(w, "error", s->partial_reason);
    else if (s->rpc_error_code != INT64_MIN)
        sf_jw_str(w, "error", s->rpc_error ? s->rpc_error : "JSON-RPC error");
    else if (s->rpc_tool_error)
        sf_jw_str(w, "error", "tool_error");
    if (s->tls_version)
        sf_jw_str(w, "tls.version", s->tls_version);
    if (s->early_data)
        sf_jw_str(w, "spanfold.early_data", "true");
    if (s->partial)
        sf_jw_str(w, "spanfold.partial", s->partial_reason ? s->partial_reason : "true");
    if (s->synthetic)
        sf_jw_str(w, "spanfold.synthetic_ids", "true");
    sf_jw_end(w);
}

static void span(struct sf_jw *w, const struct ex_span *s)
{
    char name[512];
    int64_t dur = (s->end_ns - s->start_ns + 999) / 1000;

    ex_span_name(s, name, sizeof(name));
    for (char *p = name; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    sf_jw_obj(w, NULL);
    sf_jw_str(w, "traceId", s->trace_id);
    sf_jw_str(w, "id", s->span_id);
    if (s->parent_id[0])
        sf_jw_str(w, "parentId", s->parent_id);
    sf_jw_str(w, "name", name);
    sf_jw_str(w, "kind", "SERVER");
    sf_jw_int(w, "timestamp", s->start_ns / 1000);
    sf_jw_int(w, "duration", dur < 1 ? 1 : dur);
    if (s->sampled == 1 && s->ctx_format && strncmp(s->ctx_format, "b3", 2) == 0)
        sf_jw_bool(w, "shared", 1); /* B3: the server half of a span shared with the client */
    endpoint(w, "localEndpoint", s->service, s->server_addr, s->server_port);
    endpoint(w, "remoteEndpoint", NULL, s->client_addr, s->client_port);
    tags(w, s);
    sf_jw_end(w);
}

int zipkin_write(struct ex_ctx *c)
{
    struct ex_span_iter *it = ex_span_iter_new(c);
    struct ex_span s;
    struct sf_jw w;
    int rc;

    if (it == NULL)
        return 2;
    sf_jw_init(&w, c->out);
    sf_jw_arr(&w, NULL);
    while ((rc = ex_span_next(it, &s)) == 1) {
        span(&w, &s);
        c->spans++;
    }
    sf_jw_end(&w);
    fputc('\n', c->out);
    ex_span_iter_free(it);
    return rc < 0 ? 2 : 0;
}
