#!/usr/bin/env python3
"""Compare two flame graph SVGs as sets of frames (title, x, y, width, height, fill).

flamegraph.pl writes frames in Perl hash order, so the files are compared as multisets.
Its title text is not XML-escaped (a --title with '<' makes invalid XML), so frames are
read with a pattern rather than an XML parser; our own SVG is also checked with
xml.etree when --valid is given.

usage: fgcompare.py [--no-fill] [--valid] [--allow-extra N] REF.svg|REF.frames OURS.svg
       fgcompare.py --dump REF.svg > REF.frames
exit 0 when every frame matches (geometry within 0.15 px, same fill unless --no-fill).
--allow-extra N accepts N frames of ours that the reference lacks: flamegraph.pl keys its
frames by "name;depth;end time", so a zero-width frame ending where an earlier frame of the
same name and depth ended overwrites it and that frame disappears; we keep it.
A .frames file holds "size W H" and then one frame per line: title TAB x y w h fill.
"""
import html
import re
import sys
import xml.etree.ElementTree as ET

FRAME = re.compile(
    r'<(?:g|a)\b[^>]*>\n<title>(.*?)</title><rect x="([^"]*)" y="([^"]*)" '
    r'width="([^"]*)" height="([^"]*)" fill="([^"]*)"', re.S)
SVGTAG = re.compile(r'<svg [^>]*width="([^"]*)" height="([^"]*)"')


def frames(path):
    if path.endswith(".frames"):
        size, out = None, []
        for line in open(path, encoding="utf-8"):
            line = line.rstrip("\n")
            if line.startswith("size\t"):
                size = tuple(line.split("\t")[1:3])
                continue
            t, x, y, w, h, fill = line.split("\t")
            t = t.encode("ascii", "backslashreplace").decode("unicode_escape") if "\\" in t else t
            out.append((t, float(x), float(y), float(w), float(h), fill))
        return size, out
    text = open(path, encoding="utf-8", errors="replace").read()
    m = SVGTAG.search(text)
    out = []
    for t, x, y, w, h, fill in FRAME.findall(text):
        out.append((html.unescape(t), float(x), float(y), float(w), float(h), fill))
    return (m.group(1), m.group(2)) if m else None, out


def dump(path):
    size, out = frames(path)
    print("size\t%s\t%s" % size)
    for f in sorted(out):
        t = f[0].replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")
        print("%s\t%s\t%s\t%s\t%s\t%s" % ((t,) + f[1:]))
    return 0


def main(argv):
    if argv and argv[0] == "--dump":
        return dump(argv[1])
    fill = "--no-fill" not in argv
    allow_extra = 0
    if "--allow-extra" in argv:
        i = argv.index("--allow-extra")
        allow_extra = int(argv[i + 1])
        del argv[i:i + 2]
    valid = "--valid" in argv
    args = [a for a in argv if not a.startswith("--")]
    ref_path, our_path = args
    (rsize, ref), (osize, ours) = frames(ref_path), frames(our_path)
    problems = []
    if valid:
        try:
            ET.parse(our_path)
        except ET.ParseError as e:
            problems.append("not valid XML: %s" % e)
    if rsize != osize:
        problems.append("image size %s, want %s" % (osize, rsize))
    pool = {}
    for f in ours:
        pool.setdefault((f[0], f[2]), []).append(f)
    missing = 0
    badfill = 0
    for f in ref:
        cands = pool.get((f[0], f[2]), [])
        hit = None
        for c in cands:
            if abs(c[1] - f[1]) <= 0.15 and abs(c[3] - f[3]) <= 0.15 and abs(c[4] - f[4]) < 1e-6:
                if not fill or c[5] == f[5]:
                    hit = c
                    break
                if hit is None:
                    hit = c
        if hit is None:
            missing += 1
            if missing <= 5:
                problems.append("missing frame %r at x=%s y=%s w=%s" % (f[0], f[1], f[2], f[3]))
            continue
        cands.remove(hit)
        if fill and hit[5] != f[5]:
            badfill += 1
            if badfill <= 5:
                problems.append("frame %r fill %s, want %s" % (f[0], hit[5], f[5]))
    extra = sum(len(v) for v in pool.values())
    if extra > allow_extra:
        problems.append("%d extra frames, e.g. %r" % (extra, [v for v in pool.values() if v][0][0]))
    print("# %s: %d reference frames, %d ours, %d missing, %d wrong fill, %d extra" % (
        ref_path.split("/")[-1], len(ref), len(ours), missing, badfill, extra))
    for p in problems:
        print("#   " + p)
    return 1 if problems or not ref else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
