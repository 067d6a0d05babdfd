/* sf_tracectx.h - trace context in request headers, every wire format.
 *
 * One parser for pcap2spans, the Wireshark plugin and the demo service, so they
 * always agree.  References: W3C Trace Context (traceparent/tracestate, Level 1
 * REC + the W3C test suite's verdicts), W3C Baggage, openzipkin/b3-propagation
 * (multi and single header), OpenCensus BinaryEncoding (grpc-trace-bin), Jaeger
 * uber-trace-id, AWS X-Amzn-Trace-Id, Datadog x-datadog-*, SkyWalking sw8.
 * Normalisation (all formats): header names ASCII-case-insensitive; trace ids 32
 * lowercase hex (64-bit ids left-padded with 16 '0', trace_id_64 = 1); span ids 16
 * lowercase hex; all-zero ids invalid.  An invalid context is kept, flagged, with
 * the reason in `error`; nothing is dropped silently.
 *
 *   grpc-trace-bin (29 bytes, OpenCensus):
 *   +----+----+-------------------+----+-----------+----+------+
 *   | 00 | 00 | trace id (16)     | 01 | span (8)  | 02 | opts |
 *   +----+----+-------------------+----+-----------+----+------+
 *    ver  fid0  bytes 2..17        fid1  19..26     fid2  28 (bit0 sampled)
 *
 * Usage: feed every header of one request (or response) to a set, then finish.
 *
 *   struct sf_tracectx_set set;
 *   sf_tracectx_set_init(&set);
 *   for each header: sf_tracectx_set_add(&set, name, nlen, value, vlen);
 *   sf_tracectx_set_finish(&set);
 *   for (int i = 0; i < set.n; i++) use(&set.ctx[i]);
 *   int best = sf_tracectx_set_preferred(&set);
 *
 * Nothing here allocates, prints or keeps pointers into the caller's buffers.
 *
 * What callers can rely on (each lib/sf_tc_<family>.c has its row of the format table):
 *   - An invalid context has valid=0, empty ids, sampled=-1, flags=-1 and error
 *     "<format>: <why>" (e.g. "traceparent: trace-id is all zeros").  On a valid
 *     context error is "" or a note: "tracestate discarded: ...", "tracestate
 *     truncated ...", "datadog: _dd.p.tid ... ignored", "baggage: over the
 *     propagation limit ...".
 *   - traceparent's parent-id is the sender's span: it goes to span_id (parent_id "").
 *   - Sampling-only forms (b3: 0|1|d, X-B3-Sampled or X-B3-Flags alone) are valid
 *     contexts without ids; sf_tracectx_set_preferred never picks them.
 *   - grpc-trace-bin: each ','-joined value is its own context; raw is the base64
 *     text, or for "true binary" the hex of the bytes after the 0x00 marker.
 *   - All baggage headers of a set make one context (raw joined with ',').
 *   - tracestate is kept normalised: members "k=v" joined by ',', OWS and empty
 *     members dropped; to fit SF_CTX_STATE_MAX whole members are dropped, those over
 *     128 characters first, then from the right (tracestate_truncated=1).
 *   - A NULL value with length 0 is an empty value.  Headers added after
 *     sf_tracectx_set_finish are ignored; calling finish again changes nothing.
 */
#ifndef SF_TRACECTX_H
#define SF_TRACECTX_H

#include <stddef.h>
#include <stdint.h>

#include "sf_tc_formats.h"

/* One value per format of lib/sf_tc_formats.h, in its order: SF_CTX_B3_MULTI, SF_CTX_B3_SINGLE,
 * SF_CTX_TRACEPARENT, SF_CTX_GRPC_TRACE_BIN, SF_CTX_UBER, SF_CTX_XRAY, SF_CTX_DATADOG,
 * SF_CTX_BAGGAGE, SF_CTX_SW8 (the headers each reads are listed there too). */
enum sf_ctx_format {
#define SF_CTX_ENUM_(id, name, rank, parse) SF_CTX_##id,
    SF_CTX_FORMATS(SF_CTX_ENUM_)
#undef SF_CTX_ENUM_
        SF_CTX_NFORMATS
};

#define SF_CTX_MAX       12   /* contexts kept per header set */
#define SF_CTX_RAW_MAX   512  /* raw value bytes kept (longer: raw_truncated) */
#define SF_CTX_STATE_MAX 1024 /* tracestate bytes kept */
#define SF_CTX_ERR_MAX   128
#define SF_CTX_KEPT_MAX  1024 /* kept header bytes per set (sf_tracectx_set_keep) */

struct sf_tracectx {
    enum sf_ctx_format format;
    char trace_id[33];          /* "" when the format carried none */
    char span_id[17];           /* "" when absent */
    char parent_id[17];         /* "" when absent */
    int sampled;                /* 1, 0, or -1 when the format left it deferred/unknown */
    int debug;                  /* 1 when the format says debug (B3 d/Flags, Jaeger 0x02) */
    int flags;                  /* the format's flag byte (W3C trace-flags, Jaeger flags,
                                   grpc-trace-bin options), -1 when none */
    int trace_id_64;            /* the trace id was 64-bit and has been left-padded */
    int valid;                  /* 1 valid, 0 invalid (see error) */
    char error[SF_CTX_ERR_MAX]; /* reason when invalid; a warning (e.g. "tracestate
                                   discarded: ...") when valid; "" otherwise */
    char raw[SF_CTX_RAW_MAX];   /* the header value(s) as text, NUL-terminated;
                                   binary values as lowercase hex; several headers of
                                   one multi-header format as "name: value; ..." */
    int raw_truncated;
    char tracestate[SF_CTX_STATE_MAX]; /* traceparent only: the combined tracestate
                                          when it validated, else "" */
    int tracestate_truncated;
};

/* Stable format name as stored in contexts.format (lib/sf_tc_formats.h): "b3-multi",
 * "b3-single", "traceparent", "grpc-trace-bin", "uber-trace-id", "x-amzn-trace-id",
 * "datadog", "baggage", "sw8"; "unknown" out of range. */
const char *sf_tracectx_format_name(enum sf_ctx_format f);

/* Accumulates the headers of one request; opaque pending state inside. */
struct sf_tracectx_set {
    struct sf_tracectx ctx[SF_CTX_MAX];
    int n;       /* contexts after finish */
    int dropped; /* contexts beyond SF_CTX_MAX (counted, not kept) */
    /* Kept request headers (sf_tracectx_set_keep): "name\0value\0" pairs, names
     * lowercase, values cut at 128 bytes; what does not fit is counted. */
    char kept[SF_CTX_KEPT_MAX];
    size_t kept_len;
    int kept_dropped;
    /* pending multi-header state (implementation detail) */
    struct sf_tracectx_pending {
        char b3[5][48];        /* first X-B3-TraceId, -SpanId, -ParentSpanId, -Sampled,
                                  -Flags value, OWS-trimmed, first 47 bytes kept */
        size_t b3_len[5];      /* full length of each */
        unsigned char b3_seen; /* bit i: b3[i] present */
        char dd[4][48];        /* x-datadog-trace-id, -parent-id, -sampling-priority, -tags */
        size_t dd_len[4];
        unsigned char dd_seen;
        char dd_tid[48]; /* _dd.p.tid from x-datadog-tags (first 47 bytes) */
        size_t dd_tid_len;
        int dd_tid_seen;
        int tp_idx, tp_count;   /* ctx index of the traceparent (-1: none), headers seen */
        int bg_idx, bg_members; /* ctx index of the baggage context, members so far */
        size_t bg_bytes;
        char ts[SF_CTX_STATE_MAX]; /* tracestate members so far, "k=v,k=v" */
        size_t ts_len;
        int ts_count, ts_members, ts_truncated, ts_bad; /* headers, members, flags */
        char ts_why[96];                                /* why the tracestate is discarded */
        int finished;
    } p;
};

/* Start an empty set. */
void sf_tracectx_set_init(struct sf_tracectx_set *s);

/* Which header any format reads `name` is (an id >= 0, for sf_tracectx_set_add_id), or
 * -1: cheap, lets callers skip the others and match each name only once. */
int sf_tracectx_header_id(const char *name, size_t nlen);

/* Feed one header.  Names are matched case-insensitively; values are bytes
 * (grpc-trace-bin may be base64, padded or not, several joined with ',', or gRPC's
 * "true binary" form: a 0x00 byte then the raw bytes).  Headers no format reads
 * are ignored.  Single-header formats are parsed at once into a new context;
 * multi-header ones are completed by sf_tracectx_set_finish. */
void sf_tracectx_set_add(struct sf_tracectx_set *s, const char *name, size_t nlen,
                         const uint8_t *value, size_t vlen);
/* sf_tracectx_set_add for a header already matched by sf_tracectx_header_id (id < 0:
 * ignored). */
void sf_tracectx_set_add_id(struct sf_tracectx_set *s, int id, const uint8_t *value, size_t vlen);

/* Keep a request header that is not a trace context, for the attributes a sampling
 * decision can depend on (lib/sf_attrs.h decides which): name lowercased and cut at
 * 63 bytes, value cut at 128 bytes between two UTF-8 characters.  Kept before and
 * after finish; a header that does not fit counts in kept_dropped. */
void sf_tracectx_set_keep(struct sf_tracectx_set *s, const char *name, size_t nlen,
                          const uint8_t *value, size_t vlen);
/* The kept headers in order: start with *pos = 0; returns 1 with name and value set,
 * or 0 at the end. */
int sf_tracectx_kept_next(const struct sf_tracectx_set *s, size_t *pos, const char **name,
                          const char **value);
/* Complete multi-header formats (B3 multi, Datadog, traceparent+tracestate).
 * Returns s->n.  Call once, after the last header. */
int sf_tracectx_set_finish(struct sf_tracectx_set *s);

/* Index in s->ctx of the context a span should be keyed on: the first valid one
 * in the order traceparent, b3-single, b3-multi, grpc-trace-bin, uber-trace-id,
 * x-amzn-trace-id, datadog (formats with a span id only); -1 if none. */
int sf_tracectx_set_preferred(const struct sf_tracectx_set *s);

/* Single-value parsers, used by the set and directly by tests and the plugin.
 * Each fills *c completely (format, ids, flags, valid/error, raw) and returns 0
 * when valid or -1 when invalid (c->error says why). */
int sf_tracectx_parse_traceparent(struct sf_tracectx *c, const char *v, size_t n);
int sf_tracectx_parse_b3_single(struct sf_tracectx *c, const char *v, size_t n);
int sf_tracectx_parse_grpc_trace_bin(struct sf_tracectx *c, const uint8_t *bin, size_t n);
int sf_tracectx_parse_uber(struct sf_tracectx *c, const char *v, size_t n);
int sf_tracectx_parse_xray(struct sf_tracectx *c, const char *v, size_t n);
int sf_tracectx_parse_baggage(struct sf_tracectx *c, const char *v, size_t n);
int sf_tracectx_parse_sw8(struct sf_tracectx *c, const char *v, size_t n);

/* Check a combined tracestate value (W3C rules as the test suite applies them).
 * Returns 0 if valid, -1 if it must be discarded (why gets the reason). */
int sf_tracectx_check_tracestate(const char *v, size_t n, char *why, size_t whysz);

/* Iterate tracestate members: start with *pos = 0; each call sets key/value spans
 * and returns 1, or 0 at the end.  For a value that passed the check above. */
int sf_tracectx_tracestate_next(const char *v, size_t n, size_t *pos, const char **key,
                                size_t *klen, const char **val, size_t *vlen);

/* Keep probability from a W3C tracestate holding OpenTelemetry's "ot=th:HEX"
 * (56-bit rejection threshold T, HEX = its leading 1..14 hex digits):
 * p = (2^56 - T) / 2^56 ("th:8" = 0.5, "th:0" = 1).  NaN when absent or bad. */
double sf_tracectx_ot_rate(const char *tracestate);

#endif
