/* fg.h - the structures the flamegraph tool's files share.
 *
 * Data flow:
 *
 *   folded lines --folded.c--> frames of one stack + counts
 *                --layout.c--> frame tree (merged like flamegraph.pl: byte-wise line
 *                              order, or input order with --flamechart)
 *                --layout.c--> list of drawn frames (narrower than --minwidth elided)
 *                --svg.c / json.c--> SVG, d3-flame-graph JSON or speedscope JSON
 *
 * Reference for every output fact: brendangregg/FlameGraph flamegraph.pl (commit 41fee1f);
 * its code is not copied, its output format is matched.
 */
#ifndef FG_H
#define FG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sf_buf.h"
#include "sf_err.h"
#include "sf_map.h"

enum fg_format { FG_FMT_SVG, FG_FMT_JSON, FG_FMT_SPEEDSCOPE };

/* Command-line options, with flamegraph.pl's defaults. */
struct fg_opts {
    const char *title, *subtitle, *fonttype, *countname, *nametype;
    const char *colors, *bgcolors, *notes, *encoding, *nameattr, *palfile;
    int width;       /* --width, pixels */
    int frameheight; /* --height */
    double fontsize, fontwidth;
    double minwidth;    /* number part of --minwidth */
    int minwidth_pct;   /* --minwidth ended in '%' */
    int minwidth_given; /* --minwidth was on the command line */
    double factor, total;
    int hash, random, cp, reverse, inverted, flamechart, negate;
    enum fg_format format;
    uint64_t seed; /* --seed for --random (0 = from the clock) */
    int quiet, strict;
    uint32_t max_depth; /* --max-depth: frames past it drawn as one "[… K frames]" (0: none) */
    uint64_t max_size;  /* --max-size: the most bytes of output, estimated before writing */
};

#define FG_MAX_DEPTH 1024
#define FG_MAX_SIZE  (UINT64_C(256) << 20)

/* Interned frame names: ids are dense from 0; id 0 is the empty name (the root). */
struct fg_names {
    char *text; /* all names, each NUL-terminated */
    size_t text_len, text_cap;
    uint32_t *off; /* off[id] = start of name id in text */
    uint32_t *len; /* len[id] = its length in bytes */
    uint32_t count, cap;
    struct sf_map map; /* sf_hash(name) -> id + 1 */
};

/* One node of the merged tree (sorted mode): the frames of every stack that share a
 * prefix.  Node 0 is the root ("all"). */
struct fg_node {
    uint32_t name;
    uint32_t parent;
    uint32_t first_child; /* UINT32_MAX = none; unordered until layout sorts them */
    uint32_t next_sibling;
    double self;   /* counts of the lines that end here */
    double total;  /* self + children, filled by layout */
    double tdelta; /* differential: delta of the first line ending here */
    uint8_t term;  /* 1 if some line ends here */
    uint8_t tdiff; /* that first line had two count columns */
    uint8_t chain; /* --colors chain: 1 = the "--" after the first part, 2 = waker frame */
    uint32_t tkey; /* differential: name id of the counts text of the line giving tdelta */
};

/* A frame as drawn: one box of the flame graph. */
struct fg_frame {
    uint32_t name;
    uint32_t depth; /* 0 = root */
    double stime, etime;
    double delta;
    int has_delta;
};

/* The frame tree being built, in either mode. */
struct fg_layout {
    struct fg_names names;
    int flamechart;
    /* sorted mode */
    struct fg_node *nodes;
    uint32_t nnodes, cap_nodes;
    struct sf_map children; /* sf_hash_u64(parent << 32 | name) -> node + 1 */
    uint32_t *path;         /* node ids of the previous stack (prefix reuse) */
    uint32_t path_len, path_cap;
    /* flamechart mode: frames still open, and closed frames kept so far */
    struct fg_frame *open;
    uint32_t open_len, open_cap;
    struct fg_frame *closed;
    size_t nclosed, cap_closed;
    double prune_px; /* conservative on-the-fly pruning (pixels per unit known later) */
    int prune_pct;
    double prune_width; /* image width minus padding */
    /* both */
    double time;     /* sum of counts so far (second column for differential lines) */
    double maxdelta; /* largest |delta| of a line, at least 1 */
    int any_delta;
    int chain;       /* --colors chain: order lines as they were before the rewrite */
    const char *key; /* the text after the stack of the line being added (its counts) */
    size_t key_len;
    uint64_t lines;
};

/* The previous line's stack, so that the next line only scans what differs. */
struct fg_prev {
    char *text;
    size_t len, cap;
    uint32_t *ends; /* end offset of each frame (before trailing empties are dropped) */
    size_t nframes, fcap;
};

/* The whole run. */
struct fg_ctx {
    struct fg_opts opt;
    struct fg_layout lay;
    struct sf_buf scratch;  /* per-line rewriting: chain annotation */
    struct sf_buf scratch2; /* per-line rewriting: --reverse */
    struct sf_buf keybuf;   /* per-line: the counts as --reverse rewrites them */
    int chain;              /* --colors chain */
    const char **frames;    /* frames of the current line */
    size_t *frame_lens;
    size_t frames_cap;
    struct fg_prev prev; /* the last stack added */
    uint64_t bad_lines;
    uint64_t cut_stacks;          /* stacks deeper than --max-depth */
    char cut_name[48];            /* the frame that stands for the cut ones, this line's */
    double count_sum, count_sum2; /* of the last and the first count column: < 2^63 */
    uint64_t rand_state;          /* --random */
    struct fg_palmap *palmap;     /* --cp */
    struct fg_nameattr *attrs;    /* --nameattr */
    FILE *out;
};

/* ---- render.c ---- */

/* flamegraph.pl's defaults into o. */
void fg_opts_defaults(struct fg_opts *o);

/* Set up ctx for the options opt (copied), writing to out.  Returns 0 or SF_E_NOMEM;
 * fg_ctx_free() is needed either way. */
int fg_ctx_init(struct fg_ctx *ctx, const struct fg_opts *opt, FILE *out);
void fg_ctx_free(struct fg_ctx *ctx);

/* Lay out what was added and write the SVG or JSON; first_input names a speedscope
 * profile.  With no counts, writes flamegraph.pl's empty graph and returns 2.  Returns
 * the exit status (errors printed as "flamegraph: ..."). */
int fg_render(struct fg_ctx *ctx, const char *first_input);

/* Say on stderr, as tool, how many stacks --max-depth cut (nothing when none); limit
 * names the limit ("--max-depth" or NULL: "N frames"), more is appended (or NULL). */
void fg_note_cut(const struct fg_ctx *ctx, const char *tool, const char *limit, const char *more);

/* ---- opts.c ---- */

/* Parse the command line into o (whose defaults the caller set): returns the index of the
 * first input in argv, -1 after a usage error was printed, -2 when --help or --version was
 * answered. */
int opts_parse(int argc, char **argv, struct fg_opts *o);

/* ---- folded.c ---- */

/* Stream one input ("-" = stdin) into the layout, line by line (sf_line).  Malformed lines
 * are reported as "flamegraph: FILE:LINE:COL: msg" (the first 10) and counted in
 * ctx->bad_lines.  Returns 0, or 2 (exit status) on an unreadable input, --strict stop or
 * out of memory, after printing why. */
int folded_read_file(struct fg_ctx *ctx, const char *path);

/* Parse one folded line ("a;b;c 12" or differential "a;b;c 12 15") and add it to the
 * layout.  Returns 1 when added, 0 for a line flamegraph.pl would ignore (err filled with
 * the reason and the column), or SF_E_NOMEM / SF_E_LIMIT. */
int folded_add_line(struct fg_ctx *ctx, char *line, size_t len, struct sf_err *err);

/* Find the trailing count of s[0..len) as flamegraph.pl's /^(.*)\s+?(\d+(?:\.\d*)?)$/
 * does: returns 1 with *stack_len and the count, 0 when there is none. */
int folded_split_count(const char *s, size_t len, size_t *stack_len, double *count);

/* ---- layout.c ---- */

/* Set up an empty tree (flamechart: input order, no sorting).  Returns 0 or SF_E_NOMEM. */
int layout_init(struct fg_layout *l, int flamechart);
void layout_free(struct fg_layout *l);

/* Intern a name; returns its id or UINT32_MAX when out of memory. */
uint32_t names_intern(struct fg_names *n, const char *s, size_t len);
void names_free(struct fg_names *n);
static inline const char *names_get(const struct fg_names *n, uint32_t id, size_t *len)
{
    if (len)
        *len = n->len[id];
    return n->text + n->off[id];
}

/* Add one stack (frames leaf-last, without the root) with its count; the first `same`
 * frames are known to equal the previous stack's (0 = unknown); sep_at is the index of the
 * "--" frame the chain rewrite put after the first part (SIZE_MAX: not chain); diff says
 * whether the line had two columns, delta = second - first.  Returns 0 or SF_E_NOMEM. */
int layout_add(struct fg_layout *l, const char *const *frames, const size_t *lens, size_t n,
               size_t same, size_t sep_at, double count, int diff, double delta);

/* Finish the tree and list the frames at least min_time wide, parents before children.
 * timemax is the width of the root (--total or the sum of counts).  *out is malloc'ed
 * (caller frees); *depthmax is the deepest kept frame.  Returns 0 or SF_E_NOMEM. */
int layout_frames(struct fg_layout *l, double timemax, double min_time, struct fg_frame **out,
                  size_t *n, uint32_t *depthmax);

/* Pruning hint for --flamechart: frames narrower than (px or pct) of the final total are
 * dropped as soon as it is certain. */
void layout_set_prune(struct fg_layout *l, double minwidth, int pct, double drawable_width);

/* ---- palette.c ---- */

/* Colour of a frame: writes "rgb(r,g,b)" into buf.  Applies --hash, --random, --cp and the
 * palette named by opt->colors, like flamegraph.pl's color(). */
void palette_color(struct fg_ctx *ctx, const char *name, size_t len, char *buf, size_t bufsz);

/* Differential colour for delta against maxdelta (red = grew, blue = shrank). */
void palette_color_scale(const struct fg_opts *opt, double delta, double maxdelta, char *buf,
                         size_t bufsz);

/* The hash palette's vector hash of a name (flamegraph.pl namehash). */
double palette_namehash(const char *name, size_t len);

/* flamegraph.pl's default hue: Perl srand(sum of code points); rand(). */
double palette_seeded_rand(const char *name, size_t len);

/* --cp: load the palette file if it exists.  Returns 0 or SF_E_IO / SF_E_NOMEM. */
int palette_map_load(struct fg_ctx *ctx, const char *path, struct sf_err *err);
/* --cp: write every colour used back to the file, sorted by name.  Returns 0 or SF_E_IO. */
int palette_map_save(struct fg_ctx *ctx, const char *path, struct sf_err *err);
void palette_map_free(struct fg_ctx *ctx);

/* ---- svg.c ---- */

/* Write the SVG for the frames to ctx->out.  Returns 0 or SF_E_IO. */
int svg_write(struct fg_ctx *ctx, const struct fg_frame *frames, size_t n, uint32_t depthmax,
              double timemax);
/* The "no valid input" SVG flamegraph.pl writes for empty input. */
int svg_write_empty(struct fg_ctx *ctx);

/* --nameattr FILE: per-function SVG attributes.  Returns 0 or SF_E_IO/MALFORMED. */
int svg_nameattr_load(struct fg_ctx *ctx, const char *path, struct sf_err *err);
void svg_nameattr_free(struct fg_ctx *ctx);

/* Append s[0..len) to f with XML escaping of & < > and, if quot, "; sf_text_xml_esc
 * replaces what XML forbids and bytes that are not UTF-8 (docs/output-safety.md). */
void svg_escape(FILE *f, const char *s, size_t len, int quot);

/* ---- json.c ---- */

/* d3-flame-graph hierarchy {"name","value","children"} of the frames. */
int json_write_d3(struct fg_ctx *ctx, const struct fg_frame *frames, size_t n);
/* speedscope file (one sampled profile) of the frames. */
int json_write_speedscope(struct fg_ctx *ctx, const struct fg_frame *frames, size_t n,
                          const char *profile_name);

/* The tool's command line (main.c); its main() is generated, and spanfold links it too. */
int flamegraph_main(int argc, char **argv);

#endif
