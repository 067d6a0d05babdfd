/* sf_db.h - the spanfold SQLite database: open, migrate, batch, sources.
 *
 * The schema (lib/schema.sql, embedded) is the contract between the tools.
 * sf_db_open() creates or migrates a database to SF_DB_SCHEMA_VERSION and refuses
 * a newer one.  Writers insert rows through cached prepared statements and call
 * sf_db_row() after each; rows are committed in batches of SF_DB_BATCH, so a
 * crash or a bad input never leaves half a batch and never costs a transaction
 * per row.  Table-specific writers live beside this file (sf_db_<area>.c).
 */
#ifndef SF_DB_H
#define SF_DB_H

#include <sqlite3.h>
#include <stdint.h>

#include "sf_err.h"

#define SF_DB_SCHEMA_VERSION 2
#define SF_DB_BATCH          5000

struct sf_db;

/* The embedded schema text (schema.sql). */
extern const char sf_db_schema_sql[];

/* Open (creating if needed) and migrate the database at path.  Returns 0 and
 * *out, or SF_E_DB / SF_E_UNSUPPORTED (schema newer than this build) / SF_E_NOMEM
 * with err filled; *out is NULL on failure. */
int sf_db_open(struct sf_db **out, const char *path, struct sf_err *err);

/* Commit what is pending and close.  Returns 0 or SF_E_DB (the handle is freed
 * either way).  NULL is a no-op. */
int sf_db_close(struct sf_db *db, struct sf_err *err);

/* The raw handle, for queries. */
sqlite3 *sf_db_handle(struct sf_db *db);

/* A prepared statement for `sql`, cached by the pointer value of `sql` (pass a
 * string literal or other static string).  The statement is reset and its
 * bindings cleared.  Returns NULL with err filled on failure. */
sqlite3_stmt *sf_db_stmt(struct sf_db *db, const char *sql, struct sf_err *err);

/* Step an INSERT/UPDATE statement to completion, reset it, count one row toward
 * the batch (committing a full batch) and store the new rowid in *rowid when
 * non-NULL.  Returns 0 or SF_E_DB. */
int sf_db_exec_stmt(struct sf_db *db, sqlite3_stmt *st, int64_t *rowid, struct sf_err *err);

/* Commit the open batch now (e.g. at the end of an input).  Returns 0 or SF_E_DB. */
int sf_db_commit(struct sf_db *db, struct sf_err *err);

/* Roll back the open batch (the rows since the last commit). */
void sf_db_rollback(struct sf_db *db);

/* Run SQL text without results (several statements allowed). Returns 0 or SF_E_DB. */
int sf_db_exec(struct sf_db *db, const char *sql, struct sf_err *err);

/* Binding helpers: NULL strings and the SF_DB_NULL integer bind SQL NULL. */
#define SF_DB_NULL INT64_MIN
void sf_db_bind_text(sqlite3_stmt *st, int idx, const char *s);
void sf_db_bind_textn(sqlite3_stmt *st, int idx, const char *s, size_t n);
void sf_db_bind_int(sqlite3_stmt *st, int idx, int64_t v);

/* ---- sources ---------------------------------------------------------------- */

struct sf_source_info {
    const char *kind;   /* "pcap", "perf", "tracefs" */
    const char *path;   /* as given on the command line ("-" for stdin) */
    const char *sha256; /* 64 hex, or NULL when not known yet (stdin) */
    uint64_t bytes;     /* size, 0 if unknown */
    const char *clock;  /* clock domain, or NULL for "unknown" */
    const char *tool;   /* writer's name */
};

/* Register an input and commit that row.  If a *complete* source with the same
 * sha256 and kind exists, nothing is written, *dup_of gets its id and SF_E_DUP is
 * returned.  A *partial* one (an earlier run that failed) is deleted with all
 * its rows first, so re-running after a crash never duplicates.  Returns 0 with
 * *id, SF_E_DUP, or SF_E_DB. */
int sf_db_source_begin(struct sf_db *db, const struct sf_source_info *in, int64_t *id,
                       int64_t *dup_of, struct sf_err *err);

/* Set a source's clock domain once it is known (e.g. from a perf header). */
int sf_db_source_set_clock(struct sf_db *db, int64_t id, const char *clock, struct sf_err *err);

/* Set the sha256 and size known only at the end (stdin).  If another complete
 * source already has that hash, returns SF_E_DUP with *dup_of set and deletes
 * this source's rows (committed batches included). */
int sf_db_source_set_hash(struct sf_db *db, int64_t id, const char *sha256, uint64_t bytes,
                          int64_t *dup_of, struct sf_err *err);

/* Finish a source: commit pending rows, then mark it complete (error NULL) or
 * partial with error text, with unit counts.  Returns 0 or SF_E_DB. */
int sf_db_source_end(struct sf_db *db, int64_t id, const char *error, uint64_t units,
                     uint64_t bad_units, struct sf_err *err);

#endif
