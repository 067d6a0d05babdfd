/* spantrace.h - the one struct the BPF half and the user half share. */
#ifndef SPANTRACE_H
#define SPANTRACE_H

#define SPANTRACE_COMM_LEN 16

enum spantrace_kind {
    SPANTRACE_BEGIN = 0,
    SPANTRACE_END = 1,
};

/* One span marker, as the BPF program sees a probe fire. */
struct span_event {
    unsigned long long ts_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
    unsigned long long span_id;
    unsigned long long trace_hi; /* 0 when no trace id argument is configured */
    unsigned long long trace_lo;
    unsigned int pid; /* tgid */
    unsigned int tid;
    unsigned int cpu;
    int decision;      /* sampling decision, -1 when not configured */
    unsigned int kind; /* enum spantrace_kind */
    char comm[SPANTRACE_COMM_LEN];
};

#define SPANTRACE_MAX_PORTS 8

/* One TCP send or receive call (--sockets): the bytes the call copied, by sequence
 * number, on the socket's 4-tuple.  Addresses in network order; IPv4 in addr[0..4).
 * Or (send == SPANTRACE_SOCK_WAIT) one readiness wait of a thread that made such calls:
 * an epoll_wait, epoll_pwait(2), poll, ppoll, select or pselect6 from enter_ns to ts_ns,
 * len the descriptors it found ready (0: it timed out; an error: not sent). */
#define SPANTRACE_SOCK_WAIT 2
/* Or (send == SPANTRACE_SOCK_GO) a Go thread (an M) began running a goroutine:
 * runtime.execute(gp, ...), enter_ns the g's address. */
#define SPANTRACE_SOCK_GO 3
/* Or (send == SPANTRACE_SOCK_SPAWN) a goroutine started one: runtime.newproc1 returned the
 * new g (enter_ns) for the go statement of goroutine parent_g. */
#define SPANTRACE_SOCK_SPAWN 4
struct sock_event {
    unsigned long long ts_ns;    /* at the call's return: CLOCK_MONOTONIC */
    unsigned long long enter_ns; /* a wait: when it was called */
    unsigned int pid, tid, cpu;
    unsigned int seq;            /* first byte copied (write_seq / copied_seq before the call) */
    unsigned int len;            /* bytes copied (the sequence number's advance) */
    unsigned short family;       /* AF_INET, AF_INET6 */
    unsigned short lport, rport; /* host order */
    unsigned char send;          /* 1 send, 0 receive, SPANTRACE_SOCK_WAIT */
    unsigned char laddr[16], raddr[16];
    char comm[SPANTRACE_COMM_LEN];
    unsigned long long parent_g; /* a spawn: the parent goroutine's g */
};

#define SPANTRACE_KSTACK 32 /* kernel frames kept of a thread that leaves its CPU */
#define SPANTRACE_USTACK 64 /* user frames */

/* One off-CPU interval (--offcpu): thread tid left its CPU at start_ns in state
 * `state` (prev_state; preempt: it was preempted, runnable) with these stacks (the
 * leaf first, as the kernel gives them; 0-terminated when shorter), and ran again at
 * end_ns; waker: the thread whose sched_waking woke it, 0 when none was seen. */
struct offcpu_event {
    unsigned long long start_ns, end_ns; /* CLOCK_MONOTONIC */
    unsigned int pid, tid, cpu, waker;
    unsigned int state, preempt;
    int nk, nu; /* bytes of kstack, ustack bpf_get_stack filled (< 0: none, an error) */
    char comm[SPANTRACE_COMM_LEN];
    unsigned long long kstack[SPANTRACE_KSTACK];
    unsigned long long ustack[SPANTRACE_USTACK];
};

#endif
