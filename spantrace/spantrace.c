/* spantrace.c - user half of spantrace: attach span-marker probes to a service
 * and write span markers in the tracefs text format that tracefs2spans reads.
 *
 *   spantrace --usdt spanfold:span_begin:span_end ./demo-service > markers.txt
 *   spantrace --func sf_demo_span_begin,sf_demo_span_end --decision-arg 1 -p 1234 ./svc
 *
 * Each probe hit becomes one line, timestamped with bpf_ktime_get_ns()
 * (CLOCK_MONOTONIC, nanoseconds, the clock of `perf record -k mono`):
 *
 *   demo-service-4242    [001] ..... 12345.678901234: spantrace: span:00f067aa0ba902b7 begin
 * decision:1
 *
 * --sockets adds one line per TCP send or receive call that copied bytes (the
 * kernel's tcp_sendmsg / tcp_recvmsg / tcp_splice_read; no probe in the service):
 *
 *   nginx-812     (    810) [000] ..... 12345.678901234: spantrace_sock: recv
 * 127.0.0.1:8080 127.0.0.1:51234 seq=3775671812 len=214
 *
 * and, for a thread that made such a call, one line per readiness wait that returned
 * (epoll_wait and its kin, poll, select: an event loop's iterations), called at from=:
 *
 *   nginx-812     (    810) [000] ..... 12345.679001234: spantrace_sock: wait
 * from=12345.678950000 ready=2
 *
 * --offcpu (with -p PID) adds one line per time a thread of the process was off its
 * CPU: from its sched_switch out to its switch in, its state, its waker, the program's
 * innermost own frame (an index from the leaf), and its stack, user frames then the
 * kernel's down to the scheduler, named here (sym.c) while the process runs:
 *
 *   svc-4243      (   4242) [001] ..... 12345.678901234: spantrace_offcpu: end=12345.6990
 * 01234 state=S waker=4250 frame=9 stack=svc;main;...;pool_acquire;...;__schedule
 *
 * Straight-line flow, as libbpf-tools do: parse -> check -> open -> configure ->
 * load -> attach -> poll, with one cleanup path.
 */
#include "spantrace.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sf_err.h"
#include "sf_opt.h"
#include "spantrace.skel.h"
#include "sym.h"

#define TOOL    "spantrace"
#define TRACEFS "/sys/kernel/tracing"

struct spantrace_ctx {
    const char *binary;
    const char *usdt_provider, *begin, *end; /* probe names (USDT) or function names */
    int use_usdt;
    int pid;
    int span_arg, decision_arg, trace_hi_arg, trace_lo_arg;
    int printk, verbose;
    int sockets, nports;
    int offcpu;
    int64_t offcpu_min_ns;
    struct st_syms *syms; /* --offcpu: the process's symbols */
    unsigned short ports[SPANTRACE_MAX_PORTS];
    double duration;
    FILE *out;
    unsigned long long events, sock_events, sock_waits, go_runs, go_spawns, offcpu_events;
    char saved_clock[64]; /* trace_clock to restore, "" if untouched */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: spantrace [options] (--usdt PROVIDER:BEGIN[:END] | --func BEGIN[,END]) BINARY\n"
        "       spantrace --sockets [-p PID] [--port N]... [options] [--usdt|--func ... BINARY]\n"
        "       spantrace --offcpu -p PID [--sockets] [options] [--usdt|--func ... BINARY]\n"
        "Attach to a service's span begin/end probes and write span markers in the tracefs\n"
        "text format (tracefs2spans reads them), timestamped with CLOCK_MONOTONIC in ns.\n\n"
        "  --usdt P:B[:E]      USDT probes (survive strip; preferred)\n"
        "  --func B[,E]        uprobes on functions by symbol name (not on stripped binaries)\n"
        "  --sockets           also (or only) one line per TCP send/receive call: thread,\n"
        "                      4-tuple, sequence range (no instrumentation in the service)\n"
        "  --port N            --sockets: only sockets with this port at either end: a\n"
        "                      server's, or a backend's it calls (up to 8)\n"
        "  --offcpu            also (or only) one line per time a thread of -p PID was off\n"
        "                      CPU: start, end, state, waker, the stack it blocked in\n"
        "  --offcpu-min DUR    --offcpu: only intervals of at least DUR (e.g. 50us; default 0)\n"
        "  -p, --pid PID       only this process (default: every process of BINARY)\n"
        "  --span-arg N        argument index (0-based) holding the 64-bit span id (default 0)\n"
        "  --decision-arg N    argument holding the sampling decision (default: none)\n"
        "  --trace-args H,L    arguments holding the trace id's high and low 64 bits\n"
        "  -o, --output FILE   write markers here (default stdout)\n"
        "  --printk            also bpf_printk each marker into the kernel trace buffer;\n"
        "                      sets trace_clock to mono while running and restores it\n"
        "  -d, --duration S    stop after S seconds (default: until SIGINT/SIGTERM)\n"
        "  -v, --verbose       libbpf diagnostics\n"
        "  --help, --version\n"
        "Needs root (CAP_BPF + CAP_PERFMON) and kernel BTF (/sys/kernel/btf/vmlinux).\n"
        "Exit status: 0 ok, 2 usage error or a probe could not be attached.\n");
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
    (void)level;
    return vfprintf(stderr, fmt, ap);
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, TOOL ": ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return SF_EXIT_USAGE;
}

static int arg_index(const char *s, int *out)
{
    int64_t v;

    if (sf_opt_i64(s, 0, 5, &v))
        return -1;
    *out = (int)v;
    return 0;
}

/* Split "a:b[:c]" or "a,b" in place. */
static int parse_probes(struct spantrace_ctx *c, char *spec, int usdt)
{
    char *a = spec, *b = strchr(a, usdt ? ':' : ','), *e = NULL;

    c->use_usdt = usdt;
    if (usdt) {
        if (b == NULL)
            return -1;
        *b++ = 0;
        c->usdt_provider = a;
        a = b;
        b = strchr(a, ':');
    }
    if (b) {
        *b++ = 0;
        e = b;
    }
    c->begin = a;
    c->end = e && *e ? e : NULL;
    return *c->begin ? 0 : -1;
}

static int parse_args(struct spantrace_ctx *c, int argc, char **argv)
{
    enum {
        O_USDT = 256,
        O_FUNC,
        O_SPAN,
        O_DEC,
        O_TRACE,
        O_PRINTK,
        O_SOCKETS,
        O_PORT,
        O_OFFCPU,
        O_OFFMIN,
        O_HELP,
        O_VERSION
    };
    static const struct option opts[] = {{"usdt", required_argument, 0, O_USDT},
                                         {"func", required_argument, 0, O_FUNC},
                                         {"pid", required_argument, 0, 'p'},
                                         {"span-arg", required_argument, 0, O_SPAN},
                                         {"decision-arg", required_argument, 0, O_DEC},
                                         {"trace-args", required_argument, 0, O_TRACE},
                                         {"output", required_argument, 0, 'o'},
                                         {"printk", no_argument, 0, O_PRINTK},
                                         {"sockets", no_argument, 0, O_SOCKETS},
                                         {"port", required_argument, 0, O_PORT},
                                         {"offcpu", no_argument, 0, O_OFFCPU},
                                         {"offcpu-min", required_argument, 0, O_OFFMIN},
                                         {"duration", required_argument, 0, 'd'},
                                         {"verbose", no_argument, 0, 'v'},
                                         {"help", no_argument, 0, O_HELP},
                                         {"version", no_argument, 0, O_VERSION},
                                         {0, 0, 0, 0}};
    int o, probes = 0;
    int64_t v;
    char *comma;

    while ((o = getopt_long(argc, argv, "hp:o:d:v", opts, NULL)) != -1) {
        switch (o) {
        case O_USDT:
        case O_FUNC:
            if (parse_probes(c, optarg, o == O_USDT))
                return fail("bad probe spec '%s'", optarg);
            probes++;
            break;
        case 'p':
            if (sf_opt_i64(optarg, 1, 0x7fffffff, &v))
                return fail("bad pid '%s'", optarg);
            c->pid = (int)v;
            break;
        case O_SPAN:
            if (arg_index(optarg, &c->span_arg))
                return fail("--span-arg takes 0..5");
            break;
        case O_DEC:
            if (arg_index(optarg, &c->decision_arg))
                return fail("--decision-arg takes 0..5");
            break;
        case O_TRACE:
            comma = strchr(optarg, ',');
            if (comma == NULL)
                return fail("--trace-args takes HI,LO");
            *comma = 0;
            if (arg_index(optarg, &c->trace_hi_arg) || arg_index(comma + 1, &c->trace_lo_arg))
                return fail("--trace-args takes two indices 0..5");
            break;
        case 'o':
            c->out = fopen(optarg, "w");
            if (c->out == NULL)
                return fail("failed to open %s: %s", optarg, strerror(errno));
            break;
        case O_PRINTK:
            c->printk = 1;
            break;
        case O_SOCKETS:
            c->sockets = 1;
            break;
        case O_PORT:
            if (sf_opt_i64(optarg, 1, 65535, &v))
                return fail("bad port '%s'", optarg);
            if (c->nports == SPANTRACE_MAX_PORTS)
                return fail("at most %d --port options", SPANTRACE_MAX_PORTS);
            c->ports[c->nports++] = (unsigned short)v;
            break;
        case O_OFFCPU:
            c->offcpu = 1;
            break;
        case O_OFFMIN:
            if (sf_opt_duration_ns(optarg, &c->offcpu_min_ns) || c->offcpu_min_ns < 0)
                return fail("bad --offcpu-min '%s' (e.g. 50us, 1ms)", optarg);
            break;
        case 'd':
            if (sf_opt_double(optarg, &c->duration) || c->duration <= 0)
                return fail("bad duration '%s'", optarg);
            break;
        case 'v':
            c->verbose = 1;
            break;
        case 'h':
        case O_HELP:
            usage(stdout);
            exit(0);
        case O_VERSION:
            sf_opt_print_version(stdout, TOOL);
            exit(0);
        default:
            usage(stderr);
            return SF_EXIT_USAGE;
        }
    }
    if (c->nports && !c->sockets)
        return fail("--port needs --sockets");
    if (c->offcpu && c->pid == 0)
        return fail("--offcpu needs -p PID: the process whose threads' off-CPU time to record");
    if (c->offcpu_min_ns && !c->offcpu)
        return fail("--offcpu-min needs --offcpu");
    if (probes > 1 || (probes == 1 && optind != argc - 1) ||
        (probes == 0 && (!(c->sockets || c->offcpu) || optind != argc))) {
        usage(stderr);
        return SF_EXIT_USAGE;
    }
    c->binary = probes ? argv[optind] : NULL;
    if (c->printk && !c->binary)
        return fail("--printk writes span markers: it needs --usdt or --func");
    return 0;
}

/* Read or write a one-line tracefs file. */
static int tracefs_file(const char *name, char *buf, size_t n, const char *write_value)
{
    char path[256];
    FILE *f;

    snprintf(path, sizeof(path), TRACEFS "/%s", name);
    f = fopen(path, write_value ? "w" : "r");
    if (f == NULL)
        return -1;
    if (write_value)
        fputs(write_value, f);
    else if (fgets(buf, (int)n, f) == NULL)
        buf[0] = 0;
    return fclose(f) == 0 ? 0 : -1;
}

/* trace_clock reads like "[local] global counter mono ..."; keep the bracketed one. */
static int set_trace_clock(struct spantrace_ctx *c)
{
    char line[512], *l, *r;

    if (tracefs_file("trace_clock", line, sizeof(line), NULL))
        return fail("failed to read " TRACEFS "/trace_clock: %s (mount -t tracefs nodev " TRACEFS
                    ")",
                    strerror(errno));
    l = strchr(line, '[');
    r = l ? strchr(l, ']') : NULL;
    if (r == NULL)
        return fail("failed to parse trace_clock '%s'", line);
    *r = 0;
    snprintf(c->saved_clock, sizeof(c->saved_clock), "%s", l + 1);
    /* setting the clock clears the trace buffer: only when it differs */
    if (strcmp(c->saved_clock, "mono") != 0 && tracefs_file("trace_clock", NULL, 0, "mono"))
        return fail("failed to set trace_clock to mono: %s", strerror(errno));
    return 0;
}

static void restore_trace_clock(struct spantrace_ctx *c)
{
    if (c->saved_clock[0] && strcmp(c->saved_clock, "mono") != 0 &&
        tracefs_file("trace_clock", NULL, 0, c->saved_clock))
        fprintf(stderr, TOOL ": failed to restore trace_clock to %s: %s\n", c->saved_clock,
                strerror(errno));
}

/* The head of every line, the kernel's trace_print_context() layout with nanoseconds, up
 * to and with "EVENT: "; raw the task's comm as the kernel gives it (maybe without a NUL),
 * copied into comm. */
static void line_head(FILE *f, char comm[SPANTRACE_COMM_LEN + 1], const char *raw, unsigned tid,
                      unsigned pid, unsigned cpu, unsigned long long ts, const char *event)
{
    memcpy(comm, raw, SPANTRACE_COMM_LEN);
    comm[SPANTRACE_COMM_LEN] = 0;
    fprintf(f, "%16s-%-7u (%7u) [%03u] ..... %5llu.%09llu: %s: ", comm, tid, pid, cpu,
            ts / 1000000000ull, ts % 1000000000ull, event);
}

static int on_event(void *data, void *ev, size_t size)
{
    struct spantrace_ctx *c = data;
    const struct span_event *e = ev;
    char comm[SPANTRACE_COMM_LEN + 1];

    if (size < sizeof(*e))
        return 0;
    line_head(c->out, comm, e->comm, e->tid, e->pid, e->cpu, e->ts_ns, "spantrace");
    fprintf(c->out, "span:%016llx %s", e->span_id, e->kind == SPANTRACE_END ? "end" : "begin");
    if (e->decision >= 0)
        fprintf(c->out, " decision:%d", e->decision);
    if (e->trace_hi || e->trace_lo)
        fprintf(c->out, " trace:%016llx%016llx", e->trace_hi, e->trace_lo);
    fputc('\n', c->out);
    c->events++;
    return 0;
}

/* An address as inet_ntop prints it, IPv6 in brackets (so that ':PORT' stays apart). */
static void endpoint(char *buf, size_t n, int family, const unsigned char *a, unsigned port)
{
    char t[INET6_ADDRSTRLEN];

    if (inet_ntop(family == AF_INET6 ? AF_INET6 : AF_INET, a, t, sizeof(t)) == NULL)
        snprintf(t, sizeof(t), "?");
    snprintf(buf, n, family == AF_INET6 ? "[%s]:%u" : "%s:%u", t, port);
}

static int on_sock_event(void *data, void *ev, size_t size)
{
    struct spantrace_ctx *c = data;
    const struct sock_event *e = ev;
    char comm[SPANTRACE_COMM_LEN + 1], l[64], r[64];

    if (size < sizeof(*e))
        return 0;
    line_head(c->out, comm, e->comm, e->tid, e->pid, e->cpu, e->ts_ns, "spantrace_sock");
    switch (e->send) {
    case SPANTRACE_SOCK_GO:
        fprintf(c->out, "go g=0x%llx\n", e->enter_ns);
        c->go_runs++;
        return 0;
    case SPANTRACE_SOCK_SPAWN:
        fprintf(c->out, "spawn g=0x%llx parent=0x%llx\n", e->enter_ns, e->parent_g);
        c->go_spawns++;
        return 0;
    case SPANTRACE_SOCK_WAIT:
        fprintf(c->out, "wait from=%llu.%09llu ready=%u\n", e->enter_ns / 1000000000ull,
                e->enter_ns % 1000000000ull, e->len);
        c->sock_waits++;
        return 0;
    }
    endpoint(l, sizeof(l), e->family, e->laddr, e->lport);
    endpoint(r, sizeof(r), e->family, e->raddr, e->rport);
    fprintf(c->out, "%s %s %s seq=%u len=%u\n", e->send ? "send" : "recv", l, r, e->seq, e->len);
    c->sock_events++;
    return 0;
}

/* The kernel's letters for a prev_state (sched_switch's format), "R+" when preempted. */
static const char *state_text(unsigned int state, unsigned int preempt)
{
    static const char *const letter[] = {"S", "D", "T", "t", "X", "Z", "P"};

    if (preempt)
        return "R+";
    if ((state & 0x402) == 0x402) /* TASK_IDLE: uninterruptible, not counted as load */
        return "I";
    for (unsigned i = 0; i < sizeof(letter) / sizeof(letter[0]); i++)
        if (state & (1u << i))
            return letter[i];
    return "R";
}

static int on_offcpu_event(void *data, void *ev, size_t size)
{
    struct spantrace_ctx *c = data;
    const struct offcpu_event *e = ev;
    char comm[SPANTRACE_COMM_LEN + 1];
    int nk, nu, k0 = 0, frame = -1, rt;

    if (size < sizeof(*e))
        return 0;
    nk = e->nk > 0 ? e->nk / 8 : 0;
    nu = e->nu > 0 ? e->nu / 8 : 0;
    nk = nk > SPANTRACE_KSTACK ? SPANTRACE_KSTACK : nk;
    nu = nu > SPANTRACE_USTACK ? SPANTRACE_USTACK : nu;
    /* the kernel's stack down to __schedule, as perf's sched_switch records have it:
     * not the tracepoint's and this program's own frames below it */
    for (int i = 0; i < nk; i++)
        if (strcmp(st_syms_name(c->syms, e->kstack[i], 1, &rt), "__schedule") == 0) {
            k0 = i;
            break;
        }
    /* the program's innermost own frame, counted from the leaf (the kernel's frames
     * first) */
    for (int i = 0; i < nu && frame < 0; i++) {
        st_syms_name(c->syms, e->ustack[i], 0, &rt);
        if (!rt)
            frame = nk - k0 + i;
    }
    line_head(c->out, comm, e->comm, e->tid, e->pid, e->cpu, e->start_ns, "spantrace_offcpu");
    fprintf(c->out, "end=%llu.%09llu state=%s waker=", e->end_ns / 1000000000ull,
            e->end_ns % 1000000000ull, state_text(e->state, e->preempt));
    if (e->waker)
        fprintf(c->out, "%u", e->waker);
    else
        fputc('-', c->out);
    if (frame >= 0)
        fprintf(c->out, " frame=%d stack=%s", frame, comm);
    else
        fprintf(c->out, " frame=- stack=%s", comm);
    for (int i = nu - 1; i >= 0; i--) /* root first */
        fprintf(c->out, ";%s", st_syms_name(c->syms, e->ustack[i], 0, &rt));
    for (int i = nk - 1; i >= k0; i--)
        fprintf(c->out, ";%s", st_syms_name(c->syms, e->kstack[i], 1, &rt));
    fputc('\n', c->out);
    c->offcpu_events++;
    return 0;
}

/* The socket programs of one kind: fentry/fexit (tp 0) or raw tracepoints (tp 1). */
static struct bpf_program *const *sock_progs(struct spantrace_bpf *s, int tp, int *n)
{
    static struct bpf_program *p[6];
    if (tp) {
        p[0] = s->progs.tp_sock_send_length, p[1] = s->progs.tp_sock_recv_length;
        *n = 2;
        return p;
    }
    p[0] = s->progs.fentry_tcp_sendmsg, p[1] = s->progs.fexit_tcp_sendmsg;
    p[2] = s->progs.fentry_tcp_recvmsg, p[3] = s->progs.fexit_tcp_recvmsg;
    p[4] = s->progs.fentry_tcp_splice_read, p[5] = s->progs.fexit_tcp_splice_read;
    *n = 6;
    return p;
}

/* The readiness waits' programs (--sockets): a syscall's enter and exit tracepoints. */
/* The goroutine starts of a Go program (exe, of process pid): runtime.newproc1's entry (the
 * parent) and the instruction after its call in runtime.newproc's closure (the new g).  The
 * call site is found in the binary's code; where it is not (another Go, no symbol table),
 * the runs alone go on, as before.  links[1] is set when both are attached. */
static void attach_go_spawns(struct spantrace_bpf *skel, int pid, const char *exe,
                             struct bpf_link **links)
{
    static const char closure[] = "runtime.newproc.func1";
    long at = st_call_return(exe, closure, "runtime.newproc1");
    LIBBPF_OPTS(bpf_uprobe_opts, entry, .func_name = "runtime.newproc1");
    LIBBPF_OPTS(bpf_uprobe_opts, after, .func_name = closure);

    if (at < 0) {
        fprintf(stderr,
                TOOL ": goroutine starts not traced: no call of runtime.newproc1 found "
                     "in %s\n",
                closure);
        return;
    }
    if ((links[0] = bpf_program__attach_uprobe_opts(skel->progs.go_newproc1, pid, exe, 0,
                                                    &entry)) == NULL ||
        (links[1] = bpf_program__attach_uprobe_opts(skel->progs.go_spawned, pid, exe, (size_t)at,
                                                    &after)) == NULL) {
        fprintf(stderr, TOOL ": goroutine starts not traced: %s\n", strerror(errno));
        bpf_link__destroy(links[0]);
        links[0] = NULL;
    }
}

static struct bpf_program *const *wait_progs(struct spantrace_bpf *s, int *n)
{
    static struct bpf_program *p[14];
    int k = 0;

#define WAIT_PAIR(name) p[k++] = s->progs.wait_enter_##name, p[k++] = s->progs.wait_exit_##name
    WAIT_PAIR(epoll_wait);
    WAIT_PAIR(epoll_pwait);
    WAIT_PAIR(epoll_pwait2);
    WAIT_PAIR(poll);
    WAIT_PAIR(ppoll);
    WAIT_PAIR(select);
    WAIT_PAIR(pselect6);
#undef WAIT_PAIR
    *n = k;
    return p;
}

/* Open and load the object with the socket programs of one kind (fentry/fexit, or
 * tracepoints) or none; NULL when it does not load. */
static struct spantrace_bpf *open_load(const struct spantrace_ctx *c, int tp)
{
    struct spantrace_bpf *skel = spantrace_bpf__open();
    struct bpf_program *const *p;
    int n;

    if (skel == NULL)
        return NULL;
    for (int k = 0; k < 2; k++) {
        p = sock_progs(skel, k, &n);
        for (int i = 0; i < n; i++)
            bpf_program__set_autoload(p[i], c->sockets && k == tp);
    }
    p = wait_progs(skel, &n);
    for (int i = 0; i < n; i++)
        bpf_program__set_autoload(p[i], c->sockets);
    bpf_program__set_autoload(skel->progs.go_execute, c->sockets && c->pid);
    bpf_program__set_autoload(skel->progs.go_newproc1, c->sockets && c->pid);
    bpf_program__set_autoload(skel->progs.go_spawned, c->sockets && c->pid);
    bpf_program__set_autoload(skel->progs.offcpu_switch, c->offcpu);
    bpf_program__set_autoload(skel->progs.offcpu_waking, c->offcpu);
    skel->rodata->offcpu_min_ns = (unsigned long long)c->offcpu_min_ns;
    skel->rodata->target_tgid = c->pid;
    skel->rodata->span_arg = c->span_arg;
    skel->rodata->decision_arg = c->decision_arg;
    skel->rodata->trace_hi_arg = c->trace_hi_arg;
    skel->rodata->trace_lo_arg = c->trace_lo_arg;
    skel->rodata->use_printk = c->printk;
    skel->rodata->sock_filter_ports = c->nports > 0;
    for (int i = 0; i < c->nports; i++)
        skel->rodata->sock_ports[i] = c->ports[i];
    if (spantrace_bpf__load(skel)) {
        spantrace_bpf__destroy(skel);
        return NULL;
    }
    return skel;
}

static struct bpf_link *attach_one(struct spantrace_ctx *c, struct bpf_program *usdt,
                                   struct bpf_program *up, const char *name)
{
    struct bpf_link *l;

    if (c->use_usdt) {
        l = bpf_program__attach_usdt(usdt, c->pid ? c->pid : -1, c->binary, c->usdt_provider, name,
                                     NULL);
    } else {
        LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = name);
        l = bpf_program__attach_uprobe_opts(up, c->pid ? c->pid : -1, c->binary, 0, &uo);
    }
    if (l == NULL)
        fail("failed to attach %s %s%s%s in %s: %s", c->use_usdt ? "USDT" : "uprobe",
             c->use_usdt ? c->usdt_provider : "", c->use_usdt ? ":" : "", name, c->binary,
             strerror(errno));
    return l;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int preflight(const struct spantrace_ctx *c)
{
    if (geteuid() != 0)
        return fail("needs root (CAP_BPF and CAP_PERFMON) to load BPF programs; run it with sudo");
    if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
        return fail("this kernel exposes no BTF (/sys/kernel/btf/vmlinux; CONFIG_DEBUG_INFO_BTF=y "
                    "is needed for CO-RE)");
    if (c->binary && access(c->binary, R_OK) != 0)
        return fail("failed to open %s: %s", c->binary, strerror(errno));
    return 0;
}

int main(int argc, char **argv)
{
    struct spantrace_ctx c = {
        .span_arg = 0, .decision_arg = -1, .trace_hi_arg = -1, .trace_lo_arg = -1, .out = stdout};
    struct spantrace_bpf *skel = NULL;
    struct bpf_link *lb = NULL, *le = NULL, *ls[6] = {0}, *lo[2] = {0}, *lw[14] = {0}, *lg = NULL,
                    *lgs[2] = {0};
    int waits = 0;
    struct ring_buffer *rb = NULL;
    unsigned long long dropped = 0, sock_dropped = 0;
    unsigned int one = 1;
    int tp = 0;
    unsigned int zero = 0;
    double t_end;
    int rc;

    argv[0] = (char *)"spantrace"; /* getopt names the tool, not the path */

    if ((rc = parse_args(&c, argc, argv)) || (rc = preflight(&c)))
        return rc;
    libbpf_set_print(c.verbose ? libbpf_print : NULL);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    rc = SF_EXIT_USAGE;
    /* fentry/fexit first; the tracepoints where the kernel has no BPF trampoline */
    skel = open_load(&c, 0);
    if (skel == NULL && c.sockets)
        skel = open_load(&c, tp = 1);
    if (c.offcpu && (c.syms = st_syms_new(c.pid)) == NULL) {
        fail("out of memory");
        goto cleanup;
    }
    if (skel == NULL) {
        fail("failed to load BPF programs: %s (run with -v for the verifier log)", strerror(errno));
        goto cleanup;
    }
    if (c.printk && set_trace_clock(&c))
        goto cleanup;
    if (c.binary) {
        lb = attach_one(&c, skel->progs.usdt_begin, skel->progs.uprobe_begin, c.begin);
        if (lb == NULL || (c.end && (le = attach_one(&c, skel->progs.usdt_end,
                                                     skel->progs.uprobe_end, c.end)) == NULL))
            goto cleanup;
    }
    if (c.sockets) {
        int n;
        struct bpf_program *const *p = sock_progs(skel, tp, &n);
        for (int i = 0; i < n; i++) {
            if ((ls[i] = bpf_program__attach(p[i])) == NULL) {
                fail("failed to attach %s: %s", bpf_program__section_name(p[i]), strerror(errno));
                goto cleanup;
            }
        }
        /* the waits are a further signal: without the syscall tracepoints (a kernel
         * without CONFIG_FTRACE_SYSCALLS) the socket events stand alone, as before */
        p = wait_progs(skel, &n);
        waits = 1;
        for (int i = 0; i < n && waits; i++)
            if ((lw[i] = bpf_program__attach(p[i])) == NULL) {
                fprintf(stderr, TOOL ": readiness waits not traced: %s: %s\n",
                        bpf_program__section_name(p[i]), strerror(errno));
                waits = 0;
            }
        for (int i = 0; i < n && !waits; i++) {
            bpf_link__destroy(lw[i]);
            lw[i] = NULL;
        }
        /* a Go program: which goroutine each of its threads runs (no symbol: not Go) */
        if (c.pid) {
            char exe[64];
            LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "runtime.execute");
            snprintf(exe, sizeof(exe), "/proc/%d/exe", c.pid);
            lg = bpf_program__attach_uprobe_opts(skel->progs.go_execute, c.pid, exe, 0, &uo);
            if (lg)
                attach_go_spawns(skel, c.pid, exe, lgs);
        }
    }
    if (c.offcpu && ((lo[0] = bpf_program__attach(skel->progs.offcpu_switch)) == NULL ||
                     (lo[1] = bpf_program__attach(skel->progs.offcpu_waking)) == NULL)) {
        fail("failed to attach the scheduler tracepoints: %s", strerror(errno));
        goto cleanup;
    }
    rb = ring_buffer__new(bpf_map__fd(skel->maps.events), on_event, &c, NULL);
    if (rb == NULL ||
        (c.sockets &&
         ring_buffer__add(rb, bpf_map__fd(skel->maps.sock_events), on_sock_event, &c) < 0) ||
        (c.offcpu &&
         ring_buffer__add(rb, bpf_map__fd(skel->maps.offcpu_events), on_offcpu_event, &c) < 0)) {
        fail("failed to create ring buffer: %s", strerror(errno));
        goto cleanup;
    }
    fprintf(c.out, "# tracer: spantrace\n# trace_clock: mono\n");
    if (c.binary)
        fprintf(c.out, "# spantrace: %s %s%s%s%s%s pid=%d\n", c.binary,
                c.use_usdt ? c.usdt_provider : "", c.use_usdt ? ":" : "", c.begin, c.end ? "/" : "",
                c.end ? c.end : "", c.pid);
    if (c.sockets)
        fprintf(c.out, "# spantrace: sockets %s pid=%d ports=%d waits=%s go=%s spawns=%s\n",
                tp ? "tracepoint" : "fentry", c.pid, c.nports, waits ? "yes" : "no",
                lg ? "yes" : "no", lgs[1] ? "yes" : "no");
    if (c.offcpu)
        fprintf(c.out, "# spantrace: offcpu pid=%d min_ns=%lld\n", c.pid,
                (long long)c.offcpu_min_ns);
    fflush(c.out);
    fprintf(stderr, TOOL ": tracing %s%s%s%s%s; Ctrl-C to stop\n", c.binary ? c.binary : "",
            c.binary && c.sockets ? " and " : "", c.sockets ? "TCP sockets" : "",
            c.offcpu && (c.binary || c.sockets) ? " and " : "", c.offcpu ? "off-CPU time" : "");
    t_end = c.duration > 0 ? now_s() + c.duration : 0;
    while (!stop && (t_end == 0 || now_s() < t_end)) {
        int n = ring_buffer__poll(rb, 100);
        /* socket and off-CPU events come without wakeups (spantrace.bpf.c): take them
         * each round */
        if (n >= 0 && (c.sockets || c.offcpu))
            n = ring_buffer__consume(rb);
        if (n < 0 && n != -EINTR) {
            fail("failed to poll ring buffer: %s", strerror(-n));
            goto cleanup;
        }
        fflush(c.out);
    }
    ring_buffer__consume(rb);
    bpf_map_lookup_elem(bpf_map__fd(skel->maps.drops), &zero, &dropped);
    bpf_map_lookup_elem(bpf_map__fd(skel->maps.drops), &one, &sock_dropped);
    if (c.binary)
        fprintf(stderr, TOOL ": %llu markers written%s", c.events, dropped ? "" : "\n");
    if (c.binary && dropped)
        fprintf(stderr, ", %llu dropped (ring buffer full)\n", dropped);
    if (c.offcpu) {
        unsigned long long lost = 0, untracked = 0;
        unsigned int two = 2, three = 3;
        bpf_map_lookup_elem(bpf_map__fd(skel->maps.drops), &two, &lost);
        bpf_map_lookup_elem(bpf_map__fd(skel->maps.drops), &three, &untracked);
        fprintf(stderr,
                TOOL ": %llu off-CPU intervals written, %llu dropped (ring buffer full), %llu "
                     "switches not followed (too many threads off CPU at once)\n",
                c.offcpu_events, lost, untracked);
        if (lost + untracked)
            fprintf(c.out, "# entries-in-buffer/entries-written: %llu/%llu   #P:0\n",
                    c.offcpu_events, c.offcpu_events + lost + untracked);
    }
    if (c.sockets) {
        fprintf(stderr,
                TOOL ": %llu socket events, %llu readiness waits, %llu goroutine runs and %llu "
                     "starts written, %llu dropped (ring buffer full)\n",
                c.sock_events, c.sock_waits, c.go_runs, c.go_spawns, sock_dropped);
        /* the loss in the output too, where tracefs2spans counts it (a losses row) */
        if (sock_dropped)
            fprintf(c.out, "# entries-in-buffer/entries-written: %llu/%llu   #P:0\n",
                    c.sock_events + c.sock_waits + c.go_runs + c.go_spawns,
                    c.sock_events + c.sock_waits + c.go_runs + c.go_spawns + sock_dropped);
    }
    rc = 0;
cleanup:
    ring_buffer__free(rb);
    bpf_link__destroy(lo[1]);
    bpf_link__destroy(lo[0]);
    bpf_link__destroy(lgs[1]);
    bpf_link__destroy(lgs[0]);
    bpf_link__destroy(lg);
    for (int i = 13; i >= 0; i--)
        bpf_link__destroy(lw[i]);
    for (int i = 5; i >= 0; i--)
        bpf_link__destroy(ls[i]);
    bpf_link__destroy(le);
    bpf_link__destroy(lb);
    spantrace_bpf__destroy(skel);
    restore_trace_clock(&c);
    st_syms_free(c.syms);
    if (c.out && c.out != stdout)
        fclose(c.out);
    else
        fflush(stdout);
    return rc;
}
