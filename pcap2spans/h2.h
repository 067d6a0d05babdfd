/* h2.h - HTTP/2 (RFC 9113): the parser (h2.c framing over h2_stream.c streams), the
 * h2c upgrade that h1.c hands over, and helpers for tests and detection. */
#ifndef P2S_H2_H
#define P2S_H2_H

#include <stddef.h>
#include <stdint.h>

#include "conn.h"
#include "h2_stream.h"

extern const struct p2s_app_ops p2s_h2_ops;

/* The HTTP2-Settings header fields of an h2c upgrade request (RFC 7540 3.2.1), as
 * h1.c saw them: the client's SETTINGS payload, base64url without padding. */
#define P2S_H2C_SETTINGS_MAX 1024 /* longer values are malformed (and not kept) */
struct p2s_h2c_settings {
    const char *value; /* the first field's value (not NUL-terminated); NULL when
                          absent or longer than P2S_H2C_SETTINGS_MAX */
    size_t len;        /* its length, also when it was too long to keep */
    unsigned count;    /* HTTP2-Settings fields in the request (0: absent) */
    int64_t ack_ns;    /* capture time of the 101 that acknowledges them */
};

/* After p2s_conn_switch(conn, &p2s_h2_ops) for an accepted "Upgrade: h2c" (101),
 * h1.c hands the upgraded request to the HTTP/2 parser: it becomes stream 1
 * (half-closed from the client), keeping req's method, authority, path, request
 * times, req_bytes and req_ctx (copied; req only needs to live during the call).
 * The response arrives as HTTP/2 frames after the server's SETTINGS, and the
 * client's connection preface follows on its side.  hs (NULL: none) carries the
 * request's HTTP2-Settings: the 101 acknowledges them, so they bound what the
 * server sends from then on, as an ACKed SETTINGS frame would; a malformed value
 * (more than one field, too long, not base64url, not a whole number of settings)
 * is an "h2c_settings" event and the defaults stay.  Then h1.c hands the bytes after
 * the 101 to p2s_h2_ops.data. */
void p2s_h2_adopt_upgrade(void *h2_state, const struct p2s_span *req,
                          const struct p2s_h2c_settings *hs);

/* Does p[0..n) start with a plausible HTTP/2 frame header (known type, flags and
 * stream id that fit the type, sane length), followed by another one when the
 * bytes reach that far, or ending exactly at n?  1 yes, 0 no, -1 need more bytes.
 * For finding frame boundaries mid-connection (after a gap, or a capture without
 * the preface); tcp.c could use it to detect HTTP/2 without the preface. */
int h2_plausible_frames(const uint8_t *p, size_t n, uint32_t max_frame);

/* Name of an HTTP/2 error code (RFC 9113 section 7), "UNKNOWN" otherwise. */
const char *h2_error_name(uint32_t code);

#endif
