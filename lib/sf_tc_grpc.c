/* sf_tc_grpc.c - grpc-trace-bin, OpenCensus BinaryEncoding (layout in sf_tracectx.h).
 *
 * grpc-trace-bin   00 | 00 trace(16) | 01 span(8) | 02 opts; base64 padded or     sampled:
 *                  not, ','-joined values = one context each; 0x00 + raw bytes   opts bit0;
 *                  ("true binary"); unknown field id ends decoding               no opts: 0
 */
#include <string.h>

#include "sf_base64.h"
#include "sf_hex.h"
#include "sf_rd.h"
#include "sf_tc_int.h"

#define GRPC_B64_MAX 256 /* base64 characters of one grpc-trace-bin value we decode */

/* 1 when the n bytes at b are all zero. */
static int zero_bytes(const uint8_t *b, size_t n)
{
    uint8_t acc = 0;

    for (size_t i = 0; i < n; i++)
        acc |= b[i];
    return acc == 0;
}

/* The decoding of sf_tracectx_parse_grpc_trace_bin; raw is left to the caller. */
static int grpc_bin(struct sf_tracectx *c, const uint8_t *bin, size_t n)
{
    struct sf_rd rd;
    const uint8_t *tid, *sid;
    uint8_t ver, fid;

    if (n == 0)
        return sf_tc_fail(c, "grpc-trace-bin: empty value");
    sf_rd_init(&rd, bin, n, 0);
    ver = sf_rd_u8(&rd);
    if (ver != 0)
        return sf_tc_fail(c, "grpc-trace-bin: unsupported version %u", ver);
    /* Field ids are on the wire, lengths are not: trace id (0) then span id (1) must come
     * first, at fixed offsets, as opencensus-java's decoder requires. */
    fid = sf_rd_u8(&rd);
    if (!rd.err && fid != 0)
        return sf_tc_fail(c, "grpc-trace-bin: field %u at byte 1, need 0 (trace id)", fid);
    tid = sf_rd_bytes(&rd, 16);
    fid = sf_rd_u8(&rd);
    if (!rd.err && fid != 1)
        return sf_tc_fail(c, "grpc-trace-bin: field %u at byte 18, need 1 (span id)", fid);
    sid = sf_rd_bytes(&rd, 8);
    if (rd.err)
        return sf_tc_fail(c, "grpc-trace-bin: truncated: %zu bytes, need at least 27", n);
    /* Options only when field 2 follows; any other id ends decoding (tail ignored). */
    if (sf_rd_left(&rd) > 0 && rd.p[0] == 2) {
        sf_rd_u8(&rd);
        c->flags = sf_rd_u8(&rd);
        if (rd.err)
            return sf_tc_fail(c, "grpc-trace-bin: options field truncated: %zu bytes, need 29", n);
        c->sampled = c->flags & 0x01;
    } else {
        c->sampled = 0; /* OpenCensus default options */
    }
    sf_hex_encode(c->trace_id, tid, 16);
    sf_hex_encode(c->span_id, sid, 8);
    if (zero_bytes(tid, 16))
        return sf_tc_fail(c, "grpc-trace-bin: trace id is all zeros");
    if (zero_bytes(sid, 8))
        return sf_tc_fail(c, "grpc-trace-bin: span id is all zeros");
    return 0;
}

int sf_tracectx_parse_grpc_trace_bin(struct sf_tracectx *c, const uint8_t *bin, size_t n)
{
    if (bin == NULL) {
        bin = (const uint8_t *)"";
        n = 0;
    }
    sf_tc_begin(c, SF_CTX_GRPC_TRACE_BIN);
    sf_tc_raw_set_hex(c, bin, n);
    return grpc_bin(c, bin, n);
}

/* One base64 grpc-trace-bin value (an element of a ','-joined list). */
static int parse_grpc_b64(struct sf_tracectx *c, const char *v, size_t n)
{
    uint8_t bin[SF_BASE64_DECODED_MAX(GRPC_B64_MAX)];
    long len;

    if (n > GRPC_B64_MAX) {
        sf_tc_begin(c, SF_CTX_GRPC_TRACE_BIN);
        sf_tc_raw_append(c, v, n);
        return sf_tc_fail(c, "grpc-trace-bin: value has %zu base64 characters, at most %d", n,
                          GRPC_B64_MAX);
    }
    len = sf_base64_decode(bin, sizeof(bin), v, n);
    if (len < 0) {
        sf_tc_begin(c, SF_CTX_GRPC_TRACE_BIN);
        sf_tc_raw_append(c, v, n);
        return sf_tc_fail(c, "grpc-trace-bin: invalid base64");
    }
    /* raw shows what travelled: the base64 text (not the hex of the bytes) */
    sf_tc_begin(c, SF_CTX_GRPC_TRACE_BIN);
    sf_tc_raw_append(c, v, n);
    return grpc_bin(c, bin, (size_t)len);
}

/* Several base64 values may be joined with ','; true binary starts with a 0x00 byte. */
void sf_tc_add_grpc(struct sf_tracectx_set *s, int h, const char *t, size_t n)
{
    const uint8_t *v = (const uint8_t *)t;
    const char *f;
    size_t tl = n, start = 0;
    struct sf_tracectx *c;
    int found = 0;

    (void)h;
    if (n > 0 && v[0] == 0) {
        c = sf_tc_new_ctx(s);
        if (c != NULL)
            sf_tracectx_parse_grpc_trace_bin(c, v + 1, n - 1);
        return;
    }
    for (size_t i;; start = i + 1) {
        const char *comma = start < tl ? memchr(t + start, ',', tl - start) : NULL;
        i = comma != NULL ? (size_t)(comma - t) : tl; /* the element is t[start..i) */
        f = t + start;
        size_t fl = i - start;
        sf_tc_trim_ows(&f, &fl);
        if (fl == 0 && (found || i < tl)) { /* empty list element */
            if (i >= tl)
                break;
            continue;
        }
        found = 1;
        c = sf_tc_new_ctx(s);
        if (c == NULL)
            return;
        if (fl == 0) {
            sf_tc_begin(c, SF_CTX_GRPC_TRACE_BIN);
            sf_tc_raw_append(c, t, n);
            sf_tc_fail(c, "grpc-trace-bin: empty value");
        } else {
            parse_grpc_b64(c, f, fl);
        }
        if (i >= tl)
            break;
    }
}
