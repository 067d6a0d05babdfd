/* Fuzz target: tracefs2spans line parser, marker grammar, interval builder and the
 * off-CPU line parser.  Input: tracefs text; each line is parsed, markers are fed to
 * the interval builder and spantrace_offcpu lines to offcpu_parse as ingest.c does,
 * and the parsers' invariants are checked. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../../tracefs2spans/t2s.h"

static int count(void *ctx, const struct iv_interval *iv)
{
    if (iv->end_ns < iv->start_ns || iv->depth < 0)
        abort();
    ++*(int *)ctx;
    return 0;
}

static void in_line(const char *s, size_t n, const char *p, size_t pn)
{
    if (p && (p < s || p + pn > s + n))
        abort(); /* every field points into the line */
}

/* An off-CPU line: parsed, or refused at a column of its message; what it gives lies
 * in the message and keeps the format's promises (offcpu.c). */
static void check_offcpu(const struct tf_line *l)
{
    struct oc_event oc;
    struct sf_err e;

    sf_err_clear(&e);
    if (offcpu_parse(l->msg, l->msg_len, l->ts_ns, l->ts_raw, &oc, &e) < 0) {
        if (e.col == 0 || e.col > l->msg_len + 1)
            abort();
        return;
    }
    in_line(l->msg, l->msg_len, oc.state, oc.state_len);
    in_line(l->msg, l->msg_len, oc.stack, oc.stack_len);
    in_line(oc.stack, oc.stack_len, oc.frame, oc.frame_len);
    if (oc.end_ns < l->ts_ns || oc.state_len == 0 || oc.state_len > OC_STATE_MAX ||
        oc.stack_len == 0 || (oc.frame && memchr(oc.frame, ';', oc.frame_len)))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct mk_grammar g;
    int nint = 0;
    struct iv_state *st = intervals_new(8, count, &nint);
    const char *s = (const char *)data, *end = s + size;
    int64_t last = 0;

    if (st == NULL)
        return 0;
    markers_default(&g);
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        size_t n = nl ? (size_t)(nl - s) : (size_t)(end - s);
        struct tf_line l;
        struct sf_err e;
        struct mk_result m;

        sf_err_clear(&e);
        if (tracefs_parse_line(s, n, &l, &e) < 0 && (l.kind != TF_BAD || e.col == 0))
            abort();
        in_line(s, n, l.comm, l.comm_len);
        in_line(s, n, l.flags, l.flags_len);
        in_line(s, n, l.ts, l.ts_len);
        in_line(s, n, l.event, l.event_len);
        in_line(s, n, l.msg, l.msg_len);
        in_line(s, n, l.text, l.text_len);
        if (offcpu_is_event(&l))
            check_offcpu(&l);
        if (l.kind == TF_EVENT && tracefs_is_marker_event(&l) &&
            markers_parse(&g, l.msg, l.msg_len, &m)) {
            enum iv_kind k = m.end ? IV_END : m.begin ? IV_BEGIN : IV_DECISION;
            intervals_marker(st, k, l.tgid, l.pid, l.ts_ns, &m);
            last = l.ts_ns > last ? l.ts_ns : last;
        }
        s += n + 1;
    }
    intervals_finish(st, last);
    intervals_free(st);
    return 0;
}
