/* test_select.c - lib/sf_select: the selection language, the SQL it emits, the spans it
 * selects on a small database built here, its errors (with their columns), --during. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sf_buf.h"
#include "sf_db.h"
#include "sf_select.h"
#include "tap.h"

/* 2026-12-01T12:00:00Z */
#define T0 1796126400000000000LL

/* Spans 1..20: request i starts at T0 + i s and lasts i * 10 ms; odd ones are
 * GET /api/search?q=i, even ones POST /api/checkout; every 5th is a 503, span 7 a
 * 404; span 2 travelled as 0-RTT; odd spans are sampled.  Span 21 is a gRPC call of
 * 1 ms, span 22 has no response (partial), span 23 comes from a source on the
 * monotonic clock, placed on realtime by a clock fit. */
static const char fixture[] =
    "INSERT INTO sources(id, kind, path, clock, tool, tool_version, status) VALUES"
    " (1, 'pcap', 'a.pcap', 'realtime', 't', '0', 'complete'),"
    " (2, 'pcap', 'b.pcap', 'monotonic', 't', '0', 'complete');"
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20)"
    " INSERT INTO spans(id, source_id, proto, method, authority, path, status, req_start_ns,"
    "  resp_end_ns, early_data, sampled, span_id, trace_id)"
    " SELECT i, 1, 'http/1.1', CASE WHEN i % 2 THEN 'GET' ELSE 'POST' END, 'shop',"
    "  CASE WHEN i % 2 THEN '/api/search?q=' || i ELSE '/api/checkout' END,"
    "  CASE WHEN i % 5 = 0 THEN 503 WHEN i = 7 THEN 404 ELSE 200 END,"
    "  1796126400000000000 + i * 1000000000, 1796126400000000000 + i * 1000000000 + i * 10000000,"
    "  i = 2, i % 2, printf('%016x', i), printf('%032x', i * 4096) FROM n;"
    "UPDATE spans SET trace_id = '0000000000000000abcdefabcdefabcd' WHERE id = 3;"
    "INSERT INTO spans(id, source_id, proto, method, path, status, grpc_service, grpc_method,"
    "  grpc_status, req_start_ns, resp_end_ns, span_id) VALUES"
    " (21, 1, 'grpc', 'POST', '/demo.Catalog/Lookup', 200, 'demo.Catalog', 'Lookup', 5,"
    "  1796126400000000000 + 30000000000, 1796126400000000000 + 30001000000, '00000000000000aa');"
    "INSERT INTO spans(id, source_id, proto, method, path, req_start_ns, partial, span_id)"
    " VALUES (22, 1, 'h2', 'GET', '/x', 1796126400000000000 + 31000000000, 1, '00000000000000bb');"
    /* monotonic 1000 s = T0 + 40 s: realtime = mono + offset */
    "INSERT INTO spans(id, source_id, proto, method, path, req_start_ns, resp_end_ns, span_id)"
    " VALUES (23, 2, 'h2', 'GET', '/mono', 1000000000000, 1000002000000, '00000000000000cc');"
    "INSERT INTO clock_fits(from_clock, to_clock, offset_ns, points, method)"
    " VALUES ('monotonic', 'realtime', 1796126400000000000 + 40000000000 - 1000000000000, 9,"
    "  'manual');";

static sqlite3 *h;

/* The ids a selection picks, as "1,3,5" ("" none, "error" when SQLite refused it). */
static const char *ids(const struct sf_select *s)
{
    static char out[512];
    char sql[SF_SELECT_SQL_MAX / 64];
    sqlite3_stmt *st;
    size_t len = 0;

    snprintf(sql, sizeof(sql), "SELECT id FROM spans WHERE %s ORDER BY id", sf_select_sql(s));
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
        printf("# %s: %s\n", sqlite3_errmsg(h), sql);
        return "error";
    }
    if (sf_select_bind(s, st, 1) < 0) {
        sqlite3_finalize(st);
        return "error";
    }
    out[0] = '\0';
    while (sqlite3_step(st) == SQLITE_ROW && len + 8 < sizeof(out))
        len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%d", len ? "," : "",
                                sqlite3_column_int(st, 0));
    sqlite3_finalize(st);
    return out;
}

static const char *where(const char *expr)
{
    static char out[512];
    struct sf_select s;
    struct sf_err err;

    sf_select_init(&s);
    sf_err_clear(&err);
    if (sf_select_where(&s, expr, &err) < 0)
        snprintf(out, sizeof(out), "error %u: %s", err.col, err.msg);
    else
        snprintf(out, sizeof(out), "%s", ids(&s));
    sf_select_free(&s);
    return out;
}

static const struct {
    const char *expr, *want;
} selects[] = {
    {"method = \"GET\" and status = 503", "5,15"},
    {"endpoint = \"/api/search\" and duration > 150ms", "17,19"},
    {"endpoint = \"demo.Catalog/Lookup\"", "21"},
    {"endpoint ~ \"/api/*\" and not (status = 200)", "5,7,10,15,20"},
    {"status = 5xx", "5,10,15,20"},
    {"status != 2xx and status != 5xx", "7"},
    {"path like \"/API/CHECK%\" and duration <= 40ms", "2,4"},
    {"duration > p95", "20"},
    {"duration >= p95", "19,20"},
    {"duration < p0 or duration <= p0", "21"},
    {"duration >= 1.5s or duration = 1ms", "21"},
    {"duration > 0.19s", "20"},
    {"early_data", "2"},
    {"early_data = false and partial = 1", "22"},
    {"sampled and status = 404", "7"},
    {"trace_id = \"ABCDEFABCDEFABCD\"", "3"},
    {"trace_id = \"00000000000000000000000000004000\"", "4"},
    {"span_id = \"000000000000000C\"", "12"},
    {"grpc_method = \"demo.Catalog/Lookup\" and grpc_status = 5", "21"},
    {"grpc_method = \"Lookup\" or proto = \"h2\"", "21,22,23"},
    {"(method = \"GET\" or method = \"POST\") and (status = 404 or status = 503) and id_ok = 1",
     "error 76: unknown column 'id_ok' (columns: endpoint, method, path, authority, proto, "
     "status, grpc_status, grpc_service, grpc_method, duration, trace_id, span_id, early_data, "
     "partial, sampled, rpc_name, rpc_direction, rpc_session, rpc_error_code, temperature, "
     "top_p, max_tokens, model_hint)"},
    {"path = \"x' OR 1=1 --\"", ""},
    {"path = \"/api/checkout\" AND NOT early_data AND status < 500 and duration < 50ms", "4"},
    {"endpiont = \"/api\"", "error 1: unknown column 'endpiont' (columns: endpoint, method, path, "
                            "authority, proto, status, grpc_status, grpc_service, grpc_method, "
                            "duration, trace_id, span_id, early_data, partial, sampled, "
                            "rpc_name, rpc_direction, rpc_session, rpc_error_code, "
                            "temperature, top_p, max_tokens, model_hint)"},
    {"duration > 120", "error 12: a duration needs a unit: ns, us, ms, s, m or h (120ms, 1.5s)"},
    {"temperature >= 0.5 and model_hint = \"claude\" or max_tokens > 100", ""},
    {"temperature > 7x", "error 15: temperature takes a number (0.7, 1e-3)"},
    {"max_tokens > 1.5", "error 14: max_tokens takes a whole number"},
    {"duration > 12parsecs",
     "error 12: a duration needs a unit: ns, us, ms, s, m or h (120ms, 1.5s)"},
    {"path = /api", "error 8: unexpected character '/'"},
    {"path = api", "error 8: path is text: put the value in double quotes"},
    {"status = \"200\"", "error 10: status is a number: a string cannot be compared with it"},
    {"status ~ \"5*\"", "error 10: status is a number: patterns (~, like) need text"},
    {"duration > p101", "error 12: a percentile is p0 to p100 (p95, p99.9)"},
    {"path = \"abc", "error 8: string not closed (a '\"' is missing)"},
    {"path = \"a\\nb\"", "error 10: unknown escape in string (use \\\" or \\\\)"},
    {"(status = 200", "error 1: '(' not closed"},
    {"status = 200)", "error 13: expected 'and', 'or' or the end, found ')'"},
    {"status = 200 and", "error 17: expected a column name, found the end"},
    {"status 200", "error 8: expected an operator after status, found a number"},
    {"early_data > 0", "error 12: early_data is yes/no: compare it with = or !="},
    {"status > 4xx", "error 10: a status class (4xx) takes = or !="},
    {"status = 20.5", "error 10: status takes a whole number"},
    {"", "error 1: empty expression"},
    {"   ", "error 1: empty expression"},
    {"status = 200 # x", "error 14: unexpected character '#'"},
};

static void test_selects(void)
{
    for (size_t i = 0; i < sizeof(selects) / sizeof(selects[0]); i++)
        TAP_EQ_STR(where(selects[i].expr), selects[i].want, "where %s", selects[i].expr);
}

/* The SQL holds no byte of the data: literals are parameters, in order. */
static void test_sql(void)
{
    struct sf_select s;
    struct sf_err err;

    sf_select_init(&s);
    TAP_EQ_STR(sf_select_sql(&s), "1", "an empty selection is every span");
    TAP_EQ_INT(sf_select_where(&s, "path = \"x' OR 1=1 --\" or status = 5xx", &err), 0, "compiles");
    TAP_EQ_STR(sf_select_sql(&s), "(((path = ?) OR ((status BETWEEN ? AND ?))))",
               "the fragment is columns, operators and ?");
    TAP_EQ_INT(s.nparam, 3, "three parameters");
    TAP_EQ_STR(s.param[0].text, "x' OR 1=1 --", "the string is a parameter, as written");
    TAP_EQ_INT(s.param[1].i, 500, "the class's lower end");
    TAP_EQ_INT(s.param[2].i, 599, "the class's upper end");
    TAP_EQ_INT(sf_select_where(&s, "method = \"GET\"", &err), 0, "a second expression");
    TAP_EQ_STR(sf_select_sql(&s),
               "(((path = ?) OR ((status BETWEEN ? AND ?)))) AND (((method = ?)))",
               "expressions combine with AND");
    TAP_EQ_INT(sf_select_where(&s, "method = \"GET\" and status = \"x\"", &err), SF_E_USAGE,
               "a failing expression");
    TAP_EQ_STR(sf_select_sql(&s),
               "(((path = ?) OR ((status BETWEEN ? AND ?)))) AND (((method = ?)))",
               "leaves the fragment as it was");
    TAP_EQ_INT(s.nparam, 4, "and the parameters");
    TAP_EQ_INT(s.nterms, 2, "two terms");
    sf_select_free(&s);
}

/* The ClickHouse dialect: the same compiler, literals inline and escaped byte by
 * byte, SQLite's GLOB and LIKE in ClickHouse's terms, percentiles as subscripts over
 * the table named.  (tests/spanfold/t_clickhouse.sh runs these on a server.) */
static const char *ch_where(const char *expr)
{
    static char out[2048];
    struct sf_select s;
    struct sf_err err;

    sf_select_init(&s);
    sf_select_dialect(&s, SF_SELECT_CLICKHOUSE, "db.spans_d");
    sf_err_clear(&err);
    if (sf_select_where(&s, expr, &err) < 0)
        snprintf(out, sizeof(out), "error %u: %s", err.col, err.msg);
    else
        snprintf(out, sizeof(out), "%s|%zu", sf_select_sql(&s), s.nparam);
    sf_select_free(&s);
    return out;
}

/* An asker whose cluster holds *arg values (UINT64_MAX: it fails): a count answers
 * that, a partial sort "LIMIT o, 1" the value 1000 + o (asked_value: "" for no row,
 * or another answer); counts the questions in counted, the last sort in sorted. */
static unsigned counted;
static char sorted[512];
static const char *asked_value;
static int fake_ask(void *arg, const char *sql, char *out, size_t n, struct sf_err *err)
{
    const char *lim = strstr(sql, " LIMIT ");

    counted++;
    if (*(uint64_t *)arg == UINT64_MAX)
        return sf_err_set(err, SF_E_DB, UINT64_MAX, "the cluster is away");
    if (strncmp(sql, "SELECT count() FROM ", 20) == 0)
        snprintf(out, n, "%llu", (unsigned long long)*(uint64_t *)arg);
    else if (asked_value)
        snprintf(out, n, "%s", asked_value);
    else
        snprintf(out, n, "%lld", 1000 + (lim ? atoll(lim + 7) : -1000));
    if (strncmp(sql, "SELECT v FROM ", 14) == 0)
        snprintf(sorted, sizeof(sorted), "%s", sql);
    return 0;
}

/* ch_where over table t with an asker of n values; "|" and the questions asked. */
static const char *ch_counted(const char *expr, uint64_t n)
{
    static char out[2048];
    struct sf_select s;
    struct sf_err err;

    counted = 0;
    sorted[0] = 0;
    sf_select_init(&s);
    sf_select_dialect(&s, SF_SELECT_CLICKHOUSE, "t");
    sf_select_ch_ask(&s, fake_ask, &n);
    sf_err_clear(&err);
    if (sf_select_where(&s, expr, &err) < 0)
        snprintf(out, sizeof(out), "error %u: %s", err.col, err.msg);
    else
        snprintf(out, sizeof(out), "%s|%u", sf_select_sql(&s), counted);
    sf_select_free(&s);
    return out;
}

static void test_clickhouse(void)
{
    struct sf_select s;
    struct sf_err err;

    TAP_EQ_STR(ch_where("path = \"x' OR 1=1 --\\\\\" or status = 5xx"),
               "(((path = 'x\\' OR 1=1 --\\\\') OR ((status BETWEEN 500 AND 599))))|0",
               "ClickHouse: quote and backslash escaped, numbers inline, no parameters");
    TAP_EQ_STR(ch_where("path = \"a\tb\""), "(((path = 'a\\x09b')))|0",
               "ClickHouse: a control byte as \\xHH");
    TAP_EQ_STR(ch_where("path ~ \"/api/[a-c]*.x?\""),
               "(((match(replaceRegexpAll(hex(path), '[0-7][0-9A-F]|[89AB][0-9A-F]|[C-F][0-9A-F]"
               "(?:[89AB][0-9A-F])*', '\\\\0,'), '^2F,61,70,69,2F,(?:61|62|63),(?:[0-9A-F]+,)*"
               "2E,78,[0-9A-F]+,$'))))|0",
               "ClickHouse: a glob as an anchored RE2 over SQLite's characters, as hex tokens");
    TAP_OK(strstr(ch_where("path ~ \"[^]x]\""),
                  "'^(?:5(?:D(?:[0123456789ABCDEF][0-9A-F]*)|[0123456789ABCEF][0-9A-F]*|)|") !=
               NULL,
           "ClickHouse: a glob's complement class (']' first is a member): every other token");
    TAP_EQ_STR(ch_where("path like \"%API\\\\_\""),
               "(((match(replaceRegexpAll(hex(lower(path)), '[0-7][0-9A-F]|[89AB][0-9A-F]|"
               "[C-F][0-9A-F](?:[89AB][0-9A-F])*', '\\\\0,'), '^(?:[0-9A-F]+,)*61,70,69,5C,"
               "[0-9A-F]+,$'))))|0",
               "ClickHouse: LIKE on lower() (ASCII, as SQLite's), '\\' is no escape");
    TAP_EQ_STR(ch_where("path ~ \"[ab\""), "((((1 = 0))))|0",
               "ClickHouse: an unclosed class matches nothing, as in SQLite");
    TAP_EQ_STR(ch_where("trace_id = \"ABCDEFABCDEFABCD\""),
               "(((substring(trace_id, 17, 16) = 'abcdefabcdefabcd')))|0",
               "ClickHouse: a 64-bit trace id against the low half");
    TAP_EQ_STR(ch_where("duration > p95"),
               "((((resp_end_ns - req_start_ns) > (SELECT if(count() > 0, arraySort(groupArray(v))"
               "[toUInt64(greatest(1, ceil(count() * 95 / 100.0)))], NULL) FROM (SELECT "
               "(resp_end_ns - req_start_ns) AS v FROM db.spans_d WHERE v IS NOT NULL)))))|0",
               "ClickHouse: a percentile over the named (Distributed) table");
    TAP_OK(strstr(ch_where("endpoint = \"/a\""), "position(path, '?')") != NULL,
           "ClickHouse: endpoint through position(), not instr()");
    sf_select_init(&s);
    sf_select_dialect(&s, SF_SELECT_CLICKHOUSE, "t");
    TAP_EQ_INT(sf_select_slowest(&s, "2", &err), 0, "ClickHouse: --slowest 2");
    TAP_OK(strstr(sf_select_sql(&s), "arrayReverseSort(groupArray(v))[toUInt64(least(count(), "
                                     "2))]") != NULL,
           "ClickHouse: the 2nd longest as a subscript (the last when fewer)");
    sf_select_free(&s);
    TAP_EQ_STR(ch_counted("duration > p95", 40), "((((resp_end_ns - req_start_ns) > 1037)))|2",
               "ClickHouse, asked: p95 of 40 the value at offset ceil(38) - 1, as a literal");
    TAP_EQ_STR(sorted,
               "SELECT v FROM (SELECT (resp_end_ns - req_start_ns) AS v FROM t WHERE v IS NOT "
               "NULL) ORDER BY v LIMIT 37, 1",
               "ClickHouse, asked: the value a partial sort over the named table");
    TAP_EQ_STR(ch_counted("duration > p10 and duration < p90", 21),
               "((((resp_end_ns - req_start_ns) > 1002) AND ((resp_end_ns - req_start_ns) < "
               "1018)))|4",
               "ClickHouse, asked: each percentile its own k (ceil(2.1), ceil(18.9))");
    TAP_EQ_STR(ch_counted("duration > p50", 0), "((((resp_end_ns - req_start_ns) > NULL)))|1",
               "ClickHouse, asked: no value, NULL (nothing selected), as on SQLite; no sort");
    asked_value = "";
    TAP_EQ_STR(ch_counted("duration > p50", 5), "((((resp_end_ns - req_start_ns) > NULL)))|2",
               "ClickHouse, asked: no row (gone since counted), NULL");
    asked_value = "-1.5e-3";
    TAP_EQ_STR(ch_counted("duration > p50", 5), "((((resp_end_ns - req_start_ns) > (-1.5e-3))))|2",
               "ClickHouse, asked: a negative real as the server wrote it, in parentheses");
    asked_value = "1; DROP TABLE t";
    TAP_OK(strncmp(ch_counted("duration > p50", 5), "error", 5) == 0,
           "ClickHouse, asked: an answer that is no number is an error, not SQL");
    asked_value = NULL;
    TAP_OK(strncmp(ch_counted("duration > p50", UINT64_MAX), "error", 5) == 0,
           "ClickHouse, asked: the asker's error is the selection's");
    sf_select_init(&s);
    sf_select_dialect(&s, SF_SELECT_CLICKHOUSE, "t");
    sf_select_ch_ask(&s, fake_ask, &(uint64_t){3});
    TAP_OK(sf_select_slowest(&s, "20", &err) == 0 &&
               strcmp(sf_select_sql(&s), "((resp_end_ns - req_start_ns) >= 1002)") == 0 &&
               strstr(sorted, "ORDER BY v DESC LIMIT 2, 1") != NULL,
           "ClickHouse, asked: --slowest 20 of 3 is the 3rd longest, every span");
    sf_select_free(&s);
    sf_select_init(&s);
    sf_select_dialect(&s, SF_SELECT_CLICKHOUSE, "t");
    TAP_EQ_INT(sf_select_during(&s, h, "12:00:03..12:00:06", NULL, &err), 0,
               "ClickHouse: --during placed on the file's sources");
    TAP_OK(strstr(sf_select_sql(&s), "(skey = 1 AND req_start_ns >= ") != NULL &&
               strstr(sf_select_sql(&s), "source_id") == NULL && s.nparam == 0,
           "ClickHouse: each source's term names its skey (the id), the times inline");
    sf_select_free(&s);
}

static const char *shorthand(int (*fn)(struct sf_select *, const char *, struct sf_err *),
                             const char *arg)
{
    static char out[512];
    struct sf_select s;
    struct sf_err err;

    sf_select_init(&s);
    sf_err_clear(&err);
    if (fn(&s, arg, &err) < 0)
        snprintf(out, sizeof(out), "error %u: %s", err.col, err.msg);
    else
        snprintf(out, sizeof(out), "%s", ids(&s));
    sf_select_free(&s);
    return out;
}

static void test_shorthands(void)
{
    TAP_EQ_STR(shorthand(sf_select_status, "5xx"), "5,10,15,20", "--status 5xx");
    TAP_EQ_STR(shorthand(sf_select_status, "404,5xx"), "5,7,10,15,20", "--status 404,5xx");
    TAP_EQ_STR(shorthand(sf_select_status, "5x"),
               "error 1: a status is a code (404) or a class (5xx), comma-separated",
               "--status 5x");
    TAP_EQ_STR(shorthand(sf_select_status, "404,"), "error 4: a status list does not end in ','",
               "--status 404,");
    TAP_EQ_STR(shorthand(sf_select_trace_id, "ABCDEFABCDEFABCD"), "3", "--trace-id, 64-bit");
    TAP_EQ_STR(shorthand(sf_select_trace_id, "00000000000000000000000000008000"), "8",
               "--trace-id, 128-bit");
    TAP_EQ_STR(shorthand(sf_select_trace_id, "xyz"),
               "error 1: a trace id is 32 hex digits (or 16 for a 64-bit id)", "--trace-id xyz");
    TAP_EQ_STR(shorthand(sf_select_span_id, "00000000000000aa"), "21", "--span-id");
    TAP_EQ_STR(shorthand(sf_select_span_id, "00000000000000aa0"),
               "error 1: a span id is 16 hex digits", "--span-id, 17 digits");
    TAP_EQ_STR(shorthand(sf_select_grpc_method, "Lookup"), "21", "--grpc-method Method");
    TAP_EQ_STR(shorthand(sf_select_grpc_method, "demo.Catalog/Lookup"), "21",
               "--grpc-method Service/Method");
    TAP_EQ_STR(shorthand(sf_select_grpc_method, "demo.Catalog/Other"), "", "no such method");
    /* 22 durations: 1 ms, 10..200 ms, 2 ms (span 23); none for 22 */
    TAP_EQ_STR(shorthand(sf_select_slowest, "10%"), "18,19,20", "--slowest 10%%: ceil(2.1) = 3");
    TAP_EQ_STR(shorthand(sf_select_slowest, "2"), "19,20", "--slowest 2");
    TAP_EQ_STR(shorthand(sf_select_slowest, "30"),
               "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,23",
               "--slowest 30 of 21 with a duration: every one of them");
    TAP_EQ_STR(shorthand(sf_select_slowest, "100%"),
               "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,"
               "18,19,20,21,23",
               "--slowest 100%% is every span with a duration");
    TAP_EQ_STR(shorthand(sf_select_slowest, "0%"),
               "error 1: --slowest takes a share above 0 and up to 100%", "--slowest 0%%");
    TAP_EQ_STR(shorthand(sf_select_slowest, "x"),
               "error 1: --slowest takes N% or a number of spans", "--slowest x");
}

static const char *during(const char *range, const char *tz)
{
    static char out[512];
    struct sf_select s;
    struct sf_err err;

    sf_select_init(&s);
    sf_err_clear(&err);
    if (sf_select_during(&s, h, range, tz, &err) < 0)
        snprintf(out, sizeof(out), "error %u: %s", err.col, err.msg);
    else
        snprintf(out, sizeof(out), "%s", ids(&s));
    sf_select_free(&s);
    return out;
}

static void test_during(void)
{
    /* the capture starts at T0 + 1 s (span 1) */
    TAP_EQ_STR(during("12:00:03..12:00:06", NULL), "3,4,5", "time of day, UTC, [A, B)");
    TAP_EQ_STR(during("12:00:03Z..12:00:06Z", "local"), "3,4,5", "Z overrides --tz");
    TAP_EQ_STR(during("13:00:03..13:00:06", "+01:00"), "3,4,5", "--tz +01:00");
    TAP_EQ_STR(during("07:00:03-05:00..07:00:06-05:00", NULL), "3,4,5", "offset in the time");
    TAP_EQ_STR(during("2026-12-01T12:00:03.5..2026-12-01 12:00:05", NULL), "4", "full dates");
    TAP_EQ_STR(during("+2s..+4s", NULL), "3,4", "relative to the capture start");
    TAP_EQ_STR(during("+29s..", NULL), "21,22,23", "open end; a monotonic source through its fit");
    TAP_EQ_STR(during("..12:00:02.5", NULL), "1,2", "open start");
    TAP_EQ_STR(during("12:00:40..12:00:41", NULL), "23", "the monotonic span alone");
    TAP_EQ_STR(during("12:00:03", NULL),
               "error 9: a window is A..B (12:03:10..12:03:40, +10s..+40s)", "no ..");
    TAP_EQ_STR(during("12:00:03..12:61", NULL),
               "error 11: bad time of day (HH:MM, HH:MM:SS or HH:MM:SS.frac)", "minute 61");
    TAP_EQ_STR(during("+2..+4s", NULL), "error 1: a relative time needs a unit (+10s)",
               "unitless relative");
    TAP_EQ_STR(during("12:00:03..12:00:06+1", NULL),
               "error 19: bad time zone (Z, +HH:MM or -HH:MM)", "bad zone");
    TAP_EQ_STR(during("..", NULL), "error 1: a window needs a start, an end or both", "empty");
    TAP_EQ_STR(during("+4s..+2s", NULL), "error 6: the window ends before it starts", "reversed");
    TAP_EQ_STR(during("12:00:03..12:00:06", "Mars"), "error 1: --tz is UTC, local or +HH:MM",
               "bad --tz");
    sqlite3_exec(h, "DELETE FROM clock_fits", NULL, NULL, NULL);
    TAP_OK(strstr(during("+2s..+4s", NULL), "no clock fit to realtime") != NULL,
           "a source on another clock without a fit is an error");
}

static void test_caret(void)
{
    struct sf_err err;
    char out[256];

    sf_err_clear(&err);
    err.col = 10;
    sf_select_format_error("status = \"200\"", &err, out, sizeof(out));
    TAP_EQ_STR(out, "  status = \"200\"\n           ^\n", "caret under column 10");
    err.col = 5;
    sf_select_format_error("\xc3\xa9t\t = 1", &err, out, sizeof(out));
    TAP_EQ_STR(out, "  \xc3\xa9t? = 1\n     ^\n", "UTF-8 counted as characters, tab shown as ?");
}

static void test_limits(void)
{
    struct sf_select s;
    struct sf_err err;
    char *deep = malloc(2 * SF_SELECT_DEPTH_MAX + 64), *big = malloc(SF_SELECT_EXPR_MAX + 2);
    size_t n = 0;

    for (int i = 0; i <= SF_SELECT_DEPTH_MAX; i++)
        deep[n++] = '(';
    memcpy(deep + n, "partial", 8);
    sf_select_init(&s);
    TAP_EQ_INT(sf_select_where(&s, deep, &err), SF_E_LIMIT, "nesting deeper than the limit");
    memset(big, ' ', SF_SELECT_EXPR_MAX + 1);
    big[SF_SELECT_EXPR_MAX + 1] = '\0';
    TAP_EQ_INT(sf_select_where(&s, big, &err), SF_E_LIMIT, "an expression over the limit");
    TAP_EQ_STR(sf_select_sql(&s), "1", "neither left anything");
    sf_select_free(&s);
    free(deep);
    free(big);
}

/* sf_select_endpoint (pcap2spans --ndjson's endpoint) is the SQL's, case by case. */
static void test_endpoint_twin(void)
{
    static const char *const cases[][6] = {
        /* proto, method, rpc_name, grpc_service, grpc_method, path */
        {"http/1.1", "GET", NULL, NULL, NULL, "/api/x"},
        {"http/1.1", "GET", NULL, NULL, NULL, "/api/x?q=1&r=2"},
        {"http/1.1", "GET", NULL, NULL, NULL, "?only=query"},
        {"http/1.1", "GET", NULL, NULL, NULL, "/a?b?c"},
        {"http/1.1", "GET", NULL, NULL, NULL, NULL},
        {"http/1.1", "GET", NULL, NULL, NULL, ""},
        {"http/1.1", "GET", NULL, "pkg.Svc", "Get", "/pkg.Svc/Get"},
        {"http/1.1", "GET", NULL, NULL, "Get", "/x"},
        {"http/1.1", "GET", NULL, "", "Get", "/x?y"},
        {"http/1.1", "GET", NULL, "s\xc3\xa9", "m\"e", "/p"},
        {"http/1.1", "GET", NULL, NULL, NULL, "/caf\xc3\xa9?x"},
        {"jsonrpc", "tools/call", "search_docs", NULL, NULL, NULL},
        {"jsonrpc", "ping", NULL, NULL, NULL, "/mcp"},
        {"jsonrpc", NULL, NULL, NULL, NULL, NULL},
        {"jsonrpc", "tools/call", "", NULL, NULL, NULL},
        {NULL, "sampling/createMessage", "x", NULL, NULL, "/p?q"},
    };
    char sql[512];
    struct sf_buf scratch;
    int same = 1;

    sf_buf_init(&scratch, 1 << 20);
    snprintf(sql, sizeof(sql),
             "SELECT %s FROM (SELECT ?1 AS proto, ?2 AS method, ?3 AS rpc_name, "
             "?4 AS grpc_service, ?5 AS grpc_method, ?6 AS path)",
             sf_select_endpoint_sql());
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sqlite3_stmt *st;
        const char *want, *got;
        if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK) {
            same = 0;
            break;
        }
        struct sf_endpoint_of e = {cases[i][0], cases[i][1], cases[i][2],
                                   cases[i][3], cases[i][4], cases[i][5]};
        for (int k = 0; k < 6; k++)
            if (cases[i][k])
                sqlite3_bind_text(st, k + 1, cases[i][k], -1, SQLITE_STATIC);
        sqlite3_step(st);
        want = (const char *)sqlite3_column_text(st, 0);
        got = sf_select_endpoint(&e, &scratch);
        if ((want == NULL) != (got == NULL) || (want && strcmp(want, got) != 0)) {
            printf("# case %zu: sql %s, c %s\n", i, want ? want : "NULL", got ? got : "NULL");
            same = 0;
        }
        sqlite3_finalize(st);
    }
    sf_buf_free(&scratch);
    TAP_OK(same, "sf_select_endpoint gives what the endpoint's SQL gives on 16 cases");
}

int main(void)
{
    struct sf_db *db;
    struct sf_err err;

    sf_err_clear(&err);
    if (sf_db_open(&db, ":memory:", &err) < 0) {
        printf("# %s\n", err.msg);
        return 1;
    }
    h = sf_db_handle(db);
    TAP_EQ_INT(sqlite3_exec(h, fixture, NULL, NULL, NULL), SQLITE_OK, "fixture");
    test_selects();
    test_sql();
    test_shorthands();
    test_clickhouse();
    test_caret();
    test_limits();
    test_during();
    test_endpoint_twin();
    sf_db_close(db, &err);
    return tap_done();
}
