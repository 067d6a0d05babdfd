/* sf_db.c - open, migrate, batch and sources (see sf_db.h). */
#define _GNU_SOURCE /* F_OFD_SETLK: Linux open-file-description locks */
#include "sf_db.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sf_fail.h"
#include "sf_opt.h"
#include "sf_sha256.h"

#define STMT_CACHE 64

struct stmt_slot {
    const char *sql;
    sqlite3_stmt *st;
};

struct sf_db {
    sqlite3 *h;
    enum sf_db_mode mode;
    int in_tx;     /* a batch transaction is open */
    int pending;   /* rows in the open batch */
    int fk_off;    /* the open batch holds only INSERTs and runs without foreign keys */
    int lock_fd;   /* the database file, for the owner locks; -1 without */
    int wait;      /* sf_db_set_wait */
    int last_err;  /* SQLite's code of the last failed setup step (a rollback resets it) */
    int64_t owned; /* the source whose owner lock this handle holds, 0 none */
    int deferred;  /* this handle dropped bulk tables' indexes to build later */
    struct stmt_slot cache[STMT_CACHE];
    int ncache;
};

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
};

static int build_indexes(struct sf_db *db, struct sf_err *err);

static int db_fail(struct sf_db *db, struct sf_err *err, const char *what)
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
static int query_int(struct sf_db *db, const char *sql, int64_t *v, struct sf_err *err)
{
    sqlite3_stmt *st;
    int rc;

    if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK) {
        db->last_err = sqlite3_errcode(db->h);
        return db_fail(db, err, "reading the database header");
    }
    rc = sqlite3_step(st);
    *v = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    if (rc != SQLITE_ROW)
        db->last_err = sqlite3_errcode(db->h);
    rc = rc == SQLITE_ROW ? 0 : db_fail(db, err, "reading the database header");
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
    if ((rc = query_int(db, "PRAGMA application_id", &app, err)) ||
        (rc = query_int(db, "PRAGMA user_version", &ver, err)) ||
        (rc = query_int(db, "SELECT count(*) FROM sqlite_master", &tables, err)) ||
        (rc = query_int(db,
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

static void sleep_ms(long ms)
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
            sleep_ms(20);
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
        rc = build_indexes(db, err);
    for (int i = 0; i < db->ncache; i++)
        sqlite3_finalize(db->cache[i].st);
    if (sqlite3_close(db->h) != SQLITE_OK && rc == 0)
        rc = db_fail(db, err, "closing database");
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
        db_fail(db, err, "preparing statement");
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
        return db_fail(db, err, "writing row");
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

/* ---- sources ------------------------------------------------------------------ */

/* Lock (F_WRLCK, F_RDLCK) or unlock (F_UNLCK) source id's owner byte; wait for it
 * when `wait`.  Returns 0, or -1 with errno (EAGAIN: another process holds it). */
static int owner_lock(struct sf_db *db, int64_t id, short type, int wait)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = id, .l_len = 1};
    int rc;

    if (db->lock_fd < 0)
        return errno = EBADF, -1;
    while ((rc = fcntl(db->lock_fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl)) < 0 && errno == EINTR)
        ;
    return rc;
}

int sf_db_source_owned(struct sf_db *db, int64_t id)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = id, .l_len = 1};

    if (db->lock_fd < 0 || fcntl(db->lock_fd, F_OFD_GETLK, &fl) < 0)
        return 0; /* no descriptor (read-only media): nobody can be writing */
    return fl.l_type != F_UNLCK;
}

static void owner_release(struct sf_db *db, int64_t id)
{
    if (db->owned == id && id) {
        owner_lock(db, id, F_UNLCK, 0);
        db->owned = 0;
    }
}

/* ---- bulk indexes ------------------------------------------------------------- */

/* The bulk tables: an ingest fills them by the million.  An ingest that finds one of
 * them empty when its source begins drops its indexes (defer_indexes: those of the
 * schema's empty tail) and builds them when it ends:
 * one sort per index instead of a random b-tree insert per row (docs/database.md,
 * "Bulk load"). */
static const char *const bulk_tables[] = {"spans",          "contexts",         "span_events",
                                          "span_intervals", "shared_intervals", "samples"};

/* The next index of a bulk table in schema.sql (their one definition) from *pos on:
 * its "name ON table(columns)" into def (n bytes), 1; 0 after the last.  Walked in the
 * schema's order, so a rebuild leaves sqlite_schema listing them as a new file does. */
static int next_bulk_index(const char **pos, char *def, size_t n)
{
    static const char kw[] = "\nCREATE INDEX ";
    const char *p;

    while ((p = strstr(*pos, kw)) != NULL) {
        const char *d = p + sizeof(kw) - 1, *end = strchr(d, ';'), *on = strstr(d, " ON ");
        size_t len;
        *pos = end ? end : d;
        if (end == NULL || on == NULL || on > end)
            continue;
        len = strcspn(on + 4, "(");
        for (size_t t = 0; t < sizeof(bulk_tables) / sizeof(bulk_tables[0]); t++)
            if (strlen(bulk_tables[t]) == len && strncmp(on + 4, bulk_tables[t], len) == 0) {
                snprintf(def, n, "%.*s", (int)(end - d), d);
                return 1;
            }
    }
    return 0;
}

/* "DROP INDEX IF EXISTS name" or "CREATE INDEX IF NOT EXISTS name ON ..." for def. */
static void bulk_index_sql(const char *def, int create, char *sql, size_t n)
{
    if (create)
        snprintf(sql, n, "CREATE INDEX IF NOT EXISTS %s", def);
    else
        snprintf(sql, n, "DROP INDEX IF EXISTS %.*s", (int)strcspn(def, " "), def);
}

/* 1 when the table of index def has no row; -1 on error. */
static int bulk_table_empty(struct sf_db *db, const char *def, struct sf_err *err)
{
    const char *on = strstr(def, " ON ") + 4;
    char sql[96];
    int64_t rows;

    snprintf(sql, sizeof(sql), "SELECT EXISTS (SELECT 1 FROM %.*s)", (int)strcspn(on, "("), on);
    return query_int(db, sql, &rows, err) ? -1 : rows == 0;
}

/* Inside the transaction that registers a source: drop the indexes of the bulk tables
 * that are empty, from the last index of a table with rows on (the schema's tail), so
 * that the first capture and then the first profile ingested into a new file each load
 * without them, and the rebuild, appending them to sqlite_schema, keeps its order
 * (*dropped = 1 when any).  Returns 0 or SF_E_DB. */
static int defer_indexes(struct sf_db *db, int *dropped, struct sf_err *err)
{
    const char *pos = sf_db_schema_sql;
    char def[160], sql[200];
    int rc, empty, i = 0, keep = 0;

    *dropped = 0;
    while (next_bulk_index(&pos, def, sizeof(def))) {
        if ((empty = bulk_table_empty(db, def, err)) < 0)
            return SF_E_DB;
        i++;
        keep = empty ? keep : i; /* indexes 1..keep stay */
    }
    for (pos = sf_db_schema_sql, i = 0; next_bulk_index(&pos, def, sizeof(def));) {
        if (++i <= keep)
            continue;
        bulk_index_sql(def, 0, sql, sizeof(sql));
        if ((rc = sf_db_exec(db, sql, err)))
            return rc;
        *dropped = 1;
    }
    return 0;
}

/* 1 when index def is missing (a deferred build, or one that a crash cut short); -1
 * on error. */
static int bulk_index_missing(struct sf_db *db, const char *def)
{
    static const char sql[] = "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND "
                              "name = ?1";
    sqlite3_stmt *st = sf_db_stmt(db, sql, NULL);
    int rc;

    if (st == NULL)
        return -1;
    sqlite3_bind_text(st, 1, def, (int)strcspn(def, " "), SQLITE_TRANSIENT);
    rc = sqlite3_step(st);
    rc = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) == 0 : -1;
    sqlite3_reset(st);
    return rc;
}

/* Build the bulk indexes that are missing, each in a transaction of its own (so no
 * other writer waits for all of them at once).  Returns 0 or SF_E_DB. */
static int build_indexes(struct sf_db *db, struct sf_err *err)
{
    const char *pos = sf_db_schema_sql;
    char def[160], sql[200];
    int rc, missing;

    if ((rc = sf_db_commit(db, err)))
        return rc;
    while (next_bulk_index(&pos, def, sizeof(def))) {
        if ((missing = bulk_index_missing(db, def)) < 0)
            return db_fail(db, err, "looking up indexes");
        bulk_index_sql(def, 1, sql, sizeof(sql));
        if (missing && (rc = sf_db_exec(db, sql, err)))
            return rc;
    }
    db->deferred = 0;
    return 0;
}

/* Open a write transaction now (not at the first write), so that what is read in
 * it cannot change before it commits. */
static int begin_immediate(struct sf_db *db, struct sf_err *err)
{
    int rc;

    if ((rc = sf_db_commit(db, err)) || (rc = sf_db_exec(db, "BEGIN IMMEDIATE", err)))
        return rc;
    db->in_tx = 1;
    return 0;
}

static int find_complete(struct sf_db *db, const char *kind, const char *sha, int64_t skip,
                         int64_t *found, struct sf_err *err)
{
    static const char sql[] = "SELECT id FROM sources WHERE kind = ?1 AND sha256 = ?2 "
                              "AND status = 'complete' AND id != ?3 LIMIT 1";
    sqlite3_stmt *st = sf_db_stmt(db, sql, err);
    int rc;

    if (st == NULL)
        return SF_E_DB;
    sf_db_bind_text(st, 1, kind);
    sf_db_bind_text(st, 2, sha);
    sqlite3_bind_int64(st, 3, skip);
    rc = sqlite3_step(st);
    *found = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
    sqlite3_reset(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : db_fail(db, err, "looking up source");
}

static int delete_source(struct sf_db *db, int64_t id, struct sf_err *err)
{
    static const char sql[] = "DELETE FROM sources WHERE id = ?1";
    sqlite3_stmt *st = sf_db_stmt(db, sql, err);

    if (st == NULL)
        return SF_E_DB;
    sqlite3_bind_int64(st, 1, id);
    return sf_db_exec_stmt(db, st, NULL, err);
}

/* The partial sources of this input other than `skip`: those with its hash, and
 * with no hash yet those of its kind, size and path (a run that hashes while it
 * reads, interrupted before its end; path NULL: hash only). */
#define SAME_INPUT                                                                                 \
    "kind = ?1 AND status = 'partial' AND id != ?3 AND (sha256 = ?2 OR (sha256 IS NULL AND "       \
    "bytes = ?4 AND path = ?5))"

static sqlite3_stmt *same_input(struct sf_db *db, const char *sql, const struct sf_source_info *in,
                                int64_t skip, struct sf_err *err)
{
    sqlite3_stmt *st = sf_db_stmt(db, sql, err);

    if (st == NULL)
        return NULL;
    sf_db_bind_text(st, 1, in->kind);
    sf_db_bind_text(st, 2, in->sha256);
    sqlite3_bind_int64(st, 3, skip);
    sf_db_bind_int(st, 4, in->bytes ? (int64_t)in->bytes : SF_DB_NULL);
    sf_db_bind_text(st, 5, in->path);
    return st;
}

/* Those that nobody owns are deleted (interrupted runs); the first one a live
 * process owns is *busy. */
static int sweep_partial(struct sf_db *db, const struct sf_source_info *in, int64_t skip,
                         int64_t *busy, struct sf_err *err)
{
    static const char sql[] = "SELECT id FROM sources WHERE " SAME_INPUT " ORDER BY id";
    int64_t ids[64];
    int n = 0, rc;
    sqlite3_stmt *st;

    *busy = 0;
    do {
        if ((st = same_input(db, sql, in, skip, err)) == NULL)
            return SF_E_DB;
        for (n = 0; n < 64 && (rc = sqlite3_step(st)) == SQLITE_ROW; n++)
            ids[n] = sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
        if (n < 64 && rc != SQLITE_DONE)
            return db_fail(db, err, "looking up source");
        for (int i = 0; i < n; i++) {
            if (sf_db_source_owned(db, ids[i])) {
                *busy = ids[i];
                return 0;
            }
            if ((rc = delete_source(db, ids[i], err)))
                return rc;
        }
    } while (n == 64);
    return 0;
}

/* A partial source of this input that a live process owns, read outside any
 * transaction.  Returns 0 (*busy = its id or 0) or SF_E_DB. */
static int find_live_owner(struct sf_db *db, const struct sf_source_info *in, int64_t *busy,
                           struct sf_err *err)
{
    static const char sql[] = "SELECT id FROM sources WHERE " SAME_INPUT " ORDER BY id";
    sqlite3_stmt *st;
    int rc;

    *busy = 0;
    if ((rc = sf_db_commit(db, err)) || (st = same_input(db, sql, in, 0, err)) == NULL)
        return rc ? rc : SF_E_DB;
    while (*busy == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW)
        if (sf_db_source_owned(db, sqlite3_column_int64(st, 0)))
            *busy = sqlite3_column_int64(st, 0);
    sqlite3_reset(st);
    return *busy || rc == SQLITE_DONE ? 0 : db_fail(db, err, "looking up source");
}

/* 1 when a source of in's kind and size exists (*in may be a copy of it: worth
 * hashing before ingesting), 0 when none, -1 on error. */
static int size_seen(struct sf_db *db, const struct sf_source_info *in)
{
    static const char sql[] = "SELECT 1 FROM sources WHERE kind = ?1 AND bytes = ?2 LIMIT 1";
    sqlite3_stmt *st = sf_db_stmt(db, sql, NULL);
    int rc;

    if (st == NULL)
        return -1;
    sf_db_bind_text(st, 1, in->kind);
    sqlite3_bind_int64(st, 2, (int64_t)in->bytes);
    rc = sqlite3_step(st);
    sqlite3_reset(st);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

static int busy_error(struct sf_db *db, int64_t id, struct sf_err *err)
{
    static const char sql[] = "SELECT path, started_at FROM sources WHERE id = ?1";
    sqlite3_stmt *st = sf_db_stmt(db, sql, err);
    const char *path = NULL, *at = NULL;

    if (st) {
        sqlite3_bind_int64(st, 1, id);
        if (sqlite3_step(st) == SQLITE_ROW) {
            path = (const char *)sqlite3_column_text(st, 0);
            at = (const char *)sqlite3_column_text(st, 1);
        }
    }
    sf_err_set(err, SF_E_BUSY, UINT64_MAX,
               "another process is ingesting this input (source %lld, %.100s, since %.40s); "
               "--wait waits for it",
               (long long)id, path ? path : "?", at ? at : "?");
    if (st)
        sqlite3_reset(st);
    return SF_E_BUSY;
}

/* begin_once's answers besides 0 and SF_E_*: positive, so that no SF_E_* code can be
 * read as one (-ESRCH was -3, SF_E_LIMIT). */
enum { BEGIN_HASH = 1 /* its size was seen: hash it, then again */, BEGIN_AGAIN = 2 };

/* One attempt: 0 with *id, SF_E_DUP, SF_E_BUSY (*dup_of = the owned source) or
 * SF_E_DB; BEGIN_AGAIN when the new id's byte was still held (a waiter's brief read
 * lock): try again; BEGIN_HASH when the source needs its hash first. */
static int begin_once(struct sf_db *db, const struct sf_source_info *in, int64_t *id,
                      int64_t *dup_of, struct sf_err *err)
{
    static const char ins[] = "INSERT INTO sources (kind, path, bytes, sha256, clock, tool, "
                              "tool_version, status, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                              "'partial', 'interrupted')";
    sqlite3_stmt *st;
    int64_t busy = 0;
    int rc, dropped = 0;

    /* First without the write lock, which a running ingest holds for a batch at a
     * time: its committed source row is visible, and so is its owner lock. */
    if ((in->sha256 || in->bytes) && (rc = find_live_owner(db, in, &busy, err)))
        return rc;
    if (busy) {
        *dup_of = busy;
        return busy_error(db, busy, err);
    }
    if ((rc = begin_immediate(db, err)))
        return rc;
    /* No hash yet: a first sight of this size is no copy, else hash it first. */
    if (!in->sha256 && in->bytes && (rc = size_seen(db, in)) != 0) {
        rc = rc > 0 ? BEGIN_HASH : db_fail(db, err, "looking up source");
        goto fail;
    }
    if (in->sha256 && (rc = find_complete(db, in->kind, in->sha256, 0, dup_of, err)))
        goto fail;
    if (*dup_of) {
        rc = SF_E_DUP;
        goto fail;
    }
    if ((in->sha256 || in->bytes) && (rc = sweep_partial(db, in, 0, &busy, err)))
        goto fail;
    if (busy) {
        *dup_of = busy;
        rc = busy_error(db, busy, err);
        goto fail;
    }
    if ((st = sf_db_stmt(db, ins, err)) == NULL) {
        rc = SF_E_DB;
        goto fail;
    }
    sf_db_bind_text(st, 1, in->kind);
    sf_db_bind_text(st, 2, in->path);
    sf_db_bind_int(st, 3, in->bytes ? (int64_t)in->bytes : SF_DB_NULL);
    sf_db_bind_text(st, 4, in->sha256);
    sf_db_bind_text(st, 5, in->clock ? in->clock : "unknown");
    sf_db_bind_text(st, 6, in->tool);
    sf_db_bind_text(st, 7, sf_version());
    if ((rc = sf_db_exec_stmt(db, st, id, err)) || (rc = defer_indexes(db, &dropped, err)))
        goto fail;
    /* Owned before anyone can see the row: the commit below publishes both. */
    if (owner_lock(db, *id, F_WRLCK, 0) < 0) {
        if (errno == EAGAIN || errno == EACCES) {
            rc = BEGIN_AGAIN;
            goto fail;
        }
        /* no such locks here (EINVAL, ENOLCK: an old kernel, some network file
         * systems): go on unowned, as before ownership existed */
    } else {
        db->owned = *id;
    }
    if ((rc = sf_db_commit(db, err)) == 0) {
        db->deferred |= dropped;
        return 0;
    }
    owner_release(db, *id);
fail:
    sf_db_rollback(db);
    return rc;
}

int sf_db_source_begin(struct sf_db *db, const struct sf_source_info *in, int64_t *id,
                       int64_t *dup_of, struct sf_err *err)
{
    struct sf_source_info hashed;
    char hex[SF_SHA256_HEX_LEN + 1];
    uint64_t bytes;
    int rc;

    for (int tries = 0;; tries++) {
        *dup_of = 0;
        rc = begin_once(db, in, id, dup_of, err);
        if (rc == BEGIN_HASH) { /* hash it now, as the caller will at the end */
            if (sf_sha256_file(in->path, hex, &bytes) < 0)
                return sf_err_set(err, SF_E_IO, UINT64_MAX, "%s", strerror(errno));
            hashed = *in;
            hashed.sha256 = hex;
            in = &hashed;
            continue;
        }
        if (rc == BEGIN_AGAIN && tries < 100) {
            sleep_ms(10);
            continue;
        }
        if (rc == BEGIN_AGAIN)
            return sf_err_set(err, SF_E_DB, UINT64_MAX, "cannot lock the new source");
        assert(rc <= 0);
        if (rc != SF_E_BUSY || !db->wait)
            return rc;
        /* Wait for the owner to end or die: its lock goes, ours is granted. */
        if (owner_lock(db, *dup_of, F_RDLCK, 1) < 0)
            return sf_err_set(err, SF_E_DB, UINT64_MAX, "waiting for source %lld: %s",
                              (long long)*dup_of, strerror(errno));
        owner_lock(db, *dup_of, F_UNLCK, 0);
    }
}

void sf_db_set_wait(struct sf_db *db, int wait)
{
    db->wait = wait;
}

int sf_db_source_set_clock(struct sf_db *db, int64_t id, const char *clock, struct sf_err *err)
{
    static const char sql[] = "UPDATE sources SET clock = ?2 WHERE id = ?1";
    sqlite3_stmt *st = sf_db_stmt(db, sql, err);

    if (st == NULL)
        return SF_E_DB;
    sqlite3_bind_int64(st, 1, id);
    sf_db_bind_text(st, 2, clock);
    return sf_db_exec_stmt(db, st, NULL, err);
}

/* The id of another source of this input that wins over source id: a complete
 * one, or a partial one with its hash already set whose owner is alive. */
static int find_winner(struct sf_db *db, int64_t id, const char *kind, const char *sha,
                       int64_t *found, struct sf_err *err)
{
    const struct sf_source_info in = {.kind = kind, .sha256 = sha}; /* by hash only */
    int64_t busy = 0;
    int rc;

    if ((rc = find_complete(db, kind, sha, id, found, err)) || *found)
        return rc;
    if ((rc = sweep_partial(db, &in, id, &busy, err)))
        return rc;
    *found = busy;
    return 0;
}

int sf_db_source_set_hash(struct sf_db *db, int64_t id, const char *sha256, uint64_t bytes,
                          int64_t *dup_of, struct sf_err *err)
{
    static const char sql[] = "UPDATE sources SET sha256 = ?2, bytes = ?3 WHERE id = ?1";
    sqlite3_stmt *st;
    char kind[16] = "";
    sqlite3_stmt *q;
    int rc;

    *dup_of = 0;
    /* check and claim in one transaction: two stdin runs of one input race here */
    if ((rc = begin_immediate(db, err)))
        return rc;
    if (sqlite3_prepare_v2(db->h, "SELECT kind FROM sources WHERE id = ?1", -1, &q, NULL) !=
        SQLITE_OK) {
        rc = db_fail(db, err, "looking up source");
        goto fail;
    }
    sqlite3_bind_int64(q, 1, id);
    if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0))
        snprintf(kind, sizeof(kind), "%s", (const char *)sqlite3_column_text(q, 0));
    sqlite3_finalize(q);
    if (kind[0] && (rc = find_winner(db, id, kind, sha256, dup_of, err)))
        goto fail;
    if (*dup_of) {
        if ((rc = delete_source(db, id, err)) || (rc = sf_db_commit(db, err)))
            goto fail;
        owner_release(db, id);
        return (rc = build_indexes(db, err)) ? rc : SF_E_DUP;
    }
    if ((st = sf_db_stmt(db, sql, err)) == NULL) {
        rc = SF_E_DB;
        goto fail;
    }
    sqlite3_bind_int64(st, 1, id);
    sf_db_bind_text(st, 2, sha256);
    sqlite3_bind_int64(st, 3, (int64_t)bytes);
    if ((rc = sf_db_exec_stmt(db, st, NULL, err)) == 0)
        return sf_db_commit(db, err);
fail:
    sf_db_rollback(db);
    return rc;
}

int sf_db_source_end(struct sf_db *db, int64_t id, const char *error, uint64_t units,
                     uint64_t bad_units, struct sf_err *err)
{
    static const char sql[] = "UPDATE sources SET status = ?2, error = ?3, units = ?4, "
                              "bad_units = ?5 WHERE id = ?1";
    sqlite3_stmt *st;
    int rc;

    /* Rows and indexes first, status last: "complete" is only ever seen with all rows
     * in place. */
    if ((rc = sf_db_commit(db, err)) || (rc = build_indexes(db, err)))
        return rc;
    if ((st = sf_db_stmt(db, sql, err)) == NULL)
        return SF_E_DB;
    sqlite3_bind_int64(st, 1, id);
    sf_db_bind_text(st, 2, error ? "partial" : "complete");
    sf_db_bind_text(st, 3, error);
    sqlite3_bind_int64(st, 4, (int64_t)units);
    sqlite3_bind_int64(st, 5, (int64_t)bad_units);
    if ((rc = sf_db_exec_stmt(db, st, NULL, err)) == 0)
        rc = sf_db_commit(db, err);
    /* ended either way: a failed end leaves 'partial', which is what it is */
    owner_release(db, id);
    return rc;
}
