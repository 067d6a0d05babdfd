/* tracedat.c - trace-cmd's trace.dat as the tracefs text the rest of tracefs2spans
 * reads (issue #32 item 5): the file opened with libtracecmd, its records in time order
 * across CPUs (tracecmd_iterate_events), each printed by libtraceevent from the
 * recording's own formats, without plugins (the kernel's own print formats, as the
 * `trace` file shows them):
 *
 *   # trace_clock: local global [mono] ...        the recording's trace_clock
 *   COMM-PID [CPU] SEC.NSEC: EVENT: INFO          an event ("<...>" for an unknown comm)
 *   COMM-PID [CPU] SEC.NSEC: INFO                 ftrace's own events (print: a
 *                                                 trace_marker write, bprint, bputs),
 *                                                 which the kernel prints without a name
 *   CPU:N [LOST M EVENTS]                         before a record the buffer lost some
 *
 * The timestamps keep their nanoseconds.  A trace.dat is captured data, and libtracecmd
 * and libtraceevent are not hardened against hostile files (libtraceevent dies on some
 * malformed formats, see perf-fold/tracedata.c): the conversion runs in a child process
 * writing to the temporary file; a child that dies leaves the lines it wrote, and the
 * death is said with the number of records read.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <trace-cmd/trace-cmd.h>
#include <unistd.h>

#include "t2s.h"

/* Exported by libtracecmd (trace-input.c) but declared only in its private header: the
 * trace_clock option of the file as recorded ("local global [mono] ..."), or NULL. */
const char *tracecmd_get_trace_clock(struct tracecmd_input *handle);
/* Likewise: the number of CPUs whose data the buffer holds. */
int tracecmd_cpus(struct tracecmd_input *handle);

static const unsigned char td_magic[10] = {0x17, 0x08, 'D', 't', 'r', 'a', 'c', 'i', 'n', 'g'};

int tracedat_is(int fd)
{
    unsigned char m[sizeof(td_magic)];

    return pread(fd, m, sizeof(m), 0) == (ssize_t)sizeof(m) && memcmp(m, td_magic, sizeof(m)) == 0;
}

struct td_out {
    FILE *f;
    struct tep_handle *tep;
    struct trace_seq seq, line;
    unsigned long long records;
};

static int td_record(struct tracecmd_input *h, struct tep_record *rec, int cpu, void *data)
{
    struct td_out *o = data;
    struct tep_event *e = tep_find_event_by_record(o->tep, rec);
    int pid = tep_data_pid(o->tep, rec);
    const char *comm = tep_data_comm_from_pid(o->tep, pid);

    (void)h;
    cpu = rec->cpu; /* across several buffers the callback's cpu is an index of all of them */
    if (rec->missed_events > 0)
        fprintf(o->f, "CPU:%d [LOST %lld EVENTS]\n", cpu, rec->missed_events);
    else if (rec->missed_events < 0)
        fprintf(o->f, "CPU:%d [LOST EVENTS]\n", cpu);
    if (e == NULL)
        return 0; /* an event of no format: nothing to print, as trace-cmd report */
    trace_seq_reset(&o->seq);
    tep_print_event(o->tep, &o->seq, rec, "%s", TEP_PRINT_INFO);
    trace_seq_terminate(&o->seq);
    trace_seq_reset(&o->line);
    trace_seq_printf(&o->line, "%16s-%-7d [%03d] %llu.%09llu: ", comm ? comm : "<...>", pid, cpu,
                     rec->ts / 1000000000ull, rec->ts % 1000000000ull);
    if (e->system == NULL || strcmp(e->system, "ftrace") != 0)
        trace_seq_printf(&o->line, "%s: ", e->name ? e->name : "");
    trace_seq_puts(&o->line, o->seq.buffer);
    trace_seq_terminate(&o->line);
    /* a line of the text stays one line whatever the comm, format or record holds */
    for (unsigned k = 0; k < o->line.len; k++)
        if (o->line.buffer[k] == '\n' || o->line.buffer[k] == '\r')
            o->line.buffer[k] = ' ';
    fwrite(o->line.buffer, 1, o->line.len, o->f);
    fputc('\n', o->f);
    if ((++o->records & 0xfff) == 0)
        fflush(o->f); /* what the child wrote survives its death */
    return 0;
}

#define TD_BUFFERS_MAX 64

/* The child: path converted to out.  Exit 0, or 3 when libtracecmd cannot open it. */
static void td_child(const char *path, int out)
{
    struct tracecmd_input *h[TD_BUFFERS_MAX];
    struct td_out o = {0};
    const char *clk = NULL;
    int nb = 1;

    tracecmd_set_loglevel(TEP_LOG_NONE);
    tep_set_loglevel(TEP_LOG_NONE);
    h[0] = tracecmd_open(path, TRACECMD_FL_LOAD_NO_PLUGINS | TRACECMD_FL_LOAD_NO_SYSTEM_PLUGINS);
    if (h[0] == NULL || (o.f = fdopen(out, "w")) == NULL)
        _exit(3);
    o.tep = tracecmd_get_tep(h[0]); /* the instances share the top buffer's formats */
    trace_seq_init(&o.seq);
    trace_seq_init(&o.line);
    /* the top buffer and every instance (trace-cmd extract -B NAME), merged in time; the
     * clock said is the first that holds data's (trace-cmd 3.1 records an instance's
     * as the top buffer's) */
    for (int i = 0; i < tracecmd_buffer_instances(h[0]) && nb < TD_BUFFERS_MAX; i++)
        if ((h[nb] = tracecmd_buffer_instance_handle(h[0], i)) != NULL)
            nb++;
    for (int i = 0; i < nb && clk == NULL; i++)
        if (tracecmd_cpus(h[i]) > 0)
            clk = tracecmd_get_trace_clock(h[i]);
    if (clk && clk[0])
        fprintf(o.f, "# trace_clock: %s\n", clk);
    tracecmd_iterate_events_multi(h, nb, td_record, &o);
    fflush(o.f);
    _exit(ferror(o.f) ? 4 : 0);
}

int tracedat_text(const char *path, int out, struct sf_err *err)
{
    pid_t pid;
    int st;

    fflush(NULL);
    if ((pid = fork()) < 0)
        return sf_err_set(err, SF_E_IO, UINT64_MAX, "trace.dat: fork: %s", strerror(errno));
    if (pid == 0)
        td_child(path, out);
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return sf_err_set(err, SF_E_IO, UINT64_MAX, "trace.dat: wait: %s", strerror(errno));
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        return 0;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
        return sf_err_set(err, SF_E_MALFORMED, 0,
                          "trace.dat: libtracecmd cannot open it (a damaged or cut header?)");
    if (WIFEXITED(st))
        return sf_err_set(err, SF_E_IO, UINT64_MAX, "trace.dat: writing its text failed");
    return sf_err_set(err, SF_E_MALFORMED, UINT64_MAX,
                      "trace.dat: libtracecmd died (signal %d) reading it; the records before "
                      "are kept",
                      WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}
