/* rpc.h - JSON-RPC 2.0 calls (MCP) as spans, read from the bodies of HTTP messages.
 *
 * An HTTP parser opens a body reader for each message whose Content-Type is
 * `application/json` (or `application/json-rpc`, `application/X+json`) or
 * `text/event-stream`, feeds it the body's bytes (de-chunked) and ends it with the
 * message.  JSON bodies are read whole (up to --max-rpc-bytes; a Content-Encoding of gzip,
 * deflate, br or zstd undone by lib/sf_http_coding.h, the decoded body bounded alike),
 * event streams event by event (lib/sf_sse.h); each JSON text goes through
 * lib/sf_jsonrpc.h.  Then:
 *
 *   - a notification is a span of zero duration at the time its message ended;
 *   - a request waits for its response, looked up by id and by the direction it went,
 *     first among the requests of the same HTTP exchange, then among those of the same
 *     MCP session: the `Mcp-Session-Id` header (Streamable HTTP) or the `sessionId`
 *     query parameter of the path, which the older SSE transport announces in its
 *     `endpoint` event.  Request and response make one span; a response may come on
 *     another connection than its request (the SSE transport);
 *   - a request never answered by the end of the input is a span marked partial, "no
 *     response"; a response to no request seen one marked "request not seen";
 *   - a body that names "jsonrpc" but is not valid JSON-RPC 2.0 is a span marked
 *     partial with the reason and its byte offset, and a `jsonrpc_malformed` event.
 *
 * A JSON-RPC span's connection and stream id are those of the HTTP exchange that carried
 * its request (its parent span), its proto is "jsonrpc", its method the JSON-RPC method;
 * its status is the HTTP status of the response that carried the JSON-RPC response, when
 * it came in a response.
 */
#ifndef P2S_RPC_H
#define P2S_RPC_H

#include <stddef.h>
#include <stdint.h>

#include "conn.h"

struct p2s_ctx;

/* The HTTP exchange a body belongs to. */
struct p2s_rpc_carrier {
    struct p2s_conn *conn;
    int64_t stream_id;
    const char *session; /* Mcp-Session-Id or sessionId=, NUL-terminated; NULL unknown */
    int status;          /* the HTTP status of a response; 0 for a request */
};

/* The session named by a request target's `sessionId` (or `session_id`) query
 * parameter, copied into out (size cap); 0, or -1 when it has none. */
int p2s_rpc_query_session(const char *target, char *out, size_t cap);

struct p2s_rpc_body;

/* A reader for a body of kind (sf_jrpc_content_kind) going dir, with the Content-Encoding
 * enc[0..enc_len) (NULL: none); NULL when kind is 0, when the body cannot be read (a coding
 * not known, or an encoded event stream: a `jsonrpc_encoded_body` event says so), or
 * there is no memory. */
struct p2s_rpc_body *p2s_rpc_body_open(struct p2s_ctx *ctx, const struct p2s_rpc_carrier *x,
                                       enum p2s_dir dir, int kind, const char *enc, size_t enc_len);
void p2s_rpc_body_data(struct p2s_rpc_body *b, const uint8_t *p, size_t n, int64_t ts);
/* Bytes of the body were lost: the message they were in is not read. */
void p2s_rpc_body_gap(struct p2s_rpc_body *b);
/* The body ended at ts: what is left is read, b freed.  Returns the number of JSON-RPC
 * messages it carried.  NULL is a no-op (0). */
unsigned p2s_rpc_body_end(struct p2s_rpc_body *b, int64_t ts);

/* The end of an input: requests still waiting become "no response" spans. */
void p2s_rpc_flush(struct p2s_ctx *ctx);

#endif
