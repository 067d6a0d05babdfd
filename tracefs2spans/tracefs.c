/* tracefs.c - one line of tracefs `trace` / `trace_pipe` text into its fields.
 *
 * Reference: kernel/trace/trace_output.c trace_print_context(), kernel/trace/trace.c
 * print_trace_header().  An event line is
 *
 *   "%16s-%-7d " comm-pid     (comm may hold '-' and spaces: pid = digits after the LAST '-')
 *   "(%7d) "                  TGID, only with record-tgid ("(-------)" when unknown)
 *   "[%03d] "                 CPU
 *   "dNs1. "                  irq-info flags, 4 (< 5.13), 5 (migrate-disable) or more chars;
 *                             absent with noirq-info
 *   " %5lu.%06lu" | " %12llu" timestamp: secs.usecs for ns clocks, a raw count otherwise
 *   ": "                      then "event: payload", or "func <-parent" (function tracer)
 *
 *          <...>-2866    [000] d...2.1   590.130406: bpf_trace_printk: span:00f067aa0ba902b7
 *   |-comm-|-pid|      |cpu| |flags|    |timestamp|  |event         | |message          |
 *
 * The CPU column is the anchor: the first "[digits]" preceded by "-pid" (and maybe a
 * TGID group) is taken, so a comm containing brackets cannot fool the parser.
 */
#include <string.h>

#include "sf_clock.h"
#include "t2s.h"

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int is_space(char c)
{
    return c == ' ' || c == '\t';
}

static int starts(const char *s, size_t n, const char *lit)
{
    size_t l = strlen(lit);
    return n >= l && memcmp(s, lit, l) == 0;
}

/* Parse digits s[0..n) into *v; 0 or -1 (empty, non-digit, overflow). */
static int parse_u63(const char *s, size_t n, int64_t *v)
{
    int64_t x = 0;

    if (n == 0)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(s[i]) || x > (INT64_MAX - 9) / 10)
            return -1;
        x = x * 10 + (s[i] - '0');
    }
    *v = x;
    return 0;
}

static int bad(struct tf_line *out, struct sf_err *err, size_t col, const char *msg)
{
    out->kind = TF_BAD;
    sf_err_set(err, SF_E_MALFORMED, UINT64_MAX, "%s", msg);
    if (err)
        err->col = (uint32_t)col + 1;
    return SF_E_MALFORMED;
}

/* "# entries-in-buffer/entries-written: 140080/250280   #P:4" */
static int parse_entries(const char *s, size_t n, struct tf_line *out, struct sf_err *err)
{
    size_t i = strlen("# entries-in-buffer/entries-written:"), a, b;

    while (i < n && is_space(s[i]))
        i++;
    for (a = i; i < n && is_digit(s[i]); i++)
        ;
    if (parse_u63(s + a, i - a, &out->entries) || i >= n || s[i] != '/')
        return bad(out, err, i, "entries-in-buffer line: expected ENTRIES/WRITTEN");
    for (b = ++i; i < n && is_digit(s[i]); i++)
        ;
    if (parse_u63(s + b, i - b, &out->written))
        return bad(out, err, i, "entries-in-buffer line: expected ENTRIES/WRITTEN");
    out->ncpu = -1;
    for (; i + 3 <= n; i++) {
        if (memcmp(s + i, "#P:", 3) == 0) {
            size_t c = i + 3, e = c;
            while (e < n && is_digit(s[e]))
                e++;
            if (parse_u63(s + c, e - c, &out->ncpu))
                out->ncpu = -1;
            break;
        }
    }
    out->kind = TF_ENTRIES;
    return 0;
}

static void set_text(struct tf_line *out, enum tf_kind kind, const char *s, size_t n)
{
    while (n && is_space(*s))
        s++, n--;
    while (n && is_space(s[n - 1]))
        n--;
    /* "# trace_clock: [local] global mono" (a copy of the trace_clock file): the
     * selected clock is the one in brackets */
    const char *lb = memchr(s, '[', n);
    const char *rb = lb ? memchr(lb, ']', n - (size_t)(lb - s)) : NULL;
    if (kind == TF_CLOCK && lb && rb) {
        n = (size_t)(rb - lb - 1);
        s = lb + 1;
    }
    out->kind = kind;
    out->text = s;
    out->text_len = n;
}

static int parse_hash_line(const char *s, size_t n, struct tf_line *out, struct sf_err *err)
{
    if (starts(s, n, "# tracer:")) {
        set_text(out, TF_TRACER, s + 9, n - 9);
        return 0;
    }
    if (starts(s, n, "# entries-in-buffer/entries-written:"))
        return parse_entries(s, n, out, err);
    if (starts(s, n, "# trace_clock:")) {
        set_text(out, TF_CLOCK, s + 14, n - 14);
        return 0;
    }
    if (starts(s, n, "# clock:")) {
        set_text(out, TF_CLOCK, s + 8, n - 8);
        return 0;
    }
    if (starts(s, n, "##### CPU ")) {
        size_t i = 10, a = 10;
        while (i < n && is_digit(s[i]))
            i++;
        if (parse_u63(s + a, i - a, &out->cpu) == 0) {
            out->kind = TF_ANNOTATE;
            return 0;
        }
    }
    out->kind = TF_COMMENT;
    return 0;
}

/* "CPU:3 [LOST 497 EVENTS]" or "CPU:3 [LOST EVENTS]" */
static int parse_lost(const char *s, size_t n, struct tf_line *out, struct sf_err *err)
{
    size_t i = 4, a = 4;

    while (i < n && is_digit(s[i]))
        i++;
    if (parse_u63(s + a, i - a, &out->cpu))
        return bad(out, err, i, "CPU:N line: expected a CPU number");
    while (i < n && is_space(s[i]))
        i++;
    if (!starts(s + i, n - i, "[LOST "))
        return bad(out, err, i, "CPU:N line: expected [LOST ...]");
    i += 6;
    out->lost = -1;
    if (starts(s + i, n - i, "EVENTS]")) {
        out->kind = TF_LOST;
        return 0;
    }
    for (a = i; i < n && is_digit(s[i]); i++)
        ;
    if (parse_u63(s + a, i - a, &out->lost) || !starts(s + i, n - i, " EVENTS]"))
        return bad(out, err, i, "CPU:N line: expected [LOST N EVENTS]");
    out->kind = TF_LOST;
    return 0;
}

/* Is s[b..] "[ddd]" followed by a blank, with "-pid" (maybe "(tgid)") before it?
 * On success fills comm, pid, tgid, cpu and returns the index after ']'. */
static size_t try_cpu_anchor(const char *s, size_t n, size_t b, struct tf_line *out)
{
    size_t i = b + 1, d, e, p;

    while (i < n && is_digit(s[i]))
        i++;
    if (i - (b + 1) < 3 || i >= n || s[i] != ']' || (i + 1 < n && !is_space(s[i + 1])))
        return 0;
    if (b == 0 || !is_space(s[b - 1]) || parse_u63(s + b + 1, i - b - 1, &out->cpu))
        return 0;
    e = b;
    while (e > 0 && is_space(s[e - 1]))
        e--;
    out->tgid = -1;
    if (e > 0 && s[e - 1] == ')') {
        /* "(%7d) " TGID or "(-------) " */
        size_t close = e - 1, open = close;
        while (open > 0 && s[open] != '(')
            open--;
        if (s[open] != '(')
            return 0;
        size_t a = open + 1;
        while (a < close && is_space(s[a]))
            a++;
        if (a < close && s[a] == '-') {
            for (size_t k = a; k < close; k++)
                if (s[k] != '-')
                    return 0;
        } else if (parse_u63(s + a, close - a, &out->tgid)) {
            return 0;
        }
        e = open;
        while (e > 0 && is_space(s[e - 1]))
            e--;
    }
    for (d = e; d > 0 && is_digit(s[d - 1]); d--)
        ;
    if (d == e || d == 0 || s[d - 1] != '-' || parse_u63(s + d, e - d, &out->pid))
        return 0;
    for (p = 0; p < d - 1 && is_space(s[p]); p++)
        ;
    out->comm = s + p;
    out->comm_len = d - 1 - p;
    return i + 1;
}

/* After the CPU column: flags (optional), timestamp, ": ", then event and message. */
static int parse_tail(const char *s, size_t n, size_t i, struct tf_line *out, struct sf_err *err)
{
    size_t a, k;

    while (i < n && is_space(s[i]))
        i++;
    for (a = i; i < n && !is_space(s[i]) && s[i] != ':'; i++)
        ;
    if (i < n && is_space(s[i])) {
        /* a flags column: [.a-zA-Z0-9]{4,} */
        for (k = a; k < i; k++) {
            char c = s[k];
            if (!(c == '.' || is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
                return bad(out, err, k, "bad character in the flags column");
        }
        if (i - a < 4)
            return bad(out, err, a, "flags column shorter than 4 characters");
        out->flags = s + a;
        out->flags_len = i - a;
        while (i < n && is_space(s[i]))
            i++;
        for (a = i; i < n && !is_space(s[i]) && s[i] != ':'; i++)
            ;
    }
    if (i >= n || s[i] != ':' || i == a)
        return bad(out, err, a, "expected a timestamp followed by ':'");
    out->ts = s + a;
    out->ts_len = i - a;
    if (memchr(out->ts, '.', out->ts_len)) {
        if (sf_clock_parse_ts(out->ts, out->ts_len, &out->ts_ns))
            return bad(out, err, a, "bad timestamp");
    } else {
        if (parse_u63(out->ts, out->ts_len, &out->ts_ns))
            return bad(out, err, a, "bad timestamp");
        out->ts_raw = 1;
    }
    i++;
    if (i < n && s[i] == ' ')
        i++;
    else if (i < n)
        return bad(out, err, i, "expected ' ' after the timestamp");
    while (n > i && (is_space(s[n - 1]) || s[n - 1] == '\r'))
        n--;
    /* "event: payload" when the first word ends in ':'; else function-tracer text */
    for (k = i; k < n && s[k] != ' ' && s[k] != ':'; k++)
        ;
    if (k < n && k > i && s[k] == ':' && (k + 1 == n || s[k + 1] == ' ')) {
        out->event = s + i;
        out->event_len = k - i;
        i = k + 1 < n ? k + 2 : n;
    }
    out->msg = s + i;
    out->msg_len = n - i;
    out->kind = TF_EVENT;
    return 0;
}

int tracefs_parse_line(const char *s, size_t n, struct tf_line *out, struct sf_err *err)
{
    size_t i;

    memset(out, 0, sizeof(*out));
    out->tgid = out->pid = out->cpu = out->lost = -1;
    while (n && (s[n - 1] == '\r' || s[n - 1] == '\n'))
        n--;
    for (i = 0; i < n && is_space(s[i]); i++)
        ;
    if (i == n) {
        out->kind = TF_BLANK;
        return 0;
    }
    if (s[0] == '#')
        return parse_hash_line(s, n, out, err);
    if (starts(s, n, "CPU:"))
        return parse_lost(s, n, out, err);
    if (starts(s + i, n - i, "=>")) {
        out->kind = TF_FRAME;
        out->msg = s + i;
        out->msg_len = n - i;
        return 0;
    }
    for (const char *b = memchr(s, '[', n); b; b = memchr(b + 1, '[', n - (size_t)(b + 1 - s))) {
        size_t after = try_cpu_anchor(s, n, (size_t)(b - s), out);
        if (after)
            return parse_tail(s, n, after, out, err);
        if ((size_t)(b + 1 - s) >= n)
            break;
    }
    return bad(out, err, i, "not a trace line: no \"COMM-PID [CPU]\" columns");
}

int tracefs_is_marker_event(const struct tf_line *l)
{
    if (l->kind != TF_EVENT || l->event == NULL)
        return 0;
    if (l->event_len == 16 && memcmp(l->event, "bpf_trace_printk", 16) == 0)
        return 1;
    if (l->event_len == 18 && memcmp(l->event, "tracing_mark_write", 18) == 0)
        return 1;
    /* spantrace's ring-buffer stream (spantrace/spantrace.c) */
    if (l->event_len == 9 && memcmp(l->event, "spantrace", 9) == 0)
        return 1;
    /* trace_printk before 5.9: the "event" is the caller's ip, 0 for BPF programs;
     * accept a decimal number or 0x-prefixed hex, never an event name */
    size_t i = 0;
    int hex = l->event_len > 2 && l->event[0] == '0' && l->event[1] == 'x';
    for (i = hex ? 2 : 0; i < l->event_len; i++) {
        char c = l->event[i];
        if (!(is_digit(c) || (hex && c >= 'a' && c <= 'f')))
            return 0;
    }
    return 1;
}
