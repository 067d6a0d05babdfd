/* tracedata.c - a perf.data's tracepoint records printed as `perf script -F trace` prints
 * them: the recording's own format files (its tracing data) parsed by libtraceevent, the
 * library perf prints them with, each record's raw data through tep_print_event(INFO).
 *
 * The tracing data (perf's trace-event-read.c; all numbers in the file's byte order):
 *
 *   "\027\010Dtracing" | version "0.6\0" | big-endian u8 | long size u8 | page size u32
 *   | "header_page\0" u64 size, text | "header_event\0" u64 size, text
 *   | u32 n, n x (u64 size, ftrace format text)
 *   | u32 systems, systems x (NAME\0, u32 n, n x (u64 size, format text))
 *   | u32 size, kallsyms | u32 size, printk formats | from 0.6: u64 size, saved cmdlines
 *
 * Only the parts up to the event formats are needed.  Captured data is hostile, and
 * libtraceevent 1.7 dies on some malformed formats (NULL dereferences its fuzzing found
 * here): the formats are first parsed, and a record of zeros and one of 0xff bytes of
 * every event printed, in a child process; only when it lives are they parsed here.  A
 * record's raw bytes are copied into a zeroed buffer that reaches past every offset a
 * format may read (fixed fields end within FIELD_REACH, checked before printing; dynamic ones
 * are 16-bit offset and length), so a short or lying record prints zeros, never reads
 * out of bounds.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>
#include <unistd.h>

#include "perf_fold.h"

#if defined(__SANITIZE_ADDRESS__)
#define SF_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SF_SANITIZED 1
#endif
#endif
#if SF_SANITIZED
#include <sanitizer/common_interface_defs.h>
#endif

#define FIELD_REACH 65536u                            /* fixed fields end before this */
#define PAD_BYTES   (FIELD_REACH + 2u * 65536u + 16u) /* + __data_loc offset and length */
#define FORMAT_MAX  (64u << 10)                       /* one format file (some KiB in practice) */

struct pf_tp {
    struct tep_handle *tep;
    unsigned char *pad; /* PAD_BYTES, zero past the record being printed */
    size_t dirty;       /* bytes of pad to zero again */
    struct trace_seq seq;
};

struct tdr {
    const unsigned char *p, *end;
    int big, err;
};

static uint64_t num(struct tdr *r, unsigned n)
{
    uint64_t v = 0;

    if (r->err || (size_t)(r->end - r->p) < n) {
        r->err = 1;
        return 0;
    }
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)r->p[r->big ? i : n - 1 - i] << (8 * (n - 1 - i));
    r->p += n;
    return v;
}

/* A NUL-terminated string in place; NULL (and err) when it does not end in the data. */
static const char *cstr(struct tdr *r)
{
    const unsigned char *z = r->err ? NULL : memchr(r->p, 0, (size_t)(r->end - r->p));
    const char *s = (const char *)r->p;

    if (z == NULL) {
        r->err = 1;
        return NULL;
    }
    r->p = z + 1;
    return s;
}

/* size bytes in place (the size read as a u64 before them). */
static const char *block(struct tdr *r, uint64_t *size)
{
    const char *s;

    *size = num(r, 8);
    if (r->err || *size > (uint64_t)(r->end - r->p)) {
        r->err = 1;
        return NULL;
    }
    s = (const char *)r->p;
    r->p += *size;
    return s;
}

/* Every field of the event ends within FIELD_REACH. */
static int fields_bounded(const struct tep_event *e)
{
    const struct tep_format_field *lists[2] = {e->format.common_fields, e->format.fields};

    for (int k = 0; k < 2; k++)
        for (const struct tep_format_field *f = lists[k]; f; f = f->next)
            if (f->offset < 0 || f->size < 0 ||
                (uint64_t)f->offset + (uint64_t)f->size > FIELD_REACH)
                return 0;
    return 1;
}

static int parse_formats(struct pf_tp *tp, struct tdr *r, const char *sys, char *why, size_t cap)
{
    uint32_t n = (uint32_t)num(r, 4);

    for (uint32_t i = 0; i < n && !r->err; i++) {
        uint64_t size;
        const char *fmt = block(r, &size);
        if (fmt == NULL || size > FORMAT_MAX)
            r->err = 1;
        else /* one it cannot parse is left out, as perf does */
            (void)tep_parse_event(tp->tep, fmt, (unsigned long)size, sys);
    }
    if (r->err)
        snprintf(why, cap, "the tracing data's %s formats are cut short", sys);
    return r->err ? -1 : 0;
}

static int parse_all(struct pf_tp **out, const unsigned char *data, size_t n, char *why, size_t cap)
{
    static const unsigned char magic[10] = {0x17, 0x08, 'D', 't', 'r', 'a', 'c', 'i', 'n', 'g'};
    struct tdr r = {data, data + n, 0, 0};
    struct pf_tp *tp;
    const char *s;
    uint64_t size;
    int long_size, page;
    char *hp;

    *out = NULL;
    why[0] = 0;
    if (n < sizeof(magic) || memcmp(data, magic, sizeof(magic)) != 0) {
        snprintf(why, cap, "the tracing data has no \\027\\010Dtracing magic");
        return -1;
    }
    r.p += sizeof(magic);
    if (cstr(&r) == NULL || r.end - r.p < 2) {
        snprintf(why, cap, "the tracing data's header is cut short");
        return -1;
    }
    r.big = r.p[0] != 0;
    long_size = r.p[1];
    r.p += 2;
    page = (int)num(&r, 4);
    if ((tp = calloc(1, sizeof(*tp))) == NULL || (tp->pad = calloc(1, PAD_BYTES)) == NULL ||
        (tp->tep = tep_alloc()) == NULL) {
        pf_tp_close(tp);
        snprintf(why, cap, "out of memory");
        return -1;
    }
    trace_seq_init(&tp->seq);
    tep_set_file_bigendian(tp->tep, r.big ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
    tep_set_local_bigendian(tp->tep, tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
    tep_set_long_size(tp->tep, long_size);
    tep_set_page_size(tp->tep, page);
    /* header_page and header_event: the first says how long a long is in the buffer */
    if ((s = cstr(&r)) == NULL || strcmp(s, "header_page") != 0 || (s = block(&r, &size)) == NULL ||
        size > FORMAT_MAX || (hp = malloc(size + 1)) == NULL) {
        pf_tp_close(tp);
        snprintf(why, cap, "the tracing data has no header_page");
        return -1;
    }
    memcpy(hp, s, size);
    hp[size] = 0;
    tep_parse_header_page(tp->tep, hp, (unsigned long)size, long_size);
    free(hp);
    if ((s = cstr(&r)) == NULL || strcmp(s, "header_event") != 0 || block(&r, &size) == NULL) {
        pf_tp_close(tp);
        snprintf(why, cap, "the tracing data has no header_event");
        return -1;
    }
    if (parse_formats(tp, &r, "ftrace", why, cap) < 0) {
        pf_tp_close(tp);
        return -1;
    }
    for (uint32_t k = 0, systems = (uint32_t)num(&r, 4); k < systems && !r.err; k++) {
        const char *sys = cstr(&r);
        if (sys == NULL || parse_formats(tp, &r, sys, why, cap) < 0)
            break;
    }
    if (r.err) {
        if (!why[0])
            snprintf(why, cap, "the tracing data's event formats are cut short");
        pf_tp_close(tp);
        return -1;
    }
    *out = tp;
    return 0;
}

/* Does libtraceevent parse the formats, and print a record of zeros and one of 0xff
 * bytes of every event, without dying?  Tried in a child process: 1 yes, 0 no, -1 when
 * no child could be made. */
static int survives(const unsigned char *data, size_t n)
{
    pid_t pid;
    int st;

    fflush(NULL);
    if ((pid = fork()) < 0)
        return -1;
    if (pid == 0) {
        struct pf_tp *tp;
        struct sf_buf out;
        char why[160];
        int null = open("/dev/null", O_WRONLY);
#if SF_SANITIZED
        __sanitizer_set_death_callback(NULL); /* a fuzzer's: it would save the input */
#endif
        if (null >= 0) { /* a sanitizer's report of the death, too */
            dup2(null, 1);
            dup2(null, 2);
        }
        if (parse_all(&tp, data, n, why, sizeof(why)) == 0) {
            static unsigned char ff[FIELD_REACH];
            memset(ff, 0xff, sizeof(ff));
            sf_buf_init(&out, 1u << 20);
            for (int i = 0; i < tep_get_events_count(tp->tep); i++) {
                struct tep_event *e = tep_get_event(tp->tep, i);
                if (e == NULL)
                    continue;
                (void)pf_tp_print(tp, (uint64_t)e->id, ff, 0, 0, 0, &out);
                (void)pf_tp_print(tp, (uint64_t)e->id, ff, sizeof(ff), 0, 0, &out);
                sf_buf_reset(&out);
            }
        }
        _exit(0);
    }
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int pf_tp_open(struct pf_tp **out, const unsigned char *data, size_t n, char *why, size_t cap)
{
    int ok = survives(data, n);

    *out = NULL;
    if (ok <= 0) {
        snprintf(why, cap,
                 ok < 0 ? "the tracing data could not be checked (fork: %s)"
                        : "libtraceevent dies on the tracing data's formats%s",
                 ok < 0 ? strerror(errno) : "");
        return -1;
    }
    return parse_all(out, data, n, why, cap);
}

int pf_tp_print(struct pf_tp *tp, uint64_t id, const unsigned char *raw, size_t n, int cpu,
                uint64_t ts, struct sf_buf *out)
{
    struct tep_event *e = id <= INT32_MAX ? tep_find_event(tp->tep, (int)id) : NULL;
    struct tep_record rec = {0};
    int rc;

    if (e == NULL || n > FIELD_REACH || !fields_bounded(e))
        return 0; /* perf prints nothing it has no format for; nor do we past FIELD_REACH */
    memset(tp->pad, 0, tp->dirty);
    memcpy(tp->pad, raw, n);
    tp->dirty = n;
    rec.ts = ts;
    rec.cpu = cpu;
    rec.size = (int)n;
    rec.data = tp->pad;
    trace_seq_reset(&tp->seq);
    tep_print_event(tp->tep, &tp->seq, &rec, "%s", TEP_PRINT_INFO);
    trace_seq_terminate(&tp->seq);
    rc = sf_buf_append(out, tp->seq.buffer, tp->seq.len);
    return rc ? -1 : 0;
}

void pf_tp_close(struct pf_tp *tp)
{
    if (tp == NULL)
        return;
    if (tp->tep) {
        trace_seq_destroy(&tp->seq);
        tep_free(tp->tep);
    }
    free(tp->pad);
    free(tp);
}
