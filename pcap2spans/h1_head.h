/* h1_head.h - one HTTP/1 header section (RFC 9112 sections 2-5): where it ends, its
 * request or status line, and the facts h1.c needs from its fields (Host, Content-Length,
 * Transfer-Encoding: chunked, Upgrade, HTTP2-Settings, and for rpc.h Content-Type,
 * Content-Encoding, Mcp-Session-Id), every field offered to a
 * trace-context set.  Text in, facts out: no connection state.
 *
 *   start-line  = method SP request-target SP "HTTP/1." DIGIT
 *               | "HTTP/1." DIGIT SP 3DIGIT [ SP reason ]
 *   field-line  = field-name ":" OWS field-value OWS      (lines end in LF or CR LF)
 */
#ifndef P2S_H1_HEAD_H
#define P2S_H1_HEAD_H

#include <stddef.h>
#include <stdint.h>

struct p2s_ctx;         /* ctx.h */
struct sf_tracectx_set; /* sf_tracectx.h */

/* What a header section says about its message. */
struct h1_head_facts {
    const char *host;
    size_t host_len;
    int64_t clen; /* -1 none, -2 invalid */
    int chunked, upgrade_h2c, upgrade_any, upgrade_ws;
    const char *ws_ext; /* Sec-WebSocket-Extensions (RFC 6455 9.1), NULL none */
    size_t ws_ext_len;
    const char *h2s; /* first HTTP2-Settings value (RFC 7540 3.2.1) */
    size_t h2s_len;
    unsigned h2s_count;
    struct sf_tracectx_set *ctx;
    struct p2s_ctx *pctx; /* for its pool of context sets */
    int request;          /* a request's fields: its kept headers (lib/sf_attrs.h) go to ctx */
    int rpc_kind;         /* the body may carry JSON-RPC: sf_jrpc_content_kind, 0 when encoded */
    const char *encoding; /* Content-Encoding (the last one seen), NULL none */
    size_t encoding_len;
    const char *session; /* Mcp-Session-Id (MCP Streamable HTTP) */
    size_t session_len;
};

/* The facts of the field lines in [p, end) (after the start line) of a request or a
 * response: f is filled from scratch; f->ctx is a set from ctx's pool (p2s_set_get) when
 * a field carries a trace context, or is a request header kept for the sampling
 * attributes, else NULL, and is the caller's to finish and put back. */
void h1_head_fields(struct h1_head_facts *f, struct p2s_ctx *ctx, int request, const char *p,
                    const char *end);

/* Split the request line p[0..n) (no line end), "METHOD SP target SP HTTP/1.x": the
 * method's length in *ml, the target in *t / *tl.  0, or -1 if it is none. */
int h1_head_request_line(const char *p, size_t n, size_t *ml, const char **t, size_t *tl);

/* The status code of the status line p[0..n) (no line end) in *status (100..599).  0, or
 * -1 if it is none. */
int h1_head_status_line(const char *p, size_t n, int *status);

/* End of a header section in p[0..n): the offset just past its blank line, or 0 when it
 * is not all there.  A line ends at LF, with or without a CR before it (RFC 9112 section
 * 2.2, as h1_head_fields reads the lines), so the blank line follows the first LF that is
 * followed by LF or by CR LF. */
size_t h1_head_end(const uint8_t *p, size_t n);

#endif
