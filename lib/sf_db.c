/* sf_db.c - open, migrate, batch and sources (see sf_db.h). */
#include "sf_db.h"

#include <stdlib.h>
#include <string.h>

#include "sf_opt.h"

#define STMT_CACHE 64

struct stmt_slot {
    const char *sql;
    sqlite3_stmt *st;
};

struct sf_db {
    sqlite3 *h;
    int in_tx;   /* a batch transaction is open */
    int pending; /* rows in the open batch */
    struct stmt_slot cache[STMT_CACHE];
    int ncache;
};

/* Forward migrations: migrations[v] takes a database from version v to v+1.
 * Version 0 is an empty file; lib/schema.sql is version 1. */
static const char *const migrations[] = {
    sf_db_schema_sql,
    /* 2: spans.delivered, 0 for a TLS 0-RTT request the server rejected (pcap2spans) */
    "ALTER TABLE spans ADD COLUMN delivered INTEGER NOT NULL DEFAULT 1;",
};

static int db_fail(struct sf_db *db, struct sf_err *err, const char *what)
{
    return sf_err_set(err, SF_E_DB, UINT64_MAX, "%s: %s", what,
                      db && db->h ? sqlite3_errmsg(db->h) : "cannot open");
}

int sf_db_exec(struct sf_db *db, const char *sql, struct sf_err *err)
{
    char *msg = NULL;

    if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
        sf_err_set(err, SF_E_DB, UINT64_MAX, "sqlite: %s", msg ? msg : "error");
        sqlite3_free(msg);
        return SF_E_DB;
    }
    return 0;
}

static int user_version(struct sf_db *db, int *v, struct sf_err *err)
{
    sqlite3_stmt *st;
    int rc;

    if (sqlite3_prepare_v2(db->h, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, "reading schema version");
    rc = sqlite3_step(st);
    *v = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : db_fail(db, err, "reading schema version");
}

static int migrate(struct sf_db *db, struct sf_err *err)
{
    const int latest = (int)(sizeof(migrations) / sizeof(migrations[0]));
    char sql[64];
    int v, rc;

    /* An exclusive transaction so two tools starting at once do not both migrate. */
    if ((rc = sf_db_exec(db, "BEGIN EXCLUSIVE", err)))
        return rc;
    if ((rc = user_version(db, &v, err)))
        goto fail;
    if (v > latest) {
        sf_db_exec(db, "ROLLBACK", NULL);
        return sf_err_set(err, SF_E_UNSUPPORTED, UINT64_MAX,
                          "database schema version %d is newer than this build (%d)", v, latest);
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
    return sf_db_exec(db, "COMMIT", err);
fail:
    sf_db_exec(db, "ROLLBACK", NULL);
    return rc;
}

int sf_db_open(struct sf_db **out, const char *path, struct sf_err *err)
{
    struct sf_db *db;
    int rc;

    *out = NULL;
    db = calloc(1, sizeof(*db));
    if (db == NULL)
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    if (sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        rc = db_fail(db, err, path);
        sqlite3_close(db->h);
        free(db);
        return rc;
    }
    /* Tools run one after another on one file; wait for a lock rather than fail. */
    sqlite3_busy_timeout(db->h, 10000);
    rc = sf_db_exec(db,
                    "PRAGMA foreign_keys = ON;"
                    "PRAGMA journal_mode = WAL;"
                    "PRAGMA synchronous = NORMAL;",
                    err);
    if (rc == 0)
        rc = migrate(db, err);
    if (rc) {
        sqlite3_close(db->h);
        free(db);
        return rc;
    }
    *out = db;
    return 0;
}

sqlite3 *sf_db_handle(struct sf_db *db)
{
    return db->h;
}

int sf_db_commit(struct sf_db *db, struct sf_err *err)
{
    int rc = 0;

    if (db->in_tx)
        rc = sf_db_exec(db, "COMMIT", err);
    db->in_tx = 0;
    db->pending = 0;
    return rc;
}

void sf_db_rollback(struct sf_db *db)
{
    if (db->in_tx)
        sf_db_exec(db, "ROLLBACK", NULL);
    db->in_tx = 0;
    db->pending = 0;
}

int sf_db_close(struct sf_db *db, struct sf_err *err)
{
    int rc;

    if (db == NULL)
        return 0;
    rc = sf_db_commit(db, err);
    for (int i = 0; i < db->ncache; i++)
        sqlite3_finalize(db->cache[i].st);
    if (sqlite3_close(db->h) != SQLITE_OK && rc == 0)
        rc = db_fail(db, err, "closing database");
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

    if (!db->in_tx) {
        if ((rc = sf_db_exec(db, "BEGIN", err)))
            return rc;
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

int sf_db_source_begin(struct sf_db *db, const struct sf_source_info *in, int64_t *id,
                       int64_t *dup_of, struct sf_err *err)
{
    static const char ins[] = "INSERT INTO sources (kind, path, bytes, sha256, clock, tool, "
                              "tool_version, status, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                              "'partial', 'interrupted')";
    static const char old[] = "SELECT id FROM sources WHERE kind = ?1 AND sha256 = ?2 "
                              "AND status = 'partial'";
    sqlite3_stmt *st;
    int rc;

    *dup_of = 0;
    if ((rc = sf_db_commit(db, err)))
        return rc;
    if (in->sha256) {
        if ((rc = find_complete(db, in->kind, in->sha256, 0, dup_of, err)))
            return rc;
        if (*dup_of)
            return SF_E_DUP;
        /* Drop what an interrupted earlier run of the same input left behind. */
        if ((st = sf_db_stmt(db, old, err)) == NULL)
            return SF_E_DB;
        sf_db_bind_text(st, 1, in->kind);
        sf_db_bind_text(st, 2, in->sha256);
        while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
            int64_t stale = sqlite3_column_int64(st, 0);
            sqlite3_reset(st);
            if ((rc = delete_source(db, stale, err)))
                return rc;
            if ((st = sf_db_stmt(db, old, err)) == NULL)
                return SF_E_DB;
            sf_db_bind_text(st, 1, in->kind);
            sf_db_bind_text(st, 2, in->sha256);
        }
        sqlite3_reset(st);
    }
    if ((st = sf_db_stmt(db, ins, err)) == NULL)
        return SF_E_DB;
    sf_db_bind_text(st, 1, in->kind);
    sf_db_bind_text(st, 2, in->path);
    sf_db_bind_int(st, 3, in->bytes ? (int64_t)in->bytes : SF_DB_NULL);
    sf_db_bind_text(st, 4, in->sha256);
    sf_db_bind_text(st, 5, in->clock ? in->clock : "unknown");
    sf_db_bind_text(st, 6, in->tool);
    sf_db_bind_text(st, 7, sf_version());
    if ((rc = sf_db_exec_stmt(db, st, id, err)))
        return rc;
    return sf_db_commit(db, err);
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

int sf_db_source_set_hash(struct sf_db *db, int64_t id, const char *sha256, uint64_t bytes,
                          int64_t *dup_of, struct sf_err *err)
{
    static const char sql[] = "UPDATE sources SET sha256 = ?2, bytes = ?3 WHERE id = ?1";
    sqlite3_stmt *st;
    const char *kind = NULL;
    sqlite3_stmt *q;
    int rc;

    *dup_of = 0;
    if (sqlite3_prepare_v2(db->h, "SELECT kind FROM sources WHERE id = ?1", -1, &q, NULL) !=
        SQLITE_OK)
        return db_fail(db, err, "looking up source");
    sqlite3_bind_int64(q, 1, id);
    if (sqlite3_step(q) == SQLITE_ROW)
        kind = (const char *)sqlite3_column_text(q, 0);
    rc = kind ? find_complete(db, kind, sha256, id, dup_of, err) : 0;
    sqlite3_finalize(q);
    if (rc)
        return rc;
    if (*dup_of) {
        if ((rc = delete_source(db, id, err)) || (rc = sf_db_commit(db, err)))
            return rc;
        return SF_E_DUP;
    }
    if ((st = sf_db_stmt(db, sql, err)) == NULL)
        return SF_E_DB;
    sqlite3_bind_int64(st, 1, id);
    sf_db_bind_text(st, 2, sha256);
    sqlite3_bind_int64(st, 3, (int64_t)bytes);
    return sf_db_exec_stmt(db, st, NULL, err);
}

int sf_db_source_end(struct sf_db *db, int64_t id, const char *error, uint64_t units,
                     uint64_t bad_units, struct sf_err *err)
{
    static const char sql[] = "UPDATE sources SET status = ?2, error = ?3, units = ?4, "
                              "bad_units = ?5 WHERE id = ?1";
    sqlite3_stmt *st;
    int rc;

    /* Rows first, status last: "complete" is only ever seen with all rows in place. */
    if ((rc = sf_db_commit(db, err)))
        return rc;
    if ((st = sf_db_stmt(db, sql, err)) == NULL)
        return SF_E_DB;
    sqlite3_bind_int64(st, 1, id);
    sf_db_bind_text(st, 2, error ? "partial" : "complete");
    sf_db_bind_text(st, 3, error);
    sqlite3_bind_int64(st, 4, (int64_t)units);
    sqlite3_bind_int64(st, 5, (int64_t)bad_units);
    if ((rc = sf_db_exec_stmt(db, st, NULL, err)))
        return rc;
    return sf_db_commit(db, err);
}
