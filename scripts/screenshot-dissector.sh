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
# Xvfb picks a free display and writes its number once it accepts clients (-displayfd):
# no race with its start-up, and none with another X server or one still shutting down.
Xvfb -displayfd 3 -screen 0 1500x950x24 -nolisten tcp 3>"$work/display" >/dev/null 2>&1 & xv=$!
for _ in $(seq 1 100); do
    [ -s "$work/display" ] && break
    sleep 0.1
done
[ -s "$work/display" ] || { echo "screenshot: Xvfb did not start" >&2; exit 1; }
disp=:$(tr -d '\n' <"$work/display")
cols='"No.","%m","Time","%t","Protocol","%p","Format","%Cus:tracectx.format:0:R","Trace ID","%Cus:tracectx.trace_id:0:R","Span ID","%Cus:tracectx.span_id:0:R","Valid","%Cus:tracectx.valid:0:R","Info","%i"'
DISPLAY=$disp setpriv --reuid=nobody --regid=nogroup --clear-groups \
    env HOME="$work/home" WIRESHARK_PLUGIN_DIR="$work/plugins" \
    wireshark -r "$work/capture" -Y tracectx -g "$frame" -o "gui.column.format:$cols" \
    "$@" >"$work/wireshark.log" 2>&1 & ws=$!
# wait for the main window, then expand the selected packet's tree; with a file open its
# title is the file's name ("capture"), while "Wireshark" is the splash screen's, which
# may or may not still be up
for _ in $(seq 1 60); do
    win=$(DISPLAY=$disp xdotool search --onlyvisible --name '^capture' 2>/dev/null | head -n 1) && [ -n "$win" ] && break
    sleep 0.5
done
if [ -z "${win:-}" ]; then
    echo "screenshot: no Wireshark window appeared" >&2
    kill -0 $ws 2>/dev/null || echo "screenshot: wireshark exited: $(tail -n 3 "$work/wireshark.log")" >&2
    DISPLAY=$disp xdotool search --name . getwindowname %@ >&2 2>/dev/null || true
    exit 1
fi
sleep 3
DISPLAY=$disp xdotool windowactivate --sync "$win" windowsize "$win" 1500 950 >/dev/null 2>&1 || true
# focus the packet details, collapse all, go to the last tree (Trace Context), expand its subtrees
DISPLAY=$disp xdotool mousemove 200 400 click 1 >/dev/null 2>&1 || true
sleep 0.5
DISPLAY=$disp xdotool key ctrl+Left End shift+Right >/dev/null 2>&1 || true
sleep 1.5
DISPLAY=$disp import -window root "$out"
echo "screenshot: $out"
