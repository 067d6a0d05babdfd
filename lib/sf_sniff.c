/* sf_sniff.c - artefact kinds by content (see sf_sniff.h).
 *
 * Binary kinds have magic numbers.  Text kinds are told apart line by line over the head:
 *   key log      LABEL <64 hex client random> <hex secret>  (NSS Key Log Format)
 *   perf script  "# ========" / "# captured on" header lines, and stack frames: a tab,
 *                blanks, a hex address, a symbol (only perf script writes those)
 *   tracefs      "# tracer:" / "# trace_clock:" headers, and event lines
 *                "COMM-PID [CPU] FLAGS TS: EVENT:" (tracefs' print_trace_header layout)
 * The kind with the most matching lines wins when it is at least half of the lines
 * looked at; comments and blank lines do not count.
 */
#include "sf_sniff.h"

#include <stdio.h>
#include <string.h>

#include "sf_capmagic.h"

enum sf_comp sf_sniff_compression(const unsigned char *b, size_t n)
{
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
        return SF_COMP_GZIP;
    if (n >= 6 && memcmp(b,
                         "\xfd"
                         "7zXZ\0",
                         6) == 0)
        return SF_COMP_XZ;
    if (n >= 4 && memcmp(b, "\x28\xb5\x2f\xfd", 4) == 0)
        return SF_COMP_ZSTD;
    return SF_COMP_NONE;
}

static int is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* "LABEL <64 hex> <hex>", the labels of TLS 1.2 and 1.3 key logs. */
static int keylog_line(const unsigned char *s, size_t n)
{
    static const char *const labels[] = {"CLIENT_RANDOM ",
                                         "CLIENT_EARLY_TRAFFIC_SECRET ",
                                         "CLIENT_HANDSHAKE_TRAFFIC_SECRET ",
                                         "SERVER_HANDSHAKE_TRAFFIC_SECRET ",
                                         "CLIENT_TRAFFIC_SECRET_",
                                         "SERVER_TRAFFIC_SECRET_",
                                         "EARLY_EXPORTER_SECRET ",
                                         "EXPORTER_SECRET ",
                                         "RSA "};
    size_t i, k, hex = 0;

    for (k = 0; k < sizeof(labels) / sizeof(labels[0]); k++) {
        size_t l = strlen(labels[k]);

        if (n > l && memcmp(s, labels[k], l) == 0)
            break;
    }
    if (k == sizeof(labels) / sizeof(labels[0]))
        return 0;
    i = (size_t)((const unsigned char *)memchr(s, ' ', n) - s) + 1; /* the label has one */
    while (i < n && is_hex(s[i]))
        i++, hex++;
    if (hex < 16 || i >= n || s[i] != ' ')
        return 0;
    for (i++, hex = 0; i < n && is_hex(s[i]); i++)
        hex++;
    while (i < n && (s[i] == '\r' || s[i] == ' '))
        i++;
    return hex >= 16 && i == n;
}

/* A perf script stack frame: TAB, blanks, hex address, blank, something. */
static int perf_frame_line(const unsigned char *s, size_t n)
{
    size_t i = 0, hex = 0;

    if (n < 4 || s[0] != '\t')
        return 0;
    while (i < n && (s[i] == '\t' || s[i] == ' '))
        i++;
    while (i < n && is_hex(s[i]))
        i++, hex++;
    return hex > 0 && i < n && s[i] == ' ';
}

/* A tracefs event line: optional blanks, COMM-PID, optional "( TGID)", "[CPU]", then
 * (flags and) a timestamp "SECS.FRAC:" before the event name. */
static int tracefs_line(const unsigned char *s, size_t n)
{
    size_t i = 0, br;
    const unsigned char *p;

    p = memchr(s, '[', n);
    if (p == NULL)
        return 0;
    br = (size_t)(p - s);
    /* COMM-PID just before the blanks in front of '[' (or of "( TGID)") */
    i = br;
    while (i > 0 && s[i - 1] == ' ')
        i--;
    if (i > 0 && s[i - 1] == ')') {
        while (i > 0 && s[i - 1] != '(')
            i--;
        if (i == 0)
            return 0;
        i--;
        while (i > 0 && s[i - 1] == ' ')
            i--;
    }
    if (i == 0 || !is_digit(s[i - 1]))
        return 0;
    while (i > 0 && is_digit(s[i - 1]))
        i--;
    if (i < 2 || s[i - 1] != '-')
        return 0;
    /* [CPU] with 1-4 digits */
    for (i = br + 1; i < n && is_digit(s[i]); i++)
        ;
    if (i == br + 1 || i > br + 5 || i >= n || s[i] != ']')
        return 0;
    /* a "DIGITS.DIGITS:" token after it */
    for (; i < n; i++) {
        if (is_digit(s[i]) && (i == 0 || s[i - 1] == ' ')) {
            size_t j = i;

            while (j < n && is_digit(s[j]))
                j++;
            if (j < n && s[j] == '.') {
                size_t f = ++j;

                while (j < n && is_digit(s[j]))
                    j++;
                if (j > f && j < n && s[j] == ':')
                    return 1;
            }
        }
    }
    return 0;
}

static int starts(const unsigned char *s, size_t n, const char *p)
{
    size_t l = strlen(p);

    return n >= l && memcmp(s, p, l) == 0;
}

static enum sf_kind sniff_text(const unsigned char *b, size_t n, int complete, char *why,
                               size_t whysz)
{
    size_t off = 0, lines = 0, keylog = 0, frames = 0, tracefs = 0, perfhdr = 0, tracehdr = 0;
    size_t binary = 0;

    for (size_t i = 0; i < n && i < 4096; i++)
        if (b[i] == 0 || (b[i] < 0x20 && b[i] != '\t' && b[i] != '\n' && b[i] != '\r'))
            binary++;
    if (binary > 0) {
        if (why)
            snprintf(why, whysz, "binary data that is no capture, perf.data or compression");
        return SF_KIND_UNKNOWN;
    }
    while (off < n && lines < 2000) {
        const unsigned char *s = b + off, *nl = memchr(s, '\n', n - off);
        size_t len;

        if (nl == NULL && !complete)
            break; /* a cut line says nothing */
        len = nl ? (size_t)(nl - s) : n - off;
        off += len + 1;
        if (len > 0 && s[len - 1] == '\r')
            len--;
        if (len == 0)
            continue;
        if (s[0] == '#') {
            if (starts(s, len, "# ========") || starts(s, len, "# captured on") ||
                starts(s, len, "# perf version") || starts(s, len, "# cmdline :"))
                perfhdr++;
            else if (starts(s, len, "# tracer:") || starts(s, len, "# trace_clock:") ||
                     starts(s, len, "# spantrace:") || starts(s, len, "# entries-in-buffer"))
                tracehdr++;
            continue;
        }
        lines++;
        if (keylog_line(s, len))
            keylog++;
        else if (perf_frame_line(s, len))
            frames++;
        else if (tracefs_line(s, len))
            tracefs++;
    }
    if (perfhdr >= 2 || (frames > 0 && frames * 3 >= lines && frames >= tracefs))
        return SF_KIND_PERF_SCRIPT;
    if (tracehdr > 0 || (tracefs > 0 && tracefs * 2 >= lines))
        return SF_KIND_TRACEFS;
    if (keylog > 0 && keylog * 2 >= lines)
        return SF_KIND_KEYLOG;
    if (lines == 0 && perfhdr == 0)
        return SF_KIND_EMPTY;
    if (why)
        snprintf(why, whysz,
                 "text, but not a key log, perf script or tracefs output (%zu of %zu lines "
                 "matched none)",
                 lines - keylog - frames - tracefs, lines);
    return SF_KIND_UNKNOWN;
}

enum sf_kind sf_sniff_kind(const unsigned char *b, size_t n, int complete, char *why, size_t whysz)
{
    if (why && whysz)
        why[0] = 0;
    if (n == 0)
        return SF_KIND_EMPTY;
    if (n >= 4 && sf_capmagic_is_pcap(b))
        return SF_KIND_PCAP;
    if (n >= 4 && sf_capmagic_is_pcapng(b))
        return SF_KIND_PCAPNG;
    if (n >= 8 && memcmp(b, "PERFILE2", 8) == 0)
        return SF_KIND_PERF_DATA;
    if (n >= 10 && memcmp(b, "\027\010Dtracing", 10) == 0)
        return SF_KIND_TRACE_DAT;
    return sniff_text(b, n, complete, why, whysz);
}

const char *sf_kind_name(enum sf_kind k)
{
    switch (k) {
    case SF_KIND_EMPTY:
        return "empty";
    case SF_KIND_PCAP:
        return "pcap";
    case SF_KIND_PCAPNG:
        return "pcapng";
    case SF_KIND_KEYLOG:
        return "keylog";
    case SF_KIND_PERF_SCRIPT:
        return "perf-script";
    case SF_KIND_PERF_DATA:
        return "perf.data";
    case SF_KIND_TRACEFS:
        return "tracefs";
    case SF_KIND_TRACE_DAT:
        return "trace.dat";
    case SF_KIND_UNKNOWN:
        break;
    }
    return "unknown";
}

const char *sf_comp_name(enum sf_comp c)
{
    switch (c) {
    case SF_COMP_GZIP:
        return "gzip";
    case SF_COMP_XZ:
        return "xz";
    case SF_COMP_ZSTD:
        return "zstd";
    case SF_COMP_NONE:
        break;
    }
    return "none";
}
