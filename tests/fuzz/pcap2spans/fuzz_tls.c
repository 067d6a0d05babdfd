/* Fuzz target: the TLS layer (tls.c record/handshake parser with decryption, and the key
 * log parser of tls_keys.c).
 *
 * Input: a first byte selecting the mode.
 *   'K'  the rest is key log text (p2s_tls_keys_load_text).
 *   else a stream of chunks  ctl(1) len(2, big-endian) bytes(len): bit 0 of ctl is the
 *        direction (0 client, 1 server), bit 1 "report a gap of (ctl >> 2) bytes first".
 * The RFC 8448 section 4 key log is always loaded, so inputs built from that trace (the
 * seeds) reach early, handshake and application decryption, KeyUpdate, EndOfEarlyData and
 * the inner HTTP parsers; mutations reach the failure paths.
 */
#include <stdint.h>
#include <string.h>

#include "../../../pcap2spans/p2s.h"
#include "../../../pcap2spans/tls.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char keylog[] = "CLIENT_EARLY_TRAFFIC_SECRET "
                             "1bc3ceb6bbe39cff938355b5a50adb6db21b7a6af649d7b4bc419d7876487d95 "
                             "3fbbe6a60deb66c30a32795aba0eff7eaa10105586e7be5c09678d63b6caab62\n"
                             "CLIENT_HANDSHAKE_TRAFFIC_SECRET "
                             "1bc3ceb6bbe39cff938355b5a50adb6db21b7a6af649d7b4bc419d7876487d95 "
                             "2faac08f851d35fea3604fcb4de82dc62c9b164a70974d0462e27f1ab278700f\n"
                             "SERVER_HANDSHAKE_TRAFFIC_SECRET "
                             "1bc3ceb6bbe39cff938355b5a50adb6db21b7a6af649d7b4bc419d7876487d95 "
                             "fe927ae271312e8bf0275b581c54eef020450dc4ecffaa05a1a35d27518e7803\n"
                             "CLIENT_TRAFFIC_SECRET_0 "
                             "1bc3ceb6bbe39cff938355b5a50adb6db21b7a6af649d7b4bc419d7876487d95 "
                             "2abbf2b8e381d23dbebe1dd2a7d16a8bf484cb4950d23fb7fb7fa8547062d9a1\n"
                             "SERVER_TRAFFIC_SECRET_0 "
                             "1bc3ceb6bbe39cff938355b5a50adb6db21b7a6af649d7b4bc419d7876487d95 "
                             "cc21f1bf8feb7dd5fa505bd9c4b468a9984d554a993dc49e6d285598fb672691\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct p2s_ctx ctx;
    struct p2s_conn *conn;
    struct sf_err err;
    int64_t ts = 1;
    void *st;

    if (size == 0 || p2s_ctx_init(&ctx) < 0)
        return 0;
    ctx.quiet = 1;
    ctx.errors_printed = 1000000;
    if (p2s_tls_keys_new(&ctx.tls_keys) < 0) {
        p2s_ctx_free(&ctx);
        return 0;
    }
    sf_err_clear(&err);
    if (data[0] == 'K') {
        p2s_tls_keys_load_text(ctx.tls_keys, (const char *)data + 1, size - 1, 0, &err);
        p2s_tls_keys_free(ctx.tls_keys);
        p2s_ctx_free(&ctx);
        return 0;
    }
    p2s_tls_keys_load_text(ctx.tls_keys, keylog, sizeof(keylog) - 1, 0, &err);
    conn = tcp_conn_new_detached(&ctx);
    st = conn ? p2s_conn_switch(conn, &p2s_tls_ops) : NULL;
    data++;
    size--;
    while (st && size >= 3) {
        uint8_t ctl = data[0];
        size_t len = (size_t)data[1] << 8 | data[2];
        enum p2s_dir dir = (ctl & 1) ? P2S_S2C : P2S_C2S;
        data += 3;
        size -= 3;
        if (len > size)
            len = size;
        if (ctl & 2)
            p2s_tls_ops.gap(st, dir, ctl >> 2, ts);
        sf_err_clear(&err);
        p2s_tls_ops.data(st, dir, data, len, ts++, &err);
        data += len;
        size -= len;
    }
    if (conn)
        tcp_conn_free_detached(conn);
    p2s_tls_keys_free(ctx.tls_keys);
    p2s_ctx_free(&ctx);
    return 0;
}
