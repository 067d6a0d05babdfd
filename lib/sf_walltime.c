/* sf_walltime.c - wall-clock times as people write them (see sf_walltime.h).
 *
 * Civil dates in fixed zones use H. Hinnant's days_from_civil (proleptic Gregorian,
 * no time_t, no TZ); only SF_WALLTIME_LOCAL goes through mktime/localtime_r.
 */
#include "sf_walltime.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define NS_PER_S 1000000000LL
#define SECS_DAY 86400LL

int sf_walltime_decimal(const char *s, size_t n, int64_t mult, int64_t *out)
{
    size_t i = 0;
    int64_t ip = 0, frac = 0, scale = 1, fpart;

    if (n == 0 || s[0] < '0' || s[0] > '9' || mult < 0)
        return SF_E_MALFORMED;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        if (ip > (INT64_MAX - (s[i] - '0')) / 10)
            return SF_E_MALFORMED;
        ip = ip * 10 + (s[i] - '0');
    }
    if (i < n && s[i] == '.') {
        size_t d0 = ++i;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
            if (i - d0 < 9) {
                frac = frac * 10 + (s[i] - '0');
                scale *= 10;
            }
        if (i == d0)
            return SF_E_MALFORMED;
    }
    if (i != n || (mult > 0 && ip > INT64_MAX / mult))
        return SF_E_MALFORMED;
    /* frac / scale < 1, so frac * mult / scale < mult: no overflow in 128 bits */
    fpart = (int64_t)((__int128)frac * mult / scale);
    if (ip * mult > INT64_MAX - fpart)
        return SF_E_MALFORMED;
    *out = ip * mult + fpart;
    return 0;
}

int sf_walltime_duration(const char *s, size_t n, int64_t *ns)
{
    static const struct {
        const char *name;
        int64_t ns;
    } units[] = {{"ns", 1},       {"us", 1000},         {"ms", 1000000},
                 {"s", NS_PER_S}, {"m", 60 * NS_PER_S}, {"h", 3600 * NS_PER_S}};
    size_t k = n;

    while (k > 0 && ((s[k - 1] >= 'a' && s[k - 1] <= 'z') || (s[k - 1] >= 'A' && s[k - 1] <= 'Z')))
        k--;
    if (k == n)
        return SF_E_USAGE;
    for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++)
        if (strlen(units[u].name) == n - k && strncmp(units[u].name, s + k, n - k) == 0)
            return sf_walltime_decimal(s, k, units[u].ns, ns);
    return SF_E_USAGE;
}

/* Days since 1970-01-01 of a proleptic Gregorian date. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
    int64_t era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* k digits at s[at..] (inside n) into *v.  Returns 0 or -1. */
static int digits(const char *s, size_t n, size_t at, size_t k, int *v)
{
    *v = 0;
    if (at + k > n)
        return -1;
    for (size_t i = at; i < at + k; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        *v = *v * 10 + (s[i] - '0');
    }
    return 0;
}

/* "Z", "+HH:MM", "+HHMM", "+HH": the whole of s[at..n).  Returns 0 or -1. */
static int parse_zone(const char *s, size_t n, size_t at, int32_t *zone)
{
    int hh, mm = 0;
    size_t k;

    if (at + 1 == n && (s[at] == 'Z' || s[at] == 'z')) {
        *zone = 0;
        return 0;
    }
    if (at >= n || (s[at] != '+' && s[at] != '-') || digits(s, n, at + 1, 2, &hh))
        return -1;
    k = at + 3;
    if (k < n && s[k] == ':')
        k++;
    if (k < n && digits(s, n, k, 2, &mm) == 0)
        k += 2;
    if (k != n || hh > 23 || mm > 59)
        return -1;
    *zone = (s[at] == '-' ? -1 : 1) * (hh * 60 + mm);
    return 0;
}

int sf_walltime_zone(const char *tz, int32_t *zone)
{
    if (tz == NULL || strcmp(tz, "UTC") == 0 || strcmp(tz, "utc") == 0 || strcmp(tz, "Z") == 0) {
        *zone = 0;
        return 0;
    }
    if (strcmp(tz, "local") == 0) {
        *zone = SF_WALLTIME_LOCAL;
        return 0;
    }
    return parse_zone(tz, strlen(tz), 0, zone) < 0 ? SF_E_USAGE : 0;
}

/* HH:MM[:SS[.frac]] at s[at..n): nanoseconds into the day; *end after it. */
static int parse_tod(const char *s, size_t n, size_t at, int64_t *tod, size_t *end)
{
    int hh, mm, ss = 0;
    size_t k = at + 5, f;
    int64_t frac = 0;

    if (k > n || digits(s, n, at, 2, &hh) || s[at + 2] != ':' || digits(s, n, at + 3, 2, &mm))
        return -1;
    if (k < n && s[k] == ':') {
        if (digits(s, n, k + 1, 2, &ss))
            return -1;
        k += 3;
        if (k < n && s[k] == '.') {
            for (f = k + 1; f < n && s[f] >= '0' && s[f] <= '9'; f++)
                ;
            if (f == k + 1 || f - k - 1 > 9)
                return -1;
            sf_walltime_decimal(s + k + 1, f - k - 1, 1, &frac);
            for (size_t z = f - k - 1; z < 9; z++)
                frac *= 10;
            k = f;
        }
    }
    if (hh > 23 || mm > 59 || ss > 60)
        return -1;
    *tod = ((int64_t)hh * 3600 + mm * 60 + ss) * NS_PER_S + frac;
    *end = k;
    return 0;
}

static int bad(struct sf_err *err, size_t off, const char *msg)
{
    sf_err_set(err, SF_E_USAGE, off, "%s", msg);
    if (err)
        err->col = (uint32_t)off + 1;
    return SF_E_USAGE;
}

int sf_walltime_parse(const char *s, size_t n, int32_t zone, struct sf_walltime *w,
                      struct sf_err *err)
{
    size_t k = 0;
    int r;

    memset(w, 0, sizeof(*w));
    w->zone_min = zone;
    if (n == 0)
        return 0;
    if (s[0] == '+') {
        w->kind = SF_WALLTIME_REL;
        if ((r = sf_walltime_duration(s + 1, n - 1, &w->rel_ns)) < 0)
            return bad(err, 0,
                       r == SF_E_USAGE ? "a relative time needs a unit (+10s)"
                                       : "bad relative time (+10s, +1.5m)");
        return 0;
    }
    w->kind = SF_WALLTIME_TOD;
    if (n >= 10 && s[4] == '-') {
        if (digits(s, n, 0, 4, &w->y) || digits(s, n, 5, 2, &w->mo) || s[7] != '-' ||
            digits(s, n, 8, 2, &w->d) || w->mo < 1 || w->mo > 12 || w->d < 1 || w->d > 31 ||
            n < 11 || (s[10] != 'T' && s[10] != ' '))
            return bad(err, 0, "bad date (YYYY-MM-DDTHH:MM:SS)");
        /* nanoseconds since 1970 in 64 bits reach from 1677-09-21 to 2262-04-11 */
        if (w->y < 1678 || w->y > 2261)
            return bad(err, 0, "date out of range (years 1678 to 2261)");
        w->kind = SF_WALLTIME_DATE;
        k = 11;
    }
    if (parse_tod(s, n, k, &w->tod_ns, &k) < 0)
        return bad(err, k, "bad time of day (HH:MM, HH:MM:SS or HH:MM:SS.frac)");
    if (k < n && parse_zone(s, n, k, &w->zone_min) < 0)
        return bad(err, k, "bad time zone (Z, +HH:MM or -HH:MM)");
    return 0;
}

/* Seconds since the epoch of a civil date and a second of its day in zone. */
static int64_t civil_to_epoch(int y, int mo, int d, int64_t tod_s, int32_t zone)
{
    if (zone == SF_WALLTIME_LOCAL) {
        struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_isdst = -1};
        tm.tm_sec = (int)tod_s;
        return (int64_t)mktime(&tm);
    }
    return days_from_civil(y, mo, d) * SECS_DAY + tod_s - (int64_t)zone * 60;
}

/* The civil time of epoch second t in zone; *gmtoff its offset in seconds. */
static void epoch_to_civil(int64_t t, int32_t zone, struct tm *tm, long *gmtoff)
{
    time_t tt = (time_t)(zone == SF_WALLTIME_LOCAL ? t : t + (int64_t)zone * 60);

    if (zone == SF_WALLTIME_LOCAL) {
        localtime_r(&tt, tm);
        *gmtoff = tm->tm_gmtoff;
    } else {
        gmtime_r(&tt, tm);
        *gmtoff = (long)zone * 60;
    }
}

static int64_t floor_div(int64_t a, int64_t b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

int64_t sf_walltime_ns(const struct sf_walltime *w, int64_t start_ns)
{
    int64_t sub = w->tod_ns % NS_PER_S, sec = w->tod_ns / NS_PER_S, t;
    struct tm tm;
    long off;

    if (w->kind == SF_WALLTIME_REL || w->kind == SF_WALLTIME_OPEN)
        return start_ns + w->rel_ns;
    if (w->kind == SF_WALLTIME_DATE)
        return civil_to_epoch(w->y, w->mo, w->d, sec, w->zone_min) * NS_PER_S + sub;
    epoch_to_civil(floor_div(start_ns, NS_PER_S), w->zone_min, &tm, &off);
    t = civil_to_epoch(tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, sec, w->zone_min) * NS_PER_S +
        sub;
    if (t < start_ns - 12 * 3600 * NS_PER_S)
        t = civil_to_epoch(tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday + 1, sec, w->zone_min) *
                NS_PER_S +
            sub;
    return t;
}

int sf_walltime_format(int64_t ns, int32_t zone, char *out, size_t outsz)
{
    int64_t sec = floor_div(ns, NS_PER_S);
    int ms = (int)((ns - sec * NS_PER_S) / 1000000);
    struct tm tm;
    long off;
    char z[32] = "Z";

    epoch_to_civil(sec, zone, &tm, &off);
    if (off != 0)
        snprintf(z, sizeof(z), "%c%02ld:%02ld", off < 0 ? '-' : '+', (off < 0 ? -off : off) / 3600,
                 (off < 0 ? -off : off) / 60 % 60);
    return snprintf(out, outsz, "%04d-%02d-%02dT%02d:%02d:%02d.%03d%s", tm.tm_year + 1900,
                    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms, z);
}
