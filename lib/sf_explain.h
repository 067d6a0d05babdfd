/* sf_explain.h - why the kept share drifted: the request attribute that explains it.
 *
 * For one group (endpoint) and a drift finding, the traces before the change are
 * contrasted with those after it (sf_explain_drift says where it cuts), one
 * trial per trace (its first span in the group, as lib/sf_spans.h counts them),
 * over the attributes of lib/sf_attrs.h.  For an attribute value v (or the
 * attribute's absence) with n_i,v trials and r_i,v kept share on side i (0 before,
 * 1 after), s_i,v = n_i,v / N_i its share of the side's trials, r_i the side's kept
 * share and q_i the kept share of the rest (the trials without v):
 *
 *   explained(v) = s_1,v (b_v - r_1,v) / (r_0 - r_1),   b_v = r_0,v, or q_0 when v had
 *                                                     fewer than SF_EXPLAIN_MIN_N before
 *
 * the share of the change that would vanish had v's requests after it been kept as
 * they were before (a value new since: as the other requests were), clamped to
 * [0, 1].  A uniform change gives every value its share of traffic, so a value is
 * named only when its change stands out from the rest's and shows after it: z, the
 * smaller of the z scores of the contrast (b_v - r_1,v) - (q_0 - q_1) and of q_1 -
 * r_1,v (binomial variances of the shares), is >= SF_EXPLAIN_Z, and v has at least
 * SF_EXPLAIN_MIN_N trials on a side (a value kept apart before the change only, by
 * chance, is not named: measured on the uniform scenario recording).  A value whose
 * share of traffic jumped at the change (by SF_EXPLAIN_JUMP, significantly) needs only
 * z >= SF_EXPLAIN_Z_MIX: a uniform rate change does not move the mix, and the
 * requests left without it after such a jump are few (measured on a 15 s recording of
 * the baggage failure mode, where 23 such requests left z 2.2).  A value that was
 * all of the before side is the baseline (never named); one that took all of the
 * after side is contrasted with nothing, and named only when it is new since.  The
 * same change split, per value, into mix and rate shift (the symmetric, Shapley
 * form; the parts add up to s_1 r_1,v - s_0 r_0,v, and over all values to r_1 - r_0
 * exactly):
 *
 *   mix(v)  = (s_1 - s_0) (r_0,v + r_1,v) / 2     rate(v) = (r_1,v - r_0,v) (s_0 + s_1) / 2
 *
 * (a side where v has no trials takes the other side's rate).
 *
 * The attribute "decision" (who decided: "service", when the request deferred the
 * decision to it, or "upstream:FORMAT", a context's sampled flag) says who, not why:
 * ranked by explained(v) less SF_EXPLAIN_WHO, so that a value explaining about as
 * much is named first, and given as the verdict's first clause when it explains at
 * least SF_EXPLAIN_WHO_NAME.
 *
 * Bounds: SF_EXPLAIN_MAX_KEYS attributes and SF_EXPLAIN_MAX_VALUES values per
 * attribute (in order of first appearance; later ones pooled as "(other)" and
 * counted in values_over_cap).
 */
#ifndef SF_EXPLAIN_H
#define SF_EXPLAIN_H

#include <stddef.h>
#include <stdint.h>

#include "sf_attrs.h"
#include "sf_err.h"

#define SF_EXPLAIN_MAX_KEYS   64
#define SF_EXPLAIN_MAX_VALUES 64
#define SF_EXPLAIN_MAX_ITEMS  10
#define SF_EXPLAIN_Z          3.0  /* significance of a named value */
#define SF_EXPLAIN_MIN_N      10   /* trials of a named value on one side */
#define SF_EXPLAIN_Z_MIX      2.0  /* ... after a jump of its share of traffic */
#define SF_EXPLAIN_JUMP       0.2  /* a jump: the share moved by 20 points */
#define SF_EXPLAIN_NAME       0.5  /* a verdict names a value that explains this much */
#define SF_EXPLAIN_WHO        0.15 /* "decision" ranks after values within this much */
#define SF_EXPLAIN_WHO_NAME   0.8  /* the verdict says who decided when it explains this */

/* One side of a value: trials and kept trials. */
struct sf_explain_cell {
    uint64_t n, k;
};

struct sf_explain_item {
    char attribute[SF_ATTR_KEY_MAX];
    char value[SF_ATTR_VALUE_MAX]; /* "" with absent = 1 */
    int absent;
    struct sf_explain_cell before, after;
    double share_before, share_after; /* of the side's trials */
    double kept_before, kept_after;   /* NaN where the value has no trials */
    double explained;                 /* 0..1 */
    double mix, rate;                 /* Shapley parts of s_1 r_1 - s_0 r_0 */
    double z;
};

struct sf_explain {
    struct sf_explain_cell before, after;               /* all trials of each side */
    struct sf_explain_item items[SF_EXPLAIN_MAX_ITEMS]; /* significant, best first */
    size_t n;
    size_t values_over_cap, keys_over_cap;
};

/* explained(v) and its z for one value against its attribute's totals (the
 * decomposition above; exposed for the unit tests). */
double sf_explain_part(struct sf_explain_cell v0, struct sf_explain_cell v1,
                       struct sf_explain_cell t0, struct sf_explain_cell t1, double *z);
/* The Shapley mix and rate parts of one value (above). */
void sf_explain_shapley(struct sf_explain_cell v0, struct sf_explain_cell v1,
                        struct sf_explain_cell t0, struct sf_explain_cell t1, double *mix,
                        double *rate);

/* Explain the change of the kept share of `group` (by the SQL expression group_sql
 * over spans s, as lib/sf_spans.c groups them) in [b0, a1) of the database at path
 * (its complete sources only with complete_only, sf_db_complete_only),
 * one regime of the kept share on either side of a change near hint (ns; a drift
 * alarm's onset window).  The sides are cut where one change of the kept share is
 * likeliest (the binomial likelihood of the trials in time order, at least
 * SF_EXPLAIN_MIN_N either side), which is exact to the trial where the window is
 * not.  Only the spans kept at share thin count (sf_thin.h: spanfold report's sample
 * past --spans-max; 1: all).  Returns 0 (ex filled; ex->n may be 0) or a negative
 * SF_E_*. */
int sf_explain_drift(const char *path, int complete_only, const char *group_sql, const char *group,
                     int64_t b0, int64_t hint, int64_t a1, double thin, struct sf_explain *ex,
                     struct sf_err *err);

/* The kept share of the traces (one trial per trace, as above) of `group` (NULL: all)
 * in the database at path whose attribute `attribute` is `value` (NULL: absent): *n
 * trials, *k kept.  What a gate "sampled_share where ATTR = VALUE" judges.  Returns 0
 * or a negative SF_E_*. */
int sf_explain_share(const char *path, int complete_only, const char *group_sql, const char *group,
                     const char *attribute, const char *value, uint64_t *n, uint64_t *k,
                     struct sf_err *err);

struct sf_jw;
/* ex's explained_by array (key "explained_by"), the items of docs/spanfold.md's
 * drift[].explained_by[], best first: the one writer for spanfold report and inflect. */
void sf_explain_json(struct sf_jw *w, const struct sf_explain *ex);

/* The first value the verdict names (not "decision"; explained >= SF_EXPLAIN_NAME),
 * and the decision value it names first (>= SF_EXPLAIN_WHO_NAME); NULL: none. */
const struct sf_explain_item *sf_explain_named(const struct sf_explain *ex);
const struct sf_explain_item *sf_explain_decided(const struct sf_explain *ex);

/* The verdict's clause for ex: "94 % of the drop is requests with baggage.env =
 * prod-legacy, kept 0.00 after (0.51 before); their share of traffic rose 3 % -> 78 %",
 * or "no single attribute explains it; the rate fell uniformly (a sampler rate
 * change)", after who decided when that explains it.  Plain UTF-8 text, not escaped. */
void sf_explain_words(const struct sf_explain *ex, int fell, char *buf, size_t n);

#endif
