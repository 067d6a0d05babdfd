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

#endif
