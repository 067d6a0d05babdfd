/* sf_clock.c - clock domains and exact timestamps (see sf_clock.h). */
#include "sf_clock.h"

#include <stdio.h>
#include <string.h>

#include "sf_err.h"

static int eq(const char *s, size_t n, const char *lit)
{
    return strlen(lit) == n && strncmp(s, lit, n) == 0;
}

const char *sf_clock_domain(const char *s, size_t n)
{
    if (eq(s, n, "mono") || eq(s, n, "monotonic") || eq(s, n, "CLOCK_MONOTONIC") ||
        eq(s, n, "monotonic (1)"))
        return SF_CLOCK_MONOTONIC;
    if (eq(s, n, "realtime") || eq(s, n, "CLOCK_REALTIME") || eq(s, n, "realtime (0)"))
        return SF_CLOCK_REALTIME;
    if (eq(s, n, "perf"))
        return SF_CLOCK_PERF;
    if (eq(s, n, "local"))
        return "local";
    if (eq(s, n, "global"))
        return "global";
    if (eq(s, n, "boot") || eq(s, n, "CLOCK_BOOTTIME"))
        return "boot";
    if (eq(s, n, "tai") || eq(s, n, "CLOCK_TAI"))
        return "tai";
    if (eq(s, n, "mono_raw") || eq(s, n, "CLOCK_MONOTONIC_RAW"))
        return "mono_raw";
    if (eq(s, n, "counter"))
        return "counter";
    if (eq(s, n, "uptime"))
        return "uptime";
    if (eq(s, n, "x86-tsc"))
        return "x86-tsc";
    return SF_CLOCK_UNKNOWN;
}

int sf_clock_parse_ts(const char *s, size_t n, int64_t *ns)
{
    int64_t sec = 0, frac = 0;
    size_t i = 0, fd = 0;

    if (n == 0)
        return SF_E_MALFORMED;
    for (; i < n && s[i] != '.'; i++) {
        if (s[i] < '0' || s[i] > '9' || sec > (INT64_MAX / 1000000000 - 9) / 10)
            return SF_E_MALFORMED;
        sec = sec * 10 + (s[i] - '0');
    }
    if (i == 0)
        return SF_E_MALFORMED;
    if (i < n) {
        for (i++; i < n; i++, fd++) {
            if (s[i] < '0' || s[i] > '9' || fd >= 9)
                return SF_E_MALFORMED;
            frac = frac * 10 + (s[i] - '0');
        }
        if (fd == 0)
            return SF_E_MALFORMED;
        for (; fd < 9; fd++)
            frac *= 10;
    }
    *ns = sec * 1000000000 + frac;
    return 0;
}

char *sf_clock_format_ts(char *out, size_t outsz, int64_t ns)
{
    const char *sign = ns < 0 ? "-" : "";
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;

    snprintf(out, outsz, "%s%llu.%09llu", sign, (unsigned long long)(a / 1000000000),
             (unsigned long long)(a % 1000000000));
    return out;
}
