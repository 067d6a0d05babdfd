/* sf_db.c - open, migrate, batches and statements (see sf_db.h); the sources are
 * sf_db_source.c's. */
#include "sf_db.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sf_db_int.h"
#include "sf_fail.h"
#include "sf_opt.h"

/* Forward migrations: migrations[v] takes a database from version v to v+1.
 * Version 0 is an empty file: it gets the whole schema (always the latest version)
 * at once, so migrations[0] is never run; the others bring older files forward and
 * must leave exactly what schema.sql creates. */
static const char *const migrations[] = {
    NULL,
    /* 1 -> 2: what socket events need (spantrace --sockets, tracefs2spans) */
    "ALTER TABLE spans ADD COLUMN req_seq_start INTEGER;"
    "ALTER TABLE spans ADD COLUMN req_seq_end INTEGER;"
    "ALTER TABLE spans ADD COLUMN resp_seq_start INTEGER;"
    "ALTER TABLE spans ADD COLUMN resp_seq_end INTEGER;"
    "ALTER TABLE span_events ADD COLUMN source TEXT NOT NULL DEFAULT 'marker' "
    "CHECK (source IN ('marker', 'socket'));"
    "ALTER TABLE span_intervals ADD COLUMN source TEXT NOT NULL DEFAULT 'marker' "
    "CHECK (source IN ('marker', 'socket'));"
    "CREATE TABLE shared_intervals (id INTEGER PRIMARY KEY, source_id INTEGER NOT NULL "
    "REFERENCES sources(id) ON DELETE CASCADE, pid INTEGER, tid INTEGER NOT NULL, "
    "start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, spans INTEGER NOT NULL, "
    "span_ids TEXT NOT NULL);"
    "CREATE INDEX shared_intervals_tid ON shared_intervals(tid, start_ns);",
    /* 2 -> 3: spans.delivered, 0 for a TLS 0-RTT request the server rejected (pcap2spans) */
    "ALTER TABLE spans ADD COLUMN delivered INTEGER NOT NULL DEFAULT 1;",
    /* 3 -> 4: contexts.format loses its CHECK on the list of names, so that a new trace
     * format (lib/sf_tc_formats.h) needs no migration.  SQLite cannot drop a CHECK: the
     * table is rebuilt by the 12 steps of its ALTER TABLE documentation ("making other
     * kinds of table schema changes"), inside migrate()'s transaction (step 2).  Foreign
     * keys stay on (step 1 cannot run in a transaction, and need not: no table, trigger
     * or view refers to contexts, and its rows keep their ids and span_row), so step 10's
     * check is made on every row copied: one whose span is gone fails the migration,
     * rolled back whole. */
    "CREATE TABLE contexts_v4 ("
    " id INTEGER PRIMARY KEY,"
    " span_row INTEGER NOT NULL REFERENCES spans(id) ON DELETE CASCADE,"
    " direction TEXT NOT NULL DEFAULT 'request' CHECK (direction IN ('request', 'response')),"
    " format TEXT NOT NULL, raw TEXT, trace_id TEXT, span_id TEXT, parent_span_id TEXT,"
    " sampled INTEGER, debug INTEGER, flags INTEGER, trace_id_64 INTEGER NOT NULL DEFAULT 0,"
    " tracestate TEXT, valid INTEGER NOT NULL, error TEXT);"
    "INSERT INTO contexts_v4 (id, span_row, direction, format, raw, trace_id, span_id,"
    " parent_span_id, sampled, debug, flags, trace_id_64, tracestate, valid, error)"
    " SELECT id, span_row, direction, format, raw, trace_id, span_id, parent_span_id, sampled,"
    " debug, flags, trace_id_64, tracestate, valid, error FROM contexts;"
    "DROP TABLE contexts;"
    "ALTER TABLE contexts_v4 RENAME TO contexts;"
    "CREATE INDEX contexts_span_row ON contexts(span_row);"
    "CREATE INDEX contexts_span_id ON contexts(span_id);",
    /* 4 -> 5: sample_events, what a perf source recorded besides its CPU samples; offcpu,
     * the intervals its sched_switch records give */
    "CREATE TABLE sample_events (source_id INTEGER NOT NULL REFERENCES sources(id) "
    "ON DELETE CASCADE, event TEXT NOT NULL, kind TEXT NOT NULL CHECK (kind IN "
    "('sampling', 'tracepoint')), records INTEGER NOT NULL, stored INTEGER NOT NULL, "
    "PRIMARY KEY (source_id, event));"
    "CREATE TABLE offcpu (id INTEGER PRIMARY KEY, source_id INTEGER NOT NULL REFERENCES "
    "sources(id) ON DELETE CASCADE, ts_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL, end_rule "
    "TEXT NOT NULL CHECK (end_rule IN ('switch-in', 'next-event')), pid INTEGER, tid INTEGER "
    "NOT NULL, comm TEXT, state TEXT, reason TEXT, frame TEXT, stack_id INTEGER REFERENCES "
    "stacks(id), "
    "waker_tid INTEGER, waker_stack_id INTEGER REFERENCES stacks(id), span_id TEXT);"
    "CREATE INDEX offcpu_tid_ts ON offcpu(tid, ts_ns);"
    "CREATE INDEX offcpu_span ON offcpu(span_id);",
    /* 5 -> 6: span_headers, the request headers kept for the sampling attributes */
    "CREATE TABLE span_headers (id INTEGER PRIMARY KEY, span_row INTEGER NOT NULL REFERENCES "
    "spans(id) ON DELETE CASCADE, name TEXT NOT NULL, value TEXT NOT NULL);"
    "CREATE INDEX span_headers_span_row ON span_headers(span_row);",
    /* 6 -> 7: JSON-RPC calls as spans (pcap2spans/rpc.h): their own columns */
    "ALTER TABLE spans ADD COLUMN rpc_messages INTEGER;"
    "ALTER TABLE spans ADD COLUMN rpc_id TEXT;"
    "ALTER TABLE spans ADD COLUMN rpc_direction TEXT;"
    "ALTER TABLE spans ADD COLUMN rpc_session TEXT;"
    "ALTER TABLE spans ADD COLUMN rpc_name TEXT;"
    "ALTER TABLE spans ADD COLUMN rpc_error_code INTEGER;"
    "ALTER TABLE spans ADD COLUMN rpc_error TEXT;"
    "ALTER TABLE spans ADD COLUMN rpc_tool_error INTEGER;"
    "ALTER TABLE spans ADD COLUMN temperature REAL;"
    "ALTER TABLE spans ADD COLUMN top_p REAL;"
    "ALTER TABLE spans ADD COLUMN max_tokens INTEGER;"
    "ALTER TABLE spans ADD COLUMN stop_sequences INTEGER;"
    "ALTER TABLE spans ADD COLUMN model_hint TEXT;",
    /* 7 -> 8: a downstream call's parent from socket events (tracefs2spans/sockets.c) */
    "ALTER TABLE spans ADD COLUMN parent_source INTEGER;",
};

int sf_dbi_fail(struct sf_db *db, struct sf_err *err, const char *what)
{
    return sf_err_set(err, SF_E_DB, UINT64_MAX, "%s: %s", what,
                      db && db->h ? sqlite3_errmsg(db->h) : "cannot open");
}

int sf_db_exec(struct sf_db *db, const char *sql, struct sf_err *err)
{
    char *msg = NULL;

    if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
        db->last_err = sqlite3_errcode(db->h);
        sf_err_set(err, SF_E_DB, UINT64_MAX, "sqlite: %s", msg ? msg : "error");
        sqlite3_free(msg);
        return SF_E_DB;
    }
    return 0;
}

/* The integer a one-row query returns in *v.  Returns 0 or SF_E_DB. */
int sf_dbi_query_int(struct sf_db *db, const char *sql, int64_t *v, struct sf_err *err)
{
    sqlite3_stmt *st;
    int rc;

    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK) {
        db->last_err = sqlite3_errcode(db->h);
        return sf_dbi_fail(db, err, "reading the database header");
    }
    rc = sqlite3_step(st);
    *v = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    if (rc != SQLITE_ROW)
        db->last_err = sqlite3_errcode(db->h);
    rc = rc == SQLITE_ROW ? 0 : sf_dbi_fail(db, err, "reading the database header");
    sqlite3_finalize(st);
    return rc;
}

/* Whose file is this?  *version gets user_version, or -1 for an empty file (no
 * tables: ours to create); *marked is 1 when application_id is spanfold's.
 * Anything else than spanfold's (application_id, or before it was set,
 * user_version >= 1 and a sources table) is SF_E_DB. */
static int identify(struct sf_db *db, int *version, int *marked, struct sf_err *err)
{
    int64_t app, ver, tables, sources;
    int rc;

    /* one snapshot: another process may be creating the file meanwhile */
    if (sqlite3_get_autocommit(db->h)) {
        if ((rc = sf_db_exec(db, "BEGIN", err)))
            return rc;
        rc = identify(db, version, marked, err);
        sf_db_exec(db, rc ? "ROLLBACK" : "COMMIT", rc ? NULL : err);
        return rc;
    }
    if ((rc = sf_dbi_query_int(db, "PRAGMA application_id", &app, err)) ||
        (rc = sf_dbi_query_int(db, "PRAGMA user_version", &ver, err)) ||
        (rc = sf_dbi_query_int(db, "SELECT count(*) FROM sqlite_master", &tables, err)) ||
        (rc = sf_dbi_query_int(db,
                               "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                               "name = 'sources'",
                               &sources, err)))
        return rc;
    *version = (int)ver;
    *marked = app == SF_DB_APP_ID;
    if (app == SF_DB_APP_ID || (app == 0 && ver >= 1 && sources == 1))
        return 0;
    if (app == 0 && ver == 0 && tables == 0) {
        *version = -1;
        return 0;
    }
    return sf_err_set(err, SF_E_DB, UINT64_MAX,
                      "not a spanfold database (application_id 0x%llx, user_version %lld, "
                      "%lld tables); left unchanged",
                      (unsigned long long)(uint32_t)app, (long long)ver, (long long)tables);
}

static int migrate(struct sf_db *db, struct sf_err *err)
{
    const int latest = (int)(sizeof(migrations) / sizeof(migrations[0]));
    char sql[64];
    int v, marked, rc;

    /* An exclusive transaction so two tools starting at once do not both migrate. */
    if ((rc = sf_db_exec(db, "BEGIN EXCLUSIVE", err)))
        return rc;
    if ((rc = identify(db, &v, &marked, err)))
        goto fail;
    if (v > latest) {
        sf_db_exec(db, "ROLLBACK", NULL);
        return sf_err_set(err, SF_E_UNSUPPORTED, UINT64_MAX,
                          "database schema version %d is newer than this build (%d)", v, latest);
    }
    if (v <= 0) { /* -1: an empty file, 0: no schema yet */
        if ((rc = sf_db_exec(db, sf_db_schema_sql, err))) {
            sf_err_prefix(err, "creating schema %d: ", latest);
            goto fail;
        }
        v = latest;
        snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v);
        if ((rc = sf_db_exec(db, sql, err)))
            goto fail;
    }
    for (; v < latest; v++) {
        if ((rc = sf_db_exec(db, migrations[v], err))) {
            sf_err_prefix(err, "migrating schema %d to %d: ", v, v + 1);
            goto fail;
        }
        snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v + 1);
        if ((rc = sf_db_exec(db, sql, err)))
            goto fail;
    }
    /* also marks a database written before application_id was set */
    snprintf(sql, sizeof(sql), "PRAGMA application_id = %d", SF_DB_APP_ID);
    if ((rc = sf_db_exec(db, sql, err)))
        goto fail;
    return sf_db_exec(db, "COMMIT", err);
fail:
    sf_db_exec(db, "ROLLBACK", NULL);
    return rc;
}

/* Writers: check the file is ours before changing anything, then WAL and migrate. */
static int setup_writer(struct sf_db *db, struct sf_err *err)
{
    const int latest = (int)(sizeof(migrations) / sizeof(migrations[0]));
    int v, marked, rc;

    if ((rc = identify(db, &v, &marked, err)))
        return rc;
    if (v < 0 && db->mode != SF_DB_CREATE)
        return sf_err_set(err, SF_E_DB, UINT64_MAX, "empty file, not a spanfold database");
    if ((rc = sf_db_exec(db,
                         "PRAGMA foreign_keys = ON;"
                         "PRAGMA journal_mode = WAL;"
                         "PRAGMA synchronous = NORMAL;",
                         err)))
        return rc;
    /* Up to date: no exclusive lock, so opening never waits for a running ingest. */
    if (v == latest && marked)
        return 0;
    return migrate(db, err);
}

static int setup_reader(struct sf_db *db, struct sf_err *err)
{
    const int latest = (int)(sizeof(migrations) / sizeof(migrations[0]));
    int v, marked, rc;

    if ((rc = identify(db, &v, &marked, err)))
        return rc;
    if (v < 0)
        return sf_err_set(err, SF_E_DB, UINT64_MAX, "empty file, not a spanfold database");
    if (v != latest)
        return sf_err_set(err, SF_E_UNSUPPORTED, UINT64_MAX,
                          "database schema version %d, this build reads %d%s", v, latest,
                          v < latest ? " (an ingest tool with --db migrates it)" : "");
    return 0;
}

/* 1 when the last failure was a lock held by another connection: worth a retry. */
static int was_busy(struct sf_db *db)
{
    int e = db->last_err & 0xff;
    return e == SQLITE_BUSY || e == SQLITE_LOCKED;
}

static long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sf_dbi_sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* "file:PATH?immutable=1" with PATH percent-encoded, for read-only media. */
static int immutable_uri(const char *path, char *out, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;

    o += (size_t)snprintf(out, n, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p && o + 4 < n; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            strchr("/-._~", *p)) {
            out[o++] = (char)*p;
        } else {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    if (o + sizeof("?immutable=1") > n)
        return -1;
    memcpy(out + o, "?immutable=1", sizeof("?immutable=1"));
    return 0;
}

static int open_handle(struct sf_db *db, const char *path, int immutable, struct sf_err *err)
{
    char uri[4200];
    int flags = db->mode == SF_DB_READ ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
    int rc;

    if (db->mode == SF_DB_CREATE)
        flags |= SQLITE_OPEN_CREATE;
    if (immutable && immutable_uri(path, uri, sizeof(uri)))
        return sf_err_set(err, SF_E_DB, UINT64_MAX, "path too long");
    rc = sqlite3_open_v2(immutable ? uri : path, &db->h, flags | (immutable ? SQLITE_OPEN_URI : 0),
                         NULL);
    if (rc != SQLITE_OK) {
        /* without a handle (out of memory) only the code is left to say why */
        rc = sf_err_set(err, SF_E_DB, UINT64_MAX, "cannot open: %s",
                        db->h ? sqlite3_errmsg(db->h) : sqlite3_errstr(rc));
        sqlite3_close(db->h);
        db->h = NULL;
        return rc;
    }
    /* Tools run side by side on one file; wait for a lock rather than fail. */
    sqlite3_busy_timeout(db->h, SF_DB_BUSY_MS);
    return 0;
}

/* Open and set up; creation races with another writer are retried until
 * SF_DB_BUSY_MS: SQLite does not always wait (a reader that must become a writer
 * gets SQLITE_BUSY at once, to avoid a deadlock), and a half-made file is only
 * ever seen inside the creator's exclusive transaction. */
static int open_setup(struct sf_db *db, const char *path, struct sf_err *err)
{
    long deadline = now_ms() + SF_DB_BUSY_MS;
    int rc, immutable = 0;

    for (;;) {
        db->last_err = 0;
        if ((rc = open_handle(db, path, immutable, err)))
            return rc;
        rc = db->mode == SF_DB_READ ? setup_reader(db, err) : setup_writer(db, err);
        if (rc == 0)
            return 0;
        /* A WAL database on read-only media: no -shm can be made; nobody writes it. */
        int e = db->last_err & 0xff;
        int retry_ro = db->mode == SF_DB_READ && !immutable &&
                       (e == SQLITE_CANTOPEN || e == SQLITE_READONLY) && access(path, W_OK) != 0;
        int retry_busy = db->mode != SF_DB_READ && was_busy(db) && now_ms() < deadline;
        sqlite3_close(db->h);
        db->h = NULL;
        if (retry_ro)
            immutable = 1;
        else if (retry_busy)
            sf_dbi_sleep_ms(20);
        else
            return rc;
        if (err)
            sf_err_clear(err);
    }
}

/* SQLite's in-memory and temporary databases (":memory:", "", a "file::memory:" URI)
 * are private to their connection: no other process can write them. */
static int private_db(const char *path)
{
    return path[0] == 0 || strcmp(path, ":memory:") == 0 || strncmp(path, "file::memory:", 13) == 0;
}

int sf_db_open_mode(struct sf_db **out, const char *path, enum sf_db_mode mode, struct sf_err *err)
{
    struct sf_db *db;
    struct stat sb;
    int rc;

    *out = NULL;
    if (err)
        sf_err_clear(err);
    if (sf_fail_setup())
        return sf_err_set(
            err, SF_E_USAGE, UINT64_MAX,
            "SF_FAIL_AT wants alloc:N[:K], write:N[:K] or stop:N[:K], set before any database use");
    /* Readers and --refit never create: a mistyped path is an error, not a new file. */
    if (mode != SF_DB_CREATE && stat(path, &sb) != 0)
        return sf_err_set(err, SF_E_IO, UINT64_MAX, "cannot open database: %s", strerror(errno));
    db = calloc(1, sizeof(*db));
    if (db == NULL)
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    db->mode = mode;
    db->lock_fd = -1;
    if ((rc = open_setup(db, path, err))) {
        free(db);
        return rc;
    }
    /* The owner locks live in a file of their own beside the database: closing any
     * descriptor of a file drops every POSIX lock the process holds on it, SQLite's
     * included, so this one must never be the database file (see sf_db.h). */
    char lock_path[4200];
    if (private_db(path)) {
        *out = db; /* nobody else can open it: nothing to own against */
        return 0;
    }
    if ((size_t)snprintf(lock_path, sizeof(lock_path), "%s%s", path, SF_DB_OWNER_SUFFIX) >=
        sizeof(lock_path)) {
        lock_path[0] = 0;
        errno = ENAMETOOLONG;
    }
    db->lock_fd = !lock_path[0]        ? -1
                  : mode == SF_DB_READ ? open(lock_path, O_RDONLY | O_CLOEXEC)
                                       : open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (db->lock_fd < 0 && mode != SF_DB_READ) {
        rc = sf_err_set(err, SF_E_DB, UINT64_MAX, "cannot open %s%s: %s", path, SF_DB_OWNER_SUFFIX,
                        strerror(errno));
        sqlite3_close(db->h);
        free(db);
        return rc;
    }
    *out = db;
    return 0;
}

void sf_db_one_thread(void)
{
    sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
    sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int sf_db_open(struct sf_db **out, const char *path, struct sf_err *err)
{
    return sf_db_open_mode(out, path, SF_DB_CREATE, err);
}

sqlite3 *sf_db_handle(struct sf_db *db)
{
    return db->h;
}

/* After a batch of INSERTs: foreign keys on again (outside any transaction, the only
 * place SQLite changes them), so that every other statement, above all a DELETE that
 * must cascade, runs with them.  Returns rc, or the failure to turn them on. */
static int fk_on(struct sf_db *db, int rc, struct sf_err *err)
{
    if (!db->fk_off)
        return rc;
    db->fk_off = 0;
    if (sf_db_exec(db, "PRAGMA foreign_keys = ON", rc ? NULL : err) && rc == 0)
        return SF_E_DB;
    return rc;
}

int sf_db_commit(struct sf_db *db, struct sf_err *err)
{
    int rc = 0;

    if (db->in_tx)
        rc = sf_db_exec(db, "COMMIT", err);
    db->in_tx = 0;
    db->pending = 0;
    return fk_on(db, rc, err);
}

void sf_db_rollback(struct sf_db *db)
{
    if (db->in_tx)
        sf_db_exec(db, "ROLLBACK", NULL);
    db->in_tx = 0;
    db->pending = 0;
    fk_on(db, 0, NULL);
}

int sf_db_close(struct sf_db *db, struct sf_err *err)
{
    int rc;

    if (db == NULL)
        return 0;
    rc = sf_db_commit(db, err);
    if (rc == 0 && db->deferred) /* a source that did not end: still a usable database */
        rc = sf_dbi_build_indexes(db, err);
    for (int i = 0; i < db->ncache; i++)
        sqlite3_finalize(db->cache[i].st);
    if (sqlite3_close(db->h) != SQLITE_OK && rc == 0)
        rc = sf_dbi_fail(db, err, "closing database");
    if (db->lock_fd >= 0)
        close(db->lock_fd);
    free(db);
    return rc;
}

sqlite3_stmt *sf_db_stmt(struct sf_db *db, const char *sql, struct sf_err *err)
{
    sqlite3_stmt *st;

    for (int i = 0; i < db->ncache; i++) {
        if (db->cache[i].sql == sql) {
            st = db->cache[i].st;
            sqlite3_reset(st);
            sqlite3_clear_bindings(st);
            return st;
        }
    }
    if (sqlite3_prepare_v3(db->h, sql, -1, SQLITE_PREPARE_PERSISTENT, &st, NULL) != SQLITE_OK) {
        sf_dbi_fail(db, err, "preparing statement");
        return NULL;
    }
    if (db->ncache < STMT_CACHE)
        db->cache[db->ncache++] = (struct stmt_slot){sql, st};
    /* else: leaks one statement per call; STMT_CACHE is sized for every writer */
    return st;
}

int sf_db_exec_stmt(struct sf_db *db, sqlite3_stmt *st, int64_t *rowid, struct sf_err *err)
{
    int rc;

    /* A batch that only appends rows runs without foreign-key checks: each writer
     * inserts a row after the rows it refers to, in one connection, so a check would
     * only look up what was just written (6.5 % of pcap2spans --db's instructions on
     * the rpc bench cut, docs/database.md); the tests run PRAGMA foreign_key_check on
     * what the writers leave.  Anything else (DELETE, UPDATE) ends such a batch first
     * and runs with the checks and cascades. */
    int insert = strncmp(sqlite3_sql(st), "INSERT", 6) == 0;

    if (db->in_tx && db->fk_off && !insert && (rc = sf_db_commit(db, err)))
        return rc;
    if (!db->in_tx) {
        if (insert && (rc = sf_db_exec(db, "PRAGMA foreign_keys = OFF", err)))
            return rc;
        db->fk_off = insert;
        if ((rc = sf_db_exec(db, "BEGIN", err)))
            return fk_on(db, rc, NULL);
        db->in_tx = 1;
    }
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return sf_dbi_fail(db, err, "writing row");
    if (rowid)
        *rowid = sqlite3_last_insert_rowid(db->h);
    if (++db->pending >= SF_DB_BATCH)
        return sf_db_commit(db, err);
    return 0;
}

void sf_db_bind_text(sqlite3_stmt *st, int idx, const char *s)
{
    if (s)
        sqlite3_bind_text(st, idx, s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, idx);
}

void sf_db_bind_textn(sqlite3_stmt *st, int idx, const char *s, size_t n)
{
    if (s)
        sqlite3_bind_text(st, idx, s, (int)n, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, idx);
}

void sf_db_bind_int(sqlite3_stmt *st, int idx, int64_t v)
{
    if (v == SF_DB_NULL)
        sqlite3_bind_null(st, idx);
    else
        sqlite3_bind_int64(st, idx, v);
}
