#!/usr/bin/env bash
# Random folded inputs (names that collide in byte order: a, a2, aZ, a.b, (x, -, "a a",
# empty frames, off-wake "--" separators, differential columns, fractions) rendered by our
# flamegraph and by flamegraph.pl (FLAMEGRAPH_DIR) with several options, compared as sets of
# frames.  Skipped when FlameGraph is not there.  SEEDS (default 12) inputs.  Prints TAP.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/../tap.sh"
fgbin=${SF_BIN:-$top/bin}/flamegraph
pl=${FLAMEGRAPH_DIR:-}/flamegraph.pl
if [ -z "${FLAMEGRAPH_DIR:-}" ] || [ ! -f "$pl" ] || ! command -v perl >/dev/null; then
    tap_name="random inputs against flamegraph.pl"; tap_skip_all "set FLAMEGRAPH_DIR to a FlameGraph checkout"
fi
tap_tmpdir
for seed in $(seq 1 "${SEEDS:-12}"); do
    python3 - "$seed" >"$tmp/in.txt" <<'PY'
import random, sys
seed = int(sys.argv[1]); r = random.Random(seed)
names = ["a", "a2", "aZ", "a.b", "(x", "b", "b_[k]", "c", "-", "z", "a a", "A", "ab", "a_[w]x"]
diff = r.random() < 0.3
for _ in range(r.randint(1, 25)):
    fr = [r.choice(names) for _ in range(r.randint(0, 5))]
    if r.random() < 0.1 and len(fr) > 1 and seed % 2 == 0:
        fr[r.randrange(len(fr) - 1)] = ""
    if r.random() < 0.3 and len(fr) >= 2:
        fr.insert(r.randrange(1, len(fr)), "--")
    c = r.choice(["1", "2", "3", "10", "1.5"])
    print(";".join(fr), *( [r.choice(["0", "1", "4"]), c] if diff else [c] ))
PY
    opts=("" "--reverse" "--flamechart" "--minwidth 0" "--reverse --inverted")
    [ $((seed % 2)) -eq 1 ] && opts+=("--colors chain" "--colors chain --reverse")
    for o in "${opts[@]}"; do
        n=$((n + 1))
        # shellcheck disable=SC2086
        PERL_HASH_SEED=0 perl "$pl" $o "$tmp/in.txt" >"$tmp/pl.svg" 2>/dev/null
        # shellcheck disable=SC2086
        "$fgbin" --quiet $o "$tmp/in.txt" >"$tmp/our.svg" 2>/dev/null
        if out=$(python3 "$here/fgcompare.py" "$tmp/pl.svg" "$tmp/our.svg"); then
            echo "ok $n - seed $seed [${o:-defaults}]"
        else
            echo "not ok $n - seed $seed [${o:-defaults}]"
            printf '%s\n' "$out"
            sed 's/^/#   in: /' "$tmp/in.txt"
        fi
    done
done
tap_plan
