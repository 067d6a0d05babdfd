/* sf_sniff.h - what kind of artefact a file is, from its first bytes, never its name.
 *
 * The front end (spanfold ingest) reads the head of every file it is given, undoes a
 * compression layer (gzip, xz, zstd: sf_decomp.h) and asks sf_sniff_kind() what is
 * inside: a capture, an NSS key log, perf output (text or perf.data), or tracefs /
 * spantrace text.  The verdict comes from whole lines or magic numbers, with a reason
 * for the caller to print when nothing fits.
 */
#ifndef SF_SNIFF_H
#define SF_SNIFF_H

#include <stddef.h>

enum sf_comp { SF_COMP_NONE, SF_COMP_GZIP, SF_COMP_XZ, SF_COMP_ZSTD };

enum sf_kind {
    SF_KIND_UNKNOWN,
    SF_KIND_EMPTY,
    SF_KIND_PCAP,        /* classic pcap, any byte order, us or ns */
    SF_KIND_PCAPNG,      /* pcapng section header block */
    SF_KIND_KEYLOG,      /* NSS key log (SSLKEYLOGFILE) */
    SF_KIND_PERF_SCRIPT, /* `perf script` text, with or without --header */
    SF_KIND_PERF_DATA,   /* perf.data (PERFILE2) */
    SF_KIND_TRACEFS,     /* tracefs trace / trace_pipe text, or spantrace output */
    SF_KIND_TRACE_DAT,   /* trace-cmd's trace.dat ("\027\010Dtracing") */
};

/* The compression of a file from its first bytes (n may be short). */
enum sf_comp sf_sniff_compression(const unsigned char *b, size_t n);

/* The kind of the (decompressed) head b[0..n).  `complete` is 1 when b holds the whole
 * file, so a last line without a newline counts.  When the verdict is SF_KIND_UNKNOWN,
 * why (if not NULL) gets a short reason. */
enum sf_kind sf_sniff_kind(const unsigned char *b, size_t n, int complete, char *why, size_t whysz);

/* Short names: "pcap", "pcapng", "keylog", "perf-script", "perf.data", "tracefs",
 * "trace.dat", ... */
const char *sf_kind_name(enum sf_kind k);
const char *sf_comp_name(enum sf_comp c);

#endif
