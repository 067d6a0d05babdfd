/* detect.h - protocol detection by content: one table of probes (detect.c).
 *
 * Each probe looks at the first bytes of one direction and answers yes, no, or "need
 * more bytes" (the bytes so far fit but are too few to say).  A probe has the bytes it
 * needs before it can say yes (min) and the parser a yes selects (ops).  Callers ask
 * one probe (det_look) or the first of a set that says yes, in table order
 * (det_first):
 *   tcp.c   the held first bytes of a connection, and which side is the client;
 *   tls.c   the first decrypted bytes when ALPN does not name the protocol;
 *   h1.c    whether bytes start a request or status line (framing and resync).
 * `final` says no more bytes will come: a "need more" becomes no, and the HTTP/2
 * frame probe judges by the frames the bytes hold.
 */
#ifndef P2S_DETECT_H
#define P2S_DETECT_H

#include <stddef.h>
#include <stdint.h>

enum det_verdict { DET_MORE = -1, DET_NO = 0, DET_YES = 1 };

/* In table order: the order det_first tries them. */
enum det_id {
    DET_H2_PREFACE, /* "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" (RFC 9113 3.4) */
    DET_TLS_RECORD, /* handshake record header: 0x16 0x03 0x00..0x04 (RFC 8446 5.1) */
    DET_TLS_HELLO,  /* that, holding a ClientHello (handshake type 1) */
    DET_H1_REQUEST, /* "METHOD " with an upper-case method of at most 32 bytes */
    DET_H2_FRAMES,  /* plausible client HTTP/2 frames without a preface */
    DET_H1_STATUS,  /* "HTTP/1." */
    DET_NPROBE
};

#define DET_BIT(id) (1u << (id))
/* What the first client bytes of a connection are tested for. */
#define DET_CLIENT                                                                                 \
    (DET_BIT(DET_H2_PREFACE) | DET_BIT(DET_TLS_RECORD) | DET_BIT(DET_H1_REQUEST) |                 \
     DET_BIT(DET_H2_FRAMES))

/* The parser a yes selects.  The detector sits below the parsers (they ask it), so it
 * names them; the caller that switches parsers (tcp.c, tls.c) maps the name to its ops. */
enum det_app { DET_APP_H1, DET_APP_H2, DET_APP_TLS };

struct det_probe {
    const char *name;
    size_t min;       /* bytes needed before a yes */
    enum det_app app; /* the parser a yes selects */
    int (*look)(const uint8_t *p, size_t n, int final);
};

extern const struct det_probe det_probes[DET_NPROBE];

/* One probe: DET_YES, DET_NO or DET_MORE. */
int det_look(enum det_id id, const uint8_t *p, size_t n, int final);

/* The probes of set (DET_BIT()s) in table order: DET_YES with *hit the first to say
 * yes, DET_MORE when one needs more bytes before it (a later yes could be wrong),
 * else DET_NO. */
int det_first(unsigned set, const uint8_t *p, size_t n, int final, const struct det_probe **hit);

#endif
