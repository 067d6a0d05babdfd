/* sf_perfdata.h - perf.data read directly (the kernel's include/uapi/linux/perf_event.h
 * and perf's Documentation/perf.data-file-format.txt), in file mode and pipe mode
 * (`perf record -o -`), in either byte order.
 *
 *   file  = header(104) | attrs: (perf_event_attr | ids section)... | data: record...
 *           | feature sections (one per bit of the header's bitmap, in bit order)
 *   pipe  = header(16) | record... (the attrs and features travel as records: HEADER_ATTR,
 *           HEADER_EVENT_TYPE, HEADER_FEATURE, ...)
 *   record = u32 type | u16 misc | u16 size | body (size bytes in all)
 *
 * sf_pd_next hands the records on in file order (perf orders samples by time between
 * FINISHED_ROUND records; that is the caller's business) with the fields of the ones a
 * profile needs decoded: SAMPLE by its event's sample_type (ip, pid/tid, time, addr, id,
 * cpu, period, read values skipped, callchain, raw data, branch stack skipped, user
 * registers and stack, the rest after them ignored), MMAP and MMAP2 (build id or device and
 * inode), COMM (exec), FORK, EXIT, LOST, and for every other record its type and the
 * sample_id trailer when the events have sample_id_all.  The features read are those
 * that name the recording: hostname, OS release, perf version, arch, nrcpus, cmdline,
 * and the event descriptions (names and ids); the tracing data (the tracepoints'
 * format files) is kept whole for the caller; the files' build ids.
 *
 * Bounds: every field is checked against its record and every record against the file
 * (sf_rd's rules); a damaged record or a truncated file stops with SF_E_MALFORMED /
 * SF_E_TRUNC naming the byte offset, after the records before it were handed on.  At most
 * SF_PD_MAX_ATTRS events; strings from the file are cut to their fields' sizes.
 */
#ifndef SF_PERFDATA_H
#define SF_PERFDATA_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sf_err.h"

#define SF_PD_MAX_ATTRS 256

/* record types (perf_event.h, and perf's own from 64 on) */
enum {
    SF_PD_MMAP = 1,
    SF_PD_LOST = 2,
    SF_PD_COMM = 3,
    SF_PD_EXIT = 4,
    SF_PD_FORK = 7,
    SF_PD_SAMPLE = 9,
    SF_PD_MMAP2 = 10,
    SF_PD_HEADER_ATTR = 64,
    SF_PD_HEADER_TRACING_DATA = 66,
    SF_PD_HEADER_BUILD_ID = 67,
    SF_PD_FINISHED_ROUND = 68,
    SF_PD_HEADER_FEATURE = 80,
};

/* sample_type bits */
#define SF_PD_S_IP           (1u << 0)
#define SF_PD_S_TID          (1u << 1)
#define SF_PD_S_TIME         (1u << 2)
#define SF_PD_S_ADDR         (1u << 3)
#define SF_PD_S_READ         (1u << 4)
#define SF_PD_S_CALLCHAIN    (1u << 5)
#define SF_PD_S_ID           (1u << 6)
#define SF_PD_S_CPU          (1u << 7)
#define SF_PD_S_PERIOD       (1u << 8)
#define SF_PD_S_STREAM_ID    (1u << 9)
#define SF_PD_S_RAW          (1u << 10)
#define SF_PD_S_BRANCH_STACK (1u << 11)
#define SF_PD_S_REGS_USER    (1u << 12)
#define SF_PD_S_STACK_USER   (1u << 13)
#define SF_PD_S_IDENTIFIER   (1u << 16)

/* callchain context markers (PERF_CONTEXT_*): entries at or above this are markers */
#define SF_PD_CONTEXT_MAX    ((uint64_t)-4095)
#define SF_PD_CONTEXT_HV     ((uint64_t)-32)
#define SF_PD_CONTEXT_KERNEL ((uint64_t)-128)
#define SF_PD_CONTEXT_USER   ((uint64_t)-512)

/* One event (perf_event_attr) with its name and ids. */
struct sf_pd_attr {
    uint32_t type;
    uint64_t config, sample_type, read_format, flags, branch_sample_type;
    uint64_t sample_regs_user;
    uint32_t sample_stack_user;
    int sample_id_all, freq;
    int use_clockid; /* its times are of clock clockid (perf record -k) */
    int32_t clockid;
    uint64_t sample_period; /* or sample_freq when freq */
    char name[128];         /* from the event descriptions; "" when none */
    uint64_t *ids;
    size_t nids;
};

/* The build id perf recorded for a file (feature BUILD_ID, pipe mode's HEADER_BUILD_ID). */
struct sf_pd_buildid {
    uint8_t id[20];
    uint8_t size; /* bytes of id (20 for SHA-1 ids) */
    int32_t pid;  /* -1 for the kernel's and the host's files */
    char *filename;
};

#define SF_PD_MAX_BUILDIDS 65536

/* What the recording says of itself. */
struct sf_pd_info {
    int pipe, swapped; /* pipe mode; the file is of the other byte order */
    char hostname[128], os_release[128], version[64], arch[32], cmdline[1024];
    uint32_t nrcpus_online, nrcpus_avail;
    struct sf_pd_attr attr[SF_PD_MAX_ATTRS];
    size_t nattr;
    uint64_t data_offset, data_size; /* file mode */
    /* the tracepoints' formats (feature TRACING_DATA, or pipe mode's HEADER_TRACING_DATA
     * record): perf's trace-event-read layout, tracing_size bytes; NULL when none */
    uint8_t *tracing;
    size_t tracing_size;
    /* the files' build ids, at most SF_PD_MAX_BUILDIDS */
    struct sf_pd_buildid *buildids;
    size_t nbuildids;
};

struct sf_pd_sample {
    const struct sf_pd_attr *attr; /* the event it belongs to */
    uint64_t id, ip, time, addr, period, stream_id;
    uint32_t pid, tid, cpu;
    uint64_t nr;          /* callchain entries (markers included) */
    const uint8_t *chain; /* nr u64 in the file's byte order: sf_pd_chain_ip */
    uint32_t raw_size;
    const uint8_t *raw; /* tracepoint data, raw_size bytes */
    /* --call-graph dwarf: the user registers (regs_abi 0: none; sf_pd_user_reg) and the
     * bytes of the user stack from the stack pointer up, stack_size of them */
    uint64_t regs_abi;
    uint32_t nregs;
    const uint8_t *regs;
    const uint8_t *stack;
    size_t stack_size;
};

struct sf_pd_record {
    uint32_t type;
    uint16_t misc;
    uint16_t size;
    uint64_t off; /* byte offset of the record in the input */
    /* the sample_id trailer of a non-sample record (sample_id_all), or the sample's own */
    int has_id;
    uint32_t pid, tid, cpu;
    uint64_t time, id;
    union {
        struct sf_pd_sample sample;
        struct {
            uint32_t pid, tid;
            uint64_t start, len, pgoff;
            uint32_t prot, flags; /* MMAP2 */
            uint8_t build_id[20];
            uint8_t build_id_size; /* MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID */
            char filename[4096];
        } mmap;
        struct {
            uint32_t pid, tid;
            int exec;
            char comm[64];
        } comm;
        struct {
            uint32_t pid, ppid, tid, ptid;
            uint64_t time;
        } task; /* FORK, EXIT */
        struct {
            uint64_t id, lost;
        } lost;
    } u;
};

struct sf_pd;

/* Open path ("-" for stdin, pipe mode only there), read the header, the attrs and the
 * features.  Returns 0 or SF_E_* with err (offset where it failed). */
int sf_pd_open(struct sf_pd **pd, const char *path, struct sf_err *err);
/* The same on an open stream (seekable for file mode), which stays the caller's. */
int sf_pd_open_stream(struct sf_pd **pd, FILE *f, struct sf_err *err);
const struct sf_pd_info *sf_pd_info(const struct sf_pd *pd);
/* The next record into r: 1, 0 at the end, or SF_E_* with err.  Pointers in r (callchain,
 * raw data) live until the next call, or until sf_pd_close where sf_pd_stable says so. */
int sf_pd_next(struct sf_pd *pd, struct sf_pd_record *r, struct sf_err *err);
/* Whether records are read where they lie in a mapped file (a regular file in file mode),
 * so that their pointers stay valid until sf_pd_close. */
int sf_pd_stable(const struct sf_pd *pd);
void sf_pd_close(struct sf_pd *pd);

/* User register reg of s (its bit in the event's sample_regs_user: perf's
 * PERF_REG_X86_* numbering on x86-64) into *v, in host byte order: 0, or -1 when the
 * sample did not record it. */
int sf_pd_user_reg(const struct sf_pd *pd, const struct sf_pd_sample *s, int reg, uint64_t *v);

/* Callchain entry i of s, in host byte order. */
uint64_t sf_pd_chain_ip(const struct sf_pd *pd, const struct sf_pd_sample *s, uint64_t i);

#endif
