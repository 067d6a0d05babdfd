/* Fuzz target: the HTTP/1.1 parser (h1.c) on its own.
 *
 * Input: chunks separated by 0xff bytes; the first byte of each chunk says what to do
 * with the rest: bit 0 the direction, bit 1 "report a gap of (byte >> 2) bytes before
 * it".  Small caps make the header limit and pipeline limit reachable.
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

    if (p2s_ctx_init(&ctx) < 0)
        return 0;
    ctx.quiet = 1;
    ctx.errors_printed = 1000000;
    ctx.lim.max_header_bytes = 256;
    conn = tcp_conn_new_detached(&ctx);
    st = conn ? p2s_conn_switch(conn, &p2s_h1_ops) : NULL;
    while (st && size > 0) {
        const uint8_t *end = memchr(data, 0xff, size);
        size_t len = end ? (size_t)(end - data) : size;
        if (len > 0) {
            enum p2s_dir dir = (data[0] & 1) ? P2S_S2C : P2S_C2S;
            const struct p2s_conn_info *ci = p2s_conn_info(conn);
            /* after an h2c upgrade the connection belongs to the HTTP/2 parser: stop */
            if (strcmp(ci->app_proto, "http/1.1") != 0)
                break;
            if (data[0] & 2)
                p2s_h1_ops.gap(st, dir, data[0] >> 2, ts);
            sf_err_clear(&err);
            p2s_h1_ops.data(st, dir, data + 1, len - 1, ts++, &err);
        }
        data += len + (end != NULL);
        size -= len + (end != NULL);
    }
    if (conn)
        tcp_conn_free_detached(conn);
    p2s_ctx_free(&ctx);
    return 0;
}
