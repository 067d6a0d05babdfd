/* sf_db_source.c - the sources of a database (see sf_db.h): one row per input, owned
 * by the process that ingests it (an open-file-description lock on one byte of the
 * file, at the source's id), found again by content so that an input is stored once,
 * and the bulk tables' indexes dropped while a first ingest fills them. */
#define _GNU_SOURCE /* F_OFD_SETLK: Linux open-file-description locks */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "sf_db.h"
#include "sf_db_int.h"
#include "sf_opt.h"
#include "sf_sha256.h"

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
static const char *const bulk_tables[] = {"spans",       "contexts",       "span_headers",
                                          "span_events", "span_intervals", "shared_intervals",
                                          "samples",     "offcpu"};

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
    return sf_dbi_query_int(db, sql, &rows, err) ? -1 : rows == 0;
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
int sf_dbi_build_indexes(struct sf_db *db, struct sf_err *err)
{
    const char *pos = sf_db_schema_sql;
    char def[160], sql[200];
    int rc, missing;

    if ((rc = sf_db_commit(db, err)))
        return rc;
    while (next_bulk_index(&pos, def, sizeof(def))) {
        if ((missing = bulk_index_missing(db, def)) < 0)
            return sf_dbi_fail(db, err, "looking up indexes");
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
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : sf_dbi_fail(db, err, "looking up source");
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
            return sf_dbi_fail(db, err, "looking up source");
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
    return *busy || rc == SQLITE_DONE ? 0 : sf_dbi_fail(db, err, "looking up source");
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
        rc = rc > 0 ? BEGIN_HASH : sf_dbi_fail(db, err, "looking up source");
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
            sf_dbi_sleep_ms(10);
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
        rc = sf_dbi_fail(db, err, "looking up source");
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
        return (rc = sf_dbi_build_indexes(db, err)) ? rc : SF_E_DUP;
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
    if ((rc = sf_db_commit(db, err)) || (rc = sf_dbi_build_indexes(db, err)))
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
