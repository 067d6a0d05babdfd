#!/usr/bin/env bash
# h2c upgrades end to end: captures of one upgrade whose request carries HTTP2-Settings.
# A valid value is no event; a malformed one is one h2c_settings row in connection_events
# (at the 101's time, with why in its detail) and the span stays complete (RFC 7540 3.2.1).
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_tmpdir
command -v sqlite3 >/dev/null || tap_skip_all "sqlite3 (the CLI) not installed"

# mk FILE SETTINGS_LINES: one connection; the request's extra lines are SETTINGS_LINES
# (Python escapes); the server answers 101, its SETTINGS, :status 200 and "ok" on stream 1.
mk() {
    PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$top/tests/pcap2spans" python3 - "$1" "$2" <<'PY'
import struct, sys
import tcp_pcap
def frame(t, fl, sid, p=b""):
    return struct.pack(">I", len(p))[1:] + bytes([t, fl]) + struct.pack(">I", sid) + p
extra = sys.argv[2].encode().decode("unicode_escape").encode()
req = (b"GET /up HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, HTTP2-Settings\r\n"
       b"Upgrade: h2c\r\n" + extra + b"\r\n")
resp = (b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n" +
        frame(4, 0, 0) + frame(1, 4, 1, b"\x88") + frame(0, 1, 1, b"ok"))
tcp_pcap.write_exchange(sys.argv[1], req, resp)
PY
}

# case NAME SETTINGS_LINES WANT_DETAIL ("" = no h2c_settings event)
case_() {
    local name=$1 lines=$2 want=$3 db=$tmp/$1.db got spans
    mk "$tmp/$name.pcap" "$lines" || { notok "$name: capture written"; return; }
    "$bin/pcap2spans" --quiet --db "$db" "$tmp/$name.pcap"
    check "$name: exit 0" [ $? -eq 0 ]
    spans=$(sqlite3 "$db" "select count(*) from spans where proto = 'h2' and stream_id = 1 and
                           status = 200 and partial = 0 and path = '/up'")
    check "$name: stream 1 is a complete h2 span with :status 200" [ "$spans" = 1 ]
    got=$(sqlite3 "$db" "select ts_ns || ' ' || detail from connection_events
                         where kind = 'h2c_settings'")
    if [ -z "$want" ]; then
        check "$name: no h2c_settings event" [ -z "$got" ]
    else
        check "$name: h2c_settings event at the 101 ($got)" \
            [ "$got" = "1700000000004000000 $want" ]
    fi
}

case_ valid 'HTTP2-Settings: AAEAAQAAAAUAAIAA\r\n' ""
case_ absent '' ""
case_ badchar 'HTTP2-Settings: AAEA*QAA\r\n' "HTTP2-Settings is not base64url"
case_ five 'HTTP2-Settings: AAEAAQA\r\n' "HTTP2-Settings of 5 bytes, not a multiple of 6"
case_ two 'HTTP2-Settings: AAEAAQAA\r\nhttp2-settings: AAEAAQAA\r\n' \
    "2 HTTP2-Settings fields (RFC 7540 3.2.1 wants one)"
case_ long "HTTP2-Settings: $(printf 'AAEAAQAA%.0s' $(seq 129))\r\n" \
    "HTTP2-Settings of 1032 bytes (over 1024)"
case_ frame 'HTTP2-Settings: AAUAAABk\r\n' \
    "HTTP2-Settings: SETTINGS_MAX_FRAME_SIZE 100 out of range"
tap_plan
