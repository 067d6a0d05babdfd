/* sf_walltime.h - wall-clock times as people write them, and exact durations.
 *
 *   +10s  +1.5m                      after a start (a capture's first packet)
 *   12:03:10  12:03:10.25            a time of day, on the start's day
 *   2026-12-01T12:03:10[.frac]       ISO 8601 (a space for the T is fine)
 *   ... followed by Z, +HH:MM, -HH:MM, +HHMM or +HH, else in the caller's zone
 *
 * Times are nanoseconds since the epoch on CLOCK_REALTIME (what pcap timestamps
 * are); zones are minutes east of UTC, or SF_WALLTIME_LOCAL for the TZ environment
 * (through mktime/localtime_r).  Numbers are parsed exactly, never through a double.
 */
#ifndef SF_WALLTIME_H
#define SF_WALLTIME_H

#include <stddef.h>
#include <stdint.h>

#include "sf_err.h"

#define SF_WALLTIME_LOCAL INT32_MIN

enum sf_walltime_kind {
    SF_WALLTIME_OPEN, /* nothing written */
    SF_WALLTIME_REL,  /* +DURATION */
    SF_WALLTIME_TOD,  /* a time of day */
    SF_WALLTIME_DATE  /* a date and a time of day */
};

/* A time as written, not yet placed. */
struct sf_walltime {
    enum sf_walltime_kind kind;
    int64_t rel_ns;   /* SF_WALLTIME_REL */
    int y, mo, d;     /* SF_WALLTIME_DATE */
    int64_t tod_ns;   /* SF_WALLTIME_TOD, _DATE: nanoseconds into the day */
    int32_t zone_min; /* the zone written, or the caller's */
};

/* DIGITS[.DIGITS] in s[0..n) times mult (>= 0), exactly; fraction digits past the
 * ninth are dropped.  Returns 0, or SF_E_MALFORMED (not a number, overflow). */
int sf_walltime_decimal(const char *s, size_t n, int64_t mult, int64_t *out);

/* A duration with its unit ("120ms", "1.5s"; ns us ms s m h) into ns.  Returns 0,
 * SF_E_MALFORMED (bad number) or SF_E_USAGE (no unit, or an unknown one). */
int sf_walltime_duration(const char *s, size_t n, int64_t *ns);

/* A zone name: NULL, "UTC", "utc" or "Z" (0), "local" (SF_WALLTIME_LOCAL), "+HH:MM".
 * Returns 0 or SF_E_USAGE. */
int sf_walltime_zone(const char *tz, int32_t *zone);

/* Parse s[0..n) (empty: SF_WALLTIME_OPEN) into w, in zone unless the text names one.
 * Returns 0, or SF_E_USAGE with err->off / err->col at the bad byte of s. */
int sf_walltime_parse(const char *s, size_t n, int32_t zone, struct sf_walltime *w,
                      struct sf_err *err);

/* Place w on CLOCK_REALTIME: relative times and times of day are taken from start_ns
 * (a time of day falls on start's day in w's zone, or on the next day when it is more
 * than 12 h before start, so that 23:59:50..00:00:10 crosses midnight). */
int64_t sf_walltime_ns(const struct sf_walltime *w, int64_t start_ns);

/* ns as ISO 8601 in zone with milliseconds: "2026-12-01T12:03:14.123Z" or
 * "...14.123+01:00".  Always NUL-terminates; returns the length (snprintf semantics). */
int sf_walltime_format(int64_t ns, int32_t zone, char *out, size_t outsz);

#endif
