/* db_test.h - helpers for the unit tests that write a spanfold database. */
#ifndef DB_TEST_H
#define DB_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "sf_db.h"

/* The single integer a query returns: -1 without a row, -2 when it does not prepare. */
static inline int64_t db_count(struct sf_db *db, const char *sql)
{
    sqlite3_stmt *st;
    int64_t n = -1;

    if (sqlite3_prepare_v2(sf_db_handle(db), sql, -1, &st, NULL) != SQLITE_OK)
        return -2;
    if (sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* Remove a database file, its WAL files and its owner lock file. */
static inline void db_cleanup(const char *path)
{
    char x[300];

    unlink(path);
    snprintf(x, sizeof(x), "%s-wal", path);
    unlink(x);
    snprintf(x, sizeof(x), "%s-shm", path);
    unlink(x);
    snprintf(x, sizeof(x), "%s" SF_DB_OWNER_SUFFIX, path);
    unlink(x);
}

#endif
