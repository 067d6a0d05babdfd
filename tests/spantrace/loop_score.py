#!/usr/bin/env python3
"""loop_score.py DB TRUTH.json [HOT]: how well a database attributes a server's samples
(scripts/record/nginx-loop.sh's recording, or t_sockets_go.sh's): prints one line of six
numbers,

  samples  attributed%  deflate  deflate-attributed%  right%  wrong%

the worker's samples and the share given to one span; its hot samples (a frame matching
the regular expression HOT, default libz|deflate: nginx's gzip), the share given to one
span, the share given to a request truth.json names expensive (right) and, of those
given, the share given to a cheap one (wrong)."""
import json
import re
import sqlite3
import sys

db = sqlite3.connect(sys.argv[1])
truth = json.load(open(sys.argv[2]))
big = set(truth["big_span_ids"])
hot = re.compile(sys.argv[3] if len(sys.argv) > 3 else "libz|deflate")
frames = dict(db.execute("SELECT id, frames FROM stacks"))
n = att = dz = dza = right = 0
for sid, stk in db.execute("SELECT span_id, stack_id FROM samples WHERE pid = ?", (truth["worker_pid"],)):
    n += 1
    att += sid is not None
    if hot.search(frames.get(stk, "")):
        dz += 1
        dza += sid is not None
        right += sid in big


def pct(a, b):
    return 100.0 * a / b if b else 0.0


print("%d %.1f %d %.1f %.1f %.1f" % (n, pct(att, n), dz, pct(dza, dz), pct(right, dz), pct(dza - right, dza)))
