/* Fuzz target: the HTTP/2 parser (h2.c + hpack.c + grpc.c) through p2s_h2_ops.
 *
 * Input: one control byte (bit 0: small caps), then records: a control byte C, a
 * 2-byte big-endian length L, then L bytes (the last record may be short).  C bit 0 is
 * the direction; C bit 1 reports a gap of (C >> 2) * 64 bytes before the bytes; C == 0xfe
 * hands an h2c-upgraded request to the parser instead, the L bytes being its
 * HTTP2-Settings value.
 */
#include <stdint.h>
#include <string.h>

#include "../../../pcap2spans/p2s.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct p2s_ctx ctx;
    struct p2s_conn *conn;
    struct sf_err err;
    int64_t ts = 1;
    void *st;

    if (size < 1 || p2s_ctx_init(&ctx) < 0)
        return 0;
    ctx.quiet = 1;
    ctx.errors_printed = 1000000;
    if (data[0] & 1) {
        ctx.lim.max_header_bytes = 512;
        ctx.lim.max_field_bytes = 128;
        ctx.lim.max_hpack_table = 256;
        ctx.lim.max_streams = 4;
    }
    data++;
    size--;
    conn = tcp_conn_new_detached(&ctx);
    st = conn ? p2s_conn_switch(conn, &p2s_h2_ops) : NULL;
    while (st && size >= 3) {
        uint8_t c = data[0];
        size_t len = (size_t)data[1] << 8 | data[2];
        enum p2s_dir dir = (c & 1) ? P2S_S2C : P2S_C2S;

        data += 3;
        size -= 3;
        if (len > size)
            len = size;
        if (c == 0xfe) {
            struct p2s_span req;
            struct p2s_h2c_settings hs = {len <= P2S_H2C_SETTINGS_MAX ? (const char *)data : NULL,
                                          len, 1, ts};

            memset(&req, 0, sizeof(req));
            req.method = "GET";
            req.path = "/up";
            req.req_start_ns = ts;
            p2s_h2_adopt_upgrade(st, &req, &hs);
        } else {
            if (c & 2)
                p2s_h2_ops.gap(st, dir, (uint64_t)(c >> 2) * 64, ts);
            sf_err_clear(&err);
            p2s_h2_ops.data(st, dir, data, len, ts++, &err);
        }
        data += len;
        size -= len;
    }
    if (conn)
        tcp_conn_free_detached(conn);
    p2s_ctx_free(&ctx);
    return 0;
}
