/* Unit tests: detect.c, the probe table.  Every probe on what it accepts, on each
 * prefix of that (need more, or no once no more bytes come), on garbage, and
 * det_first's order and stop rules. */
#include <string.h>

#include "../../pcap2spans/detect.h"
#include "../../pcap2spans/p2s.h"
#include "tap.h"

#define S(lit) (const uint8_t *)(lit), sizeof(lit) - 1

/* Every strict prefix of p[0..n) that still holds min bytes or fewer is "need more"
 * (and no when final); p itself is yes. */
static void accepts(enum det_id id, const uint8_t *p, size_t n)
{
    const char *name = det_probes[id].name;
    size_t k;
    int more = 1, no = 1;

    TAP_EQ_INT(det_look(id, p, n, 0), DET_YES, "%s: yes on %zu bytes", name, n);
    TAP_EQ_INT(det_look(id, p, n, 1), DET_YES, "%s: yes on %zu bytes, final", name, n);
    for (k = 0; k < det_probes[id].min && k < n; k++) {
        more &= det_look(id, p, k, 0) == DET_MORE;
        no &= det_look(id, p, k, 1) == DET_NO;
    }
    TAP_OK(more, "%s: need more on every prefix shorter than %zu", name, det_probes[id].min);
    TAP_OK(no, "%s: no on every short prefix when final", name);
}

static void rejects(enum det_id id, const uint8_t *p, size_t n, const char *what)
{
    TAP_EQ_INT(det_look(id, p, n, 0), DET_NO, "%s: no on %s", det_probes[id].name, what);
}

static const uint8_t tls_hello[] = {0x16, 0x03, 0x01, 0x00, 0x40, 0x01, 0x00};
static const uint8_t tls_server[] = {0x16, 0x03, 0x03, 0x00, 0x40, 0x02, 0x00};
/* SETTINGS (empty, stream 0) then HEADERS on stream 1 with END_HEADERS */
static const uint8_t h2_two[] = {0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 1, 1, 4, 0, 0, 0, 1, 0x82};
/* one WINDOW_UPDATE header whose 4-byte body is not all there */
static const uint8_t h2_one[] = {0, 0, 4, 8, 0, 0, 0, 0, 0, 0, 0};

static void test_probes(void)
{
    static const uint8_t garbage[] = {0x00, 0xff, 0x7f, 0x80, 0x13, 0x37, 0xde, 0xad, 0xbe, 0xef};
    int id;

    accepts(DET_H2_PREFACE, S("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"));
    rejects(DET_H2_PREFACE, S("PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n"), "a wrong preface tail");
    accepts(DET_TLS_RECORD, tls_server, 5);
    rejects(DET_TLS_RECORD, (const uint8_t *)"\x16\x03\x05", 3, "version 3.5");
    rejects(DET_TLS_RECORD, (const uint8_t *)"\x17\x03\x03", 3, "an application-data record");
    accepts(DET_TLS_HELLO, tls_hello, sizeof(tls_hello));
    rejects(DET_TLS_HELLO, tls_server, sizeof(tls_server), "a ServerHello");
    accepts(DET_H1_REQUEST, S("GET / HTTP/1.1\r\n"));
    accepts(DET_H1_REQUEST, S("VERSION-CONTROL /x HTTP/1.1\r\n"));
    accepts(DET_H1_REQUEST, S("ABCDEFGHIJKLMNOPQRSTUVWXYZ-_ABCD /"));
    rejects(DET_H1_REQUEST, S("ABCDEFGHIJKLMNOPQRSTUVWXYZ-_ABCDE /"), "a 33-byte method");
    rejects(DET_H1_REQUEST, S("get / HTTP/1.1\r\n"), "a lower-case method");
    rejects(DET_H1_REQUEST, S(" GET /"), "a leading space");
    TAP_EQ_INT(det_look(DET_H1_REQUEST, S("GE"), 0), DET_MORE, "h1-request: need more on GE");
    TAP_EQ_INT(det_look(DET_H1_REQUEST, S("GE"), 1), DET_NO, "h1-request: no on GE, final");
    accepts(DET_H1_STATUS, S("HTTP/1.1 200 OK\r\n"));
    rejects(DET_H1_STATUS, S("HTTP/2 200\r\n"), "HTTP/2");
    for (id = 0; id < DET_NPROBE; id++)
        rejects((enum det_id)id, garbage, sizeof(garbage), "garbage");
}

static void test_h2_frames(void)
{
    static const uint8_t bad_type[] = {0, 0, 0, 5, 0, 0, 0, 0, 1, 0, 0};  /* PUSH_PROMISE */
    static const uint8_t even_hdrs[] = {0, 0, 1, 1, 4, 0, 0, 0, 2, 0x82}; /* stream 2 */
    static const uint8_t big[] = {0x10, 0, 1, 0, 0, 0, 0, 0, 1};          /* 1 MiB + 1 */
    size_t k;
    int more = 1;

    TAP_EQ_INT(det_look(DET_H2_FRAMES, h2_two, sizeof(h2_two), 0), DET_YES,
               "h2-frames: two frame headers in a row");
    for (k = 0; k < 18; k++)
        more &= det_look(DET_H2_FRAMES, h2_two, k, 0) == DET_MORE;
    TAP_OK(more, "h2-frames: need more before the second header is whole");
    TAP_EQ_INT(det_look(DET_H2_FRAMES, h2_one, sizeof(h2_one), 0), DET_MORE,
               "h2-frames: one frame running past the bytes needs more");
    TAP_EQ_INT(det_look(DET_H2_FRAMES, h2_one, sizeof(h2_one), 1), DET_YES,
               "h2-frames: ... and is taken when no more bytes come");
    TAP_EQ_INT(det_look(DET_H2_FRAMES, h2_one, 5, 1), DET_NO,
               "h2-frames: no whole header when final is no");
    TAP_EQ_INT(det_look(DET_H2_FRAMES, bad_type, sizeof(bad_type), 0), DET_NO,
               "h2-frames: PUSH_PROMISE from a client is no");
    TAP_EQ_INT(det_look(DET_H2_FRAMES, even_hdrs, sizeof(even_hdrs), 1), DET_NO,
               "h2-frames: HEADERS on an even stream is no");
    TAP_EQ_INT(det_look(DET_H2_FRAMES, big, sizeof(big), 1), DET_NO,
               "h2-frames: a frame over 1 MiB is no");
}

static void test_first(void)
{
    const struct det_probe *hit = NULL;

    TAP_EQ_INT(det_first(DET_CLIENT, S("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 0, &hit), DET_YES,
               "first: the preface");
    TAP_OK(hit == &det_probes[DET_H2_PREFACE] && hit->app == DET_APP_H2, "first: selects h2");
    TAP_EQ_INT(det_first(DET_CLIENT, S("PRI * HT"), 0, &hit), DET_MORE,
               "first: a pending preface holds back the request line (PRI looks like one)");
    TAP_EQ_INT(det_first(DET_CLIENT, S("PRI * HTTP/2.0\r\n\r\nXX"), 0, &hit), DET_YES,
               "first: a wrong preface is a request line");
    TAP_OK(hit->app == DET_APP_H1, "first: ... selecting h1");
    TAP_EQ_INT(det_first(DET_CLIENT, tls_hello, sizeof(tls_hello), 0, &hit), DET_YES,
               "first: a TLS record");
    TAP_OK(hit->app == DET_APP_TLS, "first: selects tls");
    TAP_EQ_INT(det_first(DET_CLIENT, h2_two, sizeof(h2_two), 0, &hit), DET_YES,
               "first: frames without a preface");
    TAP_OK(hit == &det_probes[DET_H2_FRAMES], "first: ... by the frame probe");
    TAP_EQ_INT(det_first(DET_CLIENT, S("HTTP/1.1 200 OK\r\n"), 1, &hit), DET_NO,
               "first: a status line is not a client's");
    TAP_EQ_INT(det_first(DET_BIT(DET_H1_STATUS), S("HTTP/1.1 200 OK\r\n"), 0, &hit), DET_YES,
               "first: the status probe alone");
    TAP_EQ_INT(det_first(0, S("GET / HTTP/1.1\r\n"), 0, &hit), DET_NO, "first: an empty set");
}

int main(void)
{
    test_probes();
    test_h2_frames();
    test_first();
    return tap_done();
}
