/* svg.c - the interactive SVG, laid out as flamegraph.pl lays it out.
 *
 * Geometry (all from flamegraph.pl's output): xpad 10; ypad1 = 3*fontsize (title),
 * ypad2 = 2*fontsize + 10 (details line), ypad3 = 2*fontsize more with a subtitle;
 * height = (depthmax + 1) * frameheight + ypad1 + ypad2 [+ ypad3].  A frame at depth d
 * spans y1 = height - ypad2 - (d+1)*frameheight + 1 .. y2 = height - ypad2 - d*frameheight
 * (inverted: y1 = ypad1 + d*frameheight .. y2 = y1 + frameheight - 1); x = 10 + t * (width
 * - 20) / total.  Each frame is
 *
 *   <g ><title>NAME (N samples, P%)</title><rect x y width height fill rx ry />
 *   <text x y >LABEL</text></g>
 *
 * inside <g id="frames">; text elements with ids title, subtitle, details, unzoom, search,
 * ignorecase and matched surround it.  The embedded script (written for spanfold) gives
 * hover details, click to zoom, reset zoom, regex search with the matched percentage,
 * Ctrl-F / Ctrl-I, and keeps zoom and search in the URL (?x=..&y=..&s=..).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fg.h"
#include "sf_text.h"

/* The browser side: no network, no external files.  The script is flamegraph/flamegraph.js;
 * the build makes it `static const char fg_script[]` (flamegraph/build.mk). */
#include "flamegraph_js.inc"

/* Perl's default number formatting (%.15g). */
static const char *pnum(double v, char *buf, size_t n)
{
    snprintf(buf, n, "%.15g", v);
    return buf;
}

void svg_escape(FILE *f, const char *s, size_t len, int quot)
{
    /* flamegraph.pl escapes '"' only where quot says, never '\''; what XML forbids and
     * bytes that are not UTF-8 are replaced (lib/sf_text) */
    sf_text_xml_esc(f, s, len, quot ? SF_TEXT_QUOT : 0);
}

/* Escape a NUL-terminated string. */
static void esc(FILE *f, const char *s)
{
    svg_escape(f, s, strlen(s), 1);
}

/* Drop a trailing annotation _[k] _[w] _[i] _[j]. */
static size_t strip_annotation(const char *s, size_t len)
{
    if (len >= 4 && s[len - 4] == '_' && s[len - 3] == '[' && s[len - 1] == ']' &&
        strchr("kwij", s[len - 2]) && s[len - 2])
        return len - 4;
    return len;
}

static size_t utf8_chars(const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++)
        n += ((unsigned char)s[i] & 0xc0) != 0x80;
    return n;
}

/* Byte length of the first chars characters of s. */
static size_t utf8_prefix(const char *s, size_t len, size_t chars)
{
    size_t i = 0, n = 0;
    for (; i < len; i++) {
        if (((unsigned char)s[i] & 0xc0) != 0x80 && n++ == chars)
            break;
    }
    return i;
}

/* "12345" -> "12,345" (perlfaq5), into out. */
static void commas(double v, char *out, size_t n)
{
    char digits[64];
    size_t len, k = 0, lead;

    snprintf(digits, sizeof(digits), "%.0f", v);
    len = strlen(digits);
    size_t sign = digits[0] == '-' || digits[0] == '+';
    lead = (len - sign) % 3;
    if (lead == 0)
        lead = 3;
    for (size_t i = 0; i < len && k + 2 < n; i++) {
        out[k++] = digits[i];
        if (i >= sign && i + 1 < len && (i + 1 - sign) >= lead && (i + 1 - sign - lead) % 3 == 0)
            out[k++] = ',';
    }
    out[k] = '\0';
}

/* ---- --nameattr ---- */

struct fg_nameattr {
    struct fg_names names; /* function names */
    char **attrs;          /* per name id: "k=v\tk=v..." */
    uint32_t cap;
};

int svg_nameattr_load(struct fg_ctx *ctx, const char *path, struct sf_err *err)
{
    FILE *f = fopen(path, "r");
    struct fg_nameattr *a;
    struct fg_layout tmp;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    uint64_t lineno = 0;

    if (!f)
        return sf_err_set(err, SF_E_IO, UINT64_MAX, "cannot read: %s", strerror(errno));
    if (!(a = calloc(1, sizeof(*a))) || layout_init(&tmp, 1) < 0) {
        fclose(f);
        free(a);
        return sf_err_set(err, SF_E_NOMEM, UINT64_MAX, "out of memory");
    }
    a->names = tmp.names;
    ctx->attrs = a;
    while ((n = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (n > 0 && line[n - 1] == '\n')
            line[--n] = '\0';
        char *tab = strchr(line, '\t');
        if (!tab) {
            free(line);
            fclose(f);
            err->unit = "line";
            err->unit_no = lineno;
            return sf_err_set(err, SF_E_MALFORMED, UINT64_MAX, "expected NAME<TAB>attr=value");
        }
        uint32_t id = names_intern(&a->names, line, (size_t)(tab - line));
        if (id == UINT32_MAX)
            break;
        if (id >= a->cap) {
            uint32_t c = a->cap ? a->cap * 2 : 64;
            while (c <= id)
                c *= 2;
            char **p = realloc(a->attrs, c * sizeof(*p));
            if (!p)
                break;
            memset(p + a->cap, 0, (c - a->cap) * sizeof(*p));
            a->attrs = p;
            a->cap = c;
        }
        free(a->attrs[id]);
        a->attrs[id] = strdup(tab + 1);
    }
    free(line);
    fclose(f);
    return 0;
}

void svg_nameattr_free(struct fg_ctx *ctx)
{
    struct fg_nameattr *a = ctx->attrs;

    if (!a)
        return;
    for (uint32_t i = 0; i < a->cap; i++)
        free(a->attrs[i]);
    free(a->attrs);
    names_free(&a->names);
    free(a);
    ctx->attrs = NULL;
}

/* Value of key in a "k=v\tk=v" list, or NULL; *vlen set. */
static const char *attr_get(const char *list, const char *key, size_t *vlen)
{
    size_t kl = strlen(key);

    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, '\t');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > kl && memcmp(p, key, kl) == 0 && p[kl] == '=') {
            *vlen = len - kl - 1;
            return p + kl + 1;
        }
        p = end ? end + 1 : NULL;
    }
    return NULL;
}

/* The frame's opening tag, with --nameattr attributes as flamegraph.pl writes them. */
static const char *group_open(struct fg_ctx *ctx, const char *name, size_t len, const char **title,
                              size_t *tlen)
{
    const char *list = NULL, *v;
    size_t vl;
    FILE *f = ctx->out;

    *title = NULL;
    if (ctx->attrs) {
        uint32_t id = names_intern(&ctx->attrs->names, name, len);
        if (id != UINT32_MAX && id < ctx->attrs->cap)
            list = ctx->attrs->attrs[id];
    }
    if (!list) {
        fputs("<g >\n", f);
        return "</g>\n";
    }
    int link = (v = attr_get(list, "href", &vl)) && vl > 0;
    if (link) {
        fprintf(f, "<a xlink:href=\"%.*s\"", (int)vl, v);
        if ((v = attr_get(list, "target", &vl)) && vl > 0)
            fprintf(f, " target=\"%.*s\"", (int)vl, v);
        else
            fputs(" target=\"_top\"", f);
        if ((v = attr_get(list, "a_extra", &vl)) && vl > 0)
            fprintf(f, " %.*s", (int)vl, v);
    } else {
        fputs("<g", f);
    }
    if ((v = attr_get(list, "id", &vl)))
        fprintf(f, " id=\"%.*s\"", (int)vl, v);
    if ((v = attr_get(list, "class", &vl)))
        fprintf(f, " class=\"%.*s\"", (int)vl, v);
    if ((v = attr_get(list, "g_extra", &vl)) && vl > 0)
        fprintf(f, " %.*s", (int)vl, v);
    fputs(link ? ">\n" : " >\n", f);
    if ((v = attr_get(list, "title", &vl)) && vl > 0) {
        *title = v;
        *tlen = vl;
    }
    return link ? "</a>\n" : "</g>\n";
}

static void svg_header(struct fg_ctx *ctx, double height)
{
    const struct fg_opts *o = &ctx->opt;
    char h[40];

    fprintf(ctx->out, "<?xml version=\"1.0\"");
    if (o->encoding) {
        fputs(" encoding=\"", ctx->out);
        esc(ctx->out, o->encoding);
        fputc('"', ctx->out);
    }
    pnum(height, h, sizeof(h));
    fprintf(ctx->out,
            " standalone=\"no\"?>\n"
            "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
            "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n"
            "<svg version=\"1.1\" width=\"%d\" height=\"%s\" onload=\"init(evt)\" "
            "viewBox=\"0 0 %d %s\" xmlns=\"http://www.w3.org/2000/svg\" "
            "xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
            "<!-- Flame graph drawn by spanfold flamegraph; layout and options follow "
            "FlameGraph's flamegraph.pl (https://github.com/brendangregg/FlameGraph). -->\n"
            "<!-- NOTES: %s -->\n",
            o->width, h, o->width, h, o->notes ? o->notes : "");
}

/* text element as flamegraph.pl's stringTTF writes it; s is escaped. */
static void text_el(FILE *f, const char *id, double x, double y, const char *s, const char *extra)
{
    char yb[40];

    fprintf(f, "<text %s%s%s x=\"%.2f\" y=\"%s\" %s>", id ? "id=\"" : "", id ? id : "",
            id ? "\"" : "", x, pnum(y, yb, sizeof(yb)), extra ? extra : "");
    esc(f, s);
    fputs("</text>\n", f);
}

int svg_write_empty(struct fg_ctx *ctx)
{
    svg_header(ctx, ctx->opt.fontsize * 5);
    text_el(ctx->out, NULL, (double)(ctx->opt.width / 2), ctx->opt.fontsize * 2,
            "ERROR: No valid input provided to flamegraph.", NULL);
    fputs("</svg>\n", ctx->out);
    fflush(ctx->out);
    return ferror(ctx->out) ? SF_E_IO : 0;
}

static void svg_prelude(struct fg_ctx *ctx, double height)
{
    const struct fg_opts *o = &ctx->opt;
    const char *bg1 = "#eeeeee", *bg2 = "#eeeeb0", *bg = o->bgcolors;
    FILE *f = ctx->out;
    char b1[40], b2[40];

    if (strcmp(bg, "blue") == 0)
        bg2 = "#e0e0ff";
    else if (strcmp(bg, "green") == 0)
        bg1 = "#eef2ee", bg2 = "#e0ffe0";
    else if (strcmp(bg, "grey") == 0)
        bg1 = "#f8f8f8", bg2 = "#e8e8e8";
    else if (bg[0] == '#')
        bg1 = bg2 = bg;
    fprintf(f,
            "<defs>\n\t<linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\" >\n"
            "\t\t<stop stop-color=\"%s\" offset=\"5%%\" />\n"
            "\t\t<stop stop-color=\"%s\" offset=\"95%%\" />\n\t</linearGradient>\n</defs>\n",
            bg1, bg2);
    fputs("<style type=\"text/css\">\n\ttext { font-family:", f);
    esc(f, o->fonttype);
    fprintf(f,
            "; font-size:%spx; fill:rgb(0,0,0); }\n"
            "\t#search, #ignorecase { opacity:0.1; cursor:pointer; }\n"
            "\t#search:hover, #search.show, #ignorecase:hover, #ignorecase.show { opacity:1; }\n"
            "\t#subtitle { text-anchor:middle; font-color:rgb(160,160,160); }\n"
            "\t#title { text-anchor:middle; font-size:%spx}\n"
            "\t#unzoom { cursor:pointer; }\n"
            "\t#frames > *:hover { stroke:black; stroke-width:0.5; cursor:pointer; }\n"
            "\t.hide { display:none; }\n\t.parent { opacity:0.5; }\n</style>\n",
            pnum(o->fontsize, b1, sizeof(b1)), pnum(o->fontsize + 5, b2, sizeof(b2)));
    fprintf(f, "<script type=\"text/ecmascript\">\n<![CDATA[\nvar FG = { nametype: \"");
    for (const char *p = o->nametype; *p; p++) /* a JS string inside CDATA */
        fprintf(f,
                (unsigned char)*p < 0x20 || *p == '"' || *p == '\\' || *p == ']' || *p == '<'
                    ? "\\u%04x"
                    : "%c",
                (unsigned char)*p);
    fprintf(f,
            "\", fontsize: %s, fontwidth: %.15g, xpad: 10, inverted: %s, "
            "searchcolor: \"rgb(230,0,230)\" };\n%s]]>\n</script>\n",
            pnum(o->fontsize, b1, sizeof(b1)), o->fontwidth, o->inverted ? "true" : "false",
            fg_script);
    fprintf(
        f, "<rect x=\"0.0\" y=\"0\" width=\"%.1f\" height=\"%.1f\" fill=\"url(#background)\"  />\n",
        (double)o->width, height);
    text_el(f, "title", (double)(o->width / 2), o->fontsize * 2, o->title, NULL);
    if (o->subtitle && o->subtitle[0])
        text_el(f, "subtitle", (double)(o->width / 2), o->fontsize * 4, o->subtitle, NULL);
    text_el(f, "details", 10, height - (o->fontsize * 2 + 10) / 2, " ", NULL);
    text_el(f, "unzoom", 10, o->fontsize * 2, "Reset Zoom", "class=\"hide\"");
    text_el(f, "search", o->width - 10 - 100, o->fontsize * 2, "Search", NULL);
    text_el(f, "ignorecase", o->width - 10 - 16, o->fontsize * 2, "ic", NULL);
    text_el(f, "matched", o->width - 10 - 100, height - (o->fontsize * 2 + 10) / 2, " ", NULL);
}

/* Title text "NAME (N samples, P%)" into the stream. */
static void frame_title(struct fg_ctx *ctx, const struct fg_frame *fr, const char *name, size_t len,
                        double timemax)
{
    const struct fg_opts *o = &ctx->opt;
    char samples[32], txt[48];
    double rounded;
    FILE *f = ctx->out;

    snprintf(samples, sizeof(samples), "%.0f", (fr->etime - fr->stime) * o->factor);
    rounded = strtod(samples, NULL);
    commas((fr->etime - fr->stime) * o->factor, txt, sizeof(txt));
    if (fr->depth == 0 && len == 0) {
        fprintf(f, "all (%s ", txt);
        esc(f, o->countname);
        fputs(", 100%)", f);
        return;
    }
    svg_escape(f, name, strip_annotation(name, len), 1);
    fprintf(f, " (%s ", txt);
    esc(f, o->countname);
    fprintf(f, ", %.2f%%", 100 * rounded / (timemax * o->factor));
    if (fr->has_delta) {
        double d = o->negate ? -fr->delta : fr->delta;
        char dp[40];
        if (d == 0)
            d = 0; /* Perl negates an integer 0 to 0, not -0 */
        snprintf(dp, sizeof(dp), "%.2f", 100 * d / (timemax * o->factor));
        fprintf(f, "; %s%s%%", d > 0 ? "+" : "", dp);
    }
    fputc(')', f);
}

static void frame_write(struct fg_ctx *ctx, const struct fg_frame *fr, double height, double wpt,
                        double timemax)
{
    const struct fg_opts *o = &ctx->opt;
    FILE *f = ctx->out;
    size_t len;
    const char *name = names_get(&ctx->lay.names, fr->name, &len), *title, *close;
    size_t tlen = 0;
    double x1 = 10 + fr->stime * wpt, x2 = 10 + fr->etime * wpt, y1, y2;
    char xs1[40], xs2[40], col[40], yb[40];

    if (!o->inverted) {
        y1 = height - (o->fontsize * 2 + 10) - (fr->depth + 1.0) * o->frameheight + 1;
        y2 = height - (o->fontsize * 2 + 10) - (double)fr->depth * o->frameheight;
    } else {
        y1 = o->fontsize * 3 + (double)fr->depth * o->frameheight;
        y2 = o->fontsize * 3 + (fr->depth + 1.0) * o->frameheight - 1;
    }
    close = group_open(ctx, name, len, &title, &tlen);
    fputs("<title>", f);
    if (title)
        fwrite(title, 1, tlen, f);
    else
        frame_title(ctx, fr, name, len, timemax);
    fputs("</title>", f);
    if (len == 2 && memcmp(name, "--", 2) == 0)
        snprintf(col, sizeof(col), "rgb(160,160,160)");
    else if (len == 1 && name[0] == '-')
        snprintf(col, sizeof(col), "rgb(200,200,200)");
    else if (fr->has_delta)
        palette_color_scale(o, fr->delta, ctx->lay.maxdelta, col, sizeof(col));
    else
        palette_color(ctx, name, len, col, sizeof(col));
    snprintf(xs1, sizeof(xs1), "%.1f", x1);
    snprintf(xs2, sizeof(xs2), "%.1f", x2);
    fprintf(
        f,
        "<rect x=\"%s\" y=\"%s\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" rx=\"2\" ry=\"2\" />\n",
        xs1, pnum(y1, yb, sizeof(yb)), strtod(xs2, NULL) - strtod(xs1, NULL), y2 - y1, col);
    fprintf(f, "<text  x=\"%.2f\" y=\"%s\" >", x1 + 3, pnum(3 + (y1 + y2) / 2, yb, sizeof(yb)));
    double chars = (x2 - x1) / (o->fontsize * o->fontwidth);
    if (chars >= 3) {
        size_t nl = strip_annotation(name, len), nchars = utf8_chars(name, nl);
        size_t c = chars > 1e9 ? (size_t)1e9 : (size_t)chars;
        if (c < nchars) {
            svg_escape(f, name, utf8_prefix(name, nl, c - 2), 0);
            fputs("..", f);
        } else {
            svg_escape(f, name, nl, 0);
        }
    }
    fputs("</text>\n", f);
    fputs(close, f);
}

int svg_write(struct fg_ctx *ctx, const struct fg_frame *frames, size_t n, uint32_t depthmax,
              double timemax)
{
    const struct fg_opts *o = &ctx->opt;
    double height = (depthmax + 1.0) * o->frameheight + o->fontsize * 3 + o->fontsize * 2 + 10;
    double wpt = (o->width - 20.0) / timemax;

    if (o->subtitle && o->subtitle[0])
        height += o->fontsize * 2;
    svg_header(ctx, height);
    svg_prelude(ctx, height);
    fputs("<g id=\"frames\">\n", ctx->out);
    for (size_t i = 0; i < n; i++)
        frame_write(ctx, &frames[i], height, wpt, timemax);
    fputs("</g>\n</svg>\n", ctx->out);
    fflush(ctx->out);
    return ferror(ctx->out) ? SF_E_IO : 0;
}
