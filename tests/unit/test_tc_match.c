/* Unit tests: the header-name matcher generated from a header list (lib/sf_tc_match.h).
 *
 * A list of its own, with names of lengths the real list does not have (1, 5, 9, 12 beside
 * another 12-byte name with the same first letter, 24, 40, 63), and the real list through
 * sf_tracectx_header_id: every listed name is matched, in any case, to its own id; every
 * name one byte away from a listed one (changed, added, removed) is not, unless it is
 * itself listed. */
#include <stdlib.h>

#include "sf_tc_match.h"
#include "tap.h"

#define TEST_HEADERS(X)                                                                            \
    X(ONE, "a", "A", 0, 0)                                                                         \
    X(FIVE, "x-abc", "X-Abc", 0, 0)                                                                \
    X(NINE, "x-9-digit", "X-9-Digit", 0, 0)                                                        \
    X(REQ, "x-request-id", "X-Request-Id", 0, 0)                                                   \
    X(REQ2, "x-request-by", "X-Request-By", 0, 0)                                                  \
    X(LONG24, "x-cloud-trace-context-24", "X-Cloud-Trace-Context-24", 0, 0)                        \
    X(LONG40, "x-forty-bytes-long-header-name-for-tests", "-", 0, 0)                               \
    X(LONG63, "x-sixty-three-byte-long-header-name-the-longest-a-list-may-have", "-", 0, 0)

enum {
#define ID_(id, lower, shown, fmt, add) SF_TC_H_##id,
    TEST_HEADERS(ID_)
#undef ID_
        N_TEST
};

SF_TC_DEFINE_MATCHER(test_match, TEST_HEADERS)

static const struct {
    const char *lower, *shown;
} test_rows[] = {
#define ROW_(id, lower, shown, fmt, add) {lower, shown},
    TEST_HEADERS(ROW_)
#undef ROW_
};

/* The real list, as sf_tracectx.c numbers it. */
static const char *const real_rows[] = {
#define ROW_(id, lower, shown, fmt, add) lower,
    SF_CTX_HEADERS(ROW_)
#undef ROW_
};
#define N_REAL ((int)(sizeof(real_rows) / sizeof(real_rows[0])))

static int real_match(const char *s, size_t n)
{
    return sf_tracectx_header_id(s, n);
}

/* The answer by definition: the row whose name equals s ignoring ASCII case. */
static int ref(const char *const *rows, int nrows, const char *s, size_t n)
{
    for (int i = 0; i < nrows; i++)
        if (strlen(rows[i]) == n && strncasecmp(rows[i], s, n) == 0)
            return i;
    return -1;
}

/* Every name of rows matched (lowercase, uppercase, shown); every one-byte change, one
 * more byte and one fewer matched exactly when the reference matches.  Returns failures. */
static int sweep(int (*match)(const char *, size_t), const char *const *rows, int nrows)
{
    static const char subst[] = {'a', 'Z', '-', '0', '\r', '@', '`', '{', 0x7f, (char)0xc1, 0};
    char s[80];
    int bad = 0;

    for (int i = 0; i < nrows; i++) {
        size_t n = strlen(rows[i]);

        memcpy(s, rows[i], n + 1);
        bad += match(s, n) != i;
        for (size_t k = 0; k < n; k++)
            s[k] = (char)(s[k] >= 'a' && s[k] <= 'z' ? s[k] - 32 : s[k]);
        bad += match(s, n) != i;
        for (size_t k = 0; k < n; k++)
            for (size_t c = 0; c < sizeof(subst); c++) {
                char was = s[k];
                s[k] = subst[c];
                bad += match(s, n) != ref(rows, nrows, s, n);
                s[k] = was;
            }
        s[n] = 'x';
        bad += match(s, n + 1) != ref(rows, nrows, s, n + 1);
        bad += n > 1 && match(s, n - 1) != ref(rows, nrows, s, n - 1);
        bad += n > 1 && match(s + 1, n - 1) != ref(rows, nrows, s + 1, n - 1);
    }
    return bad;
}

static const char *test_lower[N_TEST];

static int test_match_fn(const char *s, size_t n)
{
    return test_match(s, n);
}

int main(void)
{
    int bad;

    for (int i = 0; i < N_TEST; i++)
        test_lower[i] = test_rows[i].lower;
    TAP_OK(strlen(test_lower[N_TEST - 1]) == 63, "the longest test name has 63 bytes");
    for (int i = 0; i < N_TEST; i++) {
        const char *shown = test_rows[i].shown;
        TAP_EQ_INT(test_match(test_lower[i], strlen(test_lower[i])), i, "test list: %s matched",
                   test_lower[i]);
        if (shown[0] != '-')
            TAP_EQ_INT(test_match(shown, strlen(shown)), i, "test list: %s matched", shown);
    }
    bad = sweep(test_match_fn, test_lower, N_TEST);
    TAP_OK(bad == 0, "test list: one byte away from a name matches only another name (%d)", bad);
    TAP_OK(test_match("", 0) == -1 && test_match("x-request-i", 11) == -1, "test list: no prefix");

    for (int i = 0; i < N_REAL; i++) {
        size_t k, n = strlen(real_rows[i]);
        for (k = 0; k < n; k++)
            if (!((real_rows[i][k] >= 'a' && real_rows[i][k] <= 'z') ||
                  (real_rows[i][k] >= '0' && real_rows[i][k] <= '9') || real_rows[i][k] == '-'))
                break;
        TAP_OK(n >= 1 && n <= 63 && k == n, "SF_CTX_HEADERS: %s is 1-63 of [a-z0-9-]",
               real_rows[i]);
        TAP_EQ_INT(real_match(real_rows[i], n), i, "SF_CTX_HEADERS: %s matched", real_rows[i]);
    }
    bad = sweep(real_match, real_rows, N_REAL);
    TAP_OK(bad == 0, "SF_CTX_HEADERS: one byte away from a name matches only another name (%d)",
           bad);
    return tap_done();
}
