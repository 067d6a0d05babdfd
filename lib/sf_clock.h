/* sf_clock.h - clock domains and exact timestamp parsing.
 *
 * Every timestamp in spanfold is an integer count of nanoseconds in the clock of
 * the source that recorded it; the clock is named per source (sources.clock) and
 * clock_fits relates them.  Text timestamps ("6544038.708352") are parsed exactly,
 * without going through a double.
 */
#ifndef SF_CLOCK_H
#define SF_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* Clock domain names used in sources.clock and clock_fits. */
#define SF_CLOCK_REALTIME  "realtime"  /* pcap: CLOCK_REALTIME */
#define SF_CLOCK_MONOTONIC "monotonic" /* perf -k mono, tracefs mono, bpf_ktime_get_ns */
#define SF_CLOCK_PERF      "perf"      /* perf's default clock, tracefs "perf" */
#define SF_CLOCK_UNKNOWN   "unknown"

/* Map a tracefs trace_clock name ("mono", "global", "local", "x86-tsc", ...) or a
 * perf clockid name ("monotonic", "CLOCK_MONOTONIC", ...) to a spanfold clock
 * domain name (static string).  Unknown names give SF_CLOCK_UNKNOWN. */
const char *sf_clock_domain(const char *name, size_t n);

/* Parse "SEC[.FRAC]" (FRAC up to 9 digits, more are an error) into nanoseconds.
 * Returns 0 or SF_E_MALFORMED (empty, non-digit, overflow). */
int sf_clock_parse_ts(const char *s, size_t n, int64_t *ns);

/* Format ns as "SEC.NNNNNNNNN" into out (at least 32 bytes).  Returns out. */
char *sf_clock_format_ts(char *out, size_t outsz, int64_t ns);

#endif
