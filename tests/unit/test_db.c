/* Unit tests: lib/sf_db - create, migrate, batch, sources and de-duplication.
 * With an argument, writes a small database at that path and exits (used by
 * tests/scripts/t_db_shell.sh, which reads it back with the sqlite3 shell). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db_test.h"
#include "sf_db.h"
#include "sf_err.h"
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

/* A version 1 file (the tables the 1 -> 2 migration touches, as v1 had them, with a
 * row each) is brought forward: new columns, old rows marked as markers. */
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
    TAP_EQ_INT(db_count(db, "PRAGMA user_version"), 2, "migrated to version 2");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM spans WHERE req_seq_start IS NULL AND "
                            "req_seq_end IS NULL AND resp_seq_start IS NULL AND "
                            "resp_seq_end IS NULL"),
               1, "spans has the sequence range columns, NULL on the old row");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM span_events WHERE source = 'marker'"), 1,
               "an old span event is a marker");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM span_intervals WHERE source = 'marker'"), 1,
               "an old interval is a marker's");
    TAP_EQ_INT(db_count(db, "SELECT count(*) FROM shared_intervals"), 0, "shared_intervals exists");
    TAP_OK(sf_db_exec(db, "INSERT INTO span_intervals (span_id, source) VALUES ('x', 'guess')",
                      &err) == SF_E_DB,
           "source takes only marker or socket");
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
    test_migrate_1_to_2();
    return tap_done();
}
