/* Unit tests: lib/sf_db - create, migrate, batch, sources and de-duplication.
 * With an argument, writes a small database at that path and exits (used by
 * tests/scripts/t_db_shell.sh, which reads it back with the sqlite3 shell). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_test.h"
#include "sf_db.h"
#include "sf_err.h"
#include "sf_sha256.h"
#include "tap.h"

static int add_events(struct sf_db *db, int64_t src, int n, struct sf_err *err)
{
    static const char sql[] = "INSERT INTO span_events (source_id, ts_ns, kind, span_id) "
                              "VALUES (?1, ?2, 'begin', '00f067aa0ba902b7')";
    for (int i = 0; i < n; i++) {
        sqlite3_stmt *st = sf_db_stmt(db, sql, err);
        if (st == NULL)
            return SF_E_DB;
        sqlite3_bind_int64(st, 1, src);
        sqlite3_bind_int64(st, 2, i);
        if (sf_db_exec_stmt(db, st, NULL, err))
            return SF_E_DB;
    }
    return 0;
}

static void tmpname(char *buf, size_t n)
{
    snprintf(buf, n, "/tmp/sf_db_test_%d.db", (int)getpid());
    unlink(buf);
}

static void test_create_and_sources(void)
{
    struct sf_source_info in = {"tracefs", "trace.txt", "aa", 10, "monotonic", "test_db"};
    struct sf_db *db;
    struct sf_err err;
    char path[200];
    int64_t id = 0, id2 = 0, dup = 0;

    tmpname(path, sizeof(path));
    sf_err_clear(&err);
    TAP_EQ_INT(sf_db_open(&db, path, &err), 0, "create a new database");
    TAP_EQ_INT(db_count(db, "PRAGMA user_version"), SF_DB_SCHEMA_VERSION,
               "user_version is the schema version");
    TAP_EQ_INT(db_count(db,
                        "SELECT count(*) FROM sqlite_master WHERE type='table' AND name IN "
                        "('sources','connections','connection_events','spans','contexts',"
                        "'span_events','losses','span_intervals','stacks','samples','clock_fits')"),
               11, "every table of the contract exists");
    TAP_EQ_INT(sf_db_source_begin(db, &in, &id, &dup, &err), 0, "register a source");
    TAP_EQ_INT(
        db_count(db, "SELECT count(*) FROM sources WHERE status='partial' AND error='interrupted'"),
        1, "a running source is partial/interrupted until it ends");
    TAP_EQ_INT(add_events(db, id, 12345, &err), 0, "12345 rows through the batch writer");
    TAP_EQ_INT(sf_db_source_end(db, id, NULL, 12345, 0, &err), 0, "end the source");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM span_events"), 12345, "all rows committed");
    TAP_EQ_INT(
        db_count(db, "SELECT count(*) FROM sources WHERE status='complete' AND error IS NULL"), 1,
        "source complete");
    TAP_EQ_INT(sf_db_source_begin(db, &in, &id2, &dup, &err), SF_E_DUP,
               "same sha256 again is a duplicate");
    TAP_EQ_INT(dup, id, "the duplicate names the first source");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM sources"), 1, "no row written for the duplicate");
    in.kind = "perf";
    TAP_EQ_INT(sf_db_source_begin(db, &in, &id2, &dup, &err), 0,
               "same hash, other kind is not a duplicate");
    sf_db_source_end(db, id2, NULL, 0, 0, &err);
    TAP_EQ_INT(sf_db_close(db, &err), 0, "close");

    /* Reopen: no migration runs again, data is there. */
    TAP_EQ_INT(sf_db_open(&db, path, &err), 0, "reopen");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM span_events"), 12345, "rows survive reopening");
    sf_db_close(db, &err);
    db_cleanup(path);
}

/* A run that dies midway keeps its committed batches, marked partial; re-running
 * the same input replaces them instead of duplicating. */
static void test_crash_and_rerun(void)
{
    struct sf_source_info in = {"pcap", "x.pcap", "bb", 10, NULL, "test_db"};
    struct sf_db *db;
    struct sf_err err;
    char path[200];
    int64_t id = 0, dup = 0;

    tmpname(path, sizeof(path));
    sf_err_clear(&err);
    sf_db_open(&db, path, &err);
    sf_db_source_begin(db, &in, &id, &dup, &err);
    add_events(db, id, SF_DB_BATCH + 10, &err);
    sf_db_rollback(db); /* the "crash": the open batch is lost */
    sf_db_close(db, &err);
    sf_db_open(&db, path, &err);
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM span_events"), SF_DB_BATCH,
               "only whole batches survive a crash");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM sources WHERE status='partial'"), 1,
               "crashed source is partial");
    TAP_EQ_INT(sf_db_source_begin(db, &in, &id, &dup, &err), 0,
               "re-running a partial source is allowed");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM span_events"), 0, "its old rows were removed");
    add_events(db, id, 7, &err);
    sf_db_source_end(db, id, "packet 9: truncated", 9, 1, &err);
    TAP_EQ_INT(
        db_count(db,
                 "SELECT count(*) FROM sources WHERE status='partial' AND error LIKE 'packet 9%'"),
        1, "a failed run keeps its error text");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM span_events"), 7,
               "and the rows before the failure");
    sf_db_close(db, &err);
    db_cleanup(path);
}

static void test_stdin_hash_and_newer_schema(void)
{
    struct sf_source_info in = {"perf", "-", NULL, 0, NULL, "test_db"};
    struct sf_db *db;
    struct sf_err err;
    char path[200];
    int64_t a = 0, b = 0, dup = 0;

    tmpname(path, sizeof(path));
    sf_err_clear(&err);
    sf_db_open(&db, path, &err);
    sf_db_source_begin(db, &in, &a, &dup, &err);
    add_events(db, a, 3, &err);
    TAP_EQ_INT(sf_db_source_set_hash(db, a, "cc", 99, &dup, &err), 0,
               "hash known at the end of stdin");
    sf_db_source_end(db, a, NULL, 3, 0, &err);
    sf_db_source_begin(db, &in, &b, &dup, &err);
    add_events(db, b, 3, &err);
    TAP_EQ_INT(sf_db_source_set_hash(db, b, "cc", 99, &dup, &err), SF_E_DUP,
               "same stdin content twice is a duplicate");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM span_events"), 3,
               "the duplicate's rows were removed");
    sf_db_exec(db, "PRAGMA user_version = 99", &err);
    sf_db_close(db, &err);
    sf_err_clear(&err);
    TAP_EQ_INT(sf_db_open(&db, path, &err), SF_E_UNSUPPORTED, "a newer schema is refused");
    TAP_OK(strstr(err.msg, "newer") != NULL, "with a message saying so (%s)", err.msg);
    TAP_OK(db == NULL, "and no handle");
    db_cleanup(path);
    TAP_EQ_INT(sf_db_open(&db, "/nonexistent/dir/x.db", &err), SF_E_DB,
               "unwritable path is SF_E_DB");
}

/* The size of a file, -1 when it does not exist. */
static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    long n;

    if (f == NULL)
        return -1;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fclose(f);
    return n;
}

/* Readers never create or change; writers only take an empty file or spanfold's. */
static void test_modes(void)
{
    char path[200], other[220], cmd[600];
    struct sf_db *db = NULL;
    struct sf_err err;
    FILE *f;

    tmpname(path, sizeof(path));
    sf_err_clear(&err);
    TAP_EQ_INT(sf_db_open_mode(&db, path, SF_DB_READ, &err), SF_E_IO,
               "a reader on a missing path fails");
    TAP_OK(file_size(path) == -1, "and creates nothing");
    TAP_EQ_INT(sf_db_open_mode(&db, path, SF_DB_WRITE, &err), SF_E_IO,
               "SF_DB_WRITE (--refit) on a missing path fails too");
    f = fopen(path, "wb");
    fclose(f);
    TAP_EQ_INT(sf_db_open_mode(&db, path, SF_DB_READ, &err), SF_E_DB,
               "a reader on an empty file fails");
    TAP_OK(strstr(err.msg, "not a spanfold database") != NULL, "saying why (%s)", err.msg);
    TAP_OK(file_size(path) == 0, "and leaves it empty");
    TAP_EQ_INT(sf_db_open(&db, path, &err), 0, "an ingest tool takes an empty file");
    TAP_EQ_INT(db_count(db, "PRAGMA application_id"), SF_DB_APP_ID, "and marks it spanfold's");
    sf_db_close(db, &err);
    TAP_EQ_INT(sf_db_open_mode(&db, path, SF_DB_READ, &err), 0, "a reader opens it");
    TAP_EQ_INT(sf_db_exec(db, "INSERT INTO stacks (frames) VALUES ('a;b')", &err), SF_E_DB,
               "read-only: an INSERT fails");
    sf_db_close(db, &err);
    db_cleanup(path);

    /* Another program's SQLite file: refused by both, left exactly as it was. */
    snprintf(other, sizeof(other), "%s.other", path);
    unlink(other);
    snprintf(cmd, sizeof(cmd), "sqlite3 %s 'CREATE TABLE t(a); INSERT INTO t VALUES (1)'", other);
    if (system(cmd) != 0) {
        TAP_SKIP("foreign database", "sqlite3 shell not installed");
        return;
    }
    long before = file_size(other);
    TAP_EQ_INT(sf_db_open_mode(&db, other, SF_DB_READ, &err), SF_E_DB,
               "a reader refuses another program's database");
    TAP_EQ_INT(sf_db_open(&db, other, &err), SF_E_DB, "so does an ingest tool");
    TAP_OK(strstr(err.msg, "not a spanfold database") != NULL, "saying why (%s)", err.msg);
    TAP_OK(file_size(other) == before, "the file is unchanged (%ld bytes)", before);
    snprintf(cmd, sizeof(cmd),
             "test \"$(sqlite3 %s 'PRAGMA journal_mode; SELECT count(*) FROM "
             "sqlite_master')\" = \"$(printf 'delete\\n1')\"",
             other);
    TAP_OK(system(cmd) == 0, "still one table, still not WAL");
    unlink(other);
}

/* Two handles are two owners (the locks are per open file description), so one
 * process shows what two processes do. */
static void test_ownership(void)
{
    struct sf_source_info in = {"pcap", "x.pcap", "ee", 10, NULL, "test_db"};
    struct sf_db *a, *b;
    struct sf_err err;
    char path[200];
    int64_t ia = 0, ib = 0, dup = 0;

    tmpname(path, sizeof(path));
    sf_err_clear(&err);
    sf_db_open(&a, path, &err);
    sf_db_open(&b, path, &err);
    TAP_EQ_INT(sf_db_source_begin(a, &in, &ia, &dup, &err), 0, "writer A registers a source");
    TAP_EQ_INT(sf_db_source_owned(b, ia), 1, "B sees that a live writer owns it");
    TAP_EQ_INT(sf_db_source_owned(a, ia), 0, "A does not count itself");
    TAP_EQ_INT(sf_db_source_begin(b, &in, &ib, &dup, &err), SF_E_BUSY,
               "B on the same input: busy, not a take-over");
    TAP_EQ_INT(dup, ia, "naming A's source");
    TAP_OK(strstr(err.msg, "another process is ingesting") != NULL, "message: %s", err.msg);
    TAP_EQ_INT(add_events(a, ia, 10, &err), 0, "A goes on writing under its id");
    TAP_EQ_INT(sf_db_source_end(a, ia, NULL, 10, 0, &err), 0, "A ends");
    TAP_EQ_INT(sf_db_source_owned(b, ia), 0, "and owns it no more");
    TAP_EQ_INT(sf_db_source_begin(b, &in, &ib, &dup, &err), SF_E_DUP, "B now finds it complete");
    TAP_EQ_INT(db_count(b, "SELECT count(*) FROM span_events"), 10, "A's rows, once");

    /* A dies without ending: its lock goes with its descriptor. */
    in.sha256 = "ff";
    sf_db_source_begin(a, &in, &ia, &dup, &err);
    add_events(a, ia, SF_DB_BATCH, &err);
    sf_db_rollback(a);
    sf_db_close(a, &err);
    TAP_EQ_INT(sf_db_source_owned(b, ia), 0, "a dead writer owns nothing");
    TAP_EQ_INT(sf_db_source_begin(b, &in, &ib, &dup, &err), 0, "B takes the source over");
    TAP_EQ_INT(db_count(b, "SELECT count(*) FROM sources WHERE sha256 = 'ff'"), 1,
               "one source for the input");
    sf_db_source_end(b, ib, NULL, 0, 0, &err);
    sf_db_close(b, &err);
    db_cleanup(path);
}

/* An in-memory database is private: no owner-lock file appears beside it. */
static void test_private(void)
{
    struct sf_source_info in = {"pcap", "m.pcap", "cc", 1, NULL, "test_db"};
    struct sf_db *db = NULL;
    struct sf_err err;
    int64_t id = 0, dup = 0;

    sf_err_clear(&err);
    unlink(":memory:" SF_DB_OWNER_SUFFIX);
    TAP_EQ_INT(sf_db_open(&db, ":memory:", &err), 0, "open :memory:");
    TAP_EQ_INT(sf_db_source_begin(db, &in, &id, &dup, &err), 0, "a source in it");
    TAP_EQ_INT(sf_db_source_end(db, id, NULL, 1, 0, &err), 0, "ends");
    TAP_OK(access(":memory:" SF_DB_OWNER_SUFFIX, F_OK) != 0, "no :memory:%s file in the cwd",
           SF_DB_OWNER_SUFFIX);
    sf_db_close(db, &err);
}

/* stdin: the hash is known at the end; two runs racing there keep one copy. */
static void test_stdin_race(void)
{
    struct sf_source_info in = {"perf", "-", NULL, 0, NULL, "test_db"};
    struct sf_db *a, *b;
    struct sf_err err;
    char path[200];
    int64_t ia = 0, ib = 0, dup = 0;

    tmpname(path, sizeof(path));
    sf_err_clear(&err);
    sf_db_open(&a, path, &err);
    sf_db_open(&b, path, &err);
    sf_db_source_begin(a, &in, &ia, &dup, &err);
    sf_db_source_begin(b, &in, &ib, &dup, &err);
    add_events(a, ia, 3, &err);
    add_events(b, ib, 3, &err);
    TAP_EQ_INT(sf_db_source_set_hash(a, ia, "99", 5, &dup, &err), 0, "A sets the hash first");
    TAP_EQ_INT(sf_db_source_set_hash(b, ib, "99", 5, &dup, &err), SF_E_DUP,
               "B, still before A ends, is the duplicate");
    sf_db_source_end(a, ia, NULL, 3, 0, &err);
    TAP_EQ_INT(db_count(a, "SELECT count(*) FROM span_events"), 3, "one copy of the rows");
    sf_db_close(a, &err);
    sf_db_close(b, &err);
    db_cleanup(path);
}

/* A version 1 file (the tables the migrations touch, as v1 had them, with a row each) is
 * brought forward: new columns, old rows marked as markers, contexts rebuilt (3 -> 4). */
static void test_migrate_1_to_2(void)
{
    struct sf_db *db;
    struct sf_err err;
    sqlite3 *h;
    char path[200];

    tmpname(path, sizeof(path));
    sf_err_clear(&err);
    sqlite3_open(path, &h);
    sqlite3_exec(h,
                 "CREATE TABLE sources (id INTEGER PRIMARY KEY, kind TEXT);"
                 "CREATE TABLE spans (id INTEGER PRIMARY KEY, span_id TEXT);"
                 "CREATE TABLE span_events (id INTEGER PRIMARY KEY, source_id INTEGER, kind TEXT);"
                 "CREATE TABLE span_intervals (id INTEGER PRIMARY KEY, span_id TEXT);"
                 "CREATE TABLE contexts (id INTEGER PRIMARY KEY, span_row INTEGER NOT NULL "
                 "REFERENCES spans(id) ON DELETE CASCADE, direction TEXT NOT NULL DEFAULT "
                 "'request', format TEXT NOT NULL CHECK (format = 'b3-multi' OR format = "
                 "'traceparent'), raw TEXT, trace_id TEXT, span_id TEXT, parent_span_id TEXT, "
                 "sampled INTEGER, debug INTEGER, flags INTEGER, trace_id_64 INTEGER NOT NULL "
                 "DEFAULT 0, tracestate TEXT, valid INTEGER NOT NULL, error TEXT);"
                 "INSERT INTO contexts (id, span_row, format, span_id, valid) VALUES "
                 "(7, 1, 'traceparent', '00f067aa0ba902b7', 1);"
                 "INSERT INTO sources VALUES (1, 'tracefs');"
                 "INSERT INTO spans VALUES (1, '00f067aa0ba902b7');"
                 "INSERT INTO span_events VALUES (1, 1, 'begin');"
                 "INSERT INTO span_intervals VALUES (1, '00f067aa0ba902b7');"
                 "PRAGMA user_version = 1;",
                 NULL, NULL, NULL);
    sqlite3_close(h);
    TAP_EQ_INT(sf_db_open(&db, path, &err), 0, "a version 1 file opens (%s)", err.msg);
    if (db == NULL)
        return;
    TAP_EQ_INT(db_count(db, "PRAGMA user_version"), SF_DB_SCHEMA_VERSION,
               "migrated to the latest version");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM spans WHERE req_seq_start IS NULL AND "
                            "req_seq_end IS NULL AND resp_seq_start IS NULL AND "
                            "resp_seq_end IS NULL"),
               1, "spans has the sequence range columns, NULL on the old row");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM span_events WHERE source = 'marker'"), 1,
               "an old span event is a marker");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM span_intervals WHERE source = 'marker'"), 1,
               "an old interval is a marker's");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM shared_intervals"), 0, "shared_intervals exists");
    TAP_EQ_INT(db_count(db, "SELECT span_row FROM contexts WHERE id = 7 AND "
                            "span_id = '00f067aa0ba902b7'"),
               1, "the old context is kept, with its id");
    TAP_EQ_INT(
        sf_db_exec(db, "INSERT INTO contexts (span_row, format, valid) VALUES (1, 'sw8', 1)", &err),
        0, "contexts.format has no CHECK on a list of names");
    TAP_OK(sf_db_exec(db, "INSERT INTO span_intervals (span_id, source) VALUES ('x', 'guess')",
                      &err) == SF_E_DB,
           "source takes only marker or socket");
    sf_db_close(db, &err);
    db_cleanup(path);
}

/* The indexes' sql in sqlite_schema order, one per line, into buf (size n). */
static void index_sql(struct sf_db *db, char *buf, size_t n)
{
    sqlite3_stmt *st;
    size_t o = 0;

    buf[0] = 0;
    if (sqlite3_prepare_v2(sf_db_handle(db),
                           "SELECT sql FROM sqlite_schema WHERE type = 'index' AND sql NOT NULL "
                           "ORDER BY rowid",
                           -1, &st, NULL) != SQLITE_OK)
        return;
    while (sqlite3_step(st) == SQLITE_ROW && o < n)
        o += (size_t)snprintf(buf + o, n - o, "%s\n", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
}

/* An ingest into empty bulk tables drops their indexes and builds them back at its
 * end exactly as schema.sql has them; one into a database with rows keeps them. */
static void test_bulk_indexes(void)
{
    struct sf_source_info a = {"tracefs", "a.txt", "a1", 10, "monotonic", "test_db"};
    struct sf_source_info b = {"tracefs", "b.txt", "b1", 10, "monotonic", "test_db"};
    static char before[8192], after[8192];
    struct sf_db *db;
    struct sf_err err;
    char path[200];
    int64_t id = 0, dup = 0, all;

    tmpname(path, sizeof(path));
    sf_err_clear(&err);
    TAP_EQ_INT(sf_db_open(&db, path, &err), 0, "bulk indexes: create");
    index_sql(db, before, sizeof(before));
    all = db_count(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'index'");
    TAP_EQ_INT(sf_db_source_begin(db, &a, &id, &dup, &err), 0, "a first source");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'span_events_span' "
                            "OR name = 'spans_trace_id' OR name = 'samples_span'"),
               0, "its ingest runs without the bulk tables' indexes");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'sources_sha256'"), 1,
               "and keeps the others");
    TAP_EQ_INT(add_events(db, id, 7000, &err), 0, "rows across a batch");
    TAP_EQ_INT(sf_db_source_end(db, id, NULL, 7000, 0, &err), 0, "end it");
    index_sql(db, after, sizeof(after));
    TAP_EQ_STR(after, before, "the indexes are back, as schema.sql makes them, in its order");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM span_events INDEXED BY span_events_span "
                            "WHERE span_id = '00f067aa0ba902b7'"),
               7000, "and hold every row");
    TAP_EQ_INT(sf_db_source_begin(db, &b, &id, &dup, &err), 0, "a second source");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'span_events_span' "
                            "OR name = 'span_events_tid_ts'"),
               2, "into a table with rows: its indexes stay");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM sqlite_schema WHERE name = 'samples_span'"), 0,
               "an empty table's are deferred again (a profile after a capture)");
    TAP_EQ_INT(sf_db_source_end(db, id, NULL, 0, 0, &err), 0, "end it");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'index'"), all,
               "and every index is back");
    index_sql(db, after, sizeof(after));
    TAP_EQ_STR(after, before, "in the schema's order");
    sf_db_close(db, &err);
    db_cleanup(path);

    TAP_EQ_INT(sf_db_open(&db, path, &err), 0, "bulk indexes: a source that never ends");
    TAP_EQ_INT(sf_db_source_begin(db, &a, &id, &dup, &err), 0, "begins");
    TAP_EQ_INT(add_events(db, id, 10, &err), 0, "writes rows");
    TAP_EQ_INT(sf_db_close(db, &err), 0, "and closes");
    TAP_EQ_INT(sf_db_open(&db, path, &err), 0, "reopen");
    index_sql(db, after, sizeof(after));
    TAP_EQ_STR(after, before, "the close built the indexes");
    sf_db_close(db, &err);
    db_cleanup(path);
}

/* An input with a size and no hash yet (hashed while read): the first of its size
 * is taken without hashing; a second run of it hashes it first and finds the copy;
 * another input of the same size is hashed and taken. */
static void test_hash_at_end(void)
{
    char path[200], f[220], g[220], hex[SF_SHA256_HEX_LEN + 1];
    struct sf_source_info in = {"pcap", f, NULL, 6, "realtime", "test_db"};
    struct sf_db *db;
    struct sf_err err;
    int64_t id = 0, id2 = 0, dup = 0;
    uint64_t bytes;
    FILE *fp;

    tmpname(path, sizeof(path));
    snprintf(f, sizeof(f), "%s.f", path);
    snprintf(g, sizeof(g), "%s.g", path);
    if ((fp = fopen(f, "w")))
        fputs("abcdef", fp), fclose(fp);
    if ((fp = fopen(g, "w")))
        fputs("ghijkl", fp), fclose(fp);
    sf_err_clear(&err);
    TAP_EQ_INT(sf_db_open(&db, path, &err), 0, "hash at end: create");
    TAP_EQ_INT(sf_db_source_begin(db, &in, &id, &dup, &err), 0, "a first input of its size");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM sources WHERE sha256 IS NULL AND bytes = 6"), 1,
               "is registered with its size and no hash");
    TAP_EQ_INT(sf_sha256_file(f, hex, &bytes), 0, "hash it");
    TAP_EQ_INT(sf_db_source_set_hash(db, id, hex, bytes, &dup, &err), 0, "set at the end");
    TAP_EQ_INT(sf_db_source_end(db, id, NULL, 1, 0, &err), 0, "end it");
    TAP_EQ_INT(sf_db_source_begin(db, &in, &id2, &dup, &err), SF_E_DUP,
               "the same input again is hashed first and is a copy");
    TAP_EQ_INT(dup, id, "of the first source");
    in.path = g;
    TAP_EQ_INT(sf_db_source_begin(db, &in, &id2, &dup, &err), 0,
               "another input of the same size is taken");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM sources WHERE sha256 IS NOT NULL AND "
                            "status = 'partial'"),
               1, "with its hash from the start");
    TAP_EQ_INT(sf_db_source_end(db, id2, NULL, 1, 0, &err), 0, "end it");
    sf_db_close(db, &err);
    db_cleanup(path);
    unlink(f);
    unlink(g);
}

/* A batch of INSERTs runs without foreign-key checks; a DELETE through the same
 * writer ends it first and cascades, and the checks are on again after it. */
static void test_fk_batches(void)
{
    struct sf_source_info in = {"tracefs", "f.txt", "f1", 10, "monotonic", "test_db"};
    struct sf_db *db;
    struct sf_err err;
    sqlite3_stmt *st;
    char path[200];
    int64_t id = 0, dup = 0;

    tmpname(path, sizeof(path));
    sf_err_clear(&err);
    TAP_EQ_INT(sf_db_open(&db, path, &err), 0, "fk batches: create");
    TAP_EQ_INT(db_count(db, "PRAGMA foreign_keys"), 1, "a writer opens with foreign keys on");
    TAP_EQ_INT(sf_db_source_begin(db, &in, &id, &dup, &err), 0, "a source");
    TAP_EQ_INT(add_events(db, id, 10, &err), 0, "rows in a batch");
    TAP_EQ_INT(db_count(db, "PRAGMA foreign_keys"), 0, "the batch of INSERTs runs without checks");
    st = sf_db_stmt(db, "DELETE FROM sources WHERE id = ?1", &err);
    sqlite3_bind_int64(st, 1, id);
    TAP_EQ_INT(sf_db_exec_stmt(db, st, NULL, &err), 0, "a DELETE through the batch writer");
    TAP_EQ_INT(db_count(db, "PRAGMA foreign_keys"), 1, "runs with the checks on");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM span_events"), 0,
               "and cascades to the batch's rows, committed before it");
    TAP_EQ_INT(sf_db_commit(db, &err), 0, "commit");
    TAP_EQ_INT(db_count(db, "PRAGMA foreign_keys"), 1, "the checks stay on outside a batch");
    TAP_EQ_INT(add_events(db, id, 3, &err), 0, "a batch of rows naming no source");
    TAP_EQ_INT(sf_db_commit(db, &err), 0, "commits (nothing checks them in a batch)");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM pragma_foreign_key_check('span_events')"), 3,
               "and PRAGMA foreign_key_check, as the tests run it, finds them");
    TAP_EQ_INT(db_count(db, "PRAGMA foreign_keys"), 1, "the checks are on after the commit");
    sf_db_close(db, &err);
    db_cleanup(path);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        struct sf_source_info in = {"tracefs", "t.txt", "dd", 1, "monotonic", "test_db"};
        struct sf_db *db;
        struct sf_err err;
        int64_t id, dup;

        sf_err_clear(&err);
        if (sf_db_open(&db, argv[1], &err) || sf_db_source_begin(db, &in, &id, &dup, &err) ||
            add_events(db, id, 42, &err) || sf_db_source_end(db, id, NULL, 42, 0, &err) ||
            sf_db_close(db, &err)) {
            fprintf(stderr, "test_db: %s\n", err.msg);
            return 2;
        }
        return 0;
    }
    test_create_and_sources();
    test_crash_and_rerun();
    test_stdin_hash_and_newer_schema();
    test_modes();
    test_ownership();
    test_private();
    test_stdin_race();
    test_migrate_1_to_2();
    test_bulk_indexes();
    test_hash_at_end();
    test_fk_batches();
    return tap_done();
}
