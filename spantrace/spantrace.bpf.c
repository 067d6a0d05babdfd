// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* spantrace.bpf.c - kernel half of spantrace: on a service's span begin/end
 * probes (USDT or uprobe), read the span id (and optionally the sampling
 * decision and trace id) from the probe's arguments and emit a span_event into a
 * ring buffer, and optionally a bpf_printk line into the kernel trace buffer.
 *
 * Options are const volatile values the loader sets before load (libbpf-tools
 * style); argument indices are 0-based, -1 = not present.
 */
/* vmlinux.h first: the libbpf headers below need the kernel types it defines */
// clang-format off
#include "vmlinux.h"
// clang-format on

#include "spantrace.h"

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
    __uint(max_entries, 1);
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

char LICENSE[] SEC("license") = "Dual BSD/GPL";
