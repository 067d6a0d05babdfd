/* Unit tests: lib/sf_db_perf (interned stacks, batched samples). */
#include <string.h>
#include <unistd.h>

#include "sf_db.h"
#include "sf_db_perf.h"
#include "tap.h"

static int64_t one(struct sf_db *db, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = -1;

    if (sqlite3_prepare_v2(sf_db_handle(db), sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* sf_offcpu_reason of stack text s in state st. */
static const char *reason(const char *st, const char *s)
{
    static char out[64];

    sf_offcpu_reason(st, s, strlen(s), out, sizeof(out));
    return out;
}

static void test_reason(void)
{
    TAP_EQ_STR(reason("S", "app;main;futex_wait_queue;schedule;__schedule"), "futex_wait_queue",
               "the first frame from the leaf that is not the scheduler's");
    TAP_EQ_STR(reason("D", "app;read;io_schedule+0x4f;schedule_timeout+0x1;__schedule+0x2a5"),
               "io_schedule", "without its +0x offset");
    TAP_EQ_STR(reason("S", "app;ep_poll;__cond_resched;__traceiter_sched_switch;"
                           "perf_trace_sched_switch;trace_event_raw_event"),
               "ep_poll", "the tracepoint's frames are skipped too");
    TAP_EQ_STR(reason("R+", "app;main;futex_wait_queue;__schedule"), "preempted",
               "a runnable thread was preempted, whatever its stack");
    TAP_EQ_STR(reason(NULL, "app;main;ep_poll;__schedule"), "ep_poll", "state unknown");
    TAP_EQ_STR(reason("S", "app;schedule;__schedule"), "", "only the comm left: no reason");
    TAP_EQ_STR(reason("S", "app"), "", "the comm alone");
}

int main(void)
{
    struct sf_source_info in = {"perf", "p.txt", "ff", 1, "monotonic", "test_db_perf"};
    struct sf_perf_sample s = {0};
    struct sf_db *db;
    struct sf_err err;
    char path[64];
    int64_t src, dup, a = 0, b = 0, c = 0;
    int rc = 0;

    snprintf(path, sizeof(path), "/tmp/sf_db_perf_%d.db", (int)getpid());
    unlink(path);
    sf_err_clear(&err);
    TAP_EQ_INT(sf_db_open(&db, path, &err), 0, "open");
    sf_db_source_begin(db, &in, &src, &dup, &err);
    TAP_EQ_INT(sf_db_perf_stack(db, "app;main;work", 13, &a, &err), 0, "intern a stack");
    TAP_EQ_INT(sf_db_perf_stack(db, "app;main;idle", 13, &b, &err), 0, "intern another");
    TAP_EQ_INT(sf_db_perf_stack(db, "app;main;work;extra", 13, &c, &err), 0,
               "intern by length (prefix)");
    TAP_OK(a > 0 && b > 0 && a != b, "distinct stacks get distinct ids (%lld, %lld)", (long long)a,
           (long long)b);
    TAP_EQ_INT(c, a, "the same n bytes give the same id");
    for (int i = 0; i < 7000; i++) {
        s.ts_ns = i;
        s.pid = s.tid = 42;
        s.cpu = i % 2;
        s.comm = "app";
        s.comm_len = 3;
        s.event = "cpu-clock";
        s.event_len = 9;
        s.period = 250000;
        s.stack_id = i % 3 ? a : b;
        s.span_id = i % 2 ? "00f067aa0ba902b7" : NULL;
        rc |= sf_db_perf_sample(db, src, &s, &err);
    }
    TAP_EQ_INT(rc, 0, "7000 samples through the batches");
    sf_db_source_end(db, src, NULL, 7000, 0, &err);
    TAP_EQ_INT(one(db, "SELECT count(*) FROM stacks"), 2, "two stacks stored once each");
    TAP_EQ_INT(one(db, "SELECT count(*) FROM samples"), 7000, "every sample stored");
    TAP_EQ_INT(one(db, "SELECT count(*) FROM samples WHERE span_id = '00f067aa0ba902b7'"), 3500,
               "span ids kept as given");
    TAP_EQ_INT(one(db, "SELECT count(*) FROM samples s JOIN stacks k ON k.id = s.stack_id "
                       "WHERE k.frames = 'app;main;idle'"),
               2334, "samples join their stack");
    TAP_EQ_INT(one(db, "SELECT count(*) FROM samples WHERE comm = 'app' AND event = 'cpu-clock' "
                       "AND period = 250000"),
               7000, "comm, event and period stored from their lengths");
    sf_db_close(db, &err);
    unlink(path);
    test_reason();
    return tap_done();
}
