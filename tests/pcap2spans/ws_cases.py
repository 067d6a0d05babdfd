#!/usr/bin/env python3
"""ws_cases.py OUT.pcap: JSON-RPC over one WebSocket connection (RFC 6455, with
permessage-deflate, RFC 7692), for t_mcp.sh; what each part must give is in t_mcp.sh.

  1 a request in three masked fragments with a ping between them; its response deflated
  2 a second request; its response deflated with the window kept from the first
    (context takeover: it refers back to the first message's bytes)
  3 a request the server never answers, then a control frame 126 bytes long from the
    server (control frames are at most 125): the server's side is unread from there
"""
import json
import os
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(__file__))
import tcp_pcap  # noqa: E402


def frame(op, payload, fin=True, rsv1=False, mask=None):
    b0 = (0x80 if fin else 0) | (0x40 if rsv1 else 0) | op
    n = len(payload)
    if n < 126:
        h = struct.pack("!BB", b0, (0x80 if mask else 0) | n)
    elif n < 65536:
        h = struct.pack("!BBH", b0, (0x80 if mask else 0) | 126, n)
    else:
        h = struct.pack("!BBQ", b0, (0x80 if mask else 0) | 127, n)
    if mask:
        payload = bytes(c ^ mask[i % 4] for i, c in enumerate(payload))
        h += mask
    return h + payload


def j(**m):
    m["jsonrpc"] = "2.0"
    return json.dumps(m).encode()


server_z = zlib.compressobj(6, zlib.DEFLATED, -15)


def deflated(msg):
    out = server_z.compress(msg) + server_z.flush(zlib.Z_SYNC_FLUSH)
    assert out.endswith(b"\x00\x00\xff\xff")
    return out[:-4]


f = tcp_pcap.Flow(mss=100)
f.handshake()
f.send(True, b"GET /ws HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
       b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
       b"Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n")
f.send(False, b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
       b"Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
       b"Sec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover\r\n\r\n")
m = b"\x01\x02\x03\x04"
req1 = j(id=1, method="tools/call", params={"name": "fragmented"})
f.send(True, frame(1, req1[:10], fin=False, mask=m) + frame(9, b"hi", mask=m) +
       frame(0, req1[10:30], fin=False, mask=m) + frame(0, req1[30:], mask=m))
f.send(False, frame(10, b"hi"))
resp1 = j(id=1, result={"content": [{"type": "text", "text": "x" * 300}]})
f.send(False, frame(1, deflated(resp1), rsv1=True))
f.send(True, frame(1, j(id=2, method="tools/call", params={"name": "takeover"}), mask=m))
resp2 = j(id=2, result={"content": [{"type": "text", "text": "x" * 300}]})
f.send(False, frame(1, deflated(resp2), rsv1=True))
f.send(True, frame(1, j(id=3, method="tools/call", params={"name": "unanswered"}), mask=m))
f.send(False, frame(9, b"p" * 126) + frame(1, j(id=3, result={})))
f.fin(True)
f.fin(False)
f.write(sys.argv[1])
