#!/usr/bin/env bash
# Every link type pcap2spans decodes beyond Ethernet, end to end: h1-lo.pcap (Ethernet)
# is rewritten frame by frame into PPP (9), PPP in HDLC framing (50, PPP and Cisco
# variants), Cisco HDLC (104), ARCnet BSD (7, RFC 1201 and RFC 1051 headers) and ARCnet
# Linux (129, as tcpdump's arcnet-rfc1201/rfc1051 test captures are); each must give
# exactly the spans of the original, with nothing counted as unsupported.
set -u
. "$(dirname "$0")/../tap.sh"
d=$top/tests/pcap2spans/data
tap_tmpdir

# rewrite.py IN OUT KIND: each Ethernet frame's 14-byte header replaced by KIND's
rewrite() {
    python3 - "$@" <<'PY'
import struct, sys
src, dst, kind = sys.argv[1], sys.argv[2], sys.argv[3]
b = open(src, "rb").read()
assert b[:4] == b"\xd4\xc3\xb2\xa1" and struct.unpack("<I", b[20:24])[0] == 1
dlt = {"ppp": 9, "ppp-pfc": 9, "ppp_hdlc": 50, "ppp_hdlc-cisco": 50, "chdlc": 104,
       "arcnet-1201": 7, "arcnet-1051": 7, "arcnet_linux-1201": 129, "arcnet_linux-1051": 129}[kind]
out = bytearray(b[:20] + struct.pack("<I", dlt))
off, seq = 24, 0
while off < len(b):
    sec, usec, caplen, wire = struct.unpack("<IIII", b[off:off + 16])
    frame = b[off + 16:off + 16 + caplen]
    off += 16 + caplen
    et, ip = struct.unpack(">H", frame[12:14])[0], frame[14:]
    v6 = et == 0x86DD
    assert et in (0x0800, 0x86DD)
    seq += 1
    if kind in ("ppp", "ppp_hdlc"):
        h = b"\xff\x03" + (b"\x00\x57" if v6 else b"\x00\x21")
    elif kind == "ppp-pfc":
        h = b"\x57" if v6 else b"\x21"
    elif kind in ("chdlc", "ppp_hdlc-cisco"):
        h = b"\x0f\x00" + struct.pack(">H", et)
    elif kind == "arcnet-1201":
        h = b"\x50\xbe" + (b"\xc4" if v6 else b"\xd4") + b"\x00" + struct.pack(">H", seq)
    elif kind == "arcnet-1051":
        h = b"\x50\xbe\xf0"
    elif kind == "arcnet_linux-1201":
        h = b"\x50\xbe\x00\x00" + (b"\xc4" if v6 else b"\xd4") + b"\x00" + struct.pack(">H", seq)
    else:
        h = b"\x50\xbe\x00\x00\xf0"
    frame = h + ip
    out += struct.pack("<IIII", sec, usec, len(frame), wire - 14 + len(h)) + frame
open(dst, "wb").write(out)
PY
}

pcap2spans --quiet "$d/h1-lo.pcap" >"$tmp/eth.json"
check_eval "the Ethernet original gives 8 spans" '[ "$(wc -l <"$tmp/eth.json")" -eq 8 ]'
for k in ppp ppp-pfc ppp_hdlc ppp_hdlc-cisco chdlc arcnet-1201 arcnet-1051 arcnet_linux-1201 arcnet_linux-1051; do
    if ! rewrite "$d/h1-lo.pcap" "$tmp/$k.pcap" "$k"; then
        notok "$k: capture rewritten from h1-lo.pcap"
        continue
    fi
    pcap2spans "$tmp/$k.pcap" >"$tmp/$k.json" 2>"$tmp/$k.err"; rc=$?
    check_eval "$k: exit 0, the spans of the Ethernet original" \
        '[ "$rc" -eq 0 ] && cmp -s "$tmp/eth.json" "$tmp/$k.json"'
    check_eval "$k: no link type or network layer counted as unsupported" \
        '! grep -q "not supported" "$tmp/$k.err" && grep -q "unsupported: link 0, network 0, fragments 0; truncated 0, malformed 0" "$tmp/$k.err"'
done
tap_plan
