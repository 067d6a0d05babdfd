#!/usr/bin/env bash
# Benchmark pcap2spans' out-of-order TCP reassembly (issue #19 item 1), not a timed test:
# one connection whose client sends a 100,001-byte HTTP/1.1 POST as 100,000 one-byte
# segments behind a hole (its first byte comes last), in increasing and in shuffled
# order.  Prints CPU seconds (user + sys, median of BENCH_RUNS runs, default 3) and peak
# RSS (the largest) of `pcap2spans --ndjson` on each; goals: each <= 2 CPU s, <= 64 MiB.
# P2S_BIN measures another build (before/after figures); BENCH_SEGS changes the count.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
p2s=${P2S_BIN:-$top/bin/pcap2spans}
runs=${BENCH_RUNS:-3}
segs=${BENCH_SEGS:-100000}
[ -x "$p2s" ] || { echo "bench-reassembly: build bin/pcap2spans first (make)"; exit 2; }
[ -x /usr/bin/time ] || { echo "bench-reassembly: needs GNU time (/usr/bin/time)"; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$top/scripts/bench/measure.sh"
# GNU time forks a small process for the run: its peak RSS is pcap2spans' own, where
# bench_measure's (spawned from python3) starts from the interpreter's ~13 MiB.
one_run() { /usr/bin/time -f "%U %S %M" -o "$tmp/t" "$p2s" --ndjson --quiet "$1" >/dev/null 2>&1
            awk '{ printf "%.2f %d\n", $1 + $2, $3 }' "$tmp/t"; }
python3 - "$tmp" "$segs" <<'PY' || exit 2
import random, struct, sys
d, n = sys.argv[1], int(sys.argv[2])
head = b"POST /bench HTTP/1.1\r\nHost: bench\r\nContent-Length: %08d\r\n\r\n"
body = n + 1 - len(head % 0)
req = head % body + b"a" * body
def pkt(c2s, seq, ack, flags, data=b""):
    src, dst = (b"\x0a\0\0\x01", b"\x0a\0\0\x02") if c2s else (b"\x0a\0\0\x02", b"\x0a\0\0\x01")
    sp, dp = (40000, 80) if c2s else (80, 40000)
    tcp = struct.pack("!HHIIBBHHH", sp, dp, seq & 0xffffffff, ack, 5 << 4, flags, 65535, 0, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 40 + len(data), 1, 0, 64, 6, 0, src, dst)
    return b"\0" * 12 + b"\x08\x00" + ip + tcp + data
for name, shuffle in (("increasing", False), ("random", True)):
    order = list(range(1, n + 1))
    if shuffle:
        random.Random(19).shuffle(order)
    pk = [pkt(True, 100, 0, 0x02), pkt(False, 500, 101, 0x12), pkt(True, 101, 501, 0x10)]
    pk += [pkt(True, 101 + i, 501, 0x18, req[i:i + 1]) for i in order]
    pk += [pkt(True, 101, 501, 0x18, req[:1]), pkt(True, 102 + n, 501, 0x11),
           pkt(False, 501, 103 + n, 0x11), pkt(True, 103 + n, 502, 0x10)]
    with open("%s/%s.pcap" % (d, name), "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for i, p in enumerate(pk):
            f.write(struct.pack("<IIII", 1700000000 + i // 1000000, i % 1000000, len(p), len(p)) + p)
PY
fail=0
for order in increasing random; do
    spans=$("$p2s" --ndjson --quiet "$tmp/$order.pcap" | grep -c '"path":"/bench"')
    r=$(for _ in $(seq "$runs"); do one_run "$tmp/$order.pcap"; done)
    cpu=$(cut -d' ' -f1 <<<"$r" | bench_median)
    rss=$(cut -d' ' -f2 <<<"$r" | sort -n | tail -1)
    verdict=ok
    awk -v c="$cpu" -v r="$rss" 'BEGIN { exit !(c <= 2 && r <= 65536) }' || { verdict="over the goal"; fail=1; }
    printf '%s one-byte out-of-order segments, %-10s: %6.2f CPU s, peak RSS %6.1f MiB, %s span(s) /bench  [%s]\n' \
        "$segs" "$order" "$cpu" "$(awk -v r="$rss" 'BEGIN { printf "%.1f", r / 1024 }')" "$spans" "$verdict"
done
exit $fail
