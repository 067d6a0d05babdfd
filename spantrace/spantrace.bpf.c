// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* spantrace.bpf.c - kernel half of spantrace: on a service's span begin/end
 * probes (USDT or uprobe), read the span id (and optionally the sampling
 * decision and trace id) from the probe's arguments and emit a span_event into a
 * ring buffer, and optionally a bpf_printk line into the kernel trace buffer.
 *
 * --sockets: on the kernel's TCP send and receive paths (tcp_sendmsg, which
 * sendfile and splice to a socket reach too, tcp_recvmsg, tcp_splice_read), the
 * sequence number before the call (write_seq to send, copied_seq to receive, read
 * with CO-RE from struct tcp_sock) and after it give the bytes the call copied; one
 * sock_event per call that moved bytes.  fentry/fexit where the kernel has BPF
 * trampolines, else the sock:sock_send_length / sock_recv_length tracepoints (the
 * loader picks).
 *
 * Options are const volatile values the loader sets before load (libbpf-tools
 * style); argument indices are 0-based, -1 = not present.
 */
/* vmlinux.h first: the libbpf headers below need the kernel types it defines */
// clang-format off
#include "vmlinux.h"
// clang-format on

#include "spantrace.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>

const volatile int target_tgid = 0; /* 0 = any process */
const volatile int span_arg = 0;
const volatile int decision_arg = -1;
const volatile int trace_hi_arg = -1;
const volatile int trace_lo_arg = -1;
const volatile bool use_printk = false;

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 1 << 22);
} events SEC(".maps");

/* Count of events the ring buffer had no room for, reported by the loader. */
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 4); /* 0: span markers, 1: socket events, 2: off-CPU intervals,
                               3: threads left untracked (offcpu_open full) */
    __type(key, __u32);
    __type(value, __u64);
} drops SEC(".maps");

static __always_inline long usdt_arg(struct pt_regs *ctx, int i)
{
    long v = 0;

    if (i >= 0)
        bpf_usdt_arg(ctx, i, &v);
    return v;
}

/* Load all argument registers at constant offsets first: a variable offset into
 * the context (what a switch may compile to) is refused by the verifier. */
static __always_inline long uprobe_arg(struct pt_regs *ctx, int i)
{
    long a[8] = {PT_REGS_PARM1(ctx), PT_REGS_PARM2(ctx), PT_REGS_PARM3(ctx), PT_REGS_PARM4(ctx),
                 PT_REGS_PARM5(ctx)};

    return i >= 0 ? a[i & 7] : 0;
}

static __always_inline int emit(unsigned int kind, long span, long decision, long hi, long lo)
{
    __u64 id = bpf_get_current_pid_tgid();
    struct span_event *e;

    if (target_tgid && (id >> 32) != (__u64)target_tgid)
        return 0;
    if (use_printk) {
        if (decision_arg >= 0)
            bpf_printk("span:%016llx %s decision:%d", span, kind ? "end" : "begin", (int)decision);
        else
            bpf_printk("span:%016llx %s", span, kind ? "end" : "begin");
    }
    e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
    if (!e) {
        __u32 k = 0;
        __u64 *d = bpf_map_lookup_elem(&drops, &k);
        if (d)
            __sync_fetch_and_add(d, 1);
        return 0;
    }
    e->ts_ns = bpf_ktime_get_ns();
    e->span_id = span;
    e->trace_hi = trace_hi_arg >= 0 ? hi : 0;
    e->trace_lo = trace_lo_arg >= 0 ? lo : 0;
    e->pid = id >> 32;
    e->tid = (__u32)id;
    e->cpu = bpf_get_smp_processor_id();
    e->decision = decision_arg >= 0 ? (int)decision : -1;
    e->kind = kind;
    bpf_get_current_comm(e->comm, sizeof(e->comm));
    bpf_ringbuf_submit(e, 0);
    return 0;
}

SEC("usdt")
int BPF_KPROBE(usdt_begin)
{
    return emit(SPANTRACE_BEGIN, usdt_arg(ctx, span_arg), usdt_arg(ctx, decision_arg),
                usdt_arg(ctx, trace_hi_arg), usdt_arg(ctx, trace_lo_arg));
}

SEC("usdt")
int BPF_KPROBE(usdt_end)
{
    return emit(SPANTRACE_END, usdt_arg(ctx, span_arg), usdt_arg(ctx, decision_arg),
                usdt_arg(ctx, trace_hi_arg), usdt_arg(ctx, trace_lo_arg));
}

SEC("uprobe")
int BPF_KPROBE(uprobe_begin)
{
    return emit(SPANTRACE_BEGIN, uprobe_arg(ctx, span_arg), uprobe_arg(ctx, decision_arg),
                uprobe_arg(ctx, trace_hi_arg), uprobe_arg(ctx, trace_lo_arg));
}

SEC("uprobe")
int BPF_KPROBE(uprobe_end)
{
    return emit(SPANTRACE_END, uprobe_arg(ctx, span_arg), uprobe_arg(ctx, decision_arg),
                uprobe_arg(ctx, trace_hi_arg), uprobe_arg(ctx, trace_lo_arg));
}

/* ---- --sockets ------------------------------------------------------------------- */

const volatile bool sock_filter_ports = false;
const volatile __u16 sock_ports[SPANTRACE_MAX_PORTS] = {};

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 1 << 23);
} sock_events SEC(".maps");

/* Sequence number at entry, per thread, until the call returns. */
struct sock_entry {
    struct sock *sk;
    __u32 seq;
};

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 16384);
    __type(key, __u32);
    __type(value, struct sock_entry);
} sock_inflight SEC(".maps");

/* The threads that made a traced call: their readiness waits are traced too. */
struct {
    __uint(type, BPF_MAP_TYPE_LRU_HASH);
    __uint(max_entries, 16384);
    __type(key, __u32);
    __type(value, __u8);
} sock_threads SEC(".maps");

/* When such a thread entered its wait, until the wait returns. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 16384);
    __type(key, __u32);
    __type(value, __u64);
} sock_wait_enter SEC(".maps");

static __always_inline bool sock_wanted(struct sock *sk)
{
    __u64 id = bpf_get_current_pid_tgid();
    __u16 family = BPF_CORE_READ(sk, __sk_common.skc_family);
    __u16 lport, rport;

    if (target_tgid && (id >> 32) != (__u64)target_tgid)
        return false;
    if (family != 2 && family != 10) /* AF_INET, AF_INET6 */
        return false;
    if (!sock_filter_ports)
        return true;
    /* the local port (a server's) or the remote one (a call to a backend on that port) */
    lport = BPF_CORE_READ(sk, __sk_common.skc_num);
    rport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
    for (int i = 0; i < SPANTRACE_MAX_PORTS; i++)
        if (sock_ports[i] && (sock_ports[i] == lport || sock_ports[i] == rport))
            return true;
    return false;
}

static __always_inline __u32 sock_seq(struct sock *sk, bool send)
{
    struct tcp_sock *tp = (struct tcp_sock *)sk;

    return send ? BPF_CORE_READ(tp, write_seq) : BPF_CORE_READ(tp, copied_seq);
}

static __always_inline int sock_enter(struct sock *sk, bool send)
{
    __u32 tid = (__u32)bpf_get_current_pid_tgid();
    struct sock_entry e = {.sk = sk};

    if (!sk || !sock_wanted(sk))
        return 0;
    e.seq = sock_seq(sk, send);
    bpf_map_update_elem(&sock_inflight, &tid, &e, BPF_ANY);
    return 0;
}

/* Room for one socket event, or NULL with the loss counted (drops[1]). */
static __always_inline struct sock_event *sock_reserve(void)
{
    struct sock_event *e = bpf_ringbuf_reserve(&sock_events, sizeof(*e), 0);
    __u32 k = 1;

    if (!e) {
        __u64 *d = bpf_map_lookup_elem(&drops, &k);
        if (d)
            __sync_fetch_and_add(d, 1);
    }
    return e;
}

/* One event: the call on sk copied [before, after). */
static __always_inline int sock_emit(struct sock *sk, bool send, __u32 before, __u32 after)
{
    __u64 id = bpf_get_current_pid_tgid();
    struct sock_event *e;

    if (after == before)
        return 0; /* nothing copied (an error, EAGAIN, MSG_PEEK) */
    if (!(e = sock_reserve()))
        return 0;
    e->ts_ns = bpf_ktime_get_ns();
    e->enter_ns = 0;
    e->pid = id >> 32;
    e->tid = (__u32)id;
    e->cpu = bpf_get_smp_processor_id();
    e->seq = before;
    e->len = after - before;
    e->send = send;
    e->family = BPF_CORE_READ(sk, __sk_common.skc_family);
    e->lport = BPF_CORE_READ(sk, __sk_common.skc_num);
    e->rport = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
    __builtin_memset(e->laddr, 0, sizeof(e->laddr));
    __builtin_memset(e->raddr, 0, sizeof(e->raddr));
    if (e->family == 2) {
        BPF_CORE_READ_INTO((__u32 *)e->laddr, sk, __sk_common.skc_rcv_saddr);
        BPF_CORE_READ_INTO((__u32 *)e->raddr, sk, __sk_common.skc_daddr);
    } else {
        BPF_CORE_READ_INTO(&e->laddr, sk, __sk_common.skc_v6_rcv_saddr.in6_u.u6_addr8);
        BPF_CORE_READ_INTO(&e->raddr, sk, __sk_common.skc_v6_daddr.in6_u.u6_addr8);
    }
    bpf_get_current_comm(e->comm, sizeof(e->comm));
    /* no wakeup per event: at tens of thousands of calls a second, waking the reader
     * for each costs the service more than the probe; the loader polls on a timer */
    bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
    {
        __u32 tid = (__u32)id;
        __u8 one = 1;
        bpf_map_update_elem(&sock_threads, &tid, &one, BPF_ANY);
    }
    return 0;
}

/* ---- readiness waits of the threads above: an event loop's iterations ---------------- */

static __always_inline int wait_enter(void)
{
    __u32 tid = (__u32)bpf_get_current_pid_tgid();
    __u64 now;

    if (!bpf_map_lookup_elem(&sock_threads, &tid))
        return 0;
    now = bpf_ktime_get_ns();
    bpf_map_update_elem(&sock_wait_enter, &tid, &now, BPF_ANY);
    return 0;
}

static __always_inline int wait_exit(long ret)
{
    __u64 id = bpf_get_current_pid_tgid();
    __u32 tid = (__u32)id;
    __u64 *since = bpf_map_lookup_elem(&sock_wait_enter, &tid), enter;
    struct sock_event *e;

    if (!since)
        return 0;
    enter = *since;
    bpf_map_delete_elem(&sock_wait_enter, &tid);
    if (ret < 0) /* EINTR and the like: no iteration began */
        return 0;
    if (!(e = sock_reserve()))
        return 0;
    __builtin_memset(e, 0, sizeof(*e));
    e->ts_ns = bpf_ktime_get_ns();
    e->enter_ns = enter;
    e->pid = id >> 32;
    e->tid = tid;
    e->cpu = bpf_get_smp_processor_id();
    e->len = (__u32)ret;
    e->send = SPANTRACE_SOCK_WAIT;
    bpf_get_current_comm(e->comm, sizeof(e->comm));
    bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
    return 0;
}

/* ---- Go: which goroutine each thread runs ------------------------------------------ */

/* runtime.execute(gp *g, inheritTime bool) begins running gp on this thread (Go's register
 * ABI, 1.17 and later: the first argument in the return-value register, RAX / X0); the g's
 * address names the goroutine while it lives. */
SEC("uprobe")
int BPF_KPROBE(go_execute)
{
    __u64 id = bpf_get_current_pid_tgid();
    struct sock_event *e;

    if (target_tgid && (id >> 32) != (__u64)target_tgid)
        return 0;
    if (!(e = sock_reserve()))
        return 0;
    __builtin_memset(e, 0, sizeof(*e));
    e->ts_ns = bpf_ktime_get_ns();
    e->enter_ns = (__u64)PT_REGS_RC(ctx);
    e->pid = id >> 32;
    e->tid = (__u32)id;
    e->cpu = bpf_get_smp_processor_id();
    e->send = SPANTRACE_SOCK_GO;
    bpf_get_current_comm(e->comm, sizeof(e->comm));
    bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
    return 0;
}

/* Go's register ABI: the second integer argument (RBX / X1). */
#if defined(__TARGET_ARCH_arm64)
#define GO_ARG2(ctx) (((const struct user_pt_regs *)(ctx))->regs[1])
#else
#define GO_ARG2(ctx) ((ctx)->bx)
#endif

/* The goroutine each thread is starting one for: runtime.newproc1(fn, callergp, callerpc)
 * runs on the thread's system stack, called by runtime.newproc's closure; callergp is the
 * goroutine whose go statement it is. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 16384);
    __type(key, __u32);
    __type(value, __u64);
} go_spawning SEC(".maps");

SEC("uprobe")
int BPF_KPROBE(go_newproc1)
{
    __u64 id = bpf_get_current_pid_tgid(), parent = GO_ARG2(ctx);
    __u32 tid = (__u32)id;

    if (target_tgid && (id >> 32) != (__u64)target_tgid)
        return 0;
    bpf_map_update_elem(&go_spawning, &tid, &parent, BPF_ANY);
    return 0;
}

/* Right after newproc1 returned to its caller (the loader finds the instruction): the new
 * goroutine's g in the result register, its parent from go_newproc1. */
SEC("uprobe")
int BPF_KPROBE(go_spawned)
{
    __u64 id = bpf_get_current_pid_tgid(), *parent;
    __u32 tid = (__u32)id;
    struct sock_event *e;

    if (target_tgid && (id >> 32) != (__u64)target_tgid)
        return 0;
    if (!(parent = bpf_map_lookup_elem(&go_spawning, &tid)))
        return 0;
    if ((e = sock_reserve())) {
        __builtin_memset(e, 0, sizeof(*e));
        e->ts_ns = bpf_ktime_get_ns();
        e->enter_ns = (__u64)PT_REGS_RC(ctx);
        e->parent_g = *parent;
        e->pid = id >> 32;
        e->tid = tid;
        e->cpu = bpf_get_smp_processor_id();
        e->send = SPANTRACE_SOCK_SPAWN;
        bpf_get_current_comm(e->comm, sizeof(e->comm));
        bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
    }
    bpf_map_delete_elem(&go_spawning, &tid);
    return 0;
}

#define WAIT_PROGS(name)                                                                           \
    SEC("tracepoint/syscalls/sys_enter_" #name)                                                    \
    int wait_enter_##name(void *ctx)                                                               \
    {                                                                                              \
        return wait_enter();                                                                       \
    }                                                                                              \
    SEC("tracepoint/syscalls/sys_exit_" #name)                                                     \
    int wait_exit_##name(struct trace_event_raw_sys_exit *ctx)                                     \
    {                                                                                              \
        return wait_exit(ctx->ret);                                                                \
    }

WAIT_PROGS(epoll_wait)
WAIT_PROGS(epoll_pwait)
WAIT_PROGS(epoll_pwait2)
WAIT_PROGS(poll)
WAIT_PROGS(ppoll)
WAIT_PROGS(select)
WAIT_PROGS(pselect6)

static __always_inline int sock_exit(bool send)
{
    __u32 tid = (__u32)bpf_get_current_pid_tgid();
    struct sock_entry *in = bpf_map_lookup_elem(&sock_inflight, &tid);
    struct sock *sk;
    __u32 before;

    if (!in)
        return 0;
    sk = in->sk;
    before = in->seq;
    bpf_map_delete_elem(&sock_inflight, &tid);
    return sock_emit(sk, send, before, sock_seq(sk, send));
}

/* After a send or receive system call (tracepoints sock:sock_send_length and
 * sock:sock_recv_length, kernel 6.3 and later): ret bytes were copied, and the
 * sequence number has advanced by them. */
static __always_inline int sock_after(struct sock *sk, int ret, int flags, bool send)
{
    __u32 after;

    if (ret <= 0 || (!send && (flags & 2))) /* MSG_PEEK copies without consuming */
        return 0;
    if (!sk || BPF_CORE_READ(sk, sk_protocol) != 6 || !sock_wanted(sk)) /* IPPROTO_TCP */
        return 0;
    after = sock_seq(sk, send);
    return sock_emit(sk, send, after - (__u32)ret, after);
}

/* fentry/fexit: only the first argument is read, so the programs do not depend on
 * the later arguments, which changed across kernel versions (tcp_recvmsg's nonblock) */
SEC("fentry/tcp_sendmsg")
int BPF_PROG(fentry_tcp_sendmsg, struct sock *sk)
{
    return sock_enter(sk, true);
}

SEC("fexit/tcp_sendmsg")
int BPF_PROG(fexit_tcp_sendmsg, struct sock *sk)
{
    return sock_exit(true);
}

SEC("fentry/tcp_recvmsg")
int BPF_PROG(fentry_tcp_recvmsg, struct sock *sk)
{
    return sock_enter(sk, false);
}

SEC("fexit/tcp_recvmsg")
int BPF_PROG(fexit_tcp_recvmsg, struct sock *sk)
{
    return sock_exit(false);
}

SEC("fentry/tcp_splice_read")
int BPF_PROG(fentry_tcp_splice_read, struct socket *sock)
{
    return sock_enter(BPF_CORE_READ(sock, sk), false);
}

SEC("fexit/tcp_splice_read")
int BPF_PROG(fexit_tcp_splice_read, struct socket *sock)
{
    return sock_exit(false);
}

/* Where the kernel has no BPF trampoline (fentry needs one): the socket tracepoints.
 * They see send/recv system calls and splice/sendfile to a socket, not
 * tcp_splice_read. */
SEC("raw_tp/sock_send_length")
int BPF_PROG(tp_sock_send_length, struct sock *sk, int ret, int flags)
{
    return sock_after(sk, ret, flags, true);
}

SEC("raw_tp/sock_recv_length")
int BPF_PROG(tp_sock_recv_length, struct sock *sk, int ret, int flags)
{
    return sock_after(sk, ret, flags, false);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* ---- --offcpu -------------------------------------------------------------------- */

/* sched_switch out of a thread of the target process: its stacks (the kernel's down to
 * the scheduler, and the user's) and state, kept per thread until it is switched in
 * again; then one offcpu_event of at least offcpu_min_ns.  sched_waking, which runs in
 * the waker's context, names the waker of a thread that is off CPU. */
const volatile __u64 offcpu_min_ns = 0;

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 1 << 24);
} offcpu_events SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 8192);
    __type(key, __u32);
    __type(value, struct offcpu_event);
} offcpu_open SEC(".maps");

/* a zeroed value to insert from: too large for the BPF stack */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct offcpu_event);
} offcpu_zero SEC(".maps");

struct task_struct___pre514 {
    long state;
} __attribute__((preserve_access_index));

static __always_inline __u32 task_state(struct task_struct *t)
{
    if (bpf_core_field_exists(t->__state))
        return BPF_CORE_READ(t, __state);
    return (__u32)BPF_CORE_READ((struct task_struct___pre514 *)t, state);
}

static __always_inline void offcpu_drop(__u32 k)
{
    __u64 *d = bpf_map_lookup_elem(&drops, &k);
    if (d)
        __sync_fetch_and_add(d, 1);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
    __u64 now = bpf_ktime_get_ns();
    __u32 ptid = BPF_CORE_READ(prev, pid), ntid = BPF_CORE_READ(next, pid), zero = 0;
    struct offcpu_event *o, *z;

    if (BPF_CORE_READ(prev, tgid) == target_tgid && ptid != 0 &&
        (z = bpf_map_lookup_elem(&offcpu_zero, &zero)) != NULL) {
        if (bpf_map_update_elem(&offcpu_open, &ptid, z, BPF_ANY) == 0 &&
            (o = bpf_map_lookup_elem(&offcpu_open, &ptid)) != NULL) {
            o->start_ns = now;
            o->pid = target_tgid;
            o->tid = ptid;
            o->cpu = bpf_get_smp_processor_id();
            o->state = task_state(prev);
            o->preempt = preempt;
            o->waker = 0;
            /* prev is still current: these are its stacks */
            /* bytes, or < 0: an error (the loader divides; BPF has no signed division) */
            o->nk = bpf_get_stack(ctx, o->kstack, sizeof(o->kstack), 0);
            o->nu = bpf_get_stack(ctx, o->ustack, sizeof(o->ustack), BPF_F_USER_STACK);
            BPF_CORE_READ_STR_INTO(&o->comm, prev, comm);
        } else
            offcpu_drop(3);
    }
    if ((o = bpf_map_lookup_elem(&offcpu_open, &ntid)) != NULL) {
        if (now - o->start_ns >= offcpu_min_ns) {
            struct offcpu_event *e = bpf_ringbuf_reserve(&offcpu_events, sizeof(*e), 0);
            if (e) {
                bpf_probe_read_kernel(e, sizeof(*e), o);
                e->end_ns = now;
                bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
            } else
                offcpu_drop(2);
        }
        bpf_map_delete_elem(&offcpu_open, &ntid);
    }
    return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(offcpu_waking, struct task_struct *p)
{
    __u32 tid = BPF_CORE_READ(p, pid);
    struct offcpu_event *o = bpf_map_lookup_elem(&offcpu_open, &tid);

    if (o && o->waker == 0)
        o->waker = (__u32)bpf_get_current_pid_tgid();
    return 0;
}
