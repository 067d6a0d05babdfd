"""hostile_check.py - the assertions of t_hostile.sh, one subcommand each; every failure
is printed as a reason and the exit status is 1 (0 when the output holds).

  md FILE.md HTML DIR H1 H2 H3   FILE.md as cmark-gfm rendered it (HTML): exactly H1/H2/H3
                                 headings of levels 1-3 (-1: any number) and none deeper,
                                 no link, no raw HTML, images only of SVG files in DIR;
                                 every table row of FILE.md has its header's cell count
  cells HTML FRAME_HEX...        every frame (hex) is the text of one <code> in a cell
  csv FILE ROWS GROUPS           RFC 4180 in UTF-8: ROWS records after the header, all of
                                 the header's width, GROUPS names in the first column, no
                                 field starting with = + - @
  json FILE                      FILE is JSON, or JSON lines
  groups SUMMARY.json            print the number of groups of an inflect --db summary
"""
import csv
import html
import json
import os
import re
import sys


def gfm_cells(line):
    """Cells of a GFM table row: '|' splits unless a backslash is right before it."""
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    return re.split(r"(?<!\\)\|", s)


def check_md(md_path, html_path, d, want):
    bad = []
    raw = open(html_path, "rb").read()
    text = raw.decode("utf-8", "replace")
    if text.encode("utf-8") != raw:
        bad.append("%s is not UTF-8" % md_path)
    for lvl in range(1, 7):
        n = len(re.findall(r"<h%d>" % lvl, text))
        w = want[lvl - 1] if lvl <= 3 else 0
        if w >= 0 and n != w:
            bad.append("%d level-%d headings, want %d" % (n, lvl, w))
    if re.search(r"<a[\s>]", text):
        bad.append("a link: %s" % re.search(r"<a[\s>][^>]*>", text).group(0)[:80])
    if "raw HTML omitted" in text:
        bad.append("raw HTML from the data (omitted by cmark-gfm)")
    for src in re.findall(r'<img src="([^"]*)"', text):
        if not re.fullmatch(r"[A-Za-z0-9._-]+\.svg", src) or not os.path.isfile(
                os.path.join(d, src)):
            bad.append("image %r is not a chart of the report" % src[:80])
    width = None
    for ln, line in enumerate(open(md_path, encoding="utf-8", errors="replace"), 1):
        if not line.startswith("|"):
            width = None
            continue
        w = len(gfm_cells(line))
        if width is None:
            width = w
        elif w != width:
            bad.append("%s:%d: %d cells, the header has %d" % (md_path, ln, w, width))
    return bad


def check_cells(html_path, frames):
    text = open(html_path, encoding="utf-8", errors="replace").read()
    got = {html.unescape(c) for c in re.findall(r"<td><code>(.*?)</code></td>", text, re.S)}
    return ["frame %r is in no table cell" % f[:60] for f in frames if f not in got]


def check_csv(path, rows, groups):
    bad = []
    try:
        with open(path, newline="", encoding="utf-8") as f:
            recs = list(csv.reader(f, strict=True))
    except (csv.Error, UnicodeDecodeError) as e:
        return ["%s: not RFC 4180 UTF-8: %s" % (path, e)]
    if len(recs) - 1 != rows:
        bad.append("%d records after the header, want %d" % (len(recs) - 1, rows))
    if len({r[0] for r in recs[1:] if r}) != groups:
        bad.append("%d group names, want %d" % (len({r[0] for r in recs[1:] if r}), groups))
    for i, r in enumerate(recs[1:], 2):
        if len(r) != len(recs[0]):
            bad.append("record %d: %d fields, the header has %d" % (i, len(r), len(recs[0])))
        if any(v[:1] in ("=", "+", "@") or (v[:1] == "-" and not re.fullmatch(r"-[0-9.e+-]+", v))
               for v in r):
            bad.append("record %d: a field starts with a formula character" % i)
    return bad[:10]


def check_json(path):
    try:
        text = open(path, "rb").read().decode("utf-8")
    except UnicodeDecodeError as e:
        return ["%s: not UTF-8: %s" % (path, e)]
    try:
        json.loads(text)
        return []
    except ValueError:
        pass
    for i, line in enumerate(text.split("\n"), 1):  # not splitlines: U+2028 is JSON text
        try:
            if line.strip():
                json.loads(line)
        except ValueError as e:
            return ["%s: line %d: not JSON: %s" % (path, i, e)]
    return []


def main(a):
    if a[0] == "groups":
        print(len(json.load(open(a[1], encoding="utf-8"))["drift"]))
        return 0
    if a[0] == "md":
        bad = check_md(a[1], a[2], a[3], [int(x) for x in a[4:7]])
    elif a[0] == "cells":
        bad = check_cells(a[1], [bytes.fromhex(h).decode("utf-8") for h in a[2:]])
    elif a[0] == "csv":
        bad = check_csv(a[1], int(a[2]), int(a[3]))
    else:
        bad = check_json(a[1])
    for b in bad:
        print("# " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
