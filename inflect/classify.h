/* classify.h - what kind of inflection a change point is, with its levels. */
#ifndef INFLECT_CLASSIFY_H
#define INFLECT_CLASSIFY_H

#include <stddef.h>

enum cp_kind { CP_STEP, CP_SPIKE, CP_RAMP };

struct cp_point {
    size_t index;  /* index in the series (first observation of the new regime;
                      for a ramp, the first observation of the ramp) */
    size_t cp;     /* the detector's index (differs from index only for ramps) */
    size_t end;    /* ramp: first observation after the ramp; else == index */
    double before; /* level of the segment before (its mean) */
    double after;  /* level of the segment after */
    double change; /* (after - before) / |before|; NAN when before is 0 */
    enum cp_kind kind;
    const char *role;  /* "onset", "recovery" (spike), "end" (ramp), or "level" */
    double confidence; /* cp_assess: BIC-approximate probability the change is real */
    size_t lo, hi;     /* cp_assess: location interval (lo <= index <= hi) */
};

/* "step", "spike", "ramp". */
const char *cp_kind_name(enum cp_kind k);

/* Classify the m change points cp[] of x[0..n) into pts[0..m):
 *   spike  the new regime is short (at most max(3, n/20) observations) and the
 *          one after it returns to within half the jump of the old level; both
 *          the onset and the recovery point are marked spike; a first change
 *          point that ends an equally short first segment is a cold start: a
 *          spike whose onset precedes the data (role "recovery");
 *   ramp   the level moves as a line rather than a jump: between the neighbouring
 *          change points, a flat-line-flat fit (ramp from s to e, searched within
 *          60 observations of the change point) leaves at most 0.6 of the squared
 *          error of the plain step and ramps over at least 3 observations; or
 *          the segment after is itself sloped (R^2 >= 0.5 over >= 4 points, rise
 *          at least the jump); or the change point is one tread of a staircase
 *          (neighbours in the same direction, segments between at most 8 long).
 *          A ramp's index moves to where the ramp starts (end = where it ends);
 *   step   everything else.
 * Returns 0, or -1 when out of memory. */
int classify_points(const double *x, size_t n, const size_t *cp, size_t m, struct cp_point *pts);

#endif
