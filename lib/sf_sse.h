/* sf_sse.h - Server-Sent Events (the `text/event-stream` format of the WHATWG HTML
 * standard, section 9.2.6), read incrementally from the bytes of a response body as
 * they arrive, split anywhere.
 *
 *   stream = *event;  event = *( comment | field ) end-of-line
 *   field  = name [ ":" [ " " ] value ] end-of-line;  comment = ":" any end-of-line
 *   end-of-line = CR LF | LF | CR
 *
 * Fields read: `data` (lines joined by LF), `event` (the type, "message" when absent);
 * `id` and `retry` are taken and dropped, other fields ignored.  An event is handed on
 * at its blank line, if it had a data field.  Bounded: the data of one event up to the
 * `max` given (past it the event is handed on with `over` set and its data cut), the
 * event type to 63 bytes; memory is one buffer that grows to the largest event.
 */
#ifndef SF_SSE_H
#define SF_SSE_H

#include <stddef.h>
#include <stdint.h>

#include "sf_buf.h"

/* One event: its type, data (not NUL-terminated), when its first and last bytes came
 * (the `ts` of the sf_sse_feed calls that carried them), and whether it was cut. */
struct sf_sse_event {
    const char *type;
    const char *data;
    size_t len;
    int64_t first_ts, last_ts;
    int over;
};

typedef void (*sf_sse_fn)(void *arg, const struct sf_sse_event *ev);

struct sf_sse {
    struct sf_buf data;
    char type[64];
    size_t type_len; /* bytes of type (it may hold a NUL: not strlen) */
    char name[8];    /* the field name being read (cut: matches nothing) */
    size_t name_len; /* bytes of it so far */
    int state;       /* sf_sse.c */
    int field;       /* the field whose value is being read */
    int cr;          /* the last byte was CR (a LF next ends nothing more) */
    int has_data, over, started;
    size_t max;
    int64_t first_ts;
    uint64_t events; /* handed on */
};

void sf_sse_init(struct sf_sse *s, size_t max);
/* Read p[0..n), which arrived at ts; each complete event goes to fn. */
void sf_sse_feed(struct sf_sse *s, const uint8_t *p, size_t n, int64_t ts, sf_sse_fn fn, void *arg);
/* 1 when an event is begun and not ended (the stream ended inside it: it is dropped, as
 * a browser drops it). */
int sf_sse_pending(const struct sf_sse *s);
void sf_sse_free(struct sf_sse *s);

#endif
