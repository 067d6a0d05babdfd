/* sf_jsonrpc.h - JSON-RPC 2.0 messages read from bytes: a strict, bounded JSON parser
 * (RFC 8259) and the facts spanfold keeps of each message.  Used by pcap2spans (bodies
 * of HTTP messages and SSE events) and meant for the Wireshark plugin alike.
 *
 *   message  = request | notification | response, an object with "jsonrpc": "2.0"
 *              (JSON-RPC 2.0, section 4-5), or a batch: an array of them (section 6)
 *   request      has "method" and "id";  notification: "method", no "id"
 *   response     has "id" and "result" or "error" {"code", "message"}
 *
 * Facts read beyond JSON-RPC itself come from MCP (2025-11-25): params.name (the tool
 * of tools/call, the prompt of prompts/get), params._meta.{traceparent, tracestate,
 * baggage} (trace context carried in the message, as the OpenTelemetry MCP conventions
 * put it), a tool result's result.isError, and the sampling parameters of
 * sampling/createMessage (temperature, maxTokens, stopSequences, modelPreferences.hints[0]
 * .name; topP / top_p, max_tokens for the OpenAI-style spellings).
 *
 * Strict: one value, no trailing commas, no leading zeros, valid escapes and UTF-8, no
 * control bytes in strings, no duplicate member among the ones read; a message that is
 * valid JSON but not JSON-RPC 2.0 is an error too.  Bounded: SF_JRPC_DEPTH levels of
 * nesting (iterative over siblings, recursive only into containers), each kept string
 * cut to SF_JRPC_STR bytes at a UTF-8 boundary (control bytes as '?'), and the time is
 * linear in the bytes: the caller bounds the message size.
 */
#ifndef SF_JSONRPC_H
#define SF_JSONRPC_H

#include <stddef.h>
#include <stdint.h>

#define SF_JRPC_DEPTH 64  /* nesting levels of a message */
#define SF_JRPC_STR   256 /* bytes kept of a string fact, NUL included */

enum sf_jrpc_kind { SF_JRPC_REQUEST, SF_JRPC_NOTIFICATION, SF_JRPC_RESPONSE };

/* One message's facts; "" for a string that is absent. */
struct sf_jrpc_msg {
    enum sf_jrpc_kind kind;
    char method[SF_JRPC_STR];
    /* The id as text that keeps its type apart: a number as written (`7`), a string in
     * double quotes with its content decoded (`"a7"`), `null`; "" for no id. */
    char id[SF_JRPC_STR];
    char name[SF_JRPC_STR]; /* params.name */
    int has_error;          /* a response with "error" */
    int64_t error_code;
    char error_msg[SF_JRPC_STR];
    int tool_error; /* result.isError is true */
    char traceparent[SF_JRPC_STR], tracestate[SF_JRPC_STR], baggage[SF_JRPC_STR];
    /* sampling parameters: NaN / -1 when absent */
    double temperature, top_p;
    int64_t max_tokens, stop_sequences;
    char model_hint[SF_JRPC_STR];
};

/* Why a message was rejected, and where: off is the byte offset in the text. */
struct sf_jrpc_err {
    size_t off;
    const char *why; /* static */
};

/* What kind of body a Content-Type value announces (RFC 9110 media type, parameters
 * ignored): 1 JSON (application/json, application/json-rpc, application/X+json), 2 an
 * event stream (text/event-stream), 0 neither. */
int sf_jrpc_content_kind(const char *v, size_t n);

typedef void (*sf_jrpc_fn)(void *arg, const struct sf_jrpc_msg *m);

/* 1 when the text p[0..n) names the member "jsonrpc" anywhere: a body or an event that
 * does, and still does not parse as JSON-RPC, is a malformed message, not JSON of
 * another kind (a REST API's), which readers leave alone. */
int sf_jrpc_mentioned(const char *p, size_t n);

/* Read the JSON text p[0..n) (whitespace around it allowed): each message, in order,
 * is handed to fn (a batch's elements one by one, as they are read).  Returns the
 * number of messages, or -1 with e filled when the text is not valid JSON or not
 * JSON-RPC 2.0 (messages handed to fn before the error stay handed). */
long sf_jrpc_parse(const char *p, size_t n, sf_jrpc_fn fn, void *arg, struct sf_jrpc_err *e);

#endif
