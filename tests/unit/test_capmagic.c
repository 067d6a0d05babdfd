/* Unit tests: lib/sf_capmagic.h, the one place for capture files' magic numbers. */
#include "sf_capmagic.h"
#include "tap.h"

int main(void)
{
    static const uint8_t pcap[][4] = {{0xd4, 0xc3, 0xb2, 0xa1},  /* µs, little-endian */
                                      {0xa1, 0xb2, 0xc3, 0xd4},  /* µs, big-endian */
                                      {0x4d, 0x3c, 0xb2, 0xa1},  /* ns, little-endian */
                                      {0xa1, 0xb2, 0x3c, 0x4d}}; /* ns, big-endian */
    static const uint8_t shb[4] = {0x0a, 0x0d, 0x0d, 0x0a};
    static const uint8_t not [][4] = {{0xa1, 0xb2, 0xc3, 0xd5}, {0x0a, 0x0d, 0x0d, 0x0b},
                                      {'P', 'E', 'R', 'F'},     {0, 0, 0, 0},
                                      {0xc3, 0xd4, 0xa1, 0xb2}, {0x1a, 0x2b, 0x3c, 0x4d}};
    static const uint8_t bom_be[4] = {0x1a, 0x2b, 0x3c, 0x4d}, bom_le[4] = {0x4d, 0x3c, 0x2b, 0x1a};
    size_t i;

    for (i = 0; i < 4; i++)
        TAP_OK(sf_capmagic_is_pcap(pcap[i]) && !sf_capmagic_is_pcapng(pcap[i]),
               "pcap magic %zu is pcap, not pcapng", i);
    TAP_OK(sf_capmagic_is_pcapng(shb) && !sf_capmagic_is_pcap(shb), "pcapng SHB type");
    for (i = 0; i < sizeof(not ) / sizeof(not [0]); i++)
        TAP_OK(!sf_capmagic_is_pcap(not [i]) && !sf_capmagic_is_pcapng(not [i]),
               "near miss %zu is neither", i);
    TAP_OK(sf_capmagic_pcapng_be(bom_be) == 1, "byte-order magic 1a2b3c4d: big-endian");
    TAP_OK(sf_capmagic_pcapng_be(bom_le) == 0, "byte-order magic 4d3c2b1a: little-endian");
    TAP_OK(sf_capmagic_pcapng_be(shb) == -1, "anything else: neither");
    return tap_done();
}
