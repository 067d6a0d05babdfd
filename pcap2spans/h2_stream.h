/* h2_stream.h - HTTP/2 streams (h2_stream.c): what h2.c (framing, above) and
 * h2_stream.c (streams, header blocks, spans) share.  h2_stream.c calls nothing in
 * h2.c. */
#ifndef P2S_H2_STREAM_H
#define P2S_H2_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "conn.h"
#include "ctx.h"
#include "grpc.h"
#include "sf_buf.h"
#include "sf_map.h"

#define H2_PREFACE     "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define H2_PREFACE_LEN 24
#define H2_HDR         9

enum h2_type {
    T_DATA = 0,
    T_HEADERS = 1,
    T_PRIORITY = 2,
    T_RST_STREAM = 3,
    T_SETTINGS = 4,
    T_PUSH_PROMISE = 5,
    T_PING = 6,
    T_GOAWAY = 7,
    T_WINDOW_UPDATE = 8,
    T_CONTINUATION = 9,
};

#define F_END_STREAM  0x01
#define F_ACK         0x01
#define F_END_HEADERS 0x04
#define F_PADDED      0x08
#define F_PRIORITY    0x20

#define H2_DEFAULT_MAX_FRAME 16384u
#define H2_ABS_MAX_FRAME     16777215u
#define H2_CTRL_MAX          65536u /* buffered payload of control frames */
#define H2_SYNC_WINDOW       65536u /* bytes held while looking for frame boundaries */
#define H2_SYNC_GIVE_UP      (1u << 20)
#define H2_PENDING           8  /* SETTINGS awaiting ACK, per direction */
#define H2_STREAMS_FIRST     64 /* first slots of a connection's stream map: 1 KiB */
#define H2_REASON_MAX        200
#define H2_TEXT_MAX          160 /* method, authority and path held in the stream */
#define H2_LINGER            16  /* reset streams kept for the peer's frames in flight */

enum h2_dstate {
    D_PREFACE, /* C2S: matching the connection preface */
    D_FRAMES,  /* aligned on frames */
    D_SYNC,    /* looking for the next frame boundary */
    D_DEAD,    /* abandoned: bytes are ignored */
};

struct h2_stream {
    struct h2_stream *prev, *next; /* creation order */
    uint32_t id, promised_on;
    char *method, *authority, *path, *grpc_message;
    char text[H2_TEXT_MAX]; /* method, authority, path when they fit (stream_str) */
    size_t text_used;
    int status, grpc, grpc_status;
    int64_t grpc_timeout;
    int64_t req_start, req_end, resp_start, resp_end;
    struct p2s_seq_range req_seq, resp_seq; /* TCP bytes: first frame to END_STREAM frame */
    int seq_ended[2];                       /* the range's end was seen (per direction) */
    int64_t req_bytes, resp_bytes;
    int req_seen, req_done, resp_done, final_seen, upgraded;
    int lingering; /* reset by one side, waiting for the other side's last frames */
    int64_t reset_ts;
    int64_t reset_code;
    int partial;
    char reason[H2_REASON_MAX];
    struct sf_tracectx_set *req_ctx, *resp_ctx;
    int req_ctx_done;
    int early; /* the request started in TLS 0-RTT data (p2s_conn_early_data) */
    struct grpc_msgs msgs[2];
    /* JSON-RPC (rpc.h): per direction the body's kind (sf_jrpc_content_kind) and
     * Content-Encoding from its headers, its reader once they are done; the MCP session
     * each side named (own allocations); the messages the bodies carried */
    int rpc_kind[2];
    char *rpc_enc[2], *rpc_session[2];
    struct p2s_rpc_body *rb[2];
    int64_t rpc_messages;
};

struct p2s_rpc_body; /* rpc.h */

struct h2_settings {
    int64_t table; /* SETTINGS_HEADER_TABLE_SIZE, -1 absent */
    int64_t frame; /* SETTINGS_MAX_FRAME_SIZE, -1 absent */
};

struct h2_dir {
    enum h2_dstate state;
    size_t preface_got;
    uint64_t off;        /* bytes of this direction consumed */
    struct sf_buf fb;    /* an incomplete frame (header, or header + payload) */
    int64_t fts;         /* capture time of the current frame's first byte */
    uint32_t fseq, fend; /* TCP sequence number of its first byte, of the byte after it */
    int fseq_ok;         /* 0: unknown (TLS, frames replayed after a resync) */
    uint32_t block_seq;  /* fseq of the header block's first frame */
    int block_seq_ok;
    /* frame whose payload streams through (DATA, oversized or unknown frames) */
    uint32_t skip_left; /* payload bytes still to come */
    uint32_t skip_sid;
    uint8_t skip_type, skip_flags;
    int pad_pending;    /* PADDED DATA: the pad length byte is next */
    uint32_t body_left; /* DATA bytes before the padding */
    /* header block being assembled (HEADERS/PUSH_PROMISE + CONTINUATION) */
    int in_block, block_over;
    struct sf_buf block;
    uint32_t block_sid, promised;
    uint8_t block_type, block_end_stream;
    int64_t block_ts;
    /* HPACK decoder for blocks sent in this direction */
    struct hpack_dec *hd;
    int64_t bound;      /* table bound ACKed before the decoder existed, -1 none */
    int lost;           /* bytes were lost before the decoder existed */
    uint32_t max_frame; /* limit on frames sent in this direction */
    int max_frame_known;
    struct h2_settings pend[H2_PENDING]; /* SETTINGS this direction sent, not ACKed */
    int npend;
    uint64_t sync_scanned;
};

struct h2_conn {
    struct p2s_ctx *ctx;
    struct p2s_conn *conn;
    const struct p2s_limits *lim;
    struct h2_dir d[2];
    struct sf_map streams; /* open streams by sf_hash_u64(id), grown with them (--max-streams) */
    struct h2_stream *first, *last;
    size_t nstreams;
    size_t nlinger;              /* streams lingering after a reset */
    int from_start;              /* preface (or h2c upgrade) seen: tables known */
    uint32_t first_req, max_req; /* client stream ids whose request HEADERS we saw */
    uint32_t max_push;
    /* the data call in progress: first error goes to err, later ones are notes */
    struct sf_err *err;
    int rc, emit_rc;
    int64_t ts;
    /* its bytes, and the TCP sequence number of the first (call_seq_ok 0: unknown) */
    const uint8_t *call_p;
    size_t call_n;
    enum p2s_dir call_dir;
    uint32_t call_seq;
    int call_seq_ok;
};

/* h2_stream.c: report an error of connection c in direction dir.  The first error of a data
 * call is returned to tcp.c through the call's sf_err (printed with packet and
 * offset); later ones are counted as "h2_error" events. */
void h2_fail(struct h2_conn *c, enum p2s_dir dir, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* h2_stream.c: a NUL-terminated copy of at most cap bytes of p[0..n); NULL on no memory. */
char *h2_dup(const void *p, size_t n, size_t cap);

/* Mark a stream partial, appending why to its reason (once). */
void h2_stream_partial(struct h2_stream *s, const char *why);

/* The open stream with this id, or NULL. */
struct h2_stream *h2_stream_find(struct h2_conn *c, uint32_t id);

/* Open stream id, which must not be open (h2_stream_find first); when max_streams are
 * open, the oldest is emitted first, partial (an "h2_stream_cap" event).  NULL on no
 * memory. */
struct h2_stream *h2_stream_new(struct h2_conn *c, uint32_t id);

/* Hand the stream to the run context as a span (p2s_emit_span), then free it. */
void h2_stream_emit(struct h2_conn *c, struct h2_stream *s);

/* Emit the stream if both directions have ended. */
void h2_stream_check_done(struct h2_conn *c, struct h2_stream *s);
/* DATA bytes of s going dir (p NULL: n bytes lost), and the end of that direction's body. */
void h2_stream_rpc_data(struct h2_conn *c, struct h2_stream *s, enum p2s_dir dir, const uint8_t *p,
                        size_t n);
void h2_stream_rpc_end(struct h2_stream *s, enum p2s_dir dir, int64_t ts);
/* The message of dir on s ends with the current frame of dir: its TCP range ends there. */
void h2_stream_seq_end(struct h2_conn *c, enum p2s_dir dir, struct h2_stream *s);

/* A reset stream's wait is over: the sides that had not ended end at the reset, and
 * the stream is emitted. */
void h2_stream_reset_end(struct h2_conn *c, struct h2_stream *s);

/* Mark every open stream partial (capture gap, lost frames). */
void h2_stream_mark_all(struct h2_conn *c, const char *why);

/* Header blocks of one direction: start (HEADERS or PUSH_PROMISE seen), add a
 * fragment (decoded at END_HEADERS), give up (the dynamic table is lost with it), or
 * decode a complete block blk[0..n) (NULL when it was over the cap) whose last byte
 * arrived at ts. */
void h2_stream_block_start(struct h2_conn *c, enum p2s_dir dir, uint8_t type, uint32_t sid,
                           uint32_t promised, int end_stream);
void h2_stream_block_add(struct h2_conn *c, enum p2s_dir dir, const uint8_t *frag, size_t n,
                         int end_headers, int64_t ts);
void h2_stream_block_abandon(struct h2_conn *c, enum p2s_dir dir, const char *why);
void h2_stream_block_done(struct h2_conn *c, enum p2s_dir dir, const uint8_t *blk, size_t n,
                          int64_t ts);

/* The request of an accepted h2c upgrade becomes stream 1, half-closed from the client
 * (p2s_h2_adopt_upgrade in h2.c, after the HTTP2-Settings). */
void h2_stream_adopt(struct h2_conn *c, const struct p2s_span *req);

#endif
