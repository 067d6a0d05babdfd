#!/usr/bin/env bash
# Benchmark pcap2spans -j N (parallel ingest: N reader threads, one writer) against -j 1
# on the same inputs, in one run: BENCH_CUTS cuts (default 4) of the rpc bench capture
# (/tmp/spanfold-bench-rpc/bench.pcap, scripts/gen-bench-pcap.sh; BENCH_SRC picks another
# file, e.g. bench10.pcap), made with editcap -c in a temporary folder.
#   - wall-clock time and CPU time (user + sys) of -j 1 and -j BENCH_JOBS (default 2),
#     with --ndjson >/dev/null and with --db into a new database;
#   - the speedup (wall -j 1 / wall -j N) and the CPU cost (CPU -j N / CPU -j 1);
#   - that -j N wrote the same NDJSON bytes and the same database rows as -j 1;
#   - a bound on the --db speedup that one writer sets: SQLite's own cost of storing
#     the rows (scripts/bench/sqlite_floor.sh) is serial, so -j N cannot beat
#     CPU(-j 1) / max(SQLite alone, CPU(-j 1) / N); loose, since the writer also binds
#     and replays every row (docs/performance.md has the writer thread's measured share).
# Medians of BENCH_RUNS interleaved rounds (default 5; --db in the first BENCH_DB_RUNS,
# default 3).  Wall-clock figures need idle cores: on a shared machine other processes'
# load lowers the speedup (uptime is printed before and after).  P2S_BIN measures another
# build.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
src=${BENCH_SRC:-${BENCH_DIR:-/tmp/spanfold-bench-rpc}/bench.pcap}
cuts=${BENCH_CUTS:-4}
jobs=${BENCH_JOBS:-2}
runs=${BENCH_RUNS:-5}
p2s=${P2S_BIN:-$top/bin/pcap2spans}
[ -x "$p2s" ] || { echo "bench-parallel: build bin/pcap2spans first (make)"; exit 2; }
[ -s "$src" ] || { echo "bench-parallel: no capture $src (scripts/gen-bench-pcap.sh with BENCH_MIX=rpc)"; exit 2; }
command -v editcap >/dev/null || { echo "bench-parallel: needs editcap (wireshark-common)"; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
. "$top/scripts/bench/measure.sh"
. "$top/scripts/bench/sqlite_floor.sh"

packets=$(capinfos -c -M "$src" | awk '/packets/ {print $NF}')
editcap -c $(((packets + cuts - 1) / cuts)) "$src" "$tmp/cut.pcap" || exit 2
inputs=("$tmp"/cut_*.pcap)
echo "inputs: ${#inputs[@]} cuts of $src ($packets packets); -j 1 against -j $jobs; $(uptime)"

db_run() { rm -f "$tmp/b$1.db"*; "$p2s" --quiet -j "$1" --db "$tmp/b$1.db" "${@:2}"; }
nd_run() { "$p2s" --quiet -j "$1" --ndjson "${@:2}" >"$tmp/nd$1.out"; }
export -f db_run nd_run; export p2s tmp

for r in $(seq "$runs"); do
    for mode in nd db; do
        [ "$mode" = db ] && [ "$r" -gt "${BENCH_DB_RUNS:-3}" ] && continue
        a=$(bench_timed bash -c "${mode}_run 1 \"\$@\"" x "${inputs[@]}")
        b=$(bench_timed bash -c "${mode}_run $jobs \"\$@\"" x "${inputs[@]}")
        echo "$a" >>"$tmp/$mode.1"
        echo "$b" >>"$tmp/$mode.j"
        bench_ratio "${a% *}" "${b% *}" >>"$tmp/$mode.speed"
        bench_ratio "${b#* }" "${a#* }" >>"$tmp/$mode.cpu"
    done
done

same=yes
cmp -s "$tmp/nd1.out" "$tmp/nd$jobs.out" || same="NO (NDJSON differs)"
q="select * from connections; select * from spans; select * from contexts;
   select * from connection_events; select id, kind, path, bytes, sha256, status from sources"
[ "$(sqlite3 "$tmp/b1.db" "$q" | md5sum)" = "$(sqlite3 "$tmp/b$jobs.db" "$q" | md5sum)" ] ||
    same="NO (database differs)"
med() { cut -d' ' -f"$2" "$1" | bench_median; }
for mode in nd db; do
    name=$([ "$mode" = nd ] && echo "--ndjson" || echo "--db")
    printf '%-9s wall -j 1 %6.2f s, -j %d %6.2f s: speedup %.2fx (rounds %s)\n' "$name" \
        "$(med "$tmp/$mode.1" 1)" "$jobs" "$(med "$tmp/$mode.j" 1)" \
        "$(bench_median <"$tmp/$mode.speed")" "$(bench_rounds "$tmp/$mode.speed" %.2f)"
    printf '%-9s CPU  -j 1 %6.2f s, -j %d %6.2f s: CPU ratio %.2f\n' "$name" \
        "$(med "$tmp/$mode.1" 2)" "$jobs" "$(med "$tmp/$mode.j" 2)" "$(bench_median <"$tmp/$mode.cpu")"
done
if [ -s "$tmp/db.1" ] && sqlite_floor_prepare "$tmp/b1.db" "$tmp/floor.db" "$tmp/floor.sql"; then
    for r in 1 2 3; do
        rm -f "$tmp/fl.db"*; cp "$tmp/floor.db" "$tmp/fl.db"
        bench_measure bash -c 'sqlite3 "$0" <"$1"' "$tmp/fl.db" "$tmp/floor.sql" | cut -d' ' -f1
    done >"$tmp/fl"
    awk -v f="$(bench_median <"$tmp/fl")" -v c="$(med "$tmp/db.1" 2)" -v n="$jobs" 'BEGIN {
        m = (f > c / n) ? f : c / n
        printf "--db       SQLite alone %.2f s of the %.2f s CPU of -j 1, serial in the one writer: no speedup above %.2fx on %d cores (a loose bound: the writer binds and replays the rows on top)\n", f, c, c / m, n }'
fi
echo "same output as -j 1: $same; $(uptime)"
[ "$same" = yes ]
