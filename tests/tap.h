/* tap.h - a tiny TAP test harness (no dependency).
 *
 *   #include "tap.h"
 *   int main(void) {
 *       TAP_OK(1 + 1 == 2, "addition");
 *       TAP_EQ_INT(f(), 3, "f returns 3");
 *       TAP_EQ_STR(g(), "x", "g returns x");
 *       TAP_SKIP("needs root");
 *       return tap_done();
 *   }
 *
 * Prints "ok N - name" / "not ok N - name" lines, "# ..." diagnostics, and at the
 * end "1..N" plus "N passed, N failed, N skipped".  A skip prints
 * "ok N - name # SKIP reason" and counts as skipped, never as passed.
 */
#ifndef SF_TAP_H
#define SF_TAP_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int tap_n, tap_pass, tap_fail, tap_skip;

static inline int tap_ok(int cond, const char *file, int line, const char *name)
{
    tap_n++;
    if (cond) {
        tap_pass++;
        printf("ok %d - %s\n", tap_n, name);
    } else {
        tap_fail++;
        printf("not ok %d - %s\n#   at %s:%d\n", tap_n, name, file, line);
    }
    fflush(stdout);
    return cond;
}

static inline void tap_skip_one(const char *name, const char *reason)
{
    tap_n++;
    tap_skip++;
    printf("ok %d - %s # SKIP %s\n", tap_n, name, reason);
}

static inline int tap_done(void)
{
    printf("1..%d\n%d passed, %d failed, %d skipped\n", tap_n, tap_pass, tap_fail, tap_skip);
    return tap_fail ? 1 : 0;
}

#define TAP_OK(cond, ...)                                                                          \
    do {                                                                                           \
        char tap_name_[512];                                                                       \
        snprintf(tap_name_, sizeof(tap_name_), __VA_ARGS__);                                       \
        tap_ok(!!(cond), __FILE__, __LINE__, tap_name_);                                           \
    } while (0)

#define TAP_EQ_INT(got, want, ...)                                                                 \
    do {                                                                                           \
        long long g_ = (long long)(got), w_ = (long long)(want);                                   \
        char tap_name_[512];                                                                       \
        snprintf(tap_name_, sizeof(tap_name_), __VA_ARGS__);                                       \
        if (!tap_ok(g_ == w_, __FILE__, __LINE__, tap_name_))                                      \
            printf("#   got %lld, want %lld\n", g_, w_);                                           \
    } while (0)

#define TAP_EQ_STR(got, want, ...)                                                                 \
    do {                                                                                           \
        const char *g_ = (got), *w_ = (want);                                                      \
        char tap_name_[512];                                                                       \
        int same_ = (g_ == NULL && w_ == NULL) || (g_ && w_ && strcmp(g_, w_) == 0);               \
        snprintf(tap_name_, sizeof(tap_name_), __VA_ARGS__);                                       \
        if (!tap_ok(same_, __FILE__, __LINE__, tap_name_))                                         \
            printf("#   got \"%s\", want \"%s\"\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)");       \
    } while (0)

#define TAP_SKIP(name, reason) tap_skip_one(name, reason)

#endif
