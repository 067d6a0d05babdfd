/* opts.c - flamegraph's command line: flamegraph.pl's options with their defaults and
 * checks (Getopt::Long style: --opt VALUE, --opt=VALUE, -opt), plus --format, --palfile,
 * --seed, --strict, --quiet.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "fg.h"
#include "sf_opt.h"

static void usage(FILE *f)
{
    fputs("usage: flamegraph [options] [FILE...|-] > graph.svg\n"
          "  --title TEXT       heading (default \"Flame Graph\", \"Icicle Graph\", \"Flame "
          "Chart\")\n"
          "  --subtitle TEXT    second heading\n"
          "  --width N          image width in pixels (1200)\n"
          "  --height N         frame height in pixels (16)\n"
          "  --minwidth N[%]    omit frames narrower than N pixels or N% of the total (0.1)\n"
          "  --fonttype FONT    (Verdana)   --fontsize N (12)   --fontwidth N (0.59)\n"
          "  --countname TEXT   count unit (samples)   --nametype TEXT  (Function:)\n"
          "  --colors PALETTE   hot mem io wakeup chain java js perl red green blue aqua\n"
          "                     yellow purple orange (hot)\n"
          "  --bgcolors COLOR   yellow blue green grey or #rrggbb\n"
          "  --hash             colours keyed by a hash of the name\n"
          "  --random           random colours (--seed N makes them repeatable)\n"
          "  --cp               consistent palette kept in --palfile FILE (palette.map)\n"
          "  --reverse          reverse the stacks   --inverted  icicle graph\n"
          "  --flamechart       keep input order (time), do not merge across lines\n"
          "  --negate           swap differential hues (blue grew, red shrank)\n"
          "  --factor N         scale counts   --total N  width of the root in counts\n"
          "  --notes TEXT       notes comment in the SVG   --encoding ENC  XML encoding\n"
          "  --nameattr FILE    per-function SVG attributes (NAME<TAB>attr=value...)\n"
          "  --format F         svg (default), json (d3-flame-graph) or speedscope\n"
          "  --strict           stop at the first malformed line\n"
          "  --max-depth N      frames past N-1 drawn as one '[… K frames]' frame (1024; 0: none)\n"
          "  --max-size BYTES   refuse output estimated larger (268435456; 0: none)\n"
          "  --quiet, --help, --version\n",
          f);
}

enum {
    O_TITLE = 256,
    O_SUB,
    O_WIDTH,
    O_HEIGHT,
    O_MINW,
    O_FONT,
    O_FSIZE,
    O_FWIDTH,
    O_COUNT,
    O_NAMET,
    O_COLORS,
    O_BG,
    O_HASH,
    O_RANDOM,
    O_CP,
    O_PALFILE,
    O_REV,
    O_INV,
    O_CHART,
    O_NEG,
    O_FACTOR,
    O_NOTES,
    O_TOTAL,
    O_ENC,
    O_ATTR,
    O_FORMAT,
    O_SEED,
    O_QUIET,
    O_STRICT,
    O_MAXDEPTH,
    O_MAXSIZE,
    O_HELP,
    O_VERSION
};

static const struct option longopts[] = {
    {"title", 1, 0, O_TITLE},
    {"subtitle", 1, 0, O_SUB},
    {"width", 1, 0, O_WIDTH},
    {"height", 1, 0, O_HEIGHT},
    {"minwidth", 1, 0, O_MINW},
    {"fonttype", 1, 0, O_FONT},
    {"fontsize", 1, 0, O_FSIZE},
    {"fontwidth", 1, 0, O_FWIDTH},
    {"countname", 1, 0, O_COUNT},
    {"nametype", 1, 0, O_NAMET},
    {"colors", 1, 0, O_COLORS},
    {"bgcolors", 1, 0, O_BG},
    {"hash", 0, 0, O_HASH},
    {"random", 0, 0, O_RANDOM},
    {"cp", 0, 0, O_CP},
    {"palfile", 1, 0, O_PALFILE},
    {"reverse", 0, 0, O_REV},
    {"inverted", 0, 0, O_INV},
    {"flamechart", 0, 0, O_CHART},
    {"negate", 0, 0, O_NEG},
    {"factor", 1, 0, O_FACTOR},
    {"notes", 1, 0, O_NOTES},
    {"total", 1, 0, O_TOTAL},
    {"encoding", 1, 0, O_ENC},
    {"nameattr", 1, 0, O_ATTR},
    {"format", 1, 0, O_FORMAT},
    {"seed", 1, 0, O_SEED},
    {"quiet", 0, 0, O_QUIET},
    {"strict", 0, 0, O_STRICT},
    {"max-depth", 1, 0, O_MAXDEPTH},
    {"max-size", 1, 0, O_MAXSIZE},
    {"help", 0, 0, O_HELP},
    {"h", 0, 0, O_HELP}, /* exact: -h is not -height or -hash */
    {"version", 0, 0, O_VERSION},
    {0, 0, 0, 0}};

static int bad_usage(const char *msg, const char *arg)
{
    fprintf(stderr, "flamegraph: %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    fputs("flamegraph: try 'flamegraph --help'\n", stderr);
    return -1;
}

static int known_palette(const char *c)
{
    static const char *const names[] = {"hot",  "mem",  "io",     "wakeup", "chain",
                                        "java", "js",   "perl",   "red",    "green",
                                        "blue", "aqua", "yellow", "purple", "orange"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(c, names[i]) == 0)
            return 1;
    return 0;
}

/* Number options; returns -1 after printing on a bad value. */
static int num_opt(int c, const char *arg, struct fg_opts *o)
{
    int64_t i;
    double d;

    if (c == O_MAXDEPTH || c == O_MAXSIZE) {
        if (sf_opt_i64(arg, 0, c == O_MAXDEPTH ? UINT32_MAX : INT64_MAX, &i) < 0 ||
            (c == O_MAXDEPTH && i == 1))
            return bad_usage(c == O_MAXDEPTH ? "--max-depth takes 0 (no limit) or 2 or more"
                                             : "--max-size takes a number of bytes (0: no limit)",
                             arg);
        if (c == O_MAXDEPTH)
            o->max_depth = (uint32_t)i;
        else
            o->max_size = (uint64_t)i;
        return 0;
    }
    if (c == O_WIDTH || c == O_HEIGHT || c == O_SEED) {
        if (sf_opt_i64(arg, c == O_SEED ? 0 : 1, c == O_SEED ? INT64_MAX : 1000000, &i) < 0)
            return bad_usage("expected a whole number", arg);
        if (c == O_WIDTH)
            o->width = (int)i;
        else if (c == O_HEIGHT)
            o->frameheight = (int)i;
        else
            o->seed = (uint64_t)i;
        return 0;
    }
    if (c == O_MINW) {
        size_t n = strlen(arg);
        o->minwidth_pct = n > 0 && arg[n - 1] == '%';
        char tmp[64];
        if (n == 0 || n - (size_t)o->minwidth_pct >= sizeof(tmp) ||
            strspn(arg, "0123456789.") != n - (size_t)o->minwidth_pct)
            return bad_usage("--minwidth expects a number of pixels or a percentage", arg);
        memcpy(tmp, arg, n - (size_t)o->minwidth_pct);
        tmp[n - (size_t)o->minwidth_pct] = '\0';
        if (sf_opt_double(tmp, &o->minwidth) < 0)
            return bad_usage("--minwidth expects a number", arg);
        o->minwidth_given = 1;
        return 0;
    }
    if (sf_opt_double(arg, &d) < 0 || !(d > 0) || d > 1e12)
        return bad_usage("expected a positive number", arg);
    if (c == O_FSIZE)
        o->fontsize = d;
    else if (c == O_FWIDTH)
        o->fontwidth = d;
    else if (c == O_FACTOR)
        o->factor = d;
    else
        o->total = d;
    return 0;
}

int opts_parse(int argc, char **argv, struct fg_opts *o)
{
    int c;

    while ((c = getopt_long_only(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_TITLE:
            o->title = optarg;
            break;
        case O_SUB:
            o->subtitle = optarg;
            break;
        case O_FONT:
            o->fonttype = optarg;
            break;
        case O_COUNT:
            o->countname = optarg;
            break;
        case O_NAMET:
            o->nametype = optarg;
            break;
        case O_COLORS:
            o->colors = optarg;
            break;
        case O_BG:
            o->bgcolors = optarg;
            break;
        case O_NOTES:
            o->notes = optarg;
            break;
        case O_ENC:
            o->encoding = optarg;
            break;
        case O_ATTR:
            o->nameattr = optarg;
            break;
        case O_PALFILE:
            o->palfile = optarg;
            break;
        case O_HASH:
            o->hash = 1;
            break;
        case O_RANDOM:
            o->random = 1;
            break;
        case O_CP:
            o->cp = 1;
            break;
        case O_REV:
            o->reverse = 1;
            break;
        case O_INV:
            o->inverted = 1;
            break;
        case O_CHART:
            o->flamechart = 1;
            break;
        case O_NEG:
            o->negate = 1;
            break;
        case O_QUIET:
            o->quiet = 1;
            break;
        case O_STRICT:
            o->strict = 1;
            break;
        case O_HELP:
            usage(stdout);
            return -2;
        case O_VERSION:
            sf_opt_print_version(stdout, "flamegraph");
            return -2;
        case O_FORMAT:
            if (strcmp(optarg, "svg") == 0)
                o->format = FG_FMT_SVG;
            else if (strcmp(optarg, "json") == 0)
                o->format = FG_FMT_JSON;
            else if (strcmp(optarg, "speedscope") == 0)
                o->format = FG_FMT_SPEEDSCOPE;
            else
                return bad_usage("--format is svg, json or speedscope", optarg);
            break;
        case '?':
            return bad_usage("unknown option or missing argument", NULL);
        default:
            if (num_opt(c, optarg, o) < 0)
                return -1;
        }
    }
    if (!known_palette(o->colors))
        return bad_usage("unknown --colors palette", o->colors);
    if (!o->bgcolors) /* flamegraph.pl: the background follows the palette */
        o->bgcolors = strcmp(o->colors, "mem") == 0                                   ? "green"
                      : strstr("io wakeup chain", o->colors)                          ? "blue"
                      : strstr("red green blue aqua yellow purple orange", o->colors) ? "grey"
                                                                                      : "yellow";
    if (strcmp(o->bgcolors, "yellow") && strcmp(o->bgcolors, "blue") &&
        strcmp(o->bgcolors, "green") && strcmp(o->bgcolors, "grey") &&
        !(o->bgcolors[0] == '#' && strlen(o->bgcolors) == 7 && !strpbrk(o->bgcolors, "\"<&")))
        return bad_usage("--bgcolors is yellow, blue, green, grey or #rrggbb", o->bgcolors);
    if (o->notes && (strpbrk(o->notes, "<>") || strstr(o->notes, "--")))
        return bad_usage("--notes can't contain <, > or --", o->notes);
    if (!o->title)
        o->title = o->flamechart ? "Flame Chart" : o->inverted ? "Icicle Graph" : "Flame Graph";
    return optind;
}
