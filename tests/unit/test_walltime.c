/* test_walltime.c - lib/sf_walltime: exact decimals and durations, zones, times as
 * written, their place on CLOCK_REALTIME, ISO 8601 output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sf_walltime.h"
#include "tap.h"

#define S  1000000000LL
#define T0 1796126400LL /* 2026-12-01T12:00:00Z */

static int64_t dur(const char *s)
{
    int64_t v = -1;
    int rc = sf_walltime_duration(s, strlen(s), &v);

    return rc < 0 ? rc : v;
}

/* s placed against start, or the error's column as -column. */
static int64_t at(const char *s, int32_t zone, int64_t start)
{
    struct sf_walltime w;
    struct sf_err err;

    sf_err_clear(&err);
    if (sf_walltime_parse(s, strlen(s), zone, &w, &err) < 0)
        return -(int64_t)err.col;
    return sf_walltime_ns(&w, start);
}

static const char *fmt(int64_t ns, int32_t zone)
{
    static char out[64];

    sf_walltime_format(ns, zone, out, sizeof(out));
    return out;
}

int main(void)
{
    int64_t v = 0;
    int32_t z = 1;

    TAP_EQ_INT(dur("1.5s"), 1500000000, "1.5s");
    TAP_EQ_INT(dur("120ms"), 120000000, "120ms");
    TAP_EQ_INT(dur("0.000000001s"), 1, "a nanosecond written in seconds");
    TAP_EQ_INT(dur("1.0000000019s"), 1000000001, "fraction digits past the ninth dropped");
    TAP_EQ_INT(dur("2h"), 7200 * S, "2h");
    TAP_EQ_INT(dur("1.25m"), 75 * S, "1.25m");
    TAP_EQ_INT(dur("3us") + dur("4ns"), 3004, "us and ns");
    TAP_EQ_INT(dur("120"), SF_E_USAGE, "no unit");
    TAP_EQ_INT(dur("120parsecs"), SF_E_USAGE, "an unknown unit");
    TAP_EQ_INT(dur("1e3s"), SF_E_MALFORMED, "no exponents");
    TAP_EQ_INT(dur(".5s"), SF_E_MALFORMED, "a leading digit is needed");
    TAP_EQ_INT(dur("5.s"), SF_E_MALFORMED, "so is one after the point");
    TAP_EQ_INT(dur("9223372037s"), SF_E_MALFORMED, "overflow");
    TAP_EQ_INT(sf_walltime_decimal("9223372036854775807", 19, 1, &v), 0, "INT64_MAX");
    TAP_EQ_INT(v, INT64_MAX, "is exact");
    TAP_EQ_INT(sf_walltime_decimal("9223372036854775807.5", 21, 2, &v), SF_E_MALFORMED,
               "its double overflows");

    TAP_EQ_INT(sf_walltime_zone(NULL, &z) == 0 && z == 0, 1, "no zone is UTC");
    TAP_EQ_INT(sf_walltime_zone("local", &z) == 0 && z == SF_WALLTIME_LOCAL, 1, "local");
    TAP_EQ_INT(sf_walltime_zone("-05:30", &z) == 0 && z == -330, 1, "-05:30");
    TAP_EQ_INT(sf_walltime_zone("+0100", &z) == 0 && z == 60, 1, "+0100");
    TAP_EQ_INT(sf_walltime_zone("Europe/Paris", &z), SF_E_USAGE, "zone names are not read");
    TAP_EQ_INT(sf_walltime_zone("+24:00", &z), SF_E_USAGE, "+24:00");

    /* dates whose nanoseconds since 1970 do not fit in 64 bits are refused, not wrapped */
    TAP_EQ_INT(at("2596-12-06T00:00:00Z", 0, T0 * S), -1, "a date past 2262: refused at column 1");
    TAP_EQ_INT(at("1677-01-01T00:00:00Z", 0, T0 * S), -1, "a date before 1678: refused");
    TAP_OK(at("2261-12-31T23:59:59Z", 0, T0 * S) > 0, "2261-12-31 fits");
    TAP_OK(at("1678-01-01T00:00:00Z", 0, T0 * S) < 0 && at("1678-01-01T00:00:00Z", 0, T0 * S) != -1,
           "1678-01-01 fits (before 1970: negative)");

    /* the start: 2026-12-01T12:00:00.5Z */
    TAP_EQ_INT(at("12:03:10", 0, T0 * S + S / 2), (T0 + 190) * S, "a time of day, UTC");
    TAP_EQ_INT(at("12:03:10.25", 0, T0 * S), (T0 + 190) * S + S / 4, "with a fraction");
    TAP_EQ_INT(at("13:03", 60, T0 * S), (T0 + 180) * S, "in the caller's zone (+01:00)");
    TAP_EQ_INT(at("07:03-05:00", 60, T0 * S), (T0 + 180) * S, "its own zone wins");
    TAP_EQ_INT(at("12:03Z", 60, T0 * S), (T0 + 180) * S, "Z");
    TAP_EQ_INT(at("00:00:10", 0, (T0 + 43190) * S), (T0 + 43210) * S,
               "just after midnight, from a start just before it: the next day");
    TAP_EQ_INT(at("2026-12-01T12:00:01", 0, 0), (T0 + 1) * S, "a full date");
    TAP_EQ_INT(at("2026-12-01 12:00:01.5+01:00", 0, 0), (T0 + 1 - 3600) * S + S / 2,
               "a space for the T, an offset");
    TAP_EQ_INT(at("2024-02-29T00:00:00", 0, 0), 1709164800 * S, "a leap day");
    TAP_EQ_INT(at("+10s", 0, T0 * S), (T0 + 10) * S, "+10s");
    TAP_EQ_INT(at("", 0, T0 * S), T0 * S, "empty is open");
    TAP_EQ_INT(at("+10", 0, 0), -1, "+10: no unit, column 1");
    TAP_EQ_INT(at("12:3", 0, 0), -1, "12:3");
    TAP_EQ_INT(at("24:00", 0, 0), -1, "24:00");
    TAP_EQ_INT(at("12:00:00.", 0, 0), -1, "a point without digits");
    TAP_EQ_INT(at("12:00:00.1234567891", 0, 0), -1, "ten fraction digits");
    TAP_EQ_INT(at("12:00:00 UTC", 0, 0), -9, "a zone name: column 9");
    TAP_EQ_INT(at("2026-13-01T00:00", 0, 0), -1, "month 13");
    TAP_EQ_INT(at("2026-12-01X00:00", 0, 0), -1, "no T");
    TAP_EQ_INT(at("2026-12-01T00:00+1:00", 0, 0), -17, "+1:00: column 17");

    TAP_EQ_STR(fmt((T0 + 194) * S + 123456789, 0), "2026-12-01T12:03:14.123Z", "format UTC");
    TAP_EQ_STR(fmt((T0 + 194) * S, 90), "2026-12-01T13:33:14.000+01:30", "format +01:30");
    TAP_EQ_STR(fmt(-1, 0), "1969-12-31T23:59:59.999Z", "before the epoch");
    setenv("TZ", "CET-1CEST,M3.5.0,M10.5.0/3", 1);
    tzset();
    TAP_EQ_STR(fmt(T0 * S, SF_WALLTIME_LOCAL), "2026-12-01T13:00:00.000+01:00", "local, winter");
    TAP_EQ_STR(fmt(1782907200 * S, SF_WALLTIME_LOCAL), "2026-07-01T14:00:00.000+02:00",
               "local, summer");
    TAP_EQ_INT(at("13:00", SF_WALLTIME_LOCAL, T0 * S), T0 * S, "a local time of day");
    TAP_EQ_INT(at("2026-07-01T14:00:00", SF_WALLTIME_LOCAL, 0), 1782907200 * S,
               "a local date in summer time");
    return tap_done();
}
