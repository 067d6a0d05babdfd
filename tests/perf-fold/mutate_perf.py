#!/usr/bin/env python3
"""mutate_perf.py SEED CORPUS_DIR - a random variant of FlameGraph's perf inputs on stdout:
lines of the corpus with fragments inserted, deleted or replaced (blanks, digits, colons,
parentheses, "->", "+0x", "[unknown]", quotes, Go/C++ markers, NUL and 0xff bytes), some
lines emptied, the last newline sometimes missing.  Used by t_random_vs_perl.sh."""
import random, sys, glob
random.seed(int(sys.argv[1]))
lines = []
for f in sorted(glob.glob(sys.argv[2] + '/*.txt')):
    lines += open(f, 'rb').read().split(b'\n')[:400]
frags = [b' ', b'  ', b'\t', b'0', b'12', b'/', b':', b': ', b' (', b')', b'(', b'->', b'+0x1f', b'[unknown]', b';', b'"', b"'", b'L', b'java', b'.(', b').', b'(anonymous namespace)', b'cycles:u:', b' 5 ', b'[001]', b'vmlinux', b'/tmp/perf-12.map', b'\x00', b'\xff', b'_[k]', b'0/0', b' 7/0 ', b'x']
out = []
n = random.randint(20, 120)
for _ in range(n):
    l = bytearray(random.choice(lines))
    for _ in range(random.randint(0, 3)):
        op = random.random()
        pos = random.randint(0, len(l))
        if op < 0.5:
            l[pos:pos] = random.choice(frags)
        elif op < 0.8 and len(l) > 0:
            del l[pos:pos + random.randint(1, 5)]
        else:
            l[pos:pos + random.randint(0, 3)] = random.choice(frags)
    if random.random() < 0.15:
        l = bytearray()
    out.append(bytes(l))
sys.stdout.buffer.write(b'\n'.join(out) + (b'\n' if random.random() < 0.7 else b''))
