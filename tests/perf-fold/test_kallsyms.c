/* test_kallsyms.c - perf-fold/kallsyms.c, the kernel's symbols read from a kallsyms file:
 * the lines perf keeps (T W D B in either case, a nonzero address), the name of each
 * address by perf's rule (each symbol ends where the next begins, the last a page past
 * its own; of several at one address the last one read), modules, files not in address
 * order, a last line without its newline, a file with every address hidden, and random
 * files against a plain model of that rule; a regular file read in pieces (lines across
 * them, a line longer than the buffer) and a pipe read whole. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../perf-fold/kallsyms.h"
#include "tap.h"

static char path[] = "/tmp/test_kallsyms.XXXXXX";

static struct pf_kallsyms *load_text(const char *text)
{
    FILE *f = fopen(path, "w");

    fputs(text, f);
    fclose(f);
    return pf_ks_load(path);
}

/* text read from a pipe, as /proc/kallsyms is read (whole, into memory) */
static struct pf_kallsyms *load_piped(const char *text)
{
    char fifo[64];
    struct pf_kallsyms *k;
    pid_t pid;

    snprintf(fifo, sizeof(fifo), "%s.fifo", path);
    unlink(fifo);
    if (mkfifo(fifo, 0600) != 0)
        return NULL;
    if ((pid = fork()) == 0) {
        FILE *f = fopen(fifo, "w");
        if (f)
            fputs(text, f);
        _exit(f && fclose(f) == 0 ? 0 : 1);
    }
    k = pf_ks_load(fifo);
    waitpid(pid, NULL, 0);
    unlink(fifo);
    return k;
}

/* "NAME" or "NAME MODULE" for addr, "-" for none */
static const char *named(struct pf_kallsyms *k, uint64_t addr)
{
    static char out[512];
    const char *name, *mod;

    if (pf_ks_find(k, addr, &name, &mod) != 1)
        return "-";
    snprintf(out, sizeof(out), "%s%s%s", name, mod ? " " : "", mod ? mod : "");
    return out;
}

/* The model: every kept line as read, the one named at addr found by a scan. */
struct line {
    uint64_t start;
    char type;
    char name[16];
};

static const char *model(const struct line *l, size_t n, uint64_t addr)
{
    size_t best = SIZE_MAX;
    uint64_t next = UINT64_MAX, top = 0;

    for (size_t i = 0; i < n; i++) {
        int up = l[i].type & ~0x20;
        if (l[i].start == 0 || (up != 'T' && up != 'W' && up != 'D' && up != 'B'))
            continue;
        if (l[i].start > top)
            top = l[i].start;
        if (l[i].start <= addr && (best == SIZE_MAX || l[i].start >= l[best].start))
            best = i; /* the highest start at or below addr, the last one read of it */
        if (l[i].start > addr && l[i].start < next)
            next = l[i].start;
    }
    if (best == SIZE_MAX)
        return "-";
    if (next == UINT64_MAX && addr >= ((top + 4095) & ~(uint64_t)4095) + 4096)
        return "-"; /* past the last symbol's page */
    return l[best].name;
}

/* text with a line of n bytes of name in the middle */
static struct pf_kallsyms *load_long(size_t n, const char *type)
{
    FILE *f = fopen(path, "w");

    fputs("ffffffff81000000 T before\n", f);
    fprintf(f, "ffffffff81000100 %s ", type);
    for (size_t i = 0; i < n; i++)
        fputc('a' + (int)(i % 26), f);
    fputs("\tafter_the_tab\nffffffff81000200 T after\n", f);
    fclose(f);
    return pf_ks_load(path);
}

int main(void)
{
    struct pf_kallsyms *k;
    int fd = mkstemp(path);

    if (fd < 0)
        return 1;
    close(fd);

    static const char basic[] = "ffffffff81000000 T _stext\n"
                                "ffffffff81000000 T startup_64\n"
                                "ffffffff81000100 t local_fn\n"
                                "ffffffff81000200 r some_rodata\n"
                                "ffffffff81000300 W weak_fn\n"
                                "ffffffff81000400 d a_datum\n"
                                "ffffffff81000500 b a_bss\n"
                                "ffffffffc0000000 t mod_fn\t[nf_tables]\n"
                                "ffffffffc0000100 T mod_last\t[nf_tables]";
    k = load_text(basic);
    TAP_OK(k && pf_ks_count(k) == 7, "T t W d b kept, r skipped, aliases at one address as one");
    TAP_EQ_STR(named(k, 0xffffffff81000010), "startup_64", "of two at one address, the last read");
    TAP_EQ_STR(named(k, 0xffffffff81000250), "local_fn",
               "a skipped type's address is its predecessor's (it ends at the next kept)");
    TAP_EQ_STR(named(k, 0xffffffff81000300), "weak_fn", "a symbol's own start");
    TAP_EQ_STR(named(k, 0xffffffffc0000004), "mod_fn [nf_tables]", "a module's symbol, its module");
    TAP_EQ_STR(named(k, 0xffffffffc0000100), "mod_last [nf_tables]",
               "the last line, with no newline after it");
    TAP_EQ_STR(named(k, 0xffffffffc0001fff), "mod_last [nf_tables]",
               "the last symbol ends a page past its own page");
    TAP_EQ_STR(named(k, 0xffffffffc0002000), "-", "...and not after");
    TAP_EQ_STR(named(k, 0xffffffff80ffffff), "-", "below the first symbol: none");
    pf_ks_free(k);

    k = load_text("ffffffff81000300 T c\nffffffff81000100 T a\nffffffff81000200 T b1\n"
                  "ffffffff81000200 T b2\nffffffff81000100 T a2\n");
    TAP_OK(k && pf_ks_count(k) == 3, "lines out of order: sorted, one symbol an address");
    TAP_EQ_STR(named(k, 0xffffffff81000150), "a2", "out of order: the last read of an address");
    TAP_EQ_STR(named(k, 0xffffffff81000250), "b2", "out of order: the next address's");
    pf_ks_free(k);

    k = load_text("0000000000000000 T _stext\n0000000000000000 t other\n");
    TAP_OK(k && pf_ks_count(k) == 0, "addresses hidden (kptr_restrict): no symbols");
    pf_ks_free(k);
    k = load_text("");
    TAP_OK(k && pf_ks_count(k) == 0 && strcmp(named(k, 1), "-") == 0, "an empty file: none");
    pf_ks_free(k);
    k = load_text("garbage\n\n ffff T x\nffffffff81000000 T\nffffffff81000000 Tx y\n"
                  "ffffffff81000000 T ok\n");
    TAP_OK(k && pf_ks_count(k) == 1 && strcmp(named(k, 0xffffffff81000000), "ok") == 0,
           "lines that are not symbol lines skipped, the good one kept");
    pf_ks_free(k);
    /* the 16-digit lines are read a word at a time: every other shape the general way */
    k = load_text("FFFFFFFF81000000 T upper\nffffffff8100001G T not_hex\n"
                  "ffffffff:1000020 T colon\nffffffff81000030 T\tname_after_tab\n"
                  "0ffffffff81000040 T seventeen\nffffffff8100050 T fifteen\n"
                  "fFfFfFfF81000060 t mixed\nffffffff81000070 T s");
    TAP_OK(k && pf_ks_count(k) == 5, "16 hex digits in either case kept, a line with a non-digit "
                                     "among them skipped, other widths read as before");
    TAP_EQ_STR(named(k, 0xffffffff81000020), "upper", "upper case digits: that address");
    TAP_EQ_STR(named(k, 0xffffffff81000045), "seventeen", "17 digits, the first 0: that address");
    TAP_EQ_STR(named(k, 0xffffffff81000065), "mixed", "mixed case digits: that address");
    TAP_EQ_STR(named(k, 0xffffffff81000070), "s", "a last line of 20 bytes, no newline: read");
    TAP_EQ_STR(named(k, 0x0ffffffff8100050), "fifteen", "15 digits: that (smaller) address");
    pf_ks_free(k);
    /* a file read in pieces, a line read again when looked up */
    k = load_long(2000, "T");
    {
        const char *name = "", *mod = "";
        TAP_OK(k && pf_ks_count(k) == 3 && pf_ks_find(k, 0xffffffff81000150, &name, &mod) == 1 &&
                   strlen(name) == 2000 && strncmp(name, "abc", 3) == 0 && mod &&
                   strcmp(mod, "after_the_tab") == 0,
               "a name of 2,000 bytes: read whole, with its module");
    }
    pf_ks_free(k);
    k = load_long(100000, "T");
    TAP_OK(k && pf_ks_count(k) == 2 && strcmp(named(k, 0xffffffff81000150), "before") == 0 &&
               strcmp(named(k, 0xffffffff81000200), "after") == 0,
           "a line longer than the reading buffer: skipped, the lines around it kept");
    pf_ks_free(k);
    k = load_long(200000, "r");
    TAP_OK(k && pf_ks_count(k) == 2, "...and one of a skipped type likewise");
    pf_ks_free(k);
    { /* many pieces: every line kept whichever piece it starts or ends in */
        FILE *f = fopen(path, "w");
        int all = 1;
        for (unsigned i = 0; i < 40000; i++)
            fprintf(f, "%016llx %c n%u%s\n", 0xffffffff81000000ull + 16ull * i, "Tt"[i % 2], i,
                    i % 7 ? "" : "\t[mod]");
        fclose(f);
        k = pf_ks_load(path);
        for (unsigned i = 0; k && all && i < 40000; i += 37) {
            char want[32];
            snprintf(want, sizeof(want), "n%u%s", i, i % 7 ? "" : " [mod]");
            all = strcmp(named(k, 0xffffffff81000000ull + 16ull * i + 3), want) == 0;
        }
        TAP_OK(k && pf_ks_count(k) == 40000 && all,
               "40,000 lines over many pieces: each kept, each named");
        pf_ks_free(k);
    }
    { /* not a regular file (/proc/kallsyms): read whole into memory, the same answers */
        struct pf_kallsyms *f = load_text(basic);
        int alike = 1;
        k = load_piped(basic);
        for (uint64_t a = 0xffffffff80fffff0u; k && f && alike && a < 0xffffffffc0002100u;
             a += a < 0xffffffff81001000u || a >= 0xffffffffc0000000u ? 3 : 0x1000000) {
            char from_pipe[512]; /* named() answers in one static buffer */
            snprintf(from_pipe, sizeof(from_pipe), "%s", named(k, a));
            alike = strcmp(from_pipe, named(f, a)) == 0;
        }
        TAP_OK(k && pf_ks_count(k) == 7 && alike,
               "through a pipe: the same symbols, every address named as from the file");
        pf_ks_free(f);
        pf_ks_free(k);
    }
    errno = 0;
    TAP_OK(pf_ks_load("/nonexistent/kallsyms") == NULL && errno == ENOENT,
           "a file that is not there: NULL, errno set");

    { /* random files against the model */
        int agree = 1;
        srand(7);
        for (int round = 0; round < 200 && agree; round++) {
            struct line l[40];
            size_t n = 1 + (size_t)rand() % 40;
            char text[40 * 64], *p = text;
            for (size_t i = 0; i < n; i++) {
                static const char types[] = "TtWwDdBbRrAaU";
                l[i].start = rand() % 8 ? 0xffffffff81000000u + (uint64_t)(rand() % 64) * 16 : 0;
                l[i].type = types[rand() % (int)(sizeof(types) - 1)];
                snprintf(l[i].name, sizeof(l[i].name), "s%zu", i);
                p += sprintf(p, rand() % 2 ? "%016llx %c %s\n" : "%016llX %c %s\n",
                             (unsigned long long)l[i].start, l[i].type, l[i].name);
            }
            if ((k = load_text(text)) == NULL)
                agree = 0;
            for (uint64_t a = 0xffffffff80fffff0u; agree && a < 0xffffffff81002100u; a += 5)
                agree = strcmp(named(k, a), model(l, n, a)) == 0;
            pf_ks_free(k);
        }
        TAP_OK(agree, "200 random files: every address named as the model of perf's rule names it");
    }
    unlink(path);
    return tap_done();
}
