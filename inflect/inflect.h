/* inflect.h - the state one inflect run carries (struct inflect_ctx) and the
 * analysis of one series: every detector's change points and the default
 * detector's classified inflection points. */
#ifndef INFLECT_H
#define INFLECT_H

#include <stddef.h>
#include <stdint.h>

#include "changepoint.h"
#include "classify.h"
#include "series.h"
#include "sf_attrs.h"
#include "sf_gate.h"

#define INFLECT_MAX_GATES 16
#define INFLECT_MAX_CPS   4096 /* change points kept per series and detector */
#define INFLECT_MAX_RATES 32   /* --expect-rate GROUP=R options */

/* The analysis of one series. */
struct inflect_result {
    const struct inflect_series *s;
    char group[SERIES_NAME_MAX];  /* --db: service/endpoint/method, "" for files */
    char metric[SERIES_NAME_MAX]; /* --db: p99, error_rate, ...; files: column */
    size_t *by[CP_NDETECTORS];    /* indices into s (compact), per detector */
    size_t nby[CP_NDETECTORS];
    struct cp_point *pts; /* default detector, classified; index is compact */
    size_t npts;
    struct cp_info info;
};

#define INFLECT_GATE_MIN_OBS 4 /* observations a change point needs (two segments of 2) */

/* A --gate: the gate language of lib/sf_gate.h, its subject split for --db. */
struct inflect_gate {
    struct sf_gate g;
    char group[SERIES_NAME_MAX];  /* --db "GROUP/METRIC": one group; "" = every group */
    char metric[SERIES_NAME_MAX]; /* p99, error_rate, ... or a --series column; "" = drift */
    /* "sampled_share where ATTR = VALUE < X": the traces whose attribute ATTR
     * (lib/sf_attrs.h) is VALUE, or absent (where_absent: VALUE null) */
    int where, where_absent;
    char where_attr[SF_ATTR_KEY_MAX], where_value[SF_ATTR_VALUE_MAX];
};

struct inflect_ctx {
    const char *tool;
    const char *series_path; /* --series */
    const char *column;      /* --column */
    const char *db_path;     /* --db */
    struct {
        const char *url, *cluster, *database; /* --clickhouse (spanfold inflect only) */
    } ch;
    const char *out_dir;   /* --out */
    const char *json_path; /* --json ("-" = stdout) */
    const char *by;        /* service, endpoint, grpc_method, all */
    int64_t window_ns;     /* --window */
    double expect_rate;    /* --expect-rate R: every group, 0 = none */
    struct {
        char group[SERIES_NAME_MAX];
        double rate;
    } rates[INFLECT_MAX_RATES]; /* --expect-rate GROUP=R */
    int nrates;
    int tiers;             /* --tiers (>= 1) */
    int detector;          /* --detector: default CP_PELT */
    double min_confidence; /* --min-confidence: drop the default's points below it */
    int quiet;
    int no_charts;       /* --no-charts */
    int allow_missing;   /* --allow-missing: a gate on a missing group or column passes */
    const char *summary; /* --summary FILE: the gates as Markdown, appended */
    const char *junit;   /* --junit FILE: the gates as JUnit XML */
    int complete_only;   /* --complete-only: only sources that are complete */
    int explain_drift;   /* --explain-drift: the attribute behind each drift alarm */
    struct cp_opts cp;
    struct inflect_gate gates[INFLECT_MAX_GATES];
    int ngates;
};

/* The configured per-tier sampling rate of a group: its --expect-rate GROUP=R, else
 * --expect-rate R, else 0 (unknown). */
double inflect_expect_rate(const struct inflect_ctx *ctx, const char *group);

/* Run every detector on r->s and classify the default detector's points.
 * Returns 0 or -1 (out of memory). */
int inflect_analyse(const struct inflect_ctx *ctx, struct inflect_result *r);
void inflect_result_free(struct inflect_result *r);

/* The JSON object of one analysed series (shape documented in the README):
 * name, n, change_points (default detector), by_detector, model. */
struct sf_jw;
void inflect_json_series(struct sf_jw *w, const struct inflect_ctx *ctx,
                         const struct inflect_result *r);

/* The tool's command line (main.c); its main() is generated, and spanfold links it too. */
int inflect_main(int argc, char **argv);

#endif
