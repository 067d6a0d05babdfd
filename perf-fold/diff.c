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
 * stack, recursion counted once) / all samples.  Gate expressions (--fail-if):
 *   frame>+Npt   any frame's inclusive share up more than N percentage points
 *   NAME>+Npt    the frame NAME's share up more than N points  ("%pt" = "pt")
 *   NAME>+N%     the frame NAME's share up more than N % of itself
 *   total>+N%    total samples up more than N %
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf_fold.h"
#include "sf_hex.h"
#include "sf_line.h"
#include "sf_opt.h"
#include "sf_text.h"

#define MAX_GATES 32

struct gate {
    const char *text;
    char name[256]; /* "frame", "total" or a frame name */
    double limit;
    int relative; /* N% (relative) vs Npt (points) */
};

struct counts {
    long double c[2];
};

struct diff_ctx {
    int normalize, striphex, top, quiet;
    const char *summary;
    struct gate gates[MAX_GATES];
    int ngates;
    struct pf_table stacks; /* stack -> index in cnt (db_id) */
    struct counts *cnt;
    size_t ncnt, capcnt;
    long double total[2];
    struct pf_table names[2]; /* frame name -> inclusive count (db_id = stamp) */
    uint64_t bad;
    struct sf_buf tmp;
};

static int usage(const char *msg)
{
    if (msg)
        fprintf(stderr, "%s diff: %s\n", PF_TOOL, msg);
    fprintf(msg ? stderr : stdout,
            "usage: perf-fold diff [-n|--normalize] [-s|--strip-hex] [--fail-if EXPR]...\n"
            "                      [--summary FILE] [--top N] [-q] BASE.folded NEW.folded\n"
            "Writes \"stack base new\" lines (difffolded.pl format, byte order) to stdout,\n"
            "the top regressions as Markdown to stderr (or --summary FILE).\n"
            "EXPR: frame>+Npt | NAME>+Npt | NAME>+N%% | total>+N%%   (repeatable)\n"
            "exit status: 0 ok, 1 a --fail-if threshold exceeded, 2 usage or bad input\n");
    return msg ? SF_EXIT_USAGE : SF_EXIT_OK;
}

static int parse_gate(struct gate *g, const char *s)
{
    const char *gt = strrchr(s, '>');
    char num[64];
    size_t nl, vl;
    const char *v, *unit;

    if (gt == NULL || gt == s || (nl = (size_t)(gt - s)) >= sizeof(g->name))
        return -1;
    memcpy(g->name, s, nl);
    g->name[nl] = 0;
    v = gt + 1;
    if (*v == '+')
        v++;
    unit = v + strspn(v, "0123456789.");
    vl = (size_t)(unit - v);
    if (vl == 0 || vl >= sizeof(num))
        return -1;
    memcpy(num, v, vl);
    num[vl] = 0;
    if (sf_opt_double(num, &g->limit))
        return -1;
    if (strcmp(unit, "%pt") == 0 || strcmp(unit, "pt") == 0)
        g->relative = 0;
    else if (strcmp(unit, "%") == 0)
        g->relative = 1;
    else
        return -1;
    if (strcmp(g->name, "total") == 0 && !g->relative)
        return -1;
    if (strcmp(g->name, "frame") == 0 && g->relative)
        return -1;
    g->text = s;
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

/* Evaluate the gates; print the Markdown summary.  Returns 1 if a gate failed. */
static int report(struct diff_ctx *d, FILE *md, const char *base, const char *new_)
{
    const struct pf_table *nt = &d->names[1];
    struct reg *regs = calloc(nt->n ? nt->n : 1, sizeof(*regs));
    size_t nr = 0;
    int failed = 0;
    double tot_pct =
        d->total[0] > 0 ? (double)((d->total[1] - d->total[0]) * 100 / d->total[0]) : 0;

    if (regs == NULL)
        return -1;
    for (size_t i = 0; i < nt->cap; i++) {
        const struct pf_entry *e = nt->slots[i].e;
        if (e == NULL)
            continue;
        regs[nr++] = (struct reg){e, share(d, 0, e->key, e->len), share(d, 1, e->key, e->len)};
    }
    qsort(regs, nr, sizeof(*regs), cmp_reg);
    if (md) {
        fputs("## perf-fold diff: ", md);
        sf_text_md_code(md, base, strlen(base), 0);
        fputs(" → ", md);
        sf_text_md_code(md, new_, strlen(new_), 0);
        fputs("\n\n", md);
        fprintf(md, "Samples: base ");
        print_count(md, d->total[0]);
        fprintf(md, ", new ");
        print_count(md, d->total[1]);
        fprintf(md, " (%+.1f %%).\n\n### Top regressions (inclusive share growth)\n\n", tot_pct);
        fprintf(md, "| frame | base %% | new %% | change (pt) |\n|---|---:|---:|---:|\n");
        for (size_t i = 0, shown = 0; i < nr && shown < (size_t)d->top; i++) {
            if (regs[i].s1 - regs[i].s0 <= 0)
                break;
            fputs("| ", md);
            sf_text_md_code(md, regs[i].e->key,
                            sf_text_utf8_cut(regs[i].e->key, regs[i].e->len, 200), SF_TEXT_CELL);
            fprintf(md, " | %.2f | %.2f | %+.2f |\n", regs[i].s0, regs[i].s1,
                    regs[i].s1 - regs[i].s0);
            shown++;
        }
        if (d->ngates)
            fprintf(md, "\n### Gate\n\n");
    }
    for (int g = 0; g < d->ngates; g++) {
        const struct gate *gt = &d->gates[g];
        char what[320] = "", code[256], text[256];
        int bad = 0;
        if (strcmp(gt->name, "total") == 0) {
            bad = tot_pct > gt->limit;
            snprintf(what, sizeof(what), "total samples %+.1f %%", tot_pct);
        } else if (strcmp(gt->name, "frame") == 0) {
            bad = nr > 0 && regs[0].s1 - regs[0].s0 > gt->limit;
            if (nr && sf_text_md_code_str(code, sizeof(code), regs[0].e->key, regs[0].e->len, 0))
                snprintf(what, sizeof(what), "largest growth %s %+.2f pt", code,
                         regs[0].s1 - regs[0].s0);
        } else {
            size_t l = strlen(gt->name);
            double s0 = share(d, 0, gt->name, l), s1 = share(d, 1, gt->name, l);
            double ch =
                gt->relative ? (s0 > 0 ? (s1 / s0 - 1) * 100 : (s1 > 0 ? INFINITY : 0)) : s1 - s0;
            bad = ch > gt->limit;
            sf_text_md_code_str(code, sizeof(code), gt->name, l, 0);
            snprintf(what, sizeof(what), "%s %.2f %% → %.2f %% (%+.2f %s)", code, s0, s1, ch,
                     gt->relative ? "%" : "pt");
        }
        failed |= bad;
        sf_text_md_code_str(text, sizeof(text), gt->text, strlen(gt->text), 0);
        if (md)
            fprintf(md, "- %s %s: %s\n", bad ? "**FAIL**" : "ok", text, what);
    }
    free(regs);
    return failed;
}

static int write_diff(struct diff_ctx *d)
{
    struct pf_entry **v;

    if (fold_table_sorted(&d->stacks, &v))
        return -1;
    for (size_t i = 0; i < d->stacks.n; i++) {
        struct counts *c = &d->cnt[v[i]->db_id - 1];
        long double c0 = c->c[0];
        if (d->normalize && d->total[0] != d->total[1] && d->total[0] > 0)
            c0 = floorl(c0 * d->total[1] / d->total[0]);
        fwrite(v[i]->key, 1, v[i]->len, stdout);
        putchar(' ');
        print_count(stdout, c0);
        putchar(' ');
        print_count(stdout, c->c[1]);
        putchar('\n');
    }
    for (int side = 0; side < 2; side++)
        if (inclusive(d, side, v, d->stacks.n)) {
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

int diff_main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"normalize", no_argument, NULL, 'n'},     {"strip-hex", no_argument, NULL, 's'},
        {"fail-if", required_argument, NULL, 'f'}, {"summary", required_argument, NULL, 'S'},
        {"top", required_argument, NULL, 't'},     {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0},
    };
    struct diff_ctx d;
    FILE *md = NULL;
    int ch, rc = SF_EXIT_OK, failed;
    int64_t top;

    memset(&d, 0, sizeof(d));
    d.top = 10;
    sf_buf_init(&d.tmp, 1 << 24);
    sf_arena_init(&d.stacks.keys, 1 << 20, PF_TABLE_MAX);
    sf_arena_init(&d.names[0].keys, 1 << 20, PF_TABLE_MAX);
    sf_arena_init(&d.names[1].keys, 1 << 20, PF_TABLE_MAX);
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, "nsqh", lo, NULL)) != -1) {
        switch (ch) {
        case 'n':
            d.normalize = 1;
            break;
        case 's':
            d.striphex = 1;
            break;
        case 'q':
            d.quiet = 1;
            break;
        case 'S':
            d.summary = optarg;
            break;
        case 'h':
            diff_free(&d);
            return usage(NULL);
        case 't':
            if (sf_opt_i64(optarg, 0, 100000, &top))
                return diff_free(&d), usage("--top takes a number");
            d.top = (int)top;
            break;
        case 'f':
            if (d.ngates == MAX_GATES || parse_gate(&d.gates[d.ngates], optarg))
                return diff_free(&d),
                       usage("bad --fail-if expression (e.g. 'frame>+5pt', 'total>+10%')");
            d.ngates++;
            break;
        default:
            return diff_free(&d), usage("unknown option");
        }
    }
    if (argc - optind != 2)
        return diff_free(&d), usage("needs BASE and NEW folded files");
    if (read_folded(&d, 0, argv[optind]) || read_folded(&d, 1, argv[optind + 1]) ||
        write_diff(&d)) {
        diff_free(&d);
        return SF_EXIT_USAGE;
    }
    if (d.summary && (md = fopen(d.summary, "w")) == NULL) {
        fprintf(stderr, "%s diff: %s: cannot write: %s\n", PF_TOOL, d.summary, strerror(errno));
        diff_free(&d);
        return SF_EXIT_USAGE;
    }
    failed = report(&d, md ? md : (d.quiet ? NULL : stderr), argv[optind], argv[optind + 1]);
    if (md && fclose(md) != 0)
        rc = SF_EXIT_USAGE;
    if (fflush(stdout) != 0 || failed < 0 || d.bad)
        rc = SF_EXIT_USAGE;
    else if (failed)
        rc = SF_EXIT_FINDINGS;
    diff_free(&d);
    return rc;
}
