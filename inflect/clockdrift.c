/* clockdrift.c - clock offset/skew per source pair and the drift model.
 *
 * clock_fits (tracefs2spans) holds, per pair of clocks, one row per segment:
 * t_to = t_from + offset_ns + skew_ppm 1e-6 (t_from - ref_ns).  With several
 * segments over a capture the offsets trace the clocks' relative drift; the
 * design notes model the frequency as f(t) = f0 (1 + alpha t + beta t^2), whose
 * integral is the cubic  offset(t) = c0 + c1 t + c2 t^2 + c3 t^3  with
 * skew0 = c1, alpha = 2 c2 / (1 + c1), beta = 3 c3 / (1 + c1)  (t in seconds,
 * offsets in ns, so c1 is scaled by 1e9).  Least squares, degree min(3, n - 2),
 * on t scaled to [0, 1] for conditioning.  Clock steps (Paxson 1998) show as a
 * row whose offset leaves the line of the row before; they are found first and
 * taken out of the offsets before the fit, so a step does not bend the drift.
 */
#include "clockdrift.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sf_db.h"

/* Solve the (d+1)x(d+1) system a x = b in place (partial pivoting).  Returns 0,
 * or -1 when singular. */
static int solve(double a[4][4], double *b, int d)
{
    for (int i = 0; i <= d; i++) {
        int piv = i;
        for (int r = i + 1; r <= d; r++)
            if (fabs(a[r][i]) > fabs(a[piv][i]))
                piv = r;
        if (fabs(a[piv][i]) < 1e-12)
            return -1;
        for (int c = 0; c <= d; c++) {
            double t = a[i][c];
            a[i][c] = a[piv][c];
            a[piv][c] = t;
        }
        double tb = b[i];
        b[i] = b[piv];
        b[piv] = tb;
        for (int r = i + 1; r <= d; r++) {
            double f = a[r][i] / a[i][i];
            for (int c = i; c <= d; c++)
                a[r][c] -= f * a[i][c];
            b[r] -= f * b[i];
        }
    }
    for (int i = d; i >= 0; i--) {
        for (int c = i + 1; c <= d; c++)
            b[i] -= a[i][c] * b[c];
        b[i] /= a[i][i];
    }
    return 0;
}

/* Normal equations of a degree-d least-squares fit of off_ns over t / span. */
static void normal_equations(const struct clock_pair *p, double span, int d, double a[4][4],
                             double b[4])
{
    memset(a, 0, 4 * sizeof(a[0]));
    memset(b, 0, 4 * sizeof(b[0]));
    for (size_t i = 0; i < p->n; i++) {
        double u = p->t[i] / span, pw[7];
        pw[0] = 1;
        for (int k = 1; k < 7; k++)
            pw[k] = pw[k - 1] * u;
        for (int r = 0; r <= d; r++) {
            for (int c = 0; c <= d; c++)
                a[r][c] += pw[r + c];
            b[r] += pw[r] * p->off_ns[i];
        }
    }
}

static void polyfit(struct clock_pair *p, int d)
{
    double span = p->n > 1 ? p->t[p->n - 1] : 1, a[4][4], b[4], sc = 1;

    if (!(span > 0))
        span = 1;
    normal_equations(p, span, d, a, b);
    while (d > 0 && solve(a, b, d) < 0) { /* degenerate times: lower the degree */
        d--;
        normal_equations(p, span, d, a, b);
    }
    if (d == 0) {
        b[0] = 0;
        for (size_t i = 0; i < p->n; i++)
            b[0] += p->off_ns[i];
        b[0] /= (double)p->n;
    }
    memset(p->c, 0, sizeof(p->c));
    for (int k = 0; k <= d; k++) { /* back from u = t / span to t */
        p->c[k] = b[k] / sc;
        sc *= span;
    }
    p->degree = d;
}

void clock_fit(struct clock_pair *p, const double *row_resid)
{
    int d = p->n >= 3 ? (int)(p->n - 2 < 3 ? p->n - 2 : 3) : p->n == 2 ? 1 : 0;
    double ss = 0, own = 0, one, stepped = 0, *raw;

    if (p->n == 0)
        return;
    /* steps first (Paxson): a row off the previous row's line by more than the
     * tolerance is a clock step; the fit runs on offsets with the steps removed */
    p->nsteps = 0;
    for (size_t i = 0; i < p->n; i++) {
        p->jump_ns[i] = 0;
        if (i > 0) {
            double dt = p->t[i] - p->t[i - 1];
            double pred = p->off_ns[i - 1] + p->skew_ppm[i - 1] * 1e-6 * dt * 1e9;
            double tol = fmax(1000, 10 * (row_resid ? fabs(row_resid[i]) : 0));
            p->jump_ns[i] = p->off_ns[i] - pred;
            if (fabs(p->jump_ns[i]) > tol) {
                p->nsteps++;
                stepped += p->jump_ns[i];
            }
        }
        p->resid_ns[i] = p->off_ns[i] - stepped; /* step-corrected offset, for the fit */
    }
    raw = p->off_ns;
    p->off_ns = p->resid_ns;
    polyfit(p, d);
    p->off_ns = raw;
    one = 1 + p->c[1] / 1e9;
    p->skew0_ppm = p->degree >= 1 ? p->c[1] / 1e3 : p->skew_ppm[0];
    p->alpha_ppm_s = 2 * p->c[2] / 1e9 / one * 1e6;
    p->beta_ppm_s2 = 3 * p->c[3] / 1e9 / one * 1e6;
    for (size_t i = 0; i < p->n; i++) {
        double t = p->t[i];
        double fit = p->c[0] + t * (p->c[1] + t * (p->c[2] + t * p->c[3]));
        p->resid_ns[i] -= fit;
        ss += p->resid_ns[i] * p->resid_ns[i];
        if (row_resid)
            own += row_resid[i] * row_resid[i];
    }
    /* one row is fitted exactly by the drift fit, but not by its own line: the
     * mapping is as good as the rows' residuals and the fit through them together */
    p->fit_rms_ns = sqrt(ss / (double)p->n);
    p->resid_rms_ns = sqrt((ss + own) / (double)p->n);
}

void clock_free(struct clock_report *cr)
{
    for (size_t i = 0; i < cr->n; i++) {
        free(cr->p[i].t);
        free(cr->p[i].off_ns);
        free(cr->p[i].skew_ppm);
        free(cr->p[i].resid_ns);
        free(cr->p[i].jump_ns);
        free(cr->p[i].row_resid);
    }
    free(cr->p);
    memset(cr, 0, sizeof(*cr));
}

static struct clock_pair *pair_get(struct clock_report *cr, const char *from, const char *to,
                                   int64_t fs, int64_t ts)
{
    struct clock_pair *np;

    if (cr->n && strcmp(cr->p[cr->n - 1].from, from) == 0 && strcmp(cr->p[cr->n - 1].to, to) == 0 &&
        cr->p[cr->n - 1].from_src == fs && cr->p[cr->n - 1].to_src == ts)
        return &cr->p[cr->n - 1];
    if (cr->n >= CLOCK_MAX_PAIRS)
        return NULL;
    np = realloc(cr->p, (cr->n + 1) * sizeof(*np));
    if (np == NULL)
        return NULL;
    cr->p = np;
    np = &cr->p[cr->n++];
    memset(np, 0, sizeof(*np));
    snprintf(np->from, sizeof(np->from), "%s", from);
    snprintf(np->to, sizeof(np->to), "%s", to);
    np->from_src = fs;
    np->to_src = ts;
    return np;
}

static int pair_push(struct clock_pair *p, int64_t t_ns, int64_t off, double skew, double resid)
{
    double **arrs[6] = {&p->t, &p->off_ns, &p->skew_ppm, &p->resid_ns, &p->jump_ns, &p->row_resid};

    if (p->n >= CLOCK_MAX_ROWS)
        return SF_E_LIMIT;
    for (int k = 0; k < 6; k++) {
        double *na = realloc(*arrs[k], (p->n + 1) * sizeof(double));
        if (na == NULL)
            return SF_E_NOMEM;
        *arrs[k] = na;
    }
    if (p->n == 0) { /* offsets near 1.8e18 ns lose ns digits as doubles: keep them relative */
        p->t0_ns = t_ns;
        p->off0_ns = off;
    }
    p->t[p->n] = (double)(t_ns - p->t0_ns) / 1e9;
    p->off_ns[p->n] = (double)(off - p->off0_ns);
    p->skew_ppm[p->n] = skew;
    p->row_resid[p->n] = resid;
    p->n++;
    return 0;
}

int clock_read(struct clock_report *cr, const char *path, int complete_only, struct sf_err *err)
{
    static const char sql[] =
        "SELECT from_clock, to_clock, COALESCE(from_source, -1), COALESCE(to_source, -1), "
        "offset_ns, skew_ppm, COALESCE(valid_from_ns, ref_ns), residual_ns FROM clock_fits "
        "ORDER BY from_clock, to_clock, 3, 4, 7, id";
    struct sf_db *db = NULL;
    sqlite3_stmt *st;
    int rc = 0, r;

    memset(cr, 0, sizeof(*cr));
    if ((rc = sf_db_open_mode(&db, path, SF_DB_READ, err)) < 0)
        return rc;
    if (complete_only && (rc = sf_db_complete_only(db, err)) < 0) {
        sf_db_close(db, NULL);
        return rc;
    }
    if (sqlite3_prepare_v2(sf_db_handle(db), sql, -1, &st, NULL) != SQLITE_OK) {
        sf_db_close(db, NULL);
        return 0; /* no clock_fits table: nothing to report */
    }
    while ((r = sqlite3_step(st)) == SQLITE_ROW) {
        struct clock_pair *p = pair_get(cr, (const char *)sqlite3_column_text(st, 0),
                                        (const char *)sqlite3_column_text(st, 1),
                                        sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3));
        if (p == NULL ||
            (rc = pair_push(p, sqlite3_column_int64(st, 6), sqlite3_column_int64(st, 4),
                            sqlite3_column_double(st, 5), sqlite3_column_double(st, 7))) < 0) {
            rc = sf_err_set(err, rc ? rc : SF_E_LIMIT, UINT64_MAX,
                            "clock_fits: too many pairs or rows");
            break;
        }
    }
    if (rc == 0 && r != SQLITE_DONE)
        rc = sf_err_set(err, SF_E_DB, UINT64_MAX, "clock_fits: %s",
                        sqlite3_errmsg(sf_db_handle(db)));
    sqlite3_finalize(st);
    sf_db_close(db, NULL);
    for (size_t i = 0; rc == 0 && i < cr->n; i++)
        clock_fit(&cr->p[i], cr->p[i].row_resid);
    if (rc < 0)
        clock_free(cr);
    return rc;
}
