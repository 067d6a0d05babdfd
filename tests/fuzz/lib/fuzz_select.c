/* Fuzz target: lib/sf_select, the span selection language.
 *
 * Input: byte 0 picks the entry point (--where, --status, --slowest, --trace-id,
 * --span-id, --grpc-method, --during with byte 1 picking the --tz), the rest is its
 * argument (cut at the first NUL, as a command line would).  Whatever the bytes:
 *   - a success leaves a fragment SQLite prepares inside "SELECT ... FROM spans WHERE",
 *     with exactly as many parameters as the selection holds, that runs to the end on
 *     a small database, and that holds no '"', ';', '\' or "--": literals are bound,
 *     never pasted;
 *   - a failure has a message, a column inside the argument (or just past it), leaves
 *     the selection as it was, and formats with a caret without overrunning;
 *   - the ClickHouse dialect accepts and refuses exactly the same arguments, with no
 *     parameters, and its fragment keeps every byte of the data inside '...' literals:
 *     outside them no '"', ';', '\\' or "--", inside them a backslash only as \\\\,
 *     \\' or \\xHH, no raw control byte, and every literal closed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz.h"
#include "sf_db.h"
#include "sf_select.h"

static const char fixture[] =
    "INSERT INTO sources(id, kind, path, clock, tool, tool_version, status) VALUES"
    " (1, 'pcap', 'a.pcap', 'realtime', 't', '0', 'complete'),"
    " (2, 'pcap', 'b.pcap', 'monotonic', 't', '0', 'complete');"
    "INSERT INTO spans(id, source_id, proto, method, path, status, grpc_service, grpc_method,"
    " req_start_ns, resp_end_ns, span_id, trace_id, sampled) VALUES"
    " (1, 1, 'h2', 'GET', '/a?x=1', 200, NULL, NULL, 1796126400000000000,"
    "  1796126400100000000, '0000000000000001', '00000000000000000000000000000001', 1),"
    " (2, 1, 'grpc', 'POST', '/p.S/M', 500, 'p.S', 'M', 1796126401000000000, NULL,"
    "  '0000000000000002', NULL, 0),"
    " (3, 2, 'http/1.1', 'GET', '/b', 404, NULL, NULL, 5000000000, 5002000000,"
    "  '0000000000000003', NULL, NULL);"
    "INSERT INTO clock_fits(from_clock, to_clock, offset_ns, points, method)"
    " VALUES ('monotonic', 'realtime', 1796126402000000000, 3, 'manual');";

static sqlite3 *db(void)
{
    static struct sf_db *d;
    struct sf_err err;

    if (d == NULL) {
        CHECK(sf_db_open(&d, ":memory:", &err) == 0);
        CHECK(sqlite3_exec(sf_db_handle(d), fixture, NULL, NULL, NULL) == SQLITE_OK);
    }
    return sf_db_handle(d);
}

static void check_sql(const struct sf_select *s)
{
    const char *frag = sf_select_sql(s);
    char *sql;
    sqlite3_stmt *st;
    size_t n = strlen(frag);
    int rc;

    CHECK(strpbrk(frag, "\";\\") == NULL && strstr(frag, "--") == NULL);
    sql = malloc(n + 64);
    CHECK(sql != NULL);
    snprintf(sql, n + 64, "SELECT count(*) FROM spans WHERE %s", frag);
    CHECK(sqlite3_prepare_v2(db(), sql, -1, &st, NULL) == SQLITE_OK);
    CHECK(sqlite3_bind_parameter_count(st) == (int)s->nparam);
    CHECK(sf_select_bind(s, st, 1) == (int)s->nparam + 1);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        ;
    CHECK(rc == SQLITE_DONE);
    sqlite3_finalize(st);
    free(sql);
}

/* The ClickHouse fragment's quoting (see the header). */
static void check_ch_quoting(const char *f)
{
    int in = 0;

    for (; *f; f++) {
        unsigned char ch = (unsigned char)*f;
        if (!in) {
            CHECK(ch != '"' && ch != ';' && ch != '\\' && !(ch == '-' && f[1] == '-'));
            in = ch == '\'';
        } else if (ch == '\\') {
            f++;
            CHECK(*f == '\\' || *f == '\'' ||
                  (*f == 'x' && strchr("0123456789abcdef", f[1]) && f[1] &&
                   strchr("0123456789abcdef", f[2]) && f[2]));
            if (*f == 'x')
                f += 2;
        } else {
            CHECK(ch >= 0x20 && ch != 0x7f);
            in = ch != '\'';
        }
    }
    CHECK(!in);
}

/* Compile arg in ClickHouse's dialect with entry point mode (0-5); same verdict as rc. */
static void check_clickhouse(int mode, const char *arg, int rc)
{
    static int (*const fn[])(struct sf_select *, const char *, struct sf_err *) = {
        sf_select_where,    sf_select_status,  sf_select_slowest,
        sf_select_trace_id, sf_select_span_id, sf_select_grpc_method};
    struct sf_select s;
    struct sf_err err;

    sf_select_init(&s);
    sf_select_dialect(&s, SF_SELECT_CLICKHOUSE, "db.spans_d");
    sf_err_clear(&err);
    CHECK((fn[mode](&s, arg, &err) == 0) == (rc == 0));
    CHECK(s.nparam == 0);
    check_ch_quoting(sf_select_sql(&s));
    sf_select_free(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const tzs[] = {NULL, "UTC", "+05:30", "-11:00", "bad"};
    struct sf_select s;
    struct sf_err err;
    char *arg, caret[2 * SF_SELECT_EXPR_MAX + 64], first[1024];
    const char *tz = NULL;
    size_t skip = 1, n;
    int mode, rc, len;

    if (size < 1)
        return 0;
    mode = data[0] % 7;
    if (mode == 6 && size >= 2) {
        tz = tzs[data[1] % 5];
        skip = 2;
    }
    if ((arg = malloc(size - skip + 1)) == NULL)
        return 0;
    memcpy(arg, data + skip, size - skip);
    arg[size - skip] = '\0';
    n = strlen(arg);
    sf_select_init(&s);
    sf_err_clear(&err);
    /* a first term, so that a failure must leave it as it was */
    CHECK(sf_select_where(&s, "status = 200 or duration > p50", &err) == 0);
    snprintf(first, sizeof(first), "%s", sf_select_sql(&s));
    switch (mode) {
    case 0:
        rc = sf_select_where(&s, arg, &err);
        break;
    case 1:
        rc = sf_select_status(&s, arg, &err);
        break;
    case 2:
        rc = sf_select_slowest(&s, arg, &err);
        break;
    case 3:
        rc = sf_select_trace_id(&s, arg, &err);
        break;
    case 4:
        rc = sf_select_span_id(&s, arg, &err);
        break;
    case 5:
        rc = sf_select_grpc_method(&s, arg, &err);
        break;
    default:
        rc = sf_select_during(&s, db(), arg, tz, &err);
    }
    if (rc == 0) {
        CHECK(s.nterms == 2);
    } else {
        CHECK(rc < 0 && err.code == rc && err.msg[0] != '\0');
        CHECK(err.col >= 1 && err.col <= (rc == SF_E_LIMIT ? SF_SELECT_EXPR_MAX + 1 : n + 1));
        CHECK(s.nterms == 1 && s.nparam == 2);
        CHECK(strcmp(sf_select_sql(&s), first) == 0);
        len = sf_select_format_error(arg, &err, caret, sizeof(caret));
        CHECK(len >= 0 && strlen(caret) < sizeof(caret) && strchr(caret, '^') != NULL);
    }
    check_sql(&s);
    if (mode < 6)
        check_clickhouse(mode, arg, rc);
    sf_select_free(&s);
    free(arg);
    return 0;
}
