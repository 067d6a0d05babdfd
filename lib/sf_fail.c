/* sf_fail.c - SF_FAIL_AT fault injection (see sf_fail.h).
 *
 * Allocation: SQLITE_CONFIG_MALLOC with wrappers around the default allocator.
 * Writes: a shim VFS registered as the default, which passes every call to the
 * real one ("unix") except xWrite/xTruncate, which fail when the counter says so.
 */
#include "sf_fail.h"

#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "sf_err.h"
#include "sf_opt.h"

enum { FAIL_NONE, FAIL_ALLOC, FAIL_WRITE, FAIL_STOP };

/* The test hook's state: set once from the environment, counted by every call. */
static struct {
    int kind, done;
    uint64_t at, count, calls, injected;
    sqlite3_mem_methods mem;
    sqlite3_vfs *real, vfs;
} fs;

/* 1 when this call (the next one counted) must fail. */
static int fail_now(void)
{
    uint64_t c = ++fs.calls;

    if (c < fs.at || (fs.count && c >= fs.at + fs.count))
        return 0;
    fs.injected++;
    return 1;
}

uint64_t sf_fail_injected(void)
{
    return fs.injected;
}

/* ---- allocation ----------------------------------------------------------------- */

static void *fail_malloc(int n)
{
    return fail_now() ? NULL : fs.mem.xMalloc(n);
}

static void *fail_realloc(void *p, int n)
{
    return fail_now() ? NULL : fs.mem.xRealloc(p, n);
}

/* ---- writes: a shim VFS --------------------------------------------------------- */

struct fail_file {
    sqlite3_file base;  /* pMethods = &fail_io */
    sqlite3_file *real; /* the real VFS's file, allocated right after this struct */
};

#define REAL(f) (((struct fail_file *)(f))->real)

static int f_close(sqlite3_file *f)
{
    int rc = REAL(f)->pMethods ? REAL(f)->pMethods->xClose(REAL(f)) : SQLITE_OK;
    f->pMethods = NULL;
    return rc;
}

static int f_read(sqlite3_file *f, void *b, int n, sqlite3_int64 off)
{
    return REAL(f)->pMethods->xRead(REAL(f), b, n, off);
}

/* 1 when this write must fail; "stop" stops the process instead (a test then
 * kills it there, or lets it go on), and the write proceeds. */
static int write_fails(void)
{
    if (!fail_now())
        return 0;
    if (fs.kind == FAIL_STOP) {
        raise(SIGSTOP);
        return 0;
    }
    return 1;
}

static int f_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 off)
{
    return write_fails() ? SQLITE_IOERR_WRITE : REAL(f)->pMethods->xWrite(REAL(f), b, n, off);
}

static int f_truncate(sqlite3_file *f, sqlite3_int64 size)
{
    return write_fails() ? SQLITE_IOERR_TRUNCATE : REAL(f)->pMethods->xTruncate(REAL(f), size);
}

static int f_sync(sqlite3_file *f, int flags)
{
    return REAL(f)->pMethods->xSync(REAL(f), flags);
}

static int f_size(sqlite3_file *f, sqlite3_int64 *size)
{
    return REAL(f)->pMethods->xFileSize(REAL(f), size);
}

static int f_lock(sqlite3_file *f, int l)
{
    return REAL(f)->pMethods->xLock(REAL(f), l);
}

static int f_unlock(sqlite3_file *f, int l)
{
    return REAL(f)->pMethods->xUnlock(REAL(f), l);
}

static int f_reserved(sqlite3_file *f, int *out)
{
    return REAL(f)->pMethods->xCheckReservedLock(REAL(f), out);
}

static int f_control(sqlite3_file *f, int op, void *arg)
{
    return REAL(f)->pMethods->xFileControl(REAL(f), op, arg);
}

static int f_sector(sqlite3_file *f)
{
    return REAL(f)->pMethods->xSectorSize(REAL(f));
}

static int f_device(sqlite3_file *f)
{
    return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}

static int f_shm_map(sqlite3_file *f, int pg, int pgsz, int extend, void volatile **p)
{
    return REAL(f)->pMethods->xShmMap(REAL(f), pg, pgsz, extend, p);
}

static int f_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
    return REAL(f)->pMethods->xShmLock(REAL(f), off, n, flags);
}

static void f_shm_barrier(sqlite3_file *f)
{
    REAL(f)->pMethods->xShmBarrier(REAL(f));
}

static int f_shm_unmap(sqlite3_file *f, int del)
{
    return REAL(f)->pMethods->xShmUnmap(REAL(f), del);
}

static int f_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **p)
{
    return REAL(f)->pMethods->xFetch(REAL(f), off, n, p);
}

static int f_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
    return REAL(f)->pMethods->xUnfetch(REAL(f), off, p);
}

static const sqlite3_io_methods fail_io = {
    3,          f_close,       f_read,      f_write,   f_truncate, f_sync,   f_size,
    f_lock,     f_unlock,      f_reserved,  f_control, f_sector,   f_device, f_shm_map,
    f_shm_lock, f_shm_barrier, f_shm_unmap, f_fetch,   f_unfetch,
};

static int v_open(sqlite3_vfs *v, const char *name, sqlite3_file *f, int flags, int *out)
{
    struct fail_file *ff = (struct fail_file *)f;
    int rc;

    (void)v;
    ff->real = (sqlite3_file *)(ff + 1);
    memset(ff->real, 0, (size_t)fs.real->szOsFile);
    rc = fs.real->xOpen(fs.real, name, ff->real, flags, out);
    /* xClose is called even after a failed open when pMethods is set */
    f->pMethods = ff->real->pMethods ? &fail_io : NULL;
    return rc;
}

static int v_delete(sqlite3_vfs *v, const char *name, int sync)
{
    (void)v;
    return fs.real->xDelete(fs.real, name, sync);
}

static int v_access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
    (void)v;
    return fs.real->xAccess(fs.real, name, flags, out);
}

static int v_fullpath(sqlite3_vfs *v, const char *name, int n, char *out)
{
    (void)v;
    return fs.real->xFullPathname(fs.real, name, n, out);
}

static int v_random(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    return fs.real->xRandomness(fs.real, n, out);
}

static int v_sleep(sqlite3_vfs *v, int us)
{
    (void)v;
    return fs.real->xSleep(fs.real, us);
}

static int v_time(sqlite3_vfs *v, double *t)
{
    (void)v;
    return fs.real->xCurrentTime(fs.real, t);
}

static int v_error(sqlite3_vfs *v, int n, char *out)
{
    (void)v;
    return fs.real->xGetLastError(fs.real, n, out);
}

static int v_time64(sqlite3_vfs *v, sqlite3_int64 *t)
{
    (void)v;
    return fs.real->xCurrentTimeInt64(fs.real, t);
}

static int install_vfs(void)
{
    if ((fs.real = sqlite3_vfs_find(NULL)) == NULL)
        return SF_E_USAGE;
    fs.vfs = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = (int)sizeof(struct fail_file) + fs.real->szOsFile,
        .mxPathname = fs.real->mxPathname,
        .zName = "sf_fail",
        .xOpen = v_open,
        .xDelete = v_delete,
        .xAccess = v_access,
        .xFullPathname = v_fullpath,
        .xRandomness = v_random,
        .xSleep = v_sleep,
        .xCurrentTime = v_time,
        .xGetLastError = v_error,
        .xCurrentTimeInt64 = v_time64,
    };
    return sqlite3_vfs_register(&fs.vfs, 1) == SQLITE_OK ? 0 : SF_E_USAGE;
}

/* "alloc:N[:K]" / "write:N[:K]" into fs. */
static int parse(const char *s)
{
    const char *num, *colon;
    char buf[32];
    int64_t v;

    if (strncmp(s, "alloc:", 6) == 0)
        fs.kind = FAIL_ALLOC;
    else if (strncmp(s, "write:", 6) == 0)
        fs.kind = FAIL_WRITE;
    else if (strncmp(s, "stop:", 5) == 0)
        fs.kind = FAIL_STOP;
    else
        return SF_E_USAGE;
    num = s + (fs.kind == FAIL_STOP ? 5 : 6);
    colon = strchr(num, ':');
    fs.count = 1;
    if (colon) {
        if (sf_opt_i64(colon + 1, 0, INT64_MAX, &v))
            return SF_E_USAGE;
        fs.count = (uint64_t)v;
    }
    snprintf(buf, sizeof(buf), "%.*s", (int)(colon ? (size_t)(colon - num) : strlen(num)), num);
    if (sf_opt_i64(buf, 1, INT64_MAX, &v))
        return SF_E_USAGE;
    fs.at = (uint64_t)v;
    return 0;
}

int sf_fail_setup(void)
{
    const char *s = getenv("SF_FAIL_AT");

    if (fs.done)
        return 0;
    fs.done = 1;
    if (s == NULL || *s == 0)
        return 0;
    if (parse(s)) {
        fs.kind = FAIL_NONE;
        return SF_E_USAGE;
    }
    if (fs.kind == FAIL_ALLOC) {
        sqlite3_mem_methods m;
        if (sqlite3_config(SQLITE_CONFIG_GETMALLOC, &fs.mem) != SQLITE_OK)
            return SF_E_USAGE;
        m = fs.mem;
        m.xMalloc = fail_malloc;
        m.xRealloc = fail_realloc;
        if (sqlite3_config(SQLITE_CONFIG_MALLOC, &m) != SQLITE_OK)
            return SF_E_USAGE;
        return 0;
    }
    return install_vfs();
}
