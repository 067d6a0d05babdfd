/* sf_db_int.h - what lib/sf_db.c (open, migrate, batches, statements) and
 * lib/sf_db_source.c (sources: ownership, duplicates, bulk indexes) share.  Nothing
 * outside those two files includes it: the handle is opaque everywhere else. */
#ifndef SF_DB_INT_H
#define SF_DB_INT_H

#include <stdint.h>

#include "sf_db.h"

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

/* SQLite's error of the handle as err (SF_E_DB, "what: message"); returns SF_E_DB. */
int sf_dbi_fail(struct sf_db *db, struct sf_err *err, const char *what);
/* The first column of sql's first row into *v: 0, or SF_E_DB. */
int sf_dbi_query_int(struct sf_db *db, const char *sql, int64_t *v, struct sf_err *err);
void sf_dbi_sleep_ms(long ms);
/* Build the bulk tables' indexes this handle dropped (sf_db_source.c): 0 or SF_E_DB. */
int sf_dbi_build_indexes(struct sf_db *db, struct sf_err *err);

#endif
