/* collect.h - first-pass collection of trace contexts from other dissectors'
 * fields (HTTP/1.1 header lines, HTTP/2 header fields, TLS handshake facts).
 *
 * JSON-RPC messages are read from HTTP/1.1 bodies (http.file_data, the body as
 * Wireshark reassembled and de-chunked it) of a JSON or event-stream Content-Type, by
 * lib/sf_jsonrpc and lib/sf_sse as pcap2spans reads them.
 *
 * Wireshark offers the fields a postdissector wants only while a packet is
 * dissected for the first time (tshark's second pass and the GUI's re-dissection
 * on click do not prime them again), so everything is computed once, in frame
 * order, and kept per frame in file scope; later passes only rebuild the tree.
 */
#ifndef SF_DISSECTOR_COLLECT_H
#define SF_DISSECTOR_COLLECT_H

#include <epan/packet.h>
#include <wireshark.h>

/* One trace context as shown in the tree (strings in file scope). */
struct tc_ctx {
    const char *format, *trace_id, *span_id, *parent_id, *tracestate, *error, *raw;
    int sampled; /* -1 unknown */
    int debug, flags, trace_id_64, valid;
};

/* The server's verdict on 0-RTT, from EncryptedExtensions (early_data extension or
 * not); known only once that message has been seen, so a request sent as early data
 * is updated later (shown on the second pass and in the GUI). */
enum tc_early { TC_EARLY_UNKNOWN = 0, TC_EARLY_ACCEPTED, TC_EARLY_REJECTED };

/* One HTTP message (request or response headers) seen in a frame. */
struct tc_msg {
    gboolean is_request;
    guint32 stream;           /* HTTP/2 stream id; 0 for HTTP/1 */
    gboolean early_data;      /* request sent as TLS 1.3 0-RTT early data */
    int early_outcome;        /* enum tc_early: what the server's EncryptedExtensions said */
    gboolean disagree;        /* valid contexts name different traces */
    guint32 frame;            /* the frame this message is in */
    guint32 peer_frame;       /* the response (for a request) or request (for a response) */
    const struct tc_msg *req; /* on a response: its request (whose context keys the span) */
    nstime_t delta;           /* response time, on responses linked to a request */
    gboolean has_delta;
    int preferred; /* index of the span's key context, -1 none */
    guint dropped; /* contexts beyond what the parser keeps */
    guint n;
    struct tc_ctx *ctx;
    /* a request's sampling attributes (lib/sf_attrs.h): "baggage.env", "prod", ... as
     * pcap2spans keeps them and the drift explanation names them */
    guint nattr;
    const char **attr_key, **attr_value;
};

/* One JSON-RPC 2.0 message in an HTTP/1.1 body of the frame (lib/sf_jsonrpc.h; strings
 * in file scope, NULL absent). */
struct tc_rpc {
    const char *kind;   /* request, notification, response, malformed */
    const char *method; /* a response's: its request's, when seen on the connection */
    const char *id, *name, *error_msg;
    const char *direction; /* c2s: in a request body, s2c: in a response body */
    gboolean has_error, tool_error;
    gint64 error_code, max_tokens; /* max_tokens -1 absent */
    double temperature;            /* NaN absent */
    guint32 request_in;            /* a response: the frame of its request, 0 unknown */
    const char *why;               /* malformed: why and where */
};

struct tc_frame {
    guint nrpc;
    struct tc_rpc *rpc;
    guint n;
    struct tc_msg **msg; /* stable pointers: responses link back into requests */
    guint nrel;
    const struct tc_msg **rel; /* requests of HTTP/2 streams that have frames here but no
                                  header block (DATA, RST_STREAM, ...): the frame belongs
                                  to their span */
};

/* hfids of the other dissectors' fields the collector reads. */
struct tc_wanted {
    int tcp_stream;
    int http_req_method, http_resp_code, http_req_line, http_resp_line;
    int h2_streamid, h2_hdr_name, h2_hdr_value;
    int tls_hs_type, tls_ext_type;
    int http_content_type, http_file_data;
};

/* Look up the wanted hfids (in the handoff); returns them as a GArray of ints for
 * set_postdissector_wanted_hfids (ownership passes to Wireshark). */
GArray *tc_wanted_init(struct tc_wanted *w);

/* First pass over one frame's tree: returns the frame's messages (file scope),
 * or NULL when the frame carries no HTTP headers. */
struct tc_frame *tc_collect(const struct tc_wanted *w, packet_info *pinfo, proto_tree *tree);

/* Forget per-capture state (registered as a cleanup routine). */
void tc_collect_reset(void);

#endif
