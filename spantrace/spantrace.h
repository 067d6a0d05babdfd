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
 * number, on the socket's 4-tuple.  Addresses in network order; IPv4 in addr[0..4). */
struct sock_event {
    unsigned long long ts_ns; /* at the call's return: CLOCK_MONOTONIC */
    unsigned int pid, tid, cpu;
    unsigned int seq;            /* first byte copied (write_seq / copied_seq before the call) */
    unsigned int len;            /* bytes copied (the sequence number's advance) */
    unsigned short family;       /* AF_INET, AF_INET6 */
    unsigned short lport, rport; /* host order */
    unsigned char send;          /* 1 send, 0 receive */
    unsigned char laddr[16], raddr[16];
    char comm[SPANTRACE_COMM_LEN];
};

#endif
