#!/usr/bin/env bash
# The Trace Context plugin loaded in tshark 4.0, over every sample capture (TLS ones
# decrypted by both with their key logs): request contexts equal the manifest's and
# pcap2spans' (same ids, formats, validity and reasons), and tshark -2 gives the same
# as one pass.  Also: the
# plugin loads, the span filter finds request and response, and the stats tree.
# tshark ignores personal plugin folders as root, so it runs as `nobody`.
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
so=${SF_BUILD:-$top/build}/dissector/spanfold.so
n=1
tap_name="dissector with tshark"
command -v tshark >/dev/null || tap_skip_all "tshark not installed"
[ -f "$so" ] || tap_skip_all "plugin not built (needs libwireshark-dev 4.0)"
# A SAN=1 plugin needs the ASan runtime first in tshark's library list; preloading
# it also runs tshark's extcap helpers under ASan, which hang.  The normal build runs this.
ldd "$so" 2>/dev/null | grep -q 'libasan' &&
    tap_skip_all "plugin built with AddressSanitizer (SAN=1): an uninstrumented tshark cannot load it"
tap_tmpdir
mkdir -p "$tmp/plugins/4.0/epan" "$tmp/home"
cp "$so" "$tmp/plugins/4.0/epan/"
cp "$top"/samples/pcap/* "$tmp/"
chmod -R a+rwX "$tmp"
if [ "$(id -u)" = 0 ]; then
    as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
else
    as_user=()
fi
ts() { "${as_user[@]}" env HOME="$tmp/home" WIRESHARK_PLUGIN_DIR="$tmp/plugins" tshark "$@"; }
t() { if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fi; n=$((n + 1)); }

ts -G plugins 2>/dev/null | grep -q 'spanfold.so' ; t $? "tshark loads spanfold.so"
ts -G fields 2>/dev/null | grep -q $'\ttracectx.span_id\t'; t $? "tracectx.span_id is a registered field"
# the field's description is the list of lib/sf_tc_formats.h, as the library reports it
formats=$("${SF_BUILD:-$top/build}/tests/unit/test_tracectx" --list-formats | cut -f1 | paste -sd, - | sed 's/,/, /g')
blurb=$(ts -G fields 2>/dev/null | awk -F'\t' '$3 == "tracectx.format" { print $NF }')
[ -n "$formats" ] && [ "$blurb" = "$formats" ]; t $? "tracectx.format describes the formats of lib/sf_tc_formats.h ($blurb)"

manifest=$tmp/MANIFEST.json
files=$(python3 -c "import json; print(' '.join(f['file'] for f in json.load(open('$manifest'))['files']))")
for f in $files; do
    args=()
    for p in $(python3 -c "import json; f=[x for x in json.load(open('$manifest'))['files'] if x['file']=='$f'][0]; print(' '.join(map(str, f['h2c_ports'])))"); do
        args+=(-d "tcp.port==$p,http2")
    done
    keylog=$(python3 -c "import json; f=[x for x in json.load(open('$manifest'))['files'] if x['file']=='$f'][0]; print(f['keylog'] or '')")
    [ -n "$keylog" ] && args+=(-o "tls.keylog_file:$tmp/$keylog")
    ts -r "$tmp/$f" "${args[@]}" -T json --no-duplicate-keys -J tracectx -Y tracectx >"$tmp/$f.json" 2>"$tmp/$f.err"
    ts -2 -r "$tmp/$f" "${args[@]}" -T json --no-duplicate-keys -J tracectx -Y tracectx >"$tmp/$f.2.json" 2>/dev/null
    cmp=(--tshark-json "$tmp/$f.json" --tshark2-json "$tmp/$f.2.json")
    # pcap2spans on the same file, with the same key log for TLS captures
    if [ -x "$bin/pcap2spans" ]; then
        p2s_args=(--ndjson --quiet)
        [ -n "$keylog" ] && p2s_args+=(--keylog "$tmp/$keylog")
        "$bin/pcap2spans" "${p2s_args[@]}" "$tmp/$f" >"$tmp/$f.ndjson" 2>/dev/null
        cmp+=(--ndjson "$tmp/$f.ndjson")
    fi
    out=$(python3 "$top/tests/dissector/compare.py" "${cmp[@]}" --manifest "$manifest" --file "$f" --start $n)
    printf '%s\n' "$out" | grep -v '^# next'
    n=$(printf '%s\n' "$out" | sed -n 's/^# next //p')
done

# A span filter finds the request and its response (h2c sample, first traceparent span).
h2port=$(python3 -c "import json; print([x for x in json.load(open('$manifest'))['files'] if x['file']=='h2c.pcap'][0]['h2c_ports'][0])")
sid=$(bin=1 python3 -c "
import json
for l in open('$tmp/h2c.pcap.json' if False else '/dev/null'): pass
m=json.load(open('$manifest'))
f=[x for x in m['files'] if x['file']=='h2c.pcap'][0]
print([c['span_id'] for r in f['requests'] for c in r['contexts'] if c['valid'] and c['format']=='traceparent'][0])")
frames=$(ts -2 -r "$tmp/h2c.pcap" -d "tcp.port==$h2port,http2" -Y "tracectx.span_id == \"$sid\"" \
    -T fields -e tracectx.direction 2>/dev/null | tr ',' '\n' | sort -u | tr '\n' ' ')
[ "$frames" = "request response " ]; t $? "tracectx.span_id == \"$sid\" finds request and response frames ($frames)"
ts -r "$tmp/h2c.pcap" -d "tcp.port==$h2port,http2" -q -z tracectx,tree 2>/dev/null | grep -q "$sid"
t $? "the Spans per trace statistics list the span"
# Malformed contexts raise expert info with the reason.
ts -r "$tmp/http1.pcap" -q -z expert,warn 2>/dev/null | grep -q 'Malformed traceparent'
t $? "malformed contexts are reported as expert info"
# The sampling attributes: the plugin's tracectx.attr counts what pcap2spans keeps, per
# protocol (the drift recording serves HTTP/1.1 and h2c on one port: once as HTTP, once
# decoded as HTTP/2)
if [ -x "$bin/pcap2spans" ] && command -v sqlite3 >/dev/null; then
    cp "$top/tests/data/drift/baggage/demo.pcap" "$tmp/drift.pcap"
    chmod a+r "$tmp/drift.pcap"
    "$bin/pcap2spans" --quiet --db "$tmp/drift.db" "$tmp/drift.pcap" 2>/dev/null
    dport=$(sqlite3 "$tmp/drift.db" "SELECT server_port FROM connections GROUP BY 1 ORDER BY count(*) DESC LIMIT 1")
    for w in 'http/1.1|' "h2|-d tcp.port==$dport,http2"; do
        proto=${w%%|*} dec=${w#*|}
        # shellcheck disable=SC2086
        got_h=$(ts -r "$tmp/drift.pcap" $dec -Y 'tracectx.attr.key == "header.x-envoy-downstream-service-cluster"' \
            -T fields -e frame.number 2>/dev/null | wc -l)
        # shellcheck disable=SC2086
        got_b=$(ts -r "$tmp/drift.pcap" $dec -Y 'tracectx.attr == "baggage.env=prod-legacy"' \
            -T fields -e frame.number 2>/dev/null | wc -l)
        want_h=$(sqlite3 "$tmp/drift.db" "SELECT count(*) FROM span_headers h JOIN spans s ON s.id = h.span_row
            WHERE h.name = 'x-envoy-downstream-service-cluster' AND s.proto = '$proto'")
        want_b=$(sqlite3 "$tmp/drift.db" "SELECT count(*) FROM contexts c JOIN spans s ON s.id = c.span_row
            WHERE c.format = 'baggage' AND c.raw LIKE '%env=prod-legacy%' AND s.proto = '$proto'")
        [ "$got_h" = "$want_h" ] && [ "$want_h" -gt 0 ]
        t $? "$proto: tracectx.attr.key == header.x-envoy-... on as many requests as pcap2spans kept it ($got_h, $want_h)"
        [ "$got_b" = "$want_b" ] && [ "$want_b" -gt 0 ]
        t $? "$proto: tracectx.attr == baggage.env=prod-legacy as pcap2spans' baggage ($got_b, $want_b)"
    done
fi
echo "1..$((n - 1))"
