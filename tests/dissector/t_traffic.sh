#!/usr/bin/env bash
# The Trace Context plugin in tshark 4.0 over the captures of the real-traffic classes of
# issue #18 (tests/pcap2spans/traffic_cases.py: loss recovery, mid-connection gRPC at
# stream ids in the millions, keep-alive probes, a 72 KB header section, ...): the
# request contexts it shows equal pcap2spans' on each (compare.py, without a manifest),
# and tshark -2 shows the same as one pass.  tshark runs as `nobody` (see t_tshark.sh).
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
so=${SF_BUILD:-$top/build}/dissector/spanfold.so
tap_name="dissector on the traffic cases"
command -v tshark >/dev/null || tap_skip_all "tshark not installed"
command -v python3 >/dev/null || tap_skip_all "python3 not installed"
[ -f "$so" ] || tap_skip_all "plugin not built (needs libwireshark-dev 4.0)"
[ -x "$bin/pcap2spans" ] || tap_skip_all "pcap2spans not built"
ldd "$so" 2>/dev/null | grep -q 'libasan' &&
    tap_skip_all "plugin built with AddressSanitizer (SAN=1): an uninstrumented tshark cannot load it"
tap_tmpdir
mkdir -p "$tmp/plugins/4.0/epan" "$tmp/home" "$tmp/c"
cp "$so" "$tmp/plugins/4.0/epan/"
(cd "$top/tests/pcap2spans" && PYTHONDONTWRITEBYTECODE=1 python3 traffic_cases.py "$tmp/c") || exit 2
chmod -R a+rwX "$tmp"
if [ "$(id -u)" = 0 ]; then
    as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
else
    as_user=()
fi
ts() { "${as_user[@]}" env HOME="$tmp/home" WIRESHARK_PLUGIN_DIR="$tmp/plugins" tshark "$@"; }
n=1
cases=$tmp/c/cases.json
for f in $(python3 -c "import json; print(' '.join(c['file'] for c in json.load(open('$cases'))))"); do
    args=()
    for p in $(python3 -c "import json; print(' '.join(str(p) for c in json.load(open('$cases')) if c['file'] == '$f' for p in c.get('h2c_ports', [])))"); do
        args+=(-d "tcp.port==$p,http2")
    done
    ts -r "$tmp/c/$f" "${args[@]}" -T json --no-duplicate-keys -J tracectx -Y tracectx >"$tmp/$f.json" 2>/dev/null
    ts -2 -r "$tmp/c/$f" "${args[@]}" -T json --no-duplicate-keys -J tracectx -Y tracectx >"$tmp/$f.2.json" 2>/dev/null
    "$bin/pcap2spans" --ndjson --quiet "$tmp/c/$f" >"$tmp/$f.ndjson" 2>/dev/null
    out=$(python3 "$top/tests/dissector/compare.py" --tshark-json "$tmp/$f.json" \
        --tshark2-json "$tmp/$f.2.json" --ndjson "$tmp/$f.ndjson" --file "$f" --start $n)
    printf '%s\n' "$out" | grep -v '^# next'
    n=$(printf '%s\n' "$out" | sed -n 's/^# next //p')
done
echo "1..$((n - 1))"
