#!/bin/sh
# lib/sf_tracectx conformance against the shared corpus (W3C Trace Context verdicts,
# propagation examples, grpc-trace-bin); TAP from tests/scripts/tracectx_corpus.py.
. "$(dirname "$0")/../tap.sh"
corpus=$top/tests/data/corpus
# the driver of this build: $SF_BUILD is build/ or build/san/ (SAN=1), set by make
driver=${SF_BUILD:-$top/build}/tests/unit/test_tracectx
if [ ! -d "$corpus/w3c" ]; then
    echo "not ok 1 - tracectx corpus: no corpus at $corpus"; echo "1..1"; exit 0
fi
if [ ! -x "$driver" ]; then
    echo "not ok 1 - tracectx corpus: driver $driver not built (make build/tests/unit/test_tracectx)"
    exit 1
fi
exec python3 "$top/tests/scripts/tracectx_corpus.py" "$driver" "$corpus"
