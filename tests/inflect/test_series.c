/* test_series.c - CSV/NDJSON series: ISO-8601 and numeric time, empty cells,
 * --column, quoting, and errors that name the line and column. */
#include <math.h>
#include <string.h>

#include "../../inflect/series.h"
#include "tap.h"

static int parse(struct inflect_table *t, const char *text, const char *col, struct sf_err *e)
{
    sf_err_clear(e);
    return series_parse(t, text, strlen(text), col, e);
}

static void test_numeric(void)
{
    struct inflect_table t;
    struct sf_err e;

    TAP_EQ_INT(parse(&t, "t,a,b\n0,1.5,10\n1,,11\n2,3e0,\n\n3,4,13\n", NULL, &e), 0,
               "numeric CSV parses");
    TAP_EQ_INT(t.nseries, 2, "two value columns");
    TAP_EQ_STR(t.s[0].name, "a", "first column name");
    TAP_EQ_INT(t.rows, 4, "4 data rows (blank line skipped)");
    TAP_EQ_INT(t.s[0].n, 3, "empty cell is missing: a has 3 values");
    TAP_EQ_INT(t.s[0].row[1], 2, "a's second value is row 2");
    TAP_OK(t.s[0].v[1] == 3.0 && t.s[0].t[2] == 3.0, "values and times");
    TAP_EQ_INT(t.s[1].n, 3, "b has 3 values");
    TAP_OK(t.s[1].tlabel == NULL, "numeric time keeps no labels");
    series_table_free(&t);
}

static void test_iso_column(void)
{
    struct inflect_table t;
    struct sf_err e;
    double s;

    TAP_EQ_INT(parse(&t,
                     "time,p99,p50\n2024-05-01T12:00:00Z,10,5\n"
                     "2024-05-01T12:00:10Z,NA,6\n\"2024-05-01 12:00:20+01:00\",12,7\n",
                     "p99", &e),
               0, "ISO-8601 CSV with --column");
    TAP_EQ_INT(t.nseries, 1, "--column keeps one series");
    TAP_EQ_STR(t.s[0].name, "p99", "the chosen column");
    TAP_EQ_INT(t.s[0].n, 2, "NA is missing");
    TAP_OK(t.s[0].t[0] == 1714564800.0, "2024-05-01T12:00:00Z = 1714564800 (%.1f)", t.s[0].t[0]);
    TAP_OK(t.s[0].t[1] == 1714564800.0 + 20 - 3600, "offset +01:00 applied");
    TAP_EQ_STR(t.s[0].tlabel[0], "2024-05-01T12:00:00Z", "ISO label kept for the JSON");
    series_table_free(&t);
    TAP_EQ_INT(series_parse_iso8601("1970-01-01", 10, &s), 0, "date only");
    TAP_OK(s == 0, "epoch");
    TAP_EQ_INT(series_parse_iso8601("2000-03", 7, &s), 0, "year-month");
    TAP_OK(s == 951868800.0, "2000-03 = 951868800");
    TAP_EQ_INT(series_parse_iso8601("2024-02-29T23:59:59.25", 22, &s), 0, "fractional seconds");
    TAP_OK(fabs(s - 1709251199.25) < 1e-6, "leap day value");
    TAP_EQ_INT(series_parse_iso8601("2024-13-01", 10, &s), SF_E_MALFORMED, "month 13");
    TAP_EQ_INT(series_parse_iso8601("2024-01-01T1:00", 15, &s), SF_E_MALFORMED, "1-digit hour");
    TAP_EQ_INT(series_parse_iso8601("2024-01-01x", 11, &s), SF_E_MALFORMED, "trailing junk");
}

static void test_single_and_quotes(void)
{
    struct inflect_table t;
    struct sf_err e;

    TAP_EQ_INT(parse(&t, "\xef\xbb\xbft,\"v\"\r\n1,\"2\"\r\n2,None\r\n3,N/A\r\n4,5\r\n", NULL, &e),
               0, "BOM, CRLF, quoted last field, None and N/A");
    TAP_OK(t.nseries == 1 && t.s[0].n == 2 && t.s[0].v[1] == 5, "two values, None/N/A missing");
    series_table_free(&t);
    TAP_EQ_INT(parse(&t, "value\n1\n2\n3\n", NULL, &e), 0, "one column: values only");
    TAP_OK(t.nseries == 1 && t.s[0].n == 3 && t.s[0].t[2] == 2, "time is the row index");
    series_table_free(&t);
    TAP_EQ_INT(parse(&t, "t,\"lat, ms\",\"say \"\"x\"\"\"\n1,\" 2\",3\n", NULL, &e), 0,
               "quoted names and cells");
    TAP_EQ_STR(t.nseries == 2 ? t.s[0].name : "", "lat, ms", "comma inside quotes");
    TAP_EQ_STR(t.nseries == 2 ? t.s[1].name : "", "say \"x\"", "doubled quotes");
    series_table_free(&t);
}

static void test_ndjson(void)
{
    struct inflect_table t;
    struct sf_err e;

    TAP_EQ_INT(parse(&t,
                     "{\"time\": 1, \"p99\": 10, \"svc\": \"a\"}\n{\"time\": 2, \"p99\": null}\n"
                     "{\"p99\": 12.5, \"time\": 3, \"extra\": 1}\n",
                     NULL, &e),
               0, "NDJSON");
    TAP_EQ_INT(t.nseries, 1, "numeric keys of the first object");
    TAP_OK(t.s[0].n == 2 && t.s[0].v[1] == 12.5 && t.s[0].t[1] == 3, "null skipped, order free");
    series_table_free(&t);
    TAP_EQ_INT(
        parse(&t, "{\"t\": \"2024-05-01T00:00:00Z\", \"x\": 1}\n{\"t\": 5, \"x\": 2}\n", NULL, &e),
        SF_E_MALFORMED, "numeric time after ISO time");
    TAP_EQ_INT(parse(&t, "{\"t\": 1, \"x\": 1}\n{\"x\": 2, \"x\": 3}\n", NULL, &e), SF_E_MALFORMED,
               "duplicate key (a fuzzer found it)");
    TAP_OK(e.unit_no == 2 && e.col == 10, "duplicate key at 2:10 (%llu:%u)",
           (unsigned long long)e.unit_no, e.col);
    TAP_EQ_INT(parse(&t, "{\"x\": {\"y\": 1}}\n", NULL, &e), SF_E_UNSUPPORTED, "nested object");
    TAP_EQ_INT(e.col, 7, "nested: column 7");
}

static void test_errors(void)
{
    struct inflect_table t;
    struct sf_err e;
    char msg[300];

    TAP_EQ_INT(parse(&t, "t,a\n1,2\n2,x3\n", NULL, &e), SF_E_MALFORMED, "junk value");
    TAP_OK(e.unit_no == 3 && e.col == 3, "junk value at line 3 col 3 (%llu:%u)",
           (unsigned long long)e.unit_no, e.col);
    sf_err_format(&e, "inflect", "in.csv", msg, sizeof(msg));
    TAP_EQ_STR(msg, "inflect: in.csv:3:3: value is not a number", "file:line:col message");
    TAP_EQ_INT(parse(&t, "t,a\n1,2,3\n", NULL, &e), SF_E_MALFORMED, "too many cells");
    TAP_EQ_INT(parse(&t, "t,a\n1\n", NULL, &e), SF_E_MALFORMED, "too few cells");
    TAP_EQ_INT(parse(&t, "t,a\n,2\n", NULL, &e), SF_E_MALFORMED, "empty time");
    TAP_EQ_INT(parse(&t, "t,a\nyesterday,2\n", NULL, &e), SF_E_MALFORMED, "bad time");
    TAP_EQ_INT(parse(&t, "t,a\n1,\"2\n", NULL, &e), SF_E_MALFORMED, "unterminated quote");
    TAP_EQ_INT(parse(&t, "t,a\n1,2\n", "b", &e), SF_E_USAGE, "unknown --column");
    TAP_EQ_INT(parse(&t, "", NULL, &e), SF_E_MALFORMED, "empty input");
    TAP_EQ_INT(parse(&t, "t,a\n1,1e999\n", NULL, &e), SF_E_MALFORMED, "overflowing number");
    TAP_EQ_INT(parse(&t, "t,a\n1,inf\n", NULL, &e), SF_E_MALFORMED, "infinite value");
    TAP_EQ_INT(series_parse(&t, "t,a\n1,\0002\n", 9, NULL, &e), SF_E_MALFORMED, "NUL byte");
}

int main(void)
{
    test_numeric();
    test_iso_column();
    test_single_and_quotes();
    test_ndjson();
    test_errors();
    return tap_done();
}
