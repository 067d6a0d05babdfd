#!/usr/bin/env bash
# Wireshark's Qt GUI under Xvfb opens a sample with the plugin and the display
# filter `tracectx`; the screenshot is kept as a test artefact
# (tests/artifacts/dissector-gui.png) and must show a real window, not a blank
# screen.
set -u
. "$(dirname "$0")/../tap.sh"
so=${SF_BUILD:-$top/build}/dissector/spanfold.so
for c in Xvfb wireshark xdotool import setpriv; do
    command -v $c >/dev/null || { tap_name="Wireshark GUI screenshot"; tap_skip_all "$c not installed"; }
done
[ -f "$so" ] || { tap_name="Wireshark GUI screenshot"; tap_skip_all "plugin not built"; }
mkdir -p "$top/tests/artifacts"
png=$top/tests/artifacts/dissector-gui.png
rm -f "$png"
port=$(python3 -c "import json; print([x for x in json.load(open('$top/samples/pcap/MANIFEST.json'))['files'] if x['file']=='grpc.pcap'][0]['h2c_ports'][0])")
"$top/scripts/screenshot-dissector.sh" "$top/samples/pcap/grpc.pcap" "$png" 9 -- -d "tcp.port==$port,http2" >/dev/null 2>&1
[ -s "$png" ] && echo "ok 1 - screenshot written to tests/artifacts/dissector-gui.png" || echo "not ok 1 - no screenshot"
# a real window has many colours; a blank or black screen has one or two
colours=$(identify -format '%k' "$png" 2>/dev/null || echo 0)
[ "${colours:-0}" -gt 50 ] && echo "ok 2 - the screenshot shows a rendered window ($colours colours)" ||
    echo "not ok 2 - the screenshot looks blank ($colours colours)"
echo "1..2"
