/* offcpu.c - the off-CPU lines of spantrace --offcpu: one line per time a thread was
 * off its CPU, its fields checked here; ingest.c stores them as offcpu rows.
 *
 *   svc-4243 (4242) [001] ..... 12345.678901234: spantrace_offcpu: end=12345.699001234
 *       state=S waker=4250 frame=9 stack=svc;main;pool_acquire;...;schedule;__schedule
 *
 * The line's time is when the thread left its CPU, end= when it ran again (the same
 * clock, and in the same units: a raw count when the line's time is one).  state:
 * prev_state as the kernel prints it (1 to OC_STATE_MAX characters); waker: the tid
 * that woke it or "-"; frame: the program's innermost own frame as an index from the
 * leaf of the stack (0 = its last frame), or "-"; stack: the rest of the line, the
 * folded stack "comm;root;...;leaf" (frames may hold blanks, never ';').  The other
 * fields come in any order before stack=, each once; fields this reader does not know
 * (a later spantrace's) are skipped.
 */
#include <string.h>

#include "sf_clock.h"
#include "t2s.h"

enum { F_END, F_STATE, F_WAKER, F_FRAME, F_N };

static const char *const field_name[F_N] = {"end=", "state=", "waker=", "frame="};

int offcpu_is_event(const struct tf_line *l)
{
    return l->kind == TF_EVENT && l->event && l->event_len == 16 &&
           memcmp(l->event, "spantrace_offcpu", 16) == 0;
}

static int bad(struct sf_err *err, size_t col, const char *what)
{
    sf_err_set(err, SF_E_MALFORMED, UINT64_MAX, "off-CPU event: %s", what);
    if (err)
        err->col = (uint32_t)col + 1;
    return SF_E_MALFORMED;
}

/* Digits s[0..n) into *v (at most 18 of them); 0 or -1. */
static int parse_uint(const char *s, size_t n, int64_t *v)
{
    int64_t x = 0;

    if (n == 0 || n > 18)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        x = x * 10 + (s[i] - '0');
    }
    *v = x;
    return 0;
}

/* The value of field f (s[0..n)) into ev; 0, or a message for the caller to report at
 * the value's column. */
static const char *set_field(int f, const char *s, size_t n, int raw, int64_t *frame_k,
                             struct oc_event *ev)
{
    switch (f) {
    case F_END:
        if (raw ? parse_uint(s, n, &ev->end_ns) : sf_clock_parse_ts(s, n, &ev->end_ns))
            return raw ? "expected end=N (a count, as the line's time)" : "expected end=SEC.NSEC";
        return NULL;
    case F_STATE:
        if (n == 0 || n > OC_STATE_MAX)
            return "expected state= of 1 to 7 characters (S, D, R+, ...)";
        ev->state = s;
        ev->state_len = n;
        return NULL;
    case F_WAKER:
        if (n == 1 && s[0] == '-')
            ev->waker_tid = -1;
        else if (parse_uint(s, n, &ev->waker_tid))
            return "expected waker=TID or waker=-";
        return NULL;
    default: /* F_FRAME */
        if (n == 1 && s[0] == '-')
            *frame_k = -1;
        else if (parse_uint(s, n, frame_k))
            return "expected frame=K (an index from the stack's leaf) or frame=-";
        return NULL;
    }
}

/* The stack's frames are all non-empty: 0, or -1 with *at at the first empty one. */
static int check_stack(const char *s, size_t n, size_t *at)
{
    for (size_t i = 0; i <= n; i++) {
        int edge = i == 0 || s[i - 1] == ';';
        if (edge && (i == n || s[i] == ';')) {
            *at = i;
            return -1;
        }
    }
    return 0;
}

/* Frame k from the leaf of stack s[0..n) (the comm is not a frame), without a "+0x"
 * offset, into ev->frame; 0, or -1 when the stack has no such frame. */
static int pick_frame(const char *s, size_t n, int64_t k, struct oc_event *ev)
{
    size_t e = n;

    for (;;) {
        size_t b = e;
        while (b > 0 && s[b - 1] != ';')
            b--;
        if (b == 0)
            return -1; /* reached the comm */
        if (k-- == 0) {
            const char *off = NULL;
            for (size_t i = b; i + 3 <= e && off == NULL; i++)
                if (memcmp(s + i, "+0x", 3) == 0)
                    off = s + i;
            ev->frame = s + b;
            ev->frame_len = off ? (size_t)(off - (s + b)) : e - b;
            return 0;
        }
        e = b - 1;
    }
}

int offcpu_parse(const char *s, size_t n, int64_t start_ns, int raw, struct oc_event *ev,
                 struct sf_err *err)
{
    size_t i = 0, at[F_N] = {0}, stack_at = 0;
    int seen[F_N] = {0};
    int64_t frame_k = -1;
    const char *why;

    memset(ev, 0, sizeof(*ev));
    ev->waker_tid = -1;
    for (;;) {
        size_t b, e, v;
        int f;
        while (i < n && s[i] == ' ')
            i++;
        if (i == n)
            return bad(err, i, "expected stack=FRAMES, the last field");
        if (n - i >= 6 && memcmp(s + i, "stack=", 6) == 0)
            break;
        for (b = i, e = i; e < n && s[e] != ' ';)
            e++;
        for (v = b; v < e && s[v] != '=';)
            v++;
        if (v == e || v == b)
            return bad(err, b, "expected KEY=VALUE fields, then stack=");
        for (f = 0; f < F_N; f++)
            if (v + 1 - b == strlen(field_name[f]) && memcmp(s + b, field_name[f], v + 1 - b) == 0)
                break;
        i = e;
        if (f == F_N)
            continue; /* a field of a later spantrace */
        if (seen[f])
            return bad(err, b, "a field given twice");
        seen[f] = 1;
        at[f] = v + 1;
        if ((why = set_field(f, s + v + 1, e - v - 1, raw, &frame_k, ev)) != NULL)
            return bad(err, v + 1, why);
    }
    stack_at = i + 6;
    for (int f = 0; f < F_N; f++)
        if (!seen[f]) {
            static const char *const missing[F_N] = {
                "expected end= before stack=", "expected state= before stack=",
                "expected waker= before stack=", "expected frame= before stack="};
            return bad(err, i, missing[f]);
        }
    if (ev->end_ns < start_ns)
        return bad(err, at[F_END], "end= before the line's time (when the thread left its CPU)");
    ev->stack = s + stack_at;
    ev->stack_len = n - stack_at;
    if (check_stack(ev->stack, ev->stack_len, &i))
        return bad(err, stack_at + i, "expected stack=COMM;FRAME;...: an empty frame");
    if (frame_k >= 0 && pick_frame(ev->stack, ev->stack_len, frame_k, ev))
        return bad(err, at[F_FRAME], "frame=K beyond the stack's frames");
    return 0;
}
