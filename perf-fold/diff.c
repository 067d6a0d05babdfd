/* diff.c - `perf-fold diff`: two folded profiles -> the three-column folded
 * format of FlameGraph's difffolded.pl ("stack base_count new_count"), the frames
 * whose inclusive share grew most (Markdown), and a CI gate.
 *
 * Reference: brendangregg/FlameGraph:difffolded.pl.  Line regex there:
 *   ^(.*)\s+?(\d+(?:\.\d*)?)$    -> the count is the last blank-separated token;
 *                                   the stack is everything before the one blank
 *                                   in front of it
 * -n scales base counts to the new total: int(c1 * total2 / total1);
 * -s replaces every 0x[0-9a-fA-F]+ with "0x...".
 * Differences, documented: lines are printed in byte order of the stack
 * (difffolded.pl prints Perl hash order), and a line that is not "stack count"
 * is reported as FILE:LINE and skipped (difffolded.pl counts it as an empty
 * stack with count 0).
 *
 * Inclusive share of a frame name = samples of stacks containing it (once per
 * stack, recursion counted once) / all samples.  Gates (--fail-if, the language
 * of lib/sf_gate.h and docs/ci.md) name "total" (the samples: %, samples),
 * "frame" (every frame's share: the worst verdict) or one frame (its share: pt,
 * %); a share's change comes with Newcombe's interval from the sample counts.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf_fold.h"
#include "sf_count.h"
#include "sf_gate.h"
#include "sf_hex.h"
#include "sf_line.h"
#include "sf_opt.h"
#include "sf_text.h"

#define MAX_GATES 32

struct counts {
    long double c[2];
};

struct diff_ctx {
    int normalize, striphex, top, quiet, no_diff, allow_missing;
    const char *summary, *junit;
    struct sf_gate gates[MAX_GATES];
    int ngates;
    struct sf_gate_run run; /* the verdicts, for the reports */
    struct sf_gate_entry entries[MAX_GATES];
    struct pf_table stacks; /* stack -> index in cnt (db_id) */
    struct counts *cnt;
    size_t ncnt, capcnt;
    long double total[2];
    long double minc[2];      /* the smallest count of a stack: periods, not samples, when large */
    struct pf_table names[2]; /* frame name -> inclusive count (db_id = stamp) */
    uint64_t bad;
    struct sf_buf tmp;
    char weight[2][32]; /* "# weight: W" on a profile's first line (spanfold stacks), or "" */
};

static int usage(const char *msg)
{
    if (msg)
        fprintf(stderr, "%s diff: %s\n", PF_TOOL, msg);
    fprintf(
        msg ? stderr : stdout,
        "usage: perf-fold diff [-n|--normalize] [-s|--strip-hex] [--fail-if GATE]...\n"
        "                      [--confidence C] [--on-inconclusive fail|pass] [--allow-missing]\n"
        "                      [--summary FILE] [--junit FILE] [--top N] [--no-diff] [-q]\n"
        "                      BASE.folded NEW.folded\n"
        "Writes \"stack base new\" lines (difffolded.pl format, byte order) to stdout,\n"
        "the top regressions and the gates as Markdown to stderr (or appended to --summary).\n"
        "GATE: frame>+5pt (any frame's share up 5 points), NAME>+5pt, NAME>+50%% (relative),\n"
        "      NAME>30pt (share in NEW), total>+10%%, total>+500samples  (docs/ci.md)\n"
        "exit status: 0 ok, 1 a gate failed or bad lines were skipped, 2 usage or input error\n");
    return msg ? SF_EXIT_USAGE : SF_EXIT_OK;
}

/* Parse and check one --fail-if: "total" counts samples, everything else is a share. */
static int add_gate(struct diff_ctx *d, const char *text)
{
    struct sf_gate *g = &d->gates[d->ngates];
    struct sf_err err;
    char msg[600];

    if (d->ngates == MAX_GATES)
        return usage("too many --fail-if gates (32 at most)");
    if (sf_gate_parse(g, text, &err) == 0 && g->op == SF_GATE_NONE) {
        err.col = (uint32_t)strlen(text) + 1;
        sf_err_set(&err, SF_E_USAGE, UINT64_MAX,
                   "expected a comparison ('%s' is not a "
                   "predicate of perf-fold diff)",
                   text);
    } else if (err.code == 0) {
        sf_gate_check(g, strcmp(g->subject, "total") == 0 ? SF_GATE_K_COUNT : SF_GATE_K_SHARE,
                      &err);
    }
    if (err.code) {
        sf_gate_errfmt(PF_TOOL " diff", text, &err, msg, sizeof(msg));
        fprintf(stderr, "%s\nTry 'perf-fold diff --help'.\n", msg);
        return SF_EXIT_USAGE;
    }
    d->ngates++;
    return 0;
}

/* The count token: last blank-separated token matching \d+(\.\d*)?; *k = its start. */
static int split_line(const char *s, size_t n, size_t *k)
{
    size_t i = n, d;

    while (i > 0 && !(s[i - 1] == ' ' || (s[i - 1] >= '\t' && s[i - 1] <= '\r')))
        i--;
    if (i == 0 || i == n)
        return -1;
    for (d = i; d < n && s[d] >= '0' && s[d] <= '9'; d++)
        ;
    if (d == i)
        return -1;
    if (d < n && s[d] == '.')
        for (d++; d < n && s[d] >= '0' && s[d] <= '9'; d++)
            ;
    if (d != n)
        return -1;
    *k = i;
    return 0;
}

static int add_stack(struct diff_ctx *d, int side, const char *s, size_t n, long double v)
{
    struct pf_entry *e;

    if (fold_table_add(&d->stacks, s, n, 0, &e))
        return -1;
    if (e->db_id == 0) {
        if (d->ncnt == d->capcnt) {
            struct counts *nc = realloc(d->cnt, (d->capcnt = 2 * d->capcnt + 1024) * sizeof(*nc));
            if (nc == NULL)
                return -1;
            d->cnt = nc;
        }
        d->cnt[d->ncnt] = (struct counts){{0, 0}};
        e->db_id = (int64_t)++d->ncnt;
    }
    d->cnt[e->db_id - 1].c[side] += v;
    d->total[side] += v;
    if (v > 0 && (d->minc[side] == 0 || v < d->minc[side]))
        d->minc[side] = v;
    return 0;
}

static int read_folded(struct diff_ctx *d, int side, const char *path)
{
    struct sf_line r;
    char *s;
    size_t n, k;
    int fd, rc;

    if ((fd = open(path, O_RDONLY)) < 0) {
        fprintf(stderr, "%s diff: %s: cannot open: %s\n", PF_TOOL, path, strerror(errno));
        return -1;
    }
    if (sf_line_open(&r, fd, 0)) {
        close(fd);
        return -1;
    }
    while ((rc = sf_line_next(&r, &s, &n)) != 0) {
        if (rc > 0 && r.lineno == 1 && n > 10 && n < 10 + sizeof(d->weight[side]) &&
            memcmp(s, "# weight: ", 10) == 0) {
            memcpy(d->weight[side], s + 10, n - 10);
            d->weight[side][n - 10] = 0;
            continue;
        }
        if (rc < 0 || split_line(s, n, &k)) {
            if (++d->bad <= PF_SHOW_ERRORS)
                fprintf(stderr, "%s diff: %s:%llu: %s\n", PF_TOOL, path,
                        (unsigned long long)r.lineno,
                        rc == SF_E_LIMIT ? "line too long, skipped"
                                         : "not a folded line \"stack count\", skipped");
            if (rc == SF_E_IO)
                break;
            continue;
        }
        long double v = strtold(s + k, NULL);
        if (v > (long double)SF_COUNT_MAX) {
            if (++d->bad <= PF_SHOW_ERRORS)
                fprintf(stderr,
                        "%s diff: %s:%llu: count %.*s is more than " SF_COUNT_MAX_TEXT
                        ", skipped\n",
                        PF_TOOL, path, (unsigned long long)r.lineno, (int)(n - k), s + k);
            continue;
        }
        if (d->total[side] + v > (long double)SF_COUNT_MAX) {
            fprintf(stderr, "%s diff: %s:%llu: the counts sum past " SF_COUNT_MAX_TEXT "\n",
                    PF_TOOL, path, (unsigned long long)r.lineno);
            rc = SF_E_RANGE;
            break;
        }
        n = k - 1;
        if (d->striphex) {
            /* s/0x[0-9a-fA-F]+/0x.../g */
            sf_buf_reset(&d->tmp);
            for (size_t i = 0; i < n;) {
                size_t j = i + 2;
                if (i + 2 < n && s[i] == '0' && s[i + 1] == 'x' && sf_hex_digit(s[j]) >= 0) {
                    while (j < n && sf_hex_digit(s[j]) >= 0)
                        j++;
                    sf_buf_append(&d->tmp, "0x...", 5);
                    i = j;
                } else {
                    sf_buf_append(&d->tmp, s + i, 1);
                    i++;
                }
            }
            s = (char *)d->tmp.data;
            n = d->tmp.len;
        }
        if (add_stack(d, side, s ? s : "", n, v)) {
            fprintf(stderr, "%s diff: out of memory\n", PF_TOOL);
            rc = -1;
            break;
        }
    }
    sf_line_close(&r);
    close(fd);
    return rc < 0 && rc != SF_E_LIMIT ? -1 : 0;
}

/* Inclusive counts per frame name on one side; a stamp per name counts a
 * recursive frame once per stack. */
static int inclusive(struct diff_ctx *d, int side, struct pf_entry **v, size_t nv)
{
    struct pf_table *t = &d->names[side];

    for (size_t i = 0; i < nv; i++) {
        long double c = d->cnt[v[i]->db_id - 1].c[side];
        const char *p = v[i]->key, *end = p + v[i]->len;
        if (c == 0)
            continue;
        while (p <= end) {
            const char *semi = memchr(p, ';', (size_t)(end - p));
            size_t len = (size_t)((semi ? semi : end) - p);
            struct pf_entry *e;
            if (fold_table_add(t, p, len, 0, &e))
                return -1;
            if (e->db_id != (int64_t)i + 1) {
                e->db_id = (int64_t)i + 1;
                /* count holds the inclusive samples scaled to 1e-3 precision */
                e->count += (uint64_t)llroundl(c * 1000);
            }
            if (!semi)
                break;
            p = semi + 1;
        }
    }
    return 0;
}

static double share(const struct diff_ctx *d, int side, const char *name, size_t len)
{
    const struct pf_entry *e = fold_table_find(&d->names[side], name, len);
    long double tot = d->total[side];

    return e && tot > 0 ? (double)((long double)e->count / 1000 * 100 / tot) : 0.0;
}

static void print_count(FILE *f, long double v)
{
    if (v == floorl(v) && v < 9.2e18L)
        fprintf(f, "%lld", (long long)v);
    else
        fprintf(f, "%.15Lg", v);
}

struct reg {
    const struct pf_entry *e;
    double s0, s1;
};

static int cmp_reg(const void *a, const void *b)
{
    const struct reg *x = a, *y = b;
    double dx = x->s1 - x->s0, dy = y->s1 - y->s0;
    size_t n;
    int r;

    if (dx != dy)
        return dx < dy ? 1 : -1;
    n = x->e->len < y->e->len ? x->e->len : y->e->len;
    r = memcmp(x->e->key, y->e->key, n);
    return r ? r : (x->e->len > y->e->len) - (x->e->len < y->e->len);
}

/* One frame's shares as a gate observation: fractions of the two totals. */
static struct sf_gate_obs frame_obs(const struct diff_ctx *d, const char *name, size_t len)
{
    return (struct sf_gate_obs){share(d, 0, name, len) / 100, share(d, 1, name, len) / 100,
                                (double)d->total[0], (double)d->total[1]};
}

/* "NAME: 10.00 % -> 50.00 % of samples, +40 pt [...]": what a frame gate measured. */
static void frame_detail(const struct diff_ctx *d, const struct sf_gate *g,
                         const struct sf_gate_obs *o, const struct sf_gate_res *r, const char *name,
                         size_t len, char *out, size_t n)
{
    char stat[200];

    if (r->verdict == SF_GATE_ERROR) {
        snprintf(out, n,
                 "%.*s: a confidence interval needs at least %d samples in each profile "
                 "(base has %.0Lf, new %.0Lf)",
                 (int)(len > 200 ? 200 : len), name, SF_GATE_MIN_N, d->total[0], d->total[1]);
        return;
    }
    sf_gate_format(g, r, stat, sizeof(stat));
    snprintf(out, n, "%.*s: %.2f %% -> %.2f %% of samples, %s%s", (int)(len > 200 ? 200 : len),
             name, o->before * 100, o->after * 100, stat,
             r->verdict == SF_GATE_INCONCLUSIVE ? " (crosses the threshold, not significantly)"
                                                : "");
}

/* Is frame x (verdict a, estimate ea) worse than frame y (b, eb) for gate g?  Ties
 * go to the estimate furthest past the threshold, then to the name in byte order,
 * so that the report does not depend on the hash table's order. */
static int worse_obs(const struct sf_gate *g, enum sf_gate_verdict a, double ea,
                     const struct pf_entry *x, enum sf_gate_verdict b, double eb,
                     const struct pf_entry *y)
{
    size_t n = x->len < y->len ? x->len : y->len;
    int c;

    if (a != b)
        return a > b;
    if (ea != eb)
        return g->op == SF_GATE_GT || g->op == SF_GATE_GE ? ea > eb : ea < eb;
    c = memcmp(x->key, y->key, n);
    return c ? c < 0 : x->len < y->len;
}

/* "frame": every frame of either profile; the entry gets the worst. */
static void eval_any_frame(struct diff_ctx *d, const struct sf_gate *g, struct sf_gate_entry *out)
{
    const struct pf_entry *best = NULL;
    struct sf_gate_obs bo = {0};
    struct sf_gate_res br = {0};

    for (int side = 1; side >= 0; side--) {
        const struct pf_table *t = &d->names[side];
        const struct pf_entry *e;
        for (size_t i = 0; (e = fold_table_next(t, &i)) != NULL;) {
            struct sf_gate_obs o;
            struct sf_gate_res r;
            if (side == 0 && fold_table_find(&d->names[1], e->key, e->len))
                continue;
            o = frame_obs(d, e->key, e->len);
            sf_gate_eval(g, &o, d->run.confidence, &r);
            if (best == NULL || worse_obs(g, r.verdict, r.est, e, br.verdict, br.est, best))
                best = e, bo = o, br = r;
        }
    }
    out->verdict = br.verdict;
    if (best)
        frame_detail(d, g, &bo, &br, best->key, best->len, out->detail, sizeof(out->detail));
}

static void eval_gate(struct diff_ctx *d, const struct sf_gate *g, struct sf_gate_entry *out)
{
    size_t len = strlen(g->subject);
    struct sf_gate_obs o;
    struct sf_gate_res r;
    char stat[200];

    out->gate = g->text;
    if (strcmp(g->subject, "total") == 0) {
        o = (struct sf_gate_obs){(double)d->total[0], (double)d->total[1], 0, 0};
        out->verdict = sf_gate_eval(g, &o, d->run.confidence, &r);
        sf_gate_format(g, &r, stat, sizeof(stat));
        snprintf(out->detail, sizeof(out->detail), "total samples %.0f -> %.0f: %s", o.before,
                 o.after, stat);
    } else if (strcmp(g->subject, "frame") == 0) {
        eval_any_frame(d, g, out);
    } else if (!fold_table_find(&d->names[0], g->subject, len) &&
               !fold_table_find(&d->names[1], g->subject, len)) {
        /* a typo must not pass silently */
        out->verdict = d->allow_missing ? SF_GATE_PASS : SF_GATE_ERROR;
        snprintf(out->detail, sizeof(out->detail), "no frame named '%.200s' in either profile%s",
                 g->subject,
                 d->allow_missing ? " (passes: --allow-missing)"
                                  : " (--allow-missing lets it pass)");
    } else {
        o = frame_obs(d, g->subject, len);
        out->verdict = sf_gate_eval(g, &o, d->run.confidence, &r);
        frame_detail(d, g, &o, &r, g->subject, len, out->detail, sizeof(out->detail));
    }
}

/* A profile whose every stack counts 1000 or more was folded with summed periods
 * (nanoseconds for cpu-clock), not samples: its intervals would be far too narrow. */
#define WEIGHTED_MIN 1000
#define WEIGHTED_NOTE                                                                              \
    "every stack counts 1000 or more: these look like summed periods, not samples, and the "       \
    "intervals assume samples (fold with perf-fold --samples)"
static int weighted(const struct diff_ctx *d)
{
    return d->minc[0] >= WEIGHTED_MIN || d->minc[1] >= WEIGHTED_MIN;
}

/* The Markdown report: totals and the top regressions. */
static void write_md(const struct diff_ctx *d, FILE *md, const struct reg *regs, size_t nr,
                     const char *base, const char *new_)
{
    double tot_pct =
        d->total[0] > 0 ? (double)((d->total[1] - d->total[0]) * 100 / d->total[0]) : 0;

    fprintf(md, "\n## perf-fold diff: ");
    sf_text_md_code(md, base, strlen(base), 0);
    fprintf(md, " → ");
    sf_text_md_code(md, new_, strlen(new_), 0);
    fprintf(md, "\n\nSamples: base ");
    print_count(md, d->total[0]);
    fprintf(md, ", new ");
    print_count(md, d->total[1]);
    fprintf(md, " (%+.1f %%).\n\n", tot_pct);
    if (weighted(d))
        fprintf(md, "**Note:** %s\n\n", WEIGHTED_NOTE);
    fprintf(md, "### Top regressions (inclusive share growth)\n\n");
    fprintf(md, "| frame | base %% | new %% | change (pt) |\n|---|---:|---:|---:|\n");
    for (size_t i = 0, shown = 0; i < nr && shown < (size_t)d->top; i++) {
        if (regs[i].s1 - regs[i].s0 <= 0)
            break;
        fputs("| ", md);
        sf_text_md_code(md, regs[i].e->key, sf_text_utf8_cut(regs[i].e->key, regs[i].e->len, 200),
                        SF_TEXT_CELL);
        fprintf(md, " | %.2f | %.2f | %+.2f |\n", regs[i].s0, regs[i].s1, regs[i].s1 - regs[i].s0);
        shown++;
    }
}

/* Evaluate the gates into d->run; write the Markdown.  Returns 0 or -1 (memory). */
static int report(struct diff_ctx *d, FILE *md, const char *base, const char *new_)
{
    const struct pf_table *nt = &d->names[1];
    struct reg *regs = calloc(nt->map.n ? nt->map.n : 1, sizeof(*regs));
    const struct pf_entry *e;
    size_t nr = 0;

    if (regs == NULL)
        return -1;
    for (size_t i = 0; (e = fold_table_next(nt, &i)) != NULL;) {
        regs[nr++] = (struct reg){e, share(d, 0, e->key, e->len), share(d, 1, e->key, e->len)};
    }
    qsort(regs, nr, sizeof(*regs), cmp_reg);
    for (int g = 0; g < d->ngates; g++)
        eval_gate(d, &d->gates[g], &d->entries[g]);
    d->run.e = d->entries;
    d->run.n = (size_t)d->ngates;
    if (md) {
        write_md(d, md, regs, nr, base, new_);
        if (d->ngates)
            sf_gate_write_md(md, &d->run);
    }
    free(regs);
    return 0;
}

static int write_diff(struct diff_ctx *d)
{
    struct pf_entry **v;

    if (fold_table_sorted(&d->stacks, &v))
        return -1;
    for (size_t i = 0; i < d->stacks.map.n; i++) {
        struct counts *c = &d->cnt[v[i]->db_id - 1];
        long double c0 = c->c[0];
        if (d->normalize && d->total[0] != d->total[1] && d->total[0] > 0)
            c0 = floorl(c0 * d->total[1] / d->total[0]);
        if (d->no_diff)
            continue;
        fwrite(v[i]->key, 1, v[i]->len, stdout);
        putchar(' ');
        print_count(stdout, c0);
        putchar(' ');
        print_count(stdout, c->c[1]);
        putchar('\n');
    }
    for (int side = 0; side < 2; side++)
        if (inclusive(d, side, v, d->stacks.map.n)) {
            free(v);
            return -1;
        }
    free(v);
    return 0;
}

static void diff_free(struct diff_ctx *d)
{
    fold_table_free(&d->stacks);
    fold_table_free(&d->names[0]);
    fold_table_free(&d->names[1]);
    sf_buf_free(&d->tmp);
    free(d->cnt);
}

/* --summary appends (a CI job's $GITHUB_STEP_SUMMARY holds other steps' text);
 * --junit is one file per run.  Returns 0 or -1 (printed). */
static int write_reports(struct diff_ctx *d, const char *base, const char *new_)
{
    FILE *md = NULL, *ju;
    int rc = 0;

    if (d->summary && (md = fopen(d->summary, "a")) == NULL) {
        fprintf(stderr, "%s diff: %s: cannot append: %s\n", PF_TOOL, d->summary, strerror(errno));
        return -1;
    }
    if (report(d, md ? md : (d->quiet ? NULL : stderr), base, new_) < 0) {
        fprintf(stderr, "%s diff: out of memory\n", PF_TOOL);
        rc = -1;
    }
    if (md && fclose(md) != 0) {
        fprintf(stderr, "%s diff: %s: write error\n", PF_TOOL, d->summary);
        rc = -1;
    }
    if (rc == 0 && d->junit) {
        if ((ju = fopen(d->junit, "w")) == NULL || sf_gate_write_junit(ju, &d->run) < 0 ||
            fclose(ju) != 0) {
            fprintf(stderr, "%s diff: %s: cannot write: %s\n", PF_TOOL, d->junit, strerror(errno));
            rc = -1;
        }
    }
    /* printed even with -q: a CI log must say why the build failed */
    sf_gate_write_log(stderr, &d->run);
    if (d->ngates && weighted(d))
        fprintf(stderr, "%s diff: note: %s\n", PF_TOOL, WEIGHTED_NOTE);
    return rc;
}

/* One option into d.  Returns -1 to go on, else the exit status to stop with. */
static int diff_opt(struct diff_ctx *d, int ch, const char *arg)
{
    int64_t top;

    switch (ch) {
    case 'n':
        d->normalize = 1;
        break;
    case 's':
        d->striphex = 1;
        break;
    case 'q':
        d->quiet = 1;
        break;
    case 'S':
        d->summary = arg;
        break;
    case 'J':
        d->junit = arg;
        break;
    case 'D':
        d->no_diff = 1;
        break;
    case 'A':
        d->allow_missing = 1;
        break;
    case 'C':
        if (sf_opt_double(arg, &d->run.confidence) || !(d->run.confidence > 0) ||
            !(d->run.confidence < 1))
            return usage("--confidence takes a level in (0, 1), e.g. 0.99");
        break;
    case 'I':
        if (strcmp(arg, "fail") && strcmp(arg, "pass"))
            return usage("--on-inconclusive takes fail or pass");
        d->run.inconclusive_fails = strcmp(arg, "fail") == 0;
        break;
    case 'h':
        return usage(NULL);
    case 't':
        if (sf_opt_i64(arg, 0, 100000, &top))
            return usage("--top takes a number");
        d->top = (int)top;
        break;
    case 'f':
        return add_gate(d, arg) ? SF_EXIT_USAGE : -1;
    default:
        return usage("unknown option or missing argument");
    }
    return -1;
}

/* Confidence intervals count samples: a profile whose first line says its counts are
 * another weight (spanfold stacks' "# weight: ns") cannot give one.  (Without that line,
 * a profile whose every stack counts 1000 or more only gets WEIGHTED_NOTE: large sample
 * counts look the same.)  Returns 0 or -1 (said). */
static int check_counts(const struct diff_ctx *d, char **paths)
{
    if (!(d->run.confidence > 0))
        return 0;
    for (int side = 0; side < 2; side++) {
        if (d->weight[side][0] && strcmp(d->weight[side], "samples") != 0) {
            fprintf(stderr,
                    "%s diff: %s: --confidence needs sample counts, and this profile's counts "
                    "are weighted by %s: fold it with spanfold stacks --weight samples (or drop "
                    "--confidence)\n",
                    PF_TOOL, paths[side], d->weight[side]);
            return -1;
        }
    }
    return 0;
}

/* An empty profile (a failed `perf record`, a wrong path) must not pass a gate. */
static int check_nonempty(const struct diff_ctx *d, char **paths)
{
    for (int side = 0; side < 2; side++) {
        if (d->total[side] > 0)
            continue;
        fprintf(stderr, "%s diff: %s: empty profile: no samples%s\n", PF_TOOL, paths[side],
                d->bad ? " (every line was bad)" : "");
        return -1;
    }
    return 0;
}

int diff_main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"normalize", no_argument, NULL, 'n'},
        {"strip-hex", no_argument, NULL, 's'},
        {"fail-if", required_argument, NULL, 'f'},
        {"summary", required_argument, NULL, 'S'},
        {"junit", required_argument, NULL, 'J'},
        {"confidence", required_argument, NULL, 'C'},
        {"on-inconclusive", required_argument, NULL, 'I'},
        {"allow-missing", no_argument, NULL, 'A'},
        {"no-diff", no_argument, NULL, 'D'},
        {"top", required_argument, NULL, 't'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct diff_ctx d;
    int ch, rc = SF_EXIT_OK;

    memset(&d, 0, sizeof(d));
    d.top = 10;
    d.run.tool = PF_TOOL " diff";
    sf_buf_init(&d.tmp, 1 << 24);
    sf_arena_init(&d.stacks.keys, 1 << 20, PF_TABLE_MAX);
    sf_arena_init(&d.names[0].keys, 1 << 20, PF_TABLE_MAX);
    sf_arena_init(&d.names[1].keys, 1 << 20, PF_TABLE_MAX);
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "nsqh", lo, NULL)) != -1)
        if ((rc = diff_opt(&d, ch, optarg)) >= 0)
            return diff_free(&d), rc;
    rc = SF_EXIT_OK;
    if (argc - optind != 2)
        return diff_free(&d), usage("needs BASE and NEW folded files");
    char subject[600];
    snprintf(subject, sizeof(subject), "%.290s → %.290s", argv[optind], argv[optind + 1]);
    d.run.subject = subject;
    if (read_folded(&d, 0, argv[optind]) || read_folded(&d, 1, argv[optind + 1]) ||
        check_nonempty(&d, argv + optind) || check_counts(&d, argv + optind) || write_diff(&d) ||
        write_reports(&d, argv[optind], argv[optind + 1])) {
        diff_free(&d);
        return SF_EXIT_USAGE;
    }
    rc = sf_gate_exit(&d.run);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "%s diff: write error on stdout\n", PF_TOOL);
        rc = SF_EXIT_USAGE;
    }
    if (d.bad) { /* skipped records: exit 1 unless worse, and say which */
        fprintf(stderr, "%s diff: %llu bad line%s skipped\n", PF_TOOL, (unsigned long long)d.bad,
                d.bad == 1 ? "" : "s");
        if (rc == SF_EXIT_OK)
            rc = SF_EXIT_FINDINGS;
    }
    diff_free(&d);
    return rc;
}
