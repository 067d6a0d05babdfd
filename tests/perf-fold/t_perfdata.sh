#!/usr/bin/env bash
# perf.data read directly (issue #32) on recordings made here by the installed perf:
# tests/data/perfdata/spin.c built with frame pointers, recorded in file mode, in pipe
# mode (perf record -o -), and with two events at once (samples told apart by their ids);
# and real programs (gzip, xz with two threads, python3 run through a shell: libraries,
# PLT stubs, the vdso, debug files where installed).  For each: every record perf script
# prints is the one lib/sf_perfdata hands on (test_perfdata with the recording's name),
# and `perf-fold FILE` prints, byte for byte, what `perf script ... | perf-fold` prints,
# with and without --pid --tid, --addrs.  Skips where perf is missing or may not record
# (perf_event_paranoid, a container without perf events); the kernel's frames (kallsyms)
# are checked where this user may record them.
set -u
. "$(dirname "$0")/../tap.sh"
t=${SF_BUILD:-$top/build}/tests/unit/test_perfdata
command -v perf >/dev/null || tap_skip_all "perf is not installed (scripts/deps.sh heavy: linux-perf)"
command -v cc >/dev/null || tap_skip_all "no C compiler"
[ -x "$t" ] || tap_skip_all "test_perfdata not built"
tap_tmpdir t_perfdata
cc -O1 -g -fno-omit-frame-pointer -o "$tmp/spin" "$top/tests/data/perfdata/spin.c" || exit 2
perf record -q -k mono -g -c 100000 -e cpu-clock:u -o "$tmp/probe.data" "$tmp/spin" \
    >/dev/null 2>"$tmp/probe.err" || tap_skip_all "perf record fails here: $(head -1 "$tmp/probe.err")"
record() { # NAME PERF-RECORD-ARGS...: NAME.data and perf script's reading of it
    local name=$1
    shift
    if [ "$1" = pipe ]; then
        shift
        perf record -q -k mono -g "$@" -o - "$tmp/spin" 2>/dev/null >"$tmp/$name.data"
    else
        perf record -q -k mono -g "$@" -o "$tmp/$name.data" "$tmp/spin" >/dev/null 2>&1
    fi
    perf script -i "$tmp/$name.data" --ns --show-task-events --show-mmap-events \
        -F pid,tid,time,period,event >"$tmp/$name.perf-script.txt" 2>/dev/null
}
record file -c 50000 -e cpu-clock:u
record pipe pipe -c 50000 -e cpu-clock:u
record two -c 50000 -e cpu-clock:u -e task-clock:u
record dwarf --call-graph dwarf,8192 -c 200000 -e cpu-clock:u
# linked by lld: its text does not lie at its file offset (p_vaddr != p_offset), so its
# symbols must be moved to file offsets by their segment, as perf 6.1 moves them
if cc -O1 -g -fno-omit-frame-pointer -fuse-ld=lld -o "$tmp/spinlld" "$top/tests/data/perfdata/spin.c" \
    2>/dev/null; then
    perf record -q -k mono -g -c 50000 -e cpu-clock:u -o "$tmp/lld.data" "$tmp/spinlld" >/dev/null 2>&1
fi
head -c 8000000 /dev/urandom >"$tmp/rnd"
perf record -q -k mono -g -c 100000 -e cpu-clock:u -o "$tmp/gzip.data" gzip -c "$tmp/rnd" \
    >/dev/null 2>&1
perf record -q -k mono -g -c 200000 -e cpu-clock:u -o "$tmp/xz.data" xz -T2 -3 -c "$tmp/rnd" \
    >/dev/null 2>&1
# every CPU (-a): every process, kernel threads and the idle task, where this user may
perf record -q -k mono -a -g -c 200000 -e cpu-clock -o "$tmp/system.data" sh -c \
    "head -c 8000000 \"$tmp/rnd\" | gzip -c >/dev/null" >/dev/null 2>&1 || rm -f "$tmp/system.data"
# user and kernel frames (kallsyms), where this user may record the kernel
perf record -q -k mono -g -c 100000 -e cpu-clock -o "$tmp/kernel.data" xz -T2 -3 -c "$tmp/rnd" \
    >/dev/null 2>&1 || rm -f "$tmp/kernel.data"
perf record -q -k mono -g -c 100000 -e cpu-clock:u -o "$tmp/python.data" sh -c \
    'python3 -c "import json; [json.dumps({\"a\": i}) for i in range(100000)]"' >/dev/null 2>&1
# --call-graph dwarf: user stacks unwound from the saved stack (libunwind, as perf), inline
# frames as perf script shows them (addr2line): a program without frame pointers whose
# functions are inlined (tests/data/perfdata/inlined.c), and python3 run through a shell
# (libraries, ld.so, their debug files where installed)
cc -O2 -g -fomit-frame-pointer -o "$tmp/inlined" "$top/tests/data/perfdata/inlined.c" || exit 2
perf record -q -k mono --call-graph dwarf,8192 -c 200000 -e cpu-clock:u -o "$tmp/dwinlined.data" \
    "$tmp/inlined" >/dev/null 2>&1
perf record -q -k mono --call-graph dwarf,4096 -c 200000 -e cpu-clock:u -o "$tmp/dwpython.data" \
    sh -c 'python3 -c "import json; [json.dumps({\"a\": i}) for i in range(30000)]"' \
    >/dev/null 2>&1
# aliases at one address (tests/data/perfdata/alias.c): perf keeps the longer name as
# it shows it, demangled, not the longer mangled one
cc -O1 -g -fno-omit-frame-pointer -o "$tmp/alias" "$top/tests/data/perfdata/alias.c" || exit 2
perf record -q -k mono -g -c 100000 -e cpu-clock:u -o "$tmp/alias.data" "$tmp/alias" >/dev/null 2>&1
# C++ names perf shows demangled, and code run from anonymous memory a /tmp/perf-PID.map
# names, as a JIT writes one (tests/data/perfdata/jitspin.cc)
if command -v g++ >/dev/null && g++ -O1 -g -fno-omit-frame-pointer -o "$tmp/jitspin" \
    "$top/tests/data/perfdata/jitspin.cc" 2>/dev/null; then
    perf record -q -k mono -g -c 100000 -e cpu-clock:u -o "$tmp/jit.data" "$tmp/jitspin" \
        >/dev/null 2>&1
fi
# a real JIT and a large C++ binary: node with its perf map (labels inside sized
# functions among its builtins: perf's tree walk decides which is named)
if command -v node >/dev/null; then
    (cd "$tmp" && perf record -q -k mono -g -c 100000 -e cpu-clock:u -o "$tmp/node.data" node \
        --perf-basic-prof -e 'let s = 0; const end = Date.now() + 400;
        while (Date.now() < end) for (let i = 0; i < 1e4; i++) s += Math.sqrt(i) * Math.sin(i);' \
        >/dev/null 2>&1) # node leaves v8 logs in its folder
fi
for name in file pipe two dwarf; do
    if [ ! -s "$tmp/$name.data" ]; then
        skip "$name: the reader against perf script" "perf record $name fails here"
        continue
    fi
    SF_TOP=$top "$t" "$tmp/$name" >"$tmp/tap.out"
    tap_relay "$tmp/tap.out"
done
fold=${SF_BIN:-$top/bin}/perf-fold
for name in file pipe two lld alias gzip xz python kernel system jit node dwarf dwinlined \
    dwpython; do
    [ -s "$tmp/$name.data" ] || { skip "$name: perf-fold on the perf.data" "not recorded here"; continue; }
    inl=
    case $name in file | jit) inl=--inline ;; esac # addr2line per address: two small ones
    for opts in "" "--pid --tid" "--addrs" "--kernel" $inl; do
        # shellcheck disable=SC2086 # the options are words
        perf script -i "$tmp/$name.data" -F comm,pid,tid,time,period,event,ip,sym,dso --ns \
            2>/dev/null | "$fold" $opts >"$tmp/text.folded" 2>/dev/null
        # shellcheck disable=SC2086
        "$fold" $opts "$tmp/$name.data" >"$tmp/data.folded" 2>"$tmp/data.err"
        if [ -s "$tmp/text.folded" ] && cmp -s "$tmp/text.folded" "$tmp/data.folded"; then
            ok "$name: perf-fold ${opts:+$opts }on the perf.data prints what it prints on perf script's text ($(wc -l <"$tmp/text.folded") stacks)"
        else
            notok "$name: perf-fold ${opts:+$opts }on the perf.data prints what it prints on perf script's text"
            diff "$tmp/text.folded" "$tmp/data.folded" | head -5 | sed 's/^/# /'
        fi
    done
done
if [ -s "$tmp/jit.data" ]; then
    "$fold" "$tmp/jit.data" >"$tmp/jit.folded" 2>/dev/null
    check_eval "jit: the C++ frames are demangled as perf shows them, the JIT's by its perf map" \
        'grep -q "main;spanfold_test::(anonymous namespace)::Worker<unsigned long>::churn [0-9]" "$tmp/jit.folded" &&
         { [ "$(uname -m)" != x86_64 ] || grep -q "main;jit_spin_loop [0-9]" "$tmp/jit.folded"; }'
else
    skip "jit: the C++ frames are demangled as perf shows them, the JIT's by its perf map" "no g++ or not recorded here"
fi
for name in jit node; do
    [ -s "$tmp/$name.data" ] &&
        rm -f /tmp/perf-"$(perf script -i "$tmp/$name.data" -F pid 2>/dev/null | head -1 | tr -d ' ')".map
done
# build ids, in a home of the test's own (perf's build-id cache is ~/.debug): a binary
# rebuilt after its recording is not used (perf record left its copy in the cache, which
# is); without the cache its frames are [unknown]; a stripped binary whose debug file is
# in the cache by its build id gets its names from there
bid() { # NAME HOME: perf-fold on NAME.data equal to the text path's, with HOME
    local name=$1 home=$2
    HOME=$home perf script -i "$tmp/$name.data" -F comm,pid,tid,time,period,event,ip,sym,dso \
        --ns 2>/dev/null | "$fold" >"$tmp/text.folded" 2>/dev/null
    HOME=$home "$fold" "$tmp/$name.data" >"$tmp/data.folded" 2>/dev/null
    [ -s "$tmp/text.folded" ] && cmp -s "$tmp/text.folded" "$tmp/data.folded"
}
mkdir -p "$tmp/home" "$tmp/home2"
cc -O1 -g -fno-omit-frame-pointer -o "$tmp/rebuilt" "$top/tests/data/perfdata/spin.c"
HOME=$tmp/home perf record -q -k mono -g -c 50000 -e cpu-clock:u -o "$tmp/rebuilt.data" \
    "$tmp/rebuilt" >/dev/null 2>&1
cc -O2 -g -fno-omit-frame-pointer -o "$tmp/rebuilt" "$top/tests/data/perfdata/spin.c"
if [ -s "$tmp/rebuilt.data" ] && [ -d "$tmp/home/.debug" ]; then
    check_eval "a binary rebuilt after its recording: the cache's copy names its frames, as perf's" \
        'bid rebuilt "$tmp/home" && grep -q "main;top_fn;leaf [0-9]" "$tmp/data.folded"'
    rm -rf "$tmp/home/.debug"
    check_eval "...and without the cache, its frames are [unknown], as perf's" \
        'bid rebuilt "$tmp/home" && grep -q "main;\[rebuilt\]" "$tmp/data.folded" &&
         ! grep -q top_fn "$tmp/data.folded"'
else
    skip "a binary rebuilt after its recording" "perf record keeps no build-id cache here"
    skip "...and without the cache" "perf record keeps no build-id cache here"
fi
cc -O1 -g -fno-omit-frame-pointer -o "$tmp/stripped" "$top/tests/data/perfdata/spin.c"
objcopy --only-keep-debug "$tmp/stripped" "$tmp/stripped.debug" && strip "$tmp/stripped"
id=$(readelf -n "$tmp/stripped" 2>/dev/null | awk '/Build ID/ {print $3}')
HOME=$tmp/home2 perf record -q --no-buildid-cache -k mono -g -c 50000 -e cpu-clock:u \
    -o "$tmp/stripped.data" "$tmp/stripped" >/dev/null 2>&1
mkdir -p "$tmp/home2/.debug/.build-id/${id:0:2}/${id:2}"
cp "$tmp/stripped.debug" "$tmp/home2/.debug/.build-id/${id:0:2}/${id:2}/debug"
if [ -s "$tmp/stripped.data" ] && [ -n "$id" ]; then
    check_eval "a stripped binary, its debug file in the build-id cache: named from it, as perf's" \
        'bid stripped "$tmp/home2" && grep -q "main;top_fn;leaf [0-9]" "$tmp/data.folded"'
else
    skip "a stripped binary, its debug file in the build-id cache" "not recorded here"
fi
# analysed elsewhere: the recorded files under --symfs DIR (the binary moved away from
# its recorded path), the kernel's symbols from --kallsyms FILE (a copy, one name changed
# to show it is the one read), as perf script takes them
cc -O1 -g -fno-omit-frame-pointer -o "$tmp/moved" "$top/tests/data/perfdata/spin.c"
perf record -q --no-buildid-cache -k mono -g -c 50000 -e cpu-clock:u -o "$tmp/moved.data" \
    "$tmp/moved" >/dev/null 2>&1
mkdir -p "$tmp/symfs$tmp" && mv "$tmp/moved" "$tmp/symfs$tmp/moved"
perf script -i "$tmp/moved.data" --symfs "$tmp/symfs" -F comm,pid,tid,time,period,event,ip,sym,dso \
    --ns 2>/dev/null | "$fold" >"$tmp/text.folded" 2>/dev/null
"$fold" --symfs "$tmp/symfs" "$tmp/moved.data" >"$tmp/data.folded" 2>/dev/null
if [ -s "$tmp/moved.data" ]; then
    check_eval "--symfs DIR: the binary found under DIR, as perf script --symfs finds it" \
        'cmp -s "$tmp/text.folded" "$tmp/data.folded" && grep -q "main;top_fn;leaf [0-9]" "$tmp/data.folded"'
else
    skip "--symfs DIR: the binary found under DIR" "not recorded here"
fi
if [ -s "$tmp/kernel.data" ]; then
    sed 's/ do_syscall_64$/ do_syscall_64_from_the_copy/' /proc/kallsyms >"$tmp/kallsyms"
    "$fold" --kallsyms "$tmp/kallsyms" "$tmp/kernel.data" >"$tmp/data.folded" 2>/dev/null
    perf script -i "$tmp/kernel.data" --kallsyms "$tmp/kallsyms" \
        -F comm,pid,tid,time,period,event,ip,sym,dso --ns 2>/dev/null | "$fold" >"$tmp/text.folded"
    check_eval "--kallsyms FILE: the kernel's names from FILE, as perf script --kallsyms reads them" \
        'grep -q "do_syscall_64_from_the_copy" "$tmp/data.folded" &&
         ! grep -q "do_syscall_64;" "$tmp/data.folded" && cmp -s "$tmp/text.folded" "$tmp/data.folded"'
else
    skip "--kallsyms FILE: the kernel's names from FILE" "the kernel may not be recorded here"
fi
# --call-graph dwarf: the frames only the unwind tables tell, the inline ones, and spanfold
# ingest reading the perf.data itself (records, not perf script's lines)
if [ -s "$tmp/dwinlined.data" ]; then
    "$fold" "$tmp/dwinlined.data" >"$tmp/dwinlined.folded" 2>/dev/null
    check_eval "--call-graph dwarf: unwound through frames without frame pointers, inline frames shown" \
        'grep -q "^inlined;.*main;run;churn;stir;mix [0-9]" "$tmp/dwinlined.folded"'
    # without addr2line on its PATH perf-fold shows no inline frames: perf script --no-inline's
    # folds (perf itself finds addr2line in its own places too, so it is asked not to)
    mkdir -p "$tmp/noa2l"
    perf script --no-inline -i "$tmp/dwinlined.data" -F comm,pid,tid,time,period,event,ip,sym,dso \
        --ns 2>/dev/null | "$fold" >"$tmp/text.folded"
    env PATH="$tmp/noa2l" "$fold" "$tmp/dwinlined.data" >"$tmp/data.folded" 2>/dev/null
    check_eval "--call-graph dwarf without addr2line: no inline frames, perf script --no-inline's folds" \
        'cmp -s "$tmp/text.folded" "$tmp/data.folded" && grep -q "main;run;churn [0-9]" "$tmp/data.folded" &&
         ! grep -q ";mix" "$tmp/data.folded"'
    "$(dirname "$fold")/spanfold" ingest --db "$tmp/dwarf.db" "$tmp/dwinlined.data" \
        2>"$tmp/dwarf-ingest.err"
    rc=$?
    check_eval "--call-graph dwarf: spanfold ingest reads it directly, the same stacks (rc $rc)" \
        '[ $rc -eq 0 ] && grep -q "dwinlined.data: [0-9]* samples of cpu-clock:u, 0 of [0-9]* records skipped" "$tmp/dwarf-ingest.err" &&
         [ "$(sqlite3 "$tmp/dwarf.db" "SELECT count(*) FROM stacks WHERE frames LIKE '"'"'%churn;stir;mix'"'"'")" -gt 0 ]'
else
    skip "--call-graph dwarf: unwound" "perf record --call-graph dwarf fails here"
    skip "--call-graph dwarf without addr2line" "not recorded here"
    skip "--call-graph dwarf: spanfold ingest reads it directly" "not recorded here"
fi
# a recording of another kernel (its build id changed in a copy): no symbols but the build-id
# cache's copy of that kernel's kallsyms, as perf's dso__find_kallsyms; none without it
kid=$([ -s "$tmp/kernel.data" ] && perf buildid-list -i "$tmp/kernel.data" 2>/dev/null |
    awk '$2 == "[kernel.kallsyms]" {print $1}')
if [ -n "$kid" ] && python3 -c '
import sys
b = bytearray(open(sys.argv[1], "rb").read())
i = b.find(bytes.fromhex(sys.argv[2]))
assert i > 0
b[i:i + 20] = bytes([0x11] * 20)
open(sys.argv[3], "wb").write(b)' "$tmp/kernel.data" "$kid" "$tmp/otherkernel.data"; then
    mkdir -p "$tmp/home3"
    check_eval "another kernel's recording, no copy of its kallsyms: kernel frames [unknown], as perf's" \
        'bid otherkernel "$tmp/home3" && grep -q "\[\[kernel.kallsyms\]\]" "$tmp/data.folded"'
    kdir="$tmp/home3/.debug/[kernel.kallsyms]/1111111111111111111111111111111111111111"
    mkdir -p "$kdir"
    sed 's/ do_syscall_64$/ do_syscall_64_cached/' /proc/kallsyms >"$kdir/kallsyms"
    check_eval "...with the cache's copy: its names, as perf's" \
        'bid otherkernel "$tmp/home3" && grep -q do_syscall_64_cached "$tmp/data.folded"'
else
    skip "another kernel's recording" "the kernel may not be recorded here"
    skip "...with the cache's copy" "the kernel may not be recorded here"
fi
# the running kernel's recording with the cache's copy of its kallsyms: the copy's names (the
# kernel as recorded; perf would format /proc/kallsyms anew), and /proc/kallsyms where the
# copy has no addresses (perf record run without the right to see them)
if [ -n "$kid" ] && [ "$kid" = "$(perf buildid-list -k 2>/dev/null)" ]; then
    kdir="$tmp/home4/.debug/[kernel.kallsyms]/$kid"
    mkdir -p "$kdir"
    sed 's/ do_syscall_64$/ do_syscall_64_as_recorded/' /proc/kallsyms >"$kdir/kallsyms"
    check_eval "the recorded kernel's copy in the cache: its names, not this moment's /proc/kallsyms" \
        'HOME=$tmp/home4 "$fold" "$tmp/kernel.data" >"$tmp/data.folded" 2>/dev/null &&
         grep -q do_syscall_64_as_recorded "$tmp/data.folded"'
    sed 's/^[0-9a-f]*/0000000000000000/' /proc/kallsyms >"$kdir/kallsyms"
    check_eval "...a copy with its addresses hidden: /proc/kallsyms, the same folds as perf script's" \
        'bid kernel "$tmp/home4" && grep -q "do_syscall_64" "$tmp/data.folded"'
else
    skip "the recorded kernel's copy in the cache" "the kernel may not be recorded here"
    skip "...a copy with its addresses hidden" "the kernel may not be recorded here"
fi
# --db: the same database from the perf.data as from perf script's text of it, as
# spanfold ingest asks perf for it (--header, the tracepoints' fields), table by table,
# stacks included; a CPU profile with the scheduler's tracepoints (off-CPU intervals),
# in file and pipe mode, where this user may record tracepoints
sched='cpu-clock/period=1001001,name=cpu-clock/'
work='for i in 1 2 3; do sleep 0.01; head -c 3000000 /dev/zero | gzip -c >/dev/null; done'
perf record -q -k mono -g --sample-cpu -c 1 -e "$sched" -e sched:sched_switch \
    -e sched:sched_wakeup -o "$tmp/sched.data" sh -c "$work" >/dev/null 2>&1 ||
    rm -f "$tmp/sched.data"
perf record -q -k mono -g --sample-cpu -c 1 -e "$sched" -e sched:sched_switch \
    -e sched:sched_wakeup -o - sh -c "$work" 2>/dev/null >"$tmp/sched-pipe.data" ||
    rm -f "$tmp/sched-pipe.data"
# ...and a recording with a sample read a round late (tests/perf-fold/reround.py), which
# perf still hands on in time order: where a CPU's ring is read after another's has gone
# on, as on a busy machine recording every CPU
for name in xz kernel python; do
    python3 "$top/tests/perf-fold/reround.py" "$tmp/$name.data" "$tmp/reround.data" && break
    rm -f "$tmp/reround.data"
done
if [ -s "$tmp/reround.data" ]; then
    check_eval "reround: perf script reads the sample a round late in its place ($name.data)" \
        'cmp -s <(perf script -i "$tmp/$name.data" --ns 2>/dev/null) <(perf script -i "$tmp/reround.data" --ns 2>/dev/null)'
else
    skip "reround: perf script reads the sample a round late in its place" "no recording here with two samples in its first round"
fi
for name in sched sched-pipe kernel python system reround; do
    [ -s "$tmp/$name.data" ] || { skip "$name: perf-fold --db on the perf.data" "not recorded here"; continue; }
    f=comm,pid,tid,cpu,time,period,event,ip,sym,dso
    case $name in kernel | python | reround) f=${f/cpu,/} ;; esac # recorded without --sample-cpu
    rm -f "$tmp/d.db" "$tmp/t.db"
    perf script -i "$tmp/$name.data" --header --ns -F "$f" -F "trace:$f,trace" \
        >"$tmp/$name.txt" 2>/dev/null
    "$fold" --quiet --db "$tmp/t.db" "$tmp/$name.txt" >/dev/null 2>&1
    "$fold" --quiet --db "$tmp/d.db" "$tmp/$name.data" >/dev/null 2>&1
    same=1
    for table in samples stacks offcpu sample_events; do
        sql="SELECT * FROM $table ORDER BY 1"
        [ "$(sqlite3 "$tmp/t.db" "$sql" | md5sum)" = "$(sqlite3 "$tmp/d.db" "$sql" | md5sum)" ] ||
            { same=0; echo "# $name: $table differs"; }
    done
    sql="SELECT kind, clock, status FROM sources"
    [ "$(sqlite3 "$tmp/t.db" "$sql")" = "$(sqlite3 "$tmp/d.db" "$sql")" ] || same=0
    counts="$(sqlite3 "$tmp/d.db" "SELECT count(*) FROM samples") samples, $(sqlite3 "$tmp/d.db" "SELECT count(*) FROM offcpu") off-CPU intervals"
    check_eval "$name: perf-fold --db on the perf.data stores what it stores from perf script's text ($counts)" \
        '[ $same = 1 ] && [ "$(sqlite3 "$tmp/d.db" "SELECT count(*) FROM samples")" -gt 0 ]'
done
tap_plan
