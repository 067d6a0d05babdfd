/* test_perfscript.c - unit tests of perf-fold's `perf script` line parsers and of
 * the folding rules (tidying, annotations, event filter, record boundaries). */
#include <stdlib.h>
#include <string.h>

#include "../../perf-fold/perf_fold.h"
#include "tap.h"

static int str_is(struct pf_str s, const char *want)
{
    return s.n == strlen(want) && memcmp(s.p, want, s.n) == 0;
}

static void header(const char *line, const char *comm, const char *pid, const char *tid,
                   const char *period, const char *event, int64_t ts, int cpu)
{
    struct pf_header h;
    int ok = perfscript_header(line, strlen(line), &h);

    TAP_OK(ok, "header parses: %s", line);
    if (!ok)
        return;
    perfscript_header_detail(line, strlen(line), &h);
    TAP_OK(str_is(h.comm, comm), "comm '%s' of %s", comm, line);
    TAP_OK(str_is(h.pid, pid), "pid '%s' of %s", pid, line);
    TAP_OK(str_is(h.tid, tid), "tid '%s' of %s", tid, line);
    if (event) {
        TAP_OK(h.has_event && str_is(h.event, event), "event '%s' of %s", event, line);
        TAP_OK(str_is(h.period, period), "period '%s' of %s", period, line);
    } else {
        TAP_OK(!h.has_event, "no event in %s", line);
    }
    TAP_EQ_INT(h.ts_ns, ts, "time of %s", line);
    TAP_EQ_INT(h.cpu, cpu, "cpu of %s", line);
}

static void frame(const char *line, const char *pc, const char *func, const char *mod)
{
    struct pf_frame f;
    int ok = perfscript_frame(line, strlen(line), &f);

    if (pc == NULL) {
        TAP_OK(!ok, "not a frame: %s", line);
        return;
    }
    TAP_OK(ok && str_is(f.pc, pc) && str_is(f.func, func) && str_is(f.mod, mod),
           "frame %s -> [%s] [%s] [%s]", line, pc, func, mod);
}

/* Fold text (lines separated by '\n') with options; return the printed fold.
 * nocache: forget the last header before every line (the full parse each time). */
static char *fold_text_how(const char *text, const struct pf_opts *o, int nocache)
{
    struct perf_fold_ctx c;
    char *buf = NULL, *copy = strdup(text), *line, *next;
    size_t len = 0;
    FILE *mem;

    memset(&c, 0, sizeof(c));
    if (o)
        c.o = *o;
    c.o.quiet = 1;
    c.file = "test";
    if (fold_init(&c) || copy == NULL)
        abort();
    if (c.o.event_filter) {
        sf_buf_append(&c.event_filter, c.o.event_filter, strlen(c.o.event_filter) + 1);
        c.event_filter.len--;
        c.event_set = 1;
    }
    for (line = copy; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        else if (*line == 0)
            break;
        c.lineno++;
        if (nocache)
            c.hc.valid = 0;
        perfscript_line(&c, line, strlen(line));
    }
    perfscript_finish(&c);
    mem = open_memstream(&buf, &len);
    fold_table_print(&c.stacks, mem);
    fclose(mem);
    fold_free(&c);
    free(copy);
    return buf;
}

static char *fold_text(const char *text, const struct pf_opts *o)
{
    return fold_text_how(text, o, 0);
}

/* Headers recognised by their bytes (struct pf_hcache) fold as when parsed. */
static void header_cache_same(void)
{
    static const char text[] =
        "perl 16684  1204.487596:     100000 cpu-clock: \n\t 1 a+0x1 (/x)\n\n"
        "perl 16684  1204.548760:     100000 cpu-clock: \n\t 1 b+0x1 (/x)\n\n"
        /* same ids, other period; then same tail, other tid */
        "perl 16684  1204.548761:     250000 cpu-clock: \n\t 1 b+0x1 (/x)\n\n"
        "perl 16685  1204.548762:     250000 cpu-clock: \n\t 1 c (/x)\n\n"
        "perl 16/685  1204.548762:     250000 cpu-clock: \n\t 1 c (/x)\n\n"
        "perl 16/685  1204.548763:     250000 cpu-clock: \n\t 1 c (/x)\n\n"
        "perl 0/0  1204.548764:     250000 cpu-clock: \n\t 1 c (/x)\n\n"
        "perl 0/0  1204.548764:     250000 cpu-clock: \n\t 1 c (/x)\n\n"
        /* another event, twice: filtered, the frames go to the open sample */
        "perl 16685  1204.548765:     250000 page-faults: \n\t 1 d (/x)\n"
        "perl 16685  1204.548766:     250000 page-faults: \n\t 1 e (/x)\n\n"
        /* the byte after the ids and the one before the period count too */
        "perl 16685  1204.548765:     250000 cpu-clock: \n\t 1 d (/x)\n\n"
        "perl 16685  1204.548765x     250000 cpu-clock: \n\t 1 d (/x)\n\n"
        "perl 16685  1204.548765:     250000 cpu-clock: \n\t 1 d (/x)\n\n"
        "perl 166851  1204.548765:     250000 cpu-clock: \n\t 1 d (/x)\n\n"
        /* one byte more or less white space before the period or after the event */
        "perl 16685  1204.548767:      250000 cpu-clock: \n\t 1 f (/x)\n\n"
        "perl 16685  1204.548768:      250000 cpu-clock:\n\t 1 f (/x)\n\n"
        "perl 16685  1204.548769:      250000 cpu-clock:  \n\t 1 f (/x)\n\n"
        /* no period; period 0; a comm with spaces and 30 bytes of ids */
        "perl 16685  1204.548770:                cpu-clock: \n\t 1 g (/x)\n\n"
        "perl 16685  1204.548771:                cpu-clock: \n\t 1 g (/x)\n\n"
        "perl 16685  1204.548772:      0 cpu-clock: \n\t 1 g (/x)\n\n"
        "V8 Worker Thread 123456789/123456789 [000] 1.000000: 7 cpu-clock:\n\t 1 h (/x)\n\n"
        "V8 Worker Thread 123456789/123456789 [001] 1.000001: 7 cpu-clock:\n\t 1 h (/x)\n\n"
        "V8 Worker Thread 123456789/123456780 [001] 1.000001: 7 cpu-clock:\n\t 1 h (/x)\n\n";
    struct pf_opts o;
    char *a, *b;
    int same = 1, hits = 0;

    for (int opt = 0; opt < 3; opt++) {
        memset(&o, 0, sizeof(o));
        o.pid = opt == 1;
        o.tid = opt == 2;
        a = fold_text_how(text, &o, 0);
        b = fold_text_how(text, &o, 1);
        same &= strcmp(a, b) == 0;
        free(a);
        free(b);
    }
    TAP_OK(same, "headers recognised by their bytes fold as when parsed (plain, --pid, --tid)");
    {
        struct perf_fold_ctx c;
        char l1[] = "perl 16684  1204.487596:     100000 cpu-clock: ";
        char l2[] = "perl 16684  1204.548760:     100000 cpu-clock: ";
        memset(&c, 0, sizeof(c));
        c.o.quiet = 1;
        if (fold_init(&c))
            abort();
        perfscript_line(&c, l1, strlen(l1));
        hits = c.hc.valid;
        c.hc.period = 42; /* only a hit keeps this */
        perfscript_line(&c, l2, strlen(l2));
        hits &= c.period == 42;
        fold_free(&c);
    }
    TAP_OK(hits, "a repeated thread's header is recognised without a parse");
}

static void fold_is(const char *text, const struct pf_opts *o, const char *want, const char *name)
{
    char *got = fold_text(text, o);
    TAP_EQ_STR(got, want, "%s", name);
    free(got);
}

int main(void)
{
    struct pf_opts o;

    /* ---- headers: old and new perf layouts ---- */
    header("java 12688 [002] 6544038.708352: 235 cpu-clock:", "java", "", "12688", "235",
           "cpu-clock", 6544038708352000, 2);
    header("V8 WorkerThread 24636/25607 [000] 94564.109216: 100 cycles:", "V8 WorkerThread",
           "24636", "25607", "100", "cycles", 94564109216000, 0);
    header("emulator  4152 75695.008865:          1 cycles:u:", "emulator", "", "4152", "1",
           "cycles:u", 75695008865000, -1);
    header("java 25607 4794564.109216: cycles:", "java", "", "25607", "", "cycles",
           4794564109216000, -1);
    /* perf >= 6.5 widths ("%7d/%-7d"), --ns times, trailing blank after the event */
    header("sh   13276/13276   [001]   646.361619123:     250000 cpu-clock: ", "sh", "13276",
           "13276", "250000", "cpu-clock", 646361619123, 1);
    /* tracepoint with payload: no "event:" at the end of the line */
    header("perf 1234 [000] 1.500000: 1 sched:sched_switch: prev_comm=perf next_comm=x", "perf", "",
           "1234", NULL, NULL, 1500000000, 0);
    /* tid "0" means "the pid is the tid" in stackcollapse-perf.pl */
    header("swapper 0/0 [001] 5.000001: 1 cpu-clock:", "swapper", "", "0", "1", "cpu-clock",
           5000001000, 1);
    /* comm made of digits and spaces: the shortest comm that fits */
    header("a 1 2 3 4.000000: 7 cycles:", "a 1", "", "2", "7", "cycles", 4000000000, -1);
    {
        struct pf_header h;
        TAP_OK(!perfscript_header("\t ffff sym (mod)", 16, &h), "a frame is not a header");
        TAP_OK(!perfscript_header("x", 1, &h), "one character is not a header");
        TAP_OK(!perfscript_header("comm noid x: y e:", 17, &h), "no pid, no header");
    }

    /* ---- frames ---- */
    frame("\t ffffffff8103ce3b native_safe_halt ([kernel.kallsyms])", "ffffffff8103ce3b",
          "native_safe_halt", "[kernel.kallsyms]");
    frame("\t    7f722d142778 Ljava/io/PrintStream;::print (/tmp/perf-19982.map)", "7f722d142778",
          "Ljava/io/PrintStream;::print", "/tmp/perf-19982.map");
    frame("\t 0 [unknown] ([unknown])", "0", "[unknown]", "[unknown]");
    frame("\t 7d9750 page_fault+0xfe200000 ([kernel.kallsyms])", "7d9750", "page_fault+0xfe200000",
          "[kernel.kallsyms]");
    /* inlined frames: "(inlined)" is the module */
    frame("\t 4005d6 inner_fn (inlined)", "4005d6", "inner_fn", "inlined");
    /* C++ with parentheses: symbol ends at the last " (" before the last ')' */
    frame("\t 401234 foo(int, char) const (/usr/bin/app (deleted))", "401234",
          "foo(int, char) const (/usr/bin/app", "deleted)");
    /* (\w+)\s* backtracks: the symbol needs one character */
    frame("\tffff (foo)", "fff", "f", "foo");
    frame("\t   (missing ip)", NULL, NULL, NULL);
    frame("no parens here", NULL, NULL, NULL);

    /* ---- folding rules ---- */
    fold_is("java 1 [000] 1.000000: 5 cycles:\n"
            "\t a Lorg/mozilla/Foo;.call(Ljava/lang/Object;)V+0x1f (/tmp/perf-1.map)\n"
            "\t b \"quoted'name\" (/usr/lib/libjvm.so)\n"
            "\t c [unknown] (/usr/lib/libc.so.6)\n\n",
            NULL, "java;[libc.so.6];quotedname;org/mozilla/Foo:.call 5\n",
            "java tidying, quotes, [unknown] takes the dso name");
    memset(&o, 0, sizeof(o));
    o.kernel = o.jit = 1;
    fold_is("app 7 1.0: 2 cpu-clock:\n"
            "\t ffff do_sys_open ([kernel.kallsyms])\n"
            "\t 1 jitted (/tmp/perf-7.map)\n"
            "\t 2 outer->inner (/usr/bin/app)\n\n",
            &o, "app;outer;inner_[i];jitted_[j];do_sys_open_[k] 2\n",
            "--all annotations, -> pieces");
    fold_is("gg 1 1.0: 1 c:\n\t 1 net/http.(*Client).Do (/bin/g)\n"
            "\t 2 ns::(anonymous namespace)::f(int) (/bin/g)\n\t 3 (skipped) (/bin/g)\n\n",
            NULL, "gg;ns::(anonymous namespace)::f;net/http.(*Client).Do 1\n",
            "Go names and anonymous namespaces");
    fold_is("pp 1 1.0: 3 cycles:\n\t 1 a (/x)\n\n"
            "pp 1 1.1: 4 instructions:\n\t 1 b (/x)\n\n"
            "pp 1 1.2: 0 cycles:\n\t 1 a (/x)\n\n",
            NULL, "pp;a 4\n", "first event type only; period 0 counts 1");
    memset(&o, 0, sizeof(o));
    o.event_filter = "instructions";
    fold_is("pp 1 1.0: 3 cycles:\n\t 1 a (/x)\n\npp 1 1.1: 4 instructions:\n\t 1 b (/x)\n\n", &o,
            "pp;b 4\n", "--event-filter");
    fold_is("pp 1 1.0: 3 cycles:\n\t 1 a (/x)\n", NULL, "", "unterminated last sample dropped");
    memset(&o, 0, sizeof(o));
    o.eof = 1;
    fold_is("pp 1 1.0: 3 cycles:\n\t 1 a (/x)\n", &o, "pp;a 3\n", "--eof counts it");
    memset(&o, 0, sizeof(o));
    o.tid = 1;
    fold_is("my app 10/11 1.0: 1 cycles:\n\t 1 f (/x)\n\nmy app 12 1.0: 1 cycles:\n\t 1 f (/x)\n\n",
            &o, "my_app-10/11;f 1\nmy_app-?/12;f 1\n", "--tid with comm spaces and tid-only lines");
    memset(&o, 0, sizeof(o));
    o.addrs = 1;
    fold_is("pp 1 1.0: 1 c:\n\t 7f00 [unknown] ([unknown])\n\t 7f01 [unknown] (/lib/x.so)\n\n", &o,
            "pp;[x.so <7f01>];[unknown <7f00>] 1\n", "--addrs");
    memset(&o, 0, sizeof(o));
    o.srcline = 1;
    fold_is("a.out 1 1.0: 9 cycles:\n"
            "\t 408ebb some_method+0x8b (/p/a.out)\n"
            "  uniform_int_dist.h:300\n"
            "\t 7ffc [unknown] ([unknown])\n"
            "\t 4069f5 main+0x935 (/p/a.out)\n"
            "  file.cpp:137\n"
            "\t 7f6d __libc_start_main+0xd5 (/lib64/libc-2.33.so)\n"
            "  libc-2.33.so[27b25]\n\n",
            &o,
            "a.out;__libc_start_main:libc-2.33.so;main:file.cpp:137;[unknown];"
            "some_method:uniform_int_dist.h:300 9\n",
            "--srcline");
    /* a one-character comm cannot match (\S.+?): the regex takes more */
    fold_is("p 1 1.0: 1 c:\n\t 1 f (/x)\n\n", NULL, "p_1_1.0:;f 1\n", "one-character comm");
    fold_is("pp 1 1.0: 1 c:\n\t 1 (prog) (/x)\n\t 2 s (/x)\n\n# comment\n\n", NULL, "pp;s 1\n",
            "frames starting with '(' skipped, comments ignored");
    /* records without a blank line between them pile up, as in the Perl script */
    fold_is("pp 1 1.0: 1 c:\n\t 1 a (/x)\nqq 2 1.0: 2 c:\n\t 1 b (/x)\n\n", NULL, "qq;b;a 2\n",
            "no blank line: stacks pile up (compatible)");
    {
        uint64_t h1 = sf_hash("abc", 3), h2 = sf_hash("abd", 3);
        TAP_OK(h1 != h2 && h1 == sf_hash("abc", 3), "hash is deterministic and discriminates");
    }
    header_cache_same();
    return tap_done();
}
