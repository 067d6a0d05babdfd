/* sf_fail.h - fault injection for the database layer, in the manner of SQLite's
 * own anomaly tests (src/test_malloc.c: the next N-1 calls succeed, then K fail).
 *
 *   SF_FAIL_AT=alloc:N[:K]   the Nth SQLite memory allocation fails, and the K-1
 *                            after it (K = 0: every later one; default K = 1)
 *   SF_FAIL_AT=write:N[:K]   the same for writes and truncations of the database,
 *                            its WAL and journal (SQLITE_IOERR_WRITE: a full disk)
 *   SF_FAIL_AT=stop:N[:K]    the process stops itself (SIGSTOP) at the Nth write, which
 *                            then proceeds when it is continued: a test freezes an
 *                            ingest at a known point, then kills it (a crash
 *                            mid-write) or starts a second process against it
 *
 * A test sweeps N over a real ingest and checks, every time, that the database is
 * intact and that the tool reported the failure.  The counters are the one
 * mutable global state of lib/: a test hook that must see every connection.
 */
#ifndef SF_FAIL_H
#define SF_FAIL_H

#include <stdint.h>

/* Read SF_FAIL_AT and install the hooks, once per process, before SQLite starts
 * (sf_db_open_mode calls it).  Without the variable nothing is installed.
 * Returns 0, or SF_E_USAGE when the value does not parse. */
int sf_fail_setup(void);

/* The number of faults injected so far (0 without SF_FAIL_AT). */
uint64_t sf_fail_injected(void);

#endif
