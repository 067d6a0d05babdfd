#!/usr/bin/env python3
"""rpc_drift.py OUT.pcap: MCP sampling calls whose trace sampling drops for one model
(t_drift_rpc.sh).  One keep-alive connection; every call is sampling/createMessage with
its W3C trace context in params._meta and a model hint, half "claude", half "legacy"
(alternating).  For the first 300 calls every trace is sampled; from call 300 on, the
"legacy" calls are not (flags 00): the kept share falls from 1 to 1/2, and the
attribute that explains it is model_hint = legacy.  Packets are 50 ms apart."""
import json
import struct
import sys

sys.path.insert(0, __import__("os").path.dirname(__file__) + "/../pcap2spans")
import tcp_pcap  # noqa: E402

f = tcp_pcap.Flow(mss=1448)
f.handshake()
for i in range(600):
    legacy = i % 2 == 1
    sampled = not (legacy and i >= 300)
    tp = "00-%032x-%016x-%s" % (0x1000 + i, 0x2000 + i, "01" if sampled else "00")
    body = json.dumps({"jsonrpc": "2.0", "id": i, "method": "sampling/createMessage",
                       "params": {"messages": [], "maxTokens": 64, "temperature": 0.5,
                                  "modelPreferences": {"hints": [{"name": "legacy" if legacy
                                                                  else "claude"}]},
                                  "_meta": {"traceparent": tp}}}).encode()
    f.send(True, b"POST /mcp HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
           b"Content-Length: %d\r\n\r\n" % len(body) + body)
    out = json.dumps({"jsonrpc": "2.0", "id": i, "result": {"model": "m"}}).encode()
    f.send(False, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
           b"Content-Length: %d\r\n\r\n" % len(out) + out)
data = struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)
for k, p in enumerate(f.pkts):
    us = k * 50000
    data += struct.pack("<IIII", 1700000000 + us // 1000000, us % 1000000, len(p), len(p)) + p
open(sys.argv[1], "wb").write(data)
