/* classify.h - what kind of inflection a change point is, with its levels. */
#ifndef INFLECT_CLASSIFY_H
#define INFLECT_CLASSIFY_H

#include <stddef.h>

enum cp_kind { CP_STEP, CP_SPIKE, CP_RAMP };

struct cp_point {
    size_t index;   /* index in the series (first observation of the new regime) */
    double before;  /* level of the segment before (its mean) */
    double after;   /* level of the segment after */
    double change;  /* (after - before) / |before|; NAN when before is 0 */
    enum cp_kind kind;
    const char *role; /* "onset", "recovery" (spike), "end" (ramp), or "level" */
};

/* "step", "spike", "ramp". */
const char *cp_kind_name(enum cp_kind k);

/* Classify the m change points cp[] of x[0..n) into pts[0..m):
 *   spike  the new regime is short (at most max(3, n/20) observations) and the
 *          one after it returns to within half the jump of the old level; both
 *          the onset and the recovery point are marked spike;
 *   ramp   the level moves as a line rather than a jump: the segment after (or,
 *          for the end of a ramp, before) is sloped (R^2 >= 0.5 over >= 4 points)
 *          and its own rise is at least the jump at the change point, or the
 *          change point is one tread of a staircase (neighbouring change points
 *          in the same direction, segments between them at most 8 long);
 *   step   everything else.
 * Returns 0, or -1 when out of memory. */
int classify_points(const double *x, size_t n, const size_t *cp, size_t m,
                    struct cp_point *pts);

#endif
