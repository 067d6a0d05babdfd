/* sf_progress.c - rate-limited progress line (see sf_progress.h). */
#include "sf_progress.h"

#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void sf_progress_start(struct sf_progress *p, FILE *out, const char *label, const char *unit,
                       uint64_t total)
{
    p->out = out;
    p->label = label;
    p->unit = unit;
    p->total = total;
    p->t0 = p->t_last = now_s();
    p->shown = 0;
}

void sf_progress_update(struct sf_progress *p, uint64_t done)
{
    double t, rate, el;
    int bytes;

    if (p->out == NULL)
        return;
    t = now_s();
    if (t - p->t_last < 0.25)
        return;
    p->t_last = t;
    el = t - p->t0;
    rate = el > 0 ? done / el : 0;
    bytes = strcmp(p->unit, "B") == 0;
    if (bytes)
        fprintf(p->out, "\r%s: %.1f MB", p->label, done / 1e6);
    else
        fprintf(p->out, "\r%s: %llu %s", p->label, (unsigned long long)done, p->unit);
    if (p->total && done <= p->total) {
        fprintf(p->out, " of %.1f%s (%.0f%%)", bytes ? p->total / 1e6 : (double)p->total,
                bytes ? " MB" : "", 100.0 * done / p->total);
        if (rate > 0)
            fprintf(p->out, ", %.0fs left", (p->total - done) / rate);
    }
    if (bytes)
        fprintf(p->out, ", %.1f MB/s   ", rate / 1e6);
    else
        fprintf(p->out, ", %.0f/s   ", rate);
    fflush(p->out);
    p->shown = 1;
}

void sf_progress_end(struct sf_progress *p)
{
    if (p->out && p->shown) {
        fprintf(p->out, "\r\033[K");
        fflush(p->out);
    }
    p->shown = 0;
}
