/* sf_db_perf.c - perf samples and interned stacks (see sf_db_perf.h). */
#include "sf_db_perf.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

int sf_db_perf_stack(struct sf_db *db, const char *frames, size_t n, int64_t *id,
                     struct sf_err *err)
{
    static const char sel[] = "SELECT id FROM stacks WHERE frames = ?1";
    static const char ins[] = "INSERT INTO stacks (frames) VALUES (?1)";
    sqlite3_stmt *st = sf_db_stmt(db, sel, err);
    int rc;

    if (st == NULL)
        return SF_E_DB;
    sf_db_bind_textn(st, 1, frames, n);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *id = sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
        return 0;
    }
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
        return sf_err_set(err, SF_E_DB, UINT64_MAX, "looking up stack: %s",
                          sqlite3_errmsg(sf_db_handle(db)));
    if ((st = sf_db_stmt(db, ins, err)) == NULL)
        return SF_E_DB;
    sf_db_bind_textn(st, 1, frames, n);
    return sf_db_exec_stmt(db, st, id, err);
}

int sf_db_perf_sample(struct sf_db *db, int64_t source_id, const struct sf_perf_sample *s,
                      struct sf_err *err)
{
    static const char ins[] = "INSERT INTO samples (source_id, ts_ns, pid, tid, cpu, comm, event, "
                              "period, stack_id, span_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
                              "?9, ?10)";
    sqlite3_stmt *st = sf_db_stmt(db, ins, err);

    if (st == NULL)
        return SF_E_DB;
    sqlite3_bind_int64(st, 1, source_id);
    sf_db_bind_int(st, 2, s->ts_ns);
    sf_db_bind_int(st, 3, s->pid);
    sf_db_bind_int(st, 4, s->tid);
    sf_db_bind_int(st, 5, s->cpu);
    sf_db_bind_textn(st, 6, s->comm, s->comm_len);
    sf_db_bind_textn(st, 7, s->event, s->event_len);
    sf_db_bind_int(st, 8, s->period);
    sf_db_bind_int(st, 9, s->stack_id);
    sf_db_bind_text(st, 10, s->span_id);
    return sf_db_exec_stmt(db, st, NULL, err);
}

int sf_db_perf_event(struct sf_db *db, int64_t source_id, const char *event, size_t n,
                     int tracepoint, uint64_t records, int stored, struct sf_err *err)
{
    static const char ins[] = "INSERT INTO sample_events (source_id, event, kind, records, "
                              "stored) VALUES (?1, ?2, ?3, ?4, ?5)";
    sqlite3_stmt *st = sf_db_stmt(db, ins, err);

    if (st == NULL)
        return SF_E_DB;
    sqlite3_bind_int64(st, 1, source_id);
    sf_db_bind_textn(st, 2, event, n);
    sqlite3_bind_text(st, 3, tracepoint ? "tracepoint" : "sampling", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, records > INT64_MAX ? INT64_MAX : (int64_t)records);
    sqlite3_bind_int(st, 5, stored != 0);
    return sf_db_exec_stmt(db, st, NULL, err);
}

int sf_db_perf_offcpu(struct sf_db *db, int64_t source_id, const struct sf_offcpu *o,
                      struct sf_err *err)
{
    static const char ins[] = "INSERT INTO offcpu (source_id, ts_ns, end_ns, end_rule, pid, tid, "
                              "comm, state, reason, frame, stack_id, waker_tid, waker_stack_id) "
                              "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)";
    sqlite3_stmt *st = sf_db_stmt(db, ins, err);

    assert(o->end_ns >= o->ts_ns && o->end_rule != NULL);
    if (st == NULL)
        return SF_E_DB;
    sqlite3_bind_int64(st, 1, source_id);
    sqlite3_bind_int64(st, 2, o->ts_ns);
    sqlite3_bind_int64(st, 3, o->end_ns);
    sqlite3_bind_text(st, 4, o->end_rule, -1, SQLITE_STATIC);
    sf_db_bind_int(st, 5, o->pid);
    sqlite3_bind_int64(st, 6, o->tid);
    sf_db_bind_text(st, 7, o->comm);
    sf_db_bind_text(st, 8, o->state);
    sf_db_bind_text(st, 9, o->reason);
    sf_db_bind_text(st, 10, o->frame);
    sf_db_bind_int(st, 11, o->stack_id ? o->stack_id : SF_DB_NULL);
    sf_db_bind_int(st, 12, o->waker_tid);
    sf_db_bind_int(st, 13, o->waker_stack_id ? o->waker_stack_id : SF_DB_NULL);
    return sf_db_exec_stmt(db, st, NULL, err);
}

int sf_offcpu_runtime_file(const char *file, size_t n)
{
    static const char *const runtime[] = {"libc.so",   "libc-",    "libpthread", "ld-linux",
                                          "libstdc++", "libgcc_s", "libm.so",    "ld-musl"};
    const char *base = file + n;

    while (base > file && base[-1] != '/')
        base--;
    n = (size_t)(file + n - base);
    for (size_t i = 0; i < sizeof(runtime) / sizeof(runtime[0]); i++)
        if (n >= strlen(runtime[i]) && memcmp(base, runtime[i], strlen(runtime[i])) == 0)
            return 1;
    return 0;
}

void sf_offcpu_reason(const char *state, const char *stack, size_t len, char *out, size_t n)
{
    static const char *const skip[] = {"__traceiter_", "perf_trace_", "trace_event_",
                                       "__schedule",   "schedule",    "__cond_resched"};
    size_t e = len;

    if (n == 0)
        return;
    out[0] = 0;
    if (state && state[0] == 'R') {
        snprintf(out, n, "preempted");
        return;
    }
    while (e > 0) {
        size_t b = e, k, i;
        while (b > 0 && stack[b - 1] != ';')
            b--;
        if (b == 0)
            return; /* only the comm left */
        for (k = b; k < e && stack[k] != '+';)
            k++; /* "io_schedule+0x4f": the name */
        for (i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
            if (k - b >= strlen(skip[i]) && memcmp(stack + b, skip[i], strlen(skip[i])) == 0)
                break;
        if (i == sizeof(skip) / sizeof(skip[0])) {
            snprintf(out, n, "%.*s", (int)(k - b), stack + b);
            return;
        }
        e = b - 1;
    }
}
