/* sf_err.h - error codes and the error record every parser fills.
 *
 * lib/ never prints and never exits: a function that fails returns a negative
 * SF_E_* code and, where it knows them, fills a caller-provided struct sf_err with
 * the protocol that failed, the byte offset and a message.  Only a tool's driver
 * prints, once, through sf_err_format().
 */
#ifndef SF_ERR_H
#define SF_ERR_H

#include <stddef.h>
#include <stdint.h>

enum sf_err_code {
    SF_OK = 0,
    SF_E_TRUNC = -1,       /* input ended inside a unit */
    SF_E_MALFORMED = -2,   /* input violates its format */
    SF_E_LIMIT = -3,       /* a configured cap was hit */
    SF_E_IO = -4,          /* read/write failure */
    SF_E_NOMEM = -5,       /* allocation failed */
    SF_E_DB = -6,          /* SQLite error */
    SF_E_USAGE = -7,       /* bad argument from the caller */
    SF_E_UNSUPPORTED = -8, /* valid input we do not handle */
    SF_E_DUP = -9,         /* already done (e.g. source ingested before) */
    SF_E_BUSY = -10,       /* another live process holds it (e.g. is ingesting that input) */
    SF_E_RANGE = -11,      /* a count or a sum of counts past SF_COUNT_MAX (sf_count.h) */
};

/* Exit statuses shared by every tool (docs/exit-status.md). */
enum sf_exit {
    SF_EXIT_OK = 0,       /* ran, nothing to report */
    SF_EXIT_FINDINGS = 1, /* a gate failed or findings were reported */
    SF_EXIT_USAGE = 2,    /* usage error or damaged/unreadable input */
};

#define SF_ERR_MSG_MAX 512

struct sf_err {
    int code;          /* SF_E_* or SF_OK */
    const char *proto; /* static string naming the layer, e.g. "h2", or NULL */
    const char *unit;  /* static unit name: "packet", "line", "record", or NULL */
    uint64_t unit_no;  /* 1-based number of that unit, 0 if unknown */
    uint64_t off;      /* byte offset in the input, UINT64_MAX if unknown; with unit_off:
                          the byte within the unit where the parser failed */
    uint64_t unit_off; /* byte offset of the unit in the file, UINT64_MAX if unknown */
    uint32_t col;      /* 1-based column for text inputs, 0 if unknown */
    char msg[SF_ERR_MSG_MAX];
};

/* Clear an error record (code SF_OK, offsets unknown). */
void sf_err_clear(struct sf_err *err);

/* Record an error: sets code, off and the printf-style message; keeps proto and
 * unit fields already set by an outer layer.  err may be NULL.  Returns code, so
 * that a caller can write `return sf_err_set(err, SF_E_TRUNC, off, "...")`. */
int sf_err_set(struct sf_err *err, int code, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Prefix the message with "proto: " context added by an outer layer, e.g.
 * "h2 stream 5: " in front of "HPACK: invalid index 97".  Returns err->code. */
int sf_err_prefix(struct sf_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Short name of a code ("truncated", "malformed", ...). Never NULL. */
const char *sf_err_name(int code);

/* Format an error for printing: "tool: file: line 12:4: msg" for text units
 * (file:line:col: style when unit is "line"), "tool: file: packet 17 @0x1a2b: msg"
 * otherwise.  Always NUL-terminates; returns the length that would have been
 * written (snprintf semantics). */
int sf_err_format(const struct sf_err *err, const char *tool, const char *file, char *out,
                  size_t outsz);

#endif
