#!/usr/bin/env bash
# Screenshot of Wireshark (Qt) with the spanfold plugin: a capture opened with the
# display filter `tracectx`, trace-context columns, and one packet's Trace Context
# tree expanded.  Runs under Xvfb; Wireshark runs as an unprivileged user because
# it ignores personal plugin folders as root.
# Usage: scripts/screenshot-dissector.sh CAPTURE OUT.png [FRAME] [-- extra wireshark args]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cap=$(realpath "$1"); out=$2; frame=${3:-1}; shift 3 || shift $#
[ "${1:-}" = "--" ] && shift
so=$top/build/dissector/spanfold.so
for cmd in Xvfb wireshark xdotool import setpriv; do
    command -v "$cmd" >/dev/null || { echo "screenshot: $cmd not installed" >&2; exit 3; }
done
[ -f "$so" ] || { echo "screenshot: $so not built (make)" >&2; exit 3; }
work=$(mktemp -d); trap 'kill $ws $xv 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/plugins/4.0/epan" "$work/home/.config/wireshark"
# window geometry and pane sizes live in Wireshark's "recent" files
cat >"$work/home/.config/wireshark/recent_common" <<'RC'
gui.geometry_main_x: 0
gui.geometry_main_y: 0
gui.geometry_main_width: 1500
gui.geometry_main_height: 950
gui.geometry_main_maximized: FALSE
RC
cat >"$work/home/.config/wireshark/recent" <<'RC'
gui.geometry_main_upper_pane: 260
gui.geometry_main_lower_pane: 640
gui.byte_view_show: FALSE
RC
cp "$so" "$work/plugins/4.0/epan/"
cp "$cap" "$work/capture"
chmod -R a+rwX "$work"
disp=:$((90 + RANDOM % 9))
Xvfb "$disp" -screen 0 1500x950x24 -nolisten tcp >/dev/null 2>&1 & xv=$!
sleep 1
cols='"No.","%m","Time","%t","Protocol","%p","Format","%Cus:tracectx.format:0:R","Trace ID","%Cus:tracectx.trace_id:0:R","Span ID","%Cus:tracectx.span_id:0:R","Valid","%Cus:tracectx.valid:0:R","Info","%i"'
DISPLAY=$disp setpriv --reuid=nobody --regid=nogroup --clear-groups \
    env HOME="$work/home" WIRESHARK_PLUGIN_DIR="$work/plugins" \
    wireshark -r "$work/capture" -Y tracectx -g "$frame" -o "gui.column.format:$cols" \
    "$@" >/dev/null 2>&1 & ws=$!
# wait for the main window, then expand the selected packet's tree
for _ in $(seq 1 40); do
    win=$(DISPLAY=$disp xdotool search --onlyvisible --name 'Wireshark' 2>/dev/null | head -n 1) && [ -n "$win" ] && break
    sleep 0.5
done
[ -n "${win:-}" ] || { echo "screenshot: no Wireshark window appeared" >&2; exit 1; }
sleep 3
DISPLAY=$disp xdotool windowactivate --sync "$win" windowsize "$win" 1500 950 >/dev/null 2>&1 || true
# focus the packet details, collapse all, go to the last tree (Trace Context), expand its subtrees
DISPLAY=$disp xdotool mousemove 200 400 click 1 >/dev/null 2>&1 || true
sleep 0.5
DISPLAY=$disp xdotool key ctrl+Left End shift+Right >/dev/null 2>&1 || true
sleep 1.5
DISPLAY=$disp import -window root "$out"
echo "screenshot: $out"
