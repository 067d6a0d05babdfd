#!/usr/bin/env bash
# Benchmark pcap2spans (speed and memory against a bare libpcap loop and tshark) on a >= 100 MB capture of real
# HTTP/1.1 + HTTP/2 traffic made by scripts/gen-bench-pcap.sh, in one run:
#   1. throughput of `pcap2spans --ndjson >/dev/null` as a share of a bare libpcap loop
#      (scripts/bench/pcap_loop.c) over the same file           goal >= 25 %
#   2. speed against `tshark -r F -T fields` extracting what pcap2spans reads: the HTTP/1
#      request line and header lines, the HTTP/1 status code, the HTTP/2 header names and
#      values (decode-as for the benchmark's ports)                 goal >= 50x
#   3. pcap2spans --db against --ndjson on the same capture (CPU ratio, per round)
#                                                                    goal <= 1.5x
#      and --db against tshark -T fields                             goal >= 30x
#      beside SQLite's own cost of storing the same rows (scripts/bench/sqlite_floor.sh):
#      the floor under any writer that goes through SQL, as a multiple of --ndjson
#   4. peak RSS on the file and on the same traffic ten times over  goal <= +10 %
#   5. --db cost per byte on the capture 4 and 16 times over (copies shifted in time
#      with editcap -t, appended with mergecap -a, as gen-bench-pcap.sh makes
#      bench10.pcap; cached beside it as bench4.pcap and bench16.pcap) against 1x,
#      each into a new database, BENCH_LIN_RUNS interleaved rounds (default 3, 0
#      skips it)                                                     goal within 1.15x
# Times are CPU seconds (user + sys, from wait4 of each run: scripts/bench/measure.sh),
# medians of BENCH_RUNS interleaved rounds (default 5; --db in the first BENCH_DB_RUNS,
# default 3; tshark in the first BENCH_TSHARK_RUNS, default 3, 0 skips it).
# BENCH_MIX=web|api|rpc picks the traffic mix and BENCH_MTU=1500 wire-sized packets instead
# of loopback's up-to-64 KB ones (see gen-bench-pcap.sh); BENCH_DIR overrides
# where captures live; P2S_BIN measures another pcap2spans build (before/after figures).
# The loop's own time varies with the machine's load (page cache, other processes):
# compare figures from one run only.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
mix=${BENCH_MIX:-web}
mtu=${BENCH_MTU:-}
dir=${BENCH_DIR:-/tmp/spanfold-bench-$mix${mtu:+-mtu$mtu}}
runs=${BENCH_RUNS:-5}
truns=${BENCH_TSHARK_RUNS:-3}
p2s=${P2S_BIN:-$top/bin/pcap2spans}
[ -x "$p2s" ] || { echo "bench-pcap2spans: build bin/pcap2spans first (make)"; exit 2; }
if [ ! -s "$dir/bench.pcap" ]; then
    BENCH_MIX=$mix BENCH_MTU=$mtu "$top/scripts/gen-bench-pcap.sh" "$dir" || {
        echo "bench-pcap2spans: cannot generate the capture (needs root, nginx, h2load, tcpdump)"; exit 2; }
fi
f=$dir/bench.pcap f10=$dir/bench10.pcap
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/pcap_loop" "$top/scripts/bench/pcap_loop.c" $(pkg-config --cflags --libs libpcap) || exit 2

. "$top/scripts/bench/measure.sh"
. "$top/scripts/bench/sqlite_floor.sh"
db_run() { rm -f "$tmp/b.db"*; "$p2s" --quiet --db "$tmp/b.db" "$1"; }
export -f db_run; export p2s tmp
has_tshark=0
if [ "$truns" != 0 ] && command -v tshark >/dev/null; then has_tshark=1; fi

touch "$tmp/db" "$tmp/r_db" "$tmp/r_dbnd" "$tmp/ts" "$tmp/r_ts" "$tmp/r_dbts" "$tmp/fl" "$tmp/r_flnd"

mb=$(awk -v b="$(stat -c %s "$f")" 'BEGIN {printf "%.1f", b / 1e6}')
echo "capture: $f ($mb MB, $(capinfos -c -M "$f" 2>/dev/null | awk '/packets/ {print $NF}') packets, mix $mix${mtu:+, MTU $mtu})"
# Interleaved rounds (loop, --ndjson, --db, tshark in each), so that a change in the
# machine's load reaches every command alike; ratios are medians of the per-round ratios.
for r in $(seq "$runs"); do
    l=$(bench_measure "$tmp/pcap_loop" "$f")
    nd=$(bench_measure "$p2s" --quiet --ndjson "$f")
    echo "$l" >>"$tmp/loop"
    echo "$nd" >>"$tmp/nd"
    bench_ratio "${l% *}" "${nd% *}" 100 >>"$tmp/r_loop"
    if [ "$r" -le "${BENCH_DB_RUNS:-3}" ]; then
        db=$(bench_measure bash -c 'db_run "$0"' "$f")
        echo "$db" >>"$tmp/db"
        bench_ratio "${l% *}" "${db% *}" 100 >>"$tmp/r_db"
        bench_ratio "${db% *}" "${nd% *}" >>"$tmp/r_dbnd"
        if [ "$r" = 1 ] && command -v sqlite3 >/dev/null; then
            sqlite_floor_prepare "$tmp/b.db" "$tmp/floor.db" "$tmp/floor.sql" || rm -f "$tmp/floor.sql"
        fi
        if [ -s "$tmp/floor.sql" ]; then
            rm -f "$tmp/fl.db"*; cp "$tmp/floor.db" "$tmp/fl.db"
            fl=$(bench_measure bash -c 'sqlite3 "$0" <"$1"' "$tmp/fl.db" "$tmp/floor.sql")
            echo "$fl" >>"$tmp/fl"
            bench_ratio "${fl% *}" "${nd% *}" >>"$tmp/r_flnd"
        fi
    fi
    if [ "$has_tshark" = 1 ] && [ "$r" -le "$truns" ]; then
        ts=$(bench_measure tshark -r "$f" -d tcp.port==18580,http -d tcp.port==18581,http2 -T fields \
            -e http.request.line -e http.response.code -e http2.header.name -e http2.header.value)
        echo "$ts" >>"$tmp/ts"
        bench_ratio "${ts% *}" "${nd% *}" >>"$tmp/r_ts"
        [ "$r" -le "${BENCH_DB_RUNS:-3}" ] && bench_ratio "${ts% *}" "${db% *}" >>"$tmp/r_dbts"
    fi
done
med() { cut -d' ' -f1 <"$tmp/$1" | bench_median; }
rounds() { bench_rounds "$tmp/$1" "$2"; }
loop_cpu=$(med loop) nd_cpu=$(med nd) db_cpu=$(med db)
nd_rss=$(cut -d' ' -f2 <"$tmp/nd" | sort -n | tail -1)
spans=$("$p2s" --quiet --ndjson "$f" | wc -l)
rate() { awk -v m="$mb" -v c="$1" 'BEGIN {printf "%.0f", (c > 0) ? m / c : 0}'; }
echo "bare libpcap loop:        ${loop_cpu} s CPU  $(rate "$loop_cpu") MB/s  (median of $runs)"
echo "pcap2spans --ndjson:      ${nd_cpu} s CPU  $(rate "$nd_cpu") MB/s  ($spans spans)"
if [ -s "$tmp/db" ]; then
    echo "pcap2spans --db:          ${db_cpu} s CPU  $(rate "$db_cpu") MB/s  (median of $(wc -l <"$tmp/db"))"
else
    echo "pcap2spans --db:          skipped (BENCH_DB_RUNS=0)"
fi
printf 'ratio: pcap2spans --ndjson throughput = %.1f %% of the bare loop (goal >= 25 %%; rounds: %s)\n' \
    "$(bench_median <"$tmp/r_loop")" "$(rounds r_loop %.1f)"
if [ -s "$tmp/r_db" ]; then
    printf 'ratio: pcap2spans --db throughput     = %.1f %% of the bare loop\n' \
        "$(bench_median <"$tmp/r_db")"
    printf 'ratio: pcap2spans --db CPU = %.2fx --ndjson on the same capture (goal <= 1.5x; rounds: %s)\n' \
        "$(bench_median <"$tmp/r_dbnd")" "$(rounds r_dbnd %.2f)"
fi
if [ -s "$tmp/r_flnd" ]; then
    fl_cpu=$(med fl)
    echo "SQLite alone, storing the same rows: ${fl_cpu} s CPU (INSERT ... SELECT into the same schema, then its indexes)"
    flr=$(bench_median <"$tmp/r_flnd")
    printf 'ratio: SQLite alone = %.2fx --ndjson%s (rounds: %s)\n' "$flr" \
        "$(awk -v f="$flr" 'BEGIN { if (f >= 1.5) print ": more than the goal for all of --db, out of reach of any writer through SQL" }')" \
        "$(rounds r_flnd %.2f)"
    awk -v d="$db_cpu" -v f="$fl_cpu" -v n="$nd_cpu" 'BEGIN { if (n > 0)
        printf "pcap2spans --db less SQLite alone: %.2f s CPU = %.2fx --ndjson (parsing, binding, the rest)\n", d - f, (d - f) / n }'
fi

if [ "$truns" = 0 ]; then
    echo "tshark: skipped (BENCH_TSHARK_RUNS=0)"
elif [ "$has_tshark" = 1 ]; then
    ts_cpu=$(med ts) ts_rss=$(cut -d' ' -f2 <"$tmp/ts" | sort -n | tail -1)
    echo "tshark -T fields:         ${ts_cpu} s CPU  $(rate "$ts_cpu") MB/s  peak RSS $((ts_rss / 1024)) MB ($(wc -l <"$tmp/ts") run(s))"
    printf 'ratio: pcap2spans is %.0fx faster than tshark (goal >= 50x; rounds: %s)\n' \
        "$(bench_median <"$tmp/r_ts")" "$(rounds r_ts %.0f)"
    [ -s "$tmp/r_dbts" ] &&
        printf 'ratio: pcap2spans --db is %.1fx faster than tshark -T fields (goal >= 30x; rounds: %s)\n' \
            "$(bench_median <"$tmp/r_dbts")" "$(rounds r_dbts %.1f)"
else
    echo "tshark: not installed (apt-get install tshark); speed ratio against it not measured"
fi

if [ -s "$f10" ]; then
    read -r _ rss10 < <(bench_measure "$p2s" --quiet --ndjson "$f10")
    awk -v a="$nd_rss" -v b="$rss10" 'BEGIN {
        printf "peak RSS: %d KB on the file, %d KB on 10x the traffic: %+.1f %% (goal <= +10 %%)\n", a, b, 100 * (b - a) / a }'
else
    echo "peak RSS: $f10 missing (scripts/gen-bench-pcap.sh makes it)"
fi

# 5. linearity of --db: CPU per byte on 4x and 16x the capture against 1x.
lin=${BENCH_LIN_RUNS:-3}
scaled() { # scaled N: $dir/benchN.pcap, N copies of bench.pcap each an hour after the last
    local n=$1 out=$dir/bench$1.pcap i parts=()
    [ -s "$out" ] && return 0
    command -v editcap >/dev/null && command -v mergecap >/dev/null || return 1
    for i in $(seq 0 $((n - 1))); do
        editcap -t $((i * 3600)) "$f" "$tmp/part$i.pcap" || return 1
        parts+=("$tmp/part$i.pcap")
    done
    mergecap -a -F pcap -w "$out.tmp" "${parts[@]}" && mv "$out.tmp" "$out"
    rm -f "${parts[@]}"
}
if [ "$lin" = 0 ]; then
    echo "--db linearity: skipped (BENCH_LIN_RUNS=0)"
elif scaled 4 && scaled 16; then
    : >"$tmp/l1"; : >"$tmp/l4"; : >"$tmp/l16"
    for r in $(seq "$lin"); do
        for n in 1 4 16; do
            [ "$n" = 1 ] && g=$f || g=$dir/bench$n.pcap
            bench_measure bash -c 'db_run "$0"' "$g" | cut -d' ' -f1 >>"$tmp/l$n"
        done
        # per-round per-byte ratios against the same round's 1x run
        awk -v a="$(tail -1 "$tmp/l1")" -v b="$(tail -1 "$tmp/l4")" -v c="$(tail -1 "$tmp/l16")" \
            'BEGIN { if (a > 0) { print b / (4 * a) >"/dev/stderr"; print c / (16 * a) } }' \
            2>>"$tmp/r_l4" >>"$tmp/r_l16"
    done
    s1=$(stat -c %s "$f") s4=$(stat -c %s "$dir/bench4.pcap") s16=$(stat -c %s "$dir/bench16.pcap")
    echo "pcap2spans --db on 1x, 4x, 16x: $(bench_median <"$tmp/l1") s, $(bench_median <"$tmp/l4") s, $(bench_median <"$tmp/l16") s CPU (medians of $lin; $((s1 / 1000000)), $((s4 / 1000000)), $((s16 / 1000000)) MB)"
    printf 'ratio: pcap2spans --db CPU per byte on 4x = %.2fx 1x, on 16x = %.2fx 1x (goal <= 1.15x; rounds: %s / %s)\n' \
        "$(bench_median <"$tmp/r_l4")" "$(bench_median <"$tmp/r_l16")" "$(rounds r_l4 %.2f)" "$(rounds r_l16 %.2f)"
else
    echo "--db linearity: cannot build the 4x/16x captures (editcap, mergecap from tshark's package)"
fi
