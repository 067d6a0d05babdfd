/* sf_sse.c - Server-Sent Events, read incrementally (sf_sse.h). */
#include "sf_sse.h"

#include <string.h>

enum { ST_LINE, ST_NAME, ST_SPACE, ST_VALUE };               /* state */
enum { F_OTHER, F_DATA, F_EVENT, F_ID, F_RETRY, F_COMMENT }; /* field */

void sf_sse_init(struct sf_sse *s, size_t max)
{
    memset(s, 0, sizeof(*s));
    sf_buf_init(&s->data, max + 1);
    s->max = max;
}

void sf_sse_free(struct sf_sse *s)
{
    sf_buf_free(&s->data);
}

int sf_sse_pending(const struct sf_sse *s)
{
    return s->started;
}

static void dispatch(struct sf_sse *s, int64_t ts, sf_sse_fn fn, void *arg)
{
    struct sf_sse_event ev;

    if (s->has_data) {
        ev.type = s->type[0] ? s->type : "message";
        ev.data = (const char *)s->data.data;
        ev.len = s->data.len;
        ev.first_ts = s->first_ts;
        ev.last_ts = ts;
        ev.over = s->over;
        s->events++;
        fn(arg, &ev);
    }
    sf_buf_reset(&s->data);
    s->type[0] = 0;
    s->type_len = 0;
    s->has_data = s->over = s->started = 0;
}

static int field_of(const struct sf_sse *s)
{
    if (s->name_len == 4 && memcmp(s->name, "data", 4) == 0)
        return F_DATA;
    if (s->name_len == 5 && memcmp(s->name, "event", 5) == 0)
        return F_EVENT;
    if (s->name_len == 2 && memcmp(s->name, "id", 2) == 0)
        return F_ID;
    if (s->name_len == 5 && memcmp(s->name, "retry", 5) == 0)
        return F_RETRY;
    return F_OTHER;
}

/* The value of the current field (its name known), p[0..n), more may follow. */
static void value(struct sf_sse *s, const uint8_t *p, size_t n)
{
    size_t room;

    if (s->field == F_DATA) {
        room = s->max - s->data.len;
        if (n > room) {
            s->over = 1;
            n = room;
        }
        if (sf_buf_append(&s->data, p, n) < 0)
            s->over = 1;
    } else if (s->field == F_EVENT) {
        if (s->type_len + n >= sizeof(s->type))
            n = sizeof(s->type) - 1 - s->type_len;
        memcpy(s->type + s->type_len, p, n);
        s->type_len += n;
        s->type[s->type_len] = 0;
    }
}

/* The start of a field's value: a data field after the first adds a LF. */
static void begin_value(struct sf_sse *s)
{
    s->field = s->name_len == 0 ? F_COMMENT : field_of(s);
    if (s->field == F_DATA) {
        if (s->has_data)
            value(s, (const uint8_t *)"\n", 1);
        s->has_data = 1;
    } else if (s->field == F_EVENT) {
        s->type[0] = 0;
        s->type_len = 0;
    }
}

void sf_sse_feed(struct sf_sse *s, const uint8_t *p, size_t n, int64_t ts, sf_sse_fn fn, void *arg)
{
    size_t i = 0;

    while (i < n) {
        uint8_t c = p[i];
        if (c == '\n' && s->cr) { /* the LF of a CR LF */
            s->cr = 0;
            i++;
            continue;
        }
        s->cr = 0;
        if (c == '\r' || c == '\n') {
            s->cr = c == '\r';
            i++;
            if (s->state == ST_LINE) { /* a blank line */
                dispatch(s, ts, fn, arg);
                continue;
            }
            if (s->state == ST_NAME) /* a name alone: the field with an empty value */
                begin_value(s);
            s->state = ST_LINE;
            continue;
        }
        switch (s->state) {
        case ST_LINE:
            if (!s->started) {
                s->started = 1;
                s->first_ts = ts;
            }
            s->name_len = 0;
            s->state = ST_NAME;
            /* fall through */
        case ST_NAME:
            if (c == ':') {
                begin_value(s);
                s->state = ST_SPACE;
            } else {
                if (s->name_len < sizeof(s->name))
                    s->name[s->name_len] = (char)c;
                s->name_len += s->name_len <= sizeof(s->name); /* > 8: matches nothing */
            }
            i++;
            break;
        case ST_SPACE:
            s->state = ST_VALUE;
            if (c == ' ') {
                i++;
                break;
            }
            /* fall through */
        case ST_VALUE: {
            size_t j = i;
            while (j < n && p[j] != '\r' && p[j] != '\n')
                j++;
            if (s->field != F_COMMENT)
                value(s, p + i, j - i);
            i = j;
            break;
        }
        }
    }
}
