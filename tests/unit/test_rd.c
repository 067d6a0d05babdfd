/* Unit tests: lib/sf_rd.h bounded reader and lib/sf_err. */
#include "sf_err.h"
#include "sf_rd.h"
#include "tap.h"

static void test_reads(void)
{
    static const uint8_t b[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09};
    struct sf_rd rd;

    sf_rd_init(&rd, b, sizeof(b), 100);
    TAP_EQ_INT(sf_rd_u8(&rd), 1, "u8");
    TAP_EQ_INT(sf_rd_u16be(&rd), 0x0203, "u16be");
    TAP_EQ_INT(sf_rd_u24be(&rd), 0x040506, "u24be");
    TAP_EQ_INT(sf_rd_off(&rd), 106, "offset counts from base");
    TAP_EQ_INT(sf_rd_u32be(&rd), 0, "u32be past the end returns 0");
    TAP_OK(rd.err, "short read sets err");
    TAP_EQ_INT(sf_rd_off(&rd), 106, "a short read does not advance");
    TAP_EQ_INT(sf_rd_u8(&rd), 0, "err is sticky: later reads fail too");
}

static void test_le_and_bytes(void)
{
    static const uint8_t b[] = {0x78, 0x56, 0x34, 0x12, 0xaa, 0xbb};
    struct sf_rd rd, sub;

    sf_rd_init(&rd, b, sizeof(b), 0);
    TAP_EQ_INT(sf_rd_u32le(&rd), 0x12345678, "u32le");
    sub = sf_rd_sub(&rd, 2);
    TAP_EQ_INT(sf_rd_left(&sub), 2, "sub-reader has its length");
    TAP_EQ_INT(sf_rd_off(&sub), 4, "sub-reader keeps the input offset");
    TAP_EQ_INT(sf_rd_u16le(&sub), 0xbbaa, "u16le in sub-reader");
    TAP_EQ_INT(sf_rd_left(&rd), 0, "parent advanced past the sub-reader");
    sub = sf_rd_sub(&rd, 1);
    TAP_OK(sub.err && rd.err, "sub-reader past the end fails both");
    sf_rd_init(&rd, b, sizeof(b), 0);
    TAP_OK(sf_rd_bytes(&rd, 7) == NULL && rd.err, "bytes() past the end is NULL");
}

/* Nested vectors: an inner length that passes its parent's end fails, and the parent
 * still steps over the whole outer vector. */
static void test_vectors(void)
{
    static const uint8_t b[] = {0x00, 0x05, 0x02, 0xaa, 0xbb, 0x04, 0xcc, 0x00, 0x00, 0x01, 0x7e};
    struct sf_rd rd, outer, in1, in2;

    sf_rd_init(&rd, b, sizeof(b), 0);
    outer = sf_rd_vec16(&rd);
    TAP_EQ_INT(sf_rd_left(&outer), 5, "vec16: a sub-reader of its length");
    in1 = sf_rd_vec8(&outer);
    TAP_EQ_INT(sf_rd_u16be(&in1), 0xaabb, "vec8 inside vec16");
    TAP_OK(!in1.err && sf_rd_left(&in1) == 0, "the inner vector is exactly consumed");
    in2 = sf_rd_vec8(&outer);
    TAP_OK(in2.err && sf_rd_left(&in2) == 0, "an inner length past the parent's end fails");
    TAP_OK(outer.err, "and fails the parent, whose bytes after it are not read");
    TAP_EQ_INT(sf_rd_off(&rd), 7, "the grandparent is past the outer vector");
    in1 = sf_rd_vec24(&rd);
    TAP_EQ_INT(sf_rd_u8(&in1), 0x7e, "vec24");
    TAP_OK(!rd.err && sf_rd_left(&rd) == 0, "the reader ends exactly at the end");
    in1 = sf_rd_vec16(&rd);
    TAP_OK(in1.err && rd.err, "a vector whose length is cut fails");
}

/* A 5-byte header arriving 2 + 2 + 3 bytes: complete after the third piece, which is
 * read only as far as the header. */
static void test_fill(void)
{
    static const uint8_t b[] = {0x16, 0x03, 0x03, 0x01, 0x02, 0x99, 0x98};
    uint8_t hdr[5];
    size_t have = 0;
    struct sf_rd rd;

    sf_rd_init(&rd, b, 2, 0);
    have = sf_rd_fill(&rd, hdr, have, sizeof(hdr));
    TAP_OK(have == 2 && sf_rd_left(&rd) == 0 && !rd.err, "fill takes what there is");
    sf_rd_init(&rd, b + 2, 2, 2);
    have = sf_rd_fill(&rd, hdr, have, sizeof(hdr));
    sf_rd_init(&rd, b + 4, 3, 4);
    have = sf_rd_fill(&rd, hdr, have, sizeof(hdr));
    TAP_EQ_INT(have, 5, "fill completes the header");
    TAP_EQ_INT(sf_rd_left(&rd), 2, "and leaves the bytes after it");
    TAP_EQ_INT(sf_rd_get_u8(hdr, 0), 0x16, "its first byte from the first piece");
    TAP_EQ_INT(sf_rd_get_u16be(hdr, 3), 0x0102, "the header reads across the pieces");
    TAP_EQ_INT(sf_rd_fill(&rd, hdr, have, sizeof(hdr)), 5, "a full header takes nothing");
    TAP_EQ_INT(sf_rd_u8(&rd), 0x99, "so the next read is the byte after the header");
}

/* Every prefix of a record must fail with a truncation at exactly its length. */
static void test_truncation_sweep(void)
{
    static const uint8_t rec[] = {0x00, 0x00, 0x05, 0x01, 0x04, 0x00, 0x00,
                                  0x00, 0x01, 'h',  'e',  'l',  'l',  'o'};
    int all = 1;

    for (size_t cut = 0; cut < sizeof(rec); cut++) {
        struct sf_rd rd;
        uint32_t len;

        sf_rd_init(&rd, rec, cut, 0);
        len = sf_rd_u24be(&rd);
        sf_rd_u8(&rd);
        sf_rd_u8(&rd);
        sf_rd_u32be(&rd);
        sf_rd_bytes(&rd, len);
        if (!rd.err)
            all = 0;
    }
    TAP_OK(all, "every prefix of a 14-byte frame is detected as truncated");
}

static void test_err_format(void)
{
    struct sf_err e;
    char out[300];

    sf_err_clear(&e);
    e.unit = "packet";
    e.unit_no = 1742;
    e.proto = "h2";
    sf_err_set(&e, SF_E_MALFORMED, 0x1a2b0, "HPACK: invalid index %d", 97);
    sf_err_prefix(&e, "stream %d: ", 5);
    sf_err_format(&e, "pcap2spans", "x.pcap", out, sizeof(out));
    TAP_EQ_STR(out,
               "pcap2spans: x.pcap: packet 1742 @0x1a2b0: h2: stream 5: HPACK: invalid index 97",
               "binary error format names packet and offset");
    e.unit_off = 0x2311;
    sf_err_format(&e, "pcap2spans", "x.pcap", out, sizeof(out));
    TAP_EQ_STR(out,
               "pcap2spans: x.pcap: packet 1742 @0x2311 byte 107184: h2: stream 5: HPACK: "
               "invalid index 97",
               "with the packet's file offset, the parser's byte is kept beside it");
    e.off = UINT64_MAX;
    sf_err_format(&e, "pcap2spans", "x.pcap", out, sizeof(out));
    TAP_EQ_STR(out,
               "pcap2spans: x.pcap: packet 1742 @0x2311: h2: stream 5: HPACK: invalid index 97",
               "a parser that knows no byte: the packet's offset only");
    sf_err_clear(&e);
    e.unit = "line";
    e.unit_no = 12;
    e.col = 4;
    sf_err_set(&e, SF_E_MALFORMED, 300, "bad frame");
    sf_err_format(&e, "perf-fold", "p.txt", out, sizeof(out));
    TAP_EQ_STR(out, "perf-fold: p.txt:12:4: bad frame", "text error format is file:line:col:");
    TAP_EQ_INT(sf_err_set(NULL, SF_E_TRUNC, 0, "x"), SF_E_TRUNC,
               "sf_err_set(NULL) returns the code");
    TAP_EQ_STR(sf_err_name(SF_E_LIMIT), "limit exceeded", "code names");
}

int main(void)
{
    test_reads();
    test_le_and_bytes();
    test_vectors();
    test_fill();
    test_truncation_sweep();
    test_err_format();
    return tap_done();
}
