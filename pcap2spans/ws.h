/* ws.h - WebSocket messages (RFC 6455) after an HTTP/1.1 upgrade, read for JSON-RPC.
 *
 *   frame = FIN RSV1 RSV2 RSV3 opcode(4) | MASK len(7) [len(16) | len(64)] [mask(32)] payload
 *
 * A message is a text or binary frame and its continuations up to FIN; control frames
 * (close, ping, pong) may come between them and are skipped.  Frames from the client are
 * masked (section 5.3).  With permessage-deflate (RFC 7692, agreed in the 101's
 * Sec-WebSocket-Extensions) a message whose first frame has RSV1 is raw DEFLATE data
 * ended by the sync flush it lost (00 00 ff ff), inflated with the window kept from
 * message to message unless that side's no_context_takeover was agreed.  Each text
 * message is one JSON text for rpc.h, its times those of its first and last frames;
 * the upgrade exchange is its carrier (both directions share it, so a response finds
 * its request).  Bounded: a message past --max-rpc-bytes (before or after inflating)
 * is skipped with a `jsonrpc_over_limit` event; a frame that breaks the syntax, or a
 * gap, makes the rest of that direction unread (an event says so).
 */
#ifndef P2S_WS_H
#define P2S_WS_H

#include <stddef.h>
#include <stdint.h>

#include "conn.h"

struct p2s_ctx;
struct p2s_ws;

/* A reader for the connection conn after the 101 of its HTTP/1.1 exchange stream_id;
 * ext is the response's Sec-WebSocket-Extensions value (NULL none).  NULL: no memory. */
struct p2s_ws *p2s_ws_new(struct p2s_ctx *ctx, struct p2s_conn *conn, int64_t stream_id,
                          const char *ext, size_t ext_len);
void p2s_ws_data(struct p2s_ws *w, enum p2s_dir dir, const uint8_t *p, size_t n, int64_t ts);
void p2s_ws_gap(struct p2s_ws *w, enum p2s_dir dir);
void p2s_ws_free(struct p2s_ws *w);

#endif
