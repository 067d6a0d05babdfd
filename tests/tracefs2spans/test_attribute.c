/* Unit tests: lib/sf_db_trace.c - writers and sf_db_attribute_samples(): innermost
 * interval on the sample's thread, interval bounds inclusive, clock mapping (same
 * domain, through a clock_fits row, no relation), re-runs idempotent, stale ids cleared. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sf_db.h"
#include "sf_db_trace.h"
#include "tap.h"

static struct sf_db *db;

static void sql(const char *s)
{
    struct sf_err e;
    if (sf_db_exec(db, s, &e))
        printf("# sql failed: %s: %s\n", s, e.msg);
}

static char got[64];

static const char *span_of(int64_t sample_id)
{
    sqlite3_stmt *st;
    const char *r = NULL;

    sqlite3_prepare_v2(sf_db_handle(db), "SELECT span_id FROM samples WHERE id = ?1", -1, &st,
                       NULL);
    sqlite3_bind_int64(st, 1, sample_id);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        snprintf(got, sizeof(got), "%s", (const char *)sqlite3_column_text(st, 0));
        r = got;
    }
    sqlite3_finalize(st);
    return r;
}

#define A "aaaaaaaaaaaaaaaa"
#define B "bbbbbbbbbbbbbbbb"
#define C "cccccccccccccccc"

static void add_interval(int64_t src, const char *span, int64_t tid, int64_t s, int64_t e, int d)
{
    struct sf_trace_interval iv = {span, NULL, SF_DB_NULL, tid, s, e, d, 1, "end-marker"};
    struct sf_err err;
    TAP_EQ_INT(sf_db_trace_interval(db, src, &iv, &err), 0, "insert interval %.4s", span);
}

int main(void)
{
    char path[64];
    struct sf_err err;
    struct sf_attr_stats st;
    /* sample id, source, tid, ts, expected span */
    static const struct {
        int id, src, tid;
        long long ts;
        const char *want;
    } s[] = {
        {1, 2, 10, 90, NULL},    {2, 2, 10, 100, A},     {3, 2, 10, 130, B},    {4, 2, 10, 150, B},
        {5, 2, 10, 151, A},      {6, 2, 10, 200, A},     {7, 2, 10, 201, NULL}, {8, 2, 11, 250, C},
        {9, 2, 12, 130, NULL},   {10, 3, 10, 130, NULL}, /* perf clock, no relation to monotonic */
        {11, 4, 10, 1000130, B},                         /* realtime = monotonic + 1000000 */
        {12, 4, 10, 130, NULL},  {13, 5, 11, 120, C}, /* clock unknown: taken as the interval's */
    };

    snprintf(path, sizeof(path), "/tmp/t2s_attr_%d.db", (int)getpid());
    unlink(path);
    TAP_EQ_INT(sf_db_open(&db, path, &err), 0, "open database");
    sql("INSERT INTO sources (id, kind, path, clock, tool, tool_version, status) VALUES "
        "(1, 'tracefs', 't', 'monotonic', 'x', 'x', 'complete'),"
        "(2, 'perf', 'p', 'monotonic', 'x', 'x', 'complete'),"
        "(3, 'perf', 'q', 'perf', 'x', 'x', 'complete'),"
        "(4, 'perf', 'r', 'realtime', 'x', 'x', 'complete'),"
        "(5, 'perf', 's', 'unknown', 'x', 'x', 'complete')");
    add_interval(1, A, 10, 100, 200, 0);
    add_interval(1, B, 10, 120, 150, 1);
    add_interval(1, C, 11, 100, 300, 0);
    for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
        char q[200];
        snprintf(q, sizeof(q),
                 "INSERT INTO samples (id, source_id, tid, ts_ns, span_id) VALUES (%d, %d, %d, "
                 "%lld, %s)",
                 s[i].id, s[i].src, s[i].tid, s[i].ts, i == 0 ? "'" C "'" : "NULL");
        sql(q);
    }
    struct sf_clock_fit_row f = {"monotonic", "realtime", 1,  SF_DB_NULL, 1000000, 0,       0,
                                 SF_DB_NULL,  SF_DB_NULL, 10, 5,          9,       "manual"};
    TAP_EQ_INT(sf_db_trace_clock_fit(db, &f, NULL, &err), 0, "insert clock fit");
    TAP_EQ_INT(sf_db_attribute_samples_stats(db, &st, &err), 0, "attribute");
    for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
        const char *g = span_of(s[i].id);
        TAP_OK((g == NULL && s[i].want == NULL) || (g && s[i].want && strcmp(g, s[i].want) == 0),
               "sample %d (source %d, tid %d, t %lld): %s (got %s)", s[i].id, s[i].src, s[i].tid,
               s[i].ts, s[i].want ? s[i].want : "none", g ? g : "none");
    }
    TAP_EQ_INT(st.samples, 13, "13 samples visited");
    TAP_EQ_INT(st.attributed, 8, "8 inside intervals");
    TAP_EQ_INT(st.unmapped, 1, "the perf-clock source has no relation");
    TAP_EQ_INT(st.changed, 9, "8 set + 1 stale id cleared");
    TAP_EQ_INT(sf_db_attribute_samples_stats(db, &st, &err), 0, "attribute again");
    TAP_EQ_INT(st.changed, 0, "second run changes nothing");

    /* a fit the other way round (realtime -> monotonic) is inverted */
    sql("DELETE FROM clock_fits");
    struct sf_clock_fit_row g2 = {"realtime", "monotonic", 4,  1, -1000000, 0,       0,
                                  SF_DB_NULL, SF_DB_NULL,  10, 5, 9,        "manual"};
    sf_db_trace_clock_fit(db, &g2, NULL, &err);
    sql("UPDATE samples SET span_id = NULL");
    TAP_EQ_INT(sf_db_attribute_samples(db, &err), 0, "attribute with an inverted fit");
    TAP_EQ_STR(span_of(11), B, "inverted fit maps realtime samples");
    TAP_OK(span_of(12) == NULL, "sample before the mapped intervals stays unattributed");
    sf_db_close(db, &err);
    unlink(path);
    return tap_done();
}
