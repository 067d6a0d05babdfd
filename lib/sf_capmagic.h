/* sf_capmagic.h - the magic numbers that open capture files, kept once: ingest's
 * sniffer (sf_sniff.c), pcap2spans' reader (pcap.c) and its pcapng key scanner
 * (tls_keys.c) all ask here.
 *
 * References: draft-ietf-opsawg-pcap (pcap file header), draft-ietf-opsawg-pcapng
 * (Section Header Block).
 *
 *   pcap:    magic(4) = a1b2c3d4 (µs) or a1b23c4d (ns), written in the writer's byte order
 *   pcapng:  block type(4) = 0a0d0d0a (a palindrome)  length(4)  byte-order magic(4) =
 *            1a2b3c4d, in the section's byte order
 */
#ifndef SF_CAPMAGIC_H
#define SF_CAPMAGIC_H

#include <stdint.h>

#define SF_PCAP_MAGIC_US   0xa1b2c3d4u /* microsecond timestamps */
#define SF_PCAP_MAGIC_NS   0xa1b23c4du /* nanosecond timestamps */
#define SF_PCAPNG_SHB_TYPE 0x0a0d0d0au /* Section Header Block type, the same either order */
#define SF_PCAPNG_BOM      0x1a2b3c4du /* byte-order magic, SHB bytes 8..11 */

/* The 32-bit value of b[0..3], big-endian; b must have 4 bytes. */
static inline uint32_t sf_capmagic_be32(const uint8_t *b)
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static inline uint32_t sf_capmagic_swap32(uint32_t v)
{
    return v >> 24 | (v >> 8 & 0xff00u) | (v << 8 & 0xff0000u) | v << 24;
}

/* 1 if the 4 bytes at b open a pcap file (either timestamp kind, either byte order). */
static inline int sf_capmagic_is_pcap(const uint8_t *b)
{
    uint32_t v = sf_capmagic_be32(b), s = sf_capmagic_swap32(v);

    return v == SF_PCAP_MAGIC_US || v == SF_PCAP_MAGIC_NS || s == SF_PCAP_MAGIC_US ||
           s == SF_PCAP_MAGIC_NS;
}

/* 1 if the 4 bytes at b are a pcapng Section Header Block's type. */
static inline int sf_capmagic_is_pcapng(const uint8_t *b)
{
    return sf_capmagic_be32(b) == SF_PCAPNG_SHB_TYPE;
}

/* The byte order a Section Header Block's byte-order magic (4 bytes at b, SHB offset 8)
 * announces: 1 big-endian, 0 little-endian, -1 neither (not pcapng). */
static inline int sf_capmagic_pcapng_be(const uint8_t *b)
{
    uint32_t v = sf_capmagic_be32(b);

    return v == SF_PCAPNG_BOM ? 1 : sf_capmagic_swap32(v) == SF_PCAPNG_BOM ? 0 : -1;
}

#endif
