/* otlp.c - OTLP/JSON traces, one {"resourceSpans":[...]} object per line (the
 * OpenTelemetry file exporter's JSON Lines form), importable by Jaeger UI and
 * postable to any collector at /v1/traces.
 *
 * Protobuf-JSON mapping rules (opentelemetry-proto docs/specification.md): ids are
 * lowercase hex (not base64), enums are integers (kind 2 = SERVER, status code
 * 2 = ERROR), 64-bit integers are decimal strings, keys lowerCamelCase.
 * Attributes follow the OpenTelemetry semantic conventions for HTTP, RPC and TLS;
 * capture facts spanfold adds are under "spanfold.".  A line holds at most
 * BATCH spans of one service, so memory stays bounded.
 */
#include <string.h>

#include "export.h"
#include "sf_json.h"
#include "sf_opt.h"

#define BATCH 1000

/* {"key":KEY,"value":{  ...  }} around one AnyValue member. */
static void attr_open(struct sf_jw *w, const char *key)
{
    sf_jw_obj(w, NULL);
    sf_jw_str(w, "key", key);
    sf_jw_obj(w, "value");
}

static void attr_close(struct sf_jw *w)
{
    sf_jw_end(w);
    sf_jw_end(w);
}

static void attr_str(struct sf_jw *w, const char *key, const char *v)
{
    if (v == NULL)
        return;
    attr_open(w, key);
    sf_jw_str(w, "stringValue", v);
    attr_close(w);
}

static void attr_int(struct sf_jw *w, const char *key, int64_t v)
{
    attr_open(w, key);
    sf_jw_int_str(w, "intValue", v); /* 64-bit integers are decimal strings in OTLP/JSON */
    attr_close(w);
}

static void attr_bool(struct sf_jw *w, const char *key, int v)
{
    attr_open(w, key);
    sf_jw_bool(w, "boolValue", v);
    attr_close(w);
}

static void attr_num(struct sf_jw *w, const char *key, double v)
{
    attr_open(w, key);
    sf_jw_num(w, "doubleValue", v);
    attr_close(w);
}

/* A JSON-RPC call's attributes, by OpenTelemetry's MCP and GenAI conventions: the HTTP
 * ones belong to the exchange that carried it. */
static void rpc_attributes(struct sf_jw *w, const struct ex_span *s)
{
    char id[300];
    size_t l;

    attr_str(w, "rpc.system", "jsonrpc");
    attr_str(w, "jsonrpc.protocol.version", "2.0");
    attr_str(w, "mcp.method.name", s->method);
    if (s->rpc_id) { /* a string id without the quotes that keep its type in rpc_id */
        l = strlen(s->rpc_id);
        if (l >= 2 && s->rpc_id[0] == '"')
            snprintf(id, sizeof(id), "%.*s", (int)(l - 2), s->rpc_id + 1);
        else
            snprintf(id, sizeof(id), "%s", s->rpc_id);
        attr_str(w, "jsonrpc.request.id", id);
    }
    attr_str(w, "mcp.session.id", s->rpc_session);
    if (s->rpc_name && s->method && strcmp(s->method, "prompts/get") == 0)
        attr_str(w, "gen_ai.prompt.name", s->rpc_name);
    else
        attr_str(w, "gen_ai.tool.name", s->rpc_name);
    if (s->rpc_error_code != INT64_MIN) {
        attr_int(w, "rpc.jsonrpc.error_code", s->rpc_error_code);
        attr_str(w, "rpc.jsonrpc.error_message", s->rpc_error);
    }
    if (s->rpc_tool_error)
        attr_str(w, "error.type", "tool_error");
    if (s->temperature == s->temperature)
        attr_num(w, "gen_ai.request.temperature", s->temperature);
    if (s->top_p == s->top_p)
        attr_num(w, "gen_ai.request.top_p", s->top_p);
    if (s->max_tokens >= 0)
        attr_int(w, "gen_ai.request.max_tokens", s->max_tokens);
    attr_str(w, "gen_ai.request.model", s->model_hint);
    attr_str(w, "spanfold.rpc.direction", s->rpc_direction);
    attr_str(w, "server.address", s->server_addr);
    if (s->server_port)
        attr_int(w, "server.port", s->server_port);
}

static void attributes(struct sf_jw *w, const struct ex_span *s)
{
    int h2 = s->proto && (strcmp(s->proto, "h2") == 0 || strcmp(s->proto, "grpc") == 0);

    sf_jw_arr(w, "attributes");
    if (ex_span_is_rpc(s)) {
        rpc_attributes(w, s);
        goto common;
    }
    attr_str(w, "http.request.method", s->method);
    attr_str(w, "url.path", s->path);
    attr_str(w, "server.address", s->server_addr);
    if (s->server_port)
        attr_int(w, "server.port", s->server_port);
    attr_str(w, "client.address", s->client_addr);
    if (s->client_port)
        attr_int(w, "client.port", s->client_port);
    if (s->status)
        attr_int(w, "http.response.status_code", s->status);
    attr_str(w, "network.protocol.name", "http");
    attr_str(w, "network.protocol.version", h2 ? "2" : "1.1");
    if (s->req_bytes >= 0)
        attr_int(w, "http.request.body.size", s->req_bytes);
    if (s->resp_bytes >= 0)
        attr_int(w, "http.response.body.size", s->resp_bytes);
    if (s->grpc_service) {
        attr_str(w, "rpc.system", "grpc");
        attr_str(w, "rpc.service", s->grpc_service);
        attr_str(w, "rpc.method", s->grpc_method);
        if (s->grpc_status >= 0)
            attr_int(w, "rpc.grpc.status_code", s->grpc_status);
    }
    if (s->tls_version) {
        attr_str(w, "tls.protocol.name", "tls");
        attr_str(w, "tls.protocol.version",
                 strncmp(s->tls_version, "TLSv", 4) == 0 ? s->tls_version + 4 : s->tls_version);
        attr_str(w, "tls.cipher", s->tls_cipher);
        attr_str(w, "tls.client.server_name", s->sni);
        attr_str(w, "tls.next_protocol", s->alpn);
        attr_bool(w, "spanfold.tls.decrypted", s->decrypted);
        attr_str(w, "spanfold.tls.early_data", s->early_state);
    }
    attr_bool(w, "spanfold.early_data", s->early_data);
common:
    if (s->partial)
        attr_str(w, "spanfold.partial", s->partial_reason ? s->partial_reason : "yes");
    attr_int(w, "spanfold.connection_id", s->conn_id);
    attr_int(w, "spanfold.stream_id", s->stream_id);
    attr_str(w, "spanfold.context_format", s->ctx_format);
    if (s->synthetic)
        attr_bool(w, "spanfold.synthetic_ids", 1);
    if (s->synthetic_span)
        attr_bool(w, "spanfold.synthetic_span_id", 1);
    sf_jw_end(w);
}

static void events(struct sf_jw *w, const struct ex_span *s)
{
    sf_jw_arr(w, "events");
    if (s->reset_code >= 0) {
        sf_jw_obj(w, NULL);
        sf_jw_int_str(w, "timeUnixNano", s->end_ns);
        sf_jw_str(w, "name", "http2.rst_stream");
        sf_jw_arr(w, "attributes");
        attr_int(w, "http2.error_code", s->reset_code);
        sf_jw_end(w);
        sf_jw_end(w);
    }
    if (s->early_data) {
        sf_jw_obj(w, NULL);
        sf_jw_int_str(w, "timeUnixNano", s->start_ns);
        sf_jw_str(w, "name", "tls.early_data");
        sf_jw_end(w);
    }
    sf_jw_end(w);
}

static void span(struct sf_jw *w, const struct ex_span *s)
{
    char name[512];
    int error = ex_span_error(s);

    ex_span_name(s, name, sizeof(name));
    sf_jw_obj(w, NULL);
    sf_jw_str(w, "traceId", s->trace_id);
    sf_jw_str(w, "spanId", s->span_id);
    if (s->parent_id[0])
        sf_jw_str(w, "parentSpanId", s->parent_id);
    sf_jw_str(w, "name", name);
    /* SERVER: the exchange as the server's side of the wire saw it; a JSON-RPC request the
     * server sent (sampling/createMessage) is its CLIENT span */
    sf_jw_int(w, "kind", s->rpc_direction && strcmp(s->rpc_direction, "s2c") == 0 ? 3 : 2);
    sf_jw_int_str(w, "startTimeUnixNano", s->start_ns);
    sf_jw_int_str(w, "endTimeUnixNano", s->end_ns);
    attributes(w, s);
    events(w, s);
    sf_jw_obj(w, "status");
    sf_jw_int(w, "code", error ? 2 : 0);
    if (error && (s->grpc_message || s->rpc_error))
        sf_jw_str(w, "message", s->grpc_message ? s->grpc_message : s->rpc_error);
    sf_jw_end(w);
    if (s->trace_flags >= 0)
        sf_jw_int(w, "flags", s->trace_flags & 0xff);
    sf_jw_end(w);
}

static void line_open(struct sf_jw *w, struct ex_ctx *c, const char *service)
{
    sf_jw_init(w, c->out);
    sf_jw_obj(w, NULL);
    sf_jw_arr(w, "resourceSpans");
    sf_jw_obj(w, NULL);
    sf_jw_obj(w, "resource");
    sf_jw_arr(w, "attributes");
    attr_str(w, "service.name", service);
    sf_jw_end(w);
    sf_jw_end(w);
    sf_jw_arr(w, "scopeSpans");
    sf_jw_obj(w, NULL);
    sf_jw_obj(w, "scope");
    sf_jw_str(w, "name", "spanfold");
    sf_jw_str(w, "version", sf_version());
    sf_jw_end(w);
    sf_jw_arr(w, "spans");
}

static void line_close(struct sf_jw *w)
{
    while (w->depth > 0)
        sf_jw_end(w);
    fputc('\n', w->f);
}

int otlp_write(struct ex_ctx *c)
{
    struct ex_span_iter *it = ex_span_iter_new(c);
    struct ex_span s;
    struct sf_jw w;
    char service[128] = "";
    int rc, n = 0;

    if (it == NULL)
        return 2;
    while ((rc = ex_span_next(it, &s)) == 1) {
        if (n > 0 && (n == BATCH || strcmp(service, s.service) != 0)) {
            line_close(&w);
            n = 0;
        }
        if (n == 0) {
            snprintf(service, sizeof(service), "%s", s.service);
            line_open(&w, c, service);
        }
        span(&w, &s);
        n++;
        c->spans++;
    }
    if (n > 0)
        line_close(&w);
    ex_span_iter_free(it);
    return rc < 0 ? 2 : 0;
}
