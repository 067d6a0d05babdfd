/* sf_err.c - error record helpers (see sf_err.h). */
#include "sf_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void sf_err_clear(struct sf_err *err)
{
    /* field by field: the parsers clear one per packet or line, and the message
     * buffer is only ever read as a string */
    err->code = 0;
    err->proto = err->unit = NULL;
    err->unit_no = 0;
    err->off = err->unit_off = UINT64_MAX;
    err->col = 0;
    err->msg[0] = 0;
}

int sf_err_set(struct sf_err *err, int code, uint64_t off, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL)
        return code;
    err->code = code;
    err->off = off;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return code;
}

int sf_err_prefix(struct sf_err *err, const char *fmt, ...)
{
    char head[SF_ERR_MSG_MAX], old[SF_ERR_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(head, sizeof(head), fmt, ap);
    va_end(ap);
    /* Truncation keeps the head: the outer context matters most in one line. */
    memcpy(old, err->msg, sizeof(old));
    size_t h = strlen(head), o = strnlen(old, sizeof(old) - 1);
    if (o > sizeof(err->msg) - 1 - h)
        o = sizeof(err->msg) - 1 - h;
    memcpy(err->msg, head, h);
    memcpy(err->msg + h, old, o);
    err->msg[h + o] = 0;
    return err->code;
}

const char *sf_err_name(int code)
{
    switch (code) {
    case SF_OK:
        return "ok";
    case SF_E_TRUNC:
        return "truncated";
    case SF_E_MALFORMED:
        return "malformed";
    case SF_E_LIMIT:
        return "limit exceeded";
    case SF_E_IO:
        return "I/O error";
    case SF_E_NOMEM:
        return "out of memory";
    case SF_E_DB:
        return "database error";
    case SF_E_USAGE:
        return "usage error";
    case SF_E_UNSUPPORTED:
        return "unsupported";
    case SF_E_DUP:
        return "duplicate";
    case SF_E_BUSY:
        return "busy";
    case SF_E_RANGE:
        return "out of range";
    }
    return "unknown error";
}

int sf_err_format(const struct sf_err *err, const char *tool, const char *file, char *out,
                  size_t outsz)
{
    char where[96] = "";
    const char *msg = err->msg[0] ? err->msg : sf_err_name(err->code);
    int n;

    if (err->unit && strcmp(err->unit, "line") == 0) {
        /* file:line:col: so that editors can jump to the spot */
        if (err->col)
            snprintf(where, sizeof(where), ":%llu:%u", (unsigned long long)err->unit_no, err->col);
        else
            snprintf(where, sizeof(where), ":%llu", (unsigned long long)err->unit_no);
        n = snprintf(out, outsz, "%s: %s%s: %s%s%s", tool, file ? file : "-", where,
                     err->proto ? err->proto : "", err->proto ? ": " : "", msg);
        return n;
    }
    if (err->unit && err->unit_no)
        snprintf(where, sizeof(where), " %s %llu", err->unit, (unsigned long long)err->unit_no);
    if (err->unit_off != UINT64_MAX) { /* " packet 5 @0x1a2b byte 42": both places */
        size_t l = strlen(where);
        snprintf(where + l, sizeof(where) - l, " @0x%llx", (unsigned long long)err->unit_off);
        if (err->off != UINT64_MAX) {
            l = strlen(where);
            snprintf(where + l, sizeof(where) - l, " byte %llu", (unsigned long long)err->off);
        }
    } else if (err->off != UINT64_MAX) {
        size_t l = strlen(where);
        snprintf(where + l, sizeof(where) - l, " @0x%llx", (unsigned long long)err->off);
    }
    n = snprintf(out, outsz, "%s: %s:%s%s %s%s%s", tool, file ? file : "-", where,
                 where[0] ? ":" : "", err->proto ? err->proto : "", err->proto ? ": " : "", msg);
    return n;
}
