/* sf_db.h - the spanfold SQLite database: open, migrate, batch, sources.
 *
 * The schema (lib/schema.sql, embedded) is the contract between the tools.
 * Ingest tools open with SF_DB_CREATE: an empty or new file gets the schema, an
 * older spanfold database is migrated to SF_DB_SCHEMA_VERSION, a newer one and any
 * file that is not spanfold's (PRAGMA application_id, else the tables) are refused
 * untouched.  Readers open with SF_DB_READ: read-only, never migrated, never
 * switched to WAL, and a database on read-only media is read as immutable.
 * Writers insert rows through cached prepared statements; rows are committed in
 * batches of SF_DB_BATCH, so a crash or a bad input never leaves half a batch and
 * never costs a transaction per row.  Table-specific writers live beside this
 * file (sf_db_<area>.c).
 *
 * Ownership of a source: the writer that registers a source holds an advisory
 * open-file-description lock (Linux F_OFD_SETLK) on byte `id` of
 * FILE-owners, a file beside the database (never the database itself: closing a
 * descriptor of a file drops the process's POSIX locks on it, SQLite's too), until
 * the source ends or the process dies (the kernel drops the lock then).  A
 * 'partial' source whose byte is locked is being ingested now and is left alone;
 * one whose byte is free was interrupted.  No pid, so no pid reuse.
 */
#ifndef SF_DB_H
#define SF_DB_H

#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>

#include "sf_err.h"

#define SF_DB_SCHEMA_VERSION 8
#define SF_DB_BATCH          5000
#define SF_DB_APP_ID         0x53706e46 /* PRAGMA application_id: "SpnF" */
#define SF_DB_OWNER_SUFFIX   "-owners"  /* the lock file: the database path + this */
#define SF_DB_BUSY_MS        10000      /* wait for another writer's lock this long */

struct sf_db;

/* The embedded schema text (schema.sql). */
extern const char sf_db_schema_sql[];

enum sf_db_mode {
    SF_DB_READ,   /* readers: read-only, the file must be a spanfold database */
    SF_DB_WRITE,  /* an existing spanfold database, migrated (e.g. tracefs2spans --refit) */
    SF_DB_CREATE, /* ingest tools: also create a new or empty file */
};

/* Open the database at path in mode.  Two writers creating one file at once both
 * succeed (creation is retried while the other holds the lock).  Returns 0 and
 * *out, or with err filled and *out NULL: SF_E_IO (no such file, for READ/WRITE),
 * SF_E_DB (not SQLite, not spanfold's, locked past SF_DB_BUSY_MS, ...),
 * SF_E_UNSUPPORTED (schema newer than this build, or older for READ), SF_E_NOMEM. */
int sf_db_open_mode(struct sf_db **out, const char *path, enum sf_db_mode mode, struct sf_err *err);

/* Before the first open: this process uses SQLite from one thread at a time (a tool
 * whose writer is its only SQLite thread), so SQLite runs without mutexes and without
 * allocation statistics (a mutex per malloc).  Once SQLite has started it changes
 * nothing. */
void sf_db_one_thread(void);

/* sf_db_open_mode(out, path, SF_DB_CREATE, err): the ingest tools' open. */
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
    const char *sha256; /* 64 hex, or NULL when not known yet: hashed while it is read,
                         * set with sf_db_source_set_hash at the end */
    uint64_t bytes;     /* size, 0 if unknown (stdin) */
    const char *clock;  /* clock domain, or NULL for "unknown" */
    const char *tool;   /* writer's name */
};

/* --wait: from now on sf_db_source_begin waits for another process that ingests
 * the same input instead of returning SF_E_BUSY. */
void sf_db_set_wait(struct sf_db *db, int wait);

/* Register an input, take its ownership (see the top) and commit that row, all in
 * one write transaction.  Without sha256 but with bytes (a file hashed while it is
 * read), a first input of its kind and size is taken as it is; when a source of that
 * size exists, the file at path is hashed first and checked as below.  When every
 * bulk table is empty, their indexes are dropped and built at the source's end
 * (sf_db_source_end, or sf_db_close), one sort per index.  If a *complete* source with the same
 * sha256 and kind exists, nothing is written, *dup_of gets its id and SF_E_DUP is returned.  A
 * *partial* one that no live process owns (an earlier run that failed or was
 * killed) is deleted with all its rows first, so re-running after a crash never
 * duplicates.  A partial one that a live process owns gives SF_E_BUSY with *dup_of
 * set, or, after sf_db_set_wait, is waited for (then: SF_E_DUP if it completed, else it is
 * taken over).  Returns 0 with *id, SF_E_DUP, SF_E_BUSY or SF_E_DB. */
int sf_db_source_begin(struct sf_db *db, const struct sf_source_info *in, int64_t *id,
                       int64_t *dup_of, struct sf_err *err);

/* Set a source's clock domain once it is known (e.g. from a perf header). */
int sf_db_source_set_clock(struct sf_db *db, int64_t id, const char *clock, struct sf_err *err);

/* Set the sha256 and size known only at the end (stdin).  If another source with
 * that hash is complete, or is owned by a live process that knew it first,
 * returns SF_E_DUP with *dup_of set and deletes this source's rows (committed
 * batches included) and gives up its ownership. */
int sf_db_source_set_hash(struct sf_db *db, int64_t id, const char *sha256, uint64_t bytes,
                          int64_t *dup_of, struct sf_err *err);

/* Finish a source: commit pending rows, then mark it complete (error NULL) or
 * partial with error text, with unit counts, and give up its ownership.
 * Returns 0 or SF_E_DB. */
int sf_db_source_end(struct sf_db *db, int64_t id, const char *error, uint64_t units,
                     uint64_t bad_units, struct sf_err *err);

/* 1 when a live process other than this handle owns source id (it is being
 * ingested now), else 0. */
int sf_db_source_owned(struct sf_db *db, int64_t id);

/* ---- for readers (sf_db_read.c) ------------------------------------------------ */

/* The sources that are not complete, as readers must report them. */
struct sf_db_health {
    int64_t sources;     /* all sources */
    int64_t running;     /* partial, owned by a live process: being ingested now */
    int64_t interrupted; /* partial, 'interrupted', no owner: killed or crashed */
    int64_t failed;      /* partial with an error: the run stopped at bad input */
    char text[512];      /* "" when all are complete, else one line naming the first ones */
};

/* Fill h for the open database.  Returns 0 or SF_E_DB. */
int sf_db_health(struct sf_db *db, struct sf_db_health *h, struct sf_err *err);

/* From now on this handle sees only complete sources: every table with a source
 * (sources, connections, connection_events, spans, contexts, span_events, losses,
 * span_intervals, samples, clock_fits) is shadowed by a TEMP view of the rows of
 * complete sources, so the readers' queries need no change (--complete-only).
 * Returns 0 or SF_E_DB. */
int sf_db_complete_only(struct sf_db *db, struct sf_err *err);

/* The readers' one rule: fill note (size n) with "" when every source is complete,
 * else with one sentence for stderr and reports, "N of M sources are not complete
 * and are used as they are (--complete-only leaves them out): source 3 x.pcap:
 * interrupted ...", or with complete_only (which also applies
 * sf_db_complete_only) "... and are left out (--complete-only): ...".
 * Returns 0 or SF_E_DB. */
int sf_db_partial_note(struct sf_db *db, int complete_only, char *note, size_t n,
                       struct sf_err *err);

/* How a process's CPU samples were attributed to spans (issue 36: say what was
 * covered, so a user knows how far to trust a flame graph of "the slow requests"). */
struct sf_db_coverage {
    int64_t pid;
    char comm[32];
    int64_t samples;
    int64_t markers; /* attributed by a span marker interval on its thread */
    int64_t sockets; /* attributed by socket events (no instrumentation): the thread's claim */
    int64_t loop;    /* ...in time an event loop's order gave one span (its waits) */
    int64_t go;      /* ...by a goroutine's claim, on the threads that ran it (Go) */
    int64_t shared;  /* in time several spans claim: not attributed */
    int64_t none;    /* outside every span */
};

/* The processes with the most samples, up to max of them, into rows (by samples,
 * most first); *n their number.  Returns 0 or SF_E_DB. */
int sf_db_coverage(struct sf_db *db, struct sf_db_coverage *rows, size_t max, size_t *n,
                   struct sf_err *err);

/* The processes of sf_db_coverage that have samples in some span, one line each to f after
 * prefix: "comm (pid): N samples: x % by span markers, ... % outside every span" (spanfold
 * ingest's summary and tracefs2spans').  Returns 0 or SF_E_DB / SF_E_NOMEM. */
int sf_db_coverage_say(struct sf_db *db, FILE *f, const char *prefix, struct sf_err *err);

#endif
