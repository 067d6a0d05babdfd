/* Unit tests: lib/sf_gate (parser and its columns, units, intervals against the
 * published examples, verdicts with confidence, escaping, exit status, reports). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sf_gate.h"
#include "tap.h"

static void parse_ok(void)
{
    struct sf_gate g;
    struct sf_err e;

    TAP_EQ_INT(sf_gate_parse(&g, "frame>+5pt", &e), 0, "frame>+5pt parses");
    TAP_OK(strcmp(g.subject, "frame") == 0 && g.op == SF_GATE_GT && g.mode == SF_GATE_CHANGE &&
               g.unit == SF_GATE_U_PT && fabs(g.value - 0.05) < 1e-12,
           "frame>+5pt: a change of 0.05 (points) in frame");
    sf_gate_parse(&g, "p99>250ms", &e);
    TAP_OK(g.mode == SF_GATE_LEVEL && g.unit == SF_GATE_U_MS && g.value == 250,
           "p99>250ms: a level of 250 ms");
    sf_gate_parse(&g, "p99>1.5s", &e);
    TAP_OK(g.value == 1500, "1.5s is 1500 ms");
    sf_gate_parse(&g, "p99>=200us", &e);
    TAP_OK(g.op == SF_GATE_GE && fabs(g.value - 0.2) < 1e-12, ">= and 200us = 0.2 ms");
    sf_gate_parse(&g, "p99<-10%", &e);
    TAP_OK(g.op == SF_GATE_LT && g.mode == SF_GATE_RELATIVE && fabs(g.value + 0.1) < 1e-12,
           "p99<-10%%: a relative change of -0.1");
    sf_gate_parse(&g, "total>10%", &e);
    TAP_OK(g.mode == SF_GATE_RELATIVE && fabs(g.value - 0.1) < 1e-12,
           "%% without a sign is relative too (one meaning everywhere)");
    sf_gate_parse(&g, "b>+1%pt", &e);
    TAP_OK(g.unit == SF_GATE_U_PT && g.mode == SF_GATE_CHANGE, "%%pt is pt");
    sf_gate_parse(&g, "std::vector<int>::push_back>+2pt", &e);
    TAP_EQ_STR(g.subject, "std::vector<int>::push_back", "a frame name may hold '<' and '>'");
    sf_gate_parse(&g, "total>5000samples", &e);
    TAP_OK(g.unit == SF_GATE_U_SAMPLES && g.value == 5000, "samples is a unit");
    TAP_EQ_INT(sf_gate_parse(&g, "p99 >  250ms", &e), 0, "spaces around the operator");
    TAP_OK(strcmp(g.subject, "p99") == 0 && g.op == SF_GATE_GT && g.value == 250,
           "'p99 >  250ms' is 'p99>250ms'");
    sf_gate_parse(&g, "sampled_share where baggage.env = \"a<b\" < 10pt", &e);
    TAP_OK(strcmp(g.subject, "sampled_share where baggage.env = \"a<b\"") == 0 &&
               g.op == SF_GATE_LT && fabs(g.value - 0.1) < 1e-12,
           "a 'where' subject keeps its quoted value, '<' inside it too");
    TAP_EQ_INT(sf_gate_parse(&g, "drift", &e), 0, "a bare predicate parses");
    TAP_OK(g.op == SF_GATE_NONE && strcmp(g.subject, "drift") == 0, "bare: no operator");
}

static void parse_err(const char *text, unsigned col, const char *msg)
{
    struct sf_gate g;
    struct sf_err e;
    int rc = sf_gate_parse(&g, text, &e);

    TAP_OK(rc == SF_E_USAGE && e.col == col && strstr(e.msg, msg) != NULL,
           "'%s': error at column %u: %s (got column %u: %s)", text, col, msg, e.col, e.msg);
}

static void check_units(void)
{
    struct sf_gate g;
    struct sf_err e;
    char out[256];

    sf_gate_parse(&g, "frame>5ms", &e);
    TAP_EQ_INT(sf_gate_check(&g, SF_GATE_K_SHARE, &e), SF_E_USAGE, "a share does not take ms");
    TAP_EQ_INT(e.col, 8, "the unit's column is named");
    sf_gate_errfmt("perf-fold diff", g.text, &e, out, sizeof(out));
    TAP_EQ_STR(out, "perf-fold diff: gate 'frame>5ms': column 8: 'frame' takes pt or %",
               "the one error format");
    sf_gate_parse(&g, "error_rate>0.01", &e);
    TAP_EQ_INT(sf_gate_check(&g, SF_GATE_K_SHARE, &e), SF_E_USAGE, "a share needs pt or %%");
    sf_gate_parse(&g, "p99>250", &e);
    TAP_EQ_INT(sf_gate_check(&g, SF_GATE_K_MS, &e), 0, "a bare number on a duration is ms");
    sf_gate_parse(&g, "p99>5pt", &e);
    TAP_EQ_INT(sf_gate_check(&g, SF_GATE_K_MS, &e), SF_E_USAGE, "a duration does not take pt");
    TAP_EQ_INT(sf_gate_check(&g, SF_GATE_K_ANY, &e), 0, "a --series column takes any unit");
    sf_gate_parse(&g, "total>+20%", &e);
    TAP_EQ_INT(sf_gate_check(&g, SF_GATE_K_COUNT, &e), 0, "%% fits every kind");
}

static void intervals(void)
{
    double lo, hi;

    TAP_OK(fabs(sf_gate_z(0.95) - 1.959964) < 1e-5, "z(0.95) = 1.959964 (%.7f)", sf_gate_z(0.95));
    TAP_OK(fabs(sf_gate_z(0.99) - 2.575829) < 1e-5, "z(0.99) = 2.575829 (%.7f)", sf_gate_z(0.99));
    TAP_OK(fabs(sf_gate_z(0.5) - 0.6744898) < 1e-6, "z(0.5) = 0.6744898 (%.7f)", sf_gate_z(0.5));
    TAP_OK(fabs(sf_gate_z(0.01) - 0.0125335) < 1e-6, "z(0.01) = 0.0125335 (%.7f)", sf_gate_z(0.01));
    TAP_OK(fabs(sf_gate_z(0.999999) - 4.8916385) < 1e-6, "z(0.999999) = 4.8916385 (%.7f)",
           sf_gate_z(0.999999));
    TAP_OK(isnan(sf_gate_z(1)) && isnan(sf_gate_z(0)), "z outside (0, 1) is NaN");
    /* Newcombe (1998), Table I example: 81/263 */
    sf_gate_wilson(81.0 / 263, 263, sf_gate_z(0.95), &lo, &hi);
    TAP_OK(fabs(lo - 0.2553) < 5e-5 && fabs(hi - 0.3662) < 5e-5,
           "Wilson 81/263: 0.2553..0.3662 (Newcombe 1998) (%.4f..%.4f)", lo, hi);
    /* Newcombe (1998), Table II example (a): 56/70 - 48/80, method 10 */
    sf_gate_newcombe(48.0 / 80, 80, 56.0 / 70, 70, sf_gate_z(0.95), &lo, &hi);
    TAP_OK(fabs(lo - 0.0524) < 5e-5 && fabs(hi - 0.3339) < 5e-5,
           "Newcombe hybrid 56/70 - 48/80: 0.0524..0.3339 (%.4f..%.4f)", lo, hi);
}

static void verdicts(void)
{
    struct sf_gate g;
    struct sf_err e;
    struct sf_gate_res r;
    struct sf_gate_obs small = {0.30, 0.32, 300, 300}, big = {0.30, 0.32, 300000, 300000};
    char out[160];

    sf_gate_parse(&g, "frame>+1pt", &e);
    TAP_EQ_INT(sf_gate_eval(&g, &small, 0, &r), SF_GATE_FAIL,
               "+2 pt on 300 samples, no confidence: fail");
    TAP_EQ_INT(sf_gate_eval(&g, &small, 0.99, &r), SF_GATE_INCONCLUSIVE,
               "+2 pt on 300 samples at 0.99: inconclusive");
    TAP_OK(r.has_ci && r.lo < 0.01 && r.hi > 0.02, "its interval holds the threshold");
    TAP_EQ_INT(sf_gate_eval(&g, &big, 0.99, &r), SF_GATE_FAIL,
               "+2 pt on 300,000 samples at 0.99: fail");
    sf_gate_format(&g, &r, out, sizeof(out));
    TAP_OK(strncmp(out, "+2 pt [", 7) == 0 && strstr(out, "at 99 % confidence"),
           "formatted in points with the interval: %s", out);
    sf_gate_parse(&g, "frame>+5pt", &e);
    TAP_EQ_INT(sf_gate_eval(&g, &big, 0.99, &r), SF_GATE_PASS, "+2 pt passes frame>+5pt");
    struct sf_gate_obs few = {0.5, 0.9, 4, 100};
    TAP_EQ_INT(sf_gate_eval(&g, &few, 0.99, &r), SF_GATE_ERROR,
               "a confidence on fewer than %d samples is an error", SF_GATE_MIN_N);
    TAP_EQ_INT(sf_gate_eval(&g, &few, 0, &r), SF_GATE_FAIL,
               "without one the point estimate decides");
    sf_gate_parse(&g, "c>+300%", &e);
    struct sf_gate_obs rel = {0.10, 0.50, 0, 0};
    TAP_EQ_INT(sf_gate_eval(&g, &rel, 0, &r), SF_GATE_FAIL, "0.10 -> 0.50 is +400 %%");
    TAP_OK(fabs(r.est - 4) < 1e-12, "relative change 4");
    sf_gate_parse(&g, "p99<-10%", &e);
    struct sf_gate_obs fall = {100, 80, 0, 0}, rise = {100, 120, 0, 0};
    TAP_EQ_INT(sf_gate_eval(&g, &fall, 0, &r), SF_GATE_FAIL, "a 20 %% fall crosses <-10%%");
    TAP_EQ_INT(sf_gate_eval(&g, &rise, 0, &r), SF_GATE_PASS, "a rise does not");
    sf_gate_parse(&g, "x>+10%", &e);
    struct sf_gate_obs zero = {0, 1, 0, 0};
    TAP_EQ_INT(sf_gate_eval(&g, &zero, 0, &r), SF_GATE_FAIL, "a rise from 0 is unbounded");
    TAP_EQ_INT(sf_gate_worse(SF_GATE_FAIL, SF_GATE_ERROR), SF_GATE_ERROR, "error is worst");
    TAP_EQ_INT(sf_gate_worse(SF_GATE_INCONCLUSIVE, SF_GATE_PASS), SF_GATE_INCONCLUSIVE,
               "inconclusive is worse than pass");
}

static void reports(void)
{
    struct sf_gate_entry e[3] = {
        {"frame>+5pt", SF_GATE_PASS, "largest growth a +1 pt"},
        {"x|y>+1pt", SF_GATE_INCONCLUSIVE, "<b>\xff: +2 pt"},
        {"nosuch>+1pt", SF_GATE_ERROR, "no frame named nosuch"},
    };
    struct sf_gate_run run = {"perf-fold diff", "a → b", 0, 0.99, e, 2};
    char *buf = NULL;
    size_t len = 0;
    FILE *f;

    TAP_EQ_INT(sf_gate_exit(&run), 0, "pass + inconclusive (passes): exit 0");
    run.inconclusive_fails = 1;
    TAP_EQ_INT(sf_gate_exit(&run), 1, "--on-inconclusive fail: exit 1");
    run.n = 3;
    TAP_EQ_INT(sf_gate_exit(&run), 2, "an error: exit 2");
    f = open_memstream(&buf, &len);
    sf_gate_write_md(f, &run);
    fclose(f);
    TAP_OK(strstr(buf,
                  "| `x\\|y>+1pt` | **inconclusive (fails)** | \\<b\\>\xef\xbf\xbd\\: \\+2 pt |") !=
               NULL,
           "Markdown row: the gate a code span with '|' escaped, the detail inert text");
    TAP_OK(strstr(buf, "(confidence 99 %)") != NULL, "the confidence is in the heading");
    free(buf);
    f = open_memstream(&buf, &len);
    sf_gate_write_junit(f, &run);
    fclose(f);
    TAP_OK(strstr(buf, "tests=\"3\" failures=\"1\" errors=\"1\"") != NULL, "JUnit counts");
    TAP_OK(strstr(buf, "<testcase classname=\"perf-fold diff\" name=\"frame&gt;+5pt\">") != NULL,
           "one testcase per gate, name escaped");
    TAP_OK(strstr(buf, "<error message=\"error\">no frame named nosuch</error>") != NULL,
           "an error gate is <error>");
    TAP_OK(
        strstr(buf, "<failure message=\"inconclusive\">&lt;b&gt;\xef\xbf\xbd: +2 pt</failure>") !=
            NULL,
        "an inconclusive gate counted as failed is <failure>, its detail escaped");
    free(buf);
}

int main(void)
{
    parse_ok();
    parse_err("frame>+5xx", 9, "unknown unit 'xx'");
    parse_err(">5pt", 1, "expected a metric or frame before '>'");
    parse_err("frame>", 7, "expected a number after '>'");
    parse_err("p99>=+abc", 7, "expected a number after '>='");
    parse_err("p99>1.2.3ms", 5, "bad number '1.2.3'");
    parse_err("", 1, "empty gate");
    check_units();
    intervals();
    verdicts();
    reports();
    return tap_done();
}
