/* sf_opt.c - shared command-line helpers (see sf_opt.h). */
#include "sf_opt.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sf_err.h"

#ifndef SF_VERSION
#define SF_VERSION "0.1.0"
#endif

const char *sf_version(void)
{
    return SF_VERSION;
}

void sf_opt_print_version(FILE *f, const char *tool)
{
    fprintf(f, "%s (spanfold) %s\n", tool, SF_VERSION);
}

int sf_opt_i64(const char *s, int64_t min, int64_t max, int64_t *v)
{
    char *end;
    long long x;

    if (s == NULL || *s == 0)
        return SF_E_USAGE;
    errno = 0;
    x = strtoll(s, &end, 10);
    if (errno || *end || x < min || x > max)
        return SF_E_USAGE;
    *v = x;
    return 0;
}

int sf_opt_double(const char *s, double *v)
{
    char *end;
    double x;

    if (s == NULL || *s == 0)
        return SF_E_USAGE;
    errno = 0;
    x = strtod(s, &end);
    if (errno || *end || !isfinite(x))
        return SF_E_USAGE;
    *v = x;
    return 0;
}

int sf_opt_duration_ns(const char *s, int64_t *ns)
{
    static const struct {
        const char *suffix;
        double mult;
    } units[] = {{"ns", 1},   {"us", 1e3},   {"ms", 1e6}, {"s", 1e9},
                 {"m", 60e9}, {"h", 3600e9}, {"", 1e9}};
    char *end;
    double x;

    if (s == NULL || *s == 0)
        return SF_E_USAGE;
    errno = 0;
    x = strtod(s, &end);
    if (errno || end == s || !isfinite(x) || x < 0)
        return SF_E_USAGE;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(end, units[i].suffix) == 0) {
            double v = x * units[i].mult;
            if (v > 9.2e18)
                return SF_E_USAGE;
            *ns = (int64_t)llround(v);
            return 0;
        }
    }
    return SF_E_USAGE;
}

int sf_opt_want_progress(int quiet)
{
    const char *ci = getenv("CI");

    if (quiet || (ci && *ci))
        return 0;
    return isatty(STDERR_FILENO);
}
