/* packet-spanfold.c - "Trace Context" postdissector for Wireshark 4.0.
 *
 * Makes distributed-tracing context a first-class, filterable part of every
 * HTTP/1.1 and HTTP/2 (incl. gRPC) packet, in cleartext or TLS that Wireshark has
 * decrypted: W3C traceparent/tracestate, B3 (single and multi), grpc-trace-bin
 * (base64 and gRPC "true binary"), uber-trace-id, X-Amzn-Trace-Id, Datadog,
 * baggage, sw8.  Parsing is lib/sf_tracectx, shared with pcap2spans, so both
 * always agree.  References: W3C Trace Context, openzipkin/b3-propagation,
 * OpenCensus BinaryEncoding, RFC 9113, RFC 8446 (0-RTT).
 *
 *   Trace Context
 *     Message: request, stream 1 [response in frame 12, time 0.004 s]
 *       Context: traceparent 4bf92f3577b34da6a3ce929d0e0e4736/00f067aa0ba902b7 (valid)
 *         tracectx.format, .trace_id, .span_id, .parent_id, .sampled, .flags, ...
 *
 * Filter: tracectx.span_id == "00f067aa0ba902b7" finds the request and the
 * response of that span (the response carries the request's key context as
 * tracectx.request_span_id as well).
 *
 * JSON-RPC 2.0 (MCP) messages in HTTP/1.1 bodies are a protocol of their own here,
 * "spanfold", with the names pcap2spans gives them (docs/pcap2spans.md):
 *
 *   spanfold JSON-RPC
 *     JSON-RPC request tools/call search_docs, id 2 (c2s)
 *       spanfold.jsonrpc.kind, .method, .id, .name, .direction, .error_code, ...
 *
 * spanfold.jsonrpc.method == "sampling/createMessage" finds the request and, on the
 * same connection, its response (which names its request's method and frame).
 */
#include "packet-spanfold.h"

#include <epan/expert.h>
#include <epan/packet.h>
#include <epan/proto_data.h>
#include <epan/stats_tree.h>
#include <epan/tap.h>
#include <string.h>
#include <wireshark.h>

#include "collect.h"
#include "sf_tracectx.h"

static int proto_tracectx = -1;
static int tap_tracectx = -1;
static dissector_handle_t tracectx_handle;
static struct tc_wanted wanted;

static int hf_span = -1, hf_msg = -1, hf_direction = -1, hf_stream = -1, hf_request_in = -1,
           hf_response_in = -1, hf_time = -1, hf_early = -1, hf_early_outcome = -1, hf_ctx = -1,
           hf_format = -1, hf_trace_id = -1, hf_span_id = -1, hf_parent_id = -1, hf_sampled = -1,
           hf_debug = -1, hf_flags = -1, hf_trace_id_64 = -1, hf_tracestate = -1, hf_ts_member = -1,
           hf_ts_key = -1, hf_ts_value = -1, hf_valid = -1, hf_error = -1, hf_raw = -1,
           hf_preferred = -1, hf_attr = -1, hf_attr_key = -1, hf_attr_value = -1;
static gint ett_tracectx = -1, ett_msg = -1, ett_ctx = -1, ett_ts = -1, ett_attr = -1;
static int proto_spanfold = -1;
static int hf_rpc = -1, hf_rpc_kind = -1, hf_rpc_method = -1, hf_rpc_id = -1, hf_rpc_name = -1,
           hf_rpc_direction = -1, hf_rpc_error_code = -1, hf_rpc_error = -1, hf_rpc_tool_error = -1,
           hf_rpc_temperature = -1, hf_rpc_max_tokens = -1, hf_rpc_request_in = -1;
static gint ett_spanfold = -1, ett_rpc = -1;
static expert_field ei_rpc_malformed = EI_INIT, ei_rpc_error = EI_INIT;
static expert_field ei_malformed = EI_INIT, ei_disagree = EI_INIT, ei_early = EI_INIT,
                    ei_early_rejected = EI_INIT, ei_dropped = EI_INIT;

/* ---- tree ------------------------------------------------------------------------ */

static void add_tracestate(proto_tree *tree, tvbuff_t *tvb, const char *ts)
{
    proto_item *it = proto_tree_add_string(tree, hf_tracestate, tvb, 0, 0, ts);
    proto_tree *sub = proto_item_add_subtree(it, ett_ts);
    const char *key, *val;
    size_t pos = 0, klen, vlen, n = strlen(ts);

    proto_item_set_generated(it);
    while (sf_tracectx_tracestate_next(ts, n, &pos, &key, &klen, &val, &vlen)) {
        char *m = wmem_strndup(wmem_packet_scope(), key, klen + 1 + vlen);
        proto_item *mi = proto_tree_add_string(sub, hf_ts_member, tvb, 0, 0, m);
        proto_tree *mt = proto_item_add_subtree(mi, ett_ts);
        proto_item_set_generated(mi);
        proto_item_set_generated(proto_tree_add_string(
            mt, hf_ts_key, tvb, 0, 0, wmem_strndup(wmem_packet_scope(), key, klen)));
        proto_item_set_generated(proto_tree_add_string(
            mt, hf_ts_value, tvb, 0, 0, wmem_strndup(wmem_packet_scope(), val, vlen)));
    }
}

static void add_string(proto_tree *t, int hf, tvbuff_t *tvb, const char *s)
{
    if (s)
        proto_item_set_generated(proto_tree_add_string(t, hf, tvb, 0, 0, s));
}

static void add_context(proto_tree *tree, packet_info *pinfo, tvbuff_t *tvb, const struct tc_ctx *c,
                        gboolean preferred)
{
    proto_item *it =
        proto_tree_add_none_format(tree, hf_ctx, tvb, 0, 0, "Context: %s %s%s%s (%s)", c->format,
                                   c->trace_id ? c->trace_id : "", c->span_id ? "/" : "",
                                   c->span_id ? c->span_id : "", c->valid ? "valid" : "invalid");
    proto_tree *t = proto_item_add_subtree(it, ett_ctx);
    proto_item *v;

    proto_item_set_generated(it);
    add_string(t, hf_format, tvb, c->format);
    add_string(t, hf_trace_id, tvb, c->trace_id);
    add_string(t, hf_span_id, tvb, c->span_id);
    add_string(t, hf_parent_id, tvb, c->parent_id);
    if (c->sampled >= 0)
        proto_item_set_generated(proto_tree_add_boolean(t, hf_sampled, tvb, 0, 0, c->sampled));
    proto_item_set_generated(proto_tree_add_boolean(t, hf_debug, tvb, 0, 0, c->debug));
    if (c->flags >= 0)
        proto_item_set_generated(proto_tree_add_uint(t, hf_flags, tvb, 0, 0, (guint32)c->flags));
    if (c->trace_id_64)
        proto_item_set_generated(proto_tree_add_boolean(t, hf_trace_id_64, tvb, 0, 0, TRUE));
    if (c->tracestate)
        add_tracestate(t, tvb, c->tracestate);
    v = proto_tree_add_boolean(t, hf_valid, tvb, 0, 0, c->valid);
    proto_item_set_generated(v);
    add_string(t, hf_error, tvb, c->error);
    add_string(t, hf_raw, tvb, c->raw);
    if (preferred)
        proto_item_set_generated(proto_tree_add_boolean(t, hf_preferred, tvb, 0, 0, TRUE));
    if (!c->valid)
        expert_add_info_format(pinfo, v, &ei_malformed, "Malformed %s: %s", c->format,
                               c->error ? c->error : "invalid");
}

/* The span a response or a stream's other frames belong to: the request's key
 * context, so that tracectx.span_id == "..." finds every packet of the span. */
static void add_span_ref(proto_tree *tree, tvbuff_t *tvb, const struct tc_msg *req, guint32 stream)
{
    const struct tc_ctx *c;
    proto_item *it;
    proto_tree *t;

    if (req == NULL || req->preferred < 0)
        return;
    c = &req->ctx[req->preferred];
    it = proto_tree_add_none_format(
        tree, hf_span, tvb, 0, 0, "Span %s/%s (%s, request in frame %u%s%.0u)", c->trace_id,
        c->span_id, c->format, req->frame, stream ? ", stream " : "", stream);
    proto_item_set_generated(it);
    t = proto_item_add_subtree(it, ett_ctx);
    add_string(t, hf_trace_id, tvb, c->trace_id);
    add_string(t, hf_span_id, tvb, c->span_id);
    proto_item_set_generated(proto_tree_add_uint(t, hf_request_in, tvb, 0, 0, req->frame));
}

static void add_message(proto_tree *tree, packet_info *pinfo, tvbuff_t *tvb, const struct tc_msg *m)
{
    char stream[32] = "";
    proto_item *it;

    if (m->stream)
        snprintf(stream, sizeof(stream), ", stream %u", m->stream);
    it = proto_tree_add_none_format(tree, hf_msg, tvb, 0, 0, "%s%s, %u context%s",
                                    m->is_request ? "Request" : "Response", stream, m->n,
                                    m->n == 1 ? "" : "s");
    proto_tree *t = proto_item_add_subtree(it, ett_msg);
    proto_item *x;

    proto_item_set_generated(it);
    add_string(t, hf_direction, tvb, m->is_request ? "request" : "response");
    if (m->stream)
        proto_item_set_generated(proto_tree_add_uint(t, hf_stream, tvb, 0, 0, m->stream));
    if (m->peer_frame)
        proto_item_set_generated(proto_tree_add_uint(
            t, m->is_request ? hf_response_in : hf_request_in, tvb, 0, 0, m->peer_frame));
    if (m->has_delta)
        proto_item_set_generated(proto_tree_add_time(t, hf_time, tvb, 0, 0, &m->delta));
    if (m->is_request) {
        static const char *const outcome[] = {"unknown", "accepted", "rejected"};
        x = proto_tree_add_boolean(t, hf_early, tvb, 0, 0, m->early_data);
        proto_item_set_generated(x);
        if (m->early_data) {
            proto_item *o =
                proto_tree_add_string(t, hf_early_outcome, tvb, 0, 0, outcome[m->early_outcome]);
            proto_item_set_generated(o);
            if (m->early_outcome == TC_EARLY_REJECTED)
                expert_add_info(pinfo, o, &ei_early_rejected);
            else
                expert_add_info(pinfo, x, &ei_early);
        }
    }
    for (guint i = 0; i < m->n; i++)
        add_context(t, pinfo, tvb, &m->ctx[i], (int)i == m->preferred);
    for (guint i = 0; i < m->nattr; i++) { /* "baggage.env=prod", then key and value */
        proto_item *ai = proto_tree_add_string(
            t, hf_attr, tvb, 0, 0,
            wmem_strdup_printf(wmem_packet_scope(), "%s=%s", m->attr_key[i], m->attr_value[i]));
        proto_tree *at = proto_item_add_subtree(ai, ett_attr);
        proto_item_set_generated(ai);
        add_string(at, hf_attr_key, tvb, m->attr_key[i]);
        add_string(at, hf_attr_value, tvb, m->attr_value[i]);
    }
    if (!m->is_request)
        add_span_ref(t, tvb, m->req, m->stream);
    if (m->disagree)
        expert_add_info(pinfo, it, &ei_disagree);
    if (m->dropped)
        expert_add_info_format(pinfo, it, &ei_dropped, "%u more contexts not shown", m->dropped);
}

static void add_rpc(proto_tree *tree, packet_info *pinfo, tvbuff_t *tvb, const struct tc_rpc *r)
{
    proto_item *it = proto_tree_add_none_format(
        tree, hf_rpc, tvb, 0, 0, "JSON-RPC %s%s%s%s%s%s (%s)", r->kind, r->method ? " " : "",
        r->method ? r->method : "", r->name ? " " : "", r->name ? r->name : "",
        r->id ? wmem_strdup_printf(wmem_packet_scope(), ", id %s", r->id) : "", r->direction);
    proto_tree *t = proto_item_add_subtree(it, ett_rpc);
    proto_item *x;

    proto_item_set_generated(it);
    add_string(t, hf_rpc_kind, tvb, r->kind);
    add_string(t, hf_rpc_method, tvb, r->method);
    add_string(t, hf_rpc_id, tvb, r->id);
    add_string(t, hf_rpc_name, tvb, r->name);
    add_string(t, hf_rpc_direction, tvb, r->direction);
    if (r->request_in)
        proto_item_set_generated(
            proto_tree_add_uint(t, hf_rpc_request_in, tvb, 0, 0, r->request_in));
    if (r->has_error) {
        x = proto_tree_add_int64(t, hf_rpc_error_code, tvb, 0, 0, r->error_code);
        proto_item_set_generated(x);
        add_string(t, hf_rpc_error, tvb, r->error_msg);
        expert_add_info_format(pinfo, x, &ei_rpc_error, "JSON-RPC error %" G_GINT64_FORMAT ": %s",
                               r->error_code, r->error_msg ? r->error_msg : "");
    }
    if (r->tool_error) {
        x = proto_tree_add_boolean(t, hf_rpc_tool_error, tvb, 0, 0, TRUE);
        proto_item_set_generated(x);
        expert_add_info_format(pinfo, x, &ei_rpc_error, "Tool result with isError");
    }
    if (r->temperature == r->temperature)
        proto_item_set_generated(
            proto_tree_add_double(t, hf_rpc_temperature, tvb, 0, 0, r->temperature));
    if (r->max_tokens >= 0)
        proto_item_set_generated(
            proto_tree_add_int64(t, hf_rpc_max_tokens, tvb, 0, 0, r->max_tokens));
    if (r->why)
        expert_add_info_format(pinfo, it, &ei_rpc_malformed, "Malformed JSON-RPC: %s", r->why);
}

/* ---- dissection ---------------------------------------------------------------------- */

static int dissect_tracectx(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_)
{
    struct tc_frame *f;
    proto_item *ti;
    proto_tree *t;

    /* Results are computed once, on the first pass, and kept per frame. */
    if (!PINFO_FD_VISITED(pinfo)) {
        f = tc_collect(&wanted, pinfo, tree);
        if (f)
            p_add_proto_data(wmem_file_scope(), pinfo, proto_tracectx, 0, f);
    } else {
        f = p_get_proto_data(wmem_file_scope(), pinfo, proto_tracectx, 0);
    }
    if (f == NULL)
        return 0;
    if (f->nrpc) {
        ti = proto_tree_add_item(tree, proto_spanfold, tvb, 0, 0, ENC_NA);
        proto_item_set_generated(ti);
        t = proto_item_add_subtree(ti, ett_spanfold);
        for (guint i = 0; i < f->nrpc; i++)
            add_rpc(t, pinfo, tvb, &f->rpc[i]);
    }
    if (f->n == 0 && f->nrel == 0)
        return tvb_captured_length(tvb);
    ti = proto_tree_add_item(tree, proto_tracectx, tvb, 0, 0, ENC_NA);
    proto_item_set_generated(ti);
    t = proto_item_add_subtree(ti, ett_tracectx);
    for (guint i = 0; i < f->n; i++)
        add_message(t, pinfo, tvb, f->msg[i]);
    for (guint i = 0; i < f->nrel; i++)
        add_span_ref(t, tvb, f->rel[i], f->rel[i]->stream);
    tap_queue_packet(tap_tracectx, pinfo, f);
    return tvb_captured_length(tvb);
}

/* ---- statistics: Statistics > Trace Context > Spans per trace ------------------------------ */

static const char st_root[] = "Spans per trace";
static int st_node = -1;

static void st_init(stats_tree *st)
{
    st_node = stats_tree_create_node(st, st_root, 0, STAT_DT_INT, TRUE);
}

static tap_packet_status st_packet(stats_tree *st, packet_info *pinfo _U_, epan_dissect_t *edt _U_,
                                   const void *p, tap_flags_t flags _U_)
{
    const struct tc_frame *f = p;

    for (guint i = 0; i < f->n; i++) {
        const struct tc_msg *m = f->msg[i];
        const struct tc_ctx *c;
        int tnode;
        if (!m->is_request || m->preferred < 0)
            continue;
        c = &m->ctx[m->preferred];
        tick_stat_node(st, st_root, 0, FALSE);
        tnode = tick_stat_node(st, c->trace_id, st_node, TRUE);
        tick_stat_node(st, c->span_id, tnode, FALSE);
    }
    return TAP_PACKET_REDRAW;
}

/* ---- registration ---------------------------------------------------------------------- */

/* The "spanfold" protocol: JSON-RPC messages, named as pcap2spans names them. */
static void register_spanfold(void)
{
    static hf_register_info hf[] = {
        {&hf_rpc,
         {"JSON-RPC message", "spanfold.jsonrpc", FT_NONE, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_rpc_kind,
         {"Kind", "spanfold.jsonrpc.kind", FT_STRING, BASE_NONE, NULL, 0,
          "request, notification, response or malformed", HFILL}},
        {&hf_rpc_method,
         {"Method", "spanfold.jsonrpc.method", FT_STRING, BASE_NONE, NULL, 0,
          "The JSON-RPC method (a response: its request's, seen on the connection)", HFILL}},
        {&hf_rpc_id,
         {"Id", "spanfold.jsonrpc.id", FT_STRING, BASE_NONE, NULL, 0,
          "A number as written, a string in quotes", HFILL}},
        {&hf_rpc_name,
         {"Tool or prompt", "spanfold.jsonrpc.name", FT_STRING, BASE_NONE, NULL, 0,
          "params.name (tools/call, prompts/get)", HFILL}},
        {&hf_rpc_direction,
         {"Direction", "spanfold.jsonrpc.direction", FT_STRING, BASE_NONE, NULL, 0,
          "c2s: in a request body, s2c: in a response body", HFILL}},
        {&hf_rpc_request_in,
         {"Request in", "spanfold.jsonrpc.request_in", FT_FRAMENUM, BASE_NONE,
          FRAMENUM_TYPE(FT_FRAMENUM_REQUEST), 0, NULL, HFILL}},
        {&hf_rpc_error_code,
         {"Error code", "spanfold.jsonrpc.error_code", FT_INT64, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_rpc_error,
         {"Error message", "spanfold.jsonrpc.error", FT_STRING, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_rpc_tool_error,
         {"Tool error", "spanfold.jsonrpc.tool_error", FT_BOOLEAN, BASE_NONE, NULL, 0,
          "A tool result with isError: true", HFILL}},
        {&hf_rpc_temperature,
         {"Temperature", "spanfold.jsonrpc.temperature", FT_DOUBLE, BASE_NONE, NULL, 0,
          "Sampling parameter", HFILL}},
        {&hf_rpc_max_tokens,
         {"Max tokens", "spanfold.jsonrpc.max_tokens", FT_INT64, BASE_DEC, NULL, 0,
          "Sampling parameter", HFILL}},
    };
    static gint *ett[] = {&ett_spanfold, &ett_rpc};
    static ei_register_info ei[] = {
        {&ei_rpc_malformed,
         {"spanfold.jsonrpc.malformed", PI_MALFORMED, PI_WARN, "Malformed JSON-RPC", EXPFILL}},
        {&ei_rpc_error,
         {"spanfold.jsonrpc.failed", PI_RESPONSE_CODE, PI_NOTE, "JSON-RPC error", EXPFILL}},
    };

    proto_spanfold = proto_register_protocol("spanfold JSON-RPC", "spanfold", "spanfold");
    proto_register_field_array(proto_spanfold, hf, array_length(hf));
    proto_register_subtree_array(ett, array_length(ett));
    expert_register_field_array(expert_register_protocol(proto_spanfold), ei, array_length(ei));
}

void proto_register_tracectx(void)
{
    static hf_register_info hf[] = {
        {&hf_span,
         {"Span", "tracectx.span", FT_NONE, BASE_NONE, NULL, 0,
          "The span (request context) this response or stream frame belongs to", HFILL}},
        {&hf_msg, {"Message", "tracectx.message", FT_NONE, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_direction,
         {"Direction", "tracectx.direction", FT_STRING, BASE_NONE, NULL, 0, "request or response",
          HFILL}},
        {&hf_stream,
         {"HTTP/2 stream", "tracectx.stream", FT_UINT32, BASE_DEC, NULL, 0, NULL, HFILL}},
        {&hf_request_in,
         {"Request in", "tracectx.request_in", FT_FRAMENUM, BASE_NONE,
          FRAMENUM_TYPE(FT_FRAMENUM_REQUEST), 0, "The frame carrying this span's request", HFILL}},
        {&hf_response_in,
         {"Response in", "tracectx.response_in", FT_FRAMENUM, BASE_NONE,
          FRAMENUM_TYPE(FT_FRAMENUM_RESPONSE), 0, "The frame carrying this span's response",
          HFILL}},
        {&hf_time,
         {"Response time", "tracectx.time", FT_RELATIVE_TIME, BASE_NONE, NULL, 0,
          "Time from the request's headers to the response's headers", HFILL}},
        {&hf_early,
         {"TLS 1.3 early data", "tracectx.early_data", FT_BOOLEAN, BASE_NONE, NULL, 0,
          "The request travelled as 0-RTT early data (replayable)", HFILL}},
        {&hf_early_outcome,
         {"0-RTT verdict", "tracectx.early_data.outcome", FT_STRING, BASE_NONE, NULL, 0,
          "The server's answer to 0-RTT (EncryptedExtensions): accepted, rejected, unknown",
          HFILL}},
        {&hf_ctx, {"Context", "tracectx.context", FT_NONE, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_format,
         {"Format", "tracectx.format", FT_STRING, BASE_NONE, NULL, 0,
          SF_CTX_FORMAT_LIST, /* the formats of lib/sf_tc_formats.h */
          HFILL}},
        {&hf_trace_id,
         {"Trace ID", "tracectx.trace_id", FT_STRING, BASE_NONE, NULL, 0, "32 lowercase hex digits",
          HFILL}},
        {&hf_span_id,
         {"Span ID", "tracectx.span_id", FT_STRING, BASE_NONE, NULL, 0, "16 lowercase hex digits",
          HFILL}},
        {&hf_parent_id,
         {"Parent span ID", "tracectx.parent_id", FT_STRING, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_sampled, {"Sampled", "tracectx.sampled", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_debug, {"Debug", "tracectx.debug", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_flags, {"Flags", "tracectx.flags", FT_UINT8, BASE_HEX, NULL, 0, NULL, HFILL}},
        {&hf_trace_id_64,
         {"64-bit trace ID", "tracectx.trace_id_64", FT_BOOLEAN, BASE_NONE, NULL, 0,
          "The trace id was 64-bit and has been left-padded with zeros", HFILL}},
        {&hf_tracestate,
         {"tracestate", "tracectx.tracestate", FT_STRING, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_ts_member,
         {"Member", "tracectx.tracestate.member", FT_STRING, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_ts_key,
         {"Key", "tracectx.tracestate.key", FT_STRING, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_ts_value,
         {"Value", "tracectx.tracestate.value", FT_STRING, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_valid, {"Valid", "tracectx.valid", FT_BOOLEAN, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_error, {"Error", "tracectx.error", FT_STRING, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_raw, {"Raw value", "tracectx.raw", FT_STRING, BASE_NONE, NULL, 0, NULL, HFILL}},
        {&hf_preferred,
         {"Span key", "tracectx.preferred", FT_BOOLEAN, BASE_NONE, NULL, 0,
          "The context pcap2spans keys the span on (W3C first)", HFILL}},
        {&hf_attr,
         {"Attribute", "tracectx.attr", FT_STRING, BASE_NONE, NULL, 0,
          "A request attribute a sampling decision can depend on, KEY=VALUE (lib/sf_attrs.h)",
          HFILL}},
        {&hf_attr_key,
         {"Key", "tracectx.attr.key", FT_STRING, BASE_NONE, NULL, 0,
          "baggage.KEY, tracestate.KEY or header.NAME, as the drift explanation names it", HFILL}},
        {&hf_attr_value,
         {"Value", "tracectx.attr.value", FT_STRING, BASE_NONE, NULL, 0, NULL, HFILL}},
    };
    static gint *ett[] = {&ett_tracectx, &ett_msg, &ett_ctx, &ett_ts, &ett_attr};
    static ei_register_info ei[] = {
        {&ei_malformed,
         {"tracectx.malformed", PI_MALFORMED, PI_WARN, "Malformed trace context", EXPFILL}},
        {&ei_disagree,
         {"tracectx.disagree", PI_PROTOCOL, PI_WARN,
          "Trace contexts in one message name different traces", EXPFILL}},
        {&ei_early,
         {"tracectx.early_data.expert", PI_SECURITY, PI_WARN,
          "Request sent as TLS 1.3 0-RTT early data: it can be replayed", EXPFILL}},
        {&ei_early_rejected,
         {"tracectx.early_data.rejected", PI_SEQUENCE, PI_NOTE,
          "0-RTT request rejected by the server: it was not processed (the client may retry it)",
          EXPFILL}},
        {&ei_dropped, {"tracectx.dropped", PI_UNDECODED, PI_NOTE, "Too many contexts", EXPFILL}},
    };
    expert_module_t *em;

    proto_tracectx = proto_register_protocol("Trace Context", "TraceCtx", "tracectx");
    proto_register_field_array(proto_tracectx, hf, array_length(hf));
    proto_register_subtree_array(ett, array_length(ett));
    em = expert_register_protocol(proto_tracectx);
    expert_register_field_array(em, ei, array_length(ei));
    tap_tracectx = register_tap("tracectx");
    register_spanfold();
    register_cleanup_routine(tc_collect_reset);
}

void proto_reg_handoff_tracectx(void)
{
    tracectx_handle = create_dissector_handle(dissect_tracectx, proto_tracectx);
    register_postdissector(tracectx_handle);
    set_postdissector_wanted_hfids(tracectx_handle, tc_wanted_init(&wanted));
    stats_tree_register_plugin("tracectx", "tracectx", "Trace Context/Spans per trace", 0,
                               st_packet, st_init, NULL);
}
