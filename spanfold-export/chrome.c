/* chrome.c - Chrome Trace Event / Perfetto JSON: spans and perf samples on one
 * timeline, on one clock (the capture clock, CLOCK_REALTIME; samples are mapped
 * through clock_fits).
 *
 * Spans are async events ("ph":"b"/"e", cat "span", id = span id) because
 * concurrent spans overlap and Perfetto drops overlapping "X" events on one
 * track; samples are thread-scoped instant events ("ph":"i","s":"t") on their
 * pid/tid with the folded stack in args.  ts is in microseconds (fractions kept).
 * Samples with no clock fit to the capture clock are left out and counted.
 */
#include <string.h>

#include "export.h"
#include "sf_json.h"

#define SPAN_PID 1 /* the synthetic process that holds the network spans */

static void us(struct sf_jw *w, const char *key, int64_t ns)
{
    char b[48];

    /* microseconds with three decimals, exactly (no double rounding at epoch scale) */
    snprintf(b, sizeof(b), "%lld.%03lld", (long long)(ns / 1000),
             (long long)(ns % 1000 < 0 ? -(ns % 1000) : ns % 1000));
    sf_jw_raw(w, key, b);
}

static void meta(struct sf_jw *w, const char *what, int64_t pid, int64_t tid, const char *name)
{
    sf_jw_obj(w, NULL);
    sf_jw_str(w, "ph", "M");
    sf_jw_str(w, "name", what);
    sf_jw_int(w, "pid", pid);
    if (tid >= 0)
        sf_jw_int(w, "tid", tid);
    sf_jw_obj(w, "args");
    sf_jw_str(w, "name", name);
    sf_jw_end(w);
    sf_jw_end(w);
}

static void span_event(struct sf_jw *w, const struct ex_span *s, const char *ph, int64_t ts)
{
    char name[512];

    ex_span_name(s, name, sizeof(name));
    sf_jw_obj(w, NULL);
    sf_jw_str(w, "ph", ph);
    sf_jw_str(w, "cat", "span");
    sf_jw_str(w, "name", name);
    sf_jw_str(w, "id", s->span_id);
    sf_jw_int(w, "pid", SPAN_PID);
    sf_jw_int(w, "tid", 1);
    us(w, "ts", ts);
    if (ph[0] == 'b') {
        sf_jw_obj(w, "args");
        sf_jw_str(w, "trace_id", s->trace_id);
        sf_jw_str(w, "span_id", s->span_id);
        sf_jw_str(w, "service", s->service);
        if (s->status)
            sf_jw_int(w, "status", s->status);
        if (s->grpc_status >= 0)
            sf_jw_int(w, "grpc_status", s->grpc_status);
        sf_jw_bool(w, "early_data", s->early_data);
        sf_jw_end(w);
    }
    sf_jw_end(w);
}

static int write_spans(struct ex_ctx *c, struct sf_jw *w)
{
    struct ex_span_iter *it = ex_span_iter_new(c);
    struct ex_span s;
    int rc;

    if (it == NULL)
        return -1;
    meta(w, "process_name", SPAN_PID, -1, "spans (packet capture)");
    while ((rc = ex_span_next(it, &s)) == 1) {
        span_event(w, &s, "b", s.start_ns);
        span_event(w, &s, "e", s.end_ns);
        c->spans++;
    }
    ex_span_iter_free(it);
    return rc;
}

static int write_samples(struct ex_ctx *c, struct sf_jw *w, uint64_t *unaligned)
{
    struct ex_sample_iter *it = ex_sample_iter_new(c);
    struct ex_sample s;
    int64_t last_tid = -1;
    int rc;

    if (it == NULL)
        return -1;
    while ((rc = ex_sample_next(it, &s)) == 1) {
        const char *leaf;
        if (s.ts_rt_ns == INT64_MIN) {
            (*unaligned)++;
            continue;
        }
        if (s.tid != last_tid) /* thread names: repeated entries are harmless */
            meta(w, "thread_name", s.pid, s.tid, s.comm ? s.comm : "?");
        last_tid = s.tid;
        leaf = s.frames ? strrchr(s.frames, ';') : NULL;
        sf_jw_obj(w, NULL);
        sf_jw_str(w, "ph", "i");
        sf_jw_str(w, "s", "t");
        sf_jw_str(w, "cat", "sample");
        sf_jw_str(w, "name", leaf ? leaf + 1 : (s.frames ? s.frames : "?"));
        sf_jw_int(w, "pid", s.pid);
        sf_jw_int(w, "tid", s.tid);
        us(w, "ts", s.ts_rt_ns);
        sf_jw_obj(w, "args");
        sf_jw_str(w, "stack", s.frames);
        sf_jw_str(w, "span_id", s.span_id);
        sf_jw_int(w, "cpu", s.cpu);
        sf_jw_end(w);
        sf_jw_end(w);
        c->samples++;
    }
    ex_sample_iter_free(it);
    return rc;
}

int chrome_write(struct ex_ctx *c)
{
    struct sf_jw w;
    uint64_t unaligned = 0;
    int rc;

    sf_jw_init(&w, c->out);
    sf_jw_obj(&w, NULL);
    sf_jw_arr(&w, "traceEvents");
    rc = write_spans(c, &w);
    if (rc >= 0)
        rc = write_samples(c, &w, &unaligned);
    sf_jw_end(&w);
    sf_jw_str(&w, "displayTimeUnit", "ns");
    sf_jw_obj(&w, "otherData");
    sf_jw_str(&w, "generator", "spanfold-export");
    sf_jw_str(&w, "clock", "realtime (capture clock; samples mapped through clock_fits)");
    sf_jw_end(&w);
    sf_jw_end(&w);
    fputc('\n', c->out);
    if (unaligned)
        ex_fail("note: %llu samples left out: no clock fit from their clock to the capture clock "
                "(run tracefs2spans, or --clock-offset)",
                (unsigned long long)unaligned);
    return rc < 0 ? 2 : 0;
}
