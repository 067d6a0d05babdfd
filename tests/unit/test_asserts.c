/* Unit tests: the documented preconditions of the lib/ contracts are asserted.  Each case
 * breaks one in a child process, which must die by SIGABRT (assert), not run on, not
 * crash some other way; one case keeps it and must exit 0.  Asserts are on in every build
 * the Makefile makes (none sets NDEBUG); a build with NDEBUG fails here on purpose. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sf_arena.h"
#include "sf_buf.h"
#include "sf_map.h"
#include "sf_rd.h"
#include "tap.h"

static int eq_any(const void *val, const void *key)
{
    (void)val;
    (void)key;
    return 0;
}

static int eq_ptr(const void *val, const void *key)
{
    return val == key;
}

static int dummy = 1;

static void map_cap_not_pow2(void)
{
    struct sf_map m;
    sf_map_init_cap(&m, 48);
}

static void map_probe_empty(void)
{
    struct sf_map m = {0};
    (void)sf_map_probe(&m, 1, eq_any, NULL);
}

static void map_fill_null(void)
{
    struct sf_map m = {0};
    sf_map_reserve(&m, 1);
    sf_map_fill(&m, sf_map_probe(&m, 1, eq_any, NULL), 1, NULL);
}

static void map_fill_taken(void)
{
    struct sf_map m = {0};
    struct sf_map_slot *s;
    sf_map_reserve(&m, 1);
    s = sf_map_probe(&m, 1, eq_any, NULL);
    sf_map_fill(&m, s, 1, &dummy);
    sf_map_fill(&m, s, 1, &dummy); /* the same slot again */
}

static void map_fill_no_room(void)
{
    struct sf_map m;
    sf_map_init_cap(&m, 4);
    sf_map_reserve(&m, 1); /* room for 2 in 4 slots */
    for (int i = 0; i < 3; i++)
        sf_map_fill(&m, sf_map_probe(&m, (uint64_t)i, eq_any, NULL), (uint64_t)i, &dummy);
}

static void map_remove_empty_slot(void)
{
    struct sf_map m = {0};
    sf_map_reserve(&m, 1);
    sf_map_remove(&m, sf_map_probe(&m, 1, eq_any, NULL));
}

static void map_kept(void)
{
    static int v[100];
    struct sf_map m;
    sf_map_init_cap(&m, 4);
    for (int i = 0; i < 100; i++) {
        sf_map_reserve(&m, 1);
        sf_map_fill(&m, sf_map_probe(&m, sf_hash_u64((uint64_t)i), eq_ptr, &v[i]),
                    sf_hash_u64((uint64_t)i), &v[i]);
    }
    sf_map_remove(&m, sf_map_probe(&m, sf_hash_u64(5), eq_ptr, &v[5]));
    if (m.n != 99 || sf_map_find(&m, sf_hash_u64(6), eq_ptr, &v[6]) != &v[6])
        _exit(1);
    sf_map_free(&m);
}

static void buf_consume_past(void)
{
    struct sf_buf b;
    sf_buf_init(&b, 100);
    sf_buf_append(&b, "abc", 3);
    sf_buf_consume(&b, 4);
}

static void buf_append_null(void)
{
    struct sf_buf b;
    sf_buf_init(&b, 100);
    sf_buf_append(&b, NULL, 3);
}

static void buf_past_max(void)
{
    struct sf_buf b;
    sf_buf_init(&b, 2);
    b.len = 3; /* a buffer whose len passed its max */
    sf_buf_append(&b, "x", 1);
}

static void arena_not_init(void)
{
    struct sf_arena a = {0};
    (void)sf_arena_alloc(&a, 8);
}

static void arena_strndup_null(void)
{
    struct sf_arena a;
    sf_arena_init(&a, 0, 0);
    (void)sf_arena_strndup(&a, NULL, 4);
}

static void rd_init_null(void)
{
    struct sf_rd rd;
    sf_rd_init(&rd, NULL, 4, 0);
}

static void rd_fill_have_past_want(void)
{
    struct sf_rd rd;
    uint8_t buf[8];
    sf_rd_init(&rd, "abcdefgh", 8, 0);
    (void)sf_rd_fill(&rd, buf, 5, 4);
}

/* Run f in a child: its wait status. */
static int run(void (*f)(void))
{
    int st;
    pid_t pid;

    fflush(stdout);
    if ((pid = fork()) == 0) {
        /* the assert message is expected: keep it off the TAP output */
        if (freopen("/dev/null", "w", stderr) == NULL)
            _exit(3);
        f();
        _exit(0);
    }
    if (pid < 0 || waitpid(pid, &st, 0) != pid)
        return -1;
    return st;
}

int main(void)
{
    static const struct {
        void (*f)(void);
        const char *what;
    } cases[] = {
        {map_cap_not_pow2, "sf_map_init_cap: first not a power of two"},
        {map_probe_empty, "sf_map_probe on a map with no array (no reserve)"},
        {map_fill_null, "sf_map_fill with a NULL value"},
        {map_fill_taken, "sf_map_fill into an occupied slot"},
        {map_fill_no_room, "sf_map_fill past half full (no reserve)"},
        {map_remove_empty_slot, "sf_map_remove of an empty slot"},
        {buf_consume_past, "sf_buf_consume of more than len"},
        {buf_append_null, "sf_buf_append of NULL with n > 0"},
        {buf_past_max, "sf_buf with len past max"},
        {arena_not_init, "sf_arena_alloc on an arena never initialised"},
        {arena_strndup_null, "sf_arena_strndup of NULL with n > 0"},
        {rd_init_null, "sf_rd_init of NULL with len > 0"},
        {rd_fill_have_past_want, "sf_rd_fill with have > want"},
    };
    int st;

#ifdef NDEBUG
    TAP_OK(0, "asserts are on (this build defines NDEBUG)");
#endif
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        st = run(cases[i].f);
        TAP_OK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT, "%s: assert (status %#x)", cases[i].what,
               st);
    }
    st = run(map_kept);
    TAP_OK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "a map used by its contract runs (status %#x)",
           st);
    return tap_done();
}
