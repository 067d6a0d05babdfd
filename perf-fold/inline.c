/* inline.c - --inline: expand a frame into its inline chain with binutils'
 * addr2line, as stackcollapse-perf.pl does (same command, same parsing, same
 * fallback through `nm` when addr2line answers "??"), but without a shell and
 * with every (pc, module) asked once.
 *
 *   addr2line -a PC -e MODULE -i -f -s -C   prints
 *     0x00000000000011a9          <- the address (dropped)
 *     inner_fn                    <- function, then file:line, innermost first
 *     t.c:5
 *     main
 *     t.c:12
 *   -> "main;inner_fn" (with --context "main:t.c:12;inner_fn:t.c:5")
 *
 * PC and MODULE come from the input.  binutils reads an argument "@FILE" as more
 * options from FILE (and prints what it did not understand: as root, the first word
 * of /etc/shadow), and "-x" is an option, so a module is passed only when it is a
 * regular file, with "./" before a leading '@' or '-', and a PC only when it is hex.
 */
#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perf_fold.h"

extern char **environ;

struct kv {
    char *key; /* "pc\0module" */
    size_t klen;
    char *val;
};

struct pf_inline {
    struct sf_map a2l; /* sf_hash(key) -> struct kv */
    struct kv *nm;     /* one nm output per module, linear (few modules) */
    size_t nnm, nmcap;
};

char *pf_run(char *const argv[])
{
    int fd[2], st;
    pid_t pid;
    posix_spawn_file_actions_t fa;
    char *out = NULL;
    size_t len = 0, cap = 0;
    ssize_t r;

    if (pipe(fd))
        return NULL;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addclose(&fa, fd[1]);
    if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        close(fd[0]);
        close(fd[1]);
        return calloc(1, 1);
    }
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    for (;;) {
        if (len + 4096 + 1 > cap) {
            char *n = realloc(out, cap = 2 * cap + 8192);
            if (n == NULL)
                break;
            out = n;
        }
        r = read(fd[0], out + len, cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
    }
    close(fd[0]);
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (out)
        out[len] = 0;
    return out;
}

static char *dup_n(const char *p, size_t n)
{
    char *s = malloc(n + 1);

    if (s) {
        memcpy(s, p, n);
        s[n] = 0;
    }
    return s;
}

static const char *nm_text(struct pf_inline *in, const char *mod)
{
    char *argv[] = {"nm", (char *)mod, NULL};

    for (size_t i = 0; i < in->nnm; i++)
        if (strcmp(in->nm[i].key, mod) == 0)
            return in->nm[i].val;
    if (in->nnm == in->nmcap) {
        struct kv *n = realloc(in->nm, (in->nmcap = 2 * in->nmcap + 8) * sizeof(*n));
        if (n == NULL)
            return NULL;
        in->nm = n;
    }
    in->nm[in->nnm].key = dup_n(mod, strlen(mod));
    in->nm[in->nnm].val = pf_run(argv);
    if (in->nm[in->nnm].val == NULL)
        in->nm[in->nnm].val = calloc(1, 1);
    return in->nm[in->nnm++].val;
}

/* nm line "^([0-9a-f]+) . FUNC$" -> address of FUNC, 1 if found. */
static int nm_find(const char *text, const char *func, size_t fn, unsigned long long *addr)
{
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *e = strchr(l, '\n'), *p = l;
        size_t len = e ? (size_t)(e - l) : strlen(l);
        unsigned long long v = 0;
        while (p < l + len && ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
            v = v * 16 + (unsigned)(*p <= '9' ? *p - '0' : *p - 'a' + 10), p++;
        if (p == l || (size_t)(l + len - p) != 3 + fn || p[0] != ' ' || p[2] != ' ' ||
            memcmp(p + 3, func, fn) != 0)
            continue;
        *addr = v;
        return 1;
    }
    return 0;
}

/* Pair function and file lines into "outer;...;inner". */
static char *a2l_parse(char *o, int context)
{
    char *nl = strchr(o, '\n'), *res, *items[256];
    size_t n = 0, len = 0;
    const char *one = NULL;

    o = nl ? nl + 1 : o + strlen(o); /* s/^(.*\n){1}// */
    for (char *l = o; *l;) {
        char *e = strchr(l, '\n'), *d;
        if (e)
            *e = 0;
        if ((d = strstr(l, " (discriminator ")) != NULL) {
            char *q = d + 16;
            while (*q && *q != ' ' && *q != '\t' && *q != ')')
                q++;
            if (*q == ')' && q > d + 16)
                memmove(d, q + 1, strlen(q + 1) + 1);
        }
        if (one == NULL || *one == 0) {
            one = l;
        } else if (n < 256) {
            size_t k = strlen(one) + (context ? 1 + strlen(l) : 0);
            char *it = malloc(k + 1);
            if (it == NULL)
                break;
            snprintf(it, k + 1, context ? "%s:%s" : "%s", one, l);
            items[n++] = it;
            len += k + 1;
            one = "";
        }
        l = e ? e + 1 : l + strlen(l);
    }
    res = malloc(len + 1);
    if (res)
        res[0] = 0;
    for (size_t i = n, o2 = 0; i-- > 0;) {
        if (res) {
            size_t k = strlen(items[i]);
            if (o2)
                res[o2++] = ';';
            memcpy(res + o2, items[i], k + 1);
            o2 += k;
        }
        free(items[i]);
    }
    return res;
}

const char *binutils_file_arg(const char *mod, char *buf, size_t n)
{
    struct stat st;

    if (stat(mod, &st) != 0 || !S_ISREG(st.st_mode))
        return NULL;
    if (mod[0] != '@' && mod[0] != '-')
        return mod;
    return (size_t)snprintf(buf, n, "./%s", mod) < n ? buf : NULL;
}

static char *a2l(struct perf_fold_ctx *c, const char *pc, const char *rawfunc, const char *mod)
{
    char mbuf[4096];
    const char *marg = binutils_file_arg(mod, mbuf, sizeof(mbuf));
    char *argv[] = {"addr2line", "-a", (char *)pc, "-e", (char *)marg,
                    "-i",        "-f", "-s",       "-C", NULL};
    char *o, *res;
    const char *nl, *plus;

    /* an answer of nothing: the frame stays as it is */
    if (marg == NULL || pc[0] == 0 || strspn(pc, "0123456789abcdefABCDEFx") != strlen(pc))
        return calloc(1, 1);
    if ((o = pf_run(argv)) == NULL)
        return NULL;
    nl = strchr(o, '\n');
    if (strstr(nl ? nl + 1 : o + strlen(o), "??\n??:0") &&
        (plus = strstr(rawfunc, "+0x")) != NULL) {
        /* /^(.+)\+0x([0-9a-f]+)$/ : the last "+0x" with hex digits to the end */
        const char *last = NULL;
        for (const char *p = rawfunc + 1; (p = strstr(p, "+0x")) != NULL; p++)
            last = p;
        if (last && last > rawfunc && last[3] &&
            strspn(last + 3, "0123456789abcdef") == strlen(last + 3)) {
            const char *text = nm_text(c->inl, marg);
            unsigned long long base, off = strtoull(last + 3, NULL, 16);
            char npc[32];
            if (text && nm_find(text, rawfunc, (size_t)(last - rawfunc), &base)) {
                snprintf(npc, sizeof(npc), "0x%llx", base + off);
                free(o);
                return a2l(c, npc, "", mod);
            }
        }
    }
    res = a2l_parse(o, c->o.context);
    free(o);
    return res;
}

static int kv_eq(const void *val, const void *key)
{
    const struct kv *e = val, *k = key;

    return e->klen == k->klen && memcmp(e->key, k->key, k->klen) == 0;
}

const char *inline_lookup(struct perf_fold_ctx *c, const struct pf_str *pc,
                          const struct pf_str *rawfunc, const struct pf_str *mod)
{
    struct pf_inline *in = c->inl;
    struct kv k, *e;
    struct sf_map_slot *s;
    uint64_t h;
    char *rf;

    if (in == NULL && (in = c->inl = calloc(1, sizeof(*in))) == NULL)
        return NULL;
    if (sf_map_reserve(&in->a2l, 1) < 0)
        return NULL;
    k.klen = pc->n + 1 + mod->n;
    if ((k.key = malloc(k.klen + 1)) == NULL)
        return NULL;
    memcpy(k.key, pc->p, pc->n);
    k.key[pc->n] = 0;
    memcpy(k.key + pc->n + 1, mod->p, mod->n);
    k.key[k.klen] = 0;
    h = sf_hash(k.key, k.klen);
    s = sf_map_probe(&in->a2l, h, kv_eq, &k);
    if (s->val != NULL) {
        free(k.key);
        return ((struct kv *)s->val)->val;
    }
    rf = dup_n(rawfunc->p, rawfunc->n);
    k.val = rf ? a2l(c, k.key, rf, k.key + pc->n + 1) : NULL;
    free(rf);
    if (k.val == NULL || (e = malloc(sizeof(*e))) == NULL) {
        free(k.val);
        free(k.key);
        return NULL;
    }
    *e = k;
    sf_map_fill(&in->a2l, s, h, e);
    return e->val;
}

void inline_free(struct perf_fold_ctx *c)
{
    struct pf_inline *in = c->inl;
    struct sf_map_slot *s;

    if (in == NULL)
        return;
    for (size_t i = 0; (s = sf_map_next(&in->a2l, &i)) != NULL;) {
        struct kv *e = s->val;
        free(e->key);
        free(e->val);
        free(e);
    }
    sf_map_free(&in->a2l);
    for (size_t i = 0; i < in->nnm; i++) {
        free(in->nm[i].key);
        free(in->nm[i].val);
    }
    free(in->nm);
    free(in);
    c->inl = NULL;
}
