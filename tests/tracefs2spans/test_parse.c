/* Unit tests: tracefs2spans line parser (tracefs.c), marker grammar (markers.c) and
 * off-CPU lines (offcpu.c).
 * The shared corpus lines are checked field by field by t_corpus.sh; these are the
 * layouts and failure modes around them. */
#include <string.h>

#include "../../tracefs2spans/t2s.h"
#include "tap.h"

static int parse(const char *s, struct tf_line *l, struct sf_err *e)
{
    sf_err_clear(e);
    return tracefs_parse_line(s, strlen(s), l, e);
}

static int field_is(const char *p, size_t n, const char *want)
{
    if (p == NULL)
        return want == NULL;
    return want && strlen(want) == n && memcmp(p, want, n) == 0;
}

static void test_layouts(void)
{
    struct tf_line l;
    struct sf_err e;

    TAP_EQ_INT(parse("  my app-worker 3-4242  [001] ..... 12.000001: tracing_mark_write: "
                     "span:00f067aa0ba902b7 begin",
                     &l, &e),
               0, "comm with a space and '-'");
    TAP_OK(field_is(l.comm, l.comm_len, "my app-worker 3") && l.pid == 4242 && l.cpu == 1,
           "comm 'my app-worker 3', pid 4242, cpu 1");
    TAP_OK(field_is(l.event, l.event_len, "tracing_mark_write") && l.ts_ns == 12000001000,
           "event and timestamp in ns");
    TAP_OK(tracefs_is_marker_event(&l), "tracing_mark_write carries markers");

    TAP_EQ_INT(parse("       a[1]-b-77    [002] d.h1. 5.5: bpf_trace_printk: x", &l, &e), 0,
               "comm with brackets");
    TAP_OK(field_is(l.comm, l.comm_len, "a[1]-b") && l.pid == 77 && l.cpu == 2 &&
               l.ts_ns == 5500000000,
           "brackets in the comm do not fool the CPU anchor");

    TAP_EQ_INT(parse("bash-1 [000] 1.000000: print: msg with: colons", &l, &e), 0,
               "no flags, event with colons in the payload");
    TAP_OK(l.flags == NULL && field_is(l.event, l.event_len, "print") &&
               field_is(l.msg, l.msg_len, "msg with: colons"),
           "payload kept whole");
    TAP_OK(!tracefs_is_marker_event(&l), "'print' is not a marker event");

    TAP_EQ_INT(parse("x-9 (  123) [010] .N.. 7.25: 0xffffffff81000000: hi  \r", &l, &e), 0,
               "TGID, hex-ip trace_printk, trailing blanks and CR");
    TAP_OK(l.tgid == 123 && l.cpu == 10 && tracefs_is_marker_event(&l) &&
               field_is(l.msg, l.msg_len, "hi"),
           "tgid 123, marker event, message trimmed");

    TAP_EQ_INT(parse("x-9 [000] .... 7.25: add: y", &l, &e), 0, "event named like hex");
    TAP_OK(!tracefs_is_marker_event(&l), "'add' is an event name, not an ip");

    TAP_EQ_INT(parse("x-9 [000] .... 123456789012345: ev: y", &l, &e), 0, "raw counter clock");
    TAP_OK(l.ts_raw && l.ts_ns == 123456789012345, "raw counter kept as is");

    TAP_EQ_INT(parse("# trace_clock: [local] global mono", &l, &e), 0, "trace_clock copy");
    TAP_OK(l.kind == TF_CLOCK && field_is(l.text, l.text_len, "local"), "bracketed clock chosen");
    TAP_EQ_INT(parse("# trace_clock: mono", &l, &e), 0, "trace_clock header");
    TAP_OK(l.kind == TF_CLOCK && field_is(l.text, l.text_len, "mono"), "clock mono");
    TAP_EQ_INT(parse("# tracer: function_graph", &l, &e), 0, "tracer header");
    TAP_OK(l.kind == TF_TRACER && field_is(l.text, l.text_len, "function_graph"), "tracer name");
    TAP_EQ_INT(parse("#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION", &l, &e), 0,
               "legend");
    TAP_EQ_INT(l.kind, TF_COMMENT, "legend is a comment");
    TAP_EQ_INT(parse("   ", &l, &e), 0, "blank");
    TAP_EQ_INT(l.kind, TF_BLANK, "blank line");
}

static void test_bad(void)
{
    static const struct {
        const char *line;
        unsigned col;
        const char *why;
    } cases[] = {
        {"hello world", 1, "no columns"},
        {"bash-1977 [000] .... 17284.99x652: ev: x", 22, "bad timestamp"},
        {"bash-1977 [000] .!.. 1.0: ev: x", 18, "bad flag character"},
        {"bash-1977 [000] .. 1.0: ev: x", 17, "short flags"},
        {"bash-1977 [000] .... 1.0:x", 26, "no blank after the timestamp"},
        {"bash-1977 [000] ....", 17, "truncated before the timestamp"},
        {"bash-1977 [000]", 16, "truncated after the CPU"},
        {"bash [000] .... 1.0: ev: x", 1, "no pid"},
        {"bash-1977 [00] .... 1.0: ev: x", 1, "2-digit cpu"},
        {"bash-99999999999999999999 [000] .... 1.0: ev: x", 1, "pid overflow"},
        {"x-1 [000] .... 99999999999.000001: ev: x", 16, "timestamp overflow"},
        {"CPU:x [LOST 3 EVENTS]", 5, "CPU line without a number"},
        {"CPU:1 [LOST 3 EVENT]", 14, "CPU line with a bad tail"},
        {"# entries-in-buffer/entries-written: 1/", 40, "entries line cut short"},
    };
    struct tf_line l;
    struct sf_err e;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int rc = parse(cases[i].line, &l, &e);
        TAP_OK(rc == SF_E_MALFORMED && l.kind == TF_BAD && e.col == cases[i].col && e.msg[0],
               "bad: %s -> col %u (got rc %d col %u: %s)", cases[i].why, cases[i].col, rc, e.col,
               e.msg);
    }
}

static void test_markers(void)
{
    struct mk_grammar g;
    struct mk_result m;
    struct sf_err e;
    const char *s;

    markers_default(&g);
    s = "span:00f067aa0ba902b7 decision:1";
    TAP_EQ_INT(markers_parse(&g, s, strlen(s), &m), 1, "default: span with decision");
    TAP_OK(strcmp(m.span_id, "00f067aa0ba902b7") == 0 && m.decision == 1 && !m.begin && !m.end,
           "span id and decision");
    s = "begin span=F067AA0BA902B7, trace:4bf92f3577b34da6a3ce929d0e0e4736";
    TAP_EQ_INT(markers_parse(&g, s, strlen(s), &m), 1, "default: begin, short upper-case id");
    TAP_OK(m.begin && strcmp(m.span_id, "00f067aa0ba902b7") == 0 && m.has_trace &&
               strcmp(m.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736") == 0,
           "left-padded lowercase span id, trace id");
    s = "trace:a3ce929d0e0e4736 span: 0x00f067aa0ba902b7 end";
    TAP_EQ_INT(markers_parse(&g, s, strlen(s), &m), 1, "value in the next token, 0x prefix");
    TAP_OK(m.end && strcmp(m.trace_id, "0000000000000000a3ce929d0e0e4736") == 0,
           "64-bit trace id left-padded, end keyword");
    s = "span:0000000000000000 begin";
    TAP_EQ_INT(markers_parse(&g, s, strlen(s), &m), 0, "all-zero span id refused");
    TAP_OK(m.bad_values == 1, "counted as a bad value");
    s = "span:00f067aa0ba902b7zz spanish:1 decision:maybe";
    TAP_EQ_INT(markers_parse(&g, s, strlen(s), &m), 0, "non-hex span id refused");
    TAP_OK(m.decision == -1 && m.bad_values == 2, "bad decision ignored");
    s = "beginning spans ended";
    TAP_EQ_INT(markers_parse(&g, s, strlen(s), &m), 0, "keywords match whole tokens only");
    TAP_OK(!m.begin && !m.end, "no begin/end from longer words");

    /* a site's own format: "req_start id=<hex> sampled=yes" ... "req_done id=<hex>" */
    g.n = 0;
    TAP_EQ_INT(markers_add_key(&g, "span=id=", &e), 0, "site key span=id=");
    markers_add_key(&g, "decision=sampled=", &e);
    markers_add_key(&g, "begin=req_start", &e);
    markers_add_key(&g, "end=req_done", &e);
    s = "req_start id=1a2b3c4d5e6f7081 sampled=yes";
    TAP_EQ_INT(markers_parse(&g, s, strlen(s), &m), 1, "site format: begin");
    TAP_OK(m.begin && m.decision == 1 && strcmp(m.span_id, "1a2b3c4d5e6f7081") == 0,
           "site format fields");
    s = "span:00f067aa0ba902b7 begin";
    TAP_EQ_INT(markers_parse(&g, s, strlen(s), &m), 0, "site grammar replaced the default");
    TAP_EQ_INT(markers_add_key(&g, "spam=x", &e), SF_E_USAGE, "unknown field refused");
    TAP_EQ_INT(markers_add_key(&g, "span=", &e), SF_E_USAGE, "empty prefix refused");
    TAP_EQ_INT(markers_add_key(&g, "span=a b", &e), SF_E_USAGE, "prefix with a blank refused");
    TAP_EQ_INT(markers_add_key(&g, "span", &e), SF_E_USAGE, "no '=' refused");
}

static int offcpu(const char *msg, int64_t start, int raw, struct oc_event *oc, struct sf_err *e)
{
    sf_err_clear(e);
    return offcpu_parse(msg, strlen(msg), start, raw, oc, e);
}

/* The error's column is where the message says; *msg is the message. */
static int refused_at(const char *msg, int64_t start, int raw, uint32_t col, const char *why)
{
    struct oc_event oc;
    struct sf_err e;

    return offcpu(msg, start, raw, &oc, &e) == SF_E_MALFORMED && e.col == col &&
           strstr(e.msg, why) != NULL;
}

static void test_offcpu(void)
{
    struct oc_event oc;
    struct sf_err e;

    TAP_EQ_INT(offcpu("end=5.000000100 state=D waker=12 frame=1 stack=app;main;read;io_schedule",
                      5000000000, 0, &oc, &e),
               0, "an off-CPU message");
    TAP_OK(oc.end_ns == 5000000100 && field_is(oc.state, oc.state_len, "D") && oc.waker_tid == 12 &&
               field_is(oc.frame, oc.frame_len, "read") &&
               field_is(oc.stack, oc.stack_len, "app;main;read;io_schedule"),
           "end, state, waker, frame 1 from the leaf, stack");
    TAP_EQ_INT(offcpu("frame=- prio=120 waker=- state=R+ end=5.1 stack=app;x y;op+0x1f/0x40", 5, 0,
                      &oc, &e),
               0, "fields in any order, an unknown one skipped, blanks in a frame");
    TAP_OK(oc.waker_tid == -1 && oc.frame == NULL && oc.end_ns == 5100000000 &&
               field_is(oc.stack, oc.stack_len, "app;x y;op+0x1f/0x40"),
           "waker=- and frame=- are unknown; the stack to the end of the line");
    TAP_EQ_INT(offcpu("end=1.0 state=S waker=- frame=0 stack=app;op+0x1f/0x40", 0, 0, &oc, &e), 0,
               "frame=0 is the leaf");
    TAP_OK(field_is(oc.frame, oc.frame_len, "op"), "the frame without its +0x offset");
    TAP_EQ_INT(offcpu("end=200 state=S waker=3 frame=- stack=app", 100, 1, &oc, &e), 0,
               "a raw-count clock: end= a count; a stack of the comm alone");
    TAP_OK(refused_at("end=1.5 state=S waker=- frame=- stack=a", 100, 1, 5, "expected end=N"),
           "a raw-count clock refuses end=SEC.NSEC");
    TAP_OK(refused_at("end=0.9 state=S waker=- frame=- stack=a", 1000000000, 0, 5, "end= before"),
           "end before the line's time, at end='s value");
    TAP_OK(refused_at("end=1.0 state=S waker=- frame=-", 0, 0, 32, "expected stack="),
           "no stack=: at the end");
    TAP_OK(refused_at("end=1.0 waker=- frame=- stack=a", 0, 0, 25, "expected state="),
           "a field missing: at stack=");
    TAP_OK(refused_at("end=1.0 state=S state=D waker=- frame=- stack=a", 0, 0, 17, "twice"),
           "a field given twice");
    TAP_OK(refused_at("end=1.0 state=RUNNABLE waker=- frame=- stack=a", 0, 0, 15, "state="),
           "a state longer than 7 characters");
    TAP_OK(refused_at("end=1.0 state=S waker=12x frame=- stack=a", 0, 0, 23, "waker="),
           "a bad waker, at its value");
    TAP_OK(refused_at("end=1.0 state=S waker=- frame=-1 stack=a", 0, 0, 31, "frame="),
           "a negative frame");
    TAP_OK(refused_at("end=1.0 state=S waker=- frame=2 stack=a;b;c", 0, 0, 31, "beyond"),
           "frame=K at the comm is past the frames");
    TAP_OK(refused_at("end=1.0 state=S waker=- frame=- stack=a;;c", 0, 0, 41, "empty frame"),
           "an empty frame, at it");
    TAP_OK(refused_at("end=1.0 state=S waker=- frame=- stack=a;b;", 0, 0, 43, "empty frame"),
           "a trailing ';'");
    TAP_OK(refused_at("end=1.0 state=S waker=- frame=- stack=", 0, 0, 39, "empty frame"),
           "an empty stack");
    TAP_OK(refused_at("end=1.0 =S stack=a", 0, 0, 9, "KEY=VALUE"), "a field without a key");
}

int main(void)
{
    test_layouts();
    test_bad();
    test_markers();
    test_offcpu();
    return tap_done();
}
