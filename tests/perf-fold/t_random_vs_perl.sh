#!/usr/bin/env bash
# Differential test against stackcollapse-perf.pl itself: 60 seeded random mutations
# of the corpus inputs (mutate_perf.py), each folded by both with several option sets;
# the outputs must be byte-identical.  Needs perl, python3 and a FlameGraph checkout.
set -u
. "$(dirname "$0")/../tap.sh"
pf=${SF_BIN:-$top/bin}/perf-fold
corpus=$top/tests/data/corpus/flamegraph/test
fg=${FLAMEGRAPH_DIR:-}
if [ ! -f "$fg/stackcollapse-perf.pl" ] || ! command -v python3 >/dev/null || [ ! -d "$corpus" ]; then
    tap_name="random inputs vs stackcollapse-perf.pl"; tap_skip_all "needs FLAMEGRAPH_DIR, python3 and the corpus"
fi
tap_tmpdir
for seed in $(seq 1 60); do
    python3 "$top/tests/perf-fold/mutate_perf.py" "$seed" "$corpus" >"$tmp/in.txt"
    bad=""
    for o in "" --tid --all --addrs "--pid --jit" --srcline "--event-filter=cycles"; do
        perl "$fg/stackcollapse-perf.pl" $o "$tmp/in.txt" >"$tmp/want" 2>/dev/null
        "$pf" -q $o "$tmp/in.txt" >"$tmp/got" 2>/dev/null
        cmp -s "$tmp/want" "$tmp/got" || bad="$bad '${o:-default}'"
    done
    n=$((n + 1))
    if [ -z "$bad" ]; then echo "ok $n - mutated input $seed: same as stackcollapse-perf.pl"
    else echo "not ok $n - mutated input $seed differs with$bad"; fi
done
tap_plan
