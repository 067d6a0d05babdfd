/* test_perfdata.c - lib/sf_perfdata against perf's own reading of the same files.
 *
 * tests/data/perfdata/spin-u.data (file mode) and spin-pipe.data (`perf record -o -`)
 * were recorded from spin.c with `perf record -k mono -g -c 200000 -e cpu-clock:u`;
 * beside each, what `perf script --ns --show-task-events --show-mmap-events -F
 * pid,tid,time,period,event` printed of it (perf 6.1).  Every COMM, MMAP2, EXIT and
 * sample record the reader hands on must be the one perf printed, in the same order,
 * with the same pid, tid, time, period, mapping and name.  Then damaged copies: cut
 * short, a record of a bad size, not perf.data at all.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sf_perfdata.h"
#include "tap.h"

struct rec {
    char kind; /* C comm, M mmap2, X exit, S sample */
    unsigned pid, tid;
    uint64_t time, a, b, c; /* S: period; M: start, len, pgoff */
    char name[256];         /* C: comm; M: filename */
};

static const char *top(void)
{
    return getenv("SF_TOP") ? getenv("SF_TOP") : ".";
}

/* perf script's lines into recs (at most cap); the count. */
static size_t expected(const char *path, struct rec *recs, size_t cap)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    size_t n = 0;

    while (f && n < cap && fgets(line, sizeof(line), f)) {
        struct rec r = {0};
        unsigned long sec, ns;
        int off = 0;
        char *p;
        if (sscanf(line, " %u/%u %lu.%lu:%n", &r.pid, &r.tid, &sec, &ns, &off) != 4)
            continue; /* a callchain line (pipe mode prints them) */
        r.time = (uint64_t)sec * 1000000000u + ns;
        p = line + off;
        p[strcspn(p, "\n")] = 0;
        if (strncmp(p, " PERF_RECORD_COMM", 17) == 0) {
            char *name = strchr(p + 17, ':') + 2, *end = strrchr(name, ':');
            r.kind = 'C';
            snprintf(r.name, sizeof(r.name), "%.*s", (int)(end - name), name);
        } else if (strncmp(p, " PERF_RECORD_MMAP2", 18) == 0) {
            char prot[8];
            r.kind = 'M';
            if (sscanf(strchr(p, '['), "[0x%" SCNx64 "(0x%" SCNx64 ") @ %" SCNi64, &r.a, &r.b,
                       &r.c) != 3 ||
                sscanf(strstr(p, "]: ") + 3, "%7s %255s", prot, r.name) != 2)
                continue;
        } else if (strncmp(p, " PERF_RECORD_EXIT", 17) == 0) {
            r.kind = 'X';
        } else if (sscanf(p, " %" SCNu64, &r.a) == 1) {
            r.kind = 'S';
        } else {
            continue;
        }
        recs[n++] = r;
    }
    if (f)
        fclose(f);
    return n;
}

/* The reader's records of the kinds perf printed, into recs; the count, and the
 * outcome of the last sf_pd_next in *rc. */
static size_t read_all(const char *path, struct rec *recs, size_t cap, int *rc, struct sf_err *err,
                       struct sf_pd_info *info)
{
    struct sf_pd *pd;
    struct sf_pd_record r;
    size_t n = 0;

    sf_err_clear(err);
    if ((*rc = sf_pd_open(&pd, path, err)) < 0)
        return 0;
    while (n < cap && (*rc = sf_pd_next(pd, &r, err)) > 0) {
        struct rec x = {0};
        x.pid = r.pid;
        x.tid = r.tid;
        x.time = r.time;
        if (r.type == SF_PD_SAMPLE) {
            x.kind = 'S';
            x.a = r.u.sample.period;
        } else if (r.type == SF_PD_COMM) { /* perf prints the sample_id's pid and tid */
            x.kind = 'C';
            snprintf(x.name, sizeof(x.name), "%s", r.u.comm.comm);
        } else if (r.type == SF_PD_MMAP2) {
            x.kind = 'M';
            x.a = r.u.mmap.start;
            x.b = r.u.mmap.len;
            x.c = r.u.mmap.pgoff;
            snprintf(x.name, sizeof(x.name), "%.255s", r.u.mmap.filename);
        } else if (r.type == SF_PD_EXIT) {
            x.kind = 'X';
        } else {
            continue;
        }
        recs[n++] = x;
    }
    if (info)
        *info = *sf_pd_info(pd);
    sf_pd_close(pd);
    return n;
}

static int same(const struct rec *a, const struct rec *b)
{
    return a->kind == b->kind && a->pid == b->pid && a->tid == b->tid && a->time == b->time &&
           a->a == b->a && a->b == b->b && a->c == b->c && strcmp(a->name, b->name) == 0;
}

/* Every sample's callchain: its first entry a context marker, at least one address. */
static int chain_ok(const struct sf_pd *pd, const struct sf_pd_sample *s)
{
    return s->nr >= 2 && sf_pd_chain_ip(pd, s, 0) >= SF_PD_CONTEXT_MAX &&
           sf_pd_chain_ip(pd, s, 1) < SF_PD_CONTEXT_MAX;
}

/* --call-graph dwarf: a user-mode sample carries its registers, the instruction pointer
 * among them equal to the sample's ip (perf's PERF_REG_X86_IP, 8), and its stack's bytes. */
static int regs_ok(const struct sf_pd *pd, const struct sf_pd_sample *s)
{
    uint64_t ip = 0, sp = 0;

    return sf_pd_user_reg(pd, s, 8, &ip) == 0 && ip == s->ip &&
           sf_pd_user_reg(pd, s, 7, &sp) == 0 && sp != 0 && s->stack != NULL && s->stack_size > 0 &&
           s->nregs > 8;
}

/* check holds for every sample of the file, read to its end; their count into *n. */
static int each_sample(const char *path,
                       int (*check)(const struct sf_pd *, const struct sf_pd_sample *), size_t *n)
{
    struct sf_pd *pd;
    struct sf_pd_record r;
    struct sf_err err;
    int ok = 1;

    *n = 0;
    sf_err_clear(&err);
    if (sf_pd_open(&pd, path, &err) < 0)
        return 0;
    while (sf_pd_next(pd, &r, &err) > 0)
        if (r.type == SF_PD_SAMPLE) {
            ok &= check(pd, &r.u.sample);
            (*n)++;
        }
    sf_pd_close(pd);
    return ok && err.code == 0;
}

static int by_time(const void *x, const void *y)
{
    const struct rec *a = x, *b = y;

    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    if (a->kind != b->kind)
        return a->kind - b->kind;
    if (a->tid != b->tid)
        return a->tid < b->tid ? -1 : 1;
    return a->a < b->a ? -1 : a->a > b->a;
}

static void against_perf(const char *name)
{
    static struct rec want[16384], got[16384];
    char data[1024], txt[1024];
    struct sf_err err;
    struct sf_pd_info info;
    size_t nw, ng, k, samples = 0;
    int rc;
    const char *label = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;

    if (strchr(name, '/')) { /* a path: NAME.data and NAME.perf-script.txt (t_perfdata.sh) */
        snprintf(data, sizeof(data), "%s.data", name);
        snprintf(txt, sizeof(txt), "%s.perf-script.txt", name);
    } else {
        snprintf(data, sizeof(data), "%s/tests/data/perfdata/%s.data", top(), name);
        snprintf(txt, sizeof(txt), "%s/tests/data/perfdata/%s.perf-script.txt", top(), name);
    }
    nw = expected(txt, want, 16384);
    ng = read_all(data, got, 16384, &rc, &err, &info);
    if (strchr(name, '/')) { /* a live recording: perf orders by time, the reader hands on the
                                file's order (several buffers may interleave): compare sets */
        qsort(want, nw, sizeof(*want), by_time);
        qsort(got, ng, sizeof(*got), by_time);
    }
    TAP_OK(rc == 0, "%s: read to the end (%.200s)", label, rc ? err.msg : "ok");
    for (k = 0; k < nw && k < ng && same(&want[k], &got[k]); k++)
        samples += want[k].kind == 'S';
    if (k < nw && k < ng)
        printf("# record %zu: perf %c %u/%u %" PRIu64 " %" PRIx64 " %s, read %c %u/%u %" PRIu64
               " %" PRIx64 " %s\n",
               k, want[k].kind, want[k].pid, want[k].tid, want[k].time, want[k].a, want[k].name,
               got[k].kind, got[k].pid, got[k].tid, got[k].time, got[k].a, got[k].name);
    TAP_OK(nw > 50 && ng == nw && k == nw,
           "%s: the %zu records perf prints (%zu samples), each the same", label, nw, samples);
    if (strchr(name, '/') == NULL) { /* the committed recordings: one event, known */
        TAP_EQ_STR(info.attr[0].name, "cpu-clock:u", "%s: the event's name", name);
        TAP_OK(info.nattr == 1 && info.attr[0].sample_type & SF_PD_S_CALLCHAIN,
               "%s: one event, with callchains", name);
    }
    if (info.nattr && (info.attr[0].sample_type & SF_PD_S_STACK_USER)) {
        TAP_OK(each_sample(data, regs_ok, &samples) && samples > 0,
               "%s: each of the %zu samples has its user registers (ip the sample's) and stack",
               label, samples);
        return;
    }
    TAP_OK(each_sample(data, chain_ok, &samples) && samples > 0,
           "%s: each of the %zu callchains opens with a context marker, then addresses", label,
           samples);
}

/* A copy of the file cut to n bytes, or with the u16 at off set to v. */
static void damaged(const char *from, const char *to, size_t n, size_t off, uint16_t v)
{
    FILE *f = fopen(from, "rb"), *g = fopen(to, "wb");
    static unsigned char b[1 << 20];
    size_t len = f ? fread(b, 1, sizeof(b), f) : 0;

    if (off)
        memcpy(b + off, &v, 2);
    if (g)
        fwrite(b, 1, n < len ? n : len, g);
    if (f)
        fclose(f);
    if (g)
        fclose(g);
}

static void damage(void)
{
    static struct rec got[4096];
    char data[1024], cut[] = "/tmp/test_perfdata.XXXXXX";
    struct sf_err err;
    struct sf_pd_info info;
    size_t whole, part, rec2 = 0;
    int rc, fd = mkstemp(cut);
    struct sf_pd *pd;
    struct sf_pd_record r;

    snprintf(data, sizeof(data), "%s/tests/data/perfdata/spin-u.data", top());
    whole = read_all(data, got, 4096, &rc, &err, &info);
    damaged(data, cut, (size_t)(info.data_offset + info.data_size / 2), 0, 0);
    part = read_all(cut, got, 4096, &rc, &err, NULL);
    TAP_OK(rc == SF_E_TRUNC && part > whole / 4 && part < whole,
           "cut in the middle of the data: SF_E_TRUNC (%.200s) after %zu of %zu records", err.msg,
           part, whole);
    TAP_OK(err.off >= info.data_offset && err.off < info.data_offset + info.data_size / 2,
           "  at the offset of the record cut short (%llu)", (unsigned long long)err.off);
    /* the second record's size (bytes 6-7 of its header) made 4 */
    sf_err_clear(&err);
    if (sf_pd_open(&pd, data, &err) == 0 && sf_pd_next(pd, &r, &err) > 0)
        rec2 = (size_t)(r.off + r.size);
    sf_pd_close(pd);
    damaged(data, cut, SIZE_MAX, rec2 + 6, 4);
    part = read_all(cut, got, 4096, &rc, &err, NULL);
    TAP_OK(rc == SF_E_MALFORMED && err.off == rec2,
           "a record of 4 bytes: SF_E_MALFORMED at %zu (%.200s)", rec2, err.msg);
    damaged(data, cut, 3, 0, 0);
    (void)read_all(cut, got, 4096, &rc, &err, NULL);
    TAP_OK(rc < 0 && strstr(err.msg, "not a perf.data file"), "3 bytes: not perf.data (%.200s)",
           err.msg);
    snprintf(data, sizeof(data), "%s/tests/data/perfdata/spin.c", top());
    (void)read_all(data, got, 4096, &rc, &err, NULL);
    TAP_OK(rc == SF_E_MALFORMED, "a C file: not perf.data (%.200s)", err.msg);
    if (fd >= 0)
        unlink(cut);
}

int main(int argc, char **argv)
{
    if (argc > 1) { /* a recording made by t_perfdata.sh, and perf's reading of it */
        against_perf(argv[1]);
        return tap_done();
    }
    against_perf("spin-u");
    against_perf("spin-pipe");
    damage();
    return tap_done();
}
